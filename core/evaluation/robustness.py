"""Robustness protocols of seed 000 (the benchmark specification §2.13; seed 000 §12).

* :func:`perturbation_grid` — bias_scale × dropout_scale ∈ {0.5, 1, 2}²: sources re-projected
  with the same seeds, GT and μ* recomputed, every method refitted in-distribution; Kendall τ-b
  (scipy's default) between the seven reported methods' accuracies for every pair of variants
  within each seed, and DSNBF's strict wins over NBF, ABF, BCF, MV and SSB-Global.
* :func:`noise_curve` — each non-null test atom flipped with probability ε (ordinal: one rank
  up or down, end ranks inward; nominal: a uniformly random other label, edge label included;
  ordinal edge labels untouched); fits and calibration stay clean.
* :func:`train_size_curve` — 50/100/150 stratified train personas (⌊n/3⌋ per class, the
  remainder one each to the classes in alphabetical order), 5 draws each, or all 216.
* :func:`transfer` — resolvers fitted on the nominal data predict each variant without refit.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from ..resolvers._common import KQ
from ..testbed.config import TestbedConfig
from ..testbed.generate import generate
from ..testbed.labels import ground_truth_codes
from ..testbed.questions import QUESTIONS
from ..testbed.readout import readout
from .metrics import forced_accuracy
from .paper import GRID_METHODS
from .run import SeedRun, run_seed

__all__ = ["SCALES", "flip_atoms", "noise_curve", "perturbation_grid", "summarise_grid",
           "train_size_curve", "transfer"]

SCALES = (0.5, 1.0, 2.0)
_RIVALS = ("nbf", "abf", "bcf", "majority_vote", "ssb_global")


def _map(fn: Callable, tasks: Iterable, workers: int) -> list:
    """``map`` over tasks, in ``workers`` forked processes when > 1 (results in task order)."""
    tasks = list(tasks)
    workers = max(1, min(int(workers), len(tasks), os.cpu_count() or 1))
    if workers == 1:
        return [fn(t) for t in tasks]
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        return list(pool.map(fn, tasks))


def _grid_cell(task) -> list[dict]:
    base, b, d, methods = task
    tb = generate(replace(base, bias_scale=b, dropout_scale=d))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    seeds = tb.personas["seed"].to_numpy()
    rows = []
    for seed in pd.unique(seeds):
        m = seeds == seed
        run = run_seed(mu[m], gt[m], tb.personas[m].reset_index(drop=True),
                       methods=list(methods))
        for name in methods:
            rows.append({"bias": b, "dropout": d, "seed": int(seed), "method": name,
                         "accuracy": 100 * forced_accuracy(
                             run.predictions[name].answer == run.gt)})
    return rows


def perturbation_grid(base: TestbedConfig, *, scales: Sequence[float] = SCALES,
                      methods: Sequence[str] = GRID_METHODS, workers: int = 1) -> dict:
    """Refit ``methods`` on every (bias_scale, dropout_scale) variant of ``base``.

    Returns a dict with ``table`` (long: bias, dropout, seed, method, accuracy %),
    ``mean`` (variant × method, mean over seeds), ``tau`` (per-seed pairs of variants),
    ``tau_mean`` and ``dsnbf_wins`` / ``cells``. ``workers`` > 1 runs variants in parallel
    processes (same results).
    """
    tasks = [(base, b, d, tuple(methods)) for b, d in itertools.product(scales, scales)]
    rows = [row for cell in _map(_grid_cell, tasks, workers) for row in cell]
    return summarise_grid(pd.DataFrame(rows), methods)


def summarise_grid(table: pd.DataFrame, methods: Sequence[str]) -> dict:
    """The perturbation grid's reductions of its long ``table`` (bias, dropout, seed, method,
    accuracy %), rows in variant, seed, method order: ``mean`` (variant × method, mean over
    seeds), ``tau`` (Kendall τ of the method accuracies between every pair of variants, per
    seed), ``tau_mean``, and ``dsnbf_wins`` of ``cells`` (DSNBF above every rival present).
    Seed 000 §12.2 (the 3 × 3 perturbation grid). Shared with :mod:`core.sweep.protocols`.
    """
    methods = list(methods)
    mean = table.pivot_table(index=["bias", "dropout"], columns="method", values="accuracy",
                             aggfunc="mean")[methods].reset_index()
    taus, wins, cells = [], 0, 0
    for seed, g in table.groupby("seed"):
        acc = g.pivot_table(index=["bias", "dropout"], columns="method",
                            values="accuracy")[methods]
        for (i, a), (j, c) in itertools.combinations(enumerate(acc.to_numpy()), 2):
            taus.append({"seed": seed, "a": acc.index[i], "b": acc.index[j],
                         "tau": float(kendalltau(a, c).statistic)})
        if "dsnbf" in methods:
            rivals = [r for r in _RIVALS if r in methods]
            for _, row in acc.iterrows():
                cells += 1
                wins += bool(all(row["dsnbf"] > row[r] for r in rivals))
    tau = pd.DataFrame(taus)
    return {"table": table, "mean": mean, "tau": tau,
            "tau_mean": float(tau["tau"].mean()) if len(tau) else float("nan"),
            "dsnbf_wins": wins, "cells": cells}


def flip_atoms(atoms: np.ndarray, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Flip each non-null atom with probability ``eps`` (rules in the module docstring)."""
    if not 0 <= eps <= 1:
        raise ValueError(f"eps must be in [0, 1], got {eps}")
    out = atoms.copy()
    flip = (atoms >= 0) & (rng.random(atoms.shape) < eps)
    up = rng.random(atoms.shape) < 0.5
    other = rng.random(atoms.shape)
    for j, q in enumerate(QUESTIONS):
        a = atoms[:, j, :]
        f = flip[:, j, :]
        if q.ordinal:
            rank = np.full(q.k, -1)
            rank[list(q.order)] = np.arange(len(q.order))
            order = np.asarray(q.order)
            r = rank[np.maximum(a, 0)]
            move = f & (r >= 0)  # edge labels of ordinal questions are untouched
            step = np.where(up[:, j, :], 1, -1)
            step = np.where(r == 0, 1, np.where(r == len(order) - 1, -1, step))
            new = order[np.clip(r + step, 0, len(order) - 1)]
            out[:, j, :] = np.where(move, new, a)
        else:
            k = int(KQ[j])
            shift = 1 + np.floor(other[:, j, :] * (k - 1)).astype(int)  # 1..k-1
            out[:, j, :] = np.where(f, (a + shift) % k, a)
    return out.astype(np.int8)


