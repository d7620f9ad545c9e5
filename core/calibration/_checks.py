"""Shared input validation for ``core.calibration`` (seed 003 §3–4; calibration-notes §4.4, §7).

Every public function of the package funnels its data through these helpers, so the error
messages are uniform, one line long and name the offending argument. All checks raise
``ValueError``; none of them warns or mutates its input (the arrays returned are new float64
copies or read-only views the caller may not write to).

Conventions
-----------
* Data arrays are 1-D (or, where a function says so, ``(..., n)`` with repetitions in the
  leading axes), float64, finite and non-empty.
* Forecasts ``p`` lie in the closed interval [0, 1]; ``p = 0`` and ``p = 1`` are valid.
* Outcomes ``y`` are either binary ({0, 1}, booleans accepted) or, where a function allows
  probability labels (e.g. a judge's truth probability), anywhere in [0, 1].
* Weights are finite and strictly positive; ``None`` means unit weights.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = [
    "as_float_array",
    "check_alpha",
    "check_forecasts",
    "check_labels",
    "check_level",
    "check_min_size",
    "check_probabilities",
    "check_same_length",
    "check_weights",
    "z_quantile",
]


def as_float_array(x, name: str, *, ndim: int | None = 1, allow_nan: bool = False) -> np.ndarray:
    """Return ``x`` as a non-empty float64 array of the given ``ndim`` (any ``ndim`` if None).

    Raises ``ValueError`` for wrong dimensionality, emptiness, non-numeric input or
    non-finite entries (NaN is tolerated only with ``allow_nan=True``; ±inf never is).
    """
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if a.ndim == 0:
        raise ValueError(f"{name} must be an array, got a scalar")
    if a.size == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} is empty")
    bad = np.isinf(a) if allow_nan else ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} non-finite value(s)")
    return a


def check_same_length(**arrays: np.ndarray) -> int:
    """Check that all arrays have the same last-axis length and return it."""
    lengths = {name: a.shape[-1] for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(f"arrays must have equal length, got {desc}")
    return next(iter(lengths.values()))


def check_probabilities(p: np.ndarray, name: str = "p") -> np.ndarray:
    """Check that every entry of ``p`` lies in [0, 1] (NaN entries are left to the caller)."""
    bad = (p < 0) | (p > 1)
    if bad.any():
        first = float(p[bad].flat[0])
        raise ValueError(f"{name} must lie in [0, 1]; {int(bad.sum())} value(s) outside, e.g. "
                         f"{first!r}")
    return p


def check_labels(y: np.ndarray, name: str = "y", *, binary: bool = True) -> np.ndarray:
    """Check outcomes: in {0, 1} if ``binary`` else in [0, 1]."""
    if binary:
        bad = (y != 0) & (y != 1)
        if bad.any():
            first = float(y[bad].flat[0])
            raise ValueError(f"{name} must be binary (0/1); {int(bad.sum())} value(s) are not, "
                             f"e.g. {first!r}")
        return y
    return check_probabilities(y, name)


def check_weights(weights, n: int, name: str = "weights") -> np.ndarray:
    """Return unit weights if ``weights`` is None, else a validated 1-D positive float copy."""
    if weights is None:
        return np.ones(n)
    w = as_float_array(weights, name)
    if w.shape[0] != n:
        raise ValueError(f"{name} must have length {n}, got {w.shape[0]}")
    if (w <= 0).any():
        raise ValueError(f"{name} must be > 0; {int((w <= 0).sum())} value(s) are not")
    return w


def check_forecasts(p, y, weights=None, *, binary: bool = True,
                    p_name: str = "p", y_name: str = "y"):
    """Validate a (forecast, outcome, weight) triple and return float64 copies ``(p, y, w)``.

    ``p`` must be 1-D in [0, 1]; ``y`` 1-D of the same length, binary unless ``binary=False``
    (then in [0, 1]); ``w`` finite and > 0 (unit weights when ``weights`` is None).
    """
    p = check_probabilities(as_float_array(p, p_name), p_name)
    y = check_labels(as_float_array(y, y_name), y_name, binary=binary)
    n = check_same_length(**{p_name: p, y_name: y})
    w = check_weights(weights, n)
    return p, y, w


def check_min_size(n: int, minimum: int, what: str) -> None:
    """Raise if ``n < minimum`` (e.g. variances need two observations)."""
    if n < minimum:
        raise ValueError(f"need at least {minimum} {what}, got {n}")


def check_level(level: float, name: str = "level") -> float:
    """Check a confidence level in the open interval (0, 1)."""
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level}")
    return level


def check_alpha(alpha: float) -> float:
    """Check an error level α in the open interval (0, 1)."""
    return check_level(alpha, "alpha")


def z_quantile(alpha: float) -> float:
    """Two-sided standard-normal critical value z_{1−α/2}."""
    return float(norm.ppf(1.0 - check_alpha(alpha) / 2.0))
