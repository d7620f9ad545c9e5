"""Stated against revealed habits: what the profile says beside what the 30 days show.

Source: the benchmark specification (seed 000) §2.5 (difficulty classes: a stated-vs-revealed
persona's profile is an idealised self-image; a temporal-shift persona's profile describes
the habits before the shift) and §2.7 (the profile summarises the anchor window).

:func:`habit_tables` turns :func:`profile_vs_actual` into the Walkthrough's display tables:
the columns a reader compares (the profile beside the 30-day mean) and, for temporal-shift
personas, a second narrow table of the means before and after the shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.evaluation.walkthrough.views import _row
from core.testbed.schema import Testbed
from core.testbed.vocab import DAY_INDEX, N_DAYS, minutes_to_clock

__all__ = ["HabitTables", "habit_tables", "profile_vs_actual"]


def profile_vs_actual(tb: Testbed, *, row: int = 0) -> pd.DataFrame:
    """What the profile says (stated) beside what the latent days show (revealed).

    Returns
    -------
    DataFrame
        One row per habit: ``habit``, ``profile`` (the snapshot value), ``actual_30d`` (the
        30-day latent mean; bedtime in hours after midnight of the day, 24.5 = 00:30) and,
        for temporal-shift personas, ``before_shift`` and ``after_shift`` (means over days
        before and from the shift day).
    """
    ev = _row(tb, "events", row)
    pr = _row(tb, "profile", row)
    persona = tb.personas.iloc[row]
    shift = int(persona.get("shift_day", 0) or 0)
    per_week = 7.0

    def stats(mask):
        n = mask.sum()
        return [
            ev["duration_h"][mask].mean(),
            ev["bedtime_min"][mask].mean() / 60.0,
            ev["did_exercise"][mask].sum() / n * per_week,
            ev["meals"][mask].mean(),
            ev["home_cooked"][mask].mean(),
            ev["hours"][mask].mean(),
            (ev["n_act"][mask] > 0).sum() / n * per_week,
        ]

    habits = ["sleep (h/night)", "bedtime", "exercise (days/week)",
              "meals/day", "home-cooked meals/day", "work (h/day, weekends included)",
              "socially active days/week"]
    profile = [pr["duration_h"], pr["bedtime_min"] / 60.0, pr["ex_days_per_week"],
               pr["meals_per_day"], pr["home_cooked_mean"], pr["hours_mean"], pr["social_dpw"]]
    out = pd.DataFrame({"habit": habits, "profile": np.asarray(profile, dtype=float),
                        "actual_30d": stats(np.ones(N_DAYS, dtype=bool))})
    if persona.get("difficulty") == "temporal_shift" and 1 < shift <= N_DAYS:
        before = DAY_INDEX < shift
        out["before_shift"] = stats(before)
        out["after_shift"] = stats(~before)
    return out


def _shown(habits: pd.Series, values: pd.Series) -> list[str]:
    """Bedtimes as clock times, other habits to one decimal, missing values as a dash."""
    return ["—" if pd.isna(v) else minutes_to_clock(round(v * 60)) if h == "bedtime"
            else f"{v:.1f}" for h, v in zip(habits, values, strict=True)]


@dataclass(frozen=True)
class HabitTables:
    """The stated-vs-revealed tables as the page shows them (text cells only).

    Attributes
    ----------
    compare : DataFrame
        ``habit``, ``profile says (days 1–k)``, ``30 days show``: one row per habit.
    shift : DataFrame or None
        ``habit``, ``days 1–(s−1)``, ``days s–30`` for a temporal-shift persona, else
        ``None``.
    """

    compare: pd.DataFrame
    shift: pd.DataFrame | None


def habit_tables(pva: pd.DataFrame, *, anchor_end: int, shift_day: int | None) -> HabitTables:
    """Display tables of :func:`profile_vs_actual`, narrowed to the columns a reader compares.

    Parameters
    ----------
    pva : DataFrame
        From :func:`profile_vs_actual`.
    anchor_end : int
        Last day the profile summarises (its column says so).
    shift_day : int or None
        The first shifted day; with ``before_shift``/``after_shift`` in ``pva`` it names the
        second table's columns.

    Returns
    -------
    HabitTables
        Bedtimes as clock times, the rest to one decimal, "—" where missing.
    """
    if not 1 <= int(anchor_end) <= N_DAYS:
        raise ValueError(f"anchor_end must lie in 1–{N_DAYS}, got {anchor_end}")
    compare = pd.DataFrame({
        "habit": pva["habit"].tolist(),
        f"profile says (days 1–{int(anchor_end)})": _shown(pva["habit"], pva["profile"]),
        "30 days show": _shown(pva["habit"], pva["actual_30d"]),
    })
    shift = None
    if shift_day is not None and "before_shift" in pva and "after_shift" in pva:
        s = int(shift_day)
        shift = pd.DataFrame({
            "habit": pva["habit"].tolist(),
            f"days 1–{s - 1}": _shown(pva["habit"], pva["before_shift"]),
            f"days {s}–{N_DAYS}": _shown(pva["habit"], pva["after_shift"]),
        })
    return HabitTables(compare=compare, shift=shift)
