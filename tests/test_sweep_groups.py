"""How the engine ships cells (issue 23's reproduce in ≤ 10 s): groups of one seed that share
fits across method lists, several grids in one pass, and local processes that start while the
driver imports.

Invariants of :func:`core.sweep.engine.group_cells`, for any cells and bounds:

* every cell is in exactly one group;
* a group holds cells of one (seed, personas per difficulty);
* at most ``size`` cells and ``fits`` distinct share keys a group;
* the cells of one share key are in one group unless more than ``size`` of them share it;
* groups come in non-increasing cost.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.sweep import protocols as P
from core.sweep.cell import run_cell, run_cells, share_key
from core.sweep.engine import GROUP_CELLS, GROUP_FITS, group_cells, run_sweep, run_sweeps
from core.sweep.executors import LocalProcesses
from core.sweep.grid import Cell, parse_grid
from core.testbed.config import TestbedConfig

BASE = Cell(seed=20260321, personas_per_difficulty=8)


def _check_groups(cells, groups, size, fits):
    ids = [c.cell_id for g in groups for c in g.cells]
    assert sorted(ids) == sorted(c.cell_id for c in cells)  # each cell exactly once
    where = {}
    for i, g in enumerate(groups):
        assert len({(c.seed, c.personas_per_difficulty) for c in g.cells}) == 1
        assert 1 <= len(g.cells) <= size
        assert len({share_key(c) for c in g.cells}) <= fits
        for c in g.cells:
            where.setdefault(share_key(c), set()).add(i)
    count = {k: sum(share_key(c) == k for c in cells) for k in where}
    for key, found in where.items():
        assert len(found) == 1 or count[key] > size
    costs = [g.cost for g in groups]
    assert costs == sorted(costs, reverse=True)


_AXES = {
    "seed": (1, 2),
    "bias_scale": (0.5, 1.0, 2.0),
    "noise": ("none", "uniform:0.1", "uniform:0.3"),
    "train": ((None, 0), (6, 0), (6, 1)),
    "methods": (("dsnbf", "nbf"), ("majority_vote",), ("dsnbf", "dsnbf_skip")),
}


def _cell(seed, bias, noise, train, methods):
    return replace(BASE, seed=seed, bias_scale=bias, noise=noise, train_size=train[0],
                   train_draw=train[1], methods=methods)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(picks=st.lists(st.tuples(*(st.sampled_from(v) for v in _AXES.values())),
                      min_size=1, max_size=40, unique=True),
       size=st.integers(1, 12), fits=st.integers(1, 5))
def test_groups_keep_their_invariants(picks, size, fits):
    cells = list({c.cell_id: c for c in (_cell(*p) for p in picks)}.values())
    _check_groups(cells, group_cells(cells, size=size, fits=fits), size, fits)


@pytest.mark.parametrize(("cells", "size", "fits", "shape"), [
    # one fit, many riders: one group
    ([replace(BASE, noise=f"uniform:{e}") for e in (0.0, 0.1, 0.2)], 32, 4, [3]),
    # riders beyond `size` split the fit
    ([replace(BASE, noise=f"uniform:{e}") for e in (0.0, 0.1, 0.2)], 2, 4, [2, 1]),
    # different method lists borrow one fit; a selective variant does not
    ([replace(BASE, methods=("dsnbf",)), replace(BASE, methods=("nbf", "abf")),
      replace(BASE, methods=("dsnbf_skip",))], 32, 1, [2, 1]),
    # five fits of one seed at most four a group; another seed is another group
    ([replace(BASE, bias_scale=b) for b in (0.5, 1.0, 1.5, 2.0, 4.0)]
     + [replace(BASE, seed=7)], 32, 4, [4, 1, 1]),
])
def test_groups_on_a_table_of_cases(cells, size, fits, shape):
    groups = group_cells(cells, size=size, fits=fits)
    _check_groups(cells, groups, size, fits)
    assert [len(g.cells) for g in groups] == shape


def test_group_bounds_are_checked():
    with pytest.raises(ValueError, match="size and fits must be >= 1"):
        group_cells([BASE], fits=0)
    assert GROUP_CELLS >= GROUP_FITS >= 1


def test_cells_with_other_methods_borrow_a_fit_and_equal_their_own_runs():
    """The union fit gives each method the model it gets alone (every resolver, the
    selective variants and the oracle included)."""
    cells = [replace(BASE, methods=("dsnbf", "majority_vote")),
             replace(BASE, methods=("nbf", "abf", "source_reachability"), noise="uniform:0.2"),
             replace(BASE, methods=("bcf", "ssb_global", "dsnbf")),
             replace(BASE, methods=("dsnbf_skip", "nbf_skip")),
             replace(BASE, methods=("nbf_skip", "abf", "dsnbf_skip"), bias_scale=2.0,
                     fit_bias_scale=1.0)]
    assert len({share_key(c) for c in cells}) == 2
    for cell, frame in zip(cells, run_cells(cells), strict=True):
        pd.testing.assert_frame_equal(frame, run_cell(cell))  # exactly


def test_several_grids_in_one_pass_equal_each_grid_on_its_own():
    config = TestbedConfig(seeds=(20260321, 20260322), personas_per_difficulty=8)
    grids = [P.perturbation_sweep(config), P.noise_sweep(config),
             P.train_size_sweep(config, sizes=(3,), repeats=2), P.transfer_sweep(config)]
    dup = parse_grid({"name": "again", "axes": {  # cells that another grid also holds
        "seed": list(config.seeds), "personas_per_difficulty": 8,
        "methods": list(P.NOISE_METHODS), "noise_profile": "uniform", "noise_eps": [0.1]}})
    together = run_sweeps([*grids, dup])
    for grid, res in zip([*grids, dup], together, strict=True):
        alone = run_sweep(grid, share_fits=True)
        assert (res.sweep_id, res.name, res.failed) == (grid.sweep_id, grid.name, ())
        assert len(res.computed) == len(grid.cells()) and not res.skipped
        pd.testing.assert_frame_equal(res.table, alone.table)  # exactly
        assert (res.cells["status"] == "ok").all()
    assert len({r.seconds for r in together}) == 1  # one pass, one wall time


def test_one_pass_reports_progress_over_all_grids_and_refuses_bad_workers():
    config = TestbedConfig(seeds=(20260321,), personas_per_difficulty=8)
    grids = [P.noise_sweep(config, eps=(0.0, 0.2)), P.transfer_sweep(config, scales=(1.0, 2.0))]
    seen = []
    run_sweeps(grids, progress=seen.append)
    assert seen[-1].done == seen[-1].total == 2 + 4 and seen[-1].failed == 0
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    with pytest.raises(ValueError, match="workers must be an integer"):
        run_sweeps(grids, workers=0)
    with pytest.raises(ValueError, match="unknown executor"):
        run_sweeps(grids, executor="ray")


def test_local_processes_start_in_the_background_and_equal_one_process():
    """Entering returns before the workers are up; the first run waits for them; leaving
    without a run closes them."""
    config = TestbedConfig(seeds=(20260321, 20260322), personas_per_difficulty=8)
    grid = P.noise_sweep(config, eps=(0.0, 0.3))
    with LocalProcesses(workers=2) as ex:
        assert ex._starting is not None or ex._pool is not None
        got = run_sweeps([grid], executor=ex)[0]
        assert ex._pool is not None and ex._starting is None
        assert got.executor == "local" and got.workers == 2
    assert ex._pool is None
    pd.testing.assert_frame_equal(got.table, run_sweep(grid).table)
    with LocalProcesses(workers=2):
        pass  # left at once: the starting processes are waited for and closed


def test_cell_ids_of_the_reproduce_grids_are_distinct_within_each_grid():
    config = TestbedConfig()
    grids = [P.perturbation_sweep(config), P.noise_sweep(config), P.train_size_sweep(config),
             P.transfer_sweep(config)]
    for grid in grids:
        ids = [c.cell_id for c in grid.cells()]
        assert len(ids) == len(set(ids))
    every = list(itertools.chain.from_iterable(g.cells() for g in grids))
    groups = group_cells(every)
    _check_groups(every, groups, GROUP_CELLS, GROUP_FITS)
    # the nominal fit that the four grids all need is made once per seed
    nominal = {share_key(c) for c in every if c.train_size is None
               and (c.fit_bias_scale or c.bias_scale) == 1.0
               and (c.fit_dropout_scale or c.dropout_scale) == 1.0}
    assert len(nominal) == len(config.seeds)
    assert sum(len(g.cells) for g in groups) == 156 and len(groups) == 24
