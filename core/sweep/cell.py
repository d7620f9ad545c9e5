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

Cells that differ only in what is tested — the noise on the test atoms, the test scales of a
transfer cell, the bootstrap, the methods asked for — share one fit (:func:`share_key`), and
cells on one testbed share its generation (:func:`data_key`): :func:`run_cells` generates and
fits each once (the union of the sharing cells' methods) and
predicts each cell's test atoms with the fitted models, the predictions of
:func:`core.evaluation.run.run_seed` step for step (the fits are deterministic and
``predict`` reads nothing but its atoms, so the frames equal :func:`run_cell`'s; a test
checks every resolver). ``noise_curve`` and ``transfer`` share their fits the same way.

Results (:func:`run_cell`): one row per method, percentages as in the paper's tables —
forced accuracy (macro over questions), selective accuracy (macro over questions with an
answer) and coverage (micro), the conventions of :mod:`core.evaluation.metrics` (seed 000
§9.3, §10), and with ``bootstrap`` > 0 the persona-clustered percentile interval of forced
accuracy (:func:`core.evaluation.metrics.cluster_bootstrap`, 95 %).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ..evaluation.metrics import cluster_bootstrap, coverage, forced_accuracy, selective_accuracy
from ..evaluation.robustness import _stratified_subsample
from ..evaluation.run import SeedRun, _forced, run_seed
from ..prose.noise import apply_noise, parse_profile
from ..resolvers.registry import RESOLVERS
from ..testbed.generate import generate
from ..testbed.labels import ground_truth_codes
from ..testbed.readout import readout
from ..testbed.vocab import DIFFICULTIES
from .grid import TRAIN_DRAW_BASE, Cell, kept_counts

__all__ = ["RESULT_COLUMNS", "cell_run", "data_key", "fit_key", "run_cell", "run_cells",
           "share_key"]

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


def _arrays(cell: Cell, *, fit: bool, bases: dict | None = None):
    """μ*, GT and persona rows of the cell's testbed, with the difficulty mix applied
    (``bases``: :func:`core.testbed.generate.generate`'s, shared by a group's testbeds)."""
    tb = generate(cell.config(fit=fit), bases=bases)
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


def _test_atoms(cell: Cell, atoms: np.ndarray) -> np.ndarray:
    """The cell's test atoms after its extraction noise (module docstring, step 5)."""
    if cell.noise == "none":
        return atoms
    rng = np.random.default_rng([cell.noise_seed, cell.seed])
    return apply_noise(atoms, parse_profile(cell.noise), rng)


def _train_index(cell: Cell, personas: pd.DataFrame) -> np.ndarray | None:
    if cell.train_size is None:
        return None
    train_diff = personas.loc[personas["split"] == "train", "difficulty"].to_numpy()
    return _stratified_subsample(train_diff, cell.train_size,
                                 np.random.default_rng(TRAIN_DRAW_BASE + cell.train_draw))


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
    return run_seed(fit_mu, fit_gt, fit_personas, methods=list(cell.methods),
                    test_atoms=_test_atoms(cell, mu[test]),
                    train_index=_train_index(cell, fit_personas))


def fit_key(cell: Cell) -> tuple:
    """What a cell's fit depends on: cells with equal keys share one fit (:func:`run_cells`).

    The seed, personas, the scales the resolvers are fitted on (``fit_*_scale``, else the
    cell's own), the difficulty mix, the training subsample and the methods; not the test
    scales, the noise or the bootstrap.
    """
    b = cell.bias_scale if cell.fit_bias_scale is None else cell.fit_bias_scale
    d = cell.dropout_scale if cell.fit_dropout_scale is None else cell.fit_dropout_scale
    return (cell.seed, cell.personas_per_difficulty, b, d, cell.difficulty_mix,
            cell.train_size, cell.train_draw, cell.methods)


def _predict(models: dict, wanted, atoms: np.ndarray, gt: np.ndarray) -> dict:
    """Every wanted method's prediction on ``atoms`` from ``models`` fitted by ``run_seed``:
    its prediction step, resolver by resolver (oracles read ``gt``)."""
    preds = {}
    for r in RESOLVERS:
        sel = r.selective and r.skip_name in wanted
        if r.name not in wanted and not sel:
            continue
        if r.oracle is not None:
            if r.name in wanted:
                preds[r.name] = r.oracle(atoms, gt)
            if sel:
                preds[r.skip_name] = replace(r.oracle(atoms, gt, skip_on_miss=True),
                                             method=r.skip_name)
        elif r.selective and not r.shared_fit:
            preds.update({n: models[n].predict(atoms) for n in (r.name, r.skip_name)
                          if n in wanted})
        else:
            p = models[r.name].predict(atoms)
            if not r.selective:
                preds[r.name] = p
            else:
                preds[r.name] = _forced(p, r.name)
                if sel:
                    preds[r.skip_name] = p
    return preds


def _frame(cell: Cell, gt: np.ndarray, predictions: dict) -> pd.DataFrame:
    """The results frame of ``cell`` from its test GT and predictions (:func:`run_cell`)."""
    n_train = (cell.train_size if cell.train_size is not None
               else sum(kept_counts(cell.personas_per_difficulty,
                                    cell.difficulty_mix)["train"].values()))
    cols: dict[str, list] = {k: [] for k in RESULT_COLUMNS}
    for name in cell.methods:
        p = predictions[name]
        correct = p.answer == gt
        low = high = np.nan
        if cell.bootstrap:
            ci = cluster_bootstrap(correct, b=cell.bootstrap, seed=cell.bootstrap_seed)
            low, high = 100 * ci.low, 100 * ci.high
        for k, v in (("method", name), ("n_personas", len(gt)), ("n_train", n_train),
                     ("n_items", correct.size), ("answered", int((~p.skipped).sum())),
                     ("forced_accuracy", 100 * forced_accuracy(correct)),
                     ("selective_accuracy", 100 * selective_accuracy(correct, p.skipped)),
                     ("coverage", 100 * coverage(p.skipped)),
                     ("forced_low", low), ("forced_high", high)):
            cols[k].append(v)
    # one typed array per column: the frame of rows followed by ``astype(RESULT_COLUMNS)``,
    # at a third of the cost (a sweep makes one per cell)
    return pd.DataFrame({k: pd.array(cols[k], dtype=t) for k, t in RESULT_COLUMNS.items()})


def run_cell(cell: Cell) -> pd.DataFrame:
    """Score every method of ``cell``: one row per method in ``cell.methods`` order.

    Columns are :data:`RESULT_COLUMNS`: ``n_personas`` test personas, ``n_train`` train
    personas fitted on, ``n_items`` = personas × 18 questions, ``answered`` (not skipped),
    then forced accuracy, selective accuracy, coverage and the interval of forced accuracy
    (NaN without ``bootstrap``), all in %.
    """
    run = cell_run(cell)
    return _frame(cell, run.gt, run.predictions)


#: Every selective variant's name (``…_skip``): cells share a fit only when they ask for the
#: same ones (a shared-fit resolver is fitted in its selective form when its variant is wanted).
_SKIP_NAMES = frozenset(r.skip_name for r in RESOLVERS if r.selective)


def share_key(cell: Cell) -> tuple:
    """The fit a cell can borrow: :func:`fit_key` with the methods replaced by the selective
    variants asked for.

    Each resolver's fit reads only the train and calibration splits and draws from its own
    generator, so fitting the union of several cells' methods gives each method the model it
    would get alone; only a selective variant changes how its resolver is fitted, so cells
    share a fit when they ask for the same variants. :func:`run_cells` fits each share key
    once, for the union of its cells' methods.
    """
    skips = tuple(sorted(m for m in cell.methods if m in _SKIP_NAMES))
    return (*fit_key(cell)[:-1], skips)


def data_key(cell: Cell) -> tuple:
    """The testbed a cell's fit reads: seed, personas, fit scales and difficulty mix (cells
    with equal keys share their generated data in :func:`run_cells`; the engine groups cells
    by it)."""
    return fit_key(cell)[:5]


def run_cells(cells: Sequence[Cell]) -> list[pd.DataFrame]:
    """:func:`run_cell` of each of ``cells``, generating each testbed and fitting each
    :func:`share_key` once (for the union of its cells' methods).

    Each fit is made on its fit variant (the cell's scales, or ``fit_*_scale``) and each
    cell's test atoms (its own scales, then its noise) are predicted with those models and
    scored against the cell's own GT; the frames equal :func:`run_cell`'s, in the order of
    ``cells``. Raises ``ValueError`` when a test variant's personas differ from the fit's.
    """
    data: dict[tuple, tuple] = {}
    bases: dict = {}  # each seed's knob-free layers, made once for all its scales
    fits: dict[tuple, object] = {}
    wanted: dict[tuple, dict[str, None]] = {}  # share key -> the union of methods, in order
    for cell in cells:
        wanted.setdefault(share_key(cell), {}).update(dict.fromkeys(cell.methods))

    def arrays(cell: Cell, b: float, d: float):
        key = (cell.seed, cell.personas_per_difficulty, b, d, cell.difficulty_mix)
        if key not in data:
            data[key] = _arrays(replace(cell, bias_scale=b, dropout_scale=d,
                                        fit_bias_scale=None, fit_dropout_scale=None),
                                fit=False, bases=bases)
        return data[key]

    out = []
    for cell in cells:
        key = share_key(cell)
        mu, gt, personas = arrays(cell, key[2], key[3])
        test = personas["split"].to_numpy() == "test"
        if key not in fits:
            fits[key] = run_seed(mu, gt, personas, methods=list(wanted[key]),
                                 train_index=_train_index(cell, personas)).models
        c_mu, c_gt, c_personas = arrays(cell, cell.bias_scale, cell.dropout_scale)
        if c_personas is not personas and not c_personas["persona_id"].equals(
                personas["persona_id"]):
            raise ValueError("the fit variant's personas differ from the cell's")
        te_gt = c_gt[test]
        preds = _predict(fits[key], cell.methods, _test_atoms(cell, c_mu[test]), te_gt)
        out.append(_frame(cell, te_gt, preds))
    return out
