"""Monte-Carlo checks of seed 003's estimators (issue 8): seeded, a few seconds in all.

Every interval the pages show covers at least .93 at 20 labels for π ∈ {.05, .5, .95}; the
looks of Algorithm 1 stop on the wrong side of a near-tie at most 5 % of the time; the
deployment gate passes a rule that does not beat the constant at most 5 % of the time.
Thresholds leave room for Monte-Carlo error (1,000 pilots: se ≈ .007 at .95).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.calibration import pilot as P
from core.calibration import pilot_walk as PW
from core.calibration._checks import check_level
from core.calibration.label_source import estimate_pi_from_pilot
from core.calibration.reliability import reliability_curve
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario, transfer_config
from core.stats import exact_interval, wilson_interval

PREVALENCES = (0.05, 0.5, 0.95)


@pytest.mark.parametrize("design", ["stratified", "srs"])
@pytest.mark.parametrize("prevalence", PREVALENCES)
def test_pilot_gap_intervals_cover_at_20_labels(prevalence, design):
    """Eq. 3 intervals (human-only and TriSource), 20 usable labels, the default frame seed.

    The Pilot budget page offers only the scenario's own prevalence (the five-frame test above
    covers it); at these extreme prevalences other frames do worse for SRS and PPS human-only
    (measured at 2,000 pilots: SRS π = .05, 50 labels, .917 on frame seed 6; PPS π = .95, 20
    labels, .88-.95), which no page shows."""
    frame = generate_scenario(replace(DEFAULT_SCENARIO, prevalence=prevalence))
    sim = P.simulate_pilots(frame, budget=20, reps=1000, design=design, budget_kind="usable",
                            heldout=False, seed=5)
    summary = sim.summary().set_index("estimator")
    for est in ("human_only", "trisource"):
        row = summary.loc[est]
        assert row["coverage"] >= 0.93, (est, row["coverage"])
        assert row["no_interval"] <= 0.2  # honest escalations, not the common case
    # no zero-width interval ever: a missing variance is NaN, and then the pilot escalates
    for lo, hi, esc in ((sim.lo_human, sim.hi_human, sim.escalate_human),
                        (sim.lo_tri, sim.hi_tri, sim.escalate_tri)):
        has = np.isfinite(lo)
        assert np.all(hi[has] > lo[has]) and np.all(esc[~has])


#: Five frames of the Pilot budget page's scenario (its default seed is 3).
FRAME_SEEDS = (3, 4, 5, 6, 7)
#: Every budget the Pilot budget page offers from 20 on (its slider: 10 to 200 by 5).
PAGE_BUDGETS = tuple(range(20, 201, 5))


@pytest.fixture(scope="module")
def page_frames():
    out = []
    for seed in FRAME_SEEDS:
        cfg = replace(DEFAULT_SCENARIO, seed=seed)
        out.append((generate_scenario(cfg), generate_scenario(transfer_config(cfg))))
    return out


#: simulate_pilots' own defaults, so the fast path below follows them if they change.
_SIM_DEFAULTS = {k: v.default for k, v in inspect.signature(P.simulate_pilots).parameters.items()
                 if v.default is not inspect.Parameter.empty}


def _frame_simulator(frame, source):
    """``simulate_pilots(frame, heldout=False, source_frame=source, **kw)`` with the frame's
    arrays and its transfer-learned β computed once per frame instead of once per call.

    Both depend on the frame alone, not on the budget, design or seed, and were about half of
    each call's time over 37 budgets; the simulation itself is ``simulate_pilots``' own
    (:func:`core.calibration.pilot._simulate`). The test below checks on one cell that the
    two give the same summary.
    """
    fa = P.frame_arrays(frame)
    beta, origin, _ = P.resolve_beta(frame, source_frame=source)
    d = _SIM_DEFAULTS

    def simulate(*, budget, reps, design, budget_kind, seed):
        return P._simulate(
            fa, beta, origin, None, "none", t0=time.perf_counter(), budget=int(budget),
            reps=int(reps), seed=seed, design=design, budget_kind=budget_kind,
            insufficient_rate=float(d["insufficient_rate"]), level=check_level(d["level"]),
            min_clusters=int(d["min_clusters"]), clustered_variance=d["clustered_variance"],
            interval=d["interval"], high_threshold=d["high_threshold"],
            prior_unmatched_true=d["prior_unmatched_true"],
            prior_matched_false=d["prior_matched_false"])
    return simulate


@pytest.mark.parametrize("kind", ["attempted", "usable"])
@pytest.mark.parametrize("design", ["stratified", "srs", "pps"])
def test_every_design_and_page_budget_covers_on_five_frames(page_frames, design, kind):
    """Issue 18.5: every design and budget ≥ 20 of the Pilot budget page, five frames.

    Coverage over the pilots that gave an interval, pooled over the five frames (5,000 pilots
    per budget: se ≈ .003 at .95), is at least .93 for both estimators; no frame pooled over
    the budgets falls below .935. Measured: lowest budget .936 (PPS human-only; single frames
    go down to .92 at 2,000 pilots, which is within the Monte-Carlo spread of 370 cells).
    """
    cov = np.zeros((len(FRAME_SEEDS), len(PAGE_BUDGETS), 2))
    for i, (frame, source) in enumerate(page_frames):
        simulate = _frame_simulator(frame, source)
        if i == 0:  # the fast path is simulate_pilots' computation, not an imitation of it
            pd.testing.assert_frame_equal(
                simulate(budget=PAGE_BUDGETS[0], reps=1000, design=design, budget_kind=kind,
                         seed=PAGE_BUDGETS[0]).summary(),
                P.simulate_pilots(frame, budget=PAGE_BUDGETS[0], reps=1000, design=design,
                                  budget_kind=kind, heldout=False, seed=PAGE_BUDGETS[0],
                                  source_frame=source).summary())
        for j, budget in enumerate(PAGE_BUDGETS):
            summ = simulate(budget=budget, reps=1000, design=design, budget_kind=kind,
                            seed=budget).summary().set_index("estimator")
            cov[i, j] = summ.loc[["human_only", "trisource"], "coverage"].to_numpy()
            # from 20 labels on rare (stratified, 20 attempted: 2-4 %, a stratum left empty)
            assert (summ["no_interval"] <= 0.05).all()
    by_budget = cov.mean(axis=0)
    assert by_budget.min() >= 0.93, PAGE_BUDGETS[int(np.argmin(by_budget.min(1)))]
    assert cov.mean(axis=1).min() >= 0.935


def test_small_stratified_pilots_often_have_no_interval(page_frames):
    """Below 20 labels the page says in words how often a pilot has no interval: stratified,
    10 attempted labels, about 30 % of pilots (the issue's figure) on every frame, and the
    coverage over all pilots is then far below the coverage over those with one."""
    for frame, source in page_frames:
        summ = P.simulate_pilots(frame, budget=10, reps=1000, heldout=False, seed=1,
                                 source_frame=source).summary().set_index("estimator")
        tri = summ.loc["trisource"]
        assert 0.2 <= tri["no_interval"] <= 0.4
        assert tri["coverage"] >= 0.93 and tri["coverage_all"] <= 0.8
        assert tri["coverage_all"] == pytest.approx(tri["coverage"] * (1 - tri["no_interval"]))


@pytest.mark.parametrize("pi", PREVALENCES)
def test_pilot_prevalence_interval_is_exact_and_covers(pi):
    """The pilot's estimate of P(Y = 1 | Z = 0): exact at the Kish size, 20 unmatched labels."""
    rng = np.random.default_rng(int(pi * 100))
    n, k, reps = 400, 20, 2000
    z = np.zeros(n)
    y = (np.arange(n) < round(pi * n)).astype(float)  # exactly π of the unmatched are true
    covered = zero_width = 0
    for _ in range(reps):
        s = np.zeros(n, bool)
        s[rng.choice(n, k, replace=False)] = True
        est = estimate_pi_from_pilot(np.where(s, y, np.nan), z, s, np.full(n, k / n))
        covered += est.lo <= pi <= est.hi
        zero_width += est.hi <= est.lo
    assert covered / reps >= 0.93 and zero_width == 0
    one = estimate_pi_from_pilot(np.where(np.arange(n) < k, y, np.nan), z, np.arange(n) < k,
                                 np.full(n, k / n))
    lo, hi = exact_interval(one.pi * k, k)
    assert (one.lo, one.hi) == pytest.approx((float(lo), float(hi)))  # equal weights: exact


@pytest.mark.parametrize("p", PREVALENCES)
def test_reliability_bin_intervals_cover(p):
    """The Reliability page's per-bin intervals (exact): 20 forecasts in the bin."""
    rng = np.random.default_rng(int(p * 1000))
    reps, k = 2000, 20
    y = (rng.random((reps, k)) < p).astype(float)
    lo, hi = exact_interval(y.sum(1), k)
    assert np.mean((lo <= p) & (p <= hi)) >= 0.93
    wl, wh = wilson_interval(y.sum(1), k)  # why not Wilson: .925 at p = .05 (exactly, n = 20)
    assert np.mean((wl <= p) & (p <= wh)) <= np.mean((lo <= p) & (p <= hi))
    curve = reliability_curve(np.full(k, p), y[0], n_bins=5)  # the page's path: one bin
    b = int(np.flatnonzero(~curve.empty)[0])
    assert (curve.low[b], curve.high[b]) == pytest.approx((lo[0], hi[0]))


def test_looks_are_alpha_spent_near_a_tie():
    """Prevalence .56: the rules are nearly tied (Δ_Y ≈ −.007); 9 looks of Algorithm 1."""
    frame = generate_scenario(replace(DEFAULT_SCENARIO, prevalence=0.56))
    spent = PW.simulate_walks(frame, reps=1500, seed=2, spending="bonferroni")
    naive = PW.simulate_walks(frame, reps=1500, seed=2, spending="none")
    assert abs(spent.delta_y) < 0.01
    assert spent.false_termination <= 0.05  # measured .011
    assert naive.false_termination > spent.false_termination  # measured .08
    assert spent.look_level == pytest.approx(1 - 0.05 / 9)


def test_walk_uses_the_spent_level():
    frame = generate_scenario(DEFAULT_SCENARIO)
    walk = PW.walk_algorithm1(frame, budget_steps=(20, 50, 100), seed=3)
    assert walk.look_level == pytest.approx(1 - 0.05 / 3)
    assert PW.walk_algorithm1(frame, budget_steps=(20, 50, 100), seed=3,
                             spending="none").look_level == pytest.approx(0.95)
    with pytest.raises(ValueError, match="spending"):
        PW.walk_algorithm1(frame, spending="pocock")


def test_gate_rarely_passes_a_rule_that_does_not_beat_the_constant():
    """The gate on 100 pilots of 50 labels (seed 003's scenario, rule A = native).

    A pass is false when the map the gate deployed (chosen and fitted on one half of the
    pilot, judged on the other) does not beat the constant under the full-frame truth.

    Pilot seeds 100-199: ``test_map_choice``'s gate test already judges pilots 0-99 of this
    very cell (discrimination .23, 50 labels, same draws), so these are new pilots. Measured
    on pilots 0-199: 1 false pass and 3 passes in 200 (in about 60 % of pilots the deployed
    map does not beat the constant, so a gate that passed those freely would fail at once).
    Why 100 are enough: at a false-pass rate of .01 the chance of more than 5 in 100 (a
    false failure) is 5e-4; a gate at twice the 5 % it promises (.10) fails with probability
    .94, one at .15 with probability .998.
    """
    frame = generate_scenario(DEFAULT_SCENARIO)
    fa = P.frame_arrays(frame)
    src = P._source_frame(frame, None)
    beta, _, _ = P.resolve_beta(frame, source_frame=src)
    aux, _ = P._repair_aux(frame, fa, beta, src, "auto")
    strata = P._strata(fa, 0.8)
    n_h = np.bincount(strata)
    W = fa.w.sum()
    false_pass = passes = 0
    reps = 100
    for seed in range(100, 100 + reps):
        rng = np.random.default_rng(seed)
        att = P._smallest_per_stratum(rng.random((1, fa.n)), strata,
                                      P.design_allocation(50, n_h, n_h))[0]
        usable = att & (rng.random(fa.n) >= 0.08)
        gate = PW.deployment_gate(fa, fa.c_a, "A", aux, beta, usable, strata, seed=seed)
        if gate.deployed is None:
            assert not gate.passes
            continue
        p = gate.deployed.map.predict(fa.c_a)
        true_gap = (fa.w @ (gate.constant - fa.y) ** 2 - fa.w @ (p - fa.y) ** 2) / W
        passes += gate.passes
        false_pass += gate.passes and true_gap <= 0
    assert false_pass / reps <= 0.05
    assert passes / reps <= 0.2


def test_the_judge_claims_of_the_pilot_budget_page():
    """Backs the page's words: quality-0 judges still narrow the interval (β > 0, learned on
    the transfer domain) and a +2 logit bias costs TriSource coverage at 20 labels."""
    table = P.judge_sensitivity(DEFAULT_SCENARIO, budget=20, reps=600, budget_kind="usable",
                                qualities=(0.0, 0.4), biases=(0.0, 2.0))
    at = table.set_index(["judge_quality", "judge_bias"])
    blind = at.loc[(0.0, 0.0)]
    assert blind["width_reduction"] > 0.02 and blind["beta_origin"] == "transfer"
    assert sum(float(v) for v in blind["beta"].split(", ")) > 0.5
    fair, lean = at.loc[(0.4, 0.0)], at.loc[(0.4, 2.0)]
    assert fair["trisource_coverage"] >= 0.93
    assert lean["trisource_coverage"] < fair["trisource_coverage"] - 0.03  # measured .87 vs .96
    assert lean["human_only_coverage"] == fair["human_only_coverage"]  # judges do not enter it


def test_the_curve_and_repair_claims_of_the_pilot_budget_page():
    """Backs the captions: both estimators near nominal, TriSource below human-only in RMSE and
    width at every budget, escalations falling with the budget; reference-only Platt worse than
    no repair, the monotone repair close to the full-training-Y map."""
    frame = generate_scenario(DEFAULT_SCENARIO)
    curve = P.budget_curve(frame, budgets=(10, 20, 35, 50, 80, 120, 200), reps=500)
    hum = curve[curve["estimator"] == "human_only"].set_index("budget")
    tri = curve[curve["estimator"] == "trisource"].set_index("budget")
    assert (tri["rmse"] < hum["rmse"]).all() and (tri["mean_width"] < hum["mean_width"]).all()
    assert (hum.loc[20:, "coverage"] >= 0.93).all() and (tri.loc[20:, "coverage"] >= 0.93).all()
    assert (tri["escalation"].diff().dropna() <= 0.02).all()  # falls (Monte-Carlo slack .02)
    held = P.simulate_pilots(frame, budget=50, reps=500).heldout_summary().iloc[0]
    assert held["ref_zplatt"] > held["ref_raw"]  # Platt on Z alone: worse than nothing
    assert held["trisource"] < held["restored_raw"]
    assert held["trisource"] - held["full_y"] < 0.01  # close to every training truth label
