"""Seed 002 §10 on every tested measure (issue 19, point 7 and the line-order point of 6):
sign tests on M2, M3, M6, M7 and M8 against scipy, their sign convention, intervals that do
not depend on line order, and H2 and H3's current-state half computed from the items."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from core.records.inference import labelled_rng
from core.records.items import build_items
from core.records.readers import HYPOTHESES, headline_contrasts, hypothesis_table, read
from core.records.render import ARMS
from core.records.score import (
    COMPARISONS,
    ID_ARMS,
    MEASURE_COMPARISONS,
    score_responses,
)
from core.records.world import RUN_DATE, load_world

W = load_world()
ITEMS = build_items(W)
BY_ID = {i.item_id: i for i in ITEMS}
#: §2 and §7: M7 counts overclaims and M8 fabrications, so fewer is better; the rest count
#: what an arm got right.
LOWER_IS_BETTER = {"M7", "M8"}
#: The measure each hypothesis of §3 names (H6 M2, H7 M3, H8 M7, H9 and H10 M6, H13 M8).
HYPOTHESIS_OF = {"M2": "H6", "M3": "H7", "M6": "H9, H10", "M7": "H8", "M8": "H13"}


def _text(ref):
    return "; ".join(ref) if isinstance(ref, tuple) else ref


def _noisy(seed: int) -> list[dict]:
    """Every arm × item × 2 replicates with answers, citations, policies and stale flags
    drawn at random: right, today's value, a fabrication, a refusal."""
    rng = np.random.default_rng(seed)
    ids = [f.id for f in W.facts]
    out = []
    for arm in ARMS:
        for item in ITEMS:
            for r in (0, 1):
                u = rng.random()
                answer = (_text(item.reference) if u < 0.5 else
                          item.present_values[0] if u < 0.65 and item.present_values else
                          "Zebra Logistics" if u < 0.8 else None)
                v = rng.random()
                cited = (list(item.record_ids) if v < 0.5 else [] if v < 0.7
                         else [ids[int(rng.integers(len(ids)))]])
                out.append({"item_id": item.item_id, "arm": arm, "replicate": r,
                            "answer": answer,
                            "cited_record_ids": cited if answer is not None else [],
                            "policy": [None, "CP-01", "cp01", "naive recency"][
                                int(rng.integers(4))],
                            "declined": answer is None,
                            "stale": [None, True, False][int(rng.integers(3))]})
    return out


FILES = {"readers": read(W, ITEMS), "noisy": _noisy(19)}
SCORES = {k: score_responses(v, ITEMS, W, n_boot=200) for k, v in FILES.items()}


def test_every_tested_measure_gets_the_nine_arm_pairs_and_nothing_else():
    """§10's nine paired comparisons on each measure a hypothesis names; M2 only where both
    arms carry identifiers (undefined, not zero, for C and E); M4, M5 and the four ablation
    contrasts stay out."""
    nine = [(c.name, c.studied, c.comparator) for c in COMPARISONS if c.kind == "paired"]
    assert len(nine) == 9
    for m, h in HYPOTHESIS_OF.items():
        rows = [(c.name, c.studied, c.comparator) for c in MEASURE_COMPARISONS
                if c.measure == m]
        want = [p for p in nine if m != "M2" or {p[1], p[2]} <= set(ID_ARMS)]
        assert rows == want, m
        assert all(c.hypothesis == h and c.kind == "paired" and c.families == ()
                   for c in MEASURE_COMPARISONS if c.measure == m)
    assert len(MEASURE_COMPARISONS) == 4 + 4 * 9
    assert {c.measure for c in MEASURE_COMPARISONS} == set(HYPOTHESIS_OF)
    assert {c.measure for c in COMPARISONS} == {"M1"}


