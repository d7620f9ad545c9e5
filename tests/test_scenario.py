"""Belief-store scenario generator calibrated to seed 003 Table 2 (and Tables 3–4 in shape)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.calibration.label_source import (
    brier_gap_curve,
    debiased_risk,
    label_source_decomposition,
    reference_only_platt,
    scoring_protocols,
)
from core.calibration.scenario import (
    DEFAULT_SCENARIO,
    PROVENANCE_TYPES,
    ScenarioConfig,
    generate_scenario,
    judge_columns,
    scenario_from_attrs,
    transfer_config,
)
from core.calibration.scores import auroc, brier_score


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return generate_scenario()


def _wmean(f, col):
    return float(np.average(f[col], weights=f["weight"]))


# target, tolerance (seed 003 Table 2 and §5.2)
TABLE2 = {
    "prevalence_y": (0.783, 0.02),
    "prevalence_z": (0.295, 0.02),
    "mean_native": (0.767, 0.02),
    "mean_eg": (0.392, 0.02),
    "brier_z_native": (0.446, 0.02),
    "brier_z_eg": (0.220, 0.02),
    "brier_y_native": (0.178, 0.02),
    "brier_y_eg": (0.330, 0.02),
    "auroc_native": (0.596, 0.03),
    "auroc_eg": (0.538, 0.03),
}


def _table2(f) -> dict[str, float]:
    w = f["weight"]
    return {
        "prevalence_y": _wmean(f, "y"),
        "prevalence_z": _wmean(f, "z"),
        "mean_native": _wmean(f, "native"),
        "mean_eg": _wmean(f, "eg"),
        "brier_z_native": brier_score(f["native"], f["z"], weights=w),
        "brier_z_eg": brier_score(f["eg"], f["z"], weights=w),
        "brier_y_native": brier_score(f["native"], f["y"], weights=w),
        "brier_y_eg": brier_score(f["eg"], f["y"], weights=w),
        "auroc_native": auroc(f["native"], f["y"], weights=w),
        "auroc_eg": auroc(f["eg"], f["y"], weights=w),
    }


def test_default_shape(frame):
    assert len(frame) == 259
    assert frame["store"].nunique() == 30 and frame["scenario"].nunique() == 6
    assert (frame["cluster"] == frame["store"]).all()
    assert judge_columns(frame) == ["q_1", "q_2"]
    assert frame.groupby("store")["scenario"].nunique().max() == 1
    assert set(frame["provenance"].cat.categories) == set(PROVENANCE_TYPES)
    assert frame["weight"].mean() == pytest.approx(1.0)
    for col in ("native", "eg", "q_1", "q_2"):
        assert frame[col].between(0.01, 0.99).all()
    assert set(frame["y"].unique()) <= {0, 1} and set(frame["z"].unique()) <= {0, 1}


@pytest.mark.parametrize("name", list(TABLE2))
def test_default_hits_table2(frame, name):
    target, tol = TABLE2[name]
    assert abs(_table2(frame)[name] - target) <= tol


def test_reversal_in_all_six_scenarios(frame):
    d = label_source_decomposition(frame["eg"], frame["native"], frame["y"], frame["z"],
                                   weights=frame["weight"])
    assert d.gap_z == pytest.approx(-0.227, abs=0.02)  # seed: -.227 under Z
    assert d.gap_y == pytest.approx(0.152, abs=0.02)  # seed: +.152 under Y
    assert d.reverses
    for _, g in frame.groupby("scenario"):
        r = label_source_decomposition(g["eg"], g["native"], g["y"], g["z"], weights=g["weight"])
        assert r.gap_z < 0 < r.gap_y


def test_table4_shape(frame):
    d = label_source_decomposition(frame["eg"], frame["native"], frame["y"], frame["z"],
                                   weights=frame["weight"])
    assert d.t_omit == pytest.approx(-0.397, abs=0.03)
    assert d.t_fp == pytest.approx(0.019, abs=0.01)
    assert d.q_star == pytest.approx(0.570, abs=0.03)
    unmatched = frame["z"] == 0
    pi = np.average(frame["y"][unmatched], weights=frame["weight"][unmatched])
    assert pi == pytest.approx(0.73, abs=0.02)  # "73% of reference-unmatched beliefs are true"
    # Eq. 6 with the audited pi recovers sign and rough magnitude (seed: +.161)
    gap = (debiased_risk(frame["eg"], frame["z"], pi, weights=frame["weight"])
           - debiased_risk(frame["native"], frame["z"], pi, weights=frame["weight"]))
    assert gap == pytest.approx(0.161, abs=0.02)


def test_table3_protocol_selection(frame):
    t = scoring_protocols(frame["native"], frame["eg"], frame["y"], frame["z"],
                          frame["matched"], frame["in_reference"], weights=frame["weight"])
    picks = dict(zip(t.to_frame()["protocol"], t.to_frame()["selects"], strict=True))
    assert picks == {"unmatched_as_false": "B", "matched_only": "A", "closed_world": "A",
                     "adjudicated": "A"}


def test_reference_only_platt_on_default(frame):
    r = reference_only_platt(frame["native"], frame["z"], frame["y"], weights=frame["weight"],
                             groups=frame["scenario"])
    assert r.mean_after == pytest.approx(0.294, abs=0.02)  # seed: .767 -> .294
    assert r.brier_z_after < r.brier_z_before
    assert r.brier_y_after == pytest.approx(0.408, abs=0.03)  # seed: .178 -> .408


def test_shifted_native_crossover_example(frame):
    # seed §5.2: a tracker with mean .30 would lose to the probe under adjudication by ~.070
    w = frame["weight"]
    shifted = np.clip(frame["native"] - (_wmean(frame, "native") - 0.30), 0, 1)
    gap = brier_score(shifted, frame["y"], weights=w) - brier_score(frame["eg"], frame["y"],
                                                                     weights=w)
    assert gap == pytest.approx(0.070, abs=0.01)
    curve = brier_gap_curve(frame["native"], frame["eg"], frame["y"],
                            prevalences=np.linspace(0, 1, 11), weights=w)
    assert abs(curve.deviation) < 0.05  # weak discrimination: crossover near (a + b)/2
    assert curve.prevalences[0] == 0.0


def test_determinism_and_seed():
    a = generate_scenario(replace(DEFAULT_SCENARIO, n_items=80, n_stores=10))
    b = generate_scenario(replace(DEFAULT_SCENARIO, n_items=80, n_stores=10))
    pd.testing.assert_frame_equal(a, b)
    c = generate_scenario(replace(DEFAULT_SCENARIO, n_items=80, n_stores=10, seed=99))
    assert not np.array_equal(a["native"].to_numpy(), c["native"].to_numpy())


@pytest.mark.parametrize("seed", [0, 11, 12345])
def test_realised_rates_follow_the_config(seed):
    cfg = replace(DEFAULT_SCENARIO, seed=seed, prevalence=0.6, omission_rate=0.4,
                  false_match_rate=0.2, native_mean=0.7)
    f = generate_scenario(cfg)
    w = f["weight"].to_numpy()
    y, z = f["y"].to_numpy(), f["z"].to_numpy()
    wmax = w.max() / w.sum()
    assert np.average(y, weights=w) == pytest.approx(0.6, abs=wmax)
    assert np.average(1 - z[y == 1], weights=w[y == 1]) == pytest.approx(0.4, abs=0.02)
    assert np.average(z[y == 0], weights=w[y == 0]) == pytest.approx(0.2, abs=0.03)
    assert _wmean(f, "native") == pytest.approx(0.7, abs=1e-9)


def test_eg_is_the_frozen_source_prior(frame):
    prior = dict(zip(PROVENANCE_TYPES, DEFAULT_SCENARIO.source_prior, strict=True))
    expect = np.clip(frame["provenance"].map(prior).astype(float) * frame["multiplier"],
                     0.01, 0.99)
    np.testing.assert_allclose(frame["eg"], expect)
    assert DEFAULT_SCENARIO.source_prior == (0.20, 0.35, 0.55)


def test_protocol_flags_are_consistent(frame):
    y, z = frame["y"] == 1, frame["z"] == 1
    m, r = frame["matched"], frame["in_reference"]
    assert (m[z]).all()  # every reference positive was matched
    assert (r[y & z]).all() and not (r[~y & z]).any()  # false matches are not in the reference
    assert (m | ~r | (y & ~z)).all()


def test_judges_follow_quality():
    def corr(q):
        f = generate_scenario(replace(DEFAULT_SCENARIO, judge_quality=q, n_judges=3))
        return np.corrcoef(f[["q_1", "q_2", "q_3"]].mean(axis=1), f["y"])[0, 1]

    assert corr(0.0) < 0.3 < corr(0.8)
    none = generate_scenario(replace(DEFAULT_SCENARIO, n_judges=0))
    assert judge_columns(none) == []


def test_config_round_trip_and_transfer():
    f = generate_scenario()
    assert scenario_from_attrs(f) == DEFAULT_SCENARIO
    t = transfer_config(DEFAULT_SCENARIO)
    assert t.seed != DEFAULT_SCENARIO.seed and t.omission_rate > DEFAULT_SCENARIO.omission_rate
    assert scenario_from_attrs(pd.DataFrame()) is None


@pytest.mark.parametrize("kw", [
    {"n_items": 5, "n_stores": 10},
    {"prevalence": 1.2},
    {"provenance_mix": (0.5, 0.5, 0.5)},
    {"judge_quality": (0.1, 0.2, 0.3)},
    {"judge_quality": 1.5},
    {"source_prior": (0.0, 0.35, 0.55)},
    {"native_mean": 0.999},
    {"clip_lo": 0.5, "clip_hi": 0.4},
])
def test_config_validation(kw):
    with pytest.raises(ValueError):
        ScenarioConfig(**kw)
