"""Functions a test sends to a worker process; this module imports nothing of the app, so
unpickling them in the worker does not import the pages either."""

from __future__ import annotations

import sys


def glue_modules_loaded() -> list[str]:
    """The page-glue and Streamlit modules the calling process has imported."""
    return sorted(m for m in sys.modules if m.split(".")[0] in ("pages", "streamlit"))
