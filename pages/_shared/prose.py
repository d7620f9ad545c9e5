"""Streamlit glue of the Extraction page (and the Walkthrough's prose excerpt).

Every loader returns one :mod:`core.prose.views` object for small keys (the store path and
its stamp, a persona, a question, a source, a noise profile and ε, two method names), from a
bounded cache every session reads and nobody mutates (:func:`.cache.shared_cache`). The
resolvers are fitted on μ* once per store (:func:`load_mixed_fit`); a noise or method change
only flips atoms and predicts.

:func:`prose_html` draws a section's lines as escaped text: every line goes through
:func:`html.escape`, so a document (ours, or a release's imported prose) is shown as the
characters it holds and never as markup. The lines the selected atom read carry the class
``arbiter-marked`` (the browser test looks for it) and a translucent highlight of the
palette's amber, which reads in both themes because the text keeps the theme's colour.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import streamlit as st

from core.figures.palette import HUES, translucent
from core.prose.paraphrase_profile import load_paraphrase_profile, profile_words
from core.prose.views import (
    FactorialView,
    FaithfulnessView,
    MixedFit,
    NoiseView,
    ProseSection,
    ProseView,
    WordingView,
    factorial_view,
    faithfulness_view,
    mixed_fit,
    noise_view,
    prose_excerpt,
    prose_personas,
    prose_view,
    wording_view,
)
from core.testbed.questions import SOURCE_SHORT, SOURCES

from .cache import shared_cache
from .store import get_connection
from .ui import download_table, table_height
from .widths import TABLE_WIDTH, WRAP_ROW

__all__ = ["GRID_INDEX", "MARK_CLASS", "WORDING_RATE", "atom_grid", "excerpt_of",
           "factorial_of", "faithfulness_of", "grid_columns", "load_mixed_fit", "noise_of",
           "paraphrase_profile_words", "personas_of", "prose_html", "prose_of", "wording_of"]

MARK_CLASS = "arbiter-marked"
_MARK = translucent(HUES["amber"], 0.3)
#: bootstrap replicates of the page's 2 × 2 (the command line's default is 2000)
PAGE_BOOT = 1000
#: the page's paraphrase rate per kind of rewrite, and its seed (docs/prose.md)
WORDING_RATE, WORDING_SEED = 0.1, 0
#: the atom grid's question-id column (px); the five source columns share the rest of the
#: page's width equally, and their answers wrap (up to three lines of about 135 px at 1280 px)
GRID_INDEX = 56


@shared_cache(max_entries=8)
def personas_of(path: str, stamp: int) -> tuple[tuple[int, str], ...]:
    """(seed, persona id) of every persona with a render, test split first."""
    return prose_personas(get_connection(path, stamp))


@shared_cache(max_entries=256)
def prose_of(path: str, stamp: int, seed: int, persona_id: str, qid: str,
             source: str) -> ProseView:
    """One persona's prose with the atom ``(qid, source)`` selected."""
    return prose_view(get_connection(path, stamp), seed=seed, persona_id=persona_id, qid=qid,
                      source=source)


@shared_cache(max_entries=256)
def excerpt_of(path: str, stamp: int, seed: int, persona_id: str, qid: str,
               sources: tuple[str, ...]) -> tuple[ProseSection, ...]:
    """The sentences behind ``qid``'s atoms from ``sources`` (the Walkthrough's excerpt)."""
    return prose_excerpt(get_connection(path, stamp), seed=seed, persona_id=persona_id,
                         qid=qid, sources=sources)


@shared_cache(max_entries=8, spinner="Counting where the extractor agrees with the records…")
def faithfulness_of(path: str, stamp: int) -> FaithfulnessView:
    """The extractor's faithfulness over every persona of the store."""
    return faithfulness_view(get_connection(path, stamp))


@shared_cache(max_entries=8, spinner="Rewording the prose and reading it again…")
def wording_of(path: str, stamp: int, rate: float) -> WordingView:
    """The extractor on the store's prose and on a seeded paraphrase of it at ``rate``."""
    return wording_view(get_connection(path, stamp), rate=rate, seed=WORDING_SEED)


@shared_cache(max_entries=1)
def paraphrase_profile_words() -> str:
    """The noise panel's "ours on reworded prose" profile in plain words (its shipped file)."""
    return profile_words(load_paraphrase_profile())


@shared_cache(max_entries=4, spinner="Fitting every resolver on the clean atoms (once)…")
def load_mixed_fit(path: str, stamp: int) -> MixedFit:
    """Every resolver fitted and calibrated on μ*, seed by seed (once per store)."""
    return mixed_fit(get_connection(path, stamp))


