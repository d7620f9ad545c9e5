"""Ground truth of seed 000 computed in SQL: an independent audit of the Python label functions.

The 18 label functions f_q of the benchmark specification §2.8 are written here a second time,
as DuckDB SQL over the store's tables (``personas``, ``events``, ``src_profile``,
``src_planner``, ``src_device``, ``src_objective``), from the specification alone. Comparing
:func:`sql_ground_truth` with the Python implementation (:mod:`core.testbed.labels`) flags any
rule that one of the two got wrong.

One CTE per question turns a persona's days into counts and the counts into a label; the final
``SELECT`` stacks the 18 answers (``UNION ALL``) in the order of
:data:`core.testbed.questions.QIDS`. The query is built only from the string constants of this
module; no caller text ever reaches SQL.

Reading of the rules (spec §2.1, §2.8, §5 items 7 and 9)
---------------------------------------------------------
* Day indices are 1-based over 2026-01-03 (a Saturday) … 2026-02-01. Weekend days are derived
  from the calendar of §2.1, not from a stored flag: ``day_index % 7`` is 1 (Saturday) or 2
  (Sunday), i.e. indices 1, 2, 8, 9, 15, 16, 22, 23, 29, 30.
* Windows: C2 and C3 use days 17–30, Ctrl1 and Ctrl2 days 24–30, every other question all days.
* Every threshold is compared as written in §2.8 (strict or not) with DOUBLE operands, and
  every ratio is computed in the order of the spec's formula, with DOUBLE division (never
  integer division, never DECIMAL literals), so that IEEE results match Python's float
  arithmetic even at exact boundaries (see B2 and D2).
* Planner, device and objective rows are joined on the same day; a missing row reads as
  "no intent / no target / unavailable". A missing or NaN profile value is an edge label.
* E2 returns the substantive ``between_30_60`` when there are at most 2 skip days (§5 item 7).
* B2 and D2 read the *visible* profile values, falsy-value fallback already applied by the
  profile (§5 item 9); this module takes ``src_profile`` as stored.
"""

from __future__ import annotations

import pandas as pd

from .questions import QIDS

__all__ = ["ground_truth_query", "sql_ground_truth"]

# Weekend per spec §2.1: day 1 is a Saturday, so Saturday/Sunday are day_index % 7 in (1, 2).
_WEEKEND = "(d.day_index % 7 IN (1, 2))"

# Shared CTEs: the persona list and one row per persona-day of the latent event table joined
# with the same day of the structured sources that §2.8 reads (planner, device, objective).
_BASE = """
pp AS (
    SELECT DISTINCT seed, persona_id FROM personas
),
d AS (
    SELECT e.seed, e.persona_id, CAST(e.day_index AS INTEGER) AS day_index,
           CAST(e.bedtime_min AS INTEGER) AS bedtime_min, e.duration_h,
           e.did_exercise, e.intentional, e.hours, e.overtime, e.worked_on_weekend,
           CAST(e.n_act AS INTEGER) AS n_act, e.supporting_other,
           e.tag_social, e.tag_work_stress,
           CAST(e.meals AS INTEGER) AS meals, CAST(e.home_cooked AS INTEGER) AS home_cooked,
           COALESCE(pl.social_intent, FALSE) AS plan_social,
           COALESCE(pl.ex_intended, FALSE) AS plan_ex,
           CASE WHEN pl.bedtime_min >= 0 THEN CAST(pl.bedtime_min AS INTEGER) END AS plan_bed,
           COALESCE(dv.available, FALSE) AS dev_available,
           COALESCE(dv.workout, FALSE) AS dev_workout,
           COALESCE(ob.available, FALSE) AS obj_available
    FROM events AS e
    LEFT JOIN src_planner AS pl
           ON pl.seed = e.seed AND pl.persona_id = e.persona_id AND pl.day_index = e.day_index
    LEFT JOIN src_device AS dv
           ON dv.seed = e.seed AND dv.persona_id = e.persona_id AND dv.day_index = e.day_index
    LEFT JOIN src_objective AS ob
           ON ob.seed = e.seed AND ob.persona_id = e.persona_id AND ob.day_index = e.day_index
)"""

