"""Command line: ``python -m core <command>`` (the design card §4).

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
    """Raise unless the nearest existing ancestor of ``folder`` is a writable directory.

    Writability is probed by creating (and removing) a temporary file there: ``os.access``
    says yes to root everywhere, also under ``/proc`` (issue 20 point 7: ``build --json
    /proc/x/y.json`` ran the whole build before it refused the argument).
    """
    import tempfile

    try:
        ancestor = folder
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise argparse.ArgumentTypeError(f"cannot write {target}: {ancestor} is not a "
                                             "directory")
        with tempfile.TemporaryFile(dir=ancestor):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write {target}: "
                                         f"{exc.strerror or type(exc).__name__}") from None


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
    try:
        if p.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a directory")
        if p.exists() and not os.access(p, os.W_OK):
            raise argparse.ArgumentTypeError(f"{text} is not writable")
    except OSError as exc:  # a name too long for the file system, say
        raise argparse.ArgumentTypeError(f"cannot write {text}: "
                                         f"{exc.strerror or type(exc).__name__}") from None
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
    from .build import build_store
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
    from .prose.compare import release_renders
    from .prose.tables import release_prose_tables
    from .store import RELEASE_EXTRACTOR, write_store
    from .testbed.importer import ReleaseFormatError, load_release

    try:
        rel = load_release(args.dir)
    except ReleaseFormatError as exc:
        raise UsageError(f"import-release: {exc}") from None
    personas = rel.testbed.personas
    docs = {(int(seed), pid): text for seed in personas["seed"].unique()
            for pid, text in release_renders(args.dir,
                                             personas[personas["seed"] == seed]).items()}
    prose = release_prose_tables(docs)
    info = write_store(args.db, rel.testbed, origin=f"release:{Path(args.dir).resolve()}",
                       config={"release": str(Path(args.dir).resolve())},
                       reference_labels=rel.reference_labels,
                       extracted_atoms=rel.extracted_atoms, extractor=RELEASE_EXTRACTOR,
                       renders=prose.renders, render_lines=prose.render_lines,
                       llm_answers=rel.llm_answers)
    for note in rel.skipped:
        print(f"note: {note}", file=sys.stderr)
    print(f"imported {info.n_personas} personas into {info.path}: "
          f"{len(rel.reference_labels)} reference labels, {len(rel.extracted_atoms)} extracted "
          f"atoms, {len(rel.llm_answers)} LLM answers, {len(docs)} NL renders")
    _write_json(args.json, {"command": "import-release", "db": info.path,
                            "personas": info.n_personas,
                            "reference_labels": len(rel.reference_labels),
                            "extracted_atoms": len(rel.extracted_atoms),
                            "llm_answers": len(rel.llm_answers), "renders": len(docs),
                            "skipped": rel.skipped})
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
    from .evaluation.run import predictions_frame, run_seeds, seed_rows
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
    try:  # every check before any fitting
        seeds = seed_rows(tb.personas)
    except ValueError as exc:
        raise UsageError(f"evaluate: {exc}; resolvers need train, calibration and test "
                         "splits") from None
    test = (tb.personas["split"] == "test").to_numpy()
    for seed, m in seeds if args.input == "extracted" else ():
        lacking = int((~(test_mu[m & test] >= 0).any(axis=(1, 2))).sum())
        if lacking:
            raise UsageError(f"evaluate: {lacking} test personas of seed {seed} have no "
                             "extracted atoms (import a release that has them)")
    runs = run_seeds(mu, gt, tb.personas, test_atoms=test_mu)
    main = T.main_table(runs, b=args.bootstrap, input=args.input)
    sel = T.selective_table(runs, input=args.input)
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
    print("paper: the paper's " + ("μ̂ column (GPT-5.4 extracted test atoms, mixed mode; "
                                   "DSNBF 80.3)" if args.input == "extracted"
                                   else "μ* column (direct readout; DSNBF 82.3)"))
    _fmt_table(main, ["method", "accuracy", "ci_low", "ci_high", "paper", "delta_paper"])
    print()
    _fmt_table(sel, ["method", "selective_accuracy", "coverage", "f05", "paper_selective",
                     "paper_coverage"])
    _write_json(args.json, {"command": "evaluate", "run_id": run_id, "input": args.input,
                            "main": main.to_dict(orient="records"),
                            "selective": sel.to_dict(orient="records")})
    return 0


def _cmd_reproduce(args) -> int:
    import contextlib
    import importlib.util

    from .sweep.executors import make_executor  # light: no pandas, no core.sweep.cell yet
    from .testbed.config import TestbedConfig

    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler applies only to --executor dask")
    if args.executor != "local" and importlib.util.find_spec("distributed") is None:
        from .sweep.cli import DASK_PIN

        raise UsageError(f"--executor {args.executor} needs Dask: pip install '{DASK_PIN}'")
    t0 = time.perf_counter()
    config = TestbedConfig()
    # The grids' workers start first, so they import core while this process imports the
    # evaluation modules (about 2 s each, on the two cores at once).
    ex = (make_executor(args.executor, workers=args.workers, scheduler=args.scheduler)
          if not args.no_robustness else contextlib.nullcontext())
    try:
        with ex:
            from .evaluation.reproduce import reproduce
            from .testbed.generate import generate

            def load():  # run by reproduce, beside the robustness cells on the engine
                # The testbed in memory: a store's round trip restores every array exactly
                # (tests/test_store.py); building one (prose, fusion tables) took 15 s of
                # the driver's CPU that the grids' workers needed.
                return generate(config)

            res = reproduce(load, config, n_boot=args.bootstrap,
                            robustness=not args.no_robustness,
                            workers=args.workers, executor=None if args.no_robustness else ex,
                            progress=lambda m: print(f"... {m}", file=sys.stderr))
    except OSError as exc:  # a Dask scheduler that cannot be reached
        raise UsageError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
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
    notes = res["notes"]
    print("\nnotes:")
    for rec in notes["not_reported"]:
        print(f"  spiegelhalter_z of {rec['rule']} under {rec['label']} is not reported (NaN): "
              f"{rec['reason']}.")
    print(f"  {notes['spiegelhalter_z']}")
    print(f"  {notes['log_score']}")
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
    from .calibration.scenario import generate_scenario
    from .calibration.scenarios import scenario_named

    t0 = time.perf_counter()
    sim = simulate_pilots(generate_scenario(scenario_named(args.scenario)), budget=args.budget,
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


def _noise_spec(text: str) -> str:
    """argparse ``type``: an extraction-noise profile (``uniform:EPS``, ``paper``, ``gemini``,
    ``measured``)."""
    from .prose.noise import parse_profile

    if text == "measured":
        return text
    try:
        parse_profile(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _prose_testbed(args, command: str):
    """The testbed a prose command works on: an imported release or a generated one."""
    if args.release:
        from .testbed.importer import ReleaseFormatError, load_release

        try:
            rel = load_release(args.release)
        except ReleaseFormatError as exc:
            raise UsageError(f"{command}: {exc}") from None
        if rel.testbed.n == 0:
            raise UsageError(f"{command}: {args.release} holds no persona")
        return rel.testbed, f"release {args.release}", rel
    from .testbed.config import TestbedConfig
    from .testbed.generate import generate

    try:
        config = TestbedConfig(seeds=tuple(args.seeds),
                               personas_per_difficulty=args.personas_per_difficulty)
    except ValueError as exc:
        raise UsageError(f"{command}: {exc}") from None
    return generate(config), f"seeds {', '.join(map(str, config.seeds))}", None


def _write_files(folder: str, files: dict[str, str], command: str) -> None:
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (Path(folder) / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{command}: cannot write --out {folder}: "
                         f"{exc.strerror or exc}") from None


def _cmd_render(args) -> int:
    from .prose.compare import compare_renders, release_renders
    from .prose.render import render

    tb, origin, rel = _prose_testbed(args, "render")
    t0 = time.perf_counter()
    r = render(tb, activity_names=rel.activity_names if rel is not None else None)
    dt = time.perf_counter() - t0
    chars = sum(map(len, r.texts))
    print(f"rendered {len(r.texts)} personas ({origin}): {chars} characters, "
          f"{len(r.frames)} sentence fields, in {dt:.3f} s")
    if args.out:
        _write_files(args.out, {f"{p}.md": t for p, t in zip(r.persona_ids, r.texts,
                                                              strict=True)}, "render")
        print(f"wrote {len(r.texts)} documents to {args.out}")
    comparison = None
    if args.release:
        theirs = release_renders(args.release, tb.personas)
        results = [compare_renders(r.text(p), t) for p, t in theirs.items()]
        if results:
            import pandas as pd

            table = (pd.concat([c.table for c in results])
                     .groupby("section", sort=False, as_index=False)
                     [["shared", "identical", "only_ours", "only_theirs"]].sum())
            table["share_identical"] = table["identical"] / table["shared"]
            share = table["identical"].sum() / table["shared"].sum()
            print(f"\nagainst the released render of {len(results)} persona(s): "
                  f"{100 * share:.2f}% of the lines stating the same (day, field) are identical")
            _print_table(table)
            comparison = {"personas": len(results),
                          "headings_equal": all(c.headings_equal for c in results),
                          "share_identical": share, "by_section": table.to_dict(orient="records"),
                          "differences": pd.concat([c.differences for c in results])
                          .to_dict(orient="records")}
        else:
            print("the release has no nl_renders for these personas: nothing to compare")
    _write_json(args.json, {"command": "render", "origin": origin, "personas": len(r.texts),
                            "characters": chars, "sentence_fields": len(r.frames),
                            "seconds": round(dt, 4), "out": args.out,
                            "comparison": comparison})
    return 0


def _faithfulness_table(f, label: str):
    return f.by_source[["source", "rate"]].rename(columns={"rate": label})


def _cmd_extract(args) -> int:
    import numpy as np

    from .prose.compare import release_renders
    from .prose.extract import extract
    from .prose.faithfulness import faithfulness
    from .prose.noise import apply_noise, parse_profile
    from .prose.render import render
    from .testbed.questions import QIDS, SOURCES, question
    from .testbed.readout import readout

    tb, origin, rel = _prose_testbed(args, "extract")
    ids = [str(p) for p in tb.personas["persona_id"]]
    theirs = release_renders(args.release, tb.personas) if args.release else {}
    if theirs and len(theirs) == len(ids):
        texts, prose = [theirs[p] for p in ids], "the released render"
    else:
        names = rel.activity_names if rel is not None else None
        texts, prose = list(render(tb, activity_names=names).texts), "our render"
    t0 = time.perf_counter()
    ex = extract(texts, persona_ids=ids)
    dt = time.perf_counter() - t0
    mu = readout(tb)
    atoms = ex.atoms
    if args.noise:
        profile = parse_profile(args.noise,
                                measured=faithfulness(atoms, mu, cells="non_null"))
        atoms = apply_noise(atoms, profile, np.random.default_rng(args.noise_seed))
    f = faithfulness(atoms, mu, persona_ids=ids)
    noise = f", noise {args.noise} (seed {args.noise_seed})" if args.noise else ""
    print(f"extracted {len(ids)} personas ({origin}) from {prose} in {dt:.2f} s{noise}")
    print(f"P(mu_hat = mu*) over all {f.n} cells: {100 * f.overall:.2f}%")
    _print_table(_faithfulness_table(f, "rate"))
    if args.out:
        def grid(i):
            return {q: {s: (None if atoms[i, j, k] < 0
                            else question(q).labels[atoms[i, j, k]])
                        for k, s in enumerate(SOURCES)} for j, q in enumerate(QIDS)}

        _write_files(args.out, {f"{p}.json": json.dumps({"persona": p, "extraction": grid(i)},
                                                        indent=1) + "\n"
                                for i, p in enumerate(ids)}, "extract")
        print(f"wrote {len(ids)} atom files to {args.out}")
    _write_json(args.json, {"command": "extract", "origin": origin, "prose": prose,
                            "noise": args.noise, "noise_seed": args.noise_seed,
                            "seconds": round(dt, 3), "faithfulness": f.to_dict()})
    return 0


def _cmd_faithfulness(args) -> int:
    import pandas as pd

    from .evaluation.paper import PAPER_EXTRACTION
    from .prose.extract import extract
    from .prose.faithfulness import atoms_from_frame, faithfulness
    from .prose.render import render
    from .testbed.readout import readout

    tb, origin, rel = _prose_testbed(args, "faithfulness")
    ids = [str(p) for p in tb.personas["persona_id"]]
    names = rel.activity_names if rel is not None else None
    r = render(tb, activity_names=names)
    mu = readout(tb)
    ours = faithfulness(extract(r.texts, persona_ids=ids).atoms, mu, persona_ids=ids,
                        cells=args.cells)
    src = _faithfulness_table(ours, "ours")
    que = ours.by_question[["question_id", "rate"]].rename(columns={"rate": "ours"})
    released = None
    if rel is not None and len(rel.extracted_atoms):
        keep = tb.personas["persona_id"].isin(set(rel.extracted_atoms["persona_id"])).to_numpy()
        kept = [p for p, k in zip(ids, keep, strict=True) if k]
        released = faithfulness(atoms_from_frame(rel.extracted_atoms, kept), mu[keep],
                                persona_ids=kept, cells=args.cells)
        src["released"] = released.by_source["rate"].to_numpy()
        que["released"] = released.by_question["rate"].to_numpy()
    robust = None
    if args.paraphrase is not None:
        from .prose.paraphrase import wording_robustness

        robust = wording_robustness(tb, rate=args.paraphrase, seed=args.paraphrase_seed,
                                    cells=args.cells, activity_names=names)
        src["paraphrased"] = robust.by_source["paraphrased"].to_numpy()
        que["paraphrased"] = robust.by_question["paraphrased"].to_numpy()
    src["paper"] = [PAPER_EXTRACTION["by_source"][s] / 100 for s in src["source"]]
    que["paper"] = [PAPER_EXTRACTION["by_question"].get(q, float("nan")) / 100
                    for q in que["question_id"]]
    print(f"extraction faithfulness P(mu_hat = mu*), {origin}, cells: {args.cells}")
    print(f"ours: {100 * ours.overall:.2f}% of {ours.n} cells ({len(ours.misses)} misses); "
          "a round trip of our own templates, not comparable with an LLM's figure")
    if robust is not None:
        done = ", ".join(f"{r.kind} {r.rewritten}/{r.eligible}"
                         for r in robust.rewrites.itertuples(index=False))
        print(f"paraphrased (rate {args.paraphrase:g} per kind, seed {args.paraphrase_seed}; "
              f"lines rewritten: {done}): {100 * robust.paraphrased.overall:.2f}% of "
              f"{robust.paraphrased.n} cells; of the misses {robust.null_misses} null (unread "
              f"lines, {robust.unread_lines}) and {robust.wrong_misses} a wrong label; "
              f"{robust.partial_atoms} atoms read around their unread days")
    if released is not None:
        print(f"released GPT-5.4 atoms: {100 * released.overall:.2f}% of {released.n} cells "
              f"({released.n // 90} persona(s) with atoms)")
    print(f"paper (GPT-5.4, all cells of the test split): {PAPER_EXTRACTION['overall']:.2f}%\n")
    _print_table(src)
    print()
    _print_table(que)
    _write_json(args.json, {"command": "faithfulness", "origin": origin, "cells": args.cells,
                            "ours": ours.to_dict(),
                            "released": None if released is None else released.to_dict(),
                            "paraphrased": None if robust is None else robust.to_dict(),
                            "paper": PAPER_EXTRACTION,
                            "by_source": src.to_dict(orient="records"),
                            "by_question": pd.DataFrame(que).to_dict(orient="records")})
    return 0


def _iso_date(text: str):
    """argparse ``type``: an ISO date (YYYY-MM-DD)."""
    import datetime as dt

    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an ISO date (YYYY-MM-DD), got {_shown(text)}") from None


def _records_world(args):
    """Load the seed-002 world and run the checks that precede everything (§4.1, §9).

    Returns ``(world, failures)``: the world checks' failures, then the completeness check's
    message, as strings (empty when both pass)."""
    from .records.checks import world_failures
    from .records.render import CompletenessError, check_completeness
    from .records.world import load_world

    try:
        world = load_world(args.world)
    except ValueError as exc:
        raise UsageError(f"records: {str(exc).splitlines()[0]}") from None
    failures = [str(f) for f in world_failures(world, today=args.today)]
    if not failures:
        try:
            check_completeness(world, today=args.today)
        except CompletenessError as exc:
            failures.append(f"[completeness] {exc}")
    return world, failures


def _records_abort(failures) -> int:
    print(f"error: the records world fails {len(failures)} check(s); run `python -m core "
          "records check`:", file=sys.stderr)
    for f in failures:
        print(f"  {f}", file=sys.stderr)
    return 1


def _records_items(world, args):
    from .records.items import ItemCheckError, build_items

    try:
        return build_items(world, today=args.today)
    except ItemCheckError as exc:
        raise UsageError(f"records: {len(exc.problems)} item problem(s), first: "
                         f"{exc.problems[0]}") from None


def _cmd_records_check(args) -> int:
    import pandas as pd

    from .records.checks import CHECKS, world_failures
    from .records.render import completeness
    from .records.world import load_world

    try:
        world = load_world(args.world)
    except ValueError as exc:
        raise UsageError(f"records: {str(exc).splitlines()[0]}") from None
    failures = world_failures(world, today=args.today)
    rows = [{"check": c, "ok": not any(f.check == c for f in failures),
             "failures": sum(f.check == c for f in failures)} for c in CHECKS]
    rep = None if failures else completeness(world, today=args.today)
    if rep is not None:
        rows.append({"check": "completeness", "ok": rep.ok,
                     "failures": int((~rep.table["ok"]).sum())})
    _print_table(pd.DataFrame(rows))
    for f in failures:
        print(f"  {f}")
    if rep is not None:
        print()
        _print_table(rep.table[["arm", "name", "complete_expected", "chars", "carried",
                                "missing", "wrong", "ok"]])
    ok = not failures and rep is not None and rep.ok
    _write_json(args.json, {"command": "records check", "today": args.today.isoformat(),
                            "ok": ok, "checks": rows,
                            "failures": [vars(f) for f in failures],
                            "arms": None if rep is None else rep.table.to_dict(orient="records"),
                            "missing": None if rep is None else rep.missing,
                            "wrong": None if rep is None else rep.wrong})
    return 0 if ok else 1


def _cmd_records_items(args) -> int:
    import pandas as pd

    world, failures = _records_world(args)
    if failures:
        return _records_abort(failures)
    items = _records_items(world, args)

    def shown(v):
        return "; ".join(v) if isinstance(v, tuple) else v

    rows = [{"item_id": i.item_id, "family": i.family, "as_of": i.as_of.isoformat(),
             "kind": i.kind, "question": i.question, "reference": shown(i.reference),
             "record_ids": list(i.record_ids), "present_value": shown(i.present_value),
             "present_values": [shown(v) for v in i.present_values], "stale": i.stale}
            for i in items]
    view = pd.DataFrame(rows)[["item_id", "family", "as_of", "reference"]]
    view = view.assign(reference=view["reference"].map(lambda v: "(decline)" if v is None
                                                       else v))
    _print_table(view)
    _write_json(args.json, {"command": "records items", "today": args.today.isoformat(),
                            "items": rows})
    return 0


def _cmd_records_render(args) -> int:
    from .records.render import ARM_NAMES, render

    world, failures = _records_world(args)
    if failures:
        return _records_abort(failures)
    text = render(world, args.arm, today=args.today)
    print(text)
    _write_json(args.json, {"command": "records render", "arm": args.arm,
                            "name": ARM_NAMES[args.arm], "chars": len(text), "text": text})
    return 0


def _records_arms(args, allowed: tuple[str, ...], track: str) -> tuple[str, ...]:
    """``--arms`` for ``track`` (default ``allowed``); bad input if it names another."""
    arms = tuple(dict.fromkeys(args.arms)) if args.arms else allowed
    bad = [a for a in arms if a not in allowed]
    if bad:
        raise UsageError(f"records read: the {track} track has arms {', '.join(allowed)}, "
                         f"got {bad[0]}")
    return arms


def _write_lines(path: str, rows, what: str) -> None:
    """``rows`` as JSON Lines (:func:`core.records.inputs.dump_lines`, what the readers read)."""
    from .records.inputs import dump_lines

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(dump_lines(rows))
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


def _cmd_records_read(args) -> int:
    from collections import Counter

    from .records.disclosure import load_disclosure, reference_decisions
    from .records.readers import read
    from .records.render import ARMS
    from .records.writeback import WRITEBACK_ARMS, load_updates, reference_writebacks

    track = args.track
    if track == "disclosure" and args.arms:
        raise UsageError("records read: the disclosure track has no arms (its conditions are "
                         "none, prose and structured)")
    arms = () if track == "disclosure" else _records_arms(
        args, ARMS if track == "items" else WRITEBACK_ARMS, track)
    world, failures = _records_world(args)
    if failures:
        return _records_abort(failures)
    if track == "items":
        items = _records_items(world, args)
        rows = read(world, items, arms=arms, replicates=args.replicates, today=args.today)
        what = f"{len(items)} items x {len(arms)} arms x {args.replicates} replicates"
        by, declined = "arm", Counter(r["arm"] for r in rows if r["declined"])
    elif track == "disclosure":
        requesters, infos = load_disclosure()
        rows = reference_decisions(infos, requesters, replicates=args.replicates)
        what = (f"{len(infos)} items x {len(requesters)} requesters x 3 conditions x "
                f"{args.replicates} replicates")
        by, declined = "condition", Counter(r["condition"] for r in rows if not r["release"])
    else:
        updates = load_updates()
        rows = reference_writebacks(world.known_on(args.today), updates, arms=arms,
                                    replicates=args.replicates)
        what = f"{len(updates)} updates x {len(arms)} arms x {args.replicates} replicates"
        by, declined = "arm", Counter(r["arm"] for r in rows if not r["closes_record_ids"])
    _write_lines(args.out, rows, "--out")
    per = Counter(r[by] for r in rows)
    print(f"wrote {len(rows)} {track} lines ({what}) to {args.out}")
    word = {"items": "declined", "disclosure": "withheld", "writeback": "closing nothing"}
    for k, n in per.items():
        print(f"  {by} {k}: {n} lines, {declined[k]} {word[track]}")
    _write_json(args.json, {"command": "records read", "track": track, "out": str(args.out),
                            "lines": len(rows), "responses": len(rows), f"per_{by}": dict(per),
                            word[track].replace(" ", "_"): {k: declined[k] for k in per}})
    return 0


def _records_read_file(args):
    """The file of ``records score``, read by its track's contract before any other work
    (bad input: exit 2 with one line listing the malformed lines)."""
    from .records.disclosure import read_decisions
    from .records.score import read_responses
    from .records.writeback import read_writebacks

    reader = {"items": read_responses, "disclosure": read_decisions,
              "writeback": read_writebacks}[args.track]
    try:
        return reader(args.file, name=str(args.file))
    except ValueError as exc:
        raise UsageError(f"records score: {str(exc).splitlines()[0]}") from None


def _cmd_records_score(args) -> int:
    pairs = _records_read_file(args)
    world, failures = _records_world(args)
    if failures:
        return _records_abort(failures)
    if args.track == "disclosure":
        return _records_score_disclosure(args, pairs)
    if args.track == "writeback":
        return _records_score_writeback(args, world, pairs)
    from .records.score import score_responses

    items = _records_items(world, args)
    res = score_responses(pairs, items, world, today=args.today, seed=args.seed,
                          n_boot=args.bootstrap)
    for line, item_id in res.unknown:
        print(f"note: line {line}: unknown item {item_id!r}, not scored", file=sys.stderr)
    wide = res.measures.pivot(index="measure", columns="arm", values="value").reset_index()
    _print_table(wide, floatfmt="{:.3f}")
    print()
    tests = res.sign_tests[["measure", "comparison", "families", "n_items", "n_pos", "n_neg",
                            "delta", "ci_low", "ci_high", "p_value"]].copy()
    tests["p_value"] = tests["p_value"].map("{:.2g}".format)  # 9.3e-10, not 0.000
    _print_table(tests, floatfmt="{:.3f}")
    print("M14 characters: " + ", ".join(f"{a} {n}" for a, n in res.chars.items()))
    _write_json(args.json, {"command": "records score", "track": "items",
                            "file": str(args.file), **res.to_dict()})
    return 0


def _records_score_disclosure(args, pairs) -> int:
    from .records.disclosure import load_disclosure, score_decision_file

    requesters, infos = load_disclosure()
    res = score_decision_file(pairs, infos, requesters=tuple(requesters))
    for line, info_id in res.unknown:
        print(f"note: line {line}: unknown information item {info_id!r}, not scored",
              file=sys.stderr)
    _print_table(res.table, floatfmt="{:.3f}")
    groups = res.errors.groupby(["condition", "requester", "item"], sort=False).size()
    print(f"critical errors (M11): {len(res.errors)}" + "".join(
        f"\n  {c}: {item} released to {who} ({n} replicate(s))"
        for (c, who, item), n in groups.items()))
    gaps = {c: n for c, n in res.missing.items() if n}
    if gaps:
        print("missing decisions: " + ", ".join(f"{c} {n}" for c, n in gaps.items()))
    _write_json(args.json, {"command": "records score", "track": "disclosure",
                            "file": str(args.file), **res.to_dict()})
    return 0


def _records_score_writeback(args, world, pairs) -> int:
    from .records.writeback import load_updates, score_writeback_file

    res = score_writeback_file(pairs, world.known_on(args.today), load_updates())
    for line, uid in res.unknown:
        print(f"note: line {line}: unknown update {uid!r}, not scored", file=sys.stderr)
    _print_table(res.table, floatfmt="{:.3f}")
    gaps = {a: n for a, n in res.missing.items() if n}
    if gaps:
        print("updates with no response: " + ", ".join(f"{a} {n}" for a, n in gaps.items()))
    _write_json(args.json, {"command": "records score", "track": "writeback",
                            "file": str(args.file), **res.to_dict()})
    return 0


def _cmd_records_plan(args) -> int:
    from collections import Counter

    from .records.disclosure import load_disclosure
    from .records.protocol import SYSTEM_PROMPT, plan_calls
    from .records.writeback import load_updates

    world, failures = _records_world(args)
    if failures:
        return _records_abort(failures)
    items = _records_items(world, args)
    requesters, infos = load_disclosure()
    tracks = tuple(dict.fromkeys(args.tracks))
    calls = plan_calls(world, items, infos=infos, requesters=requesters,
                       updates=load_updates(), seed=args.seed, replicates=args.replicates,
                       tracks=tracks, today=args.today)
    _write_lines(args.out, calls, "--out")
    per = Counter(c["track"] for c in calls)
    print(f"wrote {len(calls)} calls in random order (seed {args.seed}) to {args.out}: "
          + ", ".join(f"{t} {n}" for t, n in per.items()))
    print(f"system prompt (every call): {SYSTEM_PROMPT}")
    _write_json(args.json, {"command": "records plan", "out": str(args.out),
                            "seed": args.seed, "replicates": args.replicates,
                            "calls": len(calls), "per_track": dict(per),
                            "system": SYSTEM_PROMPT,
                            "order": [c["call_id"] for c in calls]})
    return 0


def _add_records_parser(sub, *, json_help: str, boot, boot_help: str) -> None:
    """``python -m core records check | items | render ARM | read | score FILE | plan``
    (seed 002)."""
    from .records.protocol import TRACKS
    from .records.render import ARMS
    from .records.world import RUN_DATE

    common = _Parser(add_help=False)
    common.add_argument("--world", type=_existing_file, default=None,
                        help="world file (default data/records/world.json)")
    common.add_argument("--today", type=_iso_date, default=RUN_DATE,
                        help="the run date, YYYY-MM-DD (default %(default)s)")
    common.add_argument("--json", type=_json_out, help=json_help)
    track_help = ("items: answers to the 43 items (M1-M8); disclosure: release decisions "
                  "(M9-M11); writeback: recorded updates (M12-M13) (default %(default)s)")
    rec = sub.add_parser("records", help=HEAVY_HELP["records"])
    rsub = rec.add_subparsers(dest="records_command", parser_class=_Parser, required=True)
    rc = rsub.add_parser("check", parents=[common],
                         help="the world and completeness checks (exit 1 if any fails)")
    rc.set_defaults(func=_cmd_records_check)
    ri = rsub.add_parser("items", parents=[common],
                         help="the 43 items with their engine-computed references")
    ri.set_defaults(func=_cmd_records_items)
    rr = rsub.add_parser("render", parents=[common], help="the text of one arm (A-F)")
    rr.add_argument("arm", choices=ARMS)
    rr.set_defaults(func=_cmd_records_render)
    rd = rsub.add_parser("read", parents=[common],
                         help="run the deterministic reference readers; their lines as JSONL "
                              "in the track's contract")
    rd.add_argument("--out", type=_json_out, required=True, help="JSON Lines file to write")
    rd.add_argument("--track", choices=TRACKS, default="items", help=track_help)
    rd.add_argument("--arms", nargs="+", choices=ARMS, default=None,
                    help="arms to read (default all of the track's: A-F for items, A C D "
                         "for writeback; none for disclosure)")
    rd.add_argument("--replicates", type=_int_range(1, 10), default=2,
                    help="replicates per item and arm, 1 to 10 (default %(default)s)")
    rd.set_defaults(func=_cmd_records_read)
    rs = rsub.add_parser("score", parents=[common],
                         help="score a JSONL file of a track (items: M1-M8, M14, sign tests; "
                              "disclosure: M9-M11; writeback: M12-M13)")
    rs.add_argument("file", type=_existing_file, help="one JSON object per line")
    rs.add_argument("--track", choices=TRACKS, default="items", help=track_help)
    rs.add_argument("--bootstrap", type=boot, default=2000,
                    help=boot_help + "; items track only")
    rs.add_argument("--seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"bootstrap seed in [0, {MAX_SEED}]; items track only")
    rs.set_defaults(func=_cmd_records_score)
    rp = rsub.add_parser("plan", parents=[common],
                         help="a randomised call plan with every prompt, for running a model "
                              "elsewhere (seed 002 section 9; docs/records.md)")
    rp.add_argument("--out", type=_json_out, required=True, help="JSON Lines file to write")
    rp.add_argument("--tracks", nargs="+", choices=TRACKS, default=list(TRACKS),
                    help="tracks to plan (default all three, shuffled together)")
    rp.add_argument("--replicates", type=_int_range(1, 10), default=2,
                    help="replicates per cell, 1 to 10 (default %(default)s)")
    rp.add_argument("--seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"seed of the call order in [0, {MAX_SEED}] (default 0)")
    rp.set_defaults(func=_cmd_records_plan)


def _llm_documents(args):
    """The personas an ``llm`` command reads: (documents, origin)."""
    from .llm.run import documents_of

    texts = None
    if args.db:
        from .store import connect, load_testbed

        con = connect(args.db, read_only=True)
        try:
            tb = load_testbed(con)
        finally:
            con.close()
        origin = f"store {args.db}"
    else:
        tb, origin, _ = _prose_testbed(args, f"llm {args.llm_command}")
        if args.release:
            from .prose.compare import release_renders

            texts = release_renders(args.release, tb.personas)
    docs = documents_of(tb, texts=texts)
    if args.persona:
        known = {d.persona_id for d in docs}
        unknown = sorted(set(args.persona) - known)
        if unknown:
            raise UsageError(f"llm {args.llm_command}: unknown persona {_shown(unknown[0])}")
        docs = [d for d in docs if d.persona_id in set(args.persona)]
    return (docs[: args.limit] if args.limit else docs), origin


def _cmd_llm(args) -> int:
    from .llm.cache import CallCache
    from .llm.client import ChatClient, ConfigError, endpoint_from_env
    from .llm.run import Progress, run_llm, write_release, write_to_store

    task = args.llm_command
    try:
        endpoint = endpoint_from_env(offline=args.offline)
    except ConfigError as exc:
        raise UsageError(f"llm {task}: {exc}") from None
    docs, origin = _llm_documents(args)
    client = None if args.offline else ChatClient(endpoint, timeout=args.timeout,
                                                  retries=args.retries)
    t0 = time.perf_counter()
    result = run_llm(task, docs, model=endpoint.model, cache=CallCache(args.cache),
                     client=client, offline=args.offline, concurrency=args.concurrency,
                     progress=Progress(len(docs), label=f"llm {task}", enabled=not args.quiet))
    dt = time.perf_counter() - t0
    where = "offline replay" if args.offline else endpoint.shown_url()
    print(f"llm {task}: {len(docs)} personas ({origin}), model {endpoint.model} ({where}): "
          f"{len(result.outputs)} outputs, {len(result.failures)} missing; "
          f"{result.requests} requests, {result.cache_hits} cache hits, {dt:.1f} s")
    summary = result.to_dict()
    for reason, n in sorted(summary["failures_by_reason"].items()):
        print(f"  missing ({reason}): {n}")
    if args.out:
        files = write_release(result, args.out)
        print(f"wrote {len(files)} files under {args.out}")
    if args.db and result.outputs:
        from .store import connect

        con = connect(args.db, read_only=False)
        try:
            rows = write_to_store(con, result)
        finally:
            con.close()
        print(f"wrote {rows} rows into {args.db}")
    _write_json(args.json, {"command": f"llm {task}", "origin": origin,
                            "endpoint": None if args.offline else endpoint.shown_url(),
                            "offline": args.offline, "seconds": round(dt, 3),
                            "out": args.out, "db": args.db, **summary})
    return 1 if result.failures else 0


def _add_llm_parser(sub, *, json_help: str) -> None:
    """``llm extract|answer``: the optional live LLM path (seed 000 §8.6, §9.6)."""
    from .llm.cache import DEFAULT_CACHE_DIR
    from .llm.run import MAX_CONCURRENCY
    from .testbed.config import DEFAULT_SEEDS

    common = _Parser(add_help=False)
    where = common.add_mutually_exclusive_group()
    where.add_argument("--seeds", type=_int_range(0, MAX_SEED), nargs="+",
                       default=list(DEFAULT_SEEDS[:1]),
                       help="generate these distinct seeds (default %(default)s)")
    where.add_argument("--release", type=_existing_dir,
                       help="import the authors' release layout (its nl_renders if complete)")
    where.add_argument("--db", type=_store_to_read,
                       help="read the personas from this store and write the outputs into it")
    common.add_argument("--personas-per-difficulty", type=_int_range(MIN_PERSONAS, MAX_PERSONAS),
                        default=160, help="for generated seeds (default %(default)s)")
    common.add_argument("--persona", nargs="+", help="only these persona ids")
    common.add_argument("--limit", type=_int_range(1, 100_000),
                        help="only the first N personas")
    common.add_argument("--cache", type=_out_dir, default=str(DEFAULT_CACHE_DIR),
                        help="call cache folder (default data/llm_cache)")
    common.add_argument("--offline", action="store_true",
                        help="replay the cache only: a missing entry is a missing output")
    common.add_argument("--concurrency", type=_int_range(1, MAX_CONCURRENCY), default=4,
                        help=f"calls in flight, 1 to {MAX_CONCURRENCY} (default %(default)s)")
    common.add_argument("--timeout", type=_finite_float(1.0, 3600.0), default=120.0,
                        help="seconds per attempt (default %(default)s)")
    common.add_argument("--retries", type=_int_range(0, 10), default=5,
                        help="retries on 429/5xx/timeouts, 0 to 10 (default %(default)s)")
    common.add_argument("--out", type=_out_dir,
                        help="write extracted_atoms/ or method_outputs/ files here")
    common.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    common.add_argument("--json", type=_json_out, help=json_help)
    llm = sub.add_parser("llm", help=HEAVY_HELP["llm"])
    lsub = llm.add_subparsers(dest="llm_command", parser_class=_Parser, required=True)
    ex = lsub.add_parser("extract", parents=[common],
                         help="NL memory -> atoms per (question, source)")
    an = lsub.add_parser("answer", parents=[common],
                         help="NL memory -> 18 answers with would_skip (LLM-Direct)")
    for cmd in (ex, an):
        cmd.set_defaults(func=_cmd_llm)


def _decompose_arrays(args, command: str):
    """Personas, GT and μ* of ``--db`` (test rows) with ``--fit-db``'s train and calibration
    rows in their place when given, every seed checked to have the three splits."""
    import numpy as np
    import pandas as pd

    from .evaluation.cached import load_arrays
    from .store import connect, load_atoms, load_testbed, query_df, store_info

    store_info(args.db)  # a one-line StoreError unless it is an Arbiter store
    con = connect(args.db, read_only=True)
    try:
        tb = load_testbed(con)
        personas, gt, mu = load_arrays(con)
        hat = load_atoms(con, kind="extracted") if args.input == "extracted" else None
        answers = (query_df(con, "SELECT * FROM llm_answers")
                   if getattr(args, "model", None) else None)
    finally:
        con.close()
    if getattr(args, "fit_db", None):
        store_info(args.fit_db)
        con = connect(args.fit_db, read_only=True)
        try:
            fit_personas, fit_gt, fit_mu = load_arrays(con)
        finally:
            con.close()
        keep = (fit_personas["split"].isin(["train", "calibration"])
                & fit_personas["seed"].isin(personas["seed"].unique())).to_numpy()
        test = (personas["split"] == "test").to_numpy()
        personas = pd.concat([fit_personas[keep], personas[test]], ignore_index=True)
        gt, mu = np.concatenate([fit_gt[keep], gt[test]]), np.concatenate([fit_mu[keep], mu[test]])
        if hat is not None:
            hat = np.concatenate([np.full_like(fit_mu[keep], -1), hat[test]])
        tb = tb.subset(test)
    for seed in personas["seed"].unique():
        counts = personas[personas["seed"] == seed]["split"].value_counts()
        missing = [s for s in ("train", "calibration", "test") if counts.get(s, 0) == 0]
        if missing:
            raise UsageError(f"{command}: seed {seed} has no {', '.join(missing)} personas; "
                             "resolvers need train, calibration and test splits (--fit-db "
                             "can lend train and calibration personas)")
    return tb, personas, gt, mu, hat, answers


def _cmd_decompose(args) -> int:
    import numpy as np

    from .evaluation.decomposition import decompose, mixed_runs, model_correct
    from .prose.faithfulness import faithfulness
    from .prose.mixed import prose_atoms
    from .prose.noise import apply_noise, parse_profile

    b = args.model or args.b
    if args.model and (args.input != "extracted" or args.noise):
        raise UsageError("decompose: --model needs --input extracted without --noise (the "
                         "model answered on the release's own extracted atoms)")
    if b == args.a:
        raise UsageError(f"decompose: --a and --b are both {args.a!r}; pick two resolvers")
    tb, personas, gt, mu, hat, answers = _decompose_arrays(args, "decompose")
    test = (personas["split"] == "test").to_numpy()
    rng = np.random.default_rng(args.noise_seed)
    if args.input == "prose":
        hat = np.full_like(mu, -1)
        hat[test] = prose_atoms(tb, noise=args.noise, rng=rng)[
            (tb.personas["split"] == "test").to_numpy()]
    else:
        lacking = int((~(hat[test] >= 0).any(axis=(1, 2))).sum())
        if lacking:
            raise UsageError(f"decompose: {lacking} test personas have no extracted atoms "
                             "(import a release that has them, or use --input prose)")
        if args.noise:
            measured = faithfulness(hat[test], mu[test], cells="non_null")
            hat[test] = apply_noise(hat[test], parse_profile(args.noise, measured=measured),
                                    rng)
    if args.model:
        have = set(answers["model"][answers["variant"].isin(["oracle", "extracted"])])
        if args.model not in have:
            raise UsageError(f"decompose: the store has no atom-grid answers (variants oracle "
                             f"and extracted) of model {args.model!r}; it has: "
                             f"{', '.join(sorted(have)) or 'none'}")
    star, hat_runs = mixed_runs(mu, gt, personas, hat, methods=[args.a] + ([] if args.model
                                                                           else [b]))
    try:
        cells = None if not args.model else tuple(
            model_correct(answers, r, model=args.model, variant=v)
            for r, v in ((star, "oracle"), (hat_runs, "extracted")))
    except ValueError as exc:
        raise UsageError(f"decompose: {exc}") from None
    d = decompose(star, hat_runs, a=args.a, b=b, rng=np.random.default_rng(args.seed),
                  n_boot=args.bootstrap, b_cells=cells)
    noise = f", noise {args.noise} (seed {args.noise_seed})" if args.noise else ""
    print(f"A = {d.label('a')}, B = {d.label('b')}; input {args.input}{noise}; "
          f"{d.n_clusters} test personas, {d.n_instances} instances; fit and calibrated on mu*")
    _fmt_table(d.table(), ["method", "input", "accuracy", "ci_low", "ci_high", "paper"])
    print()
    for term in ("total", "resolution", "extraction", "interaction"):
        low, high = d.ci[term]
        print(f"{term:12s} {d.terms[term]:+6.2f} pp  [{low:+6.2f}, {high:+6.2f}]")
    if d.terms["total"]:
        print(f"shares: resolution {100 * d.resolution_share:.1f}%, extraction "
              f"{100 * d.extraction_share:.1f}% (the paper, DSNBF vs GPT-5.4: 81% / 19%)")
    else:
        print("shares: none (the total gap is 0)")
    print("\nSource Reachability slices (defined by mu*), %")
    _fmt_table(d.slices, ["method", "input", "full", "gt_present", "gt_absent", "n_present",
                          "n_absent", "paper_full", "paper_present", "paper_absent"])
    _write_json(args.json, {"command": "decompose", "input": args.input, "noise": args.noise,
                            "noise_seed": args.noise_seed, "seed": args.seed,
                            **d.to_dict()})
    return 0


def _cmd_noise_table(args) -> int:
    from .evaluation.decomposition import mixed_runs
    from .evaluation.noise_table import METHODS, noise_table

    args.input, args.model = "readout", None
    _tb, personas, gt, mu, _hat, _ = _decompose_arrays(args, "noise-table")
    star, _ = mixed_runs(mu, gt, personas, mu, methods=METHODS)
    nt = noise_table(star, seed=args.noise_seed)
    print(f"extraction-noise tolerance, {nt.n_seeds}-seed mean (%); ours, then the paper's")
    for col, title in (("accuracy", "ours"), ("paper", "paper"), ("delta", "ours - paper")):
        print(f"\n== {title}")
        _fmt_table(nt.wide(col).reset_index(), ["eps", *METHODS])
    for who, facts in (("ours", nt.ours), ("paper", nt.paper)):
        gap = ", ".join(f"{e:g}: {v:.1f}" for e, v in facts["gap_to_majority_class"].items())
        diff = ", ".join(f"{e:g}: {v:+.1f}" for e, v in facts["nbf_minus_dsnbf"].items())
        print(f"\n{who}: max |fusion - Majority Class| by eps {gap}")
        print(f"{who}: NBF - DSNBF by eps {diff}; NBF ahead from eps = "
              f"{facts['reversal_from']}")
    _write_json(args.json, {"command": "noise-table", **nt.to_dict()})
    return 0


def _add_decompose_parser(sub, *, json_help: str, boot, boot_help: str) -> None:
    from .paths import DEFAULT_DB

    def methods():
        from .evaluation.run import FORCED_METHODS

        return FORCED_METHODS

    FORCED_METHODS = _LazyChoices(methods)  # noqa: N806  (the imported constant's name)
    d = sub.add_parser("decompose", help="the resolver x input 2 x 2 (seed 000 §4.2)")
    d.add_argument("--db", type=_store_to_read, default=str(DEFAULT_DB),
                   help="existing store, opened read-only (default %(default)s)")
    d.add_argument("--fit-db", type=_store_to_read,
                   help="fit and calibrate on this store's train and calibration personas "
                        "(same seeds) instead of --db's, e.g. for a release of test personas")
    d.add_argument("--a", choices=FORCED_METHODS, default="dsnbf", metavar="METHOD",
                   help="resolver A, the one under study: %(choices)s (default %(default)s)")
    arm = d.add_mutually_exclusive_group()
    arm.add_argument("--b", choices=FORCED_METHODS, default="majority_vote", metavar="METHOD",
                     help="resolver B, the comparator (default %(default)s)")
    arm.add_argument("--model", help="B = an imported model's answers on the atom grid "
                                     "(variants oracle and extracted, e.g. struct_llm)")
    d.add_argument("--input", choices=("prose", "extracted"), default="prose",
                   help="mu_hat: our extractor on our prose, or the store's imported "
                        "extracted atoms (default %(default)s)")
    d.add_argument("--noise", type=_noise_spec,
                   help="flip mu_hat with a profile: uniform:EPS, paper, gemini or measured")
    d.add_argument("--noise-seed", type=_int_range(0, MAX_SEED), default=0,
                   help=f"random seed of the noise in [0, {MAX_SEED}] (default 0)")
    d.add_argument("--bootstrap", type=boot, default=2000, help=boot_help)
    d.add_argument("--seed", type=_int_range(0, MAX_SEED), default=42,
                   help="random seed of the bootstrap (default 42)")
    d.add_argument("--json", type=_json_out, help=json_help)
    d.set_defaults(func=_cmd_decompose)

    n = sub.add_parser("noise-table", help="extraction-noise tolerance beside the paper's "
                                           "Table 22 (seed 000 §12.5)")
    n.add_argument("--db", type=_store_to_read, default=str(DEFAULT_DB),
                   help="existing store, opened read-only (default %(default)s)")
    n.add_argument("--noise-seed", type=_int_range(0, MAX_SEED), default=12345,
                   help="random seed of the flips (default %(default)s, the paper's)")
    n.add_argument("--json", type=_json_out, help=json_help)
    n.set_defaults(func=_cmd_noise_table)


# -- fuse (issue 21): any claims table, or a built-in set, through the resolvers ---------------


def _fuse_normaliser(text: str):
    """argparse ``type``: ``case``, ``numeric:TOL`` or ``time:MIN`` (TOL, MIN finite ≥ 0)."""
    from .fusion.normalise import CaseWhitespace, NumericTolerance, TimeTolerance

    kind, _, arg = text.partition(":")
    if kind == "case" and not arg:
        return CaseWhitespace()
    if kind in ("numeric", "time") and arg:
        try:
            tol = float(arg)
        except ValueError:
            tol = math.nan
        if math.isfinite(tol) and tol >= 0:
            return NumericTolerance(tol) if kind == "numeric" else TimeTolerance(tol)
    raise argparse.ArgumentTypeError(f"must be case, numeric:TOL or time:MIN (a finite number "
                                     f">= 0), got {_shown(text)}")


def _fuse_column(text: str) -> tuple[str, object]:
    """argparse ``type``: ``ROLE=NAME`` (``sources=A,B,…`` in the wide layout; an empty NAME
    leaves the role unread)."""
    role, eq, name = text.partition("=")
    if not eq or not role:
        raise argparse.ArgumentTypeError(f"must be ROLE=NAME, got {_shown(text)}")
    if role == "sources":
        names = [n for n in name.split(",") if n]
        if not names:
            raise argparse.ArgumentTypeError("sources=A,B,… needs at least one column")
        return role, names
    return role, (name or None)


def _fuse_encoding(text: str) -> str:
    """argparse ``type``: a codec Python knows."""
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown encoding {_shown(text)}") from None
    return text


def _fuse_sep(text: str) -> str:
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character (not a quote or newline), got "
                                         f"{_shown(text)}")
    return text


def _fuse_input(args):
    """The claims of ``args.input`` (a file, else a built-in key) and the set's key or None."""
    from .fusion.builtin import BUILTIN_SETS, load_builtin
    from .fusion.importer import Caps, read_claims

    keys = [b.key for b in BUILTIN_SETS]
    src = args.input
    p = Path(src)
    if p.is_dir():
        raise UsageError(f"fuse: {src} is a directory, not a claims file")
    if p.is_file():
        columns = dict(args.columns or [])
        if args.truth_column is not None:
            columns["truth"] = args.truth_column or None
        caps = Caps(max_bytes=args.max_bytes, max_rows=args.max_rows,
                    max_columns=args.max_columns, max_field_chars=args.max_field_chars)
        return read_claims(p, layout=args.format or "long", columns=columns,
                           sep=args.sep, encoding=args.encoding,
                           normalise=args.normalise or (), caps=caps), None
    if src in keys:
        if args.columns or args.format:
            raise UsageError(f"fuse: --format and --columns apply to files, not the built-in "
                             f"set {src!r}")
        return load_builtin(src, truth=args.truth_column or None,
                            normalise=args.normalise or ()), src
    raise UsageError(f"fuse: {_shown(src)} is no file and no built-in set (the built-in sets "
                     f"are {', '.join(keys)})")


