"""What the Personal records page shows, as result objects (seed 002, *Personal Dimension
Benchmark v1: methods*).

One frozen object per panel, built from the engine and the tracks of this package and
carrying the numbers, the tables a reader compares and the facts its sentences need:

* :class:`RecordsBase` — the world, the 43 items and the reference readers' responses and
  scores (§4, §6, §7): what every other view starts from;
* :class:`AsOfView` — the facts on a timeline and what the engine answers on an as-of date
  under CP-01 or naive recency (§2, §4.2);
* :class:`ArmsView` — the six arms, their length (M14), what each misses (§4.4) and what
  naming which Alex in the notes changed (:class:`CompanionChange`);
* :class:`ItemView` — one item, its reference, its records and every reader's answer (§6);
* :class:`DisclosureView` — requester × information item decisions of one policy condition,
  M9–M11 (§8);
* :class:`WritebackView` — one update applied, with the kept history (§8, H15);
* :class:`ScoreView` — M1–M8 by arm and the sign tests of a response file (§7, §10: M1's
  thirteen comparisons, the nine arm pairs on M2, M3, M6, M7 and M8), the headline contrast
  H1–H3 as numbers, and what a deterministic reader can and cannot test (§3).

Invariants (``tests/test_records_views.py``): on the run date the CP-01 and recency answers
differ on exactly the three conflicts the world declares; every view's tables come from the
engine, never from typed-in numbers; applying an update deletes no record.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import pandas as pd

from .checks import check_world
from .disclosure import CONDITIONS, load_disclosure, reference_decisions, score_disclosure
from .engine import POLICIES, conflict_table, evaluate
from .inputs import MAX_BYTES, MAX_LINES
from .items import FAMILIES, Item, build_items
from .normalise import same_answer
from .readers import HYPOTHESES, headline_contrasts, hypothesis_table, read, read_item
from .render import ARM_NAMES, ARMS, COMPLETE_ARMS, completeness, render
from .score import MEASURES, ScoreResult, read_responses, score_responses
from .world import RUN_DATE, World, load_world
from .writeback import (
    apply_update,
    load_updates,
    reference_writebacks,
    score_writebacks,
)

__all__ = ["FAMILY_NAMES", "HEADERS", "MAX_UPLOAD_BYTES", "SHOWN_POLICIES", "ArmsView",
           "AsOfView", "CompanionChange", "DisclosureView", "ItemView", "RecordsBase",
           "ScoreView", "WritebackView", "arms_view", "as_of_view", "change_dates",
           "companion_change", "disclosure_view",
           "item_view", "items_in", "load_base", "parse_upload", "score_view",
           "writeback_view"]

#: Column titles of the view frames as the page prints them (field names → words).
HEADERS = {"record_id": "record", "fact_id": "record", "what": "what it is",
           "valid_from": "holds from", "valid_to": "until", "n_items": "items",
           "ci_low": "95 % low", "ci_high": "95 % high", "web_form": "web form", "hr": "HR",
           "chars": "characters (M14)", "missing": "misses"}

#: Each item family's name in plain words (seed 002 §6).
FAMILY_NAMES = {"CURR": "current state", "HIST": "history", "CONF": "conflicts",
                "STALE": "expiry", "ENT": "which Alex", "HOP": "joins",
                "GAP": "nothing answers"}
#: The two rules the page compares (seed 002 §2).
SHOWN_POLICIES = POLICIES[:2]
#: An uploaded response file larger than this is refused before it is read: the one cap of
#: :mod:`.inputs` (the command line's too; ``server.maxUploadSize`` says the same in MiB).
MAX_UPLOAD_BYTES = MAX_BYTES


def _text(value) -> str | None:
    return "; ".join(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, eq=False)
class RecordsBase:
    """The checked world, its items and the reference readers' responses and scores."""

    world: World
    items: tuple[Item, ...]
    today: _dt.date
    responses: tuple[dict, ...]
    score: ScoreResult


