"""Resolvers on tiny hand-built atom tables, cross-checked against plain-loop versions."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.resolvers._bias import BIAS_TARGET, DIST
from core.resolvers._common import KQ, Split, check_atoms, pair_counts, sum_over_sources
from core.resolvers._fscore import f_beta
from core.resolvers.abf import ABF
from core.resolvers.baselines import (
    SSB,
    MajorityClass,
    MajorityVote,
    RandomGuess,
    SSBGlobal,
    source_reachability,
)
from core.resolvers.bcf import BCF
from core.resolvers.dawid_skene import DawidSkene
from core.resolvers.nbf import DSNBF, NBF
from core.testbed.questions import Q_INDEX, QUESTIONS

A1 = Q_INDEX["A1"]
PRO, PLA, SLF, OBJ, DEV = range(5)


def empty(n):
    return np.full((n, 18, 5), -1, np.int8), np.zeros((n, 18), np.int8)


def random_split(rng, n, p_null=0.4, with_difficulty=True):
    atoms = np.where(rng.random((n, 18, 5)) < p_null, -1,
                     np.floor(rng.random((n, 18, 5)) * KQ[None, :, None])).astype(np.int8)
    gt = np.floor(rng.random((n, 18)) * KQ[None, :]).astype(np.int8)
    # make sources informative: copy GT into half of the non-null cells
    copy = (atoms >= 0) & (rng.random(atoms.shape) < 0.5)
    atoms = np.where(copy, gt[..., None], atoms).astype(np.int8)
    diff = rng.integers(0, 3, n) if with_difficulty else None
    return Split(atoms, gt, diff)


# ------------------------------------------------------------------ input checks
def test_check_atoms_rejects_bad_shapes_and_codes():
    with pytest.raises(ValueError, match="shape"):
        check_atoms(np.zeros((2, 17, 5), np.int8))
    a, _ = empty(1)
    a[0, Q_INDEX["A1"], 0] = 3  # A1 has 3 labels
    with pytest.raises(ValueError, match="A1"):
        check_atoms(a)


@pytest.mark.parametrize("model", [RandomGuess(), MajorityClass(), SSB(), SSBGlobal(),
                                   MajorityVote(), BCF(), ABF(), NBF(), DSNBF(), DawidSkene()])
def test_predict_sees_atoms_only(model):
    params = list(inspect.signature(model.predict).parameters)
    assert params == ["atoms"]


# ------------------------------------------------------------------ majority vote
def test_majority_vote_plurality_confidence_and_empty_rows():
    atoms, _ = empty(3)
    atoms[0, A1, [PRO, PLA, SLF]] = [0, 0, 1]
    atoms[1, A1, [PRO, SLF]] = [2, 1]  # tie
    p = MajorityVote().predict(atoms)
    assert p.answer[0, A1] == 0 and math.isclose(p.confidence[0, A1], 2 / 3)
    assert p.answer[1, A1] in (1, 2) and p.confidence[1, A1] == 0.5
    assert 0 <= p.answer[2, A1] < 3 and math.isclose(p.confidence[2, A1], 1 / 3)


def test_majority_vote_ties_are_broken_both_ways():
    atoms, _ = empty(400)
    atoms[:, A1, PRO] = 0
    atoms[:, A1, SLF] = 2
    ans = MajorityVote().predict(atoms).answer[:, A1]
    assert set(ans) == {0, 2}
    assert 0.4 < (ans == 0).mean() < 0.6


# ------------------------------------------------------------------ SSB
def test_ssb_credits_nulls_at_chance_and_keeps_first_source_on_ties():
    atoms, gt = empty(6)
    gt[:, A1] = 1
    atoms[:, A1, SLF] = [1, 1, 0, 0, 0, 0]  # 2 correct: score 2
    # profile is null everywhere: 6 / 3 = 2 -> ties with self; profile comes first
    m = SSB().fit(Split(atoms, gt), None)
    assert m.source_[A1] == PRO
    atoms[:, A1, DEV] = [1, 1, 1, 0, 0, 0]  # 3 correct: beats both
    m = SSB().fit(Split(atoms, gt), None)
    assert m.source_[A1] == DEV
    assert math.isclose(m.accuracy_[A1], 0.5)


def test_ssb_skip_rules():
    atoms, gt = empty(8)
    atoms[:, :, DEV] = 0
    m = SSB(selective=True)
    m.source_ = np.full(18, DEV)
    m.accuracy_ = np.full(18, 0.9)
    m.theta_ = 0.6
    test, _ = empty(3)
    test[0, A1, DEV] = -1  # C1: chosen source null -> skip
    test[1, A1, [DEV, SLF, PLA]] = [0, 1, 1]  # agreement 1/3 < 0.6 -> skip
    test[2, A1, [DEV, SLF]] = [0, 0]  # agreement 1 -> answer
    p = m.predict(test)
    assert list(p.skipped[:, A1]) == [True, True, False]
    assert p.method == "ssb_skip"


def test_ssb_global_uses_one_source_everywhere():
    rng = np.random.default_rng(0)
    sp = random_split(rng, 60)
    m = SSBGlobal().fit(sp, None)
    assert len(set(m.source_)) == 1


# ------------------------------------------------------------------ F0.5
@pytest.mark.parametrize("tp,fp,fn,expected", [
    (8, 2, 4, 1.25 * 0.8 * (8 / 12) / (0.25 * 0.8 + 8 / 12)),
    (0, 0, 5, 0.0),
    (5, 0, 0, 1.0),
    (0, 3, 0, 0.0),
])
def test_f_beta_closed_form(tp, fp, fn, expected):
    assert math.isclose(float(f_beta(tp, fp, fn)), expected, rel_tol=1e-12)


# ------------------------------------------------------------------ NBF, cross-checked
def loop_nbf_log_posterior(train, atoms, T):
    out = np.full(atoms.shape[:2] + (4,), -np.inf)
    n = len(train.gt)
    for j, q in enumerate(QUESTIONS):
        k = q.k
        for w in range(k):
            prior = math.log((np.sum(train.gt[:, j] == w) + 1) / (n + k))
            for i in range(len(atoms)):
                ll = 0.0
                for s in range(5):
                    v = atoms[i, j, s]
                    if v < 0:
                        continue
                    src = train.atoms[:, j, s]
                    n_w = np.sum((src >= 0) & (train.gt[:, j] == w))
                    n_vw = np.sum((src == v) & (train.gt[:, j] == w))
                    ll += math.log((1 + n_vw) / (k + n_w))
                out[i, j, w] = prior + T * ll
    return out


def test_nbf_posterior_matches_a_plain_loop():
    rng = np.random.default_rng(1)
    tr, ca, te = random_split(rng, 40), random_split(rng, 20), random_split(rng, 5)
    m = NBF().fit(tr, ca)
    z = loop_nbf_log_posterior(tr, te.atoms, m.T_)
    valid = np.isfinite(z)
    expect = np.exp(z - np.where(valid, z, -np.inf).max(-1, keepdims=True))
    expect = np.where(valid, expect, 0)
    expect /= expect.sum(-1, keepdims=True)
    np.testing.assert_allclose(m.posterior(te.atoms), expect, atol=1e-12)
    pred = m.predict(te.atoms)
    np.testing.assert_array_equal(pred.answer, np.where(valid, z, -np.inf).argmax(-1))


def test_nbf_without_atoms_predicts_the_prior_mode():
    rng = np.random.default_rng(2)
    tr, ca = random_split(rng, 30), random_split(rng, 10)
    tr.gt[:, A1] = 2
    m = NBF().fit(tr, ca)
    atoms, _ = empty(2)
    assert list(m.predict(atoms).answer[:, A1]) == [2, 2]


def test_nbf_argmax_ties_go_to_the_first_label():
    atoms, gt = empty(6)
    gt[:, A1] = [0, 1, 2, 0, 1, 2]  # flat prior, no atoms
    m = NBF().fit(Split(atoms, gt), Split(atoms, gt))
    assert m.predict(atoms).answer[0, A1] == 0


def test_batched_matmul_helpers_equal_einsum():
    rng = np.random.default_rng(3)
    oh = (rng.random((7, 18, 5, 4)) < 0.3).astype(float)
    table = rng.random((18, 5, 4, 4))
    w = rng.random((7, 18, 4))
    np.testing.assert_allclose(sum_over_sources(oh, table),
                               np.einsum("nqsv,qsvw->nqw", oh, table))
    np.testing.assert_allclose(pair_counts(oh, w), np.einsum("nqsv,nqw->qsvw", oh, w))


# ------------------------------------------------------------------ DSNBF
def test_dsnbf_needs_train_difficulty_and_posterior_sums_to_one():
    rng = np.random.default_rng(4)
    tr, ca, te = random_split(rng, 45), random_split(rng, 15), random_split(rng, 6)
    with pytest.raises(ValueError, match="difficulty"):
        DSNBF().fit(Split(tr.atoms, tr.gt), ca)
    m = DSNBF().fit(tr, ca)
    p = m.predict(te.atoms)
    post = p.extra["difficulty_posterior"]
    np.testing.assert_allclose(post.sum(1), 1.0)
    np.testing.assert_allclose(p.extra["proba"].sum(-1), 1.0)
    assert m.eta_ in (3.0, 5.0, 8.0, 15.0) and 0.3 <= m.T_ <= 2.0


def test_dsnbf_is_persona_local():
    """A persona's prediction does not depend on who else is in the test batch."""
    rng = np.random.default_rng(5)
    tr, ca, te = random_split(rng, 45), random_split(rng, 15), random_split(rng, 8)
    m = DSNBF().fit(tr, ca)
    full = m.predict(te.atoms)
    perm = rng.permutation(8)
    shuffled = m.predict(te.atoms[perm])
    np.testing.assert_array_equal(shuffled.answer, full.answer[perm])
    np.testing.assert_allclose(shuffled.confidence, full.confidence[perm])
    np.testing.assert_array_equal(m.predict(te.atoms[:1]).answer, full.answer[:1])