@pytest.mark.parametrize("file", sorted(FILES))
@pytest.mark.parametrize("measure, name", [(c.measure, c.name) for c in MEASURE_COMPARISONS])
def test_sign_tests_match_scipy(file, measure, name):
    """n₊, n₋ and p from the calls by hand (replicates averaged, the studied arm better
    counted as +), p against ``scipy.stats.binomtest`` to 1e-12."""
    res = SCORES[file]
    row = res.measure_comparisons.set_index(["measure", "comparison"]).loc[(measure, name)]
    per_item = res.calls.groupby(["item_id", "arm"])[measure].mean().unstack()
    both = per_item[[row["studied"], row["comparator"]]].dropna()
    diff = both[row["studied"]] - both[row["comparator"]]
    better = -diff if measure in LOWER_IS_BETTER else diff
    n_pos, n_neg = int((better > 0).sum()), int((better < 0).sum())
    assert (row["n_items"], row["n_pos"], row["n_neg"]) == (len(both), n_pos, n_neg)
    expected = binomtest(n_pos, n_pos + n_neg, 0.5).pvalue if n_pos + n_neg else 1.0
    assert row["p_value"] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert row["delta"] == pytest.approx(float(better.mean()), abs=1e-12)
    assert row["better"] == ("lower" if measure in LOWER_IS_BETTER else "higher")
    assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    assert row["n_items"] == {"M2": 38, "M3": 6, "M6": 5, "M7": 11, "M8": 38}[measure]


def _answers(arm, items, answer_of):
    return [{"item_id": i.item_id, "arm": arm, "replicate": 0, "answer": answer_of(i),
             "cited_record_ids": list(i.record_ids), "policy": None, "declined": False,
             "stale": None} for i in items]


@pytest.mark.parametrize("k", [0, 1, 4, 11])
def test_fewer_overclaims_is_a_positive_delta_on_m7(k):
    """D answers the past value every time; B answers today's value on the first ``k`` of
    the 11 past-dated items: D overclaims less, so D vs B on M7 is +k/11 with n₊ = k."""
    past = [i for i in ITEMS if i.present_values]
    b = {i.item_id for i in past[:k]}
    rows = (_answers("D", past, lambda i: _text(i.reference))
            + _answers("B", past, lambda i: i.present_values[0] if i.item_id in b
                       else _text(i.reference)))
    res = score_responses(rows, ITEMS, W, n_boot=50)
    row = res.measure_comparisons.set_index(["measure", "comparison"]).loc[("M7", "D vs B")]
    assert (row["n_pos"], row["n_neg"], row["n_items"]) == (k, 0, 11)
    assert row["delta"] == pytest.approx(k / 11) and math.copysign(1, row["delta"]) == 1
    assert res.value("D", "M7") == 0 and res.value("B", "M7") == pytest.approx(k / 11)
    assert row["p_value"] == pytest.approx(2 ** (1 - k) if k else 1.0)


@pytest.mark.parametrize("j", [1, 5, 38])
def test_more_fabrication_is_a_negative_delta_on_m8(j):
    """D fabricates on ``j`` answerable items, B answers them all: D vs B on M8 is −j/38."""
    ans = [i for i in ITEMS if i.answerable]
    fab = {i.item_id for i in ans[:j]}
    rows = (_answers("D", ans, lambda i: "Zebra Logistics" if i.item_id in fab
                     else _text(i.reference))
            + _answers("B", ans, lambda i: _text(i.reference)))
    res = score_responses(rows, ITEMS, W, n_boot=50)
    row = res.measure_comparisons.set_index(["measure", "comparison"]).loc[("M8", "D vs B")]
    assert (row["n_pos"], row["n_neg"]) == (0, j)
    assert row["delta"] == pytest.approx(-j / 38)
    assert res.value("D", "M8") == pytest.approx(j / 38)


def test_sign_tests_holds_m1_then_the_other_measures():
    res = SCORES["readers"]
    st_ = res.sign_tests
    assert len(st_) == 13 + 40 and list(st_["measure"][:13]) == ["M1"] * 13
    assert set(res.to_dict()) >= {"comparisons", "measure_comparisons"}
    assert not ((st_["measure"] == "M2") & st_[["studied", "comparator"]].isin(["C", "E"])
                .any(axis=1)).any()


def _frames(res):
    return {"measures": res.measures, "comparisons": res.comparisons,
            "measure_comparisons": res.measure_comparisons, "families": res.families,
            "item_means": res.item_means}


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(sorted(FILES)),
       st.integers(0, 2 ** 32))
