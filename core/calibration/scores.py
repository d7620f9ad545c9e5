"""Proper scores, calibration-in-the-large, Spiegelhalter's z and AUROC for binary forecasts.

Sources: seed 003 §3–4 (Brier risk
R_L(C) = E_w[(C − L)²], calibration-in-the-large, AUROC of the audited rules); restated in
the label-source notes; exact definitions in
the calibration notes §5.1.

Conventions
-----------
* Every statistic is a weighted mean E_w[f] = Σ w_i f_i / Σ w_i (weights > 0; ``None`` means
  unit weights), as in the seed's weighted expectation.
* Forecasts p lie in [0, 1]. Outcomes y may be binary or probability labels in [0, 1] for the
  Brier score, the log score and calibration-in-the-large (a judge's truth probability q is
  scored as the expected score, see label-source-notes "Paired differences"); AUROC needs
  binary y.
* Scores are negatively oriented (lower is better).
* The log score clips p to [1e-15, 1 − 1e-15] (:data:`LOG_SCORE_EPS`): p = 0 on an event
  that happened costs −log(1e-15) ≈ 34.5 nats, not infinity (:data:`LOG_SCORE_NOTE`).
* **Spiegelhalter's z is not a test of calibration in the large** (issue 18). It asks whether
  the Brier score is what calibrated forecasts would score (a test of reliability), weighting
  each forecast's residual y − p by 1 − 2p: forecasts near ½ carry no weight, so it has no
  power there, and misses in opposite directions (over-confident near 0 and near 1) can
  cancel or add up whatever the mean. Calibration in the large is CITL = p̄ − ȳ. z is
  reported only where its normal approximation holds (:func:`spiegelhalter_z`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from core.calibration._checks import (
    as_float_array,
    check_forecasts,
    check_labels,
    check_same_length,
    check_weights,
)

__all__ = [
    "LOG_SCORE_EPS",
    "LOG_SCORE_NOTE",
    "SPIEGELHALTER_MAX_SKEW",
    "SPIEGELHALTER_MIN_ITEMS",
    "SPIEGELHALTER_NOTE",
    "CalibrationInTheLarge",
    "SpiegelhalterZ",
    "auroc",
    "brier_score",
    "calibration_in_the_large",
    "log_score",
    "spiegelhalter_reason",
    "spiegelhalter_z",
]

#: The log score's clipping constant: p is clipped to [eps, 1 − eps].
LOG_SCORE_EPS = 1e-15
#: What every place that shows the log score says about its clipping.
LOG_SCORE_NOTE = (
    f"The log score clips each forecast to [{LOG_SCORE_EPS:g}, 1 − {LOG_SCORE_EPS:g}], so a "
    f"forecast of 0 for an event that happened costs {-np.log(LOG_SCORE_EPS):.1f} nats, not "
    "infinity.")
#: z is reported only if the variance rests on at least this many effective items …
SPIEGELHALTER_MIN_ITEMS = 10.0
#: … and its null distribution's skewness is at most this (in absolute value).
SPIEGELHALTER_MAX_SKEW = 0.5
#: What every place that shows Spiegelhalter's z says it tests.
SPIEGELHALTER_NOTE = (
    "Spiegelhalter's z tests whether the Brier score is what calibrated forecasts would score "
    "(reliability), not calibration in the large: each forecast's miss y − p is weighted by "
    "1 − 2p, so forecasts near 0.5 count for nothing (no power there) and misses in opposite "
    "directions can cancel. |z| > 1.96 rejects at 5 %. Calibration in the large is CITL = "
    "p̄ − ȳ. z is left out when too few items carry its variance (fewer than "
    f"{SPIEGELHALTER_MIN_ITEMS:g} effective items) or its distribution is too skewed "
    f"(|skewness| > {SPIEGELHALTER_MAX_SKEW:g}) for its normal approximation.")


def brier_score(p, y, *, weights=None) -> float:
    """Weighted Brier score E_w[(p − y)²].

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1}, or probability labels in [0, 1].
    weights : array_like, shape (n,), optional
        Positive finite weights; unit weights if omitted.

    Returns
    -------
    float
        Σ w (p − y)² / Σ w. For binary y this is sklearn's ``brier_score_loss`` (binary
        scale, ``scale_by_half="auto"``; calibration-notes §5.1).

    Notes
    -----
    Seed 003 §3 Eq. 1 (Brier risk R_L(C) = E_w[(C − L)²]). For a probability label q this is
    (p − q)², which differs from the expected score q(p − 1)² + (1 − q)p² by q − q²; the
    difference cancels in paired gaps (label-source-notes).

    Examples
    --------
    >>> brier_score([0.9, 0.2], [1, 0])
    0.025
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    return float(np.sum(w * (p - y) ** 2) / np.sum(w))


