"""AppTests of what issue 9 fixed on the Selective QA and Reliability pages: the default θ is
named for what it is and shows no delta, the coverage gap is explained, the score table is
narrow, and the smooth diagram's density strip is the same under Y and Z."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.evaluation.cached import load_arrays
from core.evaluation.run import run_seed
from core.evaluation.selective import sweep
from core.evaluation.selective_view import selective_view, threshold_choice
from core.store import connect
from tests.app_support import plain

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
SELECTIVE = str(ROOT / "pages" / "4_Selective_QA.py")
RELIABILITY = "pages/5_Reliability.py"


@pytest.fixture(scope="module")
def dsnbf_runs(small_store):
    """DSNBF+SKIP refitted on every seed of the small store, as the page's glue does."""
    con = connect(small_store)
    try:
        personas, gt, atoms = load_arrays(con)
    finally:
        con.close()
    out = []
    for s in pd.unique(personas["seed"]):
        m = personas["seed"].to_numpy() == s
        out.append(run_seed(atoms[m], gt[m], personas[m].reset_index(drop=True),
                            methods=["dsnbf_skip"]))
    return out


def metric(at, label: str):
    return next(m for m in at.metric if m.label == label)


def texts(at) -> str:
    return "\n".join(plain(str(x.value)) for x in [*at.markdown, *at.caption])


# ---------------------------------------------------------------- Selective QA
def test_the_default_theta_is_the_median_and_shows_no_delta(app_env, dsnbf_runs):
    choice = threshold_choice(dsnbf_runs, "dsnbf_skip")
    at = AppTest.from_file(SELECTIVE, default_timeout=90).run()
    assert not at.exception and not at.warning
    assert at.slider(key="sq_theta_dsnbf_skip").value == pytest.approx(choice.median)
    assert f"At θ = {choice.median:.2f} (the median of the per-seed calibrated θ)" in texts(at)
    for label in ("Coverage", "Selective accuracy", "F0.5"):
        assert not metric(at, label).delta  # nothing moved: no spurious "vs calibrated"
    moved = choice.snap(min(choice.median + 0.3, choice.hi))
    at.slider(key="sq_theta_dsnbf_skip").set_value(moved).run()
    view = selective_view(dsnbf_runs, "dsnbf_skip", theta=moved)
    assert metric(at, "Coverage").delta == f"{view.deltas['coverage']:+.1f} points"
    assert "changes against the median of the per-seed calibrated θ" in texts(at)


def test_the_coverage_gap_to_the_paper_is_explained(app_env, dsnbf_runs):
    view = selective_view(dsnbf_runs, "dsnbf_skip",
                          theta=threshold_choice(dsnbf_runs, "dsnbf_skip").median,
                          sweep=sweep(dsnbf_runs, "dsnbf_skip"))
    at = AppTest.from_file(SELECTIVE, default_timeout=90).run()
    text = texts(at)
    if view.gap is None:
        assert "not the paper's" not in text
        return
    g = view.gap
    assert f"Why {g.ours:.1f} % and not the paper's {g.paper:.1f} %" in text
    assert f"the paper's coverage sits at θ = {g.theta_matching:.2f}" in text
    assert "True" not in text and "None" not in text  # no raw Python values in prose


# ---------------------------------------------------------------- Reliability
def open_reliability(params: dict | None = None) -> AppTest:
    at = AppTest.from_file(HOME, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(RELIABILITY).run()


def values(v) -> np.ndarray:
    """A plotly JSON array: a list, or a typed array ``{"dtype", "bdata"}`` (base64)."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float)
    return np.asarray(v, float)


def density_traces(at) -> dict[str, np.ndarray]:
    """The density traces of the smooth diagram."""
    smooth = json.loads(at.get("plotly_chart")[2].proto.spec)
    return {t["name"]: values(t["y"]) for t in smooth["data"]
            if str(t.get("name", "")).endswith(" density")}


def test_the_numbers_table_is_narrow_and_the_rest_is_in_an_expander(app_env):
    at = open_reliability()
    assert not at.exception and not at.error
    numbers = at.dataframe[0].value
    assert len(numbers.columns) <= 9 and "ECE (B = 10, uniform)" in numbers.columns
    every = next(e for e in at.expander if e.label.startswith("Every score"))
    # split into tables one above the other, each narrow enough to need no sideways scroll
    wide = set().union(*(d.value.columns for d in every.dataframe))
    assert {"log score", "smooth ECE", "Spiegelhalter z", "ICE", "DSC", "UNC"} <= wide
    assert all(d.value.columns[0] == "rule" for d in every.dataframe)


def test_the_smooth_density_strip_does_not_change_between_y_and_z(app_env):
    at = open_reliability()
    before = density_traces(at)
    at.segmented_control(key="rel_label").set_value("Z").run()
    assert not at.exception
    after = density_traces(at)
    assert set(before) == set(after) == {"native density", "EG density"}
    for name, y in before.items():
        np.testing.assert_allclose(after[name], y)
