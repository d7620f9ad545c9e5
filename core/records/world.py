"""The authored world of seed 002 (*Personal Dimension Benchmark v1: methods*, §4.1).

One synthetic person: 34 facts across 22 attributes, 7 contacts, 8 journeys and 27 sources,
read from ``data/records/world.json`` (a data file, not code). Every record is a frozen
dataclass; :func:`facts_frame` and friends give the same records as small pandas frames.

Conventions: dates are :class:`datetime.date`; ``valid_to is None`` is an open interval
(still true). A fact covers day ``d`` when ``valid_from <= d`` and (``valid_to`` is open or
``d <= valid_to``): both ends are inclusive. A source's tier follows its kind (§2: document
scan 1, device sync 2, email 3, self-reported 4). The run date 2026-09-06 is the default
"today" everywhere (:data:`RUN_DATE`), always a keyword parameter.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

__all__ = [
    "RUN_DATE",
    "TIERS",
    "WORLD_PATH",
    "Contact",
    "Fact",
    "Journey",
    "Source",
    "World",
    "contacts_frame",
    "facts_frame",
    "journeys_frame",
    "load_world",
    "parse_date",
    "record_tables",
    "sources_frame",
    "world_from_dict",
    "write_tables",
]

#: The run date of seed 002 (its title line): the default "today".
RUN_DATE = _dt.date(2026, 9, 6)
#: Source kinds and their tiers (seed 002 §2); lower is more trusted.
TIERS = {"document scan": 1, "device sync": 2, "email": 3, "self-reported": 4}
WORLD_PATH = Path(__file__).resolve().parents[2] / "data" / "records" / "world.json"


def parse_date(text: str | None, *, what: str = "date") -> _dt.date | None:
    """An ISO date (``None`` stays ``None``); ``ValueError`` naming ``what`` otherwise."""
    if text is None:
        return None
    try:
        return _dt.date.fromisoformat(str(text))
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not an ISO date (YYYY-MM-DD)") from None


@dataclass(frozen=True)
class Source:
    """Where records came from: kind, tier (from the kind) and capture date."""

    id: str
    kind: str
    title: str
    captured: _dt.date

    @property
    def tier(self) -> int | None:
        """The tier of :attr:`kind` (``None`` for an unknown kind, which the checks report)."""
        return TIERS.get(self.kind)


@dataclass(frozen=True)
class Fact:
    """One attribute with one value, a validity interval and its source (seed 002 §2)."""

    id: str
    attribute: str
    value: str
    valid_from: _dt.date
    valid_to: _dt.date | None
    source: str

    def covers(self, day: _dt.date) -> bool:
        """Whether the interval holds on ``day`` (both ends inclusive, open end = still true)."""
        return self.valid_from <= day and (self.valid_to is None or day <= self.valid_to)


@dataclass(frozen=True)
class Contact:
    """A person the records refer to."""

    id: str
    name: str
    relation: str
    city: str
    phone: str
    email: str
    source: str

    @property
    def first_name(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Journey:
    """A journey: from, to, dates, mode, purpose, and the contact who came along (or None)."""

    id: str
    origin: str
    destination: str
    depart: _dt.date
    return_: _dt.date
    mode: str
    purpose: str
    companion: str | None
    source: str


@dataclass(frozen=True)
class World:
    """The whole dimension: subject, sources, facts, contacts, journeys and the authored
    expectations the checks verify (which attributes conflict, expire or stay valid)."""

    subject: str
    born: _dt.date
    run_date: _dt.date
    policy_id: str
    policy_text: str
    attributes: dict[str, str]
    sources: tuple[Source, ...]
    facts: tuple[Fact, ...]
    contacts: tuple[Contact, ...]
    journeys: tuple[Journey, ...]
    conflicts: tuple[str, ...]
    expired: tuple[str, ...]
    still_valid: tuple[str, ...]
    shared_first_name: str
    tiers: dict[str, int] = field(default_factory=lambda: dict(TIERS))

    def source(self, source_id: str) -> Source:
        """The source ``source_id`` (``KeyError`` if absent)."""
        for s in self.sources:
            if s.id == source_id:
                return s
        raise KeyError(f"no source {source_id!r}")

    def fact(self, fact_id: str) -> Fact:
        for f in self.facts:
            if f.id == fact_id:
                return f
        raise KeyError(f"no fact {fact_id!r}")

    def contact(self, contact_id: str) -> Contact:
        for c in self.contacts:
            if c.id == contact_id:
                return c
        raise KeyError(f"no contact {contact_id!r}")

    def journey(self, journey_id: str) -> Journey:
        for j in self.journeys:
            if j.id == journey_id:
                return j
        raise KeyError(f"no journey {journey_id!r}")

    def label(self, attribute: str) -> str:
        """The readable name of ``attribute`` (the key itself if none is given)."""
        return self.attributes.get(attribute, attribute.replace("_", " "))

    def known_on(self, day: _dt.date) -> World:
        """The records visible on ``day``: those whose source was captured by then (seed 002
        §2: a record exists from its capture; what an assistant consulting the records on
        ``day`` can see). Sources captured later are dropped with every fact, contact and
        journey they carry; a record whose source is not in :attr:`sources` (a reader's view
        stripped of provenance, a broken world the checks report) is kept. Returns ``self``
        when nothing is captured after ``day``."""
        later = {s.id for s in self.sources if s.captured > day}
        if not later:
            return self
        return replace(self, sources=tuple(s for s in self.sources if s.id not in later),
                       facts=tuple(f for f in self.facts if f.source not in later),
                       contacts=tuple(c for c in self.contacts if c.source not in later),
                       journeys=tuple(j for j in self.journeys if j.source not in later))

    def with_facts(self, facts) -> World:
        """A copy with ``facts`` instead (used by write-back and by broken test worlds)."""
        return replace(self, facts=tuple(facts))


def _need(d: dict, key: str, where: str):
    if key not in d:
        raise ValueError(f"{where}: missing field {key!r}")
    return d[key]


def world_from_dict(data: dict) -> World:
    """Build a :class:`World` from the JSON layout of ``data/records/world.json``.

    Only the shape is checked here (fields present, dates ISO); whether the world is what
    seed 002 §4 asks for is :func:`core.records.checks.check_world`'s job.
    """
    sources = tuple(
        Source(id=_need(s, "id", "source"), kind=_need(s, "kind", f"source {s.get('id')}"),
               title=s.get("title", ""),
               captured=parse_date(_need(s, "captured", f"source {s['id']}"),
                                   what=f"source {s['id']} captured"))
        for s in data.get("sources", []))
    facts = tuple(
        Fact(id=_need(f, "id", "fact"), attribute=_need(f, "attribute", f"fact {f.get('id')}"),
             value=str(_need(f, "value", f"fact {f['id']}")),
             valid_from=parse_date(_need(f, "valid_from", f"fact {f['id']}"),
                                   what=f"fact {f['id']} valid_from"),
             valid_to=parse_date(f.get("valid_to"), what=f"fact {f['id']} valid_to"),
             source=_need(f, "source", f"fact {f['id']}"))
        for f in data.get("facts", []))
    contacts = tuple(
        Contact(**{k: _need(c, k, f"contact {c.get('id')}")
                   for k in ("id", "name", "relation", "city", "phone", "email", "source")})
        for c in data.get("contacts", []))
    journeys = tuple(
        Journey(id=_need(j, "id", "journey"), origin=_need(j, "origin", f"journey {j['id']}"),
                destination=_need(j, "destination", f"journey {j['id']}"),
                depart=parse_date(_need(j, "depart", f"journey {j['id']}"),
                                  what=f"journey {j['id']} depart"),
                return_=parse_date(_need(j, "return", f"journey {j['id']}"),
                                   what=f"journey {j['id']} return"),
                mode=j.get("mode", ""), purpose=j.get("purpose", ""),
                companion=j.get("companion"), source=_need(j, "source", f"journey {j['id']}"))
        for j in data.get("journeys", []))
    subject = data.get("subject", {})
    policy = data.get("policy", {})
    return World(
        subject=subject.get("name", ""), born=parse_date(subject.get("born", "1900-01-01")),
        run_date=parse_date(data.get("run_date", RUN_DATE.isoformat()), what="run_date"),
        policy_id=policy.get("id", ""), policy_text=policy.get("text", ""),
        attributes=dict(data.get("attributes", {})), sources=sources, facts=facts,
        contacts=contacts, journeys=journeys, conflicts=tuple(data.get("conflicts", [])),
        expired=tuple(data.get("expired", [])), still_valid=tuple(data.get("still_valid", [])),
        shared_first_name=data.get("shared_first_name", ""),
        tiers=dict(data.get("tiers", TIERS)))


def load_world(path: str | Path | None = None) -> World:
    """Read the world file (default ``data/records/world.json``) into a :class:`World`.

    ``ValueError`` names the file and the field when it cannot be read.
    """
    p = Path(path) if path is not None else WORLD_PATH
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the world file {p}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        return world_from_dict(data)
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"{p}: unexpected layout ({exc})") from None


def facts_frame(world: World) -> pd.DataFrame:
    """One row per fact, with its source's kind, tier and capture date joined on."""
    src = sources_frame(world).drop_duplicates("source_id").set_index("source_id")
    rows = [{"fact_id": f.id, "attribute": f.attribute, "value": f.value,
             "valid_from": f.valid_from, "valid_to": f.valid_to, "source_id": f.source}
            for f in world.facts]
    df = pd.DataFrame(rows, columns=["fact_id", "attribute", "value", "valid_from", "valid_to",
                                     "source_id"])
    for col in ("kind", "tier", "captured"):
        df[col] = df["source_id"].map(src[col]) if len(src) else None
    return df


