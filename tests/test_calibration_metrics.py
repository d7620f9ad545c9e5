"""Closed-form and property tests for ``core.calibration`` scores, curves and decompositions.

Test plan: calibration-notes §7 (closed forms on tiny arrays; identities; pitfalls §6.1, §6.7;
determinism of seeded bands). Seed 003 §4 supplies ECE_w ≥ |E_w[C] − E_w[Y]|.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from core.calibration._checks import check_forecasts
from core.calibration.corp import corp_consistency_band, corp_curve, corp_decomposition
from core.calibration.recalibration import IsotonicMap, PlattMap, isotonic_fit, platt_fit
from core.calibration.reliability import (
    ReliabilityCurve,
    bin_edges,
    binned_ece,
    consistency_bands,
    mce,
    murphy_decomposition,
    reliability_curve,
    rms_calibration_error,
)
from core.calibration.scores import (
    LOG_SCORE_EPS,
    LOG_SCORE_NOTE,
    SPIEGELHALTER_MIN_ITEMS,
    SPIEGELHALTER_NOTE,
    auroc,
    brier_score,
    calibration_in_the_large,
    log_score,
    spiegelhalter_reason,
    spiegelhalter_z,
)
from core.calibration.smooth import smooth_ece, smooth_reliability
from core.stats import exact_interval

# --- strategies ---------------------------------------------------------------------------------

_P = st.one_of(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 1.0]),
               st.floats(0.0, 1.0, allow_nan=False))


@st.composite
def forecasts(draw, min_size=1, max_size=60, weighted=None):
    n = draw(st.integers(min_size, max_size))
    p = np.array(draw(st.lists(_P, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), float)
    use_w = draw(st.booleans()) if weighted is None else weighted
    w = (np.array(draw(st.lists(st.floats(0.05, 20.0), min_size=n, max_size=n)))
         if use_w else None)
    return p, y, w


# --- input validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, match", [
    (([], []), "empty"),
    (([[0.1, 0.2]], [1]), "1-D"),
    (([0.1, np.nan], [1, 0]), "non-finite"),
    (([0.1, 1.2], [1, 0]), r"\[0, 1\]"),
    (([0.1, -0.1], [1, 0]), r"\[0, 1\]"),
    (([0.1, 0.2], [1, 2]), "binary"),
    (([0.1, 0.2], [1, 0, 1]), "equal length"),
    ((["a", "b"], [1, 0]), "numeric"),
])
def test_checks_reject_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        check_forecasts(*args)


@pytest.mark.parametrize("w, match", [([1.0, 0.0], "> 0"), ([1.0, -2.0], "> 0"),
                                      ([1.0, np.inf], "non-finite"), ([1.0], "length")])
def test_checks_reject_bad_weights(w, match):
    with pytest.raises(ValueError, match=match):
        brier_score([0.1, 0.2], [1, 0], weights=w)


def test_booleans_accepted_as_labels():
    assert brier_score([0.5, 0.5], [True, False]) == 0.25


# --- scores -------------------------------------------------------------------------------------

def test_brier_closed_form_and_weights():
    assert brier_score([0.9, 0.2], [1, 0]) == pytest.approx(0.025)
    # weight 3 on the first item = triplicating it
    assert brier_score([0.9, 0.2], [1, 0], weights=[3, 1]) == pytest.approx(
        brier_score([0.9, 0.9, 0.9, 0.2], [1, 1, 1, 0]))
    assert brier_score([0.0, 1.0], [0, 1]) == 0.0
    assert brier_score([0.0, 1.0], [1, 0]) == 1.0
    # probability labels allowed
    assert brier_score([0.5], [0.8]) == pytest.approx(0.09)


def test_log_score_clipping_convention():
    assert log_score([0.5, 0.5], [1, 0]) == pytest.approx(math.log(2))
    assert log_score([0.0], [1]) == pytest.approx(-math.log(1e-15))
    assert log_score([1.0, 0.0], [1, 0]) == pytest.approx(-math.log1p(-1e-15), abs=1e-14)
    assert log_score([0.0], [1], eps=0.0) == math.inf
    assert log_score([0.0, 1.0], [0, 1], eps=0.0) == 0.0
    assert log_score([0.8], [0.8]) == pytest.approx(-(0.8 * math.log(0.8) + 0.2 * math.log(0.2)))
    with pytest.raises(ValueError, match="eps"):
        log_score([0.5], [1], eps=0.6)


def test_calibration_in_the_large_closed_form():
    r = calibration_in_the_large([0.2, 0.4], [1, 0])
    assert r.citl == pytest.approx(0.3 - 0.5)
    assert r.citl_squared == pytest.approx(0.04)
    assert r.n == 2 and r.mean_outcome == 0.5
    # two items: z is not reported (its normal approximation has nothing to stand on)
    assert math.isnan(r.spiegelhalter_z) and "1.3 effective items" in r.spiegelhalter_reason
    # the same pair ten times: n_eff = 13.2, skewness .38, so z is reported in closed form
    r = calibration_in_the_large([0.2, 0.4] * 10, [1, 0] * 10)
    assert r.spiegelhalter_reason is None
    assert r.spiegelhalter_z == pytest.approx(10 * 0.40 / math.sqrt(10 * 0.0672))
    assert r.spiegelhalter_p == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(
        abs(r.spiegelhalter_z) / math.sqrt(2)))))
    sz = spiegelhalter_z([0.2, 0.4] * 10, [1, 0] * 10)
    assert sz.n_eff == pytest.approx((10 * 0.0672) ** 2 / (10 * (0.0576**2 + 0.0096**2)))
    assert sz.skewness == pytest.approx(10 * (0.6**3 * 0.16 * 0.6 + 0.2**3 * 0.24 * 0.2)
                                        / (10 * 0.0672) ** 1.5)


def test_spiegelhalter_undefined_and_weight_scale_invariant():
    r = calibration_in_the_large([0.5, 0.5, 0.0, 1.0], [1, 0, 0, 1])
    assert math.isnan(r.spiegelhalter_z) and math.isnan(r.spiegelhalter_p)
    assert r.spiegelhalter_reason == "its variance is 0 (every forecast is 0, 0.5 or 1)"
    assert r.citl == 0.0
    p, y = [0.2, 0.4, 0.6, 0.7] * 10, [0, 1, 1, 0] * 10
    w = np.tile([1.0, 2.0, 0.5, 3.0], 10)
    a = calibration_in_the_large(p, y, weights=w)
    b = calibration_in_the_large(p, y, weights=7 * w)
    assert np.isfinite(a.spiegelhalter_z)
    assert a.spiegelhalter_z == pytest.approx(b.spiegelhalter_z)
    assert a.citl == pytest.approx(b.citl)


def _z_many(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spiegelhalter's z of each row of ``y`` (reps, n) at forecasts ``p`` (the formula)."""
    c = 1.0 - 2.0 * p
    return ((y - p) * c).sum(axis=1) / math.sqrt(float(np.sum(c * c * p * (1 - p))))


