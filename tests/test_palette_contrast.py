"""Every figure colour is a palette colour that reads on the light and the dark theme.

Two parts: (1) the palette itself (``core.figures.palette``) meets its rules on every
background; (2) every public figure builder of ``core.figures`` (enumerated from the modules'
``__all__``, none skipped) is built from small synthetic inputs, and every colour in the
figure — trace lines, markers (arrays too), bar and waterfall fills, error bars, text, heatmap
colour scales, layout shapes and annotations — is a palette colour meeting its rule:

* a line, marker, opaque bar or annotation: an opaque :data:`LINE_COLORS` entry (contrast
  ≥ 3 on every background; trace or shape ``opacity`` below 1 is refused);
* a fill (``fillcolor``, a bar's or waterfall's ``marker.color``): a line colour, or a line
  colour at alpha ≤ 0.3, or transparent;
* a heatmap cell: a :data:`CELL_FILLS` or :data:`ACCURACY_SCALE` colour, its cell text an
  explicit colour with contrast ≥ 4.5 on every cell of the trace's colour scale;
* a legend swatch of a cell colour: framed by a line colour.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import core.figures
from core.figures import palette
from core.figures.palette import (
    ACCURACY_SCALE,
    BACKGROUNDS,
    CELL_FILLS,
    LINE_COLORS,
    MAX_FILL_ALPHA,
    METHOD_PALETTE,
    MIN_CONTRAST,
    MIN_DELTA_E,
    MIN_TEXT_CONTRAST,
    SOURCE_PALETTE,
    check_palette,
    contrast_ratio,
    delta_e76,
    is_line_color,
    parse_color,
    relative_luminance,
)

# ----------------------------------------------------------------------------- the palette


@pytest.mark.parametrize("background", sorted(BACKGROUNDS))
@pytest.mark.parametrize("name", sorted(LINE_COLORS))
def test_every_line_colour_reads_on_every_background(name, background):
    color, bg = LINE_COLORS[name], BACKGROUNDS[background]
    assert contrast_ratio(color, bg) >= MIN_CONTRAST, (name, color, background)
    assert 0.12 <= relative_luminance(color) <= 0.30, (name, color)  # the mid-tone band


@pytest.mark.parametrize("name", sorted(CELL_FILLS))
def test_cell_text_reads_on_every_cell(name):
    assert contrast_ratio(palette.CELL_TEXT, CELL_FILLS[name]) >= MIN_TEXT_CONTRAST


@pytest.mark.parametrize("group", [METHOD_PALETTE, SOURCE_PALETTE,
                                   dict(enumerate(palette.RULE_FALLBACK))])
def test_series_colours_are_perceptually_distinct(group):
    for (a, ca), (b, cb) in itertools.combinations(group.items(), 2):
        assert delta_e76(ca, cb) >= MIN_DELTA_E, (a, ca, b, cb, delta_e76(ca, cb))


def test_check_palette_passes_and_catches_a_bad_colour(monkeypatch):
    assert check_palette() == ()
    bad = {**LINE_COLORS, "too light": "#56B4E9"}  # Okabe–Ito sky blue: 2.3 on white
    monkeypatch.setattr(palette, "LINE_COLORS", bad)
    assert any("too light" in p and "light background" in p for p in check_palette())
    near = {**METHOD_PALETTE, "twin": "#3468CC"}  # a near-identical blue beside DSNBF's
    monkeypatch.setattr(palette, "METHOD_PALETTE", near)
    assert any("twin" in p for p in check_palette())


@pytest.mark.parametrize("a, b, ratio", [("#FFFFFF", "#000000", 21.0),
                                         ("#777777", "#FFFFFF", 4.48),
                                         ("#0072B2", "#0072B2", 1.0)])
def test_contrast_ratio_matches_wcag_reference_values(a, b, ratio):
    assert contrast_ratio(a, b) == pytest.approx(ratio, abs=0.01)
    assert contrast_ratio(b, a) == pytest.approx(contrast_ratio(a, b))


def test_delta_e_of_black_and_white_is_100():
    assert delta_e76("#000000", "#FFFFFF") == pytest.approx(100.0, abs=0.01)


@pytest.mark.parametrize("bad", ["white", "#12345", "rgb(300, 0, 0)", "rgba(0, 0, 0, 2)"])
def test_parse_color_refuses_what_it_cannot_read(bad):
    with pytest.raises(ValueError, match="colour"):
        parse_color(bad)


def test_translucent_fills_stay_within_the_alpha_limit():
    assert palette.translucent(palette.LATENT, 0.2) == "rgba(100, 116, 139, 0.2)"
    with pytest.raises(ValueError, match="alpha"):
        palette.translucent(palette.LATENT, 0.45)
    with pytest.raises(ValueError, match="palette"):
        palette.translucent("#123456", 0.1)


def test_colour_helpers_hand_out_palette_colours():
    from core.figures.calibration import rule_colors
    from core.figures.style import METHOD_SHORT, method_color

    names = ["native", "eg", "agreement", "tier prior", *METHOD_PALETTE,
             *(f"rule {k}" for k in range(25))]
    assert all(is_line_color(c) for c in rule_colors(names).values())
    assert all(is_line_color(method_color(m)) for m in [*METHOD_SHORT, "unknown"])


# ----------------------------------------------------------------------------- the walker
_CELL = frozenset(parse_color(c)[:3] for c in [*CELL_FILLS.values(),
                                               *(c for _, c in ACCURACY_SCALE)])


def _alpha(color: str) -> float:
    return parse_color(color)[3]


def _problem(kind: str, color: str, *, opacity: float = 1.0) -> str | None:
    """Why ``color`` breaks the rule of ``kind`` (None when it does not)."""
    try:
        r, g, b, a = parse_color(color)
    except ValueError as exc:
        return str(exc)
    opaque = f"#{r:02X}{g:02X}{b:02X}"
    line = is_line_color(opaque)
    if kind == "line":
        if not line or a * opacity < 1.0:
            return "not an opaque palette line colour"
        worst = min(contrast_ratio(opaque, bg) for bg in BACKGROUNDS.values())
        return None if worst >= MIN_CONTRAST else f"contrast {worst:.2f} < {MIN_CONTRAST}"
    if kind == "fill":
        if a * opacity == 0.0:
            return None
        if line and (a * opacity == 1.0 or a * opacity <= MAX_FILL_ALPHA):
            return None
        return f"a fill must be a line colour, opaque or at alpha ≤ {MAX_FILL_ALPHA}"
    if kind == "swatch":
        return None if (line or (r, g, b) in _CELL) and a == 1.0 else "not a palette colour"
    if kind == "cell":
        return None if (r, g, b) in _CELL else "not a palette cell fill"
    if kind == "background":
        return None if a == 0.0 else "a plot background must stay transparent"
    raise AssertionError(kind)


def _colors(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple | np.ndarray):
        for v in value:
            if isinstance(v, str):
                yield v


def _walk(node, path: str) -> Iterator[tuple[str, object]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list | tuple) and node and isinstance(node[0], dict):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")
    else:
        yield path, node


def _trace_problems(t: dict) -> Iterator[tuple[str, str, str]]:
    kind_of_marker = "fill" if t.get("type") in ("bar", "waterfall") else "line"
    marker = t.get("marker", {}) or {}
    framed = is_line_color(str((marker.get("line") or {}).get("color", "")))
    if kind_of_marker == "line" and framed and (marker.get("line") or {}).get("width", 1) > 0:
        kind_of_marker = "swatch"
    opacity = float(t.get("opacity", 1.0))
    if float(marker.get("opacity", 1.0)) == 0.0 or opacity == 0.0:
        return  # an invisible placeholder
    yield from _unset(t)
    scale = t.get("colorscale")
    if t.get("type") == "heatmap":
        if not isinstance(scale, list | tuple):
            yield "colorscale", str(scale), "a heatmap needs an explicit palette colour scale"
            scale = []
        cells = [c for _, c in scale]
        for c in cells:
            if (p := _problem("cell", c)) is not None:
                yield "colorscale", c, p
        text = (t.get("textfont") or {}).get("color")
        if t.get("texttemplate") or t.get("text") is not None:
            if text is None:
                yield "textfont.color", "auto", "cell text needs an explicit colour"
            else:
                worst = min(contrast_ratio(text, c) for c in cells) if cells else 0.0
                if worst < MIN_TEXT_CONTRAST:
                    yield "textfont.color", text, f"text contrast {worst:.2f} on a cell"
    for path, value in _walk(t, ""):
        last = path.rsplit(".", 1)[-1]
        if not last.endswith("color") or path.startswith("colorscale"):
            continue
        if t.get("type") == "heatmap" and path == "textfont.color":
            continue  # checked against the cells above
        if last == "fillcolor":
            kind = "fill"
        elif path.endswith("marker.color") and not path.startswith("marker.line"):
            kind = kind_of_marker
        elif last in ("bgcolor", "plot_bgcolor", "paper_bgcolor"):
            kind = "background"
        else:
            kind = "line"
        for c in _colors(value):
            if (p := _problem(kind, c, opacity=opacity)) is not None:
                yield path, c, p


def _unset(t: dict) -> Iterator[tuple[str, str, str]]:
    """A visible trace without its own colour would take the theme's colorway."""
    kind, mode = t.get("type"), str(t.get("mode", "lines+markers"))
    marker, line = t.get("marker") or {}, t.get("line") or {}
    if kind == "scatter" and t.get("x") not in ([None], (None,)):
        if "lines" in mode and line.get("width", 1) > 0 and "color" not in line:
            yield "line.color", "unset", "a visible line needs a palette colour"
        if "markers" in mode and "color" not in marker and "color" not in line:
            yield "marker.color", "unset", "a visible marker needs a palette colour"
    elif kind == "bar" and "color" not in marker:
        yield "marker.color", "unset", "a bar needs a palette colour"
    elif kind == "waterfall":
        for part in ("increasing", "decreasing", "totals"):
            if "color" not in ((t.get(part) or {}).get("marker") or {}):
                yield f"{part}.marker.color", "unset", "a waterfall part needs a colour"


