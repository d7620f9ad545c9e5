"""Unsupervised Dawid–Skene (Dawid & Skene, 1979): what the resolvers gain from labels.

Beyond seed 000: each source s has a confusion matrix π_s[w, v] = P(μ_s = v | y = w) per
question and the classes a prior ρ[w]; EM alternates the posterior over the hidden answer
(E-step) with smoothed counts (M-step). No ground truth is read: the soft labels start from
Majority Vote's vote shares (uniform for rows with no atom) and EM runs on the **train split's
atoms only**, so the comparison with NBF — the same model fitted with labels — isolates what
the labels buy. Test rows get one E-step with the fitted parameters.

Conventions: additive smoothing 0.01 on every count (keeps π strictly positive); at most
50 iterations, stopping when no soft label moves by more than 1e-4; argmax ties go to the
first label; confidence is the posterior maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import (
    VALID,
    Prediction,
    Split,
    argmax_first,
    check_atoms,
    onehot_atoms,
    pair_counts,
    sum_over_sources,
)

__all__ = ["DawidSkene"]

#: Per label slot: the (18,) 0/1 mask of the questions that have it (None: all of them).
_KEEP = [None if VALID[:, k].all() else VALID[:, k].astype(float) for k in range(VALID.shape[1])]


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.where(VALID, x, 0.0)
    s = x.sum(-1, keepdims=True)
    return np.where(s > 0, x / np.where(s > 0, s, 1), np.where(VALID, 1.0, 0.0) /
                    VALID.sum(-1, keepdims=True))


@dataclass
class DawidSkene:
    """Dawid–Skene EM per question, initialised from Majority Vote; labels never used."""

    max_iter: int = 50
    tol: float = 1e-4
    smoothing: float = 0.01
    name = "dawid_skene"

    def _e_step(self, oh: np.ndarray) -> np.ndarray:
        """Posterior over the hidden answer, (N, 18, KMAX): a softmax of log ρ + Σ_s log π_s.

        Computed label by label on contiguous (N, 18) slabs (the max, the left-to-right sum and
        the elementwise steps of ``exp(z − max) / Σ exp(z − max)``, so every value is the same,
        bit for bit), and returned with the memory layout numpy's own version had (question-
        major, as :func:`sum_over_sources` returns it), which the M-step's reductions follow.
        A padded label's exponential is 0 either way; it is written as 0 instead of computed
        from −∞ (glibc's slow path).
        """
        lik = sum_over_sources(oh, np.log(self.pi_).swapaxes(2, 3))  # (N, Q, K), q-major
        z = np.moveaxis(lik, -1, 0).copy()  # (K, N, Q) contiguous
        z += np.log(self.rho_).T[:, None, :]
        m = z[0].copy()
        for k in range(1, len(z)):
            if _KEEP[k] is None:
                np.maximum(m, z[k], out=m)
            else:  # padded labels take no part in the max
                np.maximum(m, np.where(_KEEP[k], z[k], -np.inf), out=m)
        z -= m
        for k in range(len(z)):
            if _KEEP[k] is not None:
                z[k] *= _KEEP[k]  # exp(0) for padded labels, zeroed below
            np.exp(z[k], out=z[k])
            if _KEEP[k] is not None:
                z[k] *= _KEEP[k]
        total = z[0].copy()
        for k in range(1, len(z)):
            total += z[k]
        z /= total
        out = np.empty((lik.shape[1], lik.shape[0], lik.shape[2]), z.dtype).transpose(1, 0, 2)
        np.copyto(np.moveaxis(out, -1, 0), z)
        return out

    def _m_step(self, oh: np.ndarray, t: np.ndarray) -> None:
        a = self.smoothing
        rho = t.sum(0) + a
        self.rho_ = np.where(VALID, rho, 1e-300) / np.where(VALID, rho, 0).sum(-1, keepdims=True)
        counts = pair_counts(oh, t).swapaxes(2, 3) + a  # (Q, S, W, V)
        valid_v = VALID[:, None, None, :]
        counts = np.where(valid_v, counts, 0.0)
        pi = counts / counts.sum(-1, keepdims=True)
        self.pi_ = np.where(valid_v, pi, 1.0)  # padded entries never read (log 1 = 0)

    def fit(self, train: Split, cal: Split | None = None) -> DawidSkene:
        oh = onehot_atoms(train.atoms).astype(float)
        t = _normalise(oh.sum(2))  # Majority Vote shares
        self.n_iter_ = 0
        for it in range(self.max_iter):
            self._m_step(oh, t)
            new = self._e_step(oh)
            self.n_iter_ = it + 1
            if np.abs(new - t).max() < self.tol:
                t = new
                break
            t = new
        return self

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        proba = self._e_step(onehot_atoms(atoms).astype(float))
        ans = argmax_first(proba)
        return Prediction(self.name, ans, proba.max(-1), np.zeros(ans.shape, bool),
                          {"proba": proba})


