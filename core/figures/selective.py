"""Figures of the Selective QA page: the risk–coverage curve and the threshold sweep
(seed 000 §4.1, §10; ``reference/testbed-spec.md`` §2.12).

Pure builders: a :class:`~core.evaluation.metrics.RiskCoverage` or a sweep frame in,
:class:`plotly.graph_objects.Figure` out. SVG traces only. The calibrated threshold and the
forced (answer everything) level are always drawn as references.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.evaluation.metrics import RiskCoverage

from .style import CURRENT_COLOR, PAPER_COLOR, REFERENCE_COLOR, titled_layout

__all__ = ["SWEEP_COLORS", "risk_coverage_figure", "threshold_figure"]

#: Colours of the three sweep curves.
SWEEP_COLORS = {"coverage": "#2B6CB0", "selective_accuracy": "#12A38F", "f05": "#7C5CBF"}
_SWEEP_NAMES = {"coverage": "coverage", "selective_accuracy": "selective accuracy",
                "f05": "F0.5 (macro-derived)"}
_CURRENT = {"color": CURRENT_COLOR, "width": 2}
_CALIBRATED = {"color": PAPER_COLOR, "dash": "dash", "width": 1.5}


def _thin(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spaced points, first and last kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def risk_coverage_figure(rc: RiskCoverage, *, color: str = "#0072B2",
                         name: str = "risk–coverage",
                         points: Sequence[dict] = (), max_points: int = 600,
                         title: str | None = None) -> go.Figure:
    """Risk of the k most confident answers against coverage k/n, with AURC.

    Parameters
    ----------
    rc : RiskCoverage
        :func:`core.evaluation.metrics.risk_coverage` (fractions).
    color, name : the curve's colour and legend name (AURC is appended).
    points : sequence of dict
        Operating points to mark, each with ``coverage`` and ``risk`` (fractions), ``name``
        and optional ``symbol`` / ``color`` / ``size``; later points are drawn on top.
    max_points : int, default=600
        The curve is thinned to this many points for drawing (AURC is computed on all).

    Returns
    -------
    go.Figure
        Trace 0: the curve (``x`` coverage %, ``y`` risk %); one marker trace per point; a
        dotted line at the forced risk (coverage 100 %).
    """
    keep = _thin(len(rc.coverage), max_points)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=100 * rc.coverage[keep], y=100 * rc.risk[keep], mode="lines",
        name=f"{name} (AURC {rc.aurc:.3f})", line={"color": color, "width": 2.5},
        hovertemplate="coverage %{x:.1f} % → risk %{y:.1f} %<extra></extra>"))
    for p in points:
        fig.add_trace(go.Scatter(
            x=[100 * float(p["coverage"])], y=[100 * float(p["risk"])], mode="markers",
            name=str(p["name"]),
            marker={"size": p.get("size", 13), "symbol": p.get("symbol", "circle"),
                    "color": p.get("color", CURRENT_COLOR), "line": {"width": 1.5,
                                                                 "color": "white"}},
            hovertemplate=f"{p['name']}: coverage %{{x:.1f}} %, risk %{{y:.1f}} %"
                          "<extra></extra>"))
    forced = 100 * float(rc.risk[-1])
    fig.add_hline(y=forced, line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5},
                  annotation_text=f"answer everything: risk {forced:.1f} %",
                  annotation_position="top left",
                  annotation_font={"size": 11, "color": REFERENCE_COLOR})
    fig.update_layout(**titled_layout(height=420, title=title, legend_rows=2))
    fig.update_xaxes(title_text="Coverage (%): the most confident answers first", range=[0, 101])
    fig.update_yaxes(title_text="Risk (%): error rate among the answered", rangemode="tozero")
    return fig


def threshold_figure(sweep: pd.DataFrame, *, theta: float, calibrated: Sequence[float],
                     label: str = "θ", forced: float | None = None,
                     title: str | None = None) -> go.Figure:
    """Coverage, selective accuracy and F0.5 against the threshold, calibrated θ marked.

    Parameters
    ----------
    sweep : DataFrame
        :func:`core.evaluation.selective.sweep` (``theta``, ``coverage``,
        ``selective_accuracy``, ``f05`` in percent).
    theta : the threshold currently chosen (solid line).
    calibrated : each seed's calibrated threshold (dashed red lines).
    label : what θ is, for the x-axis title.
    forced : float, optional
        Forced accuracy (%), drawn as a dotted reference: selective accuracy above it is
        what abstaining buys.

    Returns
    -------
    go.Figure
        Traces 0–2: coverage, selective accuracy and F0.5 against θ.
    """
    fig = go.Figure()
    for col in ("coverage", "selective_accuracy", "f05"):
        fig.add_trace(go.Scatter(
            x=sweep["theta"].to_numpy(float), y=sweep[col].to_numpy(float), mode="lines",
            name=_SWEEP_NAMES[col], line={"color": SWEEP_COLORS[col], "width": 2.5},
            hovertemplate=f"θ = %{{x:.2f}}: {_SWEEP_NAMES[col]} %{{y:.1f}} %<extra></extra>"))
    # the chosen θ first, so that calibrated lines at the same place stay visible on top
    shapes = [{"type": "line", "xref": "x", "yref": "y domain", "x0": float(theta),
               "x1": float(theta), "y0": 0, "y1": 1, "line": dict(_CURRENT)}]
    notes = []
    cal = sorted({round(float(c), 6) for c in calibrated})
    for i, c in enumerate(cal):
        shapes.append({"type": "line", "xref": "x", "yref": "y domain", "x0": c, "x1": c,
                       "y0": 0, "y1": 1, "line": dict(_CALIBRATED)})
        if i == 0:
            notes.append({"text": "calibrated θ" + (" (per seed)" if len(cal) > 1 else ""),
                          "x": c, "xref": "x", "y": 0.02, "yref": "y domain",
                          "xanchor": "left", "showarrow": False,
                          "font": {"size": 11, "color": PAPER_COLOR}})
    notes.append({"text": f"θ = {float(theta):.2f}", "x": float(theta), "xref": "x", "y": 1.0,
                  "yref": "y domain", "xanchor": "left", "yanchor": "top", "showarrow": False,
                  "font": {"size": 12, "color": CURRENT_COLOR}})
    if forced is not None and np.isfinite(forced):
        shapes.append({"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1,
                       "y0": float(forced), "y1": float(forced),
                       "line": {"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5}})
        notes.append({"text": f"forced accuracy {float(forced):.1f} %", "x": 1, "xref":
                      "x domain", "y": float(forced), "yref": "y", "xanchor": "right",
                      "yanchor": "bottom", "showarrow": False,
                      "font": {"size": 11, "color": REFERENCE_COLOR}})
    fig.update_layout(**titled_layout(height=420, title=title, legend_rows=2), shapes=shapes,
                      annotations=notes)
    fig.update_xaxes(title_text=f"Threshold ({label})")
    fig.update_yaxes(title_text="Percent (mean over seeds)", range=[0, 101])
    return fig
