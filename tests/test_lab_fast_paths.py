"""The bias lab's cache-miss shortcuts change nothing a visitor or a caller can see.

A new bias / dropout setting regenerates one seed (reusing its knob-free layers), refits every
resolver, compares with the nominal setting (``what_broke`` on plain arrays) and draws two
figures built from dicts and two tables without a Styler. Each shortcut is checked against
the slow path it replaces.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from core.evaluation import lab as lab_mod
from core.evaluation.lab import mix_testbed, run_lab, what_broke
from core.figures.lab import lab_leaderboard_figure, source_shift_figure
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate

SEED = 20260321


@pytest.fixture(scope="module")
def results():
    """Nominal and two variants of one small seed (12 personas per class)."""
    def one(bias, dropout=1.0):
        return run_lab(seed=SEED, bias_scale=bias, dropout_scale=dropout,
                       personas_per_difficulty=12, n_boot=50)
    return one(1.0), one(2.5), one(0.5, 2.0)


def layers(tb):
    return {name: getattr(tb, name) for name in
            ("events", "profile", "planner", "self_report", "objective", "device")}


def assert_same_testbed(a, b):
    pd.testing.assert_frame_equal(a.personas, b.personas)
    pd.testing.assert_frame_equal(a.knobs, b.knobs)
    for name, fields in layers(a).items():
        for key, value in fields.items():
            assert np.array_equal(value, layers(b)[name][key], equal_nan=True), (name, key)


def test_knobs_change_only_the_source_projections():
    """§2.13: personas and events do not depend on the bias / dropout knobs."""
    cfg = TestbedConfig(seeds=(SEED,), personas_per_difficulty=12, bias_scale=1.5)
    a = generate(cfg)
    b = generate(TestbedConfig(seeds=(SEED,), personas_per_difficulty=12, dropout_scale=2.0))
    pd.testing.assert_frame_equal(a.personas, b.personas)
    for key, value in a.events.items():
        assert np.array_equal(value, b.events[key], equal_nan=True), key
    assert_same_testbed(generate(cfg), a)  # and the same config gives the same testbed


def test_equal_mix_weights_keep_the_testbed():
    tb = generate(TestbedConfig(seeds=(SEED,), personas_per_difficulty=8))
    assert mix_testbed(tb, (0.5, 0.5, 0.5)) is tb
    assert mix_testbed(tb, (1.0, 0.5, 1.0)).n < tb.n
    with pytest.raises(ValueError):
        mix_testbed(tb, (0.0, 0.0, 0.0))


def test_what_broke_on_arrays_equals_the_aligned_frames(results, monkeypatch):
    nominal, strong, other = results
    pairs = [(nominal, strong), (nominal, other), (strong, other), (nominal, nominal)]
    fast = [what_broke(a, b) for a, b in pairs]
    monkeypatch.setattr(lab_mod, "_what_broke_aligned", lambda a, b: None)
    for got, (a, b) in zip(fast, pairs, strict=True):
        want = what_broke(a, b)
        pd.testing.assert_frame_equal(got.pop("changes"), want.pop("changes"))
        assert got == want and [type(v) for v in got.values()] == [type(v) for v in
                                                                      want.values()]


def spec(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def test_lab_figures_are_valid_plotly_with_the_subplot_axes(results):
    nominal, strong, _ = results
    figs = [lab_leaderboard_figure(strong.leaderboard, nominal.leaderboard),
            lab_leaderboard_figure(strong.leaderboard, title="t"),
            source_shift_figure(nominal.sources, strong.sources, title="t")]
    for fig in figs:  # Plotly's validator accepts them and changes nothing
        assert spec(go.Figure(fig.to_dict())) == spec(fig)
    ref = make_subplots(rows=1, cols=2, shared_yaxes=True,
                        horizontal_spacing=0.06).to_dict()["layout"]
    got = figs[2].to_dict()["layout"]
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        for key, value in ref[axis].items():
            assert got[axis][key] == value, (axis, key)
    assert [t["xaxis"] for t in figs[2].to_dict()["data"]] == ["x"] * 3 + ["x2"] * 3


def test_number_table_shows_the_digits_of_table_style():
    pytest.importorskip("streamlit")
    from pages._shared.ui import number_table

    frame = pd.DataFrame({"label": ["a", "b", "c"], "acc": [82.25, 0.15, 99.96],
                          "d": [-0.04, 1.25, -2.35], "rank": [1.0, 2.0, 3.0],
                          "sel": [np.nan, 50.0, 12.34]})
    shown, config = number_table(frame, formats={"d": "{:+.1f}", "rank": "{:.0f}"},
                                 labels={"acc": "accuracy %"})
    assert list(shown.columns) == list(frame.columns)
    assert shown["label"].tolist() == ["a", "b", "c"]
    assert shown["acc"].tolist() == [82.2, 0.1, 100.0]  # Python's rounding of each value
    assert shown["d"].tolist() == [0.0, 1.2, -2.4]  # a rounded −0.0 shows as 0.0
    assert shown["sel"].tolist() == ["—", "50.0", "12.3"]  # missing values: text
    assert config["acc"]["label"] == "accuracy %"
    assert config["acc"]["type_config"]["format"] == "%.1f"
    assert config["d"]["type_config"]["format"] == "%+.1f"
    assert config["rank"]["type_config"]["format"] == "%.0f"
    assert "sel" not in config
