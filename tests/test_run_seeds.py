"""``seed_rows`` / ``run_seeds``: the one per-seed loop behind evaluate, the decomposition,
the Selective QA tour stop and ``run_testbed``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation.run import run_seed, run_seeds, run_testbed, seed_rows
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.readout import readout


def _personas(rows):
    return pd.DataFrame(rows, columns=["seed", "split"])


FULL = [("train",), ("calibration",), ("test",)]


@pytest.mark.parametrize(("rows", "expected"), [
    ([(7, s) for (s,) in FULL], [(7, [True, True, True])]),
    ([(9, "test"), (3, "train"), (9, "train"), (3, "calibration"), (9, "calibration"),
      (3, "test")],
     [(9, [True, False, True, False, True, False]), (3, [False, True, False, True, False, True])]),
    ([(1, "dev"), *[(1, s) for (s,) in FULL]], [(1, [True, True, True, True])]),
])
def test_seeds_in_order_of_first_appearance_with_their_rows(rows, expected):
    got = seed_rows(_personas(rows))
    assert [(s, m.tolist()) for s, m in got] == expected


@pytest.mark.parametrize(("rows", "message"), [
    ([(7, "train"), (7, "test")], "random seed 7 has no calibration people"),
    ([(7, "dev")], "random seed 7 has no train, calibration, test people"),
    ([*[(1, s) for (s,) in FULL], (2, "train")], "random seed 2 has no calibration, test"),
])
def test_a_seed_without_a_split_is_named_before_any_fit(rows, message):
    with pytest.raises(ValueError, match=message):
        seed_rows(_personas(rows))


def test_run_seeds_equals_run_seed_per_seed_and_run_testbed():
    tb = generate(TestbedConfig(seeds=(5, 6), personas_per_difficulty=4))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    noisy = mu.copy()
    noisy[..., 0] = -1  # the test atoms the runs predict on: one source silenced
    methods = ["majority_vote", "dsnbf"]
    runs = run_seeds(mu, gt, tb.personas, methods=methods, test_atoms=noisy)
    assert [r.seed for r in runs] == [5, 6]
    by_testbed = run_testbed(tb, methods=methods)
    for seed, run, ref in zip((5, 6), runs, by_testbed, strict=True):
        m = (tb.personas["seed"] == seed).to_numpy()
        test = m & (tb.personas["split"] == "test").to_numpy()
        one = run_seed(mu[m], gt[m], tb.personas[m].reset_index(drop=True), methods=methods,
                       test_atoms=noisy[test])
        for name in methods:
            np.testing.assert_array_equal(run.predictions[name].answer,
                                          one.predictions[name].answer)
        np.testing.assert_array_equal(run.atoms, noisy[test])
        np.testing.assert_array_equal(ref.atoms, mu[test])
