"""Binned reliability curves, binned calibration errors, the Murphy decomposition, bands.

Sources: seed 003 §4 (weighted ten-bin ECE_w,
ECE_w ≥ |E_w[C] − E_w[Y]|); the calibration notes §5.1 (binned Murphy
decomposition with the Stephenson et al. 2008 within-bin terms), §5.2 (binned ECE, MCE, L2
error, edge semantics), §2.4 (consistency bands by resampling, as R ``reliabilitydiag``),
§6.6–6.7 (default bin counts differ; the p = 1 bin); issue 18 (the band holds a whole
calibrated curve, not each bin alone: :mod:`core.calibration.bands`).

Bin conventions (all functions of this module)
----------------------------------------------
* **numpy-histogram edge semantics**: with edges b_0 ≤ b_1 ≤ … ≤ b_B, bin k is the half-open
  interval [b_k, b_{k+1}) except the LAST bin, which is closed, [b_{B−1}, b_B]. So p = 1
  falls in the last bin and p = 0 in the first (torchmetrics #3510 is the bug this avoids).
  Counts agree with ``numpy.histogram(p, bins=edges)``.
* ``strategy="uniform"``: edges ``numpy.linspace(0, 1, n_bins + 1)``.
* ``strategy="quantile"`` (adaptive / equal-count bins): interior edges are the unweighted
  empirical quantiles of p at k/B (numpy's default "linear" method); the outer edges are 0
  and 1. Tied forecasts can make duplicate edges, i.e. empty zero-width bins; they are kept
  (so every curve has exactly ``n_bins`` bins) and flagged ``empty``.
* The default is B = 10 (seed 003's ten-bin ECE); always state B next to a binned number.
* Empty bins carry NaN means and NaN intervals and are skipped by every summary.
* Per-bin statistics are weighted means; bin shares are W_k / W with W_k = Σ_{i∈k} w_i.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.calibration._checks import (
    as_float_array,
    check_forecasts,
    check_level,
    check_probabilities,
    check_weights,
)
from core.calibration.bands import band_envelope, check_n_boot, share_inside
from core.stats import exact_interval

__all__ = [
    "ConsistencyBands",
    "MurphyDecomposition",
    "ReliabilityCurve",
    "bin_edges",
    "binned_ece",
    "consistency_bands",
    "mce",
    "murphy_decomposition",
    "reliability_curve",
    "rms_calibration_error",
]

_STRATEGIES = ("uniform", "quantile")


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def bin_edges(p, *, n_bins: int = 10, strategy: str = "uniform") -> np.ndarray:
    """Bin edges b_0 = 0 ≤ … ≤ b_B = 1 for binned calibration summaries.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1] (only used by ``strategy="quantile"``).
    n_bins : int, default 10
        Number of bins B ≥ 1.
    strategy : {"uniform", "quantile"}
        Equal-width bins, or interior edges at the unweighted empirical quantiles of p
        (numpy "linear" method) with outer edges 0 and 1.

    Returns
    -------
    ndarray, shape (n_bins + 1,)

    Notes
    -----
    calibration-notes §5.2 (binned ECE; adaptive ECE bins at quantiles of p). Bins are
    [b_k, b_{k+1}) with the last one closed (numpy-histogram semantics).
    """
    n_bins = _check_n_bins(n_bins)
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be one of {_STRATEGIES}, got {strategy!r}")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    p = check_probabilities(as_float_array(p, "p"))
    inner = np.quantile(p, np.linspace(0.0, 1.0, n_bins + 1)[1:-1])
    return np.concatenate([[0.0], inner, [1.0]])


def _check_n_bins(n_bins) -> int:
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    return int(n_bins)


def _assign(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of each forecast with numpy-histogram semantics (last bin closed)."""
    n_bins = edges.size - 1
    return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)


def _bin_sums(p, y, w, edges):
    idx = _assign(p, edges)
    B = edges.size - 1
    count = np.bincount(idx, minlength=B)
    wk = np.bincount(idx, weights=w, minlength=B)
    swp = np.bincount(idx, weights=w * p, minlength=B)
    swy = np.bincount(idx, weights=w * y, minlength=B)
    sw2 = np.bincount(idx, weights=w * w, minlength=B)
    return idx, count, wk, swp, swy, sw2


