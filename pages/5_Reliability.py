"""Reliability: binned, CORP and smooth reliability diagrams of confidence rules, under truth Y
or under a reference-derived label Z (seed 003 §4, Table 2; calibration-notes §5).

Thin glue: a data choice → rule frames (``pages._shared.seed003``: the synthetic scenario, the
real NQ-open answers, the seed-000 resolvers' cached predictions, or an uploaded CSV) → the
cached :func:`~pages._shared.seed003.reliability_view` and
:func:`~pages._shared.seed003.score_table` (``core.calibration``) → figures of
``core.figures.calibration``.

URL state (:mod:`core.urlparams`, one validated path, read when the page opens):
``rel_data``, ``rel_label`` (Y or Z), ``rel_bins``, ``rel_strategy``, ``rel_bands``, the
scenario knobs ``rel_omit``, ``rel_fmr``, ``rel_disc``, ``rel_judge``, the resolvers'
reference ``rel_ref``, and one rule list per data choice (``rel_rules_scn``,
``rel_rules_nq``, ``rel_rules_res``, ``rel_rules_up``) — the rule options depend on the data,
so each data choice has its own widget and a link keeps the rules of each. A refused value
gives one plain-text notice. An uploaded file cannot live in a URL.

Everything below the title is one ``st.fragment`` (a widget change reruns only it), and the
four figures are cached across sessions by the data key and the widget values.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import numpy as np
import pandas as pd
import streamlit as st

from core.calibration.paper import TABLE2
from core.calibration.scenario import DEFAULT_SCENARIO
from core.figures.calibration import (
    binned_reliability_figure,
    corp_reliability_figure,
    decomposition_figure,
    rule_colors,
    smooth_reliability_figure,
)
from core.figures.style import METHOD_SHORT
from core.store import StoreError
from core.testbed.questions import SOURCE_LABELS, SOURCES
from core.urlparams import ChoiceParam, FlagParam, NumberParam
from pages._shared import (
    csv_bytes,
    ensure_store,
    escape_markdown,
    open_page,
    public_message,
    store_guard,
    store_stamp,
    url_multiselect,
    url_segmented,
    url_select,
    url_slider,
    url_toggle,
)
from pages._shared.cache import cached_figure
from pages._shared.seed003 import (
    BRIDGE_METHODS,
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    download_row,
    load_bridge,
    load_scenario,
    nq_answers_or_stop,
    read_upload,
    reliability_view,
    rule_frame,
    scenario_controls,
    scenario_params,
    score_table,
    show_figure,
)

st.set_page_config(layout="wide", page_title="Reliability · Arbiter",
                   page_icon=":material/insights:")

DATA = {"scenario": "Scenario", "nq": "NQ-open", "resolvers": "Resolvers", "upload": "Upload"}
SCN_RULES = ("native", "eg")
NQ_RULES = ("agreement", *NQ_LOCATION_RULES, *NQ_CONSTANT_RULES)
RES_RULES = (*BRIDGE_METHODS, "tier prior")
UP_RULES = ("p", "p_b")
RULE_NAMES = {"native": "native", "eg": "EG", "tier prior": "tier prior", **METHOD_SHORT}
COLORS = rule_colors([*SCN_RULES, *NQ_RULES, *RES_RULES, *UP_RULES])
NUM3 = st.column_config.NumberColumn(format="%.3f")
#: a metric delta that informs rather than measures a change: no colour, no arrow
INFO = {"delta_color": "off", "delta_arrow": "off"}
NUM4 = st.column_config.NumberColumn(format="%.4f")

path = ensure_store()
stamp = store_stamp(path)

st.title("Reliability: calibrated against which label?")
st.caption(
    "A reliability diagram plots how often the event happened against the confidence given. "
    "Seed 003's point: the same confidences look over-confident against a reference label Z "
    "(unmatched answers counted false) and well calibrated against adjudicated truth Y, or "
    "the other way round. Flip the label source and everything below is redrawn."
)

P_DATA = ChoiceParam("rel_data", "data choice", tuple(DATA), default="scenario",
                     tokens=tuple(DATA.values()))
P_LABEL = ChoiceParam("rel_label", "label source", ("Y", "Z"), default="Y")
P_BINS = NumberParam("rel_bins", "number of bins", 2, 30, 1, 10, integer=True)
P_STRATEGY = ChoiceParam("rel_strategy", "binning", ("uniform", "quantile"), default="uniform")
P_BANDS = FlagParam("rel_bands", "bands", True)
P_SCN = ChoiceParam("rel_rules_scn", "scenario rule", SCN_RULES, default=SCN_RULES, multi=True)
P_NQ = ChoiceParam("rel_rules_nq", "NQ-open rule", NQ_RULES, default=("agreement", "const@0.50"),
                   multi=True)
P_RES = ChoiceParam("rel_rules_res", "resolver", RES_RULES, default=("dsnbf", "nbf"),
                    tokens=tuple(RULE_NAMES[m] for m in RES_RULES), multi=True)
P_UP = ChoiceParam("rel_rules_up", "column", UP_RULES, default=UP_RULES, multi=True)
P_REF = ChoiceParam("rel_ref", "reference source", SOURCES, default="daily_self_report",
                    tokens=tuple(SOURCE_LABELS[s] for s in SOURCES))
open_page("reliability", [P_DATA, P_LABEL, P_BINS, P_STRATEGY, P_BANDS, P_SCN, P_NQ, P_RES,
                          P_UP, P_REF, *scenario_params("rel")])


@st.fragment
def panel() -> None:
    """Every setting and everything it changes (reruns on its own)."""
    c1, c2, c3, c4, c5 = st.columns([2.7, 1, 1.5, 1.4, 1])
    with c1:
        data = url_segmented(
            P_DATA, "What to diagnose", format_func=DATA.get,
            help="Scenario: seed 003's synthetic belief stores (default = its Table 2). NQ-open: "
                 "1,490 real answers judged by humans (Y) and by exact match (Z). Resolvers: "
                 "seed-000 resolver confidence against correctness. Upload: your own CSV.")
    with c2:
        label_choice = url_segmented(
            P_LABEL, "Label source",
            help="Y = truth (adjudicated, human, or the testbed's ground truth). Z = a finite "
                 "reference with an automatic matcher: anything unmatched counts as false.")
    with c3:
        n_bins = int(url_slider(P_BINS, "Bins B (binned curve)",
                               help="Seed 003 uses ten bins. Binned ECE is biased upwards and the "
                                    "bias grows with B; every binned number states its B."))
    with c4:
        strategy = url_segmented(P_STRATEGY, "Binning",
                                        help="Equal-width bins, or equal-count bins at the "
                                             "quantiles of the first rule's forecasts.")
    with c5:
        bands = url_toggle(P_BANDS, "Bands",
                          help="90 % consistency bands of the first rule: where a calibrated "
                               "forecaster with the same forecasts would land (seeded resampling "
                               "y* ~ Bernoulli(p)).")

    label = label_choice.lower()
    frames: dict[str, pd.DataFrame] = {}
    target = "P(event | confidence)"
    if data == "scenario":
        with st.expander("Scenario settings (seed 003's Table 2 by default)"):
            knobs = scenario_controls("rel", columns=4)
        chosen = url_multiselect(P_SCN, "Rules",
                                format_func=lambda r: {"native": "native (elicited)",
                                                       "eg": "eg (frozen source prior)"}[r],
                                help="Native elicited confidence and EG, the frozen source prior "
                                     "(.20 claim, .35 inference, .55 direct; Eq. 4), on the same "
                                     "259 beliefs.")
        frame = load_scenario(**knobs)
        for r in SCN_RULES:
            frames[r] = rule_frame(frame[r], frame["y"], frame["z"], frame["weight"])
        data_key = ("scenario", *(float(v) for v in knobs.values()))
        target = "P(belief literally true | confidence)" if label == "y" else \
            "P(belief matched by the reference | confidence)"
        default_knobs = all(np.isclose(v, getattr(DEFAULT_SCENARIO, k)) for k, v in knobs.items())
    elif data == "nq":
        chosen = url_multiselect(P_NQ, "Rules",
                                help="agreement: the share of the 12 systems giving the same "
                                     "normalised answer. agree@m: logit shifts of it to mean m "
                                     "(same ranking, other location). const@m: the constant m.")
        answers = nq_answers_or_stop(str(path), stamp)
        for r in NQ_RULES:
            frames[r] = rule_frame(answers[r], answers["y"], answers["z"])
        data_key = ("nq", str(path), stamp)
        target = "P(humans accept the answer | confidence)" if label == "y" else \
            "P(answer exactly matches a gold answer | confidence)"
    elif data == "resolvers":
        r1, r2 = st.columns([3, 1])
        with r2:
            ref = url_select(P_REF, "Reference source (for Z)", format_func=SOURCE_LABELS.get,
                               help="Z = the answer equals this source's direct readout; a "
                                    "missing atom or another value counts as false.")
        with r1:
            chosen = url_multiselect(P_RES, "Resolvers", format_func=RULE_NAMES.get,
                                    help="Each resolver's posterior confidence in its own answer "
                                         "(test split of every seed). 'tier prior' is the bridge's "
                                         "frozen source-tier prior on DSNBF's answers.")
        for r in chosen:
            with store_guard():
                try:
                    items, _ = load_bridge(str(path), stamp,
                                           "dsnbf" if r == "tier prior" else r, ref)
                except (StoreError, ValueError) as exc:
                    st.error(f"No resolver predictions to show: {public_message(exc)}",
                             icon=":material/database:")
                    st.stop()
            p = items["c_b"] if r == "tier prior" else items["c_a"]
            frames[r] = rule_frame(p, items["y"], items["z"])
        data_key = ("resolvers", str(path), stamp, ref)
        target = "P(answer = ground truth | confidence)" if label == "y" else \
            f"P(answer = {SOURCE_LABELS[ref]}'s readout | confidence)"
    else:
        uploaded = st.file_uploader(
            "CSV with columns p (forecast in [0, 1]) and y (0/1); optional z (0/1 reference "
            "label), p_b (a second rule), cluster, weight (> 0)", type=["csv"], key="rel_upload")
        got = read_upload(uploaded, key="rel_upload")
        if got is None:
            example = load_scenario(DEFAULT_SCENARIO.omission_rate,
                                    DEFAULT_SCENARIO.false_match_rate,
                                    DEFAULT_SCENARIO.discrimination,
                                    float(DEFAULT_SCENARIO.judge_quality))
            sample = pd.DataFrame({"p": example["native"].round(4), "y": example["y"],
                                   "z": example["z"], "p_b": example["eg"].round(4),
                                   "cluster": example["cluster"],
                                   "weight": example["weight"].round(4)})
            st.info("Upload a CSV to diagnose your own forecasts. The example file below is seed "
                    "003's default scenario (native as p, EG as p_b).", icon=":material/upload:")
            st.download_button("Example CSV", lambda: csv_bytes(sample),
                               file_name="seed003_scenario_example.csv", mime="text/csv",
                               on_click="ignore", key="rel_example", icon=":material/download:")
            st.stop()
        up, up_name, digest = got
        st.caption(f"Using the file {escape_markdown(up_name)}: {len(up):,} rows; columns "
                   f"{escape_markdown(', '.join(up.columns))}.")
        present = [r for r in UP_RULES if r in up.columns]
        chosen = url_multiselect(P_UP, "Columns to diagnose")
        w = up["weight"] if "weight" in up.columns else None
        for r in present:
            frames[r] = rule_frame(up[r], up["y"], up["z"] if "z" in up.columns else None, w)
        data_key = ("upload", digest)
        target = "P(y = 1 | p)" if label == "y" else "P(z = 1 | p)"

    rules = tuple(r for r in frames if r in chosen)
    if not rules:
        st.info("Choose at least one rule to diagnose.", icon=":material/checklist:")
        st.stop()
    if label == "z" and "z" not in frames[rules[0]].columns:
        st.info("These data have no reference label z; showing Y.", icon=":material/info:")
        label = "y"
    other = "z" if label == "y" else "y"
    has_other = other in frames[rules[0]].columns

    view = reliability_view(data_key, rules, label, n_bins, strategy, bool(bands), _frames=frames)
    scores = score_table(data_key, rules, label, n_bins, strategy, _frames=frames)
    alt = (score_table(data_key, rules, other, n_bins, strategy, _frames=frames)
           if has_other else None)

    # ---------------------------------------------------------------- headline numbers
    LAB = {"y": "Y", "z": "Z"}
    st.markdown(f"##### Under {LAB[label]}: {target}")
    shown = list(rules[:3])
    cols = st.columns(2 * len(shown))
    for i, r in enumerate(shown):
        row = scores.iloc[i]
        o = alt.iloc[i] if alt is not None else None
        cols[2 * i].metric(f"ECE · {RULE_NAMES.get(r, r)}", f"{row['ece']:.3f}",
                           delta=(f"{o['ece']:.3f} under {LAB[other]}" if o is not None else None),
                           **INFO, border=True,
                           help=f"Binned ECE, B = {n_bins} {strategy} bins (numpy edges, last bin "
                                "closed), weighted where the data carry weights.")
        cols[2 * i + 1].metric(f"Brier · {RULE_NAMES.get(r, r)}", f"{row['brier']:.3f}",
                               delta=(f"{o['brier']:.3f} under {LAB[other]}"
                                      if o is not None else None),
                               **INFO, border=True,
                               help="Strictly proper and unbinned: no B to choose.")

    # ---------------------------------------------------------------- the three diagrams
    names = {r: RULE_NAMES.get(r, r) for r in rules}
    col_of = {names[r]: COLORS[r] for r in rules}
    fig_key = (data_key, rules, label, n_bins, strategy, bool(bands))
    b_fig = cached_figure("rel_binned", fig_key, lambda: binned_reliability_figure(
        {names[r]: view.binned[r] for r in rules}, colors=col_of, band=view.band,
        band_rule=names[rules[0]] if view.band is not None else None,
        prevalence=view.prevalence, label=label,
        title=f"Binned, B = {n_bins} {strategy} (exact 95 % intervals)"))
    c_fig = cached_figure("rel_corp", fig_key, lambda: corp_reliability_figure(
        {names[r]: view.corp[r] for r in rules}, colors=col_of, band=view.corp_band,
        band_rule=names[rules[0]] if view.corp_band is not None else None,
        prevalence=view.prevalence, label=label, title="CORP (isotonic, ties pooled)"))
    s_fig = cached_figure("rel_smooth", fig_key, lambda: smooth_reliability_figure(
        {names[r]: view.smooth[r] for r in rules}, colors=col_of, band=view.smooth_band,
        band_rule=names[rules[0]] if view.smooth_band is not None else None,
        prevalence=view.prevalence, label=label, title="Smooth (kernel, automatic σ)"))
    stem = f"reliability_{data}_{label}"
    f1, f2, f3 = st.columns(3)
    with f1:
        show_figure(b_fig, key="rel_binned", stem=f"{stem}_binned",
                    alt="Binned reliability diagram")
        download_row(key="rel_dl_binned", stem=f"{stem}_binned", fig=b_fig)
    with f2:
        show_figure(c_fig, key="rel_corp", stem=f"{stem}_corp", alt="CORP reliability diagram")
        download_row(key="rel_dl_corp", stem=f"{stem}_corp", fig=c_fig)
    with f3:
        show_figure(s_fig, key="rel_smooth", stem=f"{stem}_smooth",
                    alt="Smooth reliability diagram")
        download_row(key="rel_dl_smooth", stem=f"{stem}_smooth", fig=s_fig)
    weighted = "weight" in frames[rules[0]].columns
    st.caption(
        "The dashed diagonal is perfect calibration; the dotted line is the prevalence "
        f"E[{LAB[label]}] = {view.prevalence:.3f} of {names[rules[0]]}'s items, where a "
        "constant forecast would have to sit. "
        + (f"The shaded band belongs to {names[rules[0]]}: 90 % of calibrated forecasters "
           "with its forecasts land inside (seeded resamples y* ~ Bernoulli(p): 1,000 binned, "
           "100 for CORP and smooth) — what lies outside it is miscalibration, not noise. "
           if bands else "")
        + "Three estimators of one curve: binned needs a B and is biased upwards; CORP (the PAV "
          "fit) needs no tuning and its decomposition below is exact; the smooth curve picks its "
          "own bandwidth σ and is dotted where forecasts are too sparse to tell."
        + (" Binned and CORP use the sampling weights; smooth ECE has no weighted form "
           "(relplot has none), so it is left empty." if weighted else "")
    )

    # ---------------------------------------------------------------- decomposition
    st.subheader("Where the Brier score comes from", anchor=False)
    terms = scores.assign(rule=[names[r] for r in scores["rule"]])[
        ["rule", "brier", "corp_mcb", "corp_dsc", "corp_unc", "murphy_rel", "murphy_res",
         "murphy_wbv", "murphy_wbc"]].rename(columns=lambda c: c.split("_", 1)[-1])
    d_fig = cached_figure("rel_decomp", fig_key, lambda: decomposition_figure(
        terms, colors=col_of, n_bins=n_bins, strategy=strategy, label=label))
    show_figure(d_fig, key="rel_decomp", stem=f"{stem}_decomposition",
                alt="Brier decompositions as bars")
    st.caption(
        "**Exact:** Brier = MCB − DSC + UNC (CORP, Dimitriadis–Gneiting–Jordan 2021): MCB is "
        "what recalibrating by the PAV fit would save, DSC how much the rule's ranking separates "
        "events from non-events, UNC = ȳ(1 − ȳ) depends on the label alone. **Binned:** Murphy's "
        "REL − RES + UNC adds up only with the within-bin terms WBV − 2·WBC (Stephenson et al. "
        "2008), shown rather than hidden. Switching Y → Z moves UNC and MCB; DSC stays small in "
        "seed 003's weak-discrimination regime (.001–.036), which is why the prevalence decides."
    )
    download_row(key="rel_dl_decomp", stem=f"{stem}_decomposition", frame=terms, fig=d_fig,
                 what="Terms")

    # ---------------------------------------------------------------- numbers
    st.subheader("Numbers", anchor=False)
    ece_col = f"ECE (B = {n_bins}, {strategy})"
    table = scores.assign(rule=[names[r] for r in scores["rule"]]).rename(columns={
        "prevalence": f"E[{LAB[label]}]", "mean_forecast": "mean p", "brier": "Brier",
        "log_score": "log score", "ece": ece_col, "mce": f"MCE (B = {n_bins})",
        "rms": f"RMS-CE (B = {n_bins})", "smooth_ece": "smooth ECE", "smooth_ece_sigma": "σ*",
        "citl": "CITL p̄ − ȳ", "spiegelhalter_z": "Spiegelhalter z", "auroc": "AUROC",
        "ice": "ICE", "ice_baseline": "ICE, average-confidence baseline",
        "ice_gain": "ICE − baseline", "corp_mcb": "MCB", "corp_dsc": "DSC", "corp_unc": "UNC"})
    show_cols = ["rule", "n", f"E[{LAB[label]}]", "mean p", "Brier", "log score", ece_col,
                 f"MCE (B = {n_bins})", "smooth ECE", "σ*", "CITL p̄ − ȳ", "Spiegelhalter z",
                 "AUROC", "ICE", "ICE, average-confidence baseline", "MCB", "DSC", "UNC"]
    st.dataframe(table[show_cols], hide_index=True, width="stretch",
                 column_config={c: (NUM4 if c in ("MCB", "DSC", "UNC") else NUM3)
                                for c in show_cols[2:]} | {"n": st.column_config.NumberColumn(
                                    format="%d")})
    st.caption(
        "ECE_w ≥ |p̄ − ȳ| (seed 003 Eq. 5, exact by the triangle inequality): a label source "
        "that lowers the prevalence raises ECE through calibration-in-the-large alone. "
        "Spiegelhalter's z tests calibration-in-the-large (|z| > 1.96 rejects at 5 %). AUROC "
        "does not depend on the label's prevalence, only on the ranking — compare it under Y "
        "and Z. ICE is seed 003's instance-level calibration error, the mean |label − p|; its "
        "baseline forecasts the rule's average confidence everywhere. ICE is not a proper score, "
        "so the baseline can beat a rule under one label and lose under the other (the seed's "
        "NQ-open case: better by .045 under exact match, worse by .074 under human labels)."
    )
    long = []
    for lab_, sc in ((label, scores), (other, alt)):
        if sc is not None:
            long.append(sc.assign(label=LAB[lab_], n_bins=n_bins, strategy=strategy))
    download_row(key="rel_dl_scores", stem=f"reliability_scores_{data}", frame=pd.concat(long),
                 what="Scores, Y and Z")

    if data == "scenario" and default_knobs and has_other:
        both = {label: scores.set_index("rule"), other: alt.set_index("rule")}
        rows = []
        for (rule, lab_), (b_, e_, c_) in TABLE2.items():
            if rule in both[lab_].index:
                r_ = both[lab_].loc[rule]
                rows.append({"rule": names.get(rule, rule), "label": LAB[lab_],
                             "Brier": r_["brier"], "Brier (seed)": b_, "ECE (B = 10)": r_["ece"],
                             "ECE (seed)": e_, "|CITL|": abs(r_["citl"]), "|CITL| (seed)": c_})
        if rows and n_bins == 10 and strategy == "uniform":
            with st.expander("Beside seed 003's Table 2"):
                st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                             column_config={c: NUM3 for c in ("Brier", "Brier (seed)",
                                                              "ECE (B = 10)", "ECE (seed)",
                                                              "|CITL|", "|CITL| (seed)")})
                st.caption("The default scenario is tuned to Table 2's marginals (±.02); ECE and "
                           "the within-bin structure are measured on our draw, not tuned.")

    curve_rows = []
    for r in rules:
        c = view.binned[r]
        curve_rows.append(pd.DataFrame({
            "rule": names[r], "label": LAB[label], "bin_low": c.edges[:-1], "bin_high": c.edges[1:],
            "count": c.count, "mean_forecast": c.mean_forecast,
            "observed": c.observed_frequency, "ci_low": c.low, "ci_high": c.high}))
    with st.expander("Binned curve points"):
        points = pd.concat(curve_rows, ignore_index=True)
        st.dataframe(points, hide_index=True, width="stretch",
                     column_config={c: NUM3 for c in ("bin_low", "bin_high", "mean_forecast",
                                                      "observed", "ci_low", "ci_high")})
        download_row(key="rel_dl_points", stem=f"{stem}_bins", frame=points, what="Bins")


panel()
