"""Source projections (L3) and their knobs, vectorised over personas × days (spec §2.7, §2.13).

Private helper of :mod:`core.testbed.generate`. Each projection reads the event table (and, for
the planner and profile, the persona parameters) and draws from its own stream, so re-projecting
with scaled knobs leaves personas and events untouched. Every source draws all its uniforms
before comparing them with the knobs: the draw count never depends on a knob, and a larger knob
switches on a superset of the distortions of a smaller one (common random numbers).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pandas as pd

from . import vocab
from ._gen_events import WEEKDAY
from ._gen_personas import SHIFT, STABLE, STATED, PersonaDraw

__all__ = [
    "BIAS_KNOBS",
    "DROPOUT_KNOBS",
    "KNOB_COLUMNS",
    "default_knobs",
    "knob_frame",
    "project_device",
    "project_objective",
    "project_planner",
    "project_profile",
    "project_self_report",
    "scale_knobs",
]

# Knob table (§2.7): name -> (stable, temporal_shift, stated_vs_revealed) defaults.
_KNOB_TABLE = MappingProxyType({
    "self_report_conflict_rate": (0.16, 0.20, 0.34),
    "self_report_underreport_bias": (0.12, 0.18, 0.10),
    "self_report_overreport_bias": (0.10, 0.12, 0.24),
    "planner_optimism_bias": (0.14, 0.20, 0.28),
    "planner_behavior_gap_rate": (0.12, 0.26, 0.22),
    "device_dropout_rate": (0.10, 0.14, 0.16),
    "device_noise_rate": (0.08, 0.13, 0.14),
    "objective_dropout_rate": (0.09, 0.12, 0.15),
    "objective_noise_rate": (0.07, 0.10, 0.11),
})
#: knobs multiplied by bias_scale, capped at 1.0 (§2.13)
BIAS_KNOBS = ("self_report_conflict_rate", "self_report_underreport_bias",
              "self_report_overreport_bias", "planner_optimism_bias",
              "planner_behavior_gap_rate")
#: knobs multiplied by dropout_scale, capped at 0.5 (§2.13)
DROPOUT_KNOBS = ("device_dropout_rate", "device_noise_rate", "objective_dropout_rate",
                 "objective_noise_rate")
#: columns of Testbed.knobs
KNOB_COLUMNS = ("profile_anchor_end_day", *_KNOB_TABLE, "missing_day_prob")

_STABLE_ANCHOR_END, _STATED_ANCHOR_END = 12, 10
_STRICT_MAX, _FLEXIBLE_MIN = 0.15, 0.35  # afterhours style thresholds (§2.7 profile)
_DROPOUT_CAP, _BIAS_CAP = 0.5, 1.0


# ---------------------------------------------------------------------------------------------
# knobs (§2.7 knob table, §2.13)
# ---------------------------------------------------------------------------------------------

def default_knobs(draw: PersonaDraw) -> dict[str, np.ndarray]:
    """Per-persona default knobs (§2.7): class defaults, shift anchor = max(2, shift_day − 2),
    stated dropout rates = base + missing_day_prob capped at 0.5."""
    k = draw.klass
    out = {"profile_anchor_end_day": np.select(
        [k == STABLE, k == SHIFT],
        [_STABLE_ANCHOR_END, np.maximum(2, draw.shift_day.astype(np.int64) - 2)],
        _STATED_ANCHOR_END)}
    for name, values in _KNOB_TABLE.items():
        out[name] = np.asarray(values)[k]
    for name in ("device_dropout_rate", "objective_dropout_rate"):
        out[name] = np.minimum(_DROPOUT_CAP, out[name] + draw.missing_day_prob)
    out["missing_day_prob"] = draw.missing_day_prob
    return out


def scale_knobs(knobs: dict[str, np.ndarray], *, bias_scale: float,
                dropout_scale: float) -> dict[str, np.ndarray]:
    """DGP perturbation (§2.13): bias knobs × b capped at 1, dropout/noise knobs × d capped
    at 0.5, applied to the per-persona defaults (which already hold missing_day_prob)."""
    out = dict(knobs)
    for name in BIAS_KNOBS:
        out[name] = np.minimum(_BIAS_CAP, knobs[name] * bias_scale)
    for name in DROPOUT_KNOBS:
        out[name] = np.minimum(_DROPOUT_CAP, knobs[name] * dropout_scale)
    return out


def knob_frame(knobs: dict[str, np.ndarray]) -> pd.DataFrame:
    """Knobs as a DataFrame with the columns :data:`KNOB_COLUMNS`."""
    return pd.DataFrame({c: np.asarray(knobs[c], np.int64) if c == "profile_anchor_end_day"
                         else knobs[c] for c in KNOB_COLUMNS})


def _col(knobs: dict[str, np.ndarray], name: str) -> np.ndarray:
    """A knob as a ``(P, 1)`` column for day-level comparisons."""
    return np.asarray(knobs[name], dtype=float)[:, None]


def _pm_one(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """One of {−1, 0, 0, +1} per cell (±1 with p 1/4 each)."""
    return np.array([-1, 0, 0, 1])[rng.integers(0, 4, shape)]


def _zero_or_one(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """One of {0, 0, +1} per cell."""
    return (rng.integers(0, 3, shape) == 2).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# profile_ltm (§2.7)
# ---------------------------------------------------------------------------------------------

def _fallback(value: np.ndarray, param: np.ndarray) -> np.ndarray:
    """Quirk 9 (§5): a falsy (0 / 0.0) summary value is replaced by the persona parameter."""
    return np.where(value == 0, param, value)


def _afterhours_style(worked: np.ndarray, weekend: np.ndarray) -> np.ndarray:
    """Worked share of the anchor window's weekend days: ≤ .15 strict (0), ≥ .35 flexible (1),
    in between null (−1) (§2.7)."""
    n_weekend = weekend.sum(axis=1)
    share = (worked & weekend).sum(axis=1) / np.maximum(n_weekend, 1)
    return np.select([share <= _STRICT_MAX, share >= _FLEXIBLE_MIN], [0, 1], -1)


def project_profile(draw: PersonaDraw, events: dict[str, np.ndarray],
                    knobs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """profile_ltm snapshot per persona, ``(P,)`` per field (§2.7, quirks 9 and 10).

    Stable and shift personas average event days ``1..anchor_end`` (1 dp means, 2 dp shares,
    days/week = days × 7 / n); stated personas get the constant idealised snapshot with NaN for
    the fields it lacks and afterhours style strict_boundary.
    """
    a_end = knobs["profile_anchor_end_day"]
    win = vocab.DAY_INDEX[None, :] <= a_end[:, None]
    n = a_end.astype(float)
    b = draw.base

    def mean(x: np.ndarray, dp: int) -> np.ndarray:
        return np.round((x * win).sum(axis=1) / n, dp)

    ex_days = (events["did_exercise"] & win).sum(axis=1)
    ex_total = (events["exercise_min"] * win).sum(axis=1)
    social_days = ((events["n_act"] > 0) & win).sum(axis=1)
    snap = {
        "bedtime_min": mean(events["bedtime_min"], 0),
        "duration_h": mean(events["duration_h"], 1),
        "quality": mean(events["quality"], 1),
        "ex_days_per_week": _fallback(np.round(ex_days * 7 / n, 1), b["ex_dpw"]),
        "ex_session_min": _fallback(np.round(ex_total / np.maximum(ex_days, 1), 1),
                                    b["ex_dur_mean"]),
        "meals_per_day": _fallback(mean(events["meals"], 1), b["meals_per_day"]),
        "home_cooked_mean": _fallback(mean(events["home_cooked"], 1),
                                      np.round(b["home_cook_prob"] * b["meals_per_day"], 1)),
        "coffee_mean": _fallback(mean(events["coffee"], 1), b["coffee_mean"]),
        "hours_mean": _fallback(mean(events["hours"], 1), b["hours_mean"]),
        "overtime_share": _fallback(mean(events["overtime"], 2), b["overtime_prob"]),
        "wlb_mean": mean(events["wlb"], 1),
        "social_dpw": _fallback(np.round(social_days * 7 / n, 1),
                                np.round(b["meetup_prob"] * 7, 1)),
        "mood_mean": mean(events["mood"], 1),
        "energy_mean": mean(events["energy"], 1),
        "stressed_share": _fallback(mean(events["stressed"], 2), b["mood_stress_prob"]),
    }
    style = _afterhours_style(events["worked_on_weekend"], win & vocab.IS_WEEKEND[None, :])
    ideal = draw.klass == STATED
    idealised = {  # §2.7: constant idealised snapshot of stated personas
        "bedtime_min": 1350.0, "duration_h": 8.0, "quality": np.nan, "ex_days_per_week": 5.0,
        "ex_session_min": 45.0, "meals_per_day": 3.0, "home_cooked_mean": 2.1,
        "coffee_mean": 1.0, "hours_mean": 8.0, "overtime_share": np.nan, "wlb_mean": np.nan,
        "social_dpw": np.nan, "mood_mean": np.nan, "energy_mean": np.nan,
        "stressed_share": np.nan,
    }
    out = {k: np.where(ideal, idealised[k], v) for k, v in snap.items()}
    out["anchor_end"] = a_end
    out["idealised"] = ideal
    out["afterhours_style"] = np.where(ideal, 0, style)
    return out


# ---------------------------------------------------------------------------------------------
# planner (§2.7)
# ---------------------------------------------------------------------------------------------

def project_planner(draw: PersonaDraw, knobs: dict[str, np.ndarray],
                    rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Planner targets from the **base** parameters and the weekend flag only (§2.7, quirk 10).

    Order: daily targets, then gap injection (p planner_behavior_gap_rate), then the weekend
    adjustments.
    """
    b = {k: v[:, None] for k, v in draw.base.items()}
    shape = (draw.n, vocab.N_DAYS)
    wk = np.broadcast_to(vocab.IS_WEEKEND, shape)
    opt = _col(knobs, "planner_optimism_bias")
    u = rng.random((6, *shape))
    bed = b["bedtime_mean"] - rng.integers(10, 36, shape)
    dur = np.broadcast_to(np.clip(b["dur_mean"] + opt, 5.5, 9.0), shape)
    intended = u[0] < np.minimum(0.95, b["ex_dpw"] / 7 + 0.15)
    ex_target = np.clip(np.round(b["ex_dur_mean"] * (1 + 0.5 * opt)), 10, 120)
    hours_limit = np.clip(b["hours_mean"] - rng.uniform(0.2, 0.8, shape), 4, 12)
    social = u[1] < np.maximum(0.2, b["meetup_prob"] + 0.10)
    # Gap injection.
    gap = u[2] < _col(knobs, "planner_behavior_gap_rate")
    dur = np.where(gap, np.clip(dur + rng.uniform(0.2, 0.6, shape), 5.5, 9.0), dur)
    hours_limit = np.where(gap, np.clip(hours_limit - rng.uniform(0.4, 1.1, shape), 0, 12),
                           hours_limit)
    forced = gap & ~intended
    ex_min = np.where(forced, np.clip(ex_target + rng.integers(5, 16, shape), 10, 120),
                      ex_target)
    intended = intended | forced
    social = social | (gap & (u[3] < 0.5))
    # Weekends.
    intended = intended | (wk & (u[4] < 0.75))
    hours_limit = np.where(wk, np.clip(hours_limit - rng.uniform(0.5, 1.0, shape), 0, 10),
                           hours_limit)
    ones = np.ones(shape)
    return {
        "bedtime_min": bed,
        "duration_h": np.round(dur, 1),
        "ex_intended": intended,
        "ex_min": np.where(intended, ex_min, 0),
        "hours_limit": np.round(hours_limit, 1),
        "avoid_overtime": np.ones(shape, dtype=bool),
        "meals": ones * np.clip(np.round(b["meals_per_day"]), 1, 5),
        "home_priority": np.broadcast_to(b["home_cook_prob"] >= 0.5, shape),
        "coffee_limit": ones * np.clip(np.round(b["coffee_mean"] + 0.5), 0, 8),
        "social_intent": social,
        "mood_goal": ones * np.clip(np.round(b["mood_mean"] + 0.3), 1, 5),
    }


