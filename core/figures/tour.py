"""The tour's charts: one builder per chart kind of :mod:`core.tour.model`.

A stop hands :func:`stop_figure` a :class:`~core.tour.model.Chart` (data, titles, a reference
line) and gets one Plotly figure. Colours come from :mod:`core.figures.palette`; every
colour-coded status also has a symbol or a word beside it, so a printed, greyscale hand-out
still reads (issue 22, point 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.tour.model import Chart

from . import palette
from .style import LATENT_COLOR, REFERENCE_COLOR, titled_layout

__all__ = ["STATUS_LOOK", "stop_figure"]

#: Colour, symbol and legend words of each status an "answers" or "timeline" chart colours.
STATUS_LOOK: Mapping[str, tuple[str, str, str]] = MappingProxyType({
    "right": (palette.HUES["green"], "✓", "right"),
    "wrong": (palette.HUES["vermillion"], "✗", "wrong"),
    "none": (palette.NEUTRALS["mid"], "∅", "no answer"),
    "chosen": (palette.HUES["azure"], "●", "chosen"),
    "ignored": (palette.NEUTRALS["light"], "○", "set aside"),
    "expired": (palette.HUES["amber"], "⊘", "expired"),
})
_SERIES = (palette.HUES["azure"], palette.HUES["vermillion"], palette.HUES["green"],
           palette.HUES["violet"], palette.HUES["amber"], palette.HUES["sky"],
           palette.HUES["magenta"], palette.HUES["brown"])
_SYMBOLS = {"right": "circle", "wrong": "x", "none": "circle-open", "chosen": "circle",
            "ignored": "circle-open", "expired": "diamond"}


def _look(status: str) -> tuple[str, str, str]:
    return STATUS_LOOK.get(str(status), (LATENT_COLOR, "·", str(status)))


def _text(frame: pd.DataFrame) -> list[str] | None:
    return [str(t) for t in frame["text"]] if "text" in frame.columns else None


def _reference_line(fig: go.Figure, chart: Chart) -> None:
    """A vertical reference line at ``chart.marker`` with its label (works on date axes too,
    where Plotly's ``add_vline`` cannot place an annotation)."""
    if chart.marker is None:
        return
    fig.add_shape(type="line", x0=chart.marker, x1=chart.marker, xref="x", y0=0, y1=1,
                  yref="paper", line={"color": REFERENCE_COLOR, "dash": "dash", "width": 2})
    if chart.marker_label:
        fig.add_annotation(x=chart.marker, y=1, xref="x", yref="paper", yanchor="bottom",
                           text=chart.marker_label, showarrow=False,
                           font={"color": REFERENCE_COLOR, "size": 12})


def _finish(fig: go.Figure, chart: Chart, *, height: int, legend_rows: int = 1) -> go.Figure:
    fig.update_layout(**titled_layout(height=height, title=chart.title,
                                      legend_rows=legend_rows))
    fig.update_xaxes(title_text=chart.x_title or None, automargin=True)
    fig.update_yaxes(title_text=chart.y_title or None, automargin=True)
    if chart.y_range is not None:
        fig.update_yaxes(range=list(chart.y_range))
    _reference_line(fig, chart)
    return fig


def _answers(chart: Chart) -> go.Figure:
    """Who answered what: one row per source, resolver and the truth; the answers are the
    x categories, so agreeing sources line up in one column."""
    d = chart.data.reset_index(drop=True)
    who = [f"{w} · {g}" if "group" in d.columns and str(g) not in ("", "nan", "None") else str(w)
           for w, g in zip(d["who"], d["group"] if "group" in d.columns else [""] * len(d),
                           strict=True)]
    answers = [str(a) for a in d["answer"]]
    order = list(dict.fromkeys(answers))
    fig = go.Figure()
    hover = _text(d)
    is_truth = (d["role"].astype(str) == "truth").to_numpy()
    kinds = [("truth", (LATENT_COLOR, "◆", "the truth"))] + [
        (s, _look(s)) for s in dict.fromkeys(str(s) for s in d["status"][~is_truth])]
    for kind, (color, mark, words) in kinds:
        rows = [i for i in range(len(d)) if (is_truth[i] if kind == "truth" else
                                             not is_truth[i] and str(d["status"].iloc[i]) == kind)]
        if not rows:
            continue
        fig.add_trace(go.Scatter(
            x=[answers[i] for i in rows], y=[who[i] for i in rows], mode="markers+text",
            name=f"{mark} {words}", text=[f"  {mark}" for _ in rows], textposition="middle right",
            textfont={"color": color, "size": 16},
            marker={"color": color, "size": 16,
                    "symbol": "diamond" if kind == "truth" else _SYMBOLS.get(kind, "circle"),
                    "line": {"width": 2, "color": color}},
            hovertext=[hover[i] for i in rows] if hover else None,
            hoverinfo="text" if hover else "x+y"))
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=list(reversed(who)))
    return _finish(fig, chart, height=150 + 34 * len(d))