def _layout_problems(layout: dict) -> Iterator[tuple[str, str, str]]:
    for i, shape in enumerate(layout.get("shapes", ())):
        opacity = float(shape.get("opacity", 1.0))
        for path, value in _walk(shape, f"shapes[{i}]"):
            if path.endswith("fillcolor"):
                kind = "fill"
            elif path.endswith("color"):
                kind = "line"
            else:
                continue
            for c in _colors(value):
                if (p := _problem(kind, c, opacity=opacity)) is not None:
                    yield path, c, p
    rest = {k: v for k, v in layout.items() if k not in ("shapes", "template")}
    for path, value in _walk(rest, ""):
        last = path.rsplit(".", 1)[-1]
        if not last.endswith("color") or path.startswith("coloraxis"):
            continue
        kind = "background" if last in ("plot_bgcolor", "paper_bgcolor", "bgcolor") else "line"
        for c in _colors(value):
            if (p := _problem(kind, c)) is not None:
                yield path, c, p


def colour_problems(fig: go.Figure) -> list[str]:
    """Every colour of ``fig`` that breaks its rule, as "where: colour (why)" lines."""
    d = fig.to_dict()
    out = []
    for i, t in enumerate(d.get("data", ())):
        who = f"trace {i} {t.get('type')} {t.get('name')!r}"
        out += [f"{who} {path}: {c} ({why})" for path, c, why in _trace_problems(t)]
    out += [f"layout {path}: {c} ({why})" for path, c, why in
            _layout_problems(d.get("layout", {}))]
    return out


