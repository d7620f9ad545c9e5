"""Faithfulness P(μ̂ = μ*) (seed 000 §8.8): two implementations, invariants, the release."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.evaluation.paper import PAPER_EXTRACTION
from core.evaluation.robustness import flip_atoms
from core.prose.extract import INFORMATIVE
from core.prose.faithfulness import CELLS, atoms_from_frame, faithfulness, faithfulness_loop
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.importer import load_release
from core.testbed.questions import QIDS, SOURCES, question
from core.testbed.readout import readout

SAMPLE = Path(__file__).parent / "fixtures" / "survey2agent-sample"


@pytest.fixture(scope="module")
def pair():
    """μ* of a small testbed and a noisy copy (so that there are misses of every kind)."""
    tb = generate(TestbedConfig(seeds=(20260323,), personas_per_difficulty=4))
    mu = readout(tb)
    rng = np.random.default_rng(7)
    hat = flip_atoms(mu, 0.2, rng)
    drop = rng.random(mu.shape) < 0.05  # some atoms lost, some invented
    hat = np.where(drop, np.where(hat >= 0, -1, 0), hat).astype(np.int8)
    return tb, mu, hat


@pytest.mark.parametrize("cells", CELLS)
def test_vectorised_and_loop_agree(pair, cells):
    _, mu, hat = pair
    f = faithfulness(hat, mu, cells=cells)
    ref = faithfulness_loop(hat, mu, cells=cells)
    assert (f.equal, f.n) == ref["overall"]
    for row in f.by_source.itertuples(index=False):
        assert (row.equal, row.n) == ref["source"][row.source]
    for row in f.by_question.itertuples(index=False):
        assert (row.equal, row.n) == ref["question"][row.question_id]
    assert len(f.misses) == f.n - f.equal


@pytest.mark.parametrize("cells", CELLS)
def test_rates_and_weighted_means(pair, cells):
    _, mu, hat = pair
    f = faithfulness(hat, mu, cells=cells)
    for table in (f.by_source, f.by_question, f.by_cell):
        r = table["rate"].dropna()
        assert ((r >= 0) & (r <= 1)).all()
        assert table["n"].sum() == f.n and table["equal"].sum() == f.equal
    w = f.by_source["n"] / f.n
    assert np.isclose((w * f.by_source["rate"].fillna(0)).sum(), f.overall)
    assert 0 < f.overall < 1


def test_denominators(pair):
    tb, mu, hat = pair
    assert faithfulness(hat, mu).n == tb.n * len(QIDS) * len(SOURCES)
    assert faithfulness(hat, mu, cells="informative").n == tb.n * int(INFORMATIVE.sum())
    assert faithfulness(hat, mu, cells="non_null").n == int((mu >= 0).sum())
    assert faithfulness(mu, mu).overall == 1.0


def test_misses_name_the_labels(pair):
    _, mu, hat = pair
    f = faithfulness(hat, mu, persona_ids=[f"p{i}" for i in range(len(mu))])
    row = f.misses.iloc[0]
    i, q, s = int(row.persona_id[1:]), QIDS.index(row.question_id), SOURCES.index(row.source)
    for code, label in ((mu[i, q, s], row.mu_star), (hat[i, q, s], row.mu_hat)):
        assert label == (None if code < 0 else question(row.question_id).labels[code])


def test_bad_inputs_are_refused(pair):
    _, mu, hat = pair
    with pytest.raises(ValueError, match="cells"):
        faithfulness(hat, mu, cells="some")
    with pytest.raises(ValueError, match="shape"):
        faithfulness(hat[:, :3], mu[:, :3])


def test_released_atoms_against_our_readout_two_ways():
    """The release's GPT-5.4 μ̂ of the sample persona, scored against our μ*: the table
    equals a direct count over the JSON file."""
    rel = load_release(SAMPLE)
    ids = list(rel.testbed.personas["persona_id"])
    mu = readout(rel.testbed)
    f = faithfulness(atoms_from_frame(rel.extracted_atoms, ids), mu, persona_ids=ids)
    grid = json.loads((SAMPLE / "extracted_atoms" / "s20260321" / f"{ids[0]}.json")
                      .read_text())["extraction"]
    equal = sum((grid[q][s] is None and mu[0, i, j] < 0)
                or (grid[q][s] is not None and mu[0, i, j] == question(q).code(grid[q][s]))
                for i, q in enumerate(QIDS) for j, s in enumerate(SOURCES))
    assert (f.equal, f.n) == (equal, 90)
    assert f.overall > PAPER_EXTRACTION["overall"] / 100 - 0.1  # in the paper's range


def test_atoms_from_frame_refuses_labels_outside_the_answer_space():
    import pandas as pd

    bad = pd.DataFrame({"persona_id": ["a"], "question_id": ["A1"], "source": ["planner"],
                        "value": ["sometimes"]})
    with pytest.raises(ValueError, match="not an answer of A1"):
        atoms_from_frame(bad, ["a"])
    ok = bad.assign(value=["10_to_19"])
    assert atoms_from_frame(ok, ["a", "b"])[:, 0, 1].tolist() == [1, -1]
