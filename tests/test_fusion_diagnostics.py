"""Diagnostics of a fusion (issue 21, point 4's core half)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.fusion.dawid_skene import dawid_skene
from core.fusion.dependence import accu_depen
from core.fusion.diagnostics import (
    compare_at_coverage,
    contradicted_items,
    disagreement,
    source_pairs,
    source_summary,
    what_if,
)
from core.fusion.importer import claims_from_frame
from core.fusion.synthetic import add_copies, synthetic_claims
from core.fusion.vote import majority_vote


@pytest.fixture(scope="module")
def synth():
    return synthetic_claims(np.random.default_rng(3), n_items=200, n_sources=6, n_classes=3,
                            claims_per_item=4)


def test_source_summary_counts_and_intervals(synth):
    r = majority_vote(synth)
    s = source_summary(synth, r)
    assert s.n_claims.sum() == synth.n_claims
    np.testing.assert_allclose(s.coverage, s.n_claims / synth.n_items)
    ok = synth.claim == synth.truth[synth.item]
    for j in range(synth.n_sources):
        assert s.gold_correct[j] == ok[synth.source == j].sum()
        assert s.low[j] <= s.accuracy[j] <= s.high[j]
    assert np.all((s.agreement >= 0) & (s.agreement <= 1))


def test_source_pairs_and_the_copy_signal(synth):
    copied = add_copies(synth, 0, 1)
    r = accu_depen(copied)
    p = source_pairs(copied, r)
    src, cp = copied.sources.index("s0"), copied.sources.index("s0~copy1")
    assert p.shared[src, cp] == p.same[src, cp] == (copied.source == src).sum()
    assert p.conflict[src, cp] == 0
    assert p.beyond_chance[src, cp] > 0.9
    others = [j for j in range(copied.n_sources) if j not in (src, cp)]
    assert np.nanmax(p.beyond_chance[np.ix_(others, others)]) < p.beyond_chance[src, cp] - 0.2
    assert (p.shared == p.shared.T).all() and (np.diag(p.shared) == 0).all()


def test_contradicted_items_only_beyond_the_claims():
    frame = pd.DataFrame({"item": ["a", "a", "b", "b"], "source": ["x", "y", "x", "y"],
                          "claim": ["0", "1", "0", "0"], "truth": ["2", "2", "0", "0"]})
    c = claims_from_frame(frame, scope="global").claims
    r = dawid_skene(c, gold=np.array([True, False]))
    assert contradicted_items(c, r).tolist() == [True, False]
    assert not contradicted_items(c, majority_vote(c)).any()


def test_compare_at_equal_coverage(synth):
    res = {"mv": majority_vote(synth), "ds": dawid_skene(synth)}
    out = compare_at_coverage(res, synth, 0.5)
    for v in out.values():
        assert v["n"] == synth.n_items and v["answered"] == 100
        assert v["low"] <= v["accuracy"] <= v["high"]
    assert out["ds"]["accuracy"] >= out["mv"]["accuracy"] - 0.05


def test_disagreement_counts(synth):
    a, b = majority_vote(synth), dawid_skene(synth)
    d = disagreement(synth, a, b)
    assert d["n_changed"] == int(((a.labels != b.labels)).sum())
    assert d["n_fixed"] + d["n_broken"] <= d["n_changed"]
    assert d["sided_with_a"].sum() + d["sided_with_b"].sum() <= synth.n_claims


def test_what_if_switch_off_and_flip():
    frame = pd.DataFrame({"item": ["a"] * 3 + ["b"] * 3, "source": list("xyz") * 2,
                          "claim": ["1", "1", "2", "3", "3", "3"]})
    c = claims_from_frame(frame, scope="item").claims
    off = what_if(c, majority_vote, 0, drop_sources=[0])
    assert off.classes == c.classes
    assert off.before[c.classes.index("1")] == pytest.approx(2 / 3)
    assert off.after[c.classes.index("1")] == pytest.approx(0.5)
    flip = what_if(c, majority_vote, 0, flip=(1, "9"))
    assert flip.classes == ("1", "2", "3", "9")
    assert flip.label_before == 0 and flip.after[3] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="without a claim"):
        what_if(c, majority_vote, 0, drop_sources=[0, 1, 2])
