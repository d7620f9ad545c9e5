"""The write-back track of seed 002 (*Personal Dimension Benchmark v1: methods*, §8, §7
M12–M13; H15).

Six updates arrive (``data/records/tracks.json``): a move, a renewed passport, a cancelled
subscription, a new number, a laboratory correction and a renewed insurance policy.
:func:`apply_update` records one the way a dimension with validity intervals can:

* it **adds** a fact with the new value, its start date and a new source;
* it **closes** the records it supersedes — the facts of that attribute still open on the
  start date get ``valid_to = start − 1 day``; when none is open (an expired passport), the
  latest-ending one is superseded and keeps its end date;
* it **deletes nothing**: every old fact is still there, so history queries answer as before
  (invariant, tested: ``as_of`` any day before the start gives the old answer).

A **correction** (``kind: "correction"``, U5: the laboratory corrects the blood type) is not
a change: the blood type never was A+, so closing A+ the day before the correction arrived
would record that it used to be A+. A correction instead adds the corrected value over the
interval of the records it corrects (from their earliest start, open if they are), closes
nothing and deletes nothing; it wins under CP-01 because its source is at least as trusted
and captured later (``ValueError`` otherwise). What the records said before is kept where
capture dates put it: asked before the correction was captured
(:meth:`~core.records.world.World.known_on`), the engine still answers A+.

A write-back response is ``{"update_id", "arm", "replicate", "new_value", "start",
"closes_record_ids", "end", "kept_prior"}`` (dates ISO or null). M12: the new value, the start
date, the closed records (as a set) and the closing date are all right (for a correction:
the corrected records' start, no record closed and ``end`` null); M13: the response states
that the prior record was kept.

Reference readers for the three write-back arms (§5): D (dimension) closes and adds exactly as
above; A (notes) appends a dated note but does not edit the old line, so it closes nothing
(M12 fails, M13 holds); C (flat records) overwrites the value, with no dates and no prior
record (both fail). Only the representation with explicit intervals and record ids records an
update that supersedes the old value without destroying it (H15).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace

import pandas as pd

from .disclosure import _tracks
from .normalise import same_answer
from .world import Fact, Source, World, parse_date

__all__ = ["UPDATE_KINDS", "WRITEBACK_ARMS", "Update", "Writeback", "apply_update",
           "load_updates",
           "reference_writebacks", "score_writebacks"]

WRITEBACK_ARMS = ("A", "C", "D")
#: A change starts a new value; a correction replaces a wrong one over its interval.
UPDATE_KINDS = ("change", "correction")


@dataclass(frozen=True)
class Update:
    """A piece of new information: the attribute, its new value, the start, the source."""

    update_id: str
    what: str
    attribute: str
    value: str
    start: _dt.date
    source_kind: str
    source_title: str
    captured: _dt.date
    kind: str = "change"


@dataclass(frozen=True)
class Writeback:
    """The world after an update, the fact added and the ``(fact id, end date)`` closed."""

    world: World
    added: Fact
    closed: tuple[tuple[str, _dt.date], ...]


def load_updates(path=None) -> tuple[Update, ...]:
    """The six updates of the write-back track."""
    out = []
    for u in _tracks(path)["updates"]:
        kind = u.get("kind", "change")
        if kind not in UPDATE_KINDS:
            raise ValueError(f"update {u['update_id']}: kind must be one of {UPDATE_KINDS}, "
                             f"got {kind!r}")
        out.append(Update(u["update_id"], u["what"], u["attribute"], u["value"],
                          parse_date(u["start"], what=f"update {u['update_id']} start"),
                          u["source"]["kind"], u["source"]["title"],
                          parse_date(u["source"]["captured"],
                                     what=f"update {u['update_id']} captured"), kind))
    return tuple(out)


def _next_id(ids, prefix: str) -> str:
    nums = [int(i[1:]) for i in ids if i.startswith(prefix) and i[1:].isdigit()]
    return f"{prefix}{max(nums, default=0) + 1:02d}"


def apply_update(world: World, update: Update) -> Writeback:
    """Record ``update`` in ``world`` (see the module docstring); ``ValueError`` if the
    attribute has no record or the update starts on or before the start of what it closes."""
    facts = [f for f in world.facts if f.attribute == update.attribute]
    if not facts:
        raise ValueError(f"update {update.update_id}: no record of {update.attribute!r}")
    open_ = [f for f in facts if f.valid_to is None or f.valid_to >= update.start]
    source = Source(_next_id([s.id for s in world.sources], "S"), update.source_kind,
                    update.source_title, update.captured)
    if update.kind == "correction":
        return _correct(world, update, [f for f in open_ if f.covers(update.start)], source)
    if open_:
        if any(f.valid_from >= update.start for f in open_):
            raise ValueError(f"update {update.update_id}: starts {update.start}, not after the "
                             "records it would close")
        end = update.start - _dt.timedelta(days=1)
        closed = tuple((f.id, end) for f in open_)
    else:
        last = max(facts, key=lambda f: (f.valid_to, f.id))
        closed = ((last.id, last.valid_to),)
    ends = dict(closed)
    added = Fact(_next_id([f.id for f in world.facts], "F"), update.attribute, update.value,
                 update.start, None, source.id)
    new_facts = [replace(f, valid_to=ends[f.id]) if f.id in ends else f for f in world.facts]
    new = replace(world, facts=(*new_facts, added), sources=(*world.sources, source))
    return Writeback(new, added, closed)


def _correct(world: World, update: Update, wrong: list[Fact], source: Source) -> Writeback:
    if not wrong:
        raise ValueError(f"update {update.update_id}: a correction needs a record of "
                         f"{update.attribute!r} holding on {update.start}")
    tier = min(world.source(f.source).tier or 99 for f in wrong)
    latest = max(world.source(f.source).captured for f in wrong)
    if (source.tier or 99) > tier or source.captured <= latest:
        raise ValueError(f"update {update.update_id}: a correction must come from a source "
                         f"of tier {tier} or better captured after {latest}, got tier "
                         f"{source.tier} captured {source.captured}")
    ends = {f.valid_to for f in wrong}
    added = Fact(_next_id([f.id for f in world.facts], "F"), update.attribute, update.value,
                 min(f.valid_from for f in wrong), None if None in ends else max(ends),
                 source.id)
    new = replace(world, facts=(*world.facts, added), sources=(*world.sources, source))
    return Writeback(new, added, ())


def reference_writebacks(world: World, updates, *, arms=WRITEBACK_ARMS,
                         replicates: int = 2) -> list[dict]:
    """The reference readers' write-back responses (see the module docstring)."""
    out = []
    for arm in arms:
        if arm not in WRITEBACK_ARMS:
            raise ValueError(f"write-back arms are {WRITEBACK_ARMS}, got {arm!r}")
        for u in updates:
            wb = apply_update(world, u)
            if arm == "D":
                resp = {"start": wb.added.valid_from.isoformat(),
                        "closes_record_ids": [i for i, _ in wb.closed],
                        "end": wb.closed[0][1].isoformat() if wb.closed else None,
                        "kept_prior": True}
            elif arm == "A":
                resp = {"start": u.start.isoformat(), "closes_record_ids": [], "end": None,
                        "kept_prior": True}
            else:
                resp = {"start": None, "closes_record_ids": [], "end": None,
                        "kept_prior": False}
            out += [{"update_id": u.update_id, "arm": arm, "replicate": r,
                     "new_value": u.value, **resp} for r in range(replicates)]
    return out


