"""Naive Bayes Fusion and its difficulty-stratified variant (the benchmark specification
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


#: Per label slot k: the (18,) float mask of the questions that have label k, or None when
#: every question has it (padded slots carry ≈ −1e30, see :func:`_exp_slab`).
_PAD = [None if VALID[:, k].all() else VALID[:, k].astype(float) for k in range(KMAX)]


def _exp_slab(d: np.ndarray, k: int, pad=None) -> np.ndarray:
    """``np.exp(d)`` in place for label slot ``k`` (questions on the last axis, or the
    0/1 masks ``pad[k]`` that broadcast to ``d``).

    A padded label's shifted score is ≈ −1e30, whose exponential is exactly 0 but takes
    glibc's slow underflow path (about 3× a normal value); it is zeroed before and after, so
    the exponential runs on 0 instead and every value is the same, bit for bit.
    """
    mask = (_PAD if pad is None else pad)[k]
    if mask is not None:
        d *= mask
    np.exp(d, out=d)
    if mask is not None:
        d *= mask
    return d


def _softmax_lead(z: np.ndarray, pad=None) -> np.ndarray:
    """In-place softmax over the **leading** (label) axis of a contiguous array whose last
    axis is the 18 questions (padded labels ≤ −1e30, as the log-priors make them).

    The labels-first twin of :func:`_softmax_fast`: the same max, the same left-to-right sum
    and the same elementwise operations, so each value is bit-identical to
    ``_softmax_fast(np.moveaxis(z, 0, -1))``; every slab is contiguous, which makes the passes
    several times faster than on a short trailing axis. ``pad``: the padded-label masks of
    :func:`_exp_slab` when the last axis is not the questions.
    """
    m = z[0].copy()
    for k in range(1, len(z)):
        np.maximum(m, z[k], out=m)
    z -= m
    for k in range(len(z)):
        _exp_slab(z[k], k, pad)
    s = z[0].copy()
    for k in range(1, len(z)):
        s += z[k]
    z /= s
    return z


def _logsumexp_lead(z: np.ndarray) -> np.ndarray:
    """``log Σ_k exp(z_k − m) + m`` (m the max over labels) for labels on the leading axis
    and questions on the last: bit-identical to numpy's reductions over a trailing label axis
    (the same max, the same left-to-right sum of the same exponentials)."""
    m = z[0].copy()
    for k in range(1, len(z)):
        np.maximum(m, z[k], out=m)
    e = _exp_slab(z[0] - m, 0)
    for k in range(1, len(z)):
        e += _exp_slab(z[k] - m, k)
    np.log(e, out=e)
    e += m
    return e


#: The lead of a label over every other in two posteriors above which every float32 mix of
#: them answers that label (:meth:`DSNBF.fit`; the mix's rounding moves a score < 4e-7).
_DECIDED = 1e-5

#: A log-score lead that makes a softmax's top label lead in probability by at least
#: (1 − e^−0.001) / 4 ≈ 2.5e-4, far above :data:`_DECIDED` after any float32 rounding.
_GAP = 1e-3


def _top_label(p) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First argmax (int8, strict ``>`` so ties keep the first label), top value and runner-up
    (a tie counts twice) over the leading label axis of ``p`` (an array or a list of slabs)."""
    best = np.array(p[0], copy=True)
    second = np.full(best.shape, -np.inf, best.dtype)
    arg = np.zeros(best.shape, np.int8)
    better = np.empty(best.shape, bool)
    low = np.empty_like(best)
    for k in range(1, len(p)):
        np.greater(p[k], best, out=better)
        np.minimum(best, p[k], out=low)
        np.maximum(second, low, out=second)
        # labels grow with k, so "k where better, else the old winner" is a maximum
        np.maximum(arg, better.view(np.int8) * np.int8(k), out=arg)
        np.maximum(best, p[k], out=best)
    return arg, best, second


