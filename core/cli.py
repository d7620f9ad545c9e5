"""Command line: ``python -m core <command>`` (DESIGN.md §4).

Every command prints a readable table, writes its result as JSON with ``--json PATH``, and
exits 0 on success, 2 on bad input (one line on stderr, no traceback), 1 when a check fails.

Every argument is checked while parsing (``type=`` helpers below), before any long work:
numbers against documented ranges, stores to read must exist as regular files (they are never
created), destinations must be writable. JSON output is strict: non-finite numbers are written
as ``null``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["main"]

#: Bounds of the numeric options (inclusive).
MIN_BOOTSTRAP, MAX_BOOTSTRAP = 100, 20_000  # 100 000 replicates need ~1.5 GB for 480 clusters
MIN_BUDGET, MAX_BUDGET = 4, 259  # the default scenario has 259 items
MAX_REPS = 20_000  # 100 000 pilots of 259 annotations need ~2.8 GB
MAX_WORKERS = 16
MAX_SEED = 2**32 - 1
MIN_PERSONAS, MAX_PERSONAS = 4, 1000  # TestbedConfig's range
MAX_SCALE = 4.0  # bias and dropout scales, TestbedConfig's range


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _shown(text: str) -> str:
    """``text`` quoted for a message, cut to 40 characters."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _int_range(lo: int, hi: int) -> Callable[[str], int]:
    """argparse ``type``: an integer in ``[lo, hi]`` (one-line message otherwise)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer in [{lo}, {hi}], got {_shown(text)}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be in [{lo}, {hi}], got {value}")
        return value
    parse.__name__ = "integer"
    return parse


def _finite_float(lo: float, hi: float) -> Callable[[str], float]:
    """argparse ``type``: a finite number in ``[lo, hi]`` (NaN and infinities refused)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be a finite number in [{lo:g}, {hi:g}], got {_shown(text)}")
        return value
    parse.__name__ = "number"
    return parse


def _store_to_read(text: str) -> str:
    """argparse ``type``: an existing store file (checked, never created)."""
    from .store import StoreError, check_store_file

    try:
        check_store_file(text)
    except StoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _store_to_write(text: str) -> str:
    """argparse ``type``: a path a store can be written to."""
    from .store import StoreError, check_store_destination

    try:
        check_store_destination(text)
    except StoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _existing_dir(text: str) -> str:
    """argparse ``type``: an existing directory."""
    if not text:
        raise argparse.ArgumentTypeError("the directory name is empty")
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a directory")
    return text


def _existing_file(text: str) -> str:
    """argparse ``type``: an existing, readable regular file."""
    p = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("the file name is empty")
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory, not a file")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a regular file")
    if not os.access(p, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text} is not readable")
    return text


def _writable_ancestor(folder: Path, target: str) -> None:
    """Raise unless the nearest existing ancestor of ``folder`` is a writable directory."""
    ancestor = folder
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {target}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write {target}: {ancestor} is not writable")


def _out_dir(text: str) -> str:
    """argparse ``type``: a directory to write into (created if missing)."""
    if not text:
        raise argparse.ArgumentTypeError("the directory name is empty")
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
    _writable_ancestor(p, text)
    return text


def _json_out(text: str) -> str:
    """argparse ``type``: a file the JSON result can be written to (folders are created)."""
    if not text:
        raise argparse.ArgumentTypeError("the file name is empty")
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory")
    if p.exists() and not os.access(p, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text} is not writable")
    _writable_ancestor(p.parent, text)
    return text


