"""Cheap overlays: a cached figure plus the marker of the value a widget has chosen now.

Building a Plotly figure validates every property through Plotly's object model: 50–170 ms
for this project's small multiples. A slider that only moves a marker (the pilot budget, the
threshold θ) should not pay that. The base figure is built once and shared (keyed without
the marker); :func:`with_overlay` copies its dict, appends the marker's shapes and traces,
and constructs the copy with validation off (about 5 ms). The base is never changed, and
the shapes and traces passed in must be valid Plotly JSON (the builders' own helpers, such
as :func:`core.figures.calibration.budget_marker_shapes`, make them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

__all__ = ["with_overlay"]


def with_overlay(base: go.Figure | Mapping, *, shapes: Sequence[Mapping] = (),
                 traces: Sequence[Mapping] = ()) -> go.Figure:
    """A new figure: ``base`` with ``shapes`` added to its layout and ``traces`` to its data.

    Parameters
    ----------
    base : go.Figure or dict
        The shared base figure (or its ``to_dict()``); it is not modified.
    shapes, traces : sequences of dict
        Plotly layout shapes and trace dicts (``{"type": "scatter", ...}``), appended after
        the base's own, so they are drawn on top.

    Returns
    -------
    go.Figure
        The overlaid copy (validation skipped: the inputs were validated when built).

    Examples
    --------
    >>> base = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    >>> fig = with_overlay(base, shapes=[{"type": "line", "x0": 0.5, "x1": 0.5,
    ...                                   "y0": 0, "y1": 1}])
    >>> len(fig.layout.shapes), len(base.layout.shapes), len(fig.data)
    (1, 0, 1)
    """
    d = base.to_dict() if isinstance(base, go.Figure) else dict(base)
    layout = dict(d.get("layout", {}))
    layout["shapes"] = [*layout.get("shapes", ()), *(dict(s) for s in shapes)]
    data = [*d.get("data", ()), *(dict(t) for t in traces)]
    return go.Figure({**d, "layout": layout, "data": data}, _validate=False)