def test_the_walker_catches_what_it_must():
    bad = go.Figure([go.Scatter(x=[0], y=[0], name="s", marker={"color": "#56B4E9",
                                                                  "line": {"color": "white"}}),
                     go.Bar(x=[0], y=[1], name="b", marker={"color": "rgba(0, 114, 178, 0.45)"}),
                     go.Heatmap(z=[[0, 1]], colorscale="Blues", texttemplate="%{z}"),
                     go.Scatter(x=[0], y=[0], name="u", mode="lines")],
                    layout={"shapes": [{"type": "line", "line": {"color": palette.CURRENT},
                                        "opacity": 0.5}],
                            "annotations": [{"text": "a", "font": {"color": "#1F2937"}}]})
    found = "\n".join(colour_problems(bad))
    for where in ("'s' marker.color: #56B4E9", "'s' marker.line.color: white",
                  "'b' marker.color", "colorscale: rgb(8,48,107)", "textfont.color: auto",
                  "shapes[0].line.color", "annotations[0].font.color",
                  "'u' line.color: unset"):
        assert where in found, (where, found)
    good = go.Figure(go.Scatter(x=[0], y=[0], line={"color": palette.REFERENCE}))
    assert colour_problems(good) == []


# ----------------------------------------------------------------------------- the builders
def _testbed():
    from core.testbed.schema import blank_testbed

    t = blank_testbed(1)
    e = t.events
    e["duration_h"][0] = np.linspace(5.0, 8.0, 30).round(1)
    e["bedtime_min"][0] = 1380 + (np.arange(30) % 5) * 20
    e["hours"][0] = np.where(np.arange(30) % 3 == 0, 9.5, 7.0)
    e["overtime"][0] = e["hours"][0] > 9.0
    e["worked_on_weekend"][0] = np.arange(30) % 7 == 0
    e["meals"][0] = 3
    e["home_cooked"][0] = np.arange(30) % 4 % 3
    e["fast_food"][0] = (e["home_cooked"][0] == 0).astype(np.int8)
    e["n_act"][0] = np.arange(30) % 3
    e["supporting_other"][0] = np.arange(30) % 2 == 0
    e["did_exercise"][0] = np.arange(30) % 2 == 1
    e["exercise_min"][0] = np.where(e["did_exercise"][0], 20 + np.arange(30), 0)
    e["intentional"][0] = e["did_exercise"][0] & (e["exercise_min"][0] >= 30)
    t.planner["duration_h"][0] = 8.5
    t.self_report["duration_h"][0] = e["duration_h"][0] + 0.5
    t.device["duration_h"][0] = e["duration_h"][0]
    t.device["available"][0, [2, 6]] = False
    t.device["duration_h"][0, [2, 6]] = np.nan
    t.objective["available"][0, [9]] = False
    t.profile["duration_h"][0] = 7.2
    t.profile["anchor_end"][0] = 10
    t.personas.loc[0, ["difficulty", "shift_day", "scenario"]] = ["temporal_shift", 12,
                                                                  "relocation"]
    t.validate()
    return t


