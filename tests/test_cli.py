"""The command line: exit statuses, one-line errors, JSON output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import MAX_BOOTSTRAP, MAX_REPS, _write_json, main
from core.testbed.config import TestbedConfig

SMALL = TestbedConfig(seeds=(5,), personas_per_difficulty=20)


@pytest.mark.parametrize("argv,fragment", [
    (["build", "--seeds", "x"], "must be an integer"),
    (["build", "--personas-per-difficulty", "2"], "--personas-per-difficulty"),
    (["build", "--bias-scale", "-1"], "--bias-scale"),
    (["build", "--dropout-scale", "nan"], "--dropout-scale"),
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
    import duckdb

    db = tmp_path / "x.duckdb"
    assert main(["build", "--db", str(db), "--seeds", "5", "--personas-per-difficulty",
                 "8"]) == 0
    # a generated store holds our extractor's μ̂ (issue 11), so mixed mode works on it ...
    assert main(["evaluate", "--db", str(db), "--input", "extracted", "--bootstrap", "100"]) == 0
    con = duckdb.connect(str(db))
    with con.cursor() as cur:
        cur.execute("DELETE FROM atoms WHERE kind = 'extracted'")
    con.close()
    capsys.readouterr()
    # ... and without extracted atoms it is bad input
    assert main(["evaluate", "--db", str(db), "--input", "extracted"]) == 2
    assert "extracted atoms" in capsys.readouterr().err


def test_evaluate_extracted_sets_the_papers_mu_hat_column_beside_it(tmp_path, capsys):
    """Issue 19 point 9: μ̂ results sit beside the paper's μ̂ numbers (DSNBF 80.3), not μ*."""
    from core.evaluation.paper import (
        PAPER_FORCED,
        PAPER_FORCED_EXTRACTED,
        PAPER_SELECTIVE,
        PAPER_SELECTIVE_EXTRACTED,
    )

    db = tmp_path / "x.duckdb"
    assert main(["build", "--db", str(db), "--seeds", "5", "--personas-per-difficulty",
                 "8"]) == 0
    reports = {}
    for inp in ("readout", "extracted"):
        out = tmp_path / f"{inp}.json"
        capsys.readouterr()
        assert main(["evaluate", "--db", str(db), "--input", inp, "--bootstrap", "100",
                     "--json", str(out)]) == 0
        reports[inp] = (json.loads(out.read_text()), capsys.readouterr().out)
    hat, hat_out = reports["extracted"]
    star, star_out = reports["readout"]
    main_hat = {r["method"]: r for r in hat["main"]}
    main_star = {r["method"]: r for r in star["main"]}
    assert main_hat["dsnbf"]["paper"] == 80.3 and main_star["dsnbf"]["paper"] == 82.3
    for m, row in main_hat.items():
        want = PAPER_FORCED_EXTRACTED.get(m)
        assert (row["paper"] == want) if want is not None else row["paper"] is None, m
        assert row["regenerated"] is None  # the released code's re-run has no μ̂ column
        if want is not None:
            assert row["delta_paper"] == pytest.approx(row["accuracy"] - want)
    for m, row in main_star.items():
        if m in PAPER_FORCED:
            assert row["paper"] == PAPER_FORCED[m]
    sel_hat = {r["method"]: r for r in hat["selective"]}
    assert (sel_hat["dsnbf_skip"]["paper_selective"], sel_hat["dsnbf_skip"]["paper_coverage"]
            ) == PAPER_SELECTIVE_EXTRACTED["dsnbf_skip"] == (85.3, 78.3)
    sel_star = {r["method"]: r for r in star["selective"]}
    assert sel_star["dsnbf_skip"]["paper_selective"] == PAPER_SELECTIVE["dsnbf_skip"][0]
    assert "μ̂ column" in hat_out and "80.3" in hat_out
    assert "μ* column" in star_out and "μ̂ column" not in star_out


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


