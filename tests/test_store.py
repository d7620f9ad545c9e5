"""The DuckDB store: round trip of every layer, atomic writes, schema checks."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from core import store as store_mod
from core.store import StoreError, build_store, connect, load_testbed, query_df, store_info
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.schema import LAYERS

CFG = TestbedConfig(seeds=(11, 12), personas_per_difficulty=8)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.duckdb"
    build_store(path, CFG)
    return path


def test_round_trip_restores_every_array(built):
    original = generate(CFG)
    con = connect(built)
    try:
        back = load_testbed(con)
        one = load_testbed(con, seed=12, persona_id=original.personas["persona_id"].iloc[-1])
    finally:
        con.close()
    back.validate()
    for name in LAYERS:
        for key, arr in original.layer(name).items():
            np.testing.assert_array_equal(back.layer(name)[key], arr, err_msg=f"{name}.{key}")
    assert list(back.personas["persona_id"]) == list(original.personas["persona_id"])
    assert one.n == 1 and one.personas["seed"].iloc[0] == 12


def test_contract_tables_and_counts(built):
    info = store_info(built)
    assert info.n_personas == 48 and info.n_ground_truth == 48 * 18 and info.seeds == (11, 12)
    con = connect(built)
    try:
        tables = set(query_df(con, "SELECT table_name FROM information_schema.tables")
                     ["table_name"])
        atoms = query_df(con, "SELECT kind, count(*) AS n, count(value) AS nonnull "
                              "FROM atoms GROUP BY kind")
        splits = query_df(con, "SELECT difficulty, split, count(*) AS n FROM personas "
                               "WHERE seed = 11 GROUP BY ALL ORDER BY ALL")
    finally:
        con.close()
    assert {"personas", "events", "ground_truth", "reference_labels", "atoms", "predictions",
            "runs", "src_profile", "src_planner", "src_self_report", "src_objective",
            "src_device", "meta", "knobs", "llm_answers"} <= tables
    assert atoms["n"].iloc[0] == 48 * 18 * 5 and 0 < atoms["nonnull"].iloc[0] < 48 * 90
    expected = CFG.split_counts()  # train 4, dev 1, calibration 2, test 1 of 8
    assert len(splits) == 12
    assert all(splits["n"] == splits["split"].map(expected))


def test_failed_build_leaves_the_old_store_untouched(built, tmp_path, monkeypatch):
    target = tmp_path / "keep.duckdb"
    target.write_bytes(built.read_bytes())
    before = target.read_bytes()

    def boom(tb):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store_mod, "ground_truth", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_store(target, CFG)
    assert target.read_bytes() == before
    assert not list(tmp_path.glob("keep.duckdb.tmp-*"))


def test_wrong_schema_version_is_refused(built, tmp_path):
    old = tmp_path / "old.duckdb"
    old.write_bytes(built.read_bytes())
    con = duckdb.connect(str(old))
    with con.cursor() as cur:
        cur.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StoreError, match="schema version"):
        store_info(old)


def test_missing_store_message_says_how_to_build(tmp_path):
    with pytest.raises(StoreError, match="python -m core build"):
        connect(tmp_path / "absent.duckdb")