def _forecasts():
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, 400)
    y = (rng.random(400) < p).astype(float)
    return p, y, np.clip(0.5 * p + 0.2, 0, 1)


def _budget_summary() -> pd.DataFrame:
    return pd.DataFrame([{"estimator": e, "budget": b, "rmse": 0.1 / b, "mean_width": 1 / b,
                          "coverage": 0.95, "p_correct_direction": 0.9,
                          "false_termination": 0.01, "escalation": 0.5 / b}
                         for e in ("human_only", "trisource") for b in (10, 50, 200)])


def _rules():
    # named rules, resolvers and fallback names: every colour source of rule_colors
    return ["native", "eg", "dsnbf", "tier prior", "agree@0.20", "const@0.50"]


def _calibration_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.calibration.corp import corp_consistency_band, corp_curve
    from core.calibration.label_source import brier_gap_constant
    from core.calibration.reliability import consistency_bands, reliability_curve
    from core.calibration.smooth import smooth_reliability
    from core.figures import calibration as cf

    def binned():
        p, y, q = _forecasts()
        curves = {r: reliability_curve(p if k % 2 else q, y, n_bins=10)
                  for k, r in enumerate(_rules())}
        band = consistency_bands(p, n_bins=10, n_boot=50, seed=0)
        return [cf.binned_reliability_figure(curves, colors=cf.rule_colors(_rules()), band=band,
                                             band_rule="native", prevalence=y.mean()),
                cf.binned_reliability_figure(curves, band=band)]

    def corp():
        p, y, q = _forecasts()
        curves = {r: corp_curve(p if k % 2 else q, y) for k, r in enumerate(_rules())}
        band = corp_consistency_band(p, n_boot=20, seed=0)
        return [cf.corp_reliability_figure(curves, band=band, band_rule="eg", prevalence=0.4),
                cf.corp_reliability_figure(curves, band=band)]

    def smooth():
        p, y, q = _forecasts()
        curves = {r: smooth_reliability(p if k % 2 else q, y) for k, r in enumerate(_rules())}
        s = curves["native"]
        band = SimpleNamespace(grid=s.grid, low=s.grid - 0.1, high=s.grid + 0.1, level=0.9)
        return [cf.smooth_reliability_figure(curves, band=band, band_rule="native",
                                             prevalence=0.5),
                cf.smooth_reliability_figure(curves, band=band)]

    def decomposition():
        terms = pd.DataFrame([{"rule": r, "brier": 0.2, "mcb": 0.05, "dsc": 0.02, "unc": 0.17,
                               "rel": 0.04, "res": 0.01, "wbv": 0.003, "wbc": 0.0015}
                              for r in _rules()])
        return [cf.decomposition_figure(terms, colors=cf.rule_colors(_rules())),
                cf.decomposition_figure(terms)]

    def brier_gap():
        grid = np.linspace(0, 1, 11)
        a, b = 0.767, 0.392
        exact = [brier_gap_constant(b, a, g) for g in grid]
        kw = dict(prevalences=grid, exact_gap=exact, midpoint=(a + b) / 2,
                  measured_gap=np.array(exact) + 0.01, measured_crossover=0.57,
                  prevalence_z=0.295, prevalence_y=0.783, gap_z=-0.227, gap_y=0.152,
                  current=0.6)
        return [cf.brier_gap_figure(names=("native", "EG"), **kw),
                cf.brier_gap_figure(names=("dsnbf", "tier prior"),
                                    colors=cf.rule_colors(["dsnbf", "tier prior"]), **kw),
                cf.brier_gap_figure(names=("x", "y"), **kw)]

    def label_source():
        return [cf.label_source_figure(gap_y=0.1, t_omit=-0.3, t_fp=0.05, gap_z=-0.15,
                                       names=("A", "B"))]

    def bridge():
        analysis = pd.DataFrame({"label": ["All", "A", "B"], "gap_y": [-0.1, -0.2, 0.05],
                                 "gap_z": [-0.05, 0.01, 0.02],
                                 "reverses": [False, True, False]})
        return [cf.bridge_figure(analysis, names=("DSNBF", "tier prior"))]

    def system_accuracy():
        table = pd.DataFrame({"system": ["s1", "s2"], "em_accuracy_labelled": [0.4, 0.5],
                              "human_accuracy": [0.8, 0.6], "rank_em": [2, 1],
                              "rank_human": [1, 2]})
        return [cf.system_accuracy_figure(table)]

    def budget_curves():
        return [cf.budget_curves_figure(_budget_summary(), budget=50, level=0.9),
                cf.budget_curves_figure(_budget_summary())]

    def budget_marker_shapes():
        return [go.Figure(layout={"shapes": cf.budget_marker_shapes(50)})]

    def heldout():
        held = {"ref_raw": 0.33, "ref_zplatt": 0.41, "restored_raw": 0.18, "pilot_only": 0.18,
                "trisource": 0.17, "full_y": 0.17}
        return [cf.heldout_figure(held)]

    def algorithm1():
        steps = pd.DataFrame({"step": [1, 2], "budget": [10, 20], "n_usable": [9, 18],
                              "estimate": [0.2, 0.1], "lo": [-0.1, 0.02], "hi": [0.5, 0.18],
                              "estimate_human": [0.25, 0.12], "lo_human": [-0.2, -0.01],
                              "hi_human": [0.7, 0.25], "escalate": [True, False]})
        return [cf.algorithm1_figure(steps, delta_y=0.15, names=("native", "EG")),
                cf.algorithm1_figure(steps)]

    return {"calibration.binned_reliability_figure": binned,
            "calibration.corp_reliability_figure": corp,
            "calibration.smooth_reliability_figure": smooth,
            "calibration.decomposition_figure": decomposition,
            "calibration.brier_gap_figure": brier_gap,
            "calibration.label_source_figure": label_source,
            "calibration.bridge_figure": bridge,
            "calibration.system_accuracy_figure": system_accuracy,
            "calibration.budget_curves_figure": budget_curves,
            "calibration.budget_marker_shapes": budget_marker_shapes,
            "calibration.heldout_figure": heldout,
            "calibration.algorithm1_figure": algorithm1}


