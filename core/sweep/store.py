"""The sweep tables in a DuckDB store (only the driver writes them).

* ``sweeps(sweep_id, name, description, grid_json, n_cells, created_at, updated_at)`` — one
  row per grid (:attr:`core.sweep.grid.Grid.sweep_id`).
* ``sweep_cells(sweep_id, cell_id, position, params_json, status, error, seconds, worker,
  finished_at)`` — one row per cell; ``status`` is ``pending``, ``ok`` or ``failed`` (with the
  cell's error text).
* ``sweep_results(sweep_id, cell_id, method_index, <the results table's columns>)`` — one row
  per (cell, method): the cell's parameters beside its results
  (:data:`core.sweep.table.TABLE_COLUMNS`); float NaN is stored as NULL.

A cell's results and its status are written in one transaction (the engine writes the cells
that finished within about a second together: one transaction per cell cost the driver
≈ 20 ms a cell), so a driver stopped mid-sweep leaves every written cell whole and the next
run skips exactly those (:func:`finished_cells`). The file is created if missing; the tables
live beside any others (a built Arbiter store works, but ``python -m core build`` replaces
its file, so a separate file keeps sweeps safe). DuckDB 2.0: a cursor per query, every
result drained.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from ..store import StoreError
from .executors import CellOutcome
from .grid import Cell, Grid
from .table import TABLE_COLUMNS, empty_table, normalise, results_table

__all__ = ["SWEEP_TABLES", "finished_cells", "list_sweeps", "load_cells", "load_results",
           "open_store", "record_outcome", "record_outcomes", "register_sweep"]

SWEEP_TABLES = ("sweeps", "sweep_cells", "sweep_results")

_SQL_TYPE = {"int64": "BIGINT", "Int64": "BIGINT", "float64": "DOUBLE", "str": "VARCHAR"}

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS sweeps (sweep_id VARCHAR, name VARCHAR, description VARCHAR,
       grid_json VARCHAR, n_cells BIGINT, created_at TIMESTAMP, updated_at TIMESTAMP)""",
    """CREATE TABLE IF NOT EXISTS sweep_cells (sweep_id VARCHAR, cell_id VARCHAR,
       position BIGINT, params_json VARCHAR, status VARCHAR, error VARCHAR, seconds DOUBLE,
       worker VARCHAR, finished_at TIMESTAMP)""",
    "CREATE TABLE IF NOT EXISTS sweep_results (sweep_id VARCHAR, method_index BIGINT, "
    + ", ".join(f"{c} {_SQL_TYPE[t]}" for c, t in TABLE_COLUMNS.items()) + ")",
]


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