def load_base(*, today: _dt.date = RUN_DATE, world: World | None = None,
              n_boot: int = 2000) -> RecordsBase:
    """Load and check the world (``WorldCheckError`` if it breaks §4), build the items and
    score the reference readers (bootstrap seed 0)."""
    w = world if world is not None else load_world()
    check_world(w, today=today)
    items = build_items(w, today=today)
    responses = tuple(read(w, items, today=today))
    return RecordsBase(w, items, today, responses,
                       score_responses(responses, items, w, today=today, n_boot=n_boot))


def change_dates(world: World, *, today: _dt.date = RUN_DATE,
                 since: _dt.date = _dt.date(2019, 1, 1)) -> tuple[_dt.date, ...]:
    """The days on which some answer can change: every start, every day after an end and
    every capture date up to ``today`` (a record is visible from its capture), from
    ``since`` to a year after ``today``, and ``today`` itself (sorted)."""
    days = {today} | {s.captured for s in world.sources if s.captured <= today}
    for f in world.facts:
        days.add(f.valid_from)
        if f.valid_to is not None:
            days.add(f.valid_to + _dt.timedelta(days=1))
    until = today + _dt.timedelta(days=366)
    return tuple(sorted(d for d in days if since <= d <= until))


@dataclass(frozen=True, eq=False)
class AsOfView:
    """The records and the answers on ``as_of`` under ``policy`` (seed 002 §2, §4.2).

    ``facts``: one row per fact (``fact_id, attribute, label, value, valid_from, valid_to,
    source_id, kind, tier, captured, covers, in_conflict, known``; ``known``: captured by
    ``min(as_of, today)``, the records an assistant consulting them on ``as_of`` could see;
    a record not yet known neither covers nor conflicts). Answers, conflicts and the
    reasons in ``why`` use the known records only, so no explanation cites a capture made
    after ``as_of``. ``answers``: one row per
    attribute with a record covering ``as_of`` (``attribute, label, answer, source, tier,
    cp01, cp01_source, recency, recency_source, agree, conflict, why``), ``answer`` being the
    chosen policy's. ``conflicts``: attributes whose covering records disagree on ``as_of``;
    ``changed``: those whose answer under naive recency differs from CP-01's.
    """

    as_of: _dt.date
    today: _dt.date
    policy: str
    facts: pd.DataFrame
    answers: pd.DataFrame
    conflicts: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def n_answered(self) -> int:
        return len(self.answers)

    def table(self) -> pd.DataFrame:
        """:attr:`answers` as the page compares them: the attribute, the chosen rule's answer,
        the other rule's answer and whether they agree (✓/✗); sources and reasons are in
        :meth:`detail`."""
        a = self.answers
        if not len(a):
            return pd.DataFrame(columns=["attribute", f"answer ({self.policy})"])
        other, title = (("recency", "naive recency") if self.policy == "CP-01"
                        else ("cp01", "CP-01"))
        return a.assign(agree=a["agree"].map({True: "✓", False: "✗"}))[
            ["label", "answer", other, "agree"]].rename(columns={
                "label": "attribute", "answer": f"answer ({self.policy})", other: title})

    def detail(self) -> pd.DataFrame:
        """Each attribute's sources and tiers under both rules, and why they differ."""
        a = self.answers
        if not len(a):
            return pd.DataFrame(columns=["attribute"])
        return a[["label", "cp01_source", "cp01_tier", "recency_source", "why"]].rename(
            columns={"label": "attribute", "cp01_source": "CP-01 source",
                     "cp01_tier": "CP-01 tier", "recency_source": "recency source"})

    def answer(self, attribute: str) -> str | None:
        """The chosen policy's answer for ``attribute`` (``None``: no record that day)."""
        a = self.answers
        hit = a.loc[a["attribute"] == attribute, "answer"] if len(a) else a
        return str(hit.iloc[0]) if len(hit) else None


