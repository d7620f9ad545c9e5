"""Streamlit glue of the "Your data" page: its URL parameters, the data choice, and its
result objects, shared across sessions.

A data choice is identified by a small tuple, the **data key**: ``("builtin", set, label,
case, minutes, numeric)`` for a built-in set, ``("upload", digest, layout, mapping, case,
minutes, numeric)`` for an uploaded table. :func:`fit_of` returns the fitted resolvers of a
key (:class:`core.fusion.views.FusionFit`) from a bounded cache that every session reads and
nobody mutates (:func:`.cache.shared_cache`), and each ``*_of`` function one view of
:mod:`core.fusion.views` for the key and a few widget values.

:func:`choose_upload` draws the uploader, the layout and the column mapping. A file that
cannot be read keeps the last good file (:func:`.uploads.keep_last_good`); a file that reads
but whose mapped table is refused (a repeated pair, an empty claim …) keeps the last good
table; either way one plain-text error line says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.fusion.builtin import BUILTIN_SETS
from core.fusion.importer import ImportResult
from core.fusion.views import (
    METHODS,
    BoardView,
    ContradictedView,
    CopyView,
    FusionFit,
    LabelView,
    PairView,
    ReliabilityData,
    SourceView,
    WhatIfView,
    WhyView,
    board_view,
    contradicted_view,
    copy_view,
    example_table,
    fit_builtin_with,
    fit_fusion,
    guess_columns,
    import_frame,
    item_claims,
    label_view,
    normalisers,
    pair_view,
    predictions_frame,
    read_table,
    reliability_data,
    source_view,
    what_if_items,
    what_if_view,
    why_view,
)
from core.urlparams import ChoiceParam, FlagParam, NumberParam

from .cache import shared_cache
from .ui import escape_markdown, number_table, table_height
from .uploads import keep_last_good
from .widths import TABLE_WIDTH, WRAP_ROW, fit_columns, text_px
from .workers import Call, cached_calls, result_store

__all__ = ["DATA", "LABELS", "LEARNED", "METHOD_NAMES", "PARAMS", "P_CASE", "P_COV",
           "P_LABEL", "P_LEARNED", "P_METHODS", "P_MINUTES", "P_NUMERIC", "P_PAIR", "P_REL",
           "P_SET", "TERMS",
           "Chosen", "board_of", "choose_upload", "contradicted_of", "copies_of",
           "example_csv", "fit_of", "item_claims_of", "labels_of", "pairs_of",
           "predictions_of", "reliability_of", "sources_of", "what_if_items_of", "what_if_of",
           "whole_table", "why_of"]

#: Data choice → its short name on the page (the built-in sets, then an upload).
DATA = {"flight": "Flight", "flight_all": "Flight, whole day", "mozafari": "Crowd, 0/1 labels",
        "adult": "Crowd, adult content", "nq_open": "NQ-open systems", "upload": "Your file"}
assert set(DATA) - {"upload"} == {b.key for b in BUILTIN_SETS}
#: NQ-open's two label sources.
LABELS = {"human": "people", "exact_match": "exact match"}
METHOD_NAMES = {m.key: m.name for m in METHODS}
#: Method key → its glossary entry (for ``tip``).
TERMS = {"mv": "Majority vote", "one_coin": "One-coin EM", "dawid_skene": "Dawid–Skene",
         "glad": "GLAD", "accu": "ACCU", "accu_depen": "Source dependence",
         "nb": "Naive Bayes fusion"}
LEARNED = tuple(m.key for m in METHODS if m.learned and not m.supervised)

P_SET = ChoiceParam("yd_set", "data set", tuple(DATA), default="flight")
P_LABEL = ChoiceParam("yd_label", "label source", tuple(LABELS), default="human")
P_CASE = FlagParam("yd_case", "ignore case and spacing", False)
P_MINUTES = NumberParam("yd_minutes", "time tolerance", 0, 30, 5, 0, integer=True)
P_NUMERIC = NumberParam("yd_numeric", "numeric tolerance", 0.0, 1000.0, 0.01, 0.0)
P_METHODS = ChoiceParam("yd_methods", "resolvers", tuple(METHOD_NAMES),
                        default=tuple(METHOD_NAMES), multi=True)
P_COV = NumberParam("yd_cov", "coverage", 0.1, 1.0, 0.05, 0.8)
P_PAIR = ChoiceParam("yd_pair", "matrix", ("false", "beyond"), default="false")
P_LEARNED = ChoiceParam("yd_learned", "learned resolver", LEARNED, default="dawid_skene")
P_REL = ChoiceParam("yd_rel", "reliability resolvers", tuple(METHOD_NAMES),
                    default=("mv", "accu_depen"), multi=True)
#: Every URL parameter of the page.
PARAMS = [P_SET, P_LABEL, P_CASE, P_MINUTES, P_NUMERIC, P_METHODS, P_COV, P_PAIR, P_LEARNED,
          P_REL]


# ----------------------------------------------------------------------------- fits
#: Built-in fits kept across sessions (one per set and normaliser setting; ~10 MB pickled
#: for the whole flight day).
FIT_STORE_ENTRIES = 12


def _builtin(key: str, label: str, case: bool, minutes: int, numeric: float
             ) -> tuple[ImportResult, FusionFit]:
    """A built-in set's import and fits, shared by every session; a miss runs on the worker
    pool (the whole flight day takes ~7 s: in the server process it would hold every other
    visitor of this replica for that long)."""
    args = (key, label if key == "nq_open" else None, bool(case), int(minutes),
            float(numeric))
    call = Call(fit_builtin_with, (args[0],), dict(label=args[1], case=args[2],
                                                   minutes=args[3], numeric=args[4]))
    out = cached_calls(result_store("fusion_builtin", FIT_STORE_ENTRIES),
                       {"fit": (args, lambda: call)},
                       spinner="Running every resolver on the table…")
    return out["fit"]


@shared_cache(max_entries=8, spinner="Reading the file…")
def _read_upload(digest: str, name: str, _data: bytes) -> pd.DataFrame:
    """The uploaded file as a frame of strings, shared by digest (``ValueError`` if it
    cannot be read, or when only the digest is given and the entry has expired)."""
    if not _data:
        raise ValueError("the file has expired from the cache")
    return read_table(_data, name=name)


@shared_cache(max_entries=8, spinner="Running every resolver on your table…")
def _upload(digest: str, layout: str, mapping: tuple, case: bool, minutes: int,
            numeric: float, _frame: pd.DataFrame | None = None
            ) -> tuple[ImportResult, FusionFit]:
    if _frame is None:
        raise ValueError("the table has expired from the cache")
    imported = import_frame(_frame, layout=layout, columns=dict(mapping),
                            normalise=normalisers(case=case, minutes=minutes, numeric=numeric))
    return imported, fit_fusion(imported)


def fit_of(key: tuple) -> tuple[ImportResult, FusionFit]:
    """The import and the fitted resolvers of a data key (module docstring)."""
    if key[0] == "builtin":
        return _builtin(*key[1:])
    return _upload(*key[1:])


# ----------------------------------------------------------------------------- views
@shared_cache(max_entries=48)
def board_of(key: tuple, methods: tuple[str, ...], coverage: float) -> BoardView:
    return board_view(fit_of(key)[1], methods, coverage=coverage)


@shared_cache(max_entries=16)
def copies_of(key: tuple) -> CopyView:
    return copy_view(fit_of(key)[1])


@shared_cache(max_entries=16)
def sources_of(key: tuple) -> SourceView:
    return source_view(fit_of(key)[1], copies=copies_of(key))


@shared_cache(max_entries=16)
def pairs_of(key: tuple) -> PairView:
    return pair_view(fit_of(key)[1], copies=copies_of(key))


@shared_cache(max_entries=48)
def why_of(key: tuple, learned: str) -> WhyView:
    return why_view(fit_of(key)[1], learned, copies=copies_of(key))


@shared_cache(max_entries=32)
def contradicted_of(key: tuple, methods: tuple[str, ...]) -> ContradictedView:
    return contradicted_view(fit_of(key)[1], methods)


@shared_cache(max_entries=64, spinner="Refitting without those claims…")
def what_if_of(key: tuple, method: str, item: str, drop: tuple[str, ...],
               flip: tuple[str, str] | None) -> WhatIfView:
    return what_if_view(fit_of(key)[1].claims, method, item, drop=drop, flip=flip)


@shared_cache(max_entries=16)
def what_if_items_of(key: tuple) -> tuple[str, ...]:
    return what_if_items(fit_of(key)[1], copies_of(key))


@shared_cache(max_entries=128)
def item_claims_of(key: tuple, item: str) -> pd.DataFrame:
    return item_claims(fit_of(key)[1].claims, item)


@shared_cache(max_entries=32)
def reliability_of(key: tuple, methods: tuple[str, ...]) -> ReliabilityData:
    return reliability_data(fit_of(key)[1], methods)


@shared_cache(max_entries=8)
def labels_of(key: tuple) -> LabelView:
    return label_view(fit_of(key)[1])


@shared_cache(max_entries=16)
def predictions_of(key: tuple) -> pd.DataFrame:
    return predictions_frame(fit_of(key)[1])


@shared_cache(max_entries=2)
def example_csv() -> bytes:
    """An example upload: the first 60 flights-and-attributes of the Flight set, long."""
    return example_table().to_csv(index=False).encode("utf-8")


# ----------------------------------------------------------------------------- uploads
@dataclass(frozen=True)
class Chosen:
    """An uploaded table in use: its data key, file name, and the warning it was kept with."""

    key: tuple
    name: str


_ROLES_LONG = ("item", "source", "claim", "truth", "split", "weight")
_ROLES_WIDE = ("item", "truth", "split")
_OPTIONAL = {"truth", "split", "weight"}
_NONE = "(none)"


def choose_upload(*, case: bool, minutes: int, numeric: float) -> Chosen | None:
    """The uploader, its layout and column mapping; the table in use, or None.

    A refused file or table gives **one** plain-text error line and the last good table stays
    in use; None while there is nothing usable.
    """
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    up = c1.file_uploader(
        "A table of claims: CSV or Parquet, gzip-compressed too (over 20 MB is refused)",
        type=["csv", "parquet", "pq", "gz"], key="yd_upload",
        help="Long layout: one row per claim, with columns for the item, the source and its "
             "claim, and optionally the truth. Wide layout: one row per item and one column "
             "per source.")
    c2.download_button("Example file", example_csv(), file_name="claims_example.csv",
                       mime="text/csv", on_click="ignore", key="yd_example",
                       icon=":material/download:",
                       help="Sixty items of the Flight set in the long layout.")
    got = keep_last_good(up, key="yd_upload", load=_read_upload, default="claims.csv",
                         kept_note=" Still using the previous file, {name}.",
                         expired_note=" Upload it again to go on.", none_note="")
    if got is None:
        return _last_table()
    frame, name, digest = got
    columns = [str(c) for c in frame.columns]
    guess_layout, guess = guess_columns(columns)
    tag = digest[:12]
    m1, m2 = st.columns([1, 3])
    layout = m1.segmented_control(
        "Layout", ["long", "wide"], default=guess_layout, key=f"yd_layout_{tag}",
        required=True, help="Long: one row per claim. Wide: one row per item, one column "
                            "per source (an empty cell is no claim).")
    roles = _ROLES_LONG if layout == "long" else _ROLES_WIDE
    mapping = {}
    cols = m2.columns(len(roles))
    for col, role in zip(cols, roles, strict=True):
        options = ([_NONE] if role in _OPTIONAL else []) + columns
        default = guess.get(role)
        index = options.index(default) if default in options else 0
        picked = col.selectbox(role, options, index=index, key=f"yd_map_{tag}_{layout}_{role}")
        mapping[role] = None if picked == _NONE else picked
    key = ("upload", digest, layout, tuple(sorted(mapping.items())), bool(case), int(minutes),
           float(numeric))
    try:
        _upload(*key[1:], _frame=frame)
    except ValueError as exc:
        reason = " ".join(str(exc).split()).rstrip(".")
        last = _last_table()
        kept = f" Still showing the last good table, from {last.name}." if last else ""
        st.error(escape_markdown(f"This table was refused: {reason}.{kept}"),
                 icon=":material/error:")
        return last
    st.session_state["yd_upload__table"] = (key, name)
    return Chosen(key=key, name=name)


def _last_table() -> Chosen | None:
    """The last good uploaded table, if its fit is still in the cache."""
    last = st.session_state.get("yd_upload__table")
    if last is None:
        return None
    try:
        fit_of(last[0])
    except ValueError:
        st.session_state.pop("yd_upload__table", None)
        return None
    return Chosen(key=last[0], name=last[1])


def _shrink(widths: dict[str, int], floors: dict[str, int], excess: int) -> dict[str, int]:
    """``widths`` less ``excess`` px in all, each column giving in proportion to what it
    has above its floor, none below it."""
    room = {c: max(widths[c] - floors[c], 0) for c in widths}
    total = sum(room.values())
    if total <= 0 or excess <= 0:
        return dict(widths)
    take = min(excess, total)
    return {c: widths[c] - math.ceil(take * room[c] / total) for c in widths}


#: Lines a wrapped row may grow to (a row of 17 px lines and 15 px of padding).
_MAX_LINES = 5


def _lines(text: str, width: float) -> int:
    """Lines ``text`` takes when wrapped between words into ``width`` px (a word wider than
    that breaks)."""
    lines, used, space = 1, 0.0, text_px(" ")
    for word in text.split():
        w = text_px(word)
        if used and used + space + w > width:
            lines, used = lines + 1, 0.0
        if w > width:
            lines += math.ceil(w / width) - 1
            used = w % width
        else:
            used += (space if used else 0.0) + w
    return lines


def _in_proportion(widths: dict[str, int], floors: dict[str, int], room: int
                   ) -> dict[str, int]:
    """``room`` px shared in proportion to ``widths`` (so each column's text takes about as
    many lines as the others'), none below its floor."""
    share: dict[str, int] = {}
    free = dict(widths)
    while free:
        scale = (room - sum(share.values())) / sum(free.values())
        low = [c for c in free if free[c] * scale < floors[c]]
        if not low:
            share.update({c: max(floors[c], math.floor(w * scale)) for c, w in free.items()})
            break
        for c in low:
            share[c] = floors[c]
            del free[c]
    return {c: share[c] for c in widths}


def whole_table(frame: pd.DataFrame, *, labels: Mapping[str, str] | None = None,
                default: str = "{:.1f}", formats: Mapping[str, str] | None = None,
                wrap: Sequence[str] = (), rows: int | None = None) -> None:
    """``st.dataframe`` of ``frame`` (floats printed as :func:`.ui.number_table` prints them,
    ``labels`` as column titles) with every cell whole at a 1280 px window.

    Every column is as wide as its title and widest cell (:func:`.records.fit_columns`).
    When the widths add up to more than :data:`.records.TABLE_WIDTH` (a list of copying
    sites, a question, a long web address), the ``wrap`` columns narrow until they fit and
    their text wraps, in rows of at least :data:`.records.WRAP_ROW` px (three lines; up to
    five when a column's text needs them): down to their
    longest word and to what three lines hold, if that is enough (lines break between
    words), else in proportion to their widths (each takes about as many lines), none
    narrower than its title.
    ``rows``: the rows shown without scrolling (default all).
    """
    shown, config = number_table(frame, formats=formats, default=default, labels=labels)
    widths = fit_columns(shown, config)
    n = len(shown) if rows is None else min(len(shown), rows)
    sizes: dict = {"height": table_height(n)}
    wrap = [c for c in wrap if c in widths]
    excess = sum(c["width"] for c in widths.values()) - TABLE_WIDTH
    if wrap and excess > 0:
        have = {c: widths[c]["width"] for c in wrap}
        title = {c: math.ceil(text_px(widths[c].get("label") or c)) + 17 for c in wrap}
        word = {c: max([title[c]] + [math.ceil(text_px(w)) + 17 for v in shown[c]
                                     for w in str(v).split()]) for c in wrap}
        # three lines of a row hold about 2.6 lines' worth of text, as lines break at words
        floor = {c: max(word[c], math.ceil((have[c] - 17) / 2.6) + 17) for c in wrap}
        share = _shrink(have, floor, excess)
        if sum(have.values()) - sum(share.values()) < excess:  # words must break too
            share = _in_proportion(have, title, sum(have.values()) - excess)
        widths = fit_columns(shown, config, wrap=share)
        lines = max(_lines(str(v), share[c] - 17) for c in wrap for v in shown[c])
        row = max(WRAP_ROW, 15 + 17 * min(lines, _MAX_LINES))
        sizes = {"row_height": row, "height": 38 + row * n + 2}
    st.dataframe(shown, hide_index=True, width="stretch", column_config=widths, **sizes)
