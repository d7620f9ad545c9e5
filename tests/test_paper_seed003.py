"""Seed 003's reference numbers (``core.calibration.paper``) agree with each other.

Transcription checks: the numbers of one table that the seed derives from one another must
agree, and the reversal the seed reports must be in them.
"""

from __future__ import annotations

import pytest

from core.calibration.paper import TABLE2, TABLE3, TABLE5_A, TABLE5_B


def test_table2_holds_the_reversal():
    brier = {key: value[0] for key, value in TABLE2.items()}
    assert brier[("eg", "z")] < brier[("native", "z")]  # the reference prefers EG
    assert brier[("native", "y")] < brier[("eg", "y")]  # truth prefers native
    # the truth gap the pilot pages call Δ_Y = R(EG) − R(native) is positive
    assert brier[("eg", "y")] - brier[("native", "y")] == pytest.approx(0.152)


def test_table3_selects_eg_only_under_unmatched_as_false():
    picks = {protocol: rule for protocol, (_, rule) in TABLE3.items()}
    assert picks.pop("unmatched_as_false") == "EG"
    assert set(picks.values()) == {"native"}


def test_table5_width_reduction_is_one_minus_the_width_ratio():
    human, tri = TABLE5_A["mean_width"]
    assert 1 - tri / human == pytest.approx(TABLE5_A["width_reduction"], abs=5e-4)
    assert TABLE5_A["rmse"][1] < TABLE5_A["rmse"][0]


def test_table5_panel_b_orders_the_maps_as_the_seed_argues():
    b = TABLE5_B
    assert b["ref_zplatt"] > b["ref_raw"]  # Platt on the reference alone makes it worse
    assert b["full_y"] <= b["trisource"] < b["ref_raw"]  # the repair nearly reaches full Y
