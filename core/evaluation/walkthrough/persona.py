"""The persona panel of the Walkthrough: who the person is and what each source makes of them.

Source: the benchmark specification (seed 000) §2.5 (difficulty classes), §2.6 (persona
traits) and §2.7 (the five sources: their bias, their lost days, the profile's anchor
window); seed 000 §8.6 (stages 1–3 of the walked-through example).

:func:`persona_panel` gathers everything the page's header and stages 1 and 3 print about one
persona, as text and display-ready tables. Invariants (``tests/test_walkthrough_panels.py``):
``traits`` has one row per trait with text values; ``shift_day`` is set iff the persona is a
temporal-shift persona with a shift day, and then ``habits.shift`` is a table; ``lost_days``
counts the days whose objective or device record is missing (0–30); ``source_notes`` has one
sentence per source in :data:`SOURCES` order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from core.evaluation.walkthrough.habits import HabitTables, habit_tables, profile_vs_actual
from core.evaluation.walkthrough.texts import DIFFICULTY_NOTES, SOURCE_ROLES
from core.testbed.questions import SOURCES
from core.testbed.schema import Testbed
from core.testbed.vocab import N_DAYS

__all__ = ["DIFFICULTY_LABELS", "PersonaPanel", "difficulty_note", "persona_panel"]

#: Short names of the difficulty classes (spec §2.5).
DIFFICULTY_LABELS = MappingProxyType({"stable": "stable", "temporal_shift": "temporal shift",
                                      "stated_vs_revealed": "stated vs revealed"})

#: Persona column → trait name on the page.
_TRAITS = (("age", "age"), ("occupation", "occupation"), ("city", "city"),
           ("relationship", "relationship"), ("dietary_restriction", "diet"),
           ("social_preference", "social preference"), ("close_friends", "close friends"),
           ("primary_exercise", "primary exercise"))


def difficulty_note(persona: pd.Series | dict, *, anchor_end: int | None = None) -> str:
    """One-sentence explanation of a persona's difficulty class (spec §2.5, §2.7)."""
    d = str(persona.get("difficulty", ""))
    note = DIFFICULTY_NOTES.get(d, d)
    scenario = str(persona.get("scenario", "") or "").replace("_", " ") or "not recorded"
    return note.format(shift_day=int(persona.get("shift_day", 0) or 0), scenario=scenario,
                       anchor_end=anchor_end if anchor_end is not None else "?")


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return str(value).replace("_", " ")


@dataclass(frozen=True)
class PersonaPanel:
    """What the Walkthrough shows about one persona (header, stages 1 and 3).

    Attributes
    ----------
    persona_id, name : str
    seed : int
    split : str
        ``train`` / ``calibration`` / ``dev`` / ``test``.
    difficulty : str
        The class key; ``difficulty_label`` its short name.
    difficulty_label : str
    traits : DataFrame
        ``trait``, ``value`` (text).
    note : str
        The difficulty class in one sentence, for this persona.
    stated : bool
        A stated-vs-revealed persona.
    habits : HabitTables
        The profile beside the 30 days (and, after a shift, before beside after).
    anchor_end : int
        Last day the profile summarises.
    shift_day : int or None
        First shifted day of a temporal-shift persona.
    lost_days : mapping
        ``objective_log`` and ``device_log`` → days without a record (0–30).
    source_notes : tuple of (str, str)
        ``(source, sentence)``: what the source distorts, and this persona's share of it.
    """

    persona_id: str
    name: str
    seed: int
    split: str
    difficulty: str
    difficulty_label: str
    traits: pd.DataFrame
    note: str
    stated: bool
    habits: HabitTables
    anchor_end: int
    shift_day: int | None
    lost_days: Mapping[str, int]
    source_notes: tuple[tuple[str, str], ...]


def persona_panel(tb: Testbed, *, row: int = 0) -> PersonaPanel:
    """The persona panel of the persona at ``row`` of ``tb`` (usually a one-persona slice).

    Raises
    ------
    ValueError
        If ``row`` is outside ``tb``.
    """
    if not 0 <= row < tb.n:
        raise ValueError(f"row {row} out of range for a testbed of {tb.n} personas")
    person = tb.personas.iloc[row]
    difficulty = str(person["difficulty"])
    anchor_end = int(tb.profile["anchor_end"][row])
    raw_shift = int(person.get("shift_day", 0) or 0)
    shift_day = raw_shift if difficulty == "temporal_shift" and raw_shift > 0 else None
    traits = {label: _text(person.get(col)) for col, label in _TRAITS}
    if difficulty == "temporal_shift":
        traits["scenario"] = _text(person.get("scenario") or "not recorded")
        traits["shift day"] = str(raw_shift)
    lost = {"objective_log": int((~tb.objective["available"][row]).sum()),
            "device_log": int((~tb.device["available"][row]).sum())}
    knobs = tb.knobs.iloc[row] if len(tb.knobs) > row else pd.Series(dtype=float)
    notes = []
    for src in SOURCES:
        extra = ""
        if src in lost:
            extra = f" This persona lost **{lost[src]} of {N_DAYS}** days."
        elif src == "profile_ltm":
            extra = f" This profile summarises days 1–{anchor_end}."
        elif src == "daily_self_report" and "self_report_conflict_rate" in knobs:
            extra = (" Conflict rate for this persona: "
                     f"{float(knobs['self_report_conflict_rate']):.0%}.")
        elif src == "planner" and "planner_optimism_bias" in knobs:
            extra = f" Optimism for this persona: {float(knobs['planner_optimism_bias']):.2f}."
        notes.append((src, SOURCE_ROLES[src] + extra))
    return PersonaPanel(
        persona_id=str(person["persona_id"]), name=str(person["name"]),
        seed=int(person["seed"]), split=str(person["split"]), difficulty=difficulty,
        difficulty_label=DIFFICULTY_LABELS.get(difficulty, difficulty.replace("_", " ")),
        traits=pd.DataFrame({"trait": list(traits), "value": list(traits.values())}),
        note=difficulty_note(person, anchor_end=anchor_end),
        stated=difficulty == "stated_vs_revealed",
        habits=habit_tables(profile_vs_actual(tb, row=row), anchor_end=anchor_end,
                            shift_day=shift_day),
        anchor_end=anchor_end, shift_day=shift_day, lost_days=MappingProxyType(lost),
        source_notes=tuple(notes))
