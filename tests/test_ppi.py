"""Tests of ``core.calibration.ppi``: closed forms, conventions, vectorisation, coverage.

calibration-notes §5.3–5.6 (definitions), §7 (coverage simulations guard every λ formula);
seed 003 §3 Eq. 3 / §5.5 (design-based pilot intervals). Simulations are seeded and
vectorised over repetitions; the Monte-Carlo tolerance is about ±3.5 standard errors of a
coverage proportion (√(.95·.05/R)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from core.calibration.ppi import (
    PPIResult,
    classical_mean_ci,
    difference_estimator_ci,
    horvitz_thompson_ci,
    multi_ppi_mean_ci,
    ppi_mean_ci,
    ppi_mean_pointestimate,
    stratified_ppi_mean_ci,
)

Z95 = norm.ppf(0.975)


def _coverage_band(R: int, level: float = 0.95) -> tuple[float, float]:
    half = 3.5 * math.sqrt(level * (1 - level) / R)
    return level - half, level + half


# --- closed forms and conventions -----------------------------------------------------------

def test_ppi_closed_form_tiny():
    y, yh, yu = [1, 0, 1, 1], [1, 0, 1, 0], [1, 1, 0, 1, 0, 1]
    r = ppi_mean_ci(y, yh, yu)
    # Ĉov (ddof 0) = 1/8; pooled Var (ddof 1) = 2.4/9; λ̂ = (1/8) / ((1 + 4/6)·2.4/9) = 9/32
    assert r.lam == pytest.approx(9 / 32, abs=1e-15)
    assert r.estimate == pytest.approx(51 / 64, abs=1e-15)
    resid = np.array(y) - 9 / 32 * np.array(yh)
    se = math.sqrt((9 / 32) ** 2 * (4 / 6) * (2 / 6) / 6 + resid.var() / 4)
    assert r.se == pytest.approx(se, abs=1e-15)
    assert (r.low, r.high) == pytest.approx((51 / 64 - Z95 * se, 51 / 64 + Z95 * se))
    assert (r.n, r.N, r.alpha, r.method) == (4, 6, 0.05, "ppi")
    assert r.width == pytest.approx(2 * Z95 * se)
    assert ppi_mean_pointestimate(y, yh, yu) == pytest.approx(51 / 64, abs=1e-15)


def test_lambda_zero_is_classical_and_one_is_ppi():
    rng = np.random.default_rng(0)
    y = rng.normal(size=40)
    yh = y + rng.normal(size=40)
    yu = rng.normal(size=300)
    c = classical_mean_ci(y)
    z = ppi_mean_ci(y, yh, yu, lam=0)
    assert (z.estimate, z.low, z.high, z.se) == (c.estimate, c.low, c.high, c.se)
    assert c.se == pytest.approx(y.std() / math.sqrt(40))  # ddof 0, as ppi_py
    assert (c.lam, c.N, c.method) == (0.0, 0, "classical")
    one = ppi_mean_ci(y, yh, yu, lam=1)
    assert one.estimate == pytest.approx(yu.mean() + (y - yh).mean())
    assert one.se == pytest.approx(math.sqrt(yu.var() / 300 + (y - yh).var() / 40))


def test_alpha_default_is_95_percent_not_ppi_py_90():
    y, yh, yu = np.arange(10.0), np.arange(10.0) + 1, np.arange(20.0)
    r95, r90 = ppi_mean_ci(y, yh, yu), ppi_mean_ci(y, yh, yu, alpha=0.1)
    assert r95.alpha == 0.05
    assert r95.width / r90.width == pytest.approx(Z95 / norm.ppf(0.95))


def test_lambda_clipping():
    rng = np.random.default_rng(1)
    y = rng.normal(size=60)
    anti = -y + 0.1 * rng.normal(size=60)
    assert ppi_mean_ci(y, anti, rng.normal(size=100)).lam == 0.0
    assert ppi_mean_ci(y, anti, rng.normal(size=100), clip=False).lam < -0.5
    small = 0.2 * y
    assert ppi_mean_ci(y, small, 0.2 * rng.normal(size=600)).lam == 1.0
    assert ppi_mean_ci(y, small, 0.2 * rng.normal(size=600), clip=False).lam > 2.0
    # a fixed λ is never clipped
    assert ppi_mean_ci(y, small, small, lam=3.0).lam == 3.0


def test_zero_variance_proxy_gives_classical():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    r = ppi_mean_ci(y, np.ones(5), np.ones(30))
    c = classical_mean_ci(y)
    assert r.lam == 0.0 and r.estimate == c.estimate and r.se == c.se
    d = difference_estimator_ci(y, np.ones(5), np.ones(30))
    assert d.lam == 0.0


@pytest.mark.parametrize("fn", [
    lambda: classical_mean_ci([1.0]),
    lambda: ppi_mean_ci([1.0], [1.0], [0.0, 1.0]),
    lambda: difference_estimator_ci([1.0], [1.0], [0.0, 1.0]),
    lambda: multi_ppi_mean_ci([1.0], [[1.0]], [[0.0], [1.0]]),
])
def test_fewer_than_two_labeled_items_rejected(fn):
    with pytest.raises(ValueError, match="at least 2"):
        fn()


def test_shape_and_value_errors():
    with pytest.raises(ValueError, match="same shape"):
        ppi_mean_ci([1, 0, 1], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        ppi_mean_ci([1, 0], [1, 0], [])
    with pytest.raises(ValueError, match="non-finite"):
        ppi_mean_ci([1, np.nan], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean_ci([1, 0], [1, 0], [0, 1], alpha=1.5)
    with pytest.raises(ValueError, match="broadcast"):
        ppi_mean_ci(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((2, 5)))
    with pytest.raises(ValueError, match="exceeds pool"):
        difference_estimator_ci([1, 0, 1], [1, 0, 1], [1, 0])


# --- vectorisation ----------------------------------------------------------------------------

def test_vectorised_rows_equal_single_calls():
    rng = np.random.default_rng(2)
    R, n, N = 7, 25, 80
    y = rng.normal(size=(R, n))
    yh = y + rng.normal(size=(R, n))
    yu_shared = rng.normal(size=N)
    yu_rows = rng.normal(size=(R, N))
    for yu in (yu_shared, yu_rows):
        for lam in (None, 0.0, 1.0):
            v = ppi_mean_ci(y, yh, yu, lam=lam)
            assert isinstance(v, PPIResult) and v.estimate.shape == (R,)
            for i in range(R):
                s = ppi_mean_ci(y[i], yh[i], yu if yu.ndim == 1 else yu[i], lam=lam)
                assert v.estimate[i] == pytest.approx(s.estimate, abs=1e-14)
                assert v.se[i] == pytest.approx(s.se, abs=1e-14)
                assert np.asarray(v.lam).reshape(-1)[i if lam is None else 0] == \
                    pytest.approx(s.lam, abs=1e-14)
    c = classical_mean_ci(y)
    np.testing.assert_allclose(c.estimate, y.mean(1))
    pool = rng.normal(size=200)
    d = difference_estimator_ci(y, yh, pool)
    for i in range(R):
        assert d.estimate[i] == pytest.approx(difference_estimator_ci(y[i], yh[i], pool).estimate)


def test_vectorised_shapes_for_5000_pilots():
    """Many pilots evaluate in one call (speed is measured in benchmarks/bench_calibration.py)."""
    rng = np.random.default_rng(3)
    R, n, N = 5000, 50, 259
    y = (rng.uniform(size=(R, n)) < 0.7).astype(float)
    yh = y * (rng.uniform(size=(R, n)) < 0.4)
    yu = (rng.uniform(size=N) < 0.3).astype(float)
    pi = rng.uniform(0.05, 0.5, size=(R, n))
    a = ppi_mean_ci(y, yh, yu)
    b = horvitz_thompson_ci(y, yh, pi, yu)
    assert a.estimate.shape == b.estimate.shape == (R,)
    assert np.isfinite(a.low).all() and np.isfinite(b.high).all()


# --- finite population ------------------------------------------------------------------------

def test_difference_estimator_closed_form():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    yh = np.array([1.0, 0.0, 0.0, 1.0])
    pool = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    r = difference_estimator_ci(y, yh, pool, lam=1.0)
    e = y - yh
    assert r.estimate == pytest.approx(pool.mean() + e.mean())
    assert r.se == pytest.approx(math.sqrt((1 - 4 / 10) * e.var(ddof=1) / 4))
    nofpc = difference_estimator_ci(y, yh, pool, lam=1.0, fpc=False)
    assert nofpc.se == pytest.approx(math.sqrt(e.var(ddof=1) / 4))
    tuned = difference_estimator_ci(y, yh, pool)
    lam = np.cov(y, yh)[0, 1] / yh.var(ddof=1)
    assert tuned.lam == pytest.approx(lam)
    assert tuned.se == pytest.approx(math.sqrt(0.6 * (y - lam * yh).var(ddof=2) / 4))
    # census: the pilot is the pool, the FPC makes the variance 0
    census = difference_estimator_ci(pool[:4] * 0 + y, yh, yh)
    assert census.se == 0.0 and census.estimate == pytest.approx(y.mean())
    assert (r.method, r.N) == ("difference", 10)


# --- several control variates -----------------------------------------------------------------

def test_multi_ppi_one_proxy_equals_ppi_unclipped():
    rng = np.random.default_rng(4)
    y = rng.normal(size=50)
    yh = 0.3 * y + rng.normal(size=50)
    yu = 0.3 * rng.normal(size=400) + rng.normal(size=400)
    m = multi_ppi_mean_ci(y, yh[:, None], yu[:, None])
    s = ppi_mean_ci(y, yh, yu, clip=False)
    assert m.lam[0] == pytest.approx(s.lam, abs=1e-12)
    assert (m.estimate, m.se) == pytest.approx((s.estimate, s.se), abs=1e-12)
    assert m.method == "multi_ppi"


def test_multi_ppi_singular_sigma_guard():
    rng = np.random.default_rng(5)
    y = rng.normal(size=60)
    yh = y + rng.normal(size=60)
    yu = rng.normal(size=300) * 1.4
    dup = multi_ppi_mean_ci(y, np.c_[yh, yh], np.c_[yu, yu])  # perfectly collinear
    one = multi_ppi_mean_ci(y, yh, yu)
    assert np.all(np.isfinite(dup.lam))
    assert dup.lam.sum() == pytest.approx(one.lam[0], abs=1e-8)
    assert dup.lam[0] == pytest.approx(dup.lam[1], abs=1e-8)  # minimum-norm split
    assert (dup.estimate, dup.se) == pytest.approx((one.estimate, one.se), abs=1e-8)
    const = multi_ppi_mean_ci(y, np.ones((60, 2)), np.ones((300, 2)))
    c = classical_mean_ci(y)
    assert np.all(const.lam == 0) and const.estimate == pytest.approx(c.estimate)
    ridge = multi_ppi_mean_ci(y, np.c_[yh, yh], np.c_[yu, yu], ridge=1.0)
    assert np.linalg.norm(ridge.lam) < np.linalg.norm(dup.lam)
    fixed = multi_ppi_mean_ci(y, np.c_[yh, yh], np.c_[yu, yu], lam=1 / math.sqrt(2))
    np.testing.assert_allclose(fixed.lam, [1 / math.sqrt(2)] * 2)


def test_multi_ppi_two_proxies_beat_one():
    rng = np.random.default_rng(6)
    n, N = 200, 2000
    z = rng.normal(size=(n + N, 2))
    y_all = z[:, 0] + z[:, 1] + 0.3 * rng.normal(size=n + N)
    m = multi_ppi_mean_ci(y_all[:n], z[:n], z[n:])
    one = ppi_mean_ci(y_all[:n], z[:n, 0], z[n:, 0])
    assert m.se < one.se
    assert m.lam.shape == (2,)


# --- stratified -------------------------------------------------------------------------------

def test_stratified_single_stratum_equals_ppi():
    rng = np.random.default_rng(7)
    y = rng.normal(size=30)
    yh = y + rng.normal(size=30)
    yu = rng.normal(size=90)
    s = stratified_ppi_mean_ci(y, yh, np.zeros(30), yu, np.zeros(90))
    p = ppi_mean_ci(y, yh, yu)
    assert (s.estimate, s.se, s.low, s.high) == pytest.approx((p.estimate, p.se, p.low, p.high))
    assert s.strata == (0.0,) and s.weights.tolist() == [1.0]


def test_stratified_closed_form_and_errors():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    yh = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    st = np.array(["a", "a", "a", "b", "b", "b"])
    yu = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    su = np.array(["a", "a", "a", "a", "b", "b", "b"])
    r = stratified_ppi_mean_ci(y, yh, st, yu, su, lam=0.0)
    wa, wb = 7 / 13, 6 / 13  # (n_h + N_h) / (n + N)
    assert r.weights.tolist() == pytest.approx([wa, wb])
    assert r.estimate == pytest.approx(wa * 2 / 3 + wb * 2 / 3)
    se_h = math.sqrt((2 / 9) / 3)
    assert r.se == pytest.approx(math.sqrt(wa**2 + wb**2) * se_h)
    assert [x.estimate for x in r.per_stratum] == pytest.approx([2 / 3, 2 / 3])
    k = stratified_ppi_mean_ci(y, yh, st, yu, su, lam=0.0, stratum_weights={"a": 1, "b": 3})
    assert k.weights.tolist() == [0.25, 0.75]
    with pytest.raises(ValueError, match="lacks strata"):
        stratified_ppi_mean_ci(y, yh, st, yu, su, stratum_weights={"a": 1})
    with pytest.raises(ValueError, match=">= 2 labeled"):
        stratified_ppi_mean_ci(y, yh, np.array(["a"] * 5 + ["c"]), yu, su)


# --- Horvitz–Thompson -------------------------------------------------------------------------

def test_horvitz_thompson_closed_form():
    y = np.array([1.0, 0.0, 1.0])
    yh = np.array([0.0, 0.0, 1.0])
    pi = np.array([0.5, 0.25, 1.0])
    pool = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    r = horvitz_thompson_ci(y, yh, pi, pool)
    e = y - yh
    assert r.estimate == pytest.approx((pool.sum() + (e / pi).sum()) / 8)
    var = ((1 - pi) * (e / pi) ** 2).sum() / 64
    assert r.se == pytest.approx(math.sqrt(var))
    assert (r.n, r.N, r.lam, r.method, r.n_clusters) == (3, 8, 1.0, "horvitz_thompson", None)
    # λ = 0: pure HT mean of Y
    r0 = horvitz_thompson_ci(y, yh, pi, pool, lam=0.0)
    assert r0.estimate == pytest.approx((y / pi).sum() / 8)
    # census with π = 1: exact, no variance
    full = horvitz_thompson_ci(pool, 1 - pool, np.ones(8), 1 - pool)
    assert full.estimate == pytest.approx(pool.mean()) and full.se == 0.0


def test_horvitz_thompson_weights_mask_and_clusters():
    rng = np.random.default_rng(8)
    n, N = 12, 40
    y = rng.integers(0, 2, n).astype(float)
    yh = rng.integers(0, 2, n).astype(float)
    pi = rng.uniform(0.2, 0.9, n)
    pool = rng.integers(0, 2, N).astype(float)
    base = horvitz_thompson_ci(y, yh, pi, pool, lam=0.6)
    # constant weights change nothing
    cw = horvitz_thompson_ci(y, yh, pi, pool, lam=0.6, weights=np.full(n, 3.0),
                             pool_weights=np.full(N, 3.0))
    assert (cw.estimate, cw.se) == pytest.approx((base.estimate, base.se))
    # each item its own cluster = no clustering
    own = horvitz_thompson_ci(y, yh, pi, pool, lam=0.6, clusters=np.arange(n))
    assert (own.estimate, own.se) == pytest.approx((base.estimate, base.se))
    assert own.n_clusters == n
    # masked-out entries are ignored, even if NaN
    ypad = np.r_[y, np.nan, 5.0]
    mask = np.r_[np.ones(n, bool), False, False]
    padded = horvitz_thompson_ci(ypad, np.r_[yh, 0.0, np.nan], np.r_[pi, np.nan, 0.0], pool,
                                 lam=0.6, sampled=mask)
    assert (padded.estimate, padded.se, padded.n) == pytest.approx((base.estimate, base.se, n))
    # clusters sum e/π before squaring
    cl = np.repeat(np.arange(4), 3)
    pic = np.repeat([0.3, 0.5, 0.7, 0.9], 3)
    rc = horvitz_thompson_ci(y, yh, pic, pool, lam=0.6, clusters=cl)
    t = np.bincount(cl, weights=(y - 0.6 * yh) / pic)
    assert rc.se == pytest.approx(math.sqrt(((1 - np.array([0.3, 0.5, 0.7, 0.9])) * t**2).sum())
                                  / N)
    assert rc.n_clusters == 4
    with pytest.raises(ValueError, match="constant within"):
        horvitz_thompson_ci(y, yh, pi, pool, clusters=cl)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        horvitz_thompson_ci(y, yh, np.r_[0.0, pi[1:]], pool)
    with pytest.raises(ValueError, match="both"):
        horvitz_thompson_ci(y, yh, pi, pool, weights=np.ones(n))
    with pytest.raises(ValueError, match="at least 2"):
        horvitz_thompson_ci(y, yh, pi, pool, sampled=np.r_[True, np.zeros(n - 1, bool)])


def test_horvitz_thompson_vectorised_clusters_match_rows():
    rng = np.random.default_rng(9)
    R, n, N = 5, 10, 30
    y = rng.integers(0, 2, (R, n)).astype(float)
    yh = rng.integers(0, 2, (R, n)).astype(float)
    cl = rng.integers(0, 4, (R, n))
    pi = np.take_along_axis(rng.uniform(0.2, 0.9, (R, 4)), cl, 1)
    pool = rng.integers(0, 2, N).astype(float)
    v = horvitz_thompson_ci(y, yh, pi, pool, clusters=cl)
    for i in range(R):
        s = horvitz_thompson_ci(y[i], yh[i], pi[i], pool, clusters=cl[i])
        assert (v.estimate[i], v.se[i], v.n_clusters[i]) == pytest.approx(
            (s.estimate, s.se, s.n_clusters))


# --- coverage by seeded simulation ------------------------------------------------------------

def test_ppi_mean_ci_coverage():
    rng = np.random.default_rng(2026)
    R, n, N, prev = 2000, 100, 1000, 0.6

    def draw(size):
        y = (rng.uniform(size=size) < prev).astype(float)
        return y, np.where(rng.uniform(size=size) < 0.2, 1 - y, y)

    y, yh = draw((R, n))
    _, yu = draw((R, N))
    lo, hi = _coverage_band(R)
    for lam in (None, 1.0, 0.0):
        r = ppi_mean_ci(y, yh, yu, lam=lam)
        cover = np.mean((r.low <= prev) & (prev <= r.high))
        assert lo <= cover <= hi, (lam, cover)
    tuned, classical = ppi_mean_ci(y, yh, yu), classical_mean_ci(y)
    assert np.mean(tuned.width) < np.mean(classical.width)


def test_difference_estimator_coverage():
    rng = np.random.default_rng(77)
    N, n, R = 400, 80, 2000
    y_pool = (rng.uniform(size=N) < 0.7).astype(float)
    yh_pool = y_pool * (rng.uniform(size=N) < 0.5) + (1 - y_pool) * (rng.uniform(size=N) < 0.1)
    truth = y_pool.mean()
    idx = np.argsort(rng.uniform(size=(R, N)), axis=1)[:, :n]  # SRS without replacement
    lo, hi = _coverage_band(R)
    for lam in (None, 1.0):
        r = difference_estimator_ci(y_pool[idx], yh_pool[idx], yh_pool, lam=lam)
        cover = np.mean((r.low <= truth) & (truth <= r.high))
        assert lo <= cover <= hi, (lam, cover)
        assert abs(np.mean(r.estimate) - truth) < 0.01


def test_horvitz_thompson_coverage_poisson_design():
    rng = np.random.default_rng(31)
    N, R = 500, 2000
    y_pool = (rng.uniform(size=N) < 0.75).astype(float)
    z_pool = y_pool * (rng.uniform(size=N) < 0.45)  # reference label: unmatched → 0
    pi = np.where(z_pool == 0, 0.18, 0.06)  # oversample unmatched items (seed 003 §3)
    truth = y_pool.mean()
    mask = rng.uniform(size=(R, N)) < pi
    full = (R, N)
    r = horvitz_thompson_ci(np.broadcast_to(y_pool, full), np.broadcast_to(z_pool, full),
                            np.broadcast_to(pi, full), z_pool, sampled=mask)
    lo, hi = _coverage_band(R)
    cover = np.mean((r.low <= truth) & (truth <= r.high))
    assert lo <= cover <= hi, cover
    assert abs(np.mean(r.estimate) - truth) < 0.005  # design-unbiased
    assert 55 < np.mean(r.n) < 75


def test_horvitz_thompson_coverage_cluster_design():
    rng = np.random.default_rng(12)
    C, m, R = 400, 3, 2000  # ~80 sampled clusters; with ~30, skewed HT totals under-cover
    cluster = np.repeat(np.arange(C), m)
    level = rng.uniform(0.2, 0.95, C)[cluster]  # strong within-cluster correlation
    y_pool = (rng.uniform(size=C * m) < level).astype(float)
    z_pool = y_pool * (rng.uniform(size=C * m) < 0.5)
    pi_c = np.where(rng.uniform(size=C) < 0.5, 0.1, 0.3)
    pi = pi_c[cluster]
    truth = y_pool.mean()
    mask = (rng.uniform(size=(R, C)) < pi_c)[:, cluster]  # whole clusters are sampled
    full = (R, C * m)
    args = (np.broadcast_to(y_pool, full), np.broadcast_to(z_pool, full),
            np.broadcast_to(pi, full), z_pool)
    r = horvitz_thompson_ci(*args, sampled=mask, clusters=np.broadcast_to(cluster, full))
    naive = horvitz_thompson_ci(*args, sampled=mask)
    lo, hi = _coverage_band(R)
    cover = np.mean((r.low <= truth) & (truth <= r.high))
    assert lo <= cover <= hi, cover
    assert np.mean((naive.low <= truth) & (truth <= naive.high)) < lo  # ignoring clusters fails
    assert np.mean(r.n_clusters) == pytest.approx(C * pi_c.mean(), rel=0.05)
