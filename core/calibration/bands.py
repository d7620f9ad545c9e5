"""Simultaneous consistency bands: the envelope that holds a *whole* calibrated curve.

Sources: calibration-notes §2.4 (R ``reliabilitydiag``'s consistency regions: curves of a
calibrated forecaster simulated by y* ~ Bernoulli(p)); seed 003 §4 (reliability diagrams of
confidence rules). Issue 18: a pointwise 90 % band is not a 90 % band for the curve — on the
default scenario about half of the calibrated binned curves and nine in ten CORP curves leave
it somewhere. These functions turn resampled curves into a band that a stated share of whole
calibrated curves stay inside.

Choice (written down in README.md, "Choices we made")
----------------------------------------------------
The bands are **simultaneous**, calibrated on the resamples themselves (a rank
"sup-statistic"; no normal approximation, so it also works for small bins and the
step-shaped CORP curve):

1. Sort each point's resampled values. The envelope of *depth* j is, at every point, the
   (j+1)-th smallest and the (j+1)-th largest value.
2. The depth of one resampled curve is the largest j whose envelope still holds it at every
   point: ``min_k min(#{≤ x_k} − 1, n − #{< x_k})`` (ties count as inside).
3. Let d be the ⌈t·(n + 1)⌉-th largest depth, with t = level + 2·sqrt(level(1 − level)/n)
   (:data:`MARGIN_SE` resampling standard errors above ``level``). The band is the envelope
   of depth d − 1. Why one step less: a fresh curve is inside the envelope of depth j when,
   among the n + 1 curves counting itself, its depth is at least j + 1; by exchangeability
   that happens with probability about ⌈t·(n + 1)⌉/(n + 1) ≥ t on average over seeds (the
   conformal rank argument). Why the margin: the realised share for one seed scatters
   around that average by about sqrt(level(1 − level)/n), so two such errors make it at
   least ``level`` for nearly every seed, not for half of them. Seeded checks on seed
   003's default scenario (two rules × four seeds, binned 1,000, CORP 1,000, smooth 400
   resamples, 2,000 / 1,000 fresh curves each): .906–.96 of fresh calibrated curves
   inside.

:func:`share_inside` measures the claim on curves that did *not* build the band: the band
functions draw ``n_check`` fresh calibrated curves after the band's own, and report the share
of them wholly inside as ``coverage`` — the number the Reliability page prints.

Invariants: ``low ≤ high`` at every point; the envelope widens as ``level`` grows; at least
⌈t·(n + 1)⌉ of the resampled curves lie wholly inside (or all n when that exceeds n). With
many points and few resamples the envelope is the resamples' range and cannot reach the
level (e.g. CORP's hundreds of distinct forecasts need about 1,000 resamples): ``coverage``
then says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from core.calibration._checks import check_level

__all__ = ["Envelope", "band_envelope", "check_n_boot", "share_inside"]

#: The band is built to hold this many resampling standard errors more than ``level`` of the
#: resampled curves, so that the share of *fresh* calibrated curves inside is at least
#: ``level`` in about 97.5 % of seeds rather than in half of them (module docstring, step 3).
MARGIN_SE = 2.0


def check_n_boot(n_boot, name: str = "n_boot") -> int:
    """A positive integer number of resamples (``ValueError`` naming the value otherwise)."""
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"{name} must be a positive integer, got {n_boot!r}")
    return int(n_boot)


@dataclass(frozen=True, eq=False)
class Envelope:
    """A band from resampled curves (see :func:`band_envelope`).

    Attributes
    ----------
    low, high : ndarray, shape (k,)
        The band at each point.
    pointwise_level : float
        The share of resampled values inside the band at each single point, at least (the
        level it would have as a pointwise band).
    inside : float
        Share of the resampled curves that built it lying wholly inside.
    """

    low: np.ndarray
    high: np.ndarray
    pointwise_level: float
    inside: float


def _depths(draws: np.ndarray) -> np.ndarray:
    """Depth of each resampled curve (rows) among all of them (module docstring, step 2)."""
    n = draws.shape[0]
    le = rankdata(draws, method="max", axis=0)  # #{values ≤ x} in the column
    lt = rankdata(draws, method="min", axis=0) - 1  # #{values < x}
    return np.min(np.minimum(le - 1, n - 1 - lt), axis=1).astype(np.int64)


def band_envelope(draws, *, level: float = 0.9, simultaneous: bool = True) -> Envelope:
    """The band of resampled calibrated curves, simultaneous or pointwise.

    Parameters
    ----------
    draws : array_like, shape (n, k)
        n resampled curves at k points (finite values).
    level : float, default 0.9
        Simultaneous: the share of whole curves the band is built to hold. Pointwise: the
        share at each point (numpy "linear" quantiles at (1 ∓ level)/2, the former bands).
    simultaneous : bool, default True
        The rank-calibrated envelope of the module docstring, or the pointwise quantiles.

    Returns
    -------
    Envelope

    Examples
    --------
    >>> d = np.arange(20.0)[:, None] * np.ones((1, 3))  # 20 parallel curves
    >>> e = band_envelope(d, level=0.9)
    >>> e.low.tolist(), e.high.tolist(), e.inside
    ([0.0, 0.0, 0.0], [19.0, 19.0, 19.0], 1.0)
    """
    d = np.asarray(draws, float)
    if d.ndim != 2 or d.shape[0] < 1:
        raise ValueError(f"draws must be a 2-D array of resampled curves, got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("draws must be finite (leave out the points a curve does not have)")
    level = check_level(level)
    n = d.shape[0]
    if d.shape[1] == 0:
        return Envelope(low=np.zeros(0), high=np.zeros(0), pointwise_level=1.0, inside=1.0)
    if not simultaneous:
        lo, hi = np.quantile(d, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
        return Envelope(low=lo, high=hi, pointwise_level=level,
                        inside=share_inside(d, lo, hi))
    depth = _depths(d)
    target = min(1.0, level + MARGIN_SE * math.sqrt(level * (1.0 - level) / n))
    keep = min(n, math.ceil(target * (n + 1)))
    j = max(0, int(np.sort(depth)[::-1][keep - 1]) - 1)
    s = np.sort(d, axis=0)
    lo, hi = s[j], s[n - 1 - j]
    return Envelope(low=lo, high=hi, pointwise_level=(n - 2 * j) / n,
                    inside=float(np.mean(depth >= j)))


def share_inside(draws, low, high) -> float:
    """Share of the curves (rows of ``draws``) lying wholly inside [low, high] (inclusive).

    Points where ``low`` or ``high`` is NaN are not part of the band and are not checked.
    """
    d = np.atleast_2d(np.asarray(draws, float))
    lo, hi = np.asarray(low, float), np.asarray(high, float)
    if d.shape[0] == 0:
        return float("nan")
    at = np.isfinite(lo) & np.isfinite(hi)
    ok = (d[:, at] >= lo[at]) & (d[:, at] <= hi[at])
    return float(np.mean(np.all(ok, axis=1)))
