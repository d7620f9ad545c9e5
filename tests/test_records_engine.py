"""The seed-002 ground-truth engine: as-of, CP-01 against naive recency, staleness, entities,
joins, gaps — hand-checked against the authored world."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.records.engine import (
    Answer,
    covering,
    evaluate,
    find_contacts,
    previous_value,
    resolve,
    status,
)
from core.records.world import load_world

W = load_world()
D = dt.date


@pytest.mark.parametrize("attribute, as_of, expected", [
    ("home_address", D(2025, 11, 30), "7 Cotham Grove, Bristol BS6 6AL"),  # last day inclusive
    ("home_address", D(2025, 12, 1), "14 Ashdown Road, Manchester M20 4QP"),  # CP-01: scan
    ("employer", D(2025, 1, 31), "Halden Analytics"),
    ("employer", D(2025, 2, 1), "Corvid Health Ltd"),
    ("streaming_price", D(2025, 12, 31), "£8.99"),
    ("streaming_price", D(2026, 1, 1), "£10.99"),
    ("employer", D(2019, 6, 1), None),  # before any employer: a gap
    ("national_insurance_number", D(2026, 9, 6), None),
])
def test_as_of_values(attribute, as_of, expected):
    assert evaluate(W, {"op": "value", "attribute": attribute}, as_of=as_of).value == expected


@pytest.mark.parametrize("attribute, cp01, recency", [
    ("home_address", "F02", "F03"), ("mobile_number", "F05", "F05"),
    ("monthly_salary", "F10", "F10"), ("blood_type", "F12", "F13"),
    ("streaming_price", "F15", "F16"),
])
def test_cp01_and_naive_recency(attribute, cp01, recency):
    facts = covering(W, attribute, as_of=D(2026, 9, 6))
    assert resolve(W, facts, policy="CP-01").id == cp01
    assert resolve(W, facts, policy="naive recency").id == recency


def test_cp01_within_a_tier_takes_the_later_capture():
    a, b = W.fact("F09"), W.fact("F10")  # both payslip scans, tier 1
    assert resolve(W, [b, a], policy="CP-01").id == "F10"
    assert resolve(W, [a, b], policy="CP-01").id == "F10"


def test_later_start_declines_a_tie():
    facts = covering(W, "blood_type", as_of=D(2026, 9, 6))
    assert resolve(W, facts, policy="later-start") is None
    mobile = covering(W, "mobile_number", as_of=D(2026, 9, 6))
    assert resolve(W, mobile, policy="later-start").id == "F05"


def test_a_resolved_conflict_names_its_policy():
    ans = evaluate(W, {"op": "value", "attribute": "blood_type"})
    assert ans == Answer("A+", ("F12",), "CP-01", conflict=True)
    assert evaluate(W, {"op": "value", "attribute": "diet"}).policy is None


@pytest.mark.parametrize("attribute, stale", [
    ("passport_number", True), ("health_insurance", True), ("handset_warranty", True),
    ("driving_licence", False), ("laptop_warranty", False)])
def test_staleness(attribute, stale):
    assert status(W, attribute).stale is stale
    # on the day before each expiry nothing is stale yet
    f = W.fact(status(W, attribute).record_ids[0])
    assert status(W, attribute, today=f.valid_to).stale is False


def test_three_alexes_resolve_only_with_a_second_field():
    assert len(find_contacts(W, {"first_name": "Alex"})) == 3
    assert evaluate(W, {"op": "contact", "where": {"first_name": "Alex"},
                        "field": "phone"}).value is None  # ambiguous
    assert evaluate(W, {"op": "contact", "where": {"first_name": "alex", "city": "Bristol"},
                        "field": "name"}).value == "Alex Chen"
    by_id = evaluate(W, {"op": "companion", "journey": "J04", "field": "name"})
    by_name = evaluate(W, {"op": "companion", "journey": "J04", "field": "name"},
                       companion="first_name")
    assert by_id.value == "Alex Morgan" and by_name.value is None
    unique = evaluate(W, {"op": "companion", "journey": "J03", "field": "name"},
                      companion="first_name")
    assert unique.value == "Ingrid Lindqvist"


def test_joins_and_previous_city():
    hop = evaluate(W, {"op": "value_on", "attribute": "employer",
                       "on": {"attribute": "handset", "field": "valid_from"}})
    assert hop.value == "Halden Analytics" and hop.record_ids == ("F20", "F06")
    ret = evaluate(W, {"op": "value_on", "attribute": "gp_practice",
                       "on": {"journey": "J04", "field": "return"}})
    assert ret.value == "Clifton Medical Centre, Bristol"
    prev = evaluate(W, {"op": "contacts_in_previous_city"})
    assert prev.value == ("Alex Chen", "Ingrid Lindqvist", "Priya Shah")
    assert previous_value(W, "home_address", policy="later-start").value.startswith("7 Cotham")


@pytest.mark.parametrize("query, fragment", [
    ({"op": "nope"}, "unknown query op"),
    ({"op": "contact", "where": {"shoe": 1}, "field": "name"}, "unknown contact filter"),
    ({"op": "value_on", "attribute": "employer", "on": {"journey": "J01", "field": "x"}},
     "'depart' or 'return'"),
])
def test_bad_queries_raise(query, fragment):
    with pytest.raises(ValueError, match=fragment):
        evaluate(W, query)


def test_bad_policy_raises():
    with pytest.raises(ValueError, match="policy must be one of"):
        evaluate(W, {"op": "value", "attribute": "diet"}, policy="newest")


def test_every_answer_is_a_field_of_a_record_it_names():
    from core.records.items import load_templates
    for t in load_templates():
        ans = evaluate(W, t["query"], as_of=dt.date.fromisoformat(t["as_of"] or "2026-09-06"))
        if ans.value is None:
            continue
        values = set(ans.value) if isinstance(ans.value, tuple) else {ans.value}
        fields = set()
        for rid in ans.record_ids:
            rec = {"F": W.fact, "C": W.contact, "J": W.journey}[rid[0]](rid)
            fields |= {str(v) for v in vars(rec).values()}
        assert values <= fields | {W.fact(r).source for r in ans.record_ids if r[0] == "F"}, t


@given(st.lists(st.sampled_from([f.id for f in W.facts]), min_size=1, max_size=8, unique=True))
def test_cp01_picks_the_lowest_tier_and_recency_the_latest_capture(ids):
    facts = [W.fact(i) for i in ids]
    tier = {f.id: W.source(f.source).tier for f in facts}
    captured = {f.id: W.source(f.source).captured for f in facts}
    cp01 = resolve(W, facts, policy="CP-01")
    assert tier[cp01.id] == min(tier.values())
    assert captured[cp01.id] == max(captured[f.id] for f in facts if tier[f.id] == tier[cp01.id])
    assert captured[resolve(W, facts, policy="naive recency").id] == max(captured.values())
    assert resolve(W, list(reversed(facts)), policy="CP-01") == cp01  # order does not matter


ASHDOWN = "Ashdown Road, Manchester M20 4QP"


@pytest.mark.parametrize("query, as_of, today, policy, value", [
    # F03 (the 41 Ashdown note) holds from 2025-12-01 but was captured on 2026-07-14
    ({"op": "value", "attribute": "home_address"}, D(2026, 1, 1), D(2026, 6, 1),
     "naive recency", f"14 {ASHDOWN}"),
    ({"op": "value", "attribute": "home_address"}, D(2026, 1, 1), D(2026, 7, 14),
     "naive recency", f"41 {ASHDOWN}"),
    # blood type: the lab report (S12) captured 2024-11-12, the note (S13) 2025-06-02
    ({"op": "value", "attribute": "blood_type"}, D(2020, 1, 1), D(2024, 1, 1), "CP-01", None),
    ({"op": "value", "attribute": "blood_type"}, D(2020, 1, 1), D(2025, 1, 1),
     "naive recency", "A+"),
    ({"op": "value", "attribute": "blood_type"}, D(2020, 1, 1), D(2026, 9, 6),
     "naive recency", "O+"),
    # Alex Morgan's contact record (S05) was captured on 2026-08-30
    ({"op": "contact", "where": {"first_name": "Alex", "relation_contains": "manager"},
      "field": "phone"}, D(2026, 8, 1), D(2026, 8, 1), "CP-01", None),
])
def test_a_record_is_visible_only_from_its_capture(query, as_of, today, policy, value):
    assert evaluate(W, query, as_of=as_of, today=today, policy=policy).value == value


def test_known_on_drops_later_captures_and_nothing_else():
    early = W.known_on(D(2026, 8, 1))
    later = {s.id for s in W.sources if s.captured > D(2026, 8, 1)}
    assert later == {"S05", "S10", "S24"}
    assert {f.source for f in early.facts}.isdisjoint(later) and early.journeys == ()
    assert len(early.facts) == len(W.facts) - sum(f.source in later for f in W.facts)
    assert W.known_on(D(2026, 9, 6)) is W  # everything is captured by the run date
