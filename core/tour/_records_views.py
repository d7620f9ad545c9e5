"""The records stops' views: each stop's example, chart, answer, link and check (issue 22).

Computes on the authored world of *Personal Dimension Benchmark v1: methods* (seed document
002, §4.1; ``data/records/world.json``, checked by :func:`core.records.checks.check_world`),
its 43 items (§6) and the disclosure track (§8), in memory: no store is needed. The
selection rules and checks are :mod:`._records_cases`'; this module turns a case into a
:class:`~core.tour.model.StopView` in plain words, with a link that opens
``pages/9_Personal_records.py`` on the same view (:func:`page_link`: the page's ``pr_*``
URL parameters, checked against the options the page offers).

Shared results are memoised on the :class:`~core.tour.model.TourData` under the keys
``records:world``, ``records:items`` and ``records:disclosure``.
"""

from __future__ import annotations

import datetime as _dt

import pandas as pd

from core.records.checks import check_world
from core.records.disclosure import CONDITIONS, load_disclosure
from core.records.items import FAMILIES, Item, build_items
from core.records.render import ARM_NAMES, ARMS
from core.records.views import FAMILY_NAMES, change_dates
from core.records.world import RUN_DATE, World, load_world

from ._records_cases import disclosure_case, expiry_case, name_case, recency_case
from .model import Chart, StopView, TourData

__all__ = ["PAGE", "POLICY_TOKENS", "critical_disclosure", "expired_record", "naive_recency",
           "page_link", "same_name"]

PAGE = "pages/9_Personal_records.py"
#: The page's URL words for its two rules (``pr_policy``'s tokens).
POLICY_TOKENS = {"CP-01": "cp01", "naive recency": "recency"}
#: Requesters in plain words where the track's own description uses an abbreviation.
_REQUESTER_WORDS = {"hr": "the human resources department of her employer"}
#: Source kinds as nouns (seed 002 §2 names the kinds; "self-reported" is an adjective).
_KIND_WORDS = {"self-reported": "self-reported note"}
_CONDITION_WORDS = {"none": "no policy", "prose": "the policy as prose",
                    "structured": "the policy as classification records"}


# --------------------------------------------------------------------------- shared data

def _world(data: TourData) -> World:
    def load() -> World:
        world = load_world()
        check_world(world, today=RUN_DATE)
        return world
    return data.memo("records:world", load)


def _items(data: TourData):
    return data.memo("records:items", lambda: build_items(_world(data), today=RUN_DATE))


def _disclosure(data: TourData):
    return data.memo("records:disclosure", load_disclosure)


def _day(d: _dt.date) -> str:
    return f"{d.day} {d:%B %Y}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _kind(world: World, source_id: str) -> str:
    """A source's kind as a noun ("document scan", "self-reported note")."""
    kind = world.source(source_id).kind
    return _KIND_WORDS.get(kind, kind)


def _titled(world: World, source_id: str) -> str:
    """A source's title in a sentence ("the scan of …", "the note headed 'new flat'")."""
    title = world.source(source_id).title
    if title.startswith("note: "):
        return f"the note headed '{title.removeprefix('note: ')}'"
    return f"the {title}"


def _source_name(world: World, source_id: str) -> str:
    """A source's title as a label ("Scan of …", "Note headed 'new flat'")."""
    return _cap(_titled(world, source_id).removeprefix("the "))


