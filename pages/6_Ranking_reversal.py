"""Ranking reversal: when does a cheaper label source flip which confidence rule a proper
score prefers? (seed 003 §3 Eq. 1–2, §5.1–5.3, Tables 3–4; label-source-notes.)

Thin glue: the scenario or the NQ-open answers (``pages._shared.seed003``) →
``core.calibration.label_source`` (the crossover (a + b)/2, the Brier gap against prevalence,
the exact identity T_omit + T_fp, the four protocols of Table 3) → figures of
``core.figures.calibration``. Below: the same analysis on the seed-000 resolvers
(``core.calibration.bridge``) and the real NQ-open release (``core.calibration.nq301``).

URL state (:mod:`core.urlparams`, one validated path, read when the page opens):
``rr_data``, ``rr_prev`` (the prevalence π), the scenario knobs ``rr_omit``, ``rr_fmr``,
``rr_disc``, ``rr_judge``, the NQ-open rules ``rr_nq_a`` and ``rr_nq_b``, and the bridge's
``rr_br_method`` and ``rr_br_ref``; a refused value gives one plain-text notice. Two equal
NQ-open rules are dependent on each other: the page says so and picks a different B.

The top panel and the bridge are ``st.fragment``s (a widget reruns only its panel); the
analyses and figures are cached across sessions by the widget values.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import numpy as np
import pandas as pd
import streamlit as st

from core.calibration.label_source import (
    brier_gap_constant,
    brier_gap_curve,
    crossover_prevalence,
    label_source_decomposition,
    scoring_protocols,
)
from core.calibration.nq301 import (
    SEED_003_NQ301,
    agreement_auroc,
    prevalence_shift,
    system_accuracy,
)
from core.calibration.paper import TABLE3
from core.figures.calibration import (
    bridge_figure,
    brier_gap_figure,
    label_source_figure,
    rule_colors,
    system_accuracy_figure,
)
from core.figures.style import METHOD_SHORT
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
from pages._shared.cache import cached_figure, cached_result
from pages._shared.seed003 import (
    BRIDGE_METHODS,
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    distinct_rules,
    download_row,
    load_bridge,
    load_nq301,
    load_scenario,
    nq_answers_or_stop,
    run_rule_pairs,
    scenario_controls,
    scenario_params,
    show_figure,
)

st.set_page_config(layout="wide", page_title="Ranking reversal · Arbiter",
                   page_icon=":material/swap_vert:")

DATA = {"scenario": "Scenario", "nq": "NQ-open"}
NQ_A = ("agreement", *NQ_LOCATION_RULES)
NQ_B = (*NQ_CONSTANT_RULES, *NQ_LOCATION_RULES, "agreement")
COLORS = rule_colors(["native", "eg", *NQ_A, *NQ_CONSTANT_RULES])
PROTOCOL_NAMES = {"unmatched_as_false": "Unmatched-as-false (Z)",
                  "matched_only": "Matched-only (IR condensed list)",
                  "closed_world": "Closed-world (the reference's own propositions)",
                  "adjudicated": "Adjudicated truth (Y)"}
NUM3 = st.column_config.NumberColumn(format="%.3f")
#: a metric delta that informs rather than measures a change: no colour, no arrow
INFO = {"delta_color": "off", "delta_arrow": "off"}
SIGNED = st.column_config.NumberColumn(format="%+.3f")

path = ensure_store()
stamp = store_stamp(path)

st.title("Ranking reversal: the label source picks the winner")
st.caption(
    "Two confidence rules score the same items. A finite reference records every unmatched "
    "answer as false, which lowers the prevalence of the label. A proper score splits into "
    "how far a rule's mean sits from that prevalence and how well the rule discriminates; "
    "when discrimination is weak, moving the prevalence across the midpoint of the two means "
    "moves the winner (seed 003 §5.2)."
)

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


def gap_analysis(ca, cb, y, z, w) -> dict:
    """Everything the top panel shows that does not depend on π (cached by the caller)."""
    a_mean, b_mean = float(np.average(ca, weights=w)), float(np.average(cb, weights=w))
    grid = np.linspace(0.0, 1.0, 201)
    return {"a_mean": a_mean, "b_mean": b_mean, "mid": crossover_prevalence(a_mean, b_mean),
            "grid": grid,
            "exact": np.array([brier_gap_constant(a_mean, b_mean, g) for g in grid]),
            "curve": brier_gap_curve(ca, cb, y, prevalences=grid, weights=w, mode="flip"),
            "dec": label_source_decomposition(ca, cb, y, z, weights=w),
            "pz": float(np.average(z, weights=w)), "py": float(np.average(y, weights=w))}


def follow_truth(data: str) -> None:
    """When the visitor switches the data, π starts at that data's truth prevalence E[Y].

    The scenario's is the slider's default (seed 003's .783 under adjudicated truth); NQ-open's
    is the share of the 1,490 answers the humans accept. A link's valid ``rr_prev`` is kept
    on the run that opens the page; a link to NQ-open without one starts at its E[Y].
    """
    last = st.session_state.get("_rr_prev_data")
    st.session_state["_rr_prev_data"] = data
    if last == data or (last is None and (data == "scenario" or P_PREV.key in st.query_params)):
        return
    if data == "nq":
        y = nq_answers_or_stop(str(path), stamp)["y"].to_numpy(float)
        truth = float(np.nanmean(y))
    else:
        truth = float(P_PREV.default)
    st.session_state[P_PREV.key] = round(round(truth / P_PREV.step) * P_PREV.step, 10)


@st.fragment
def main_panel() -> None:
    """Data, prevalence, rules and the verdict, curve, identity and protocols they give."""
    top1, top2 = st.columns([1, 3])
    with top1:
        data = url_segmented(
            P_DATA, "Data", format_func=DATA.get,
            help="Scenario: seed 003's synthetic belief stores, native vs EG. NQ-open: 1,490 real "
                 "answers, cross-system agreement vs a constant (or any pair).")
    follow_truth(data)
    with top2:
        prev = float(url_slider(
            P_PREV, "Prevalence π of the label you score against", format="%.2f",
            help="Move it across the crossover (a + b)/2 and watch the selected rule flip. "
                 "Seed 003: .295 under the reference, .783 under adjudicated truth."))

    if data == "scenario":
        o1, o2 = st.columns([1, 3])
        with o2:
            knobs = scenario_controls("rr", knobs=("omit",))
        with o1:
            st.caption("The **omission rate** moves Z (and E[Z]); truth Y stays fixed.")
        with st.expander("More scenario settings"):
            more = scenario_controls("rr", knobs=("fmr", "disc", "judge"), columns=3)
        knobs = {**more, "omission_rate": knobs["omission_rate"]}
        frame = load_scenario(**knobs)
        rule_a, rule_b = "native", "eg"
        names = ("native", "EG")
        ca, cb = frame["native"].to_numpy(float), frame["eg"].to_numpy(float)
        y, z = frame["y"].to_numpy(float), frame["z"].to_numpy(float)
        w = frame["weight"].to_numpy(float)
        unit = f"{len(frame)} beliefs, sampling-weighted"
        data_key = ("scenario", *sorted(knobs.items()))
    else:
        answers = nq_answers_or_stop(str(path), stamp)
        n1, n2, n3 = st.columns([1, 1, 2])
        with n1:
            rule_a = url_select(P_A, "Rule A",
                                  help="agreement: the share of the 12 systems giving the same "
                                       "normalised answer; agree@m: its logit shift to mean m.")
        with n2:
            rule_b = url_select(P_B, "Rule B",
                                help="A constant, or another location of agreement.")
        rule_b = distinct_rules(rule_a, rule_b)
        with n3:
            st.caption("On real data the omission is what it is: exact match misses paraphrases "
                       "and extra detail the humans accept.")
        names = (rule_a, rule_b)
        ca, cb = answers[rule_a].to_numpy(float), answers[rule_b].to_numpy(float)
        y, z = answers["y"].to_numpy(float), answers["z"].to_numpy(float)
        w = None
        unit = f"{len(answers):,} human-labelled answers"
        data_key = ("nq", str(path), stamp, rule_a, rule_b)

    a_name, b_name = names
    an = cached_result("rr_gap", data_key, lambda: gap_analysis(ca, cb, y, z, w))
    a_mean, b_mean, mid, grid, exact = an["a_mean"], an["b_mean"], an["mid"], an["grid"], \
        an["exact"]
    curve, dec, pz, py = an["curve"], an["dec"], an["pz"], an["py"]
    g_exact = brier_gap_constant(a_mean, b_mean, prev)
    g_meas = float(brier_gap_curve(ca, cb, y, prevalences=[prev], weights=w, mode="flip").gap[0])


    def pick(gap: float) -> str:
        """The rule with the lower Brier risk (gap = R(A) − R(B); |gap| < 1e-12 is a tie)."""
        if abs(gap) < 1e-12:
            return "tie"
        return a_name if gap < 0 else b_name


    # ---------------------------------------------------------------- the verdict
    with st.container(key="rr_verdict"):
        v1, v2, v3, v4 = st.columns(4)
        v1.metric("Brier selects (criterion)", pick(g_exact), border=True,
                  delta=f"π = {prev:.2f} {'>' if prev > mid else '<' if prev < mid else '='} "
                        f"{mid:.3f}", **INFO,
                  help="Two constant rules at the means a and b: R(a) − R(b) = "
                       "(a − b)(a + b − 2π), zero at π = (a + b)/2. Exact for constant rules; "
                       "for rules that discriminate, a shortcut.")
        v2.metric("Brier, these rules (measured)", pick(g_meas), border=True,
                  delta=f"gap {g_meas:+.3f} at π = {prev:.2f}", **INFO,
                  help="The rules themselves, with labels thinned (or added) at random until the "
                       "prevalence is π.")
        v3.metric("Crossover (a + b)/2", f"{mid:.3f}", border=True,
                  delta=(f"measured {curve.crossover:.3f}" if np.isfinite(curve.crossover)
                         else "measured: none in [0, 1]"), **INFO,
                  help=f"a = E[{a_name}] = {a_mean:.3f}, b = E[{b_name}] = {b_mean:.3f}. The "
                       "spread term moves it to "
                       f"{curve.label_free_crossover:.3f} before any label is seen.")
        v4.metric("Prevalence E[Z] → E[Y]", f"{pz:.3f} → {py:.3f}", border=True,
                  delta=f"{py - pz:+.3f} restored by truth", **INFO,
                  help="Reference-derived label Z (unmatched = false) against truth Y on the same "
                       "items.")
        st.markdown(f"At **π = {prev:.2f}** a proper score selects **{pick(g_exact)}** by the "
                    f"crossover criterion and **{pick(g_meas)}** on the rules as they are. Under "
                    f"the reference (E[Z] = {pz:.3f}) it selects **{pick(dec.gap_z)}**; under "
                    f"truth (E[Y] = {py:.3f}) **{pick(dec.gap_y)}**"
                    + (" — the ranking **reverses**." if dec.reverses else "."))

    fig = cached_figure("rr_gap", (*data_key, prev), lambda: brier_gap_figure(
        prevalences=grid, exact_gap=exact, midpoint=mid, names=names,
                           measured_gap=curve.gap, measured_crossover=curve.crossover,
                           prevalence_z=pz, prevalence_y=py, gap_z=dec.gap_z, gap_y=dec.gap_y,
                           current=prev, colors={a_name: COLORS[rule_a], b_name: COLORS[rule_b]},
                           title=f"Brier gap of {a_name} and {b_name} against prevalence "
                                 f"({unit})"))
    show_figure(fig, key="rr_gap", stem=f"brier_gap_{data}", alt="Brier gap against prevalence")
    st.caption(
        f"**Exact (solid):** for two constant rules at the means a = {a_mean:.3f} and "
        f"b = {b_mean:.3f}, R(a) − R(b) = (a − b)(a + b − 2π), so they swap rank exactly at "
        f"(a + b)/2 = {mid:.3f}. **Measured (dashed):** the rules themselves, the labels thinned "
        "or added at random to reach π; it crosses zero at "
        + (f"{curve.crossover:.3f}" if np.isfinite(curve.crossover) else "no point in [0, 1]")
        + f" ({curve.deviation:+.3f} from the midpoint). Two things move it: the rules' "
          f"spreads differ ({curve.spread_term:+.3f}: (Var A − Var B) / (2(a − b)), from the "
          f"rules alone, so the label-free crossover is {curve.label_free_crossover:.3f}) and "
          f"they discriminate ({curve.discrimination_term:+.3f}, which needs labels). At "
          f"π = {prev:.2f} the midpoint shortcut "
          + ("and the label-free crossover agree on the winner"
             if curve.shortcut_holds(prev) else
             "and the label-free crossover disagree: the spread alone flips the winner")
        + ". **The diamonds** are the real label sources: their gaps are exact (Eq. 1) and "
          "sit off the dashed line when omission is not at random."
    )
    gap_table = pd.DataFrame({"prevalence": grid, "gap_constant_rules": exact,
                              "gap_measured": curve.gap})
    download_row(key="rr_dl_gap", stem=f"brier_gap_{data}", frame=gap_table, fig=fig,
                 what="Curve")

    # ---------------------------------------------------------------- the identity
    st.subheader("What moved the gap: omitted truths and false matches", anchor=False)
    i1, i2 = st.columns([3, 2])
    with i1:
        wf = cached_figure("rr_identity", data_key, lambda: label_source_figure(
            gap_y=dec.gap_y, t_omit=dec.t_omit, t_fp=dec.t_fp, gap_z=dec.gap_z, names=names,
            title="Eq. (1)–(2): gap under Y + T_omit + T_fp = gap under Z"))
        show_figure(wf, key="rr_identity", stem=f"label_source_{data}",
                    alt="Label-source decomposition as a waterfall")
    with i2:
        m1, m2 = st.columns(2)
        m1.metric("T_omit (omitted truths)", f"{dec.t_omit:+.3f}", border=True,
                  help="2·E[(C_A − C_B)·1{Y = 1, Z = 0}]: true items the reference left unmatched.")
        m2.metric("T_fp (false matches)", f"{dec.t_fp:+.3f}", border=True,
                  help="−2·E[(C_A − C_B)·1{Y = 0, Z = 1}]: false items the matcher paired.")
        m3, m4 = st.columns(2)
        m3.metric("Unmatched but true", f"{dec.omit_share:.1%}", border=True,
                  help="Weighted share of items with Y = 1 and Z = 0.")
        m4.metric("Restoration fraction q*", f"{dec.q_star:.3f}" if np.isfinite(dec.q_star)
                  else "—", border=True,
                  help="Relabelling this share of the omitted truths as true brings the reference "
                       "gap to a tie (seed Table 4: .570).")
        st.caption(
            f"The identity is exact for any two rules (residual {dec.identity_residual:.1e}); "
            "only the Brier score decomposes this way — ECE is not decomposable, so an ECE "
            "reversal is only measured. Here A = "
            f"{a_name}, B = {b_name}, gap = R(A) − R(B)."
            + (" Seed 003 Table 4 reports R(EG) − R(native): T_omit −.397, T_fp +.019, total "
               "−.379 — the opposite sign convention." if data == "scenario" else ""))
    ident = pd.DataFrame([{"rule_a": a_name, "rule_b": b_name, "gap_y": dec.gap_y,
                           "t_omit": dec.t_omit, "t_fp": dec.t_fp, "gap_z": dec.gap_z,
                           "identity_residual": dec.identity_residual,
                           "omit_share": dec.omit_share, "fp_share": dec.fp_share,
                           "q_star": dec.q_star, "prevalence_z": pz, "prevalence_y": py,
                           "mean_a": a_mean, "mean_b": b_mean, "crossover": mid}])
    download_row(key="rr_dl_identity", stem=f"label_source_{data}", frame=ident, fig=wf,
                 what="Decomposition")

    # ---------------------------------------------------------------- protocols
    st.subheader("Four scoring protocols (seed 003 Table 3)", anchor=False)
    if data == "scenario":
        prot = scoring_protocols(ca, cb, y, z, frame["matched"], frame["in_reference"],
                                 weights=w).to_frame()
        pick_name = {"A": a_name, "B": b_name, "tie": "tie", "none": "—"}
        ptab = pd.DataFrame({
            "protocol": [PROTOCOL_NAMES[p] for p in prot["protocol"]],
            "items scored": prot["n"], f"Brier {a_name}": prot["brier_a"],
            f"Brier {b_name}": prot["brier_b"],
            "selects": [pick_name[s] for s in prot["selects"]],
            "seed 003 frame": [TABLE3[p][0] for p in prot["protocol"]],
            "seed 003 selects": [TABLE3[p][1] for p in prot["protocol"]]})
        st.dataframe(ptab, hide_index=True, width="stretch",
                     column_config={f"Brier {a_name}": NUM3, f"Brier {b_name}": NUM3})
        st.caption(
            "The rules stay fixed; only what gets scored, and against what, changes. Only "
            "unmatched-as-false imputes falsehood from not matching, and it is the protocol that "
            "can select the other rule. Matched-only sets unmatched output aside (IR's "
            "condensed lists) but scores a mostly-correct selected set, so it cannot estimate "
            "absolute calibration. Here all four score subsets of one frame; the seed's middle "
            "rows used other units."
        )
        download_row(key="rr_dl_protocols", stem="scoring_protocols", frame=ptab,
                     what="Protocols")
    else:
        st.info("Table 3's protocols need the matcher's flags (matched, in the reference), which "
                "only the synthetic scenario records. Switch Data to Scenario.",
                icon=":material/info:")



main_panel()


# ---------------------------------------------------------------- bridge
st.header("The same reversal in a memory-agent evaluation")
st.caption(
    "Seed 000's resolvers answer survey questions about a person from five conflicting "
    "sources. Rule A is a resolver's posterior confidence; rule B a frozen source-tier prior "
    "(seed 003's EG transplanted: .55 if a direct record agrees with the answer, .35 a "
    "self-report, .20 a claim or nothing). Y: the answer equals ground truth. Z: the answer "
    "equals one source's readout taken as a finite reference — a missing or different "
    "readout counts as false."
)
@st.fragment
def bridge_panel() -> None:
    """The resolver and reference choice and the bridge analysis they give."""
    b1, b2 = st.columns(2)
    with b1:
        method = url_select(P_METHOD, "Resolver (rule A)",
                            format_func=lambda m: METHOD_SHORT.get(m, m))
    with b2:
        ref = url_select(P_REF, "Reference source (for Z)", format_func=SOURCE_LABELS.get)
    try:
        with store_guard():
            _, analysis = load_bridge(str(path), stamp, method, ref)
    except (StoreError, ValueError) as exc:
        st.info(f"No resolver predictions to bridge: {public_message(exc)}",
                icon=":material/database:")
    else:
        analysis = analysis.assign(predicted=[
            bool(min(pz_, py_) < c_ < max(pz_, py_)) for pz_, py_, c_ in
            zip(analysis["prevalence_z"], analysis["prevalence_y"], analysis["crossover"],
                strict=True)])
        overall = analysis.iloc[0]
        fam = analysis.iloc[1:]
        k1, k2, k3, k4 = st.columns(4)
        k1.metric("E[Z] → E[Y] (all questions)",
                  f"{overall['prevalence_z']:.3f} → {overall['prevalence_y']:.3f}", border=True)
        k2.metric("Crossover (all questions)", f"{overall['crossover']:.3f}", border=True,
                  help=f"a = E[{METHOD_SHORT[method]}] = {overall['mean_a']:.3f}, b = E[tier prior]"
                       f" = {overall['mean_b']:.3f}.")
        k3.metric("Families that reverse", f"{int(fam['reverses'].sum())} of {len(fam)}",
                  border=True, delta=("overall reverses" if overall["reverses"]
                                      else "overall does not"), **INFO)
        k4.metric("Criterion right", f"{int((fam['predicted'] == fam['reverses']).sum())} of "
                                     f"{len(fam)}", border=True,
                  help="Predicted reversal: the crossover lies between E[Z] and E[Y].")
        bfig = cached_figure("rr_bridge", (str(path), stamp, method, ref), lambda: bridge_figure(
            analysis, names=(METHOD_SHORT[method], "tier prior"),
            title=f"{METHOD_SHORT[method]} vs the source-tier prior, Z = {SOURCE_LABELS[ref]}"))
        show_figure(bfig, key="rr_bridge", stem=f"bridge_{method}_{ref}",
                    alt="Bridge gaps per family")
        btab = analysis[["label", "n", "prevalence_y", "prevalence_z", "mean_a", "mean_b",
                         "crossover", "gap_y", "gap_z", "t_omit", "t_fp", "reverses",
                         "predicted"]]
        st.dataframe(btab, hide_index=True, width="stretch",
                     column_config={
                         "label": "family",
                         "prevalence_y": st.column_config.NumberColumn("E[Y]", format="%.3f"),
                         "prevalence_z": st.column_config.NumberColumn("E[Z]", format="%.3f"),
                         "mean_a": st.column_config.NumberColumn("mean A", format="%.3f"),
                         "mean_b": st.column_config.NumberColumn("mean B", format="%.3f"),
                         "crossover": st.column_config.NumberColumn("(a + b)/2", format="%.3f"),
                         "gap_y": st.column_config.NumberColumn("gap under Y", format="%+.3f"),
                         "gap_z": st.column_config.NumberColumn("gap under Z", format="%+.3f"),
                         "t_omit": st.column_config.NumberColumn("T_omit", format="%+.3f"),
                         "t_fp": st.column_config.NumberColumn("T_fp", format="%+.3f"),
                         "predicted": "criterion predicts"})
        st.caption(
            "Where it reverses is where the reference is poor: families whose questions that "
            "source answers badly (or not at all) collapse E[Z], and the resolver's high posterior "
            "is then punished as over-confidence. Gaps are R(A) − R(B), negative favours the "
            "resolver; the identity splits each change exactly into T_omit and T_fp."
        )
        download_row(key="rr_dl_bridge", stem=f"bridge_{method}_{ref}", frame=btab, fig=bfig,
                     what="Bridge")



bridge_panel()

# ---------------------------------------------------------------- NQ-open
st.header("The real NQ-open case")
try:
    with store_guard():
        items, nq_answers = load_nq301(str(path), stamp)
        pairs = run_rule_pairs(str(path), stamp)
except StoreError as exc:
    st.info(f"The NQ-open case is not available: {public_message(exc)}", icon=":material/database:")
    st.stop()
shift, acc, auc = cached_result("rr_nq", (str(path), stamp), lambda: (
    prevalence_shift(items, items=nq_answers), system_accuracy(items),
    agreement_auroc(nq_answers, frame=items)))
ans_row = shift.iloc[0]
seed = SEED_003_NQ301
q1, q2, q3, q4 = st.columns(4)
q1.metric("Exact match E[Z] → humans E[Y]",
          f"{ans_row['prevalence_z']:.3f} → {ans_row['prevalence_y']:.3f}", border=True,
          help=f"Over the {int(ans_row['n_labelled']):,} human-labelled answers.")
q2.metric("Unmatched but accepted", f"{ans_row['p_y1_given_z0']:.1%}", border=True,
          delta=f"seed Table 1 (DPR–BERT): {seed.table1_em_negatives_human_correct:.1%}",
          **INFO, help="P(Y = 1 | Z = 0): exact-match negatives humans accept.")
q3.metric("AUROC of agreement vs Y", f"{auc.auroc_y:.3f}", border=True,
          delta=f"seed {seed.auroc_agreement:.3f}", **INFO,
          help=f"CORP DSC {auc.dsc_y:.4f} (seed {seed.dsc_agreement:.4f}).")
q4.metric("Reversals among the 21 pairs", f"{pairs.n_reversals} / {len(pairs.pairs)}",
          border=True, delta=f"seed {seed.reversals} reversed, {seed.non_reversals} not",
          **INFO,
          help=f"Criterion right on {pairs.n_criterion_correct} of {len(pairs.pairs)} pairs; "
               f"{pairs.n_reversals_both_exclude_zero} reversals have both question-cluster "
               f"intervals excluding zero (seed {seed.reversals_both_intervals_exclude_zero}).")
s1, s2 = st.columns([1, 1])
with s1:
    afig = cached_figure("rr_systems", (str(path), stamp), lambda: system_accuracy_figure(
        acc, title="12 systems: exact match against humans"))
    show_figure(afig, key="rr_systems", stem="nq301_systems", alt="System accuracy dumbbell")
with s2:
    st.dataframe(acc[["system", "em_accuracy_labelled", "human_accuracy", "gain", "rank_em",
                      "rank_human", "rank_change"]],
                 hide_index=True, width="stretch", height=470,
                 column_config={"em_accuracy_labelled": st.column_config.NumberColumn(
                                    "EM", format="%.3f", help="Exact-match accuracy on the "
                                                              "human-labelled predictions"),
                                "human_accuracy": st.column_config.NumberColumn(
                                    "humans", format="%.3f"),
                                "gain": SIGNED, "rank_em": "rank EM",
                                "rank_human": "rank humans", "rank_change": "moves up"})
st.caption(
    "Every system gains under human judgement, but not equally: exact match penalises "
    "verbose or paraphrased answers (the InstructGPT runs most), so the ranking of systems "
    "changes — the label-source effect at the system level. Seed 003 reports no per-system "
    "NQ figures; its Table 1 (another pipeline) has 115/301 exact against 160/301 human."
)
download_row(key="rr_dl_systems", stem="nq301_systems", frame=acc, fig=afig, what="Systems")
with st.expander(f"The 21 rule pairs ({pairs.construction})"):
    ptab = pairs.pairs[["rule_a", "rule_b", "midpoint", "gap_z", "gap_z_lo", "gap_z_hi",
                        "gap_y", "gap_y_lo", "gap_y_hi", "reverses", "predicted",
                        "criterion_correct", "both_exclude_zero"]]
    st.dataframe(ptab, hide_index=True, width="stretch",
                 column_config={c: (NUM3 if c == "midpoint" else SIGNED)
                                for c in ptab.columns if c.startswith(("gap", "mid"))})
    st.caption(
        f"Predicted to reverse when (a + b)/2 lies between E[Z] = {pairs.prevalence_z:.3f} and "
        f"E[Y] = {pairs.prevalence_y:.3f}. Measured here: {pairs.n_reversals} reversals and "
        f"{pairs.n_non_reversals} non-reversals, the criterion right on "
        f"{pairs.n_criterion_correct}; seed 003: {seed.reversals} and {seed.non_reversals}, "
        "all 21 right. The seed does not list its seven rules; these are our reading "
        "(location shifts of agreement), chosen before counting."
    )
    download_row(key="rr_dl_pairs", stem="nq301_rule_pairs", frame=ptab, what="Pairs")
with st.expander("Prevalence shift per system"):
    st.dataframe(shift, hide_index=True, width="stretch",
                 column_config={c: NUM3 for c in shift.columns if shift[c].dtype.kind == "f"})
    download_row(key="rr_dl_shift", stem="nq301_prevalence_shift", frame=shift,
                 what="Prevalence shift")
