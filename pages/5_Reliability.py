"""Reliability: binned, CORP and smooth reliability diagrams of confidence rules, under truth Y
or under a reference-derived label Z (seed 003 §4, Table 2; calibration-notes §5).

Glue: a data choice → rule frames (:func:`pages._shared.reliability.rule_frames`: the synthetic
scenario, the real NQ-open answers, the seed-000 resolvers' cached predictions, or an uploaded
CSV, each with its own rule widget) → two result
objects, the curves (:func:`~pages._shared.seed003.reliability_view`,
``core.calibration.reliability_view``) and the scores
(:func:`~pages._shared.seed003.score_panels`, ``core.calibration.score_view``) → figures of
``core.figures.calibration``. Seed 003's reference numbers come with the score view.

URL state (:mod:`core.urlparams`, one validated path, read when the page opens):
``rel_data``, ``rel_label`` (Y or Z), ``rel_bins``, ``rel_strategy``, ``rel_bands``, the
scenario knobs ``rel_omit``, ``rel_fmr``, ``rel_disc``, ``rel_judge``, the resolvers'
reference ``rel_ref``, and one rule list per data choice (``rel_rules_scn``,
``rel_rules_nq``, ``rel_rules_res``, ``rel_rules_up``) — the rule options depend on the data,
so each data choice has its own widget and a link keeps the rules of each. A refused value
gives one plain-text notice. An uploaded file cannot live in a URL.

Everything below the title is one ``st.fragment``. Longer than 150 lines because its four
panels (headline, diagrams, decomposition, numbers) each state their facts in prose.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.calibration.reliability_view import band_note
from core.calibration.score_view import bin_points
from core.figures.calibration import (
    binned_reliability_figure,
    corp_reliability_figure,
    decomposition_figure,
    smooth_reliability_figure,
)
from core.glossary import tip
from pages._shared import (
    ensure_store,
    open_page,
    store_stamp,
    url_segmented,
    url_slider,
    url_toggle,
)
from pages._shared.cache import cached_figure
from pages._shared.reliability import (
    COLORS,
    DATA,
    P_BANDS,
    P_BINS,
    P_DATA,
    P_LABEL,
    P_STRATEGY,
    PARAMS,
    RULE_NAMES,
    rule_frames,
)
from pages._shared.seed003 import (
    download_row,
    reliability_view,
    score_panels,
    show_figure,
    show_split_table,
)
from pages._shared.ui import FAVICON, glossary_help, glossary_link, num_columns

st.set_page_config(layout="wide", page_title="Reliability · Arbiter",
                   page_icon=FAVICON)
INFO = {"delta_color": "off", "delta_arrow": "off", "border": True}  # a delta that informs

path = ensure_store()
stamp = store_stamp(path)

st.title("Reliability: calibrated against which label?")
st.caption(
    "A reliability diagram plots how often the event happened against the confidence given. "
    "The answer-key paper's point: the same confidences look over-confident against a "
    "reference label Z "
    "(unmatched answers counted false) and well calibrated against adjudicated truth Y, or "
    "the other way round. Flip the label source and everything below is redrawn.")
glossary_link()

open_page("reliability", PARAMS)


@st.fragment
def panel() -> None:
    """Every setting and everything it changes (reruns on its own)."""
    # two rows: in one, the segmented controls clipped their last option at 1280 px
    c1, c2 = st.columns([2.2, 1])
    c3, c4, c5 = st.columns([1.5, 1.2, 1])
    with c1:
        data = url_segmented(P_DATA, "What to diagnose", format_func=DATA.get,
                             help=tip("NQ-open", "Scenario: the answer-key paper's synthetic "
                                      "belief stores. NQ-open: its 1,490 real answers judged "
                                      "by humans and by exact match. Resolvers: the memory "
                                      "benchmark's resolvers against correctness. Upload: "
                                      "your own CSV."))
    with c2:
        label = url_segmented(P_LABEL, "Label source", help=tip(
            "Z", "Y is the truth: adjudicated, human, or the testbed's ground truth.")).lower()
    with c3:
        n_bins = int(url_slider(P_BINS, "Bins B (binned curve)",
                                help=tip("ECE", "Binned ECE is biased upwards, more so as B "
                                                "grows; every binned number states its B.")))
    with c4:
        strategy = url_segmented(P_STRATEGY, "Binning",
                                 help="Equal-width bins, or equal-count bins at the quantiles "
                                      "of the first rule's forecasts.")
    with c5:
        bands = bool(url_toggle(P_BANDS, "Bands", help=tip("Consistency band")))
    got = rule_frames(data, path=str(path), stamp=stamp)
    frames, rules, data_key = got.frames, got.rules, got.key
    if not rules:
        st.info("Choose at least one rule to diagnose.", icon=":material/checklist:")
        st.stop()
    if label == "z" and "z" not in frames[rules[0]].columns:
        st.info("These data have no reference label z; showing Y.", icon=":material/info:")
        label = "y"
    names = {r: RULE_NAMES.get(r, r) for r in rules}
    view = reliability_view(data_key, rules, label, n_bins, strategy, bands, _frames=frames)
    sv = score_panels(data_key, rules, label, n_bins, strategy, names=names,
                      default_scenario=got.default_scenario, _frames=frames)

    st.markdown(f"##### Under {sv.label_name}: P({got.events[label == 'z']} | confidence)")
    cols = st.columns(2 * len(sv.headline))
    for i, h in enumerate(sv.headline):
        other = f" under {sv.other_name}" if sv.other_name else ""
        cols[2 * i].metric(f"ECE · {h.name}", f"{h.ece:.3f}", **INFO,
                           delta=f"{h.ece_other:.3f}{other}" if sv.other_name else None,
                           help=tip("ECE", f"Binned, B = {n_bins} {strategy} bins, weighted "
                                           "where the data carry weights."))
        cols[2 * i + 1].metric(f"Brier · {h.name}", f"{h.brier:.3f}", **INFO,
                               delta=f"{h.brier_other:.3f}{other}" if sv.other_name else None,
                               help=tip("Brier score", "Unbinned: no B to choose."))

    col_of = {names[r]: COLORS[r] for r in rules}
    first = names[rules[0]]
    fig_key = (data_key, rules, label, n_bins, strategy, bands)
    figs = {
        "binned": lambda: binned_reliability_figure(
            {names[r]: view.binned[r] for r in rules}, colors=col_of, band=view.band,
            band_rule=first if bands else None, prevalence=view.prevalence, label=label,
            title=f"Binned, B = {n_bins} {strategy} (exact 95 % CI)"),  # fits at 1280 px
        "corp": lambda: corp_reliability_figure(
            {names[r]: view.corp[r] for r in rules}, colors=col_of, band=view.corp_band,
            band_rule=first if bands else None, prevalence=view.prevalence, label=label,
            title="CORP (isotonic, ties pooled)"),
        "smooth": lambda: smooth_reliability_figure(
            {names[r]: view.smooth[r] for r in rules}, colors=col_of, band=view.smooth_band,
            band_rule=first if bands else None, prevalence=view.prevalence, label=label,
            title="Smooth (kernel, automatic σ)")}
    stem = f"reliability_{data}_{label}"
    for col, (kind, build) in zip(st.columns(3), figs.items(), strict=True):
        with col:
            fig = cached_figure(f"rel_{kind}", fig_key, build)
            show_figure(fig, key=f"rel_{kind}", stem=f"{stem}_{kind}",
                        alt=f"{'CORP' if kind == 'corp' else kind.capitalize()} reliability "
                            "diagram")
            download_row(key=f"rel_dl_{kind}", stem=f"{stem}_{kind}", fig=fig)
    st.caption(  # the first CORP and σ of the page: the tooltip defines them
        "The dashed diagonal is perfect calibration; the dotted line is the prevalence "
        f"E[{sv.label_name}] = {view.prevalence:.3f} of {first}'s items, where a constant "
        "forecast would have to sit. "
        + (band_note(view, first) + " " if bands else "")
        + "Three estimators of one curve: binned needs a B and is biased upwards; CORP needs "
          "no tuning and its decomposition below is exact; the smooth curve picks its own "
          "bandwidth σ, is dotted where forecasts are sparse and left out where there are "
          "none. Its density strip depends on the forecasts only, so Y and Z draw the same."
        + (" Binned and CORP use the sampling weights; smooth ECE has no weighted form, so "
           "it is left empty." if "weight" in frames[rules[0]].columns else ""),
        help=tip("CORP"))

    st.subheader("Where the Brier score comes from", anchor=False)
    d_fig = cached_figure("rel_decomp", fig_key, lambda: decomposition_figure(
        sv.terms, colors=col_of, n_bins=n_bins, strategy=strategy, label=label))
    show_figure(d_fig, key="rel_decomp", stem=f"{stem}_decomposition",
                alt="Brier decompositions as bars")
    lo, hi = sv.dsc_range
    st.caption(
        "**Exact:** Brier = MCB − DSC + UNC. MCB is what recalibrating would save, DSC how "
        "well the rule's ranking separates events from non-events, UNC = ȳ(1 − ȳ) depends on "
        "the label alone. **Binned:** REL − RES + UNC adds up only with the within-bin terms "
        "WBV − 2·WBC, shown rather than hidden. Switching Y → Z moves UNC and MCB; DSC stays "
        f"small in the answer-key paper's weak-discrimination regime ({lo:.3f}–{hi:.3f}), "
        "which is why the prevalence decides.", help=tip("MCB"))
    download_row(key="rel_dl_decomp", stem=f"{stem}_decomposition", frame=sv.terms, fig=d_fig,
                 what="Terms")

    st.subheader("Numbers", anchor=False)
    st.dataframe(sv.numbers, hide_index=True, width="stretch",
                 column_config=glossary_help(sv.numbers, num_columns(sv.numbers)
                                             | num_columns(sv.numbers[["MCB"]], "%.4f")))
    ice = sv.average_ice
    st.caption(
        "ECE is at least |CITL|: a label source that lowers the prevalence raises ECE through "
        "calibration in the large alone. AUROC depends on the ranking only, not on the "
        "prevalence: compare it under Y and Z. The other scores are below. ICE is not a "
        "proper score, so the average-confidence forecast can beat a rule under one label "
        "and lose under the other (the answer-key paper's NQ-open case: better by "
        f"{-ice['z']:.3f} under exact match, worse by {ice['y']:.3f} under human labels).",
        help=tip("ICE"))
    with st.expander("Every score (log score, the largest and the root-mean-square "
                     "calibration error, smooth ECE, Spiegelhalter z, ICE, …)"):
        scores = sv.all_scores  # a score with no value here (weighted data) shows "—", not None
        scores = scores.assign(**{c: "—" for c in scores.columns if scores[c].isna().all()})
        show_split_table(scores, glossary_help(scores, num_columns(scores)),
                         keep=list(scores.columns[:1]))  # every score in sight
        st.caption(" ".join(sv.score_notes) + " ICE is the mean |label − p|; its comparison "
                   "forecasts the rule's average confidence everywhere.")
    download_row(key="rel_dl_scores", stem=f"reliability_scores_{data}", frame=sv.download,
                 what="Scores, Y and Z")
    if sv.table2 is not None:
        with st.expander("Beside the answer-key paper's published numbers"):
            st.dataframe(sv.table2, hide_index=True, width="stretch",
                         column_config=num_columns(sv.table2))
            st.caption("The default scenario is tuned to the paper's marginals (±.02); ECE "
                       "and the within-bin structure are measured on our draw, not tuned.")
    with st.expander("Binned curve points"):
        points = bin_points(view, names)
        st.dataframe(points, hide_index=True, width="stretch",
                     column_config=num_columns(points))
        download_row(key="rel_dl_points", stem=f"{stem}_bins", frame=points, what="Bins")


panel()
