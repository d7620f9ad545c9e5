"""Seed 003: scores, reliability, recalibration, prediction-powered inference and the
label-source effect (``seeds/003_955ef95213a03853.txt``; ``reference/label-source-notes.md``).

Public API (one concept per module):

* :mod:`.scores` — Brier and log score, calibration-in-the-large with Spiegelhalter's z, AUROC;
* :mod:`.reliability` — binned reliability curves, ECE/MCE/RMS, the binned Murphy decomposition
  with its within-bin terms, consistency bands;
* :mod:`.corp` — the CORP curve (isotonic, tied forecasts pooled) and MCB − DSC + UNC;
* :mod:`.smooth` — smooth ECE with its automatic bandwidth (relplot 1.0.3 numerics);
* :mod:`.recalibration` — Platt scaling (smoothed targets) and isotonic maps;
* :mod:`.ppi` — classical, PPI/PPI++, difference, several control variates, stratified and
  Horvitz–Thompson mean estimators.
"""

from .corp import (
    CorpBand,
    CorpCurve,
    CorpDecomposition,
    corp_consistency_band,
    corp_curve,
    corp_decomposition,
)
from .ppi import (
    PPIResult,
    StratifiedPPIResult,
    classical_mean_ci,
    difference_estimator_ci,
    horvitz_thompson_ci,
    multi_ppi_mean_ci,
    ppi_mean_ci,
    ppi_mean_pointestimate,
    stratified_ppi_mean_ci,
)
from .recalibration import IsotonicMap, PlattMap, isotonic_fit, platt_fit
from .reliability import (
    ConsistencyBands,
    MurphyDecomposition,
    ReliabilityCurve,
    bin_edges,
    binned_ece,
    consistency_bands,
    mce,
    murphy_decomposition,
    reliability_curve,
    rms_calibration_error,
)
from .scores import CalibrationInTheLarge, auroc, brier_score, calibration_in_the_large, log_score
from .smooth import SmoothReliability, smooth_ece, smooth_reliability

__all__ = [
    "CalibrationInTheLarge",
    "ConsistencyBands",
    "CorpBand",
    "CorpCurve",
    "CorpDecomposition",
    "IsotonicMap",
    "MurphyDecomposition",
    "PPIResult",
    "PlattMap",
    "ReliabilityCurve",
    "SmoothReliability",
    "StratifiedPPIResult",
    "auroc",
    "bin_edges",
    "binned_ece",
    "brier_score",
    "calibration_in_the_large",
    "classical_mean_ci",
    "consistency_bands",
    "corp_consistency_band",
    "corp_curve",
    "corp_decomposition",
    "difference_estimator_ci",
    "horvitz_thompson_ci",
    "isotonic_fit",
    "log_score",
    "mce",
    "multi_ppi_mean_ci",
    "murphy_decomposition",
    "platt_fit",
    "ppi_mean_ci",
    "ppi_mean_pointestimate",
    "reliability_curve",
    "rms_calibration_error",
    "smooth_ece",
    "smooth_reliability",
    "stratified_ppi_mean_ci",
]
