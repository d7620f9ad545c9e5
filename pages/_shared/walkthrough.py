"""Streamlit glue of the Walkthrough page: its panel objects, shared across sessions.

Each function returns one :mod:`core.evaluation.walkthrough` result object for small keys
(the store's path and stamp, a seed, a persona id, a question id), from a bounded cache that
every session reads and nobody mutates (:func:`.cache.shared_cache`). A class opening the
same instance computes each panel once; a rerun only reads the cached objects.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from core.evaluation.walkthrough.answers import (
    QuestionPanel,
    ResolverPanel,
    question_panel,
    resolver_panel,
)
from core.evaluation.walkthrough.funnel import ProtocolPanel, protocol_panel
from core.evaluation.walkthrough.menu import SeedIndex, seed_index
from core.evaluation.walkthrough.persona import PersonaPanel, persona_panel
from core.glossary import tip
from core.prose.views import ProseSection
from core.testbed.questions import QIDS, SOURCES

from .cache import shared_cache
from .evaluation import load_persona_predictions
from .params import Choice, default_choice
from .prose import excerpt_of
from .store import load_persona, load_personas, load_selection_pool
from .ui import table_height
from .widths import TABLE_WIDTH, WRAP_ROW, text_px

__all__ = ["panels_of", "persona_panel_of", "prose_excerpt_of", "protocol_pick",
           "protocol_panel_of", "question_panel_of", "resolver_columns", "resolver_panel_of",
           "seed_index_of"]

#: Panels kept per kind (one per persona, or per persona and question).
PANEL_ENTRIES = 128


@shared_cache(max_entries=8)
def seed_index_of(path: str, stamp: int) -> SeedIndex:
    """Every seed's persona ids, splits and difficulties (the sidebar's menu)."""
    return seed_index(load_personas(path, stamp))


@shared_cache(max_entries=32)
def protocol_pick(path: str, stamp: int, seed: int | None = None) -> Choice:
    """The selection protocol's pick, over the store or within one seed."""
    return default_choice(load_personas(path, stamp), load_selection_pool(path, stamp),
                          seed=seed)


@shared_cache(max_entries=PANEL_ENTRIES)
def protocol_panel_of(path: str, stamp: int, seed: int, persona_id: str,
                      qid: str) -> ProtocolPanel:
    """The "Why this instance?" panel of one pair."""
    return protocol_panel(load_selection_pool(path, stamp), seed=int(seed),
                          persona_id=str(persona_id), qid=qid)


@shared_cache(max_entries=PANEL_ENTRIES)
def persona_panel_of(path: str, stamp: int, seed: int, persona_id: str) -> PersonaPanel:
    """The persona panel (header, traits, habits, what each source distorts)."""
    return persona_panel(load_persona(path, stamp, int(seed), str(persona_id)).testbed)


@shared_cache(max_entries=PANEL_ENTRIES)
def question_panel_of(path: str, stamp: int, seed: int, persona_id: str,
                      qid: str) -> QuestionPanel:
    """The question panel: rule, statistics and every source's verdict."""
    bundle = load_persona(path, stamp, int(seed), str(persona_id))
    j = QIDS.index(qid)
    return question_panel(qid=qid, gt_code=int(bundle.gt[j]), atoms_row=bundle.atoms[j],
                          stats=bundle.stats[qid], detail=bundle.details[qid])


@shared_cache(max_entries=PANEL_ENTRIES)
def resolver_panel_of(path: str, stamp: int, seed: int, persona_id: str,
                      qid: str) -> ResolverPanel:
    """Every resolver's answer to the question (test personas only)."""
    persona = persona_panel_of(path, stamp, seed, persona_id)
    gt_label = question_panel_of(path, stamp, seed, persona_id, qid).gt_label
    preds = (load_persona_predictions(path, stamp, int(seed), str(persona_id))
             if persona.split == "test" else None)
    return resolver_panel(preds, qid=qid, gt_label=gt_label, split=persona.split)


