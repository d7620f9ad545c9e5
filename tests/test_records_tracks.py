"""Seed 002's two tracks: disclosure (M9–M11) and write-back (M12–M13)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from core.records.disclosure import (
    CONDITIONS,
    load_disclosure,
    parse_prose_policy,
    prose_policy,
    reference_decisions,
    score_disclosure,
    structured_policy,
)
from core.records.engine import evaluate
from core.records.world import load_world
from core.records.writeback import (
    apply_update,
    load_updates,
    reference_writebacks,
    score_writebacks,
)

W = load_world()
REQ, INFO = load_disclosure()
UPDATES = load_updates()


def test_twelve_items_three_requesters_36_decisions_per_condition_and_replicate():
    assert len(INFO) == 12 and list(REQ) == ["sister", "hr", "web_form"]
    decisions = reference_decisions(INFO, REQ, replicates=2)
    assert len(decisions) == 3 * 2 * 36
    assert {d["condition"] for d in decisions} == set(CONDITIONS)


def test_prose_states_the_same_rules_as_the_records():
    text = prose_policy(INFO, REQ)
    assert len(text.splitlines()) == 12
    rules = parse_prose_policy(text, INFO, REQ)
    assert rules == {r["info_id"]: set(r["release_to"]) for r in structured_policy(INFO)}


def test_a_prose_policy_missing_an_item_is_an_error():
    text = "\n".join(prose_policy(INFO, REQ).splitlines()[1:])
    with pytest.raises(ValueError, match="home address"):
        parse_prose_policy(text, INFO, REQ)


def test_disclosure_measures():
    table = score_disclosure(reference_decisions(INFO, REQ), INFO).set_index("condition")
    entitled = 2 * sum(len(i.release_to) for i in INFO)
    crit_wrong = 2 * sum(3 - len(i.release_to) for i in INFO if i.critical)
    assert table.loc["none", "M10"] == 1 and table.loc["none", "M9"] == entitled / 72
    assert table.loc["none", "M11"] == crit_wrong == 30
    assert table.loc["structured", ["M9", "M10", "M11"]].tolist() == [1, 1, 0]
    assert table.loc["prose", "M11"] == 0  # a deterministic reader: H14 cannot show


def test_the_sister_may_have_her_own_phone_number():
    """D11 is the sister's number: releasing it to her is no third party's details reaching
    someone not entitled (seed 002 §2), so it is not a critical error; to the web form it is."""
    d11 = next(i for i in INFO if i.info_id == "D11")
    assert set(d11.release_to) == {"sister", "hr"}
    d = [{"condition": "structured", "requester": r, "info_id": "D11", "replicate": 0,
          "release": True} for r in ("sister", "web_form")]
    assert score_disclosure(d, INFO).iloc[0]["M11"] == 1  # the web form's release only


def test_one_critical_release_is_counted():
    d = [{"condition": "structured", "requester": "web_form", "info_id": "D04", "replicate": 0,
          "release": True},
         {"condition": "structured", "requester": "hr", "info_id": "D04", "replicate": 0,
          "release": False}]
    row = score_disclosure(d, INFO).iloc[0]
    assert (row["M9"], row["M10"], row["M11"]) == (0.0, 0.0, 1)


@pytest.mark.parametrize("uid, closes, end", [
    ("U1", {"F02", "F03"}, dt.date(2026, 9, 19)),
    ("U2", {"F17"}, dt.date(2026, 3, 14)),  # already expired: its end date stays
    ("U3", {"F15", "F16"}, dt.date(2026, 9, 30)),
    ("U4", {"F04", "F05"}, dt.date(2026, 9, 9)),
    ("U6", {"F19"}, dt.date(2026, 6, 30)),
])
def test_an_update_adds_closes_and_deletes_nothing(uid, closes, end):
    u = next(x for x in UPDATES if x.update_id == uid)
    wb = apply_update(W, u)
    assert {i for i, _ in wb.closed} == closes and {e for _, e in wb.closed} == {end}
    assert len(wb.world.facts) == len(W.facts) + 1
    assert {f.id for f in W.facts} < {f.id for f in wb.world.facts}
    assert wb.added.valid_from == u.start and wb.added.valid_to is None
    q = {"op": "value", "attribute": u.attribute}
    before = u.start - dt.timedelta(days=1)
    if evaluate(W, q, as_of=before).value is not None:
        assert evaluate(wb.world, q, as_of=before) == evaluate(W, q, as_of=before)
    assert evaluate(wb.world, q, as_of=u.start).value == u.value


def test_a_correction_replaces_a_wrong_value_without_closing_it():
    """U5: the laboratory corrects the blood type. It never was A+, so nothing is closed on
    2026-09-05 (which would say it used to be A+): A- holds from F12's start, wins under
    CP-01 (tier 1, captured later), and before the correction was captured the records
    still say A+."""
    u = next(x for x in UPDATES if x.update_id == "U5")
    assert u.kind == "correction"
    wb = apply_update(W, u)
    assert wb.closed == () and wb.world.fact("F12").valid_to is None
    assert (wb.added.valid_from, wb.added.valid_to) == (W.fact("F12").valid_from, None)
    q = {"op": "value", "attribute": "blood_type"}
    for day in (dt.date(2000, 1, 1), dt.date(2026, 9, 5), dt.date(2026, 9, 6)):
        assert evaluate(wb.world, q, as_of=day).value == "A-"
        assert evaluate(wb.world, q, as_of=day, today=dt.date(2026, 9, 5)).value == "A+"
    assert len(wb.world.facts) == len(W.facts) + 1  # nothing deleted


@pytest.mark.parametrize("kind, captured, fragment", [
    ("email", "2026-09-06", "tier 1 or better"),  # less trusted than the lab report
    ("document scan", "2024-11-12", "captured after 2025-06-02"),  # not later
])
def test_a_correction_must_outrank_what_it_corrects(kind, captured, fragment):
    u = next(x for x in UPDATES if x.update_id == "U5")
    bad = dataclasses.replace(u, source_kind=kind, captured=dt.date.fromisoformat(captured))
    with pytest.raises(ValueError, match=fragment):
        apply_update(W, bad)


def test_history_survives_the_move():
    wb = apply_update(W, UPDATES[0])
    q = {"op": "value", "attribute": "home_address"}
    assert evaluate(wb.world, q, as_of=dt.date(2025, 6, 1)).value.startswith("7 Cotham")
    assert evaluate(wb.world, q, as_of=dt.date(2026, 9, 6)).value.startswith("14 Ashdown")


def test_only_the_dimension_supersedes_without_destroying():
    table = score_writebacks(reference_writebacks(W, UPDATES), W, UPDATES).set_index("arm")
    assert table.loc["D", ["M12", "M13"]].tolist() == [1, 1]
    assert table.loc["A", ["M12", "M13"]].tolist() == [0, 1]
    assert table.loc["C", ["M12", "M13"]].tolist() == [0, 0]
    assert (table["updates"] == 6).all()


def test_an_update_that_starts_too_early_is_refused():
    from dataclasses import replace
    with pytest.raises(ValueError, match="not after the records"):
        apply_update(W, replace(UPDATES[0], start=dt.date(2025, 12, 1)))
