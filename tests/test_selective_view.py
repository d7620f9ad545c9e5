"""The Selective QA page's result objects (core.evaluation.selective_view)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation.paper import PAPER_SELECTIVE
from core.evaluation.run import run_testbed
from core.evaluation.selective import SKIP_METHODS, skip_rule, sweep, threshold_metrics
from core.evaluation.selective_view import (
    GAP_TO_EXPLAIN,
    MEASURES,
    ThresholdChoice,
    selective_view,
    threshold_choice,
)
from core.figures.selective import threshold_figure
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.urlparams import NumberParam

SMALL = TestbedConfig(seeds=(9, 10, 11), personas_per_difficulty=24)


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(SMALL))


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_threshold_choice_lists_each_seed_and_snaps_the_median(runs, method):
    choice = threshold_choice(runs, method)
    assert choice.calibrated == tuple(float(skip_rule(r, method).calibrated) for r in runs)
    assert choice.median == choice.snap(float(np.median(choice.calibrated)))
    grid = skip_rule(runs[0], method).grid
    assert (choice.lo, choice.hi) == (grid.min(), grid.max())
    assert np.isclose(grid, choice.median).any()


@pytest.mark.parametrize("v", [-0.3, 0.0, 0.004, 0.005, 0.2849, 0.285, 0.5, 0.999, 1.0, 1.7, 2.4])
@pytest.mark.parametrize("hi", [1.0, 2.0])
def test_snap_is_the_url_parameters_snap(v, hi):
    """The page validates θ with a NumberParam on the same grid: both must agree."""
    choice = ThresholdChoice("m", "θ", 0.0, hi, 0.01, (0.3,), 0.3)
    spec = NumberParam("theta", "threshold", 0.0, hi, 0.01, 0.3)
    assert choice.snap(v) == spec.snap(v)


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_the_median_theta_shows_no_delta_and_another_theta_does(runs, method):
    choice = threshold_choice(runs, method)
    at_default = selective_view(runs, method, theta=choice.median)
    assert at_default.is_default and at_default.deltas is None
    other = choice.snap(choice.median + 0.2 if choice.median + 0.2 <= choice.hi
                        else choice.median - 0.2)
    moved = selective_view(runs, method, theta=other)
    assert not moved.is_default
    for k in MEASURES:
        assert moved.deltas[k] == pytest.approx(moved.now[k] - at_default.now[k])
    # each seed's own θ does not move with the chosen θ
    pd.testing.assert_frame_equal(moved.at_calibrated, at_default.at_calibrated)
    assert moved.calibrated == at_default.calibrated


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_the_view_agrees_with_threshold_metrics(runs, method):
    choice = threshold_choice(runs, method)
    view = selective_view(runs, method, theta=choice.median)
    direct = threshold_metrics(runs, method, theta=choice.median)
    assert view.now["coverage"] == pytest.approx(direct["coverage"].mean())
    assert view.points["theta"][0] == pytest.approx(direct["answered"].sum()
                                                    / direct["n"].sum())
    assert list(view.per_seed["seed"]) == [r.seed for r in runs]


@pytest.mark.parametrize("method", ["dsnbf_skip", "abf_skip"])
def test_coverage_falls_as_theta_rises(runs, method):
    choice = threshold_choice(runs, method)
    thetas = np.linspace(choice.lo, choice.hi, 7)
    cov = [selective_view(runs, method, theta=t).now["coverage"] for t in thetas]
    assert all(b <= a + 1e-9 for a, b in zip(cov, cov[1:], strict=False))


def test_theta_outside_the_grid_is_refused(runs):
    with pytest.raises(ValueError, match=r"theta must lie in \[0.0, 1.0\] for dsnbf_skip"):
        selective_view(runs, "dsnbf_skip", theta=1.5)


@pytest.mark.parametrize("method", SKIP_METHODS)
def test_the_coverage_gap_is_explained_by_the_seeds_past_the_matching_theta(runs, method):
    sw = sweep(runs, method)
    choice = threshold_choice(runs, method)
    view = selective_view(runs, method, theta=choice.median, sweep=sw)
    paper = PAPER_SELECTIVE.get(method)
    far = paper is not None and abs(view.calibrated["coverage"] - paper[1]) >= GAP_TO_EXPLAIN
    assert (view.gap is not None) == far
    assert selective_view(runs, method, theta=choice.median).gap is None  # no sweep, no gap
    if view.gap is None:
        return
    g = view.gap
    assert g.ours == view.calibrated["coverage"] and g.paper == paper[1]
    assert (g.theta_low, g.theta_high) == (min(choice.calibrated), max(choice.calibrated))
    nearest = np.abs(sw["coverage"] - paper[1]).min()
    at_match = sw.loc[np.isclose(sw["theta"], g.theta_matching), "coverage"].iloc[0]
    assert abs(at_match - paper[1]) == pytest.approx(nearest)
    assert g.side == ("below" if g.ours > g.paper else "above")
    past = [c for c in choice.calibrated
            if (c < g.theta_matching if g.side == "below" else c > g.theta_matching)]
    assert g.seeds_past == len(past) and g.n_seeds == len(runs)


# ---------------------------------------------------------------- the figure's labels
SWEEP = pd.DataFrame({"theta": np.round(np.arange(0, 101) / 100, 2),
                      "coverage": np.linspace(100, 20, 101),
                      "selective_accuracy": np.linspace(82, 97, 101),
                      "f05": np.linspace(83, 70, 101)})


@pytest.mark.parametrize("theta, calibrated", [
    (0.29, [0.45, 0.19, 0.21, 0.37]),   # the default store's DSNBF+SKIP
    (0.19, [0.19, 0.21]), (0.0, [0.02, 0.5]), (1.0, [0.97, 0.99]), (0.6, [0.95])])
def test_no_label_sits_on_a_vertical_line(theta, calibrated):
    fig = threshold_figure(SWEEP, theta=theta, calibrated=calibrated, forced=82.0)
    vertical = [s for s in fig.layout.shapes if s.xref == "x"]
    top = max(s.y1 for s in vertical)
    assert sorted({s.x0 for s in vertical}) == sorted({theta, *calibrated})
    for a in fig.layout.annotations:
        if a.xref == "x":  # θ's and the dashed lines' labels: above every vertical line
            assert a.y > top + 3 and a.y <= fig.layout.yaxis.range[1] - 3
        else:  # the forced line's label: where no vertical line falls in its width
            assert a.xref == "x domain" and 0 <= a.x <= 1
            x0 = a.x - 0.32 if a.xanchor == "right" else a.x  # SWEEP's θ runs over [0, 1]
            assert not any(x0 <= s.x0 <= x0 + 0.32 for s in vertical) or a.x in (0, 1)
    assert max(fig.layout.yaxis.tickvals) == 100
    labels = [a for a in fig.layout.annotations if a.xref == "x"]
    assert len({a.y for a in labels}) == len(labels)  # one row each: they cannot collide


def test_the_forced_label_moves_away_from_lines_at_the_right():
    fig = threshold_figure(SWEEP, theta=0.9, calibrated=[0.85, 0.95], forced=82.0)
    note = next(a for a in fig.layout.annotations if a.xref == "x domain")
    # left of the lines, and not at the left end, where the curves start at 82-83 %
    assert note.xanchor == "left" and 0 < note.x and note.x + 0.32 <= 0.85 + 1e-9
    fig = threshold_figure(SWEEP, theta=0.2, calibrated=[0.1, 0.3], forced=82.0)
    note = next(a for a in fig.layout.annotations if a.xref == "x domain")
    assert (note.x, note.xanchor) == (1, "right")
