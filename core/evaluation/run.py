"""Fit, calibrate and score every resolver on every seed of a testbed.

Protocol (``reference/testbed-spec.md`` §2.1, §2.11–2.12): per seed, fit on the 216 train
personas, calibrate on the 96 calibration personas, predict on the 120 test personas; the dev
split is never used. Fits read μ* (the direct readout); ``test_atoms`` may replace the test
split's atoms (extracted atoms μ̂ in "mixed mode", or noisy atoms) without refitting.

Forced and selective variants that share a fit (SSB, ABF, DSNBF, Source Reachability) come
from one fitted object; NBF+SKIP searches its own T jointly with θ, so it is fitted apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..resolvers._common import Prediction, Split
from ..resolvers.abf import ABF
from ..resolvers.baselines import (
    SSB,
    MajorityClass,
    MajorityVote,
    RandomGuess,
    SSBGlobal,
    source_reachability,
)
from ..resolvers.bcf import BCF
from ..resolvers.dawid_skene import DawidSkene
from ..resolvers.nbf import DSNBF, NBF, margin
from ..testbed.labels import ground_truth_codes
from ..testbed.questions import QIDS, QUESTIONS
from ..testbed.readout import readout
from ..testbed.schema import Testbed
from ..testbed.vocab import DIFFICULTIES

__all__ = [
    "FORCED_METHODS",
    "METHOD_LABELS",
    "SELECTIVE_METHODS",
    "SeedRun",
    "predictions_frame",
    "run_seed",
    "run_testbed",
]

FORCED_METHODS = ("random", "majority_class", "ssb", "ssb_global", "majority_vote", "bcf", "abf",
                  "nbf", "dsnbf", "dawid_skene", "source_reachability")
SELECTIVE_METHODS = ("ssb_skip", "abf_skip", "nbf_skip", "dsnbf_skip",
                     "source_reachability_skip")
METHOD_LABELS = {
    "random": "Random", "majority_class": "Majority Class", "ssb": "SSB",
    "ssb_global": "SSB-Global", "majority_vote": "Majority Vote (≡ ArgRAG equal-weight)",
    "bcf": "BCF(4p)", "abf": "ABF", "nbf": "NBF", "dsnbf": "DSNBF",
    "dawid_skene": "Dawid–Skene (no labels)",
    "source_reachability": "Source Reachability (GT-aided)",
    "ssb_skip": "SSB+SKIP", "abf_skip": "ABF+SKIP", "nbf_skip": "NBF+SKIP",
    "dsnbf_skip": "DSNBF+SKIP", "source_reachability_skip": "Source Reachability+SKIP",
}


@dataclass(frozen=True)
class SeedRun:
    """Predictions of every method on one seed's test split.

    Attributes
    ----------
    seed : the seed.
    personas : test personas (persona_id, difficulty, …) in prediction row order.
    gt : int8 (N, 18) ground truth of the test personas.
    atoms : int8 (N, 18, 5) test atoms the methods saw.
    predictions : method name → :class:`~core.resolvers.Prediction`.
    models : method name → fitted resolver (for diagnostics: confusion tables, weights).
    """

    seed: int
    personas: pd.DataFrame
    gt: np.ndarray
    atoms: np.ndarray
    predictions: dict[str, Prediction]
    models: dict = field(default_factory=dict)


def _forced(p: Prediction, name: str) -> Prediction:
    return replace(p, method=name, skipped=np.zeros_like(p.skipped))


def run_seed(
    atoms: np.ndarray,
    gt: np.ndarray,
    personas: pd.DataFrame,
    *,
    methods: Sequence[str] | None = None,
    test_atoms: np.ndarray | None = None,
    train_index: np.ndarray | None = None,
    parallel: bool = False,
) -> SeedRun:
    """Fit on train, calibrate on calibration, predict on test for one seed.

    Parameters
    ----------
    atoms, gt : μ* (P, 18, 5) and GT (P, 18) of this seed's personas.
    personas : the seed's persona rows (``split`` and ``difficulty`` columns are read; the
        difficulty of train personas only, for DSNBF's stratified tables).
    methods : names from :data:`FORCED_METHODS` + :data:`SELECTIVE_METHODS` (default: all).
    test_atoms : atoms to predict on for the test split (default: μ* of the test split).
    train_index : optional subset (positions within the train split) for size ablations.
    parallel : fit DSNBF (the longest fit, mostly large NumPy operations that release the
        GIL) in a second thread while this one fits the others. The fits share nothing and
        draw from their own generators, so the result is the same; on a machine with an idle
        core the wall time drops by about a third (the bias lab's cache miss).
    """
    wanted = list(methods) if methods is not None else list(FORCED_METHODS + SELECTIVE_METHODS)
    unknown = set(wanted) - set(FORCED_METHODS + SELECTIVE_METHODS)
    if unknown:
        raise ValueError(f"unknown method(s): {', '.join(sorted(unknown))}")
    split = personas["split"].to_numpy()
    diff = pd.Categorical(personas["difficulty"], categories=DIFFICULTIES).codes
    tr = Split(atoms[split == "train"], gt[split == "train"], diff[split == "train"])
    if train_index is not None:
        tr = tr.take(np.asarray(train_index))
    ca = Split(atoms[split == "calibration"], gt[split == "calibration"])
    test_mask = split == "test"
    te_atoms = atoms[test_mask] if test_atoms is None else test_atoms
    te_gt = gt[test_mask]
    if te_atoms.shape != (int(test_mask.sum()), len(QIDS), 5):
        raise ValueError(f"test_atoms must have shape {(int(test_mask.sum()), len(QIDS), 5)}")
    preds: dict[str, Prediction] = {}
    models: dict = {}

    def want(*names):
        return any(n in wanted for n in names)

    def shared_fit(name, cls):
        """Forced and selective variants of one fit: (model, {method: prediction})."""
        sel = want(name + "_skip")
        m = cls(selective=sel).fit(tr, ca)
        p = m.predict(te_atoms)
        return m, {name: _forced(p, name), **({name + "_skip": p} if sel else {})}

    pool = ThreadPoolExecutor(max_workers=1) if parallel and want("dsnbf", "dsnbf_skip") else None
    try:
        dsnbf = pool.submit(shared_fit, "dsnbf", DSNBF) if pool is not None else None
        simple = {"random": RandomGuess, "majority_class": MajorityClass,
                  "ssb_global": SSBGlobal, "majority_vote": MajorityVote, "bcf": BCF,
                  "dawid_skene": DawidSkene}
        for name, cls in simple.items():
            if want(name):
                models[name] = cls().fit(tr, ca)
                preds[name] = models[name].predict(te_atoms)
        for name, cls in (("ssb", SSB), ("abf", ABF), ("dsnbf", DSNBF)):
            if want(name, name + "_skip"):
                if name == "dsnbf" and dsnbf is not None:
                    models[name] = None  # keeps the insertion order; filled in below
                    continue
                models[name], fitted = shared_fit(name, cls)
                preds.update(fitted)
        _rest_of_seed(want, tr, ca, te_atoms, te_gt, models, preds)
        if dsnbf is not None:
            models["dsnbf"], fitted = dsnbf.result()
            preds.update(fitted)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    order = [m for m in FORCED_METHODS + SELECTIVE_METHODS if m in preds and m in wanted]
    seed = int(personas["seed"].iloc[0])
    return SeedRun(seed, personas[test_mask].reset_index(drop=True), te_gt, te_atoms,
                   {m: preds[m] for m in order}, models)


def _rest_of_seed(want, tr: Split, ca: Split, te_atoms: np.ndarray, te_gt: np.ndarray,
                  models: dict, preds: dict) -> None:
    """NBF, NBF+SKIP and Source Reachability of :func:`run_seed` (fills the two dicts)."""
    if want("nbf"):
        models["nbf"] = NBF().fit(tr, ca)
        preds["nbf"] = models["nbf"].predict(te_atoms)
    if want("nbf_skip"):
        models["nbf_skip"] = NBF(selective=True).fit(tr, ca)
        preds["nbf_skip"] = models["nbf_skip"].predict(te_atoms)
    if want("source_reachability"):
        preds["source_reachability"] = source_reachability(te_atoms, te_gt)
    if want("source_reachability_skip"):
        p = source_reachability(te_atoms, te_gt, skip_on_miss=True)
        preds["source_reachability_skip"] = replace(p, method="source_reachability_skip")


def run_testbed(tb: Testbed, *, methods: Sequence[str] | None = None,
                test_atoms: dict[int, np.ndarray] | None = None) -> list[SeedRun]:
    """:func:`run_seed` for every seed of ``tb`` (GT and μ* computed here)."""
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    runs = []
    seeds = tb.personas["seed"].to_numpy()
    for seed in pd.unique(seeds):
        m = seeds == seed
        runs.append(run_seed(mu[m], gt[m], tb.personas[m].reset_index(drop=True),
                             methods=methods,
                             test_atoms=None if test_atoms is None else test_atoms.get(int(seed))))
    return runs


def predictions_frame(runs: Sequence[SeedRun], *, run_id: str = "") -> pd.DataFrame:
    """Long table: run_id, method, seed, persona_id, question_id, answer, confidence, skipped,
    margin (posterior top1 − top2 where the method has a posterior, else NaN), correct — the
    store's ``predictions`` table plus a ``correct`` column."""
    frames = []
    for r in runs:
        n = len(r.personas)
        pid = np.repeat(r.personas["persona_id"].to_numpy(), len(QIDS))
        qid = np.tile(np.asarray(QIDS, dtype=object), n)
        for name, p in r.predictions.items():
            labels = np.stack([np.asarray(q.labels, dtype=object)[p.answer[:, j]]
                               for j, q in enumerate(QUESTIONS)], axis=1).reshape(-1)
            proba = p.extra.get("proba")
            marg = (margin(proba).reshape(-1) if proba is not None
                    else np.full(n * len(QIDS), np.nan))
            frames.append(pd.DataFrame({
                "run_id": run_id, "method": name, "seed": r.seed, "persona_id": pid,
                "question_id": qid, "answer": labels,
                "confidence": p.confidence.reshape(-1).astype(float),
                "skipped": p.skipped.reshape(-1), "margin": marg,
                "correct": (p.answer == r.gt).reshape(-1),
            }))
    return pd.concat(frames, ignore_index=True)
