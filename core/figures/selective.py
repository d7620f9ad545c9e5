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

from .palette import HUES, SWEEP_PALETTE
from .style import CURRENT_COLOR, PAPER_COLOR, REFERENCE_COLOR, titled_layout

__all__ = ["SWEEP_COLORS", "risk_coverage_figure", "threshold_figure"]

#: Colours of the three sweep curves.
SWEEP_COLORS = SWEEP_PALETTE
_SWEEP_NAMES = {"coverage": "coverage", "selective_accuracy": "selective accuracy",
                "f05": "F0.5 (macro-derived)"}
_CURRENT = {"color": CURRENT_COLOR, "width": 2}
_CALIBRATED = {"color": PAPER_COLOR, "dash": "dash", "width": 1.5}
_LINE_TOP = 101.0  # the vertical lines end here; the labels sit above
_LABEL_HEIGHT = 6.0  # the forced-accuracy label's height in percent (11 px of a 440 px figure)


def _thin(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spaced points, first and last kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def risk_coverage_figure(rc: RiskCoverage, *, color: str = HUES["blue"],
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
                    "color": p.get("color", CURRENT_COLOR)},
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


def _fits(x0: float, x1: float, lines: Sequence[float]) -> bool:
    return not any(x0 <= v <= x1 for v in lines)


def _crosses(sweep: pd.DataFrame, x0: float, x1: float, y0: float, y1: float) -> bool:
    """Whether a sweep curve passes through the box [x0, x1] × [y0, y1] (segments, not only
    samples, so a steep drop between two thresholds counts)."""
    xs = sweep["theta"].to_numpy(float)
    for col in ("coverage", "selective_accuracy", "f05"):
        ys = sweep[col].to_numpy(float)
        for i in range(len(xs) - 1):
            if max(xs[i], xs[i + 1]) < x0 or min(xs[i], xs[i + 1]) > x1:
                continue
            seg = ys[i:i + 2][np.isfinite(ys[i:i + 2])]  # no answers: selective accuracy NaN
            if seg.size and seg.min() <= y1 and seg.max() >= y0:
                return True
    return False


def threshold_figure(sweep: pd.DataFrame, *, theta: float, calibrated: Sequence[float],
                     label: str = "θ", forced: float | None = None,
                     title: str | None = None, calibrated_name: str = "calibrated θ",
                     label_rows: tuple[float, float] = (118.0, 108.0),
                     label_room: float = 0.32) -> go.Figure:
    """Coverage, selective accuracy and F0.5 against the threshold, calibrated θ marked.

    Parameters
    ----------
    sweep : DataFrame
        :func:`core.evaluation.selective.sweep` (``theta``, ``coverage``,
        ``selective_accuracy``, ``f05`` in percent).
    theta : the threshold currently chosen (solid line).
    calibrated : each seed's calibrated threshold (dashed lines).
    label : what θ is, for the x-axis title.
    forced : float, optional
        Forced accuracy (%), drawn as a dotted reference: selective accuracy above it is
        what abstaining buys.
    calibrated_name : the dashed lines' label (" (per seed)" is added for several).
    label_rows : (y of θ's label, y of the dashed lines' label), in percent. Both lie above
        100 %, where the vertical lines end, so no label crosses a line; the y axis shows
        ticks up to 100 only.
    label_room : float, default 0.32
        The share of the x range the forced-accuracy label needs: it sits at the right end of
        its dotted line unless a vertical line or a curve falls within that share, then at the
        left end, then at the first free place inside (from the right); above the dotted line,
        or below it where only that is free. With no free place: the free end, above.

    Returns
    -------
    go.Figure
        Traces 0–2: coverage, selective accuracy and F0.5 against θ. The vertical lines run
        from 0 to 101 %; the labels of θ and of the dashed lines sit at ``label_rows``.
    """
    fig = go.Figure()
    for col in ("coverage", "selective_accuracy", "f05"):
        fig.add_trace(go.Scatter(
            x=sweep["theta"].to_numpy(float), y=sweep[col].to_numpy(float), mode="lines",
            name=_SWEEP_NAMES[col], line={"color": SWEEP_COLORS[col], "width": 2.5},
            hovertemplate=f"θ = %{{x:.2f}}: {_SWEEP_NAMES[col]} %{{y:.1f}} %<extra></extra>"))
    xs = sweep["theta"].to_numpy(float)
    lo, hi = (float(np.nanmin(xs)), float(np.nanmax(xs))) if xs.size else (0.0, 1.0)
    span = max(hi - lo, 1e-9)

    def anchor(x: float) -> str:  # keep a label inside the plot at the edges
        return "left" if x - lo < 0.1 * span else "right" if hi - x < 0.1 * span else "center"

    top = _LINE_TOP
    # the chosen θ first, so that calibrated lines at the same place stay visible on top
    shapes = [{"type": "line", "xref": "x", "yref": "y", "x0": float(theta),
               "x1": float(theta), "y0": 0, "y1": top, "line": dict(_CURRENT)}]
    cal = sorted({round(float(c), 6) for c in calibrated})
    for c in cal:
        shapes.append({"type": "line", "xref": "x", "yref": "y", "x0": c, "x1": c,
                       "y0": 0, "y1": top, "line": dict(_CALIBRATED)})
    notes = [{"text": f"θ = {float(theta):.2f}", "x": float(theta), "xref": "x",
              "y": float(label_rows[0]), "yref": "y", "xanchor": anchor(float(theta)),
              "yanchor": "middle", "showarrow": False,
              "font": {"size": 12, "color": CURRENT_COLOR}}]
    if cal:
        mid = (cal[0] + cal[-1]) / 2
        notes.append({"text": calibrated_name + (" (per seed)" if len(cal) > 1 else ""),
                      "x": mid, "xref": "x", "y": float(label_rows[1]), "yref": "y",
                      "xanchor": anchor(mid), "yanchor": "middle", "showarrow": False,
                      "font": {"size": 11, "color": PAPER_COLOR}})
    if forced is not None and np.isfinite(forced):
        shapes.append({"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1,
                       "y0": float(forced), "y1": float(forced),
                       "line": {"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5}})
        vertical = [float(theta), *cal]
        right_free = _fits(hi - label_room * span, hi, vertical)
        left_free = _fits(lo, lo + label_room * span, vertical)
        at_left = left_free and not right_free
        (x, anchor_x), below = ((0.0, "left") if at_left else (1.0, "right")), False
        # the first spot (the right end, the left end, then inside from the right) where no
        # vertical line and no curve crosses the label, above its dotted line or below it
        f, room, width = float(forced), _LABEL_HEIGHT, label_room * span
        starts = [hi - width, lo, *np.arange(hi - width, lo, -0.05 * span)[1:]]
        for x0 in starts:
            if not _fits(x0, x0 + width, vertical):
                continue
            spot = next((b for b in (False, True) if not _crosses(
                sweep, x0, x0 + width, f - room if b else f, f if b else f + room)), None)
            if spot is not None:
                end = x0 >= hi - width - 1e-9
                x, anchor_x = ((1.0, "right") if end
                               else (round(float((x0 - lo) / span), 4), "left"))
                below = spot
                break
        notes.append({"text": f"forced accuracy {float(forced):.1f} %",
                      "x": x, "xref": "x domain", "y": float(forced),
                      "yref": "y", "xanchor": anchor_x,
                      "yanchor": "top" if below else "bottom", "showarrow": False,
                      "font": {"size": 11, "color": REFERENCE_COLOR}})
    fig.update_layout(**titled_layout(height=440, title=title, legend_rows=2), shapes=shapes,
                      annotations=notes)
    fig.update_xaxes(title_text=f"Threshold ({label})")
    fig.update_yaxes(title_text="Percent (mean over seeds)",
                     range=[0, max(124.0, float(max(label_rows)) + 6)],
                     tickvals=[0, 20, 40, 60, 80, 100])
    return fig
