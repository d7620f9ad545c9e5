"""Shared colours and symbols, so a source looks the same in every figure and on every page.

The colours themselves live in :mod:`core.figures.palette` (one place, with the contrast and
distinctness rules that keep them readable in Streamlit's light and dark themes); this module
gives them the names the figure builders and pages use. Every colour-coded status also
carries a symbol, so the figures read in greyscale too.
"""

from __future__ import annotations

from types import MappingProxyType

from core.resolvers.registry import method_short

from . import palette

__all__ = [
    "CURRENT_COLOR",
    "LATENT_COLOR",
    "METHOD_COLORS",
    "METHOD_SHORT",
    "NOMINAL_COLOR",
    "PAPER_COLOR",
    "REFERENCE_COLOR",
    "SOURCE_COLORS",
    "STATUS_COLORS",
    "STATUS_NAMES",
    "STATUS_SYMBOLS",
    "UNAVAILABLE_FILL",
    "UNAVAILABLE_MARK",
    "WEEKEND_FILL",
    "base_layout",
    "method_color",
    "titled_layout",
]

#: The latent truth (L2): a neutral mid-tone slate that reads on light and dark themes alike.
LATENT_COLOR = palette.LATENT

#: Reference lines (thresholds, midnight) and their labels.
REFERENCE_COLOR = palette.REFERENCE

#: The value a widget has chosen now (θ, π, the budget, the nominal cell): a solid neutral
#: with contrast ≥ 3 on both themes' backgrounds (the near-black it replaced vanished in
#: dark mode).
CURRENT_COLOR = palette.CURRENT

#: One colour per source, in the order of ``core.testbed.questions.SOURCES``.
SOURCE_COLORS = palette.SOURCE_PALETTE

#: One colour per resolver (Okabe–Ito based); a selective ``_skip`` variant shares its base
#: method's colour. Learned-confusion methods are blues, vote-like fusion warm, baselines grey.
METHOD_COLORS = palette.METHOD_PALETTE

#: Compact method names (small multiples, widget options and so URL values): a view of the
#: resolver registry (:func:`core.resolvers.registry.method_short`), their single source.
METHOD_SHORT = MappingProxyType(method_short())

#: Reference markers: the paper's numbers and the nominal setting of the bias lab.
PAPER_COLOR = palette.PAPER
NOMINAL_COLOR = palette.NOMINAL

#: Cell colours of the atom grid (pale, so dark cell text stays readable in both themes).
STATUS_COLORS = palette.CELL_FILLS
STATUS_SYMBOLS = MappingProxyType(
    {"na": "—", "null": "∅", "agree": "✓", "disagree": "✗", "gt": "●"})
STATUS_NAMES = MappingProxyType({
    "agree": "agrees with GT",
    "disagree": "disagrees with GT",
    "null": "no atom",
    "na": "source not informative for this question",
    "gt": "ground truth",
})

#: Day-level dropout: a grey band and a cross.
UNAVAILABLE_FILL = palette.translucent(palette.NEUTRALS["mid"], 0.22)
UNAVAILABLE_MARK = palette.UNAVAILABLE
WEEKEND_FILL = palette.translucent(palette.NEUTRALS["mid"], 0.07)


def base_layout(*, height: int, title: str | None = None) -> dict:
    """Layout defaults shared by the figure builders (margins, fonts, legend on top).

    The template is Plotly's empty one, ``"none"``. Without it, Plotly copies its default
    template (style defaults for some forty trace types, 6.5 kB of JSON) into every figure,
    and that copy was most of each chart's cost per rerun (``to_dict`` 7 ms of a 2 × 3
    grid, twice per draw). The app draws with ``theme="streamlit"``, whose colours, fonts
    and grid come from the visitor's Streamlit theme (light or dark), not from a Plotly
    template; a downloaded HTML figure gets plotly.js's own defaults.
    """
    layout = {
        "template": "none",
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 60 if title else 30, "b": 30},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0,
                   "font": {"size": 12}},
        "bargap": 0.15,
        "hovermode": "closest",
    }
    if title:
        layout["title"] = {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}}
    return layout


def method_color(method: str) -> str:
    """The colour of ``method`` (a ``_skip`` variant takes its base method's colour)."""
    return METHOD_COLORS.get(method.removesuffix("_skip"), LATENT_COLOR)


def titled_layout(*, height: int, title: str | None = None, legend_rows: int = 1) -> dict:
    """:func:`base_layout` with room for a title *and* a legend above the plot.

    The title sits at the top of the figure and the horizontal legend just above the plot
    area, with ``legend_rows`` rows of room, so the two never overlap.
    """
    layout = base_layout(height=height, title=title)
    top = 24 + 22 * max(0, int(legend_rows)) + (32 if title else 0)
    layout["margin"] = {**layout["margin"], "t": top}
    if title:
        layout["title"] = {**layout["title"], "y": 1.0, "yref": "container", "yanchor": "top",
                           "pad": {"t": 8}}
    return layout
