"""Every seed-000 table this project can compute, beside the paper (``python -m core reproduce``).

:func:`reproduce` runs the full protocol on a testbed: the main forced table, the selective
table, per type, per difficulty, per question, per seed, the Source Reachability slices, the
DSNBF − Majority Vote paired differences, the 3 × 3 perturbation grid with Kendall τ, the
extraction-noise curve, the train-size ablation and cross-bias transfer. Each table is a
DataFrame whose paper columns sit beside ours (``paper``/``delta`` or ``*_paper``).

The four robustness grids (seed 000 §12; the benchmark specification §2.13) run either
directly (:mod:`core.evaluation.robustness`, ``executor=None``) or as sweeps on the engine of
:mod:`core.sweep` (``executor="local"``, ``"dask"`` or ``"dask-local"``; the grids of
:mod:`core.sweep.protocols`). Both give the same tables to the digit
(``tests/test_sweep_reproduce.py``). On the engine the four grids run as one pass
(:func:`core.sweep.engine.run_sweeps`: cells grouped by seed across the grids, the nominal fit
they all need made once per seed) from a driver thread, while this one builds the testbed
(when ``tb`` is a function) and computes the main tables.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..testbed.config import TestbedConfig
from ..testbed.schema import Testbed
from . import tables as T
from .paper import (
    GRID_METHODS,
    NOISE_METHODS,
    PAPER_GRID,
    PAPER_GRID_DSNBF_WINS,
    PAPER_GRID_TAU,
    PAPER_NOISE,
    PAPER_TRAIN_SIZE,
)
from .robustness import noise_curve, perturbation_grid, train_size_curve, transfer
from .run import run_testbed

__all__ = ["Reproduction", "reproduce"]


@dataclass
class Reproduction:
    """Named tables, summary numbers and the seconds each step took."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready form (tables as lists of records, NaN → None)."""
        def clean(df):
            return df.astype(object).where(pd.notna(df), None).to_dict(orient="records")
        return {"tables": {k: clean(v) for k, v in self.tables.items()},
                "summary": self.summary, "seconds": self.seconds}


def _grid_table(grid: dict) -> pd.DataFrame:
    mean = grid["mean"].copy()
    for i, m in enumerate(GRID_METHODS):
        paper = [PAPER_GRID.get((b, d), (np.nan,) * 7)[i]
                 for b, d in zip(mean["bias"], mean["dropout"], strict=True)]
        mean[f"{m}_paper"] = paper
        mean[f"{m}_delta"] = mean[m] - mean[f"{m}_paper"]
    return mean


def _noise_table(curve: pd.DataFrame) -> pd.DataFrame:
    wide = curve.pivot(index="eps", columns="method", values="accuracy").reset_index()
    for i, m in enumerate(NOISE_METHODS):
        if m in wide:
            wide[f"{m}_paper"] = [PAPER_NOISE.get(e, (np.nan,) * 5)[i] for e in wide["eps"]]
            wide[f"{m}_delta"] = wide[m] - wide[f"{m}_paper"]
    return wide


def _size_table(curve: pd.DataFrame) -> pd.DataFrame:
    wide = curve.pivot(index="train_size", columns="method", values="accuracy").reset_index()
    for m, ref in PAPER_TRAIN_SIZE.items():
        if m in wide:
            wide[f"{m}_paper"] = [ref.get(int(n), np.nan) for n in wide["train_size"]]
            wide[f"{m}_delta"] = wide[m] - wide[f"{m}_paper"]
    return wide


#: The one robustness step on the engine (its four grids in one pass).
_ENGINE_STEP = "robustness grids on the engine (one pass)"


