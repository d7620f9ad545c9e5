"""The ground-truth engine of seed 002 (*Personal Dimension Benchmark v1: methods*, §2, §6).

Every reference answer comes from here (§6: "computed from the ground-truth engine ... not
written from memory"). The engine answers small query dictionaries (the item templates of
``data/records/items.json`` hold them) against a :class:`~core.records.world.World`:

* **as-of** — the facts of an attribute whose validity interval covers a day (§2);
* **CP-01** — among covering facts the lower source tier wins; within a tier the later capture
  (§2). Ties after that go to the later start, then to the record listed later;
* **naive recency** — the latest capture wins whatever its source (§2), same tie-breaks;
* **later start** — what a reader without provenance can do: the fact that starts later;
  a tie is undecidable (no answer);
* **staleness** — a record whose validity ended before today (§2);
* **entity resolution** — a contact found by its fields, or a journey's companion by contact
  id (or, as notes name people, by first name: ambiguous when several share it, §4.1);
* **joins** — the value of one attribute on the date of another record (§6 HOP);
* **gaps** — nothing covers: the answer is ``None`` (§6 GAP);
* **what is known** — only records captured by ``today`` exist
  (:meth:`~core.records.world.World.known_on`): ``evaluate``, ``conflict_table``,
  ``status`` and ``previous_value`` never use a record captured after the day they are
  asked on, whatever the as-of date of the question.

Invariant: :func:`evaluate` never invents a value; every non-``None`` answer is a field of a
record it lists in ``record_ids``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import pandas as pd

from .world import RUN_DATE, Fact, World, facts_frame

__all__ = [
    "POLICIES",
    "Answer",
    "conflict_table",
    "covering",
    "evaluate",
    "find_contacts",
    "previous_value",
    "resolve",
    "status",
]

#: Resolution rules the engine knows (seed 002 §2; "later-start" is the no-provenance reader's).
POLICIES = ("CP-01", "naive recency", "later-start")


@dataclass(frozen=True)
class Answer:
    """What a query resolves to.

    ``value`` is a string, a tuple of strings (a list answer, kept sorted) or ``None`` (nothing
    answers); ``record_ids`` are the records it rests on; ``policy`` names the rule that settled
    a conflict (``None`` when there was none); ``stale`` is set by status queries only;
    ``conflict`` says whether two covering records disagreed.
    """

    value: str | tuple[str, ...] | None
    record_ids: tuple[str, ...] = ()
    policy: str | None = None
    stale: bool | None = None
    conflict: bool = False


def covering(world: World, attribute: str, *, as_of: _dt.date) -> list[Fact]:
    """The facts of ``attribute`` whose interval covers ``as_of`` (both ends inclusive)."""
    return [f for f in world.facts if f.attribute == attribute and f.covers(as_of)]


def _sort_key(world: World, fact: Fact, policy: str):
    captured = world.source(fact.source).captured if _has_source(world, fact) else _dt.date.min
    tier = world.source(fact.source).tier if _has_source(world, fact) else 99
    order = [f.id for f in world.facts].index(fact.id)
    if policy == "CP-01":
        return (-(tier or 99), captured, fact.valid_from, order)
    if policy == "naive recency":
        return (captured, fact.valid_from, order)
    return (fact.valid_from,)


def _has_source(world: World, fact: Fact) -> bool:
    return any(s.id == fact.source for s in world.sources)


def resolve(world: World, facts: list[Fact], *, policy: str = "CP-01") -> Fact | None:
    """The fact that wins among ``facts`` under ``policy`` (``None`` if none or undecidable).

    CP-01: lowest tier, then latest capture (seed 002 §2). Naive recency: latest capture.
    Later start: the latest ``valid_from``; ``None`` when two disagreeing facts tie.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if not facts:
        return None
    ranked = sorted(facts, key=lambda f: _sort_key(world, f, policy))
    best = ranked[-1]
    if policy == "later-start":
        rivals = [f for f in facts if f.valid_from == best.valid_from and f.value != best.value]
        if rivals:
            return None
    return best


def _resolved(world: World, attribute: str, *, as_of: _dt.date, policy: str) -> Answer:
    facts = covering(world, attribute, as_of=as_of)
    conflict = len({f.value for f in facts}) > 1
    best = resolve(world, facts, policy=policy)
    if best is None:
        return Answer(None, conflict=conflict, policy=policy if conflict else None)
    return Answer(best.value, (best.id,), policy if conflict else None, conflict=conflict)


