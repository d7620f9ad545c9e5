"""Table widths measured the way the browser draws them: every table fits the main column.

Streamlit sizes a dataframe's columns itself and cuts what does not fit with an ellipsis; at
1280 px that cut long answers, requester names and reasons (issue 22). :func:`fit_columns`
gives each column the width of its title and widest cell, from glyph advances measured in
Chromium (:data:`_GLYPHS`); the pages' tests check that a table's widths add up to at most
:data:`TABLE_WIDTH`. Used by the records, extraction, evaluation, fusion, walkthrough and
seed-003 glue; no Streamlit here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["EXPANDER_TABLE_WIDTH", "TABLE_WIDTH", "WRAP_ROW", "cell_text", "fit_columns",
           "text_px"]

#: Pixels a table has inside its border in the main column at a 1280 px window (980 px of
#: main area less 80 px of padding each side, less 2 px of border): every table of the page
#: fits this without scrolling sideways (at 1440 px the columns grow in proportion).
TABLE_WIDTH = 818
#: The same inside an expander (16 px of padding a side and its border).
EXPANDER_TABLE_WIDTH = TABLE_WIDTH - 34
#: Row height (px) of a table whose text wraps: Streamlit lets cells wrap only above 4 rem
#: (64 px), and 66 px holds three lines.
WRAP_ROW = 66
#: Glyph advances (px, rounded up to 0.05) of the tables' font, 14 px Source Sans, measured in
#: Chromium: printable ASCII in code order, then a few other characters the tables show; any
#: other character counts as the widest of them (⚠). A text's width is their sum (the font's
#: kerning moves it by about a pixel).
_GLYPHS = dict(zip(map(chr, range(32, 127)), (
    2.8, 4.05, 6, 7, 7, 11.55, 8.55, 3.5, 4.25, 4.25, 5.9, 7, 3.5, 4.4, 3.5, 4.9, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 3.5, 3.5, 7, 7, 7, 5.95, 11.9, 7.65, 8.25, 8, 8.65, 7.4, 6.95,
    8.65, 9.15, 3.7, 6.75, 8.15, 6.85, 10.2, 9.1, 9.3, 7.95, 9.3, 8, 7.5, 7.55, 9.05, 7.25,
    11.05, 7.2, 6.7, 7.55, 4.25, 4.9, 4.25, 7, 7, 7.6, 7.1, 7.75, 6.4, 7.8, 6.95, 4.1, 7.1,
    7.65, 3.45, 3.5, 6.95, 3.6, 11.65, 7.7, 7.6, 7.8, 7.8, 4.9, 5.9, 4.75, 7.65, 6.55, 10.1,
    6.25, 6.55, 5.95, 4.25, 3.4, 4.25, 7), strict=True)) | {
    "−": 7.0, "⚠": 12.6, "✓": 8.6, "✗": 7.4, "Δ": 8.25, "μ": 7.9, "—": 11.2, "·": 3.5,
    "£": 7.0, "é": 6.95, "…": 13.3, "×": 7.0, "≥": 7.0}
#: A cell's horizontal padding (8 px a side) and its border.
_CELL_PAD = 17
#: The narrowest column Streamlit draws.
_MIN_COLUMN = 50


def text_px(text: str) -> float:
    """Width in pixels of ``text`` in a table cell's font (:data:`_GLYPHS`)."""
    return sum(_GLYPHS.get(ch, 12.6) for ch in str(text))


def cell_text(value, fmt: str | None = None) -> str:
    """A cell as the table prints it: a number through its printf ``fmt`` (a ``%.<p>g``
    format as the browser prints it: positional down to 1e-6, then ``1.5e-8``), a missing
    value as an em dash, a box for a truth value."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "✓"
    if not fmt or not isinstance(value, (float, np.floating, int, np.integer)):
        return str(value)
    if not fmt.endswith("g"):
        return fmt % value
    digits = int(fmt[fmt.index(".") + 1:-1]) if "." in fmt else 6
    mantissa, exp = f"{float(value):.{max(digits - 1, 0)}e}".split("e")
    if -6 <= int(exp) < digits:
        return np.format_float_positional(float(f"{mantissa}e{exp}"), trim="-")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exp):+d}"


def fit_columns(frame: pd.DataFrame, config: Mapping | None = None, *,
                wrap: Mapping[str, int] | None = None) -> dict:
    """``column_config`` giving every column of ``frame`` a pixel width that shows its title
    and its widest cell whole (``config``: the settings to keep, labels and number formats
    included; ``wrap``: columns given a width of their own, whose text wraps in a table drawn
    with ``row_height=WRAP_ROW``). The page checks that a table's widths add up to at most
    :data:`TABLE_WIDTH` (``tests/test_app_records.py``)."""
    out: dict = {}
    for col in frame.columns:
        cfg = config.get(col) if config else None
        cfg = {"label": cfg} if isinstance(cfg, str) else dict(cfg or {})
        fmt = (cfg.get("type_config") or {}).get("format")
        title = cfg.get("label") or str(col)
        if wrap and col in wrap:
            width = int(wrap[col])
        else:
            widest = max([text_px(title)] + [text_px(cell_text(v, fmt)) for v in frame[col]])
            width = max(_MIN_COLUMN, math.ceil(widest) + _CELL_PAD)
        out[col] = {**cfg, "width": width}
    return out
