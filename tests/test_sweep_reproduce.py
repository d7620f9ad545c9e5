"""``reproduce`` on the sweep engine (issue 23): the printed tables and the JSON of the engine
path equal the direct path's to the digit, on a two-seed testbed of 12 personas per
difficulty (training sizes 3 and 6, two draws each, in both paths); and grouped cells (one
fit per group) equal cells run one by one. The command's store round trip is replaced by the
generated testbed (the same for both paths; it costs ~3 s a build)."""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import pandas as pd
import pytest

import core.build
import core.cli
import core.evaluation.reproduce as R
import core.store
import core.testbed.config
from core.sweep import protocols as P
from core.sweep.cell import run_cell, run_cells
from core.sweep.engine import group_cells, run_sweep
from core.sweep.grid import Cell, parse_grid
from core.testbed.generate import generate

SMALL = core.testbed.config.TestbedConfig(seeds=(20260321, 20260322), personas_per_difficulty=12)
SIZES = {"sizes": (3, 6), "repeats": 2}


class _Closed:
    def close(self) -> None:
        return None


def _run_cli(argv, tmp_path, monkeypatch, capsys, tb, *, direct: bool) -> tuple[str, dict]:
    monkeypatch.setattr(core.testbed.config, "TestbedConfig", lambda: SMALL)
    monkeypatch.setattr(core.build, "build_store", lambda path, config: None)
    monkeypatch.setattr(core.store, "connect", lambda path: _Closed())
    monkeypatch.setattr(core.store, "load_testbed", lambda con: tb)
    monkeypatch.setattr(R, "train_size_curve", functools.partial(R.train_size_curve, **SIZES))
    monkeypatch.setattr(P, "train_size_sweep", functools.partial(P.train_size_sweep, **SIZES))
    if direct:
        real = R.reproduce
        monkeypatch.setattr(R, "reproduce", lambda *a, **k: real(*a, **{**k, "executor": None}))
    out = tmp_path / ("direct.json" if direct else "engine.json")
    assert core.cli.main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    monkeypatch.undo()
    lines = [ln for ln in printed.splitlines() if not ln.startswith("total ")]
    data = json.loads(out.read_text())
    for key in ("seconds", "total_seconds"):
        data.pop(key)
    return "\n".join(lines), data


def test_reproduce_on_the_engine_prints_the_direct_tables_to_the_digit(tmp_path, monkeypatch,
                                                                        capsys):
    argv = ["reproduce", "--bootstrap", "100", "--workers", "1"]
    tb = generate(SMALL)
    direct = _run_cli(argv, tmp_path, monkeypatch, capsys, tb, direct=True)
    engine = _run_cli(argv, tmp_path, monkeypatch, capsys, tb, direct=False)
    assert "Training-size ablation" in engine[0] and "Cross-bias transfer" in engine[0]
    assert engine[0] == direct[0]
    assert engine[1] == direct[1]


def test_grouped_cells_share_fits_and_equal_cells_run_one_by_one():
    base = Cell(seed=20260322, personas_per_difficulty=8)
    moved = replace(base, bias_scale=2.0, dropout_scale=0.5, fit_bias_scale=1.0,
                    fit_dropout_scale=1.0)
    cells = [base, replace(base, noise="uniform:0.2"), replace(base, noise="paper",
                                                               bootstrap=100),
             moved, replace(moved, noise="uniform:0.3"),
             replace(base, seed=5, train_size=6, train_draw=1, noise="gemini")]
    for cell, frame in zip(cells, run_cells(cells), strict=True):  # every resolver
        pd.testing.assert_frame_equal(frame, run_cell(cell), rtol=1e-12, atol=1e-12)
    # the engine groups by seed, at most `size` cells a group, the costliest first
    groups = group_cells(cells, size=2)
    assert [len(g.cells) for g in groups] == [2, 1, 2, 1]
    assert [round(g.cost, 2) for g in groups] == [1.7, 1.6, 1.45, 1.35]
    assert len({g.cell_id for g in groups}) == 4
    grid = parse_grid({"name": "g", "axes": {
        "seed": [20260321], "personas_per_difficulty": 8, "noise_profile": "uniform",
        "noise_eps": [0.0, 0.3], "bias_scale": [1.0, 2.0], "fit_bias_scale": 1.0,
        "methods": ["dsnbf", "nbf_skip", "source_reachability"]}})
    pd.testing.assert_frame_equal(run_sweep(grid, share_fits=True).table,
                                  run_sweep(grid).table, rtol=1e-12, atol=1e-12)


def test_share_fits_and_reproduce_refuse_what_they_cannot_do():
    grid = parse_grid({"name": "g", "axes": {"seed": [1], "personas_per_difficulty": 8}})
    with pytest.raises(ValueError, match="share_fits needs the default cell function"):
        run_sweep(grid, share_fits=True, cell_fn=lambda c: run_cell(c))
    with pytest.raises(ValueError, match="unknown executor 'ray'"):
        R.reproduce(None, SMALL, executor="ray")
    with pytest.raises(ValueError, match="scheduler applies only"):
        R.reproduce(None, SMALL, scheduler="tcp://x:1")


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--executor", "dask"], "--executor dask needs --scheduler"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler applies only to --executor dask"),
    (["--executor", "ray"], "invalid choice"),
])
def test_reproduce_bad_executor_exits_2_with_one_line(argv, fragment, capsys):
    assert core.cli.main(["reproduce", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1
