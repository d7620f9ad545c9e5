"""An atom read from the days its prose could be read: the unread-day rule (issue 19).

When a dated line of the prose is unread (:mod:`core.prose.extract`), the atoms that may read
it do not know what that day said. The extractor treats such a day as a **missing day** of
the atom, the way the benchmark treats a day a source dropped (seed 000 §2.7 dropout; the
benchmark specification §2.9 rules over the *available* days of the objective log and the
device), and reads the atom from the other days of its window. :func:`partial_atom` is that
reading for one (question, source) cell, given which days of each persona were read.

How a rule reads fewer days
---------------------------
* **Objective log and device** — the day is dropped exactly as a dropped day is: their
  ``available`` flag is cleared on the missing days and :func:`core.testbed.readout.readout`
  runs unchanged, so every quirk of those rules holds (A2 never extrapolates, the device's A1
  scales its share to 30, the last seven *available* device days of Ctrl2, …). The
  exceptions are the rules where the objective log's or the device's availability is itself
  the signal (F2 from the device, F3 from the device) and the rules whose context is the
  planner (C2 from the objective log, C3 from the device): there a missing day is left out of
  every count instead.
* **Self-report and planner** — the benchmark never drops their days, so the rules have no
  missing-day case; the one used here is the device's (choice, as readout's own "choice:"
  notes): a **count over the window** becomes the count on the read days scaled to the
  window and rounded (``round(c · W / n)``, the device's A1 rule: A1, A2, B2 (days per
  week), E2's "at most 2 skip days", F1, F2's planner, Ctrl1, Ctrl2), a **share or mean** is
  taken over the read days (A3, B3 over the read weekend days, D1 per half, D2, G1, G2, C2,
  C3, E1), and a comparison of two counts of the same days needs no scaling (E1's shares,
  F2, F3).
* **Context** — a missing day is missing for the whole atom (its own source's line and its
  context's line of that day are both left out). When the context decides an edge label
  (C2 "no plans", C3 "no targets") and some day of the window is missing, an empty context on
  the read days does not prove the edge: the atom is ⊥.
* **Profile** — its atoms read no day; an unread profile line leaves nothing to read around,
  so those atoms stay ⊥ (the extractor does that before calling here).

With every day read, :func:`partial_atom` equals the direct readout (tested on every cell).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..testbed.labels import (
    FIRST14,
    LAST7,
    LAST14,
    REST16,
    _safe_div,
    _where,
    bin_a1,
    bin_a2,
    bin_a3,
    bin_b2,
    bin_b3,
    bin_c2,
    bin_c3,
    bin_count_ctrl1,
    bin_count_ctrl2,
    bin_d1,
    bin_d2,
    bin_e1,
    bin_e2_ratio,
    bin_f1,
    bin_f2,
    bin_f3,
    bin_share70,
)
from ..testbed.questions import Q_INDEX, QIDS
from ..testbed.readout import NULL, readout
from ..testbed.schema import Testbed
from ..testbed.vocab import IS_WEEKEND, N_DAYS

__all__ = ["partial_atom"]

PRO, PLA, SLF, OBJ, DEV = range(5)
_WK = IS_WEEKEND[None, :]
#: objective/device cells whose rule cannot take a missing day as a dropped one
_OWN_RULE = {("C2", OBJ), ("C3", DEV), ("F2", DEV), ("F3", DEV)}


def _scaled(count: np.ndarray, n_read: np.ndarray, window: int) -> np.ndarray:
    """A count on ``n_read`` read days scaled to a ``window``-day window, rounded (0 if none
    read; the caller makes such an atom ⊥)."""
    return np.round(_safe_div(np.asarray(count) * window, n_read))


def _a1(tb, s, k):
    layer = tb.self_report if s == SLF else tb.planner
    return bin_a1(_scaled((k & (layer["duration_h"] >= 7)).sum(1), k.sum(1), N_DAYS))


def _a2(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        long_day = (~_WK | sr["worked_on_weekend"]) & (sr["hours"] > 9)
    else:
        long_day = tb.planner["hours_limit"] > 9
    return bin_a2(_scaled((k & long_day).sum(1), k.sum(1), N_DAYS))


def _a3(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        return bin_a3(_safe_div((sr["home_cooked"] * k).sum(1), (sr["meals"] * k).sum(1)))
    return bin_a3(_safe_div((tb.planner["home_priority"] & k).sum(1), k.sum(1)))


def _b2(tb, s, k):
    did = tb.self_report["did_exercise"] if s == SLF else tb.planner["ex_intended"]
    p = tb.profile["ex_days_per_week"]
    out = bin_b2(_safe_div((k & did).sum(1), k.sum(1) / 7) - p)
    return np.where(np.isnan(p), np.int8(3), out).astype(np.int8)


def _b3(tb, s, k):
    style = tb.profile["afterhours_style"]
    read = k & _WK
    w = (read & tb.self_report["worked_on_weekend"]).sum(1)
    out = bin_b3(style, w, read.sum(1))
    return np.where((style >= 0) & (read.sum(1) == 0), NULL, out).astype(np.int8)


def _c2(tb, s, k):
    pl, sr, ob = tb.planner, tb.self_report, tb.objective
    kw = k[:, LAST14]
    plan = pl["social_intent"][:, LAST14] & kw
    n_plan = plan.sum(1)
    if s == SLF:
        out = bin_c2((plan & (sr["n_act"][:, LAST14] >= 1)).sum(1), n_plan)
    elif s == PLA:
        out = np.full(len(n_plan), 2, np.int8)
    else:
        plan_avail = plan & ob["available"][:, LAST14]
        hit = plan_avail & (ob["social_event"][:, LAST14] | ob["pay_venue"][:, LAST14])
        out = np.where(plan_avail.sum(1) == 0, NULL, bin_c2(hit.sum(1), n_plan))
    edge = n_plan == 0
    return np.where(edge, np.where(kw.all(1), np.int8(3), NULL), out).astype(np.int8)


def _c3(tb, s, k):
    kw = k[:, LAST14]
    target = tb.planner["bedtime_min"][:, LAST14].astype(int)
    has_t = (target >= 0) & kw
    if s == SLF:
        bed, ok = tb.self_report["bedtime_min"], has_t
    else:
        bed, ok = tb.device["bedtime_min"], has_t & tb.device["available"][:, LAST14]
    d = bed[:, LAST14].astype(int) - target
    out = np.where(ok.sum(1) == 0, NULL,
                   bin_c3(((d > 20) & ok).sum(1), ((d < -20) & ok).sum(1), ok.sum(1)))
    edge = has_t.sum(1) == 0
    return np.where(edge, np.where(kw.all(1), np.int8(3), NULL), out).astype(np.int8)


def _d1(tb, s, k):
    x = tb.self_report["n_act"] if s == SLF else tb.planner["social_intent"]
    n1, n2 = k[:, FIRST14].sum(1), k[:, REST16].sum(1)
    delta = (_safe_div((x * k)[:, REST16].sum(1), n2) - _safe_div((x * k)[:, FIRST14].sum(1), n1))
    return np.where((n1 == 0) | (n2 == 0), NULL, bin_d1(delta)).astype(np.int8)


def _d2(tb, s, k):
    sr, pr = tb.self_report, tb.profile
    ph, pm = pr["home_cooked_mean"], pr["meals_per_day"]
    n = k.sum(1)
    delta = (np.abs(_safe_div((sr["home_cooked"] * k).sum(1), n) - ph)
             + np.abs(_safe_div((sr["meals"] * k).sum(1), n) - pm))
    return bin_d2(delta, ~(np.isnan(ph) | np.isnan(pm)))


def _e1(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        late = k & (sr["bedtime_min"] > 1440)
        work = late & sr["overtime"]
        social = late & ~sr["overtime"] & (sr["n_act"] >= 1)
        return bin_e1(late.sum(1), work.sum(1), social.sum(1))
    pl = tb.planner
    pln = k & (pl["bedtime_min"] > 1440)
    pw = pln & ((pl["hours_limit"] > 8) | ~pl["avoid_overtime"])
    return _where((pln.sum(1) == 0, 3), (_safe_div(pw.sum(1), pln.sum(1)) > 0.5, 0), default=2)


def _e2(tb, s, k):
    pl, sr = tb.planner, tb.self_report
    if s == SLF:
        sk = k & pl["ex_intended"] & ~sr["did_exercise"]
        caused = sk & ((sr["hours"] > 8.5) | sr["overtime"])
        return np.where(_scaled(sk.sum(1), k.sum(1), N_DAYS) <= 2, np.int8(1),
                        bin_e2_ratio(_safe_div(caused.sum(1), sk.sum(1)))).astype(np.int8)
    ni = (k & pl["ex_intended"]).sum(1)
    long_p = (k & pl["ex_intended"] & (pl["hours_limit"] > 8)).sum(1)
    return np.where(ni == 0, NULL, bin_e2_ratio(_safe_div(long_p, ni))).astype(np.int8)


def _f1(tb, s, k):
    intent = tb.planner["social_intent"]
    n = k.sum(1)
    if s == SLF:
        soc = k & (tb.self_report["n_act"] >= 1)
        return bin_f1(_scaled((soc & ~intent).sum(1), n, N_DAYS), soc.sum(1) > 0)
    n_int = _scaled((k & intent).sum(1), n, N_DAYS)
    return _where((n_int >= 10, 0), (n_int >= 5, 1), default=0)  # readout's planner rule


def _f2(tb, s, k):
    dv = tb.device
    if s == SLF:
        did = tb.self_report["did_exercise"]
        rest = k & ~(dv["available"] & dv["workout"])
        return bin_f2((rest & ~did).sum(1), (rest & did).sum(1))
    if s == DEV:
        unav = (k & ~dv["available"]).sum(1)
        wo = (k & dv["available"] & dv["workout"]).sum(1)
        return _where((unav == 0, 0), ((wo > 0) & (unav > 0), 1),
                      (_safe_div(unav, k.sum(1)) > 0.3, 2), default=0)
    n_ex = _scaled((k & tb.planner["ex_intended"]).sum(1), k.sum(1), N_DAYS)
    return _where((n_ex >= 15, 2), (n_ex >= 5, 1), default=0)


def _f3(tb, s, k):
    nr = k & ~tb.objective["available"]
    if s == SLF:
        worked = tb.self_report["hours"] > 0
    elif s == DEV:
        worked = tb.device["available"] & (tb.device["focus_min"] > 30)
    else:
        worked = tb.planner["hours_limit"] > 0
    return bin_f3((nr & worked).sum(1), (nr & ~worked).sum(1))


def _g1(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        ex = k & sr["did_exercise"]
        return bin_share70(_safe_div((ex & (sr["exercise_min"] >= 30)).sum(1), ex.sum(1)),
                           ex.sum(1) > 0)
    any_plan = (k & tb.planner["ex_intended"]).any(1)
    return np.where(any_plan, np.int8(2), NULL).astype(np.int8)


def _g2(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        soc = k & (sr["n_act"] >= 1)
        vol = soc & ~sr["supporting_other"]
        return bin_share70(_safe_div(vol.sum(1), soc.sum(1)), soc.sum(1) > 0)
    return np.where((k & tb.planner["social_intent"]).any(1), np.int8(2), np.int8(3))


def _ctrl1(tb, s, k):
    if s == SLF:
        sr = tb.self_report
        out = sr["meals"] > sr["home_cooked"]
    else:
        out = ~tb.planner["home_priority"]
    kw = k[:, LAST7]
    return bin_count_ctrl1(_scaled((out[:, LAST7] & kw).sum(1), kw.sum(1), 7))


def _ctrl2(tb, s, k):
    layer = tb.self_report if s == SLF else tb.planner
    kw = k[:, LAST7]
    return bin_count_ctrl2(_scaled(((layer["duration_h"][:, LAST7] < 6) & kw).sum(1),
                                   kw.sum(1), 7))


#: the self-report's and the planner's rules (and the objective/device exceptions) on read days
_RULES = {"A1": _a1, "A2": _a2, "A3": _a3, "B2": _b2, "B3": _b3, "C2": _c2, "C3": _c3,
          "D1": _d1, "D2": _d2, "E1": _e1, "E2": _e2, "F1": _f1, "F2": _f2, "F3": _f3,
          "G1": _g1, "G2": _g2, "Ctrl1": _ctrl1, "Ctrl2": _ctrl2}


def partial_atom(tb: Testbed, qid: str, source: int, keep: np.ndarray) -> np.ndarray:
    """The atom ``(qid, source)`` of every persona of ``tb`` from the days ``keep`` marks read.

    Parameters
    ----------
    tb : source arrays (the extractor's read-back testbed, or any testbed).
    qid : a question id.
    source : the source's index in ``SOURCES`` (0 profile … 4 device).
    keep : ``(P, 30)`` bool, True where the day was read for this atom (module docstring).

    Returns
    -------
    ndarray of shape (P,), int8 codes, ``-1`` ⊥. A profile atom reads no day and is the direct
    readout's. With ``keep`` all True this is ``readout(tb)[:, Q_INDEX[qid], source]``
    (the benchmark specification §2.9). Days outside the question's window are ignored; the
    caller decides what an atom with no read day in its window is (the extractor: ⊥).
    ``ValueError`` for an unknown question, a source outside 0–4 or a ``keep`` of another
    shape.
    """
    if qid not in Q_INDEX:
        raise ValueError(f"unknown question {qid!r} (expected one of {', '.join(QIDS)})")
    if source not in range(5):
        raise ValueError(f"source must be a source index 0-4, got {source!r}")
    keep = np.asarray(keep, dtype=bool)
    if keep.shape != (tb.n, N_DAYS):
        raise ValueError(f"keep must have shape ({tb.n}, {N_DAYS}), got {keep.shape}")
    q = Q_INDEX[qid]
    if source == PRO:
        return readout(tb)[:, q, PRO]
    if source in (OBJ, DEV) and (qid, source) not in _OWN_RULE:
        # the missing days dropped as a source drops a day (module docstring)
        masked = replace(tb, **{name: {**tb.layer(name),
                                       "available": tb.layer(name)["available"] & keep}
                                for name in ("objective", "device")})
        return readout(masked)[:, q, source]
    return np.asarray(_RULES[qid](tb, source, keep), dtype=np.int8)
