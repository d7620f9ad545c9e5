"""Resolvers on hand-computable tables and their invariants (issue 21)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.fusion.claims import Claims
from core.fusion.dawid_skene import dawid_skene
from core.fusion.dependence import accu_depen, dependence_probability
from core.fusion.glad import glad
from core.fusion.importer import claims_from_frame
from core.fusion.naive_bayes import naive_bayes, random_split
from core.fusion.one_coin import one_coin_em
from core.fusion.selective import risk_coverage, selective
from core.fusion.synthetic import add_copies, synthetic_claims
from core.fusion.vote import majority_vote, weighted_vote


def table(rows, truth=None, scope="auto") -> Claims:
    frame = pd.DataFrame(rows, columns=["item", "source", "claim"])
    if truth is not None:
        frame["truth"] = frame["item"].map(truth).fillna("")
    return claims_from_frame(frame, scope=scope).claims


# -- closed forms ---------------------------------------------------------------------------

def test_majority_vote_shares_and_tie_rules():
    c = table([("a", "x", "B"), ("a", "y", "A"), ("a", "z", "B"),
               ("b", "x", "B"), ("b", "y", "A")])
    r = majority_vote(c)
    assert r.label_names().tolist() == ["B", "A"]  # b ties: smallest claim
    np.testing.assert_allclose(r.posterior_matrix(), [[1 / 3, 2 / 3], [0.5, 0.5]])
    assert r.params["tied"].tolist() == [False, True]
    assert majority_vote(c, tie="first_seen").label_names().tolist() == ["B", "B"]
    ab = majority_vote(c, tie="abstain")
    assert ab.labels.tolist() == [1, -1] and ab.confidence.tolist() == [pytest.approx(2 / 3), 0]
    rnd = [majority_vote(c, tie="random", rng=np.random.default_rng(s)).labels[1]
           for s in range(20)]
    assert set(rnd) == {0, 1}
    with pytest.raises(ValueError, match="rng"):
        majority_vote(c, tie="random")


def test_weighted_vote_closed_form():
    c = table([("a", "x", "A"), ("a", "y", "B"), ("a", "z", "B")])
    r = weighted_vote(c, np.array([3.0, 1.0, 1.0]))
    assert r.label_names().tolist() == ["A"] and r.confidence[0] == pytest.approx(0.6)


def test_naive_bayes_two_sources_by_hand():
    # train: x right on both items, y wrong on item t2; score item q where x says 0, y says 1
    rows = [("t1", "x", "0"), ("t1", "y", "0"), ("t2", "x", "1"), ("t2", "y", "0"),
            ("q", "x", "0"), ("q", "y", "1")]
    c = table(rows, truth={"t1": "0", "t2": "1"}, scope="global")
    r = naive_bayes(c, train=np.array([False, True, True]))  # items q, t1, t2
    # prior (n_c + 1)/(N + K) = (1/2+... ) : one truth 0, one truth 1 -> 1/2 each
    # x: P(0|0) = (1+1)/(1+2) = 2/3, P(0|1) = (0+1)/(1+2) = 1/3
    # y: P(1|0) = (0+1)/(1+2) = 1/3, P(1|1) = (0+1)/(1+2) = 1/3
    p0, p1 = 0.5 * (2 / 3) * (1 / 3), 0.5 * (1 / 3) * (1 / 3)
    np.testing.assert_allclose(r.posterior_matrix()[0], [p0 / (p0 + p1), p1 / (p0 + p1)])
    assert r.params["train"].tolist() == [False, True, True]
    one = naive_bayes(c, train=np.array([False, True, True]), model="one_coin")
    ax, ay = (2 + 1) / (2 + 2), (1 + 1) / (2 + 2)  # x right 2/2, y right 1/2
    s0, s1 = ax * (1 - ay), (1 - ax) * ay
    assert one.posterior_matrix()[0, 0] == pytest.approx(s0 / (s0 + s1))


def test_dawid_skene_one_round_by_hand():
    # a: x=0, y=0; b: x=0, y=1. MV q_a = (1, 0), q_b = (.5, .5), prior (.75, .25).
    # e_x[0, ·] = (1, 1); e_y[0, 0] = 1/1.5, e_y[1, 0] = .5/1.5, e_y[0, 1] ≈ 2e-10, e_y[1, 1] ≈ 1
    c = table([("a", "x", "0"), ("a", "y", "0"), ("b", "x", "0"), ("b", "y", "1")],
              scope="global")
    r = dawid_skene(c, n_iter=1)
    qa = np.array([0.75 * 2 / 3, 0.25 * 1e-10 / (0.5 + 1e-10)])
    np.testing.assert_allclose(r.posterior_matrix()[0], qa / qa.sum(), rtol=1e-9)
    np.testing.assert_allclose(r.posterior_matrix()[1], [0.5, 0.5], rtol=1e-9)
    assert r.label_names().tolist() == ["0", "0"]  # b ties: first seen
    assert r.iterations == 1 and not r.converged
    conf = r.params["confusion"]
    np.testing.assert_allclose(conf[1, :, 0], [2 / 3, 1 / 3])


@pytest.mark.parametrize("cap, dense", [(10**6, True), (8, True), (7, False), (0, False)])
def test_dawid_skene_keeps_triples_above_the_dense_cap(monkeypatch, cap, dense):
    # 2 sources x 2 classes: S*K^2 = 8, so the dense form is kept up to a cap of 8
    import core.fusion.dawid_skene as ds

    c = table([("a", "x", "0"), ("a", "y", "0"), ("b", "x", "0"), ("b", "y", "1")],
              scope="global")
    full = dawid_skene(c, n_iter=3).params
    monkeypatch.setattr(ds, "DENSE_CONFUSION_CAP", cap)
    p = dawid_skene(c, n_iter=3).params
    assert ("confusion" in p) is dense and ("confusion_value" in p) is not dense
    if not dense:  # the triples are the dense table's entries; every other entry is 0
        rebuilt = np.zeros_like(full["confusion"])
        rebuilt[p["confusion_source"], p["confusion_claimed"], p["confusion_true"]] = \
            p["confusion_value"]
        np.testing.assert_array_equal(rebuilt, full["confusion"])
    np.testing.assert_array_equal(p["accuracy"], full["accuracy"])


def test_dependence_probability_reads_false_agreement():
    # five agreements: on true values they are weak evidence, on false values overwhelming
    same_true = dependence_probability(5, 0, 0, 0.8, 0.8, n_false=10)
    same_false = dependence_probability(0, 5, 0, 0.8, 0.8, n_false=10)
    differ = dependence_probability(0, 0, 20, 0.8, 0.8, n_false=10)
    assert differ < 0.01 < same_true < 0.5 < 0.999 < same_false
    # by hand: independent .64^5, copying (.8·.8 + .2·.64)^5, prior odds .2/.8
    odds = 0.25 * (0.768 / 0.64) ** 5
    assert same_true == pytest.approx(odds / (1 + odds))


# -- invariants ---------------------------------------------------------------------------

RESOLVERS = {
    "mv": lambda c: majority_vote(c),
    "one_coin": lambda c: one_coin_em(c),
    "one_coin_ck": lambda c: one_coin_em(c, variant="crowdkit"),
    "ds": lambda c: dawid_skene(c),
    "ds_base": lambda c: dawid_skene(c, variant="baseline", n_iter=20),
    "glad": lambda c: glad(c, n_iter=5),
    "accu": lambda c: accu_depen(c, dependence=False),
    "depen": lambda c: accu_depen(c, n_iter=20),
}


@st.composite
def small_tables(draw, scope="global"):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_sources = draw(st.integers(2, 6))
    return synthetic_claims(rng, n_items=draw(st.integers(3, 25)), n_sources=n_sources,
                            n_classes=draw(st.integers(2, 4)),
                            claims_per_item=draw(st.integers(1, n_sources)), scope=scope)


def relabel(c: Claims, perm: np.ndarray) -> Claims:
    """Class code k becomes perm[k] (names keep their sorted order)."""
    return c.replace(claim=perm[c.claim], truth=perm[c.truth])


def rename_sources(c: Claims, perm: np.ndarray) -> Claims:
    return c.replace(source=perm[c.source])


@pytest.mark.parametrize("name", RESOLVERS)
@settings(max_examples=15, deadline=None)
@given(c=small_tables(), data=st.data())
def test_posteriors_sum_to_one_and_confidence_is_the_chosen_posterior(name, c, data):
    r = RESOLVERS[name](c)
    np.testing.assert_allclose(r.candidates.segment_sum(r.posterior), 1.0, atol=1e-9)
    assert np.all((r.posterior >= 0) & (r.posterior <= 1 + 1e-12))
    P = r.posterior_matrix()
    np.testing.assert_allclose(P[np.arange(c.n_items), r.labels], r.confidence)
    assert np.all(r.confidence >= P.max(1) - 1e-12)


@pytest.mark.parametrize("name", [n for n in RESOLVERS if n != "glad"])
@settings(max_examples=15, deadline=None)
@given(c=small_tables(), data=st.data())
def test_label_permutation_equivariance(name, c, data):
    perm = np.array(data.draw(st.permutations(range(c.n_classes))))
    a = RESOLVERS[name](c).posterior_matrix()
    b = RESOLVERS[name](relabel(c, perm)).posterior_matrix()
    np.testing.assert_allclose(b[:, perm], a, atol=1e-8)


@pytest.mark.parametrize("name", [n for n in RESOLVERS if n not in ("glad", "depen")])
@settings(max_examples=15, deadline=None)
@given(c=small_tables(), data=st.data())
def test_source_permutation_invariance(name, c, data):
    perm = np.array(data.draw(st.permutations(range(c.n_sources))))
    a = RESOLVERS[name](c)
    b = RESOLVERS[name](rename_sources(c, perm))
    np.testing.assert_allclose(b.posterior, a.posterior, atol=1e-8)
    assert (a.labels == b.labels).all()


@settings(max_examples=25, deadline=None)
@given(c=small_tables(scope="item"))
def test_duplicating_every_source_leaves_majority_vote_unchanged(c):
    doubled = c
    for s in range(c.n_sources):
        doubled = add_copies(doubled, doubled.sources.index(c.sources[s]), 1)
    a, b = majority_vote(c), majority_vote(doubled)
    assert (a.labels == b.labels).all()
    np.testing.assert_allclose(a.posterior, b.posterior)
    assert (a.params["tied"] == b.params["tied"]).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [2, 3])
def test_copies_of_a_wrong_source_flip_majority_vote_but_not_the_dependence_method(seed, k):
    """k exact copies of a bad source beside five fair ones (the copies stay a minority;
    docs/fusion.md states what happens when they outnumber the fair sources)."""
    rng = np.random.default_rng(seed)
    acc = np.r_[np.full(5, 0.75), 0.2]  # five fair sources and one bad one (the last)
    c = synthetic_claims(rng, n_items=300, n_sources=6, n_classes=4, claims_per_item=6,
                         accuracy=acc)
    bad = c.n_sources - 1
    copied = add_copies(c, bad, k)
    mv0, mv1 = majority_vote(c), majority_vote(copied)
    d0, d1 = accu_depen(c), accu_depen(copied)
    mv_flips = np.mean(mv0.labels != mv1.labels)
    dep_flips = np.mean(d0.labels != d1.labels)
    assert mv_flips > 0.15
    assert dep_flips < 0.02
    assert c.accuracy(d1.labels) > c.accuracy(mv1.labels) + 0.1
    names = copied.sources
    copies = [names.index(n) for n in names if n.startswith(c.sources[bad])]
    D = d1.params["dependence"]
    assert D[np.ix_(copies, copies)][~np.eye(len(copies), dtype=bool)].min() > 0.99


# -- gold, priors, selective ------------------------------------------------------------------

@pytest.fixture(scope="module")
def synth():
    return synthetic_claims(np.random.default_rng(7), n_items=400, n_sources=8, n_classes=3,
                            claims_per_item=3)


@pytest.mark.parametrize("fit", [dawid_skene, one_coin_em, glad, accu_depen,
                                 lambda c, **kw: one_coin_em(c, variant="crowdkit", **kw)])
def test_gold_items_are_clamped(fit, synth):
    gold = np.zeros(synth.n_items, bool)
    gold[:100] = True
    r = fit(synth, gold=gold)
    assert (r.labels[gold] == synth.truth[gold]).all()
    np.testing.assert_allclose(r.confidence[gold], 1.0)
    assert (r.params["gold"] == gold).all()


def test_gold_helps_dawid_skene_on_the_other_items(synth):
    gold = np.zeros(synth.n_items, bool)
    gold[:200] = True
    free = dawid_skene(synth)
    semi = dawid_skene(synth, gold=gold)
    assert synth.accuracy(semi.labels, ~gold) >= synth.accuracy(free.labels, ~gold) - 0.01


def test_fixed_prior_is_kept(synth):
    r = dawid_skene(synth, prior=[0.5, 0.25, 0.25])
    np.testing.assert_allclose(r.params["prior"], [0.5, 0.25, 0.25])
    with pytest.raises(ValueError, match="prior"):
        dawid_skene(synth, prior=[1.0, 1.0, 0.0])


def test_gold_under_item_scope_adds_an_unclaimed_truth_as_candidate():
    c = table([("a", "x", "1"), ("a", "y", "2"), ("b", "x", "3"), ("b", "y", "3")],
              truth={"a": "9", "b": "3"}, scope="item")
    r = dawid_skene(c, gold=True)
    assert r.label_names().tolist() == ["9", "3"]


def test_naive_bayes_scores_out_of_sample(synth):
    train = random_split(synth, 0.5, np.random.default_rng(0))
    r = naive_bayes(synth, train=train)
    test = r.score(synth, ~train)
    assert test["n"] == synth.n_items - train.sum() and test["accuracy"] > 0.6
    assert test["low"] < test["accuracy"] < test["high"]
    with pytest.raises(ValueError, match="no split named"):
        naive_bayes(synth, train="train")


def test_selective_reaches_the_target_accuracy_on_calibration(synth):
    r = dawid_skene(synth)
    sel = selective(r, synth, target_accuracy=0.95)
    answered = sel.result.answered
    assert synth.accuracy(sel.result.labels, answered) >= 0.95
    # the next lower threshold would miss the target
    curve = risk_coverage(r, synth)
    k = np.flatnonzero(curve.threshold == sel.threshold)[0]
    assert k + 1 == curve.threshold.size or curve.accuracy[k + 1] < 0.95
    cov = selective(r, target_coverage=0.5)
    assert cov.coverage >= 0.5 and (cov.result.confidence >= cov.threshold).sum() \
        == cov.result.answered.sum()
    none = selective(r, synth, target_accuracy=1.0, calibration=np.ones(synth.n_items, bool))
    assert none.coverage <= 1.0
    assert 0 <= curve.aurc() <= 1
    with pytest.raises(ValueError, match="exactly one"):
        selective(r, synth)
