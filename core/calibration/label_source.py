"""Label-source analysis of two confidence rules (seed 003 §3 Eq. 1–2, §5.2–5.3 Eq. 5–6).

Sources: seed 003 and its restatement
the label-source notes (sections "The identity", "Calibration-in-the-
large and the crossover", "De-biased risk", "Monotone repair"); calibration-notes §5.8.

Conventions
-----------
* Weighted expectation ``E_w[f] = Σ w_i f_i / Σ w_i``; ``weights=None`` means unit weights.
  Every risk here is a weighted mean, so results do not depend on the scale of the weights.
* Brier risk under label source L: ``R_L(C) = E_w[(C − L)²]`` (computed with
  :func:`core.calibration.scores.brier_score`).
* Gaps are ``R(A) − R(B)`` (negative favours A) in :func:`label_source_decomposition`, as in
  Eq. 1. Seed 003's tables report ``Δ_{EG−N} = R(EG) − R(native)``: call with ``c_a = EG``,
  ``c_b = native`` to reproduce the signs of Table 4 (``T_omit < 0``, ``T_fp > 0``).
* Labels ``y`` (adjudicated truth) and ``z`` (reference-derived) are binary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from core.calibration._checks import (
    as_float_array,
    check_labels,
    check_level,
    check_probabilities,
    check_same_length,
    check_weights,
)
from core.calibration.recalibration import PlattMap, platt_fit
from core.calibration.scores import brier_score
from core.stats import exact_interval

__all__ = [
    "PROTOCOLS",
    "BrierGapCurve",
    "LabelSourceDecomposition",
    "PiEstimate",
    "ProtocolResult",
    "ProtocolTable",
    "ReferencePlattResult",
    "brier_gap_constant",
    "brier_gap_curve",
    "crossover_prevalence",
    "debiased_risk",
    "estimate_pi_from_pilot",
    "label_source_decomposition",
    "reference_only_platt",
    "scoring_protocols",
]


def _rule(c, name: str) -> np.ndarray:
    return check_probabilities(as_float_array(c, name), name)


def _binary(y, name: str) -> np.ndarray:
    return check_labels(as_float_array(y, name), name, binary=True)


def _mean(w: np.ndarray, f: np.ndarray) -> float:
    return float(np.sum(w * f) / np.sum(w))


# --------------------------------------------------------------------------------------------
# the exact identity (Eq. 1-2)


@dataclass(frozen=True)
class LabelSourceDecomposition:
    """Brier risks of two rules under Y and Z and the exact split of the gap change (Eq. 1–2).

    Attributes
    ----------
    risk_y_a, risk_y_b, risk_z_a, risk_z_b : float
        ``R_Y(A)``, ``R_Y(B)``, ``R_Z(A)``, ``R_Z(B)``.
    gap_y, gap_z : float
        ``R_Y(A) − R_Y(B)`` and ``R_Z(A) − R_Z(B)``.
    t_omit : float
        ``2·E_w[(C_A − C_B)·1{Y=1, Z=0}]`` (omitted truths).
    t_fp : float
        ``−2·E_w[(C_A − C_B)·1{Y=0, Z=1}]`` (false-positive matches).
    identity_residual : float
        ``(gap_z − gap_y) − (t_omit + t_fp)``; zero up to rounding (Eq. 1 is exact).
    reverses : bool
        True when ``gap_y`` and ``gap_z`` are both non-zero with opposite signs.
    omit_share, fp_share : float
        Weighted shares of the (Y=1, Z=0) and (Y=0, Z=1) cells.
    q_star : float
        Restoration fraction at a tie (seed Table 4): relabelling a share q of the omitted
        truths from 0 to 1 moves the reference gap to ``gap_z − q·t_omit``, which is zero at
        ``q* = gap_z / t_omit`` (NaN when ``t_omit = 0``; may fall outside [0, 1]).
    """

    risk_y_a: float
    risk_y_b: float
    risk_z_a: float
    risk_z_b: float
    gap_y: float
    gap_z: float
    t_omit: float
    t_fp: float
    identity_residual: float
    reverses: bool
    omit_share: float
    fp_share: float
    q_star: float

    @property
    def total(self) -> float:
        """``t_omit + t_fp`` (= ``gap_z − gap_y`` exactly)."""
        return self.t_omit + self.t_fp


def label_source_decomposition(c_a, c_b, y, z, *, weights=None) -> LabelSourceDecomposition:
    """Exact decomposition of the label-source effect on the Brier gap (seed 003 §3 Eq. 1–2).

    Parameters
    ----------
    c_a, c_b : array_like, shape (n,)
        Two confidence rules on the same items, in [0, 1].
    y : array_like, shape (n,)
        Adjudicated literal truth Y ∈ {0, 1}.
    z : array_like, shape (n,)
        Reference-derived label Z ∈ {0, 1} (unmatched → 0).
    weights : array_like, shape (n,), optional
        Sampling weights w_i > 0.

    Returns
    -------
    LabelSourceDecomposition

    Notes
    -----
    ``[R_Z(A) − R_Z(B)] − [R_Y(A) − R_Y(B)] = 2·E_w[(C_A − C_B)(Y − Z)] = T_omit + T_fp``
    holds exactly because ``(C − Z)² − (C − Y)² = (Y − Z)(2C − Y − Z)`` and the ``Y + Z`` part
    cancels between the two rules (label-source-notes, "The identity").

    Examples
    --------
    >>> r = label_source_decomposition([.8, .8], [.4, .4], [1, 1], [1, 0])
    >>> round(r.gap_z - r.gap_y, 12) == round(r.t_omit + r.t_fp, 12)
    True
    """
    a, b = _rule(c_a, "c_a"), _rule(c_b, "c_b")
    y, z = _binary(y, "y"), _binary(z, "z")
    n = check_same_length(c_a=a, c_b=b, y=y, z=z)
    w = check_weights(weights, n)
    ry_a, ry_b = brier_score(a, y, weights=w), brier_score(b, y, weights=w)
    rz_a, rz_b = brier_score(a, z, weights=w), brier_score(b, z, weights=w)
    omit = (y == 1) & (z == 0)
    fp = (y == 0) & (z == 1)
    t_omit = 2.0 * _mean(w, (a - b) * omit)
    t_fp = -2.0 * _mean(w, (a - b) * fp)
    gap_y, gap_z = ry_a - ry_b, rz_a - rz_b
    return LabelSourceDecomposition(
        risk_y_a=ry_a, risk_y_b=ry_b, risk_z_a=rz_a, risk_z_b=rz_b,
        gap_y=gap_y, gap_z=gap_z, t_omit=t_omit, t_fp=t_fp,
        identity_residual=(gap_z - gap_y) - (t_omit + t_fp),
        reverses=bool(gap_y * gap_z < 0),
        omit_share=_mean(w, omit), fp_share=_mean(w, fp),
        q_star=gap_z / t_omit if t_omit != 0 else float("nan"),
    )


# --------------------------------------------------------------------------------------------
# prevalence crossover (§5.2)


def crossover_prevalence(a: float, b: float, *, var_a: float = 0.0,
                         var_b: float = 0.0) -> float:
    """Prevalence at which two rules exchange Brier rank, labels independent of the rules.

    ``R(A) − R(B) = (a − b)(a + b − 2π) + (Var A − Var B)`` when Y is independent of both
    rules (``E[A²] = Var A + a²``, ``E[AY] = aπ``), so the rank flips at

    ``π* = (a + b)/2 + (Var A − Var B) / (2(a − b))``:

    the midpoint of the means (seed 003 §5.2, exact for constant rules) plus a *spread term*
    that needs the rules only, no labels (the "valid range computable from the rules before
    adjudication" of the seed's A.14). Rules that discriminate move the crossover further
    (:attr:`BrierGapCurve.discrimination_term`); that part needs labels.

    Parameters
    ----------
    a, b : float
        Means of rules A and B, in [0, 1].
    var_a, var_b : float
        Their variances (≥ 0; 0 for constant rules, the default).

    Returns
    -------
    float
        π*; NaN when ``a == b`` (the gap is ``Var A − Var B`` at every π: no crossover). It
        can fall outside [0, 1] (then the ranking never flips).

    Examples
    --------
    >>> round(crossover_prevalence(0.767, 0.392), 4)
    0.5795
    >>> round(crossover_prevalence(0.7, 0.4, var_a=0.09), 3)  # A ∈ {.4, 1}, B = .4
    0.7
    """
    vals = {"a": a, "b": b, "var_a": var_a, "var_b": var_b}
    bad = [k for k, v in vals.items() if not np.isfinite(float(v))]
    if bad:
        raise ValueError(f"crossover_prevalence needs finite numbers; {', '.join(bad)} is not")
    a, b, var_a, var_b = (float(v) for v in (a, b, var_a, var_b))
    if not (0.0 <= a <= 1.0 and 0.0 <= b <= 1.0):
        raise ValueError(f"the rule means must lie in [0, 1], got a = {a:g}, b = {b:g}")
    if var_a < 0 or var_b < 0:
        raise ValueError("variances must be >= 0")
    if a == b:
        return float("nan")
    return (a + b) / 2.0 + (var_a - var_b) / (2.0 * (a - b))


def brier_gap_constant(a: float, b: float, prevalence: float) -> float:
    """Brier gap ``R(a) − R(b) = (a − b)(a + b − 2π)`` of two constant forecasts at prevalence π.

    Notes
    -----
    Seed 003 §5.2: "if a tracker's mean were .30, the probe would instead win under adjudication
    by .070". For *constant* rules at .30 and .392 with π = .783 this formula gives .080; the
    seed's .070 is for the native rule shifted in location to mean .30 (which keeps its spread;
    the default scenario gives .071).

    Examples
    --------
    >>> round(brier_gap_constant(0.30, 0.392, 0.783), 3)
    0.08
    """
    a, b, p = float(a), float(b), float(prevalence)
    return (a - b) * (a + b - 2.0 * p)


@dataclass(frozen=True, eq=False)
class BrierGapCurve:
    """Brier gap ``R_π(A) − R_π(B)`` as a function of prevalence π (see :func:`brier_gap_curve`).

    Attributes
    ----------
    prevalences, gap : ndarray
        The grid and the gap on it.
    mode : str
        How prevalence was varied ("reweight" or "flip").
    crossover : float
        Exact prevalence where the gap is zero (NaN if none in [0, 1]).
    midpoint : float
        ``(a + b)/2`` with ``a, b`` the weighted means of the rules on the observed frame.
    deviation : float
        ``crossover − midpoint``: how far the constant-rule shortcut is off for these rules;
        ``spread_term + discrimination_term``.
    observed_prevalence : float
        ``E_w[y]`` of the input.
    spread_term : float
        ``(Var A − Var B) / (2(a − b))``, from the rules alone (:func:`crossover_prevalence`).
    label_free_crossover : float
        ``midpoint + spread_term``: the exact crossover if the labels were independent of the
        rules, computable before adjudication.
    discrimination_term : float
        ``crossover − label_free_crossover``: what the rules' dependence on the labels adds.
    """

    prevalences: np.ndarray
    gap: np.ndarray
    mode: str
    crossover: float
    midpoint: float
    deviation: float
    observed_prevalence: float
    spread_term: float = float("nan")
    label_free_crossover: float = float("nan")
    discrimination_term: float = float("nan")

    def shortcut_holds(self, prevalence: float) -> bool:
        """Whether the midpoint and the label-free crossover pick the same winner at π.

        The shortcut "the rank flips at (a + b)/2" is wrong, for labels independent of the
        rules, exactly for prevalences between the midpoint and the label-free crossover; this
        check needs no labels.
        """
        lo, hi = sorted((self.midpoint, self.label_free_crossover))
        return not (lo < float(prevalence) < hi)

    def to_frame(self) -> pd.DataFrame:
        """The curve as a DataFrame with columns ``prevalence, gap``."""
        return pd.DataFrame({"prevalence": self.prevalences, "gap": self.gap})


def brier_gap_curve(c_a, c_b, y, *, prevalences, weights=None,
                    mode: Literal["reweight", "flip"] = "reweight") -> BrierGapCurve:
    """Brier gap of two non-constant rules as prevalence varies (seed 003 §5.2, notes §5.8).

    Parameters
    ----------
    c_a, c_b : array_like, shape (n,)
        Two confidence rules in [0, 1].
    y : array_like, shape (n,)
        Binary labels (usually Y); both classes must be present.
    prevalences : array_like
        Grid of target prevalences π in [0, 1].
    weights : array_like, shape (n,), optional
        Sampling weights.
    mode : {"reweight", "flip"}
        How prevalence is varied.

        * ``"reweight"`` (label shift): positives are re-weighted by ``π / p`` and negatives by
          ``(1 − π)/(1 − p)`` (``p = E_w[y]``), which keeps each class's conditional distribution
          of the rules. Then ``gap(π) = π·G₁ + (1 − π)·G₀`` with
          ``G₁ = E_w[(A − 1)² − (B − 1)² | Y = 1]`` and ``G₀ = E_w[A² − B² | Y = 0]``, linear in
          π, and the crossover is ``G₀ / (G₀ − G₁)``.
        * ``"flip"`` (label noise, the way omission acts): below ``p`` each positive is relabelled
          0 with probability ``1 − π/p``; above ``p`` each negative is relabelled 1 with
          probability ``(π − p)/(1 − p)``. The *expected* gap is piecewise linear in π.

    Returns
    -------
    BrierGapCurve

    Notes
    -----
    For constant rules both modes give ``(a − b)(a + b − 2π)`` and the crossover is exactly
    ``(a + b)/2`` (:func:`brier_gap_constant`). Two things move it away from the midpoint: a
    difference in spread, ``(Var A − Var B)/(2(a − b))`` (exact when the labels are
    independent of the rules; ``spread_term``), and discrimination (``discrimination_term``,
    the rest of ``deviation``).
    """
    a, b = _rule(c_a, "c_a"), _rule(c_b, "c_b")
    y = _binary(y, "y")
    n = check_same_length(c_a=a, c_b=b, y=y)
    w = check_weights(weights, n)
    grid = check_probabilities(as_float_array(prevalences, "prevalences"), "prevalences")
    pos = y == 1
    if pos.all() or not pos.any():
        raise ValueError("y must contain both classes")
    p = _mean(w, y)
    d0 = a * a - b * b  # score difference when the label is 0
    d1 = (a - 1.0) ** 2 - (b - 1.0) ** 2  # when the label is 1
    if mode == "reweight":
        g1 = float(np.sum(w[pos] * d1[pos]) / np.sum(w[pos]))
        g0 = float(np.sum(w[~pos] * d0[~pos]) / np.sum(w[~pos]))
        gap = grid * g1 + (1.0 - grid) * g0
        cross = g0 / (g0 - g1) if g0 != g1 else float("nan")
        crossings = [cross] if 0.0 <= cross <= 1.0 else []
    elif mode == "flip":
        e_d0 = _mean(w, d0)
        e_dd_pos = _mean(w, (d1 - d0) * pos)  # E[(d1 - d0) 1{y=1}]
        e_dd_neg = _mean(w, (d1 - d0) * ~pos)

        def gap_at(pi):
            pi = np.asarray(pi, float)
            keep = np.minimum(pi / p, 1.0)
            flip = np.maximum((pi - p) / (1.0 - p), 0.0)
            return e_d0 + keep * e_dd_pos + flip * e_dd_neg

        gap = gap_at(grid)
        crossings = []
        # lower piece: e_d0 + (pi/p) e_dd_pos on [0, p]
        if e_dd_pos != 0:
            r = -e_d0 * p / e_dd_pos
            if 0.0 <= r <= p:
                crossings.append(r)
        g_p = e_d0 + e_dd_pos
        if e_dd_neg != 0:
            r = p - g_p * (1.0 - p) / e_dd_neg
            if p < r <= 1.0:
                crossings.append(r)
    else:
        raise ValueError(f"mode must be 'reweight' or 'flip', got {mode!r}")
    cross = float(crossings[0]) if crossings else float("nan")
    ma, mb = _mean(w, a), _mean(w, b)
    mid = crossover_prevalence(ma, mb)
    free = crossover_prevalence(ma, mb, var_a=_mean(w, (a - ma) ** 2),
                                var_b=_mean(w, (b - mb) ** 2))
    return BrierGapCurve(prevalences=grid, gap=np.asarray(gap, float), mode=mode,
                         crossover=cross, midpoint=mid, deviation=cross - mid,
                         observed_prevalence=p, spread_term=free - mid,
                         label_free_crossover=free, discrimination_term=cross - free)


# --------------------------------------------------------------------------------------------
# de-biased risk (Eq. 6)


def debiased_risk(c, z, pi, *, weights=None) -> float:
    """De-biased Brier risk with unmatched labels replaced by their truth rate (Eq. 6).

    ``R_π(C) = E_w[(C − 1)²·1{Z=1}] + E_w[(π(C − 1)² + (1 − π)C²)·1{Z=0}]``.

    Parameters
    ----------
    c : array_like, shape (n,)
        Confidence rule in [0, 1].
    z : array_like, shape (n,)
        Reference-derived label in {0, 1}.
    pi : float or array_like, shape (n,)
        ``π = P(Y = 1 | Z = 0)``, scalar or per item (e.g. per pilot stratum); ignored where
        ``z = 1``.
    weights : array_like, shape (n,), optional

    Returns
    -------
    float

    Notes
    -----
    Seed 003 §5.3: with π = .732 the paired gap moves from −.227 (raw Z) to +.161. It is the
    expected Brier score of C against the label "1 if matched, else Bernoulli(π)", so matched
    items are taken as true (false-positive matches are not corrected).

    **Assumption:** among unmatched items the truth is independent of the confidence,
    ``P(Y = 1 | Z = 0, C) = π``. It is unbiased for the truth risk only then. When confident
    unmatched items are more often true (the usual case: omissions are true beliefs the
    matcher missed), replacing Y by the constant π over-charges the confident ones and the
    estimate is biased (+.107 in a case of ``tests/test_label_source.py``); a pilot estimate of
    ``P(Y | Z = 0, C)`` (the monotone repair of :mod:`core.calibration.restore`) or Eq. 3
    avoids it.

    Examples
    --------
    >>> round(debiased_risk([0.5, 0.8], [1, 0], 0.5), 6)  # (.25 + (.5*.04 + .5*.64)) / 2
    0.295
    """
    c = _rule(c, "c")
    z = _binary(z, "z")
    n = check_same_length(c=c, z=z)
    w = check_weights(weights, n)
    pi_arr = np.broadcast_to(np.asarray(pi, float), (n,))
    if not np.all(np.isfinite(pi_arr)) or np.any((pi_arr < 0) | (pi_arr > 1)):
        raise ValueError("pi must lie in [0, 1]")
    loss = np.where(z == 1, (c - 1.0) ** 2, pi_arr * (c - 1.0) ** 2 + (1.0 - pi_arr) * c * c)
    return _mean(w, loss)


@dataclass(frozen=True)
class PiEstimate:
    """Design-based estimate of ``π = P_w(Y = 1 | Z = 0)`` from a pilot.

    Attributes
    ----------
    pi : float
        Ratio (Hájek) estimate ``Σ_S (w/ρ)·Y·1{Z=0} / Σ_S (w/ρ)·1{Z=0}``.
    se : float
        Linearisation standard error (with-replacement approximation), NaN if < 2 unmatched
        items were sampled.
    lo, hi : float
        Exact (Clopper–Pearson) interval at the Kish effective size ``n_eff`` (see
        :func:`estimate_pi_from_pilot`).
    n_unmatched : int
        Sampled unmatched items.
    n_eff : float
        Kish effective size ``(Σ v)² / Σ v²`` of their design weights ``v = w/ρ``.
    """

    pi: float
    se: float
    lo: float
    hi: float
    n_unmatched: int
    n_eff: float = float("nan")


def estimate_pi_from_pilot(y, z, sampled, rho, *, weights=None, level: float = 0.95) -> PiEstimate:
    """Estimate the truth rate among unmatched items from a probability-sampled pilot (§5.3).

    Parameters
    ----------
    y : array_like, shape (n,)
        Truth labels; only entries with ``sampled`` are read (NaN allowed elsewhere).
    z : array_like, shape (n,)
        Reference labels of the full frame.
    sampled : array_like of bool, shape (n,)
        Pilot membership.
    rho : array_like, shape (n,)
        First-order inclusion probabilities (> 0 where sampled).
    weights : array_like, shape (n,), optional
        Population weights.
    level : float
        Interval level.

    Returns
    -------
    PiEstimate

    Notes
    -----
    The standard error treats the sampled unmatched items as with-replacement draws (no
    finite population correction), which is conservative for without-replacement designs.
    The interval is the exact (Clopper–Pearson) interval of ``k = π̂·n_eff`` successes in
    ``n_eff`` trials (:func:`core.stats.exact_interval`), ``n_eff`` the Kish effective size of
    the design weights: with equal weights the textbook exact interval of the sampled
    unmatched items. The normal (Wald) interval ``π̂ ± z·se`` it replaces covered .68 at
    π = .05 and .64 at π = .95 with 20 labels (zero width whenever every sampled label was
    equal, a third of such pilots); Wilson would cover .925 there; the exact interval
    covers at least the nominal level (.984 at π = .05, n = 20; ``tests/test_coverage.py``).
    """
    level = check_level(level)
    z = _binary(z, "z")
    n = z.shape[0]
    s = np.asarray(sampled, bool)
    if s.shape != (n,):
        raise ValueError("sampled must have the frame's length")
    yv = as_float_array(y, "y", allow_nan=True)
    rho = as_float_array(rho, "rho")
    check_same_length(y=yv, z=z, rho=rho)
    w = check_weights(weights, n)
    sel = s & (z == 0)
    if np.any(rho[s] <= 0) or np.any(rho[s] > 1):
        raise ValueError("rho must lie in (0, 1] on sampled items")
    k = int(sel.sum())
    if k == 0:
        raise ValueError("no unmatched item was sampled")
    ys = check_labels(yv[sel], "y")
    v = w[sel] / rho[sel]
    pi = float(np.sum(v * ys) / np.sum(v))
    if k >= 2:
        u = v * (ys - pi) / np.sum(v)
        se = float(np.sqrt(k / (k - 1) * np.sum((u - u.mean()) ** 2)))
    else:
        se = float("nan")
    n_eff = float(np.sum(v) ** 2 / np.sum(v * v))
    lo, hi = exact_interval(min(max(pi * n_eff, 0.0), n_eff), n_eff, level=level)
    return PiEstimate(pi=pi, se=se, lo=float(lo), hi=float(hi), n_unmatched=k, n_eff=n_eff)


# --------------------------------------------------------------------------------------------
# Table 3: scoring protocols


@dataclass(frozen=True)
class ProtocolResult:
    """One row of Table 3: a scoring protocol's frame, label and Brier of both rules."""

    protocol: str
    n: int
    weight: float
    brier_a: float
    brier_b: float
    selects: str  # "A", "B" or "tie"


