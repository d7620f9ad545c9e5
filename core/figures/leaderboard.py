"""Figures of the Leaderboard page: forest plot, accuracy heatmaps, reachability slices and
per-source reliability (seed 000 §4, §11; ``reference/testbed-spec.md`` §2.12, §2.14).

Pure builders: the frames of :mod:`core.evaluation.tables` and
:mod:`core.evaluation.diagnostics` in, :class:`plotly.graph_objects.Figure` out. SVG traces
only; one colour per method and per source (:mod:`core.figures.style`); the paper's numbers are
drawn as open red diamonds wherever the paper reports one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.evaluation.run import METHOD_LABELS
from core.testbed.questions import SOURCE_LABELS, SOURCES

from .palette import ACCURACY_SCALE, CELL_TEXT, HUES, NEUTRALS
from .style import (
    NOMINAL_COLOR,
    PAPER_COLOR,
    REFERENCE_COLOR,
    SOURCE_COLORS,
    method_color,
    titled_layout,
)

__all__ = [
    "DIFFICULTY_LABELS",
    "IMPORTED_COLOR",
    "axis_label",
    "difficulty_heatmap",
    "forest_figure",
    "slices_figure",
    "source_reliability_figure",
    "type_heatmap",
]

DIFFICULTY_LABELS = {"stable": "stable", "temporal_shift": "temporal shift",
                     "stated_vs_revealed": "stated vs revealed"}

_PAPER_MARKER = {"symbol": "diamond-open", "size": 11, "color": PAPER_COLOR,
                 "line": {"width": 2, "color": PAPER_COLOR}}
# forest plot: the reference values are vertical ticks through the row, under the dot
_PAPER_TICK = {"symbol": "line-ns-open", "size": 24, "color": PAPER_COLOR,
               "line": {"width": 3, "color": PAPER_COLOR}}
_REGEN_TICK = {"symbol": "line-ns-open", "size": 14, "color": NOMINAL_COLOR,
               "line": {"width": 2.5, "color": NOMINAL_COLOR}}
# forest plot: imported LLM answers are open squares of one colour that no resolver uses
IMPORTED_COLOR = HUES["magenta"]
_IMPORTED_MARKER = {"symbol": "square-open", "size": 11, "color": IMPORTED_COLOR,
                    "line": {"width": 2.5, "color": IMPORTED_COLOR}}


def _label(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def axis_label(method: str) -> str:
    """A method's name for a category axis: no parenthetical, words on separate lines."""
    name = METHOD_LABELS.get(method, method).split(" (")[0]
    return name.replace("Majority ", "Majority<br>").replace("Source ", "Source<br>").replace(
        "Dawid–Skene", "Dawid–<br>Skene")


def forest_figure(table: pd.DataFrame, *, methods: Sequence[str] | None = None,
                  title: str | None = None, imported: pd.DataFrame | None = None) -> go.Figure:
    """Forced accuracy with its 95 % interval per method, paper and regenerated values marked.

    Parameters
    ----------
    table : DataFrame
        :func:`core.evaluation.tables.main_table` (``method``, ``accuracy``, ``ci_low``,
        ``ci_high``, ``paper``, ``regenerated``; percent).
    methods : sequence of str, optional
        Methods to show (default: every row); rows are sorted by accuracy, best on top.
    title : str, optional
    imported : DataFrame, optional
        Rows of imported LLM answers (:func:`core.evaluation.llm_rows.llm_rows`'s frame:
        ``method``, ``label``, ``accuracy``, ``ci_low``, ``ci_high``, ``paper``), always
        shown, sorted in with the methods and drawn as open squares of one colour.

    Returns
    -------
    go.Figure
        Trace 0: the paper's values (red ticks); trace 1: the released code's regenerated
        values (grey ticks) — both skip rows without a reported number; trace 2, drawn on
        top: our accuracies (``x``) with asymmetric error bars to the interval ends; trace 3,
        only with ``imported`` rows: theirs, in the same form.
    """
    t = table if methods is None else table[table["method"].isin(list(methods))]
    t = t.assign(_llm=False)
    if imported is not None and len(imported):
        llm = imported[["method", "label", "accuracy", "ci_low", "ci_high", "paper"]].assign(
            regenerated=np.nan, _llm=True)
        t = pd.concat([t, llm], ignore_index=True) if len(t) else llm
    t = t.sort_values("accuracy", kind="stable")
    llm_row = t["_llm"].to_numpy(bool)
    labels = [str(lab) if is_llm else _label(m)
              for m, lab, is_llm in zip(t["method"], t.get("label", t["method"]), llm_row,
                                        strict=True)]
    acc = t["accuracy"].to_numpy(float)
    fig = go.Figure()
    for col, name, marker in (("paper", "memory-benchmark paper", _PAPER_TICK),
                              ("regenerated", "released code, regenerated", _REGEN_TICK)):
        vals = t[col].to_numpy(float) if col in t else np.full(len(t), np.nan)
        keep = np.isfinite(vals)
        fig.add_trace(go.Scatter(
            x=vals[keep], y=[lab for lab, k in zip(labels, keep, strict=True) if k],
            mode="markers", name=name, marker=dict(marker),
            hovertemplate=f"%{{y}}: {name} %{{x:.1f}} %<extra></extra>"))
    groups = [(~llm_row, "this run (95 % CI)",
               {"size": 11, "color": [method_color(m) for m in t["method"][~llm_row]]})]
    if llm_row.any():
        groups.append((llm_row, "imported model answers (95 % CI)", _IMPORTED_MARKER))
    for rows, name, marker in groups:
        a, r = acc[rows], t[rows]
        fig.add_trace(go.Scatter(
            x=a, y=[lab for lab, k in zip(labels, rows, strict=True) if k], mode="markers",
            name=name, marker=marker,
            error_x={"type": "data", "symmetric": False,
                     "array": r["ci_high"].to_numpy(float) - a,
                     "arrayminus": a - r["ci_low"].to_numpy(float),
                     "color": REFERENCE_COLOR, "thickness": 1.5, "width": 4},
            customdata=np.stack([r["ci_low"].to_numpy(float), r["ci_high"].to_numpy(float)],
                                axis=1),
            hovertemplate="%{y}: %{x:.1f} % [%{customdata[0]:.1f}, %{customdata[1]:.1f}]"
                          "<extra></extra>"))
    fig.update_layout(**titled_layout(height=110 + 34 * len(t), title=title))
    fig.update_xaxes(title_text="Forced macro accuracy (%), pooled over seeds",
                     zeroline=False, showgrid=True)
    fig.update_yaxes(title_text="Method", automargin=True, categoryorder="array",
                     categoryarray=labels)
    return fig