# Every per-persona aggregate starts from pp so a persona without rows still gets an answer.
_FROM = """FROM pp LEFT JOIN d ON d.seed = pp.seed AND d.persona_id = pp.persona_id
        GROUP BY pp.seed, pp.persona_id"""

# (qid, CTE body).  Each body selects seed, persona_id, answer; one row per persona.
_QUESTIONS: tuple[tuple[str, str], ...] = (
    # A1: g = nights with duration >= 7.0.
    ("A1", f"""
    SELECT seed, persona_id,
           CASE WHEN g >= 20 THEN '20_or_more'
                WHEN g >= 10 THEN '10_to_19'
                ELSE 'fewer_than_10' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.duration_h >= CAST(7.0 AS DOUBLE)) AS g
          {_FROM})"""),
    # A2: workdays = weekdays + weekend days with worked_on_weekend; count hours > 9.0.
    ("A2", f"""
    SELECT seed, persona_id,
           CASE WHEN n >= 8 THEN '8_or_more'
                WHEN n >= 4 THEN '4_to_7'
                ELSE '0_to_3' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if((NOT {_WEEKEND} OR COALESCE(d.worked_on_weekend, FALSE))
                          AND d.hours > CAST(9.0 AS DOUBLE)) AS n
          {_FROM})"""),
    # A3: r = sum(home_cooked) / sum(meals) as DOUBLE, 0 when there are no meals.
    ("A3", f"""
    SELECT seed, persona_id,
           CASE WHEN r >= CAST(0.7 AS DOUBLE) THEN '70_or_more'
                WHEN r >= CAST(0.4 AS DOUBLE) THEN '40_to_69'
                ELSE 'less_than_40' END AS answer
    FROM (SELECT seed, persona_id,
                 CASE WHEN meals > 0 THEN CAST(home AS DOUBLE) / CAST(meals AS DOUBLE)
                      ELSE CAST(0 AS DOUBLE) END AS r
          FROM (SELECT pp.seed, pp.persona_id,
                       COALESCE(SUM(d.home_cooked), 0) AS home,
                       COALESCE(SUM(d.meals), 0) AS meals
                {_FROM}))"""),
    # B2: a = exercise days / (30/7); delta = a - p.  Computed in exactly this order (30/7
    # first, then the division, then the subtraction) so that DOUBLE results equal Python's
    # `n / (30 / 7) - p`; e.g. n = 12, p = 1.8 gives delta = 1.0000000000000002 (> 1).
    ("B2", f"""
    SELECT seed, persona_id,
           CASE WHEN p IS NULL OR isnan(p) THEN 'no_frequency_described'
                WHEN abs(delta) <= CAST(1 AS DOUBLE) THEN 'within_1_day'
                WHEN delta < CAST(-1 AS DOUBLE) THEN 'more_than_1_below'
                ELSE 'more_than_1_above' END AS answer
    FROM (SELECT x.seed, x.persona_id, pr.ex_days_per_week AS p,
                 CAST(x.n AS DOUBLE) / (CAST(30 AS DOUBLE) / CAST(7 AS DOUBLE))
                     - pr.ex_days_per_week AS delta
          FROM (SELECT pp.seed, pp.persona_id, count_if(d.did_exercise) AS n
                {_FROM}) AS x
          LEFT JOIN src_profile AS pr ON pr.seed = x.seed AND pr.persona_id = x.persona_id)"""),
    # B3: w = weekend days with worked_on_weekend, ratio = w / weekend days (0 if none).
    # Style codes: 0 strict_boundary, 1 flexible, -1/NULL none, anything else "other".
    ("B3", f"""
    SELECT seed, persona_id,
           CASE WHEN style IS NULL OR style < 0 THEN 'no_approach_described'
                WHEN style = 0 THEN
                     CASE WHEN ratio <= CAST(0.15 AS DOUBLE) THEN 'matches'
                          ELSE 'does_not_match' END
                WHEN style = 1 THEN
                     CASE WHEN w = 0 AND nw >= 4 THEN 'does_not_match' ELSE 'matches' END
                ELSE CASE WHEN ratio < CAST(0.5 AS DOUBLE) THEN 'matches'
                          ELSE 'does_not_match' END
           END AS answer
    FROM (SELECT x.seed, x.persona_id, CAST(pr.afterhours_style AS INTEGER) AS style,
                 x.w, x.nw,
                 CASE WHEN x.nw > 0 THEN CAST(x.w AS DOUBLE) / CAST(x.nw AS DOUBLE)
                      ELSE CAST(0 AS DOUBLE) END AS ratio
          FROM (SELECT pp.seed, pp.persona_id,
                       count_if({_WEEKEND} AND COALESCE(d.worked_on_weekend, FALSE)) AS w,
                       count_if({_WEEKEND}) AS nw
                {_FROM}) AS x
          LEFT JOIN src_profile AS pr ON pr.seed = x.seed AND pr.persona_id = x.persona_id)"""),
    # C2: days 17-30; plan days = planner social intent; r = plan days with >= 1 activity / plan
    # days.  r > 0.50 above, r >= 0.25 middle (so exactly 0.5 is 25_to_50_pct).
    ("C2", f"""
    SELECT seed, persona_id,
           CASE WHEN plan = 0 THEN 'no_plans'
                WHEN CAST(hit AS DOUBLE) / CAST(plan AS DOUBLE) > CAST(0.5 AS DOUBLE)
                     THEN 'above_50_pct'
                WHEN CAST(hit AS DOUBLE) / CAST(plan AS DOUBLE) >= CAST(0.25 AS DOUBLE)
                     THEN '25_to_50_pct'
                ELSE 'below_25_pct' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.day_index BETWEEN 17 AND 30 AND d.plan_social) AS plan,
                 count_if(d.day_index BETWEEN 17 AND 30 AND d.plan_social
                          AND d.n_act >= 1) AS hit
          {_FROM})"""),
    # C3: days 17-30 paired with the same day's planner target (bedtime minutes, so crossing
    # midnight is plain subtraction).  delta = actual - target; late > 20, early < -20.
    # The late share is tested first; a 50/50 tie falls through to "within".
    ("C3", f"""
    SELECT seed, persona_id,
           CASE WHEN paired = 0 THEN 'no_targets'
                WHEN CAST(late AS DOUBLE) / CAST(paired AS DOUBLE) > CAST(0.5 AS DOUBLE)
                     THEN 'later_more_than_50pct'
                WHEN CAST(early AS DOUBLE) / CAST(paired AS DOUBLE) > CAST(0.5 AS DOUBLE)
                     THEN 'earlier_more_than_50pct'
                ELSE 'within_20min_more_than_50pct' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.day_index BETWEEN 17 AND 30 AND d.plan_bed IS NOT NULL
                          AND d.bedtime_min IS NOT NULL) AS paired,
                 count_if(d.day_index BETWEEN 17 AND 30
                          AND d.bedtime_min - d.plan_bed > 20) AS late,
                 count_if(d.day_index BETWEEN 17 AND 30
                          AND d.bedtime_min - d.plan_bed < -20) AS early
          {_FROM})"""),
    # D1: activities (not days) per day; early = days 1-14 / 14, late = days 15-30 / 16;
    # delta = late - early (in that order).  7L - 8E never equals 16.8, so delta is never
    # exactly +-0.15 and the DOUBLE comparison cannot sit on the boundary.
    ("D1", f"""
    SELECT seed, persona_id,
           CASE WHEN delta > CAST(0.15 AS DOUBLE) THEN 'increased'
                WHEN delta < CAST(-0.15 AS DOUBLE) THEN 'decreased'
                ELSE 'stayed_same' END AS answer
    FROM (SELECT seed, persona_id,
                 CAST(late_n AS DOUBLE) / CAST(16 AS DOUBLE)
                     - CAST(early_n AS DOUBLE) / CAST(14 AS DOUBLE) AS delta
          FROM (SELECT pp.seed, pp.persona_id,
                       COALESCE(SUM(CASE WHEN d.day_index BETWEEN 1 AND 14
                                         THEN d.n_act ELSE 0 END), 0) AS early_n,
                       COALESCE(SUM(CASE WHEN d.day_index BETWEEN 15 AND 30
                                         THEN d.n_act ELSE 0 END), 0) AS late_n
                {_FROM}))"""),
    # D2: delta = |mean home - profile home| + |mean meals - profile meals| over the days;
    # means are exact integer sums divided as DOUBLE (as Python's sum / len).  DOUBLE
    # artefacts are kept on purpose: meals mean 1.0, home mean 0.2 vs profile 1.1 / 1.1 gives
    # 1.0000000000000002 (> 1).
    ("D2", f"""
    SELECT seed, persona_id,
           CASE WHEN pm IS NULL OR ph IS NULL OR isnan(pm) OR isnan(ph) THEN 'no_baseline'
                WHEN abs(mh - ph) + abs(mm - pm) > CAST(1 AS DOUBLE) THEN 'differs_more_than_1'
                ELSE 'within_1' END AS answer
    FROM (SELECT x.seed, x.persona_id,
                 pr.meals_per_day AS pm, pr.home_cooked_mean AS ph,
                 CAST(x.sm AS DOUBLE) / CAST(x.n AS DOUBLE) AS mm,
                 CAST(x.sh AS DOUBLE) / CAST(x.n AS DOUBLE) AS mh
          FROM (SELECT pp.seed, pp.persona_id,
                       SUM(d.meals) AS sm, SUM(d.home_cooked) AS sh, count(d.meals) AS n
                {_FROM}) AS x
          LEFT JOIN src_profile AS pr ON pr.seed = x.seed AND pr.persona_id = x.persona_id)"""),
    # E1: late night = bedtime minutes > 1440.  Work if tagged work_stress; otherwise social
    # if tagged social.  work share > 0.5 first, then social share > 0.5.
    ("E1", f"""
    SELECT seed, persona_id,
           CASE WHEN late = 0 THEN 'no_late_nights'
                WHEN CAST(work AS DOUBLE) / CAST(late AS DOUBLE) > CAST(0.5 AS DOUBLE)
                     THEN 'work_activity'
                WHEN CAST(social AS DOUBLE) / CAST(late AS DOUBLE) > CAST(0.5 AS DOUBLE)
                     THEN 'social_activity'
                ELSE 'no_single_factor' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.bedtime_min > 1440) AS late,
                 count_if(d.bedtime_min > 1440
                          AND COALESCE(d.tag_work_stress, FALSE)) AS work,
                 count_if(d.bedtime_min > 1440 AND NOT COALESCE(d.tag_work_stress, FALSE)
                          AND COALESCE(d.tag_social, FALSE)) AS social
          {_FROM})"""),
    # E2: skip day = planner ex_intended AND NOT did_exercise, over all days.  <= 2 skip days
    # -> between_30_60 (substantive default, spec §5 item 7).  r = skip days with hours > 8.5
    # or overtime / skip days; r > 0.6 yes, r < 0.3 no, else between (0.6 and 0.3 included).
    ("E2", f"""
    SELECT seed, persona_id,
           CASE WHEN skip <= 2 THEN 'between_30_60'
                WHEN CAST(busy AS DOUBLE) / CAST(skip AS DOUBLE) > CAST(0.6 AS DOUBLE)
                     THEN 'yes_more_than_60'
                WHEN CAST(busy AS DOUBLE) / CAST(skip AS DOUBLE) < CAST(0.3 AS DOUBLE)
                     THEN 'no_fewer_than_30'
                ELSE 'between_30_60' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.plan_ex AND NOT d.did_exercise) AS skip,
                 count_if(d.plan_ex AND NOT d.did_exercise
                          AND COALESCE(d.hours > CAST(8.5 AS DOUBLE) OR d.overtime, FALSE))
                     AS busy
          {_FROM})"""),
    # F1: social days (>= 1 activity) without planner social intent.
    ("F1", f"""
    SELECT seed, persona_id,
           CASE WHEN social = 0 THEN 'no_social_activities'
                WHEN unplanned <= 3 THEN '0_to_3'
                WHEN unplanned <= 6 THEN '4_to_6'
                ELSE '7_or_more' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.n_act >= 1) AS social,
                 count_if(d.n_act >= 1 AND NOT d.plan_social) AS unplanned
          {_FROM})"""),
    # F2: skip days with the device available and a detected workout; of the rest, exercised
    # -> missing (device unavailable, or available without detection), not exercised ->
    # inactive.  Order: both 0, both > 0, missing > inactive, else inactive_confirmed.
    ("F2", f"""
    SELECT seed, persona_id,
           CASE WHEN missing = 0 AND inactive = 0 THEN 'inactive_confirmed'
                WHEN missing > 0 AND inactive > 0 THEN 'both_occurred'
                WHEN missing > inactive THEN 'yes_tracker_missing'
                ELSE 'inactive_confirmed' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(NOT (d.dev_available AND d.dev_workout) AND d.did_exercise)
                     AS missing,
                 count_if(NOT (d.dev_available AND d.dev_workout) AND NOT d.did_exercise)
                     AS inactive
          {_FROM})"""),
    # F3: no-record days = objective unavailable; latent hours > 0 -> unclear, else off.
    ("F3", f"""
    SELECT seed, persona_id,
           CASE WHEN unclear + off_days = 0 THEN 'truly_off'
                WHEN unclear > 0 AND off_days > 0 THEN 'both_occurred'
                WHEN unclear > off_days THEN 'yes_worked_despite_no_entry'
                ELSE 'truly_off' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.day_index IS NOT NULL AND NOT d.obj_available
                          AND COALESCE(d.hours > CAST(0 AS DOUBLE), FALSE)) AS unclear,
                 count_if(d.day_index IS NOT NULL AND NOT d.obj_available
                          AND NOT COALESCE(d.hours > CAST(0 AS DOUBLE), FALSE)) AS off_days
          {_FROM})"""),
    # G1: active days = did_exercise; r = intentional share of active days.
    ("G1", f"""
    SELECT seed, persona_id,
           CASE WHEN active = 0 THEN 'no_activity'
                WHEN CAST(delib AS DOUBLE) / CAST(active AS DOUBLE) > CAST(0.7 AS DOUBLE)
                     THEN 'deliberate_exercise_70plus'
                WHEN CAST(delib AS DOUBLE) / CAST(active AS DOUBLE) < CAST(0.3 AS DOUBLE)
                     THEN 'incidental_movement_70plus'
                ELSE 'mix' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.did_exercise) AS active,
                 count_if(d.did_exercise AND COALESCE(d.intentional, FALSE)) AS delib
          {_FROM})"""),
    # G2: social days; r = share with supporting_other false (voluntary).
    ("G2", f"""
    SELECT seed, persona_id,
           CASE WHEN social = 0 THEN 'no_meetings'
                WHEN CAST(vol AS DOUBLE) / CAST(social AS DOUBLE) > CAST(0.7 AS DOUBLE)
                     THEN 'voluntary_70plus'
                WHEN CAST(vol AS DOUBLE) / CAST(social AS DOUBLE) < CAST(0.3 AS DOUBLE)
                     THEN 'obligatory_70plus'
                ELSE 'mix' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.n_act >= 1) AS social,
                 count_if(d.n_act >= 1 AND NOT COALESCE(d.supporting_other, FALSE)) AS vol
          {_FROM})"""),
    # Ctrl1: days 24-30 with meals > home_cooked.
    ("Ctrl1", f"""
    SELECT seed, persona_id,
           CASE WHEN n <= 1 THEN '0_to_1_days'
                WHEN n <= 3 THEN '2_to_3_days'
                ELSE '4_or_more' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.day_index BETWEEN 24 AND 30 AND d.meals > d.home_cooked) AS n
          {_FROM})"""),
    # Ctrl2: days 24-30 with duration < 6.0.
    ("Ctrl2", f"""
    SELECT seed, persona_id,
           CASE WHEN n = 0 THEN '0_nights'
                WHEN n <= 2 THEN '1_to_2'
                ELSE '3_or_more' END AS answer
    FROM (SELECT pp.seed, pp.persona_id,
                 count_if(d.day_index BETWEEN 24 AND 30
                          AND d.duration_h < CAST(6.0 AS DOUBLE)) AS n
          {_FROM})"""),
)


