"""The Reliability page's result objects: the smooth curve as drawn (label-free density,
sparse regions hidden) and the score view (core.calibration.score_view)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibration.paper import DSC_RANGE, TABLE2
from core.calibration.reliability_view import (
    MIN_NEARBY_FORECASTS,
    readable_smooth,
    reliability_view,
    rule_frame,
)
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario
from core.calibration.score_view import NUMBER_KEYS, bin_points, score_view
from core.calibration.smooth import forecast_bandwidth, smooth_reliability
from core.calibration.summary import score_summary
from core.figures.calibration import smooth_reliability_figure


@pytest.fixture(scope="module")
def scenario():
    return generate_scenario(DEFAULT_SCENARIO)


def frames_of(s: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {r: rule_frame(s[r], s["y"], s["z"], s["weight"]) for r in ("native", "eg")}


# ---------------------------------------------------------------- the density's bandwidth
@pytest.mark.parametrize("p, expected", [
    ([0.5] * 30, 0.01),                     # constant forecasts: the floor, not zero
    ([0.0, 1.0] * 3, 0.25),                 # two far values: the ceiling
])
def test_forecast_bandwidth_is_clipped(p, expected):
    assert forecast_bandwidth(p) == expected


def test_forecast_bandwidth_is_silvermans_rule_inside_the_clip():
    p = np.random.default_rng(3).uniform(0.3, 0.7, 400)
    sd, iqr = p.std(ddof=1), np.subtract(*np.percentile(p, [75, 25]))
    assert forecast_bandwidth(p) == pytest.approx(0.9 * min(sd, iqr / 1.34) * 400 ** -0.2)


@pytest.mark.parametrize("bad", [[], [0.2, np.nan]])
def test_forecast_bandwidth_refuses_empty_or_missing_forecasts(bad):
    with pytest.raises(ValueError, match="finite forecasts"):
        forecast_bandwidth(bad)


def test_smooth_reliability_keeps_relplots_density_unless_asked():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 300)
    y = (rng.random(300) < p).astype(float)
    plain = smooth_reliability(p, y, sigma=0.1)
    same = smooth_reliability(p, y, sigma=0.1, density_bandwidth=0.1)
    np.testing.assert_allclose(plain.density, same.density)
    assert plain.density_bandwidth is None and same.density_bandwidth == 0.1
    other = smooth_reliability(p, y, sigma=0.1, density_bandwidth=0.03)
    assert not np.allclose(other.density, plain.density)
    np.testing.assert_allclose(other.frequency, plain.frequency)  # the curve keeps σ
    with pytest.raises(ValueError, match="density_bandwidth must be a positive"):
        smooth_reliability(p, y, sigma=0.1, density_bandwidth=0.0)


# ---------------------------------------------------------------- Y and Z draw one density
@pytest.mark.parametrize("rule", ["native", "eg"])
def test_the_density_strip_is_the_same_under_y_and_z(scenario, rule):
    p = scenario[rule].to_numpy()
    cy, cz = readable_smooth(p, scenario["y"]), readable_smooth(p, scenario["z"])
    assert cy.sigma != cz.sigma  # σ* depends on the label (why relplot's density moved)
    np.testing.assert_array_equal(cy.density, cz.density)
    np.testing.assert_array_equal(np.isnan(cy.frequency), np.isnan(cz.frequency))
    relplot_y = smooth_reliability(p, scenario["y"]).density
    relplot_z = smooth_reliability(p, scenario["z"]).density
    assert np.abs(relplot_y - relplot_z).max() > 0.5  # the defect this view removes


def test_reliability_view_density_is_label_free(scenario):
    frames = frames_of(scenario)
    vy = reliability_view(frames, rules=("native", "eg"), label="y", n_bins=10,
                          strategy="uniform", bands=False)
    vz = reliability_view(frames, rules=("native", "eg"), label="z", n_bins=10,
                          strategy="uniform", bands=False)
    for r in ("native", "eg"):
        np.testing.assert_array_equal(vy.smooth[r].density, vz.smooth[r].density)
        assert not np.allclose(vy.smooth[r].frequency[~np.isnan(vy.smooth[r].frequency)],
                               vz.smooth[r].frequency[~np.isnan(vz.smooth[r].frequency)])


# ---------------------------------------------------------------- sparse regions hidden
@pytest.mark.parametrize("lo, hi", [(0.3, 0.9), (0.05, 0.4), (0.6, 0.99)])
def test_the_curve_is_hidden_far_from_every_forecast(lo, hi):
    rng = np.random.default_rng(1)
    p = rng.uniform(lo, hi, 250)
    y = (rng.random(250) < 0.9).astype(float)  # a label that would drag tails towards 1
    c = readable_smooth(p, y)
    h = forecast_bandwidth(p)
    far = (c.grid < lo - 4 * h) | (c.grid > hi + 4 * h)
    assert far.any() and np.isnan(c.frequency[far]).all()
    near = (c.grid > lo + h) & (c.grid < hi - h)
    assert not np.isnan(c.frequency[near]).any()
    nearby = p.size * c.density * 2 * h
    np.testing.assert_array_equal(np.isnan(c.frequency), nearby < MIN_NEARBY_FORECASTS)


def test_a_constant_forecast_draws_no_box():
    """A constant forecast's kernel estimate is ȳ near it and falls to 0 far away (the
    relplot ε): a step that drew a box over the whole chart. Now only the neighbourhood shows."""
    y = np.r_[np.ones(55), np.zeros(45)]  # nearly calibrated: σ* is small (NQ-open's const)
    c = readable_smooth(np.full(100, 0.5), y)
    shown = ~np.isnan(c.frequency)
    assert shown.any() and np.ptp(c.grid[shown]) < 0.15
    np.testing.assert_allclose(c.frequency[shown], 0.55, atol=0.01)
    raw = smooth_reliability(np.full(100, 0.5), y)
    assert raw.frequency.min() < 0.05 and raw.frequency.max() > 0.5  # the box


def test_the_dotted_sparse_trace_never_reaches_one_where_there_are_no_forecasts(scenario):
    p = scenario["native"].to_numpy()
    c = readable_smooth(p, scenario["y"])
    fig = smooth_reliability_figure({"native": c}, prevalence=0.78)
    dotted = next(t for t in fig.data if t.name == "native (sparse forecasts)")
    y = np.array([np.nan if v is None else v for v in dotted.y], float)
    x = np.asarray(dotted.x, float)
    below = x < p.min() - 2 * forecast_bandwidth(p)
    assert below.any() and np.isnan(y[below]).all()
    raw = smooth_reliability(p, scenario["y"])
    assert raw.frequency[below].max() > 0.9  # relplot's extrapolation ran towards 1 there


# ---------------------------------------------------------------- the score view
def scores_of(s: pd.DataFrame, label: str, *, n_bins: int = 10,
              strategy: str = "uniform") -> pd.DataFrame:
    return pd.DataFrame([{"rule": r, **score_summary(s[r], s[label], weights=s["weight"],
                                                     n_bins=n_bins, strategy=strategy)}
                         for r in ("native", "eg")])


NAMES = {"native": "native", "eg": "EG"}


def test_the_numbers_table_is_narrow_and_every_score_is_kept(scenario):
    sy, sz = scores_of(scenario, "y"), scores_of(scenario, "z")
    v = score_view(sy, sz, names=NAMES, label="z", n_bins=10, strategy="uniform")
    assert list(v.numbers.columns) == ["rule", "n", "E[Z]", "mean p", "Brier",
                                       "ECE (B = 10, uniform)", "CITL p̄ − ȳ", "AUROC", "MCB"]
    assert len(v.numbers.columns) == len(NUMBER_KEYS)
    assert v.numbers["rule"].tolist() == ["native", "EG"]
    assert {"log score", "smooth ECE", "Spiegelhalter z", "ICE", "DSC", "UNC", "WBC"} <= \
        set(v.all_scores.columns)
    assert not set(v.numbers.columns[2:]) & set(v.all_scores.columns)
    assert v.label_name == "Z" and v.other_name == "Y"


def test_headline_pairs_each_rule_with_the_other_label(scenario):
    sy, sz = scores_of(scenario, "y"), scores_of(scenario, "z")
    v = score_view(sy, sz, names=NAMES, label="y", n_bins=10, strategy="uniform")
    assert [h.name for h in v.headline] == ["native", "EG"]
    assert v.headline[0].ece == pytest.approx(sy["ece"][0])
    assert v.headline[0].ece_other == pytest.approx(sz["ece"][0])
    alone = score_view(sy, None, names=NAMES, label="y", n_bins=10, strategy="uniform")
    assert alone.headline[1].brier_other is None and alone.other_name is None
    assert set(alone.download["label"]) == {"Y"}
    assert set(v.download["label"]) == {"Y", "Z"} and len(v.download) == 4


def test_the_corp_terms_add_up(scenario):
    v = score_view(scores_of(scenario, "y"), None, names=NAMES, label="y", n_bins=10,
                   strategy="uniform")
    t = v.terms
    np.testing.assert_allclose(t["mcb"] - t["dsc"] + t["unc"], t["brier"], atol=1e-9)
    assert list(t.columns) == ["rule", "brier", "mcb", "dsc", "unc", "rel", "res", "wbv",
                               "wbc"]


@pytest.mark.parametrize("default, n_bins, strategy, both, shown", [
    (True, 10, "uniform", True, True), (False, 10, "uniform", True, False),
    (True, 8, "uniform", True, False), (True, 10, "quantile", True, False),
    (True, 10, "uniform", False, False)])
def test_table2_only_for_the_default_scenario_at_ten_uniform_bins(scenario, default, n_bins,
                                                                  strategy, both, shown):
    sy = scores_of(scenario, "y", n_bins=n_bins, strategy=strategy)
    sz = scores_of(scenario, "z", n_bins=n_bins, strategy=strategy) if both else None
    v = score_view(sy, sz, names=NAMES, label="y", n_bins=n_bins, strategy=strategy,
                   default_scenario=default)
    assert (v.table2 is not None) == shown
    if shown:
        assert len(v.table2) == len(TABLE2)
        row = v.table2.set_index(["rule", "label"]).loc[("EG", "Z")]
        assert row["Brier (paper)"] == TABLE2[("eg", "z")][0]
        assert row["Brier"] == pytest.approx(sz.set_index("rule").loc["eg", "brier"])
    assert v.dsc_range == DSC_RANGE


def test_score_view_refuses_mismatched_tables_and_labels(scenario):
    sy = scores_of(scenario, "y")
    with pytest.raises(ValueError, match="same rules in the same order"):
        score_view(sy, sy.iloc[::-1], names=NAMES, label="y", n_bins=10, strategy="uniform")
    with pytest.raises(ValueError, match="label must be 'y' or 'z'"):
        score_view(sy, None, names=NAMES, label="w", n_bins=10, strategy="uniform")


def test_score_notes_say_what_z_tests_where_it_is_left_out_and_the_log_clip(scenario):
    from core.calibration.scores import LOG_SCORE_NOTE, SPIEGELHALTER_NOTE

    v = score_view(scores_of(scenario, "y"), None, names=NAMES, label="y", n_bins=10,
                   strategy="uniform")
    assert v.score_notes == (SPIEGELHALTER_NOTE, LOG_SCORE_NOTE)  # z reported for both
    tiny = pd.DataFrame([{"rule": "native", **score_summary([0.2, 0.8, 0.6], [1, 1, 0])}])
    t = score_view(tiny, None, names=NAMES, label="y", n_bins=10, strategy="uniform")
    assert np.isnan(t.all_scores["Spiegelhalter z"][0])
    assert t.score_notes[1] == ("Spiegelhalter's z of native under Y is left out: too few "
                                "items carry its variance (2.3 effective items, need 10).")
    assert "not calibration in the large" in t.score_notes[0]


def test_bin_points_keep_the_non_empty_bins(scenario):
    view = reliability_view(frames_of(scenario), rules=("native", "eg"), label="y", n_bins=10,
                            strategy="uniform", bands=False)
    pts = bin_points(view, NAMES)
    assert set(pts["rule"]) == {"native", "EG"} and (pts["count"] > 0).all()
    for r, name in NAMES.items():
        c = view.binned[r]
        assert len(pts[pts["rule"] == name]) == int((np.asarray(c.count) > 0).sum())
    assert list(pts.columns) == ["rule", "bin", "count", "mean p", "observed", "low", "high"]