def open_store(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open (or create) the store at ``path`` read-write and create the sweep tables.

    Raises :class:`core.store.StoreError` with a one-line reason (a directory, a file that is
    not a DuckDB database, a store another process holds).
    """
    p = Path(path)
    if not os.fspath(path):
        raise StoreError("the store path is empty")
    if p.is_dir():
        raise StoreError(f"{p} is a directory, not a store file")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(p))
    except (duckdb.Error, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"cannot open {p} for writing: {first}") from None
    for sql in _SCHEMA:
        with con.cursor() as cur:
            cur.execute(sql)
    return con


def register_sweep(con: duckdb.DuckDBPyConnection, grid: Grid, cells: tuple[Cell, ...]) -> None:
    """Add the sweep and its cells (status ``pending``) unless they are there already."""
    sid = grid.sweep_id
    now = _now()
    with con.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        known = cur.execute("SELECT count(*) FROM sweeps WHERE sweep_id = ?", [sid]).fetchone()
        if known[0] == 0:
            cur.execute("INSERT INTO sweeps VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [sid, grid.name, grid.description, json.dumps(grid.to_dict()),
                         len(cells), now, now])
        have = {r[0] for r in cur.execute("SELECT cell_id FROM sweep_cells WHERE sweep_id = ?",
                                          [sid]).fetchall()}
        new = pd.DataFrame(
            [{"sweep_id": sid, "cell_id": c.cell_id, "position": i,
              "params_json": json.dumps(c.to_dict(), sort_keys=True)}
             for i, c in enumerate(cells) if c.cell_id not in have],
            columns=["sweep_id", "cell_id", "position", "params_json"])
        if len(new):
            cur.register("new_cells", new)
            cur.execute("INSERT INTO sweep_cells SELECT sweep_id, cell_id, position, "
                        "params_json, 'pending', NULL, NULL, NULL, NULL FROM new_cells")
            cur.unregister("new_cells")
        cur.execute("COMMIT")


def finished_cells(con: duckdb.DuckDBPyConnection, sweep_id: str) -> set[str]:
    """Ids of the sweep's cells whose results are stored (status ``ok``)."""
    with con.cursor() as cur:
        rows = cur.execute("SELECT cell_id FROM sweep_cells WHERE sweep_id = ? AND status = 'ok'",
                           [sweep_id]).fetchall()
    return {r[0] for r in rows}


def record_outcomes(con: duckdb.DuckDBPyConnection, sweep_id: str,
                    items: Sequence[tuple[int, Cell, CellOutcome]]) -> None:
    """Write finished cells, ``(position, cell, outcome)`` each, in one transaction: their
    results (replacing earlier rows) and their status, error, time and worker."""
    if not items:
        return
    now = _now()
    done = [(pos, cell, out) for pos, cell, out in items if out.ok]
    results = results_table((pos, cell, out.frame) for pos, cell, out in done)
    if len(results):
        index = np.concatenate([np.arange(len(out.frame), dtype=np.int64)
                                for _, _, out in sorted(done, key=lambda t: t[0])])
        results.insert(0, "method_index", index)
        results.insert(0, "sweep_id", sweep_id)
    status = pd.DataFrame({
        "cell_id": [cell.cell_id for _, cell, _ in items],
        "status": ["ok" if out.ok else "failed" for _, _, out in items],
        "error": [out.error or None for _, _, out in items],
        "seconds": [float(out.seconds) for _, _, out in items],
        "worker": [out.worker or None for _, _, out in items],
    })
    with con.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        cur.register("done_cells", status)
        cur.execute("DELETE FROM sweep_results WHERE sweep_id = ? AND cell_id IN "
                    "(SELECT cell_id FROM done_cells)", [sweep_id])
        if len(results):
            cur.register("new_results", results)
            cur.execute("INSERT INTO sweep_results SELECT sweep_id, method_index, "
                        + ", ".join(TABLE_COLUMNS) + " FROM new_results")
            cur.unregister("new_results")
        cur.execute("UPDATE sweep_cells SET status = d.status, error = d.error, "
                    "seconds = d.seconds, worker = d.worker, finished_at = ? FROM done_cells d "
                    "WHERE sweep_cells.sweep_id = ? AND sweep_cells.cell_id = d.cell_id",
                    [now, sweep_id])
        cur.unregister("done_cells")
        cur.execute("UPDATE sweeps SET updated_at = ? WHERE sweep_id = ?", [now, sweep_id])
        cur.execute("COMMIT")


def record_outcome(con: duckdb.DuckDBPyConnection, sweep_id: str, position: int, cell: Cell,
                   outcome: CellOutcome) -> None:
    """:func:`record_outcomes` of one cell."""
    record_outcomes(con, sweep_id, [(position, cell, outcome)])


def load_results(con: duckdb.DuckDBPyConnection, sweep_id: str) -> pd.DataFrame:
    """The sweep's results table (:data:`core.sweep.table.TABLE_COLUMNS`), in cell position
    then method order: equal to the table the engine assembles in memory."""
    with con.cursor() as cur:
        df = cur.execute("SELECT " + ", ".join(TABLE_COLUMNS) + " FROM sweep_results "
                         "WHERE sweep_id = ? ORDER BY position, method_index",
                         [sweep_id]).df()
    if df.empty:
        return empty_table()
    for col, dtype in TABLE_COLUMNS.items():
        if dtype == "float64":
            df[col] = pd.to_numeric(df[col]).astype("float64")
    return normalise(df)


def load_cells(con: duckdb.DuckDBPyConnection, sweep_id: str) -> pd.DataFrame:
    """The sweep's cells: position, cell_id, status, error and worker (``""`` when none),
    seconds (0 when pending), params_json."""
    with con.cursor() as cur:
        df = cur.execute("SELECT position, cell_id, status, coalesce(error, '') AS error, "
                         "coalesce(seconds, 0) AS seconds, coalesce(worker, '') AS worker, "
                         "params_json FROM sweep_cells WHERE sweep_id = ? ORDER BY position",
                         [sweep_id]).df()
    return df


def list_sweeps(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every sweep in the store with its cell counts by status (newest first)."""
    with con.cursor() as cur:
        return cur.execute("""
            SELECT s.sweep_id, s.name, s.description, s.n_cells,
                   count(*) FILTER (WHERE c.status = 'ok') AS ok,
                   count(*) FILTER (WHERE c.status = 'failed') AS failed,
                   count(*) FILTER (WHERE c.status = 'pending') AS pending,
                   s.created_at, s.updated_at
            FROM sweeps s LEFT JOIN sweep_cells c USING (sweep_id)
            GROUP BY ALL ORDER BY s.updated_at DESC, s.sweep_id""").df()
