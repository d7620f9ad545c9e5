"""One result object for the Bias lab's "Across many testbeds" panel (issue 23).

:func:`sweep_view` takes a sweep (:class:`core.sweep.catalog.SweepData`) and the panel's
choices and returns a :class:`SweepView`: the three views of :mod:`core.sweep.views` (rank
stability, one method's accuracy surface over two knobs, where each resolver stops beating
majority vote), each ``None`` with a plain-words note when the sweep cannot give it, and the
sentences the page shows. Seed 000 §12.1 (the benchmark specification §2.13) is the source
of the questions: does the ranking survive the perturbations, and where does a resolver's
advantage over majority vote disappear.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..evaluation.display import Table, table
from ..evaluation.paper import GRID_METHODS
from ..resolvers.registry import method_labels, method_short, resolver
from .catalog import SweepData
from .views import (
    METRICS,
    AccuracySurface,
    MajorityBoundary,
    RankStability,
    accuracy_surface,
    majority_boundary,
    rank_stability,
)

__all__ = ["BASELINE", "METRIC_WORDS", "SettingAgreement", "SweepView", "compared_methods",
           "method_name", "ranked_methods", "setting_agreement", "surface_axes", "sweep_view"]

#: The method every resolver is compared with.
BASELINE = "majority_vote"
#: How the page names each metric.
METRIC_WORDS = {"forced_accuracy": "forced accuracy (every question answered)",
                "selective_accuracy": "selective accuracy (on the questions answered)",
                "coverage": "coverage (share of questions answered)"}
#: How a knob is named in a sentence.
KNOB_WORDS = {"seed": "seed", "personas_per_difficulty": "personas per difficulty",
              "bias_scale": "bias scale", "dropout_scale": "dropout scale",
              "fit_bias_scale": "bias scale fitted on", "fit_dropout_scale":
              "dropout scale fitted on", "difficulty_mix": "difficulty mix",
              "train_size": "training size", "train_draw": "training draw",
              "noise": "extraction noise", "bootstrap": "bootstrap size"}


@dataclass(frozen=True)
class SettingAgreement:
    """Rank agreement between the settings of a sweep (seeds pooled).

    Attributes
    ----------
    knobs : the knobs a setting is made of (``()`` → one setting, every cell).
    settings : each setting's knob values, ``" · "``-joined in ``knobs`` order, ascending.
    tau : (k, k) mean Kendall τ-b over the pairs of *distinct* cells with one cell in each
        setting; the diagonal compares cells of the same setting (other seeds), i.e. how
        much the order moves by chance alone. NaN where no pair has a τ.
    n_pairs : (k, k) pairs behind each entry.
    within, across : mean τ-b over the pairs of cells at the same setting, and at different
        settings (NaN when there are none).
    """

    knobs: tuple[str, ...]
    settings: tuple[str, ...]
    tau: np.ndarray = field(repr=False)
    n_pairs: np.ndarray = field(repr=False)
    within: float
    across: float


def setting_agreement(data: SweepData, rs: RankStability) -> SettingAgreement:
    """Pool the cell-by-cell τ-b of ``rs`` by setting (:attr:`SweepData.settings`).

    With a one-hot matrix ``M`` (cells × settings) and ``T`` the τ matrix with its diagonal
    and undefined pairs zeroed (``V`` marking the pairs kept), the mean is
    ``(Mᵀ T M) / (Mᵀ V M)``, every pair of settings at once.
    """
    knobs = data.settings
    cells = (data.table.drop_duplicates("position").set_index("position")
             .loc[list(rs.positions)])
    if knobs:
        keys = list(zip(*(cells[k].to_numpy() for k in knobs), strict=True))
        order = sorted(set(keys))
        index = {k: i for i, k in enumerate(order)}
        code = np.array([index[k] for k in keys], dtype=np.int64)
        labels = tuple(" · ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in k)
                       for k in order)
    else:
        code = np.zeros(len(cells), dtype=np.int64)
        labels = ("all cells",)
    m = np.zeros((len(code), len(labels)))
    m[np.arange(len(code)), code] = 1.0
    t = np.array(rs.tau, dtype=float)
    keep = np.isfinite(t)
    np.fill_diagonal(keep, False)
    total = m.T @ np.where(keep, t, 0.0) @ m
    count = m.T @ keep.astype(float) @ m
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    diag = np.eye(len(labels), dtype=bool)

    def pooled(mask: np.ndarray) -> float:
        n = count[mask].sum()
        return float(total[mask].sum() / n) if n else float("nan")

    return SettingAgreement(knobs, labels, mean, count.astype(np.int64), pooled(diag),
                            pooled(~diag))


@dataclass(frozen=True)
class SweepView:
    """What the panel shows for one sweep and one set of choices.

    Attributes
    ----------
    data : the sweep.
    metric : the result column shown (:data:`core.sweep.views.METRICS`).
    facts : one sentence: cells, methods, seeds and the knobs that vary.
    rank : the rank stability of every method present in every cell (``None`` with
        ``rank_note`` when the sweep has fewer than two cells or methods).
    rank_story : the rank stability in plain sentences (``""`` without ``rank``).
    agreement : ``rank`` pooled by setting (``None`` without ``rank``).
    surface : ``method``'s mean metric over knobs ``x`` and ``y`` (``None`` with
        ``surface_note`` when the sweep has not two varying knobs or not that method).
    boundary : where each resolver stops beating majority vote (``None`` with
        ``boundary_note`` when the sweep did not run majority vote).
    boundary_lines : one plain sentence per resolver (``boundary.summary`` in words).
    boundary_table : per resolver: settings where it beats majority vote, the smallest and
        largest mean difference (points), the first setting where it stops; the download
        is ``boundary.table`` (one row per resolver and setting). ``None`` without
        ``boundary``.
    """

    data: SweepData
    metric: str
    facts: str
    rank: RankStability | None
    rank_note: str
    rank_story: str
    agreement: SettingAgreement | None
    surface: AccuracySurface | None
    surface_note: str
    boundary: MajorityBoundary | None
    boundary_note: str
    boundary_lines: tuple[str, ...]
    boundary_table: Table | None


def method_name(method: str, *, long: bool = False) -> str:
    """How the panel names a method: its short name (``long``: its label); an abstaining
    variant is its base method's name and ``(may skip)``, not ``+SKIP``."""
    names = method_labels() if long else method_short()
    if method.endswith("_skip"):
        base = method.removesuffix("_skip")
        return f"{names.get(base, base)} (may skip)"
    return names.get(method, method)


