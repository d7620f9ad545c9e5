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
from collections.abc import Mapping

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
from .widths import EXPANDER_TABLE_WIDTH, TABLE_WIDTH, WRAP_ROW, cell_text, fit_columns, text_px

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