@dataclass(frozen=True)
class ProtocolTable:
    """The four protocols of seed 003 Table 3 (see :func:`scoring_protocols`)."""

    rows: tuple[ProtocolResult, ...]

    def __getitem__(self, protocol: str) -> ProtocolResult:
        for r in self.rows:
            if r.protocol == protocol:
                return r
        raise KeyError(protocol)

    def to_frame(self) -> pd.DataFrame:
        """One row per protocol: ``protocol, n, weight, brier_a, brier_b, selects``."""
        return pd.DataFrame([r.__dict__ for r in self.rows])


#: the protocol names of seed 003 Table 3, in row order
PROTOCOLS = ("unmatched_as_false", "matched_only", "closed_world", "adjudicated")


def scoring_protocols(c_a, c_b, y, z, matched, in_reference, *, weights=None,
                      reference_label=None) -> ProtocolTable:
    """Score two fixed rules under the four protocols of seed 003 Table 3.

    Parameters
    ----------
    c_a, c_b : array_like, shape (n,)
        Confidence rules on the emitted beliefs.
    y : array_like, shape (n,)
        Adjudicated truth.
    z : array_like, shape (n,)
        Reference-derived label (matched to a true reference proposition → 1, else 0).
    matched : array_like of bool, shape (n,)
        The matcher paired the belief with some reference proposition (true or false).
    in_reference : array_like of bool, shape (n,)
        The belief's proposition is one of the finite reference's own propositions (whether or
        not the matcher found it).
    weights : array_like, shape (n,), optional
    reference_label : array_like, shape (n,), optional
        The reference's own truth value of its propositions, read where ``in_reference``;
        defaults to ``y`` (the reference is taken to be right about what it contains).

    Returns
    -------
    ProtocolTable
        Rows, in order:

        * ``unmatched_as_false`` — every emitted belief, label ``z`` (unmatched counted false).
        * ``matched_only`` — only beliefs with ``matched`` (IR condensed-list style: unjudged
          items are set aside, not called false), label ``z`` (the matched proposition's
          verdict).
        * ``closed_world`` — only beliefs with ``in_reference`` (the reference scores its own
          propositions and never imputes falsehood from non-matching), label
          ``reference_label``.
        * ``adjudicated`` — every emitted belief, label ``y``.

        Each row has the item count, total weight, ``R(A)``, ``R(B)`` and the selected rule
        (lower Brier; ``"tie"`` if equal; NaN risks and ``"none"`` if the frame is empty).

    Notes
    -----
    Seed Table 3 uses different units for the middle rows (1,017 matched beliefs, 1,855
    reference propositions); here all protocols score subsets of one belief frame.
    """
    a, b = _rule(c_a, "c_a"), _rule(c_b, "c_b")
    y, z = _binary(y, "y"), _binary(z, "z")
    m = np.asarray(matched, bool)
    r = np.asarray(in_reference, bool)
    n = check_same_length(c_a=a, c_b=b, y=y, z=z, matched=m, in_reference=r)
    w = check_weights(weights, n)
    ref = y if reference_label is None else _binary(reference_label, "reference_label")
    check_same_length(y=y, reference_label=ref)
    everyone = np.ones(n, bool)
    specs = tuple(zip(PROTOCOLS, (everyone, m, r, everyone), (z, z, ref, y), strict=True))
    rows = []
    for name, sel, lab in specs:
        k = int(sel.sum())
        if k == 0:
            rows.append(ProtocolResult(name, 0, 0.0, float("nan"), float("nan"), "none"))
            continue
        ba = brier_score(a[sel], lab[sel], weights=w[sel])
        bb = brier_score(b[sel], lab[sel], weights=w[sel])
        pick = "A" if ba < bb else "B" if bb < ba else "tie"
        rows.append(ProtocolResult(name, k, float(w[sel].sum()), ba, bb, pick))
    return ProtocolTable(rows=tuple(rows))


