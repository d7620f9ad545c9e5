"""Pilot budget: how many human labels settle the ranking, and what the judges buy.

Glue over :mod:`core.calibration.pilot_view` (through ``pages._shared.pilot``): the pilots at
the chosen budget are one :class:`BudgetView` (panel A, the seed's numbers, the curve), their
held-out repair one :class:`HeldoutView`, the judge check one :class:`JudgeView`, the walk one
:class:`WalkView`, the NQ-open pilots one :class:`RealPilotView`; figures come from
``core.figures.calibration``. The gap is Δ_Y = R(EG) − R(native): above 0, native is better.

URL state (:mod:`core.urlparams`): ``pb_budget``, ``pb_reps``, ``pb_design``, ``pb_kind``,
the scenario knobs ``pb_omit``, ``pb_fmr``, ``pb_disc``, ``pb_judge``, ``pb_walk``,
``pb_jbias`` and the NQ-open rules ``pb_nq_a``, ``pb_nq_b``. Everything below the title is one
``st.fragment``; the judge check, the walk and the NQ-open section are fragments inside it.
The panel-A table, the sampled items, the judge check and the NQ-open pilots are computed only
while their expander is open (a link naming ``pb_nq_a``/``pb_nq_b`` opens the last).
Longer than 200 lines: five panels (the estimators with the seed's numbers and the curves,
the held-out repair, the judge check, the walk with its sampled items, NQ-open), each with
the prose that teaches it; every number and every fact a sentence states comes from a view.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import math

import streamlit as st

from core.calibration.pilot_view import width_words
from core.figures.calibration import (
    algorithm1_figure,
    budget_curves_figure,
    budget_marker_shapes,
    heldout_figure,
)
from core.figures.overlay import with_overlay
from core.glossary import tip
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
from pages._shared.pilot import budget_views, judges_of, real_pilots_of, sampled_of, walk_of
from pages._shared.seed003 import (
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    distinct_rules,
    download_row,
    load_nq_rules,
    scenario_controls,
    scenario_params,
    show_figure,
)
from pages._shared.ui import FAVICON, glossary_link, num_columns, show_number_table

st.set_page_config(layout="wide", page_title="Pilot budget · Arbiter",
                   page_icon=FAVICON)

#: simulated pilots per budget: a new setting at 500 in about 0.25 s on two cores
REPS = (200, 500)
DESIGNS = {"stratified": "stratified", "srs": "SRS", "pps": "PPS"}
NQ_A = ("agreement", *NQ_LOCATION_RULES)
NQ_B = (*NQ_CONSTANT_RULES, *NQ_LOCATION_RULES, "agreement")
INFO = {"delta_color": "off", "delta_arrow": "off"}  # a delta that informs, not a change

path = ensure_store()
stamp = store_stamp(path)

st.title("Pilot budget: how many human labels settle it?")
st.caption(
    "In the answer-key paper's scenario the reference says one rule is better, the truth the "
    "other. A small "
    "probability-sampled human pilot estimates the truth gap without bias; the reference labels "
    "and two frozen automatic judges enter only as control variates, so they can narrow the "
    "interval (how much is measured below) but cannot move its target. Below: repeated "
    "simulated pilots per budget, one pilot followed look by look, and the same budgets on real "
    "answers of question-answering systems (NQ-open).")
glossary_link()

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


def shown(x: float, fmt: str) -> str:
    """``x`` formatted, "—" where it does not exist (no pilot gave an interval)."""
    return format(x, fmt) if math.isfinite(x) else "—"


def pair(col, label: str, tri: float, hum: float, fmt: str, help: str) -> None:
    """A TriSource metric with human-only's value as its (uncoloured) delta."""
    col.metric(label, shown(tri, fmt), delta=f"human-only {shown(hum, fmt)}", border=True,
               **INFO, help=help)