def _rejection_rate(p, truth, *, reps: int, seed: int) -> float:
    """Share of seeded draws y ~ Bernoulli(truth) where the core's z rejects at 5 %."""
    rng = np.random.default_rng(seed)
    p, truth = np.asarray(p, float), np.asarray(truth, float)
    y = (rng.random((reps, p.size)) < truth).astype(float)
    z = _z_many(p, y)
    for i in range(5):  # the vectorised formula is the core's statistic (where it reports one)
        got = spiegelhalter_z(p, y[i])
        assert got.z == pytest.approx(z[i], rel=1e-10) if got.reason is None else \
            math.isnan(got.z)
    return float(np.mean(np.abs(z) > 1.96))


def test_spiegelhalter_has_no_power_against_a_shift_of_calibration_in_the_large():
    """Issue 18: forecasts {.2, .8} whose true rates are .1 higher (CITL −.1): z rejects at its
    nominal 5 % (the two halves' misses cancel), though calibration in the large is off."""
    p = np.tile([0.2, 0.8], 1000)
    rate = _rejection_rate(p, p + 0.1, reps=2000, seed=181)
    assert 0.03 <= rate <= 0.07  # 2,000 draws: SE .005
    y = (np.random.default_rng(0).random(p.size) < p + 0.1).astype(float)
    assert calibration_in_the_large(p, y).citl == pytest.approx(-0.1, abs=0.03)


