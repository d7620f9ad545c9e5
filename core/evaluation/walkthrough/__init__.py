"""The walked-through example of seed 000: one persona and one question, stage by stage.

Source: seed 000 §8.6 (the walked-through example) and §8.7 (the selection protocol); the
benchmark specification §2.3–§2.9. One idea per module, all pure (no Streamlit):

* :mod:`~core.evaluation.walkthrough.texts`: the rules, readouts and source roles in words;
* :mod:`~core.evaluation.walkthrough.selection`: the selection protocol;
* :mod:`~core.evaluation.walkthrough.funnel`: its panel (the funnel, the pair's checks);
* :mod:`~core.evaluation.walkthrough.menu`: the persona menu and its filters;
* :mod:`~core.evaluation.walkthrough.views`: the latent days and each source's view;
* :mod:`~core.evaluation.walkthrough.habits`: stated against revealed habits;
* :mod:`~core.evaluation.walkthrough.persona`: the persona panel;
* :mod:`~core.evaluation.walkthrough.answers`: atoms and resolver answers beside the ground
  truth, and the question and resolver panels.

``from core.evaluation.walkthrough import X`` keeps working for every name of
:data:`__all__`: the names resolve on first use (PEP 562 ``__getattr__``). Choice recorded:
this package file imports none of its submodules when it is imported, because a package
that imports its children at import time is the parent ↔ child cycle that deadlocked two
first visitors (``tests/test_imports.py``); a lazy lookup holds no import lock of the
package while it imports the child.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType

#: Public name → the submodule that defines it.
_HOME = MappingProxyType({
    **dict.fromkeys(("DIFFICULTY_NOTES", "GT_RULES", "READOUT_RULES", "SOURCE_ROLES",
                     "TOPIC_FIELDS"), "texts"),
    **dict.fromkeys(("FRONTIER_LLMS", "MARGIN_WINDOW", "OTHER_FUSION", "PENDING_FILTERS",
                     "REFERENCE_NAMES", "ResolverEvidence", "bias_rank_table",
                     "label_arrays", "resolver_evidence", "select_walkthrough"), "selection"),
    **dict.fromkeys(("FunnelStep", "ProtocolPanel", "protocol_panel"), "funnel"),
    **dict.fromkeys(("PersonaMenu", "SeedIndex", "seed_index"), "menu"),
    **dict.fromkeys(("METRIC_OF_QUESTION", "DayViews", "day_views", "latent_days",
                     "persona_day_table"), "views"),
    **dict.fromkeys(("HabitTables", "habit_tables", "profile_vs_actual"), "habits"),
    **dict.fromkeys(("DIFFICULTY_LABELS", "PersonaPanel", "difficulty_note",
                     "persona_panel"), "persona"),
    **dict.fromkeys(("OUTCOME_MARKS", "STATUS_MARKS", "QuestionPanel", "ResolverPanel",
                     "SourceVerdict", "atom_grid_table", "atom_verdicts", "plain_number",
                     "question_panel", "resolver_panel", "resolver_table"), "answers"),
})

__all__ = sorted(_HOME)


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
