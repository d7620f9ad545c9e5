"""The records stops' examples: selection rules and checks over seed 002's world (issue 22).

Pure functions over the authored world of *Personal Dimension Benchmark v1: methods*
(seed document 002, §4.1; :func:`core.records.world.load_world`), its 43 items (§6;
:func:`core.records.items.build_items`) and the disclosure track (§8;
:mod:`core.records.disclosure`). Each ``*_case`` function applies one written rule — a
filter, a ranking, a tie-break by the data's own order — and returns a frozen case holding
the example and the numbers its check needs, or ``None`` when nothing qualifies.
:mod:`.stops_records` turns a case into a :class:`~core.tour.model.StopView`.

No randomness: the world is authored, the engine and the reference readers are
deterministic.
"""

from __future__ import annotations

import datetime as _dt
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from core.records.disclosure import CONDITIONS, InfoItem, reference_decisions
from core.records.engine import covering, resolve
from core.records.items import Item
from core.records.readers import read_item
from core.records.world import Contact, Fact, World

__all__ = ["DisclosureCase", "ExpiryCase", "NameCase", "RecencyCase", "disclosure_case",
           "expiry_case", "first_listed", "name_case", "recency_case"]

_F = TypeVar("_F", bound=Callable)

#: The Parameters and Returns sections every ``*_case`` rule over the world shares
#: (:func:`_rule` appends them to the rule's docstring, naming its case).
_RULE_DOC = """
Parameters
----------
world : World
    The records world (seed 002 §4.1).
items : sequence of Item
    Its items, built by :func:`core.records.items.build_items` (§6).
today : date
    The run date: only records captured by then are seen.

Returns
-------
{case} or None
    None when no item qualifies.
"""


def _rule(case: type) -> Callable[[_F], _F]:
    """Decorate a ``*_case(world, items, *, today)`` rule: its docstring gains the shared
    numpydoc sections (:data:`_RULE_DOC`), its Returns naming ``case``."""
    def document(rule: _F) -> _F:
        rule.__doc__ = (inspect.cleandoc(rule.__doc__ or "") + "\n"
                        + _RULE_DOC.format(case=case.__name__))
        return rule
    return document


@dataclass(frozen=True)
class RecencyCase:
    """A conflict where the newest record comes from a less trusted tier (seed 002 §2, §4.2).

    ``facts``: the records that hold on the item's as-of date, in the world's order;
    ``policy`` and ``recency``: the winners under CP-01 and under naive recency;
    ``n_conflicts`` and ``n_differ``: the value conflicts on that day, and those on which
    the two rules give different answers.
    """

    item: Item
    facts: tuple[Fact, ...]
    policy: Fact
    recency: Fact
    n_conflicts: int
    n_differ: int

    @property
    def shows_failure(self) -> bool:
        """Naive recency is wrong and the conflict policy right (against the item's
        reference answer, which the ground-truth engine computes, §6)."""
        return (self.recency.value != self.item.reference
                and self.policy.value == self.item.reference)


def _tier(world: World, fact: Fact) -> int:
    return world.source(fact.source).tier or 99


@_rule(RecencyCase)
def recency_case(world: World, items, *, today: _dt.date) -> RecencyCase | None:
    """The conflict item that shows naive recency against CP-01 most clearly.

    Rule: among the conflict items that ask for a value (family CONF, §6), keep those whose
    records holding on the as-of date disagree and whose most recently captured record
    comes from a less trusted source tier than the record CP-01 keeps; rank by the tier gap
    (largest first), then by item order.
    """
    known = world.known_on(today)
    conf = [i for i in items if i.family == "CONF" and i.query.get("op") == "value"]
    found, n_conflicts, n_differ = [], 0, 0
    for order, item in enumerate(conf):
        facts = covering(known, item.query["attribute"], as_of=item.as_of)
        if len({f.value for f in facts}) < 2:
            continue
        n_conflicts += 1
        cp = resolve(known, facts, policy="CP-01")
        rec = resolve(known, facts, policy="naive recency")
        n_differ += cp.value != rec.value
        gap = _tier(known, rec) - _tier(known, cp)
        if gap > 0:
            found.append((-gap, order, item, tuple(facts), cp, rec))
    if not found:
        return None
    _, _, item, facts, cp, rec = min(found, key=lambda t: t[:2])
    return RecencyCase(item, facts, cp, rec, n_conflicts, n_differ)


