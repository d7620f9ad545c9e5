"""The failure-mode index: one row per stop (issue 22, point 4).

Failure mode → stop number → the full page and the control to move → the document section.
Built from the stops' fixed words only, so it costs nothing to draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .model import STORIES, Stop

__all__ = ["INDEX_COLUMNS", "index_frame"]

#: The index's columns, in order.
INDEX_COLUMNS = ("Stop", "Failure mode", "Story", "Full page", "What to move there",
                 "Where the documents describe it")


def index_frame(stops: Sequence[Stop], *, page_titles: Mapping[str, str] | None = None,
                numbered: bool = False) -> pd.DataFrame:
    """The index of ``stops`` (numbered from 1 in the given order).

    Parameters
    ----------
    stops : sequence of Stop
        In walking order.
    page_titles : mapping, optional
        Page path → menu title; a path without one is shown as its file name.
    numbered : bool, default=False
        Put the stop's number in front of its failure mode ("3. A stale profile …") and
        leave out the Stop column (a table drawn without its index).
    """
    titles = dict(page_titles or {})
    rows = [(i, s.title, STORIES[s.story],
             titles.get(s.page, s.page.removeprefix("pages/").removesuffix(".py")),
             s.control, s.section) for i, s in enumerate(stops, start=1)]
    frame = pd.DataFrame(rows, columns=list(INDEX_COLUMNS))
    if numbered:
        frame["Failure mode"] = [f"{i}. {t}" for i, t in zip(frame["Stop"],
                                                              frame["Failure mode"],
                                                              strict=True)]
        frame = frame.drop(columns="Stop")
    return frame
