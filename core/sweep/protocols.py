"""Seed 000's robustness grids as sweeps: the grid of each, and its table from the results.

Each protocol of :mod:`core.evaluation.robustness` (seed 000 §12; the benchmark
specification §2.13) is a grid here, and a reduction turns the sweep's results table back
into what the protocol returns today, number for number (tests check each against the
direct call), so ``reproduce`` can run its grids on any executor of the engine:

* :func:`perturbation_sweep` / :func:`perturbation_from_table` — bias × dropout scales,
  every method refitted in-distribution; Kendall τ-b between variants within each seed and
  DSNBF's strict wins (:func:`core.evaluation.robustness.perturbation_grid`);
* :func:`noise_sweep` / :func:`noise_from_table` — uniform flips of the test atoms with rate
  ε, ``default_rng([seed, run seed])``, fits clean (``noise_curve``; Table 22). A cell
  refits its resolvers rather than reusing the nominal fit, which gives the same models
  (the fits are deterministic) at the price of one fit per ε;
* :func:`train_size_sweep` / :func:`train_size_from_table` — stratified train subsamples,
  draw ``i`` from ``default_rng(42 + i)``, and the full train split (``train_size_curve``);
* :func:`transfer_sweep` / :func:`transfer_from_table` — fitted on the base scales, tested on
  every variant without refit (``transfer``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..evaluation.paper import GRID_METHODS
from ..evaluation.robustness import SCALES, summarise_grid
from ..testbed.config import TestbedConfig
from .grid import Grid, parse_grid

__all__ = [
    "NOISE_EPS",
    "NOISE_METHODS",
    "SIZE_METHODS",
    "TRANSFER_METHODS",
    "noise_from_table",
    "noise_sweep",
    "perturbation_from_table",
    "perturbation_sweep",
    "train_size_from_table",
    "train_size_sweep",
    "transfer_from_table",
    "transfer_sweep",
]

#: Defaults of ``core.evaluation.robustness``.
NOISE_EPS = (0.0, 0.1, 0.2, 0.3, 0.5)
NOISE_METHODS = ("dsnbf", "nbf", "abf", "bcf", "majority_vote")
SIZE_METHODS = ("dsnbf", "abf", "ssb")
TRANSFER_METHODS = ("dsnbf", "nbf")
_RIVALS = ("nbf", "abf", "bcf", "majority_vote", "ssb_global")


def _base_axes(config: TestbedConfig, methods: Sequence[str]) -> dict:
    return {"seed": list(config.seeds), "personas_per_difficulty": config.personas_per_difficulty,
            "bias_scale": config.bias_scale, "dropout_scale": config.dropout_scale,
            "methods": list(methods)}


def _order(values: pd.Series, order: Sequence) -> np.ndarray:
    rank = {v: i for i, v in enumerate(order)}
    return values.map(rank).to_numpy()


def perturbation_sweep(config: TestbedConfig, *, scales: Sequence[float] = SCALES,
                       methods: Sequence[str] = GRID_METHODS) -> Grid:
    """The 3 × 3 perturbation grid (seed 000 §12.1) of ``config``'s seeds as a sweep."""
    axes = {**_base_axes(config, methods), "bias_scale": [float(s) for s in scales],
            "dropout_scale": [float(s) for s in scales]}
    return parse_grid({"name": "reproduce-perturbation", "axes": axes})


def perturbation_from_table(table: pd.DataFrame, *, methods: Sequence[str] = GRID_METHODS
                            ) -> dict:
    """What :func:`core.evaluation.robustness.perturbation_grid` returns, from a sweep's table.

    Rows are put in that function's order (variants in product order of the scales as they
    appear, then seeds, then ``methods``) before the same reductions: ``table``, ``mean``,
    ``tau``, ``tau_mean``, ``dsnbf_wins``, ``cells``.
    """
    methods = list(methods)
    t = table[table["method"].isin(methods)]
    bias = list(pd.unique(t["bias_scale"]))
    drop = list(pd.unique(t["dropout_scale"]))
    seeds = list(pd.unique(t["seed"]))
    order = np.lexsort((_order(t["method"], methods), _order(t["seed"], seeds),
                        _order(t["dropout_scale"], drop), _order(t["bias_scale"], bias)))
    t = t.iloc[order]
    table = pd.DataFrame({"bias": t["bias_scale"].to_numpy(float),
                          "dropout": t["dropout_scale"].to_numpy(float),
                          "seed": t["seed"].to_numpy(np.int64),
                          "method": list(t["method"]),
                          "accuracy": t["forced_accuracy"].to_numpy(float)})
    return summarise_grid(table, methods)


