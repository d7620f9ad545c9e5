"""The command line: exit statuses, one-line errors, JSON output."""

from __future__ import annotations

import json

import pytest

from core.cli import main


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
