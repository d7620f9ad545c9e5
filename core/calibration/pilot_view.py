"""What the Pilot budget page shows, as result objects in the app's one gap convention.

Seed 003 §3 (Eq. 3: TriSource-Restore; Algorithm 1: select, repair, escalate, gate; A.11:
the monotone repair) and §5.5 (Table 5: panel A, the estimators over repeated pilots; panel
B, the held-out truth-Brier of each confidence map), computed by
:mod:`core.calibration.pilot` and :func:`core.calibration.nq301_pilot.real_pilot_budgets`; the
seed's own numbers come from :mod:`core.calibration.paper` (``TABLE5_A``, ``TABLE5_B``).

The gap convention
------------------
Every gap is ``Δ_Y = R(EG) − R(native)``, the app's ``Δ = R(B) − R(A)`` with A = native and
B = EG (:data:`core.glossary.SIGN_CONVENTION`): **above 0, native is better**. The pilot
module already reports rule B minus rule A, so nothing here changes a sign; on NQ-open A and
B are the two rules a visitor picks.

Invariants (``tests/test_pilot_view.py``): every number a view carries equals the
corresponding entry of the result it was built from; ``native_better`` is ``Δ_Y > 0``;
display tables hold a subset of the download's information, never other numbers.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from .nq301_pilot import real_pilot_budgets
from .paper import TABLE5_A, TABLE5_B
from .pilot import PilotSimulation
from .pilot_walk import Algorithm1Step, Algorithm1Walk, DeploymentGate, walk_algorithm1

__all__ = [
    "CURVE_BUDGETS",
    "LARGE_NO_INTERVAL",
    "ESTIMATOR_LABELS",
    "REAL_BUDGETS",
    "WALK_LOOKS",
    "BudgetView",
    "EstimatorMetrics",
    "HeldoutView",
    "JudgeView",
    "RealPilotView",
    "WalkView",
    "beta_words",
    "budget_view",
    "budgets_with",
    "coverage_words",
    "heldout_view",
    "judge_view",
    "real_pilot_view",
    "sampled_items",
    "walk_design",
    "walk_view",
    "width_words",
]

#: Budgets of the simulated curve (attempted or usable annotations).
CURVE_BUDGETS = (10, 20, 35, 50, 80, 120, 200)
#: Cumulative attempted budgets of the looks of the walk (those of ``simulate_walks``).
WALK_LOOKS = (10, 20, 30, 40, 50, 75, 100, 150, 200)
#: Budgets of the real NQ-open pilots (those of ``real_pilot_budgets``), usable labels.
REAL_BUDGETS: tuple[int, ...] = tuple(
    inspect.signature(real_pilot_budgets).parameters["budgets"].default)
#: Native confidence at or above this is "high confidence" in the stratified design.
_HIGH = float(inspect.signature(walk_algorithm1).parameters["high_threshold"].default)

#: The scenario's rules A and B.
_NAMES = ("native", "EG")
#: Display names of the two estimators (the glossary's words).
ESTIMATOR_LABELS = MappingProxyType({"human_only": "human-only", "trisource": "TriSource"})

_HELDOUT_NAMES = (("ref_raw", "reference-selected rule, raw"),
                  ("ref_zplatt", "reference-only Z-Platt"),
                  ("restored_raw", "restored rule, raw"),
                  ("pilot_only", "pilot-only Platt"),
                  ("trisource", "TriSource repair"),
                  ("full_y", "Platt on full training Y"))


def _sign(x: float) -> int:
    return int(np.sign(x)) if np.isfinite(x) else 0


def beta_words(origin: str) -> str:
    """Where β came from, in words (``resolve_beta``'s codes; other text is kept as is)."""
    return {"fixed": "fixed by hand",
            "transfer": "learned on another audited dataset before the pilot",
            "transfer (gate failed: β = 0)": "0: the fit on another audited dataset failed "
                                             "its 5 % check"}.get(origin, origin)


def _winner(gap: float, names: tuple[str, str]) -> str:
    """Rule A above 0, B below, "neither" at an exact tie (Δ = R(B) − R(A))."""
    return names[0] if gap > 0 else names[1] if gap < 0 else "neither"


def budgets_with(budgets, budget: int) -> tuple[int, ...]:
    """``budgets`` and ``budget``, sorted, each once (the chosen budget is always computed)."""
    return tuple(sorted({*(int(b) for b in budgets), int(budget)}))


def walk_design(design: str) -> str:
    """The design of the walk: PPS draws with replacement and has no nested looks, so the
    walk then uses the stratified design (``ValueError`` for an unknown design)."""
    if design not in ("stratified", "srs", "pps"):
        raise ValueError(f"design must be 'stratified', 'srs' or 'pps', got {design!r}")
    return design if design != "pps" else "stratified"


# ---------------------------------------------------------------- panel A
@dataclass(frozen=True)
class EstimatorMetrics:
    """One estimator over repeated pilots (one row of Table 5 panel A, seed 003 §5.5).

    ``width_reduction`` is ``1 − width / human-only width`` (0 for human-only itself);
    ``coverage`` is over the pilots that gave an interval, ``no_interval`` the share of
    pilots with no estimable variance and ``coverage_all`` the coverage over *all* pilots (a
    pilot without an interval covers nothing): ``coverage_all = coverage · (1 − no_interval)``.
    """

    rmse: float
    bias: float
    mean_width: float
    coverage: float
    coverage_all: float
    p_correct_direction: float
    false_termination: float
    escalation: float
    no_interval: float
    width_reduction: float

    @property
    def narrower(self) -> bool:
        """At most as wide as human-only (``width_reduction >= 0``)."""
        return bool(self.width_reduction >= 0)

    @classmethod
    def of(cls, row: Mapping) -> EstimatorMetrics:
        """From a :meth:`~core.calibration.pilot.PilotSimulation.summary` row."""
        return cls(**{f: float(row[f]) for f in cls.__dataclass_fields__})


#: A share of pilots without an interval at least this large is called large in words.
LARGE_NO_INTERVAL = 0.10


def width_words(reduction: float) -> str:
    """TriSource's width against human-only's in words ("12.3% narrower than human-only"),
    or why there is nothing to compare (human-only gave no interval: NaN)."""
    r = float(reduction)
    if not np.isfinite(r):
        return "not comparable with human-only, which gave no interval"
    return f"{abs(r):.1%} {'narrower' if r >= 0 else 'wider'} than human-only"


def coverage_words(human: EstimatorMetrics, tri: EstimatorMetrics) -> str:
    """One or two sentences that put coverage beside the pilots that gave no interval.

    Coverage on the page is over the pilots that gave an interval; this says how many gave
    none and what the coverage over *all* pilots is, and at a share of at least
    :data:`LARGE_NO_INTERVAL` says in words that such a pilot must escalate. An estimator that
    never gave an interval is named with the reason the numbers show (RMSE 0: every residual
    was 0, so there is no variance to estimate). Every number comes from the arguments.
    """
    def share(x: float) -> str:
        return f"{x:.1%}"

    def cov(m: EstimatorMetrics) -> str:
        return "none" if not np.isfinite(m.coverage_all) else f"{m.coverage_all:.3f}"

    if human.no_interval == 0 and tri.no_interval == 0:
        return "Every pilot gave an interval, so coverage is over all pilots."
    out = (f"{share(tri.no_interval)} of the TriSource pilots (human-only "
           f"{share(human.no_interval)}) gave no interval: too few usable labels or strata to "
           "estimate a variance. Coverage above is over the pilots that gave one; counting the "
           f"others as misses, coverage over all pilots is {cov(tri)} (human-only {cov(human)}).")
    never = [name for name, m in (("Human-only", human), ("TriSource", tri))
             if m.no_interval >= 1.0]
    for name in never:
        m = human if name == "Human-only" else tri
        out += (f" {name} gave no interval in any pilot"
                + (": its estimate equalled the truth gap every time (RMSE 0), because every "
                   "sampled human label agreed with the reference, so there was no variance to "
                   "estimate." if m.rmse == 0 else "."))
    if max(human.no_interval, tri.no_interval) >= LARGE_NO_INTERVAL and len(never) < 2:
        out += (" That is a large share: at this budget a pilot often ends without an interval "
                "and has to escalate, so plan for more labels.")
    return out


def _split(summary: pd.DataFrame) -> tuple[EstimatorMetrics, EstimatorMetrics]:
    by = summary.set_index("estimator")
    missing = {"human_only", "trisource"} - set(by.index)
    if missing:
        raise ValueError(f"the summary has no rows for {sorted(missing)}")
    return EstimatorMetrics.of(by.loc["human_only"]), EstimatorMetrics.of(by.loc["trisource"])


@dataclass(frozen=True, eq=False)
class BudgetView:
    """The pilots at the chosen budget, the seed's numbers beside them, and the curve.

    Attributes
    ----------
    budget, reps, design, budget_kind, level : the settings.
    human, tri : EstimatorMetrics
        Human-only (β = 0) and TriSource-Restore.
    coverage_text : str
        :func:`coverage_words` of the two: the pilots without an interval and the coverage
        over all pilots, beside the coverage shown.
    delta_y, delta_z : float
        Full-frame gap under the truth and under the reference, R(EG) − R(native).
    native_better, reference_agrees : bool
        ``Δ_Y > 0``; ``Δ_Z`` has the sign of ``Δ_Y`` (False: the reference reverses).
    winner_y, winner_z : str
        The rule the truth and the reference select ("native", "EG" or "neither").
    beta, beta_text, beta_origin, beta_source : the judges' weights, as numbers and as text;
        where they came from, as code and in words (:func:`beta_words`).
    mean_usable, mean_clusters : float
        Usable labels and stores per pilot, on average.
    min_clusters : int
        Fewer stores than this in a pilot force an escalation.
    narrower_at_every_budget : bool
        The same at every budget of ``curve`` (False when an estimator has no interval at
        some budget).
    budgets_without_interval : tuple of int
        Budgets of ``curve`` at which an estimator gave no interval in any pilot (for example
        human-only with a perfect reference: every residual is 0, so is its variance).
    escalations_fall : bool
        TriSource's escalation share never rises by more than .02 (Monte-Carlo slack) from
        one budget of ``curve`` to the next.
    budgets_missing_intervals : tuple of int
        Budgets of ``curve`` at which at least 1 % of some estimator's pilots gave no
        interval (there its coverage over all pilots falls below the coverage shown).
    elapsed_s : float
    panel_a : DataFrame
        What a reader compares: ``estimator, source, budget, RMSE, 95 % width, coverage,
        width saved``, measured rows and seed 003's (``TABLE5_A``; NaN where the seed gives
        no number).
    panel_a_full : DataFrame
        Every summary column (the download).
    curve : DataFrame
        :func:`~core.calibration.pilot.budget_curve` (for the figure and its download).
    seed_budget : int
        The seed's budget (usable labels); ``seed_width_reduction`` and
        ``seed_p_correct_min`` its width saved and smallest P(right direction).
    """

    budget: int
    reps: int
    design: str
    budget_kind: str
    level: float
    human: EstimatorMetrics
    tri: EstimatorMetrics
    coverage_text: str
    delta_y: float
    delta_z: float
    native_better: bool
    reference_agrees: bool
    winner_y: str
    winner_z: str
    beta: tuple[float, ...]
    beta_text: str
    beta_origin: str
    beta_source: str
    mean_usable: float
    mean_clusters: float
    min_clusters: int
    narrower_at_every_budget: bool
    budgets_without_interval: tuple[int, ...]
    budgets_missing_intervals: tuple[int, ...]
    escalations_fall: bool
    elapsed_s: float
    panel_a: pd.DataFrame
    panel_a_full: pd.DataFrame
    curve: pd.DataFrame
    seed_budget: int
    seed_width_reduction: float
    seed_p_correct_min: float


def budget_view(sim: PilotSimulation, curve: pd.DataFrame) -> BudgetView:
    """:class:`BudgetView` of :func:`~core.calibration.pilot.simulate_pilots` and its curve.

    Raises
    ------
    ValueError
        When the curve is empty or lacks an estimator.
    """
    if curve.empty:
        raise ValueError("the budget curve has no rows")
    if not {"human_only", "trisource"} <= set(curve["estimator"]):
        raise ValueError("the budget curve needs human_only and trisource rows")
    # NaN widths stay (``pivot_table`` would drop an all-NaN estimator): with a perfect
    # reference (no omissions, no false matches) human-only has no interval at any budget
    widths = curve.pivot(index="budget", columns="estimator", values="mean_width")
    both = widths[["human_only", "trisource"]].dropna()
    summ = sim.summary()
    human, tri = _split(summ)
    here = f"measured, {sim.reps:,} pilots ({sim.budget_kind})"
    seed = f"answer-key paper, {TABLE5_A['reps']:,} pilots (usable)"
    nan = float("nan")
    (h_rmse, t_rmse), (h_w, t_w) = TABLE5_A["rmse"], TABLE5_A["mean_width"]
    rows = [(ESTIMATOR_LABELS["human_only"], here, sim.budget, human.rmse, human.mean_width,
             human.coverage, nan),
            (ESTIMATOR_LABELS["human_only"], seed, TABLE5_A["budget"], h_rmse, h_w, nan, nan),
            (ESTIMATOR_LABELS["trisource"], here, sim.budget, tri.rmse, tri.mean_width,
             tri.coverage, tri.width_reduction),
            (ESTIMATOR_LABELS["trisource"], seed, TABLE5_A["budget"], t_rmse, t_w,
             TABLE5_A["coverage"], TABLE5_A["width_reduction"])]
    panel_a = pd.DataFrame(rows, columns=["estimator", "source", "budget", "RMSE", "95 % width",
                                          "coverage", "width saved"])
    full = summ.assign(estimator=summ["estimator"].map(ESTIMATOR_LABELS))
    return BudgetView(
        budget=int(sim.budget), reps=int(sim.reps), design=sim.design,
        budget_kind=sim.budget_kind, level=float(sim.level), human=human, tri=tri,
        coverage_text=coverage_words(human, tri), delta_y=float(sim.delta_y),
        delta_z=float(sim.delta_z),
        native_better=bool(sim.delta_y > 0),
        reference_agrees=_sign(sim.delta_z) == _sign(sim.delta_y),
        winner_y=_winner(sim.delta_y, _NAMES), winner_z=_winner(sim.delta_z, _NAMES),
        beta=tuple(float(b) for b in sim.beta), beta_text=", ".join(f"{b:.2f}" for b in sim.beta),
        beta_origin=sim.beta_origin, beta_source=beta_words(sim.beta_origin),
        mean_usable=float(sim.n_usable.mean()),
        mean_clusters=float(sim.n_clusters.mean()), min_clusters=int(sim.min_clusters),
        narrower_at_every_budget=bool(len(both) == len(widths)
                                      and (both["trisource"] <= both["human_only"]).all()),
        budgets_without_interval=tuple(int(b) for b in widths.index[
            widths[["human_only", "trisource"]].isna().any(axis=1)]),
        budgets_missing_intervals=tuple(sorted({int(b) for b in curve.loc[
            curve["no_interval"] >= 0.01, "budget"]})),
        escalations_fall=bool((curve[curve["estimator"] == "trisource"].sort_values("budget")[
            "escalation"].diff().dropna() <= 0.02).all()),
        elapsed_s=float(sim.elapsed_s),
        panel_a=panel_a, panel_a_full=full, curve=curve, seed_budget=int(TABLE5_A["budget"]),
        seed_width_reduction=float(TABLE5_A["width_reduction"]),
        seed_p_correct_min=float(TABLE5_A["p_correct_direction_min"]))


# ---------------------------------------------------------------- panel B
@dataclass(frozen=True, eq=False)
class HeldoutView:
    """Table 5 panel B: the held-out truth-Brier of each confidence map (lower is better).

    ``values`` maps each map's key to its mean over the pilots (for
    :func:`core.figures.calibration.heldout_figure`); ``table`` is ``map, measured, seed
    003``. ``platt_on_reference_hurts`` is True when Platt scaling on the reference labels
    scores worse under the truth than the raw reference-selected rule; ``repair_excess`` the
    TriSource repair's Brier minus that of the map fitted on all training truth labels;
    ``repair_beats_pilot_only`` whether the repair beats Platt on the pilot alone (on
    average); ``fallback_share`` the share of pilots whose repair used a fallback;
    ``worse_than_raw`` and ``worse_than_pilot_only`` the shares of pilots in which the repair
    scored worse than the unrepaired rule and than pilot-only Platt; ``text`` the caption,
    every claim in it from these numbers (issue 18.1: the caption said the repair "comes
    within .0061 of" the best map while it was worse than no repair in 89 % of pilots).
    """

    budget: int
    budget_kind: str
    values: Mapping[str, float]
    table: pd.DataFrame
    platt_on_reference_hurts: bool
    repair_excess: float
    repair_beats_pilot_only: bool
    fallback_share: float
    worse_than_raw: float
    worse_than_pilot_only: float
    text: str


def heldout_view(sim: PilotSimulation) -> HeldoutView:
    """:class:`HeldoutView` of a simulation run with ``heldout=True`` (else ``ValueError``)."""
    summ = sim.heldout_summary()
    if summ is None:
        raise ValueError("this simulation has no held-out repair (run it with heldout=True)")
    held = summ.iloc[0].to_dict()
    table = pd.DataFrame({"map": [name for _, name in _HELDOUT_NAMES],
                          "measured": [float(held[k]) for k, _ in _HELDOUT_NAMES],
                          "paper": [float(TABLE5_B[k]) for k, _ in _HELDOUT_NAMES]})
    values = MappingProxyType({k: float(held[k]) for k, _ in _HELDOUT_NAMES})
    per = sim.heldout
    tri = np.asarray(per["trisource"], float)
    worse_raw = float(np.mean(tri > np.asarray(per["restored_raw"], float)))
    worse_pilot = float(np.mean(tri > np.asarray(per["pilot_only"], float)))
    hurts = bool(values["ref_zplatt"] > values["ref_raw"])
    fallback = float(held.get("repair_fallback", 0.0))
    text = (
        "Each map is fitted on one half of the scenarios and scored against the truth on the "
        "other. Platt scaling on the reference labels alone "
        + ("pulls the confidences to the reference's share of true answers and scores worse "
           "than doing nothing" if hurts else "does not score worse than doing nothing here")
        + f". The TriSource repair logistic(α + γ·logit c) averages {values['trisource']:.4f} "
          f"against {values['full_y']:.4f} for a map fitted on every training truth label, but "
          f"pilot by pilot it scores worse than the unrepaired rule in {worse_raw:.0%} of the "
          f"pilots and worse than pilot-only Platt in {worse_pilot:.0%}"
        + (f" ({fallback:.0%} of its fits fell back)" if fallback > 0 else "")
        + ". So Algorithm 1 does not deploy it blindly: the walk below chooses among the "
          "unrepaired rule, pilot-only Platt and the repair on labels none of them was fitted "
          "on, and judges the chosen map on the other half of the pilot.")
    return HeldoutView(
        budget=int(sim.budget), budget_kind=sim.budget_kind, values=values, table=table,
        platt_on_reference_hurts=hurts,
        repair_excess=values["trisource"] - values["full_y"],
        repair_beats_pilot_only=bool(values["trisource"] < values["pilot_only"]),
        fallback_share=fallback, worse_than_raw=worse_raw, worse_than_pilot_only=worse_pilot,
        text=text)


# ---------------------------------------------------------------- judges
@dataclass(frozen=True, eq=False)
class JudgeView:
    """Uninformative and biased judges at one budget (seed 003 §3: β fixed before the pilot).

    Attributes
    ----------
    quality, bias : the scenario's judge quality and the bias set on the page.
    fair, lean, blind : Series
        The rows of :func:`~core.calibration.pilot.judge_sensitivity` at (quality, 0),
        (quality, bias) and (0, 0).
    tolerance : float
        Two Monte-Carlo standard errors of a coverage at ``level`` over ``reps`` pilots.
    covers_less : bool
        The biased judges' TriSource coverage is below ``level − tolerance``.
    blind_narrower : bool
        With judges of quality 0 TriSource is still at least as narrow as human-only.
    blind_beta_source : str
        Where β of the quality-0 judges came from, in words (:func:`beta_words`).
    coverage_note : str
        "" when every biased-judge TriSource pilot gave an interval, else a clause naming the
        share that did and the coverage over all pilots.
    table : DataFrame
        ``quality, bias, β, human-only coverage, TriSource coverage, width saved``.
    full : DataFrame
        Every column (the download).
    """

    quality: float
    bias: float
    reps: int
    level: float
    fair: pd.Series
    lean: pd.Series
    blind: pd.Series
    tolerance: float
    covers_less: bool
    blind_narrower: bool
    blind_beta_source: str
    coverage_note: str
    table: pd.DataFrame
    full: pd.DataFrame


def _judge_coverage_note(row: pd.Series) -> str:
    missing = float(row.get("trisource_no_interval", 0.0))
    if not missing > 0:
        return ""
    return (f" (over the {1 - missing:.1%} of pilots that gave an interval; over all pilots "
            f"{float(row['trisource_coverage_all']):.3f})")


def judge_view(table: pd.DataFrame, *, quality: float, bias: float, reps: int,
               level: float = 0.95) -> JudgeView:
    """:class:`JudgeView` of a judge-sensitivity table with quality {0, q} × bias {0, b}.

    Raises
    ------
    ValueError
        When ``reps < 1``, ``level`` is outside (0, 1), or the table lacks one of the three
        cells (quality, 0), (quality, bias), (0, 0).
    """
    if int(reps) < 1 or not 0.0 < float(level) < 1.0:
        raise ValueError(f"need reps >= 1 and 0 < level < 1, got reps={reps!r}, "
                         f"level={level!r}")
    at = table.set_index(["judge_quality", "judge_bias"])
    cells = [(float(quality), 0.0), (float(quality), float(bias)), (0.0, 0.0)]
    missing = [c for c in cells if c not in at.index]
    if missing:
        raise ValueError(f"the judge table has no (quality, bias) cells {missing}")
    fair, lean, blind = (at.loc[c] for c in cells)
    tol = 2.0 * math.sqrt(level * (1.0 - level) / int(reps))
    shown = table.rename(columns={
        "judge_quality": "quality", "judge_bias": "bias", "beta": "β",
        "human_only_coverage": "human-only coverage", "trisource_coverage": "TriSource coverage",
        "width_reduction": "width saved"})[["quality", "bias", "β", "human-only coverage",
                                            "TriSource coverage", "width saved"]]
    return JudgeView(quality=float(quality), bias=float(bias), reps=int(reps),
                     level=float(level), fair=fair, lean=lean, blind=blind, tolerance=tol,
                     covers_less=bool(lean["trisource_coverage"] < level - tol),
                     blind_narrower=bool(blind["width_reduction"] >= 0),
                     blind_beta_source=beta_words(str(blind["beta_origin"])),
                     coverage_note=_judge_coverage_note(lean), table=shown,
                     full=table)


# ---------------------------------------------------------------- the walk
def _named(text: str, names: tuple[str, str]) -> str:
    return text.replace("rule A", names[0]).replace("rule B", names[1])


def _interval(lo, hi) -> list[str]:
    """Intervals as text; "none" where the variance was not estimable (no "nan" on a page)."""
    return [f"[{a:+.3f}, {b:+.3f}]" if np.isfinite(a) and np.isfinite(b) else "none"
            for a, b in zip(lo, hi, strict=True)]


def _deployed_words(gate: DeploymentGate | None, names: tuple[str, str]) -> str:
    if gate is None or gate.deployed is None:
        return ""
    ch = gate.deployed
    m = ch.map
    rule = names[0] if gate.rule == "A" else names[1]
    fit = "" if m.reason in ("fitted", "nothing fitted") else f" ({m.reason})"
    return (f"Deployed: {rule} through the {ch.label}, p = logistic({m.alpha:+.2f} + "
            f"{m.gamma:.2f}·logit c){fit}, chosen and fitted on {gate.n_fit} labels of the "
            f"pilot and judged by the gate on the other {gate.n_judge}. {ch.reason}")


@dataclass(frozen=True, eq=False)
class WalkView:
    """One simulated pilot walked through Algorithm 1, look by look (seed 003 §3).

    Attributes
    ----------
    seed, design : the pilot's seed and the design walked (``substituted``: PPS was asked
        for, which has no nested looks, so this is the stratified design).
    looks, look_level : cumulative attempted budgets; the level of each look's interval
        (the 5 % error split evenly over the looks).
    walk : Algorithm1Walk
    steps : DataFrame
        :meth:`~core.calibration.pilot_walk.Algorithm1Walk.to_frame` (for the figure).
    table : DataFrame
        What a reader compares: ``step, budget, n_usable, n_clusters, interval, human_only,
        decision, escalate, reason`` (intervals as text; a decision is the rule it selects,
        "—" for none).
    download : DataFrame
        Every column, ``new`` (items newly sampled) instead of their ids.
    stopped : Algorithm1Step or None
        The look that terminated (None: the interval never closed).
    winner : str or None
        The rule selected (``names``), None when the walk did not terminate.
    gate : DeploymentGate or None
    gate_text : str
        The gate's message with "rule A" / "rule B" replaced by the rules' names ("" without
        a gate).
    deployed_text : str
        Which map is deployed, fitted on which labels, judged on which, and why ("" when the
        walk did not stop or the fit half was too small to choose).
    choice_table : DataFrame or None
        :meth:`~core.calibration.deploy.MapChoice.table` of the deployed map's choice.
    delta_y : float
    names : (A, B)
    """

    seed: int
    design: str
    substituted: bool
    looks: tuple[int, ...]
    look_level: float
    walk: Algorithm1Walk
    steps: pd.DataFrame
    table: pd.DataFrame
    download: pd.DataFrame
    stopped: Algorithm1Step | None
    winner: str | None
    gate: DeploymentGate | None
    gate_text: str
    deployed_text: str
    choice_table: pd.DataFrame | None
    delta_y: float
    names: tuple[str, str]


def walk_view(walk: Algorithm1Walk, *, seed: int, requested_design: str,
              looks=WALK_LOOKS, names: tuple[str, str] = _NAMES) -> WalkView:
    """:class:`WalkView` of :func:`~core.calibration.pilot_walk.walk_algorithm1` (``ValueError``
    for a walk without steps or an unknown design)."""
    if not walk.steps:
        raise ValueError("the walk has no steps")
    design = walk_design(requested_design)
    steps = walk.to_frame()
    full = steps.assign(new=[len(v) for v in steps["new_items"]],
                        interval=_interval(steps["lo"], steps["hi"]),
                        human_only=_interval(steps["lo_human"], steps["hi_human"]))
    said = {"select A": names[0], "select B": names[1], "none": "—"}
    table = full[["step", "budget", "n_usable", "n_clusters", "interval", "human_only",
                  "decision", "escalate", "reason"]].reset_index(drop=True)
    table["decision"] = [said.get(d, d) for d in table["decision"]]
    done = walk.terminated and walk.selected is not None
    return WalkView(
        seed=int(seed), design=design, substituted=design != requested_design,
        looks=tuple(int(b) for b in looks), look_level=float(walk.look_level), walk=walk,
        steps=steps, table=table, download=full.drop(columns=["new_items"]),
        stopped=walk.steps[-1] if done else None,
        winner=(names[0] if walk.selected == "A" else names[1]) if done else None,
        gate=walk.gate, gate_text=_named(walk.gate.message, names) if walk.gate else "",
        deployed_text=_deployed_words(walk.gate, names),
        choice_table=walk.gate.deployed.table() if walk.gate and walk.gate.deployed else None,
        delta_y=float(walk.delta_y), names=(str(names[0]), str(names[1])))


def sampled_items(walk: Algorithm1Walk, frame: pd.DataFrame,
                  *, high_threshold: float = _HIGH) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The items each look sampled with their frozen stratum: ``(shown, download)``.

    ``shown`` has ``look, item_id, stratum, native, eg, z, y``; ``download`` also the
    scenario, store, provenance and the judges ``q_1, q_2``. The stratum is matched or not
    by the reference × native confidence ≥ ``high_threshold`` (the design's, .8).
    ``ValueError`` when a sampled item is not in ``frame``.
    """
    rows = [(s.step, item) for s in walk.steps for item in s.new_items]
    looks = pd.DataFrame(rows, columns=["look", "item_id"])
    out = looks.merge(frame, on="item_id", how="left", validate="many_to_one")
    if out["z"].isna().any():
        raise ValueError("some sampled items are not in the scenario frame")
    out["stratum"] = np.where(out["z"] == 0, "unmatched", "matched") + np.where(
        out["native"] >= high_threshold, ", high confidence", ", lower confidence")
    cols = ["look", "item_id", "stratum", "native", "eg", "z", "y"]
    extra = [c for c in ("scenario", "store", "provenance", "q_1", "q_2") if c in out.columns]
    return out[cols].reset_index(drop=True), out[cols + extra].reset_index(drop=True)


# ---------------------------------------------------------------- NQ-open
@dataclass(frozen=True, eq=False)
class RealPilotView:
    """Real pilots on the NQ-open answers at one budget, and over all budgets.

    ``delta_y`` / ``delta_z``: R(B) − R(A) over every answer under the held-back human labels
    and under exact match; ``a_better`` is ``Δ_Y > 0``; ``winner`` the rule the humans
    select ("neither" at a tie); ``exact_match_agrees`` whether exact match gives the same
    sign; ``coverage_text`` :func:`coverage_words` of the two estimators. ``curve`` has the
    summary rows of every budget (figure and download).
    """

    rule_a: str
    rule_b: str
    budget: int
    reps: int
    n_answers: int
    human: EstimatorMetrics
    tri: EstimatorMetrics
    coverage_text: str
    delta_y: float
    delta_z: float
    a_better: bool
    winner: str
    exact_match_agrees: bool
    beta_origin: str
    curve: pd.DataFrame


def real_pilot_view(frames, *, budget: int, rule_a: str, rule_b: str,
                    n_answers: int) -> RealPilotView:
    """:class:`RealPilotView` of :func:`~core.calibration.nq301_pilot.real_pilot_budgets`
    summaries (one frame per budget, with a ``beta_origin`` column).

    ``ValueError`` when no frame has rows at ``budget``.
    """
    real = pd.concat(list(frames), ignore_index=True)
    at = real[real["budget"] == int(budget)]
    if at.empty:
        raise ValueError(f"no real pilots at budget {budget}")
    human, tri = _split(at)
    row = at.iloc[0]
    dy, dz = float(row["delta_y"]), float(row["delta_z"])
    return RealPilotView(
        rule_a=str(rule_a), rule_b=str(rule_b), budget=int(budget), reps=int(row["reps"]),
        n_answers=int(n_answers), human=human, tri=tri,
        coverage_text=coverage_words(human, tri), delta_y=dy, delta_z=dz,
        a_better=bool(dy > 0), winner=_winner(dy, (str(rule_a), str(rule_b))),
        exact_match_agrees=_sign(dy) == _sign(dz),
        beta_origin=beta_words(str(row["beta_origin"])), curve=real.drop(columns=["beta_origin"]))
