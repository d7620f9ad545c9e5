"""Streamlit glue of the Personal records page: its result objects, shared across sessions.

Each function returns one :mod:`core.records.views` object for small keys (today as an ISO
string, an as-of date, a policy, an item id, a condition, an update id, an upload's digest)
from a bounded cache that every session reads and nobody mutates (:func:`.cache.shared_cache`).
:func:`read_response_upload`, :func:`read_decision_upload` and :func:`read_writeback_upload`
read an uploaded file of each track through ``core.records``' one validated reader
(:mod:`core.records.inputs`, the command line's too) and keep the last good file in use when
a new one is refused; :func:`url_select_slider` is a ``st.select_slider`` whose value lives
in the URL.

Tables are drawn by :func:`fitted_table`: every column gets a pixel width that holds its title
and its widest cell as printed (:func:`fit_columns`, from the font's measured glyph widths,
:func:`text_px`), and the page keeps each table within :data:`TABLE_WIDTH`, the main column at
a 1280 px window, so no table cuts a cell or scrolls sideways there (issue 22); text too long
for a cell wraps (:data:`WRAP_ROW`) or is listed under the table.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import streamlit as st

from core.records.disclosure import (
    DisclosureScore,
    load_disclosure,
    read_decisions,
    reference_decisions,
    score_decision_file,
)
from core.records.inputs import MAX_BYTES, InputError, dump_lines
from core.records.score import score_responses
from core.records.views import (
    ArmsView,
    AsOfView,
    DisclosureView,
    ItemView,
    RecordsBase,
    ScoreView,
    WritebackView,
    arms_view,
    as_of_view,
    disclosure_view,
    item_view,
    load_base,
    parse_upload,
    score_view,
    writeback_view,
)
from core.records.writeback import (
    WritebackScore,
    load_updates,
    read_writebacks,
    reference_writebacks,
    score_writeback_file,
)
from core.urlparams import ChoiceParam

from .cache import shared_cache
from .params import current, url_sync
from .ui import glossary_help, number_table
from .uploads import keep_last_good

__all__ = ["EXPANDER_TABLE_WIDTH", "REQUESTER", "TABLE_WIDTH", "UPLOAD_MB", "WRAP_ROW",
           "arms_of", "as_of_of", "base_of", "cell_text", "decision_example_bytes",
           "disclosure_of", "example_bytes", "fit_columns", "fitted_table", "item_of",
           "read_decision_upload", "read_response_upload", "read_writeback_upload",
           "reference_decision_score", "reference_score", "reference_writeback_score",
           "text_px", "url_select_slider", "with_interval", "writeback_example_bytes",
           "writeback_of"]

#: The upload cap in MiB as the uploader states it (``server.maxUploadSize``).
UPLOAD_MB = MAX_BYTES // 2**20

#: The requesters of the disclosure track as a table's column titles and cells (the page
#: gives each title the requester's description as its hover text).
REQUESTER = {"sister": "sister", "hr": "human resources", "web_form": "web form"}

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


def with_interval(frame: pd.DataFrame, low: str = "95 % low", high: str = "95 % high", *,
                  fmt: str = "{:.3f}", title: str = "95 % interval") -> pd.DataFrame:
    """``frame`` with its ``low`` and ``high`` columns printed as one ``[low, high]`` text
    column, ``title``, where ``low`` was (two number columns whose titles are wider than
    their numbers cost a table 1280 px could not give it)."""
    if low not in frame or high not in frame:
        return frame
    text = [("—" if pd.isna(a) or pd.isna(b) else f"[{fmt.format(a)}, {fmt.format(b)}]")
            for a, b in zip(frame[low], frame[high], strict=True)]
    out = frame.drop(columns=[high])
    out[low] = text
    return out.rename(columns={low: title})


def fitted_table(frame: pd.DataFrame, config: Mapping | None = None, *,
                 default: str | None = None, formats: Mapping[str, str] | None = None,
                 wrap: Mapping[str, int] | None = None, **kwargs) -> None:
    """``st.dataframe`` of ``frame`` with :func:`fit_columns`' widths, without its index and
    stretched to the column (``kwargs`` go to ``st.dataframe``). With ``default`` (a Python
    format such as ``"{:.2f}"``; ``formats`` per column) the floats are printed as
    :func:`.ui.number_table` prints them; ``config`` overrides its settings. A table with
    ``wrap`` columns is drawn with rows of :data:`WRAP_ROW` px."""
    if default is not None:
        frame, numbers = number_table(frame, formats=formats, default=default)
        config = {**numbers, **(config or {})}
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    if wrap:
        kwargs.setdefault("row_height", WRAP_ROW)
    config = glossary_help(frame, config)  # a column showing "M1" or "H11" defines it
    st.dataframe(frame, column_config=fit_columns(frame, config, wrap=wrap), **kwargs)


def _day(iso: str) -> _dt.date:
    return _dt.date.fromisoformat(iso)


@shared_cache(max_entries=4, spinner="Checking the world and scoring the reference readers…")
def base_of(today: str) -> RecordsBase:
    """The checked world, its items and the reference readers' scores as of ``today``."""
    return load_base(today=_day(today))


@shared_cache(max_entries=96)
def as_of_of(today: str, as_of: str, policy: str) -> AsOfView:
    """Answers on ``as_of`` under ``policy`` and the facts on the timeline."""
    return as_of_view(base_of(today), as_of=_day(as_of), policy=policy)


@shared_cache(max_entries=4)
def arms_of(today: str) -> ArmsView:
    """The six arms' texts and lengths."""
    return arms_view(base_of(today))


@shared_cache(max_entries=96)
def item_of(today: str, item_id: str) -> ItemView:
    """One item with every reader's answer."""
    return item_view(base_of(today), item_id)


