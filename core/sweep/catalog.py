"""Sweeps a page can show: the ones shipped with the repository and those in a sweep store.

* **Shipped** (``data/sweeps/``): a grid file ``NAME.toml`` beside ``NAME.csv``, the results
  table :func:`core.sweep.engine.run_sweep` computed for it (``python -m core sweep NAME.toml
  --csv NAME.csv``). Reading checks the pair: the columns are
  :data:`core.sweep.table.TABLE_COLUMNS`, every ``cell_id`` is a cell of the grid, no cell
  has its methods twice.
* **A sweep store** (``$ARBITER_SWEEPS``, or ``store=``): a DuckDB file written by ``python -m
  core sweep GRID.toml --db PATH``, opened read-only; every sweep with at least one finished
  cell is listed.

:func:`available_sweeps` lists both (shipped first, by name; then the store's, newest first)
as :class:`SweepEntry`; :func:`load_sweep` returns one as a :class:`SweepData` (the results
table and what varies in it). Both raise ``ValueError`` with one line for a broken file, and
:func:`available_sweeps` reports a broken store in :attr:`SweepCatalog.problem` instead of
failing, so the shipped sweeps stay usable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import DATA_DIR
from .grid import Grid, load_grid
from .table import PARAM_COLUMNS, TABLE_COLUMNS, normalise
from .views import KNOBS, REPLICATES

__all__ = ["SHIPPED_DIR", "STORE_ENV", "SweepCatalog", "SweepData", "SweepEntry",
           "available_sweeps", "load_sweep", "read_results_csv", "write_results_csv"]

#: Where the shipped sweeps live.
SHIPPED_DIR = DATA_DIR / "sweeps"
#: The environment variable naming a sweep store to list beside the shipped sweeps.
STORE_ENV = "ARBITER_SWEEPS"
#: Largest shipped results file read (bytes); the shipped ones are well under 1 MB.
MAX_CSV_BYTES = 50_000_000


@dataclass(frozen=True)
class SweepEntry:
    """One sweep a page can pick.

    Attributes
    ----------
    key : ``shipped:NAME`` or ``store:SWEEP_ID`` (what :func:`load_sweep` takes).
    name, description : from the grid.
    source : ``shipped`` or ``store``.
    n_cells : cells of the grid; ``n_finished`` of them have results.
    """

    key: str
    name: str
    description: str
    source: str
    n_cells: int
    n_finished: int

    @property
    def label(self) -> str:
        """``name · 200 cells`` (``· 180 of 200 cells`` when some are missing)."""
        done = (f"{self.n_cells:,} cells" if self.n_finished == self.n_cells
                else f"{self.n_finished:,} of {self.n_cells:,} cells")
        where = "" if self.source == "shipped" else " (your sweep store)"
        return f"{self.name} · {done}{where}"


@dataclass(frozen=True)
class SweepCatalog:
    """What :func:`available_sweeps` found.

    Attributes
    ----------
    entries : every usable sweep, shipped first.
    problem : one line on a sweep store or shipped file that could not be read (``""`` when
        none); the entries that could be read are still listed.
    """

    entries: tuple[SweepEntry, ...]
    problem: str = ""

    def keys(self) -> tuple[str, ...]:
        """The entries' keys, in order."""
        return tuple(e.key for e in self.entries)

    def entry(self, key: str) -> SweepEntry:
        """The entry with ``key`` (``ValueError`` when there is none)."""
        for e in self.entries:
            if e.key == key:
                return e
        raise ValueError(f"no sweep {key!r} (available: {', '.join(self.keys()) or 'none'})")


@dataclass(frozen=True)
class SweepData:
    """One sweep's results table and what varies in it.

    Attributes
    ----------
    entry : the catalogue entry.
    table : the results table (:data:`core.sweep.table.TABLE_COLUMNS`, one row per cell and
        method, in cell position order).
    methods : the methods, in the table's order.
    knobs : the knobs of :data:`core.sweep.views.KNOBS` taking more than one value, replicates
        (seeds, training draws) included, in that order.
    settings : the varying knobs that are not replicates (what a setting is made of).
    n_seeds : distinct seeds.
    """

    entry: SweepEntry
    table: pd.DataFrame = field(repr=False)
    methods: tuple[str, ...]
    knobs: tuple[str, ...]
    settings: tuple[str, ...]
    n_seeds: int

    @property
    def n_cells(self) -> int:
        """Cells with results."""
        return int(self.table["cell_id"].nunique())