def _evaluation_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.evaluation.metrics import risk_coverage
    from core.figures import lab, leaderboard, selective
    from core.figures.style import CURRENT_COLOR, PAPER_COLOR, method_color
    from core.testbed.questions import SOURCES

    methods = list(METHOD_PALETTE)

    def table():
        a = np.linspace(60, 85, len(methods))
        return pd.DataFrame({"method": methods, "accuracy": a, "ci_low": a - 2,
                             "ci_high": a + 1, "paper": a + 0.5, "regenerated": a - 0.3})

    def sources(shift: float = 0.0):
        return pd.DataFrame({"source": list(SOURCES), "coverage": np.linspace(50, 90, 5),
                             "conflict_rate": np.linspace(10, 50, 5) + shift,
                             "accuracy": np.linspace(40, 80, 5) - shift,
                             "acc_low": np.linspace(35, 75, 5) - shift,
                             "acc_high": np.linspace(45, 85, 5) - shift})

    def grid():
        rows = [{"bias": b, "dropout": d, **{m: 70 + b - d + k for k, m in enumerate(methods)}}
                for b in (0.5, 1.0, 2.0) for d in (0.5, 1.0, 2.0)]
        return [lab.grid_figure(pd.DataFrame(rows), methods)]

    def per_type():
        frame = pd.DataFrame({"type": ["A Arbitration", "B Identity"],
                              **{m: [80.0 + k, 90.0 - k] for k, m in enumerate(methods)}})
        return [leaderboard.type_heatmap(frame, methods)]

    def per_difficulty():
        long = pd.DataFrame([{"method": m, "difficulty": d, "accuracy": 60.0 + 3 * k + j}
                             for k, m in enumerate(methods)
                             for j, d in enumerate(leaderboard.DIFFICULTY_LABELS)])
        return [leaderboard.difficulty_heatmap(long, methods)]

    def slices():
        n = len(methods)
        frame = pd.DataFrame({"method": methods, "gt_present": np.linspace(70, 90, n),
                              "gt_absent": np.linspace(0, 40, n), "n_present": [800] * n,
                              "n_absent": [64] * n, "paper_present": np.linspace(71, 91, n),
                              "paper_absent": np.linspace(1, 41, n)})
        return [leaderboard.slices_figure(frame)]

    def risk():
        rng = np.random.default_rng(0)
        conf = rng.random(500)
        rc = risk_coverage(conf, rng.random(500) < conf)
        points = [{"coverage": 0.9, "risk": 0.2, "name": "paper", "symbol": "diamond",
                   "color": PAPER_COLOR},
                  {"coverage": 0.8, "risk": 0.1, "name": "θ", "color": CURRENT_COLOR},
                  {"coverage": 0.7, "risk": 0.1, "name": "default"}]
        return [selective.risk_coverage_figure(rc, points=points),
                selective.risk_coverage_figure(rc, color=method_color("nbf_skip"),
                                               points=points)]

    def threshold():
        sweep = pd.DataFrame({"theta": [0.0, 0.5, 1.0], "coverage": [100.0, 80.0, 40.0],
                              "selective_accuracy": [82.0, 88.0, 95.0],
                              "f05": [83.0, 86.0, 70.0]})
        return [selective.threshold_figure(sweep, theta=0.5, calibrated=[0.3, 0.31],
                                           forced=82.0)]

    return {"lab.grid_figure": grid,
            "lab.lab_leaderboard_figure": lambda: [lab.lab_leaderboard_figure(table(), table()),
                                                   lab.lab_leaderboard_figure(table())],
            "lab.source_shift_figure": lambda: [lab.source_shift_figure(sources(), sources(5))],
            "leaderboard.forest_figure": lambda: [leaderboard.forest_figure(table())],
            "leaderboard.type_heatmap": per_type,
            "leaderboard.difficulty_heatmap": per_difficulty,
            "leaderboard.slices_figure": slices,
            "leaderboard.source_reliability_figure": lambda: [
                leaderboard.source_reliability_figure(sources())],
            "selective.risk_coverage_figure": risk,
            "selective.threshold_figure": threshold}