# ---------------------------------------------------------------------------------------------
# daily_self_report (§2.7)
# ---------------------------------------------------------------------------------------------

def _self_sleep(rng, ev, cr, shape) -> dict:
    """Sleep (+1): jitter, conflict boost, clamps; screen = actual OR a 25% draw."""
    u = rng.random((2, *shape))
    conflict = u[0] < cr
    dur = (ev["duration_h"] + rng.uniform(-0.6, 0.4, shape)
           + conflict * rng.uniform(0.4, 1.0, shape))
    quality = ev["quality"] + _pm_one(rng, shape) + conflict
    return {
        "bedtime_min": ev["bedtime_min"] + rng.integers(-30, 31, shape),
        "wake_min": (ev["wake_min"] + rng.integers(-25, 26, shape)) % 1440,
        "duration_h": np.round(np.clip(dur, 4.0, 11.5), 1),
        "quality": np.clip(quality, 1, 5),
        "screen": ev["screen"] | (u[1] < 0.25),
    }


def _self_exercise(rng, ev, cr, ov, shape) -> dict:
    """Exercise (+1): fake 10–25 min sessions on rest days (p max(cr, ov)); real sessions
    × U(.9, 1.3), + U(5, 12) (p ov), + U{5..15} (p cr), clamped [10, 150], truncated."""
    u = rng.random((3, *shape))
    did = ev["did_exercise"]
    fake = ~did & (u[0] < np.maximum(cr, ov))
    fake_type = np.asarray(vocab.FAKE_EXERCISES)[rng.integers(0, 3, shape)]
    fake_min = rng.integers(10, 26, shape)
    real = (ev["exercise_min"] * rng.uniform(0.9, 1.3, shape)
            + (u[1] < ov) * rng.uniform(5, 12, shape)
            + (u[2] < cr) * rng.integers(5, 16, shape))
    real = np.trunc(np.clip(real, 10, 150))
    return {
        "did_exercise": did | fake,
        "exercise_type": np.where(did, ev["exercise_type"], np.where(fake, fake_type, -1)),
        "exercise_min": np.where(did, real, np.where(fake, fake_min, 0)),
    }


