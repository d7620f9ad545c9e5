"""The Personal records page's result objects (``core.records.views``) against the engine."""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pytest

from core.records.disclosure import CONDITIONS
from core.records.engine import conflict_table, covering, evaluate
from core.records.items import FAMILY_COUNTS
from core.records.readers import HYPOTHESES
from core.records.render import ARMS, COMPLETE_ARMS, context_chars, render
from core.records.views import (
    MAX_UPLOAD_BYTES,
    arms_view,
    as_of_view,
    change_dates,
    disclosure_view,
    item_view,
    items_in,
    load_base,
    parse_upload,
    score_view,
    writeback_view,
)
from core.records.world import RUN_DATE
from core.records.writeback import load_updates


@pytest.fixture(scope="module")
def base():
    return load_base(n_boot=200)


def test_on_the_run_date_recency_changes_exactly_the_three_declared_conflicts(base):
    cp, rec = (as_of_view(base, as_of=RUN_DATE, policy=p) for p in ("CP-01", "naive recency"))
    table = conflict_table(base.world, today=RUN_DATE)
    assert set(cp.conflicts) == set(base.world.conflicts) == set(table["attribute"])
    assert set(cp.changed) == set(table.loc[~table["agree"], "attribute"])
    assert len(cp.changed) == 3 and cp.changed == rec.changed
    differ = cp.answers["answer"] != rec.answers["answer"]
    assert set(cp.answers.loc[differ, "attribute"]) == set(cp.changed)
    assert all(cp.answers.loc[~cp.answers["conflict"], "why"] == "")
    assert all("captured later" in w for w in cp.answers.loc[cp.answers["conflict"], "why"])


@pytest.mark.parametrize("policy", ["CP-01", "naive recency"])
def test_every_answer_is_a_record_covering_the_as_of_date(base, policy):
    for day in change_dates(base.world):
        view = as_of_view(base, as_of=day, policy=policy)
        for row in view.answers.itertuples():
            facts = covering(base.world, row.attribute, as_of=day)
            assert row.answer in {f.value for f in facts}
            # what an assistant consulting the records on that day answers
            assert row.answer == evaluate(base.world, {"op": "value", "attribute": row.attribute},
                                          as_of=day, today=min(day, RUN_DATE),
                                          policy=policy).value
        assert set(view.facts.loc[view.facts["in_conflict"], "attribute"]) == set(view.conflicts)
        # no record captured after the day is used, and no reason cites a later capture
        later = view.facts[view.facts["captured"] > day]
        assert not later["known"].any() and not later["covers"].any()
        for why in view.answers["why"]:
            assert all(dt.date.fromisoformat(d) <= day for d in re.findall(r"\d{4}-\d\d-\d\d", why))


def test_a_note_captured_later_makes_no_conflict_before_its_capture(base):
    """F03 (41 Ashdown Road) holds from 2025-12-01 but its note was captured on 2026-07-14:
    on 2026-01-01 an assistant had only the tenancy scan."""
    early = as_of_view(base, as_of=dt.date(2026, 1, 1), policy="naive recency")
    assert "home_address" not in early.conflicts
    assert early.answer("home_address") == base.world.fact("F02").value
    f03 = early.facts.set_index("fact_id").loc["F03"]
    assert not f03["known"] and not f03["covers"]
    late = as_of_view(base, as_of=dt.date(2026, 7, 14), policy="naive recency")
    assert "home_address" in late.conflicts
    assert late.answer("home_address") == base.world.fact("F03").value
    assert dt.date(2026, 7, 14) in change_dates(base.world)  # the capture changes the answer


def test_moving_the_as_of_date_moves_the_answer(base):
    now = as_of_view(base, as_of=RUN_DATE)
    before = as_of_view(base, as_of=dt.date(2025, 7, 1))
    assert now.answer("home_address") == base.world.fact("F02").value
    assert before.answer("home_address") == base.world.fact("F01").value
    assert before.answer("passport_number") == base.world.fact("F17").value
    assert now.answer("passport_number") is None  # expired on 2026-03-14


