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


def _write_scores(path, n=120, seed=0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.75).astype(int)
    z = y * (rng.random(n) < 0.4).astype(int)
    p = np.clip(0.7 + 0.1 * y + rng.normal(0, 0.1, n), 0, 1).round(3)
    pb = np.clip(0.35 + rng.normal(0, 0.1, n), 0, 1).round(3)
    pd.DataFrame({"p": p, "y": y, "z": z, "p_b": pb, "cluster": rng.integers(0, 10, n)}
                 ).to_csv(path, index=False)


def test_score_reports_the_label_source_reversal(tmp_path, capsys):
    csv, out = tmp_path / "s.csv", tmp_path / "s.json"
    _write_scores(csv)
    assert main(["score", str(csv), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    ls = report["label_source"]
    assert abs(ls["gap_z"] - ls["gap_y"] - (ls["t_omit"] + ls["t_fp"])) < 1e-12
    assert report["rules"]["p"]["y"]["n"] == 120 and report["clusters"] <= 10
    assert len(report["reliability"]) == 10
    assert "crossover prevalence" in capsys.readouterr().out


@pytest.mark.parametrize("content,fragment", [
    ("q,y\n0.5,1\n0.2,0\n", "missing column"),
    ("p,y\n0.5,2\n0.2,0\n", "column y must be 0 or 1 (line 2: 2)"),
    ("p,y\n1.5,1\n0.2,0\n", "column p must be a number in [0, 1]"),
    ("p,y\n0.5,1\n", "at least 2 rows"),
    ("p,y,weight\n0.5,1,0\n0.2,0,1\n", "weight"),
])
def test_score_bad_csv_is_one_line(tmp_path, capsys, content, fragment):
    csv = tmp_path / "bad.csv"
    csv.write_text(content)
    assert main(["score", str(csv)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_pilot_command(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["pilot", "--budget", "40", "--reps", "300", "--json", str(out)]) == 0
    rows = {r["estimator"]: r for r in json.loads(out.read_text())["summary"]}
    assert rows["trisource"]["mean_width"] < rows["human_only"]["mean_width"]
    assert main(["pilot", "--scenario", "mars"]) == 2
    assert main(["pilot", "--budget", "1"]) == 2
