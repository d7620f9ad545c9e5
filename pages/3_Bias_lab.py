"""Bias lab: regenerate one seed under new distortion knobs, refit every resolver, compare.

Thin glue: sliders → ``pages._shared.evaluation.lab_view_of`` (the nominal and this setting's
:func:`core.evaluation.lab.run_lab`, cached on the small knobs, misses on the worker pool;
then :func:`core.evaluation.lab_view.lab_view`: headline numbers, what broke, both tables) →
figures of ``core.figures.lab``. A slider change costs one miss for the new setting (≈ 0.15–0.2
s, ``benchmarks/bench_lab.py``); the 3 × 3 bias × dropout grid (≈ 5 s) runs only while its
expander is open, cached per seed. Everything below the intro is one ``st.fragment``.

"Across many testbeds" (issue 23) is a second fragment: a sweep from
``pages._shared.sweeps`` (the shipped ones in ``data/sweeps/`` and any in
``$ARBITER_SWEEPS``) → :func:`core.sweep.explore.sweep_view` → figures of
``core.figures.sweep``.

URL state (:mod:`core.urlparams`): ``lab_seed``, ``lab_bias``, ``lab_dropout``,
``lab_w_stable``, ``lab_w_shift``, ``lab_w_stated``; ``sw`` (the sweep), ``sw_metric``,
``sw_method``, ``sw_x``, ``sw_y``; sliders snap a link's value to their
0.25 grid (a link cannot make the lab compute an off-grid setting), and a refused value gives
one plain-text notice. ``$ARBITER_LAB_PERSONAS`` sets the personas per difficulty class
(default 160; tests use a small value).
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import time

import streamlit as st

from core.evaluation.lab_view import effective_mix
from core.evaluation.run import FORCED_METHODS
from core.figures import lab as figures
from core.figures import sweep as sweep_figures
from core.glossary import tip
from core.pages_registry import page
from core.sweep.explore import METRIC_WORDS, method_name, surface_axes
from core.sweep.grid import ALL_METHODS
from core.sweep.views import KNOBS, METRICS
from core.urlparams import ChoiceParam, NumberParam
from pages import _shared as ui
from pages._shared import evaluation as glue
from pages._shared import sweeps as sweep_glue
from pages._shared.ui import FAVICON, escape_markdown, glossary_link

PAGE = page("pages/3_Bias_lab.py")
st.set_page_config(layout="wide", page_title=f"{PAGE.title} · Arbiter", page_icon=FAVICON)

seeds, ppd = glue.lab_seeds(str(ui.ensure_store())), glue.lab_personas()
P_SEED = ChoiceParam("lab_seed", "seed", seeds, default=seeds[0])
P_KNOBS = {key: NumberParam(key, what, 0.0, hi, 0.25, 1.0) for key, what, hi in (
    ("lab_bias", "bias scale", 3.0), ("lab_dropout", "dropout scale", 3.0),
    ("lab_w_stable", "stable weight", 1.0), ("lab_w_shift", "temporal-shift weight", 1.0),
    ("lab_w_stated", "stated-vs-revealed weight", 1.0))}
SWEEPS, SWEEP_STAMP = sweep_glue.catalog()
P_SWEEP = ChoiceParam("sw", "sweep", SWEEPS.keys(), default=SWEEPS.keys()[0],
                      tokens=[k.partition(":")[2] for k in SWEEPS.keys()]) \
    if SWEEPS.entries else None
P_SW = {"sw_metric": ChoiceParam("sw_metric", "metric", METRICS, default=METRICS[0],
                                 tokens=("forced", "selective", "coverage")),
        "sw_method": ChoiceParam("sw_method", "method", ALL_METHODS, default="dsnbf"),
        "sw_x": ChoiceParam("sw_x", "surface knob across", KNOBS, default="bias_scale"),
        "sw_y": ChoiceParam("sw_y", "surface knob down", KNOBS, default="dropout_scale")}

st.title("Bias lab: make the sources worse and watch who breaks")
st.caption(f"One seed is regenerated with the knobs below ({3 * ppd} simulated people), every "
           "resolver is refitted on its train split and calibrated on its calibration split, "
           "and the test split is scored — then compared with the nominal setting. **Bias "
           "scale** strengthens the planner's optimism and the self-report's distortions; "
           "**dropout scale** makes the logs lose more days; the **difficulty mix** keeps that "
           "share of each kind of person.")
glossary_link()
ui.method_key(FORCED_METHODS)
ui.open_page("lab", [P_SEED, *P_KNOBS.values(), *([P_SWEEP] if P_SWEEP else []),
                    *P_SW.values()])


@st.fragment
def lab() -> None:
    """The knobs and everything they change (reruns on its own)."""
    with st.container(border=True):
        k1, k2, k3 = st.columns([1, 2, 2])
        seed = ui.url_select(P_SEED, "Seed", where=k1, format_func=str,
                             help="The store's seeds and the memory-benchmark paper's four.")
        bias = ui.url_slider(P_KNOBS["lab_bias"], "Bias scale", where=k2, format="%.2f×",
                             help=tip("bias scale", "1 is nominal; 0 removes the biases."))
        dropout = ui.url_slider(P_KNOBS["lab_dropout"], "Dropout scale", where=k3,
                                format="%.2f×", help=tip("dropout scale", "1 is nominal; 0 "
                                                         "means the logs never lose a day."))
        m0, m1, m2, m3 = st.columns([1, 4 / 3, 4 / 3, 4 / 3])
        m0.button("Back to nominal", on_click=glue.reset_knobs, args=(tuple(P_KNOBS.values()),),
                  icon=":material/restart_alt:")
        weights = [ui.url_slider(P_KNOBS[key], label, where=col, help=tip("difficulty mix"))
                   for key, label, col in (("lab_w_stable", "Mix: stable", m1),
                                           ("lab_w_shift", "Mix: temporal shift", m2),
                                           ("lab_w_stated", "Mix: stated vs revealed", m3))]
    mix, fell_back = effective_mix(weights)
    if fell_back:
        st.warning("The difficulty mix needs at least one positive weight; using an equal mix.",
                   icon=":material/balance:")

    with st.spinner(f"Regenerating seed {seed} and refitting every resolver…", show_time=True):
        t0 = time.perf_counter()
        v = glue.lab_view_of(int(seed), float(bias), float(dropout), mix, ppd)
        elapsed = time.perf_counter() - t0
    setting = (v.seed, v.bias_scale, v.dropout_scale, v.mix, ppd)

    h1, h2, h3, h4 = st.columns(4)
    for col, h in zip((h1, h2), v.headlines, strict=True):
        col.metric(h.short, f"{h.accuracy:.1f} %", border=True, help=h.help,
                   delta=None if v.nominal else f"{h.change:+.1f} points vs nominal")
    h3.metric("Best method here", v.best_name, delta=f"{v.best_accuracy:.1f} %",
              delta_color="off", delta_arrow="off", border=True)
    h4.metric("Test personas", f"{v.n_test}", delta=f"of {v.n_generated} generated",
              delta_color="off", delta_arrow="off", border=True)
    st.caption(f"{v.setting} · server time {elapsed:.2f} s (a setting seen before is instant).")

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Leaderboard", anchor=False)
        glue.show_chart("lab_board", setting, lambda: figures.lab_leaderboard_figure(
            v.frames["board"], None if v.nominal else v.frames["nominal_board"]),
            file_name=f"lab_leaderboard_{v.seed}")
    with right, st.container(border=True):
        st.subheader("What broke", anchor=False)
        if v.mover is None:
            st.info(v.story, icon=":material/tune:")
        else:
            st.markdown(v.story)
            w1, w2 = st.columns(2)
            w1.metric(f"Rank of {v.mover.short}", f"{v.mover.rank_after}", delta=v.mover.places,
                      help=f"Nominal rank {v.mover.rank_before}; + means it moved up.")
            w2.metric(v.mover.source_label,
                      f"{v.mover.source_accuracy_change:+.1f} points",
                      delta=f"coverage {v.mover.source_coverage_change:+.1f} points",
                      delta_color="off", delta_arrow="off",
                      help="Change of the source's accuracy when it answers.")
        st.caption("Rank 1 is the best forced accuracy; Source Reachability is told the "
                   "ground truth and is not ranked.")
    glue.show_table(v.board, key="lab_dl_board", what="Leaderboard", fit=True, whole=True)

    st.subheader("How each source's reliability moves", anchor=False)
    st.caption("Grey: nominal. Coloured: this setting. Accuracy is the share of a source's atoms "
               "equal to the ground truth (95 % Wilson interval); the conflict rate is the share "
               "of its atoms that disagree with another source's.")
    glue.show_chart("lab_sources", setting, lambda: figures.source_shift_figure(
        v.frames["nominal_sources"], v.frames["sources"]), file_name=f"lab_sources_{v.seed}")
    glue.show_table(v.sources, key="lab_dl_sources", what="Sources", whole=True)

    grid_box = st.expander(f"The 3 × 3 bias × dropout grid on seed {seed} (≈ 5 s, computed when "
                           "opened)", key="lab_grid_open", on_change="rerun",
                           icon=":material/grid_view:")
    with grid_box:
        if grid_box.open:
            with st.spinner("Refitting 7 methods on 9 variants of the seed…", show_time=True):
                g = glue.lab_grid_view(int(seed), ppd)
            g1, g2 = st.columns(2)
            g1.metric("Rank agreement τ", f"{g.tau_mean:.2f}", delta_color="off",
                      delta=f"the memory-benchmark paper: {g.paper_tau:.2f} (4 seeds)",
                      delta_arrow="off",
                      help=tip("τ", "Mean over every pair of the 9 variants."))
            g2.metric("Cells DSNBF wins", f"{g.dsnbf_wins} of {g.cells} cells",
                      delta=f"paper {g.paper_wins[0]} of {g.paper_wins[1]}", delta_color="off",
                      delta_arrow="off", help=f"Variants where DSNBF beats {g.rivals_text}.")
            glue.show_chart("lab_grid", (g.seed, ppd),
                            lambda: figures.grid_figure(g.mean, g.methods),
                            file_name=f"lab_grid_{g.seed}",
                            download=(g.table, f"grid_{g.seed}", "Grid"))
            st.caption("Each panel is one variant (rows: bias scale, columns: dropout scale); "
                       "black ticks repeat the nominal cell. The ground truth and the atoms are "
                       "recomputed in every variant, and every method is refitted on it.")


lab()


def _knob_name(knob: str) -> str:
    return knob.replace("_", " ")


@st.fragment
def sweeps() -> None:
    """Any sweep in the catalogue: rank stability, the majority-vote boundary, a surface."""
    st.divider()
    st.header("Across many testbeds", anchor=False)
    st.caption("The lab above changes one testbed. A sweep runs the whole pipeline again — new "
               "people, refit, recalibrate, rescore — for every combination of a few knobs and "
               "many seeds, so a result seen once can be checked on hundreds of testbeds. "
               "Three questions: does the order of the methods hold, where does each resolver "
               "stop beating majority vote, and how does one method fare over two knobs. "
               "Your own sweeps can appear here too (docs/sweep.md).")
    if SWEEPS.problem:
        st.warning(escape_markdown(SWEEPS.problem), icon=":material/folder_off:")
    if P_SWEEP is None:
        st.info("No sweep to show: the shipped sweeps in data/sweeps are missing.",
                icon=":material/grid_off:")
        return
    c1, c2 = st.columns(2)
    key = ui.url_select(P_SWEEP, "Sweep", where=c1,
                        format_func=lambda k: SWEEPS.entry(k).label,
                        help=tip("sweep", "Shipped with the app, or from your sweep store."))
    metric = ui.url_segmented(P_SW["sw_metric"], "Compare on", where=c2,
                              format_func=lambda m: m.split("_")[0].capitalize(),
                              help="Forced accuracy answers every question; selective "
                                   "accuracy scores only the answered ones; coverage is the "
                                   "share answered.")
    try:
        data = sweep_glue.data_of(key, SWEEP_STAMP)
    except ValueError as exc:
        st.warning(escape_markdown(str(exc).splitlines()[0]), icon=":material/error:")
        return
    entry = data.entry
    upper = st.container()  # filled below, once the surface's choices are read: one view

    st.subheader("One method over two knobs", anchor=False)
    axes = surface_axes(data)
    s1, s2, s3 = st.columns(3)
    method = ui.url_select_among(P_SW["sw_method"], "Method", data.methods, where=s1,
                                 format_func=lambda m: method_name(m, long=True),
                                 help=tip("selective answering", "A method marked (may skip) "
                                          "is the variant that abstains when unsure."))
    x = ui.url_select_among(P_SW["sw_x"], "Across", axes, where=s2, format_func=_knob_name)
    y = ui.url_select_among(P_SW["sw_y"], "Down", [a for a in axes if a != x], where=s3,
                            format_func=_knob_name,
                            help=tip("surface", "A seed axis shows how much the testbeds "
                                     "differ at each setting."))
    v = sweep_glue.view_of(key, SWEEP_STAMP, metric, method or "", x or "", y or "")
    if v.surface is None:
        st.info(escape_markdown(v.surface_note), icon=":material/info:")
    else:
        glue.show_chart("sw_surface", (key, SWEEP_STAMP, metric, method, x, y),
                        lambda: sweep_figures.accuracy_surface_figure(v.surface),
                        file_name=f"sweep_surface_{entry.name}")
        st.caption("Each square is the mean over the cells with those two values (the hover "
                   "gives how many, and their lowest and highest).")

    with upper:
        st.caption(escape_markdown(" ".join(filter(None, (entry.description, v.facts)))))

        st.subheader("Does the order of the methods hold?", anchor=False)
        if v.rank is None:
            st.info(escape_markdown(v.rank_note), icon=":material/info:")
        else:
            st.markdown(escape_markdown(v.rank_story))
            glue.show_chart("sw_rank", (key, SWEEP_STAMP, metric),
                            lambda: sweep_figures.setting_agreement_figure(v.agreement),
                            file_name=f"sweep_rank_{entry.name}",
                            download=(v.rank.pairs, f"sweep_rank_pairs_{entry.name}",
                                      "Every pair of cells"))
            st.caption("Each square is the mean Kendall's τ-b between the cells of two "
                       "settings: 1 when every pair of methods is in the same order, −1 when "
                       "every pair is reversed. The diagonal compares testbeds that differ only "
                       "in their seed, so it shows how much the order moves by chance alone "
                       "(Glossary: Kendall's tau).")

        st.subheader("Where does each resolver stop beating majority vote?", anchor=False)
        if v.boundary is None:
            st.info(escape_markdown(v.boundary_note), icon=":material/info:")
        else:
            st.caption(f"On the same testbed, a resolver beats majority vote at a setting when "
                       f"its {METRIC_WORDS[metric]} is higher on average over the testbeds.")
            left, right = st.columns([3, 2])
            with left:
                glue.show_chart("sw_boundary", (key, SWEEP_STAMP, metric),
                                lambda: sweep_figures.majority_boundary_figure(v.boundary),
                                file_name=f"sweep_vs_majority_{entry.name}")
            with right:
                st.markdown("\n".join(f"- {escape_markdown(line)}"
                                       for line in v.boundary_lines))
            glue.show_table(v.boundary_table, key="sw_dl_boundary",
                            what="Against majority vote", fit=True, whole=True)

sweeps()
