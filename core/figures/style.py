"""Shared colours and symbols, so a source looks the same in every figure and on every page.

The palette is colour-blind-aware (distinct hue *and* lightness), and every colour-coded
status also carries a symbol, so the figures read in greyscale too.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = [
    "LATENT_COLOR",
    "REFERENCE_COLOR",
    "SOURCE_COLORS",
    "STATUS_COLORS",
    "STATUS_NAMES",
    "STATUS_SYMBOLS",
    "UNAVAILABLE_FILL",
    "UNAVAILABLE_MARK",
    "WEEKEND_FILL",
    "base_layout",
]

#: The latent truth (L2): a neutral mid-tone slate that reads on light and dark themes alike.
LATENT_COLOR = "#64748B"

#: Reference lines (thresholds, midnight) and their labels.
REFERENCE_COLOR = "#7B8594"

#: One colour per source, in the order of ``core.testbed.questions.SOURCES``.
SOURCE_COLORS = MappingProxyType({
    "profile_ltm": "#7C5CBF",        # violet: the long-term profile
    "planner": "#E08A1E",            # amber: plans and intentions
    "daily_self_report": "#D6457A",  # magenta: what the person says
    "objective_log": "#2B7BBA",      # blue: payments, timesheet, calendar
    "device_log": "#12A38F",         # teal: wearable and phone
})

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
    """Layout defaults shared by the figure builders (margins, fonts, legend on top)."""
    layout = {
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
