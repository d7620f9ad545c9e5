"""The fast paths of the map fit and the gate's bootstrap against straightforward references.

:func:`core.calibration.restore.fit_monotone_batch` runs a single repetition through
``_newton_one`` (Python floats instead of length-1 arrays) and
:func:`core.calibration.pilot_walk._bootstrap_t_quantiles` sums each stratum's resampled
units only. The references below are the previous implementations, verbatim: the batch
Newton loop over an active set, and the bootstrap over full ``(n_boot, n)`` count matrices
through :func:`~core.calibration.restore.design_variance`. The single fit must agree bit for
bit; the bootstrap quantiles (sums taken in another order) within 1e-12; and the whole gate,
with both references patched in, must give the same decision, map and interval.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import expit

from core.calibration import pilot as P
from core.calibration import pilot_walk as PW
from core.calibration import restore as RS
from core.calibration.deploy import choose_map
from core.calibration.restore import _EPS, design_variance, fit_monotone_batch
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario, transfer_config


def _reference_fit(x, v, st, stx, *, max_iter: int = 100, tol: float = 1e-10,
                   bound: float = 50.0):
    """The batch damped Newton loop of ``fit_monotone_batch`` (active set, arrays only)."""
    x = np.asarray(x, float)
    v = np.asarray(v, float)
    st = np.atleast_1d(np.asarray(st, float))
    stx = np.atleast_1d(np.asarray(stx, float))
    R = st.shape[0]
    shared = x.ndim == 1 and v.ndim == 1
    if not shared:
        x = np.broadcast_to(x, (R, x.shape[-1]))
        v = np.broadcast_to(v, (R, x.shape[-1]))
    vx, vxx = v * x, v * x * x
    sv = v.sum(-1) * np.ones(R)
    mean_t = np.clip(st / np.where(sv > 0, sv, 1.0), _EPS, 1.0 - _EPS)
    a0 = np.log(mean_t) - np.log1p(-mean_t)
    a, g = a0.copy(), np.zeros(R)
    if shared and R > 1:
        sa, sg, _ = _reference_fit(x, v, np.array([st.mean()]), np.array([stx.mean()]),
                                   max_iter=max_iter, tol=tol, bound=bound)
        a[:], g[:] = sa[0], max(sg[0], 0.0)
    converged = np.zeros(R, bool)
    active = np.arange(R)
    for _ in range(max_iter):
        ai, gi = a[active], g[active]
        if shared:
            p = expit(ai[:, None] + gi[:, None] * x[None, :])
            h = p * (1.0 - p)
            ga = np.einsum("rn,n->r", p, v) - st[active]
            gg = np.einsum("rn,n->r", p, vx) - stx[active]
            haa = np.einsum("rn,n->r", h, v)
            hag = np.einsum("rn,n->r", h, vx)
            hgg = np.einsum("rn,n->r", h, vxx)
        else:
            va, vxa, vxxa = v[active], vx[active], vxx[active]
            p = expit(ai[:, None] + gi[:, None] * x[active])
            h = p * (1.0 - p)
            ga = (va * p).sum(1) - st[active]
            gg = (vxa * p).sum(1) - stx[active]
            haa, hag, hgg = (va * h).sum(1), (vxa * h).sum(1), (vxxa * h).sum(1)
        det = haa * hgg - hag * hag
        ok = det > 1e-14 * np.maximum(haa * hgg, 1e-300)
        safe = np.where(ok, det, 1.0)
        da = np.where(ok, (hgg * ga - hag * gg) / safe, ga / np.maximum(haa, 1e-300))
        dg = np.where(ok, (haa * gg - hag * ga) / safe, 0.0)
        lam2 = np.maximum(ga * da + gg * dg, 0.0)
        damp = np.where(lam2 > 0.25, 1.0 / (1.0 + np.sqrt(lam2)), 1.0)
        na = np.clip(ai - damp * da, -bound, bound)
        ng = np.clip(gi - damp * dg, -bound, bound)
        moved = np.abs(na - ai) + np.abs(ng - gi)
        a[active], g[active] = na, ng
        done = moved < tol * (1.0 + np.abs(na) + np.abs(ng))
        converged[active[done]] = True
        active = active[~done]
        if active.size == 0:
            break
    neg = g < 0
    if neg.any():
        g = np.where(neg, 0.0, g)
        a = np.where(neg, a0, a)
    return a, g, converged | neg


def _reference_bootstrap(t, sample, strata, level, rng, n_boot=1999):
    """The gate's bootstrap-t over full ``(n_boot, n)`` count matrices."""
    idx = np.flatnonzero(sample)
    groups = [idx[strata[idx] == h] for h in np.unique(strata[idx])]
    counts = np.zeros((n_boot, t.size))
    rows = np.arange(n_boot)[:, None]
    for g in groups:
        draw = g[rng.integers(0, g.size, (n_boot, g.size))]
        np.add.at(counts, (np.broadcast_to(rows, draw.shape), draw), 1.0)
    total = counts @ t
    var, _, _ = design_variance(t, counts, strata=strata)
    se_b = np.sqrt(np.maximum(var, 0.0))
    ok = se_b > 0
    tt = (total[ok] - t.sum()) / se_b[ok]
    alpha = 1.0 - level
    q_lo, q_hi = np.quantile(tt, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(q_lo), float(q_hi)


def _fit_cases(seed: int):
    """Single fits of every kind the callers make: Platt on a few labels (often separable,
    so the solver runs to the box), corrected targets outside [0, 1], fractional targets,
    zero weights, shared and per-row (``(1, n)``) inputs."""
    rng = np.random.default_rng(seed)
    for k in (4, 9, 22, 50, 259):
        x = rng.normal(0.0, rng.uniform(0.3, 3.0), k)
        v = rng.random(k) * (rng.random(k) > 0.1)
        v = v / v.sum()
        y_bin = (rng.random(k) < expit(1.5 * x)).astype(float)
        y_sep = (x > np.median(x)).astype(float)
        y_ipw = np.clip(rng.random(k), 0, 1) + (rng.random(k) < 0.2) * rng.normal(0, 4, k)
        for y in (y_bin, y_sep, y_ipw, rng.random(k), np.zeros(k)):
            st, stx = np.array([v @ y]), np.array([v @ (y * x)])
            yield x, v, st, stx
            yield x[None, :], v[None, :], st, stx


@pytest.mark.parametrize("seed", range(6))
def test_a_single_fit_is_the_batch_loop_bit_for_bit(seed):
    n_box = 0
    for x, v, st, stx in _fit_cases(seed):
        for kw in ({}, {"max_iter": 40}, {"max_iter": 3}):
            got = fit_monotone_batch(x, v, st, stx, **kw)
            ref = _reference_fit(x, v, st, stx, **kw)
            for a, b in zip(got, ref, strict=True):
                assert a.shape == b.shape == (1,) and a.dtype == b.dtype
                assert np.array_equal(a, b, equal_nan=True), (kw, got, ref)
            n_box += bool(got[1][0] >= 49.9)
    assert n_box > 0  # the no-finite-minimum runs (100 steps to the box) were exercised


@pytest.fixture(scope="module")
def gate_inputs():
    out = []
    for disc in (0.23, 2.0):
        cfg = replace(DEFAULT_SCENARIO, discrimination=disc)
        frame, source = generate_scenario(cfg), generate_scenario(transfer_config(cfg))
        fa = P.frame_arrays(frame)
        beta, _, _ = P.resolve_beta(frame, source_frame=source)
        aux, _ = P._repair_aux(frame, fa, beta, source, "auto")
        out.append((fa, beta, aux, P._strata(fa, 0.8)))
    return out


def _pilot(fa, strata, budget, seed):
    n_h = np.bincount(strata)
    rng = np.random.default_rng(seed)
    att = P._smallest_per_stratum(rng.random((1, fa.n)), strata,
                                  P.design_allocation(budget, n_h, n_h))[0]
    return att & (rng.random(fa.n) >= 0.08)


@pytest.mark.parametrize("seed", range(5))
def test_the_bootstrap_quantiles_match_the_full_matrix_bootstrap(gate_inputs, seed):
    rng = np.random.default_rng(seed)
    for fa, _, _, strata in gate_inputs:
        for budget in (20, 100):
            sample = _pilot(fa, strata, budget, seed)
            t = np.where(sample, rng.normal(0.0, 1e-3, fa.n), 0.0)
            got = PW._bootstrap_t_quantiles(t, sample, strata, 0.95,
                                            np.random.default_rng([seed, 1]))
            ref = _reference_bootstrap(t, sample, strata, 0.95, np.random.default_rng([seed, 1]))
            assert got == pytest.approx(ref, rel=1e-12, abs=1e-12)
            assert got[0] < 0 < got[1]


def test_the_gate_is_the_same_with_the_reference_implementations(gate_inputs, monkeypatch):
    """Eight gates per scenario and budget, fast paths against references patched in."""
    def run():
        out = []
        for fa, beta, aux, strata in gate_inputs:
            for budget in (20, 50, 100):
                for seed in range(8):
                    usable = _pilot(fa, strata, budget, seed)
                    out.append(PW.deployment_gate(fa, fa.c_a, "A", aux, beta, usable, strata,
                                                  seed=seed))
        return out

    fast = run()
    with monkeypatch.context() as m:
        m.setattr(RS, "fit_monotone_batch", _reference_fit)
        m.setattr("core.calibration.deploy.fit_monotone_batch", _reference_fit)
        m.setattr(PW, "_bootstrap_t_quantiles", _reference_bootstrap)
        ref = run()
    n_interval = 0
    for g, r in zip(fast, ref, strict=True):
        assert (g.passes, g.message, g.n_fit, g.n_judge) == (r.passes, r.message, r.n_fit,
                                                             r.n_judge)
        assert g.constant == r.constant and g.gap_raw == r.gap_raw
        if g.deployed is not None:
            assert g.deployed.chosen == r.deployed.chosen
            assert g.deployed.map == r.deployed.map  # α, γ, reason: bit for bit
            assert g.deployed.reason == r.deployed.reason
        for a, b in ((g.lo, r.lo), (g.hi, r.hi), (g.gap, r.gap)):
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-14)
        n_interval += bool(np.isfinite(g.lo))
    assert n_interval > 20  # the bootstrap ran


