"""A deterministic extractor: NL memory → atoms μ̂ (seed 000 §8.6 stages 5–6).

It reads **only the prose** (documents in the layout of :mod:`core.prose.render`, which is the
released one): every ``- `` line is matched against the sentence templates of its section, the
values it states are written back into source arrays of a fresh
:class:`~core.testbed.schema.Testbed` (nothing else of the testbed is known), and the direct
readout rules of the benchmark specification §2.9 (:func:`core.testbed.readout.readout`) turn
those arrays into atoms, so the context rules (the profile's baseline for B2, B3 and D2, the
planner's intent days for C2, E2 and F1, the device for F2, the objective log for F3) are the
same code as μ*'s. As in the release (spec §2.4, §2.10), cells outside the source–question map
are forced to ⊥, also where μ* broadcasts an edge label to all five sources.

Invariants (tested)
-------------------
* Deterministic, and a function of the text alone.
* ``atoms[:, q, s] == -1`` for every non-informative cell ``(q, s)``.
* Every atom keeps the sentences it read: :meth:`Extraction.spans` lists the ``(section,
  day_index, field, start, end)`` of the lines that stated a field its rule reads (the
  question's day window, and the context source's lines as well).
* :func:`atom_lines` is the one selection rule behind :meth:`Extraction.spans`, and it works
  on any frame of sentence rows, also the store's ``render_lines`` table.
* Honest about what it cannot read (issue 19): a line that matches no template, or starts
  like one but does not match it, or whose clauses are not all understood, is **unread**, and
  never turns into a default value. For every atom that reads a field such a line may state
  (the fields of the templates it starts like, else every field of its section, on its day),
  the line's day is a **missing day**: the atom is read from its other days
  (:mod:`core.prose.partial`, the way a rule reads around a day its source dropped) and is ⊥
  when no day of its window is left; an undated unread line (the profile's) makes it ⊥.
  :attr:`Extraction.unread_atoms` lists every such atom, its count of unread days and why.
  ``unread="atom"`` keeps the earlier rule (any unread line makes the whole atom ⊥). Silence (a
  day without a line for a field) is not unread: it reads as the silent source it is, as in
  the release.
* It reads the authors' released wording as well as ours: "has a flexible approach to
  after-hours work", ", worked on weekend", ". Was supporting someone else", "Home-cooked food
  not prioritized", "No specific plans recorded", "No records for this date", "No device records
  for this date", and the optional clauses their renderer leaves out (a planned workout
  without minutes, a work cap without a finish time). The planner's "overtime acceptable" is
  ours; their renderer never writes it, and its absence reads as "avoid overtime", which is
  what every generated planner day says (the benchmark specification §2.7).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..testbed.questions import QIDS, QUESTIONS, SOURCES
from ..testbed.readout import readout
from ..testbed.schema import Testbed, blank_testbed
from ..testbed.vocab import DATES, EXERCISE_TYPES, N_DAYS, SOCIAL_ACTIVITIES
from .partial import partial_atom
from .render import NO_SIGNALS, SECTIONS, UNAVAILABLE, UNNAMED

__all__ = ["INFORMATIVE", "READS", "UNREAD_RULES", "Extraction", "atom_lines", "atom_window",
           "extract", "template_fields", "template_of"]

PRO, PLA, SLF, OBJ, DEV = range(5)
_LAYER = ("profile", "planner", "self_report", "objective", "device")

#: (18, 5) bool: the source–question map of spec §2.4 (cells μ̂ may fill)
INFORMATIVE = np.array([[s in q.informative for s in SOURCES] for q in QUESTIONS])
INFORMATIVE.setflags(write=False)

_DAY = {d: i + 1 for i, d in enumerate(DATES)}
#: what an unread dated line costs an atom (:func:`extract`'s ``unread``)
UNREAD_RULES = ("day", "atom")
_ALL_DAYS = (1, N_DAYS)


def _clock(text: str, *, bedtime: bool) -> int:
    """``HH:MM`` as minutes; a bedtime before noon counts +24 h (schema convention)."""
    m = int(text[:2]) * 60 + int(text[3:5])
    return m + 1440 if bedtime and m < 720 else m


# ---------------------------------------------------------------------------------------------
# sentence templates: (section, regex, fields stated, parser(match) -> {field: value})


def _f(x: str | None) -> float:
    return float(x) if x is not None else float("nan")


#: after-hours style clauses of the profile's traits: ours, then the authors' released wording
_STYLES = {"maintains strict work-life boundaries": 0,
           "is flexible about working after hours": 1,
           "has a flexible approach to after-hours work": 1}
_OTHER_TRAITS = re.compile(r"dietary restriction: [^;]*|no dietary restrictions"
                           r"|social preference toward [^;]*|\d+ close friends"
                           r"|primary exercise: [^;]*")


def _traits(m):
    """Every clause must be understood: an unknown clause may be an after-hours style we
    cannot code (the authors' "occasionally works after hours"), so the line is unread."""
    style = -1
    for item in m["items"].split("; "):
        if item in _STYLES:
            style = _STYLES[item]
        elif not _OTHER_TRAITS.fullmatch(item):
            return None
    return {"afterhours_style": style}


#: names a sentence may give an exercise: any other text (such as "did not exercise") is not
#: read as a name, so the line is unread. Social activity names are open (the release has names
#: outside our vocabulary, "quiet dinner at home"): one is read unless it is a negation
#: ("nothing social", "no plans"), which would otherwise count as an activity
_EXERCISE_NAMES = frozenset(EXERCISE_TYPES) | {"exercise"}
_ACTIVITY_NAMES = frozenset(SOCIAL_ACTIVITIES) | {UNNAMED}
_NEGATION = re.compile(r"\b(?:no|none|nothing|not|never|without)\b", re.IGNORECASE)


def _planned_workout(m):
    if m["no"] is not None:
        return {"ex_intended": False, "ex_min": 0}
    if m["type"] not in _EXERCISE_NAMES:
        return None
    return {"ex_intended": True, "ex_min": int(m["min"] or 0)}


def _did_exercise(m):
    if m["none"] is not None:
        return {"did_exercise": False, "exercise_min": 0}
    if m["type"] not in _EXERCISE_NAMES:
        return None
    return {"did_exercise": True, "exercise_min": int(m["min"] or 0)}


def _social(m):
    acts = m["acts"]
    if acts == "no activities":
        n = 0
    elif all(a in _ACTIVITY_NAMES or not _NEGATION.search(a) for a in acts.split(", ")):
        n = acts.count(", ") + 1
    else:
        return None
    return {"n_act": n, "supporting_other": m["sup"] is not None}


_PAYMENT = re.compile(r"(?P<n>\d+) (?P<what>coffee|food delivery|fitness|venue|restaurant"
                      r"|entertainment|social venue) purchases?")


def _payments(m):
    out = {"pay_coffee": -1, "pay_delivery": -1, "pay_fitness": False, "pay_venue": False}
    for item in m["items"].split(", "):
        hit = _PAYMENT.fullmatch(item)
        if hit is None:
            return None  # an item we cannot place: unread, not ignored
        what = hit["what"]
        if what == "coffee":
            out["pay_coffee"] = int(hit["n"])
        elif what == "food delivery":
            out["pay_delivery"] = int(hit["n"])
        elif what == "fitness":
            out["pay_fitness"] = True
        else:
            out["pay_venue"] = True
    return out


_WORK_BLOCK = re.compile(r"work block \(\d\d:\d\d-\d\d:\d\d, (\d+) min\)")
_MINUTES = re.compile(r"\((\d+) min\)$")


def _calendar(m):
    out = {"work_block_min": 0, "social_event": False, "social_event_min": 0,
           "exercise_session": False, "exercise_session_min": 0}
    for item in m["items"].split("; "):
        wb = _WORK_BLOCK.fullmatch(item)
        mins = _MINUTES.search(item)
        if wb and not out["work_block_min"]:
            out["work_block_min"] = int(wb[1])
        elif item.startswith("social event: ") and not out["social_event"]:
            out["social_event"], out["social_event_min"] = True, int(mins[1]) if mins else 0
        elif item.startswith("exercise session: ") and not out["exercise_session"]:
            out["exercise_session"] = True
            out["exercise_session_min"] = int(mins[1]) if mins else 0
        elif not (wb or item.startswith(("social event: ", "exercise session: "))):
            return None  # an entry we cannot place: unread, not ignored
    return out


def _status(m):
    return {"available": m[1] + "." != UNAVAILABLE}


# an available day without signals: ours, then the authors' objective and device wording
_STATUS = (rf"- ({re.escape(UNAVAILABLE[:-1])}|{re.escape(NO_SIGNALS[:-1])}"
           r"|No records for this date|No device records for this date)\.")
_CLOCKS = r"(?P<bed>\d\d:\d\d)"


def _sleep(m):
    out = {"bedtime_min": _clock(m["bed"], bedtime=True), "duration_h": _f(m["dur"])}
    if "wake" in m.groupdict():
        out["wake_min"] = _clock(m["wake"], bedtime=False)
    return out


#: (section, first 8 characters of the lines it reads, regex, parser, fields it states) per
#: sentence template; a parser returns None when it cannot read every clause (the line is unread)
_T = [
    (PRO, ("Traits: ",), r"Traits: (?P<items>.+)\.", _traits, ("afterhours_style",)),
    (PRO, ("Sleep ha",),
     r"Sleep habits: typically goes to bed around " + _CLOCKS
     + r"(?:, sleeps about (?P<dur>[\d.]+) hours)?\.", _sleep, ("bedtime_min", "duration_h")),
    (PRO, ("Exercise",),
     r"Exercise: (?:exercises about (?P<dpw>[\d.]+) days per week, )?usually through .*\.",
     lambda m: {"ex_days_per_week": _f(m["dpw"])}, ("ex_days_per_week",)),
    (PRO, ("Diet: av",),
     r"Diet: averages (?P<meals>[\d.]+) meals per day, about (?P<home>[\d.]+) of those are "
     r"home-cooked\.",
     lambda m: {"meals_per_day": _f(m["meals"]), "home_cooked_mean": _f(m["home"])},
     ("meals_per_day", "home_cooked_mean")),
    (PRO, ("Work: wo",),
     r"Work: works about (?P<h>[\d.]+) hours per day"
     r"(?:, overtime on about (?P<ot>[\d.]+)% of days)?\.",
     lambda m: {"hours_mean": _f(m["h"]),
                "overtime_share": _f(m["ot"]) / 100 if m["ot"] else float("nan")},
     ("hours_mean", "overtime_share")),
    (PRO, ("Social l",),
     r"Social life: (?:socially active about (?P<dpw>[\d.]+) days per week"
     r"|no typical activity level recorded)\.",
     lambda m: {"social_dpw": _f(m["dpw"])}, ("social_dpw",)),
    (PLA, ("- Planne",),
     r"- Planned bedtime " + _CLOCKS
     + r", wake \d\d:\d\d, targeting (?P<dur>[\d.]+) hours of sleep\.", _sleep,
     ("bedtime_min", "duration_h")),
    (PLA, ("- No sle",), r"- No sleep target set\.",
     lambda m: {"bedtime_min": -1, "duration_h": float("nan")}, ("bedtime_min", "duration_h")),
    (PLA, ("- Planne", "- No wor"),
     r"- (?:Planned (?P<type>(?!bedtime\b)[^,]+?)(?: for (?P<min>\d+) minutes)?"
     r"|(?P<no>No workout planned))\.", _planned_workout, ("ex_intended", "ex_min")),
    (PLA, ("- Work c",),
     r"- Work capped at (?P<h>[\d.]+) hours(?P<ot>, overtime acceptable)?"
     r"(?:, finish by \d\d:\d\d)?\.",
     lambda m: {"hours_limit": _f(m["h"]), "avoid_overtime": m["ot"] is None},
     ("hours_limit", "avoid_overtime")),
    (PLA, ("- Home-c", "- No hom"),
     r"- (?:(?P<yes>Home-cooked food prioritized)|No home-cooking priority"
     r"|Home-cooked food not prioritized)\.",
     lambda m: {"home_priority": m["yes"] is not None}, ("home_priority",)),
    (PLA, ("- No soc", "- Social"),
     r"- (?:(?P<no>No social activity planned)|Social activity planned)\.",
     lambda m: {"social_intent": m["no"] is None}, ("social_intent",)),
    (PLA, ("- No spe",), r"- No specific plans recorded\.", lambda m: {}, ()),
    (SLF, ("- Sleep:",),
     r"- Sleep: went to bed at " + _CLOCKS + r", woke at (?P<wake>\d\d:\d\d), "
     r"slept (?P<dur>[\d.]+) hours, quality \w+\.", _sleep,
     ("bedtime_min", "wake_min", "duration_h")),
    (SLF, ("- Exerci",),
     r"- Exercise: (?:(?P<none>none)|(?P<type>[^,]+?)(?:, (?P<min>\d+) minutes)?)\.",
     _did_exercise, ("did_exercise", "exercise_min")),
    (SLF, ("- Diet: ",),
     r"- Diet: (?P<meals>\d+) meals total, (?P<home>\d+) home-cooked\.",
     lambda m: {"meals": int(m["meals"]), "home_cooked": int(m["home"])},
     ("meals", "home_cooked")),
    (SLF, ("- Work: ",),
     r"- Work: (?P<h>[\d.]+) hours(?P<ot>, overtime)?"
     r"(?:, (?P<wk>no weekend work commitment|weekend work commitment|worked on weekend))?\.",
     lambda m: {"hours": _f(m["h"]), "overtime": m["ot"] is not None,
                "worked_on_weekend": m["wk"] in ("weekend work commitment", "worked on weekend")},
     ("hours", "overtime", "worked_on_weekend")),
    (SLF, ("- Social",),
     r"- Social: (?P<acts>.+?)(?P<sup> \(supporting someone\)|\. Was supporting someone else)?\.",
     _social, ("n_act", "supporting_other")),
    (OBJ, ("- Record", "- No sig", "- No rec"), _STATUS, _status, ("available",)),
    (OBJ, ("- Timesh",),
     r"- Timesheet: (?P<h>[\d.]+) hours logged, (?P<ot>overtime reported|no overtime)\.",
     lambda m: {"timesheet": True, "hours_logged": _f(m["h"]),
                "overtime_logged": m["ot"] == "overtime reported"},
     ("timesheet", "hours_logged", "overtime_logged")),
    (OBJ, ("- Paymen",), r"- Payments: (?P<items>.+)\.", _payments,
     ("pay_coffee", "pay_delivery", "pay_fitness", "pay_venue")),
    (OBJ, ("- Calend",), r"- Calendar: (?P<items>.+)\.", _calendar,
     ("work_block_min", "social_event", "social_event_min", "exercise_session",
      "exercise_session_min")),
    (DEV, ("- Record", "- No sig", "- No dev"), _STATUS, _status, ("available",)),
    (DEV, ("- Sleep ",),
     r"- Sleep tracker: bed " + _CLOCKS + r", wake (?P<wake>\d\d:\d\d), "
     r"(?P<dur>[\d.]+) hours\.", _sleep, ("bedtime_min", "wake_min", "duration_h")),
    (DEV, ("- Activi",),
     r"- Activity: (?P<m>\d+) active minutes, (?P<w>workout detected|no workout detected)\.",
     lambda m: {"active_min": int(m["m"]), "workout": m["w"] == "workout detected"},
     ("active_min", "workout")),
    (DEV, ("- Work s",),
     r"- Work session: (?P<f>\d+) minutes of focus time, (?P<l>finished late|no late finish)\.",
     lambda m: {"work_session": True, "focus_min": int(m["f"]),
                "late_finish": m["l"] == "finished late"},
     ("work_session", "focus_min", "late_finish")),
]
_TEMPLATES = [(sec, heads, re.compile(rx), fn) for sec, heads, rx, fn, _ in _T]
_FIELDS = tuple(fields for *_, fields in _T)
#: every field a section's templates state (what an unrecognised line of it may state)
_SECTION_FIELDS = tuple(tuple(sorted({f for (sec, *_), fl in zip(_T, _FIELDS, strict=True)
                                      if sec == k for f in fl})) for k in range(5))
#: the profile's first sentence (identity): read, states no field the rules use
_IDENTITY = re.compile(r"[^:;]+ is [^:;]*\.(?: Relationship status: [^.]*\.)?")
_PREFIX = 8  # lines are dispatched on their first 8 characters, then matched in full
_DISPATCH: dict[tuple[int, str], list[int]] = {}
for _k, (_sec, _heads, _, _) in enumerate(_TEMPLATES):
    for _h in _heads:
        _DISPATCH.setdefault((_sec, _h), []).append(_k)

def template_of(section: int, line: str) -> int | None:
    """Index of the sentence template of ``section`` (0–4) that reads ``line``, or None.

    None also when the line matches a template's pattern but its parser cannot read every
    clause (an unknown trait, payment or calendar entry).
    """
    for k in _DISPATCH.get((section, line[:_PREFIX]), ()):
        m = _TEMPLATES[k][2].fullmatch(line)
        if m and _TEMPLATES[k][3](m) is not None:
            return k
    return None


def template_fields(k: int) -> tuple[str, ...]:
    """The fields template ``k`` states (its parser returns exactly these keys)."""
    if not 0 <= k < len(_FIELDS):
        raise ValueError(f"template index {k} outside [0, {len(_FIELDS)})")
    return _FIELDS[k]


def _unread_fields(section: int, line: str) -> tuple[str, tuple[str, ...]]:
    """Why a line was not read and which fields it may state."""
    ks = _DISPATCH.get((section, line[:_PREFIX]), ())
    if ks:
        return ("starts like a known sentence but does not match it",
                tuple(sorted({f for k in ks for f in _FIELDS[k]})))
    return "matches no known sentence", _SECTION_FIELDS[section]


# ---------------------------------------------------------------------------------------------
# what each atom reads: question -> (context reads, {source: own reads}); a read is
# (source index, field).  Mirrors core.testbed.readout.

_AV_O, _AV_D = (OBJ, "available"), (DEV, "available")
READS: dict[str, tuple[tuple, dict[int, tuple]]] = {
    "A1": ((), {SLF: ((SLF, "duration_h"),), DEV: (_AV_D, (DEV, "duration_h")),
                PLA: ((PLA, "duration_h"),), PRO: ((PRO, "duration_h"),)}),
    "A2": ((), {SLF: ((SLF, "hours"), (SLF, "worked_on_weekend")),
                OBJ: (_AV_O, (OBJ, "work_block_min")), PLA: ((PLA, "hours_limit"),),
                PRO: ((PRO, "hours_mean"),), DEV: (_AV_D, (DEV, "focus_min"))}),
    "A3": ((), {SLF: ((SLF, "meals"), (SLF, "home_cooked")), PLA: ((PLA, "home_priority"),),
                PRO: ((PRO, "meals_per_day"), (PRO, "home_cooked_mean")),
                OBJ: (_AV_O, (OBJ, "pay_delivery"))}),
    "B2": (((PRO, "ex_days_per_week"),),
           {SLF: ((SLF, "did_exercise"),), DEV: (_AV_D, (DEV, "workout")),
            OBJ: (_AV_O, (OBJ, "exercise_session")), PLA: ((PLA, "ex_intended"),), PRO: ()}),
    "B3": (((PRO, "afterhours_style"),),
           {SLF: ((SLF, "worked_on_weekend"),), OBJ: (_AV_O, (OBJ, "work_block_min")),
            DEV: (_AV_D, (DEV, "focus_min")), PRO: ()}),
    "C2": (((PLA, "social_intent"),),
           {SLF: ((SLF, "n_act"),), PLA: (), OBJ: (_AV_O, (OBJ, "social_event"),
                                                   (OBJ, "pay_venue"))}),
    "C3": (((PLA, "bedtime_min"),), {SLF: ((SLF, "bedtime_min"),),
                                     DEV: (_AV_D, (DEV, "bedtime_min"))}),
    "D1": ((), {SLF: ((SLF, "n_act"),), PLA: ((PLA, "social_intent"),),
                OBJ: (_AV_O, (OBJ, "social_event"))}),
    "D2": (((PRO, "meals_per_day"), (PRO, "home_cooked_mean")),
           {SLF: ((SLF, "meals"), (SLF, "home_cooked")), PRO: ()}),
    "E1": ((), {SLF: ((SLF, "bedtime_min"), (SLF, "overtime"), (SLF, "n_act")),
                DEV: (_AV_D, (DEV, "bedtime_min"), (DEV, "late_finish")),
                PLA: ((PLA, "bedtime_min"), (PLA, "hours_limit"), (PLA, "avoid_overtime")),
                OBJ: (_AV_O, (OBJ, "work_block_min"), (OBJ, "social_event"))}),
    "E2": (((PLA, "ex_intended"),),
           {SLF: ((SLF, "did_exercise"), (SLF, "hours"), (SLF, "overtime")),
            PLA: ((PLA, "hours_limit"),),
            DEV: (_AV_D, (DEV, "workout"), (DEV, "late_finish"), (DEV, "focus_min")),
            OBJ: (_AV_O, (OBJ, "exercise_session"), (OBJ, "work_block_min")),
            PRO: ((PRO, "overtime_share"),)}),
    "F1": (((PLA, "social_intent"),),
           {SLF: ((SLF, "n_act"),), OBJ: (_AV_O, (OBJ, "social_event")), PLA: (),
            PRO: ((PRO, "social_dpw"),)}),
    "F2": ((_AV_D, (DEV, "workout")),
           {SLF: ((SLF, "did_exercise"),), DEV: (), PLA: ((PLA, "ex_intended"),),
            OBJ: (_AV_O, (OBJ, "exercise_session")), PRO: ((PRO, "ex_days_per_week"),)}),
    "F3": ((_AV_O,), {SLF: ((SLF, "hours"),), DEV: (_AV_D, (DEV, "focus_min")),
                      PLA: ((PLA, "hours_limit"),), PRO: ((PRO, "hours_mean"),)}),
    "G1": ((), {SLF: ((SLF, "did_exercise"), (SLF, "exercise_min")),
                PLA: ((PLA, "ex_intended"),), DEV: (_AV_D, (DEV, "workout"), (DEV, "active_min"))}),
    "G2": ((), {SLF: ((SLF, "n_act"), (SLF, "supporting_other")),
                OBJ: (_AV_O, (OBJ, "social_event")), PLA: ((PLA, "social_intent"),),
                PRO: ((PRO, "social_dpw"),)}),
    "Ctrl1": ((), {SLF: ((SLF, "meals"), (SLF, "home_cooked")), PLA: ((PLA, "home_priority"),),
                   PRO: ((PRO, "meals_per_day"), (PRO, "home_cooked_mean"))}),
    "Ctrl2": ((), {SLF: ((SLF, "duration_h"),), DEV: (_AV_D, (DEV, "duration_h")),
                   PLA: ((PLA, "duration_h"),)}),
}
#: day windows (first, last day index) of the questions that read part of the month; the
#: device's "last seven available days" of Ctrl2 may reach back to any day
_WINDOW = {"C2": (17, 30), "C3": (17, 30), "Ctrl1": (24, 30)}
_WINDOW_SRC = {("Ctrl2", SLF): (24, 30), ("Ctrl2", PLA): (24, 30)}


@dataclass(frozen=True)
class Extraction:
    """Atoms μ̂ extracted from NL memory, and the sentences behind them.

    Attributes
    ----------
    persona_ids : in the order of the documents.
    atoms : ``(P, 18, 5)`` int8 codes (``QIDS`` × ``SOURCES``), ``-1`` ⊥.
    sources : the testbed whose source layers were read back from the prose (events,
        knobs and persona traits are blank).
    frames : one row per (parsed sentence, field it stated): ``doc`` (the document's
        position), ``persona_id, section, day_index, field, start, end``.
    unread : one row per line the extractor could not read: ``doc, persona_id, section,
        day_index, start, end, text, reason`` (the reason says whether the line starts like a
        known sentence).
    unread_atoms : one row per atom a line it may read was unread: ``doc, persona_id,
        question_id, source, unread_days`` (days of the month with such a line), ``null``
        (the atom is ⊥: an undated line, no day of its window left, or ``unread="atom"``;
        else it was read from its other days) and ``reason`` (quoting the first such line
        and its day, and what became of the atom).
    """

    persona_ids: tuple[str, ...]
    atoms: np.ndarray
    sources: Testbed
    frames: pd.DataFrame
    unread: pd.DataFrame
    unread_atoms: pd.DataFrame

    def spans(self, persona: int | str, qid: str, source: str) -> pd.DataFrame:
        """The sentences the atom ``(persona, qid, source)`` was read from.

        ``persona`` is a document's position, or its id when that id is unique (ids repeat
        across seeds). Empty for a non-informative cell. Raises ``ValueError`` for an
        unknown or ambiguous persona, an unknown question or source.
        """
        if isinstance(persona, str):
            hits = [i for i, p in enumerate(self.persona_ids) if p == persona]
            if len(hits) != 1:
                raise ValueError(f"persona id {persona!r} matches {len(hits)} documents; "
                                 "pass the document's position")
            persona = hits[0]
        if not 0 <= int(persona) < len(self.persona_ids):
            raise ValueError(f"persona position {persona} outside [0, {len(self.persona_ids)})")
        f = self.frames
        rows = (f["doc"] == int(persona)).to_numpy()
        return f[rows & atom_lines(f, qid, source)].sort_values("start")


def atom_lines(lines: pd.DataFrame, qid: str, source: str) -> np.ndarray:
    """Bool mask of the rows of ``lines`` that the atom ``(qid, source)`` reads.

    ``lines`` has one row per (sentence, field it states) with at least the columns
    ``section`` (a heading of :data:`~core.prose.render.SECTIONS`), ``day_index`` (0 for the
    undated profile, 1–30) and ``field``: the frames of :class:`Extraction` and
    :class:`~core.prose.render.Rendered`, or the store's ``render_lines`` rows of any number
    of documents (the mask does not look at which document a row belongs to). A row is read
    when its (section, field) is one :data:`READS` lists for ``qid`` (the source's own reads
    and the question's context reads) and its day lies in the question's window (the last
    14 days for C2 and C3, the last 7 for Ctrl1 and for the dated Ctrl2 sources, otherwise
    the whole month; the profile's undated lines always). All ``False`` for a cell outside
    the source–question map (the benchmark specification §2.4): its atom is forced to ⊥.
    :meth:`Extraction.spans` is this mask on one document. ``ValueError`` for an unknown
    question or source.
    """
    if qid not in READS:
        raise ValueError(f"unknown question {qid!r} (expected one of {', '.join(QIDS)})")
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")
    s = SOURCES.index(source)
    keep = np.zeros(len(lines), dtype=bool)
    if not INFORMATIVE[QIDS.index(qid), s]:
        return keep
    context, own = READS[qid]
    section, field = lines["section"], lines["field"]
    day = np.asarray(lines["day_index"], dtype=np.int64)
    for src, name in (*context, *own.get(s, ())):
        lo, hi = atom_window(qid, src)
        keep |= ((section == SECTIONS[src]).to_numpy(bool) & (field == name).to_numpy(bool)
                 & ((day == 0) | ((day >= lo) & (day <= hi))))
    return keep


def atom_window(qid: str, source_index: int) -> tuple[int, int]:
    """The (first, last) day index the reads of ``qid`` take from source ``source_index``."""
    return _WINDOW_SRC.get((qid, source_index), _WINDOW.get(qid, _ALL_DAYS))


def _locate(texts: list[str]):
    """Split the documents into lines; per line: persona, section, day and offset in its doc."""
    big = "".join(texts)
    lines = big.split("\n")[:-1]
    n_lines = np.array([t.count("\n") for t in texts], dtype=np.int64)
    persona = np.repeat(np.arange(len(texts)), n_lines)
    length = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)) + 1
    start = np.cumsum(length) - length
    doc_start = np.cumsum([0, *map(len, texts)])[:-1]
    offset = start - doc_start[persona]
    idx = np.arange(len(lines))
    heads = {f"## {s}": i for i, s in enumerate(SECTIONS)}
    sec_code = np.fromiter((heads.get(x, -1) for x in lines), dtype=np.int64, count=len(lines))
    day_code = np.fromiter((_DAY.get(x[5:15], 0) if x.startswith("#### ") else 0 for x in lines),
                           dtype=np.int64, count=len(lines))
    # forward-fill within each document: the last heading / day header seen (a document's
    # first line resets both)
    doc_first = np.zeros(len(lines), dtype=bool)
    doc_first[(np.cumsum(n_lines) - n_lines)[n_lines > 0]] = True
    reset = (sec_code >= 0) | doc_first
    section = sec_code[np.maximum.accumulate(np.where(reset, idx, 0))]
    reset_day = (day_code > 0) | reset
    day = day_code[np.maximum.accumulate(np.where(reset_day, idx, 0))]
    return lines, persona, section, day, offset


