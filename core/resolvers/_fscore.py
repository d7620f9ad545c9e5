"""F0.5 from selective-answering counts (the benchmark specification §2.12).

``F_β = (1 + β²)·P·R / (β²·P + R)`` with β = 0.5, ``P = TP/(TP+FP)``, ``R = TP/(TP+FN)``;
an undefined precision or recall (zero denominator) gives F = 0. Works elementwise on arrays
of counts, so a whole threshold grid is scored at once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["f_beta", "first_best"]


def f_beta(tp, fp, fn, *, beta: float = 0.5) -> np.ndarray:
    """Elementwise F_β of count arrays (0 where P or R is undefined or both are 0)."""
    tp, fp, fn = (np.asarray(x, float) for x in (tp, fp, fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        r = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        b2 = beta * beta
        f = np.where(b2 * p + r > 0, (1 + b2) * p * r / (b2 * p + r), 0.0)
    return f


def first_best(values: np.ndarray) -> int:
    """Index of the first maximum of a flattened grid (the released strict ``>`` rule)."""
    return int(np.argmax(np.asarray(values).reshape(-1)))
