"""Shared pieces of the resolvers: inputs, outputs, answer spaces and tie-breaking.

Conventions (the benchmark specification §2.11)
-------------------------------------------------
* Atoms are ``(N, 18, 5)`` int8 display codes, ``-1`` = ⊥; ``active`` = non-null sources.
* Candidates are a question's **full** answer space (edge labels included). Arrays over labels
  are padded to ``KMAX = 4``; :data:`VALID` masks the real labels of each question.
* The released code breaks ties with one ``random.Random(42)`` per method consumed in test
  order; we keep the seed and the rule (uniform among the tied labels) but draw from a
  ``numpy.random.Generator``, so our tie-breaks are distributionally, not bitwise, equal.
* Resolvers see atoms only. Persona ids, seeds and difficulty labels never reach ``predict``;
  DSNBF receives the **train** difficulty labels in ``fit``, as the released code does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..testbed.questions import QUESTIONS, SOURCES

__all__ = [
    "KMAX",
    "KQ",
    "N_Q",
    "N_S",
    "VALID",
    "Prediction",
    "Split",
    "argmax_first",
    "argmax_random",
    "check_atoms",
    "onehot_atoms",
    "pair_counts",
    "sum_over_sources",
    "random_labels",
]

N_Q = len(QUESTIONS)
N_S = len(SOURCES)
KMAX = max(q.k for q in QUESTIONS)
KQ = np.array([q.k for q in QUESTIONS])
VALID = np.arange(KMAX)[None, :] < KQ[:, None]  # (18, KMAX)
VALID.setflags(write=False)
KQ.setflags(write=False)


def check_atoms(atoms: np.ndarray, *, name: str = "atoms") -> np.ndarray:
    """Validate an ``(N, 18, 5)`` code array; ``ValueError`` with the offending position."""
    a = np.asarray(atoms)
    if a.ndim != 3 or a.shape[1:] != (N_Q, N_S):
        raise ValueError(f"{name} must have shape (N, {N_Q}, {N_S}), got {a.shape}")
    if a.size and (a.min() < -1 or (a >= KQ[None, :, None]).any()):
        bad = np.argwhere((a < -1) | (a >= KQ[None, :, None]))[0]
        raise ValueError(f"{name}[{bad[0]}, {bad[1]}, {bad[2]}] = {a[tuple(bad)]} is not a label "
                         f"code of {QUESTIONS[bad[1]].qid} (or -1)")
    return a.astype(np.int8, copy=False)


@dataclass(frozen=True)
class Split:
    """One split of one seed: atoms, ground truth and (train only) difficulty codes."""

    atoms: np.ndarray
    gt: np.ndarray
    difficulty: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_atoms(self.atoms)
        if self.gt.shape != self.atoms.shape[:2]:
            raise ValueError(f"gt must have shape {self.atoms.shape[:2]}, got {self.gt.shape}")

    @property
    def n(self) -> int:
        """Number of personas."""
        return len(self.atoms)

    def take(self, idx: np.ndarray) -> Split:
        """Rows ``idx`` of this split."""
        d = None if self.difficulty is None else self.difficulty[idx]
        return Split(self.atoms[idx], self.gt[idx], d)


@dataclass(frozen=True)
class Prediction:
    """What a resolver returns for N personas × 18 questions.

    Attributes
    ----------
    method : method name of the design card §4 (``_skip`` suffix for a selective variant).
    answer : int8 (N, 18) display codes (the answer before any abstention).
    confidence : float (N, 18) in [0, 1]: the posterior maximum, or a normalised score.
    skipped : bool (N, 18); all False for forced methods.
    extra : method-specific arrays (e.g. the posterior ``proba`` (N, 18, KMAX)).
    """

    method: str
    answer: np.ndarray
    confidence: np.ndarray
    skipped: np.ndarray
    extra: dict = field(default_factory=dict)


def onehot_atoms(atoms: np.ndarray) -> np.ndarray:
    """Boolean (N, 18, 5, KMAX): source s said label v (False for ⊥)."""
    return atoms[..., None] == np.arange(KMAX, dtype=np.int8)


def random_labels(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Uniform labels of each question's full answer space, shape (N, 18)."""
    u = rng.random(shape)
    return np.floor(u * KQ[None, :]).astype(np.int8)


def argmax_first(scores: np.ndarray) -> np.ndarray:
    """Argmax over the last axis, ties to the first label (display order); invalid masked.

    ``np.argmax`` along a short trailing axis is slow; a running strict ``>`` over the label
    slabs gives the same first maximum (a NaN anywhere falls back to ``np.argmax``, which
    treats NaN as the maximum).
    """
    s = np.where(VALID, scores, -np.inf)
    if s.shape[-1] > 8 or s.dtype.kind != "f" or np.isnan(s).any():
        return s.argmax(-1).astype(np.int8)
    best = s[..., 0].copy()
    arg = np.zeros(best.shape, np.int8)
    better = np.empty(best.shape, bool)
    for k in range(1, s.shape[-1]):
        np.greater(s[..., k], best, out=better)
        # labels grow with k, so "k where better, else the old winner" is a maximum
        np.maximum(arg, better.view(np.int8) * np.int8(k), out=arg)
        np.maximum(best, s[..., k], out=best)
    return arg


def argmax_random(scores: np.ndarray, rng: np.random.Generator, *, exact: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Argmax with ties broken uniformly at random among the tied labels.

    Returns the winners and the boolean mask of tied winners (N, 18, KMAX). Scores should be
    exact (integers or values built identically) so that equal means tied.
    """
    s = np.where(VALID, scores, -np.inf)
    best = s.max(-1, keepdims=True)
    tied = (s == best) & VALID
    # a random key per label; the tied label with the largest key wins
    key = rng.random(s.shape)
    pick = np.where(tied, key, -1.0).argmax(-1).astype(np.int8)
    return pick, tied


def sum_over_sources(onehot: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Σ_s Σ_v onehot[n, q, s, v] · table[q, s, v, w] → (N, Q, W) by batched matmul.

    Equivalent to ``np.einsum("nqsv,qsvw->nqw", onehot, table)`` (checked in the tests), and
    several times faster because numpy hands each question's product to BLAS.
    """
    n, q, s, v = onehot.shape
    w = table.shape[-1]
    a = onehot.reshape(n, q, s * v).transpose(1, 0, 2)
    return np.matmul(a, table.reshape(q, s * v, w)).transpose(1, 0, 2)


def pair_counts(onehot: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_n onehot[n, q, s, v] · weights[n, q, w] → (Q, S, V, W) by batched matmul
    (``np.einsum("nqsv,nqw->qsvw", ...)``)."""
    n, q, s, v = onehot.shape
    a = onehot.reshape(n, q, s * v).transpose(1, 2, 0)  # (Q, SV, N)
    return np.matmul(a, weights.transpose(1, 0, 2)).reshape(q, s, v, -1)
