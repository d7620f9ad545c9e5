"""The memory stops drawn over the 30 days: a stale profile, stated against revealed, the
planner's optimism.

Source: the multi-source memory benchmark (seed 000): §8.1 (the profile's early-window
anchoring, the self-report's directional bias, the planner's positive bias), §8.6 stage 3
(each source's view of the same days, the Walkthrough's source view), §11.2 (the
stated-vs-revealed class) and §8.7 (the selection protocol the rules of :mod:`._memory_rules`
follow). One function per stop, ``view(data) -> StopView``.

Every view re-checks its example on the Walkthrough's own day view of that person
(:func:`core.evaluation.walkthrough.views.day_views`), not on the arrays its rule ranked.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.evaluation.walkthrough.views import METRIC_OF_QUESTION, day_views
from core.testbed.questions import QIDS, QUESTIONS, SOURCES
from core.testbed.vocab import DAY_INDEX, N_DAYS

from . import _memory_rules as rules
from ._memory_common import (
    no_example,
    num,
    of,
    pair_view,
    pool_or_note,
    qualifying,
    quote,
    resolvers_on,
    series,
    top_pair,
)
from ._memory_data import UNITS, daily_habit, pool_testbed, store_settings
from ._memory_words import source_label
from .model import Chart, StopView, TourData

__all__ = ["PLAN_QUESTIONS", "STALE_QUESTIONS", "planner_optimism_view", "stale_profile_view",
           "stated_vs_revealed_view"]

_PRO, _PLA, _SLF = (SOURCES.index(s) for s in ("profile_ltm", "planner", "daily_self_report"))

#: Stale profile: questions that count or average a daily habit the profile states as an
#: average (its answer is read from that average; seed 000 §8.6 stage 6′), with the habit.
STALE_QUESTIONS: Mapping[str, str] = MappingProxyType({
    "A1": "sleep_hours", "A2": "work_hours", "A3": "home_meals", "Ctrl1": "outside_meals"})
#: Planner optimism: questions that count the days on which a daily habit crosses a line,
#: the habit, and which side of the day a rosier plan lies on (the planner's +1 bias: more
#: sleep, fewer work hours, more exercise; seed 000 §8.1, the benchmark specification §2.3).
PLAN_QUESTIONS: Mapping[str, tuple[str, int]] = MappingProxyType({
    "A1": ("sleep_hours", 1), "Ctrl2": ("sleep_hours", 1), "A2": ("work_hours", -1),
    "B2": ("exercise_min", 1)})
_NOUNS = MappingProxyType({"sleep_hours": "hours", "work_hours": "hours",
                           "exercise_min": "minutes", "home_meals": "meals",
                           "outside_meals": "meals"})
_ROSIER = MappingProxyType({"sleep_hours": "more sleep planned than slept",
                            "work_hours": "fewer work hours planned than worked",
                            "exercise_min": "more exercise planned than done"})


# ---------------------------------------------------------------- 2 stale profile
def _window_after(qid: str, shift: int) -> tuple[int, int]:
    """(days of the question's window from the shift day on, days in the window)."""
    window = QUESTIONS[QIDS.index(qid)].window
    days = DAY_INDEX[DAY_INDEX > N_DAYS - window]
    return int((days >= shift).sum()), int(len(days))


def stale_profile_view(data: TourData) -> StopView:
    """The stale-profile stop (seed 000 §8.1): a temporal-shift person whose profile states
    the habit before the shift (:func:`._memory_rules.stale_profile`)."""
    key = "stale-profile"
    pool, failed = pool_or_note(key, data)
    if failed is not None:
        return failed
    settings, tb = store_settings(data), pool_testbed(data)
    habits = {q: daily_habit(tb, m) for q, m in STALE_QUESTIONS.items()}
    ranked = rules.stale_profile(pool.gt, pool.atoms, pool.personas,
                                 latent={q: h["latent"] for q, h in habits.items()},
                                 stated={q: h["profile_ltm"] for q, h in habits.items()})
    cols = [QIDS.index(q) for q in STALE_QUESTIONS]
    diff = pool.personas["difficulty"].astype(str).to_numpy()
    prof, gt = pool.atoms[:, cols, _PRO], pool.gt[:, cols]
    wrong = (prof >= 0) & (prof != gt)

    def rate(kind: str) -> str:
        m = diff == kind
        return of(int(wrong[m].sum()), int((prof[m] >= 0).sum()))

    overall = (("Profile wrong on these questions, people whose habits change",
                rate("temporal_shift")),
               ("Profile wrong on these questions, people with stable habits", rate("stable")),
               qualifying(ranked))
    picked = top_pair(ranked)
    if picked is None:
        note = ("No temporal-shift person in this store's test people has a wrong "
                "profile answer that states the habit before the change.")
        return no_example(key, note, settings, overall)
    top, i, j, qid = picked
    views = day_views(tb, qid=qid, row=i)
    latent, stated = series(views.frame, "latent"), series(views.frame, "profile_ltm")[0]
    shift, anchor = int(top["shift_day"]), int(views.anchor_end)
    before, after = latent[DAY_INDEX < shift].mean(), latent[DAY_INDEX >= shift].mean()
    unit = UNITS[STALE_QUESTIONS[qid]]
    chart = Chart("lines", pd.DataFrame({
        "x": np.concatenate([DAY_INDEX, DAY_INDEX]).astype(int),
        "y": np.concatenate([latent, np.full(N_DAYS, stated)]),
        "series": ["What happened each day"] * N_DAYS
                  + [f"What the profile says (its average of days 1–{anchor})"] * N_DAYS}),
        title="The profile keeps the old habit after the change",
        x_title="Day", y_title=unit, marker=shift - 0.5,
        marker_label=f"habits change (day {shift})",
        caption=("The flat line is the profile's average; the other line is what really "
                 "happened each day. Left of the dashed line is the old habit, right of it "
                 "the new one."))
    after_days, window = _window_after(qid, shift)
    p_code, gt_code = int(pool.atoms[i, j, _PRO]), int(pool.gt[i, j])
    answer = (f"The profile answers {quote(qid, p_code)}, but the truth is "
              f"{quote(qid, gt_code)}: the profile still describes days 1–{anchor}, before "
              f"the habits changed on day {shift}.")
    noun = _NOUNS[STALE_QUESTIONS[qid]]
    reason = (f"In the chart the profile's line stays at {num(stated)} {noun}, close to the "
              f"average before the change ({num(before)} a day), while from day {shift} on "
              f"the days average {num(after)}. The question looks at the last {window} days, "
              f"{after_days} of which come after the change, so the truth follows the new "
              f"habit and the profile's answer is out of date.")
    check = (p_code != gt_code and abs(stated - before) < abs(stated - after)
             and anchor < shift)
    evidence = (("Profile summarises", f"days 1–{anchor}"),
                ("Habits change on", f"day {shift}"),
                (f"{unit}: average before the change", num(before)),
                (f"{unit}: average from the change on", num(after)),
                (f"{unit}: the profile's average", num(stated)),
                ("Days the question looks at after the change", of(after_days, window)),
                resolvers_on(pool, i, j), *overall)
    return pair_view(key, pool, i, qid, settings, chart, answer, reason, evidence, check)


# ---------------------------------------------------------------- 3 stated vs revealed
def stated_vs_revealed_view(data: TourData) -> StopView:
    """The stated-vs-revealed stop (seed 000 §8.1, §11.2): the self-report shifted in its
    bias direction while a log records the truth (:func:`._memory_rules.stated_vs_revealed`)."""
    key = "stated-vs-revealed"
    pool, failed = pool_or_note(key, data)
    if failed is not None:
        return failed
    settings, tb = store_settings(data), pool_testbed(data)
    habits = {q: daily_habit(tb, METRIC_OF_QUESTION[q]) for q in QIDS
              if METRIC_OF_QUESTION[q] in UNITS}
    ranked = rules.stated_vs_revealed(
        pool.gt, pool.atoms, pool.personas,
        latent={q: h["latent"] for q, h in habits.items()},
        said={q: h["daily_self_report"] for q, h in habits.items()},
        logs={(q, s): h[s] for q, h in habits.items()
              for s in ("objective_log", "device_log") if s in h})
    steps = rules.bias_shift(pool.atoms[..., _SLF], pool.gt, _SLF)
    diff = pool.personas["difficulty"].astype(str).to_numpy()
    biased = np.array(sorted(set(ranked["q_order"])), int)

    def rate(kind: str) -> tuple[int, int]:
        m = diff == kind
        sub = pool.atoms[m][:, biased, _SLF]
        return int((steps[m][:, biased] > 0).sum()), int((sub >= 0).sum())

    svr, stable = rate("stated_vs_revealed"), rate("stable")
    overall = (("Self-report off in its lean's direction, stated-vs-revealed people",
                of(*svr)),
               ("Self-report off in its lean's direction, people with stable habits",
                of(*stable)),
               qualifying(ranked))
    picked = top_pair(ranked)
    if picked is None:
        note = ("No stated-vs-revealed person in this store's test people has a "
                "self-report shifted by its bias while a log, comparable day by day, "
                "is right.")
        return no_example(key, note, settings, overall)
    top, i, j, qid = picked
    log = int(top["log"])
    views = day_views(tb, qid=qid, row=i)
    latent = series(views.frame, "latent")
    said = series(views.frame, "daily_self_report")
    logged = series(views.frame, SOURCES[log])
    both = ~np.isnan(said) & ~np.isnan(logged)
    unit = views.title if views.metric not in UNITS else UNITS[views.metric]
    log_name = source_label(log)
    chart = Chart("lines", pd.DataFrame({
        "x": np.tile(DAY_INDEX, 3).astype(int),
        "y": np.concatenate([latent, said, logged]),
        "series": (["What happened each day"] * N_DAYS + ["What the person reported"] * N_DAYS
                   + [f"What the {log_name.lower()} recorded"] * N_DAYS)}),
        title="What the person says against what the log records",
        x_title="Day", y_title=unit,
        caption=(f"Three lines over the same 30 days; a gap in the {log_name.lower()}'s line "
                 "is a day it did not record, and where two lines coincide only the upper "
                 "one shows."))
    s_code, l_code, gt_code = (int(pool.atoms[i, j, _SLF]), int(pool.atoms[i, j, log]),
                               int(pool.gt[i, j]))
    n_steps = int(steps[i, j])
    answer = (f"The {log_name.lower()} matches the truth ({quote(qid, l_code)}); the "
              f"self-report answers {quote(qid, s_code)}, {n_steps} "
              f"step{'s' if n_steps > 1 else ''} off in the direction its bias predicts.")
    m_said, m_log, m_true = said[both].mean(), logged[both].mean(), latent[both].mean()
    noun = _NOUNS.get(views.metric, "")
    reason = (f"On the {int(both.sum())} days both recorded, the person reported "
              f"{num(m_said)} {noun} a day on average, the {log_name.lower()} shows "
              f"{num(m_log)} and {num(m_true)} really happened: the log records "
              f"behaviour, the self-report the person's account of it. Across these "
              f"questions the self-report is off in its lean's direction on {of(*svr)} "
              f"answers of stated-vs-revealed people, against {of(*stable)} for people with "
              f"stable habits.")
    check = (s_code != gt_code and n_steps > 0 and l_code == gt_code
             and bool(both.any()) and abs(m_log - m_true) < abs(m_said - m_true))
    evidence = (("Self-report's answer", f"{n_steps} step{'s' if n_steps > 1 else ''} from "
                                         "the truth, in its bias direction"),
                (f"{log_name}'s answer", "the truth"),
                ("Days both recorded", of(int(both.sum()), N_DAYS)),
                (f"{unit}: average reported", num(m_said)),
                (f"{unit}: average in the {log_name.lower()}", num(m_log)),
                (f"{unit}: average that happened", num(m_true)),
                resolvers_on(pool, i, j), *overall)
    return pair_view(key, pool, i, qid, settings, chart, answer, reason, evidence, check)


# ---------------------------------------------------------------- 4 planner optimism
def planner_optimism_view(data: TourData) -> StopView:
    """The planner-optimism stop (seed 000 §8.1, §8.7): the planner's answer shifted in its
    optimism direction (:func:`._memory_rules.planner_optimism`)."""
    key = "planner-optimism"
    pool, failed = pool_or_note(key, data)
    if failed is not None:
        return failed
    settings, tb = store_settings(data), pool_testbed(data)
    habits = {q: daily_habit(tb, m) for q, (m, _) in PLAN_QUESTIONS.items()}
    ranked = rules.planner_optimism(pool.gt, pool.atoms, pool.personas,
                                    planned={q: h["planner"] for q, h in habits.items()},
                                    actual={q: h["latent"] for q, h in habits.items()},
                                    rosier={q: d for q, (_, d) in PLAN_QUESTIONS.items()})
    cols = [QIDS.index(q) for q in PLAN_QUESTIONS]
    signed = rules.bias_steps(pool.atoms[..., _PLA], pool.gt, _PLA)[:, cols]
    overall = (("Planner wrong on the optimistic side, these questions",
                of(int((signed > 0).sum()), len(ranked))),
               ("Planner wrong on the other side, these questions",
                of(int((signed < 0).sum()), len(ranked))))
    picked = top_pair(ranked)
    if picked is None:
        note = ("No test pair in this store has the planner's answer shifted in "
                "its optimism direction.")
        return no_example(key, note, settings, overall)
    top, i, j, qid = picked
    metric, side = PLAN_QUESTIONS[qid]
    views = day_views(tb, qid=qid, row=i)
    latent, plan = series(views.frame, "latent"), series(views.frame, "planner")
    rosy = (plan - latent) * side > 0
    unit = UNITS[metric]
    chart = Chart("lines", pd.DataFrame({
        "x": np.tile(DAY_INDEX, 2).astype(int), "y": np.concatenate([latent, plan]),
        "series": ["What happened each day"] * N_DAYS + ["What the planner planned"] * N_DAYS,
        "marker": np.concatenate([np.zeros(N_DAYS, bool), rosy])}),
        title="The plan against the days", x_title="Day", y_title=unit,
        caption=("Large marks are the days on which the plan was rosier than what happened: "
                 f"{_ROSIER[metric]}."))
    p_code, gt_code, n_steps = int(pool.atoms[i, j, _PLA]), int(pool.gt[i, j]), int(top["steps"])
    k = int(rosy.sum())
    answer = (f"The planner answers {quote(qid, p_code)}, the truth is {quote(qid, gt_code)}: "
              f"{n_steps} step{'s' if n_steps > 1 else ''} on the optimistic side, with the "
              f"plan rosier than the day on {k} of {N_DAYS} days.")
    reason = (f"The planner records intentions, not behaviour, and intentions are optimistic "
              f"(the planning fallacy): in the chart the plan averages {num(plan.mean())} "
              f"{_NOUNS[metric]} a day against {num(latent.mean())} that happened. Counting "
              f"the planned days instead of the lived ones lands the planner's answer on the "
              f"rosy side of the truth.")
    check = p_code != gt_code and n_steps > 0 and (plan.mean() - latent.mean()) * side > 0
    evidence = (("Planner's answer", f"{n_steps} step{'s' if n_steps > 1 else ''} from the "
                                     "truth, on the optimistic side"),
                ("Days the plan was rosier than the day", of(k, N_DAYS)),
                (f"{unit}: average planned", num(plan.mean())),
                (f"{unit}: average that happened", num(latent.mean())),
                resolvers_on(pool, i, j), *overall)
    return pair_view(key, pool, i, qid, settings, chart, answer, reason, evidence, check)