# ---------------------------------------------------------------- the exit-code table
def _tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` with its size (to show that nothing was created)."""
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def bad_inputs(tmp_path, small_store) -> dict[str, str]:
    """A folder of bad inputs; the placeholders of the table below."""
    import duckdb

    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "header.csv").write_text("p,y\n")
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 16)
    (tmp_path / "long.csv").write_bytes(b"p,y\n" + b"0.5," * 10_000 + b"\n")
    (tmp_path / "weights.csv").write_text("p,y,weight\n0.5,1,1e308\n0.2,0,1e-308\n")
    (tmp_path / "ok.csv").write_text("p,y\n0.5,1\n0.2,0\n0.7,1\n")
    (tmp_path / "junk.duckdb").write_text("not a database")
    duckdb.connect(str(tmp_path / "tables.duckdb")).close()  # DuckDB, but no Arbiter tables
    # issue 20 point 7: deep JSON, broken stores, names too long for the file system
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "deep.json").write_text('{"a":' * 50_000 + "1" + "}" * 50_000)
    for name, sql in (("badconfig", "UPDATE meta SET value = '{x' WHERE key = 'config_json'"),
                      ("noatoms", "DROP TABLE atoms")):
        shutil.copy(small_store, tmp_path / f"{name}.duckdb")
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as con:
            con.execute(sql)
    return {"tmp": str(tmp_path), "store": str(small_store),
            "missing": str(tmp_path / "missing.duckdb"), "new": str(tmp_path / "new.duckdb"),
            "long": str(tmp_path / ("x" * 300))}


BAD = [
    # stores to read: never created, never a file of the wrong kind
    (["audit", "--db", "{missing}"], "no store at"),
    (["evaluate", "--db", "{missing}"], "no store at"),
    (["evaluate", "--db", "{missing}", "--bootstrap", "200"], "no store at"),
    (["audit", "--db", ""], "store path is empty"),
    (["evaluate", "--db", ""], "store path is empty"),
    (["audit", "--db", "{tmp}"], "is a directory"),
    (["evaluate", "--db", "{tmp}"], "is a directory"),
    (["audit", "--db", "{tmp}/junk.duckdb"], "cannot open store"),
    (["evaluate", "--db", "{tmp}/junk.duckdb"], "cannot open store"),
    (["audit", "--db", "{tmp}/tables.duckdb"], "not an Arbiter store"),
    (["evaluate", "--db", "{tmp}/tables.duckdb"], "not an Arbiter store"),
    (["evaluate", "--db", "{store}", "--bootstrap", "0"], "--bootstrap"),
    (["evaluate", "--db", "{store}", "--bootstrap", "99"], "--bootstrap"),
    (["evaluate", "--db", "{store}", "--bootstrap", "1000000000"], "--bootstrap"),
    (["evaluate", "--db", "{store}", "--bootstrap", "many"], "--bootstrap"),
    (["evaluate", "--db", "{store}", "--input", "other"], "invalid choice"),
    (["audit", "--db", "{store}", "--json", "{tmp}"], "is a directory"),
    # stores to write
    (["build", "--db", ""], "store path is empty"),
    (["build", "--db", "{tmp}"], "is a directory"),
    (["build", "--db", "{tmp}/afile/s.duckdb"], "afile is not a directory"),
    (["import-release", "{tmp}", "--db", ""], "store path is empty"),
    (["import-release", "{tmp}", "--db", "{tmp}"], "is a directory"),
    (["import-release", "{tmp}/none", "--db", "{new}"], "not a directory"),
    # build's numbers
    (["build", "--db", "{new}", "--personas-per-difficulty", "0"], "--personas-per-difficulty"),
    (["build", "--db", "{new}", "--personas-per-difficulty", "-1"], "--personas-per-difficulty"),
    (["build", "--db", "{new}", "--personas-per-difficulty", "1000000000"],
     "--personas-per-difficulty"),
    (["build", "--db", "{new}", "--seeds", "-1"], "--seeds"),
    (["build", "--db", "{new}", "--seeds", "4294967296"], "--seeds"),
    (["build", "--db", "{new}", "--seeds", "3", "3"], "distinct"),
    (["build", "--db", "{new}", "--bias-scale", "nan"], "--bias-scale"),
    (["build", "--db", "{new}", "--bias-scale", "inf"], "--bias-scale"),
    (["build", "--db", "{new}", "--bias-scale", "-1"], "--bias-scale"),
    (["build", "--db", "{new}", "--dropout-scale", "-inf"], "--dropout-scale"),
    (["build", "--db", "{new}", "--json", "{tmp}/afile/b.json"], "afile is not a directory"),
    # reproduce
    (["reproduce", "--bootstrap", "0"], "--bootstrap"),
    (["reproduce", "--bootstrap", "1000000000"], "--bootstrap"),
    (["reproduce", "--workers", "0"], "--workers"),
    (["reproduce", "--workers", "17"], "--workers"),
    (["reproduce", "--json", "{tmp}"], "is a directory"),
    # pilot
    (["pilot", "--seed", "-1"], "--seed"),
    (["pilot", "--seed", "4294967296"], "--seed"),
    (["pilot", "--budget", "0"], "--budget"),
    (["pilot", "--budget", "-5"], "--budget"),
    (["pilot", "--budget", "1" + "0" * 30], "--budget"),
    (["pilot", "--budget", "7.5"], "--budget"),
    (["pilot", "--reps", "0"], "--reps"),
    (["pilot", "--reps", "1000000000"], "--reps"),
    (["pilot", "--scenario", "mars"], "invalid choice"),
    (["pilot", "--json", "{tmp}"], "is a directory"),
    # score
    (["score", "{tmp}"], "is a directory"),
    (["score", "{tmp}/none.csv"], "no such file"),
    (["score", ""], "file name is empty"),
    (["score", "{tmp}/binary.csv"], "binary data"),
    (["score", "{tmp}/empty.csv"], "empty file"),
    (["score", "{tmp}/header.csv"], "at least 2 rows"),
    (["score", "{tmp}/long.csv"], "line 2 has 10,001 fields, the header has 2"),
    (["score", "{tmp}/weights.csv"], "weight"),
    (["score", "{tmp}/ok.csv", "--json", "{tmp}/afile/s.json"], "afile is not a directory"),
    # issue 20 point 7: each of these exited 1 ("unexpected …") or did the work first
    (["build", "--db", "{long}.duckdb"], "File name too long"),
    (["audit", "--db", "{long}.duckdb"], "File name too long"),
    (["score", "{long}.csv"], "File name too long"),
    (["records", "score", "{long}.jsonl"], "File name too long"),
    (["pilot", "--json", "{long}.json"], "File name too long"),
    (["records", "score", "{tmp}/deep.jsonl"], "nested too deeply"),
    (["records", "check", "--world", "{tmp}/deep.json"], "nested too deeply"),
    (["audit", "--db", "{tmp}/badconfig.duckdb"], "not a JSON object"),
    (["evaluate", "--db", "{tmp}/noatoms.duckdb"], "lacks the table(s) atoms"),
    (["build", "--db", "{new}", "--json", "/proc/arbiter-nowhere/b.json"], "cannot write"),
    # import-nq301
    (["import-nq301", "{tmp}/none"], "not a directory"),
    (["import-nq301", ""], "directory name is empty"),
    (["import-nq301", "{tmp}", "--out", "{tmp}/afile"], "not a directory"),
]


@pytest.mark.parametrize("argv,fragment", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_exit_code_table(argv, fragment, bad_inputs, capsys):
    root = Path(bad_inputs["tmp"])
    before = _tree(root)
    args = [a.format(**bad_inputs) for a in argv]
    assert main(args) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert fragment in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ") and "Traceback" not in err
    assert _tree(root) == before  # nothing created (a missing store is still missing)
    assert not captured.out  # refused before any work


def test_bounds_are_the_documented_ones():
    assert MAX_BOOTSTRAP == 20_000 and MAX_REPS == 20_000


def test_unwritable_destination_is_refused_before_work(tmp_path, monkeypatch, capsys):
    """A folder the process may not write (``os.access`` says no: faked, because the tests
    run as root here, whom permissions never stop) is refused before any work."""
    import core.store
    import core.testbed.generate

    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    monkeypatch.setattr(core.store.os, "access",
                        lambda p, mode, **kw: False if Path(p) == ro else real_access(p, mode))
    monkeypatch.setattr(core.testbed.generate, "generate",
                        lambda config: pytest.fail("generated before checking the destination"))
    assert main(["build", "--db", str(ro / "s.duckdb"), "--seeds", "3",
                 "--personas-per-difficulty", "4"]) == 2
    err = capsys.readouterr().err
    assert f"{ro} is not writable" in err and len(err.strip().splitlines()) == 1


def test_evaluate_leaves_a_missing_store_missing_in_a_subprocess(tmp_path):
    missing = tmp_path / "missing.duckdb"
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "core", "evaluate", "--db", str(missing)],
                         capture_output=True, text=True, cwd=root, timeout=120)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "no store at" in out.stderr
    assert not missing.exists() and not list(tmp_path.iterdir())


def test_unexpected_errors_are_one_line_and_exit_1(monkeypatch, capsys):
    import core.cli

    def boom(args):
        raise RuntimeError("first line\nsecond line\nthird line")

    monkeypatch.setattr(core.cli, "_cmd_pilot", boom)
    monkeypatch.delenv("ARBITER_DEBUG", raising=False)
    assert main(["pilot"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "first line" in err and "second" not in err


# ---------------------------------------------------------------- strict JSON
def _strict_loads(text: str):
    def refuse(token):
        raise AssertionError(f"non-strict JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_non_finite_numbers_become_null(tmp_path):
    out = tmp_path / "deep" / "x.json"
    _write_json(str(out), {
        "nan": float("nan"), "inf": float("inf"), "ninf": -np.inf,
        "np_nan": np.float64("nan"), "f32": np.float32("inf"), "ok": np.float32(1.5),
        "array": np.array([1.0, np.nan, np.inf]), "matrix": np.array([[np.nan, 2.0]]),
        "tuple": (1, float("nan")), "nested": {"list": [{"x": -np.inf}], "set": {3}},
        "int": np.int64(3), "bool": np.bool_(True), "na": pd.NA, "path": Path("/a/b"),
        np.int64(7): "numpy key", 2.5: "float key",
    })
    data = _strict_loads(out.read_text())
    assert data["nan"] is None and data["inf"] is None and data["ninf"] is None
    assert data["np_nan"] is None and data["f32"] is None and data["ok"] == 1.5
    assert data["array"] == [1.0, None, None] and data["matrix"] == [[None, 2.0]]
    assert data["tuple"] == [1, None] and data["nested"] == {"list": [{"x": None}], "set": [3]}
    assert data["int"] == 3 and data["bool"] is True and data["na"] is None
    assert data["path"] == "/a/b" and data["7"] == "numpy key" and data["2.5"] == "float key"


def test_score_json_with_weights_is_strict(tmp_path, capsys):
    csv, out = tmp_path / "w.csv", tmp_path / "w.json"
    rng = np.random.default_rng(1)
    n = 60
    pd.DataFrame({"p": rng.random(n).round(3), "y": (rng.random(n) < 0.5).astype(int),
                  "weight": rng.uniform(0.5, 2, n)}).to_csv(csv, index=False)
    assert main(["score", str(csv), "--json", str(out)]) == 0
    report = _strict_loads(out.read_text())
    assert report["rules"]["p"]["y"]["smooth_ece"] is None  # NaN by design with weights
    assert report["rules"]["p"]["y"]["brier"] > 0


def test_score_with_huge_weights_is_finite_and_scale_free(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 48
    frame = pd.DataFrame({"p": rng.random(n).round(3), "y": (rng.random(n) < 0.5).astype(int)})
    huge, unit = tmp_path / "huge.csv", tmp_path / "unit.csv"
    frame.assign(weight=1e308).to_csv(huge, index=False)
    frame.assign(weight=1.0).to_csv(unit, index=False)
    assert main(["score", str(huge), "--json", str(tmp_path / "h.json")]) == 0
    assert main(["score", str(unit), "--json", str(tmp_path / "u.json")]) == 0
    a = _strict_loads((tmp_path / "h.json").read_text())["rules"]["p"]["y"]
    b = _strict_loads((tmp_path / "u.json").read_text())["rules"]["p"]["y"]
    for key in ("brier", "log_score", "ece", "citl", "spiegelhalter_z", "auroc", "corp_mcb",
                "ice", "ice_baseline"):
        assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-15), key