def page_link(world: World, items, **params: str) -> tuple[tuple[str, str], ...]:
    """Query parameters that open the Personal records page on one view.

    Parameters
    ----------
    world : World
        The records world (its change dates are the page's as-of dates).
    items : sequence of Item
        Its items (seed 002 §6).
    **params : str
        Keyword-only, in the page's own names and formats: ``pr_asof`` an ISO date among
        :func:`~core.records.views.change_dates`, ``pr_policy`` one of
        :data:`POLICY_TOKENS`' values, ``pr_arm`` an arm letter, ``pr_family`` ``all`` or a
        family code, ``pr_item`` an item id (of that family), ``pr_cond`` a disclosure
        condition.

    Returns
    -------
    tuple of (name, value) pairs
        In the page's declaration order.

    Raises
    ------
    ValueError
        Naming the parameter the page does not read or the value it does not offer.
    """
    ids = {i.item_id: i.family for i in items}
    options = {
        "pr_asof": {d.isoformat() for d in change_dates(world, today=RUN_DATE)},
        "pr_policy": set(POLICY_TOKENS.values()), "pr_arm": set(ARMS),
        "pr_family": {"all", *FAMILIES}, "pr_item": set(ids), "pr_cond": set(CONDITIONS)}
    for name, value in params.items():
        if name not in options:
            raise ValueError(f"the Personal records page has no parameter {name!r}; it reads "
                             f"{', '.join(options)}")
        if value not in options[name]:
            raise ValueError(f"{name}={value!r} is not a value the page offers")
    family = params.get("pr_family", "all")
    if "pr_item" in params and family not in ("all", ids[params["pr_item"]]):
        raise ValueError(f"item {params['pr_item']} is not in family {family}")
    return tuple((k, params[k]) for k in options if k in params)


def _nothing(key: str, note: str) -> StopView:
    return StopView(key, (), (), None, "", "", (), (), False, note=note)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _case(data: TourData, rule):
    """The world, its items and ``rule(world, items, today=RUN_DATE)``: a stop's case
    (:mod:`._records_cases`), or None."""
    world, items = _world(data), _items(data)
    return world, items, rule(world, items, today=RUN_DATE)


def _status(value: str, item: Item) -> str:
    """An "answers" chart status: whether ``value`` is the item's reference answer."""
    return "right" if value == item.reference else "wrong"


def _reference_row(item: Item) -> dict[str, str]:
    """The "answers" chart's bottom row: the item's reference answer."""
    return {"who": "Reference answer", "role": "truth", "answer": item.reference,
            "status": "right", "text": "computed by the ground-truth engine (§6)"}


def _item_example(world: World, item: Item, *pairs: tuple[str, str]) -> tuple:
    """An item's example: the person and the question, ``pairs``, then where the full page
    lists the item."""
    return (("Person", world.subject), ("Question", item.question), *pairs,
            ("On the full page", f"{FAMILY_NAMES[item.family]}, item {item.item_id}"))


def _as_of(item: Item) -> tuple[str, str]:
    """The setting that names the item's as-of date (the run date)."""
    return ("As-of date", f"{item.as_of.isoformat()} (the run date)")


def _item_link(world: World, items, item: Item, **params: str) -> tuple[tuple[str, str], ...]:
    """:func:`page_link` to ``item`` on its as-of date, in its family, with ``params``."""
    return page_link(world, items, pr_asof=item.as_of.isoformat(), pr_family=item.family,
                     pr_item=item.item_id, **params)


# --------------------------------------------------------------------------- naive recency