def _self_diet(rng, ev, cr, ur, ov, shape) -> dict:
    """Diet (+1): jitter, then the ov / ur / cr steps in that order, home capped at the
    reported meals and fast food / coffee floored at 0."""
    u = rng.random((3, *shape))
    meals = np.clip(ev["meals"] + _pm_one(rng, shape), 1, 6)
    home = np.clip(ev["home_cooked"] + _zero_or_one(rng, shape), 0, meals)
    fast = np.clip(ev["fast_food"] - _zero_or_one(rng, shape), 0, meals)
    coffee = np.clip(ev["coffee"] + _pm_one(rng, shape), 0, 8)
    over, under, conflict = u[0] < ov, u[1] < ur, u[2] < cr
    home = np.minimum(home + over, meals)
    fast = np.maximum(fast - under, 0)
    coffee = np.maximum(coffee - under, 0)
    home = np.minimum(home + conflict, meals)
    fast = np.maximum(fast - conflict, 0)
    return {"meals": meals, "home_cooked": home, "fast_food": fast, "coffee": coffee}


def _self_work(rng, ev, cr, ur, shape) -> dict:
    """Work (−1): noise even on 0-hour days (quirk 12), ur and cr subtractions that clear the
    overtime flag, 50% first-stress-only on cr days, afterhours flip, hidden weekend work;
    reported overtime = remaining flag AND reported hours > 9."""
    u = rng.random((5, *shape))
    under, conflict = u[0] < ur, u[1] < cr
    hours = (ev["hours"] + rng.uniform(-1.5, 0.75, shape)
             - under * rng.uniform(0.75, 1.75, shape)
             - conflict * rng.uniform(0.5, 1.5, shape))
    hours = np.round(np.clip(hours, 0, 16), 1)
    first_only = conflict & (u[2] < 0.5)
    return {
        "hours": hours,
        "overtime": ev["overtime"] & ~under & ~conflict & (hours > 9),
        "worked_on_weekend": ev["worked_on_weekend"] & ~(u[3] < ur),
        "n_stress": np.where(first_only, np.minimum(ev["n_stress"], 1), ev["n_stress"]),
        "afterhours": np.where((ev["afterhours"] == 1) & (u[4] < 0.42), 0, ev["afterhours"]),
    }


