"""A guided tour of source-conflict failure modes, for a class (issue 22).

One :class:`Stop` per failure mode, in :data:`STOPS` order: the failure in plain words, an
example chosen by a written deterministic rule, one chart, a question asked before the reveal,
a deep link into the full page and what makes the failure go away. Every stop carries a check
(:attr:`StopView.shows_failure`) that a test runs, so the tour cannot silently rot when the
generator, the data or a resolver changes.

No Streamlit here: the Tour page (``pages/0_Tour.py``) draws what :func:`compute_stop`
returns, with figures from :mod:`core.figures.tour`; :func:`tour_html` writes the whole tour
as one self-contained file (``python -m core tour --html OUT``).
"""

from __future__ import annotations

from .export import tour_html
from .index import INDEX_COLUMNS, index_frame
from .model import STORIES, Chart, Stop, StopView, TeacherNote, TourData
from .registry import ORDER, STOPS, compute_stop, compute_tour, stop
from .vocabulary import stop_terms, terms_in

__all__ = ["INDEX_COLUMNS", "ORDER", "STOPS", "STORIES", "Chart", "Stop", "StopView",
           "TeacherNote", "TourData", "compute_stop", "compute_tour", "index_frame", "stop",
           "stop_terms", "terms_in", "tour_html"]