@dataclass(frozen=True, eq=False)
class ReliabilityCurve:
    """A binned reliability curve (read-only arrays of length ``n_bins``; ``edges`` n_bins+1).

    Attributes
    ----------
    edges : ndarray
        Bin edges; bin k is [edges[k], edges[k+1]), the last bin closed.
    count : ndarray of int
        Items per bin.
    weight : ndarray
        Σ w per bin (equals ``count`` with unit weights).
    n_eff : ndarray
        Kish effective size (Σ w)² / Σ w² per bin (equals ``count`` with unit weights).
    mean_forecast : ndarray
        Weighted mean forecast p̄_k (NaN if empty).
    observed_frequency : ndarray
        Weighted observed frequency ȳ_k (NaN if empty).
    low, high : ndarray
        Exact (Clopper–Pearson) interval of ȳ_k at ``level`` on the Kish effective size
        (NaN if empty).
    empty : ndarray of bool
        True for bins without items.
    n_bins, strategy, level : int, str, float
        The options used.
    n : int
        Number of items.
    total_weight : float
        Σ w.
    """

    edges: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    n_eff: np.ndarray
    mean_forecast: np.ndarray
    observed_frequency: np.ndarray
    low: np.ndarray
    high: np.ndarray
    empty: np.ndarray
    n_bins: int
    strategy: str
    level: float
    n: int
    total_weight: float

    @property
    def share(self) -> np.ndarray:
        """Bin share W_k / W."""
        return self.weight / self.total_weight

    @property
    def gap(self) -> np.ndarray:
        """Signed gap ȳ_k − p̄_k (NaN for empty bins)."""
        return self.observed_frequency - self.mean_forecast


def reliability_curve(p, y, *, n_bins: int = 10, strategy: str = "uniform", weights=None,
                      level: float = 0.95) -> ReliabilityCurve:
    """Binned reliability curve with per-bin counts, weights and exact intervals.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecast probabilities in [0, 1] (0 and 1 allowed).
    y : array_like, shape (n,)
        Binary outcomes.
    n_bins : int, default 10
        Number of bins B (seed 003 uses ten bins; other libraries default to 5–50, see
        calibration-notes §6.6 — always report B).
    strategy : {"uniform", "quantile"}, default "uniform"
        See :func:`bin_edges`.
    weights : array_like, shape (n,), optional
        Positive finite weights.
    level : float, default 0.95
        Confidence level of the per-bin exact intervals.

    Returns
    -------
    ReliabilityCurve

    Notes
    -----
    **Edges:** numpy-histogram semantics — bins [b_k, b_{k+1}), the LAST bin closed
    [b_{B−1}, 1], so a forecast p = 1 is counted in the last bin (calibration-notes §5.2,
    pitfall §6.7). Empty bins are kept, flagged, and have NaN statistics.

    **Intervals:** ``core.stats.exact_interval(k, n)`` (Clopper–Pearson) per bin: bins hold
    few items and extreme frequencies, where Wilson's coverage dips (.925 at p = .05 with 20
    items) and the exact interval's never falls below the level. With unit weights n is the bin
    count and k the number of positives. With weights, n is the Kish effective size
    n_eff = (Σ w)² / Σ w² of the bin and k = ȳ_k · n_eff (a design-effect approximation;
    it reduces to the unweighted interval when the weights in a bin are equal).

    Examples
    --------
    >>> c = reliability_curve([0.05, 0.95, 1.0], [0, 1, 1], n_bins=2)
    >>> c.count.tolist(), c.observed_frequency.tolist()
    ([1, 2], [0.0, 1.0])
    """
    p, y, w = check_forecasts(p, y, weights, binary=True)
    level = check_level(level)
    edges = bin_edges(p, n_bins=n_bins, strategy=strategy)
    _, count, wk, swp, swy, sw2 = _bin_sums(p, y, w, edges)
    empty = count == 0
    safe = np.where(empty, 1.0, wk)
    mean_f = np.where(empty, np.nan, swp / safe)
    freq = np.where(empty, np.nan, swy / safe)
    n_eff = np.where(empty, 0.0, wk**2 / np.where(empty, 1.0, sw2))
    k = np.clip(np.where(empty, 0.0, freq * n_eff), 0.0, n_eff)
    lo, hi = exact_interval(k, n_eff, level=level)
    lo = np.where(empty, np.nan, lo)
    hi = np.where(empty, np.nan, hi)
    return ReliabilityCurve(
        edges=_ro(edges), count=_ro(count.astype(np.int64)), weight=_ro(wk), n_eff=_ro(n_eff),
        mean_forecast=_ro(mean_f), observed_frequency=_ro(freq), low=_ro(lo), high=_ro(hi),
        empty=_ro(empty), n_bins=int(edges.size - 1), strategy=strategy, level=level,
        n=int(p.size), total_weight=float(np.sum(w)))


