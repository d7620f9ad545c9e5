"""CORP reliability curve and the MCB/DSC/UNC decomposition of the Brier score.

Sources: Dimitriadis, Gneiting & Jordan (PNAS 2021, "CORP"); seed 003 §4 (discrimination
measured by the CORP DSC component; the audited rules sit at DSC .001–.036); the calibration
notes §5.1 (exact definitions), §2.4 (model-diagnostics ``decompose``; R ``reliabilitydiag``
ordering and consistency bands), pitfall §6.1 (tie pooling).

Conventions
-----------
* **Tied forecasts are pooled.** The PAV (isotonic, non-decreasing) regression of y on p is
  computed on the distinct forecast values, each carrying the weighted mean outcome and the
  total weight of its ties, so tied forecasts always share one recalibrated value. This is
  what scikit-learn's ``IsotonicRegression`` does and is equivalent to R reliabilitydiag's
  "sort by p ascending, then y descending". Running PAV on x-sorted data with ties left in
  arbitrary order instead inflates MCB (7× in calibration-notes §6.1).
* Scores are weighted means S(q) = Σ w (q − y)² / Σ w.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression

from core.calibration._checks import (
    as_float_array,
    check_forecasts,
    check_level,
    check_probabilities,
    check_weights,
)

__all__ = [
    "CorpBand",
    "CorpCurve",
    "CorpDecomposition",
    "corp_consistency_band",
    "corp_curve",
    "corp_decomposition",
]


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _pooled_pav(x: np.ndarray, y: np.ndarray, w: np.ndarray):
    """PAV fit of y on x with tied x pooled: (unique x, fit at unique x, weight, inverse)."""
    ux, inv = np.unique(x, return_inverse=True)
    wu = np.bincount(inv, weights=w, minlength=ux.size)
    yu = np.bincount(inv, weights=w * y, minlength=ux.size) / wu
    fit = isotonic_regression(yu, weights=wu, increasing=True).x
    return ux, fit, wu, inv


@dataclass(frozen=True, eq=False)
class CorpCurve:
    """CORP reliability curve: the pooled PAV recalibration of y on p.

    Attributes
    ----------
    forecast : ndarray
        The distinct forecast values, ascending.
    calibrated : ndarray
        The isotonic (PAV) conditional event probability at each distinct forecast
        (non-decreasing).
    weight : ndarray
        Total weight of each distinct forecast (its count with unit weights).
    recalibrated : ndarray
        The PAV value for each input item, in input order.
    """

    forecast: np.ndarray
    calibrated: np.ndarray
    weight: np.ndarray
    recalibrated: np.ndarray


def corp_curve(p, y, *, weights=None) -> CorpCurve:
    """CORP reliability curve: isotonic regression of y on p with tied forecasts pooled.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    y : array_like, shape (n,)
        Binary outcomes (probability labels in [0, 1] are accepted).
    weights : array_like, shape (n,), optional
        Positive finite weights (enter PAV as block weights).

    Returns
    -------
    CorpCurve

    Notes
    -----
    calibration-notes §5.1 and pitfall §6.1. Ties are pooled explicitly (distinct p values
    with their weighted mean outcome and total weight) before
    ``scipy.optimize.isotonic_regression``; this equals scikit-learn's
    ``IsotonicRegression(increasing=True)`` at the data points and R reliabilitydiag's
    "p ascending, y descending" ordering. Plot as a step function (constant on PAV blocks)
    or by connecting ``(forecast, calibrated)``.

    Examples
    --------
    >>> c = corp_curve([0.2, 0.2, 0.8], [1, 0, 1])
    >>> c.forecast.tolist(), c.calibrated.tolist()
    ([0.2, 0.8], [0.5, 1.0])
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    ux, fit, wu, inv = _pooled_pav(p, y, w)
    return CorpCurve(forecast=_ro(ux), calibrated=_ro(fit), weight=_ro(wu),
                     recalibrated=_ro(fit[inv]))


@dataclass(frozen=True)
class CorpDecomposition:
    """CORP score decomposition S(p) = MCB − DSC + UNC (Brier score).

    Attributes
    ----------
    score : float
        S(p), the (weighted) Brier score of the forecast.
    mcb : float
        Miscalibration S(p) − S(r) ≥ 0, r the pooled PAV fit.
    dsc : float
        Discrimination S(ȳ) − S(r) ≥ 0.
    unc : float
        Uncertainty S(ȳ) (= ȳ(1 − ȳ) for binary y).
    n : int
    """

    score: float
    mcb: float
    dsc: float
    unc: float
    n: int


