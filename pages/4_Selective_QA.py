"""Selective QA: move a method's abstention threshold and see what it buys (seed 000 §9.2, §10).

Thin glue: the chosen method refitted on every seed of the store (cached per method; fresh
runs keep the fitted model that :func:`core.evaluation.selective.skip_rule` needs) → the
threshold's coverage, selective accuracy and F0.5 (per seed, then mean, as ``sweep`` does) →
figures of ``core.figures.selective``. The risk–coverage curve reads the store's cached
predictions.

URL state: ``sq_method`` is a segmented control bound with ``bind="query-params"`` (values are
the short names, e.g. ``DSNBF+SKIP``). The threshold ``theta`` is **dependent** — its range
and grid come from the method (θ_Δ ∈ [0, 2] for ABF+SKIP, [0, 1] otherwise) and its default
from the data (the median of the seeds' calibrated thresholds) — so a bound slider would drop
an out-of-range value silently and drop a value equal to the computed default from the URL.
It is handled explicitly instead: read once when the page opens, validated and snapped to the
method's grid (:func:`pages._shared.params.parse_threshold`; one warning if unusable), and
written back to ``st.query_params`` after the widget. Each method has its own slider
(``sq_theta_<method>``), so switching methods starts from that method's calibrated θ.
"""

from __future__ import annotations

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
from core.figures.style import METHOD_SHORT, PAPER_COLOR, method_color
from core.store import StoreError
from pages._shared import (
    choice_param,
    download_table,
    ensure_store,
    parse_threshold,
    plotly_config,
    store_guard,
    store_stamp,
    table_style,
    warn_bad_bound_params,
)
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
        st.error(f"No resolver results to show: {exc}", icon=":material/database:")
        st.stop()

st.title("Selective QA: when should a resolver abstain?")
st.caption(
    "A selective resolver may answer *skip*. Raising its threshold trades coverage (the share "
    "it answers) for selective accuracy (how often the answers it gives are right). The "
    "threshold the calibration split chose maximises F0.5 (β = 0.5: precision weighs more "
    "than recall). Numbers are per seed on the test split, then the mean over seeds."
)

opening = "sq_method" not in st.session_state  # first run since the page was opened
warn_bad_bound_params([choice_param("sq_method", "method",
                                    [METHOD_SHORT[m] for m in SKIP_METHODS])])
method = st.segmented_control(
    "Method", list(SKIP_METHODS), default="dsnbf_skip", required=True, key="sq_method",
    bind="query-params", format_func=lambda m: METHOD_SHORT.get(m, m))
st.caption(f"**{METHOD_LABELS[method]}.** {SKIP_RULE_NOTES[method]}")

with store_guard():
    runs = load_selective_runs(str(path), stamp, method)
    sweep_df = load_sweep(str(path), stamp, method)
    rc = load_risk_coverage(str(path), stamp, method)
rules = [skip_rule(r, method) for r in runs]
grid = rules[0].grid
calibrated = [float(r.calibrated) for r in rules]
default = parse_threshold(str(float(np.median(calibrated))), grid)

key = f"sq_theta_{method}"
if key not in st.session_state:
    value = default
    raw = st.query_params.get("theta") if opening else None
    if raw is not None:
        parsed = parse_threshold(raw, grid)
        if parsed is None:
            st.warning(f"The link's threshold “{raw}” is not valid for {METHOD_SHORT[method]} "
                       f"(a number from {grid.min():g} to {grid.max():g}); showing the "
                       f"calibrated θ = {default:.2f} instead.", icon=":material/link_off:")
        else:
            value = parsed
    st.session_state[key] = value
step = float(np.round(grid[1] - grid[0], 6)) if len(grid) > 1 else 0.01
theta = st.slider(f"Threshold: {rules[0].label}", float(grid.min()), float(grid.max()),
                  step=step, key=key, format="%.2f",
                  help="The seeds' calibrated thresholds: "
                       + ", ".join(f"{c:.2f}" for c in calibrated) + ".")
if st.query_params.get("theta") != f"{theta:.2f}":
    st.query_params["theta"] = f"{theta:.2f}"

at_theta = threshold_metrics(runs, method, theta=theta)
at_cal = threshold_metrics(runs, method)
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
n_all, answered = at_theta["n"].sum(), at_theta["answered"].sum()
points = [{"coverage": at_cal["answered"].sum() / at_cal["n"].sum(),
           "risk": at_cal["errors"].sum() / max(1, at_cal["answered"].sum()),
           "name": "skip rule at the calibrated θ", "symbol": "diamond-open", "size": 17,
           "color": PAPER_COLOR},
          {"coverage": answered / n_all, "risk": at_theta["errors"].sum() / max(1, answered),
           "name": f"skip rule at θ = {theta:.2f}", "color": "#111827", "size": 10}]
with left:
    st.plotly_chart(risk_coverage_figure(rc, color=method_color(method),
                                         name=METHOD_SHORT[method], points=points,
                                         title="Risk–coverage (pooled over seeds)"),
                    key="sq_rc", config=plotly_config(f"risk_coverage_{method}"))
with right:
    st.plotly_chart(threshold_figure(sweep_df, theta=theta, calibrated=calibrated,
                                     label=rules[0].label, forced=float(now["forced_accuracy"]),
                                     title="What the threshold buys (mean over seeds)"),
                    key="sq_sweep", config=plotly_config(f"threshold_sweep_{method}"))
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
st.dataframe(table_style(per_seed[cols], formats={"seed": "{:d}", "theta": "{:.2f}",
                                                  "theta_calibrated": "{:.2f}"}),
             hide_index=True, width="stretch", column_config=SEED_COLUMNS)
d1, d2 = st.columns(2)
with d1:
    download_table(per_seed[cols], stem=f"selective_{method}_theta{theta:.2f}",
                   key="sq_dl_seed", what="Per-seed table")
with d2:
    download_table(pd.DataFrame(sweep_df), stem=f"sweep_{method}", key="sq_dl_sweep",
                   what="Threshold sweep")