# --------------------------------------------------------------------------------------------
# reference-only Platt (§5.2 "Do not post-hoc calibrate on unmatched-as-false labels")


@dataclass(frozen=True, eq=False)
class ReferencePlattResult:
    """What a Platt map fitted on reference labels Z does to a rule (seed 003 §5.2).

    Attributes
    ----------
    recalibrated : ndarray
        Out-of-group (or in-sample, without groups) recalibrated confidences.
    maps : tuple[PlattMap, ...]
        One map per held-out group (one map without groups).
    mean_before, mean_after : float
        ``E_w[c]`` and ``E_w[recalibrated]``.
    prevalence_z, prevalence_y : float
        ``E_w[z]`` and ``E_w[y]``.
    brier_z_before, brier_z_after, brier_y_before, brier_y_after : float
        Brier risk under Z and under Y, before and after.
    """

    recalibrated: np.ndarray
    maps: tuple[PlattMap, ...]
    mean_before: float
    mean_after: float
    prevalence_z: float
    prevalence_y: float
    brier_z_before: float
    brier_z_after: float
    brier_y_before: float
    brier_y_after: float

    @property
    def truth_worsens(self) -> bool:
        """True when the reference-fitted map raises truth-Brier."""
        return self.brier_y_after > self.brier_y_before


