"""Parity with crowd-kit 1.4.2's frozen outputs (issue 21, point 3).

``tests/fixtures/crowdkit/manifest.json`` (written once by ``benchmarks/peer_fixtures.py`` in
its own environment) lists datasets and runs; each run's files are gzip CSVs: ``proba``
(item, label, p; entries below ``proba_min`` left out), ``labels`` (item, label, p) and, per
method, ``priors``, ``errors`` (worker, observed, true, p), ``workers`` (skill or alpha) and
``items`` (beta). Every run of MajorityVote, DawidSkene, OneCoinDawidSkene and GLAD is
compared with our resolver under the global scope (crowd-kit's label set): posteriors and
fitted parameters within 1e-6, the same iteration count and loss history, and the same
answers except where crowd-kit's two best posteriors tie within 1e-9. Ties go to the
smallest label: the fixtures were made under pandas 2.3.3, whose ``unstack`` sorts the label
columns (under pandas 3 crowd-kit's order is first-seen, our ``tie="first_seen"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.fusion.dawid_skene import dawid_skene
from core.fusion.diagnostics import source_summary
from core.fusion.glad import glad
from core.fusion.importer import read_claims
from core.fusion.one_coin import one_coin_em
from core.fusion.vote import majority_vote

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "crowdkit"
MANIFEST = FIXTURES / "manifest.json"
OURS = {"MajorityVote", "DawidSkene", "OneCoinDawidSkene", "GLAD"}
#: I × K and pairs × K above this are too large for the test budget under the global scope
MAX_DENSE = 10_000_000
#: GLAD's M-step (25 conjugate-gradient steps, not converged) amplifies rounding ~1000×
#: per round; on this copy-cluster set crowd-kit's Q and ours part at the 8th digit in
#: round 5 and the runs end at different fixed points (57 against 8 rounds).
CHAOTIC = {"synth_copy3/GLAD"}


def _manifest() -> dict:
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {"runs": {}}


RUNS = {k: v for k, v in _manifest()["runs"].items() if v["method"] in OURS}


def _read(frame_path: Path) -> pd.DataFrame:
    return pd.read_csv(frame_path, dtype=str, keep_default_na=False)


def _ours(method: str, claims):
    if method == "MajorityVote":
        return majority_vote(claims, tie="smallest")
    if method == "DawidSkene":
        return dawid_skene(claims, tie="smallest")
    if method == "OneCoinDawidSkene":
        return one_coin_em(claims, variant="crowdkit", tie="smallest")
    return glad(claims)


@pytest.fixture(scope="module")
def tables():
    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            path = ROOT / _manifest()["datasets"][name]["path"]
            # crowd-kit's label set is the claimed labels: a truth nobody claims is no class
            cache[name] = read_claims(path, scope="global", columns={"truth": None}).claims
        return cache[name]
    return get


def _dense_size(run: dict) -> int:
    ds = _manifest()["datasets"][run["dataset"]]
    return ds["items"] * run["labels"]


#: Runs compared label by label: everything but the global-scope runs too large to hold
#: densely (Flight's whole day: 7,082 items x 2,271 labels), which
#: test_large_runs_agree_on_accuracy compares by their answers' accuracy instead.
DENSE = sorted(k for k, v in RUNS.items() if _dense_size(v) <= MAX_DENSE and k not in CHAOTIC)
LARGE = sorted(k for k, v in RUNS.items()
               if _dense_size(v) > MAX_DENSE and v["method"] == "MajorityVote")
#: Not compared here, and why: crowd-kit's Dawid-Skene on Flight's whole day holds 35
#: confusion matrices of 2,271 x 2,271 labels (180 M cells, 9 GB and 156 s in crowd-kit);
#: test_crowdkit_fixtures checks its stored accuracy (.748), and docs/fusion.md gives ours
#: under the item scope (.759).
NOT_COMPARED = {"flight_all/DawidSkene"}


def test_the_fixtures_ship_and_every_run_is_compared():
    """The fixtures are in the repository (no run can be skipped for want of them), and every
    run of the four methods is in exactly one comparison below."""
    assert MANIFEST.is_file() and len(RUNS) >= 20
    assert set(DENSE) | set(LARGE) | CHAOTIC | NOT_COMPARED == set(RUNS)
    assert LARGE == ["flight_all/MajorityVote"]
    assert not set(DENSE) & NOT_COMPARED


@pytest.mark.parametrize("key", LARGE)
def test_large_runs_agree_on_accuracy(key):
    """Majority vote on Flight's whole day, item scope (the dense global layout would need
    16 M cells): the same number of correct gold answers as crowd-kit's, ties to the
    smallest label as under the fixtures' pandas."""
    run = RUNS[key]
    c = read_claims(ROOT / _manifest()["datasets"][run["dataset"]]["path"]).claims
    r = majority_vote(c, tie="smallest")
    known = c.truth >= 0
    assert int(known.sum()) == run["n_gold"]
    assert int((r.labels[known] == c.truth[known]).sum()) == run["n_correct"]


