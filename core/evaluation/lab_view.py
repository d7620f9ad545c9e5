"""What the Bias lab page shows, as result objects: the headline, what broke, two tables, the grid.

Seed 000 §12.4 (the bias and dropout scales and the difficulty mix), §9.1 and §9.5 (why each
resolver reacts: :data:`core.evaluation.lab.METHOD_MECHANISMS`), §12 (the 3 × 3 bias ×
dropout grid, its Kendall τ and the cells DSNBF wins, with the paper's values from
:mod:`.paper`). :func:`lab_view` turns the two :class:`~.lab.LabResult` of one setting (the
nominal one and this one) into everything the page states; :func:`grid_view` does the same
for :func:`~.robustness.perturbation_grid`.

Invariants (``tests/test_lab_view.py``): at the nominal setting every change is 0 and there
is no mover; a headline's change is its accuracy minus the nominal accuracy (never −0.0);
the best method is the ranked method with the highest accuracy (the GT-aided row is not
ranked); the mix is the weights over their maximum, or equal when every weight is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..resolvers.registry import method_labels, method_short, method_words, resolver
from ..testbed.questions import SOURCE_LABELS
from .display import Table, table
from .lab import LabResult, describe_what_broke, is_nominal, what_broke
from .paper import GRID_METHODS, PAPER_GRID_DSNBF_WINS, PAPER_GRID_TAU

__all__ = [
    "LAB_HEADLINE_METHODS",
    "GridView",
    "LabHeadline",
    "LabView",
    "Mover",
    "effective_mix",
    "grid_view",
    "lab_view",
]

#: The two methods whose accuracy heads the lab: the best learner and the plain vote.
LAB_HEADLINE_METHODS = ("dsnbf", "majority_vote")

_BOARD = {"label": "method", "accuracy": "accuracy %", "accuracy_nominal": "nominal %",
          "change": "change, points", "rank": "rank", "rank_nominal": "nominal rank"}
_SOURCES = {"source": "source", "accuracy": "accuracy %", "accuracy_nominal": "nominal %",
            "accuracy_change": "change, points", "coverage": "coverage %",
            "coverage_nominal": "nominal coverage %", "conflict_rate": "conflict %"}


def _name(method: str) -> str:
    """A method's display name without its parenthesis (``Majority Vote``)."""
    return method_labels()[method].split(" (")[0]


def _change(x: float) -> float:
    return round(float(x), 1) + 0.0  # no −0.0


def effective_mix(weights: Sequence[float]) -> tuple[tuple[float, float, float], bool]:
    """The difficulty mix of three slider weights: ``w / max(w)`` rounded to 4 digits, and
    whether it fell back to the equal mix (every weight ≤ 0)."""
    w = np.asarray(weights, float)
    if w.shape != (3,) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"the difficulty mix needs three finite weights ≥ 0, got {weights!r}")
    fell_back = bool(w.max() <= 0)
    if fell_back:
        w = np.ones(3)
    mix = tuple(float(x) for x in np.round(w / w.max(), 4))
    return mix, fell_back  # type: ignore[return-value]


@dataclass(frozen=True)
class LabHeadline:
    """One headline: a method's forced accuracy (%) here and its change against nominal."""

    method: str
    short: str
    label: str
    accuracy: float
    change: float
    ci_low: float
    ci_high: float

    @property
    def help(self) -> str:
        """What the method is, in words, and its interval."""
        return (f"{method_words()[self.method]} 95 % interval {self.ci_low:.1f} to "
                f"{self.ci_high:.1f} %.")


@dataclass(frozen=True)
class Mover:
    """The method whose rank moved most and the source whose accuracy moved most."""

    method: str
    short: str
    rank_before: int
    rank_after: int
    source: str
    source_label: str
    source_accuracy_change: float
    source_coverage_change: float

    @property
    def climbed(self) -> int:
        """Places moved up the board (> 0: up)."""
        return self.rank_before - self.rank_after

    @property
    def places(self) -> str | None:
        """"+2 places", "-1 place" (an ASCII sign: a metric's delta arrow reads it), or None
        when the rank did not move."""
        c = self.climbed
        if not c:
            return None
        return f"{c:+d}" + (" place" if abs(c) == 1 else " places")


@dataclass(frozen=True)
class LabView:
    """Everything the lab page states for one setting of one seed.

    ``frames`` holds what the figures draw: ``board`` and ``sources`` of this setting,
    ``nominal_board`` and ``nominal_sources`` (the same frames at the nominal setting).
    """

    seed: int
    bias_scale: float
    dropout_scale: float
    mix: tuple[float, float, float]
    nominal: bool
    n_test: int
    n_generated: int
    headlines: tuple[LabHeadline, ...]
    best_method: str
    best_name: str
    best_accuracy: float
    story: str
    mover: Mover | None
    board: Table
    sources: Table
    frames: Mapping[str, pd.DataFrame]

    @property
    def setting(self) -> str:
        """"Seed 7 · bias 2× · dropout 1× · mix 1 / 0.5 / 1"."""
        return (f"Seed {self.seed} · bias {self.bias_scale:g}× · dropout "
                f"{self.dropout_scale:g}× · mix " + " / ".join(f"{w:g}" for w in self.mix))


