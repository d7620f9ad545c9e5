"""Streamlit glue of the Ranking reversal page: its result objects, shared across sessions.

Each function returns one :mod:`core.calibration.reversal_view` object for small keys (the
scenario's four knobs, the store's path and stamp, two rule names, a resolver and a source),
from a bounded cache that every session reads and nobody mutates (:func:`.cache.shared_cache`).
"""

from __future__ import annotations

import numpy as np

from core.calibration.reversal_view import (
    BridgeView,
    NQCase,
    ReversalView,
    bridge_view,
    nq_case,
    reversal_view,
)

from .cache import shared_cache
from .seed003 import load_bridge, load_nq301, load_nq_rules, load_scenario, run_rule_pairs

__all__ = ["bridge_of", "nq_case_of", "nq_reversal", "nq_truth_prevalence",
           "scenario_reversal"]


@shared_cache(max_entries=32)
def scenario_reversal(omission_rate: float, false_match_rate: float, discrimination: float,
                      judge_quality: float) -> ReversalView:
    """Native (A) against EG (B) on the scenario of these knobs, with Table 3's protocols."""
    f = load_scenario(omission_rate, false_match_rate, discrimination, judge_quality)
    return reversal_view(f["native"], f["eg"], f["y"], f["z"], names=("native", "EG"),
                         unit=f"{len(f)} beliefs, sampling-weighted", weights=f["weight"],
                         matched=f["matched"], in_reference=f["in_reference"])


@shared_cache(max_entries=32)
def nq_reversal(path: str, stamp: int, rule_a: str, rule_b: str) -> ReversalView:
    """Two NQ-open rules (``agreement``, ``agree@m``, ``const@m``) on the 1,490 answers."""
    a = load_nq_rules(path, stamp)
    return reversal_view(a[rule_a], a[rule_b], a["y"], a["z"], names=(rule_a, rule_b),
                         unit=f"{len(a):,} human-labelled answers")


@shared_cache(max_entries=4)
def nq_truth_prevalence(path: str, stamp: int) -> float:
    """E[Y] of the NQ-open answers (where π starts when a visitor switches to them)."""
    return float(np.nanmean(load_nq_rules(path, stamp)["y"].to_numpy(float)))


@shared_cache(max_entries=4)
def nq_case_of(path: str, stamp: int) -> NQCase:
    """The NQ-open section: prevalence shift, systems, agreement AUROC, the 21 rule pairs."""
    frame, answers = load_nq301(path, stamp)
    return nq_case(frame, answers, run_rule_pairs(path, stamp))


@shared_cache(max_entries=24)
def bridge_of(path: str, stamp: int, method: str, reference: str) -> BridgeView:
    """The seed-000 bridge of one resolver and one reference source."""
    return bridge_view(load_bridge(path, stamp, method, reference)[1])
