"""The six arms of seed 002 and the completeness check: A, B, D carry everything; C, E, F are
ablations that each miss the field class they remove."""

from __future__ import annotations

import pytest

import core.records.render as R
from core.records.world import load_world

W = load_world()
ASHDOWN = "Ashdown Road, Manchester M20 4QP"


def test_rendering_is_deterministic_and_m14_counts_characters():
    for arm in R.ARMS:
        assert R.render(W, arm) == R.render(load_world(), arm)
    chars = R.context_chars(W)
    assert chars == {arm: len(R.render(W, arm)) for arm in R.ARMS}
    assert chars["C"] == min(chars.values())  # the flat state is the shortest context
    assert chars["B"] > chars["A"]


def test_completeness_passes_for_a_b_d_and_fails_for_c_e_f():
    rep = R.check_completeness(W)
    table = rep.table.set_index("arm")
    assert list(table.loc[["A", "B", "D"], "missing"]) == [0, 0, 0]
    assert all(table.loc[["C", "E", "F"], "missing"] > 0)
    assert rep.n_tokens == len(R.inventory(W))  # the complete arms carry the whole inventory


@pytest.mark.parametrize("arm, missed, kept", [
    ("E", "source: S02", "date: 2025-12-01"),  # provenance gone, validity kept
    ("E", "identifier: F02", "value: 14 Ashdown Road, Manchester M20 4QP"),
    ("F", "date: 2025-12-01", "source: S02"),  # validity gone, provenance kept
    ("F", "value: 7 Cotham Grove, Bristol BS6 6AL", f"value: 41 {ASHDOWN}"),
    ("C", f"value: 14 {ASHDOWN}", f"value: 41 {ASHDOWN}"),  # recency keeps the note
    ("C", "source: S24", "date: 2024-04-10"),  # journeys keep their own dates
])
def test_each_ablation_misses_its_field_class(arm, missed, kept):
    missing = set(R.completeness(W).missing[arm])
    assert missed in missing and kept not in missing


def test_a_complete_arm_that_drops_a_line_fails_the_check(monkeypatch):
    notes = R._notes

    def lossy(world):
        return "\n".join(line for line in notes(world).splitlines() if "[F17;" not in line)

    monkeypatch.setattr(R, "_notes", lossy)
    with pytest.raises(R.CompletenessError, match="arm A misses 6 item"):
        R.check_completeness(W)
    assert set(R.completeness(W).missing["A"]) == {
        "value: P4471902", "identifier: F17", "source: S17", "date: 2016-03-15",
        "date: 2016-03-20", "date: 2026-03-14"}


def test_an_ablation_that_removes_nothing_fails_the_check(monkeypatch):
    monkeypatch.setattr(R, "_flat", lambda world, today: R._notes(world))
    with pytest.raises(R.CompletenessError, match="ablation arm C misses nothing"):
        R.check_completeness(W)


def test_profile_is_naive_recency_over_every_record():
    prof = {f.attribute: f.id for f in R.profile_facts(W)}
    assert prof["home_address"] == "F03" and prof["blood_type"] == "F13"
    assert prof["passport_number"] == "F17"  # expired, still asserted by the profile
    top = R.render(W, "B").split("\n\n")[0]
    assert "41 Ashdown Road" in top and "2025-12-01" not in top and "S03" not in top


def test_notes_name_companions_by_first_name_and_d_by_id():
    assert "to Lisbon (holiday) with Alex." in R.render(W, "A")
    assert "companion C03" in R.render(W, "D")
    assert "companion Alex Chen" in R.render(W, "E")


def test_unknown_arm():
    with pytest.raises(ValueError, match="arm must be one of"):
        R.render(W, "G")