def _curve(p_or_curve, y, n_bins, strategy, weights) -> ReliabilityCurve:
    if isinstance(p_or_curve, ReliabilityCurve):
        if y is not None or weights is not None:
            raise ValueError("pass either a ReliabilityCurve or (p, y[, weights]), not both")
        return p_or_curve
    if y is None:
        raise ValueError("y is required when the first argument is an array of forecasts")
    return reliability_curve(p_or_curve, y, n_bins=n_bins, strategy=strategy, weights=weights)


def binned_ece(p_or_curve, y=None, *, n_bins: int = 10, strategy: str = "uniform",
               weights=None) -> float:
    """Binned expected calibration error Σ_k (W_k / W) |ȳ_k − p̄_k| over non-empty bins.

    Parameters
    ----------
    p_or_curve : ReliabilityCurve or array_like, shape (n,)
        A curve from :func:`reliability_curve`, or forecasts (then ``y`` is required).
    y : array_like, shape (n,), optional
        Binary outcomes (only with forecasts).
    n_bins, strategy, weights
        As in :func:`reliability_curve` (ignored when a curve is passed).

    Returns
    -------
    float

    Notes
    -----
    calibration-notes §5.2; seed 003 §4 (weighted ten-bin ECE_w ≥ |E_w[C] − E_w[Y]|).
    Edges: numpy-histogram semantics, last bin closed. Binned ECE is biased upwards and the
    bias grows with B (notes §5.2).
    """
    c = _curve(p_or_curve, y, n_bins, strategy, weights)
    keep = ~c.empty
    return float(np.sum(c.share[keep] * np.abs(c.gap[keep])))


def mce(p_or_curve, y=None, *, n_bins: int = 10, strategy: str = "uniform",
        weights=None) -> float:
    """Maximum calibration error max_k |ȳ_k − p̄_k| over non-empty bins.

    Parameters
    ----------
    p_or_curve : ReliabilityCurve or array_like, shape (n,)
        A curve from :func:`reliability_curve`, or forecasts (then ``y`` is required).
    y : array_like, shape (n,), optional
        Binary outcomes (only with forecasts).
    n_bins, strategy, weights
        As in :func:`reliability_curve` (ignored when a curve is passed).

    Returns
    -------
    float

    Notes
    -----
    calibration-notes §5.2 (MCE). Bin shares do not enter, so a single-item bin can dominate;
    edges follow numpy-histogram semantics with the last bin closed.
    """
    c = _curve(p_or_curve, y, n_bins, strategy, weights)
    return float(np.max(np.abs(c.gap[~c.empty])))


def rms_calibration_error(p_or_curve, y=None, *, n_bins: int = 10, strategy: str = "uniform",
                          weights=None) -> float:
    """L2 (root-mean-square) calibration error sqrt(Σ_k (W_k / W)(ȳ_k − p̄_k)²).

    Parameters
    ----------
    p_or_curve : ReliabilityCurve or array_like, shape (n,)
        A curve from :func:`reliability_curve`, or forecasts (then ``y`` is required).
    y : array_like, shape (n,), optional
        Binary outcomes (only with forecasts).
    n_bins, strategy, weights
        As in :func:`reliability_curve` (ignored when a curve is passed).

    Returns
    -------
    float

    Notes
    -----
    calibration-notes §5.2 (L2 calibration error). Its square is the REL term of
    :func:`murphy_decomposition` with the same bins. Edges: numpy-histogram semantics, last
    bin closed; empty bins skipped.
    """
    c = _curve(p_or_curve, y, n_bins, strategy, weights)
    keep = ~c.empty
    return float(np.sqrt(np.sum(c.share[keep] * c.gap[keep] ** 2)))


