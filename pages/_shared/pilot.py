"""Streamlit glue of the Pilot budget page: its result objects, shared across sessions.

Each function returns one :mod:`core.calibration.pilot_view` object for small keys (the
scenario's four knobs, a budget, repetitions, a design, the store's path and stamp, two rule
names). The simulations themselves are the bounded, worker-pool-backed caches of
:mod:`pages._shared.seed003` (:func:`~pages._shared.seed003.pilot_results`,
:func:`~pages._shared.seed003.run_walk`, :func:`~pages._shared.seed003.run_judge_check`,
:func:`~pages._shared.seed003.run_real_pilot`); the views built from them are kept in
:func:`pages._shared.cache.cached_result` under the same keys, read by every session and
changed by none.
"""

from __future__ import annotations

from core.calibration.pilot_view import (
    CURVE_BUDGETS,
    REAL_BUDGETS,
    WALK_LOOKS,
    BudgetView,
    HeldoutView,
    JudgeView,
    RealPilotView,
    WalkView,
    budget_view,
    budgets_with,
    heldout_view,
    judge_view,
    real_pilot_view,
    sampled_items,
    walk_design,
    walk_view,
)

from .cache import cached_result
from .seed003 import (
    load_nq_rules,
    load_scenario,
    pilot_results,
    run_judge_check,
    run_real_pilot,
    run_walk,
)

__all__ = ["budget_views", "judges_of", "real_pilots_of", "sampled_of", "walk_of"]


def budget_views(knobs: tuple[float, ...], budget: int, reps: int, design: str, kind: str,
                 walk_seed: int) -> tuple[BudgetView, HeldoutView]:
    """The pilots at ``budget`` (panel A, the curve) and their held-out repair (panel B).

    The walk of ``walk_seed`` is simulated in the same batch, so a first visit runs the three
    simulations side by side.
    """
    k = tuple(float(v) for v in knobs)
    ahead = (int(walk_seed), WALK_LOOKS, walk_design(design))
    sim, curve = pilot_results(*k, int(budget), int(reps), design, kind, CURVE_BUDGETS,
                               walk=ahead)
    key = (*k, int(budget), int(reps), design, kind)
    return (cached_result("pb_budget_view", key, lambda: budget_view(sim, curve)),
            cached_result("pb_heldout_view", key, lambda: heldout_view(sim)))


def walk_of(knobs: tuple[float, ...], walk_seed: int, design: str) -> WalkView:
    """One pilot through Algorithm 1 (PPS walks the stratified design)."""
    k = tuple(float(v) for v in knobs)
    used = walk_design(design)
    walk = run_walk(*k, int(walk_seed), WALK_LOOKS, used)
    return cached_result("pb_walk_view", (*k, int(walk_seed), design), lambda: walk_view(
        walk, seed=int(walk_seed), requested_design=design))


def sampled_of(knobs: tuple[float, ...], walk_seed: int, design: str):
    """``(shown, download)`` of the items the walk sampled (:func:`sampled_items`)."""
    k = tuple(float(v) for v in knobs)
    view = walk_of(k, walk_seed, design)
    return cached_result("pb_sampled", (*k, int(walk_seed), view.design),
                         lambda: sampled_items(view.walk, load_scenario(*k)))


def judges_of(knobs: tuple[float, ...], bias: float, budget: int, reps: int, design: str,
              kind: str) -> JudgeView:
    """Judges of quality 0 and the scenario's, unbiased and biased by ``bias`` logits."""
    k = tuple(float(v) for v in knobs)
    table = run_judge_check(*k, float(bias), int(budget), int(reps), design, kind)
    return cached_result("pb_judge_view", (*k, float(bias), int(budget), int(reps), design, kind),
                         lambda: judge_view(table, quality=k[3], bias=float(bias),
                                            reps=int(reps)))


def real_pilots_of(path: str, stamp: int, budget: int, reps: int, rule_a: str, rule_b: str,
                   design: str) -> RealPilotView:
    """Real pilots on the NQ-open answers at the standard budgets and ``budget``.

    One cache entry per budget (:func:`~pages._shared.seed003.run_real_pilot`), so a new
    budget computes that budget only. Raises ``StoreError`` without the NQ-open tables.
    """
    frames = [run_real_pilot(path, stamp, b, int(reps), rule_a, rule_b, design)
              for b in budgets_with(REAL_BUDGETS, budget)]
    n = len(load_nq_rules(path, stamp))
    return cached_result("pb_real_view", (path, stamp, int(budget), int(reps), rule_a, rule_b,
                                          design),
                         lambda: real_pilot_view(frames, budget=int(budget), rule_a=rule_a,
                                                 rule_b=rule_b, n_answers=n))
