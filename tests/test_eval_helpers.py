"""Pure helpers behind the evaluation pages: what-broke sentences, threshold metrics, the
shared bootstrap weights and the SQL atom lookup (URL parsing: ``test_urlparams.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation.lab import NOMINAL, describe_what_broke, is_nominal
from core.evaluation.metrics import _resample_weights, cluster_bootstrap, coverage
from core.evaluation.run import run_testbed
from core.evaluation.selective import SKIP_METHODS, SKIP_RULE_NOTES, threshold_metrics
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate


def broke(**kw) -> dict:
    base = {"method": "majority_vote", "rank_before": 6, "rank_after": 8,
            "accuracy_change": -6.2, "source": "daily_self_report",
            "source_accuracy_change": -12.5, "source_coverage_change": 0.0}
    return {**base, **kw}


def test_nominal_setting_is_recognised_with_any_equal_mix():
    assert is_nominal(bias_scale=1.0, dropout_scale=1.0, mix=(0.5, 0.5, 0.5))
    assert not is_nominal(bias_scale=1.0, dropout_scale=1.0, mix=(1.0, 0.0, 1.0))
    assert not is_nominal(bias_scale=1.25, dropout_scale=1.0, mix=NOMINAL["mix"])


def test_what_broke_sentences_come_from_the_numbers():
    text = describe_what_broke(broke(), bias_scale=2.5, dropout_scale=1.0, mix=(1, 1, 1))
    assert "bias scale at 2.5×" in text and "falls from rank 6 to rank 8" in text
    assert "−6.2 points" in text and "Daily self-report" in text and "−12.5 points" in text
    assert "bias knobs act on this source directly" in text
    climb = describe_what_broke(broke(rank_after=4, accuracy_change=-1.0), bias_scale=1.0,
                                dropout_scale=2.0, mix=(1, 1, 1))
    assert "climbs from rank 6 to rank 4" in climb and "the others lost more" in climb
    assert "not scaled by the knob you moved" in climb  # self-report under a dropout change
    same = describe_what_broke(broke(rank_after=6), bias_scale=1.0, dropout_scale=1.0,
                               mix=(1, 0, 1))
    assert "every method keeps its rank" in same and "0 % temporal shift" in same
    nominal = describe_what_broke(broke(), bias_scale=1.0, dropout_scale=1.0, mix=(1, 1, 1))
    assert nominal.startswith("This is the nominal setting")


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(TestbedConfig(seeds=(5, 6), personas_per_difficulty=12)),
                       methods=list(SKIP_METHODS))


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_threshold_metrics_at_the_calibrated_theta_reproduce_the_predictions(runs, method):
    assert SKIP_RULE_NOTES[method]
    table = threshold_metrics(runs, method)
    assert table["seed"].tolist() == [5, 6]
    for r, (_, row) in zip(runs, table.iterrows(), strict=True):
        assert row["coverage"] == pytest.approx(100 * coverage(r.predictions[method].skipped))
        assert row["n"] == r.gt.size
    low = threshold_metrics(runs, method, theta=0.0)
    high = threshold_metrics(runs, method, theta=1.0)
    assert (high["coverage"] <= low["coverage"] + 1e-9).all()
    assert (high["answered"] <= high["n"]).all() and (high["errors"] <= high["answered"]).all()
    assert (high["theta"] == 1.0).all()


def test_shared_bootstrap_weights_give_the_same_interval():
    rng = np.random.default_rng(3)
    correct = rng.random((50, 18)) < 0.7
    a = cluster_bootstrap(correct, b=300, seed=42)
    b = cluster_bootstrap(correct, b=300, seed=42, weights=_resample_weights(50, 300, 42))
    assert (a.low, a.high) == (b.low, b.high)
    with pytest.raises(ValueError, match="weights"):
        cluster_bootstrap(correct, b=300, weights=np.ones((10, 50)))


def test_load_atoms_matches_the_readout(small_store):
    from core.store import connect, load_atoms, load_testbed
    from core.testbed.readout import readout

    con = connect(small_store)
    try:
        stored, tb = load_atoms(con), load_testbed(con)
        extracted = load_atoms(con, kind="extracted")
    finally:
        con.close()
    np.testing.assert_array_equal(stored, readout(tb))
    # our extractor's μ̂ is stored for the test split only (core.build.PROSE_SPLITS), and it
    # equals μ* on every informative cell (docs/prose.md: its misses are non-informative)
    from core.prose.extract import INFORMATIVE

    test = (tb.personas["split"] == "test").to_numpy()
    assert test.any() and (extracted[~test] == -1).all()
    np.testing.assert_array_equal(extracted[test][:, INFORMATIVE], stored[test][:, INFORMATIVE])