def test_spiegelhalter_rejects_overconfidence_that_is_calibrated_in_the_large():
    """Issue 18: forecasts {.1, .9} whose true rates are {.3, .7}: CITL 0, z rejects always."""
    p = np.tile([0.1, 0.9], 1000)
    truth = np.tile([0.3, 0.7], 1000)
    assert _rejection_rate(p, truth, reps=2000, seed=182) >= 0.99
    y = (np.random.default_rng(0).random(p.size) < truth).astype(float)
    assert calibration_in_the_large(p, y).citl == pytest.approx(0.0, abs=0.03)


_SIZE_CASES = {  # forecasts → is z reported (the small-sample rule)?
    "uniform 0.05-0.95, n = 40": (np.linspace(0.05, 0.95, 40), True),
    "uniform 0-1, n = 30": (np.linspace(0.0, 1.0, 30), True),
    "{.2, .8}, n = 10": (np.tile([0.2, 0.8], 5), True),
    "0.7-0.99, n = 40": (np.linspace(0.7, 0.99, 40), True),
    "Beta(5, 1.5) quantiles, n = 259": (np.quantile(
        np.random.default_rng(5).beta(5, 1.5, 100_000), np.linspace(0.01, 0.99, 259)), True),
    "{.2, .8}, n = 2": (np.array([0.2, 0.8]), False),
    "0.9-0.999, n = 10": (np.linspace(0.9, 0.999, 10), False),
    "0.05 twenty times": (np.full(20, 0.05), False),
    "0.01-0.1, n = 30": (np.linspace(0.01, 0.1, 30), False),
    "one 0.02 among 0.45-0.55, n = 20": (np.r_[np.linspace(0.45, 0.55, 19), 0.02], False),
}


@pytest.mark.parametrize("name", list(_SIZE_CASES))
def test_spiegelhalter_small_sample_rule_keeps_its_size(name):
    """Seeded size check under calibration (y ~ Bernoulli(p)): where z is reported, it rejects
    about 5 % of the time; the cases the rule leaves out are the ones whose normal
    approximation is off or that the rule cannot vouch for."""
    p, reported = _SIZE_CASES[name]
    sz = spiegelhalter_z(p, (p > 0.5).astype(float))
    assert (sz.reason is None) == reported, sz.reason
    rate = _rejection_rate(p, p, reps=20_000, seed=183)  # SE .0015 at .05
    if reported:
        assert 0.025 <= rate <= 0.075, rate
    else:
        assert math.isnan(sz.z) and sz.reason
    if name in ("0.9-0.999, n = 10", "0.05 twenty times"):
        assert rate > 0.075  # what the rule prevents: a 5 % test that rejects more often


def test_spiegelhalter_reasons_name_the_threshold():
    assert spiegelhalter_reason(9.9, 0.0) == (
        f"too few items carry its variance (9.9 effective items, need "
        f"{SPIEGELHALTER_MIN_ITEMS:g})")
    assert "skewness -0.60, at most 0.5" in spiegelhalter_reason(50.0, -0.6)
    assert "too skewed" in spiegelhalter_reason(50.0, float("inf"))
    assert spiegelhalter_reason(10.0, 0.5) is None
    assert "not calibration in the large" in SPIEGELHALTER_NOTE
    assert "1 − 2p" in SPIEGELHALTER_NOTE and "CITL" in SPIEGELHALTER_NOTE


def test_the_log_score_clip_is_stated_with_its_value():
    assert LOG_SCORE_EPS == 1e-15
    cost = log_score([0.0], [1])
    assert cost == pytest.approx(-math.log(LOG_SCORE_EPS)) and round(cost, 1) == 34.5
    assert "[1e-15, 1 − 1e-15]" in LOG_SCORE_NOTE and f"{cost:.1f} nats" in LOG_SCORE_NOTE
    assert "not infinity" in LOG_SCORE_NOTE
    assert "1e-15" in log_score.__doc__ and "34.5" in log_score.__doc__


def test_auroc_ties_half_and_weights():
    assert auroc([0.1, 0.4, 0.4, 0.8], [0, 0, 1, 1]) == pytest.approx(0.875)
    assert auroc([0.5, 0.5], [0, 1]) == 0.5
    assert auroc([0.9, 0.1], [0, 1]) == 0.0
    assert auroc([-3.0, 10.0], [0, 1]) == 1.0  # scores need not be probabilities
    assert math.isnan(auroc([0.2, 0.3], [1, 1]))
    s, y = [0.1, 0.4, 0.35, 0.8, 0.4], [0, 0, 1, 1, 1]
    assert auroc(s, y, weights=[2, 1, 1, 3, 1]) == pytest.approx(
        auroc(s + [0.1, 0.8, 0.8], y + [0, 1, 1]))