def score_writebacks(responses, world: World, updates) -> pd.DataFrame:
    """M12 and M13 per arm (means over updates of the replicate means); columns
    ``arm, updates, M12, M13``."""
    expected = {}
    for u in updates:
        wb = apply_update(world, u)
        expected[u.update_id] = (u.value, wb.added.valid_from.isoformat(),
                                 {i for i, _ in wb.closed},
                                 {e.isoformat() for _, e in wb.closed})
    rows = []
    for r in responses:
        if r["update_id"] not in expected:
            raise ValueError(f"unknown update {r['update_id']!r}")
        value, start, closes, ends = expected[r["update_id"]]
        ok = (same_answer(r.get("new_value"), value) and r.get("start") == start
              and set(r.get("closes_record_ids") or []) == closes
              and ({r.get("end")} == ends if ends else r.get("end") is None))
        rows.append({"arm": r["arm"], "update_id": r["update_id"], "M12": float(ok),
                     "M13": float(bool(r.get("kept_prior")))})
    df = pd.DataFrame(rows, columns=["arm", "update_id", "M12", "M13"])
    per_update = df.groupby(["arm", "update_id"], sort=False)[["M12", "M13"]].mean()
    out = per_update.groupby("arm", sort=False).agg(updates=("M12", "size"), M12=("M12", "mean"),
                                                    M13=("M13", "mean"))
    return out.reset_index()