def _walkthrough_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.evaluation.walkthrough import day_views, latent_days
    from core.figures import walkthrough as wf
    from core.testbed.questions import QIDS, SOURCES

    def timeline():
        days = latent_days(_testbed())
        return [wf.timeline_figure(days, topic=topic, shift_day=12, threshold=7.0,
                                   threshold_label="threshold")
                for topic in ("sleep", "work", "diet", "social", "exercise")]

    def source_days():
        tb = _testbed()
        return [wf.source_days_figure(day_views(tb, qid=q)) for q in QIDS]

    def atom_grid():
        gt = np.zeros(len(QIDS), dtype=np.int8)
        atoms = np.full((len(QIDS), len(SOURCES)), -1, dtype=np.int8)
        atoms[0] = [0, 1, -1, 0, -1]
        return [wf.atom_grid_figure(gt, atoms, highlight=QIDS[0]),
                wf.atom_grid_figure(gt, atoms)]

    return {"walkthrough.timeline_figure": timeline,
            "walkthrough.source_days_figure": source_days,
            "walkthrough.atom_grid_figure": atom_grid}


def _overlay_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.figures.calibration import budget_curves_figure, budget_marker_shapes
    from core.figures.overlay import with_overlay

    return {"overlay.with_overlay": lambda: [
        with_overlay(budget_curves_figure(_budget_summary()), shapes=budget_marker_shapes(50))]}


