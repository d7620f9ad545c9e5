"""Tests of the SQL ground truth (:mod:`core.testbed.labels_sql`) on hand-built tiny stores.

Each test builds an in-memory DuckDB store of 1–3 personas × 30 days from neutral defaults,
overrides the days that matter and checks one question's label at and around its thresholds
(the benchmark specification §2.8).
"""

from __future__ import annotations

import functools

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.testbed import schema
from core.testbed.labels_sql import ground_truth_query, sql_ground_truth
from core.testbed.questions import QIDS, question

DAYS = list(range(1, 31))
WEEKEND = [1, 2, 8, 9, 15, 16, 22, 23, 29, 30]  # spec §2.1
WEEKDAYS = [d for d in DAYS if d not in WEEKEND]

_SQL_TYPES = {"?": "BOOLEAN", "i1": "TINYINT", "i2": "SMALLINT", "i4": "INTEGER",
              "f8": "DOUBLE"}

# Neutral defaults: every question lands on a known "quiet" label.
EVENT_DEFAULTS = {
    "bedtime_min": 1380, "duration_h": 7.5, "did_exercise": False, "intentional": False,
    "hours": 0.0, "overtime": False, "worked_on_weekend": False, "n_act": 0,
    "supporting_other": False, "tag_social": False, "tag_work_stress": False,
    "meals": 3, "home_cooked": 3,
}
PLANNER_DEFAULTS = {"bedtime_min": 1380, "social_intent": False, "ex_intended": False}
DEVICE_DEFAULTS = {"available": True, "workout": False}
OBJECTIVE_DEFAULTS = {"available": True}
PROFILE_DEFAULTS = {"ex_days_per_week": 0.0, "afterhours_style": 0, "meals_per_day": 3.0,
                    "home_cooked_mean": 3.0}

QUIET = {
    "A1": "20_or_more", "A2": "0_to_3", "A3": "70_or_more", "B2": "within_1_day",
    "B3": "matches", "C2": "no_plans", "C3": "within_20min_more_than_50pct",
    "D1": "stayed_same", "D2": "within_1", "E1": "no_late_nights", "E2": "between_30_60",
    "F1": "no_social_activities", "F2": "inactive_confirmed", "F3": "truly_off",
    "G1": "no_activity", "G2": "no_meetings", "Ctrl1": "0_to_1_days", "Ctrl2": "0_nights",
}


def _column(spec, default) -> list:
    """Expand an override: a scalar, a ``{day: value}`` dict (others default) or 30 values.

    A pandas extension array (e.g. ``Int64`` with missing values) is passed through as is.
    """
    if isinstance(spec, dict):
        return [spec.get(d, default) for d in DAYS]
    if isinstance(spec, pd.api.extensions.ExtensionArray):
        assert len(spec) == len(DAYS)
        return spec
    if isinstance(spec, list | tuple | np.ndarray):
        assert len(spec) == len(DAYS)
        return list(spec)
    return [spec] * len(DAYS)


def on(days, value, default=None) -> dict:
    """``{day: value}`` for every day in ``days`` (helper for overrides)."""
    return {d: value for d in days} if default is None else {
        d: (value if d in days else default) for d in DAYS}


def persona(pid="bench_stable_001_a_b", seed=1, *, events=None, planner=None, device=None,
            objective=None, profile=None, drop_days=()) -> dict:
    """One persona's tables as frames; overrides replace the neutral defaults column-wise."""
    frames = {}
    keep = [d for d in DAYS if d not in set(drop_days)]
    for name, defaults, over in (("events", EVENT_DEFAULTS, events),
                                 ("src_planner", PLANNER_DEFAULTS, planner),
                                 ("src_device", DEVICE_DEFAULTS, device),
                                 ("src_objective", OBJECTIVE_DEFAULTS, objective)):
        cols = {k: _column((over or {}).get(k, v), v) for k, v in defaults.items()}
        for k, v in (over or {}).items():
            if k not in cols:
                cols[k] = _column(v, None)
        df = pd.DataFrame({"seed": seed, "persona_id": pid, "day_index": DAYS,
                           "is_weekend": [d in WEEKEND for d in DAYS], **cols})
        frames[name] = df[df["day_index"].isin(keep)].reset_index(drop=True)
    prof = {**PROFILE_DEFAULTS, **(profile or {})}
    frames["src_profile"] = pd.DataFrame([{"seed": seed, "persona_id": pid, **prof}])
    frames["personas"] = pd.DataFrame([{"seed": seed, "persona_id": pid,
                                        "difficulty": "stable", "split": "train"}])
    return frames


