"""Tests of the vectorised testbed generator (the benchmark specification §2.1, §2.5–2.7, §2.13)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.testbed import vocab
from core.testbed._gen_personas import diversity_failures, draw_personas
from core.testbed.config import DEFAULT_SEEDS, TestbedConfig
from core.testbed.generate import _rng, generate
from core.testbed.schema import LAYERS, PERSONA_COLUMNS

CLASSES = vocab.DIFFICULTIES
SMALL = TestbedConfig(seeds=(20260321,), personas_per_difficulty=40)


@pytest.fixture(scope="module")
def tb():
    """The nominal 4-seed testbed (1,920 personas)."""
    return generate(TestbedConfig())


@pytest.fixture(scope="module")
def small():
    """One seed with 40 personas per class."""
    return generate(SMALL)


def _layers_equal(a, b, names) -> bool:
    return all(np.array_equal(a.layer(n)[k], b.layer(n)[k], equal_nan=a.layer(n)[k].dtype.kind
                              == "f") for n in names for k in LAYERS[n][0])


def _by_class(tb, cls):
    return (tb.personas["difficulty"] == cls).to_numpy()


# --- contract, determinism, perturbation (§2.13) ------------------------------------------------

def test_validate_and_shape(tb):
    tb.validate()
    assert tb.n == 4 * 480
    assert list(tb.personas.columns) == list(PERSONA_COLUMNS)
    assert tb.personas["seed"].tolist() == np.repeat(DEFAULT_SEEDS, 480).tolist()
    knob_cols = ["profile_anchor_end_day", "self_report_conflict_rate",
                 "self_report_underreport_bias", "self_report_overreport_bias",
                 "planner_optimism_bias", "planner_behavior_gap_rate", "device_dropout_rate",
                 "device_noise_rate", "objective_dropout_rate", "objective_noise_rate",
                 "missing_day_prob"]
    assert list(tb.knobs.columns) == knob_cols
    assert len(tb.knobs) == tb.n


def test_deterministic(small):
    again = generate(SMALL)
    pd.testing.assert_frame_equal(small.personas, again.personas)
    pd.testing.assert_frame_equal(small.knobs, again.knobs)
    assert _layers_equal(small, again, LAYERS)


def test_bias_scale_reprojects_only_biased_sources(small):
    other = generate(TestbedConfig(seeds=SMALL.seeds, personas_per_difficulty=40,
                                   bias_scale=2.0))
    pd.testing.assert_frame_equal(small.personas, other.personas)
    assert _layers_equal(small, other, ["events", "profile", "objective", "device"])
    assert not _layers_equal(small, other, ["self_report"])
    assert not _layers_equal(small, other, ["planner"])


def test_dropout_scale_reprojects_only_device_and_objective(small):
    other = generate(TestbedConfig(seeds=SMALL.seeds, personas_per_difficulty=40,
                                   dropout_scale=2.0))
    assert _layers_equal(small, other, ["events", "profile", "planner", "self_report"])
    for layer in ("device", "objective"):
        a, b = small.layer(layer)["available"], other.layer(layer)["available"]
        assert (~b).sum() > (~a).sum()
        assert not (~a & b).any()  # common random numbers: more dropout drops a superset


def test_shared_bases_give_the_same_testbeds_and_are_made_once_per_seed(small):
    """``generate(bases=)`` reuses each seed's knob-free layers across scales (issue 23's
    reproduce speed-up): every variant equals its own generation exactly."""
    bases: dict = {}
    for bias, dropout in ((1.0, 1.0), (2.0, 0.5), (0.5, 2.0)):
        config = TestbedConfig(seeds=SMALL.seeds, personas_per_difficulty=40,
                               bias_scale=bias, dropout_scale=dropout)
        shared, alone = generate(config, bases=bases), generate(config)
        pd.testing.assert_frame_equal(shared.personas, alone.personas)
        pd.testing.assert_frame_equal(shared.knobs, alone.knobs)
        assert _layers_equal(shared, alone, LAYERS)
    assert sorted(bases) == sorted((s, 40) for s in SMALL.seeds)
    other = generate(TestbedConfig(seeds=SMALL.seeds[:1], personas_per_difficulty=12),
                     bases=bases)  # another persona count is another base
    assert len(bases) == len(SMALL.seeds) + 1 and other.n == 3 * 12


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(4, 12),
       seeds=st.lists(st.integers(0, 2**31), min_size=1, max_size=2, unique=True),
       bias=st.floats(0, 4))
def test_zero_dropout_keeps_every_day(n, seeds, bias):
    nominal = generate(TestbedConfig(seeds=tuple(seeds), personas_per_difficulty=n))
    tb = generate(TestbedConfig(seeds=tuple(seeds), personas_per_difficulty=n,
                                bias_scale=bias, dropout_scale=0.0))
    tb.validate()
    assert tb.n == 3 * n * len(seeds)
    assert tb.device["available"].all() and tb.objective["available"].all()
    assert (tb.knobs[["device_dropout_rate", "objective_dropout_rate"]] == 0).all().all()
    pd.testing.assert_frame_equal(nominal.personas, tb.personas)
    assert _layers_equal(nominal, tb, ["events", "profile"])


def test_knob_scaling_caps():
    base = generate(TestbedConfig(seeds=(7,), personas_per_difficulty=8))
    big = generate(TestbedConfig(seeds=(7,), personas_per_difficulty=8, bias_scale=4.0,
                                 dropout_scale=4.0))
    bias = ["self_report_conflict_rate", "self_report_underreport_bias",
            "self_report_overreport_bias", "planner_optimism_bias", "planner_behavior_gap_rate"]
    drop = ["device_dropout_rate", "device_noise_rate", "objective_dropout_rate",
            "objective_noise_rate"]
    np.testing.assert_allclose(big.knobs[bias], np.minimum(1.0, 4 * base.knobs[bias]))
    np.testing.assert_allclose(big.knobs[drop], np.minimum(0.5, 4 * base.knobs[drop]))


def test_default_knobs(tb):
    k, p = tb.knobs, tb.personas
    stated = _by_class(tb, "stated_vs_revealed")
    shift = _by_class(tb, "temporal_shift")
    mdp = k["missing_day_prob"].to_numpy()
    assert (mdp[~stated] == 0).all() and (mdp[stated] >= 0.03).all() and (mdp[stated] <= 0.08).all()
    np.testing.assert_allclose(k["device_dropout_rate"][stated], 0.16 + mdp[stated])
    np.testing.assert_allclose(k["objective_dropout_rate"][stated], 0.15 + mdp[stated])
    anchor = k["profile_anchor_end_day"].to_numpy()
    assert (anchor[_by_class(tb, "stable")] == 12).all() and (anchor[stated] == 10).all()
    np.testing.assert_array_equal(anchor[shift], np.maximum(2, p["shift_day"][shift] - 2))
    np.testing.assert_array_equal(tb.profile["anchor_end"], anchor)


# --- personas, ids, splits (§2.1, §2.5) ----------------------------------------------------------

def test_ids_and_names(tb):
    p = tb.personas
    pattern = re.compile(r"^bench_(stable|shift|stated)_\d{3}_[a-z]+_[a-z]+$")
    assert p["persona_id"].map(lambda s: bool(pattern.match(s))).all()
    one = p[p["seed"] == DEFAULT_SEEDS[0]]
    assert one["persona_id"].is_unique and one["name"].is_unique
    row = one[one["persona_id"] == "bench_shift_121_avery_ellis"]
    assert len(row) == 1 and row["name"].item() == "Avery Ellis" and row["index"].item() == 121
    assert row["difficulty"].item() == "temporal_shift"
    # ids are identical across seeds
    ids = p.groupby("seed")["persona_id"].apply(list)
    assert all(x == ids.iloc[0] for x in ids)


def test_splits_are_stratified_by_index():
    cfg = TestbedConfig(seeds=(3,), personas_per_difficulty=23)
    p = generate(cfg).personas
    counts = cfg.split_counts()
    bounds = np.cumsum([counts[s] for s in vocab.SPLITS])
    for cls in CLASSES:
        sub = p[p["difficulty"] == cls]
        assert sub["split"].value_counts().reindex(list(vocab.SPLITS), fill_value=0).tolist() \
            == [counts[s] for s in vocab.SPLITS]
        expected = np.asarray(vocab.SPLITS)[np.searchsorted(bounds, sub["index"])]
        assert (sub["split"].to_numpy() == expected).all()


def test_released_split_sizes(tb):
    one = tb.personas[tb.personas["seed"] == DEFAULT_SEEDS[0]]
    table = pd.crosstab(one["difficulty"], one["split"])
    assert (table[["train", "dev", "calibration", "test"]].to_numpy() == [72, 16, 32, 40]).all()
    test = one[one["split"] == "test"]
    assert test["index"].min() == 121 and test["index"].max() == 160


def test_persona_fields(tb):
    p = tb.personas
    shift = _by_class(tb, "temporal_shift")
    assert p["age"].between(24, 46).all() and p["close_friends"].between(3, 10).all()
    assert p["shift_day"][shift].between(10, 20).all() and (p["shift_day"][~shift] == 0).all()
    assert p["scenario"][shift].isin(vocab.SCENARIOS).all() and (p["scenario"][~shift] == "").all()
    assert p["primary_exercise"].isin(vocab.EXERCISE_TYPES[:10]).all()


def test_diversity_audit():
    draw = draw_personas(_rng(DEFAULT_SEEDS[0], 0), n_per_class=160)
    assert diversity_failures(draw) == []
    draw.demo["city"][:] = 0
    fails = diversity_failures(draw)
    assert any("city" in f for f in fails)
    small = draw_personas(_rng(5, 0), n_per_class=4)
    small.demo["city"][:] = 0  # count thresholds are skipped below 160 per class
    assert not any("city" in f for f in diversity_failures(small))


# --- events (§2.6) ----------------------------------------------------------------------------

def test_event_ranges(tb):
    e = tb.events
    wk = vocab.IS_WEEKEND[None, :]
    assert e["bedtime_min"].min() >= 1200 and e["bedtime_min"].max() <= 1680
    assert ((0 <= e["wake_min"]) & (e["wake_min"] < 1440)).all()
    assert e["duration_h"].min() >= 3 and e["duration_h"].max() <= 11
    np.testing.assert_allclose(e["duration_h"], np.round(e["duration_h"], 1))
    assert set(np.unique(e["quality"])) <= {1, 2, 3, 4, 5}
    assert (e["interruptions"][e["quality"] >= 4] == 0).all()
    ex = e["did_exercise"]
    assert (e["exercise_min"][ex] >= 10).all() and (e["exercise_min"][ex] <= 120).all()
    assert (e["exercise_min"][~ex] == 0).all() and (e["exercise_type"][~ex] == -1).all()
    assert not (e["intentional"] & ~ex).any() and (e["exercise_min"][e["intentional"]] >= 30).all()
    assert (e["meals"] >= 1).all() and (e["meals"] <= 5).all()
    assert (e["home_cooked"] <= e["meals"]).all()
    assert (e["fast_food"] <= e["meals"] - e["home_cooked"]).all()
    assert e["coffee"].min() >= 0 and e["coffee"].max() <= 8
    assert e["hours"].min() >= 0 and e["hours"].max() <= 16
    np.testing.assert_array_equal(e["overtime"], e["hours"] > 9.0)
    np.testing.assert_array_equal(e["worked_on_weekend"], wk & (e["hours"] > 0))
    assert (e["wlb"] >= 1).all() and (e["wlb"] <= 5).all()
    assert ((e["afterhours"] >= 0) == (e["hours"] >= 9)).all()
    assert (e["n_act"] <= 2).all() and ((e["act1"] >= 0) == (e["n_act"] >= 1)).all()
    two = e["n_act"] == 2
    assert ((e["act2"] >= 0) == two).all() and (e["act1"][two] != e["act2"][two]).all()
    assert not (e["supporting_other"] & (e["n_act"] == 0)).any()
    np.testing.assert_array_equal(e["tag_social"], e["n_act"] > 0)
    np.testing.assert_array_equal(e["tag_work_stress"], (e["n_stress"] > 0) | e["overtime"])
    assert ((e["stress1"] >= 0) == (e["n_stress"] > 0)).all()
    assert (e["stressed"][e["n_stress"] > 0]).all()
    for f in ("mood", "energy"):
        assert e[f].min() >= 1 and e[f].max() <= 5


def test_stated_activity_pool(tb):
    e = tb.events
    stated = _by_class(tb, "stated_vs_revealed")
    codes = np.concatenate([e["act1"].ravel(), e["act2"].ravel()])
    assert codes.max() <= 16
    assert (e["act1"][~stated] <= 14).all() and (e["act2"][~stated] <= 14).all()
    assert np.isin(e["act1"][stated], vocab.STATED_EXTRA_SOCIAL).any()


def test_shift_changes_behaviour(tb):
    shift = _by_class(tb, "temporal_shift")
    day = tb.personas["shift_day"].to_numpy()[shift]
    after = np.arange(1, 31)[None, :] >= day[:, None]
    hours = tb.events["hours"][shift]
    crunch = tb.personas["scenario"][shift].isin(["promotion_crunch", "launch_crunch"]).to_numpy()
    weekday = ~vocab.IS_WEEKEND[None, :]
    pre = (hours * (~after & weekday)).sum(1) / (~after & weekday).sum(1)
    post = (hours * (after & weekday)).sum(1) / (after & weekday).sum(1)
    assert (post - pre)[crunch].mean() > 2.0


# --- profile (§2.7) ---------------------------------------------------------------------------

def test_profile(tb):
    pr = tb.profile
    stated = _by_class(tb, "stated_vs_revealed")
    assert pr["idealised"][stated].all() and not pr["idealised"][~stated].any()
    assert (pr["ex_days_per_week"][stated] == 5.0).all()
    assert (pr["afterhours_style"][stated] == 0).all() and (pr["bedtime_min"][stated] == 1350).all()
    for f in ("quality", "overtime_share", "social_dpw", "wlb_mean", "mood_mean", "energy_mean",
              "stressed_share"):
        assert np.isnan(pr[f][stated]).all() and not np.isnan(pr[f][~stated]).any()
    # falsy fallback (quirk 9): never 0 after the fallback
    for f in ("ex_days_per_week", "overtime_share", "social_dpw", "home_cooked_mean"):
        assert (pr[f][~stated] > 0).all()
    # stable anchors hold 4 weekend days: 0 worked -> strict, 1 -> null, >= 2 -> flexible
    stable = _by_class(tb, "stable")
    worked = tb.events["worked_on_weekend"][stable, :12].sum(1)
    np.testing.assert_array_equal(pr["afterhours_style"][stable],
                                  np.select([worked == 0, worked == 1], [0, -1], 1))


def test_null_afterhours_style_share(tb):
    assert abs((tb.profile["afterhours_style"] == -1).mean() - 0.15) <= 0.04


# --- planner and self-report (§2.7) ------------------------------------------------------------

def test_planner(tb):
    pl = tb.planner
    assert ((pl["ex_min"] > 0) == pl["ex_intended"]).all()
    assert pl["duration_h"].min() >= 5.5 and pl["duration_h"].max() <= 9
    assert pl["hours_limit"].min() >= 0 and pl["hours_limit"].max() <= 12
    assert (pl["hours_limit"][:, vocab.IS_WEEKEND] <= 10).all()
    assert pl["avoid_overtime"].all()
    for f in ("meals", "home_priority", "coffee_limit", "mood_goal"):
        assert (pl[f] == pl[f][:, :1]).all()  # constant per persona


def test_self_report(tb):
    s, e = tb.self_report, tb.events
    assert (s["n_act"] <= 3).all() and (s["n_act"] == 3).any()
    assert ((s["n_act"] == 2) & (e["n_act"] == 0)).any()  # fake then extra (p cr²)
    assert s["hours"].min() >= 0 and s["hours"].max() <= 16
    assert (s["hours"][e["hours"] == 0] > 0).any()  # noise on 0-hour days (quirk 12)
    assert not (s["overtime"] & (s["hours"] <= 9)).any()
    assert not (s["overtime"] & ~e["overtime"]).any()
    assert not (s["worked_on_weekend"] & ~e["worked_on_weekend"]).any()
    fake = s["did_exercise"] & ~e["did_exercise"]
    assert fake.any() and np.isin(s["exercise_type"][fake], vocab.FAKE_EXERCISES).all()
    assert (s["exercise_min"][fake] >= 10).all() and (s["exercise_min"][fake] <= 25).all()
    assert (s["exercise_min"][e["did_exercise"]] <= 150).all()
    assert (s["meals"] >= 1).all() and (s["meals"] <= 6).all()
    assert (s["home_cooked"] <= s["meals"]).all() and (s["fast_food"] >= 0).all()
    assert s["duration_h"].min() >= 4 and s["duration_h"].max() <= 11.5
    assert not (s["supporting_other"] & ~e["supporting_other"]).any()
    assert np.isin(s["act1"][(e["n_act"] == 0) & (s["n_act"] > 0)], vocab.FAKE_SOCIAL).all()


# --- objective and device (§2.7) ----------------------------------------------------------------

def test_objective(tb):
    o, e = tb.objective, tb.events
    off = ~o["available"]
    assert (o["pay_coffee"][off] == -1).all() and (o["pay_delivery"][off] == -1).all()
    assert not (o["timesheet"] | o["social_event"] | o["exercise_session"]
                | o["checkin_home"] | o["pay_fitness"])[off].any()
    assert (o["work_block_min"][off] == 0).all() and np.isnan(o["hours_logged"][off]).all()
    assert not o["pay_venue"].any()
    on = o["available"]
    assert ((o["pay_coffee"] >= 0) == (on & (e["coffee"] > 0))).all()
    assert not ((o["pay_delivery"] >= 0) & (e["fast_food"] == 0)).any()
    assert np.isnan(o["hours_logged"][~o["timesheet"]]).all()
    assert (o["hours_logged"][o["timesheet"]] >= 0).all()
    assert ((o["work_block_min"] > 0) == (on & (e["hours"] > 0))).all()
    assert not (o["social_event"] & (e["n_act"] == 0)).any()
    assert not (o["exercise_session"] & ~e["did_exercise"]).any()
    share = o["timesheet"][on].mean()
    assert abs(share - 0.8) < 0.02 and abs(o["checkin_home"][on].mean() - 0.4) < 0.02


def test_device(tb):
    d, e = tb.device, tb.events
    off = ~d["available"]
    for f in ("bedtime_min", "wake_min", "active_min", "steps", "screen_time_min", "focus_min"):
        assert (d[f][off] == -1).all()
    assert np.isnan(d["duration_h"][off]).all()
    assert not (d["workout"] | d["phone"] | d["work_session"] | d["quality_good"])[off].any()
    np.testing.assert_array_equal(d["workout"], d["available"] & e["did_exercise"])
    rest = d["available"] & ~e["did_exercise"]
    assert d["active_min"][rest].min() >= 15 and d["active_min"][rest].max() <= 45
    on = d["available"]
    assert abs(d["phone"][on].mean() - 0.65) < 0.02
    assert abs(d["work_session"][on].mean() - 0.5) < 0.02
    assert ((d["focus_min"] >= 0) == d["work_session"]).all()
    zero = d["work_session"] & (e["hours"] == 0)
    assert abs((d["focus_min"][zero] > 0).mean() - 45 / 76) < 0.03


@pytest.mark.parametrize("layer, released", [
    ("device", (0.099, 0.139, 0.217)),
    ("objective", (0.093, 0.121, 0.205)),
])
def test_day_missingness_by_difficulty(tb, layer, released):
    missing = ~tb.layer(layer)["available"]
    for cls, target in zip(CLASSES, released, strict=True):
        assert abs(missing[_by_class(tb, cls)].mean() - target) <= 0.015, cls
