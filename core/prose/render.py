"""Deterministic natural-language render of the five sources (seed 000 §2.1, §8.6 stage 4).

One Markdown document per persona, in the released layout (the benchmark specification §2.10):
five ``##`` sections in the order "Long-Term Background and Habits", "Plans and Intentions",
"Daily Self-Reports", "Objective Records", "Device and Activity Records"; the profile as seven
sentences; every other source as 30 dated ``####`` blocks of ``- `` lines, an unavailable day
written "Records unavailable for this date." The templates follow the released render
(``tests/fixtures/survey2agent-sample``); where the release shows no example (a false flag, an
after-hours style other than strict, an objective day with no signals), the wording is ours.
``docs/prose.md`` lists every systematic difference from the released render.

Invariants (tested)
-------------------
* Deterministic: the same testbed gives byte-identical documents.
* Every line that states a source field has a frame row ``(persona_id, section, day_index,
  field, start, end)``; ``text[start:end]`` is that line without its ``- `` bullet and newline,
  and it contains the value as rendered. ``day_index`` is 1–30 (0 for the undated profile).
* Numbers are written losslessly where μ* reads them: a value already rounded to the source's
  precision (1 dp hours, 2 dp shares) is written at that precision, any other value (the
  profile's fallback quirk of spec §2.7) with two more decimals.

Speed: the per-day lines are formatted column-wise over all ``(P, 30)`` cells from
precomputed clock and name tables, then each document is one ``str.join``; spans come from a
cumulative sum of piece lengths. No per-persona Python loop formats a line.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..testbed.questions import SOURCES
from ..testbed.schema import Testbed
from ..testbed.vocab import DATES, EXERCISE_TYPES, IS_WEEKEND, N_DAYS, SOCIAL_ACTIVITIES

__all__ = ["NO_SIGNALS", "SECTIONS", "SECTION_SOURCE", "UNAVAILABLE", "Rendered", "render"]

#: section headings in document order (the benchmark specification §2.10)
SECTIONS = ("Long-Term Background and Habits", "Plans and Intentions", "Daily Self-Reports",
            "Objective Records", "Device and Activity Records")
#: heading -> source id of :data:`core.testbed.questions.SOURCES`
SECTION_SOURCE = dict(zip(SECTIONS, SOURCES, strict=True))
UNAVAILABLE = "Records unavailable for this date."
#: an available day whose record carries no rendered signal (no released example: ours)
NO_SIGNALS = "No signals recorded for this date."
UNNAMED = "an unnamed activity"

_CLOCK = np.array([f"{(m % 1440) // 60:02d}:{m % 60:02d}" for m in range(2880)], dtype=object)
_WEEKDAYS = tuple(_dt.date.fromisoformat(d).strftime("%A") for d in DATES)
_HEADERS = tuple(f"#### {d} ({w})\n" for d, w in zip(DATES, _WEEKDAYS, strict=True))
# codes -1 (none) and -2 (a name outside our vocabulary) index the two trailing entries
_ACT = np.array([*SOCIAL_ACTIVITIES, UNNAMED, UNNAMED], dtype=object)
_EXT = np.array([*EXERCISE_TYPES, "exercise", "exercise"], dtype=object)
_QUALITY = ("poor", "poor", "poor", "fair", "good", "good")  # self-report quality 0..5


@dataclass(frozen=True)
class Rendered:
    """The NL memory of a testbed: one document per persona and the frame of its sentences.

    Attributes
    ----------
    persona_ids : persona ids, in testbed order.
    texts : the Markdown documents, in the same order.
    frames : one row per (sentence, field it states): ``doc`` (the document's position; ids
        repeat across seeds), ``persona_id, section, day_index, field, start, end``
        (``texts[doc][start:end]`` is the sentence).
    """

    persona_ids: tuple[str, ...]
    texts: tuple[str, ...]
    frames: pd.DataFrame

    def text(self, persona_id: str) -> str:
        """The first document of ``persona_id`` (``ValueError`` if unknown)."""
        try:
            return self.texts[self.persona_ids.index(persona_id)]
        except ValueError:
            raise ValueError(f"no rendered persona {persona_id!r}") from None


_TENTHS = np.array([f"{k / 10:.1f}" for k in range(2001)], dtype=object)  # 0.0 .. 200.0


def _num(x: np.ndarray, dp: int = 1) -> list[str]:
    """Values as text: ``dp`` decimals when already rounded to ``dp``, else ``dp + 2``.

    One-decimal values in [0, 200] come from a precomputed table (the hot path).
    """
    x = np.asarray(x, dtype=float).ravel()
    exact = np.round(x, dp) == x
    out = np.empty(x.shape, dtype=object)
    if dp == 1:
        k = np.round(np.nan_to_num(x, nan=-1.0) * 10)
        table = exact & (k >= 0) & (k <= 2000)
        out[table] = _TENTHS[k[table].astype(np.int64)]
    else:
        table = np.zeros(x.shape, dtype=bool)
    for i in np.flatnonzero(~table).tolist():
        v = float(x[i])
        out[i] = "" if v != v else f"{v:.{dp}f}" if exact[i] else f"{v:.{dp + 2}f}"
    return out.tolist()


def _grid(values: list[str], shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def _article(age) -> str:
    """"an" before an age read with a vowel sound (8, 11, 18, 80–89), else "a"."""
    return "an" if str(age)[:1] == "8" or str(age) in ("11", "18") else "a"


def _s(n: int) -> str:
    return "s" if n > 1 else ""


# ---------------------------------------------------------------------------------------------
# the five sources; each returns [(fields, lines)] with "" where a line is absent


def _profile(tb: Testbed) -> list[tuple[tuple[str, ...], np.ndarray]]:
    pr, pe = tb.profile, tb.personas
    n = tb.n
    style = {0: "; maintains strict work-life boundaries",
             1: "; is flexible about working after hours"}
    ident = [f"{nm} is {_article(age)} {age}-year-old {oc} in {city}. "
             f"Relationship status: {rel}.\n"
             for nm, age, oc, city, rel in zip(pe["name"], pe["age"], pe["occupation"],
                                               pe["city"], pe["relationship"], strict=True)]
    traits = [f"Traits: dietary restriction: {d}; social preference toward {sp}; {k} close "
              f"friends; primary exercise: {ex}{style.get(int(st), '')}.\n"
              for d, sp, k, ex, st in zip(pe["dietary_restriction"], pe["social_preference"],
                                          pe["close_friends"], pe["primary_exercise"],
                                          pr["afterhours_style"].tolist(), strict=True)]
    bed = pr["bedtime_min"].astype(int).tolist()
    sleep = [f"Sleep habits: typically goes to bed around {_CLOCK[b]}"
             + (f", sleeps about {d} hours" if d else "") + ".\n"
             for b, d in zip(bed, _num(pr["duration_h"]), strict=True)]
    exer = [(f"Exercise: exercises about {d} days per week, usually through {ex}.\n" if d
             else f"Exercise: usually through {ex}.\n")
            for d, ex in zip(_num(pr["ex_days_per_week"]), pe["primary_exercise"], strict=True)]
    diet = [f"Diet: averages {m} meals per day, about {h} of those are home-cooked.\n"
            for m, h in zip(_num(pr["meals_per_day"]), _num(pr["home_cooked_mean"]),
                            strict=True)]
    ot = pr["overtime_share"]
    pct = [("" if v != v else f"{round(v * 100):d}" if e else f"{v * 100:.2f}")
           for v, e in zip(ot.tolist(), (np.round(ot, 2) == ot).tolist(), strict=True)]
    work = [f"Work: works about {h} hours per day"
            + (f", overtime on about {p}% of days" if p else "") + ".\n"
            for h, p in zip(_num(pr["hours_mean"]), pct, strict=True)]
    social = [(f"Social life: socially active about {d} days per week.\n" if d
               else "Social life: no typical activity level recorded.\n")
              for d in _num(pr["social_dpw"])]
    rows = [((), ident), (("afterhours_style",), traits), (("bedtime_min", "duration_h"), sleep),
            (("ex_days_per_week",), exer), (("meals_per_day", "home_cooked_mean"), diet),
            (("hours_mean", "overtime_share"), work), (("social_dpw",), social)]
    return [(f, _grid(v, (n,))) for f, v in rows]


def _planner(tb: Testbed) -> list[tuple[tuple[str, ...], np.ndarray]]:
    pl = tb.planner
    shape = pl["bedtime_min"].shape
    flat = {k: v.ravel().tolist() for k, v in pl.items()}
    bed = pl["bedtime_min"].astype(int)
    dur = pl["duration_h"]
    wake = (bed + np.round(np.nan_to_num(dur) * 60).astype(int)).ravel().tolist()
    sleep = [(f"- Planned bedtime {_CLOCK[b]}, wake {_CLOCK[w % 1440]}, targeting {d} hours of "
              "sleep.\n" if b >= 0 else "- No sleep target set.\n")
             for b, w, d in zip(flat["bedtime_min"], wake, _num(dur), strict=True)]
    ex_type = np.repeat(tb.personas["primary_exercise"].to_numpy(dtype=object), N_DAYS).tolist()
    exer = [f"- Planned {t} for {m} minutes.\n" if i else "- No workout planned.\n"
            for i, t, m in zip(flat["ex_intended"], ex_type, flat["ex_min"], strict=True)]
    finish = np.broadcast_to(np.where(IS_WEEKEND, "16:00", "18:00"), shape).ravel().tolist()
    work = [f"- Work capped at {h} hours, " + ("" if a else "overtime acceptable, ")
            + f"finish by {f}.\n"
            for h, a, f in zip(_num(pl["hours_limit"]), flat["avoid_overtime"], finish,
                               strict=True)]
    diet = ["- Home-cooked food prioritized.\n" if h else "- No home-cooking priority.\n"
            for h in flat["home_priority"]]
    social = ["- Social activity planned.\n" if s else "- No social activity planned.\n"
              for s in flat["social_intent"]]
    rows = [(("bedtime_min", "duration_h"), sleep), (("ex_intended", "ex_min"), exer),
            (("hours_limit", "avoid_overtime"), work), (("home_priority",), diet),
            (("social_intent",), social)]
    return [(f, _grid(v, shape)) for f, v in rows]


def _self_report(tb: Testbed, activity_names: np.ndarray | None = None
                 ) -> list[tuple[tuple[str, ...], np.ndarray]]:
    sr, ev = tb.self_report, tb.events
    shape = sr["bedtime_min"].shape
    flat = {k: v.ravel().tolist() for k, v in sr.items()}
    quality = [_QUALITY[min(max(q, 0), 5)] for q in flat["quality"]]
    sleep = [f"- Sleep: went to bed at {_CLOCK[b]}, woke at {_CLOCK[w % 1440]}, slept {d} "
             f"hours, quality {q}.\n"
             for b, w, d, q in zip(flat["bedtime_min"], flat["wake_min"], _num(sr["duration_h"]),
                                   quality, strict=True)]
    ex_name = _EXT[sr["exercise_type"]].ravel().tolist()
    exer = [f"- Exercise: {t}, {m} minutes.\n" if did else "- Exercise: none.\n"
            for did, t, m in zip(flat["did_exercise"], ex_name, flat["exercise_min"], strict=True)]
    diet = [f"- Diet: {m} meals total, {h} home-cooked.\n"
            for m, h in zip(flat["meals"], flat["home_cooked"], strict=True)]
    wk = np.broadcast_to(IS_WEEKEND, shape).ravel().tolist()
    work = [f"- Work: {h} hours" + (", overtime" if o else "")
            + ((", weekend work commitment" if w else ", no weekend work commitment") if k else "")
            + ".\n"
            for h, o, w, k in zip(_num(sr["hours"]), flat["overtime"], flat["worked_on_weekend"],
                                  wk, strict=True)]
    # the self-report keeps its first activity's name; the second is the latent day's second
    # activity when the report starts like the latent day (the generator truncates or appends);
    # an imported release names every activity (``activity_names``)
    same = (sr["act1"] == ev["act1"]) & (ev["n_act"] >= 2)
    a1 = _ACT[sr["act1"]].ravel().tolist()
    a2 = _ACT[np.where(same, ev["act2"], -1)].ravel().tolist()
    named = ([[x, y, *[UNNAMED] * (k - 2)][:k]
              for k, x, y in zip(flat["n_act"], a1, a2, strict=True)]
             if activity_names is None else
             [list(a) if len(a) == k else [x, y, *[UNNAMED] * (k - 2)][:k]
              for k, x, y, a in zip(flat["n_act"], a1, a2, activity_names.ravel().tolist(),
                                    strict=True)])
    social = [("- Social: no activities.\n" if k <= 0 else
               "- Social: " + ", ".join(acts)
               + (" (supporting someone)" if s else "") + ".\n")
              for k, acts, s in zip(flat["n_act"], named, flat["supporting_other"], strict=True)]
    rows = [(("bedtime_min", "wake_min", "duration_h", "quality"), sleep),
            (("did_exercise", "exercise_type", "exercise_min"), exer),
            (("meals", "home_cooked"), diet), (("hours", "overtime", "worked_on_weekend"), work),
            (("n_act", "act1", "supporting_other"), social)]
    return [(f, _grid(v, shape)) for f, v in rows]


def _objective(tb: Testbed) -> list[tuple[tuple[str, ...], np.ndarray]]:
    ob, ev = tb.objective, tb.events
    shape = ob["available"].shape
    flat = {k: v.ravel().tolist() for k, v in ob.items()}
    av = flat["available"]
    ts = [(f"- Timesheet: {h} hours logged, "
           + ("overtime reported" if o else "no overtime") + ".\n") if a and t else ""
          for a, t, h, o in zip(av, flat["timesheet"], _num(ob["hours_logged"]),
                                flat["overtime_logged"], strict=True)]

    def pay(a, c, d, f, v):
        if not a:
            return ""
        parts = ([f"{c} coffee purchase{_s(c)}"] if c >= 0 else []) + \
            ([f"{d} food delivery purchase{_s(d)}"] if d >= 0 else []) + \
            (["1 fitness purchase"] if f else []) + (["1 venue purchase"] if v else [])
        return "- Payments: " + ", ".join(parts) + ".\n" if parts else ""

    pays = [pay(*t) for t in zip(av, flat["pay_coffee"], flat["pay_delivery"],
                                 flat["pay_fitness"], flat["pay_venue"], strict=True)]
    start = np.broadcast_to(np.where(IS_WEEKEND, 600, 540), shape).ravel().tolist()
    social_name = _ACT[ev["act1"]].ravel().tolist()
    ex_name = _EXT[ev["exercise_type"]].ravel().tolist()

    def cal(a, w, s0, se, sm, sn, xe, xm, xn):
        if not a:
            return ""
        parts = ([f"work block ({_CLOCK[s0]}-{_CLOCK[s0 + w]}, {w} min)"] if w > 0 else []) + \
            ([f"social event: {sn} ({sm} min)"] if se else []) + \
            ([f"exercise session: {xn} ({xm} min)"] if xe else [])
        return "- Calendar: " + "; ".join(parts) + ".\n" if parts else ""

    cals = [cal(*t) for t in zip(av, flat["work_block_min"], start, flat["social_event"],
                                 flat["social_event_min"], social_name, flat["exercise_session"],
                                 flat["exercise_session_min"], ex_name, strict=True)]
    status = [("" if t or p or c else f"- {NO_SIGNALS}\n") if a else f"- {UNAVAILABLE}\n"
              for a, t, p, c in zip(av, ts, pays, cals, strict=True)]
    rows = [(("available",), status), (("timesheet", "hours_logged", "overtime_logged"), ts),
            (("pay_coffee", "pay_delivery", "pay_fitness", "pay_venue"), pays),
            (("work_block_min", "social_event", "social_event_min", "exercise_session",
              "exercise_session_min"), cals)]
    return [(f, _grid(v, shape)) for f, v in rows]


def _device(tb: Testbed) -> list[tuple[tuple[str, ...], np.ndarray]]:
    dv = tb.device
    shape = dv["available"].shape
    flat = {k: v.ravel().tolist() for k, v in dv.items()}
    av = flat["available"]
    sleep = [f"- Sleep tracker: bed {_CLOCK[b]}, wake {_CLOCK[w % 1440]}, {d} hours.\n"
             if a and d else ""
             for a, b, w, d in zip(av, flat["bedtime_min"], flat["wake_min"],
                                   _num(dv["duration_h"]), strict=True)]
    act = [f"- Activity: {m} active minutes, "
           + ("workout detected" if w else "no workout detected") + ".\n" if a and m >= 0 else ""
           for a, m, w in zip(av, flat["active_min"], flat["workout"], strict=True)]
    ws = [f"- Work session: {f} minutes of focus time, "
          + ("finished late" if late else "no late finish") + ".\n" if a and s and f >= 0 else ""
          for a, s, f, late in zip(av, flat["work_session"], flat["focus_min"],
                                   flat["late_finish"], strict=True)]
    status = [("" if s or x or w else f"- {NO_SIGNALS}\n") if a else f"- {UNAVAILABLE}\n"
              for a, s, x, w in zip(av, sleep, act, ws, strict=True)]
    rows = [(("available",), status), (("bedtime_min", "wake_min", "duration_h"), sleep),
            (("active_min", "workout"), act), (("work_session", "focus_min", "late_finish"), ws)]
    return [(f, _grid(v, shape)) for f, v in rows]


# ---------------------------------------------------------------------------------------------
# assembly


def render(tb: Testbed, *, activity_names: np.ndarray | None = None) -> Rendered:
    """Render every persona of ``tb`` as one Markdown document (seed 000 §8.6 stage 4).

    Parameters
    ----------
    tb : the testbed (generated or imported); only its personas, the five sources and, for
        the names the source arrays do not keep, the latent activity and exercise names
        (see ``docs/prose.md``) are read.
    activity_names : optional ``(P, 30)`` object array of tuples, every self-reported activity
        name per day (:attr:`core.testbed.importer.Release.activity_names`). A day whose tuple
        has the self-report's count of activities is written with those names; otherwise (and
        without the array) the names come from the source and latent arrays, and an activity
        they do not name is "an unnamed activity". ``ValueError`` for another shape.

    Returns
    -------
    Rendered
        The documents and the frame of their sentences (invariants in the module docstring).
    """
    n = tb.n
    if activity_names is not None and np.shape(activity_names) != (n, N_DAYS):
        raise ValueError(f"activity_names has shape {np.shape(activity_names)}; expected "
                         f"({n}, {N_DAYS}), one tuple per persona and day")
    cols: list[np.ndarray] = []  # one (P,) object array per piece column
    meta: list[tuple[int, int, tuple[str, ...], int]] = []  # section, day, fields, prefix

    def const(text: str) -> np.ndarray:
        a = np.empty(n, dtype=object)
        a[:] = text
        return a

    cols.append(const(f"## {SECTIONS[0]}\n\n"))
    meta.append((0, 0, (), 0))
    for fields, lines in _profile(tb):
        cols.append(lines)
        meta.append((0, 0, fields, 0))
    for s, build in enumerate((_planner, _self_report, _objective, _device), start=1):
        cols.append(const(f"\n## {SECTIONS[s]}\n\n"))
        meta.append((s, 0, (), 0))
        slots = build(tb, activity_names) if build is _self_report else build(tb)
        for d in range(N_DAYS):
            cols.append(const(_HEADERS[d]))
            meta.append((s, d + 1, (), 0))
            for fields, lines in slots:
                cols.append(lines[:, d])
                meta.append((s, d + 1, fields, 2))
            cols.append(const("\n"))
            meta.append((s, d + 1, (), 0))
    pieces = np.stack(cols, axis=1) if n else np.empty((0, len(cols)), dtype=object)
    texts = ["".join(row).rstrip("\n") + "\n" for row in pieces.tolist()]
    lengths = np.fromiter(map(len, pieces.ravel().tolist()), dtype=np.int64,
                          count=pieces.size).reshape(pieces.shape)
    offsets = np.cumsum(lengths, axis=1) - lengths
    ids = tuple(str(x) for x in tb.personas["persona_id"])
    return Rendered(ids, tuple(texts), _frames(ids, lengths, offsets, meta))


def _frames(ids, lengths, offsets, meta) -> pd.DataFrame:
    names = sorted({f for _, _, fields, _ in meta for f in fields})
    code = {f: i for i, f in enumerate(names)}
    sec = np.array([m[0] for m in meta], dtype=np.int8)
    day = np.array([m[1] for m in meta], dtype=np.int16)
    pre = np.array([m[3] for m in meta], dtype=np.int64)
    nf = np.array([len(m[2]) for m in meta], dtype=np.int64)
    fstart = np.concatenate([[0], np.cumsum(nf)])
    fcodes = np.array([code[f] for m in meta for f in m[2]], dtype=np.int64)
    p, c = np.nonzero((lengths > 0) & (nf > 0)[None, :])
    rep = nf[c]
    p, c = np.repeat(p, rep), np.repeat(c, rep)
    k = np.arange(len(c)) - np.repeat(np.cumsum(rep) - rep, rep)  # field rank within its line
    start = offsets[p, c] + pre[c]
    end = offsets[p, c] + lengths[p, c] - 1
    cats = pd.Index(ids).unique()
    return pd.DataFrame({
        "doc": p.astype(np.int32),
        "persona_id": pd.Categorical.from_codes(cats.get_indexer(np.asarray(ids, dtype=object))[p]
                                                if len(p) else p, categories=cats),
        "section": pd.Categorical.from_codes(sec[c], categories=list(SECTIONS)),
        "day_index": day[c],
        "field": pd.Categorical.from_codes(fcodes[fstart[c] + k], categories=names),
        "start": start.astype(np.int32),
        "end": end.astype(np.int32),
    })