def _cmd_fuse(args) -> int:
    from .fusion.builtin import RESOLVERS, predictions_frame, run_resolvers, score_board

    t0 = time.perf_counter()
    try:
        imported, key = _fuse_input(args)
        claims = imported.claims
        methods = args.methods
        if key == "nq_open":
            supervised = [m for m in methods or () if RESOLVERS[m].supervised]
            if supervised:
                raise UsageError(f"fuse: {supervised[0]} is fitted to one label source; the "
                                 "NQ-open board compares label-blind resolvers")
            methods = methods or [m for m, r in RESOLVERS.items() if not r.supervised]
        t_load = time.perf_counter() - t0
        results, seconds = {}, {}
        for name in methods or [m for m, r in RESOLVERS.items()
                                if claims.has_truth or not r.supervised]:
            t = time.perf_counter()
            results[name] = run_resolvers(claims, [name])[name]
            seconds[name] = time.perf_counter() - t
        board = score_board(claims, results)
        label_sources = None
        if key == "nq_open":
            from .fusion.nq import label_source_board, nq_open_judgements, source_labels

            label_sources = label_source_board(results, nq_open_judgements(imported),
                                               sources=source_labels(claims))
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid input"
        raise UsageError(f"fuse: {first}") from None
    board.insert(1, "seconds", board["method"].map(seconds))
    gold = int(claims.gold.sum()) if claims.has_truth else 0
    print(f"{key or args.input}: {claims.n_claims:,} claims, {claims.n_items:,} items, "
          f"{claims.n_sources:,} sources, {claims.n_classes:,} distinct claims; "
          + (f"truth for {gold:,} items" if gold else "no truth (agreement with majority vote)"))
    for rule in imported.rules:
        print(f"normalised: {rule}")
    for w in imported.warnings:
        print(f"warning: {w}")
    if label_sources is None:
        _print_table(board[["method", "against", "scored_on", "items", "answered", "accuracy",
                            "low", "high", "seconds"]], floatfmt="{:.3f}")
    else:
        print("\nscored by the per-answer judgements (people, exact match); systems as rows:")
        _print_table(label_sources.table(), floatfmt="{:.3f}")
        print(f"{len(label_sources.flipped)} pair(s) change order between the human and the "
              f"exact-match labels; best: human {', '.join(label_sources.top['human'])}, exact "
              f"match {', '.join(label_sources.top['exact_match'])}")
    if args.predictions:
        frame = predictions_frame(claims, results)
        try:
            Path(args.predictions).parent.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(args.predictions, index=False)
        except OSError as exc:
            raise UsageError(f"cannot write --predictions {args.predictions}: "
                             f"{exc.strerror or exc}") from None
        print(f"wrote {len(frame):,} predictions to {args.predictions}")
    total = time.perf_counter() - t0
    print(f"read in {t_load:.2f} s, total {total:.2f} s")
    _write_json(args.json, {
        "command": "fuse", "input": args.input, "builtin": key,
        "claims": claims.n_claims, "items": claims.n_items, "sources": claims.n_sources,
        "classes": claims.n_classes, "gold": gold, "warnings": list(imported.warnings),
        "rules": list(imported.rules), "board": board.to_dict(orient="records"),
        "label_sources": None if label_sources is None else {
            "between": list(label_sources.between), "flipped": label_sources.flipped,
            "board": label_sources.frame.to_dict(orient="records")},
        "seconds": {"read": round(t_load, 3), "total": round(total, 3)}})
    return 0


