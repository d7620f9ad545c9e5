"""Cached loaders of the evaluation pages (Leaderboard, Bias lab, Selective QA, Walkthrough).

Every function is a cached wrapper around ``core`` keyed on small values only: the
store path and its modification stamp (so a rebuilt store never serves stale results), a
bootstrap size, a seed, a method name, the bias-lab knobs. Nothing here takes an array or a
frame as an argument, and every cache is bounded (``max_entries``). Small frames go through
``st.cache_data`` (each caller gets a copy); fitted runs, models and result objects through
:func:`shared_cache` (one shared, read-only object: no unpickling on every rerun).

* Store-backed: :func:`load_cached_runs` (the store's cached predictions, no refit),
  :func:`load_main_table` and :func:`load_tables` (seed-000 tables), :func:`fit_nbf` (NBF
  refitted on one seed, for its learned confusion tables), :func:`load_selective_runs` and
  :func:`load_sweep` (a selective method refitted on every seed, for its skip rule),
  :func:`load_persona_predictions`.
* Store-free: :func:`lab_pair` (the nominal and one bias-lab setting of one seed) and
  :func:`lab_grid` (the 3 × 3 bias × dropout grid of one seed).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation.cached import load_arrays, load_runs, persona_predictions
from core.evaluation.diagnostics import source_reliability, source_summary
from core.evaluation.lab import LabResult, run_lab
from core.evaluation.metrics import RiskCoverage, risk_coverage
from core.evaluation.robustness import perturbation_grid
from core.evaluation.run import SeedRun, run_seed
from core.evaluation.selective import sweep
from core.evaluation.tables import (
    main_table,
    per_difficulty_table,
    per_type_table,
    pooled,
    reachability_slices,
    selective_table,
)
from core.resolvers.nbf import NBF
from core.testbed.config import TestbedConfig

from .cache import shared_cache
from .store import get_connection
from .workers import Call, cached_calls, result_store

__all__ = [
    "LAB_N_BOOT",
    "fit_nbf",
    "lab_grid",
    "lab_pair",
    "lab_personas",
    "load_cached_runs",
    "load_main_table",
    "load_persona_predictions",
    "load_risk_coverage",
    "load_selective_runs",
    "load_sweep",
    "load_tables",
]



#: Bootstrap replicates of the bias lab's per-method intervals (one seed, 120 clusters).
LAB_N_BOOT = 200


def lab_personas() -> int:
    """Personas per difficulty class in the bias lab: ``$ARBITER_LAB_PERSONAS`` or 160."""
    raw = os.environ.get("ARBITER_LAB_PERSONAS", "")
    try:
        n = int(raw)
    except ValueError:
        return 160
    return n if 4 <= n <= 1000 else 160


# ---------------------------------------------------------------- store-backed
@shared_cache(max_entries=4, spinner="Loading the cached predictions…")
def load_cached_runs(path: str, stamp: int) -> list[SeedRun]:
    """:func:`core.evaluation.cached.load_runs` (``StoreError`` if the store has none)."""
    return load_runs(get_connection(path, stamp))


@st.cache_data(show_spinner="Bootstrapping the intervals…", max_entries=8)
def load_main_table(path: str, stamp: int, b: int) -> pd.DataFrame:
    """The forced table with ``b`` cluster-bootstrap replicates (seed 42)."""
    return main_table(load_cached_runs(path, stamp), b=int(b))


@st.cache_data(show_spinner="Computing the tables…", max_entries=4)
def load_tables(path: str, stamp: int) -> dict[str, pd.DataFrame]:
    """Every bootstrap-free table of the Leaderboard, by name.

    ``selective``, ``per_type``, ``per_difficulty``, ``slices`` (reachability), ``sources``
    (per source, pooled over questions; percent) and ``reliability`` (per source and
    question; percent), the last two over the pooled test atoms of every seed.
    """
    runs = load_cached_runs(path, stamp)
    atoms = np.concatenate([r.atoms for r in runs])
    gt = np.concatenate([r.gt for r in runs])
    pct = ["coverage", "conflict_rate", "accuracy", "acc_low", "acc_high"]
    sources = source_summary(atoms, gt)
    sources[pct] *= 100
    reliability = source_reliability(atoms, gt)
    reliability[pct] *= 100
    return {"selective": selective_table(runs), "per_type": per_type_table(runs),
            "per_difficulty": per_difficulty_table(runs), "slices": reachability_slices(runs),
            "sources": sources, "reliability": reliability}


@shared_cache(max_entries=4)
def _fit_arrays(path: str, stamp: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    return load_arrays(get_connection(path, stamp))


def _seed_arrays(path: str, stamp: int, seed: int):
    personas, gt, atoms = _fit_arrays(path, stamp)
    mask = personas["seed"].to_numpy() == int(seed)
    if not mask.any():
        raise ValueError(f"seed {seed} is not in the store")
    return atoms[mask], gt[mask], personas[mask].reset_index(drop=True)


@shared_cache(max_entries=8, spinner="Fitting NBF on the seed's train split…")
def fit_nbf(path: str, stamp: int, seed: int) -> NBF:
    """NBF fitted on one seed's train split (calibrated on its calibration split)."""
    atoms, gt, personas = _seed_arrays(path, stamp, seed)
    return run_seed(atoms, gt, personas, methods=["nbf"]).models["nbf"]


