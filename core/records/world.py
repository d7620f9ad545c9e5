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
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

__all__ = [
    "LAYOUT",
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
    "inverted_intervals",
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


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
#: The world file's layout: per record kind, its fields and what each must be (seed 002
#: §4.1). ``text`` a non-empty string, ``str`` any string, ``date`` an ISO date string,
#: ``date?`` / ``text?`` that or null; a field in brackets may be left out.
LAYOUT = {
    "source": {"id": "text", "kind": "text", "[title]": "str", "captured": "date"},
    "fact": {"id": "text", "attribute": "text", "value": "text", "valid_from": "date",
             "[valid_to]": "date?", "source": "text"},
    "contact": {"id": "text", "name": "text", "relation": "str", "city": "str",
                "phone": "str", "email": "str", "source": "text"},
    "journey": {"id": "text", "origin": "text", "destination": "text", "depart": "date",
                "return": "date", "[mode]": "str", "[purpose]": "str",
                "[companion]": "text?", "source": "text"},
}
_LISTS = {"sources": "source", "facts": "fact", "contacts": "contact", "journeys": "journey"}
_TOP = {"subject", "run_date", "tiers", "policy", "attributes", *_LISTS, "conflicts",
        "expired", "still_valid", "shared_first_name"}
_WANT = {"text": "a non-empty string", "str": "a string", "date": "an ISO date (YYYY-MM-DD)",
         "date?": "an ISO date (YYYY-MM-DD) or null", "text?": "a non-empty string or null"}


def _shown(value) -> str:
    return json.dumps(value, default=str)[:40]


def _field(value, kind: str, where: str):
    """``value`` checked against ``kind`` of :data:`LAYOUT`; ``ValueError`` naming ``where``
    (the record and field) otherwise."""
    if value is None and kind.endswith("?"):
        return None
    base = kind.rstrip("?")
    ok = (isinstance(value, str) and (base != "text" or value.strip() != "")
          and (base != "date" or _ISO.fullmatch(value) is not None))
    if ok and base == "date":
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            ok = False
    if not ok:
        raise ValueError(f"{where}: must be {_WANT[kind]}, got {_shown(value)}")
    return value


def _records(data: dict, plural: str) -> list[dict]:
    """The checked fields of every record of ``plural`` (field names as in the file)."""
    kind = _LISTS[plural]
    rows = data.get(plural, [])
    if not isinstance(rows, list):
        raise ValueError(f"{plural}: must be a list of objects, got {_shown(rows)}")
    layout = {k.strip("[]"): (v, k.startswith("[")) for k, v in LAYOUT[kind].items()}
    out = []
    for n, rec in enumerate(rows, start=1):
        rid = rec.get("id") if isinstance(rec, dict) else None
        who = f"{kind} {rid}" if isinstance(rid, str) and rid.strip() else f"{kind} #{n}"
        if not isinstance(rec, dict):
            raise ValueError(f"{who}: must be an object, got {_shown(rec)}")
        extra = sorted(set(rec) - set(layout))
        if extra:
            raise ValueError(f"{who}: unknown field(s) {', '.join(extra)[:60]}")
        row = {}
        for name, (want, optional) in layout.items():
            if name not in rec:
                if not optional:
                    raise ValueError(f"{who}: missing field {name!r}")
                row[name] = None if want.endswith("?") else ""
                continue
            row[name] = _field(rec[name], want, f"{who} {name}")
        out.append(row)
    return out


def _mapping(data: dict, key: str, value_type: type, what: str) -> dict:
    got = data.get(key, {})
    if not isinstance(got, dict) or not all(
            isinstance(v, value_type) and not isinstance(v, bool) for v in got.values()):
        raise ValueError(f"{key}: must be an object of {what}, got {_shown(got)}")
    return dict(got)


def _names(data: dict, key: str) -> tuple[str, ...]:
    got = data.get(key, [])
    if not isinstance(got, list) or not all(isinstance(v, str) for v in got):
        raise ValueError(f"{key}: must be a list of strings, got {_shown(got)}")
    return tuple(got)


def world_from_dict(data: dict) -> World:
    """Build a :class:`World` from the JSON layout of ``data/records/world.json``.

    Every field is checked by type (:data:`LAYOUT`): a missing, null, empty or mistyped
    field, an unknown one, a date that is not ``YYYY-MM-DD`` raise one ``ValueError`` naming
    the record and the field (``fact F01 value: must be a non-empty string, got null``).
    Whether the world is what seed 002 §4 asks for is
    :func:`core.records.checks.check_world`'s job; :func:`load_world` also refuses an
    inverted interval.
    """
    if not isinstance(data, dict):
        raise ValueError(f"the world must be a JSON object, got {_shown(data)}")
    extra = sorted(k for k in set(data) - _TOP if not str(k).startswith("_"))
    if extra:
        raise ValueError(f"unknown top-level field(s) {', '.join(extra)[:60]}")
    sources = tuple(Source(r["id"], r["kind"], r["title"], r["captured"])
                    for r in _records(data, "sources"))
    facts = tuple(Fact(r["id"], r["attribute"], r["value"], r["valid_from"], r["valid_to"],
                       r["source"]) for r in _records(data, "facts"))
    contacts = tuple(Contact(**r) for r in _records(data, "contacts"))
    journeys = tuple(Journey(r["id"], r["origin"], r["destination"], r["depart"], r["return"],
                             r["mode"], r["purpose"], r["companion"], r["source"])
                     for r in _records(data, "journeys"))
    subject, policy = data.get("subject", {}), data.get("policy", {})
    for key, got in (("subject", subject), ("policy", policy)):
        if not isinstance(got, dict):
            raise ValueError(f"{key}: must be an object, got {_shown(got)}")
    shared = data.get("shared_first_name", "")
    if not isinstance(shared, str):
        raise ValueError(f"shared_first_name: must be a string, got {_shown(shared)}")
    return World(
        subject=_field(subject.get("name", ""), "str", "subject name"),
        born=_field(subject.get("born", "1900-01-01"), "date", "subject born"),
        run_date=_field(data.get("run_date", RUN_DATE.isoformat()), "date", "run_date"),
        policy_id=_field(policy.get("id", ""), "str", "policy id"),
        policy_text=_field(policy.get("text", ""), "str", "policy text"),
        attributes=_mapping(data, "attributes", str, "strings"), sources=sources,
        facts=facts, contacts=contacts, journeys=journeys,
        conflicts=_names(data, "conflicts"), expired=_names(data, "expired"),
        still_valid=_names(data, "still_valid"), shared_first_name=shared,
        tiers=_mapping(data, "tiers", int, "integers") if "tiers" in data else dict(TIERS))


def inverted_intervals(world: World) -> list[str]:
    """Every interval whose end is before its start, as ``record field: why``."""
    out = [f"fact {f.id} valid_to: {f.valid_to} is before valid_from {f.valid_from}"
           for f in world.facts if f.valid_to is not None and f.valid_to < f.valid_from]
    out += [f"journey {j.id} return: {j.return_} is before depart {j.depart}"
            for j in world.journeys if j.return_ < j.depart]
    return out


def load_world(path: str | Path | None = None) -> World:
    """Read the world file (default ``data/records/world.json``) into a :class:`World`.

    The file is read by :func:`.inputs.json_document` (size, UTF-8 by line, depth, strict
    JSON) and built by :func:`world_from_dict` (every field by type); an inverted interval
    is malformed input too. Any of these raises one ``ValueError`` of one line naming the
    file and the record and field (``world.json: fact F01 value: must be a non-empty string,
    got null``). The seed's checks (:func:`core.records.checks.check_world`) come after.
    """
    from .inputs import json_document

    p = Path(path) if path is not None else WORLD_PATH
    data = json_document(p, name=str(p))
    try:
        world = world_from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from None
    bad = inverted_intervals(world)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise ValueError(f"{p}: {bad[0]}{more}")
    return world


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
