"""The sweep engine (issue 23): grids, one cell against the direct runs of seed 000's grids,
failures, resume, local processes and the command line. Dask: tests/test_sweep_dask.py."""

from __future__ import annotations

import functools
import json
import os
import pickle
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

import core.cli
from core.evaluation.metrics import cluster_bootstrap, coverage, forced_accuracy
from core.evaluation.metrics import selective_accuracy as sel_acc
from core.evaluation.robustness import (
    noise_curve,
    perturbation_grid,
    train_size_curve,
    transfer,
)
from core.evaluation.run import run_seed, run_testbed
from core.sweep.cell import RESULT_COLUMNS, run_cell
from core.sweep.engine import run_sweep
from core.sweep.grid import MAX_CELLS, Cell, load_grid, parse_grid
from core.sweep.store import list_sweeps, load_cells
from core.sweep.table import TABLE_COLUMNS
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.readout import readout

SEEDS = (20260321, 20260322)
METHODS = ("majority_vote", "nbf", "dsnbf", "dsnbf_skip")
#: 8 cells: 2 seeds × 4 bias scales, 8 personas per difficulty (1 test persona per class)
SMALL = {"axes": {"seed": list(SEEDS), "bias_scale": [0.5, 1.0, 2.0, 4.0],
                  "personas_per_difficulty": 8, "methods": list(METHODS)}}


def small_grid(**axes) -> object:
    return parse_grid({"name": "small", "axes": {**SMALL["axes"], **axes}})


@pytest.fixture(scope="module")
def reference():
    """The 8-cell grid run in this process without a store: the table every other run of
    the same grid must equal exactly."""
    grid = small_grid()
    return grid, run_sweep(grid, workers=1).table


# --- grids -----------------------------------------------------------------------------------

