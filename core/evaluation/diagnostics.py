"""Per-source diagnostics: the table a user reads to see *why* a resolver trusts a source.

For each (source, question): coverage (share of non-null atoms), conflict rate (share of the
source's non-null atoms that disagree with at least one other non-null atom of the same
persona and question), accuracy when non-null with a 95 % Wilson interval, and the confusion
matrix P(μ_s = v | GT = w) — empirical counts, or the Laplace-smoothed table NBF learned on
train (seed 000 §9.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..resolvers.nbf import NBF
from ..stats import wilson_interval
from ..testbed.questions import QIDS, QUESTIONS, SOURCES, question

__all__ = ["confusion_matrix", "learned_confusion", "source_reliability", "source_summary"]


def source_reliability(atoms: np.ndarray, gt: np.ndarray) -> pd.DataFrame:
    """Long table: source, question_id, n, coverage, conflict_rate, accuracy, acc_low, acc_high.

    ``accuracy`` is NaN where the source never answers the question.
    """
    present = atoms >= 0
    correct = present & (atoms == gt[..., None])
    rows = []
    for s, src in enumerate(SOURCES):
        a = atoms[:, :, s]
        others = np.delete(atoms, s, axis=2)
        disagree = present[:, :, s] & ((others >= 0) & (others != a[..., None])).any(2)
        n_present = present[:, :, s].sum(0)
        k = correct[:, :, s].sum(0)
        lo, hi = wilson_interval(k, n_present)
        for j, qid in enumerate(QIDS):
            npj = int(n_present[j])
            rows.append({
                "source": src, "question_id": qid, "n": len(atoms), "answered": npj,
                "coverage": npj / max(1, len(atoms)),
                "conflict_rate": float(disagree[:, j].sum() / npj) if npj else np.nan,
                "accuracy": float(k[j] / npj) if npj else np.nan,
                "acc_low": float(lo[j]) if npj else np.nan,
                "acc_high": float(hi[j]) if npj else np.nan,
            })
    return pd.DataFrame(rows)


def source_summary(atoms: np.ndarray, gt: np.ndarray) -> pd.DataFrame:
    """One row per source, pooled over questions (micro): coverage, conflict, accuracy, CI."""
    present = atoms >= 0
    rows = []
    for s, src in enumerate(SOURCES):
        p = present[:, :, s]
        others = np.delete(atoms, s, axis=2)
        disagree = p & ((others >= 0) & (others != atoms[:, :, s, None])).any(2)
        n, k = int(p.sum()), int((p & (atoms[:, :, s] == gt)).sum())
        lo, hi = wilson_interval(k, n)
        rows.append({"source": src, "answered": n, "coverage": n / max(1, p.size),
                     "conflict_rate": disagree.sum() / n if n else np.nan,
                     "accuracy": k / n if n else np.nan, "acc_low": float(lo),
                     "acc_high": float(hi)})
    return pd.DataFrame(rows)


def confusion_matrix(atoms: np.ndarray, gt: np.ndarray, qid: str, source: str) -> pd.DataFrame:
    """Empirical counts: rows GT label w, columns the source's atom v (plus ⊥)."""
    q = question(qid)
    a = atoms[:, QIDS.index(qid), SOURCES.index(source)]
    y = gt[:, QIDS.index(qid)]
    cols = list(q.labels) + ["⊥"]
    m = np.zeros((q.k, q.k + 1), int)
    np.add.at(m, (y, np.where(a >= 0, a, q.k)), 1)
    return pd.DataFrame(m, index=pd.Index(q.labels, name="ground truth"), columns=cols)


def learned_confusion(model: NBF, qid: str, source: str) -> pd.DataFrame:
    """NBF's smoothed P(μ_s = v | GT = w) for one (question, source): rows w, columns v."""
    if not hasattr(model, "log_e_"):
        raise ValueError("the NBF model is not fitted")
    j, s = QIDS.index(qid), SOURCES.index(source)
    q = QUESTIONS[j]
    table = np.exp(model.log_e_[j, s, : q.k, : q.k]).T  # (w, v)
    return pd.DataFrame(table, index=pd.Index(q.labels, name="ground truth"),
                        columns=list(q.labels))
