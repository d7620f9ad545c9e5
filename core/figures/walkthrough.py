"""Figures of the walked-through example (seed 000 §8.6): latent days, source views, atom grid.

Pure builders: frames and arrays in, :class:`plotly.graph_objects.Figure` out. They are rebuilt
whenever the persona or question changes, so they assemble plain trace and layout dicts and
construct the figure unvalidated with :func:`core.figures.fast.figure` (the subplot axes come
from :func:`core.figures.fast.subplot_grid`, which reproduces ``make_subplots``);
``tests/test_figures_walkthrough.py`` re-validates every figure with Plotly's validator. Every
trace is SVG (``bar``, ``scatter``, ``heatmap``; no WebGL), so the figures render in headless
browsers and export cleanly. Colours come from :mod:`core.figures.style`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from types import MappingProxyType

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.evaluation.walkthrough import DayViews
from core.testbed.questions import QUESTIONS, SOURCE_LABELS, SOURCES
from core.testbed.vocab import IS_WEEKEND, N_DAYS
from core.testbed.words import label_words

from .fast import axis_refs, figure, subplot_grid
from .palette import CELL_TEXT, HUES, NEUTRALS, TRANSPARENT, translucent
from .style import (
    LATENT_COLOR,
    REFERENCE_COLOR,
    SOURCE_COLORS,
    STATUS_COLORS,
    STATUS_NAMES,
    STATUS_SYMBOLS,
    UNAVAILABLE_FILL,
    UNAVAILABLE_MARK,
    WEEKEND_FILL,
    base_layout,
)

__all__ = [
    "GRID_STATUS_CODES",
    "atom_grid_figure",
    "atom_grid_status",
    "clock_ticks",
    "source_days_figure",
    "timeline_figure",
]

_DAYS = np.arange(1, N_DAYS + 1)
_X_AXIS = MappingProxyType({"range": (0.5, N_DAYS + 0.5), "dtick": 1, "tickfont": {"size": 10}})


def clock_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Whole-hour ticks between ``lo`` and ``hi`` (hours after midnight of the day, so 24.5
    is 00:30 next morning), labelled ``HH:00``."""
    vals = list(range(int(np.floor(lo)), int(np.ceil(hi)) + 1))
    return [float(v) for v in vals], [f"{v % 24:02d}:00" for v in vals]


def _refs(row: int) -> tuple[str, str]:
    """Axis names of subplot ``row`` (1-based) in a one-column grid (``"x"``, ``"y2"`` …)."""
    return axis_refs(row, 1, 1)


def _on(row: int, trace: dict) -> dict:
    """``trace`` placed on subplot ``row`` (what ``add_trace(row=row, col=1)`` sets)."""
    xr, yr = _refs(row)
    trace["xaxis"], trace["yaxis"] = xr, yr
    return trace


def _yaxis(layout: dict, row: int) -> dict:
    """The layout dict of row ``row``'s y axis (from :func:`subplot_grid`)."""
    return layout["yaxis" + _refs(row)[1][1:]]


def _x_axes(layout: dict, rows: int, *, title: str) -> None:
    """The shared day axis on every row (``_X_AXIS``) and its title under the last row."""
    for r in range(1, rows + 1):
        layout["xaxis" + _refs(r)[0][1:]].update(
            range=list(_X_AXIS["range"]), dtick=_X_AXIS["dtick"],
            tickfont=dict(_X_AXIS["tickfont"]))
    layout["xaxis" + _refs(rows)[0][1:]]["title"] = {"text": title}


