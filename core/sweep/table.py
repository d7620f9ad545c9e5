"""The sweep's results table: a cell's parameters beside its results frame, in one fixed shape.

Every path to the table (assembled from cell frames in memory, or read back from the store)
ends in :func:`normalise`, so two runs of the same grid compare equal exactly, whatever
executor computed them and in whatever order the cells finished.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from .cell import RESULT_COLUMNS
from .grid import Cell

__all__ = ["PARAM_COLUMNS", "TABLE_COLUMNS", "cell_params", "empty_table", "normalise",
           "results_table"]

#: Parameter columns of every results row (``fit_*_scale`` NaN = refit on the cell's own
#: scales; ``train_size`` <NA> = every train persona).
PARAM_COLUMNS = {
    "position": "int64",
    "cell_id": "str",
    "seed": "int64",
    "personas_per_difficulty": "int64",
    "bias_scale": "float64",
    "dropout_scale": "float64",
    "fit_bias_scale": "float64",
    "fit_dropout_scale": "float64",
    "difficulty_mix": "str",
    "train_size": "Int64",
    "train_draw": "int64",
    "noise": "str",
    "bootstrap": "int64",
}
#: Every column of the results table, in order.
TABLE_COLUMNS = {**PARAM_COLUMNS, **RESULT_COLUMNS}


def cell_params(cell: Cell, position: int) -> dict:
    """The :data:`PARAM_COLUMNS` values of one cell."""
    return {
        "position": position, "cell_id": cell.cell_id, "seed": cell.seed,
        "personas_per_difficulty": cell.personas_per_difficulty,
        "bias_scale": cell.bias_scale, "dropout_scale": cell.dropout_scale,
        "fit_bias_scale": np.nan if cell.fit_bias_scale is None else cell.fit_bias_scale,
        "fit_dropout_scale": (np.nan if cell.fit_dropout_scale is None
                              else cell.fit_dropout_scale),
        "difficulty_mix": cell.mix_text,
        "train_size": pd.NA if cell.train_size is None else cell.train_size,
        "train_draw": cell.train_draw, "noise": cell.noise, "bootstrap": cell.bootstrap,
    }


def empty_table() -> pd.DataFrame:
    """A results table with no rows."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in TABLE_COLUMNS.items()})


def normalise(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with exactly :data:`TABLE_COLUMNS` in order and dtype, rows as given, index 0…n−1."""
    if df.empty:
        return empty_table()
    out = df[list(TABLE_COLUMNS)].reset_index(drop=True)
    return out.astype(TABLE_COLUMNS)


def results_table(parts: Iterable[tuple[int, Cell, pd.DataFrame]]) -> pd.DataFrame:
    """One table from ``(position, cell, frame)`` triples, ordered by position (the frame's row
    order kept within a cell)."""
    parts = sorted(parts, key=lambda t: t[0])
    if not parts:
        return empty_table()
    frames = [frame.reset_index(drop=True) for _, _, frame in parts]
    params = pd.DataFrame([cell_params(cell, position) for position, cell, _ in parts],
                          columns=list(PARAM_COLUMNS))
    params = params.loc[params.index.repeat([len(f) for f in frames])].reset_index(drop=True)
    body = pd.concat(frames, ignore_index=True)
    return normalise(pd.concat([params, body], axis=1))
