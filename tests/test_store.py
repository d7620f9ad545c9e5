"""The DuckDB store: round trip of every layer, atomic writes, schema checks."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import numpy as np
import pytest

from core import store as store_mod
from core.build import build_store
from core.store import (
    StoreError,
    check_store_destination,
    connect,
    load_testbed,
    query_df,
    remove_stale_temporaries,
    store_info,
)
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.schema import LAYERS

CFG = TestbedConfig(seeds=(11, 12), personas_per_difficulty=8)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.duckdb"
    build_store(path, CFG)
    return path


def test_the_build_writes_seed_002s_checked_world(built):
    """34 facts, 27 sources, 7 contacts and 8 journeys of the authored world (seed 002 §4.1),
    its 43 items, six arms and the reference readers' responses and scores."""
    con = connect(built)
    try:
        counts = {t: query_df(con, f"SELECT count(*) AS n FROM {t}")["n"].iloc[0]
                  for t in ("records_facts", "records_sources", "records_contacts",
                            "records_journeys", "records_items", "records_renders",
                            "records_responses")}
        families = query_df(con, "SELECT family, count(*) AS n FROM records_items "
                                 "GROUP BY family ORDER BY family")
        m1 = query_df(con, "SELECT value FROM records_scores WHERE arm = 'D' AND measure = 'M1'")
        m2 = query_df(con, "SELECT arm, value FROM records_scores WHERE measure = 'M2' "
                           "AND arm IN ('C', 'E')")
        orphans = query_df(con, "SELECT count(*) AS n FROM records_responses r ANTI JOIN "
                                "records_items i USING (item_id)")["n"].iloc[0]
    finally:
        con.close()
    assert counts == {"records_facts": 34, "records_sources": 27, "records_contacts": 7,
                      "records_journeys": 8, "records_items": 43, "records_renders": 6,
                      "records_responses": 43 * 6 * 2}  # 43 items × 6 arms × 2 replicates
    assert dict(zip(families["family"], families["n"], strict=True)) == {
        "CONF": 6, "CURR": 8, "ENT": 5, "GAP": 5, "HIST": 8, "HOP": 6, "STALE": 5}
    assert m1["value"].tolist() == [1.0]  # the full dimension's reader answers every item
    assert m2["value"].isna().all() and len(m2) == 2  # undefined, not zero, without ids
    assert orphans == 0


def test_a_broken_world_stops_the_build_before_anything_is_written(tmp_path, monkeypatch):
    import dataclasses

    import core.build
    from core.records.checks import WorldCheckError
    from core.records.world import load_world

    w = load_world()
    broken = dataclasses.replace(w, contacts=w.contacts[:-1])
    monkeypatch.setattr(core.build, "load_world", lambda: broken)
    with pytest.raises(WorldCheckError):
        build_store(tmp_path / "s.duckdb", CFG, evaluate=False)
    assert not (tmp_path / "s.duckdb").exists()


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
        atoms = query_df(con, "SELECT kind, count(*) AS n, count(value) AS nonnull, "
                              "count(extractor) AS named, min(extractor) AS extractor "
                              "FROM atoms GROUP BY kind ORDER BY kind").set_index("kind")
        prose = query_df(con, "SELECT (SELECT count(*) FROM renders) AS docs, "
                              "(SELECT count(DISTINCT (seed, persona_id)) FROM render_lines) "
                              "AS lined")
        splits = query_df(con, "SELECT difficulty, split, count(*) AS n FROM personas "
                               "WHERE seed = 11 GROUP BY ALL ORDER BY ALL")
    finally:
        con.close()
    assert {"personas", "events", "ground_truth", "reference_labels", "atoms", "predictions",
            "runs", "src_profile", "src_planner", "src_self_report", "src_objective",
            "src_device", "meta", "knobs", "llm_answers", "renders", "render_lines"} <= tables
    n_test = 2 * 3 * CFG.split_counts()["test"]  # 2 seeds × 3 difficulties
    assert list(atoms.index) == ["extracted", "readout"]
    assert atoms.loc["readout", "n"] == 48 * 18 * 5 and atoms.loc["readout", "nonnull"] < 48 * 90
    assert atoms.loc["extracted", "n"] == n_test * 90  # our μ̂ of the test split
    assert (atoms["nonnull"] > 0).all()
    assert atoms.loc["readout", "named"] == 0  # μ* has no extractor
    assert atoms.loc["extracted", "named"] == n_test * 90
    assert atoms.loc["extracted", "extractor"] == "arbiter-template"
    assert prose["docs"].iloc[0] == n_test and prose["lined"].iloc[0] == n_test
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


