"""Naive Bayes Fusion and its difficulty-stratified variant (``reference/testbed-spec.md``
§2.11–2.12; seed 000 §9.1).

NBF (per question)
    prior  log π(w) = log((n_w + 1) / (N + K)), N all train personas, K the full answer space;
    emission  P_s(v | w) = (1 + n_vw) / (K + n_w^s), n_w^s the source's non-null records with GT w;
    log posterior(w) = log π(w) + T · Σ_{active s} log P_s(μ_s | w)   (the prior is not scaled).
    T ∈ {0.1, …, 3.0} maximises calibration macro accuracy; argmax ties go to the first label.

DSNBF
    P_d(v | w) = (η P_global(v | w) + n^d_vw) / (η + n^d_w), per-difficulty priors
    log((n^d_w + 1)/(N_d + K)) and class prior log((N_d + 1)/(N + 3)); the persona's difficulty
    posterior uses all 18 questions with temperature T_diff; the answer mixes the global and the
    difficulty-weighted posteriors with weight gw. Grid (loop order, strict >): η ∈ {3, 5, 8, 15}
    → T_diff ∈ {.1, .3, .5, .7, 1, 1.5, 2} → T ∈ {.3, …, 2.0} → gw ∈ {0, .1, .2, .3, .5, .7, 1}.
    Only train difficulty labels are used; calibration and test difficulty is inferred.

Selective variants skip when ≥ 2 sources are active and the margin top1 − top2 of the
normalised posterior is below θ; every skip counts FN += 1 in F0.5 (spec §2.12, §5.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ._common import (
    KMAX,
    VALID,
    Prediction,
    Split,
    argmax_first,
    check_atoms,
    onehot_atoms,
    pair_counts,
    sum_over_sources,
)
from ._fscore import f_beta, first_best

__all__ = ["DSNBF", "NBF", "emission_counts", "margin", "selective_f05_grid"]

NBF_T = np.round(np.arange(1, 31) / 10, 1)
DS_ETA = (3.0, 5.0, 8.0, 15.0)
DS_TDIFF = (0.1, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0)
DS_T = np.round(np.arange(3, 21) / 10, 1)
DS_GW = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
THETA = np.round(np.arange(0, 101) / 100, 2)
_NEG = -1e30
_KF = VALID.sum(1).astype(float)  # K per question


def emission_counts(atoms: np.ndarray, gt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``n_vw`` (18, 5, KMAX, KMAX) and per-source ``n_w^s`` (18, 5, KMAX) from a split."""
    oh = onehot_atoms(atoms).astype(float)  # n q s v
    yo = (gt[..., None] == np.arange(KMAX)).astype(float)  # n q w
    n_vw = pair_counts(oh, yo)
    return n_vw, n_vw.sum(2)


def _log_prior(gt: np.ndarray) -> np.ndarray:
    n = len(gt)
    counts = (gt[..., None] == np.arange(KMAX)).sum(0).astype(float)
    return np.where(VALID, np.log((counts + 1) / (n + _KF[:, None])), _NEG)


def _log_lik(atoms: np.ndarray, log_e: np.ndarray) -> np.ndarray:
    """Σ over active sources of log P(μ_s | w): (N, 18, KMAX). ``log_e`` is (…, 18, 5, V, W)."""
    return sum_over_sources(onehot_atoms(atoms).astype(float), log_e)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = np.where(VALID, z, -np.inf)
    return _softmax_fast(z)


def _last_max(z: np.ndarray) -> np.ndarray:
    """``z.max(-1)`` by slabs: numpy's reduction along a short trailing axis is slow."""
    m = z[..., 0].copy()
    for k in range(1, z.shape[-1]):
        np.maximum(m, z[..., k], out=m)
    return m


def _last_sum(z: np.ndarray) -> np.ndarray:
    """``z.sum(-1)`` by slabs, left to right — numpy's own order for fewer than 8 terms, so
    the result is bit-identical (longer axes use numpy, whose pairwise sum differs)."""
    if z.shape[-1] >= 8:
        return z.sum(-1)
    s = z[..., 0].copy()
    for k in range(1, z.shape[-1]):
        s += z[..., k]
    return s


