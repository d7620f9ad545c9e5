"""The Extraction page's result objects (core.prose.views, core.prose.mixed_view)."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation.cached import load_arrays
from core.evaluation.decomposition import decompose, mixed_runs
from core.prose.extract import INFORMATIVE, extract
from core.prose.faithfulness import faithfulness
from core.prose.render import SECTIONS, render
from core.prose.tables import EXTRACTOR
from core.prose.views import (
    factorial_view,
    faithfulness_view,
    faithfulness_view_of,
    mixed_fit,
    noise_view,
    prose_excerpt,
    prose_personas,
    prose_view,
    reads_text,
)
from core.store import connect, load_atoms
from core.testbed.generate import generate
from core.testbed.questions import Q_INDEX, QIDS, SOURCES, question
from core.testbed.words import label_words
from tests.conftest import SMALL_CONFIG


@pytest.fixture(scope="module")
def con(small_store):
    c = connect(small_store)
    yield c
    c.close()


@pytest.fixture(scope="module")
def extraction():
    tb = generate(SMALL_CONFIG)
    r = render(tb)
    return tb, extract(r.texts, persona_ids=r.persona_ids)


@pytest.fixture(scope="module")
def fit(con):
    return mixed_fit(con, methods=("majority_class", "majority_vote", "nbf", "dsnbf",
                                   "source_reachability"))


@pytest.fixture(scope="module")
def arrays(con):
    personas, gt, mu = load_arrays(con)
    return personas, gt, mu, load_atoms(con, kind="extracted")


def test_the_personas_with_a_render_are_the_test_split(con, extraction):
    tb, _ = extraction
    got = prose_personas(con)
    test = tb.personas[tb.personas["split"] == "test"]
    assert got == tuple((int(s), p) for s, p in zip(test["seed"], test["persona_id"],
                                                     strict=True))


# ---------------------------------------------------------------------------- the prose panel
PERSONA = 8  # the document position of a test persona of the small testbed (checked below)


def test_the_chosen_persona_is_a_test_persona(extraction):
    assert extraction[0].personas["split"].iloc[PERSONA] == "test"


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("qid", QIDS)
def test_marked_lines_are_the_extractions_spans(con, extraction, qid, source):
    """Two implementations agree: the stored render lines through atom_lines and the
    extractor's own frame through Extraction.spans."""
    tb, ex = extraction
    seed, pid = int(tb.personas["seed"].iloc[PERSONA]), tb.personas["persona_id"].iloc[PERSONA]
    view = prose_view(con, seed=seed, persona_id=pid, qid=qid, source=source)
    spans = ex.spans(PERSONA, qid, source)
    marked = {(x.start, x.end) for s in view.sections for x in s.lines if x.marked}
    assert marked == set(zip(spans["start"].tolist(), spans["end"].tolist(), strict=True))
    assert view.n_marked == len(marked) == sum(s.n_marked for s in view.sections)
    informative = bool(INFORMATIVE[Q_INDEX[qid], SOURCES.index(source)])
    assert view.informative == informative
    assert (view.n_marked > 0) == informative
    assert view.reads.startswith("Nothing") != informative


def test_the_prose_view_shows_the_document_and_the_grid(con, extraction):
    tb, ex = extraction
    seed, pid = int(tb.personas["seed"].iloc[PERSONA]), tb.personas["persona_id"].iloc[PERSONA]
    view = prose_view(con, seed=seed, persona_id=pid, qid="C3", source="daily_self_report")
    doc = render(tb.subset(np.arange(tb.n) == PERSONA)).texts[0]
    assert [s.title for s in view.sections] == list(SECTIONS)
    assert [s.source for s in view.sections] == list(SOURCES)
    for s in view.sections:
        assert s.lines
        for line in s.lines:
            assert doc[line.start:line.end] == line.text and not line.text.startswith("- ")
            assert (line.day is None) == (s.source == "profile_ltm")
    assert view.sections[1].lines[0].day == "2026-01-03 (Saturday)"
    marked_days = {x.day for s in view.sections for x in s.lines if x.marked}
    assert marked_days and all(d is None or d >= "2026-01-19" for d in marked_days)
    # the grid: μ̂ labels of the stored atoms, μ̂ ≠ μ* where they differ
    hat = ex.atoms[PERSONA]
    assert view.grid.shown.shape == (18, 5) and list(view.grid.shown.index) == list(QIDS)
    for qi, q in enumerate(QIDS):
        for si in range(5):
            code = int(hat[qi, si])
            want = "—" if code < 0 else label_words(q, question(q).labels[code])
            assert view.grid.shown.iloc[qi, si] == want
    assert view.extractor == EXTRACTOR and view.question == question("C3").text
    assert view.atom == (None if hat[Q_INDEX["C3"], 2] < 0
                         else question("C3").labels[hat[Q_INDEX["C3"], 2]])
    assert view.equal == (view.atom == view.truth_atom)
    assert not view.grid_wrong.to_numpy()[INFORMATIVE].any()  # exact on informative cells


