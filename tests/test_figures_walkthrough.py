"""The walkthrough figure builders map the right arrays to the right axes."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from core.evaluation.walkthrough import day_views, latent_days
from core.figures.style import SOURCE_COLORS, STATUS_COLORS, UNAVAILABLE_FILL
from core.figures.walkthrough import (
    GRID_STATUS_CODES,
    atom_grid_figure,
    atom_grid_status,
    clock_ticks,
    source_days_figure,
    timeline_figure,
)
from core.testbed.questions import Q_INDEX, QIDS, SOURCES
from core.testbed.schema import blank_testbed

DAYS = np.arange(1, 31)


def arr(trace_values) -> np.ndarray:
    return np.asarray(trace_values, dtype=float)


@pytest.fixture
def tb():
    """One hand-filled persona: varied days, device/objective dropout, a shift at day 12."""
    t = blank_testbed(1)
    e = t.events
    e["duration_h"][0] = np.linspace(5.0, 8.0, 30).round(1)
    e["bedtime_min"][0] = 1380 + (np.arange(30) % 5) * 20
    e["hours"][0] = np.where(np.arange(30) % 3 == 0, 9.5, 7.0)
    e["overtime"][0] = e["hours"][0] > 9.0
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
    t.device["available"][0, [2, 6]] = False   # days 3 and 7
    t.device["duration_h"][0, [2, 6]] = np.nan
    t.objective["available"][0, [9]] = False   # day 10
    t.profile["duration_h"][0] = 7.2
    t.profile["anchor_end"][0] = 10
    t.personas.loc[0, ["difficulty", "shift_day", "scenario"]] = ["temporal_shift", 12,
                                                                  "relocation"]
    t.validate()
    return t


def test_clock_ticks_wrap_after_midnight():
    vals, text = clock_ticks(22.6, 25.2)
    assert vals == [22.0, 23.0, 24.0, 25.0, 26.0]
    assert text == ["22:00", "23:00", "00:00", "01:00", "02:00"]


def test_timeline_sleep_maps_bedtime_and_duration(tb):
    days = latent_days(tb)
    fig = timeline_figure(days, topic="sleep", shift_day=12, threshold=7.0)
    bed, dur = fig.data[:2]
    assert [t.name for t in fig.data[2:]] == ["habits shift (day 12)"]   # legend entry
    np.testing.assert_array_equal(arr(bed.x), DAYS)
    np.testing.assert_allclose(arr(bed.y), tb.events["bedtime_min"][0] / 60)
    assert bed.xaxis == "x" and dur.xaxis == "x2"
    np.testing.assert_allclose(arr(dur.y), tb.events["duration_h"][0])
    dashed = [s for s in fig.layout.shapes if s.type == "line" and s.line.dash == "dash"]
    assert dashed and {s.x0 for s in dashed} == {11.5}          # shift line before day 12
    dotted = [s for s in fig.layout.shapes if s.type == "line" and s.line.dash == "dot"]
    assert {s.y0 for s in dotted} == {24.0, 7.0}                 # midnight and threshold


def test_timeline_work_splits_overtime_days(tb):
    fig = timeline_figure(latent_days(tb), topic="work", threshold=9.0)
    normal, over = fig.data[0], fig.data[1]
    hours = tb.events["hours"][0]
    ot = tb.events["overtime"][0]
    np.testing.assert_allclose(arr(over.y)[ot], hours[ot])
    assert np.isnan(arr(over.y)[~ot]).all()
    np.testing.assert_allclose(arr(normal.y)[~ot], hours[~ot])


def test_timeline_diet_stacks_to_meals(tb):
    fig = timeline_figure(latent_days(tb), topic="diet")
    assert fig.layout.barmode == "stack"
    total = sum(arr(t.y) for t in fig.data)
    np.testing.assert_array_equal(total, tb.events["meals"][0])
    np.testing.assert_array_equal(arr(fig.data[0].y), tb.events["home_cooked"][0])


@pytest.mark.parametrize("topic", ["social", "exercise"])
def test_timeline_other_topics_cover_their_field(tb, topic):
    fig = timeline_figure(latent_days(tb), topic=topic)
    field = {"social": "n_act", "exercise": "exercise_min"}[topic]
    total = np.nansum(np.vstack([arr(t.y) for t in fig.data if t.type == "bar"]), axis=0)
    np.testing.assert_array_equal(total, tb.events[field][0])
    for t in fig.data:
        np.testing.assert_array_equal(arr(t.x), DAYS)


def test_timeline_rejects_unknown_topic(tb):
    with pytest.raises(ValueError, match="unknown topic"):
        timeline_figure(latent_days(tb), topic="money")


def test_source_days_rows_follow_source_order_and_values(tb):
    views = day_views(tb, qid="A1")
    fig = source_days_figure(views)
    assert isinstance(fig, go.Figure)
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    planner = bars["Planner"]
    assert planner.yaxis == "y2" and planner.marker.color == SOURCE_COLORS["planner"]
    np.testing.assert_allclose(arr(planner.y), 8.5)
    self_report = bars["Daily self-report"]
    assert self_report.yaxis == "y3"
    np.testing.assert_allclose(arr(self_report.y), tb.events["duration_h"][0] + 0.5)
    truth = [t for t in fig.data if t.name == "latent truth (L2)"]
    assert {t.yaxis for t in truth} == {"y", "y2", "y3", "y5"}  # objective has no sleep
    for t in truth:
        np.testing.assert_allclose(arr(t.y), tb.events["duration_h"][0])
    # the profile is a snapshot line over its anchor window
    profile = [t for t in fig.data if t.yaxis == "y" and t.type == "scatter"
               and t.mode == "lines"]
    assert arr(profile[0].x).tolist() == [0.5, 10.5] and arr(profile[0].y).tolist() == [7.2, 7.2]


def test_source_days_marks_unavailable_days(tb):
    fig = source_days_figure(day_views(tb, qid="A1"))
    device = next(t for t in fig.data if t.type == "bar" and t.name == "Device log")
    y = arr(device.y)
    assert np.isnan(y[[2, 6]]).all() and not np.isnan(np.delete(y, [2, 6])).any()
    marks = [t for t in fig.data if t.name == "record unavailable"]
    assert len(marks) == 1 and marks[0].yaxis == "y5"
    np.testing.assert_array_equal(arr(marks[0].x), [3, 7])
    bands = [s for s in fig.layout.shapes if s.type == "rect" and s.yref == "y5 domain"
             and s.x1 - s.x0 == 1.0 and s.fillcolor == UNAVAILABLE_FILL]
    assert sorted(s.x0 + 0.5 for s in bands) == [3, 7]
    # the objective's lost day is marked on its own row in a question that reads it
    fig = source_days_figure(day_views(tb, qid="A2"))
    marks = {t.yaxis: arr(t.x).tolist() for t in fig.data if t.name == "record unavailable"}
    assert marks == {"y4": [10.0], "y5": [3.0, 7.0]}


def test_source_days_says_when_a_source_has_no_field(tb):
    fig = source_days_figure(day_views(tb, qid="A1"))
    texts = [a.text for a in fig.layout.annotations]
    assert "no sleep records in this source" in texts


@pytest.mark.parametrize("qid", QIDS)
def test_every_question_has_a_source_view(tb, qid):
    views = day_views(tb, qid=qid)
    assert len(views.frame) == 6 * 30
    assert views.frame["source"].unique().tolist() == ["latent", *SOURCES]
    assert views.shift_day == 12 and views.anchor_end == 10
    source_days_figure(views)


def test_atom_grid_colours_match_agree_disagree_null():
    gt = np.zeros(len(QIDS), dtype=np.int8)
    atoms = np.full((len(QIDS), len(SOURCES)), -1, dtype=np.int8)
    a3 = Q_INDEX["A3"]
    atoms[a3] = [0, 1, -1, 0, -1]   # agree, disagree, null (informative), agree, n/a
    status = atom_grid_status(gt, atoms)
    assert status[a3].tolist() == ["agree", "disagree", "null", "agree", "na"]

    fig = atom_grid_figure(gt, atoms, highlight="A3")
    heat = fig.data[0]
    z = np.asarray(heat.z)
    assert z.shape == (len(QIDS), 6)
    assert (z[:, 0] == GRID_STATUS_CODES["gt"]).all()
    assert z[a3, 1:].tolist() == [GRID_STATUS_CODES[s] for s in status[a3]]
    # the colour scale sends each status code to its colour
    scale = {round(stop * 4): color for stop, color in heat.colorscale}
    assert (heat.zmin, heat.zmax) == (0, 4)
    for name, code in GRID_STATUS_CODES.items():
        assert scale[code] == STATUS_COLORS[name]
    text = np.asarray(heat.text)
    assert text[a3, 1].startswith("✓") and text[a3, 2].startswith("✗")
    assert text[a3, 3] == "∅" and text[a3, 5] == "—"
    assert "under 40 % of" in text[a3, 0]  # the answer in words, not less_than_40
    frame = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(frame) == 1 and frame[0].y0 == a3 - 0.5


def test_figures_are_svg_only(tb):
    figs = [timeline_figure(latent_days(tb), topic=t) for t in
            ("sleep", "work", "diet", "social", "exercise")]
    figs.append(source_days_figure(day_views(tb, qid="C3")))
    figs.append(atom_grid_figure(np.zeros(18), np.zeros((18, 5))))
    for fig in figs:
        assert not any(t.type.endswith("gl") for t in fig.data)


TOPICS = ("sleep", "work", "diet", "social", "exercise")


def _revalidated(fig: go.Figure) -> go.Figure:
    """The builders construct figures unvalidated (core.figures.fast): Plotly's validator
    must accept every trace and layout key they produce."""
    checked = go.Figure(fig.to_dict())
    assert len(checked.data) == len(fig.data)
    return checked


@pytest.mark.parametrize("topic", TOPICS)
@pytest.mark.parametrize("shift_day", [None, 12])
def test_timeline_figures_are_valid_plotly(tb, topic, shift_day):
    fig = timeline_figure(latent_days(tb), topic=topic, shift_day=shift_day, threshold=7.0,
                          threshold_label="threshold")
    checked = _revalidated(fig)
    assert checked.layout.xaxis.range == (0.5, 30.5)
    assert checked.layout.height == (420 if topic == "sleep" else 300)
    assert bool(shift_day) == any(t.name == "habits shift (day 12)" for t in checked.data)


def test_timeline_sleep_keeps_make_subplots_grid(tb):
    fig = _revalidated(timeline_figure(latent_days(tb), topic="sleep"))
    assert [a.text for a in fig.layout.annotations[:2]] == ["Bedtime", "Sleep duration (h)"]
    assert fig.layout.xaxis.matches == "x2" and fig.layout.xaxis.showticklabels is False
    assert fig.layout.xaxis2.title.text.startswith("day")
    np.testing.assert_allclose(fig.layout.yaxis.domain, [0.56, 1.0])
    np.testing.assert_allclose(fig.layout.yaxis2.domain, [0.0, 0.44])


@pytest.mark.parametrize("qid", QIDS)
def test_source_days_figures_are_valid_plotly(tb, qid):
    fig = _revalidated(source_days_figure(day_views(tb, qid=qid)))
    assert fig.layout.barmode == "overlay" and fig.layout.height == 760
    assert fig.layout.xaxis5.title.text == "day"
    assert all(getattr(fig.layout, f"xaxis{r}").matches == "x5" for r in ("", 2, 3, 4))


@pytest.mark.parametrize("highlight", [None, "A3"])
def test_atom_grid_figure_is_valid_plotly(highlight):
    fig = _revalidated(atom_grid_figure(np.zeros(18), np.zeros((18, 5)), highlight=highlight))
    assert len(fig.layout.shapes) == (0 if highlight is None else 1)
