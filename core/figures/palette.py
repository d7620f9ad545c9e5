"""Every colour of every figure, and the rules that keep them readable in both themes.

The app draws its Plotly figures with Streamlit's theme: the plot area is transparent, so a
line or marker sits on the page background, white (#FFFFFF) in the light theme and near-black
(Streamlit's #0E1117; this app's ``.streamlit/config.toml`` sets #0F141B) in the dark one.
One colour has to read on all of them. The rules, checked by :func:`check_palette` and by
``tests/test_palette_contrast.py`` on every figure the builders make:

* **Lines, markers, bars and annotation text** (:data:`LINE_COLORS`): WCAG contrast ratio
  ≥ 3 (:data:`MIN_CONTRAST`, the WCAG 2.1 §1.4.11 "non-text contrast" level) against every
  background in :data:`BACKGROUNDS`. With these backgrounds that leaves relative luminance
  within about [0.12, 0.30]: mid-tones only, so no near-black or near-white lines anywhere.
* **Heatmap cells with text on them** (:data:`CELL_FILLS`, :data:`ACCURACY_SCALE`): pale
  areas, exempt from the line rule; their text (:data:`CELL_TEXT`) needs contrast ≥ 4.5
  (:data:`MIN_TEXT_CONTRAST`, WCAG §1.4.3) against every cell colour. A legend swatch of a
  cell colour is framed by a line colour.
* **Translucent fills** (bands, shading, the fill of an outlined bar): a palette colour at
  alpha ≤ 0.3 (:data:`MAX_FILL_ALPHA`, :func:`translucent`); exempt from the line rule.
* **Distinct hues** (Okabe–Ito based, colour-blind aware): any two method colours, and any
  two source colours, differ by CIE76 ΔE ≥ 15 (:data:`MIN_DELTA_E`), so no two resolvers are
  near-identical blues; baselines are greys told apart by lightness.

Formulas: WCAG 2.1 relative luminance and contrast ratio (sRGB linearisation, ``(L1 + 0.05)
/ (L2 + 0.05)``); CIE 1976 L*a*b* (D65 white) and ΔE*ab as the Euclidean distance there.

Examples
--------
>>> round(contrast_ratio("#FFFFFF", "#000000"), 1)
21.0
>>> check_palette()
()
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from types import MappingProxyType

__all__ = [
    "ACCURACY_SCALE",
    "APP_DARK_BACKGROUND",
    "BACKGROUNDS",
    "CELL_FILLS",
    "CELL_TEXT",
    "CURRENT",
    "DARK_BACKGROUND",
    "ESTIMATOR_PALETTE",
    "HUES",
    "LABEL_PALETTE",
    "LATENT",
    "LIGHT_BACKGROUND",
    "LINE_COLORS",
    "MAX_FILL_ALPHA",
    "METHOD_PALETTE",
    "MIN_CONTRAST",
    "MIN_DELTA_E",
    "MIN_TEXT_CONTRAST",
    "NEUTRALS",
    "NOMINAL",
    "PAPER",
    "REFERENCE",
    "RULE_FALLBACK",
    "RULE_PALETTE",
    "SOURCE_PALETTE",
    "SWEEP_PALETTE",
    "TRANSPARENT",
    "UNAVAILABLE",
    "check_palette",
    "contrast_ratio",
    "delta_e76",
    "is_line_color",
    "parse_color",
    "relative_luminance",
    "translucent",
]

#: The page backgrounds a figure sits on: Streamlit's light and dark themes, and this app's
#: own dark background (``.streamlit/config.toml``, ``[theme.dark] backgroundColor``).
LIGHT_BACKGROUND = "#FFFFFF"
DARK_BACKGROUND = "#0E1117"
APP_DARK_BACKGROUND = "#0F141B"
BACKGROUNDS = MappingProxyType({"light": LIGHT_BACKGROUND, "dark": DARK_BACKGROUND,
                                "app dark": APP_DARK_BACKGROUND})

MIN_CONTRAST = 3.0
MIN_TEXT_CONTRAST = 4.5
MAX_FILL_ALPHA = 0.3
MIN_DELTA_E = 15.0

#: Mid-tone hues (Okabe–Ito based, darkened or lightened into the band both themes read).
HUES = MappingProxyType({
    "blue": "#0072B2",
    "azure": "#2B7BBA",
    "royal": "#3366CC",
    "sky": "#1B91AE",
    "teal": "#0F9A87",
    "green": "#009E73",
    "forest": "#1B7F5A",
    "olive": "#8F8F2E",
    "brown": "#8C6D31",
    "amber": "#B87F00",
    "ochre": "#B7791F",
    "vermillion": "#D55E00",
    "rust": "#C2410C",
    "red": "#D62F2F",
    "rose": "#D9575F",
    "magenta": "#D6457A",
    "pink": "#C96B9F",
    "violet": "#7C5CBF",
    "purple": "#8A5CC0",
})

#: Mid-tone greys and slates, told apart by lightness (L* ≈ 43 to 60).
NEUTRALS = MappingProxyType({
    "dark": "#5F6670",
    "slate": "#64748B",
    "grey": "#6B7280",
    "mid": "#7B8594",
    "light": "#8A9099",
})

#: The latent truth (L2), reference lines, the value a widget has chosen now, the nominal
#: setting of the bias lab, the paper's numbers and the day-level dropout mark.
LATENT = NEUTRALS["slate"]
REFERENCE = NEUTRALS["mid"]
CURRENT = NEUTRALS["grey"]
NOMINAL = NEUTRALS["mid"]
PAPER = HUES["red"]
UNAVAILABLE = NEUTRALS["mid"]

#: One colour per source (``core.testbed.questions.SOURCES`` order).
SOURCE_PALETTE = MappingProxyType({
    "profile_ltm": HUES["violet"],        # the long-term profile
    "planner": HUES["ochre"],             # plans and intentions
    "daily_self_report": HUES["magenta"],  # what the person says
    "objective_log": HUES["azure"],       # payments, timesheet, calendar
    "device_log": HUES["teal"],           # wearable and phone
})

#: One colour per resolver: learned-confusion methods blues (a deep royal blue and a light
#: sky-cyan, far apart), vote-like fusion warm, the simple-source baselines browns, the
#: trivial baselines greys.
METHOD_PALETTE = MappingProxyType({
    "random": NEUTRALS["light"],
    "majority_class": NEUTRALS["dark"],
    "ssb": HUES["brown"],
    "ssb_global": HUES["olive"],
    "majority_vote": HUES["vermillion"],
    "bcf": HUES["pink"],
    "abf": HUES["amber"],
    "nbf": HUES["sky"],
    "dsnbf": HUES["royal"],
    "dawid_skene": HUES["green"],
    "source_reachability": HUES["purple"],
})

#: Seed 003's named rules (native confidence, the frozen source prior EG, NQ-open's
#: cross-system agreement, the uploaded file's two columns, the bridge's tier prior).
RULE_PALETTE = MappingProxyType({
    "native": HUES["blue"],
    "eg": HUES["vermillion"],
    "agreement": HUES["green"],
    "p": HUES["blue"],
    "p_b": HUES["vermillion"],
    "tier prior": HUES["violet"],
})
#: Colours for rules without a fixed one, in the order handed out.
RULE_FALLBACK = (HUES["pink"], HUES["amber"], HUES["sky"], HUES["brown"], HUES["olive"],
                 HUES["rose"], HUES["azure"], HUES["teal"], NEUTRALS["dark"], HUES["violet"])
#: Truth Y and the reference-derived label Z (seed 003 §3).
LABEL_PALETTE = MappingProxyType({"y": HUES["forest"], "z": HUES["rust"]})
#: The two pilot estimators of seed 003 Eq. 3 (β = 0 and the transfer β).
ESTIMATOR_PALETTE = MappingProxyType({"human_only": NEUTRALS["light"],
                                      "trisource": HUES["blue"]})
#: The Selective QA threshold sweep's three curves.
SWEEP_PALETTE = MappingProxyType({"coverage": HUES["azure"],
                                  "selective_accuracy": HUES["teal"], "f05": HUES["violet"]})

#: Every colour allowed for a line, a marker, an opaque bar or annotation text, by name.
LINE_COLORS = MappingProxyType({
    **{f"hue.{k}": v for k, v in HUES.items()},
    **{f"neutral.{k}": v for k, v in NEUTRALS.items()},
    **{f"source.{k}": v for k, v in SOURCE_PALETTE.items()},
    **{f"method.{k}": v for k, v in METHOD_PALETTE.items()},
    **{f"rule.{k}": v for k, v in RULE_PALETTE.items()},
    **{f"rule fallback {i}": v for i, v in enumerate(RULE_FALLBACK)},
    **{f"label.{k}": v for k, v in LABEL_PALETTE.items()},
    **{f"estimator.{k}": v for k, v in ESTIMATOR_PALETTE.items()},
    **{f"sweep.{k}": v for k, v in SWEEP_PALETTE.items()},
    "latent": LATENT, "reference": REFERENCE, "current": CURRENT, "nominal": NOMINAL,
    "paper": PAPER, "unavailable": UNAVAILABLE,
})

#: Pale cell fills of the atom grid (areas with :data:`CELL_TEXT` on them).
CELL_FILLS = MappingProxyType({
    "na": "#F7F8FA",        # source not informative for the question
    "null": "#E3E6EB",      # informative source, but no atom
    "agree": "#A8DDB5",     # atom equals GT
    "disagree": "#F4A6A6",  # atom differs from GT
    "gt": "#C9DAF5",        # the ground-truth column
})
#: Text on a pale cell (dark slate: contrast ≥ 7 on every :data:`CELL_FILLS` colour).
CELL_TEXT = "#1F2937"
#: Accuracy heatmaps: the pale half of Plotly's "Blues" (low accuracy palest), so the cell
#: text (:data:`CELL_TEXT`) keeps contrast ≥ 6 on every cell.
ACCURACY_SCALE = ((0.0, "#F7FBFF"), (0.25, "#DEEBF7"), (0.5, "#C6DBEF"), (0.75, "#9ECAE1"),
                  (1.0, "#6BAED6"))
#: Fully transparent (a frame without fill, a transparent plot area).
TRANSPARENT = "rgba(0, 0, 0, 0)"

_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_RGB = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)")


def parse_color(color: str) -> tuple[int, int, int, float]:
    """``(r, g, b, alpha)`` of a ``#RGB``, ``#RRGGBB``, ``rgb(…)`` or ``rgba(…)`` string.

    Raises
    ------
    ValueError
        For any other string (named CSS colours such as ``"white"`` included: the palette
        names every colour it allows).

    Examples
    --------
    >>> parse_color("#0072B2"), parse_color("rgba(0, 114, 178, 0.2)")
    ((0, 114, 178, 1.0), (0, 114, 178, 0.2))
    """
    text = str(color).strip()
    if m := _HEX.fullmatch(text):
        h = m.group(1)
        if len(h) == 3:
            h = "".join(c * 2 for c in h)
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0
    if m := _RGB.fullmatch(text):
        r, g, b = (int(round(float(v))) for v in m.groups()[:3])
        alpha = 1.0 if m.group(4) is None else float(m.group(4))
        if all(0 <= v <= 255 for v in (r, g, b)) and 0.0 <= alpha <= 1.0:
            return r, g, b, alpha
    raise ValueError(f"not a #RRGGBB / rgb() / rgba() colour: {color!r}")


def _hex(color: str) -> str:
    r, g, b, _ = parse_color(color)
    return f"#{r:02X}{g:02X}{b:02X}"


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of an opaque colour (alpha ignored), in [0, 1].

    Examples
    --------
    >>> relative_luminance("#FFFFFF"), relative_luminance("#000000")
    (1.0, 0.0)
    """
    r, g, b, _ = parse_color(color)
    return 0.2126 * _linear(r) + 0.7152 * _linear(g) + 0.0722 * _linear(b)


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio ``(L_hi + 0.05) / (L_lo + 0.05)`` of two colours, in [1, 21]."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _lab(color: str) -> tuple[float, float, float]:
    r, g, b, _ = parse_color(color)
    rl, gl, bl = _linear(r), _linear(g), _linear(b)
    xyz = (0.4124 * rl + 0.3576 * gl + 0.1805 * bl, 0.2126 * rl + 0.7152 * gl + 0.0722 * bl,
           0.0193 * rl + 0.1192 * gl + 0.9505 * bl)
    white = (0.95047, 1.0, 1.08883)

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip(xyz, white, strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e76(a: str, b: str) -> float:
    """CIE76 colour difference ΔE*ab (Euclidean distance in CIE L*a*b*, D65 white).

    About 2.3 is a just-noticeable difference; :data:`MIN_DELTA_E` = 15 keeps two series
    clearly apart.

    Examples
    --------
    >>> delta_e76("#0072B2", "#0072B2")
    0.0
    """
    return math.dist(_lab(a), _lab(b))


def translucent(color: str, alpha: float) -> str:
    """``color`` as ``rgba(r, g, b, alpha)``: a band or shading fill, alpha in [0, 0.3].

    Raises
    ------
    ValueError
        If ``alpha`` is outside [0, :data:`MAX_FILL_ALPHA`] (more opaque fills must be a
        line colour meeting the contrast rule) or ``color`` is not a palette line colour.

    Examples
    --------
    >>> translucent("#7C5CBF", 0.07)
    'rgba(124, 92, 191, 0.07)'
    """
    if not 0.0 <= float(alpha) <= MAX_FILL_ALPHA:
        raise ValueError(f"alpha {alpha!r} outside [0, {MAX_FILL_ALPHA}] for a translucent fill")
    if not is_line_color(color):
        raise ValueError(f"{color!r} is not a palette line colour (core.figures.palette)")
    r, g, b, _ = parse_color(color)
    return f"rgba({r}, {g}, {b}, {float(alpha):g})"


def is_line_color(color: str) -> bool:
    """Whether ``color`` (opaque) is one of :data:`LINE_COLORS` (case-insensitive)."""
    try:
        r, g, b, alpha = parse_color(color)
    except ValueError:
        return False
    return alpha == 1.0 and f"#{r:02X}{g:02X}{b:02X}" in _LINE_HEX


_LINE_HEX = frozenset(_hex(c) for c in LINE_COLORS.values())


def _distinct(group: str, colors: Iterable[tuple[str, str]]) -> list[str]:
    items = list(colors)
    out = []
    for i, (ka, a) in enumerate(items):
        for kb, b in items[i + 1:]:
            if (d := delta_e76(a, b)) < MIN_DELTA_E:
                out.append(f"{group} {ka} {a} and {kb} {b}: ΔE {d:.1f} < {MIN_DELTA_E}")
    return out


def check_palette() -> tuple[str, ...]:
    """Every rule of this module's docstring, checked on the palette: the problems found.

    Returns
    -------
    tuple of str
        Empty when every line colour has contrast ≥ :data:`MIN_CONTRAST` on every
        background, :data:`CELL_TEXT` has contrast ≥ :data:`MIN_TEXT_CONTRAST` on every
        cell fill and accuracy-scale stop, and the methods, the sources, the fallback rule
        colours (and each other group) are pairwise ΔE ≥ :data:`MIN_DELTA_E` apart.
    """
    problems = []
    for name, color in LINE_COLORS.items():
        for bg_name, bg in BACKGROUNDS.items():
            if (c := contrast_ratio(color, bg)) < MIN_CONTRAST:
                problems.append(f"line colour {name} {color}: contrast {c:.2f} on the "
                                f"{bg_name} background {bg}")
    for name, fill in CELL_FILLS.items():
        if (c := contrast_ratio(CELL_TEXT, fill)) < MIN_TEXT_CONTRAST:
            problems.append(f"cell {name} {fill}: text {CELL_TEXT} contrast {c:.2f}")
    for stop, fill in ACCURACY_SCALE:
        if (c := contrast_ratio(CELL_TEXT, fill)) < MIN_TEXT_CONTRAST:
            problems.append(f"accuracy scale stop {stop} {fill}: text {CELL_TEXT} contrast "
                            f"{c:.2f}")
    problems += _distinct("method", METHOD_PALETTE.items())
    problems += _distinct("source", SOURCE_PALETTE.items())
    problems += _distinct("rule fallback", ((str(i), c) for i, c in enumerate(RULE_FALLBACK)))
    problems += _distinct("label", LABEL_PALETTE.items())
    problems += _distinct("estimator", ESTIMATOR_PALETTE.items())
    problems += _distinct("sweep", SWEEP_PALETTE.items())
    return tuple(problems)