@settings(max_examples=60, deadline=None)
@given(forecasts(min_size=2))
def test_auroc_equals_pairwise_definition(data):
    p, y, w = data
    w = np.ones(p.size) if w is None else w
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        assert math.isnan(auroc(p, y, weights=w))
        return
    gt = (p[pos][:, None] > p[neg][None, :]) + 0.5 * (p[pos][:, None] == p[neg][None, :])
    want = (w[pos][:, None] * w[neg][None, :] * gt).sum() / (w[pos].sum() * w[neg].sum())
    assert auroc(p, y, weights=w) == pytest.approx(want, abs=1e-12)


# --- reliability curve --------------------------------------------------------------------------

def test_reliability_curve_p_one_in_last_bin_and_histogram_semantics():
    p = np.array([0.0, 0.05, 0.1, 0.5, 0.95, 1.0, 1.0])
    y = np.array([0, 0, 1, 1, 1, 1, 0])
    c = reliability_curve(p, y, n_bins=10)
    assert c.count.tolist() == np.histogram(p, bins=np.linspace(0, 1, 11))[0].tolist()
    assert c.count[-1] == 3  # 0.95, 1.0, 1.0: the last bin is closed
    assert c.count[0] == 2 and c.count[1] == 1  # p = 0.1 opens bin [0.1, 0.2)
    assert c.count[5] == 1  # 0.5 is the left edge of [0.5, 0.6)
    assert c.count.sum() == p.size
    assert c.observed_frequency[-1] == pytest.approx(2 / 3)
    assert c.mean_forecast[-1] == pytest.approx((0.95 + 2.0) / 3)


def test_reliability_curve_empty_bins_flagged_nan():
    c = reliability_curve([0.05, 0.95], [0, 1], n_bins=4)
    assert c.empty.tolist() == [False, True, True, False]
    assert np.isnan(c.mean_forecast[1:3]).all() and np.isnan(c.low[1:3]).all()
    assert np.isnan(c.high[1:3]).all() and np.isnan(c.observed_frequency[1:3]).all()
    assert c.n == 2 and c.total_weight == 2.0
    assert binned_ece(c) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        c.count[0] = 5  # read-only


def test_reliability_curve_exact_intervals():
    p = np.array([0.1, 0.15, 0.12, 0.8, 0.85, 0.9, 0.95])
    y = np.array([0, 1, 0, 1, 1, 0, 1])
    c = reliability_curve(p, y, n_bins=2, level=0.9)
    lo, hi = exact_interval([1, 3], [3, 4], level=0.9)
    np.testing.assert_allclose(c.low, lo)
    np.testing.assert_allclose(c.high, hi)
    # equal weights within a bin: Kish n_eff = count, same interval
    cw = reliability_curve(p, y, n_bins=2, level=0.9, weights=[2, 2, 2, 5, 5, 5, 5])
    np.testing.assert_allclose(cw.low, lo)
    np.testing.assert_allclose(cw.n_eff, [3, 4])
    # unequal weights: Kish effective size (Σw)²/Σw²
    cu = reliability_curve(p, y, n_bins=2, weights=[1, 3, 1, 1, 1, 1, 1])
    assert cu.n_eff[0] == pytest.approx(25 / 11)
    lo0, hi0 = exact_interval(3 / 5 * 25 / 11, 25 / 11)
    assert (cu.low[0], cu.high[0]) == pytest.approx((float(lo0), float(hi0)))
    assert cu.observed_frequency[0] == pytest.approx(3 / 5)