def test_the_excerpt_is_the_marked_lines_only(con, extraction):
    tb, _ = extraction
    seed, pid = int(tb.personas["seed"].iloc[PERSONA]), tb.personas["persona_id"].iloc[PERSONA]
    full = prose_view(con, seed=seed, persona_id=pid, qid="A1", source="device_log")
    got = prose_excerpt(con, seed=seed, persona_id=pid, qid="A1",
                        sources=["device_log", "objective_log"], max_lines=4)
    assert [s.source for s in got] == ["device_log", "objective_log"]
    device = next(s for s in full.sections if s.source == "device_log")
    assert got[0].n_marked == device.n_marked > 4
    assert got[0].lines == tuple(x for x in device.lines if x.marked)[:4]
    assert got[1].lines == () and got[1].n_marked == 0  # A1 does not read the objective log


@pytest.mark.parametrize("kwargs, match", [
    ({"qid": "Z9"}, "unknown question"),
    ({"source": "diary"}, "unknown source"),
    ({"persona_id": "bench_nobody_999_x"}, "is not in the store"),
    ({"seed": 1}, "is not in the store"),
])
def test_bad_ids_raise(con, extraction, kwargs, match):
    tb, _ = extraction
    args = {"seed": int(tb.personas["seed"].iloc[0]),
            "persona_id": tb.personas["persona_id"].iloc[0], "qid": "A1", "source": "planner",
            **kwargs}
    with pytest.raises(ValueError, match=match):
        prose_view(con, **args)
    source = args.pop("source")
    with pytest.raises(ValueError, match=match):
        prose_excerpt(con, **args, sources=[source])


def test_excerpt_refuses_a_bad_line_budget(con, extraction):
    tb, _ = extraction
    with pytest.raises(ValueError, match="max_lines"):
        prose_excerpt(con, seed=int(tb.personas["seed"].iloc[0]),
                      persona_id=tb.personas["persona_id"].iloc[0], qid="A1",
                      sources=["planner"], max_lines=0)


@pytest.mark.parametrize("qid, source, words", [
    ("C3", "daily_self_report", "the last 14 days of the self-report's lines on bedtime"),
    ("C3", "daily_self_report", "as context, the last 14 days of the planner's lines"),
    ("B2", "profile_ltm", "It reads the profile's lines on usual exercise days per week."),
    ("A1", "objective_log", "Nothing: the objective log"),
    ("Ctrl1", "daily_self_report", "the last 7 days of the self-report's lines on meals and "
                                   "home-cooked meals"),
])
def test_reads_says_what_the_rule_reads(qid, source, words):
    assert words in reads_text(qid, source)


# ----------------------------------------------------------------------------- faithfulness
@pytest.mark.parametrize("cells", ["all", "informative", "non_null"])
def test_faithfulness_view_is_the_faithfulness_of_the_stored_arrays(con, arrays, cells):
    personas, _, mu, hat = arrays
    test = (personas["split"] == "test").to_numpy()  # the personas the build extracts
    view = faithfulness_view(con, cells=cells)
    f = faithfulness(hat[test], mu[test], cells=cells)
    assert view.extractor == EXTRACTOR and view.cells == cells
    assert view.overall == pytest.approx(100 * f.overall) and view.k == f.equal
    assert view.n_cells == f.n and view.n_personas == test.sum()
    want = 100 * f.by_cell["rate"].to_numpy().reshape(18, 5).T
    np.testing.assert_allclose(view.matrix.to_numpy(), want)
    assert (view.n.to_numpy() == f.by_cell["n"].to_numpy().reshape(18, 5).T).all()
    assert view.paper_overall == 93.08 and view.misses.endswith(".")


def test_the_misses_sentence_names_the_cells(arrays):
    _, _, mu, _ = arrays
    hat = mu.copy()
    assert faithfulness_view_of(hat, mu, extractor="x").misses.startswith("All ")
    hat[:3, Q_INDEX["F2"], 4] = (hat[:3, Q_INDEX["F2"], 4] + 1) % 2
    text = faithfulness_view_of(hat, mu, extractor="x").misses
    assert text.startswith("3 of ") and "F2 from the device log" in text


def test_faithfulness_view_refuses_bad_arguments(con):
    with pytest.raises(ValueError, match="no extracted atoms of 'gpt-9'"):
        faithfulness_view(con, extractor="gpt-9")
    with pytest.raises(ValueError, match="cells must be"):
        faithfulness_view(con, cells="some")


# ------------------------------------------------------------------------ noise and 2 × 2
def _pooled(correct):
    return 100 * np.concatenate(correct).mean(0).mean()


