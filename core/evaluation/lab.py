"""The bias lab: regenerate one seed under new distortion knobs, refit everything, compare.

A :class:`LabResult` holds the leaderboard (forced accuracy with a cluster-bootstrap interval,
selective accuracy and coverage), per-source reliability, and — against the nominal setting
(bias = dropout = 1, equal difficulty mix) — which method's rank moved most and which source's
accuracy moved most ("what broke").

Difficulty mix: weights (stable, temporal_shift, stated_vs_revealed) ≥ 0; each class keeps the
fraction w_d / max(w) of its personas **within every split** (the first ones by index), so the
train/calibration/test proportions stay those of the released protocol. A zero weight drops
the class; DSNBF's class prior and stratified tables then fall back to their smoothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..testbed.config import TestbedConfig
from ..testbed.generate import generate
from ..testbed.labels import ground_truth_codes
from ..testbed.readout import readout
from ..testbed.schema import Testbed
from ..testbed.vocab import DIFFICULTIES, SPLITS
from .diagnostics import source_summary
from .metrics import cluster_bootstrap, coverage, selective_accuracy
from .run import FORCED_METHODS, METHOD_LABELS, SELECTIVE_METHODS, SeedRun, run_seed

__all__ = ["LabResult", "mix_testbed", "run_lab", "what_broke"]


def mix_testbed(tb: Testbed, weights: tuple[float, float, float]) -> Testbed:
    """Keep ``w_d / max(w)`` of each difficulty class within every split (see module doc)."""
    w = np.asarray(weights, float)
    if w.shape != (3,) or (w < 0).any() or not np.isfinite(w).all() or w.max() <= 0:
        raise ValueError("difficulty mix needs three non-negative weights, not all zero")
    frac = w / w.max()
    keep = np.zeros(tb.n, bool)
    diff = tb.personas["difficulty"].to_numpy()
    split = tb.personas["split"].to_numpy()
    seed = tb.personas["seed"].to_numpy()
    for s in np.unique(seed):
        for d, f in zip(DIFFICULTIES, frac, strict=True):
            for sp in SPLITS:
                idx = np.flatnonzero((seed == s) & (diff == d) & (split == sp))
                n = int(round(f * len(idx)))
                if f > 0 and sp != "dev":
                    n = max(n, 1)
                keep[idx[:n]] = True
    return tb.subset(keep)


@dataclass(frozen=True)
class LabResult:
    """Leaderboard and source reliability of one configuration (one seed)."""

    leaderboard: pd.DataFrame
    sources: pd.DataFrame
    n_test: int
    run: SeedRun


def run_lab(*, seed: int, bias_scale: float = 1.0, dropout_scale: float = 1.0,
            mix: tuple[float, float, float] = (1.0, 1.0, 1.0),
            personas_per_difficulty: int = 160, n_boot: int = 300) -> LabResult:
    """Generate one seed with these knobs and mix, fit every resolver, score the test split."""
    cfg = TestbedConfig(seeds=(seed,), personas_per_difficulty=personas_per_difficulty,
                        bias_scale=bias_scale, dropout_scale=dropout_scale)
    tb = mix_testbed(generate(cfg), mix)
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    run = run_seed(mu, gt, tb.personas)
    rows = []
    for m in FORCED_METHODS:
        correct = run.predictions[m].answer == run.gt
        ci = cluster_bootstrap(correct, b=n_boot, seed=42)
        row = {"method": m, "label": METHOD_LABELS[m], "accuracy": 100 * ci.estimate,
               "ci_low": 100 * ci.low, "ci_high": 100 * ci.high,
               "selective_accuracy": np.nan, "coverage": np.nan}
        sk = f"{m}_skip"
        if sk in SELECTIVE_METHODS and sk in run.predictions:
            p = run.predictions[sk]
            row["selective_accuracy"] = 100 * selective_accuracy(p.answer == run.gt, p.skipped)
            row["coverage"] = 100 * coverage(p.skipped)
        rows.append(row)
    board = pd.DataFrame(rows)
    ranked = board[board["method"] != "source_reachability"]
    board["rank"] = ranked["accuracy"].rank(ascending=False, method="min")
    sources = source_summary(run.atoms, run.gt)
    sources[["coverage", "conflict_rate", "accuracy", "acc_low", "acc_high"]] *= 100
    return LabResult(board, sources, len(run.personas), run)


def what_broke(nominal: LabResult, variant: LabResult) -> dict:
    """The method whose rank moved most and the source whose accuracy moved most.

    Returns a dict with ``method``, ``rank_before``, ``rank_after``, ``accuracy_change`` (pp)
    and ``source``, ``source_accuracy_change`` (pp), ``source_coverage_change`` (pp), plus
    ``changes`` (per-method DataFrame).
    """
    a = nominal.leaderboard.set_index("method")
    b = variant.leaderboard.set_index("method")
    ch = pd.DataFrame({"rank_before": a["rank"], "rank_after": b["rank"],
                       "accuracy_before": a["accuracy"], "accuracy_after": b["accuracy"]})
    ch = ch.dropna(subset=["rank_before"])
    ch["rank_change"] = ch["rank_after"] - ch["rank_before"]
    ch["accuracy_change"] = ch["accuracy_after"] - ch["accuracy_before"]
    key = ch["rank_change"].abs() * 1000 + ch["accuracy_change"].abs()
    m = str(key.idxmax())
    sa = nominal.sources.set_index("source")
    sb = variant.sources.set_index("source")
    dacc = (sb["accuracy"] - sa["accuracy"])
    src = str(dacc.abs().idxmax())
    return {"method": m, "rank_before": int(ch.loc[m, "rank_before"]),
            "rank_after": int(ch.loc[m, "rank_after"]),
            "accuracy_change": float(ch.loc[m, "accuracy_change"]),
            "source": src, "source_accuracy_change": float(dacc[src]),
            "source_coverage_change": float(sb.loc[src, "coverage"] - sa.loc[src, "coverage"]),
            "changes": ch.reset_index()}


