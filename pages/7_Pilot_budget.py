"""Pilot budget: how many human labels settle the ranking, and what the judges buy
(seed 003 §3 Eq. 3, §5.5 Table 5, Algorithm 1; label-source-notes).

Thin glue: the scenario (``pages._shared.seed003``) → repeated probability-sampled pilots
(:func:`core.calibration.pilot.simulate_pilots`, :func:`~core.calibration.pilot.budget_curve`)
and one pilot walked through Algorithm 1 (:func:`~core.calibration.pilot.walk_algorithm1`);
the same budgets on the real NQ-open answers, scored against the held-back human labels
(:func:`core.calibration.nq301.real_pilot_budgets`) → figures of ``core.figures.calibration``.
Every simulation is cached on its small settings; moving the budget slider recomputes one
budget only.

URL state (:mod:`core.urlparams`, one validated path, read when the page opens):
``pb_budget``, ``pb_reps``, ``pb_design``, ``pb_kind``, the scenario knobs ``pb_omit``,
``pb_fmr``, ``pb_disc``, ``pb_judge``, the pilot walked through Algorithm 1 ``pb_walk``, and
the NQ-open rules ``pb_nq_a``, ``pb_nq_b``; a refused value gives one plain-text notice. The
PPS design has no step-by-step walk: the walk then uses the stratified design and says so.

Everything below the title is one ``st.fragment``; the Algorithm 1 walk and the NQ-open
section are fragments inside it, so the pilot number or the NQ rules rerun only their own
section. The NQ-open pilots (five budgets of real-data pilots, about 1 s for new settings)
run only while their expander is open (open by default when a link names ``pb_nq_a`` or
``pb_nq_b``). Figures are cached across sessions by the settings.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import numpy as np
import pandas as pd
import streamlit as st

from core.calibration.paper import TABLE5_A, TABLE5_B
from core.figures.calibration import (
    algorithm1_figure,
    budget_curves_figure,
    budget_marker_shapes,
    heldout_figure,
)
from core.figures.overlay import with_overlay
from core.store import StoreError
from core.urlparams import ChoiceParam, NumberParam
from pages._shared import (
    ensure_store,
    open_page,
    public_message,
    store_guard,
    store_stamp,
    url_number,
    url_segmented,
    url_select,
    url_slider,
)
from pages._shared.cache import cached_figure
from pages._shared.params import current
from pages._shared.seed003 import (
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    distinct_rules,
    download_row,
    load_nq_rules,
    load_scenario,
    pilot_results,
    run_judge_check,
    run_real_pilot,
    run_walk,
    scenario_controls,
    scenario_params,
    show_figure,
)

st.set_page_config(layout="wide", page_title="Pilot budget · Arbiter",
                   page_icon=":material/savings:")

#: simulated pilots per budget the page offers: a new setting at 500 answers in about 0.25 s
#: on a two-core server (1,000 took 0.4 s, over the 0.3 s an interaction may take); the seed's
#: 5,000 come from ``python -m core pilot`` (its default)
REPS = (200, 500)
DESIGNS = {"stratified": "stratified", "srs": "SRS", "pps": "PPS"}
CURVE_BUDGETS = (10, 20, 35, 50, 80, 120, 200)
WALK_STEPS = (10, 20, 30, 40, 50, 75, 100, 150, 200)
NQ_BUDGETS = (25, 50, 100, 200)
NQ_A = ("agreement", *NQ_LOCATION_RULES)
NQ_B = (*NQ_CONSTANT_RULES, *NQ_LOCATION_RULES, "agreement")
NUM3 = st.column_config.NumberColumn(format="%.3f")
#: a metric delta that informs rather than measures a change: no colour, no arrow
INFO = {"delta_color": "off", "delta_arrow": "off"}
NUM4 = st.column_config.NumberColumn(format="%.4f")
PCT = st.column_config.NumberColumn(format="%.3f")
EST = {"human_only": "human-only (β = 0)", "trisource": "TriSource-Restore"}

path = ensure_store()
stamp = store_stamp(path)

st.title("Pilot budget: how many human labels settle it?")
st.caption(
    "The reference says one rule is better, truth the other. A small probability-sampled "
    "human pilot estimates the truth gap without bias (Eq. 3); the reference labels and two "
    "frozen automatic judges enter only as control variates, so they narrow the interval but "
    "cannot move its target. Below: repeated simulated pilots per budget, one pilot walked "
    "through Algorithm 1, and the same budgets on real NQ-open answers."
)

P_BUDGET = NumberParam("pb_budget", "budget", 10, 200, 5, 50, integer=True)
P_REPS = ChoiceParam("pb_reps", "number of repetitions", REPS, default=500)
P_DESIGN = ChoiceParam("pb_design", "design", tuple(DESIGNS), default="stratified",
                       tokens=tuple(DESIGNS.values()))
P_KIND = ChoiceParam("pb_kind", "budget kind", ("attempted", "usable"), default="attempted")
P_WALK = NumberParam("pb_walk", "pilot number", 0, 199, 1, 1, integer=True)
P_JBIAS = NumberParam("pb_jbias", "judge bias", -2.0, 2.0, 0.5, 2.0)
P_A = ChoiceParam("pb_nq_a", "rule A", NQ_A, default=NQ_A[0])
P_B = ChoiceParam("pb_nq_b", "rule B", NQ_B, default="const@0.50")
if open_page("pilot", [P_BUDGET, P_REPS, P_DESIGN, P_KIND, *scenario_params("pb"), P_WALK,
                       P_JBIAS, P_A, P_B]) and {"pb_nq_a", "pb_nq_b"} & set(st.query_params.keys()):
    st.session_state["pb_nq_open"] = True  # a link that names the NQ rules opens their section


def walk_design_of(design: str) -> str:
    """The design of the Algorithm 1 walk: PPS has no nested looks, so it walks stratified."""
    return design if design in ("stratified", "srs") else "stratified"


@st.fragment
def panel() -> None:
    """The pilot settings and everything they change (reruns on its own)."""
    c1, c2, c3, c4 = st.columns([2.4, 2, 1.7, 1.5])
    with c1:
        budget = int(url_slider(P_BUDGET, "Pilot budget (human annotations)",
                               help="Seed 003 Table 5: 50 usable labels; its replay: 50 attempted "
                                    "annotations (insufficient judgements consume budget)."))
    with c2:
        reps = int(url_segmented(P_REPS, "Repetitions", format_func=str,
                                        help="Simulated pilots per budget: more is smoother and "
                                             "slower; results are cached. The seed uses 5,000: "
                                             "`python -m core pilot` runs that many (or "
                                             "`--reps N`)."))
    with c3:
        design = url_segmented(
            P_DESIGN, "Design", format_func=DESIGNS.get,
            help="stratified: unmatched × high-confidence strata, unmatched high-confidence items "
                 "prioritised (Algorithm 1 step 1); SRS: simple random sample; PPS: with "
                 "replacement ∝ a frozen size measure.")
    with c4:
        kind = url_segmented(
            P_KIND, "Budget counts",
            help="attempted: 8 % of annotations come back insufficient and still cost budget; "
                 "usable: the budget is usable labels (Table 5 panel A).")
    with st.expander("Scenario settings (seed 003's Table 2 by default)"):
        knobs = scenario_controls("pb", columns=4)
    k = tuple(float(v) for v in knobs.values())

    walk_ahead = (int(current(P_WALK)), WALK_STEPS, walk_design_of(design))  # same batch
    sim, curve = pilot_results(*k, budget, reps, design, kind, CURVE_BUDGETS, walk=walk_ahead)
    summ = sim.summary().set_index("estimator")
    hum, tri = summ.loc["human_only"], summ.loc["trisource"]

    # ---------------------------------------------------------------- at the chosen budget
    st.subheader(f"TriSource-Restore at {budget} {kind} annotations ({reps:,} simulated pilots)",
                 anchor=False)
    m = st.columns(6)
    m[0].metric("RMSE", f"{tri['rmse']:.4f}", border=True,
                delta=f"human-only {hum['rmse']:.4f}", **INFO,
                help="Root-mean-square error of the estimated truth gap Δ_Y over the pilots.")
    m[1].metric("95 % width", f"{tri['mean_width']:.4f}", border=True,
                delta=f"human-only {hum['mean_width']:.4f}", **INFO,
                help=f"{tri['width_reduction']:.1%} narrower than human-only (seed 003: "
                     f"{TABLE5_A['width_reduction']:.1%} at {TABLE5_A['budget']} usable labels).")
    m[2].metric("Coverage", f"{tri['coverage']:.3f}", border=True,
                delta=f"human-only {hum['coverage']:.3f}", **INFO,
                help="Share of pilots whose 95 % interval contains the full-frame truth gap.")
    m[3].metric("Right direction", f"{tri['p_correct_direction']:.3f}", border=True,
                delta=f"human-only {hum['p_correct_direction']:.3f}", **INFO,
                help="P(the estimate has the sign of Δ_Y); seed 003: ≥ "
                     f"{TABLE5_A['p_correct_direction_min']:.3f} at 50 attempted.")
    m[4].metric("False stops", f"{tri['false_termination']:.3f}", border=True,
                delta=f"human-only {hum['false_termination']:.3f}", **INFO,
                help="False terminations: stopped (interval excludes 0, ≥ 8 stores) on the wrong "
                     "side of Δ_Y.")
    m[5].metric("Escalations", f"{tri['escalation']:.3f}", border=True,
                delta=f"human-only {hum['escalation']:.3f}", **INFO,
                help="Algorithm 1 step 5: the interval crosses 0 or fewer than 8 stores were "
                     "sampled, so more labels are needed.")
    beta = ", ".join(f"{b:.2f}" for b in sim.beta)
    st.caption(
        f"Truth gap Δ_Y = R(EG) − R(native) = {sim.delta_y:+.3f} on the full frame (> 0: native "
        f"better); the reference alone says Δ_Z = {sim.delta_z:+.3f}. β = ({beta}), "
        f"{sim.beta_origin}; {summ['mean_usable'].iloc[0]:.1f} usable labels and "
        f"{summ['mean_clusters'].iloc[0]:.1f} stores per pilot on average. **Exact:** for any β "
        "fixed before the pilot, Eq. 3 is design-unbiased for Δ_Y. **Measured:** RMSE, width, "
        f"coverage and the rest, over {reps:,} pilots (simulated in {sim.elapsed_s:.2f} s)."
    )
    panel_a = summ.reset_index()[["estimator", "budget", "rmse", "bias", "mean_width", "coverage",
                                  "no_interval", "p_correct_direction", "false_termination",
                                  "escalation",
                                  "mean_usable", "mean_attempted", "mean_clusters",
                                  "width_reduction"]]
    panel_a["estimator"] = panel_a["estimator"].map(EST)
    box_a = st.expander("Table 5 panel A at this budget, beside the seed", key="pb_panel_a_open",
                        on_change="rerun")
    with box_a:
        if box_a.open:
            table5_panel_a(panel_a, budget)

    # ---------------------------------------------------------------- curves
    settings = (*k, budget, reps, design, kind)
    base = cached_figure("pb_curves", (*k, reps, design, kind, sim.level),
                         lambda: budget_curves_figure(
                             curve, level=sim.level,
                             title=f"Over the budget ({reps:,} pilots per point, "
                                   f"{DESIGNS[design]} design, {kind})"))
    cfig = with_overlay(base, shapes=budget_marker_shapes(budget))  # the budget: ~5 ms
    show_figure(cfig, key="pb_curves", stem="pilot_budget_curves", alt="Pilot budget curves")
    st.caption(
        "Both estimators target the same Δ_Y, so both stay near nominal coverage (dotted); the "
        "judges and the reference labels only shrink the variance, which is why TriSource's "
        "RMSE and width sit below human-only at every budget. Escalations fall as budgets grow: "
        "small pilots either sample fewer than 8 stores or leave the interval open. What "
        "uninformative or biased judges do is measured in the section below the held-out repair."
    )
    download_row(key="pb_dl_curves", stem="pilot_budget_curves", frame=curve, fig=cfig,
                 what="Curves")

    # ---------------------------------------------------------------- held-out repair
    st.subheader("Repairing the confidence: held-out truth-Brier (Table 5 panel B)", anchor=False)
    held = sim.heldout_summary().iloc[0].to_dict()
    h1, h2 = st.columns([3, 2])
    with h1:
        hfig = cached_figure("pb_heldout", settings, lambda: heldout_figure(
            held, title=f"Held-out Brier under Y at {budget} {kind} labels"))
        show_figure(hfig, key="pb_heldout", stem="pilot_heldout_brier", alt="Held-out Brier bars")
    with h2:
        rows = [{"map": name, "measured": held[key], "seed 003 (local)": TABLE5_B[key]}
                for key, name in (("ref_raw", "reference-selected rule, raw"),
                                  ("ref_zplatt", "reference-only Z-Platt"),
                                  ("restored_raw", "restored rule, raw"),
                                  ("pilot_only", "pilot-only Platt"),
                                  ("trisource", "TriSource repair"),
                                  ("full_y", "Platt on full training Y"))]
        htab = pd.DataFrame(rows)
        st.dataframe(htab, hide_index=True, width="stretch",
                     column_config={"measured": NUM4, "seed 003 (local)": NUM4})
        st.caption(
            "Scenarios are split into two folds; every map is fitted on one and scored against "
            "truth on the other. Platt scaling on reference labels alone pulls the confidences "
            "to the reference's prevalence and makes truth-Brier *worse* than doing nothing; the "
            "monotone repair σ(α + γ·logit c), anchored to the pilot, comes close to a map "
            "fitted on every training truth label."
        )
        download_row(key="pb_dl_heldout", stem="pilot_heldout_brier", frame=htab, fig=hfig,
                     what="Panel B")

    judge_panel(k, budget, reps, design, kind)
    walk_panel(k, design)
    nq_panel(budget, reps, design)


def table5_panel_a(panel_a: pd.DataFrame, budget: int) -> None:
    """Panel A's numbers at this budget beside the seed's (drawn only while open)."""
    st.dataframe(panel_a, hide_index=True, width="stretch",
                 column_config={c: NUM4 for c in panel_a.columns
                                if c not in ("estimator", "budget")})
    (h_rmse, t_rmse), (h_w, t_w) = TABLE5_A["rmse"], TABLE5_A["mean_width"]
    st.caption(f"Seed 003, local unit, {TABLE5_A['budget']} usable labels, "
               f"{TABLE5_A['reps']:,} repetitions: RMSE {h_rmse:.4f} / {t_rmse:.4f}, 95 % width "
               f"{h_w:.4f} / {t_w:.4f} (human-only / TriSource), coverage "
               f"{TABLE5_A['coverage']:.3f}, width reduction {TABLE5_A['width_reduction']:.1%}.")
    download_row(key="pb_dl_panel_a", stem=f"pilot_panel_a_b{budget}", frame=panel_a,
                 what="Panel A")


# ---------------------------------------------------------------- judges
@st.fragment
def judge_panel(k: tuple[float, ...], budget: int, reps: int, design: str, kind: str) -> None:
    """Uninformative and biased judges, measured at this budget (computed when opened)."""
    box = st.expander("When the judges are uninformative or biased (measured, about 0.3 s)",
                      key="pb_judge_open", on_change="rerun", icon=":material/gavel:")
    with box:
        if not box.open:
            return
        bias = float(url_slider(P_JBIAS, "Judge bias (logits towards “true”)",
                                help="Every judge's logit is shifted by this much; 0 = unbiased."))
        table = run_judge_check(*k, bias, budget, reps, design, kind)
        quality = k[3]
        at = table.set_index(["judge_quality", "judge_bias"])
        fair, lean = at.loc[(quality, 0.0)], at.loc[(quality, bias)]
        blind = at.loc[(0.0, 0.0)]
        j = st.columns(4)
        j[0].metric("TriSource coverage", f"{lean['trisource_coverage']:.3f}",
                    delta=f"unbiased {fair['trisource_coverage']:.3f}", border=True, **INFO,
                    help="With the judges biased as set above: the share of pilots whose 95 % "
                         "interval contains the truth gap.")
        j[1].metric("Human-only coverage", f"{lean['human_only_coverage']:.3f}", border=True,
                    delta="judges do not enter it", **INFO)
        j[2].metric("Width saved", f"{lean['width_reduction']:.1%}",
                    delta=f"unbiased {fair['width_reduction']:.1%}", border=True, **INFO)
        j[3].metric("Width saved, quality 0", f"{blind['width_reduction']:.1%}",
                    delta=f"β = ({blind['beta']})", border=True, **INFO)
        st.caption(
            f"Measured over {reps:,} pilots of {budget} {kind} labels each. Judges of quality 0 "
            f"know nothing about Y, yet the estimators do not coincide: β is learned on another "
            f"audited dataset before the pilot and comes out at ({blind['beta']}) "
            f"({blind['beta_origin']}), because the judges lean towards the reference label and "
            f"so still remove some of its noise — TriSource is "
            f"{abs(blind['width_reduction']):.1%} "
            f"{'narrower' if blind['width_reduction'] >= 0 else 'wider'} here. A bias of "
            f"{bias:+g} logits leaves Eq. 3 unbiased (β is fixed) but "
            f"makes its residuals skewed: TriSource covers {lean['trisource_coverage']:.3f} "
            f"instead of {fair['trisource_coverage']:.3f}"
            + (", below the 95 % it promises." if lean["trisource_coverage"] < 0.93 else ".")
            + " Human-only is the fallback when the judges cannot be trusted.")
        show = table.rename(columns={"judge_quality": "quality", "judge_bias": "bias",
                                     "human_only_coverage": "human-only coverage",
                                     "trisource_coverage": "TriSource coverage",
                                     "human_only_mean_width": "human-only width",
                                     "trisource_mean_width": "TriSource width",
                                     "width_reduction": "width saved"})
        cols = ["quality", "bias", "beta", "human-only coverage", "TriSource coverage",
                "human-only width", "TriSource width", "width saved"]
        st.dataframe(show[cols], hide_index=True, width="stretch",
                     column_config={c: NUM3 for c in cols[3:]})
        download_row(key="pb_dl_judges", stem=f"pilot_judges_b{budget}", frame=table,
                     what="Judge check")


# ---------------------------------------------------------------- Algorithm 1
@st.fragment
def walk_panel(k: tuple[float, ...], design: str) -> None:
    """One pilot through Algorithm 1 (the pilot number reruns only this)."""
    st.header("One pilot through Algorithm 1")
    w1, w2 = st.columns([1, 3])
    with w1:
        walk_seed = int(url_number(P_WALK, "Pilot number",
                                        help="Which simulated pilot to follow (its random seed)."))
    walk_design = walk_design_of(design)
    walk = run_walk(*k, walk_seed, WALK_STEPS, walk_design)
    with w2:
        st.caption(
            "0 freeze everything but Y → 1 sample human labels (unmatched high-confidence items "
            "first) → 2 estimate the gap with Eq. 3 → 3 select when the interval excludes 0 → "
            "4 repair the selected rule's confidence → 5 escalate while the interval crosses 0 or "
            "fewer than 8 stores are sampled → 6 gate: deploy only if the repaired rule, judged on "
            "the half of the pilot it was not fitted to, beats a constant at the base rate. Looks "
            f"at {', '.join(map(str, WALK_STEPS))} attempted annotations; the "
            f"{len(WALK_STEPS)} looks share one 5 % error (Bonferroni), so each interval is "
            f"{walk.look_level:.2%}."
            + (" (PPS has no nested looks: this walk uses the stratified design.)"
               if design == "pps" else ""))
    steps = walk.to_frame()
    afig = cached_figure("pb_walk", (*k, walk_seed, walk_design), lambda: algorithm1_figure(
        steps, delta_y=walk.delta_y, names=("native", "EG"),
        title=f"Pilot {walk_seed}: the interval at each look"))
    show_figure(afig, key="pb_walk_fig", stem=f"algorithm1_pilot{walk_seed}",
                alt="Algorithm 1 intervals per look")
    if walk.terminated and walk.gate is not None:
        last = steps.iloc[-1]
        winner = "native" if walk.selected == "A" else "EG"
        st.success(f"Terminated at look {int(last['step'])} ({int(last['budget'])} attempted, "
                   f"{int(last['n_usable'])} usable labels): **{winner}** selected, interval "
                   f"[{last['lo']:+.3f}, {last['hi']:+.3f}]; repair p = σ({walk.repair.alpha:+.2f} "
                   f"+ {walk.repair.gamma:.2f}·logit c).", icon=":material/check_circle:")
        (st.success if walk.gate.passes else st.info)(
            f"Gate: {walk.gate.message} (gap to the constant {walk.gate.gap:+.4f} "
            f"[{walk.gate.lo:+.4f}, {walk.gate.hi:+.4f}]).", icon=":material/flag:")
    else:
        st.warning("The interval never closed within the last look: Algorithm 1 does not "
                   "terminate on an open interval — collect more labels.",
                   icon=":material/hourglass_top:")
    show = steps.assign(
        new=[len(v) for v in steps["new_items"]],
        interval=[f"[{lo:+.3f}, {hi:+.3f}]" for lo, hi in zip(steps["lo"], steps["hi"],
                                                               strict=True)],
        human_only=[f"[{lo:+.3f}, {hi:+.3f}]" for lo, hi in zip(steps["lo_human"],
                                                                 steps["hi_human"], strict=True)])
    st.dataframe(show[["step", "budget", "new", "n_usable", "n_clusters", "interval", "decision",
                       "escalate", "reason", "estimate", "human_only", "n_attempted",
                       "repair_alpha", "repair_gamma"]],
                 hide_index=True, width="stretch",
                 column_config={"budget": "attempted budget", "new": "newly sampled",
                                "n_attempted": "attempted", "n_usable": "usable",
                                "n_clusters": "stores", "estimate": st.column_config.NumberColumn(
                                    "TriSource Δ̂", format="%+.3f"),
                                "interval": f"TriSource {walk.look_level:.2%}",
                                "human_only": f"human-only {walk.look_level:.2%}",
                                "repair_alpha": st.column_config.NumberColumn(
                                    "α", format="%+.2f"),
                                "repair_gamma": st.column_config.NumberColumn(
                                    "γ", format="%.2f")})
    box_s = st.expander("Which items were sampled at each look", key="pb_sampled_open",
                        on_change="rerun")
    with box_s:
        if box_s.open:
            sampled_items(walk, k, walk_seed)
    download_row(key="pb_dl_walk", stem=f"algorithm1_pilot{walk_seed}",
                 frame=show.drop(columns=["new_items"]), fig=afig, what="Steps")


def sampled_items(walk, k: tuple[float, ...], walk_seed: int) -> None:
    """The items each look of the walk sampled, with their strata (drawn only while open)."""
    rows = []
    for s in walk.steps:
        for item in s.new_items:
            rows.append({"look": s.step, "item_id": item})
    sampled = pd.DataFrame(rows).merge(load_scenario(*k), on="item_id", how="left")
    sampled["stratum"] = np.where(sampled["z"] == 0, "unmatched", "matched") + np.where(
        sampled["native"] >= 0.8, ", high confidence", ", lower confidence")
    cols = ["look", "item_id", "scenario", "store", "provenance", "stratum", "native", "eg",
            "z", "y", "q_1", "q_2"]
    st.dataframe(sampled[cols], hide_index=True, width="stretch",
                 column_config={c: NUM3 for c in ("native", "eg", "q_1", "q_2")})
    st.caption("y is what the annotator reveals for that item (about 8 % of annotations come "
               "back insufficient and still cost budget). Strata are frozen before any y is "
               "seen: matched or not by the reference × native confidence ≥ .8.")
    download_row(key="pb_dl_sampled", stem=f"algorithm1_pilot{walk_seed}_items",
                 frame=sampled[cols], what="Sampled items")


# ---------------------------------------------------------------- NQ-open
@st.fragment
def nq_panel(budget: int, reps: int, design: str) -> None:
    """The same budgets on the real NQ-open answers (the rules rerun only this)."""
    st.header("The same budgets on real answers (NQ-open)")
    box = st.expander("Real pilots on the 1,490 human-labelled answers (about 1 s for new "
                      "settings, computed when opened)", key="pb_nq_open", on_change="rerun",
                      icon=":material/fact_check:")
    with box:
        if not box.open:
            return
        try:
            with store_guard():
                load_nq_rules(str(path), stamp)
        except StoreError as exc:
            st.info(f"The NQ-open case is not available: {public_message(exc)}",
                    icon=":material/database:")
            st.stop()
        n1, n2, n3 = st.columns([1, 1, 2])
        with n1:
            rule_a = url_select(P_A, "Rule A")
        with n2:
            rule_b = url_select(P_B, "Rule B")
        rule_b = distinct_rules(rule_a, rule_b)
        with n3:
            st.caption("Every pilot samples answers, reveals only their human labels, and "
                       "estimates the gap of the two rules over all 1,490 answers; its error is "
                       "measured against the real human labels held back — nothing here is "
                       "simulated but the sampling. Budgets count usable labels; clusters are "
                       "questions.")
        nq_budgets = tuple(sorted({*NQ_BUDGETS, budget}))
        with store_guard():
            real = pd.concat([run_real_pilot(str(path), stamp, b, reps, rule_a, rule_b, design)
                              for b in nq_budgets], ignore_index=True)
        at_b = real[real["budget"] == budget].set_index("estimator")
        rh, rt = at_b.loc["human_only"], at_b.loc["trisource"]
        st.markdown(f"##### TriSource-Restore at {budget} usable labels, {reps:,} real pilots")
        r = st.columns(5)
        r[0].metric("Truth gap Δ_Y", f"{rt['delta_y']:+.3f}", border=True,
                    delta=f"exact match {rt['delta_z']:+.3f}", **INFO,
                    help=f"R({rule_b}) − R({rule_a}) over the 1,490 answers (> 0: {rule_a} "
                         "better), "
                         "by the held-back human labels; the exact-match value beside it.")
        r[1].metric("RMSE", f"{rt['rmse']:.4f}", border=True,
                    delta=f"human-only {rh['rmse']:.4f}", **INFO)
        r[2].metric("95 % width", f"{rt['mean_width']:.4f}", border=True,
                    delta=f"human-only {rh['mean_width']:.4f}", **INFO,
                    help=f"{rt['width_reduction']:.1%} narrower than human-only.")
        r[3].metric("Coverage", f"{rt['coverage']:.3f}", border=True,
                    delta=f"human-only {rh['coverage']:.3f}", **INFO,
                    help="Share of pilots whose interval contains the full-human gap.")
        r[4].metric("Right direction", f"{rt['p_correct_direction']:.3f}", border=True,
                    delta=f"human-only {rh['p_correct_direction']:.3f}", **INFO)
        nfig = cached_figure("pb_nq", (str(path), stamp, rule_a, rule_b, reps, design, budget),
                             lambda: budget_curves_figure(
                                 real, budget=budget,
                                 title=f"NQ-open: {rule_a} vs {rule_b}, {reps:,} real pilots per "
                                       "budget"))
        show_figure(nfig, key="pb_nq_curves", stem="nq301_pilot_budgets",
                    alt="NQ-open pilot budget curves")
        st.caption(
            f"β: {real['beta_origin'].iloc[0]}. The judges (BEM, GPT-4, InstructGPT) and exact "
            "match "
            "are the control variates. Coverage is measured against the real full-human gap; a "
            "pilot of 50 labels should cover it at about the nominal 95 %."
        )
        download_row(key="pb_dl_nq", stem="nq301_pilot_budgets",
                     frame=real.drop(columns=["beta_origin"]), fig=nfig, what="Real pilots")


panel()
