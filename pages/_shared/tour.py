"""Streamlit glue of the Tour page: one shared view per stop, its figure, the hand-outs.

Every session reads the same cached objects (:func:`.cache.shared_cache`): a class opening the
tour at once computes each stop once per store. Keys are small (the store's path and stamp,
a stop's key); the hand-outs are built only when a download button is pressed.
"""

from __future__ import annotations

import plotly.graph_objects as go

from core.figures.tour import stop_figure
from core.tour import STOPS, StopView, TourData, compute_stop, tour_html

from .cache import cached_figure, shared_cache
from .store import get_connection

__all__ = ["handout_bytes", "stop_figure_of", "stop_view_of", "tour_data_of"]


@shared_cache(max_entries=4)
def tour_data_of(path: str, stamp: int) -> TourData:
    """What the stops read: the store's read-only connection and their shared memo
    (no store: ``stamp`` is 0 and only the stops on shipped data compute)."""
    return TourData(get_connection(path, stamp) if stamp else None)


@shared_cache(max_entries=64)
def stop_view_of(path: str, stamp: int, key: str) -> StopView:
    """The view of stop ``key`` (shared: read, never change it)."""
    return compute_stop(key, tour_data_of(path, stamp))


def stop_figure_of(path: str, stamp: int, key: str) -> go.Figure | None:
    """The figure of stop ``key`` (None when its view has no chart)."""
    view = stop_view_of(path, stamp, key)
    if view.chart is None:
        return None
    return cached_figure("tour", (path, stamp, key), lambda: stop_figure(view.chart))


@shared_cache(max_entries=4, spinner="Writing the hand-out…")
def handout_bytes(path: str, stamp: int, teacher: bool) -> bytes:
    """The whole tour as one self-contained HTML file (students' or teacher's copy)."""
    pairs = [(s, stop_view_of(path, stamp, s.key)) for s in STOPS]
    return tour_html(pairs, teacher=bool(teacher)).encode("utf-8")
