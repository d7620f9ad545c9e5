"""Hypothesis properties of the testbed: answers in their answer spaces, stratified splits,
and identical stores from identical configurations."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.build import build_store
from core.store import connect, query_df
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.questions import QUESTIONS, SOURCES
from core.testbed.readout import readout

KQ = np.array([q.k for q in QUESTIONS])

configs = st.builds(
    TestbedConfig,
    seeds=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=2, unique=True).map(tuple),
    personas_per_difficulty=st.integers(4, 16),
    bias_scale=st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]),
    dropout_scale=st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_answers_stay_in_their_answer_spaces_and_splits_are_stratified(cfg):
    tb = generate(cfg)
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    assert ((gt >= 0) & (gt < KQ)).all()
    assert ((mu >= -1) & (mu < KQ[None, :, None])).all()
    for j, q in enumerate(QUESTIONS):  # only informative cells, or a broadcast edge label
        for s, src in enumerate(SOURCES):
            if src not in q.informative:
                cell = mu[:, j, s]
                assert ((cell == -1) | np.isin(cell, q.edge)).all(), (q.qid, src)
    counts = tb.personas.groupby(["seed", "difficulty", "split"]).size()
    expected = cfg.split_counts()
    for (seed, diff, split), n in counts.items():
        assert n == expected[split], (seed, diff, split)
    assert len(counts) == len(cfg.seeds) * 3 * sum(v > 0 for v in expected.values())


def _table(path, name):
    con = connect(path)
    try:
        df = query_df(con, f"SELECT * FROM {name}")
    finally:
        con.close()
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def test_the_same_config_gives_identical_stores(tmp_path):
    cfg = TestbedConfig(seeds=(77,), personas_per_difficulty=8, bias_scale=1.5)
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    build_store(a, cfg)
    build_store(b, cfg)
    con = connect(a)
    try:
        tables = query_df(con, "SELECT table_name FROM information_schema.tables")["table_name"]
    finally:
        con.close()
    for name in sorted(tables):
        ta, tb_ = _table(a, name), _table(b, name)
        if name == "meta":  # the build time differs by design
            ta = ta[ta["key"] != "built_at"].reset_index(drop=True)
            tb_ = tb_[tb_["key"] != "built_at"].reset_index(drop=True)
        if name == "runs":
            ta, tb_ = ta.drop(columns=["created_at"]), tb_.drop(columns=["created_at"])
        pd.testing.assert_frame_equal(ta, tb_, check_exact=True, obj=name)