def _records_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    import datetime as dt

    from core.figures.records import timeline_figure
    from core.records.views import as_of_view, load_base

    def timeline():
        base = load_base(n_boot=1)
        views = [as_of_view(base, as_of=d, policy=p) for d, p in
                 ((base.today, "CP-01"), (dt.date(2025, 7, 1), "naive recency"),
                  (dt.date(2019, 9, 1), "CP-01"))]
        return [timeline_figure(v.facts, as_of=v.as_of, today=v.today, title="t")
                for v in views]

    return {"records.timeline_figure": timeline}


def _prose_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.evaluation.decomposition import factorial
    from core.evaluation.display import table
    from core.figures import prose as pf
    from core.prose.views import NoiseView, factorial_view_of, faithfulness_view_of

    def faithfulness():
        rng = np.random.default_rng(3)
        star = rng.integers(-1, 2, size=(6, 18, 5)).astype(np.int8)
        hat = np.where(rng.random(star.shape) < 0.1, -1, star).astype(np.int8)
        return [pf.faithfulness_figure(faithfulness_view_of(hat, star, extractor="x")),
                pf.faithfulness_figure(faithfulness_view_of(hat, star, extractor="x",
                                                            cells="informative"))]

    def noise():
        methods = list(METHOD_PALETTE)
        a = np.linspace(55, 85, len(methods))
        frame = pd.DataFrame({"method": methods, "label": methods, "accuracy_star": a,
                              "accuracy_hat": a - 5, "change": np.full(len(a), -5.0)})
        board = table(frame, {"label": "method"}, stem="noise")
        return [pf.noise_figure(NoiseView("uniform", 0.1, "extracted", 0, board, frame, "x",
                                          "s", 10, 100, 10, 0.1))]

    def two_by_two():
        rng = np.random.default_rng(5)
        cells = [rng.random((40, 18)) < p for p in (0.8, 0.7, 0.75, 0.6)]
        d = factorial(*cells, rng=np.random.default_rng(0), n_boot=50, a="dsnbf",
                      b="majority_vote")
        return [pf.factorial_figure(factorial_view_of(d))]

    return {"prose.faithfulness_figure": faithfulness, "prose.noise_figure": noise,
            "prose.factorial_figure": two_by_two}


def _fusion_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    from core.figures import fusion as ff
    from core.fusion import views as fv
    from core.fusion.synthetic import add_copies, synthetic_claims

    def fitted():
        rng = np.random.default_rng(4)
        base = synthetic_claims(rng, n_items=200, n_sources=7, n_classes=3, claims_per_item=7,
                                accuracy=np.r_[0.3, np.full(6, 0.75)])
        claims = add_copies(base, 0, 3)
        return claims, fv.fit_fusion(claims)

    def board():
        claims, fit = fitted()
        blind = fv.fit_fusion(claims.replace(truth=None), methods=["mv", "accu"])
        return [ff.board_figure(fv.board_view(fit, fit.methods, coverage=0.6)),
                ff.board_figure(fv.board_view(blind, blind.methods))]

    def dependence():
        _, fit = fitted()
        pv = fv.pair_view(fit, copies=fv.copy_view(fit))
        return [ff.dependence_figure(pv, "false"), ff.dependence_figure(pv, "beyond")]

    def what_if():
        claims, fit = fitted()
        item = fv.what_if_items(fit, fv.copy_view(fit))[0]
        drop = list(fv.item_claims(claims, item)["source"][:2])
        return [ff.what_if_figure(fv.what_if_view(claims, "mv", item, drop=drop))]

    def reliability():
        _, fit = fitted()
        data = fv.reliability_data(fit, fit.methods)
        return [ff.fusion_reliability_figure(data, fit.methods)]

    return {"fusion.board_figure": board, "fusion.dependence_figure": dependence,
            "fusion.what_if_figure": what_if, "fusion.fusion_reliability_figure": reliability}


#: Public callables that build no figure of their own, and why they need no colour check.
def _tour_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    """Every chart kind of the tour (the frame's own samples, tests/test_tour.py)."""
    from core.figures.tour import stop_figure
    from tests.test_tour import CHARTS

    return {"tour.stop_figure": lambda: [stop_figure(c) for c in CHARTS.values()]}


