"""The seed-003 figure builders map the right arrays to the right axes and always draw their
reference lines (``core.figures.calibration``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from core.calibration.corp import corp_consistency_band, corp_curve
from core.calibration.label_source import brier_gap_constant, label_source_decomposition
from core.calibration.reliability import consistency_bands, reliability_curve
from core.calibration.smooth import smooth_reliability
from core.figures.calibration import (
    ESTIMATOR_NAMES,
    LABEL_COLORS,
    RULE_COLORS,
    algorithm1_figure,
    binned_reliability_figure,
    bridge_figure,
    brier_gap_figure,
    budget_curves_figure,
    corp_reliability_figure,
    decomposition_figure,
    heldout_figure,
    label_source_figure,
    rule_colors,
    smooth_reliability_figure,
    system_accuracy_figure,
)
from core.figures.style import METHOD_COLORS


def arr(v) -> np.ndarray:
    return np.asarray(v, dtype=float)


def by_name(fig, name: str):
    hits = [t for t in fig.data if t.name == name]
    assert hits, f"no trace named {name!r}: {[t.name for t in fig.data]}"
    return hits[0]


def names_of(fig) -> list[str]:
    return [t.name for t in fig.data]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, 400)
    y = (rng.random(400) < p).astype(float)
    q = np.clip(0.5 * p + 0.2, 0, 1)
    return p, y, q


def test_rule_colors_are_stable_and_fixed_for_named_rules():
    got = rule_colors(["native", "x", "dsnbf", "y"])
    assert got["native"] == RULE_COLORS["native"]
    assert got["dsnbf"] == METHOD_COLORS["dsnbf"]
    assert got["x"] != got["y"]
    assert rule_colors(["x", "y"]) == {"x": got["x"], "y": got["y"]}


def test_binned_figure_maps_bins_and_draws_references(data):
    p, y, q = data
    curves = {"a": reliability_curve(p, y, n_bins=10), "b": reliability_curve(q, y, n_bins=5)}
    band = consistency_bands(p, n_bins=10, n_boot=200, seed=0)
    fig = binned_reliability_figure(curves, band=band, band_rule="a", prevalence=y.mean(),
                                    label="z")
    diag = by_name(fig, "perfectly calibrated")
    assert arr(diag.x).tolist() == [0, 1] and arr(diag.y).tolist() == [0, 1]
    prev = by_name(fig, f"prevalence E[Z] = {y.mean():.3f}")
    assert np.allclose(arr(prev.y), y.mean())
    assert "90% band for the whole curve (a)" in names_of(fig)  # simultaneous by default
    pointwise = consistency_bands(p, n_bins=10, n_boot=200, seed=0, simultaneous=False)
    assert "90% pointwise band (a)" in names_of(binned_reliability_figure(
        curves, band=pointwise, band_rule="a"))
    c = curves["a"]
    keep = ~c.empty
    tr = by_name(fig, "a")
    assert np.allclose(arr(tr.x), c.mean_forecast[keep])
    assert np.allclose(arr(tr.y), c.observed_frequency[keep])
    assert np.allclose(arr(tr.error_y.array), c.high[keep] - c.observed_frequency[keep])
    assert tr.xaxis == "x" and tr.yaxis == "y"
    bars = by_name(fig, "b items per bin")
    assert bars.xaxis == "x2" and bars.yaxis == "y2"
    assert arr(bars.y).tolist() == curves["b"].count.tolist()
    assert np.allclose(arr(bars.x), (curves["b"].edges[:-1] + curves["b"].edges[1:]) / 2)
    assert "Z (reference)" in fig.layout.yaxis.title.text


def test_binned_figure_without_prevalence_has_only_the_diagonal(data):
    p, y, _ = data
    fig = binned_reliability_figure({"a": reliability_curve(p, y)})
    refs = [n for n in names_of(fig) if n.startswith(("perfectly", "prevalence"))]
    assert refs == ["perfectly calibrated"]


def test_corp_figure_draws_steps_and_band(data):
    p, y, _ = data
    c = corp_curve(p, y)
    band = corp_consistency_band(p, n_boot=20, seed=0)
    fig = corp_reliability_figure({"a": c}, band=band, band_rule="a", prevalence=0.4)
    tr = by_name(fig, "a")
    assert tr.line.shape == "hv"
    assert np.allclose(arr(tr.x), c.forecast) and np.allclose(arr(tr.y), c.calibrated)
    hi = by_name(fig, "90% band for the whole curve (a)")
    assert np.allclose(arr(hi.y), band.high) and hi.fill == "tonexty"
    assert "perfectly calibrated" in names_of(fig)
    assert np.allclose(arr(by_name(fig, "prevalence E[Y] = 0.400").y), 0.4)
    hist = by_name(fig, "a forecasts")
    assert hist.yaxis == "y2" and np.isclose(arr(hist.y).sum(), c.weight.sum())


def test_smooth_figure_maps_grid_and_density(data):
    p, y, _ = data
    s = smooth_reliability(p, y)
    band = SimpleNamespace(grid=s.grid, low=s.grid - 0.1, high=s.grid + 0.1, level=0.9)
    fig = smooth_reliability_figure({"a": s}, band=band, band_rule="a", prevalence=0.5)
    hi = by_name(fig, "90% pointwise band (a)")  # a band that does not say it is simultaneous
    assert np.allclose(arr(hi.x), s.grid) and np.allclose(arr(hi.y), s.grid + 0.1)
    tr = by_name(fig, f"a (σ = {s.sigma:.3f})")
    assert np.allclose(arr(tr.x), s.grid)
    solid = arr(tr.y)
    ok = ~np.isnan(solid)
    assert ok.sum() > 100 and np.allclose(solid[ok], s.frequency[ok])
    dens = by_name(fig, "a density")
    assert dens.yaxis == "y2" and np.allclose(arr(dens.y), s.density)
    assert "perfectly calibrated" in names_of(fig)


def test_decomposition_bars_are_signed_and_add_up():
    terms = pd.DataFrame([{"rule": "a", "brier": 0.2, "mcb": 0.05, "dsc": 0.02, "unc": 0.17,
                           "rel": 0.04, "res": 0.01, "wbv": 0.003, "wbc": 0.0015}])
    fig = decomposition_figure(terms, n_bins=12)
    corp, murphy = fig.data
    assert list(corp.x) == ["MCB", "− DSC", "UNC", "= Brier"]
    assert np.allclose(arr(corp.y), [0.05, -0.02, 0.17, 0.2])
    assert np.isclose(arr(corp.y)[:3].sum(), arr(corp.y)[3])
    assert murphy.xaxis == "x2"
    assert np.allclose(arr(murphy.y), [0.04, -0.01, 0.17, 0.003, -0.003, 0.2])
    assert "B = 12" in fig.layout.annotations[1].text


def test_brier_gap_figure_marks_crossover_prevalences_and_choice():
    grid = np.linspace(0, 1, 11)
    a, b = 0.767, 0.392
    exact = [brier_gap_constant(b, a, g) for g in grid]  # Δ = R(EG) − R(native)
    mid = (a + b) / 2
    fig = brier_gap_figure(prevalences=grid, exact_gap=exact, midpoint=mid,
                           names=("native", "EG"), measured_gap=np.array(exact) + 0.01,
                           measured_crossover=0.57, prevalence_z=0.295, prevalence_y=0.783,
                           gap_z=-0.227, gap_y=0.152, current=0.6)
    assert fig.layout.yaxis.title.text == "Δ = R(EG) − R(native)<br>(> 0: native better)"
    line = by_name(fig, "constant rules at the means (exact)")
    assert np.allclose(arr(line.x), grid) and np.allclose(arr(line.y), exact)
    zero = by_name(fig, "no difference")
    assert np.allclose(arr(zero.y), 0)
    cross = by_name(fig, f"crossover (a + b)/2 = {mid:.3f}")
    assert np.allclose(arr(cross.x), mid)
    z = by_name(fig, "Z (reference): π = 0.295")
    y = by_name(fig, "Y (truth): π = 0.783")
    assert arr(z.x).tolist() == [0.295] and arr(z.y).tolist() == [-0.227]
    assert arr(y.x).tolist() == [0.783] and arr(y.y).tolist() == [0.152]
    assert z.marker.color == LABEL_COLORS["z"]
    assert np.allclose(arr(by_name(fig, "π chosen = 0.60").x), 0.6)
    assert "measured crossover = 0.570" in names_of(fig)
    texts = [ann.text for ann in fig.layout.annotations]
    assert texts == ["EG preferred", "native preferred"]


def test_label_source_waterfall_follows_the_identity():
    rng = np.random.default_rng(3)
    ca, cb = rng.random(200), rng.random(200)
    y = (rng.random(200) < 0.7).astype(float)
    z = y * (rng.random(200) < 0.5)
    d = label_source_decomposition(ca, cb, y, z)
    fig = label_source_figure(gap_y=d.gap_y, t_omit=d.t_omit, t_fp=d.t_fp, gap_z=d.gap_z,
                              names=("A", "B"))
    (wf,) = fig.data
    assert wf.type == "waterfall"
    assert list(wf.measure) == ["absolute", "relative", "relative", "total"]
    vals = arr(wf.y)
    assert np.isclose(vals[:3].sum(), vals[3], atol=1e-12)


def test_bridge_figure_marks_reversals():
    analysis = pd.DataFrame({"label": ["All", "A", "B"], "gap_y": [-0.1, -0.2, 0.05],
                             "gap_z": [-0.05, 0.01, 0.02], "reverses": [False, True, False]})
    fig = bridge_figure(analysis, names=("DSNBF", "tier prior"))
    assert list(fig.data[0].x) == ["All", "A", "B"]
    assert np.allclose(arr(fig.data[0].y), [-0.1, -0.2, 0.05])
    assert np.allclose(arr(fig.data[1].y), [-0.05, 0.01, 0.02])
    assert list(fig.data[2].x) == ["A"]


def test_system_accuracy_figure_puts_both_labels_per_system():
    table = pd.DataFrame({"system": ["s1", "s2"], "em_accuracy_labelled": [0.4, 0.5],
                          "human_accuracy": [0.8, 0.6], "rank_em": [2, 1],
                          "rank_human": [1, 2]})
    fig = system_accuracy_figure(table)
    em = by_name(fig, "exact match (Z)")
    hu = by_name(fig, "humans (Y)")
    assert list(em.y) == ["s2", "s1"]  # ordered by human accuracy, best on top
    assert np.allclose(arr(em.x), [50, 40]) and np.allclose(arr(hu.x), [60, 80])


def test_budget_curves_have_both_estimators_and_nominal_coverage():
    rows = []
    for est in ("human_only", "trisource"):
        for b in (20, 50, 100):
            rows.append({"estimator": est, "budget": b, "rmse": 1 / b, "mean_width": 2 / b,
                         "coverage": 0.95, "p_correct_direction": 0.9,
                         "false_termination": 0.0, "escalation": 0.1})
    fig = budget_curves_figure(pd.DataFrame(rows), budget=50, level=0.9)
    first = fig.data[0]
    assert first.name == ESTIMATOR_NAMES["human_only"]
    assert arr(first.x).tolist() == [20, 50, 100] and np.allclose(arr(first.y),
                                                                   [0.05, 0.02, 0.01])
    nominal = by_name(fig, "nominal 90%")
    assert np.allclose(arr(nominal.y), 0.9) and nominal.xaxis == "x3"
    assert len([t for t in fig.data if t.name == ESTIMATOR_NAMES["trisource"]]) == 6
    assert len(fig.layout.shapes) == 6  # the chosen budget in every panel
    # rows in any order: each trace runs over increasing budgets with its own values
    shuffled = budget_curves_figure(pd.DataFrame(rows[::-1]), budget=50, level=0.9)
    tri = [t for t in shuffled.data if t.name == ESTIMATOR_NAMES["trisource"]][1]
    assert arr(tri.x).tolist() == [20, 50, 100] and np.allclose(arr(tri.y), [0.1, 0.04, 0.02])


def test_budget_curves_draw_coverage_over_all_pilots_only_where_it_differs():
    rows = []
    for est in ("human_only", "trisource"):
        for b, missing in ((10, 0.3), (20, 0.0)):
            rows.append({"estimator": est, "budget": b, "rmse": 1 / b, "mean_width": 2 / b,
                         "coverage": 0.96, "coverage_all": 0.96 * (1 - missing),
                         "p_correct_direction": 0.9, "false_termination": 0.0,
                         "escalation": 0.1, "no_interval": missing})
    fig = budget_curves_figure(pd.DataFrame(rows), budget=10)
    every = [t for t in fig.data if t.name.endswith(", over all pilots")]
    assert len(every) == 2 and {t.xaxis for t in every} == {"x3"}
    assert np.allclose(arr(every[0].y), [0.672, 0.96]) and every[0].line.dash == "dot"
    assert fig.layout.yaxis3.range[0] <= 0.672  # the low point is on the axis
    for r in rows:
        r["no_interval"], r["coverage_all"] = 0.0, r["coverage"]
    fig = budget_curves_figure(pd.DataFrame(rows), budget=10)
    assert not [t for t in fig.data if t.name.endswith(", over all pilots")]


def test_heldout_and_algorithm1_figures():
    held = {"ref_raw": 0.33, "ref_zplatt": 0.41, "restored_raw": 0.18, "pilot_only": 0.18,
            "trisource": 0.17, "full_y": 0.17}
    fig = heldout_figure(held)
    assert np.allclose(arr(fig.data[0].y), [0.33, 0.41, 0.18, 0.18, 0.17, 0.17])
    steps = pd.DataFrame({"step": [1, 2], "budget": [10, 20], "n_usable": [9, 18],
                          "estimate": [0.2, 0.1], "lo": [-0.1, 0.02], "hi": [0.5, 0.18],
                          "estimate_human": [0.25, 0.12], "lo_human": [-0.2, -0.01],
                          "hi_human": [0.7, 0.25], "escalate": [True, False]})
    fig = algorithm1_figure(steps, delta_y=0.15, names=("native", "EG"))
    tri = by_name(fig, "TriSource-Restore (95% interval)")
    assert np.allclose(arr(tri.y), [0.2, 0.1])
    assert np.allclose(arr(tri.error_y.array), [0.3, 0.08])
    assert list(tri.marker.symbol) == ["circle-open", "circle"]
    assert np.allclose(arr(by_name(fig, "truth Δ_Y = +0.150").y), 0.15)
    assert np.allclose(arr(by_name(fig, "no difference").y), 0)
    assert "R(EG) − R(native)" in fig.layout.yaxis.title.text


def _luminance(hex_color: str) -> float:
    rgb = [int(hex_color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.parametrize("background", ["#FFFFFF", "#0F141B"])  # .streamlit/config.toml
def test_the_current_value_colour_reads_on_both_themes(background):
    from core.figures.style import CURRENT_COLOR

    hi, lo = sorted((_luminance(CURRENT_COLOR), _luminance(background)), reverse=True)
    assert (hi + 0.05) / (lo + 0.05) >= 3.0


def test_a_budget_overlay_equals_the_figure_built_with_the_budget():
    """The cheap overlay draws exactly what the builder draws for the chosen budget."""
    from core.figures.calibration import budget_curves_figure, budget_marker_shapes
    from core.figures.overlay import with_overlay

    rows = [{"estimator": e, "budget": b, "rmse": 0.1 / b, "bias": 0.0, "mean_width": 1 / b,
             "coverage": 0.95, "p_correct_direction": 0.9, "false_termination": 0.01,
             "escalation": 0.5 / b} for e in ("human_only", "trisource") for b in (10, 50, 200)]
    summary = pd.DataFrame(rows)
    built = budget_curves_figure(summary, budget=50, level=0.95, title="t")
    base = budget_curves_figure(summary, level=0.95, title="t")
    over = with_overlay(base, shapes=budget_marker_shapes(50))
    assert over.to_dict() == built.to_dict()
    assert len(base.layout.shapes) == 0  # the shared base is untouched


def _fast_figures():
    summary = pd.DataFrame([{"estimator": e, "budget": b, "rmse": 0.1 / b, "bias": 0.0,
                             "mean_width": 1 / b, "coverage": 0.95, "p_correct_direction": 0.9,
                             "false_termination": 0.01, "escalation": 0.5 / b}
                            for e in ("human_only", "trisource") for b in (10, 50, 200)])
    held = {"ref_raw": 0.33, "ref_zplatt": 0.41, "restored_raw": 0.18, "pilot_only": 0.18,
            "trisource": 0.17, "full_y": 0.17}
    steps = pd.DataFrame({"step": [1, 2], "budget": [10, 20], "n_usable": [9, 18],
                          "estimate": [0.2, 0.1], "lo": [-0.1, 0.02], "hi": [0.5, 0.18],
                          "estimate_human": [0.25, 0.12], "lo_human": [-0.2, -0.01],
                          "hi_human": [0.7, 0.25], "escalate": [True, False]})
    from core.calibration.corp import corp_curve
    from core.calibration.reliability import reliability_curve
    from core.calibration.smooth import smooth_reliability

    rng = np.random.default_rng(3)
    p = rng.uniform(0, 1, 300)
    y = (rng.uniform(0, 1, 300) < p).astype(float)
    terms = pd.DataFrame([{"rule": "a", "brier": 0.2, "mcb": 0.05, "dsc": 0.1, "unc": 0.25,
                           "rel": 0.05, "res": 0.1, "wbv": 0.01, "wbc": 0.005}])
    return {"binned": binned_reliability_figure({"a": reliability_curve(p, y)}, prevalence=0.4),
            "corp": corp_reliability_figure({"a": corp_curve(p, y)}, prevalence=0.4),
            "smooth": smooth_reliability_figure({"a": smooth_reliability(p, y)}),
            "decomposition": decomposition_figure(terms),
            "budget_curves": budget_curves_figure(summary, budget=50, title="t"),
            "heldout": heldout_figure(held, title="t"),
            "algorithm1": algorithm1_figure(steps, delta_y=0.1, title="t")}


@pytest.mark.parametrize("name", ["binned", "corp", "smooth", "decomposition", "budget_curves",
                                  "heldout", "algorithm1"])
def test_dict_built_figures_are_valid_plotly(name):
    """The builders of core.figures.fast skip validation: Plotly's validator must accept them."""
    import plotly.graph_objects as go

    fig = _fast_figures()[name]
    again = go.Figure(fig.to_dict())  # raises ValueError on any invalid property
    assert len(again.data) == len(fig.data) and again.layout.height == fig.layout.height