def _with_nominal(frame: pd.DataFrame, nominal: pd.DataFrame, key: str,
                  columns: list[str]) -> pd.DataFrame:
    """``frame.merge(nominal[[key, *columns]], on=key, suffixes=("", "_nominal"))``, built in
    one go when both list the same keys in the same order (the lab's results do)."""
    keys = frame[key].tolist()
    if keys != nominal[key].tolist() or len(set(keys)) != len(keys):
        return frame.merge(nominal[[key, *columns]], on=key, suffixes=("", "_nominal"))
    data = {col: frame[col].to_numpy() if col != key else frame[col] for col in frame.columns}
    data.update({f"{col}_nominal": nominal[col].to_numpy() for col in columns})
    return pd.DataFrame(data, index=pd.RangeIndex(len(keys)))


def lab_view(nominal: LabResult, variant: LabResult, *, seed: int, bias_scale: float,
             dropout_scale: float, mix: tuple[float, float, float],
             personas_per_difficulty: int) -> LabView:
    """The page's view of one setting (``variant``) against the nominal one.

    Parameters
    ----------
    nominal, variant : :func:`~.lab.run_lab` at the nominal setting and at this one (the
        same object twice at the nominal setting).
    seed, bias_scale, dropout_scale, mix : the setting (``mix`` already normalised, see
        :func:`effective_mix`).
    personas_per_difficulty : personas generated per difficulty class.
    """
    at_nominal = is_nominal(bias_scale=bias_scale, dropout_scale=dropout_scale, mix=mix)
    board = variant.leaderboard
    methods = board["method"].tolist()
    nom = dict(zip(nominal.leaderboard["method"].tolist(),
                   nominal.leaderboard["accuracy"].tolist(), strict=True))
    short = method_short()
    heads = []
    for m in LAB_HEADLINE_METHODS:
        i = methods.index(m)
        acc = float(board["accuracy"].iloc[i])
        heads.append(LabHeadline(m, short[m], method_labels()[m], acc, _change(acc - nom[m]),
                                 float(board["ci_low"].iloc[i]), float(board["ci_high"].iloc[i])))
    ranked = board[[resolver(m).family != "ceiling" for m in methods]]
    best = ranked.sort_values("accuracy", ascending=False, kind="stable").iloc[0]
    merged = _with_nominal(board, nominal.leaderboard, "method", ["accuracy", "rank"])
    merged["change"] = merged["accuracy"] - merged["accuracy_nominal"]
    merged = merged.sort_values("accuracy", ascending=False, kind="stable")
    src = _with_nominal(variant.sources, nominal.sources, "source",
                        [c for c in nominal.sources.columns if c != "source"])
    src["source"] = src["source"].map(SOURCE_LABELS)
    src["accuracy_change"] = src["accuracy"] - src["accuracy_nominal"]
    broke = what_broke(nominal, variant)
    story = describe_what_broke(broke, bias_scale=bias_scale, dropout_scale=dropout_scale,
                                mix=mix)
    mover = None if at_nominal else Mover(
        broke["method"], short[broke["method"]], int(broke["rank_before"]),
        int(broke["rank_after"]), broke["source"], SOURCE_LABELS[broke["source"]],
        float(broke["source_accuracy_change"]), float(broke["source_coverage_change"]))
    stem = f"{int(seed)}_b{float(bias_scale):g}_d{float(dropout_scale):g}"
    return LabView(
        int(seed), float(bias_scale), float(dropout_scale), tuple(mix), at_nominal,
        int(variant.n_test), 3 * int(personas_per_difficulty), tuple(heads),
        str(best["method"]), _name(str(best["method"])), float(best["accuracy"]), story, mover,
        table(merged, _BOARD, stem=f"lab_{stem}",
              formats={"change": "{:+.1f}", "rank": "{:.0f}", "rank_nominal": "{:.0f}"}),
        table(src, _SOURCES, stem=f"lab_sources_{stem}", formats={"accuracy_change": "{:+.1f}"}),
        MappingProxyType({"board": board, "sources": variant.sources,
                          "nominal_board": nominal.leaderboard,
                          "nominal_sources": nominal.sources}))


@dataclass(frozen=True)
class GridView:
    """The 3 × 3 bias × dropout grid of one seed beside the paper's 4-seed values.

    ``tau_mean`` is the mean Kendall τ-b of the methods' accuracies over every pair of
    variants (1: the ranking never changes); ``dsnbf_wins`` of ``cells`` the variants where
    DSNBF beats every rival (the grid's methods but DSNBF and the GT-aided row).
    """

    seed: int
    tau_mean: float
    paper_tau: float
    dsnbf_wins: int
    cells: int
    paper_wins: tuple[int, int]
    rivals: tuple[str, ...]
    methods: tuple[str, ...]
    mean: pd.DataFrame
    table: pd.DataFrame

    @property
    def rivals_text(self) -> str:
        """"NBF, ABF, BCF, MV and SSB-G"."""
        names = [method_short()[m] for m in self.rivals]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def grid_view(grid: Mapping, *, seed: int) -> GridView:
    """:func:`~.robustness.perturbation_grid`'s result of one seed as the page shows it."""
    rivals = tuple(m for m in GRID_METHODS
                   if m != "dsnbf" and resolver(m).family != "ceiling")
    return GridView(int(seed), float(grid["tau_mean"]), PAPER_GRID_TAU, int(grid["dsnbf_wins"]),
                    int(grid["cells"]), tuple(PAPER_GRID_DSNBF_WINS), rivals, GRID_METHODS,
                    grid["mean"], pd.DataFrame(grid["table"]))
