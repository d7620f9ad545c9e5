"""Metrics and reductions: closed forms, conventions, bootstrap determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.evaluation.metrics import (
    cluster_bootstrap,
    coverage,
    f05_macro,
    forced_accuracy,
    paired_bootstrap,
    risk_coverage,
    selective_accuracy,
)


def test_forced_accuracy_is_macro_over_questions():
    c = np.array([[1, 0], [1, 0], [1, 1], [0, 1]], bool)  # q1 3/4, q2 2/4
    assert forced_accuracy(c) == pytest.approx((0.75 + 0.5) / 2)


def test_selective_accuracy_drops_questions_without_answers():
    c = np.array([[1, 1, 0], [0, 1, 0]], bool)
    skipped = np.array([[False, False, True], [True, False, True]])
    # q1: 1/1, q2: 2/2, q3: no answer -> dropped
    assert selective_accuracy(c, skipped) == 1.0
    assert coverage(skipped) == pytest.approx(3 / 6)
    assert math.isnan(selective_accuracy(c, np.ones_like(skipped)))


def test_f05_macro_closed_form():
    p, cov, forced = 0.9, 0.8, 0.85
    r = p * cov / forced
    assert f05_macro(p, cov, forced) == pytest.approx(1.25 * p * r / (0.25 * p + r))
    assert f05_macro(float("nan"), 0.0, 0.5) == 0.0


def test_risk_coverage_known_curve_and_aurc():
    conf = np.array([0.9, 0.8, 0.7, 0.6])
    correct = np.array([True, False, True, True])
    rc = risk_coverage(conf, correct)
    np.testing.assert_allclose(rc.coverage, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(rc.risk, [0, 0.5, 1 / 3, 0.25])
    expected = np.trapezoid([0, 0.5, 1 / 3, 0.25], [0.25, 0.5, 0.75, 1.0])
    assert rc.aurc == pytest.approx(expected)


def test_cluster_bootstrap_is_deterministic_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    c = rng.random((200, 18)) < 0.8
    a, b = cluster_bootstrap(c, b=500), cluster_bootstrap(c, b=500)
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < a.estimate < a.high
    other = cluster_bootstrap(c, b=500, seed=7)
    assert (other.low, other.high) != (a.low, a.high)


def test_paired_bootstrap_of_identical_methods_is_zero():
    c = np.random.default_rng(1).random((50, 18)) < 0.7
    ci = paired_bootstrap(c, c, b=200)
    assert ci.estimate == 0 and ci.low == 0 and ci.high == 0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 1000))
def test_bootstrap_replicates_are_means_of_resampled_clusters(n, seed):
    c = np.random.default_rng(seed).random((n, 18)) < 0.5
    ci = cluster_bootstrap(c, b=20, seed=seed)
    # every replicate is an average of cluster means, so it lies in their range
    means = c.mean(1)
    assert (ci.replicates >= means.min() - 1e-12).all()
    assert (ci.replicates <= means.max() + 1e-12).all()


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError):
        forced_accuracy(np.zeros((0, 18)))
    with pytest.raises(ValueError, match="shape"):
        paired_bootstrap(np.zeros((3, 18)), np.zeros((4, 18)))
    with pytest.raises(ValueError):
        risk_coverage(np.array([]), np.array([]))