@pytest.mark.parametrize("key", sorted(CHAOTIC))
def test_chaotic_glad_parts_only_after_round_four(key, tables):
    """GLAD's M-step (25 unconverged conjugate-gradient steps) amplifies rounding ~1000x a
    round: on the copy-cluster set the loss histories agree to 1e-6 for four rounds, then
    part (the runs end at different fixed points, 8 rounds against crowd-kit's 57, with the
    same answer on 85 % of items)."""
    run = RUNS[key]
    c = tables(run["dataset"])
    r = glad(c)
    np.testing.assert_allclose(r.trace[:4], run["loss_history"][:4], atol=1e-6)
    assert abs(r.trace[5] - run["loss_history"][5]) > 1e-6  # the parting is real
    lab = _read(FIXTURES / run["files"]["labels"])
    got = np.asarray(c.classes, object)[r.labels[pd.Index(c.items).get_indexer(lab["item"])]]
    assert (got == lab["label"].to_numpy(object)).mean() >= 0.80


@pytest.mark.parametrize("key", DENSE)
def test_matches_crowdkit(key, tables):
    run = RUNS[key]
    c = tables(run["dataset"])
    r = _ours(run["method"], c)
    files = {k: FIXTURES / v for k, v in run["files"].items()}
    items, classes = pd.Index(c.items), pd.Index(c.classes)
    sources = pd.Index(c.sources)

    p = _read(files["proba"])
    theirs = np.zeros((c.n_items, c.n_classes))
    theirs[items.get_indexer(p["item"]), classes.get_indexer(p["label"])] = p["p"].astype(float)
    np.testing.assert_allclose(r.posterior_matrix(), theirs, atol=1e-6)

    lab = _read(files["labels"])
    top2 = np.sort(theirs, axis=1)[:, -2:]
    tied = (top2[:, 1] - top2[:, 0] < 1e-9)[items.get_indexer(lab["item"])]
    got = np.asarray(c.classes, object)[r.labels[items.get_indexer(lab["item"])]]
    differ = (got != lab["label"].to_numpy(object)) & ~tied
    assert not differ.any(), f"{int(differ.sum())} answers differ"

    if run.get("iterations") is not None:
        assert r.iterations == run["iterations"]
        # GLAD's Q moves with the M-step's rounding (2e-6 on Mozafari by round 2)
        tol = 1e-5 if run["method"] == "GLAD" else 1e-6
        np.testing.assert_allclose(r.trace, run["loss_history"], atol=tol)
    if "priors" in files:
        pri = _read(files["priors"])
        np.testing.assert_allclose(r.params["prior"][classes.get_indexer(pri["label"])],
                                   pri["prior"].astype(float), atol=1e-6)
    if "errors" in files:
        e = _read(files["errors"])
        assert "confusion" in r.params  # every fixture is below the dense cap
        mine = r.params["confusion"][sources.get_indexer(e["worker"]),
                                     classes.get_indexer(e["observed"]),
                                     classes.get_indexer(e["true"])]
        np.testing.assert_allclose(mine, e["p"].astype(float), atol=1e-6)
    if "workers" in files:
        w = _read(files["workers"])
        col = [k for k in w.columns if k != "worker"][0]
        idx = sources.get_indexer(w["worker"])
        mine = {"skill": (source_summary(c, r).agreement if run["method"] == "MajorityVote"
                          else r.params.get("accuracy")),
                "alpha": r.params.get("alpha")}[col]
        _close(run["method"], mine[idx], w[col].astype(float))
    if "items" in files:
        b = _read(files["items"])
        _close(run["method"], r.params["beta"][items.get_indexer(b["item"])],
               b["beta"].astype(float))


def _close(method: str, mine, theirs) -> None:
    """Parameters within 1e-6; GLAD's α and β come from one more unconverged CG M-step
    after the posteriors, whose path parts from crowd-kit's (up to .05 on Mozafari), so for
    them only the pattern is compared (correlation > .99)."""
    mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
    if method == "GLAD":
        assert np.corrcoef(mine, theirs)[0, 1] > 0.99
    else:
        np.testing.assert_allclose(mine, theirs, atol=1e-6)


def test_fixture_datasets_are_the_shipped_files():
    m = _manifest()
    assert m.get("datasets"), "tests/fixtures/crowdkit/manifest.json lists no data set"
    for name, ds in m["datasets"].items():
        c = read_claims(ROOT / ds["path"]).claims
        assert (c.n_claims, c.n_items, c.n_sources) == (ds["rows"], ds["items"],
                                                        ds["sources"]), name
