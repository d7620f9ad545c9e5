"""Figures of the Bias lab: the leaderboard against the nominal setting, how each source's
reliability moves, and the 3 × 3 bias × dropout grid as small multiples (seed 000 §12.4;
``reference/testbed-spec.md`` §2.13).

Pure builders: the frames of :func:`core.evaluation.lab.run_lab` and
:func:`core.evaluation.robustness.perturbation_grid` in, :class:`plotly.graph_objects.Figure`
out. SVG traces only; the nominal setting is always the grey reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.evaluation.run import METHOD_LABELS
from core.testbed.questions import SOURCE_LABELS, SOURCES

from .fast import axis_refs, figure, subplot_grid
from .style import (
    CURRENT_COLOR,
    METHOD_SHORT,
    NOMINAL_COLOR,
    REFERENCE_COLOR,
    SOURCE_COLORS,
    method_color,
    titled_layout,
)

__all__ = ["grid_figure", "lab_leaderboard_figure", "source_shift_figure"]

_NOMINAL_MARKER = {"symbol": "circle-open", "size": 11, "color": NOMINAL_COLOR,
                   "line": {"width": 2, "color": NOMINAL_COLOR}}


def _segments(x0: np.ndarray, x1: np.ndarray, y: Sequence) -> tuple[list, list]:
    """Line segments (x0 → x1 at each y) as one trace's coordinates with ``None`` breaks."""
    xs, ys = [], []
    for a, b, c in zip(np.asarray(x0).tolist(), np.asarray(x1).tolist(), y, strict=True):
        xs += [a, b, None]
        ys += [c, c, None]
    return xs, ys


def _error_x(high: np.ndarray, low: np.ndarray, x: np.ndarray) -> dict:
    """Asymmetric horizontal error bars from ``x`` to the interval ends."""
    return {"type": "data", "symmetric": False, "array": high - x, "arrayminus": x - low,
            "color": REFERENCE_COLOR, "thickness": 1.5, "width": 4}


def _nominal_marker() -> dict:
    return {**_NOMINAL_MARKER, "line": dict(_NOMINAL_MARKER["line"])}


def lab_leaderboard_figure(variant: pd.DataFrame, nominal: pd.DataFrame | None = None, *,
                           title: str | None = None) -> go.Figure:
    """Forced accuracy per method in this setting (with CI), the nominal setting beside it.

    Parameters
    ----------
    variant, nominal : DataFrame
        ``LabResult.leaderboard`` frames (``method``, ``accuracy``, ``ci_low``, ``ci_high``
        in percent). Rows are sorted by the variant's accuracy, best on top.

    Returns
    -------
    go.Figure
        Trace 0: grey segments nominal → variant; trace 1: the nominal accuracies (open grey
        circles); trace 2: this setting's accuracies with error bars to the interval ends.
        Without ``nominal`` only the last trace. Built from dicts (:mod:`core.figures.fast`):
        it is rebuilt on every new bias-lab setting.
    """
    v = variant.sort_values("accuracy", kind="stable")
    methods = v["method"].tolist()
    labels = [METHOD_LABELS.get(m, m) for m in methods]
    acc = v["accuracy"].to_numpy(float)
    data = []
    if nominal is not None:
        nom = nominal.set_index("method")["accuracy"].reindex(methods).to_numpy(float)
        xs, ys = _segments(nom, acc, labels)
        data.append({"type": "scatter", "x": xs, "y": ys, "mode": "lines", "showlegend": False,
                     "line": {"color": NOMINAL_COLOR, "width": 2}, "hoverinfo": "skip"})
        data.append({"type": "scatter", "x": nom, "y": list(labels), "mode": "markers",
                     "name": "nominal (bias 1, dropout 1, equal mix)",
                     "marker": _nominal_marker(),
                     "hovertemplate": "%{y}: nominal %{x:.1f} %<extra></extra>"})
    data.append({"type": "scatter", "x": acc, "y": list(labels), "mode": "markers",
                 "name": "this setting (95 % CI)",
                 "marker": {"size": 12, "color": [method_color(m) for m in methods]},
                 "error_x": _error_x(v["ci_high"].to_numpy(float), v["ci_low"].to_numpy(float),
                                     acc),
                 "hovertemplate": "%{y}: %{x:.1f} %<extra></extra>"})
    layout = titled_layout(height=110 + 32 * len(v), title=title)
    layout["xaxis"] = {"title": {"text": "Forced macro accuracy on the seed's test split (%)"},
                       "showgrid": True}
    layout["yaxis"] = {"title": {"text": "Method"}, "automargin": True,
                       "categoryorder": "array", "categoryarray": list(labels)}
    return figure(data, layout)


