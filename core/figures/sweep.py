"""Figures of a sweep (issue 23; seed 000 §12.1, the benchmark specification §2.13): rank
stability between cells, one method's accuracy surface over two knobs, and where each
resolver stops beating majority vote.

Pure builders: a result of :mod:`core.sweep.views` in, :class:`plotly.graph_objects.Figure`
out. Heatmaps use the pale :data:`~core.figures.palette.ACCURACY_SCALE` with
:data:`~core.figures.palette.CELL_TEXT` on their cells; the majority-vote chart marks each
setting with a colour *and* a symbol, so it reads in greyscale.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.sweep.explore import SettingAgreement
from core.sweep.views import AccuracySurface, MajorityBoundary, RankStability, knob_text

from .palette import ACCURACY_SCALE, CELL_TEXT, HUES
from .style import METHOD_SHORT, titled_layout

__all__ = ["BEATS_COLOR", "STOPS_COLOR", "accuracy_surface_figure", "majority_boundary_figure",
           "rank_stability_figure", "setting_agreement_figure"]

#: A setting where the resolver beats majority vote, and one where it stops.
BEATS_COLOR = HUES["green"]
STOPS_COLOR = HUES["vermillion"]
#: Heatmaps write their values on the cells up to this many rows or columns.
MAX_TEXT_CELLS = 16
_SCALE = [list(stop) for stop in ACCURACY_SCALE]
_METRIC_TEXT = {"forced_accuracy": "forced accuracy", "selective_accuracy":
                "selective accuracy", "coverage": "coverage"}


def _label(method: str) -> str:
    return METHOD_SHORT.get(method, method)


def rank_stability_figure(rs: RankStability, *, title: str | None = None) -> go.Figure:
    """Kendall τ-b of the method ranking between every pair of cells, as a heatmap.

    Parameters
    ----------
    rs : :func:`core.sweep.views.rank_stability`.
    title : optional; the mean and minimum τ are in the colour bar's title either way.
    """
    names = [f"cell {p}" for p in rs.positions]
    n = len(names)
    text = n <= MAX_TEXT_CELLS
    trace = {"z": rs.tau, "x": names, "y": names, "zmin": -1.0, "zmax": 1.0,
             "colorscale": _SCALE, "xgap": 1 if n <= 60 else 0, "ygap": 1 if n <= 60 else 0,
             "colorbar": {"title": {"text": "τ-b"}, "thickness": 12, "len": 0.9},
             "hovertemplate": "%{y} vs %{x}: τ-b %{z:.2f}<extra></extra>"}
    if text:
        trace.update(texttemplate="%{z:.2f}", textfont={"size": 11, "color": CELL_TEXT})
    fig = go.Figure(go.Heatmap(**trace))
    summary = (f"mean τ-b {rs.mean:.2f}, min {rs.min:.2f} over {rs.n_pairs:,} pairs of cells"
               f" ({len(rs.methods)} methods)")
    fig.update_layout(**titled_layout(height=min(900, max(320, 160 + 18 * n)),
                                      title=title or f"Rank stability: {summary}",
                                      legend_rows=0))
    fig.update_xaxes(title_text="Cell", showticklabels=n <= 40, tickangle=-45)
    fig.update_yaxes(title_text="Cell", autorange="reversed", showticklabels=n <= 40)
    return fig


def _knobs_title(knobs) -> str:
    return " · ".join(k.replace("_", " ") for k in knobs) or "setting"


def setting_agreement_figure(agreement: SettingAgreement, *, title: str | None = None
                             ) -> go.Figure:
    """Mean Kendall τ-b between the cells of every pair of settings, as a heatmap; the
    diagonal is the agreement between seeds at one setting (chance alone). The colour scale
    runs from 0 to 1, or from −1 when some τ-b is negative.

    Parameters
    ----------
    agreement : :func:`core.sweep.explore.setting_agreement`.
    title : optional (default gives the within- and across-setting means).
    """
    names = list(agreement.settings)
    n = len(names)
    low = np.nanmin(agreement.tau) if np.isfinite(agreement.tau).any() else 0.0
    trace = {"z": agreement.tau, "x": names, "y": names, "zmin": -1.0 if low < 0 else 0.0,
             "zmax": 1.0,
             "colorscale": _SCALE, "xgap": 2, "ygap": 2, "customdata": agreement.n_pairs,
             "colorbar": {"title": {"text": "τ-b"}, "thickness": 12, "len": 0.9},
             "hovertemplate": "%{y} vs %{x}: mean τ-b %{z:.2f} over %{customdata:,} pairs of "
                              "cells<extra></extra>"}
    if n <= MAX_TEXT_CELLS:
        trace.update(texttemplate="%{z:.2f}", textfont={"size": 11, "color": CELL_TEXT})
    fig = go.Figure(go.Heatmap(**trace))
    fig.update_layout(**titled_layout(
        height=min(760, max(300, 170 + 34 * n)),
        title=title or (f"Rank agreement: τ-b {agreement.within:.2f} within a setting, "
                        f"{agreement.across:.2f} across settings"), legend_rows=0))
    axis = _knobs_title(agreement.knobs)
    fig.update_xaxes(title_text=axis, type="category", tickangle=-45 if n > 6 else 0)
    fig.update_yaxes(title_text=axis, type="category", autorange="reversed")
    return fig


def _range(z: np.ndarray) -> tuple[float, float]:
    """The colour range of a percentage surface: the values' range widened to multiples of
    5 (at least 5 points wide, inside [0, 100]), so a few points' difference shows."""
    if not np.isfinite(z).any():
        return 0.0, 100.0
    lo = float(np.clip(np.floor(np.nanmin(z) / 5) * 5, 0, 95))
    hi = float(np.clip(np.ceil(np.nanmax(z) / 5) * 5, lo + 5, 100))
    return lo, hi


