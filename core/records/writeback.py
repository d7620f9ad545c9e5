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

**The write-back contract** (JSON Lines, one object per call; what a model's run is scored
from, and what :func:`reference_writebacks` writes)::

    {"update_id": "U1", "arm": "D", "replicate": 0, "new_value": "3 Mill Lane, ...",
     "start": "2026-09-20", "closes_record_ids": ["F02", "F03"], "end": "2026-09-19",
     "kept_prior": true}

``update_id`` a non-empty string (U1–U6; an unknown one is reported, not scored); ``arm``
one of A, C, D; ``replicate`` a non-negative integer; ``new_value`` a string or null;
``start`` and ``end`` ISO dates (``YYYY-MM-DD``) or null; ``closes_record_ids`` a list of
strings; ``kept_prior`` true or false. No other field; the same (update, arm, replicate)
twice is malformed. Files are read by :func:`read_writebacks` through :mod:`.inputs`, which
lists every malformed line by number.

M12: the new value (:func:`.normalise.same_answer`), the start date, the closed records (as a
set; ids trimmed, case-insensitive, as M2 compares them) and the closing date are all right
(for a correction: the corrected records' start, no record closed and ``end`` null); M13:
the response states that the prior record was kept. Replicates are averaged within an
update, then over updates.

Reference readers for the three write-back arms (§5): D (dimension) closes and adds exactly as
above; A (notes) appends a dated note but does not edit the old line, so it closes nothing
(M12 fails, M13 holds); C (flat records) overwrites the value, with no dates and no prior
record (both fail). Only the representation with explicit intervals and record ids records an
update that supersedes the old value without destroying it (H15).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from .disclosure import _tracks
from .inputs import InputError, json_lines
from .normalise import same_answer
from .world import Fact, Source, World, parse_date

__all__ = ["UPDATE_KINDS", "WRITEBACK_ARMS", "WRITEBACK_FIELDS", "Update", "Writeback",
           "WritebackScore", "apply_update", "check_writeback", "load_updates",
           "read_writebacks", "reference_writebacks", "score_writeback_file",
           "score_writebacks"]

WRITEBACK_ARMS = ("A", "C", "D")
#: The write-back contract: each field and what it must be.
WRITEBACK_FIELDS = {"update_id": "a non-empty string", "arm": "one of A, C, D",
                    "replicate": "a non-negative integer", "new_value": "a string or null",
                    "start": "an ISO date (YYYY-MM-DD) or null",
                    "closes_record_ids": "a list of strings",
                    "end": "an ISO date (YYYY-MM-DD) or null", "kept_prior": "true or false"}
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
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


def _iso_or_null(value) -> bool:
    if value is None:
        return True
    if not isinstance(value, str) or _ISO.fullmatch(value) is None:
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def check_writeback(obj) -> str | None:
    """The write-back contract (module docstring): ``None`` for a good object, else a
    one-line reason."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [k for k in WRITEBACK_FIELDS if k not in obj]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    extra = sorted(set(obj) - set(WRITEBACK_FIELDS))
    if extra:
        return f"unknown field(s) {', '.join(str(k)[:40] for k in extra)}"
    ok = {"update_id": isinstance(obj["update_id"], str) and obj["update_id"].strip() != "",
          "arm": isinstance(obj["arm"], str) and obj["arm"] in WRITEBACK_ARMS,
          "replicate": isinstance(obj["replicate"], int)
          and not isinstance(obj["replicate"], bool) and obj["replicate"] >= 0,
          "new_value": obj["new_value"] is None or isinstance(obj["new_value"], str),
          "start": _iso_or_null(obj["start"]),
          "closes_record_ids": isinstance(obj["closes_record_ids"], list)
          and all(isinstance(x, str) for x in obj["closes_record_ids"]),
          "end": _iso_or_null(obj["end"]),
          "kept_prior": isinstance(obj["kept_prior"], bool)}
    bad = [k for k, good in ok.items() if not good]
    if bad:
        return (f"{bad[0]} must be {WRITEBACK_FIELDS[bad[0]]}, "
                f"got {json.dumps(obj[bad[0]])[:40]}")
    return None


def _wb_key(obj: dict) -> tuple:
    return (obj["update_id"], obj["arm"], obj["replicate"])


def _wb_said(key: tuple) -> str:
    return f"update {key[0]}, arm {key[1]}, replicate {key[2]}"


def read_writebacks(source, *, name: str | None = None) -> list[tuple[int, dict]]:
    """``(line, response)`` pairs of a write-back file (a path, its bytes or its decoded
    lines), read by :func:`.inputs.json_lines` against :func:`check_writeback`; an
    :class:`~.inputs.InputError` (one line, listing every malformed line) otherwise."""
    if isinstance(source, (str, Path)):
        source = Path(source)
    elif not isinstance(source, (bytes, bytearray, memoryview)):
        source = list(source)
    return json_lines(source, check=check_writeback, key=_wb_key, describe=_wb_said,
                      name=name or "write-backs", error=InputError)


@dataclass(frozen=True, eq=False)
class WritebackScore:
    """The scores of a write-back file (seed 002 §7 M12–M13, §8).

    ``table``: one row per arm present (in :data:`WRITEBACK_ARMS` order) with ``updates``
    (scored), ``M12``, ``M13`` and the share right of each part of M12 (``new_value,
    start, closes, end``); ``calls``: one row per scored line with those indicators;
    ``unknown``: ``(line, update_id)`` of lines naming no update (not scored); ``missing``:
    per arm, the updates with no response; ``n_lines``: lines read.
    """

    table: pd.DataFrame
    calls: pd.DataFrame
    unknown: tuple[tuple[int, str], ...]
    missing: dict[str, int]
    n_lines: int

    def to_dict(self) -> dict:
        return {"lines": self.n_lines, "unknown_updates": [list(u) for u in self.unknown],
                "missing_per_arm": self.missing, "arms": self.table.to_dict(orient="records")}


def _ids(values) -> set[str]:
    return {str(v).strip().upper() for v in values or []}


def score_writeback_file(responses, world: World, updates) -> WritebackScore:
    """Score write-back ``responses`` (``(line, object)`` pairs of :func:`read_writebacks`,
    or plain objects, each checked against the contract) against :func:`apply_update` of
    each update on ``world``."""
    pairs = [r if isinstance(r, tuple) else (k, r) for k, r in enumerate(responses, start=1)]
    problems = [(n, m) for n, o in pairs if (m := check_writeback(o))]
    if problems:
        raise InputError(problems, source="write-backs")
    expected = {}
    for u in updates:
        wb = apply_update(world, u)
        expected[u.update_id] = (u.value, wb.added.valid_from.isoformat(),
                                 {i.upper() for i, _ in wb.closed},
                                 {e.isoformat() for _, e in wb.closed})
    unknown = tuple((n, o["update_id"]) for n, o in pairs if o["update_id"] not in expected)
    parts = ["new_value", "start", "closes", "end"]
    rows = []
    for _, r in pairs:
        if r["update_id"] not in expected:
            continue
        value, start, closes, ends = expected[r["update_id"]]
        got = {"new_value": same_answer(r["new_value"], value), "start": r["start"] == start,
               "closes": _ids(r["closes_record_ids"]) == closes,
               "end": {r["end"]} == ends if ends else r["end"] is None}
        rows.append({"arm": r["arm"], "update_id": r["update_id"],
                     "replicate": r["replicate"], **{k: float(v) for k, v in got.items()},
                     "M12": float(all(got.values())), "M13": float(r["kept_prior"])})
    calls = pd.DataFrame(rows, columns=["arm", "update_id", "replicate", *parts, "M12",
                                        "M13"])
    per_update = calls.groupby(["arm", "update_id"], sort=False)[["M12", "M13", *parts]].mean()
    table = (per_update.groupby("arm", sort=False)
             .agg(updates=("M12", "size"), M12=("M12", "mean"), M13=("M13", "mean"),
                  **{k: (k, "mean") for k in parts}).reset_index())
    order = {a: k for k, a in enumerate(WRITEBACK_ARMS)}
    table = table.sort_values("arm", key=lambda a: a.map(order), kind="stable"
                              ).reset_index(drop=True)
    seen = set(zip(calls["arm"], calls["update_id"], strict=True))
    missing = {a: sum((a, u) not in seen for u in expected) for a in WRITEBACK_ARMS}
    return WritebackScore(table, calls, unknown, missing, len(pairs))


def score_writebacks(responses, world: World, updates) -> pd.DataFrame:
    """M12 and M13 per arm (means over updates of the replicate means); columns
    ``arm, updates, M12, M13`` (:func:`score_writeback_file`; ``ValueError`` for an unknown
    update)."""
    res = score_writeback_file(responses, world, updates)
    if res.unknown:
        raise ValueError(f"unknown update {res.unknown[0][1]!r}")
    return res.table[["arm", "updates", "M12", "M13"]]
