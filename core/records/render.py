"""The six arms of seed 002 (*Personal Dimension Benchmark v1: methods*, §4.4), rendered from
the one fact table, and the completeness check (§1, §4.4, §9). M14 = characters per arm (§7).

==== =================== ===========================================================
Arm  Name                What the text carries
==== =================== ===========================================================
A    notes               chronological notes, one line per fact / journey, each with
                         its dates, record id and source (title, id, capture date);
                         contacts in their own section; journeys name companions as a
                         person writes: first name, full name when it is shared
B    notes + profile     a profile (current values by naive recency over every
                         record, no dates, no sources) on top of arm A
C    flat records        current state only (records covering today, naive recency),
                         no validity intervals, no sources, no identifiers
D    dimension           facts with ids, intervals, sources, kinds, tiers, capture
                         dates; the source table; the conflict policy; contacts;
                         journeys with companions by contact id
E    D − provenance      D without source fields, source table, policy and record ids
                         (companions by full name)
F    D − validity        D without validity intervals: only facts covering today
==== =================== ===========================================================

Rendering is deterministic (sorted, no randomness): the same world gives the same bytes.

The completeness check (§1, §9) reads every arm's text back into claims — each record's
value, interval bounds, source id, identifier, each source's title and capture date, each
contact's fields, each journey's fields and *which contact* came along (:mod:`.claims`) —
and compares them with the fact table: a complete arm (A, B, D) must carry every claim, so
nothing another arm carries; an ablation (C, E, F) must miss something (else it would not be
an ablation); no arm may state a claim unlike the table. Notes name a companion by first
name unless another contact shares it, then by full name ("with Alex Chen"): "with Alex"
among three Alexes does not say which, and the check rejects it.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import pandas as pd

from .claims import text_claims, world_claims
from .engine import resolve
from .world import RUN_DATE, Fact, World

__all__ = ["ARMS", "ARM_NAMES", "COMPLETE_ARMS", "CompletenessError", "check_completeness",
           "companion_mention", "completeness", "context_chars", "current_facts", "inventory",
           "profile_facts", "render"]

ARMS = ("A", "B", "C", "D", "E", "F")
ARM_NAMES = {"A": "notes", "B": "notes + profile", "C": "flat records", "D": "dimension",
             "E": "dimension - provenance", "F": "dimension - validity"}
#: Arms that must carry every value, date and source (seed 002 §4.4).
COMPLETE_ARMS = ("A", "B", "D")


class CompletenessError(ValueError):
    """A complete arm misses something another arm carries (or an ablation misses nothing)."""


def _iso(d: _dt.date | None) -> str:
    return "open" if d is None else d.isoformat()


def current_facts(world: World, *, today: _dt.date = RUN_DATE, one_per_attribute: bool = False,
                  policy: str = "naive recency") -> list[Fact]:
    """Facts covering ``today``; with ``one_per_attribute`` only the ``policy`` winner of each
    (arm C's flat state uses naive recency, §4.4)."""
    live = [f for f in world.facts if f.covers(today)]
    if not one_per_attribute:
        return live
    out = []
    for attribute in dict.fromkeys(f.attribute for f in live):
        out.append(resolve(world, [f for f in live if f.attribute == attribute], policy=policy))
    return out


def profile_facts(world: World) -> list[Fact]:
    """Arm B's profile: for each attribute the most recently captured record, whatever its
    validity or source (naive recency as a memory summary applies it, §2, §11)."""
    out = []
    for attribute in dict.fromkeys(f.attribute for f in world.facts):
        out.append(resolve(world, [f for f in world.facts if f.attribute == attribute],
                           policy="naive recency"))
    return out


def _src(world: World, source_id: str) -> str:
    s = world.source(source_id)
    return f"{s.title} ({s.id}), captured {s.captured.isoformat()}"


def companion_mention(world: World, contact_id: str, *, names: str = "as needed") -> str:
    """How the notes name a journey's companion (§4.4: "the way a person would").

    ``names="as needed"`` (the default): the first name, unless another contact shares it,
    then the full name ("with Ingrid", "with Alex Chen"), so the mention says which person.
    ``names="first"``: always the first name, the notes before issue 19 ("with Alex"), which
    the completeness check rejects; kept to show what that cost (:mod:`.views`).
    """
    if names not in ("as needed", "first"):
        raise ValueError(f"names must be 'as needed' or 'first', got {names!r}")
    c = world.contact(contact_id)
    shared = sum(o.first_name == c.first_name for o in world.contacts) > 1
    return c.name if shared and names == "as needed" else c.first_name


def _notes(world: World, *, companions: str = "as needed") -> str:
    lines = []
    for f in world.facts:
        when = (f"{f.valid_from.isoformat()} to {f.valid_to.isoformat()}" if f.valid_to
                else f"since {f.valid_from.isoformat()}")
        lines.append((f.valid_from, f.id, f"{when}: {world.label(f.attribute)} {f.value}. "
                                          f"[{f.id}; from the {_src(world, f.source)}]"))
    for j in world.journeys:
        who = ""
        if j.companion:
            who = f" with {companion_mention(world, j.companion, names=companions)}"
        lines.append((j.depart, j.id,
                      f"{j.depart.isoformat()} to {j.return_.isoformat()}: {j.mode} from "
                      f"{j.origin} to {j.destination} ({j.purpose}){who}. "
                      f"[{j.id}; from the {_src(world, j.source)}]"))
    lines.sort(key=lambda t: (t[0], t[1]))
    contacts = [f"- {c.name} ({c.relation}), lives in {c.city}, phone {c.phone}, email "
                f"{c.email}. [{c.id}; from the {_src(world, c.source)}]"
                for c in world.contacts]
    return "\n".join([f"My notes ({world.subject})", "", *[t[2] for t in lines], "",
                      "Contacts", *contacts])


def _profile(world: World) -> str:
    rows = [f"- {world.label(f.attribute)}: {f.value}" for f in profile_facts(world)]
    return "\n".join(["Profile (current values)", *rows])


def _flat(world: World, today: _dt.date) -> str:
    names = {c.id: c.name for c in world.contacts}
    rows = [f"{f.attribute}: {f.value}"
            for f in current_facts(world, today=today, one_per_attribute=True)]
    contacts = [f"name: {c.name} | relation: {c.relation} | city: {c.city} | phone: {c.phone} "
                f"| email: {c.email}" for c in world.contacts]
    journeys = [f"origin: {j.origin} | destination: {j.destination} | depart: "
                f"{j.depart.isoformat()} | return: {j.return_.isoformat()} | mode: {j.mode} | "
                f"purpose: {j.purpose} | companion: {names.get(j.companion, 'none')}"
                for j in world.journeys]
    return "\n".join(["RECORDS (current state)", *rows, "", "CONTACTS", *contacts, "",
                      "JOURNEYS", *journeys])


def _dimension(world: World, today: _dt.date, *, provenance: bool, validity: bool) -> str:
    names = {c.id: c.name for c in world.contacts}
    out = []
    if provenance:
        out += [f"POLICY {world.policy_id}: {world.policy_text}", "",
                "SOURCES (id | kind | tier | captured | title)"]
        out += [f"{s.id} | {s.kind} | tier {s.tier} | captured {s.captured.isoformat()} | "
                f"{s.title}" for s in world.sources]
        out.append("")
    head = ["id"] if provenance else []
    head += ["attribute", "value"] + (["valid_from", "valid_to"] if validity else [])
    head += ["source", "kind", "tier", "captured"] if provenance else []
    facts = world.facts if validity else current_facts(world, today=today)
    title = "FACTS" if validity else f"FACTS (records that hold on {today.isoformat()})"
    out.append(f"{title} ({' | '.join(head)})")
    for f in facts:
        cells = [f.id] if provenance else []
        cells += [f.attribute, f.value]
        if validity:
            cells += [f.valid_from.isoformat(), _iso(f.valid_to)]
        if provenance:
            s = world.source(f.source)
            cells += [s.id, s.kind, f"tier {s.tier}", s.captured.isoformat()]
        out.append(" | ".join(cells))
    out += ["", "CONTACTS"]
    for c in world.contacts:
        cells = ([c.id] if provenance else []) + [c.name, c.relation, c.city, c.phone, c.email]
        cells += [f"source {c.source}"] if provenance else []
        out.append(" | ".join(cells))
    out += ["", "JOURNEYS"]
    for j in world.journeys:
        who = (j.companion or "none") if provenance else names.get(j.companion, "none")
        cells = ([j.id] if provenance else []) + [
            f"{j.origin} -> {j.destination}",
            f"{j.depart.isoformat()} to {j.return_.isoformat()}", j.mode, j.purpose,
            f"companion {who}"]
        cells += [f"source {j.source}"] if provenance else []
        out.append(" | ".join(cells))
    return "\n".join(out)


def render(world: World, arm: str, *, today: _dt.date = RUN_DATE,
           companions: str = "as needed") -> str:
    """The text of ``arm`` (one of :data:`ARMS`) for ``world`` as of ``today`` (only records
    captured by ``today``, :meth:`~core.records.world.World.known_on`);
    ``companions`` is how the notes (A, B) name a journey's companion
    (:func:`companion_mention`)."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")
    world = world.known_on(today)
    if arm == "A":
        return _notes(world, companions=companions)
    if arm == "B":
        return _profile(world) + "\n\n" + _notes(world, companions=companions)
    if arm == "C":
        return _flat(world, today)
    return _dimension(world, today, provenance=arm != "E", validity=arm != "F")


def inventory(world: World) -> pd.DataFrame:
    """Every value, date, source id and record id the world holds, as text: one row per
    (``kind``, ``token``), kind ``value``, ``date``, ``source`` or ``identifier``. M8's
    dimension values come from it (:mod:`.score`); the completeness check does not (it
    compares claims, :mod:`.claims`)."""
    rows = set()
    for f in world.facts:
        rows |= {("value", f.value), ("date", f.valid_from.isoformat()),
                 ("identifier", f.id), ("source", f.source)}
        if f.valid_to:
            rows.add(("date", f.valid_to.isoformat()))
    for s in world.sources:
        rows |= {("source", s.id), ("date", s.captured.isoformat())}
    for c in world.contacts:
        rows |= {("value", v) for v in (c.name, c.relation, c.city, c.phone, c.email)}
        rows |= {("identifier", c.id), ("source", c.source)}
    for j in world.journeys:
        rows |= {("value", v) for v in (j.origin, j.destination, j.mode, j.purpose)}
        rows |= {("date", j.depart.isoformat()), ("date", j.return_.isoformat()),
                 ("identifier", j.id), ("source", j.source)}
    return pd.DataFrame(sorted(rows), columns=["kind", "token"])


def context_chars(world: World, *, today: _dt.date = RUN_DATE) -> dict[str, int]:
    """M14 (seed 002 §7): characters of context supplied, per arm."""
    return {arm: len(render(world, arm, today=today)) for arm in ARMS}


@dataclass(frozen=True)
class CompletenessReport:
    """Per arm: characters (M14), claims carried, and what it misses of the fact table.

    ``table`` columns: ``arm, name, complete_expected, chars, carried, missing, wrong, ok``
    (``wrong``: claims the text states differently from the fact table; ``ok``: a complete
    arm misses nothing, an ablation misses something, and no arm states anything wrongly);
    ``missing`` and ``wrong`` map each arm to sorted ``"kind record field: value"`` strings.
    """

    table: pd.DataFrame
    missing: dict[str, tuple[str, ...]]
    wrong: dict[str, tuple[str, ...]]
    n_claims: int

    @property
    def ok(self) -> bool:
        return bool(self.table["ok"].all())


def _show(claim) -> str:
    kind, rid, field, value = claim
    return f"{kind} {rid} {field}: {value}"


def completeness(world: World, *, today: _dt.date = RUN_DATE,
                 texts: dict[str, str] | None = None) -> CompletenessReport:
    """Read every arm's text back into claims and compare them with the fact table (seed
    002 §1, §4.4, §9; :mod:`.claims`).

    ``texts`` replaces the rendered texts of the arms it names (a deliberately broken copy
    in the tests). An arm *carries* a claim when its text states it about the same record;
    a complete arm (A, B, D) must carry every claim of the fact table, which is also
    everything any other arm carries; an ablation (C, E, F) must miss something.
    """
    world = world.known_on(today)
    want = world_claims(world)
    texts = {arm: render(world, arm, today=today) for arm in ARMS} | dict(texts or {})
    said = {arm: text_claims(world, arm, texts[arm]) for arm in ARMS}
    carried = {arm: said[arm] & want for arm in ARMS}
    union = set().union(*carried.values())
    missing = {arm: tuple(sorted(_show(c) for c in want - carried[arm])) for arm in ARMS}
    wrong = {arm: tuple(sorted(_show(c) for c in said[arm] - want)) for arm in ARMS}
    rows = []
    for arm in ARMS:
        expected = arm in COMPLETE_ARMS
        n_missing = len(missing[arm]) if expected else len(union - carried[arm])
        rows.append({"arm": arm, "name": ARM_NAMES[arm], "complete_expected": expected,
                     "chars": len(texts[arm]), "carried": len(carried[arm]),
                     "missing": len(missing[arm]), "wrong": len(wrong[arm]),
                     "ok": (n_missing == 0) == expected and not wrong[arm]})
    return CompletenessReport(pd.DataFrame(rows), missing, wrong, len(want))


def check_completeness(world: World, *, today: _dt.date = RUN_DATE,
                       texts: dict[str, str] | None = None) -> CompletenessReport:
    """:func:`completeness`, raising :class:`CompletenessError` unless A, B, D miss nothing,
    C, E, F each miss something and no arm states a claim wrongly (the check that runs
    before any call, §9)."""
    rep = completeness(world, today=today, texts=texts)
    bad = rep.table[~rep.table["ok"]]
    if len(bad):
        parts = []
        for row in bad.itertuples():
            if row.wrong:
                parts.append(f"arm {row.arm} states {row.wrong} claim(s) unlike the fact "
                             f"table: {'; '.join(rep.wrong[row.arm][:5])}")
            if row.complete_expected and row.missing:
                shown = "; ".join(rep.missing[row.arm][:5])
                parts.append(f"arm {row.arm} misses {row.missing} claim(s): {shown}")
            elif not row.complete_expected and not row.wrong:
                parts.append(f"ablation arm {row.arm} misses nothing")
        raise CompletenessError("completeness check failed: " + " | ".join(parts))
    return rep
