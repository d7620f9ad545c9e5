"""The "Your data" page's result objects (``core.fusion.views``): each is checked against the
diagnostics it is built from, or against a direct count on the claims, never against typed-in
numbers."""

from __future__ import annotations

import gzip
import io
import pickle

import numpy as np
import pandas as pd
import pytest

from core.fusion.builtin import load_builtin
from core.fusion.dawid_skene import DENSE_CONFUSION_CAP
from core.fusion.diagnostics import compare_at_coverage, disagreement, source_summary
from core.fusion.normalise import CaseWhitespace, NumericTolerance, TimeTolerance
from core.fusion.nq import label_source_board, nq_open_judgements, source_labels
from core.fusion.synthetic import add_copies, synthetic_claims
from core.fusion.views import (
    METHODS,
    board_view,
    contradicted_view,
    copy_clusters,
    copy_view,
    fit_builtin,
    fit_builtin_with,
    fit_fusion,
    guess_columns,
    import_frame,
    item_claims,
    label_view,
    method,
    normalisers,
    pair_view,
    predictions_frame,
    read_table,
    reliability_data,
    source_view,
    what_if_items,
    what_if_view,
    why_view,
)


@pytest.fixture(scope="module")
def flight():
    return fit_fusion(load_builtin("flight"))


@pytest.fixture(scope="module")
def copied():
    """A bad source copied four times among eight fair ones (the copies outvote the truth)."""
    rng = np.random.default_rng(5)
    acc = np.r_[0.35, np.full(8, 0.75)]
    base = synthetic_claims(rng, n_items=400, n_sources=9, n_classes=3, claims_per_item=9,
                            accuracy=acc)
    return add_copies(base, 0, 4)


def test_every_resolver_runs_and_is_named(flight):
    assert flight.methods == tuple(m.key for m in METHODS)
    assert not flight.skipped
    assert flight.train is not None and 0 < flight.train.sum() < flight.claims.gold.sum()
    with pytest.raises(ValueError, match="no resolver 'nope'"):
        method("nope")


def test_the_board_is_each_results_score_and_compare_at_coverage(flight):
    b = board_view(flight, flight.methods, coverage=0.8)
    assert b.measure == "accuracy"
    for key in flight.methods:
        items = ~flight.train if key == "nb" else None
        want = flight.results[key].score(flight.claims, items)
        row = b.row(key)
        assert (row["items"], row["correct"]) == (want["n"], want["correct"])
        assert row["low"] == pytest.approx(want["low"]) and row["high"] == pytest.approx(
            want["high"])
        at = compare_at_coverage({key: flight.results[key]}, flight.claims, 0.8,
                                 items=flight.scored(key))[key]
        got = b.at_coverage.set_index("method").loc[key]
        assert (got["n"], got["answered"], got["correct"]) == (at["n"], at["answered"],
                                                               at["correct"])
    assert b.best == b.table.loc[b.table["accuracy"].idxmax(), "method"]
    with pytest.raises(ValueError, match="coverage"):
        board_view(flight, ["mv"], coverage=0)
    with pytest.raises(ValueError, match="at least one resolver"):
        board_view(flight, [])


def test_without_truth_the_board_measures_agreement_with_majority_vote(copied):
    blind = copied.replace(truth=None)
    fit = fit_fusion(blind)
    assert "nb" in fit.skipped and "nb" not in fit.methods
    b = board_view(fit, fit.methods)
    assert b.measure == "agreement" and b.at_coverage is None
    mv = fit.results["mv"].labels
    for key in fit.methods:
        assert b.row(key)["correct"] == int((fit.results[key].labels == mv).sum())
    assert b.row("mv")["accuracy"] == 1.0


def test_copy_clusters_find_exact_copies_and_nothing_else(copied):
    groups = copy_clusters(copied)
    names = [{copied.sources[s] for s in g} for g in groups]
    assert names == [{"s0", *(f"s0~copy{j}" for j in range(1, 5))}]