def _engine_grids(config: TestbedConfig, ex, step) -> dict:
    """The four robustness grids as sweeps on the entered executor ``ex``, reduced to what
    :mod:`core.evaluation.robustness` returns (:mod:`core.sweep.protocols`).

    The grids run as one pass (:func:`core.sweep.engine.run_sweeps`): the nominal fit that
    the perturbation grid, the noise curve, transfer and the full training split all need is
    made once per seed, and the longest tasks of all four start first. Run one after another,
    each grid ended with a worker idle (about 3 s of the 2-core wall time).
    """
    from ..sweep import protocols as P
    from ..sweep.engine import run_sweeps

    grids = {"grid": P.perturbation_sweep(config), "noise": P.noise_sweep(config),
             "train_size": P.train_size_sweep(config), "transfer": P.transfer_sweep(config)}
    results = step(_ENGINE_STEP, lambda: run_sweeps(grids.values(), executor=ex))
    for grid, res in zip(grids.values(), results, strict=True):
        if res.failed:
            err = res.cells.loc[res.cells["status"] == "failed", "error"].iloc[0]
            raise RuntimeError(f"{len(res.failed)} cell(s) of {grid.name} failed: {err}")
    tables = dict(zip(grids, (r.table for r in results), strict=True))
    return {"grid": P.perturbation_from_table(tables["grid"]),
            "noise": P.noise_from_table(tables["noise"]),
            "train_size": P.train_size_from_table(tables["train_size"]),
            "transfer": P.transfer_from_table(tables["transfer"])}


def reproduce(tb: Testbed | Callable[[], Testbed], config: TestbedConfig, *,
              n_boot: int = 2000,
              robustness: bool = True, workers: int = 1, executor: str | None = None,
              scheduler: str | None = None,
              progress: Callable[[str], None] | None = None) -> Reproduction:
    """Run the whole seed-000 protocol on ``tb`` (generated from ``config``).

    Parameters
    ----------
    tb, config : the testbed and the configuration it was generated from; ``tb`` may also be
        a function returning the testbed (``python -m core reproduce`` builds a store), which
        on the engine runs while the robustness cells do (they read only ``config``).
    n_boot : bootstrap replicates of the main table's intervals and the paired differences.
    robustness : also run the perturbation grid, noise, training-size and transfer tables.
    workers : processes for the robustness grids (direct: forked processes; on the engine:
        local processes or ``LocalCluster`` workers).
    executor : ``None`` runs the grids directly (:mod:`core.evaluation.robustness`);
        ``"local"``, ``"dask"`` (at ``scheduler``) or ``"dask-local"`` runs them as sweeps
        on :mod:`core.sweep`'s engine (module docstring); or an executor of
        :mod:`core.sweep.executors` the caller has entered, used as it is and left open
        (``python -m core reproduce`` enters it first, so the workers import ``core`` while
        this process does). The tables are the same.
    scheduler : a Dask scheduler address, for ``executor="dask"`` only.
    progress : called with each step's name as it starts.

    Raises ``ValueError`` for an unknown executor or a bad executor/scheduler combination,
    ``RuntimeError`` when a cell of a grid failed on the engine.
    """
    ex = None
    entered = executor is not None and not isinstance(executor, str)
    if entered:  # the caller's, already entered (its processes may be starting)
        if scheduler is not None:
            raise ValueError("scheduler applies only to executor='dask'")
        ex = executor
    elif executor is not None:
        from ..sweep.engine import EXECUTORS
        from ..sweep.executors import make_executor

        if executor not in EXECUTORS:
            raise ValueError(f"unknown executor {executor!r} (expected "
                             f"{', '.join(EXECUTORS)}, or None for the direct run)")
        ex = make_executor(executor, workers=workers, scheduler=scheduler)
    elif scheduler is not None:
        raise ValueError("scheduler applies only to executor='dask'")
    say = progress or (lambda msg: None)
    out = Reproduction()
    pending = None
    if robustness and ex is not None:  # the grids' cells run while the driver works below
        from concurrent.futures import ThreadPoolExecutor

        if not entered:
            ex.__enter__()
        thread = ThreadPoolExecutor(max_workers=1)
    try:
        if robustness and ex is not None:
            pending = thread.submit(_engine_grids, config, ex, _stepper(out, say))
        return _reproduce(tb, config, out, n_boot=n_boot, robustness=robustness,
                          workers=workers, pending=pending, say=say)
    finally:
        if pending is not None:
            pending.cancel()
            thread.shutdown(wait=True)
            if not entered:
                ex.__exit__(None, None, None)


