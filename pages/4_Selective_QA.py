"""Selective QA: move a method's abstention threshold and see what it buys (seed 000 §9.2, §10).

Glue over :mod:`core.evaluation.selective_view` (through ``pages._shared.evaluation``): the
method refitted on every seed (fresh runs keep the fitted model the skip rule needs) gives a
:class:`~core.evaluation.selective_view.ThresholdChoice` (grid, each seed's calibrated θ,
their median) and, at the chosen θ, one ``SelectiveView`` (numbers per seed and their mean,
the paper's numbers and why our coverage differs) with the figures of
``core.figures.selective``. The risk–coverage curve reads the store's cached predictions.

URL state (:mod:`core.urlparams`, one validated path): ``sq_method`` (the short names, e.g.
``DSNBF+SKIP``) and ``theta``. The threshold is **dependent** — its range and grid come from
the method (θ_Δ ∈ [0, 2] for ABF+SKIP, [0, 1] otherwise) and its default from the data (the
median of the per-seed calibrated θ) — so it is validated against the chosen method's grid
once the method is known (snapped to it; one plain-text notice if unusable). Each method has
its own slider (``sq_theta_<method>``), so switching methods starts from that method's median.
Everything below the title is one ``st.fragment``; results are cached by (method, θ).
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.evaluation.run import METHOD_LABELS
from core.evaluation.selective import SKIP_METHODS, SKIP_RULE_NOTES
from core.figures.style import METHOD_SHORT
from core.glossary import tip
from core.store import StoreError
from core.urlparams import ChoiceParam, parse_query
from pages._shared import (
    download_table,
    ensure_store,
    notice,
    open_page,
    plotly_config,
    public_message,
    show_number_table,
    store_guard,
    store_stamp,
    url_segmented,
)
from pages._shared.evaluation import (
    load_cached_runs,
    load_risk_coverage,
    load_sweep,
    load_threshold_choice,
    selective_panel,
    theta_param,
)
from pages._shared.ui import FAVICON, glossary_link, method_key

st.set_page_config(layout="wide", page_title="Selective QA · Arbiter",
                   page_icon=FAVICON)

SEED_COLUMNS = {"seed": "seed", "theta": "θ", "coverage": "coverage %",
                "selective_accuracy": "selective %", "f05": "F0.5 %",
                "theta_calibrated": "own θ", "coverage_calibrated": "coverage % (own θ)",
                "selective_accuracy_calibrated": "selective % (own θ)",
                "f05_calibrated": "F0.5 % (own θ)", "forced_accuracy": "forced %"}
INFO = {"delta_color": "off", "delta_arrow": "off", "border": True}  # a delta that informs

path = ensure_store()
stamp = store_stamp(path)
with store_guard():
    try:
        load_cached_runs(str(path), stamp)
    except StoreError as exc:
        st.error(f"No resolver results to show: {public_message(exc)}",
                 icon=":material/database:")
        st.stop()

st.title("Selective QA: when should a resolver abstain?")
st.caption(
    "A selective resolver may answer *skip*. Raising its threshold trades coverage (the share "
    "it answers) for selective accuracy (how often the answers it gives are right). Each "
    "seed's calibration split chose its own threshold, the one with the best F0.5 (a score "
    "where precision weighs more than recall). Numbers are per seed on the test split, then "
    "the mean.")
glossary_link()
method_key(SKIP_METHODS)

METHOD = ChoiceParam("sq_method", "method", SKIP_METHODS, default="dsnbf_skip",
                     tokens=[METHOD_SHORT[m] for m in SKIP_METHODS])
opening = open_page("selective", [METHOD], ignore=("theta",))


def pick_theta(method: str, choice) -> float:
    """The threshold slider of ``method`` (first run: from the URL) and the URL in step."""
    spec, key = theta_param(choice), f"sq_theta_{method}"
    if key not in st.session_state:
        st.session_state[key] = choice.median
        if opening and "theta" in st.query_params:
            parsed = parse_query({"theta": st.query_params.get_all("theta")}, [spec])
            for line in parsed.notices:
                notice(line.replace("the default is shown", "showing the median of the "
                                    f"per-seed calibrated θ, {choice.median:.2f}"))
            if "theta" in parsed.values:
                st.session_state[key] = parsed.values["theta"]
    theta = spec.snap(float(st.slider(
        f"Threshold: {choice.label}", spec.lo, spec.hi, step=spec.step, key=key, format="%.2f",
        help=tip("θ", "It starts at the median of the per-seed calibrated thresholds ("
                 + ", ".join(f"{c:.2f}" for c in choice.calibrated) + ")."))))
    if theta == choice.median:  # the default: keep the URL clean
        if "theta" in st.query_params:
            del st.query_params["theta"]
    elif st.query_params.get("theta") != f"{theta:.2f}":
        st.query_params["theta"] = f"{theta:.2f}"
    return theta


@st.fragment
def panel() -> None:
    """The method, its threshold and everything they change (reruns on its own)."""
    method = url_segmented(METHOD, "Method", format_func=lambda m: METHOD_SHORT.get(m, m))
    st.caption(f"**{METHOD_LABELS[method]}.** {SKIP_RULE_NOTES[method]}", help=tip("θ"))
    with store_guard():
        choice = load_threshold_choice(str(path), stamp, method)
        rc = load_risk_coverage(str(path), stamp, method)
    theta = pick_theta(method, choice)
    with store_guard():
        view, rc_fig, th_fig = selective_panel(str(path), stamp, method, theta)
    now, cal, d = view.now, view.calibrated, view.deltas

    where = ("the median of the per-seed calibrated θ" if view.is_default
             else "for every seed; changes against the median of the per-seed calibrated θ")
    st.markdown(f"##### At θ = {theta:.2f} ({where})")
    cols = st.columns(4)
    for col, name, field, term in ((cols[0], "Coverage", "coverage", "Selective answering"),
                                   (cols[1], "Selective accuracy", "selective_accuracy",
                                    "Selective answering"), (cols[2], "F0.5", "f05", "F0")):
        col.metric(name, f"{now[field]:.1f} %", **INFO, help=tip(term),
                   delta=None if d is None else f"{d[field]:+.1f} points")
    cols[3].metric("Forced accuracy", f"{now['forced_accuracy']:.1f} %", **INFO,
                   delta=f"selective {now['selective_accuracy'] - now['forced_accuracy']:+.1f} "
                         "points", help="Answering everything: the answer before any abstention.")
    paper = view.paper
    st.markdown("##### At each seed's own calibrated θ ("
                + ", ".join(f"{c:.2f}" for c in choice.calibrated) + ")")
    b = st.columns([1, 1.3, 1, 0.8])  # the long label gets room: no "…" at 1280 px
    b[0].metric("Coverage (calibrated)", f"{cal['coverage']:.1f} %", **INFO,
                delta=f"paper {paper[1]:.1f} %" if paper else None,
                help=tip("The memory-benchmark paper", "Here: coverage with each seed's own "
                         "calibrated θ, as the paper reports it."))
    b[1].metric("Selective accuracy (calibrated)", f"{cal['selective_accuracy']:.1f} %", **INFO,
                delta=f"paper {paper[0]:.1f} %" if paper else None,
                help="Selective accuracy with each seed's own calibrated θ.")
    b[2].metric("F0.5 (calibrated)", f"{cal['f05']:.1f} %", border=True, help=tip("F0"))
    b[3].metric("AURC", f"{rc.aurc:.3f}", border=True, help=tip("AURC"))
    if (g := view.gap) is not None:
        picked = (f"varies from seed to seed ({g.theta_low:.2f} to {g.theta_high:.2f})"
                  if g.theta_high > g.theta_low else f"is {g.theta_low:.2f} on every seed")
        why = (f"{g.seeds_past} of our {g.n_seeds} seeds chose a θ {g.side} it, so they "
               f"answer {'more' if g.side == 'below' else 'less'}" if g.seeds_past else
               "no seed's θ explains the difference: at the same θ our personas answer "
               f"{'more' if g.ours > g.paper else 'less'}")
        st.caption(
            f"Why {g.ours:.1f} % and not the paper's {g.paper:.1f} %: our personas are "
            "generated afresh (same split sizes and threshold rule, not the released "
            f"personas), and the threshold each seed's calibration split picks {picked}; on "
            f"our data the paper's coverage sits at θ = {g.theta_matching:.2f}, and {why}."
            + (f" The paper's own code on regenerated data gave {g.regenerated:.1f} %."
               if g.regenerated is not None else ""))

    left, right = st.columns(2)
    with left:
        st.plotly_chart(rc_fig, key="sq_rc", config=plotly_config(f"risk_coverage_{method}"))
    with right:
        st.plotly_chart(th_fig, key="sq_sweep", config=plotly_config(f"threshold_sweep_{method}"))
    st.caption(
        "The curve answers the most confident instances first (confidence = the method's "
        "posterior maximum or normalised score) and shows the error rate among those answered; "
        "AURC is its area. The skip rule thresholds its own score (margin, agreement or score "
        "gap) and abstains only where at least two sources are active, so its operating points "
        "need not lie on the curve. The dotted line is the risk of answering everything.")

    st.subheader("Per seed", anchor=False)
    table = view.per_seed[list(SEED_COLUMNS)]
    # θ is the slider's, the same on every row (the heading above states it): shown, its
    # column pushed "forced %" out of sight at 1280 px; the download keeps it
    shown = table.drop(columns="theta") if table["theta"].nunique() == 1 else table
    show_number_table(shown, formats={"theta": "{:.2f}", "theta_calibrated": "{:.2f}"},
                      hide_index=True, width="stretch",
                      labels={k: v for k, v in SEED_COLUMNS.items() if k in shown})
    d1, d2 = st.columns(2)
    with d1:
        download_table(table, stem=f"selective_{method}_theta{theta:.2f}", key="sq_dl_seed",
                       what="Per-seed table")
    with d2:
        download_table(load_sweep(str(path), stamp, method), stem=f"sweep_{method}",
                       key="sq_dl_sweep", what="Threshold sweep")


panel()
