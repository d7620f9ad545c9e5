"""What the Reliability page's curves panel shows for a set of rules under one label.

For each rule: the binned reliability curve (:func:`~core.calibration.reliability.
reliability_curve`), the CORP curve (:func:`~core.calibration.corp.corp_curve`, seed 003's
isotonic, ties-pooled estimator) and the kernel-smoothed curve
(:func:`~core.calibration.smooth.smooth_reliability`); for the first rule also the seeded
consistency bands of all three and the label's weighted prevalence. One pure function of small
frames, so a worker process can compute it.

The bands (issue 18) are **simultaneous** (:mod:`core.calibration.bands`): built so that at
least 90 % of whole curves of a *calibrated* forecaster with the same forecasts lie inside
(binned 1,000 resamples, CORP 1,000, smooth 400: :data:`BAND_RESAMPLES`), and each carries
``coverage``, the share of fresh calibrated curves (:data:`BAND_CHECKS`) that did lie wholly
inside — the number the page states. A pointwise band would not do: on seed 003's default
scenario about half of the calibrated binned curves and nine in ten CORP curves leave a
pointwise 90 % band somewhere.

**Cost.** With more than :data:`MAX_BAND_ROWS` rows the bands are computed on a seeded random
subsample of that many rows (the binned band keeps the full data's bin edges; the smooth band
keeps the full curve's σ* and drawn region); ``band_rows`` says how many rows were used. The
subsample's band is wider than the full data's would be, so it errs towards calling a
deviation noise. This bounds one upload of 200,000 rows to about a second of resampling and
well under 0.5 GB (``benchmarks/bench_reliability_upload.py``).

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
    dense_region,
    forecast_bandwidth,
    smooth_consistency_band,
    smooth_reliability,
)

__all__ = ["BAND_CHECKS", "BAND_LEVEL", "BAND_RESAMPLES", "MAX_BAND_ROWS", "ReliabilityView",
           "band_note", "band_sample", "label_of", "readable_smooth", "reliability_view",
           "rule_frame", "weights_of"]

#: A smooth curve is hidden where fewer forecasts than this lie within a bandwidth.
MIN_NEARBY_FORECASTS = 1.0
#: The share of whole calibrated curves each band is built to hold.
BAND_LEVEL = 0.9
#: Resamples that build each band.
BAND_RESAMPLES = {"binned": 1000, "corp": 1000, "smooth": 400}
#: Fresh calibrated curves that measure each band's ``coverage``.
BAND_CHECKS = {"binned": 1000, "corp": 400, "smooth": 400}
#: Above this many rows the bands are computed on a seeded subsample of this size.
MAX_BAND_ROWS = 20_000


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
    n_rows: int = 0
    band_rows: int | None = None

    @property
    def band_subsampled(self) -> bool:
        """The bands were computed on a subsample of the first rule's rows."""
        return self.band_rows is not None and self.band_rows < self.n_rows


def band_sample(n: int, *, max_rows: int = MAX_BAND_ROWS, seed: int = 0) -> np.ndarray | None:
    """Sorted indices of a seeded subsample of ``max_rows`` of ``n`` rows, or ``None`` (all).

    Examples
    --------
    >>> band_sample(10, max_rows=20) is None
    True
    >>> band_sample(10, max_rows=4).size
    4
    """
    if isinstance(max_rows, bool) or int(max_rows) != max_rows or max_rows < 2:
        raise ValueError(f"max_rows must be an integer >= 2, got {max_rows!r}")
    if n <= max_rows:
        return None
    return np.sort(np.random.default_rng(seed).choice(n, int(max_rows), replace=False))


def _percent(share: float) -> str:
    return f"{100.0 * share:.0f} %"


def band_note(view: ReliabilityView, rule: str) -> str:
    """What the page says about the bands of ``view`` (empty without bands), for students.

    Every number in it is measured: the share of fresh simulated calibrated curves that stayed
    wholly inside each band (``coverage``), and the subsample size when there was one.

    Parameters
    ----------
    view : ReliabilityView
    rule : str
        The display name of the rule the bands belong to.
    """
    if view.band is None or view.corp_band is None or view.smooth_band is None:
        return ""
    text = (f"The shaded band belongs to {rule} and holds a whole curve, not one point at a "
            f"time: when we simulate a perfectly calibrated forecaster with {rule}'s "
            f"forecasts, {_percent(view.band.coverage)} of its binned curves, "
            f"{_percent(view.corp_band.coverage)} of its CORP curves and "
            f"{_percent(view.smooth_band.coverage)} of its smooth curves (where forecasts are "
            "dense) stay inside their band everywhere, in fresh simulations that did not draw "
            "the band. So a curve that leaves its band is unusual for a calibrated "
            "forecaster, though it can happen; a curve inside it proves nothing.")
    if view.band_subsampled:
        text += (f" To keep it quick, the band was computed on a random {view.band_rows:,} "
                 f"of the {view.n_rows:,} rows; a band for every row would be narrower.")
    return text


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
        Compute the seeded simultaneous consistency bands (on a subsample of
        :data:`MAX_BAND_ROWS` rows when the first rule has more; see the module docstring).
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
    band_rows = None
    if bands:
        rows = band_sample(p0.size)
        pb, wb = (p0, w0) if rows is None else (p0[rows], None if w0 is None else w0[rows])
        band_rows = int(pb.size)
        c0 = smooth[rules[0]]
        band = consistency_bands(pb, weights=wb, edges=binned[rules[0]].edges,
                                 n_boot=BAND_RESAMPLES["binned"], level=BAND_LEVEL, seed=0,
                                 n_check=BAND_CHECKS["binned"])
        cband = corp_consistency_band(pb, weights=wb, n_boot=BAND_RESAMPLES["corp"],
                                      level=BAND_LEVEL, seed=0, n_check=BAND_CHECKS["corp"])
        sband = smooth_consistency_band(pb, sigma=c0.sigma, n_boot=BAND_RESAMPLES["smooth"],
                                        level=BAND_LEVEL, seed=0, n_grid=c0.grid.size,
                                        n_check=BAND_CHECKS["smooth"],
                                        region=dense_region(c0.density))
    prev = float(np.average(label_of(first, label), weights=w0))
    return ReliabilityView(label=label, binned=binned, corp=corp, smooth=smooth, band=band,
                           corp_band=cband, smooth_band=sband,
                           band_rule=rules[0] if bands else None, prevalence=prev,
                           n_rows=int(p0.size), band_rows=band_rows)
