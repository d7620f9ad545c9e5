"""Run one sweep cell in memory: generate → ground truth and μ* → fit → calibrate → score.

The protocol is the one of :func:`core.evaluation.run.run_seed` (the benchmark specification
§2.1, §2.11–2.12: fit on train, calibrate on calibration, score on test; dev unused), applied to
the one-seed testbed of a :class:`core.sweep.grid.Cell`:

1. ``generate(cell.config())``; GT by the label functions, μ* by the direct readout. A seed's
   streams are its own (``core.testbed.generate``), so a one-seed testbed equals that seed's
   part of a many-seed one.
2. Difficulty mix: each split keeps the first ``⌊share · n + ½⌋`` personas of each difficulty
   (:func:`core.sweep.grid.kept_counts`).
3. Transfer (seed 000 §12.4): with ``fit_*_scale`` set, the resolvers are fitted and
   calibrated on that variant and predict the cell's test atoms without refit, scored against
   the cell's own GT (some label rules read the planner and device sources, which the scales
   change), as ``core.evaluation.robustness.transfer``. The scales leave the personas
   unchanged (checked), so the test rows are the same people.
4. Training size (§12.3): ``train_index`` is the stratified draw of
   ``core.evaluation.robustness`` with ``default_rng(42 + train_draw)``.
5. Extraction noise (§12.5): the test atoms pass through :func:`core.prose.noise.apply_noise`
   with ``default_rng([noise_seed, seed])``; a ``uniform:ε`` profile is ``flip_atoms`` draw for
   draw, so the cell reproduces ``noise_curve``. Fits and calibration stay clean.

Results (:func:`run_cell`): one row per method, percentages as in the paper's tables —
forced accuracy (macro over questions), selective accuracy (macro over questions with an
answer) and coverage (micro), the conventions of :mod:`core.evaluation.metrics` (seed 000
§9.3, §10), and with ``bootstrap`` > 0 the persona-clustered percentile interval of forced
accuracy (:func:`core.evaluation.metrics.cluster_bootstrap`, 95 %).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation.metrics import cluster_bootstrap, coverage, forced_accuracy, selective_accuracy
from ..evaluation.robustness import _stratified_subsample
from ..evaluation.run import SeedRun, run_seed
from ..prose.noise import apply_noise, parse_profile
from ..testbed.generate import generate
from ..testbed.labels import ground_truth_codes
from ..testbed.readout import readout
from ..testbed.vocab import DIFFICULTIES
from .grid import TRAIN_DRAW_BASE, Cell, kept_counts

__all__ = ["RESULT_COLUMNS", "cell_run", "run_cell"]

#: Columns of a cell's results frame and their dtypes.
RESULT_COLUMNS = {
    "method": "str",
    "n_personas": "int64",
    "n_train": "int64",
    "n_items": "int64",
    "answered": "int64",
    "forced_accuracy": "float64",
    "selective_accuracy": "float64",
    "coverage": "float64",
    "forced_low": "float64",
    "forced_high": "float64",
}


def _arrays(cell: Cell, *, fit: bool):
    """μ*, GT and persona rows of the cell's testbed, with the difficulty mix applied."""
    tb = generate(cell.config(fit=fit))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    personas = tb.personas
    if min(cell.difficulty_mix) < 1:
        keep_n = kept_counts(cell.personas_per_difficulty, cell.difficulty_mix)
        split = personas["split"].to_numpy()
        diff = personas["difficulty"].to_numpy()
        keep = np.zeros(len(personas), bool)
        for s, per in keep_n.items():
            for d in DIFFICULTIES:
                rows = np.flatnonzero((split == s) & (diff == d))
                keep[rows[:per[d]]] = True
        mu, gt, personas = mu[keep], gt[keep], personas[keep]
    return mu, gt, personas.reset_index(drop=True)


def cell_run(cell: Cell) -> SeedRun:
    """The :class:`~core.evaluation.run.SeedRun` of one cell (module docstring, steps 1–5)."""
    mu, gt, personas = _arrays(cell, fit=False)
    test = personas["split"].to_numpy() == "test"
    if cell.fit_bias_scale is not None or cell.fit_dropout_scale is not None:
        fit_mu, fit_gt, fit_personas = _arrays(cell, fit=True)
        if not fit_personas["persona_id"].equals(personas["persona_id"]):
            raise ValueError("the fit variant's personas differ from the cell's")
        fit_gt = fit_gt.copy()
        fit_gt[test] = gt[test]  # score against the cell's own ground truth
    else:
        fit_mu, fit_gt, fit_personas = mu, gt, personas
    test_atoms = mu[test]
    if cell.noise != "none":
        rng = np.random.default_rng([cell.noise_seed, cell.seed])
        test_atoms = apply_noise(test_atoms, parse_profile(cell.noise), rng)
    train_index = None
    if cell.train_size is not None:
        train_diff = fit_personas.loc[fit_personas["split"] == "train", "difficulty"].to_numpy()
        train_index = _stratified_subsample(
            train_diff, cell.train_size, np.random.default_rng(TRAIN_DRAW_BASE + cell.train_draw))
    return run_seed(fit_mu, fit_gt, fit_personas, methods=list(cell.methods),
                    test_atoms=test_atoms, train_index=train_index)


def run_cell(cell: Cell) -> pd.DataFrame:
    """Score every method of ``cell``: one row per method in ``cell.methods`` order.

    Columns are :data:`RESULT_COLUMNS`: ``n_personas`` test personas, ``n_train`` train
    personas fitted on, ``n_items`` = personas × 18 questions, ``answered`` (not skipped),
    then forced accuracy, selective accuracy, coverage and the interval of forced accuracy
    (NaN without ``bootstrap``), all in %.
    """
    run = cell_run(cell)
    n_train = (cell.train_size if cell.train_size is not None
               else sum(kept_counts(cell.personas_per_difficulty,
                                    cell.difficulty_mix)["train"].values()))
    rows = []
    for name in cell.methods:
        p = run.predictions[name]
        correct = p.answer == run.gt
        low = high = np.nan
        if cell.bootstrap:
            ci = cluster_bootstrap(correct, b=cell.bootstrap, seed=cell.bootstrap_seed)
            low, high = 100 * ci.low, 100 * ci.high
        rows.append({
            "method": name, "n_personas": len(run.gt), "n_train": n_train,
            "n_items": correct.size, "answered": int((~p.skipped).sum()),
            "forced_accuracy": 100 * forced_accuracy(correct),
            "selective_accuracy": 100 * selective_accuracy(correct, p.skipped),
            "coverage": 100 * coverage(p.skipped),
            "forced_low": low, "forced_high": high,
        })
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS)).astype(RESULT_COLUMNS)