def _self_social(rng, ev, cr, shape) -> dict:
    """Social (−1): truncate multi-activity days (45%), fake casual activity on empty days
    (p cr), then an extra activity (p cr) on the now non-empty list (audit fix #3), so up to 3;
    a true supporting_other is cleared with 42%."""
    u = rng.random((4, *shape))
    n_act = np.where((ev["n_act"] >= 2) & (u[0] < 0.45), 1, ev["n_act"])
    fake = (n_act == 0) & (u[1] < cr)
    act1 = np.where(fake, np.asarray(vocab.FAKE_SOCIAL)[rng.integers(0, 3, shape)], ev["act1"])
    n_act = n_act + fake
    n_act = n_act + ((n_act > 0) & (u[2] < cr))
    return {"n_act": n_act, "act1": act1,
            "supporting_other": ev["supporting_other"] & ~(u[3] < 0.42)}


def _self_mood(rng, ev, cr, ov, shape) -> dict:
    """Mood: + one of {0, 0, 1}; with p max(cr, ov) overall + 1 and stressed cleared."""
    boost = rng.random(shape) < np.maximum(cr, ov)
    mood = ev["mood"] + _zero_or_one(rng, shape) + boost
    energy = ev["energy"] + _zero_or_one(rng, shape)
    return {"mood": np.clip(mood, 1, 5), "stressed": ev["stressed"] & ~boost,
            "energy": np.clip(energy, 1, 5)}


