"""Item-level inference for seed 002 (*Personal Dimension Benchmark v1: methods*, §10).

The unit of analysis is the item: replicates are averaged within an item first, then

* :func:`sign_test` — the exact two-sided sign test over paired item means: ties (zero
  differences) are dropped, and with ``k = min(n₊, n₋)`` of ``n = n₊ + n₋``,
  ``p = min(1, 2 · Σ_{i ≤ k} C(n, i) / 2ⁿ)`` (``p = 1`` when ``n = 0``); it equals
  ``scipy.stats.binomtest(n₊, n, 0.5).pvalue``;
* :func:`item_bootstrap` — an item-clustered 95 % interval: the items are resampled with
  replacement (all calls of an item travel together, because the item mean is the unit) by an
  explicit :class:`numpy.random.Generator`, and the percentile interval of the resampled means
  is returned. We chose the bootstrap over a cluster-robust normal interval because families
  have five to eight items and means sit at 0 or 1, where a normal interval leaves [0, 1];
* :func:`labelled_rng` — one generator per interval, from the seed and the interval's label,
  so an interval depends on its own items and the seed only (not on line order, nor on which
  other intervals were drawn before it).
"""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np

__all__ = ["item_bootstrap", "labelled_rng", "sign_test"]


def sign_test(differences) -> tuple[int, int, float]:
    """The exact two-sided sign test of paired item differences (seed 002 §10).

    Parameters
    ----------
    differences : array_like
        One difference of item means per item (studied − comparator); NaNs are dropped and
        zeros are ties, dropped too.

    Returns
    -------
    (n_pos, n_neg, p) : tuple of int, int, float
        Positive and negative differences and the two-sided p-value.

    Examples
    --------
    >>> sign_test([1, 1, 1, 1, 1, 0, -0.5])
    (5, 1, 0.21875)
    """
    d = np.asarray(differences, float)
    d = d[np.isfinite(d)]
    n_pos, n_neg = int((d > 0).sum()), int((d < 0).sum())
    n = n_pos + n_neg
    if n == 0:
        return n_pos, n_neg, 1.0
    k = min(n_pos, n_neg)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
    return n_pos, n_neg, float(min(Fraction(1), 2 * tail))


def item_bootstrap(values, *, rng: np.random.Generator, n_boot: int = 2000,
                   level: float = 0.95) -> tuple[float, float]:
    """Item-clustered percentile interval of a mean (seed 002 §10: intervals by item).

    Parameters
    ----------
    values : array_like
        One number per item (an item mean over replicates, or a paired difference); NaNs
        are dropped.
    rng : numpy.random.Generator
        The source of the resampling (seeded by the caller).
    n_boot : int
        Bootstrap replicates (items resampled with replacement each time).
    level : float
        Coverage of the interval.

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` when there are no items.

    Examples
    --------
    >>> import numpy as np
    >>> item_bootstrap([1.0, 1.0, 1.0], rng=np.random.default_rng(0))
    (1.0, 1.0)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return float(lo), float(hi)


def labelled_rng(seed: int, *labels: str) -> np.random.Generator:
    """The generator of one named draw: ``SeedSequence(seed, spawn_key=(crc32(label),))``.

    Seed 002 §10 asks for item-clustered intervals; which items are drawn must depend on the
    set of items (the caller orders them by id) and on ``seed``, never on the order in which
    a response file lists them or on how many other intervals were drawn first. CRC-32 of
    the labels joined by a unit separator is stable across processes (``hash`` is salted).

    Parameters
    ----------
    seed : int
        A non-negative integer (the ``--seed`` of ``records score``).
    *labels : str
        What the draw is for, e.g. ``("measure", "D", "M1")``.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> a = int(labelled_rng(0, "measure", "D", "M1").integers(0, 10**6))
    >>> a == int(labelled_rng(0, "measure", "D", "M1").integers(0, 10**6))
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    key = zlib.crc32("\x1f".join(map(str, labels)).encode("utf-8"))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(key,)))
