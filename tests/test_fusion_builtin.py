"""The built-in sets (core/fusion/builtin.py), NQ-open's judgements and label-source board
(core/fusion/nq.py), and the store's fusion tables (issue 21 points 5 and 6).

The NQ-open figures are recomputed here independently from ``data/nq301/items.parquet`` with
plain pandas (a plurality per question, the verdict of the chosen answer looked up among the
rows that gave it), never copied from the output.
"""

from __future__ import annotations

import re
from collections import Counter

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.fusion.builtin import (
    BUILTIN_SETS,
    NQ_LABEL_COLUMNS,
    RESOLVERS,
    STORE_SETS,
    builtin_set,
    load_builtin,
    predictions_frame,
    run_resolvers,
    score_board,
    store_tables,
)
from core.fusion.claims import Claims
from core.fusion.importer import read_claims
from core.fusion.normalise import CaseWhitespace, NumericTolerance
from core.fusion.nq import (
    judgements_from_rows,
    label_source_board,
    nq_open_board,
    nq_open_judgements,
    source_labels,
)
from core.fusion.vote import majority_vote
from core.stats import wilson_interval
from core.store import FUSION_TABLES, connect, load_fusion, store_info

NQ = BUILTIN_SETS[-1].path


@pytest.fixture(scope="module")
def nq_rows() -> pd.DataFrame:
    return pd.read_parquet(NQ)


# -- the records -------------------------------------------------------------------------------


def test_records_are_complete_and_url_safe():
    keys = [b.key for b in BUILTIN_SETS]
    assert keys == ["flight", "flight_all", "mozafari", "adult", "nq_open"]
    for b in BUILTIN_SETS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", b.key)
        assert b.path.is_file(), b.path
        assert len(re.findall(r"[.!?](?:\s|$)", b.about)) == 2, b.about
        assert b.title and b.citation and b.licence
        assert builtin_set(b.key) is b
    assert builtin_set("nq_open").truth_columns == ("human", "exact_match")
    assert all(b.truth_columns == ("truth",) for b in BUILTIN_SETS[:4])


@pytest.mark.parametrize("bad", ["", "Flight", "nq", "../flight", None])
def test_an_unknown_key_names_the_valid_ones_in_one_line(bad):
    with pytest.raises(ValueError) as err:
        load_builtin(bad)
    msg = str(err.value)
    assert "\n" not in msg and all(b.key in msg for b in BUILTIN_SETS)


def test_an_unknown_label_column_is_refused():
    with pytest.raises(ValueError, match="label columns are human, exact_match"):
        load_builtin("nq_open", truth="truth")
    with pytest.raises(ValueError, match="label columns are truth"):
        load_builtin("flight", truth="human")


