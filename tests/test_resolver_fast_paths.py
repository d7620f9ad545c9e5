"""The resolvers' fast paths give the numbers of their plain definitions, bit for bit.

The bias lab refits every resolver on every new setting, so DSNBF's grid search, BCF's δ
search, Dawid–Skene's E-step and ABF's objective are computed label by label on contiguous
slabs, with exact shortcuts (decided cells, distance lookups). Each test here compares one of
them with a direct, loop-per-grid-point version of the same arithmetic on random splits and
asserts equality with ``==`` (no tolerance): a fitted grid point that moved would change a
published number.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp

from core.evaluation.run import run_seed
from core.resolvers import abf as abf_mod
from core.resolvers import nbf as nbf_mod
from core.resolvers._bias import BIAS_TARGET, DIST
from core.resolvers._common import (
    KMAX,
    KQ,
    VALID,
    Split,
    argmax_first,
    onehot_atoms,
    sum_over_sources,
)
from core.resolvers.abf import ABF
from core.resolvers.bcf import BCF, DELTA_GRID, match_tensor
from core.resolvers.dawid_skene import DawidSkene
from core.resolvers.nbf import DS_ETA, DS_GW, DS_T, DS_TDIFF, DSNBF, margin
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.readout import readout


def random_split(rng, n, p_null=0.4):
    atoms = np.where(rng.random((n, 18, 5)) < p_null, -1,
                     np.floor(rng.random((n, 18, 5)) * KQ[None, :, None])).astype(np.int8)
    gt = np.floor(rng.random((n, 18)) * KQ[None, :]).astype(np.int8)
    copy = (atoms >= 0) & (rng.random(atoms.shape) < 0.5)  # informative sources
    atoms = np.where(copy, gt[..., None], atoms).astype(np.int8)
    return Split(atoms, gt, rng.integers(0, 3, n))


#: (train size, calibration size, share of null atoms) of the random cases
CASES = [(30, 12, 0.4), (60, 25, 0.0), (40, 3, 0.7), (24, 1, 0.2), (50, 20, 0.95),
         (20, 8, 1.0)]


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# ------------------------------------------------------------------ DSNBF
def reference_dsnbf_grid(tr: Split, ca: Split) -> np.ndarray:
    """Calibration macro accuracy (η, T_diff, T, gw), one grid point at a time.

    The difficulty posterior sums each persona's 18 per-question log-sum-exps left to right;
    the answer is the first argmax of the float32 mix ``gw · a + (1 − gw) · Σ_d P(d) b_d``.
    """
    log_prior = nbf_mod._log_prior(tr.gt)
    oh = onehot_atoms(ca.atoms).astype(float)
    acc = np.empty((len(DS_ETA), len(DS_TDIFF), len(DS_T), len(DS_GW)))
    for e, eta in enumerate(DS_ETA):
        log_g, log_d, prior_d, class_p = DSNBF()._tables(tr, eta)
        lik_g = sum_over_sources(oh, log_g)
        lik_d = [sum_over_sources(oh, log_d[d]) for d in range(3)]
        for i, t_diff in enumerate(DS_TDIFF):
            logit = []
            for d in range(3):
                z = prior_d[d] + t_diff * lik_d[d]
                m = z.max(-1, keepdims=True)
                lse = np.log(np.exp(z - m).sum(-1)) + m[..., 0]  # (N, Q)
                total = lse[:, 0].copy()
                for q in range(1, lse.shape[1]):
                    total += lse[:, q]
                logit.append(class_p[d] + total)
            logit = np.stack(logit)
            post = np.exp(logit - logsumexp(logit, axis=0, keepdims=True)).astype(np.float32)
            for j, t in enumerate(DS_T):
                a32 = softmax(log_prior + t * lik_g).astype(np.float32)
                bd = [softmax(prior_d[d] + t * lik_d[d]).astype(np.float32) for d in range(3)]
                b32 = (post[0][:, None, None] * bd[0] + post[1][:, None, None] * bd[1]
                       + post[2][:, None, None] * bd[2])
                for g, w in enumerate(DS_GW):
                    pred = np.where(VALID, w * a32 + (1 - w) * b32, -np.inf).argmax(-1)
                    acc[e, i, j, g] = (pred == ca.gt).mean(0).mean()
    return acc


@pytest.mark.parametrize("case", range(len(CASES)))
def test_dsnbf_grid_equals_the_point_by_point_search(case, monkeypatch):
    n_tr, n_ca, p_null = CASES[case]
    rng = np.random.default_rng(100 + case)
    tr, ca = random_split(rng, n_tr, p_null), random_split(rng, n_ca, p_null)
    grids = []
    first_best = nbf_mod.first_best
    monkeypatch.setattr(nbf_mod, "first_best",
                        lambda v: grids.append(np.array(v, copy=True)) or first_best(v))
    m = DSNBF().fit(tr, ca)
    expect = reference_dsnbf_grid(tr, ca)
    assert np.array_equal(grids[0], expect)
    i = np.unravel_index(np.argmax(expect.reshape(-1)), expect.shape)
    assert (m.eta_, m.t_diff_, m.T_, m.gw_) == (DS_ETA[i[0]], DS_TDIFF[i[1]], DS_T[i[2]],
                                               DS_GW[i[3]])


def test_dsnbf_posterior_equals_its_definition():
    rng = np.random.default_rng(7)
    tr, ca, te = random_split(rng, 40), random_split(rng, 15), random_split(rng, 9)
    m = DSNBF().fit(tr, ca)
    oh = onehot_atoms(te.atoms).astype(float)
    lik_d = [sum_over_sources(oh, m.log_d_[d]) for d in range(3)]
    logit = []
    for d in range(3):
        z = m.prior_d_[d] + m.t_diff_ * lik_d[d]
        mx = z.max(-1, keepdims=True)
        lse = np.log(np.exp(z - mx).sum(-1)) + mx[..., 0]
        total = lse[:, 0].copy()
        for q in range(1, 18):
            total += lse[:, q]
        logit.append(m.class_p_[d] + total)
    logit = np.stack(logit)
    post = np.exp(logit - logsumexp(logit, axis=0, keepdims=True)).T
    assert np.array_equal(m.predict(te.atoms).extra["difficulty_posterior"], post)


# ------------------------------------------------------------------ BCF, Dawid–Skene, ABF
def reference_bcf_credit(train: Split) -> np.ndarray:
    """Proportional training credit of every δ of DELTA_GRID, per distinct record."""
    atoms = train.atoms
    keep = (atoms >= 0).any(2)
    m = match_tensor(atoms)[keep]
    y = train.gt[keep].astype(np.int64)
    k = KQ[np.nonzero(keep)[1]]
    width = m.shape[1] * m.shape[2]
    bits = (m.reshape(len(m), width).astype(np.int64) << np.arange(width)).sum(1)
    rows, count = np.unique(np.stack([bits, k, y], 1), axis=0, return_counts=True)
    um = ((rows[:, :1] >> np.arange(width)) & 1).reshape(len(rows), *m.shape[1:])
    w = np.full((len(DELTA_GRID), 5), 10, np.int16)
    w[:, [0, 1, 2, 4]] = 10 - DELTA_GRID
    s = np.einsum("rvs,gs->grv", um.astype(np.int16), w)
    s = np.where(np.arange(m.shape[1])[None, None, :] < rows[None, :, 1:2], s, -1)
    tied = s == s.max(-1, keepdims=True)
    hit = (tied & (np.arange(m.shape[1])[None, None, :] == rows[None, :, 2:3])).any(-1)
    return ((hit / tied.sum(-1)) * count).sum(-1)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_bcf_search_equals_the_einsum_scores(case):
    n_tr, _, p_null = CASES[case]
    tr = random_split(np.random.default_rng(200 + case), n_tr, p_null)
    m = BCF().fit(tr)
    if not (tr.atoms >= 0).any():
        assert m.train_accuracy_ == 0.0
        return
    credit = reference_bcf_credit(tr)
    best = int(np.argmax(credit))
    assert m.train_accuracy_ == float(credit[best] / max(1, int((tr.atoms >= 0).any(2).sum())))
    assert np.array_equal(m.delta_[[0, 1, 2, 4]], DELTA_GRID[best] / 10)


class _PlainDawidSkene(DawidSkene):
    def _e_step(self, oh):
        log_t = np.log(self.rho_)[None] + sum_over_sources(oh, np.log(self.pi_).swapaxes(2, 3))
        log_t = np.where(VALID, log_t, -np.inf)
        log_t -= log_t.max(-1, keepdims=True)
        t = np.exp(log_t)
        return t / t.sum(-1, keepdims=True)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_dawid_skene_em_equals_the_plain_e_step(case):
    n_tr, _, p_null = CASES[case]
    rng = np.random.default_rng(300 + case)
    tr, te = random_split(rng, n_tr, p_null), random_split(rng, 7, p_null)
    fast, plain = DawidSkene().fit(tr), _PlainDawidSkene().fit(tr)
    assert fast.n_iter_ == plain.n_iter_
    assert np.array_equal(fast.pi_, plain.pi_) and np.array_equal(fast.rho_, plain.rho_)
    assert np.array_equal(fast.predict(te.atoms).extra["proba"],
                          plain.predict(te.atoms).extra["proba"])


def plain_abf_params(train: Split) -> np.ndarray:
    """ABF's L-BFGS-B optimum with the objective computed entry by entry."""
    atoms = train.atoms
    keep = (atoms >= 0).any(2)
    d_bias, d_id, active = (a[keep] for a in abf_mod._distances(atoms))
    valid = VALID[np.nonzero(keep)[1]]
    y = train.gt[keep].astype(np.intp)
    onehot = np.arange(KMAX)[None, :] == y[:, None]
    n = len(y)

    def nll(x):
        w, kb, ki, per_s = abf_mod._score_parts(x, d_bias, d_id, active)
        logits = np.where(valid, per_s @ w, -np.inf)
        m = logits.max(-1, keepdims=True)
        e = np.exp(logits - m)
        z = e.sum(-1, keepdims=True)
        loss = -(np.take_along_axis(logits - m - np.log(z), y[:, None], 1)).mean()
        g = np.where(valid, e / z - onehot, 0.0) / n
        grad = np.empty(6)
        grad[:4] = -np.einsum("rv,rvs->s", g, per_s)[[0, 1, 2, 4]]
        grad[5] = np.einsum("rv,rvs,s->", g, active * (kb - ki), w)
        dkb = np.where(x[4] * d_bias < 1, -d_bias, 0.0)
        dki = np.where(x[4] * d_id < 1, -d_id, 0.0)
        grad[4] = np.einsum("rv,rvs,s->", g, active * (x[5] * dkb + (1 - x[5]) * dki), w)
        return loss, grad

    return minimize(nll, abf_mod._X0, jac=True, method="L-BFGS-B", bounds=abf_mod._BOUNDS,
                    options={"maxiter": 200}).x


