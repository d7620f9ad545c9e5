"""Shared colours and symbols, so a source looks the same in every figure and on every page.

The palette is colour-blind-aware (distinct hue *and* lightness), and every colour-coded
status also carries a symbol, so the figures read in greyscale too.
"""

from __future__ import annotations

from types import MappingProxyType

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
LATENT_COLOR = "#64748B"

#: Reference lines (thresholds, midnight) and their labels.
REFERENCE_COLOR = "#7B8594"

#: The value a widget has chosen now (θ, π, the budget, the nominal cell): a solid neutral that
#: keeps a contrast ratio ≥ 3 on both themes' backgrounds (4.9 on #FFFFFF, 3.8 on #0F141B),
#: where the near-black it replaces vanished in dark mode.
CURRENT_COLOR = "#6B7280"

#: One colour per source, in the order of ``core.testbed.questions.SOURCES``.
SOURCE_COLORS = MappingProxyType({
    "profile_ltm": "#7C5CBF",        # violet: the long-term profile
    "planner": "#E08A1E",            # amber: plans and intentions
    "daily_self_report": "#D6457A",  # magenta: what the person says
    "objective_log": "#2B7BBA",      # blue: payments, timesheet, calendar
    "device_log": "#12A38F",         # teal: wearable and phone
})

#: One colour per resolver (Okabe–Ito based); a selective ``_skip`` variant shares its base
#: method's colour. Learned-confusion methods are blues, vote-like fusion warm, baselines grey.
METHOD_COLORS = MappingProxyType({
    "random": "#B3BAC5",
    "majority_class": "#8A93A3",
    "ssb": "#8C6D31",
    "ssb_global": "#C2A060",
    "majority_vote": "#D55E00",
    "bcf": "#CC79A7",
    "abf": "#E69F00",
    "nbf": "#56B4E9",
    "dsnbf": "#0072B2",
    "dawid_skene": "#009E73",
    "source_reachability": "#334155",
})

#: Compact method names (small multiples, widget options and so URL values).
METHOD_SHORT = MappingProxyType({
    "random": "Random", "majority_class": "MajClass", "ssb": "SSB", "ssb_global": "SSB-G",
    "majority_vote": "MV", "bcf": "BCF", "abf": "ABF", "nbf": "NBF", "dsnbf": "DSNBF",
    "dawid_skene": "DS", "source_reachability": "Reach",
    "ssb_skip": "SSB+SKIP", "abf_skip": "ABF+SKIP", "nbf_skip": "NBF+SKIP",
    "dsnbf_skip": "DSNBF+SKIP", "source_reachability_skip": "Reach+SKIP",
})

#: Reference markers: the paper's numbers and the nominal setting of the bias lab.
PAPER_COLOR = "#B91C1C"
NOMINAL_COLOR = "#7B8594"

#: Cell colours of the atom grid (pale, so dark cell text stays readable in both themes).
STATUS_COLORS = MappingProxyType({
    "na": "#F7F8FA",        # source not informative for the question
    "null": "#E3E6EB",      # informative source, but no atom
    "agree": "#A8DDB5",     # atom equals GT
    "disagree": "#F4A6A6",  # atom differs from GT
    "gt": "#C9DAF5",        # the ground-truth column
})
STATUS_SYMBOLS = MappingProxyType(
    {"na": "—", "null": "∅", "agree": "✓", "disagree": "✗", "gt": "●"})
STATUS_NAMES = MappingProxyType({
    "agree": "agrees with GT",
    "disagree": "disagrees with GT",
    "null": "no atom",
    "na": "source not informative (spec §2.4)",
    "gt": "ground truth",
})

#: Day-level dropout: a grey band and a cross.
UNAVAILABLE_FILL = "rgba(120, 130, 145, 0.22)"
UNAVAILABLE_MARK = "#7B8594"
WEEKEND_FILL = "rgba(120, 130, 145, 0.07)"


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
