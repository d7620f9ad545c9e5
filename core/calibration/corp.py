"""CORP reliability curve and the MCB/DSC/UNC decomposition of the Brier score.

Sources: Dimitriadis, Gneiting & Jordan (PNAS 2021, "CORP"); seed 003 §4 (discrimination
measured by the CORP DSC component; the audited rules sit at DSC .001–.036); the calibration
notes §5.1 (exact definitions), §2.4 (model-diagnostics ``decompose``; R ``reliabilitydiag``
ordering and consistency bands), pitfall §6.1 (tie pooling); issue 18 (the band holds a
whole calibrated curve: :mod:`core.calibration.bands`).

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
from core.calibration.bands import band_envelope, check_n_boot, share_inside

__all__ = [
    "BAND_KNOTS",
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
    """Consistency band for the CORP curve under the hypothesis of calibration.

    Attributes
    ----------
    forecast : ndarray
        Distinct forecast values (ascending), as in :class:`CorpCurve`.
    low, high : ndarray
        The band at each distinct forecast: simultaneous (the whole curve, see
        :mod:`core.calibration.bands`) or the pointwise (1 − level)/2 and (1 + level)/2
        quantiles of the PAV fits to resampled y* ~ Bernoulli(p).
    level : float
    n_boot : int
    simultaneous : bool
    pointwise_level : float
        The share of resampled fits inside the band at each single forecast, at least.
    coverage : float
        Share of ``n_check`` fresh calibrated CORP curves lying wholly inside; NaN if none.
    n_check : int
    """

    forecast: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_boot: int
    simultaneous: bool = True
    pointwise_level: float = float("nan")
    coverage: float = float("nan")
    n_check: int = 0


#: Most distinct forecasts at which the simultaneous CORP band is calibrated (see
#: :func:`corp_consistency_band`). Seeded checks with 1,000 resamples (500 fresh curves each,
#: two seeds; 3,000 uniform and 20,000 Beta(4, 2) forecasts, seed 003's native and EG):
#: 25 knots kept .91–.96 of fresh curves inside, 50 knots .88–.95 and 100 knots .84–.97.
BAND_KNOTS = 25


def _resampled_fits(rng, p, inv, w, wu, m, at):
    """``m`` calibrated CORP curves (pooled PAV fits to y* ~ Bernoulli(p)) at distinct p ``at``."""
    fits = np.empty((m, at.size))
    for b in range(m):
        ystar = (rng.random(p.size) < p).astype(float)
        yu = np.bincount(inv, weights=w * ystar, minlength=wu.size) / wu
        fits[b] = isotonic_regression(yu, weights=wu, increasing=True).x[at]
    return fits


def corp_consistency_band(p, *, weights=None, n_boot: int = 100, level: float = 0.9,
                          seed, simultaneous: bool = True, n_check: int = 0) -> CorpBand:
    """Consistency band for the CORP curve by resampling y* ~ Bernoulli(p) (seeded).

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    weights : array_like, shape (n,), optional
        Positive finite weights (used in each PAV fit).
    n_boot : int, default 100
        Number of resamples that build the band (R reliabilitydiag's default ``n.boot``; a
        simultaneous band over many distinct forecasts needs about 1,000).
    level : float, default 0.9
        Simultaneous (default): at least this share of whole calibrated CORP curves lies
        inside (issue 18). Pointwise: the share at each forecast (reliabilitydiag's level).
    seed : int or numpy.random.Generator
        Required; passed to ``numpy.random.default_rng``.
    simultaneous : bool, default True
        A band for the whole curve (:func:`core.calibration.bands.band_envelope`), or the
        former pointwise band.
    n_check : int, default 0
        Fresh calibrated curves drawn after the band's own, to measure ``coverage``.

    Returns
    -------
    CorpBand

    Notes
    -----
    calibration-notes §2.4: R reliabilitydiag's consistency regions are simulated under the
    hypothesis of calibration. Each resample draws y*_i = 1(U_i < p_i) from the Generator and
    refits the pooled PAV at each distinct forecast. A pointwise 90 % band is left somewhere
    by about nine in ten calibrated CORP curves on seed 003's default scenario (its many
    distinct forecasts are many chances), so the band is simultaneous by default. Same seed,
    same band (byte-identical).

    **Knots.** With more than :data:`BAND_KNOTS` distinct forecasts the simultaneous band is
    calibrated at that many of them (evenly spaced in rank, first and last included) and
    extended as steps: at a forecast x, ``low`` is the knots' low at the nearest knot ≤ x
    and ``high`` their high at the nearest knot ≥ x. Every CORP curve is non-decreasing, so
    a curve inside the band at the knots is inside it at every forecast: the band still
    holds whole curves, and a few hundred thousand forecasts do not make the sup over
    points a sup over noise.
    """
    p = check_probabilities(as_float_array(p, "p"))
    w = check_weights(weights, p.size)
    level = check_level(level)
    n_boot = check_n_boot(n_boot)
    n_check = 0 if n_check == 0 else check_n_boot(n_check, "n_check")
    rng = np.random.default_rng(seed)
    ux, inv = np.unique(p, return_inverse=True)
    wu = np.bincount(inv, weights=w, minlength=ux.size)
    k = ux.size
    knots = (np.unique(np.round(np.linspace(0, k - 1, BAND_KNOTS)).astype(np.int64))
             if simultaneous and k > BAND_KNOTS else np.arange(k))
    env = band_envelope(_resampled_fits(rng, p, inv, w, wu, n_boot, knots), level=level,
                        simultaneous=simultaneous)
    if knots.size == k:
        lo, hi = env.low, env.high
    else:  # steps between knots (see Notes): low from the knot below, high from the one above
        lo = env.low[np.searchsorted(knots, np.arange(k), side="right") - 1]
        hi = env.high[np.searchsorted(knots, np.arange(k), side="left")]
    coverage = float("nan")
    if n_check:
        coverage = share_inside(_resampled_fits(rng, p, inv, w, wu, n_check, knots),
                                lo[knots], hi[knots])
    return CorpBand(forecast=_ro(ux), low=_ro(lo), high=_ro(hi), level=level,
                    n_boot=n_boot, simultaneous=bool(simultaneous),
                    pointwise_level=float(env.pointwise_level), coverage=coverage,
                    n_check=int(n_check))