def extract(texts: Sequence[str], *, persona_ids: Sequence[str],
            unread: str = "day") -> Extraction:
    """Extract μ̂ from NL memory documents (seed 000 §8.6 stages 5–6, deterministic).

    Parameters
    ----------
    texts : one document per persona (the layout of :func:`core.prose.render.render`).
    persona_ids : the persona of each document (the release names files by persona id; ids
        may repeat across seeds).
    unread : what an unread dated line costs an atom that may read it (:data:`UNREAD_RULES`):
        ``"day"`` (the default) — its day is a missing day and the atom is read from the other
        days of its window (:mod:`core.prose.partial`), ⊥ when no day of the window is read;
        ``"atom"`` — the whole atom is ⊥ (the rule before the unread-day decision of issue 19).
        An undated unread line (the profile's, or one above a section's first day) always
        makes the atom ⊥.

    Returns
    -------
    Extraction
        Atoms on the informative cells of spec §2.4, the source arrays read back and the
        sentence frame (invariants in the module docstring).
    """
    if unread not in UNREAD_RULES:
        raise ValueError(f"unread must be one of {', '.join(UNREAD_RULES)}, got {unread!r}")
    texts = [t if t.endswith("\n") else t + "\n" for t in texts]
    ids = tuple(str(p) for p in persona_ids)
    if len(ids) != len(texts):
        raise ValueError(f"{len(texts)} documents but {len(ids)} persona ids")
    n = len(texts)
    tb = blank_testbed(n)
    tb.personas["persona_id"] = list(ids)
    _silent_defaults(tb)
    lines, persona, section, day, offset = _locate(texts)
    # a dated block is an available day unless it says otherwise
    for src in (OBJ, DEV):
        heads = (section == src) & (day > 0)
        tb.layer(_LAYER[src])["available"][persona[heads], day[heads] - 1] = True
    rows: list[tuple[np.ndarray, int, str, np.ndarray]] = []
    head_id = {h: i for i, h in enumerate(sorted({h for _, h in _DISPATCH}))}
    kinds = np.fromiter((head_id.get(x[:_PREFIX], -1) for x in lines), dtype=np.int64,
                        count=len(lines))
    hits: dict[int, tuple[list[int], list[dict]]] = {}
    read = np.zeros(len(lines), dtype=bool)
    for (sec, head), candidates in _DISPATCH.items():
        at = np.flatnonzero((kinds == head_id[head]) & (section == sec))
        if sec != PRO:
            at = at[day[at] > 0]
        for i in at.tolist():
            for k in candidates:
                m = _TEMPLATES[k][2].fullmatch(lines[i])
                value = _TEMPLATES[k][3](m) if m else None
                if value is not None:
                    got = hits.setdefault(k, ([], []))
                    got[0].append(i)
                    got[1].append(value)
                    read[i] = True
                    break
    for k, (hit_idx, values) in sorted(hits.items()):
        sec = _TEMPLATES[k][0]
        hit = np.asarray(hit_idx)
        layer = tb.layer(_LAYER[sec])
        p, d = persona[hit], day[hit] - 1
        for field in _FIELDS[k]:  # a template's parser returns exactly its fields
            col = np.asarray([v[field] for v in values])
            arr = layer[field]
            if sec == PRO:
                arr[p] = col
            else:
                arr[p, d] = col
            rows.append((hit, sec, field, col))
    atoms = readout(tb)
    atoms[:, ~INFORMATIVE] = -1
    unread, unread_atoms = _unread(ids, atoms, lines, read, persona, section, day, offset,
                                   tb=tb if unread == "day" else None)
    return Extraction(ids, atoms, tb, _frames(ids, rows, lines, persona, day, offset), unread,
                      unread_atoms)