def test_the_copy_view_counts_what_majority_vote_did_with_the_copies(copied):
    fit = fit_fusion(copied)
    view = copy_view(fit)
    head = view.headline
    assert head is not None and head.size == 5 and head.agreement == 1.0
    c = copied
    s0 = c.sources.index("s0")
    rows = c.source == s0
    claim = np.full(c.n_items, -1)
    claim[c.item[rows]] = c.claim[rows]
    mv, dep = fit.results["mv"].labels, fit.results["accu_depen"].labels
    wrong = (claim >= 0) & (claim != c.truth)
    out = wrong & (mv == claim)
    assert head.wrong == int(wrong.sum()) and head.outvoted == int(out.sum()) > 0
    assert head.recovered == int((out & (dep == c.truth)).sum())
    assert view.mv == pytest.approx(c.accuracy(mv))
    assert view.dependent == pytest.approx(c.accuracy(dep))
    assert head.one_voice > view.mv  # five votes counted as one: the copies stop winning
    assert set(head.examples) <= {c.items[i] for i in np.flatnonzero(out)}


def test_flights_headline_cluster_agrees_on_every_shared_item_and_outvotes_the_truth(flight):
    view = copy_view(flight)
    head = view.headline
    assert head is not None and head.outvoted > 0 and head.recovered > 0
    c = flight.claims
    frame = c.to_frame()
    wide = frame[frame["source"].isin(head.members)].pivot(index="item", columns="source",
                                                           values="claim")
    for a in head.members:
        for b in head.members:
            if a == b:
                continue
            both = wide[[a, b]].dropna()
            assert (both[a] == both[b]).all() and len(both) >= head.shared
    assert view.dependent > view.mv  # the dependence-aware method beats the plain vote
    assert view.clusters[0] is head
    assert [k.label for k in view.clusters] == list("ABCDE"[:len(view.clusters)])


def test_sources_match_source_summary_and_sort_by_the_interval(flight):
    sv = source_view(flight, copies=copy_view(flight))
    summ = source_summary(flight.claims, flight.results[sv.reference])
    t = sv.table.set_index("source")
    for s, name in enumerate(flight.claims.sources):
        assert t.loc[name, "checked"] == summ.gold_claims[s]
        assert t.loc[name, "correct"] == summ.gold_correct[s]
        assert t.loc[name, "estimated"] == pytest.approx(summ.estimated[s])
    lows = sv.table["low"].to_numpy(float)
    assert np.all(np.diff(lows[np.isfinite(lows)]) <= 1e-12)
    assert set(sv.table["group"]) - {""} == {k.label for k in copy_view(flight).clusters}


def test_pair_view_counts_same_false_claims_directly(flight):
    pv = pair_view(flight, copies=copy_view(flight), max_sources=12)
    assert len(pv.sources) == 12 and pv.n_sources == flight.claims.n_sources
    assert pv.false_kind == "observed" and pv.dependence is not None
    c = flight.claims
    f = c.to_frame()
    f = f[f["truth"] != ""]
    a, b = pv.sources[0], pv.sources[5]
    x = f[f["source"] == a].set_index("item")["claim"]
    y = f[f["source"] == b].set_index("item")["claim"]
    t = f.drop_duplicates("item").set_index("item")["truth"]
    shared = x.index.intersection(y.index)
    same_false = ((x[shared] == y[shared]) & (x[shared] != t[shared])).sum()
    assert pv.false_shared[0, 5] == len(shared)
    assert pv.false_same[0, 5] == pytest.approx(same_false / len(shared))
    assert np.isnan(pv.false_same[3, 3])


def test_why_matches_disagreement(flight):
    w = why_view(flight, "dawid_skene", copies=copy_view(flight))
    d = disagreement(flight.claims, flight.results["mv"], flight.results["dawid_skene"])
    assert (w.changed, w.fixed, w.broken) == (d["n_changed"], d["n_fixed"], d["n_broken"])
    assert len(w.items) == w.changed
    assert (w.items["verdict"] == "broken").sum() == w.broken
    assert list(w.items["verdict"][:w.broken]) == ["broken"] * w.broken
    assert w.sources["misled"].sum() >= w.broken  # each broken item has its source(s)
    assert w.acc_b == pytest.approx(flight.claims.accuracy(flight.results["dawid_skene"].labels))