def test_at_eps_0_on_mu_star_every_method_keeps_its_accuracy(fit):
    v = noise_view(fit, profile="uniform", eps=0.0, base="readout")
    assert v.n_flipped == 0 and v.flip_rate == 0 and v.base == "readout"
    assert (v.frame["accuracy_hat"] == v.frame["accuracy_star"]).all()
    for m, acc in zip(v.frame["method"], v.frame["accuracy_star"], strict=True):
        assert acc == _pooled([r.predictions[m].answer == r.gt for r in fit.star])
    assert v.story.startswith("No atom is flipped")


def test_at_eps_0_on_mu_hat_the_board_is_the_clean_extraction(fit):
    v = noise_view(fit, profile="uniform", eps=0.0)
    assert v.base == "extracted" and v.n_flipped == 0
    for m, acc in zip(v.frame["method"], v.frame["accuracy_hat"], strict=True):
        if m == "source_reachability":
            continue
        want = _pooled([r.models[m].predict(h).answer == r.gt
                        for r, h in zip(fit.star, fit.mu_hat_test, strict=True)])
        assert acc == want, m


def test_noise_is_reproducible_and_flips_about_eps(fit):
    a = noise_view(fit, profile="uniform", eps=0.3, seed=4)
    b = noise_view(fit, profile="uniform", eps=0.3, seed=4)
    c = noise_view(fit, profile="uniform", eps=0.3, seed=5)
    assert a.frame.equals(b.frame) and a.n_flipped == b.n_flipped
    assert a.n_flipped != c.n_flipped or not a.frame.equals(c.frame)
    assert 0.15 < a.flip_rate < 0.31  # edge labels of ordinal questions never flip
    assert a.best in set(a.frame["label"]) and a.story.endswith(".")
    assert (a.frame["change"] == a.frame["accuracy_hat"] - a.frame["accuracy_star"]).all()


def test_the_paper_profile_ignores_eps(fit):
    low = noise_view(fit, profile="paper", eps=0.0, seed=1)
    high = noise_view(fit, profile="paper", eps=0.9, seed=1)
    assert low.frame.equals(high.frame) and low.eps == high.eps
    assert 0.03 < low.eps < 0.15 and low.n_flipped > 0


@pytest.mark.parametrize("kwargs, match", [
    ({"profile": "gauss"}, "profile must be"), ({"eps": 1.5}, "eps must be"),
    ({"eps": float("nan")}, "eps must be"), ({"base": "prose"}, "base must be"),
])
def test_noise_view_refuses_bad_arguments(fit, kwargs, match):
    with pytest.raises(ValueError, match=match):
        noise_view(fit, **{"profile": "uniform", "eps": 0.1, **kwargs})


def test_the_2x2_terms_add_up_and_match_the_board(fit):
    v = factorial_view(fit, a="dsnbf", b="majority_vote", profile="uniform", eps=0.2, seed=3,
                       n_boot=200)
    board = noise_view(fit, profile="uniform", eps=0.2, seed=3).frame.set_index("method")
    t, acc = v.decomposition.terms, v.decomposition.accuracy
    assert t["total"] == pytest.approx(t["resolution"] + t["extraction"], abs=1e-9)
    assert acc["a_hat"] == pytest.approx(board.loc["dsnbf", "accuracy_hat"])
    assert acc["b_hat"] == pytest.approx(board.loc["majority_vote", "accuracy_hat"])
    assert acc["a_star"] == pytest.approx(board.loc["dsnbf", "accuracy_star"])
    assert v.a_label == "DSNBF" and v.story.endswith(".")
    assert set(v.paper) == {"a_star", "b_star", "a_hat", "b_hat"}  # the paper reports all four
    assert v.paper_terms["total"] == pytest.approx(82.3 - 68.8)


def test_the_2x2_on_clean_mu_hat_is_the_command_lines(fit, arrays):
    """A second implementation: core.evaluation.decomposition.mixed_runs + decompose."""
    personas, gt, mu, hat = arrays
    v = factorial_view(fit, a="nbf", b="majority_vote", profile="uniform", eps=0.0,
                       n_boot=100, boot_seed=42)
    star, hat_runs = mixed_runs(mu, gt, personas, hat, methods=["nbf", "majority_vote"])
    d = decompose(star, hat_runs, a="nbf", b="majority_vote", rng=np.random.default_rng(42),
                  n_boot=100)
    assert dict(v.decomposition.accuracy) == dict(d.accuracy)
    assert dict(v.decomposition.terms) == dict(d.terms)
    assert dict(v.decomposition.ci) == dict(d.ci)


