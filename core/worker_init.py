"""What a worker process does once, before its first call (``pages/_shared/workers.py``).

It lives in ``core`` so that a worker imports nothing of the page glue (importing
``pages._shared.workers`` would import its package, and with it Streamlit and every page's
caches). :func:`prepare` imports the modules the calls use and freezes them out of the
cyclic garbage collector, as ``pages/_shared/preload.py`` does in the server: a full
collection that walked them in the middle of a call made a bias-lab refit take 0.57 s
instead of 0.3 s.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterable

__all__ = ["prepare"]


def prepare(modules: Iterable[str]) -> None:
    """Import ``modules`` (names), then ``gc.collect()`` and ``gc.freeze()``."""
    for name in modules:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()
