"""Persona layer (L1) of the generator, vectorised over personas (spec §2.5).

Private helper of :mod:`core.testbed.generate`. Every parameter is a ``(P,)`` array over the
stacked personas of one seed (stable, then temporal_shift, then stated_vs_revealed, each in index
order). Class-dependent draws use one uniform per persona that is mapped through the class's
rule, so the draw count never depends on the class mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from . import vocab
from .schema import PERSONA_COLUMNS

__all__ = [
    "SHIFT",
    "STABLE",
    "STATED",
    "PersonaDraw",
    "diversity_failures",
    "draw_personas",
    "persona_frame",
    "shifted_days",
]

STABLE, SHIFT, STATED = 0, 1, 2
_NO_SHIFT_DAY = 10_000  # effective shift day of personas that never shift


def _c(*options: float) -> tuple:
    """Class rule: uniform choice over ``options``."""
    return ("c", options)


def _u(lo: float, hi: float) -> tuple:
    """Class rule: continuous uniform on ``[lo, hi)``."""
    return ("u", lo, hi)


# name -> (stable rule, stated rule, decimals); temporal_shift uses the stable rule (§2.5).
# Bedtimes are bedtime minutes (22:15 = 1335, 00:30 = 1470).
_BEHAVIOUR: MappingProxyType[str, tuple] = MappingProxyType({
    "bedtime_mean": (_c(1335, 1350, 1380, 1395, 1410), _c(1425, 1440, 1470, 1500), 0),
    "bedtime_std": (_c(15, 20, 25, 30), _c(30, 40, 45, 60), 0),
    "dur_mean": (_u(6.8, 8.0), _u(5.5, 7.0), 1),
    "dur_std": (_u(0.2, 0.5), _u(0.6, 1.1), 1),
    "quality_mean": (_c(3.5, 4.0, 4.2), _u(2.5, 3.5), 1),
    "quality_std": (_u(0.3, 0.6), _u(0.8, 1.1), 1),
    "trouble_prob": (_u(0.03, 0.12), _u(0.20, 0.45), 2),
    "screen_prob": (_u(0.20, 0.70), _u(0.55, 0.90), 2),
    "ex_dpw": (_c(2, 3, 4, 5), _c(0.5, 1, 1.5, 2, 3), 1),
    "ex_dur_mean": (_c(30, 40, 45, 50, 60), _c(20, 25, 30, 35, 40), 0),
    "ex_dur_std": (_c(8, 10, 12, 15), _c(10, 12, 15, 18), 0),
    "skip_prob": (_u(0.05, 0.15), _u(0.25, 0.55), 2),
    "meals_per_day": (_c(3, 3, 3, 2.5), _c(2, 2.5, 3), 1),
    "home_cook_prob": (_u(0.55, 0.80), _u(0.20, 0.45), 2),
    "fast_food_prob": (_u(0.05, 0.20), _u(0.25, 0.50), 2),
    "coffee_mean": (_u(0.5, 2.5), _u(2.0, 4.0), 1),
    "coffee_std": (_u(0.3, 0.8), _u(0.6, 1.2), 1),
    "hours_mean": (_u(7.5, 9.0), _u(6.0, 8.5), 1),
    "hours_std": (_u(0.4, 0.8), _u(1.5, 3.0), 1),
    "overtime_prob": (_u(0.05, 0.18), _u(0.12, 0.35), 2),
    "weekend_work_prob": (_u(0.02, 0.12), _u(0.12, 0.35), 2),
    "work_stress_prob": (_u(0.08, 0.18), _u(0.25, 0.50), 2),
    "meetup_prob": (_u(0.20, 0.38), _u(0.25, 0.50), 2),
    "weekend_boost": (_u(0.15, 0.35), _u(0.15, 0.30), 2),
    "mood_mean": (_u(3.6, 4.4), _u(2.5, 3.5), 1),
    "mood_std": (_u(0.3, 0.7), _u(0.8, 1.1), 1),
    "mood_stress_prob": (_u(0.08, 0.18), _u(0.25, 0.50), 2),
    "energy_mean": (_u(3.4, 4.4), _u(2.2, 3.4), 1),
    "energy_std": (_u(0.3, 0.7), _u(0.8, 1.1), 1),
})

# Semantic-conflict fields that reach a schema field (§2.5), identical for all classes.
# The other families (meat, beneficiaries, exception contexts) only drive food orders, which the
# array schema does not carry, so they are not drawn (quirk 16: unused fields).
_SEMANTIC: MappingProxyType[str, tuple] = MappingProxyType({
    "takeout_on_stress": (_u(0.32, 0.62), _u(0.32, 0.62), 2),
    "afterhours_self": (_u(0.12, 0.34), _u(0.12, 0.34), 2),
    "obligation_social": (_u(0.05, 0.90), _u(0.05, 0.90), 2),
})

# Scenario deltas (§2.5), rows in vocab.SCENARIOS order. Columns: Δsleep h, Δquality,
# exercise ×, Δfast-food, Δcoffee, Δwork h, Δovertime, Δweekend work, social ×, Δmood, Δstress.
_DELTAS = np.array([
    (-1.5, -1.5, 0.4, 0.35, 1.5, 2.5, 0.45, 0.35, 0.35, -1.0, 0.35),
    (-1.2, -1.2, 0.5, 0.20, 1.0, 1.0, 0.20, 0.10, 0.45, -0.8, 0.25),
    (0.8, 0.8, 1.7, -0.15, -0.5, -0.5, -0.10, -0.10, 0.9, 0.8, -0.20),
    (-1.0, -1.0, 0.5, 0.25, 1.0, 3.0, 0.50, 0.40, 0.3, -1.2, 0.40),
    (-0.5, 0.3, 0.7, 0.15, 0.3, -0.5, -0.05, -0.05, 1.6, 0.8, -0.10),
    (1.0, 0.5, 1.5, -0.25, -1.0, -1.0, -0.10, -0.10, 0.8, -0.5, 0.15),
    (-0.6, -0.5, 0.6, 0.20, 0.5, 0.5, 0.10, 0.05, 0.4, -0.6, 0.20),
    (1.2, 0.6, 0.8, 0.10, -0.3, -2.0, -0.15, -0.10, 0.5, 0.3, -0.15),
])
_DELTAS.setflags(write=False)
(_D_SLEEP, _D_QUAL, _M_EX, _D_FF, _D_COFFEE, _D_WORK, _D_OT, _D_WKND, _M_SOC, _D_MOOD,
 _D_STRESS) = range(11)

_LATE_BEDTIMES = (1440, 1470, 1500)  # 00:00, 00:30, 01:00 (shift with Δsleep < 0)
_EARLY_BEDTIMES = (1305, 1320, 1335)  # 21:45, 22:00, 22:15 (otherwise)
_N_PRIMARY_EXERCISES = 10  # primary exercise is one of the first 10 EXERCISE_TYPES
_POOL_SIZE = 15  # shared social-activity pool (codes 0..14)
_PERSONA_ACTIVITIES = 4
_N_NAMES = len(vocab.FIRST_NAMES) * len(vocab.LAST_NAMES)


@dataclass(frozen=True)
class PersonaDraw:
    """All persona-level draws of one seed (spec §2.5).

    Attributes
    ----------
    n_per_class : personas per difficulty class.
    klass, index : class code (0 stable, 1 shift, 2 stated) and 1-based index within the class.
    demo : demographic and trait codes (age, gender, occupation, city, relationship, diet,
        social_pref, close_friends, primary_exercise), each ``(P,)``.
    base, shifted : behavioural parameters before / after the temporal shift, ``(P,)`` each;
        ``shifted`` equals ``base`` for personas without a shift.
    pref_base, pref_shifted : ``(P, 7)`` preferred-exercise weekday masks (Monday first).
    pool, pool_size : ``(P, 5)`` social-activity codes (``-1`` padded) and the pool length.
    scenario, shift_day : scenario code (``-1`` none) and first shifted day index (``0`` none).
    missing_day_prob : stated personas' day-dropout addend, 0 for the other classes.
    """

    n_per_class: int
    klass: np.ndarray
    index: np.ndarray
    demo: dict[str, np.ndarray]
    base: dict[str, np.ndarray]
    shifted: dict[str, np.ndarray]
    pref_base: np.ndarray
    pref_shifted: np.ndarray
    pool: np.ndarray
    pool_size: np.ndarray
    scenario: np.ndarray
    shift_day: np.ndarray
    missing_day_prob: np.ndarray

    @property
    def n(self) -> int:
        """Number of personas."""
        return len(self.klass)


def _apply_rule(rule: tuple, u: np.ndarray) -> np.ndarray:
    """Map uniforms ``u`` through a class rule (choice or continuous uniform)."""
    if rule[0] == "c":
        options = np.asarray(rule[1], dtype=float)
        return options[np.minimum((u * len(options)).astype(np.int64), len(options) - 1)]
    return rule[1] + (rule[2] - rule[1]) * u


def _draw_table(rng: np.random.Generator, klass: np.ndarray,
                table: MappingProxyType[str, tuple]) -> dict[str, np.ndarray]:
    """One uniform per persona and parameter, mapped by the class rule and rounded (§2.5)."""
    u = rng.random((len(table), len(klass)))
    stated = klass == STATED
    out = {}
    for row, (name, (rule_stable, rule_stated, dp)) in zip(u, table.items(), strict=True):
        value = np.where(stated, _apply_rule(rule_stated, row), _apply_rule(rule_stable, row))
        out[name] = np.round(value, dp)
    return out


def _preferred_days(rng: np.random.Generator, count: np.ndarray) -> np.ndarray:
    """``count`` distinct weekdays per persona, uniform over all 7 days (§2.5, audit fix #1)."""
    rank = rng.random((len(count), 7)).argsort(axis=1).argsort(axis=1)
    return rank < count[:, None]


def _social_pool(rng: np.random.Generator, klass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """4 distinct activities of the shared pool; stated personas add code 15 or 16 (§2.5)."""
    p = len(klass)
    pool = np.full((p, _PERSONA_ACTIVITIES + 1), -1, dtype=np.int8)
    pool[:, :_PERSONA_ACTIVITIES] = rng.random((p, _POOL_SIZE)).argsort(axis=1)[
        :, :_PERSONA_ACTIVITIES]
    extra = np.asarray(vocab.STATED_EXTRA_SOCIAL)[rng.integers(0, 2, p)]
    stated = klass == STATED
    pool[:, _PERSONA_ACTIVITIES] = np.where(stated, extra, -1)
    return pool, np.where(stated, _PERSONA_ACTIVITIES + 1, _PERSONA_ACTIVITIES)


def _demographics(rng: np.random.Generator, p: int) -> dict[str, np.ndarray]:
    """Demographics and stable traits (§2.5)."""
    return {
        "age": rng.integers(24, 47, p),
        "gender": rng.integers(0, len(vocab.GENDERS), p),
        "occupation": rng.integers(0, len(vocab.OCCUPATIONS), p),
        "relationship": rng.integers(0, len(vocab.RELATIONSHIPS), p),
        "city": rng.integers(0, len(vocab.CITIES), p),
        "diet": rng.choice(len(vocab.DIETS), p, p=vocab.DIET_WEIGHTS),
        "social_pref": rng.choice(len(vocab.SOCIAL_PREFS), p, p=vocab.SOCIAL_PREF_WEIGHTS),
        "close_friends": rng.integers(3, 11, p),
        "primary_exercise": rng.integers(0, _N_PRIMARY_EXERCISES, p),
    }


def _shift_params(rng: np.random.Generator, base: dict[str, np.ndarray],
                  scenario: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Shifted parameters and redrawn preferred days for every persona (§2.5 "How the shift is
    applied"); callers keep them only for temporal_shift personas."""
    d = _DELTAS[np.maximum(scenario, 0)].T
    stress_up = np.maximum(0.0, d[_D_STRESS])
    mult_ex, mult_soc = d[_M_EX], d[_M_SOC]
    s = dict(base)
    s["dur_mean"] = np.round(np.clip(base["dur_mean"] + d[_D_SLEEP], 4.5, 9.0), 1)
    s["quality_mean"] = np.round(np.clip(base["quality_mean"] + d[_D_QUAL], 1.5, 5.0), 1)
    pick = rng.integers(0, 3, len(scenario))
    s["bedtime_mean"] = np.where(d[_D_SLEEP] < 0, np.asarray(_LATE_BEDTIMES)[pick],
                                 np.asarray(_EARLY_BEDTIMES)[pick]).astype(float)
    s["trouble_prob"] = np.round(np.clip(base["trouble_prob"] + stress_up, 0.02, 0.75), 2)
    s["screen_prob"] = np.round(np.clip(base["screen_prob"] + stress_up, 0.10, 0.95), 2)
    s["ex_dpw"] = np.round(np.clip(base["ex_dpw"] * mult_ex, 0.5, 6.0), 1)
    s["ex_dur_mean"] = np.trunc(np.clip(base["ex_dur_mean"] * mult_ex, 15, 80))
    s["skip_prob"] = np.round(
        np.clip(base["skip_prob"] + np.where(mult_ex < 1, 0.20, -0.05), 0.02, 0.75), 2)
    s["fast_food_prob"] = np.round(np.clip(base["fast_food_prob"] + d[_D_FF], 0.02, 0.75), 2)
    s["home_cook_prob"] = np.round(np.clip(base["home_cook_prob"] - d[_D_FF], 0.05, 0.90), 2)
    s["coffee_mean"] = np.round(np.clip(base["coffee_mean"] + d[_D_COFFEE], 0.0, 5.0), 1)
    s["hours_mean"] = np.round(np.clip(base["hours_mean"] + d[_D_WORK], 4.0, 12.5), 1)
    s["overtime_prob"] = np.round(np.clip(base["overtime_prob"] + d[_D_OT], 0.02, 0.90), 2)
    s["weekend_work_prob"] = np.round(
        np.clip(base["weekend_work_prob"] + d[_D_WKND], 0.02, 0.85), 2)
    s["work_stress_prob"] = np.round(
        np.clip(base["work_stress_prob"] + d[_D_STRESS], 0.02, 0.90), 2)
    s["meetup_prob"] = np.round(np.clip(base["meetup_prob"] * mult_soc, 0.02, 0.60), 2)
    s["weekend_boost"] = np.round(np.clip(base["weekend_boost"] * mult_soc, 0.02, 0.40), 2)
    s["mood_mean"] = np.round(np.clip(base["mood_mean"] + d[_D_MOOD], 1.5, 5.0), 1)
    s["energy_mean"] = np.round(np.clip(base["energy_mean"] + d[_D_MOOD], 1.5, 5.0), 1)
    s["mood_stress_prob"] = np.round(
        np.clip(base["mood_stress_prob"] + d[_D_STRESS], 0.02, 0.90), 2)
    # Preferred days are always redrawn, count = round-half-even(max(1, dpw)) in [1, 6].
    count = np.clip(np.round(np.maximum(1.0, s["ex_dpw"])), 1, 6).astype(np.int64)
    return s, _preferred_days(rng, count)


def draw_personas(rng: np.random.Generator, *, n_per_class: int) -> PersonaDraw:
    """Draw the personas of one seed, vectorised over all ``3 × n_per_class`` (§2.5).

    Parameters
    ----------
    rng : the persona stream of the seed (one attempt of the diversity audit).
    n_per_class : personas per difficulty class.
    """
    klass = np.repeat(np.arange(3, dtype=np.int8), n_per_class)
    index = np.tile(np.arange(1, n_per_class + 1), 3)
    p = len(klass)
    demo = _demographics(rng, p)
    base = _draw_table(rng, klass, _BEHAVIOUR)
    semantic = _draw_table(rng, klass, _SEMANTIC)
    # Preferred-day count = round-half-even(dpw) in [1, 6]; stated dpw 0.5 has none (§2.5).
    count = np.clip(np.round(base["ex_dpw"]), 1, 6).astype(np.int64)
    count = np.where(base["ex_dpw"] < 1, 0, count)
    pref_base = _preferred_days(rng, count)
    pool, pool_size = _social_pool(rng, klass)
    is_shift = klass == SHIFT
    scenario = np.where(is_shift, rng.integers(0, len(vocab.SCENARIOS), p), -1).astype(np.int8)
    shift_day = np.where(is_shift, rng.integers(10, 21, p), 0).astype(np.int16)
    shifted, pref_shifted = _shift_params(rng, base, scenario)
    shifted = {k: np.where(is_shift, v, base[k]) for k, v in shifted.items()}
    pref_shifted = np.where(is_shift[:, None], pref_shifted, pref_base)
    base |= semantic
    shifted |= semantic
    mdp = np.where(klass == STATED, np.round(rng.uniform(0.03, 0.08, p), 2), 0.0)
    return PersonaDraw(n_per_class, klass, index, demo, base, shifted, pref_base, pref_shifted,
                       pool, pool_size, scenario, shift_day, mdp)


def shifted_days(draw: PersonaDraw) -> np.ndarray:
    """``(P, 30)`` mask of days that use the shifted parameters (day index ≥ shift_day, §2.5)."""
    day = np.where(draw.shift_day > 0, draw.shift_day, _NO_SHIFT_DAY)
    return vocab.DAY_INDEX[None, :] >= day[:, None]


def _global_counter(draw: PersonaDraw) -> np.ndarray:
    """Name counter g (1-based): stable 1..n, then shift 1..n, then stated 1..n (§2.1)."""
    return draw.klass.astype(np.int64) * draw.n_per_class + draw.index


def _names(draw: PersonaDraw) -> tuple[np.ndarray, np.ndarray]:
    """First and last names from the global counter (§2.1)."""
    g0 = _global_counter(draw) - 1
    first = np.asarray(vocab.FIRST_NAMES)[g0 % len(vocab.FIRST_NAMES)]
    last = np.asarray(vocab.LAST_NAMES)[(g0 // len(vocab.FIRST_NAMES)) % len(vocab.LAST_NAMES)]
    return first, last


def diversity_failures(draw: PersonaDraw) -> list[str]:
    """Failed checks of the diversity audit (§2.5); an empty list means the draw passes.

    Count-based checks (city/occupation cap of 10% of all personas, ≥ 15 cities and occupations,
    ≥ 8 exercise types, ≥ 4 diets, all 3 social preferences) are applied only with at least 160
    personas per class, the released scale: with fewer personas they cannot be expected to hold
    (4 personas per class cannot show 15 cities). Name uniqueness is checked only while the
    global name counter cannot wrap (3n ≤ 70 × 40); beyond that names repeat by construction
    (ids stay unique through class and index). The mean-based track gaps and shift deltas are
    always checked.
    """
    fails: list[str] = []
    demo, k = draw.demo, draw.klass
    if draw.n_per_class >= 160:
        cap = 0.10 * draw.n
        for field, minimum in (("city", 15), ("occupation", 15)):
            counts = np.bincount(demo[field])
            if counts.max() > cap:
                fails.append(f"a {field} exceeds {cap:g} personas")
            if (counts > 0).sum() < minimum:
                fails.append(f"fewer than {minimum} {field} values")
        for field, minimum in (("primary_exercise", 8), ("diet", 4), ("social_pref", 3)):
            if len(np.unique(demo[field])) < minimum:
                fails.append(f"fewer than {minimum} {field} values")
    if 3 * draw.n_per_class <= _N_NAMES:
        first, last = _names(draw)
        if len(np.unique(first + " " + last)) != draw.n:
            fails.append("names are not unique")
    b, st, sv = draw.base, k == STABLE, k == STATED
    if b["dur_mean"][st].mean() - b["dur_mean"][sv].mean() < 0.8:
        fails.append("stable - stated sleep hours gap < 0.8")
    if b["ex_dpw"][st].mean() - b["ex_dpw"][sv].mean() < 1.0:
        fails.append("stable - stated exercise days gap < 1.0")
    if b["coffee_mean"][sv].mean() - b["coffee_mean"][st].mean() < 0.8:
        fails.append("stated - stable coffee gap < 0.8")
    d = np.abs(_DELTAS[draw.scenario[k == SHIFT]])
    for col, label, minimum in ((_D_SLEEP, "sleep", 0.6), (_D_WORK, "work", 1.0),
                                (_D_MOOD, "mood", 0.6)):
        if d[:, col].mean() < minimum - 1e-9:
            fails.append(f"mean |shift delta| {label} < {minimum}")
    return fails


def persona_frame(draw: PersonaDraw, *, seed: int, split_counts: dict[str, int]) -> pd.DataFrame:
    """The persona table (columns :data:`~core.testbed.schema.PERSONA_COLUMNS`, §2.1).

    Splits are deterministic by index within each class: train first, then dev, calibration
    and test, with the sizes of ``split_counts``.
    """
    first, last = _names(draw)
    slug = np.asarray(vocab.DIFFICULTY_SLUGS)[draw.klass]
    idx = np.strings.zfill(draw.index.astype(str), 3)
    pid = "bench_" + slug + "_" + idx + "_" + np.strings.lower(first) + "_" + np.strings.lower(last)
    bounds = np.cumsum([split_counts[s] for s in vocab.SPLITS])
    split = np.asarray(vocab.SPLITS)[np.searchsorted(bounds, draw.index, side="left")]
    demo = draw.demo
    frame = pd.DataFrame({
        "seed": np.full(draw.n, seed, dtype=np.int64),
        "persona_id": pid,
        "difficulty": np.asarray(vocab.DIFFICULTIES)[draw.klass],
        "split": split,
        "index": draw.index.astype(np.int64),
        "name": first + " " + last,
        "age": demo["age"].astype(np.int64),
        "gender": np.asarray(vocab.GENDERS)[demo["gender"]],
        "occupation": np.asarray(vocab.OCCUPATIONS)[demo["occupation"]],
        "city": np.asarray(vocab.CITIES)[demo["city"]],
        "relationship": np.asarray(vocab.RELATIONSHIPS)[demo["relationship"]],
        "dietary_restriction": np.asarray(vocab.DIETS)[demo["diet"]],
        "social_preference": np.asarray(vocab.SOCIAL_PREFS)[demo["social_pref"]],
        "close_friends": demo["close_friends"].astype(np.int64),
        "primary_exercise": np.asarray(vocab.EXERCISE_TYPES)[demo["primary_exercise"]],
        "scenario": np.where(draw.scenario >= 0,
                             np.asarray(vocab.SCENARIOS)[np.maximum(draw.scenario, 0)], ""),
        "shift_day": draw.shift_day.astype(np.int64),
    })
    return frame[list(PERSONA_COLUMNS)]
