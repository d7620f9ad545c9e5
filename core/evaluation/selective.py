"""Threshold sweeps for selective answering (the benchmark specification §2.12).

Each selective resolver abstains by its own rule; :func:`skip_rule` exposes it as a function
of one threshold so that a page can move the threshold and see coverage, selective accuracy
and F0.5 change, with the threshold the calibration split chose marked.

* ``nbf_skip``, ``dsnbf_skip``: skip when ≥ 2 sources are active and the posterior margin
  (top1 − top2) is below θ ∈ [0, 1].
* ``ssb_skip``: skip when the chosen source is null, or ≥ 2 are active and the share of active
  atoms equal to the chosen one is below θ ∈ [0, 1].
* ``abf_skip``: skip with no active source, or ≥ 2 active and best score < θ_E or
  best − second < θ_Δ; the sweep moves θ_Δ ∈ [0, 2] with θ_E held at its calibrated value.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..resolvers.nbf import margin
from .metrics import coverage, f05_macro, forced_accuracy, selective_accuracy
from .run import SeedRun

__all__ = ["SKIP_METHODS", "SKIP_RULE_NOTES", "SkipRule", "skip_rule", "sweep",
           "threshold_metrics"]

SKIP_METHODS = ("dsnbf_skip", "nbf_skip", "ssb_skip", "abf_skip")

#: Each method's skip rule and how its threshold was chosen on the calibration split
#: (the benchmark specification §2.12; seed 000 §9.2): the F0.5 counts differ by method.
#: Plain words: a skip counts as a missed answer (a false negative) in the F0.5 of the
#: calibration split; the rules of the code (``FN += 1``) are in the resolvers' docstrings.
SKIP_RULE_NOTES = MappingProxyType({
    "dsnbf_skip": "Skips when at least two sources are active and DSNBF's posterior margin "
                  "(the probability of its top answer minus that of the runner-up) is below "
                  "the threshold θ; with fewer than two active sources it always answers. θ "
                  "(one of 0, 0.01, …, 1) is chosen after the forced calibration by F0.5 over "
                  "all calibration records, where every skip counts as one missed answer, "
                  "right or wrong.",
    "nbf_skip": "Skips when at least two sources are active and NBF's posterior margin is "
                "below the threshold θ. The temperature T and θ are searched together (each "
                "T, then every θ) by F0.5 over all calibration records, every skip counting "
                "as one missed answer, so its T can differ from forced NBF's.",
    "ssb_skip": "Always skips when the chosen source has no atom; with at least two active "
                "sources it also skips when the share of active atoms equal to the chosen one "
                "(the agreement) is below the threshold θ. F0.5 on calibration counts only "
                "records with a chosen atom and at least two active sources, and a skip counts "
                "as a missed answer only when the answer would have been right: skipping a "
                "wrong answer costs nothing.",
    "abf_skip": "Skips with no active source; with exactly one it answers; with two or more "
                "it skips when the best explanation score is below one threshold (θ_E) or "
                "its lead over the second-best is below another (θ_Δ). Here θ_Δ moves and θ_E "
                "stays at its calibrated value. F0.5 on calibration uses records with at "
                "least two active sources, and an answer tied with others gets a share of the "
                "credit (1 over the number tied), which a skip counts as missed.",
})


@dataclass(frozen=True)
class SkipRule:
    """A selective method's abstention as a function of one threshold.

    Attributes
    ----------
    method : e.g. ``"dsnbf_skip"``.
    score : (N, 18) the quantity compared with θ (margin, agreement or best − second).
    always_skip, never_skip : (N, 18) rows the threshold cannot change.
    calibrated : the θ chosen on the calibration split.
    grid : the θ values to sweep.
    label : what θ is, for axis titles.
    """

    method: str
    score: np.ndarray
    always_skip: np.ndarray
    never_skip: np.ndarray
    calibrated: float
    grid: np.ndarray
    label: str

    def skipped(self, theta: float) -> np.ndarray:
        """Abstention mask at threshold ``theta``."""
        return self.always_skip | (~self.never_skip & (self.score < theta))


def skip_rule(run: SeedRun, method: str) -> SkipRule:
    """The :class:`SkipRule` of ``method`` on one seed's test split."""
    if method not in SKIP_METHODS:
        raise ValueError(f"method must be one of {', '.join(SKIP_METHODS)}, got {method!r}")
    if method not in run.predictions:
        raise ValueError(f"{method} was not run")
    p = run.predictions[method]
    atoms = run.atoms
    n_act = (atoms >= 0).sum(2)
    none = np.zeros(n_act.shape, bool)
    base = method.removesuffix("_skip")
    model = run.models[base if base != "nbf" else "nbf_skip"]
    if method in ("nbf_skip", "dsnbf_skip"):
        return SkipRule(method, margin(p.extra["proba"]), none, n_act < 2, model.theta_,
                        np.round(np.arange(0, 101) / 100, 2), "posterior margin θ")
    if method == "ssb_skip":
        chosen, agree, _ = model._parts(atoms)
        return SkipRule(method, agree, chosen < 0, n_act < 2, model.theta_,
                        np.round(np.arange(0, 101) / 100, 2), "agreement θ")
    s = p.extra["scores"]
    srt = np.sort(s, -1)
    best, second = srt[..., -1], srt[..., -2]
    always = (n_act == 0) | ((n_act >= 2) & (best < model.theta_e_))
    return SkipRule(method, best - second, always, n_act < 2, model.theta_d_,
                    np.round(np.arange(0, 201) / 100, 2), "score gap θ_Δ")


