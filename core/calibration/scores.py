"""Proper scores, calibration-in-the-large and AUROC for binary forecasts.

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
    "CalibrationInTheLarge",
    "auroc",
    "brier_score",
    "calibration_in_the_large",
    "log_score",
]


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


def log_score(p, y, *, weights=None, eps: float = 1e-15) -> float:
    """Weighted logarithmic score (log loss) −E_w[y log p + (1 − y) log(1 − p)].

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1}, or probability labels in [0, 1] (cross-entropy).
    weights : array_like, shape (n,), optional
        Positive finite weights.
    eps : float, default 1e-15
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
    get the unclipped score (then it may be ``inf``). Terms with a zero coefficient (y = 0 or
    y = 1 exactly) contribute 0, so p = 1, y = 1 scores 0 up to the clipping. Source:
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
class CalibrationInTheLarge:
    """Calibration-in-the-large of a forecast (calibration-notes §5.1).

    Attributes
    ----------
    citl : float
        Signed p̄ − ȳ (weighted means). Positive means over-confident on average.
    citl_squared : float
        citl², the squared part that a prevalence shift moves (seed 003 §4, Eq. 5).
    spiegelhalter_z : float
        Spiegelhalter's z; NaN when its variance is 0 (all p in {0, ½, 1}).
    spiegelhalter_p : float
        Two-sided normal p-value of z (NaN with z).
    mean_forecast : float
        p̄.
    mean_outcome : float
        ȳ (the prevalence).
    n : int
        Number of items.
    """

    citl: float
    citl_squared: float
    spiegelhalter_z: float
    spiegelhalter_p: float
    mean_forecast: float
    mean_outcome: float
    n: int


def calibration_in_the_large(p, y, *, weights=None) -> CalibrationInTheLarge:
    """Calibration-in-the-large p̄ − ȳ, its square, and Spiegelhalter's z test.

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
    calibration-notes §5.1: CITL = p̄ − ȳ and
    z = Σ (y − p)(1 − 2p) / sqrt(Σ (1 − 2p)² p (1 − p)) (Spiegelhalter 1986), which is
    asymptotically N(0, 1) if y ~ Bernoulli(p) independently. Seed 003 §4: ten-bin ECE_w ≥
    |E_w[C] − E_w[Y]|.

    **Weights** are treated as sampling (probability) weights: the numerator is
    Σ w (y − p)(1 − 2p) and its null variance Σ w² (1 − 2p)² p (1 − p); with unit weights this
    is the textbook statistic, and z is invariant to rescaling the weights. (Frequency weights
    would instead put Σ w in the variance.)

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
    num = float(np.sum(w * (y - p) * (1.0 - 2.0 * p)))
    var = float(np.sum(w**2 * (1.0 - 2.0 * p) ** 2 * p * (1.0 - p)))
    if var > 0:
        z = num / np.sqrt(var)
        pval = float(2.0 * norm.sf(abs(z)))
    else:
        z = pval = float("nan")
    return CalibrationInTheLarge(citl=citl, citl_squared=citl**2, spiegelhalter_z=float(z),
                                 spiegelhalter_p=pval, mean_forecast=pbar, mean_outcome=ybar,
                                 n=int(p.shape[0]))


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
