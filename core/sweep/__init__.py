"""One sweep engine for every grid of the seed-000 testbed (issue 23).

A sweep is a grid of cells; each cell generates a one-seed testbed, fits, calibrates and scores
the resolvers it names, in memory, and returns a small results frame. The engine runs the
cells in-process, in local processes or on a Dask cluster, and only the driver writes the
store. ``docs/sweep.md`` has the grid file's keys, the tables and the executors.

The public face (import the modules explicitly; this package file re-exports nothing, so no
submodule's import waits on a half-initialised package, see ``tests/test_imports.py``):

* :mod:`.grid` — ``Grid`` (a frozen grid definition), ``load_grid`` / ``parse_grid`` (TOML →
  ``Grid``, one-line ``ValueError``\\ s) and ``Cell`` (one cell's parameters, hashable and
  picklable, with its stable ``cell_id``);
* :mod:`.cell` — ``run_cell``: one cell, generate → fit → calibrate → score;
* :mod:`.engine` — ``run_sweep``: cells through an executor into one results table, with
  failures recorded, resume and progress;
* :mod:`.store` — the ``sweeps``, ``sweep_cells`` and ``sweep_results`` tables (DuckDB);
* :mod:`.protocols` — seed 000's robustness grids (perturbation, noise, training size,
  transfer) as sweeps, and their tables from a sweep's results;
* :mod:`.cli` — ``python -m core sweep GRID.toml`` (``add_sweep_parser``).
"""

__all__: list[str] = []