def sources_frame(world: World) -> pd.DataFrame:
    return pd.DataFrame([{"source_id": s.id, "kind": s.kind, "tier": s.tier, "title": s.title,
                          "captured": s.captured} for s in world.sources],
                        columns=["source_id", "kind", "tier", "title", "captured"])


def contacts_frame(world: World) -> pd.DataFrame:
    return pd.DataFrame([{"contact_id": c.id, "name": c.name, "first_name": c.first_name,
                          "relation": c.relation, "city": c.city, "phone": c.phone,
                          "email": c.email, "source_id": c.source} for c in world.contacts])


def journeys_frame(world: World) -> pd.DataFrame:
    return pd.DataFrame([{"journey_id": j.id, "origin": j.origin, "destination": j.destination,
                          "depart": j.depart, "return": j.return_, "mode": j.mode,
                          "purpose": j.purpose, "companion": j.companion,
                          "source_id": j.source} for j in world.journeys])


def record_tables(world: World | None = None) -> dict[str, pd.DataFrame]:
    """The store tables of seed 002: ``records_facts``, ``records_sources``,
    ``records_contacts``, ``records_journeys`` (dates as ISO strings, open ends NULL)."""
    w = world if world is not None else load_world()

    def iso(df: pd.DataFrame, cols) -> pd.DataFrame:
        out = df.copy()
        for c in cols:
            out[c] = [None if v is None or v is pd.NaT else v.isoformat() for v in out[c]]
        return out

    return {"records_facts": iso(facts_frame(w), ["valid_from", "valid_to", "captured"]),
            "records_sources": iso(sources_frame(w), ["captured"]),
            "records_contacts": contacts_frame(w),
            "records_journeys": iso(journeys_frame(w), ["depart", "return"])}


def write_tables(con, world: World | None = None) -> tuple[str, ...]:
    """Write :func:`record_tables` into the DuckDB connection ``con`` (``CREATE OR REPLACE``,
    each on its own cursor); returns the table names. The store's build can call this."""
    names = []
    for name, frame in record_tables(world).items():
        with con.cursor() as cur:
            cur.register("records_in", frame)
            cur.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM records_in")
            cur.unregister("records_in")
        names.append(name)
    return tuple(names)