# ------------------------------------------------------------------ BCF and ABF
def test_bcf_scores_match_a_plain_loop():
    rng = np.random.default_rng(6)
    tr = random_split(rng, 30)
    m = BCF().fit(tr)
    te = random_split(rng, 4)
    s = m.scores(te.atoms)
    w = 10 * (1 - m.delta_)
    for i in range(4):
        for j, q in enumerate(QUESTIONS):
            for v in range(q.k):
                expect = sum(w[src] for src in range(5)
                             if te.atoms[i, j, src] >= 0
                             and te.atoms[i, j, src] == BIAS_TARGET[j, v, src])
                assert math.isclose(s[i, j, v], expect), (i, j, v)


def test_bcf_follows_a_biased_planner():
    """All sources report one rank up; with the bias model BCF recovers the truth."""
    atoms, gt = empty(30)
    j = Q_INDEX["A3"]  # planner +1, self +1
    gt[:, j] = 0  # less_than_40, reported one rank up as 40_to_69
    atoms[:, j, PLA] = 1
    atoms[:, j, SLF] = 1
    m = BCF().fit(Split(atoms, gt))
    assert set(m.predict(atoms).answer[:, j]) == {0}
    assert set(MajorityVote().predict(atoms).answer[:, j]) == {1}
    # at the top of the scale the clamp makes the shift ambiguous: 2 explains 2 as well as 1
    atoms[:, j, PLA] = 2
    atoms[:, j, SLF] = 2
    assert set(m.predict(atoms).answer[:, j]) == {1, 2}


