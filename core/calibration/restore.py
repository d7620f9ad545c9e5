"""TriSource-Restore: paired differences, Eq. 3, transfer weights and monotone repair.

Sources: seed 003 §3 ("From diagnosis to three-source restoration", Eq. 3, the β constraints,
the 5 % residual gate and the monotone map σ(α + γ·logit c)), §5.5 and Algorithm 1;
the label-source notes ("Paired differences and TriSource-Restore",
"Monotone repair"); calibration-notes §5.5–5.6 (design-based estimators).

Conventions
-----------
* ``d_i(L) = S(C_B,i, L) − S(C_A,i, L)`` with S the Brier score (negative favours rule B).
  For a probability label q the expected score ``q·S(c, 1) + (1 − q)·S(c, 0)`` is used; for
  Brier it differs from ``(c − q)²`` by ``q − q²``, which cancels in d. So d is linear in the
  label: ``d(L) = B² − A² − 2L(B − A)``.
* Weighted means use population weights ``w_i`` and ``W = Σ w_i`` over the full frame.
* Eq. 3: ``Δ̂_β = Δ_Z + X̄ᵀβ + W⁻¹ Σ_{i∈S} (w_i/ρ_i)·e_i`` with
  ``e_i = d_i(Y_i) − d_i(Z_i) − X_iᵀβ``. ``Δ_Z + X̄ᵀβ`` is the full-frame gap under the
  auxiliary label ``aux = Z + (Q − Z)β``; the pilot term corrects it towards human truth.
  Unbiased over the design for any β fixed independently of the pilot.
* Variance (design-based, the pilot term only: the full-frame part is fixed given the frame).
  Units are sampled clusters (or single draws when ``clusters`` is None) within design strata:
  ``V̂ = Σ_h (1 − f_h)·m_h/(m_h − 1)·Σ_g (T_hg − T̄_h)²`` with ``T_hg`` the expanded total
  ``W⁻¹ Σ_{i∈S∩h∩g} (w_i/ρ_i) e_i`` and ``m_h`` the sampled units in stratum h. ``f_h`` is the
  sampling fraction ``n_h/N_h`` for stratified simple random sampling without replacement and
  0 for with-replacement (PPS, Hansen–Hurwitz) draws. With one item per unit this is the
  textbook stratified SRS variance ``Σ_h N_h²(1 − f_h)s_h²/n_h`` (ddof 1) resp. the
  Hansen–Hurwitz variance. With store clusters it is the "ultimate cluster" linearisation.
  Strata with fewer than two sampled units contribute no variance (and are flagged).
* Intervals: ``Δ̂ ± q·√V̂`` with q the Student-t quantile at the Satterthwaite degrees of
  freedom of the stratified variance, or optionally the normal quantile. No interval (NaN,
  and an escalation) where the variance is not estimable: a stratum with one sampled unit,
  fewer than two sampled units with a non-zero residual, or a zero variance estimate (except
  for a census, whose zero-width interval is exact). At 50 labels the pilot
  term's residuals are skewed (a minority of false beliefs carries large residuals), and the
  t quantile is the usual small-sample survey convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import norm
from scipy.stats import t as student_t

from core.calibration._checks import (
    as_float_array,
    check_labels,
    check_level,
    check_probabilities,
    check_same_length,
    check_weights,
)

__all__ = [
    "CAUSE_FLAT",
    "CAUSE_NONE",
    "CAUSE_NO_MINIMUM",
    "CAUSE_STEP",
    "CAUSE_WORDS",
    "REPAIR_FITTED",
    "REPAIR_FLAT",
    "REPAIR_REASONS",
    "REPAIR_SHIFTED",
    "REPAIR_SHIFTED_RAW",
    "AuxiliaryModel",
    "MonotoneMap",
    "TransferBeta",
    "TriSourceEstimate",
    "critical_value",
    "design_variance",
    "factored_variance",
    "fit_auxiliary_model",
    "fit_monotone_batch",
    "fit_monotone_targets",
    "fit_transfer_beta",
    "monotone_repair",
    "paired_differences",
    "repair_reason",
    "safe_logit",
    "trisource_restore",
]

_EPS = 1e-6


def safe_logit(c, *, eps: float = _EPS) -> np.ndarray:
    """``logit(clip(c, eps, 1 − eps))`` (the clipping used by every map in this module)."""
    c = np.clip(np.asarray(c, float), eps, 1.0 - eps)
    return np.log(c) - np.log1p(-c)


def paired_differences(c_a, c_b, label) -> np.ndarray:
    """Paired Brier differences ``d_i(L) = S(C_B,i, L) − S(C_A,i, L)`` (seed 003 §3).

    Parameters
    ----------
    c_a, c_b : array_like, shape (n,)
        Confidence rules A and B in [0, 1].
    label : array_like, shape (n,) or (n, K)
        Binary labels or probability labels in [0, 1] (e.g. judges ``Q``, one per column).

    Returns
    -------
    ndarray, shape of ``label``
        Negative entries favour rule B. For a probability label q the expected Brier score
        ``q(c − 1)² + (1 − q)c²`` is used, so ``d = B² − A² − 2q(B − A)``.

    Examples
    --------
    >>> paired_differences([0.9], [0.5], [1.0]).round(3).tolist()
    [0.24]
    """
    a = check_probabilities(as_float_array(c_a, "c_a"), "c_a")
    b = check_probabilities(as_float_array(c_b, "c_b"), "c_b")
    lab = check_probabilities(as_float_array(label, "label", ndim=None), "label")
    check_same_length(c_a=a, c_b=b)
    if lab.ndim not in (1, 2) or lab.shape[0] != a.shape[0]:
        raise ValueError(f"label must have shape (n,) or (n, K) with n = {a.shape[0]}")
    if lab.ndim == 2:
        return (b * b - a * a)[:, None] - 2.0 * lab * (b - a)[:, None]
    return b * b - a * a - 2.0 * lab * (b - a)


# --------------------------------------------------------------------------------------------
# design-based variance (shared with core.calibration.pilot)


def _codes(labels, n: int, name: str) -> tuple[np.ndarray, int]:
    if labels is None:
        return np.zeros(n, np.int64), 1
    arr = np.asarray(labels)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have length {n}")
    _, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1


def _indicator(codes: np.ndarray, k: int) -> np.ndarray:
    """The (n, k) 0/1 matrix with a one at ``(i, codes[i])``."""
    out = np.zeros((codes.size, k))
    out[np.arange(codes.size), codes] = 1.0
    return out


def _stratified_sum(m, f, sq, total_h):
    """``(V̂, short, df)`` from per-stratum units ``m``, fractions ``f``, Σ T² and Σ T."""
    ok = m >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        vh = np.where(ok, (1.0 - f) * m / (m - 1.0) * (sq - total_h**2 / np.where(ok, m, 1.0)),
                      0.0)
    short = np.any((m > 0) & ~ok, axis=1)
    vh = np.maximum(vh, 0.0)
    var = vh.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):  # Satterthwaite (Cochran 5A.42)
        denom = np.where(ok, vh * vh / np.where(ok, m - 1.0, 1.0), 0.0).sum(1)
        df = np.where(denom > 0, var * var / np.where(denom > 0, denom, 1.0),
                      m.sum(1) - (m > 0).sum(1))
    return var, short, df


def design_variance(t, counts, *, strata=None, clusters=None, with_replacement=False):
    """Design-based variance of the expanded pilot total ``Σ_i counts_i·t_i`` (vectorised).

    Parameters
    ----------
    t : ndarray, shape (n,) or (R, n)
        Expanded per-draw contributions ``w_i e_i / (W ρ_i)`` (any value where not sampled).
    counts : ndarray, shape (R, n) or (n,)
        Sample membership (bool) or with-replacement draw counts (int) per repetition.
    strata : array_like, shape (n,), optional
        Design strata (SRS within each); one stratum if omitted.
    clusters : array_like, shape (n,), optional
        Cluster labels; each draw is its own unit if omitted.
    with_replacement : bool
        No finite-population correction (``f_h = 0``) when True.

    Returns
    -------
    var : ndarray, shape (R,)
        The variance estimate of the module docstring.
    short : ndarray of bool, shape (R,)
        True when some stratum with sampled units has fewer than two of them (its variance
        contribution is then 0).
    df : ndarray, shape (R,)
        Satterthwaite degrees of freedom of the stratified variance,
        ``(Σ_h V_h)² / Σ_h V_h²/(m_h − 1)`` (Cochran 1977, 5A.42), which falls to about
        ``m_h − 1`` when one stratum with few units dominates the variance; sampled units
        minus strata when the variance is 0. (The plain ``m − H`` overstated the precision:
        with 20 labels over 4 strata at prevalence .05 the human-only interval covered .88.)
    """
    counts = np.atleast_2d(np.asarray(counts)).astype(float)
    R, n = counts.shape
    t = np.broadcast_to(np.asarray(t, float), (R, n))
    present = counts > 0
    ct = np.where(present, counts * t, 0.0)
    s_codes, n_h = _codes(strata, n, "strata")
    frame_h = np.bincount(s_codes, minlength=n_h).astype(float)
    # per-stratum row sums as one matrix product with the (n, H) stratum indicator: the same
    # sums as a bincount over (row, stratum) keys, 3-4x faster at (5000, 259)
    onehot = _indicator(s_codes, n_h)
    total_h = ct @ onehot
    items_h = present @ onehot
    if clusters is None:  # every draw is a unit
        m = counts @ onehot
        sq = np.where(present, ct * ct / np.where(present, counts, 1.0), 0.0) @ onehot
    else:
        c_codes, n_g = _codes(clusters, n, "clusters")
        cells = _indicator(s_codes * n_g + c_codes, n_h * n_g)
        tot = (ct @ cells).reshape(R, n_h, n_g)
        m = ((counts @ cells).reshape(R, n_h, n_g) > 0).sum(2).astype(float)
        sq = (tot * tot).sum(2)
    f = np.zeros_like(items_h) if with_replacement else items_h / frame_h[None, :]
    return _stratified_sum(m, f, sq, total_h)


def factored_variance(u, counts, scale, *, strata=None, with_replacement=False):
    """:func:`design_variance` when ``t_ri = u_i / scale_r,h(i)``, as matrix products.

    The pilot simulations' expanded contributions factor this way: ``ρ_ri = s_rh · q_i``
    (stratified SRS: ``s = max(m_h, 1)``, ``q = 1/N_h``; PPS: ``s = max(m, 1)``, ``q = p_i``),
    so ``t_ri = w_i e_i / (W q_i) / s_rh``. Every per-stratum sum of the variance is then
    ``counts @ (indicator · u)`` divided by ``s`` (or ``s²``): two (R, n) × (n, H) products
    instead of a dozen (R, n) element-wise passes. Unit = one draw (no clusters).

    Parameters
    ----------
    u : ndarray, shape (n,)
    counts : ndarray, shape (R, n)
        0/1 membership or with-replacement draw counts.
    scale : ndarray, shape (R, H)
        ``s_rh`` per repetition and stratum (> 0).
    strata : ndarray of int, shape (n,), optional
        Stratum codes ``0 … H − 1`` (empty strata allowed; one stratum if omitted).
    with_replacement : bool
        As in :func:`design_variance`.

    Returns
    -------
    total : ndarray, shape (R,)
        ``Σ_i counts_ri t_ri`` (the pilot term).
    var, short, df : as :func:`design_variance` returns them.
    """
    counts = np.atleast_2d(np.asarray(counts, float))
    R, n = counts.shape
    u = np.asarray(u, float)
    scale = np.atleast_2d(np.asarray(scale, float))
    n_h = scale.shape[1]
    s_codes = np.zeros(n, np.int64) if strata is None else np.asarray(strata, np.int64)
    if s_codes.shape != (n,) or scale.shape[0] != R or (s_codes.size and (
            s_codes.min() < 0 or s_codes.max() >= n_h)):
        raise ValueError(f"need strata codes in [0, {n_h}) of length {n} and scale of shape "
                         f"({R}, {n_h})")
    frame_h = np.bincount(s_codes, minlength=n_h).astype(float)
    onehot = _indicator(s_codes, n_h)
    sums = counts @ np.hstack([onehot * u[:, None], onehot * (u * u)[:, None], onehot])
    total_h = sums[:, :n_h] / scale
    sq = sums[:, n_h:2 * n_h] / (scale * scale)  # counts·t² = (counts·t)²/counts
    m = sums[:, 2 * n_h:]
    # 0/1 counts: m = items; an empty stratum (frame_h = 0) has m = 0 and no variance
    f = (np.zeros_like(m) if with_replacement
         else m / np.maximum(frame_h, 1.0)[None, :])
    return (total_h.sum(1), *_stratified_sum(m, f, sq, total_h))


def critical_value(level: float, df=None):
    """Two-sided critical value: Student-t with ``df`` (elementwise) or normal if None.

    ``df < 1`` falls back to ``df = 1``.
    """
    level = check_level(level)
    if df is None:
        return norm.ppf(0.5 + level / 2.0)
    return student_t.ppf(0.5 + level / 2.0, np.maximum(np.asarray(df, float), 1.0))


# --------------------------------------------------------------------------------------------
# Eq. 3


@dataclass(frozen=True)
class TriSourceEstimate:
    """TriSource-Restore estimate of the human-truth paired gap Δ_Y (seed 003 Eq. 3).

    Attributes
    ----------
    estimate, se, lo, hi : float
        ``Δ̂_β``, its design-based standard error and normal interval.
    level : float
    delta_z : float
        ``Δ_Z`` (full frame).
    aux_shift : float
        ``X̄ᵀβ`` (full frame).
    pilot_term : float
        ``W⁻¹ Σ_S (w/ρ)·e``.
    beta : tuple[float, ...]
    n_sampled : int
        Pilot draws used.
    n_clusters : int
        Distinct clusters among them (items if no clusters were given).
    short_strata : bool
        Some stratum had a single sampled unit (its variance is not estimable).
    no_interval_reason : str
        Empty when the variance is estimable; otherwise why ``se``, ``lo`` and ``hi`` are NaN:
        a stratum with a single sampled unit, fewer than two sampled units with a non-zero
        residual (e.g. every sampled Y equals Z under β = 0), or a zero variance estimate.
        Then :attr:`excludes_zero` is False and :attr:`favours` None: escalate.
    """

    estimate: float
    se: float
    lo: float
    hi: float
    level: float
    delta_z: float
    aux_shift: float
    pilot_term: float
    beta: tuple[float, ...]
    n_sampled: int
    n_clusters: int
    short_strata: bool
    no_interval_reason: str = ""

    @property
    def estimable(self) -> bool:
        """Whether the design variance (hence the interval) is estimable."""
        return not self.no_interval_reason

    @property
    def excludes_zero(self) -> bool:
        """The interval exists and lies strictly on one side of zero."""
        return self.estimable and (self.lo > 0 or self.hi < 0)

    @property
    def favours(self) -> str | None:
        """"B" if the interval is below zero, "A" if above, None if it crosses zero or
        there is no interval."""
        if not self.estimable:
            return None
        return "B" if self.hi < 0 else "A" if self.lo > 0 else None


def _beta_vector(beta, k: int) -> np.ndarray:
    b = np.atleast_1d(np.asarray(beta, float))
    if b.shape != (k,):
        raise ValueError(f"beta must have {k} entries, got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("beta must be finite")
    return b


def trisource_restore(d_z, x, d_y_sample, sample_mask, rho, *, beta, weights=None,
                      clusters=None, strata=None, with_replacement: bool = False,
                      level: float = 0.95,
                      interval: Literal["t", "normal"] = "t") -> TriSourceEstimate:
    """Estimate the human-truth paired gap from full-frame Z, judges Q and a pilot (Eq. 3).

    Parameters
    ----------
    d_z : array_like, shape (n,)
        ``d_i(Z_i)`` on the full frame.
    x : array_like, shape (n, K)
        ``X_ik = d_i(Q_ik) − d_i(Z_i)`` on the full frame (``K = 0`` allowed: shape (n, 0)).
    d_y_sample : array_like, shape (n,)
        ``d_i(Y_i)``; read only where sampled (NaN allowed elsewhere).
    sample_mask : array_like, shape (n,)
        Pilot membership (bool) or with-replacement draw counts (int ≥ 0).
    rho : array_like, shape (n,)
        First-order inclusion probabilities (without replacement) or expected draw counts
        (with replacement); > 0 where sampled.
    beta : array_like, shape (K,)
        Fixed control-variate weights (transfer-learned, not tuned on this pilot).
    weights : array_like, shape (n,), optional
        Population weights.
    clusters, strata : array_like, shape (n,), optional
        Cluster labels for the variance; design strata (SRS within each).
    with_replacement : bool
        Draws are with replacement (Hansen–Hurwitz; no finite-population correction).
    level : float
    interval : {"t", "normal"}
        Student-t quantile with the design degrees of freedom (sampled units minus strata;
        the usual survey convention, default) or the normal quantile.

    Returns
    -------
    TriSourceEstimate

    Notes
    -----
    ``β = 0`` gives the human-only (Horvitz–Thompson difference) estimator. The point estimate
    equals :func:`core.calibration.ppi.horvitz_thompson_ci` with ``y = d(Y)``,
    ``yhat = d(Z) + Xβ`` and ``lam = 1``; the variance differs (here: fixed-size stratified
    design with centring; there: Poisson design), see the module docstring.
    """
    level = check_level(level)
    dz = as_float_array(d_z, "d_z")
    n = dz.shape[0]
    xx = np.asarray(x, float)
    if xx.ndim == 1:
        xx = xx[:, None]
    if xx.ndim != 2 or xx.shape[0] != n or not np.all(np.isfinite(xx)):
        raise ValueError(f"x must be a finite (n, K) array with n = {n}")
    b = _beta_vector(beta, xx.shape[1])
    dy = as_float_array(d_y_sample, "d_y_sample", allow_nan=True)
    rho = as_float_array(rho, "rho", allow_nan=True)
    counts = np.asarray(sample_mask)
    if counts.shape != (n,):
        raise ValueError("sample_mask must have the frame's length")
    counts = counts.astype(float)
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("sample_mask must be boolean or non-negative integer counts")
    check_same_length(d_z=dz, d_y_sample=dy, rho=rho)
    w = check_weights(weights, n)
    s = counts > 0
    if not s.any():
        raise ValueError("the pilot is empty")
    if np.any(~np.isfinite(dy[s])) or np.any(~np.isfinite(rho[s])) or np.any(rho[s] <= 0):
        raise ValueError("sampled items need finite d_y_sample and rho > 0")
    if not with_replacement and (np.any(counts > 1) or np.any(rho[s] > 1)):
        raise ValueError("without replacement, counts must be 0/1 and rho in (0, 1]")
    W = w.sum()
    delta_z = float(np.sum(w * dz) / W)
    aux_shift = float((w @ xx) @ b / W) if b.size else 0.0
    e = np.where(s, np.nan_to_num(dy) - dz - (xx @ b if b.size else 0.0), 0.0)
    t = np.where(s, w * e / (W * np.where(s, rho, 1.0)), 0.0)
    pilot = float(np.sum(counts * t))
    var, short, df = design_variance(t, counts, strata=strata, clusters=clusters,
                                     with_replacement=with_replacement)
    informative = int(np.sum(s & (np.abs(e) > 1e-15)))
    census = not with_replacement and bool(s.all())  # the exact answer: zero width is right
    reason = ("" if census else "a stratum has a single sampled unit" if short[0]
              else "fewer than 2 sampled units with a non-zero residual" if informative < 2
              else "zero estimated variance" if not var[0] > 0 else "")
    se = float(np.sqrt(var[0])) if not reason else float("nan")
    est = delta_z + aux_shift + pilot
    zq = float(critical_value(level, df[0] if interval == "t" else None))
    if clusters is None:
        n_cl = int(s.sum())
    else:
        n_cl = int(np.unique(np.asarray(clusters)[s]).size)
    return TriSourceEstimate(
        estimate=est, se=se, lo=est - zq * se, hi=est + zq * se, level=level,
        delta_z=delta_z, aux_shift=aux_shift, pilot_term=pilot,
        beta=tuple(float(v) for v in b), n_sampled=int(counts.sum()), n_clusters=n_cl,
        short_strata=bool(short[0]), no_interval_reason=reason,
    )


# --------------------------------------------------------------------------------------------
# transfer weights


@dataclass(frozen=True)
class TransferBeta:
    """Transfer-learned control-variate weights with the 5 % residual gate (seed 003 §3).

    Attributes
    ----------
    beta : tuple[float, ...]
        Weights to use: the fit if the gate passed, else zeros.
    beta_fitted : tuple[float, ...]
        The constrained least-squares fit (β_k ≥ 0, Σβ ≤ 1).
    mse_zero, mse_fitted : float
        Residual MSE on the source domain at β = 0 and at the fit.
    improvement : float
        ``1 − mse_fitted / mse_zero`` (0 if ``mse_zero`` is 0).
    passed : bool
        ``improvement ≥ gate``.
    gate : float
    centered : bool
        Whether the MSE is the weighted residual variance (centred) or the raw mean square.
    """

    beta: tuple[float, ...]
    beta_fitted: tuple[float, ...]
    mse_zero: float
    mse_fitted: float
    improvement: float
    passed: bool
    gate: float
    centered: bool


def fit_transfer_beta(d_y, d_z, x, *, weights=None, gate: float = 0.05,
                      centered: bool = True) -> TransferBeta:
    """Learn β on another, fully adjudicated domain, subject to β ≥ 0, Σβ ≤ 1 and the gate.

    Parameters
    ----------
    d_y, d_z : array_like, shape (n,)
        Paired differences under truth and under the reference on the *source* domain.
    x : array_like, shape (n, K)
        ``d(Q_k) − d(Z)`` on the source domain.
    weights : array_like, shape (n,), optional
    gate : float, default 0.05
        Minimum relative improvement of the residual MSE; below it β = 0 (seed 003 §3).
    centered : bool, default True
        Measure the residual by its weighted variance ``Var_w(r − Xβ)`` with
        ``r = d(Y) − d(Z)`` — the quantity that sets the variance of the pilot term of Eq. 3
        for fixed-size designs. ``False`` uses the raw mean square ``E_w[(r − Xβ)²]``.

    Returns
    -------
    TransferBeta

    Notes
    -----
    The quadratic objective is minimised with scipy's SLSQP from β = 0 under
    ``0 ≤ β_k ≤ 1`` and ``1 − Σβ ≥ 0`` (analytic gradient). Learn β on a domain other than the
    one the pilot is drawn from, so that Eq. 3 stays unbiased.
    """
    dy = as_float_array(d_y, "d_y")
    dz = as_float_array(d_z, "d_z")
    xx = np.asarray(x, float)
    if xx.ndim == 1:
        xx = xx[:, None]
    n = check_same_length(d_y=dy, d_z=dz)
    if xx.ndim != 2 or xx.shape[0] != n or not np.all(np.isfinite(xx)):
        raise ValueError(f"x must be a finite (n, K) array with n = {n}")
    if not 0.0 <= gate < 1.0:
        raise ValueError("gate must be in [0, 1)")
    w = check_weights(weights, n)
    p = w / w.sum()
    r = dy - dz
    k = xx.shape[1]
    if centered:
        r = r - p @ r
        xx = xx - p @ xx
    s_rr = float(p @ (r * r))
    s_xr = (xx * p[:, None]).T @ r
    s_xx = (xx * p[:, None]).T @ xx

    def mse(b):
        return s_rr - 2.0 * b @ s_xr + b @ s_xx @ b

    if k == 0:
        return TransferBeta(beta=(), beta_fitted=(), mse_zero=s_rr, mse_fitted=s_rr,
                            improvement=0.0, passed=False, gate=gate, centered=centered)
    res = minimize(mse, np.zeros(k), jac=lambda b: 2.0 * (s_xx @ b - s_xr), method="SLSQP",
                   bounds=[(0.0, 1.0)] * k,
                   constraints=[{"type": "ineq", "fun": lambda b: 1.0 - b.sum(),
                                 "jac": lambda b: -np.ones_like(b)}],
                   options={"ftol": 1e-14, "maxiter": 200})
    b = np.clip(res.x, 0.0, 1.0)
    if b.sum() > 1.0:
        b = b / b.sum()
    m_fit = float(mse(b))
    if m_fit > s_rr:  # never worse than β = 0
        b, m_fit = np.zeros(k), s_rr
    imp = 1.0 - m_fit / s_rr if s_rr > 0 else 0.0
    passed = bool(imp >= gate)
    used = b if passed else np.zeros(k)
    return TransferBeta(beta=tuple(float(v) for v in used), beta_fitted=tuple(float(v) for v in b),
                        mse_zero=s_rr, mse_fitted=m_fit, improvement=float(imp), passed=passed,
                        gate=float(gate), centered=centered)


# --------------------------------------------------------------------------------------------
# auxiliary truth model (transfer), used as the repair's full-frame label


@dataclass(frozen=True)
class AuxiliaryModel:
    """Frozen truth model ``P(Y = 1 | Z, Q) = σ(b₀ + b_z·Z + Σ_k b_k·logit Q_k)``.

    Learned on another, fully adjudicated domain (like β) and applied unchanged to the target
    frame to give a full-frame auxiliary label for :func:`monotone_repair`.
    """

    coef: tuple[float, ...]

    def predict(self, z, q) -> np.ndarray:
        """Auxiliary truth probabilities for reference labels ``z`` (n,) and judges ``q`` (n, K)."""
        return expit(_aux_features(z, q) @ np.asarray(self.coef))


def _aux_features(z, q) -> np.ndarray:
    z = np.asarray(z, float)
    q = np.asarray(q, float).reshape(z.shape[0], -1)
    return np.column_stack([np.ones(z.shape[0]), z, safe_logit(q)])


def fit_auxiliary_model(y, z, q, *, weights=None, ridge: float = 1e-4) -> AuxiliaryModel:
    """Weighted logistic regression of truth on the reference label and the judges' logits.

    Parameters
    ----------
    y, z : array_like, shape (n,)
        Truth and reference labels of the *source* domain.
    q : array_like, shape (n, K)
        Judges' probabilities (clipped to [1e-6, 1 − 1e-6] before the logit).
    weights : array_like, shape (n,), optional
    ridge : float
        L2 penalty on the non-intercept coefficients (per unit weight), which keeps the fit
        finite under separation.

    Returns
    -------
    AuxiliaryModel

    Notes
    -----
    Newton–Raphson on the convex penalised log loss (at most 100 steps, step halving when the
    loss does not decrease).
    """
    yv = check_labels(as_float_array(y, "y"), "y")
    zv = check_labels(as_float_array(z, "z"), "z")
    n = check_same_length(y=yv, z=zv)
    qv = np.asarray(q, float).reshape(n, -1)
    w = check_weights(weights, n)
    p_w = w / w.sum()
    X = _aux_features(zv, qv)
    pen = np.full(X.shape[1], float(ridge))
    pen[0] = 0.0

    def loss(b):
        e = X @ b
        return float(p_w @ (np.logaddexp(0.0, e) - yv * e) + 0.5 * pen @ (b * b))

    b = np.zeros(X.shape[1])
    m = float(np.clip(p_w @ yv, _EPS, 1 - _EPS))
    b[0] = np.log(m) - np.log1p(-m)
    cur = loss(b)
    for _ in range(100):
        pr = expit(X @ b)
        g = X.T @ (p_w * (pr - yv)) + pen * b
        H = (X * (p_w * pr * (1 - pr))[:, None]).T @ X + np.diag(pen + 1e-12)
        step = np.linalg.solve(H, g)
        lr = 1.0
        while lr > 1e-8:
            new = loss(b - lr * step)
            if new <= cur:
                break
            lr /= 2.0
        b = b - lr * step
        done = abs(cur - new) < 1e-14
        cur = min(cur, new)
        if done or np.max(np.abs(lr * step)) < 1e-12:
            break
    return AuxiliaryModel(coef=tuple(float(v) for v in b))


# --------------------------------------------------------------------------------------------
# monotone prediction-powered repair


@dataclass(frozen=True)
class MonotoneMap:
    """A monotone calibration map ``p(c) = σ(α + γ·logit c)`` with ``γ ≥ 0``.

    Attributes
    ----------
    alpha, gamma : float
    n_pilot : int
        Pilot draws that entered the fit.
    converged : bool
        True when the map is the minimiser of the unbiased objective; False when a fallback
        of :func:`fit_monotone_targets` was used (``reason`` says which and why).
    reason : str
        ``"fitted"``, or the fallback and its cause.
    """

    alpha: float
    gamma: float
    n_pilot: int = 0
    converged: bool = True
    reason: str = "fitted"

    def predict(self, c):
        """Repaired probabilities for confidences ``c`` (clipped to [1e-6, 1 − 1e-6])."""
        out = expit(self.alpha + self.gamma * safe_logit(c))
        return float(out) if np.ndim(out) == 0 else out


def fit_monotone_batch(x, v, st, stx, *, max_iter: int = 100, tol: float = 1e-10,
                       bound: float = 50.0):
    """Vectorised solver of ``min_θ Σ_i v_ri·softplus(α + γx_ri) − α·st_r − γ·stx_r``, γ ≥ 0.

    Parameters
    ----------
    x : ndarray, shape (n,) or (R, n)
        Logit confidences (shared by all repetitions, or one row per repetition).
    v : ndarray, shape (n,) or (R, n)
        Non-negative fit weights.
    st, stx : ndarray, shape (R,)
        Sufficient statistics ``Σ_i v_ri T_ri`` and ``Σ_i v_ri T_ri x_ri`` of the (possibly
        IPW-corrected, hence possibly outside [0, 1]) targets ``T``.
    max_iter, tol, bound : Newton iterations, convergence tolerance on the step, and box
        ``|α|, |γ| ≤ bound`` that stops a run whose targets admit no finite minimiser.

    Returns
    -------
    alpha, gamma : ndarray, shape (R,)
    converged : ndarray of bool, shape (R,)

    Notes
    -----
    Damped Newton: with Newton decrement ``λ² = gᵀH⁻¹g`` the step is scaled by ``1/(1 + λ)``
    while ``λ² > 1/4`` and is a full Newton step afterwards (the rule for (generalised)
    self-concordant losses such as the logistic one), so no objective evaluations are needed.
    Only the repetitions that have not converged are iterated; a single repetition runs the
    same steps on Python floats (``_newton_one``, bit-for-bit the same result). Reductions
    use ``np.einsum`` rather than BLAS matrix–vector products, whose thread start-up
    dominated at these sizes.
    The objective is convex (softplus is convex, the target part linear), so when the
    unconstrained minimiser has γ < 0 the constrained one lies on γ = 0, where
    ``α = logit(st / Σv)`` (the ratio clipped to [1e-6, 1 − 1e-6]).
    """
    x = np.asarray(x, float)
    v = np.asarray(v, float)
    st = np.atleast_1d(np.asarray(st, float))
    stx = np.atleast_1d(np.asarray(stx, float))
    R = st.shape[0]
    shared = x.ndim == 1 and v.ndim == 1
    if not shared:
        x = np.broadcast_to(x, (R, x.shape[-1]))
        v = np.broadcast_to(v, (R, x.shape[-1]))
    vx, vxx = v * x, v * x * x
    sv = v.sum(-1) * np.ones(R)
    mean_t = np.clip(st / np.where(sv > 0, sv, 1.0), _EPS, 1.0 - _EPS)
    a0 = np.log(mean_t) - np.log1p(-mean_t)
    a, g = a0.copy(), np.zeros(R)
    if R == 1:  # one fit: the same arithmetic on Python floats, without per-op array overhead
        a1, g1, c1 = _newton_one(x, v, vx, vxx, float(st[0]), float(stx[0]), float(a0[0]),
                                 shared, max_iter, tol, bound)
        if g1 < 0:
            g1, a1 = 0.0, float(a0[0])
            c1 = True
        return np.array([a1]), np.array([g1]), np.array([c1])
    if shared and R > 1:  # warm start from the fit to the average statistics
        sa, sg, _ = fit_monotone_batch(x, v, np.array([st.mean()]), np.array([stx.mean()]),
                                       max_iter=max_iter, tol=tol, bound=bound)
        a[:], g[:] = sa[0], max(sg[0], 0.0)
    converged = np.zeros(R, bool)
    active = np.arange(R)
    for _ in range(max_iter):
        ai, gi = a[active], g[active]
        if shared:
            p = expit(ai[:, None] + gi[:, None] * x[None, :])
            h = p * (1.0 - p)
            ga = np.einsum("rn,n->r", p, v) - st[active]
            gg = np.einsum("rn,n->r", p, vx) - stx[active]
            haa = np.einsum("rn,n->r", h, v)
            hag = np.einsum("rn,n->r", h, vx)
            hgg = np.einsum("rn,n->r", h, vxx)
        else:
            va, vxa, vxxa = v[active], vx[active], vxx[active]
            p = expit(ai[:, None] + gi[:, None] * x[active])
            h = p * (1.0 - p)
            ga = (va * p).sum(1) - st[active]
            gg = (vxa * p).sum(1) - stx[active]
            haa, hag, hgg = (va * h).sum(1), (vxa * h).sum(1), (vxxa * h).sum(1)
        det = haa * hgg - hag * hag
        ok = det > 1e-14 * np.maximum(haa * hgg, 1e-300)
        safe = np.where(ok, det, 1.0)
        da = np.where(ok, (hgg * ga - hag * gg) / safe, ga / np.maximum(haa, 1e-300))
        dg = np.where(ok, (haa * gg - hag * ga) / safe, 0.0)
        lam2 = np.maximum(ga * da + gg * dg, 0.0)
        damp = np.where(lam2 > 0.25, 1.0 / (1.0 + np.sqrt(lam2)), 1.0)
        na = np.clip(ai - damp * da, -bound, bound)
        ng = np.clip(gi - damp * dg, -bound, bound)
        moved = np.abs(na - ai) + np.abs(ng - gi)
        a[active], g[active] = na, ng
        done = moved < tol * (1.0 + np.abs(na) + np.abs(ng))
        converged[active[done]] = True
        active = active[~done]
        if active.size == 0:
            break
    neg = g < 0
    if neg.any():
        g = np.where(neg, 0.0, g)
        a = np.where(neg, a0, a)
    return a, g, converged | neg


def _newton_one(x, v, vx, vxx, st: float, stx: float, a0: float, shared: bool,
                max_iter: int, tol: float, bound: float) -> tuple[float, float, bool]:
    """:func:`fit_monotone_batch`'s damped Newton loop for a single repetition.

    Every step is the batch loop's arithmetic in the same order (the reductions are the same
    ``einsum`` / row sums on a ``(1, n)`` array; the 2 × 2 solve, damping, clipping and
    stopping rule are IEEE double operations on Python floats, which round exactly as NumPy's
    float64 ones), so the result is bit-for-bit the batch loop's; only the per-operation
    array overhead, which dominated single fits of a few dozen labels, is gone.
    ``tests/test_gate_parity.py`` checks this against the batch loop.
    """
    x2 = x[None, :] if shared else x
    a, g, converged = a0, 0.0, False
    for _ in range(max_iter):
        p = expit(a + g * x2)
        h = p * (1.0 - p)
        if shared:
            ga = float(np.einsum("rn,n->r", p, v)[0]) - st
            gg = float(np.einsum("rn,n->r", p, vx)[0]) - stx
            haa = float(np.einsum("rn,n->r", h, v)[0])
            hag = float(np.einsum("rn,n->r", h, vx)[0])
            hgg = float(np.einsum("rn,n->r", h, vxx)[0])
        else:
            ga = float((v * p).sum(1)[0]) - st
            gg = float((vx * p).sum(1)[0]) - stx
            haa, hag = float((v * h).sum(1)[0]), float((vx * h).sum(1)[0])
            hgg = float((vxx * h).sum(1)[0])
        det = haa * hgg - hag * hag
        hh = haa * hgg
        ok = det > 1e-14 * (hh if (hh != hh or hh > 1e-300) else 1e-300)
        if ok:
            da = (hgg * ga - hag * gg) / det
            dg = (haa * gg - hag * ga) / det
        else:
            da = ga / (haa if (haa != haa or haa > 1e-300) else 1e-300)
            dg = 0.0
        lam2 = ga * da + gg * dg
        lam2 = lam2 if (lam2 != lam2 or lam2 > 0.0) else 0.0
        damp = 1.0 / (1.0 + math.sqrt(lam2)) if lam2 > 0.25 else 1.0
        na = _clip1(a - damp * da, bound)
        ng = _clip1(g - damp * dg, bound)
        moved = abs(na - a) + abs(ng - g)
        a, g = na, ng
        if moved < tol * (1.0 + abs(na) + abs(ng)):
            converged = True
            break
    return a, g, converged


def _clip1(value: float, bound: float) -> float:
    """``np.clip(value, -bound, bound)`` for one float (NaN stays NaN)."""
    if value != value:
        return value
    return bound if value > bound else -bound if value < -bound else value


#: What :func:`fit_monotone_targets` returns per repetition (``status``).
REPAIR_FITTED, REPAIR_SHIFTED_RAW, REPAIR_SHIFTED, REPAIR_FLAT = 0, 1, 2, 3
#: Why a fit was replaced by a fallback (``cause``, with ``return_cause=True``).
CAUSE_NONE, CAUSE_NO_MINIMUM, CAUSE_FLAT, CAUSE_STEP = 0, 1, 2, 3
CAUSE_WORDS = {
    CAUSE_NO_MINIMUM: "the corrected targets leave [0, 1] and the objective has no finite "
                      "minimum",
    CAUSE_FLAT: "the fit came out flat (γ = 0): it would give every answer the same "
                "confidence and throw the rule's ranking away",
    CAUSE_STEP: "the fit came out nearly a step (γ above 4): a few large corrections decided "
                "it",
}
_FALLBACK_WORDS = {
    REPAIR_SHIFTED_RAW: "so the rule's own confidence was shifted to the pilot's corrected mean "
                        "(slope 1)",
    REPAIR_SHIFTED: "so the map fitted to the auxiliary label alone was shifted to the pilot's "
                    "corrected mean",
    REPAIR_FLAT: "kept as a constant at the pilot's corrected mean; only the deployment choice "
                 "(against the unrepaired rule and pilot-only Platt) can tell whether that helps",
}
_NO_MINIMUM = "fallback: " + CAUSE_WORDS[CAUSE_NO_MINIMUM] + ", "
#: The reason of each status when the cause is "no finite minimum" (see :func:`repair_reason`).
REPAIR_REASONS = {
    REPAIR_FITTED: "fitted",
    REPAIR_SHIFTED_RAW: _NO_MINIMUM + _FALLBACK_WORDS[REPAIR_SHIFTED_RAW],
    REPAIR_SHIFTED: _NO_MINIMUM + _FALLBACK_WORDS[REPAIR_SHIFTED],
    REPAIR_FLAT: f"fallback: {CAUSE_WORDS[CAUSE_FLAT]}, {_FALLBACK_WORDS[REPAIR_FLAT]}",
}


def repair_reason(status: int, cause: int) -> str:
    """The reason of a repair in words: "fitted", or "fallback: <cause>, <what was used>"."""
    if int(status) == REPAIR_FITTED:
        return "fitted"
    return f"fallback: {CAUSE_WORDS[int(cause)]}, {_FALLBACK_WORDS[int(status)]}"


def _intercept_for_mean(x, v, slope, goal) -> np.ndarray:
    """Per row, α with ``Σ v·σ(α + slope·x) = goal`` (1-D Newton, monotone in α)."""
    alpha = np.log(goal) - np.log1p(-goal)
    for _ in range(60):
        p = expit(alpha[:, None] + slope[:, None] * x[None, :])
        f = (v * p).sum(1) - goal
        step = np.clip(f / np.maximum((v * p * (1.0 - p)).sum(1), 1e-12), -5.0, 5.0)
        alpha = alpha - step
        if np.all(np.abs(step) < 1e-10):
            break
    return alpha



def _goal_floor(n_labels, R: int) -> np.ndarray:
    """Per row, how far from 0 and 1 a fallback's target mean must stay: ``1/(k + 2)`` for
    k ≥ 1 pilot labels (Laplace's rule of succession), 1e-4 without labels or count."""
    if n_labels is None:
        return np.full(R, 1e-4)
    k = np.broadcast_to(np.asarray(n_labels, float), (R,))
    return np.where(k >= 1, 1.0 / (k + 2.0), 1e-4)


def _cause(a, g, conv, bound: float, max_gamma: float) -> np.ndarray:
    """Per row: why a fit is degenerate (:data:`CAUSE_NONE` when it is not)."""
    box = ~conv | (np.abs(a) >= 0.999 * bound) | (g >= 0.999 * bound)
    return np.select([box, g > max_gamma, g <= 1e-9],
                     [CAUSE_NO_MINIMUM, CAUSE_STEP, CAUSE_FLAT], CAUSE_NONE)


def fit_monotone_targets(x, v, targets, aux, *, bound: float = 50.0, max_gamma: float = 4.0,
                         max_iter: int = 40, return_cause: bool = False, n_labels=None):
    """The repair map for each row of ``targets``, never a degenerate one (seed 003 §3, A.11).

    Parameters
    ----------
    x : ndarray, shape (n,)
        Logit confidences of the frame.
    v : ndarray, shape (n,) or (R, n)
        Non-negative weights summing to 1 (per row).
    targets : ndarray, shape (R, n)
        Corrected targets ``T = aux + 1{i∈S}(Y − aux)/ρ`` (may leave [0, 1]).
    aux : ndarray, shape (n,)
        The full-frame auxiliary label in [0, 1].
    bound : float
        Box ``|α|, γ ≤ bound`` of the solver.
    max_gamma : float, default=4
        A fitted slope above this counts as degenerate too: at γ = 4 the map already goes
        from .16 to .84 between c = .4 and c = .6 (at γ = 10 from .02 to .98, a step in all
        but name); an interior minimum of the corrected objective can sit there when a few
        large inverse-probability corrections dominate. Issue 18: on issue 8's stress case,
        93 % of the fits with 4 < γ ≤ 10 scored worse than no repair. A flat fit (γ = 0, the
        constraint γ ≥ 0 binding) counts as degenerate as well: it drops the rule's ranking
        (4.5 % of those fits, every one worse than no repair).
    max_iter : int, default=40
        Newton steps per row before it counts as unconverged (and takes the fallback).
        Rows with a finite minimiser converge in well under 30 steps from the warm start;
        the ones left after that are those whose objective has none, which otherwise crawl
        towards the box for the solver's full 100 steps. The results were identical with
        40 and 100 steps on 12 scenarios × 500 pilots (discrimination .23–3, false-match
        rate .14–.38, stratified and PPS), at 15 % less time for the held-out repair.

    n_labels : int or ndarray of int, shape (R,), optional
        Pilot labels behind each row. The fallbacks' (and a flat fit's) target mean is then
        kept inside ``[1/(k + 2), 1 − 1/(k + 2)]`` for k ≥ 1 (Laplace's rule of succession)
        instead of ``[1e-4, 1 − 1e-4]``: two labels that both say "true" once mapped every answer to
        .9999 (issue 18.9).

    Returns
    -------
    alpha, gamma : ndarray, shape (R,)
    status : ndarray of int, shape (R,)
        :data:`REPAIR_FITTED`, :data:`REPAIR_SHIFTED_RAW`, :data:`REPAIR_SHIFTED` or
        :data:`REPAIR_FLAT` (a flat fit, kept).
    cause : ndarray of int, shape (R,)
        Only with ``return_cause=True``: :data:`CAUSE_NONE` for fitted rows, else why the
        fit was replaced (:data:`CAUSE_NO_MINIMUM`, :data:`CAUSE_FLAT`, :data:`CAUSE_STEP`);
        :func:`repair_reason` says status and cause in words.

    Notes
    -----
    With targets outside [0, 1] the convex objective ``Σ v·softplus(η) − Σ v·T·η`` can be
    unbounded below: the solver then runs to the box and returns a 0/1 step map (γ = 50),
    which is worse than no repair. A row whose fit ends on the box, above ``max_gamma`` or
    unconverged
    falls back to one of two finite maps whose intercept is set so that the weighted mean
    prediction equals the mean corrected target ``Σ v·T`` (the design-unbiased estimate of
    the truth rate, clipped to [1e-4, 1 − 1e-4]): the rule's own confidence (slope 1,
    :data:`REPAIR_SHIFTED_RAW`) or the map fitted to the auxiliary label alone (fractional
    targets, so a finite minimiser; :data:`REPAIR_SHIFTED`, the seed's "reference-only map
    with the pilot's intercept shift"). Of the two, the one with the lower corrected risk
    ``Σ v[softplus(η) − T·η]`` (unbiased for the truth log loss of a fixed map) is kept.
    Clipping the corrected targets to [0, 1] instead was tried and rejected: it caps every
    inverse-probability weight at 1 and pulls the map back to the reference's prevalence
    (Brier .358 against .167 unrepaired on the issue-8 reproduction).
    ``γ ≥ 0`` always.
    """
    x = np.asarray(x, float)
    t = np.atleast_2d(np.asarray(targets, float))
    R, n = t.shape
    v1 = np.asarray(v, float)
    if v1.ndim == 1:  # shared weights: the solver's fast path (reductions over x and v once)
        a, g, conv = fit_monotone_batch(x, v1, t @ v1, t @ (v1 * x), bound=bound,
                                        max_iter=max_iter)
    else:
        a, g, conv = fit_monotone_batch(x[None, :], v1, (v1 * t).sum(1),
                                        (v1 * x[None, :] * t).sum(1), bound=bound,
                                        max_iter=max_iter)
    v = np.broadcast_to(v1, (R, n))
    status = np.zeros(R, np.int64)
    cause = _cause(a, g, conv, bound, max_gamma)
    # a flat fit is the constrained minimum itself (no slope fits better), so no fallback with
    # a slope can have a lower corrected risk: it stays, marked as the fallback it is
    status[cause == CAUSE_FLAT] = REPAIR_FLAT
    flat = np.flatnonzero(cause == CAUSE_FLAT)
    if flat.size:  # the constant: the corrected mean, kept inside the same bounds as below
        floor = _goal_floor(n_labels, R)[flat]
        mean_t = np.clip((v[flat] * t[flat]).sum(1), floor, 1.0 - floor)
        a[flat] = np.log(mean_t) - np.log1p(-mean_t)
    rows = np.flatnonzero((cause == CAUSE_NO_MINIMUM) | (cause == CAUSE_STEP))
    if rows.size:
        va, tr = v[rows], t[rows]
        auxc = np.clip(np.asarray(aux, float), _EPS, 1.0 - _EPS)
        a0, g0, c0 = fit_monotone_batch(x[None, :], va, (va * auxc).sum(1),
                                        (va * auxc * x).sum(1), bound=bound)
        # the auxiliary-only map degenerate too (it separates, or is flat): slope 1
        g0 = np.where(_cause(a0, g0, c0, bound, max_gamma) != CAUSE_NONE, 1.0, g0)
        floor = _goal_floor(n_labels, R)[rows]
        goal = np.clip((va * tr).sum(1), floor, 1.0 - floor)
        best_a = best_g = best_loss = None
        for code, slope in ((REPAIR_SHIFTED_RAW, np.ones(rows.size)), (REPAIR_SHIFTED, g0)):
            alpha = _intercept_for_mean(x, va, slope, goal)
            eta = alpha[:, None] + slope[:, None] * x[None, :]
            loss = (va * (np.logaddexp(0.0, eta) - tr * eta)).sum(1)  # the corrected risk
            if best_loss is None:
                best_a, best_g, best_loss = alpha, slope, loss
                status[rows] = code
            else:
                take = loss < best_loss
                best_a = np.where(take, alpha, best_a)
                best_g = np.where(take, slope, best_g)
                best_loss = np.where(take, loss, best_loss)
                status[rows[take]] = code
        a[rows] = np.clip(best_a, -bound, bound)
        g[rows] = best_g
    return (a, g, status, cause) if return_cause else (a, g, status)


def monotone_repair(c, aux_label, pilot_y, pilot_mask, rho, *, weights=None) -> MonotoneMap:
    """Fit the monotone prediction-powered calibration map of seed 003 §3 (Algorithm 1 step 4).

    Parameters
    ----------
    c : array_like, shape (n,)
        Confidence of the selected rule, full frame.
    aux_label : array_like, shape (n,)
        Full-frame auxiliary label in [0, 1]: Z, a judge Q, or the transfer combination
        ``Z + (Q − Z)β``.
    pilot_y : array_like, shape (n,)
        Human truth, read only where ``pilot_mask`` (NaN allowed elsewhere).
    pilot_mask : array_like, shape (n,)
        Pilot membership (bool) or with-replacement draw counts.
    rho : array_like, shape (n,)
        Inclusion probabilities (or expected draw counts) of the pilot design.
    weights : array_like, shape (n,), optional
        Population weights.

    Returns
    -------
    MonotoneMap
        ``σ(α + γ·logit c)`` with ``γ ≥ 0``.

    Notes
    -----
    Objective (per unit weight): full-frame auxiliary log loss plus the inverse-probability
    weighted pilot correction from the auxiliary label to Y,
    ``W⁻¹ Σ_i w_i ℓ(θ; aux_i) + W⁻¹ Σ_{i∈S} (w_i/ρ_i)[ℓ(θ; Y_i) − ℓ(θ; aux_i)]`` with the
    cross-entropy ``ℓ(θ; t) = softplus(η) − t·η``, ``η = α + γ·logit c``. The correction is
    linear in η, so the objective equals ``W⁻¹ Σ w_i[softplus(η_i) − T_i η_i]`` with
    ``T_i = aux_i + 1{i∈S}(Y_i − aux_i)/ρ_i`` and stays convex; its expectation over the
    design is the full-frame truth log loss. ``logit c`` uses ``c`` clipped to
    [1e-6, 1 − 1e-6]. When ``T`` leaves [0, 1] far enough the objective has no finite
    minimum; :func:`fit_monotone_targets` then falls back (clipped targets, else an intercept
    shift of the auxiliary-only map) and the result has ``converged=False`` and its
    ``reason``.
    """
    cc = check_probabilities(as_float_array(c, "c"), "c")
    aux = check_probabilities(as_float_array(aux_label, "aux_label"), "aux_label")
    py = as_float_array(pilot_y, "pilot_y", allow_nan=True)
    rho = as_float_array(rho, "rho", allow_nan=True)
    n = check_same_length(c=cc, aux_label=aux, pilot_y=py, rho=rho)
    counts = np.asarray(pilot_mask).astype(float)
    if counts.shape != (n,) or np.any(counts < 0):
        raise ValueError("pilot_mask must be a boolean or non-negative count array of length n")
    w = check_weights(weights, n)
    s = counts > 0
    if np.any(~np.isfinite(rho[s])) or np.any(rho[s] <= 0):
        raise ValueError("rho must be > 0 on pilot items")
    check_labels(py[s], "pilot_y", binary=False)
    corr = np.where(s, counts * (np.nan_to_num(py) - aux) / np.where(s, rho, 1.0), 0.0)
    target = aux + corr
    x = safe_logit(cc)
    W = w.sum()
    v = w / W
    a, g, status, cause = fit_monotone_targets(x, v, target[None, :], aux, return_cause=True,
                                               n_labels=int(counts.sum()))
    return MonotoneMap(alpha=float(a[0]), gamma=float(g[0]), n_pilot=int(counts.sum()),
                       converged=bool(status[0] == REPAIR_FITTED),
                       reason=repair_reason(int(status[0]), int(cause[0])))