def naive_recency(data: TourData) -> StopView:
    """The view of the stop ``naive-recency`` (see :mod:`.stops_records`)."""
    world, items, case = _case(data, recency_case)
    if case is None:
        return _nothing("naive-recency", "No conflict on the run date has its newest record "
                        "from a less trusted source than the record the conflict policy keeps.")
    it, cp, rec = case.item, case.policy, case.recency
    src = world.source
    label = world.label(it.query["attribute"])
    rows = [{"who": _source_name(world, f.source), "role": "source", "answer": f.value,
             "status": _status(f.value, it),
             "text": f"{_kind(world, f.source)}, source tier {src(f.source).tier}, captured "
                     f"{_day(src(f.source).captured)}; holds from {_day(f.valid_from)}"
                     + (f" to {_day(f.valid_to)}" if f.valid_to else ", still open")}
            for f in case.facts]
    rows += [{"who": "Naive recency: the newest capture wins", "role": "resolver",
              "answer": rec.value, "status": _status(rec.value, it),
              "text": f"takes the {_kind(world, rec.source)}, captured "
                      f"{_day(src(rec.source).captured)}"},
             {"who": "Conflict policy CP-01: the most trusted source wins", "role": "resolver",
              "answer": cp.value, "status": _status(cp.value, it),
              "text": f"takes the {_kind(world, cp.source)} (source tier "
                      f"{src(cp.source).tier})"},
             _reference_row(it)]
    chart = Chart("answers", pd.DataFrame(rows),
                  title=f"The records of Mara's {label} that hold on {_day(it.as_of)}, and "
                        "what each rule gives",
                  caption="One row per record and per rule, placed under the value it gives; "
                          "hover a record for its source, tier and capture date.")
    rt, ct = src(rec.source).tier, src(cp.source).tier
    return StopView(
        "naive-recency",
        example=_item_example(
            world, it, ("As of", _day(it.as_of)),
            ("Records that disagree", "; ".join(
                f"{f.value} ({_kind(world, f.source)}, source tier {src(f.source).tier})"
                for f in case.facts))),
        settings=(_as_of(it),
                  ("Rules compared", "naive recency and the conflict policy CP-01"),
                  ("Records seen", "those captured by the run date")),
        chart=chart,
        answer=(f"Naive recency gives {rec.value}, from {_titled(world, rec.source)}, "
                f"captured on {_day(src(rec.source).captured)}; the conflict policy gives "
                f"{cp.value}, from {_titled(world, cp.source)}, and that is the reference "
                "answer."),
        reason=(f"Both records hold on {_day(it.as_of)}. The {_kind(world, rec.source)} was "
                "captured later, so naive recency takes it whatever its source; the conflict "
                f"policy looks at the source first, and a {_kind(world, cp.source)} (tier "
                f"{ct}) beats a {_kind(world, rec.source)} (tier {rt}). In the chart only the "
                "rule that reads the tier lines up with the reference answer."),
        link=_item_link(world, items, it, pr_policy=POLICY_TOKENS["naive recency"]),
        evidence=(("Source tier of the newest record (naive recency's pick)", str(rt)),
                  ("Source tier of the conflict policy's pick", str(ct)),
                  ("Naive recency gives the reference answer", _yes(rec.value == it.reference)),
                  ("The conflict policy gives the reference answer",
                   _yes(cp.value == it.reference)),
                  ("Conflicts that day on which the two rules differ",
                   f"{case.n_differ} of {case.n_conflicts}")),
        shows_failure=case.shows_failure)


# --------------------------------------------------------------------------- expired record

