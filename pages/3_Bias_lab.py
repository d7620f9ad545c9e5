"""Bias lab: regenerate one seed under new distortion knobs, refit every resolver, compare.

Thin glue: sliders → :func:`core.evaluation.lab.run_lab` (through the cached
``pages._shared.evaluation.lab_pair``, keyed on the small knobs only) →
:func:`~core.evaluation.lab.what_broke` → figures of ``core.figures.lab``.

Hot path: a slider change costs one cache miss of ``lab_pair`` for the new setting (the
nominal setting is cached once per seed): re-project the seed's sources (its personas and
events are reused), compute GT and μ*, fit, calibrate and score all 16 methods (DSNBF in a
second thread), bootstrap 200 replicates (``benchmarks/bench_lab.py``: ≈ 0.15–0.2 s), then
two dict-built figures and the page's tables and headline numbers (:func:`_view`, ≈ 15 ms),
all cached per setting; the tables are plain frames with number formats
(:func:`pages._shared.ui.number_table`), not Stylers. The 3 × 3 bias × dropout grid (≈ 5 s)
runs only while its expander is open, cached per seed.

URL state (:mod:`core.urlparams`, one validated path, read when the page opens):
``lab_seed``, ``lab_bias``, ``lab_dropout``, ``lab_w_stable``, ``lab_w_shift``,
``lab_w_stated``; sliders snap a link's value to their 0.25 grid (so a link cannot make the
lab compute an off-grid setting), and a refused value gives one plain-text notice.
``$ARBITER_LAB_PERSONAS`` sets the personas per difficulty class (default 160; tests use a
small value). Everything below the title is one ``st.fragment``; figures are cached across
sessions by the setting.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import time

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation.lab import describe_what_broke, is_nominal, what_broke
from core.evaluation.paper import GRID_METHODS, PAPER_GRID_DSNBF_WINS, PAPER_GRID_TAU
from core.evaluation.run import METHOD_LABELS
from core.figures.lab import grid_figure, lab_leaderboard_figure, source_shift_figure
from core.testbed.config import DEFAULT_SEEDS
from core.testbed.questions import SOURCE_LABELS
from core.urlparams import ChoiceParam, NumberParam
from pages._shared import (
    download_table,
    ensure_store,
    load_store_info,
    number_table,
    open_page,
    plotly_config,
    store_guard,
    store_stamp,
    table_height,
    url_select,
    url_slider,
)
from pages._shared.cache import cached_figure, cached_result
from pages._shared.evaluation import lab_grid, lab_pair, lab_personas

st.set_page_config(layout="wide", page_title="Bias lab · Arbiter", page_icon=":material/science:")

KNOBS = {"lab_bias": 1.0, "lab_dropout": 1.0, "lab_w_stable": 1.0, "lab_w_shift": 1.0,
         "lab_w_stated": 1.0}
SOURCE_COLUMNS = {"source": "source", "coverage": "coverage %",
                  "coverage_nominal": "nominal", "conflict_rate": "conflict %",
                  "conflict_rate_nominal": "nominal", "accuracy": "accuracy %",
                  "accuracy_nominal": "nominal", "accuracy_change": "Δ pp",
                  "acc_low": "Wilson low", "acc_high": "Wilson high"}

path = ensure_store()
with store_guard():
    info = load_store_info(str(path), store_stamp(path))
seeds = sorted({int(s) for s in info["seeds"]} | set(DEFAULT_SEEDS))
ppd = lab_personas()


P_SEED = ChoiceParam("lab_seed", "seed", tuple(seeds), default=seeds[0])
P_KNOBS = {"lab_bias": NumberParam("lab_bias", "bias scale", 0.0, 3.0, 0.25, 1.0),
           "lab_dropout": NumberParam("lab_dropout", "dropout scale", 0.0, 3.0, 0.25, 1.0),
           "lab_w_stable": NumberParam("lab_w_stable", "stable weight", 0.0, 1.0, 0.25, 1.0),
           "lab_w_shift": NumberParam("lab_w_shift", "temporal-shift weight", 0.0, 1.0, 0.25,
                                      1.0),
           "lab_w_stated": NumberParam("lab_w_stated", "stated-vs-revealed weight", 0.0, 1.0,
                                       0.25, 1.0)}


def _reset() -> None:
    for key, value in KNOBS.items():
        st.session_state[key] = value
        if key in st.query_params:
            del st.query_params[key]


st.title("Bias lab: make the sources worse and watch who breaks")
st.caption(
    f"One seed is regenerated with the knobs below ({3 * ppd} personas), every resolver is "
    "refitted on its train split and calibrated on its calibration split, and the test split "
    "is scored — then compared with the nominal setting. **Bias scale** multiplies the "
    "planner's optimism and the self-report's distortions (capped at 1); **dropout scale** "
    "multiplies the device and objective logs' lost and noisy days (capped at 0.5); the "
    "**difficulty mix** keeps that share of each persona class in every split (seed 000 §12.4)."
)

open_page("lab", [P_SEED, *P_KNOBS.values()])


BOARD_COLUMNS = {"label": "method", "accuracy": "accuracy %", "ci_low": "CI low",
                 "ci_high": "CI high", "accuracy_nominal": "nominal %", "change": "Δ pp",
                 "rank": "rank", "rank_nominal": "nominal rank",
                 "selective_accuracy": "+SKIP selective %", "coverage": "+SKIP coverage %"}


def _with_nominal(frame: pd.DataFrame, nominal: pd.DataFrame, key: str,
                  columns: list[str]) -> pd.DataFrame:
    """``frame.merge(nominal[[key, *columns]], on=key, suffixes=("", "_nominal"))``, built in
    one go when both list the same keys in the same order (the lab's results do)."""
    keys = frame[key].tolist()
    if keys != nominal[key].tolist() or len(set(keys)) != len(keys):
        return frame.merge(nominal[[key, *columns]], on=key, suffixes=("", "_nominal"))
    data = {col: frame[col].to_numpy() if col != key else frame[col] for col in frame.columns}
    data.update({f"{col}_nominal": nominal[col].to_numpy() for col in columns})
    return pd.DataFrame(data, index=pd.RangeIndex(len(keys)))


def _view(nominal, variant) -> dict:
    """What the page derives from the two results: the what-broke summary, the headline
    numbers and both tables ready to draw (cached per setting, so a repeat skips it)."""
    board = variant.leaderboard
    methods = board["method"].tolist()
    accuracy = board["accuracy"].to_numpy(float)
    nom_accuracy = dict(zip(nominal.leaderboard["method"].tolist(),
                            nominal.leaderboard["accuracy"].tolist(), strict=True))
    headline = {}
    for m in ("dsnbf", "majority_vote"):
        i = methods.index(m)
        change = round(float(accuracy[i] - nom_accuracy[m]), 1) + 0.0  # no −0.0
        headline[m] = (float(accuracy[i]), change, float(board["ci_low"].iloc[i]),
                       float(board["ci_high"].iloc[i]))
    best = board[board["method"] != "source_reachability"].sort_values(
        "accuracy", ascending=False).iloc[0]
    table = _with_nominal(board, nominal.leaderboard, "method", ["accuracy", "rank"])
    table["change"] = table["accuracy"] - table["accuracy_nominal"]
    board_view = table[list(BOARD_COLUMNS)].sort_values("accuracy", ascending=False)
    src = _with_nominal(variant.sources, nominal.sources, "source",
                        [c for c in nominal.sources.columns if c != "source"])
    src["source"] = src["source"].map(SOURCE_LABELS)
    src["accuracy_change"] = src["accuracy"] - src["accuracy_nominal"]
    src = src[list(SOURCE_COLUMNS)]
    return {"broke": what_broke(nominal, variant), "headline": headline,
            "best": (str(best["method"]), float(best["accuracy"])),
            "table": table, "n_rows": len(board_view), "src": src,
            "board_shown": number_table(board_view, labels=BOARD_COLUMNS, formats={
                "change": "{:+.1f}", "rank": "{:.0f}", "rank_nominal": "{:.0f}"}),
            "src_shown": number_table(src, labels=SOURCE_COLUMNS,
                                      formats={"accuracy_change": "{:+.1f}"})}


@st.fragment
def lab() -> None:
    """The knobs and everything they change (reruns on its own)."""
    with st.container(border=True):
        k1, k2, k3 = st.columns([1, 2, 2])
        seed = url_select(P_SEED, "Seed", where=k1, format_func=str,
                          help="The store's seeds and the paper's four.")
        bias = url_slider(P_KNOBS["lab_bias"], "Bias scale", where=k2, format="%.2f×",
                          help="1 = nominal; 0 removes the directional biases.")
        dropout = url_slider(P_KNOBS["lab_dropout"], "Dropout scale", where=k3, format="%.2f×",
                             help="1 = nominal; 0 means the logs never lose a day.")
        m0, m1, m2, m3 = st.columns([1, 4 / 3, 4 / 3, 4 / 3])
        m0.button("Back to nominal", on_click=_reset, icon=":material/restart_alt:")
        w_stable = url_slider(P_KNOBS["lab_w_stable"], "Mix: stable", where=m1)
        w_shift = url_slider(P_KNOBS["lab_w_shift"], "Mix: temporal shift", where=m2)
        w_stated = url_slider(P_KNOBS["lab_w_stated"], "Mix: stated vs revealed", where=m3)

    weights = np.array([w_stable, w_shift, w_stated], float)
    if weights.max() <= 0:
        st.warning("The difficulty mix needs at least one positive weight; using an equal mix.",
                   icon=":material/balance:")
        weights = np.ones(3)
    mix = tuple(float(x) for x in np.round(weights / weights.max(), 4))

    with st.spinner(f"Regenerating seed {seed} and refitting every resolver…", show_time=True):
        t0 = time.perf_counter()
        nominal, variant = lab_pair(int(seed), float(bias), float(dropout), mix, ppd)
        elapsed = time.perf_counter() - t0
    nominal_setting = is_nominal(bias_scale=bias, dropout_scale=dropout, mix=mix)
    setting = (int(seed), float(bias), float(dropout), mix, ppd)
    view = cached_result("lab_view", setting, lambda: _view(nominal, variant))
    broke = view["broke"]

    # ---------------------------------------------------------------- headline
    board = variant.leaderboard
    h1, h2, h3, h4 = st.columns(4)
    for col, m in ((h1, "dsnbf"), (h2, "majority_vote")):
        accuracy, change, ci_low, ci_high = view["headline"][m]
        col.metric(METHOD_LABELS[m].split(" (")[0], f"{accuracy:.1f} %",
                   delta=None if nominal_setting else f"{change:+.1f} pp vs nominal",
                   border=True, help=f"95 % CI [{ci_low:.1f}, {ci_high:.1f}]")
    best_method, best_accuracy = view["best"]
    h3.metric("Best method here", METHOD_LABELS[best_method].split(" (")[0],
              delta=f"{best_accuracy:.1f} %", delta_color="off", delta_arrow="off",
              border=True)
    h4.metric("Test personas", f"{variant.n_test}", delta=f"of {3 * ppd} generated",
              delta_color="off", delta_arrow="off", border=True)
    st.caption(f"Seed {seed} · bias {bias:g}× · dropout {dropout:g}× · mix "
               + " / ".join(f"{w:g}" for w in (w_stable, w_shift, w_stated))
               + f" · server time {elapsed:.2f} s (cached settings answer at once).")

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Leaderboard", anchor=False)
        st.plotly_chart(cached_figure("lab_board", setting, lambda: lab_leaderboard_figure(
                            board, None if nominal_setting else nominal.leaderboard)),
                        key="lab_board", config=plotly_config(f"lab_leaderboard_{seed}"))
    with right, st.container(border=True):
        st.subheader("What broke", anchor=False)
        if nominal_setting:
            st.info(describe_what_broke(broke, bias_scale=bias, dropout_scale=dropout, mix=mix),
                    icon=":material/tune:")
        else:
            st.markdown(describe_what_broke(broke, bias_scale=bias, dropout_scale=dropout, mix=mix))
            w1, w2 = st.columns(2)
            climbed = broke["rank_before"] - broke["rank_after"]  # > 0: moved up the board
            w1.metric(f"Rank of {METHOD_LABELS[broke['method']].split(' (')[0]}",
                      f"{broke['rank_after']}",
                      delta=f"{climbed:+d} place{'s' if abs(climbed) != 1 else ''}" if climbed
                      else None, help=f"nominal rank {broke['rank_before']}; + means it moved up")
            w2.metric(SOURCE_LABELS[broke["source"]],
                      f"{broke['source_accuracy_change']:+.1f} pp",
                      delta=f"coverage {broke['source_coverage_change']:+.1f} pp",
                      delta_color="off", delta_arrow="off",
                      help="Change of the source's accuracy when it answers.")
        st.caption("Rank 1 is the best forced accuracy; Source Reachability (GT-aided) is not "
                   "ranked.")

    shown, config = view["board_shown"]
    st.dataframe(shown, hide_index=True, width="stretch", height=table_height(view["n_rows"]),
                 column_config=config)
    table = view["table"]
    download_table(table, stem=f"lab_{seed}_b{bias:g}_d{dropout:g}", key="lab_dl_board",
                   what="Leaderboard")

    # ---------------------------------------------------------------- sources
    st.subheader("How each source's reliability moves", anchor=False)
    st.caption("Grey: nominal. Coloured: this setting. Accuracy is the share of a source's atoms "
               "equal to GT (95 % Wilson interval); the conflict rate is the share of its atoms "
               "that disagree with another source's.")
    st.plotly_chart(cached_figure("lab_sources", setting, lambda: source_shift_figure(
                        nominal.sources, variant.sources)), key="lab_sources",
                    config=plotly_config(f"lab_sources_{seed}"))
    shown, config = view["src_shown"]
    st.dataframe(shown, hide_index=True, width="stretch", column_config=config)
    download_table(view["src"], stem=f"lab_sources_{seed}_b{bias:g}_d{dropout:g}",
                   key="lab_dl_sources", what="Sources")

    # ---------------------------------------------------------------- grid (lazy)
    grid_box = st.expander(f"The 3 × 3 bias × dropout grid on seed {seed} (≈ 5 s, computed when "
                           "opened)", key="lab_grid_open", on_change="rerun",
                           icon=":material/grid_view:")
    with grid_box:
        if grid_box.open:
            with st.spinner("Refitting 7 methods on 9 variants of the seed…", show_time=True):
                grid = lab_grid(int(seed), ppd)
            g1, g2 = st.columns(2)
            g1.metric("Mean Kendall τ between variants", f"{grid['tau_mean']:.2f}",
                      delta=f"paper {PAPER_GRID_TAU:.2f} (4 seeds)", delta_color="off",
                      delta_arrow="off",
                      help="τ-b of the 7 methods' accuracies for every pair of the 9 variants: "
                           "1 = the ranking never changes.")
            g2.metric("DSNBF beats NBF, ABF, BCF, MV and SSB-Global",
                      f"{grid['dsnbf_wins']} of {grid['cells']} cells",
                      delta=f"paper {PAPER_GRID_DSNBF_WINS[0]} of {PAPER_GRID_DSNBF_WINS[1]}",
                      delta_color="off", delta_arrow="off")
            st.plotly_chart(cached_figure("lab_grid", (int(seed), ppd),
                                          lambda: grid_figure(grid["mean"], GRID_METHODS)),
                            key="lab_grid",
                            config=plotly_config(f"lab_grid_{seed}"))
            st.caption("Each panel is one variant (rows: bias scale, columns: dropout scale); "
                       "black ticks repeat the nominal cell. GT and μ* are recomputed in every "
                       "variant, and every method is refitted in-distribution (spec §2.13).")
            download_table(pd.DataFrame(grid["table"]), stem=f"grid_{seed}", key="lab_dl_grid",
                           what="Grid")


lab()
