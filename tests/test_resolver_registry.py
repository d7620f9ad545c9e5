"""The resolver registry (``core.resolvers.registry``) is the single source of every resolver
list: each resolver the evaluation runs is registered once, and the old names are its views."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import lab, paper, robustness, run
from core.evaluation.lab_view import grid_view
from core.figures import style
from core.resolvers import registry
from core.resolvers.registry import RESOLVERS, Resolver, resolver
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate

#: The lists as they were written out by hand before the registry (issue 9).
OLD_FORCED = ("random", "majority_class", "ssb", "ssb_global", "majority_vote", "bcf", "abf",
              "nbf", "dsnbf", "dawid_skene", "source_reachability")
OLD_SELECTIVE = ("ssb_skip", "abf_skip", "nbf_skip", "dsnbf_skip", "source_reachability_skip")
OLD_LABELS = {
    "random": "Random", "majority_class": "Majority Class", "ssb": "SSB",
    "ssb_global": "SSB-Global", "majority_vote": "Majority Vote (≡ ArgRAG equal-weight)",
    "bcf": "BCF(4p)", "abf": "ABF", "nbf": "NBF", "dsnbf": "DSNBF",
    "dawid_skene": "Dawid–Skene (no labels)",
    "source_reachability": "Source Reachability (GT-aided)",
    "ssb_skip": "SSB+SKIP", "abf_skip": "ABF+SKIP", "nbf_skip": "NBF+SKIP",
    "dsnbf_skip": "DSNBF+SKIP", "source_reachability_skip": "Source Reachability+SKIP",
}
OLD_SHORT = {
    "random": "Random", "majority_class": "MajClass", "ssb": "SSB", "ssb_global": "SSB-G",
    "majority_vote": "MV", "bcf": "BCF", "abf": "ABF", "nbf": "NBF", "dsnbf": "DSNBF",
    "dawid_skene": "DS", "source_reachability": "Reach",
    "ssb_skip": "SSB+SKIP", "abf_skip": "ABF+SKIP", "nbf_skip": "NBF+SKIP",
    "dsnbf_skip": "DSNBF+SKIP", "source_reachability_skip": "Reach+SKIP",
}


@pytest.fixture(scope="module")
def seed_run():
    tb = generate(TestbedConfig(seeds=(11,), personas_per_difficulty=8))
    return tb, run.run_testbed(tb)[0]


def test_every_resolver_the_evaluation_runs_is_registered(seed_run):
    _, r = seed_run
    assert tuple(r.predictions) == registry.all_methods()
    assert set(r.predictions) == set(run.METHOD_LABELS) == set(style.METHOD_SHORT)


@pytest.mark.parametrize("view, old", [
    (run.FORCED_METHODS, OLD_FORCED), (run.SELECTIVE_METHODS, OLD_SELECTIVE),
    (run.METHOD_LABELS, OLD_LABELS), (dict(style.METHOD_SHORT), OLD_SHORT),
], ids=["forced", "selective", "labels", "short"])
def test_the_old_names_are_views_equal_to_the_old_lists(view, old):
    assert view == old
    if isinstance(old, dict):
        assert list(view) == list(old)  # the same order too


def test_names_labels_and_short_names_are_unique():
    for view in (registry.all_methods(), list(registry.method_labels().values()),
                 list(registry.method_short().values())):
        assert len(view) == len(set(view))


def test_every_resolver_has_a_colour_a_family_and_a_ranked_one_a_mechanism():
    assert set(style.METHOD_COLORS) == set(run.FORCED_METHODS)
    for r in RESOLVERS:
        assert r.family in registry.FAMILIES and r.confidence
        assert bool(r.mechanism) == (r.family != "ceiling"), r.name
    assert dict(lab.METHOD_MECHANISMS) == registry.method_mechanisms()
    assert set(paper.PAPER_FORCED) <= set(run.FORCED_METHODS)
    assert {m for m, _ in paper.PAPER_SELECTIVE.items()} <= set(run.SELECTIVE_METHODS)


@pytest.mark.parametrize("name, base", [("dsnbf", "dsnbf"), ("dsnbf_skip", "dsnbf"),
                                        ("source_reachability_skip", "source_reachability")])
def test_resolver_finds_a_record(name, base):
    assert resolver(name).name == base


@pytest.mark.parametrize("name", ["bcf_skip", "nope", "", "_skip"])
def test_resolver_refuses_unknown_names(name):
    with pytest.raises(ValueError, match="unknown resolver"):
        resolver(name)


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "exactly one of make and oracle"),
    (dict(make=lambda selective=False: None, oracle=lambda *a: None), "exactly one"),
    (dict(make=lambda selective=False: None, family="other"), "family 'other'"),
    (dict(make=lambda selective=False: None, short=""), "a short name"),
])
def test_a_bad_record_raises(kwargs, match):
    base = dict(name="x", label="X", short="X", family="vote", confidence="c")
    with pytest.raises(ValueError, match=match):
        Resolver(**{**base, **kwargs})


def test_a_subset_of_methods_gives_the_same_predictions_as_all(seed_run):
    """The registry's fit modes (shared, separate, GT-aided, second thread) agree."""
    tb, full = seed_run
    from core.testbed.labels import ground_truth_codes
    from core.testbed.readout import readout

    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    for methods in (["nbf_skip"], ["dsnbf"], ["ssb_skip"], ["source_reachability_skip"]):
        part = run.run_seed(mu, gt, tb.personas, methods=methods, parallel=True)
        assert list(part.predictions) == methods
        for m in methods:
            np.testing.assert_array_equal(part.predictions[m].answer, full.predictions[m].answer)
            np.testing.assert_array_equal(part.predictions[m].skipped,
                                          full.predictions[m].skipped)


def test_the_grid_rivals_are_the_robustness_rivals():
    g = grid_view({"tau_mean": 0.5, "dsnbf_wins": 1, "cells": 9, "mean": None, "table": []},
                  seed=1)
    assert set(g.rivals) == set(robustness._RIVALS)
    assert g.rivals_text == "NBF, ABF, BCF, MV and SSB-G"
