"""``python -m core sweep GRID.toml``: run a sweep from the command line (issue 23).

``core/cli.py`` registers the command with :func:`add_sweep_parser`. Like every command, it
checks its arguments while parsing (the grid file is read and validated before any work),
prints a readable summary, writes ``--json``, and exits 0 when every cell finished, 1 when a
cell failed (its error is in the store, the JSON and the summary) and 2 on bad input with one
line on stderr. Progress (cells done, rate, ETA) goes to stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from ..cli import (
    HEAVY_HELP,
    MAX_WORKERS,
    UsageError,
    _existing_file,
    _int_range,
    _json_out,
    _write_json,
)
from .engine import EXECUTORS, Progress, run_sweep
from .grid import Grid, load_grid

__all__ = ["add_sweep_parser"]

#: The Dask pin of requirements-dev.txt, named in the message when Dask is missing.
DASK_PIN = "dask[distributed]==2026.8.0"


def _grid_file(text: str) -> Grid:
    """argparse ``type``: a readable TOML grid file, parsed and validated."""
    _existing_file(text)
    try:
        return load_grid(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{Path(text).name}: {exc}") from None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text}: "
                                         f"{exc.strerror or type(exc).__name__}") from None


def _sweep_db(text: str) -> str:
    """argparse ``type``: a store the sweep tables can be written to (created if missing)."""
    from ..store import StoreError, check_store_destination

    try:
        check_store_destination(text)
    except StoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _csv_out(text: str) -> str:
    """argparse ``type``: a CSV file that can be written (``.csv``, its folder exists)."""
    p = Path(text)
    if p.suffix.lower() != ".csv":
        raise argparse.ArgumentTypeError(f"{text}: the results file must end in .csv")
    if p.is_dir() or not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a file in an existing folder")
    return text


class _Reporter:
    """Progress on stderr: one rewritten line on a terminal, else about 20 lines a sweep."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last = ""

    def __call__(self, p: Progress) -> None:
        step = max(1, p.total // 20)
        if self.tty:
            self.stream.write("\r" + p.line().ljust(len(self.last)))
            self.last = p.line()
        elif p.done % step == 0 or p.done == p.total:
            self.stream.write(p.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.last:
            self.stream.write("\n")
            self.stream.flush()


def _summary(table):
    """Per method over the finished cells: cells, mean / min / max forced accuracy, mean
    selective accuracy and coverage (%)."""
    g = table.groupby("method", sort=False)
    out = g.agg(cells=("cell_id", "nunique"), forced_mean=("forced_accuracy", "mean"),
                forced_min=("forced_accuracy", "min"), forced_max=("forced_accuracy", "max"),
                selective_mean=("selective_accuracy", "mean"), coverage_mean=("coverage", "mean"))
    return out.reset_index()


def _cmd_sweep(args) -> int:
    import pandas as pd

    grid: Grid = args.grid
    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler applies only to --executor dask")
    if args.executor != "local" and importlib.util.find_spec("distributed") is None:
        raise UsageError(f"--executor {args.executor} needs Dask: pip install '{DASK_PIN}'")
    reporter = None if args.quiet else _Reporter(sys.stderr)
    try:
        result = run_sweep(grid, executor=args.executor, workers=args.workers,
                           scheduler=args.scheduler, store=args.db, progress=reporter)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    finally:
        if reporter is not None:
            reporter.close()
    status = result.cells["status"].value_counts()
    print(f"sweep {result.name} ({result.sweep_id}): {len(result.cells)} cells — "
          f"{len(result.computed)} computed, {len(result.skipped)} skipped, "
          f"{int(status.get('failed', 0))} failed; {result.seconds:.1f} s on "
          f"{result.executor} × {result.workers}")
    if args.db:
        print(f"stored in {args.db} (tables sweeps, sweep_cells, sweep_results)")
    bad = result.cells[result.cells["status"] == "failed"]
    for _, row in bad.head(10).iterrows():
        print(f"  failed cell {row['position']} ({row['cell_id']}): {row['error']}")
    if len(bad) > 10:
        print(f"  … and {len(bad) - 10} more failed cells")
    if len(result.table):
        with pd.option_context("display.width", 160, "display.float_format", "{:.2f}".format):
            print(_summary(result.table).to_string(index=False))
    if args.csv:
        from .catalog import write_results_csv

        write_results_csv(result.table, args.csv)
        print(f"results table ({len(result.table):,} rows) written to {args.csv}")
    _write_json(args.json, {"command": "sweep", "grid": grid.to_dict(), **result.to_dict()})
    return 1 if len(bad) else 0


def add_sweep_parser(sub, *, json_help: str) -> None:
    """Register ``sweep`` on the subparsers ``sub`` of ``python -m core``."""
    s = sub.add_parser(
        "sweep", help=HEAVY_HELP["sweep"],
        description="Run every cell of a grid (docs/sweep.md): generate, fit, calibrate and "
                    "score each cell in memory; with --db, store the results and skip the "
                    "cells already there.")
    s.add_argument("grid", type=_grid_file, metavar="GRID.toml", help="the grid definition")
    s.add_argument("--db", type=_sweep_db,
                   help="DuckDB file for the sweeps, sweep_cells and sweep_results tables "
                        "(created if missing; re-running skips finished cells)")
    s.add_argument("--workers", type=_int_range(1, MAX_WORKERS), default=2,
                   help=f"local processes or LocalCluster workers, 1 to {MAX_WORKERS} "
                        "(default 2; 1 runs in this process)")
    s.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local processes (default), a Dask scheduler (dask, with "
                        "--scheduler) or a Dask LocalCluster (dask-local)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address for --executor dask (tcp://host:8786)")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    s.add_argument("--csv", type=_csv_out, metavar="PATH.csv",
                   help="also write the results table as CSV (what data/sweeps/ ships beside "
                        "its grid files; docs/sweep.md)")
    s.add_argument("--json", type=_json_out, help=json_help)
    s.set_defaults(func=_cmd_sweep)