def expired_record(data: TourData) -> StopView:
    """The view of the stop ``expired-record`` (see :mod:`.stops_records`)."""
    world, items, case = _case(data, expiry_case)
    if case is None:
        return _nothing("expired-record", "No expiry question asks about a record that ended "
                        "before the run date and that the profile summary states as current.")
    it, fact, as_of = case.item, case.fact, case.item.as_of
    label = world.label(fact.attribute)
    edge = max([as_of + _dt.timedelta(days=180)]
               + [f.valid_to for _, f in case.records if f.valid_to is not None])
    rows = []
    for (item, f), asserts in zip(case.records, case.profile_asserts, strict=True):
        ended = f.valid_to is not None and f.valid_to < item.as_of
        rows.append({"row": world.label(f.attribute), "start": f.valid_from.isoformat(),
                     "end": (f.valid_to or edge).isoformat(),
                     "status": "expired" if ended else "right",
                     "text": f"{f.value}: holds from {_day(f.valid_from)} to "
                             + (_day(f.valid_to) if f.valid_to else "open")
                             + (f"; ended {(item.as_of - f.valid_to).days} days before the "
                                "as-of date" if ended else "; still holds on the as-of date")
                             + ("; the profile summary states it as current"
                                if ended and asserts else "")})
        if item.item_id == it.item_id:
            rows.append({"row": f"{label}, as the profile summary states it",
                         "start": f.valid_from.isoformat(), "end": edge.isoformat(),
                         "status": "wrong",
                         "text": f"{case.profile['answer']}: the profile keeps no dates, so "
                                 "it states this value as current"})
    chart = Chart("timeline", pd.DataFrame(rows),
                  title="The records the expiry questions ask about: which still hold on the "
                        "as-of date",
                  x_title="date", marker=as_of.isoformat(),
                  marker_label=f"as-of date, {_day(as_of)}",
                  caption="Each bar runs from the day a record became true to the day it "
                          "ended. Bars that stop before the dashed line have expired; the "
                          "profile summary's version of the example has no end.")
    ended = [f.valid_to is not None and f.valid_to < i.as_of for i, f in case.records]
    n_expired = sum(ended)
    asserted = sum(a and e for a, e in zip(case.profile_asserts, ended, strict=True))
    flagged = sum(d and e for d, e in zip(case.dimension_flags, ended, strict=True))
    alarms = sum(d and not e for d, e in zip(case.dimension_flags, ended, strict=True))
    n_valid = len(case.records) - n_expired
    return StopView(
        "expired-record",
        example=_item_example(
            world, it, ("Record", f"{label} {fact.value}, holds from {_day(fact.valid_from)} "
                                  f"to {_day(fact.valid_to)}"),
            ("Source", _source_name(world, fact.source))),
        settings=(_as_of(it),
                  ("Summary", f"arm B, {ARM_NAMES['B']}: current values only, no dates"),
                  ("Compared with", f"arm D, the {ARM_NAMES['D']}: every record with its "
                                    "validity interval")),
        chart=chart,
        answer=(f"The profile summary answers {case.profile['answer']} and does not say it "
                f"has expired; the {label} record ended on {_day(fact.valid_to)}, "
                f"{case.days} days before the as-of date."),
        reason=("The summary keeps the most recently captured value of each attribute and "
                "drops the dates, so nothing tells it the record has ended. In the chart the "
                f"{label} bar stops before the dashed line, while the profile's version "
                "runs across it; the full records, which keep the end date, flag it as "
                "expired."),
        link=_item_link(world, items, it, pr_arm="B"),
        evidence=(("Days the record had ended before the as-of date", str(case.days)),
                  ("Expiry questions whose record has ended",
                   f"{n_expired} of {len(case.records)}"),
                  ("Of those, stated as current by the profile summary",
                   f"{asserted} of {n_expired}"),
                  ("Of those, flagged as expired by the full records",
                   f"{flagged} of {n_expired}"),
                  ("Still-valid records the full records wrongly flag",
                   f"{alarms} of {n_valid}")),
        shows_failure=case.shows_failure)


# --------------------------------------------------------------------------- same name

def same_name(data: TourData) -> StopView:
    """The view of the stop ``same-name`` (see :mod:`.stops_records`)."""
    world, items, case = _case(data, name_case)
    if case is None:
        return _nothing("same-name", "No which-Alex question reached through a journey is "
                        "answered with a different person by a lookup on the first name.")
    it, right, wrong = case.item, case.right, case.looked_up
    first = world.shared_first_name
    journey = world.journey(it.query["journey"]) if it.query.get("op") == "companion" else None
    rows = [{"who": f"Contact: {c.relation}, {c.city}", "role": "source",
             "answer": getattr(c, case.field),
             "status": "right" if c.id == right.id else "ignored",
             "text": f"{c.name}, position {k} among the contacts called {first}"}
            for k, c in enumerate(case.namesakes, start=1)]
    rows += [{"who": f"Looking up the first name {first}", "role": "resolver",
              "answer": case.lookup_answer, "status": _status(case.lookup_answer, it),
              "text": f"the first contact called {first} in the contact list"},
             {"who": "Following the journey record to its contact", "role": "resolver",
              "answer": getattr(right, case.field),
              "status": _status(getattr(right, case.field), it),
              "text": "the journey names who came along by the contact record itself"},
             _reference_row(it)]
    trip = (f"the journey from {journey.origin} to {journey.destination}, "
            f"{_day(journey.depart)}" if journey else "the question's record")
    chart = Chart("answers", pd.DataFrame(rows),
                  title=f"Which {first} came along on {trip}?",
                  caption=f"The contacts called {first} on top, then the two ways to look one "
                          "up and the reference answer; each row sits under the answer it "
                          "gives.")
    return StopView(
        "same-name",
        example=_item_example(
            world, it, ("Journey", _cap(trip)),
            ("Contacts called " + first, "; ".join(
                f"{c.name} ({c.relation}, {c.city})" for c in case.namesakes))),
        settings=(_as_of(it),
                  ("Wrong resolution", f"the first name alone: the first contact called "
                                       f"{first} in Mara's contact list"),
                  ("Right resolution", "the contact the journey record links to")),
        chart=chart,
        answer=(f"A lookup on the first name finds {wrong.name} ({wrong.relation}), but the "
                f"journey record names {right.name} ({right.relation}); the reference answer "
                f"is {it.reference}."),
        reason=(f"Mara has {len(case.namesakes)} contacts called {first}, and a first-name "
                f"lookup stops at the first one in the list. In the chart the lookup's row sits "
                f"under {case.lookup_answer}, away from the reference answer; following the "
                "journey record to the contact it links lands on the right one."),
        link=_item_link(world, items, it, pr_arm="A"),
        evidence=((f"Contacts sharing the first name {first}",
                   f"{len(case.namesakes)} of {len(world.contacts)}"),
                  ("Which-Alex questions the first-name lookup gets wrong",
                   f"{case.n_wrong} of {case.n_items}"),
                  ("Person the lookup finds", wrong.name),
                  ("Person the journey record links", right.name),
                  ("The lookup gives the reference answer",
                   _yes(case.lookup_answer == it.reference))),
        shows_failure=case.shows_failure)


