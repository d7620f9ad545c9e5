"""The Leaderboard's view objects (``core.evaluation.leaderboard_view``) and their tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation.diagnostics import source_reliability, source_summary
from core.evaluation.display import table
from core.evaluation.leaderboard_view import (
    HEADLINE_METHODS,
    board_view,
    confusion_view,
    learned_table,
    sources_view,
    split_facts,
)
from core.evaluation.run import FORCED_METHODS, run_testbed
from core.evaluation.tables import (
    main_table,
    per_difficulty_table,
    per_type_table,
    reachability_slices,
    selective_table,
)
from core.resolvers.registry import method_short
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import SOURCE_LABELS, SOURCES


@pytest.fixture(scope="module")
def runs():
    return run_testbed(generate(TestbedConfig(seeds=(3, 4), personas_per_difficulty=8)))


@pytest.fixture(scope="module")
def parts(runs):
    tables = {"selective": selective_table(runs), "per_type": per_type_table(runs),
              "per_difficulty": per_difficulty_table(runs), "slices": reachability_slices(runs)}
    return main_table(runs, b=50), tables


def test_split_facts_count_seeds_clusters_and_instances(runs):
    s = split_facts(runs)
    assert s.seeds == (3, 4)
    assert s.n_clusters == sum(len(r.gt) for r in runs)
    assert s.n_instances == sum(r.gt.size for r in runs)
    with pytest.raises(ValueError, match="no cached predictions"):
        split_facts([])


@pytest.mark.parametrize("methods", [["majority_vote", "dsnbf"], list(FORCED_METHODS), ["nbf"]])
def test_board_view_keeps_board_order_and_the_table_rows(parts, methods):
    main, tables = parts
    v = board_view(main, tables, methods=methods, b=50)
    assert list(v.methods) == [m for m in FORCED_METHODS if m in methods]
    assert v.forced.shown["label"].tolist() == \
        main.set_index("method").loc[list(v.methods), "label"].tolist()
    rows = main.set_index("method")
    assert [h.method for h in v.headlines] == list(HEADLINE_METHODS)  # whatever is shown
    for h in v.headlines:
        assert (h.accuracy, h.ci_low, h.ci_high) == tuple(rows.loc[h.method, ["accuracy",
                                                                              "ci_low",
                                                                              "ci_high"]])
        assert f"{h.ci_low:.1f} to {h.ci_high:.1f}" in h.help and "50 bootstrap" in h.help
    assert v.forced.full is main and "regenerated" in v.forced.shown.columns
    assert "delta_regenerated" not in v.forced.shown.columns  # narrowed for the reader
    short = method_short()  # one line per method shown: its short name, then words
    assert [line.split(" — ")[0] for line in v.method_key] == [short[m] for m in v.methods]


def test_board_view_reachability_share_and_selective_columns(parts):
    main, tables = parts
    v = board_view(main, tables, methods=["dsnbf"], b=50)
    s = tables["slices"]
    present, absent = s["n_present"].iloc[0], s["n_absent"].iloc[0]
    assert v.reach_share == pytest.approx(100 * present / (present + absent))
    assert 0 < v.reach_share < 100
    assert list(v.selective.shown.columns) == list(v.selective.labels)
    assert v.selective.shown["selective_accuracy"].tolist() == \
        tables["selective"]["selective_accuracy"].tolist()


def test_board_view_refuses_an_unknown_method(parts):
    with pytest.raises(ValueError, match="unknown method"):
        board_view(*parts, methods=["dsnbf", "oracle"], b=50)


@pytest.fixture(scope="module")
def pooled(runs):
    return np.concatenate([r.atoms for r in runs]), np.concatenate([r.gt for r in runs])


@pytest.mark.parametrize("qid, source", [("A3", "planner"), ("C3", "device_log"),
                                         ("Ctrl1", "profile_ltm")])
def test_confusion_counts_add_up_to_the_instances(pooled, qid, source):
    atoms, gt = pooled
    rel = source_reliability(atoms, gt)
    c = confusion_view(atoms, gt, rel, qid=qid, source=source)
    assert int(c.empirical.shown.to_numpy().sum()) == len(gt)
    assert c.empirical.index and c.empirical.full.shape[1] == c.empirical.shown.shape[1] + 1
    words = [*map(str, c.empirical.shown.columns), *map(str, c.empirical.shown.index)]
    assert not any("_" in w for w in words)  # words for the codes; the download keeps codes
    assert c.reliability.shown["source"].tolist() == [SOURCE_LABELS[s] for s in SOURCES]
    assert c.qid == qid and c.source_label == SOURCE_LABELS[source]
    with pytest.raises(ValueError, match="unknown source"):
        confusion_view(atoms, gt, rel, qid=qid, source="diary")


def test_learned_table_rows_are_probabilities(runs):
    model = runs[0].models["nbf"]
    t = learned_table(model, qid="A3", source="planner", seed=3)
    np.testing.assert_allclose(t.shown.to_numpy(float).sum(axis=1), 1.0)
    assert t.index and set(t.formats.values()) == {"{:.2f}"} and t.stem == "learned_A3_planner_3"


def test_sources_view_shows_labels_and_downloads_per_question(pooled):
    atoms, gt = pooled
    v = sources_view(source_summary(atoms, gt), source_reliability(atoms, gt))
    assert "question_id" in v.table.full.columns  # the download is per (source, question)
    assert v.table.shown["source"].tolist() == [SOURCE_LABELS[s] for s in SOURCES]
    assert "answered" not in v.table.shown.columns


def test_a_table_refuses_labels_it_does_not_show():
    frame = pd.DataFrame({"a": [1.0], "b": [2.0]})
    t = table(frame, {"a": "A"}, stem="t", formats={"a": "{:+.1f}"})
    assert list(t.shown.columns) == ["a"] and not t.derived
    with pytest.raises(ValueError, match="not shown columns"):
        table(frame, {"a": "A"}, stem="t", formats={"b": "{:.1f}"})