def test_connect_never_creates_a_store(tmp_path):
    absent = tmp_path / "absent.duckdb"
    for read_only in (True, False):
        with pytest.raises(StoreError, match="no store at"):
            connect(absent, read_only=read_only)
    with pytest.raises(StoreError, match="no store at"):
        store_info(absent)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("read_only", [True, False])
def test_connect_refuses_directories_and_empty_paths(tmp_path, read_only):
    with pytest.raises(StoreError, match="is a directory"):
        connect(tmp_path, read_only=read_only)
    with pytest.raises(StoreError, match="store path is empty"):
        connect("", read_only=read_only)
    if os.path.exists("/dev/null"):
        with pytest.raises(StoreError, match="not a regular file"):
            connect("/dev/null", read_only=read_only)


def test_not_a_store_is_one_line(tmp_path):
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(StoreError, match="is not an Arbiter store") as info:
        store_info(empty)
    assert len(str(info.value).splitlines()) == 1


def test_destination_is_checked_before_any_work(tmp_path, monkeypatch):
    import core.build

    monkeypatch.setattr(core.build, "generate",
                        lambda config: pytest.fail("generated before checking the destination"))
    (tmp_path / "afile").write_text("x")
    for bad, match in ((tmp_path, "is a directory"), ("", "store path is empty"),
                       (tmp_path / "afile" / "s.duckdb", "afile is not a directory")):
        with pytest.raises(StoreError, match=match):
            build_store(bad, CFG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert check_store_destination(tmp_path / "new" / "deeper" / "s.duckdb").name == "s.duckdb"
    assert not (tmp_path / "new").exists()  # checking creates nothing


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    try:
        os.kill(proc.pid, 0)
    except ProcessLookupError:
        return proc.pid
    pytest.skip("the pid of the exited child was reused at once")


def test_build_removes_temporaries_of_dead_builds_only(tmp_path):
    db = tmp_path / "s.duckdb"
    dead = _dead_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        stale = [tmp_path / f"s.duckdb.tmp-{dead}", tmp_path / f"s.duckdb.tmp-{dead}.wal"]
        kept = [tmp_path / f"s.duckdb.tmp-{live.pid}", tmp_path / f"s.duckdb.tmp-{live.pid}.wal",
                tmp_path / f"other.duckdb.tmp-{dead}",  # another store's
                tmp_path / "s.duckdb.tmp-notapid", tmp_path / f"s.duckdb.tmp-{dead}.bak"]
        for p in stale + kept:
            p.write_bytes(b"\0" * 1024)
        build_store(db, TestbedConfig(seeds=(3,), personas_per_difficulty=4), evaluate=False)
        assert store_info(db).n_personas == 12
        assert [p.name for p in stale if p.exists()] == []
        assert [p.name for p in kept if not p.exists()] == []
    finally:
        live.kill()
        live.wait()


def test_stale_cleanup_keeps_this_process_and_reports_what_it_removed(tmp_path):
    db = tmp_path / "x.duckdb"
    dead = _dead_pid()
    mine = [tmp_path / f"x.duckdb.tmp-{os.getpid()}", tmp_path / f"x.duckdb.tmp-{os.getpid()}.wal"]
    stale = tmp_path / f"x.duckdb.tmp-{dead}.wal"  # the .wal alone (its store already gone)
    for p in [*mine, stale]:
        p.write_text("partial")
    assert remove_stale_temporaries(db) == [stale]
    assert all(p.exists() for p in mine) and not stale.exists()
    assert remove_stale_temporaries(db) == []
    assert remove_stale_temporaries(tmp_path / "missing-folder" / "x.duckdb") == []


def test_stale_cleanup_escapes_glob_characters(tmp_path):
    db = tmp_path / "a[1].duckdb"
    dead = _dead_pid()
    stale = tmp_path / f"a[1].duckdb.tmp-{dead}"
    other = tmp_path / f"a1.duckdb.tmp-{dead}"
    stale.write_text("x")
    other.write_text("x")
    assert remove_stale_temporaries(db) == [stale]
    assert other.exists()
