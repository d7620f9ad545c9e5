"""Selective QA: move a method's abstention threshold and see what it buys (seed 000 §9.2, §10).

Thin glue: the chosen method refitted on every seed of the store (cached per method; fresh
runs keep the fitted model that :func:`core.evaluation.selective.skip_rule` needs) → the
threshold's coverage, selective accuracy and F0.5 (per seed, then mean, as ``sweep`` does) →
figures of ``core.figures.selective``. The risk–coverage curve reads the store's cached
predictions.

URL state (:mod:`core.urlparams`, one validated path): ``sq_method`` (the short names, e.g.
``DSNBF+SKIP``) and ``theta``. The threshold is **dependent** — its range and grid come from
the method (θ_Δ ∈ [0, 2] for ABF+SKIP, [0, 1] otherwise) and its default from the data (the
median of the seeds' calibrated thresholds) — so it is validated against the chosen method's
grid once the method is known (snapped to it; one plain-text notice if unusable). Each method
has its own slider (``sq_theta_<method>``), so switching methods starts from that method's
median calibrated θ. Everything below the title is one ``st.fragment``: moving θ or changing
the method reruns only the panel, and the figures are cached across sessions by
(method, θ).
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation.paper import PAPER_SELECTIVE
from core.evaluation.run import METHOD_LABELS
from core.evaluation.selective import (
    SKIP_METHODS,
    SKIP_RULE_NOTES,
    skip_rule,
    threshold_metrics,
)
from core.figures.selective import risk_coverage_figure, threshold_figure
from core.figures.style import CURRENT_COLOR, METHOD_SHORT, PAPER_COLOR, method_color
from core.store import StoreError
from core.urlparams import ChoiceParam, NumberParam, parse_query
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
from pages._shared.cache import shared_cache
from pages._shared.evaluation import (
    load_cached_runs,
    load_risk_coverage,
    load_selective_runs,
    load_sweep,
)

st.set_page_config(layout="wide", page_title="Selective QA · Arbiter",
                   page_icon=":material/tune:")

SEED_COLUMNS = {"seed": "seed", "theta": "θ", "coverage": "coverage %",
                "selective_accuracy": "selective %", "f05": "F0.5 %",
                "theta_calibrated": "calibrated θ", "coverage_calibrated": "coverage % (cal.)",
                "selective_accuracy_calibrated": "selective % (cal.)",
                "f05_calibrated": "F0.5 % (cal.)", "forced_accuracy": "forced %"}

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
    "it answers) for selective accuracy (how often the answers it gives are right). The "
    "threshold the calibration split chose maximises F0.5 (β = 0.5: precision weighs more "
    "than recall). Numbers are per seed on the test split, then the mean over seeds."
)

METHOD = ChoiceParam("sq_method", "method", SKIP_METHODS, default="dsnbf_skip",
                     tokens=[METHOD_SHORT[m] for m in SKIP_METHODS])
opening = open_page("selective", [METHOD], ignore=("theta",))


def theta_spec(grid: np.ndarray, default: float) -> NumberParam:
    """The threshold's URL spec on the method's grid (dependent on the method)."""
    step = float(np.round(grid[1] - grid[0], 6)) if len(grid) > 1 else 0.01
    return NumberParam("theta", "threshold", float(grid.min()), float(grid.max()), step,
                       default)


@shared_cache(max_entries=64)
def selective_figures(path: str, stamp: int, method: str, theta: float):
    """The risk–coverage and threshold figures of ``method`` at ``theta`` (shared)."""
    runs = load_selective_runs(path, stamp, method)
    rules = [skip_rule(r, method) for r in runs]
    calibrated = [float(r.calibrated) for r in rules]
    at_theta = threshold_metrics(runs, method, theta=theta)
    at_cal = threshold_metrics(runs, method)
    n_all, answered = at_theta["n"].sum(), at_theta["answered"].sum()
    points = [{"coverage": at_cal["answered"].sum() / at_cal["n"].sum(),
               "risk": at_cal["errors"].sum() / max(1, at_cal["answered"].sum()),
               "name": "skip rule at the calibrated θ", "symbol": "diamond-open", "size": 17,
               "color": PAPER_COLOR},
              {"coverage": answered / n_all,
               "risk": at_theta["errors"].sum() / max(1, answered),
               "name": f"skip rule at θ = {theta:.2f}", "color": CURRENT_COLOR, "size": 10}]
    rc = risk_coverage_figure(load_risk_coverage(path, stamp, method),
                              color=method_color(method), name=METHOD_SHORT[method],
                              points=points, title="Risk–coverage (pooled over seeds)")
    forced = float(at_theta["forced_accuracy"].mean())
    th = threshold_figure(load_sweep(path, stamp, method), theta=theta, calibrated=calibrated,
                          label=rules[0].label, forced=forced,
                          title="What the threshold buys (mean over seeds)")
    return at_theta, at_cal, rc, th


@st.fragment
def panel() -> None:
    """The method, its threshold and everything they change (reruns on its own)."""
    method = url_segmented(METHOD, "Method", format_func=lambda m: METHOD_SHORT.get(m, m))
    st.caption(f"**{METHOD_LABELS[method]}.** {SKIP_RULE_NOTES[method]}")
    with store_guard():
        runs = load_selective_runs(str(path), stamp, method)
        rc = load_risk_coverage(str(path), stamp, method)
    rules = [skip_rule(r, method) for r in runs]
    grid = rules[0].grid
    calibrated = [float(r.calibrated) for r in rules]
    spec = theta_spec(grid, 0.0)
    default = spec.snap(float(np.median(calibrated)))
    key = f"sq_theta_{method}"
    if key not in st.session_state:
        st.session_state[key] = default
        if opening and "theta" in st.query_params:
            parsed = parse_query({"theta": st.query_params.get_all("theta")}, [spec])
            for line in parsed.notices:
                notice(line.replace("the default is shown",
                                    f"showing the median calibrated θ = {default:.2f}"))
            if "theta" in parsed.values:
                st.session_state[key] = parsed.values["theta"]
    theta = st.slider(f"Threshold: {rules[0].label}", spec.lo, spec.hi, step=spec.step,
                      key=key, format="%.2f",
                      help="The seeds' calibrated thresholds: "
                           + ", ".join(f"{c:.2f}" for c in calibrated) + ".")
    theta = spec.snap(float(theta))
    if theta == default:  # the median calibrated θ is the default: keep the URL clean
        if "theta" in st.query_params:
            del st.query_params["theta"]
    elif st.query_params.get("theta") != f"{theta:.2f}":
        st.query_params["theta"] = f"{theta:.2f}"
    with store_guard():
        at_theta, at_cal, rc_fig, th_fig = selective_figures(str(path), stamp, method, theta)
    show(method, theta, calibrated, at_theta, at_cal, rc, rc_fig, th_fig)


def show(method, theta, calibrated, at_theta, at_cal, rc, rc_fig, th_fig) -> None:
    """Draw the panel's numbers, figures and tables."""
    now = at_theta[["coverage", "selective_accuracy", "f05", "forced_accuracy"]].mean()
    cal = at_cal[["coverage", "selective_accuracy", "f05", "forced_accuracy"]].mean()

    st.markdown(f"##### At θ = {theta:.2f} (every seed)")
    a1, a2, a3, a4 = st.columns(4)
    for col, name, field in ((a1, "Coverage", "coverage"),
                             (a2, "Selective accuracy", "selective_accuracy"),
                             (a3, "F0.5", "f05")):
        col.metric(name, f"{now[field]:.1f} %",
                   delta=f"{now[field] - cal[field]:+.1f} pp vs calibrated", delta_color="off",
                   border=True)
    a4.metric("Forced accuracy", f"{now['forced_accuracy']:.1f} %",
              delta=f"selective {now['selective_accuracy'] - now['forced_accuracy']:+.1f} pp",
              delta_color="off", delta_arrow="off", border=True,
              help="Answering everything (the answer before any abstention counts).")
    paper = PAPER_SELECTIVE.get(method)
    st.markdown("##### At each seed's calibrated θ ("
                + ", ".join(f"{c:.2f}" for c in calibrated) + ")")
    b1, b2, b3, b4 = st.columns(4)
    b1.metric("Coverage (calibrated)", f"{cal['coverage']:.1f} %", border=True,
              delta=f"paper {paper[1]:.1f} %" if paper else None, delta_color="off",
              delta_arrow="off")
    b2.metric("Selective accuracy (calibrated)", f"{cal['selective_accuracy']:.1f} %",
              border=True, delta=f"paper {paper[0]:.1f} %" if paper else None, delta_color="off",
              delta_arrow="off")
    b3.metric("F0.5 (calibrated)", f"{cal['f05']:.1f} %", border=True)
    b4.metric("AURC", f"{rc.aurc:.3f}", border=True,
              help="Area under the risk–coverage curve below (lower is better).")

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
        "need not lie on the curve. The dotted line is the risk of answering everything."
    )

    st.subheader("Per seed", anchor=False)
    per_seed = at_theta.merge(at_cal, on="seed", suffixes=("", "_calibrated"))
    cols = list(SEED_COLUMNS)
    show_number_table(per_seed[cols], formats={"theta": "{:.2f}", "theta_calibrated": "{:.2f}"},
                      hide_index=True, width="stretch", labels=SEED_COLUMNS)
    d1, d2 = st.columns(2)
    with d1:
        download_table(per_seed[cols], stem=f"selective_{method}_theta{theta:.2f}",
                       key="sq_dl_seed", what="Per-seed table")
    with d2:
        download_table(pd.DataFrame(load_sweep(str(path), stamp, method)),
                       stem=f"sweep_{method}", key="sq_dl_sweep", what="Threshold sweep")


panel()