def write_results_csv(table: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a results table as CSV, every float to full precision (it reads back equal)."""
    p = Path(path)
    normalise(table).to_csv(p, index=False, float_format="%.17g", lineterminator="\n")
    return p


def read_results_csv(path: str | os.PathLike, *, grid: Grid | None = None) -> pd.DataFrame:
    """A results table written by :func:`write_results_csv`, checked.

    Raises ``ValueError`` (one line) when the file is too large or not a results table (a
    missing or extra column, a value of the wrong type), when a cell repeats a method, or,
    with ``grid``, when a ``cell_id`` is not one of the grid's cells.
    """
    p = Path(path)
    if p.stat().st_size > MAX_CSV_BYTES:
        raise ValueError(f"{p.name} is larger than {MAX_CSV_BYTES // 1_000_000} MB")
    dtypes = {c: ("string" if t == "str" else "float64" if t != "Int64" else "Int64")
              for c, t in TABLE_COLUMNS.items()}
    try:
        raw = pd.read_csv(p, dtype=dtypes, keep_default_na=False,
                          na_values={c: [""] for c, t in TABLE_COLUMNS.items() if t != "str"})
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{p.name} is not a sweep results table: {first}") from None
    if list(raw.columns) != list(TABLE_COLUMNS):
        extra = [c for c in raw.columns if c not in TABLE_COLUMNS]
        missing = [c for c in TABLE_COLUMNS if c not in raw.columns]
        what = (f"no column {missing[0]!r}" if missing else f"unexpected column {extra[0]!r}"
                if extra else "columns out of order")
        raise ValueError(f"{p.name} is not a sweep results table: {what}")
    if raw.empty:
        raise ValueError(f"{p.name} has no results")
    ints = [c for c, t in TABLE_COLUMNS.items() if t == "int64"]
    bad = [c for c in ints if raw[c].isna().any()
           or not np.all(np.equal(np.mod(raw[c].to_numpy(float), 1), 0))]
    if bad:
        raise ValueError(f"{p.name} is not a sweep results table: column {bad[0]!r} must hold "
                         "whole numbers")
    try:
        table = normalise(raw)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(f"{p.name} is not a sweep results table: "
                         f"{str(exc).splitlines()[0]}") from None
    if table.duplicated(["cell_id", "method"]).any():
        raise ValueError(f"{p.name} repeats a method within a cell")
    if grid is not None:
        known = {c.cell_id for c in grid.cells()}
        stray = sorted(set(table["cell_id"]) - known)
        if stray:
            raise ValueError(f"{p.name} holds cell {stray[0]!r}, which is not a cell of the "
                             f"grid {grid.name!r} (were the files made together?)")
    return table.sort_values(["position"], kind="stable").reset_index(drop=True)


def _shipped(directory: Path) -> tuple[list[SweepEntry], list[str]]:
    entries, problems = [], []
    if not directory.is_dir():
        return entries, problems
    for toml in sorted(directory.glob("*.toml")):
        csv = toml.with_suffix(".csv")
        if not csv.is_file():
            problems.append(f"{toml.name} has no {csv.name} beside it")
            continue
        try:
            grid = load_grid(toml)
            table = read_results_csv(csv, grid=grid)
        except (ValueError, OSError) as exc:
            problems.append(str(exc).splitlines()[0])
            continue
        entries.append(SweepEntry(f"shipped:{toml.stem}", grid.name, grid.description,
                                  "shipped", len(grid.cells()),
                                  int(table["cell_id"].nunique())))
    return entries, problems


def _connect(store: str | os.PathLike):
    import duckdb

    p = Path(store)
    if not p.is_file():
        raise ValueError(f"the sweep store {p} does not exist")
    try:
        con = duckdb.connect(str(p), read_only=True)
    except (duckdb.Error, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"cannot open the sweep store {p.name}: {first}") from None
    with con.cursor() as cur:
        names = {r[0] for r in cur.execute(
            "SELECT table_name FROM information_schema.tables").fetchall()}
    if not {"sweeps", "sweep_cells", "sweep_results"} <= names:
        con.close()
        raise ValueError(f"{p.name} holds no sweeps (no sweeps / sweep_cells / sweep_results "
                         "tables)")
    return con


def _entries(con, store: str | os.PathLike) -> list[SweepEntry]:
    """The finished sweeps of an open sweep store."""
    import duckdb

    from .store import list_sweeps

    try:
        frame = list_sweeps(con)
    except duckdb.Error as exc:
        raise ValueError(f"cannot read the sweep store {Path(store).name}: "
                         f"{str(exc).splitlines()[0]}") from None
    out = []
    for row in frame.itertuples(index=False):
        done = int(getattr(row, "ok", 0) or 0)
        if done:
            out.append(SweepEntry(f"store:{row.sweep_id}", str(row.name),
                                  str(row.description or ""), "store", int(row.n_cells), done))
    return out


def _stored(store: str | os.PathLike) -> list[SweepEntry]:
    con = _connect(store)
    try:
        return _entries(con, store)
    finally:
        con.close()


def available_sweeps(*, shipped_dir: str | os.PathLike | None = None,
                     store: str | os.PathLike | None = None) -> SweepCatalog:
    """Every sweep a page can show: shipped (by file name), then the store's (newest first).

    Parameters
    ----------
    shipped_dir : the folder of ``NAME.toml`` + ``NAME.csv`` pairs (default
        :data:`SHIPPED_DIR`).
    store : a sweep store (default ``$ARBITER_SWEEPS``; none when unset or empty).

    A pair or a store that cannot be read is left out and named in
    :attr:`SweepCatalog.problem` (the first such line).
    """
    entries, problems = _shipped(Path(shipped_dir) if shipped_dir is not None else SHIPPED_DIR)
    store = os.environ.get(STORE_ENV, "") if store is None else store
    if os.fspath(store):
        try:
            entries += _stored(store)
        except ValueError as exc:
            problems.insert(0, str(exc))
    return SweepCatalog(tuple(entries), problems[0] if problems else "")


def _describe(entry: SweepEntry, table: pd.DataFrame) -> SweepData:
    knobs = tuple(k for k in KNOBS if k in PARAM_COLUMNS
                  and table[k].nunique(dropna=False) > 1)
    return SweepData(entry, table, tuple(pd.unique(table["method"])), knobs,
                     tuple(k for k in knobs if k not in REPLICATES),
                     int(table["seed"].nunique()))


def load_sweep(key: str, *, shipped_dir: str | os.PathLike | None = None,
               store: str | os.PathLike | None = None) -> SweepData:
    """The sweep ``key`` (an :attr:`SweepEntry.key`) with its results table.

    Raises ``ValueError`` (one line) for an unknown key or a file that cannot be read.
    """
    kind, _, name = str(key).partition(":")
    if kind == "shipped" and name:
        directory = Path(shipped_dir) if shipped_dir is not None else SHIPPED_DIR
        toml = directory / f"{name}.toml"
        if "/" in name or "\\" in name or name.startswith(".") or not toml.is_file():
            raise ValueError(f"no shipped sweep {name!r}")
        grid = load_grid(toml)
        table = read_results_csv(toml.with_suffix(".csv"), grid=grid)
        entry = SweepEntry(key, grid.name, grid.description, "shipped", len(grid.cells()),
                           int(table["cell_id"].nunique()))
        return _describe(entry, table)
    if kind == "store" and name:
        from .store import load_results

        store = os.environ.get(STORE_ENV, "") if store is None else store
        if not os.fspath(store):
            raise ValueError(f"no sweep store is set (${STORE_ENV})")
        con = _connect(store)  # once: the listing and the table from one connection
        try:
            entries = {e.key: e for e in _entries(con, store)}
            if key not in entries:
                raise ValueError(f"the sweep store has no finished sweep {name!r}")
            table = load_results(con, name)
        finally:
            con.close()
        return _describe(entries[key], table)
    raise ValueError(f"a sweep key is shipped:NAME or store:SWEEP_ID, got {key!r}")
