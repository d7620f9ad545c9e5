"""Metrics and reductions of seed 000 (the benchmark specification §2.12; seed 000 §9.3).

Conventions
-----------
* Arrays are (N, 18): personas × questions (QIDS order).
* Forced ("macro") accuracy = mean over questions of per-question accuracy; the answer before
  any abstention counts (every selective method here records one).
* Coverage = answered / total (micro). Selective accuracy = mean over questions of correct /
  answered, dropping questions with no answer. Macro-derived F0.5 uses P = selective accuracy
  and R = selective accuracy × coverage / forced accuracy.
* Pooled reductions concatenate seeds, each (seed, persona) being one cluster; the
  percentile bootstrap resamples clusters with replacement (B = 2000,
  ``numpy.random.default_rng(42)``) and takes ``np.quantile`` at 2.5 % and 97.5 %.
* Risk–coverage: answers sorted by decreasing confidence (stable sort); risk at coverage k/n
  is the error rate of the k most confident; AURC is the trapezoid area under that curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BootstrapCI",
    "RiskCoverage",
    "cluster_bootstrap",
    "coverage",
    "f05_macro",
    "forced_accuracy",
    "paired_bootstrap",
    "risk_coverage",
    "selective_accuracy",
]


def forced_accuracy(correct: np.ndarray) -> float:
    """Macro over questions of per-question accuracy."""
    c = np.asarray(correct, float)
    if c.size == 0:
        raise ValueError("forced_accuracy needs at least one row")
    return float(c.mean(0).mean())


def coverage(skipped: np.ndarray) -> float:
    """Share of answered instances (micro)."""
    return float(1.0 - np.asarray(skipped, float).mean())


def selective_accuracy(correct: np.ndarray, skipped: np.ndarray) -> float:
    """Macro over questions with ≥ 1 answer of correct / answered (NaN if nothing answered)."""
    ans = ~np.asarray(skipped, bool)
    c = np.asarray(correct, bool) & ans
    n_ans = ans.sum(0)
    keep = n_ans > 0
    if not keep.any():
        return float("nan")
    return float((c.sum(0)[keep] / n_ans[keep]).mean())


def f05_macro(sel_acc: float, cov: float, forced_acc: float) -> float:
    """Macro-derived F0.5 with P = selective accuracy, R = P × coverage / forced accuracy."""
    p = sel_acc
    if not np.isfinite(p) or forced_acc <= 0:
        return 0.0
    r = sel_acc * cov / forced_acc
    return float(1.25 * p * r / (0.25 * p + r)) if (0.25 * p + r) > 0 else 0.0


@dataclass(frozen=True)
class BootstrapCI:
    """Point estimate, percentile interval and the replicate values."""

    estimate: float
    low: float
    high: float
    replicates: np.ndarray
    n_clusters: int


def _resample_weights(n: int, b: int, seed: int) -> np.ndarray:
    """(B, n) multiplicities of a cluster resample with replacement."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(b, n))
    flat = (idx + (np.arange(b) * n)[:, None]).reshape(-1)
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def cluster_bootstrap(correct: np.ndarray, *, b: int = 2000, seed: int = 42,
                      level: float = 0.95, weights: np.ndarray | None = None) -> BootstrapCI:
    """Persona-clustered percentile bootstrap of the pooled forced (macro) accuracy.

    ``correct`` is (C, 18): one row per (seed, persona) cluster. ``weights`` may pass the
    (B, C) resample multiplicities of ``_resample_weights(C, b, seed)`` when several methods
    are bootstrapped on the same clusters (same result, computed once).
    """
    c = np.asarray(correct, float)
    if c.ndim != 2 or len(c) == 0:
        raise ValueError("correct must be a non-empty (clusters, questions) array")
    if b < 1:
        raise ValueError(f"b must be >= 1, got {b}")
    w = _resample_weights(len(c), b, seed) if weights is None else weights
    if w.shape != (b, len(c)):
        raise ValueError(f"weights must have shape {(b, len(c))}, got {w.shape}")
    reps = ((w @ c) / len(c)).mean(1)
    a = (1 - level) / 2
    lo, hi = np.quantile(reps, [a, 1 - a])
    return BootstrapCI(forced_accuracy(c), float(lo), float(hi), reps, len(c))


def paired_bootstrap(correct_a: np.ndarray, correct_b: np.ndarray, *, b: int = 2000,
                     seed: int = 42, level: float = 0.95) -> BootstrapCI:
    """Bootstrap of the difference of pooled accuracies A − B on the same resampled clusters."""
    a_, b_ = np.asarray(correct_a, float), np.asarray(correct_b, float)
    if a_.shape != b_.shape:
        raise ValueError(f"paired arrays differ in shape: {a_.shape} vs {b_.shape}")
    w = _resample_weights(len(a_), b, seed)
    reps = ((w @ (a_ - b_)) / len(a_)).mean(1)
    al = (1 - level) / 2
    lo, hi = np.quantile(reps, [al, 1 - al])
    return BootstrapCI(forced_accuracy(a_) - forced_accuracy(b_), float(lo), float(hi), reps,
                       len(a_))


@dataclass(frozen=True)
class RiskCoverage:
    """Risk–coverage curve (coverage ascending) and its area."""

    coverage: np.ndarray
    risk: np.ndarray
    thresholds: np.ndarray
    aurc: float
    n: int


def risk_coverage(confidence: np.ndarray, correct: np.ndarray) -> RiskCoverage:
    """Risk of the k most confident answers for k = 1 … n, and AURC (trapezoid)."""
    conf = np.asarray(confidence, float).reshape(-1)
    corr = np.asarray(correct, bool).reshape(-1)
    if conf.shape != corr.shape or conf.size == 0:
        raise ValueError("confidence and correct must be non-empty and of equal size")
    order = np.argsort(-conf, kind="stable")
    errors = np.cumsum(~corr[order])
    k = np.arange(1, conf.size + 1)
    cov = k / conf.size
    risk = errors / k
    return RiskCoverage(cov, risk, conf[order], float(np.trapezoid(risk, cov)), conf.size)
