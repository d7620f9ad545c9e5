"""Helpers the memory stops' views share: words for numbers and answers, a rule's pick and
how many pairs qualify, the view of the picked pair (its example and link) or the "no example"
view, a source's row of the Walkthrough's day view.

Source: seed 000 §8.6 (the walked-through example: a person and a question), §8.7 (the
selection protocol's pool is the test split). Used by :mod:`._memory_views` and
:mod:`._memory_habits`.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from core.store import StoreError
from core.testbed.questions import QIDS, QUESTIONS

from ._memory_data import MemoryPool, memory_pool, walkthrough_link
from ._memory_words import answer_words, batch_words, person_words
from .model import Chart, StopView, TourData

__all__ = ["NOT_SHOWN", "example", "link", "no_example", "num", "of", "pair_view", "pool_or_note",
           "qualifying", "quote", "resolvers_on", "series", "top_pair"]

#: The note of a view whose picked example fails its own check (the data or a rule changed).
NOT_SHOWN = ("The example this rule picks no longer shows the failure when checked against "
             "its own data; the generator, the store or a resolver has changed.")


def quote(qid: str, code: int) -> str:
    """An answer in words, in quotation marks."""
    return f"“{answer_words(qid, code)}”"


def of(k: int, n: int) -> str:
    """A count with its denominator: "12 of 480"."""
    return f"{k:,} of {n:,}"


def num(x: float) -> str:
    """A mean to one decimal, with a true minus sign."""
    return f"{x:.1f}".replace("-", "\u2212")


def example(pool: MemoryPool, i: int, qid: str) -> tuple[tuple[str, str], ...]:
    """The example of person ``i`` and question ``qid`` in words (no ids)."""
    person = pool.personas.iloc[i]
    q = QUESTIONS[QIDS.index(qid)]
    return (("Person", person_words(person)),
            ("Simulated batch", batch_words(int(person["seed"]))),
            ("Question", f"{q.title}: {q.text}"),
            ("True answer", answer_words(qid, int(pool.gt[i, QIDS.index(qid)]))))


def link(pool: MemoryPool, i: int, qid: str) -> tuple[tuple[str, str], ...]:
    """The Walkthrough's query parameters for person ``i`` and question ``qid``."""
    person = pool.personas.iloc[i]
    return walkthrough_link(int(person["seed"]), str(person["persona_id"]), qid)


def no_example(key: str, note: str, settings=(), evidence=()) -> StopView:
    """The view of a stop that found no example, saying why in ``note``."""
    return StopView(key, (), tuple(settings), None, "", "", (), tuple(evidence), False,
                    note=note)


def pair_view(key: str, pool: MemoryPool, i: int, qid: str, settings, chart: Chart, answer: str,
              reason: str, evidence, check: bool) -> StopView:
    """The view of the pair a rule picked (person ``i``, question ``qid``): its
    :func:`example` and :func:`link`, and :data:`NOT_SHOWN` as the note when ``check`` fails."""
    return StopView(key, example(pool, i, qid), settings, chart, answer, reason,
                    link(pool, i, qid), evidence, check, note="" if check else NOT_SHOWN)


def top_pair(ranked: pd.DataFrame) -> tuple[pd.Series, int, int, str] | None:
    """A rule's pick (:mod:`._memory_rules`: qualifying rows first): the top row with its
    person index, question order and question id; None when no pair qualifies."""
    if not ranked["qualifies"].any():
        return None
    top = ranked.iloc[0]
    return top, int(top["row"]), int(top["q_order"]), str(top["question_id"])


def qualifying(ranked: pd.DataFrame) -> tuple[str, str]:
    """An evidence pair: how many of the pairs a rule ranked qualify."""
    return ("Pairs that qualify", of(int(ranked["qualifies"].sum()), len(ranked)))


def pool_or_note(key: str, data: TourData):
    """The pool, or a "no example" view when the store has no cached predictions."""
    try:
        return memory_pool(data), None
    except StoreError as exc:
        note = ("This stop reads the resolvers' answers saved in the store, "
                f"which it cannot use: {str(exc).rstrip('.')}.")
        return None, no_example(key, note)
    except duckdb.Error:
        return None, no_example(key, "This store lacks the tables this stop reads (it is not a "
                                "complete Arbiter store); rebuild it with: python -m core "
                                "build.")


def series(frame: pd.DataFrame, source: str) -> np.ndarray:
    """One source's 30 values of a :class:`~core.evaluation.walkthrough.views.DayViews`
    frame (``"latent"`` for what happened)."""
    return frame.loc[frame["source"] == source, "value"].to_numpy(float)


def resolvers_on(pool: MemoryPool, i: int, j: int) -> tuple[str, str]:
    """An evidence pair: whether majority vote, the best single source and the learned
    confusion-matrix resolver (DSNBF) answer person ``i``'s question ``j`` right."""
    gt = pool.gt[i, j]
    words = (("majority_vote", "majority vote"), ("ssb", "best single source"),
             ("dsnbf", "DSNBF"))
    return ("Resolvers on this pair", ", ".join(
        f"{name} {'right' if pool.answers[m][i, j] == gt else 'wrong'}" for m, name in words))
