"""The named seed-003 scenarios: each one moves what its description says it moves."""

from __future__ import annotations

import re

import pytest

from core.calibration.reversal_view import reversal_view
from core.calibration.scenario import DEFAULT_SCENARIO, ScenarioConfig, generate_scenario
from core.calibration.scenarios import SCENARIOS, scenario_named


def view(name):
    f = generate_scenario(scenario_named(name))
    return reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("native", "EG"),
                         unit="beliefs", weights=f["weight"])


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_entry_is_a_valid_named_config(name):
    entry = SCENARIOS[name]
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", name) and entry.name == name
    assert isinstance(entry.config, ScenarioConfig) and entry.teaches.endswith(".")


def test_default_is_seed_003s_table_2_world():
    assert scenario_named("default") is DEFAULT_SCENARIO
    assert view("default").reverses


@pytest.mark.parametrize("name, reverses, z_equals_y", [
    ("default", True, False),
    ("transfer", True, False),
    ("complete-reference", False, True),
    ("omission-at-random", True, False),
    ("sharper-native", True, False),
])
def test_what_each_scenario_does_to_the_ranking(name, reverses, z_equals_y):
    v = view(name)
    assert v.reverses is reverses
    assert (abs(v.prevalence_z - v.prevalence_y) < 1e-12) is z_equals_y


def test_sharper_native_wins_by_more_under_the_truth():
    assert view("sharper-native").gap_y > view("default").gap_y > 0


def test_unknown_names_list_the_registered_ones():
    with pytest.raises(ValueError, match="unknown scenario 'nope'; choose one of default, "):
        scenario_named("nope")
