"""Pairs of confidence rules on the real NQ-open answers and the crossover criterion.

Seed 003 §5.1 ("the crossover criterion correctly classifies all 13 reversals and 8
non-reversals among 21 pairs") and §5.2 (the crossover (a + b)/2), on the items of
:func:`core.calibration.nq301.nq301_answers`. Brier gaps are ``R(A) − R(B)`` (negative
favours A) as in Eq. 1; :mod:`core.calibration.reversal_view` shows them in the app's
convention. Intervals: question-cluster bootstrap percentiles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit, logit

from .corp import corp_decomposition
from .label_source import brier_gap_constant, crossover_prevalence, label_source_decomposition
from .nq301 import SEED_003_NQ301
from .scores import auroc

__all__ = ["DEFAULT_MEANS", "RulePairs", "location_rules", "rule_pairs"]



DEFAULT_MEANS: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def location_rules(items: pd.DataFrame, *, means: Sequence[float] = DEFAULT_MEANS,
                   family: str = "location") -> pd.DataFrame:
    """Confidence rules for the pair analysis: location shifts of agreement, or constants.

    Parameters
    ----------
    items : DataFrame
        :func:`core.calibration.nq301.nq301_answers`.
    means : sequence of float in (0, 1)
        Target item means of the rules (default .2, .3, …, .8: seven rules, 21 pairs).
    family : {"location", "constant"}
        ``"location"``: ``c = σ(logit s + δ)`` with the smoothed agreement
        ``s = (n_agree + ½)/(n_systems + 1)`` and δ solved so the mean over the items equals the
        target — every rule ranks the answers exactly as agreement does (same AUROC), and the
        rules differ only in location. ``"constant"``: the constant rules ``c ≡ mean``.

    Returns
    -------
    DataFrame
        One column per rule, named ``agree@0.20`` or ``const@0.20``.
    """
    means = [float(m) for m in means]
    if len(means) < 2 or not all(0.0 < m < 1.0 for m in means) or len(set(means)) != len(means):
        raise ValueError("means must hold at least two distinct values in (0, 1)")
    n = len(items)
    if family == "constant":
        return pd.DataFrame({f"const@{m:.2f}": np.full(n, m) for m in means})
    if family != "location":
        raise ValueError(f"family must be 'location' or 'constant', got {family!r}")
    s = (items["n_agree"].to_numpy(float) + 0.5) / (items["n_systems"].to_numpy(float) + 1.0)
    base = logit(s)
    out = {}
    for m in means:
        d = brentq(lambda d, m=m: float(np.mean(expit(base + d))) - m, -40.0, 40.0,
                   xtol=1e-14)
        out[f"agree@{m:.2f}"] = expit(base + d)
    return pd.DataFrame(out)


@dataclass(frozen=True, eq=False)
class RulePairs:
    """All pairs of confidence rules scored under Z and Y, with the crossover criterion.

    Attributes
    ----------
    rules : DataFrame
        One row per rule: ``rule, mean, auroc_y, dsc_y, brier_z, brier_y``.
    pairs : DataFrame
        One row per pair (A before B in rule order): ``rule_a, rule_b, mean_a, mean_b,
        midpoint`` ((a + b)/2), ``gap_z, gap_y`` (``R(A) − R(B)``, Eq. 1), ``gap_z_lo, gap_z_hi,
        gap_y_lo, gap_y_hi`` (question-cluster bootstrap percentile intervals), ``reverses``
        (opposite signs), ``predicted`` (the midpoint lies strictly between the two
        prevalences), ``criterion_correct``, ``both_exclude_zero``, ``t_omit, t_fp,
        identity_residual`` (Eq. 2), ``gap_z_constant, gap_y_constant`` (the constant-rule
        value ``(a − b)(a + b − 2π)``, exact for constant rules).
    prevalence_z, prevalence_y : float
    n_reversals, n_non_reversals, n_criterion_correct, n_reversals_both_exclude_zero : int
    family : str
    construction : str
    seed_reversals, seed_non_reversals : int
        Seed 003's 13 and 8.
    """

    rules: pd.DataFrame
    pairs: pd.DataFrame
    prevalence_z: float
    prevalence_y: float
    n_reversals: int
    n_non_reversals: int
    n_criterion_correct: int
    n_reversals_both_exclude_zero: int
    family: str
    construction: str
    seed_reversals: int = SEED_003_NQ301.reversals
    seed_non_reversals: int = SEED_003_NQ301.non_reversals


def _cluster_boot(diff: np.ndarray, codes: np.ndarray, n_boot: int, level: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals of per-column means under a cluster bootstrap (vectorised)."""
    g = int(codes.max()) + 1
    sums = np.zeros((g, diff.shape[1]))
    np.add.at(sums, codes, diff)
    sizes = np.bincount(codes, minlength=g).astype(float)
    m = rng.multinomial(g, np.full(g, 1.0 / g), size=n_boot).astype(float)  # (B, G)
    boot = (m @ sums) / (m @ sizes)[:, None]
    a = (1.0 - level) / 2.0
    return np.quantile(boot, a, axis=0), np.quantile(boot, 1.0 - a, axis=0)


