"""The 43 items of seed 002 (*Personal Dimension Benchmark v1: methods*, §6).

Templates (question text, as-of date, the engine query, the answer kind) live in
``data/records/items.json``; every reference answer is computed here by the ground-truth
engine (:func:`core.records.engine.evaluate`), never typed in. :func:`build_items` checks the
result against §6 before returning it and raises :class:`ItemCheckError` listing every
problem:

* families and counts: CURR 8, HIST 8, CONF 6, STALE 5, ENT 5, HOP 6, GAP 5 (43; 38
  answerable);
* CURR items rest on attributes no two records disagree about today; CONF items on a live
  conflict (five ask the value, one which source to believe);
* HIST items are dated before a change: the value that holds today differs (§6, for M7);
* STALE items: three expired records, two still valid;
* ENT items resolve to one of the contacts sharing a first name; HOP items rest on two or
  more records;
* GAP items have no answer; every other item has one.

``present_value`` is, for past-dated items (HIST, and HOP items joined on a past date), the
value the same question gets today under CP-01, when it differs from the reference. It is
``None`` otherwise. ``present_values`` holds every value the question gets today under any
resolution rule the engine knows (CP-01, naive recency, later start: seed 002 §2), when it
differs from the reference: the overclaims M7 counts (§2: "answering a question about a past
date with the value that holds today"). Which value "holds today" is itself what a conflict
disputes, so an arm that resolves today's conflict by recency (B, C) and gives its today's
value for a past date overclaims as much as one that gives CP-01's.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .engine import POLICIES, conflict_table, evaluate
from .world import RUN_DATE, World, parse_date

__all__ = ["ANSWER_KINDS", "FAMILIES", "FAMILY_COUNTS", "ITEMS_PATH", "Item", "ItemCheckError",
           "build_items", "item_problems", "load_templates"]

ITEMS_PATH = Path(__file__).resolve().parents[2] / "data" / "records" / "items.json"
#: Seed 002 §6.
FAMILY_COUNTS = {"CURR": 8, "HIST": 8, "CONF": 6, "STALE": 5, "ENT": 5, "HOP": 6, "GAP": 5}
FAMILIES = tuple(FAMILY_COUNTS)
ANSWER_KINDS = ("text", "number", "date", "list", "source")


class ItemCheckError(ValueError):
    """The built items do not follow seed 002 §6; ``problems`` lists every one."""

    def __init__(self, problems: list[str]):
        self.problems = tuple(problems)
        super().__init__(f"{len(problems)} item problem(s):\n" +
                         "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True)
class Item:
    """One question with its engine-computed reference.

    ``reference`` is a string, a sorted tuple (``kind == "list"``) or ``None`` (a GAP item:
    declining is correct); ``record_ids`` the records it rests on; ``stale`` the status of the
    record a STALE item asks about (``None`` for other families).
    """

    item_id: str
    family: str
    question: str
    as_of: _dt.date
    kind: str
    query: dict
    reference: str | tuple[str, ...] | None
    record_ids: tuple[str, ...]
    present_value: str | tuple[str, ...] | None
    stale: bool | None
    present_values: tuple = ()

    @property
    def answerable(self) -> bool:
        return self.reference is not None


def load_templates(path: str | Path | None = None) -> list[dict]:
    """The item templates (``ValueError`` naming the file if unreadable)."""
    p = Path(path) if path is not None else ITEMS_PATH
    try:
        return list(json.loads(p.read_text(encoding="utf-8"))["items"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read the item templates {p}: {exc}") from None


def _present(world: World, t: dict, reference, *, as_of, today, policy: str = "CP-01"):
    q = t["query"]
    if t["family"] == "HIST" and as_of < today:
        now = evaluate(world, q, as_of=today, today=today, policy=policy).value
    elif q.get("op") == "value_on":
        now = evaluate(world, {"op": "value", "attribute": q["attribute"]}, as_of=today,
                       today=today, policy=policy).value
    else:
        return None
    return now if now is not None and now != reference else None


def _presents(world: World, t: dict, reference, *, as_of, today) -> tuple:
    got = (_present(world, t, reference, as_of=as_of, today=today, policy=p) for p in POLICIES)
    return tuple(dict.fromkeys(v for v in got if v is not None))


def build_items(world: World, *, today: _dt.date = RUN_DATE, templates: list[dict] | None = None,
                check: bool = True) -> tuple[Item, ...]:
    """Every item with its reference answer computed by the engine (seed 002 §6)."""
    items = []
    for t in templates if templates is not None else load_templates():
        as_of = parse_date(t.get("as_of"), what=f"item {t.get('item_id')} as_of") or today
        if t.get("kind") not in ANSWER_KINDS:
            raise ValueError(f"item {t.get('item_id')}: kind must be one of {ANSWER_KINDS}, "
                             f"got {t.get('kind')!r}")
        ans = evaluate(world, t["query"], as_of=as_of, today=today)
        items.append(Item(item_id=t["item_id"], family=t["family"], question=t["question"],
                          as_of=as_of, kind=t["kind"], query=dict(t["query"]),
                          reference=ans.value, record_ids=ans.record_ids,
                          present_value=_present(world, t, ans.value, as_of=as_of, today=today),
                          stale=ans.stale if t["family"] == "STALE" else None,
                          present_values=_presents(world, t, ans.value, as_of=as_of,
                                                   today=today)))
    items = tuple(items)
    if check:
        problems = item_problems(world, items, today=today)
        if problems:
            raise ItemCheckError(problems)
    return items


def item_problems(world: World, items, *, today: _dt.date = RUN_DATE) -> list[str]:
    """Every way ``items`` break seed 002 §6 (empty when they follow it)."""
    out = []
    ids = [i.item_id for i in items]
    out += [f"{d}: item id used twice" for d in sorted({i for i in ids if ids.count(i) > 1})]
    counts = Counter(i.family for i in items)
    for fam, n in FAMILY_COUNTS.items():
        if counts.get(fam, 0) != n:
            out.append(f"family {fam}: expected {n} items, found {counts.get(fam, 0)}")
    out += [f"{fam}: unknown family" for fam in sorted(set(counts) - set(FAMILY_COUNTS))]
    live = set(conflict_table(world, today=today)["attribute"])
    alex = {c.id for c in world.contacts if c.first_name == world.shared_first_name}
    for i in items:
        attr = i.query.get("attribute")
        if i.family == "GAP":
            if i.reference is not None:
                out.append(f"{i.item_id}: a GAP item has an answer ({i.reference!r})")
            continue
        if i.reference is None:
            out.append(f"{i.item_id}: nothing in the dimension answers it")
            continue
        if i.family == "CURR" and attr in live:
            out.append(f"{i.item_id}: {attr} has a live conflict (a CONF item, not CURR)")
        if i.family == "CONF" and attr not in live:
            out.append(f"{i.item_id}: {attr} has no live conflict on {today}")
        if i.family == "HIST" and (i.as_of >= today or i.present_value is None):
            out.append(f"{i.item_id}: not dated before a change (today's value is the same)")
        if i.family == "ENT" and not set(i.record_ids) & alex:
            out.append(f"{i.item_id}: does not resolve to a contact named "
                       f"{world.shared_first_name}")
        if i.family == "HOP" and len(i.record_ids) < 2:
            out.append(f"{i.item_id}: rests on {len(i.record_ids)} record(s), a join needs 2")
    conf_ops = Counter(i.query.get("op") for i in items if i.family == "CONF")
    if conf_ops and (conf_ops.get("value", 0), conf_ops.get("source", 0)) != (5, 1):
        out.append(f"CONF: expected 5 value items and 1 source item, found {dict(conf_ops)}")
    stale = Counter(i.stale for i in items if i.family == "STALE")
    if stale and (stale.get(True, 0), stale.get(False, 0)) != (3, 2):
        out.append(f"STALE: expected 3 expired and 2 valid records, found "
                   f"{stale.get(True, 0)} and {stale.get(False, 0)}")
    return out
