"""Small statistical helpers shared across the project.

``wilson_interval`` is the score interval for a binomial proportion (Wilson, 1927):
centre (k + z²/2)/(n + z²), half-width z·sqrt(k(n − k)/n + z²/4)/(n + z²), with z the
standard-normal quantile of (1 + level)/2. It is defined for n = 0 as the whole [0, 1].

``exact_interval`` is the Clopper–Pearson interval: the (1 − level)/2 quantile of
Beta(k, n − k + 1) and the (1 + level)/2 quantile of Beta(k + 1, n − k), with 0 at k = 0 and 1
at k = n. Its coverage is at least ``level`` for every p and n (Wilson dips to .925 at
p = .05, n = 20); it takes non-integer k and n (an effective size), where the beta quantiles
are the usual continuous extension.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta, norm

__all__ = ["exact_interval", "wilson_interval"]


def _counts(k, n, level: float) -> tuple[np.ndarray, np.ndarray]:
    """``k`` and ``n`` as float arrays, checked (``0 ≤ k ≤ n``, level in (0, 1))."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    k = np.asarray(k, float)
    n = np.asarray(n, float)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= k <= n")
    return k, n


def wilson_interval(k, n, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (low, high) for k successes in n trials, elementwise.

    Examples
    --------
    >>> lo, hi = wilson_interval(8, 10)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.4902, 0.9433)
    """
    k, n = _counts(k, n, level)
    z = norm.ppf(0.5 + level / 2)
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (k + z2 / 2) / (n + z2)
        half = z * np.sqrt(np.where(n > 0, k * (n - k) / np.where(n > 0, n, 1), 0) + z2 / 4) / (
            n + z2)
    lo = np.where(n > 0, np.clip(centre - half, 0, 1), 0.0)
    hi = np.where(n > 0, np.clip(centre + half, 0, 1), 1.0)
    return lo, hi


def exact_interval(k, n, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson interval (low, high) for k successes in n trials, elementwise.

    Examples
    --------
    >>> lo, hi = exact_interval(1, 20)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.0013, 0.2487)
    >>> [float(v) for v in exact_interval(0, 0)]
    [0.0, 1.0]
    """
    k, n = _counts(k, n, level)
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, beta.ppf(a, np.maximum(k, 1e-12), n - k + 1.0), 0.0)
        hi = np.where(k < n, beta.ppf(1.0 - a, k + 1.0, np.maximum(n - k, 1e-12)), 1.0)
    lo = np.where(n > 0, lo, 0.0)
    hi = np.where(n > 0, hi, 1.0)
    return lo, hi