@dataclass(frozen=True)
class ExpiryCase:
    """An expired record and what two readers say about it (seed 002 §2, §4.3, H9).

    ``fact``: the record the item asks about; ``days``: how many days before the as-of
    date its validity ended; ``profile`` and ``dimension``: the responses of the profile
    summary's reader (arm B) and of the full records' reader (arm D); ``records``: every
    expiry item's record as ``(item, fact)``; ``profile_asserts`` and ``dimension_flags``:
    per expiry item, whether arm B gives the value unflagged and whether arm D flags it.
    """

    item: Item
    fact: Fact
    days: int
    profile: dict
    dimension: dict
    records: tuple[tuple[Item, Fact], ...]
    profile_asserts: tuple[bool, ...]
    dimension_flags: tuple[bool, ...]

    @property
    def shows_failure(self) -> bool:
        """The record ended before the as-of date, the profile gives its value with no
        expiry flag, and the full records flag it."""
        return (self.fact.valid_to is not None and self.fact.valid_to < self.item.as_of
                and _asserts(self.profile, self.fact) and self.dimension["stale"] is True)


def _asserts(response: dict, fact: Fact) -> bool:
    return (not response["declined"] and response["answer"] == fact.value
            and response["stale"] is not True)


@_rule(ExpiryCase)
def expiry_case(world: World, items, *, today: _dt.date) -> ExpiryCase | None:
    """The expired record asserted as current most clearly.

    Rule: among the expiry items (family STALE, §6), keep those whose record's validity
    ended before the as-of date and that the profile summary's reader (arm B, §4.4) answers
    with that record's value without flagging it; rank by how long before the as-of date
    the record ended (longest first), then by item order.
    """
    stale = [i for i in items if i.family == "STALE" and i.record_ids]
    records = tuple((i, world.fact(i.record_ids[0])) for i in stale)
    profile = [read_item(world, i, "B", today=today) for i in stale]
    dimension = [read_item(world, i, "D", today=today) for i in stale]
    found = []
    for order, ((item, fact), b) in enumerate(zip(records, profile, strict=True)):
        if fact.valid_to is not None and fact.valid_to < item.as_of and _asserts(b, fact):
            found.append((-(item.as_of - fact.valid_to).days, order))
    if not found:
        return None
    _, k = min(found)
    item, fact = records[k]
    return ExpiryCase(item, fact, (item.as_of - fact.valid_to).days, profile[k],
                      dimension[k], records,
                      tuple(_asserts(b, f) for b, (_, f) in zip(profile, records, strict=True)),
                      tuple(d["stale"] is True for d in dimension))


def first_listed(world: World, first_name: str) -> Contact | None:
    """A first-name lookup: the first contact in the contact list with that first name
    (case-insensitive), as a search that matches on the first name alone returns it."""
    return next((c for c in world.contacts
                 if c.first_name.casefold() == first_name.casefold()), None)


@dataclass(frozen=True)
class NameCase:
    """A which-Alex item a first-name lookup gets wrong (seed 002 §4.1, §6 ENT, H11).

    ``right``: the contact the item resolves to (through the journey's companion);
    ``looked_up``: the contact a first-name lookup returns; ``namesakes``: every contact
    sharing the first name, in list order; ``n_wrong`` of ``n_items``: the which-Alex items
    on which the first-name lookup's answer differs from the reference.
    """

    item: Item
    right: Contact
    looked_up: Contact
    namesakes: tuple[Contact, ...]
    field: str
    n_wrong: int
    n_items: int

    @property
    def lookup_answer(self) -> str:
        return getattr(self.looked_up, self.field)

    @property
    def shows_failure(self) -> bool:
        """The lookup returns a different person, and so a different answer from the
        item's reference."""
        return (self.looked_up.id != self.right.id
                and self.lookup_answer != self.item.reference
                and getattr(self.right, self.field) == self.item.reference)