def project_self_report(events: dict[str, np.ndarray], knobs: dict[str, np.ndarray],
                        rng: np.random.Generator) -> dict[str, np.ndarray]:
    """daily_self_report: every day reported (no day-level missingness), topic biases of §2.7."""
    shape = events["hours"].shape
    cr = _col(knobs, "self_report_conflict_rate")
    ur = _col(knobs, "self_report_underreport_bias")
    ov = _col(knobs, "self_report_overreport_bias")
    out = _self_sleep(rng, events, cr, shape)
    out |= _self_exercise(rng, events, cr, ov, shape)
    out |= _self_diet(rng, events, cr, ur, ov, shape)
    out |= _self_work(rng, events, cr, ur, shape)
    out |= _self_social(rng, events, cr, shape)
    out |= _self_mood(rng, events, cr, ov, shape)
    return out


# ---------------------------------------------------------------------------------------------
# objective_log (§2.7)
# ---------------------------------------------------------------------------------------------

def project_objective(events: dict[str, np.ndarray], knobs: dict[str, np.ndarray],
                      rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Payments, timesheet, calendar and check-ins; nothing on unavailable days (§2.7).

    Calendar entries come in the order work_block, social_event, exercise_session; noise
    (p objective_noise_rate) truncates a non-empty calendar to its first entry.
    """
    ev = events
    shape = ev["hours"].shape
    u = rng.random((8, *shape))
    avail = ~(u[0] < _col(knobs, "objective_dropout_rate"))
    coffee = ev["coffee"]
    pay_coffee = np.where(coffee > 0, np.clip(coffee + _pm_one(rng, shape), 0, 8), -1)
    ff = ev["fast_food"]
    pay_delivery = np.where((ff > 0) & (u[1] < 0.75), np.clip(ff + _pm_one(rng, shape), 0, 5),
                            -1)
    timesheet = avail & (u[2] < 0.8)
    logged = np.maximum(0.0, ev["hours"] + rng.uniform(-0.5, 0.5, shape))
    worked = ev["hours"] > 0
    social = ev["n_act"] > 0
    exercise = ev["did_exercise"] & (u[3] < 0.8)
    truncate = u[4] < _col(knobs, "objective_noise_rate")
    social_kept = avail & social & ~(truncate & worked)
    exercise_kept = avail & exercise & ~(truncate & (worked | social))
    checkin = avail & (u[5] < 0.4)
    return {
        "available": avail,
        "pay_coffee": np.where(avail, pay_coffee, -1),
        "pay_delivery": np.where(avail, pay_delivery, -1),
        "pay_fitness": avail & ev["did_exercise"] & (u[6] < 0.3),
        "pay_venue": np.zeros(shape, dtype=bool),  # quirk 13: categories never emitted
        "timesheet": timesheet,
        "hours_logged": np.where(timesheet, logged, np.nan),
        "overtime_logged": timesheet & ev["overtime"],
        "work_block_min": np.where(avail & worked, np.clip(np.rint(ev["hours"] * 60), 30, 900),
                                   0),
        "social_event": social_kept,
        "social_event_min": np.where(social_kept, rng.integers(60, 181, shape), 0),
        "exercise_session": exercise_kept,
        "exercise_session_min": np.where(
            exercise_kept, np.clip(ev["exercise_min"] + rng.integers(-5, 6, shape), 10, 180), 0),
        "checkin_home": checkin,
        "checkin_office": checkin & (WEEKDAY < 5)[None, :] & worked,
    }


# ---------------------------------------------------------------------------------------------
# device_log (§2.7)
# ---------------------------------------------------------------------------------------------

def project_device(events: dict[str, np.ndarray], knobs: dict[str, np.ndarray],
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Sleep tracker, activity tracker, phone usage (~35% field dropout) and work session (~50%
    field dropout); workout_detected = did_exercise exactly (§2.7, quirks 11 and 12)."""
    ev = events
    shape = ev["hours"].shape
    u = rng.random((6, *shape))
    avail = ~(u[0] < _col(knobs, "device_dropout_rate"))
    dur = np.round(np.clip(ev["duration_h"] + rng.uniform(-0.4, 0.3, shape), 3.5, 12.0), 1)
    did = ev["did_exercise"]
    active = np.where(did, np.clip(ev["exercise_min"] + rng.integers(-8, 9, shape), 0, 180),
                      rng.integers(15, 46, shape))
    steps = np.where(
        did,
        np.clip(active * rng.uniform(90, 140, shape) + rng.integers(500, 2501, shape),
                1500, 22000),
        rng.integers(2500, 8501, shape))
    noisy = u[1] < _col(knobs, "device_noise_rate")
    steps = np.where(noisy, np.clip(steps + rng.integers(-1200, 1801, shape), 0, 25000), steps)
    phone = avail & (u[2] >= 0.35)
    screen_time = 120 * (dur < 6.5) + rng.integers(80, 361, shape)
    late_use = np.where(u[3] < 0.7, ev["screen"], u[4] < 0.25)
    session = avail & (u[5] < 0.5)
    focus = np.clip(np.rint(ev["hours"] * 45 + rng.integers(-30, 46, shape)), 0, 900)
    return {
        "available": avail,
        "bedtime_min": np.where(avail, ev["bedtime_min"] + rng.integers(-20, 21, shape), -1),
        "wake_min": np.where(avail, (ev["wake_min"] + rng.integers(-15, 16, shape)) % 1440, -1),
        "duration_h": np.where(avail, dur, np.nan),
        "quality_good": avail & (rng.random(shape) < 2 / 3),
        "workout": avail & did,
        "active_min": np.where(avail, active, -1),
        "steps": np.where(avail, np.trunc(steps), -1),
        "phone": phone,
        "screen_time_min": np.where(phone, screen_time, -1),
        "late_night_use": phone & late_use,
        "work_session": session,
        "focus_min": np.where(session, focus, -1),
        "late_finish": session & ev["overtime"],
    }
