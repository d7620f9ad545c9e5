"""Scoring seed-002 responses: the contract, M1–M8 with §7's denominators, the exact sign
test (against scipy), item-clustered intervals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from core.records.inference import item_bootstrap, sign_test
from core.records.items import build_items
from core.records.render import ARMS
from core.records.score import COMPARISONS, ResponseFormatError, parse_responses, score_responses
from core.records.world import load_world

W = load_world()
ITEMS = build_items(W)


def _reference(item, arm, r=0):
    ref = item.reference
    return {"item_id": item.item_id, "arm": arm, "replicate": r,
            "answer": "; ".join(ref) if isinstance(ref, tuple) else ref,
            "cited_record_ids": list(item.record_ids),
            "policy": "CP-01" if item.family == "CONF" else None,
            "declined": ref is None, "stale": item.stale}


def _declines(item, arm, r=0):
    return {"item_id": item.item_id, "arm": arm, "replicate": r, "answer": None,
            "cited_record_ids": [], "policy": None, "declined": True, "stale": None}


def test_copying_the_reference_scores_m1_and_m4_one():
    res = score_responses([_reference(i, a, r) for a in ARMS for i in ITEMS for r in (0, 1)],
                          ITEMS, W, n_boot=200)
    for arm in ARMS:
        assert res.value(arm, "M1") == 1 and res.value(arm, "M4") == 1
        assert res.value(arm, "M3") == 1 and res.value(arm, "M6") == 1
        assert res.value(arm, "M5") == 0 and res.value(arm, "M7") == 0
        assert res.value(arm, "M8") == 0
    assert math.isnan(res.value("C", "M2")) and math.isnan(res.value("E", "M2"))
    assert res.value("D", "M2") == 1
    m = res.measures.set_index(["arm", "measure"])
    assert m.loc[("D", "M1"), "n_items"] == 38 and m.loc[("D", "M4"), "n_items"] == 5
    assert m.loc[("D", "M3"), "n_items"] == 6 and m.loc[("D", "M7"), "n_items"] == 11
    assert m.loc[("D", "M1"), ["ci_low", "ci_high"]].tolist() == [1.0, 1.0]
    assert res.missing == dict.fromkeys(ARMS, 0) and res.unknown == ()


def test_declining_everything_scores_m4_m5_one_and_m1_zero():
    res = score_responses([_declines(i, "D") for i in ITEMS], ITEMS, W, n_boot=200)
    assert (res.value("D", "M4"), res.value("D", "M5"), res.value("D", "M1")) == (1, 1, 0)
    assert res.value("D", "M8") == 0  # declining is not fabricating
    assert res.missing["A"] == 43 and res.missing["D"] == 0


def test_replicates_are_averaged_within_the_item_first():
    conf = [i for i in ITEMS if i.item_id == "CONF-1"][0]
    right, wrong = _reference(conf, "D", 0), {**_reference(conf, "D", 1),
                                             "answer": "41 Ashdown Road, Manchester M20 4QP"}
    res = score_responses([right, wrong], ITEMS, W, n_boot=50)
    assert res.item_means.loc[0, "M1"] == 0.5 and len(res.calls) == 2


def test_a_fabricated_answer_counts_in_m8_and_a_misquoted_one_does_not():
    cur = [i for i in ITEMS if i.item_id == "CURR-1"][0]
    made_up = {**_reference(cur, "D"), "answer": "Zebra Logistics"}
    quoted = {**_reference(cur, "A"), "answer": "Halden Analytics"}  # wrong but in the records
    res = score_responses([made_up, quoted], ITEMS, W, n_boot=50)
    assert res.value("D", "M8") == 1 and res.value("A", "M8") == 0
    assert res.value("D", "M1") == 0 and res.value("A", "M1") == 0


def _line(**over):
    base = {"item_id": "CURR-1", "arm": "D", "replicate": 0, "answer": "x",
            "cited_record_ids": [], "policy": None, "declined": False, "stale": None}
    return json.dumps({**base, **over})


@pytest.mark.parametrize("bad, fragment", [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: not a JSON object"),
    (_line(arm="G"), "line 2: arm must be one of A-F"),
    (_line(replicate=True), "line 2: replicate must be a non-negative integer"),
    (_line(replicate=-1), "line 2: replicate"),
    (_line(cited_record_ids="F01"), "line 2: cited_record_ids must be a list"),
    (_line(declined="no"), "line 2: declined must be true or false"),
    (_line(answer="x", declined=True), "line 2: declined is true but an answer"),
    (json.dumps({"item_id": "CURR-1"}), "line 2: missing field"),
    (_line(extra=1), "line 2: unknown field(s) extra"),
    (_line(), "line 2: repeats item CURR-1, arm D, replicate 0 (first on line 1)"),
])
def test_malformed_lines_are_rejected_with_their_line_number(bad, fragment):
    with pytest.raises(ResponseFormatError) as info:
        parse_responses([_line(), bad, ""])
    assert fragment in str(info.value)
    assert info.value.problems[0][0] == 2


def test_unknown_items_are_reported_not_scored():
    pairs = parse_responses([_line(), _line(item_id="NOPE-9")])
    res = score_responses(pairs, ITEMS, W, n_boot=50)
    assert res.unknown == ((2, "NOPE-9"),) and len(res.calls) == 1
    assert "unknown items" in res.notes[0]


@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), max_size=40))
def test_sign_test_matches_scipy(diffs):
    n_pos, n_neg, p = sign_test(diffs)
    assert n_pos == sum(d > 0 for d in diffs) and n_neg == sum(d < 0 for d in diffs)
    expected = binomtest(n_pos, n_pos + n_neg, 0.5).pvalue if n_pos + n_neg else 1.0
    assert p == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_sign_test_closed_forms():
    assert sign_test([1] * 8)[2] == 2 / 2 ** 8
    assert sign_test([1, -1])[2] == 1.0
    assert sign_test([0, 0, np.nan]) == (0, 0, 1.0)


def test_item_bootstrap_is_seeded_and_brackets_the_mean():
    v = np.r_[np.ones(30), np.zeros(8)]
    a = item_bootstrap(v, rng=np.random.default_rng(3), n_boot=500)
    b = item_bootstrap(v, rng=np.random.default_rng(3), n_boot=500)
    assert a == b and a[0] < v.mean() < a[1]
    assert all(math.isnan(x) for x in item_bootstrap([], rng=np.random.default_rng(0)))
    with pytest.raises(ValueError, match="Generator"):
        item_bootstrap(v, rng=3)


def test_nine_paired_comparisons_and_four_ablation_contrasts():
    kinds = [c.kind for c in COMPARISONS]
    assert kinds.count("paired") == 9 and kinds.count("ablation") == 4
    assert len({(c.studied, c.comparator, c.families) for c in COMPARISONS}) == 13


@pytest.mark.parametrize("policy", ["CP-01", "naive recency"])
def test_m7_counts_todays_value_under_any_rule(policy):
    """An answer to a past-dated item that equals today's value under either rule is an
    overclaim (seed 002 §2): recency's 41 Ashdown Road and £9.99 count as much as CP-01's."""
    from core.records.engine import evaluate

    past = [i for i in ITEMS if i.present_values]
    rows = []
    for i in past:
        now = evaluate(W, {"op": "value", "attribute": i.query["attribute"]},
                       policy=policy).value
        rows.append({**_reference(i, "B"), "answer": now})
    res = score_responses(rows, ITEMS, W, n_boot=50)
    assert len(past) == 11 and res.value("B", "M7") == 1 and res.value("B", "M1") == 0


def test_m7_of_the_recency_readers_is_one():
    from core.records.readers import read

    res = score_responses(read(W, ITEMS, arms=("B", "C")), ITEMS, W, n_boot=50)
    assert res.value("B", "M7") == 1 and res.value("C", "M7") == 1  # .727 before issue 19
    per_item = res.item_means.set_index(["arm", "item_id"])["M7"]
    assert all(per_item[(a, i)] == 1 for a in "BC" for i in ("HIST-1", "HIST-5", "HOP-4"))


ALL_IDS = ([f.id for f in W.facts] + [c.id for c in W.contacts] + [j.id for j in W.journeys])


@pytest.mark.parametrize("cited, m2", [
    (ALL_IDS, 0.0),  # every record id (49): names none as the one the answer rests on
    ("support", 1.0),
    ("support+1", 0.0),  # one record the answer does not rest on
    ("support-lower", 1.0),  # " f02 " is F02
    ([], 0.0),
])
def test_m2_penalises_citations_outside_the_support(cited, m2):
    rows = []
    for i in (i for i in ITEMS if i.answerable):
        support = list(i.record_ids)
        ids = cited if isinstance(cited, list) else {
            "support": support, "support+1": [*support, "F99" if "F01" in support else "F01"],
            "support-lower": [f" {r.lower()} " for r in support]}[cited]
        rows.append({**_reference(i, "D"), "answer": "no such value", "cited_record_ids": ids})
    res = score_responses(rows, ITEMS, W, n_boot=50)
    assert len(ALL_IDS) == 49 and res.value("D", "M1") == 0
    assert res.value("D", "M2") == m2


@pytest.mark.parametrize("policy, named", [
    ("CP-01", True), ("CP01", True), ("cp 01", True), ("cp-01", True), ("CP_01", True),
    ("CP\u201301", True), ("policy CP-01 (lower tier wins)", True), ("ＣＰ－０１", True),
    ("CP-011", False), ("CP-02", False), ("XCP-01", False), ("naive recency", False),
    (None, False), ("", False),
])
def test_m3_normalises_the_policy_name(policy, named):
    conf = [i for i in ITEMS if i.family == "CONF"]
    res = score_responses([{**_reference(i, "D"), "policy": policy} for i in conf], ITEMS, W,
                          n_boot=50)
    assert res.value("D", "M3") == float(named)
