"""What a rendered arm says, read back as structured claims (seed 002, *Personal Dimension
Benchmark v1: methods*, §1, §4.4, §9).

Seed 002 §1 requires a check, run before every execution, that fails "if any complete
representation is missing any value, date or source that another one carries". A substring
search for tokens cannot ask that: a date present *somewhere* in a text is not the interval
bound of the record it belongs to, and "with Alex" contains the token "Alex" without saying
which Alex. So the check works on claims, ``(kind, record, field, value)``:

======== ====================================================================================
kind     fields (value)
======== ====================================================================================
fact     ``identifier`` (its id), ``attribute``, ``value``, ``valid_from`` and ``valid_to``
         (ISO; ``"open"`` = still true), ``source`` (source id)
source   ``captured`` (ISO), ``title``
contact  ``identifier``, ``name``, ``relation``, ``city``, ``phone``, ``email``, ``source``
journey  ``identifier``, ``origin``, ``destination``, ``depart``, ``return``, ``mode``,
         ``purpose``, ``companion`` (the contact's id, ``"none"`` when nobody came along),
         ``source``
======== ====================================================================================

:func:`world_claims` lists them from the fact table; :func:`text_claims` reads them back out
of an arm's text with one parser per layout (the notes of A and B, the flat records of C,
the tables of D, E and F). A record is located by its identifier where the text carries one,
otherwise by its content (a flat fact by attribute and value, an E fact by attribute, value
and start, a contact by full name, a journey by origin, destination and departure). A
companion counts as carried only if the text's mention resolves to exactly one contact — a
full name, a contact id, or a first name nobody else has; "with Alex" among three Alexes
resolves to none. A source's kind and tier are not claims: the notes name a source the way
a person would (title, id, capture date), and §4.4 asks the complete arms for "every fact,
every date and every source", not for D's provenance columns.
"""

from __future__ import annotations

import re

from .world import World

__all__ = ["Claim", "resolve_mention", "text_claims", "world_claims"]

#: ``(kind, record id, field, value)``.
Claim = tuple[str, str, str, str]

_DATE = r"\d{4}-\d{2}-\d{2}"
_BRACKET = re.compile(rf"\[(?P<rid>[^;\]]+?)(?:; from the (?P<title>.+) \((?P<sid>[^()]+)\), "
                      rf"captured (?P<cap>{_DATE}))?\]$")
_NOTE = re.compile(r"^(?P<when>[^:]+): (?P<body>.+)\. (?P<bracket>\[[^\[]+\])$")
_CONTACT_NOTE = re.compile(r"^- (?P<name>.+) \((?P<relation>.+)\), lives in (?P<city>.+), "
                           r"phone (?P<phone>.+), email (?P<email>\S+)\. (?P<bracket>\[.+\])$")
_JOURNEY_BODY = re.compile(r"^(?P<mode>.+?) from (?P<origin>.+) to (?P<destination>.+) "
                           r"\((?P<purpose>[^()]+)\)(?: with (?P<who>.+))?$")
_WHEN = re.compile(rf"^(?:(?P<a>{_DATE}) to (?P<b>{_DATE})|since (?P<since>{_DATE})|"
                   rf"(?P<only>{_DATE}))$")


def world_claims(world: World) -> set[Claim]:
    """Every claim the fact table makes (what a complete arm must carry, §4.4)."""
    out: set[Claim] = set()
    for f in world.facts:
        out |= {("fact", f.id, "identifier", f.id), ("fact", f.id, "attribute", f.attribute),
                ("fact", f.id, "value", f.value),
                ("fact", f.id, "valid_from", f.valid_from.isoformat()),
                ("fact", f.id, "valid_to", f.valid_to.isoformat() if f.valid_to else "open"),
                ("fact", f.id, "source", f.source)}
    for s in world.sources:
        out |= {("source", s.id, "captured", s.captured.isoformat()),
                ("source", s.id, "title", s.title)}
    for c in world.contacts:
        out |= {("contact", c.id, k, v) for k, v in (
            ("identifier", c.id), ("name", c.name), ("relation", c.relation), ("city", c.city),
            ("phone", c.phone), ("email", c.email), ("source", c.source))}
    for j in world.journeys:
        out |= {("journey", j.id, k, v) for k, v in (
            ("identifier", j.id), ("origin", j.origin), ("destination", j.destination),
            ("depart", j.depart.isoformat()), ("return", j.return_.isoformat()),
            ("mode", j.mode), ("purpose", j.purpose), ("companion", j.companion or "none"),
            ("source", j.source))}
    return out


