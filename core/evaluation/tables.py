"""Seed-000 tables from resolver runs, each beside the paper's number and the difference.

Reductions follow the benchmark specification §2.12: pooled over seeds with the persona-
cluster bootstrap for the main, per-type and slice tables; per-seed-then-mean for the
selective and per-difficulty tables. Accuracies are in percent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..testbed.questions import QIDS, QUESTIONS, TYPE_NAMES
from ..testbed.vocab import DIFFICULTIES
from .metrics import (
    _resample_weights,
    cluster_bootstrap,
    coverage,
    f05_macro,
    forced_accuracy,
    paired_bootstrap,
    selective_accuracy,
)
from .paper import (
    PAPER_FORCED,
    PAPER_FORCED_EXTRACTED,
    PAPER_PER_SEED,
    PAPER_PER_TYPE,
    PAPER_SELECTIVE,
    PAPER_SELECTIVE_EXTRACTED,
    PAPER_SLICES,
    REGEN_FORCED,
    REGEN_PER_QUESTION_DSNBF,
    REGEN_SELECTIVE,
)
from .run import FORCED_METHODS, METHOD_LABELS, SELECTIVE_METHODS, SeedRun

__all__ = [
    "main_table",
    "paired_by_type",
    "per_difficulty_table",
    "per_question_table",
    "per_seed_table",
    "per_type_table",
    "pooled",
    "reachability_slices",
    "selective_table",
]

_FAMILY = np.array([q.family for q in QUESTIONS])


def pooled(runs: Sequence[SeedRun], method: str) -> dict[str, np.ndarray]:
    """Concatenate one method's test rows over seeds: correct, skipped, confidence, gt,
    reachable (some atom equals GT) and difficulty, each (C, 18) or (C,)."""
    if not runs or method not in runs[0].predictions:
        raise ValueError(f"method {method!r} was not run")
    correct = np.concatenate([r.predictions[method].answer == r.gt for r in runs])
    return {
        "correct": correct,
        "skipped": np.concatenate([r.predictions[method].skipped for r in runs]),
        "confidence": np.concatenate([r.predictions[method].confidence for r in runs]),
        "reachable": np.concatenate([((r.atoms == r.gt[..., None]) & (r.atoms >= 0)).any(2)
                                     for r in runs]),
        "difficulty": np.concatenate([r.personas["difficulty"].to_numpy() for r in runs]),
    }


def _methods(runs, candidates):
    return [m for m in candidates if m in runs[0].predictions]


_INPUTS = ("readout", "extracted")


def _check_input(input: str) -> None:
    if input not in _INPUTS:
        raise ValueError(f"input {input!r} is not one of {', '.join(_INPUTS)} (the test atoms: "
                         "direct readout μ* or extracted μ̂)")


def main_table(runs: Sequence[SeedRun], *, b: int = 2000, seed: int = 42,
               input: str = "readout") -> pd.DataFrame:
    """Forced macro accuracy pooled over seeds, 95 % cluster-bootstrap CI, paper, regenerated.

    Parameters
    ----------
    runs : the seeds' runs.
    b, seed : bootstrap replicates and seed (one resample shared by every method).
    input : what the runs' test atoms were: ``"readout"`` (μ*; the paper's column is its μ*
        column, the regenerated one the released code's re-run, benchmark specification
        §2.14A/B) or ``"extracted"`` (μ̂ in mixed mode; the paper's column is then its μ̂
        column, DSNBF 80.3, and there is no regenerated μ̂ number, so that column is NaN).
    """
    _check_input(input)
    ref, regen_ref = ((PAPER_FORCED, REGEN_FORCED) if input == "readout"
                      else (PAPER_FORCED_EXTRACTED, {}))
    rows = []
    n = sum(len(r.gt) for r in runs)
    w = _resample_weights(n, b, seed) if n and b >= 1 else None  # shared by every method
    for m in _methods(runs, FORCED_METHODS):
        ci = cluster_bootstrap(pooled(runs, m)["correct"], b=b, seed=seed, weights=w)
        acc = 100 * ci.estimate
        paper, regen = ref.get(m, np.nan), regen_ref.get(m, np.nan)
        rows.append({"method": m, "label": METHOD_LABELS[m], "accuracy": acc,
                     "ci_low": 100 * ci.low, "ci_high": 100 * ci.high, "paper": paper,
                     "delta_paper": acc - paper, "regenerated": regen,
                     "delta_regenerated": acc - regen, "n_clusters": ci.n_clusters})
    return pd.DataFrame(rows)


def selective_table(runs: Sequence[SeedRun], *, input: str = "readout") -> pd.DataFrame:
    """Selective accuracy, coverage and F0.5 per seed, then the mean over seeds.

    ``input`` as in :func:`main_table`: with ``"extracted"`` the paper's columns are its μ̂
    selective numbers (benchmark specification §2.14A, DSNBF+SKIP 85.3 / 78.3) and the
    regenerated ones are NaN.
    """
    _check_input(input)
    ref, regen_ref = ((PAPER_SELECTIVE, REGEN_SELECTIVE) if input == "readout"
                      else (PAPER_SELECTIVE_EXTRACTED, {}))
    rows = []
    for m in _methods(runs, SELECTIVE_METHODS):
        per = []
        for r in runs:
            p = r.predictions[m]
            c = p.answer == r.gt
            sel, cov, forced = (selective_accuracy(c, p.skipped), coverage(p.skipped),
                                forced_accuracy(c))
            per.append((sel, cov, forced, f05_macro(sel, cov, forced)))
        sel, cov, forced, f05 = (100 * np.nanmean(x) for x in zip(*per, strict=True))
        ps, pc = ref.get(m, (np.nan, np.nan))
        rs, rc = regen_ref.get(m, (np.nan, np.nan))
        rows.append({"method": m, "label": METHOD_LABELS[m], "selective_accuracy": sel,
                     "coverage": cov, "forced_accuracy": forced, "f05": f05,
                     "gain_over_forced": sel - forced, "paper_selective": ps,
                     "paper_coverage": pc, "delta_selective": sel - ps,
                     "delta_coverage": cov - pc, "regenerated_selective": rs,
                     "regenerated_coverage": rc})
    return pd.DataFrame(rows)


def per_type_table(runs: Sequence[SeedRun], methods: Sequence[str] | None = None
                   ) -> pd.DataFrame:
    """Pooled forced accuracy by question family (rows) and method, with paper values."""
    methods = _methods(runs, methods or FORCED_METHODS)
    rows = []
    for fam, label in TYPE_NAMES.items():
        cols = _FAMILY == fam
        row = {"family": fam, "type": label, "n_questions": int(cols.sum())}
        for m in methods:
            acc = 100 * pooled(runs, m)["correct"][:, cols].mean()
            row[m] = acc
            paper = PAPER_PER_TYPE.get(fam, {}).get(m)
            if paper is not None:
                row[f"{m}_paper"] = paper
                row[f"{m}_delta"] = acc - paper
        rows.append(row)
    return pd.DataFrame(rows)


def per_difficulty_table(runs: Sequence[SeedRun], methods: Sequence[str] | None = None
                         ) -> pd.DataFrame:
    """Forced accuracy by difficulty class, per seed then mean (long format)."""
    methods = _methods(runs, methods or FORCED_METHODS)
    rows = []
    for m in methods:
        for d in DIFFICULTIES:
            vals = []
            for r in runs:
                mask = r.personas["difficulty"].to_numpy() == d
                if mask.any():
                    vals.append(forced_accuracy(r.predictions[m].answer[mask] == r.gt[mask]))
            rows.append({"method": m, "difficulty": d, "accuracy": 100 * float(np.mean(vals))})
    return pd.DataFrame(rows)


def per_question_table(runs: Sequence[SeedRun], methods: Sequence[str] | None = None
                       ) -> pd.DataFrame:
    """Pooled accuracy per question (rows) and method; DSNBF's regenerated value beside."""
    methods = _methods(runs, methods or FORCED_METHODS)
    df = pd.DataFrame({"question_id": list(QIDS),
                       "family": [q.family for q in QUESTIONS]})
    for m in methods:
        df[m] = 100 * pooled(runs, m)["correct"].mean(0)
    if "dsnbf" in methods:
        df["dsnbf_regenerated"] = [REGEN_PER_QUESTION_DSNBF[q] for q in QIDS]
        df["dsnbf_delta"] = df["dsnbf"] - df["dsnbf_regenerated"]
    return df


