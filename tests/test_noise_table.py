"""Seed 000 Table 22 (§12.5): the noise table, its shape claims, and the command."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.evaluation.metrics import forced_accuracy
from core.evaluation.noise_table import EPS, METHODS, noise_table, shape_facts
from core.evaluation.paper import NOISE_METHODS, PAPER_NOISE, PAPER_NOISE_MAJORITY_CLASS
from core.evaluation.run import run_testbed
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate

#: 2 seeds × 120 personas (40 test personas per seed); the noise seed is the paper's 12345
SMALL = TestbedConfig(seeds=(3, 4), personas_per_difficulty=40)


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(SMALL), methods=list(METHODS))


@pytest.fixture(scope="module")
def table(runs):
    return noise_table(runs)


def test_table_shape_and_paper_columns(table):
    wide = table.wide()
    assert list(wide.index) == list(EPS) and list(wide.columns) == list(METHODS)
    paper = table.wide("paper")
    for e in EPS:
        assert tuple(paper.loc[e, list(NOISE_METHODS)]) == PAPER_NOISE[e]
        assert paper.loc[e, "majority_class"] == PAPER_NOISE_MAJORITY_CLASS
    np.testing.assert_allclose(table.wide("delta"), wide - paper)
    assert table.n_seeds == 2 and table.seed == 12345


def test_no_noise_is_the_clean_accuracy_and_majority_class_ignores_noise(table, runs):
    wide = table.wide()
    for m in METHODS:
        clean = np.mean([100 * forced_accuracy(r.predictions[m].answer == r.gt) for r in runs])
        assert wide.loc[0.0, m] == pytest.approx(clean)
    assert wide["majority_class"].nunique() == 1
    # every fusion method loses accuracy as ε grows from 0 to 0.3
    for m in NOISE_METHODS:
        assert wide.loc[0.0, m] > wide.loc[0.1, m] > wide.loc[0.2, m] > wide.loc[0.3, m]


def test_the_shape_claims_on_a_small_testbed(table):
    """§12.5 on 80 test personas: the convergence holds; NBF overtakes DSNBF from ε = 0.2.

    On this small testbed DSNBF is still ahead at ε = 0.1 (the paper: NBF by 0.7 pp; on the
    default testbed NBF by 0.1 pp, docs/prose.md), so the test asserts what holds here.
    """
    f = table.ours
    gap = f["gap_to_majority_class"]
    assert gap[0.3] < gap[0.0] / 4 and gap[0.3] < 6.0  # the paper: 5.2 against 25.2
    assert gap[0.3] < gap[0.2] < gap[0.1] < gap[0.0]
    diff = f["nbf_minus_dsnbf"]
    assert all(diff[e] > 0 for e in EPS if e >= 0.2)
    assert diff[0.0] < 0  # clean atoms: DSNBF ahead, as in the paper
    assert f["reversal_from"] is not None and f["reversal_from"] <= 0.2


def test_the_papers_own_shape_facts():
    wide = pd.DataFrame({m: [PAPER_NOISE[e][i] for e in EPS] for i, m in enumerate(NOISE_METHODS)},
                        index=list(EPS))
    wide["majority_class"] = PAPER_NOISE_MAJORITY_CLASS
    f = shape_facts(wide)
    assert f["reversal_from"] == 0.1
    assert f["gap_to_majority_class"][0.3] == pytest.approx(62.3 - 57.1)
    assert f["gap_to_majority_class"][0.0] == pytest.approx(82.3 - 57.1)
    assert f["nbf_minus_dsnbf"][0.5] == pytest.approx(4.7)


@pytest.mark.parametrize("nbf, reversal", [
    ((1, 2, 3, 4, 5), 0.0), ((-1, 2, 3, 4, 5), 0.1), ((-1, 2, -3, 4, 5), 0.3),
    ((1, 2, 3, 4, -5), None), ((-1, -1, -1, -1, -1), None)])
def test_reversal_is_the_start_of_the_trailing_run(nbf, reversal):
    wide = pd.DataFrame({m: 50.0 for m in METHODS}, index=list(EPS))
    wide["nbf"] = wide["dsnbf"] + np.array(nbf, float)
    assert shape_facts(wide)["reversal_from"] == reversal


def test_the_table_is_deterministic_and_seeded(runs, table):
    pd.testing.assert_frame_equal(noise_table(runs).table, table.table)
    other = noise_table(runs, seed=1).table
    assert not np.allclose(other["accuracy"], table.table["accuracy"])


def test_runs_without_models_or_bad_eps_raise(runs):
    with pytest.raises(ValueError, match="no fitted"):
        noise_table([replace(r, models={}) for r in runs])
    with pytest.raises(ValueError, match="eps"):
        noise_table(runs, eps=(0.0, 1.5))
    with pytest.raises(ValueError, match="at least one"):
        noise_table([])


def test_cli_noise_table(small_store, tmp_path, capsys):
    out = tmp_path / "n.json"
    assert main(["noise-table", "--db", str(small_store), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert len(report["table"]) == len(EPS) * len(METHODS)
    assert report["paper"]["reversal_from"] == 0.1
    assert "ours - paper" in capsys.readouterr().out
    missing = tmp_path / "none.duckdb"
    assert main(["noise-table", "--db", str(missing)]) == 2
    assert not missing.exists()
    assert main(["noise-table", "--db", str(small_store), "--noise-seed", "-1"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2
