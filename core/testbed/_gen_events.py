"""Latent event table (L2), vectorised over personas × days (spec §2.6).

Private helper of :mod:`core.testbed.generate`. Each persona parameter becomes a ``(P, 30)``
array that switches from the base to the shifted value at ``shift_day`` (§2.5), and every rule
of §2.6 is one whole-array operation. No recurrence links days, so there is no day loop.
"""

from __future__ import annotations

import numpy as np

from . import vocab
from ._gen_personas import PersonaDraw, shifted_days

__all__ = ["WEEKDAY", "simulate_events"]

#: weekday (0 = Monday) of each day of the window; day 1 is a Saturday (§2.1)
WEEKDAY = (vocab.START_DATE.weekday() + np.arange(vocab.N_DAYS)) % 7
WEEKDAY.setflags(write=False)

_BED_MIN, _BED_MAX = 1200, 1680  # 20:00 and 28:00 (04:00) in bedtime minutes
_TARGET_OFFSET = 20
_N_STRESS_EVENTS = len(vocab.STRESS_EVENTS)


def _day_params(draw: PersonaDraw) -> dict[str, np.ndarray]:
    """``(P, 30)`` parameter arrays: base before shift_day, shifted from it on (§2.5)."""
    late = shifted_days(draw)
    return {k: np.where(late, draw.shifted[k][:, None], v[:, None]) for k, v in draw.base.items()}


def _sleep(rng: np.random.Generator, par: dict, draw: PersonaDraw, wk: np.ndarray) -> dict:
    """Bedtime, duration, wake, quality, interruptions, trouble, screen, target (§2.6 Sleep)."""
    shape = wk.shape
    bed = np.trunc(par["bedtime_mean"] + par["bedtime_std"] * rng.standard_normal(shape))
    bed = np.clip(bed + wk * rng.integers(15, 46, shape), _BED_MIN, _BED_MAX)
    dur = np.round(np.clip(par["dur_mean"] + par["dur_std"] * rng.standard_normal(shape),
                           3.0, 11.0), 1)
    wake = (bed + np.rint(dur * 60)) % 1440
    quality = np.clip(np.round(par["quality_mean"]
                               + par["quality_std"] * rng.standard_normal(shape)), 1, 5)
    interrupt = np.where(quality <= 2, rng.integers(1, 4, shape),
                         np.where(quality == 3, rng.integers(0, 2, shape), 0))
    u = rng.random((2, *shape))
    target = np.maximum(_BED_MIN, draw.base["bedtime_mean"] - _TARGET_OFFSET)
    return {
        "bedtime_min": bed, "wake_min": wake, "duration_h": dur, "quality": quality,
        "interruptions": interrupt,
        "trouble": u[0] < par["trouble_prob"], "screen": u[1] < par["screen_prob"],
        "target_bedtime_min": np.broadcast_to(target[:, None], shape),
    }


def _preferred(draw: PersonaDraw) -> tuple[np.ndarray, np.ndarray]:
    """Day-level preferred-day flag and whether a preferred-day pattern exists (§2.6)."""
    late = shifted_days(draw)
    pref = np.where(late, draw.pref_shifted[:, WEEKDAY], draw.pref_base[:, WEEKDAY])
    has = np.where(late, draw.pref_shifted.any(axis=1)[:, None],
                   draw.pref_base.any(axis=1)[:, None])
    return pref, has


def _exercise(rng: np.random.Generator, par: dict, draw: PersonaDraw, shape: tuple) -> dict:
    """did_exercise, type, minutes and intentional (§2.6 Exercise)."""
    pref, has_pref = _preferred(draw)
    prob = np.where(has_pref, np.where(pref, 0.85, 0.05), par["ex_dpw"] / 7)
    u = rng.random((2, *shape))
    prob = np.where(u[0] < par["skip_prob"], prob * 0.3, prob)
    did = u[1] < prob
    minutes = np.clip(np.trunc(par["ex_dur_mean"] + par["ex_dur_std"]
                               * rng.standard_normal(shape)), 10, 120)
    primary = draw.demo["primary_exercise"][:, None]
    return {
        "did_exercise": did,
        "exercise_type": np.where(did, primary, -1),
        "exercise_min": np.where(did, minutes, 0),
        "intentional": did & (~has_pref | pref) & (minutes >= 30),
    }


