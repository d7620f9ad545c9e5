"""Seed 002 in the store: the world, the 43 items, the six arms and the reference readers' run.

:func:`study_tables` gives, beside :func:`core.records.world.record_tables` (facts, sources,
contacts, journeys), the tables the study itself produces on the run date:

* ``records_items`` — one row per item: ``item_id, family, question, as_of, kind,
  reference`` (JSON: a string, a sorted list or null for a GAP item), ``record_ids`` (JSON
  list), ``present_value`` (JSON; for past-dated items the value that holds today under CP-01),
  ``present_values`` (JSON list; under any rule: what M7 counts),
  ``stale`` (the asked record's status on STALE items, else null);
* ``records_renders`` — one row per arm: ``arm, text, chars`` (M14);
* ``records_responses`` — the deterministic reference readers' responses in the response
  contract (``cited_record_ids`` as a JSON list);
* ``records_scores`` — their measures per arm: ``arm, measure, value, ci_low, ci_high,
  n_items`` (item bootstrap, seed 0; M2 is NULL for the arms without identifiers).

Invariant: every ``item_id`` of ``records_responses`` is in ``records_items`` and every
reference is the engine's (the items are built, never typed in).
"""

from __future__ import annotations

import datetime as _dt
import json

import pandas as pd

from .items import build_items
from .readers import read
from .render import ARMS, render
from .score import score_responses
from .world import RUN_DATE, World, record_tables

__all__ = ["study_tables"]


def _json(value) -> str | None:
    return None if value is None else json.dumps(list(value) if isinstance(value, tuple)
                                                 else value)


def study_tables(world: World, *, today: _dt.date = RUN_DATE, n_boot: int = 200
                 ) -> dict[str, pd.DataFrame]:
    """Every seed-002 store table for ``world`` on ``today`` (see the module docstring).

    The world must already have passed :func:`core.records.checks.check_world`.
    """
    items = build_items(world, today=today)
    responses = list(read(world, items, today=today))
    score = score_responses(responses, items, world, today=today, n_boot=n_boot)
    items_df = pd.DataFrame([{
        "item_id": i.item_id, "family": i.family, "question": i.question,
        "as_of": i.as_of.isoformat(), "kind": i.kind, "reference": _json(i.reference),
        "record_ids": json.dumps(list(i.record_ids)), "present_value": _json(i.present_value),
        "present_values": json.dumps(list(i.present_values)), "stale": i.stale} for i in items])
    renders = pd.DataFrame([{"arm": a, "text": (t := render(world, a, today=today)),
                             "chars": len(t)} for a in ARMS])
    resp = pd.DataFrame(responses).assign(
        cited_record_ids=lambda d: d["cited_record_ids"].map(lambda v: json.dumps(list(v))))
    scores = score.measures.astype({"arm": object, "measure": object})
    return {**record_tables(world), "records_items": items_df, "records_renders": renders,
            "records_responses": resp, "records_scores": scores}