@pytest.mark.parametrize("case", [0, 1, 2, 4])
def test_abf_objective_lookup_equals_the_entrywise_objective(case):
    n_tr, _, p_null = CASES[case]
    tr = random_split(np.random.default_rng(400 + case), n_tr, p_null)
    assert np.array_equal(ABF().fit(tr).params_, plain_abf_params(tr))


def test_abf_distance_codes_index_the_distance_table():
    rng = np.random.default_rng(5)
    atoms = random_split(rng, 9).atoms
    d_bias, d_id, active = abf_mod._distances(atoms)
    n_u = len(abf_mod._DIST_VALUES)
    code = abf_mod._distance_codes(atoms)
    assert np.array_equal(abf_mod._DIST_VALUES[code // n_u % n_u], d_bias)
    assert np.array_equal(abf_mod._DIST_VALUES[code % n_u], d_id)
    assert np.array_equal(code // (n_u * n_u), np.broadcast_to(active, code.shape))
    assert BIAS_TARGET.shape[-1] == 5 and DIST.shape[0] == 18


# ------------------------------------------------------------------ shared helpers, run_seed
@pytest.mark.parametrize("kind", ["normal", "ties", "integers", "infinite", "float32"])
def test_slab_argmax_and_margin_equal_numpy(kind):
    rng = np.random.default_rng(6)
    for shape in [(5, 18, 4), (3, 7, 18, 4), (0, 18, 4)]:
        z = rng.normal(size=shape)
        if kind == "ties":
            z = np.round(z)
        elif kind == "integers":
            z = rng.integers(0, 3, shape).astype(float)
        elif kind == "infinite":
            z[rng.random(shape) < 0.2] = -np.inf
            z[..., 0] = 0.0  # keep one finite label per row
        elif kind == "float32":
            z = z.astype(np.float32)
        masked = np.where(VALID, z, -np.inf)
        assert np.array_equal(argmax_first(z), masked.argmax(-1).astype(np.int8))
        srt = np.sort(masked, axis=-1)
        assert np.array_equal(margin(z), srt[..., -1] - srt[..., -2])
    z = rng.normal(size=(4, 18, 4))
    z[0, 0, 1] = np.nan  # numpy's rule (NaN is the maximum) is kept
    assert np.array_equal(argmax_first(z), np.where(VALID, z, -np.inf).argmax(-1))


def test_run_seed_in_two_threads_equals_one_thread():
    tb = generate(TestbedConfig(seeds=(11,), personas_per_difficulty=12, bias_scale=1.5))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    serial = run_seed(mu, gt, tb.personas)
    both = run_seed(mu, gt, tb.personas, parallel=True)
    assert list(both.predictions) == list(serial.predictions)
    assert list(both.models) == list(serial.models)
    for name, p in serial.predictions.items():
        q = both.predictions[name]
        assert np.array_equal(p.answer, q.answer) and np.array_equal(p.skipped, q.skipped)
        assert np.array_equal(p.confidence, q.confidence), name
    assert vars(both.models["dsnbf"]).keys() == vars(serial.models["dsnbf"]).keys()
    assert both.models["dsnbf"].cal_accuracy_ == serial.models["dsnbf"].cal_accuracy_