def _bars(chart: Chart) -> go.Figure:
    """Grouped bars with optional 95 % intervals (columns ``lo`` and ``hi``)."""
    d = chart.data
    fig = go.Figure()
    series = list(dict.fromkeys(d["series"].astype(str)))
    for i, name in enumerate(series):
        s = d[d["series"].astype(str) == name]
        err = None
        if {"lo", "hi"} <= set(d.columns):
            v = s["value"].to_numpy(float)
            err = {"type": "data", "symmetric": False,
                   "array": np.maximum(s["hi"].to_numpy(float) - v, 0),
                   "arrayminus": np.maximum(v - s["lo"].to_numpy(float), 0),
                   "color": REFERENCE_COLOR}
        hover = _text(s)
        fig.add_trace(go.Bar(x=s["group"].astype(str), y=s["value"], name=name,
                             marker_color=_SERIES[i % len(_SERIES)], error_y=err,
                             hovertext=hover, texttemplate=None if err else "%{y:.3~g}",
                             textposition="outside"))
    fig.update_layout(barmode="group")
    fig.update_xaxes(type="category")
    longest = max((len(str(g)) for g in d["group"]), default=0)
    legend_rows = 1 + len(series) // 3
    return _finish(fig, chart, height=380 + (4 * min(longest, 40) if longest > 18 else 0),
                   legend_rows=legend_rows)


def _lines(chart: Chart) -> go.Figure:
    """Lines over x, one per series; rows whose ``marker`` column is true are drawn large."""
    d = chart.data
    fig = go.Figure()
    for i, name in enumerate(dict.fromkeys(d["series"].astype(str))):
        s = d[d["series"].astype(str) == name]
        color = _SERIES[i % len(_SERIES)]
        fig.add_trace(go.Scatter(x=s["x"], y=s["y"], name=name, mode="lines",
                                 line={"color": color, "width": 2.5}, hovertext=_text(s)))
        if "marker" in s.columns and s["marker"].astype(bool).any():
            m = s[s["marker"].astype(bool)]
            fig.add_trace(go.Scatter(x=m["x"], y=m["y"], mode="markers", showlegend=False,
                                     marker={"color": color, "size": 12, "symbol": "diamond"},
                                     hovertext=_text(m)))
    return _finish(fig, chart, height=400)


def _days(chart: Chart) -> go.Figure:
    """A day strip: one row per series, one cell per day; a day without a record is grey
    and crossed (never drawn as zero)."""
    d = chart.data
    series = list(dict.fromkeys(d["series"].astype(str)))
    days = sorted(pd.unique(d["day"]))
    grid = (d.assign(series=d["series"].astype(str))
            .pivot_table(index="series", columns="day", values="value", aggfunc="first",
                         dropna=False)
            .reindex(index=series, columns=days))
    z = grid.to_numpy(float)
    text = None
    if "text" in d.columns:
        text = (d.assign(series=d["series"].astype(str))
                .pivot_table(index="series", columns="day", values="text", aggfunc="first")
                .reindex(index=series, columns=days).fillna("no record").to_numpy())
    fig = go.Figure(go.Heatmap(
        z=z, x=days, y=series, colorscale=[list(p) for p in palette.ACCURACY_SCALE],
        hovertext=text, hoverinfo="text" if text is not None else "x+y+z", xgap=2, ygap=4,
        colorbar={"thickness": 12, "len": 0.8}, hoverongaps=False))
    miss_y, miss_x = np.nonzero(np.isnan(z))
    if len(miss_x):
        fig.add_trace(go.Scatter(
            x=[days[j] for j in miss_x], y=[series[i] for i in miss_y], mode="markers",
            name="no record that day", marker={"symbol": "x-thin", "size": 10,
                                               "color": LATENT_COLOR,
                                               "line": {"width": 2, "color": LATENT_COLOR}},
            hoverinfo="skip"))
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=list(reversed(series)))
    fig.update_xaxes(dtick=1 if len(days) <= 31 else None,
                     range=[min(days) - 0.5, max(days) + 0.5])
    fig.update_layout(showlegend=bool(len(miss_x)))
    return _finish(fig, chart, height=170 + 46 * len(series))


