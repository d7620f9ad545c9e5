"""Prediction-powered inference (PPI/PPI++) for a mean, and its survey-sampling relatives.

Sources: Angelopoulos et al. (Science 2023, PPI); Angelopoulos, Duchi & Zrnic (arXiv
2311.01453, PPI++); ppi_py 0.2.3 (``ppi_mean_ci``/``ppi_mean_pointestimate``/
``classical_mean_ci``, the parity oracle); the calibration notes §2.1
(ppi_py), §5.3 (PPI++ mean and conventions), §5.4 (several control variates), §5.5
(stratified; Horvitz–Thompson with known inclusion probabilities), §5.6 (finite-population
difference estimator), pitfall §6.9; seed 003
§3 Eq. 3 and §5.5 (TriSource-Restore: a probability-sampled human pilot, design-based and
clustered intervals, fixed transfer β), restated in the label-source notes.

Notation: a labeled pilot of n items with truth Y and proxy Ŷ; N unlabeled items with Ŷ only
(or, for the finite-population and Horvitz–Thompson estimators, the whole pool of N items).

Conventions (ppi_py 0.2.3, calibration-notes §5.3)
-------------------------------------------------
* Covariance Ĉov_L(Y, Ŷ) uses 1/n (ddof 0); the pooled variance of Ŷ over L ∪ U uses ddof 1;
  λ̂ = Ĉov_L(Y, Ŷ) / ((1 + n/N) · V̂ar_{L∪U}(Ŷ)), clipped to [0, 1] by default (``clip=True``;
  clipping only applies to an *estimated* λ). If the pooled variance is 0 (a constant proxy)
  λ̂ = 0 (ppi_py would return NaN).
* Standard errors use numpy's ddof 0: SE² = λ² Var_U(Ŷ)/N + Var_L(Y − λŶ)/n.
* Intervals are two-sided normal, estimate ± z_{1−α/2}·SE. **Our default is α = 0.05 (95 %);
  ppi_py's default is α = 0.1 (90 %)** — pass ``alpha=0.1`` to reproduce its defaults.
* λ = 0 gives the classical interval, λ = 1 plain PPI.

Vectorisation: :func:`classical_mean_ci`, :func:`ppi_mean_pointestimate`,
:func:`ppi_mean_ci`, :func:`difference_estimator_ci` and :func:`horvitz_thompson_ci` accept
arrays of shape ``(..., n)``: leading axes index repetitions (e.g. 5,000 simulated pilots ×
50 items) and broadcast against each other, e.g. a ``(R, n)`` pilot with a shared ``(N,)``
unlabeled set. Results then hold arrays of the leading shape; for 1-D input they hold floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.calibration._checks import as_float_array, check_alpha, check_min_size, z_quantile

__all__ = [
    "PPIResult",
    "StratifiedPPIResult",
    "classical_mean_ci",
    "difference_estimator_ci",
    "horvitz_thompson_ci",
    "multi_ppi_mean_ci",
    "ppi_mean_ci",
    "ppi_mean_pointestimate",
    "stratified_ppi_mean_ci",
]


@dataclass(frozen=True, eq=False)
class PPIResult:
    """Point estimate and two-sided normal interval of a mean.

    Fields are floats for 1-D input and arrays of the leading (repetition) shape otherwise.

    Attributes
    ----------
    estimate : float or ndarray
    low, high : float or ndarray
        estimate ∓ z_{1−α/2}·se.
    se : float or ndarray
        Estimated standard error.
    lam : float or ndarray
        λ used (0 for the classical estimator; a length-k vector for several variates).
    n : int or ndarray
        Labeled (pilot) items used.
    N : int
        Unlabeled items (PPI) or pool size (finite-population / Horvitz–Thompson).
    alpha : float
        Error level; coverage target 1 − α.
    method : str
        "classical", "ppi", "difference", "multi_ppi" or "horvitz_thompson".
    n_clusters : int or ndarray or None
        Distinct sampled clusters (Horvitz–Thompson with ``clusters``), else None.
    """

    estimate: Any
    low: Any
    high: Any
    se: Any
    lam: Any
    n: Any
    N: int
    alpha: float
    method: str
    n_clusters: Any = None

    @property
    def width(self):
        """Interval width high − low."""
        return self.high - self.low


def _out(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def _interval(est, se, alpha):
    z = z_quantile(alpha)
    return est - z * se, est + z * se


def _leading(*arrays: np.ndarray) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"leading (repetition) axes do not broadcast: {shapes}") from None


def _labeled(y, yhat):
    y = as_float_array(y, "y", ndim=None)
    yhat = as_float_array(yhat, "yhat", ndim=None)
    if y.shape != yhat.shape:
        raise ValueError(f"y and yhat must have the same shape, got {y.shape} and {yhat.shape}")
    check_min_size(y.shape[-1], 2, "labeled items")
    return y, yhat


def classical_mean_ci(y, *, alpha: float = 0.05) -> PPIResult:
    """Classical CLT interval for a mean from the labeled data alone.

    Parameters
    ----------
    y : array_like, shape (..., n)
        Labeled outcomes (n ≥ 2); leading axes are repetitions.
    alpha : float, default 0.05
        Error level (ppi_py's default is 0.1).

    Returns
    -------
    PPIResult
        ``method="classical"``, ``lam=0``, ``N=0``.

    Notes
    -----
    ppi_py 0.2.3 ``classical_mean_ci`` convention (calibration-notes §5.3): SE = std(y)/√n with
    ddof 0. Equal to :func:`ppi_mean_ci` with ``lam=0``.
    """
    alpha = check_alpha(alpha)
    y = as_float_array(y, "y", ndim=None)
    n = y.shape[-1]
    check_min_size(n, 2, "labeled items")
    est = y.mean(-1)
    se = y.std(-1) / np.sqrt(n)
    lo, hi = _interval(est, se, alpha)
    return PPIResult(estimate=_out(est), low=_out(lo), high=_out(hi), se=_out(se), lam=0.0,
                     n=n, N=0, alpha=alpha, method="classical")


def _ppi_parts(y, yhat, yhat_unlabeled, lam, clip):
    y, yhat = _labeled(y, yhat)
    yu = as_float_array(yhat_unlabeled, "yhat_unlabeled", ndim=None)
    _leading(y, yu)
    n, N = y.shape[-1], yu.shape[-1]
    mu_u = yu.mean(-1)
    if lam is None:
        yc = y - y.mean(-1, keepdims=True)
        hc = yhat - yhat.mean(-1, keepdims=True)
        cov = (yc * hc).mean(-1)
        # pooled ddof-1 variance of Ŷ over L ∪ U via the two-group combination formula
        mu_l = yhat.mean(-1)
        ss = (hc**2).sum(-1) + ((yu - mu_u[..., None]) ** 2).sum(-1) + (
            n * N / (n + N)) * (mu_l - mu_u) ** 2
        var = ss / (n + N - 1)
        denom = (1.0 + n / N) * var
        lam_arr = np.divide(cov, denom, out=np.zeros(np.broadcast(cov, denom).shape),
                            where=denom > 0)
        if clip:
            lam_arr = np.clip(lam_arr, 0.0, 1.0)
    else:
        lam_arr = np.asarray(lam, dtype=float)
        if not np.all(np.isfinite(lam_arr)):
            raise ValueError("lam must be finite")
    est = lam_arr * mu_u + (y - lam_arr[..., None] * yhat).mean(-1)
    return y, yhat, yu, n, N, lam_arr, est


def ppi_mean_pointestimate(y, yhat, yhat_unlabeled, *, lam=None, clip: bool = True):
    """PPI/PPI++ point estimate θ̂_λ = λ·mean_U(Ŷ) + mean_L(Y − λŶ).

    Parameters
    ----------
    y, yhat : array_like, shape (..., n)
        Truth and proxy on the labeled items (n ≥ 2).
    yhat_unlabeled : array_like, shape (..., N)
        Proxy on the unlabeled items (leading axes broadcast with ``y``).
    lam : float or array_like, optional
        Fixed λ (0 classical, 1 PPI); ``None`` power-tunes λ̂ (PPI++).
    clip : bool, default True
        Clip an estimated λ̂ to [0, 1] (ppi_py does so in ``ppi_mean_pointestimate``).

    Returns
    -------
    float or ndarray

    Notes
    -----
    calibration-notes §5.3; ppi_py 0.2.3 ``ppi_mean_pointestimate`` conventions (see module
    docstring: covariance ddof 0, pooled variance ddof 1).
    """
    *_, est = _ppi_parts(y, yhat, yhat_unlabeled, lam, clip)
    return _out(est)


def ppi_mean_ci(y, yhat, yhat_unlabeled, *, alpha: float = 0.05, lam=None,
                clip: bool = True) -> PPIResult:
    """PPI++ (power-tuned) or fixed-λ PPI confidence interval for a mean.

    Parameters
    ----------
    y, yhat : array_like, shape (..., n)
        Truth and proxy on the labeled items (n ≥ 2); leading axes are repetitions.
    yhat_unlabeled : array_like, shape (..., N)
        Proxy on the unlabeled items; an ``(N,)`` array is shared by all repetitions.
    alpha : float, default 0.05
        Error level (**ppi_py's default is 0.1**; ours gives a 95 % interval).
    lam : float or array_like, optional
        ``None`` (default) estimates λ̂ (PPI++); 0 gives the classical interval, 1 plain PPI.
    clip : bool, default True
        Clip the estimated λ̂ to [0, 1] (ppi_py's behaviour in ``ppi_mean_ci``).

    Returns
    -------
    PPIResult
        ``method="ppi"``.

    Notes
    -----
    calibration-notes §5.3 and pitfall §6.9 — ppi_py 0.2.3 conventions: λ̂ =
    Ĉov_L(Y, Ŷ) [ddof 0] / ((1 + n/N) · V̂ar_{L∪U}(Ŷ) [ddof 1]); SE² = λ² Var_U(Ŷ)/N +
    Var_L(Y − λŶ)/n with ddof 0; interval θ̂ ± z_{1−α/2}·SE. A constant proxy (pooled
    variance 0) gives λ̂ = 0. PPI assumes L and U are independent i.i.d. samples: when the
    pilot is drawn from a finite pool, use the pool minus the pilot as U, or
    :func:`difference_estimator_ci` (§5.6). Parity with ppi_py to ~1e-15.

    Examples
    --------
    >>> r = ppi_mean_ci([1, 0, 1, 1], [1, 0, 1, 0], [1, 1, 0, 1, 0, 1], lam=0)
    >>> round(r.estimate, 4), r.lam
    (0.75, 0.0)
    """
    alpha = check_alpha(alpha)
    y, yhat, yu, n, N, lam_arr, est = _ppi_parts(y, yhat, yhat_unlabeled, lam, clip)
    var_u = yu.var(-1)
    var_r = (y - lam_arr[..., None] * yhat).var(-1)
    se = np.sqrt(lam_arr**2 * var_u / N + var_r / n)
    lo, hi = _interval(est, se, alpha)
    return PPIResult(estimate=_out(est), low=_out(lo), high=_out(hi), se=_out(se),
                     lam=_out(lam_arr), n=n, N=N, alpha=alpha, method="ppi")


def difference_estimator_ci(y, yhat, yhat_pool, *, alpha: float = 0.05, lam=None,
                            clip: bool = False, fpc: bool = True) -> PPIResult:
    """Survey difference/regression estimator of a finite-pool mean with an FPC.

    Parameters
    ----------
    y, yhat : array_like, shape (..., n)
        Truth and proxy on a simple random sample without replacement (the pilot), n ≥ 2.
    yhat_pool : array_like, shape (..., N)
        Proxy for **every** pool item, the pilot items included (N ≥ n).
    alpha : float, default 0.05
        Error level.
    lam : float or array_like, optional
        ``None`` estimates λ̂ = S_{YŶ} / S²_Ŷ on the pilot (the regression estimator; λ̂ = 0 if
        S²_Ŷ = 0); 1 gives the difference estimator; 0 the sample mean with FPC.
    clip : bool, default False
        Clip an estimated λ̂ to [0, 1] (off by default: the survey regression estimator is
        not clipped).
    fpc : bool, default True
        Apply the finite-population correction (1 − n/N).

    Returns
    -------
    PPIResult
        ``method="difference"``, ``N`` = pool size.

    Notes
    -----
    calibration-notes §5.6 — the estimand is the mean of Y over *this* pool of N items; the
    pool mean of Ŷ is known exactly, so there is no unlabeled-variance term:
    θ̂ = mean_pool(λŶ) + mean_pilot(Y − λŶ), Var = (1 − n/N)·S²_{Y−λŶ}/n with S² the ddof-1
    sample variance, and optimal λ = S_{YŶ}/S²_Ŷ (no (1 + n/N) factor). **ddof:** S² uses
    n − 1 for a fixed λ and n − 2 for an estimated λ̂ (the residual variance of the fitted
    regression estimator, Cochran/Särndal; n − 1 if n = 2); otherwise the variance ignores
    the estimation of λ̂, so small pilots (n ≲ 50) can under-cover by about a point.
    """
    alpha = check_alpha(alpha)
    y, yhat = _labeled(y, yhat)
    yp = as_float_array(yhat_pool, "yhat_pool", ndim=None)
    _leading(y, yp)
    n, N = y.shape[-1], yp.shape[-1]
    if n > N:
        raise ValueError(f"pilot size n={n} exceeds pool size N={N}")
    if lam is None:
        hc = yhat - yhat.mean(-1, keepdims=True)
        sxy = (hc * (y - y.mean(-1, keepdims=True))).sum(-1)
        sxx = (hc**2).sum(-1)
        lam_arr = np.divide(sxy, sxx, out=np.zeros_like(sxy), where=sxx > 0)
        if clip:
            lam_arr = np.clip(lam_arr, 0.0, 1.0)
    else:
        lam_arr = np.asarray(lam, dtype=float)
        if not np.all(np.isfinite(lam_arr)):
            raise ValueError("lam must be finite")
    e = y - lam_arr[..., None] * yhat
    est = lam_arr * yp.mean(-1) + e.mean(-1)
    factor = (1.0 - n / N) if fpc else 1.0
    ddof = 2 if (lam is None and n > 2) else 1  # a fitted slope costs a degree of freedom
    se = np.sqrt(factor * e.var(-1, ddof=ddof) / n)
    lo, hi = _interval(est, se, alpha)
    return PPIResult(estimate=_out(est), low=_out(lo), high=_out(hi), se=_out(se),
                     lam=_out(lam_arr), n=n, N=N, alpha=alpha, method="difference")


def multi_ppi_mean_ci(y, yhat, yhat_unlabeled, *, alpha: float = 0.05, lam=None,
                      ridge: float = 0.0) -> PPIResult:
    """PPI++ mean with several control variates (vector λ), e.g. proxy labels and judges.

    Parameters
    ----------
    y : array_like, shape (n,)
        Labeled truth (n ≥ 2).
    yhat : array_like, shape (n, k) or (n,)
        The k proxies on the labeled items.
    yhat_unlabeled : array_like, shape (N, k) or (N,)
        The same proxies on the unlabeled items.
    alpha : float, default 0.05
        Error level.
    lam : array_like of length k, optional
        Fixed λ (a scalar is broadcast, e.g. ``1/sqrt(k)`` as glide's MultiPPI default);
        ``None`` tunes λ̂.
    ridge : float, default 0.0
        Ridge penalty, relative to the mean diagonal of Σ̂: λ̂ uses Σ̂ + ridge·mean(diag Σ̂)·I.

    Returns
    -------
    PPIResult
        ``method="multi_ppi"``; ``lam`` is a length-k array.

    Notes
    -----
    calibration-notes §5.4: θ̂ = mean_L(Y) + λᵀ(mean_U(Ŷ) − mean_L(Ŷ));
    λ̂ = N/(n + N) · Σ̂⁻¹ ĉov_L(Ŷ, Y) with Σ̂ the pooled (L ∪ U) covariance of Ŷ;
    SE² = Var_L(Y − Ŷλ)/n + Var_U(Ŷλ)/N. Conventions follow ppi_py's scalar case (ĉov ddof 0,
    Σ̂ ddof 1, SE ddof 0), so k = 1 reproduces :func:`ppi_mean_ci` with ``clip=False``.
    **Singular Σ̂ guard:** the inverse is a Moore–Penrose pseudo-inverse (``numpy.linalg.pinv``,
    hermitian, rcond 1e-10), so perfectly collinear or constant proxies get the minimum-norm
    λ̂ instead of an error; ``ridge > 0`` additionally shrinks λ̂ when k is large relative to n
    (n ≲ 10k makes λ̂ noisy). λ̂ is not clipped.
    """
    alpha = check_alpha(alpha)
    y = as_float_array(y, "y")
    h = as_float_array(yhat, "yhat", ndim=None)
    hu = as_float_array(yhat_unlabeled, "yhat_unlabeled", ndim=None)
    h = h[:, None] if h.ndim == 1 else h
    hu = hu[:, None] if hu.ndim == 1 else hu
    if h.ndim != 2 or hu.ndim != 2:
        raise ValueError("yhat and yhat_unlabeled must be 1-D or 2-D (items × proxies)")
    n, k = h.shape
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} items but yhat has {n}")
    if hu.shape[1] != k:
        raise ValueError(f"yhat has {k} proxies but yhat_unlabeled has {hu.shape[1]}")
    check_min_size(n, 2, "labeled items")
    N = hu.shape[0]
    if ridge < 0 or not np.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge}")
    if lam is None:
        hc = h - h.mean(0)
        c = hc.T @ (y - y.mean()) / n
        sigma = np.atleast_2d(np.cov(np.concatenate([h, hu], axis=0), rowvar=False))
        if ridge > 0:
            sigma = sigma + ridge * np.mean(np.diag(sigma)) * np.eye(k)
        lam_vec = N / (n + N) * (np.linalg.pinv(sigma, rcond=1e-10, hermitian=True) @ c)
    else:
        lam_vec = np.broadcast_to(np.asarray(lam, dtype=float), (k,)).copy()
        if not np.all(np.isfinite(lam_vec)):
            raise ValueError("lam must be finite")
    est = y.mean() + lam_vec @ (hu.mean(0) - h.mean(0))
    se = np.sqrt((y - h @ lam_vec).var() / n + (hu @ lam_vec).var() / N)
    lo, hi = _interval(est, se, alpha)
    return PPIResult(estimate=float(est), low=float(lo), high=float(hi), se=float(se),
                     lam=lam_vec, n=n, N=N, alpha=alpha, method="multi_ppi")


@dataclass(frozen=True, eq=False)
class StratifiedPPIResult:
    """Stratified PPI++ estimate: Σ_h W_h θ̂_h with SE² = Σ_h W_h² SE_h².

    Attributes
    ----------
    estimate, low, high, se : float
    n, N : int
        Total labeled and unlabeled items.
    alpha : float
    strata : tuple
        Stratum labels (sorted).
    weights : ndarray
        W_h, summing to 1.
    per_stratum : tuple of PPIResult
        The within-stratum PPI++ results.
    """

    estimate: float
    low: float
    high: float
    se: float
    n: int
    N: int
    alpha: float
    strata: tuple
    weights: np.ndarray
    per_stratum: tuple


def stratified_ppi_mean_ci(y, yhat, strata, yhat_unlabeled, strata_unlabeled, *,
                           alpha: float = 0.05, lam=None, clip: bool = True,
                           stratum_weights=None) -> StratifiedPPIResult:
    """Stratified PPI++: PPI++ within each stratum, combined with stratum weights.

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Labeled truth and proxy.
    strata : array_like, shape (n,)
        Stratum label of each labeled item.
    yhat_unlabeled : array_like, shape (N,)
        Unlabeled proxy.
    strata_unlabeled : array_like, shape (N,)
        Stratum label of each unlabeled item.
    alpha : float, default 0.05
        Error level.
    lam : float, optional
        Fixed λ for every stratum; ``None`` tunes λ̂_h per stratum.
    clip : bool, default True
        Clip each estimated λ̂_h to [0, 1].
    stratum_weights : mapping, optional
        {label: W_h} population shares (normalised to sum 1). Default
        W_h = (n_h + N_h)/(n + N), the stratum's share of all items.

    Returns
    -------
    StratifiedPPIResult

    Notes
    -----
    calibration-notes §5.5 (Fisch et al. 2024, stratified PPI): θ̂ = Σ_h W_h θ̂_h,
    SE² = Σ_h W_h² SE_h², normal interval. Each stratum needs at least 2 labeled and 2
    unlabeled items (ValueError otherwise). Within-stratum conventions as
    :func:`ppi_mean_ci`.
    """
    alpha = check_alpha(alpha)
    y = as_float_array(y, "y")
    yhat = as_float_array(yhat, "yhat")
    yu = as_float_array(yhat_unlabeled, "yhat_unlabeled")
    s = np.asarray(strata)
    su = np.asarray(strata_unlabeled)
    if not (y.shape == yhat.shape == s.shape):
        raise ValueError("y, yhat and strata must have the same length")
    if yu.shape != su.shape:
        raise ValueError("yhat_unlabeled and strata_unlabeled must have the same length")
    labels = np.unique(np.concatenate([s, su]))
    results, shares = [], []
    for h in labels:
        ml, mu = s == h, su == h
        nh, Nh = int(ml.sum()), int(mu.sum())
        if nh < 2 or Nh < 2:
            raise ValueError(f"stratum {h!r} needs >= 2 labeled and >= 2 unlabeled items, "
                             f"got {nh} and {Nh}")
        results.append(ppi_mean_ci(y[ml], yhat[ml], yu[mu], alpha=alpha, lam=lam, clip=clip))
        shares.append(nh + Nh)
    if stratum_weights is None:
        W = np.asarray(shares, float)
    else:
        missing = [h for h in labels.tolist() if h not in stratum_weights]
        if missing:
            raise ValueError(f"stratum_weights lacks strata {missing}")
        W = np.asarray([float(stratum_weights[h]) for h in labels.tolist()])
        if not np.all(np.isfinite(W)) or np.any(W < 0) or W.sum() <= 0:
            raise ValueError("stratum_weights must be finite, >= 0 and not all 0")
    W = W / W.sum()
    est = float(sum(w * r.estimate for w, r in zip(W, results, strict=True)))
    se = float(np.sqrt(sum(w**2 * r.se**2 for w, r in zip(W, results, strict=True))))
    lo, hi = _interval(est, se, alpha)
    W.setflags(write=False)
    return StratifiedPPIResult(estimate=est, low=float(lo), high=float(hi), se=se,
                               n=int(y.size), N=int(yu.size), alpha=alpha,
                               strata=tuple(labels.tolist()), weights=W,
                               per_stratum=tuple(results))


def horvitz_thompson_ci(y, yhat, pi, yhat_pool, *, alpha: float = 0.05, lam: float = 1.0,
                        sampled=None, clusters=None, weights=None,
                        pool_weights=None) -> PPIResult:
    """Design-based (Horvitz–Thompson) PPI estimate for a probability-sampled pilot.

    Parameters
    ----------
    y, yhat : array_like, shape (..., n)
        Truth and proxy of the pilot items (leading axes are repetitions).
    pi : array_like, shape (..., n)
        Known first-order inclusion probabilities, 0 < π ≤ 1.
    yhat_pool : array_like, shape (..., N)
        Proxy for **every** pool item (pilot items included); ``(N,)`` is shared.
    alpha : float, default 0.05
        Error level.
    lam : float, default 1.0
        Fixed coefficient on the proxy. It must not be tuned on the same pilot if exact
        design-unbiasedness is wanted (seed 003 §3: β fixed by transfer).
    sampled : array_like of bool, shape (..., n), optional
        Which entries are real pilot items; False entries are ignored (their y, yhat, pi may
        be NaN). Lets a simulator pass variable-size (e.g. Poisson) samples as one
        ``(R, N)`` array.
    clusters : array_like, shape (..., n), optional
        Cluster label per pilot item for cluster (whole-cluster Poisson) sampling; π must be
        constant within a cluster.
    weights : array_like, shape (..., n), optional
        Population weights w_i of the pilot items (seed 003's sampling weights).
    pool_weights : array_like, shape (..., N), optional
        Population weights of all pool items; required with ``weights``.

    Returns
    -------
    PPIResult
        ``method="horvitz_thompson"``; ``n`` = pilot items, ``N`` = pool size;
        ``n_clusters`` = sampled clusters when ``clusters`` is given.

    Notes
    -----
    calibration-notes §5.5 and seed 003 §3 Eq. 3 (label-source-notes): with e_i = Y_i − λŶ_i
    and W = Σ_pool w_i (W = N with unit weights),
    θ̂ = W⁻¹ [Σ_pool w_i λŶ_i + Σ_pilot (w_i/π_i) e_i], unbiased over the design for any
    fixed λ. **Variance (Poisson design):** V̂ = W⁻² Σ_pilot (1 − π_i)(w_i e_i/π_i)².
    **Clustering:** with ``clusters``, the HT totals are summed per cluster,
    t_c = Σ_{i∈c} w_i e_i/π_i, and V̂ = W⁻² Σ_c (1 − π_c) t_c², the Poisson-design variance
    for sampling whole clusters with probability π_c (it reduces to the item formula when
    each item is its own cluster). Fixed-size designs (e.g. stratified SRS) are treated with
    this Poisson formula as an approximation. Passing w = 1/π to ppi_py is not equivalent
    (it rescales weights and uses a plug-in SD; §5.5). Normal interval θ̂ ± z·√V̂.
    Every repetition needs at least 2 sampled items. V̂ is design-unbiased, but with few
    sampled clusters (≲ 30) and skewed totals e/π the normal interval under-covers (0.91 at
    ~30 clusters in our simulation vs 0.94 at ~80); seed 003 Algorithm 1 escalates below 8.
    """
    alpha = check_alpha(alpha)
    lam = float(lam)
    if not np.isfinite(lam):
        raise ValueError("lam must be finite")
    y = as_float_array(y, "y", ndim=None, allow_nan=True)
    yhat = as_float_array(yhat, "yhat", ndim=None, allow_nan=True)
    pi = as_float_array(pi, "pi", ndim=None, allow_nan=True)
    yp = as_float_array(yhat_pool, "yhat_pool", ndim=None)
    if not (y.shape == yhat.shape == pi.shape):
        raise ValueError(f"y, yhat and pi must have the same shape, got {y.shape}, "
                         f"{yhat.shape}, {pi.shape}")
    lead = _leading(y, yp)
    if sampled is None:
        mask = np.ones(y.shape, bool)
    else:
        mask = np.asarray(sampled)
        if mask.dtype != bool or mask.shape != y.shape:
            raise ValueError("sampled must be a boolean array with the shape of y")
    if weights is None and pool_weights is None:
        w = np.ones(y.shape)
        W = np.full(yp.shape[:-1], float(yp.shape[-1]))
        wsum_pool = yp.sum(-1)
    elif weights is not None and pool_weights is not None:
        w = as_float_array(weights, "weights", ndim=None, allow_nan=True)
        wp = as_float_array(pool_weights, "pool_weights", ndim=None)
        if w.shape != y.shape or wp.shape != yp.shape:
            raise ValueError("weights must match y and pool_weights must match yhat_pool")
        if np.any(wp <= 0) or np.any(w[mask] <= 0):
            raise ValueError("weights and pool_weights must be > 0")
        W = wp.sum(-1)
        wsum_pool = (wp * yp).sum(-1)
    else:
        raise ValueError("pass both weights and pool_weights, or neither")
    bad = ~(np.isfinite(y) & np.isfinite(yhat) & np.isfinite(pi) & np.isfinite(w)) & mask
    if bad.any():
        raise ValueError(f"{int(bad.sum())} sampled item(s) have non-finite y, yhat, pi or "
                         "weights")
    if np.any(mask & ((pi <= 0) | (pi > 1))):
        raise ValueError("pi must be in (0, 1] for every sampled item")
    n = mask.sum(-1)
    if np.any(n < 2):
        raise ValueError(f"need at least 2 sampled items per repetition, got {int(n.min())}")
    safe_pi = np.where(mask, pi, 1.0)
    e = np.where(mask, y, 0.0) - lam * np.where(mask, yhat, 0.0)
    contrib = np.where(mask, w, 0.0) * e / safe_pi
    est = (lam * wsum_pool + contrib.sum(-1)) / W
    n_clusters = None
    if clusters is None:
        v = ((1.0 - safe_pi) * contrib**2).sum(-1)
    else:
        c = np.asarray(clusters)
        if c.shape != y.shape:
            raise ValueError("clusters must have the shape of y")
        v, n_clusters = _cluster_variance(contrib, safe_pi, mask, c)
    se = np.sqrt(v) / W
    est, se = np.broadcast_to(est, lead), np.broadcast_to(se, lead)
    lo, hi = _interval(est, se, alpha)
    return PPIResult(estimate=_out(est), low=_out(lo), high=_out(hi), se=_out(se), lam=lam,
                     n=_out(n), N=int(yp.shape[-1]), alpha=alpha, method="horvitz_thompson",
                     n_clusters=None if n_clusters is None else _out(n_clusters))


def _cluster_variance(contrib, pi, mask, clusters):
    """Σ_c (1 − π_c) t_c² per repetition, t_c the cluster sum of HT contributions."""
    lead = contrib.shape[:-1]
    R = int(np.prod(lead)) if lead else 1
    n = contrib.shape[-1]
    flat = mask.reshape(-1)
    sel = np.flatnonzero(flat)
    row = sel // n
    labels = clusters.reshape(-1)[sel]
    if np.issubdtype(labels.dtype, np.integer) and labels.min() >= 0 and labels.max() < 4 * n:
        codes = labels.astype(np.int64)  # small non-negative ints: use as codes directly
    else:
        _, codes = np.unique(labels, return_inverse=True)
    K = int(codes.max()) + 1
    key = row * K + codes
    t = np.bincount(key, weights=contrib.reshape(-1)[sel], minlength=R * K)
    pim = pi.reshape(-1)[sel]
    cnt = np.bincount(key, minlength=R * K)
    pbar = np.bincount(key, weights=pim, minlength=R * K) / np.maximum(cnt, 1)
    if np.any(np.abs(pim - pbar[key]) > 1e-12):
        raise ValueError("pi must be constant within each sampled cluster")
    v = ((1.0 - pbar) * t**2).reshape(R, K).sum(1).reshape(lead)
    nc = (cnt > 0).reshape(R, K).sum(1).reshape(lead)
    return v, nc
