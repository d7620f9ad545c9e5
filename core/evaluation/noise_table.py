"""Seed 000 Table 22 (§12.5): extraction-noise tolerance, our numbers beside the paper's.

Every non-null test atom μ* is flipped with probability ε (:func:`core.evaluation.robustness.
flip_atoms`, the benchmark specification §2.13: ordinal labels one rank, nominal labels to a
uniformly random other label, ordinal edge labels untouched; ``Random(12345)``); fits and
calibration stay clean. :func:`noise_table` runs :func:`core.evaluation.robustness.noise_curve`
for DSNBF, NBF, ABF, BCF, Majority Vote and Majority Class (4-seed mean, %) and states the two
shape claims of §12.5 as numbers:

* **convergence** — at ε = 0.3 every fusion method is near Majority Class (the paper: within
  5.2 pp of 57.1, against 25.2 pp at ε = 0): ``gap_to_majority_class[ε]`` is the largest
  ``|accuracy − Majority Class|`` over the five fusion methods;
* **reversal** — NBF overtakes DSNBF at ε ≥ 0.1 (Table 22: DSNBF − NBF = −0.7 pp at 0.1, the
  text says −0.6, widening to −4.7 pp at 0.5): ``nbf_minus_dsnbf[ε]`` > 0 means NBF is ahead, and
  ``reversal_from`` is the smallest ε from which NBF stays ahead at every larger ε.

Majority Class ignores the atoms, so its row is the same at every ε (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..frozen import FrozenDict
from .paper import NOISE_METHODS, PAPER_NOISE, PAPER_NOISE_MAJORITY_CLASS
from .robustness import noise_curve
from .run import SeedRun

__all__ = ["EPS", "METHODS", "NoiseTable", "noise_table", "shape_facts"]

#: the noise rates of Table 22
EPS = (0.0, 0.1, 0.2, 0.3, 0.5)
#: Table 22's columns: the five fusion methods, then Majority Class
METHODS = (*NOISE_METHODS, "majority_class")


def _paper(eps: float, method: str) -> float:
    if method == "majority_class":
        return PAPER_NOISE_MAJORITY_CLASS
    row = PAPER_NOISE.get(float(eps))
    return row[NOISE_METHODS.index(method)] if row is not None else float("nan")


def _wide(table: pd.DataFrame, column: str) -> pd.DataFrame:
    return table.pivot(index="eps", columns="method", values=column)[list(METHODS)]


def shape_facts(acc: pd.DataFrame) -> dict:
    """The §12.5 numbers of a wide table (index ε, columns :data:`METHODS`, %).

    Returns ``gap_to_majority_class`` and ``nbf_minus_dsnbf`` (ε → pp) and ``reversal_from``
    (module docstring; ``None`` when NBF is not ahead at the largest ε).
    """
    gap = (acc[list(NOISE_METHODS)].sub(acc["majority_class"], axis=0)).abs().max(axis=1)
    diff = acc["nbf"] - acc["dsnbf"]
    ahead = (diff > 0).to_numpy()[::-1]
    run = int(np.argmin(ahead)) if not ahead.all() else len(ahead)  # trailing ε with NBF ahead
    reversal = float(acc.index[len(ahead) - run]) if run else None
    return {"gap_to_majority_class": FrozenDict({float(e): float(v) for e, v in gap.items()}),
            "nbf_minus_dsnbf": FrozenDict({float(e): float(v) for e, v in diff.items()}),
            "reversal_from": reversal}


@dataclass(frozen=True)
class NoiseTable:
    """Table 22 recomputed, with the paper's values and the shape facts of both.

    Attributes
    ----------
    table : long frame: eps, method, accuracy, paper, delta (%, 4-seed mean).
    ours, paper : :func:`shape_facts` of our table and of the paper's.
    n_seeds, seed : seeds averaged over, and the noise seed (``default_rng([seed, run seed])``).
    """

    table: pd.DataFrame = field(repr=False)
    ours: dict
    paper: dict
    n_seeds: int
    seed: int

    def wide(self, column: str = "accuracy") -> pd.DataFrame:
        """ε rows × method columns of ``column`` (accuracy, paper or delta)."""
        return _wide(self.table, column)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        def facts(f):
            return {k: dict(v) if isinstance(v, dict) else v for k, v in f.items()}
        return {"table": self.table.to_dict(orient="records"), "ours": facts(self.ours),
                "paper": facts(self.paper), "n_seeds": self.n_seeds, "seed": self.seed}


def noise_table(runs: Sequence[SeedRun], *, eps: Sequence[float] = EPS, seed: int = 12345
                ) -> NoiseTable:
    """Table 22 from fitted runs (``SeedRun.models`` must hold every one of :data:`METHODS`).

    Runs from :func:`core.evaluation.run.run_testbed` or the μ* list of
    :func:`core.evaluation.decomposition.mixed_runs` qualify; runs rebuilt from the store's
    cache (:func:`core.evaluation.cached.load_runs`) have no models and raise ``ValueError``.
    """
    eps = tuple(float(e) for e in eps)
    if not runs:
        raise ValueError("noise_table needs at least one run")
    if not eps or any(not 0 <= e <= 1 for e in eps) or len(set(eps)) != len(eps):
        raise ValueError(f"eps must be distinct rates in [0, 1], got {eps}")
    lacking = [m for m in METHODS if any(m not in r.models for r in runs)]
    if lacking:
        raise ValueError(f"the runs have no fitted {', '.join(lacking)} (refit them with "
                         "run_seed; cached runs carry no models)")
    curve = noise_curve(runs, eps=eps, methods=METHODS, seed=seed)
    curve["paper"] = [_paper(e, m) for e, m in zip(curve["eps"], curve["method"], strict=True)]
    curve["delta"] = curve["accuracy"] - curve["paper"]
    rank = curve["method"].map({m: i for i, m in enumerate(METHODS)})
    curve = curve.iloc[np.lexsort((rank, curve["eps"]))].reset_index(drop=True)
    paper = _wide(curve, "paper").dropna()  # the ε the paper reports
    return NoiseTable(curve, shape_facts(_wide(curve, "accuracy")),
                      shape_facts(paper) if len(paper) else {}, len(runs), int(seed))