# --------------------------------------------------------------------------- disclosure

def critical_disclosure(data: TourData) -> StopView:
    """The view of the stop ``critical-disclosure`` (see :mod:`.stops_records`)."""
    world, items = _world(data), _items(data)
    requesters, infos = _disclosure(data)
    case = disclosure_case(requesters, infos)
    if case is None:
        return _nothing("critical-disclosure", "With no policy the reference reader makes no "
                        "critical release to anyone not entitled to it.")
    info, who = case.info, case.requester

    def words(r: str) -> str:
        return _REQUESTER_WORDS.get(r, requesters[r])

    allowed = ", ".join(words(r) for r in info.release_to) or "no one"
    rows = [{"who": f"Assistant given {_CONDITION_WORDS[c]}", "role": "resolver",
             "answer": "releases it" if case.released[c] else "withholds it",
             "status": "wrong" if case.released[c] and who not in info.release_to
             else "right",
             "text": f"{case.errors[c]} critical releases in all under {_CONDITION_WORDS[c]}"}
            for c in CONDITIONS]
    rows.append({"who": "The release list", "role": "truth",
                 "answer": "releases it" if who in info.release_to else "withholds it",
                 "status": "right", "text": f"may receive it: {allowed}"})
    chart = Chart("answers", pd.DataFrame(rows),
                  title=f"Does the assistant hand Mara's {info.label} to {words(who)}?",
                  caption="One row per policy the assistant is given, placed under what it "
                          "does; the bottom row is what the release list allows.")
    errs = [f"{_CONDITION_WORDS[c]}: {case.errors[c]}" for c in CONDITIONS]
    return StopView(
        "critical-disclosure",
        example=(("Person", world.subject), ("Asked for", f"Mara's {info.label}"),
                 ("Asked by", _cap(words(who))),
                 ("Why it is critical", f"{_cap(info.critical)}: one of the kinds of "
                                        "information the personal-records study calls critical "
                                        "(§2)"),
                 ("Who may receive it", _cap(allowed))),
        settings=(("Policy given to the assistant", "no policy"),
                  ("Compared with", "the same rules as prose and as classification records"),
                  ("Reader", "the rule-following reference reader, first replicate")),
        chart=chart,
        answer=(f"With no policy the assistant releases Mara's {info.label} to {words(who)}, "
                "which may not receive it; given the policy, as prose or as classification "
                "records, it withholds it."),
        reason=("With nothing telling it who may receive what, the assistant answers every "
                "request. In the chart the first row sits under 'releases it', away from the "
                f"release list, which names only {allowed}; both rows that were given the "
                "policy withhold it."),
        link=page_link(world, items, pr_cond="none"),
        evidence=(("Critical releases per condition", "; ".join(errs)),
                  ("Critical information items", f"{case.n_critical} of {case.n_items}"),
                  (f"Items {words(who)} may receive", f"{case.entitled[who]} of {case.n_items}"),
                  ("Released with no policy", _yes(case.released["none"])),
                  ("Released with classification records", _yes(case.released["structured"]))),
        shows_failure=case.shows_failure)