def _unread(ids, atoms, lines, read, persona, section, day, offset, *, tb=None):
    """Find the lines nothing read and change every atom that may read them (in place).

    With ``tb`` (the read-back sources) an atom whose unread lines are all dated is read again
    from its other days (:func:`core.prose.partial.partial_atom`), and is ⊥ only when no day
    of its window is left; without it, or with an undated unread line, the atom is ⊥.
    """
    cand = np.flatnonzero(~read & (section >= 0))
    keep = [i for i in cand.tolist()
            if lines[i].strip() and not lines[i].startswith("#")
            and not (section[i] == PRO and _IDENTITY.fullmatch(lines[i]))]
    cats = pd.Index(ids).unique()
    rows, fields_rows = [], []
    for i in keep:
        sec = int(section[i])
        why, fields = _unread_fields(sec, lines[i])
        rows.append((int(persona[i]), sec, int(day[i]), int(offset[i]), lines[i], why))
        fields_rows.extend((len(rows) - 1, f) for f in fields)
    doc = np.array([r[0] for r in rows], dtype=np.int64)
    unread = pd.DataFrame({
        "doc": doc.astype(np.int32),
        "persona_id": pd.Categorical([ids[d] for d in doc.tolist()], categories=cats),
        "section": pd.Categorical([SECTIONS[r[1]] for r in rows], categories=list(SECTIONS)),
        "day_index": np.array([r[2] for r in rows], dtype=np.int16),
        "start": np.array([r[3] for r in rows], dtype=np.int32),
        "end": np.array([r[3] + len(r[4]) for r in rows], dtype=np.int32),
        "text": [r[4] for r in rows],
        "reason": [r[5] for r in rows],
    })
    out = {"doc": [], "question_id": [], "source": [], "unread_days": [], "null": [],
           "reason": []}
    if rows:
        line_of = np.array([r for r, _ in fields_rows], dtype=np.int64)
        line_day = np.array([r[2] for r in rows], dtype=np.int64)
        by_field = pd.DataFrame({
            "section": unread["section"].to_numpy()[line_of],
            "day_index": unread["day_index"].to_numpy()[line_of],
            "field": [f for _, f in fields_rows],
        })
        for q, qid in enumerate(QIDS):
            for s_, src in enumerate(SOURCES):
                if not INFORMATIVE[q, s_]:
                    continue
                hit = line_of[atom_lines(by_field, qid, src)]
                if hit.size:
                    _unread_cell(out, atoms, rows, doc, line_day, hit, q, s_, tb)
    odoc = np.array(out["doc"], dtype=np.int32)
    unread_atoms = pd.DataFrame({
        "doc": odoc,
        "persona_id": pd.Categorical([ids[d] for d in odoc.tolist()], categories=cats),
        "question_id": out["question_id"], "source": out["source"],
        "unread_days": np.array(out["unread_days"], dtype=np.int16),
        "null": np.array(out["null"], dtype=bool), "reason": out["reason"],
    }).sort_values(["doc", "question_id", "source"], kind="stable").reset_index(drop=True)
    return unread, unread_atoms


