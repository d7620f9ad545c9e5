"""The human-pilot stop's computation: how many people's labels a pilot needs before it calls
the people's order of the incomplete-reference stop's two rules, on the real NQ-open answers.

Pilots: :func:`core.calibration.nq301_pilot.real_pilot_budgets` (seed 003 §5.5 on the §5.1
release), the function the Pilot budget page's NQ-open section calls: every pilot samples
answers under the stratified design (exact-match verdict × high confidence, unmatched
confident answers first; Algorithm 1 step 1), reveals only their people's labels, and
estimates the gap of the two rules over all answers with the human-only estimator and with
TriSource-Restore (Eq. 3: exact match and three frozen automatic judges as control variates,
their weights cross-fitted on the other half of the questions); errors are measured against
the people's labels held back. Budget ``b`` uses the random seed ``b`` (seed 0 + budget), so
each point equals the page's at that budget with 200 repetitions.

A pilot **makes the right call** when Algorithm 1 would stop on it with the people's order:
its 95 % interval excludes zero on the side of the full-frame people's gap and it sampled at
least eight questions (§6 Algorithm 1 steps 3 and 5). Every pilot either escalates, stops
right or stops wrong (a false termination), so the share is ``1 − escalation − false
termination`` of the page's summary.

Selection rule (:func:`settling_budget`): for each estimator, the smallest budget of
:data:`BUDGETS` from which on (that budget and every larger one) at least :data:`SETTLE` of
the pilots make the right call; None when none does.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.calibration.nq301_pilot import real_pilot_budgets
from core.calibration.paper import TABLE5_A

from ._labels_reference import nq_selected, rule_words
from ._labels_text import pct
from .model import Chart, StopView, TourData

__all__ = ["BUDGETS", "DESIGN", "ESTIMATORS", "KEY", "MIN_CLUSTERS", "REPS", "SEED", "SETTLE",
           "PilotCurve", "human_pilot_view", "pilot_curve", "settling_budget"]

#: The stop's key.
KEY = "human-pilot"
#: Budgets (usable people's labels), all on the Pilot budget page's slider grid (10–200, 5).
BUDGETS: tuple[int, ...] = (10, 15, 20, 25, 35, 50, 75, 100, 150, 200)
#: Pilots per budget: the page's smaller choice of repetitions (``pb_reps``).
REPS = 200
#: The sampling design (the page's default) and the base random seed (the page's).
DESIGN, SEED = "stratified", 0
#: "Settles it": at least this share of the pilots make the right call.
SETTLE = 0.9
#: Algorithm 1 step 5: escalate below this many sampled questions (the function's default).
MIN_CLUSTERS = int(inspect.signature(real_pilot_budgets).parameters["min_clusters"].default)
#: Estimator key → its name in the chart.
ESTIMATORS: Mapping[str, str] = MappingProxyType({
    "human_only": "people's labels only",
    "trisource": "people's labels with the judges' help (TriSource-Restore)"})


@dataclass(frozen=True, eq=False)
class PilotCurve:
    """Real pilots of two rules per budget, and where they settle the order.

    Attributes
    ----------
    rule_a, rule_b : str
    curve : DataFrame
        One row per (budget, estimator): ``budget, estimator, right`` (share of pilots that
        make the right call), ``wrong`` (false terminations), ``escalation``,
        ``p_correct_direction`` (the estimate has the people's sign), ``reps``.
    delta_y, delta_z : float
        ``R(B) − R(A)`` over every answer under the people's labels and under exact match
        (above 0: A is better).
    needed : mapping
        Estimator → :func:`settling_budget` (None: not within :data:`BUDGETS`).
    beta_origin : str
        How the judges' weights were fixed.
    """

    rule_a: str
    rule_b: str
    curve: pd.DataFrame
    delta_y: float
    delta_z: float
    needed: Mapping[str, int | None]
    beta_origin: str

    @property
    def reverses(self) -> bool:
        """Exact match and people order the two rules oppositely on every answer."""
        return bool(np.sign(self.delta_y) * np.sign(self.delta_z) < 0)

    def at(self, budget: int, estimator: str) -> pd.Series:
        """The curve's row at ``budget`` for ``estimator``."""
        c = self.curve
        row = c[(c["budget"] == int(budget)) & (c["estimator"] == estimator)]
        if row.empty:
            raise ValueError(f"no pilots at budget {budget} for {estimator!r}")
        return row.iloc[0]


def settling_budget(budgets: Sequence[int], right: Sequence[float], *,
                    share: float = SETTLE) -> int | None:
    """The smallest budget from which on every share of right calls is at least ``share``.

    >>> settling_budget([10, 20, 50], [0.95, 0.85, 0.92])
    50
    >>> settling_budget([10, 20], [0.5, 0.6]) is None
    True
    """
    b = np.asarray(budgets, np.int64)
    r = np.asarray(right, float)
    if b.shape != r.shape or b.size == 0:
        raise ValueError("give one share of right calls per budget")
    order = np.argsort(b, kind="stable")
    b, r = b[order], r[order]
    ok_from_here = np.flip(np.logical_and.accumulate(np.flip(r >= share)))
    hit = np.flatnonzero(ok_from_here)
    return int(b[hit[0]]) if hit.size else None


def pilot_curve(answers: pd.DataFrame, rule_a: str, rule_b: str, *,
                budgets: Sequence[int] = BUDGETS, reps: int = REPS) -> PilotCurve:
    """:class:`PilotCurve` of ``rule_a`` against ``rule_b`` (module docstring)."""
    res = real_pilot_budgets(answers, budgets=tuple(int(b) for b in budgets), reps=int(reps),
                             seed=SEED, rule_a=rule_a, rule_b=rule_b, design=DESIGN)
    s = res.summary
    curve = pd.DataFrame({
        "budget": s["budget"].astype(int).to_numpy(), "estimator": s["estimator"].to_numpy(),
        "right": 1.0 - s["escalation"].to_numpy(float) - s["false_termination"].to_numpy(float),
        "wrong": s["false_termination"].to_numpy(float),
        "escalation": s["escalation"].to_numpy(float),
        "p_correct_direction": s["p_correct_direction"].to_numpy(float),
        "reps": s["reps"].astype(int).to_numpy()})
    needed = {}
    for est in ESTIMATORS:
        part = curve[curve["estimator"] == est]
        needed[est] = settling_budget(part["budget"], part["right"])
    # real_pilot_budgets reports d = S(B) − S(A), i.e. R(B) − R(A) for the Brier score
    return PilotCurve(rule_a=str(rule_a), rule_b=str(rule_b), curve=curve,
                      delta_y=float(res.delta_y), delta_z=float(res.delta_z),
                      needed=MappingProxyType(needed),
                      beta_origin=res.beta_origin)


# ----------------------------------------------------------------------------- the view
def _settings(n_answers: int | None = None) -> tuple[tuple[str, str], ...]:
    on = f"{n_answers:,} NQ-open answers" if n_answers else "the NQ-open answers"
    return (
        ("Data", f"{on}; a pilot sees only the people's labels of the answers it samples, "
                 "the rest are held back to check it"),
        ("Design", "stratified: answers grouped by the exact-match verdict and by high "
                   "confidence, unmatched confident answers first"),
        ("Budgets", f"{', '.join(map(str, BUDGETS))} usable people's labels"),
        ("Pilots per budget", f"{REPS} (random seed {SEED} + budget)"),
        ("The judges' help", "exact match and three automatic judges (BEM, GPT-4, "
                             "InstructGPT) narrow the interval; their weights are learned on "
                             "the other half of the questions"),
        ("A right call", "the pilot stops with its 95 % interval clear of zero on the "
                         "people's side, after sampling at least "
                         f"{MIN_CLUSTERS} questions"),
    )


def _weights_words(origin: str) -> str:
    """How the judges' weights were fixed, with the symbol β in words."""
    return origin.replace("β = 0", "no weight").replace("β", "weights")


def _budget_text(b: int | None) -> str:
    return f"{b} labels" if b is not None else f"more than {max(BUDGETS)} labels"


def human_pilot_view(data: TourData) -> StopView:
    """The human-pilot stop's view (module docstring: pilots, right call, rule)."""
    got = nq_selected(data)
    if got is None or got[1] is None:
        why = ("The NQ-open files (data/nq301/) are missing, so there are no real answers to "
               "draw pilots from." if got is None else
               "The previous stop found no pair of rules that exact match and people order "
               "oppositely, so there is nothing for a pilot to settle.")
        return StopView(KEY, (), _settings(), None, "", "", (), (), False, note=why)
    answers, pair = got
    pc = data.memo("labels:nq-pilots", lambda: pilot_curve(answers, pair.rule_a,
                                                           pair.rule_b))
    return _view(pc, len(answers))


def _view(pc: PilotCurve, n_answers: int) -> StopView:
    h, t = pc.needed["human_only"], pc.needed["trisource"]
    # the link opens the page where the helped pilots settle it (else the seed's budget)
    link_budget = t if t is not None else h if h is not None else int(TABLE5_A["budget"])
    link = (("pb_nq_a", pc.rule_a), ("pb_nq_b", pc.rule_b), ("pb_reps", str(REPS)),
            ("pb_design", DESIGN), ("pb_budget", str(link_budget)))
    people = "cautious" if pc.delta_y > 0 else "bolder"  # R(B) − R(A) > 0: A is better
    exact = "cautious" if pc.delta_z > 0 else "bolder"
    shows = pc.reverses and h is not None
    if not shows:
        return StopView(KEY, (), _settings(n_answers), None, "", "", link, (), False,
                        note="Exact match and people do not order the two rules oppositely, "
                             f"or no pilot budget up to {max(BUDGETS)} labels settles it in "
                             f"{pct(SETTLE, 0)} of pilots.")
    c = pc.curve
    rows = c.assign(
        x=c["budget"], y=c["right"], series=c["estimator"].map(ESTIMATORS),
        marker=[(b == pc.needed[e]) for b, e in zip(c["budget"], c["estimator"], strict=True)],
        text=[f"{b} labels: {pct(r)} of {n} pilots call the people's order, {pct(w)} the "
              "wrong one" for b, r, w, n in zip(c["budget"], c["right"], c["wrong"], c["reps"],
                                                strict=True)])
    chart = Chart(
        "lines", rows[["x", "y", "series", "marker", "text"]].reset_index(drop=True),
        title="How often a pilot calls the people's order, by the number of labels",
        x_title="people's labels in the pilot", y_title="share of pilots that call it right",
        caption=f"{REPS} pilots per budget. Large marks: from there on at least "
                f"{pct(SETTLE, 0)} of the pilots call the people's order.",
        marker=float(link_budget), marker_label=f"{link_budget} labels", y_range=(0.0, 1.05))
    worst = c.loc[c["wrong"].idxmax()]
    d50 = {e: pc.at(TABLE5_A["budget"], e)["p_correct_direction"] for e in ESTIMATORS
           } if TABLE5_A["budget"] in BUDGETS else None
    example = (
        ("The two rules", f"the cautious rule ({rule_words(pc.rule_a)}) and the bolder rule "
                          f"({rule_words(pc.rule_b)}), as in the previous stop"),
        ("Exact match on every answer says", f"the {exact} rule is better"),
        ("People on every answer say", f"the {people} rule is better, by "
                                       f"{abs(pc.delta_y):.3f} in Brier score"),
    )
    evidence = (
        ("Needed with people's labels only", _budget_text(h)),
        ("Needed with the judges' help", _budget_text(t)),
        *((f"Right calls at {b} labels", f"{pct(pc.at(b, 'human_only')['right'])} with "
           f"people's labels only, {pct(pc.at(b, 'trisource')['right'])} with the judges' help")
          for b in sorted({x for x in (h, t) if x is not None})),
        ("Wrong calls, at worst", f"{pct(worst['wrong'])} of pilots "
                                  f"({ESTIMATORS[worst['estimator']]}, {worst['budget']} "
                                  "labels)"),
        *(((f"Estimate on the people's side at {TABLE5_A['budget']} labels",
            f"{pct(d50['human_only'])} with people's labels only, {pct(d50['trisource'])} "
            "with the judges' help (the answer-key paper §5.5 reports at "
            f"least {pct(TABLE5_A['p_correct_direction_min'])} at {TABLE5_A['budget']} "
            "attempted labels on its own data)"),) if d50 else ()),
        ("The judges' weights", _weights_words(pc.beta_origin)),
    )
    answer = (f"With people's labels only, a pilot needs {_budget_text(h)} before "
              f"{pct(SETTLE, 0)} of pilots call the people's order (the {people} rule); with "
              f"the judges' help (TriSource-Restore), {_budget_text(t)}.")
    reason = (f"Each line is the share of {REPS} pilots per budget that stop with their 95 % "
              "interval clear of zero on the people's side; the rest ask for more labels. "
              "Exact match alone, on all the answers, calls the other order; a pilot's people's "
              "labels set the target, and exact match and the judges only narrow the interval, "
              "so the helped line climbs sooner. Wrong calls stay rare: at worst "
              f"{pct(worst['wrong'])} of the pilots ({ESTIMATORS[worst['estimator']]}, "
              f"{worst['budget']} labels).")
    return StopView(KEY, example, _settings(n_answers), chart, answer, reason, link, evidence,
                    shows)
