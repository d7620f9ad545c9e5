"""Explicit, optional normalisers of claim strings, applied before encoding.

Claims are categorical: "14:05" and "2:05 PM" are different claims unless a normaliser says
otherwise. Each normaliser is an object with a stated ``rule`` and an ``apply`` that maps the
claim and truth strings of a long table to new strings (never dropping a row). They run in the
order given to the importer.

* :class:`CaseWhitespace` — trim, collapse runs of white space to one space, ``casefold``.
* :class:`NumericTolerance` — numbers within ``tol`` of a cluster's opening value collapse to
  the cluster's representative (rule below); non-numbers untouched.
* :class:`TimeTolerance` — the same on clock times ``H:MM[:SS]`` with an optional am/pm
  (minutes since midnight, no wrap at midnight); Li et al. (PVLDB 2012) judged Flight times
  with a 10-minute tolerance, the default.

Tolerance rule (per item)
-------------------------
The distinct parsable claim strings of an item are sorted by value (then string). A cluster
**opens** at the smallest value not yet in a cluster and takes every value ``v`` with
``v ≤ opening + tol``; the next cluster opens at the first value beyond that. So no cluster
spans more than ``tol`` (no chaining). Every claim in a cluster becomes the cluster's
**representative**: its most claimed string (ties: smaller value, then smaller string).
A truth value is mapped to the representative of the cluster whose window
``[opening, opening + tol]`` contains it, and left as it is otherwise; truths never shape the
clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["CaseWhitespace", "NumericTolerance", "TimeTolerance", "cluster_by_tolerance",
           "parse_times"]

_TIME = (r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?\s*"
         r"(?P<ampm>[aApP])?\.?\s*(?:[mM]\.?)?\s*$")


def parse_times(values) -> np.ndarray:
    """Minutes since midnight of ``H:MM[:SS]`` strings with an optional a/am/a.m./p/pm/p.m.
    suffix (any case); NaN for anything else (hours > 23, minutes > 59, 0 or > 12 with am/pm).

    Examples
    --------
    >>> parse_times(["14:05", "2:05 PM", "12:00 a.m.", "C5", "25:00"]).tolist()
    [845.0, 845.0, 0.0, nan, nan]
    """
    s = pd.Series(np.asarray(values, dtype=object), dtype=object).astype(str)
    m = s.str.extract(_TIME)
    h = pd.to_numeric(m["h"], errors="coerce")
    mi = pd.to_numeric(m["m"], errors="coerce")
    sec = pd.to_numeric(m["s"], errors="coerce").fillna(0)
    ampm = m["ampm"].str.lower()
    has = ampm.notna()
    ok = h.notna() & (mi <= 59) & (sec <= 59)
    ok &= np.where(has, (h >= 1) & (h <= 12), h <= 23)
    h24 = np.where(has, (h % 12) + np.where(ampm == "p", 12, 0), h)
    out = h24 * 60 + mi + sec / 60
    return np.where(ok, out, np.nan).astype(float)


def _parse_numbers(values) -> np.ndarray:
    v = pd.to_numeric(pd.Series(np.asarray(values, dtype=object)), errors="coerce")
    v = v.to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isfinite(v), v, np.nan)


def _first_greater(item: np.ndarray, value: np.ndarray, q_item: np.ndarray,
                   q_value: np.ndarray) -> np.ndarray:
    """For units sorted by (item, value) and queries (item, value): the index of the first
    unit with (item, value) > (q_item, q_value), lexicographically (vectorised merge)."""
    n = item.size
    all_item = np.concatenate([item, q_item])
    all_value = np.concatenate([value, q_value])
    kind = np.concatenate([np.zeros(n, np.int8), np.ones(q_item.size, np.int8)])
    order = np.lexsort((kind, all_value, all_item))  # units before equal queries
    is_unit = kind[order] == 0
    units_before = np.cumsum(is_unit) - is_unit
    out = np.empty(q_item.size, np.int64)
    out[order[~is_unit] - n] = units_before[~is_unit]
    return out


def cluster_by_tolerance(item: np.ndarray, strings: np.ndarray, value: np.ndarray,
                         tol: float, truth_item: np.ndarray | None = None,
                         truth_strings: np.ndarray | None = None,
                         truth_value: np.ndarray | None = None):
    """Apply the module's tolerance rule. ``item`` codes, ``strings`` and parsed ``value``
    (NaN: not parsable, left alone) per claim; optional truths likewise. Returns the new
    claim strings (and the new truth strings when truths are given)."""
    if not tol >= 0:
        raise ValueError(f"tolerance must be a non-negative number, got {tol!r}")
    strings = np.asarray(strings, dtype=object)
    out = strings.copy()
    ok = ~np.isnan(value)
    new_truth = None if truth_strings is None else np.asarray(truth_strings, object).copy()
    if not ok.any():
        return out if new_truth is None else (out, new_truth)
    units = pd.DataFrame({"item": item[ok], "s": strings[ok], "v": value[ok]})
    g = units.groupby(["item", "s"], sort=False)
    u = g["v"].first().reset_index()
    u["n"] = g.size().to_numpy()
    u = u.sort_values(["item", "v", "s"], kind="stable").reset_index(drop=True)
    ui, uv = u["item"].to_numpy(np.int64), u["v"].to_numpy(float)
    nxt = _first_greater(ui, uv, ui, uv + tol)
    starts = np.flatnonzero(np.r_[True, ui[1:] != ui[:-1]])
    ends = np.r_[starts[1:], ui.size]
    is_open = np.zeros(ui.size, bool)
    frontier, frontier_end = starts, ends
    while frontier.size:  # one pass per cluster rank, all items at once
        is_open[frontier] = True
        step = nxt[frontier]
        keep = step < frontier_end
        frontier, frontier_end = step[keep], frontier_end[keep]
    cluster = np.cumsum(is_open) - 1
    s_rank = u["s"].rank(method="dense").to_numpy()
    pick = np.lexsort((s_rank, uv, -u["n"].to_numpy(), cluster))
    first = pick[np.r_[True, cluster[pick][1:] != cluster[pick][:-1]]]
    rep = np.empty(cluster.max() + 1, dtype=object)
    rep[cluster[first]] = u["s"].to_numpy(object)[first]
    unit_rep = pd.Series(rep[cluster], index=pd.MultiIndex.from_arrays([ui, u["s"]]))
    keys = pd.MultiIndex.from_arrays([item[ok], strings[ok]])
    out[ok] = unit_rep.reindex(keys).to_numpy(object)
    if new_truth is not None:
        t_ok = ~np.isnan(truth_value)
        ti, tv = np.asarray(truth_item, np.int64)[t_ok], truth_value[t_ok]
        opens = np.flatnonzero(is_open)
        # last opening (within the item) whose value ≤ the truth value
        j = _first_greater(ui[opens], uv[opens], ti, tv) - 1
        jj = j.clip(0)
        hit = (j >= 0) & (ui[opens][jj] == ti) & (tv <= uv[opens][jj] + tol)
        vals = new_truth[t_ok]
        vals[hit] = rep[cluster[opens[jj[hit]]]]
        new_truth[t_ok] = vals
        return out, new_truth
    return out


@dataclass(frozen=True)
class CaseWhitespace:
    """Trim, collapse white-space runs to one space, and casefold claims and truths."""

    rule: str = ("case and white space: trimmed, runs of white space collapsed to one space, "
                 "casefolded (claims and truths)")

    def apply(self, item, claim, truth):
        def f(x):
            s = pd.Series(np.asarray(x, dtype=object), dtype=object)
            return s.str.replace(r"\s+", " ", regex=True).str.strip().str.casefold() \
                .to_numpy(object)
        return f(claim), (None if truth is None else f(truth))


@dataclass(frozen=True)
class NumericTolerance:
    """Numbers within ``tol`` collapse per item (module rule); other claims untouched."""

    tol: float

    @property
    def rule(self) -> str:
        return (f"numeric tolerance {self.tol:g}: per item, numbers within {self.tol:g} of a "
                "cluster's opening (smallest) value become its most claimed string")

    def apply(self, item, claim, truth):
        return _apply(item, claim, truth, self.tol, _parse_numbers)


@dataclass(frozen=True)
class TimeTolerance:
    """Clock times within ``minutes`` collapse per item (module rule); others untouched."""

    minutes: float = 10.0

    @property
    def rule(self) -> str:
        return (f"time tolerance {self.minutes:g} min: per item, H:MM times within "
                f"{self.minutes:g} minutes of a cluster's opening (earliest) time become its "
                "most claimed string (no wrap at midnight)")

    def apply(self, item, claim, truth):
        return _apply(item, claim, truth, self.minutes, parse_times)


def _apply(item, claim, truth, tol, parse):
    claim = np.asarray(claim, dtype=object)
    value = parse(claim)
    if truth is None:
        return cluster_by_tolerance(item, claim, value, tol), None
    truth = np.asarray(truth, dtype=object)
    return cluster_by_tolerance(item, claim, value, tol, item, truth, parse(truth))