def test_grid_expands_in_knob_order_and_merges_cells_that_cannot_differ(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text("""
description = "noise and training size"
[axes]
seed = { start = 7, count = 2 }
noise_profile = ["none", "uniform"]
noise_eps = [0.1, 0.2]
train_size = ["all", 6]
train_draw = [0, 1]
personas_per_difficulty = 8
methods = ["nbf"]
fit_bias_scale = ["same", 1.0]
[options]
noise_seed = 3
""")
    grid = load_grid(path)
    assert grid.name == "g"  # the file's stem
    cells = grid.cells()
    # seeds 7, 8 × (all: one draw, 6: two) × (none, uniform:0.1, uniform:0.2); a fit scale
    # equal to the test scale is a refit ("same")
    assert len(cells) == 2 * 3 * 3
    assert [c.seed for c in cells[:9]] == [7] * 9
    assert [(c.train_size, c.train_draw, c.noise) for c in cells[:4]] == [
        (None, 0, "none"), (None, 0, "uniform:0.1"), (None, 0, "uniform:0.2"), (6, 0, "none")]
    assert {c.fit_bias_scale for c in cells} == {None} and {c.noise_seed for c in cells} == {3}
    assert len({c.cell_id for c in cells}) == len(cells)
    # ids hash the parameters only: stable across processes and pickling
    c = cells[4]
    assert pickle.loads(pickle.dumps(c)) == c and hash(pickle.loads(pickle.dumps(c))) == hash(c)
    assert Cell(seed=7, train_size=6, noise="uniform:0.1", noise_seed=3, methods=("nbf",),
                personas_per_difficulty=8).cell_id == c.cell_id
    assert Cell(seed=1, difficulty_mix=(2, 2, 1)).difficulty_mix == (1.0, 1.0, 0.5)
    assert Cell(seed=1, difficulty_mix=(2, 2, 1)) == Cell(seed=1, difficulty_mix=(1, 1, 0.5))
    # a stored sweep's resume key: changing it orphans every stored cell (bump CELL_VERSION)
    assert Cell(seed=1, methods=("nbf",)).cell_id == "8c6b707b62cc6e34"
    assert grid.sweep_id != parse_grid({"name": "other", "axes": {}}).sweep_id


@pytest.mark.parametrize("data,fragment", [
    ({"axis": {}}, "unknown key 'axis'"),
    ({"axes": {"bias": [1.0]}}, "unknown key 'bias' in [axes]"),
    ({"options": {"seed": 1}}, "unknown key 'seed' in [options]"),
    ({"axes": {"seed": []}}, "axis 'seed' is empty"),
    ({"axes": {"bias_scale": [1.0, 1.0]}}, "repeats a value"),
    ({"axes": {"bias_scale": [5.0]}}, "bias_scale must be a finite number in [0, 4]"),
    ({"axes": {"dropout_scale": "x"}}, "dropout_scale must be a finite number"),
    ({"axes": {"seed": [-1]}}, "seed must be an integer in [0, 4294967295]"),
    ({"axes": {"seed": [True]}}, "seed must be an integer"),
    ({"axes": {"seed": {"start": 1}}}, "needs exactly start and count"),
    ({"axes": {"personas_per_difficulty": 3}}, "personas_per_difficulty must be an integer "
                                               "in [4, 1000]"),
    ({"axes": {"methods": ["dsnbf", "nope"]}}, "unknown method 'nope'"),
    ({"axes": {"methods": []}}, "axis 'methods' is empty"),
    ({"axes": {"bootstrap": 50}}, "bootstrap must be 0 (no interval) or an integer in "
                                  "[100, 20000]"),
    ({"axes": {"noise_profile": "uniform"}}, "needs noise_eps"),
    ({"axes": {"noise_eps": [0.1]}}, "noise_eps applies only to noise_profile 'uniform'"),
    ({"axes": {"noise_profile": "uniform", "noise_eps": 1.5}}, "noise_eps must be"),
    ({"axes": {"noise_profile": "loud"}}, "noise_profile must be one of"),
    ({"axes": {"difficulty_mix": [0, 0, 0]}}, "difficulty_mix must be three shares"),
    ({"axes": {"difficulty_mix": [1, 1]}}, "difficulty_mix must be three shares"),
    ({"axes": {"train_size": ["some"]}}, "train_size must be 'all' or an integer"),
    ({"axes": {"train_size": 13, "personas_per_difficulty": 8}}, "train_size 13 needs 5"),
    ({"axes": {"fit_bias_scale": -1}}, "fit_bias_scale must be a finite number"),
    ({"axes": {"seed": {"start": 0, "count": MAX_CELLS}, "bias_scale": [1, 2]}},
     "at most 100,000 per sweep"),
    ({"name": ""}, "name must be a non-empty text"),
])
def test_grid_validation_says_what_is_wrong_in_one_line(data, fragment):
    with pytest.raises(ValueError) as err:
        parse_grid(data)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_the_grid_ranges_are_the_command_lines():
    import core.sweep.grid as g

    for name in ("MAX_SEED", "MIN_PERSONAS", "MAX_PERSONAS", "MAX_SCALE", "MIN_BOOTSTRAP",
                 "MAX_BOOTSTRAP"):
        assert getattr(g, name) == getattr(core.cli, name), name


def test_a_file_that_is_not_toml_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[axes\nseed = 1\n")
    with pytest.raises(ValueError, match="bad.toml is not valid TOML"):
        load_grid(path)


# --- one cell against the direct runs of seed 000's grids -----------------------------------

def _accuracy(frame: pd.DataFrame) -> dict[str, float]:
    return dict(zip(frame["method"], frame["forced_accuracy"], strict=True))


def test_cells_equal_the_direct_runs_of_the_perturbation_noise_size_and_transfer_grids():
    base = TestbedConfig(seeds=SEEDS, personas_per_difficulty=8)
    methods = ("dsnbf", "nbf", "majority_vote")
    cell = Cell(seed=SEEDS[0], personas_per_difficulty=8, methods=methods)
    # the 3 × 3 grid's cell (2, 2), per seed: a one-seed testbed is that seed's part of the
    # two-seed one
    grid = perturbation_grid(base, scales=(2.0,), methods=methods)["table"]
    for seed in SEEDS:
        got = _accuracy(run_cell(replace(cell, seed=seed, bias_scale=2.0, dropout_scale=2.0)))
        want = grid[grid["seed"] == seed].set_index("method")["accuracy"].to_dict()
        assert got == want
    # Table 22's noise: flip_atoms with default_rng([12345, seed]), fits clean
    one = replace(base, seeds=SEEDS[:1])
    tb = generate(one)
    runs = run_testbed(tb, methods=list(methods))
    noisy = noise_curve(runs, eps=(0.2,), methods=methods).set_index("method")["accuracy"]
    assert _accuracy(run_cell(replace(cell, noise="uniform:0.2"))) == noisy.to_dict()
    # the training-size ablation: stratified draw 0 (default_rng(42)) of 6 train personas
    size = train_size_curve(tb, sizes=(6,), repeats=1, methods=methods)
    for n, train_size in ((6, 6), (12, None)):
        want = size[size["train_size"] == n].set_index("method")["accuracy"].to_dict()
        assert _accuracy(run_cell(replace(cell, train_size=train_size))) == want
    # transfer: fitted on the nominal data, tested on bias × dropout = 2 × 2 without refit
    moved = transfer(runs, one, scales=(2.0,), methods=("dsnbf", "nbf")).set_index("method")
    got = run_cell(replace(cell, methods=("dsnbf", "nbf"), bias_scale=2.0, dropout_scale=2.0,
                           fit_bias_scale=1.0, fit_dropout_scale=1.0))
    assert _accuracy(got) == moved["accuracy"].to_dict()


def test_cell_metrics_mix_and_interval_equal_a_direct_run_seed():
    cell = Cell(seed=5, personas_per_difficulty=12, difficulty_mix=(1, 0.5, 0),
                methods=("nbf", "dsnbf_skip", "majority_class"), bootstrap=200,
                bootstrap_seed=9)
    frame = run_cell(cell)
    assert list(frame.columns) == list(RESULT_COLUMNS) and list(frame["method"]) == list(
        cell.methods)
    tb = generate(TestbedConfig(seeds=(5,), personas_per_difficulty=12))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    p = tb.personas
    # 12 per class: train 5, dev 1, calibration 2, test 4; half of the temporal-shift class
    keep = np.zeros(len(p), bool)
    for split in ("train", "dev", "calibration", "test"):
        for diff, share in (("stable", 1.0), ("temporal_shift", 0.5)):
            rows = np.flatnonzero((p["split"] == split) & (p["difficulty"] == diff))
            keep[rows[:int(np.floor(share * len(rows) + 0.5))]] = True
    run = run_seed(mu[keep], gt[keep], p[keep].reset_index(drop=True),
                   methods=list(cell.methods))
    assert frame["n_personas"].tolist() == [4 + 2] * 3
    assert frame["n_train"].tolist() == [5 + 3] * 3
    for row in frame.itertuples():
        pred = run.predictions[row.method]
        correct = pred.answer == run.gt
        ci = cluster_bootstrap(correct, b=200, seed=9)
        assert row.forced_accuracy == 100 * forced_accuracy(correct)
        assert row.selective_accuracy == 100 * sel_acc(correct, pred.skipped)
        assert row.coverage == 100 * coverage(pred.skipped)
        assert (row.forced_low, row.forced_high) == (100 * ci.low, 100 * ci.high)
        assert row.answered == int((~pred.skipped).sum()) and row.n_items == correct.size
    assert frame.loc[frame["method"] == "dsnbf_skip", "coverage"].item() < 100


# --- the engine: failures, resume, local processes -------------------------------------------

FAIL_SEED = SEEDS[1]


def fail_on_second_seed(cell: Cell) -> pd.DataFrame:
    """A cell function that fails on every cell of the second seed (module level: it pickles
    by reference into forked workers)."""
    if cell.seed == FAIL_SEED and cell.bias_scale == 2.0:
        raise RuntimeError(f"no cell for bias {cell.bias_scale}\nsecond line")
    return run_cell(cell)


def exit_once(cell: Cell, *, marker: str) -> pd.DataFrame:
    """Kill this worker process the first time it sees the cell (second seed, bias 1), guarded
    by a marker file (written just before)."""
    marker = Path(marker)
    if cell.seed == SEEDS[1] and cell.bias_scale == 1.0 and not marker.exists():
        marker.write_text("killed")
        os._exit(3)
    return run_cell(cell)


def test_a_failing_cell_is_recorded_and_the_sweep_goes_on(tmp_path, reference):
    grid, want = reference
    seen = []
    db = tmp_path / "s.duckdb"
    res = run_sweep(grid, workers=2, store=db, cell_fn=fail_on_second_seed, progress=seen.append)
    failing = [c for c in grid.cells() if c.seed == FAIL_SEED and c.bias_scale == 2.0]
    assert res.failed == tuple(c.cell_id for c in failing) and len(res.computed) == 8
    row = res.cells.set_index("cell_id").loc[failing[0].cell_id]
    assert row["status"] == "failed"
    assert row["error"] == "RuntimeError: no cell for bias 2.0"  # one line
    assert failing[0].cell_id not in set(res.table["cell_id"])
    pd.testing.assert_frame_equal(res.table, want[want["cell_id"] != failing[0].cell_id]
                                  .reset_index(drop=True), rtol=1e-12, atol=1e-12)
    assert [(p.done, p.total, p.skipped) for p in seen] == [(i, 8, 0) for i in range(1, 9)]
    assert seen[-1].failed == 1 and seen[-1].rate > 0 and seen[-1].eta == 0
    assert seen[0].line().startswith("1/8 cells · ") and seen[0].line().endswith(" s")
    assert seen[-1].line().startswith("8/8 cells, 1 failed · ")
    # the store has the failure too; a re-run retries it and skips the seven others
    con = duckdb.connect(str(db))
    assert load_cells(con, grid.sweep_id)["status"].value_counts().to_dict() == {
        "ok": 7, "failed": 1}
    con.close()
    again = run_sweep(grid, workers=1, store=db)
    assert again.computed == res.failed and len(again.skipped) == 7 and not again.failed
    pd.testing.assert_frame_equal(again.table, want, rtol=1e-12, atol=1e-12)


def test_a_driver_stopped_mid_sweep_resumes_with_only_the_missing_cells(tmp_path, reference):
    grid, want = reference
    db = tmp_path / "s.duckdb"

    def stop_after_three(p):
        if p.done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(grid, workers=1, store=db, progress=stop_after_three)
    cells = grid.cells()
    res = run_sweep(grid, workers=1, store=db)
    assert res.skipped == tuple(c.cell_id for c in cells[:3])
    assert res.computed == tuple(c.cell_id for c in cells[3:])
    pd.testing.assert_frame_equal(res.table, want, rtol=1e-12, atol=1e-12)
    assert list(res.table.columns) == list(TABLE_COLUMNS)
    con = duckdb.connect(str(db))
    sweeps = list_sweeps(con)
    con.close()
    assert sweeps[["name", "n_cells", "ok", "failed", "pending"]].values.tolist() == [
        ["small", 8, 8, 0, 0]]
    # a third run computes nothing
    assert run_sweep(grid, workers=1, store=db).computed == ()


def test_local_processes_equal_one_process_even_when_a_worker_dies(tmp_path, reference):
    grid, want = reference
    marker = tmp_path / "killed"
    res = run_sweep(grid, workers=2, cell_fn=functools.partial(exit_once, marker=str(marker)))
    assert marker.exists()  # a worker died, the pool was restarted, every cell finished
    assert not res.failed and res.executor == "local" and res.workers == 2
    pd.testing.assert_frame_equal(res.table, want, rtol=1e-12, atol=1e-12)


def always_exit(cell: Cell) -> pd.DataFrame:
    """Kill the worker process on every cell of bias 2."""
    if cell.bias_scale == 2.0:
        os._exit(3)
    return run_cell(cell)


def test_a_cell_that_always_kills_its_worker_is_recorded_after_the_restarts():
    from core.sweep.executors import MAX_POOL_RESTARTS

    grid = parse_grid({"axes": {"seed": 1, "bias_scale": [1.0, 2.0], "methods": ["nbf"],
                                "personas_per_difficulty": 4}})
    res = run_sweep(grid, workers=2, cell_fn=always_exit)
    killer = grid.cells()[1].cell_id
    # the sweep returns; the killer failed, and so did the other cell if it was always in
    # the pool the killer broke (a broken pool fails every cell it holds)
    assert killer in res.failed and len(res.computed) == 2
    errors = res.cells.set_index("cell_id").loc[list(res.failed), "error"]
    assert all(e.startswith(f"a worker process died {MAX_POOL_RESTARTS + 1} times; "
                            "BrokenProcessPool") for e in errors)


def test_run_sweep_refuses_bad_executor_settings():
    grid = small_grid()
    with pytest.raises(ValueError, match="unknown executor 'ray'"):
        run_sweep(grid, executor="ray")
    with pytest.raises(ValueError, match="needs --scheduler"):
        run_sweep(grid, executor="dask")
    with pytest.raises(ValueError, match="applies only to --executor dask"):
        run_sweep(grid, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        run_sweep(grid, workers=0)


# --- the command line ------------------------------------------------------------------------

def _main(argv, monkeypatch) -> int:
    """``python -m core`` with the sweep command (registered here until core/cli.py adds it)."""
    from core.sweep.cli import add_sweep_parser

    sub = next(a for a in core.cli._parser()._actions if a.dest == "command")
    if "sweep" not in sub.choices:
        original = core.cli._add_tour_parser

        def with_sweep(subparsers, *, json_help):
            original(subparsers, json_help=json_help)
            add_sweep_parser(subparsers, json_help=json_help)

        monkeypatch.setattr(core.cli, "_add_tour_parser", with_sweep)
    return core.cli.main(argv)


def _grid_file(tmp_path, text: str) -> str:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    return str(path)


GOOD = """name = "cli"
[axes]
seed = [3, 4]
personas_per_difficulty = 8
methods = ["majority_vote", "nbf"]
"""


@pytest.mark.parametrize("argv,fragment", [
    (["sweep", "/nonexistent/grid.toml"], "no such file"),
    (["sweep", "{dir}"], "is a directory"),
    (["sweep", "{bad_toml}"], "is not valid TOML"),
    (["sweep", "{unknown}"], "unknown key 'colour' in [axes]"),
    (["sweep", "{empty}"], "axis 'bias_scale' is empty"),
    (["sweep", "{range}"], "bias_scale must be a finite number in [0, 4]"),
    (["sweep", "{good}", "--workers", "0"], "must be in [1, 16]"),
    (["sweep", "{good}", "--executor", "spark"], "invalid choice"),
    (["sweep", "{good}", "--executor", "dask"], "needs --scheduler ADDRESS"),
    (["sweep", "{good}", "--scheduler", "tcp://127.0.0.1:1"], "applies only to --executor dask"),
    (["sweep", "{good}", "--db", "{dir}"], "is a directory"),
    (["sweep", "{good}", "--json", "{dir}"], "is a directory"),
    (["sweep", "{good}", "--db", "{not_duckdb}"], "cannot open"),
])
def test_sweep_bad_input_exits_2_with_one_line(argv, fragment, tmp_path, capsys, monkeypatch):
    files = {"dir": str(tmp_path), "good": _grid_file(tmp_path, GOOD)}
    for key, text in (("bad_toml", "[axes\n"), ("unknown", "[axes]\ncolour = 1\n"),
                      ("empty", "[axes]\nbias_scale = []\n"),
                      ("range", "[axes]\nbias_scale = [1, 9]\n"),
                      ("not_duckdb", "not a database\n")):
        path = tmp_path / f"{key}.toml"
        path.write_text(text)
        files[key] = str(path)
    assert _main([a.format(**files) for a in argv], monkeypatch) == 2
    err = capsys.readouterr().err
    assert fragment in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_sweep_from_the_command_line_stores_resumes_and_writes_json(tmp_path, capsys,
                                                                    monkeypatch):
    grid, db, out = _grid_file(tmp_path, GOOD), tmp_path / "s.duckdb", tmp_path / "r.json"
    argv = ["sweep", grid, "--db", str(db), "--workers", "1", "--json", str(out)]
    assert _main(argv, monkeypatch) == 0
    captured = capsys.readouterr()
    assert "2 cells — 2 computed, 0 skipped, 0 failed" in captured.out
    assert "2/2 cells" in captured.err  # progress on stderr
    report = json.loads(out.read_text())
    assert report["command"] == "sweep" and report["computed"] == 2
    assert [r["method"] for r in report["results"]] == ["majority_vote", "nbf"] * 2
    assert report["results"][0]["train_size"] is None  # <NA> is null in strict JSON
    assert _main([*argv, "--quiet"], monkeypatch) == 0
    captured = capsys.readouterr()
    assert "0 computed, 2 skipped" in captured.out and captured.err == ""


# --- seed 000's robustness grids on the engine -----------------------------------------------

def test_the_robustness_grids_on_the_engine_equal_the_direct_protocols():
    from core.sweep import protocols as P

    base = TestbedConfig(seeds=SEEDS, personas_per_difficulty=8)
    tb = generate(base)
    runs = run_testbed(tb, methods=list(P.NOISE_METHODS))

    def table(grid):
        res = run_sweep(grid, workers=1)
        assert not res.failed
        return res.table

    got = P.perturbation_from_table(table(P.perturbation_sweep(base)))
    want = perturbation_grid(base)
    for key in ("table", "mean", "tau"):
        pd.testing.assert_frame_equal(got[key], want[key], rtol=1e-12, atol=1e-12, obj=key)
    assert [got[k] for k in ("tau_mean", "dsnbf_wins", "cells")] == [
        want[k] for k in ("tau_mean", "dsnbf_wins", "cells")]
    pd.testing.assert_frame_equal(P.noise_from_table(table(P.noise_sweep(base))),
                                  noise_curve(runs), rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(
        P.train_size_from_table(table(P.train_size_sweep(base, sizes=(3, 6), repeats=2))),
        train_size_curve(tb, sizes=(3, 6), repeats=2), rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(P.transfer_from_table(table(P.transfer_sweep(base))),
                                  transfer(runs, base), rtol=1e-12, atol=1e-12)
