"""Diagnostics that explain a fusion: per source, per pair of sources, per item.

* :func:`source_summary` — claims, coverage, accuracy on gold items with a Wilson interval
  (:func:`core.stats.wilson_interval`), the resolver's estimate (mean posterior of the
  source's claims) and its agreement with the fused answer;
* :func:`source_pairs` — overlap (items in common), agreement and conflict counts, and, given
  a result, agreement beyond chance and agreement on false values (the dependence signal of
  :mod:`core.fusion.dependence`);
* :func:`contradicted_items` — items whose fused answer no source claims;
* :func:`compare_at_coverage` — resolvers scored at one coverage, denominators shown;
* :func:`disagreement` — where two resolvers differ: items fixed, broken, and which sources
  each one followed ("why is the learned resolver no better than majority vote here?");
* :func:`what_if` — one item's posterior before and after switching sources off or
  flipping a claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from core.fusion._numeric import read_only
from core.fusion.claims import Claims
from core.fusion.result import FusionResult
from core.stats import wilson_interval

__all__ = ["SourcePairs", "SourceSummary", "WhatIf", "compare_at_coverage",
           "contradicted_items", "disagreement", "source_pairs", "source_summary", "what_if"]

#: Pair matrices are S × S; more sources than this are refused.
MAX_PAIR_SOURCES = 4000


@dataclass(frozen=True, eq=False)
class SourceSummary:
    """Per-source arrays, shape (S,); NaN where undefined (no gold claim, no result)."""

    sources: tuple[str, ...]
    n_claims: np.ndarray
    coverage: np.ndarray
    gold_claims: np.ndarray
    gold_correct: np.ndarray
    accuracy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    estimated: np.ndarray
    agreement: np.ndarray
    level: float


def source_summary(claims: Claims, result: FusionResult | None = None, *,
                   level: float = 0.95) -> SourceSummary:
    """Coverage, gold accuracy with its Wilson interval, and the resolver's estimate."""
    S = claims.n_sources
    n = np.bincount(claims.source, minlength=S)
    gold_rows = claims.gold[claims.item]
    g_n = np.bincount(claims.source[gold_rows], minlength=S)
    right = claims.claim[gold_rows] == claims.truth[claims.item[gold_rows]] if \
        claims.truth is not None else np.zeros(0, bool)
    g_k = np.bincount(claims.source[gold_rows], weights=right, minlength=S)
    lo, hi = wilson_interval(g_k, g_n, level=level)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(g_n > 0, g_k / g_n, np.nan)
    est = agree = np.full(S, np.nan)
    if result is not None:
        p = result.posterior[result.candidates.row]
        est = np.where(n > 0, np.bincount(claims.source, weights=p, minlength=S)
                       / np.maximum(n, 1), np.nan)
        same = claims.claim == result.labels[claims.item]
        agree = np.where(n > 0, np.bincount(claims.source, weights=same, minlength=S)
                         / np.maximum(n, 1), np.nan)
    return SourceSummary(sources=claims.sources, n_claims=read_only(n),
                         coverage=read_only(n / claims.n_items), gold_claims=read_only(g_n),
                         gold_correct=read_only(g_k), accuracy=read_only(acc),
                         low=read_only(np.where(g_n > 0, lo, np.nan)),
                         high=read_only(np.where(g_n > 0, hi, np.nan)), estimated=read_only(est),
                         agreement=read_only(agree), level=level)


@dataclass(frozen=True, eq=False)
class SourcePairs:
    """S × S matrices (zero diagonal where a pair makes no sense).

    ``shared``: items both claim on; ``same``: of those, items with the same claim;
    ``conflict`` = shared − same. Given a result: ``same_false`` the expected number of
    shared claims that are false (Σ (1 − P(v)) over same claims), ``false_chance`` its
    expectation for independent sources (shared · (1 − A₁)(1 − A₂)/n̄), and ``beyond_chance``
    = (r − p)/(1 − p), r = same/shared, p = A₁A₂ + (1 − A₁)(1 − A₂)/n̄, A the resolver's
    estimated accuracies (NaN where nothing is shared).
    """

    sources: tuple[str, ...]
    shared: np.ndarray
    same: np.ndarray
    conflict: np.ndarray
    same_false: np.ndarray | None
    false_chance: np.ndarray | None
    beyond_chance: np.ndarray | None


