"""Baselines and the reference row: Random, Majority Class, SSB, SSB-Global, Majority Vote,
Source Reachability (the benchmark specification §2.11, §2.12; seed 000 §3, §9.2).

Majority Vote is also seed 000's equal-weight closed-class ArgRAG adaptation, which the
released code computes with this very function (spec §5.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..testbed.questions import QUESTIONS
from ._common import (
    KQ,
    N_Q,
    N_S,
    Prediction,
    Split,
    argmax_random,
    check_atoms,
    onehot_atoms,
    random_labels,
)
from ._fscore import f_beta, first_best

__all__ = [
    "MajorityClass",
    "MajorityVote",
    "RandomGuess",
    "SSB",
    "SSBGlobal",
    "source_reachability",
    "vote_counts",
]

SSB_THETAS = np.round(np.arange(0, 1.0001, 0.05), 2)


def vote_counts(atoms: np.ndarray) -> np.ndarray:
    """Votes per label (N, 18, KMAX) over the active sources."""
    return onehot_atoms(atoms).sum(axis=2)


@dataclass
class RandomGuess:
    """Random(42): a uniform label of the full answer space."""

    seed: int = 42
    name = "random"

    def fit(self, train: Split, cal: Split | None = None) -> RandomGuess:
        return self

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        rng = np.random.default_rng(self.seed)
        ans = random_labels(rng, atoms.shape[:2])
        conf = np.broadcast_to(1.0 / KQ, ans.shape).astype(float)
        return Prediction(self.name, ans, conf, np.zeros(ans.shape, bool))


@dataclass
class MajorityClass:
    """Per question, the training-set GT mode (ties: alphabetically first label).

    Confidence is the mode's training frequency. Atom-independent.
    """

    name = "majority_class"

    def fit(self, train: Split, cal: Split | None = None) -> MajorityClass:
        modes, freq = [], []
        for j, q in enumerate(QUESTIONS):
            counts = np.bincount(train.gt[:, j], minlength=q.k)
            best = counts.max()
            mode = min((q.labels[c], c) for c in range(q.k) if counts[c] == best)[1]
            modes.append(mode)
            freq.append(best / max(1, len(train.gt)))
        self.mode_ = np.array(modes, np.int8)
        self.freq_ = np.array(freq)
        return self

    def predict(self, atoms: np.ndarray) -> Prediction:
        n = len(check_atoms(atoms))
        ans = np.broadcast_to(self.mode_, (n, N_Q)).copy()
        conf = np.broadcast_to(self.freq_, (n, N_Q)).copy()
        return Prediction(self.name, ans, conf, np.zeros((n, N_Q), bool))


def _ssb_scores(split: Split) -> np.ndarray:
    """12 × (correct + null/K) per (question, source): exact integers (K ∈ {3, 4})."""
    a, y = split.atoms, split.gt[:, :, None]
    correct = ((a == y) & (a >= 0)).sum(0)
    null = (a < 0).sum(0)
    return 12 * correct + (12 // KQ)[:, None] * null


@dataclass
class SSB:
    """Single Source Best: per question the source maximising correct + null/K on train.

    Ties keep the first source in the order profile, planner, self-report, objective, device.
    A null chosen atom falls back to a Random(42) label. Confidence: the chosen source's
    training accuracy when it answers (1/K for the random fallback).

    ``selective=True`` adds SSB+SKIP (spec §2.12): skip when the chosen source is null (C1),
    or when ≥ 2 sources are active and the share of active atoms equal to the chosen one is
    below θ (C2); θ ∈ {0, 0.05, …, 1} maximises F0.5 on calibration records with a non-null
    chosen atom and ≥ 2 active sources, a skip adding FN += correct.
    """

    selective: bool = False
    seed: int = 42
    name = "ssb"

    def _choose(self, train: Split) -> np.ndarray:
        return _ssb_scores(train).argmax(1)

    def fit(self, train: Split, cal: Split | None = None) -> SSB:
        self.source_ = self._choose(train)
        chosen = np.take_along_axis(train.atoms, self.source_[None, :, None], 2)[..., 0]
        hit = (chosen == train.gt) & (chosen >= 0)
        answered = (chosen >= 0).sum(0)
        self.accuracy_ = np.where(answered > 0, hit.sum(0) / np.maximum(answered, 1), 1 / KQ)
        self.theta_ = 0.0
        if self.selective:
            if cal is None:
                raise ValueError("SSB+SKIP needs a calibration split")
            chosen_c, agree, n_act = self._parts(cal.atoms)
            ok = (chosen_c >= 0) & (n_act >= 2)
            correct = (chosen_c == cal.gt)[ok].astype(float)
            ag = agree[ok]
            skip = ag[None, :] < SSB_THETAS[:, None]  # (T, n)
            tp = ((~skip) * correct).sum(1)
            fp = ((~skip) * (1 - correct)).sum(1)
            fn = (skip * correct).sum(1)
            self.theta_ = float(SSB_THETAS[first_best(f_beta(tp, fp, fn))])
        return self

    def _parts(self, atoms):
        chosen = np.take_along_axis(atoms, self.source_[None, :, None], 2)[..., 0]
        active = atoms >= 0
        n_act = active.sum(2)
        same = ((atoms == chosen[..., None]) & active).sum(2)
        agree = np.where(n_act > 0, same / np.maximum(n_act, 1), 0.0)
        return chosen, agree, n_act

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        chosen, agree, n_act = self._parts(atoms)
        rng = np.random.default_rng(self.seed)
        fallback = random_labels(rng, chosen.shape)
        ans = np.where(chosen >= 0, chosen, fallback).astype(np.int8)
        conf = np.where(chosen >= 0, self.accuracy_[None, :], 1.0 / KQ[None, :])
        skip = np.zeros(ans.shape, bool)
        name = self.name
        if self.selective:
            skip = (chosen < 0) | ((n_act >= 2) & (agree < self.theta_))
            name += "_skip"
        return Prediction(name, ans, conf, skip, {"source": self.source_})


@dataclass
class SSBGlobal(SSB):
    """SSB with one source for all 18 questions (the summed score); used by the DGP grid."""

    name = "ssb_global"

    def _choose(self, train: Split) -> np.ndarray:
        best = int(_ssb_scores(train).sum(0).argmax())
        return np.full(N_Q, best)


@dataclass
class MajorityVote:
    """Plurality over the active sources; ties and all-null rows get a Random(42) label.

    Confidence: the winner's share of the active votes (1/K with no active source). Seed 000's
    equal-weight ArgRAG adaptation reduces to exactly this rule.
    """

    seed: int = 42
    name = "majority_vote"

    def fit(self, train: Split, cal: Split | None = None) -> MajorityVote:
        return self

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        votes = vote_counts(atoms)
        rng = np.random.default_rng(self.seed)
        win, _ = argmax_random(votes, rng)
        n_act = (atoms >= 0).sum(2)
        none = n_act == 0
        win = np.where(none, random_labels(rng, win.shape), win).astype(np.int8)
        top = np.take_along_axis(votes, win[..., None].astype(np.intp), 2)[..., 0]
        conf = np.where(none, 1.0 / KQ[None, :], top / np.maximum(n_act, 1))
        return Prediction(self.name, win, conf, np.zeros(win.shape, bool))


def source_reachability(atoms: np.ndarray, gt: np.ndarray, *, skip_on_miss: bool = False
                        ) -> Prediction:
    """The GT-aided reference row (spec §2.11 "OracleExtraction").

    If GT is among the non-null atoms, answer GT; otherwise skip (``skip_on_miss``) or answer
    the plurality of the atoms (ties: first in source order), skipping only when all are null.
    In forced mode its accuracy is the reachability rate.
    """
    atoms = check_atoms(atoms)
    reach = ((atoms == gt[..., None]) & (atoms >= 0)).any(2)
    votes = vote_counts(atoms)
    # plurality, ties to the value met first in source order
    first_seen = np.full(votes.shape, N_S, int)
    for s in range(N_S - 1, -1, -1):
        a = atoms[:, :, s]
        m = a >= 0
        idx = np.nonzero(m)
        first_seen[idx[0], idx[1], a[m]] = s
    key = votes * (N_S + 1) - first_seen
    key = np.where(votes > 0, key, -10**6)
    plural = key.argmax(-1).astype(np.int8)
    n_act = (atoms >= 0).sum(2)
    ans = np.where(reach, gt, plural).astype(np.int8)
    skip = ~reach if skip_on_miss else (n_act == 0)
    top = np.take_along_axis(votes, plural[..., None].astype(np.intp), 2)[..., 0]
    conf = np.where(reach, 1.0, top / np.maximum(n_act, 1))
    name = "source_reachability"
    return Prediction(name, ans, conf, skip, {"reachable": reach})