def panels_of(path: str, stamp: int, seed: int, persona_id: str, qid: str
              ) -> tuple[PersonaPanel, QuestionPanel, ProtocolPanel, ResolverPanel]:
    """The page's four panels of one instance, each from its own shared cache."""
    key = (path, stamp, int(seed), str(persona_id))
    return (persona_panel_of(*key), question_panel_of(*key, qid),
            protocol_panel_of(*key, qid), resolver_panel_of(*key, qid))


def prose_excerpt_of(path: str, stamp: int, seed: int, persona_id: str, qid: str
                     ) -> tuple[ProseSection, ...]:
    """The prose sentences behind ``qid``'s five atoms (at most 6 per source; shared); empty
    when the store holds no render of this persona (only test personas are rendered)."""
    try:
        return excerpt_of(path, stamp, int(seed), str(persona_id), qid, tuple(SOURCES))
    except ValueError:
        return ()


#: Glyphs of the resolver table that :func:`.records.text_px` counts as its widest (12.6 px),
#: as Chromium draws them in the table's font (14 px Source Sans).
_TABLE_GLYPHS = {"≡": 7.0, "○": 8.4, "⊥": 12.2}
#: Fixed columns of the resolver table (px): the confidence bar with its number, the margin.
_CONFIDENCE_PX, _MARGIN_PX = 95, 60
#: The resolver column's width when its names wrap (two lines of "Majority Vote (≡ ArgRAG
#: equal-weight)").
_WRAPPED_RESOLVER_PX = 150


def _cell_px(text: str) -> int:
    """A cell's width (px) that shows ``text`` whole: the text, 8 px of padding a side and
    the border."""
    width = sum(_TABLE_GLYPHS.get(ch) or text_px(ch) for ch in str(text))
    return math.ceil(width) + 17


def resolver_columns(table: pd.DataFrame, gt_words: str) -> tuple[dict, dict]:
    """``column_config`` and the other ``st.dataframe`` settings (``height``, and
    ``row_height`` when names wrap) that show the resolver table whole at a 1280 px window.

    Every column is as wide as its title and widest cell, within
    :data:`.records.TABLE_WIDTH`. A title ``answer (truth: …)`` that does not fit beside the
    others becomes ``answer``, with the ground truth in its hover help (the truth is stated
    above the table too); answers too wide even then (such as "incidental movement 70 % or
    more of the time" beside "○ abstains (would be right)") make the resolver names wrap on
    two lines, in taller rows.
    """
    title = f"answer (truth: {gt_words})"
    resolver = max(_cell_px(t) for t in ["resolver", *table["label"]])
    outcome = max(_cell_px(t) for t in ["outcome", *table["outcome"]])
    answer = max(_cell_px(t) for t in ["answer", *table["answer"]])
    fixed = outcome + _CONFIDENCE_PX + _MARGIN_PX
    settings: dict = {"height": table_height(len(table))}
    if resolver + answer + fixed > TABLE_WIDTH:
        resolver = _WRAPPED_RESOLVER_PX
        settings = {"row_height": WRAP_ROW, "height": 38 + WRAP_ROW * len(table) + 2}
    answer = TABLE_WIDTH - resolver - fixed
    fits = _cell_px(title) <= answer
    return {
        "label": st.column_config.TextColumn("resolver", width=resolver),
        "answer": st.column_config.TextColumn(
            title if fits else "answer", width=answer,
            help=None if fits else f"The ground truth here is “{gt_words}”."),
        "outcome": st.column_config.TextColumn("outcome", width=outcome),
        "confidence": st.column_config.ProgressColumn(
            "confidence", min_value=0.0, max_value=1.0, format="%.2f", width=_CONFIDENCE_PX),
        "margin": st.column_config.TextColumn("margin", width=_MARGIN_PX,
                                              help=tip("Posterior margin")),
    }, settings