@dataclass(frozen=True, eq=False)
class MurphyDecomposition:
    """Binned Brier decomposition BS = REL − RES + UNC + WBV − 2·WBC (Stephenson et al. 2008).

    Attributes
    ----------
    brier : float
        The Brier score E_w[(p − y)²] (computed directly, not from the terms).
    rel : float
        Reliability Σ (W_k/W)(p̄_k − ȳ_k)².
    res : float
        Resolution Σ (W_k/W)(ȳ_k − ȳ)².
    unc : float
        Uncertainty E_w[(y − ȳ)²] (= ȳ(1 − ȳ) for binary y).
    wbv : float
        Within-bin variance of the forecasts (1/W) Σ_k Σ_{i∈k} w_i (p_i − p̄_k)².
    wbc : float
        Within-bin covariance (1/W) Σ_k Σ_{i∈k} w_i (p_i − p̄_k)(y_i − ȳ_k).
    edges : ndarray
        The bin edges used.
    n_bins : int
    strategy : str
    """

    brier: float
    rel: float
    res: float
    unc: float
    wbv: float
    wbc: float
    edges: np.ndarray
    n_bins: int
    strategy: str

    @property
    def residual(self) -> float:
        """WBV − 2·WBC: what REL − RES + UNC misses when p varies within bins."""
        return self.wbv - 2.0 * self.wbc


def murphy_decomposition(p, y, *, n_bins: int = 10, strategy: str = "uniform",
                         weights=None) -> MurphyDecomposition:
    """Murphy (1973) binned Brier decomposition with Stephenson et al. (2008) within-bin terms.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    y : array_like, shape (n,)
        Outcomes in {0, 1} (probability labels in [0, 1] are accepted; the identity is
        algebraic).
    n_bins, strategy, weights
        As in :func:`reliability_curve` (same edge semantics, last bin closed).

    Returns
    -------
    MurphyDecomposition

    Notes
    -----
    calibration-notes §5.1: BS = REL − RES + UNC holds only if p is constant within each
    bin; adding the within-bin variance WBV and subtracting twice the within-bin covariance
    WBC makes BS = REL − RES + UNC + WBV − 2·WBC hold exactly (to rounding, ~1e-16) for any
    binning and any positive weights.

    Examples
    --------
    >>> d = murphy_decomposition([0.2, 0.2, 0.7, 0.7], [0, 1, 1, 1], n_bins=2)
    >>> abs(d.rel - d.res + d.unc + d.wbv - 2 * d.wbc - d.brier) < 1e-15
    True
    """
    p, y, w = check_forecasts(p, y, weights, binary=False)
    edges = bin_edges(p, n_bins=n_bins, strategy=strategy)
    idx, count, wk, swp, swy, _ = _bin_sums(p, y, w, edges)
    W = np.sum(w)
    safe = np.where(count == 0, 1.0, wk)
    pk = swp / safe
    yk = swy / safe
    ybar = np.sum(w * y) / W
    rel = np.sum(wk * (pk - yk) ** 2) / W
    res = np.sum(wk * (yk - ybar) ** 2) / W
    unc = np.sum(w * (y - ybar) ** 2) / W
    dp = p - pk[idx]
    dy = y - yk[idx]
    wbv = np.sum(w * dp**2) / W
    wbc = np.sum(w * dp * dy) / W
    brier = np.sum(w * (p - y) ** 2) / W
    return MurphyDecomposition(brier=float(brier), rel=float(rel), res=float(res),
                               unc=float(unc), wbv=float(wbv), wbc=float(wbc), edges=_ro(edges),
                               n_bins=int(edges.size - 1), strategy=strategy)


@dataclass(frozen=True, eq=False)
class ConsistencyBands:
    """Band of per-bin observed frequencies that a calibrated forecaster's curve stays inside.

    Attributes
    ----------
    edges : ndarray
        Bin edges (numpy-histogram semantics).
    mean_forecast : ndarray
        p̄_k (NaN if empty) — the centre a calibrated forecaster aims at.
    low, high : ndarray
        The band at each non-empty bin (NaN if empty): simultaneous (the whole curve, see
        :mod:`core.calibration.bands`) or pointwise quantiles of the resampled ȳ*_k.
    empty : ndarray of bool
    level : float
        Simultaneous: share of whole calibrated curves the band is built to hold; pointwise:
        share at each bin.
    n_boot : int
    simultaneous : bool
    pointwise_level : float
        The share of resampled ȳ*_k inside the band at each single bin, at least.
    coverage : float
        Share of ``n_check`` fresh calibrated curves (not used to build the band) lying
        wholly inside it; NaN when ``n_check`` is 0.
    n_check : int
    """

    edges: np.ndarray
    mean_forecast: np.ndarray
    low: np.ndarray
    high: np.ndarray
    empty: np.ndarray
    level: float
    n_boot: int
    simultaneous: bool = True
    pointwise_level: float = float("nan")
    coverage: float = float("nan")
    n_check: int = 0


