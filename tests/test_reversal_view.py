"""The Ranking reversal page's result objects, in the app's one gap convention Δ = R(B) − R(A)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.calibration.label_source import label_source_decomposition
from core.calibration.pilot import frame_arrays
from core.calibration.reversal_view import bridge_view, flip_pairs, reversal_view
from core.calibration.scenario import ScenarioConfig, generate_scenario
from core.glossary import SIGN_CONVENTION


def brier(c, y, w=None):
    return float(np.average((np.asarray(c, float) - np.asarray(y, float)) ** 2, weights=w))


@pytest.fixture(scope="module")
def scenario():
    return generate_scenario(ScenarioConfig())


@pytest.fixture(scope="module")
def view(scenario):
    f = scenario
    return reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("native", "EG"),
                         unit="beliefs", weights=f["weight"], matched=f["matched"],
                         in_reference=f["in_reference"])


def test_gaps_are_the_comparators_risk_minus_the_rules(scenario, view):
    f, w = scenario, scenario["weight"].to_numpy(float)
    assert view.gap_y == pytest.approx(brier(f["eg"], f["y"], w) - brier(f["native"], f["y"], w),
                                       abs=1e-12)
    assert view.gap_z == pytest.approx(brier(f["eg"], f["z"], w) - brier(f["native"], f["z"], w),
                                       abs=1e-12)
    assert view.gap_y + view.t_omit + view.t_fp == pytest.approx(view.gap_z, abs=1e-12)


def test_the_scenario_has_seed_003_table_4_signs_and_the_pilot_pages_delta(scenario, view):
    """Seed 003 Table 4: Δ_Y > 0 (native better under truth), T_omit < 0, T_fp > 0; the pilot
    machinery's Δ_Y on the same frame is the same number (one convention, two code paths)."""
    assert view.gap_y > 0 > view.gap_z and view.reverses
    assert view.t_omit < 0 < view.t_fp
    assert frame_arrays(scenario).delta_y == pytest.approx(view.gap_y, abs=1e-12)
    assert frame_arrays(scenario).delta_z == pytest.approx(view.gap_z, abs=1e-12)
    assert view.pick(view.gap_y) == "native" and view.pick(view.gap_z) == "EG"
    assert "Δ = R(B) − R(A)" in SIGN_CONVENTION and "Above 0, rule A is better" in SIGN_CONVENTION


@pytest.mark.parametrize("pi", [0.0, 0.2, 0.29, 0.5, 0.78, 0.95, 1.0])
def test_the_verdict_reads_the_measured_curve_exactly_on_the_slider_grid(scenario, view, pi):
    from core.calibration.label_source import brier_gap_curve

    f = scenario
    direct = brier_gap_curve(f["eg"], f["native"], f["y"], prevalences=[pi],
                             weights=f["weight"], mode="flip").gap[0]
    v = view.at(pi)
    assert v.gap_measured == pytest.approx(direct, abs=1e-12)
    a, b = view.a_mean, view.b_mean
    assert v.gap_exact == pytest.approx((b - a) * (b + a - 2 * pi), abs=1e-12)
    assert v.by_criterion == ("native" if v.gap_exact > 0 else "EG")
    assert v.side == (">" if pi > view.midpoint else "<")


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan")])
def test_the_verdict_refuses_a_prevalence_outside_0_1(view, bad):
    with pytest.raises(ValueError, match="prevalence"):
        view.at(bad)


def test_protocols_name_the_rules_and_carry_the_seed_columns(view):
    t = view.protocols
    assert list(t.columns) == ["protocol", "items scored", "Brier native", "Brier EG", "selects",
                               "paper's frame", "paper selects"]
    assert len(t) == 4 and set(t["selects"]) <= {"native", "EG", "tie", "—"}
    assert t.iloc[0]["selects"] == "EG" and t.iloc[-1]["selects"] == "native"


def test_protocol_flags_come_in_pairs(scenario):
    f = scenario
    with pytest.raises(ValueError, match="both matched and in_reference"):
        reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("a", "b"), unit="x",
                      matched=f["matched"])


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**31 - 1), st.integers(min_value=8, max_value=60))
def test_swapping_the_rules_negates_every_gap_and_keeps_the_rest(seed, n):
    """Invariant of the module docstring, on random rules and labels with both classes."""
    rng = np.random.default_rng(seed)
    ca, cb = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    y = np.r_[0, 1, rng.integers(0, 2, n - 2)].astype(float)
    z = y * rng.integers(0, 2, n)
    v1 = reversal_view(ca, cb, y, z, names=("A", "B"), unit="x")
    v2 = reversal_view(cb, ca, y, z, names=("B", "A"), unit="x")
    for f in ("gap_y", "gap_z", "t_omit", "t_fp"):
        assert getattr(v1, f) == pytest.approx(-getattr(v2, f), abs=1e-12)
    assert v1.midpoint == pytest.approx(v2.midpoint) and v1.reverses == v2.reverses
    lib = label_source_decomposition(ca, cb, y, z)
    assert v1.gap_y == pytest.approx(-lib.gap_y, abs=1e-12)
    np.testing.assert_allclose(v1.measured, -v2.measured, atol=1e-12)


