"""The sweeps a page can show (``core/sweep/catalog.py``) and the panel's view of one
(``core/sweep/explore.py``): the shipped files are complete and a fresh computation, the CSV
reads back exactly, a store's sweep equals the run that wrote it, every broken file or store
is one line and leaves the rest usable, and the sentences follow the numbers."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.figures.sweep import (
    accuracy_surface_figure,
    majority_boundary_figure,
    setting_agreement_figure,
)
from core.sweep import catalog as C
from core.sweep.cell import run_cell
from core.sweep.engine import run_sweep
from core.sweep.explore import (
    compared_methods,
    ranked_methods,
    setting_agreement,
    surface_axes,
    sweep_view,
)
from core.sweep.grid import load_grid, parse_grid
from core.sweep.table import TABLE_COLUMNS
from core.sweep.views import TIE_POINTS, majority_boundary, rank_stability

SHIPPED = ("bias-by-seed", "bias-by-dropout")


@pytest.fixture(scope="module")
def shipped():
    return {name: C.load_sweep(f"shipped:{name}") for name in SHIPPED}


def test_the_shipped_sweeps_are_listed_complete_with_nothing_wrong():
    cat = C.available_sweeps(store="")
    assert cat.problem == ""
    assert set(cat.keys()) == {f"shipped:{n}" for n in SHIPPED}
    for e in cat.entries:
        grid = load_grid(C.SHIPPED_DIR / f"{e.key.partition(':')[2]}.toml")
        assert e.n_cells == e.n_finished == len(grid.cells())
        assert e.label.endswith(f"{e.n_cells} cells") and e.source == "shipped"


def test_the_issue_sweep_has_50_seeds_by_4_bias_scales_at_160_personas(shipped):
    d = shipped["bias-by-seed"]
    t = d.table
    assert d.n_cells == 200 and d.n_seeds == 50
    assert sorted(t["bias_scale"].unique()) == [0.5, 1.0, 2.0, 4.0]
    assert set(t["personas_per_difficulty"]) == {160}
    assert d.knobs == ("seed", "bias_scale") and d.settings == ("bias_scale",)
    # every cell scored every method once, in the same order
    assert (t.groupby("cell_id")["method"].apply(tuple).nunique()) == 1
    assert len(t) == 200 * len(d.methods)


@pytest.mark.parametrize("name, position", [("bias-by-seed", 0), ("bias-by-seed", 199),
                                            ("bias-by-dropout", 77)])
def test_shipped_cells_are_a_fresh_computation(shipped, name, position):
    """Recompute a cell from its grid: the shipped rows are what the engine gives today."""
    grid = load_grid(C.SHIPPED_DIR / f"{name}.toml")
    cell = grid.cells()[position]
    rows = shipped[name].table
    rows = rows[rows["position"] == position].reset_index(drop=True)
    fresh = run_cell(cell)
    assert list(rows["method"]) == list(fresh["method"])
    for col in fresh.columns:
        if col == "method":
            continue
        np.testing.assert_allclose(rows[col].to_numpy(float), fresh[col].to_numpy(float),
                                   rtol=1e-12, atol=1e-12, err_msg=col)


def test_the_csv_reads_back_exactly(tmp_path, shipped):
    table = shipped["bias-by-dropout"].table
    out = C.write_results_csv(table, tmp_path / "t.csv")
    again = C.read_results_csv(out)
    pd.testing.assert_frame_equal(again, table, check_exact=True)
    assert list(again.columns) == list(TABLE_COLUMNS)


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    """A 4-cell sweep stored by the engine (2 seeds × 2 bias scales, 8 personas)."""
    db = tmp_path_factory.mktemp("sweeps") / "sweeps.duckdb"
    grid = parse_grid({"axes": {"seed": [7, 8], "bias_scale": [0.5, 2.0],
                                "personas_per_difficulty": 8,
                                "methods": ["majority_vote", "nbf", "bcf",
                                            "source_reachability"]}}, name="tiny")
    res = run_sweep(grid, store=db)
    return db, grid, res


def test_a_store_sweep_is_listed_after_the_shipped_ones_and_equals_its_run(small_sweep):
    db, grid, res = small_sweep
    cat = C.available_sweeps(store=db)
    assert cat.problem == ""
    assert cat.keys()[: len(SHIPPED)] == tuple(f"shipped:{n}" for n in sorted(SHIPPED))
    key = f"store:{grid.sweep_id}"
    assert cat.keys()[-1] == key
    assert cat.entry(key).label == "tiny · 4 cells (your sweep store)"
    d = C.load_sweep(key, store=db)
    pd.testing.assert_frame_equal(d.table, res.table, check_exact=True)
    assert d.methods == ("majority_vote", "nbf", "bcf", "source_reachability")


def test_the_store_is_read_from_the_environment(small_sweep, monkeypatch):
    db, grid, _ = small_sweep
    monkeypatch.setenv(C.STORE_ENV, str(db))
    assert f"store:{grid.sweep_id}" in C.available_sweeps().keys()
    assert C.load_sweep(f"store:{grid.sweep_id}").n_cells == 4
    monkeypatch.delenv(C.STORE_ENV)
    with pytest.raises(ValueError, match="no sweep store is set"):
        C.load_sweep(f"store:{grid.sweep_id}")


def _bad_store(kind: str, tmp_path: Path) -> Path:
    p = tmp_path / "s.duckdb"
    if kind == "text":
        p.write_text("not a database\n")
    elif kind == "empty db":
        duckdb.connect(str(p)).close()
    elif kind == "directory":
        p.mkdir()
    return p


@pytest.mark.parametrize("kind, message", [
    ("missing", "does not exist"), ("text", "cannot open the sweep store"),
    ("empty db", "holds no sweeps"), ("directory", "does not exist"),
])
def test_a_broken_store_is_one_line_and_the_shipped_sweeps_stay(tmp_path, kind, message):
    cat = C.available_sweeps(store=_bad_store(kind, tmp_path))
    assert message in cat.problem and "\n" not in cat.problem
    assert cat.keys() == tuple(f"shipped:{n}" for n in sorted(SHIPPED))


def _pair(tmp_path: Path, csv_text: str | bytes, name: str = "mine") -> Path:
    """A shipped folder holding the grid of bias-by-dropout under ``name`` and ``csv_text``."""
    d = tmp_path / "ship"
    d.mkdir(exist_ok=True)
    (d / f"{name}.toml").write_text((C.SHIPPED_DIR / "bias-by-dropout.toml").read_text())
    target = d / f"{name}.csv"
    if isinstance(csv_text, bytes):
        target.write_bytes(csv_text)
    else:
        target.write_text(csv_text)
    return d


def _foreign_first_cell(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[frame["position"] == "0", "cell_id"] = "0" * 16
    return frame


def _csv(mutate) -> str:
    frame = pd.read_csv(C.SHIPPED_DIR / "bias-by-dropout.csv", dtype=str,
                        keep_default_na=False)
    return mutate(frame).to_csv(index=False)


@pytest.mark.parametrize("what, text, message", [
    ("missing column", lambda: _csv(lambda f: f.drop(columns=["coverage"])),
     "no column 'coverage'"),
    ("extra column", lambda: _csv(lambda f: f.assign(note="x")), "unexpected column 'note'"),
    ("not a number", lambda: _csv(lambda f: f.assign(forced_accuracy="high")),
     "not a sweep results table"),
    ("half a seed", lambda: _csv(lambda f: f.assign(seed="1.5")), "column 'seed' must hold "
                                                                   "whole numbers"),
    ("repeated rows", lambda: _csv(lambda f: pd.concat([f, f.head(1)])), "repeats a method"),
    ("a foreign cell", lambda: _csv(_foreign_first_cell), "not a cell of the grid"),
    ("header only", lambda: _csv(lambda f: f.head(0)), "has no results"),
    ("binary", lambda: b"\x00\x01\xff" * 50, "not a sweep results table"),
    ("empty file", lambda: "", "not a sweep results table"),
])
def test_a_broken_shipped_pair_is_one_line_and_left_out(tmp_path, what, text, message):
    folder = _pair(tmp_path, text())
    cat = C.available_sweeps(shipped_dir=folder, store="")
    assert cat.entries == ()
    assert message in cat.problem and "\n" not in cat.problem, (what, cat.problem)
    with pytest.raises(ValueError, match="."):
        C.load_sweep("shipped:mine", shipped_dir=folder)


def test_a_grid_without_results_and_a_too_large_file_are_reported(tmp_path, monkeypatch):
    folder = _pair(tmp_path, (C.SHIPPED_DIR / "bias-by-dropout.csv").read_text())
    (folder / "lonely.toml").write_text('name = "lonely"\n')
    cat = C.available_sweeps(shipped_dir=folder, store="")
    assert cat.keys() == ("shipped:mine",) and "lonely.toml has no lonely.csv" in cat.problem
    monkeypatch.setattr(C, "MAX_CSV_BYTES", 1000)
    assert C.available_sweeps(shipped_dir=folder, store="").keys() == ()


@pytest.mark.parametrize("key, message", [
    ("bias-by-seed", "shipped:NAME or store:SWEEP_ID"), ("shipped:", "shipped:NAME"),
    ("shipped:../sweeps/bias-by-seed", "no shipped sweep"), ("shipped:nope", "no shipped"),
    ("store:abc", "no sweep store is set"), ("", "shipped:NAME"),
])
def test_bad_keys_are_one_line(key, message, monkeypatch):
    monkeypatch.delenv(C.STORE_ENV, raising=False)
    with pytest.raises(ValueError, match=message):
        C.load_sweep(key)


def test_an_unknown_catalogue_entry_names_the_known_ones():
    cat = C.available_sweeps(store="")
    with pytest.raises(ValueError, match="available: shipped:bias-by-dropout"):
        cat.entry("shipped:nope")


# ------------------------------------------------------------------- the panel's view


def test_the_view_ranks_the_papers_seven_methods_and_leaves_the_ceiling_out(shipped):
    d = shipped["bias-by-seed"]
    v = sweep_view(d)
    assert v.rank.methods == ranked_methods(d) and len(v.rank.methods) == 7
    assert v.rank.n_pairs == 200 * 199 // 2
    compared = set(v.boundary.table["method"])
    assert "source_reachability" not in compared and not any(m.endswith("_skip")
                                                             for m in compared)
    sel = sweep_view(d, metric="selective_accuracy")
    assert "dsnbf_skip" in set(sel.boundary.table["method"])
    assert "source_reachability_skip" not in set(sel.boundary.table["method"])
    cov = sweep_view(d, metric="coverage")
    assert cov.boundary is None and "always answers" in cov.boundary_note
    assert compared_methods(d, "coverage") == ()


def test_the_sentences_say_what_the_boundary_table_says(shipped):
    for d in shipped.values():
        v = sweep_view(d)
        s = v.boundary.summary
        assert len(v.boundary_lines) == len(s)
        for line, row in zip(v.boundary_lines, s.itertuples(), strict=True):
            if row.n_stops == 0:
                assert "beats MV at every setting" in line
            elif row.n_beats == 0:
                assert "never beats MV" in line
            else:
                assert f"{row.first_stop.split(',')[0].replace('_', ' ').replace('=', ' ')}" \
                    in line
        shown = v.boundary_table.shown
        assert list(shown["beats"]) == [f"{b} of {n}" for b, n in zip(s["n_beats"],
                                                                        s["n_settings"],
                                                                        strict=True)]


def test_the_one_knob_sweep_draws_its_surface_against_the_seeds(shipped):
    d = shipped["bias-by-seed"]
    assert surface_axes(d) == ("bias_scale", "seed")
    v = sweep_view(d, x="bias_scale", y="seed", method="nbf")
    assert v.surface.mean.shape == (50, 4) and (v.surface.n == 1).all()
    missing = sweep_view(d, x="bias_scale", y="dropout_scale")
    assert missing.surface is None and "two different knobs" in missing.surface_note
    two = sweep_view(shipped["bias-by-dropout"], method="dsnbf")
    assert two.surface.mean.shape == (4, 4) and (two.surface.n == 8).all()
    # the surface's point is the mean of the cells behind it
    t = shipped["bias-by-dropout"].table
    cell = t[(t["method"] == "dsnbf") & (t["bias_scale"] == 4.0) & (t["dropout_scale"] == 0.5)]
    assert two.surface.mean[0, 3] == pytest.approx(cell["forced_accuracy"].mean(), abs=1e-12)


def test_the_story_follows_the_mean_tau(shipped):
    v = sweep_view(shipped["bias-by-dropout"])
    assert f"{v.rank.mean:.2f} on average" in v.rank_story
    assert f"{v.rank.n_pairs:,} pairs of cells" in v.rank_story
    with pytest.raises(ValueError, match="metric must be one of"):
        sweep_view(shipped["bias-by-dropout"], metric="f1")


@pytest.mark.parametrize("diffs, beats, wins", [
    ((1.0, 2.0), True, 2),            # clearly above in both cells
    ((1e-14, -1e-14), False, 0),      # float noise around a tie is a tie
    ((3.0, -1.0), True, 1),           # above on average, one cell lost
    ((0.0, 0.0), False, 0),           # an exact tie never beats
    ((-2.0, 5e-10), False, 0),        # below, and a sub-tolerance gain is not a win
])
def test_ties_never_beat_majority_vote(diffs, beats, wins):
    rows = []
    for pos, d in enumerate(diffs):
        for method, acc in (("majority_vote", 70.0), ("nbf", 70.0 + d)):
            rows.append({"position": pos, "method": method, "forced_accuracy": acc,
                         "seed": pos, "bias_scale": 1.0})
    b = majority_boundary(pd.DataFrame(rows), knobs=())
    row = b.table.iloc[0]
    assert bool(row["beats"]) is beats and int(row["wins"]) == wins
    assert TIE_POINTS < 1e-6


@pytest.mark.parametrize("name", SHIPPED)
def test_setting_agreement_equals_a_loop_over_pairs(shipped, name):
    """The matrix products against the definition: the mean τ-b over pairs of distinct cells,
    one in each setting."""
    d = shipped[name]
    rs = rank_stability(d.table, methods=ranked_methods(d))
    ag = setting_agreement(d, rs)
    cells = d.table.drop_duplicates("position").set_index("position")
    label = {p: " · ".join(f"{cells.loc[p, k]:g}" for k in d.settings) for p in rs.positions}
    index = {p: i for i, p in enumerate(rs.positions)}
    sums: dict = {}
    for a in rs.positions[:40]:  # every pair of the first 40 cells against the matrix
        for b in rs.positions[:40]:
            if a != b:
                key = (label[a], label[b])
                sums.setdefault(key, []).append(rs.tau[index[a], index[b]])
    sub = d.table[d.table["position"].isin(rs.positions[:40])]
    part = type(d)(d.entry, sub, d.methods, d.knobs, d.settings, d.n_seeds)
    ag40 = setting_agreement(part, rank_stability(sub, methods=ranked_methods(d)))
    for (x, y), vals in sums.items():
        i, j = ag40.settings.index(x), ag40.settings.index(y)
        assert ag40.tau[i, j] == pytest.approx(np.mean(vals), abs=1e-12)
        assert ag40.n_pairs[i, j] == len(vals)
    assert ag.tau.shape == (len(ag.settings),) * 2
    np.testing.assert_allclose(ag.tau, ag.tau.T, atol=1e-12)  # symmetric
    n = len(rs.positions)
    assert ag.n_pairs.sum() == n * (n - 1)  # every ordered pair of distinct cells once
    assert ag.within > ag.across  # seeds agree more with each other than settings do


def test_the_panel_figures_read_without_code_names(shipped):
    v = sweep_view(shipped["bias-by-dropout"])
    fig = setting_agreement_figure(v.agreement)
    assert fig.layout.xaxis.title.text == "bias scale · dropout scale"
    assert fig.data[0].zmin == 0.0  # no negative τ-b: the scale starts at 0
    assert "0.97 within a setting" in fig.layout.title.text
    b = majority_boundary_figure(v.boundary)
    assert list(b.layout.xaxis.ticktext)[:2] == ["0.5 · 0.5", "0.5 · 1"]
    s = accuracy_surface_figure(v.surface)
    assert s.layout.yaxis.title.text == "dropout scale"
    lo, hi = s.data[0].zmin, s.data[0].zmax
    assert lo % 5 == 0 and hi % 5 == 0 and lo <= np.nanmin(v.surface.mean) < \
        np.nanmax(v.surface.mean) <= hi and hi - lo <= 15