def noise_curve(runs: Sequence[SeedRun], *, eps: Sequence[float] = (0.0, 0.1, 0.2, 0.3, 0.5),
                methods: Sequence[str] = ("dsnbf", "nbf", "abf", "bcf", "majority_vote"),
                seed: int = 12345) -> pd.DataFrame:
    """Accuracy (%) of already-fitted ``methods`` on noisy test atoms; mean over seeds."""
    rows = []
    for e in eps:
        for r in runs:
            noisy = flip_atoms(r.atoms, e, np.random.default_rng([seed, r.seed]))
            for m in methods:
                if m not in r.models:
                    continue
                p = r.models[m].predict(noisy)
                rows.append({"eps": e, "seed": r.seed, "method": m,
                             "accuracy": 100 * forced_accuracy(p.answer == r.gt)})
    df = pd.DataFrame(rows)
    return df.groupby(["eps", "method"], as_index=False)["accuracy"].mean()


def _stratified_subsample(difficulty: np.ndarray, n: int, rng: np.random.Generator
                          ) -> np.ndarray:
    classes = sorted(pd.unique(difficulty))  # alphabetical
    per = {c: n // len(classes) for c in classes}
    for c in classes[: n % len(classes)]:
        per[c] += 1
    pick = [rng.choice(np.flatnonzero(difficulty == c), size=per[c], replace=False)
            for c in classes]
    return np.sort(np.concatenate(pick))


def _size_task(task) -> list[dict]:
    mu, gt, personas, sizes, repeats, methods = task
    train_diff = personas.loc[personas["split"] == "train", "difficulty"].to_numpy()
    plans = [(len(train_diff), None)]
    for n in sizes:
        for i in range(repeats):
            plans.append((n, _stratified_subsample(train_diff, n, np.random.default_rng(42 + i))))
    rows = []
    for n, idx in plans:
        run = run_seed(mu, gt, personas, methods=list(methods), train_index=idx)
        for name in methods:
            rows.append({"train_size": n, "seed": int(personas["seed"].iloc[0]), "method": name,
                         "accuracy": 100 * forced_accuracy(
                             run.predictions[name].answer == run.gt)})
    return rows


def train_size_curve(tb, *, sizes: Sequence[int] = (50, 100, 150), repeats: int = 5,
                     methods: Sequence[str] = ("dsnbf", "abf", "ssb"),
                     workers: int = 1) -> pd.DataFrame:
    """Accuracy (%) against the number of train personas (mean over draws and seeds)."""
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    seeds = tb.personas["seed"].to_numpy()
    tasks = []
    for seed in pd.unique(seeds):
        m = seeds == seed
        tasks.append((mu[m], gt[m], tb.personas[m].reset_index(drop=True), tuple(sizes),
                      repeats, tuple(methods)))
    df = pd.DataFrame([row for part in _map(_size_task, tasks, workers) for row in part])
    return df.groupby(["train_size", "method"], as_index=False)["accuracy"].mean()


def transfer(runs: Sequence[SeedRun], base: TestbedConfig, *, scales: Sequence[float] = SCALES,
             methods: Sequence[str] = ("dsnbf", "nbf")) -> pd.DataFrame:
    """Nominally fitted resolvers on every variant's test split, without refitting (%)."""
    by_seed = {r.seed: r for r in runs}
    rows = []
    for b, d in itertools.product(scales, scales):
        tb = generate(replace(base, bias_scale=b, dropout_scale=d))
        gt, _ = ground_truth_codes(tb)
        mu = readout(tb)
        test = tb.personas["split"].to_numpy() == "test"
        seeds = tb.personas["seed"].to_numpy()
        for seed, r in by_seed.items():
            m = test & (seeds == seed)
            for name in methods:
                p = r.models[name].predict(mu[m])
                rows.append({"bias": b, "dropout": d, "seed": seed, "method": name,
                             "accuracy": 100 * forced_accuracy(p.answer == gt[m])})
    df = pd.DataFrame(rows)
    return df.groupby(["bias", "dropout", "method"], as_index=False)["accuracy"].mean()
