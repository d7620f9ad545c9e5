"""Extraction faithfulness P(μ̂ = μ*) by source, by question and overall (seed 000 §8.8).

The audit compares extracted atoms μ̂ with the direct readout μ* cell by cell, a cell being
one (persona, question, source). Seed 000 §8.8 counts every cell of the 18 × 5 grid and
counts a cell where both are ⊥ as equal (the paper's GPT-5.4 extractor: 93.08 % overall,
:data:`core.evaluation.paper.PAPER_EXTRACTION`); §12.6 reports per-question accuracy over the
cells where μ* is not ⊥. ``cells`` picks the denominator:

* ``"all"`` — every cell (§8.8, the default);
* ``"informative"`` — the cells of the source–question map (the benchmark specification §2.4);
* ``"non_null"`` — the cells where μ* is not ⊥ (§12.6).

Invariants (tested): rates lie in [0, 1]; ``overall`` is the cell-weighted mean of the
per-source (and of the per-question) rates; the vectorised :func:`faithfulness` and the
plain loop :func:`faithfulness_loop` agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..testbed.questions import Q_INDEX, QIDS, SOURCES, question
from .extract import INFORMATIVE

__all__ = ["CELLS", "Faithfulness", "atoms_from_frame", "faithfulness", "faithfulness_loop"]

CELLS = ("all", "informative", "non_null")


@dataclass(frozen=True)
class Faithfulness:
    """Agreement of μ̂ with μ* (seed 000 §8.8).

    Attributes
    ----------
    cells : the denominator (one of :data:`CELLS`).
    n, equal : cells counted and cells where μ̂ = μ*.
    overall : ``equal / n`` (NaN when ``n == 0``).
    by_source, by_question : ``source`` / ``question_id``, ``n``, ``equal``, ``rate``.
    by_cell : ``question_id, source, n, equal, rate``, one row per (question, source).
    misses : ``persona_id, question_id, source, mu_star, mu_hat`` (labels; None for ⊥, the
        label columns are of object dtype so that ⊥ stays None).
    """

    cells: str
    n: int
    equal: int
    overall: float
    by_source: pd.DataFrame
    by_question: pd.DataFrame
    by_cell: pd.DataFrame
    misses: pd.DataFrame

    def to_dict(self) -> dict:
        """Plain form for JSON (rates as fractions)."""
        return {"cells": self.cells, "n": self.n, "equal": self.equal, "overall": self.overall,
                "by_source": self.by_source.to_dict(orient="records"),
                "by_question": self.by_question.to_dict(orient="records"),
                "by_cell": self.by_cell.to_dict(orient="records"),
                "misses": self.misses.to_dict(orient="records")}


def _check(mu_hat: np.ndarray, mu_star: np.ndarray, cells: str) -> None:
    if cells not in CELLS:
        raise ValueError(f"cells must be one of {', '.join(CELLS)}, got {cells!r}")
    if mu_hat.shape != mu_star.shape or mu_hat.shape[1:] != (len(QIDS), len(SOURCES)):
        raise ValueError(f"atoms must both have shape (P, {len(QIDS)}, {len(SOURCES)}), got "
                         f"{mu_hat.shape} and {mu_star.shape}")


def _mask(mu_star: np.ndarray, cells: str) -> np.ndarray:
    if cells == "all":
        return np.ones(mu_star.shape, dtype=bool)
    if cells == "informative":
        return np.broadcast_to(INFORMATIVE, mu_star.shape)
    return mu_star >= 0


def _rate(k, n):
    n = np.asarray(n, dtype=float)
    return np.divide(k, n, out=np.full(n.shape, np.nan), where=n > 0)


def _label(qid: str, code: int) -> str | None:
    return None if code < 0 else question(qid).labels[code]


def faithfulness(mu_hat: np.ndarray, mu_star: np.ndarray, *, persona_ids=None,
                 cells: str = "all") -> Faithfulness:
    """P(μ̂ = μ*) over the cells ``cells`` selects (module docstring), vectorised.

    Parameters
    ----------
    mu_hat, mu_star : ``(P, 18, 5)`` atom codes, ``-1`` ⊥.
    persona_ids : names for the ``misses`` table (default: the row numbers).
    cells : ``"all"``, ``"informative"`` or ``"non_null"``.
    """
    mu_hat, mu_star = np.asarray(mu_hat), np.asarray(mu_star)
    _check(mu_hat, mu_star, cells)
    mask = _mask(mu_star, cells)
    eq = (mu_hat == mu_star) & mask
    n_cell, k_cell = mask.sum(0), eq.sum(0)  # (18, 5)
    by_cell = pd.DataFrame({
        "question_id": np.repeat(QIDS, len(SOURCES)), "source": np.tile(SOURCES, len(QIDS)),
        "n": n_cell.ravel(), "equal": k_cell.ravel(), "rate": _rate(k_cell, n_cell).ravel()})
    by_source = pd.DataFrame({"source": SOURCES, "n": n_cell.sum(0), "equal": k_cell.sum(0),
                              "rate": _rate(k_cell.sum(0), n_cell.sum(0))})
    by_question = pd.DataFrame({"question_id": QIDS, "n": n_cell.sum(1), "equal": k_cell.sum(1),
                                "rate": _rate(k_cell.sum(1), n_cell.sum(1))})
    ids = (np.arange(len(mu_hat)) if persona_ids is None
           else np.asarray(list(persona_ids), dtype=object))
    p, q, s = np.nonzero(mask & ~eq)
    misses = pd.DataFrame({
        "persona_id": ids[p], "question_id": np.asarray(QIDS, dtype=object)[q],
        "source": np.asarray(SOURCES, dtype=object)[s],
        "mu_star": pd.Series([_label(QIDS[j], c) for j, c in
                              zip(q, mu_star[p, q, s].tolist(), strict=True)], dtype=object),
        "mu_hat": pd.Series([_label(QIDS[j], c) for j, c in
                             zip(q, mu_hat[p, q, s].tolist(), strict=True)], dtype=object),
    })
    n, k = int(mask.sum()), int(eq.sum())
    return Faithfulness(cells, n, k, k / n if n else float("nan"), by_source, by_question,
                        by_cell, misses)


def faithfulness_loop(mu_hat: np.ndarray, mu_star: np.ndarray, *,
                      cells: str = "all") -> dict[str, dict]:
    """The same counts by a plain loop over cells (the reference for tests; slow).

    Returns ``{"overall": (equal, n), "source": {s: (equal, n)}, "question": {q: (equal, n)}}``.
    """
    mu_hat, mu_star = np.asarray(mu_hat), np.asarray(mu_star)
    _check(mu_hat, mu_star, cells)
    out = {"overall": [0, 0], "source": {s: [0, 0] for s in SOURCES},
           "question": {q: [0, 0] for q in QIDS}}
    for p in range(mu_hat.shape[0]):
        for qi, qid in enumerate(QIDS):
            for si, src in enumerate(SOURCES):
                star, hat = int(mu_star[p, qi, si]), int(mu_hat[p, qi, si])
                if cells == "informative" and src not in question(qid).informative:
                    continue
                if cells == "non_null" and star < 0:
                    continue
                same = int(star == hat)
                for bucket in (out["overall"], out["source"][src], out["question"][qid]):
                    bucket[0] += same
                    bucket[1] += 1
    return {"overall": tuple(out["overall"]),
            "source": {k: tuple(v) for k, v in out["source"].items()},
            "question": {k: tuple(v) for k, v in out["question"].items()}}


def atoms_from_frame(frame: pd.DataFrame, persona_ids) -> np.ndarray:
    """``(P, 18, 5)`` codes from rows ``persona_id, question_id, source, value`` (spec §3).

    The form in which :func:`core.testbed.importer.load_release` returns the released μ̂;
    ``value`` None is ⊥, and so is every cell without a row. Raises ``ValueError`` for a
    label outside a question's answer space.
    """
    ids = list(persona_ids)
    row = {p: i for i, p in enumerate(ids)}
    out = np.full((len(ids), len(QIDS), len(SOURCES)), -1, dtype=np.int8)
    for pid, qid, src, value in frame[["persona_id", "question_id", "source",
                                       "value"]].itertuples(index=False):
        if pid in row and value is not None and value == value:
            out[row[pid], Q_INDEX[qid], SOURCES.index(src)] = question(qid).code(value)
    return out