def test_change_dates_are_sorted_and_include_today(base):
    days = change_dates(base.world)
    assert list(days) == sorted(set(days)) and RUN_DATE in days
    assert dt.date(2026, 3, 15) in days  # the day after the passport expired
    assert all(dt.date(2019, 1, 1) <= d <= RUN_DATE + dt.timedelta(days=366) for d in days)


def test_a_bad_policy_item_condition_or_update_names_the_value(base):
    with pytest.raises(ValueError, match="later-start"):
        as_of_view(base, as_of=RUN_DATE, policy="later-start")
    with pytest.raises(ValueError, match="NOPE-1"):
        item_view(base, "NOPE-1")
    with pytest.raises(ValueError, match="'odd'"):
        disclosure_view("odd")
    with pytest.raises(ValueError, match="U9"):
        writeback_view(base, "U9", applied=True)
    with pytest.raises(ValueError, match="'XX'"):
        items_in(base, "XX")


def test_arms_complete_miss_nothing_and_ablations_miss_something(base):
    view = arms_view(base)
    t = view.table.set_index("arm")
    assert list(t.index) == list(ARMS)
    assert t["chars"].to_dict() == context_chars(base.world)
    for arm in ARMS:
        assert view.texts[arm] == render(base.world, arm)
        assert (t.loc[arm, "missing"] == 0) == (arm in COMPLETE_ARMS)
        assert t.loc[arm, "kind"] == ("complete" if arm in COMPLETE_ARMS else "ablation")


@pytest.mark.parametrize("family, n", [("all", 43), *FAMILY_COUNTS.items()])
def test_items_in_a_family(base, family, n):
    ids = items_in(base, family)
    assert len(ids) == n and all(family in ("all", i.split("-")[0]) for i in ids)


def test_item_views_agree_with_the_reference_and_the_dimension_reader(base):
    for item in base.items:
        view = item_view(base, item.item_id)
        assert view.reference == (item.reference if not isinstance(item.reference, tuple)
                                  else "; ".join(item.reference))
        assert list(view.records["record_id"]) == list(item.record_ids)
        d = view.readers.set_index("arm").loc["D"]
        assert d["correct"], item.item_id  # arm D's reader is the engine
    ent = item_view(base, "ENT-4").readers.set_index("arm")
    assert ent.loc["A", "answer"] == "Alex Chen" and ent.loc["A", "correct"]


def test_companion_change_is_computed_from_both_notes(base):
    ch = arms_view(base).change
    assert ch.missing_first == ("journey J01 companion: C03", "journey J04 companion: C02")
    assert ch.declined_first == ("ENT-2", "ENT-4")
    assert ch.ent_first == {"A": 3 / 5, "B": 3 / 5, "D": 1.0}
    assert ch.ent_now == {"A": 1.0, "B": 1.0, "D": 1.0}
    assert ch.h11_first and not ch.h11_now


def test_disclosure_conditions(base):
    views = {c: disclosure_view(c) for c in CONDITIONS}
    for v in views.values():
        assert v.matrix.shape == (12, 2 + len(v.requesters))
        cells = v.matrix[list(v.requesters)].to_numpy().ravel()
        assert (cells == "⚠ critical error").sum() == len(v.errors) == v.m11
    assert views["structured"].m11 == 0 and views["structured"].m9 == 1.0
    assert views["prose"].matrix.equals(views["structured"].matrix)  # a reader reads both alike
    assert views["none"].m11 > 0 and views["none"].m10 == 1.0 and views["none"].m9 < 1