def resolve_mention(world: World, text: str) -> tuple[str, ...]:
    """The contacts a companion mention can mean: a contact id, else every contact with that
    full name, else every contact with that first name (one id = resolved)."""
    text = text.strip()
    if any(c.id == text for c in world.contacts):
        return (text,)
    full = tuple(c.id for c in world.contacts if c.name == text)
    return full or tuple(c.id for c in world.contacts if c.first_name == text)


def _companion(world: World, who: str | None) -> str | None:
    if who is None or who == "none":
        return "none"
    ids = resolve_mention(world, who)
    return ids[0] if len(ids) == 1 else None


def _interval(when: str) -> dict:
    m = _WHEN.match(when.strip())
    if not m:
        return {}
    if m["a"]:
        return {"from": m["a"], "to": m["b"]}
    if m["since"]:
        return {"from": m["since"], "to": "open"}
    return {"from": m["only"]}


def _add(out: set, kind: str, rid: str, fields: dict) -> None:
    out |= {(kind, rid, k, v) for k, v in fields.items() if v is not None}


def _bracket(world: World, out: set, text: str) -> tuple[str, str | None] | None:
    b = _BRACKET.search(text)
    if not b:
        return None
    if b["sid"]:
        _add(out, "source", b["sid"], {"title": b["title"], "captured": b["cap"]})
    return b["rid"].strip(), b["sid"]


def _notes(world: World, text: str) -> set[Claim]:
    out: set[Claim] = set()
    facts = {f.id for f in world.facts}
    journeys = {j.id for j in world.journeys}
    labels = sorted(((world.label(a), a) for a in dict.fromkeys(
        f.attribute for f in world.facts)), key=lambda t: -len(t[0]))
    for line in text.splitlines():
        if (c := _CONTACT_NOTE.match(line)) and (got := _bracket(world, out, c["bracket"])):
            rid, sid = got
            _add(out, "contact", rid, {"identifier": rid, "source": sid, **{
                k: c[k] for k in ("name", "relation", "city", "phone", "email")}})
            continue
        m = _NOTE.match(line)
        if not m or not (got := _bracket(world, out, m["bracket"])):
            continue
        rid, sid = got
        when, body = _interval(m["when"]), m["body"]
        if rid in facts:
            label, attribute = next(((lab, a) for lab, a in labels
                                     if body.startswith(lab + " ")), (None, None))
            _add(out, "fact", rid, {
                "identifier": rid, "source": sid, "attribute": attribute,
                "value": body[len(label) + 1:] if label else None,
                "valid_from": when.get("from"), "valid_to": when.get("to")})
        elif rid in journeys and (j := _JOURNEY_BODY.match(body)):
            _add(out, "journey", rid, {
                "identifier": rid, "source": sid, "depart": when.get("from"),
                "return": when.get("to") if when.get("to") != "open" else None,
                "companion": _companion(world, j["who"]),
                **{k: j[k] for k in ("mode", "origin", "destination", "purpose")}})
    return out


def _match(records, **want):
    hits = [r for r in records if all(str(getattr(r, k)) == v for k, v in want.items())]
    return hits[0].id if len(hits) == 1 else None


def _cells(line: str) -> dict:
    out = {}
    for cell in line.split(" | "):
        key, sep, value = cell.partition(": ")
        if sep:
            out[key] = value
    return out