@shared_cache(max_entries=8, spinner="Refitting the method on every seed…")
def load_selective_runs(path: str, stamp: int, method: str) -> list[SeedRun]:
    """``method`` refitted on every seed of the store (fresh runs keep the fitted model, which
    :func:`core.evaluation.selective.skip_rule` needs)."""
    personas, _, _ = _fit_arrays(path, stamp)
    return [run_seed(*_seed_arrays(path, stamp, int(s)), methods=[method])
            for s in pd.unique(personas["seed"])]


@st.cache_data(show_spinner=False, max_entries=8)
def load_sweep(path: str, stamp: int, method: str) -> pd.DataFrame:
    """:func:`core.evaluation.selective.sweep` of ``method`` over its grid."""
    return sweep(load_selective_runs(path, stamp, method), method)


@shared_cache(max_entries=8)
def load_risk_coverage(path: str, stamp: int, method: str) -> RiskCoverage:
    """Risk–coverage of ``method``'s answers pooled over seeds, ordered by confidence."""
    p = pooled(load_cached_runs(path, stamp), method)
    return risk_coverage(p["confidence"], p["correct"])


@st.cache_data(show_spinner=False, max_entries=64)
def load_persona_predictions(path: str, stamp: int, seed: int,
                             persona_id: str) -> pd.DataFrame:
    """One persona's cached predictions (empty outside the test split)."""
    return persona_predictions(get_connection(path, stamp), seed=int(seed),
                               persona_id=str(persona_id))


# ---------------------------------------------------------------- bias lab (no store)
#: Bias-lab settings kept across sessions (each result about 0.7 MB).
LAB_STORE_ENTRIES = 48


def _lab_key(seed, bias_scale, dropout_scale, mix, personas_per_difficulty, n_boot) -> tuple:
    return (int(seed), float(bias_scale), float(dropout_scale),
            tuple(float(w) for w in mix), int(personas_per_difficulty), int(n_boot))


def _lab_call(key: tuple) -> Call:
    seed, bias, dropout, mix, ppd, n_boot = key
    return Call(run_lab, (), dict(seed=seed, bias_scale=bias, dropout_scale=dropout, mix=mix,
                                  personas_per_difficulty=ppd, n_boot=n_boot,
                                  keep_models=False))


def lab_pair(seed: int, bias_scale: float, dropout_scale: float,
             mix: tuple[float, float, float], personas_per_difficulty: int,
             n_boot: int = LAB_N_BOOT) -> tuple[LabResult, LabResult]:
    """The nominal setting and this one: :func:`core.evaluation.lab.run_lab` of each.

    Shared by every session under the small knobs; misses run on the worker pool
    (:mod:`pages._shared.workers`), both at once when both are new. The fitted models are
    dropped (the page reads the leaderboard and the sources only).
    """
    nominal = _lab_key(seed, 1.0, 1.0, (1.0, 1.0, 1.0), personas_per_difficulty, n_boot)
    variant = _lab_key(seed, bias_scale, dropout_scale, mix, personas_per_difficulty, n_boot)
    calls = {"nominal": (nominal, lambda: _lab_call(nominal))}
    if variant != nominal:
        calls["variant"] = (variant, lambda: _lab_call(variant))
    out = cached_calls(result_store("lab", LAB_STORE_ENTRIES), calls)
    return out["nominal"], out.get("variant", out["nominal"])


@shared_cache(max_entries=8)
def lab_grid(seed: int, personas_per_difficulty: int) -> dict:
    """:func:`core.evaluation.robustness.perturbation_grid` on one seed (serial; ~5 s)."""
    base = TestbedConfig(seeds=(int(seed),),
                         personas_per_difficulty=int(personas_per_difficulty))
    return perturbation_grid(base)