def noise_sweep(config: TestbedConfig, *, eps: Sequence[float] = NOISE_EPS,
                methods: Sequence[str] = NOISE_METHODS, seed: int = 12345) -> Grid:
    """Table 22's extraction noise (seed 000 §12.5) as a sweep: one cell per (seed, ε)."""
    axes = {**_base_axes(config, methods), "noise_profile": "uniform",
            "noise_eps": [float(e) for e in eps]}
    return parse_grid({"name": "reproduce-noise", "axes": axes,
                       "options": {"noise_seed": int(seed)}})


def noise_from_table(table: pd.DataFrame) -> pd.DataFrame:
    """What ``noise_curve`` returns: eps, method, accuracy (%, mean over seeds)."""
    kind = table["noise"].str.partition(":")
    if not (kind[0] == "uniform").all():
        raise ValueError("noise_from_table needs cells with uniform noise only")
    df = pd.DataFrame({"eps": kind[2].astype(float).to_numpy(), "seed": table["seed"],
                       "method": list(table["method"]),
                       "accuracy": table["forced_accuracy"].to_numpy(float)})
    return df.groupby(["eps", "method"], as_index=False)["accuracy"].mean()


def train_size_sweep(config: TestbedConfig, *, sizes: Sequence[int] = (50, 100, 150),
                     repeats: int = 5, methods: Sequence[str] = SIZE_METHODS) -> Grid:
    """The training-size ablation (seed 000 §12.3) as a sweep: every train persona, and
    ``repeats`` stratified draws of each size."""
    axes = {**_base_axes(config, methods), "train_size": ["all", *(int(n) for n in sizes)],
            "train_draw": list(range(int(repeats)))}
    return parse_grid({"name": "reproduce-train-size", "axes": axes})


def train_size_from_table(table: pd.DataFrame) -> pd.DataFrame:
    """What ``train_size_curve`` returns: train_size (the full split as its count), method,
    accuracy (%, mean over draws and seeds)."""
    df = pd.DataFrame({"train_size": table["n_train"].to_numpy(np.int64),
                       "seed": table["seed"], "method": list(table["method"]),
                       "accuracy": table["forced_accuracy"].to_numpy(float)})
    return df.groupby(["train_size", "method"], as_index=False)["accuracy"].mean()


def transfer_sweep(config: TestbedConfig, *, scales: Sequence[float] = SCALES,
                   methods: Sequence[str] = TRANSFER_METHODS) -> Grid:
    """Cross-bias transfer (seed 000 §12.4) as a sweep: fitted on ``config``'s scales, tested
    on every (bias, dropout) variant without refit."""
    axes = {**_base_axes(config, methods), "bias_scale": [float(s) for s in scales],
            "dropout_scale": [float(s) for s in scales],
            "fit_bias_scale": config.bias_scale, "fit_dropout_scale": config.dropout_scale}
    return parse_grid({"name": "reproduce-transfer", "axes": axes})


def transfer_from_table(table: pd.DataFrame) -> pd.DataFrame:
    """What ``transfer`` returns: bias, dropout, method, accuracy (%, mean over seeds)."""
    df = pd.DataFrame({"bias": table["bias_scale"].to_numpy(float),
                       "dropout": table["dropout_scale"].to_numpy(float),
                       "seed": table["seed"], "method": list(table["method"]),
                       "accuracy": table["forced_accuracy"].to_numpy(float)})
    return df.groupby(["bias", "dropout", "method"], as_index=False)["accuracy"].mean()