def _cmd_tour(args: argparse.Namespace) -> int:
    """Every stop's check, and the whole tour as one HTML file (issue 22)."""
    from .store import DEFAULT_DB, connect
    from .tour import STOPS, TourData, compute_stop, index_frame, tour_html

    db = args.db or (str(DEFAULT_DB) if Path(DEFAULT_DB).is_file() else None)
    con = connect(db, read_only=True) if db else None
    try:
        keys = [args.stop] if args.stop else [s.key for s in STOPS]
        data = TourData(con)
        pairs = [(s, compute_stop(s.key, data)) for s in STOPS if s.key in keys]
        if db is None:
            print("note: no store (python -m core build); the stops on the store say so")
        rows = []
        for number, (stop, view) in enumerate(pairs, start=1):
            mark = "shows" if view.shows_failure else "NO"
            print(f"{number:>2}. [{mark}] {stop.title}")
            for label, value in view.example:
                print(f"      {label}: {value}")
            if view.note:
                print(f"      note: {view.note}")
            rows.append({"key": stop.key, "title": stop.title, "shows_failure": view.shows_failure,
                         "example": dict(view.example), "evidence": dict(view.evidence),
                         "link": {"page": stop.page, **view.query}, "note": view.note})
        if args.html:
            text = tour_html(pairs, teacher=args.teacher)
            out = Path(args.html)
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_name(out.name + ".part")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(out)
            print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(pairs)} stops"
                  f"{', teacher' + chr(39) + 's copy' if args.teacher else ''})")
        _write_json(args.json, {"command": "tour", "stops": rows,
                                "index": index_frame([s for s, _ in pairs]).to_dict("records")})
    finally:
        if con is not None:
            con.close()
    if args.check and not all(v.shows_failure for _, v in pairs):
        print("error: a stop does not show its failure", file=sys.stderr)
        return 1
    return 0


