"""Ranking reversal: when does a cheaper label source flip which confidence rule wins?

Glue over :mod:`core.calibration.reversal_view` (through ``pages._shared.reversal``): the
top panel (scenario or NQ-open, π, the rules) is one :class:`ReversalView` and its
``at(π)`` verdict; the bridge one ``BridgeView``; the real case one ``nq_case_of`` result.
Figures come from ``core.figures.calibration``. Every gap is Δ = R(B) − R(A) (above 0, A
is better; the glossary's "sign convention").

URL state (:mod:`core.urlparams`): ``rr_data``, ``rr_prev``, the scenario knobs ``rr_omit``,
``rr_fmr``, ``rr_disc``, ``rr_judge``, the NQ-open rules ``rr_nq_a``, ``rr_nq_b`` and the
bridge's ``rr_br_method``, ``rr_br_ref``. The top panel and the bridge are fragments.
Longer than 150 lines because it has three panels, each with its own prose.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.calibration.reversal_view import SHIFT_TITLES
from core.figures.calibration import (
    bridge_figure,
    brier_gap_figure,
    label_source_figure,
    rule_colors,
    system_accuracy_figure,
)
from core.figures.style import METHOD_SHORT
from core.glossary import tip
from core.store import StoreError
from core.testbed.questions import SOURCE_LABELS, SOURCES
from core.urlparams import ChoiceParam, NumberParam
from pages._shared import (
    ensure_store,
    open_page,
    public_message,
    store_guard,
    store_stamp,
    url_segmented,
    url_select,
    url_slider,
)
from pages._shared.cache import cached_figure
from pages._shared.reversal import (
    bridge_of,
    nq_case_of,
    nq_reversal,
    nq_truth_prevalence,
    scenario_reversal,
)
from pages._shared.seed003 import (
    BRIDGE_METHODS,
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    distinct_rules,
    download_row,
    nq_answers_or_stop,
    scenario_controls,
    scenario_params,
    show_figure,
    show_split_table,
)
from pages._shared.ui import FAVICON, glossary_link, method_key, num_columns, table_height

st.set_page_config(layout="wide", page_title="Ranking reversal · Arbiter",
                   page_icon=FAVICON)

DATA = {"scenario": "Scenario", "nq": "NQ-open"}
NQ_A = ("agreement", *NQ_LOCATION_RULES)
NQ_B = (*NQ_CONSTANT_RULES, *NQ_LOCATION_RULES, "agreement")
COLORS = rule_colors(["native", "eg", *NQ_A, *NQ_CONSTANT_RULES])
INFO = {"delta_color": "off", "delta_arrow": "off"}  # a delta that informs, not a change

path = ensure_store()
stamp = store_stamp(path)

st.title("Ranking reversal: the label source picks the winner")
st.caption(
    "Two confidence rules score the same answers. A finite reference calls every answer it "
    "cannot match false, so the label's share of true answers (its prevalence) drops. When "
    "the rules discriminate weakly, moving the prevalence across the midpoint of their two "
    "means moves the winner. Gaps are Δ = R(B) − R(A): above zero, rule A is better. The "
    "figures marked “paper” are the answer-key paper's.", help=tip("Δ"))
glossary_link()

P_DATA = ChoiceParam("rr_data", "data choice", tuple(DATA), default="scenario",
                     tokens=tuple(DATA.values()))
P_PREV = NumberParam("rr_prev", "prevalence", 0.0, 1.0, 0.01, 0.78)
P_A = ChoiceParam("rr_nq_a", "rule A", NQ_A, default=NQ_A[0])
P_B = ChoiceParam("rr_nq_b", "rule B", NQ_B, default="const@0.50")
P_METHOD = ChoiceParam("rr_br_method", "resolver", BRIDGE_METHODS, default=BRIDGE_METHODS[0],
                       tokens=tuple(METHOD_SHORT[m] for m in BRIDGE_METHODS))
P_REF = ChoiceParam("rr_br_ref", "reference source", SOURCES, default="daily_self_report",
                    tokens=tuple(SOURCE_LABELS[s] for s in SOURCES))
open_page("ranking", [P_DATA, P_PREV, *scenario_params("rr"), P_A, P_B, P_METHOD, P_REF])


def follow_truth(data: str) -> None:
    """On a switch of data, π starts at that data's truth prevalence E[Y] (scenario: the
    slider's default .78; NQ-open: the humans' share). A link's valid ``rr_prev`` is kept."""
    last = st.session_state.get("_rr_prev_data")
    st.session_state["_rr_prev_data"] = data
    if last == data or (last is None and (data == "scenario" or P_PREV.key in st.query_params)):
        return
    nq_answers_or_stop(str(path), stamp)  # one error line if the store lacks NQ-open
    truth = nq_truth_prevalence(str(path), stamp) if data == "nq" else P_PREV.default
    st.session_state[P_PREV.key] = round(round(truth / P_PREV.step) * P_PREV.step, 10)