def _stepper(out: Reproduction, say: Callable[[str], None]):
    """``step(name, fn)``: say ``name``, run ``fn`` and record its seconds in ``out``."""
    def step(name, fn):
        say(name)
        t0 = time.perf_counter()
        value = fn()
        out.seconds[name] = round(time.perf_counter() - t0, 3)
        return value
    return step


def _reproduce(tb, config: TestbedConfig, out: Reproduction, *, n_boot: int, robustness: bool,
               workers: int, pending, say) -> Reproduction:
    """The body of :func:`reproduce`; ``pending`` is the engine's grids (a future) or None."""
    if callable(tb):
        tb = tb()
    step = _stepper(out, say)
    runs = step("fit, calibrate and score every resolver", lambda: run_testbed(tb))
    out.tables["main"] = step("main table with bootstrap CIs",
                              lambda: T.main_table(runs, b=n_boot))
    out.tables["selective"] = T.selective_table(runs)
    out.tables["per_type"] = T.per_type_table(runs)
    out.tables["per_difficulty"] = T.per_difficulty_table(runs)
    out.tables["per_question"] = T.per_question_table(runs)
    out.tables["per_seed"] = T.per_seed_table(runs)
    out.tables["reachability_slices"] = T.reachability_slices(runs)
    out.tables["paired_dsnbf_vs_mv"] = step(
        "paired differences", lambda: T.paired_by_type(runs, "dsnbf", "majority_vote",
                                                       n_boot=n_boot))
    main = out.tables["main"].set_index("method")
    sel = out.tables["selective"].set_index("method")
    out.summary.update({
        "dsnbf_accuracy": float(main.loc["dsnbf", "accuracy"]),
        "source_reachability": float(main.loc["source_reachability", "accuracy"]),
        "dsnbf_skip_gain": float(sel.loc["dsnbf_skip", "gain_over_forced"]),
        "dsnbf_skip_coverage": float(sel.loc["dsnbf_skip", "coverage"]),
        "max_abs_delta_regenerated": float(main["delta_regenerated"].abs().max()),
    })
    if pending is not None:
        found = pending.result()
        grid = found["grid"]
        out.tables["perturbation_grid"] = _grid_table(grid)
        out.tables["kendall_tau"] = grid["tau"].astype({"a": str, "b": str})
        out.summary.update({"grid_tau_mean": grid["tau_mean"], "grid_tau_paper": PAPER_GRID_TAU,
                            "dsnbf_wins": grid["dsnbf_wins"], "cells": grid["cells"],
                            "dsnbf_wins_paper": PAPER_GRID_DSNBF_WINS[0]})
        out.tables["noise"] = _noise_table(found["noise"])
        out.tables["train_size"] = _size_table(found["train_size"])
        out.tables["transfer"] = found["transfer"]
        # the grids' step ran beside the driver's: list it after the driver's steps
        out.seconds = {k: out.seconds[k] for k in sorted(
            out.seconds, key=lambda k: k == _ENGINE_STEP)}
    elif robustness:
        grid = step("3 × 3 perturbation grid", lambda: perturbation_grid(config, workers=workers))
        out.tables["perturbation_grid"] = _grid_table(grid)
        out.tables["kendall_tau"] = grid["tau"].astype({"a": str, "b": str})
        out.summary.update({"grid_tau_mean": grid["tau_mean"], "grid_tau_paper": PAPER_GRID_TAU,
                            "dsnbf_wins": grid["dsnbf_wins"], "cells": grid["cells"],
                            "dsnbf_wins_paper": PAPER_GRID_DSNBF_WINS[0]})
        out.tables["noise"] = step("extraction noise", lambda: _noise_table(noise_curve(runs)))
        out.tables["train_size"] = step("train-size ablation",
                                        lambda: _size_table(train_size_curve(tb, workers=workers)))
        out.tables["transfer"] = step("transfer without refit", lambda: transfer(runs, config))
    return out
