"""Label-source analysis (seed 003 §3 Eq. 1–2, §5.2–5.3 Eq. 6, Table 3; label-source-notes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.calibration.label_source import (
    brier_gap_constant,
    brier_gap_curve,
    crossover_prevalence,
    debiased_risk,
    estimate_pi_from_pilot,
    label_source_decomposition,
    reference_only_platt,
    scoring_protocols,
)


@st.composite
def _frames(draw):
    n = draw(st.integers(1, 40))
    unit = st.floats(0.0, 1.0, allow_nan=False)
    c_a = draw(st.lists(unit, min_size=n, max_size=n))
    c_b = draw(st.lists(unit, min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    z = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    w = draw(st.lists(st.floats(0.01, 100.0), min_size=n, max_size=n))
    return (np.array(c_a), np.array(c_b), np.array(y), np.array(z), np.array(w))


@settings(max_examples=200, deadline=None)
@given(_frames())
def test_identity_is_exact(data):
    c_a, c_b, y, z, w = data
    r = label_source_decomposition(c_a, c_b, y, z, weights=w)
    assert abs((r.gap_z - r.gap_y) - (r.t_omit + r.t_fp)) <= 1e-12
    assert abs(r.identity_residual) <= 1e-12
    direct = 2 * np.sum(w * (c_a - c_b) * (y - z)) / np.sum(w)
    assert abs((r.gap_z - r.gap_y) - direct) <= 1e-12
    assert r.reverses == (r.gap_y * r.gap_z < 0)


def test_decomposition_hand_example():
    # two items: one omitted truth, one false-positive match
    r = label_source_decomposition([0.9, 0.6], [0.4, 0.2], [1, 0], [0, 1])
    assert r.t_omit == pytest.approx(2 * 0.5 / 2)
    assert r.t_fp == pytest.approx(-2 * 0.4 / 2)
    assert r.risk_y_a == pytest.approx((0.01 + 0.36) / 2)
    assert r.risk_z_b == pytest.approx((0.16 + 0.64) / 2)
    assert r.omit_share == pytest.approx(0.5) and r.fp_share == pytest.approx(0.5)
    assert r.q_star == pytest.approx(r.gap_z / r.t_omit)


def test_unweighted_equals_unit_weights():
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    y, z = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
    r1 = label_source_decomposition(a, b, y, z)
    r3 = label_source_decomposition(a, b, y, z, weights=np.full(30, 3.0))
    for k, v in r1.__dict__.items():
        assert getattr(r3, k) == pytest.approx(v, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("a,b", [(0.767, 0.392), (0.9, 0.1), (0.3, 0.6), (0.55, 0.5),
                                 (1.0, 0.0), (0.2, 0.8)])
def test_crossover_exact_for_constant_rules(a, b):
    pi_star = crossover_prevalence(a, b)
    assert pi_star == pytest.approx((a + b) / 2)
    assert brier_gap_constant(a, b, pi_star) == pytest.approx(0.0, abs=1e-15)
    y = np.array([1, 1, 1, 0, 0, 1, 0, 1])
    grid = np.linspace(0, 1, 21)
    for mode in ("reweight", "flip"):
        c = brier_gap_curve(np.full(8, a), np.full(8, b), y, prevalences=grid, mode=mode)
        assert c.crossover == pytest.approx(pi_star, abs=1e-12)
        assert c.deviation == pytest.approx(0.0, abs=1e-12)
        expect = [brier_gap_constant(a, b, p) for p in grid]
        np.testing.assert_allclose(c.gap, expect, atol=1e-12)


def test_seed_numbers_for_constant_rules():
    assert crossover_prevalence(0.767, 0.392) == pytest.approx(0.5795)
    # constant rules at .30 vs .392 under pi = .783: the probe (.392) wins by .080 (the seed's
    # .070 is for a location-shifted, non-constant native rule: see test_scenario)
    assert brier_gap_constant(0.30, 0.392, 0.783) == pytest.approx(0.080408)
    # sign: native (a) beats EG (b) above the crossover, loses below it
    assert brier_gap_constant(0.767, 0.392, 0.783) < 0 < brier_gap_constant(0.767, 0.392, 0.295)


def test_gap_curve_matches_actual_gap_at_observed_prevalence():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    a = np.clip(0.6 + 0.2 * y + 0.1 * rng.standard_normal(200), 0, 1)
    b = np.clip(0.4 + 0.05 * y + 0.1 * rng.standard_normal(200), 0, 1)
    w = rng.uniform(0.5, 2, 200)
    p = np.average(y, weights=w)
    actual = np.average((a - y) ** 2 - (b - y) ** 2, weights=w)
    for mode in ("reweight", "flip"):
        c = brier_gap_curve(a, b, y, prevalences=[p], weights=w, mode=mode)
        assert c.gap[0] == pytest.approx(actual, abs=1e-12)
        assert c.observed_prevalence == pytest.approx(p)
        # a discriminating rule moves the crossover away from the midpoint of the means
        assert abs(c.deviation) > 1e-3
        full = brier_gap_curve(a, b, y, prevalences=np.linspace(0, 1, 101), weights=w, mode=mode)
        if np.isfinite(full.crossover):
            g = brier_gap_curve(a, b, y, prevalences=[full.crossover], weights=w, mode=mode)
            assert g.gap[0] == pytest.approx(0.0, abs=1e-12)
    assert set(c.to_frame().columns) == {"prevalence", "gap"}


def test_gap_curve_rejects_bad_input():
    with pytest.raises(ValueError, match="both classes"):
        brier_gap_curve([0.5, 0.6], [0.4, 0.4], [1, 1], prevalences=[0.5])
    with pytest.raises(ValueError, match="mode"):
        brier_gap_curve([0.5, 0.6], [0.4, 0.4], [1, 0], prevalences=[0.5], mode="shift")


def test_debiased_risk_closed_form():
    c = np.array([0.9, 0.6, 0.2])
    z = np.array([1, 0, 0])
    pi = 0.7
    expect = ((0.9 - 1) ** 2 + (pi * 0.4**2 + 0.3 * 0.36) + (pi * 0.8**2 + 0.3 * 0.04)) / 3
    assert debiased_risk(c, z, pi) == pytest.approx(expect, abs=1e-15)
    # pi = 0 recovers the raw reference risk
    assert debiased_risk(c, z, 0.0) == pytest.approx(np.mean((c - z) ** 2))
    # weights, and per-item pi equal to the truth recovers R_Y when matches are all true
    y = np.array([1, 1, 0])
    w = np.array([1.0, 2.0, 3.0])
    assert debiased_risk(c, z, np.where(z == 1, 0.5, y), weights=w) == pytest.approx(
        np.average((c - y) ** 2, weights=w))
    with pytest.raises(ValueError, match="pi"):
        debiased_risk(c, z, 1.5)


def test_estimate_pi_census_and_design_weights():
    y = np.array([1, 0, 1, 1, 0, 1])
    z = np.array([0, 0, 0, 1, 1, 0])
    w = np.array([1.0, 2.0, 1.0, 1.0, 1.0, 4.0])
    est = estimate_pi_from_pilot(y, z, np.ones(6, bool), np.ones(6), weights=w)
    assert est.pi == pytest.approx((1 + 1 + 4) / (1 + 2 + 1 + 4))
    assert est.n_unmatched == 4
    # a sample with unequal inclusion probabilities is re-weighted by w / rho
    sampled = np.array([True, True, False, False, False, True])
    rho = np.array([0.5, 0.25, 0.5, 0.5, 0.5, 1.0])
    est = estimate_pi_from_pilot(np.where(sampled, y, np.nan), z, sampled, rho, weights=w)
    assert est.pi == pytest.approx((2 + 4) / (2 + 8 + 4))
    assert 0 <= est.lo <= est.pi <= est.hi <= 1
    with pytest.raises(ValueError, match="no unmatched"):
        estimate_pi_from_pilot(y, z, np.array([0, 0, 0, 1, 1, 0], bool), np.ones(6))


def test_four_protocols_hand_built():
    # A = confident rule, B = cautious rule
    c_a = np.array([0.9, 0.9, 0.9, 0.9, 0.8])
    c_b = np.array([0.3, 0.3, 0.3, 0.3, 0.3])
    y = np.array([1, 1, 1, 0, 1])
    z = np.array([1, 0, 0, 0, 0])
    matched = np.array([True, False, False, True, False])  # item 3: planted false, matched
    in_ref = np.array([True, True, False, True, False])  # item 1: matcher miss
    t = scoring_protocols(c_a, c_b, y, z, matched, in_ref)
    f = t.to_frame()
    assert list(f.protocol) == ["unmatched_as_false", "matched_only", "closed_world",
                                "adjudicated"]
    assert list(f.n) == [5, 2, 3, 5]
    uaf = t["unmatched_as_false"]
    assert uaf.brier_a == pytest.approx((0.01 + 0.81 + 0.81 + 0.81 + 0.64) / 5)
    assert uaf.brier_b == pytest.approx((0.49 + 0.09 * 4) / 5)
    assert uaf.selects == "B"
    mo = t["matched_only"]
    assert mo.brier_a == pytest.approx((0.01 + 0.81) / 2)
    assert mo.brier_b == pytest.approx((0.49 + 0.09) / 2)
    assert mo.selects == "B"
    cw = t["closed_world"]  # items 0, 1, 3 with their truth
    assert cw.brier_a == pytest.approx((0.01 + 0.01 + 0.81) / 3)
    assert cw.brier_b == pytest.approx((0.49 + 0.49 + 0.09) / 3)
    assert cw.selects == "A"
    adj = t["adjudicated"]
    assert adj.brier_a == pytest.approx((0.01 * 3 + 0.81 + 0.04) / 5)
    assert adj.selects == "A"
    # a custom reference verdict and weights are honoured
    t2 = scoring_protocols(c_a, c_b, y, z, matched, in_ref, weights=[1, 1, 1, 1, 2],
                           reference_label=[1, 0, 0, 0, 0])
    assert t2["closed_world"].brier_a == pytest.approx((0.01 + 0.81 + 0.81) / 3)
    assert t2["adjudicated"].weight == pytest.approx(6.0)
    with pytest.raises(KeyError):
        t["nope"]


def test_protocols_empty_frame_row():
    t = scoring_protocols([0.5], [0.4], [1], [0], [False], [False])
    assert t["matched_only"].selects == "none" and t["matched_only"].n == 0


def test_reference_only_platt_pulls_to_reference_prevalence():
    rng = np.random.default_rng(2)
    n = 400
    y = (rng.random(n) < 0.8).astype(int)
    z = y * (rng.random(n) < 0.35)
    c = np.clip(0.75 + 0.05 * y + 0.1 * rng.standard_normal(n), 0.01, 0.99)
    groups = np.arange(n) % 4
    r = reference_only_platt(c, z, y, groups=groups)
    assert r.mean_before == pytest.approx(np.mean(c))
    assert abs(r.mean_after - r.prevalence_z) < 0.05
    assert r.brier_z_after < r.brier_z_before
    assert r.truth_worsens and r.brier_y_after > r.brier_y_before
    assert len(r.maps) == 4 and not r.recalibrated.flags.writeable
    insample = reference_only_platt(c, z, y)
    assert len(insample.maps) == 1
    with pytest.raises(ValueError, match="two groups"):
        reference_only_platt(c, z, y, groups=np.zeros(n))


def test_input_validation():
    with pytest.raises(ValueError):
        label_source_decomposition([0.5, 1.2], [0.4, 0.4], [1, 0], [1, 0])
    with pytest.raises(ValueError):
        label_source_decomposition([0.5, 0.2], [0.4, 0.4], [1, 2], [1, 0])
    with pytest.raises(ValueError):
        label_source_decomposition([0.5, 0.2], [0.4], [1, 0], [1, 0])
    with pytest.raises(ValueError):
        label_source_decomposition([0.5, 0.2], [0.4, 0.1], [1, 0], [1, 0], weights=[1, 0])


@pytest.mark.parametrize("a, b, var_a, var_b, expected", [
    (0.767, 0.392, 0.0, 0.0, 0.5795),          # constant rules: the midpoint
    (0.7, 0.4, 0.09, 0.0, 0.70),               # issue 8: A ∈ {.4, 1}, B = .4
    (0.4, 0.7, 0.0, 0.09, 0.70),               # the same pair, named the other way round
    (0.6, 0.5, 0.02, 0.02, 0.55),              # equal spreads cancel
    (0.5, 0.5, 0.01, 0.0, float("nan")),       # equal means: the gap never changes sign
])
def test_crossover_prevalence_with_spreads(a, b, var_a, var_b, expected):
    from core.calibration.label_source import crossover_prevalence

    got = crossover_prevalence(a, b, var_a=var_a, var_b=var_b)
    assert got == pytest.approx(expected, abs=1e-4, nan_ok=True)


@pytest.mark.parametrize("args, match", [((1.5, -2.0), "in \\[0, 1\\]"),
                                         ((float("nan"), 0.3), "finite"),
                                         ((0.3, float("inf")), "finite")])
def test_crossover_prevalence_rejects_bad_means(args, match):
    from core.calibration.label_source import crossover_prevalence

    with pytest.raises(ValueError, match=match):
        crossover_prevalence(*args)
    with pytest.raises(ValueError, match="variances"):
        crossover_prevalence(0.5, 0.4, var_a=-0.1)


def test_spread_term_explains_the_crossover_of_independent_rules():
    """Issue 8's counterexample: measured .702 where the midpoint says .55."""
    from core.calibration.label_source import brier_gap_curve

    rng = np.random.default_rng(0)
    n = 200_000
    a = np.where(rng.random(n) < 0.5, 0.4, 1.0)
    b = np.full(n, 0.4)
    y = (rng.random(n) < 0.6).astype(float)
    for mode in ("reweight", "flip"):
        c = brier_gap_curve(a, b, y, prevalences=np.linspace(0, 1, 11), mode=mode)
        assert c.midpoint == pytest.approx(0.55, abs=0.002)
        assert c.label_free_crossover == pytest.approx(0.70, abs=0.002)
        assert c.crossover == pytest.approx(c.label_free_crossover, abs=0.005)  # no discrimination
        assert c.deviation == pytest.approx(c.spread_term + c.discrimination_term)
        assert not c.shortcut_holds(0.62) and c.shortcut_holds(0.8) and c.shortcut_holds(0.5)


def test_debiased_risk_is_biased_when_truth_depends_on_confidence_among_unmatched():
    """The docstring's assumption, computed: unbiased when Y ⟂ C | Z = 0, biased otherwise."""
    from scipy.special import expit

    from core.calibration.label_source import debiased_risk

    rng = np.random.default_rng(4)
    n = 200_000
    c = rng.uniform(0.05, 0.95, n)
    z = (rng.random(n) < 0.3).astype(float)
    truth_risk = lambda y: float(np.mean((c - y) ** 2))  # noqa: E731
    y_ind = np.where(z == 1, 1.0, (rng.random(n) < 0.6).astype(float))  # Y ⟂ C given Z = 0
    pi = float(y_ind[z == 0].mean())
    assert debiased_risk(c, z, pi) == pytest.approx(truth_risk(y_ind), abs=2e-3)
    y_dep = np.where(z == 1, 1.0, (rng.random(n) < expit(6 * (c - 0.5))).astype(float))
    pi = float(y_dep[z == 0].mean())
    bias = debiased_risk(c, z, pi) - truth_risk(y_dep)
    assert bias > 0.03  # over-charges the confident unmatched items
