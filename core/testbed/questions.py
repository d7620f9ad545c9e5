"""The 18 questions of seed 000, as data: one source of truth for labels, maps and biases.

Source: seed 000 §8.2 and the benchmark specification §2.2–2.4.

Conventions
-----------
* Labels are stored as integer codes: the index in **display order** (the ``answer_space``
  order of the released prompts). ``-1`` means "no atom" (⊥).
* ``order`` lists the display codes in **bias-shift order** (rank 1 → K over the substantive
  labels only); it differs from display order for A2, Ctrl1 and Ctrl2.
* Edge labels are factual edge cases ("no_plans"), not abstentions, and are never shifted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BIAS",
    "QIDS",
    "QUESTIONS",
    "Q_INDEX",
    "SOURCES",
    "SOURCE_LABELS",
    "SOURCE_SHORT",
    "TYPE_NAMES",
    "Question",
    "bias_predict",
    "question",
]

SOURCES = ("profile_ltm", "planner", "daily_self_report", "objective_log", "device_log")
SOURCE_LABELS = {
    "profile_ltm": "Profile (long-term memory)",
    "planner": "Planner",
    "daily_self_report": "Daily self-report",
    "objective_log": "Objective log",
    "device_log": "Device log",
}
#: the sources' short names (grid columns, buttons)
SOURCE_SHORT = {"profile_ltm": "Profile", "planner": "Planner",
                "daily_self_report": "Self-report", "objective_log": "Objective",
                "device_log": "Device"}
_P, _PL, _S, _O, _D = SOURCES

TYPE_NAMES = {
    "arbitration": "A Arbitration",
    "identity": "B Identity",
    "plan_reality": "C Plan-Reality",
    "trend": "D Trend",
    "causal": "E Factor",
    "missing_data": "F Missing",
    "annotation": "G Annotation",
    "control": "Ctrl",
}


@dataclass(frozen=True)
class Question:
    """One survey question.

    Attributes
    ----------
    qid, family, topic, window : identity, reasoning type, topic and window in days.
    labels : answer space in display order (edge labels included).
    ordinal : whether the substantive labels are ordered (False for B3, C3, E1).
    order : display codes of the substantive labels in bias-shift order (rank 1 → K).
    edge : display codes of edge labels.
    informative : sources allowed to be non-null in extracted atoms (spec §2.4).
    context : the second source read as context, or ``None``.
    title, text : short title and the question wording.
    """

    qid: str
    family: str
    topic: str
    window: int
    labels: tuple[str, ...]
    ordinal: bool
    order: tuple[int, ...]
    edge: tuple[int, ...]
    informative: tuple[str, ...]
    context: str | None
    title: str
    text: str

    @property
    def k(self) -> int:
        """Size of the full answer space (edge labels included)."""
        return len(self.labels)

    @property
    def k_substantive(self) -> int:
        """Number of substantive (ordered) labels."""
        return len(self.labels) - len(self.edge)

    def code(self, label: str) -> int:
        """Display code of ``label``; raises ``ValueError`` naming the question if unknown."""
        try:
            return self.labels.index(label)
        except ValueError:
            raise ValueError(
                f"{label!r} is not an answer of {self.qid} "
                f"(expected one of {', '.join(self.labels)})"
            ) from None


def _q(qid, family, topic, window, labels, *, nominal=False, order=None, edge=(), informative,
       context=None, title, text) -> Question:
    labels = tuple(labels)
    edge_codes = tuple(labels.index(e) for e in edge)
    subst = [i for i in range(len(labels)) if i not in edge_codes]
    order_codes = tuple(labels.index(x) for x in order) if order else tuple(subst)
    return Question(qid, family, topic, window, labels, not nominal, order_codes, edge_codes,
                    tuple(informative), context, title, text)


_ALL = (_P, _PL, _S, _O, _D)
QUESTIONS: tuple[Question, ...] = (
    _q("A1", "arbitration", "sleep", 30, ["fewer_than_10", "10_to_19", "20_or_more"],
       informative=(_S, _D, _PL, _P), title="Sleep duration count",
       text="In the past 30 days, on how many nights did this person sleep 7 hours or more?"),
    _q("A2", "arbitration", "work", 30, ["0_to_3", "4_to_7", "8_or_more"],
       order=["8_or_more", "4_to_7", "0_to_3"], informative=_ALL, title="Long work days count",
       text="In the past 30 days, on how many workdays did this person work more than 9 hours?"),
    _q("A3", "arbitration", "diet", 30, ["less_than_40", "40_to_69", "70_or_more"],
       informative=(_S, _PL, _P, _O), title="Home-cooked share",
       text="In the past 30 days, on what share of meal occasions did this person eat "
            "home-cooked food?"),
    _q("B2", "identity", "exercise", 30,
       ["more_than_1_below", "within_1_day", "more_than_1_above", "no_frequency_described"],
       edge=["no_frequency_described"], informative=_ALL, context=_P,
       title="Exercise frequency vs profile",
       text="Compared with the exercise frequency in the profile, how many days per week did "
            "this person actually exercise?"),
    _q("B3", "identity", "work", 30, ["matches", "does_not_match", "no_approach_described"],
       nominal=True, edge=["no_approach_described"], informative=(_S, _D, _P, _O), context=_P,
       title="Weekend work vs profile",
       text="Does this person's weekend work match the after-hours work style in the profile?"),
    _q("C2", "plan_reality", "social", 14,
       ["below_25_pct", "25_to_50_pct", "above_50_pct", "no_plans"], edge=["no_plans"],
       informative=(_S, _PL, _O), context=_PL, title="Social plan realisation",
       text="In the last 14 days, what share of days with planned social activity actually "
            "had one?"),
    _q("C3", "plan_reality", "sleep", 14,
       ["within_20min_more_than_50pct", "later_more_than_50pct", "earlier_more_than_50pct",
        "no_targets"], nominal=True, edge=["no_targets"], informative=(_S, _D), context=_PL,
       title="Bedtime vs target",
       text="In the last 14 days, how did actual bedtimes compare with the planned target?"),
    _q("D1", "trend", "social", 30, ["decreased", "stayed_same", "increased"],
       informative=(_S, _PL, _O), title="Social trend",
       text="Did social activity per day increase, decrease or stay the same from the first "
            "two weeks to the rest of the month?"),
    _q("D2", "trend", "diet", 30, ["within_1", "differs_more_than_1", "no_baseline"],
       edge=["no_baseline"], informative=(_S, _P), context=_P, title="Diet vs baseline",
       text="Do daily meals and home-cooked meals differ from the profile baseline by more "
            "than 1 in total?"),
    _q("E1", "causal", "sleep", 30,
       ["work_activity", "social_activity", "no_single_factor", "no_late_nights"], nominal=True,
       edge=["no_late_nights"], informative=(_S, _D, _PL, _O), title="Late-night cause",
       text="What mostly caused this person's late nights (bed after midnight)?"),
    _q("E2", "causal", "exercise", 30,
       ["no_fewer_than_30", "between_30_60", "yes_more_than_60"], informative=_ALL, context=_PL,
       title="Exercise skip cause",
       text="Were planned workouts that were skipped mostly days of long work?"),
    _q("F1", "missing_data", "social", 30,
       ["0_to_3", "4_to_6", "7_or_more", "no_social_activities"],
       edge=["no_social_activities"], informative=(_S, _O, _PL, _P), context=_PL,
       title="Unplanned social count",
       text="How many social days had no social activity planned?"),
    _q("F2", "missing_data", "exercise", 30,
       ["inactive_confirmed", "both_occurred", "yes_tracker_missing"], informative=_ALL,
       context=_D, title="Tracker missing vs inactive",
       text="On days without a detected workout, was the person inactive, or was the tracker "
            "missing while they exercised?"),
    _q("F3", "missing_data", "work", 30,
       ["truly_off", "both_occurred", "yes_worked_despite_no_entry"],
       informative=(_S, _D, _PL, _P), context=_O, title="Timesheet missing vs off",
       text="On days with no objective record, was the person off work or working anyway?"),
    _q("G1", "annotation", "exercise", 30,
       ["incidental_movement_70plus", "mix", "deliberate_exercise_70plus", "no_activity"],
       edge=["no_activity"], informative=(_S, _PL, _D), title="Deliberate vs incidental exercise",
       text="Was this person's exercise mostly deliberate or mostly incidental movement?"),
    _q("G2", "annotation", "social", 30,
       ["obligatory_70plus", "mix", "voluntary_70plus", "no_meetings"], edge=["no_meetings"],
       informative=(_S, _O, _PL, _P), title="Voluntary vs obligatory social",
       text="Were this person's social meetings mostly voluntary or mostly obligations?"),
    _q("Ctrl1", "control", "diet", 7, ["0_to_1_days", "2_to_3_days", "4_or_more"],
       order=["4_or_more", "2_to_3_days", "0_to_1_days"], informative=(_S, _PL, _P),
       title="Outside meals",
       text="In the last 7 days, on how many days did this person eat any meal not cooked "
            "at home?"),
    _q("Ctrl2", "control", "sleep", 7, ["0_nights", "1_to_2", "3_or_more"],
       order=["3_or_more", "1_to_2", "0_nights"], informative=(_S, _D, _PL),
       title="Short sleep nights",
       text="In the last 7 days, on how many nights did this person sleep less than 6 hours?"),
)
QIDS: tuple[str, ...] = tuple(q.qid for q in QUESTIONS)
Q_INDEX = {q: i for i, q in enumerate(QIDS)}

# Source bias prior (spec §2.3): sign per (question, source) in SOURCES order.
_TOPIC_SELF = {"work": -1, "diet": 1, "social": -1, "sleep": 1, "exercise": 1}
_OVERRIDES = {"A2": {_S: 1}, "C2": {_S: 1}, "F1": {_PL: -1, _S: 1}, "G2": {_S: 1}}


def _bias_row(q: Question) -> list[int]:
    row = {_P: 0, _PL: 1, _S: _TOPIC_SELF[q.topic], _O: 0, _D: 0}
    row.update(_OVERRIDES.get(q.qid, {}))
    return [row[s] for s in SOURCES]


BIAS = np.array([_bias_row(q) for q in QUESTIONS], dtype=np.int8)
BIAS.setflags(write=False)


def question(qid: str) -> Question:
    """Return the :class:`Question` with id ``qid`` (``ValueError`` if unknown)."""
    try:
        return QUESTIONS[Q_INDEX[qid]]
    except KeyError:
        raise ValueError(f"unknown question {qid!r} (expected one of {', '.join(QIDS)})") from None


def bias_predict(qid: str, source: str, codes: np.ndarray) -> np.ndarray:
    """Label a biased source would report when the truth is ``codes`` (spec §2.3).

    Nominal questions, zero bias and edge labels return the input unchanged; otherwise the
    rank in bias-shift order moves by the bias sign and is clamped to ``[1, K]`` over the
    substantive labels. ``-1`` (no atom) passes through.
    """
    q = question(qid)
    b = int(BIAS[Q_INDEX[qid], SOURCES.index(source)])
    codes = np.asarray(codes)
    if not q.ordinal or b == 0:
        return codes.copy()
    rank = np.full(q.k, -1)
    rank[list(q.order)] = np.arange(len(q.order))
    order = np.asarray(q.order)
    out = codes.copy()
    subst = codes >= 0
    subst[subst] = rank[codes[subst]] >= 0
    new_rank = np.clip(rank[codes[subst]] + b, 0, len(q.order) - 1)
    out[subst] = order[new_rank]
    return out