def _add_tour_parser(sub, *, json_help: str) -> None:
    from .tour import ORDER

    t = sub.add_parser("tour", help=HEAVY_HELP["tour"])
    t.add_argument("--html", type=_json_out, metavar="OUT",
                   help="write the tour as one self-contained HTML file here")
    t.add_argument("--teacher", action="store_true",
                   help="the teacher's copy: answers open and teacher notes (with --html)")
    t.add_argument("--db", type=_store_to_read,
                   help="the store the memory stops read (default: data/arbiter.duckdb if it "
                        "exists)")
    t.add_argument("--stop", choices=ORDER, metavar="KEY",
                   help="only this stop: " + ", ".join(ORDER))
    t.add_argument("--check", action="store_true",
                   help="exit 1 unless every stop shows its failure")
    t.add_argument("--json", type=_json_out, help=json_help)
    t.set_defaults(func=_cmd_tour)


def _add_fuse_parser(sub, *, json_help: str) -> None:
    from .fusion.builtin import BUILTIN_SETS, RESOLVERS
    from .fusion.importer import Caps

    caps = Caps()
    f = sub.add_parser(
        "fuse", help=HEAVY_HELP["fuse"],
        description="Read a claims table (CSV or Parquet, long or wide; docs/fusion.md) or a "
                    "built-in set (" + ", ".join(b.key for b in BUILTIN_SETS) + "), run the "
                    "resolvers and print the board: accuracy with a Wilson interval against "
                    "the truth, or agreement with majority vote when there is none.")
    f.add_argument("input", metavar="FILE_OR_BUILTIN",
                   help="a claims file, or the key of a built-in set (a file of that name wins)")
    f.add_argument("--format", choices=("long", "wide"),
                   help="layout of a file (default long)")
    f.add_argument("--methods", nargs="+", choices=tuple(RESOLVERS), metavar="METHOD",
                   help="resolvers to run (default: all; naive_bayes only with truth): "
                        + ", ".join(RESOLVERS))
    f.add_argument("--truth-column", metavar="NAME",
                   help="the truth column of a file ('' for none), or a built-in set's label "
                        "column (NQ-open: human or exact_match)")
    f.add_argument("--columns", nargs="+", type=_fuse_column, metavar="ROLE=NAME",
                   help="column mapping: item, source, claim, truth, split, weight (long) or "
                        "item, truth, split, sources=A,B,… (wide)")
    f.add_argument("--normalise", action="append", type=_fuse_normaliser,
                   metavar="case|numeric:TOL|time:MIN",
                   help="normalise claims and truths, in the order given (repeatable)")
    f.add_argument("--sep", type=_fuse_sep, default=",", help="CSV separator (default ,)")
    f.add_argument("--encoding", type=_fuse_encoding, default="utf-8",
                   help="CSV encoding (default utf-8; a UTF-8 BOM is accepted)")
    f.add_argument("--max-bytes", type=_int_range(1, caps.max_bytes), default=caps.max_bytes,
                   help=f"size cap, 1 to {caps.max_bytes:,} (default)")
    f.add_argument("--max-rows", type=_int_range(1, caps.max_rows), default=caps.max_rows,
                   help=f"row (and claim) cap, 1 to {caps.max_rows:,} (default)")
    f.add_argument("--max-columns", type=_int_range(1, caps.max_columns),
                   default=caps.max_columns, help=f"column cap, 1 to {caps.max_columns:,}")
    f.add_argument("--max-field-chars", type=_int_range(1, caps.max_field_chars),
                   default=caps.max_field_chars,
                   help=f"characters in one field, 1 to {caps.max_field_chars:,}")
    f.add_argument("--json", type=_json_out, help=json_help)
    f.add_argument("--predictions", type=_json_out, metavar="OUT.parquet",
                   help="write item, method, label, confidence as Parquet here")
    f.set_defaults(func=_cmd_fuse)