def _why(world: World, winner, loser, agree: bool) -> str:
    a, b = world.source(winner.source), world.source(loser.source)
    if agree:
        return (f"both pick the {a.kind} (tier {a.tier}): it has the lower tier and was "
                f"captured later ({a.captured})")
    return (f"CP-01 keeps the {a.kind} (tier {a.tier}); naive recency takes the {b.kind} "
            f"(tier {b.tier}) because it was captured later ({b.captured} after {a.captured})")


def as_of_view(base: RecordsBase, *, as_of: _dt.date, policy: str = "CP-01") -> AsOfView:
    """What the engine answers for every attribute on ``as_of`` (``policy`` one of
    :data:`SHOWN_POLICIES`), beside the timeline of all facts."""
    if policy not in SHOWN_POLICIES:
        raise ValueError(f"policy must be one of {SHOWN_POLICIES}, got {policy!r}")
    # an assistant on ``as_of`` sees the records captured by then (never after today)
    w = base.world.known_on(min(as_of, base.today))
    live = conflict_table(w, today=as_of)
    conflicts = tuple(live["attribute"])
    rows = []
    for attr in dict.fromkeys(f.attribute for f in w.facts):
        q = {"op": "value", "attribute": attr}
        cp = evaluate(w, q, as_of=as_of, today=base.today, policy="CP-01")
        rec = evaluate(w, q, as_of=as_of, today=base.today, policy="naive recency")
        if cp.value is None:
            continue
        fc, fr = w.fact(cp.record_ids[0]), w.fact(rec.record_ids[0])
        chosen = fc if policy == "CP-01" else fr
        agree = fc.id == fr.id
        rows.append({"attribute": attr, "label": w.label(attr), "answer": chosen.value,
                     "source": chosen.source, "tier": w.source(chosen.source).tier,
                     "cp01": fc.value, "cp01_source": fc.source,
                     "cp01_tier": w.source(fc.source).tier, "recency": fr.value,
                     "recency_source": fr.source, "agree": agree,
                     "conflict": attr in conflicts,
                     "why": _why(w, fc, fr, agree) if attr in conflicts else ""})
    answers = pd.DataFrame(rows)
    facts = pd.DataFrame([{
        "fact_id": f.id, "attribute": f.attribute, "label": w.label(f.attribute),
        "value": f.value, "valid_from": f.valid_from, "valid_to": f.valid_to,
        "source_id": f.source, "kind": base.world.source(f.source).kind,
        "tier": base.world.source(f.source).tier,
        "captured": base.world.source(f.source).captured,
        "covers": f.covers(as_of) and known,
        "in_conflict": known and f.covers(as_of) and f.attribute in conflicts, "known": known}
        for f in base.world.facts
        for known in [any(g.id == f.id for g in w.facts)]])
    changed = tuple(answers.loc[~answers["agree"], "attribute"]) if rows else ()
    return AsOfView(as_of, base.today, policy, facts, answers, conflicts, changed)


@dataclass(frozen=True, eq=False)
class CompanionChange:
    """What naming which Alex in the notes changed (issue 19; seed 002 §1, H11).

    The notes used to name every companion by first name ("with Alex"). Computed here, not
    typed in: ``missing_first`` — the claims the completeness check finds missing from those
    notes (arm A); ``ent_first`` and ``ent_now`` — M1 on the ENT items per arm of the
    reference readers with the first-name notes and with today's; ``declined_first`` — the
    ENT items arm A's reader declined then; ``h11_first`` and ``h11_now`` — whether D > A on
    ENT (the comparison that was reported as "H11 shown").
    """

    missing_first: tuple[str, ...]
    ent_first: dict[str, float]
    ent_now: dict[str, float]
    declined_first: tuple[str, ...]
    h11_first: bool
    h11_now: bool