def test_line_order_changes_no_measure_interval_or_comparison(rnd, file, seed):
    """Shuffling a response file's lines leaves every figure identical at the same seed
    (before issue 19, 10 to 18 of the 48 measure intervals of the noisy file moved)."""
    lines = list(FILES[file])
    shuffled = lines[:]
    rnd.shuffle(shuffled)
    a = score_responses(lines, ITEMS, W, seed=seed, n_boot=200)
    b = score_responses(shuffled, ITEMS, W, seed=seed, n_boot=200)
    for name, frame in _frames(a).items():
        pd.testing.assert_frame_equal(frame, _frames(b)[name], check_exact=True, obj=name)


def test_an_arms_intervals_do_not_depend_on_the_other_arms():
    """Each interval has its own generator: scoring arm D alone gives D's intervals."""
    full = SCORES["noisy"].measures.set_index(["arm", "measure"])
    alone = score_responses([r for r in FILES["noisy"] if r["arm"] == "D"], ITEMS, W,
                            n_boot=200).measures.set_index(["arm", "measure"])
    pd.testing.assert_frame_equal(full.loc["D"], alone.loc["D"], check_exact=True)
    moved = (full[["ci_low", "ci_high"]] != score_responses(
        FILES["noisy"], ITEMS, W, seed=1, n_boot=200).measures.set_index(
        ["arm", "measure"])[["ci_low", "ci_high"]]).any(axis=1)
    assert moved.sum() > 0  # the seed still matters


@pytest.mark.parametrize("seed", [-1, True, 1.5, "0"])
def test_labelled_rng_wants_a_non_negative_integer(seed):
    with pytest.raises(ValueError, match="non-negative integer"):
        labelled_rng(seed, "x")


def test_labelled_rng_streams_differ_by_label_and_repeat_by_label():
    draw = lambda *lab: labelled_rng(7, *lab).integers(0, 2 ** 62, size=4).tolist()  # noqa: E731
    assert draw("measure", "D", "M1") == draw("measure", "D", "M1")
    assert draw("measure", "D", "M1") != draw("measure", "D", "M2")
    assert draw("measure", "D", "M1") != draw("measure", "DM", "1")


# --- H2 and H3's current-state half, from the items and the world by hand ---------------

def _covering_values(item):
    """The distinct values the records captured by today give the item's attribute on its
    as-of date."""
    return {f.value for f in W.facts if f.attribute == item.query["attribute"]
            and f.valid_from <= item.as_of and (f.valid_to is None or item.as_of <= f.valid_to)
            and W.source(f.source).captured <= RUN_DATE}


def _profile_value(attribute):
    """Arm B's profile: the record captured last, whatever its validity (§4.4; one note
    capturing two records: the later start)."""
    facts = [f for f in W.facts if f.attribute == attribute]
    key = max((W.source(f.source).captured, f.valid_from) for f in facts)
    (value,) = {f.value for f in facts if (W.source(f.source).captured, f.valid_from) == key}
    return value


def _by_hand():
    curr = [i for i in ITEMS if i.family == "CURR"]
    hist = [i for i in ITEMS if i.family == "HIST"]
    # one value covers each as-of date: any rule, CP-01 (D) or recency (A), gives it
    assert all(_covering_values(i) == {i.reference} for i in curr + hist)
    a_curr = a_hist = d_curr = d_hist = 1.0
    b_curr = np.mean([_profile_value(i.query["attribute"]) == i.reference for i in curr])
    b_right_hist = [_profile_value(i.query["attribute"]) == i.reference for i in hist]
    return {"H1": d_curr - a_curr, "gap_hist": d_hist - a_hist, "gap_curr": d_curr - a_curr,
            "H3_curr": b_curr - a_curr, "H3_hist": float(np.mean(b_right_hist)) - a_hist,
            "n_hist_b_wrong": len(hist) - sum(b_right_hist), "n_curr": len(curr),
            "n_hist": len(hist)}