#: Help lines of the commands whose options need heavy imports (:func:`_parser`).
HEAVY_HELP = {
    "records": "seed 002: one person's records (check, items, render, read, score, plan)",
    "llm": "optional live LLM extraction and answering (seed 000)",
    "fuse": "any claims table (or a built-in set) through every resolver (issue 21)",
    "tour": "the guided tour: every stop's check, and an HTML hand-out (issue 22)",
    "sweep": "run a grid of testbed cells, locally or on Dask (issue 23)",
}


class _LazyChoices(Sequence):
    """An option's choices, loaded on first use (a parse that checks a value, or help), so
    building the parser imports nothing heavy."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        self._load, self._values = load, None

    def _get(self) -> Sequence[str]:
        if self._values is None:
            self._values = tuple(self._load())
        return self._values

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, value) -> bool:
        return value in self._get()


def _parser(command: str | None = None) -> _Parser:
    """The command line's parser. With ``command`` (the first argument, when it names a
    command) the other commands whose options import heavy modules (the tour's stops, the
    fusion resolvers, the sweep engine, the pilot scenarios) get a bare entry with their help
    line only, so ``python -m core reproduce`` does not spend seconds importing them."""
    from .paths import DEFAULT_DB
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
    r.add_argument("--executor", choices=("local", "dask", "dask-local"), default="local",
                   help="where the robustness grids' sweep cells run: local processes "
                        "(default), a Dask scheduler (dask, with --scheduler) or a Dask "
                        "LocalCluster (dask-local); docs/sweep.md")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address for --executor dask (tcp://host:8786)")
    r.add_argument("--json", type=_json_out, help=json_help)
    r.set_defaults(func=_cmd_reproduce)

    nq = sub.add_parser("import-nq301", help="re-derive the shipped NQ-open files (seed 003)")
    nq.add_argument("dir", type=_existing_dir, help="the nq301-openqa-eval release (with data/)")
    nq.add_argument("--out", type=_out_dir, help="output folder (default data/nq301)")
    nq.add_argument("--json", type=_json_out, help=json_help)
    nq.set_defaults(func=_cmd_import_nq301)

    sc = sub.add_parser("score", help="every score and decomposition of a CSV of forecasts",
                        description="Every score and decomposition of a CSV of forecasts. "
                                    "spiegelhalter_z tests reliability (is the Brier score "
                                    "what calibrated forecasts would score?), not calibration "
                                    "in the large (citl); it is NaN when its normal "
                                    "approximation fails. log_score clips p at 1e-15.")
    sc.add_argument("file", type=_existing_file,
                    help="CSV with columns p, y [, z, p_b, cluster, weight]")
    sc.add_argument("--json", type=_json_out, help=json_help)
    sc.set_defaults(func=_cmd_score)

    pi = sub.add_parser("pilot", help="simulate human pilots on a seed-003 scenario")

    def scenarios():
        from .calibration.scenarios import SCENARIOS

        return tuple(SCENARIOS)

    pi.add_argument("--scenario", choices=_LazyChoices(scenarios), default="default",
                    metavar="NAME", help="a registered scenario (core/calibration/scenarios.py):"
                                         " %(choices)s")
    pi.add_argument("--budget", type=_int_range(MIN_BUDGET, MAX_BUDGET), default=50,
                    help=f"attempted annotations per pilot, {MIN_BUDGET} to {MAX_BUDGET}")
    pi.add_argument("--reps", type=_int_range(1, MAX_REPS), default=5000,
                    help=f"simulated pilots, 1 to {MAX_REPS} (default %(default)s)")
    pi.add_argument("--seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"random seed in [0, {MAX_SEED}]")
    pi.add_argument("--json", type=_json_out, help=json_help)
    pi.set_defaults(func=_cmd_pilot)

    def prose_input(cmd, *, seeds_default):
        """Where a prose command's testbed comes from: generated seeds or a release."""
        where = cmd.add_mutually_exclusive_group()
        where.add_argument("--seeds", type=_int_range(0, MAX_SEED), nargs="+",
                           default=list(seeds_default),
                           help=f"generate these distinct seeds in [0, {MAX_SEED}] "
                                "(default %(default)s)")
        where.add_argument("--release", type=_existing_dir,
                           help="import the authors' release layout instead")
        cmd.add_argument("--personas-per-difficulty", type=_int_range(MIN_PERSONAS,
                                                                      MAX_PERSONAS),
                         default=160, help=f"{MIN_PERSONAS} to {MAX_PERSONAS} for generated "
                                           "seeds (default %(default)s)")

    rn = sub.add_parser("render", help="render every persona's sources as NL memory (seed 000)")
    prose_input(rn, seeds_default=DEFAULT_SEEDS[:1])
    rn.add_argument("--out", type=_out_dir, help="write <persona_id>.md files here")
    rn.add_argument("--json", type=_json_out, help=json_help)
    rn.set_defaults(func=_cmd_render)

    ex = sub.add_parser("extract", help="extract atoms from the NL memory, optionally noisy")
    prose_input(ex, seeds_default=DEFAULT_SEEDS[:1])
    ex.add_argument("--noise", type=_noise_spec,
                    help="simulate an extractor: uniform:EPS (EPS in [0, 1]), paper (GPT-5.4 "
                         "by source) or measured (this run's own table)")
    ex.add_argument("--noise-seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"random seed of the noise in [0, {MAX_SEED}] (default 0)")
    ex.add_argument("--out", type=_out_dir, help="write <persona_id>.json atom files here")
    ex.add_argument("--json", type=_json_out, help=json_help)
    ex.set_defaults(func=_cmd_extract)

    fa = sub.add_parser("faithfulness", help="P(mu_hat = mu*) by source and question")
    prose_input(fa, seeds_default=DEFAULT_SEEDS)
    fa.add_argument("--cells", choices=("all", "informative", "non_null"), default="all",
                    help="denominator: every cell (seed 000 §8.8), the source-question map, "
                         "or cells where mu* is not null (default %(default)s)")
    fa.add_argument("--paraphrase", type=_finite_float(0.0, 1.0), metavar="RATE",
                    help="also score the extractor on our render paraphrased at RATE per kind "
                         "of rewrite (the authors' wording, clause order, synonyms, number "
                         "formats; docs/prose.md), beside the round trip")
    fa.add_argument("--paraphrase-seed", type=_int_range(0, MAX_SEED), default=0,
                    help=f"random seed of the paraphrase in [0, {MAX_SEED}] (default 0)")
    fa.add_argument("--json", type=_json_out, help=json_help)
    fa.set_defaults(func=_cmd_faithfulness)
    def heavy(name: str, build: Callable[[], None]) -> None:
        if command is None or command == name:
            build()
        else:  # a bare entry: its name and help line in the list of commands
            sub.add_parser(name, help=HEAVY_HELP[name])

    def add_sweep():
        from .sweep.cli import add_sweep_parser  # here: core.sweep.cli imports this module

        add_sweep_parser(sub, json_help=json_help)

    heavy("records", lambda: _add_records_parser(sub, json_help=json_help, boot=boot,
                                                 boot_help=boot_help))
    heavy("llm", lambda: _add_llm_parser(sub, json_help=json_help))
    _add_decompose_parser(sub, json_help=json_help, boot=boot, boot_help=boot_help)
    heavy("fuse", lambda: _add_fuse_parser(sub, json_help=json_help))
    heavy("tour", lambda: _add_tour_parser(sub, json_help=json_help))
    heavy("sweep", add_sweep)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .store import StoreError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        command = argv[0] if argv and not argv[0].startswith("-") else None
        args = _parser(command).parse_args(argv)
        return args.func(args)
    except (UsageError, StoreError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {first}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 2
    except OSError as exc:  # the environment or a path given: bad input, not a bug
        where = f" ({Path(exc.filename).name[:60]})" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or type(exc).__name__}{where}", file=sys.stderr)
        return 2
    except RecursionError:
        print("error: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: one line unless debugging
        if os.environ.get("ARBITER_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: unexpected {type(exc).__name__}: {first} (set ARBITER_DEBUG=1 for a "
              "traceback)", file=sys.stderr)
        return 1