@shared_cache(max_entries=64)
def noise_of(path: str, stamp: int, profile: str, eps: float) -> NoiseView:
    """Every resolver re-scored on the extracted atoms flipped with ``profile`` / ``eps``."""
    return noise_view(load_mixed_fit(path, stamp), profile=profile, eps=eps)


@shared_cache(max_entries=64)
def factorial_of(path: str, stamp: int, a: str, b: str, profile: str,
                 eps: float) -> FactorialView:
    """The resolver × input 2 × 2 of ``a`` and ``b`` on the same noisy input."""
    return factorial_view(load_mixed_fit(path, stamp), a=a, b=b, profile=profile, eps=eps,
                          n_boot=PAGE_BOOT)


def prose_html(section: ProseSection, *, height: int | None = 420,
               marked_days: bool = False) -> str:
    """The lines of ``section`` as escaped HTML: the day label when it changes, one line per
    sentence, the marked ones highlighted (module docstring). ``height`` caps the box (px);
    ``marked_days`` keeps only the days (and the undated lines) that hold a marked line, when
    there is one, so the highlighted sentences are in view with their day around them."""
    lines = section.lines
    if marked_days and section.n_marked:
        days = {line.day for line in lines if line.marked}
        lines = tuple(line for line in lines if line.day in days)
    out, day = [], object()
    for line in lines:
        if line.day != day and line.day is not None:
            out.append(f'<div style="margin-top:.45em;opacity:.7;font-size:.85em">'
                       f"{html.escape(line.day)}</div>")
        day = line.day
        text = html.escape(line.text)
        if line.marked:
            out.append(f'<div class="{MARK_CLASS}" style="background:{_MARK};'
                       f'border-radius:3px;padding:0 .3em">{text}</div>')
        else:
            out.append(f'<div style="padding:0 .3em">{text}</div>')
    if not out:
        out.append('<div style="opacity:.7">No sentences.</div>')
    cap = f"max-height:{int(height)}px;overflow-y:auto;" if height else ""
    return (f'<div style="{cap}font-size:.9rem;line-height:1.45">' + "".join(out) + "</div>")


def grid_columns(columns, titles: dict[str, str]) -> dict:
    """The atom grid's ``column_config``: the question ids :data:`GRID_INDEX` px wide and
    each source column an equal share of the rest of :data:`.records.TABLE_WIDTH` (the grid
    spans the page, so all five fit at 1280 px and grow alike at 1440 px)."""
    width = (TABLE_WIDTH - GRID_INDEX) // len(columns)
    return {"_index": st.column_config.TextColumn(width=GRID_INDEX),
            **{col: st.column_config.TextColumn(titles[col], width=width) for col in columns}}


def atom_grid(view: ProseView, *, key: str, on_pick: Callable[[str, str], None]) -> None:
    """The 18 × 5 grid of extracted atoms; clicking a cell calls ``on_pick(qid, source)``.

    The selected atom's cell is shown selected. The grid's widget key carries the selected
    cell (``<key>_<qid>_<source>``) and its state is seeded with that cell: a browser keeps a
    grid's last selection and sends it back with the next rerun, so a grid that outlived a
    change of the question box would "select" its old cell again and undo the change. Keys of
    earlier cells are dropped from the session state. The browser may also report the
    seeded cell as a new selection on its first rerun: a "pick" of the grid's own cell is
    ignored, or it would undo a change of the question box or the source buttons made in
    the same rerun.
    """
    shown = view.grid.shown
    titles = dict(zip(shown.columns, (SOURCE_SHORT[s] for s in SOURCES), strict=True))
    sources = dict(zip(shown.columns, SOURCES, strict=True))
    cell = [int(shown.index.get_loc(view.qid)), shown.columns[SOURCES.index(view.source)]]
    grid_key = f"{key}_{view.qid}_{view.source}"
    for old in [k for k in st.session_state if str(k).startswith(f"{key}_")]:
        if old != grid_key and not str(old).startswith(f"{key}_dl"):
            del st.session_state[old]
    if grid_key not in st.session_state:
        st.session_state[grid_key] = {"selection": {"rows": [], "columns": [], "cells": [cell]}}

    def pick() -> None:
        cells = st.session_state[grid_key]["selection"]["cells"]
        if cells:
            row, col = cells[0]
            qid, source = str(shown.index[int(row)]), sources[col]
            if (qid, source) != (view.qid, view.source):  # not the browser echoing the seed
                on_pick(qid, source)

    st.dataframe(shown, key=grid_key, on_select=pick, selection_mode="single-cell",
                 width="stretch", height=table_height(0) + WRAP_ROW * len(shown),
                 row_height=WRAP_ROW, column_config=grid_columns(shown.columns, titles))
    download_table(view.grid.full, stem=view.grid.stem, key=f"{key}_dl", what="Atom grid")
