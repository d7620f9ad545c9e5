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
from core.testbed.questions import QIDS, SOURCES
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


def test_unknown_wording_under_the_whole_atom_rule_is_null_never_a_wrong_label(small):
    """Under ``unread="atom"`` every loss on prose worded otherwise is a ⊥ the extractor
    reports (an unread line), never a confident wrong label."""
    tb, r = small
    w = wording_robustness(tb, rate=0.2, seed=0, unread="atom")
    assert w.paraphrased.overall < w.round_trip.overall
    assert w.wrong_misses == 0 and w.partial_atoms == 0
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


def test_under_the_unread_day_rule_every_wrong_label_was_read_from_fewer_days(small):
    """The default rule reads an atom around its unread days: it keeps far more cells than
    the whole-atom rule, and each wrong label it gives is an atom it lists as read from
    fewer days (``unread_atoms``, ``null`` False), never an atom it read whole."""
    tb, r = small
    day = wording_robustness(tb, rate=0.2, seed=0)
    whole = wording_robustness(tb, rate=0.2, seed=0, unread="atom")
    assert day.unread == "day" and day.round_trip.overall == whole.round_trip.overall
    assert day.paraphrased.overall > whole.paraphrased.overall + 0.3
    assert day.partial_atoms > 0 and day.null_misses < whole.null_misses
    ids = list(r.persona_ids)
    para = paraphrase(r.texts, rate=0.2, rng=np.random.default_rng(0))
    ex = extract(para.texts, persona_ids=ids)
    mu = readout(tb)
    wrong = (ex.atoms != mu) & (ex.atoms >= 0)
    assert int(wrong.sum()) == day.wrong_misses > 0
    partial = np.zeros_like(wrong)
    u = ex.unread_atoms[~ex.unread_atoms["null"]]
    partial[u["doc"].to_numpy(), [QIDS.index(q) for q in u["question_id"]],
            [SOURCES.index(s) for s in u["source"]]] = True
    assert not (wrong & ~partial).any()


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
        w = wording_robustness(tb, rate={kind: 0.3}, seed=0, unread="atom")
        assert w.paraphrased.overall < w.round_trip.overall, kind
        assert w.wrong_misses == 0, kind