def source_pairs(claims: Claims, result: FusionResult | None = None) -> SourcePairs:
    """Overlap, agreement and conflict of every pair of sources (sparse products)."""
    S = claims.n_sources
    if S > MAX_PAIR_SOURCES:
        raise ValueError(f"{S:,} sources; pair matrices are capped at {MAX_PAIR_SOURCES:,}")
    cand = claims.candidates() if result is None else result.candidates
    ones = np.ones(claims.n_claims)
    Y = sp.csr_array((ones, (cand.row, claims.source)), shape=(cand.size, S))
    Z = sp.csr_array((ones, (claims.item, claims.source)), shape=(claims.n_items, S))
    shared = (Z.T @ Z).toarray()
    same = (Y.T @ Y).toarray()
    np.fill_diagonal(shared, 0)
    np.fill_diagonal(same, 0)
    sf = fc = bc = None
    if result is not None:
        p = result.posterior
        k_t = (Y.T @ Y.multiply(p[:, None]).tocsr()).toarray()
        np.fill_diagonal(k_t, 0)
        sf = np.maximum(same - k_t, 0.0)
        est = source_summary(claims, result).estimated
        a = np.clip(np.nan_to_num(est, nan=0.5), 1e-3, 1 - 1e-3)
        n_bar = float(np.maximum(cand.width - 1, 1).mean())
        a1, a2 = a[:, None], a[None, :]
        fc = shared * (1 - a1) * (1 - a2) / n_bar
        p_same = a1 * a2 + (1 - a1) * (1 - a2) / n_bar
        with np.errstate(invalid="ignore", divide="ignore"):
            bc = np.where(shared > 0, (same / shared - p_same) / (1 - p_same), np.nan)
        np.fill_diagonal(bc, np.nan)
    return SourcePairs(sources=claims.sources, shared=read_only(shared), same=read_only(same),
                       conflict=read_only(shared - same),
                       same_false=None if sf is None else read_only(sf),
                       false_chance=None if fc is None else read_only(fc),
                       beyond_chance=None if bc is None else read_only(bc))


def contradicted_items(claims: Claims, result: FusionResult) -> np.ndarray:
    """Items (boolean, (I,)) whose fused answer no source claims (only possible when the
    candidates reach beyond the claims: the global scope, or gold truths added)."""
    claimed = np.zeros(result.candidates.size, bool)
    claimed[result.candidates.row] = True
    best = result.candidates.lookup(np.arange(claims.n_items), result.labels)
    return (result.labels >= 0) & ((best < 0) | ~claimed[np.maximum(best, 0)])


def compare_at_coverage(results: Mapping[str, FusionResult], claims: Claims,
                        coverage: float, *, items: np.ndarray | None = None,
                        level: float = 0.95) -> dict[str, dict[str, float]]:
    """Each resolver answering only its ``ceil(coverage × n)`` most confident gold items
    (ties in confidence broken by item order), so all answer as many: accuracy, Wilson
    interval, answered, and the abstention denominator n."""
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage!r}")
    mask = claims.gold if items is None else claims.gold & np.asarray(items, bool)
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        raise ValueError("no item with a known truth to compare on")
    m = int(np.ceil(coverage * idx.size - 1e-12))
    out = {}
    for name, r in results.items():
        conf = np.where(r.labels[idx] >= 0, r.confidence[idx], -np.inf)
        top = idx[np.argsort(-conf, kind="stable")[:m]]
        top = top[r.labels[top] >= 0]
        k = int((r.labels[top] == claims.truth[top]).sum())
        lo, hi = wilson_interval(k, top.size, level=level)
        out[name] = {"n": int(idx.size), "answered": int(top.size), "correct": k,
                     "accuracy": k / top.size if top.size else float("nan"),
                     "low": float(lo), "high": float(hi),
                     "threshold": float(r.confidence[top].min()) if top.size else float("nan")}
    return out


