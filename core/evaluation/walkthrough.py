"""The walked-through example of seed 000: choose one persona and question, explain each stage.

Source: ``seeds/000_826cb797278fd813.txt`` §8.6 (the walked-through example) and §8.7 (the
selection protocol); ``reference/testbed-spec.md`` §2.3 (bias prior), §2.7 (source
projections), §2.8 (ground-truth rules) and §2.9 (direct readout μ*).

Everything here is pure: arrays and frames in, frames out, no Streamlit. The Walkthrough page
calls these functions through cached wrappers and hands the results to
:mod:`core.figures.walkthrough`.

Selection protocol (§8.7)
-------------------------
The paper's protocol filters on extracted atoms μ̂ and on resolver and LLM outputs.
:func:`select_walkthrough` reads the direct readout μ* and, without resolver outputs, uses only
the filters that need the testbed:

* hard (i): at least 4 of 5 sources give a non-null atom, and ``planner``,
  ``daily_self_report`` and ``objective_log`` are among them;
* hard (iv): the non-null atoms span at least two distinct values;
* hard (new, standing in for ii/iii/v): at least one source's atom disagrees with GT;
* soft, in this priority: the planner's atom is shifted in the planner's bias direction; the
  self-report's atom is shifted in its bias direction; at least one source agrees with GT;
* ranking: the number of soft preferences met (descending), then the preferences in the
  priority above, then the paper's lexicographic tiebreak ``(persona_id, seed, question
  order)``;
* pool: the test split only.

Given resolver outputs (a :class:`ResolverEvidence`, built from the store's cached test
predictions by :func:`resolver_evidence`), it runs the full protocol:

* hard (ii): DSNBF's arg max equals GT;
* hard (iii): at least one frontier LLM (GPT or Gemini, Direct prompt) answers wrong, where
  the store holds LLM answers (imported releases only); otherwise **Majority Vote is wrong**
  stands in, and :attr:`ResolverEvidence.reference` says which was used;
* hard (v): DSNBF's posterior margin p(top1) − p(top2) lies in [0.08, 0.35] (inclusive,
  :data:`MARGIN_WINDOW`);
* soft, in the paper's priority: planner shifted; self-report shifted; cross-family LLM
  divergence (GPT and Gemini disagree; only when both answered); at least one other fusion
  method (:data:`OTHER_FUSION`) also correct. "At least one source agrees with GT" is then
  reported but not ranked.

Without them, filters (ii), (iii) and (v) are listed as waiting (:data:`PENDING_FILTERS`).

"Shifted in its bias direction" means, on an ordinal question with both the atom and GT
substantive (not edge labels), ``sign(rank(atom) − rank(GT)) == BIAS[q, s] != 0``, ranks taken
in the bias-shift order of :mod:`core.testbed.questions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.evaluation.run import FORCED_METHODS, METHOD_LABELS, SELECTIVE_METHODS
from core.testbed.questions import BIAS, Q_INDEX, QIDS, QUESTIONS, SOURCE_LABELS, SOURCES
from core.testbed.questions import question as get_question
from core.testbed.schema import Testbed
from core.testbed.vocab import DATES, DAY_INDEX, IS_WEEKEND, N_DAYS, WEEKDAY_NAMES

__all__ = [
    "DIFFICULTY_NOTES",
    "FRONTIER_LLMS",
    "GT_RULES",
    "MARGIN_WINDOW",
    "METRIC_OF_QUESTION",
    "OTHER_FUSION",
    "PENDING_FILTERS",
    "READOUT_RULES",
    "REFERENCE_NAMES",
    "SOURCE_ROLES",
    "TOPIC_FIELDS",
    "DayViews",
    "ResolverEvidence",
    "atom_grid_table",
    "atom_verdicts",
    "bias_rank_table",
    "day_views",
    "difficulty_note",
    "label_arrays",
    "latent_days",
    "persona_day_table",
    "profile_vs_actual",
    "resolver_evidence",
    "resolver_table",
    "select_walkthrough",
]

_PL = SOURCES.index("planner")
_SR = SOURCES.index("daily_self_report")
_OB = SOURCES.index("objective_log")

#: §8.7 hard filters that need resolver or LLM outputs, shown on the page as "waiting".
PENDING_FILTERS = MappingProxyType({
    "ii": "DSNBF's arg max equals GT",
    "iii": "at least one frontier LLM (GPT-5.4 or Gemini 3.1 Pro, Direct) answers wrong",
    "v": "DSNBF posterior margin p(top1) − p(top2) lies in [0.08, 0.35]",
})

#: Filter (v): the window of DSNBF's posterior margin, both ends included.
MARGIN_WINDOW = (0.08, 0.35)

#: Fusion methods other than DSNBF (seed 000's T2 tier) for the soft preference "at least one
#: other fusion method also correct".
OTHER_FUSION = ("majority_vote", "bcf", "abf", "nbf")

#: Frontier LLMs of filter (iii): model-name prefixes (case-insensitive), Direct prompt.
FRONTIER_LLMS = ("gpt", "gemini")

#: What stood in for filter (iii), by :attr:`ResolverEvidence.reference`.
REFERENCE_NAMES = MappingProxyType({
    "llm": "a frontier LLM (GPT or Gemini, Direct prompt) answers wrong",
    "majority_vote": "Majority Vote answers wrong (stand-in: this store holds no frontier-LLM "
                     "answers)",
})

#: Ground-truth rule of each question in words (spec §2.8).
GT_RULES = MappingProxyType({
    "A1": "Count the nights with latent sleep ≥ 7.0 h over the 30 days: ≥ 20 → 20_or_more, "
          "≥ 10 → 10_to_19, else fewer_than_10.",
    "A2": "Workdays are weekdays plus weekend days actually worked. Count workdays with more "
          "than 9.0 h: ≥ 8 → 8_or_more, ≥ 4 → 4_to_7, else 0_to_3.",
    "A3": "Home-cooked meals ÷ all meals over the 30 days: ≥ 0.70 → 70_or_more, ≥ 0.40 → "
          "40_to_69, else less_than_40.",
    "B2": "Latent exercise days per week (days ÷ 30/7) minus the profile's stated days per "
          "week: |δ| ≤ 1 → within_1_day, δ < −1 → more_than_1_below, else more_than_1_above.",
    "B3": "Weekend days worked (hours > 0) out of the 10 weekend days, against the profile's "
          "after-hours style: strict_boundary matches iff ≤ 15 % were worked; flexible fails "
          "to match only if no weekend day was worked; no style → no_approach_described.",
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
})

_P, _L, _S, _O, _D = SOURCES
#: One-line direct-readout rule μ*(s, q) of every informative cell (spec §2.9).
READOUT_RULES = MappingProxyType({
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
})

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


# ---------------------------------------------------------------- selection (§8.7)
def bias_rank_table() -> np.ndarray:
    """Rank of every display code in bias-shift order, per question.

    Returns
    -------
    ndarray of shape (18, K_max), int8
        ``table[j, code]`` is the 0-based rank of ``code`` in question ``j``'s bias-shift
        order, ``-1`` for edge labels and padding. Nominal questions are all ``-1``.
    """
    kmax = max(q.k for q in QUESTIONS)
    table = np.full((len(QUESTIONS), kmax), -1, dtype=np.int8)
    for j, q in enumerate(QUESTIONS):
        if q.ordinal:
            table[j, list(q.order)] = np.arange(len(q.order))
    return table


def _shift_in_bias_direction(atom: np.ndarray, gt: np.ndarray, source: int) -> np.ndarray:
    """(P, 18) bool: atom of ``source`` lies on the side of GT its bias sign predicts."""
    table = bias_rank_table()
    j = np.broadcast_to(np.arange(len(QIDS)), gt.shape)
    r_atom = np.where(atom >= 0, table[j, np.maximum(atom, 0)], -1)
    r_gt = np.where(gt >= 0, table[j, np.maximum(gt, 0)], -1)
    b = BIAS[:, source][None, :].astype(int)
    ok = (r_atom >= 0) & (r_gt >= 0) & (b != 0)
    return ok & (np.sign(r_atom.astype(int) - r_gt.astype(int)) == b)


@dataclass(frozen=True)
class ResolverEvidence:
    """Resolver (and LLM) outputs the full §8.7 protocol filters on, aligned with personas.

    Attributes
    ----------
    dsnbf_correct : ndarray of shape (P, 18), bool
        DSNBF's arg max equals GT (filter ii).
    dsnbf_margin : ndarray of shape (P, 18), float
        DSNBF's posterior margin p(top1) − p(top2); NaN where unknown (filter v).
    reference_wrong : ndarray of shape (P, 18), bool
        The filter-(iii) reference answers wrong.
    reference : {"llm", "majority_vote"}
        Which reference filter (iii) used (:data:`REFERENCE_NAMES`).
    other_correct : ndarray of shape (P, 18), bool
        At least one method of :data:`OTHER_FUSION` is correct (soft preference).
    llm_divergence : ndarray of shape (P, 18), bool, optional
        GPT and Gemini (Direct) both answered and disagree; ``None`` without both families.
    """

    dsnbf_correct: np.ndarray
    dsnbf_margin: np.ndarray
    reference_wrong: np.ndarray
    reference: str
    other_correct: np.ndarray
    llm_divergence: np.ndarray | None = None


def _answer_codes(personas: pd.DataFrame, frame: pd.DataFrame, *,
                  value: str | None = None) -> np.ndarray:
    """Codes (P, 18) of the ``answer`` column of a long frame keyed by seed, persona_id and
    question_id: ``-1`` no row, ``-2`` an answer outside the answer space. With ``value``,
    that float column instead (NaN where there is no row)."""
    p = len(personas)
    out = (np.full((p, len(QIDS)), -1, dtype=np.int8) if value is None
           else np.full((p, len(QIDS)), np.nan))
    if frame.empty or p == 0:
        return out
    keys = pd.DataFrame({"seed": personas["seed"].to_numpy().astype(np.int64),
                         "persona_id": personas["persona_id"].astype(str).to_numpy(),
                         "_p": np.arange(p, dtype=np.int64)})
    f = pd.DataFrame({"seed": frame["seed"].to_numpy().astype(np.int64),
                      "persona_id": frame["persona_id"].astype(str).to_numpy(),
                      "_q": frame["question_id"].astype(str).map(Q_INDEX).to_numpy(),
                      "_label": frame["answer"].astype(object).to_numpy()})
    if value is not None:
        f["_value"] = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=float)
    f = f.dropna(subset=["_q"]).merge(keys, on=["seed", "persona_id"], how="inner")
    if f.empty:
        return out
    rows, cols = f["_p"].to_numpy(), f["_q"].to_numpy().astype(np.int64)
    if value is not None:
        out[rows, cols] = f["_value"].to_numpy()
        return out
    lookup = pd.DataFrame(
        [(j, lab, c) for j, q in enumerate(QUESTIONS) for c, lab in enumerate(q.labels)],
        columns=["_q", "_label", "_code"])
    f = f.assign(_q=cols, _label=f["_label"].astype(str)).merge(
        lookup, on=["_q", "_label"], how="left")
    out[f["_p"].to_numpy(), f["_q"].to_numpy()] = f["_code"].fillna(-2).to_numpy(np.int8)
    return out


def resolver_evidence(personas: pd.DataFrame, gt_codes: np.ndarray, predictions: pd.DataFrame,
                      llm_answers: pd.DataFrame | None = None) -> ResolverEvidence | None:
    """Build the §8.7 filter inputs from the store's cached predictions (and LLM answers).

    Parameters
    ----------
    personas : DataFrame
        ``seed`` and ``persona_id`` of P personas, in array order.
    gt_codes : ndarray of shape (P, 18)
        Their ground-truth codes.
    predictions : DataFrame
        Long cached predictions (``method, seed, persona_id, question_id, answer, margin``)
        holding at least ``dsnbf`` and ``majority_vote`` (and ideally :data:`OTHER_FUSION`).
    llm_answers : DataFrame, optional
        Frozen LLM answers of the Direct prompt (``model, seed, persona_id, question_id,
        answer``). Models whose name starts with a :data:`FRONTIER_LLMS` prefix count.

    Returns
    -------
    ResolverEvidence or None
        ``None`` when the predictions lack DSNBF (a store without cached predictions).
    """
    gt = np.asarray(gt_codes)
    if gt.shape != (len(personas), len(QIDS)):
        raise ValueError(f"gt_codes must have shape {(len(personas), len(QIDS))}")
    if predictions.empty or "dsnbf" not in set(predictions["method"]):
        return None

    def of(method: str) -> pd.DataFrame:
        return predictions[predictions["method"] == method]

    dsnbf = _answer_codes(personas, of("dsnbf"))
    margin_ = _answer_codes(personas, of("dsnbf"), value="margin")
    others = [_answer_codes(personas, of(m)) for m in OTHER_FUSION
              if m in set(predictions["method"])]
    other_correct = (np.zeros(gt.shape, bool) if not others
                     else np.any([(o == gt) & (o >= 0) for o in others], axis=0))
    reference, reference_wrong, divergence = "majority_vote", None, None
    llm = llm_answers if llm_answers is not None else pd.DataFrame()
    if len(llm):
        model = llm["model"].astype(str).str.lower()
        families = {fam: llm[model.str.startswith(fam)] for fam in FRONTIER_LLMS}
        codes = {fam: _answer_codes(personas, f) for fam, f in families.items() if len(f)}
        if codes:
            reference = "llm"
            reference_wrong = np.any([(c != -1) & (c != gt) for c in codes.values()], axis=0)
            if len(codes) == len(FRONTIER_LLMS):
                a, b = (codes[f] for f in FRONTIER_LLMS)
                divergence = (a != -1) & (b != -1) & (a != b)
    if reference_wrong is None:
        mv = _answer_codes(personas, of("majority_vote"))
        reference_wrong = (mv != -1) & (mv != gt)
    return ResolverEvidence(dsnbf_correct=(dsnbf >= 0) & (dsnbf == gt), dsnbf_margin=margin_,
                            reference_wrong=reference_wrong, reference=reference,
                            other_correct=other_correct, llm_divergence=divergence)


def select_walkthrough(
    gt_codes: np.ndarray,
    atoms: np.ndarray,
    personas: pd.DataFrame,
    *,
    qid: str | None = None,
    keep_all: bool = False,
    evidence: ResolverEvidence | None = None,
) -> pd.DataFrame:
    """Rank (persona, question) pairs of the test split for the walked-through example.

    Implements the adapted §8.7 protocol described in the module docstring, vectorised over
    personas and questions.

    Parameters
    ----------
    gt_codes : ndarray of shape (P, 18)
        Ground-truth display codes (``ground_truth_codes(tb)[0]``).
    atoms : ndarray of shape (P, 18, 5)
        Direct-readout atoms μ* (``readout(tb)``), ``-1`` = no atom.
    personas : DataFrame with P rows
        Columns ``seed``, ``persona_id`` and ``split`` (``difficulty`` is carried along if
        present), in the same order as the arrays.
    qid : str, optional
        Restrict the pool to one question.
    keep_all : bool, default=False
        Also return the test pairs that fail a hard filter (after the ranked ones, with
        ``rank = -1``), e.g. to show how many each filter removes.
    evidence : ResolverEvidence, optional
        Resolver outputs aligned with ``personas``: adds hard filters (ii), (iii), (v) and the
        soft preferences of the full protocol (module docstring).

    Returns
    -------
    DataFrame
        One row per (persona, question) pair, best first, with columns ``rank`` (1-based;
        ``-1`` for rejected rows), ``seed``, ``persona_id``, ``difficulty``, ``question_id``,
        ``gt`` (the GT code), ``n_sources``, ``f_coverage`` (i), ``f_spread`` (iv),
        ``f_disagree``, ``qualifies``, ``planner_shift``, ``self_shift``, ``n_agree``,
        ``pref_agree``, ``n_prefs`` and ``row`` (the persona's position in the input).
        With ``evidence`` also ``f_dsnbf`` (ii), ``f_reference`` (iii), ``f_margin`` (v),
        ``dsnbf_margin``, ``pref_fusion`` and ``pref_llm`` (cross-family divergence, False
        when unknown). Empty (with these columns) when nothing qualifies.

    Raises
    ------
    ValueError
        On inconsistent shapes, missing persona columns or an unknown ``qid``.
    """
    gt = np.asarray(gt_codes)
    at = np.asarray(atoms)
    p = len(personas)
    if gt.shape != (p, len(QIDS)):
        raise ValueError(f"gt_codes must have shape {(p, len(QIDS))}, got {gt.shape}")
    if at.shape != (p, len(QIDS), len(SOURCES)):
        raise ValueError(f"atoms must have shape {(p, len(QIDS), len(SOURCES))}, got {at.shape}")
    lacking = [c for c in ("seed", "persona_id", "split") if c not in personas.columns]
    if lacking:
        raise ValueError(f"personas lacks columns: {', '.join(lacking)}")
    if qid is None:
        qsel = np.arange(len(QIDS))
    else:
        get_question(qid)  # ValueError naming the question if unknown
        qsel = np.array([Q_INDEX[qid]])

    present = at >= 0                                            # (P, 18, 5)
    n_sources = present.sum(-1)
    required = present[..., _PL] & present[..., _SR] & present[..., _OB]
    f_coverage = (n_sources >= 4) & required
    at16 = at.astype(np.int16)
    lo = np.where(present, at16, np.int16(np.iinfo(np.int16).max)).min(-1)
    hi = np.where(present, at16, np.int16(-1)).max(-1)
    f_spread = present.any(-1) & (lo != hi)
    disagree = present & (at != gt[..., None])
    f_disagree = disagree.any(-1)
    qualifies = f_coverage & f_spread & f_disagree
    planner_shift = _shift_in_bias_direction(at[..., _PL], gt, _PL)
    self_shift = _shift_in_bias_direction(at[..., _SR], gt, _SR)
    n_agree = (present & (at == gt[..., None])).sum(-1)
    pref_agree = n_agree >= 1
    n_prefs = planner_shift.astype(int) + self_shift.astype(int) + pref_agree.astype(int)
    extra: dict[str, np.ndarray] = {}
    if evidence is not None:
        for name in ("dsnbf_correct", "dsnbf_margin", "reference_wrong", "other_correct"):
            if np.shape(getattr(evidence, name)) != gt.shape:
                raise ValueError(f"evidence.{name} must have shape {gt.shape}")
        m = np.asarray(evidence.dsnbf_margin, float)
        lo_m, hi_m = MARGIN_WINDOW
        extra["f_dsnbf"] = np.asarray(evidence.dsnbf_correct, bool)
        extra["f_reference"] = np.asarray(evidence.reference_wrong, bool)
        with np.errstate(invalid="ignore"):
            extra["f_margin"] = np.isfinite(m) & (m >= lo_m) & (m <= hi_m)
        extra["dsnbf_margin"] = m
        extra["pref_llm"] = (np.zeros(gt.shape, bool) if evidence.llm_divergence is None
                             else np.asarray(evidence.llm_divergence, bool))
        extra["pref_fusion"] = np.asarray(evidence.other_correct, bool)
        qualifies = qualifies & extra["f_dsnbf"] & extra["f_reference"] & extra["f_margin"]
        n_prefs = (planner_shift.astype(int) + self_shift.astype(int)
                   + extra["pref_llm"].astype(int) + extra["pref_fusion"].astype(int))

    test = personas["split"].astype(str).to_numpy() == "test"
    rows, cols = np.nonzero(test[:, None] & np.isin(np.arange(len(QIDS)), qsel)[None, :])
    difficulty = (personas["difficulty"].astype(str).to_numpy() if "difficulty" in personas
                  else np.full(p, "", dtype=object))
    out = pd.DataFrame({
        "seed": personas["seed"].to_numpy()[rows].astype(np.int64),
        "persona_id": personas["persona_id"].astype(str).to_numpy()[rows],
        "difficulty": difficulty[rows],
        "question_id": np.asarray(QIDS, dtype=object)[cols],
        "q_order": cols.astype(np.int64),
        "gt": gt[rows, cols].astype(np.int64),
        "n_sources": n_sources[rows, cols].astype(np.int64),
        "f_coverage": f_coverage[rows, cols],
        "f_spread": f_spread[rows, cols],
        "f_disagree": f_disagree[rows, cols],
        "qualifies": qualifies[rows, cols],
        "planner_shift": planner_shift[rows, cols],
        "self_shift": self_shift[rows, cols],
        "n_agree": n_agree[rows, cols].astype(np.int64),
        "pref_agree": pref_agree[rows, cols],
        "n_prefs": n_prefs[rows, cols].astype(np.int64),
        "row": rows.astype(np.int64),
    })
    for name, arr in extra.items():
        out[name] = arr[rows, cols]
    if not keep_all:
        out = out[out["qualifies"]]
    prefs = (["planner_shift", "self_shift", "pref_llm", "pref_fusion"] if extra
             else ["planner_shift", "self_shift", "pref_agree"])
    keys = ["qualifies", "n_prefs", *prefs, "persona_id", "seed", "q_order"]
    out = out.sort_values(
        keys, ascending=[False] * (2 + len(prefs)) + [True, True, True], kind="stable",
    ).reset_index(drop=True)
    rank = np.where(out["qualifies"].to_numpy(), np.arange(1, len(out) + 1), -1)
    out.insert(0, "rank", rank.astype(np.int64))
    return out


# ---------------------------------------------------------------- one persona, one question
def _signed(b: int) -> str:
    """``+1`` / ``0`` / ``−1`` with a true minus sign."""
    return f"{b:+d}".replace("-", "\u2212") if b else "0"


def atom_verdicts(qid: str, gt_code: int, atoms_row: np.ndarray) -> pd.DataFrame:
    """Compare each source's atom with GT for one question, and say whether bias explains it.

    Parameters
    ----------
    qid : str
        Question id.
    gt_code : int
        The GT display code.
    atoms_row : ndarray of shape (5,)
        The μ* codes of the five sources for this question (``-1`` = no atom).

    Returns
    -------
    DataFrame
        One row per source, with ``source``, ``source_label``, ``atom`` (label or ``None``),
        ``status`` (``agree`` / ``disagree`` / ``null``), ``bias`` (−1, 0, +1),
        ``prior_predicts`` (the label the bias prior predicts given GT), ``shift`` (rank
        difference atom − GT in bias-shift order, ``None`` where undefined), ``explained``
        (one sentence) and ``rule`` (the readout rule of spec §2.9, or why there is none).
    """
    from core.testbed.questions import bias_predict

    q = get_question(qid)
    atoms_row = np.asarray(atoms_row).astype(int)
    if atoms_row.shape != (len(SOURCES),):
        raise ValueError(f"atoms_row must have shape (5,), got {atoms_row.shape}")
    j = Q_INDEX[qid]
    table = bias_rank_table()[j]
    g = int(gt_code)
    labels = q.labels
    records = []
    for s, src in enumerate(SOURCES):
        a = int(atoms_row[s])
        b = int(BIAS[j, s])
        predicted = labels[int(bias_predict(qid, src, np.array([g]))[0])] if g >= 0 else None
        shift = None
        if a >= 0 and g >= 0 and table[a] >= 0 and table[g] >= 0:
            shift = int(table[a]) - int(table[g])
        if a < 0:
            status = "null"
            if src in q.informative:
                why = "no atom: the source had nothing to read for this question"
            else:
                why = "no atom: this source is not informative for the question (spec §2.4)"
        elif a == g:
            status = "agree"
            why = ("agrees with GT" if b == 0 or not q.ordinal
                   else f"agrees with GT: its bias ({_signed(b)}) did not cross a bin boundary")
        else:
            status = "disagree"
            if not q.ordinal:
                why = "disagrees; the question is nominal, so the bias prior has no direction"
            elif shift is None:
                why = "disagrees through an edge label, not a shift along the scale"
            elif b == 0:
                why = ("disagrees although the source has no directional bias: coverage, "
                       "projection or noise (dropped days, proxies, a stale window)")
            elif np.sign(shift) == b:
                why = (f"disagrees in its bias direction ({_signed(b)}): the bias explains "
                       "the shift")
            else:
                why = (f"disagrees against its bias direction ({_signed(b)}): the bias does "
                       "not explain it")
        rule = READOUT_RULES.get((qid, src))
        if rule is None:
            rule = ("not informative for this question (spec §2.4)"
                    if src not in q.informative else "edge label broadcast (spec §2.4)")
        records.append({
            "source": src,
            "source_label": SOURCE_LABELS[src],
            "atom": labels[a] if a >= 0 else None,
            "status": status,
            "bias": b,
            "prior_predicts": predicted,
            "shift": shift,
            "explained": why,
            "rule": rule,
        })
    out = pd.DataFrame.from_records(records)
    out["atom"] = pd.Series([r["atom"] for r in records], dtype=object)
    out["shift"] = pd.array([r["shift"] for r in records], dtype="Int64")
    return out


def atom_grid_table(gt_codes_row: np.ndarray, atoms_row: np.ndarray) -> pd.DataFrame:
    """The 18 × 5 atom grid of one persona beside GT, as labels and statuses (for CSV).

    Parameters
    ----------
    gt_codes_row : ndarray of shape (18,)
    atoms_row : ndarray of shape (18, 5)

    Returns
    -------
    DataFrame
        One row per question: ``question_id``, ``title``, ``gt`` and, per source,
        ``<source>`` (label or empty) and ``<source>_status`` (agree / disagree / null).
    """
    gt = np.asarray(gt_codes_row).astype(int)
    at = np.asarray(atoms_row).astype(int)
    if gt.shape != (len(QIDS),) or at.shape != (len(QIDS), len(SOURCES)):
        raise ValueError(f"expected shapes (18,) and (18, 5), got {gt.shape} and {at.shape}")
    data: dict[str, list] = {"question_id": list(QIDS), "title": [q.title for q in QUESTIONS],
                             "gt": [q.labels[gt[j]] if gt[j] >= 0 else ""
                                    for j, q in enumerate(QUESTIONS)]}
    for s, src in enumerate(SOURCES):
        data[src] = [q.labels[at[j, s]] if at[j, s] >= 0 else "" for j, q in enumerate(QUESTIONS)]
        data[f"{src}_status"] = np.select([at[:, s] < 0, at[:, s] == gt],
                                          ["null", "agree"], "disagree").tolist()
    return pd.DataFrame(data)


def difficulty_note(persona: pd.Series | dict, *, anchor_end: int | None = None) -> str:
    """One-sentence explanation of a persona's difficulty class (spec §2.5, §2.7)."""
    d = str(persona.get("difficulty", ""))
    note = DIFFICULTY_NOTES.get(d, d)
    scenario = str(persona.get("scenario", "") or "").replace("_", " ") or "not recorded"
    return note.format(shift_day=int(persona.get("shift_day", 0) or 0), scenario=scenario,
                       anchor_end=anchor_end if anchor_end is not None else "?")


# ---------------------------------------------------------------- day tables
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


# ---------------------------------------------------------------- store frames → arrays
def label_arrays(
    personas: pd.DataFrame,
    ground_truth: pd.DataFrame,
    atoms: pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray]:
    """Turn the store's long label tables back into code arrays aligned with ``personas``.

    Parameters
    ----------
    personas : DataFrame
        ``seed`` and ``persona_id`` of P personas, in array order.
    ground_truth : DataFrame
        Rows ``seed, persona_id, question_id, answer`` (the store's ``ground_truth``).
    atoms : DataFrame
        Rows ``seed, persona_id, question_id, source, value`` of one atom kind (``value``
        missing = no atom).

    Returns
    -------
    gt_codes : ndarray of shape (P, 18), int8
        ``-1`` where a label is missing or unknown.
    atom_codes : ndarray of shape (P, 18, 5), int8
        ``-1`` = no atom.
    """
    p = len(personas)
    keys = pd.DataFrame({"seed": personas["seed"].to_numpy().astype(np.int64),
                         "persona_id": personas["persona_id"].astype(str).to_numpy(),
                         "_p": np.arange(p, dtype=np.int64)})
    lookup = pd.DataFrame(
        [(q.qid, lab, j, c) for j, q in enumerate(QUESTIONS) for c, lab in enumerate(q.labels)],
        columns=["question_id", "_label", "_q", "_code"])

    def codes_of(frame: pd.DataFrame, label_col: str) -> pd.DataFrame:
        f = frame.assign(seed=frame["seed"].to_numpy().astype(np.int64),
                         persona_id=frame["persona_id"].astype(str),
                         question_id=frame["question_id"].astype(str),
                         _label=frame[label_col].astype(object))
        f = f.merge(keys, on=["seed", "persona_id"], how="inner")
        return f.merge(lookup, on=["question_id", "_label"], how="inner")

    gt = np.full((p, len(QIDS)), -1, dtype=np.int8)
    g = codes_of(ground_truth, "answer")
    gt[g["_p"].to_numpy(), g["_q"].to_numpy()] = g["_code"].to_numpy()
    at = np.full((p, len(QIDS), len(SOURCES)), -1, dtype=np.int8)
    a = codes_of(atoms.dropna(subset=["value"]), "value")
    s_index = {s: i for i, s in enumerate(SOURCES)}
    a = a[a["source"].astype(str).isin(s_index)]
    at[a["_p"].to_numpy(), a["_q"].to_numpy(),
       a["source"].astype(str).map(s_index).to_numpy(dtype=np.int64)] = a["_code"].to_numpy()
    return gt, at


# ---------------------------------------------------------------- stages 8–9: resolvers
def resolver_table(predictions: pd.DataFrame, *, qid: str, gt_label: str,
                   labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Every resolver's answer to one question of one persona, beside GT (stages 8–9).

    Parameters
    ----------
    predictions : DataFrame
        One persona's cached predictions (``method, question_id, answer, confidence,
        skipped, margin``; :func:`core.evaluation.cached.persona_predictions`).
    qid : str
        The question.
    gt_label : str
        Its ground-truth label.
    labels : dict, optional
        Display names of the methods (default ``METHOD_LABELS``).

    Returns
    -------
    DataFrame
        One row per method in leaderboard order: ``method``, ``label``, ``selective``
        (a ``_skip`` variant), ``answer``, ``correct``, ``confidence``, ``skipped``,
        ``margin`` (NaN without a posterior) and ``outcome`` (``correct`` / ``wrong`` /
        ``abstains (would be right|wrong)``).
    """
    get_question(qid)
    names = dict(METHOD_LABELS if labels is None else labels)
    rows = predictions[predictions["question_id"].astype(str) == qid]
    order = {m: i for i, m in enumerate(FORCED_METHODS + SELECTIVE_METHODS)}
    rows = rows.assign(_o=rows["method"].map(order).fillna(len(order))).sort_values("_o")
    out = pd.DataFrame({
        "method": rows["method"].astype(str).to_numpy(),
        "label": [names.get(m, m) for m in rows["method"].astype(str)],
        "selective": rows["method"].astype(str).str.endswith("_skip").to_numpy(),
        "answer": rows["answer"].astype(str).to_numpy(),
        "correct": (rows["answer"].astype(str) == gt_label).to_numpy(),
        "confidence": pd.to_numeric(rows["confidence"], errors="coerce").to_numpy(float),
        "skipped": rows["skipped"].astype(bool).to_numpy(),
        "margin": pd.to_numeric(rows["margin"], errors="coerce").to_numpy(float),
    })
    out["outcome"] = np.where(
        out["skipped"], np.where(out["correct"], "abstains (would be right)",
                                 "abstains (would be wrong)"),
        np.where(out["correct"], "correct", "wrong"))
    return out


# ---------------------------------------------------------------- stated vs revealed
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
