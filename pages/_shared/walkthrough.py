"""Streamlit glue of the Walkthrough page: its panel objects, shared across sessions.

Each function returns one :mod:`core.evaluation.walkthrough` result object for small keys
(the store's path and stamp, a seed, a persona id, a question id), from a bounded cache that
every session reads and nobody mutates (:func:`.cache.shared_cache`). A class opening the
same instance computes each panel once; a rerun only reads the cached objects.
"""

from __future__ import annotations

from core.evaluation.walkthrough.answers import (
    QuestionPanel,
    ResolverPanel,
    question_panel,
    resolver_panel,
)
from core.evaluation.walkthrough.funnel import ProtocolPanel, protocol_panel
from core.evaluation.walkthrough.menu import SeedIndex, seed_index
from core.evaluation.walkthrough.persona import PersonaPanel, persona_panel
from core.prose.views import ProseSection
from core.testbed.questions import QIDS, SOURCES

from .cache import shared_cache
from .evaluation import load_persona_predictions
from .params import Choice, default_choice
from .prose import excerpt_of
from .store import load_persona, load_personas, load_selection_pool

__all__ = ["panels_of", "persona_panel_of", "prose_excerpt_of", "protocol_pick",
           "protocol_panel_of", "question_panel_of", "resolver_panel_of", "seed_index_of"]

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