@st.fragment
def main_panel() -> None:
    """Data, π and rules → the verdict, the gap curve, the identity and the protocols."""
    top1, top2 = st.columns([1, 3])
    with top1:
        data = url_segmented(P_DATA, "Data", format_func=DATA.get, help=tip("NQ-open"))
    follow_truth(data)
    with top2:
        prev = float(url_slider(P_PREV, "Prevalence π of the label you score against",
                                format="%.2f", help=tip("π")))
    if data == "scenario":
        o1, o2 = st.columns([1, 3])
        with o2:
            omit = scenario_controls("rr", knobs=("omit",))["omission_rate"]
        o1.caption("The **omission rate** moves the reference label Z; the truth Y stays.")
        with st.expander("More scenario settings"):
            more = scenario_controls("rr", knobs=("fmr", "disc", "judge"), columns=3)
        knobs = {**more, "omission_rate": omit}
        view = scenario_reversal(knobs["omission_rate"], knobs["false_match_rate"],
                                 knobs["discrimination"], knobs["judge_quality"])
        key = ("scenario", *sorted(knobs.items()))
    else:
        nq_answers_or_stop(str(path), stamp)
        n1, n2, n3 = st.columns([1, 1, 2])
        rule_a = url_select(P_A, "Rule A", where=n1, help=tip("agreement"))
        rule_b = distinct_rules(rule_a, url_select(P_B, "Rule B", where=n2))
        n3.caption("On real data the omission is what it is: exact match misses paraphrases "
                   "and extra detail the humans accept.")
        view = nq_reversal(str(path), stamp, rule_a, rule_b)
        key = ("nq", str(path), stamp, rule_a, rule_b)
    a, b = view.names
    v = view.at(prev)
    with st.container(key="rr_verdict"):
        m = st.columns(2) + st.columns(2)  # "const@0.50", "0.301 → 0.783": no "…" at 1280 px
        m[0].metric("Selected at π", v.by_criterion, border=True, **INFO,
                    delta=f"π = {prev:.2f} {v.side} {view.midpoint:.3f}",
                    help="By the crossover rule: two constant rules at the means a and b swap "
                         "rank exactly at π = (a + b)/2. " + tip("crossover"))
        m[1].metric("Measured at π", v.measured, border=True, **INFO,
                    delta=f"Δ {v.gap_measured:+.3f}",
                    help="The rules themselves, labels thinned or added at random to reach π.")
        m[2].metric("Crossover", f"{view.midpoint:.3f}", border=True, **INFO,
                    delta=(f"measured {view.curve.crossover:.3f}"
                           if view.curve.crossover == view.curve.crossover else "measured: none"),
                    help=f"(a + b)/2 with a = E[{a}] = {view.a_mean:.3f}, b = E[{b}] = "
                         f"{view.b_mean:.3f}.")
        m[3].metric("E[Z] → E[Y]", f"{view.prevalence_z:.3f} → {view.prevalence_y:.3f}",
                    border=True, **INFO, delta=f"{view.prevalence_y - view.prevalence_z:+.3f}",
                    help="Prevalence of the reference label Z (unmatched = false) and of the "
                         "truth Y on the same answers. " + tip("Z"))
        st.markdown(f"At **π = {prev:.2f}** a proper score selects **{v.by_criterion}** by the "
                    f"crossover rule and **{v.measured}** on the rules as they are. Under the "
                    f"reference it selects **{view.pick(view.gap_z)}**; under the truth "
                    f"**{view.pick(view.gap_y)}**"
                    + (" — the ranking **reverses**." if view.reverses else "."),
                    help=tip("EG") if "EG" in view.names else None)
    fig = cached_figure("rr_gap", (*key, prev), lambda: brier_gap_figure(
        prevalences=view.grid, exact_gap=view.exact, midpoint=view.midpoint, names=(a, b),
        measured_gap=view.measured, measured_crossover=view.curve.crossover,
        prevalence_z=view.prevalence_z, prevalence_y=view.prevalence_y, gap_z=view.gap_z,
        gap_y=view.gap_y, current=prev, colors={a: COLORS[a.lower()], b: COLORS[b.lower()]},
        title=f"Δ = R({b}) − R({a}) against prevalence ({view.unit})"))
    show_figure(fig, key="rr_gap", stem=f"brier_gap_{data}", alt="Brier gap against prevalence")
    c = view.curve
    st.caption(
        f"**Solid:** two constant rules at the means swap rank exactly at {view.midpoint:.3f}. "
        "**Dashed:** the rules themselves; they cross at "
        + (f"{c.crossover:.3f}" if c.crossover == c.crossover else "no point in [0, 1]")
        + f", moved by their different spreads ({c.spread_term:+.3f}, known before any label) "
          f"and by discrimination ({c.discrimination_term:+.3f}). {v.text}"
        + " **Diamonds:** the real label sources, whose gaps are exact.")
    download_row(key="rr_dl_gap", stem=f"brier_gap_{data}", frame=view.curve_table(), fig=fig,
                 what="Curve")

    st.subheader("What moved the gap: omitted truths and false matches", anchor=False)
    i1, i2 = st.columns([3, 2])
    with i1:
        wf = cached_figure("rr_identity", key, lambda: label_source_figure(
            gap_y=view.gap_y, t_omit=view.t_omit, t_fp=view.t_fp, gap_z=view.gap_z,
            names=(a, b), title="Δ under Y + T_omit + T_fp = Δ under Z"))
        show_figure(wf, key="rr_identity", stem=f"label_source_{data}",
                    alt="Label-source decomposition as a waterfall")
    with i2:
        m = st.columns(2) + st.columns(2)
        m[0].metric("T_omit", f"{view.t_omit:+.3f}", border=True, help=tip("T_omit"))
        m[1].metric("T_fp", f"{view.t_fp:+.3f}", border=True, help=tip("T_fp"))
        m[2].metric("Missed truths", f"{view.omit_share:.1%}", border=True,
                    help="Weighted share of answers with Y = 1 and Z = 0: true, but the "
                         "reference did not match them.")
        m[3].metric("Restore q*", f"{view.q_star:.1%}" if view.q_star_is_share else "—",
                    border=True, help=view.q_star_text + " " + tip("q*"))
        st.caption(f"{view.identity_text} Only the Brier score splits this way. "
                   + ("" if view.q_star_is_share else view.q_star_text + " ")
                   + f"A = {a}, B = {b}.")
    download_row(key="rr_dl_identity", stem=f"label_source_{data}", frame=view.identity_table(),
                 fig=wf, what="Decomposition")

    st.subheader("Four ways to score the same rules", anchor=False, help=tip("protocol"))
    if view.protocols is None:
        st.info("These protocols need the matcher's flags, which only the synthetic scenario "
                "records. Switch Data to Scenario.", icon=":material/info:")
        return
    st.dataframe(view.protocols, hide_index=True, width="stretch", column_config={
        **num_columns(view.protocols, "%.3f"),  # a short header: no sideways scroll at 1280 px
        "items scored": st.column_config.NumberColumn("items", format="%d",
                                                      help="Items scored")})
    st.caption("The rules stay fixed; only what is scored, and against what, changes. Only "
               "unmatched-as-false imputes falsehood from not matching, and it is the protocol "
               "that selects the other rule.")
    download_row(key="rr_dl_protocols", stem="scoring_protocols", frame=view.protocols,
                 what="Protocols")