def _heatmap(z: np.ndarray, *, rows: list[str], cols: list[str], x_title: str,
             y_title: str, title: str | None, hover: np.ndarray | None = None,
             names: list[str] | None = None) -> go.Figure:
    finite = z[np.isfinite(z)]
    zmin = float(np.clip(np.floor((finite.min() if finite.size else 0) / 10) * 10, 0, 90))
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, zmin=zmin, zmax=100,
        colorscale=[list(stop) for stop in ACCURACY_SCALE],
        texttemplate="%{z:.1f}", textfont={"size": 12, "color": CELL_TEXT},
        colorbar={"title": {"text": "%"}, "thickness": 12, "len": 0.9},
        customdata=(None if hover is None and names is None else np.dstack([
            np.broadcast_to(np.asarray(names if names is not None else cols, dtype=object),
                            z.shape),
            hover if hover is not None else np.full(z.shape, "", dtype=object)])),
        hovertemplate="%{y} · %{customdata[0]}: %{z:.1f} %%{customdata[1]}<extra></extra>",
        xgap=2, ygap=2))
    fig.update_layout(**titled_layout(height=max(260, 150 + 40 * len(rows)), title=title,
                                      legend_rows=0))
    fig.update_xaxes(title_text=x_title, side="bottom", tickangle=0, automargin=True)
    fig.update_yaxes(title_text=y_title, autorange="reversed", automargin=True)
    return fig


def type_heatmap(per_type: pd.DataFrame, methods: Sequence[str], *,
                 title: str | None = None) -> go.Figure:
    """Reasoning type × method forced accuracy (pooled), the paper's value in the hover.

    Parameters
    ----------
    per_type : DataFrame
        :func:`core.evaluation.tables.per_type_table` (``type`` and one column per method,
        optional ``<method>_paper``).
    methods : methods to show, as columns in this order.
    """
    methods = [m for m in methods if m in per_type]
    z = per_type[methods].to_numpy(float)
    hover = np.empty(z.shape, dtype=object)
    for j, m in enumerate(methods):
        paper = per_type.get(f"{m}_paper")
        for i in range(len(per_type)):
            v = None if paper is None else paper.iloc[i]
            hover[i, j] = "" if v is None or not np.isfinite(v) else f" (paper {v:.1f} %)"
    return _heatmap(z, rows=per_type["type"].astype(str).tolist(),
                    cols=[axis_label(m) for m in methods], x_title="Method",
                    y_title="Reasoning type (question family)", title=title, hover=hover,
                    names=[_label(m) for m in methods])


def difficulty_heatmap(per_difficulty: pd.DataFrame, methods: Sequence[str], *,
                       title: str | None = None) -> go.Figure:
    """Difficulty class × method forced accuracy (per seed, then mean).

    Parameters
    ----------
    per_difficulty : DataFrame
        :func:`core.evaluation.tables.per_difficulty_table` (long: ``method``,
        ``difficulty``, ``accuracy``).
    methods : methods to show, as columns in this order.
    """
    wide = per_difficulty.pivot(index="difficulty", columns="method", values="accuracy")
    methods = [m for m in methods if m in wide.columns]
    order = [d for d in DIFFICULTY_LABELS if d in wide.index]
    wide = wide.loc[order, methods]
    return _heatmap(wide.to_numpy(float), rows=[DIFFICULTY_LABELS[d] for d in order],
                    cols=[axis_label(m) for m in methods], x_title="Method",
                    y_title="Difficulty class", title=title,
                    names=[_label(m) for m in methods])


