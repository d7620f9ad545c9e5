"""``core.frozen.FrozenDict``: read-only, its own copy, and still a dict for JSON and pickle."""

from __future__ import annotations

import copy
import json
import pickle

import pandas as pd
import pytest

from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario, scenario_from_attrs
from core.frozen import FrozenDict


@pytest.mark.parametrize("change", [
    lambda d: d.__setitem__("a", 2),
    lambda d: d.__delitem__("a"),
    lambda d: d.update(b=1),
    lambda d: d.setdefault("b", 1),
    lambda d: d.pop("a"),
    lambda d: d.popitem(),
    lambda d: d.clear(),
    lambda d: d.__ior__({"b": 1}),
])
def test_every_change_is_refused(change):
    d = FrozenDict({"a": 1})
    with pytest.raises(TypeError, match="cannot be changed"):
        change(d)
    assert d == {"a": 1}


@pytest.mark.parametrize("value", [[1, 2], {"x": 1}, {1, 2}, (1, [2])])
def test_mutable_values_are_refused(value):
    with pytest.raises(TypeError, match="must be immutable"):
        FrozenDict({"k": value})


def test_copies_are_the_object_and_round_trips_keep_the_contents():
    d = FrozenDict({"a": 1.5, "b": ("x", (1, 2)), "c": None})
    assert copy.copy(d) is d and copy.deepcopy(d) is d
    back = pickle.loads(pickle.dumps(d))
    assert isinstance(back, FrozenDict) and back == d
    assert json.loads(json.dumps(d)) == {"a": 1.5, "b": ["x", [1, 2]], "c": None}
    assert hash(d) == hash(FrozenDict(dict(d)))


def test_a_scenario_frame_carries_its_config_cheaply(tmp_path):
    frame = generate_scenario(DEFAULT_SCENARIO)
    attrs = frame.attrs["scenario_config"]
    assert isinstance(attrs, FrozenDict)
    # derived frames share the one object instead of deep-copying it
    assert frame[frame["y"] == 1].attrs["scenario_config"] is attrs
    assert scenario_from_attrs(frame) == DEFAULT_SCENARIO
    # pandas writes attrs into Parquet metadata as JSON; the config survives the round trip
    path = tmp_path / "s.parquet"
    frame.to_parquet(path)
    assert scenario_from_attrs(pd.read_parquet(path)) == DEFAULT_SCENARIO
