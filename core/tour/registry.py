"""The stops of the tour, in the order a class walks them (issue 22, point 2).

Each stop lives in the module of its story (:mod:`.stops_memory`, :mod:`.stops_pipeline`,
:mod:`.stops_labels`, :mod:`.stops_records`); :data:`ORDER` is the walking order, which
interleaves them (the copy cluster follows the biased majority: the same failure on real data).

Invariants (``tests/test_tour.py``): every stop a module defines is in :data:`ORDER` and every
key of :data:`ORDER` has exactly one stop; keys are unique.
"""

from __future__ import annotations

import duckdb

from core.store import StoreError

from . import stops_labels, stops_memory, stops_pipeline, stops_records
from .model import Stop, StopView, TourData

__all__ = ["ORDER", "STOPS", "compute_stop", "compute_tour", "stop"]

#: The walking order: one key per failure mode.
ORDER: tuple[str, ...] = (
    "biased-majority",
    "copy-cluster",
    "stale-profile",
    "stated-vs-revealed",
    "planner-optimism",
    "device-dropout",
    "extraction-or-resolution",
    "unseen-wording",
    "answer-or-abstain",
    "hints-overcorrect",
    "incomplete-reference",
    "human-pilot",
    "naive-recency",
    "expired-record",
    "same-name",
    "critical-disclosure",
)


def _collect() -> tuple[Stop, ...]:
    defined = [*stops_memory.STOPS, *stops_pipeline.STOPS, *stops_labels.STOPS,
               *stops_records.STOPS]
    keys = [s.key for s in defined]
    extra = sorted(set(keys) - set(ORDER))
    if extra:
        raise ValueError(f"stops {extra} are not in the tour's ORDER")
    if len(set(keys)) != len(keys):
        raise ValueError("two stops share a key")
    return tuple(sorted(defined, key=lambda s: ORDER.index(s.key)))


#: Every stop, in :data:`ORDER`.
STOPS: tuple[Stop, ...] = _collect()


def stop(key: str) -> Stop:
    """The stop whose key is ``key``; ``ValueError`` naming the known keys otherwise."""
    for s in STOPS:
        if s.key == key:
            return s
    raise ValueError(f"no stop {key!r}; the tour's stops are {', '.join(s.key for s in STOPS)}")


def compute_stop(key: str, data: TourData) -> StopView:
    """The view of stop ``key`` over ``data``.

    A stop that needs the store and has none, or whose store cannot be read, gets a view
    that says so (``shows_failure`` false, the reason in its note) rather than an exception.
    """
    s = stop(key)
    try:
        view = s.compute(data)
    except LookupError as exc:
        return _without(key, str(exc).strip("'\""))
    except (StoreError, duckdb.Error) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return _without(key, f"the store cannot be read ({first[:200]})")
    if view.key != key:
        raise ValueError(f"stop {key!r} computed the view of {view.key!r}")
    return view


def compute_tour(data: TourData) -> list[tuple[Stop, StopView]]:
    """Every stop with its view over ``data``, in walking order."""
    return [(s, compute_stop(s.key, data)) for s in STOPS]


def _without(key: str, why: str) -> StopView:
    return StopView(key, (), (), None, "", "", (), (), False, note=why)
