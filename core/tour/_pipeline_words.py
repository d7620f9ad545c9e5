"""Plain words for the pipeline stops (:mod:`.stops_pipeline`): questions, sources, people.

A student reads "within 20 minutes of the target on most nights", not
``within_20min_more_than_50pct`` (issue 22 point 6): the stops put an answer label in words
with :func:`core.testbed.words.label_words`, the words every page uses, and a difficulty
class with :data:`core.evaluation.walkthrough.persona.DIFFICULTY_LABELS`.
"""

from __future__ import annotations

from types import MappingProxyType

from ..evaluation.walkthrough.persona import DIFFICULTY_LABELS
from ..testbed.questions import question

__all__ = ["SOURCE_WORDS", "count", "person_words", "question_words", "share"]

#: The five sources in a sentence.
SOURCE_WORDS = MappingProxyType({
    "profile_ltm": "the profile", "planner": "the planner",
    "daily_self_report": "the daily self-report", "objective_log": "the objective log",
    "device_log": "the device log"})


def question_words(qid: str) -> str:
    """The question's title and wording: "Social trend: did social activity per day …?"."""
    q = question(qid)
    return f"{q.title}: {q.text[0].lower()}{q.text[1:]}"


def person_words(persona_id: str, seed: int, *, name: str | None = None,
                 difficulty: str | None = None) -> str:
    """A test person in words, with the id and random seed the pages list them by.

    Examples
    --------
    >>> person_words("p7", 1, name="Sam Bennett", difficulty="stable")
    'Sam Bennett, a test person of the stable kind (listed as p7, random seed 1)'
    """
    kind = f" of the {DIFFICULTY_LABELS[difficulty]} kind" if difficulty else ""
    who = f"{name}, a test person{kind}" if name else f"a test person{kind}"
    return f"{who} (listed as {persona_id}, random seed {int(seed)})"


def count(k: int, n: int) -> str:
    """``"k of n (p %)"`` with thousands separators."""
    return f"{int(k):,} of {int(n):,} ({100 * int(k) / int(n):.1f} %)" if n else f"{int(k)} of 0"


def share(value: float) -> str:
    """A percentage with one decimal: ``"82.6 %"``."""
    return f"{float(value):.1f} %"
