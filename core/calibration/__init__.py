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
  Horvitz–Thompson mean estimators;
* :mod:`.label_source` — the exact identity of Eq. (1)–(2), the prevalence crossover, the
  de-biased risk of Eq. (6), the four scoring protocols of Table 3;
* :mod:`.scenario` — belief-store scenarios (default calibrated to Table 2);
* :mod:`.restore` — paired differences, TriSource-Restore (Eq. 3), transfer β, monotone repair;
* :mod:`.pilot` — simulated probability-sampled pilots and Algorithm 1, step by step;
* :mod:`.bridge` — the same analysis on seed-000 resolver outputs;
* :mod:`.nq301` — the real NQ-open case (exact match vs human labels, three judges);
* :mod:`.report` — everything at once for a CSV (``python -m core score``).
"""

from .corp import (
    CorpBand,
    CorpCurve,
    CorpDecomposition,
    corp_consistency_band,
    corp_curve,
    corp_decomposition,
)
from .label_source import (
    LabelSourceDecomposition,
    brier_gap_constant,
    brier_gap_curve,
    crossover_prevalence,
    debiased_risk,
    label_source_decomposition,
    reference_only_platt,
    scoring_protocols,
)
from .pilot import budget_curve, simulate_pilots, walk_algorithm1
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
from .restore import fit_transfer_beta, monotone_repair, paired_differences, trisource_restore
from .scenario import DEFAULT_SCENARIO, ScenarioConfig, generate_scenario
from .scores import CalibrationInTheLarge, auroc, brier_score, calibration_in_the_large, log_score
from .smooth import (
    SmoothBand,
    SmoothReliability,
    smooth_consistency_band,
    smooth_ece,
    smooth_reliability,
)

__all__ = [
    "CalibrationInTheLarge",
    "ConsistencyBands",
    "CorpBand",
    "CorpCurve",
    "CorpDecomposition",
    "DEFAULT_SCENARIO",
    "IsotonicMap",
    "LabelSourceDecomposition",
    "MurphyDecomposition",
    "PPIResult",
    "PlattMap",
    "ReliabilityCurve",
    "ScenarioConfig",
    "SmoothBand",
    "SmoothReliability",
    "StratifiedPPIResult",
    "auroc",
    "bin_edges",
    "binned_ece",
    "brier_gap_constant",
    "brier_gap_curve",
    "brier_score",
    "budget_curve",
    "calibration_in_the_large",
    "classical_mean_ci",
    "consistency_bands",
    "corp_consistency_band",
    "corp_curve",
    "corp_decomposition",
    "crossover_prevalence",
    "debiased_risk",
    "difference_estimator_ci",
    "fit_transfer_beta",
    "generate_scenario",
    "horvitz_thompson_ci",
    "isotonic_fit",
    "label_source_decomposition",
    "log_score",
    "mce",
    "monotone_repair",
    "multi_ppi_mean_ci",
    "murphy_decomposition",
    "paired_differences",
    "platt_fit",
    "ppi_mean_ci",
    "ppi_mean_pointestimate",
    "reference_only_platt",
    "reliability_curve",
    "rms_calibration_error",
    "scoring_protocols",
    "simulate_pilots",
    "smooth_consistency_band",
    "smooth_ece",
    "smooth_reliability",
    "stratified_ppi_mean_ci",
    "trisource_restore",
    "walk_algorithm1",
]
