"""Streamlit glue of the Personal records page: its result objects, shared across sessions.

Each function returns one :mod:`core.records.views` object for small keys (today as an ISO
string, an as-of date, a policy, an item id, a condition, an update id, an upload's digest)
from a bounded cache that every session reads and nobody mutates (:func:`.cache.shared_cache`).
:func:`read_response_upload` keeps the last good uploaded response file in use when a new one
is refused; :func:`url_select_slider` is a ``st.select_slider`` whose value lives in the URL.
"""

from __future__ import annotations

import datetime as _dt
import json

import streamlit as st

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
from core.urlparams import ChoiceParam

from .cache import shared_cache
from .params import current, url_sync
from .uploads import keep_last_good

__all__ = ["arms_of", "as_of_of", "base_of", "disclosure_of", "example_bytes", "item_of",
           "read_response_upload", "reference_score", "url_select_slider", "writeback_of"]



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


@shared_cache(max_entries=16)
def _upload_score(today: str, digest: str, name: str, _data: bytes) -> ScoreView:
    """The score of an uploaded file, shared by digest (``ValueError`` if it is refused)."""
    base = base_of(today)
    pairs = parse_upload(_data, name=name)
    return score_view(score_responses(pairs, base.items, base.world, today=base.today))


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
