"""The sweep engine: a grid's cells through an executor into one results table.

:func:`run_sweep` expands the grid, skips the cells the store already holds (resume), runs
the rest on the chosen executor (:mod:`core.sweep.executors`), writes the finished cells to
the store as they arrive (only this driver process writes; cells that finish within
:data:`FLUSH_SECONDS` of each other share one transaction, and the last ones are written
also when the sweep is interrupted), records a failing cell with its
error text and goes on, and reports progress (cells done, rate, ETA) after every cell. The
table is in grid order (cell position, then the cell's method order), whatever executor ran
the cells and in whatever order they finished, so a Dask run equals a local run exactly.

:func:`run_sweeps` runs several grids as one pass without a store (``reproduce``'s four
robustness grids): cells grouped by seed across the grids, each fit made once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import store as sweep_store
from .cell import data_key, run_cell, run_cells, share_key
from .executors import CellOutcome, make_executor
from .grid import Cell, Grid
from .table import results_table

__all__ = ["EXECUTORS", "FLUSH_CELLS", "FLUSH_SECONDS", "GROUP_CELLS",
           "GROUP_FITS", "CellGroup", "Progress",
           "SweepResult", "group_cells", "run_group", "run_sweep", "run_sweeps"]

#: ``--executor`` choices.
EXECUTORS = ("local", "dask", "dask-local")
#: Finished cells are written to the store together, at most this many or this old.
FLUSH_CELLS, FLUSH_SECONDS = 64, 1.0
#: The most cells and the most distinct fits (:func:`core.sweep.cell.share_key`) one
#: :class:`CellGroup` holds. A group is one task, and bigger tasks balance the workers worse:
#: at 160 personas per difficulty a fit costs 80–140 ms, a testbed 30–40 ms, a prediction
#: about 10 ms.
GROUP_CELLS, GROUP_FITS = 32, 4


@dataclass(frozen=True)
class CellGroup:
    """Cells of one seed and persona count, shipped as one task (:func:`group_cells`).

    Attributes
    ----------
    cells : the cells, cells of one fit together (parameters only, as a :class:`Cell`).
    """

    cells: tuple[Cell, ...]

    @functools.cached_property
    def cell_id(self) -> str:
        """The group's task id: a hash of its cells' ids (the executors' key)."""
        blob = ",".join(c.cell_id for c in self.cells)
        return "g" + hashlib.sha256(blob.encode()).hexdigest()[:15]

    @functools.cached_property
    def cost(self) -> float:
        """A rough cost in fits: each fit 1, each testbed generated 0.25, each cell 0.1."""
        tested = {(c.seed, c.personas_per_difficulty, c.bias_scale, c.dropout_scale,
                   c.difficulty_mix) for c in self.cells}
        testbeds = tested | {data_key(c) for c in self.cells}
        return (len({share_key(c) for c in self.cells}) + 0.25 * len(testbeds)
                + 0.1 * len(self.cells))


def group_cells(cells, *, size: int = GROUP_CELLS, fits: int = GROUP_FITS
                ) -> list[CellGroup]:
    """``cells`` in groups of one seed, at most ``size`` cells and ``fits`` fits each.

    A group's testbeds share the seed's knob-free layers (generated once a group; the scales
    enter only the sources). Within a seed the cells of one
    :func:`~core.sweep.cell.share_key` are kept together (in order of their first cell): a
    fit is split across groups only when more than ``size`` cells share it. The groups come
    largest :attr:`CellGroup.cost` first (ties in order of first cell): the long tasks start
    first and the short ones fill the gaps, so the workers finish together.

    Invariants (``tests/test_sweep_groups.py``, a hypothesis test and a table): every cell
    in exactly one group; one (seed, personas per difficulty) a group; at most ``size``
    cells and ``fits`` share keys a group; a share key of at most ``size`` cells in one
    group; costs non-increasing.
    """
    if size < 1 or fits < 1:
        raise ValueError(f"size and fits must be >= 1, got {size} and {fits}")
    families: dict[tuple, dict[tuple, list[Cell]]] = {}
    for cell in cells:
        family = (cell.seed, cell.personas_per_difficulty)
        families.setdefault(family, {}).setdefault(share_key(cell), []).append(cell)
    groups: list[CellGroup] = []
    for by_fit in families.values():
        part: list[Cell] = []
        n_fit = 0
        for members in by_fit.values():
            # a fit starts a new group when the group has its fits, or when its cells would
            # not all fit in the group's room but would in a fresh one
            if part and (n_fit >= fits or len(part) + min(len(members), size) > size):
                groups.append(CellGroup(tuple(part)))
                part, n_fit = [], 0
            n_fit += 1
            for cell in members:
                if len(part) >= size:  # more cells share this fit than a group holds
                    groups.append(CellGroup(tuple(part)))
                    part, n_fit = [], 1
                part.append(cell)
        if part:
            groups.append(CellGroup(tuple(part)))
    return sorted(groups, key=lambda g: g.cost, reverse=True)  # stable: ties keep order


def run_group(group: CellGroup) -> pd.DataFrame:
    """:func:`core.sweep.cell.run_cells` of a group as one frame (its cells' frames, stacked
    in order; :func:`run_sweep` splits it back by each cell's method count)."""
    return pd.concat(run_cells(group.cells), ignore_index=True)


def _split(out: CellOutcome, group: CellGroup) -> list[CellOutcome]:
    """One outcome per cell of ``group`` from the group's outcome (seconds shared evenly)."""
    n = len(group.cells)
    if not out.ok:
        return [CellOutcome(c.cell_id, None, out.error, out.seconds / n, out.worker)
                for c in group.cells]
    outs, start = [], 0
    for c in group.cells:
        k = len(c.methods)
        frame = out.frame.iloc[start:start + k].reset_index(drop=True)  # typed: run_cell's
        outs.append(CellOutcome(c.cell_id, frame, "", out.seconds / n, out.worker))
        start += k
    return outs


@dataclass(frozen=True)
class Progress:
    """Where a running sweep stands (passed to the progress callback after every cell).

    Attributes
    ----------
    done, total : cells finished in this run (ok or failed) and cells this run computes.
    failed : cells of this run that failed.
    skipped : cells skipped because the store already held them.
    elapsed : seconds since the first cell was submitted.
    """

    done: int
    total: int
    failed: int
    skipped: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Cells per second so far (0 before the first)."""
        return self.done / self.elapsed if self.elapsed > 0 and self.done else 0.0

    @property
    def eta(self) -> float:
        """Seconds left at the current rate (NaN before the first cell)."""
        return (self.total - self.done) / self.rate if self.rate else float("nan")

    def line(self) -> str:
        """One terminal line: ``12/200 cells, 1 failed, 8 skipped · 3.4 cells/s · ETA 55 s``."""
        parts = [f"{self.done}/{self.total} cells"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        eta = "ETA —" if self.eta != self.eta else f"ETA {self.eta:.0f} s"
        return f"{', '.join(parts)} · {self.rate:.2f} cells/s · {eta}"


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep.

    Attributes
    ----------
    sweep_id, name : the grid's id and name.
    table : the results table (:data:`core.sweep.table.TABLE_COLUMNS`), every finished cell
        of the sweep (those of earlier runs too, when a store was given).
    cells : one row per cell: position, cell_id, status (``ok``, ``failed``, ``pending``),
        error, seconds, worker.
    computed, skipped, failed : cell ids run now, skipped (already in the store), failed now.
    executor, workers, seconds : how it ran and its wall time (with the executor's start-up).
    """

    sweep_id: str
    name: str
    table: pd.DataFrame = field(repr=False)
    cells: pd.DataFrame = field(repr=False)
    computed: tuple[str, ...]
    skipped: tuple[str, ...]
    failed: tuple[str, ...]
    executor: str
    workers: int
    seconds: float

    def to_dict(self) -> dict:
        """JSON-ready form (tables as lists of records; NaN and <NA> → None)."""
        def records(df):
            return df.astype(object).where(pd.notna(df), None).to_dict(orient="records")
        return {"sweep_id": self.sweep_id, "name": self.name, "executor": self.executor,
                "workers": self.workers, "seconds": self.seconds,
                "computed": len(self.computed), "skipped": len(self.skipped),
                "failed": len(self.failed), "cells": records(self.cells),
                "results": records(self.table)}


def run_sweep(grid: Grid, *, executor="local", workers: int = 1,
              scheduler: str | None = None, store: str | Path | None = None,
              progress: Callable[[Progress], None] | None = None,
              cell_fn: Callable[[Cell], pd.DataFrame] = run_cell,
              share_fits: bool = False) -> SweepResult:
    """Run every cell of ``grid`` not yet in ``store``.

    Parameters
    ----------
    grid : the sweep definition (:func:`core.sweep.grid.load_grid`).
    executor : ``local`` (processes; ``workers=1`` runs in this process), ``dask`` (the
        scheduler at ``scheduler``) or ``dask-local`` (a ``LocalCluster`` of ``workers``);
        or an executor of :mod:`core.sweep.executors` already entered (``with Dask(...) as
        ex``), which is used as it is and left open, so several sweeps share one cluster.
    workers : local processes, or ``LocalCluster`` workers.
    scheduler : a Dask scheduler address (``tcp://host:8786``), for ``dask`` only.
    store : a DuckDB file for the sweep tables (:mod:`core.sweep.store`; created if missing).
        With a store, finished cells are skipped and the cells are written as they finish
        (batched, :data:`FLUSH_SECONDS`); without one, nothing is written and every cell
        runs.
    progress : called with a :class:`Progress` after every finished cell.
    cell_fn : what runs a cell (default :func:`core.sweep.cell.run_cell`; must pickle for
        process and Dask executors).
    share_fits : ship the cells grouped by fit (module docstring; the default ``cell_fn``
        only): same table, one fit per group. Progress then advances a group at a time.

    Raises ``ValueError`` for a bad executor, worker count or scheduler combination, and
    :class:`core.store.StoreError` for a store that cannot be opened.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if share_fits and cell_fn is not run_cell:
        raise ValueError("share_fits needs the default cell function (core.sweep.cell.run_cell)")
    ex, scope = _executor(executor, workers, scheduler)
    cells = grid.cells()
    position = {c.cell_id: i for i, c in enumerate(cells)}
    by_id = {c.cell_id: c for c in cells}
    con = sweep_store.open_store(store) if store is not None else None
    try:
        done_before: set[str] = set()
        if con is not None:
            sweep_store.register_sweep(con, grid, cells)
            done_before = sweep_store.finished_cells(con, grid.sweep_id)
        todo = [c for c in cells if c.cell_id not in done_before]
        outcomes: dict[str, CellOutcome] = {}
        n_failed = 0
        t_start = t0 = time.perf_counter()
        buffer: list = []
        flushed = time.perf_counter()

        def flush() -> None:
            nonlocal flushed
            if con is not None and buffer:
                sweep_store.record_outcomes(con, grid.sweep_id, buffer)
            buffer.clear()
            flushed = time.perf_counter()

        try:
            with scope:
                t0 = time.perf_counter()  # progress rates leave out the executor's start-up
                if share_fits:
                    groups = {g.cell_id: g for g in group_cells(todo)}
                    stream = (one for out in ex.run(groups.values(), run_group)
                              for one in _split(out, groups[out.cell_id]))
                else:
                    stream = ex.run(todo, cell_fn)
                for out in stream:
                    if out.cell_id in outcomes:  # a cell a cluster recomputed: keep the first
                        continue
                    outcomes[out.cell_id] = out
                    n_failed += not out.ok
                    buffer.append((position[out.cell_id], by_id[out.cell_id], out))
                    if (len(buffer) >= FLUSH_CELLS
                            or time.perf_counter() - flushed >= FLUSH_SECONDS):
                        flush()
                    if progress is not None:
                        progress(Progress(len(outcomes), len(todo), n_failed, len(done_before),
                                          time.perf_counter() - t0))
        finally:  # also on Ctrl-C: every finished cell reaches the store
            flush()
        seconds = time.perf_counter() - t_start
        if con is not None:
            table = sweep_store.load_results(con, grid.sweep_id)
            cell_rows = sweep_store.load_cells(con, grid.sweep_id).drop(columns="params_json")
        else:
            table = results_table((position[i], by_id[i], o.frame)
                                  for i, o in outcomes.items() if o.ok)
            cell_rows = _cell_rows(cells, outcomes)
    finally:
        if con is not None:
            con.close()
    computed = tuple(c.cell_id for c in todo if c.cell_id in outcomes)
    return SweepResult(
        grid.sweep_id, grid.name, table, cell_rows, computed,
        tuple(c.cell_id for c in cells if c.cell_id in done_before),
        tuple(c.cell_id for c in todo if c.cell_id in outcomes and not outcomes[c.cell_id].ok),
        ex.name, int(ex.workers or workers), round(seconds, 3))


def _executor(executor, workers: int, scheduler: str | None):
    """``(executor, scope)``: a new executor entered by ``scope``, or the caller's entered
    one with a scope that leaves it open (``ValueError`` for an unknown name)."""
    if isinstance(executor, str):
        if executor not in EXECUTORS:
            raise ValueError(f"unknown executor {executor!r} (expected "
                             f"{', '.join(EXECUTORS)})")
        ex = make_executor(executor, workers=workers, scheduler=scheduler)
        return ex, ex
    return executor, contextlib.nullcontext(executor)  # kept open for several sweeps


def _cell_rows(cells, outcomes: dict[str, CellOutcome]) -> pd.DataFrame:
    """:attr:`SweepResult.cells` of ``cells`` from the outcomes found so far."""
    return pd.DataFrame([
        {"position": i, "cell_id": c.cell_id,
         "status": ("pending" if c.cell_id not in outcomes
                    else "ok" if outcomes[c.cell_id].ok else "failed"),
         "error": outcomes[c.cell_id].error if c.cell_id in outcomes else "",
         "seconds": outcomes[c.cell_id].seconds if c.cell_id in outcomes else 0.0,
         "worker": outcomes[c.cell_id].worker if c.cell_id in outcomes else ""}
        for i, c in enumerate(cells)],
        columns=["position", "cell_id", "status", "error", "seconds", "worker"])


def run_sweeps(grids, *, executor="local", workers: int = 1, scheduler: str | None = None,
               progress: Callable[[Progress], None] | None = None) -> list[SweepResult]:
    """Several grids in one pass of one executor, fits shared across grids; no store.

    The cells of every grid (a cell in several grids runs once) are grouped as
    :func:`run_sweep` does with ``share_fits`` (:func:`group_cells`), but across grids, so a
    fit that several grids need is made once, and the largest groups of all grids start
    first: one pass keeps both workers busy to the end, where grids run one after another
    leave a worker idle at the end of each. Each grid's result equals its own
    :func:`run_sweep`'s (the same table, exactly: ``tests/test_sweep_reproduce.py``).

    Parameters are those of :func:`run_sweep`; ``progress`` counts the cells of all grids.
    ``seconds`` of every result is the pass's wall time.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    grids = list(grids)
    ex, scope = _executor(executor, workers, scheduler)
    cells = [grid.cells() for grid in grids]
    unique = {c.cell_id: c for cs in cells for c in cs}
    groups = {g.cell_id: g for g in group_cells(unique.values())}
    outcomes: dict[str, CellOutcome] = {}
    seen: set[str] = set()
    t_start = time.perf_counter()
    with scope:
        t0 = time.perf_counter()
        for out in ex.run(groups.values(), run_group):
            if out.cell_id in seen:  # a group a cluster recomputed: keep the first
                continue
            seen.add(out.cell_id)
            for one in _split(out, groups[out.cell_id]):
                outcomes[one.cell_id] = one
            if progress is not None:
                progress(Progress(len(outcomes), len(unique),
                                  sum(not o.ok for o in outcomes.values()), 0,
                                  time.perf_counter() - t0))
    seconds = round(time.perf_counter() - t_start, 3)
    results = []
    for grid, cs in zip(grids, cells, strict=True):
        ran = [c for c in cs if c.cell_id in outcomes]
        table = results_table((i, c, outcomes[c.cell_id].frame)
                              for i, c in enumerate(cs)
                              if c.cell_id in outcomes and outcomes[c.cell_id].ok)
        results.append(SweepResult(
            grid.sweep_id, grid.name, table, _cell_rows(cs, outcomes),
            tuple(c.cell_id for c in ran), (),
            tuple(c.cell_id for c in ran if not outcomes[c.cell_id].ok),
            ex.name, int(ex.workers or workers), seconds))
    return results
