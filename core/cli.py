"""Command line: ``python -m core <command>`` (DESIGN.md §4).

Every command prints a readable table, writes its result as JSON with ``--json PATH``, and
exits 0 on success, 2 on bad input (one line on stderr, no traceback), 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _write_json(path: str | None, payload: dict) -> None:
    if path:
        p = Path(path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(payload, indent=2, default=str) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write --json {path}: {exc.strerror or exc}") from None


def _print_table(df, *, floatfmt: str = "{:.4f}") -> None:
    import pandas as pd

    with pd.option_context("display.max_rows", 500, "display.width", 160,
                           "display.float_format", floatfmt.format):
        print(df.to_string(index=False))


def _cmd_build(args) -> int:
    from .store import build_store
    from .testbed.config import TestbedConfig

    try:
        config = TestbedConfig(seeds=tuple(args.seeds),
                               personas_per_difficulty=args.personas_per_difficulty,
                               bias_scale=args.bias_scale, dropout_scale=args.dropout_scale)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    t0 = time.perf_counter()
    info = build_store(args.db, config,
                       progress=lambda msg, frac: print(f"[{frac:4.0%}] {msg}", file=sys.stderr))
    dt = time.perf_counter() - t0
    print(f"built {info.path}: {info.n_personas} personas, {info.n_ground_truth} GT rows, "
          f"seeds {', '.join(map(str, info.seeds))} in {dt:.1f} s")
    _write_json(args.json, {"command": "build", "db": info.path, "personas": info.n_personas,
                            "ground_truth_rows": info.n_ground_truth, "seeds": list(info.seeds),
                            "config": info.config, "seconds": round(dt, 3)})
    return 0


def _cmd_import(args) -> int:
    from .store import write_store
    from .testbed.importer import ReleaseFormatError, load_release

    if not Path(args.dir).is_dir():
        raise UsageError(f"import-release: {args.dir} is not a directory")
    try:
        rel = load_release(args.dir)
    except ReleaseFormatError as exc:
        raise UsageError(f"import-release: {exc}") from None
    info = write_store(args.db, rel.testbed, origin=f"release:{Path(args.dir).resolve()}",
                       config={"release": str(Path(args.dir).resolve())},
                       reference_labels=rel.reference_labels,
                       extracted_atoms=rel.extracted_atoms, llm_answers=rel.llm_answers)
    for note in rel.skipped:
        print(f"note: {note}", file=sys.stderr)
    print(f"imported {info.n_personas} personas into {info.path}: "
          f"{len(rel.reference_labels)} reference labels, {len(rel.extracted_atoms)} extracted "
          f"atoms, {len(rel.llm_answers)} LLM answers")
    _write_json(args.json, {"command": "import-release", "db": info.path,
                            "personas": info.n_personas,
                            "reference_labels": len(rel.reference_labels),
                            "extracted_atoms": len(rel.extracted_atoms),
                            "llm_answers": len(rel.llm_answers), "skipped": rel.skipped})
    return 0


def _cmd_audit(args) -> int:
    from .audit import audit_store
    from .store import connect

    con = connect(args.db, read_only=True)
    try:
        res = audit_store(con)
    finally:
        con.close()
    summary = res.table.pivot_table(index="question_id", columns="comparison", values="rate",
                                    sort=False).reset_index()
    _print_table(summary)

    def pct(k: int, n: int) -> str:
        return f"{k}/{n} ({100 * k / n:.2f}%)" if n else "n/a"

    print(f"python vs SQL:       {pct(res.python_vs_sql, res.n_rows)}")
    print(f"python vs stored GT: {pct(res.python_vs_stored, res.n_rows)}")
    print(f"python vs reference: {pct(res.python_vs_reference, res.n_reference)}")
    if not res.ok:
        _print_table(res.mismatches)
    _write_json(args.json, {"command": "audit", **res.to_dict()})
    return 0 if res.ok else 1


def _parser() -> _Parser:
    from .store import DEFAULT_DB
    from .testbed.config import DEFAULT_SEEDS

    p = _Parser(prog="python -m core", description="Arbiter command line")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, required=True)

    b = sub.add_parser("build", help="generate the seed-000 testbed into a DuckDB store")
    b.add_argument("--db", default=str(DEFAULT_DB), help="store path (default %(default)s)")
    b.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    b.add_argument("--personas-per-difficulty", type=int, default=160)
    b.add_argument("--bias-scale", type=float, default=1.0)
    b.add_argument("--dropout-scale", type=float, default=1.0)
    b.add_argument("--json", help="also write the result as JSON here")
    b.set_defaults(func=_cmd_build)

    i = sub.add_parser("import-release", help="import the authors' release layout")
    i.add_argument("dir", help="release root (with benchmark/) or a benchmark/seeds/<seed> folder")
    i.add_argument("--db", required=True, help="store path to write")
    i.add_argument("--json")
    i.set_defaults(func=_cmd_import)

    a = sub.add_parser("audit", help="recompute GT in Python and SQL and compare")
    a.add_argument("--db", default=str(DEFAULT_DB))
    a.add_argument("--json")
    a.set_defaults(func=_cmd_audit)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .store import StoreError

    try:
        args = _parser().parse_args(argv)
        return args.func(args)
    except (UsageError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: one line unless debugging
        if os.environ.get("ARBITER_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (set ARBITER_DEBUG=1 for a "
              "traceback)", file=sys.stderr)
        return 1
