"""What the Ranking reversal page shows, as result objects in the app's one gap convention.

Seed 003 §3 (Eq. 1–2: the label-source identity), §5.2 (the crossover (a + b)/2), Table 3
(four scoring protocols) and Table 4 (the decomposition of the scenario), computed by
:mod:`core.calibration.label_source`; the seed-000 bridge of :mod:`core.calibration.bridge`
and the NQ-open rule pairs of :mod:`core.calibration.nq301`.

The gap convention
------------------
Every gap here is ``Δ = R(B) − R(A)``: the Brier risk of the comparator B (EG, a constant,
the source-tier prior) minus that of the rule under study A (native confidence, agreement,
a resolver's posterior). **Above zero, A has the lower risk and a proper score selects A.**
This is seed 003's ``Δ_{EG−N} = R(EG) − R(native)`` (Table 4, Table 5) and the Pilot budget
page's ``Δ_Y``; :mod:`core.calibration.label_source` itself reports ``R(A) − R(B)`` (Eq. 1),
so this module calls it with the two rules swapped and negates the bridge's and the rule
pairs' columns. The glossary's "sign convention" entry states the same rule
(:data:`core.glossary.SIGN_CONVENTION`).

Invariant: swapping the rules changes no risk, crossover or share, and the identity
``Δ_Y + T_omit + T_fp = Δ_Z`` holds in this convention as in Eq. 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .label_source import (
    BrierGapCurve,
    brier_gap_constant,
    brier_gap_curve,
    crossover_prevalence,
    label_source_decomposition,
    scoring_protocols,
)
from .nq301 import (
    SEED_003_NQ301,
    AgreementAUROC,
    agreement_auroc,
    prevalence_shift,
    system_accuracy,
)
from .nq301_rules import RulePairs
from .paper import TABLE3

__all__ = [
    "GAP_CONVENTION",
    "PROTOCOL_NAMES",
    "BridgeView",
    "NQCase",
    "ReversalView",
    "Verdict",
    "bridge_view",
    "flip_pairs",
    "nq_case",
    "reversal_view",
]

#: The one gap convention of every page (see the module docstring).
GAP_CONVENTION = "Δ = R(B) − R(A): above 0, rule A has the lower Brier risk and is selected"

#: Display names of seed 003 Table 3's protocols.
PROTOCOL_NAMES = {"unmatched_as_false": "Unmatched-as-false (Z)",
                  "matched_only": "Matched-only (only what the reference matched)",
                  "closed_world": "Closed-world (the reference's own propositions)",
                  "adjudicated": "Adjudicated truth (Y)"}

_GRID = np.linspace(0.0, 1.0, 201)
_TIE = 1e-12


@dataclass(frozen=True)
class Verdict:
    """Which rule a proper score selects at one prevalence π (see :meth:`ReversalView.at`).

    ``by_criterion`` is the crossover shortcut (two constant rules at the means, seed 003
    §5.2); ``measured`` the rules themselves with labels thinned or added at random to reach
    π; ``side`` is ``">"``, ``"<"`` or ``"="`` (π against the midpoint).

    Invariant: ``shortcut_holds`` is ``by_criterion == measured``: the cards, the sentence and
    the caption of the page all read this one object, so they cannot disagree (issue 18.7: the
    caption used to compare with the label-free crossover while the cards compared with the
    measured one). ``label_free_agrees`` is the labels-free check of
    :meth:`~core.calibration.label_source.BrierGapCurve.shortcut_holds` (spread only); ``text``
    the caption sentence, every number in it from this object.
    """

    prevalence: float
    gap_exact: float
    gap_measured: float
    by_criterion: str
    measured: str
    side: str
    shortcut_holds: bool
    label_free_agrees: bool
    text: str


@dataclass(frozen=True, eq=False)
class ReversalView:
    """The π-independent part of the top panel, in the convention Δ = R(B) − R(A).

    Attributes
    ----------
    names : (A, B)
    n : int
        Rows scored; ``unit`` says what they are.
    a_mean, b_mean, midpoint : float
        The rules' (weighted) means and the crossover (a + b)/2.
    grid, exact, measured : ndarray
        Prevalences 0, .005, …, 1; Δ of two constant rules at the means; Δ of the rules.
    curve : BrierGapCurve
        The measured curve (its ``gap`` is ``measured``): crossover, spread and
        discrimination terms, the label-free crossover.
    gap_y, gap_z, t_omit, t_fp, identity_residual, omit_share, fp_share, q_star : float
        Eq. 1–2 in this convention (seed 003 Table 4's signs).
    prevalence_z, prevalence_y : float
    reverses : bool
    protocols : DataFrame or None
        Table 3's four protocols (``protocol, items scored, Brier A, Brier B, selects,
        paper's frame, paper selects``: the answer-key paper's Table 3) when the matcher's flags
        are known.
    """

    names: tuple[str, str]
    n: int
    unit: str
    a_mean: float
    b_mean: float
    midpoint: float
    grid: np.ndarray
    exact: np.ndarray
    measured: np.ndarray
    curve: BrierGapCurve
    gap_y: float
    gap_z: float
    t_omit: float
    t_fp: float
    identity_residual: float
    omit_share: float
    fp_share: float
    q_star: float
    prevalence_z: float
    prevalence_y: float
    reverses: bool
    protocols: pd.DataFrame | None

    def pick(self, gap: float) -> str:
        """The rule a gap selects: A above zero, B below, ``"tie"`` within 1e-12."""
        if not np.isfinite(gap) or abs(gap) < _TIE:
            return "tie"
        return self.names[0] if gap > 0 else self.names[1]

    def at(self, prevalence: float) -> Verdict:
        """The verdict at π (the measured gap is read off the 0.005 grid, exact on it)."""
        pi = float(prevalence)
        if not 0.0 <= pi <= 1.0:
            raise ValueError(f"prevalence must lie in [0, 1], got {prevalence!r}")
        g_exact = brier_gap_constant(self.b_mean, self.a_mean, pi)
        g_meas = float(np.interp(pi, self.grid, self.measured))
        side = ">" if pi > self.midpoint else "<" if pi < self.midpoint else "="
        crit, meas = self.pick(g_exact), self.pick(g_meas)
        holds = crit == meas
        free = bool(self.curve.shortcut_holds(pi))
        c = self.curve
        if holds:
            text = (f"At π = {pi:.2f} the midpoint shortcut holds: it selects {crit}, as the "
                    "rules themselves do.")
        else:
            where = (f"between the midpoint {self.midpoint:.3f} and the measured crossover "
                     f"{c.crossover:.3f}" if np.isfinite(c.crossover) else
                     "where the rules themselves do not cross at all")
            why = ("the spread alone (known before any label) already predicts the flip"
                   if not free else "the spread alone does not predict it: the rules' "
                   "discrimination moves the crossover")
            text = (f"At π = {pi:.2f} the midpoint shortcut fails: it selects {crit}, the "
                    f"rules themselves select {meas} — π lies {where}; {why}.")
        return Verdict(prevalence=pi, gap_exact=g_exact, gap_measured=g_meas,
                       by_criterion=crit, measured=meas, side=side, shortcut_holds=holds,
                       label_free_agrees=free, text=text)

    @property
    def q_star_is_share(self) -> bool:
        """``q*`` is a share of the omitted truths (it lies in [0, 1])."""
        return bool(np.isfinite(self.q_star) and 0.0 <= self.q_star <= 1.0)

    @property
    def q_star_text(self) -> str:
        """What ``q*`` means here, in words (issue 18.6: it is a share only in [0, 1])."""
        q = self.q_star
        if self.q_star_is_share:
            return (f"Relabelling {q:.1%} of the omitted truths as true brings the reference "
                    "gap to a tie.")
        if not np.isfinite(q):
            return ("No share of the omitted truths moves the reference gap: the two rules "
                    "give the omitted truths the same confidence on average (T_omit = 0).")
        if q < 0:
            return ("No share of the omitted truths brings a tie: relabelling them moves the "
                    f"reference gap further from zero (a tie would need q* = {q:.3f}, a "
                    "negative share).")
        left = self.gap_z - self.t_omit
        return ("Even relabelling every omitted truth leaves the reference gap at "
                f"{left:+.3f}, not a tie (q* = {q:.3f} would need more than all of them); the "
                "false matches keep it there.")

    @property
    def identity_text(self) -> str:
        """The exactness of Eq. 1 in words, without printing rounding noise."""
        if abs(self.identity_residual) < 1e-9:
            return ("The split is exact for any two rules: Δ under Y + T_omit + T_fp equals Δ "
                    "under Z up to rounding in the last of 16 digits.")
        return (f"The three terms miss Δ under Z by {self.identity_residual:.2e}, more than "
                "rounding: a numerical problem worth reporting.")

    def curve_table(self) -> pd.DataFrame:
        """The two curves as a download: ``prevalence, gap_constant_rules, gap_measured``."""
        return pd.DataFrame({"prevalence": self.grid, "gap_constant_rules": self.exact,
                             "gap_measured": self.measured})

    def identity_table(self) -> pd.DataFrame:
        """One row: the decomposition, the prevalences, the means and the crossover."""
        a, b = self.names
        return pd.DataFrame([{
            "rule_a": a, "rule_b": b, "convention": "R(B) - R(A)", "gap_y": self.gap_y,
            "t_omit": self.t_omit, "t_fp": self.t_fp, "gap_z": self.gap_z,
            "identity_residual": self.identity_residual, "omit_share": self.omit_share,
            "fp_share": self.fp_share, "q_star": self.q_star, "prevalence_z": self.prevalence_z,
            "prevalence_y": self.prevalence_y, "mean_a": self.a_mean, "mean_b": self.b_mean,
            "crossover": self.midpoint}])


def reversal_view(c_a, c_b, y, z, *, names: tuple[str, str], unit: str, weights=None,
                  matched=None, in_reference=None) -> ReversalView:
    """Crossover, gap curves, identity and (with the matcher's flags) Table 3 for A vs B.

    Parameters
    ----------
    c_a, c_b : array-like
        Confidences of the rule under study A and the comparator B.
    y, z : array-like of {0, 1}
        Adjudicated truth and the reference-derived label (unmatched = false).
    names : (str, str)
        Display names of A and B.
    unit : str
        What a row is, for captions ("1,490 human-labelled answers").
    weights : array-like, optional
        Sampling weights (the scenario's); ``None`` for equal weights.
    matched, in_reference : array-like of bool, optional
        The matcher's flags; both given → :attr:`ReversalView.protocols`.

    Raises
    ------
    ValueError
        From :mod:`core.calibration.label_source` on mismatched lengths or labels outside
        {0, 1}, or when only one of ``matched`` / ``in_reference`` is given.
    """
    if (matched is None) != (in_reference is None):
        raise ValueError("give both matched and in_reference (Table 3 needs the two flags), "
                         "or neither")
    ca, cb = np.asarray(c_a, float), np.asarray(c_b, float)
    yy, zz = np.asarray(y, float), np.asarray(z, float)
    w = None if weights is None else np.asarray(weights, float)
    a_mean, b_mean = float(np.average(ca, weights=w)), float(np.average(cb, weights=w))
    # B first: label_source reports R(first) − R(second).
    dec = label_source_decomposition(cb, ca, yy, zz, weights=w)
    curve = brier_gap_curve(cb, ca, yy, prevalences=_GRID, weights=w, mode="flip")
    exact = np.array([brier_gap_constant(b_mean, a_mean, g) for g in _GRID])
    protocols = None
    if matched is not None:
        prot = scoring_protocols(ca, cb, yy, zz, matched, in_reference, weights=w).to_frame()
        a, b = names
        pick = {"A": a, "B": b, "tie": "tie", "none": "—"}
        protocols = pd.DataFrame({
            "protocol": [PROTOCOL_NAMES[p] for p in prot["protocol"]],
            "items scored": prot["n"].to_numpy(),
            f"Brier {a}": prot["brier_a"].to_numpy(float),
            f"Brier {b}": prot["brier_b"].to_numpy(float),
            "selects": [pick[s] for s in prot["selects"]],
            "paper's frame": [TABLE3[p][0] for p in prot["protocol"]],
            "paper selects": [TABLE3[p][1] for p in prot["protocol"]]})
    return ReversalView(
        names=(str(names[0]), str(names[1])), n=int(len(ca)), unit=unit, a_mean=a_mean,
        b_mean=b_mean, midpoint=crossover_prevalence(a_mean, b_mean), grid=_GRID, exact=exact,
        measured=np.asarray(curve.gap, float), curve=curve, gap_y=dec.gap_y, gap_z=dec.gap_z,
        t_omit=dec.t_omit, t_fp=dec.t_fp, identity_residual=dec.identity_residual,
        omit_share=dec.omit_share, fp_share=dec.fp_share, q_star=dec.q_star,
        prevalence_z=float(np.average(zz, weights=w)),
        prevalence_y=float(np.average(yy, weights=w)), reverses=bool(dec.reverses),
        protocols=protocols)


@dataclass(frozen=True, eq=False)
class BridgeView:
    """The seed-000 bridge in the convention Δ = R(tier prior) − R(resolver).

    ``table`` is :func:`core.calibration.bridge.bridge_analysis` with ``gap_y, gap_z,
    t_omit, t_fp`` negated and a ``predicted`` column (the crossover lies strictly between
    E[Z] and E[Y]); ``overall`` its first row (all questions); the counts are over the
    question families (the other rows).
    """

    table: pd.DataFrame
    overall: pd.Series
    n_families: int
    n_reverse: int
    n_predicted_right: int


def bridge_view(analysis: pd.DataFrame) -> BridgeView:
    """:class:`BridgeView` of a bridge analysis (``all`` row first, then the families)."""
    if analysis.empty:
        raise ValueError("the bridge analysis has no rows (no predictions to bridge)")
    t = analysis.copy()
    for col in ("gap_y", "gap_z", "t_omit", "t_fp"):
        t[col] = -t[col].to_numpy(float)
    lo = np.minimum(t["prevalence_z"].to_numpy(float), t["prevalence_y"].to_numpy(float))
    hi = np.maximum(t["prevalence_z"].to_numpy(float), t["prevalence_y"].to_numpy(float))
    c = t["crossover"].to_numpy(float)
    t["predicted"] = (lo < c) & (c < hi)
    fam = t.iloc[1:]
    return BridgeView(table=t, overall=t.iloc[0], n_families=int(len(fam)),
                      n_reverse=int(fam["reverses"].sum()),
                      n_predicted_right=int((fam["predicted"] == fam["reverses"]).sum()))


def flip_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """NQ-open rule pairs (:class:`core.calibration.nq301_rules.RulePairs`) in Δ = R(B) − R(A).

    Gaps and the Eq. 2 terms change sign; each interval ``[lo, hi]`` becomes ``[−hi, −lo]``.
    Reversal, prediction and interval verdicts do not depend on the sign.
    """
    t = pairs.copy()
    for col in ("gap_z", "gap_y", "t_omit", "t_fp", "gap_z_constant", "gap_y_constant"):
        if col in t.columns:
            t[col] = -t[col].to_numpy(float)
    for g in ("gap_z", "gap_y"):
        lo, hi = f"{g}_lo", f"{g}_hi"
        if lo in t.columns and hi in t.columns:
            t[lo], t[hi] = -pairs[hi].to_numpy(float), -pairs[lo].to_numpy(float)
    return t


@dataclass(frozen=True, eq=False)
class NQCase:
    """The real NQ-open case (seed 003 §5.3, Table 1) as the page shows it.

    Attributes
    ----------
    shift : DataFrame
        :func:`~core.calibration.nq301.prevalence_shift` (labelled answers first).
    systems : DataFrame
        :func:`~core.calibration.nq301.system_accuracy`.
    systems_shown : DataFrame
        The columns a reader compares: ``system, EM, humans, gain, rank EM, rank humans,
        moves up``.
    auroc : AgreementAUROC
    pairs : RulePairs
        As computed (``R(A) − R(B)``); ``pairs_shown`` holds them in Δ = R(B) − R(A).
    pairs_shown : DataFrame
        The pairs in Δ = R(B) − R(A) with reader-facing column titles.
    prevalence_z, prevalence_y, p_y1_given_z0 : float
        Over the labelled answers.
    n_labelled : int
    seed : object
        :data:`~core.calibration.nq301.SEED_003_NQ301` (the seed's reference numbers).
    """

    shift: pd.DataFrame
    systems: pd.DataFrame
    systems_shown: pd.DataFrame
    auroc: AgreementAUROC
    pairs: RulePairs
    pairs_shown: pd.DataFrame
    prevalence_z: float
    prevalence_y: float
    p_y1_given_z0: float
    n_labelled: int
    seed: object = SEED_003_NQ301


_PAIR_COLUMNS = ("rule_a", "rule_b", "midpoint", "gap_z", "gap_z_lo", "gap_z_hi", "gap_y",
                 "gap_y_lo", "gap_y_hi", "reverses", "predicted", "criterion_correct",
                 "both_exclude_zero")


#: Column titles of the rule-pairs table (Δ in the app's convention; 95 % intervals).
_PAIR_TITLES = {"rule_a": "rule A", "rule_b": "rule B", "midpoint": "(a + b)/2",
                "gap_z": "Δ under Z", "gap_z_lo": "Z: low", "gap_z_hi": "Z: high",
                "gap_y": "Δ under Y", "gap_y_lo": "Y: low", "gap_y_hi": "Y: high",
                "reverses": "reverses", "predicted": "rule predicts",
                "criterion_correct": "rule right", "both_exclude_zero": "both off 0"}
#: The prevalence-shift table's columns in words (:func:`core.calibration.nq301.prevalence_shift`).
SHIFT_TITLES = {"level": "level", "unit": "unit", "n": "answers", "n_labelled": "labelled",
                "prevalence_z": "E[Z]", "prevalence_y": "E[Y]", "shift": "shift",
                "prevalence_z_all": "E[Z], every answer", "p_y1_given_z0": "P(Y = 1 | Z = 0)",
                "p_y0_given_z1": "P(Y = 0 | Z = 1)", "share_z1_y0": "false matches, share",
                "share_z0_y1": "omitted truths, share"}


def nq_case(frame: pd.DataFrame, answers: pd.DataFrame, pairs: RulePairs) -> NQCase:
    """:class:`NQCase` from the release's predictions, its labelled answers and the pairs.

    Parameters
    ----------
    frame : DataFrame
        :func:`core.calibration.nq301.load_nq301` (every prediction).
    answers : DataFrame
        :func:`core.calibration.nq301.nq301_answers` (the 1,490 labelled answers).
    pairs : RulePairs
        :func:`core.calibration.nq301_rules.rule_pairs` on ``answers``.
    """
    shift = prevalence_shift(frame, items=answers)
    systems = system_accuracy(frame)
    shown = systems[["system", "em_accuracy_labelled", "human_accuracy", "gain", "rank_em",
                     "rank_human", "rank_change"]].rename(columns={
                         "em_accuracy_labelled": "exact match", "human_accuracy": "humans",
                         "rank_em": "rank, exact match", "rank_human": "rank, humans",
                         "rank_change": "moves up"})
    row = shift.iloc[0]
    return NQCase(shift=shift, systems=systems, systems_shown=shown,
                  auroc=agreement_auroc(answers, frame=frame), pairs=pairs,
                  pairs_shown=flip_pairs(pairs.pairs)[list(_PAIR_COLUMNS)].rename(
                      columns=_PAIR_TITLES),
                  prevalence_z=float(row["prevalence_z"]), prevalence_y=float(row["prevalence_y"]),
                  p_y1_given_z0=float(row["p_y1_given_z0"]), n_labelled=int(row["n_labelled"]))