def ground_truth_query() -> str:
    """Return the SQL text that computes all 18 labels (the benchmark specification §2.8).

    The query reads the store tables ``personas``, ``events``, ``src_profile``,
    ``src_planner``, ``src_device`` and ``src_objective`` and yields the columns ``seed``,
    ``persona_id``, ``question_id`` and ``answer``, sorted by seed, persona and the question
    order of :data:`core.testbed.questions.QIDS`.

    Returns
    -------
    str
        One DuckDB ``SELECT`` statement assembled from this module's constants only.

    Raises
    ------
    ValueError
        If :data:`~core.testbed.questions.QIDS` and the implemented questions differ.
    """
    bodies = dict(_QUESTIONS)
    if set(bodies) != set(QIDS) or len(bodies) != len(QIDS):
        raise ValueError(
            f"labels_sql implements {sorted(bodies)} but QIDS is {list(QIDS)}")
    ctes = [_BASE] + [f"q_{qid.lower()} AS ({bodies[qid]}\n)" for qid in QIDS]
    union = "\n    UNION ALL\n".join(
        f"    SELECT seed, persona_id, '{qid}' AS question_id, {i} AS q_order, answer "
        f"FROM q_{qid.lower()}"
        for i, qid in enumerate(QIDS))
    return (
        "WITH " + ",\n".join(ctes) + "\n"
        "SELECT seed, persona_id, question_id, answer FROM (\n" + union + "\n) AS t\n"
        "ORDER BY seed, persona_id, q_order"
    )


def sql_ground_truth(cur) -> pd.DataFrame:
    """Compute the 18 ground-truth labels of every persona with DuckDB.

    An independent SQL restatement of the label rules of the benchmark specification §2.8
    (with §2.1 for the window and weekend days and §5 item 7 for E2), used to audit the Python
    implementation.

    Parameters
    ----------
    cur : duckdb.DuckDBPyConnection
        A DuckDB connection or cursor over a store holding the tables ``personas``, ``events``,
        ``src_profile``, ``src_planner``, ``src_device`` and ``src_objective``. The result is
        fully fetched before returning, so the cursor is free afterwards.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed`` (int64), ``persona_id`` (str), ``question_id`` (str) and ``answer``
        (str): one row per persona × question (18 per persona), sorted by seed, persona_id and
        then the order of :data:`core.testbed.questions.QIDS`, with a fresh ``RangeIndex``.
    """
    df = cur.execute(ground_truth_query()).df()
    out = pd.DataFrame({
        "seed": df["seed"].astype("int64"),
        "persona_id": df["persona_id"].astype(str),
        "question_id": df["question_id"].astype(str),
        "answer": df["answer"].astype(str),
    })
    return out.reset_index(drop=True)