def disagreement(claims: Claims, a: FusionResult, b: FusionResult) -> dict[str, object]:
    """Where ``b`` (say a learned resolver) answers differently from ``a`` (say majority
    vote): the items, which of them ``b`` fixed or broke (gold items), and per source how
    often its claim sided with ``b``'s answer or ``a``'s on those items."""
    changed = (a.labels != b.labels) & (a.labels >= 0) & (b.labels >= 0)
    out: dict[str, object] = {"changed": changed, "n_changed": int(changed.sum())}
    if claims.truth is not None:
        g = changed & claims.gold
        fixed = g & (b.labels == claims.truth) & (a.labels != claims.truth)
        broken = g & (a.labels == claims.truth) & (b.labels != claims.truth)
        out.update(fixed=fixed, broken=broken, n_fixed=int(fixed.sum()),
                   n_broken=int(broken.sum()))
    rows = changed[claims.item]
    S = claims.n_sources
    out["sided_with_b"] = np.bincount(claims.source[rows], minlength=S,
                                      weights=claims.claim[rows] == b.labels[claims.item[rows]])
    out["sided_with_a"] = np.bincount(claims.source[rows], minlength=S,
                                      weights=claims.claim[rows] == a.labels[claims.item[rows]])
    return out


@dataclass(frozen=True, eq=False)
class WhatIf:
    """One item's posterior over ``classes`` before and after a change (a flip to a new
    claim adds that class)."""

    item: int
    change: str
    classes: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray
    label_before: int
    label_after: int


def what_if(claims: Claims, resolve: Callable[[Claims], FusionResult], item: int, *,
            drop_sources: Sequence[int] = (), flip: tuple[int, str] | None = None) -> WhatIf:
    """Re-run ``resolve`` with ``drop_sources`` switched off and/or the claim of
    ``flip = (source, new claim)`` on ``item`` changed, and report the item's posterior.

    The whole table is refitted (an EM resolver re-learns every source), so the item moves
    both by its own claims and by what the change does to the sources' estimates.
    """
    if not 0 <= item < claims.n_items:
        raise ValueError(f"item must be in 0..{claims.n_items - 1}")
    base = resolve(claims)
    keep = ~np.isin(claims.source, np.asarray(drop_sources, np.int64))
    changed = claims
    parts = []
    if len(drop_sources):
        parts.append("off: " + ", ".join(claims.sources[s] for s in drop_sources))
    if flip is not None:
        s, value = flip
        row = np.flatnonzero((claims.item == item) & (claims.source == s))
        if row.size == 0:
            raise ValueError(f"source {claims.sources[s]!r} makes no claim on this item")
        classes = claims.classes if value in claims.classes else Claims.names(
            (*claims.classes, value))
        remap = np.array([classes.index(c) for c in claims.classes])
        claim = remap[claims.claim].copy()
        claim[row] = classes.index(value)
        truth = None if claims.truth is None else np.where(claims.truth >= 0,
                                                           remap[claims.truth], -1)
        changed = claims.replace(claim=claim, classes=classes, truth=truth)
        parts.append(f"{claims.sources[s]} says {value!r}")
    if len(drop_sources):
        kept_items = np.bincount(changed.item[keep], minlength=claims.n_items)
        if kept_items[item] == 0:
            raise ValueError("switching those sources off leaves the item without a claim")
        if (kept_items == 0).any():
            raise ValueError("switching those sources off leaves some item without a claim")
        changed = changed.subset_rows(keep)
    after = resolve(changed)
    idx = np.array([changed.classes.index(c) for c in claims.classes])
    before_vec = np.zeros(len(changed.classes))
    before_vec[idx] = base.posterior_matrix()[item]
    label_before = int(idx[base.labels[item]]) if base.labels[item] >= 0 else -1
    return WhatIf(item=item, change="; ".join(parts) or "no change", classes=changed.classes,
                  before=read_only(before_vec), after=read_only(after.posterior_matrix()[item]),
                  label_before=label_before, label_after=int(after.labels[item]))