def surface_axes(data: SweepData) -> tuple[str, ...]:
    """The knobs an accuracy surface can use: those varying in the sweep, settings first,
    then replicates (a seed axis shows the spread between testbeds)."""
    rest = tuple(k for k in data.knobs if k not in data.settings)
    return data.settings + rest


def _values(data: SweepData, knob: str) -> str:
    col = data.table[knob].dropna()
    vals = sorted(col.unique())
    if knob in ("seed", "train_draw") and len(vals) > 4:
        return f"{len(vals)} {KNOB_WORDS[knob]}s"
    shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in vals[:8])
    more = " …" if len(vals) > 8 else ""
    return f"{KNOB_WORDS.get(knob, knob)} {shown}{more}"


def _facts(data: SweepData) -> str:
    n_methods = len(data.methods)
    varying = "; ".join(_values(data, k) for k in data.knobs) or "one setting"
    return (f"{data.n_cells:,} cells (each a freshly generated testbed, refitted and scored), "
            f"{n_methods} methods, {data.n_seeds} seed{'s' if data.n_seeds != 1 else ''}. "
            f"Varying: {varying}.")


def ranked_methods(data: SweepData) -> tuple[str, ...] | None:
    """The methods rank stability compares: the memory-benchmark paper's seven grid methods
    (seed 000 §12.1, :data:`core.evaluation.paper.GRID_METHODS`, as the Bias lab's 3 × 3 grid)
    when the sweep ran them all, else ``None`` (every method in every cell)."""
    return GRID_METHODS if set(GRID_METHODS) <= set(data.methods) else None


def compared_methods(data: SweepData, metric: str) -> tuple[str, ...]:
    """The methods compared with majority vote: never a GT-aided ceiling (it is told the
    truth); for forced accuracy the forced methods only, for selective accuracy the
    abstaining variants too; none for coverage (majority vote always answers)."""
    if metric == "coverage":
        return ()
    out = []
    for m in data.methods:
        try:
            if resolver(m).oracle is not None:
                continue
        except ValueError:  # a name this version does not know: compare it as it is
            pass
        if metric == "forced_accuracy" and m.endswith("_skip"):
            continue
        out.append(m)
    return tuple(out)


def _rank(data: SweepData, metric: str
          ) -> tuple[RankStability | None, str, str, SettingAgreement | None]:
    try:
        rs = rank_stability(data.table, metric=metric, methods=ranked_methods(data))
    except ValueError as exc:
        return None, str(exc), "", None
    agreement = setting_agreement(data, rs)
    if not np.isfinite(rs.mean):
        return rs, "", "Every cell ties its methods, so no ranking can be compared.", agreement
    agree = ("almost always the same order" if rs.mean >= 0.9 else
             "mostly the same order" if rs.mean >= 0.7 else
             "a partly different order" if rs.mean >= 0.4 else "a different order")
    story = (f"Across {rs.n_pairs:,} pairs of cells the {len(rs.methods)} methods come out in "
             f"{agree}: Kendall's τ-b is {rs.mean:.2f} on average (1 = the same order, "
             f"0 = unrelated), {rs.min:.2f} for the least alike pair, and "
             f"{rs.identical:,} pairs rank them identically.")
    if rs.n_undefined:
        story += f" {rs.n_undefined:,} pairs have a cell whose methods all tie (no τ)."
    if np.isfinite(agreement.within) and np.isfinite(agreement.across):
        story += (f" Testbeds at the same setting, differing only in their seed, agree at "
                  f"τ-b {agreement.within:.2f}; testbeds at different settings at "
                  f"{agreement.across:.2f}.")
    return rs, "", story, agreement


