"""Leaderboard: every resolver on the seed-000 testbed, beside the paper (seed 000 §4, §11).

Thin glue: the store's cached test predictions (no refit) → ``core.evaluation.tables`` through
the cached loaders of ``pages._shared.evaluation`` → figures of ``core.figures.leaderboard``.

URL state (:mod:`core.urlparams`, one validated path, read when the page opens): ``lb_b``
(bootstrap replicates), ``lb_methods`` (repeatable; the short method names, e.g. ``DSNBF``),
``lb_q`` (question), ``lb_src`` (source), ``lb_seed`` (the seed NBF is refitted on) and
``lb_learned`` (show the learned table); a refused value gives one plain-text notice.

The board (B and methods) and the confusion tables (question, source, seed) are two
``st.fragment``s; figures are cached across sessions by their settings.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation.diagnostics import confusion_matrix, learned_confusion
from core.evaluation.run import FORCED_METHODS, METHOD_LABELS
from core.figures.leaderboard import (
    difficulty_heatmap,
    forest_figure,
    slices_figure,
    source_reliability_figure,
    type_heatmap,
)
from core.figures.style import METHOD_SHORT
from core.store import StoreError
from core.testbed.questions import QIDS, SOURCE_LABELS, SOURCES
from core.testbed.questions import question as get_question
from core.urlparams import ChoiceParam, FlagParam
from pages._shared import (
    download_table,
    ensure_store,
    open_page,
    plotly_config,
    public_message,
    show_number_table,
    store_guard,
    store_stamp,
    table_height,
    url_multiselect,
    url_select,
    url_toggle,
)
from pages._shared.cache import cached_figure
from pages._shared.evaluation import (
    fit_nbf,
    load_cached_runs,
    load_main_table,
    load_tables,
)

st.set_page_config(layout="wide", page_title="Leaderboard · Arbiter",
                   page_icon=":material/leaderboard:")

B_CHOICES = (200, 500, 1000, 2000)
DEFAULT_METHODS = [m for m in FORCED_METHODS if m != "random"]
SOURCE_COLUMNS = {"source": "source", "answered": "atoms", "coverage": "coverage %",
                  "conflict_rate": "conflict %", "accuracy": "accuracy %",
                  "acc_low": "Wilson low", "acc_high": "Wilson high"}

path = ensure_store()
stamp = store_stamp(path)
with store_guard():
    try:
        runs = load_cached_runs(str(path), stamp)
    except StoreError as exc:
        st.error(f"No resolver results to show: {public_message(exc)}",
                 icon=":material/database:")
        st.stop()
seeds = [r.seed for r in runs]
n_clusters = sum(len(r.personas) for r in runs)

st.title("Leaderboard: every resolver, beside the paper")
st.caption(
    f"Forced and selective accuracy of every resolver on the test split of {len(seeds)} "
    f"seed(s) — {n_clusters:,} (seed, persona) clusters × 18 questions = "
    f"{18 * n_clusters:,} instances — read from the predictions cached in the store (no "
    "refit). Intervals are 95 % persona-cluster percentile bootstraps (seed 000 §9.3). The "
    "paper's number and the released code's regenerated number sit beside ours."
)

P_B = ChoiceParam("lb_b", "bootstrap size", B_CHOICES, default=2000)
P_METHODS = ChoiceParam("lb_methods", "method", FORCED_METHODS, default=DEFAULT_METHODS,
                        tokens=tuple(METHOD_SHORT[m] for m in FORCED_METHODS), multi=True)
P_Q = ChoiceParam("lb_q", "question", QIDS, default="A3")
P_SRC = ChoiceParam("lb_src", "source", SOURCES, default=SOURCES[1],
                    tokens=tuple(SOURCE_LABELS[s] for s in SOURCES))
P_SEED = ChoiceParam("lb_seed", "seed", tuple(seeds), default=seeds[0])
P_LEARNED = FlagParam("lb_learned", "learned-table switch", False)
open_page("leaderboard", [P_B, P_METHODS, P_Q, P_SRC, P_SEED, P_LEARNED])


@st.fragment
def board() -> None:
    """Bootstrap size and methods, and every table and figure they change."""
    c1, c2 = st.columns([1, 3])
    with c1:
        b = url_select(P_B, "Bootstrap replicates B",
                             help="The paper uses B = 2000 (seeded, rng 42). Smaller is faster.")
    with c2:
        methods = url_multiselect(
            P_METHODS, "Methods", format_func=lambda m: METHOD_SHORT.get(m, m),
            help="Which methods the figures and tables show (Random is off by default).")
    if not methods:
        st.info("Choose at least one method to show.", icon=":material/checklist:")
        st.stop()
    shown = [m for m in FORCED_METHODS if m in methods]

    with store_guard():
        table = load_main_table(str(path), stamp, int(b))
        tables = load_tables(str(path), stamp)

    # ---------------------------------------------------------------- forced accuracy
    st.header("Forced accuracy")
    acc = table.set_index("method")
    cols = st.columns(4)
    for col, m in zip(cols, ("dsnbf", "nbf", "ssb", "majority_vote"), strict=True):
        if m in acc.index:
            row = acc.loc[m]
            col.metric(METHOD_SHORT[m], f"{row['accuracy']:.1f} %",
                       delta=(f"{row['delta_paper']:+.1f} pp vs paper"
                              if pd.notna(row["delta_paper"]) else None),
                       delta_color="off", border=True,
                       help=f"95 % CI [{row['ci_low']:.1f}, {row['ci_high']:.1f}], B = {b}")
    st.plotly_chart(cached_figure("lb_forest", (str(path), stamp, b, tuple(shown)),
                                  lambda: forest_figure(table, methods=shown)),
                    key="lb_forest",
                    config=plotly_config("leaderboard_forest"))
    st.caption(
        "**Majority Vote** is also seed 000's equal-weight ArgRAG adaptation: with one "
        "closed-class atom per source, no source weights and no evidence-to-evidence edges, QE "
        "semantics reduces it to plurality voting (§9.5). **Dawid–Skene** learns source "
        "confusion matrices "
        "by EM *without any labels*; the gap between it and NBF/DSNBF is what the train labels "
        "buy. **Source Reachability** is GT-aided (it answers GT whenever some atom equals it): a "
        "ceiling, not a method."
    )
    view = table[table["method"].isin(shown)][
        ["label", "accuracy", "ci_low", "ci_high", "paper", "delta_paper", "regenerated",
         "delta_regenerated", "n_clusters"]]
    show_number_table(
        view, formats={"delta_paper": "{:+.1f}", "delta_regenerated": "{:+.1f}"},
        hide_index=True, width="stretch", height=table_height(len(view)),
        labels={"label": "method", "accuracy": "accuracy %", "ci_low": "CI low",
                "ci_high": "CI high", "paper": "paper %", "delta_paper": "Δ paper",
                "regenerated": "regenerated %", "delta_regenerated": "Δ regenerated",
                "n_clusters": "clusters"})
    download_table(table, stem=f"forced_b{b}", key="lb_dl_forced", what="Forced table")

    # ---------------------------------------------------------------- selective
    st.header("Selective answering")
    st.caption("Each +SKIP variant may abstain; selective accuracy counts only what it answers. "
               "Per seed, then the mean over seeds (seed 000 §10.1). Move the thresholds on the "
               "Selective QA page.")
    sel = tables["selective"]
    sel_view = sel[["label", "selective_accuracy", "coverage", "f05", "forced_accuracy",
                    "gain_over_forced", "paper_selective", "paper_coverage", "delta_selective",
                    "delta_coverage"]]
    show_number_table(
        sel_view, formats={c: "{:+.1f}" for c in ("gain_over_forced", "delta_selective",
                                                  "delta_coverage")},
        hide_index=True, width="stretch",
        labels={"label": "method", "selective_accuracy": "selective acc. %",
                       "coverage": "coverage %", "f05": "F0.5 %", "forced_accuracy": "forced %",
                       "gain_over_forced": "gain (pp)", "paper_selective": "paper sel. %",
                       "paper_coverage": "paper cov. %", "delta_selective": "Δ sel.",
                       "delta_coverage": "Δ cov."})
    download_table(sel, stem="selective", key="lb_dl_selective", what="Selective table")
    st.page_link("pages/4_Selective_QA.py", label="Move the thresholds: Selective QA",
                 icon=":material/tune:")

    # ---------------------------------------------------------------- heatmaps
    st.header("Where each method wins and loses")
    key = (str(path), stamp, tuple(shown))
    st.plotly_chart(cached_figure("lb_types", key, lambda: type_heatmap(
                        tables["per_type"], shown,
                        title="By reasoning type (pooled; hover for the paper's value)")),
                    key="lb_types", config=plotly_config("leaderboard_types"))
    download_table(tables["per_type"], stem="per_type", key="lb_dl_types", what="Per-type table")
    st.plotly_chart(cached_figure("lb_difficulty", key, lambda: difficulty_heatmap(
                        tables["per_difficulty"], shown,
                        title="By difficulty class (per seed, then mean)")),
                    key="lb_difficulty", config=plotly_config("leaderboard_difficulty"))
    download_table(tables["per_difficulty"], stem="per_difficulty", key="lb_dl_difficulty",
                   what="Per-difficulty table")

    # ---------------------------------------------------------------- reachability
    st.header("Source Reachability: is the answer in some source at all?")
    slices = tables["slices"]
    share = slices["n_present"].iloc[0] / (slices["n_present"].iloc[0] + slices["n_absent"].iloc[0])
    st.caption(
        f"In {100 * share:.1f} % of test instances at least one source's atom equals GT (the "
        "Source Reachability rate). On the rest, GT is absent verbatim from every source, and a "
        "method can still reach it only by reading through the distortions — the learned "
        "confusion matrices of NBF and DSNBF do that some of the time, votes almost never."
    )
    st.plotly_chart(cached_figure("lb_slices", key,
                                  lambda: slices_figure(slices, methods=shown)),
                    key="lb_slices",
                    config=plotly_config("leaderboard_slices"))
    download_table(slices, stem="reachability_slices", key="lb_dl_slices", what="Slices table")

    st.caption("Methods: " + "; ".join(f"{METHOD_SHORT[m]} = {METHOD_LABELS[m]}"
                                       for m in shown) + ".")


board()

# ---------------------------------------------------------------- sources
with store_guard():
    tables = load_tables(str(path), stamp)
st.header("Why a resolver trusts a source")
st.caption("Over the pooled test atoms: how often each source gives an atom (coverage), how "
           "often its atom conflicts with another source's (conflict rate), and how often it "
           "is right when it answers, with a 95 % Wilson interval.")
left, right = st.columns([1, 1.15])
with left:
    st.plotly_chart(cached_figure("lb_sources", (str(path), stamp),
                                  lambda: source_reliability_figure(tables["sources"],
                                                                    title="All 18 questions")),
                    key="lb_sources", config=plotly_config("source_reliability"))
with right:
    src_view = tables["sources"].assign(source=lambda d: d["source"].map(SOURCE_LABELS))
    show_number_table(src_view[list(SOURCE_COLUMNS)], hide_index=True, width="stretch",
                      labels=SOURCE_COLUMNS)
    download_table(tables["reliability"], stem="source_reliability_by_question",
                   key="lb_dl_reliability", what="Per (source, question)")

@st.fragment
def confusion_panel() -> None:
    """One question and source: the empirical and the learned confusion tables."""
    q1, q2, q3 = st.columns([1, 1, 1])
    with q1:
        qid = url_select(P_Q, "Question",
                           help="The confusion tables below are for this question.")
    with q2:
        source = url_select(P_SRC, "Source", format_func=SOURCE_LABELS.get)
    with q3:
        nbf_seed = url_select(P_SEED, "Refit NBF on seed", format_func=str,
                                help="The learned table comes from NBF fitted on this seed's "
                                     "train split (cached).")
    q = get_question(qid)
    rel = tables["reliability"]
    rel_q = rel[rel["question_id"] == qid].assign(source=lambda d: d["source"].map(SOURCE_LABELS))
    st.markdown(f"**{qid} · {q.title}** — {q.text}")
    show_number_table(rel_q[list(SOURCE_COLUMNS)], hide_index=True, width="stretch",
                      labels=SOURCE_COLUMNS)
    empirical = confusion_matrix(np.concatenate([r.atoms for r in runs]),
                                 np.concatenate([r.gt for r in runs]), qid, source)
    e1, e2 = st.columns(2)
    with e1:
        st.markdown(f"**Empirical:** what {SOURCE_LABELS[source]} said (columns) when GT was "
                    "each row — counts over the pooled test split; ⊥ = no atom.")
        st.dataframe(empirical, width="stretch")
        download_table(empirical.reset_index(), stem=f"confusion_{qid}_{source}",
                       key="lb_dl_confusion", what="Empirical table")
    with e2:
        show = url_toggle(P_LEARNED, "Show NBF's learned table",
                         help="Refits NBF on one seed's train split (a fraction of a second, "
                              "cached): P(atom = v | GT = w) with Laplace smoothing (§9.1).")
        if show:
            with store_guard():
                model = fit_nbf(str(path), stamp, int(nbf_seed))
            learned = learned_confusion(model, qid, source)
            st.markdown(f"**Learned (NBF, seed {nbf_seed}):** P(atom = column | GT = row). "
                        "DSNBF's global table is the same; it adds one per difficulty class.")
            show_number_table(learned, default="{:.2f}", width="stretch")
            download_table(learned.reset_index(), stem=f"learned_{qid}_{source}_{nbf_seed}",
                           key="lb_dl_learned", what="Learned table")
        else:
            st.caption("The learned table shows what NBF believes about this source — the "
                       "reason it trusts or discounts the source's atom.")


confusion_panel()
