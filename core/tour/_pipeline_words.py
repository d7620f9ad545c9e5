"""Plain words for the pipeline stops (:mod:`.stops_pipeline`): answers, questions, sources.

A student reads "within 20 minutes of the plan on more than half the days", not
``within_20min_more_than_50pct`` (issue 22 point 6). The answer labels are the benchmark
specification's §2.2 answer spaces (:data:`core.testbed.questions.QUESTIONS`); labels this
table does not list read with their underscores as spaces.
"""

from __future__ import annotations

from types import MappingProxyType

from ..testbed.questions import question

__all__ = ["DIFFICULTY_WORDS", "SOURCE_WORDS", "answer_words", "count", "person_words",
           "question_words", "share"]

#: Labels whose underscores alone do not read as words (every question that uses them).
_LABELS = MappingProxyType({
    "within_20min_more_than_50pct": "within 20 minutes of the plan on more than half the days",
    "later_more_than_50pct": "later than planned on more than half the days",
    "earlier_more_than_50pct": "earlier than planned on more than half the days",
    "25_to_50_pct": "25 to 50 %", "above_50_pct": "above 50 %", "below_25_pct": "below 25 %",
    "between_30_60": "between 30 and 60 %", "no_fewer_than_30": "no (fewer than 30 %)",
    "yes_more_than_60": "yes (more than 60 %)",
    "deliberate_exercise_70plus": "deliberate exercise (70 % or more)",
    "incidental_movement_70plus": "incidental movement (70 % or more)",
    "obligatory_70plus": "obligations (70 % or more)",
    "voluntary_70plus": "voluntary (70 % or more)",
    "within_1": "within 1 of the baseline", "differs_more_than_1": "more than 1 off the baseline",
    "within_1_day": "within 1 day a week", "more_than_1_above": "more than 1 day a week above",
    "more_than_1_below": "more than 1 day a week below", "stayed_same": "stayed the same",
    "yes_worked_despite_no_entry": "yes, worked with no entry",
    "yes_tracker_missing": "yes, the tracker was missing",
    "0_nights": "no night", "0_to_1_days": "0 or 1 day", "1_to_2": "1 or 2 nights",
})
#: Labels that read differently in one question (A3's are shares of meals, not counts).
_BY_QUESTION = MappingProxyType({
    ("A3", "less_than_40"): "less than 40 %", ("A3", "40_to_69"): "40 to 69 %",
    ("A3", "70_or_more"): "70 % or more"})

#: The five sources in a sentence.
SOURCE_WORDS = MappingProxyType({
    "profile_ltm": "the profile", "planner": "the planner",
    "daily_self_report": "the daily self-report", "objective_log": "the objective log",
    "device_log": "the device log"})

#: The three difficulty classes (seed 000 §2.1) in words.
DIFFICULTY_WORDS = MappingProxyType({
    "stable": "stable", "temporal_shift": "temporal shift",
    "stated_vs_revealed": "stated vs revealed"})


def answer_words(qid: str, label: str | None) -> str:
    """An answer label of question ``qid`` in words ("no answer" for none).

    Examples
    --------
    >>> answer_words("C3", "within_20min_more_than_50pct")
    'within 20 minutes of the plan on more than half the days'
    >>> answer_words("A3", "70_or_more"), answer_words("A1", "20_or_more")
    ('70 % or more', '20 or more')
    """
    if label is None:
        return "no answer"
    q = question(qid)
    if label not in q.labels:
        raise ValueError(f"{label!r} is not an answer of {qid} (answers: {', '.join(q.labels)})")
    return _BY_QUESTION.get((qid, label)) or _LABELS.get(label) or label.replace("_", " ")


def question_words(qid: str) -> str:
    """The question's title and wording: "Social trend: did social activity per day …?"."""
    q = question(qid)
    return f"{q.title}: {q.text[0].lower()}{q.text[1:]}"


def person_words(persona_id: str, seed: int, *, name: str | None = None,
                 difficulty: str | None = None) -> str:
    """A test person in words, with the id and random seed the pages list them by.

    Examples
    --------
    >>> person_words("p7", 1, name="Sam Bennett", difficulty="stable")
    'Sam Bennett, a test person of the stable kind (listed as p7, random seed 1)'
    """
    kind = f" of the {DIFFICULTY_WORDS[difficulty]} kind" if difficulty else ""
    who = f"{name}, a test person{kind}" if name else f"a test person{kind}"
    return f"{who} (listed as {persona_id}, random seed {int(seed)})"


def count(k: int, n: int) -> str:
    """``"k of n (p %)"`` with thousands separators."""
    return f"{int(k):,} of {int(n):,} ({100 * int(k) / int(n):.1f} %)" if n else f"{int(k)} of 0"


def share(value: float) -> str:
    """A percentage with one decimal: ``"82.6 %"``."""
    return f"{float(value):.1f} %"
