"""Every seed-000 table this project can compute, beside the paper (``python -m core reproduce``).

:func:`reproduce` runs the full protocol on a testbed: the main forced table, the selective
table, per type, per difficulty, per question, per seed, the Source Reachability slices, the
DSNBF − Majority Vote paired differences, the 3 × 3 perturbation grid with Kendall τ, the
extraction-noise curve, the train-size ablation and cross-bias transfer. Each table is a
DataFrame whose paper columns sit beside ours (``paper``/``delta`` or ``*_paper``).
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


def reproduce(tb: Testbed, config: TestbedConfig, *, n_boot: int = 2000,
              robustness: bool = True, workers: int = 1,
              progress: Callable[[str], None] | None = None) -> Reproduction:
    """Run the whole seed-000 protocol on ``tb`` (generated from ``config``)."""
    say = progress or (lambda msg: None)
    out = Reproduction()

    def step(name, fn):
        say(name)
        t0 = time.perf_counter()
        value = fn()
        out.seconds[name] = round(time.perf_counter() - t0, 3)
        return value

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
    if robustness:
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