def accuracy_surface_figure(surface: AccuracySurface, *, title: str | None = None
                            ) -> go.Figure:
    """One method's mean metric over two knobs; the hover gives the cell count and range.
    The colour range is the values' range in steps of 5 points (:func:`_range`).

    Parameters
    ----------
    surface : :func:`core.sweep.views.accuracy_surface`.
    title : optional (default names the method and the metric).
    """
    z = surface.mean
    custom = np.dstack([surface.n.astype(float), surface.low, surface.high])
    zmin, zmax = _range(z)
    gap = 2 if z.shape[0] <= 20 else 0
    trace = {"z": z, "x": list(surface.x_values), "y": list(surface.y_values),
             "zmin": zmin, "zmax": zmax, "colorscale": _SCALE,
             "customdata": custom, "xgap": 2, "ygap": gap,
             "colorbar": {"title": {"text": "%"}, "thickness": 12, "len": 0.9},
             "hovertemplate": (f"{surface.x} %{{x}} · {surface.y} %{{y}}: %{{z:.1f}} % "
                               "(%{customdata[0]:.0f} cells, %{customdata[1]:.1f}–"
                               "%{customdata[2]:.1f})<extra></extra>")}
    if max(z.shape) <= MAX_TEXT_CELLS:
        trace.update(texttemplate="%{z:.1f}", textfont={"size": 12, "color": CELL_TEXT})
    fig = go.Figure(go.Heatmap(**trace))
    metric = _METRIC_TEXT.get(surface.metric, surface.metric)
    fig.update_layout(**titled_layout(
        height=min(760, max(280, 150 + 40 * len(surface.y_values))),
        title=title or f"{_label(surface.method)}: mean {metric} (%)", legend_rows=0))
    fig.update_xaxes(title_text=surface.x.replace("_", " "), type="category")
    fig.update_yaxes(title_text=surface.y.replace("_", " "), type="category")
    return fig


def majority_boundary_figure(boundary: MajorityBoundary, *, title: str | None = None
                             ) -> go.Figure:
    """For each resolver (rows) and setting (columns): beats majority vote (green circle) or
    not (vermillion cross); the hover gives cells won / cells and the mean difference.

    Parameters
    ----------
    boundary : :func:`core.sweep.views.majority_boundary`.
    title : optional (default names the baseline and the metric).
    """
    t = boundary.table
    settings = list(dict.fromkeys(t["setting"]))
    methods = list(dict.fromkeys(t["method"]))
    fig = go.Figure()
    for beats, name, color, symbol in ((True, f"beats {_label(boundary.baseline)}",
                                        BEATS_COLOR, "circle"),
                                       (False, f"does not beat {_label(boundary.baseline)}",
                                        STOPS_COLOR, "x")):
        part = t[t["beats"] == beats]
        fig.add_trace(go.Scatter(
            x=list(part["setting"]), y=[_label(m) for m in part["method"]], mode="markers",
            name=name, marker={"color": color, "symbol": symbol, "size": 13},
            customdata=np.stack([part["wins"].to_numpy(float),
                                 part["n_cells"].to_numpy(float),
                                 part["mean_diff"].to_numpy(float)], axis=1)
            if len(part) else None,
            hovertemplate="%{y} at %{x}: wins %{customdata[0]:.0f}/%{customdata[1]:.0f} "
                          "cells, mean %{customdata[2]:+.1f} pp<extra></extra>"))
    metric = _METRIC_TEXT.get(boundary.metric, boundary.metric)
    fig.update_layout(**titled_layout(
        height=max(260, 150 + 34 * len(methods)),
        title=title or f"Where each resolver stops beating {_label(boundary.baseline)} "
                       f"({metric})"))
    first = t.drop_duplicates("setting").set_index("setting").loc[settings]
    ticks = [" · ".join(parts) for parts in zip(
        *(knob_text(first[k]) for k in boundary.knobs), strict=True)] if boundary.knobs \
        else settings
    fig.update_xaxes(title_text=_knobs_title(boundary.knobs), type="category",
                     categoryorder="array", categoryarray=settings, tickvals=settings,
                     ticktext=ticks, tickangle=-45 if len(settings) > 8 else 0)
    fig.update_yaxes(title_text="Method", type="category", categoryorder="array",
                     categoryarray=[_label(m) for m in reversed(methods)], automargin=True)
    return fig
