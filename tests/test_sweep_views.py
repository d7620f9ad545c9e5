"""Views of a sweep's results table (core/sweep/views.py) on hand-made tables with
closed-form answers, and their figures (core/figures/sweep.py; colours in
tests/test_palette_contrast.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from core.figures.sweep import (
    accuracy_surface_figure,
    majority_boundary_figure,
    rank_stability_figure,
)
from core.sweep.views import accuracy_surface, majority_boundary, rank_stability

#: A made-up sweep: 2 seeds × bias {0.5, 1, 2, 4} × dropout {1, 2}; majority vote 60 %,
#: NBF 70 − 5·bias (ties majority vote at bias 2), DSNBF 80 − 10·bias + seed − dropout.
SEEDS, BIAS, DROPOUT = (1, 2), (0.5, 1.0, 2.0, 4.0), (1.0, 2.0)


def hand_table() -> pd.DataFrame:
    rows = []
    for pos, (seed, b, d) in enumerate(itertools.product(SEEDS, BIAS, DROPOUT)):
        acc = {"majority_vote": 60.0, "nbf": 70 - 5 * b, "dsnbf": 80 - 10 * b + seed - d}
        for m, v in acc.items():
            rows.append({"position": pos, "cell_id": f"c{pos}", "seed": seed,
                         "personas_per_difficulty": 8, "bias_scale": b, "dropout_scale": d,
                         "fit_bias_scale": np.nan, "fit_dropout_scale": np.nan,
                         "difficulty_mix": "1:1:1", "train_size": pd.NA, "train_draw": 0,
                         "noise": "none", "bootstrap": 0, "method": m,
                         "forced_accuracy": v, "selective_accuracy": v, "coverage": 100.0})
    return pd.DataFrame(rows).astype({"train_size": "Int64"})


def ranking_table(rows: list[list[float]]) -> pd.DataFrame:
    methods = ["a", "b", "c", "d"][:len(rows[0])]
    return pd.DataFrame([{"position": p, "method": m, "forced_accuracy": v}
                         for p, r in enumerate(rows) for m, v in zip(methods, r, strict=True)])


def test_tau_of_identical_rankings_is_1_of_reversed_is_minus_1():
    rs = rank_stability(ranking_table([[10, 20, 30, 40], [11, 25, 31, 90], [40, 30, 20, 10]]))
    assert rs.methods == ("a", "b", "c", "d") and rs.positions == (0, 1, 2)
    assert rs.tau[0, 1] == 1 and rs.tau[0, 2] == -1 and rs.tau[1, 2] == -1
    np.testing.assert_array_equal(np.diag(rs.tau), 1.0)
    assert rs.pairs["tau"].tolist() == [1.0, -1.0, -1.0]
    assert (rs.n_pairs, rs.n_undefined, rs.identical) == (3, 0, 1)
    assert rs.mean == pytest.approx(-1 / 3) and rs.min == -1 and rs.median == -1


def test_tau_is_scipys_tau_b_with_ties_and_undefined_for_a_constant_cell():
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 4, size=(6, 5)).astype(float).tolist()  # many ties
    rows.append([50.0] * 5)  # every method tied: no ranking
    t = ranking_table([r[:4] for r in rows])
    rs = rank_stability(t)
    x = np.array([r[:4] for r in rows])
    for i, j in itertools.combinations(range(len(x)), 2):
        want = kendalltau(x[i], x[j]).statistic
        if np.isnan(want):
            assert np.isnan(rs.tau[i, j])
        else:
            assert rs.tau[i, j] == pytest.approx(want, abs=1e-12)
    assert rs.n_undefined >= 6


def test_accuracy_surface_means_over_the_other_knobs_and_counts_cells():
    s = accuracy_surface(hand_table(), x="bias_scale", y="dropout_scale", method="dsnbf")
    assert s.x_values == ("0.5", "1", "2", "4") and s.y_values == ("1", "2")
    want = np.array([[80 - 10 * b + 1.5 - d for b in BIAS] for d in DROPOUT])
    np.testing.assert_allclose(s.mean, want)
    np.testing.assert_array_equal(s.n, 2)
    np.testing.assert_allclose(s.high - s.low, 1.0)  # the two seeds differ by 1
    # a point the sweep never ran is NaN with 0 cells
    t = hand_table()
    t = t[~((t["bias_scale"] == 4.0) & (t["dropout_scale"] == 2.0))]
    s = accuracy_surface(t, x="bias_scale", y="dropout_scale", method="nbf")
    assert np.isnan(s.mean[1, 3]) and s.n[1, 3] == 0 and s.mean[0, 3] == 50.0


def test_majority_boundary_finds_where_each_resolver_stops_beating_majority_vote():
    mb = majority_boundary(hand_table(), knobs=["bias_scale"])
    assert mb.knobs == ("bias_scale",)
    nbf = mb.table[mb.table["method"] == "nbf"]
    assert nbf["n_cells"].tolist() == [4] * 4 and nbf["wins"].tolist() == [4, 4, 0, 0]
    assert nbf["mean_diff"].tolist() == [7.5, 5.0, 0.0, -10.0]  # a tie does not beat
    dsnbf = mb.table[mb.table["method"] == "dsnbf"]
    # 80 − 10·b + seed − dropout − 60 at b = 2: 1 − 1, 2 − 1, 1 − 2, 2 − 2 → wins 1 of 4
    assert dsnbf["wins"].tolist() == [4, 4, 1, 0]
    assert dsnbf["beats"].tolist() == [True, True, False, False]
    s = mb.summary.set_index("method")
    assert s.loc["nbf", "first_stop"] == "bias_scale=2" and s.loc["nbf", "n_stops"] == 2
    assert s.loc["dsnbf", "stops"] == "bias_scale=2; bias_scale=4"
    # by default every knob that varies (replicates pooled): bias × dropout
    full = majority_boundary(hand_table())
    assert full.knobs == ("bias_scale", "dropout_scale") and len(full.table) == 2 * 8
    row = full.table[(full.table["method"] == "dsnbf") & (full.table["bias_scale"] == 2.0)
                     & (full.table["dropout_scale"] == 1.0)]
    assert row[["n_cells", "wins", "mean_diff"]].values.tolist() == [[2, 1, 0.5]]


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda t: rank_stability(t, metric="auc"), "metric must be one of"),
    (lambda t: rank_stability(t, methods=["nbf", "bcf"]), "'bcf' is not in every cell"),
    (lambda t: rank_stability(t[t["position"] == 0]), "at least two cells"),
    (lambda t: rank_stability(t[t["method"] == "nbf"]), "at least two methods"),
    (lambda t: rank_stability(t.iloc[:0]), "empty"),
    (lambda t: accuracy_surface(t, x="bias_scale", y="bias_scale", method="nbf"),
     "two different knobs"),
    (lambda t: accuracy_surface(t, x="bias", y="seed", method="nbf"), "knob must be one of"),
    (lambda t: accuracy_surface(t, x="bias_scale", y="seed", method="abf"),
     "no results for method 'abf'"),
    (lambda t: majority_boundary(t[t["method"] != "majority_vote"]), "baseline"),
    (lambda t: majority_boundary(t, knobs=["colour"]), "knob must be one of"),
])
def test_views_refuse_what_they_cannot_show(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call(hand_table())


def test_figures_show_each_view():
    t = hand_table()
    rs = rank_stability(t)
    fig = rank_stability_figure(rs)
    assert fig.data[0].z.shape == (16, 16) and "mean τ-b" in fig.layout.title.text
    surf = accuracy_surface_figure(accuracy_surface(t, x="bias_scale", y="dropout_scale",
                                                    method="dsnbf"))
    assert list(surf.data[0].x) == ["0.5", "1", "2", "4"] and surf.data[0].texttemplate
    mb = majority_boundary_figure(majority_boundary(t, knobs=["bias_scale"]))
    beats, stops = mb.data
    assert len(beats.x) == 4 and len(stops.x) == 4 and stops.marker.symbol == "x"


def test_views_read_a_real_sweep_table():
    from core.sweep.engine import run_sweep
    from core.sweep.grid import parse_grid

    grid = parse_grid({"name": "v", "axes": {
        "seed": [20260321, 20260322], "personas_per_difficulty": 8, "bias_scale": [0.5, 2.0],
        "methods": ["majority_vote", "nbf", "dsnbf"]}})
    table = run_sweep(grid).table
    rs = rank_stability(table)
    assert rs.positions == (0, 1, 2, 3) and rs.n_pairs == 6
    s = accuracy_surface(table, x="bias_scale", y="train_size", method="nbf")
    assert s.y_values == ("all",) and s.n.tolist() == [[2, 2]]
    mb = majority_boundary(table)
    assert mb.knobs == ("bias_scale",) and mb.table["n_cells"].tolist() == [2] * 4
