"""The seeded paraphraser and the wording-robustness benchmark (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest

from core.prose.extract import extract
from core.prose.faithfulness import faithfulness
from core.prose.paraphrase import KINDS, paraphrase, wording_robustness
from core.prose.render import render
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.readout import readout


@pytest.fixture(scope="module")
def small():
    tb = generate(TestbedConfig(seeds=(20260322,), personas_per_difficulty=12))
    return tb, render(tb)


def test_deterministic_and_seeded(small):
    _, r = small
    a = paraphrase(r.texts, rate=0.2, rng=np.random.default_rng(7))
    b = paraphrase(r.texts, rate=0.2, rng=np.random.default_rng(7))
    c = paraphrase(r.texts, rate=0.2, rng=np.random.default_rng(8))
    assert a.texts == b.texts and a.rewrites.equals(b.rewrites)
    assert a.texts != c.texts


def test_rate_zero_changes_nothing_and_structure_is_kept(small):
    _, r = small
    assert paraphrase(r.texts, rate=0.0, rng=np.random.default_rng(0)).texts == r.texts
    p = paraphrase(r.texts, rate=0.5, rng=np.random.default_rng(0))
    for ours, theirs in zip(r.texts, p.texts, strict=True):
        a, b = ours.split("\n"), theirs.split("\n")
        assert len(a) == len(b)
        assert [x for x in a if x.startswith("#") or not x] == \
            [y for y in b if y.startswith("#") or not y]


@pytest.mark.parametrize("rate", [0.1, 0.4])
def test_each_kind_rewrites_its_stated_share_of_eligible_lines(small, rate):
    _, r = small
    p = paraphrase(r.texts, rate=rate, rng=np.random.default_rng(1))
    for row in p.rewrites.itertuples(index=False):
        assert row.eligible > 50, row.kind
        sd = np.sqrt(rate * (1 - rate) / row.eligible)
        assert abs(row.rewritten / row.eligible - rate) < 4 * sd, row.kind


def test_the_authors_wording_costs_nothing(small):
    """The extractor reads the authors' variants: at rate 1 for that kind alone the paraphrased
    figure is the round trip, and every eligible line was rewritten."""
    tb, _ = small
    w = wording_robustness(tb, rate={"authors": 1.0}, seed=0)
    row = w.rewrites.set_index("kind").loc["authors"]
    assert row["rewritten"] == row["eligible"] > 0
    assert w.paraphrased.overall == w.round_trip.overall
    assert w.unread_lines == 0


def test_unknown_wording_is_null_never_a_wrong_label(small):
    """On prose worded otherwise the extractor loses cells, but each loss is a ⊥ it reports
    (an unread line), never a confident wrong label."""
    tb, r = small
    w = wording_robustness(tb, rate=0.2, seed=0)
    assert w.paraphrased.overall < w.round_trip.overall
    assert w.wrong_misses == 0
    assert w.null_misses == len(w.paraphrased.misses) > len(w.round_trip.misses)
    assert w.unread_lines > 0
    ids = list(r.persona_ids)
    rt = faithfulness(extract(r.texts, persona_ids=ids).atoms, readout(tb), persona_ids=ids)
    assert w.round_trip.overall == rt.overall
    assert list(w.by_source.columns) == ["source", "round_trip", "paraphrased", "paper"]
    assert len(w.by_question) == 18
    # the cell-weighted mean of the per-source figures is the overall figure
    n = w.paraphrased.by_source["n"].to_numpy()
    assert np.average(w.by_source["paraphrased"], weights=n) == pytest.approx(
        w.paraphrased.overall)


@pytest.mark.parametrize("rate,match", [
    (1.5, "must lie in"), (float("nan"), "must lie in"), ({"rhymes": 0.1}, "unknown paraphrase"),
])
def test_bad_rates_are_refused(small, rate, match):
    _, r = small
    with pytest.raises(ValueError, match=match):
        paraphrase(r.texts, rate=rate, rng=np.random.default_rng(0))


def test_every_kind_alone_costs_cells_except_the_authors(small):
    tb, _ = small
    for kind in KINDS[1:]:
        w = wording_robustness(tb, rate={kind: 0.3}, seed=0)
        assert w.paraphrased.overall < w.round_trip.overall, kind
        assert w.wrong_misses == 0, kind