def rule_pairs(items: pd.DataFrame, *, rules: Mapping[str, Sequence[float]] | None = None,
               family: str = "location", means: Sequence[float] = DEFAULT_MEANS,
               n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> RulePairs:
    """Brier gaps of every pair of rules under Z and Y, reversals and the crossover criterion.

    Parameters
    ----------
    items : DataFrame
        :func:`core.calibration.nq301.nq301_answers`.
    rules : mapping of name → array, optional
        Custom rules on the items; default :func:`location_rules` (``family``, ``means``).
    family, means : see :func:`location_rules`.
    n_boot : int
        Question-cluster bootstrap replicates for the gap intervals (0 skips them).
    level : float
        Interval level.
    seed : int
        Seed of the bootstrap ``numpy.random.Generator``.

    Returns
    -------
    RulePairs

    Notes
    -----
    Seed 003 §5.1: "The crossover criterion correctly classifies all 13 reversals and 8
    non-reversals among 21 pairs. Twelve reversals have both question-cluster intervals
    excluding zero." The seed does not list its seven rules (its Supplement A.12–A.14 is not in
    the text). It says they are built on the cross-system agreement probe (AUROC .663) and
    contrasts them with a later construction "across rules that differ in shape rather than only
    in location", so the 21 pairs are read here as seven rules that differ only in location:
    logit shifts of agreement to the means .2, .3, …, .8 (an evenly spaced grid chosen before
    looking at the counts). The criterion (§5.2): the ranking is predicted to reverse when the
    midpoint (a + b)/2 of the two rules' means lies strictly between E[Z] and E[Y]; for constant
    rules ``R(a) − R(b) = (a − b)(a + b − 2π)`` makes it exact, for discriminating rules it is
    approximate.
    """
    if rules is None:
        rules_df = location_rules(items, means=means, family=family)
        fam = family
        construction = (
            "seven logit shifts of smoothed cross-system agreement ((agreeing systems + ½) ÷ 13) "
            "to item "
            f"means {', '.join(f'{m:g}' for m in means)}" if family == "location" else
            f"constant rules at {', '.join(f'{m:g}' for m in means)}")
    else:
        rules_df = pd.DataFrame({str(k): np.asarray(v, float) for k, v in rules.items()})
        if len(rules_df) != len(items) or rules_df.shape[1] < 2:
            raise ValueError("rules must map at least two names to arrays of the items' length")
        fam, construction = "custom", "custom rules: " + ", ".join(rules_df.columns)
    y = items["y"].to_numpy(float)
    z = items["z"].to_numpy(float)
    pz, py = float(z.mean()), float(y.mean())
    lo_p, hi_p = min(pz, py), max(pz, py)
    names = list(rules_df.columns)
    c = rules_df.to_numpy(float)
    rule_rows = []
    for k, name in enumerate(names):
        ck = c[:, k]
        rule_rows.append(dict(rule=name, mean=float(ck.mean()),
                              auroc_y=auroc(ck, y) if np.ptp(ck) > 0 else 0.5,
                              dsc_y=corp_decomposition(ck, y).dsc,
                              brier_z=float(np.mean((ck - z) ** 2)),
                              brier_y=float(np.mean((ck - y) ** 2))))
    idx = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    rows = []
    for i, j in idx:
        a, b = c[:, i], c[:, j]
        dec = label_source_decomposition(a, b, y, z)
        ma, mb = float(a.mean()), float(b.mean())
        mid = crossover_prevalence(ma, mb)
        pred = bool(lo_p < mid < hi_p)
        rows.append(dict(rule_a=names[i], rule_b=names[j], mean_a=ma, mean_b=mb, midpoint=mid,
                         gap_z=dec.gap_z, gap_y=dec.gap_y, reverses=dec.reverses,
                         predicted=pred, criterion_correct=pred == dec.reverses,
                         t_omit=dec.t_omit, t_fp=dec.t_fp,
                         identity_residual=dec.identity_residual,
                         gap_z_constant=brier_gap_constant(ma, mb, pz),
                         gap_y_constant=brier_gap_constant(ma, mb, py)))
    pairs = pd.DataFrame(rows)
    if n_boot > 0:
        ii = np.array([p[0] for p in idx])
        jj = np.array([p[1] for p in idx])
        dz = (c[:, ii] - z[:, None]) ** 2 - (c[:, jj] - z[:, None]) ** 2
        dy = (c[:, ii] - y[:, None]) ** 2 - (c[:, jj] - y[:, None]) ** 2
        _, codes = np.unique(items["cluster"].to_numpy(), return_inverse=True)
        rng = np.random.default_rng(seed)
        both = np.concatenate([dz, dy], axis=1)
        lo, hi = _cluster_boot(both, codes, int(n_boot), level, rng)
        p = len(idx)
        pairs["gap_z_lo"], pairs["gap_z_hi"] = lo[:p], hi[:p]
        pairs["gap_y_lo"], pairs["gap_y_hi"] = lo[p:], hi[p:]
        excl_z = (pairs["gap_z_lo"] > 0) | (pairs["gap_z_hi"] < 0)
        excl_y = (pairs["gap_y_lo"] > 0) | (pairs["gap_y_hi"] < 0)
        pairs["both_exclude_zero"] = excl_z & excl_y
    else:
        for col in ("gap_z_lo", "gap_z_hi", "gap_y_lo", "gap_y_hi"):
            pairs[col] = np.nan
        pairs["both_exclude_zero"] = False
    rev = pairs["reverses"].to_numpy(bool)
    return RulePairs(rules=pd.DataFrame(rule_rows), pairs=pairs, prevalence_z=pz,
                     prevalence_y=py, n_reversals=int(rev.sum()),
                     n_non_reversals=int((~rev).sum()),
                     n_criterion_correct=int(pairs["criterion_correct"].sum()),
                     n_reversals_both_exclude_zero=int(
                         (rev & pairs["both_exclude_zero"].to_numpy(bool)).sum()),
                     family=fam, construction=construction)