def test_abf_distance_table_and_fit_bounds():
    j = Q_INDEX["A2"]  # reversed bias order: 8_or_more, 4_to_7, 0_to_3
    assert DIST[j, 0, 2] == 1.0 and DIST[j, 0, 1] == 0.5
    jb = Q_INDEX["B2"]  # edge label: Hamming
    assert DIST[jb, 3, 0] == 1.0 and DIST[jb, 0, 2] == 1.0
    rng = np.random.default_rng(7)
    tr, ca = random_split(rng, 40), random_split(rng, 20)
    m = ABF(selective=True).fit(tr, ca)
    assert np.all((m.params_[:4] >= 0) & (m.params_[:4] <= 0.5))
    assert 0.5 <= m.alpha_ <= 10 and 0 <= m.pi_ <= 1
    atoms, _ = empty(2)
    atoms[1, A1, SLF] = 1  # one active source: always answers
    p = m.predict(atoms)
    assert p.skipped[0, A1] and not p.skipped[1, A1]


# ------------------------------------------------------------------ reachability, DS
def test_source_reachability_rules():
    atoms, gt = empty(3)
    gt[:, A1] = 2
    atoms[0, A1, [PLA, DEV]] = [0, 2]  # reachable
    atoms[1, A1, [PRO, PLA, SLF]] = [1, 0, 0]  # plurality 0
    p = source_reachability(atoms, gt)
    assert list(p.answer[:, A1][:2]) == [2, 0] and p.skipped[2, A1]
    s = source_reachability(atoms, gt, skip_on_miss=True)
    assert list(s.skipped[:, A1]) == [False, True, True]


