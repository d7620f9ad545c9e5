"""Fit, calibrate and score every resolver on every seed of a testbed.

Protocol (the benchmark specification §2.1, §2.11–2.12): per seed, fit on the 216 train
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
from ..resolvers.nbf import margin
from ..resolvers.registry import (
    RESOLVERS,
    Resolver,
    forced_methods,
    method_labels,
    selective_methods,
)
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
    "run_seeds",
    "run_testbed",
    "seed_rows",
]

#: Derived views of :data:`core.resolvers.registry.RESOLVERS` (the single source): the
#: forced names in board order, the selective ``_skip`` names, and every display label.
FORCED_METHODS = forced_methods()
SELECTIVE_METHODS = selective_methods()
METHOD_LABELS = method_labels()


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

    def fit(r: Resolver):
        """Every wanted variant of one resolver: ({name: model}, {method: prediction})."""
        sel = r.selective and r.skip_name in wanted
        if r.oracle is not None:
            out = {r.name: r.oracle(te_atoms, te_gt)} if r.name in wanted else {}
            if sel:
                out[r.skip_name] = replace(r.oracle(te_atoms, te_gt, skip_on_miss=True),
                                           method=r.skip_name)
            return {}, out
        if r.selective and not r.shared_fit:  # the selective variant searches its own fit
            fitted = {n: r.make(selective=n != r.name).fit(tr, ca)
                      for n in (r.name, r.skip_name) if n in wanted}
            return fitted, {n: m.predict(te_atoms) for n, m in fitted.items()}
        m = (r.make(selective=True) if sel else r.make()).fit(tr, ca)
        p = m.predict(te_atoms)
        if not r.selective:
            return {r.name: m}, {r.name: p}
        return {r.name: m}, {r.name: _forced(p, r.name), **({r.skip_name: p} if sel else {})}

    todo = [r for r in RESOLVERS
            if r.name in wanted or (r.selective and r.skip_name in wanted)]
    heavy = [r for r in todo if r.heavy] if parallel else []
    pool = ThreadPoolExecutor(max_workers=1) if heavy else None
    try:
        pending = {r.name: pool.submit(fit, r) for r in heavy} if pool is not None else {}
        for r in todo:
            if r.name not in pending:
                fitted, predicted = fit(r)
                models.update(fitted)
                preds.update(predicted)
        for future in pending.values():
            fitted, predicted = future.result()
            models.update(fitted)
            preds.update(predicted)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    order = [m for m in FORCED_METHODS + SELECTIVE_METHODS if m in preds and m in wanted]
    # the fitted models in registry order, whichever thread fitted them
    fitted_order = [n for r in todo for n in (r.name, r.skip_name) if n in models]
    fitted_order += [n for n in models if n not in fitted_order]
    seed = int(personas["seed"].iloc[0])
    return SeedRun(seed, personas[test_mask].reset_index(drop=True), te_gt, te_atoms,
                   {m: preds[m] for m in order}, {n: models[n] for n in fitted_order})


#: The splits every seed needs: fit on train, calibrate on calibration, score on test.
SPLITS = ("train", "calibration", "test")


def seed_rows(personas: pd.DataFrame) -> list[tuple[int, np.ndarray]]:
    """``(seed, rows)`` for every seed of ``personas``, in order of first appearance, with
    ``rows`` the boolean mask of its persona rows.

    Checks every seed before anything is fitted: a ``ValueError`` names the first seed that
    lacks a split of :data:`SPLITS` ("random seed 7 has no calibration, test people").
    """
    seeds = personas["seed"].to_numpy()
    split = personas["split"].to_numpy()
    out = []
    for seed in pd.unique(seeds):
        m = seeds == seed
        missing = [s for s in SPLITS if not (split[m] == s).any()]
        if missing:
            raise ValueError(f"random seed {seed} has no {', '.join(missing)} people")
        out.append((int(seed), m))
    return out


def run_seeds(atoms: np.ndarray, gt: np.ndarray, personas: pd.DataFrame, *,
              methods: Sequence[str] | None = None,
              test_atoms: np.ndarray | None = None) -> list[SeedRun]:
    """:func:`run_seed` for every seed of ``personas`` (rows aligned with ``atoms``, ``gt``
    and, when given, ``test_atoms``, of which only the test rows are read), in the order of
    :func:`seed_rows`, which checks the splits first."""
    test = personas["split"].to_numpy() == "test"
    return [run_seed(atoms[m], gt[m], personas[m].reset_index(drop=True), methods=methods,
                     test_atoms=None if test_atoms is None else test_atoms[m & test])
            for _seed, m in seed_rows(personas)]


def run_testbed(tb: Testbed, *, methods: Sequence[str] | None = None,
                test_atoms: dict[int, np.ndarray] | None = None) -> list[SeedRun]:
    """:func:`run_seed` for every seed of ``tb`` (GT and μ* computed here); ``test_atoms``
    maps a seed to the atoms of its test personas."""
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    return [run_seed(mu[m], gt[m], tb.personas[m].reset_index(drop=True), methods=methods,
                     test_atoms=None if test_atoms is None else test_atoms.get(seed))
            for seed, m in seed_rows(tb.personas)]


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