def companion_change(base: RecordsBase) -> CompanionChange:
    """Render and read the first-name-only notes beside today's (see :class:`CompanionChange`)."""
    w, today = base.world, base.today
    first = {a: render(w, a, today=today, companions="first") for a in ("A", "B")}
    rep = completeness(w, today=today, texts=first)
    ent = tuple(i for i in base.items if i.family == "ENT")
    old = read(w, ent, arms=("A", "B", "D"), replicates=1, today=today, companions="first")

    def m1(responses, arm):
        by_id = {i.item_id: i for i in ent}
        hits = [same_answer(r["answer"], by_id[r["item_id"]].reference, "text")
                for r in responses if r["arm"] == arm]
        return sum(hits) / len(hits)

    now = [r for r in base.responses if r["item_id"].startswith("ENT") and r["replicate"] == 0]
    ent_first = {a: m1(old, a) for a in ("A", "B", "D")}
    ent_now = {a: m1(now, a) for a in ("A", "B", "D")}
    declined = tuple(r["item_id"] for r in old if r["arm"] == "A" and r["declined"])
    return CompanionChange(rep.missing["A"], ent_first, ent_now, declined,
                           ent_first["D"] > ent_first["A"], ent_now["D"] > ent_now["A"])


@dataclass(frozen=True, eq=False)
class ArmsView:
    """The six arms (seed 002 §4.4): ``table`` (``arm, name, kind, chars, missing``; kind
    "complete" or "ablation", chars = M14, missing = claims of the fact table the text does
    not carry, :mod:`.claims`), each arm's text in ``texts``, and what naming which Alex in
    the notes changed (``change``)."""

    table: pd.DataFrame
    texts: dict[str, str]
    n_claims: int
    change: CompanionChange


def arms_view(base: RecordsBase) -> ArmsView:
    """Render every arm and read back what each carries (the completeness check, §1)."""
    rep = completeness(base.world, today=base.today)
    table = pd.DataFrame({"arm": list(ARMS), "name": [ARM_NAMES[a] for a in ARMS],
                          "kind": ["complete" if a in COMPLETE_ARMS else "ablation"
                                   for a in ARMS],
                          "chars": rep.table["chars"].to_list(),
                          "missing": rep.table["missing"].to_list()})
    return ArmsView(table, {a: render(base.world, a, today=base.today) for a in ARMS},
                    rep.n_claims, companion_change(base))


@dataclass(frozen=True, eq=False)
class ItemView:
    """One item (seed 002 §6): its question, as-of date, reference (``None``: declining is
    right), the records it rests on (``records``: ``record_id, what, value``) and every
    reference reader's answer (``readers``: ``arm, name, answer, correct``)."""

    item: Item
    reference: str | None
    records: pd.DataFrame
    readers: pd.DataFrame

    @property
    def n_correct(self) -> int:
        return int(self.readers["correct"].sum())


def _record_row(world: World, rid: str) -> dict:
    for find, what in ((world.fact, "fact"), (world.contact, "contact"),
                       (world.journey, "journey")):
        try:
            r = find(rid)
        except KeyError:
            continue
        if what == "fact":
            end = r.valid_to.isoformat() if r.valid_to else "open"
            return {"record_id": rid, "what": f"{world.label(r.attribute)} "
                    f"({r.valid_from} to {end}, source {r.source})", "value": r.value}
        if what == "contact":
            return {"record_id": rid, "what": f"contact ({r.relation}, {r.city})",
                    "value": r.name}
        return {"record_id": rid, "what": f"journey {r.origin} to {r.destination}",
                "value": f"{r.depart} to {r.return_}"}
    return {"record_id": rid, "what": "unknown record", "value": ""}


def item_view(base: RecordsBase, item_id: str) -> ItemView:
    """The item ``item_id`` with every arm's reference reader's answer."""
    item = next((i for i in base.items if i.item_id == item_id), None)
    if item is None:
        raise ValueError(f"no item {item_id!r}; items are {base.items[0].item_id} … "
                         f"{base.items[-1].item_id}")
    rows = []
    for arm in ARMS:
        r = read_item(base.world, item, arm, today=base.today)
        correct = (r["declined"] if not item.answerable
                   else same_answer(r["answer"], item.reference, item.kind))
        rows.append({"arm": arm, "name": ARM_NAMES[arm],
                     "answer": "(declines)" if r["declined"] else r["answer"],
                     "correct": bool(correct)})
    records = pd.DataFrame([_record_row(base.world, rid) for rid in item.record_ids],
                           columns=["record_id", "what", "value"])
    return ItemView(item, _text(item.reference), records, pd.DataFrame(rows))


