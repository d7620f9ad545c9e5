"""Benchmark: the sweep engine's cells per second against workers, local and Dask; run by hand.

``python benchmarks/bench_sweep.py [--seeds 4] [--personas 160] [--workers 1 2]
[--executors local dask-local] [--methods all]``

The grid is ``--seeds`` seeds × bias scales {0.5, 1, 2, 4} at ``--personas`` per difficulty
(the issue's 200-cell sweep is 50 seeds of this grid), every resolver by default. For each
executor and worker count it prints:

* start-up (a one-cell warm-up sweep: the processes or the ``LocalCluster``, and the
  workers' first import of ``core``) and the sweep's wall time after it, cells per second,
  and the mean cell time inside a worker;
* the executor's overhead per cell, ``wall − cell time × cells / workers`` per cell, and the
  driver's: writing cells to the store (``record_outcomes`` in the engine's batches) timed in
  this process;
* memory per worker: the largest RSS of any process below the driver, sampled after every
  cell (the driver's own RSS for one in-process worker).

``--reproduce`` instead times the four robustness grids of ``python -m core reproduce`` at
the paper's scale (4 seeds × 160 personas per difficulty) for each ``--workers``: the direct
protocols of ``core.evaluation.robustness`` (after the nominal fit they share, which
``reproduce`` makes anyway), the engine's sweeps without and with ``share_fits`` one after
another on local processes (the executor's start-up included), and the four as one pass
(``run_sweeps``, what ``reproduce`` runs); then the whole ``python -m core reproduce
--workers N`` command, ``--repeats`` times each, with the load average before each run.

Then the estimate of a 10,000-cell sweep on 8 machines of 16 cores (128 one-thread workers):
``cells × cell time / 128`` of compute, or ``cells × driver overhead`` (the store write plus
Dask's measured overhead per cell, an upper bound) when the driver, which handles cells one
after another, is the bottleneck, plus start-up. Other processes on the
machine inflate every wall time (the load averages are printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402  (installed with dask[distributed], requirements-dev.txt)

from core.sweep.cell import run_cell  # noqa: E402
from core.sweep.engine import FLUSH_CELLS, run_sweep, run_sweeps  # noqa: E402
from core.sweep.executors import CellOutcome, Dask, InProcess, LocalProcesses  # noqa: E402
from core.sweep.grid import parse_grid  # noqa: E402
from core.sweep.store import open_store, record_outcomes, register_sweep  # noqa: E402


def _driver_overhead() -> float:
    """Seconds per cell the driver spends writing cells to a fresh store, in the engine's
    batches of :data:`~core.sweep.engine.FLUSH_CELLS` (about a second's worth on a cluster),
    over 512 cells of every resolver."""
    grid = parse_grid({"name": "store", "axes": {"seed": {"start": 1, "count": 128},
                                                 "bias_scale": [0.5, 1.0, 2.0, 4.0],
                                                 "personas_per_difficulty": 8}})
    cells = grid.cells()
    frames = [run_cell(c) for c in cells[:4]]
    with tempfile.TemporaryDirectory() as d:
        con = open_store(Path(d) / "bench.duckdb")
        register_sweep(con, grid, cells)
        items = [(i, c, CellOutcome(c.cell_id, frames[i % len(frames)], "", 0.0, "bench"))
                 for i, c in enumerate(cells)]
        t0 = time.perf_counter()
        for k in range(0, len(items), FLUSH_CELLS):
            record_outcomes(con, grid.sweep_id, items[k:k + FLUSH_CELLS])
        per_cell = (time.perf_counter() - t0) / len(items)
        con.close()
    return per_cell


class _RssSampler:
    """Progress callback: the largest RSS of any process below this one (the workers)."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.peak = 0

    def __call__(self, _progress=None) -> None:
        for child in self.me.children(recursive=True):
            try:
                self.peak = max(self.peak, child.memory_info().rss)
            except psutil.Error:
                pass


def bench(grid, kind: str, workers: int) -> dict:
    cells = grid.cells()
    warm = parse_grid({"name": "warm-up", "axes": {"seed": 1, "personas_per_difficulty": 4,
                                                    "methods": ["majority_vote"]}})
    t0 = time.perf_counter()
    if kind == "local":
        ex = InProcess() if workers == 1 else LocalProcesses(workers=workers)
    else:
        ex = Dask(workers=workers)
    sampler = _RssSampler()
    with ex:
        run_sweep(warm, executor=ex)  # start the processes and import core in them
        startup = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = run_sweep(grid, executor=ex, progress=sampler)
        wall = time.perf_counter() - t1
        sampler()
    worker_mb = (sampler.peak or psutil.Process().memory_info().rss) / 2**20
    n = len(res.computed)
    cell_s = float(res.cells["seconds"].mean())
    return {"executor": kind, "workers": workers, "cells": n, "startup": startup, "wall": wall,
            "rate": n / wall, "cell": cell_s, "overhead": (wall - cell_s * n / workers) / n,
            "worker_mb": worker_mb, "failed": len(res.failed), "total": len(cells)}


def bench_reproduce(workers: list[int], *, repeats: int = 3) -> None:
    """``--reproduce`` (module docstring)."""
    from core.evaluation.robustness import (
        noise_curve,
        perturbation_grid,
        train_size_curve,
        transfer,
    )
    from core.evaluation.run import run_testbed
    from core.sweep import protocols as P
    from core.testbed.config import TestbedConfig
    from core.testbed.generate import generate

    config = TestbedConfig()
    grids = [P.perturbation_sweep(config), P.noise_sweep(config), P.train_size_sweep(config),
             P.transfer_sweep(config)]
    print(f"reproduce's grids ({sum(len(g.cells()) for g in grids)} cells at the paper's "
          f"scale); load averages {os.getloadavg()}")
    tb = generate(config)
    runs = run_testbed(tb)
    for w in workers:
        steps = {"perturbation": lambda w=w: perturbation_grid(config, workers=w),
                 "noise": lambda: noise_curve(runs),
                 "train-size": lambda w=w: train_size_curve(tb, workers=w),
                 "transfer": lambda: transfer(runs, config)}
        parts = []
        for name, fn in steps.items():
            t = time.perf_counter()
            fn()
            parts.append((name, time.perf_counter() - t))
        rows = [("direct", parts)]
        for share in (False, True):
            parts = []
            with InProcess() if w == 1 else LocalProcesses(workers=w) as ex:
                for g in grids:
                    t = time.perf_counter()
                    res = run_sweep(g, executor=ex, share_fits=share)
                    assert not res.failed, res.cells["error"].tolist()
                    parts.append((g.name.removeprefix("reproduce-"), time.perf_counter() - t))
            rows.append((f"engine, share_fits={share}", parts))
        with InProcess() if w == 1 else LocalProcesses(workers=w) as ex:
            t = time.perf_counter()
            results = run_sweeps(grids, executor=ex)
            assert not any(r.failed for r in results)
            rows.append(("engine, one pass", [("all four", time.perf_counter() - t)]))
        for label, parts in rows:
            print(f"× {w} {label:<24} {sum(s for _, s in parts):6.2f} s: "
                  + ", ".join(f"{n} {s:.2f}" for n, s in parts))
    # the whole command, as a user runs it (the "≤ 10 s on 2 workers")
    for w in workers:
        walls = []
        for _ in range(repeats):
            load = os.getloadavg()[0]
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "core", "reproduce", "--workers", str(w)],
                           cwd=ROOT, check=True, capture_output=True)
            walls.append(f"{time.perf_counter() - t:.2f} s (load {load:.2f})")
        print(f"python -m core reproduce --workers {w}: " + ", ".join(walls))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--personas", type=int, default=160)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--executors", nargs="+", default=["local", "dask-local"],
                    choices=("local", "dask-local"))
    ap.add_argument("--methods", nargs="+", default=None, help="default: every resolver")
    ap.add_argument("--reproduce", action="store_true",
                    help="time reproduce's four grids, direct and on the engine")
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of the whole reproduce command per worker count")
    args = ap.parse_args()
    if args.reproduce:
        bench_reproduce(args.workers, repeats=args.repeats)
        return
    axes = {"seed": {"start": 20260321, "count": args.seeds},
            "bias_scale": [0.5, 1.0, 2.0, 4.0], "personas_per_difficulty": args.personas}
    if args.methods:
        axes["methods"] = args.methods
    grid = parse_grid({"name": "bench", "axes": axes})
    print(f"{len(grid.cells())} cells ({args.seeds} seeds × 4 bias scales, {args.personas} "
          f"personas per difficulty); load averages {os.getloadavg()}")
    rows = []
    for kind in args.executors:
        for w in args.workers:
            r = bench(grid, kind, w)
            rows.append(r)
            print(f"{kind:<11} × {w}: start-up {r['startup']:5.2f} s, sweep {r['wall']:6.2f} s "
                  f"= {r['rate']:5.2f} cells/s; cell {1000 * r['cell']:6.1f} ms in a worker; "
                  f"executor overhead {1000 * r['overhead']:6.1f} ms/cell; peak worker RSS "
                  f"{r['worker_mb']:6.0f} MB; failed {r['failed']}")
    store_s = _driver_overhead()
    print(f"driver: writing one cell to the store {1000 * store_s:.1f} ms (median)")
    cell_s = statistics.median(r["cell"] for r in rows)
    dask_overhead = max((r["overhead"] for r in rows if r["executor"] == "dask-local"),
                        default=0.0)
    # per cell, serial in the driver: the store write and (an upper bound) Dask's own
    # per-cell overhead measured here
    driver_s = store_s + max(dask_overhead, 0.0)
    n, cores = 10_000, 8 * 16
    compute = n * cell_s / cores
    serial = n * driver_s
    print(f"estimate, 10,000 cells on 8 × 16 cores: compute {compute:.0f} s "
          f"({cell_s * 1000:.0f} ms a cell / {cores} workers), driver {serial:.0f} s "
          f"({1000 * driver_s:.1f} ms a cell, one after another) → about "
          f"{max(compute, serial) + 30:.0f} s with 30 s of cluster start-up")


if __name__ == "__main__":
    main()
