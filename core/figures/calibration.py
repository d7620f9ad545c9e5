"""Figures of the seed-003 pages: reliability diagrams, the decomposition, the ranking reversal
and the pilot budgets (seed 003 §3–5; ``reference/label-source-notes.md``;
``reference/calibration-notes.md`` §5).

Pure builders: results of :mod:`core.calibration` (or small frames of their numbers) in,
:class:`plotly.graph_objects.Figure` out. SVG traces only (``Scatter``, ``Bar``,
``Waterfall``). Reference lines are traces, so they show in the legend and in tests:

* every reliability diagram draws the diagonal "perfectly calibrated" and, when a prevalence
  is given, the horizontal prevalence line of the label source shown;
* the Brier-gap figure draws the zero line, the crossover (a + b)/2 and the two label
  sources' prevalences;
* the budget curves draw the nominal coverage.

Colours: a rule keeps its colour on every figure and page (:func:`rule_colors`); truth Y and
reference Z have one colour each (:data:`LABEL_COLORS`), and so do the two pilot estimators
(:data:`ESTIMATOR_COLORS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.calibration.corp import CorpBand, CorpCurve
from core.calibration.reliability import ConsistencyBands, ReliabilityCurve
from core.calibration.smooth import SmoothReliability, dense_region

from .fast import axis_refs, figure, subplot_grid
from .palette import (
    ESTIMATOR_PALETTE,
    LABEL_PALETTE,
    NEUTRALS,
    RULE_FALLBACK,
    RULE_PALETTE,
    translucent,
)
from .style import CURRENT_COLOR, METHOD_COLORS, PAPER_COLOR, REFERENCE_COLOR, base_layout

__all__ = [
    "ESTIMATOR_COLORS",
    "ESTIMATOR_NAMES",
    "LABEL_COLORS",
    "RULE_COLORS",
    "algorithm1_figure",
    "binned_reliability_figure",
    "brier_gap_figure",
    "bridge_figure",
    "budget_curves_figure",
    "budget_marker_shapes",
    "corp_reliability_figure",
    "decomposition_figure",
    "heldout_figure",
    "label_source_figure",
    "rate_axis_range",
    "rule_colors",
    "smooth_reliability_figure",
    "system_accuracy_figure",
]

#: Fixed colours of the named rules (seed 003's two rules, NQ-open's agreement, the file's two,
#: the bridge's tier prior): :data:`core.figures.palette.RULE_PALETTE`.
RULE_COLORS = RULE_PALETTE
#: Fallback palette (Okabe–Ito and friends) for rules without a fixed colour.
_PALETTE = RULE_FALLBACK
#: Truth Y and the reference-derived label Z.
LABEL_COLORS = LABEL_PALETTE
#: The two pilot estimators of Eq. 3 (β = 0 and the transfer β).
ESTIMATOR_COLORS = ESTIMATOR_PALETTE
ESTIMATOR_NAMES = {"human_only": "human-only (β = 0)", "trisource": "TriSource-Restore"}

_DIAGONAL = {"color": REFERENCE_COLOR, "dash": "dash", "width": 1.5}
_PREVALENCE = {"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5}
_CURRENT = {"color": CURRENT_COLOR, "width": 2}


def rule_colors(names: Sequence[str]) -> dict[str, str]:
    """A colour for every rule name, stable across pages.

    Parameters
    ----------
    names : sequence of str
        All the rules a page can show (its *options*, not the current selection, so a rule
        keeps its colour when others are added or removed).

    Returns
    -------
    dict
        Named rules get :data:`RULE_COLORS`; resolver names their ``METHOD_COLORS`` entry;
        the rest the fallback palette in the order given.
    """
    out, k = {}, 0
    for name in names:
        if name in RULE_COLORS:
            out[name] = RULE_COLORS[name]
        elif name in METHOD_COLORS:
            out[name] = METHOD_COLORS[name]
        else:
            out[name] = _PALETTE[k % len(_PALETTE)]
            k += 1
    return out


def _color(colors: Mapping[str, str] | None, name: str, i: int) -> str:
    if colors and name in colors:
        return colors[name]
    if name in RULE_COLORS or name in METHOD_COLORS:
        return rule_colors([name])[name]
    return _PALETTE[i % len(_PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    """A translucent fill of a palette colour (alpha ≤ 0.3: :func:`palette.translucent`)."""
    return translucent(hex_color, alpha)


def _label_text(label: str) -> str:
    return {"y": "Y (truth)", "z": "Z (reference)"}.get(label, label)


def _layout(*, height: int, title: str | None, legend_below: bool = True) -> dict:
    """:func:`core.figures.style.base_layout`, with the legend under the plot: narrow figures
    (three side by side) would otherwise wrap it into the title."""
    layout = base_layout(height=height, title=title)
    if legend_below:
        layout["legend"] = {"orientation": "h", "yref": "container", "yanchor": "bottom",
                            "y": 0.0, "x": 0, "font": {"size": 11},
                            "traceorder": "normal"}
        layout["margin"] = {**layout["margin"], "b": 110}
    return layout


def _reference_traces(*, prevalence: float | None, label: str) -> list[dict]:
    """The diagonal and (optionally) the prevalence line, as legend trace dicts (first panel)."""
    out = [{"type": "scatter", "x": [0.0, 1.0], "y": [0.0, 1.0], "mode": "lines",
            "name": "perfectly calibrated", "line": dict(_DIAGONAL), "hoverinfo": "skip"}]
    if prevalence is not None and np.isfinite(prevalence):
        out.append({"type": "scatter", "x": [0.0, 1.0], "y": [float(prevalence)] * 2,
                    "mode": "lines",
                    "name": f"prevalence E[{label.upper()}] = {float(prevalence):.3f}",
                    "line": dict(_PREVALENCE), "hoverinfo": "skip"})
    return out


def _band_traces(x, low, high, *, color: str, name: str, level: float,
                 shape: str | None = None, simultaneous: bool = False) -> list[dict]:
    """A shaded band as two line traces (lower, then upper filled to it), first panel.

    The edges are thin dotted lines in the band's colour and the fill is at the palette's
    translucent maximum: a fill alone (alpha .16) all but vanished on the dark theme. The
    legend says what the band holds: a whole calibrated curve (``simultaneous``) or each
    point alone (pointwise; issue 18).
    """
    what = "band for the whole curve" if simultaneous else "pointwise band"
    line = {"width": 1, "dash": "dot", "color": color, **({"shape": shape} if shape else {})}
    return [{"type": "scatter", "x": x, "y": low, "mode": "lines", "line": line,
             "showlegend": False, "name": f"consistency band{name} low", "hoverinfo": "skip"},
            {"type": "scatter", "x": x, "y": high, "mode": "lines", "fill": "tonexty",
             "fillcolor": _rgba(color, 0.28), "line": dict(line),
             "name": f"{level:.0%} {what}{name}", "hoverinfo": "skip"}]


def _reliability_layout(*, label: str, height: int, title: str | None, counts_title: str,
                        barmode: str | None = None) -> dict:
    """Two rows sharing x: the diagram (unit axes) over a strip of counts or density."""
    layout = {**_layout(height=height, title=title),
              **subplot_grid(2, 1, shared_xaxes=True, row_heights=[0.78, 0.22],
                             vertical_spacing=0.05)}
    layout["xaxis"].update(range=[-0.02, 1.02], title={"text": ""})
    layout["yaxis"].update(range=[-0.02, 1.02],
                           title={"text": f"Observed frequency of {_label_text(label)} = 1"})
    layout["xaxis2"].update(range=[-0.02, 1.02], title={"text": "Forecast p (confidence)"})
    layout["yaxis2"].update(title={"text": counts_title}, rangemode="tozero")
    if barmode:
        layout["barmode"] = barmode
    return layout


_LOWER = {"xaxis": "x2", "yaxis": "y2"}


def _two_row_figure(data: list[dict], layout: dict) -> go.Figure:
    """The figure, every trace not placed on the lower strip on the upper panel."""
    return figure([{"xaxis": "x", "yaxis": "y", **t} for t in data], layout)


# ------------------------------------------------------------------ reliability diagrams
def binned_reliability_figure(curves: Mapping[str, ReliabilityCurve], *,
                              colors: Mapping[str, str] | None = None,
                              band: ConsistencyBands | None = None,
                              band_rule: str | None = None,
                              prevalence: float | None = None, label: str = "y",
                              title: str | None = None, height: int = 540) -> go.Figure:
    """Binned reliability diagram of one or several rules, exact intervals and bin counts.

    Parameters
    ----------
    curves : mapping of rule name → ReliabilityCurve
        :func:`core.calibration.reliability.reliability_curve` of each rule (same label).
    colors : mapping, optional
        Rule → colour (:func:`rule_colors`).
    band : ConsistencyBands, optional
        :func:`core.calibration.reliability.consistency_bands` of ``band_rule``: where a
        calibrated forecaster with those forecasts would land (drawn as a shaded band).
    band_rule : str, optional
        The rule the band belongs to (its colour and legend name).
    prevalence : float, optional
        E[label] of the data: drawn as a dotted horizontal line.
    label : {"y", "z"}
        Which label the observed frequencies count (axis title).
    title, height : layout.

    Returns
    -------
    go.Figure
        Row 1 (``xaxis``/``yaxis``): trace "perfectly calibrated" (the diagonal), the
        prevalence line, the band (two traces, lower then upper, if given), then one trace per
        rule with ``x`` = mean forecast p̄_k and ``y`` = observed frequency ȳ_k of the
        non-empty bins (error bars: exact Clopper–Pearson interval). Row 2
        (``xaxis2``/``yaxis2``): one bar
        trace per rule, the items per bin at the bin centres.
    """
    data = _reference_traces(prevalence=prevalence, label=label)
    names = list(curves)
    if band is not None:
        keep = ~np.asarray(band.empty)
        x = np.asarray(band.mean_forecast)[keep]
        order = np.argsort(x)
        col = _color(colors, band_rule, 0) if band_rule else REFERENCE_COLOR
        who = f" ({band_rule})" if band_rule else ""
        data += _band_traces(x[order], np.asarray(band.low)[keep][order],
                             np.asarray(band.high)[keep][order], color=col, name=who,
                             level=band.level,
                             simultaneous=bool(getattr(band, "simultaneous", False)))
    for i, name in enumerate(names):
        c = curves[name]
        keep = ~np.asarray(c.empty)
        x = np.asarray(c.mean_forecast)[keep]
        y = np.asarray(c.observed_frequency)[keep]
        lo, hi = np.asarray(c.low)[keep], np.asarray(c.high)[keep]
        col = _color(colors, name, i)
        data.append({
            "type": "scatter", "x": x, "y": y, "mode": "lines+markers", "name": name,
            "line": {"color": col, "width": 2}, "marker": {"size": 8, "color": col},
            "error_y": {"type": "data", "array": hi - y, "arrayminus": y - lo,
                        "color": col, "thickness": 1.2, "width": 3},
            "customdata": np.column_stack([np.asarray(c.count)[keep], lo, hi]),
            "hovertemplate": (f"{name}: p̄ %{{x:.3f}} → {label.upper()} %{{y:.3f}}"
                              " [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                              "<br>%{customdata[0]} items<extra></extra>")})
        edges = np.asarray(c.edges)
        centres = (edges[:-1] + edges[1:]) / 2
        widths = np.maximum(np.diff(edges) * 0.9, 0.004)
        data.append({"type": "bar", "x": centres, "y": np.asarray(c.count), "width": widths,
                     "marker": {"color": _rgba(col, 0.3), "line": {"color": col, "width": 1}},
                     "name": f"{name} items per bin",
                     "showlegend": False,
                     "hovertemplate": f"{name}: %{{y}} items<extra></extra>", **_LOWER})
    return _two_row_figure(data, _reliability_layout(
        label=label, height=height, title=title, counts_title="items", barmode="overlay"))


def corp_reliability_figure(curves: Mapping[str, CorpCurve], *,
                            colors: Mapping[str, str] | None = None,
                            band: CorpBand | None = None, band_rule: str | None = None,
                            prevalence: float | None = None, label: str = "y",
                            title: str | None = None, height: int = 540) -> go.Figure:
    """CORP reliability diagram: the isotonic (PAV) recalibration of each rule, as steps.

    Parameters
    ----------
    curves : mapping of rule name → CorpCurve
        :func:`core.calibration.corp.corp_curve` of each rule (tied forecasts pooled).
    colors, band_rule, prevalence, label, title, height
        As in :func:`binned_reliability_figure`.
    band : CorpBand, optional
        :func:`core.calibration.corp.corp_consistency_band` of ``band_rule``.

    Returns
    -------
    go.Figure
        Row 1: the diagonal, the prevalence line, the band (lower, upper), then one step trace
        per rule (``x`` = distinct forecasts, ``y`` = PAV calibrated probability,
        ``line.shape = "hv"``). Row 2: one bar trace per rule, the weighted histogram of its
        forecasts (20 equal bins).
    """
    data = _reference_traces(prevalence=prevalence, label=label)
    if band is not None:
        col = _color(colors, band_rule, 0) if band_rule else REFERENCE_COLOR
        who = f" ({band_rule})" if band_rule else ""
        data += _band_traces(np.asarray(band.forecast), np.asarray(band.low),
                             np.asarray(band.high), color=col, name=who, level=band.level,
                             shape="hv",
                             simultaneous=bool(getattr(band, "simultaneous", False)))
    edges = np.linspace(0.0, 1.0, 21)
    for i, (name, c) in enumerate(curves.items()):
        col = _color(colors, name, i)
        x, y = np.asarray(c.forecast), np.asarray(c.calibrated)
        data.append({
            "type": "scatter", "x": x, "y": y,
            "mode": "lines+markers" if x.size <= 3 else "lines", "name": name,
            "line": {"color": col, "width": 2.5, "shape": "hv"},
            "marker": {"size": 9, "color": col},
            "hovertemplate": f"{name}: p %{{x:.3f}} → CORP %{{y:.3f}}<extra></extra>"})
        hist, _ = np.histogram(x, bins=edges, weights=np.asarray(c.weight))
        data.append({"type": "bar", "x": (edges[:-1] + edges[1:]) / 2, "y": hist,
                     "width": 0.045,
                     "marker": {"color": _rgba(col, 0.3), "line": {"color": col, "width": 1}},
                     "showlegend": False, "name": f"{name} forecasts",
                     "hovertemplate": f"{name}: weight %{{y:.0f}}<extra></extra>", **_LOWER})
    return _two_row_figure(data, _reliability_layout(label=label, height=height, title=title,
                                            counts_title="weight", barmode="overlay"))


def smooth_reliability_figure(curves: Mapping[str, SmoothReliability], *,
                              colors: Mapping[str, str] | None = None, band=None,
                              band_rule: str | None = None,
                              prevalence: float | None = None, label: str = "y",
                              title: str | None = None, height: int = 540) -> go.Figure:
    """Smoothed reliability diagram (relplot's kernel smoother) with the forecast density.

    Parameters
    ----------
    curves : mapping of rule name → SmoothReliability
        :func:`core.calibration.smooth.smooth_reliability` of each rule.
    colors, band_rule, prevalence, label, title, height
        As in :func:`binned_reliability_figure`.
    band : object, optional
        A band with attributes ``grid``, ``low``, ``high``, ``level`` and optionally
        ``simultaneous`` (e.g. :func:`core.calibration.smooth.smooth_consistency_band` of
        ``band_rule``'s smooth curve); drawn only over the range where ``band_rule``'s forecast
        density reaches 5 % of its peak (:func:`core.calibration.smooth.dense_region`).

    Returns
    -------
    go.Figure
        Row 1: the diagonal, the prevalence line, the band (lower, upper), then one line per
        rule (``x`` = grid,
        ``y`` = smoothed E[label | p]); the line is dotted where the forecast density is below
        5 % of its peak (the curve is extrapolated there). Row 2: one line per rule, the
        kernel density of its forecasts.
    """
    data = _reference_traces(prevalence=prevalence, label=label)
    if band is not None:
        bcol = _color(colors, band_rule, 0) if band_rule else REFERENCE_COLOR
        who = f" ({band_rule})" if band_rule else ""
        bx, blo, bhi = np.asarray(band.grid), np.asarray(band.low), np.asarray(band.high)
        if band_rule in curves:  # only where that rule has forecasts (as its solid line)
            c0 = curves[band_rule]
            keep = dense_region(np.interp(bx, np.asarray(c0.grid), np.asarray(c0.density)))
            if keep.any():
                bx, blo, bhi = bx[keep], blo[keep], bhi[keep]
        data += _band_traces(bx, blo, bhi, color=bcol, name=who, level=band.level,
                             simultaneous=bool(getattr(band, "simultaneous", False)))
    for i, (name, c) in enumerate(curves.items()):
        col = _color(colors, name, i)
        x, y, dens = np.asarray(c.grid), np.asarray(c.frequency), np.asarray(c.density)
        thin = dens < 0.05 * float(np.max(dens)) if dens.size else np.zeros(0, bool)
        solid = np.where(thin, np.nan, y)
        data.append({
            "type": "scatter", "x": x, "y": solid, "mode": "lines",
            "name": f"{name} (σ = {c.sigma:.3f})", "line": {"color": col, "width": 2.5},
            "connectgaps": False,
            "hovertemplate": f"{name}: p %{{x:.3f}} → %{{y:.3f}}<extra></extra>"})
        data.append({"type": "scatter", "x": x, "y": y, "mode": "lines",
                     "name": f"{name} (sparse forecasts)",
                     "line": {"color": col, "width": 1, "dash": "dot"}, "showlegend": False,
                     "hoverinfo": "skip"})
        data.append({"type": "scatter", "x": x, "y": dens, "mode": "lines", "fill": "tozeroy",
                     "fillcolor": _rgba(col, 0.2), "line": {"color": col, "width": 1},
                     "name": f"{name} density", "showlegend": False,
                     "hovertemplate": f"{name}: density %{{y:.2f}}<extra></extra>", **_LOWER})
    return _two_row_figure(data, _reliability_layout(label=label, height=height, title=title,
                                            counts_title="density"))


_CORP_TERMS = (("mcb", "MCB", 1.0), ("dsc", "− DSC", -1.0), ("unc", "UNC", 1.0),
               ("brier", "= Brier", 1.0))
_MURPHY_TERMS = (("rel", "REL", 1.0), ("res", "− RES", -1.0), ("unc", "UNC", 1.0),
                 ("wbv", "WBV", 1.0), ("wbc", "− 2·WBC", -2.0), ("brier", "= Brier", 1.0))


def decomposition_figure(terms: pd.DataFrame, *, colors: Mapping[str, str] | None = None,
                         n_bins: int = 10, strategy: str = "uniform", label: str = "y",
                         title: str | None = None, height: int = 380) -> go.Figure:
    """The two Brier decompositions of each rule as signed bars.

    Parameters
    ----------
    terms : DataFrame
        One row per rule: ``rule, brier, mcb, dsc, unc`` (CORP) and ``rel, res, wbv, wbc``
        (binned Murphy with the within-bin terms, same UNC).
    colors : mapping, optional
        Rule → colour.
    n_bins, strategy : the binning of the Murphy terms (stated in the subplot title).
    label : which label the scores use.
    title, height : layout.

    Returns
    -------
    go.Figure
        Left (``xaxis``): one bar trace per rule with ``x`` = "MCB", "− DSC", "UNC",
        "= Brier" and ``y`` = MCB, −DSC, UNC, Brier (so the first three add up to the last).
        Right (``xaxis2``): the same for REL, −RES, UNC, WBV, −2·WBC, Brier.
    """
    data = []
    for i, row in enumerate(terms.itertuples(index=False)):
        name = str(row.rule)
        col = _color(colors, name, i)
        for c, spec in ((1, _CORP_TERMS), (2, _MURPHY_TERMS)):
            xr, yr = axis_refs(1, c, 2)
            data.append({
                "type": "bar", "x": [t[1] for t in spec],
                "y": [t[2] * float(getattr(row, t[0])) for t in spec], "name": name,
                "marker": {"color": col}, "legendgroup": name, "showlegend": c == 1,
                "hovertemplate": f"{name} %{{x}}: %{{y:.4f}}<extra></extra>",
                "xaxis": xr, "yaxis": yr})
    layout = {**_layout(height=height, title=title), "barmode": "group",
              **subplot_grid(1, 2, column_widths=[0.42, 0.58], horizontal_spacing=0.08,
                             titles=(f"CORP: Brier = MCB − DSC + UNC (exact), {label.upper()}",
                                     f"Binned Murphy, B = {n_bins} {strategy}: "
                                     "REL − RES + UNC + WBV − 2·WBC"))}
    layout["yaxis"].update(title={"text": "Contribution to the Brier score"}, zeroline=True,
                           zerolinecolor=REFERENCE_COLOR)
    layout["yaxis2"].update(zeroline=True, zerolinecolor=REFERENCE_COLOR)
    return figure(data, layout)


# ------------------------------------------------------------------ ranking reversal
def _gap_title(a: str, b: str) -> str:
    """The y-axis title of a gap, on two lines: on one, long rule names ran past the plot."""
    return f"Δ = R({b}) − R({a})<br>(> 0: {a} better)"


def _slope(grid: np.ndarray, values: np.ndarray, x: float) -> float:
    """Slope of the piecewise-linear curve ``values(grid)`` at ``x``."""
    g, v = np.asarray(grid, float), np.asarray(values, float)
    j = int(np.clip(np.searchsorted(g, x), 1, len(g) - 1))
    return float((v[j] - v[j - 1]) / (g[j] - g[j - 1])) if g[j] > g[j - 1] else 0.0


def _free_side(slope: float, height: float, off: float = 0.0) -> str:
    """Text position beside a marker near a line of ``slope``, on a side the line leaves free.

    ``height`` is the marker's place in the plot's y range (0 bottom, 1 top) and ``off`` its
    distance above (> 0) or below the line, both as shares of the y range. Off the line the
    text sits level with the marker, on the side where the line moves away from it; on the
    line, below-right or above-left where the line rises (below-left or above-right where it
    falls), the lower side in the top quarter of the plot and the upper one in the bottom
    quarter, clear of the labels along the plot's edges.
    """
    if abs(off) > 0.03:
        return "middle right" if (off > 0) == (slope < 0) else "middle left"
    low, high = ("bottom right", "top left") if slope > 0 else ("bottom left", "top right")
    if height > 0.75:
        return low
    if height < 0.25:
        return high
    return low if slope > 0 else high


def _free_spot(x0: float, x1: float, width: float,
               lines: Sequence[float]) -> tuple[float, str]:
    """Where a label ``width`` wide (x units) sits in [x0, x1] with no vertical line through
    it: the middle, else the left edge, else the right edge (the middle if none is free)."""
    pad = 0.01
    spots = [((x0 + x1) / 2, "center", (x0 + x1 - width) / 2),
             (x0 + pad, "left", x0 + pad), (x1 - pad, "right", x1 - pad - width)]
    for x, anchor, left in spots:
        if not any(left - pad <= v <= left + width + pad for v in lines):
            return x, anchor
    return spots[0][0], "center"


def brier_gap_figure(*, prevalences, exact_gap, midpoint: float, names: Sequence[str],
                     measured_gap=None, measured_crossover: float | None = None,
                     prevalence_z: float | None = None, prevalence_y: float | None = None,
                     gap_z: float | None = None, gap_y: float | None = None,
                     current: float | None = None, colors: Mapping[str, str] | None = None,
                     title: str | None = None, height: int = 440) -> go.Figure:
    """The Brier gap Δ = R(B) − R(A) of two rules against the prevalence π, crossover marked.

    Every gap is in the app's one convention (:data:`core.glossary.SIGN_CONVENTION`): above
    zero, rule A has the lower risk.

    Parameters
    ----------
    prevalences : array_like
        Grid of π in [0, 1].
    exact_gap : array_like
        ``(b − a)(a + b − 2π)`` on the grid: two constant rules at the rules' means (exact).
    midpoint : float
        (a + b)/2, where ``exact_gap`` is zero.
    names : (A, B)
        The two rules.
    measured_gap : array_like, optional
        The rules themselves with labels thinned or added at random to reach π
        (:func:`core.calibration.label_source.brier_gap_curve`).
    measured_crossover : float, optional
        Where ``measured_gap`` is zero.
    prevalence_z, prevalence_y : float, optional
        E[Z] and E[Y]; with ``gap_z``/``gap_y`` (the rules' actual gaps under Z and Y) they
        are drawn as the two label sources' points.
    current : float, optional
        The prevalence chosen on the page (solid vertical line).
    colors : mapping, optional
        Rule → colour (the shading of each side takes the preferred rule's colour).
    title, height : layout.

    Returns
    -------
    go.Figure
        Traces, by name: "no difference" (y = 0), "constant rules at the means (exact)",
        optionally "the rules themselves (measured)", "crossover (a + b)/2" (vertical, at
        ``midpoint``), optionally the measured crossover, the "Z"/"Y" points and "π chosen".
    """
    grid = np.asarray(prevalences, float)
    exact = np.asarray(exact_gap, float)
    a_name, b_name = names
    parts = [exact]
    if measured_gap is not None:
        parts.append(np.asarray(measured_gap, float))
    parts += [np.array([v]) for v in (gap_z, gap_y) if v is not None and np.isfinite(v)]
    allv = np.concatenate(parts)
    lo, hi = float(np.nanmin(allv)), float(np.nanmax(allv))
    pad = 0.08 * max(hi - lo, 1e-3)
    y0, y1 = lo - pad, hi + pad
    ca = _color(colors, a_name, 0)
    cb = _color(colors, b_name, 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[0.0, 0.0], mode="lines", name="no difference",
                             line={"color": REFERENCE_COLOR, "width": 1}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=grid, y=exact, mode="lines", name="constant rules at the means (exact)",
        line={"color": CURRENT_COLOR, "width": 2.5},
        hovertemplate="π %{x:.2f}: gap %{y:+.3f} (constant rules)<extra></extra>"))
    if measured_gap is not None:
        fig.add_trace(go.Scatter(
            x=grid, y=np.asarray(measured_gap, float), mode="lines",
            name="the rules themselves (measured)",
            line={"color": NEUTRALS["grey"], "width": 2, "dash": "dash"},
            hovertemplate="π %{x:.2f}: gap %{y:+.3f} (measured)<extra></extra>"))
    fig.add_trace(go.Scatter(x=[midpoint, midpoint], y=[y0, y1], mode="lines",
                             name=f"crossover (a + b)/2 = {midpoint:.3f}",
                             line={"color": PAPER_COLOR, "width": 2, "dash": "dash"},
                             hoverinfo="skip"))
    if measured_crossover is not None and np.isfinite(measured_crossover):
        fig.add_trace(go.Scatter(x=[measured_crossover] * 2, y=[y0, y1], mode="lines",
                                 name=f"measured crossover = {measured_crossover:.3f}",
                                 line={"color": NEUTRALS["grey"], "width": 1.5, "dash": "dot"},
                                 hoverinfo="skip"))
    for key, pi, gap in (("z", prevalence_z, gap_z), ("y", prevalence_y, gap_y)):
        if pi is None or not np.isfinite(pi):
            continue
        yv = gap if gap is not None and np.isfinite(gap) else float(np.interp(pi, grid, exact))
        fig.add_trace(go.Scatter(
            x=[pi], y=[yv], mode="markers+text", name=f"{_label_text(key)}: π = {pi:.3f}",
            marker={"size": 14, "color": LABEL_COLORS[key], "symbol": "diamond"},
            # on a side of the marker the line leaves free (below-right or above-left where
            # the line rises), and away from the plot's top and bottom (the side labels)
            text=[f"{key.upper()} {pi:.3f}"],
            textposition=_free_side(_slope(grid, exact, pi), (yv - y0) / (y1 - y0),
                                    (yv - float(np.interp(pi, grid, exact))) / (y1 - y0)),
            textfont={"color": LABEL_COLORS[key], "size": 12},
            hovertemplate=(f"{_label_text(key)}: prevalence %{{x:.3f}}, actual gap "
                           "%{y:+.3f}<extra></extra>")))
    if current is not None:
        fig.add_trace(go.Scatter(x=[current, current], y=[y0, y1], mode="lines",
                                 name=f"π chosen = {current:.2f}", line=dict(_CURRENT),
                                 hoverinfo="skip"))
    # which side prefers which rule (for a > b, A wins above the crossover)
    shapes, notes = [], []
    for x0, x1 in ((0.0, midpoint), (midpoint, 1.0)):
        if not 0.0 <= x0 < x1 <= 1.0:
            continue
        gap_mid = float(np.interp((x0 + x1) / 2, grid, exact))
        win, col = (a_name, ca) if gap_mid > 0 else (b_name, cb)
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1,
                       "y0": 0, "y1": 1, "fillcolor": _rgba(col, 0.08), "line": {"width": 0},
                       "layer": "below"})
        text = f"{win} preferred" if gap_mid != 0 else "tie"
        x, anchor = _free_spot(x0, x1, 0.012 * len(text), [
            v for v in (current, midpoint, measured_crossover)
            if v is not None and np.isfinite(v)])
        notes.append({"text": text, "x": x, "xref": "x", "y": 0.99, "yref": "paper",
                      "xanchor": anchor, "yanchor": "top", "showarrow": False,
                      "font": {"size": 12, "color": col}})
    fig.update_layout(**_layout(height=height, title=title), shapes=shapes,
                      annotations=notes)
    fig.update_xaxes(title_text="Prevalence π of the label scored against", range=[0, 1])
    fig.update_yaxes(title_text=_gap_title(a_name, b_name),
                     range=[y0, y1])
    return fig


def label_source_figure(*, gap_y: float, t_omit: float, t_fp: float, gap_z: float,
                        names: Sequence[str], title: str | None = None,
                        height: int = 380) -> go.Figure:
    """Eq. (1)–(2) as a waterfall: the gap under Y, plus T_omit and T_fp, is the gap under Z.

    Parameters
    ----------
    gap_y, gap_z : float
        Δ_Y = R_Y(B) − R_Y(A) and Δ_Z = R_Z(B) − R_Z(A) (the app's convention).
    t_omit, t_fp : float
        2·E[(C_B − C_A)·1{Y=1, Z=0}] and −2·E[(C_B − C_A)·1{Y=0, Z=1}].
    names : (A, B)
    title, height : layout.

    Returns
    -------
    go.Figure
        One ``Waterfall`` trace: ``x`` = the four steps, ``y`` = (gap_y, t_omit, t_fp,
        gap_z), ``measure`` = (absolute, relative, relative, total). The total bar is drawn
        by Plotly as gap_y + t_omit + t_fp, which Eq. (1) says equals gap_z exactly.
    """
    a, b = names
    vals = [gap_y, t_omit, t_fp, gap_z]
    fig = go.Figure(go.Waterfall(
        x=["Δ under Y (truth)", "+ T_omit (omitted truths)", "+ T_fp (false matches)",
           "= Δ under Z (reference)"],
        y=vals, measure=["absolute", "relative", "relative", "total"],
        text=[f"{v:+.3f}" for v in vals], textposition="outside",
        increasing={"marker": {"color": LABEL_COLORS["z"]}},
        decreasing={"marker": {"color": LABEL_COLORS["y"]}},
        totals={"marker": {"color": NEUTRALS["slate"]}},
        connector={"line": {"color": REFERENCE_COLOR, "width": 1}},
        name=f"R({b}) − R({a})",
        hovertemplate="%{x}: %{y:+.4f}<extra></extra>"))
    fig.add_hline(y=0, line={"color": REFERENCE_COLOR, "width": 1})
    lo = min(0.0, *np.cumsum(vals[:3]), gap_z)
    hi = max(0.0, *np.cumsum(vals[:3]), gap_z)
    pad = 0.18 * max(hi - lo, 1e-3)
    fig.update_layout(**_layout(height=height, title=title, legend_below=False),
                      showlegend=False)
    fig.update_yaxes(title_text=_gap_title(a, b),
                     range=[lo - pad, hi + pad])
    return fig


def bridge_figure(analysis: pd.DataFrame, *, names: Sequence[str] = ("A", "B"),
                  title: str | None = None, height: int = 380) -> go.Figure:
    """Brier gaps of the bridge's two rules under Y and Z, overall and per question family.

    Parameters
    ----------
    analysis : DataFrame
        ``label, gap_y, gap_z, reverses`` with gaps Δ = R(B) − R(A) (the app's convention:
        :attr:`core.calibration.reversal_view.BridgeView.table`).
    names : (A, B), the two rules.
    title, height : layout.

    Returns
    -------
    go.Figure
        Trace 0: ``x`` = group labels, ``y`` = gap under Y; trace 1: the same under Z; trace
        2: markers above the groups whose ranking reverses.
    """
    a, b = names
    x = analysis["label"].astype(str).tolist()
    gy = analysis["gap_y"].to_numpy(float)
    gz = analysis["gap_z"].to_numpy(float)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=gy, name="under Y (answer = ground truth)",
                         marker={"color": LABEL_COLORS["y"]},
                         hovertemplate="%{x}: %{y:+.4f} under Y<extra></extra>"))
    fig.add_trace(go.Bar(x=x, y=gz, name="under Z (answer = the reference source)",
                         marker={"color": LABEL_COLORS["z"]},
                         hovertemplate="%{x}: %{y:+.4f} under Z<extra></extra>"))
    rev = analysis["reverses"].to_numpy(bool)
    top = np.maximum(gy, gz)
    fig.add_trace(go.Scatter(x=[v for v, r in zip(x, rev, strict=True) if r],
                             y=(top[rev] + 0.01 * max(np.ptp(np.r_[gy, gz]), 0.1)),
                             mode="markers+text", text=["reversed"] * int(rev.sum()),
                             textposition="top center", name="ranking reverses",
                             marker={"symbol": "triangle-down", "size": 11,
                                     "color": PAPER_COLOR}, hoverinfo="skip"))
    fig.add_hline(y=0, line={"color": REFERENCE_COLOR, "width": 1})
    fig.update_layout(**_layout(height=height, title=title), barmode="group")
    fig.update_yaxes(title_text=_gap_title(a, b))
    return fig


def system_accuracy_figure(table: pd.DataFrame, *, title: str | None = None,
                           height: int = 440) -> go.Figure:
    """Each system's accuracy by exact match (Z) and by humans (Y), joined by a line.

    Parameters
    ----------
    table : DataFrame
        :func:`core.calibration.nq301.system_accuracy` (``system, em_accuracy_labelled,
        human_accuracy, rank_em, rank_human``).
    title, height : layout.

    Returns
    -------
    go.Figure
        Trace 0: connectors; trace 1: ``x`` = exact-match accuracy (%), ``y`` = system;
        trace 2: ``x`` = human accuracy (%), ``y`` = system. Systems ordered by human rank
        (best on top).
    """
    t = table.sort_values("human_accuracy", kind="stable")
    sys_ = t["system"].astype(str).tolist()
    em = 100 * t["em_accuracy_labelled"].to_numpy(float)
    hu = 100 * t["human_accuracy"].to_numpy(float)
    cx, cy = [], []
    for s, e, h in zip(sys_, em, hu, strict=True):
        cx += [e, h, None]
        cy += [s, s, None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=cx, y=cy, mode="lines",
                             line={"color": NEUTRALS["light"], "width": 3},
                             showlegend=False, hoverinfo="skip", name="gain"))
    fig.add_trace(go.Scatter(
        x=em, y=sys_, mode="markers", name="exact match (Z)",
        marker={"size": 12, "color": LABEL_COLORS["z"]},
        customdata=t["rank_em"].to_numpy(),
        hovertemplate="%{y}: exact match %{x:.1f} % (rank %{customdata})<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=hu, y=sys_, mode="markers", name="humans (Y)",
        marker={"size": 12, "color": LABEL_COLORS["y"], "symbol": "diamond"},
        customdata=t["rank_human"].to_numpy(),
        hovertemplate="%{y}: humans %{x:.1f} % (rank %{customdata})<extra></extra>"))
    fig.update_layout(**_layout(height=height, title=title))
    fig.update_xaxes(title_text="Accuracy on the human-labelled predictions (%)")
    fig.update_yaxes(title_text="")
    return fig


# ------------------------------------------------------------------ pilots
_BUDGET_PANELS = (("rmse", "RMSE of the gap"), ("mean_width", "Mean interval width"),
                  ("coverage", "Coverage of Δ_Y"),
                  ("p_correct_direction", "P(correct direction)"),
                  ("false_termination", "False terminations"), ("escalation", "Escalations"))


def budget_marker_shapes(budget: float) -> list[dict]:
    """The chosen budget as one vertical line per panel of :func:`budget_curves_figure`.

    Direct layout shapes (``add_vline`` is slow per panel); pass them to
    :func:`core.figures.overlay.with_overlay` to mark a budget on a shared base figure.
    """
    shapes = []
    for k in range(len(_BUDGET_PANELS)):
        ax = "" if k == 0 else str(k + 1)
        shapes.append({"type": "line", "xref": f"x{ax}", "yref": f"y{ax} domain",
                       "x0": float(budget), "x1": float(budget), "y0": 0, "y1": 1,
                       "line": dict(_CURRENT)})
    return shapes


def budget_curves_figure(summary: pd.DataFrame, *, budget: float | None = None,
                         level: float = 0.95, title: str | None = None,
                         height: int = 520) -> go.Figure:
    """Table 5 panel A as curves over the pilot budget: human-only against TriSource-Restore.

    Parameters
    ----------
    summary : DataFrame
        :func:`core.calibration.pilot.budget_curve` (or the ``summary`` of
        :func:`core.calibration.nq301_pilot.real_pilot_budgets`): ``estimator, budget, rmse,
        mean_width, coverage, p_correct_direction, false_termination, escalation``.
    budget : float, optional
        The budget chosen on the page (a vertical line in every panel).
    level : float
        Nominal interval level (dotted line in the coverage panel).
    title, height : layout.

    Returns
    -------
    go.Figure
        2 × 3 panels in the order RMSE, width, coverage, P(correct direction), false
        terminations, escalations; in each, one trace per estimator with ``x`` = budget and
        ``y`` = the metric. The coverage panel (``xaxis3``) also has the trace
        "nominal 95 %" and, for an estimator whose ``coverage_all`` (over all pilots, a pilot
        without an interval counted as a miss) differs from its ``coverage`` at some budget, a
        dotted trace "<estimator>, over all pilots".
    """
    data = []
    ests = summary["estimator"].to_numpy()
    order = np.argsort(summary["budget"].to_numpy(float), kind="stable")
    rows = {est: order[ests[order] == est] for est in ("human_only", "trisource")}
    budgets = summary["budget"].to_numpy(float)
    for k, (col, _) in enumerate(_BUDGET_PANELS):
        xr, yr = axis_refs(k // 3 + 1, k % 3 + 1, 3)
        values = summary[col].to_numpy(float)
        for est, idx in rows.items():
            if idx.size == 0:
                continue
            data.append({
                "type": "scatter", "x": budgets[idx],
                "y": values[idx], "mode": "lines+markers",
                "name": ESTIMATOR_NAMES[est], "legendgroup": est, "showlegend": k == 0,
                "line": {"color": ESTIMATOR_COLORS[est], "width": 2.5,
                         "dash": "solid" if est == "trisource" else "dash"},
                "marker": {"size": 6, "color": ESTIMATOR_COLORS[est]},
                "hovertemplate": f"{ESTIMATOR_NAMES[est]}: budget %{{x:.0f}} → %{{y:.4f}}"
                                 "<extra></extra>", "xaxis": xr, "yaxis": yr})
        if col == "coverage" and "coverage_all" in summary.columns:
            # a pilot without an interval covers nothing: thin dotted lines where they part
            every = summary["coverage_all"].to_numpy(float)
            for est, idx in rows.items():
                if idx.size == 0 or np.allclose(every[idx], values[idx], equal_nan=True):
                    continue
                data.append({
                    "type": "scatter", "x": budgets[idx], "y": every[idx], "mode": "lines",
                    "name": f"{ESTIMATOR_NAMES[est]}, over all pilots", "legendgroup": est,
                    "showlegend": True,
                    "line": {"color": ESTIMATOR_COLORS[est], "width": 1.5, "dash": "dot"},
                    "hovertemplate": f"{ESTIMATOR_NAMES[est]}, over all pilots (no interval "
                                     "= miss): budget %{x:.0f} → %{y:.4f}<extra></extra>",
                    "xaxis": xr, "yaxis": yr})
        if col == "coverage":
            xs = budgets
            data.append({"type": "scatter", "x": [xs.min(), xs.max()], "y": [level, level],
                         "mode": "lines", "name": f"nominal {level:.0%}",
                         "line": dict(_PREVALENCE), "hoverinfo": "skip",
                         "xaxis": xr, "yaxis": yr})
    layout = {**_layout(height=height, title=title),
              **subplot_grid(2, 3, titles=[t for _, t in _BUDGET_PANELS],
                             horizontal_spacing=0.07, vertical_spacing=0.16),
              "shapes": budget_marker_shapes(budget) if budget is not None else []}
    cov = summary["coverage"].to_numpy(float)
    if "coverage_all" in summary.columns:
        cov = np.concatenate([cov, summary["coverage_all"].to_numpy(float)])
    if cov.size and np.isfinite(cov).any():  # no zoom into Monte Carlo noise around 95 %
        lo = max(0.0, min(0.85, float(np.nanmin(cov)) - 0.02, level - 0.05))
        layout["yaxis3"]["range"] = [lo, 1.005]
    for k in (4, 5, 6):
        layout[f"xaxis{k}"]["title"] = {"text": "Pilot budget (labels)"}
        layout[f"yaxis{k}"]["range"] = rate_axis_range(summary[_BUDGET_PANELS[k - 1][0]])
    for trace in data:  # a share of 0 or 1 sits on the axis edge: draw its marker whole
        if trace["yaxis"] in ("y4", "y5", "y6"):
            trace["cliponaxis"] = False
    return figure(data, layout)


def rate_axis_range(values) -> list[float]:
    """The y range of a panel of shares (rates in [0, 1]): from 0 to 1.1 × the largest one.

    ``[0, 1]`` when that reaches 1 or when no share is positive (a panel flat at 0 would
    autoscale to a meaningless range such as [−1, 0.5]); never below 0, never above 1.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    top = float(v.max()) if v.size else 0.0
    return [0.0, 1.0] if top <= 0 or 1.1 * top >= 1 else [0.0, 1.1 * top]


_HELDOUT = (("ref_raw", "reference-<br>selected<br>rule, raw"),
            ("ref_zplatt", "reference-<br>only<br>Z-Platt"),
            ("restored_raw", "restored<br>rule, raw"), ("pilot_only", "pilot-only<br>Platt"),
            ("trisource", "TriSource<br>repair"), ("full_y", "Platt on full<br>training Y"))


def heldout_figure(values: Mapping[str, float], *, title: str | None = None,
                   height: int = 360) -> go.Figure:
    """Table 5 panel B: held-out truth-Brier of each map (lower is better).

    Parameters
    ----------
    values : mapping
        :meth:`core.calibration.pilot.PilotSimulation.heldout_summary` as a dict
        (``ref_raw, ref_zplatt, restored_raw, pilot_only, trisource, full_y``).
    title, height : layout.

    Returns
    -------
    go.Figure
        One bar trace, ``x`` = the map's description, ``y`` = its held-out Brier; the
        full-training-Y comparator is also a dotted line.
    """
    keys = [k for k, _ in _HELDOUT if k in values]
    names = dict(_HELDOUT)
    ys = [float(values[k]) for k in keys]
    palette = {"ref_raw": LABEL_COLORS["z"], "ref_zplatt": PAPER_COLOR,
               "restored_raw": NEUTRALS["dark"], "pilot_only": ESTIMATOR_COLORS["human_only"],
               "trisource": ESTIMATOR_COLORS["trisource"], "full_y": LABEL_COLORS["y"]}
    data = [{"type": "bar", "x": [names[k] for k in keys], "y": ys,
             "marker": {"color": [palette[k] for k in keys]},
             "text": [f"{v:.4f}" for v in ys], "textposition": "outside",
             "name": "held-out Brier under Y",
             "hovertemplate": "%{x}: %{y:.4f}<extra></extra>"}]
    layout = {**_layout(height=height, title=title, legend_below=False), "showlegend": False,
              "xaxis": {"tickangle": 0},
              "yaxis": {"title": {"text": "Held-out Brier under Y (lower is better)"},
                        "rangemode": "tozero", "range": [0, 1.18 * max(ys) if ys else 1]}}
    if "full_y" in values:  # the full-training-Y comparator as a dotted line across
        y = float(values["full_y"])
        layout["shapes"] = [{"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1,
                             "y0": y, "y1": y, "line": dict(_PREVALENCE)}]
    return figure(data, layout)


def algorithm1_figure(steps: pd.DataFrame, *, delta_y: float | None = None,
                      names: Sequence[str] = ("A", "B"), level: float = 0.95,
                      title: str | None = None, height: int = 400) -> go.Figure:
    """One pilot walked through Algorithm 1: each look's interval and its decision.

    Parameters
    ----------
    steps : DataFrame
        :meth:`core.calibration.pilot_walk.Algorithm1Walk.to_frame` (``step, budget, n_usable,
        estimate, lo, hi, estimate_human, lo_human, hi_human, escalate``).
    delta_y : float, optional
        The full-frame truth gap (known in a simulation): a dashed line.
    names : (A, B)
        The two rules (axis title; Δ = R(B) − R(A), > 0 favours A).
    level : float
        Interval level (legend text).
    title, height : layout.

    Returns
    -------
    go.Figure
        Trace 0: "no difference" (y = 0); trace 1: human-only estimates with intervals;
        trace 2: TriSource-Restore estimates with intervals (``x`` = attempted budget of each
        look); markers say escalate (open) or terminate (filled); optionally "truth Δ_Y".
    """
    x = steps["budget"].to_numpy(float)
    span = [float(x.min()) - 5, float(x.max()) + 5] if x.size else [0, 1]
    data = [{"type": "scatter", "x": span, "y": [0, 0], "mode": "lines",
             "name": "no difference", "line": {"color": REFERENCE_COLOR, "width": 1},
             "hoverinfo": "skip"}]
    esc = steps["escalate"].to_numpy(bool)
    off = 0.012 * max(span[1] - span[0], 1)
    for est, e, lo, hi, shift in (("human_only", "estimate_human", "lo_human", "hi_human", -off),
                                  ("trisource", "estimate", "lo", "hi", off)):
        v = steps[e].to_numpy(float)
        lo_v, hi_v = steps[lo].to_numpy(float), steps[hi].to_numpy(float)
        col = ESTIMATOR_COLORS[est]
        data.append({
            "type": "scatter", "x": x + shift, "y": v, "mode": "markers+lines",
            "name": f"{ESTIMATOR_NAMES[est]} ({level * 100:.4g}% interval)",
            "line": {"color": col, "width": 1, "dash": "dot"},
            "marker": {"size": 11, "color": col,
                       "symbol": ["circle-open" if s else "circle" for s in esc]
                       if est == "trisource" else "square-open"},
            "error_y": {"type": "data", "array": hi_v - v, "arrayminus": v - lo_v,
                        "color": col, "thickness": 2 if est == "trisource" else 1.2},
            "customdata": np.column_stack([lo_v, hi_v]),
            "hovertemplate": (f"{ESTIMATOR_NAMES[est]}: %{{y:+.3f}} "
                              "[%{customdata[0]:+.3f}, %{customdata[1]:+.3f}]<extra></extra>")})
    if delta_y is not None and np.isfinite(delta_y):
        data.append({"type": "scatter", "x": span, "y": [delta_y, delta_y], "mode": "lines",
                     "name": f"truth Δ_Y = {delta_y:+.3f}",
                     "line": {"color": LABEL_COLORS["y"], "dash": "dash", "width": 1.5},
                     "hoverinfo": "skip"})
    a, b = names
    layout = {**_layout(height=height, title=title),
              "xaxis": {"title": {"text": "Attempted annotations at this look"}, "range": span},
              "yaxis": {"title": {"text": _gap_title(a, b)}}}
    return figure(data, layout)