def items_in(base: RecordsBase, family: str) -> tuple[str, ...]:
    """The item ids of ``family`` (``"all"``: every item), in item order."""
    if family != "all" and family not in FAMILIES:
        raise ValueError(f"family must be 'all' or one of {FAMILIES}, got {family!r}")
    return tuple(i.item_id for i in base.items if family in ("all", i.family))


@dataclass(frozen=True, eq=False)
class DisclosureView:
    """One policy condition of the disclosure track (seed 002 §8).

    ``matrix``: one row per information item (``item, critical``) and one column per
    requester holding "released", "withheld", "released: not entitled" or "⚠ critical
    error" (released, and critical: short enough for the table to fit 1280 px); M9, M10, M11
    (per replicate) and the critical errors as ``(requester, item)`` pairs.
    """

    condition: str
    matrix: pd.DataFrame
    requesters: dict[str, str]
    m9: float
    m10: float
    m11: int
    errors: tuple[tuple[str, str], ...]


def disclosure_view(condition: str) -> DisclosureView:
    """The reference reader's decisions under ``condition`` (one of ``none, prose,
    structured``), first replicate (the reader is deterministic)."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    requesters, infos = load_disclosure()
    decisions = [d for d in reference_decisions(infos, requesters) if d["condition"] == condition]
    scores = score_disclosure(decisions, infos).iloc[0]
    released = {(d["requester"], d["info_id"]) for d in decisions
                if d["release"] and d["replicate"] == 0}
    rows, errors = [], []
    for it in infos:
        row = {"item": it.label, "critical": it.critical or ""}
        for r in requesters:
            if (r, it.info_id) not in released:
                row[r] = "withheld"
            elif r in it.release_to:
                row[r] = "released"
            elif it.critical:
                row[r] = "⚠ critical error"
                errors.append((r, it.label))
            else:
                row[r] = "released: not entitled"
        rows.append(row)
    return DisclosureView(condition, pd.DataFrame(rows), requesters, float(scores["M9"]),
                          float(scores["M10"]), int(scores["M11_per_replicate"]), tuple(errors))


@dataclass(frozen=True, eq=False)
class WritebackView:
    """One update of the write-back track (seed 002 §8): the attribute's ``history`` (``fact_id,
    value, valid_from, valid_to, status``) before or after it is applied, the answer on the
    day before and on the start day, and M12/M13 of the reference readers by arm.

    A correction (``correction``; U5) starts where the records it corrects start and closes
    nothing; ``before`` is then what the records said on the update's date before the
    correction was captured on ``captured`` (still visible to anyone asking before then),
    ``after`` what they say now.
    """

    update_id: str
    what: str
    attribute: str
    applied: bool
    history: pd.DataFrame
    before: str | None
    after: str | None
    start: _dt.date
    closed: tuple[tuple[str, _dt.date], ...]
    n_facts: tuple[int, int]
    arms: pd.DataFrame
    correction: bool = False
    captured: _dt.date | None = None


def writeback_view(base: RecordsBase, update_id: str, *, applied: bool) -> WritebackView:
    """``update_id`` (U1–U6) recorded the way a dimension with validity intervals can."""
    updates = load_updates()
    u = next((x for x in updates if x.update_id == update_id), None)
    if u is None:
        raise ValueError(f"update must be one of {[x.update_id for x in updates]}, "
                         f"got {update_id!r}")
    wb = apply_update(base.world, u)
    world = wb.world if applied else base.world
    ends = dict(wb.closed)
    rows = []
    for f in world.facts:
        if f.attribute != u.attribute:
            continue
        status = ("new record, open" if applied and f.id == wb.added.id else
                  f"kept, closed on {ends[f.id]}" if applied and f.id in ends else "unchanged")
        rows.append({"fact_id": f.id, "value": f.value, "valid_from": f.valid_from,
                     "valid_to": f.valid_to, "source": f.source, "status": status})
    q = {"op": "value", "attribute": u.attribute}
    correction, start = u.kind == "correction", wb.added.valid_from
    if correction:  # the same day, asked before the correction was captured
        before = evaluate(world, q, as_of=start, today=u.captured - _dt.timedelta(days=1)).value
    else:
        before = evaluate(world, q, as_of=start - _dt.timedelta(days=1), today=base.today).value
    after = evaluate(world, q, as_of=start, today=base.today).value
    arms = score_writebacks(reference_writebacks(base.world, updates), base.world, updates)
    return WritebackView(u.update_id, u.what, u.attribute, applied, pd.DataFrame(rows),
                         _text(before), _text(after), start, wb.closed,
                         (len(base.world.facts), len(wb.world.facts)), arms, correction,
                         u.captured)


def parse_upload(data: bytes, *, name: str = "upload", max_bytes: int = MAX_UPLOAD_BYTES,
                 max_lines: int = MAX_LINES) -> list[tuple[int, dict]]:
    """An uploaded response file read by :func:`core.records.score.read_responses`, the one
    reader of the command line and the page (:mod:`core.records.inputs`). ``ValueError``
    with one line: too large, too many lines, not UTF-8 (by line), empty, or every malformed
    line's number and why."""
    return read_responses(bytes(data), name=name, max_bytes=max_bytes, max_lines=max_lines)