main_panel()

st.header("The same reversal in a memory-agent evaluation")
st.caption(
    "The memory benchmark's resolvers answer survey questions about a person from five "
    "conflicting "
    "sources. Rule A is a resolver's confidence; rule B a frozen source-tier prior (.55 when a "
    "direct record agrees with the answer, .35 a self-report, .20 a claim or nothing). Y: the "
    "answer is right. Z: the answer equals one source's readout, taken as the reference.")


@st.fragment
def bridge_panel() -> None:
    """The resolver and reference choice → one :class:`BridgeView`."""
    method_key(BRIDGE_METHODS, label="What the resolvers' short names mean")
    b1, b2 = st.columns(2)
    method = url_select(P_METHOD, "Resolver (rule A)", where=b1,
                        format_func=lambda m: METHOD_SHORT.get(m, m))
    ref = url_select(P_REF, "Reference source (for Z)", where=b2, format_func=SOURCE_LABELS.get)
    try:
        with store_guard():
            bv = bridge_of(str(path), stamp, method, ref)
    except (StoreError, ValueError) as exc:
        st.info(f"No resolver predictions to bridge: {public_message(exc)}",
                icon=":material/database:")
        return
    o, name = bv.overall, METHOD_SHORT[method]
    k = st.columns(2) + st.columns(2)  # in one row of four, a value or a label ended in "…"
    k[0].metric("E[Z] → E[Y], all", f"{o['prevalence_z']:.3f} → {o['prevalence_y']:.3f}",
                border=True, help="Over all questions.")
    k[1].metric("Crossover, all", f"{o['crossover']:.3f}", border=True,
                help=f"a = E[{name}] = {o['mean_a']:.3f}, b = E[tier prior] = {o['mean_b']:.3f}.")
    k[2].metric("Families that reverse", f"{bv.n_reverse} of {bv.n_families}", border=True,
                delta="overall reverses" if o["reverses"] else "overall does not", **INFO)
    k[3].metric("Crossover rule right", f"{bv.n_predicted_right} of {bv.n_families}",
                border=True, help="It predicts a reversal when the crossover lies between E[Z] "
                                  "and E[Y].")
    bfig = cached_figure("rr_bridge", (str(path), stamp, method, ref), lambda: bridge_figure(
        bv.table, names=(name, "tier prior"),
        title=f"{name} vs the source-tier prior, Z = {SOURCE_LABELS[ref]}"))
    show_figure(bfig, key="rr_bridge", stem=f"bridge_{method}_{ref}",
                alt="Bridge gaps per family")
    shown = bv.table[["label", "n", "prevalence_y", "prevalence_z", "crossover", "gap_y", "gap_z",
                      "reverses", "predicted"]].rename(columns={
                          "label": "family", "prevalence_y": "E[Y]", "prevalence_z": "E[Z]",
                          "gap_y": "Δ under Y", "gap_z": "Δ under Z",
                          "predicted": "rule predicts"})
    st.dataframe(shown, hide_index=True, width="stretch", column_config=num_columns(shown))
    st.caption("It reverses where the reference is poor: families that source answers badly "
               "collapse E[Z], and the resolver's high confidence is then punished.")
    download_row(key="rr_dl_bridge", stem=f"bridge_{method}_{ref}", frame=bv.table, fig=bfig,
                 what="Bridge")


