"""Seed 002's deterministic reference readers reproduce the directions H1–H15 predict, where a
deterministic reader can test them."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from core.records.items import build_items
from core.records.readers import HYPOTHESES, hypothesis_table, read, read_item
from core.records.score import score_responses
from core.records.world import load_world

W = load_world()
ITEMS = build_items(W)
BY_ID = {i.item_id: i for i in ITEMS}
RES = score_responses(read(W, ITEMS), ITEMS, W, n_boot=300)
FAM = RES.families.set_index(["arm", "family"])["M1"]


def test_the_dimension_reader_is_the_reference():
    assert RES.value("D", "M1") == 1 and RES.value("D", "M2") == 1
    assert RES.value("D", "M3") == 1 and RES.value("D", "M4") == 1
    assert RES.value("D", "M6") == 1 and RES.value("D", "M7") == 0


def test_readers_are_deterministic_and_follow_the_contract():
    responses = read(W, ITEMS)
    assert len(responses) == 43 * 6 * 2 == 516  # seed 002 §5's main grid
    assert responses == read(W, ITEMS)
    keys = {"item_id", "arm", "replicate", "answer", "cited_record_ids", "policy", "declined",
            "stale"}
    assert all(set(r) == keys for r in responses)
    assert all(r["declined"] == (r["answer"] is None) for r in responses)


@pytest.mark.parametrize("arm, item, answer", [
    ("A", "CONF-1", "41 Ashdown Road, Manchester M20 4QP"),  # recency, no policy
    ("B", "HIST-3", "Corvid Health Ltd"),  # the profile asserts today's employer
    ("C", "GAP-3", "Corvid Health Ltd"),  # no history: cannot see the gap in 2019
    ("E", "CONF-4", None),  # no provenance: a tie it cannot settle
    ("F", "STALE-1", None),  # the expired passport is gone
    ("A", "ENT-4", "Alex Chen"),  # the notes say which Alex ("with Alex Chen")
    ("C", "ENT-4", "Alex Chen"),  # companions by full name
    ("F", "CONF-5", "£10.99"),  # CP-01 without validity
])
def test_what_each_representation_allows(arm, item, answer):
    assert read_item(W, BY_ID[item], arm)["answer"] == answer


def test_directional_pattern():
    # H3: the profile lowers historical accuracy; H4: validity carries history, not CURR
    assert FAM["B", "HIST"] < FAM["A", "HIST"]
    assert FAM["F", "HIST"] < FAM["D", "HIST"] and FAM["F", "CURR"] == FAM["D", "CURR"]
    # H5: provenance carries conflict resolution and nothing else
    assert FAM["E", "CONF"] < FAM["D", "CONF"]
    assert all(FAM["E", f] == FAM["D", f] for f in ("CURR", "HIST", "STALE", "ENT", "HOP"))
    # H6: M2 undefined without identifiers; H7: only arms with the policy name it
    assert math.isnan(RES.value("C", "M2")) and math.isnan(RES.value("E", "M2"))
    assert [RES.value(a, "M3") for a in "ABCDEF"] == [0, 0, 0, 1, 0, 1]
    # H8: temporal structure lowers overclaiming; H9: end dates flag expiry
    assert max(RES.value(a, "M7") for a in "ADE") < min(RES.value(a, "M7") for a in "BCF")
    # H11 is out of a rule-following reader's reach: complete notes say which Alex too
    assert FAM["D", "ENT"] == FAM["A", "ENT"] == FAM["B", "ENT"] == 1
    # the headline: D beats every other arm on M1
    assert all(RES.value("D", "M1") > RES.value(a, "M1") for a in "ABCEF")
    # abstention follows history: arms that see the gap decline it
    assert [RES.value(a, "M4") for a in "ABCDEF"] == [1, 0.6, 0.6, 1, 1, 0.6]


def test_hypothesis_table_marks_what_readers_can_test():
    table = hypothesis_table(RES).set_index("hypothesis")
    assert list(table.index) == [f"H{k}" for k in range(1, 16)] == [h[0] for h in HYPOTHESES]
    untestable = set(table.index[~table["testable"]])
    assert untestable == {"H1", "H2", "H11", "H13", "H14"}
    shown = table.loc[table["testable"] & table["shows"].notna(), "shows"]
    assert shown.all() and len(shown) == 9  # H15 is the write-back track's
    assert table.loc["H15", "shows"] is None


def test_comparisons_point_the_predicted_way():
    c = RES.comparisons.set_index("comparison")
    assert c.loc["D vs F on HIST", "n_pos"] == 8 and c.loc["D vs F on HIST", "n_neg"] == 0
    assert c.loc["D vs F on HIST", "p_value"] == pytest.approx(2 / 2 ** 8)
    assert c.loc["D vs F on CURR", "delta"] == 0 and c.loc["D vs F on CURR", "p_value"] == 1
    assert c.loc["D vs E off CONF", "delta"] == 0
    assert c.loc["B vs A", "delta"] < 0 < c.loc["D vs A", "delta"]


def test_first_name_notes_leave_the_alexes_ambiguous():
    """The notes before issue 19 ("with Alex"): the reader declines ENT-2 and ENT-4, which
    is all of D's lead on ENT (the comparison once reported as H11 shown)."""
    ent = [i for i in ITEMS if i.family == "ENT"]
    old = {r["item_id"]: r["answer"] for r in read(W, ent, arms=("A",), replicates=1,
                                                    companions="first")}
    assert old == {"ENT-1": BY_ID["ENT-1"].reference, "ENT-2": None,
                   "ENT-3": BY_ID["ENT-3"].reference, "ENT-4": None,
                   "ENT-5": BY_ID["ENT-5"].reference}
    with pytest.raises(ValueError, match="'initials'"):
        read(W, ent, companions="initials")


@pytest.mark.parametrize("arm", ["A", "B", "C", "D", "E", "F"])
def test_readers_see_only_records_captured_by_today(arm):
    """Asked on 2026-06-01, before the 41 Ashdown note (S03) was captured on 2026-07-14,
    no reader can answer with it or cite it."""
    got = read_item(W, BY_ID["CONF-1"], arm, today=dt.date(2026, 6, 1))
    assert got["answer"] == "14 Ashdown Road, Manchester M20 4QP"
    assert "F03" not in got["cited_record_ids"]
