"""Reference numbers of seed 003 (labels from an incomplete reference), as data.

The numbers the pages and the CLI set beside ours, from the seed document's tables; seed
000's live in :mod:`core.evaluation.paper`. Keys use this project's names: rules ``native``
and ``eg`` (the elicited confidence and the frozen source prior), labels ``y`` (adjudicated
truth) and ``z`` (the reference label, unmatched counted false).
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["DSC_RANGE", "TABLE1_AVERAGE_ICE", "TABLE2", "TABLE3", "TABLE5_A", "TABLE5_B"]

#: Table 2 (259 beliefs): (rule, label) → (Brier, ten-bin ECE, |CIL|).
TABLE2 = MappingProxyType({
    ("native", "z"): (0.446, 0.493, 0.472), ("eg", "z"): (0.220, 0.127, 0.097),
    ("native", "y"): (0.178, 0.058, 0.017), ("eg", "y"): (0.330, 0.392, 0.392),
})

#: Table 1 (NQ-open DPR–BERT, n = 301): ICE of the average-confidence baseline minus ICE of
#: the pipeline, by label (``z`` exact match, ``y`` human correctness): negative = the
#: baseline is better.
TABLE1_AVERAGE_ICE = MappingProxyType({"z": -0.045, "y": 0.074})

#: §5.2: the CORP discrimination (DSC) of the audited rules lies in this range (weak).
DSC_RANGE = (0.001, 0.036)

#: Table 3: selection protocol → (the frame it scores, the rule it selects).
TABLE3 = MappingProxyType({
    "unmatched_as_false": ("259 beliefs", "EG"), "matched_only": ("1,017 beliefs", "native"),
    "closed_world": ("1,855 propositions", "native"), "adjudicated": ("259 beliefs", "native"),
})

#: Table 5 panel A, local unit, 50 usable labels, 5,000 repetitions: (human-only, TriSource)
#: for RMSE and the mean 95 % width; TriSource's coverage and width reduction; and the
#: smallest P(correct direction) the seed reports at 50 attempted annotations.
TABLE5_A = MappingProxyType({
    "rmse": (0.0483, 0.0309), "mean_width": (0.2146, 0.1356), "coverage": 0.959,
    "width_reduction": 0.368, "p_correct_direction_min": 0.996, "budget": 50, "reps": 5000,
})

#: Table 5 panel B, local unit: held-out truth-Brier of each confidence map.
TABLE5_B = MappingProxyType({
    "ref_raw": 0.3300, "ref_zplatt": 0.4105, "restored_raw": 0.1778,
    "pilot_only": 0.1776, "trisource": 0.1722, "full_y": 0.1700,
})
