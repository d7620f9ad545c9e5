"""Plotly figure builders: data in, ``plotly.graph_objects.Figure`` out (no Streamlit).

Modules are imported explicitly (``from core.figures.walkthrough import atom_grid_figure``);
:mod:`core.figures.style` holds the colours every page shares.
"""

__all__: list[str] = []