def test_bridge_view_negates_gaps_and_counts_families():
    analysis = pd.DataFrame({
        "group": ["all", "f1", "f2"], "label": ["All", "F1", "F2"], "n": [10, 5, 5],
        "prevalence_y": [0.8, 0.9, 0.7], "prevalence_z": [0.4, 0.3, 0.65],
        "mean_a": [0.7, 0.7, 0.7], "mean_b": [0.5, 0.5, 0.5],
        "crossover": [0.6, 0.6, 0.6], "gap_y": [-0.1, -0.2, 0.05], "gap_z": [0.1, 0.2, 0.02],
        "t_omit": [0.15, 0.3, -0.01], "t_fp": [0.05, 0.1, -0.02],
        "reverses": [True, True, False]})
    b = bridge_view(analysis)
    np.testing.assert_allclose(b.table["gap_y"], [0.1, 0.2, -0.05])
    np.testing.assert_allclose(b.table["t_omit"], [-0.15, -0.3, 0.01])
    assert list(b.table["predicted"]) == [True, True, False]
    assert (b.n_families, b.n_reverse, b.n_predicted_right) == (2, 1, 2)
    assert analysis["gap_y"].iloc[0] == -0.1  # the input is not modified
    with pytest.raises(ValueError, match="no rows"):
        bridge_view(analysis.iloc[:0])


def test_flip_pairs_swaps_interval_ends():
    pairs = pd.DataFrame({"rule_a": ["x"], "rule_b": ["y"], "gap_z": [0.1], "gap_z_lo": [0.02],
                          "gap_z_hi": [0.3], "gap_y": [-0.2], "gap_y_lo": [-0.4],
                          "gap_y_hi": [0.05], "t_omit": [0.25], "t_fp": [0.05]})
    t = flip_pairs(pairs)
    assert t.loc[0, ["gap_z", "gap_z_lo", "gap_z_hi"]].tolist() == [-0.1, -0.3, -0.02]
    assert t.loc[0, ["gap_y", "gap_y_lo", "gap_y_hi"]].tolist() == [0.2, -0.05, 0.4]
    assert t.loc[0, "t_omit"] == -0.25 and pairs.loc[0, "gap_z"] == 0.1


# ---------------------------------------------------------------- issue 18.6 and 18.7
@pytest.mark.parametrize("pi", np.round(np.arange(0.0, 1.0001, 0.01), 2))
def test_cards_sentence_and_caption_come_from_one_verdict(view, pi):
    """At every slider value the caption's "holds"/"fails" is the cards' agreement."""
    v = view.at(pi)
    assert v.shortcut_holds == (v.by_criterion == v.measured)
    assert ("holds" in v.text) == v.shortcut_holds and ("fails" in v.text) != v.shortcut_holds
    assert v.by_criterion in v.text and v.measured in v.text
    assert f"{pi:.2f}" in v.text


def test_the_issues_case_058_no_longer_contradicts_itself(view):
    """Seed 003's default scenario at π = .58: the shortcut selects EG, the rules native."""
    v = view.at(0.58)
    c = view.curve
    # measured .574 < .58 < midpoint .582 < label-free .585: the old caption said "holds"
    assert c.crossover < 0.58 < view.midpoint < c.label_free_crossover
    assert c.shortcut_holds(0.58) and v.label_free_agrees
    assert (v.by_criterion, v.measured) == ("EG", "native") and not v.shortcut_holds
    assert "fails" in v.text and f"{c.crossover:.3f}" in v.text


def _view_with(q_star, *, gap_z=0.1, t_omit=0.05, residual=-2.2e-16):
    from dataclasses import replace as dc_replace

    f = generate_scenario(ScenarioConfig())
    v = reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("native", "EG"), unit="x")
    return dc_replace(v, q_star=q_star, gap_z=gap_z, t_omit=t_omit, identity_residual=residual)


@pytest.mark.parametrize("q, share, says", [
    (0.0, True, "0.0% of the omitted truths"),
    (0.37, True, "37.0% of the omitted truths"),
    (1.0, True, "100.0% of the omitted truths"),
    (-1.611, False, "q* = -1.611, a negative share"),
    (2.0, False, "more than all of them"),
    (float("nan"), False, "T_omit = 0"),
])
def test_q_star_is_shown_as_a_share_only_when_it_is_one(q, share, says):
    v = _view_with(q)
    assert v.q_star_is_share is share
    assert says in v.q_star_text


def test_the_identity_sentence_prints_no_rounding_noise(view):
    assert "e-1" not in view.identity_text and "exact" in view.identity_text
    assert abs(view.identity_residual) < 1e-9
    assert "1.00e-03" in _view_with(0.5, residual=1e-3).identity_text


def test_q_star_of_the_issue_is_negative_with_these_rates():
    """Issue 18.6: omission .1 and false matches .14 give a negative q* (the page said
    "relabelling this share")."""
    from dataclasses import replace as dc_replace

    f = generate_scenario(dc_replace(ScenarioConfig(), omission_rate=0.1,
                                     false_match_rate=0.14))
    v = reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("native", "EG"), unit="x",
                      weights=f["weight"])
    assert v.q_star < 0 and not v.q_star_is_share and "negative share" in v.q_star_text
