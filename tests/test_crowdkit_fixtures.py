"""The frozen crowd-kit 1.4.2 outputs in ``tests/fixtures/crowdkit/`` are whole and self-consistent.

They are written by ``benchmarks/peer_fixtures.py`` in a separate venv (crowd-kit is not in this
one); ``core.fusion``'s parity tests compare against them. Here: the manifest covers every
(dataset, method), its inputs are the files on disk (sha256), each accuracy is recomputed from
the fixture's labels and the shipped truth, posteriors are distributions, MajorityVote's ties
follow the documented rule, and a plain numpy restatement of crowd-kit's Dawid–Skene and one-coin
EM (the algorithm the fixtures' docstring describes) reproduces the frozen posteriors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
FX = ROOT / "tests" / "fixtures" / "crowdkit"
MANIFEST = json.loads((FX / "manifest.json").read_text())
RUNS = MANIFEST["runs"]
FLOOR = MANIFEST["crowdkit_floor"]


@cache
def claims(dataset: str) -> pd.DataFrame:
    path = ROOT / MANIFEST["datasets"][dataset]["path"]
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def read_fx(rel: str) -> pd.DataFrame:
    df = pd.read_csv(FX / rel, dtype=str, keep_default_na=False)
    for col in ("p", "prior", "skill"):
        if col in df:
            df[col] = df[col].astype(float)
    return df


def test_manifest_versions_and_coverage():
    v = MANIFEST["versions"]
    assert v["crowd-kit"] == "1.4.2"
    assert tuple(int(x) for x in v["scikit-learn"].split(".")[:2]) < (1, 6)
    assert v["pandas"].startswith("2.")  # the MV tie rule below holds for pandas 2.x
    spec = importlib.util.spec_from_file_location("peer_fixtures",
                                                  ROOT / "benchmarks" / "peer_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports only numpy and pandas at module level
    expected = {f"{d}/{m}" for d in mod.DATASETS for m in mod.METHODS}
    assert set(RUNS) | set(MANIFEST["skipped"]) == expected
    assert not set(RUNS) & set(MANIFEST["skipped"])
    assert set(MANIFEST["datasets"]) == set(mod.DATASETS)
    # every dataset has the three resolvers the issue names
    for d in mod.DATASETS:
        for m in ("MajorityVote", "DawidSkene"):
            assert f"{d}/{m}" in RUNS
    # the synthetic claim tables are exactly what the seeded generators produce
    for name in mod.SYNTHETIC:
        pd.testing.assert_frame_equal(getattr(mod, name)(), claims(name), check_dtype=False)
    total = sum(p.stat().st_size for p in FX.rglob("*") if p.is_file())
    assert total < 6_000_000


@pytest.mark.parametrize("dataset", sorted(MANIFEST["datasets"]))
def test_inputs_unchanged(dataset):
    info = MANIFEST["datasets"][dataset]
    path = ROOT / info["path"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == info["sha256"]
    d = claims(dataset)
    assert (len(d), d.item.nunique(), d.source.nunique(), d.claim.nunique()) == (
        info["rows"], info["items"], info["sources"], info["labels"])


@pytest.mark.parametrize("key", sorted(RUNS))
def test_accuracy_and_posteriors(key):
    run = RUNS[key]
    d = claims(run["dataset"])
    for rel in run["files"].values():
        assert (FX / rel).is_file()
    lab = read_fx(run["files"]["labels"])
    assert lab.item.is_unique and set(lab.item) == set(d.item) and len(lab) == run["items"]
    assert set(lab.label) <= set(d.claim)

    gold = d[d.truth != ""].groupby("item").truth.first()
    pred = lab.set_index("item").label.reindex(gold.index)
    n_correct = int((pred == gold).sum())
    assert (len(gold), n_correct) == (run["n_gold"], run["n_correct"])
    assert n_correct / len(gold) == pytest.approx(run["accuracy"], abs=1e-12)
    assert ((lab.p > 0) & (lab.p <= 1 + 1e-12)).all()

    if run["proba"] != "full":
        assert run["proba"] == "top" and "proba" not in run["files"]
        return
    pr = read_fx(run["files"]["proba"])
    assert len(pr) == run["proba_rows"] and not pr.duplicated(["item", "label"]).any()
    assert (pr.p > MANIFEST["proba_min"]).all()
    k = run["labels"]
    floor_method = run["method"] in ("DawidSkene", "OneCoinDawidSkene")
    if floor_method:
        assert (pr.p != FLOOR).all()
    # rows dropped from the file are <= 1e-10 (DS floor) or <= 1e-12 (others) each
    slack = k * (FLOOR if floor_method else MANIFEST["proba_min"]) + 1e-12
    sums = pr.groupby("item").p.sum()
    assert set(sums.index) == set(d.item)
    assert ((sums - 1).abs() <= slack).all(), (sums - 1).abs().max()
    # the chosen label carries the item's largest posterior
    top = pr.groupby("item").p.max()
    chosen = pr.merge(lab, on=["item", "label"], suffixes=("", "_lab"))
    assert len(chosen) == len(lab)
    np.testing.assert_array_equal(chosen.p.to_numpy(), chosen.p_lab.to_numpy())
    np.testing.assert_allclose(chosen.set_index("item").p.reindex(top.index), top, rtol=0,
                               atol=1e-15)


@pytest.mark.parametrize("dataset", sorted(MANIFEST["datasets"]))
def test_majority_vote_tie_rule(dataset):
    """crowd-kit's MV (pandas 2.x): most claims, ties to the smallest label in string order."""
    d = claims(dataset)
    lab = read_fx(RUNS[f"{dataset}/MajorityVote"]["files"]["labels"]).set_index("item")
    c = d.groupby(["item", "claim"]).size().rename("n").reset_index()
    c = c.sort_values(["item", "n", "claim"], ascending=[True, False, True], kind="stable")
    first = c.groupby("item").head(1).set_index("item")
    assert (lab.label.reindex(first.index) == first.claim).all()
    share = first.n / d.groupby("item").size().reindex(first.index)
    np.testing.assert_allclose(lab.p.reindex(first.index), share, rtol=0, atol=1e-15)
    n_max = c.groupby("item").n.transform("max")
    ties = int(((c.n == n_max).groupby(c.item).sum() > 1).sum())
    assert ties == RUNS[f"{dataset}/MajorityVote"]["tied_items"]