def test_reliability_curve_quantile_strategy():
    p = np.arange(1, 101) / 100
    y = (p > 0.5).astype(float)
    c = reliability_curve(p, y, n_bins=4, strategy="quantile")
    assert c.edges[0] == 0.0 and c.edges[-1] == 1.0
    np.testing.assert_allclose(c.edges[1:-1], np.quantile(p, [0.25, 0.5, 0.75]))
    assert c.count.tolist() == [25, 25, 25, 25]
    # heavy ties: duplicate edges make empty zero-width bins, still n_bins bins
    pt = np.r_[np.zeros(30), np.full(10, 0.7)]
    ct = reliability_curve(pt, np.zeros(40), n_bins=4, strategy="quantile")
    assert ct.n_bins == 4 and ct.count.sum() == 40 and ct.empty.any()
    with pytest.raises(ValueError, match="strategy"):
        bin_edges(p, strategy="kmeans")
    with pytest.raises(ValueError, match="n_bins"):
        bin_edges(p, n_bins=0)


def test_ece_mce_rms_closed_form_and_curve_or_arrays():
    p = np.array([0.1, 0.1, 0.9, 0.9])
    y = np.array([0, 1, 1, 1])
    # bins: [0, .5) p̄ .1 ȳ .5 ; [.5, 1] p̄ .9 ȳ 1
    assert binned_ece(p, y, n_bins=2) == pytest.approx(0.5 * 0.4 + 0.5 * 0.1)
    assert mce(p, y, n_bins=2) == pytest.approx(0.4)
    assert rms_calibration_error(p, y, n_bins=2) == pytest.approx(math.sqrt(0.5 * 0.16 + 0.005))
    c = reliability_curve(p, y, n_bins=2)
    assert isinstance(c, ReliabilityCurve)
    assert binned_ece(c) == binned_ece(p, y, n_bins=2)
    assert mce(c) == mce(p, y, n_bins=2)
    with pytest.raises(ValueError, match="not both"):
        binned_ece(c, y)
    with pytest.raises(ValueError, match="y is required"):
        mce(p)
    # constant forecast: every binned error equals |p − ȳ|
    assert binned_ece([0.3] * 4, [1, 0, 0, 0]) == pytest.approx(0.05)
    # a single class
    assert binned_ece([0.2, 0.4], [0, 0], n_bins=1) == pytest.approx(0.3)


@settings(max_examples=100, deadline=None)
@given(forecasts(), st.integers(1, 15), st.sampled_from(["uniform", "quantile"]))
def test_ece_bounds_citl_and_rms_squared_is_rel(data, n_bins, strategy):
    p, y, w = data
    ece = binned_ece(p, y, n_bins=n_bins, strategy=strategy, weights=w)
    citl = calibration_in_the_large(p, y, weights=w).citl
    assert ece >= abs(citl) - 1e-12  # seed 003 §4
    assert mce(p, y, n_bins=n_bins, strategy=strategy, weights=w) >= ece - 1e-12
    rms = rms_calibration_error(p, y, n_bins=n_bins, strategy=strategy, weights=w)
    rel = murphy_decomposition(p, y, n_bins=n_bins, strategy=strategy, weights=w).rel
    assert rms**2 == pytest.approx(rel, abs=1e-12)


# --- Murphy decomposition -----------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(forecasts(), st.integers(1, 20), st.sampled_from(["uniform", "quantile"]))
def test_murphy_identity_exact(data, n_bins, strategy):
    p, y, w = data
    d = murphy_decomposition(p, y, n_bins=n_bins, strategy=strategy, weights=w)
    assert d.brier == pytest.approx(brier_score(p, y, weights=w), abs=1e-15)
    assert abs(d.rel - d.res + d.unc + d.wbv - 2 * d.wbc - d.brier) <= 1e-12
    assert d.rel >= 0 and d.res >= 0 and d.wbv >= 0 and d.unc >= 0


def test_murphy_constant_within_bins_has_no_residual():
    p = [0.15, 0.15, 0.15, 0.85, 0.85]
    y = [0, 1, 0, 1, 1]
    d = murphy_decomposition(p, y, n_bins=10)
    assert d.wbv == 0.0 and d.wbc == 0.0 and d.residual == 0.0
    assert d.unc == pytest.approx(0.6 * 0.4)
    assert d.rel == pytest.approx(0.6 * (0.15 - 1 / 3) ** 2 + 0.4 * 0.15**2)
    assert d.res == pytest.approx(0.6 * (1 / 3 - 0.6) ** 2 + 0.4 * 0.4**2)


def test_murphy_within_bin_terms_closed_form():
    d = murphy_decomposition([0.2, 0.4], [0, 1], n_bins=1)
    assert d.wbv == pytest.approx(0.01)
    assert d.wbc == pytest.approx(0.5 * (-0.1 * -0.5 + 0.1 * 0.5))
    assert d.rel == pytest.approx(0.04) and d.res == 0.0 and d.unc == 0.25