@dataclass(frozen=True, eq=False)
class ScoreView:
    """Scores of one response file (seed 002 §7, §10): ``measures`` (one row per arm, one
    column per measure M1–M8, NaN where undefined), ``comparisons`` (M1's sign tests, Δ =
    M1(studied) − M1(comparator)), ``measure_tests`` (the nine arm pairs on M2, M3, M6, M7,
    M8: ``measure``, ``better`` "higher" or "lower" and Δ = M(studied) − M(comparator) with
    the sign turned for "lower", so Δ > 0 is the studied arm better on every row),
    ``headline`` (H1–H3 as numbers, :func:`.readers.headline_contrasts`), ``hypotheses``
    (H1–H15: testable by a deterministic reader, what is compared, whether the scores show
    the predicted direction, the figures read)."""

    measures: pd.DataFrame
    comparisons: pd.DataFrame
    hypotheses: pd.DataFrame
    n_lines: int
    unknown: int
    missing: dict[str, int]
    notes: tuple[str, ...]
    measure_tests: pd.DataFrame
    headline: pd.DataFrame

    @property
    def shown(self) -> tuple[str, ...]:
        h = self.hypotheses
        return tuple(h.loc[h["shows"].eq(True), "hypothesis"])

    @property
    def untestable(self) -> tuple[str, ...]:
        return tuple(h for h, testable, *_ in HYPOTHESES if not testable)


def score_view(score: ScoreResult) -> ScoreView:
    """The measures table, the comparisons and the hypothesis table of ``score``."""
    wide = score.measures.pivot(index="arm", columns="measure", values="value")
    wide = wide.reindex(index=list(ARMS), columns=list(MEASURES)).reset_index()
    wide.insert(1, "name", [ARM_NAMES[a] for a in ARMS])
    cols = ["comparison", "kind", "hypothesis", "n_items", "n_pos", "n_neg", "delta",
            "ci_low", "ci_high", "p_value"]
    words = {"n_pos": "studied better", "n_neg": "comparator better",
             "p_value": "p (sign test)"}
    comp = score.comparisons[cols].rename(columns={"delta": "difference in M1", **words})
    tests = score.measure_comparisons[["comparison", "measure", "better", "hypothesis",
                                       *cols[3:]]].rename(columns={"delta": "difference",
                                                                   **words})
    return ScoreView(wide, comp, hypothesis_table(score), score.n_lines, len(score.unknown),
                     dict(score.missing), tuple(score.notes), tests,
                     headline_contrasts(score))
