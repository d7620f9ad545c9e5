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
    MonotoneMap,
    TransferBeta,
    _indicator,
    critical_value,
    design_variance,
    factored_variance,
    fit_auxiliary_model,
    fit_monotone_batch,
    fit_monotone_targets,
    fit_transfer_beta,
    monotone_repair,
    paired_differences,
    safe_logit,
    trisource_restore,
)
from core.calibration.scenario import (
    generate_scenario,
    judge_columns,
    scenario_from_attrs,
    transfer_config,
)

__all__ = [
    "Algorithm1Step",
    "Algorithm1Walk",
    "DeploymentGate",
    "FrameArrays",
    "PilotSimulation",
    "budget_curve",
    "WalkSimulation",
    "deployment_gate",
    "design_allocation",
    "frame_arrays",
    "judge_sensitivity",
    "resolve_beta",
    "simulate_pilots",
    "simulate_walks",
    "walk_algorithm1",
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
    """
    out = np.zeros(keys.shape, bool)
    for h, a in enumerate(alloc):
        cols = np.flatnonzero(strata == h)
        if a <= 0 or cols.size == 0:
            continue
        if a >= cols.size:
            out[:, cols] = True
            continue
        kh = keys[:, cols]
        out[:, cols] = kh <= np.partition(kh, a - 1, axis=1)[:, a - 1:a]
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
        idx = np.minimum(np.searchsorted(np.cumsum(p), rng.random((reps, budget))), n - 1)
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
            a, g, status = fit_monotone_targets(xtr, v, targets, aux[tr])
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
            p_correct_direction=float(np.mean(np.sign(est) == np.sign(d))),
            false_termination=float(np.mean(~esc & wrong)),
            escalation=float(np.mean(esc)),
            no_interval=float(np.mean(~has)),
        )

    def summary(self) -> pd.DataFrame:
        """Table 5 panel A: one row per estimator (human_only, trisource)."""
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
        rmse, bias, mean_width, coverage, p_correct_direction, false_termination, escalation,
        mean_usable, mean_attempted, mean_clusters, width_reduction``), in the order of
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
        ``human_only`` and ``trisource`` the ``coverage``, ``mean_width`` and ``rmse``
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
                for col in ("coverage", "mean_width", "rmse"):
                    row[f"{est}_{col}"] = float(summ.loc[est, col])
            row["width_reduction"] = float(summ.loc["trisource", "width_reduction"])
            row["coverage_cost"] = row["human_only_coverage"] - row["trisource_coverage"]
            rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Algorithm 1, one pilot step by step


@dataclass(frozen=True)
class Algorithm1Step:
    """One look of Algorithm 1: what was sampled, the interval, the decision."""

    step: int
    budget: int
    new_items: tuple[int, ...]
    n_attempted: int
    n_usable: int
    n_clusters: int
    estimate: float
    lo: float
    hi: float
    estimate_human: float
    lo_human: float
    hi_human: float
    decision: str  # "select A", "select B" or "none"
    escalate: bool
    reason: str
    repair_alpha: float
    repair_gamma: float


@dataclass(frozen=True)
class DeploymentGate:
    """Algorithm 1 step 6: the selected (repaired) rule against a label-consistent constant.

    ``gap`` is ``R_Y(constant) − R_Y(repaired rule)`` estimated with Eq. 3 out of fold
    (:func:`deployment_gate`: the map fitted on one half of the pilot, scored on the other);
    the rule passes when the whole interval is above 0. NaN gap and bounds when a half has
    too few labels.
    """

    rule: str
    constant: float
    gap: float
    lo: float
    hi: float
    gap_raw: float
    passes: bool
    message: str


@dataclass(frozen=True)
class Algorithm1Walk:
    """A step-by-step record of one simulated pilot through Algorithm 1."""

    steps: tuple[Algorithm1Step, ...]
    terminated: bool
    selected: str | None
    repair: MonotoneMap | None
    gate: DeploymentGate | None
    beta: tuple[float, ...]
    beta_origin: str
    repair_aux: str
    delta_y: float
    delta_z: float
    look_level: float = 0.95  # the α-spent level of every look's interval

    def to_frame(self) -> pd.DataFrame:
        """One row per step (``new_items`` as a tuple)."""
        return pd.DataFrame([s.__dict__ for s in self.steps])


def walk_algorithm1(frame: pd.DataFrame, *, budget_steps=(20, 35, 50, 80, 120), seed: int = 0,
                    design: Literal["stratified", "srs"] = "stratified",
                    insufficient_rate: float = 0.08, beta=None,
                    source_frame: pd.DataFrame | None = None, level: float = 0.95,
                    min_clusters: int = 8, high_threshold: float = 0.8,
                    prior_unmatched_true: float = 0.7, prior_matched_false: float = 0.1,
                    repair_aux: Literal["auto", "transfer", "beta"] = "auto",
                    rule_a: str = "native", rule_b: str = "eg",
                    spending: Literal["bonferroni", "none"] = "bonferroni") -> Algorithm1Walk:
    """Walk one simulated pilot through Algorithm 1 (select → repair → escalate → gate).

    Parameters
    ----------
    frame : DataFrame
        Scenario frame; its ``y`` column plays the human annotators.
    budget_steps : increasing ints
        Cumulative attempted-annotation budgets of the successive looks.
    seed : int
    design : {"stratified", "srs"}
        Nested without-replacement design: one random order per stratum is drawn up front and
        each look takes the first ``n_h(b)`` items of each stratum (allocation of
        :func:`design_allocation`, made non-decreasing across looks), so every look is itself a
        stratified SRS with ``ρ = n'_h / N_h`` (``n'_h`` usable labels).
    insufficient_rate : float
        Each item's annotation is insufficient with this probability (drawn once per item).
    beta, source_frame : see :func:`resolve_beta`.
    level, min_clusters, high_threshold, prior_unmatched_true, prior_matched_false,
    repair_aux, rule_a, rule_b : as in :func:`simulate_pilots`.
    spending : {"bonferroni", "none"}
        α-spending over the planned looks: with ``K = len(budget_steps)`` looks every look's
        interval has level ``1 − (1 − level)/K`` (Bonferroni), so the chance that *any* look
        terminates on the wrong side stays ≤ ``1 − level`` whatever the stopping rule; the
        cost is width (at K = 9 looks a 95 % walk uses 99.44 % intervals, z 2.77 instead of
        1.96, about 41 % wider). ``"none"`` tests every look at ``level`` (the repeated-looks
        error: near a tie about 10 % of walks stop on the wrong side).

    Returns
    -------
    Algorithm1Walk

    Notes
    -----
    Steps: (0) everything but Y is frozen in ``frame``; (1) pilot; (2) Eq. 3 with the fixed β
    (TriSource) and β = 0 (human-only, reported alongside); (3) select when the TriSource
    interval excludes 0; (4) repair the favoured rule with :func:`monotone_repair` against the
    full-frame auxiliary label (``repair_aux``); (5) escalate when the interval crosses 0,
    fewer than ``min_clusters`` stores were sampled or a stratum has < 2 usable labels, and go
    to the next budget; never terminate on an open interval; (6) gate the repaired selected
    rule against the constant ``π̂`` (the Eq. 3-style estimate of ``E_w[Y]``), cross-fitted
    (:func:`deployment_gate`). Each look is a valid fixed-size design and the looks share one
    α through ``spending``.
    """
    level = check_level(level)
    steps_b = [int(b) for b in budget_steps]
    if spending not in ("bonferroni", "none"):
        raise ValueError("spending must be 'bonferroni' or 'none'")
    look_level = 1.0 - (1.0 - level) / len(steps_b) if spending == "bonferroni" else level
    if not steps_b or any(b2 <= b1 for b1, b2 in zip(steps_b, steps_b[1:], strict=False)):
        raise ValueError("budget_steps must be a non-empty increasing sequence")
    if design not in ("stratified", "srs"):
        raise ValueError("walk_algorithm1 supports the 'stratified' and 'srs' designs")
    fa = frame_arrays(frame, rule_a=rule_a, rule_b=rule_b)
    if beta is None or repair_aux != "beta":
        source_frame = _source_frame(frame, source_frame)
    b, origin, _ = resolve_beta(frame, beta=beta, source_frame=source_frame, rule_a=rule_a,
                                rule_b=rule_b)
    aux, aux_origin = _repair_aux(frame, fa, b, source_frame, repair_aux)
    rng = np.random.default_rng(seed)
    n = fa.n
    strata, n_h, prio = _stratified_design(fa, design, high_threshold, prior_unmatched_true,
                                           prior_matched_false)
    order = np.argsort(rng.random(n) + 2.0 * strata, kind="stable")
    start = np.concatenate([[0], np.cumsum(n_h)[:-1]])
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n) - start[strata[order]]
    insufficient = rng.random(n) < insufficient_rate
    alloc = np.zeros_like(n_h)
    attempted_prev = np.zeros(n, bool)
    records: list[Algorithm1Step] = []
    terminated, selected, repair, gate = False, None, None, None
    for i, bud in enumerate(steps_b):
        alloc = np.maximum(alloc, design_allocation(bud, n_h, prio))
        attempted = rank < alloc[strata]
        usable = attempted & ~insufficient
        use_h = np.bincount(strata[usable], minlength=n_h.size)
        rho = np.maximum(use_h, 1)[strata] / n_h[strata]
        y_s = np.where(usable, fa.d_y, np.nan)
        common = dict(weights=fa.w, strata=strata, level=look_level)
        short = np.any((alloc > 0) & (use_h < 2))
        tri = hum = None
        if usable.sum() >= 2 and not np.any((alloc > 0) & (use_h == 0)):
            tri = trisource_restore(fa.d_z, fa.x, y_s, usable, rho, beta=b, **common)
            hum = trisource_restore(fa.d_z, fa.x, y_s, usable, rho, beta=np.zeros_like(b),
                                    **common)
        n_cl = int(np.unique(fa.cluster[usable]).size)
        reasons = []
        if tri is None or short:
            reasons.append("a stratum has fewer than 2 usable labels")
        if tri is not None and not tri.excludes_zero:
            reasons.append("interval crosses 0")
        if n_cl < min_clusters:
            reasons.append(f"{n_cl} < {min_clusters} clusters sampled")
        escalate = bool(reasons)
        fav = None if tri is None else ("B" if tri.estimate < 0 else "A")
        decision = f"select {tri.favours}" if tri is not None and tri.favours else "none"
        mp = None
        if fav is not None:
            c_fav = fa.c_b if fav == "B" else fa.c_a
            mp = monotone_repair(c_fav, aux, np.where(usable, fa.y, np.nan),
                                 usable, rho, weights=fa.w)
        new = tuple(int(v) for v in fa.item_id[attempted & ~attempted_prev])
        attempted_prev = attempted
        nan = float("nan")
        records.append(Algorithm1Step(
            step=i + 1, budget=bud, new_items=new, n_attempted=int(attempted.sum()),
            n_usable=int(usable.sum()), n_clusters=n_cl,
            estimate=tri.estimate if tri else nan, lo=tri.lo if tri else nan,
            hi=tri.hi if tri else nan, estimate_human=hum.estimate if hum else nan,
            lo_human=hum.lo if hum else nan, hi_human=hum.hi if hum else nan,
            decision=decision, escalate=escalate,
            reason="; ".join(reasons) if reasons else "interval excludes 0; terminate",
            repair_alpha=mp.alpha if mp else nan, repair_gamma=mp.gamma if mp else nan))
        if not escalate:
            terminated, selected, repair = True, tri.favours, mp
            c_sel = fa.c_b if selected == "B" else fa.c_a
            gate = deployment_gate(fa, c_sel, selected, aux, b, usable, strata, level=level,
                                   seed=seed)
            break
    return Algorithm1Walk(steps=tuple(records), terminated=terminated, selected=selected,
                          repair=repair, gate=gate, beta=tuple(float(v) for v in b),
                          beta_origin=origin, repair_aux=aux_origin, delta_y=fa.delta_y,
                          delta_z=fa.delta_z, look_level=look_level)


def _gate_gap(fa: FrameArrays, c, const: float, beta, usable, rho, strata, level):
    """Eq. 3 for ``R_Y(κ) − R_Y(c)`` (> 0: the rule beats the constant) on one sample."""
    kappa = np.full(fa.n, const)
    q = np.clip(fa.q, 0.0, 1.0)
    d_y = paired_differences(c, kappa, fa.y)  # S(κ) − S(c): > 0 means the rule wins
    d_z = paired_differences(c, kappa, fa.z)
    x = paired_differences(c, kappa, q) - d_z[:, None] if q.shape[1] else np.zeros((fa.n, 0))
    return trisource_restore(d_z, x, np.where(usable, d_y, np.nan), usable, rho, beta=beta,
                             weights=fa.w, strata=strata, level=level)


@dataclass(frozen=True, eq=False)
class WalkSimulation:
    """Many pilots through Algorithm 1's looks (select / escalate only), vectorised.

    Attributes
    ----------
    budget_steps : tuple of int
    look_level : float
        The level of each look's interval (α-spent or not).
    delta_y : float
        The full-frame truth gap.
    terminated : ndarray of bool, shape (reps,)
    look : ndarray of int, shape (reps,)
        1-based look of termination (0 = never).
    selected : ndarray of str, shape (reps,)
        "A", "B" or "" (not terminated).
    """

    budget_steps: tuple[int, ...]
    look_level: float
    delta_y: float
    terminated: np.ndarray
    look: np.ndarray
    selected: np.ndarray

    @property
    def false_termination(self) -> float:
        """Share of walks that terminated on the wrong side of Δ_Y (Δ_Y > 0 favours A)."""
        right = "A" if self.delta_y > 0 else "B" if self.delta_y < 0 else None
        return float(np.mean(self.terminated & (self.selected != right)))


def simulate_walks(frame: pd.DataFrame, *, budget_steps=(10, 20, 30, 40, 50, 75, 100, 150, 200),
                   reps: int = 1000, seed: int = 0,
                   design: Literal["stratified", "srs"] = "stratified",
                   insufficient_rate: float = 0.08, level: float = 0.95, min_clusters: int = 8,
                   spending: Literal["bonferroni", "none"] = "bonferroni",
                   source_frame: pd.DataFrame | None = None, high_threshold: float = 0.8,
                   prior_unmatched_true: float = 0.7, prior_matched_false: float = 0.1,
                   rule_a: str = "native", rule_b: str = "eg") -> WalkSimulation:
    """``reps`` walks of :func:`walk_algorithm1`'s looks, to measure false terminations.

    The same nested design (one random order per stratum and repetition, an insufficient
    flag per item, allocations non-decreasing across looks) and the same stopping rule (the
    TriSource interval at the look's level excludes 0, at least ``min_clusters`` stores, an
    estimable variance, no empty stratum); no repair or gate. Vectorised over repetitions.
    """
    level = check_level(level)
    steps_b = [int(b) for b in budget_steps]
    if not steps_b or any(b2 <= b1 for b1, b2 in zip(steps_b, steps_b[1:], strict=False)):
        raise ValueError("budget_steps must be a non-empty increasing sequence")
    if spending not in ("bonferroni", "none"):
        raise ValueError("spending must be 'bonferroni' or 'none'")
    if design not in ("stratified", "srs"):
        raise ValueError("simulate_walks supports the 'stratified' and 'srs' designs")
    look_level = 1.0 - (1.0 - level) / len(steps_b) if spending == "bonferroni" else level
    fa = frame_arrays(frame, rule_a=rule_a, rule_b=rule_b)
    b, _, _ = resolve_beta(frame, source_frame=_source_frame(frame, source_frame),
                           rule_a=rule_a, rule_b=rule_b)
    rng = np.random.default_rng(seed)
    R, n = int(reps), fa.n
    strata, n_h, prio = _stratified_design(fa, design, high_threshold, prior_unmatched_true,
                                           prior_matched_false)
    keys = rng.random((R, n))
    ok_item = rng.random((R, n)) >= insufficient_rate
    _, c_codes = np.unique(fa.cluster, return_inverse=True)
    done = np.zeros(R, bool)
    look = np.zeros(R, np.int64)
    sel = np.full(R, "", dtype="<U1")
    alloc = np.zeros_like(n_h)
    for i, bud in enumerate(steps_b):
        alloc = np.maximum(alloc, design_allocation(bud, n_h, prio))
        attempted = _smallest_per_stratum(keys, strata, alloc)
        usable = attempted & ok_item
        use_h = _row_bincount(usable, strata, n_h.size)
        dr = _Draws(counts=usable.astype(np.int64), attempted=attempted.sum(1),
                    scale=np.maximum(use_h, 1.0), q=1.0 / n_h[strata], strata=strata,
                    with_replacement=False,
                    incomplete=np.any((alloc[None, :] > 0) & (use_h == 0), axis=1))
        _, _, lo, hi, no_ci = _estimate(fa, dr, b, look_level, "t", None)
        n_cl = (_row_bincount(dr.counts, c_codes, int(c_codes.max()) + 1) > 0).sum(1)
        stop = ~done & ~no_ci & ~dr.incomplete & (n_cl >= min_clusters) & ((lo > 0) | (hi < 0))
        sel[stop] = np.where(hi[stop] < 0, "B", "A")
        look[stop] = i + 1
        done |= stop
    return WalkSimulation(budget_steps=tuple(steps_b), look_level=look_level,
                          delta_y=fa.delta_y, terminated=done, look=look, selected=sel)


def deployment_gate(fa: FrameArrays, c_sel, rule: str, aux, beta, usable, strata, *,
                    level: float = 0.95, seed: int = 0) -> DeploymentGate:
    """Algorithm 1 step 6, cross-fitted: is the repaired rule better than a constant?

    Parameters
    ----------
    fa : FrameArrays
    c_sel : ndarray, shape (n,)
        Confidence of the selected rule.
    rule : str
        Its name ("A" or "B").
    aux : ndarray, shape (n,)
        The repair's auxiliary label.
    beta : ndarray
        The fixed β of Eq. 3.
    usable : ndarray of bool, shape (n,)
        The pilot's usable labels (a stratified SRS within ``strata``).
    strata : ndarray of int, shape (n,)
    level : float
    seed : int
        Seed of the split.

    Returns
    -------
    DeploymentGate

    Notes
    -----
    Judging the repaired map on the labels it was fitted to is optimistic (issue 8: the
    estimated gap exceeded the true one by +.009 on average, and 9 of 13 passes in 300 walks
    had a true gap ≤ 0). So the pilot is split in two halves within every stratum (seeded);
    the map fitted on one half (:func:`monotone_repair`, inclusion probabilities of that half)
    is scored by Eq. 3 on the other, and the other way round. The gap is the mean of the two
    out-of-fold estimates and its variance the mean of their variances over 2 (halves treated
    as independent samples); the constant ``κ = π̂`` uses the whole pilot (it is fitted to
    nothing but the pilot's mean). The cost is width: each half has half the labels, and the
    gate passes only when the cross-fitted interval lies above 0. ``gap_raw`` is the
    unrepaired rule's gap on the whole pilot, for comparison.
    """
    W = fa.w.sum()
    n_h = np.bincount(strata, minlength=int(strata.max()) + 1)
    use_h = np.bincount(strata[usable], minlength=n_h.size)
    rho = np.maximum(use_h, 1)[strata] / n_h[strata]
    corr = np.where(usable, (fa.y - aux) / rho, 0.0)
    const = float(np.clip((fa.w @ aux + fa.w @ corr) / W, 1e-6, 1 - 1e-6))
    rng = np.random.default_rng([int(seed), 7919])
    half = np.zeros(fa.n, bool)
    for h in range(n_h.size):
        idx = np.flatnonzero(usable & (strata == h))
        half[rng.permutation(idx)[: idx.size // 2]] = True
    ests = []
    for fit_on in (half, usable & ~half):
        score_on = usable & ~fit_on
        fh = np.bincount(strata[fit_on], minlength=n_h.size)
        sh = np.bincount(strata[score_on], minlength=n_h.size)
        if fit_on.sum() < 2 or score_on.sum() < 2:
            ests = []
            break
        mp = monotone_repair(c_sel, aux, np.where(fit_on, fa.y, np.nan), fit_on,
                             np.maximum(fh, 1)[strata] / n_h[strata], weights=fa.w)
        ests.append(_gate_gap(fa, mp.predict(c_sel), const, beta, score_on,
                              np.maximum(sh, 1)[strata] / n_h[strata], strata, level))
    raw = _gate_gap(fa, c_sel, const, beta, usable, rho, strata, level)
    if len(ests) == 2 and all(e.estimable for e in ests):
        gap = float(np.mean([e.estimate for e in ests]))
        se = float(np.sqrt(sum(e.se**2 for e in ests) / 4.0))
        zq = float(critical_value(level, None))
        lo, hi = gap - zq * se, gap + zq * se
    else:
        gap, lo, hi = float("nan"), float("nan"), float("nan")
    passes = bool(lo > 0)
    if not np.isfinite(lo):
        msg = ("ordering identified (rule " + rule + "), but too few labels in a half of the "
               "pilot to judge the repaired rule out of fold: collect more labels")
    elif passes:
        msg = (f"rule {rule} (repaired) beats the base-rate constant {const:.3f} out of fold: "
               "deploy")
    else:
        msg = (f"ordering identified (rule {rule}), but the repaired rule does not beat the "
               f"label-consistent constant {const:.3f} out of fold: below deployment threshold")
    return DeploymentGate(rule=rule, constant=const, gap=gap, lo=lo, hi=hi,
                          gap_raw=raw.estimate, passes=passes, message=msg)