def _unread_cell(out, atoms, rows, doc, line_day, hit, q, s_, tb):
    """The atoms ``(q, s_)`` behind the unread lines ``hit``: ⊥, or read from the other days
    (:func:`_unread`); one row of ``out`` per atom, the first such line quoted."""
    qid, src = QIDS[q], SOURCES[s_]
    frame = pd.DataFrame({"doc": doc[hit], "line": hit, "day": line_day[hit]})
    per_doc = frame.groupby("doc", sort=True)
    first = per_doc["line"].min()  # lines are in document order
    docs = first.index.to_numpy()
    undated = per_doc["day"].min().to_numpy() == 0
    keep = np.ones((len(docs), N_DAYS), dtype=bool)
    dated = frame[frame["day"] > 0]
    keep[np.searchsorted(docs, dated["doc"].to_numpy()), dated["day"].to_numpy() - 1] = False
    n_unread = (~keep).sum(1)
    whole = undated if tb is not None else np.ones(len(docs), dtype=bool)
    none = np.zeros(len(docs), dtype=bool)  # no day of the atom's own window was read
    if not whole.all():
        again = docs[~whole]
        got = partial_atom(tb.subset(again), qid, s_, keep[~whole])
        if s_ != PRO:  # a profile atom reads no day: nothing to check
            lo, hi = atom_window(qid, s_)
            none[~whole] = ~keep[~whole, lo - 1:hi].any(1)
            got = np.where(none[~whole], np.int8(-1), got)
        atoms[again, q, s_] = got
    atoms[docs[whole], q, s_] = -1
    null = atoms[docs, q, s_] < 0
    for d, li, k, nul, wh, no in zip(docs.tolist(), first.tolist(), n_unread.tolist(),
                                     null.tolist(), whole.tolist(), none.tolist(), strict=True):
        r = rows[li]
        when = "the profile" if r[2] == 0 else f"{SECTIONS[r[1]]}, {DATES[r[2] - 1]}"
        why = f"unread line ({when}): {r[4]!r} {r[5]}"
        if not wh:
            days = f"{k} unread day{'s' if k != 1 else ''}"
            why += (f"; no day of its window could be read ({days})" if no else
                    f"; read from the other days ({days} left out), which leave it empty"
                    if nul else f"; read from the other days ({days} left out)")
        out["doc"].append(d)
        out["question_id"].append(qid)
        out["source"].append(src)
        out["unread_days"].append(k)
        out["null"].append(nul)
        out["reason"].append(why)


