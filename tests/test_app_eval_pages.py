"""AppTests of the Leaderboard, Bias lab and Selective QA pages, and the Walkthrough's
resolver stage, on the small generated store of ``conftest.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.evaluation.cached import load_runs
from core.evaluation.tables import main_table, selective_table
from core.store import connect, query_df
from tests.app_support import plain

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
LEADERBOARD = "pages/2_Leaderboard.py"
LAB = "pages/3_Bias_lab.py"  # opened through the home page (its glossary link needs it)
SELECTIVE = str(ROOT / "pages" / "4_Selective_QA.py")
WALK = str(ROOT / "pages" / "1_Walkthrough.py")


@pytest.fixture
def eval_env(app_env, monkeypatch):
    """The small store, and a small bias lab (12 personas per class)."""
    monkeypatch.setenv("ARBITER_LAB_PERSONAS", "12")
    return app_env


@pytest.fixture(scope="module")
def runs(small_store):
    con = connect(small_store)
    try:
        return load_runs(con)
    finally:
        con.close()


def open_page(page: str, params: dict | None = None) -> AppTest:
    """Open a page the way the server does: the entrypoint first, then the page."""
    at = AppTest.from_file(HOME, default_timeout=90)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run()


def run_direct(script: str, params: dict | None = None) -> AppTest:
    at = AppTest.from_file(script, default_timeout=90)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def text_of(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts)


# ---------------------------------------------------------------- leaderboard
def test_leaderboard_shows_the_forced_table_and_every_figure(eval_env, runs):
    at = open_page(LEADERBOARD)
    assert not at.exception and not at.error and not at.warning
    expected = main_table(runs, b=2000).set_index("method")
    m = metrics(at)
    for key, method in (("DSNBF", "dsnbf"), ("NBF", "nbf"), ("MV", "majority_vote")):
        assert m[key] == f"{expected.loc[method, 'accuracy']:.1f} %"
    specs = charts(at)
    assert len(specs) == 5  # forest, type and difficulty heatmaps, slices, sources
    assert [t["type"] for t in specs[1]["data"]] == ["heatmap"]
    sel = at.dataframe[1].value
    # shown as Python rounds it to the digit displayed (pages._shared.ui.number_table)
    assert sel["selective_accuracy"].tolist() == \
        [float(f"{v:.1f}") for v in selective_table(runs)["selective_accuracy"]]
    assert len(at.get("download_button")) >= 14  # CSV + Parquet for every table
    assert "ArgRAG" in text_of(at) and "without any labels" in text_of(at)


def test_leaderboard_method_choice_and_learned_table(eval_env):
    at = open_page(LEADERBOARD, {"lb_methods": ["DSNBF", "MV"], "lb_b": "200"})
    assert not at.exception and not at.warning
    assert sorted(at.button_group(key="lb_methods").value) == ["dsnbf", "majority_vote"]
    forest = charts(at)[0]["data"][0]
    assert len(forest["y"]) == 2
    n_frames = len(at.dataframe)
    at.toggle(key="lb_learned").set_value(True).run()
    assert not at.exception
    assert len(at.dataframe) == n_frames + 1
    learned = at.dataframe[-1].value
    # rows are P(v | w), shown to two decimals
    np.testing.assert_allclose(learned.sum(axis=1).to_numpy(), 1.0,
                               atol=0.005 * learned.shape[1] + 1e-9)
    at.selectbox(key="lb_q").select("C3").run()
    assert not at.exception and "C3 ·" in text_of(at)


def test_leaderboard_bad_url_values_warn(eval_env):
    at = open_page(LEADERBOARD, {"lb_b": "7", "lb_q": "Z9"})
    assert not at.exception
    assert len(at.warning) == 2
    assert "bootstrap size was not valid" in plain(at.warning[0].value)
    assert "7" not in at.warning[0].value.replace("2000", "")  # the link's text is not echoed
    assert at.selectbox(key="lb_b").value == 2000


# ---------------------------------------------------------------- bias lab
def dsnbf_of(at) -> str:
    return metrics(at)["DSNBF"]


def test_bias_lab_leaderboard_moves_with_the_bias_slider(eval_env):
    at = open_page(LAB)
    assert not at.exception and not at.error and not at.warning
    assert metrics(at)["Test personas"] == "12"
    before = charts(at)[0]["data"][-1]
    assert "nominal setting" in text_of(at)
    at.slider(key="lab_bias").set_value(3.0).run()
    assert not at.exception
    after = charts(at)[0]["data"]
    assert len(after) == 3  # nominal segments and markers appear beside the variant
    assert after[-1] != before
    text = text_of(at)
    assert "bias scale at 3×" in text and "The source that moved most" in text
    assert "vs nominal" in str(at.metric[0].delta)


def test_bias_lab_grid_opens_lazily(eval_env):
    at = open_page(LAB)
    assert "Rank agreement τ" not in metrics(at)
    at.session_state["lab_grid_open"] = True
    at.run()
    assert not at.exception
    m = metrics(at)
    assert -1.0 <= float(m["Rank agreement τ"]) <= 1.0
    assert m["Cells DSNBF wins"].endswith("of 9 cells")
    wins = next(x for x in at.metric if x.label == "Cells DSNBF wins")
    assert "NBF, ABF, BCF, MV and SSB-G" in wins.help  # the rivals, named in the long form
    # board, sources, then the grid (the sweep section's charts follow it)
    assert charts(at)[2]["data"][0]["type"] == "bar"


def test_bias_lab_bad_url_value_warns_and_zero_mix_falls_back(eval_env):
    at = open_page(LAB, {"lab_bias": "9", "lab_dropout": "2"})
    assert not at.exception
    assert len(at.warning) == 1 and "bias scale was not valid" in plain(at.warning[0].value)
    assert at.slider(key="lab_bias").value == 1.0
    assert at.slider(key="lab_dropout").value == 2.0
    for key in ("lab_w_stable", "lab_w_shift", "lab_w_stated"):
        at.slider(key=key).set_value(0.0)
    at.run()
    assert not at.exception
    assert any("at least one positive weight" in w.value for w in at.warning)


# ---------------------------------------------------------------- selective QA
def test_selective_threshold_changes_coverage(eval_env, runs):
    at = run_direct(SELECTIVE)
    assert not at.exception and not at.error and not at.warning
    m = metrics(at)
    cal = selective_table(runs).set_index("method").loc["dsnbf_skip"]
    assert m["Coverage (calibrated)"] == f"{cal['coverage']:.1f} %"
    assert m["Selective accuracy (calibrated)"] == f"{cal['selective_accuracy']:.1f} %"
    assert 0 < float(m["AURC"]) < 1
    before = float(m["Coverage"].removesuffix(" %"))
    at.slider(key="sq_theta_dsnbf_skip").set_value(1.0).run()
    assert not at.exception
    after = float(metrics(at)["Coverage"].removesuffix(" %"))
    assert after < before
    assert metrics(at)["Coverage (calibrated)"] == m["Coverage (calibrated)"]
    rc, sweep = charts(at)
    assert rc["data"][0]["mode"] == "lines" and len(sweep["data"]) == 3


def test_selective_url_opens_a_method_and_threshold(eval_env):
    at = run_direct(SELECTIVE, {"sq_method": "NBF+SKIP", "theta": "0.2"})
    assert not at.exception and not at.warning
    assert at.slider(key="sq_theta_nbf_skip").value == pytest.approx(0.2)
    assert "NBF+SKIP" in text_of(at)


@pytest.mark.parametrize("params, word", [
    ({"theta": "5"}, "threshold"),
    ({"sq_method": "BOGUS"}, "method"),
])
def test_selective_bad_url_values_warn(eval_env, params, word):
    at = run_direct(SELECTIVE, params)
    assert not at.exception
    assert len(at.warning) == 1 and word in at.warning[0].value


def test_abf_threshold_runs_over_its_own_grid(eval_env):
    at = run_direct(SELECTIVE, {"sq_method": "ABF+SKIP", "theta": "1.5"})
    assert not at.exception and not at.warning
    slider = at.slider(key="sq_theta_abf_skip")
    assert slider.value == pytest.approx(1.5) and slider.max == pytest.approx(2.0)


# ---------------------------------------------------------------- walkthrough stages 8–9
def test_walkthrough_shows_every_resolver_for_a_test_persona(eval_env, small_store):
    con = connect(small_store)
    try:
        test = query_df(con, "SELECT seed, persona_id FROM personas WHERE split = 'test' "
                             "ORDER BY row LIMIT 1")
        train = query_df(con, "SELECT seed, persona_id FROM personas WHERE split = 'train' "
                              "ORDER BY row LIMIT 1")
    finally:
        con.close()
    at = run_direct(WALK, {"seed": str(test["seed"].iloc[0]),
                           "persona": str(test["persona_id"].iloc[0]), "q": "A3"})
    assert not at.exception and not at.warning
    assert "6 · How the resolvers settle A3" in [h.value for h in at.header]
    answers = at.dataframe[-1].value
    assert len(answers) == 16 and "DSNBF" in answers["label"].tolist()
    assert metrics(at)["Forced methods right"].endswith("of 10")
    at = run_direct(WALK, {"seed": str(train["seed"].iloc[0]),
                           "persona": str(train["persona_id"].iloc[0]), "q": "A3"})
    assert not at.exception
    assert any("Resolvers answer **test** personas only" in i.value for i in at.info)


def test_walkthrough_protocol_uses_the_majority_vote_stand_in(eval_env):
    at = run_direct(WALK)
    assert not at.exception
    assert any("Majority Vote is wrong" in i.value for i in at.info)
    labels = [m.label for m in at.metric]
    assert {"+ (ii)", "+ (iii)", "+ (v)"} <= set(labels)


def test_selective_qa_keeps_the_default_threshold_out_of_the_url(eval_env):
    at = run_direct(SELECTIVE)
    assert not at.exception and "theta" not in at.query_params
    at.slider(key="sq_theta_dsnbf_skip").set_value(0.9).run()
    assert not at.exception and at.query_params["theta"] in ("0.90", ["0.90"])
