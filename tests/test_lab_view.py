"""The Bias lab's view objects (``core.evaluation.lab_view``)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core.evaluation.lab import run_lab
from core.evaluation.lab_view import (
    LAB_HEADLINE_METHODS,
    Mover,
    effective_mix,
    grid_view,
    lab_view,
)
from core.evaluation.paper import GRID_METHODS, PAPER_GRID_DSNBF_WINS, PAPER_GRID_TAU
from core.testbed.questions import SOURCE_LABELS

NOMINAL = dict(bias_scale=1.0, dropout_scale=1.0, mix=(1.0, 1.0, 1.0))


@pytest.fixture(scope="module")
def results():
    kw = dict(seed=5, personas_per_difficulty=8, n_boot=20, keep_models=False)
    return run_lab(**kw), run_lab(**kw, bias_scale=3.0, dropout_scale=2.0)


def view(nominal, variant, **setting):
    return lab_view(nominal, variant, seed=5, personas_per_difficulty=8, **setting)


def test_at_nominal_nothing_moves_and_there_is_no_mover(results):
    nominal, _ = results
    v = view(nominal, nominal, **NOMINAL)
    assert v.nominal and v.mover is None
    assert [h.change for h in v.headlines] == [0.0] * len(LAB_HEADLINE_METHODS)
    assert all(math.copysign(1, h.change) == 1 for h in v.headlines)  # never −0.0
    assert (v.board.shown["change"] == 0).all()
    assert "nominal setting" in v.story
    assert v.n_generated == 24 and v.n_test == nominal.n_test


def test_a_variant_states_its_changes_and_its_mover(results):
    nominal, variant = results
    v = view(nominal, variant, bias_scale=3.0, dropout_scale=2.0, mix=(1.0, 1.0, 1.0))
    assert not v.nominal and isinstance(v.mover, Mover)
    nom = nominal.leaderboard.set_index("method")["accuracy"]
    var = variant.leaderboard.set_index("method")
    for h in v.headlines:
        assert h.accuracy == var.loc[h.method, "accuracy"]
        assert h.change == round(var.loc[h.method, "accuracy"] - nom[h.method], 1)
    ranked = variant.leaderboard[variant.leaderboard["method"] != "source_reachability"]
    assert v.best_accuracy == ranked["accuracy"].max()
    assert v.best_method != "source_reachability"
    assert v.mover.source_label == SOURCE_LABELS[v.mover.source]
    assert v.mover.climbed == v.mover.rank_before - v.mover.rank_after
    assert "bias scale at 3×" in v.story
    assert v.setting == "Seed 5 · bias 3× · dropout 2× · mix 1 / 1 / 1"
    assert v.board.shown["accuracy"].is_monotonic_decreasing
    assert set(v.board.full.columns) >= {"ci_low", "ci_high", "selective_accuracy"}
    assert v.board.stem == "lab_5_b3_d2" and v.sources.stem == "lab_sources_5_b3_d2"
    assert v.frames["nominal_board"] is nominal.leaderboard


@pytest.mark.parametrize("climbed, text", [(2, "+2 places"), (-1, "-1 place"), (0, None)])
def test_mover_places(climbed, text):
    m = Mover("nbf", "NBF", 5, 5 - climbed, "planner", "Planner", 0.0, 0.0)
    assert m.places == text


@pytest.mark.parametrize("weights, mix, fell_back", [
    ((1, 1, 1), (1.0, 1.0, 1.0), False),
    ((0.5, 1, 0.25), (0.5, 1.0, 0.25), False),
    ((0.75, 0.25, 0), (1.0, 0.3333, 0.0), False),
    ((0, 0, 0), (1.0, 1.0, 1.0), True),
])
def test_effective_mix(weights, mix, fell_back):
    assert effective_mix(weights) == (mix, fell_back)


@pytest.mark.parametrize("weights", [(1, 1), (-1, 1, 1), (float("nan"), 1, 1)])
def test_effective_mix_refuses_bad_weights(weights):
    with pytest.raises(ValueError, match="three finite weights"):
        effective_mix(weights)


def test_grid_view_carries_the_paper_values():
    grid = {"tau_mean": 0.61, "dsnbf_wins": 7, "cells": 9, "mean": pd.DataFrame(),
            "table": [{"bias": 1.0, "dropout": 1.0, "seed": 5, "method": "nbf",
                       "accuracy": 80.0}]}
    g = grid_view(grid, seed=5)
    assert (g.tau_mean, g.dsnbf_wins, g.cells) == (0.61, 7, 9)
    assert (g.paper_tau, g.paper_wins) == (PAPER_GRID_TAU, PAPER_GRID_DSNBF_WINS)
    assert g.methods == GRID_METHODS and "dsnbf" not in g.rivals
    assert isinstance(g.table, pd.DataFrame) and len(g.table) == 1
