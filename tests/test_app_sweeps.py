"""AppTests of the Bias lab's "Across many testbeds" section (issue 23): the shipped sweeps,
a sweep store named by ``$ARBITER_SWEEPS``, links to a view, and every bad input as one
plain line."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.sweep import catalog as C
from core.sweep.engine import run_sweep
from core.sweep.grid import parse_grid
from tests.app_support import plain
from tests.test_app_eval_pages import LAB, open_page


@pytest.fixture
def lab_env(app_env, monkeypatch):
    monkeypatch.setenv("ARBITER_LAB_PERSONAS", "12")
    monkeypatch.delenv(C.STORE_ENV, raising=False)
    return app_env


def open_lab(params: dict | None = None) -> AppTest:
    return open_page(LAB, params)


def sweep_charts(at) -> dict[str, dict]:
    """The section's figures by widget key."""
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        key = c.proto.id
        for name in ("sw_rank", "sw_boundary", "sw_surface"):
            if name in key:
                out[name] = spec
    return out


def shape(z) -> tuple[int, ...]:
    """Rows and columns of a heatmap's z (Plotly sends arrays as typed binary)."""
    if isinstance(z, dict):
        return tuple(int(n) for n in z["shape"].split(","))
    return (len(z), len(z[0]))


def captions(at) -> str:
    return "\n".join(plain(c.value) for c in at.caption)


def test_the_section_shows_a_shipped_sweep_with_its_three_views(lab_env):
    at = open_lab()
    assert not at.exception and not at.error and not at.warning
    box = at.selectbox(key="sw")
    assert box.value == "shipped:bias-by-dropout"
    assert box.options == ["bias-by-dropout · 128 cells", "bias-by-seed · 200 cells"]
    figs = sweep_charts(at)
    assert set(figs) == {"sw_rank", "sw_boundary", "sw_surface"}
    assert figs["sw_rank"]["data"][0]["type"] == "heatmap"
    assert shape(figs["sw_rank"]["data"][0]["z"]) == (16, 16)  # 4 bias × 4 dropout settings
    assert shape(figs["sw_surface"]["data"][0]["z"]) == (4, 4)  # dropout down, bias across
    text = captions(at) + "\n".join(plain(m.value) for m in at.markdown)
    assert "128 cells" in text and "8 seeds" in text and "Kendall's τ-b is" in text
    assert "DSNBF beats MV at every setting" in plain(text)
    assert at.selectbox(key="sw_x").value == "bias_scale"
    assert at.selectbox(key="sw_y").value == "dropout_scale"


def test_a_link_opens_the_200_cell_sweep_on_selective_accuracy(lab_env):
    at = open_lab({"sw": "bias-by-seed", "sw_metric": "selective", "sw_method": "nbf_skip",
                   "sw_y": "seed"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="sw").value == "shipped:bias-by-seed"
    assert at.session_state["sw_metric"] == "selective_accuracy"
    assert at.selectbox(key="sw_method").value == "nbf_skip"
    # the one-knob sweep offers bias scale across and the seeds down
    assert at.selectbox(key="sw_x").options == ["bias scale", "seed"]
    surface = sweep_charts(at)["sw_surface"]["data"][0]
    assert shape(surface["z"]) == (50, 4)
    assert "200 cells" in captions(at)


def test_a_knob_the_sweep_does_not_vary_falls_back_quietly(lab_env):
    at = open_lab({"sw": "bias-by-seed", "sw_y": "dropout_scale"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="sw_y").value == "seed"
    assert at.query_params.get("sw_y") in (None, ["seed"], "seed")


@pytest.mark.parametrize("params, label", [
    ({"sw": "nope"}, "sweep"), ({"sw_metric": "f1"}, "metric"),
    ({"sw_method": "<b>x</b>"}, "method"), ({"sw_x": ""}, "surface knob across"),
])
def test_bad_link_values_warn_once_and_fall_back(lab_env, params, label):
    at = open_lab(params)
    assert not at.exception
    assert len(at.warning) == 1 and f"{label} was not valid" in plain(at.warning[0].value)
    assert "<b>" not in at.warning[0].value
    assert set(sweep_charts(at)) == {"sw_rank", "sw_boundary", "sw_surface"}


def test_coverage_is_not_compared_with_majority_vote(lab_env):
    at = open_lab({"sw_metric": "coverage"})
    assert not at.exception
    assert any("always answers" in plain(i.value) for i in at.info)
    assert set(sweep_charts(at)) == {"sw_rank", "sw_surface"}


def test_a_broken_sweep_store_is_one_line_and_the_shipped_sweeps_stay(lab_env, monkeypatch,
                                                                     tmp_path):
    bad = tmp_path / "broken.duckdb"
    bad.write_text("garbage\n")
    monkeypatch.setenv(C.STORE_ENV, str(bad))
    at = open_lab()
    assert not at.exception
    assert len(at.warning) == 1 and "cannot open the sweep store" in at.warning[0].value
    assert len(at.selectbox(key="sw").options) == 2


def test_a_users_store_sweep_is_shown_and_its_text_stays_plain(lab_env, monkeypatch, tmp_path):
    db = tmp_path / "mine.duckdb"
    grid = parse_grid({"name": "mine", "description": "**bold** <img src=x onerror=alert(1)>",
                       "axes": {"seed": [3, 4], "dropout_scale": [0.5, 2.0],
                                "personas_per_difficulty": 8,
                                "methods": ["majority_vote", "nbf", "abf"]}})
    run_sweep(grid, store=db)
    monkeypatch.setenv(C.STORE_ENV, str(db))
    at = open_lab({"sw": f"{grid.sweep_id}"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="sw").value == f"store:{grid.sweep_id}"
    caption = next(c.value for c in at.caption if "bold" in c.value)
    assert "\\*\\*bold\\*\\*" in caption and "\\<img" in caption
    # three methods: too few of the paper's seven, so every method in every cell is ranked;
    # the agreement is between its two settings (dropout 0.5 and 2)
    figs = sweep_charts(at)
    assert figs["sw_rank"]["data"][0]["x"] == ["0.5", "2"]
    assert "7 methods" not in "\n".join(m.value for m in at.markdown)
    assert "NBF beats MV" in "\n".join(m.value for m in at.markdown)