def corp_decomposition(p, y, *, weights=None) -> CorpDecomposition:
    """CORP decomposition of the Brier score into MCB, DSC and UNC.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    y : array_like, shape (n,)
        Binary outcomes (probability labels in [0, 1] are accepted).
    weights : array_like, shape (n,), optional
        Positive finite weights; all means and the PAV fit are weighted.

    Returns
    -------
    CorpDecomposition

    Notes
    -----
    calibration-notes §5.1: with r the PAV fit (tied forecasts pooled) and
    S(q) = Σ w (q − y)² / Σ w: UNC = S(ȳ), MCB = S(p) − S(r), DSC = S(ȳ) − S(r); hence
    S(p) = MCB − DSC + UNC exactly. MCB ≥ 0 and DSC ≥ 0 because r is the in-sample optimum
    among monotone fits, which include p itself and the constant ȳ; rounding-level negatives
    (|x| ~ 1e-17) are clipped to 0, which moves the identity by less than 1e-15. Matches
    model-diagnostics 1.5.0 ``scoring.decompose(..., SquaredError())`` (columns
    miscalibration, discrimination, uncertainty, score), with or without weights.

    Examples
    --------
    >>> d = corp_decomposition([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    >>> round(d.score, 6), round(d.mcb, 6), round(d.dsc, 6), round(d.unc, 6)
    (0.19, 0.065, 0.0625, 0.1875)
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    _, fit, _, inv = _pooled_pav(p, y, w)
    r = fit[inv]
    W = np.sum(w)
    ybar = np.sum(w * y) / W
    s_p = np.sum(w * (p - y) ** 2) / W
    s_r = np.sum(w * (r - y) ** 2) / W
    s_c = np.sum(w * (ybar - y) ** 2) / W
    return CorpDecomposition(score=float(s_p), mcb=float(max(s_p - s_r, 0.0)),
                             dsc=float(max(s_c - s_r, 0.0)), unc=float(s_c), n=int(p.size))


@dataclass(frozen=True, eq=False)
class CorpBand:
    """Pointwise consistency band for the CORP curve under the hypothesis of calibration.

    Attributes
    ----------
    forecast : ndarray
        Distinct forecast values (ascending), as in :class:`CorpCurve`.
    low, high : ndarray
        Pointwise (1 − level)/2 and (1 + level)/2 quantiles of the PAV fits to resampled
        y* ~ Bernoulli(p).
    level : float
    n_boot : int
    """

    forecast: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_boot: int


def corp_consistency_band(p, *, weights=None, n_boot: int = 100, level: float = 0.9,
                          seed) -> CorpBand:
    """Consistency band for the CORP curve by resampling y* ~ Bernoulli(p) (seeded).

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    weights : array_like, shape (n,), optional
        Positive finite weights (used in each PAV fit).
    n_boot : int, default 100
        Number of resamples (R reliabilitydiag's default ``n.boot = 100``).
    level : float, default 0.9
        Pointwise level (R reliabilitydiag's default).
    seed : int or numpy.random.Generator
        Required; passed to ``numpy.random.default_rng``.

    Returns
    -------
    CorpBand

    Notes
    -----
    calibration-notes §2.4: R reliabilitydiag's consistency regions are simulated under the
    hypothesis of calibration. Each resample draws y*_i = 1(U_i < p_i) from the Generator,
    refits the pooled PAV, and the band is the pointwise quantile range (numpy "linear")
    at each distinct forecast. Same seed, same band (byte-identical).
    """
    p = check_probabilities(as_float_array(p, "p"))
    w = check_weights(weights, p.size)
    level = check_level(level)
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    rng = np.random.default_rng(seed)
    ux, inv = np.unique(p, return_inverse=True)
    wu = np.bincount(inv, weights=w, minlength=ux.size)
    fits = np.empty((int(n_boot), ux.size))
    for b in range(int(n_boot)):
        ystar = (rng.random(p.size) < p).astype(float)
        yu = np.bincount(inv, weights=w * ystar, minlength=ux.size) / wu
        fits[b] = isotonic_regression(yu, weights=wu, increasing=True).x
    q = np.quantile(fits, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
    return CorpBand(forecast=_ro(ux), low=_ro(q[0]), high=_ro(q[1]), level=level,
                    n_boot=int(n_boot))
