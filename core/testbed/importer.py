"""Import the authors' released seed-000 benchmark into our :class:`~core.testbed.schema.Testbed`.

The release layout is described in the benchmark specification §3; the meaning of every field
is in §2.6 (latent event table) and §2.7 (the five source projections). :func:`load_release`
reads one release root (the folder holding ``benchmark/``) or a single
``benchmark/seeds/<seed>`` folder and returns a :class:`Release`: the testbed arrays, the
authors' ground truth (kept as *reference* labels, never used as our ground truth), their
GPT-5.4 extracted atoms μ̂ and their frozen LLM answers.

Choices where the release or the spec is silent
-----------------------------------------------
* **Persona metadata.** ``config/personas.json`` and ``config/persona_splits.json`` are used
  when present. Without them: difficulty from ``profile_ltm.json`` ``difficulty_type`` (else
  ``generation_metadata.json``, else the id slug); index from the id; split by the index rule of
  §2.1 (1–72 train, 73–88 dev, 89–120 calibration, 121+ test); identity and traits from the
  profile's ``facts``; ``gender`` is ``""`` (the sources never state it); ``scenario`` is ``""``
  (only the config names the shift event). ``shift_day`` of a temporal-shift persona is
  recovered exactly from the profile anchor, ``shift_day = anchor_end + 2`` (§2.7:
  anchor_end = max(2, shift_day − 2) with shift_day ≥ 10); it is 0 for the other classes.
* **Unknown names.** Activity, exercise-type and stress-event names that are not in
  :mod:`core.testbed.vocab` get the code :data:`UNKNOWN_CODE` (−2) instead of failing: the
  label functions only count them, and the released data does use names outside our
  vocabularies (e.g. the stress events "overloaded inbox", "presentation prep" and the fake
  self-reported activity "grabbed coffee with someone"). The closed after-hours vocabularies
  (reason, work style) are checked instead: an unknown value is a format error, because the
  label functions read their codes (a style code < 0 means "no style").
* **Knobs.** One row per persona with the ``source_knobs`` of ``generation_metadata.json`` plus
  ``missing_day_prob`` (the config's sparsity value for stated personas, 0.0 for the other
  classes, whose dropout has no extra term, NaN when unknown); the columns and dtypes of the
  generator's knob frame (``profile_anchor_end_day`` int64, taken from the profile's anchor
  window if the metadata lacks it; the rest float64, NaN when the metadata file is absent).
* **LLM answers.** ``method_outputs/<model>/<seed>/{direct,schema-aware}`` are imported as is
  (answers outside the answer space are kept verbatim, they score as wrong; a question missing
  from a file gives no row). The structured
  LLM (``method_outputs/struct_llm/{oracle,extracted}/<seed>``) is imported with model
  ``"struct_llm"`` and variant ``"oracle"``/``"extracted"``. Few-shot outputs, Gemini atoms
  (``extract``) and ``frozen_artifact_quirks.json`` are skipped with a note (the one known
  quirk replaces an out-of-space answer by another out-of-space answer, so scores do not move).
* **Atoms and LLM answers** are kept only for personas present in the testbed; files of other
  personas are skipped with one note per folder.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .questions import QIDS, SOURCES, question
from .schema import LAYERS, PERSONA_COLUMNS, Testbed
from .vocab import (
    AFTERHOURS_REASONS,
    AFTERHOURS_STYLES,
    DIFFICULTIES,
    DIFFICULTY_SLUGS,
    EXERCISE_TYPES,
    N_DAYS,
    SCENARIOS,
    SOCIAL_ACTIVITIES,
    SPLITS,
    STRESS_EVENTS,
)

__all__ = ["KNOWN_SCHEMA_VERSIONS", "UNKNOWN_CODE", "Release", "ReleaseFormatError",
           "load_release"]

#: ``schema_version`` values this importer understands (spec §3).
KNOWN_SCHEMA_VERSIONS = ("v2.source_projection",)
#: integer code for a name that is not in our vocabulary (-1 stays "none")
UNKNOWN_CODE = -2

_SOURCE_FILES = ("profile_ltm", "planner", "daily_self_report", "objective_log", "device_log")
_PERSONA_RE = re.compile(r"^bench_(stable|shift|stated)_(\d{3})_[a-z0-9_]+$")
_SEED_RE = re.compile(r"^s(\d+)$")
_LLM_VARIANTS = ("direct", "schema-aware")
_STRUCT_LLM = "struct_llm"
_VENUES = ("restaurant", "entertainment", "social_venue")
_KNOB_COLUMNS = (
    "profile_anchor_end_day", "self_report_conflict_rate", "self_report_underreport_bias",
    "self_report_overreport_bias", "planner_optimism_bias", "planner_behavior_gap_rate",
    "device_dropout_rate", "device_noise_rate", "objective_dropout_rate", "objective_noise_rate",
)
# event_description of each shift scenario in config/personas.json, in SCENARIOS order
_SCENARIO_TEXTS = (
    "Got promoted into a deadline-heavy leadership role",
    "Started helping with intensive family caregiving responsibilities",
    "Committed to a structured wellness reset after a stressful quarter",
    "Took on a compressed launch cycle for a major client project",
    "Started a new romantic relationship and social life expanded",
    "Received a health scare and overhauled daily habits",
    "Relocated to a new city for a partner's job",
    "Hit burnout wall and drastically reduced commitments",
)


class ReleaseFormatError(ValueError):
    """The release does not follow the layout of spec §3; the message names the file."""


@dataclass(frozen=True)
class Release:
    """Everything imported from one release (spec §3).

    Attributes
    ----------
    testbed : Testbed
        All personas, sorted by (seed, difficulty in :data:`~core.testbed.vocab.DIFFICULTIES`
        order, index); ``validate()`` passes.
    reference_labels : DataFrame
        ``seed, persona_id, question_id, answer``: the authors' ``ground_truth.json``. Kept for
        comparison only, never used as our ground truth.
    extracted_atoms : DataFrame
        ``seed, persona_id, question_id, source, value`` (``value`` None = no atom), the GPT-5.4
        μ̂ of ``extracted_atoms/`` for personas present in the testbed.
    llm_answers : DataFrame
        ``model, variant, seed, persona_id, question_id, answer, would_skip``.
    skipped : list of str
        One-line notes about files that were present but not imported.
    activity_names : ndarray
        ``(P, 30)`` object array, in testbed order: the tuple of **every** social activity name
        the self-report lists that day (the release's ``social.activities``, each the entry's
        ``type`` or ``name`` as the authors' renderer writes it). The testbed's self-report
        keeps only the count and the first name's code; the render names the others from here
        (``core.prose.render.render(..., activity_names=)``), so no activity is lost.
    """

    testbed: Testbed
    reference_labels: pd.DataFrame
    extracted_atoms: pd.DataFrame
    llm_answers: pd.DataFrame
    skipped: list[str]
    activity_names: np.ndarray


# ---------------------------------------------------------------------------------------------
# small parsers


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _clock(text: str) -> int:
    """Minutes of the day of ``"HH:MM"``."""
    hh, sep, mm = str(text).partition(":")
    if not sep or not hh.isdigit() or not mm.isdigit():
        raise ValueError(f"bad clock time {text!r}")
    h, m = int(hh), int(mm)
    if h > 23 or m > 59:
        raise ValueError(f"bad clock time {text!r}")
    return h * 60 + m


def _wake(text: str | None) -> int:
    """Wake time in minutes of the day; -1 when missing."""
    return -1 if text is None else _clock(text)


def _bed(text: str | None) -> int:
    """Bedtime in bedtime minutes (times before noon +24 h, spec §2.6); -1 when missing."""
    if text is None:
        return -1
    m = _clock(text)
    return m + 1440 if m < 720 else m


def _i(value: Any) -> int:
    """Integer, -1 when missing."""
    return -1 if value is None else int(value)


def _f(value: Any) -> float:
    """Float, NaN when missing."""
    return math.nan if value is None else float(value)


def _code(vocab: tuple[str, ...], name: str | None) -> int:
    """Index of ``name`` in ``vocab``; -1 for None, :data:`UNKNOWN_CODE` if not listed."""
    if name is None:
        return -1
    try:
        return vocab.index(name)
    except ValueError:
        return UNKNOWN_CODE


def _enum(vocab: tuple[str, ...], name: str | None) -> int:
    """Index of ``name`` in a closed vocabulary; -1 for None; anything else is an error."""
    if name is None:
        return -1
    if name not in vocab:
        raise ValueError(f"unknown value {name!r} (expected one of {', '.join(vocab)} or null)")
    return vocab.index(name)


def _nth(items: list | None, n: int) -> Any:
    return items[n] if items and len(items) > n else None


def _split_of(index: int) -> str:
    """Split by index within the class (spec §2.1)."""
    if index <= 72:
        return "train"
    if index <= 88:
        return "dev"
    if index <= 120:
        return "calibration"
    return "test"


# ---------------------------------------------------------------------------------------------
# day-level field tables: (schema field, getter of one day record).  Spec §2.6-2.7.

_EVENT_GET: tuple[tuple[str, Callable[[dict], Any]], ...] = (
    ("bedtime_min", lambda r: _bed(r["sleep"]["bedtime"])),
    ("wake_min", lambda r: _wake(r["sleep"]["wake_time"])),
    ("duration_h", lambda r: _f(r["sleep"]["duration_h"])),
    ("quality", lambda r: _i(r["sleep"]["quality"])),
    ("interruptions", lambda r: _i(r["sleep"].get("interruptions"))),
    ("trouble", lambda r: bool(r["sleep"].get("trouble_falling_asleep"))),
    ("screen", lambda r: bool(r["sleep"].get("screen_before_bed"))),
    ("target_bedtime_min", lambda r: _i(r["sleep"].get("target_bedtime_minutes"))),
    ("did_exercise", lambda r: bool(r["exercise"]["did_exercise"])),
    ("exercise_type", lambda r: _code(EXERCISE_TYPES, r["exercise"].get("exercise_type"))),
    ("exercise_min", lambda r: int(r["exercise"].get("duration_min") or 0)),
    ("intentional", lambda r: bool(r["exercise"].get("intentional"))),
    ("hours", lambda r: _f(r["work"]["hours"])),
    ("overtime", lambda r: bool(r["work"].get("overtime"))),
    ("worked_on_weekend", lambda r: bool(r["work"].get("worked_on_weekend"))),
    ("n_stress", lambda r: len(r["work"].get("stress_events") or ())),
    ("stress1", lambda r: _code(STRESS_EVENTS, _nth(r["work"].get("stress_events"), 0))),
    ("wlb", lambda r: _i(r["work"].get("work_life_balance"))),
    ("afterhours", lambda r: _enum(AFTERHOURS_REASONS, r["work"].get("afterhours_reason"))),
    ("n_act", lambda r: len(r["social"].get("activities") or ())),
    ("act1", lambda r: _code(SOCIAL_ACTIVITIES, _nth(r["social"].get("activities"), 0))),
    ("act2", lambda r: _code(SOCIAL_ACTIVITIES, _nth(r["social"].get("activities"), 1))),
    ("supporting_other", lambda r: bool(r["social"].get("supporting_other"))),
    ("tag_social", lambda r: "social" in (r.get("context_tags") or ())),
    ("tag_work_stress", lambda r: "work_stress" in (r.get("context_tags") or ())),
    ("meals", lambda r: _i(r["diet"]["meals"])),
    ("home_cooked", lambda r: _i(r["diet"]["home_cooked"])),
    ("fast_food", lambda r: _i(r["diet"]["fast_food"])),
    ("coffee", lambda r: _i(r["diet"]["coffee_cups"])),
    ("mood", lambda r: _i(r["mood"]["overall"])),
    ("stressed", lambda r: bool(r["mood"].get("stressed"))),
    ("energy", lambda r: _i(r["mood"]["energy"])),
)

_PLANNER_GET: tuple[tuple[str, Callable[[dict], Any]], ...] = (
    ("bedtime_min", lambda r: _bed(r["sleep_target"]["bedtime"])),
    ("duration_h", lambda r: _f(r["sleep_target"]["duration_h"])),
    ("ex_intended", lambda r: bool(r["exercise_target"]["intended"])),
    ("ex_min", lambda r: int(r["exercise_target"].get("duration_min") or 0)),
    ("hours_limit", lambda r: _f(r["work_target"]["hours_limit"])),
    ("avoid_overtime", lambda r: bool(r["work_target"].get("avoid_overtime"))),
    ("meals", lambda r: _i(r["diet_target"]["meals"])),
    ("home_priority", lambda r: bool(r["diet_target"]["home_cooked_priority"])),
    ("coffee_limit", lambda r: _i(r["diet_target"].get("coffee_limit"))),
    ("social_intent", lambda r: bool(r["social_target"]["intent"])),
    ("mood_goal", lambda r: _i(r["wellbeing_target"].get("mood_goal"))),
)

_SELF_GET: tuple[tuple[str, Callable[[dict], Any]], ...] = (
    ("bedtime_min", lambda r: _bed(r["sleep"]["bedtime"])),
    ("wake_min", lambda r: _wake(r["sleep"]["wake_time"])),
    ("duration_h", lambda r: _f(r["sleep"]["duration_h"])),
    ("quality", lambda r: _i(r["sleep"]["quality"])),
    ("screen", lambda r: bool(r["sleep"].get("screen_before_bed"))),
    ("did_exercise", lambda r: bool(r["exercise"]["did_exercise"])),
    ("exercise_type", lambda r: _code(EXERCISE_TYPES, r["exercise"].get("type"))),
    ("exercise_min", lambda r: int(r["exercise"].get("duration_min") or 0)),
    ("meals", lambda r: _i(r["diet"]["meals"])),
    ("home_cooked", lambda r: _i(r["diet"]["home_cooked"])),
    ("fast_food", lambda r: _i(r["diet"]["fast_food"])),
    ("coffee", lambda r: _i(r["diet"]["coffee_cups"])),
    ("hours", lambda r: _f(r["work"]["hours"])),
    ("overtime", lambda r: bool(r["work"].get("overtime"))),
    ("worked_on_weekend", lambda r: bool(r["work"].get("worked_on_weekend"))),
    ("n_stress", lambda r: len(r["work"].get("stress_events") or ())),
    ("afterhours", lambda r: _enum(AFTERHOURS_REASONS, r["work"].get("afterhours_reason"))),
    ("n_act", lambda r: len(r["social"].get("activities") or ())),
    ("act1", lambda r: _code(SOCIAL_ACTIVITIES, _nth(r["social"].get("activities"), 0))),
    ("supporting_other", lambda r: bool(r["social"].get("supporting_other"))),
    ("mood", lambda r: _i(r["mood"]["overall"])),
    ("stressed", lambda r: bool(r["mood"].get("stressed"))),
    ("energy", lambda r: _i(r["mood"]["energy"])),
)


def _objective_day(r: dict) -> dict:
    """Flatten one objective_log record (spec §2.7); an unavailable day has no signals."""
    available = bool(r["available"])
    sig = (r.get("signals") or {}) if available else {}
    pay: dict[str, int] = {}
    for p in sig.get("payments") or ():
        pay[p["category"]] = pay.get(p["category"], 0) + int(p.get("count", 1))
    cal: dict[str, dict] = {}
    for entry in sig.get("calendar") or ():
        cal.setdefault(entry["kind"], entry)  # the FIRST entry of each kind
    return {"available": available, "pay": pay, "ts": sig.get("timesheet"), "cal": cal,
            "chk": {c["kind"] for c in sig.get("checkins") or ()}}


def _cal_min(d: dict, kind: str) -> int:
    entry = d["cal"].get(kind)
    return int(entry.get("duration_min") or 0) if entry else 0


_OBJECTIVE_GET: tuple[tuple[str, Callable[[dict], Any]], ...] = (
    ("available", lambda d: d["available"]),
    ("pay_coffee", lambda d: d["pay"].get("coffee", -1)),
    ("pay_delivery", lambda d: d["pay"].get("food_delivery", -1)),
    ("pay_fitness", lambda d: "fitness" in d["pay"]),
    ("pay_venue", lambda d: any(v in d["pay"] for v in _VENUES)),
    ("timesheet", lambda d: d["ts"] is not None),
    ("hours_logged", lambda d: _f(d["ts"].get("hours_logged")) if d["ts"] else math.nan),
    ("overtime_logged", lambda d: bool(d["ts"].get("overtime_logged")) if d["ts"] else False),
    ("work_block_min", lambda d: _cal_min(d, "work_block")),
    ("social_event", lambda d: "social_event" in d["cal"]),
    ("social_event_min", lambda d: _cal_min(d, "social_event")),
    ("exercise_session", lambda d: "exercise_session" in d["cal"]),
    ("exercise_session_min", lambda d: _cal_min(d, "exercise_session")),
    ("checkin_home", lambda d: "home" in d["chk"]),
    ("checkin_office", lambda d: "office" in d["chk"]),
)


def _device_day(r: dict) -> dict:
    """Flatten one device_log record (spec §2.7); an unavailable day has no signals."""
    available = bool(r["available"])
    sig = (r.get("signals") or {}) if available else {}
    return {"available": available, "st": sig.get("sleep_tracker") or {},
            "at": sig.get("activity_tracker") or {}, "ph": sig.get("phone_usage"),
            "ws": sig.get("work_session")}


_DEVICE_GET: tuple[tuple[str, Callable[[dict], Any]], ...] = (
    ("available", lambda d: d["available"]),
    ("bedtime_min", lambda d: _bed(d["st"].get("bedtime"))),
    ("wake_min", lambda d: _wake(d["st"].get("wake_time"))),
    ("duration_h", lambda d: _f(d["st"].get("duration_h"))),
    ("quality_good", lambda d: d["st"].get("wearable_quality_flag") == "good"),
    ("workout", lambda d: bool(d["at"].get("workout_detected"))),
    ("active_min", lambda d: _i(d["at"].get("active_minutes"))),
    ("steps", lambda d: _i(d["at"].get("steps"))),
    ("phone", lambda d: d["ph"] is not None),
    ("screen_time_min", lambda d: _i(d["ph"].get("screen_time_min")) if d["ph"] else -1),
    ("late_night_use", lambda d: bool(d["ph"].get("late_night_use")) if d["ph"] else False),
    ("work_session", lambda d: d["ws"] is not None),
    ("focus_min", lambda d: _i(d["ws"].get("focus_minutes")) if d["ws"] else -1),
    ("late_finish", lambda d: bool(d["ws"].get("late_finish")) if d["ws"] else False),
)


def _profile_values(profile: dict, difficulty: str) -> dict[str, Any]:
    """The profile layer of one persona from ``profile_ltm.json`` (spec §2.7)."""
    facts = profile["facts"]
    snap = facts.get("routine_snapshot") or {}
    sleep, ex, diet, work, social, mood = (
        snap.get(k) or {} for k in ("sleep", "exercise", "diet", "work", "social", "mood"))
    return {
        "anchor_end": int(profile["anchor_window"]["end_day_index"]),
        "idealised": difficulty == "stated_vs_revealed" or "quality_mean" not in sleep,
        "afterhours_style": _enum(AFTERHOURS_STYLES,
                                  (facts.get("traits") or {}).get("afterhours_work_style")),
        "bedtime_min": _bed(sleep.get("bedtime")),
        "duration_h": _f(sleep.get("duration_h")),
        "quality": _f(sleep.get("quality_mean")),
        "ex_days_per_week": _f(ex.get("days_per_week")),
        "ex_session_min": _f(ex.get("session_minutes")),
        "meals_per_day": _f(diet.get("meals_per_day")),
        "home_cooked_mean": _f(diet.get("home_cooked_mean")),
        "coffee_mean": _f(diet.get("coffee_cups_mean")),
        "hours_mean": _f(work.get("hours_mean")),
        "overtime_share": _f(work.get("overtime_share")),
        "wlb_mean": _f(work.get("work_life_balance_mean")),
        "social_dpw": _f(social.get("active_days_per_week")),
        "mood_mean": _f(mood.get("overall_mean")),
        "energy_mean": _f(mood.get("energy_mean")),
        "stressed_share": _f(mood.get("stressed_share")),
    }


# ---------------------------------------------------------------------------------------------
# file access


class _Files:
    """Reads JSON files of one release and names them relative to its root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    @contextmanager
    def about(self, path: Path) -> Iterator[None]:
        """Turn parsing errors inside the block into a one-line error naming ``path``."""
        try:
            yield
        except ReleaseFormatError:
            raise
        except KeyError as exc:
            raise ReleaseFormatError(
                f"{self.rel(path)}: missing field {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
            raise ReleaseFormatError(_one_line(f"{self.rel(path)}: {exc}")) from None

    def load(self, path: Path, *, required: bool = True) -> Any:
        try:
            with path.open(encoding="utf-8") as fh:
                return json.load(fh)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            if required:
                raise ReleaseFormatError(f"{self.rel(path)}: required file is missing") from None
            return None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReleaseFormatError(
                _one_line(f"{self.rel(path)}: malformed JSON ({exc})")) from None

    def load_source(self, path: Path, persona_id: str) -> dict:
        """A structural source file: checks schema_version and persona_id."""
        data = self.load(path)
        if not isinstance(data, dict):
            raise ReleaseFormatError(f"{self.rel(path)}: expected a JSON object")
        version = data.get("schema_version")
        if version not in KNOWN_SCHEMA_VERSIONS:
            raise ReleaseFormatError(
                f"{self.rel(path)}: unknown schema_version {version!r} "
                f"(expected {', '.join(KNOWN_SCHEMA_VERSIONS)})")
        if data.get("persona_id", persona_id) != persona_id:
            raise ReleaseFormatError(
                f"{self.rel(path)}: persona_id {data['persona_id']!r} does not match its folder")
        return data

    def days(self, records: Any, path: Path) -> list[dict]:
        """The 30 day records of ``path`` sorted by day index; anything else is an error."""
        if not isinstance(records, list) or len(records) != N_DAYS:
            n = len(records) if isinstance(records, list) else type(records).__name__
            raise ReleaseFormatError(
                f"{self.rel(path)}: expected {N_DAYS} day records, found {n}")
        with self.about(path):
            out = sorted(records, key=lambda r: int(r["day_index"]))
            if [int(r["day_index"]) for r in out] != list(range(1, N_DAYS + 1)):
                raise ValueError(f"day_index values are not 1..{N_DAYS}")
        return out


def _find_seed_dirs(path: Path) -> tuple[Path, list[Path]]:
    """(release root, seed folders) for a release root, a ``seeds`` folder or a seed folder."""
    def seeds_in(d: Path) -> list[Path]:
        found = [p for p in d.iterdir() if p.is_dir() and _SEED_RE.match(p.name)]
        return sorted(found, key=lambda p: int(p.name[1:]))

    if (path / "benchmark" / "seeds").is_dir():
        return path, seeds_in(path / "benchmark" / "seeds")
    if _SEED_RE.match(path.name):
        is_std = path.parent.name == "seeds" and path.parent.parent.name == "benchmark"
        return (path.parents[2] if is_std else path.parent), [path]
    if path.name == "seeds" and path.parent.name == "benchmark":
        return path.parents[1], seeds_in(path)
    return path, seeds_in(path)


def _summarise(names: Iterable[str], k: int = 3) -> str:
    names = sorted(names)
    shown = ", ".join(names[:k])
    return shown + (f", … ({len(names)} in all)" if len(names) > k else "")


# ---------------------------------------------------------------------------------------------
# one seed


def _alloc(layer: str, p: int) -> dict[str, np.ndarray]:
    fields, daily = LAYERS[layer]
    shape = (p, N_DAYS) if daily else (p,)
    return {k: np.zeros(shape, dtype=dtype) for k, (dtype, _) in fields.items()}


def _fill(arrays: dict[str, np.ndarray], table, i: int, days: list) -> None:
    for name, get in table:
        arrays[name][i] = [get(d) for d in days]


def _scenario_of(shift: dict) -> str:
    for key in ("scenario", "scenario_id", "id"):
        if shift.get(key) in SCENARIOS:
            return shift[key]
    text = shift.get("event_description")
    return SCENARIOS[_SCENARIO_TEXTS.index(text)] if text in _SCENARIO_TEXTS else ""


def _load_config(files: _Files, seed_dir: Path) -> tuple[dict[str, dict], dict[str, str]]:
    """Persona records by id and the split mapping from ``config/`` (both optional)."""
    cfg = files.load(seed_dir / "config" / "personas.json", required=False)
    splits = files.load(seed_dir / "config" / "persona_splits.json", required=False)
    by_id: dict[str, dict] = {}
    if cfg is not None:
        with files.about(seed_dir / "config" / "personas.json"):
            items = cfg["personas"] if isinstance(cfg, dict) else cfg
            by_id = {p["id"]: p for p in items}
    mapping: dict[str, str] = {}
    if splits is not None:
        with files.about(seed_dir / "config" / "persona_splits.json"):
            mapping = dict(splits["mapping"] if "mapping" in splits else splits)
            bad = sorted({s for s in mapping.values() if s not in SPLITS})
            if bad:
                raise ValueError(f"unknown split(s) {', '.join(map(repr, bad))}")
    return by_id, mapping


def _persona_row(seed: int, pid: str, slug: str, index: int, profile: dict, meta: dict | None,
                 cfg: dict, split: str | None) -> dict[str, Any]:
    """One row of the personas table (columns :data:`PERSONA_COLUMNS`)."""
    difficulty = (cfg.get("difficulty_type") or profile.get("difficulty_type")
                  or (meta or {}).get("difficulty_type")
                  or DIFFICULTIES[DIFFICULTY_SLUGS.index(slug)])
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty_type {difficulty!r}")
    if DIFFICULTY_SLUGS[DIFFICULTIES.index(difficulty)] != slug:
        raise ValueError(f"difficulty_type {difficulty!r} contradicts the id {pid!r}")
    facts = profile.get("facts") or {}
    ident = {**(facts.get("identity") or {}), **(cfg.get("profile") or {})}
    traits = {**(facts.get("traits") or {}), **(cfg.get("stable_traits") or {})}
    shift = cfg.get("temporal_shift") or {}
    if shift.get("shift_day") is not None:
        shift_day = int(shift["shift_day"])
    elif difficulty == "temporal_shift":  # anchor_end = max(2, shift_day - 2), shift_day >= 10
        shift_day = int(profile["anchor_window"]["end_day_index"]) + 2
    else:
        shift_day = 0
    return {
        "seed": seed, "persona_id": pid, "difficulty": difficulty,
        "split": split or _split_of(index), "index": index,
        "name": cfg.get("name") or ident.get("name") or profile.get("persona_name") or "",
        "age": _i(ident.get("age")), "gender": ident.get("gender") or "",
        "occupation": ident.get("occupation") or "", "city": ident.get("city") or "",
        "relationship": ident.get("relationship") or "",
        "dietary_restriction": traits.get("dietary_restriction") or "",
        "social_preference": traits.get("social_preference") or "",
        "close_friends": _i(traits.get("close_friends")),
        "primary_exercise": traits.get("primary_exercise") or "",
        "scenario": _scenario_of(shift), "shift_day": shift_day,
    }


def _knob_row(meta: dict | None, difficulty: str, cfg: dict, anchor_end: int) -> dict[str, float]:
    """Source knobs of ``generation_metadata.json`` plus ``missing_day_prob`` (spec §2.7)."""
    knobs = {k: float(v) for k, v in ((meta or {}).get("source_knobs") or {}).items()}
    knobs.setdefault("profile_anchor_end_day", float(anchor_end))
    sparsity = (cfg.get("stated_vs_revealed") or {}).get("sparsity_injection") or {}
    if "missing_day_prob" in sparsity:
        knobs["missing_day_prob"] = float(sparsity["missing_day_prob"])
    elif difficulty != "stated_vs_revealed":
        knobs["missing_day_prob"] = 0.0
    return knobs


def _reference_rows(gt: Any, seed: int, pid: str) -> list[tuple]:
    """Validate ``ground_truth.json`` and return its 18 (seed, persona, qid, answer) rows."""
    if isinstance(gt, list):
        gt = {e["question_id"]: e for e in gt}
    unknown = sorted(set(gt) - set(QIDS))
    missing = [q for q in QIDS if q not in gt]
    if unknown or missing:
        raise ValueError(f"unknown question(s) {unknown}, missing question(s) {missing}")
    rows = []
    for qid in QIDS:
        answer = gt[qid]["answer"]
        question(qid).code(answer)  # ValueError names the question and its answer space
        rows.append((seed, pid, qid, answer))
    return rows


#: (layer, source file, field table, record flattener)
_DAY_SOURCES = (
    ("planner", "planner", _PLANNER_GET, None),
    ("self_report", "daily_self_report", _SELF_GET, None),
    ("objective", "objective_log", _OBJECTIVE_GET, _objective_day),
    ("device", "device_log", _DEVICE_GET, _device_day),
)


def _activity_names(day: dict) -> tuple[str, ...]:
    """Every social activity of one self-report day, named as the authors' renderer does."""
    out = []
    for a in day["social"].get("activities") or ():
        out.append(str(a.get("type", a.get("name", a))) if isinstance(a, dict) else str(a))
    return tuple(out)


def _load_persona(files: _Files, pdir: Path, i: int, layers: dict, seed: int, slug: str,
                  index: int, cfg: dict, split: str | None
                  ) -> tuple[dict, dict, list, bool, list[tuple[str, ...]]]:
    """Fill row ``i`` of every layer from one persona folder (spec §3).

    Returns the persona row, the knob row, the reference-label rows, whether
    ``generation_metadata.json`` was present and the self-report's activity names per day.
    """
    pid = pdir.name
    ss = pdir / "structural_sources"
    ev_path, gt_path = pdir / "event_table.json", pdir / "ground_truth.json"
    events = files.load(ev_path)
    gt = files.load(gt_path)
    src = {s: files.load_source(ss / f"{s}.json", pid) for s in _SOURCE_FILES}
    meta_path = ss / "generation_metadata.json"
    meta = files.load_source(meta_path, pid) if meta_path.is_file() else None

    ev_days = files.days(events, ev_path)
    with files.about(ev_path):
        if any(r.get("persona_id", pid) != pid for r in ev_days):
            raise ValueError("persona_id does not match its folder")
        _fill(layers["events"], _EVENT_GET, i, ev_days)
    for layer, name, table, flat in _DAY_SOURCES:
        path = ss / f"{name}.json"
        days = files.days(src[name].get("records"), path)
        with files.about(path):
            _fill(layers[layer], table, i, [flat(r) for r in days] if flat else days)
            if layer == "self_report":
                acts = [_activity_names(r) for r in days]
    with files.about(ss / "profile_ltm.json"):
        row = _persona_row(seed, pid, slug, index, src["profile_ltm"], meta, cfg, split)
        for name, value in _profile_values(src["profile_ltm"], row["difficulty"]).items():
            layers["profile"][name][i] = value
    with files.about(meta_path):
        knobs = _knob_row(meta, row["difficulty"], cfg, int(layers["profile"]["anchor_end"][i]))
    with files.about(gt_path):
        refs = _reference_rows(gt, seed, pid)
    return row, knobs, refs, meta is not None, acts


def _load_seed(files: _Files, seed_dir: Path, skipped: list[str]) -> dict[str, Any] | None:
    """Parse every persona folder of one seed folder; None if it holds no persona."""
    seed = int(_SEED_RE.match(seed_dir.name).group(1))
    found, ignored = [], []
    for d in (p for p in seed_dir.iterdir() if p.is_dir()):
        m = _PERSONA_RE.match(d.name)
        if m:
            found.append((DIFFICULTY_SLUGS.index(m.group(1)), int(m.group(2)), d, m.group(1)))
        elif d.name not in ("config", "nl_renders"):
            ignored.append(d.name)
    if ignored:
        skipped.append(f"{files.rel(seed_dir)}: folders that are not personas ignored: "
                       f"{_summarise(ignored)}")
    if not found:
        return None
    found.sort(key=lambda t: (t[0], t[1], t[2].name))
    cfg_by_id, split_map = _load_config(files, seed_dir)
    extra = set(cfg_by_id) - {t[2].name for t in found}
    if extra:
        skipped.append(f"{files.rel(seed_dir / 'config' / 'personas.json')}: {len(extra)} "
                       "listed persona(s) have no benchmark folder")

    layers = {name: _alloc(name, len(found)) for name in LAYERS}
    rows, knob_rows, ref_rows, no_meta, acts = [], [], [], [], []
    for i, (_, index, pdir, slug) in enumerate(found):
        row, knobs, refs, has_meta, names = _load_persona(
            files, pdir, i, layers, seed, slug, index, cfg_by_id.get(pdir.name) or {},
            split_map.get(pdir.name))
        rows.append(row)
        knob_rows.append(knobs)
        ref_rows.extend(refs)
        acts.append(names)
        if not has_meta:
            no_meta.append(pdir.name)
    if no_meta:
        skipped.append(f"{files.rel(seed_dir)}: {len(no_meta)} persona(s) without "
                       f"generation_metadata.json, knobs NaN ({_summarise(no_meta)})")
    return {"seed": seed, "personas": rows, "layers": layers, "knobs": knob_rows,
            "reference": ref_rows, "activities": acts}


# ---------------------------------------------------------------------------------------------
# atoms and LLM answers


def _atom_rows(files: _Files, seed: int, keep: set[str], skipped: list[str]) -> list[tuple]:
    """Rows of ``extracted_atoms/s<seed>/*.json`` for the personas in ``keep``."""
    folder = files.root / "extracted_atoms" / f"s{seed}"
    if not folder.is_dir():
        return []
    rows, others = [], []
    for path in sorted(folder.glob("*.json")):
        if path.stem not in keep:
            others.append(path.stem)
            continue
        data = files.load(path)
        with files.about(path):
            if data.get("persona", path.stem) != path.stem:
                raise ValueError(f"persona {data['persona']!r} does not match the file name")
            grid = data["extraction"]
            unknown = sorted(set(grid) - set(QIDS))
            if unknown:
                raise ValueError(f"unknown question(s) {unknown}")
            for qid in QIDS:
                cells = grid[qid]
                bad = sorted(set(cells) - set(SOURCES))
                if bad:
                    raise ValueError(f"{qid}: unknown source(s) {bad}")
                for source in SOURCES:
                    value = cells[source]
                    if value is not None:
                        question(qid).code(value)
                    rows.append((seed, path.stem, qid, source, value))
    if others:
        skipped.append(f"{files.rel(folder)}: atoms of {len(others)} persona(s) with no "
                       f"benchmark folder skipped ({_summarise(others)})")
    return rows


def _answer_rows(files: _Files, folder: Path, model: str, variant: str, seed: int,
                 keep: set[str], skipped: list[str]) -> list[tuple]:
    """Rows of one ``method_outputs`` folder of per-persona answer bundles."""
    rows, others = [], []
    for path in sorted(folder.glob("*.json")):
        if path.stem not in keep:
            others.append(path.stem)
            continue
        data = files.load(path)
        with files.about(path):
            if data.get("persona", path.stem) != path.stem:
                raise ValueError(f"persona {data['persona']!r} does not match the file name")
            answers = data["answers"]
            unknown = sorted(set(answers) - set(QIDS))
            if unknown:
                raise ValueError(f"unknown question(s) {unknown}")
            for qid in QIDS:
                if qid in answers:
                    a = answers[qid]
                    rows.append((model, variant, seed, path.stem, qid, a.get("answer"),
                                 bool(a.get("would_skip", False))))
    if others:
        skipped.append(f"{files.rel(folder)}: answers of {len(others)} persona(s) with no "
                       f"benchmark folder skipped ({_summarise(others)})")
    return rows


def _llm_rows(files: _Files, seeds: list[int], keep: dict[int, set[str]],
              skipped: list[str]) -> list[tuple]:
    root = files.root / "method_outputs"
    if not root.is_dir():
        return []
    rows: list[tuple] = []
    for entry in sorted(root.iterdir()):
        if not entry.is_dir():
            skipped.append(f"{files.rel(entry)}: not imported")
            continue
        if entry.name == _STRUCT_LLM:
            for mode in sorted(d for d in entry.iterdir() if d.is_dir()):
                for seed in seeds:
                    folder = mode / f"s{seed}"
                    if folder.is_dir():
                        rows += _answer_rows(files, folder, _STRUCT_LLM, mode.name, seed,
                                             keep[seed], skipped)
            continue
        for seed in seeds:
            seed_dir = entry / f"s{seed}"
            if not seed_dir.is_dir():
                continue
            for folder in sorted(d for d in seed_dir.iterdir() if d.is_dir()):
                if folder.name in _LLM_VARIANTS:
                    rows += _answer_rows(files, folder, entry.name, folder.name, seed,
                                         keep[seed], skipped)
                else:
                    skipped.append(f"{files.rel(folder)}: variant {folder.name!r} not imported")
    return rows


# ---------------------------------------------------------------------------------------------
# public entry point


def load_release(path: str | Path) -> Release:
    """Import a released benchmark (spec §3) into a :class:`Release`.

    Parameters
    ----------
    path : str or Path
        The release root (the folder holding ``benchmark/seeds/<seed>/…``), a
        ``benchmark/seeds`` folder or one ``benchmark/seeds/<seed>`` folder (then atoms and LLM
        answers are read from the enclosing release root, for that seed only).

    Returns
    -------
    Release
        Complete: either every persona folder is imported or nothing is.

    Raises
    ------
    ReleaseFormatError
        With a one-line message naming the offending file (relative to the release root): a
        missing required file (``event_table.json``, ``ground_truth.json``, any of the five
        ``structural_sources`` files), malformed JSON, an unknown ``schema_version``, a record
        count other than 30 days, an unknown question, source or answer in the ground truth or
        the extracted atoms, or no persona folder at all.
    """
    path = Path(path)
    if not path.is_dir():
        raise ReleaseFormatError(f"no personas found under {path} (not a directory)")
    root, seed_dirs = _find_seed_dirs(path)
    files = _Files(root)
    skipped: list[str] = []
    parts = [s for s in (_load_seed(files, d, skipped) for d in seed_dirs) if s is not None]
    if not parts:
        raise ReleaseFormatError(f"no personas found under {path}")

    personas = pd.DataFrame([r for s in parts for r in s["personas"]],
                            columns=list(PERSONA_COLUMNS))
    layers = {name: {k: np.concatenate([s["layers"][name][k] for s in parts])
                     for k in LAYERS[name][0]} for name in LAYERS}
    knob_rows = [k for s in parts for k in s["knobs"]]
    extra = sorted({c for k in knob_rows for c in k} - {*_KNOB_COLUMNS, "missing_day_prob"})
    knobs = pd.DataFrame(knob_rows, columns=[*_KNOB_COLUMNS, *extra, "missing_day_prob"],
                         dtype="float64").astype({"profile_anchor_end_day": "int64"})
    testbed = Testbed(personas, knobs=knobs, **layers)
    testbed.validate()

    seeds = [s["seed"] for s in parts]
    keep = {s["seed"]: {r["persona_id"] for r in s["personas"]} for s in parts}
    reference = pd.DataFrame([r for s in parts for r in s["reference"]],
                             columns=["seed", "persona_id", "question_id", "answer"])
    atom_rows = [r for seed in seeds for r in _atom_rows(files, seed, keep[seed], skipped)]
    atoms = pd.DataFrame({
        "seed": pd.Series([r[0] for r in atom_rows], dtype="int64"),
        "persona_id": pd.Series([r[1] for r in atom_rows], dtype="str"),
        "question_id": pd.Series([r[2] for r in atom_rows], dtype="str"),
        "source": pd.Series([r[3] for r in atom_rows], dtype="str"),
        "value": pd.Series([r[4] for r in atom_rows], dtype=object),
    })
    llm = _llm_rows(files, seeds, keep, skipped)
    llm_answers = pd.DataFrame({
        "model": pd.Series([r[0] for r in llm], dtype="str"),
        "variant": pd.Series([r[1] for r in llm], dtype="str"),
        "seed": pd.Series([r[2] for r in llm], dtype="int64"),
        "persona_id": pd.Series([r[3] for r in llm], dtype="str"),
        "question_id": pd.Series([r[4] for r in llm], dtype="str"),
        "answer": pd.Series([r[5] for r in llm], dtype=object),
        "would_skip": pd.Series([r[6] for r in llm], dtype="bool"),
    })
    names = [day for s in parts for persona in s["activities"] for day in persona]
    activity_names = np.empty(len(names), dtype=object)
    for k, day in enumerate(names):  # element-wise: numpy would turn tuples into a 2-D array
        activity_names[k] = day
    return Release(testbed=testbed, reference_labels=reference, extracted_atoms=atoms,
                   llm_answers=llm_answers, skipped=skipped,
                   activity_names=activity_names.reshape(testbed.n, N_DAYS))