def _resampled_frequencies(rng, p, onehot, safe, m_total):
    """``m_total`` calibrated curves: per-bin weighted frequencies of y* ~ Bernoulli(p)."""
    sums = np.empty((m_total, onehot.shape[1]))
    chunk = max(1, int(4_000_000 // p.size))
    for start in range(0, m_total, chunk):
        m = min(chunk, m_total - start)
        ystar = (rng.random((m, p.size)) < p).astype(float)
        sums[start:start + m] = ystar @ onehot
    return sums / safe


def consistency_bands(p, *, n_bins: int = 10, strategy: str = "uniform", weights=None,
                      n_boot: int = 1000, level: float = 0.9, seed,
                      simultaneous: bool = True, n_check: int = 0,
                      edges=None) -> ConsistencyBands:
    """Consistency band for a binned reliability diagram by resampling y* ~ Bernoulli(p).

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1]. The outcomes are not used: the band describes the hypothesis
        that the forecaster is calibrated.
    n_bins, strategy, weights
        As in :func:`reliability_curve`; the bins are fixed by the observed p.
    n_boot : int, default 1000
        Number of resamples that build the band.
    level : float, default 0.9
        Simultaneous (default): at least this share of whole calibrated curves lies inside
        (issue 18). Pointwise: the share at each bin (R ``reliabilitydiag``'s level 0.9).
    seed : int or numpy.random.Generator
        Required. Passed to ``numpy.random.default_rng`` (a Generator is used as is, and
        advanced).
    simultaneous : bool, default True
        A band for the whole curve (:func:`core.calibration.bands.band_envelope`), or the
        former pointwise band.
    n_check : int, default 0
        Fresh calibrated curves drawn after the band's own, to measure ``coverage``.
    edges : array_like, optional
        Bin edges to use instead of those of ``p`` (e.g. the full data's quantile edges when
        ``p`` is a subsample of it).

    Returns
    -------
    ConsistencyBands

    Notes
    -----
    calibration-notes §2.4 (R reliabilitydiag "consistency regions": bands around the
    diagonal simulated under the hypothesis of calibration) and §7 (determinism). Each
    resample draws y*_i = 1(U_i < p_i) with U_i uniform on [0, 1) from the Generator, so
    p = 0 never and p = 1 always yields 1; per-bin weighted frequencies ȳ*_k are collected.
    A pointwise 90 % band holds each bin 90 % of the time but the whole curve much less
    often (about half the time with ten bins on seed 003's default scenario), so the band
    is simultaneous by default. Empty bins are not part of the band. The same seed gives
    byte-identical bands.
    """
    p = check_probabilities(as_float_array(p, "p"))
    w = check_weights(weights, p.size)
    level = check_level(level)
    n_boot = check_n_boot(n_boot)
    n_check = 0 if n_check == 0 else check_n_boot(n_check, "n_check")
    rng = np.random.default_rng(seed)
    if edges is None:
        edges = bin_edges(p, n_bins=n_bins, strategy=strategy)
    else:
        edges = as_float_array(edges, "edges")
        if edges.size < 2 or np.any(np.diff(edges) < 0) or edges[0] > 0 or edges[-1] < 1:
            raise ValueError(f"edges must be non-decreasing from ≤ 0 to ≥ 1, got {edges}")
    idx, count, wk, swp, _, _ = _bin_sums(p, np.zeros_like(p), w, edges)
    B = edges.size - 1
    empty = count == 0
    onehot = np.zeros((p.size, B))
    onehot[np.arange(p.size), idx] = w
    safe = np.where(empty, 1.0, wk)
    freq = _resampled_frequencies(rng, p, onehot, safe, n_boot)
    env = band_envelope(freq[:, ~empty], level=level, simultaneous=simultaneous)
    lo = np.full(B, np.nan)
    hi = np.full(B, np.nan)
    lo[~empty], hi[~empty] = env.low, env.high
    coverage = float("nan")
    if n_check:
        check = _resampled_frequencies(rng, p, onehot, safe, n_check)
        coverage = share_inside(check, lo, hi)
    mean_f = np.where(empty, np.nan, swp / safe)
    return ConsistencyBands(edges=_ro(edges), mean_forecast=_ro(mean_f), low=_ro(lo),
                            high=_ro(hi), empty=_ro(empty), level=level, n_boot=n_boot,
                            simultaneous=bool(simultaneous),
                            pointwise_level=float(env.pointwise_level), coverage=coverage,
                            n_check=int(n_check))
