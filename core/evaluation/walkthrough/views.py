"""One persona's 30 days as the walkthrough shows them: latent days and each source's view.

Source: the benchmark specification (seed 000) §2.1 (the calendar), §2.2 (latent events) and
§2.7 (what each source records of them). Pure: a :class:`~core.testbed.schema.Testbed` slice
in, frames out; :mod:`core.figures.walkthrough` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.testbed.questions import SOURCES
from core.testbed.questions import question as get_question
from core.testbed.schema import Testbed
from core.testbed.vocab import DATES, DAY_INDEX, IS_WEEKEND, N_DAYS, WEEKDAY_NAMES

__all__ = ["METRIC_OF_QUESTION", "DayViews", "day_views", "latent_days", "persona_day_table"]

_P, _L, _S, _O, _D = SOURCES

#: Which per-day quantity the source view shows for each question.
METRIC_OF_QUESTION = MappingProxyType({
    "A1": "sleep_hours", "Ctrl2": "sleep_hours", "C3": "bedtime", "E1": "bedtime",
    "A2": "work_hours", "B3": "work_hours", "F3": "work_hours",
    "A3": "home_meals", "D2": "home_meals", "Ctrl1": "outside_meals",
    "C2": "social", "D1": "social", "F1": "social", "G2": "social",
    "B2": "exercise_min", "E2": "exercise_min", "F2": "exercise_min", "G1": "exercise_min",
})

#: The question's decision threshold on the quantity of its source view, where there is one.
_THRESHOLDS = MappingProxyType({"A1": 7.0, "Ctrl2": 6.0, "E1": 24.0, "A2": 9.0, "G1": 30.0})


def _row(tb: Testbed, name: str, row: int) -> dict[str, np.ndarray]:
    if not 0 <= row < tb.n:
        raise ValueError(f"row {row} out of range for a testbed of {tb.n} personas")
    return {k: v[row] for k, v in tb.layer(name).items()}


def latent_days(tb: Testbed, *, row: int = 0) -> pd.DataFrame:
    """The 30 latent days (L2) of one persona, with calendar columns.

    Returns
    -------
    DataFrame
        30 rows: ``day_index``, ``date``, ``weekday``, ``weekend``, every event field, and
        ``bedtime_h`` (bedtime minutes ÷ 60, so 24.5 is 00:30 the next morning).
    """
    ev = _row(tb, "events", row)
    weekday = [WEEKDAY_NAMES[_weekday(i)][:3] for i in range(N_DAYS)]
    df = pd.DataFrame({"day_index": DAY_INDEX.astype(np.int64), "date": list(DATES),
                       "weekday": weekday, "weekend": IS_WEEKEND.copy()})
    for k, v in ev.items():
        df[k] = v
    df["bedtime_h"] = ev["bedtime_min"].astype(float) / 60.0
    return df


def _weekday(i: int) -> int:
    # day 1 (index 0) is a Saturday (spec §2.1)
    return (5 + i) % 7


def persona_day_table(tb: Testbed, *, row: int = 0) -> pd.DataFrame:
    """One wide row per day: the latent events and every source's day-level fields.

    Source columns are prefixed (``planner.``, ``self_report.``, ``objective.``,
    ``device.``); the profile has no days and is left out. Suitable for a CSV download.
    """
    df = latent_days(tb, row=row)
    df = df.rename(columns={c: f"latent.{c}" for c in df.columns
                            if c not in ("day_index", "date", "weekday", "weekend")})
    for name in ("planner", "self_report", "objective", "device"):
        for k, v in _row(tb, name, row).items():
            df[f"{name}.{k}"] = v
    return df


@dataclass(frozen=True)
class DayViews:
    """Each source's view of the same 30 days, for the quantity a question is about.

    Attributes
    ----------
    metric : str
        Key of the quantity (a value of :data:`METRIC_OF_QUESTION`).
    title, unit : str
        What the latent row shows and its unit.
    threshold : float or None
        The question's decision threshold on that unit, if it has one.
    frame : DataFrame
        Long table, 6 × 30 rows: ``source`` (``latent`` first, then :data:`SOURCES`),
        ``day_index``, ``value`` (float, NaN = nothing recorded), ``available`` (the
        source's day-level record exists), ``truth`` (the latent value that day),
        ``comparable`` (the source reports the latent quantity in the same unit), ``kind``
        (``daily`` / ``snapshot`` / ``absent``) and ``quantity`` (what the value is).
    anchor_end : int
        Last day summarised by the profile snapshot.
    shift_day : int or None
        First shifted day for temporal-shift personas.
    """

    metric: str
    title: str
    unit: str
    threshold: float | None
    frame: pd.DataFrame
    anchor_end: int
    shift_day: int | None


def _metric_columns(metric: str, ev, pr, pl, sr, ob, dv):
    """(title, unit, latent, {source: (values, quantity, comparable, kind)})."""
    nan = np.full(N_DAYS, np.nan)
    avail_o, avail_d = ob["available"], dv["available"]

    def const(x):
        return np.full(N_DAYS, float(x))

    def absent(what):
        return nan, f"no {what} records", False, "absent"

    if metric == "sleep_hours":
        return ("Sleep (h)", "h", ev["duration_h"].astype(float), {
            _P: (const(pr["duration_h"]), "snapshot mean sleep (h)", True, "snapshot"),
            _L: (pl["duration_h"].astype(float), "target sleep (h)", True, "daily"),
            _S: (sr["duration_h"].astype(float), "reported sleep (h)", True, "daily"),
            _O: absent("sleep"),
            _D: (np.where(avail_d, dv["duration_h"], np.nan), "tracked sleep (h)", True, "daily"),
        })
    if metric == "bedtime":
        def hours(x, ok=True):
            return np.where(ok & (x >= 0), x.astype(float) / 60.0, np.nan)
        return ("Bedtime (h after midnight of the day; 24 = midnight)", "h",
                ev["bedtime_min"].astype(float) / 60.0, {
                    _P: (const(pr["bedtime_min"] / 60.0), "snapshot mean bedtime", True,
                         "snapshot"),
                    _L: (hours(pl["bedtime_min"]), "target bedtime", True, "daily"),
                    _S: (hours(sr["bedtime_min"]), "reported bedtime", True, "daily"),
                    _O: absent("sleep"),
                    _D: (hours(dv["bedtime_min"], avail_d), "tracked bedtime", True, "daily"),
                })
    if metric == "work_hours":
        focus = np.where(avail_d & (dv["focus_min"] >= 0), dv["focus_min"] / 60.0, np.nan)
        return ("Work (h)", "h", ev["hours"].astype(float), {
            _P: (const(pr["hours_mean"]), "snapshot mean work hours/day", True, "snapshot"),
            _L: (pl["hours_limit"].astype(float), "planned hours limit", True, "daily"),
            _S: (sr["hours"].astype(float), "reported work hours", True, "daily"),
            _O: (np.where(avail_o, ob["work_block_min"] / 60.0, np.nan),
                 "calendar work block (h)", True, "daily"),
            _D: (focus, "focus time (h); gaps = no work-session field", False, "daily"),
        })
    if metric in ("home_meals", "outside_meals"):
        delivery = np.where(avail_o, np.maximum(ob["pay_delivery"], 0), np.nan).astype(float)
        if metric == "home_meals":
            return ("Home-cooked meals", "meals", ev["home_cooked"].astype(float), {
                _P: (const(pr["home_cooked_mean"]), "snapshot home-cooked meals/day", True,
                     "snapshot"),
                _L: (pl["home_priority"].astype(float), "home cooking prioritised (1 = yes)",
                     False, "daily"),
                _S: (sr["home_cooked"].astype(float), "reported home-cooked meals", True,
                     "daily"),
                _O: (delivery, "food-delivery payments", False, "daily"),
                _D: absent("diet"),
            })
        return ("Meals not cooked at home", "meals",
                (ev["meals"] - ev["home_cooked"]).astype(float), {
                    _P: (const(pr["meals_per_day"] - pr["home_cooked_mean"]),
                         "snapshot outside meals/day", True, "snapshot"),
                    _L: ((~pl["home_priority"]).astype(float),
                         "home cooking not prioritised (1 = yes)", False, "daily"),
                    _S: ((sr["meals"] - sr["home_cooked"]).astype(float),
                         "reported outside meals", True, "daily"),
                    _O: (delivery, "food-delivery payments", False, "daily"),
                    _D: absent("diet"),
                })
    if metric == "social":
        return ("Social activities", "activities", ev["n_act"].astype(float), {
            _P: (const(pr["social_dpw"] / 7.0), "snapshot active days/week ÷ 7", False,
                 "snapshot"),
            _L: (pl["social_intent"].astype(float), "social activity planned (1 = yes)", False,
                 "daily"),
            _S: (sr["n_act"].astype(float), "reported activities", True, "daily"),
            _O: (np.where(avail_o, ob["social_event"], np.nan).astype(float),
                 "calendar social event (1 = yes)", False, "daily"),
            _D: absent("social"),
        })
    if metric == "exercise_min":
        return ("Exercise (min)", "min", ev["exercise_min"].astype(float), {
            _P: (const(pr["ex_session_min"]), "snapshot session length (min)", False,
                 "snapshot"),
            _L: (pl["ex_min"].astype(float), "planned minutes", True, "daily"),
            _S: (sr["exercise_min"].astype(float), "reported minutes", True, "daily"),
            _O: (np.where(avail_o, ob["exercise_session_min"], np.nan).astype(float),
                 "calendar exercise session (min)", True, "daily"),
            _D: (np.where(avail_d, np.where(dv["workout"], dv["active_min"], 0), np.nan)
                 .astype(float), "active minutes on detected workouts", True, "daily"),
        })
    raise ValueError(f"unknown metric {metric!r}")


def day_views(tb: Testbed, *, qid: str, row: int = 0) -> DayViews:
    """Each source's view of one persona's 30 days, for the quantity question ``qid`` reads.

    Parameters
    ----------
    tb : Testbed
    qid : str
        The question; picks the quantity (:data:`METRIC_OF_QUESTION`).
    row : int, default=0
        The persona's position in ``tb``.

    Returns
    -------
    DayViews
    """
    get_question(qid)
    metric = METRIC_OF_QUESTION[qid]
    layers = [_row(tb, name, row) for name in
              ("events", "profile", "planner", "self_report", "objective", "device")]
    ev, pr, _, _, ob, dv = layers
    title, unit, latent, per_source = _metric_columns(metric, *layers)
    avail = {_O: ob["available"].astype(bool), _D: dv["available"].astype(bool)}
    parts = [pd.DataFrame({"source": "latent", "day_index": DAY_INDEX.astype(np.int64),
                           "value": latent, "available": True, "truth": latent,
                           "comparable": True, "kind": "daily", "quantity": title})]
    for src in SOURCES:
        values, quantity, comparable, kind = per_source[src]
        parts.append(pd.DataFrame({
            "source": src, "day_index": DAY_INDEX.astype(np.int64),
            "value": np.asarray(values, dtype=float),
            "available": avail.get(src, np.ones(N_DAYS, dtype=bool)),
            "truth": latent, "comparable": comparable, "kind": kind, "quantity": quantity,
        }))
    frame = pd.concat(parts, ignore_index=True)
    persona = tb.personas.iloc[row]
    shift = int(persona.get("shift_day", 0) or 0)
    return DayViews(
        metric=metric, title=title, unit=unit, threshold=_THRESHOLDS.get(qid),
        frame=frame, anchor_end=int(pr["anchor_end"]),
        shift_day=shift if persona.get("difficulty") == "temporal_shift" and shift > 0 else None,
    )
