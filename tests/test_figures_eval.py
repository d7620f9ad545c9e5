"""The evaluation figure builders map the right arrays to the right axes, with their markers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.evaluation.metrics import risk_coverage
from core.figures.lab import grid_figure, lab_leaderboard_figure, source_shift_figure
from core.figures.leaderboard import (
    difficulty_heatmap,
    forest_figure,
    slices_figure,
    source_reliability_figure,
    type_heatmap,
)
from core.figures.selective import SWEEP_COLORS, risk_coverage_figure, threshold_figure
from core.figures.style import METHOD_COLORS, PAPER_COLOR, SOURCE_COLORS, method_color
from core.testbed.questions import SOURCE_LABELS, SOURCES


def arr(values) -> np.ndarray:
    return np.asarray(values, dtype=float)


def axis_titles(fig: go.Figure) -> tuple[str, str]:
    return fig.layout.xaxis.title.text, fig.layout.yaxis.title.text


@pytest.fixture
def main():
    return pd.DataFrame({
        "method": ["majority_vote", "dsnbf", "dawid_skene"],
        "label": ["MV", "DSNBF", "DS"],
        "accuracy": [69.0, 82.5, 70.5], "ci_low": [68.0, 81.5, 69.0],
        "ci_high": [70.5, 83.0, 71.0], "paper": [69.5, 82.3, np.nan],
        "regenerated": [69.1, 81.8, np.nan],
    })


def test_method_colours_are_distinct_and_skip_variants_share_them():
    assert len(set(METHOD_COLORS.values())) == len(METHOD_COLORS)
    assert method_color("dsnbf_skip") == METHOD_COLORS["dsnbf"]


def test_forest_plot_sorts_by_accuracy_and_draws_the_intervals(main):
    fig = forest_figure(main)
    paper, regen, dots = fig.data  # the dots are drawn last, over the reference ticks
    np.testing.assert_allclose(arr(dots.x), [69.0, 70.5, 82.5])  # ascending: best on top
    assert list(dots.y) == ["Majority Vote (≡ ArgRAG equal-weight)", "Dawid–Skene (no labels)",
                            "DSNBF"]
    np.testing.assert_allclose(arr(dots.error_x.array), [1.5, 0.5, 0.5])
    np.testing.assert_allclose(arr(dots.error_x.arrayminus), [1.0, 1.5, 1.0])
    assert list(dots.marker.color) == [METHOD_COLORS[m] for m in
                                       ("majority_vote", "dawid_skene", "dsnbf")]
    # the paper's values only where the paper reports one (not Dawid–Skene)
    np.testing.assert_allclose(arr(paper.x), [69.5, 82.3])
    assert list(paper.y) == ["Majority Vote (≡ ArgRAG equal-weight)", "DSNBF"]
    assert paper.marker.color == PAPER_COLOR and "paper" in paper.name
    np.testing.assert_allclose(arr(regen.x), [69.1, 81.8])
    assert list(fig.layout.yaxis.categoryarray) == list(dots.y)  # rows follow the accuracy
    assert all(axis_titles(fig))


def test_forest_plot_keeps_only_the_chosen_methods(main):
    fig = forest_figure(main, methods=["dsnbf"])
    assert list(fig.data[-1].y) == ["DSNBF"]


def test_type_heatmap_maps_types_to_rows_and_methods_to_columns():
    per_type = pd.DataFrame({"type": ["A Arbitration", "B Identity"], "dsnbf": [87.0, 96.0],
                             "nbf": [86.0, 95.0], "dsnbf_paper": [87.5, 96.8]})
    fig = type_heatmap(per_type, ["nbf", "dsnbf", "bcf"])
    hm = fig.data[0]
    assert list(hm.x) == ["NBF", "DSNBF"] and list(hm.y) == ["A Arbitration", "B Identity"]
    np.testing.assert_allclose(np.asarray(hm.z, float), [[86.0, 87.0], [95.0, 96.0]])
    assert list(hm.customdata[0][1]) == ["DSNBF", " (paper 87.5 %)"]  # full name, paper
    assert hm.customdata[0][0][1] == ""                                 # none for NBF
    assert (hm.zmin, hm.zmax) == (80, 100)  # from the lowest value's decade
    assert all(axis_titles(fig))


def test_difficulty_heatmap_orders_the_classes():
    long = pd.DataFrame({"method": ["dsnbf"] * 3 + ["ssb"] * 3,
                         "difficulty": ["stated_vs_revealed", "stable", "temporal_shift"] * 2,
                         "accuracy": [70.0, 90.0, 80.0, 60.0, 85.0, 75.0]})
    hm = difficulty_heatmap(long, ["ssb", "dsnbf"]).data[0]
    assert list(hm.y) == ["stable", "temporal shift", "stated vs revealed"]
    np.testing.assert_allclose(np.asarray(hm.z, float), [[85, 90], [75, 80], [60, 70]])


def test_slices_figure_draws_both_slices_and_the_paper_markers():
    slices = pd.DataFrame({
        "method": ["dsnbf", "majority_vote", "source_reachability"],
        "gt_present": [85.7, 74.0, 100.0], "gt_absent": [36.0, 2.0, 0.0],
        "n_present": [8000] * 3, "n_absent": [640] * 3,
        "paper_present": [85.7, np.nan, np.nan], "paper_absent": [36.0, np.nan, np.nan]})
    fig = slices_figure(slices)
    present, absent, p_present, p_absent = fig.data
    assert list(present.x) == ["DSNBF", "Majority<br>Vote"]
    np.testing.assert_allclose(arr(present.y), [85.7, 74.0])
    np.testing.assert_allclose(arr(absent.y), [36.0, 2.0])
    assert "8,000" in present.name and "640" in absent.name
    assert list(p_present.x) == ["DSNBF"] and p_present.offsetgroup == "present"
    np.testing.assert_allclose(arr(p_absent.y), [36.0])
    assert p_absent.offsetgroup == "absent" and p_present.marker.color == PAPER_COLOR
    assert all(axis_titles(fig))


def summary_frame(scale: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"source": list(SOURCES), "coverage": np.linspace(.5, .9, 5) * scale,
                         "conflict_rate": np.linspace(.1, .5, 5) * scale,
                         "accuracy": np.linspace(.4, .8, 5) * scale,
                         "acc_low": np.linspace(.35, .75, 5) * scale,
                         "acc_high": np.linspace(.45, .85, 5) * scale})


def test_source_reliability_figure_uses_wilson_bars_and_source_colours():
    fig = source_reliability_figure(summary_frame(), scale=100)
    acc, cov = fig.data
    np.testing.assert_allclose(arr(acc.x), [40, 50, 60, 70, 80])
    np.testing.assert_allclose(arr(acc.error_x.array), [5] * 5)
    np.testing.assert_allclose(arr(cov.x), [50, 60, 70, 80, 90])
    assert list(acc.y) == [SOURCE_LABELS[s] for s in SOURCES]
    assert list(acc.marker.color) == [SOURCE_COLORS[s] for s in SOURCES]
    assert fig.layout.shapes[0].x0 == 50  # the 50 % reference
    assert all(axis_titles(fig))


def board(acc: list[float]) -> pd.DataFrame:
    methods = ["dsnbf", "majority_vote", "ssb"]
    a = np.asarray(acc)
    return pd.DataFrame({"method": methods, "accuracy": a, "ci_low": a - 2, "ci_high": a + 1})


def test_lab_leaderboard_draws_nominal_segments_and_the_variant():
    fig = lab_leaderboard_figure(board([80, 60, 75]), board([82, 69, 78]))
    segments, nominal, variant = fig.data
    assert list(variant.y) == ["Majority Vote (≡ ArgRAG equal-weight)", "SSB", "DSNBF"]
    np.testing.assert_allclose(arr(variant.x), [60, 75, 80])
    np.testing.assert_allclose(arr(nominal.x), [69, 78, 82])  # aligned with the variant rows
    np.testing.assert_allclose(arr(variant.error_x.arrayminus), [2, 2, 2])
    assert list(segments.x)[:3] == [69, 60, None]
    assert "nominal" in nominal.name
    assert all(axis_titles(fig))
    alone = lab_leaderboard_figure(board([80, 60, 75]))
    assert len(alone.data) == 1


def test_source_shift_figure_compares_accuracy_and_conflict():
    nominal, variant = summary_frame(100), summary_frame(100)
    variant["accuracy"] -= 10
    fig = source_shift_figure(nominal, variant)
    assert len(fig.data) == 6
    nom_acc, var_acc = fig.data[1], fig.data[2]
    np.testing.assert_allclose(arr(nom_acc.x) - arr(var_acc.x), [10] * 5)
    assert var_acc.error_x.array is not None
    assert fig.data[5].xaxis == "x2"  # the conflict-rate panel
    assert fig.layout.xaxis.title.text and fig.layout.xaxis2.title.text
    assert fig.layout.yaxis.title.text == "Source"


def test_grid_figure_has_one_panel_per_cell_and_nominal_ticks():
    rows = []
    for b in (0.5, 1.0, 2.0):
        for d in (0.5, 1.0, 2.0):
            rows.append({"bias": b, "dropout": d, "dsnbf": 80 + b, "nbf": 79 - d,
                         "majority_vote": 70 - 5 * b})
    mean = pd.DataFrame(rows)
    fig = grid_figure(mean, ["dsnbf", "nbf", "majority_vote"])
    bars = [t for t in fig.data if t.type == "bar"]
    ticks = [t for t in fig.data if t.type == "scatter"]
    assert len(bars) == 9 and len(ticks) == 9
    np.testing.assert_allclose(arr(bars[8].x), [82.0, 77.0, 60.0])  # bias 2 × dropout 2
    np.testing.assert_allclose(arr(ticks[0].x), [81.0, 78.0, 65.0])  # the nominal cell
    assert list(bars[0].y) == ["DSNBF", "NBF", "MV"]
    assert bars[0].marker.color[0] == METHOD_COLORS["dsnbf"]
    titles = [a.text for a in fig.layout.annotations]
    assert "bias 0.5 × dropout 2" in titles
    assert fig.layout.xaxis7.title.text == "Accuracy (%)"


def test_risk_coverage_figure_plots_the_curve_points_and_forced_line():
    rng = np.random.default_rng(0)
    conf = rng.random(2000)
    correct = rng.random(2000) < conf
    rc = risk_coverage(conf, correct)
    fig = risk_coverage_figure(rc, name="DSNBF+SKIP", max_points=100,
                               points=[{"coverage": 0.8, "risk": 0.1, "name": "θ"}])
    curve, point = fig.data
    assert len(curve.x) <= 100 and curve.x[-1] == pytest.approx(100.0)
    assert curve.y[-1] == pytest.approx(100 * rc.risk[-1])
    assert f"{rc.aurc:.3f}" in curve.name
    assert (point.x[0], point.y[0]) == (pytest.approx(80.0), pytest.approx(10.0))
    assert fig.layout.shapes[0].y0 == pytest.approx(100 * rc.risk[-1])  # forced risk
    assert all(axis_titles(fig))


def test_threshold_figure_marks_theta_calibrated_and_forced():
    sweep = pd.DataFrame({"theta": [0.0, 0.5, 1.0], "coverage": [100.0, 80.0, 40.0],
                          "selective_accuracy": [82.0, 88.0, 95.0], "f05": [83.0, 86.0, 70.0]})
    fig = threshold_figure(sweep, theta=0.5, calibrated=[0.3, 0.31, 0.3], label="margin θ",
                           forced=82.0)
    assert [t.name for t in fig.data] == ["coverage", "selective accuracy",
                                          "F0.5 (macro-derived)"]
    assert fig.data[0].line.color == SWEEP_COLORS["coverage"]
    np.testing.assert_allclose(arr(fig.data[2].y), [83.0, 86.0, 70.0])
    xs = sorted(s.x0 for s in fig.layout.shapes if s.xref == "x")
    assert xs == [0.3, 0.31, 0.5]  # two calibrated lines and θ
    forced = [s for s in fig.layout.shapes if s.xref == "x domain"]
    assert forced and forced[0].y0 == 82.0
    assert fig.layout.xaxis.title.text == "Threshold (margin θ)"
    assert any("calibrated" in a.text for a in fig.layout.annotations)