def _flat(world: World, text: str) -> set[Claim]:
    out: set[Claim] = set()
    section = None
    for line in text.splitlines():
        if line in ("CONTACTS", "JOURNEYS") or line.startswith("RECORDS"):
            section = line.split()[0]
            continue
        if not line.strip():
            continue
        if section == "RECORDS":
            attribute, _, value = line.partition(": ")
            if rid := _match(world.facts, attribute=attribute, value=value):
                _add(out, "fact", rid, {"attribute": attribute, "value": value})
        elif section == "CONTACTS":
            c = _cells(line)
            if rid := _match(world.contacts, name=c.get("name")):
                _add(out, "contact", rid, {k: c.get(k) for k in
                                           ("name", "relation", "city", "phone", "email")})
        elif section == "JOURNEYS":
            c = _cells(line)
            if rid := _match(world.journeys, origin=c.get("origin"),
                             destination=c.get("destination"), depart=c.get("depart")):
                _add(out, "journey", rid, {
                    "return": c.get("return"), "companion": _companion(world, c.get("companion")),
                    **{k: c.get(k) for k in ("origin", "destination", "depart", "mode",
                                             "purpose")}})
    return out


def _tables(world: World, text: str) -> set[Claim]:
    out: set[Claim] = set()
    section, head = None, []
    for line in text.splitlines():
        if not line.strip() or line.startswith("POLICY"):
            continue
        if line.startswith(("SOURCES", "FACTS")):
            section = line.split()[0]
            inner = line[line.rfind("(") + 1:line.rfind(")")]
            head = inner.split(" | ")
            continue
        if line in ("CONTACTS", "JOURNEYS"):
            section = line
            continue
        cells = line.split(" | ")
        if section == "SOURCES" and len(cells) == 5:
            _add(out, "source", cells[0], {"captured": cells[3].removeprefix("captured "),
                                           "title": cells[4]})
        elif section == "FACTS" and len(cells) == len(head):
            row = dict(zip(head, cells, strict=True))
            rid = row.get("id") or _match(
                world.facts, attribute=row.get("attribute"), value=row.get("value"),
                **({"valid_from": row["valid_from"]} if "valid_from" in row else {}))
            if rid:
                _add(out, "fact", rid, {"identifier": row.get("id"),
                                        "attribute": row.get("attribute"),
                                        "value": row.get("value"), "source": row.get("source"),
                                        "valid_from": row.get("valid_from"),
                                        "valid_to": row.get("valid_to")})
                if row.get("source") and row.get("captured"):
                    _add(out, "source", row["source"], {"captured": row["captured"]})
        elif section == "CONTACTS":
            has_id = any(c.id == cells[0] for c in world.contacts)
            body = cells[1:] if has_id else cells
            src = body.pop()[len("source "):] if body and body[-1].startswith("source ") else None
            if len(body) != 5:
                continue
            rid = cells[0] if has_id else _match(world.contacts, name=body[0])
            if rid:
                _add(out, "contact", rid, {"identifier": cells[0] if has_id else None,
                                           "source": src, **dict(zip(
                                               ("name", "relation", "city", "phone", "email"),
                                               body, strict=True))})
        elif section == "JOURNEYS":
            has_id = any(j.id == cells[0] for j in world.journeys)
            body = cells[1:] if has_id else cells
            src = body.pop()[len("source "):] if body and body[-1].startswith("source ") else None
            if len(body) != 5:
                continue
            origin, _, destination = body[0].partition(" -> ")
            depart, _, return_ = body[1].partition(" to ")
            rid = cells[0] if has_id else _match(world.journeys, origin=origin,
                                                 destination=destination, depart=depart)
            if rid:
                _add(out, "journey", rid, {
                    "identifier": cells[0] if has_id else None, "source": src,
                    "origin": origin, "destination": destination, "depart": depart,
                    "return": return_ or None, "mode": body[2], "purpose": body[3],
                    "companion": _companion(world, body[4].removeprefix("companion "))})
    return out


def text_claims(world: World, arm: str, text: str) -> set[Claim]:
    """The claims ``text`` (arm ``arm``'s layout, §4.4) makes about ``world``'s records.

    Read from the text alone; ``world`` only names the records (ids, labels, contacts) so
    that a line can be matched to the record it renders. A claim whose value differs from
    the fact table's is returned as the text states it (the check then finds it missing and
    reports the text's version as wrong).
    """
    if arm in ("A", "B"):
        return _notes(world, text)
    if arm == "C":
        return _flat(world, text)
    if arm in ("D", "E", "F"):
        return _tables(world, text)
    raise ValueError(f"arm must be one of A-F, got {arm!r}")