def sweep(runs: list[SeedRun], method: str) -> pd.DataFrame:
    """Coverage, selective accuracy and F0.5 (%) at every θ, per seed then mean."""
    per_seed = []
    for r in runs:
        rule = skip_rule(r, method)
        correct = r.predictions[method].answer == r.gt
        forced = forced_accuracy(correct)
        rows = []
        for theta in rule.grid:
            sk = rule.skipped(theta)
            sel, cov = selective_accuracy(correct, sk), coverage(sk)
            rows.append((theta, cov, sel, f05_macro(sel, cov, forced)))
        per_seed.append(np.array(rows, float))
    stack = np.stack(per_seed)
    finite = np.isfinite(stack)
    count = finite.sum(0)
    arr = np.where(count > 0, np.where(finite, stack, 0).sum(0) / np.maximum(count, 1), np.nan)
    return pd.DataFrame({"theta": arr[:, 0], "coverage": 100 * arr[:, 1],
                         "selective_accuracy": 100 * arr[:, 2], "f05": 100 * arr[:, 3]})


def threshold_metrics(runs: list[SeedRun], method: str, *, theta: float | None = None
                      ) -> pd.DataFrame:
    """Per-seed coverage, selective accuracy, forced accuracy and F0.5 (%) at one threshold.

    Parameters
    ----------
    runs : fresh runs (with fitted models) that include ``method``.
    method : one of :data:`SKIP_METHODS`.
    theta : the threshold for every seed; ``None`` uses each seed's calibrated θ (which
        reproduces the stored predictions).

    Returns
    -------
    DataFrame
        One row per seed: ``seed``, ``theta``, ``coverage``, ``selective_accuracy``,
        ``forced_accuracy``, ``f05`` (%, macro as in :func:`sweep`) and the micro counts
        ``n``, ``answered``, ``errors`` (wrong answers among the answered) for pooling.
    """
    rows = []
    for r in runs:
        rule = skip_rule(r, method)
        th = rule.calibrated if theta is None else float(theta)
        correct = r.predictions[method].answer == r.gt
        sk = rule.skipped(th)
        sel, cov, forced = selective_accuracy(correct, sk), coverage(sk), forced_accuracy(correct)
        rows.append({"seed": r.seed, "theta": th, "coverage": 100 * cov,
                     "selective_accuracy": 100 * sel, "forced_accuracy": 100 * forced,
                     "f05": 100 * f05_macro(sel, cov, forced), "n": int(sk.size),
                     "answered": int((~sk).sum()), "errors": int((~correct & ~sk).sum())})
    return pd.DataFrame(rows)