def _silent_defaults(tb: Testbed) -> None:
    """What a source says when the prose says nothing (⊥ numbers, unavailable days)."""
    pr = tb.profile
    for a in pr.values():
        if a.dtype.kind == "f":
            a[:] = np.nan
    pr["afterhours_style"][:] = -1
    tb.planner["bedtime_min"][:] = -1
    tb.planner["duration_h"][:] = np.nan
    tb.planner["hours_limit"][:] = np.nan
    tb.self_report["duration_h"][:] = np.nan
    tb.self_report["hours"][:] = np.nan
    ob, dv = tb.objective, tb.device
    ob["available"][:] = False
    ob["pay_coffee"][:] = -1
    ob["pay_delivery"][:] = -1
    ob["hours_logged"][:] = np.nan
    dv["available"][:] = False
    for k in ("bedtime_min", "wake_min", "active_min", "steps", "screen_time_min", "focus_min"):
        dv[k][:] = -1
    dv["duration_h"][:] = np.nan


def _frames(ids, rows, lines, persona, day, offset) -> pd.DataFrame:
    names = sorted({r[2] for r in rows})
    code = {f: i for i, f in enumerate(names)}
    if rows:
        hit = np.concatenate([r[0] for r in rows])
        sec = np.concatenate([np.full(len(r[0]), r[1], np.int8) for r in rows])
        fld = np.concatenate([np.full(len(r[0]), code[r[2]], np.int64) for r in rows])
    else:
        hit = np.zeros(0, np.int64)
        sec, fld = np.zeros(0, np.int8), np.zeros(0, np.int64)
    length = np.fromiter((len(lines[i]) for i in hit.tolist()), dtype=np.int64, count=len(hit))
    pre = np.where(sec == PRO, 0, 2)
    cats = pd.Index(ids).unique()
    frame = pd.DataFrame({
        "doc": persona[hit].astype(np.int32),
        "persona_id": pd.Categorical.from_codes(cats.get_indexer(np.asarray(ids)[persona[hit]])
                                                if len(hit) else hit, categories=cats),
        "section": pd.Categorical.from_codes(sec, categories=list(SECTIONS)),
        "day_index": day[hit].astype(np.int16),
        "field": pd.Categorical.from_codes(fld, categories=names),
        "start": (offset[hit] + pre).astype(np.int32),
        "end": (offset[hit] + length).astype(np.int32),
    })
    return frame