@pytest.mark.parametrize("seed", [0, 7])
def test_choose_map_is_the_same_with_the_reference_fit(seed, monkeypatch):
    from tests.test_restore_pilot import _issue8_pilot

    c, y, z, s, _, _ = _issue8_pilot(seed, n=1500, k=50)
    fast = choose_map(c, z, np.where(s, y, np.nan), s, seed=seed)
    monkeypatch.setattr(RS, "fit_monotone_batch", _reference_fit)
    monkeypatch.setattr("core.calibration.deploy.fit_monotone_batch", _reference_fit)
    ref = choose_map(c, z, np.where(s, y, np.nan), s, seed=seed)
    assert fast.chosen == ref.chosen and fast.reason == ref.reason
    for a, b in zip(fast.candidates, ref.candidates, strict=True):  # exact, NaN for NaN
        assert (a.name, a.map) == (b.name, b.map)
        assert np.array_equal([a.oof_brier, a.advantage, a.se], [b.oof_brier, b.advantage, b.se],
                              equal_nan=True)


def _reference_smallest_per_stratum(keys, strata, alloc):
    """``pilot._smallest_per_stratum`` with every stratum copied out by index."""
    out = np.zeros(keys.shape, bool)
    for h, a in enumerate(alloc):
        cols = np.flatnonzero(strata == h)
        if a <= 0 or cols.size == 0:
            continue
        if a >= cols.size:
            out[:, cols] = True
            continue
        kh = keys[:, cols]
        out[:, cols] = kh <= np.partition(kh, a - 1, axis=1)[:, a - 1:a]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_the_stratified_draw_reads_contiguous_strata_through_slices_alike(seed):
    rng = np.random.default_rng(seed)
    for trial in range(150):
        n, H = int(rng.integers(1, 300)), int(rng.integers(1, 5))
        strata = rng.integers(0, H, n)
        if trial % 2:
            strata = np.sort(strata)  # contiguous strata: the slice path
        keys = rng.random((int(rng.integers(1, 40)), n))
        alloc = rng.integers(0, 40, H)
        got = P._smallest_per_stratum(keys, strata, alloc)
        assert np.array_equal(got, _reference_smallest_per_stratum(keys, strata, alloc))
        n_h = np.bincount(strata, minlength=H)
        assert np.array_equal(got.sum(1), np.full(keys.shape[0], np.minimum(alloc, n_h).sum()))


@pytest.mark.parametrize("seed", range(3))
def test_the_pps_draw_finds_the_same_items_as_searchsorted(seed):
    rng = np.random.default_rng(seed)
    for trial in range(100):
        n = int(rng.integers(1, 600))
        p = rng.random(n) ** rng.uniform(0.2, 5.0)
        cdf = np.cumsum(p / p.sum())
        u = rng.random((int(rng.integers(1, 300)), int(rng.integers(1, 200))))
        if trial % 10 == 0:  # draws on a bucket edge, on a cdf entry, and 0
            u[0, 0], u[-1, -1], u[0, -1] = cdf[0], 0.0, 0.5
        got, ref = P._searchsorted_unit(cdf, u), np.searchsorted(cdf, u)
        assert got.dtype == ref.dtype and np.array_equal(got, ref)