@st.fragment
def panel() -> None:
    """The pilot settings and everything they change (reruns on its own)."""
    c1, c2, c3, c4 = st.columns([2.2, 1.2, 2, 1.8])
    with c1:
        budget = int(url_slider(P_BUDGET, "Pilot budget (human annotations)",
                                help=tip("Pilot budget")))
    with c2:
        reps = int(url_segmented(P_REPS, "Repetitions", format_func=str,
                                 help="Simulated pilots per budget: more is smoother and slower; "
                                      "results are cached. `python -m core pilot` runs the "
                                      "paper's full count (or `--reps N`)."))
    with c3:
        design = url_segmented(P_DESIGN, "Design", format_func=DESIGNS.get, help=tip(
            "Human pilot", "Stratified takes unmatched high-confidence answers first; PPS draws "
                           "with replacement in proportion to a frozen size measure."))
    with c4:
        kind = url_segmented(P_KIND, "Budget counts", help=tip("Pilot budget"))
    with st.expander("Scenario settings (the answer-key paper's default scenario)"):
        k = tuple(float(v) for v in scenario_controls("pb", columns=4).values())
    v, held = budget_views(k, budget, reps, design, kind, int(current(P_WALK)))
    h, t = v.human, v.tri

    st.subheader(f"TriSource-Restore at {budget} {kind} annotations ({reps:,} simulated pilots)",
                 anchor=False, help=tip("TriSource-Restore"))
    m = st.columns(4) + st.columns(4)
    pair(m[0], "RMSE", t.rmse, h.rmse, ".4f", tip("RMSE", "Here: of the estimated Δ_Y."))
    pair(m[1], "95 % width", t.mean_width, h.mean_width, ".4f",
         f"{width_words(t.width_reduction).capitalize()} (the paper: "
         f"{v.seed_width_reduction:.1%} narrower at {v.seed_budget} "
         "usable labels).")
    pair(m[2], "Coverage", t.coverage, h.coverage, ".3f", tip(
        "Interval coverage", f"Here over the pilots that gave an interval; over all pilots "
                             f"{shown(t.coverage_all, '.3f')} (human-only "
                             f"{shown(h.coverage_all, '.3f')})."))
    pair(m[3], "Right direction", t.p_correct_direction, h.p_correct_direction, ".3f",
         f"Share of pilots whose estimate has the sign of Δ_Y; the paper reports at least "
         f"{v.seed_p_correct_min:.3f} at {v.seed_budget} attempted.")
    pair(m[4], "False stops", t.false_termination, h.false_termination, ".3f",
         tip("False termination"))
    pair(m[5], "Escalations", t.escalation, h.escalation, ".3f", tip("Escalation"))
    m[6].metric("Usable labels", f"{v.mean_usable:.1f}", border=True, help=tip("Pilot budget"),
                delta=f"of {budget} {kind}", **INFO)
    m[7].metric("Stores sampled", f"{v.mean_clusters:.1f}", border=True, **INFO,
                delta=f"escalate below {v.min_clusters}", help="Stores per pilot, on average.")
    st.caption(
        f"Truth gap Δ_Y = R(EG) − R(native) = {v.delta_y:+.3f} on the full frame (above 0: "
        f"native is better); the reference alone says Δ_Z = {v.delta_z:+.3f}"
        + (", the same winner. " if v.reference_agrees else
           f" and would select {v.winner_z} instead. ")
        + f"Judge weights β = ({v.beta_text}), {v.beta_source}. **Exact:** for any β fixed "
        "before the pilot the estimate is unbiased for Δ_Y. **Measured:** everything above, "
        f"over {reps:,} pilots (simulated in {v.elapsed_s:.2f} s). {v.coverage_text}",
        help=" ".join((tip("Δ_Y"), tip("EG"), tip("β"))))
    box_a = st.expander(f"These numbers beside the answer-key paper's ({v.seed_budget} usable "
                        "labels)",
                        key="pb_panel_a_open", on_change="rerun")
    with box_a:
        if box_a.open:
            # "—" where a measure does not apply (no saving for human-only), not "None"
            show_number_table(v.panel_a, default="{:.4f}", hide_index=True, width="stretch")
            st.caption("Bias, pilots without an interval and the other measures are in the "
                       "download.")
            download_row(key="pb_dl_panel_a", stem=f"pilot_panel_a_b{budget}",
                         frame=v.panel_a_full, what="Estimators")

    base = cached_figure("pb_curves", (*k, reps, design, kind, v.level),
                         lambda: budget_curves_figure(v.curve, level=v.level, title=(
                             f"Over the budget ({reps:,} pilots per point, {DESIGNS[design]}, "
                             f"{kind})")))
    cfig = with_overlay(base, shapes=budget_marker_shapes(budget))  # the budget: ~5 ms
    show_figure(cfig, key="pb_curves", stem="pilot_budget_curves", alt="Pilot budget curves")
    missing = v.budgets_missing_intervals
    st.caption(
        "Both estimators target the same Δ_Y, so both should stay near the nominal coverage "
        "(dotted) over the pilots that give an interval; the judges and the reference labels "
        "act only on the variance"
        + (", and TriSource is narrower than human-only at every budget. " if
           v.narrower_at_every_budget else ", though here not at every budget. ")
        + (f"At {_budgets(missing)} labels some pilots give no interval; there the thin dotted "
           "lines show coverage over all pilots, a pilot without an interval counted as a "
           "miss. " if missing else "")
        + ("Escalations fall as budgets grow: small pilots sample too few stores or leave "
           "the interval open." if v.escalations_fall else
           "Here escalations do not fall steadily with the budget: look at the escalation "
           "panel."))
    download_row(key="pb_dl_curves", stem="pilot_budget_curves", frame=v.curve, fig=cfig,
                 what="Curves")

    st.subheader("Repairing the confidence: held-out truth-Brier", anchor=False,
                 help=tip("Monotone repair"))
    h1, h2 = st.columns([3, 2])
    with h1:
        hfig = cached_figure("pb_heldout", (*k, budget, reps, design, kind), lambda: heldout_figure(
            held.values, title=f"Held-out Brier under Y at {budget} {kind} labels"))
        show_figure(hfig, key="pb_heldout", stem="pilot_heldout_brier", alt="Held-out Brier bars")
    with h2:
        st.dataframe(held.table, hide_index=True, width="stretch",
                     column_config=num_columns(held.table, "%.4f"))
        st.caption(held.text, help=tip("α"))
        download_row(key="pb_dl_heldout", stem="pilot_heldout_brier", frame=held.table,
                     fig=hfig, what="Held-out Brier")
    judge_panel(k, budget, reps, design, kind)
    walk_panel(k, design)
    nq_panel(budget, reps, design)