def test_h1_h2_h3_headline_contrasts_match_the_items():
    """H2's gap and H3's halves computed from the world: the profile holds today's value,
    which is every CURR reference and no HIST one (each names a value before a change)."""
    want = _by_hand()
    assert (want["n_curr"], want["n_hist"], want["n_hist_b_wrong"]) == (8, 8, 8)
    hc = headline_contrasts(SCORES["readers"]).set_index(["hypothesis", "part"])
    assert hc.loc[("H1", "current state"), "value"] == want["H1"] == 0
    h2 = hc.loc[("H2", "history against current state")]
    assert (h2["studied"], h2["comparator"]) == (want["gap_hist"], want["gap_curr"])
    assert h2["value"] == want["gap_hist"] - want["gap_curr"] == 0 and not h2["shows"]
    assert pd.isna(h2["p_value"]) and h2["n_items"] == 16
    cur, his = hc.loc[("H3", "current state")], hc.loc[("H3", "history")]
    assert cur["value"] == want["H3_curr"] == 0 and not cur["shows"]
    assert (cur["n_pos"], cur["n_neg"], cur["p_value"]) == (0, 0, 1.0)
    assert his["value"] == want["H3_hist"] == -1 and his["shows"]
    assert (his["n_pos"], his["n_neg"]) == (0, want["n_hist_b_wrong"])
    assert his["p_value"] == pytest.approx(2 * 0.5 ** want["n_hist_b_wrong"], rel=1e-12)


def test_the_hypothesis_table_shows_the_h2_and_h3_figures_and_says_why():
    table = hypothesis_table(SCORES["readers"]).set_index("hypothesis")
    assert table.loc["H2", "observed"] == ("D − A on HIST 0.000, on CURR 0.000; "
                                           "difference 0.000")
    assert table.loc["H3", "observed"] == "B − A on HIST −1.000, on CURR 0.000"
    assert not table.loc["H2", "testable"] and table.loc["H2", "shows"] is None
    assert table.loc["H3", "shows"] is True
    assert "CURR half" in table.loc["H3", "compared"]
    assert "gap is 0" in table.loc["H2", "why"] and "B = A on CURR" in table.loc["H3", "why"]
    assert list(table.index) == [h for h, *_ in HYPOTHESES]
    assert (table.loc[["H14", "H15"], "observed"] == "").all()


def test_a_reader_that_loses_dates_in_notes_would_show_h2():
    """The H2 row is a measurement, not a label: if A's reader missed half the history,
    the gap on HIST would exceed the gap on CURR."""
    hist = sorted(i.item_id for i in ITEMS if i.family == "HIST")[:4]
    lines = [({**r, "answer": None, "declined": True, "cited_record_ids": [], "stale": None,
               "policy": None} if r["arm"] == "A" and r["item_id"] in hist else r)
             for r in FILES["readers"]]
    hc = headline_contrasts(score_responses(lines, ITEMS, W, n_boot=50)).set_index(
        ["hypothesis", "part"])
    h2 = hc.loc[("H2", "history against current state")]
    assert (h2["studied"], h2["comparator"], h2["value"]) == (0.5, 0.0, 0.5) and h2["shows"]


def test_the_reference_sign_tests_on_the_new_measures():
    """The figures the page prints for the reference readers, from their M-by-arm pattern:
    M3 only D and F name CP-01 (six CONF items), M7 B, C, F overclaim on all 11."""
    c = SCORES["readers"].measure_comparisons.set_index(["measure", "comparison"])
    for name in ("D vs A", "D vs B", "D vs E", "F vs C", "D vs C"):
        assert tuple(c.loc[("M3", name), ["n_pos", "n_neg"]]) == (6, 0)
        assert c.loc[("M3", name), "p_value"] == pytest.approx(2 / 2 ** 6, rel=1e-12)
    for name in ("D vs B", "D vs F", "E vs C", "D vs C"):
        assert tuple(c.loc[("M7", name), ["n_pos", "n_neg"]]) == (11, 0)
        assert c.loc[("M7", name), "delta"] == 1
    assert c.loc[("M7", "B vs A"), "delta"] == -1
    assert (c.xs("M8")["n_pos"] + c.xs("M8")["n_neg"] == 0).all()
    assert (c.xs("M8")["p_value"] == 1).all()

