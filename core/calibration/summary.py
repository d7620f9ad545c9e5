"""One scoring function for every place that scores a confidence rule (seed 003 Tables 1–2).

The CLI's ``score`` command (:func:`core.calibration.report.score_frame`), the Reliability
page's score table and its downloads all call :func:`score_summary`, so they show the same
numbers under the same keys (:data:`SCORE_KEYS`), weighted or not.

Conventions
-----------
* Weights are sampling weights (any positive scale); every score is a weighted mean.
* Binned scores (``ece``, ``mce``, ``rms``, the Murphy terms) use ``n_bins`` bins of the
  given ``strategy`` (calibration-notes §5.2; numpy-histogram edges).
* ``smooth_ece`` (Błasiok & Nakkiran, relplot's numerics) has no weighted form: with weights
  it and its σ are NaN, here and everywhere.
* ``log_score`` clips p to [1e-15, 1 − 1e-15] (:data:`~core.calibration.scores.LOG_SCORE_NOTE`).
* ``spiegelhalter_z`` tests reliability, not calibration in the large (that is ``citl``), and
  is NaN where its normal approximation fails; ``spiegelhalter_n_eff`` and
  ``spiegelhalter_skew`` are what decide it (:func:`~core.calibration.scores.spiegelhalter_z`;
  :func:`~core.calibration.scores.spiegelhalter_reason` turns them into the reason).
* ``ice`` is the instance-level calibration error of seed 003 Table 1, the mean absolute
  difference ``E_w|L − c|`` between the 0/1 label and the confidence; ``ice_baseline`` is the
  same for the *average-confidence baseline*, the constant forecast ``c̄ = E_w[c]`` at every
  item. ``ice_gain = ice − ice_baseline`` (> 0: the baseline has the lower ICE). The seed's
  NQ-open DPR–BERT case: the baseline improves ICE by .045 under exact match and worsens it by
  .074 under human correctness. ICE is not a proper score (a constant at the label's median
  minimises it), which is why it can reverse where Brier does not.
"""

from __future__ import annotations

import numpy as np

from core.calibration._checks import check_forecasts
from core.calibration.corp import corp_decomposition
from core.calibration.reliability import (
    binned_ece,
    mce,
    murphy_decomposition,
    reliability_curve,
    rms_calibration_error,
)
from core.calibration.scores import (
    auroc,
    brier_score,
    calibration_in_the_large,
    log_score,
    spiegelhalter_z,
)
from core.calibration.smooth import smooth_ece

__all__ = ["SCORE_KEYS", "ice", "score_summary"]

#: The keys of :func:`score_summary`, in display order.
SCORE_KEYS = ("n", "prevalence", "mean_forecast", "brier", "log_score", "ece", "mce", "rms",
              "smooth_ece", "smooth_ece_sigma", "citl", "spiegelhalter_z", "auroc", "ice",
              "ice_baseline", "ice_gain", "corp_mcb", "corp_dsc", "corp_unc", "murphy_rel",
              "murphy_res", "murphy_wbv", "murphy_wbc", "spiegelhalter_n_eff",
              "spiegelhalter_skew")


def ice(p, y, *, weights=None) -> float:
    """Instance-level calibration error ``E_w|y − p|`` (seed 003 Table 1).

    Examples
    --------
    >>> ice([0.9, 0.2], [1, 1])
    0.45
    """
    p, y, w = check_forecasts(p, y, weights, binary=True)
    return float(np.average(np.abs(y - p), weights=w))


def score_summary(p, y, *, weights=None, n_bins: int = 10,
                  strategy: str = "uniform") -> dict:
    """Every score of one rule under one label, under the keys of :data:`SCORE_KEYS`.

    Parameters
    ----------
    p : array_like, shape (n,)
        Confidences in [0, 1].
    y : array_like, shape (n,)
        0/1 labels (Y, Z, exact match, human correctness …).
    weights : array_like, shape (n,), optional
        Sampling weights (> 0).
    n_bins, strategy : binning of the binned scores.

    Returns
    -------
    dict
        Floats (``n`` an int). Undefined values are NaN: AUROC with one class, Spiegelhalter's
        z where its normal approximation fails (zero variance, fewer than 10 effective items
        or |skewness| > 0.5; its ``n_eff`` and ``skew`` say which), smooth ECE with weights.

    Examples
    --------
    >>> s = score_summary([0.9, 0.8, 0.3, 0.2], [1, 1, 0, 1])
    >>> round(s["brier"], 4), round(s["ice"], 4), round(s["ice_baseline"], 4)
    (0.195, 0.35, 0.475)
    """
    p, y, w = check_forecasts(p, y, weights, binary=True)
    curve = reliability_curve(p, y, n_bins=n_bins, strategy=strategy, weights=w)
    citl = calibration_in_the_large(p, y, weights=w)
    sz = spiegelhalter_z(p, y, weights=w)
    corp = corp_decomposition(p, y, weights=w)
    mur = murphy_decomposition(p, y, n_bins=n_bins, strategy=strategy, weights=w)
    sm, sigma = smooth_ece(p, y) if weights is None else (float("nan"), float("nan"))
    mean_p = float(np.average(p, weights=w))
    ice_rule = float(np.average(np.abs(y - p), weights=w))
    ice_base = float(np.average(np.abs(y - mean_p), weights=w))
    out = {
        "n": int(p.size), "prevalence": float(np.average(y, weights=w)),
        "mean_forecast": mean_p, "brier": brier_score(p, y, weights=w),
        "log_score": log_score(p, y, weights=w), "ece": binned_ece(curve), "mce": mce(curve),
        "rms": rms_calibration_error(curve), "smooth_ece": sm, "smooth_ece_sigma": sigma,
        "citl": citl.citl, "spiegelhalter_z": citl.spiegelhalter_z,
        "auroc": auroc(p, y, weights=w), "ice": ice_rule, "ice_baseline": ice_base,
        "ice_gain": ice_rule - ice_base, "corp_mcb": corp.mcb, "corp_dsc": corp.dsc,
        "corp_unc": corp.unc, "murphy_rel": mur.rel, "murphy_res": mur.res,
        "murphy_wbv": mur.wbv, "murphy_wbc": mur.wbc, "spiegelhalter_n_eff": sz.n_eff,
        "spiegelhalter_skew": sz.skewness,
    }
    return {k: out[k] if k == "n" else float(out[k]) for k in SCORE_KEYS}
