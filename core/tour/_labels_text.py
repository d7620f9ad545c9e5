"""Number formats shared by the label stops (:mod:`core.tour.stops_labels`)."""

from __future__ import annotations

import math

__all__ = ["pct"]


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage with a no-break space before the sign ("58.1 %"); "—" for NaN.

    >>> pct(0.58078)
    '58.1\\xa0%'
    >>> pct(1.0, 0)
    '100\\xa0%'
    """
    if not math.isfinite(float(x)):
        return "—"
    return f"{100 * float(x):.{digits}f}\u00a0%"