def test_the_what_if_moves_the_posterior_the_right_way(flight):
    c = flight.claims
    head = copy_view(flight).headline
    item = head.examples[0]
    here = item_claims(c, item)
    drop = [s for s in head.members if s in set(here["source"])]
    base = what_if_view(c, "mv", item)
    assert base.change == "no change" and (base.table["before"] == base.table["after"]).all()
    off = what_if_view(c, "mv", item, drop=drop)
    group_value = here.set_index("source").loc[drop[0], "claim"]
    assert off.moved(group_value) < 0 and off.after_label == off.truth != off.before_label
    other = next(v for v in here["claim"] if v != group_value)
    flip = what_if_view(c, "mv", item, flip=(drop[0], other))
    assert flip.moved(other) > 0 and flip.moved(group_value) < 0
    with pytest.raises(ValueError, match="supervised|not one"):
        what_if_view(c, "nb", item)
    with pytest.raises(ValueError, match="no such item"):
        what_if_view(c, "mv", "no such item")


def test_the_what_if_leaves_out_items_only_the_dropped_sources_claim(flight):
    c = flight.claims
    per = c.claims_per_item()
    lone = int(np.flatnonzero(per == 1)[0])
    only = c.sources[int(c.source[c.item == lone][0])]
    target = next(i for i in what_if_items(flight) if only in set(item_claims(c, i)["source"])
                  and len(item_claims(c, i)) > 1)
    got = what_if_view(c, "one_coin", target, drop=[only])
    assert got.left_out >= 1
    with pytest.raises(ValueError, match="without a claim"):
        what_if_view(c, "mv", c.items[lone], drop=[only])


def test_reliability_data_pairs_confidence_with_correctness(flight):
    r = reliability_data(flight, ["mv", "accu_depen"])
    assert list(r.table["method"]) == ["mv", "accu_depen"]
    for key in ("mv", "accu_depen"):
        p, y = r.confidence[key], r.correct[key]
        assert p.shape == y.shape and set(np.unique(y)) <= {0.0, 1.0}
        row = r.table.set_index("method").loc[key]
        assert row["brier"] == pytest.approx(np.mean((p - y) ** 2))
        assert row["accuracy"] == pytest.approx(
            flight.claims.accuracy(flight.results[key].labels))
    with pytest.raises(ValueError, match="known truth"):
        reliability_data(fit_fusion(flight.claims.replace(truth=None), methods=["mv"]), ["mv"])


def test_contradicted_answers_are_counted_per_resolver(copied):
    fit = fit_fusion(copied, methods=["mv", "dawid_skene"])
    cv = contradicted_view(fit, fit.methods)
    assert cv.counts.set_index("method").loc["mv", "items"] == 0  # a vote picks a claim
    assert list(cv.items.columns) == ["item", "method", "answer", "claims"]


def test_nq_open_is_judged_per_answer_and_both_labels_are_shown():
    imported, fit = fit_builtin("nq_open")
    assert fit.judgements is not None and fit.label == "human"
    b = board_view(fit, ["mv"])
    j = nq_open_judgements(imported)
    want = label_source_board({"mv": fit.results["mv"]}, j).frame
    human = want[want["label"] == "human"].iloc[0]
    assert (b.row("mv")["correct"], b.row("mv")["items"]) == (human["correct"],
                                                             human["judged"])
    lv = label_view(fit)
    assert lv.labels == ("human", "exact_match")
    assert "naive Bayes" not in set(lv.table["name"])
    full = label_source_board({method(k).name: fit.results[k] for k in fit.methods
                               if k != "nb"}, j, sources=source_labels(fit.claims))
    assert set(lv.flipped) <= set(full.flipped)
    _, em = fit_builtin("nq_open", label="exact_match")
    assert board_view(em, ["mv"]).row("mv")["accuracy"] < b.row("mv")["accuracy"]


