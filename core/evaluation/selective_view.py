"""What the Selective QA page shows for one selective method at one threshold θ.

Seed 000 §10 (calibrated abstention: each seed's threshold maximises F0.5 on its calibration
split) and the benchmark specification §2.12 (the skip rules; per-seed-then-mean reduction),
computed by :mod:`core.evaluation.selective`; the paper's numbers from
:mod:`core.evaluation.paper`.

Three thresholds are in play, and the names keep them apart:

* **each seed's calibrated θ** — the one its calibration split chose (the stored predictions);
* **the median θ** — the median of those per-seed thresholds on the method's grid: the
  page's default, one θ for every seed;
* **θ** — the one the reader chose.

Invariants: at the median θ the view has no deltas (``deltas`` is ``None``: nothing moved);
``calibrated`` does not depend on θ; coverage falls (weakly) as θ rises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .paper import PAPER_SELECTIVE, REGEN_SELECTIVE
from .run import SeedRun
from .selective import skip_rule, threshold_metrics

__all__ = ["MEASURES", "CoverageGap", "SelectiveView", "ThresholdChoice", "selective_view",
           "threshold_choice"]

#: The per-seed measures (percent) the page averages over seeds.
MEASURES = ("coverage", "selective_accuracy", "f05", "forced_accuracy")
#: A coverage this far from the paper's (percentage points) gets an explanation.
GAP_TO_EXPLAIN = 2.0


@dataclass(frozen=True)
class ThresholdChoice:
    """A selective method's threshold grid, each seed's calibrated θ and their median.

    Attributes
    ----------
    method : e.g. ``"dsnbf_skip"``.
    label : what θ is (``"posterior margin θ"``, ``"score gap θ_Δ"`` …).
    lo, hi, step : the grid ``lo, lo + step, …, hi``.
    calibrated : each seed's calibrated θ, in seed order.
    median : the median of ``calibrated`` snapped to the grid (the page's default).
    """

    method: str
    label: str
    lo: float
    hi: float
    step: float
    calibrated: tuple[float, ...]
    median: float

    def snap(self, v: float) -> float:
        """The grid point nearest to ``v`` (the same arithmetic as ``NumberParam.snap``)."""
        k = round((float(v) - self.lo) / self.step)
        k = min(max(k, 0), round((self.hi - self.lo) / self.step))
        return float(round(min(self.lo + k * self.step, self.hi), 10))


def threshold_choice(runs: Sequence[SeedRun], method: str) -> ThresholdChoice:
    """The :class:`ThresholdChoice` of ``method`` over fresh runs (with fitted models)."""
    if not runs:
        raise ValueError("threshold_choice needs at least one run")
    rules = [skip_rule(r, method) for r in runs]
    grid = rules[0].grid
    step = float(np.round(grid[1] - grid[0], 6)) if len(grid) > 1 else 0.01
    cal = tuple(float(r.calibrated) for r in rules)
    out = ThresholdChoice(method=method, label=rules[0].label, lo=float(grid.min()),
                          hi=float(grid.max()), step=step, calibrated=cal, median=0.0)
    return replace(out, median=out.snap(float(np.median(cal))))


@dataclass(frozen=True)
class CoverageGap:
    """Why our coverage at the calibrated thresholds differs from the paper's.

    ``theta_matching`` is the θ whose mean coverage over our seeds (the sweep) is nearest the
    paper's. When ours is higher, ``seeds_past`` counts the seeds whose calibrated θ is below
    it (a lower θ answers more), ``side == "below"``; when lower, those above it. Coverage
    falls as θ rises, so these seeds are where the difference comes from. ``regenerated``
    is the paper's released code re-run on regenerated data (``None`` if not reported).
    """

    ours: float
    paper: float
    regenerated: float | None
    theta_low: float
    theta_high: float
    theta_matching: float
    side: str
    seeds_past: int
    n_seeds: int


@dataclass(frozen=True, eq=False)
class SelectiveView:
    """Everything the Selective QA panel shows (see :func:`selective_view`).

    Attributes
    ----------
    method, theta : the method and the chosen θ.
    choice : its :class:`ThresholdChoice`.
    at_theta, at_calibrated : one row per seed (:func:`threshold_metrics`) at θ and at each
        seed's calibrated θ.
    now, calibrated : the means over seeds of :data:`MEASURES` at θ and at the calibrated θ.
    deltas : ``now − (means at the median θ)`` per measure, or ``None`` at the median θ.
    per_seed : ``at_theta`` beside ``at_calibrated`` (suffix ``_calibrated``).
    points : pooled (coverage, risk) as fractions at ``"calibrated"`` and ``"theta"``.
    forced : forced accuracy (%), the mean over seeds.
    paper : the paper's (selective accuracy, coverage) in %, or ``None``.
    gap : a :class:`CoverageGap` when our calibrated coverage is at least
        :data:`GAP_TO_EXPLAIN` points from the paper's, else ``None``.
    """

    method: str
    theta: float
    choice: ThresholdChoice
    at_theta: pd.DataFrame
    at_calibrated: pd.DataFrame
    now: dict[str, float]
    calibrated: dict[str, float]
    deltas: dict[str, float] | None
    per_seed: pd.DataFrame
    points: dict[str, tuple[float, float]]
    forced: float
    paper: tuple[float, float] | None
    gap: CoverageGap | None

    @property
    def is_default(self) -> bool:
        """θ is the median of the per-seed calibrated θ."""
        return self.deltas is None


def _means(frame: pd.DataFrame) -> dict[str, float]:
    return {k: float(frame[k].mean()) for k in MEASURES}


def _pooled(frame: pd.DataFrame) -> tuple[float, float]:
    answered = int(frame["answered"].sum())
    return answered / int(frame["n"].sum()), int(frame["errors"].sum()) / max(1, answered)


def selective_view(runs: Sequence[SeedRun], method: str, *, theta: float,
                   sweep: pd.DataFrame | None = None) -> SelectiveView:
    """``method`` at θ beside each seed's calibrated θ, with the paper's numbers.

    Parameters
    ----------
    runs : fresh runs of every seed that include ``method`` (with fitted models).
    method : one of :data:`core.evaluation.selective.SKIP_METHODS`.
    theta : the threshold for every seed (snapped to the method's grid).
    sweep : :func:`core.evaluation.selective.sweep` of ``method`` (for the θ that meets the
        paper's coverage); without it ``gap`` is ``None``.
    """
    choice = threshold_choice(runs, method)
    if not (choice.lo - 1e-9 <= float(theta) <= choice.hi + 1e-9):
        raise ValueError(f"theta must lie in [{choice.lo}, {choice.hi}] for {method}, "
                         f"got {theta}")
    theta = choice.snap(theta)
    at_theta = threshold_metrics(runs, method, theta=theta)
    at_cal = threshold_metrics(runs, method)
    now, cal = _means(at_theta), _means(at_cal)
    deltas = None
    if theta != choice.median:
        base = _means(threshold_metrics(runs, method, theta=choice.median))
        deltas = {k: now[k] - base[k] for k in MEASURES}
    paper = PAPER_SELECTIVE.get(method)
    gap = None
    if paper is not None and sweep is not None and abs(cal["coverage"] - paper[1]) >= \
            GAP_TO_EXPLAIN:
        i = int(np.nanargmin(np.abs(sweep["coverage"].to_numpy(float) - paper[1])))
        matching = choice.snap(float(sweep["theta"].iloc[i]))
        regen = REGEN_SELECTIVE.get(method)
        higher = cal["coverage"] > paper[1]
        past = sum((c < matching) if higher else (c > matching) for c in choice.calibrated)
        gap = CoverageGap(ours=cal["coverage"], paper=paper[1],
                          regenerated=regen[1] if regen else None,
                          theta_low=min(choice.calibrated), theta_high=max(choice.calibrated),
                          theta_matching=matching, side="below" if higher else "above",
                          seeds_past=past, n_seeds=len(choice.calibrated))
    return SelectiveView(
        method=method, theta=theta, choice=choice, at_theta=at_theta, at_calibrated=at_cal,
        now=now, calibrated=cal, deltas=deltas,
        per_seed=at_theta.merge(at_cal, on="seed", suffixes=("", "_calibrated")),
        points={"calibrated": _pooled(at_cal), "theta": _pooled(at_theta)},
        forced=now["forced_accuracy"], paper=paper, gap=gap)