def log_score(p, y, *, weights=None, eps: float = LOG_SCORE_EPS) -> float:
    """Weighted logarithmic score (log loss) −E_w[y log p + (1 − y) log(1 − p)].

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1}, or probability labels in [0, 1] (cross-entropy).
    weights : array_like, shape (n,), optional
        Positive finite weights.
    eps : float, default :data:`LOG_SCORE_EPS` (1e-15)
        Clipping constant, 0 ≤ eps < 0.5.

    Returns
    -------
    float
        The negatively oriented log score, in nats.

    Notes
    -----
    **Clipping convention:** p is clipped to [eps, 1 − eps] before taking logarithms, so a
    confident wrong forecast (p = 0, y = 1) costs −log(eps) ≈ 34.5 instead of +inf. This is
    the convention of scikit-learn's ``log_loss`` before 1.5 (``eps=1e-15``); pass ``eps=0`` to
    get the unclipped score (then it may be ``inf``). Every place that shows the score says
    so (:data:`LOG_SCORE_NOTE`: the page's help text, the CLI's notes, the glossary).
    Terms with a zero coefficient (y = 0 or y = 1 exactly) contribute 0, so p = 1, y = 1
    scores 0 up to the clipping. Source:
    calibration-notes §5.1 (proper scores); seed 003 §4 (proper scores of confidence rules).

    Examples
    --------
    >>> round(log_score([0.5, 0.5], [1, 0]), 6)
    0.693147
    """
    if not 0.0 <= eps < 0.5:
        raise ValueError(f"eps must be in [0, 0.5), got {eps}")
    p, y, w = check_forecasts(p, y, weights, binary=False)
    pc = np.clip(p, eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.where(y > 0, y * np.log(pc), 0.0)
        neg = np.where(y < 1, (1.0 - y) * np.log1p(-pc), 0.0)
    return float(-np.sum(w * (pos + neg)) / np.sum(w))


@dataclass(frozen=True)
class SpiegelhalterZ:
    """Spiegelhalter's z with what decides whether it is reported (:func:`spiegelhalter_z`).

    Attributes
    ----------
    z, p_value : float
        The statistic and its two-sided normal p-value; NaN when not reported.
    n_eff : float
        Effective number of items carrying the null variance, (Σ a)² / Σ a² with
        a_i = w_i² (1 − 2p_i)² p_i (1 − p_i); NaN when the variance is 0.
    skewness : float
        Skewness of z's exact null distribution, Σ c³ p(1 − p)(1 − 2p) / var^{3/2} with
        c = w (1 − 2p); NaN when the variance is 0.
    reason : str or None
        Why z is not reported (``None`` when it is).
    """

    z: float
    p_value: float
    n_eff: float
    skewness: float
    reason: str | None


def spiegelhalter_reason(n_eff: float, skewness: float) -> str | None:
    """Why z is not reported for these diagnostics (``None``: it is).

    The rule (:func:`spiegelhalter_z`): the variance is positive, at least
    :data:`SPIEGELHALTER_MIN_ITEMS` effective items carry it, and the null skewness is at most
    :data:`SPIEGELHALTER_MAX_SKEW` in absolute value.

    Examples
    --------
    >>> spiegelhalter_reason(40.0, 0.1) is None
    True
    >>> spiegelhalter_reason(2.0, 1.06)
    'too few items carry its variance (2.0 effective items, need 10)'
    """
    if not np.isfinite(n_eff):
        return "its variance is 0 (every forecast is 0, 0.5 or 1)"
    if n_eff < SPIEGELHALTER_MIN_ITEMS * (1.0 - 1e-9):  # n_eff = 10 computes as 9.999…
        return (f"too few items carry its variance ({n_eff:.1f} effective items, need "
                f"{SPIEGELHALTER_MIN_ITEMS:g})")
    if not abs(skewness) <= SPIEGELHALTER_MAX_SKEW:
        return (f"its distribution is too skewed for the normal approximation (skewness "
                f"{skewness:.2f}, at most {SPIEGELHALTER_MAX_SKEW:g}: forecasts near 0 or 1 "
                "with few items)")
    return None


def spiegelhalter_z(p, y, *, weights=None) -> SpiegelhalterZ:
    """Spiegelhalter's (1986) z, reported only where its normal approximation holds.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1} (or probability labels in [0, 1]; z then is only descriptive).
    weights : array_like, shape (n,), optional
        Positive finite sampling weights.

    Returns
    -------
    SpiegelhalterZ

    Notes
    -----
    calibration-notes §5.1: z = Σ w (y − p)(1 − 2p) / sqrt(Σ w² (1 − 2p)² p (1 − p)), which
    is asymptotically N(0, 1) if y ~ Bernoulli(p) independently. Σ (y − p)(1 − 2p) is the
    Brier score minus its expectation under calibration (times n), so **z tests whether the
    Brier score is compatible with calibrated forecasts (reliability), not calibration in
    the large**: a forecast at p = ½ has weight 0 (no power near ½) and misses on both sides
    of ½ can cancel. Two seeded checks (``tests/test_calibration_metrics.py``): forecasts
    {.2, .8} whose true rates are .1 higher (n = 2,000; CITL −.1) are rejected about 5 % of
    the time; forecasts {.1, .9} with true rates {.3, .7} (CITL 0, over-confident) about
    100 %.

    **Small samples.** z is NaN, with a ``reason``, unless the variance is positive, at least
    :data:`SPIEGELHALTER_MIN_ITEMS` = 10 effective items carry it (``n_eff``) and the exact
    null skewness of the statistic is at most :data:`SPIEGELHALTER_MAX_SKEW` = 0.5. Chosen by
    a seeded size check under calibration (20,000 draws each; forecasts uniform on [0, 1],
    [.05, .95], [.7, .99], [.9, .999], [.01, .1], Beta(.5, .5), {.2, .8}, Beta(5, 1.5) and
    one extreme forecast among ½'s, n = 2 … 300): where the rule reports z, the rejection
    rate at |z| > 1.96 was .033–.061; where it does not, it ran from 0 to .16.
    ``tests/test_calibration_metrics.py`` repeats the check on a smaller grid.

    **Weights** are treated as sampling (probability) weights: the numerator is
    Σ w (y − p)(1 − 2p) and its null variance Σ w² (1 − 2p)² p (1 − p); with unit weights
    this is the textbook statistic, and z is invariant to rescaling the weights.

    Examples
    --------
    >>> spiegelhalter_z([0.2, 0.8], [1, 1]).reason
    'too few items carry its variance (2.0 effective items, need 10)'
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    c = w * (1.0 - 2.0 * p)
    a = c * c * p * (1.0 - p)
    var = float(np.sum(a))
    if var > 0:
        an = a / np.max(a)  # scale-free: tiny variances (p ~ 1e-250) neither under- nor overflow
        n_eff = float(np.sum(an)) ** 2 / float(np.sum(an * an))
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            skew = float(np.divide(np.sum(c**3 * p * (1.0 - p) * (1.0 - 2.0 * p)),
                                   np.power(np.float64(var), 1.5)))
        if not np.isfinite(skew):  # overflow: a variance far too small for any approximation
            skew = float("inf")
    else:
        n_eff = skew = float("nan")
    reason = spiegelhalter_reason(n_eff, skew)
    if reason is None:
        z = float(np.sum(c * (y - p))) / np.sqrt(var)
        pval = float(2.0 * norm.sf(abs(z)))
    else:
        z = pval = float("nan")
    return SpiegelhalterZ(z=float(z), p_value=pval, n_eff=float(n_eff), skewness=float(skew),
                          reason=reason)


@dataclass(frozen=True)
class CalibrationInTheLarge:
    """Calibration-in-the-large of a forecast (calibration-notes §5.1), with Spiegelhalter's z.

    Attributes
    ----------
    citl : float
        Signed p̄ − ȳ (weighted means). Positive means over-confident on average.
    citl_squared : float
        citl², the squared part that a prevalence shift moves (seed 003 §4, Eq. 5).
    spiegelhalter_z : float
        Spiegelhalter's z (a test of reliability, not of CITL; see :func:`spiegelhalter_z`);
        NaN when not reported.
    spiegelhalter_p : float
        Two-sided normal p-value of z (NaN with z).
    mean_forecast : float
        p̄.
    mean_outcome : float
        ȳ (the prevalence).
    n : int
        Number of items.
    spiegelhalter_reason : str or None
        Why z is not reported (``None`` when it is).
    """

    citl: float
    citl_squared: float
    spiegelhalter_z: float
    spiegelhalter_p: float
    mean_forecast: float
    mean_outcome: float
    n: int
    spiegelhalter_reason: str | None = None


def calibration_in_the_large(p, y, *, weights=None) -> CalibrationInTheLarge:
    """Calibration-in-the-large p̄ − ȳ, its square, and Spiegelhalter's z.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1} (or probability labels in [0, 1]; z then is only descriptive).
    weights : array_like, shape (n,), optional
        Positive finite weights.

    Returns
    -------
    CalibrationInTheLarge

    Notes
    -----
    calibration-notes §5.1: CITL = p̄ − ȳ. Seed 003 §4: ten-bin ECE_w ≥ |E_w[C] − E_w[Y]|.
    Spiegelhalter's z comes along for the CLI and the page but does **not** test CITL: see
    :func:`spiegelhalter_z` (what it tests, and when it is NaN).

    Examples
    --------
    >>> r = calibration_in_the_large([0.8, 0.8, 0.8, 0.8], [1, 1, 1, 0])
    >>> round(r.citl, 10), round(r.citl_squared, 10)
    (0.05, 0.0025)
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    W = np.sum(w)
    pbar = float(np.sum(w * p) / W)
    ybar = float(np.sum(w * y) / W)
    citl = pbar - ybar
    sz = spiegelhalter_z(p, y, weights=w)
    return CalibrationInTheLarge(citl=citl, citl_squared=citl**2, spiegelhalter_z=sz.z,
                                 spiegelhalter_p=sz.p_value, mean_forecast=pbar,
                                 mean_outcome=ybar, n=int(p.shape[0]),
                                 spiegelhalter_reason=sz.reason)


def auroc(score, y, *, weights=None) -> float:
    """Area under the ROC curve as a (weighted) Mann–Whitney statistic, ties counted ½.

    Parameters
    ----------
    score : array_like, shape (n,)
        Any finite real scores (higher means "more likely positive"); need not be in [0, 1].
    y : array_like, shape (n,)
        Binary outcomes.
    weights : array_like, shape (n,), optional
        Positive finite weights.

    Returns
    -------
    float
        AUROC = Σ_{i: y=1} Σ_{j: y=0} w_i w_j [1(s_i > s_j) + ½·1(s_i = s_j)] / (W₊ W₋),
        i.e. P(S₊ > S₋) + ½ P(S₊ = S₋). NaN (undefined) if only one class is present.

    Notes
    -----
    Equal to scikit-learn's ``roc_auc_score`` (trapezoidal ROC, which counts tied scores ½),
    with or without ``sample_weight``. Seed 003 §4 reports AUROC next to the CORP DSC
    (native .596, EG .538; NQ-open probe .663). Computed in O(n log n) by grouping tied
    scores.

    Examples
    --------
    >>> auroc([0.1, 0.4, 0.4, 0.8], [0, 0, 1, 1])
    0.875
    """
    s = as_float_array(score, "score")
    y = check_labels(as_float_array(y, "y"), "y", binary=True)
    n = check_same_length(score=s, y=y)
    w = check_weights(weights, n)
    pos = y == 1
    wpos = float(np.sum(w[pos]))
    wneg = float(np.sum(w[~pos]))
    if wpos == 0 or wneg == 0:
        return float("nan")
    uniq, inv = np.unique(s, return_inverse=True)
    neg_w = np.bincount(inv, weights=np.where(pos, 0.0, w), minlength=uniq.size)
    pos_w = np.bincount(inv, weights=np.where(pos, w, 0.0), minlength=uniq.size)
    neg_below = np.cumsum(neg_w) - neg_w
    u = np.sum(pos_w * (neg_below + 0.5 * neg_w))
    return float(u / (wpos * wneg))