def conflict_table(world: World, *, today: _dt.date = RUN_DATE) -> pd.DataFrame:
    """Every live conflict on ``today`` (seed 002 §2, §4.2): one row per attribute with two or
    more covering facts whose values differ, and the winner under CP-01 and naive recency.

    Columns: ``attribute, fact_ids, values, cp01, recency, cp01_tier, agree``.
    """
    world = world.known_on(today)
    df = facts_frame(world)
    vf, vt = df["valid_from"], df["valid_to"]
    live = df[(vf <= today) & (vt.isna() | (vt.map(lambda d: d is not None and d >= today)))]
    n_values = live.groupby("attribute")["value"].transform("nunique")
    live = live[n_values > 1]
    rows = []
    for attribute, group in live.groupby("attribute", sort=False):
        facts = [world.fact(i) for i in group["fact_id"]]
        cp01 = resolve(world, facts, policy="CP-01")
        rec = resolve(world, facts, policy="naive recency")
        rows.append({"attribute": attribute, "fact_ids": tuple(group["fact_id"]),
                     "values": tuple(group["value"]), "cp01": cp01.id, "recency": rec.id,
                     "cp01_tier": world.source(cp01.source).tier,
                     "tiers": tuple(group["tier"]), "agree": cp01.id == rec.id})
    return pd.DataFrame(rows, columns=["attribute", "fact_ids", "values", "cp01", "recency",
                                       "cp01_tier", "tiers", "agree"])


def status(world: World, attribute: str, *, today: _dt.date = RUN_DATE,
           policy: str = "CP-01") -> Answer:
    """The latest record of ``attribute`` (latest start, conflicts settled by ``policy``) and
    whether it is stale: its validity ended before ``today`` (seed 002 §2)."""
    world = world.known_on(today)
    facts = [f for f in world.facts if f.attribute == attribute]
    if not facts:
        return Answer(None)
    start = max(f.valid_from for f in facts)
    best = resolve(world, [f for f in facts if f.valid_from == start], policy=policy)
    if best is None:
        return Answer(None)
    stale = best.valid_to is not None and best.valid_to < today
    return Answer(best.value, (best.id,), stale=stale)


def previous_value(world: World, attribute: str, *, today: _dt.date = RUN_DATE,
                   policy: str = "CP-01") -> Answer:
    """The value of ``attribute`` the day before today's value started (``None`` if none).

    When today's records disagree and ``policy`` cannot settle it, their common start date
    still dates the change (the home before the current one is known without knowing which
    of two current addresses is right)."""
    world = world.known_on(today)
    now = _resolved(world, attribute, as_of=today, policy=policy)
    if now.value is not None:
        start = world.fact(now.record_ids[0]).valid_from
    else:  # an undecidable conflict still has a start when its records share one
        starts = {f.valid_from for f in covering(world, attribute, as_of=today)}
        if len(starts) != 1:
            return Answer(None)
        start = starts.pop()
    if start == _dt.date.min:
        return Answer(None)
    return _resolved(world, attribute, as_of=start - _dt.timedelta(days=1), policy=policy)


def find_contacts(world: World, where: dict) -> list:
    """Contacts matching every key of ``where``: ``first_name``, ``name``, ``city``,
    ``relation_contains`` (case-insensitive substring)."""
    allowed = {"first_name", "name", "city", "relation_contains"}
    bad = set(where) - allowed
    if bad:
        raise ValueError(f"unknown contact filter(s) {sorted(bad)}; allowed {sorted(allowed)}")
    out = []
    for c in world.contacts:
        ok = all([
            "first_name" not in where or c.first_name.lower() == where["first_name"].lower(),
            "name" not in where or c.name.lower() == where["name"].lower(),
            "city" not in where or c.city.lower() == where["city"].lower(),
            "relation_contains" not in where
            or where["relation_contains"].lower() in c.relation.lower(),
        ])
        if ok:
            out.append(c)
    return out


_CONTACT_FIELDS = ("name", "relation", "city", "phone", "email")


def _contact_field(contact, field: str) -> str | None:
    return getattr(contact, field) if field in _CONTACT_FIELDS else None


