"""Consistency bands hold whole calibrated curves (issue 18, point 3).

The Reliability page says what share of a calibrated forecaster's whole curves stay inside
each band. These seeded Monte-Carlo checks redraw calibrated outcomes y* ~ Bernoulli(p) with
their own seed, draw each curve with the public curve functions (not the bands' internal
resampling) and count the curves lying wholly inside: at least 90 %, where the former
pointwise bands held about half of the binned curves and one CORP curve in ten.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.calibration.bands import band_envelope, share_inside
from core.calibration.corp import BAND_KNOTS, corp_consistency_band, corp_curve
from core.calibration.reliability import consistency_bands, reliability_curve
from core.calibration.reliability_view import (
    BAND_CHECKS,
    BAND_LEVEL,
    BAND_RESAMPLES,
    MAX_BAND_ROWS,
    band_note,
    band_sample,
    readable_smooth,
    reliability_view,
    rule_frame,
)
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario
from core.calibration.smooth import dense_region, smooth_consistency_band, smooth_reliability

FRESH = 1000  # fresh calibrated curves per check: SE .0095 at a share of .9


@pytest.fixture(scope="module")
def native():
    s = generate_scenario(DEFAULT_SCENARIO)
    return s["native"].to_numpy(), s["weight"].to_numpy(), s["y"].to_numpy()


def fresh_outcomes(p: np.ndarray, reps: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((reps, p.size)) < p).astype(float)


# ---------------------------------------------------------------- the envelope
def test_envelope_of_parallel_curves_is_their_range_or_quantiles():
    d = np.arange(20.0)[:, None] * np.ones((1, 3))
    e = band_envelope(d, level=0.9)
    assert e.low.tolist() == [0.0] * 3 and e.high.tolist() == [19.0] * 3 and e.inside == 1.0
    pw = band_envelope(d, level=0.9, simultaneous=False)
    np.testing.assert_allclose(pw.low, np.quantile(d, 0.05, axis=0))
    np.testing.assert_allclose(pw.high, np.quantile(d, 0.95, axis=0))


@pytest.mark.parametrize("n, k, level", [(200, 1, 0.9), (400, 10, 0.9), (1000, 50, 0.8),
                                         (300, 5, 0.5)])
def test_envelope_invariants(n, k, level):
    """low ≤ high; at least ⌈t(n + 1)⌉ resampled curves inside (t = level + 2 SE); a
    higher level never narrows the band; one point: the band is (about) a quantile range."""
    d = np.random.default_rng(n + k).normal(size=(n, k))
    e = band_envelope(d, level=level)
    assert np.all(e.low <= e.high)
    t = min(1.0, level + 2 * math.sqrt(level * (1 - level) / n))
    assert share_inside(d, e.low, e.high) == e.inside >= math.ceil(t * (n + 1)) / n - 1e-12
    wider = band_envelope(d, level=min(0.99, level + 0.05))
    assert np.all(wider.low <= e.low) and np.all(wider.high >= e.high)
    assert e.pointwise_level >= level


@pytest.mark.parametrize("bad, match", [(np.ones(3), "2-D"), (np.full((3, 2), np.nan), "finite")])
def test_envelope_refuses_bad_draws(bad, match):
    with pytest.raises(ValueError, match=match):
        band_envelope(bad)


# ---------------------------------------------------------------- seed 003's default scenario
def test_binned_band_holds_ninety_percent_of_whole_calibrated_curves(native):
    p, w, _ = native
    band = consistency_bands(p, weights=w, n_boot=BAND_RESAMPLES["binned"], level=BAND_LEVEL,
                             seed=0, n_check=BAND_CHECKS["binned"])
    pointwise = consistency_bands(p, weights=w, n_boot=BAND_RESAMPLES["binned"], seed=0,
                                  simultaneous=False)
    freq = np.array([reliability_curve(p, ys, weights=w).observed_frequency
                     for ys in fresh_outcomes(p, FRESH, seed=2026)])
    inside = share_inside(freq, band.low, band.high)
    assert inside >= 0.90
    assert abs(inside - band.coverage) < 4 * math.sqrt(0.09 * (1 / FRESH + 1 / band.n_check))
    assert share_inside(freq, pointwise.low, pointwise.high) < 0.6  # the issue: about half
    assert band.simultaneous and band.pointwise_level > 0.95


def test_corp_band_holds_ninety_percent_of_whole_calibrated_curves(native):
    p, w, _ = native
    band = corp_consistency_band(p, weights=w, n_boot=BAND_RESAMPLES["corp"],
                                 level=BAND_LEVEL, seed=0, n_check=BAND_CHECKS["corp"])
    pointwise = corp_consistency_band(p, weights=w, n_boot=100, seed=0, simultaneous=False)
    fits = np.array([corp_curve(p, ys, weights=w).calibrated
                     for ys in fresh_outcomes(p, FRESH, seed=2027)])
    assert share_inside(fits, band.low, band.high) >= 0.90
    assert abs(share_inside(fits, band.low, band.high) - band.coverage) < 0.06
    assert share_inside(fits, pointwise.low, pointwise.high) < 0.2  # the issue: one in ten


def test_smooth_band_holds_ninety_percent_of_whole_calibrated_curves(native):
    p, w, y = native
    shown = readable_smooth(p, y)
    region = dense_region(shown.density)
    band = smooth_consistency_band(p, sigma=shown.sigma, n_boot=BAND_RESAMPLES["smooth"],
                                   level=BAND_LEVEL, seed=0, n_check=BAND_CHECKS["smooth"],
                                   region=region)
    assert np.isnan(band.low[~region]).all() and np.isfinite(band.low[region]).all()
    curves = np.array([smooth_reliability(p, ys, sigma=shown.sigma).frequency
                       for ys in fresh_outcomes(p, 500, seed=2028)])
    assert share_inside(curves, band.low, band.high) >= 0.90
    with pytest.raises(ValueError, match="region must be a bool mask"):
        smooth_consistency_band(p, sigma=0.1, n_boot=5, region=region[:10])


def test_corp_band_between_knots_holds_the_whole_curve():
    """More distinct forecasts than knots: the band is calibrated at the knots and extended as
    steps, and since CORP curves are non-decreasing a curve inside at the knots is inside
    everywhere; ≥ 90 % of fresh calibrated curves are inside at every distinct forecast."""
    p = np.random.default_rng(4).uniform(0.02, 0.98, 3000).round(5)
    band = corp_consistency_band(p, n_boot=1000, seed=0, n_check=300)
    assert np.unique(p).size > BAND_KNOTS
    assert np.all(np.diff(band.low) >= 0) and np.all(np.diff(band.high) >= 0)
    fits = np.array([corp_curve(p, ys).calibrated for ys in fresh_outcomes(p, 400, seed=7)])
    assert share_inside(fits, band.low, band.high) >= 0.90


# ---------------------------------------------------------------- the view and its sentence
def test_band_sample_is_seeded_and_bounded():
    a = band_sample(50_000)
    assert a.size == MAX_BAND_ROWS and np.array_equal(a, band_sample(50_000))
    assert np.all(np.diff(a) > 0) and band_sample(MAX_BAND_ROWS) is None
    with pytest.raises(ValueError, match="max_rows"):
        band_sample(10, max_rows=1)


def test_view_states_the_measured_coverage(native):
    p, w, y = native
    frames = {"native": rule_frame(p, y, None, w)}
    view = reliability_view(frames, rules=("native",), label="y", n_bins=10,
                            strategy="uniform", bands=True)
    assert not view.band_subsampled and view.band_rows == view.n_rows == p.size
    for b in (view.band, view.corp_band, view.smooth_band):
        assert b.simultaneous and b.coverage >= 0.9
    note = band_note(view, "native")
    for b in (view.band, view.corp_band, view.smooth_band):
        assert f"{100 * b.coverage:.0f} %" in note
    assert "holds a whole curve" in note and "not noise" not in note
    assert "subsample" not in note and "random" not in note
    off = reliability_view(frames, rules=("native",), label="y", n_bins=10,
                           strategy="uniform", bands=False)
    assert band_note(off, "native") == ""


def test_a_large_input_bands_a_subsample_and_says_so():
    rng = np.random.default_rng(9)
    n = MAX_BAND_ROWS + 5000
    p = rng.beta(4, 2, n).round(4)
    y = (rng.random(n) < p).astype(float)
    frames = {"p": rule_frame(p, y)}
    view = reliability_view(frames, rules=("p",), label="y", n_bins=10, strategy="quantile",
                            bands=True)
    assert view.band_subsampled and view.band_rows == MAX_BAND_ROWS and view.n_rows == n
    np.testing.assert_array_equal(view.band.edges, view.binned["p"].edges)  # the full edges
    note = band_note(view, "p")
    assert f"random {MAX_BAND_ROWS:,} of the {n:,} rows" in note
    # the subsample's band is wider than the full data's: it still holds ≥ 90 % of the full
    # data's calibrated binned curves
    curves = pd.DataFrame([reliability_curve(p, ys, n_bins=10, strategy="quantile")
                           .observed_frequency for ys in fresh_outcomes(p, 300, seed=11)])
    assert share_inside(curves.to_numpy(), view.band.low, view.band.high) >= 0.9
