"""Figures of the Personal records page (seed 002, *Personal Dimension Benchmark v1: methods*,
§2, §4.1–§4.3): the facts on a timeline.

Pure builders: the ``facts`` frame of :class:`core.records.views.AsOfView` in,
:class:`plotly.graph_objects.Figure` out. Colours come from :mod:`.palette` (one per source
tier; every one reads on both themes); each status also has a symbol, so the figure reads in
greyscale.
"""

from __future__ import annotations

import datetime as _dt
from types import MappingProxyType

import pandas as pd
import plotly.graph_objects as go

from core.records.world import TIERS

from .palette import HUES
from .style import CURRENT_COLOR, REFERENCE_COLOR, titled_layout

__all__ = ["CONFLICT_COLOR", "TIER_COLORS", "timeline_figure"]

#: One colour per source tier (seed 002 §2: document scan 1 … self-reported 4).
TIER_COLORS = MappingProxyType({1: HUES["blue"], 2: HUES["green"], 3: HUES["amber"],
                                4: HUES["purple"]})
#: The mark of a record in a live conflict on the as-of date.
CONFLICT_COLOR = HUES["red"]
_KIND = {tier: kind for kind, tier in TIERS.items()}
_LANE = 0.28  # vertical offset of a record that overlaps another of its attribute


def _lanes(facts: pd.DataFrame, *, end: _dt.date) -> list[float]:
    """Row position of each fact: its attribute's row, shifted when it overlaps an earlier
    record of the same attribute (conflicting records stay visible side by side)."""
    rows = {a: k for k, a in enumerate(dict.fromkeys(facts["label"]))}
    placed: dict[str, list[tuple[_dt.date, _dt.date, int]]] = {}
    out = []
    for f in facts.itertuples():
        stop = f.valid_to or end
        taken = {lane for a, b, lane in placed.get(f.label, []) if a <= stop and f.valid_from <= b}
        lane = next(k for k in range(len(taken) + 1) if k not in taken)
        placed.setdefault(f.label, []).append((f.valid_from, stop, lane))
        out.append(rows[f.label] + _LANE * lane)
    return out


def timeline_figure(facts: pd.DataFrame, *, as_of: _dt.date, today: _dt.date,
                    start: _dt.date = _dt.date(2019, 1, 1), end: _dt.date | None = None,
                    title: str | None = None) -> go.Figure:
    """Every fact's validity interval as a bar on its attribute's row, coloured by tier.

    Parameters
    ----------
    facts : DataFrame
        Columns ``fact_id, label, value, valid_from, valid_to`` (``None``: open),
        ``source_id, kind, tier, in_conflict`` (:attr:`core.records.views.AsOfView.facts`).
    as_of, today : date
        Marked by vertical lines (one when equal).
    start, end : date
        The x range shown (``end`` default: a year after ``today``); open intervals run to
        ``end``, earlier starts are cut at ``start``.

    Returns
    -------
    go.Figure
        One line trace per tier present, then one marker trace of the records in a live
        conflict on ``as_of`` (``x`` = ``as_of``).
    """
    need = {"fact_id", "label", "value", "valid_from", "valid_to", "source_id", "kind", "tier",
            "in_conflict"}
    if not need <= set(facts.columns):
        raise ValueError(f"facts needs the columns {sorted(need - set(facts.columns))}")
    end = end or today + _dt.timedelta(days=365)
    if not start < end:
        raise ValueError(f"start {start} must be before end {end}")
    y = _lanes(facts, end=end)
    fig = go.Figure()
    for tier in sorted(set(facts["tier"])):
        xs, ys, text = [], [], []
        for f, yy in zip(facts.itertuples(), y, strict=True):
            if f.tier != tier:
                continue
            stop = f.valid_to or end
            hover = (f"{f.fact_id} {f.label}: {f.value}<br>{f.valid_from} to "
                     f"{f.valid_to or 'open'}<br>source {f.source_id}, {f.kind} (tier {tier})")
            xs += [max(f.valid_from, start), stop, None]
            ys += [yy, yy, None]
            text += [hover, hover, None]
        color = TIER_COLORS.get(tier, REFERENCE_COLOR)
        fig.add_trace(go.Scatter(  # end caps: back-to-back records of one tier stay apart
            x=xs, y=ys, mode="lines+markers", name=f"tier {tier}: {_KIND.get(tier, 'unknown')}",
            hovertext=text, hoverinfo="text", line={"color": color, "width": 7},
            marker={"symbol": "line-ns", "size": 13, "color": color,
                    "line": {"width": 2, "color": color}}))
    live = [(f, yy) for f, yy in zip(facts.itertuples(), y, strict=True) if f.in_conflict]
    fig.add_trace(go.Scatter(
        x=[as_of] * len(live), y=[yy for _, yy in live], mode="markers",
        name="disagreeing records on the as-of date",
        hovertext=[f"{f.fact_id}: {f.value} (tier {f.tier})" for f, _ in live],
        hoverinfo="text",
        marker={"symbol": "x", "size": 11, "color": CONFLICT_COLOR,
                "line": {"width": 1, "color": CONFLICT_COLOR}}))
    marks = [(today, "today", CURRENT_COLOR, "solid")]
    if as_of != today:
        marks.append((as_of, "as of", REFERENCE_COLOR, "dash"))
    labels = list(dict.fromkeys(facts["label"]))
    layout = titled_layout(height=max(320, 26 * len(labels) + 120), title=title, legend_rows=2)
    layout["shapes"] = [{"type": "line", "xref": "x", "yref": "paper", "x0": d, "x1": d,
                         "y0": 0, "y1": 1, "line": {"color": c, "width": 2, "dash": dash}}
                        for d, _, c, dash in marks]
    layout["annotations"] = [{"x": d, "y": 1, "xref": "x", "yref": "paper", "text": name,
                              "showarrow": False, "yanchor": "bottom",
                              "xanchor": "left" if name == "today" else "right",
                              "font": {"color": c, "size": 12}} for d, name, c, _ in marks]
    layout["xaxis"] = {"range": [start, end], "type": "date"}
    layout["yaxis"] = {"tickvals": list(range(len(labels))), "ticktext": labels,
                       "autorange": "reversed", "zeroline": False}
    fig.update_layout(layout)
    return fig