def _budgets(budgets: tuple[int, ...]) -> str:
    """``(10, 15, 20)`` → "10, 15 and 20"."""
    words = [str(b) for b in budgets]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


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
        j = judges_of(k, bias, budget, reps, design, kind)
        lean, fair, blind = j.lean, j.fair, j.blind
        c = st.columns(4)
        c[0].metric("TriSource coverage", shown(lean["trisource_coverage"], ".3f"),
                    border=True, delta=f"unbiased {shown(fair['trisource_coverage'], '.3f')}",
                    **INFO,
                    help=tip("Interval coverage", "Here with the judges biased as set above."))
        c[1].metric("Human-only coverage", shown(lean["human_only_coverage"], ".3f"),
                    border=True,
                    delta="judges do not enter it", **INFO, help=tip("Human-only estimator"))
        c[2].metric("Width saved", shown(lean["width_reduction"], ".1%"), border=True, **INFO,
                    delta=f"unbiased {shown(fair['width_reduction'], '.1%')}",
                    help="How much narrower TriSource's interval is than human-only's.")
        c[3].metric("Width saved, quality 0", shown(blind["width_reduction"], ".1%"),
                    border=True,
                    delta=f"β = ({blind['beta']})", **INFO,
                    help="Judges that know nothing about Y, with the weights β learned for them.")
        st.caption(
            f"Measured over {reps:,} pilots of {budget} {kind} labels each. Judges of quality 0 "
            f"know nothing about Y, yet the estimators do not coincide: β, {j.blind_beta_source}, "
            f"comes out at ({blind['beta']})"
            + (", because the judges lean towards the reference label and so still remove some "
               "of its noise" if j.blind_narrower else "")
            + f" — TriSource is {width_words(blind['width_reduction'])} here. "
            + ((f"A bias of {bias:+g} logits leaves the estimate unbiased (β is fixed) but "
                "makes its residuals skewed: TriSource covers "
                f"{shown(lean['trisource_coverage'], '.3f')}{j.coverage_note} instead of "
                f"{shown(fair['trisource_coverage'], '.3f')}") if bias != 0 else
               (f"With unbiased judges TriSource covers "
                f"{shown(lean['trisource_coverage'], '.3f')}{j.coverage_note}"))
            + (f", below the {j.level * 100:.0f} % it promises." if j.covers_less else ".")
            + " Human-only is the fallback when the judges cannot be trusted.")
        st.dataframe(j.table, hide_index=True, width="stretch", column_config=num_columns(j.table))
        download_row(key="pb_dl_judges", stem=f"pilot_judges_b{budget}", frame=j.full,
                     what="Judge check")