@pytest.mark.parametrize("rows, cols, h, v", [(2, 3, 0.07, 0.16), (1, 2, 0.06, None),
                                              (3, 3, 0.03, 0.07), (1, 1, None, None)])
def test_subplot_grid_matches_make_subplots(rows, cols, h, v):
    from plotly.subplots import make_subplots

    from core.figures.fast import subplot_grid

    titles = [f"t{k}" for k in range(rows * cols)]
    ref = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=h,
                        vertical_spacing=v).to_dict()["layout"]
    got = subplot_grid(rows, cols, titles=titles, horizontal_spacing=h, vertical_spacing=v)
    for key in [k for k in ref if k.startswith(("xaxis", "yaxis"))]:
        assert got[key]["anchor"] == ref[key]["anchor"]
        assert np.allclose(got[key]["domain"], ref[key]["domain"], atol=1e-9), key
    for a, b in zip(got["annotations"], ref["annotations"], strict=True):
        assert a["text"] == b["text"]
        assert np.isclose(a["x"], b["x"]) and np.isclose(a["y"], b["y"])


def test_figures_carry_an_empty_template_not_plotlys_default():
    """The app draws with Streamlit's theme; Plotly's default template (6.5 kB) would be copied
    into every figure on every draw (core.figures.style.base_layout)."""
    import json

    import plotly.graph_objects as go

    from core.figures.fast import figure
    from core.figures.style import base_layout, titled_layout

    assert base_layout(height=300)["template"] == "none"
    assert titled_layout(height=300, title="t")["template"] == "none"
    default = len(json.dumps(go.Figure().to_dict()["layout"]["template"]))
    built = [go.Figure(layout=base_layout(height=300)), figure([], base_layout(height=300))]
    fig = go.Figure()
    fig.update_layout(**base_layout(height=300))
    for f in (*built, fig):
        size = len(json.dumps(f.to_dict()["layout"]["template"]))
        assert size < 100 < default


