"""Figures of the "Your data" page: the fusion board, the dependence matrix, the what-if and
each resolver's reliability diagram (issue 21 point 7).

Pure builders: result objects of :mod:`core.fusion.views` in, :class:`plotly.graph_objects.Figure`
out, assembled from dicts (:func:`core.figures.fast.figure`) since they are rebuilt whenever a
widget moves. Every resolver keeps one colour (:data:`FUSION_COLORS`, palette mid-tones that
read on the light and the dark theme); the dependence matrix uses the pale accuracy scale
(:data:`core.figures.palette.ACCURACY_SCALE`) with no text on its cells. The reliability
diagram is :func:`core.figures.calibration.binned_reliability_figure` of
:func:`core.calibration.reliability.reliability_curve` (exact per-bin intervals).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
import plotly.graph_objects as go

from core.calibration.reliability import reliability_curve
from core.fusion.views import BoardView, PairView, ReliabilityData, WhatIfView, method

from .calibration import binned_reliability_figure
from .fast import figure
from .palette import ACCURACY_SCALE, HUES, NEUTRALS
from .style import CURRENT_COLOR, REFERENCE_COLOR, titled_layout

__all__ = ["FUSION_COLORS", "board_figure", "dependence_figure", "fusion_reliability_figure",
           "what_if_figure"]

#: One colour per resolver of :data:`core.fusion.views.METHODS` (pairwise ΔE ≥ 23).
FUSION_COLORS = MappingProxyType({
    "mv": HUES["vermillion"],
    "one_coin": HUES["amber"],
    "dawid_skene": HUES["green"],
    "glad": HUES["purple"],
    "accu": HUES["sky"],
    "accu_depen": HUES["royal"],
    "nb": HUES["pink"],
})
_ERR = {"color": REFERENCE_COLOR, "thickness": 1.5, "width": 4}


def _color(key: str) -> str:
    return FUSION_COLORS.get(key, NEUTRALS["dark"])


def board_figure(board: BoardView, *, title: str | None = None) -> go.Figure:
    """Each resolver's score with its 95 % interval, and (with a truth) its accuracy when it
    answers only its most confident share of items.

    Returns
    -------
    go.Figure
        Trace 0: the score of every resolver (``x`` percent, ``y`` names, best on top), a
        dot in its colour with asymmetric error bars to the Wilson interval (its legend
        entry is trace 1, a neutral dot, since the dots differ in colour); trace 2 (only
        with ``board.at_coverage``): the accuracy at ``board.coverage``, open diamonds with
        their intervals.
    """
    t = board.table.sort_values("accuracy", kind="stable", na_position="first")
    names = t["name"].tolist()
    acc = t["accuracy"].to_numpy(float) * 100
    lo, hi = t["low"].to_numpy(float) * 100, t["high"].to_numpy(float) * 100
    what = "accuracy" if board.measure == "accuracy" else "agreement with majority vote"
    data = [{
        "type": "scatter", "x": acc, "y": names, "mode": "markers",
        "name": f"{what}, all items (95 % interval)", "legendgroup": "all",
        "showlegend": False,
        "marker": {"size": 12, "color": [_color(k) for k in t["method"]]},
        "error_x": {"type": "data", "symmetric": False, "array": hi - acc,
                    "arrayminus": acc - lo, **_ERR},
        "customdata": np.column_stack([lo, hi, t["correct"].to_numpy(int),
                                       t["items"].to_numpy(int)]),
        "hovertemplate": "%{y}: %{x:.1f} % [%{customdata[0]:.1f}, %{customdata[1]:.1f}]"
                         "<br>%{customdata[2]} of %{customdata[3]}<extra></extra>"}]
    data.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                 "name": f"{what}, all items (95 % interval)", "legendgroup": "all",
                 "marker": {"size": 12, "color": NEUTRALS["slate"]}, "hoverinfo": "skip"})
    lows = [lo]
    if board.at_coverage is not None:
        a = board.at_coverage.set_index("method").reindex(t["method"])
        x = a["accuracy"].to_numpy(float) * 100
        alo, ahi = a["low"].to_numpy(float) * 100, a["high"].to_numpy(float) * 100
        lows.append(alo)
        data.append({
            "type": "scatter", "x": x, "y": names, "mode": "markers",
            "name": f"answering only its most confident {board.coverage * 100:.0f} % (95 % "
                    "interval)",
            "marker": {"size": 11, "symbol": "diamond-open", "color": CURRENT_COLOR,
                       "line": {"width": 2, "color": CURRENT_COLOR}},
            "error_x": {"type": "data", "symmetric": False, "array": ahi - x,
                        "arrayminus": x - alo, **_ERR},
            "customdata": np.column_stack([alo, ahi, a["answered"].to_numpy(int),
                                           a["n"].to_numpy(int)]),
            "hovertemplate": "%{y}: %{x:.1f} % [%{customdata[0]:.1f}, %{customdata[1]:.1f}]"
                             "<br>answers %{customdata[2]} of %{customdata[3]}"
                             "<extra></extra>"})
    finite = np.concatenate([v[np.isfinite(v)] for v in lows] + [np.zeros(0)])
    left = float(np.clip(np.floor((finite.min() if finite.size else 0) / 10) * 10 - 5, 0, 90))
    layout = titled_layout(height=130 + 40 * len(t), title=title, legend_rows=2)
    layout["xaxis"] = {"title": {"text": "Percent" if board.measure == "accuracy"
                                 else "Percent of items where it agrees with majority vote"},
                       "range": [left, 101], "zeroline": False, "showgrid": True}
    layout["yaxis"] = {"categoryorder": "array", "categoryarray": names, "automargin": True}
    return figure(data, layout)


def dependence_figure(pairs: PairView, which: str = "false", *,
                      title: str | None = None) -> go.Figure:
    """The S × S dependence matrix: the share of shared items on which two sources make the
    same false claim (``which="false"``), or their agreement beyond chance (``"beyond"``).

    Returns
    -------
    go.Figure
        Trace 0: a heatmap (``z`` in [0, 1]; negative agreement beyond chance is drawn as 0
        and shown exactly in the hover; the scale of the false-claim share ends at its
        largest value rounded up to a tenth, so small shares still show); copy groups are
        outlined by rectangle shapes.
    """
    if which not in ("false", "beyond"):
        raise ValueError(f"which must be 'false' or 'beyond', got {which!r}")
    z = np.asarray(pairs.false_same if which == "false" else pairs.beyond, float)
    labels = [f"{s} ({g})" if g else s for s, g in zip(pairs.sources, pairs.groups,
                                                        strict=True)]
    n = len(labels)
    shared = pairs.false_shared if which == "false" else pairs.shared
    dep = pairs.dependence if pairs.dependence is not None else np.full((n, n), np.nan)
    custom = np.dstack([np.where(np.isfinite(z), z * 100, np.nan), shared,
                        np.where(np.isfinite(dep), dep, np.nan)])
    what = ("same false claim on %{customdata[0]:.0f} % of %{customdata[1]} checked shared "
            "items" if pairs.false_kind == "observed" and which == "false" else
            "same false claim (expected) on %{customdata[0]:.0f} % of %{customdata[1]} shared "
            "items" if which == "false" else
            "agreement beyond chance %{customdata[0]:.0f} % (%{customdata[1]} shared items)")
    finite = z[np.isfinite(z)]
    top = 1.0 if which == "beyond" or not finite.size else \
        float(np.clip(np.ceil(finite.max() * 10) / 10, 0.1, 1.0))
    data = [{"type": "heatmap", "z": np.clip(z, 0, 1), "x": labels, "y": labels,
             "zmin": 0.0, "zmax": top, "colorscale": [list(s) for s in ACCURACY_SCALE],
             "xgap": 1, "ygap": 1, "customdata": custom,
             "colorbar": {"title": {"text": "share"}, "thickness": 12, "len": 0.8,
                          "tickformat": ".0%"},
             "hovertemplate": "%{y} · %{x}: " + what
                              + "<br>dependence (ACCU + DEPEN) %{customdata[2]:.2f}"
                              "<extra></extra>"}]
    shapes = []
    start = 0
    while start < n:
        g = pairs.groups[start]
        end = start
        while end + 1 < n and pairs.groups[end + 1] == g:
            end += 1
        if g:
            shapes.append({"type": "rect", "xref": "x", "yref": "y",
                           "x0": start - 0.5, "x1": end + 0.5, "y0": start - 0.5,
                           "y1": end + 0.5, "line": {"color": CURRENT_COLOR, "width": 3},
                           "fillcolor": "rgba(0, 0, 0, 0)"})
        start = end + 1
    size = max(420, 170 + 15 * n)
    layout = titled_layout(height=size, title=title, legend_rows=0)
    layout["xaxis"] = {"tickangle": -60, "automargin": True, "showgrid": False,
                       "tickfont": {"size": 10}}
    layout["yaxis"] = {"autorange": "reversed", "automargin": True, "showgrid": False,
                       "tickfont": {"size": 10}}
    layout["shapes"] = shapes
    return figure(data, layout)


def what_if_figure(view: WhatIfView, *, max_values: int = 10,
                   title: str | None = None) -> go.Figure:
    """One item's posterior before and after the change, value by value.

    Returns
    -------
    go.Figure
        Trace 0: "before" bars, trace 1: "after" bars (horizontal, ``y`` the values, most
        probable before on top, at most ``max_values``); trace 2 (when the truth is among
        them): a star just past the truth's longer bar.
    """
    t = view.table.assign(_top=np.maximum(view.table["before"], view.table["after"]))
    keep = t.sort_values("_top", ascending=False, kind="stable").head(max_values).index
    t = t.loc[sorted(keep)]
    values = [str(v) for v in t["value"]]
    data = [
        {"type": "bar", "orientation": "h", "y": values, "x": t["before"].to_numpy(float),
         "name": "before", "marker": {"color": NEUTRALS["light"]},
         "hovertemplate": "%{y}: %{x:.1%} before<extra></extra>"},
        {"type": "bar", "orientation": "h", "y": values, "x": t["after"].to_numpy(float),
         "name": "after the change", "marker": {"color": HUES["royal"]},
         "hovertemplate": "%{y}: %{x:.1%} after<extra></extra>"}]
    truth = t[t["truth"].astype(bool)]
    if len(truth):
        data.append({"type": "scatter", "mode": "markers", "y": [str(truth["value"].iloc[0])],
                     "x": [float(truth["_top"].iloc[0]) + 0.04], "name": "the truth",
                     "cliponaxis": False,
                     "marker": {"symbol": "star", "size": 14, "color": HUES["forest"]},
                     "hovertemplate": "%{y} is the truth<extra></extra>"})
    layout = titled_layout(height=150 + 46 * len(values), title=title, legend_rows=1)
    layout["barmode"] = "group"
    layout["xaxis"] = {"title": {"text": "Probability the resolver gives the value"},
                       "range": [0, 1.08], "tickformat": ".0%"}
    layout["yaxis"] = {"autorange": "reversed", "automargin": True, "type": "category"}
    return figure(data, layout)


def fusion_reliability_figure(data: ReliabilityData, methods: Sequence[str], *,
                              n_bins: int = 10, title: str | None = None,
                              colors: Mapping[str, str] | None = None) -> go.Figure:
    """The binned reliability diagram of the chosen resolvers' confidences against whether
    their answers were right (:func:`binned_reliability_figure`, exact per-bin intervals).

    Returns
    -------
    go.Figure
        As :func:`core.figures.calibration.binned_reliability_figure`, one curve per resolver
        (named by its page name), axes titled for fused answers.
    """
    keys = [k for k in methods if k in data.confidence and data.confidence[k].size]
    if not keys:
        raise ValueError("no resolver with checked answers to draw")
    curves = {method(k).name: reliability_curve(data.confidence[k], data.correct[k],
                                                n_bins=n_bins) for k in keys}
    cols = {method(k).name: (colors or FUSION_COLORS).get(k, _color(k)) for k in keys}
    fig = binned_reliability_figure(curves, colors=cols, label="y", title=title, height=520)
    fig.layout.yaxis.title.text = "Share of answers right"
    fig.layout.xaxis2.title.text = "Confidence in its answer"
    return fig