_FIELDS = {"events": schema.EVENT_FIELDS, "src_planner": schema.PLANNER_FIELDS,
           "src_device": schema.DEVICE_FIELDS, "src_objective": schema.OBJECTIVE_FIELDS,
           "src_profile": schema.PROFILE_FIELDS}


@functools.cache
def _database() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB for the whole module: opening one costs ~40 ms, and this module
    builds a store for each of its ~250 cases (tables are replaced by every :func:`store`)."""
    return duckdb.connect()


def store(*personas: dict) -> duckdb.DuckDBPyConnection:
    """The module's in-memory DuckDB holding these personas only, with the store's table names
    and column types (every call replaces the six tables)."""
    con = _database().cursor()
    for table in ("personas", "events", "src_planner", "src_device", "src_objective",
                  "src_profile"):
        df = pd.concat([p[table] for p in personas], ignore_index=True)
        fields = _FIELDS.get(table, {})
        casts = []
        for col in df.columns:
            if col == "seed":
                typ = "INTEGER"
            elif col == "day_index":
                typ = "SMALLINT"
            elif col == "is_weekend":
                typ = "BOOLEAN"
            elif col in fields:
                typ = _SQL_TYPES[fields[col][0]]
            else:
                typ = "VARCHAR"
            casts.append(f'CAST("{col}" AS {typ}) AS "{col}"')
        con.register("frame", df)
        con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT {', '.join(casts)} FROM frame")
        con.unregister("frame")
    return con


def answers(*personas: dict) -> dict[str, str]:
    """Labels of the first persona, keyed by question id."""
    con = store(*personas)
    df = sql_ground_truth(con.cursor())
    first = df[df["persona_id"] == personas[0]["personas"]["persona_id"].iloc[0]]
    first = first[first["seed"] == personas[0]["personas"]["seed"].iloc[0]]
    return dict(zip(first["question_id"], first["answer"], strict=True))


def label(qid: str, **kw) -> str:
    """Label of question ``qid`` for a single persona built with ``persona(**kw)``."""
    return answers(persona(**kw))[qid]


# --------------------------------------------------------------------------- structure


def test_quiet_persona_labels():
    assert answers(persona()) == QUIET


def test_output_shape_order_and_types():
    ps = [persona("bench_stated_002_x_y", 2), persona("bench_shift_001_c_d", 1),
          persona("bench_stable_001_a_b", 1)]
    con = store(*ps)
    df = sql_ground_truth(con.cursor())
    assert list(df.columns) == ["seed", "persona_id", "question_id", "answer"]
    assert len(df) == 18 * 3
    assert df["seed"].dtype == np.int64
    assert list(df.index) == list(range(len(df)))
    keys = list(zip(df["seed"], df["persona_id"], strict=True))
    assert keys == sorted(keys)
    for _, grp in df.groupby(["seed", "persona_id"], sort=False):
        assert list(grp["question_id"]) == list(QIDS)
        for qid, ans in zip(grp["question_id"], grp["answer"], strict=True):
            assert ans in question(qid).labels
    assert all(isinstance(x, str) for x in df["persona_id"])
    # the connection is free again after the call
    assert con.execute("SELECT count(*) FROM personas").fetchone() == (3,)


def test_seeds_and_personas_do_not_mix():
    busy = {"n_act": on(range(1, 31), 1), "supporting_other": on([1, 2, 3], True, False)}
    a = persona("bench_stable_001_a_b", 1, events=busy)
    b = persona("bench_stable_001_a_b", 2)
    c = persona("bench_stable_002_c_d", 1, events={"duration_h": 5.0})
    con = store(a, b, c)
    df = sql_ground_truth(con.cursor()).set_index(["seed", "persona_id", "question_id"])
    assert df.loc[(1, "bench_stable_001_a_b", "G2"), "answer"] == "voluntary_70plus"
    assert df.loc[(2, "bench_stable_001_a_b", "G2"), "answer"] == "no_meetings"
    assert df.loc[(1, "bench_stable_002_c_d", "A1"), "answer"] == "fewer_than_10"
    assert df.loc[(1, "bench_stable_002_c_d", "G2"), "answer"] == "no_meetings"
    assert df.loc[(1, "bench_stable_001_a_b", "A1"), "answer"] == "20_or_more"


def test_query_is_constant_text():
    q = ground_truth_query()
    assert q == ground_truth_query()
    assert q.count("UNION ALL") == len(QIDS) - 1


def test_stored_weekend_flag_is_not_read():
    """Weekend days come from the §2.1 calendar, not from events.is_weekend."""
    p = persona(events={"hours": on([1, 2, 8, 9], 10.0, 0.0),
                        "worked_on_weekend": on([1, 2, 8, 9], True, False)})
    p["events"]["is_weekend"] = False
    assert answers(p)["B3"] == "does_not_match"   # strict, w = 4 of 10
    assert answers(p)["A2"] == "4_to_7"


# --------------------------------------------------------------------------- A


@pytest.mark.parametrize(("n_good", "good", "bad", "expected"), [
    (20, 7.0, 6.9, "20_or_more"),
    (19, 7.0, 6.9, "10_to_19"),
    (10, 7.0, 6.9, "10_to_19"),
    (9, 7.0, 6.9, "fewer_than_10"),
    (0, 7.0, 6.9, "fewer_than_10"),
    (30, 7.0, 6.9, "20_or_more"),
    (20, 8.3, 3.0, "20_or_more"),
])
def test_a1(n_good, good, bad, expected):
    assert label("A1", events={"duration_h": on(DAYS[:n_good], good, bad)}) == expected


def _a2(weekday_long, weekend_long=(), weekend_worked=True, long_h=9.1):
    hours = {d: 8.0 for d in WEEKDAYS}
    hours.update({d: long_h for d in WEEKDAYS[:weekday_long]})
    hours.update({d: 9.5 for d in weekend_long})
    worked = {d: weekend_worked for d in weekend_long}
    return label("A2", events={"hours": hours, "worked_on_weekend": worked or False})


@pytest.mark.parametrize(("weekday_long", "expected"), [
    (8, "8_or_more"), (7, "4_to_7"), (4, "4_to_7"), (3, "0_to_3"), (0, "0_to_3"),
    (20, "8_or_more"),
])
def test_a2_thresholds(weekday_long, expected):
    assert _a2(weekday_long) == expected


def test_a2_exactly_nine_hours_is_not_long():
    assert _a2(10, long_h=9.0) == "0_to_3"


def test_a2_weekend_counts_only_when_worked():
    assert _a2(7, weekend_long=[1]) == "8_or_more"
    assert _a2(7, weekend_long=[1], weekend_worked=False) == "4_to_7"
    assert _a2(3, weekend_long=[1, 2, 29, 30]) == "4_to_7"
    assert _a2(3, weekend_long=[1, 2, 29, 30], weekend_worked=False) == "0_to_3"


@pytest.mark.parametrize(("meals", "home", "expected"), [
    (1, 21, "70_or_more"),     # 21/30 = 0.7 exactly
    (1, 20, "40_to_69"),
    (1, 12, "40_to_69"),       # 0.4 exactly
    (1, 11, "less_than_40"),
    (3, 63, "70_or_more"),     # 63/90 = 0.7
    (3, 62, "40_to_69"),
    (3, 36, "40_to_69"),       # 36/90 = 0.4
    (3, 35, "less_than_40"),
    (0, 0, "less_than_40"),    # no meals -> r = 0
])
def test_a3(meals, home, expected):
    # spread `home` home-cooked meals over the days, at most `meals` per day
    left, hc = home, {}
    for d in DAYS:
        hc[d] = min(meals, left)
        left -= hc[d]
    assert left == 0
    assert label("A3", events={"meals": meals, "home_cooked": hc}) == expected


def test_a3_ratio_is_over_sums_not_daily_shares():
    # 15 days 1 of 1 home, 15 days 0 of 4 home: mean daily share 0.5, pooled ratio 15/75 = 0.2
    ev = {"meals": on(DAYS[:15], 1, 4), "home_cooked": on(DAYS[:15], 1, 0)}
    assert label("A3", events=ev) == "less_than_40"


# --------------------------------------------------------------------------- B2


@pytest.mark.parametrize(("n_ex", "p", "expected"), [
    (7, 1.6, "within_1_day"),
    (7, 5.0, "more_than_1_below"),       # stated persona's idealised 5.0
    (21, 3.0, "more_than_1_above"),      # a = 4.9
    (0, 1.0, "within_1_day"),            # delta = -1.0 exactly
    (0, 1.1, "more_than_1_below"),
    (30, 6.0, "within_1_day"),           # a = 7.0, delta = 1.0 exactly
    (30, 5.9, "more_than_1_above"),
    (9, 1.1, "within_1_day"),            # a = 2.1, delta = 1.0
    (9, 3.1, "within_1_day"),            # delta = -1.0
    (6, 0.4, "within_1_day"),            # delta = 1.0 in float
    (3, 1.7, "within_1_day"),            # delta = -0.9999999999999999
    # DOUBLE artefacts of a = n / (30 / 7) - p, kept as the spec formula computes them:
    (12, 1.8, "more_than_1_above"),      # delta = 1.0000000000000002
    (21, 3.9, "more_than_1_above"),      # delta = 1.0000000000000004
    (12, 3.8, "within_1_day"),           # delta = -0.9999999999999996
])
def test_b2(n_ex, p, expected):
    delta = n_ex / (30 / 7) - p  # the Python float order the SQL mirrors
    assert (abs(delta) <= 1) == (expected == "within_1_day")
    ev = {"did_exercise": on(DAYS[:n_ex], True, False)}
    assert label("B2", events=ev, profile={"ex_days_per_week": p}) == expected


def test_b2_missing_profile_value():
    assert label("B2", profile={"ex_days_per_week": np.nan}) == "no_frequency_described"


def test_b2_counts_all_thirty_days():
    # 14 exercise days anywhere in the window -> a = 3.27; p = 3.3 is within
    ev = {"did_exercise": on(DAYS[16:], True, False)}
    assert label("B2", events=ev, profile={"ex_days_per_week": 3.3}) == "within_1_day"
    assert label("B2", events=ev, profile={"ex_days_per_week": 1.5}) == "more_than_1_above"


# --------------------------------------------------------------------------- B3


def _b3(style, worked_days, drop_days=(), weekday_work=False):
    ev = {"worked_on_weekend": on(worked_days, True, False),
          "hours": {**({d: 8.0 for d in WEEKDAYS} if weekday_work else {}),
                    **{d: 4.0 for d in worked_days}}}
    return label("B3", events=ev, profile={"afterhours_style": style}, drop_days=drop_days)


@pytest.mark.parametrize(("style", "w", "expected"), [
    (-1, 0, "no_approach_described"),
    (-1, 5, "no_approach_described"),
    (0, 0, "matches"),
    (0, 1, "matches"),            # 0.10 <= 0.15
    (0, 2, "does_not_match"),     # 0.20
    (0, 10, "does_not_match"),
    (1, 0, "does_not_match"),     # flexible with w = 0 and 10 weekend days
    (1, 1, "matches"),
    (1, 10, "matches"),
    (2, 4, "matches"),            # other style: 0.4 < 0.5
    (2, 5, "does_not_match"),     # 0.5
])
def test_b3(style, w, expected):
    assert _b3(style, WEEKEND[:w]) == expected


def test_b3_weekday_work_is_ignored():
    assert _b3(0, [], weekday_work=True) == "matches"
    assert _b3(1, [], weekday_work=True) == "does_not_match"


def test_b3_flexible_with_fewer_than_four_weekend_days():
    # only 3 weekend days present (others dropped): flexible with w = 0 still matches
    drop = [1, 2, 8, 9, 15, 16, 22]
    assert _b3(1, [], drop_days=drop) == "matches"
    assert _b3(1, [], drop_days=drop[:6]) == "does_not_match"  # 4 weekend days left
    # strict: 1 worked of 4 weekend days = 0.25 > 0.15
    assert _b3(0, [29], drop_days=drop[:6]) == "does_not_match"


def test_b3_profile_null_style():
    p = persona(profile={"afterhours_style": -1})
    assert answers(p)["B3"] == "no_approach_described"


# --------------------------------------------------------------------------- C2

WIN14 = list(range(17, 31))


def _c2(plan_days, social_days):
    return label("C2", planner={"social_intent": on(plan_days, True, False)},
                 events={"n_act": on(social_days, 1, 0)})


@pytest.mark.parametrize(("n_plan", "n_hit", "expected"), [
    (4, 1, "25_to_50_pct"),      # 0.25 exactly
    (4, 2, "25_to_50_pct"),      # 0.5 exactly
    (4, 3, "above_50_pct"),
    (9, 5, "above_50_pct"),      # 0.556
    (8, 4, "25_to_50_pct"),
    (9, 2, "below_25_pct"),      # 0.222
    (4, 0, "below_25_pct"),
    (14, 7, "25_to_50_pct"),
    (14, 8, "above_50_pct"),
    (13, 3, "below_25_pct"),     # 0.2308
    (12, 3, "25_to_50_pct"),
    (1, 1, "above_50_pct"),
])
def test_c2_thresholds(n_plan, n_hit, expected):
    plan = WIN14[:n_plan]
    assert _c2(plan, plan[:n_hit]) == expected


def test_c2_no_plans_in_window():
    assert _c2(list(range(1, 17)), list(range(1, 31))) == "no_plans"


def test_c2_window_and_plan_only():
    plan = WIN14[:4]
    # social on non-plan days and plan days before day 17 do not count
    assert _c2(plan + [10, 16], [10, 16] + WIN14[4:]) == "below_25_pct"
    # two activities on a plan day still count once
    ev = {"n_act": on(plan[:2], 2, 0)}
    assert label("C2", planner={"social_intent": on(plan, True, False)},
                 events=ev) == "25_to_50_pct"


# --------------------------------------------------------------------------- C3


def _c3(deltas: dict, target=1380, planner_bed=None):
    bed = {d: target + dl for d, dl in deltas.items()}
    return label("C3", events={"bedtime_min": on([], 0, target) | bed},
                 planner={"bedtime_min": planner_bed if planner_bed is not None else target})


@pytest.mark.parametrize(("late", "early", "expected"), [
    (0, 0, "within_20min_more_than_50pct"),
    (8, 0, "later_more_than_50pct"),
    (7, 0, "within_20min_more_than_50pct"),   # 0.5 is not > 0.5
    (7, 7, "within_20min_more_than_50pct"),   # tie
    (0, 8, "earlier_more_than_50pct"),
    (0, 7, "within_20min_more_than_50pct"),
    (6, 8, "earlier_more_than_50pct"),
    (14, 0, "later_more_than_50pct"),
])
def test_c3_shares(late, early, expected):
    deltas = {d: 45 for d in WIN14[:late]}
    deltas.update({d: -45 for d in WIN14[late:late + early]})
    assert _c3(deltas) == expected


def test_c3_delta_thresholds_are_strict():
    assert _c3({d: 20 for d in WIN14}) == "within_20min_more_than_50pct"
    assert _c3({d: 21 for d in WIN14}) == "later_more_than_50pct"
    assert _c3({d: -20 for d in WIN14}) == "within_20min_more_than_50pct"
    assert _c3({d: -21 for d in WIN14}) == "earlier_more_than_50pct"


def test_c3_window_and_cross_midnight():
    # late nights on days 1-16 are outside the window
    assert _c3({d: 60 for d in range(1, 17)}) == "within_20min_more_than_50pct"
    # target 23:50 (1430), actual 00:20 (1460): delta 30, late across midnight
    assert _c3({d: 30 for d in WIN14}, target=1430) == "later_more_than_50pct"
    # target 00:10 (1450), actual 23:40 (1420): delta -30, early across midnight
    assert _c3({d: -30 for d in WIN14}, target=1450) == "earlier_more_than_50pct"


def test_c3_no_targets_and_partial_pairing():
    missing = pd.array([None] * 30, dtype="Int64")
    assert _c3({}, planner_bed=missing) == "no_targets"
    # targets only on days 1-16: nothing paired in the window
    bed = pd.array([1380 if d < 17 else None for d in DAYS], dtype="Int64")
    assert _c3({}, planner_bed=bed) == "no_targets"
    # 3 paired days in the window (20-22); late nights on unpaired days 23-24 do not count
    bed = pd.array([1380 if d in (20, 21, 22) else None for d in DAYS], dtype="Int64")
    assert _c3({20: 30, 23: 30, 24: 30}, planner_bed=bed) == "within_20min_more_than_50pct"
    assert _c3({20: 30, 21: 30}, planner_bed=bed) == "later_more_than_50pct"  # 2/3
    assert _c3({20: -30, 21: -30, 23: 30}, planner_bed=bed) == "earlier_more_than_50pct"


# --------------------------------------------------------------------------- D1


def _d1(early: dict, late: dict):
    return label("D1", events={"n_act": {**early, **late}})


def _spread(days, total):
    """Put ``total`` activities on ``days``, at most 2 per day."""
    out = {}
    for d in days:
        out[d] = min(2, total)
        total -= out[d]
    assert total == 0
    return out


EARLY, LATE = list(range(1, 15)), list(range(15, 31))


@pytest.mark.parametrize(("e", "l", "expected"), [
    (4, 7, "increased"),      # delta = 17/112 = 0.1518
    (5, 8, "stayed_same"),    # 16/112 = 0.1429
    (3, 1, "decreased"),      # -17/112
    (2, 0, "stayed_same"),    # -16/112
    (0, 0, "stayed_same"),
    (0, 3, "increased"),      # 0.1875
    (14, 16, "stayed_same"),
    (28, 0, "decreased"),
])
def test_d1(e, l, expected):
    assert _d1(_spread(EARLY, e), _spread(LATE, l)) == expected


def test_d1_counts_activities_not_days():
    # early: one day with 2 activities + one with 1 = 3 activities on 2 days; late: 1
    # activities: 1/16 - 3/14 = -0.152 -> decreased (days would give -0.080 -> stayed_same)
    assert _d1({3: 2, 4: 1}, {20: 1}) == "decreased"


def test_d1_split_is_day_14_15():
    # 3 activities on day 14 (early) vs day 15 (late)
    assert _d1({14: 2, 13: 1}, {}) == "decreased"      # early 3/14 = 0.214
    assert _d1({}, {15: 2, 16: 1}) == "increased"      # late 3/16 = 0.1875


# --------------------------------------------------------------------------- D2


@pytest.mark.parametrize(("meals", "home", "pm", "ph", "expected"), [
    (on([], 0, 3), on([], 0, 2), 3.0, 3.0, "within_1"),              # 1.0 exactly
    (on([], 0, 3), on([5], 1, 2), 3.0, 3.0, "differs_more_than_1"),  # 1.0333
    (on(DAYS[:15], 4, 3), on(DAYS[:15], 2, 3), 3.0, 3.0, "within_1"),  # 0.5 + 0.5
    (on(DAYS[:16], 4, 3), on(DAYS[:15], 2, 3), 3.0, 3.0, "differs_more_than_1"),
    (on([], 0, 3), on([], 0, 3), 3.0, 3.0, "within_1"),
    (on([], 0, 3), on([], 0, 3), 4.1, 3.0, "differs_more_than_1"),
    (on([], 0, 3), on([], 0, 3), 2.5, 2.5, "within_1"),              # 0.5 + 0.5
    # DOUBLE artefacts kept as the spec formula computes them:
    (on([], 0, 1), on(DAYS[:6], 1, 0), 1.1, 1.1, "differs_more_than_1"),  # 1.0000000000000002
    (on([], 0, 1), on([], 0, 0), 1.4, 0.6, "within_1"),                   # 0.9999999999999999
])
def test_d2(meals, home, pm, ph, expected):
    mm = sum(meals.values()) / 30
    mh = sum(home.values()) / 30
    assert ((abs(mh - ph) + abs(mm - pm)) > 1) == (expected == "differs_more_than_1")
    got = label("D2", events={"meals": meals, "home_cooked": home},
                profile={"meals_per_day": pm, "home_cooked_mean": ph})
    assert got == expected


@pytest.mark.parametrize("prof", [
    {"meals_per_day": np.nan}, {"home_cooked_mean": np.nan},
    {"meals_per_day": np.nan, "home_cooked_mean": np.nan},
])
def test_d2_no_baseline(prof):
    assert label("D2", profile=prof) == "no_baseline"


# --------------------------------------------------------------------------- E1


def _e1(late_nights: dict, bed=1450, other=None):
    """``late_nights``: day -> (work_stress, social) tags on a late night."""
    bedtime = {d: bed for d in late_nights}
    tags_w = {d: t[0] for d, t in late_nights.items()}
    tags_s = {d: t[1] for d, t in late_nights.items()}
    for d, t in (other or {}).items():
        tags_w[d], tags_s[d] = t
    return label("E1", events={"bedtime_min": bedtime or 1380, "tag_work_stress": tags_w,
                               "tag_social": tags_s})


W, S, B, N = (True, False), (False, True), (True, True), (False, False)


@pytest.mark.parametrize(("tags", "expected"), [
    ([], "no_late_nights"),
    ([W, W, W, N], "work_activity"),
    ([W, W, S, S], "no_single_factor"),   # 0.5 / 0.5
    ([W, S, S, S], "social_activity"),
    ([S, S, N, N], "no_single_factor"),
    ([S, S, S, N], "social_activity"),
    ([N, N, N], "no_single_factor"),
    ([B, B, B, B], "work_activity"),      # both tags count as work
    ([B, B, S, N], "no_single_factor"),   # work 2/4; social only 1/4 (work first)
    ([B, S, S, N], "no_single_factor"),   # work 1/4; social 2/4
    ([B, S, S, S], "social_activity"),    # social 3/4
    ([W], "work_activity"),
])
def test_e1(tags, expected):
    assert _e1(dict(zip(range(3, 3 + len(tags)), tags, strict=True))) == expected


def test_e1_midnight_is_not_late_and_other_nights_ignored():
    assert _e1({5: W, 6: W}, bed=1440) == "no_late_nights"
    assert _e1({5: W, 6: W}, bed=1441) == "work_activity"
    # tags on on-time nights do not count: 1 late night with social, many work-tagged others
    assert _e1({5: S}, other={d: W for d in range(10, 20)}) == "social_activity"


# --------------------------------------------------------------------------- E2


def _e2(n_skip, n_busy, *, busy_hours=9.5, busy_overtime=False, planned_done=0,
        unplanned_rest=0):
    skip = DAYS[:n_skip]
    done = DAYS[n_skip:n_skip + planned_done]
    rest = DAYS[n_skip + planned_done:n_skip + planned_done + unplanned_rest]
    hours = {d: 7.0 for d in DAYS}
    ot = {d: False for d in DAYS}
    for d in skip[:n_busy]:
        hours[d] = busy_hours
        ot[d] = busy_overtime
    for d in done + rest:
        hours[d] = 12.0
        ot[d] = True
    return label("E2", planner={"ex_intended": on(skip + done, True, False)},
                 events={"did_exercise": on(done, True, False), "hours": hours,
                         "overtime": ot})


@pytest.mark.parametrize(("n_skip", "n_busy", "expected"), [
    (0, 0, "between_30_60"),
    (2, 0, "between_30_60"),     # <= 2 skip days -> substantive default
    (2, 2, "between_30_60"),
    (3, 0, "no_fewer_than_30"),
    (3, 3, "yes_more_than_60"),
    (3, 1, "between_30_60"),     # 0.333
    (5, 3, "between_30_60"),     # 0.6 exactly
    (5, 4, "yes_more_than_60"),
    (10, 3, "between_30_60"),    # 0.3 exactly
    (10, 2, "no_fewer_than_30"),
    (10, 6, "between_30_60"),    # 0.6
    (10, 7, "yes_more_than_60"),
])
def test_e2_thresholds(n_skip, n_busy, expected):
    assert _e2(n_skip, n_busy) == expected


def test_e2_busy_definition():
    assert _e2(4, 4, busy_hours=8.5) == "no_fewer_than_30"      # 8.5 is not > 8.5
    assert _e2(4, 4, busy_hours=8.6) == "yes_more_than_60"
    assert _e2(4, 4, busy_hours=8.0, busy_overtime=True) == "yes_more_than_60"


def test_e2_only_planned_and_skipped_days():
    # planned-and-done days and unplanned rest days (all long) are not skip days
    assert _e2(4, 0, planned_done=10, unplanned_rest=10) == "no_fewer_than_30"
    assert _e2(2, 0, planned_done=10, unplanned_rest=10) == "between_30_60"


# --------------------------------------------------------------------------- F1


@pytest.mark.parametrize(("n_unplanned", "n_planned", "expected"), [
    (0, 0, "no_social_activities"),
    (0, 5, "0_to_3"),
    (3, 5, "0_to_3"),
    (4, 0, "4_to_6"),
    (6, 10, "4_to_6"),
    (7, 0, "7_or_more"),
    (20, 0, "7_or_more"),
])
def test_f1(n_unplanned, n_planned, expected):
    unpl = DAYS[:n_unplanned]
    planned = DAYS[n_unplanned:n_unplanned + n_planned]
    # extra plan days without activity do not matter
    plan_only = DAYS[n_unplanned + n_planned:n_unplanned + n_planned + 3]
    assert label("F1", events={"n_act": on(unpl + planned, 2, 0)},
                 planner={"social_intent": on(planned + plan_only, True, False)}) == expected


# --------------------------------------------------------------------------- F2


def _f2(exercise, available, workout=None):
    workout = exercise if workout is None else workout
    return label("F2", events={"did_exercise": on(exercise, True, False)},
                 device={"available": on(available, True, False),
                         "workout": on(workout, True, False)})


def test_f2_cases():
    # no exercise, device always on: inactive 30, missing 0
    assert _f2([], DAYS) == "inactive_confirmed"
    # every day exercised and detected: both counts 0
    assert _f2(DAYS, DAYS) == "inactive_confirmed"
    # exercise on a device-unavailable day plus inactive days
    assert _f2([3, 4], [d for d in DAYS if d != 3]) == "both_occurred"
    # every day exercised, device off on two days: missing 2, inactive 0
    assert _f2(DAYS, [d for d in DAYS if d not in (5, 6)]) == "yes_tracker_missing"
    # exercised with the device on but no detection counts as missing
    assert _f2(DAYS, DAYS, workout=DAYS[1:]) == "yes_tracker_missing"
    # exercise days all detected, inactive days unavailable: inactive only
    assert _f2([1, 2], [1, 2]) == "inactive_confirmed"


def test_f2_missing_device_rows_read_as_unavailable():
    p = persona(events={"did_exercise": True}, device={"workout": True})
    p["src_device"] = p["src_device"][p["src_device"]["day_index"] != 7]
    assert answers(p)["F2"] == "yes_tracker_missing"


# --------------------------------------------------------------------------- F3


@pytest.mark.parametrize(("off", "worked", "expected"), [
    (0, 0, "truly_off"),
    (3, 0, "truly_off"),
    (0, 2, "yes_worked_despite_no_entry"),
    (1, 1, "both_occurred"),
    (1, 5, "both_occurred"),
    (0, 1, "yes_worked_despite_no_entry"),
])
def test_f3(off, worked, expected):
    off_days, work_days = DAYS[:off], DAYS[10:10 + worked]
    hours = on(work_days, 0.1, 0.0)
    assert label("F3", events={"hours": hours},
                 objective={"available": on(off_days + work_days, False, True)}) == expected


def test_f3_available_days_do_not_count():
    # long work on available days is irrelevant
    assert label("F3", events={"hours": 12.0}) == "truly_off"


# --------------------------------------------------------------------------- G1 / G2


@pytest.mark.parametrize(("active", "deliberate", "expected"), [
    (0, 0, "no_activity"),
    (10, 7, "mix"),                           # 0.7 exactly
    (10, 8, "deliberate_exercise_70plus"),
    (10, 3, "mix"),                           # 0.3 exactly
    (10, 2, "incidental_movement_70plus"),
    (1, 1, "deliberate_exercise_70plus"),
    (1, 0, "incidental_movement_70plus"),
    (2, 1, "mix"),
])
def test_g1(active, deliberate, expected):
    ex = DAYS[:active]
    # an `intentional` flag on a non-exercise day is ignored
    intent = ex[:deliberate] + [30]
    assert label("G1", events={"did_exercise": on(ex, True, False),
                               "intentional": on(intent, True, False)}) == expected


@pytest.mark.parametrize(("social", "obligatory", "expected"), [
    (0, 0, "no_meetings"),
    (10, 3, "mix"),                # voluntary 0.7
    (10, 2, "voluntary_70plus"),   # 0.8
    (10, 7, "mix"),                # voluntary 0.3
    (10, 8, "obligatory_70plus"),  # 0.2
    (1, 0, "voluntary_70plus"),
    (1, 1, "obligatory_70plus"),
])
def test_g2(social, obligatory, expected):
    days = DAYS[:social]
    oblig = days[:obligatory] + [30]  # supporting_other on a non-social day is ignored
    assert label("G2", events={"n_act": on(days, 1, 0),
                               "supporting_other": on(oblig, True, False)}) == expected


# --------------------------------------------------------------------------- controls

WIN7 = list(range(24, 31))


@pytest.mark.parametrize(("n", "expected"), [
    (0, "0_to_1_days"), (1, "0_to_1_days"), (2, "2_to_3_days"), (3, "2_to_3_days"),
    (4, "4_or_more"), (7, "4_or_more"),
])
def test_ctrl1(n, expected):
    outside = WIN7[:n] + list(range(1, 24))  # days before 24 are outside the window
    assert label("Ctrl1", events={"meals": 3, "home_cooked": on(outside, 2, 3)}) == expected


@pytest.mark.parametrize(("n", "expected"), [
    (0, "0_nights"), (1, "1_to_2"), (2, "1_to_2"), (3, "3_or_more"), (7, "3_or_more"),
])
def test_ctrl2(n, expected):
    short = WIN7[:n] + list(range(1, 24))
    assert label("Ctrl2", events={"duration_h": on(short, 5.9, 7.5)}) == expected


def test_ctrl2_six_hours_is_not_short():
    assert label("Ctrl2", events={"duration_h": on(WIN7, 6.0, 7.5)}) == "0_nights"