# --- consistency bands --------------------------------------------------------------------------

def test_consistency_bands_deterministic_and_sensible():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    a = consistency_bands(p, n_bins=10, n_boot=300, seed=42)
    b = consistency_bands(p, n_bins=10, n_boot=300, seed=42)
    c = consistency_bands(p, n_bins=10, n_boot=300, seed=43)
    for field in ("low", "high", "mean_forecast", "edges"):
        assert np.array_equal(getattr(a, field), getattr(b, field), equal_nan=True)
        assert getattr(a, field).tobytes() == getattr(b, field).tobytes()
    assert not np.array_equal(a.low, c.low)
    assert (a.low <= a.mean_forecast + 1e-9).all() and (a.high >= a.mean_forecast - 1e-9).all()
    assert a.level == 0.9 and a.n_boot == 300
    g = consistency_bands(p, n_boot=300, seed=np.random.default_rng(42))
    assert np.array_equal(g.low, a.low)


def test_consistency_bands_degenerate_forecasts():
    band = consistency_bands([0.0, 0.0, 1.0, 1.0], n_bins=4, n_boot=50, seed=0)
    assert band.low[0] == band.high[0] == 0.0
    assert band.low[-1] == band.high[-1] == 1.0
    assert band.empty.tolist() == [False, True, True, False]
    assert np.isnan(band.low[1])
    with pytest.raises(ValueError, match="n_boot"):
        consistency_bands([0.5], n_boot=0, seed=0)


# --- CORP ---------------------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(forecasts())
def test_corp_identity_and_signs(data):
    p, y, w = data
    d = corp_decomposition(p, y, weights=w)
    assert abs(d.mcb - d.dsc + d.unc - d.score) <= 1e-12
    assert d.mcb >= 0 and d.dsc >= 0
    assert d.score == pytest.approx(brier_score(p, y, weights=w), abs=1e-15)
    curve = corp_curve(p, y, weights=w)
    assert np.all(np.diff(curve.calibrated) >= -1e-15)
    assert np.all(np.diff(curve.forecast) > 0)
    # tied forecasts share one recalibrated value
    for v in np.unique(p):
        assert np.ptp(curve.recalibrated[p == v]) == 0.0


def test_corp_tie_pooling_pitfall():
    # Two tied forecasts with outcomes 0 then 1: PAV on p-sorted data WITHOUT pooling keeps the
    # order and fits r = (0, 1) — a perfect "recalibration" (MCB 0.25) no monotone function of
    # p can produce. Pooling gives r = (.5, .5) and MCB 0.
    p, y = np.array([0.5, 0.5]), np.array([0.0, 1.0])
    naive = isotonic_regression(y).x
    naive_mcb = np.mean((p - y) ** 2) - np.mean((naive - y) ** 2)
    assert naive_mcb == pytest.approx(0.25)
    d = corp_decomposition(p, y)
    assert d.mcb == 0.0 and d.dsc == 0.0 and d.unc == 0.25
    assert corp_curve(p, y).recalibrated.tolist() == [0.5, 0.5]


def test_corp_tie_pooling_many_ties_matches_r_ordering():
    # calibration-notes §6.1: few distinct forecasts, stable order inflates MCB.
    rng = np.random.default_rng(7)
    p = rng.integers(0, 11, 3000) / 10
    y = (rng.uniform(size=p.size) < p).astype(float)
    order = np.argsort(p, kind="stable")
    naive = isotonic_regression(y[order]).x
    naive_mcb = np.mean((p[order] - y[order]) ** 2) - np.mean((naive - y[order]) ** 2)
    # R reliabilitydiag ordering: p ascending, then y descending
    rorder = np.lexsort((-y, p))
    rfit = isotonic_regression(y[rorder]).x
    r_mcb = np.mean((p[rorder] - y[rorder]) ** 2) - np.mean((rfit - y[rorder]) ** 2)
    d = corp_decomposition(p, y)
    assert d.mcb == pytest.approx(r_mcb, abs=1e-12)
    assert naive_mcb > 2 * d.mcb


