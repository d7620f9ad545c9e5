"""The testbed as arrays: one contract for generated and imported data.

A :class:`Testbed` holds every persona of one or more seeds on a leading axis ``P``.
Day-level layers are ``(P, 30)`` arrays, day 1 in column 0 (spec §2.1: 2026-01-03 … 2026-02-01);
the profile is ``(P,)``. Label functions (:mod:`core.testbed.labels`), the direct readout
(:mod:`core.testbed.readout`), the store and the SQL audit read only these fields, so the same
code serves :mod:`core.testbed.generate` and :mod:`core.testbed.importer`.

Conventions
-----------
* Clock times are **bedtime minutes**: minutes after midnight of the day, with times before
  noon counted +24 h (so 00:30 is 1470); clock fields that are wake times are plain minutes
  of the day (0–1439).
* Missing numbers are ``NaN`` (floats) or ``-1`` (integer codes and counts that may be absent).
* Integer codes index the tuples of :mod:`core.testbed.vocab`.
* The ``personas`` frame has one row per persona, in the same order as the arrays, with at least
  the columns of :data:`PERSONA_COLUMNS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .vocab import N_DAYS

__all__ = [
    "DEVICE_FIELDS",
    "EVENT_FIELDS",
    "LAYERS",
    "OBJECTIVE_FIELDS",
    "PERSONA_COLUMNS",
    "PLANNER_FIELDS",
    "PROFILE_FIELDS",
    "SELF_FIELDS",
    "Testbed",
    "blank_testbed",
]

#: persona table columns: name -> meaning
PERSONA_COLUMNS = {
    "seed": "generator seed (e.g. 20260321)",
    "persona_id": "bench_{stable|shift|stated}_{idx:03d}_{first}_{last}",
    "difficulty": "stable | temporal_shift | stated_vs_revealed",
    "split": "train | dev | calibration | test",
    "index": "1-based index within the difficulty class",
    "name": "first and last name",
    "age": "years",
    "gender": "text",
    "occupation": "text",
    "city": "text",
    "relationship": "text",
    "dietary_restriction": "text",
    "social_preference": "text",
    "close_friends": "count",
    "primary_exercise": "text",
    "scenario": "temporal-shift scenario id, empty otherwise",
    "shift_day": "first shifted day index (temporal_shift), 0 otherwise",
}

# name -> (dtype, meaning).  Day-level fields are (P, 30).
EVENT_FIELDS = {
    "bedtime_min": ("i2", "bedtime in bedtime minutes (before noon +24 h)"),
    "wake_min": ("i2", "wake time, minutes of the day"),
    "duration_h": ("f8", "sleep duration, hours (1 dp)"),
    "quality": ("i1", "sleep quality 1-5"),
    "interruptions": ("i1", "night interruptions"),
    "trouble": ("?", "trouble falling asleep"),
    "screen": ("?", "screen before bed"),
    "target_bedtime_min": ("i2", "max(20:00, pre-shift bedtime mean - 20 min)"),
    "did_exercise": ("?", "exercised"),
    "exercise_type": ("i1", "EXERCISE_TYPES code, -1 none"),
    "exercise_min": ("i2", "exercise minutes, 0 if none"),
    "intentional": ("?", "(no preferred-day pattern or preferred day) and duration >= 30"),
    "hours": ("f8", "work hours (1 dp)"),
    "overtime": ("?", "hours > 9.0"),
    "worked_on_weekend": ("?", "weekend and hours > 0"),
    "n_stress": ("i1", "number of stress events (0-2)"),
    "stress1": ("i1", "STRESS_EVENTS code of the first stress event, -1 none"),
    "wlb": ("i1", "work-life balance 1-5"),
    "afterhours": ("i1", "AFTERHOURS_REASONS code, -1 none"),
    "n_act": ("i1", "social activities that day (0-2)"),
    "act1": ("i1", "SOCIAL_ACTIVITIES code of the first activity, -1 none"),
    "act2": ("i1", "SOCIAL_ACTIVITIES code of the second activity, -1 none"),
    "supporting_other": ("?", "social obligation (not voluntary)"),
    "tag_social": ("?", "context tag social (any activity)"),
    "tag_work_stress": ("?", "context tag work_stress (stress events or overtime)"),
    "meals": ("i1", "meals"),
    "home_cooked": ("i1", "home-cooked meals"),
    "fast_food": ("i1", "fast-food (delivery) meals"),
    "coffee": ("i1", "coffee cups"),
    "mood": ("i1", "overall mood 1-5"),
    "stressed": ("?", "felt stressed"),
    "energy": ("i1", "energy 1-5"),
}

PROFILE_FIELDS = {
    "anchor_end": ("i1", "last day index of the anchor window"),
    "idealised": ("?", "constant idealised snapshot (stated_vs_revealed)"),
    "afterhours_style": ("i1", "AFTERHOURS_STYLES code, -1 null"),
    "bedtime_min": ("i2", "snapshot mean bedtime, bedtime minutes"),
    "duration_h": ("f8", "snapshot mean sleep duration (1 dp)"),
    "quality": ("f8", "snapshot mean sleep quality (1 dp); NaN for the idealised snapshot"),
    "ex_days_per_week": ("f8", "exercise days/week (1 dp)"),
    "ex_session_min": ("f8", "exercise session minutes (1 dp)"),
    "meals_per_day": ("f8", "meals/day (1 dp)"),
    "home_cooked_mean": ("f8", "home-cooked meals/day (1 dp)"),
    "coffee_mean": ("f8", "coffee cups/day (1 dp)"),
    "hours_mean": ("f8", "work hours/day, weekends included (1 dp)"),
    "overtime_share": ("f8", "share of overtime days (2 dp); NaN when absent (idealised)"),
    "wlb_mean": ("f8", "work-life balance mean (1 dp); NaN when absent"),
    "social_dpw": ("f8", "socially active days/week (1 dp); NaN when absent (idealised)"),
    "mood_mean": ("f8", "mood mean (1 dp); NaN when absent"),
    "energy_mean": ("f8", "energy mean (1 dp); NaN when absent"),
    "stressed_share": ("f8", "stressed share (2 dp); NaN when absent"),
}

PLANNER_FIELDS = {
    "bedtime_min": ("i2", "target bedtime, bedtime minutes"),
    "duration_h": ("f8", "target sleep duration (1 dp)"),
    "ex_intended": ("?", "exercise planned"),
    "ex_min": ("i2", "planned exercise minutes, 0 if none"),
    "hours_limit": ("f8", "work hours limit (1 dp)"),
    "avoid_overtime": ("?", "avoid overtime"),
    "meals": ("i1", "planned meals"),
    "home_priority": ("?", "home-cooked food prioritised"),
    "coffee_limit": ("i1", "coffee limit"),
    "social_intent": ("?", "social activity planned"),
    "mood_goal": ("i1", "mood goal 1-5"),
}

SELF_FIELDS = {
    "bedtime_min": ("i2", "reported bedtime, bedtime minutes"),
    "wake_min": ("i2", "reported wake time, minutes of the day"),
    "duration_h": ("f8", "reported sleep duration (1 dp)"),
    "quality": ("i1", "reported sleep quality"),
    "screen": ("?", "reported screen before bed"),
    "did_exercise": ("?", "reported exercise"),
    "exercise_type": ("i1", "EXERCISE_TYPES code, -1 none"),
    "exercise_min": ("i2", "reported exercise minutes, 0 if none"),
    "meals": ("i1", "reported meals"),
    "home_cooked": ("i1", "reported home-cooked meals"),
    "fast_food": ("i1", "reported fast food"),
    "coffee": ("i1", "reported coffee cups"),
    "hours": ("f8", "reported work hours (1 dp)"),
    "overtime": ("?", "reported overtime flag"),
    "worked_on_weekend": ("?", "reported weekend-work flag"),
    "n_stress": ("i1", "reported stress events"),
    "afterhours": ("i1", "AFTERHOURS_REASONS code, -1 none"),
    "n_act": ("i1", "reported social activities (0-3)"),
    "act1": ("i1", "SOCIAL_ACTIVITIES code of the first reported activity, -1 none"),
    "supporting_other": ("?", "reported obligation"),
    "mood": ("i1", "reported mood"),
    "stressed": ("?", "reported stressed"),
    "energy": ("i1", "reported energy"),
}

OBJECTIVE_FIELDS = {
    "available": ("?", "record available that day"),
    "pay_coffee": ("i1", "coffee payment count, -1 absent"),
    "pay_delivery": ("i1", "food-delivery payment count, -1 absent"),
    "pay_fitness": ("?", "fitness payment present"),
    "pay_venue": ("?", "restaurant/entertainment/social_venue payment (never generated)"),
    "timesheet": ("?", "timesheet present"),
    "hours_logged": ("f8", "timesheet hours, NaN absent"),
    "overtime_logged": ("?", "timesheet overtime flag"),
    "work_block_min": ("i2", "duration of the first work_block, 0 none"),
    "social_event": ("?", "calendar social_event present"),
    "social_event_min": ("i2", "social_event minutes, 0 none"),
    "exercise_session": ("?", "calendar exercise_session present"),
    "exercise_session_min": ("i2", "exercise_session minutes, 0 none"),
    "checkin_home": ("?", "home check-in"),
    "checkin_office": ("?", "office check-in"),
}

DEVICE_FIELDS = {
    "available": ("?", "record available that day"),
    "bedtime_min": ("i2", "tracked bedtime, bedtime minutes; -1 unavailable"),
    "wake_min": ("i2", "tracked wake, minutes of the day; -1 unavailable"),
    "duration_h": ("f8", "tracked sleep hours (1 dp); NaN unavailable"),
    "quality_good": ("?", "wearable_quality_flag == good"),
    "workout": ("?", "workout_detected"),
    "active_min": ("i2", "active minutes; -1 unavailable"),
    "steps": ("i4", "steps; -1 unavailable"),
    "phone": ("?", "phone_usage field present"),
    "screen_time_min": ("i2", "screen time minutes; -1 absent"),
    "late_night_use": ("?", "late-night phone use"),
    "work_session": ("?", "work_session field present"),
    "focus_min": ("i2", "focus minutes; -1 absent"),
    "late_finish": ("?", "late finish flag"),
}

#: layer name -> (field table, is day-level)
LAYERS = {
    "events": (EVENT_FIELDS, True),
    "profile": (PROFILE_FIELDS, False),
    "planner": (PLANNER_FIELDS, True),
    "self_report": (SELF_FIELDS, True),
    "objective": (OBJECTIVE_FIELDS, True),
    "device": (DEVICE_FIELDS, True),
}


@dataclass(frozen=True)
class Testbed:
    """Personas × days × fields for every layer of the seed-000 generative process.

    Attributes
    ----------
    personas : DataFrame, one row per persona (columns :data:`PERSONA_COLUMNS`).
    events, planner, self_report, objective, device : dict of ``(P, 30)`` arrays.
    profile : dict of ``(P,)`` arrays.
    knobs : DataFrame, one row per persona, the source knobs of spec §2.7 after scaling.
    """

    personas: pd.DataFrame
    events: dict[str, np.ndarray]
    profile: dict[str, np.ndarray]
    planner: dict[str, np.ndarray]
    self_report: dict[str, np.ndarray]
    objective: dict[str, np.ndarray]
    device: dict[str, np.ndarray]
    knobs: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n(self) -> int:
        """Number of personas."""
        return len(self.personas)

    def layer(self, name: str) -> dict[str, np.ndarray]:
        """Return the field dict of layer ``name`` (a key of :data:`LAYERS`)."""
        if name not in LAYERS:
            raise ValueError(f"unknown layer {name!r} (expected one of {', '.join(LAYERS)})")
        return getattr(self, name)

    def validate(self) -> None:
        """Check every layer has exactly its fields with the documented shapes and dtypes.

        Raises ``ValueError`` naming the first offending layer and field.
        """
        p = self.n
        missing = [c for c in PERSONA_COLUMNS if c not in self.personas.columns]
        if missing:
            raise ValueError(f"personas table lacks columns: {', '.join(missing)}")
        for name, (fields, daily) in LAYERS.items():
            arrays = self.layer(name)
            extra = set(arrays) - set(fields)
            lacking = set(fields) - set(arrays)
            if extra or lacking:
                raise ValueError(
                    f"layer {name}: missing {sorted(lacking)} unexpected {sorted(extra)}")
            shape = (p, N_DAYS) if daily else (p,)
            for key, (dtype, _) in fields.items():
                a = arrays[key]
                if a.shape != shape:
                    raise ValueError(f"{name}.{key}: shape {a.shape}, expected {shape}")
                if a.dtype != np.dtype(dtype):
                    raise ValueError(f"{name}.{key}: dtype {a.dtype}, expected {np.dtype(dtype)}")

    def subset(self, mask: np.ndarray) -> Testbed:
        """Personas selected by a boolean mask or an index array, every layer alike."""
        idx = np.arange(self.n)[mask] if np.asarray(mask).dtype == bool else np.asarray(mask)
        pick = {name: {k: v[idx] for k, v in self.layer(name).items()} for name in LAYERS}
        knobs = self.knobs.iloc[idx].reset_index(drop=True) if len(self.knobs) else self.knobs
        return Testbed(self.personas.iloc[idx].reset_index(drop=True), knobs=knobs, **pick)

    @staticmethod
    def concat(parts: list[Testbed]) -> Testbed:
        """Stack testbeds along the persona axis (e.g. several seeds)."""
        if not parts:
            raise ValueError("concat needs at least one testbed")
        layers = {name: {k: np.concatenate([t.layer(name)[k] for t in parts])
                         for k in LAYERS[name][0]} for name in LAYERS}
        personas = pd.concat([t.personas for t in parts], ignore_index=True)
        knobs = pd.concat([t.knobs for t in parts], ignore_index=True)
        return Testbed(personas, knobs=knobs, **layers)


def blank_testbed(n: int, *, seed: int = 0) -> Testbed:
    """A valid testbed of ``n`` personas with neutral values, for tests and hand-built cases.

    Every numeric field is 0, codes are ``-1``, booleans False, except: devices and objective
    logs are available every day, and every persona is a ``stable`` test persona with a
    non-idealised profile. Callers overwrite the fields a case needs.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")

    def zeros(fields, shape):
        out = {}
        for k, (dtype, desc) in fields.items():
            fill = -1 if ("code" in desc or "-1" in desc) and np.dtype(dtype).kind == "i" else 0
            out[k] = np.full(shape, fill, dtype=dtype)
        return out

    day, one = (n, N_DAYS), (n,)
    layers = {name: zeros(fields, day if daily else one)
              for name, (fields, daily) in LAYERS.items()}
    layers["objective"]["available"][:] = True
    layers["device"]["available"][:] = True
    personas = pd.DataFrame({
        "seed": np.full(n, seed, dtype=np.int64),
        "persona_id": [f"bench_stable_{i + 1:03d}_test_persona" for i in range(n)],
        "difficulty": "stable", "split": "test", "index": np.arange(1, n + 1),
        "name": "Test Persona", "age": 30, "gender": "", "occupation": "", "city": "",
        "relationship": "", "dietary_restriction": "none", "social_preference": "",
        "close_friends": 4, "primary_exercise": "", "scenario": "", "shift_day": 0,
    }, index=pd.RangeIndex(n))
    return Testbed(personas, **layers)
