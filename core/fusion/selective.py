"""Selective answers: abstain below a confidence threshold chosen for a target.

Rule: an item is answered when its confidence (the posterior of the chosen answer) is at
least the threshold t, and abstained otherwise. The threshold is given, or chosen on
**calibration items** (default: every item; pass a held-out mask for an honest estimate):

* ``target_accuracy=a``: the candidate thresholds are the distinct confidences of the
  calibration items with a truth; t is the smallest one (the largest coverage) whose
  selective accuracy — correct answers among calibration gold items with confidence ≥ t —
  is at least a. If none reaches a, t = +∞ (abstain on everything).
* ``target_coverage=c``: t is the largest distinct confidence of the calibration items such
  that the share of them with confidence ≥ t is at least c (no truth needed).

Ties in confidence are never split: every item at the threshold is answered. The
risk–coverage curve of the calibration gold items is kept for the figure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.fusion._numeric import read_only
from core.fusion.claims import Claims
from core.fusion.result import FusionResult

__all__ = ["RiskCoverage", "Selective", "risk_coverage", "selective"]


@dataclass(frozen=True, eq=False)
class RiskCoverage:
    """Selective accuracy against coverage over descending confidence thresholds.

    ``threshold[k]`` answers the items with confidence ≥ it: ``answered[k]`` of ``n``
    (coverage = answered / n) with ``correct[k]`` right.
    """

    threshold: np.ndarray
    answered: np.ndarray
    correct: np.ndarray
    n: int

    @property
    def coverage(self) -> np.ndarray:
        return self.answered / self.n

    @property
    def accuracy(self) -> np.ndarray:
        return self.correct / self.answered

    def aurc(self) -> float:
        """Area under the risk–coverage curve (risk = 1 − selective accuracy), as the mean
        selective risk over the ``n`` prefix sizes (ties share their threshold's risk)."""
        risk = 1 - self.accuracy
        counts = np.diff(np.r_[0, self.answered])
        return float(np.sum(risk * counts) / self.n)


def risk_coverage(result: FusionResult, claims: Claims,
                  items: np.ndarray | None = None) -> RiskCoverage:
    """The risk–coverage curve of ``result`` on gold items (within ``items``)."""
    mask = claims.gold if items is None else claims.gold & np.asarray(items, bool)
    if not mask.any():
        raise ValueError("no item with a known truth for a risk–coverage curve")
    conf = result.confidence[mask]
    ok = (result.labels[mask] == claims.truth[mask]).astype(np.int64)
    order = np.argsort(-conf, kind="stable")
    conf, ok = conf[order], ok[order]
    last = np.r_[conf[1:] != conf[:-1], True]  # last item of each confidence level
    return RiskCoverage(threshold=read_only(conf[last]),
                        answered=read_only(np.flatnonzero(last) + 1),
                        correct=read_only(np.cumsum(ok)[last]), n=int(mask.sum()))


@dataclass(frozen=True, eq=False)
class Selective:
    """A thresholded result: ``result`` has label −1 (confidence 0) where abstained."""

    result: FusionResult
    base: FusionResult
    threshold: float
    rule: str
    calibration: np.ndarray
    curve: RiskCoverage | None

    @property
    def coverage(self) -> float:
        return float(self.result.answered.mean())


def selective(result: FusionResult, claims: Claims | None = None, *,
              threshold: float | None = None, target_accuracy: float | None = None,
              target_coverage: float | None = None,
              calibration: np.ndarray | None = None) -> Selective:
    """Abstain where the confidence is below a threshold (module docstring).

    Give exactly one of ``threshold``, ``target_accuracy`` (needs ``claims`` with truth) or
    ``target_coverage``. ``calibration`` is the item mask the threshold is chosen on.
    """
    given = [v is not None for v in (threshold, target_accuracy, target_coverage)]
    if sum(given) != 1:
        raise ValueError("give exactly one of threshold, target_accuracy, target_coverage")
    cal = np.ones(result.n_items, bool) if calibration is None else np.asarray(calibration,
                                                                                 bool)
    if cal.shape != (result.n_items,) or not cal.any():
        raise ValueError(f"calibration must be a non-empty mask of {result.n_items} items")
    curve = None
    if claims is not None and claims.truth is not None and (claims.gold & cal).any():
        curve = risk_coverage(result, claims, cal)
    if threshold is not None:
        t = float(threshold)
        rule = f"answer when confidence ≥ {t:.6g} (given)"
    elif target_accuracy is not None:
        if not 0 < target_accuracy <= 1:
            raise ValueError(f"target_accuracy must be in (0, 1], got {target_accuracy!r}")
        if curve is None:
            raise ValueError("target_accuracy needs claims with truth on calibration items")
        ok = np.flatnonzero(curve.accuracy >= target_accuracy)
        t = float(curve.threshold[ok[-1]]) if ok.size else float("inf")
        rule = (f"answer when confidence ≥ {t:.6g}: the lowest threshold whose selective "
                f"accuracy on {curve.n} calibration gold items is ≥ {target_accuracy:g}")
    else:
        if not 0 < target_coverage <= 1:
            raise ValueError(f"target_coverage must be in (0, 1], got {target_coverage!r}")
        conf = np.sort(result.confidence[cal])[::-1]
        k = int(np.ceil(target_coverage * conf.size - 1e-12))
        t = float(conf[max(k, 1) - 1])
        rule = (f"answer when confidence ≥ {t:.6g}: the highest threshold answering ≥ "
                f"{target_coverage:g} of {conf.size} calibration items")
    keep = result.confidence >= t
    new = replace(result, labels=np.where(keep, result.labels, -1),
                  confidence=np.where(keep, result.confidence, 0.0),
                  method=result.method + "_selective",
                  model=result.model + f" Selective: {rule}.")
    return Selective(result=new, base=result, threshold=t, rule=rule, calibration=read_only(cal),
                     curve=curve)
