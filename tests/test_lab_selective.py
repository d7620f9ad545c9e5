"""Bias lab, selective sweeps and per-source diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation.diagnostics import (
    confusion_matrix,
    learned_confusion,
    source_reliability,
    source_summary,
)
from core.evaluation.lab import mix_testbed, run_lab, what_broke
from core.evaluation.run import run_testbed
from core.evaluation.selective import SKIP_METHODS, skip_rule, sweep
from core.stats import wilson_interval
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import Q_INDEX

SMALL = TestbedConfig(seeds=(9,), personas_per_difficulty=40)


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(SMALL))


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_skip_rule_at_the_calibrated_threshold_reproduces_the_prediction(runs, method):
    rule = skip_rule(runs[0], method)
    np.testing.assert_array_equal(rule.skipped(rule.calibrated),
                                  runs[0].predictions[method].skipped)


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_sweep_coverage_falls_as_the_threshold_rises(runs, method):
    df = sweep(runs, method)
    assert df["coverage"].iloc[0] >= df["coverage"].iloc[-1]
    assert (np.diff(df["coverage"].to_numpy()) <= 1e-9).all()
    assert df["coverage"].between(0, 100).all()


def test_unknown_skip_method_is_a_value_error(runs):
    with pytest.raises(ValueError, match="one of"):
        skip_rule(runs[0], "bcf")


@pytest.mark.parametrize("k,n,low,high", [(8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775),
                                          (10, 10, 0.7225, 1.0), (0, 0, 0.0, 1.0)])
def test_wilson_interval_closed_form(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert float(lo) == pytest.approx(low, abs=1e-4) and float(hi) == pytest.approx(high, abs=1e-4)


def test_wilson_interval_rejects_bad_counts():
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_source_reliability_on_a_hand_built_case():
    atoms = np.full((4, 18, 5), -1, np.int8)
    gt = np.zeros((4, 18), np.int8)
    j = Q_INDEX["A1"]
    atoms[:, j, 2] = [0, 0, 1, -1]  # self: 2 right of 3
    atoms[:, j, 4] = [0, 1, 1, 0]  # device: 2 right of 4
    rel = source_reliability(atoms, gt).set_index(["source", "question_id"])
    s = rel.loc[("daily_self_report", "A1")]
    assert s["coverage"] == 0.75 and s["accuracy"] == pytest.approx(2 / 3)
    assert s["conflict_rate"] == pytest.approx(1 / 3)  # row 1: self 0 vs device 1
    assert np.isnan(rel.loc[("profile_ltm", "A1"), "accuracy"])
    summ = source_summary(atoms, gt).set_index("source")
    assert summ.loc["device_log", "answered"] == 4
    cm = confusion_matrix(atoms, gt, "A1", "device_log")
    assert cm.loc["fewer_than_10", "fewer_than_10"] == 2 and cm.to_numpy().sum() == 4


def test_learned_confusion_rows_are_distributions(runs):
    table = learned_confusion(runs[0].models["nbf"], "B2", "device_log")
    np.testing.assert_allclose(table.sum(axis=1), 1.0)
    assert table.shape == (4, 4)


def test_mix_keeps_split_proportions_and_drops_a_class():
    tb = generate(SMALL)
    only = mix_testbed(tb, (0, 0, 1))
    assert set(only.personas["difficulty"]) == {"stated_vs_revealed"}
    half = mix_testbed(tb, (1, 0.5, 1))
    counts = half.personas.groupby(["difficulty", "split"]).size()
    assert counts[("temporal_shift", "train")] == round(0.5 * SMALL.split_counts()["train"])
    with pytest.raises(ValueError):
        mix_testbed(tb, (0, 0, 0))


def test_lab_and_what_broke():
    nominal = run_lab(seed=9, personas_per_difficulty=40, n_boot=100)
    strong = run_lab(seed=9, personas_per_difficulty=40, bias_scale=3.0, n_boot=100)
    board = nominal.leaderboard.set_index("method")
    assert board.loc["dsnbf", "ci_low"] <= board.loc["dsnbf", "accuracy"]
    assert np.isnan(board.loc["source_reachability", "rank"])
    w = what_broke(nominal, strong)
    assert w["method"] in set(board.index)
    # stronger self-report/planner bias moves one of those two sources the most
    assert w["source"] in {"daily_self_report", "planner"}
    assert w["source_accuracy_change"] < 0