@st.fragment
def walk_panel(k: tuple[float, ...], design: str) -> None:
    """One pilot look by look (the pilot number reruns only this)."""
    st.header("One pilot, look by look", help=tip("Stopping rule"))
    w1, w2 = st.columns([1, 3])
    with w1:
        seed = int(url_number(P_WALK, "Pilot number",
                              help="Which simulated pilot to follow (its random seed)."))
    w = walk_of(k, seed, design)
    w2.caption(
        "0 freeze everything but Y → 1 sample human labels (unmatched high-confidence answers "
        "first) → 2 estimate the gap → 3 select when the interval excludes 0 → 4 on one half "
        "of the pilot, choose the selected rule's confidence map (unrepaired, pilot-only Platt "
        "or the TriSource repair) by out-of-fold Brier → 5 escalate while the interval crosses "
        "0 or too few stores are sampled → 6 gate: deploy that map only if, judged on the other "
        "half, it beats a constant at the base rate. Looks at "
        f"{', '.join(map(str, w.looks))} attempted annotations share one 5 % error, so each "
        f"interval is {w.look_level:.2%}."
        + (" (PPS has no nested looks: this walk uses the stratified design.)"
           if w.substituted else ""))
    afig = cached_figure("pb_walk", (*k, seed, w.design), lambda: algorithm1_figure(
        w.steps, delta_y=w.delta_y, names=w.names, level=w.look_level,
        title=f"Pilot {seed}: the interval at each look"))
    show_figure(afig, key="pb_walk_fig", stem=f"algorithm1_pilot{seed}",
                alt="Intervals of the pilot at each look")
    if w.stopped is not None:
        s = w.stopped
        st.success(f"Stopped at look {s.step} ({s.budget} attempted, {s.n_usable} usable labels): "
                   f"**{w.winner}** selected, interval [{s.lo:+.3f}, {s.hi:+.3f}].",
                   icon=":material/check_circle:")
        if w.gate is not None:
            (st.success if w.gate.passes else st.info)(
                f"Gate: {w.gate_text}"
                + (f" (gap to the constant {w.gate.gap:+.4f} [{w.gate.lo:+.4f}, "
                   f"{w.gate.hi:+.4f}])." if math.isfinite(w.gate.lo) else "."),
                icon=":material/flag:")
        if w.deployed_text:
            st.caption(w.deployed_text)
            with st.expander("How the deployed map was chosen (out-of-fold Brier)"):
                st.dataframe(w.choice_table, hide_index=True, width="stretch",
                             column_config=num_columns(w.choice_table, "%.4f"))
                st.caption(tip("Deployment choice"))
    else:
        st.warning("The interval never closed by the last look: the pilot does not stop on an "
                   "open interval — collect more labels.", icon=":material/hourglass_top:")
    level = f"{w.look_level:.2%}"
    st.dataframe(w.table, hide_index=True, width="stretch", column_config={
        "budget": "attempted", "n_usable": "usable", "n_clusters": "stores",
        "interval": f"TriSource {level}", "human_only": f"human-only {level}",
        "decision": "selects"})
    box_s = st.expander("Which items were sampled at each look", key="pb_sampled_open",
                        on_change="rerun")
    with box_s:
        if box_s.open:
            shown, full = sampled_of(k, seed, design)
            st.dataframe(shown, hide_index=True, width="stretch", column_config=num_columns(shown))
            st.caption("y is what the annotator reveals for that item (about 8 % of annotations "
                       "come back insufficient and still cost budget). Strata are frozen before "
                       "any y is seen: matched or not by the reference × native confidence ≥ .8.")
            download_row(key="pb_dl_sampled", stem=f"algorithm1_pilot{seed}_items", frame=full,
                         what="Sampled items")
    download_row(key="pb_dl_walk", stem=f"algorithm1_pilot{seed}", frame=w.download, fig=afig,
                 what="Steps")


