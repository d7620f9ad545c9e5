"""Bias-model tensors shared by BCF and ABF (the benchmark specification §2.3, §2.11)."""

from __future__ import annotations

import numpy as np

from ..testbed.questions import QUESTIONS, SOURCES, bias_predict
from ._common import KMAX, N_Q, N_S

__all__ = ["BIAS_TARGET", "DIST"]


def _bias_target() -> np.ndarray:
    """G[q, v, s] = the label source s reports when the truth is v (-1 for padded v)."""
    g = np.full((N_Q, KMAX, N_S), -1, np.int8)
    for j, q in enumerate(QUESTIONS):
        for s, src in enumerate(SOURCES):
            g[j, : q.k, s] = bias_predict(q.qid, src, np.arange(q.k))
    return g


def _dist() -> np.ndarray:
    """D[q, a, b]: |rank difference| / (K_sub − 1) on the bias-shift order of ordinal
    questions; Hamming (0/1) for nominal questions or when either label is an edge label."""
    d = np.ones((N_Q, KMAX, KMAX))
    for j, q in enumerate(QUESTIONS):
        rank = {c: r for r, c in enumerate(q.order)}
        for a in range(q.k):
            for b in range(q.k):
                if a == b:
                    d[j, a, b] = 0.0
                elif q.ordinal and a in rank and b in rank and len(q.order) > 1:
                    d[j, a, b] = abs(rank[a] - rank[b]) / (len(q.order) - 1)
    return d


BIAS_TARGET = _bias_target()
DIST = _dist()
BIAS_TARGET.setflags(write=False)
DIST.setflags(write=False)