def _timeline(chart: Chart) -> go.Figure:
    """Validity intervals: one bar per row from ``start`` to ``end`` (dates or numbers),
    coloured by status, with the as-of date as the reference line."""
    d = chart.data.reset_index(drop=True)
    is_date = not pd.api.types.is_numeric_dtype(d["start"])
    fig = go.Figure()
    rows = list(dict.fromkeys(d["row"].astype(str)))
    for status in dict.fromkeys(d["status"].astype(str)):
        s = d[d["status"].astype(str) == status]
        color, mark, words = _look(status)
        if is_date:
            start = pd.to_datetime(s["start"])
            end = pd.to_datetime(s["end"])
            width = (end - start).dt.total_seconds().to_numpy() * 1000.0
            base = start.dt.strftime("%Y-%m-%d").tolist()
        else:
            width = (s["end"].to_numpy(float) - s["start"].to_numpy(float))
            base = s["start"].to_numpy(float)
        fig.add_trace(go.Bar(x=width, base=base, y=s["row"].astype(str), orientation="h",
                             name=f"{mark} {words}", marker_color=color, hovertext=_text(s),
                             text=[mark] * len(s), textposition="inside",
                             insidetextanchor="start"))
    if is_date:
        fig.update_xaxes(type="date")
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=list(reversed(rows)))
    fig.update_layout(barmode="overlay")
    return _finish(fig, chart, height=170 + 40 * len(rows))


def _matrix(chart: Chart) -> go.Figure:
    """A heat map with each cell's value printed in it."""
    d = chart.data
    rows = list(dict.fromkeys(d["row"].astype(str)))
    cols = list(dict.fromkeys(d["col"].astype(str)))
    grid = (d.assign(row=d["row"].astype(str), col=d["col"].astype(str))
            .pivot_table(index="row", columns="col", values="value", aggfunc="first")
            .reindex(index=rows, columns=cols))
    z = grid.to_numpy(float)
    if "text" in d.columns:
        cell = (d.assign(row=d["row"].astype(str), col=d["col"].astype(str))
                .pivot_table(index="row", columns="col", values="text", aggfunc="first")
                .reindex(index=rows, columns=cols).fillna("").to_numpy())
    else:
        cell = np.vectorize(lambda v: "" if math.isnan(v) else f"{v:.3g}")(z)
    fig = go.Figure(go.Heatmap(z=z, x=cols, y=rows, text=cell, texttemplate="%{text}",
                               textfont={"color": palette.CELL_TEXT},
                               colorscale=[list(p) for p in palette.ACCURACY_SCALE],
                               xgap=2, ygap=2, colorbar={"thickness": 12}))
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(type="category", side="bottom")
    return _finish(fig, chart, height=200 + 36 * len(rows))


_BUILDERS: Mapping[str, Callable[[Chart], go.Figure]] = MappingProxyType({
    "answers": _answers, "bars": _bars, "lines": _lines, "days": _days,
    "timeline": _timeline, "matrix": _matrix,
})


def stop_figure(chart: Chart) -> go.Figure:
    """The figure of one stop's chart.

    Parameters
    ----------
    chart : Chart
        A stop's chart (:attr:`core.tour.model.StopView.chart`).

    Returns
    -------
    plotly.graph_objects.Figure
        Titled, with the axis titles, the reference line and a height that fits its rows.
    """
    if not isinstance(chart, Chart):
        raise ValueError(f"stop_figure draws a core.tour.model.Chart, not {type(chart).__name__}")
    return _BUILDERS[chart.kind](chart)