bridge_panel()

st.header("The real NQ-open case")
try:
    with store_guard():
        nq = nq_case_of(str(path), stamp)
except StoreError as exc:
    st.info(f"The NQ-open case is not available: {public_message(exc)}", icon=":material/database:")
    st.stop()
seed, pairs = nq.seed, nq.pairs
q = st.columns(2) + st.columns(2)  # in one row of four, values and labels ended in "…"
q[0].metric("Exact match → humans", f"{nq.prevalence_z:.3f} → {nq.prevalence_y:.3f}", border=True,
            help=f"Exact match against humans, over the {nq.n_labelled:,} labelled answers.")
q[1].metric("Unmatched but accepted", f"{nq.p_y1_given_z0:.1%}", border=True, **INFO,
            delta=f"paper: {seed.table1_em_negatives_human_correct:.1%}",
            help="Of the answers exact match calls wrong (Z = 0), the share that the human "
                 "judges accept as right: P(Y = 1 | Z = 0), the omitted truths of this "
                 "reference. Beside it, the answer-key paper's figure for the same share, "
                 "measured on another QA pipeline's answers (its Table 1), so the two need not "
                 "agree.")
q[2].metric("AUROC of agreement", f"{nq.auroc.auroc_y:.3f}", border=True, **INFO,
            delta=f"paper {seed.auroc_agreement:.3f}", help=tip("AUROC"))