def reachability_slices(runs: Sequence[SeedRun], methods: Sequence[str] | None = None
                        ) -> pd.DataFrame:
    """Forced accuracy on all / GT-present / GT-absent instances (pooled, micro)."""
    rows = []
    for m in _methods(runs, methods or FORCED_METHODS):
        p = pooled(runs, m)
        c, reach = p["correct"], p["reachable"]
        paper = PAPER_SLICES.get(m, (np.nan,) * 3)
        rows.append({"method": m, "label": METHOD_LABELS[m],
                     "full": 100 * forced_accuracy(c),
                     "gt_present": 100 * c[reach].mean(), "gt_absent": 100 * c[~reach].mean(),
                     "n_present": int(reach.sum()), "n_absent": int((~reach).sum()),
                     "paper_full": paper[0], "paper_present": paper[1],
                     "paper_absent": paper[2]})
    return pd.DataFrame(rows)


def per_seed_table(runs: Sequence[SeedRun], methods: Sequence[str] | None = None
                   ) -> pd.DataFrame:
    """Forced accuracy per seed, the across-seed σ, and the paper's per-seed values."""
    rows = []
    for m in _methods(runs, methods or ("dsnbf", "nbf")):
        accs = [100 * forced_accuracy(r.predictions[m].answer == r.gt) for r in runs]
        row = {"method": m}
        for i, a in enumerate(accs):
            row[f"s{i + 1}"] = a
            if m in PAPER_PER_SEED and i < 4:
                row[f"s{i + 1}_paper"] = PAPER_PER_SEED[m][i]
        row["sd"] = float(np.std(accs, ddof=1)) if len(accs) > 1 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def paired_by_type(runs: Sequence[SeedRun], a: str, b: str, *, n_boot: int = 2000,
                   seed: int = 42) -> pd.DataFrame:
    """Paired cluster-bootstrap differences A − B by question family (pp, 95 % CI)."""
    ca, cb = pooled(runs, a)["correct"], pooled(runs, b)["correct"]
    rows = []
    for fam, label in TYPE_NAMES.items():
        cols = _FAMILY == fam
        ci = paired_bootstrap(ca[:, cols], cb[:, cols], b=n_boot, seed=seed)
        rows.append({"family": fam, "type": label, "delta": 100 * ci.estimate,
                     "ci_low": 100 * ci.low, "ci_high": 100 * ci.high})
    ci = paired_bootstrap(ca, cb, b=n_boot, seed=seed)
    rows.append({"family": "all", "type": "All questions", "delta": 100 * ci.estimate,
                 "ci_low": 100 * ci.low, "ci_high": 100 * ci.high})
    return pd.DataFrame(rows)
