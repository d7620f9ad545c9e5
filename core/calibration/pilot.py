"""Simulated human pilots for TriSource-Restore (seed 003 §4 "Pilot validation", §5.5, Alg. 1).

Sources: seed 003 §3 Eq. 3, §5.5 (Table 5: 50 usable labels, 5,000 repetitions; 50 *attempted*
annotations with insufficient judgements consuming budget), Algorithm 1 (select → repair →
escalate → gate); the label-source notes; calibration-notes §5.5–5.7.

Conventions
-----------
* Rules: A = ``rule_a`` (default native), B = ``rule_b`` (default EG); the target is
  ``Δ_Y = W⁻¹ Σ w_i d_i(Y_i)`` with ``d = S(B) − S(A)`` (Brier), the gap on the *finite* frame
  (calibration-notes §5.6). Positive Δ favours A.
* Designs (all probability samples of the frame, frozen before any Y is seen):

  - ``"stratified"``: strata = (unmatched?, rule-A confidence ≥ ``high_threshold``); SRS without
    replacement in each; Neyman-type allocation with the frozen size measure
    ``N_h·sqrt(mean_h(w²(c_A − c_B)²))·sqrt(p_h(1 − p_h))`` where ``p_h`` is a prior label
    disagreement rate (``prior_unmatched_true`` for unmatched, ``prior_matched_false`` for
    matched strata) — so unmatched high-confidence items are prioritised (Algorithm 1 step 1) —
    with at least 2 per stratum when the budget allows, largest-remainder rounding.
  - ``"srs"``: one stratum.
  - ``"pps"``: draws with replacement (Hansen–Hurwitz) with probability ∝ the same size measure
    per item.

* Budget: ``budget_kind="attempted"`` (default) counts attempted annotations; each attempt is
  independently insufficient with probability ``insufficient_rate`` (missing completely at
  random) and consumes budget. Inclusion probabilities are re-based on the usable counts
  (``ρ = n'_h / N_h``; ``n'·p_i`` for PPS), which is exact conditionally on those counts under
  MCAR. ``budget_kind="usable"`` fixes the number of usable labels (Table 5 panel A).
* Estimators per repetition: human-only (β = 0) and TriSource-Restore (transfer β), both Eq. 3
  with the design-based variance of :func:`core.calibration.restore.design_variance` (strata of
  the design; item-level units unless ``clustered_variance=True``, then store clusters) and a
  Student-t critical value at the design degrees of freedom (``interval="normal"`` for z).
* Transfer domain: β (and the repair's auxiliary truth model) are learned on ``source_frame``,
  by default the sister scenario ``transfer_config(config)`` of the frame's stored config —
  never on the pilot itself, so Eq. 3 stays unbiased.
* Decisions: *escalate* if the interval contains 0 or fewer than ``min_clusters`` clusters were
  sampled (or a stratum was left without usable labels); a *false termination* is a
  non-escalated interval that excludes 0 on the wrong side of Δ_Y.
* Algorithm 1 one pilot at a time (looks, escalation, the deployment gate) is in
  :mod:`core.calibration.pilot_walk`.
* Held-out repair (Table 5 panel B): scenarios are split into two folds (alternating by sorted
  scenario id); maps are fitted on one fold (its frame rows and its pilot labels only) and
  scored by truth-Brier on the other; the two held-out halves are pooled with population
  weights.
"""

from __future__ import annotations

import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import expit

from core.calibration._checks import check_level
from core.calibration.recalibration import platt_fit
from core.calibration.restore import (
    REPAIR_FITTED,
    TransferBeta,
    _indicator,
    critical_value,
    design_variance,
    factored_variance,
    fit_auxiliary_model,
    fit_monotone_batch,
    fit_monotone_targets,
    fit_transfer_beta,
    paired_differences,
    safe_logit,
)
from core.calibration.scenario import (
    generate_scenario,
    judge_columns,
    scenario_from_attrs,
    transfer_config,
)

__all__ = [
    "FrameArrays",
    "PilotSimulation",
    "budget_curve",
    "design_allocation",
    "frame_arrays",
    "judge_sensitivity",
    "resolve_beta",
    "simulate_pilots",
]

Design = Literal["stratified", "srs", "pps"]


# --------------------------------------------------------------------------------------------
# frame preparation


@dataclass(frozen=True, eq=False)
class FrameArrays:
    """Arrays of a scenario frame that the pilot machinery needs (read-only)."""

    c_a: np.ndarray
    c_b: np.ndarray
    y: np.ndarray
    z: np.ndarray
    q: np.ndarray  # (n, K)
    w: np.ndarray
    cluster: np.ndarray
    scenario: np.ndarray
    item_id: np.ndarray
    d_y: np.ndarray
    d_z: np.ndarray
    x: np.ndarray  # (n, K)

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def delta_y(self) -> float:
        return float(self.w @ self.d_y / self.w.sum())

    @property
    def delta_z(self) -> float:
        return float(self.w @ self.d_z / self.w.sum())