def _sweep_cases() -> dict[str, Callable[[], list[go.Figure]]]:
    """The sweep views' figures on the made-up sweep of tests/test_sweep_views.py, with and
    without text on the cells, and with a point the sweep never ran."""
    from core.figures import sweep as fs
    from core.sweep import views as sv
    from tests.test_sweep_views import hand_table

    def rank():
        t = hand_table()
        many = pd.concat([t.assign(position=t["position"] + 16 * k) for k in range(2)])
        return [fs.rank_stability_figure(sv.rank_stability(t)),
                fs.rank_stability_figure(sv.rank_stability(many), title="t")]

    def surface():
        t = hand_table()
        gap = t[~((t["bias_scale"] == 4.0) & (t["dropout_scale"] == 2.0))]
        return [fs.accuracy_surface_figure(sv.accuracy_surface(
                    t, x="bias_scale", y="dropout_scale", method="dsnbf")),
                fs.accuracy_surface_figure(sv.accuracy_surface(
                    gap, x="seed", y="bias_scale", method="nbf", metric="coverage"))]

    def boundary():
        t = hand_table()
        return [fs.majority_boundary_figure(sv.majority_boundary(t)),
                fs.majority_boundary_figure(sv.majority_boundary(t, knobs=[]), title="t")]

    def agreement():
        from core.sweep.catalog import load_sweep
        from core.sweep.explore import setting_agreement

        out = []
        for name in ("bias-by-seed", "bias-by-dropout"):
            data = load_sweep(f"shipped:{name}")
            out.append(fs.setting_agreement_figure(setting_agreement(
                data, sv.rank_stability(data.table))))
        return out

    return {"sweep.rank_stability_figure": rank, "sweep.accuracy_surface_figure": surface,
            "sweep.majority_boundary_figure": boundary,
            "sweep.setting_agreement_figure": agreement}


NOT_BUILDERS = {
    "calibration.rule_colors": "colour helper (test_colour_helpers_hand_out_palette_colours)",
    "style.method_color": "colour helper (test_colour_helpers_hand_out_palette_colours)",
    "style.base_layout": "layout defaults, no colour",
    "style.titled_layout": "layout defaults, no colour",
    "fast.figure": "generic constructor of given traces, no colour of its own",
    "fast.freeze": "freezes a built figure",
    "fast.FrozenFigure": "the frozen figure class",
    "fast.subplot_grid": "axis layout, no colour",
    "fast.axis_refs": "axis names",
    "leaderboard.axis_label": "a label string",
    "walkthrough.atom_grid_status": "cell statuses (strings)",
    "walkthrough.clock_ticks": "tick values and labels",
    "calibration.rate_axis_range": "an axis range (numbers), no colour",
    **{f"palette.{n}": "the palette's own functions (tested above)"
       for n in ("check_palette", "contrast_ratio", "delta_e76", "is_line_color",
                 "parse_color", "relative_luminance", "translucent")},
}

CASES = {**_calibration_cases(), **_evaluation_cases(), **_walkthrough_cases(),
         **_overlay_cases(), **_records_cases(), **_prose_cases(), **_fusion_cases(),
         **_tour_cases(), **_sweep_cases()}


def _public_callables() -> set[str]:
    found = set()
    for mod in pkgutil.iter_modules(core.figures.__path__):
        module = importlib.import_module(f"core.figures.{mod.name}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found.add(f"{mod.name}.{name}")
    return found


def test_every_public_builder_is_tested_or_explained():
    public = _public_callables()
    assert not CASES.keys() & NOT_BUILDERS.keys()
    untested = public - CASES.keys() - NOT_BUILDERS.keys()
    assert not untested, f"add a case to tests/test_palette_contrast.py for {sorted(untested)}"
    stale = (CASES.keys() | NOT_BUILDERS.keys()) - public
    assert not stale, f"no longer public: {sorted(stale)}"


@pytest.mark.parametrize("builder", sorted(CASES))
def test_every_figure_colour_is_a_palette_colour_meeting_its_rule(builder):
    figures = CASES[builder]()
    assert figures
    problems = [f"{builder} [{k}] {p}" for k, fig in enumerate(figures)
                for p in colour_problems(fig)]
    assert not problems, "\n".join(problems)