@st.fragment
def nq_panel(budget: int, reps: int, design: str) -> None:
    """The same budgets on the real NQ-open answers (the rules rerun only this)."""
    st.header("The same budgets on real answers (NQ-open)")
    box = st.expander("Real pilots on the human-labelled answers (about 1 s for new settings, "
                      "computed when opened)", key="pb_nq_open", on_change="rerun",
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
            return
        n1, n2, n3 = st.columns([1, 1, 2])
        rule_a = url_select(P_A, "Rule A", where=n1, help=tip("agreement"))
        rule_b = distinct_rules(rule_a, url_select(P_B, "Rule B", where=n2))
        n3.caption("Every pilot samples answers, reveals only their human labels and estimates "
                   "the gap of the two rules over all answers; its error is measured against the "
                   "human labels held back — nothing here is simulated but the sampling. "
                   "Budgets count usable labels; clusters are questions.")
        with store_guard():
            r = real_pilots_of(str(path), stamp, budget, reps, rule_a, rule_b, design)
        h, t = r.human, r.tri
        st.markdown(f"##### TriSource-Restore at {budget} usable labels, {reps:,} real pilots")
        m = st.columns(4)
        m[0].metric("Truth gap Δ_Y", f"{r.delta_y:+.3f}", border=True, **INFO,
                    delta=f"exact match {r.delta_z:+.3f}",
                    help=f"R({rule_b}) − R({rule_a}) over the {r.n_answers:,} answers by the "
                         f"held-back human labels (above 0: {rule_a} is better); beside it the "
                         "same gap under exact match.")
        pair(m[1], "RMSE", t.rmse, h.rmse, ".4f", tip("RMSE"))
        pair(m[2], "95 % width", t.mean_width, h.mean_width, ".4f",
             width_words(t.width_reduction).capitalize() + ".")
        pair(m[3], "Coverage", t.coverage, h.coverage, ".3f", tip(
            "Interval coverage", f"Here over the pilots that gave an interval; over all pilots "
                                 f"{shown(t.coverage_all, '.3f')} (human-only "
                                 f"{shown(h.coverage_all, '.3f')})."))
        nfig = cached_figure("pb_nq", (str(path), stamp, rule_a, rule_b, reps, design, budget),
                             lambda: budget_curves_figure(r.curve, budget=budget, title=(
                                 f"NQ-open: {rule_a} vs {rule_b}, {reps:,} real pilots per "
                                 "budget")))
        show_figure(nfig, key="pb_nq_curves", stem="nq301_pilot_budgets",
                    alt="NQ-open pilot budget curves")
        st.caption(
            f"By the humans, {r.winner} is better; exact match "
            + ("agrees. " if r.exact_match_agrees else "says the opposite. ")
            + f"TriSource has the sign right in {t.p_correct_direction:.1%} of the pilots "
              f"(human-only {h.p_correct_direction:.1%}). β: {r.beta_origin}. The judges (BEM, "
              "GPT-4, InstructGPT) and exact match are the control variates; coverage is "
              f"measured against the real full-human gap. {r.coverage_text}")
        download_row(key="pb_dl_nq", stem="nq301_pilot_budgets", frame=r.curve, fig=nfig,
                     what="Real pilots")


panel()
