"""core.urlparams: every link value is valid or refused with one notice, never echoed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.urlparams import (
    MAX_VALUE_LENGTH,
    ChoiceParam,
    FlagParam,
    NumberParam,
    format_value,
    parse_query,
)

BINS = NumberParam("bins", "number of bins", 2, 30, 1, 10, integer=True)
PREV = NumberParam("prev", "prevalence", 0.0, 1.0, 0.01, 0.78)
BIAS = NumberParam("bias", "bias scale", 0.0, 3.0, 0.25, 1.0)
LABEL = ChoiceParam("label", "label source", ("Y", "Z"), default="Y")
SEED = ChoiceParam("seed", "seed", (20260321, 20260322), default=20260321)
METHOD = ChoiceParam("method", "method", ("dsnbf_skip", "nbf_skip"), default="dsnbf_skip",
                     tokens=("DSNBF+SKIP", "NBF+SKIP"))
RULES = ChoiceParam("rules", "rule", ("native", "eg"), default=("native", "eg"), multi=True)
BANDS = FlagParam("bands", "bands", True)
SPECS = [BINS, PREV, BIAS, LABEL, SEED, METHOD, RULES, BANDS]


@pytest.mark.parametrize(("spec", "raw", "expected"), [
    (BINS, ["12"], 12), (BINS, ["12.4"], 12), (BINS, ["12.6"], 13), (BINS, [" 30 "], 30),
    (BINS, ["2"], 2), (BINS, ["1e1"], 10),
    (PREV, ["0.333"], 0.33), (PREV, ["1"], 1.0), (PREV, ["0"], 0.0), (PREV, [".785"], 0.78),
    (BIAS, ["0.3"], 0.25), (BIAS, ["2.9"], 3.0), (BIAS, ["1.125"], 1.0),
    (LABEL, ["Z"], "Z"), (LABEL, ["z"], "Z"), (LABEL, [" Y "], "Y"),
    (SEED, ["20260322"], 20260322),
    (METHOD, ["nbf+skip"], "nbf_skip"), (METHOD, ["DSNBF+SKIP"], "dsnbf_skip"),
    (RULES, ["eg"], ("eg",)), (RULES, ["eg", "native"], ("native", "eg")),
    (RULES, ["eg", "eg"], ("eg",)),
    (BANDS, ["false"], False), (BANDS, ["1"], True), (BANDS, ["Off"], False),
])
def test_valid_values_parse_to_grid_or_option_values(spec, raw, expected):
    parsed = parse_query({spec.key: raw}, [spec])
    assert parsed.values == {spec.key: expected}
    assert parsed.notices == () and parsed.refused == ()
    assert type(parsed.values[spec.key]) is type(expected)


@pytest.mark.parametrize(("spec", "raw"), [
    (BINS, [""]), (BINS, ["ten"]), (BINS, ["1"]), (BINS, ["31"]), (BINS, ["1e9"]),
    (BINS, ["nan"]), (BINS, ["inf"]), (BINS, ["-inf"]), (BINS, ["12", "13"]),
    (PREV, ["1.01"]), (PREV, ["-0.01"]), (PREV, ["0x1"]), (PREV, ["½"]),
    (LABEL, [""]), (LABEL, ["W"]), (LABEL, ["Y", "Z"]), (LABEL, ["Y", "Y"]),
    (SEED, ["1"]), (SEED, ["20260321.0"]),
    (METHOD, ["dsnbf_skip"]), (METHOD, ["![x](http://evil.example/a.png)"]),
    (RULES, [""]), (RULES, ["eg", "XX"]), (RULES, ["native"] * 65),
    (BANDS, ["maybe"]), (BANDS, [""]), (BANDS, ["true", "false"]),
    (LABEL, ["Y" * (MAX_VALUE_LENGTH + 1)]),
])
def test_invalid_values_give_the_default_and_one_notice(spec, raw):
    parsed = parse_query({spec.key: raw}, [spec])
    assert parsed.values == {}
    assert parsed.refused == (spec.key,)
    assert len(parsed.notices) == 1
    assert spec.label in parsed.notices[0] and "the default is shown" in parsed.notices[0]


def test_absent_parameters_give_nothing_and_unknown_ones_are_counted():
    parsed = parse_query({"other": ["1"], "bins": ["5"]}, SPECS, ignore=("theta",))
    assert parsed.values == {"bins": 5} and parsed.notices == () and parsed.unknown == 1
    assert parse_query({"theta": ["0.5"]}, SPECS, ignore=("theta",)).unknown == 0
    assert parse_query({"bins": "7"}, [BINS]).values == {"bins": 7}  # a plain string


@pytest.mark.parametrize(("make", "message"), [
    (lambda: NumberParam("k", "k", 1, 1, 1, 1), "lo < hi"),
    (lambda: NumberParam("k", "k", 0, 1, 0, 0), "step"),
    (lambda: NumberParam("k", "k", 0, 1, 0.25, 0.3), "grid"),
    (lambda: ChoiceParam("k", "k", (), default=None), "one option"),
    (lambda: ChoiceParam("k", "k", ("a",), default="b"), "not an option"),
    (lambda: ChoiceParam("k", "k", ("a", "b"), default="a", tokens=("x", "X")), "differ"),
    (lambda: ChoiceParam("k", "k", ("a", "b"), default="a", tokens=("x",)), "tokens"),
    (lambda: parse_query({}, [BINS, BINS]), "duplicate"),
])
def test_bad_specs_are_a_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


TEXT = st.text(max_size=300)
RAW = st.dictionaries(st.sampled_from([s.key for s in SPECS] + ["zzz", ""]),
                      st.lists(TEXT, min_size=1, max_size=4), max_size=10)


def _valid(spec, value) -> bool:
    if isinstance(spec, NumberParam):
        k = (value - spec.lo) / spec.step
        return spec.lo <= value <= spec.hi and math.isclose(k, round(k), abs_tol=1e-6)
    if isinstance(spec, FlagParam):
        return isinstance(value, bool)
    if spec.multi:
        return all(v in spec.options for v in value) and len(set(value)) == len(value)
    return value in spec.options


@settings(max_examples=300, deadline=None)
@given(RAW)
def test_anything_a_link_says_parses_to_valid_values_and_quiet_notices(raw):
    parsed = parse_query(raw, SPECS)
    for spec in SPECS:
        if spec.key in parsed.values:
            assert _valid(spec, parsed.values[spec.key])
            # a valid value round-trips through its URL text
            again = parse_query({spec.key: format_value(spec, parsed.values[spec.key])},
                                [spec])
            assert again.values[spec.key] == parsed.values[spec.key]
        if spec.key not in raw:
            assert spec.key not in parsed.values and spec.key not in parsed.refused
    assert len(parsed.notices) == len(parsed.refused)
    words = {w for values in raw.values() for v in values for w in v.split() if len(w) > 3}
    for line in parsed.notices:
        text = line.replace("the default is shown", "")
        leaked = [w for w in words if w in text and not any(w in s.label or w in s.expected
                                                             for s in SPECS)]
        assert not leaked, (line, leaked)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=10))
def test_numbers_inside_the_range_snap_to_the_nearest_grid_point(v):
    parsed = parse_query({"bias": [repr(v)]}, [BIAS])
    if -1e-9 <= v <= 3.0 + 1e-9:  # the parser's tolerance for decimal noise
        got = parsed.values["bias"]
        assert abs(got - v) <= 0.125 + 1e-9 and _valid(BIAS, got)
    else:
        assert parsed.refused == ("bias",)
