"""Cached predictions in the store rebuild the same runs as a fresh evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from core.build import build_store
from core.evaluation import tables as T
from core.evaluation.cached import default_run_id, load_runs
from core.evaluation.run import run_testbed
from core.store import StoreError, connect, load_testbed
from core.testbed.config import TestbedConfig

CFG = TestbedConfig(seeds=(21, 22), personas_per_difficulty=20)


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("cached") / "c.duckdb"
    build_store(path, CFG)
    c = connect(path)
    yield c
    c.close()


def test_cached_runs_equal_a_fresh_evaluation(con):
    cached = load_runs(con)
    fresh = run_testbed(load_testbed(con))
    assert [r.seed for r in cached] == [r.seed for r in fresh]
    for a, b in zip(cached, fresh, strict=True):
        assert list(a.personas["persona_id"]) == list(b.personas["persona_id"])
        np.testing.assert_array_equal(a.gt, b.gt)
        np.testing.assert_array_equal(a.atoms, b.atoms)
        assert list(a.predictions) == list(b.predictions)
        for m in a.predictions:
            np.testing.assert_array_equal(a.predictions[m].answer, b.predictions[m].answer)
            np.testing.assert_array_equal(a.predictions[m].skipped, b.predictions[m].skipped)
            np.testing.assert_allclose(a.predictions[m].confidence,
                                       b.predictions[m].confidence)
    ta, tb = T.main_table(cached, b=100), T.main_table(fresh, b=100)
    np.testing.assert_allclose(ta[["accuracy", "ci_low", "ci_high"]],
                               tb[["accuracy", "ci_low", "ci_high"]])


def test_margins_are_cached_for_posterior_methods(con):
    run = load_runs(con)[0]
    assert np.isfinite(run.predictions["dsnbf"].extra["margin"]).all()
    assert np.isnan(run.predictions["majority_vote"].extra["margin"]).all()


def test_default_run_id_and_unknown_run(con):
    assert default_run_id(con) == f"default-{CFG.key}"
    with pytest.raises(StoreError, match="no cached predictions"):
        load_runs(con, run_id="nope")
