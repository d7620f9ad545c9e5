"""Streamlit glue of the seed-003 pages (Reliability, Ranking reversal, Pilot budget).

Import it directly: ``from pages._shared.seed003 import ...``. Everything expensive is an
``st.cache_data`` function keyed on small values only — the scenario's four knobs as scalars,
the store path and its modification stamp, a method or source name, a budget, a number of
repetitions — and every cache is bounded (``max_entries``). Frames derived inside a cached
function from those values never enter a cache key; where a computed table is needed as input
(the reliability analysis), it is passed as an ``_``-prefixed (unhashed) argument next to a
small key that determines it.

Data the pages diagnose:

* the **synthetic scenario** (:func:`load_scenario`; default = seed 003's Table 2);
* the **real NQ-open case** from the store's ``nq301_items`` / ``nq301_answers`` tables
  (:func:`load_nq301`, :func:`load_nq_rules` adds the agreement-location and constant rules);
* the **seed-000 resolvers** (:func:`load_seed000_runs`, :func:`load_bridge`);
* an **uploaded CSV** (:func:`read_upload`: a bad file gives one ``st.error`` line and the
  previous file stays in use).

Downloads: :func:`download_row` (CSV, Parquet and the figure as standalone HTML; the figure's
PNG is the camera button of its toolbar, named by :func:`pages._shared.ui.plotly_config`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.calibration.bridge import bridge_analysis, bridge_items
from core.calibration.nq301_pilot import real_pilot_budgets
from core.calibration.nq301_rules import location_rules, rule_pairs
from core.calibration.pilot import PilotSimulation, budget_curve, judge_sensitivity, simulate_pilots
from core.calibration.pilot_walk import Algorithm1Walk, walk_algorithm1
from core.calibration.reliability_view import (
    ReliabilityView,
    label_of,
    rule_frame,
    weights_of,
)
from core.calibration.reliability_view import reliability_view as compute_reliability_view
from core.calibration.report import read_score_csv
from core.calibration.scenario import (
    DEFAULT_SCENARIO,
    ScenarioConfig,
    generate_scenario,
    transfer_config,
)
from core.calibration.scenario_runs import curve_for, pilots_for, walk_for
from core.calibration.score_view import ScoreView, score_view
from core.calibration.smooth import (
    SmoothBand,
    smooth_consistency_band,
)
from core.calibration.summary import score_summary
from core.evaluation.cached import load_runs
from core.evaluation.run import SeedRun
from core.glossary import tip
from core.store import StoreError, query_df
from core.urlparams import NumberParam

from .cache import shared_cache
from .params import url_slider
from .store import get_connection, public_message, store_guard
from .ui import csv_bytes, parquet_bytes, plotly_config
from .uploads import keep_last_good
from .widths import EXPANDER_TABLE_WIDTH, fit_columns
from .workers import Call, cached_calls, result_store, worker_count

__all__ = [
    "BRIDGE_METHODS",
    "NQ_CONSTANT_RULES",
    "NQ_LOCATION_RULES",
    "SCENARIO_KNOBS",
    "Knob",
    "ReliabilityView",
    "SmoothBand",
    "distinct_rules",
    "default_scenario_knobs",
    "download_row",
    "example_upload",
    "load_bridge",
    "load_nq301",
    "load_nq_rules",
    "load_scenario",
    "load_seed000_runs",
    "nq_answers_or_stop",
    "pilot_results",
    "read_upload",
    "reliability_view",
    "rule_frame",
    "run_judge_check",
    "run_real_pilot",
    "run_rule_pairs",
    "run_walk",
    "scenario_config",
    "scenario_controls",
    "scenario_params",
    "score_panels",
    "score_table",
    "show_figure",
    "show_split_table",
    "smooth_consistency_band",
]


# ---------------------------------------------------------------- the scenario's knobs
@dataclass(frozen=True)
class Knob:
    """One slider of the synthetic scenario (a :class:`ScenarioConfig` field)."""

    suffix: str
    field: str
    label: str
    lo: float
    hi: float
    step: float
    help: str

    @property
    def default(self) -> float:
        """The value of :data:`core.calibration.scenario.DEFAULT_SCENARIO` (Table 2)."""
        return float(getattr(DEFAULT_SCENARIO, self.field))


#: The sliders of the synthetic scenario, in page order (the widget key is
#: ``<page prefix>_<suffix>``, also the URL parameter).
SCENARIO_KNOBS: tuple[Knob, ...] = (
    Knob("omit", "omission_rate", "Omission rate P(Z = 0 | Y = 1)", 0.0, 0.95, 0.005,
         "Share of true beliefs the finite reference + matcher leaves unmatched (recorded "
         "false). The answer-key paper's default scenario: .655."),
    Knob("fmr", "false_match_rate", "False-match rate P(Z = 1 | Y = 0)", 0.0, 0.5, 0.01,
         "Share of false beliefs the matcher pairs with a true reference proposition."),
    Knob("disc", "discrimination", "Discrimination of native confidence", 0.0, 3.0, 0.01,
         tip("native", "Here: the logit shift of native confidence between true and false "
             "beliefs (0 = none). The default (.23) gives AUROC ≈ .60, the answer-key paper's "
             "weak-discrimination regime.")),
    Knob("judge", "judge_quality", "Judge quality", 0.0, 1.0, 0.05,
         "How informative the two frozen automatic judges Q are (0 = noise). They only "
         "change TriSource-Restore's efficiency, never its target."),
)


def scenario_params(prefix: str, *, knobs: Sequence[str] | None = None) -> list[NumberParam]:
    """The URL specs of the scenario sliders of one page (on each slider's grid)."""
    use = [k for k in SCENARIO_KNOBS if knobs is None or k.suffix in knobs]
    return [NumberParam(f"{prefix}_{k.suffix}", k.label.split(" P(")[0].lower(), k.lo, k.hi,
                        k.step, round(k.default, 10)) for k in use]


def scenario_controls(prefix: str, *, knobs: Sequence[str] | None = None,
                      columns: int | None = None) -> dict[str, float]:
    """Draw the scenario sliders (bound to the URL) and return ``field → value`` of all four.

    Parameters
    ----------
    prefix : str
        The page's key prefix (``rel``, ``rr``, ``pb``).
    knobs : sequence of str, optional
        Suffixes to draw (default all); the others keep their default value.
    columns : int, optional
        Lay the sliders out in this many columns (default: one per slider).
    """
    use = [k for k in SCENARIO_KNOBS if knobs is None or k.suffix in knobs]
    specs = scenario_params(prefix, knobs=knobs)
    values = {k.field: k.default for k in SCENARIO_KNOBS}
    cols = st.columns(columns or max(len(use), 1))
    for i, (k, spec) in enumerate(zip(use, specs, strict=True)):
        with cols[i % len(cols)]:
            fmt = "%.3f" if k.step < 0.01 else "%.2f"
            values[k.field] = float(url_slider(spec, k.label, format=fmt, help=k.help))
    return values


def scenario_config(*, omission_rate: float, false_match_rate: float, discrimination: float,
                    judge_quality: float) -> ScenarioConfig:
    """:data:`DEFAULT_SCENARIO` with the four knobs replaced."""
    return replace(DEFAULT_SCENARIO, omission_rate=float(omission_rate),
                   false_match_rate=float(false_match_rate),
                   discrimination=float(discrimination), judge_quality=float(judge_quality))


@st.cache_data(show_spinner=False, max_entries=16)
def load_transfer_scenario(omission_rate: float, false_match_rate: float, discrimination: float,
                           judge_quality: float) -> pd.DataFrame:
    """The transfer domain of :func:`load_scenario` (β and the repair's truth model learn on it).

    The same frame ``simulate_pilots`` would generate from the scenario's attrs, made once.
    """
    return generate_scenario(transfer_config(scenario_config(
        omission_rate=omission_rate, false_match_rate=false_match_rate,
        discrimination=discrimination, judge_quality=judge_quality)))


@st.cache_data(show_spinner=False, max_entries=16)
def load_scenario(omission_rate: float, false_match_rate: float, discrimination: float,
                  judge_quality: float) -> pd.DataFrame:
    """:func:`core.calibration.scenario.generate_scenario` of the knobs (one row per belief)."""
    return generate_scenario(scenario_config(
        omission_rate=omission_rate, false_match_rate=false_match_rate,
        discrimination=discrimination, judge_quality=judge_quality))


def default_scenario_knobs(knobs: Mapping[str, float]) -> bool:
    """Whether the four knobs are :data:`DEFAULT_SCENARIO`'s (seed 003's Table 2)."""
    return all(abs(float(v) - float(getattr(DEFAULT_SCENARIO, k))) < 1e-9
               for k, v in knobs.items())


@st.cache_data(show_spinner=False, max_entries=2)
def example_upload() -> pd.DataFrame:
    """An example upload: the default scenario, native as ``p`` and EG as ``p_b``."""
    ex = load_scenario(DEFAULT_SCENARIO.omission_rate, DEFAULT_SCENARIO.false_match_rate,
                       DEFAULT_SCENARIO.discrimination, float(DEFAULT_SCENARIO.judge_quality))
    return pd.DataFrame({"p": ex["native"].round(4), "y": ex["y"], "z": ex["z"],
                         "p_b": ex["eg"].round(4), "cluster": ex["cluster"],
                         "weight": ex["weight"].round(4)})


# ---------------------------------------------------------------- the store's data
#: The forced resolvers whose posterior confidence the Reliability page and the bridge offer.
BRIDGE_METHODS = ("dsnbf", "nbf", "abf", "bcf", "majority_vote", "dawid_skene")
#: NQ-open confidence rules besides raw agreement: location shifts of agreement, constants.
NQ_LOCATION_RULES = tuple(f"agree@{m:.2f}" for m in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8))
NQ_CONSTANT_RULES = tuple(f"const@{m:.2f}" for m in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8))