def _jsonable(obj):
    """``obj`` with numpy scalars and arrays as Python values and non-finite floats as None."""
    import numpy as np

    if isinstance(obj, dict):
        return {_json_key(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if obj is None or isinstance(obj, str):
        return obj
    import pandas as pd

    if obj is pd.NA or obj is pd.NaT:
        return None
    return obj  # anything else is written as str() by json.dumps(default=str)


def _json_key(key):
    if key is None or isinstance(key, (str, bool)):
        return key
    value = _jsonable(key)
    return value if isinstance(value, (int, float)) else str(key)


def _write_json(path: str | None, payload: dict) -> None:
    """Write ``payload`` as strict JSON (NaN and infinities become null) to ``path``."""
    if path:
        text = json.dumps(_jsonable(payload), indent=2, default=str, allow_nan=False)
        p = Path(path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text + "\n")
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
        raise UsageError(f"build: {exc}") from None
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
    from .store import connect, store_info

    store_info(args.db)  # a one-line StoreError unless it is an Arbiter store
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


def _fmt_table(df, cols, *, names=None):
    """Print selected columns, rounded to one decimal."""
    import pandas as pd

    view = df[[c for c in cols if c in df.columns]].copy()
    for c in view.columns:
        if pd.api.types.is_float_dtype(view[c]):
            view[c] = view[c].round(1)
    if names:
        view = view.rename(columns=names)
    _print_table(view, floatfmt="{:.1f}")


def _cmd_evaluate(args) -> int:
    import hashlib

    from .evaluation import tables as T
    from .evaluation.run import predictions_frame, run_seed
    from .store import connect, load_atoms, load_testbed, store_info, write_predictions
    from .testbed.labels import ground_truth_codes

    db = Path(args.db)
    info = store_info(db)  # a one-line StoreError unless it is an Arbiter store
    if not (os.access(db, os.W_OK) and os.access(db.parent, os.W_OK | os.X_OK)):
        raise UsageError(f"evaluate: cannot write to {db} (evaluate caches its predictions in "
                         "the store)")
    connect(db, read_only=False).close()  # fails now, not after fitting, if the store is locked
    con = connect(db, read_only=True)  # read-only while fitting: readers are not locked out
    try:
        tb = load_testbed(con)
        mu = load_atoms(con, kind="readout")
        test_mu = load_atoms(con, kind="extracted") if args.input == "extracted" else mu
    finally:
        con.close()
    gt, _ = ground_truth_codes(tb)
    seeds = []
    for seed in tb.personas["seed"].unique():  # every check before any fitting
        m = (tb.personas["seed"] == seed).to_numpy()
        counts = tb.personas[m]["split"].value_counts()
        missing = [s for s in ("train", "calibration", "test") if counts.get(s, 0) == 0]
        if missing:
            raise UsageError(f"evaluate: seed {seed} has no {', '.join(missing)} personas; "
                             "resolvers need train, calibration and test splits")
        test = m & (tb.personas["split"] == "test").to_numpy()
        if args.input == "extracted":
            lacking = int((~(test_mu[test] >= 0).any(axis=(1, 2))).sum())
            if lacking:
                raise UsageError(f"evaluate: {lacking} test personas of seed {seed} have no "
                                 "extracted atoms (import a release that has them)")
        seeds.append((seed, m, test))
    runs = []
    for _seed, m, test in seeds:
        personas = tb.personas[m].reset_index(drop=True)
        runs.append(run_seed(mu[m], gt[m], personas, test_atoms=test_mu[test]))
    main = T.main_table(runs, b=args.bootstrap)
    sel = T.selective_table(runs)
    config = {"db": str(args.db), "input": args.input, "seeds": [r.seed for r in runs]}
    run_id = hashlib.sha256(repr(sorted(config.items())).encode()).hexdigest()[:12]
    if store_info(db).built_at != info.built_at:
        raise UsageError(f"evaluate: {db} was rebuilt during the evaluation; run it again")
    con = connect(db, read_only=False)
    try:
        write_predictions(con, predictions_frame(runs), run_id=run_id, config=config)
    finally:
        con.close()
    print(f"input: {args.input}; {sum(len(r.personas) for r in runs)} test personas; "
          f"predictions cached as run {run_id}")
    _fmt_table(main, ["method", "accuracy", "ci_low", "ci_high", "paper", "delta_paper"])
    print()
    _fmt_table(sel, ["method", "selective_accuracy", "coverage", "f05", "paper_selective",
                     "paper_coverage"])
    _write_json(args.json, {"command": "evaluate", "run_id": run_id, "input": args.input,
                            "main": main.to_dict(orient="records"),
                            "selective": sel.to_dict(orient="records")})
    return 0


def _cmd_reproduce(args) -> int:
    import tempfile

    from .evaluation.reproduce import reproduce
    from .store import build_store, connect, load_testbed
    from .testbed.config import TestbedConfig

    t0 = time.perf_counter()
    config = TestbedConfig()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "reproduce.duckdb"
        build_store(path, config)
        con = connect(path)
        try:
            tb = load_testbed(con)
        finally:
            con.close()
    res = reproduce(tb, config, n_boot=args.bootstrap, robustness=not args.no_robustness,
                    workers=args.workers,
                    progress=lambda m: print(f"... {m}", file=sys.stderr))
    titles = {
        "main": ("Forced macro accuracy, pooled over 4 seeds (%), 95% cluster-bootstrap CI",
                 ["method", "accuracy", "ci_low", "ci_high", "paper", "delta_paper",
                  "regenerated", "delta_regenerated"]),
        "selective": ("Selective QA, per-seed mean (%)",
                      ["method", "selective_accuracy", "coverage", "gain_over_forced",
                       "paper_selective", "delta_selective", "paper_coverage",
                       "delta_coverage"]),
        "per_type": ("Per question type, pooled (%)", None),
        "per_difficulty": ("Per difficulty, per-seed mean (%)", None),
        "per_question": ("Per question, pooled (%)", None),
        "per_seed": ("Per seed (%)", None),
        "reachability_slices": ("Source Reachability slices (%)",
                                ["method", "full", "gt_present", "gt_absent", "paper_full",
                                 "paper_present", "paper_absent"]),
        "paired_dsnbf_vs_mv": ("Paired difference DSNBF − Majority Vote by type (pp)", None),
        "perturbation_grid": ("DGP perturbation grid, 4-seed mean (%)", None),
        "noise": ("Extraction-noise tolerance (%)", None),
        "train_size": ("Training-size ablation (%)", None),
        "transfer": ("Cross-bias transfer without refit (%)", None),
    }
    for key, (title, cols) in titles.items():
        if key not in res.tables:
            continue
        print(f"\n== {title}")
        df = res.tables[key]
        if key == "per_difficulty":
            df = df.pivot(index="method", columns="difficulty", values="accuracy").reset_index()
        _fmt_table(df, cols or list(df.columns))
    print("\n== Summary")
    for k, v in res.summary.items():
        print(f"{k:28s} {v:.3f}" if isinstance(v, float) else f"{k:28s} {v}")
    total = time.perf_counter() - t0
    print(f"total {total:.1f} s; steps: " + ", ".join(f"{k} {v:.1f} s"
                                                      for k, v in res.seconds.items()))
    _write_json(args.json, {"command": "reproduce", **res.to_dict(),
                            "total_seconds": round(total, 2)})
    return 0


def _cmd_score(args) -> int:
    from .calibration.report import read_score_csv, score_frame

    try:
        frame = read_score_csv(args.file)
        res = score_frame(frame)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid input"
        raise UsageError(f"score: {first}") from None
    rows = []
    for rule, by_label in res["rules"].items():
        for label, sc in by_label.items():
            rows.append({"rule": rule, "label": label, **sc})
    import pandas as pd

    table = pd.DataFrame(rows)
    _print_table(table[["rule", "label", "n", "prevalence", "mean_forecast", "brier",
                        "log_score", "ece", "smooth_ece", "citl", "spiegelhalter_z",
                        "auroc", "ice", "ice_baseline", "corp_mcb", "corp_dsc", "corp_unc"]])
    if "label_source" in res:
        ls = res["label_source"]
        print(f"\nlabel source (A = p, B = p_b): gap under y {ls['gap_y']:+.4f}, under z "
              f"{ls['gap_z']:+.4f}; T_omit {ls['t_omit']:+.4f}, T_fp {ls['t_fp']:+.4f}; "
              f"reverses: {ls['reverses']}; crossover prevalence "
              f"{ls['crossover_prevalence']:.3f}")
    _write_json(args.json, {"command": "score", "file": str(args.file), **res})
    return 0


def _cmd_pilot(args) -> int:
    from .calibration.pilot import simulate_pilots
    from .calibration.scenario import DEFAULT_SCENARIO, generate_scenario

    t0 = time.perf_counter()
    sim = simulate_pilots(generate_scenario(DEFAULT_SCENARIO), budget=args.budget,
                          reps=args.reps, seed=args.seed)
    dt = time.perf_counter() - t0
    summary = sim.summary()
    _print_table(summary)
    held = sim.heldout_summary()
    if held is not None:
        print()
        _print_table(held)
    print(f"{args.reps} pilots of {args.budget} attempted annotations in {dt:.2f} s")
    _write_json(args.json, {"command": "pilot", "scenario": args.scenario,
                            "budget": args.budget, "reps": args.reps, "seed": args.seed,
                            "summary": summary.to_dict(orient="records"),
                            "heldout": None if held is None else held.to_dict(orient="records"),
                            "seconds": round(dt, 3)})
    return 0


def _cmd_import_nq301(args) -> int:
    from .calibration.nq301 import SHIPPED_DIR, export_nq301

    try:
        written = export_nq301(args.dir, args.out or SHIPPED_DIR)
    except ValueError as exc:
        raise UsageError(f"import-nq301: {exc}") from None
    print(f"wrote {written['items']} system answers and {written['answers']} distinct answers "
          f"to {args.out or SHIPPED_DIR}")
    _write_json(args.json, {"command": "import-nq301", **written})
    return 0


def _parser() -> _Parser:
    from .store import DEFAULT_DB
    from .testbed.config import DEFAULT_SEEDS

    p = _Parser(prog="python -m core", description="Arbiter command line")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, required=True)
    json_help = "also write the result as (strict) JSON here"
    boot = _int_range(MIN_BOOTSTRAP, MAX_BOOTSTRAP)
    boot_help = f"bootstrap replicates, {MIN_BOOTSTRAP} to {MAX_BOOTSTRAP} (default %(default)s)"

    b = sub.add_parser("build", help="generate the seed-000 testbed into a DuckDB store")
    b.add_argument("--db", type=_store_to_write, default=str(DEFAULT_DB),
                   help="store path (default %(default)s)")
    b.add_argument("--seeds", type=_int_range(0, MAX_SEED), nargs="+",
                   default=list(DEFAULT_SEEDS), help=f"distinct seeds in [0, {MAX_SEED}]")
    b.add_argument("--personas-per-difficulty", type=_int_range(MIN_PERSONAS, MAX_PERSONAS),
                   default=160, help=f"{MIN_PERSONAS} to {MAX_PERSONAS} (default %(default)s)")
    b.add_argument("--bias-scale", type=_finite_float(0.0, MAX_SCALE), default=1.0,
                   help=f"0 to {MAX_SCALE:g} (default %(default)s)")
    b.add_argument("--dropout-scale", type=_finite_float(0.0, MAX_SCALE), default=1.0,
                   help=f"0 to {MAX_SCALE:g} (default %(default)s)")
    b.add_argument("--json", type=_json_out, help=json_help)
    b.set_defaults(func=_cmd_build)

    i = sub.add_parser("import-release", help="import the authors' release layout")
    i.add_argument("dir", type=_existing_dir,
                   help="release root (with benchmark/) or a benchmark/seeds/<seed> folder")
    i.add_argument("--db", type=_store_to_write, required=True, help="store path to write")
    i.add_argument("--json", type=_json_out, help=json_help)
    i.set_defaults(func=_cmd_import)

    a = sub.add_parser("audit", help="recompute GT in Python and SQL and compare")
    a.add_argument("--db", type=_store_to_read, default=str(DEFAULT_DB),
                   help="existing store (opened read-only; default %(default)s)")
    a.add_argument("--json", type=_json_out, help=json_help)
    a.set_defaults(func=_cmd_audit)

    e = sub.add_parser("evaluate", help="fit, calibrate and score every resolver on a store")
    e.add_argument("--db", type=_store_to_read, default=str(DEFAULT_DB),
                   help="existing store; its predictions cache is updated (default %(default)s)")
    e.add_argument("--input", choices=("readout", "extracted"), default="readout",
                   help="test atoms: direct readout (mu*) or extracted (mixed mode)")
    e.add_argument("--bootstrap", type=boot, default=2000, help=boot_help)
    e.add_argument("--json", type=_json_out, help=json_help)
    e.set_defaults(func=_cmd_evaluate)

    r = sub.add_parser("reproduce", help="every seed-000 table beside the paper's numbers")
    r.add_argument("--bootstrap", type=boot, default=2000, help=boot_help)
    r.add_argument("--no-robustness", action="store_true",
                   help="skip the perturbation grid, noise, train-size and transfer tables")
    r.add_argument("--workers", type=_int_range(1, MAX_WORKERS), default=2,
                   help=f"processes for the grid and ablation, 1 to {MAX_WORKERS} (default 2)")
    r.add_argument("--json", type=_json_out, help=json_help)
    r.set_defaults(func=_cmd_reproduce)

    nq = sub.add_parser("import-nq301", help="re-derive the shipped NQ-open files (seed 003)")
    nq.add_argument("dir", type=_existing_dir, help="the nq301-openqa-eval release (with data/)")
    nq.add_argument("--out", type=_out_dir, help="output folder (default data/nq301)")
    nq.add_argument("--json", type=_json_out, help=json_help)
    nq.set_defaults(func=_cmd_import_nq301)

    sc = sub.add_parser("score", help="every score and decomposition of a CSV of forecasts")
    sc.add_argument("file", type=_existing_file,
                    help="CSV with columns p, y [, z, p_b, cluster, weight]")
    sc.add_argument("--json", type=_json_out, help=json_help)
    sc.set_defaults(func=_cmd_score)

    pi = sub.add_parser("pilot", help="simulate human pilots on a seed-003 scenario")
    pi.add_argument("--scenario", choices=("default",), default="default")
    pi.add_argument("--budget", type=_int_range(MIN_BUDGET, MAX_BUDGET), default=50,
                    help=f"attempted annotations per pilot, {MIN_BUDGET} to {MAX_BUDGET}")
    pi.add_argument("--reps", type=_int_range(1, MAX_REPS), default=5000,
                    help=f"simulated pilots, 1 to {MAX_REPS} (default %(default)s)")
    pi.add_argument("--seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"random seed in [0, {MAX_SEED}]")
    pi.add_argument("--json", type=_json_out, help=json_help)
    pi.set_defaults(func=_cmd_pilot)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .store import StoreError

    try:
        args = _parser().parse_args(argv)
        return args.func(args)
    except (UsageError, StoreError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {first}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: one line unless debugging
        if os.environ.get("ARBITER_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: unexpected {type(exc).__name__}: {first} (set ARBITER_DEBUG=1 for a "
              "traceback)", file=sys.stderr)
        return 1
