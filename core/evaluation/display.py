"""A table as a panel shows it: the columns a reader compares, their titles, their formats.

The view objects of the evaluation pages (:mod:`.leaderboard_view`, :mod:`.lab_view`) hand
each table to the page as a :class:`Table`: ``shown`` holds only the columns a reader
compares, ``labels`` their short titles (the long form goes in ``help``), ``formats`` the
``str.format`` of a float column that is not ``"{:.1f}"``, and ``full`` every column, for the
download. The glue (``pages._shared.evaluation.show_table``) draws it.

Invariant: every key of ``labels`` and ``formats`` is a column of ``shown``, and every column
of ``shown`` is a column of ``full`` unless ``full`` is a different table by design (the
per-question download of a per-source table): then ``derived`` is True. ``index`` says
whether the rows' index is part of the table (a matrix whose rows are labels).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from ..frozen import FrozenDict

__all__ = ["Table", "table"]


@dataclass(frozen=True, eq=False)
class Table:
    """One table of a panel (see the module docstring); compared and hashed by identity."""

    shown: pd.DataFrame
    labels: FrozenDict
    formats: FrozenDict
    full: pd.DataFrame
    stem: str
    derived: bool = False
    index: bool = False

    def __post_init__(self) -> None:
        extra = [c for c in (*self.labels, *self.formats) if c not in self.shown.columns]
        if extra:
            raise ValueError(f"table {self.stem!r}: {extra} are not shown columns")
        if not self.derived:
            missing = [c for c in self.shown.columns if c not in self.full.columns]
            if missing:
                raise ValueError(f"table {self.stem!r}: shown columns {missing} are not in "
                                 "the download")


def table(frame: pd.DataFrame, labels: Mapping[str, str], *, stem: str,
          formats: Mapping[str, str] | None = None, full: pd.DataFrame | None = None,
          index: bool = False) -> Table:
    """``frame``'s columns named in ``labels`` (in that order) as a :class:`Table`.

    ``full`` (default ``frame``) is the download; ``index=True`` keeps ``frame``'s index
    (a matrix whose rows are labels), else the rows are renumbered.
    """
    shown = frame[list(labels)]
    if not index:
        shown = shown.reset_index(drop=True)
    full = frame if full is None else full
    derived = any(c not in full.columns for c in shown.columns)
    return Table(shown, FrozenDict(labels), FrozenDict(formats or {}), full, stem, derived,
                 index)
