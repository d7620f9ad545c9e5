"""What the Reliability page's curves panel shows for a set of rules under one label.

For each rule: the binned reliability curve (:func:`~core.calibration.reliability.
reliability_curve`), the CORP curve (:func:`~core.calibration.corp.corp_curve`, seed 003's
isotonic, ties-pooled estimator) and the kernel-smoothed curve
(:func:`~core.calibration.smooth.smooth_reliability`); for the first rule also the seeded
consistency bands of all three (what a *calibrated* forecaster with the same forecasts would
draw: binned 1,000 resamples, CORP and smooth 100, level .9) and the label's weighted
prevalence. One pure function of small frames, so a worker process can compute it.

The smooth curves are drawn for a reader, not for parity with relplot:

* their forecast density uses :func:`~core.calibration.smooth.forecast_bandwidth`, a
  bandwidth of the forecasts alone, so the density strip is the same under Y and Z (relplot
  would use σ*, which depends on the labels);
* where fewer than one forecast lies within a bandwidth of a grid point (expected count
  ``n · density · 2h < 1``), the curve is NaN: there the kernel estimate is an extrapolation
  that can run to 0 or 1 or draw steps far from any forecast. Whether a point is hidden
  depends on the forecasts only, so Y and Z hide the same points.

Invariants: ``reliability_view`` depends only on the frames' ``p``, the chosen label column
(``y`` or ``z``; ``y`` when the frame has no ``z``) and ``weight`` when present; the bands are
seeded (seed 0), so equal inputs give equal views; a smooth curve's ``density`` and its
hidden (NaN) points do not depend on the label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .corp import CorpBand, CorpCurve, corp_consistency_band, corp_curve
from .reliability import ConsistencyBands, ReliabilityCurve, consistency_bands, reliability_curve
from .smooth import (
    SmoothBand,
    SmoothReliability,
    forecast_bandwidth,
    smooth_consistency_band,
    smooth_reliability,
)

__all__ = ["ReliabilityView", "label_of", "readable_smooth", "reliability_view", "rule_frame",
           "weights_of"]

#: A smooth curve is hidden where fewer forecasts than this lie within a bandwidth.
MIN_NEARBY_FORECASTS = 1.0


def rule_frame(p, y, z=None, weight=None) -> pd.DataFrame:
    """A rule's data in the shape :func:`reliability_view` reads: ``p, y[, z][, weight]``."""
    out = pd.DataFrame({"p": np.asarray(p, float), "y": np.asarray(y, float)})
    if z is not None:
        out["z"] = np.asarray(z, float)
    if weight is not None:
        out["weight"] = np.asarray(weight, float)
    return out


def label_of(frame: pd.DataFrame, label: str) -> np.ndarray:
    """The ``label`` column (``"y"`` or ``"z"``) of a :func:`rule_frame`; ``y`` without ``z``."""
    col = label if label in frame.columns else "y"
    return frame[col].to_numpy(float)


def weights_of(frame: pd.DataFrame) -> np.ndarray | None:
    """The frame's ``weight`` column, or ``None`` (equal weights)."""
    return frame["weight"].to_numpy(float) if "weight" in frame.columns else None


def readable_smooth(p, y) -> SmoothReliability:
    """The smooth curve of ``(p, y)`` as the page draws it (see the module docstring).

    σ* and the curve are relplot's; the density is at :func:`forecast_bandwidth` ``h`` and
    the curve is NaN where ``n · density · 2h`` (the expected number of forecasts within
    ``h``) is below :data:`MIN_NEARBY_FORECASTS`.
    """
    p = np.asarray(p, float)
    h = forecast_bandwidth(p)
    c = smooth_reliability(p, y, density_bandwidth=h)
    nearby = p.size * c.density * 2.0 * h
    freq = np.where(nearby >= MIN_NEARBY_FORECASTS, c.frequency, np.nan)
    return replace(c, frequency=freq)


@dataclass(frozen=True, eq=False)
class ReliabilityView:
    """Everything the Reliability page draws for one label (see :func:`reliability_view`)."""

    label: str
    binned: dict[str, ReliabilityCurve]
    corp: dict[str, CorpCurve]
    smooth: dict[str, SmoothReliability]
    band: ConsistencyBands | None
    corp_band: CorpBand | None
    smooth_band: SmoothBand | None
    band_rule: str | None
    prevalence: float


def reliability_view(frames: Mapping[str, pd.DataFrame], *, rules: tuple[str, ...], label: str,
                     n_bins: int, strategy: str, bands: bool) -> ReliabilityView:
    """Binned, CORP and smooth curves of every rule under ``label``, bands for the first.

    Parameters
    ----------
    frames : mapping rule → :func:`rule_frame`
    rules : tuple of str
        The rules to draw, in order (the first one gets the consistency bands).
    label : {"y", "z"}
    n_bins, strategy : binning of the binned curve and its band.
    bands : bool
        Compute the seeded consistency bands.
    """
    if not rules:
        raise ValueError("reliability_view needs at least one rule")
    missing = [r for r in rules if r not in frames]
    if missing:
        raise ValueError(f"no frame for the rules {missing}")
    binned, corp, smooth = {}, {}, {}
    for name in rules:
        f = frames[name]
        p, y, w = f["p"].to_numpy(float), label_of(f, label), weights_of(f)
        binned[name] = reliability_curve(p, y, n_bins=n_bins, strategy=strategy, weights=w)
        corp[name] = corp_curve(p, y, weights=w)
        smooth[name] = readable_smooth(p, y)
    first = frames[rules[0]]
    p0, w0 = first["p"].to_numpy(float), weights_of(first)
    band = cband = sband = None
    if bands:
        band = consistency_bands(p0, n_bins=n_bins, strategy=strategy, weights=w0,
                                 n_boot=1000, level=0.9, seed=0)
        cband = corp_consistency_band(p0, weights=w0, n_boot=100, level=0.9, seed=0)
        sband = smooth_consistency_band(p0, sigma=smooth[rules[0]].sigma, n_boot=100,
                                        level=0.9, seed=0)
    prev = float(np.average(label_of(first, label), weights=w0))
    return ReliabilityView(label=label, binned=binned, corp=corp, smooth=smooth, band=band,
                           corp_band=cband, smooth_band=sband,
                           band_rule=rules[0] if bands else None, prevalence=prev)
