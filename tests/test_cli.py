"""The command line: exit statuses, one-line errors, JSON output."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.testbed.config import TestbedConfig

SMALL = TestbedConfig(seeds=(5,), personas_per_difficulty=20)


@pytest.mark.parametrize("argv,fragment", [
    (["build", "--seeds", "x"], "invalid int value"),
    (["build", "--personas-per-difficulty", "2"], "personas_per_difficulty"),
    (["build", "--bias-scale", "-1"], "bias_scale"),
    (["build", "--dropout-scale", "nan"], "dropout_scale"),
    (["build", "--seeds", "1", "1"], "distinct"),
    (["audit", "--db", "/nonexistent/none.duckdb"], "no store at"),
    (["import-release", "/nonexistent/dir", "--db", "/tmp/never.duckdb"], "not a directory"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_bad_input_exits_2_with_one_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_build_writes_json_and_a_store(tmp_path, capsys):
    db, out = tmp_path / "s.duckdb", tmp_path / "r" / "build.json"
    assert main(["build", "--db", str(db), "--seeds", "7", "--personas-per-difficulty", "6",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["personas"] == 18 and report["ground_truth_rows"] == 18 * 18
    assert db.exists() and not list(tmp_path.glob("*.tmp-*"))
    assert "built" in capsys.readouterr().out


def test_not_a_store_is_a_clean_error(tmp_path, capsys):
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    assert main(["audit", "--db", str(junk)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_evaluate_caches_predictions_in_the_store(tmp_path, capsys):
    import duckdb

    db, out = tmp_path / "e.duckdb", tmp_path / "eval.json"
    assert main(["build", "--db", str(db), "--seeds", "5", "--personas-per-difficulty",
                 "20"]) == 0
    assert main(["evaluate", "--db", str(db), "--bootstrap", "200", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    methods = {row["method"] for row in report["main"]}
    assert {"dsnbf", "nbf", "majority_vote", "dawid_skene"} <= methods
    con = duckdb.connect(str(db), read_only=True)
    with con.cursor() as cur:
        n = cur.execute("SELECT count(*) FROM predictions WHERE run_id = ?",
                        [report["run_id"]]).fetchall()[0][0]
        runs = cur.execute("SELECT count(*) FROM runs").fetchall()[0][0]
    con.close()
    test_personas = 3 * SMALL.split_counts()["test"]
    assert n == test_personas * 18 * 16
    assert runs == 2  # the build's default run and this evaluation
    # a second evaluation replaces the cached run instead of duplicating it
    assert main(["evaluate", "--db", str(db), "--bootstrap", "200"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    with con.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 2
    con.close()


def test_evaluate_extracted_without_atoms_is_bad_input(tmp_path, capsys):
    db = tmp_path / "x.duckdb"
    assert main(["build", "--db", str(db), "--seeds", "5", "--personas-per-difficulty",
                 "8"]) == 0
    assert main(["evaluate", "--db", str(db), "--input", "extracted"]) == 2
    assert "extracted atoms" in capsys.readouterr().err