def frame_arrays(frame: pd.DataFrame, *, rule_a: str = "native", rule_b: str = "eg") -> FrameArrays:
    """Extract rules, labels, judges, weights and paired differences from a scenario frame.

    Required columns: ``rule_a``, ``rule_b``, ``y``, ``z``, ``weight``, ``cluster``,
    ``scenario`` and judges ``q_1 .. q_K`` (K may be 0).
    """
    missing = [c for c in (rule_a, rule_b, "y", "z", "weight", "cluster", "scenario")
               if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}")
    a = frame[rule_a].to_numpy(float)
    b = frame[rule_b].to_numpy(float)
    y = frame["y"].to_numpy(float)
    z = frame["z"].to_numpy(float)
    qc = judge_columns(frame)
    q = frame[qc].to_numpy(float) if qc else np.zeros((len(frame), 0))
    d_y = paired_differences(a, b, y)
    d_z = paired_differences(a, b, z)
    x = paired_differences(a, b, q) - d_z[:, None] if qc else np.zeros((len(frame), 0))
    item = frame["item_id"].to_numpy() if "item_id" in frame.columns else np.arange(len(frame))
    arrs = dict(c_a=a, c_b=b, y=y, z=z, q=q, w=frame["weight"].to_numpy(float),
                cluster=frame["cluster"].to_numpy(), scenario=frame["scenario"].to_numpy(),
                item_id=item, d_y=d_y, d_z=d_z, x=x)
    for v in arrs.values():
        v.setflags(write=False)
    return FrameArrays(**arrs)


