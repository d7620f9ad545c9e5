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
* The pages' view objects (one per panel, shared and read-only): :func:`leaderboard_split`
  (:func:`require_split` stops the page when the store has none, or returns None for a store
  that holds imported LLM answers only), :func:`load_llm_rows` and
  :func:`leaderboard_imported` (the imported LLM answers' rows, :mod:`core.evaluation.llm_rows`;
  None when the store has none), :func:`leaderboard_board`,
  :func:`leaderboard_sources`, :func:`leaderboard_confusion`, :func:`leaderboard_learned`
  (:mod:`core.evaluation.leaderboard_view`), :func:`lab_view_of` and :func:`lab_grid_view`
  (:mod:`core.evaluation.lab_view`), :func:`lab_seeds`; :func:`show_table` draws a view's
  :class:`~core.evaluation.display.Table` and its download buttons, :func:`show_chart` a
  cached figure and its downloads, :func:`reset_knobs` puts the lab's knobs back.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation.cached import load_arrays, load_runs, persona_predictions
from core.evaluation.diagnostics import source_reliability, source_summary
from core.evaluation.display import Table
from core.evaluation.lab import LabResult, run_lab
from core.evaluation.lab_view import GridView, LabView, grid_view, lab_view
from core.evaluation.leaderboard_view import (
    BoardView,
    ConfusionView,
    ImportedView,
    SourcesView,
    SplitFacts,
    board_view,
    confusion_view,
    imported_view,
    learned_table,
    sources_view,
    split_facts,
)
from core.evaluation.llm_rows import LLMRows, llm_rows, load_llm_inputs
from core.evaluation.metrics import RiskCoverage, risk_coverage
from core.evaluation.robustness import perturbation_grid
from core.evaluation.run import SeedRun, run_seed
from core.evaluation.selective import sweep
from core.evaluation.selective_view import (
    SelectiveView,
    ThresholdChoice,
    selective_view,
    threshold_choice,
)
from core.evaluation.tables import (
    main_table,
    per_difficulty_table,
    per_type_table,
    pooled,
    reachability_slices,
    selective_table,
)
from core.figures.selective import risk_coverage_figure, threshold_figure
from core.figures.style import CURRENT_COLOR, METHOD_SHORT, PAPER_COLOR, method_color
from core.resolvers.nbf import NBF
from core.store import StoreError
from core.testbed.config import DEFAULT_SEEDS, TestbedConfig
from core.urlparams import NumberParam

from .cache import cached_figure, cached_result, shared_cache
from .store import get_connection, load_store_info, public_message, store_guard, store_stamp
from .ui import download_table, escape_markdown, number_table, plotly_config, table_height
from .widths import TABLE_WIDTH, cell_text, fit_columns, text_px
from .workers import Call, cached_calls, result_store