def margin(proba: np.ndarray) -> np.ndarray:
    """top1 − top2 of a normalised posterior over the last axis (padded labels ignored).

    The two largest values (a tie counts twice) by a running max over the label slabs: the
    same two values ``np.sort`` puts last, without sorting every row.
    """
    s = np.where(VALID, proba, -np.inf)
    top = np.maximum(s[..., 0], s[..., 1])
    second = np.minimum(s[..., 0], s[..., 1])
    low = np.empty_like(top)
    for k in range(2, s.shape[-1]):
        np.minimum(top, s[..., k], out=low)
        np.maximum(second, low, out=second)
        np.maximum(top, s[..., k], out=top)
    return top - second


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

    @staticmethod
    def _counts(train: Split):
        """What the tables of every η share: global and per-difficulty emission counts, the
        per-difficulty log-priors and the class log-priors (exact integer counts)."""
        n = len(train.gt)
        per_d = []
        for d in range(3):
            m = train.difficulty == d
            per_d.append((emission_counts(train.atoms[m], train.gt[m]), _log_prior(train.gt[m]),
                          np.log((m.sum() + 1) / (n + 3))))
        return emission_counts(train.atoms, train.gt), per_d

    def _tables(self, train: Split, eta: float, counts=None):
        (n_vw, n_w), per_d = self._counts(train) if counts is None else counts
        k = _KF[:, None, None, None]
        p_glob = (1 + n_vw) / (k + n_w[:, :, None, :])
        valid = VALID[:, None, :, None] & VALID[:, None, None, :]
        log_d, prior_d, class_p = [], [], []
        for (nd_vw, nd_w), prior, cls in per_d:
            pd_ = (eta * p_glob + nd_vw) / (eta + nd_w[:, :, None, :])
            log_d.append(np.where(valid, np.log(np.where(valid, pd_, 1.0)), 0.0))
            prior_d.append(prior)
            class_p.append(cls)
        log_g = np.where(valid, np.log(np.where(valid, p_glob, 1.0)), 0.0)
        return log_g, np.stack(log_d), np.stack(prior_d), np.array(class_p)

    @staticmethod
    def _diff_post(lik_d, prior_d, class_p, t_diff):
        """P(d | persona) (…, N, 3) from per-difficulty log-likelihoods (3, N, 18, K)."""
        lik_k = np.moveaxis(lik_d, -1, 0)  # (K, 3, N, Q)
        prior_k = np.moveaxis(prior_d, -1, 0)  # (K, 3, Q)
        return DSNBF._diff_post_lead(lik_k, prior_k, class_p, t_diff)

    @staticmethod
    def _diff_post_lead(lik_k, prior_k, class_p, t_diff):
        """:meth:`_diff_post` with labels on the leading axis: ``lik_k`` (K, 3, N, Q),
        ``prior_k`` (K, 3, Q); ``t_diff`` a scalar or a grid (then a leading grid axis).

        The sum over questions runs left to right: the order numpy's reduction takes over
        the question axis of the question-major likelihoods that :func:`sum_over_sources`
        returns (the original per-question log-sum-exp, then ``.sum(-1)``), so every value is
        the same, bit for bit.
        """
        t = np.atleast_1d(np.asarray(t_diff, float))[:, None, None, None]
        z = prior_k[:, None, :, None] + t * lik_k[:, None]  # (K, Td, 3, N, Q); padded ≈ −1e30
        lse = _logsumexp_lead(z)  # (Td, 3, N, Q)
        per_q = lse[..., 0].copy()  # Σ over questions, left to right (see the docstring)
        for j in range(1, lse.shape[-1]):
            per_q += lse[..., j]
        logit = class_p[:, None] + per_q
        logit = logit - logsumexp(logit, axis=-2, keepdims=True)
        post = np.moveaxis(np.exp(logit), -2, -1)  # (Td, N, 3)
        return post if np.ndim(t_diff) else post[0]

    def fit(self, train: Split, cal: Split) -> DSNBF:
        """Grid search of (η, T_diff, T, gw) on calibration macro accuracy (module doc).

        Equal, bit for bit, to scoring every grid point with ``argmax_first`` of the float32
        mix ``gw · a + (1 − gw) · b`` and ``_macro_acc`` (``tests/test_resolver_fast_paths.py``
        checks it against that point-by-point loop): the posteriors, their float32 mixes and
        the strict ``>`` running argmax are the same operations, laid out labels first
        (contiguous slabs) and personas next (per-question correct counts are row sums).
        The shortcuts are exact too:

        * gw = 1 scores the global posterior a alone, which depends neither on η nor on
          T_diff; gw = 0 mixes nothing in (``0·a + b == b``).
        * A cell (persona, question, T, T_diff) where a and b have the same top label, each
          ahead of every other label by at least :data:`_DECIDED`, has that label as the
          answer of every mix: the float32 rounding of a mix moves each score by less than
          4e-7 (values in [0, 1]), far less than the lead. Its correctness is counted once.
        * Before any softmax: where the three per-difficulty log-scores put the same label
          ahead by :data:`_GAP` or more and a agrees (about 70 % of the (persona, question,
          T) cells), every b_d, hence every mix b of them, leads with that label by ≥ 2.4e-4
          for every T_diff, so the cell is decided without computing b; only the other cells
          get b_d, b and the decision above; about 7 % of all cells are scored per gw.
        """
        if train.difficulty is None:
            raise ValueError("DSNBF needs the train split's difficulty labels")
        self.log_prior_ = _log_prior(train.gt)
        n_act = (cal.atoms >= 0).sum(2)
        counts = self._counts(train)
        oh = onehot_atoms(cal.atoms).astype(float)
        n, n_t, n_td, n_gw = len(cal.gt), len(DS_T), len(DS_TDIFF), len(DS_GW)
        n_q = cal.gt.shape[1]
        gt = cal.gt.astype(np.int8)
        t5 = DS_T[None, None, :, None, None]

        def right(label: np.ndarray) -> np.ndarray:
            """Correct counts (T, ·, Q) of answers ``label`` (N, T, ·, Q)."""
            eq = label == gt[:, None, None, :]
            return np.add.reduce(eq.view(np.uint8), axis=0, dtype=np.int32)

        def macro(c):
            return np.ascontiguousarray(c / n).mean(-1)  # ≡ _macro_acc (same reductions)

        # the global posterior a (K, N, T, Q) does not depend on η
        log_g, *_ = self._tables(train, DS_ETA[0], counts)
        lik_g = np.moveaxis(sum_over_sources(oh, log_g), -1, 0)[:, :, None, :]
        a = _softmax_lead(np.ascontiguousarray(
            np.moveaxis(self.log_prior_, -1, 0)[:, None, None, :] + DS_T[:, None] * lik_g))
        a32 = a.astype(np.float32)
        top_a, lead_a, second_a = _top_label(a32)  # (N, T, Q)
        a_clear = (lead_a - second_a) >= _DECIDED
        acc_w1 = macro(right(top_a[:, :, None]))  # (T, 1): gw = 1 scores a alone
        cells = n_t * n_td * n_q  # (T, T_diff, Q) per persona
        results = []
        for eta in DS_ETA:
            _, log_d, prior_d, class_p = self._tables(train, eta, counts)
            lik_k = np.ascontiguousarray(np.moveaxis(
                np.stack([sum_over_sources(oh, log_d[d]) for d in range(3)]), -1, 0))
            prior_k = np.moveaxis(prior_d, -1, 0)  # (K, 3, Q)
            post = self._diff_post_lead(lik_k, prior_k, class_p, DS_TDIFF)  # (Td, N, 3)
            p32 = np.moveaxis(post.astype(np.float32), 0, 1)  # (N, Td, 3)
            # log-scores of the per-difficulty posteriors (K, N, T, 3, Q)
            z = prior_k[:, None, None] + t5 * np.moveaxis(lik_k, 2, 1)[:, :, None]
            # level 0: (persona, T, question) cells where the three difficulties and a agree
            # on a label that leads clearly: their answer is that label for every T_diff, gw
            top_z, lead_z, second_z = _top_label(z)  # (N, T, 3, Q)
            sure = (((lead_z - second_z) >= _GAP).all(2) & (top_z[:, :, 0] == top_z[:, :, 1])
                    & (top_z[:, :, 0] == top_z[:, :, 2]) & (top_z[:, :, 0] == top_a) & a_clear)
            base = right(np.where(sure, top_z[:, :, 0], np.int8(-1))[:, :, None])  # (T, 1, Q)
            # the other cells, flat: their posteriors b_d and mixes b (K, M, Td)
            open_ = np.flatnonzero(~sure)
            person, t_open, q_open = open_ // (n_t * n_q), open_ // n_q % n_t, open_ % n_q
            b_d = _softmax_lead(np.ascontiguousarray(np.moveaxis(
                z[:, person, t_open, :, q_open], 1, 0)),  # (K, M, 3)
                pad=[None if m is None else m[q_open][:, None] for m in _PAD])
            bd32 = b_d.astype(np.float32)
            p_open = p32[person]  # (M, Td, 3)
            mix = np.empty((KMAX, len(open_), n_td), np.float32)
            for k in range(KMAX):
                np.multiply(p_open[:, :, 0], bd32[k, :, 0, None], out=mix[k])
                for d in (1, 2):
                    mix[k] += p_open[:, :, d] * bd32[k, :, d, None]
            a_open = a32[:, person, t_open, q_open]  # (K, M)
            gt_open = gt[person, q_open]
            cell = (t_open[:, None] * n_td + np.arange(n_td)) * n_q + q_open[:, None]  # (M, Td)
            # level 1: cells where b and a share a label that leads by _DECIDED in both
            top_b, lead_b, second_b = _top_label(mix)  # (M, Td)
            decided = ((top_b == top_a[person, t_open, q_open][:, None])
                       & a_clear[person, t_open, q_open][:, None]
                       & ((lead_b - second_b) >= _DECIDED))
            base = base + np.bincount(cell[decided & (top_b == gt_open[:, None])],
                                      minlength=cells).reshape(n_t, n_td, n_q)
            # level 2: the rest (about 7 % of all cells) scored for every gw
            rest = np.flatnonzero(~decided)
            b_rest = mix.reshape(KMAX, -1)[:, rest]
            a_rest = a_open[:, rest // n_td]
            gt_rest = gt_open[rest // n_td]
            cell_rest = cell.reshape(-1)[rest]
            acc_t = np.empty((n_t, n_gw, n_td))
            for g, w in enumerate(DS_GW):
                if w == 1.0:
                    acc_t[:, g] = acc_w1
                    continue
                wa = w * a_rest
                answer, _, _ = _top_label(b_rest if w == 0.0 else [
                    np.add((1 - w) * b_rest[k], wa[k]) for k in range(KMAX)])
                counts_rest = np.bincount(cell_rest[answer == gt_rest], minlength=cells)
                acc_t[:, g] = macro(base + counts_rest.reshape(n_t, n_td, n_q))
            results.append(acc_t)  # (T, gw, Td)
        acc = np.stack(results)  # (eta, T, gw, Td)
        acc = np.transpose(acc, (0, 3, 1, 2))  # loop order eta -> T_diff -> T -> gw
        i = np.unravel_index(first_best(acc), acc.shape)
        self.eta_ = DS_ETA[i[0]]
        self.t_diff_ = DS_TDIFF[i[1]]
        self.T_ = float(DS_T[i[2]])
        self.gw_ = DS_GW[i[3]]
        self.cal_accuracy_ = float(acc[i])
        self.log_g_, self.log_d_, self.prior_d_, self.class_p_ = self._tables(
            train, self.eta_, counts)
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