def test_source_reachability_plurality_tie_goes_to_first_source():
    atoms, gt = empty(1)
    gt[0, A1] = 2
    atoms[0, A1, [PLA, SLF]] = [1, 0]
    assert source_reachability(atoms, gt).answer[0, A1] == 1


def test_dawid_skene_never_reads_labels():
    rng = np.random.default_rng(8)
    tr = random_split(rng, 50)
    flipped = Split(tr.atoms, (tr.gt + 1) % 3)
    a = DawidSkene().fit(tr).predict(tr.atoms)
    b = DawidSkene().fit(flipped).predict(tr.atoms)
    np.testing.assert_array_equal(a.answer, b.answer)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_every_resolver_answers_inside_the_answer_space(seed, p_null):
    rng = np.random.default_rng(seed)
    tr, ca = random_split(rng, 24, p_null), random_split(rng, 9, p_null)
    te = random_split(rng, 5, p_null)
    for model in (MajorityClass(), SSB(selective=True), MajorityVote(), BCF(),
                  NBF(selective=True), DawidSkene()):
        p = model.fit(tr, ca).predict(te.atoms)
        assert (p.answer >= 0).all() and (p.answer < KQ[None, :]).all(), model
        assert ((p.confidence >= 0) & (p.confidence <= 1 + 1e-12)).all(), model


def test_all_null_training_atoms_do_not_break_any_fit():
    rng = np.random.default_rng(9)
    atoms, gt = empty(12)
    gt[:] = np.floor(rng.random((12, 18)) * KQ[None, :]).astype(np.int8)
    tr = Split(atoms, gt, rng.integers(0, 3, 12))
    for model in (SSB(selective=True), BCF(), ABF(selective=True), NBF(selective=True),
                  DSNBF(selective=True), DawidSkene()):
        p = model.fit(tr, tr).predict(atoms)
        assert (p.answer >= 0).all() and (p.answer < KQ[None, :]).all(), model