def _event_date(world: World, on: dict, *, as_of: _dt.date, policy: str
                ) -> tuple[_dt.date | None, tuple[str, ...]]:
    if "journey" in on:
        try:
            j = world.journey(on["journey"])
        except KeyError:
            return None, ()
        field = on.get("field", "depart")
        if field not in ("depart", "return"):
            raise ValueError(f"a journey date is 'depart' or 'return', got {field!r}")
        return (j.depart if field == "depart" else j.return_), (j.id,)
    if "attribute" in on:
        ans = _resolved(world, on["attribute"], as_of=as_of, policy=policy)
        if ans.value is None:
            return None, ()
        f = world.fact(ans.record_ids[0])
        if on.get("field", "valid_from") != "valid_from":
            raise ValueError("a fact's event date is its 'valid_from'")
        return f.valid_from, (f.id,)
    raise ValueError(f"'on' needs 'journey' or 'attribute', got {sorted(on)}")


def evaluate(world: World, query: dict, *, as_of: _dt.date = RUN_DATE,
             today: _dt.date = RUN_DATE, policy: str = "CP-01",
             companion: str = "id") -> Answer:
    """Answer one query dictionary (its ``op`` and fields) against ``world``.

    Ops: ``value`` (attribute as of ``as_of``), ``source`` (the source id of the record that
    wins on ``as_of``), ``status`` (latest record and staleness on ``today``), ``value_on``
    (attribute on the date of another record: a join), ``contact`` (a field of the one contact
    matching ``where``; several matches are ambiguous: ``None``), ``companion`` (a field of
    a journey's companion; ``companion="first_name"`` resolves as notes do, by first name),
    ``contacts_in_previous_city`` (the contacts living in the city of the home before today's).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if companion not in ("id", "first_name"):
        raise ValueError(f"companion must be 'id' or 'first_name', got {companion!r}")
    world = world.known_on(today)
    op = query.get("op")
    if op == "value":
        return _resolved(world, query["attribute"], as_of=as_of, policy=policy)
    if op == "source":
        ans = _resolved(world, query["attribute"], as_of=as_of, policy=policy)
        if ans.value is None or not _has_source(world, world.fact(ans.record_ids[0])):
            return Answer(None, conflict=ans.conflict)
        return Answer(world.fact(ans.record_ids[0]).source, ans.record_ids, ans.policy,
                      conflict=ans.conflict)
    if op == "status":
        return status(world, query["attribute"], today=today, policy=policy)
    if op == "value_on":
        day, ids = _event_date(world, query["on"], as_of=as_of, policy=policy)
        if day is None:
            return Answer(None)
        ans = _resolved(world, query["attribute"], as_of=day, policy=policy)
        if ans.value is None:
            return Answer(None)
        return Answer(ans.value, ids + ans.record_ids, ans.policy, conflict=ans.conflict)
    if op == "contact":
        found = find_contacts(world, query["where"])
        if len(found) != 1:
            return Answer(None)
        value = _contact_field(found[0], query["field"])
        return Answer(value, (found[0].id,) if value is not None else ())
    if op == "companion":
        try:
            j = world.journey(query["journey"])
        except KeyError:
            return Answer(None)
        if j.companion is None:
            return Answer(None)
        if companion == "id":
            try:
                who = [world.contact(j.companion)]
            except KeyError:
                return Answer(None)
        else:
            first = next((c.first_name for c in world.contacts if c.id == j.companion), None)
            who = find_contacts(world, {"first_name": first}) if first else []
        if len(who) != 1:
            return Answer(None)
        value = _contact_field(who[0], query["field"])
        return Answer(value, (j.id, who[0].id) if value is not None else ())
    if op == "contacts_in_previous_city":
        prev = previous_value(world, "home_address", today=today, policy=policy)
        if prev.value is None:
            return Answer(None)
        cities = sorted({c.city for c in world.contacts if c.city in prev.value})
        if len(cities) != 1:
            return Answer(None)
        who = sorted((c for c in world.contacts if c.city == cities[0]), key=lambda c: c.name)
        if not who:
            return Answer(None)
        return Answer(tuple(c.name for c in who), prev.record_ids + tuple(c.id for c in who))
    raise ValueError(f"unknown query op {op!r}")