def _runs(days: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive runs of sorted day indices, as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    for d in np.asarray(days, dtype=int).tolist():
        if out and d == out[-1][1] + 1:
            out[-1] = (out[-1][0], d)
        else:
            out.append((d, d))
    return out


def _day_bands(days: np.ndarray, *, row: int, fill: str) -> list[dict]:
    """Shaded full-height bands over runs of days in subplot ``row`` (shape dicts)."""
    xr, yr = _refs(row)
    return [{"type": "rect", "xref": xr, "yref": f"{yr} domain", "x0": a - 0.5, "x1": b + 0.5,
             "y0": 0, "y1": 1, "fillcolor": fill, "line": {"width": 0}, "layer": "below"}
            for a, b in _runs(days)]


def _hline(y: float, *, row: int, text: str | None = None) -> tuple[list[dict], list[dict]]:
    """A dotted reference line across subplot ``row`` and its optional label."""
    xr, yr = _refs(row)
    shape = {"type": "line", "xref": f"{xr} domain", "yref": yr, "x0": 0, "x1": 1, "y0": y,
             "y1": y, "line": {"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5}}
    notes = [] if not text else [{"text": text, "xref": f"{xr} domain", "yref": yr, "x": 0,
                                  "y": y, "xanchor": "left", "yanchor": "bottom",
                                  "showarrow": False,
                                  "font": {"size": 11, "color": REFERENCE_COLOR}}]
    return [shape], notes


_SHIFT_LINE = MappingProxyType({"color": HUES["red"], "dash": "dash", "width": 2})


def _shift(shift_day: int | None, *, rows: Sequence[int]) -> tuple[list[dict], list[dict]]:
    """Dashed red lines before ``shift_day`` on every row, and the legend trace naming them.

    Returns ``(traces, shapes)``: no traces and no shapes without a shift day.
    """
    if not shift_day:
        return [], []
    trace = {"type": "scatter", "x": [None], "y": [None], "mode": "lines",
             "line": dict(_SHIFT_LINE), "name": f"habits shift (day {shift_day})",
             "hoverinfo": "skip"}
    shapes = []
    for r in rows:
        xr, yr = _refs(r)
        shapes.append({"type": "line", "xref": xr, "yref": f"{yr} domain",
                       "x0": shift_day - 0.5, "x1": shift_day - 0.5, "y0": 0, "y1": 1,
                       "line": dict(_SHIFT_LINE)})
    return [trace], shapes


def _bar(x, y, *, name: str, color: str, hovertemplate: str) -> dict:
    """A bar trace of one colour."""
    return {"type": "bar", "x": x, "y": y, "name": name, "marker": {"color": color},
            "hovertemplate": hovertemplate}


# ---------------------------------------------------------------- latent timeline
def timeline_figure(
    days: pd.DataFrame,
    *,
    topic: str,
    shift_day: int | None = None,
    threshold: float | None = None,
    threshold_label: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """The 30 latent days (L2) of one persona for one topic.

    Parameters
    ----------
    days : DataFrame
        30 rows from :func:`core.evaluation.walkthrough.latent_days` (``day_index`` and the
        event fields).
    topic : {"sleep", "work", "diet", "social", "exercise"}
    shift_day : int, optional
        First day with shifted habits; drawn as a dashed red line on every panel, named by
        a last legend-only trace ``habits shift (day …)``.
    threshold : float, optional
        The question's threshold on the main quantity (e.g. 7 h for A1), drawn dotted
        (sleep: on the duration panel and only below 20 h; work: on the hours; ignored for
        the other topics).
    threshold_label : str, optional
        Text beside the threshold line.
    height : int, optional
        Figure height in pixels (default 420 for sleep, 300 otherwise).

    Returns
    -------
    go.Figure
        x is the day index 1–30 on every panel; weekends are shaded. Sleep has two rows
        (titled): row 1 (``x``/``y``) the bedtime as a line with clock ticks and a dotted
        midnight, row 2 (``x2``/``y2``) the duration as bars. The other topics have one
        panel: work bars for normal and overtime days (overlaid) and stars on worked
        weekend days; diet bars home-cooked, fast food, other (stacked, summing to the
        meals); social bars voluntary and obligation (stacked); exercise bars intentional
        and incidental minutes (overlaid) with a dotted 30 min line.
    """
    x = days["day_index"].to_numpy()
    extra: list[tuple[list[dict], list[dict]]] = []
    data: list[dict] = []
    if topic == "sleep":
        layout = subplot_grid(2, 1, shared_xaxes=True, vertical_spacing=0.12,
                              titles=("Bedtime", "Sleep duration (h)"), title_size=16)
        bed = days["bedtime_h"].to_numpy(float)
        data.append(_on(1, {
            "type": "scatter", "x": x, "y": bed, "mode": "lines+markers", "name": "bedtime",
            "line": {"color": LATENT_COLOR}, "marker": {"size": 7},
            "hovertemplate": "day %{x}: bed at %{customdata}<extra></extra>",
            "customdata": [f"{int(round(v * 60)) // 60 % 24:02d}:{int(round(v * 60)) % 60:02d}"
                           for v in bed]}))
        tv, tt = clock_ticks(min(bed.min(), 23.0) - 0.25, max(bed.max(), 24.0) + 0.25)
        layout["yaxis"].update(tickvals=tv, ticktext=tt)
        extra.append(_hline(24.0, row=1, text="midnight"))
        dur = days["duration_h"].to_numpy(float)
        data.append(_on(2, _bar(x, dur, name="sleep (h)", color=LATENT_COLOR,
                                hovertemplate="day %{x}: %{y:.1f} h<extra></extra>")))
        if threshold is not None and threshold < 20:
            extra.append(_hline(threshold, row=2, text=threshold_label))
        rows = [1, 2]
    elif topic == "work":
        layout = subplot_grid(1, 1)
        hours = days["hours"].to_numpy(float)
        over = days["overtime"].to_numpy(bool)
        wk = days["worked_on_weekend"].to_numpy(bool)
        data.append(_bar(x, np.where(~over, hours, np.nan), name="work hours",
                         color=LATENT_COLOR,
                         hovertemplate="day %{x}: %{y:.1f} h<extra></extra>"))
        data.append(_bar(x, np.where(over, hours, np.nan), name="overtime day (> 9 h)",
                         color=HUES["rust"],
                         hovertemplate="day %{x}: %{y:.1f} h (overtime)<extra></extra>"))
        data.append({"type": "scatter", "x": x[wk], "y": hours[wk] + 0.6, "mode": "markers",
                     "name": "weekend day worked",
                     "marker": {"symbol": "star", "size": 11, "color": HUES["rust"]},
                     "hovertemplate": "day %{x}: weekend work<extra></extra>"})
        layout["barmode"] = "overlay"
        layout["yaxis"]["title"] = {"text": "hours"}
        if threshold is not None:
            extra.append(_hline(threshold, row=1, text=threshold_label))
        rows = [1]
    elif topic == "diet":
        layout = subplot_grid(1, 1)
        meals = days["meals"].to_numpy(int)
        home = days["home_cooked"].to_numpy(int)
        fast = days["fast_food"].to_numpy(int)
        other = meals - home - fast
        for y, name, color in ((home, "home-cooked", HUES["forest"]),
                               (fast, "fast food / delivery", HUES["rust"]),
                               (other, "other outside meal", NEUTRALS["light"])):
            data.append(_bar(x, y, name=name, color=color,
                             hovertemplate=f"day %{{x}}: %{{y}} {name}<extra></extra>"))
        layout["barmode"] = "stack"
        layout["yaxis"].update(title={"text": "meals"}, dtick=1)
        rows = [1]
    elif topic == "social":
        layout = subplot_grid(1, 1)
        n = days["n_act"].to_numpy(int)
        oblig = days["supporting_other"].to_numpy(bool)
        data.append(_bar(x, np.where(oblig, 0, n), name="voluntary activities",
                         color=LATENT_COLOR,
                         hovertemplate="day %{x}: %{y} voluntary<extra></extra>"))
        data.append(_bar(x, np.where(oblig, n, 0), name="obligation (supporting others)",
                         color=HUES["ochre"],
                         hovertemplate="day %{x}: %{y} obligatory<extra></extra>"))
        layout["barmode"] = "stack"
        layout["yaxis"].update(title={"text": "activities"}, dtick=1)
        rows = [1]
    elif topic == "exercise":
        layout = subplot_grid(1, 1)
        mins = days["exercise_min"].to_numpy(float)
        did = days["did_exercise"].to_numpy(bool)
        intent = days["intentional"].to_numpy(bool)
        data.append(_bar(x, np.where(did & intent, mins, np.nan),
                         name="intentional session", color=LATENT_COLOR,
                         hovertemplate="day %{x}: %{y:.0f} min, intentional<extra></extra>"))
        data.append(_bar(x, np.where(did & ~intent, mins, np.nan),
                         name="incidental movement", color=NEUTRALS["light"],
                         hovertemplate="day %{x}: %{y:.0f} min, incidental<extra></extra>"))
        layout["barmode"] = "overlay"
        layout["yaxis"]["title"] = {"text": "minutes"}
        extra.append(_hline(30.0, row=1, text="30 min"))
        rows = [1]
    else:
        raise ValueError(f"unknown topic {topic!r} (expected sleep, work, diet, social or "
                         "exercise)")
    shapes: list[dict] = []
    notes: list[dict] = layout.pop("annotations", [])  # the subplot titles come first
    for r in rows:
        shapes += _day_bands(_DAYS[IS_WEEKEND], row=r, fill=WEEKEND_FILL)
    for sh, nt in extra:
        shapes += sh
        notes += nt
    legend, lines = _shift(shift_day, rows=rows)
    data += legend
    layout["shapes"] = shapes + lines
    if notes:
        layout["annotations"] = notes
    _x_axes(layout, len(rows), title="day (1 = Sat 3 Jan 2026; shaded = weekend)")
    layout.update(base_layout(height=height or (420 if len(rows) > 1 else 300)))
    return figure(data, layout)


# ---------------------------------------------------------------- source views
def source_days_figure(views: DayViews, *, height: int | None = None) -> go.Figure:
    """Each source's view of the same 30 days, one row per source, truth overlaid.

    Parameters
    ----------
    views : DayViews
        From :func:`core.evaluation.walkthrough.day_views`.
    height : int, optional
        Figure height in pixels (default 760).

    Returns
    -------
    go.Figure
        Row ``r`` (1-based, axes ``x{r}``/``y{r}``, ``x``/``y`` for row 1) shows
        ``SOURCES[r - 1]`` in its own colour, titled above it: bars of the daily values
        (points joined by lines for bedtimes). Days whose record was lost get a grey band
        and a ``✕`` marker (a trace named ``record unavailable``); the profile's snapshot is
        a flat line over its anchor window and dotted after it; a source with no field for
        the quantity gets an invisible placeholder trace and says so in its row. Where a
        source reports the latent quantity in the same unit, the truth is overlaid as grey
        ticks (traces ``latent truth (L2)``). A last legend-only trace names the dashed
        shift line, if there is one. Bars are overlaid; y starts at zero except for bedtimes.
    """
    frame = views.frame
    by_source = dict(tuple(frame.groupby("source", sort=False)))  # one split, rows in order
    titles = [f"<b>{SOURCE_LABELS[src]}</b> · {by_source[src]['quantity'].iloc[0]}"
              for src in SOURCES]
    nrows = len(SOURCES)
    layout = subplot_grid(nrows, 1, shared_xaxes=True, vertical_spacing=0.055)
    data: list[dict] = []
    legend_done: set[str] = set()
    shapes: list[dict] = []
    # row titles, left-aligned above each row
    notes: list[dict] = [
        {"text": t, "x": 0, "xref": "paper", "yref": "paper",
         "y": _yaxis(layout, r)["domain"][1], "xanchor": "left",
         "yanchor": "bottom", "showarrow": False, "font": {"size": 13}}
        for r, t in enumerate(titles, start=1)]
    for r, src in enumerate(SOURCES, start=1):
        sub = by_source[src]
        x = sub["day_index"].to_numpy()
        v = sub["value"].to_numpy(float)
        avail = sub["available"].to_numpy(bool)
        truth = sub["truth"].to_numpy(float)
        kind = sub["kind"].iloc[0]
        comparable = bool(sub["comparable"].iloc[0])
        color = SOURCE_COLORS[src]
        yaxis = _yaxis(layout, r)
        if kind == "absent":
            data.append(_on(r, {"type": "scatter", "x": [1, N_DAYS], "y": [0, 1],
                                "mode": "markers", "marker": {"opacity": 0},
                                "hoverinfo": "skip", "showlegend": False}))
            xr, yr = _refs(r)
            notes.append({"x": 0.5, "y": 0.5, "xref": f"{xr} domain", "yref": f"{yr} domain",
                          "text": f"{sub['quantity'].iloc[0]} in this source",
                          "showarrow": False, "font": {"size": 12, "color": LATENT_COLOR}})
            yaxis.update(showticklabels=False, showgrid=False)
            continue
        if kind == "snapshot":
            end = views.anchor_end
            data.append(_on(r, {
                "type": "scatter", "x": [0.5, end + 0.5], "y": [v[0], v[0]], "mode": "lines",
                "name": SOURCE_LABELS[src], "line": {"color": color, "width": 4},
                "showlegend": False,
                "hovertemplate": f"snapshot of days 1–{end}: %{{y:.2f}}<extra></extra>"}))
            data.append(_on(r, {
                "type": "scatter", "x": [end + 0.5, N_DAYS + 0.5], "y": [v[0], v[0]],
                "mode": "lines", "showlegend": False,
                "line": {"color": color, "width": 2, "dash": "dot"},
                "hovertemplate": "stale: the snapshot does not see these days"
                                 "<extra></extra>"}))
            if end < N_DAYS:
                shapes += _day_bands(np.arange(end + 1, N_DAYS + 1), row=r,
                                     fill=translucent(SOURCE_COLORS["profile_ltm"], 0.07))
                xr, yr = _refs(r)
                notes.append({"x": N_DAYS + 0.5, "y": 0, "xref": xr, "yref": f"{yr} domain",
                              "xanchor": "right", "yanchor": "bottom", "showarrow": False,
                              "text": f"stale: the snapshot covers days 1–{end} only",
                              "font": {"size": 10, "color": LATENT_COLOR}})
        elif views.metric == "bedtime":  # clock times: points, not bars from zero
            data.append(_on(r, {
                "type": "scatter", "x": x, "y": np.where(avail, v, np.nan),
                "name": SOURCE_LABELS[src], "mode": "lines+markers",
                "line": {"color": color, "width": 1.5}, "marker": {"color": color, "size": 8},
                "showlegend": False, "connectgaps": False,
                "hovertemplate": ("day %{x}: %{y:.2f} h<extra>" + SOURCE_LABELS[src]
                                  + "</extra>")}))
        else:
            bar = _bar(x, np.where(avail, v, np.nan), name=SOURCE_LABELS[src], color=color,
                       hovertemplate=("day %{x}: %{y:.2f}<extra>" + SOURCE_LABELS[src]
                                      + "</extra>"))
            bar["showlegend"] = False
            data.append(_on(r, bar))
        if comparable:
            first = "truth" not in legend_done
            legend_done.add("truth")
            data.append(_on(r, {
                "type": "scatter", "x": x, "y": truth, "mode": "markers",
                "name": "latent truth (L2)", "legendgroup": "truth", "showlegend": first,
                "marker": {"symbol": "line-ew-open", "size": 16, "color": LATENT_COLOR,
                           "line": {"width": 2.5, "color": LATENT_COLOR}},
                "hovertemplate": "day %{x}: truth %{y:.2f}<extra></extra>"}))
            if views.threshold is not None:
                sh, _ = _hline(views.threshold, row=r)
                shapes += sh
        lo = hi = None
        if kind == "snapshot" and views.metric != "bedtime":
            top = max(float(np.nanmax(np.r_[v[:1], truth if comparable else []])), 0.0)
            yaxis["range"] = [0, top * 1.3 if top > 0 else 1]
        if views.metric == "bedtime":
            lo = np.floor(np.nanmin(np.r_[v[avail], truth, 23.0])) - 0.25
            hi = np.nanmax(np.r_[v[avail], truth, 24.0]) + 0.25
            tv, tt = clock_ticks(lo, hi)
            yaxis.update(tickvals=tv, ticktext=tt, range=[float(lo), float(hi)])
        gone = x[~avail]
        if gone.size:
            shapes += _day_bands(gone, row=r, fill=UNAVAILABLE_FILL)
            first = "gone" not in legend_done
            legend_done.add("gone")
            data.append(_on(r, {
                "type": "scatter", "x": gone,
                "y": np.full(gone.size, 0.0 if lo is None else lo + 0.3),
                "mode": "markers", "name": "record unavailable", "cliponaxis": False,
                "legendgroup": "gone", "showlegend": first,
                "marker": {"symbol": "x-thin-open", "size": 11, "color": UNAVAILABLE_MARK,
                           "line": {"width": 2, "color": UNAVAILABLE_MARK}},
                "hovertemplate": "day %{x}: record unavailable (dropout)<extra></extra>"}))
    rows = range(1, nrows + 1)
    for r in rows:
        shapes += _day_bands(_DAYS[IS_WEEKEND], row=r, fill=WEEKEND_FILL)
    legend, lines = _shift(views.shift_day, rows=rows)
    data += legend
    layout["shapes"] = shapes + lines
    if notes:
        layout["annotations"] = notes
    _x_axes(layout, nrows, title="day")
    if views.metric != "bedtime":
        for r in rows:
            _yaxis(layout, r)["rangemode"] = "tozero"
    layout.update(base_layout(height=height or 760))
    layout["barmode"] = "overlay"
    return figure(data, layout)


# ---------------------------------------------------------------- atom grid
#: z value of each status in :func:`atom_grid_figure`.
GRID_STATUS_CODES = MappingProxyType({"na": 0, "null": 1, "agree": 2, "disagree": 3, "gt": 4})


def atom_grid_status(gt_codes: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    """Status of every cell of the atom grid: ``agree`` / ``disagree`` / ``null`` / ``na``.

    Parameters
    ----------
    gt_codes : ndarray of shape (18,)
    atoms : ndarray of shape (18, 5), ``-1`` = no atom

    Returns
    -------
    ndarray of shape (18, 5), str
        ``na`` for a missing atom of a source that is not informative for the question
        (spec §2.4), ``null`` for a missing atom of an informative source.
    """
    gt = np.asarray(gt_codes).astype(int)
    at = np.asarray(atoms).astype(int)
    if gt.shape != (len(QUESTIONS),) or at.shape != (len(QUESTIONS), len(SOURCES)):
        raise ValueError(f"expected shapes (18,) and (18, 5), got {gt.shape} and {at.shape}")
    informative = np.array([[s in q.informative for s in SOURCES] for q in QUESTIONS])
    return np.select([(at < 0) & ~informative, at < 0, at == gt[:, None]],
                     ["na", "null", "agree"], "disagree")


#: Characters per line of an atom-grid cell: a cell is about 100 px wide at a 1280 px window.
_CELL_CHARS = 17
#: Lines a cell may take: the longest answer in words (47 characters) needs three.
_CELL_LINES = 3
#: Pixels per row of the atom grid: a line of 11 px text is 14.3 px high, plus the 3 px gap
#: between rows and a little air.
_ROW_BASE, _ROW_LINE = 3.5, 14.3


def _short(label: str, n: int = _CELL_CHARS) -> str:
    """``label`` in at most :data:`_CELL_LINES` lines of ``n`` characters (``<br>``), so a
    cell never clips; the rows grow to the lines used (:func:`atom_grid_figure`)."""
    lines = textwrap.wrap(label.replace("_", " "), n) or [""]
    if len(lines) > _CELL_LINES:
        keep = _CELL_LINES - 1
        lines = [*lines[:keep], textwrap.shorten(" ".join(lines[keep:]), n, placeholder="…")]
    return "<br>".join(lines)


def atom_grid_figure(
    gt_codes: np.ndarray,
    atoms: np.ndarray,
    *,
    highlight: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """The 18 × 5 grid of direct-readout atoms μ* beside ground truth, as a coloured table.

    Parameters
    ----------
    gt_codes : ndarray of shape (18,)
        Ground-truth display codes of one persona.
    atoms : ndarray of shape (18, 5)
        μ* codes of the five sources, ``-1`` = no atom.
    highlight : str, optional
        Question id whose row gets a frame.
    height : int, optional
        Pixels; by default each row is as high as its tallest cell needs (two lines: 640 px
        in all, three lines: about 915).

    Returns
    -------
    go.Figure
        One heatmap trace (``atoms``) with ``z`` of shape (18, 6): column 0 is GT
        (``GRID_STATUS_CODES["gt"]``), columns 1–5 the sources in ``SOURCES`` order, coded by
        :data:`GRID_STATUS_CODES`. Cell text is a symbol (✓ ✗ ∅ —) and the answer in words
        (:func:`core.testbed.words.label_words`); hover gives the full words. Four
        legend-only scatter traces (agree, disagree, null, n/a) explain the colours; the
        highlighted row, if any, is the only shape.
    """
    status = atom_grid_status(gt_codes, atoms)
    gt = np.asarray(gt_codes).astype(int)
    at = np.asarray(atoms).astype(int)
    nq = len(QUESTIONS)
    z = np.zeros((nq, len(SOURCES) + 1), dtype=int)
    text = np.empty(z.shape, dtype=object)
    hover = np.empty(z.shape, dtype=object)
    for j, q in enumerate(QUESTIONS):
        g = label_words(q.qid, q.labels[gt[j]]) if gt[j] >= 0 else "—"  # words, not labels
        z[j, 0] = GRID_STATUS_CODES["gt"]
        text[j, 0] = f"● {_short(g)}"
        hover[j, 0] = f"{q.qid} {q.title}<br>ground truth: <b>{g}</b>"
        for s, src in enumerate(SOURCES):
            st = status[j, s]
            z[j, s + 1] = GRID_STATUS_CODES[st]
            lab = label_words(q.qid, q.labels[at[j, s]]) if at[j, s] >= 0 else ""
            text[j, s + 1] = f"{STATUS_SYMBOLS[st]} {_short(lab)}".rstrip()
            hover[j, s + 1] = (f"{q.qid} · {SOURCE_LABELS[src]}<br>μ* = <b>{lab or '⊥'}</b>"
                               f" ({STATUS_NAMES[st]})<br>GT = {g}")
    order = ["na", "null", "agree", "disagree", "gt"]
    scale = [[GRID_STATUS_CODES[k] / 4, STATUS_COLORS[k]] for k in order]
    columns = ["Ground truth"] + [SOURCE_LABELS[s].replace(" (long-term memory)", "")
                                  for s in SOURCES]
    data = [{
        "type": "heatmap", "z": z, "x": list(range(z.shape[1])), "y": list(range(nq)),
        "text": text, "customdata": hover, "texttemplate": "%{text}",
        "textfont": {"size": 11, "color": CELL_TEXT},
        "hovertemplate": "%{customdata}<extra></extra>", "colorscale": scale, "zmin": 0,
        "zmax": 4, "showscale": False, "xgap": 3, "ygap": 3, "name": "atoms"}]
    for k in ("agree", "disagree", "null", "na"):
        data.append({
            "type": "scatter", "x": [None], "y": [None], "mode": "markers",
            "name": f"{STATUS_SYMBOLS[k]} {STATUS_NAMES[k]}",
            "marker": {"symbol": "square", "size": 14, "color": STATUS_COLORS[k],
                       "line": {"width": 1, "color": REFERENCE_COLOR}}})
    layout = {
        "xaxis": {"tickvals": list(range(len(columns))), "ticktext": columns, "side": "top",
                  "showgrid": False, "zeroline": False, "tickfont": {"size": 12}},
        "yaxis": {"tickvals": list(range(nq)),
                  "ticktext": [f"<b>{q.qid}</b> {q.title}" for q in QUESTIONS],
                  "autorange": "reversed", "showgrid": False, "zeroline": False,
                  "tickfont": {"size": 12}},
    }
    if highlight is not None:
        j = [q.qid for q in QUESTIONS].index(highlight)
        layout["shapes"] = [{"type": "rect", "x0": -0.5, "x1": len(columns) - 0.5,
                             "y0": j - 0.5, "y1": j + 0.5,
                             "line": {"color": HUES["royal"], "width": 3},
                             "fillcolor": TRANSPARENT}]
    if height is None:
        lines = max(str(t).count("<br>") + 1 for t in text.ravel())
        height = max(640, round(80 + nq * (_ROW_BASE + _ROW_LINE * lines)))
    layout.update(base_layout(height=height))
    layout["legend"] = {"orientation": "h", "yanchor": "top", "y": -0.01, "x": 0,
                        "font": {"size": 12}}
    layout["margin"] = {"l": 10, "r": 10, "t": 40, "b": 40}
    layout["plot_bgcolor"] = TRANSPARENT
    return figure(data, layout)
