"""Unit tests of the adapted §8.7 selection protocol on tiny hand-built arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation.walkthrough import (
    atom_grid_table,
    atom_verdicts,
    bias_rank_table,
    label_arrays,
    select_walkthrough,
)
from core.testbed.questions import Q_INDEX, QIDS, QUESTIONS, SOURCES

PRO, PLA, SLF, OBJ, DEV = range(5)
A1, A2, A3, B2, B3, D1 = (Q_INDEX[q] for q in ("A1", "A2", "A3", "B2", "B3", "D1"))


def blank(p: int, *, ids=None, seeds=None, splits=None):
    """GT 0 everywhere, no atoms, test split."""
    gt = np.zeros((p, len(QIDS)), dtype=np.int8)
    atoms = np.full((p, len(QIDS), len(SOURCES)), -1, dtype=np.int8)
    personas = pd.DataFrame({
        "seed": seeds or [1] * p,
        "persona_id": ids or [f"p{i:02d}" for i in range(p)],
        "difficulty": "stable",
        "split": splits or ["test"] * p,
    })
    return gt, atoms, personas


def set_cell(gt, atoms, i, j, truth, row):
    gt[i, j] = truth
    atoms[i, j] = row


# A3 is ordinal in display order; planner and self-report both have bias +1 on it.
GOOD = [1, 2, 2, 1, -1]  # profile agrees, planner/self one bin up, objective agrees


def test_a_clear_instance_qualifies_with_all_preferences():
    gt, atoms, personas = blank(1)
    set_cell(gt, atoms, 0, A3, 1, GOOD)
    out = select_walkthrough(gt, atoms, personas)
    assert len(out) == 1
    row = out.iloc[0]
    assert (row["question_id"], row["rank"], row["n_sources"]) == ("A3", 1, 4)
    assert row["f_coverage"] and row["f_spread"] and row["f_disagree"]
    assert row["planner_shift"] and row["self_shift"] and row["pref_agree"]
    assert (row["n_agree"], row["n_prefs"]) == (2, 3)


@pytest.mark.parametrize("atom_row, failing", [
    ([1, 2, 2, -1, 1], "f_coverage"),     # 4 sources but objective missing
    ([-1, 2, 2, 1, -1], "f_coverage"),    # planner, self, objective present but only 3
    ([1, -1, 2, 1, 1], "f_coverage"),     # planner missing
    ([2, 2, 2, 2, -1], "f_spread"),       # one value only (and it disagrees)
    ([1, 1, 1, 1, 1], "f_disagree"),      # everyone agrees (so no spread either)
])
def test_each_hard_filter_excludes_what_it_should(atom_row, failing):
    gt, atoms, personas = blank(1)
    set_cell(gt, atoms, 0, A3, 1, atom_row)
    assert select_walkthrough(gt, atoms, personas).empty
    full = select_walkthrough(gt, atoms, personas, keep_all=True, qid="A3")
    assert len(full) == 1
    row = full.iloc[0]
    assert not row[failing] and not row["qualifies"] and row["rank"] == -1


def test_only_the_test_split_is_in_the_pool():
    gt, atoms, personas = blank(2, splits=["train", "test"])
    for i in range(2):
        set_cell(gt, atoms, i, A3, 1, GOOD)
    out = select_walkthrough(gt, atoms, personas)
    assert out["persona_id"].tolist() == ["p01"]
    assert out["row"].tolist() == [1]


def test_more_preferences_rank_first_then_priority_order():
    # p00: no planner shift (planner agrees) but self shift → 2 prefs
    # p01: planner shift, no self shift → 2 prefs, planner has priority
    # p02: all three → 3 prefs
    gt, atoms, personas = blank(3)
    set_cell(gt, atoms, 0, A3, 1, [1, 1, 2, 0, -1])
    set_cell(gt, atoms, 1, A3, 1, [1, 2, 0, 1, -1])
    set_cell(gt, atoms, 2, A3, 1, GOOD)
    out = select_walkthrough(gt, atoms, personas)
    assert out["persona_id"].tolist() == ["p02", "p01", "p00"]
    assert out["rank"].tolist() == [1, 2, 3]
    assert out["n_prefs"].tolist() == [3, 2, 2]


def test_tiebreak_is_persona_id_then_seed_then_question_order():
    ids = ["zed", "amy", "amy"]
    gt, atoms, personas = blank(3, ids=ids, seeds=[5, 9, 7])
    for i in range(3):
        set_cell(gt, atoms, i, A3, 1, GOOD)
        set_cell(gt, atoms, i, A1, 1, GOOD)  # A1 has the same bias signs
    out = select_walkthrough(gt, atoms, personas)
    got = list(zip(out["persona_id"], out["seed"], out["question_id"], strict=True))
    assert got == [("amy", 7, "A1"), ("amy", 7, "A3"), ("amy", 9, "A1"), ("amy", 9, "A3"),
                   ("zed", 5, "A1"), ("zed", 5, "A3")]


def test_qid_restricts_the_pool():
    gt, atoms, personas = blank(1)
    set_cell(gt, atoms, 0, A3, 1, GOOD)
    set_cell(gt, atoms, 0, A1, 1, GOOD)
    assert select_walkthrough(gt, atoms, personas, qid="A1")["question_id"].tolist() == ["A1"]
    assert set(select_walkthrough(gt, atoms, personas)["question_id"]) == {"A1", "A3"}
    with pytest.raises(ValueError, match="unknown question"):
        select_walkthrough(gt, atoms, personas, qid="Z9")


def test_bias_direction_uses_the_bias_shift_order():
    # A2 runs 8_or_more (rank 1) → 0_to_3 (rank 3); planner +1 means *fewer* long days.
    gt, atoms, personas = blank(2)
    set_cell(gt, atoms, 0, A2, 1, [1, 0, 1, 2, -1])   # planner says 0_to_3: in direction
    set_cell(gt, atoms, 1, A2, 1, [1, 2, 1, 0, -1])   # planner says 8_or_more: against
    out = select_walkthrough(gt, atoms, personas).set_index("persona_id")
    assert bool(out.loc["p00", "planner_shift"]) is True
    assert bool(out.loc["p01", "planner_shift"]) is False
    # D1 (social): the self-report's bias is −1, so "decreased" below "stayed_same" fits it
    gt, atoms, personas = blank(1)
    set_cell(gt, atoms, 0, D1, 1, [1, 1, 0, 2, -1])
    row = select_walkthrough(gt, atoms, personas).iloc[0]
    assert row["self_shift"] and not row["planner_shift"]


def test_nominal_questions_and_edge_labels_never_count_as_shifts():
    gt, atoms, personas = blank(2)
    set_cell(gt, atoms, 0, B3, 0, [0, 1, 1, 0, -1])     # nominal
    set_cell(gt, atoms, 1, B2, 3, [3, 1, 2, 0, -1])     # GT is the edge label
    out = select_walkthrough(gt, atoms, personas)
    assert len(out) == 2
    assert not out["planner_shift"].any() and not out["self_shift"].any()


def test_empty_pool_gives_an_empty_frame_with_the_columns():
    gt, atoms, personas = blank(3)
    out = select_walkthrough(gt, atoms, personas)
    assert out.empty
    for col in ("rank", "seed", "persona_id", "question_id", "f_coverage", "n_prefs"):
        assert col in out.columns
    none = blank(0)
    assert select_walkthrough(*none).empty
    assert len(select_walkthrough(gt, atoms, personas, keep_all=True)) == 3 * len(QIDS)


def test_bad_shapes_and_columns_raise():
    gt, atoms, personas = blank(2)
    with pytest.raises(ValueError, match="gt_codes"):
        select_walkthrough(gt[:1], atoms, personas)
    with pytest.raises(ValueError, match="atoms"):
        select_walkthrough(gt, atoms[:, :, :4], personas)
    with pytest.raises(ValueError, match="split"):
        select_walkthrough(gt, atoms, personas.drop(columns="split"))


def test_bias_rank_table_matches_the_question_orders():
    table = bias_rank_table()
    for j, q in enumerate(QUESTIONS):
        if q.ordinal:
            assert [int(table[j, c]) for c in q.order] == list(range(len(q.order)))
            for e in q.edge:
                assert table[j, e] == -1
        else:
            assert (table[j] == -1).all()


def test_atom_verdicts_explain_each_source():
    v = atom_verdicts("A3", 1, np.array(GOOD)).set_index("source")
    assert v.loc["profile_ltm", "status"] == "agree"
    assert v.loc["planner", "status"] == "disagree"
    assert "bias explains" in v.loc["planner", "explained"]
    assert v.loc["planner", "shift"] == 1
    assert v.loc["planner", "prior_predicts"] == "70_or_more"
    assert v.loc["device_log", "status"] == "null"
    assert "not informative" in v.loc["device_log", "explained"]
    # a zero-bias source that disagrees: not explained by bias
    v = atom_verdicts("A3", 1, np.array([1, 1, 1, 2, -1])).set_index("source")
    assert "no directional bias" in v.loc["objective_log", "explained"]


def test_atom_grid_table_and_label_arrays_round_trip():
    gt, atoms, personas = blank(2)
    set_cell(gt, atoms, 0, A3, 1, GOOD)
    atoms[1, B2] = [3, 3, 3, 3, 3]
    grid = atom_grid_table(gt[0], atoms[0])
    assert grid.loc[A3, "planner"] == "70_or_more"
    assert grid.loc[A3, "planner_status"] == "disagree"
    assert grid.loc[A3, "device_log_status"] == "null"
    # long tables (as in the store) back to arrays
    gt_long = pd.DataFrame([(personas.seed[i], personas.persona_id[i], q.qid, q.labels[gt[i, j]])
                            for i in range(2) for j, q in enumerate(QUESTIONS)],
                           columns=["seed", "persona_id", "question_id", "answer"])
    at_long = pd.DataFrame([(personas.seed[i], personas.persona_id[i], q.qid, s,
                             q.labels[atoms[i, j, k]] if atoms[i, j, k] >= 0 else None)
                            for i in range(2) for j, q in enumerate(QUESTIONS)
                            for k, s in enumerate(SOURCES)],
                           columns=["seed", "persona_id", "question_id", "source", "value"])
    g2, a2 = label_arrays(personas, gt_long, at_long)
    np.testing.assert_array_equal(g2, gt)
    np.testing.assert_array_equal(a2, atoms)


# ---------------------------------------------------------------- the full protocol
def evidence_for(p: int, **arrays):
    """A ResolverEvidence where every pair passes (ii), (iii), (v), unless overridden."""
    from core.evaluation.walkthrough import ResolverEvidence

    shape = (p, len(QIDS))
    base = {"dsnbf_correct": np.ones(shape, bool), "dsnbf_margin": np.full(shape, 0.2),
            "reference_wrong": np.ones(shape, bool), "reference": "majority_vote",
            "other_correct": np.zeros(shape, bool), "llm_divergence": None}
    base.update(arrays)
    return ResolverEvidence(**base)


@pytest.mark.parametrize("override, failing", [
    ({"dsnbf_correct": False}, "f_dsnbf"),
    ({"reference_wrong": False}, "f_reference"),
    ({"dsnbf_margin": 0.5}, "f_margin"),
    ({"dsnbf_margin": 0.05}, "f_margin"),
    ({"dsnbf_margin": np.nan}, "f_margin"),
])
def test_the_resolver_filters_exclude_what_they_should(override, failing):
    gt, atoms, personas = blank(1)
    set_cell(gt, atoms, 0, A3, 1, GOOD)
    (name, value), = override.items()
    arrays = {name: np.full((1, len(QIDS)), value)}
    assert len(select_walkthrough(gt, atoms, personas, evidence=evidence_for(1))) == 1
    out = select_walkthrough(gt, atoms, personas, evidence=evidence_for(1, **arrays),
                             keep_all=True, qid="A3")
    assert not out.iloc[0][failing] and out.iloc[0]["rank"] == -1


def test_the_margin_window_includes_its_ends():
    gt, atoms, personas = blank(2)
    for i in range(2):
        set_cell(gt, atoms, i, A3, 1, GOOD)
    margin = np.full((2, len(QIDS)), 0.2)
    margin[0, A3], margin[1, A3] = 0.08, 0.35
    out = select_walkthrough(gt, atoms, personas, evidence=evidence_for(2, dsnbf_margin=margin))
    assert len(out) == 2 and out["f_margin"].all()


def test_another_fusion_method_correct_is_a_soft_preference():
    # p00: planner and self-report shifted, and a correct fusion method (3 preferences);
    # p01 and p02: the planner shift only, and only p02 has a correct fusion method, which
    # must lift it over p01 (the persona-id tiebreak alone would put p01 first).
    gt, atoms, personas = blank(3)
    set_cell(gt, atoms, 0, A3, 1, GOOD)
    set_cell(gt, atoms, 1, A3, 1, [1, 2, 0, 1, -1])
    set_cell(gt, atoms, 2, A3, 1, [1, 2, 0, 1, -1])
    other = np.zeros((3, len(QIDS)), bool)
    other[0, A3] = other[2, A3] = True
    out = select_walkthrough(gt, atoms, personas, evidence=evidence_for(3, other_correct=other))
    assert out["persona_id"].tolist() == ["p00", "p02", "p01"]
    assert out["n_prefs"].tolist() == [3, 2, 1]
    assert out["pref_fusion"].tolist() == [True, True, False]


def test_resolver_evidence_reads_cached_predictions_and_llm_answers():
    from core.evaluation.walkthrough import resolver_evidence

    personas = pd.DataFrame({"seed": [1, 1], "persona_id": ["p0", "p1"]})
    gt = np.zeros((2, len(QIDS)), np.int8)  # A1: GT 20_or_more (code 0)
    labels = QUESTIONS[0].labels

    def rows(method, answers, margins=(np.nan, np.nan)):
        return pd.DataFrame({"method": method, "seed": [1, 1], "persona_id": ["p0", "p1"],
                             "question_id": "A1", "answer": answers, "margin": margins})

    preds = pd.concat([rows("dsnbf", [labels[0], labels[1]], (0.2, 0.9)),
                       rows("majority_vote", [labels[1], labels[0]]),
                       rows("nbf", [labels[0], labels[2]])])
    ev = resolver_evidence(personas, gt, preds)
    assert ev.reference == "majority_vote" and ev.llm_divergence is None
    assert ev.dsnbf_correct[:, 0].tolist() == [True, False]
    np.testing.assert_allclose(ev.dsnbf_margin[:, 0], [0.2, 0.9])
    assert np.isnan(ev.dsnbf_margin[:, 1]).all()            # no row for A2
    assert ev.reference_wrong[:, 0].tolist() == [True, False]
    assert not ev.reference_wrong[:, 1].any()               # no MV answer, not "wrong"
    assert ev.other_correct[:, 0].tolist() == [True, True]  # NBF for p0, MV for p1
    llm = pd.DataFrame({"model": ["gpt-5.4", "gemini-3.1-pro", "gpt-5.4"],
                        "seed": [1, 1, 1], "persona_id": ["p0", "p0", "p1"],
                        "question_id": "A1", "answer": [labels[0], "made_up", labels[0]]})
    ev = resolver_evidence(personas, gt, preds, llm)
    assert ev.reference == "llm"
    assert ev.reference_wrong[:, 0].tolist() == [True, False]  # out-of-space answer = wrong
    assert ev.llm_divergence[:, 0].tolist() == [True, False]   # p1 has no Gemini answer
    assert resolver_evidence(personas, gt, preds[preds["method"] != "dsnbf"]) is None


def test_resolver_table_orders_methods_and_names_outcomes():
    from core.evaluation.walkthrough import resolver_table

    preds = pd.DataFrame({
        "method": ["dsnbf_skip", "majority_vote", "dsnbf", "random"],
        "question_id": "A3", "answer": ["40_to_69", "70_or_more", "40_to_69", "less_than_40"],
        "confidence": [0.5, 0.6, 0.5, 0.33], "skipped": [True, False, False, False],
        "margin": [0.1, np.nan, 0.1, np.nan]})
    out = resolver_table(preds, qid="A3", gt_label="40_to_69")
    assert out["method"].tolist() == ["random", "majority_vote", "dsnbf", "dsnbf_skip"]
    assert out["outcome"].tolist() == ["wrong", "wrong", "correct",
                                       "abstains (would be right)"]
    assert out["selective"].tolist() == [False, False, False, True]
    assert resolver_table(preds, qid="A1", gt_label="x").empty