def _safe_logit(c: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    c = np.clip(c, eps, 1.0 - eps)
    return np.log(c) - np.log1p(-c)


def reference_only_platt(c, z, y, *, weights=None, groups=None) -> ReferencePlattResult:
    """Fit Platt scaling on reference labels only and score the result under truth.

    Parameters
    ----------
    c : array_like, shape (n,)
        Confidence rule in [0, 1] (e.g. native).
    z : array_like, shape (n,)
        Reference labels used for fitting.
    y : array_like, shape (n,)
        Truth labels, used only for scoring.
    weights : array_like, shape (n,), optional
    groups : array_like, shape (n,), optional
        Group labels (e.g. scenario) for leave-one-group-out fitting, as in the seed's
        "reference-only leave-one-scenario-out Platt recalibrator"; in-sample if omitted.

    Returns
    -------
    ReferencePlattResult

    Notes
    -----
    The map is ``σ(a·logit(c) + b)`` fitted by :func:`core.calibration.recalibration.platt_fit`
    (Platt's smoothed targets) on ``logit(c)`` with ``c`` clipped to [1e-6, 1 − 1e-6]. Because
    the fitted map's weighted mean matches the (smoothed) reference prevalence, it pulls mean
    confidence towards ``E_w[Z]`` (seed: .767 → .294) and, when ``E_w[Y] ≫ E_w[Z]``, worsens
    truth-Brier (.178 → .408).
    """
    c = _rule(c, "c")
    z, y = _binary(z, "z"), _binary(y, "y")
    n = check_same_length(c=c, z=z, y=y)
    w = check_weights(weights, n)
    s = _safe_logit(c)
    out = np.empty(n)
    maps = []
    if groups is None:
        mp = platt_fit(s, z, weights=w)
        out[:] = mp.predict(s)
        maps.append(mp)
    else:
        g = np.asarray(groups)
        if g.shape != (n,):
            raise ValueError("groups must have the frame's length")
        for lab in np.unique(g):
            test = g == lab
            if test.all():
                raise ValueError("leave-one-group-out needs at least two groups")
            mp = platt_fit(s[~test], z[~test], weights=w[~test])
            out[test] = mp.predict(s[test])
            maps.append(mp)
    out.setflags(write=False)
    return ReferencePlattResult(
        recalibrated=out, maps=tuple(maps),
        mean_before=_mean(w, c), mean_after=_mean(w, out),
        prevalence_z=_mean(w, z), prevalence_y=_mean(w, y),
        brier_z_before=brier_score(c, z, weights=w), brier_z_after=brier_score(out, z, weights=w),
        brier_y_before=brier_score(c, y, weights=w), brier_y_after=brier_score(out, y, weights=w),
    )
