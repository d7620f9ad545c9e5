"""The paraphrase error profile (issue 19): measured per cell from the wording-robustness
benchmark, frozen in data/prose/paraphrase_profile.json, one of the noise panel's profiles."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.prose.noise import NoiseProfile, apply_noise, parse_profile
from core.prose.paraphrase import wording_robustness
from core.prose.paraphrase_profile import (
    SETTING,
    SHIPPED,
    load_paraphrase_profile,
    main,
    measure_paraphrase_profile,
    profile_rates,
    profile_words,
)
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import QIDS, SOURCES
from core.testbed.readout import readout

SMALL = TestbedConfig(seeds=(20260322,), personas_per_difficulty=12)


@pytest.fixture(scope="module")
def small():
    tb = generate(SMALL)
    return tb, measure_paraphrase_profile(tb, rate=0.2, seed=3, split=None,
                                          config=SMALL.to_dict())


def test_the_shipped_file_is_a_fresh_computation(capsys):
    """The shipped profile is what the generator computes now from its stated setting (the
    default testbed's test split, rate 0.1, seed 0): ``--check`` recomputes and compares."""
    assert SHIPPED.is_file()
    shipped = load_paraphrase_profile()
    assert {k: shipped[k] for k in SETTING} == SETTING
    assert shipped["testbed"] == TestbedConfig().to_dict() and shipped["n_personas"] == 480
    assert main(["--check"]) == 0
    assert "equal to a fresh computation" in capsys.readouterr().out


def test_the_counts_are_the_benchmark_s_misses(small):
    """On the informative cells the round trip is μ*, so the profile's wrong and empty counts
    are the benchmark's wrong and null misses beyond the round trip's own."""
    tb, data = small
    w = wording_robustness(tb, rate=0.2, seed=3)
    assert data["created"] == 0
    assert int(np.sum(data["wrong"])) == w.wrong_misses > 0
    assert int(np.sum(data["empty"])) == w.null_misses - len(w.round_trip.misses) > 0
    assert np.sum(data["atoms"]) == int((readout(tb) >= 0).sum()) - len(w.round_trip.misses)
    again = measure_paraphrase_profile(tb, rate=0.2, seed=3, split=None,
                                       config=SMALL.to_dict())
    assert again == data and json.loads(json.dumps(data)) == data


def test_the_profile_flips_and_empties_at_its_rates(small):
    tb, data = small
    flips, drops = profile_rates(data)
    prof = NoiseProfile("paraphrase", flips, drops)
    assert prof.uniform_eps is None
    assert prof.mean_error == pytest.approx(float((flips + drops).mean()))
    mu = readout(generate(TestbedConfig(seeds=(20260321,), personas_per_difficulty=40)))
    out = apply_noise(mu, prof, np.random.default_rng(0))
    emptied = (mu >= 0) & (out < 0)
    assert not ((mu < 0) & (out >= 0)).any()  # nothing is created
    assert not (out != mu)[:, (flips + drops) == 0].any()
    q, s = np.unravel_index(np.argmax(drops), drops.shape)
    has = mu[:, q, s] >= 0
    share = emptied[:, q, s][has].mean()
    assert has.sum() > 50 and abs(share - drops[q, s]) < 4 * np.sqrt(
        drops[q, s] * (1 - drops[q, s]) / has.sum()), (QIDS[q], SOURCES[s])
    # without drops the draws are the flips-only profile's, atom for atom
    a = apply_noise(mu, NoiseProfile("f", flips), np.random.default_rng(1))
    b = apply_noise(mu, NoiseProfile("f", flips, np.zeros_like(flips)), np.random.default_rng(1))
    assert np.array_equal(a, b)


def test_the_shipped_profile_by_name_and_in_words():
    prof = parse_profile("paraphrase")
    flips, drops = profile_rates(load_paraphrase_profile())
    assert np.array_equal(prof.rates, flips) and np.array_equal(prof.drops, drops)
    assert prof.drops.any() and prof.rates.sum() > prof.drops.sum()
    words = profile_words(load_paraphrase_profile())
    assert "480 test people of the default testbed" in words
    assert f"{int(np.sum(load_paraphrase_profile()['wrong'])):,} came out as another" in words


@pytest.mark.parametrize("edit,match", [
    (lambda d: d.pop("wrong"), "needs integer tables"),
    (lambda d: d.update(questions=d["questions"][::-1]), "questions and sources"),
    (lambda d: d.update(empty=[[10**6] * 5] * 18), "wrong \\+ empty <= atoms"),
    (lambda d: d.update(atoms=[[1] * 4] * 18), "shape"),
])
def test_a_broken_file_is_refused_naming_it(tmp_path, edit, match):
    data = load_paraphrase_profile()
    edit(data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        load_paraphrase_profile(path)
    with pytest.raises(ValueError, match="no paraphrase profile"):
        load_paraphrase_profile(tmp_path / "absent.json")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not a readable JSON"):
        load_paraphrase_profile(path)


def test_bad_arguments_and_profiles_are_refused(small):
    tb, _ = small
    with pytest.raises(ValueError, match="no persona of split"):
        measure_paraphrase_profile(tb, rate=0.1, seed=0, split="holdout")
    with pytest.raises(ValueError, match="unread must be one of"):
        measure_paraphrase_profile(tb, rate=0.1, seed=0, split=None, unread="line")
    with pytest.raises(ValueError, match="rates \\+ drops must be at most 1"):
        NoiseProfile("x", np.full((18, 5), 0.6), np.full((18, 5), 0.6))
    with pytest.raises(ValueError, match="drops must have shape"):
        NoiseProfile("x", np.zeros((18, 5)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="paraphrase or measured"):
        parse_profile("paraphrase:0.1")
