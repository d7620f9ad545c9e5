"""Figures of the "Your data" page (``core.figures.fusion``): what each trace holds, checked
against the view it was drawn from, and that every colour follows the palette's rules."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from core.figures.fusion import (
    FUSION_COLORS,
    board_figure,
    dependence_figure,
    fusion_reliability_figure,
    what_if_figure,
)
from core.figures.palette import ACCURACY_SCALE, MIN_DELTA_E, delta_e76, is_line_color
from core.fusion.builtin import load_builtin
from core.fusion.views import (
    METHODS,
    board_view,
    copy_view,
    fit_fusion,
    item_claims,
    pair_view,
    reliability_data,
    what_if_view,
)
from tests.test_palette_contrast import colour_problems


@pytest.fixture(scope="module")
def flight():
    return fit_fusion(load_builtin("flight"))


def _valid(fig: go.Figure) -> None:
    go.Figure(fig.to_dict())  # the dict-built figure is valid Plotly JSON
    assert colour_problems(fig) == []


def test_every_resolver_has_its_own_readable_colour():
    assert set(FUSION_COLORS) == {m.key for m in METHODS}
    colours = list(FUSION_COLORS.values())
    assert all(is_line_color(c) for c in colours)
    assert min(delta_e76(a, b) for i, a in enumerate(colours) for b in colours[i + 1:]) \
        >= MIN_DELTA_E


def test_the_board_draws_each_score_with_its_interval_best_on_top(flight):
    board = board_view(flight, flight.methods, coverage=0.7)
    fig = board_figure(board)
    _valid(fig)
    dots, legend, diamonds = fig.data
    t = board.table.sort_values("accuracy", kind="stable")
    assert list(dots.y) == t["name"].tolist()
    assert np.allclose(dots.x, t["accuracy"] * 100)
    assert np.allclose(np.asarray(dots.x) + np.asarray(dots.error_x.array), t["high"] * 100)
    assert np.allclose(np.asarray(dots.x) - np.asarray(dots.error_x.arrayminus), t["low"] * 100)
    assert list(dots.marker.color) == [FUSION_COLORS[k] for k in t["method"]]
    assert not dots.showlegend and legend.x == (None,) and legend.legendgroup == "all"
    assert fig.layout.yaxis.categoryarray[-1] == board.row(board.best)["name"]
    at = board.at_coverage.set_index("method").reindex(t["method"])
    assert np.allclose(diamonds.x, at["accuracy"] * 100)
    assert "70 %" in diamonds.name
    lo = min(np.nanmin(t["low"]), np.nanmin(at["low"])) * 100
    assert fig.layout.xaxis.range[0] <= lo and fig.layout.xaxis.range[1] > 100


def test_without_truth_the_board_has_no_coverage_trace(flight):
    fit = fit_fusion(flight.claims.replace(truth=None), methods=["mv", "accu"])
    fig = board_figure(board_view(fit, fit.methods))
    _valid(fig)
    assert len(fig.data) == 2 and "agreement with majority vote" in fig.data[0].name


@pytest.mark.parametrize("which", ["false", "beyond"])
def test_the_dependence_matrix_outlines_each_copy_group(flight, which):
    copies = copy_view(flight)
    pv = pair_view(flight, copies=copies, max_sources=20)
    fig = dependence_figure(pv, which)
    _valid(fig)
    heat = fig.data[0]
    raw = pv.false_same if which == "false" else pv.beyond
    assert np.allclose(np.asarray(heat.z, float), np.clip(raw, 0, 1), equal_nan=True)
    assert [tuple(s) for s in heat.colorscale] == [tuple(s) for s in ACCURACY_SCALE]
    assert heat.zmax >= np.nanmax(np.clip(raw, 0, 1))
    shown = [g for g in dict.fromkeys(pv.groups) if g]
    assert len(fig.layout.shapes) == len(shown)
    first = fig.layout.shapes[0]
    size = pv.groups.count(shown[0])
    assert (first.x0, first.x1) == (-0.5, size - 0.5)
    assert list(heat.y)[0].endswith(f"({shown[0]})")
    with pytest.raises(ValueError, match="which"):
        dependence_figure(pv, "both")


def test_the_what_if_bars_are_the_posterior_before_and_after(flight):
    c = flight.claims
    head = copy_view(flight).headline
    item = head.examples[0]
    drop = [s for s in head.members if s in set(item_claims(c, item)["source"])]
    view = what_if_view(c, "mv", item, drop=drop)
    fig = what_if_figure(view)
    _valid(fig)
    before, after, star = fig.data
    t = view.table.set_index("value")
    assert np.allclose(before.x, t.loc[list(before.y), "before"])
    assert np.allclose(after.x, t.loc[list(after.y), "after"])
    assert star.y == (view.truth,)
    assert star.x[0] > max(t.loc[view.truth, ["before", "after"]])


def test_the_reliability_diagram_is_the_binned_one_of_the_chosen_resolvers(flight):
    data = reliability_data(flight, flight.methods)
    fig = fusion_reliability_figure(data, ["mv", "accu_depen"], n_bins=8)
    _valid(fig)
    curves = [t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"]
    assert [t.name for t in curves] == ["majority vote", "ACCU + DEPEN"]
    counts = [t for t in fig.data if t.type == "bar"]
    assert [int(np.sum(t.y)) for t in counts] == [data.confidence[k].size
                                                  for k in ("mv", "accu_depen")]
    assert len(counts[0].x) == 8
    assert fig.layout.yaxis.title.text == "Share of answers right"
    with pytest.raises(ValueError, match="no resolver"):
        fusion_reliability_figure(data, ["nope"])