@pytest.mark.parametrize("update", [u.update_id for u in load_updates()])
def test_write_back_keeps_the_history(base, update):
    off = writeback_view(base, update, applied=False)
    on = writeback_view(base, update, applied=True)
    assert on.n_facts == (len(base.world.facts), len(base.world.facts) + 1)
    assert set(off.history["fact_id"]) < set(on.history["fact_id"])  # nothing deleted
    new = on.history[on.history["status"] == "new record, open"]
    assert len(new) == 1 and new["valid_to"].isna().all()
    for fid, end in on.closed:
        row = on.history.set_index("fact_id").loc[fid]
        assert row["valid_to"] == end and row["status"].startswith("kept")
    update_value = next(u.value for u in load_updates() if u.update_id == update)
    assert on.after == update_value and off.after != update_value
    assert on.before == off.before  # the day before the start answers as before
    assert set(on.arms["arm"]) == {"A", "C", "D"}
    assert on.arms.set_index("arm").loc["D", "M12"] == 1.0


def _lines(base, n: int | None = None) -> bytes:
    rows = base.responses if n is None else base.responses[:n]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_an_uploaded_copy_of_the_reference_scores_the_same(base):
    from core.records.score import score_responses

    pairs = parse_upload(_lines(base))
    up = score_view(score_responses(pairs, base.items, base.world, n_boot=200))
    ref = score_view(base.score)
    assert up.measures.equals(ref.measures) and up.n_lines == len(base.responses)


@pytest.mark.parametrize("data, match", [
    (b"x" * (MAX_UPLOAD_BYTES + 1), "bytes, more than"),
    (b"{}\n" * 20_001, "lines, more than"),
    (b'{"a": 1}\n\xff\xfe\n', "line 2 is not UTF-8"),
    (b"  \n", "empty"),
    (b'{"item_id": "CURR-1"}\n', "line 1: missing field"),
])
def test_a_refused_upload_says_why_in_one_line(data, match):
    with pytest.raises(ValueError, match=match) as exc:
        parse_upload(data, name="f.jsonl")
    assert "\n" not in str(exc.value) and "f.jsonl" in str(exc.value)


def test_a_malformed_line_is_named_by_its_number(base):
    data = _lines(base, 2) + b"not json\n"
    with pytest.raises(ValueError, match="line 3: not JSON"):
        parse_upload(data)


def test_score_view_tables(base):
    v = score_view(base.score)
    assert list(v.measures["arm"]) == list(ARMS)
    m2 = v.measures.set_index("arm")["M2"]
    assert np.isnan(m2["C"]) and np.isnan(m2["E"]) and m2["D"] == 1.0
    assert len(v.comparisons) == 13
    assert v.untestable == tuple(h for h, t, *_ in HYPOTHESES if not t)
    assert set(v.shown) <= {h for h, t, *_ in HYPOTHESES if t} and "H4" in v.shown


def test_the_shown_table_puts_both_rules_side_by_side(base):
    from core.records.items import FAMILIES
    from core.records.views import FAMILY_NAMES

    assert tuple(FAMILY_NAMES) == FAMILIES
    view = as_of_view(base, as_of=RUN_DATE, policy="naive recency")
    t = view.table()
    assert list(t.columns) == ["attribute", "answer (naive recency)", "CP-01", "agree"]
    assert (t["agree"] == "✗").sum() == 3
    assert ((t["answer (naive recency)"] == t["CP-01"]) == (t["agree"] == "✓")).all()
    cp = as_of_view(base, as_of=RUN_DATE).table()
    assert list(cp.columns) == ["attribute", "answer (CP-01)", "naive recency", "agree"]
    assert (cp["answer (CP-01)"] == t["CP-01"]).all()


def test_the_laboratory_correction_is_shown_as_a_correction(base):
    on = writeback_view(base, "U5", applied=True)
    assert on.correction and on.closed == () and on.captured == dt.date(2026, 9, 6)
    assert (on.before, on.after) == ("A+", "A-")
    assert on.start == base.world.fact("F12").valid_from  # over the corrected interval
    status = on.history.set_index("fact_id")["status"]
    assert status["F12"] == "unchanged" and status["F13"] == "unchanged"
