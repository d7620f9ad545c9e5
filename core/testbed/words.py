"""The answers of the 18 questions in plain words, for the pages (issue 22 point 6).

An answer is stored as its label (``within_20min_more_than_50pct``, :data:`QUESTIONS`); a
student reads "within 20 minutes of the target on more than half the nights". Every label of
every question has its words here (the memory benchmark's answer spaces, §8.2, with the
ranges its prompts give), so no page has to show a label; the stored values do not change.

Invariants (``tests/test_vocabulary.py``): every label of every question has words, the words
of one question's answers are distinct, and no words contain an underscore.
"""

from __future__ import annotations

from types import MappingProxyType

from .questions import question

__all__ = ["LABEL_WORDS", "label_words"]

_NIGHTS = {"fewer_than_10": "fewer than 10 nights", "10_to_19": "10 to 19 nights",
           "20_or_more": "20 nights or more"}
_SEVENTY = "70 % or more of the time"

#: (question id, label) → the answer in words.
LABEL_WORDS: MappingProxyType = MappingProxyType({(qid, label): words for qid, table in {
    "A1": _NIGHTS,
    "A2": {"0_to_3": "0 to 3 days", "4_to_7": "4 to 7 days", "8_or_more": "8 days or more"},
    "A3": {"less_than_40": "under 40 % of meals", "40_to_69": "40 to 69 % of meals",
           "70_or_more": "70 % of meals or more"},
    "B2": {"more_than_1_below": "over 1 day a week less than the profile says",
           "within_1_day": "within 1 day a week of the profile",
           "more_than_1_above": "over 1 day a week more than the profile says",
           "no_frequency_described": "the profile gives no frequency"},
    "B3": {"matches": "matches the profile", "does_not_match": "does not match the profile",
           "no_approach_described": "the profile describes no approach"},
    "C2": {"below_25_pct": "under 25 % of the plans", "25_to_50_pct": "25 to 50 % of the plans",
           "above_50_pct": "over 50 % of the plans", "no_plans": "no social plans"},
    "C3": {"within_20min_more_than_50pct": "within 20 minutes of the target on most nights",
           "later_more_than_50pct": "later than the target on most nights",
           "earlier_more_than_50pct": "earlier than the target on most nights",
           "no_targets": "no bedtime targets"},
    "D1": {"decreased": "decreased", "stayed_same": "stayed the same",
           "increased": "increased"},
    "D2": {"within_1": "within 1 meal a day of the profile",
           "differs_more_than_1": "over 1 meal a day off the profile",
           "no_baseline": "the profile gives no baseline"},
    "E1": {"work_activity": "long work", "social_activity": "social activity",
           "no_single_factor": "no single factor", "no_late_nights": "no late nights"},
    "E2": {"no_fewer_than_30": "no: under 30 % of the skipped days",
           "between_30_60": "30 to 60 % of the skipped days",
           "yes_more_than_60": "yes: over 60 % of the skipped days"},
    "F1": {"0_to_3": "0 to 3 days", "4_to_6": "4 to 6 days", "7_or_more": "7 days or more",
           "no_social_activities": "no social activities"},
    "F2": {"inactive_confirmed": "inactive, as the tracker says",
           "both_occurred": "some days each",
           "yes_tracker_missing": "exercised, the tracker missed it"},
    "F3": {"truly_off": "off work, as the timesheet says", "both_occurred": "some days each",
           "yes_worked_despite_no_entry": "worked, the timesheet missed it"},
    "G1": {"incidental_movement_70plus": f"incidental movement {_SEVENTY}",
           "mix": "a mix", "deliberate_exercise_70plus": f"deliberate exercise {_SEVENTY}",
           "no_activity": "no activity"},
    "G2": {"obligatory_70plus": f"obligations {_SEVENTY}", "mix": "a mix",
           "voluntary_70plus": f"voluntary {_SEVENTY}", "no_meetings": "no social meetings"},
    "Ctrl1": {"0_to_1_days": "0 or 1 day", "2_to_3_days": "2 or 3 days",
              "4_or_more": "4 days or more"},
    "Ctrl2": {"0_nights": "no night", "1_to_2": "1 or 2 nights",
              "3_or_more": "3 nights or more"},
}.items() for label, words in table.items()})


def label_words(qid: str, label: str | None) -> str:
    """The answer ``label`` of question ``qid`` in words; "no answer" for ``None``.

    Raises ``ValueError`` naming the question when ``label`` is not one of its answers.

    Examples
    --------
    >>> label_words("C3", "within_20min_more_than_50pct")
    'within 20 minutes of the target on most nights'
    >>> label_words("E2", "between_30_60"), label_words("A3", "less_than_40")
    ('30 to 60 % of the skipped days', 'under 40 % of meals')
    """
    if label is None:
        return "no answer"
    q = question(qid)
    words = LABEL_WORDS.get((q.qid, label))
    if words is None:
        q.code(label)  # raises, naming the question and its answers
        raise AssertionError(f"{qid}: {label!r} has no words")  # pragma: no cover
    return words

