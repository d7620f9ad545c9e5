"""The resolver × input 2 × 2 (seed 000 §4.2): attribution, bootstrap, mixed mode, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import main
from core.evaluation import tables as T
from core.evaluation.decomposition import (
    decompose,
    factorial,
    mixed_runs,
    model_correct,
    reachable,
)
from core.evaluation.paper import PAPER_FACTORIAL
from core.evaluation.robustness import flip_atoms
from core.prose.mixed import prose_atoms
from core.resolvers._common import Split
from core.resolvers.registry import RESOLVERS
from core.store import connect, load_atoms, write_store
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.importer import load_release
from core.testbed.labels import ground_truth_codes
from core.testbed.questions import QUESTIONS
from core.testbed.readout import readout
from core.testbed.vocab import DIFFICULTIES

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"  # CC BY 4.0
SMALL = TestbedConfig(seeds=(3, 4), personas_per_difficulty=20)


def _cells(n: int, *rates: float) -> list[np.ndarray]:
    """(n, 18) correctness arrays whose accuracy is exactly each rate (n·rate rows correct)."""
    out = []
    for r in rates:
        k = round(n * r)
        assert k == pytest.approx(n * r)
        out.append(np.repeat(np.arange(n) < k, 18).reshape(n, 18))
    return out


@pytest.mark.parametrize("rates, terms", [
    # A*, B*, Â, B̂ → total, resolution, extraction, interaction (pp)
    ((0.9, 0.6, 0.8, 0.5), (40.0, 30.0, 10.0, 0.0)),
    ((0.9, 0.6, 0.7, 0.5), (40.0, 25.0, 15.0, 10.0)),
    ((0.8, 0.8, 0.8, 0.8), (0.0, 0.0, 0.0, 0.0)),
    ((0.5, 0.7, 0.5, 0.6), (-10.0, -15.0, 5.0, -10.0)),
])
def test_constructed_two_by_two_gives_the_exact_attribution(rates, terms):
    d = factorial(*_cells(20, *rates), rng=np.random.default_rng(0), n_boot=200)
    assert [d.accuracy[c] for c in ("a_star", "b_star", "a_hat", "b_hat")] == pytest.approx(
        [100 * r for r in rates])
    got = [d.terms[t] for t in ("total", "resolution", "extraction", "interaction")]
    assert got == pytest.approx(terms, abs=1e-9)
    if terms[0]:
        assert d.resolution_share == pytest.approx(terms[1] / terms[0])
        assert d.resolution_share + d.extraction_share == pytest.approx(1.0)
    else:
        assert np.isnan(d.resolution_share) and np.isnan(d.extraction_share)
    assert d.n_clusters == 20 and d.n_instances == 360


def test_the_papers_cells_give_its_81_19_split():
    rates = [PAPER_FACTORIAL[k][0] / 100 for k in (("dsnbf", "readout"),
             ("struct_llm", "readout"), ("dsnbf", "extracted"), ("struct_llm", "extracted"))]
    d = factorial(*_cells(1000, *rates), rng=np.random.default_rng(0), n_boot=100,
                  a="dsnbf", b="struct_llm")
    assert d.terms["total"] == pytest.approx(10.9)
    assert d.terms["interaction"] == pytest.approx(-0.1)
    assert round(100 * d.resolution_share) == 81 and round(100 * d.extraction_share) == 19
    assert d.paper["b_hat"] == 71.4 and d.paper["a_star"] == 82.3


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30))
def test_total_is_resolution_plus_extraction_in_every_replicate(seed, n):
    rng = np.random.default_rng(seed)
    cells = [rng.random((n, 18)) < p for p in rng.random(4)]
    d = factorial(*cells, rng=np.random.default_rng(seed), n_boot=50)
    assert d.terms["total"] == pytest.approx(d.terms["resolution"] + d.terms["extraction"])
    assert d.terms["interaction"] == pytest.approx(
        (d.accuracy["a_star"] - d.accuracy["a_hat"]) - (d.accuracy["b_star"] - d.accuracy["b_hat"]))
    assert all(low <= high for low, high in d.ci.values())


def _random_cells(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random((n, 18)) < p for p in (0.85, 0.7, 0.8, 0.65)]


def test_bootstrap_covers_the_estimate_and_shrinks_with_n():
    widths = []
    for n in (60, 240, 960):
        d = factorial(*_random_cells(n, 7), rng=np.random.default_rng(1), n_boot=1000)
        for key in ("a_star", "b_hat", "total", "resolution", "extraction"):
            value = d.accuracy[key] if key in d.accuracy else d.terms[key]
            low, high = d.ci[key]
            assert low <= value <= high, (n, key)
        widths.append(d.ci["total"][1] - d.ci["total"][0])
    # the width falls like 1/√n: quadrupling n about halves it
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] / widths[0] == pytest.approx(0.25, abs=0.1)


def test_bootstrap_is_paired_and_seeded():
    cells = _random_cells(100, 3)
    one = factorial(*cells, rng=np.random.default_rng(5), n_boot=300)
    two = factorial(*cells, rng=np.random.default_rng(5), n_boot=300)
    assert dict(one.ci) == dict(two.ci)
    same = factorial(cells[0], cells[0], cells[0], cells[0], rng=np.random.default_rng(5),
                     n_boot=300)
    assert same.ci["total"] == (0.0, 0.0)  # the same resample for every cell: a zero gap


@pytest.mark.parametrize("kwargs, fragment", [
    ({"rng": 3}, "Generator"), ({"n_boot": 0}, "n_boot"), ({"level": 1.0}, "level")])
def test_bad_options_raise(kwargs, fragment):
    opts = {"rng": np.random.default_rng(0), "n_boot": 10, **kwargs}
    with pytest.raises(ValueError, match=fragment):
        factorial(*_random_cells(5, 0), **opts)


def test_cells_of_different_shapes_raise():
    c = _random_cells(5, 0)
    with pytest.raises(ValueError, match="same clusters"):
        factorial(c[0], c[1], c[2], c[3][:4], rng=np.random.default_rng(0))


@pytest.fixture(scope="module")
def small():
    tb = generate(SMALL)
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    test = (tb.personas["split"] == "test").to_numpy()
    hat = mu.copy()
    hat[test] = flip_atoms(mu[test], 0.2, np.random.default_rng(11))
    star, hat_runs = mixed_runs(mu, gt, tb.personas, hat,
                                methods=["dsnbf", "nbf", "majority_vote", "source_reachability"])
    return tb, gt, mu, hat, star, hat_runs


@pytest.mark.parametrize("method", ["dsnbf", "nbf", "majority_vote"])
def test_mixed_mode_is_fit_on_mu_star_and_test_on_mu_hat_by_hand(small, method):
    tb, gt, mu, hat, star, hat_runs = small
    r = next(x for x in RESOLVERS if x.name == method)
    diff = pd.Categorical(tb.personas["difficulty"], categories=DIFFICULTIES).codes
    for i, seed in enumerate(SMALL.seeds):
        m = (tb.personas["seed"] == seed).to_numpy()
        split = tb.personas["split"].to_numpy()
        tr, ca, te = (m & (split == s) for s in ("train", "calibration", "test"))
        model = r.make().fit(Split(mu[tr], gt[tr], diff[tr]), Split(mu[ca], gt[ca]))
        np.testing.assert_array_equal(hat_runs[i].predictions[method].answer,
                                      model.predict(hat[te]).answer)
        np.testing.assert_array_equal(star[i].predictions[method].answer,
                                      model.predict(mu[te]).answer)
        np.testing.assert_array_equal(hat_runs[i].atoms, hat[te])


def test_an_oracle_reads_the_mu_hat_it_is_given(small):
    _, _, _, _, star, hat_runs = small
    for s, h in zip(star, hat_runs, strict=True):
        reach_hat = reachable(h.atoms, h.gt)
        np.testing.assert_array_equal(h.predictions["source_reachability"].answer == h.gt,
                                      reach_hat)
        np.testing.assert_array_equal(s.predictions["source_reachability"].answer == s.gt,
                                      reachable(s.atoms, s.gt))
        assert (reach_hat != reachable(s.atoms, s.gt)).any()  # the 20 % flips moved some


def test_slices_agree_with_the_tables_module_and_use_mu_star_for_both_inputs(small):
    _, _, _, _, star, hat_runs = small
    d = decompose(star, hat_runs, a="dsnbf", b="nbf", rng=np.random.default_rng(0), n_boot=200)
    ours = d.slices.set_index(["method", "input"])
    ref = T.reachability_slices(star, ["dsnbf", "nbf"]).set_index("method")
    for m in ("dsnbf", "nbf"):
        for col in ("full", "gt_present", "gt_absent", "n_present", "n_absent"):
            assert ours.loc[(m, "readout"), col] == pytest.approx(ref.loc[m, col])
    assert (d.slices["n_present"] == d.slices["n_present"].iloc[0]).all()
    # μ* slices on μ̂ input: the tables module on runs whose atoms are μ* gives the same
    from dataclasses import replace
    swapped = [replace(h, atoms=s.atoms) for s, h in zip(star, hat_runs, strict=True)]
    ref_hat = T.reachability_slices(swapped, ["dsnbf"]).set_index("method")
    assert ours.loc[("dsnbf", "extracted"), "gt_absent"] == pytest.approx(
        ref_hat.loc["dsnbf", "gt_absent"])
    assert d.accuracy["a_hat"] == pytest.approx(ours.loc[("dsnbf", "extracted"), "full"])
    assert d.terms["extraction"] > 0  # 20 % flips cost both resolvers accuracy


def test_model_correct_scores_frozen_answers(small):
    _, _, _, _, star, _ = small
    rows = []
    for r in star:
        for i, pid in enumerate(r.personas["persona_id"]):
            for j, q in enumerate(QUESTIONS):
                answer = q.labels[r.gt[i, j]] if (i + j) % 3 else "not a label"
                if (i, j) == (0, 0):
                    continue  # a missing question counts as wrong
                rows.append(("m", "oracle", r.seed, pid, q.qid, answer))
    frame = pd.DataFrame(rows, columns=["model", "variant", "seed", "persona_id",
                                        "question_id", "answer"])
    got = model_correct(frame, star, model="m", variant="oracle")
    i_idx = np.concatenate([np.arange(len(r.gt)) for r in star])[:, None]
    expected = ((i_idx + np.arange(18)[None]) % 3) != 0
    starts = np.cumsum([0] + [len(r.gt) for r in star[:-1]])
    expected[starts, 0] = False
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="no answers"):
        model_correct(frame.iloc[: len(frame) // 2], star, model="m", variant="oracle")


def test_prose_atoms_match_mu_star_on_the_test_split_and_flip_with_noise():
    tb = generate(TestbedConfig(seeds=(3,), personas_per_difficulty=12))
    mu = readout(tb)
    test = (tb.personas["split"] == "test").to_numpy()
    hat = prose_atoms(tb)
    assert (hat[~test] == -1).all()
    assert (hat[test] == mu[test]).mean() > 0.99
    noisy = prose_atoms(tb, noise="uniform:1", rng=np.random.default_rng(0))
    moved = (noisy[test] != hat[test]) & (hat[test] >= 0)
    assert moved.any() and (noisy[test][hat[test] < 0] == -1).all()
    with pytest.raises(ValueError, match="rng"):
        prose_atoms(tb, noise="paper")


# ---------------------------------------------------------------------------------------------
# end to end: the released sample persona, fitted on a generated seed's train and calibration


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    rel = load_release(SAMPLE)
    path = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    write_store(path, rel.testbed, origin="release:sample", config={"release": "sample"},
                reference_labels=rel.reference_labels, extracted_atoms=rel.extracted_atoms,
                llm_answers=rel.llm_answers)
    return path


def test_sample_persona_in_mixed_mode_end_to_end(imported, small_store):
    from core.evaluation.cached import load_arrays

    con = connect(imported)
    try:
        personas, gt, mu = load_arrays(con)
        hat = load_atoms(con, kind="extracted")
    finally:
        con.close()
    assert list(personas["split"]) == ["test"] and (hat >= 0).any()
    con = connect(small_store)
    try:
        fp, fgt, fmu = load_arrays(con)
    finally:
        con.close()
    keep = ((fp["seed"] == personas["seed"].iloc[0]) & fp["split"].isin(["train", "calibration"])
            ).to_numpy()
    both = pd.concat([fp[keep], personas], ignore_index=True)
    star, hat_runs = mixed_runs(np.concatenate([fmu[keep], mu]), np.concatenate([fgt[keep], gt]),
                                both, np.concatenate([np.full_like(fmu[keep], -1), hat]),
                                methods=["dsnbf", "majority_vote"])
    d = decompose(star, hat_runs, a="dsnbf", b="majority_vote", rng=np.random.default_rng(0),
                  n_boot=100)
    assert d.n_clusters == 1
    # by hand: DSNBF fitted on the generated train/cal μ*, on the released GPT-5.4 μ̂
    r = next(x for x in RESOLVERS if x.name == "dsnbf")
    fdiff = pd.Categorical(fp["difficulty"], categories=DIFFICULTIES).codes
    tr, ca = keep & (fp["split"] == "train").to_numpy(), keep & (
        fp["split"] == "calibration").to_numpy()
    model = r.make().fit(Split(fmu[tr], fgt[tr], fdiff[tr]), Split(fmu[ca], fgt[ca]))
    by_hand = 100 * (model.predict(hat).answer == gt).mean()
    assert d.accuracy["a_hat"] == pytest.approx(by_hand)
    assert d.accuracy["a_star"] == pytest.approx(
        100 * (model.predict(mu).answer == gt).mean())


def test_cli_decompose_on_the_sample_with_a_fit_store(imported, small_store, tmp_path, capsys):
    out = tmp_path / "d.json"
    assert main(["decompose", "--db", str(imported), "--fit-db", str(small_store), "--input",
                 "extracted", "--bootstrap", "100", "--json", str(out)]) == 0
    report = json.loads(out.read_text())  # strict JSON: NaN became null
    assert report["n_clusters"] == 1 and report["a"] == "dsnbf"
    assert "extraction" in capsys.readouterr().out
    # without --fit-db the single test persona cannot be fitted on: one line, exit 2
    assert main(["decompose", "--db", str(imported), "--input", "extracted"]) == 2
    err = capsys.readouterr().err
    assert "no train, calibration personas" in err and len(err.strip().splitlines()) == 1
    # the sample has GPT-5.4 answers on the prose only, not on the atom grid
    assert main(["decompose", "--db", str(imported), "--fit-db", str(small_store), "--input",
                 "extracted", "--model", "gpt-5.4"]) == 2
    assert "atom-grid answers" in capsys.readouterr().err


def test_cli_decompose_prose_with_noise(small_store, tmp_path, capsys):
    out = tmp_path / "d.json"
    assert main(["decompose", "--db", str(small_store), "--b", "nbf", "--noise", "uniform:0.3",
                 "--bootstrap", "100", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["terms"]["total"] == pytest.approx(
        report["terms"]["resolution"] + report["terms"]["extraction"])
    assert report["terms"]["extraction"] > 0 and report["noise"] == "uniform:0.3"
    assert len(report["slices"]) == 4


@pytest.mark.parametrize("extra, fragment", [
    (["--a", "nbf", "--b", "nbf"], "both 'nbf'"),
    (["--b", "nbf", "--model", "x"], "not allowed with"),
    (["--model", "struct_llm", "--input", "extracted"], "no atom-grid answers"),
    (["--model", "struct_llm"], "needs --input extracted"),
    (["--model", "struct_llm", "--input", "extracted", "--noise", "paper"], "without --noise"),
    (["--bootstrap", "5"], "--bootstrap"),
    (["--noise", "uniform:2"], "--noise"),
    (["--a", "gpt"], "invalid choice"),
])
def test_cli_decompose_bad_input_is_one_line(small_store, extra, fragment, capsys):
    assert main(["decompose", "--db", str(small_store), *extra]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_cli_decompose_on_the_stored_mu_hat_is_the_prose_path(small_store, tmp_path, capsys):
    """A generated store holds our extractor's μ̂ of the test split (issue 11): decomposing it
    gives the numbers of rendering and extracting the prose again."""
    reports = []
    for k, inp in enumerate(("extracted", "prose")):
        out = tmp_path / f"d{k}.json"
        assert main(["decompose", "--db", str(small_store), "--input", inp, "--bootstrap",
                     "100", "--json", str(out)]) == 0
        reports.append(json.loads(out.read_text()))
    assert reports[0]["accuracy"] == reports[1]["accuracy"]
    assert reports[0]["terms"] == reports[1]["terms"]
    capsys.readouterr()


def test_cli_decompose_never_creates_a_store(tmp_path, capsys):
    missing = tmp_path / "none.duckdb"
    assert main(["decompose", "--db", str(missing)]) == 2
    assert not missing.exists()
    fit = tmp_path / "fit.duckdb"
    assert main(["decompose", "--db", str(missing), "--fit-db", str(fit)]) == 2
    assert not fit.exists()


def test_cli_decompose_against_an_imported_models_answers(tmp_path, capsys):
    """B = a model's frozen answers on the atom grid: right on μ*, right on half of μ̂."""
    from core.store import atoms_frame

    tb = generate(TestbedConfig(seeds=(3,), personas_per_difficulty=12))
    gt, _ = ground_truth_codes(tb)
    test = (tb.personas["split"] == "test").to_numpy()
    hat = flip_atoms(readout(tb)[test], 0.3, np.random.default_rng(2))
    rows = []
    for i in np.flatnonzero(test):
        for j, q in enumerate(QUESTIONS):
            right, wrong = q.labels[gt[i, j]], q.labels[(gt[i, j] + 1) % q.k]
            pid = tb.personas["persona_id"].iloc[i]
            rows.append(("struct_llm", "oracle", 3, pid, q.qid, right, False))
            rows.append(("struct_llm", "extracted", 3, pid, q.qid,
                         right if j % 2 == 0 else wrong, False))
    answers = pd.DataFrame(rows, columns=["model", "variant", "seed", "persona_id",
                                          "question_id", "answer", "would_skip"])
    db = tmp_path / "m.duckdb"
    write_store(db, tb, origin="test", config={},
                extracted_atoms=atoms_frame(hat, tb.personas[test], kind="extracted"),
                llm_answers=answers)
    out = tmp_path / "m.json"
    assert main(["decompose", "--db", str(db), "--model", "struct_llm", "--input", "extracted",
                 "--bootstrap", "100", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["b"] == "struct_llm"
    assert report["accuracy"]["b_star"] == pytest.approx(100.0)
    assert report["accuracy"]["b_hat"] == pytest.approx(50.0)  # 9 of 18 questions right
    assert report["paper"]["b_star"] == 73.5
    capsys.readouterr()
