"""The Pilot budget page's result objects (:mod:`core.calibration.pilot_view`).

Cross-checked against :mod:`core.calibration.pilot` on the default scenario (small numbers of
repetitions), closed forms on hand-built tables, the invariants of the module docstring and
its ``ValueError`` s.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.calibration.paper import TABLE5_A, TABLE5_B
from core.calibration.pilot import budget_curve, judge_sensitivity, simulate_pilots
from core.calibration.pilot_view import (
    ESTIMATOR_LABELS,
    WALK_LOOKS,
    EstimatorMetrics,
    beta_words,
    budget_view,
    budgets_with,
    coverage_words,
    heldout_view,
    judge_view,
    real_pilot_view,
    sampled_items,
    walk_design,
    walk_view,
)
from core.calibration.pilot_walk import Algorithm1Walk
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario, transfer_config
from core.calibration.scenario_runs import curve_for, pilots_for, scenario_frames, walk_for

BUDGETS = (20, 50, 80)


@pytest.fixture(scope="module")
def sim():
    return pilots_for(DEFAULT_SCENARIO, budget=50, reps=200, heldout=True)


@pytest.fixture(scope="module")
def curve():
    return curve_for(DEFAULT_SCENARIO, budgets=BUDGETS, reps=200)


# ---------------------------------------------------------------- panel A
def test_budget_view_carries_the_simulations_numbers(sim, curve):
    v = budget_view(sim, curve)
    summ = sim.summary().set_index("estimator")
    for est, got in (("human_only", v.human), ("trisource", v.tri)):
        for name in EstimatorMetrics.__dataclass_fields__:
            assert getattr(got, name) == pytest.approx(float(summ.loc[est, name]), nan_ok=True)
    assert (v.budget, v.reps, v.design, v.budget_kind) == (50, 200, "stratified", "attempted")
    assert v.delta_y == sim.delta_y and v.delta_z == sim.delta_z
    assert v.native_better == (sim.delta_y > 0)
    assert v.reference_agrees == (np.sign(sim.delta_y) == np.sign(sim.delta_z))
    assert v.winner_y == ("native" if sim.delta_y > 0 else "EG")
    assert v.winner_z == ("native" if sim.delta_z > 0 else "EG")
    assert v.mean_usable == pytest.approx(sim.n_usable.mean())
    assert v.mean_clusters == pytest.approx(sim.n_clusters.mean())
    assert v.min_clusters == sim.min_clusters
    assert v.beta_text == ", ".join(f"{b:.2f}" for b in sim.beta)
    assert v.curve is curve and list(v.panel_a_full.columns) == list(sim.summary().columns)


def test_the_default_scenario_reverses_and_truth_selects_native(sim, curve):
    """Seed 003's default: the reference selects EG, the truth native (Table 4's signs)."""
    v = budget_view(sim, curve)
    assert v.delta_y > 0 > v.delta_z
    assert v.native_better and not v.reference_agrees
    assert (v.winner_y, v.winner_z) == ("native", "EG")


def test_panel_a_puts_the_seeds_numbers_beside_the_measured_ones(sim, curve):
    t = budget_view(sim, curve).panel_a
    assert list(t.columns) == ["estimator", "source", "budget", "RMSE", "95 % width",
                               "coverage", "width saved"]
    here, seed = t.iloc[[0, 2]], t.iloc[[1, 3]]
    assert here["estimator"].tolist() == seed["estimator"].tolist() == [
        ESTIMATOR_LABELS["human_only"], ESTIMATOR_LABELS["trisource"]]
    summ = sim.summary()
    assert here["RMSE"].to_numpy() == pytest.approx(summ["rmse"].to_numpy())
    assert here["95 % width"].to_numpy() == pytest.approx(summ["mean_width"].to_numpy())
    assert seed["RMSE"].tolist() == list(TABLE5_A["rmse"])
    assert seed["95 % width"].tolist() == list(TABLE5_A["mean_width"])
    assert seed["budget"].tolist() == [TABLE5_A["budget"]] * 2
    assert seed["coverage"].iloc[1] == TABLE5_A["coverage"] and np.isnan(seed["coverage"].iloc[0])
    assert t["width saved"].iloc[3] == TABLE5_A["width_reduction"]


def test_narrower_at_every_budget_is_read_off_the_curve(sim, curve):
    w = curve.pivot_table(index="budget", columns="estimator", values="mean_width")
    assert budget_view(sim, curve).narrower_at_every_budget == bool(
        (w["trisource"] <= w["human_only"]).all())
    wider = curve.copy()
    wider.loc[wider["estimator"] == "trisource", "mean_width"] += 10.0
    assert not budget_view(sim, wider).narrower_at_every_budget


@pytest.mark.parametrize("reduction, narrower", [(0.3, True), (0.0, True), (-0.01, False)])
def test_narrower_is_the_sign_of_the_width_reduction(reduction, narrower):
    m = EstimatorMetrics(*([0.1] * 9), width_reduction=reduction)
    assert m.narrower is narrower


@pytest.mark.parametrize("bad, match", [
    (lambda c: c.iloc[0:0], "no rows"),
    (lambda c: c[c["estimator"] == "human_only"], "human_only and trisource"),
])
def test_budget_view_refuses_a_broken_curve(sim, curve, bad, match):
    with pytest.raises(ValueError, match=match):
        budget_view(sim, bad(curve))


# ---------------------------------------------------------------- panel B
def test_heldout_view_matches_the_simulation_and_the_seed(sim):
    h = heldout_view(sim)
    held = sim.heldout_summary().iloc[0]
    assert h.table["measured"].tolist() == pytest.approx(
        [held[k] for k in ("ref_raw", "ref_zplatt", "restored_raw", "pilot_only", "trisource",
                           "full_y")])
    assert h.table["paper"].tolist() == [TABLE5_B[k] for k in TABLE5_B]
    assert h.platt_on_reference_hurts == (held["ref_zplatt"] > held["ref_raw"])
    assert h.repair_excess == pytest.approx(held["trisource"] - held["full_y"])
    assert h.repair_beats_pilot_only == (held["trisource"] < held["pilot_only"])
    assert h.fallback_share == pytest.approx(held["repair_fallback"])
    assert set(h.values) == set(TABLE5_B) and "repair_fallback" not in h.values


def test_reference_only_platt_hurts_in_the_default_scenario(sim):
    """Seed 003 Table 5 panel B: Z-Platt (.41) is worse under Y than the raw rule (.33)."""
    assert TABLE5_B["ref_zplatt"] > TABLE5_B["ref_raw"]
    assert heldout_view(sim).platt_on_reference_hurts


@pytest.mark.parametrize("zplatt, repair, hurts, beats", [
    (0.41, 0.172, True, True), (0.30, 0.172, False, True), (0.33, 0.19, False, False)])
def test_heldout_sentence_facts_are_the_comparisons(zplatt, repair, hurts, beats):
    values = {"ref_raw": 0.33, "ref_zplatt": zplatt, "restored_raw": 0.178,
              "pilot_only": 0.18, "trisource": repair, "full_y": 0.17, "repair_fallback": 0.25}
    # per pilot: the repair is worse than the raw rule in 1 of 4, than pilot-only Platt in 2
    per = {"restored_raw": np.array([0.178] * 4), "pilot_only": np.array([0.18] * 4),
           "trisource": np.array([0.17, 0.179, 0.181, 0.15])}
    stub = SimpleNamespace(budget=50, budget_kind="usable", heldout=per,
                           heldout_summary=lambda: pd.DataFrame([values]))
    h = heldout_view(stub)
    assert (h.platt_on_reference_hurts, h.repair_beats_pilot_only) == (hurts, beats)
    assert h.repair_excess == pytest.approx(repair - 0.17) and h.fallback_share == 0.25
    assert (h.worse_than_raw, h.worse_than_pilot_only) == (0.5, 0.25)
    assert "worse than the unrepaired rule in 50% of the pilots" in h.text
    assert "worse than pilot-only Platt in 25%" in h.text and "comes within" not in h.text
    assert ("scores worse than doing nothing" in h.text) is hurts


def test_heldout_view_needs_the_heldout_repair():
    sim = pilots_for(DEFAULT_SCENARIO, budget=20, reps=5, heldout=False)
    with pytest.raises(ValueError, match="heldout=True"):
        heldout_view(sim)


# ---------------------------------------------------------------- judges
def _judge_table(cov_lean: float) -> pd.DataFrame:
    rows = []
    for q, b, cov, red in ((0.0, 0.0, 0.95, -0.02), (0.4, 0.0, 0.95, 0.37),
                           (0.4, 2.0, cov_lean, 0.3)):
        rows.append({"judge_quality": q, "judge_bias": b, "beta": "0.10, 0.20",
                     "beta_origin": "transfer", "human_only_coverage": 0.95,
                     "trisource_coverage": cov, "human_only_mean_width": 0.2,
                     "trisource_mean_width": 0.2 * (1 - red), "human_only_rmse": 0.05,
                     "trisource_rmse": 0.04, "width_reduction": red, "coverage_cost": 0.95 - cov})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("reps, cov, less", [
    (500, 0.95 - 2 * math.sqrt(0.95 * 0.05 / 500) - 1e-6, True),
    (500, 0.95 - 2 * math.sqrt(0.95 * 0.05 / 500) + 1e-6, False),
    (200, 0.925, False),  # 2 SE at 200 pilots is .031: .925 is within it
    (200, 0.915, True),
])
def test_judge_view_flags_coverage_below_two_monte_carlo_errors(reps, cov, less):
    j = judge_view(_judge_table(cov), quality=0.4, bias=2.0, reps=reps)
    assert j.tolerance == pytest.approx(2 * math.sqrt(0.95 * 0.05 / reps))
    assert j.covers_less is less
    assert j.lean["trisource_coverage"] == cov and j.fair["trisource_coverage"] == 0.95
    assert not j.blind_narrower and j.blind["width_reduction"] == -0.02
    assert j.blind_beta_source == beta_words("transfer")
    assert list(j.table.columns) == ["quality", "bias", "β", "human-only coverage",
                                     "TriSource coverage", "width saved"]
    assert len(j.full.columns) > len(j.table.columns)


def test_judge_view_on_a_real_sensitivity_table():
    table = judge_sensitivity(DEFAULT_SCENARIO, budget=30, reps=40, qualities=(0.0, 0.4),
                              biases=(0.0, 2.0))
    j = judge_view(table, quality=0.4, bias=2.0, reps=40)
    at = table.set_index(["judge_quality", "judge_bias"])
    assert j.lean["trisource_coverage"] == at.loc[(0.4, 2.0), "trisource_coverage"]
    assert j.blind_narrower == (at.loc[(0.0, 0.0), "width_reduction"] >= 0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(quality=0.8, bias=2.0, reps=100), "no \\(quality, bias\\) cells"),
    (dict(quality=0.4, bias=1.0, reps=100), "no \\(quality, bias\\) cells"),
    (dict(quality=0.4, bias=2.0, reps=0), "reps >= 1"),
    (dict(quality=0.4, bias=2.0, reps=100, level=1.0), "level"),
])
def test_judge_view_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        judge_view(_judge_table(0.9), **kwargs)


# ---------------------------------------------------------------- the walk
@pytest.fixture(scope="module")
def walk():
    return walk_for(DEFAULT_SCENARIO, budget_steps=WALK_LOOKS, seed=1, design="stratified")


def test_walk_view_of_a_terminated_walk(walk):
    w = walk_view(walk, seed=1, requested_design="stratified")
    assert walk.terminated and w.stopped is walk.steps[-1]
    assert w.winner == ("native" if walk.selected == "A" else "EG")
    assert w.look_level == pytest.approx(1 - 0.05 / len(WALK_LOOKS))  # Bonferroni over looks
    assert not w.substituted and w.design == "stratified" and w.looks == WALK_LOOKS
    assert w.table["step"].tolist() == list(range(1, len(walk.steps) + 1))
    assert w.table["escalate"].dtype == bool
    assert w.table["decision"].iloc[-1] == w.winner
    assert set(w.table["decision"].iloc[:-1]) <= {"—"}
    assert "rule A" not in w.gate_text and w.gate_text == walk.gate.message.replace(
        "rule A", "native").replace("rule B", "EG")
    assert w.table["interval"].iloc[-1] == f"[{walk.steps[-1].lo:+.3f}, {walk.steps[-1].hi:+.3f}]"
    # each look samples exactly the new attempted annotations
    assert np.cumsum(w.download["new"]).tolist() == w.download["n_attempted"].tolist()
    assert set(w.table.columns) < set(w.download.columns) | {"interval", "human_only"}


def test_walk_view_of_an_open_walk():
    walks = (walk_for(DEFAULT_SCENARIO, budget_steps=(10, 20), seed=s) for s in range(12))
    open_walk = next(wk for wk in walks if not wk.terminated)
    w = walk_view(open_walk, seed=0, requested_design="pps")
    assert w.stopped is None and w.winner is None
    assert w.substituted and w.design == "stratified"
    assert w.table["escalate"].all()


@pytest.mark.parametrize("design, used", [("stratified", "stratified"), ("srs", "srs"),
                                          ("pps", "stratified")])
def test_walk_design(design, used):
    assert walk_design(design) == used


def test_walk_errors(walk):
    with pytest.raises(ValueError, match="design must be"):
        walk_design("cluster")
    empty = Algorithm1Walk(steps=(), terminated=False, selected=None, repair=None, gate=None,
                           beta=(), beta_origin="fixed", repair_aux="none", delta_y=0.0,
                           delta_z=0.0)
    with pytest.raises(ValueError, match="no steps"):
        walk_view(empty, seed=0, requested_design="stratified")


def test_sampled_items_strata_follow_the_frozen_rule(walk):
    frame, _ = scenario_frames(DEFAULT_SCENARIO)
    shown, full = sampled_items(walk, frame)
    assert len(shown) == sum(len(s.new_items) for s in walk.steps) == len(full)
    assert shown["item_id"].tolist() == [i for s in walk.steps for i in s.new_items]
    expect = [("unmatched" if z == 0 else "matched")
              + (", high confidence" if c >= 0.8 else ", lower confidence")
              for z, c in zip(shown["z"], shown["native"], strict=True)]
    assert shown["stratum"].tolist() == expect
    assert {"q_1", "q_2", "store"} <= set(full.columns) and "q_1" not in shown.columns
    with pytest.raises(ValueError, match="not in the scenario frame"):
        sampled_items(walk, frame.iloc[:5])


# ---------------------------------------------------------------- NQ-open
def _real(budget: int, dy: float, dz: float) -> pd.DataFrame:
    rows = [{"estimator": e, "budget": budget, "rmse": r, "bias": 0.0, "mean_width": w,
             "coverage": 0.95, "coverage_all": 0.95, "p_correct_direction": 0.9,
             "false_termination": 0.0, "escalation": 0.1, "no_interval": 0.0,
             "mean_usable": float(budget),
             "width_reduction": red, "delta_y": dy, "delta_z": dz, "reps": 100,
             "beta_origin": "transfer"}
            for e, r, w, red in (("human_only", 0.05, 0.2, 0.0), ("trisource", 0.03, 0.15, 0.25))]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("dy, dz, a_better, agrees, winner", [
    (0.05, 0.02, True, True, "agreement"), (-0.07, 0.13, False, False, "const@0.50"),
    (-0.01, -0.2, False, True, "const@0.50"), (0.0, 0.0, False, True, "neither")])
def test_real_pilot_view(dy, dz, a_better, agrees, winner):
    frames = [_real(b, dy, dz) for b in (25, 50, 100)]
    r = real_pilot_view(frames, budget=50, rule_a="agreement", rule_b="const@0.50",
                        n_answers=1490)
    assert (r.delta_y, r.delta_z, r.a_better, r.exact_match_agrees) == (dy, dz, a_better, agrees)
    assert r.winner == winner
    assert r.tri.rmse == 0.03 and r.human.mean_width == 0.2 and r.tri.width_reduction == 0.25
    assert r.reps == 100 and r.n_answers == 1490 and r.beta_origin == beta_words("transfer")
    assert len(r.curve) == 6 and "beta_origin" not in r.curve.columns
    with pytest.raises(ValueError, match="no real pilots at budget 80"):
        real_pilot_view(frames, budget=80, rule_a="a", rule_b="b", n_answers=1)


# ---------------------------------------------------------------- small helpers
@pytest.mark.parametrize("origin, words", [
    ("fixed", "fixed by hand"),
    ("transfer", "learned on another audited dataset before the pilot"),
    ("transfer (gate failed: β = 0)", "0: the fit on another audited dataset failed its 5 % "
                                      "check"),
    ("cross-fitted: each half …", "cross-fitted: each half …"),
])
def test_beta_words(origin, words):
    assert beta_words(origin) == words


@given(st.lists(st.integers(2, 500), max_size=6), st.integers(2, 500))
def test_budgets_with_is_sorted_unique_and_contains_the_budget(budgets, budget):
    out = budgets_with(budgets, budget)
    assert list(out) == sorted(set(out)) and budget in out and set(budgets) <= set(out)



# ---------------------------------------------------------------- coverage, honestly (issue 18.5)
def _metrics(**kw) -> EstimatorMetrics:
    base = dict(rmse=0.05, bias=0.0, mean_width=0.2, coverage=0.95, coverage_all=0.95,
                p_correct_direction=0.9, false_termination=0.0, escalation=0.1,
                no_interval=0.0, width_reduction=0.0)
    return EstimatorMetrics(**(base | kw))


def test_coverage_all_is_coverage_times_the_share_with_an_interval(sim, curve):
    for frame in (sim.summary(), curve):
        assert frame["coverage_all"].to_numpy() == pytest.approx(
            (frame["coverage"] * (1 - frame["no_interval"])).to_numpy())


@pytest.mark.parametrize("human, tri, says, large", [
    (_metrics(), _metrics(), "Every pilot gave an interval", False),
    (_metrics(no_interval=0.05, coverage_all=0.9025), _metrics(no_interval=0.02,
                                                             coverage_all=0.931),
     "2.0% of the TriSource pilots (human-only 5.0%)", False),
    (_metrics(no_interval=0.30, coverage_all=0.665), _metrics(no_interval=0.31,
                                                            coverage_all=0.6555),
     "coverage over all pilots is 0.655 (human-only 0.665)", True),
])
def test_coverage_words_state_the_missing_intervals(human, tri, says, large):
    text = coverage_words(human, tri)
    assert says in text
    assert ("large share" in text) is large


def test_coverage_words_explain_an_exact_estimate():
    human = _metrics(rmse=0.0, mean_width=float("nan"), coverage=float("nan"),
                     coverage_all=0.0, no_interval=1.0, escalation=1.0)
    text = coverage_words(human, _metrics())
    assert "Human-only gave no interval in any pilot" in text and "RMSE 0" in text
    assert "large share" in text  # TriSource still has intervals; human-only never does


def test_a_perfect_reference_gives_a_view_not_an_error():
    """Issue 18.8: omission 0 and false matches 0 (legal slider values) crashed the page.

    With Z = Y every human label agrees with the reference: human-only's residuals are all 0,
    its estimate is exact and it has no interval at any budget."""
    from dataclasses import replace

    cfg = replace(DEFAULT_SCENARIO, omission_rate=0.0, false_match_rate=0.0)
    frame, source = generate_scenario(cfg), generate_scenario(transfer_config(cfg))
    sim = simulate_pilots(frame, budget=50, reps=100, source_frame=source, heldout=True)
    curve = budget_curve(frame, budgets=BUDGETS, reps=100, source_frame=source)
    v = budget_view(sim, curve)
    assert v.delta_y == pytest.approx(v.delta_z)
    assert v.human.rmse == 0.0 and v.human.no_interval == 1.0 and math.isnan(v.human.coverage)
    assert v.budgets_without_interval == BUDGETS and not v.narrower_at_every_budget
    assert "Human-only gave no interval in any pilot" in v.coverage_text
    assert set(v.budgets_missing_intervals) == set(BUDGETS)


def test_escalations_fall_is_read_off_the_curve(sim, curve):
    v = budget_view(sim, curve)
    tri = curve[curve["estimator"] == "trisource"].sort_values("budget")["escalation"]
    assert v.escalations_fall == bool((tri.diff().dropna() <= 0.02).all())
    rising = curve.copy()
    rising.loc[(rising["estimator"] == "trisource") & (rising["budget"] == BUDGETS[-1]),
               "escalation"] = 0.9
    assert not budget_view(sim, rising).escalations_fall


@pytest.mark.parametrize("reduction, words", [
    (0.25, "25.0% narrower than human-only"), (-0.1, "10.0% wider than human-only"),
    (float("nan"), "not comparable with human-only, which gave no interval")])
def test_width_words(reduction, words):
    from core.calibration.pilot_view import width_words

    assert width_words(reduction) == words