def _source_frame(frame: pd.DataFrame, source_frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """The transfer domain: ``source_frame`` or the sister scenario of ``frame.attrs``."""
    if source_frame is not None:
        return source_frame
    cfg = scenario_from_attrs(frame)
    return None if cfg is None else generate_scenario(transfer_config(cfg))


def resolve_beta(frame: pd.DataFrame, *, beta=None, source_frame: pd.DataFrame | None = None,
                 rule_a: str = "native", rule_b: str = "eg",
                 gate: float = 0.05) -> tuple[np.ndarray, str, TransferBeta | None]:
    """The fixed β of Eq. 3: given, or transfer-learned on another domain with the 5 % gate.

    Order: an explicit ``beta`` is used as is (checked against β ≥ 0, Σβ ≤ 1); otherwise β is
    learned by :func:`core.calibration.restore.fit_transfer_beta` on ``source_frame``; without
    one, on ``generate_scenario(transfer_config(config))`` where ``config`` is the scenario
    stored in ``frame.attrs`` (the "other audited dataset").

    Returns
    -------
    beta : ndarray, shape (K,)
    origin : str
        "fixed", "transfer" or "transfer (gate failed: β = 0)".
    fit : TransferBeta or None
    """
    k = len(judge_columns(frame))
    if beta is not None:
        b = np.atleast_1d(np.asarray(beta, float))
        if b.shape != (k,):
            raise ValueError(f"beta must have {k} entries (one per judge), got {b.shape}")
        if np.any(b < 0) or b.sum() > 1 + 1e-12 or not np.all(np.isfinite(b)):
            raise ValueError("beta must satisfy beta_k >= 0 and sum(beta) <= 1")
        return b, "fixed", None
    src_frame = _source_frame(frame, source_frame)
    if src_frame is None:
        raise ValueError("pass beta or source_frame (the frame carries no scenario config "
                         "to derive a transfer domain from)")
    src = frame_arrays(src_frame, rule_a=rule_a, rule_b=rule_b)
    if src.x.shape[1] != k:
        raise ValueError("source_frame must have the same judges as frame")
    fit = fit_transfer_beta(src.d_y, src.d_z, src.x, weights=src.w, gate=gate)
    origin = "transfer" if fit.passed else "transfer (gate failed: β = 0)"
    return np.asarray(fit.beta, float), origin, fit


def _repair_aux(frame: pd.DataFrame, fa: FrameArrays, beta: np.ndarray,
                source_frame: pd.DataFrame | None, repair_aux: str) -> tuple[np.ndarray, str]:
    """Full-frame auxiliary label of the monotone repair and where it came from.

    ``"transfer"``: a truth model ``P(Y | Z, Q)`` learned on the transfer domain
    (:func:`core.calibration.restore.fit_auxiliary_model`); ``"beta"``: the Eq. 3 auxiliary
    label ``Z + (Q − Z)β``; ``"auto"``: transfer when a source domain is available.
    """
    if repair_aux not in ("auto", "transfer", "beta"):
        raise ValueError("repair_aux must be 'auto', 'transfer' or 'beta'")
    if repair_aux != "beta":
        src_frame = _source_frame(frame, source_frame)
        if src_frame is not None:
            qc = judge_columns(src_frame)
            model = fit_auxiliary_model(src_frame["y"].to_numpy(float),
                                        src_frame["z"].to_numpy(float),
                                        src_frame[qc].to_numpy(float),
                                        weights=src_frame["weight"].to_numpy(float))
            return model.predict(fa.z, fa.q), "transfer truth model P(Y | Z, Q)"
        if repair_aux == "transfer":
            raise ValueError("repair_aux='transfer' needs a source domain")
    aux = fa.z + ((fa.q - fa.z[:, None]) @ beta if beta.size else 0.0)
    return np.clip(aux, 0.0, 1.0), "Z + (Q - Z)·beta"


# --------------------------------------------------------------------------------------------
# designs


def _strata(fa: FrameArrays, high_threshold: float) -> np.ndarray:
    """0 matched-low, 1 matched-high, 2 unmatched-low, 3 unmatched-high."""
    return (2 * (fa.z == 0) + (fa.c_a >= high_threshold)).astype(np.int64)


def _size_measure(fa: FrameArrays, prior_unmatched_true: float,
                  prior_matched_false: float) -> np.ndarray:
    p = np.where(fa.z == 0, prior_unmatched_true, prior_matched_false)
    return fa.w * np.abs(fa.c_a - fa.c_b) * np.sqrt(p * (1.0 - p))


def _stratified_design(fa: FrameArrays, design: str, high_threshold: float,
                       prior_unmatched_true: float, prior_matched_false: float):
    """Strata, their sizes and allocation priorities of the stratified or SRS design.

    Priority ∝ N_h · √(mean size²) in the stratum (the size measure's RMS), which
    :func:`design_allocation` turns into the per-stratum budget (Algorithm 1 step 1).
    """
    if design == "stratified":
        strata = _strata(fa, high_threshold)
    elif design == "srs":
        strata = np.zeros(fa.n, np.int64)
    else:
        raise ValueError(f"design must be 'stratified', 'srs' or 'pps', got {design!r}")
    n_h = np.bincount(strata, minlength=strata.max() + 1)
    size = _size_measure(fa, prior_unmatched_true, prior_matched_false)
    prio = np.sqrt(np.bincount(strata, weights=size**2, minlength=n_h.size)
                   / np.maximum(n_h, 1)) * n_h
    return strata, n_h, prio


def design_allocation(budget: int, sizes, priority, *, min_per: int = 2) -> np.ndarray:
    """Allocate ``budget`` draws to strata of ``sizes`` ∝ ``priority`` (capped at the size).

    Every non-empty stratum first gets ``min(min_per, N_h)`` if the budget allows; the rest is
    spread ∝ priority by largest remainders, never exceeding ``N_h``.
    """
    sizes = np.asarray(sizes, np.int64)
    pr = np.maximum(np.asarray(priority, float), 0.0)
    budget = int(min(budget, sizes.sum()))
    alloc = np.minimum(sizes, min_per)
    if alloc.sum() > budget:  # not enough for the minimum: go by priority
        alloc = np.zeros_like(sizes)
        for h in np.argsort(-pr, kind="stable"):
            take = min(sizes[h], min_per, budget - alloc.sum())
            alloc[h] = take
        return alloc
    while alloc.sum() < budget:
        room = sizes - alloc
        open_ = room > 0
        left = budget - alloc.sum()
        p = np.where(open_, pr, 0.0)
        if p.sum() <= 0:
            p = open_.astype(float)
        share = left * p / p.sum()
        add = np.minimum(np.floor(share).astype(np.int64), room)
        rem = left - add.sum()
        if rem > 0:
            frac = np.where(open_ & (add < room), share - np.floor(share), -1.0)
            for h in np.argsort(-frac, kind="stable")[:rem]:
                if frac[h] >= 0:
                    add[h] += 1
        if add.sum() == 0:
            break
        alloc += add
    return alloc


def _row_bincount(vals: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """Per-row sums of ``vals`` (R, n) over the ``k`` groups of ``codes`` (n,) → (R, k)."""
    return vals.astype(float) @ _indicator(codes, k)


def _smallest_per_stratum(keys: np.ndarray, strata: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """Per row, mark the ``alloc[h]`` items of smallest key within each stratum ``h``.

    With i.i.d. uniform keys this is a simple random sample without replacement of
    ``alloc[h]`` items per stratum in every row. Equal to ranking the keys within each stratum
    (ties have probability 0), with one partial sort per stratum instead of a full sort.
    A stratum whose items are contiguous columns (one stratum: every column) is read and
    written through a slice rather than copied out and scattered back by index.
    """
    out = np.zeros(keys.shape, bool)
    for h, a in enumerate(alloc):
        cols = np.flatnonzero(strata == h)
        if a <= 0 or cols.size == 0:
            continue
        if a >= cols.size:
            out[:, cols] = True
            continue
        if cols[-1] - cols[0] + 1 == cols.size:
            cols = slice(int(cols[0]), int(cols[-1]) + 1)
        kh = keys[:, cols]
        out[:, cols] = kh <= np.partition(kh, a - 1, axis=1)[:, a - 1:a]
    return out


def _searchsorted_unit(cdf: np.ndarray, u: np.ndarray, *, buckets: int = 16384) -> np.ndarray:
    """``np.searchsorted(cdf, u)`` (left side) for ``u`` in [0, 1), through a bucket table.

    The number of ``cdf`` entries below ``u`` lies between the counts below the edges
    ``b/buckets`` and ``(b + 1)/buckets`` of ``u``'s bucket (exact in floating point: the
    bucket count is a power of two); where the two agree that is the answer, and only the
    draws in the few buckets that contain a ``cdf`` entry are searched. The same indices as
    ``np.searchsorted``, several times faster for a (reps, budget) array of draws.
    """
    first = np.searchsorted(cdf, np.arange(buckets + 1) / buckets)
    below, ambiguous = first[:-1], first[:-1] != first[1:]
    b = (u * buckets).astype(np.int64)
    np.minimum(b, buckets - 1, out=b)
    out = below[b]
    amb = ambiguous[b]
    if amb.any():
        out[amb] = np.searchsorted(cdf, u[amb])
    return out


@dataclass(frozen=True, eq=False)
class _Draws:
    counts: np.ndarray  # (R, n) usable draws (0/1 without replacement)
    attempted: np.ndarray  # (R,) attempted annotations
    scale: np.ndarray  # (R, H) ρ_ri = scale[r, strata_i] · q_i
    q: np.ndarray  # (n,)
    strata: np.ndarray  # (n,)
    with_replacement: bool
    incomplete: np.ndarray  # (R,) a stratum with allocation got no usable label

    @property
    def rho(self) -> np.ndarray:
        """(R, n) inclusion probabilities / expected draw counts (1 where unused)."""
        return self.scale[:, self.strata] * self.q[None, :]


def _draw(fa: FrameArrays, rng: np.random.Generator, *, reps: int, budget: int, design: str,
          budget_kind: str, insufficient_rate: float, high_threshold: float,
          prior_unmatched_true: float, prior_matched_false: float) -> _Draws:
    n = fa.n
    if design == "pps":
        size = _size_measure(fa, prior_unmatched_true, prior_matched_false)
        p = size + 1e-3 * size.mean() + 1e-12
        p = p / p.sum()
        idx = np.minimum(_searchsorted_unit(np.cumsum(p), rng.random((reps, budget))), n - 1)
        usable = (np.ones((reps, budget), bool) if budget_kind == "usable"
                  else rng.random((reps, budget)) >= insufficient_rate)
        key = (np.arange(reps)[:, None] * n + idx)[usable]
        counts = np.bincount(key, minlength=reps * n).reshape(reps, n)
        n_use = counts.sum(1)
        return _Draws(counts=counts, attempted=np.full(reps, budget),
                      scale=np.maximum(n_use, 1).astype(float)[:, None], q=p,
                      strata=np.zeros(n, np.int64), with_replacement=True,
                      incomplete=n_use < 2)
    strata, n_h, prio = _stratified_design(fa, design, high_threshold, prior_unmatched_true,
                                           prior_matched_false)
    alloc = design_allocation(budget, n_h, prio)
    attempted = _smallest_per_stratum(rng.random((reps, n)), strata, alloc)
    if budget_kind == "usable":
        usable = attempted
    else:
        usable = attempted & (rng.random((reps, n)) >= insufficient_rate)
    use_h = _row_bincount(usable, strata, n_h.size)  # (R, H) usable labels per stratum
    incomplete = np.any((alloc[None, :] > 0) & (use_h == 0), axis=1)
    return _Draws(counts=usable.astype(np.int64), attempted=attempted.sum(1),
                  scale=np.maximum(use_h, 1.0), q=1.0 / n_h[strata], strata=strata,
                  with_replacement=False, incomplete=incomplete)


def _estimate(fa: FrameArrays, dr: _Draws, beta: np.ndarray, level: float, interval: str,
              clusters):
    W = fa.w.sum()
    e = fa.d_y - fa.d_z - (fa.x @ beta if beta.size else 0.0)
    base = fa.delta_z + (float(fa.w @ fa.x @ beta) / W if beta.size else 0.0)
    if clusters is None:  # ρ factors: t_ri = w_i e_i / (W q_i) / scale_r,h(i)
        total, var, short, df = factored_variance(fa.w * e / (W * dr.q), dr.counts, dr.scale,
                                                  strata=dr.strata,
                                                  with_replacement=dr.with_replacement)
        est = base + total
    else:
        t = (fa.w * e)[None, :] / (W * dr.rho)
        est = base + (dr.counts * t).sum(1)
        var, short, df = design_variance(t, dr.counts, strata=dr.strata, clusters=clusters,
                                         with_replacement=dr.with_replacement)
    # no interval where the variance is not estimable: a stratum with one unit, or fewer
    # than two sampled units carrying a non-zero residual (e.g. every sampled Y equals Z)
    informative = dr.counts @ (np.abs(e) > 1e-15).astype(float)
    census = ~np.asarray(dr.with_replacement) & (dr.counts.sum(1) == fa.n)
    ok = census | (~short & (informative >= 2) & (var > 0))
    se = np.where(ok, np.sqrt(var), np.nan)
    q = critical_value(level, df if interval == "t" else None)
    return est, se, est - q * se, est + q * se, ~ok


# --------------------------------------------------------------------------------------------
# held-out repair (Table 5 panel B)


def _folds(scenario: np.ndarray) -> np.ndarray:
    ids = np.unique(scenario)
    fold_of = {s: i % 2 for i, s in enumerate(ids)}
    return np.array([fold_of[s] for s in scenario], np.int64)


def _heldout(fa: FrameArrays, dr: _Draws, aux: np.ndarray, favours_b: np.ndarray) -> dict:
    """Held-out truth-Brier of the maps of Table 5 panel B, per repetition where it varies."""
    R, n = dr.counts.shape
    fold = _folds(fa.scenario)
    if np.unique(fold).size < 2:
        raise ValueError("held-out repair needs at least two scenarios")
    W = fa.w.sum()
    corr = dr.counts * (fa.y - aux)[None, :] / dr.rho  # IPW correction per rep
    ipw = dr.counts * fa.w[None, :] / dr.rho  # pilot-only weights per rep
    sse_tri = np.zeros(R)
    sse_pilot = np.zeros(R)
    fallback = np.zeros(R, bool)  # a fold's repair used the fallback of fit_monotone_targets
    # rules selected by the reference and by full truth (full frame, not per rep)
    rz = [np.average((c - fa.z) ** 2, weights=fa.w) for c in (fa.c_a, fa.c_b)]
    ry = [np.average((c - fa.y) ** 2, weights=fa.w) for c in (fa.c_a, fa.c_b)]
    rules = (fa.c_a, fa.c_b)
    ref_rule = rules[int(rz[1] < rz[0])]
    y_rule = rules[int(ry[1] < ry[0])]
    sse_zplatt = 0.0
    sse_fully = 0.0
    for k in (0, 1):
        tr, te = fold != k, fold == k
        wtr, wte = fa.w[tr], fa.w[te]
        v = wtr / wtr.sum()
        s_ref = safe_logit(ref_rule)
        mp = platt_fit(s_ref[tr], fa.z[tr], weights=wtr)
        sse_zplatt += float(wte @ (mp.predict(s_ref[te]) - fa.y[te]) ** 2)
        s_y = safe_logit(y_rule)
        mp = platt_fit(s_y[tr], fa.y[tr], weights=wtr)
        sse_fully += float(wte @ (mp.predict(s_y[te]) - fa.y[te]) ** 2)
        for which, c in enumerate(rules):
            reps = np.flatnonzero(favours_b == bool(which))
            if reps.size == 0:
                continue
            x = safe_logit(c)
            xtr, xte = x[tr], x[te]
            targets = aux[tr][None, :] + corr[np.ix_(reps, np.flatnonzero(tr))]
            a, g, status = fit_monotone_targets(
                xtr, v, targets, aux[tr],
                n_labels=dr.counts[np.ix_(reps, np.flatnonzero(tr))].sum(1))
            fallback[reps] |= status != REPAIR_FITTED
            p = expit(a[:, None] + g[:, None] * xte[None, :])
            sse_tri[reps] += np.einsum("rn,n->r", (p - fa.y[te]) ** 2, wte)
            # pilot-only: IPW logistic Platt (γ ≥ 0) on the fold's pilot labels alone
            vp = ipw[np.ix_(reps, np.flatnonzero(tr))] / wtr.sum()
            picked = vp > 0  # gather each repetition's pilot items (few) before fitting
            m_max = max(int(picked.sum(1).max()), 1)
            idx = np.argsort(~picked, axis=1, kind="stable")[:, :m_max]
            vg = np.take_along_axis(vp, idx, axis=1)
            xg, yg = xtr[idx], fa.y[tr][idx]
            stp = (vg * yg).sum(1)
            stxp = (vg * yg * xg).sum(1)
            empty = vg.sum(1) <= 0
            a, g, _ = fit_monotone_batch(xg, vg, stp, stxp)
            a = np.where(empty, 0.0, a)
            g = np.where(empty, 1.0, g)
            p = expit(a[:, None] + g[:, None] * xte[None, :])
            sse_pilot[reps] += np.einsum("rn,n->r", (p - fa.y[te]) ** 2, wte)
    restored_raw = np.where(favours_b, ry[1], ry[0])
    return dict(ref_raw=float(ry[int(rz[1] < rz[0])]), ref_zplatt=sse_zplatt / W,
                restored_raw=restored_raw, pilot_only=sse_pilot / W, trisource=sse_tri / W,
                full_y=sse_fully / W, repair_fallback=fallback)


# --------------------------------------------------------------------------------------------
# simulate_pilots


def _ro(a) -> np.ndarray:
    a = np.asarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class PilotSimulation:
    """Per-repetition results of :func:`simulate_pilots` and their summaries.

    Attributes
    ----------
    budget, reps, design, budget_kind, insufficient_rate, level, min_clusters : settings.
    beta : tuple[float, ...]
        β used by TriSource-Restore; ``beta_origin`` says where it came from.
    repair_aux : str
        Which full-frame auxiliary label the held-out monotone repair used.
    delta_y, delta_z : float
        Full-frame truth and reference gaps (rule B minus rule A).
    n_usable, n_attempted, n_clusters : ndarray, shape (reps,)
    est_human, se_human, lo_human, hi_human : ndarray, shape (reps,)
        Human-only (β = 0) Eq. 3.
    est_tri, se_tri, lo_tri, hi_tri : ndarray, shape (reps,)
        TriSource-Restore.
    escalate_human, escalate_tri : ndarray of bool, shape (reps,)
    heldout : dict or None
        Table 5 panel B: scalars ``ref_raw, ref_zplatt, full_y`` and per-rep arrays
        ``restored_raw, pilot_only, trisource`` and ``repair_fallback`` (bool: a fold's repair
        used the fallback of :func:`core.calibration.restore.fit_monotone_targets`).
    elapsed_s : float
        Wall time of the call (excluded from comparisons).
    """

    budget: int
    reps: int
    design: str
    budget_kind: str
    insufficient_rate: float
    level: float
    min_clusters: int
    beta: tuple[float, ...]
    beta_origin: str
    repair_aux: str
    delta_y: float
    delta_z: float
    n_usable: np.ndarray
    n_attempted: np.ndarray
    n_clusters: np.ndarray
    est_human: np.ndarray
    se_human: np.ndarray
    lo_human: np.ndarray
    hi_human: np.ndarray
    est_tri: np.ndarray
    se_tri: np.ndarray
    lo_tri: np.ndarray
    hi_tri: np.ndarray
    escalate_human: np.ndarray
    escalate_tri: np.ndarray
    heldout: dict | None
    elapsed_s: float = field(default=0.0, compare=False)

    def _metrics(self, est, lo, hi, esc) -> dict:
        d = self.delta_y
        wrong = (hi < 0) if d > 0 else (lo > 0) if d < 0 else (hi < 0) | (lo > 0)
        has = np.isfinite(lo) & np.isfinite(hi)  # pilots with an estimable variance
        nan = float("nan")
        return dict(
            rmse=float(np.sqrt(np.mean((est - d) ** 2))),
            bias=float(np.mean(est - d)),
            mean_width=float(np.mean(hi[has] - lo[has])) if has.any() else nan,
            coverage=float(np.mean((lo[has] <= d) & (d <= hi[has]))) if has.any() else nan,
            # a pilot without an interval covers nothing: the share of all pilots that end
            # with an interval containing Δ_Y (= coverage × (1 − no_interval))
            coverage_all=float(np.mean(has & (lo <= d) & (d <= hi))),
            p_correct_direction=float(np.mean(np.sign(est) == np.sign(d))),
            false_termination=float(np.mean(~esc & wrong)),
            escalation=float(np.mean(esc)),
            no_interval=float(np.mean(~has)),
        )

    def summary(self) -> pd.DataFrame:
        """Table 5 panel A: one row per estimator (human_only, trisource).

        ``coverage`` is over the pilots that gave an interval, ``no_interval`` the share that
        gave none (variance not estimable) and ``coverage_all`` the share of *all* pilots whose
        interval contains Δ_Y, so ``coverage_all = coverage · (1 − no_interval)``.
        """
        rows = []
        for name, est, lo, hi, esc in (
                ("human_only", self.est_human, self.lo_human, self.hi_human, self.escalate_human),
                ("trisource", self.est_tri, self.lo_tri, self.hi_tri, self.escalate_tri)):
            rows.append(dict(estimator=name, budget=self.budget, **self._metrics(est, lo, hi, esc),
                             mean_usable=float(self.n_usable.mean()),
                             mean_attempted=float(self.n_attempted.mean()),
                             mean_clusters=float(self.n_clusters.mean())))
        out = pd.DataFrame(rows)
        out["width_reduction"] = 1.0 - out["mean_width"] / out["mean_width"].iloc[0]
        return out

    def heldout_summary(self) -> pd.DataFrame | None:
        """Table 5 panel B: mean held-out truth-Brier of each map (one row)."""
        if self.heldout is None:
            return None
        return pd.DataFrame([{k: float(np.mean(v)) for k, v in self.heldout.items()}])


def simulate_pilots(frame: pd.DataFrame, *, budget: int = 50, reps: int = 5000,
                    design: Design = "stratified",
                    budget_kind: Literal["attempted", "usable"] = "attempted",
                    insufficient_rate: float = 0.08, beta=None,
                    source_frame: pd.DataFrame | None = None, seed: int = 0,
                    level: float = 0.95, min_clusters: int = 8,
                    clustered_variance: bool = False, interval: Literal["t", "normal"] = "t",
                    heldout: bool = True,
                    repair_aux: Literal["auto", "transfer", "beta"] = "auto",
                    high_threshold: float = 0.8, prior_unmatched_true: float = 0.7,
                    prior_matched_false: float = 0.1, rule_a: str = "native",
                    rule_b: str = "eg") -> PilotSimulation:
    """Simulate ``reps`` independent human pilots and the two Eq. 3 estimators on each.

    Parameters
    ----------
    frame : DataFrame
        A scenario frame (:func:`core.calibration.scenario.generate_scenario`).
    budget : int
        Annotations per pilot (attempted or usable, see ``budget_kind``).
    reps : int
        Repetitions, drawn as ``(reps, n)`` arrays (no Python loop over repetitions).
    design : {"stratified", "srs", "pps"}
    budget_kind : {"attempted", "usable"}
    insufficient_rate : float
        Probability that an attempted annotation is insufficient (MCAR).
    beta, source_frame : see :func:`resolve_beta`.
    seed : int
        Seed of the ``numpy.random.Generator``; the same seed gives identical results.
    level : float
    min_clusters : int
        Escalate below this many sampled clusters (Algorithm 1 step 5: 8).
    clustered_variance : bool
        Cluster the variance by ``frame['cluster']`` (stores) instead of by item.
    interval : {"t", "normal"}
        Critical value (see :func:`core.calibration.restore.trisource_restore`).
    heldout : bool
        Also compute the held-out Brier of Table 5 panel B.
    repair_aux : {"auto", "transfer", "beta"}
        Full-frame auxiliary label of the monotone repair: a truth model ``P(Y | Z, Q)``
        learned on the transfer domain (``"transfer"``; ``"auto"`` uses it whenever a source
        domain is available) or the Eq. 3 label ``Z + (Q − Z)β`` (``"beta"``).
    high_threshold, prior_unmatched_true, prior_matched_false : design constants (module
        docstring).
    rule_a, rule_b : column names of rules A and B.

    Returns
    -------
    PilotSimulation
    """
    t0 = time.perf_counter()
    level = check_level(level)
    if int(budget) < 2 or int(reps) < 1:
        raise ValueError("need budget >= 2 and reps >= 1")
    if not 0.0 <= insufficient_rate < 1.0:
        raise ValueError("insufficient_rate must be in [0, 1)")
    if budget_kind not in ("attempted", "usable"):
        raise ValueError("budget_kind must be 'attempted' or 'usable'")
    if interval not in ("t", "normal"):
        raise ValueError("interval must be 't' or 'normal'")
    fa = frame_arrays(frame, rule_a=rule_a, rule_b=rule_b)
    if beta is None or (heldout and repair_aux != "beta"):
        source_frame = _source_frame(frame, source_frame)
    b, origin, _ = resolve_beta(frame, beta=beta, source_frame=source_frame, rule_a=rule_a,
                                rule_b=rule_b)
    aux, aux_origin = (_repair_aux(frame, fa, b, source_frame, repair_aux) if heldout
                       else (None, "none"))
    return _simulate(fa, b, origin, aux, aux_origin, t0=t0, budget=int(budget), reps=int(reps),
                     seed=seed, design=design, budget_kind=budget_kind,
                     insufficient_rate=float(insufficient_rate), level=level,
                     min_clusters=int(min_clusters), clustered_variance=clustered_variance,
                     interval=interval, high_threshold=high_threshold,
                     prior_unmatched_true=prior_unmatched_true,
                     prior_matched_false=prior_matched_false)


def _simulate(fa: FrameArrays, b: np.ndarray, origin: str, aux: np.ndarray | None,
              aux_origin: str, *, t0: float, budget: int, reps: int, seed, design: str,
              budget_kind: str, insufficient_rate: float, level: float, min_clusters: int,
              clustered_variance: bool, interval: str, high_threshold: float,
              prior_unmatched_true: float, prior_matched_false: float) -> PilotSimulation:
    """:func:`simulate_pilots` after its checks, β and the repair's auxiliary label."""
    rng = np.random.default_rng(seed)
    dr = _draw(fa, rng, reps=reps, budget=budget, design=design,
               budget_kind=budget_kind, insufficient_rate=insufficient_rate,
               high_threshold=high_threshold, prior_unmatched_true=prior_unmatched_true,
               prior_matched_false=prior_matched_false)
    clusters = fa.cluster if clustered_variance else None
    eh, sh, lh, hh, no_ci_h = _estimate(fa, dr, np.zeros_like(b), level, interval, clusters)
    et, st, lt, ht, no_ci_t = _estimate(fa, dr, b, level, interval, clusters)
    _, c_codes = np.unique(fa.cluster, return_inverse=True)
    n_cl = (_row_bincount(dr.counts, c_codes, int(c_codes.max()) + 1) > 0).sum(1)
    few = (n_cl < min_clusters) | dr.incomplete
    esc_h = few | ((lh <= 0) & (hh >= 0)) | no_ci_h  # no interval: escalate
    esc_t = few | ((lt <= 0) & (ht >= 0)) | no_ci_t
    ho = _heldout(fa, dr, aux, et < 0) if aux is not None else None
    if ho is not None:
        ho = {k: (_ro(v) if isinstance(v, np.ndarray) else v) for k, v in ho.items()}
    return PilotSimulation(
        budget=budget, reps=reps, design=design, budget_kind=budget_kind,
        insufficient_rate=insufficient_rate, level=level, min_clusters=min_clusters,
        beta=tuple(float(v) for v in b), beta_origin=origin, repair_aux=aux_origin,
        delta_y=fa.delta_y, delta_z=fa.delta_z,
        n_usable=_ro(dr.counts.sum(1)), n_attempted=_ro(dr.attempted), n_clusters=_ro(n_cl),
        est_human=_ro(eh), se_human=_ro(sh), lo_human=_ro(lh), hi_human=_ro(hh),
        est_tri=_ro(et), se_tri=_ro(st), lo_tri=_ro(lt), hi_tri=_ro(ht),
        escalate_human=_ro(esc_h), escalate_tri=_ro(esc_t), heldout=ho,
        elapsed_s=time.perf_counter() - t0,
    )


def budget_curve(frame: pd.DataFrame, *, budgets, reps: int = 2000, seed: int = 0,
                 workers: int = 1, **kwargs) -> pd.DataFrame:
    """Table 5 panel A as a function of the pilot budget.

    Parameters
    ----------
    frame : DataFrame
    budgets : iterable of int
    reps, seed : passed to :func:`simulate_pilots` (budget ``b`` uses seed ``seed + b``).
    workers : int
        Threads over the budgets (numpy releases the GIL in the heavy steps). The rows do
        not depend on it: every budget has its own seed.
    **kwargs : other :func:`simulate_pilots` options (``heldout`` is always False here).

    Returns
    -------
    DataFrame
        The concatenated :meth:`PilotSimulation.summary` rows (columns ``estimator, budget,
        rmse, bias, mean_width, coverage, coverage_all, p_correct_direction, false_termination,
        escalation, no_interval, mean_usable, mean_attempted, mean_clusters,
        width_reduction``), in the order of
        ``budgets``.
    """
    if int(workers) < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    kwargs["heldout"] = False
    beta = kwargs.pop("beta", None)
    source = kwargs.pop("source_frame", None)
    b, _, _ = resolve_beta(frame, beta=beta, source_frame=source,
                           rule_a=kwargs.get("rule_a", "native"),
                           rule_b=kwargs.get("rule_b", "eg"))
    budgets = [int(bud) for bud in budgets]
    # the checks and the frame's arrays once; then one cheap call per budget
    first = simulate_pilots(frame, budget=budgets[0], reps=reps, seed=seed + budgets[0],
                            beta=b, **kwargs) if budgets else None
    if first is None:
        raise ValueError("budget_curve needs at least one budget")
    opts = _simulate_options(first, kwargs)
    fa = frame_arrays(frame, rule_a=kwargs.get("rule_a", "native"),
                      rule_b=kwargs.get("rule_b", "eg"))

    def one(bud: int) -> PilotSimulation:
        return _simulate(fa, b, first.beta_origin, None, "none", t0=time.perf_counter(),
                         budget=bud, reps=int(reps), seed=seed + bud, **opts)

    rest = budgets[1:]
    if int(workers) > 1 and len(rest) > 1:
        with ThreadPoolExecutor(max_workers=int(workers)) as pool:
            sims = [first, *pool.map(one, rest)]
    else:
        sims = [first, *map(one, rest)]
    return pd.concat([sim.summary() for sim in sims], ignore_index=True)


def _simulate_options(sim: PilotSimulation, kwargs: dict) -> dict:
    """The design options of :func:`_simulate` as ``simulate_pilots`` resolved them."""
    defaults = inspect.signature(simulate_pilots).parameters
    opts = {k: kwargs.get(k, defaults[k].default)
            for k in ("clustered_variance", "interval", "high_threshold",
                      "prior_unmatched_true", "prior_matched_false")}
    return dict(design=sim.design, budget_kind=sim.budget_kind,
                insufficient_rate=sim.insufficient_rate, level=sim.level,
                min_clusters=sim.min_clusters, **opts)


def judge_sensitivity(config, *, budget: int = 50, reps: int = 500,
                      design: Design = "stratified",
                      budget_kind: Literal["attempted", "usable"] = "attempted",
                      qualities=(0.0, 0.4, 0.8), biases=(-2.0, 0.0, 2.0),
                      seed: int = 0) -> pd.DataFrame:
    """What the judges buy, and what a biased judge costs, at one budget (seed 003 §3, §5.5).

    Parameters
    ----------
    config : ScenarioConfig
        The scenario; its ``judge_quality`` and ``judge_bias`` are replaced by each pair of
        ``qualities`` × ``biases`` (β is re-learned on that scenario's transfer domain each
        time, as a user of the method would).
    budget, reps, design, budget_kind, seed : as in :func:`simulate_pilots` (no held-out
        repair; every cell uses the same seed, so the human-only rows are identical).
    qualities, biases : judge qualities in [0, 1] and logit biases.

    Returns
    -------
    DataFrame
        One row per (quality, bias): ``judge_quality, judge_bias, beta, beta_origin``, and for
        ``human_only`` and ``trisource`` the ``coverage`` (over pilots with an interval),
        ``coverage_all`` (over all pilots), ``no_interval``, ``mean_width`` and ``rmse``
        (prefixed), plus ``width_reduction`` (TriSource against human-only) and
        ``coverage_cost`` (human-only coverage minus TriSource's; > 0 means TriSource covers
        less).

    Notes
    -----
    Uninformative judges (quality 0) do not make the two estimators coincide: the judges
    still lean towards the reference label (``judge_reference_tilt``), so the transfer fit
    gives them weight, and as control variates they remove part of the Z-related variance.
    Eq. 3 stays design-unbiased for any fixed β, but a judge bias makes the residuals
    ``d(Y) − d(Z) − Xβ`` skewed, and at small budgets the t interval then covers less than
    its level (measured, not assumed: the coverage columns).
    """
    rows = []
    for q in qualities:
        for bias in biases:
            cfg = replace(config, judge_quality=float(q), judge_bias=float(bias))
            frame = generate_scenario(cfg)
            sim = simulate_pilots(frame, budget=int(budget), reps=int(reps), design=design,
                                  budget_kind=budget_kind, heldout=False, seed=int(seed),
                                  source_frame=generate_scenario(transfer_config(cfg)))
            summ = sim.summary().set_index("estimator")
            row = {"judge_quality": float(q), "judge_bias": float(bias),
                   "beta": ", ".join(f"{v:.2f}" for v in sim.beta),
                   "beta_origin": sim.beta_origin}
            for est in ("human_only", "trisource"):
                for col in ("coverage", "coverage_all", "no_interval", "mean_width", "rmse"):
                    row[f"{est}_{col}"] = float(summ.loc[est, col])
            row["width_reduction"] = float(summ.loc["trisource", "width_reduction"])
            row["coverage_cost"] = row["human_only_coverage"] - row["trisource_coverage"]
            rows.append(row)
    return pd.DataFrame(rows)
