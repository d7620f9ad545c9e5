"""The sweep engine on Dask (issue 23): a LocalCluster's table equals the local run's (floats
to 1e-12: other processes, other BLAS threads), and a worker killed mid-sweep neither stops
the sweep nor loses a cell.

Each test starts a two-worker LocalCluster (processes, one thread each; about 3-5 s). The
cell function that kills its worker is pickled by value (``cloudpickle.register_pickle_by_value``),
so the workers need not import this test module; the marker file that makes it kill only once
travels as an argument.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from pathlib import Path

import cloudpickle
import dask
import pandas as pd
import pytest
from distributed import LocalCluster

from core.sweep.cell import run_cell
from core.sweep.engine import run_sweep
from core.sweep.executors import Dask
from core.sweep.grid import Cell, parse_grid

cloudpickle.register_pickle_by_value(sys.modules[__name__])

SEEDS = (20260321, 20260322)
#: 8 cells: 2 seeds × 4 bias scales, 8 personas per difficulty
GRID = {"name": "dask", "axes": {"seed": list(SEEDS), "bias_scale": [0.5, 1.0, 2.0, 4.0],
                                 "personas_per_difficulty": 8,
                                 "methods": ["majority_vote", "nbf", "dsnbf", "dsnbf_skip"],
                                 "bootstrap": 100}}
#: the fourth of the eight cells kills its worker the first time it runs
VICTIM = {"seed": SEEDS[0], "bias_scale": 4.0}


def kill_once(cell: Cell, *, marker: str) -> pd.DataFrame:
    """Run the cell, but first SIGKILL this worker process if the cell is the victim and the
    marker file does not exist yet (it is written just before)."""
    if (cell.seed, cell.bias_scale) == (VICTIM["seed"], VICTIM["bias_scale"]):
        path = Path(marker)
        if not path.exists():
            path.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    return run_cell(cell)


@pytest.fixture(scope="module")
def local_table():
    grid = parse_grid(GRID)
    return grid, run_sweep(grid, workers=1).table


def test_a_local_cluster_sweep_equals_the_local_run_exactly_through_a_worker_death(
        tmp_path, local_table):
    grid, want = local_table
    marker = tmp_path / "killed"
    res = run_sweep(grid, executor="dask-local", workers=2,
                    cell_fn=functools.partial(kill_once, marker=str(marker)))
    assert marker.exists()  # a worker died mid-sweep; the scheduler ran its cell elsewhere
    assert res.executor == "dask-local" and res.workers == 2
    assert not res.failed and len(res.computed) == 8
    pd.testing.assert_frame_equal(res.table, want, rtol=1e-12, atol=1e-12)


def test_a_cell_whose_worker_dies_is_recorded_and_a_rerun_computes_only_the_missing(
        tmp_path, local_table):
    grid, want = local_table
    marker, db = tmp_path / "killed", tmp_path / "s.duckdb"
    victim = next(c.cell_id for c in grid.cells()
                  if (c.seed, c.bias_scale) == (VICTIM["seed"], VICTIM["bias_scale"]))
    fn = functools.partial(kill_once, marker=str(marker))
    # no retries: the scheduler gives up on the cells of a dead worker at once (KilledWorker)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            first = run_sweep(grid, executor="dask", scheduler=cluster.scheduler_address,
                              store=db, cell_fn=fn)
            # the re-run goes through one client the caller keeps open (as reproduce will)
            with Dask(address=cluster.scheduler_address) as ex:
                again = run_sweep(grid, executor=ex, store=db, cell_fn=fn)
            assert first.executor == "dask" and first.workers == 2
            # the sweep finished: every cell is ok or failed, the victim failed with the
            # scheduler's reason, and whatever else was on that worker failed with it
            status = first.cells.set_index("cell_id")
            assert set(status["status"]) <= {"ok", "failed"}
            assert victim in first.failed
            assert all("KilledWorker" in status.loc[c, "error"] for c in first.failed)
            assert len(first.table) == 4 * (8 - len(first.failed))
    assert again.computed == first.failed and not again.failed
    assert set(again.skipped) == set(first.computed) - set(first.failed)
    pd.testing.assert_frame_equal(again.table, want, rtol=1e-12, atol=1e-12)


def test_an_unreachable_scheduler_is_a_one_line_error():
    with pytest.raises(OSError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with Dask(address="tcp://127.0.0.1:9", timeout=1.0):
            pass
