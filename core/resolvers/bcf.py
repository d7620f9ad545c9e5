"""Bias-Corrected Fusion, BCF(4p) (the benchmark specification §2.11; seed 000 §9.1).

score(v) = Σ_{active s} (1 − δ_s) · 1[μ_s = g_s(v)], where g_s shifts v one rank in the
source's fixed bias direction (spec §2.3). δ for profile, planner, self-report and device each
lie on {0, 0.1, …, 0.5}; δ_objective = 0. The 6⁴ = 1,296 combinations (product order profile,
planner, self, device) are searched exhaustively for the best training accuracy with
proportional credit (1/#winners when GT is among the tied winners; records with no active
source skipped; strict >, first best). Scores are kept in integer tenths so that ties are exact.
Prediction ties and rows with no active source get a Random(42) label.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ._bias import BIAS_TARGET
from ._common import KQ, VALID, Prediction, Split, argmax_random, check_atoms, random_labels
from ._fscore import first_best

__all__ = ["BCF", "DELTA_GRID", "match_tensor"]

DELTA_GRID = np.array(list(itertools.product(range(6), repeat=4)))  # tenths, (1296, 4)
_LEARN = (0, 1, 2, 4)  # profile, planner, self-report, device; objective fixed at δ = 0


def _weights_tenths(deltas: np.ndarray) -> np.ndarray:
    """(G, 5) integer weights 10·(1 − δ) in source order."""
    w = np.full((len(deltas), 5), 10, np.int16)
    w[:, list(_LEARN)] = 10 - deltas
    return w


def match_tensor(atoms: np.ndarray) -> np.ndarray:
    """M[n, q, v, s] = 1[μ_s = g_s(v)] for active sources (int16)."""
    m = (atoms[:, :, None, :] == BIAS_TARGET[None]) & (atoms[:, :, None, :] >= 0)
    return m.astype(np.int16)


@dataclass
class BCF:
    """BCF(4p); ``delta_`` holds the fitted δ (source order) after ``fit``."""

    seed: int = 42
    name = "bcf"

    def fit(self, train: Split, cal: Split | None = None) -> BCF:
        atoms = train.atoms
        keep = (atoms >= 0).any(2)  # records with at least one active source
        m = match_tensor(atoms)[keep]  # (R, V, 5)
        y = train.gt[keep].astype(np.int64)
        k = KQ[np.nonzero(keep)[1]]
        # Records sharing (match pattern, K, GT) score identically under every δ: credit is
        # computed once per distinct row and weighted by its count (same result, ~10x less work).
        n_v, n_s = m.shape[1], m.shape[2]
        bits = (m.reshape(len(m), n_v * n_s).astype(np.int64) << np.arange(n_v * n_s)).sum(1)
        # one sortable key per record, (pattern, K, GT) in the lexicographic order of
        # np.unique's rows (the credit sums over rows in that order): K < 8, GT < 4
        key, count = np.unique((bits << 5) | (k.astype(np.int64) << 2) | y, return_counts=True)
        rows_k, rows_y, rows_bits = (key >> 2) & 7, key & 3, key >> 5
        w = _weights_tenths(DELTA_GRID)  # (G, 5)
        if len(key):
            # score of label v under every δ: a table over the 2⁵ source-match patterns,
            # looked up by each row's pattern for v (≡ Σ_s 1[μ_s = g_s(v)] · w_s)
            pattern = (rows_bits[:, None] >> (n_s * np.arange(n_v))) & (2 ** n_s - 1)  # (R, V)
            table = (((np.arange(2 ** n_s)[:, None] >> np.arange(n_s)) & 1) @ w.T).T  # (G, 32)
            table = table.astype(np.int16)
            s = [np.where(v < rows_k, table[:, pattern[:, v]], -1) for v in range(n_v)]
            top = s[0].copy()
            for v in range(1, n_v):
                np.maximum(top, s[v], out=top)
            n_tied = (s[0] == top).view(np.int8).copy()  # winners per (δ, row), ≤ KMAX
            for v in range(1, n_v):
                n_tied += (s[v] == top).view(np.int8)
            hit = table[:, pattern[np.arange(len(key)), rows_y]] == top  # GT among the winners
            credit = ((hit / n_tied) * count).sum(-1)
        else:  # no record has an active source: every δ scores 0, keep the first
            credit = np.zeros(len(w))
        best = first_best(credit)
        self.delta_ = np.zeros(5)
        self.delta_[list(_LEARN)] = DELTA_GRID[best] / 10
        self.weights_ = _weights_tenths(DELTA_GRID[best:best + 1])[0]
        self.train_accuracy_ = float(credit[best] / max(1, len(y)))
        return self

    def scores(self, atoms: np.ndarray) -> np.ndarray:
        """Integer scores in tenths, (N, 18, KMAX); padded labels −1."""
        s = np.einsum("nqvs,s->nqv", match_tensor(check_atoms(atoms)), self.weights_)
        return np.where(VALID, s, -1)

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        s = self.scores(atoms)
        rng = np.random.default_rng(self.seed)
        ans, _ = argmax_random(s, rng)
        none = ~(atoms >= 0).any(2)
        ans = np.where(none, random_labels(rng, ans.shape), ans).astype(np.int8)
        pos = np.where(VALID, np.maximum(s, 0), 0)
        total = pos.sum(-1)
        top = np.take_along_axis(pos, ans[..., None].astype(np.intp), 2)[..., 0]
        conf = np.where(total > 0, top / np.maximum(total, 1), 1.0 / KQ[None, :])
        return Prediction(self.name, ans, conf, np.zeros(ans.shape, bool), {"scores": s})
