"""A guided tour of source-conflict failure modes, for a class (issue 22).

One :class:`Stop` per failure mode, in :data:`STOPS` order: the failure in plain words, an
example chosen by a written deterministic rule, one chart, a question asked before the reveal,
a deep link into the full page and what makes the failure go away. Every stop carries a check
(:attr:`StopView.shows_failure`) that a test runs, so the tour cannot silently rot when the
generator, the data or a resolver changes.

No Streamlit here: the Tour page (``pages/0_Tour.py``) draws what :func:`compute_stop`
returns, with figures from :mod:`core.figures.tour`; :func:`tour_html` writes the whole tour
as one self-contained file (``python -m core tour --html OUT``).

The names below live in submodules and are imported on first use (``__getattr__``), so the
package imports none of its children at import time (``tests/test_imports.py``: no import
cycles and no package that imports its own submodules, against import races under threads).
"""

from __future__ import annotations

import importlib
from types import MappingProxyType

#: Public name → the submodule that defines it.
_HOME = MappingProxyType({
    **dict.fromkeys(("STORIES", "Chart", "Stop", "StopView", "TeacherNote", "TourData"),
                    "model"),
    **dict.fromkeys(("ORDER", "STOPS", "compute_stop", "compute_tour", "stop"), "registry"),
    **dict.fromkeys(("INDEX_COLUMNS", "index_frame"), "index"),
    "tour_html": "export",
    **dict.fromkeys(("stop_terms", "terms_in"), "vocabulary"),
})

__all__ = sorted(_HOME)


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