@pytest.mark.parametrize("key", ["flight", "mozafari", "adult"])
def test_a_conflict_set_is_its_file_read_by_the_importer(key):
    a = load_builtin(key).claims
    b = read_claims(builtin_set(key).path).claims
    for f in ("item", "source", "claim", "truth"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert (a.items, a.sources, a.classes) == (b.items, b.sources, b.classes)


def test_scope_and_normalisers_are_passed_on():
    a = load_builtin("adult", scope="item").claims
    assert a.scope == "item"
    up = load_builtin("nq_open", normalise=[CaseWhitespace()])
    assert up.rules == (CaseWhitespace().rule,)
    # SQuAD-normalised answers are already trimmed and lower case: nothing merges
    a, b = nq_open_judgements(up), nq_open_judgements()
    assert np.array_equal(a.value, b.value, equal_nan=True) and a.disputed == b.disputed
    # a tolerance of 10 merges numeric answers ("1991" and "1995" …): never fewer disputes
    merged = nq_open_judgements(load_builtin("nq_open", normalise=[NumericTolerance(10)]))
    assert merged.item.size < b.item.size
    assert all(m >= d for m, d in zip(merged.disputed, b.disputed, strict=True))


# -- NQ-open as claims -------------------------------------------------------------------------


def test_nq_open_claims_are_questions_systems_and_normalised_answers(nq_rows):
    c = load_builtin("nq_open").claims
    assert (c.n_claims, c.n_items, c.n_sources) == (len(nq_rows), nq_rows["qid"].nunique(),
                                                    nq_rows["system"].nunique())
    assert c.n_items == 301 and c.n_sources == 12
    frame = c.to_frame()
    assert list(frame["item"]) == list(nq_rows["question"])
    assert list(frame["source"]) == list(nq_rows["system"])
    assert list(frame["claim"]) == list(nq_rows["answer_norm"])


@pytest.mark.parametrize("label", ["human", "exact_match"])
def test_nq_open_truth_is_the_most_claimed_right_answer(nq_rows, label):
    imp = load_builtin("nq_open", truth=label)
    c = imp.claims
    col = NQ_LABEL_COLUMNS[label]
    names = np.asarray((*c.classes, ""), object)
    truth = dict(zip(c.items, names[c.truth], strict=True))
    several = 0
    for question, rows in nq_rows.groupby("question", sort=False):
        right = Counter(rows.loc[rows[col] == 1, "answer_norm"])
        if not right:
            assert truth[question] == ""
            continue
        several += len(right) >= 2
        best = max(right.values())
        assert truth[question] == min(a for a, n in right.items() if n == best)
    assert f"{several} of 301 questions have several distinct right answers" in imp.warnings[-1]


# -- judgements and the board on a table small enough to check by hand -------------------------


@pytest.fixture()
def tiny():
    # items 0, 1, 2; sources 0, 1, 2; classes a, b, c
    c = Claims(item=[0, 0, 0, 1, 1, 1, 2, 2], source=[0, 1, 2, 0, 1, 2, 0, 1],
               claim=[0, 0, 1, 1, 2, 1, 2, 0], items=("q0", "q1", "q2"),
               sources=("s0", "s1", "s2"), classes=("a", "b", "c"))
    nan = np.nan
    rows = {"human": np.array([1, 1, 1, 1, 0, 0, nan, 0]),   # (q1, b) disputed: 1 and 0
            "exact": np.array([1, 1, 0, 0, 0, 0, 1, 0])}
    return c, judgements_from_rows(c, rows)


def test_judgements_combine_rows_and_mark_disputes(tiny):
    c, j = tiny
    got = j.lookup([0, 0, 1, 1, 2, 2, 0, 0], [0, 1, 1, 2, 2, 0, 2, -1])
    nan = np.nan
    want = np.array([[1, 1, nan, 0, nan, 0, nan, nan],
                     [1, 0, 0, 0, 1, 0, nan, nan]])
    assert np.array_equal(got, want, equal_nan=True)
    assert j.disputed == (1, 0)


def test_judgements_refuse_bad_verdicts(tiny):
    c, _ = tiny
    with pytest.raises(ValueError, match="row 2: a human verdict must be 0, 1 or missing"):
        judgements_from_rows(c, {"human": np.array([1, 2, 0, 0, 0, 0, 0, 0.0])})
    with pytest.raises(ValueError, match="8 entries"):
        judgements_from_rows(c, {"human": np.zeros(3)})


def test_board_counts_ranks_and_flips_by_hand(tiny):
    c, j = tiny
    results = {"A": np.array([0, 1, 2]),    # human: 1, disputed, unjudged -> 1/1; exact 1,0,1
               "B": np.array([1, 2, 0]),    # human: 1, 0, 0 -> 1/3; exact 0, 0, 0 -> 0/3
               "C": np.array([0, -1, 0])}   # human: 1, abstain, 0 -> 1/2; exact 1, -, 0 -> 1/2
    b = label_source_board(results, j)
    f = b.frame.set_index(["label", "method"])
    want = {("human", "A"): (1, 1), ("human", "B"): (1, 3), ("human", "C"): (1, 2),
            ("exact", "A"): (2, 3), ("exact", "B"): (0, 3), ("exact", "C"): (1, 2)}
    for key, (k, n) in want.items():
        assert (f.loc[key, "correct"], f.loc[key, "judged"]) == (k, n)
        lo, hi = wilson_interval(k, n)
        assert f.loc[key, ["low", "high"]].tolist() == pytest.approx([float(lo), float(hi)])
    assert f.loc[("human", "C"), "answered"] == 2
    assert [f.loc[("human", m), "rank"] for m in "ABC"] == [1, 3, 2]
    assert [f.loc[("exact", m), "rank"] for m in "ABC"] == [1, 3, 2]
    assert b.flipped == () and not b.flips
    # only the items 0 and 2: A (1/1 human, 2/2 exact), C (1/2, 1/2), B (1/2, 0/2)
    b2 = label_source_board(results, j, items=np.array([True, False, True]))
    t = b2.table().set_index("method")
    assert t.loc["B", "human_rank"] == t.loc["C", "human_rank"] == 2
    assert t.loc["B", "exact_rank"] == 3 and b2.flipped == ()


def test_a_flip_is_reported_with_the_leader_under_the_first_label(tiny):
    c, j = tiny
    sources = source_labels(c)
    assert list(sources) == ["s0", "s1", "s2"]
    assert sources["s2"].tolist() == [1, 1, -1]
    # s0 = a, b, c: human 1, disputed, unjudged -> 1/1; exact 1, 0, 1 -> 2/3 (as Y)
    # s1 = a, c, a: human 1, 0, 0 -> 1/3; exact 1, 0, 0 -> 1/3
    # s2 = b, b, -: human 1, disputed -> 1/1; exact 0, 0 -> 0/2
    # so s2 is ahead of s1 under human (1 > 1/3) and behind under exact (0 < 1/3): one flip
    b = label_source_board({"Y": np.array([0, 1, 2])}, j, sources=sources)
    f = b.frame.set_index(["label", "method"])
    assert (f.loc[("exact", "s2"), "correct"], f.loc[("exact", "s2"), "judged"]) == (0, 2)
    assert f.loc[("exact", "s2"), "kind"] == "source" and f.loc[("exact", "Y"), "kind"] == \
        "resolver"
    assert b.flipped == (("s2", "s1"),) and b.flips
    assert b.top == {"human": ("Y", "s0", "s2"), "exact": ("Y", "s0")}
    swapped = label_source_board({"Y": np.array([0, 1, 2])}, j, sources=sources,
                                 between=("exact", "human"))
    assert swapped.flipped == (("s1", "s2"),)
    assert list(swapped.table()["method"][:2]) == ["Y", "s0"]


def test_board_refuses_bad_arguments(tiny):
    c, j = tiny
    with pytest.raises(ValueError, match="same items"):
        label_source_board({"A": np.array([0, 1]), "B": np.array([0, 1, 2])}, j)
    with pytest.raises(ValueError, match="two of the label sources"):
        label_source_board({"A": np.array([0, 1, 2])}, j, between=("human", "human"))
    with pytest.raises(ValueError, match="both a resolver and a source"):
        label_source_board({"s0": np.array([0, 1, 2])}, j, sources=source_labels(c))


# -- the NQ-open board, recomputed independently ----------------------------------------------


def _verdicts(nq_rows, col):
    """(question, answer) → 1/0 when every judged row agrees, else absent."""
    g = nq_rows.dropna(subset=[col]).groupby(["question", "answer_norm"])[col]
    agree = g.agg(["min", "max"])
    agree = agree[agree["min"] == agree["max"]]
    return agree["min"].to_dict()


def _plurality(nq_rows):
    out = {}
    for question, rows in nq_rows.groupby("question", sort=False):
        n = Counter(rows["answer_norm"])
        best = max(n.values())
        out[question] = min(a for a, k in n.items() if k == best)
    return out


@pytest.fixture(scope="module")
def nq_board():
    return nq_open_board()


@pytest.mark.parametrize("label", ["human", "exact_match"])
def test_nq_open_majority_vote_scored_by_the_judgements(nq_rows, nq_board, label):
    verdict = _verdicts(nq_rows, NQ_LABEL_COLUMNS[label])
    judged = [verdict[(q, a)] for q, a in _plurality(nq_rows).items() if (q, a) in verdict]
    row = nq_board.frame.set_index(["label", "method"]).loc[(label, "majority_vote")]
    assert (row["correct"], row["judged"]) == (sum(judged), len(judged))


@pytest.mark.parametrize("label", ["human", "exact_match"])
def test_nq_open_systems_scored_by_the_judgements(nq_rows, nq_board, label):
    verdict = _verdicts(nq_rows, NQ_LABEL_COLUMNS[label])
    f = nq_board.frame.set_index(["label", "method"])
    for system, rows in nq_rows.groupby("system"):
        v = [verdict[k] for k in zip(rows["question"], rows["answer_norm"], strict=True)
             if k in verdict]
        assert f.loc[(label, system), "kind"] == "source"
        assert (f.loc[(label, system), "correct"], f.loc[(label, system), "judged"]) == \
            (sum(v), len(v))


def test_nq_open_ranking_flips_between_people_and_exact_match(nq_rows, nq_board):
    """Seed 003 §5.1 on a fusion board: the few-shot InstructGPT system is ahead of the fused
    majority vote by people's judgement and behind it by exact match."""
    acc = {}
    for label, col in NQ_LABEL_COLUMNS.items():
        verdict = _verdicts(nq_rows, col)
        rows = nq_rows[nq_rows["system"] == "InstructGPT_fewshot"]
        v = [verdict[k] for k in zip(rows["question"], rows["answer_norm"], strict=True)
             if k in verdict]
        mv = [verdict[k] for k in _plurality(nq_rows).items() if k in verdict]
        acc[label] = (np.mean(v), np.mean(mv))
    assert acc["human"][0] > acc["human"][1] and acc["exact_match"][0] < acc["exact_match"][1]
    assert ("InstructGPT_fewshot", "majority_vote") in nq_board.flipped
    assert nq_board.between == ("human", "exact_match")
    t = nq_board.table()
    assert list(t["human_rank"]) == sorted(t["human_rank"])


def test_nq_open_board_without_the_systems_holds_the_label_blind_resolvers(nq_board):
    b = nq_open_board(sources=False, methods=["majority_vote", "glad"])
    assert set(b.frame["method"]) == {"majority_vote", "glad"}
    assert set(b.frame["kind"]) == {"resolver"}
    resolvers = set(nq_board.frame.loc[nq_board.frame["kind"] == "resolver", "method"])
    assert resolvers == {m for m, r in RESOLVERS.items() if not r.supervised}


def test_nq_open_judgements_refuse_other_claims():
    with pytest.raises(ValueError, match="not NQ-open's"):
        nq_open_judgements(load_builtin("adult"))


# -- boards and predictions of any table --------------------------------------------------------


def test_score_board_against_truth_and_against_majority_vote():
    c = load_builtin("mozafari").claims
    res = run_resolvers(c, ["majority_vote", "dawid_skene_baseline", "naive_bayes"])
    board = score_board(c, res).set_index("method")
    mv = majority_vote(c)
    k = int((mv.labels == c.truth).sum())
    assert (board.loc["majority_vote", "correct"], board.loc["majority_vote", "items"]) == \
        (k, c.n_items)
    held = ~res["naive_bayes"].params["train"]
    assert board.loc["naive_bayes", "items"] == int(held.sum())
    assert board.loc["naive_bayes", "scored_on"] == "held-out gold items"
    blind = c.replace(truth=None)
    res = run_resolvers(blind, ["majority_vote", "dawid_skene_baseline"])
    assert "naive_bayes" not in run_resolvers(blind)
    board = score_board(blind, res).set_index("method")
    assert board.loc["majority_vote", "accuracy"] == 1.0
    agree = int((res["dawid_skene_baseline"].labels == mv.labels).sum())
    assert board.loc["dawid_skene_baseline", "correct"] == agree
    assert set(board["against"]) == {"majority_vote"}
    with pytest.raises(ValueError, match="no resolver 'mv'"):
        run_resolvers(c, ["mv"])


def test_predictions_frame_is_long_and_complete():
    c = load_builtin("adult").claims
    res = run_resolvers(c, ["majority_vote", "glad"])
    p = predictions_frame(c, res)
    assert list(p.columns) == ["item", "method", "label", "confidence"]
    assert len(p) == 2 * c.n_items
    mv = p[p["method"] == "majority_vote"]
    assert list(mv["label"]) == list(np.asarray(c.classes, object)[res["majority_vote"].labels])
    assert np.array_equal(mv["confidence"].to_numpy(), res["majority_vote"].confidence)


# -- the store ---------------------------------------------------------------------------------


def test_store_tables_hold_every_store_set():
    t = store_tables()
    assert set(t) == set(FUSION_TABLES)
    assert tuple(t["fusion_claims"]["dataset"].unique()) == STORE_SETS
    assert "flight_all" not in STORE_SETS
    for key in STORE_SETS:
        c = load_builtin(key).claims
        assert int((t["fusion_claims"]["dataset"] == key).sum()) == c.n_claims
    runs = t["fusion_runs"].set_index(["dataset", "method", "against"])
    c = load_builtin("flight").claims
    s = majority_vote(c).score(c)
    assert runs.loc[("flight", "majority_vote", "truth"), "correct"] == s["correct"]
    assert set(t["fusion_runs"].loc[t["fusion_runs"]["dataset"] == "nq_open", "against"]) == \
        {"human", "exact_match"}
    t["fusion_runs"].loc[:, "accuracy"] = -1.0  # a copy: the cache is untouched
    assert (store_tables()["fusion_runs"]["accuracy"] >= 0).all()
    with pytest.raises(ValueError, match="no built-in set"):
        store_tables(["nope"])


def test_the_built_store_holds_the_fusion_tables(small_store, tmp_path):
    con = connect(small_store)
    try:
        got = load_fusion(con, "flight")
        missing = load_fusion(con, "flight_all")
    finally:
        con.close()
    assert missing is None
    rebuilt = read_claims(got["fusion_claims"][["item", "source", "claim", "truth"]]).claims
    c = load_builtin("flight").claims
    assert np.array_equal(rebuilt.claim, c.claim) and np.array_equal(rebuilt.truth, c.truth)
    runs = got["fusion_runs"]
    assert list(runs["position"]) == list(range(len(runs)))
    assert list(runs["method"]) == [m for m in RESOLVERS]
    preds = got["fusion_predictions"]
    mv = preds[preds["method"] == "majority_vote"].set_index("item")["label"]
    want = majority_vote(c).label_names()
    assert [mv[i] for i in c.items] == list(want)
    # the tables are optional: a store without them is still a store
    copy = tmp_path / "old.duckdb"
    copy.write_bytes(small_store.read_bytes())
    con = duckdb.connect(str(copy))
    for t in FUSION_TABLES:
        with con.cursor() as cur:
            cur.execute(f"DROP TABLE {t}")
    con.close()
    assert store_info(copy).n_personas > 0
    con = connect(copy)
    try:
        assert load_fusion(con, "flight") is None
    finally:
        con.close()