def test_predictions_have_every_resolvers_answer_and_confidence(flight):
    p = predictions_frame(flight)
    assert len(p) == flight.claims.n_items
    for key in flight.methods:
        assert list(p[key]) == list(flight.results[key].label_names())
        assert f"{key}_confidence" in p
    assert p["nb_trained_on"].sum() == flight.train.sum()


# ----------------------------------------------------------------------------- uploads
def test_read_table_reads_csv_gzip_and_parquet():
    frame = pd.DataFrame({"item": ["a", "a", "b"], "source": ["x", "y", "x"],
                          "claim": ["1", "2", "1"]})
    csv = frame.to_csv(index=False).encode()
    pd.testing.assert_frame_equal(read_table(csv), frame)
    pd.testing.assert_frame_equal(read_table(gzip.compress(csv), name="t.csv.gz"), frame)
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    pd.testing.assert_frame_equal(read_table(buf.getvalue(), name="t.parquet"), frame)


@pytest.mark.parametrize("data, match", [
    (b"", "empty"), (b"   \n", "empty"), (b"item,source\n\xff\xfe,x\n", "line 2: not UTF-8"),
    (b"just_one\na\nb\n", "one column"), (b"PAR1 not really", "Parquet"),
    (b"\x1f\x8b broken", "gzip"), (b"a,b\n", "no rows"),
    (b'a,b\n"1,2\n', "CSV"),
])
def test_read_table_refuses_with_one_line(data, match):
    with pytest.raises(ValueError, match=match) as err:
        read_table(data)
    assert "\n" not in str(err.value)


def test_guessing_the_layout_and_the_columns():
    assert guess_columns(["Task", "worker", "label", "gold"]) == (
        "long", {"item": "Task", "source": "worker", "claim": "label", "truth": "gold",
                 "split": None, "weight": None})
    layout, guess = guess_columns(["flight", "site_a", "site_b"])
    assert layout == "wide" and guess["item"] == "flight"


def test_normalisers_are_explicit_and_in_a_stated_order():
    assert normalisers() == ()
    got = normalisers(case=True, numeric=0.5, minutes=10)
    assert [type(n) for n in got] == [CaseWhitespace, TimeTolerance, NumericTolerance]
    assert got[1].minutes == 10 and got[2].tol == 0.5


def test_import_frame_maps_columns_and_refuses_a_repeated_pair():
    frame = pd.DataFrame({"q": ["a", "a", "b", "b"], "w": ["x", "y", "x", "y"],
                          "ans": ["1", "2", "1", "1"], "t": ["1", "1", "1", "1"]})
    got = import_frame(frame, layout="long",
                       columns={"item": "q", "source": "w", "claim": "ans", "truth": "t",
                                "split": None, "weight": None})
    assert got.claims.n_claims == 4 and got.claims.has_truth
    bad = pd.concat([frame, frame.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="row 5: source 'x' already claimed item 'a'"):
        import_frame(bad, layout="long", columns={"item": "q", "source": "w", "claim": "ans"})


@pytest.mark.parametrize("minutes", [0, 10, 20])
def test_a_shared_fit_of_the_flight_day_stays_small(minutes):
    # the Your data page keeps up to 12 fits per server, shared by every visitor; with a time
    # tolerance the flight day has 702 classes, and dense Dawid-Skene tables of 35 sources
    # made one fit 139 MB pickled (issue 24). The pickle is what a worker sends and a
    # replica holds.
    imported, fit = fit_builtin_with("flight", minutes=minutes)
    params = fit.results["dawid_skene"].params
    n_sources, n_classes = fit.claims.n_sources, len(fit.claims.classes)
    assert ("confusion" in params) == (n_sources * n_classes ** 2 <= DENSE_CONFUSION_CAP)
    assert len(pickle.dumps((imported, fit))) < 4 * 2**20
