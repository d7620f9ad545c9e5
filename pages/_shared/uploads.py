"""One way to take an uploaded file: validate it, and keep the last good one when a new one
is refused (the Reliability page's forecasts CSV, the Personal records page's responses).

Session state holds only small values per uploader: the last good file's (name, digest) and
the (digest, reason) of the last refused one, so a refused file is not parsed again on later
reruns. The parsed results live in the caller's bounded shared cache, keyed on the digest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import PurePath
from typing import TypeVar

import streamlit as st

from .ui import escape_markdown

__all__ = ["keep_last_good", "safe_name"]

T = TypeVar("T")


def safe_name(name: object, *, default: str) -> str:
    """A file name fit to show and to key a cache: its last part, ``[A-Za-z0-9_.-]`` only,
    at most 80 characters (``default`` when nothing is left)."""
    base = PurePath(str(name)).name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._")[:80] or default


def keep_last_good(uploaded, *, key: str, load: Callable[[str, str, bytes], T], default: str,
                   kept_note: str, expired_note: str, none_note: str = ""
                   ) -> tuple[T, str, str] | None:
    """The upload's parsed value, or the last good file's when this one is refused.

    Parameters
    ----------
    uploaded : UploadedFile or None
        The value of ``st.file_uploader``.
    key : str
        Prefix of this uploader's session-state slots.
    load : callable (digest, name, data) → value
        The cached parser; raises ``ValueError`` (one line) for a file it refuses. Called
        with empty ``data`` to fetch the last good file by digest: an evicted entry must
        refuse the empty bytes.
    default : str
        The name of a file whose name is empty once made safe.
    kept_note, expired_note, none_note : str
        What the error line adds when the previous file stays in use (``{name}`` is its
        name), when it has expired from the cache, and when there was none.

    Returns
    -------
    (value, name, digest) or None
        ``None`` while nothing usable was uploaded. A refused file shows **one** plain-text
        ``st.error`` line. An empty uploader keeps the last good file (issue 20 point 1:
        replacing a file in a real browser first reruns the page with an empty uploader, which
        used to forget it); a note says so, and its "Forget it" button drops it.

    Notes
    -----
    Every branch draws the same shape: one row of two columns, each holding at most one
    element (the note or the refusal on the left, the button on the right). Replacing a file
    starts two runs within milliseconds (empty uploader, then the new file); when the first
    drew a row of columns where the second drew a bare ``st.error``, the first run's late
    column deltas landed under the second run's element and the browser's renderer threw
    ("'setIn' cannot be called on an ElementNode"), blanking the whole page (once in about
    35 replacements on a loaded machine). With one shape, any interleaving of the two runs'
    deltas lands on a node of the kind it expects.
    """
    slot, refused = f"{key}__last_good", f"{key}__refused"
    note, side = st.columns([5, 1], vertical_alignment="center")
    if uploaded is None:
        st.session_state.pop(refused, None)
        last = st.session_state.get(slot)
        if last is None:
            return None
        try:  # a cache hit by digest; an evicted entry refuses the empty bytes
            kept = load(last[1], last[0], b"")
        except ValueError:
            st.session_state.pop(slot, None)
            return None
        note.caption(escape_markdown(f"The uploader is empty: still showing the last good "
                                     f"file, {last[0]}."))
        side.button("Forget it", key=f"{key}__forget", icon=":material/delete:",
                    on_click=st.session_state.pop, args=(slot, None))
        return kept, last[0], last[1]
    data = uploaded.getvalue()
    digest = hashlib.sha1(data).hexdigest()
    name = safe_name(uploaded.name, default=default)
    last = st.session_state.get(slot)  # (name, digest) of the last good file
    if last is not None and last[1] == digest:
        return load(digest, last[0], data), last[0], digest
    verdict = st.session_state.get(refused)
    if verdict is None or verdict[0] != digest:
        try:
            value = load(digest, name, data)
        except ValueError as exc:
            verdict = (digest, str(exc).splitlines()[0].rstrip("."))
            st.session_state[refused] = verdict
        else:
            st.session_state[slot] = (name, digest)
            st.session_state.pop(refused, None)
            return value, name, digest
    kept = None
    if last is not None:
        try:  # a cache hit by digest; an evicted entry refuses the empty bytes
            kept = load(last[1], last[0], b"")
        except ValueError:
            kept = None
    text = (kept_note.format(name=last[0]) if kept is not None
            else expired_note if last is not None else none_note)
    note.error(escape_markdown(f"This file was refused: {verdict[1]}.{text}"),
               icon=":material/error:")
    return (kept, last[0], last[1]) if kept is not None else None
