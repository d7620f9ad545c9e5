"""Caches shared by every session: read-only results and figures, keyed on small values.

``st.cache_data`` pickles a result when it stores it and unpickles a fresh copy on every hit,
which for fitted runs, result objects and Plotly figures costs tens of milliseconds per
rerun. What every session only *reads* is shared as it is through ``st.cache_resource``
instead (:func:`shared_cache`); callers must never mutate it. Every cache is bounded
(``max_entries``) and expires (``ttl``), so a class of visitors cannot grow the server
without limit.

:func:`cached_figure` caches a figure under a key that the caller builds from the widget
values the figure depends on (never from arrays: Streamlit hashes big arrays from a sample).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import plotly.graph_objects as go
import streamlit as st

from core.figures.fast import freeze

__all__ = ["FIGURE_CACHE_ENTRIES", "RESULT_CACHE_ENTRIES", "cached_figure", "cached_result",
           "shared_cache"]

#: Figures kept across sessions (each 50 kB–1 MB).
FIGURE_CACHE_ENTRIES = 256
#: Intermediate results kept across sessions (analyses keyed on widget values).
RESULT_CACHE_ENTRIES = 128

T = TypeVar("T")


def shared_cache(*, max_entries: int, ttl: float = 3600.0, spinner: str | bool = False):
    """``st.cache_resource`` for results that every session reads and nobody mutates.

    Parameters
    ----------
    max_entries : int
        Least-recently-used entries beyond this are dropped.
    ttl : float, default=3600
        Seconds an entry lives.
    spinner : str or bool, default=False
        Text shown while a miss computes (``False``: none).
    """
    return st.cache_resource(show_spinner=spinner, max_entries=max_entries, ttl=ttl)


@shared_cache(max_entries=FIGURE_CACHE_ENTRIES)
def _figure(name: str, key: tuple, _build: Callable[[], T]) -> T:
    fig = _build()
    return freeze(fig) if isinstance(fig, go.Figure) else fig  # drawn often, changed never


def cached_figure(name: str, key: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """The figure ``build()`` returns, shared by every session under ``(name, key)``.

    ``key`` must hold every value the figure depends on (widget values, a store stamp, a
    data digest); ``build`` is called only on a miss. The figure is shared: draw it, never
    change it (it is stored as a :class:`core.figures.fast.FrozenFigure`, whose plain form
    is computed once).
    """
    return _figure(name, tuple(key), build)


@shared_cache(max_entries=RESULT_CACHE_ENTRIES)
def _result(name: str, key: tuple, _build: Callable[[], T]) -> T:
    return _build()


def cached_result(name: str, key: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """Like :func:`cached_figure`, for an analysis result (its own bounded cache)."""
    return _result(name, tuple(key), build)