def test_nbf_skip_accounting_counts_every_skip_as_a_false_negative():
    """NBF/DSNBF calibration (spec §2.12): a skip adds FN += 1 even when it was wrong."""
    from core.resolvers.nbf import THETA, selective_f05_grid

    pred = np.zeros((4, 18), np.int8)
    gt = np.zeros((4, 18), np.int8)
    gt[2:, :] = 1  # rows 2, 3 wrong
    proba = np.zeros((4, 18, 4))
    proba[:, :, 0] = np.array([0.9, 0.9, 0.5, 0.5])[:, None]  # wrong rows: small margins
    proba[:, :, 1] = np.array([0.1, 0.1, 0.45, 0.45])[:, None]
    n_act = np.full((4, 18), 2)
    f = selective_f05_grid(pred, proba, gt, n_act)
    i = int(np.searchsorted(THETA, 0.1))  # skips the two wrong rows only
    # TP = 2·18, FP = 0, FN = 2·18 (wrong skips still count): P = 1, R = 0.5
    assert f[i] == pytest.approx(1.25 * 0.5 / (0.25 + 0.5))
    n_act[2:, :] = 1  # fewer than 2 active sources: never skipped
    assert selective_f05_grid(pred, proba, gt, n_act)[i] == pytest.approx(
        1.25 * 0.5 / (0.25 * 0.5 + 1.0))


def test_ssb_skip_accounting_counts_a_skip_by_its_correctness():
    """SSB+SKIP calibration (spec §2.12): a skip adds FN += correct (not += 1), so here the
    best θ skips the four 75 %-agreement rows, where NBF's accounting would skip nothing."""
    train, gt_tr = empty(5)
    train[:, A1, DEV] = 0  # the device is the best A1 source
    tr = Split(train, gt_tr)
    cal, gt = empty(5)
    cal[:, A1, [DEV, PRO, PLA, SLF]] = [[0, 0, 0, 1], [0, 0, 0, 1],  # right, agreement .75
                                        [1, 1, 1, 0], [1, 1, 1, 0],  # wrong, agreement .75
                                        [0, -1, -1, 0]]  # right, agreement 1
    m = SSB(selective=True).fit(tr, Split(cal, gt))
    assert m.source_[A1] == DEV
    assert m.theta_ == pytest.approx(0.8)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_sorted_f05_grid_equals_the_direct_count(seed):
    """The cumulative-sum F0.5 grid equals a direct count at every θ (two implementations)."""
    from core.resolvers.nbf import THETA, selective_f05_grid

    rng = np.random.default_rng(seed)
    n = 7
    pred = rng.integers(0, 3, (2, n, 18)).astype(np.int8)
    gt = rng.integers(0, 3, (n, 18)).astype(np.int8)
    proba = rng.dirichlet(np.ones(4), (2, n, 18))
    proba = np.round(proba, 2)  # ties at grid values
    n_act = rng.integers(0, 4, (n, 18))
    got = selective_f05_grid(pred, proba, gt, n_act)
    top2 = np.sort(np.where(np.arange(4) < np.array([q.k for q in QUESTIONS])[:, None],
                            proba, -np.inf), -1)
    marg = top2[..., -1] - top2[..., -2]
    for g in range(2):
        for i, theta in enumerate(THETA):
            skip = (n_act >= 2) & (marg[g] < theta)
            c = pred[g] == gt
            tp, fp, fn = (c & ~skip).sum(), (~c & ~skip).sum(), skip.sum()
            assert got[g, i] == pytest.approx(float(f_beta(tp, fp, fn)), abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_softmax_is_bit_identical_to_numpys_reductions(k, seed):
    """The slab-wise max/sum of ``_softmax_fast`` must not move any fitted grid point."""
    from core.resolvers.nbf import _softmax_fast

    rng = np.random.default_rng(seed)
    z = rng.normal(scale=30, size=(6, 5, 18, k))
    z[..., -1][rng.random(z.shape[:-1]) < 0.3] = -1e30  # padded labels
    ref = z - z.max(-1, keepdims=True)
    ref = np.exp(ref) / np.exp(ref).sum(-1, keepdims=True)
    assert np.array_equal(_softmax_fast(z.copy()), ref)