@st.cache_data(show_spinner=False, max_entries=4)
def load_nq301(path: str, stamp: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The NQ-open tables of the store: ``(items, answers)``.

    ``items`` is ``nq301_items`` (one row per question × system: Z, Y, judges, agreement);
    ``answers`` is ``nq301_answers`` (the 1,490 human-labelled answers). ``StoreError`` if the
    store was built without them.
    """
    con = get_connection(path, stamp)
    tables = set(query_df(con, "SELECT table_name FROM information_schema.tables")
                 ["table_name"])
    if not {"nq301_items", "nq301_answers"} <= tables:
        raise StoreError("the store has no NQ-open tables (rebuild it: python -m core build)")
    items = query_df(con, "SELECT * FROM nq301_items ORDER BY qid, system")
    answers = query_df(con, "SELECT * FROM nq301_answers ORDER BY item")
    return items, answers


@st.cache_data(show_spinner=False, max_entries=4)
def load_nq_rules(path: str, stamp: int) -> pd.DataFrame:
    """The 1,490 answers with every NQ-open rule as a column.

    ``agreement`` (the share of the 12 systems giving the same normalised answer),
    ``agree@m`` (:func:`core.calibration.nq301_rules.location_rules`: logit shifts of smoothed
    agreement to item mean m; same ranking, different location) and ``const@m``.
    """
    _, answers = load_nq301(path, stamp)
    loc = location_rules(answers)
    const = location_rules(answers, family="constant")
    return pd.concat([answers.reset_index(drop=True), loc, const], axis=1)


def nq_answers_or_stop(path: str, stamp: int) -> pd.DataFrame:
    """:func:`load_nq_rules`, or one ``st.error`` line and the end of the run without them."""
    with store_guard():
        try:
            return load_nq_rules(path, stamp)
        except StoreError as exc:
            st.error(f"The NQ-open case is not available: {public_message(exc)}",
                     icon=":material/database:")
            st.stop()


def distinct_rules(rule_a: str, rule_b: str) -> str:
    """Rule B, or another rule (with one warning) when it equals rule A."""
    if rule_a != rule_b:
        return rule_b
    other = "const@0.50" if rule_a != "const@0.50" else "agreement"
    st.warning(f"Rule A and rule B are both {rule_a}; comparing {rule_a} with {other} "
               "instead.", icon=":material/warning:")
    return other


@shared_cache(max_entries=4, spinner="Loading the cached resolver predictions…")
def load_seed000_runs(path: str, stamp: int) -> list[SeedRun]:
    """:func:`core.evaluation.cached.load_runs` (``StoreError`` if the store has none)."""
    return load_runs(get_connection(path, stamp))


@st.cache_data(show_spinner=False, max_entries=24)
def load_bridge(path: str, stamp: int, method: str,
                reference: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The memory-testbed bridge of one resolver and one reference source.

    Returns ``(items, analysis)``: :func:`core.calibration.bridge.bridge_items` (one row per
    answered test item: ``c_a`` the resolver's posterior, ``c_b`` the source-tier prior, ``y``,
    ``z``) and :func:`core.calibration.bridge.bridge_analysis` (overall and per family).
    """
    runs = load_seed000_runs(path, stamp)
    items = bridge_items(runs, method=method, reference=reference)
    return items, bridge_analysis(items)


# ---------------------------------------------------------------- pilots
#: Results kept across sessions by the pilot glue (each a few hundred kB).
PILOT_STORE_ENTRIES = 96


def _pilot_store():
    return result_store("pilots", PILOT_STORE_ENTRIES)


def _scenario_call(kind: str, knobs: tuple[float, ...], **kwargs) -> Call:
    """The call of ``kind`` ("pilots", "curve" or "walk") on the scenario of ``knobs``.

    With a worker pool the call carries the configuration only (the worker generates the
    frames, :mod:`core.calibration.scenario_runs`); without one it uses this process's
    cached frames. Both give the same result.
    """
    if worker_count() > 0:
        fn = {"pilots": pilots_for, "curve": curve_for, "walk": walk_for}[kind]
        return Call(fn, (scenario_config(**dict(zip(_KNOB_NAMES, knobs, strict=True))),),
                    kwargs)
    fn = {"pilots": simulate_pilots, "curve": budget_curve, "walk": walk_algorithm1}[kind]
    return Call(fn, (load_scenario(*knobs),),
                {**kwargs, "source_frame": load_transfer_scenario(*knobs)})


_KNOB_NAMES = ("omission_rate", "false_match_rate", "discrimination", "judge_quality")


def _knobs(*values: float) -> tuple[float, float, float, float]:
    return tuple(float(v) for v in values)  # type: ignore[return-value]


def _pilots_entry(knobs, budget: int, reps: int, design: str, budget_kind: str,
                  seed: int = 0) -> tuple[tuple, Callable[[], Call]]:
    key = (*knobs, int(budget), int(reps), design, budget_kind, int(seed))
    return key, lambda: _scenario_call("pilots", knobs, budget=int(budget), reps=int(reps),
                                       design=design, budget_kind=budget_kind, seed=int(seed),
                                       heldout=True)


def _curve_entry(knobs, budgets: tuple[int, ...], reps: int, design: str,
                 budget_kind: str) -> tuple[tuple, Callable[[], Call]]:
    budgets = tuple(int(b) for b in budgets)
    key = (*knobs, budgets, int(reps), design, budget_kind)
    return key, lambda: _scenario_call("curve", knobs, budgets=budgets, reps=int(reps),
                                       design=design, budget_kind=budget_kind, seed=0)


def _walk_entry(knobs, seed: int, budget_steps: tuple[int, ...],
                design: str) -> tuple[tuple, Callable[[], Call]]:
    steps = tuple(int(b) for b in budget_steps)
    key = (*knobs, int(seed), steps, design)
    return key, lambda: _scenario_call("walk", knobs, budget_steps=steps, seed=int(seed),
                                       design=design)


def pilot_results(omission_rate: float, false_match_rate: float, discrimination: float,
                  judge_quality: float, budget: int, reps: int, design: str,
                  budget_kind: str, budgets: tuple[int, ...],
                  walk: tuple[int, tuple[int, ...], str] | None = None
                  ) -> tuple[PilotSimulation, pd.DataFrame]:
    """The pilots at ``budget`` and the budget curve over ``budgets``, computed together.

    :func:`core.calibration.pilot.simulate_pilots` (held-out repair on) and
    :func:`~core.calibration.pilot.budget_curve` on the scenario of the four knobs; both are
    shared by every session under their small settings, and when several are new they run
    side by side on the worker pool (:mod:`pages._shared.workers`). The curve does not depend
    on ``budget``, so moving the budget slider recomputes the pilots only. ``walk = (seed,
    budget_steps, design)`` also prepares that walk for :func:`run_walk` in the same batch.
    """
    knobs = _knobs(omission_rate, false_match_rate, discrimination, judge_quality)
    calls = {"sim": _pilots_entry(knobs, budget, reps, design, budget_kind),
             "curve": _curve_entry(knobs, budgets, reps, design, budget_kind)}
    if walk is not None:
        calls["walk"] = _walk_entry(knobs, *walk)
    out = cached_calls(_pilot_store(), calls, spinner="Simulating pilots…")
    return out["sim"], out["curve"]


def run_walk(omission_rate: float, false_match_rate: float, discrimination: float,
             judge_quality: float, seed: int, budget_steps: tuple[int, ...],
             design: str = "stratified") -> Algorithm1Walk:
    """:func:`core.calibration.pilot_walk.walk_algorithm1`: one pilot through Algorithm 1."""
    knobs = _knobs(omission_rate, false_match_rate, discrimination, judge_quality)
    return cached_calls(_pilot_store(),
                        {"walk": _walk_entry(knobs, seed, budget_steps, design)})["walk"]


def run_judge_check(omission_rate: float, false_match_rate: float, discrimination: float,
                    judge_quality: float, judge_bias: float, budget: int, reps: int, design: str,
                    budget_kind: str = "attempted") -> pd.DataFrame:
    """:func:`core.calibration.pilot.judge_sensitivity` for judge quality 0 and the scenario's,
    judge bias 0 and ``judge_bias`` (at most four simulations, on the worker pool)."""
    knobs = _knobs(omission_rate, false_match_rate, discrimination, judge_quality)
    cfg = scenario_config(**dict(zip(_KNOB_NAMES, knobs, strict=True)))
    qualities = tuple(sorted({0.0, knobs[3]}))
    biases = tuple(sorted({0.0, float(judge_bias)}))
    key = (*knobs, biases, int(budget), int(reps), design, budget_kind)
    call = Call(judge_sensitivity, (cfg,), dict(
        budget=int(budget), reps=int(reps), design=design, budget_kind=budget_kind,
        qualities=qualities, biases=biases))
    return cached_calls(_pilot_store(), {"judges": (key, lambda: call)},
                        spinner="Simulating biased judges…")["judges"].copy()


@st.cache_data(show_spinner="Drawing pilots from the real answers…", max_entries=48)
def run_real_pilot(path: str, stamp: int, budget: int, reps: int, rule_a: str, rule_b: str,
                   design: str, seed: int = 0) -> pd.DataFrame:
    """:func:`core.calibration.nq301_pilot.real_pilot_budgets` at one budget (summary rows).

    One budget per cache entry, so moving the budget slider recomputes one budget only (each
    budget uses seed ``seed + budget``, so the rows equal those of a multi-budget call).
    Columns of the summary plus ``beta_origin``.
    """
    answers = load_nq_rules(path, stamp)
    res = real_pilot_budgets(answers, budgets=(int(budget),), reps=int(reps), seed=int(seed),
                             rule_a=rule_a, rule_b=rule_b, design=design)
    out = res.summary.copy()
    out["beta_origin"] = res.beta_origin
    return out


@shared_cache(max_entries=4)
def run_rule_pairs(path: str, stamp: int, family: str = "location", n_boot: int = 2000):
    """:func:`core.calibration.nq301_rules.rule_pairs` (21 pairs of seven rules, bootstrap CIs)."""
    _, answers = load_nq301(path, stamp)
    return rule_pairs(answers, family=family, n_boot=int(n_boot))


# ---------------------------------------------------------------- upload
def _parse_csv(data: bytes, name: str) -> pd.DataFrame:
    """:func:`core.calibration.report.read_score_csv` on uploaded bytes (``ValueError``).

    The size, row and field-count checks and the time budget are the CLI's own
    (``read_score_csv``'s defaults), done before pandas parses anything.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).name).strip("._") or "upload.csv"
    try:
        return read_score_csv(data, name=safe)
    except ValueError:
        raise
    except Exception as exc:  # any other parser failure: still one line
        raise ValueError(f"{safe}: not a readable CSV ({type(exc).__name__})") from None


@shared_cache(max_entries=32)
def _parsed_upload(digest: str, name: str, _data: bytes) -> pd.DataFrame:
    """The validated frame of an uploaded file, shared by digest (``ValueError`` if bad)."""
    return _parse_csv(_data, name)


def read_upload(uploaded, *, key: str) -> tuple[pd.DataFrame, str, str] | None:
    """Validate an uploaded scoring CSV; keep the last good one when a new one is bad.

    Returns ``(frame, name, digest)``: the validated frame (columns ``p, y`` and optional
    ``z, p_b, cluster, weight``, see :func:`core.calibration.report.read_score_csv`), its
    file name and a SHA-1 of its bytes (a small cache key); ``None`` while nothing usable was
    uploaded. A refused file shows one plain-text error and the previous good file, if any,
    stays in use and is named (:func:`.uploads.keep_last_good`).
    """
    return keep_last_good(
        uploaded, key=key, load=_parsed_upload, default="upload.csv",
        kept_note=" Still showing the previous file, {name}.",
        expired_note=" The previous file has expired from the cache; upload it again.")


# ---------------------------------------------------------------- reliability analysis
@st.cache_data(show_spinner=False, max_entries=64)
def score_table(data_key: tuple, rules: tuple[str, ...], label: str, n_bins: int,
                strategy: str, _frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`core.calibration.summary.score_summary` of every rule under ``label`` (one row
    per rule, column ``rule``; the CLI's keys).

    ``data_key`` must determine ``_frames`` (which is not hashed).
    """
    rows = []
    for name in rules:
        f = _frames[name]
        rows.append({"rule": name, **score_summary(f["p"], label_of(f, label),
                                                   weights=weights_of(f), n_bins=n_bins,
                                                   strategy=strategy)})
    return pd.DataFrame(rows)


def score_panels(data_key: tuple, rules: tuple[str, ...], label: str, n_bins: int,
                 strategy: str, *, names: Mapping[str, str], default_scenario: bool,
                 _frames: Mapping[str, pd.DataFrame]) -> ScoreView:
    """:func:`core.calibration.score_view.score_view` of the cached :func:`score_table` under
    ``label`` and, when the first rule's frame has it, the other label."""
    other = "z" if label == "y" else "y"
    scores = score_table(data_key, rules, label, n_bins, strategy, _frames=_frames)
    alt = (score_table(data_key, rules, other, n_bins, strategy, _frames=_frames)
           if other in _frames[rules[0]].columns else None)
    return score_view(scores, alt, names=names, label=label, n_bins=n_bins, strategy=strategy,
                      default_scenario=default_scenario)


#: Reliability views kept across sessions.
RELIABILITY_STORE_ENTRIES = 32


def reliability_view(data_key: tuple, rules: tuple[str, ...], label: str, n_bins: int,
                     strategy: str, bands: bool,
                     _frames: Mapping[str, pd.DataFrame]) -> ReliabilityView:
    """:func:`core.calibration.reliability_view.reliability_view`, shared by every session.

    ``data_key`` holds the small values that determine ``_frames`` (the scenario knobs, the
    store path and stamp, or an upload's digest); ``_frames`` maps each rule to its
    :func:`~core.calibration.reliability_view.rule_frame`. A miss runs on the worker pool.
    """
    key = (tuple(data_key), tuple(rules), label, int(n_bins), strategy, bool(bands))
    frames = {r: _frames[r] for r in rules}
    call = Call(compute_reliability_view, (frames,), dict(
        rules=tuple(rules), label=label, n_bins=int(n_bins), strategy=strategy,
        bands=bool(bands)))
    return cached_calls(result_store("reliability", RELIABILITY_STORE_ENTRIES),
                        {"view": (key, lambda: call)},
                        spinner="Computing the reliability curves…")["view"]


# ---------------------------------------------------------------- figures and downloads
def _stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "arbiter"


def download_row(*, key: str, stem: str, frame: pd.DataFrame | None = None,
                 fig: go.Figure | None = None, what: str = "Table") -> None:
    """Download buttons side by side: the table (CSV, Parquet) and/or the figure (HTML).

    The bytes are built only on click (zero-argument callables) and a download does not rerun
    the page. The figure's PNG is the camera button of its toolbar.
    """
    safe = _stem(stem)
    with st.container(horizontal=True, gap="small"):
        if frame is not None:
            st.download_button(f"{what} (CSV)", lambda: csv_bytes(frame),
                               file_name=f"{safe}.csv", mime="text/csv", on_click="ignore",
                               key=f"{key}_csv", icon=":material/download:")
            st.download_button(f"{what} (Parquet)", lambda: parquet_bytes(frame),
                               file_name=f"{safe}.parquet",
                               mime="application/vnd.apache.parquet", on_click="ignore",
                               key=f"{key}_parquet", icon=":material/download:")
        if fig is not None:
            st.download_button("Figure (HTML)", _html_of(fig), file_name=f"{safe}.html",
                               mime="text/html", on_click="ignore", key=f"{key}_html",
                               icon=":material/download:",
                               help="A standalone interactive page (plotly.js from its CDN). "
                                    "For a PNG, use the camera button of the chart's toolbar.")


def _html_of(fig: go.Figure) -> Callable[[], bytes]:
    return lambda: fig.to_html(include_plotlyjs="cdn", full_html=True).encode("utf-8")


def show_figure(fig: go.Figure, *, key: str, stem: str, alt: str | None = None) -> None:
    """``st.plotly_chart`` with a stable key and PNG export named ``<stem>.png``."""
    st.plotly_chart(fig, key=key, config=plotly_config(_stem(stem)), alt=alt)


def show_split_table(frame: pd.DataFrame, config: Mapping, *, keep: Sequence[str],
                     width: int = EXPANDER_TABLE_WIDTH, **kwargs) -> None:
    """``st.dataframe`` of ``frame`` (``config``: its ``column_config``) as one table if it
    fits ``width`` px, else as tables one above the other, each with the ``keep`` columns
    first and as many of the others as fit: a wide table of scores shows every column
    without scrolling sideways (``kwargs`` go to every ``st.dataframe``)."""
    widths = fit_columns(frame, config)
    key_px = sum(widths[c]["width"] for c in keep)
    rest = [c for c in frame.columns if c not in keep]
    groups: list[list[str]] = [[]]
    used = key_px
    for col in rest:  # in order: a new table when the next column would not fit
        if groups[-1] and used + widths[col]["width"] > width:
            groups.append([])
            used = key_px
        groups[-1].append(col)
        used += widths[col]["width"]
    for group in groups:
        cols = [*keep, *group]
        st.dataframe(frame[cols], hide_index=True, width="stretch",
                     column_config={c: widths[c] for c in cols}, **kwargs)