def _work(rng: np.random.Generator, par: dict, wk: np.ndarray) -> dict:
    """Hours, overtime, weekend work, stress events, WLB and afterhours reason (§2.6 Work).

    A weekend day that does not draw "works" has 0 h, no stress, WLB 3 and no afterhours reason;
    a weekend day that works but rounds to 0.0 h is not a worked weekend day (§2.6).
    """
    shape = wk.shape
    u = rng.random((4, *shape))
    works = ~wk | (u[0] < par["weekend_work_prob"])
    mean = np.where(wk, 0.5 * par["hours_mean"], par["hours_mean"])
    hours = np.round(np.clip(mean + par["hours_std"] * rng.standard_normal(shape), 0, 16), 1)
    hours = np.where(works, hours, 0.0)
    overtime = hours > 9.0
    stressed = works & (u[1] < par["work_stress_prob"])
    n_stress = np.where(stressed, 1 + (u[2] < 0.5), 0)
    stress1 = np.where(stressed, rng.integers(0, _N_STRESS_EVENTS, shape), -1)
    wlb = (3.6 + np.where(overtime, -0.9, 0.2) + np.where(wk & works, -0.7, 0.0)
           + np.where(stressed, -0.5, 0.2) + np.where(hours >= 9.5, -0.4, 0.2))
    wlb = np.where(works, np.clip(np.round(wlb), 1, 5), 3)
    afterhours = np.where(hours >= 9, np.where(u[3] < par["afterhours_self"], 0, 1), -1)
    return {
        "hours": hours, "overtime": overtime, "worked_on_weekend": wk & (hours > 0),
        "n_stress": n_stress, "stress1": stress1, "wlb": wlb, "afterhours": afterhours,
    }


def _social(rng: np.random.Generator, par: dict, draw: PersonaDraw, wk: np.ndarray) -> dict:
    """Social days, 1 (p .7) or 2 activities without replacement, supporting_other (§2.6).

    supporting_other is drawn on social days only (it is meaningless on a day without a
    meeting, and G2 reads it only on social days).
    """
    shape = wk.shape
    u = rng.random((5, *shape))
    social = u[0] < par["meetup_prob"] + wk * par["weekend_boost"]
    n_act = np.where(social, np.where(u[1] < 0.7, 1, 2), 0)
    size = draw.pool_size[:, None]
    i1 = (u[2] * size).astype(np.int64)
    i2 = (i1 + 1 + (u[3] * (size - 1)).astype(np.int64)) % size
    act1 = np.take_along_axis(draw.pool, i1, axis=1)
    act2 = np.take_along_axis(draw.pool, i2, axis=1)
    return {
        "n_act": n_act,
        "act1": np.where(n_act >= 1, act1, -1),
        "act2": np.where(n_act >= 2, act2, -1),
        "supporting_other": social & (u[4] < par["obligation_social"]),
    }


def _diet(rng: np.random.Generator, par: dict, work_stress: np.ndarray) -> dict:
    """Meals, home-cooked, fast food and coffee (§2.6 Diet).

    Fast food: each remaining meal with p = ff / (1 − home_cook + 0.01), ff = max(base,
    takeout_on_stress) on work_stress days; p above 1 means every remaining meal.
    """
    shape = work_stress.shape
    meals = np.clip(np.round(par["meals_per_day"] + 0.4 * rng.standard_normal(shape)), 1, 5)
    meals = meals.astype(np.int64)
    hc = par["home_cook_prob"]
    home = rng.binomial(meals, hc)
    ff = np.where(work_stress, np.maximum(par["fast_food_prob"], par["takeout_on_stress"]),
                  par["fast_food_prob"])
    fast = rng.binomial(meals - home, np.minimum(1.0, ff / (1 - hc + 0.01)))
    coffee = np.clip(np.round(par["coffee_mean"]
                              + par["coffee_std"] * rng.standard_normal(shape)), 0, 8)
    return {"meals": meals, "home_cooked": home, "fast_food": fast, "coffee": coffee}


def _mood(rng: np.random.Generator, par: dict, ev: dict) -> dict:
    """Overall mood, stressed and energy (§2.6 Mood)."""
    shape = ev["hours"].shape
    z = rng.standard_normal((2, *shape))
    stress = ev["n_stress"] > 0
    mood = (par["mood_mean"] + par["mood_std"] * z[0] - 0.5 * stress
            - 0.5 * (ev["duration_h"] < 5.5) - 0.3 * (ev["quality"] <= 2))
    energy = par["energy_mean"] + par["energy_std"] * z[1] - 1.0 * (ev["duration_h"] < 6)
    return {
        "mood": np.clip(np.round(mood), 1, 5),
        "stressed": (rng.random(shape) < par["mood_stress_prob"]) | stress,
        "energy": np.clip(np.round(energy), 1, 5),
    }


def simulate_events(draw: PersonaDraw, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The latent event table of every persona, ``(P, 30)`` per field (§2.6).

    Parameters
    ----------
    draw : the personas of one seed.
    rng : the events stream of the seed.

    Returns
    -------
    dict of arrays keyed by :data:`~core.testbed.schema.EVENT_FIELDS` (dtypes not yet cast).
    """
    par = _day_params(draw)
    wk = np.broadcast_to(vocab.IS_WEEKEND, (draw.n, vocab.N_DAYS))
    ev = _sleep(rng, par, draw, wk)
    ev |= _exercise(rng, par, draw, wk.shape)
    ev |= _work(rng, par, wk)
    ev |= _social(rng, par, draw, wk)
    ev["tag_social"] = ev["n_act"] > 0
    ev["tag_work_stress"] = (ev["n_stress"] > 0) | ev["overtime"]
    ev |= _diet(rng, par, ev["tag_work_stress"])
    ev |= _mood(rng, par, ev)
    return ev
