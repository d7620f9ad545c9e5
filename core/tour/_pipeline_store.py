"""What the pipeline stops need of a store before they refit a resolver on it.

A resolver is fitted on a seed's training people and calibrated on its calibration people
(seed 000 §2.2); a store imported from the authors' release holds only test people, so the
stops that refit say so in plain words instead of passing on a fitting error.
"""

from __future__ import annotations

from ..store import query_df

__all__ = ["NEEDS_SPLITS", "missing_splits"]

#: The note of a stop that cannot refit on the open store.
NEEDS_SPLITS = ("This store holds no training or calibration people to fit the resolvers on "
                "(a store imported from the authors' release has only test people); the "
                "default store, built with python -m core build, has them.")


def missing_splits(con) -> bool:
    """Whether some random seed of the store lacks training, calibration or test people."""
    counts = query_df(con, "SELECT seed, count(DISTINCT split) FILTER (WHERE split IN "
                           "('train', 'calibration', 'test')) AS n FROM personas GROUP BY seed")
    return counts.empty or bool((counts["n"] < 3).any())
