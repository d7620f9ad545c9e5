"""Robustness protocols on a small testbed: shapes, invariants, parallel = serial."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation.reproduce import reproduce
from core.evaluation.robustness import (
    _stratified_subsample,
    perturbation_grid,
    train_size_curve,
    transfer,
)
from core.evaluation.run import run_testbed
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate

SMALL = TestbedConfig(seeds=(3, 4), personas_per_difficulty=40)


@pytest.fixture(scope="module")
def grid():
    return perturbation_grid(SMALL, scales=(0.5, 2.0))


def test_grid_shapes_and_tau(grid):
    assert len(grid["mean"]) == 4
    assert len(grid["table"]) == 4 * 2 * 7
    assert len(grid["tau"]) == 2 * 6  # C(4, 2) pairs per seed
    assert -1 <= grid["tau_mean"] <= 1
    assert grid["cells"] == 8 and 0 <= grid["dsnbf_wins"] <= 8


def test_grid_in_two_processes_equals_serial(grid):
    par = perturbation_grid(SMALL, scales=(0.5, 2.0), workers=2)
    np.testing.assert_allclose(par["table"]["accuracy"], grid["table"]["accuracy"])


def test_more_bias_hurts_majority_vote(grid):
    mean = grid["mean"].groupby("bias")["majority_vote"].mean()
    assert mean.loc[2.0] < mean.loc[0.5]


@pytest.mark.parametrize("n,expected", [(50, {"stable": 17, "stated_vs_revealed": 17,
                                               "temporal_shift": 16}),
                                        (100, {"stable": 34, "stated_vs_revealed": 33,
                                               "temporal_shift": 33})])
def test_stratified_subsample_gives_the_remainder_alphabetically(n, expected):
    diff = np.repeat(["stable", "temporal_shift", "stated_vs_revealed"], 72)
    pick = _stratified_subsample(diff, n, np.random.default_rng(0))
    got = dict(zip(*np.unique(diff[pick], return_counts=True), strict=True))
    assert got == expected and len(set(pick)) == n


def test_train_size_and_transfer_tables():
    tb = generate(SMALL)
    curve = train_size_curve(tb, sizes=(9,), repeats=2, methods=("ssb", "nbf"))
    assert set(curve["train_size"]) == {9, SMALL.split_counts()["train"] * 3}
    runs = run_testbed(tb, methods=("dsnbf", "nbf"))
    tr = transfer(runs, SMALL, scales=(1.0,))
    nominal = tr.set_index("method")["accuracy"]
    from core.evaluation.tables import main_table

    main = main_table(runs, b=100).set_index("method")["accuracy"]
    assert nominal["dsnbf"] == pytest.approx(main["dsnbf"])  # b = d = 1 is the nominal data


def test_reproduce_without_robustness_has_the_core_tables():
    tb = generate(SMALL)
    res = reproduce(tb, SMALL, n_boot=100, robustness=False)
    assert {"main", "selective", "per_type", "per_question", "reachability_slices",
            "paired_dsnbf_vs_mv"} <= set(res.tables)
    d = res.to_dict()
    assert d["summary"]["dsnbf_accuracy"] > 50
