"""What a sweep's results table says: rank stability, accuracy surfaces, where a resolver
stops beating majority vote (issue 23; the figures are :mod:`core.figures.sweep`).

Seed 000's robustness section (§12.1; the benchmark specification §2.13) asks whether the
ranking of the resolvers survives the perturbations (Kendall τ-b between variants) and where
a resolver's advantage over majority vote disappears. These views ask the same of any sweep
(:data:`core.sweep.table.TABLE_COLUMNS`), computed on whole arrays:

* :func:`rank_stability` — Kendall τ-b of the method ranking between every pair of cells
  (scipy's default variant; ties count as in :func:`scipy.stats.kendalltau`), as a matrix and
  its summary (:class:`RankStability`);
* :func:`accuracy_surface` — one method's mean metric over two knobs, averaged over the other
  knobs' cells, with the cell count of each point (:class:`AccuracySurface`);
* :func:`majority_boundary` — for each resolver and each setting of the varying knobs (seeds
  and training draws are replicates, pooled), the cells where it beats majority vote, the
  mean difference, and the settings where it stops beating it (:class:`MajorityBoundary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "KNOBS",
    "METRICS",
    "REPLICATES",
    "TIE_POINTS",
    "AccuracySurface",
    "MajorityBoundary",
    "RankStability",
    "accuracy_surface",
    "knob_text",
    "majority_boundary",
    "rank_stability",
]

#: Parameter columns of the results table a view may group by.
KNOBS = ("seed", "personas_per_difficulty", "bias_scale", "dropout_scale", "fit_bias_scale",
         "fit_dropout_scale", "difficulty_mix", "train_size", "train_draw", "noise",
         "bootstrap")
#: Knobs that only repeat a setting (pooled by :func:`majority_boundary`).
REPLICATES = ("seed", "train_draw")
#: Result columns a view may read (%).
METRICS = ("forced_accuracy", "selective_accuracy", "coverage")
#: Differences within this many percentage points are ties: two methods that answer alike
#: differ by float noise (~1e-14) after averaging, which must not count as beating.
TIE_POINTS = 1e-9


def _check(table: pd.DataFrame, metric: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    missing = {"position", "method", metric} - set(table.columns)
    if missing:
        raise ValueError(f"not a sweep results table: no column {sorted(missing)[0]!r}")
    if table.empty:
        raise ValueError("the sweep's results table is empty (no finished cell)")


def knob_text(values: pd.Series) -> pd.Series:
    """Knob values as text for labels (NaN / <NA> → ``same`` for fit scales, ``all`` else)."""
    name = values.name
    empty = "same" if str(name).startswith("fit_") else "all"
    return values.astype(object).map(lambda v: empty if pd.isna(v) else f"{v:g}"
                                      if isinstance(v, float) else str(v))


@dataclass(frozen=True)
class RankStability:
    """Kendall τ-b of the method ranking between every pair of cells.

    Attributes
    ----------
    metric : the result column ranked.
    methods : the methods ranked (present in every cell), in table order.
    positions : the cells' positions in the sweep, in table order.
    tau : (n, n) τ-b between cells (1 on the diagonal; NaN where a cell's methods all tie).
    pairs : one row per pair of cells ``a < b``: a, b (positions), tau.
    n_pairs : pairs of cells; ``n_undefined`` of them have no τ (all methods tie in a cell).
    mean, median, min : of τ over the defined pairs (NaN when none).
    identical : pairs ranking the methods identically (τ = 1).
    """

    metric: str
    methods: tuple[str, ...]
    positions: tuple[int, ...]
    tau: np.ndarray = field(repr=False)
    pairs: pd.DataFrame = field(repr=False)
    n_pairs: int
    n_undefined: int
    mean: float
    median: float
    min: float
    identical: int


def rank_stability(table: pd.DataFrame, *, metric: str = "forced_accuracy",
                   methods: Sequence[str] | None = None) -> RankStability:
    """Kendall τ-b between the method rankings of every pair of cells of a sweep.

    τ-b of cells ``a``, ``b`` is ``Σ sign(xᵢ − xⱼ)·sign(yᵢ − yⱼ) / √(nₐ·n_b)`` over method
    pairs ``i < j``, with ``nₐ`` the pairs not tied in ``a`` (:func:`scipy.stats.kendalltau`'s
    τ-b; seed 000 §12.1 uses it between perturbation variants), all pairs at once as one
    matrix product.

    Parameters
    ----------
    table : a sweep's results table (:data:`core.sweep.table.TABLE_COLUMNS`).
    metric : ``forced_accuracy`` (default), ``selective_accuracy`` or ``coverage``.
    methods : the methods to rank (default: those present in every cell).

    Raises ``ValueError`` for an unknown metric, a method missing from a cell, fewer than two
    methods or fewer than two cells.
    """
    _check(table, metric)
    wide = table.pivot_table(index="position", columns="method", values=metric,
                             aggfunc="first", sort=True)
    order = list(pd.unique(table["method"]))
    if methods is None:
        methods = [m for m in order if m in wide and wide[m].notna().all()]
    else:
        methods = list(methods)
        absent = [m for m in methods if m not in wide or wide[m].isna().any()]
        if absent:
            raise ValueError(f"method {absent[0]!r} is not in every cell of the sweep")
    if len(methods) < 2:
        raise ValueError(f"ranking needs at least two methods in every cell, got {methods}")
    if len(wide) < 2:
        raise ValueError("rank stability needs at least two cells")
    x = wide[methods].to_numpy(float)
    i, j = np.triu_indices(len(methods), k=1)
    s = np.sign(x[:, i] - x[:, j])
    untied = np.count_nonzero(s, axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (s @ s.T) / np.sqrt(np.outer(untied, untied))
    tau = np.where(np.isfinite(tau), tau, np.nan)
    tau = np.clip(tau, -1.0, 1.0)
    a, b = np.triu_indices(len(wide), k=1)
    positions = wide.index.to_numpy(np.int64)
    vals = tau[a, b]
    pairs = pd.DataFrame({"a": positions[a], "b": positions[b], "tau": vals})
    ok = vals[np.isfinite(vals)]

    def stat(f) -> float:
        return float(f(ok)) if ok.size else float("nan")

    return RankStability(metric, tuple(methods), tuple(int(p) for p in positions), tau, pairs,
                         len(vals), int(len(vals) - ok.size), stat(np.mean), stat(np.median),
                         stat(np.min), int(np.sum(np.isclose(ok, 1.0))))


@dataclass(frozen=True)
class AccuracySurface:
    """One method's mean metric over a grid of two knobs.

    Attributes
    ----------
    method, metric, x, y : what is shown, and the two knobs (x across, y down).
    x_values, y_values : the knobs' values as text, in ascending order of the values.
    mean : (len(y_values), len(x_values)) mean metric (%) over the cells of each point
        (NaN where the sweep has none).
    n : cells behind each point (0 where none).
    low, high : smallest and largest cell value behind each point.
    """

    method: str
    metric: str
    x: str
    y: str
    x_values: tuple[str, ...]
    y_values: tuple[str, ...]
    mean: np.ndarray = field(repr=False)
    n: np.ndarray = field(repr=False)
    low: np.ndarray = field(repr=False)
    high: np.ndarray = field(repr=False)


def _check_knob(table: pd.DataFrame, knob: str) -> None:
    if knob not in KNOBS:
        raise ValueError(f"knob must be one of {', '.join(KNOBS)}, got {knob!r}")
    if knob not in table.columns:
        raise ValueError(f"not a sweep results table: no column {knob!r}")


def accuracy_surface(table: pd.DataFrame, *, x: str, y: str, method: str,
                     metric: str = "forced_accuracy") -> AccuracySurface:
    """``method``'s mean ``metric`` over every (``x``, ``y``) pair of knob values of a sweep.

    Cells with the same two values (other seeds, other settings of the remaining knobs) are
    averaged; ``n`` counts them. Raises ``ValueError`` for an unknown or repeated knob, an
    unknown metric or a method the sweep did not run.
    """
    _check(table, metric)
    for knob in (x, y):
        _check_knob(table, knob)
    if x == y:
        raise ValueError(f"the surface needs two different knobs, got {x!r} twice")
    rows = table[table["method"] == method]
    if rows.empty:
        raise ValueError(f"the sweep has no results for method {method!r} (it ran "
                         f"{', '.join(pd.unique(table['method']))})")

    def axis(col: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
        filled = col.astype(object).where(col.notna(), None)
        keys = pd.unique(filled)
        ordered = sorted(keys, key=lambda v: (v is not None, v if v is not None else 0))
        code = {k: n for n, k in enumerate(ordered)}
        labels = knob_text(pd.Series(ordered, name=col.name, dtype=object))
        return filled.map(code).to_numpy(np.int64), tuple(labels)

    xi, x_values = axis(rows[x])
    yi, y_values = axis(rows[y])
    v = rows[metric].to_numpy(float)
    shape = (len(y_values), len(x_values))
    flat = yi * shape[1] + xi
    n = np.bincount(flat, minlength=shape[0] * shape[1])
    total = np.bincount(flat, weights=v, minlength=n.size)
    low = np.full(n.size, np.inf)
    high = np.full(n.size, -np.inf)
    np.minimum.at(low, flat, v)
    np.maximum.at(high, flat, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    low = np.where(n > 0, low, np.nan)
    high = np.where(n > 0, high, np.nan)
    return AccuracySurface(method, metric, x, y, x_values, y_values, mean.reshape(shape),
                           n.reshape(shape), low.reshape(shape), high.reshape(shape))


@dataclass(frozen=True)
class MajorityBoundary:
    """Where each resolver beats majority vote, setting by setting.

    Attributes
    ----------
    baseline, metric : the baseline method and the result column compared.
    knobs : the knobs a setting is made of (those that vary in the sweep, replicates pooled).
    table : one row per (method, setting): method, the knob columns, ``setting`` (text),
        ``n_cells`` (cells with both the method and the baseline), ``wins`` (cells where
        the method is above the baseline by more than :data:`TIE_POINTS`), ``mean_diff``
        (mean of method − baseline, percentage points) and ``beats`` (``mean_diff`` >
        :data:`TIE_POINTS`).
    summary : one row per method: ``n_settings``, ``n_beats``, ``n_stops`` (settings where it
        does not beat the baseline), ``first_stop`` (the first such setting in the knobs'
        ascending order, ``""`` when none) and ``stops`` (every such setting, ``"; "``-joined).
    """

    baseline: str
    metric: str
    knobs: tuple[str, ...]
    table: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)


def majority_boundary(table: pd.DataFrame, *, baseline: str = "majority_vote",
                      metric: str = "forced_accuracy",
                      knobs: Sequence[str] | None = None) -> MajorityBoundary:
    """For each resolver, the settings where it stops beating ``baseline`` (majority vote).

    Each cell compares the method with the baseline in the same cell (same data); a setting
    pools the cells that differ only in :data:`REPLICATES` (or in knobs left out of
    ``knobs``). A method *beats* the baseline at a setting when its mean difference there is
    above 0; ``wins`` counts the cells where it is strictly above.

    Parameters
    ----------
    table : a sweep's results table with the baseline in its cells.
    baseline : the method compared against (default ``majority_vote``).
    metric : the result column compared.
    knobs : the knobs of a setting (default: every knob but the replicates that takes more
        than one value in the table; none → one setting, the whole sweep).

    Raises ``ValueError`` for an unknown knob or metric, or a sweep without the baseline.
    """
    _check(table, metric)
    if baseline not in set(table["method"]):
        raise ValueError(f"the sweep did not run the baseline {baseline!r}")
    if knobs is None:
        knobs = [k for k in KNOBS if k not in REPLICATES and k in table.columns
                 and table[k].nunique(dropna=False) > 1]
    knobs = list(knobs)
    for k in knobs:
        _check_knob(table, k)
    base = table.loc[table["method"] == baseline, ["position", metric]].rename(
        columns={metric: "_base"})
    rows = table[table["method"] != baseline].merge(base, on="position", how="inner")
    if rows.empty:
        raise ValueError(f"the sweep has no method besides {baseline!r} in a cell with it")
    rows = rows.assign(_diff=rows[metric].to_numpy(float) - rows["_base"].to_numpy(float))
    rows = rows.assign(_win=rows["_diff"] > TIE_POINTS)
    keys = ["method", *knobs]
    filled = rows.copy()
    for k in knobs:  # <NA>/NaN (all, same) groups as its own value
        filled[k] = filled[k].astype(object).where(filled[k].notna(), None)
    g = filled.groupby(keys, sort=False, dropna=False)
    out = g.agg(n_cells=("_diff", "size"), wins=("_win", "sum"),
                mean_diff=("_diff", "mean")).reset_index()
    out["wins"] = out["wins"].astype(np.int64)
    out["beats"] = out["mean_diff"] > TIE_POINTS
    methods = list(pd.unique(rows["method"]))
    sort_cols = [out["method"].map({m: i for i, m in enumerate(methods)})]
    for k in knobs:
        sort_cols.append(out[k].map(lambda v: (v is not None, v if v is not None else 0)))
    order = sorted(range(len(out)), key=lambda r: tuple(c.iloc[r] for c in sort_cols))
    out = out.iloc[order].reset_index(drop=True)
    if knobs:
        text = [knob_text(pd.Series(out[k].to_numpy(object), name=k)) for k in knobs]
        out["setting"] = [", ".join(f"{k}={t.iloc[r]}" for k, t in zip(knobs, text,
                                                                         strict=True))
                          for r in range(len(out))]
    else:
        out["setting"] = "all cells"
    summary = []
    for m in methods:
        part = out[out["method"] == m]
        lost = list(part.loc[~part["beats"], "setting"])
        summary.append({"method": m, "n_settings": len(part), "n_beats": int(part["beats"].sum()),
                        "n_stops": len(lost), "first_stop": lost[0] if lost else "",
                        "stops": "; ".join(lost)})
    return MajorityBoundary(baseline, metric, tuple(knobs),
                            out[["method", *knobs, "setting", "n_cells", "wins", "mean_diff",
                                 "beats"]],
                            pd.DataFrame(summary, columns=["method", "n_settings", "n_beats",
                                                           "n_stops", "first_stop", "stops"]))
