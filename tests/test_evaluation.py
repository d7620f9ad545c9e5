"""The default testbed reproduces seed 000's headline numbers (spec §2.14B) and the
robustness protocols behave as specified."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import tables as T
from core.evaluation.robustness import flip_atoms, noise_curve
from core.evaluation.run import run_testbed
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import Q_INDEX, QUESTIONS


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(TestbedConfig()))


@pytest.fixture(scope="module")
def main(runs):
    return T.main_table(runs, b=500).set_index("method")


def test_pooled_forced_accuracy_within_1_5_pp_of_the_released_code(main):
    with_regen = main.dropna(subset=["regenerated"])
    assert len(with_regen) == 9
    off = with_regen[with_regen["delta_regenerated"].abs() > 1.5]
    assert off.empty, off[["accuracy", "regenerated"]]
    assert (main["n_clusters"] == 480).all()


def test_method_ordering(main):
    acc = main["accuracy"]
    assert min(acc["dsnbf"], acc["nbf"]) > acc["ssb"] > acc["abf"]
    assert acc["abf"] > max(acc["bcf"], acc["majority_vote"])
    assert abs(acc["dsnbf"] - acc["nbf"]) < 1.5 and abs(acc["bcf"] - acc["majority_vote"]) < 2
    assert acc["source_reachability"] == pytest.approx(92.8, abs=1.0)
    assert acc["majority_vote"] < acc["dawid_skene"] < acc["nbf"]  # what labels buy
    for m in main.index:
        assert main.loc[m, "ci_low"] <= acc[m] <= main.loc[m, "ci_high"]


def test_dsnbf_skip_buys_accuracy_at_moderate_coverage(runs):
    sel = T.selective_table(runs).set_index("method")
    row = sel.loc["dsnbf_skip"]
    assert row["gain_over_forced"] >= 4.0
    assert 70 <= row["coverage"] <= 85
    assert sel.loc["source_reachability_skip", "selective_accuracy"] == 100.0


def test_reachability_slices_partition_the_instances(runs):
    sl = T.reachability_slices(runs, ["dsnbf", "nbf"]).set_index("method")
    assert (sl["n_present"] + sl["n_absent"] == 480 * 18).all()
    assert (sl["gt_present"] > sl["full"]).all() and (sl["gt_absent"] < sl["full"]).all()


def test_other_tables_have_their_shapes(runs):
    assert len(T.per_type_table(runs)) == 8
    assert len(T.per_question_table(runs)) == 18
    assert len(T.per_difficulty_table(runs, ["dsnbf"])) == 3
    seeds = T.per_seed_table(runs)
    assert {"s1", "s4", "sd"} <= set(seeds.columns)
    paired = T.paired_by_type(runs, "dsnbf", "majority_vote", n_boot=200)
    assert (paired["ci_low"] <= paired["delta"]).all()
    assert (paired["delta"] <= paired["ci_high"]).all()


def test_noise_at_zero_equals_the_clean_accuracy(runs, main):
    curve = noise_curve(runs, eps=(0.0, 0.3), methods=("dsnbf",)).set_index("eps")
    assert curve.loc[0.0, "accuracy"] == pytest.approx(main.loc["dsnbf", "accuracy"])
    assert curve.loc[0.3, "accuracy"] < curve.loc[0.0, "accuracy"] - 10


def test_flip_atoms_rules():
    rng = np.random.default_rng(0)
    atoms = np.full((2000, 18, 5), -1, np.int8)
    a3, b3, b2 = Q_INDEX["A3"], Q_INDEX["B3"], Q_INDEX["B2"]
    atoms[:, a3, 0] = 0  # bottom rank: must move inward to 1
    atoms[:, a3, 1] = 1  # middle: ±1
    atoms[:, b3, 2] = 0  # nominal: any other label, edge included
    atoms[:, b2, 3] = 3  # ordinal edge label: untouched
    out = flip_atoms(atoms, 1.0, rng)
    assert set(out[:, a3, 0]) == {1}
    assert set(out[:, a3, 1]) == {0, 2}
    assert set(out[:, b3, 2]) == {1, 2}
    assert set(out[:, b2, 3]) == {3}
    assert (out[:, :, 4] == -1).all()  # nulls stay null
    assert (flip_atoms(atoms, 0.0, rng) == atoms).all()
    with pytest.raises(ValueError):
        flip_atoms(atoms, 1.5, rng)
    assert QUESTIONS[b3].qid == "B3"


@pytest.mark.parametrize("table", [T.main_table, T.selective_table])
def test_tables_refuse_an_unknown_input(table):
    with pytest.raises(ValueError, match="'prose' is not one of readout, extracted"):
        table([], input="prose")