def _softmax_fast(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis for inputs whose padded labels are already ≤ −1e30 (the
    log-priors carry ``_NEG`` there), so no masking pass is needed; works in place.

    Equal, bit for bit, to ``exp(z − max) / sum(exp(z − max))`` with numpy's reductions
    (``tests/test_resolvers.py`` checks it), about twice as fast for the 4-label axis.
    """
    z = z - _last_max(z)[..., None]
    np.exp(z, out=z)
    z /= _last_sum(z)[..., None]
    return z


def _logsumexp(z: np.ndarray, axis: int) -> np.ndarray:
    m = z.max(axis, keepdims=True)
    out = np.log(np.exp(z - m).sum(axis, keepdims=True)) + m
    return np.squeeze(out, axis)


def margin(proba: np.ndarray) -> np.ndarray:
    """top1 − top2 of a normalised posterior over the last axis."""
    s = np.sort(np.where(VALID, proba, -np.inf), axis=-1)
    return s[..., -1] - s[..., -2]


def _macro_acc(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """Macro accuracy over the question axis; leading axes are grid axes."""
    return (pred == gt).mean(-2).mean(-1)


def selective_f05_grid(pred, proba, gt, n_act):
    """F0.5 for every θ of :data:`THETA` (NBF/DSNBF accounting: a skip adds FN += 1).

    ``pred``/``proba``'s leading axes are grid axes; returns an array (…, len(THETA)).
    Skippable rows (≥ 2 active sources) are sorted by margin once per grid point, so the counts
    at every θ come from cumulative sums and a ``searchsorted`` (rows with margin < θ skip).
    """
    m = margin(proba)  # (..., N, Q)
    correct = (pred == gt)
    lead = m.shape[:-2]
    cs = (n_act >= 2).reshape(-1)
    m = m.reshape(lead + (-1,))
    c = np.broadcast_to(correct, m.shape[:-1] + correct.shape[-2:]).reshape(lead + (-1,))
    m_s, c_s = m[..., cs], c[..., cs]
    total_correct = c.sum(-1).astype(float)
    total = float(c.shape[-1])
    order = np.argsort(m_s, axis=-1, kind="stable")
    m_sorted = np.take_along_axis(m_s, order, -1)
    cum_c = np.concatenate([np.zeros(lead + (1,)),
                            np.cumsum(np.take_along_axis(c_s, order, -1), -1)], -1)
    flat_m = m_sorted.reshape(int(np.prod(lead, dtype=int)), m_sorted.shape[-1])
    k = np.stack([np.searchsorted(row, THETA, side="left") for row in flat_m])
    k = k.reshape(lead + (len(THETA),))  # rows skipped at each θ
    skipped_correct = np.take_along_axis(cum_c, k, -1)
    tp = total_correct[..., None] - skipped_correct
    fp = (total - total_correct)[..., None] - (k - skipped_correct)
    return f_beta(tp, fp, k.astype(float))


@dataclass
class NBF:
    """Naive Bayes Fusion; ``selective=True`` gives NBF+SKIP (joint T × θ search)."""

    selective: bool = False
    alpha: float = 1.0
    name = "nbf"

    def fit(self, train: Split, cal: Split) -> NBF:
        n_vw, n_w = emission_counts(train.atoms, train.gt)
        k = _KF[:, None, None, None]
        e = (self.alpha + n_vw) / (self.alpha * k + n_w[:, :, None, :])
        valid = VALID[:, None, :, None] & VALID[:, None, None, :]
        self.log_e_ = np.where(valid, np.log(np.where(valid, e, 1.0)), 0.0)
        self.log_prior_ = _log_prior(train.gt)
        lik = _log_lik(cal.atoms, self.log_e_)
        z = self.log_prior_[None, None] + NBF_T[:, None, None, None] * lik[None]
        pred = argmax_first(z)
        if not self.selective:
            self.T_ = float(NBF_T[first_best(_macro_acc(pred, cal.gt))])
            self.theta_ = 1.0  # unused
        else:
            n_act = (cal.atoms >= 0).sum(2)
            f = selective_f05_grid(pred, _softmax(z), cal.gt, n_act)  # (T, Θ)
            i = first_best(f)
            self.T_ = float(NBF_T[i // len(THETA)])
            self.theta_ = float(THETA[i % len(THETA)])
        return self

    def posterior(self, atoms: np.ndarray) -> np.ndarray:
        """Normalised posterior (N, 18, KMAX)."""
        atoms = check_atoms(atoms)
        return _softmax(self.log_prior_[None] + self.T_ * _log_lik(atoms, self.log_e_))

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        z = self.log_prior_[None] + self.T_ * _log_lik(atoms, self.log_e_)
        proba = _softmax(z)
        ans = argmax_first(z)
        conf = proba.max(-1)
        skip = np.zeros(ans.shape, bool)
        name = self.name
        if self.selective:
            skip = ((atoms >= 0).sum(2) >= 2) & (margin(proba) < self.theta_)
            name += "_skip"
        return Prediction(name, ans, conf, skip, {"proba": proba})


@dataclass
class DSNBF:
    """Difficulty-stratified NBF with a hierarchical Dirichlet prior (see module docstring).

    ``fit`` needs ``train.difficulty`` (codes 0, 1, 2 = stable, temporal_shift,
    stated_vs_revealed); ``predict`` sees atoms only.
    """

    selective: bool = False
    name = "dsnbf"

    def _tables(self, train: Split, eta: float):
        n_vw, n_w = emission_counts(train.atoms, train.gt)
        k = _KF[:, None, None, None]
        p_glob = (1 + n_vw) / (k + n_w[:, :, None, :])
        valid = VALID[:, None, :, None] & VALID[:, None, None, :]
        log_d, prior_d, class_p = [], [], []
        n = len(train.gt)
        for d in range(3):
            m = train.difficulty == d
            nd_vw, nd_w = emission_counts(train.atoms[m], train.gt[m])
            pd_ = (eta * p_glob + nd_vw) / (eta + nd_w[:, :, None, :])
            log_d.append(np.where(valid, np.log(np.where(valid, pd_, 1.0)), 0.0))
            prior_d.append(_log_prior(train.gt[m]))
            class_p.append(np.log((m.sum() + 1) / (n + 3)))
        log_g = np.where(valid, np.log(np.where(valid, p_glob, 1.0)), 0.0)
        return log_g, np.stack(log_d), np.stack(prior_d), np.array(class_p)

    @staticmethod
    def _diff_post(lik_d, prior_d, class_p, t_diff):
        """P(d | persona) (…, N, 3) from per-difficulty log-likelihoods (3, N, 18, K)."""
        t = np.asarray(t_diff, float)[..., None, None, None, None]
        z = prior_d[:, None] + t * lik_d  # (..., 3, N, Q, K); padded labels ≈ −1e30
        per_q = _logsumexp(z, -1).sum(-1)  # (..., 3, N)
        logit = class_p[:, None] + per_q
        logit = logit - logsumexp(logit, axis=-2, keepdims=True)
        return np.moveaxis(np.exp(logit), -2, -1)  # (..., N, 3)

    def fit(self, train: Split, cal: Split) -> DSNBF:
        if train.difficulty is None:
            raise ValueError("DSNBF needs the train split's difficulty labels")
        self.log_prior_ = _log_prior(train.gt)
        tdiff = np.asarray(DS_TDIFF)
        n_act = (cal.atoms >= 0).sum(2)
        results = []
        t_grid = DS_T[:, None, None, None]
        gt = cal.gt.astype(np.int8)
        for eta in DS_ETA:
            log_g, log_d, prior_d, class_p = self._tables(train, eta)
            lik_g = _log_lik(cal.atoms, log_g)
            lik_d = np.stack([_log_lik(cal.atoms, log_d[d]) for d in range(3)])
            post = self._diff_post(lik_d, prior_d, class_p, tdiff)  # (Td, N, 3)
            # padded labels get probability −1 so a plain argmax never picks them
            # padded labels have probability 0 and never win: every valid label of a
            # normalised posterior is > 0 or ties at 0 with a lower (valid) label
            a = _softmax_fast(self.log_prior_[None] + t_grid * lik_g[None])  # (T, N, Q, K)
            b_d = _softmax_fast(prior_d[None, :, None] + t_grid[:, None] * lik_d[None])
            # labels on the leading axis: a running argmax over K=4 contiguous slabs is much
            # faster than numpy's argmax along a short trailing axis
            a32 = np.ascontiguousarray(np.moveaxis(a, -1, 0), dtype=np.float32)[:, :, None]
            bd32 = np.ascontiguousarray(np.moveaxis(b_d, -1, 0), dtype=np.float32)  # K,T,3,N,Q
            p32 = post.astype(np.float32)  # (Td, N, 3)
            b32 = (p32[None, None, :, :, 0, None] * bd32[:, :, None, 0]
                   + p32[None, None, :, :, 1, None] * bd32[:, :, None, 1]
                   + p32[None, None, :, :, 2, None] * bd32[:, :, None, 2])  # (K, T, Td, N, Q)
            acc_t = np.empty((len(DS_T), len(DS_GW), len(DS_TDIFF)))
            for g, w in enumerate(DS_GW):
                best = w * a32[0] + (1 - w) * b32[0]
                arg = np.zeros(best.shape, np.int8)
                for k in range(1, KMAX):
                    pk = w * a32[k] + (1 - w) * b32[k]
                    better = pk > best  # strict: ties keep the first label
                    arg[better] = k
                    np.maximum(best, pk, out=best)
                acc_t[:, g] = _macro_acc(arg, gt)
            results.append(acc_t)  # (T, gw, Td)
        acc = np.stack(results)  # (eta, T, gw, Td)
        acc = np.transpose(acc, (0, 3, 1, 2))  # loop order eta -> T_diff -> T -> gw
        i = np.unravel_index(first_best(acc), acc.shape)
        self.eta_ = DS_ETA[i[0]]
        self.t_diff_ = DS_TDIFF[i[1]]
        self.T_ = float(DS_T[i[2]])
        self.gw_ = DS_GW[i[3]]
        self.cal_accuracy_ = float(acc[i])
        self.log_g_, self.log_d_, self.prior_d_, self.class_p_ = self._tables(train, self.eta_)
        self.theta_ = 1.0
        if self.selective:
            proba, _ = self._proba(cal.atoms)
            pred = argmax_first(proba)
            f = selective_f05_grid(pred, proba, cal.gt, n_act)
            self.theta_ = float(THETA[first_best(f)])
        return self

    def _proba(self, atoms):
        lik_g = _log_lik(atoms, self.log_g_)
        lik_d = np.stack([_log_lik(atoms, self.log_d_[d]) for d in range(3)])
        post = self._diff_post(lik_d, self.prior_d_, self.class_p_, self.t_diff_)
        a = _softmax(self.log_prior_[None] + self.T_ * lik_g)
        b = np.einsum("nd,dnqk->nqk", post, _softmax(self.prior_d_[:, None] + self.T_ * lik_d))
        return self.gw_ * a + (1 - self.gw_) * b, post

    def predict(self, atoms: np.ndarray) -> Prediction:
        atoms = check_atoms(atoms)
        proba, post = self._proba(atoms)
        ans = argmax_first(proba)
        skip = np.zeros(ans.shape, bool)
        name = self.name
        if self.selective:
            skip = ((atoms >= 0).sum(2) >= 2) & (margin(proba) < self.theta_)
            name += "_skip"
        return Prediction(name, ans, proba.max(-1), skip,
                          {"proba": proba, "difficulty_posterior": post})