q[3].metric("Reversals of 21 pairs", f"{pairs.n_reversals} / {len(pairs.pairs)}", border=True,
            delta=f"paper {seed.reversals} / 21", **INFO,
            help=f"The crossover rule is right on {pairs.n_criterion_correct} of "
                 f"{len(pairs.pairs)} pairs; {pairs.n_reversals_both_exclude_zero} reversals have "
                 "both intervals away from zero.")
# chart above table: side by side, the seven-column table scrolled sideways at 1280-1440 px
afig = cached_figure("rr_systems", (str(path), stamp), lambda: system_accuracy_figure(
    nq.systems, title="12 systems: exact match against humans"))
show_figure(afig, key="rr_systems", stem="nq301_systems", alt="System accuracy dumbbell")
st.dataframe(nq.systems_shown, hide_index=True, width="stretch",
             height=table_height(len(nq.systems_shown)),
             column_config=num_columns(nq.systems_shown, "%.3f"))
st.caption("Every system gains under human judgement, but not equally: exact match penalises "
           "verbose or paraphrased answers, so the ranking of the systems changes too.")
download_row(key="rr_dl_systems", stem="nq301_systems", frame=nq.systems, fig=afig,
             what="Systems")
with st.expander(f"The 21 rule pairs ({pairs.construction})"):
    show_split_table(nq.pairs_shown, num_columns(nq.pairs_shown, "%+.3f"),
                     keep=["rule A", "rule B"])  # every column in sight
    st.caption(f"A reversal is predicted when (a + b)/2 lies between E[Z] = "
               f"{pairs.prevalence_z:.3f} and E[Y] = {pairs.prevalence_y:.3f}; gaps are "
               "R(B) − R(A) with question-cluster 95 % intervals. The answer-key paper does not "
               "list its seven rules; these are our reading, chosen before counting.")
    download_row(key="rr_dl_pairs", stem="nq301_rule_pairs", frame=nq.pairs_shown, what="Pairs")
with st.expander("Prevalence shift per system"):
    shift = nq.shift.rename(columns=SHIFT_TITLES)
    show_split_table(shift, num_columns(shift, "%.3f"), keep=["level"])
    download_row(key="rr_dl_shift", stem="nq301_prevalence_shift", frame=nq.shift,
                 what="Prevalence shift")
