"""What the memory stops read from the store, loaded once per :class:`~core.tour.TourData`.

Source: the multi-source memory benchmark (seed 000): §2.2 (splits; resolvers are fitted on
the train split of the same seed and scored on its test split), §3 (the best single source,
"SSB": per question the source with the most right answers on the training people) and §4.1
(the main comparison). Everything here goes through :meth:`TourData.memo`, so the five stops
share one load: ``"memory:runs"`` (the cached predictions, shared with every stop that reads
them), ``"memory:pool"``, ``"memory:testbed"`` and ``"memory:no-dropout"``.

Invariant (``tests/test_tour_memory.py``): every array of a :class:`MemoryPool` has the
pool's persona rows in the same order as :attr:`MemoryPool.personas`, and the test
personas of :func:`pool_testbed` are those rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.evaluation.cached import load_arrays, load_runs
from core.resolvers._common import Split
from core.resolvers.baselines import SSB
from core.store import StoreError, load_testbed, query_df
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.questions import QIDS, SOURCES
from core.testbed.readout import readout
from core.testbed.schema import Testbed

from .model import TourData

__all__ = ["MEMORY_METHODS", "UNITS", "MemoryPool", "NoDropout", "daily_habit", "memory_pool",
           "no_dropout", "pool_testbed", "store_settings",
           "walkthrough_link"]

#: The cached resolvers the memory stops read (forced answers, no abstention).
MEMORY_METHODS = ("majority_vote", "ssb", "nbf", "dsnbf")


@dataclass(frozen=True, eq=False)
class MemoryPool:
    """Every test person of every batch in the store, stacked, with the cached answers.

    Attributes
    ----------
    personas : DataFrame
        One row per test person (``seed``, ``persona_id``, ``difficulty``, ``name``, …), in
        the store's row order within each batch, batches in seed order.
    gt : ndarray of shape (N, 18), int8
        The true answers (display codes).
    atoms : ndarray of shape (N, 18, 5), int8
        Each source's answer read directly from its records (−1 = no answer).
    answers : mapping
        Method name of :data:`MEMORY_METHODS` → its cached answers, shape (N, 18).
    ssb_source : ndarray of shape (N, 18), int64
        The source the best single source trusts for each question, fitted on the training
        people of the person's batch (−1 where the batch has no training people).
    n_train : mapping
        Seed → number of training people the best single source was chosen on.
    """

    personas: pd.DataFrame
    gt: np.ndarray
    atoms: np.ndarray
    answers: Mapping[str, np.ndarray]
    ssb_source: np.ndarray
    n_train: Mapping[int, int]

    @property
    def n(self) -> int:
        """Number of test people."""
        return len(self.personas)


def _runs(data: TourData) -> list:
    return data.memo("memory:runs", lambda: load_runs(data.connection()))


def _build_pool(data: TourData) -> MemoryPool:
    runs = _runs(data)
    missing = [m for m in MEMORY_METHODS if any(m not in r.predictions for r in runs)]
    if missing:
        raise StoreError(f"the store's cached run lacks {', '.join(missing)}; rebuild it")
    every, gt_all, atoms_all = load_arrays(data.connection())
    seed_all = every["seed"].to_numpy()
    train_all = every["split"].astype(str).to_numpy() == "train"
    parts, sources, n_train = [], [], {}
    for r in runs:
        train = train_all & (seed_all == r.seed)
        n_train[int(r.seed)] = int(train.sum())
        if train.any():
            chosen = SSB().fit(Split(atoms_all[train], gt_all[train])).source_
        else:
            chosen = np.full(len(QIDS), -1)
        sources.append(np.broadcast_to(np.asarray(chosen, np.int64), (len(r.gt), len(QIDS))))
        parts.append(r.personas)
    personas = pd.concat(parts, ignore_index=True)
    return MemoryPool(
        personas=personas,
        gt=np.concatenate([r.gt for r in runs]),
        atoms=np.concatenate([r.atoms for r in runs]),
        answers=MappingProxyType({m: np.concatenate([r.predictions[m].answer for r in runs])
                                  for m in MEMORY_METHODS}),
        ssb_source=np.concatenate(sources),
        n_train=MappingProxyType(n_train))


def memory_pool(data: TourData) -> MemoryPool:
    """The stacked test people of every batch, with the cached answers (memo
    ``"memory:pool"``).

    Raises
    ------
    LookupError
        Without a store (the tour shows "needs the store").
    StoreError
        When the store has no cached predictions.
    """
    return data.memo("memory:pool", lambda: _build_pool(data))


def _build_testbed(data: TourData) -> Testbed:
    pool = memory_pool(data)
    con = data.connection()
    parts = []
    for seed in pd.unique(pool.personas["seed"]):
        tb = load_testbed(con, seed=int(seed))
        test = tb.subset(tb.personas["split"].astype(str).to_numpy() == "test")
        want = pool.personas.loc[pool.personas["seed"] == seed, "persona_id"].astype(str)
        if test.personas["persona_id"].astype(str).tolist() != want.tolist():
            raise StoreError("the store's test people do not match its cached predictions; "
                             "rebuild it")
        parts.append(test)
    return parts[0] if len(parts) == 1 else Testbed.concat(parts)


def pool_testbed(data: TourData) -> Testbed:
    """The 30 days and every source's records of the pool's people, in pool order (memo
    ``"memory:testbed"``)."""
    return data.memo("memory:testbed", lambda: _build_testbed(data))


def _config(data: TourData) -> dict | None:
    meta = query_df(data.connection(), "SELECT key, value FROM meta WHERE key IN "
                                        "('origin', 'config_json')")
    values = dict(meta.itertuples(index=False))
    if values.get("origin") != "generated":
        return None
    try:
        config = json.loads(values.get("config_json", ""))
    except (TypeError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def store_settings(data: TourData) -> tuple[tuple[str, str], ...]:
    """The settings every memory stop runs under, in words (the store's generator knobs)."""
    config = _config(data)
    if config is None:
        knobs = "as released (the store was imported, not generated here)"
    else:
        knobs = (f"bias scale {float(config.get('bias_scale', 1.0)):g}, dropout scale "
                 f"{float(config.get('dropout_scale', 1.0)):g} (1 is the document's setting)")
    return (("Sources' distortions", knobs),
            ("Sources' answers", "read directly from each source's records by a fixed rule "
                                 "(no extraction step)"),
            ("Resolvers", "trained on the training people of the same batch, answering for "
                          "its test people (the store's cached answers)"))


@dataclass(frozen=True, eq=False)
class NoDropout:
    """The pool's people regenerated with every log day recorded (dropout scale 0).

    Attributes
    ----------
    device : ndarray of shape (N, 18), int8
        The device log's answers had it recorded every day.
    gt : ndarray of shape (N, 18), int8
        The true answers in that world (questions that read the logs' gaps can change).
    lost : ndarray of shape (N, 30), bool
        The days the device log lost in the store (the same people and days).
    """

    device: np.ndarray
    gt: np.ndarray
    lost: np.ndarray


def _build_no_dropout(data: TourData) -> NoDropout | str:
    config = _config(data)
    if config is None:
        return ("this store was imported, not generated here, so its people cannot be "
                "regenerated with every day recorded")
    pool = memory_pool(data)
    device, gt = [], []
    for seed in pd.unique(pool.personas["seed"]):
        try:
            base = TestbedConfig(**{**config, "seeds": (int(seed),)})
        except (TypeError, ValueError):
            return ("its generator settings are not ones this version can read, so its "
                    "people cannot be regenerated with every day recorded")
        same = generate(base)
        full = generate(TestbedConfig(**{**base.to_dict(), "seeds": (int(seed),),
                                         "dropout_scale": 0.0}))
        test = same.personas["split"].astype(str).to_numpy() == "test"
        rows = (pool.personas["seed"] == seed).to_numpy()
        if (same.personas.loc[test, "persona_id"].astype(str).tolist()
                != pool.personas.loc[rows, "persona_id"].astype(str).tolist()
                or not np.array_equal(readout(same)[test], pool.atoms[rows])):
            return ("regenerating this store's people does not reproduce its records (it was "
                    "built by another version of the generator); rebuild it")
        device.append(readout(full)[test][..., SOURCES.index("device_log")])
        gt.append(ground_truth_codes(full)[0][test])
    lost = ~pool_testbed(data).device["available"].astype(bool)
    return NoDropout(np.concatenate(device), np.concatenate(gt), lost)


def no_dropout(data: TourData) -> NoDropout | str:
    """The device's answers and the truth with every log day recorded, or why not (memo
    ``"memory:no-dropout"``).

    Regenerates each batch from the store's own generator settings twice: as stored (its
    answers must equal the store's, else the store came from another generator) and with the
    dropout scale at 0. Each source draws from its own random stream, so only which days
    are recorded (and the logs' small measurement noise, which no answer reads) changes
    (seed 000 §8.3 stage 3; the Bias lab's dropout scale).
    """
    return data.memo("memory:no-dropout", lambda: _build_no_dropout(data))


#: The daily habits the memory stops draw, with their axis titles (units in words).
UNITS: Mapping[str, str] = MappingProxyType({
    "sleep_hours": "Sleep (hours)", "work_hours": "Work (hours)",
    "home_meals": "Home-cooked meals", "outside_meals": "Meals not cooked at home",
    "exercise_min": "Exercise (minutes)"})


def daily_habit(tb: Testbed, metric: str) -> dict[str, np.ndarray]:
    """One daily habit for every person of ``tb`` at once, as the Walkthrough's source view
    draws it (:func:`core.evaluation.walkthrough.views.day_views`, vectorised).

    Parameters
    ----------
    tb : Testbed
    metric : str
        A key of :data:`UNITS`.

    Returns
    -------
    dict
        ``"latent"`` (what happened, (P, 30)) and, under its name in :data:`SOURCES`, every
        source that states the habit in the same unit: the profile's stated average (P,),
        the other sources day by day (P, 30), NaN on a day a log did not record. Sources
        that record something else (delivery payments for home cooking, the device's focus
        minutes for work) are left out.
    """
    ev, pr, pl, sr = tb.events, tb.profile, tb.planner, tb.self_report
    ob, dv = tb.objective, tb.device
    avail_o, avail_d = ob["available"].astype(bool), dv["available"].astype(bool)

    def f(x) -> np.ndarray:
        return np.asarray(x, float)

    if metric == "sleep_hours":
        return {"latent": f(ev["duration_h"]), "profile_ltm": f(pr["duration_h"]),
                "planner": f(pl["duration_h"]), "daily_self_report": f(sr["duration_h"]),
                "device_log": np.where(avail_d, f(dv["duration_h"]), np.nan)}
    if metric == "work_hours":
        return {"latent": f(ev["hours"]), "profile_ltm": f(pr["hours_mean"]),
                "planner": f(pl["hours_limit"]), "daily_self_report": f(sr["hours"]),
                "objective_log": np.where(avail_o, f(ob["work_block_min"]) / 60.0, np.nan)}
    if metric == "home_meals":
        return {"latent": f(ev["home_cooked"]), "profile_ltm": f(pr["home_cooked_mean"]),
                "daily_self_report": f(sr["home_cooked"])}
    if metric == "outside_meals":
        return {"latent": f(ev["meals"]) - f(ev["home_cooked"]),
                "profile_ltm": f(pr["meals_per_day"]) - f(pr["home_cooked_mean"]),
                "daily_self_report": f(sr["meals"]) - f(sr["home_cooked"])}
    if metric == "exercise_min":
        return {"latent": f(ev["exercise_min"]), "planner": f(pl["ex_min"]),
                "daily_self_report": f(sr["exercise_min"]),
                "objective_log": np.where(avail_o, f(ob["exercise_session_min"]), np.nan),
                "device_log": np.where(avail_d, np.where(dv["workout"].astype(bool),
                                                         f(dv["active_min"]), 0.0), np.nan)}
    raise ValueError(f"metric must be one of {', '.join(UNITS)}, not {metric!r}")


def walkthrough_link(seed: int, persona_id: str, qid: str) -> tuple[tuple[str, str], ...]:
    """Query parameters that open the Walkthrough on this person and question
    (``pages/_shared/params.py``: ``seed``, ``persona`` and ``q``)."""
    return (("seed", str(int(seed))), ("persona", str(persona_id)), ("q", str(qid)))