def test_corp_closed_forms():
    d = corp_decomposition([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    assert (d.score, d.mcb, d.dsc, d.unc) == pytest.approx((0.19, 0.065, 0.0625, 0.1875))
    # constant forecast: no discrimination, MCB = (p − ȳ)²
    c = corp_decomposition([0.3] * 5, [1, 0, 0, 1, 1])
    assert c.dsc == 0.0 and c.mcb == pytest.approx((0.3 - 0.6) ** 2)
    # a single class: UNC = DSC = 0
    s = corp_decomposition([0.1, 0.6, 0.9], [1, 1, 1])
    assert s.unc == 0.0 and s.dsc == 0.0 and s.mcb == pytest.approx(s.score)
    # n = 1 and p ∈ {0, 1}
    one = corp_decomposition([1.0], [1])
    assert (one.score, one.mcb, one.dsc, one.unc) == (0.0, 0.0, 0.0, 0.0)
    # weights act as replication
    w = corp_decomposition([0.2, 0.7, 0.7], [0, 1, 0], weights=[2, 1, 3])
    r = corp_decomposition([0.2, 0.2, 0.7, 0.7, 0.7, 0.7], [0, 0, 1, 0, 0, 0])
    assert (w.mcb, w.dsc, w.unc) == pytest.approx((r.mcb, r.dsc, r.unc), abs=1e-15)


def test_corp_consistency_band_deterministic():
    rng = np.random.default_rng(3)
    p = np.round(rng.uniform(size=200), 2)
    a = corp_consistency_band(p, n_boot=50, seed=11)
    b = corp_consistency_band(p, n_boot=50, seed=11)
    assert a.low.tobytes() == b.low.tobytes() and a.high.tobytes() == b.high.tobytes()
    assert np.all(a.low <= a.high)
    np.testing.assert_array_equal(a.forecast, np.unique(p))
    assert not np.array_equal(a.low, corp_consistency_band(p, n_boot=50, seed=12).low)


# --- smooth ECE ---------------------------------------------------------------------------------

def test_smooth_ece_edge_cases():
    v, s = smooth_ece([0.0, 0.0, 1.0, 1.0], [0, 0, 1, 1])
    assert v == pytest.approx(0.0, abs=1e-12) and 0 < s <= 1
    v, s = smooth_ece([1.0, 1.0, 1.0], [0, 0, 0])  # maximal miscalibration: σ* stays at 1
    assert v > 0.99 and s == 1.0
    v1, s1 = smooth_ece([0.3, 0.7], [0, 1], sigma=0.1)
    assert s1 == 0.1 and 0 <= v1 <= 1
    for bad in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="sigma"):
            smooth_ece([0.3], [1], sigma=bad)
    with pytest.raises(ValueError, match="binary"):
        smooth_ece([0.3], [0.5])


def test_smooth_ece_sigma_is_fixed_point_on_bisection_grid():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p**1.5).astype(float)
    v, s = smooth_ece(p, y)
    assert (s * 1024) == int(s * 1024)  # dyadic grid of the 10-step bisection
    # σ* brackets the fixed point: smECE_σ ≤ σ at σ*, > at σ* − 1/1024
    assert smooth_ece(p, y, sigma=s)[0] <= s
    assert smooth_ece(p, y, sigma=s - 1 / 1024)[0] > s - 1 / 1024
    assert v == smooth_ece(p, y, sigma=s)[0]


def test_smooth_reliability_shape():
    rng = np.random.default_rng(9)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(float)
    c = smooth_reliability(p, y, sigma=0.1, n_grid=50)
    assert c.grid.shape == c.frequency.shape == c.density.shape == (50,)
    assert c.sigma == 0.1
    assert np.all(c.density > 0)
    assert np.trapezoid(c.density, c.grid) == pytest.approx(1.0, abs=0.05)
    with pytest.raises(ValueError, match="n_grid"):
        smooth_reliability(p, y, sigma=0.1, n_grid=1)


# --- recalibration ------------------------------------------------------------------------------