def slices_figure(slices: pd.DataFrame, *, methods: Sequence[str] | None = None,
                  title: str | None = None) -> go.Figure:
    """Forced accuracy where GT appears among the atoms versus where it appears in none.

    Parameters
    ----------
    slices : DataFrame
        :func:`core.evaluation.tables.reachability_slices` (``gt_present``, ``gt_absent``,
        ``paper_present``, ``paper_absent``, ``n_present``, ``n_absent``).

    Returns
    -------
    go.Figure
        Traces 0–1: bars for the GT-present and GT-absent slices (``x`` methods, ``y`` %);
        traces 2–3: the paper's values on each slice, where reported, drawn over their bars.
        Source Reachability is left out (by construction 100 % and 0 %).
    """
    s = slices if methods is None else slices[slices["method"].isin(list(methods))]
    s = s[s["method"] != "source_reachability"]
    labels = [axis_label(m) for m in s["method"]]
    n_p = int(s["n_present"].iloc[0]) if len(s) else 0
    n_a = int(s["n_absent"].iloc[0]) if len(s) else 0
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=s["gt_present"].to_numpy(float), name=(
        f"GT present in some source (n = {n_p:,})"), marker_color=HUES["azure"],
        offsetgroup="present",
        hovertemplate="%{x}: %{y:.1f} % (GT present)<extra></extra>"))
    fig.add_trace(go.Bar(x=labels, y=s["gt_absent"].to_numpy(float), name=(
        f"GT absent from every source (n = {n_a:,})"), marker_color=NEUTRALS["light"],
        offsetgroup="absent",
        hovertemplate="%{x}: %{y:.1f} % (GT absent)<extra></extra>"))
    for col, group in (("paper_present", "present"), ("paper_absent", "absent")):
        vals = s[col].to_numpy(float) if col in s else np.full(len(s), np.nan)
        keep = np.isfinite(vals)
        fig.add_trace(go.Scatter(
            x=[lab for lab, k in zip(labels, keep, strict=True) if k], y=vals[keep],
            mode="markers", name="memory-benchmark paper", legendgroup="paper",
            showlegend=group == "present", offsetgroup=group, marker=dict(_PAPER_MARKER),
            hovertemplate=f"%{{x}}: paper %{{y:.1f}} % (GT {group})<extra></extra>"))
    fig.update_layout(**titled_layout(height=400, title=title), barmode="group",
                      scattermode="group")
    fig.update_xaxes(title_text="Method", tickangle=0, automargin=True)
    fig.update_yaxes(title_text="Forced accuracy on the slice (%)", range=[0, 100])
    return fig


def source_reliability_figure(summary: pd.DataFrame, *, scale: float = 1.0,
                              title: str | None = None) -> go.Figure:
    """Each source's accuracy when it answers, with its 95 % Wilson interval, and coverage.

    Parameters
    ----------
    summary : DataFrame
        :func:`core.evaluation.diagnostics.source_summary` (or one question's rows of
        :func:`~core.evaluation.diagnostics.source_reliability`): ``source``, ``coverage``,
        ``accuracy``, ``acc_low``, ``acc_high``.
    scale : float, default=1.0
        Multiplier to percent (100 for fractions, 1 when already in percent).

    Returns
    -------
    go.Figure
        Trace 0: accuracy dots with Wilson error bars (``y`` sources); trace 1: coverage as
        open squares. A dotted line marks 50 %.
    """
    s = summary.set_index("source").reindex([x for x in SOURCES if x in set(summary["source"])])
    labels = [SOURCE_LABELS[x] for x in s.index]
    acc = s["accuracy"].to_numpy(float) * scale
    colors = [SOURCE_COLORS[x] for x in s.index]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=acc, y=labels, mode="markers", name="accuracy when answering (95 % Wilson)",
        marker={"size": 12, "color": colors},
        error_x={"type": "data", "symmetric": False,
                 "array": s["acc_high"].to_numpy(float) * scale - acc,
                 "arrayminus": acc - s["acc_low"].to_numpy(float) * scale,
                 "color": REFERENCE_COLOR, "thickness": 1.5, "width": 4},
        hovertemplate="%{y}: %{x:.1f} % correct when it answers<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=s["coverage"].to_numpy(float) * scale, y=labels, mode="markers",
        name="coverage (share of cells with an atom)",
        marker={"size": 10, "symbol": "square-open", "color": colors,
                "line": {"width": 2, "color": colors}},
        hovertemplate="%{y}: gives an atom in %{x:.1f} % of cells<extra></extra>"))
    fig.add_vline(x=50, line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1})
    fig.update_layout(**titled_layout(height=110 + 46 * len(s), title=title, legend_rows=2))
    fig.update_xaxes(title_text="Percent", range=[0, 104])
    fig.update_yaxes(title_text="Source", autorange="reversed", automargin=True)
    return fig
