"""Seed 003's label-source analysis on seed 000's resolver outputs."""

from __future__ import annotations

import numpy as np
import pytest

from core.calibration.bridge import TIER_PRIOR, bridge_analysis, bridge_items
from core.evaluation.run import run_testbed
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(TestbedConfig(seeds=(31,), personas_per_difficulty=60)),
                       methods=("dsnbf", "nbf"))


def test_items_carry_the_rules_and_labels(runs):
    items = bridge_items(runs, method="dsnbf", reference="objective_log")
    r = runs[0]
    assert len(items) == len(r.personas) * 18
    assert set(np.unique(items["c_b"])) <= set(TIER_PRIOR.values()) | {0.20}
    np.testing.assert_array_equal(items["y"].to_numpy(),
                                  (r.predictions["dsnbf"].answer == r.gt).reshape(-1))
    assert items["c_a"].between(0, 1).all()


def test_a_sparse_reference_reverses_the_ranking(runs):
    table = bridge_analysis(bridge_items(runs, reference="objective_log")).set_index("group")
    row = table.loc["all"]
    assert row["gap_z"] - row["gap_y"] == pytest.approx(row["t_omit"] + row["t_fp"], abs=1e-12)
    assert row["prevalence_z"] < row["crossover"] < row["prevalence_y"]
    assert row["gap_y"] < 0 < row["gap_z"] and row["reverses"]
    assert len(table) == 9


def test_unknown_reference_or_method_is_a_value_error(runs):
    with pytest.raises(ValueError, match="reference"):
        bridge_items(runs, reference="diary")
    with pytest.raises(ValueError, match="was not run"):
        bridge_items(runs, method="bcf")
