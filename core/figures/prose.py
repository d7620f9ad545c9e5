"""Figures of the Extraction page: faithfulness heatmap, noise dumbbells, the 2 × 2 and its
attribution (seed 000 §8.8, §12.5, §4.2).

Pure builders: the view objects of :mod:`core.prose.views` in, :class:`plotly.graph_objects.
Figure` out (built from dicts, :mod:`core.figures.fast`). Colours from
:mod:`core.figures.palette`: the pale accuracy scale with dark cell text for the heatmaps
(both themes), method colours for the methods, the grey nominal marker for "on μ*".
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .fast import axis_refs, figure, subplot_grid
from .palette import ACCURACY_SCALE, CELL_TEXT, HUES, NEUTRALS
from .style import NOMINAL_COLOR, REFERENCE_COLOR, method_color, titled_layout

__all__ = ["factorial_figure", "faithfulness_figure", "noise_figure"]

_SCALE = [list(stop) for stop in ACCURACY_SCALE]
_TERM_COLORS = {"resolution": HUES["royal"], "extraction": HUES["vermillion"],
                "interaction": NEUTRALS["grey"], "total": NEUTRALS["dark"]}


def _zmin(z: np.ndarray) -> float:
    finite = z[np.isfinite(z)]
    low = float(finite.min()) if finite.size else 0.0
    return float(np.clip(np.floor(low / 5) * 5, 0, 95))


def faithfulness_figure(view, *, title: str | None = None) -> go.Figure:
    """Sources × questions heatmap of P(μ̂ = μ*) (%), each cell's value written on it.

    Parameters
    ----------
    view : :class:`core.prose.views.FaithfulnessView`.

    Returns
    -------
    go.Figure
        One heatmap trace (rows: the five sources, top to bottom; columns: the 18
        questions), the pale accuracy scale from the lowest cell's 5 % step up to 100 %,
        cells without a counted cell blank; the hover has the cell count.
    """
    z = view.matrix.to_numpy(float)
    text = np.where(np.isfinite(z), np.char.mod("%.0f", np.nan_to_num(z)), "").astype(object)
    text[np.isfinite(z) & (z < 100) & (z >= 99.5)] = ">99"
    counts = view.n.to_numpy(int)
    data = [{"type": "heatmap", "z": z.tolist(), "x": list(view.matrix.columns),
             "y": list(view.matrix.index), "zmin": _zmin(z), "zmax": 100,
             "colorscale": _SCALE, "text": text.tolist(), "texttemplate": "%{text}",
             "textfont": {"size": 11, "color": CELL_TEXT}, "customdata": counts.tolist(),
             "colorbar": {"title": {"text": "%"}, "thickness": 12, "len": 0.9},
             "hovertemplate": "%{y} · %{x}: %{z:.2f} % of %{customdata} cells<extra></extra>",
             "xgap": 2, "ygap": 2}]
    layout = titled_layout(height=320, title=title, legend_rows=0)
    layout["xaxis"] = {"title": {"text": "Question"}, "side": "bottom", "tickangle": 0,
                       "automargin": True, "type": "category"}
    layout["yaxis"] = {"title": {"text": "Source"}, "autorange": "reversed",
                       "automargin": True, "type": "category"}
    return figure(data, layout)


def noise_figure(view, *, title: str | None = None) -> go.Figure:
    """Each method's accuracy on μ* and on the noisy input: a dumbbell per method.

    Parameters
    ----------
    view : :class:`core.prose.views.NoiseView`.

    Returns
    -------
    go.Figure
        Trace 0: grey segments μ* → noisy; trace 1: the μ* accuracies (open grey circles);
        trace 2: the noisy accuracies in each method's colour. Methods sorted by the noisy
        accuracy, best on top.
    """
    f = view.frame.sort_values("accuracy_hat", kind="stable")
    labels = f["label"].tolist()
    star, hat = f["accuracy_star"].to_numpy(float), f["accuracy_hat"].to_numpy(float)
    xs, ys = [], []
    for a, b, y in zip(star.tolist(), hat.tolist(), labels, strict=True):
        xs += [a, b, None]
        ys += [y, y, None]
    data = [{"type": "scatter", "x": xs, "y": ys, "mode": "lines", "showlegend": False,
             "line": {"color": NOMINAL_COLOR, "width": 2}, "hoverinfo": "skip"},
            {"type": "scatter", "x": star.tolist(), "y": labels, "mode": "markers",
             "name": "on μ* (no noise)",
             "marker": {"symbol": "circle-open", "size": 11, "color": NOMINAL_COLOR,
                        "line": {"width": 2, "color": NOMINAL_COLOR}},
             "hovertemplate": "%{y}: %{x:.1f} % on μ*<extra></extra>"},
            {"type": "scatter", "x": hat.tolist(), "y": labels, "mode": "markers",
             "name": "on the noisy input",
             "marker": {"size": 12, "color": [method_color(m) for m in f["method"]]},
             "hovertemplate": "%{y}: %{x:.1f} % on the noisy input<extra></extra>"}]
    layout = titled_layout(height=110 + 32 * len(f), title=title)
    layout["xaxis"] = {"title": {"text": "Forced macro accuracy on the test split (%)"},
                       "showgrid": True}
    layout["yaxis"] = {"title": {"text": "Method"}, "automargin": True,
                       "categoryorder": "array", "categoryarray": labels}
    return figure(data, layout)


def factorial_figure(view, *, title: str | None = None) -> go.Figure:
    """The 2 × 2 (method × input) as a heatmap and the attribution as bars with intervals.

    Parameters
    ----------
    view : :class:`core.prose.views.FactorialView`.

    Returns
    -------
    go.Figure
        Left: a heatmap of the four accuracies (rows A, B; columns μ*, μ̂) with the values
        written on it. Right: one bar per term (total, resolution, extraction, interaction,
        pp) with its 95 % paired bootstrap interval.
    """
    d = view.decomposition
    acc = d.accuracy
    z = [[acc["a_star"], acc["a_hat"]], [acc["b_star"], acc["b_hat"]]]
    ci = d.ci
    text = [[f"{acc[c]:.1f}<br>[{ci[c][0]:.1f}, {ci[c][1]:.1f}]" for c in row]
            for row in (("a_star", "a_hat"), ("b_star", "b_hat"))]
    rows = [f"A: {view.a_label}", f"B: {view.b_label}"]
    zz = np.asarray(z, float)
    lo = float(np.clip(np.floor(zz.min() / 10) * 10 - 10, 0, 90))
    x1, y1 = axis_refs(1, 1, 2)
    x2, y2 = axis_refs(1, 2, 2)
    data = [{"type": "heatmap", "z": z, "x": ["direct readout μ*", "extracted μ̂"], "y": rows,
             "zmin": lo, "zmax": 100, "colorscale": _SCALE, "text": text,
             "texttemplate": "%{text}", "textfont": {"size": 12, "color": CELL_TEXT},
             "showscale": False, "xgap": 3, "ygap": 3, "xaxis": x1, "yaxis": y1,
             "hovertemplate": "%{y} on %{x}: %{z:.1f} %<extra></extra>"}]
    terms = ("total", "resolution", "extraction", "interaction")
    vals = np.array([d.terms[t] for t in terms], float)
    low = np.array([d.ci[t][0] for t in terms], float)
    high = np.array([d.ci[t][1] for t in terms], float)
    data.append({"type": "bar", "x": list(terms), "y": vals.tolist(), "showlegend": False,
                 "marker": {"color": [_TERM_COLORS[t] for t in terms]},
                 "error_y": {"type": "data", "symmetric": False,
                             "array": (high - vals).tolist(), "arrayminus": (vals - low).tolist(),
                             "color": REFERENCE_COLOR, "thickness": 1.5, "width": 6},
                 "hovertemplate": "%{x}: %{y:+.2f} pp<extra></extra>",
                 "xaxis": x2, "yaxis": y2})
    layout = titled_layout(height=340, title=title, legend_rows=0)
    layout.update(subplot_grid(1, 2, horizontal_spacing=0.12, column_widths=[1.1, 1.0],
                               titles=["Accuracy (%) with 95 % interval",
                                       "Attribution of the gap (pp)"]))
    layout["margin"]["t"] += 20
    layout["xaxis"].update(type="category", side="bottom")
    layout["yaxis"].update(type="category", autorange="reversed", automargin=True)
    layout["xaxis2"].update(type="category")
    layout["yaxis2"].update(title={"text": "pp (> 0: A, or μ*, is better)"}, zeroline=True,
                            zerolinecolor=REFERENCE_COLOR)
    return figure(data, layout)