__all__ = [
    "LAB_N_BOOT",
    "fit_nbf",
    "lab_grid",
    "lab_grid_view",
    "lab_pair",
    "lab_personas",
    "lab_seeds",
    "lab_view_of",
    "leaderboard_board",
    "leaderboard_confusion",
    "leaderboard_imported",
    "leaderboard_learned",
    "leaderboard_sources",
    "leaderboard_split",
    "require_split",
    "show_chart",
    "reset_knobs",
    "load_cached_runs",
    "load_llm_rows",
    "load_main_table",
    "load_persona_predictions",
    "load_risk_coverage",
    "load_selective_runs",
    "load_sweep",
    "load_tables",
    "show_table",
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


@shared_cache(max_entries=8)
def load_threshold_choice(path: str, stamp: int, method: str) -> ThresholdChoice:
    """:func:`core.evaluation.selective_view.threshold_choice` of ``method`` (every seed)."""
    return threshold_choice(load_selective_runs(path, stamp, method), method)


def theta_param(choice: ThresholdChoice) -> NumberParam:
    """The ``theta`` URL spec on the method's grid, defaulting to the median calibrated θ."""
    return NumberParam("theta", "threshold", choice.lo, choice.hi, choice.step, choice.median)


@shared_cache(max_entries=64)
def selective_panel(path: str, stamp: int, method: str, theta: float):
    """``(SelectiveView, risk–coverage figure, threshold figure)`` of ``method`` at θ."""
    view: SelectiveView = selective_view(load_selective_runs(path, stamp, method), method,
                                         theta=theta, sweep=load_sweep(path, stamp, method))
    points = [{"coverage": view.points["calibrated"][0], "risk": view.points["calibrated"][1],
               "name": "each seed's calibrated θ", "symbol": "diamond-open", "size": 17,
               "color": PAPER_COLOR},
              {"coverage": view.points["theta"][0], "risk": view.points["theta"][1],
               "name": f"θ = {view.theta:.2f} for every seed", "color": CURRENT_COLOR,
               "size": 10}]
    rc = risk_coverage_figure(load_risk_coverage(path, stamp, method),
                              color=method_color(method), name=METHOD_SHORT[method],
                              points=points, title="Risk–coverage (pooled over seeds)")
    th = threshold_figure(load_sweep(path, stamp, method), theta=view.theta,
                          calibrated=view.choice.calibrated, label=view.choice.label,
                          forced=view.forced,
                          title="What the threshold buys (mean over seeds)")
    return view, rc, th


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



# ---------------------------------------------------------------- the pages' view objects
@shared_cache(max_entries=4)
def leaderboard_split(path: str, stamp: int) -> SplitFacts:
    """The seeds and clusters of the store's test split (``StoreError`` if it has none)."""
    return split_facts(load_cached_runs(path, stamp))


def require_split(path: str, stamp: int, *, optional: bool = False) -> SplitFacts | None:
    """:func:`leaderboard_split`, or one error line and the end of the script when the
    store has no resolver results (``optional=True``: None instead, for a page that has
    something else to show)."""
    with store_guard():
        try:
            return leaderboard_split(path, stamp)
        except StoreError as exc:
            if optional:
                return None
            st.error(f"No resolver results to show: {public_message(exc)}",
                     icon=":material/database:")
            st.stop()


@shared_cache(max_entries=8, spinner="Scoring the imported model answers…")
def load_llm_rows(path: str, stamp: int, b: int) -> LLMRows | None:
    """The imported LLM answers' board rows with ``b`` replicates (None: the store has none)."""
    answers, truth = load_llm_inputs(get_connection(path, stamp))
    rows = llm_rows(answers, truth, b=int(b)) if len(answers) else None
    return None if rows is None or rows.empty else rows


@shared_cache(max_entries=4)
def leaderboard_imported(path: str, stamp: int) -> ImportedView | None:
    """The imported LLM answers on their own (2,000 replicates; None: the store has none)."""
    rows = load_llm_rows(path, stamp, 2000)
    return None if rows is None else imported_view(rows)


@shared_cache(max_entries=32)
def leaderboard_board(path: str, stamp: int, b: int, methods: tuple[str, ...]) -> BoardView:
    """The Leaderboard's board panel: ``b`` replicates, ``methods`` shown (board order), and
    the imported LLM answers' rows when the store has any."""
    return board_view(load_main_table(path, stamp, int(b)), load_tables(path, stamp),
                      methods=tuple(methods), b=int(b), llm=load_llm_rows(path, stamp, int(b)))


@shared_cache(max_entries=4)
def leaderboard_sources(path: str, stamp: int) -> SourcesView:
    """Per-source reliability over the pooled test atoms (download: per source and question)."""
    tables = load_tables(path, stamp)
    return sources_view(tables["sources"], tables["reliability"])


@shared_cache(max_entries=4)
def _pooled_test(path: str, stamp: int) -> tuple[np.ndarray, np.ndarray]:
    runs = load_cached_runs(path, stamp)
    return np.concatenate([r.atoms for r in runs]), np.concatenate([r.gt for r in runs])


@shared_cache(max_entries=64)
def leaderboard_confusion(path: str, stamp: int, qid: str, source: str) -> ConfusionView:
    """One question and source: reliability row and empirical confusion counts (pooled)."""
    atoms, gt = _pooled_test(path, stamp)
    return confusion_view(atoms, gt, load_tables(path, stamp)["reliability"], qid=qid,
                          source=source)


@shared_cache(max_entries=64)
def leaderboard_learned(path: str, stamp: int, seed: int, qid: str, source: str) -> Table:
    """NBF's learned confusion table of ``qid`` and ``source``, fitted on ``seed``."""
    return learned_table(fit_nbf(path, stamp, int(seed)), qid=qid, source=source,
                         seed=int(seed))


def lab_seeds(path: str) -> tuple[int, ...]:
    """The seeds the Bias lab offers: the store's and the paper's four, sorted."""
    with store_guard():
        info = load_store_info(path, store_stamp(path))
    return tuple(sorted({int(s) for s in info["seeds"]} | set(DEFAULT_SEEDS)))


def reset_knobs(specs) -> None:
    """Put every knob of ``specs`` back to its default and drop it from the URL (a button's
    ``on_click``)."""
    for spec in specs:
        st.session_state[spec.key] = spec.default
        if spec.key in st.query_params:
            del st.query_params[spec.key]


def lab_view_of(seed: int, bias_scale: float, dropout_scale: float,
                mix: tuple[float, float, float], personas_per_difficulty: int) -> LabView:
    """The Bias lab's view of one setting (its two runs from :func:`lab_pair`), cached."""
    nominal, variant = lab_pair(seed, bias_scale, dropout_scale, mix, personas_per_difficulty)
    key = (int(seed), float(bias_scale), float(dropout_scale), tuple(mix),
           int(personas_per_difficulty))
    return cached_result("lab_view", key, lambda: lab_view(
        nominal, variant, seed=int(seed), bias_scale=float(bias_scale),
        dropout_scale=float(dropout_scale), mix=tuple(mix),
        personas_per_difficulty=int(personas_per_difficulty)))


@shared_cache(max_entries=8)
def lab_grid_view(seed: int, personas_per_difficulty: int) -> GridView:
    """The grid of :func:`lab_grid` beside the paper's values."""
    return grid_view(lab_grid(int(seed), int(personas_per_difficulty)), seed=int(seed))


def _shown(table: Table) -> tuple[Table, tuple[pd.DataFrame, dict]]:
    # the entry holds ``table`` itself, so its id cannot be reused while the entry lives
    return cached_result("view_table", (id(table),), lambda: (table, number_table(
        table.shown, labels=table.labels, formats=table.formats)))


def _as_text(frame: pd.DataFrame, config: dict) -> pd.DataFrame:
    """``frame`` printed as the dataframe would print it (``config``'s titles and number
    formats), as text made inert for ``st.table``, which renders its cells as markdown."""
    out = {}
    for col in frame.columns:
        cfg = config.get(col) or {}
        fmt = (cfg.get("type_config") or {}).get("format")
        out[escape_markdown(cfg.get("label") or str(col))] = [
            escape_markdown(cell_text(v, fmt)) for v in frame[col]]
    index = pd.Index([escape_markdown(v) for v in frame.index],
                     name=escape_markdown(frame.index.name) if frame.index.name else None)
    return pd.DataFrame(out, index=index)


def show_table(table: Table, *, key: str, what: str, fit: bool = False,
               whole: bool = False) -> None:
    """``st.dataframe`` of a view's table (formats cached with it) and its two downloads.

    ``fit=True`` sizes the frame to show every row without scrolling; ``whole=True`` gives
    every column the width of its title and widest cell (:func:`.records.fit_columns`), so
    no name is cut where the browser's own sizing would cut it; a matrix (a table with an
    index) too wide for the main column at 1280 px is drawn as an HTML table instead, whose
    titles wrap.
    """
    held, (shown, config) = _shown(table)
    if held is not table:  # cannot happen (see _shown); recompute rather than show another
        shown, config = number_table(table.shown, labels=table.labels, formats=table.formats)
    if whole:
        config = fit_columns(shown, config)
        index = (math.ceil(max(text_px(v) for v in [shown.index.name or "", *shown.index]))
                 + 17) if table.index else 0
        if table.index and index + sum(c["width"] for c in config.values()) > TABLE_WIDTH:
            # a matrix whose titles are long answers: an HTML table wraps them
            st.table(_as_text(shown, config))
            download_table(table.full, stem=table.stem, key=key, what=what)
            return
    st.dataframe(shown, column_config=config, hide_index=not table.index, width="stretch",
                 height=table_height(len(shown)) if fit else "auto")
    download_table(table.full, stem=table.stem, key=key, what=what)


def show_chart(name: str, key: tuple, build, *, file_name: str, download=None) -> None:
    """A figure shared across sessions under ``(name, key)`` (:func:`.cache.cached_figure`),
    drawn with widget key ``name``; ``download=(frame, stem, what)`` adds its two download
    buttons, keyed ``<page>_dl_<rest>`` (``lb_types`` → ``lb_dl_types``)."""
    st.plotly_chart(cached_figure(name, key, build), key=name, config=plotly_config(file_name))
    if download is not None:
        frame, stem, what = download
        page, _, rest = name.partition("_")
        download_table(frame, stem=stem, key=f"{page}_dl_{rest}", what=what)