def _surface(data: SweepData, metric: str, method: str, x: str, y: str
             ) -> tuple[AccuracySurface | None, str]:
    axes = surface_axes(data)
    if len(axes) < 2:
        return None, ("This sweep varies fewer than two knobs, so there is no surface to "
                      "draw; the chart below still compares each setting with majority vote.")
    if x not in axes or y not in axes or x == y:
        return None, "Pick two different knobs that vary in this sweep."
    try:
        return accuracy_surface(data.table, x=x, y=y, method=method, metric=metric), ""
    except ValueError as exc:
        return None, str(exc)


def _words(setting: str) -> str:
    """``bias_scale=2, dropout_scale=0.5`` → ``bias scale 2, dropout scale 0.5``."""
    return setting.replace("_", " ").replace("=", " ")


def _boundary(data: SweepData, metric: str
              ) -> tuple[MajorityBoundary | None, str, tuple[str, ...]]:
    if metric == "coverage":
        return None, ("Majority vote always answers (coverage 100 %), so coverage is not "
                      "compared with it; pick forced or selective accuracy."), ()
    keep = {BASELINE, *compared_methods(data, metric)}
    try:
        b = majority_boundary(data.table[data.table["method"].isin(keep)], baseline=BASELINE,
                              metric=metric, knobs=data.settings)
    except ValueError as exc:
        return None, str(exc), ()
    base = method_name(BASELINE)
    lines = []
    for row in b.summary.itertuples(index=False):
        name = method_name(row.method)
        lost = [_words(t) for t in row.stops.split("; ")] if row.stops else []
        if not lost:
            where = "at every setting" if row.n_settings > 1 else "over the whole sweep"
            lines.append(f"{name} beats {base} {where}.")
        elif row.n_beats == 0:
            where = "at any setting" if row.n_settings > 1 else "over the sweep"
            lines.append(f"{name} never beats {base} {where}.")
        elif len(lost) <= 3:
            lines.append(f"{name} beats {base} except at {' and '.join(lost)}.")
        else:
            lines.append(f"{name} beats {base} at {row.n_beats} of {row.n_settings} settings; "
                         f"not at {lost[0]} and {len(lost) - 1} more.")
    return b, "", tuple(lines)


def _boundary_table(b: MajorityBoundary) -> Table:
    g = b.table.groupby("method", sort=False)["mean_diff"]
    frame = b.summary.assign(
        name=[method_name(m) for m in b.summary["method"]],
        beats=[f"{n} of {k}" for n, k in zip(b.summary["n_beats"], b.summary["n_settings"],
                                              strict=True)],
        low=g.min().reindex(b.summary["method"]).to_numpy(float),
        high=g.max().reindex(b.summary["method"]).to_numpy(float),
        stop=[("wins nowhere" if n_beats == 0 else "never" if not first else _words(first))
              for n_beats, first in zip(b.summary["n_beats"], b.summary["first_stop"],
                                        strict=True)])
    full = b.table.assign(name=[method_name(m) for m in b.table["method"]])
    return table(frame, {"name": "Method", "beats": "Settings it wins",
                         "low": "Smallest gain (points)", "high": "Largest gain (points)",
                         "stop": "First setting it stops winning"},
                 stem="sweep_vs_majority", formats={"low": "{:+.1f}", "high": "{:+.1f}"},
                 full=pd.DataFrame(full))


def sweep_view(data: SweepData, *, metric: str = "forced_accuracy", method: str = "dsnbf",
               x: str = "bias_scale", y: str = "dropout_scale") -> SweepView:
    """The panel's result for one sweep and one set of choices.

    Parameters
    ----------
    data : :func:`core.sweep.catalog.load_sweep`.
    metric : one of :data:`core.sweep.views.METRICS`.
    method : the method of the accuracy surface.
    x, y : the surface's knobs (any of :func:`surface_axes`; others give a note, not an
        error, so a link to another sweep still opens).

    Raises ``ValueError`` only for an unknown metric.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    rank, rank_note, rank_story, agreement = _rank(data, metric)
    surface, surface_note = _surface(data, metric, method, x, y)
    boundary, boundary_note, lines = _boundary(data, metric)
    return SweepView(data, metric, _facts(data), rank, rank_note, rank_story, agreement,
                     surface,
                     surface_note, boundary, boundary_note, lines,
                     None if boundary is None else _boundary_table(boundary))