def test_platt_separable_data_stays_finite():
    s = np.array([-3.0, -2.0, -1.5, 1.0, 2.0, 4.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    m = platt_fit(s, y)
    assert isinstance(m, PlattMap)
    assert math.isfinite(m.a) and math.isfinite(m.b) and m.a > 0
    pr = m.predict(s)
    assert np.all((pr > 0) & (pr < 1))
    # targets are (N₊+1)/(N₊+2) = 0.8 and 1/(N₋+2) = 0.2: far from 0/1
    assert pr.max() < 0.95 and pr.min() > 0.05


def test_platt_targets_optimality_and_edge_cases():
    rng = np.random.default_rng(2)
    y = (rng.uniform(size=200) < 0.4).astype(float)
    s = rng.normal(y, 1.0)
    m = platt_fit(s, y)
    t = np.where(y == 1, (y.sum() + 1) / (y.sum() + 2), 1 / ((1 - y).sum() + 2))
    resid = m.predict(s) - t
    assert abs(resid.sum()) < 1e-9 and abs((resid * s).sum()) < 1e-9  # score equations
    # constant scores: slope 0, intercept = logit(mean target)
    c = platt_fit([0.4, 0.4, 0.4], [1, 0, 1])
    tbar = (2 * 3 / 4 + 1 / 3) / 3
    assert c.a == 0.0 and c.b == pytest.approx(math.log(tbar / (1 - tbar)))
    # a single class stays finite
    one = platt_fit([0.1, 0.5, 0.9], [1, 1, 1])
    assert math.isfinite(one.a) and math.isfinite(one.b)
    assert isinstance(m.predict(0.3), float)
    # weights act as replication
    mw = platt_fit([0.1, 0.9, 0.5], [0, 1, 1], weights=[2, 1, 1])
    mr = platt_fit([0.1, 0.1, 0.9, 0.5], [0, 0, 1, 1])
    assert (mw.a, mw.b) == pytest.approx((mr.a, mr.b), abs=1e-9)


def test_isotonic_fit_interpolates_and_clips():
    m = isotonic_fit([0.1, 0.3, 0.3, 0.9], [0, 1, 0, 1])
    assert isinstance(m, IsotonicMap)
    assert m.knots.tolist() == [0.1, 0.3, 0.9]
    assert m.values.tolist() == [0.0, 0.5, 1.0]
    assert m.predict([-5.0, 0.1, 0.2, 0.6, 0.9, 7.0]).tolist() == pytest.approx(
        [0.0, 0.0, 0.25, 0.75, 1.0, 1.0])
    assert m.predict(0.3) == 0.5
    rng = np.random.default_rng(4)
    p = np.round(rng.uniform(size=100), 1)
    y = (rng.uniform(size=100) < p).astype(float)
    np.testing.assert_array_equal(isotonic_fit(p, y).predict(p), corp_curve(p, y).recalibrated)
    const = isotonic_fit([0.4, 0.4], [1, 0])
    assert const.predict([0.0, 1.0]).tolist() == [0.5, 0.5]


def test_smooth_consistency_band_is_seeded_and_brackets_calibration():
    from core.calibration.smooth import smooth_consistency_band

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 400)
    a = smooth_consistency_band(p, sigma=0.08, n_boot=40, seed=3)
    b = smooth_consistency_band(p, sigma=0.08, n_boot=40, seed=3)
    np.testing.assert_array_equal(a.low, b.low)
    assert (a.low <= a.high).all()
    inside = (a.grid >= 0.2) & (a.grid <= 0.8)  # away from the reflected edges
    on_diag = (a.low[inside] <= a.grid[inside] + 0.05) & (a.grid[inside] - 0.05 <= a.high[inside])
    assert on_diag.mean() > 0.9


@pytest.mark.parametrize("sigma", [0.08, 0.03])
def test_smooth_consistency_band_equals_one_curve_per_resample(sigma):
    """The batched band (one FFT convolution of all resamples) against the loop it replaced."""
    from core.calibration.smooth import smooth_consistency_band, smooth_reliability

    p = np.random.default_rng(1).beta(2, 3, 400)
    band = smooth_consistency_band(p, sigma=sigma, n_boot=30, seed=5, n_grid=120,
                                   simultaneous=False)
    rng = np.random.default_rng(5)
    fits = np.array([smooth_reliability(p, (rng.random(p.size) < p).astype(float),
                                        sigma=sigma, n_grid=120).frequency
                     for _ in range(30)])
    lo, hi = np.quantile(fits, [0.05, 0.95], axis=0)
    assert np.allclose(band.low, lo, atol=1e-10) and np.allclose(band.high, hi, atol=1e-10)