@pytest.mark.parametrize("kwargs, match", [
    ({"a": "ssb"}, "was not fitted"), ({"b": "dsnbf"}, "both 'dsnbf'"),
    ({"eps": -0.1}, "eps must be"),
])
def test_the_2x2_refuses_bad_arguments(fit, kwargs, match):
    with pytest.raises(ValueError, match=match):
        factorial_view(fit, **{"a": "dsnbf", "b": "majority_vote", "profile": "uniform",
                               "eps": 0.1, "n_boot": 10, **kwargs})


def test_the_2x2_slices_split_each_cell_by_reachability(fit):
    """Seed 000 §4.2 slices: each cell's accuracy on all / GT-present / GT-absent instances,
    the split made on μ* for both inputs, so the counts are the same in every row and the
    whole is their instance-weighted mean."""
    fv = factorial_view(fit, a="dsnbf", b="majority_vote", profile="uniform", eps=0.2,
                        n_boot=50)
    sl = fv.slices.full
    assert len(sl) == 4 and sl["n_present"].nunique() == 1 and sl["n_absent"].nunique() == 1
    n_p, n_a = int(sl["n_present"].iloc[0]), int(sl["n_absent"].iloc[0])
    assert n_p + n_a == fv.decomposition.n_instances
    for row in sl.itertuples():
        parts = [(row.gt_present, n_p), (row.gt_absent, n_a)]
        whole = sum(v * n for v, n in parts if n) / (n_p + n_a)
        assert row.full == pytest.approx(whole)
        cell = f"{row.arm}_{'star' if row.input == 'readout' else 'hat'}"
        assert row.full == pytest.approx(fv.decomposition.accuracy[cell])


@pytest.mark.parametrize("profile,words", [("paper", "GPT-5.4"), ("gemini", "Gemini")])
def test_the_noise_story_names_the_profile_s_extractor(fit, profile, words):
    nv = noise_view(fit, profile=profile, eps=0.0)
    assert words in nv.story and nv.n_flipped > 0


def test_the_paraphrase_profile_flips_and_empties_atoms_and_ignores_eps(fit):
    """Issue 19: the noise panel's measured profile of our extractor on reworded prose."""
    from core.prose.mixed_view import _noisy
    from core.prose.noise import NoiseProfile

    low = noise_view(fit, profile="paraphrase", eps=0.0, seed=1)
    high = noise_view(fit, profile="paraphrase", eps=0.9, seed=1)
    assert low.frame.equals(high.frame)
    assert low.eps == pytest.approx(NoiseProfile.paraphrase().mean_error)
    assert "reworded prose" in low.story and low.n_flipped > 0
    bases, noisy = _noisy(fit, "paraphrase", 0.0, 1, "extracted")
    emptied = sum(int(((b >= 0) & (x < 0)).sum()) for b, x in zip(bases, noisy, strict=True))
    changed = sum(int(((b >= 0) & (x >= 0) & (x != b)).sum())
                  for b, x in zip(bases, noisy, strict=True))
    assert emptied > 0 and changed > emptied  # the measured profile errs mostly by labels
    assert emptied + changed == low.n_flipped


def test_wording_view_sets_the_paraphrased_figure_beside_the_paper(con, extraction):
    """Issue 19: the round trip and the paraphrased figure are separate; only the latter is
    compared with the paper's LLM, in words."""
    from core.prose.paraphrase import wording_robustness
    from core.prose.views import wording_view

    v = wording_view(con, rate=0.1, seed=2)
    tb, _ = extraction
    test = (tb.personas["split"] == "test").to_numpy()
    want = wording_robustness(tb.subset(test), rate=0.1, seed=2)
    assert v.n_personas == int(test.sum()) and v.n_cells == 90 * int(test.sum())
    assert v.round_trip == pytest.approx(100 * want.round_trip.overall)
    assert v.paraphrased == pytest.approx(100 * want.paraphrased.overall)
    assert v.paraphrased < v.round_trip and v.paper == 93.08
    # the unread-day rule: atoms are read around their unread days; a wrong answer is one of
    # them, and the story says so
    assert v.wrong_misses == want.wrong_misses > 0 and v.null_misses == want.null_misses
    assert v.partial_atoms == want.partial_atoms > v.wrong_misses
    assert "read from the days around a line that did not read" in v.story
    assert "not the same test" in v.story
    assert f"{v.paraphrased:.2f} % of cells" in v.story
    assert f"GPT-5.4 extractor ({v.paper:.2f} %)" in v.story
    assert "is not a comparison with the paper" in v.story
    shown = v.by_source.shown
    assert list(shown.columns) == ["label", "round_trip", "paraphrased", "paper"]
    np.testing.assert_allclose(shown["paraphrased"], 100 * want.by_source["paraphrased"])
    assert len(v.by_question.shown) == 18
    with pytest.raises(ValueError, match="must lie in"):
        wording_view(con, rate=1.5)