def _ent_target(world: World, item: Item) -> tuple[Contact, str] | None:
    """The contact an item's reference rests on, and the field it asks for."""
    contacts = [r for r in item.record_ids if any(c.id == r for c in world.contacts)]
    return (world.contact(contacts[-1]), item.query["field"]) if contacts else None


@_rule(NameCase)
def name_case(world: World, items, *, today: _dt.date) -> NameCase | None:
    """The which-Alex item that shows a first name resolved to the wrong person.

    Rule: among the which-Alex items (family ENT, §6) that reach the person through a
    journey's companion (the notes name who came along the way a person would, by first
    name), keep those where looking the first name up in the contact list (the first
    contact with that first name) gives a different person from the one the journey
    record links to; take the first in item order.
    """
    known = world.known_on(today)
    ent = [i for i in items if i.family == "ENT" and i.reference is not None]
    shared = world.shared_first_name
    namesakes = tuple(c for c in known.contacts if c.first_name.casefold() == shared.casefold())
    looked = first_listed(known, shared)
    wrong = 0
    picked = None
    for item in ent:
        target = _ent_target(known, item)
        if target is None or looked is None:
            continue
        contact, field = target
        wrong += getattr(looked, field) != item.reference
        if (picked is None and item.query.get("op") == "companion"
                and looked.id != contact.id):
            picked = (item, contact, field)
    if picked is None or looked is None:
        return None
    item, contact, field = picked
    return NameCase(item, contact, looked, namesakes, field, wrong, len(ent))


@dataclass(frozen=True)
class DisclosureCase:
    """A critical release under no policy (seed 002 §2, §8, M11).

    ``info`` asked for by ``requester`` (an id of the track's requesters);
    ``released``: per policy condition, whether the reference reader releases it;
    ``errors``: critical errors per condition (first replicate); ``n_critical``: critical
    information items; ``entitled``: per requester, how many items it may receive.
    """

    info: InfoItem
    requester: str
    released: dict[str, bool]
    errors: dict[str, int]
    n_critical: int
    n_items: int
    entitled: dict[str, int]

    @property
    def shows_failure(self) -> bool:
        """Released with no policy though critical and not entitled; withheld under the
        classification records."""
        return (self.released["none"] and self.info.critical is not None
                and self.requester not in self.info.release_to
                and not self.released["structured"])


def disclosure_case(requesters: dict[str, str], infos) -> DisclosureCase | None:
    """The critical disclosure error that shows the failure most clearly.

    Rule: among the requests the reference reader grants when no policy is given (first
    replicate), keep those for a critical item (§2) by a requester not on its release list;
    rank requesters by how few items they may receive (fewest first, then the track's
    order) and take the first item in item order.

    Parameters
    ----------
    requesters : dict
        Requester id → description, in the track's order (§8).
    infos : sequence of InfoItem
        The information items with their critical category and release list.

    Returns
    -------
    DisclosureCase or None
        None when no critical release to anyone not entitled happens.
    """
    decisions = reference_decisions(infos, requesters, replicates=1)
    release = {(d["condition"], d["requester"], d["info_id"]): d["release"] for d in decisions}
    by_id = {it.info_id: it for it in infos}
    entitled = {r: sum(r in it.release_to for it in infos) for r in requesters}
    errors = {c: sum(release[(c, r, it.info_id)] and it.critical is not None
                     and r not in it.release_to for r in requesters for it in infos)
              for c in CONDITIONS}
    rank = {r: (entitled[r], k) for k, r in enumerate(requesters)}
    found = [(rank[r], k, r, it.info_id) for k, it in enumerate(infos) for r in requesters
             if release[("none", r, it.info_id)] and it.critical is not None
             and r not in it.release_to]
    if not found:
        return None
    _, _, requester, info_id = min(found)
    return DisclosureCase(by_id[info_id], requester,
                          {c: release[(c, requester, info_id)] for c in CONDITIONS}, errors,
                          sum(it.critical is not None for it in infos), len(infos), entitled)