def source_shift_figure(nominal: pd.DataFrame, variant: pd.DataFrame, *,
                        title: str | None = None) -> go.Figure:
    """How each source's accuracy (when it answers) and coverage move from nominal.

    Parameters
    ----------
    nominal, variant : DataFrame
        ``LabResult.sources`` frames (``source``, ``coverage``, ``accuracy``, ``acc_low``,
        ``acc_high``, ``conflict_rate`` in percent).

    Returns
    -------
    go.Figure
        Two panels sharing the source axis (their x-axis titles name them): accuracy (left)
        and conflict rate (right). In each, grey segments and open grey circles mark nominal,
        filled source-coloured dots this setting (accuracy with its Wilson interval). Built
        from dicts (:mod:`core.figures.fast`), with the axes of
        ``make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06)``.
    """
    present = set(variant["source"])
    order = [s for s in SOURCES if s in present]
    a = nominal.set_index("source").reindex(order)
    b = variant.set_index("source").reindex(order)
    labels = [SOURCE_LABELS[s] for s in order]
    colors = [SOURCE_COLORS[s] for s in order]
    data = []
    for col, field in ((1, "accuracy"), (2, "conflict_rate")):
        xref, yref = axis_refs(1, col, 2)
        x0, x1 = a[field].to_numpy(float), b[field].to_numpy(float)
        xs, ys = _segments(x0, x1, labels)
        data.append({"type": "scatter", "x": xs, "y": ys, "mode": "lines", "showlegend": False,
                     "line": {"color": NOMINAL_COLOR, "width": 2}, "hoverinfo": "skip",
                     "xaxis": xref, "yaxis": yref})
        data.append({"type": "scatter", "x": x0, "y": list(labels), "mode": "markers",
                     "name": "nominal", "showlegend": col == 1, "legendgroup": "nominal",
                     "marker": _nominal_marker(),
                     "hovertemplate": "%{y}: nominal %{x:.1f} %<extra></extra>",
                     "xaxis": xref, "yaxis": yref})
        trace = {"type": "scatter", "x": x1, "y": list(labels), "mode": "markers",
                 "name": "this setting", "showlegend": col == 1, "legendgroup": "variant",
                 "marker": {"size": 12, "color": list(colors)},
                 "hovertemplate": "%{y}: %{x:.1f} %<extra></extra>",
                 "xaxis": xref, "yaxis": yref}
        if field == "accuracy":
            trace["error_x"] = _error_x(b["acc_high"].to_numpy(float),
                                        b["acc_low"].to_numpy(float), x1)
        data.append(trace)
    layout = titled_layout(height=120 + 46 * len(order), title=title)
    layout.update(subplot_grid(1, 2, horizontal_spacing=0.06))
    layout["yaxis2"].update(matches="y", showticklabels=False)  # shared_yaxes=True
    layout["xaxis"]["title"] = {"text": "Accuracy when answering (%)"}
    layout["xaxis2"]["title"] = {"text": "Conflict rate (%)"}
    layout["yaxis"].update(title={"text": "Source"}, autorange="reversed", automargin=True)
    layout["yaxis2"]["autorange"] = "reversed"
    return figure(data, layout)


def grid_figure(mean: pd.DataFrame, methods: Sequence[str], *,
                scales: Sequence[float] = (0.5, 1.0, 2.0),
                title: str | None = None) -> go.Figure:
    """The bias × dropout grid as 3 × 3 small multiples of per-method accuracy.

    Parameters
    ----------
    mean : DataFrame
        ``perturbation_grid(...)["mean"]``: columns ``bias``, ``dropout`` and one per method.
    methods : methods to draw (bars, top to bottom in this order).
    scales : the grid values (rows: bias, columns: dropout).

    Returns
    -------
    go.Figure
        One bar trace per cell (``x`` accuracy, ``y`` method short names, method colours)
        and one grey tick trace per cell at the nominal cell's accuracies (the reference).
    """
    methods = [m for m in methods if m in mean.columns]
    names = [METHOD_SHORT.get(m, m) for m in methods]
    cell = mean.set_index(["bias", "dropout"])
    nominal = (cell.loc[(1.0, 1.0), methods].to_numpy(float) if (1.0, 1.0) in cell.index
               else None)
    fig = make_subplots(
        rows=len(scales), cols=len(scales), shared_xaxes=True, shared_yaxes=True,
        horizontal_spacing=0.03, vertical_spacing=0.07,
        subplot_titles=[f"bias {b:g} × dropout {d:g}" for b in scales for d in scales])
    lo = float(np.nanmin(cell[methods].to_numpy(float))) if len(cell) else 0.0
    for i, b in enumerate(scales, start=1):
        for j, d in enumerate(scales, start=1):
            if (b, d) not in cell.index:
                continue
            vals = cell.loc[(b, d), methods].to_numpy(float)
            fig.add_trace(go.Bar(
                x=vals, y=names, orientation="h", showlegend=False,
                marker_color=[method_color(m) for m in methods],
                hovertemplate=f"bias {b:g} × dropout {d:g}<br>%{{y}}: %{{x:.1f}} %"
                              "<extra></extra>"), row=i, col=j)
            if nominal is not None:
                fig.add_trace(go.Scatter(
                    x=nominal, y=names, mode="markers", name="nominal cell",
                    legendgroup="nominal", showlegend=(i, j) == (1, 1),
                    marker={"symbol": "line-ns", "size": 14, "color": CURRENT_COLOR,
                            "line": {"width": 2, "color": CURRENT_COLOR}},
                    hovertemplate="%{y}: nominal %{x:.1f} %<extra></extra>"), row=i, col=j)
    layout = titled_layout(height=140 + 95 * len(scales) * max(1, len(methods)) // 3,
                           title=title)
    layout["margin"]["t"] += 24  # the subplot titles of the first row
    fig.update_layout(**layout)
    fig.update_xaxes(range=[max(0.0, np.floor(lo / 10) * 10 - 5), 100])
    for j in range(1, len(scales) + 1):
        fig.update_xaxes(title_text="Accuracy (%)", row=len(scales), col=j)
    fig.update_yaxes(autorange="reversed")
    fig.update_yaxes(title_text="Method", row=(len(scales) + 1) // 2, col=1)
    fig.update_annotations(font={"size": 12})
    return fig