def test_a_frozen_figure_draws_the_same_json_and_hands_out_copies():
    """core.figures.fast.freeze: what st.plotly_chart sends is unchanged, and a consumer that
    edits the dict it got (plotly.io pops each trace's uid) cannot change the shared figure."""
    import plotly.io as pio

    from core.figures.fast import FrozenFigure, freeze

    rows = [{"estimator": e, "budget": b, "rmse": 1 / b, "mean_width": 2 / b, "coverage": 0.95,
             "p_correct_direction": 0.9, "false_termination": 0.0, "escalation": 0.1}
            for e in ("human_only", "trisource") for b in (20, 50)]
    fig = budget_curves_figure(pd.DataFrame(rows), budget=50)
    before = pio.to_json(fig, validate=False)
    frozen = freeze(fig)
    assert isinstance(frozen, FrozenFigure) and freeze(frozen) is frozen is fig
    assert pio.to_json(frozen, validate=False) == before
    got = frozen.to_dict()
    got["data"][0]["name"] = "changed"
    got["layout"]["height"] = 1
    got["data"].append({"type": "bar"})
    again = frozen.to_dict()
    assert again["data"][0]["name"] == fig.data[0].name
    assert again["layout"]["height"] == fig.layout.height and len(again["data"]) == len(fig.data)
