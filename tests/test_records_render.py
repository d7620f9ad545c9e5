"""The six arms of seed 002 and the completeness check: A, B, D carry everything; C, E, F are
ablations that each miss the field class they remove."""

from __future__ import annotations

import re

import pytest

import core.records.render as R
from core.records.claims import resolve_mention, text_claims, world_claims
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
    assert table["wrong"].sum() == 0
    # 6 claims per fact, 2 per source, 7 per contact, 9 per journey
    assert rep.n_claims == 6 * 34 + 2 * 27 + 7 * 7 + 9 * 8 == len(world_claims(W))
    assert list(table.loc[["A", "B", "D"], "carried"]) == [rep.n_claims] * 3


@pytest.mark.parametrize("arm, missed, kept", [
    ("E", "fact F02 source: S02", "fact F02 valid_from: 2025-12-01"),  # provenance gone
    ("E", "fact F02 identifier: F02", f"fact F02 value: 14 {ASHDOWN}"),
    ("E", "source S02 captured: 2025-11-03", "journey J01 companion: C03"),  # full names
    ("F", "fact F02 valid_from: 2025-12-01", "fact F02 source: S02"),  # validity gone
    ("F", "fact F01 value: 7 Cotham Grove, Bristol BS6 6AL", f"fact F03 value: 41 {ASHDOWN}"),
    ("C", f"fact F02 value: 14 {ASHDOWN}", f"fact F03 value: 41 {ASHDOWN}"),  # recency
    ("C", "journey J01 source: S24", "journey J01 depart: 2024-04-10"),  # trips keep dates
])
def test_each_ablation_misses_its_field_class(arm, missed, kept):
    missing = set(R.completeness(W).missing[arm])
    assert missed in missing and kept not in missing


def _sub(pattern, repl):
    def edit(text):
        out, n = re.subn(pattern, repl, text, flags=re.M)
        assert n == 1, pattern  # the broken copy really differs in one place
        return out
    return edit


#: Deliberately broken copies of a complete arm: (arm, edit, a claim it must then miss).
BROKEN = [
    ("A", _sub(r"with Alex Chen\.", "with Alex."), "journey J01 companion: C03"),
    ("A", _sub(r"with Alex Morgan\.", "with Alex."), "journey J04 companion: C02"),
    ("B", _sub(r"with Alex Chen\.", "with Alex."), "journey J01 companion: C03"),
    ("A", _sub(r"^2019-09-01 to 2025-11-30: home", "2019-09-01: home"),
     "fact F01 valid_to: 2025-11-30"),  # an interval bound dropped
    ("A", _sub(r"^since 2025-12-01: (home address 41)", r"\1"),
     "fact F03 valid_from: 2025-12-01"),  # F03's interval dropped
    ("A", _sub(r"\[F21; from the [^\]]+\]", "[F21]"), "fact F21 source: S20"),  # source
    ("D", _sub(r"\| companion C03 \|", "| companion Alex |"), "journey J01 companion: C03"),
    ("D", _sub(r"^(F01 \| .*) \| 2025-11-30 \|", r"\1 |"), "fact F01 valid_to: 2025-11-30"),
    ("D", _sub(r"^(F21 \| .* \| 2026-05-19) \| S20 \|", r"\1 |  |"), "fact F21 source: S20"),
]


@pytest.mark.parametrize("arm, edit, missed", BROKEN)
def test_a_broken_copy_of_a_complete_arm_fails_the_check(arm, edit, missed):
    broken = edit(R.render(W, arm))
    rep = R.completeness(W, texts={arm: broken})
    assert missed in rep.missing[arm]
    assert not rep.table.set_index("arm").loc[arm, "ok"]
    with pytest.raises(R.CompletenessError, match=f"arm {arm} misses"):
        R.check_completeness(W, texts={arm: broken})


def test_first_name_notes_are_not_complete():
    """The notes before issue 19 said only "with Alex" on the Lisbon and Berlin trips."""
    first = R.render(W, "A", companions="first")
    assert "to Lisbon (holiday) with Alex. [J01" in first
    assert R.completeness(W, texts={"A": first}).missing["A"] == (
        "journey J01 companion: C03", "journey J04 companion: C02")
    with pytest.raises(R.CompletenessError, match="journey J01 companion: C03"):
        R.check_completeness(W, texts={"A": first})


def test_a_claim_stated_unlike_the_fact_table_fails_the_check():
    text = R.render(W, "A").replace("7 Cotham Grove", "9 Cotham Grove")
    rep = R.completeness(W, texts={"A": text})
    assert rep.wrong["A"] == ("fact F01 value: 9 Cotham Grove, Bristol BS6 6AL",)
    with pytest.raises(R.CompletenessError, match="arm A states 1 claim"):
        R.check_completeness(W, texts={"A": text})


def test_a_complete_arm_that_drops_a_line_fails_the_check(monkeypatch):
    notes = R._notes

    def lossy(world, **kw):
        return "\n".join(line for line in notes(world, **kw).splitlines()
                         if "[F17;" not in line)

    monkeypatch.setattr(R, "_notes", lossy)
    with pytest.raises(R.CompletenessError, match="arm A misses 8 claim"):
        R.check_completeness(W)
    assert set(R.completeness(W).missing["A"]) == {
        "fact F17 attribute: passport_number", "fact F17 identifier: F17",
        "fact F17 source: S17", "fact F17 valid_from: 2016-03-15",
        "fact F17 valid_to: 2026-03-14", "fact F17 value: P4471902",
        "source S17 captured: 2016-03-20", "source S17 title: scan of the passport"}


def test_an_ablation_that_removes_nothing_fails_the_check():
    with pytest.raises(R.CompletenessError, match="ablation arm E misses nothing"):
        R.check_completeness(W, texts={"E": R.render(W, "D")})


def test_profile_is_naive_recency_over_every_record():
    prof = {f.attribute: f.id for f in R.profile_facts(W)}
    assert prof["home_address"] == "F03" and prof["blood_type"] == "F13"
    assert prof["passport_number"] == "F17"  # expired, still asserted by the profile
    top = R.render(W, "B").split("\n\n")[0]
    assert "41 Ashdown Road" in top and "2025-12-01" not in top and "S03" not in top


def test_notes_name_which_alex_and_d_by_id():
    notes = R.render(W, "A")
    assert "to Lisbon (holiday) with Alex Chen." in notes
    assert "to Berlin (work conference) with Alex Morgan." in notes
    assert "to Oslo (family visit) with Ingrid." in notes  # a first name nobody shares
    assert "companion C03" in R.render(W, "D")
    assert "companion Alex Chen" in R.render(W, "E")


def test_unknown_arm():
    with pytest.raises(ValueError, match="arm must be one of"):
        R.render(W, "G")


@pytest.mark.parametrize("mention, ids", [
    ("Alex", ("C02", "C03", "C04")), ("Alex Chen", ("C03",)), ("C03", ("C03",)),
    ("Ingrid", ("C01",)), ("Nobody", ()),
])
def test_a_mention_resolves_to_the_contacts_it_can_mean(mention, ids):
    assert resolve_mention(W, mention) == ids


def test_text_claims_reads_each_layout_and_rejects_an_unknown_arm():
    for arm in R.ARMS:
        assert text_claims(W, arm, R.render(W, arm)) <= world_claims(W)
    with pytest.raises(ValueError, match="'G'"):
        text_claims(W, "G", "")