def crowdkit_em(d: pd.DataFrame, one_coin: bool, n_iter: int = 100, tol: float = 1e-5):
    """crowd-kit 1.4.2's DawidSkene / OneCoinDawidSkene restated in numpy (see the fixtures'
    docstring): MV-fraction start, 1e-10 floors, no smoothing, priors = posterior means, stop
    when the per-claim pseudo-ELBO (ln prior counted once per claim) gains less than ``tol``;
    returns the in-place-clipped posteriors and the loss history."""
    items, ii = np.unique(d.item.to_numpy(), return_inverse=True)
    labs, li = np.unique(d.claim.to_numpy(), return_inverse=True)
    n_src = d.source.nunique()
    si = np.unique(d.source.to_numpy(), return_inverse=True)[1]
    n, k = len(items), len(labs)
    q = np.zeros((n, k))
    np.add.at(q, (ii, li), 1.0)
    q /= q.sum(1, keepdims=True)
    used = np.zeros((n_src, k), bool)
    used[si, li] = True

    def m_step(q):  # errors[w, observed y, true c]
        if one_coin:
            skill = np.bincount(si, q[ii, li], n_src) / np.bincount(si, minlength=n_src)
            e = np.repeat(((1 - skill) / (k - 1))[:, None, None], k, 1).repeat(k, 2)
            e[:, np.arange(k), np.arange(k)] = skill[:, None]
            return np.clip(e, FLOOR, 1 - FLOOR)
        e = np.zeros((n_src, k, k))
        np.add.at(e, (si, li), q[ii])
        e = np.where(used[:, :, None], np.maximum(e, FLOOR), 0.0)
        return e / e.sum(1, keepdims=True)

    prior, err, loss, hist = q.mean(0), m_step(q), -np.inf, []
    for _ in range(n_iter):
        ll = np.tile(np.log2(np.maximum(prior, FLOOR)), (n, 1))
        np.add.at(ll, ii, np.log2(err[si, li]))
        q = np.exp2(ll - ll.max(1, keepdims=True))
        q /= q.sum(1, keepdims=True)
        prior, err = q.mean(0), m_step(q)
        joint = (q[ii] * (np.log(err[si, li]) + np.log(np.maximum(prior, FLOOR)))).sum()
        qc = np.maximum(q, FLOOR)
        hist.append((joint - (qc * np.log(qc)).sum()) / len(d))
        if hist[-1] - loss < tol:
            break
        loss = hist[-1]
    return pd.DataFrame(np.maximum(q, FLOOR), index=items, columns=labs), hist


@pytest.mark.parametrize("key", sorted(k for k, r in RUNS.items() if r["labels"] <= 10 and
                                       r["method"] in ("DawidSkene", "OneCoinDawidSkene")))
def test_dawid_skene_restated(key):
    run = RUNS[key]
    post, hist = crowdkit_em(claims(run["dataset"]), run["method"] == "OneCoinDawidSkene")
    assert len(hist) == run["iterations"]
    np.testing.assert_allclose(hist, run["loss_history"], rtol=0, atol=1e-12)
    pr = read_fx(run["files"]["proba"])
    ref = post.to_numpy()[post.index.get_indexer(pr.item), post.columns.get_indexer(pr.label)]
    np.testing.assert_allclose(ref, pr.p, rtol=0, atol=1e-9)
    absent = np.ones(post.shape, bool)
    absent[post.index.get_indexer(pr.item), post.columns.get_indexer(pr.label)] = False
    assert (post.to_numpy()[absent] == FLOOR).all()
