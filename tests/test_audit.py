"""The Python label functions and the independent SQL ones agree on a generated store, and the
audit (library and CLI) reports disagreement when the store is tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from core.audit import audit_store
from core.build import build_store
from core.cli import main
from core.store import connect
from core.testbed.config import TestbedConfig

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"  # CC BY 4.0


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("audit") / "a.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321, 20260324), personas_per_difficulty=40))
    return path


def test_python_and_sql_agree_on_every_row(store):
    con = connect(store)
    try:
        res = audit_store(con)
    finally:
        con.close()
    assert res.n_rows == 2 * 120 * 18
    assert res.python_vs_sql == res.n_rows
    assert res.python_vs_stored == res.n_rows
    assert res.ok and res.mismatches.empty


def test_tampered_ground_truth_is_reported(store, tmp_path, capsys):
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(store.read_bytes())
    con = duckdb.connect(str(bad))
    with con.cursor() as cur:
        cur.execute("UPDATE ground_truth SET answer = 'fewer_than_10' "
                    "WHERE question_id = 'A1' AND answer <> 'fewer_than_10'")
    con.close()
    out = tmp_path / "audit.json"
    assert main(["audit", "--db", str(bad), "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert not report["ok"]
    assert report["python_vs_sql"] == report["rows"]  # both recomputations still agree
    assert report["python_vs_stored"] < report["rows"]
    assert {m["question_id"] for m in report["mismatches"]} == {"A1"}


def test_import_release_then_audit_matches_reference(tmp_path, capsys):
    db = tmp_path / "sample.duckdb"
    assert main(["import-release", str(SAMPLE), "--db", str(db)]) == 0
    out = tmp_path / "audit.json"
    assert main(["audit", "--db", str(db), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["reference_rows"] == 18
    assert report["python_vs_reference"] == 18
    assert report["ok"]
