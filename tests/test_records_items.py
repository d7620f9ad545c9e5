"""Seed 002's 43 items: families and counts of §6, answers from the engine, the checks."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from core.records.engine import evaluate
from core.records.items import FAMILY_COUNTS, ItemCheckError, build_items, load_templates
from core.records.world import load_world

W = load_world()
ITEMS = build_items(W)
BY_ID = {i.item_id: i for i in ITEMS}


def test_families_and_counts_follow_section_6():
    assert len(ITEMS) == 43
    assert Counter(i.family for i in ITEMS) == FAMILY_COUNTS == {
        "CURR": 8, "HIST": 8, "CONF": 6, "STALE": 5, "ENT": 5, "HOP": 6, "GAP": 5}
    assert sum(i.answerable for i in ITEMS) == 38
    assert all(i.reference is None for i in ITEMS if i.family == "GAP")


def test_references_are_the_engines_never_the_templates():
    for t in load_templates():
        assert set(t) == {"item_id", "family", "as_of", "kind", "question", "query"}
        item = BY_ID[t["item_id"]]
        assert item.reference == evaluate(W, t["query"], as_of=item.as_of).value


def test_exactly_three_conflict_items_separate_cp01_from_recency():
    conf = [i for i in ITEMS if i.family == "CONF" and i.query["op"] == "value"]
    differ = [i.item_id for i in conf
              if evaluate(W, i.query, policy="naive recency").value != i.reference]
    assert len(conf) == 5 and differ == ["CONF-1", "CONF-4", "CONF-5"]
    assert BY_ID["CONF-6"].reference == "S02"


def test_hist_items_carry_todays_value():
    hist = [i for i in ITEMS if i.family == "HIST"]
    assert all(i.present_value is not None and i.present_value != i.reference for i in hist)
    assert BY_ID["HIST-1"].present_value == "14 Ashdown Road, Manchester M20 4QP"
    assert BY_ID["HOP-1"].present_value == "Corvid Health Ltd"
    assert BY_ID["HOP-2"].present_value is None  # the laptop was bought at today's employer
    assert [i.stale for i in ITEMS if i.family == "STALE"] == [True, True, True, False, False]


@pytest.mark.parametrize("item_id, values", [
    # a live conflict today: CP-01 and recency each say a different value "holds today"
    ("HIST-1", ("14 Ashdown Road, Manchester M20 4QP", "41 Ashdown Road, Manchester M20 4QP")),
    ("HIST-5", ("£10.99", "£9.99")),
    ("HOP-4", ("14 Ashdown Road, Manchester M20 4QP", "41 Ashdown Road, Manchester M20 4QP")),
    ("HIST-3", ("Corvid Health Ltd",)),  # no conflict: every rule agrees
    ("HOP-2", ()),  # today's employer bought the laptop: nothing to overclaim
    ("CURR-1", ()),  # not past-dated
])
def test_present_values_hold_today_under_any_rule(item_id, values):
    item = BY_ID[item_id]
    assert item.present_values == values
    assert item.present_value == (values[0] if values else None)  # CP-01's comes first
    for policy in ("CP-01", "naive recency"):
        now = evaluate(W, {"op": "value", "attribute": item.query.get("attribute", "")},
                       policy=policy).value if values else None
        assert now is None or now in values


def _broken(mutate):
    t = copy.deepcopy(load_templates())
    mutate(t)
    return t


@pytest.mark.parametrize("mutate, fragment", [
    (lambda t: t.pop(), "family GAP: expected 5"),
    (lambda t: t[0]["query"].update(attribute="home_address"), "CURR-1: home_address has a live"),
    (lambda t: t[8].update(as_of="2026-09-01"), "HIST-1: not dated before a change"),
    (lambda t: t[16]["query"].update(attribute="diet"), "CONF-1: diet has no live conflict"),
    (lambda t: t[38]["query"].update(attribute="diet"), "GAP-1: a GAP item has an answer"),
    (lambda t: t[27]["query"]["where"].update(relation_contains="sister", first_name="Ingrid"),
     "ENT-1: does not resolve"),
    (lambda t: t[1]["query"].update(attribute="shoe_size"), "CURR-2: nothing in the dimension"),
])
def test_item_checks_fail_loudly(mutate, fragment):
    with pytest.raises(ItemCheckError, match=fragment):
        build_items(W, templates=_broken(mutate))
