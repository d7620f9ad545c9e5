"""World checks of seed 002 (*Personal Dimension Benchmark v1: methods*, §4.1–§4.3, §9).

They run before anything else and fail loudly: :func:`check_world` raises one
:class:`WorldCheckError` listing every failure, each naming the check, the record and what
broke. :data:`CHECKS` names them in order:

* ``counts`` — 34 facts, 22 attributes, 7 contacts, 8 journeys, 27 sources (§4.1);
* ``ids_unique`` — no identifier is used twice;
* ``sources_exist`` — every record's source exists and has a known kind (tier), every
  companion is a contact;
* ``intervals_ordered`` — ``valid_from <= valid_to``, ``depart <= return`` (§4.1);
* ``conflicts_live`` — the five declared conflicts really conflict on ``today`` (two
  covering records, different values) and there is no undeclared one (§4.2);
* ``conflicts_prefer_scan_or_sync`` — CP-01 picks a document scan or device sync over a
  self-reported note in each (§4.2);
* ``recency_balance`` — naive recency and CP-01 disagree on exactly three, agree on two (§4.2);
* ``expiries`` — the three expired records ended before ``today``; the two controls have an
  end date and still cover ``today`` (§4.3);
* ``shared_first_name`` — exactly three contacts are called Alex and no other first name
  is shared (§4.1: "exactly three contacts must share a first name"; compared
  case-insensitively).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from .engine import conflict_table, covering
from .world import RUN_DATE, TIERS, World

__all__ = ["CHECKS", "EXPECTED_COUNTS", "Failure", "WorldCheckError", "check_world",
           "world_failures"]

#: Seed 002 §4.1 and §4.2.
EXPECTED_COUNTS = {"facts": 34, "attributes": 22, "contacts": 7, "journeys": 8, "sources": 27,
                   "conflicts": 5, "recency_disagrees": 3, "shared_first_name": 3}

CHECKS = ("counts", "ids_unique", "sources_exist", "intervals_ordered", "conflicts_live",
          "conflicts_prefer_scan_or_sync", "recency_balance", "expiries", "shared_first_name")


@dataclass(frozen=True)
class Failure:
    """One broken expectation: which check, which record, what broke."""

    check: str
    record: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.record}: {self.message}"


class WorldCheckError(ValueError):
    """The world is not the one seed 002 describes; ``failures`` lists every problem."""

    def __init__(self, failures: list[Failure]):
        self.failures = tuple(failures)
        lines = "\n".join(f"  {f}" for f in failures)
        super().__init__(f"the records world fails {len(failures)} check(s):\n{lines}")


def _counts(w: World, today) -> list[Failure]:
    seen = {"facts": len(w.facts), "attributes": len({f.attribute for f in w.facts}),
            "contacts": len(w.contacts), "journeys": len(w.journeys), "sources": len(w.sources)}
    return [Failure("counts", name, f"expected {EXPECTED_COUNTS[name]}, found {n}")
            for name, n in seen.items() if n != EXPECTED_COUNTS[name]]


def _ids_unique(w: World, today) -> list[Failure]:
    out = []
    for kind, records in (("fact", w.facts), ("source", w.sources), ("contact", w.contacts),
                          ("journey", w.journeys)):
        ids = [r.id for r in records]
        for dup in sorted({i for i in ids if ids.count(i) > 1}):
            out.append(Failure("ids_unique", f"{kind} {dup}", f"used {ids.count(dup)} times"))
    return out


def _sources_exist(w: World, today) -> list[Failure]:
    known = {s.id for s in w.sources}
    out = [Failure("sources_exist", f"source {s.id}",
                   f"unknown kind {s.kind!r} (tiers: {', '.join(TIERS)})")
           for s in w.sources if s.kind not in TIERS]
    for kind, records in (("fact", w.facts), ("contact", w.contacts), ("journey", w.journeys)):
        out += [Failure("sources_exist", f"{kind} {r.id}", f"source {r.source!r} does not exist")
                for r in records if r.source not in known]
    contacts = {c.id for c in w.contacts}
    out += [Failure("sources_exist", f"journey {j.id}",
                    f"companion {j.companion!r} is not a contact")
            for j in w.journeys if j.companion is not None and j.companion not in contacts]
    return out


def _intervals_ordered(w: World, today) -> list[Failure]:
    out = [Failure("intervals_ordered", f"fact {f.id}",
                   f"valid_to {f.valid_to} is before valid_from {f.valid_from}")
           for f in w.facts if f.valid_to is not None and f.valid_to < f.valid_from]
    out += [Failure("intervals_ordered", f"journey {j.id}",
                    f"return {j.return_} is before depart {j.depart}")
            for j in w.journeys if j.return_ < j.depart]
    return out


def _conflicts_live(w: World, today) -> list[Failure]:
    table = conflict_table(w, today=today)
    live = set(table["attribute"])
    out = []
    for attribute in w.conflicts:
        if attribute not in live:
            facts = covering(w, attribute, as_of=today)
            ids = ", ".join(f.id for f in facts) or "none"
            out.append(Failure("conflicts_live", f"attribute {attribute}",
                               f"declared a conflict but on {today} the covering records "
                               f"({ids}) do not disagree"))
    out += [Failure("conflicts_live", f"attribute {a}",
                    f"two covering records disagree on {today} but it is not declared")
            for a in sorted(live - set(w.conflicts))]
    if len(w.conflicts) != EXPECTED_COUNTS["conflicts"]:
        out.append(Failure("conflicts_live", "conflicts",
                           f"expected {EXPECTED_COUNTS['conflicts']} declared, found "
                           f"{len(w.conflicts)}"))
    return out


def _conflicts_prefer(w: World, today) -> list[Failure]:
    out = []
    for row in conflict_table(w, today=today).itertuples():
        if row.cp01_tier not in (1, 2) or 4 not in row.tiers:
            out.append(Failure("conflicts_prefer_scan_or_sync", f"attribute {row.attribute}",
                               f"CP-01 picks {row.cp01} (tier {row.cp01_tier}) among tiers "
                               f"{list(row.tiers)}: expected a scan or sync over a "
                               "self-reported note"))
    return out


def _recency_balance(w: World, today) -> list[Failure]:
    table = conflict_table(w, today=today)
    table = table[table["attribute"].isin(w.conflicts)]
    disagree = sorted(table.loc[~table["agree"], "attribute"])
    if len(disagree) != EXPECTED_COUNTS["recency_disagrees"] or len(table) - len(disagree) != 2:
        return [Failure("recency_balance", "conflicts",
                        f"naive recency and CP-01 should disagree on exactly 3 and agree on 2; "
                        f"they disagree on {len(disagree)} ({', '.join(disagree) or 'none'}) "
                        f"and agree on {len(table) - len(disagree)}")]
    return []


def _latest(w: World, attribute: str):
    facts = [f for f in w.facts if f.attribute == attribute]
    return max(facts, key=lambda f: f.valid_from) if facts else None


def _expiries(w: World, today) -> list[Failure]:
    out = []
    for attribute in w.expired:
        f = _latest(w, attribute)
        if f is None:
            out.append(Failure("expiries", f"attribute {attribute}", "has no record"))
        elif f.valid_to is None or f.valid_to >= today:
            out.append(Failure("expiries", f"fact {f.id}",
                               f"{attribute} should have expired before {today}, valid_to is "
                               f"{f.valid_to or 'open'}"))
    for attribute in w.still_valid:
        f = _latest(w, attribute)
        if f is None:
            out.append(Failure("expiries", f"attribute {attribute}", "has no record"))
        elif f.valid_to is None or not f.covers(today):
            out.append(Failure("expiries", f"fact {f.id}",
                               f"{attribute} should still be valid on {today} with an end "
                               f"date; interval {f.valid_from} to {f.valid_to or 'open'}"))
    if (len(w.expired), len(w.still_valid)) != (3, 2):
        out.append(Failure("expiries", "expectations",
                           f"expected 3 expired and 2 still valid, declared "
                           f"{len(w.expired)} and {len(w.still_valid)}"))
    return out


def _shared_first_name(w: World, today) -> list[Failure]:
    by_name: dict[str, list[str]] = {}
    for c in w.contacts:
        by_name.setdefault(c.first_name.casefold(), []).append(c.id)
    want = w.shared_first_name.casefold()
    named = by_name.get(want, [])
    out = []
    if len(named) != EXPECTED_COUNTS["shared_first_name"]:
        out.append(Failure("shared_first_name", f"first name {w.shared_first_name!r}",
                           f"expected 3 contacts, found {len(named)} ({', '.join(named)})"))
    for name, ids in sorted(by_name.items()):
        if name != want and len(ids) > 1:
            first = w.contact(ids[0]).first_name
            out.append(Failure("shared_first_name", f"first name {first!r}",
                               f"shared by {len(ids)} contacts ({', '.join(ids)}); only "
                               f"{w.shared_first_name!r} may be shared"))
    return out


_RUN = {"counts": _counts, "ids_unique": _ids_unique, "sources_exist": _sources_exist,
        "intervals_ordered": _intervals_ordered, "conflicts_live": _conflicts_live,
        "conflicts_prefer_scan_or_sync": _conflicts_prefer, "recency_balance": _recency_balance,
        "expiries": _expiries, "shared_first_name": _shared_first_name}


def world_failures(world: World, *, today: _dt.date = RUN_DATE) -> list[Failure]:
    """Every failure of every check in :data:`CHECKS` order (empty: the world is sound).

    The checks after ``sources_exist`` look only at facts whose source exists, so one broken
    reference is reported once (by ``sources_exist``) rather than crashing the others, and
    only at records captured by ``today`` (:meth:`World.known_on`): a note captured after
    ``today`` makes no conflict yet.
    """
    known = {s.id for s in world.sources}
    sound = world.with_facts([f for f in world.facts if f.source in known]).known_on(today)
    out = []
    for name in CHECKS:
        out += _RUN[name](world if name in ("counts", "ids_unique", "sources_exist") else sound,
                          today)
    return out


def check_world(world: World, *, today: _dt.date = RUN_DATE) -> None:
    """Raise :class:`WorldCheckError` listing every failure; return ``None`` when sound."""
    failures = world_failures(world, today=today)
    if failures:
        raise WorldCheckError(failures)
