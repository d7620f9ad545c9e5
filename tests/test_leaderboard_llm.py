"""The imported LLM answers' leaderboard rows (``core.evaluation.llm_rows``), their place in the
board view and the forest figure, and the sample persona of the release end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.evaluation.leaderboard_view import board_view, imported_view
from core.evaluation.llm_rows import LLM_KIND, RESOLVER_KIND, llm_rows, load_llm_inputs
from core.evaluation.metrics import cluster_bootstrap
from core.evaluation.paper import PAPER_FACTORIAL, PAPER_LLM_FORCED, PAPER_LLM_SELECTIVE
from core.evaluation.run import run_testbed
from core.evaluation.tables import (
    main_table,
    per_difficulty_table,
    per_type_table,
    reachability_slices,
    selective_table,
)
from core.figures.leaderboard import IMPORTED_COLOR, forest_figure
from core.store import connect, query_df
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import QIDS, QUESTIONS
from tests.test_palette_contrast import colour_problems

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"  # CC BY 4.0
FIRST = [q.labels[0] for q in QUESTIONS]   # every person's ground truth below
SECOND = [q.labels[1] for q in QUESTIONS]  # a wrong answer inside the answer space


def _truth(people, seed: int = 7) -> pd.DataFrame:
    return pd.DataFrame([(seed, p, q, lab) for p in people for q, lab in zip(QIDS, FIRST,
                                                                             strict=True)],
                        columns=["seed", "persona_id", "question_id", "answer"])


def _answers(model: str, variant: str, person: str, labels, skip: bool, *, seed: int = 7,
             qids=QIDS) -> list[tuple]:
    by_q = dict(zip(QIDS, labels, strict=True))
    return [(model, variant, seed, person, q, by_q[q], skip) for q in qids]


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "variant", "seed", "persona_id", "question_id",
                                       "answer", "would_skip"])


@pytest.fixture(scope="module")
def tiny():
    """Four people; ``m``/``direct``: two right, one outside the answer space on every
    question, one wrong and skipping every question; ``m``/``schema-aware``: p1 only,
    without the first six questions."""
    rows = (_answers("m", "direct", "p1", FIRST, False)
            + _answers("m", "direct", "p2", FIRST, False)
            + _answers("m", "direct", "p3", ["not a label"] * 18, False)
            + _answers("m", "direct", "p4", SECOND, True)
            + _answers("m", "schema-aware", "p1", FIRST, False, qids=QIDS[6:]))
    return _frame(rows), _truth(["p1", "p2", "p3", "p4"])


def test_forced_accuracy_counts_out_of_space_and_skipped_answers_as_given(tiny):
    answers, truth = tiny
    r = llm_rows(answers, truth, b=200).frame.set_index("variant")
    d = r.loc["direct"]
    assert d["kind"] == LLM_KIND and d["method"] == "llm:m:direct"
    assert d["accuracy"] == pytest.approx(100 * 36 / 72)  # k / n: p1 and p2 right
    assert (d["n_clusters"], d["n_instances"], d["n_correct"]) == (4, 72, 36)
    assert (d["n_out_of_space"], d["n_missing"], d["n_skipped"]) == (18, 0, 18)
    # the interval is the board's persona-cluster bootstrap over the four people
    grid = np.repeat(np.array([[1.0], [1.0], [0.0], [0.0]]), 18, axis=1)
    ci = cluster_bootstrap(grid, b=200, seed=42)
    assert (d["ci_low"], d["ci_high"]) == pytest.approx((100 * ci.low, 100 * ci.high))
    assert d["ci_low"] < d["accuracy"] < d["ci_high"]


def test_skip_flags_give_coverage_and_selective_accuracy(tiny):
    answers, truth = tiny
    d = llm_rows(answers, truth, b=50).frame.set_index("variant").loc["direct"]
    assert d["coverage"] == pytest.approx(75.0)  # p4 skips all 18 of its 72 instances
    assert d["selective_accuracy"] == pytest.approx(100 * 2 / 3)  # 2 right of 3 answered
    assert d["forced_accuracy"] == pytest.approx(50.0)
    assert d["gain_over_forced"] == pytest.approx(100 * 2 / 3 - 50.0)


def test_a_missing_question_is_wrong_and_unanswered_and_one_person_is_a_point(tiny):
    answers, truth = tiny
    s = llm_rows(answers, truth, b=100).frame.set_index("variant").loc["schema-aware"]
    assert (s["n_clusters"], s["n_missing"], s["n_correct"]) == (1, 6, 12)
    assert s["accuracy"] == pytest.approx(100 * 12 / 18)
    assert s["ci_low"] == pytest.approx(s["accuracy"]) == pytest.approx(s["ci_high"])
    assert s["coverage"] == pytest.approx(100 * 12 / 18)
    assert s["selective_accuracy"] == pytest.approx(100.0)  # questions never answered drop


def test_without_skip_flags_there_is_no_selective_number(tiny):
    answers, truth = tiny
    rows = llm_rows(answers.drop(columns=["would_skip"]), truth, b=50)
    assert rows.frame["selective_accuracy"].isna().all() and rows.frame["coverage"].isna().all()
    assert not rows.has_skip_flags
    nulls = llm_rows(answers.assign(would_skip=None), truth, b=50)
    assert not nulls.has_skip_flags
    # the forced numbers do not depend on the flags
    assert rows.frame["accuracy"].tolist() == llm_rows(answers, truth, b=50).frame[
        "accuracy"].tolist()


def test_people_outside_the_test_split_are_ignored(tiny):
    answers, truth = tiny
    extra = _frame(_answers("m", "direct", "train_person", SECOND, False)
                   + _answers("other", "direct", "train_person", FIRST, False))
    rows = llm_rows(pd.concat([answers, extra], ignore_index=True), truth, b=50)
    assert rows.frame["model"].tolist() == ["m", "m"]  # "other" answered nobody of the test
    assert rows.frame.set_index("variant").loc["direct", "n_clusters"] == 4
    assert llm_rows(extra.iloc[:0], truth).empty


def test_rows_carry_the_papers_numbers_in_the_papers_order(tiny):
    _, truth = tiny
    rows = []
    for model, variant in (("zzz", "direct"), ("struct_llm", "oracle"),
                           ("gemini_p2", "schema-aware"), ("gpt-5.4", "schema-aware"),
                           ("gpt-5.4", "direct")):
        rows += _answers(model, variant, "p1", FIRST, False)
    r = llm_rows(_frame(rows), truth, b=20)
    f = r.frame
    assert list(zip(f["model"], f["variant"], strict=True)) == [
        ("gpt-5.4", "direct"), ("gpt-5.4", "schema-aware"), ("gemini_p2", "schema-aware"),
        ("struct_llm", "oracle"), ("zzz", "direct")]
    g = f.set_index(["model", "variant"])
    assert g.loc[("gpt-5.4", "direct"), "paper"] == PAPER_LLM_FORCED[("gpt-5.4", "direct")]
    assert g.loc[("gpt-5.4", "direct"), "delta_paper"] == pytest.approx(100 - 68.6)
    assert (g.loc[("gpt-5.4", "direct"), ["paper_selective", "paper_coverage"]].tolist()
            == list(PAPER_LLM_SELECTIVE[("gpt-5.4", "direct")]))
    assert g.loc[("struct_llm", "oracle"), "paper"] == PAPER_FACTORIAL[("struct_llm",
                                                                        "readout")][0]
    assert np.isnan(g.loc[("zzz", "direct"), "paper"])
    assert g.loc[("gpt-5.4", "direct"), "label"] == "GPT-5.4 (Direct prompt)"
    assert g.loc[("zzz", "direct"), "label"] == "zzz (Direct prompt)"
    assert r.models == ("GPT-5.4", "Gemini 3.1 Pro", "zzz") and r.people == "1 person"


def test_paper_llm_numbers_are_percentages_of_known_folders():
    assert PAPER_LLM_FORCED[("gpt-5.4", "direct")] == 68.6
    assert set(PAPER_LLM_SELECTIVE) <= set(PAPER_LLM_FORCED)
    for sel, cov in PAPER_LLM_SELECTIVE.values():
        assert 0 < sel <= 100 and 0 < cov <= 100
    assert all(0 < v < 100 for v in PAPER_LLM_FORCED.values())


@pytest.mark.parametrize("change, fragment", [
    (lambda a, t: (a, t.iloc[1:]), "has 17 of the 18 questions"),
    (lambda a, t: (pd.concat([a, a.iloc[:1]]), t), "twice"),
    (lambda a, t: (a.assign(question_id=a["question_id"].replace("A1", "Z9")), t),
     "unknown question"),
    (lambda a, t: (a.drop(columns=["answer"]), t), "lack column"),
    (lambda a, t: (a, t.drop(columns=["seed"])), "lack column"),
])
def test_bad_inputs_raise_with_a_useful_message(tiny, change, fragment):
    answers, truth = change(*tiny)
    with pytest.raises(ValueError, match=fragment):
        llm_rows(answers, truth, b=10)


def test_bad_bootstrap_size_raises(tiny):
    with pytest.raises(ValueError, match="b must be >= 1, got 0"):
        llm_rows(*tiny, b=0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_accuracy_is_k_over_18n_and_inside_its_interval(n, seed):
    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(n)]
    rows = []
    for p in people:
        pick = rng.integers(0, 3, 18)  # right, wrong in space, outside the space
        keep = rng.random(18) < 0.9     # some questions missing
        labels = [FIRST[i] if k == 0 else SECOND[i] if k == 1 else "??"
                  for i, k in enumerate(pick)]
        rows += [r for r, k in zip(_answers("m", "direct", p, labels, bool(rng.random() < .3)),
                                   keep, strict=True) if k]
    if not rows:
        return
    f = llm_rows(_frame(rows), _truth(people), b=30, seed=seed % 1000).frame.iloc[0]
    assert f["accuracy"] == pytest.approx(100 * f["n_correct"] / (18 * f["n_clusters"]))
    assert f["ci_low"] - 1e-9 <= f["accuracy"] <= f["ci_high"] + 1e-9
    assert f["n_out_of_space"] + f["n_missing"] <= f["n_instances"] - f["n_correct"]
    assert 0 <= f["coverage"] <= 100


# ---------------------------------------------------------------- the board and the figure
@pytest.fixture(scope="module")
def parts():
    runs = run_testbed(generate(TestbedConfig(seeds=(3, 4), personas_per_difficulty=8)))
    tables = {"selective": selective_table(runs), "per_type": per_type_table(runs),
              "per_difficulty": per_difficulty_table(runs), "slices": reachability_slices(runs)}
    return main_table(runs, b=50), tables


def test_board_view_appends_llm_rows_after_the_resolvers(parts, tiny):
    main, tables = parts
    llm = llm_rows(*tiny, b=50)
    plain = board_view(main, tables, methods=["dsnbf", "nbf"], b=50)
    both = board_view(main, tables, methods=["dsnbf", "nbf"], b=50, llm=llm)
    assert "kind" not in plain.forced.shown and plain.llm is None and plain.imported is None
    f = both.forced.shown
    assert f["kind"].tolist() == [RESOLVER_KIND] * 2 + [LLM_KIND] * 2
    assert f["label"].tolist()[2:] == llm.frame["label"].tolist()
    pd.testing.assert_frame_equal(f.iloc[:2][list(plain.forced.shown.columns)],
                                  plain.forced.shown)  # resolver rows untouched
    assert f["n_clusters"].tolist() == [main["n_clusters"].max()] * 2 + [4, 1]
    assert both.headlines == plain.headlines
    assert len(both.forced.full) == len(main) + 2  # the download has every row
    s = both.selective.shown
    assert s["kind"].tolist()[-2:] == [LLM_KIND] * 2
    assert s["selective_accuracy"].tolist()[-2:] == llm.frame["selective_accuracy"].tolist()
    empty = llm_rows(tiny[0].iloc[:0], tiny[1])
    assert board_view(main, tables, methods=["dsnbf"], b=50, llm=empty).llm is None


def test_imported_view_shows_the_rows_alone(tiny):
    llm = llm_rows(*tiny, b=50)
    v = imported_view(llm)
    assert v.table.shown["label"].tolist() == llm.frame["label"].tolist()
    assert {"n_clusters", "selective_accuracy", "coverage"} <= set(v.table.shown.columns)
    assert "coverage" not in imported_view(llm_rows(tiny[0].drop(columns=["would_skip"]),
                                                    tiny[1])).table.shown
    with pytest.raises(ValueError, match="no imported LLM answers"):
        imported_view(llm_rows(tiny[0].iloc[:0], tiny[1]))


def test_forest_figure_draws_llm_rows_in_their_own_style(parts, tiny):
    main, _ = parts
    llm = llm_rows(*tiny, b=50).frame
    plain = forest_figure(main, methods=["dsnbf", "nbf"])
    fig = forest_figure(main, methods=["dsnbf", "nbf"], imported=llm)
    assert len(plain.data) == 3 and len(fig.data) == 4
    trace = fig.data[3]
    assert trace.name.startswith("imported model answers")
    assert list(trace.y) == llm.sort_values("accuracy", kind="stable")["label"].tolist()
    assert trace.marker.color == IMPORTED_COLOR and trace.marker.symbol == "square-open"
    assert set(fig.layout.yaxis.categoryarray) == {*plain.layout.yaxis.categoryarray,
                                                   *llm["label"]}
    assert not colour_problems(fig)
    only = forest_figure(main, methods=[], imported=llm)  # no resolver chosen: still drawn
    assert list(only.data[3].y) == list(trace.y)


# ---------------------------------------------------------------- the released sample
def test_the_sample_personas_gpt_rows_match_a_count_by_hand(sample_store):
    con = connect(sample_store)
    try:
        answers, truth = load_llm_inputs(con)
        gt = query_df(con, "SELECT question_id, answer FROM ground_truth")
        raw = query_df(con, "SELECT variant, question_id, answer, would_skip FROM llm_answers "
                            "WHERE model = 'gpt-5.4'")
    finally:
        con.close()
    assert len(truth) == 18 and len(gt) == 18
    rows = llm_rows(answers, truth, b=200)
    by_q = dict(zip(gt["question_id"], gt["answer"], strict=True))
    f = rows.frame.set_index(["model", "variant"])
    for variant in ("direct", "schema-aware"):
        mine = raw[raw["variant"] == variant]
        right = sum(a == by_q[q] for q, a in zip(mine["question_id"], mine["answer"],
                                                 strict=True))
        answered = [(q, a) for q, a, s in zip(mine["question_id"], mine["answer"],
                                              mine["would_skip"], strict=True) if not s]
        row = f.loc[("gpt-5.4", variant)]
        assert row["n_clusters"] == 1 and row["n_instances"] == 18
        assert row["accuracy"] == pytest.approx(100 * right / 18)
        assert row["ci_low"] == pytest.approx(row["accuracy"]) == pytest.approx(row["ci_high"])
        assert row["coverage"] == pytest.approx(100 * len(answered) / 18)
        # one answered instance per question at most: macro over answered questions
        assert row["selective_accuracy"] == pytest.approx(
            100 * np.mean([a == by_q[q] for q, a in answered]))
        assert row["paper"] == PAPER_LLM_FORCED[("gpt-5.4", variant)]
    assert rows.models == ("GPT-5.4",) and rows.people == "1 person"
    v = imported_view(rows)
    assert v.table.shown["label"].tolist() == ["GPT-5.4 (Direct prompt)",
                                               "GPT-5.4 (Schema-aware prompt)"]
