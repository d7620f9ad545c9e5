"""Smooth ECE (smECE) and the smoothed reliability curve, numerically identical to relplot 1.0.3.

Sources: Błasiok & Nakkiran (ICLR 2024), relplot 1.0.3 (apple/ml-calibration, the version with
the 2025-11 endpoint fix); the calibration notes §2.3 (how smECE is
discretised) and §5.2 (definition); seed 003
§4 (calibration error of confidence rules).

Discretisation (copied from relplot 1.0.3 for parity; calibration-notes §2.3)
------------------------------------------------------------------------------
1. Values v_i (the residual p_i − y_i, or 1 for the density) are spread onto a uniform grid of
   m = max(2000, round(20/σ)) // 2 + 1 nodes on [0, 1] by linear splitting (node
   j = ⌊p(m − 1)⌋ clipped to [0, m − 2] gets (1 − frac)·v, node j + 1 gets frac·v).
2. The grid values are convolved with a Gaussian kernel of width σ sampled on
   ``linspace(0, 1, m)`` around 0.5 and normalised by 1/(√(2π)σ), after reflecting the grid at
   0 and 1 (``numpy.convolve``, "valid" mode, centre slice).
3. The result is interpolated linearly to the evaluation mesh ``linspace(0, 1, M)`` with
   M = max(round(10/σ), 200).
4. r̂ = smoothed residual / (smoothed density + 1e-4); smECE_σ = Σ|r̂|·δ̂ / Σ δ̂ with
   δ̂ = smoothed density + 1e-4.
5. σ* solves σ = smECE_σ by relplot's ``search_param``: with the predicate
   P(σ) = "σ < 1e-3 or σ < smECE_σ" (floor ε = 1e-3), σ = 1 is returned if P(1) holds (it
   cannot for binary data, as smECE_σ ≤ 1); otherwise 10 bisection steps on [0, 1]
   (resolution 1/1024) move the lower end to midpoints where P holds and the upper end to
   the others, and the upper end is returned.

``round`` is Python's (banker's) rounding, as in relplot. Weights are not supported (relplot
has none).

The density strip under a diagram
---------------------------------
relplot draws the forecast density at the curve's σ*, and σ* depends on the labels: the same
forecasts would get a different density under Y and under Z. :func:`forecast_bandwidth`
gives a bandwidth from the forecasts alone (Silverman's rule of thumb), which
:func:`smooth_reliability` uses for the density when asked (``density_bandwidth``); the
curve itself keeps σ*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve
from scipy.sparse import csr_matrix

from core.calibration._checks import check_forecasts, check_level
from core.calibration.bands import band_envelope, check_n_boot, share_inside

__all__ = ["DENSE_SHARE", "SmoothBand", "SmoothReliability", "dense_region",
           "forecast_bandwidth", "smooth_consistency_band", "smooth_ece", "smooth_reliability"]

_DENSITY_EPS = 1e-4  # relplot BaseKernelMixin.smooth(eps=0.0001)
_SIGMA_FLOOR = 1e-3  # relplot smECE(eps=0.001)
_BISECTION_STEPS = 10  # relplot search_param(refine=10)
_MESH_MIN = 200  # relplot config.smECE_mesh_pts / plot_mesh_pts
_BANDWIDTH_RANGE = (0.01, 0.25)  # forecast_bandwidth's clip (a spike, at most a quarter)
#: A smooth curve is drawn solid (and its band drawn) where its forecast density reaches this
#: share of its peak (:func:`dense_region`).
DENSE_SHARE = 0.05


def _round_to_grid(f: np.ndarray, v: np.ndarray, m: int) -> np.ndarray:
    j = (f * (m - 1)).astype(int).clip(0, m - 2)
    frac = f * (m - 1) - j
    out = np.zeros(m)
    np.add.at(out, j, (1 - frac) * v)
    np.add.at(out, j + 1, frac * v)
    return out


def _kernel(sigma: float, m: int) -> np.ndarray:
    t = np.linspace(0, 1, m)
    k = np.exp(-(t - 0.5) * (t - 0.5) / (2 * sigma**2))
    return k / (np.sqrt(2 * np.pi) * sigma)


def _interpolate(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    b = len(v)
    size = 1 / (b - 1)
    j = (t * (b - 1)).astype(int).clip(0, b - 2)
    frac = (t - j * size) / size
    return v[j] * (1 - frac) + v[j + 1] * frac


def _apply(f: np.ndarray, v: np.ndarray, t: np.ndarray, sigma: float) -> np.ndarray:
    """Reflected-Gaussian smoothing of values v located at f, evaluated at t (relplot)."""
    m = max(2000, round(20 / sigma)) // 2 + 1
    grid = _round_to_grid(f, v, m)
    ker = _kernel(sigma, m)
    ext = np.concatenate([np.flip(grid)[:-1], grid, np.flip(grid)[1:]])
    smoothed = np.convolve(ext, ker, "valid")[m // 2: m // 2 + m]
    return _interpolate(t, smoothed)


def _smooth(f, v, t, sigma):
    num = _apply(f, v, t, sigma)
    dens = _apply(f, np.ones_like(v), t, sigma) + _DENSITY_EPS
    return num / dens, dens


def _smece_sigma(f: np.ndarray, y: np.ndarray, sigma: float) -> float:
    t = np.linspace(0, 1, max(round(10 / sigma), _MESH_MIN))
    r, dens = _smooth(f, f - y, t, sigma)
    return float(np.sum(np.abs(r) * dens) / np.sum(dens))


def smooth_ece(p, y, *, sigma: float | None = None) -> tuple[float, float]:
    """Smooth ECE (Błasiok & Nakkiran 2024) with relplot 1.0.3's numerics.

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    y : array_like, shape (n,)
        Binary outcomes.
    sigma : float, optional
        Kernel bandwidth σ > 0. If omitted, the automatic fixed point σ* = smECE_σ* is used.

    Returns
    -------
    value : float
        smECE_σ = ∫|r̂_σ| δ̂_σ / ∫ δ̂_σ (discretised as in the module docstring).
    sigma : float
        The bandwidth used (σ* when ``sigma`` is None; a multiple of 1/1024 or 1.0).

    Notes
    -----
    calibration-notes §5.2 (definition) and §2.3 (discretisation). Matches relplot 1.0.3's
    ``smECE(f, y, return_width=True)`` when ``sigma`` is None and ``smECE_sigma(f, y, sigma)``
    otherwise. Version ≤ 1.0.2 normalised differently; do not compare with those numbers.
    The search for σ*: 10 bisection steps on [0, 1] with floor ε = 1e-3.

    Examples
    --------
    >>> v, s = smooth_ece([0.9] * 10, [1] * 9 + [0])
    >>> v < 0.05, 0 < s <= 1
    (True, True)
    """
    f, yy, _ = check_forecasts(p, y, None, binary=True)
    if sigma is not None:
        sigma = float(sigma)
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number, got {sigma}")
        return _smece_sigma(f, yy, sigma), sigma

    def too_small(s: float) -> bool:
        return s < _SIGMA_FLOOR or s < _smece_sigma(f, yy, s)

    if too_small(1.0):  # relplot search_param: a true predicate at the start returns it
        sig = 1.0
    else:
        hi, lo = 1.0, 0.0
        for _ in range(_BISECTION_STEPS):
            mid = (hi + lo) / 2
            if too_small(mid):
                lo = mid
            else:
                hi = mid
        sig = hi
    return _smece_sigma(f, yy, sig), sig


def forecast_bandwidth(p) -> float:
    """A kernel bandwidth for the forecasts' density that depends on the forecasts alone.

    Silverman's rule of thumb ``0.9 · min(sd, IQR / 1.34) · n^(−1/5)`` (the IQR term only
    when it is positive: forecasts on a few values have IQR 0), clipped to [0.01, 0.25] so
    that constant forecasts give a narrow spike rather than a zero width.

    Invariant: a function of ``p`` only — no labels, so the density strip of a reliability
    diagram is the same under every label source.

    Examples
    --------
    >>> forecast_bandwidth([0.5] * 20)
    0.01
    >>> 0.01 < forecast_bandwidth([0.1, 0.4, 0.5, 0.6, 0.9]) < 0.25
    True
    """
    f = np.asarray(p, float).ravel()
    if f.size == 0 or not np.all(np.isfinite(f)):
        raise ValueError(f"forecast_bandwidth needs finite forecasts, got {f.size} values")
    sd = float(np.std(f, ddof=1)) if f.size > 1 else 0.0
    q75, q25 = np.percentile(f, [75, 25])
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    h = 0.9 * spread * f.size ** (-0.2)
    return float(np.clip(h, *_BANDWIDTH_RANGE))


@dataclass(frozen=True, eq=False)
class SmoothReliability:
    """Kernel-smoothed reliability curve on a grid (relplot ``prepare_rel_diagram`` shape).

    Attributes
    ----------
    grid : ndarray
        Evaluation mesh ``linspace(0, 1, n_grid)``.
    frequency : ndarray
        Nadaraya–Watson smoothed E[y | p] at the grid (relplot's ``mu``).
    density : ndarray
        Kernel density of the forecasts at the grid (relplot's ``density``; integrates to
        about 1 over [0, 1]) at bandwidth ``density_bandwidth``.
    sigma : float
        The bandwidth of the curve.
    density_bandwidth : float or None
        The bandwidth of ``density`` (``None``: the same σ, as relplot).
    """

    grid: np.ndarray
    frequency: np.ndarray
    density: np.ndarray
    sigma: float
    density_bandwidth: float | None = None


def smooth_reliability(p, y, *, sigma: float | None = None, n_grid: int = 200,
                       density_bandwidth: float | None = None) -> SmoothReliability:
    """Smoothed reliability curve and forecast density for plotting (relplot 1.0.3 numerics).

    Parameters
    ----------
    p : array_like, shape (n,)
        Forecasts in [0, 1].
    y : array_like, shape (n,)
        Binary outcomes.
    sigma : float, optional
        Bandwidth; σ* of :func:`smooth_ece` if omitted (relplot's default for the diagram).
    n_grid : int, default 200
        Mesh size (relplot ``config.plot_mesh_pts``).
    density_bandwidth : float, optional
        Bandwidth of the forecast density; σ if omitted (relplot). Pass
        :func:`forecast_bandwidth` for a density that does not depend on the labels.

    Returns
    -------
    SmoothReliability

    Notes
    -----
    calibration-notes §2.3. This is the *full-data* fit of relplot's
    ``prepare_rel_diagram(f, y, plot_confidence_band=False)`` — ``mu`` = reflected-Gaussian
    smoothing of y divided by (smoothed count + 1e-4) — and its ``density`` (``kde``: weights
    1/n, no ε). relplot's default diagram instead plots the mean of 200 unseeded bagged fits
    (pitfall §6.2); we do not reproduce that.
    """
    f, yy, _ = check_forecasts(p, y, None, binary=True)
    if isinstance(n_grid, bool) or int(n_grid) != n_grid or n_grid < 2:
        raise ValueError(f"n_grid must be an integer >= 2, got {n_grid!r}")
    if sigma is None:
        _, sigma = smooth_ece(f, yy)
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive finite number, got {sigma}")
    t = np.linspace(0, 1, int(n_grid))
    mu, _ = _smooth(f, yy, t, sigma)
    h = sigma
    if density_bandwidth is not None:
        h = float(density_bandwidth)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"density_bandwidth must be a positive finite number, got {h}")
    density = _apply(f, np.full(f.size, 1.0 / f.size), t, h)
    return SmoothReliability(grid=t, frequency=mu, density=density, sigma=sigma,
                             density_bandwidth=None if density_bandwidth is None else h)


def dense_region(density, *, share: float = DENSE_SHARE) -> np.ndarray:
    """Where a curve is drawn solid and its band drawn: from the first to the last grid point
    whose forecast density reaches ``share`` of its peak (one contiguous range; bool mask).

    Examples
    --------
    >>> dense_region([0.0, 1.0, 0.01, 2.0, 0.0]).tolist()
    [False, True, True, True, False]
    """
    d = np.asarray(density, float)
    out = np.zeros(d.size, bool)
    if d.size == 0 or not np.isfinite(d).any() or np.nanmax(d) <= 0:
        return out
    ok = np.flatnonzero(d >= share * float(np.nanmax(d)))
    out[int(ok[0]):int(ok[-1]) + 1] = True
    return out


@dataclass(frozen=True, eq=False)
class SmoothBand:
    """Consistency band of the smooth reliability curve (see :func:`smooth_consistency_band`).

    ``low``/``high`` are NaN outside ``region`` (the grid points the band is made for);
    ``coverage`` is the share of ``n_check`` fresh calibrated curves wholly inside the band
    (NaN if none); ``pointwise_level`` the share at each single grid point, at least.
    """

    grid: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_boot: int
    simultaneous: bool = True
    pointwise_level: float = float("nan")
    coverage: float = float("nan")
    n_check: int = 0


def smooth_consistency_band(p, *, sigma: float, n_boot: int = 100, level: float = 0.9,
                            seed: int = 0, n_grid: int = 200, simultaneous: bool = True,
                            n_check: int = 0, region=None) -> SmoothBand:
    """Where the smooth curve of a *calibrated* forecaster with forecasts ``p`` would lie.

    Each of ``n_boot`` resamples draws y* ~ Bernoulli(p) (seeded ``numpy.random.Generator``)
    and smooths it with :func:`smooth_reliability` at the fixed
    bandwidth ``sigma`` (the observed curve's σ*). The band is simultaneous by default: at
    least ``level`` of whole calibrated curves lie inside it over ``region``
    (:func:`core.calibration.bands.band_envelope`; issue 18); ``simultaneous=False`` gives
    the pointwise quantile range. ``n_check`` fresh curves drawn afterwards measure
    ``coverage``. ``region`` (bool mask over the grid, default all of it) is where the band
    is made for, e.g. :func:`dense_region` of the drawn curve: far from every forecast the
    kernel curve is an extrapolation and the band would be meaningless there.
    Same idea as the binned and CORP consistency bands (R ``reliabilitydiag``), and unlike
    relplot's bands it is seeded and centred on the hypothesis of calibration.
    """
    p = np.asarray(p, float)
    level = check_level(level)
    n_boot = check_n_boot(n_boot)
    n_check = 0 if n_check == 0 else check_n_boot(n_check, "n_check")
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, int(n_grid))
    where = np.ones(grid.size, bool) if region is None else np.asarray(region, bool)
    if where.shape != grid.shape:
        raise ValueError(f"region must be a bool mask of the {grid.size} grid points, got "
                         f"shape {where.shape}")
    # every resample shares the forecasts and σ, and smoothing is linear in the outcomes:
    # one (B, n) draw (the same stream as B draws of n), one batched convolution, and the
    # density (outcome-free) once. Equal to B calls of smooth_reliability up to rounding.
    dens = _apply(p, np.ones_like(p), grid, float(sigma)) + _DENSITY_EPS

    def fits(m: int) -> np.ndarray:
        ystar = (rng.random((m, p.size)) < p[None, :]).astype(float)
        return _apply_rows(p, ystar, grid, float(sigma)) / dens[None, :]

    env = band_envelope(fits(n_boot)[:, where], level=level, simultaneous=simultaneous)
    lo = np.full(grid.size, np.nan)
    hi = np.full(grid.size, np.nan)
    lo[where], hi[where] = env.low, env.high
    coverage = share_inside(fits(n_check), lo, hi) if n_check else float("nan")
    return SmoothBand(grid=grid, low=lo, high=hi, level=level, n_boot=n_boot,
                      simultaneous=bool(simultaneous),
                      pointwise_level=float(env.pointwise_level), coverage=coverage,
                      n_check=int(n_check))


def _apply_rows(f: np.ndarray, v: np.ndarray, t: np.ndarray, sigma: float) -> np.ndarray:
    """:func:`_apply` for every row of ``v`` (B, n) at once (FFT convolution).

    The spreading onto the grid is a sparse (n, m) map with two entries per forecast, so the
    memory is that of ``v`` and the result, not n × m.
    """
    m = max(2000, round(20 / sigma)) // 2 + 1
    j = (f * (m - 1)).astype(int).clip(0, m - 2)
    frac = f * (m - 1) - j
    rows = np.arange(f.size)
    spread = csr_matrix((np.r_[1 - frac, frac], (np.r_[rows, rows], np.r_[j, j + 1])),
                        shape=(f.size, m))  # the linear map of _round_to_grid
    grid = np.asarray((spread.T @ v.T).T)
    ext = np.concatenate([grid[:, ::-1][:, :-1], grid, grid[:, ::-1][:, 1:]], axis=1)
    smoothed = fftconvolve(ext, _kernel(sigma, m)[None, :], mode="valid",
                           axes=1)[:, m // 2: m // 2 + m]
    b = smoothed.shape[1]
    size = 1 / (b - 1)
    jj = (t * (b - 1)).astype(int).clip(0, b - 2)
    fr = (t - jj * size) / size
    return smoothed[:, jj] * (1 - fr) + smoothed[:, jj + 1] * fr
