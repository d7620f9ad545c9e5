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
    from .store import connect, load_atoms, load_testbed, write_predictions
    from .testbed.labels import ground_truth_codes

    con = connect(args.db, read_only=False)
    try:
        tb = load_testbed(con)
        gt, _ = ground_truth_codes(tb)
        mu = load_atoms(con, kind="readout")
        test_mu = load_atoms(con, kind="extracted") if args.input == "extracted" else mu
        runs = []
        for seed in tb.personas["seed"].unique():
            m = (tb.personas["seed"] == seed).to_numpy()
            personas = tb.personas[m].reset_index(drop=True)
            counts = personas["split"].value_counts()
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
            runs.append(run_seed(mu[m], gt[m], personas, test_atoms=test_mu[test]))
        main = T.main_table(runs, b=args.bootstrap)
        sel = T.selective_table(runs)
        config = {"db": str(args.db), "input": args.input, "seeds": [r.seed for r in runs]}
        run_id = hashlib.sha256(repr(sorted(config.items())).encode()).hexdigest()[:12]
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

    if args.bootstrap < 100:
        raise UsageError("reproduce: --bootstrap must be at least 100")
    if not 1 <= args.workers <= 16:
        raise UsageError("reproduce: --workers must be between 1 and 16")
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
        raise UsageError(f"score: {exc}") from None
    rows = []
    for rule, by_label in res["rules"].items():
        for label, sc in by_label.items():
            rows.append({"rule": rule, "label": label, **{k: v for k, v in sc.items()
                                                         if k != "murphy"}})
    import pandas as pd

    table = pd.DataFrame(rows)
    _print_table(table[["rule", "label", "n", "prevalence", "mean_forecast", "brier",
                        "log_score", "ece_10", "smooth_ece", "citl", "spiegelhalter_z",
                        "auroc", "corp_mcb", "corp_dsc", "corp_unc"]])
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

    if args.scenario != "default":
        raise UsageError(f"pilot: unknown scenario {args.scenario!r} (available: default)")
    if not 4 <= args.budget <= 259:
        raise UsageError("pilot: --budget must be between 4 and 259 annotations")
    if not 1 <= args.reps <= 100_000:
        raise UsageError("pilot: --reps must be between 1 and 100000")
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

    if not Path(args.dir).is_dir():
        raise UsageError(f"import-nq301: {args.dir} is not a directory")
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

    e = sub.add_parser("evaluate", help="fit, calibrate and score every resolver on a store")
    e.add_argument("--db", default=str(DEFAULT_DB))
    e.add_argument("--input", choices=("readout", "extracted"), default="readout",
                   help="test atoms: direct readout (mu*) or extracted (mixed mode)")
    e.add_argument("--bootstrap", type=int, default=2000, help="bootstrap replicates")
    e.add_argument("--json")
    e.set_defaults(func=_cmd_evaluate)

    r = sub.add_parser("reproduce", help="every seed-000 table beside the paper's numbers")
    r.add_argument("--bootstrap", type=int, default=2000)
    r.add_argument("--no-robustness", action="store_true",
                   help="skip the perturbation grid, noise, train-size and transfer tables")
    r.add_argument("--workers", type=int, default=2,
                   help="processes for the grid and ablation (default 2)")
    r.add_argument("--json")
    r.set_defaults(func=_cmd_reproduce)

    nq = sub.add_parser("import-nq301", help="re-derive the shipped NQ-open files (seed 003)")
    nq.add_argument("dir", help="the nq301-openqa-eval release (with data/)")
    nq.add_argument("--out", help="output folder (default data/nq301)")
    nq.add_argument("--json")
    nq.set_defaults(func=_cmd_import_nq301)

    sc = sub.add_parser("score", help="every score and decomposition of a CSV of forecasts")
    sc.add_argument("file", help="CSV with columns p, y [, z, p_b, cluster, weight]")
    sc.add_argument("--json")
    sc.set_defaults(func=_cmd_score)

    pi = sub.add_parser("pilot", help="simulate human pilots on a seed-003 scenario")
    pi.add_argument("--scenario", default="default")
    pi.add_argument("--budget", type=int, default=50, help="attempted annotations per pilot")
    pi.add_argument("--reps", type=int, default=5000)
    pi.add_argument("--seed", type=int, default=0)
    pi.add_argument("--json")
    pi.set_defaults(func=_cmd_pilot)
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
