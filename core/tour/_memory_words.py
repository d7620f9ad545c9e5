"""Plain words for the memory story's stops: answers, sources, resolvers and people.

Source: the answer spaces of the multi-source memory benchmark (seed 000, §8.2 "Full question
list"), in the words every page uses (:mod:`core.testbed.words`), so the tour and the
Walkthrough it links to say the same thing. The tour never shows an answer label such as
``within_20min_more_than_50pct``, a persona id or a question id (issue 22, point 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pandas as pd

from core.evaluation.walkthrough.persona import DIFFICULTY_LABELS
from core.testbed.questions import SOURCE_LABELS, SOURCES
from core.testbed.questions import question as get_question
from core.testbed.words import label_words

__all__ = ["METHOD_WORDS", "SOURCE_NOUNS", "answer_words", "batch_words", "person_words",
           "source_label"]

_M = MappingProxyType

#: Each source as a noun in a sentence ("the device log"); :data:`SOURCE_LABELS` in charts.
SOURCE_NOUNS: Mapping[str, str] = _M({
    "profile_ltm": "the long-term profile", "planner": "the planner",
    "daily_self_report": "the daily self-report", "objective_log": "the objective log",
    "device_log": "the device log"})

#: The resolvers the memory stops name, in words (glossary: "Majority vote",
#: "Single-source baseline", "Naive Bayes fusion").
METHOD_WORDS: Mapping[str, str] = _M({
    "majority_vote": "Majority vote",
    "ssb": "The best single source",
    "nbf": "Naive Bayes fusion (NBF)",
    "dsnbf": "The learned confusion-matrix resolver (DSNBF)",
})


def answer_words(qid: str, code: int) -> str:
    """The answer with display code ``code`` of question ``qid`` in the pages' words
    (:func:`core.testbed.words.label_words`; "no answer" for ``-1``); ``ValueError`` for a
    code outside the question's answer space."""
    q = get_question(qid)
    code = int(code)
    if code >= q.k:
        raise ValueError(f"code {code} is outside {qid}'s answer space (0–{q.k - 1})")
    return label_words(qid, q.labels[code] if code >= 0 else None)


def source_label(source: int | str) -> str:
    """A source's chart label ("Device log"), by index in :data:`SOURCES` or by name."""
    name = SOURCES[source] if isinstance(source, int) else str(source)
    return SOURCE_LABELS[name]


def person_words(person: pd.Series | Mapping) -> str:
    """"Leo Ellis, 34 (temporal shift: habits change on day 14)": a person in words."""
    difficulty = str(person.get("difficulty", ""))
    kind = DIFFICULTY_LABELS.get(difficulty, difficulty.replace("_", " "))
    shift = int(person.get("shift_day", 0) or 0)
    if difficulty == "temporal_shift" and shift > 0:
        kind += f": habits change on day {shift}"
    return f"{person.get('name', '')}, {int(person.get('age', 0))} ({kind})"


def batch_words(seed: int) -> str:
    """The simulated batch a person belongs to, named by its random seed (issue 22: a random
    seed, not the story "seed 000")."""
    return f"the batch simulated from random seed {int(seed)}"
