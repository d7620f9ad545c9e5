"""The walkthrough's words: each question's ground-truth rule, each source's readout and role.

Source: the benchmark specification (seed 000) §2.3 (bias prior), §2.5 (difficulty classes),
§2.7 (source projections), §2.8 (ground-truth rules) and §2.9 (direct readout μ*). Plain
text only (no section numbers: the pages print these strings; the glossary cites them). An
answer label in a rule (``70_or_more``) is printed as its words in quotes ("70 % of meals or
more", :func:`core.testbed.words.label_words`), never as the stored label.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from core.testbed.questions import SOURCES
from core.testbed.questions import question as _question
from core.testbed.words import label_words

__all__ = ["DIFFICULTY_NOTES", "GT_RULES", "READOUT_RULES", "SOURCE_ROLES", "TOPIC_FIELDS"]


def _in_words(qid: str, text: str) -> str:
    """``text`` with every answer label of ``qid`` that has an underscore in quoted words."""
    labels = sorted((lab for lab in _question(qid).labels if "_" in lab), key=len, reverse=True)
    if not labels:
        return text
    pattern = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, labels)) + r")(?![\w])")
    return pattern.sub(lambda m: f"“{label_words(qid, m.group(1))}”", text)


#: Ground-truth rule of each question in words (spec §2.8).
_GT_RULES = {
    "A1": "Count the nights with latent sleep ≥ 7.0 h over the 30 days: ≥ 20 → 20_or_more, "
          "≥ 10 → 10_to_19, else fewer_than_10.",
    "A2": "Workdays are weekdays plus weekend days actually worked. Count workdays with more "
          "than 9.0 h: ≥ 8 → 8_or_more, ≥ 4 → 4_to_7, else 0_to_3.",
    "A3": "Home-cooked meals ÷ all meals over the 30 days: ≥ 0.70 → 70_or_more, ≥ 0.40 → "
          "40_to_69, else less_than_40.",
    "B2": "Latent exercise days per week (days ÷ 30/7) minus the profile's stated days per "
          "week: |δ| ≤ 1 → within_1_day, δ < −1 → more_than_1_below, else more_than_1_above.",
    "B3": "Weekend days worked (hours > 0) out of the 10 weekend days, against the profile's "
          "after-hours style: a strict boundary matches only if at most 15 % were worked; a "
          "flexible style fails to match only if no weekend day was worked; no style → "
          "no_approach_described.",
    "C2": "Last 14 days: of the days the planner planned something social, the share that had "
          "an activity: > 50 % → above_50_pct, ≥ 25 % → 25_to_50_pct, else below_25_pct; no "
          "plan days → no_plans.",
    "C3": "Last 14 days: actual bedtime minus the planner's target. More than half later by "
          "> 20 min → later_more_than_50pct; more than half earlier by > 20 min → "
          "earlier_more_than_50pct; else within_20min_more_than_50pct.",
    "D1": "Activities per day in days 1–14 versus days 15–30: change > +0.15 → increased, "
          "< −0.15 → decreased, else stayed_same.",
    "D2": "|mean home-cooked/day − profile's| + |mean meals/day − profile's| over 30 days: "
          "> 1 → differs_more_than_1, else within_1.",
    "E1": "Late nights are bedtimes after midnight. A late night counts as work if the day was "
          "tagged work stress, otherwise as social if it had an activity. Work share > ½ → "
          "work_activity; social share > ½ → social_activity; else no_single_factor; no late "
          "night → no_late_nights.",
    "E2": "Skip days: the planner intended exercise and none happened. ≤ 2 skip days → "
          "between_30_60. Otherwise the share of skip days with > 8.5 work hours or overtime: "
          "> 60 % → yes_more_than_60, < 30 % → no_fewer_than_30, else between_30_60.",
    "F1": "Count the social days without a social plan in the planner: ≤ 3 → 0_to_3, ≤ 6 → "
          "4_to_6, else 7_or_more; no social day → no_social_activities.",
    "F2": "On days without a detected workout: exercised while the device was off counts as "
          "tracker-missing, not exercised as inactive. Both > 0 → both_occurred; missing > "
          "inactive → yes_tracker_missing; else inactive_confirmed.",
    "F3": "On days with no objective record: worked (hours > 0) versus truly off. Both > 0 → "
          "both_occurred; worked > off → yes_worked_despite_no_entry; else truly_off.",
    "G1": "Share of exercise days that were intentional (a habitual exercise day and ≥ 30 "
          "min): > 70 % → deliberate_exercise_70plus, < 30 % → incidental_movement_70plus, "
          "else mix; no exercise → no_activity.",
    "G2": "Share of social days that were voluntary (not an obligation): > 70 % → "
          "voluntary_70plus, < 30 % → obligatory_70plus, else mix; no social day → "
          "no_meetings.",
    "Ctrl1": "Last 7 days: days with any meal not cooked at home (meals > home-cooked): ≤ 1 → "
             "0_to_1_days, ≤ 3 → 2_to_3_days, else 4_or_more.",
    "Ctrl2": "Last 7 days: nights under 6.0 h: 0 → 0_nights, ≤ 2 → 1_to_2, else 3_or_more.",
}
GT_RULES = MappingProxyType({q: _in_words(q, t) for q, t in _GT_RULES.items()})

_P, _L, _S, _O, _D = SOURCES
#: One-line direct-readout rule μ*(s, q) of every informative cell (spec §2.9).
_READOUT_RULES = {
    ("A1", _S): "counts reported nights ≥ 7 h, GT thresholds",
    ("A1", _D): "share of available tracked nights ≥ 7 h, × 30, rounded",
    ("A1", _L): "counts days whose target sleep is ≥ 7 h",
    ("A1", _P): "snapshot mean sleep ≥ 7.3 h → 20_or_more, ≥ 6.5 h → 10_to_19",
    ("A2", _S): "reported workdays with more than 9 h",
    ("A2", _O): "available days whose calendar work block lasts > 540 min",
    ("A2", _L): "days whose hours limit is above 9 h",
    ("A2", _P): "snapshot hours/day ≥ 9.5 → 8_or_more, ≥ 8.0 → 4_to_7",
    ("A2", _D): "available days with > 540 focus minutes, not extrapolated",
    ("A3", _S): "reported Σ home-cooked ÷ Σ meals",
    ("A3", _L): "share of days with home cooking prioritised (all or nothing)",
    ("A3", _P): "snapshot home-cooked meals ÷ meals per day",
    ("A3", _O): "1 − (delivery payments per available day × 30) ÷ 90: sees deliveries, "
                "not cooking",
    ("B2", _S): "reported exercise days ÷ (30/7) versus the profile",
    ("B2", _D): "detected workouts per available week versus the profile",
    ("B2", _O): "calendar exercise sessions per available week versus the profile",
    ("B2", _L): "planned exercise days ÷ (30/7) versus the profile",
    ("B2", _P): "always within_1_day: the profile agrees with itself",
    ("B3", _S): "reported weekend-work flags on the 10 weekend days",
    ("B3", _O): "available weekend days with a calendar work block",
    ("B3", _D): "available weekend days with focus minutes",
    ("B3", _P): "always matches",
    ("C2", _S): "share of plan days with reported activities",
    ("C2", _L): "always above_50_pct: plans are assumed kept",
    ("C2", _O): "plan days with a calendar social event ÷ all plan days",
    ("C3", _S): "reported bedtime versus the planner's target",
    ("C3", _D): "tracked bedtime on available days versus the target",
    ("D1", _S): "reported activities per day, first 14 days versus the rest",
    ("D1", _L): "planned-social rate, first 14 days versus the rest",
    ("D1", _O): "social events per available day, first versus second half of available days",
    ("D2", _S): "reported 30-day means versus the profile baseline",
    ("D2", _P): "always within_1",
    ("E1", _S): "reported late nights: work if reported overtime, else social if activities",
    ("E1", _D): "tracked late nights: work if late finish on more than half, else "
                "no_single_factor (never social)",
    ("E1", _L): "planned late bedtimes: work if more than half have an hours limit > 8 h",
    ("E1", _O): "not about late nights: share of > 9 h work-block days, then of "
                "social-event days, above 0.3",
    ("E2", _S): "intended days self-reported without exercise; share with long reported work",
    ("E2", _L): "share of intended days with an hours limit above 8 h",
    ("E2", _D): "available non-workout days with a late finish or > 480 focus minutes",
    ("E2", _O): "available days without an exercise session that have a > 9 h work block",
    ("E2", _P): "the snapshot's overtime share read as the ratio",
    ("F1", _S): "self-reported social days without a plan, counted",
    ("F1", _O): "available days with a social event and no plan, counted",
    ("F1", _L): "many intent days → few unplanned days (never 7_or_more)",
    ("F1", _P): "active days/week × 4.3 × 0.5, truncated",
    ("F2", _S): "the GT walk with self-reported exercise (fake sessions count as missing)",
    ("F2", _D): "unavailable days > 30 % → yes_tracker_missing; workouts and gaps → "
                "both_occurred",
    ("F2", _L): "≥ 15 intended days → yes_tracker_missing, ≥ 5 → both_occurred",
    ("F2", _O): "exercise-session rate > 0.3 → yes_tracker_missing, > 0.1 → both_occurred",
    ("F2", _P): "≥ 3 days/week → yes_tracker_missing, ≥ 1 → both_occurred",
    ("F3", _S): "reported hours > 0 on objective-unavailable days",
    ("F3", _D): "focus > 30 min on objective-unavailable days",
    ("F3", _L): "hours limit > 0 on those days (almost always 'worked')",
    ("F3", _P): "snapshot hours/day > 6 → yes_worked_despite_no_entry, > 3 → both_occurred",
    ("G1", _S): "share of reported exercise days with ≥ 30 min",
    ("G1", _L): "any intended day → deliberate_exercise_70plus",
    ("G1", _D): "share of detected workouts with ≥ 30 active minutes",
    ("G2", _S): "share of reported social days without an obligation",
    ("G2", _O): "any calendar social event → mix, else no_meetings",
    ("G2", _L): "any social intent → voluntary_70plus",
    ("G2", _P): "active days > 0 → mix",
    ("Ctrl1", _S): "last 7 reports with meals > home-cooked",
    ("Ctrl1", _L): "last 7 days without home-cooking priority",
    ("Ctrl1", _P): "round((meals − home-cooked per day) × 7)",
    ("Ctrl2", _S): "last 7 reported nights under 6 h",
    ("Ctrl2", _D): "last 7 available tracked nights under 6 h",
    ("Ctrl2", _L): "last 7 target nights under 6 h",
}
READOUT_RULES = MappingProxyType({k: _in_words(k[0], t) for k, t in _READOUT_RULES.items()})

#: What each source records and how it distorts it (spec §2.3, §2.7).
SOURCE_ROLES = MappingProxyType({
    _P: "A long-term summary of the first days only (the anchor window), so a later change "
        "of habits makes it stale; for stated-vs-revealed personas it is a constant idealised "
        "self-image. No directional bias.",
    _L: "Intentions, not behaviour: built from the habitual (pre-shift) parameters with "
        "optimism: more sleep, fewer work hours, more exercise. Bias +1 on every topic "
        "(−1 on F1).",
    _S: "Every day is reported, through a topic lens: over-reports sleep, diet and exercise "
        "(+1), under-reports work and social life (−1); 'conflict' days (16–34 %) get larger "
        "distortions.",
    _O: "Payments, timesheet, calendar and check-ins: no directional bias, but whole days "
        "drop out (9–15 %, more for stated personas) and it sees proxies only (delivery "
        "payments, not cooking).",
    _D: "Wearable and phone: accurate sleep and workout detection, but whole days drop out "
        "(10–16 %, more for stated personas) and work signals are partial (focus minutes on "
        "about half of the days).",
})

#: The three difficulty classes in one sentence each (spec §2.5).
DIFFICULTY_NOTES = MappingProxyType({
    "stable": "Stable: one set of habits for all 30 days; the profile summarises days 1–12 "
              "and is still accurate.",
    "temporal_shift": "Temporal shift: from day {shift_day} a life event ({scenario}) changes "
                      "the habits. The profile (days 1–{anchor_end}) and the planner stay "
                      "anchored to the old habits.",
    "stated_vs_revealed": "Stated vs revealed: the person describes an idealised self (8 h "
                          "sleep, 5 workouts a week, 2.1 of 3 meals home-cooked) while the "
                          "actual behaviour is worse. The profile is that constant ideal, "
                          "and the device and objective logs lose more days.",
})

#: Latent event fields shown on the timeline for each topic: (column, label).
TOPIC_FIELDS = MappingProxyType({
    "sleep": (("bedtime_h", "bedtime (h after midnight of the day)"),
              ("duration_h", "sleep (h)")),
    "work": (("hours", "work hours"), ("overtime", "overtime (> 9 h)"),
             ("worked_on_weekend", "weekend day worked")),
    "diet": (("meals", "meals"), ("home_cooked", "home-cooked"), ("fast_food", "fast food")),
    "social": (("n_act", "social activities"), ("supporting_other", "obligation")),
    "exercise": (("did_exercise", "exercised"), ("exercise_min", "exercise minutes"),
                 ("intentional", "intentional")),
})