@shared_cache(max_entries=8)
def disclosure_of(condition: str) -> DisclosureView:
    """The requester × item decisions of one policy condition."""
    return disclosure_view(condition)


@shared_cache(max_entries=24)
def writeback_of(today: str, update_id: str, applied: bool) -> WritebackView:
    """One update, applied or not, with the attribute's history."""
    return writeback_view(base_of(today), update_id, applied=applied)


@shared_cache(max_entries=4)
def reference_score(today: str) -> ScoreView:
    """The reference readers' measures, sign tests and hypothesis table."""
    return score_view(base_of(today).score)


@shared_cache(max_entries=4)
def example_bytes(today: str) -> bytes:
    """The reference readers' responses as a JSON Lines file (an example upload)."""
    return "".join(json.dumps(r) + "\n" for r in base_of(today).responses).encode("utf-8")


def _refused(read):
    """``read()``; a refusal lists the first three malformed lines (the command line lists
    twenty), and a ``RecursionError`` (which the reader's depth limit should never let
    through) is refused as a ``ValueError`` too: an upload never ends in an exception box."""
    try:
        return read()
    except InputError as exc:
        raise ValueError(exc.summary(3)) from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


@shared_cache(max_entries=16)
def _upload_score(today: str, digest: str, name: str, _data: bytes) -> ScoreView:
    """The score of an uploaded file, shared by digest (``ValueError`` if it is refused)."""
    base = base_of(today)
    pairs = _refused(lambda: parse_upload(_data, name=name))
    return score_view(score_responses(pairs, base.items, base.world, today=base.today))


@shared_cache(max_entries=2)
def decision_example_bytes() -> bytes:
    """The reference reader's release decisions as a JSON Lines file (an example upload)."""
    requesters, infos = load_disclosure()
    return dump_lines(reference_decisions(infos, requesters))


@shared_cache(max_entries=2)
def reference_decision_score() -> DisclosureScore:
    """M9–M11 per condition of the reference reader's decisions."""
    requesters, infos = load_disclosure()
    return score_decision_file(reference_decisions(infos, requesters), infos,
                               requesters=tuple(requesters))


@shared_cache(max_entries=16)
def _decision_score(digest: str, name: str, _data: bytes) -> DisclosureScore:
    requesters, infos = load_disclosure()
    pairs = _refused(lambda: read_decisions(_data, name=name))
    return score_decision_file(pairs, infos, requesters=tuple(requesters))


def read_decision_upload(uploaded, *, key: str) -> tuple[DisclosureScore, str] | None:
    """Score an uploaded decision file (:mod:`core.records.disclosure`'s contract); keep the
    last good one when a new one is refused (one plain-text error line)."""
    got = keep_last_good(
        uploaded, key=key, default="decisions.jsonl", load=_decision_score,
        kept_note=" Still scoring the previous file, {name}.",
        expired_note=" Showing the reference reader instead.",
        none_note=" Showing the reference reader instead.")
    return None if got is None else (got[0], got[1])


@shared_cache(max_entries=4)
def writeback_example_bytes(today: str) -> bytes:
    """The reference readers' write-back responses as a JSON Lines file."""
    return dump_lines(reference_writebacks(base_of(today).world, load_updates()))


@shared_cache(max_entries=4)
def reference_writeback_score(today: str) -> WritebackScore:
    """M12–M13 per arm of the reference readers' write-back responses."""
    world, updates = base_of(today).world, load_updates()
    return score_writeback_file(reference_writebacks(world, updates), world, updates)


@shared_cache(max_entries=16)
def _writeback_score(today: str, digest: str, name: str, _data: bytes) -> WritebackScore:
    pairs = _refused(lambda: read_writebacks(_data, name=name))
    return score_writeback_file(pairs, base_of(today).world, load_updates())


def read_writeback_upload(uploaded, *, key: str, today: str
                          ) -> tuple[WritebackScore, str] | None:
    """Score an uploaded write-back file (:mod:`core.records.writeback`'s contract); keep
    the last good one when a new one is refused (one plain-text error line)."""
    got = keep_last_good(
        uploaded, key=key, default="writebacks.jsonl",
        load=lambda digest, name, data: _writeback_score(today, digest, name, data),
        kept_note=" Still scoring the previous file, {name}.",
        expired_note=" Showing the reference readers instead.",
        none_note=" Showing the reference readers instead.")
    return None if got is None else (got[0], got[1])


def read_response_upload(uploaded, *, key: str, today: str) -> tuple[ScoreView, str] | None:
    """Score an uploaded response file; keep the last good one when a new one is refused.

    Returns ``(score, file name)`` of the file in use, or ``None`` when none was uploaded
    (or the last good one expired from the cache). A refused file shows **one** plain-text
    ``st.error`` line: why (too large, too many lines, or the first bad line's number) and
    which file stays in use (:func:`.uploads.keep_last_good`).
    """
    got = keep_last_good(
        uploaded, key=key, default="upload.jsonl",
        load=lambda digest, name, data: _upload_score(today, digest, name, data),
        kept_note=" Still scoring the previous file, {name}.",
        expired_note=" Showing the reference readers instead.",
        none_note=" Showing the reference readers instead.")
    return None if got is None else (got[0], got[1])


def url_select_slider(spec: ChoiceParam, label: str, *, where=st, format_func=None, **kwargs):
    """``st.select_slider`` for ``spec`` (value from session state, URL kept in sync)."""
    if spec.key not in st.session_state:
        st.session_state[spec.key] = spec.default
    where.select_slider(label, list(spec.options), key=spec.key, on_change=url_sync(spec),
                        format_func=format_func or str, **kwargs)
    return current(spec)
