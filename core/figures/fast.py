"""Figures from plain dicts, for the builders that run again on every slider move.

Plotly's object model validates every property as it is set: a 2 × 3 grid of curves built with
``make_subplots``, ``add_trace(row=…, col=…)`` and ``update_*axes`` costs about 70 ms warm
(``make_subplots`` alone 20 ms), the same figure built from dicts about 4 ms. The builders
that are rebuilt whenever the data change (the pilot budget's curves and bars, one pilot's
looks) therefore assemble trace and layout dicts and call :func:`figure`, which constructs the
:class:`plotly.graph_objects.Figure` with validation off. The dicts must be valid Plotly JSON:
``tests/test_figures_calibration.py`` re-validates every such figure
(``go.Figure(fig.to_dict())``), which is where a typo fails instead of in the browser.

:func:`subplot_grid` gives the axes and subplot titles of
:func:`plotly.subplots.make_subplots` (top-left start, no shared axes) as layout keys:
for ``cols`` columns and horizontal spacing ``h``, column ``c`` (from 0) spans
``[c (w + h), c (w + h) + w]`` with ``w = (1 − (cols − 1) h) / cols``; rows likewise from the
top.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["FrozenFigure", "axis_refs", "figure", "freeze", "subplot_grid"]


def figure(data: Iterable[Mapping], layout: Mapping) -> go.Figure:
    """A figure of trace dicts (``{"type": "scatter", ...}``) and a layout dict, unvalidated.

    Examples
    --------
    >>> fig = figure([{"type": "bar", "x": ["a"], "y": [1.0], "name": "n"}], {"height": 200})
    >>> fig.data[0].name, fig.layout.height
    ('n', 200)
    """
    lay = dict(layout)
    if isinstance(lay.get("template"), str):  # a name: unvalidated figures do not resolve it
        lay["template"] = pio.templates[lay["template"]].to_plotly_json()
    return go.Figure(data=[dict(t) for t in data], layout=lay, _validate=False)


class FrozenFigure(go.Figure):
    """A figure that is never changed again, so its plain form is computed once.

    ``st.plotly_chart`` and every export start from ``to_dict()``, which deep-copies the
    figure and converts its arrays to base64 each time: for a figure shared by every session
    and drawn on every rerun, that was the largest part of drawing it (about 10 ms a rerun on
    the Walkthrough). A ``FrozenFigure`` converts once, when it is made, and ``to_dict()``
    returns copies of that result's two outer levels (the ``data`` list with a new dict per
    trace, and the ``layout`` dict), which is what the consumers change (``plotly.io`` pops
    each trace's ``uid``). Make one with :func:`freeze`; never call ``update_*`` on it.
    """

    def __init__(self, data=None, layout=None, frames=None, skip_invalid=False, **kwargs):
        super().__init__(data, layout, frames, skip_invalid, **kwargs)
        self._frozen = super().to_dict()

    def to_dict(self) -> dict:
        frozen = self._frozen
        out = {"data": [dict(t) for t in frozen["data"]], "layout": dict(frozen["layout"])}
        if "frames" in frozen:
            out["frames"] = list(frozen["frames"])
        return out


def freeze(fig: go.Figure) -> FrozenFigure:
    """``fig`` itself, made a :class:`FrozenFigure` (its plain form computed now, once).

    The figure is converted in place (no copy of its traces), so pass a figure nobody else
    holds, such as one a builder just returned.

    Examples
    --------
    >>> f = freeze(figure([{"type": "bar", "x": ["a"], "y": [1.0]}], {"height": 200}))
    >>> f.to_dict()["layout"]["height"], f.to_dict() is f.to_dict()
    (200, False)
    """
    if isinstance(fig, FrozenFigure):
        return fig
    if type(fig) is not go.Figure:
        raise TypeError(f"freeze() takes a plotly.graph_objects.Figure, got {type(fig).__name__}")
    frozen = go.Figure.to_dict(fig)
    fig.__class__ = FrozenFigure
    fig._frozen = frozen
    return fig


def axis_refs(row: int, col: int, cols: int) -> tuple[str, str]:
    """The trace-side axis names (``"x"``, ``"y2"`` …) of the subplot at ``(row, col)``.

    Rows and columns count from 1, left to right then top to bottom, as in ``make_subplots``.

    Examples
    --------
    >>> axis_refs(1, 1, 3), axis_refs(2, 3, 3)
    (('x', 'y'), ('x6', 'y6'))
    """
    k = (row - 1) * cols + col
    suffix = "" if k == 1 else str(k)
    return f"x{suffix}", f"y{suffix}"


def _domains(sizes: Sequence[float], spacing: float) -> list[tuple[float, float]]:
    avail = 1.0 - (len(sizes) - 1) * spacing
    total = float(sum(sizes))
    out, start = [], 0.0
    for size in sizes:
        width = avail * float(size) / total
        out.append((start, start + width))
        start += width + spacing
    return out


def subplot_grid(rows: int, cols: int, *, titles: Sequence[str] = (),
                 horizontal_spacing: float | None = None,
                 vertical_spacing: float | None = None,
                 row_heights: Sequence[float] | None = None,
                 column_widths: Sequence[float] | None = None,
                 shared_xaxes: bool = False, title_size: int = 12) -> dict:
    """Layout keys of a ``rows × cols`` grid: ``xaxis…``/``yaxis…`` and title annotations.

    Parameters
    ----------
    rows, cols : int
        Grid shape (≥ 1).
    titles : sequence of str
        Subplot titles, row by row (fewer than ``rows · cols`` leaves the rest untitled).
    horizontal_spacing, vertical_spacing : float, optional
        Gaps as fractions of the figure (defaults of ``make_subplots``: ``0.2 / cols`` and
        ``0.3 / rows``).
    row_heights, column_widths : sequence of float, optional
        Relative sizes (top row first; normalised), as in ``make_subplots``.
    shared_xaxes : bool
        Every x axis of a column follows the bottom row's (``matches``) and only the bottom
        row shows tick labels.
    title_size : int
        Font size of the subplot titles.

    Returns
    -------
    dict
        Merge it into the layout dict; add more keys to the axes afterwards.

    Examples
    --------
    >>> grid = subplot_grid(1, 2, horizontal_spacing=0.1)
    >>> grid["xaxis"]["domain"], grid["xaxis2"]["domain"], grid["yaxis2"]["anchor"]
    ([0.0, 0.45], [0.55, 1.0], 'x2')
    """
    if rows < 1 or cols < 1:
        raise ValueError(f"a grid needs rows, cols >= 1, got {rows} × {cols}")
    h = 0.2 / cols if horizontal_spacing is None else float(horizontal_spacing)
    v = 0.3 / rows if vertical_spacing is None else float(vertical_spacing)
    heights = [1.0] * rows if row_heights is None else list(row_heights)
    widths = [1.0] * cols if column_widths is None else list(column_widths)
    if len(heights) != rows or len(widths) != cols:
        raise ValueError("row_heights / column_widths need one entry per row / column")
    xs = _domains(widths, h)
    ys = _domains(heights[::-1], v)[::-1]  # row 1 on top
    out: dict = {}
    notes = []
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            xr, yr = axis_refs(r, c, cols)
            x0, x1 = xs[c - 1]
            y0, y1 = ys[r - 1]
            xaxis = {"anchor": yr, "domain": [round(x0, 12), round(x1, 12)]}
            if shared_xaxes and r < rows:
                xaxis.update(matches=axis_refs(rows, c, cols)[0], showticklabels=False)
            out["xaxis" + xr[1:]] = xaxis
            out["yaxis" + yr[1:]] = {"anchor": xr, "domain": [round(y0, 12), round(y1, 12)]}
            k = (r - 1) * cols + c - 1
            if k < len(titles) and titles[k]:
                notes.append({"text": titles[k], "x": (x0 + x1) / 2, "y": y1,
                              "xref": "paper", "yref": "paper", "xanchor": "center",
                              "yanchor": "bottom", "showarrow": False,
                              "font": {"size": title_size}})
    if notes:
        out["annotations"] = notes
    return out
