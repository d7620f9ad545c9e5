"""AppTests of the seed-003 pages (Reliability, Ranking reversal, Pilot budget) on a small
one-seed store of this module (it includes the shipped NQ-open tables)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.calibration.paper import TABLE5_A
from core.calibration.pilot import simulate_pilots
from core.calibration.reliability import binned_ece
from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario
from core.testbed.config import TestbedConfig
from tests.app_support import plain

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
RELIABILITY = "pages/5_Reliability.py"
REVERSAL = "pages/6_Ranking_reversal.py"
PILOT = "pages/7_Pilot_budget.py"


@pytest.fixture(scope="module")
def seed003_store(tmp_path_factory) -> Path:
    """One seed × 36 personas, with cached predictions and the NQ-open tables."""
    path = tmp_path_factory.mktemp("seed003") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=12))
    return path


@pytest.fixture
def env(monkeypatch, seed003_store) -> Path:
    monkeypatch.setenv("ARBITER_DB", str(seed003_store))
    return seed003_store


@pytest.fixture(scope="module")
def scenario():
    return generate_scenario(DEFAULT_SCENARIO)


def open_page(page: str, params: dict | None = None) -> AppTest:
    """Open a page as the server does: the entrypoint first, then the page."""
    at = AppTest.from_file(HOME, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run()


def metrics(at) -> dict[str, str]:
    """Metric label → value (a label repeated in a later section keeps its first value)."""
    out: dict[str, str] = {}
    for m in at.metric:
        out.setdefault(m.label, m.value)
    return out


def deltas(at) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in at.metric:
        out.setdefault(m.label, m.delta)
    return out


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def clean(at) -> bool:
    return not at.exception and not at.error and not at.warning


def csv(rows: int = 60, *, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, rows)
    y = (rng.random(rows) < p).astype(int)
    z = y * (rng.random(rows) < 0.6)
    lines = ["p,y,z,p_b"] + [f"{a:.4f},{b},{c},{0.5:.2f}" for a, b, c in zip(p, y, z,
                                                                          strict=True)]
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- Reliability
def test_reliability_scenario_shows_key_numbers_and_every_figure(env, scenario):
    at = open_page(RELIABILITY)
    assert clean(at)
    w = scenario["weight"].to_numpy()
    expected = binned_ece(scenario["native"], scenario["y"], n_bins=10, weights=w)
    m = metrics(at)
    assert m["ECE · native"] == f"{expected:.3f}"
    assert "ECE · EG" in m and "Brier · EG" in m
    specs = charts(at)
    assert len(specs) == 4  # binned, CORP, smooth, decomposition
    names = [t.get("name") for t in specs[0]["data"]]
    assert "perfectly calibrated" in names and "native" in names
    table = at.dataframe[0].value
    assert "ECE (B = 10, uniform)" in table.columns
    assert table["rule"].tolist() == ["native", "EG"]


def test_reliability_label_toggle_redraws_with_z(env, scenario):
    at = open_page(RELIABILITY)
    before = metrics(at)["ECE · native"]
    hint = deltas(at)["ECE · native"]
    at.segmented_control(key="rel_label").set_value("Z").run()
    assert clean(at)
    after = metrics(at)["ECE · native"]
    w = scenario["weight"].to_numpy()
    assert after == f"{binned_ece(scenario['native'], scenario['z'], weights=w):.3f}"
    assert after != before and hint.startswith(after)
    assert "E[Z]" in at.dataframe[0].value.columns


def test_reliability_bins_slider_changes_the_binned_numbers(env):
    at = open_page(RELIABILITY)
    before = metrics(at)["ECE · native"]
    at.slider(key="rel_bins").set_value(4).run()
    assert clean(at)
    assert metrics(at)["ECE · native"] != before
    assert "ECE (B = 4, uniform)" in at.dataframe[0].value.columns


@pytest.mark.parametrize(("choice", "metric"), [("NQ-open", "ECE · agreement"),
                                                ("Resolvers", "ECE · DSNBF")])
def test_reliability_real_data_choices(env, choice, metric):
    at = open_page(RELIABILITY, {"rel_data": choice})
    assert clean(at)
    assert metric in metrics(at)
    assert len(charts(at)) == 4


def test_reliability_bad_url_values_warn_once_each(env):
    at = open_page(RELIABILITY, {"rel_bins": "abc", "rel_label": "W"})
    assert not at.exception and not at.error
    assert len(at.warning) == 2
    assert any("number of bins was not valid" in plain(w.value) for w in at.warning)
    assert not any("abc" in w.value for w in at.warning)
    assert metrics(at)["ECE · native"]  # the page still renders with the defaults


def test_reliability_upload_validates_and_keeps_the_previous_file(env):
    at = open_page(RELIABILITY, {"rel_data": "Upload"})
    assert clean(at) and not at.metric
    assert at.info  # explains the format, offers an example file
    up = at.file_uploader(key="rel_upload")
    up.set_value(("broken.csv", b"p,q\n0.2,1\n0.4,0\n", "text/csv")).run()
    assert not at.exception and len(at.error) == 1
    assert "broken.csv: missing column(s) y" in plain(at.error[0].value)
    assert "\n" not in at.error[0].value
    at.file_uploader(key="rel_upload").set_value(("good.csv", csv(), "text/csv")).run()
    assert clean(at)
    good = metrics(at)["ECE · p"]
    at.file_uploader(key="rel_upload").set_value(
        ("bad.csv", b"p,y\n0.3,1\n1.7,0\n", "text/csv")).run()
    assert not at.exception and len(at.error) == 1
    err = plain(at.error[0].value)
    assert err.startswith("This file was refused: bad.csv: column p must be")
    assert "previous file, good.csv" in err
    assert metrics(at)["ECE · p"] == good


def test_reliability_refuses_a_hostile_upload_and_keeps_the_good_one(env):
    """One 4 MB row of a million fields: refused before parsing, the good file stays."""
    at = open_page(RELIABILITY, {"rel_data": "Upload"})
    at.file_uploader(key="rel_upload").set_value(("good.csv", csv(), "text/csv")).run()
    good = metrics(at)["ECE · p"]
    hostile = b"p,y\n" + b"0.5," * 1_000_000 + b"\n"
    at.file_uploader(key="rel_upload").set_value(("wide.csv", hostile, "text/csv")).run()
    assert not at.exception and len(at.error) == 1
    err = plain(at.error[0].value)
    assert "fields, the header has 2" in err and "previous file, good.csv" in err
    assert metrics(at)["ECE · p"] == good
    at.slider(key="rel_bins").set_value(5).run()  # a later rerun keeps both
    assert not at.exception and len(at.error) == 1 and "ECE · p" in metrics(at)
    assert "Using the file good" in plain(" ".join(c.value for c in at.caption))


def test_reliability_states_what_the_band_and_the_scores_measure(env, scenario):
    """Issue 18: the band sentence carries the measured share of whole calibrated curves
    inside each band (from core), Spiegelhalter's z is described as a test of reliability
    and the log score's clip is stated."""
    from core.calibration.reliability_view import band_note, reliability_view, rule_frame
    from core.calibration.scores import LOG_SCORE_NOTE, SPIEGELHALTER_NOTE

    at = open_page(RELIABILITY)
    assert clean(at)
    captions = " ".join(plain(c.value) for c in at.caption)
    frames = {r: rule_frame(scenario[r], scenario["y"], scenario["z"], scenario["weight"])
              for r in ("native", "eg")}
    view = reliability_view(frames, rules=("native", "eg"), label="y", n_bins=10,
                            strategy="uniform", bands=True)
    note = band_note(view, "native")
    assert note and note in captions and "not noise" not in captions
    assert "subsample" not in captions and "random" not in note
    assert SPIEGELHALTER_NOTE in captions and "tests calibration in the large" not in captions
    assert LOG_SCORE_NOTE in captions and "34.5 nats" in captions
    names = {t.get("name") for t in charts(at)[0]["data"]}
    assert "90% band for the whole curve (native)" in names
    at.toggle(key="rel_bands").set_value(False).run()
    assert clean(at) and "holds a whole curve" not in " ".join(c.value for c in at.caption)


def test_reliability_says_when_a_large_upload_is_banded_on_a_subsample(env):
    from core.calibration.reliability_view import MAX_BAND_ROWS

    rows = MAX_BAND_ROWS + 1000
    at = open_page(RELIABILITY, {"rel_data": "Upload"})
    at.file_uploader(key="rel_upload").set_value(("big.csv", csv(rows), "text/csv")).run()
    assert clean(at)
    captions = " ".join(plain(c.value) for c in at.caption)
    assert f"computed on a random {MAX_BAND_ROWS:,} of the {rows:,} rows" in captions


# ---------------------------------------------------------------- Ranking reversal
def verdict(at) -> str:
    return metrics(at)["Selected at π"]


def test_ranking_reversal_prevalence_slider_flips_the_selected_rule(env, scenario):
    at = open_page(REVERSAL)
    assert clean(at)
    w = scenario["weight"].to_numpy()
    a = np.average(scenario["native"], weights=w)
    b = np.average(scenario["eg"], weights=w)
    assert metrics(at)["Crossover"] == f"{(a + b) / 2:.3f}"
    assert verdict(at) == "native"
    assert metrics(at)["Measured at π"] == "native"
    at.slider(key="rr_prev").set_value(0.5).run()
    assert clean(at)
    assert verdict(at) == "EG" and metrics(at)["Measured at π"] == "EG"
    assert "Reversals of 21 pairs" in metrics(at)
    assert len(charts(at)) == 4  # gap, identity, bridge, systems


def test_ranking_reversal_omission_slider_moves_the_reference(env):
    at = open_page(REVERSAL)
    before = metrics(at)["E[Z] → E[Y]"]
    at.slider(key="rr_omit").set_value(0.2).run()
    assert clean(at)
    after = metrics(at)["E[Z] → E[Y]"]
    assert after != before and after.endswith(before.split(" → ")[1])  # Y does not move


def test_ranking_reversal_prevalence_follows_the_data(env):
    """Switching the data puts π at that data's truth prevalence E[Y] (a link's π is kept)."""
    import duckdb

    with duckdb.connect(str(env), read_only=True) as con:
        truth = con.execute("SELECT avg(y) FROM nq301_answers").fetchone()[0]
    at = open_page(REVERSAL, {"rr_prev": "0.4"})
    assert at.slider(key="rr_prev").value == pytest.approx(0.4)
    at.button_group(key="rr_data").set_value("nq").run()
    assert clean(at)
    assert 0.5 < truth < 0.6  # NQ-open: the humans accept about 55 % of the answers
    assert at.slider(key="rr_prev").value == pytest.approx(round(truth, 2))
    at.button_group(key="rr_data").set_value("scenario").run()
    assert at.slider(key="rr_prev").value == pytest.approx(0.78)
    # a link straight to NQ-open starts at its E[Y] too, unless it names π
    at = open_page(REVERSAL, {"rr_data": "NQ-open"})
    assert at.slider(key="rr_prev").value == pytest.approx(round(truth, 2))
    at = open_page(REVERSAL, {"rr_data": "NQ-open", "rr_prev": "0.3"})
    assert at.slider(key="rr_prev").value == pytest.approx(0.3)


def test_ranking_reversal_nq_case_and_bad_url(env):
    at = open_page(REVERSAL, {"rr_data": "NQ-open", "rr_prev": "2"})
    assert not at.exception and not at.error
    assert len(at.warning) == 1 and "prevalence was not valid" in plain(at.warning[0].value)
    m = metrics(at)
    assert m["Selected at π"] in ("agreement", "const@0.50")
    assert m["Reversals of 21 pairs"].endswith("/ 21")
    assert at.info  # the protocols need the scenario's matcher flags


# ---------------------------------------------------------------- Pilot budget
def test_pilot_budget_numbers_and_budget_slider(env, scenario):
    at = open_page(PILOT, {"pb_reps": "500"})
    assert not at.exception and not at.error and not at.warning
    sim = simulate_pilots(scenario, budget=50, reps=500, seed=0).summary()
    tri = sim.set_index("estimator").loc["trisource"]
    m = metrics(at)
    assert m["RMSE"] == f"{tri['rmse']:.4f}"
    assert m["Coverage"] == f"{tri['coverage']:.3f}"
    assert "Truth gap Δ_Y" not in m  # the real-data pilots run only once opened
    assert len(charts(at)) == 3  # curves, held-out, Algorithm 1
    at.session_state["pb_nq_open"] = True
    at.run()
    m = metrics(at)
    assert not at.exception and "Truth gap Δ_Y" in m
    assert len(charts(at)) == 4  # and the NQ-open curves
    steps = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    assert steps["step"].tolist()[0] == 1 and steps["escalate"].dtype == bool
    at.slider(key="pb_budget").set_value(120).run()
    assert not at.exception and not at.error
    assert float(metrics(at)["RMSE"]) < float(m["RMSE"])
    # the two collapsed tables are drawn only once opened
    n_tables = len(at.dataframe)
    assert not any("look" in d.value.columns for d in at.dataframe)
    at.session_state["pb_panel_a_open"] = True
    at.session_state["pb_sampled_open"] = True
    at.run()
    assert not at.exception and len(at.dataframe) == n_tables + 2
    panel_a = next(d.value for d in at.dataframe if "width saved" in d.value.columns)
    here = panel_a[panel_a["source"].str.startswith("measured")]
    seed = panel_a[panel_a["source"].str.startswith("answer-key paper")]
    assert here["budget"].tolist() == [120, 120]
    assert seed["budget"].tolist() == [TABLE5_A["budget"]] * 2
    assert seed["RMSE"].tolist() == list(TABLE5_A["rmse"])
    at120 = simulate_pilots(scenario, budget=120, reps=500, seed=0).summary()
    # shown to the four digits the table prints (Python's rounding, not the browser's)
    assert here["RMSE"].tolist() == [round(v, 4) for v in at120["rmse"]]
    assert "width_reduction" not in panel_a.columns  # the wide summary is the download
    sampled = next(d.value for d in at.dataframe if "look" in d.value.columns)
    assert set(sampled["stratum"]) <= {"unmatched, high confidence", "unmatched, lower confidence",
                                       "matched, high confidence", "matched, lower confidence"}


def test_pilot_budget_speaks_plainly_with_every_section_open(env):
    """No raw Python values in the prose, short metric labels and deltas, one gap wording."""
    at = open_page(PILOT, {"pb_reps": "200"})
    for key in ("pb_panel_a_open", "pb_sampled_open", "pb_judge_open", "pb_nq_open"):
        at.session_state[key] = True
    at.run()
    assert not at.exception and not at.error
    prose = [plain(e.value) for kind in ("caption", "markdown", "success", "info", "warning")
             for e in at.get(kind)]
    raw = re.compile(r"\b(?:True|False|None|nan|inf)\b|select [AB]\b|\(rule [AB]\)")
    assert not [t for t in prose if raw.search(t)]
    assert any("above 0: native is better" in t for t in prose)
    assert len(at.metric) == 16
    assert all(len(m.label) <= 22 and len(m.delta or "") <= 22 for m in at.metric)
    steps = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    assert set(steps["decision"]) <= {"native", "EG", "—"}


def test_pilot_budget_bad_url_value_warns(env):
    at = open_page(PILOT, {"pb_reps": "500", "pb_budget": "abc"})
    assert not at.exception and not at.error
    assert len(at.warning) == 1 and "budget was not valid" in plain(at.warning[0].value)


def test_smooth_consistency_band_is_seeded_and_centred_on_calibration():
    from pages._shared.seed003 import smooth_consistency_band

    p = np.random.default_rng(1).uniform(0.1, 0.9, 500)
    a = smooth_consistency_band(p, sigma=0.08, n_boot=40, seed=3)
    b = smooth_consistency_band(p, sigma=0.08, n_boot=40, seed=3)
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    inside = (a.low <= a.grid) & (a.grid <= a.high)
    mid = (a.grid > 0.2) & (a.grid < 0.8)
    assert inside[mid].mean() > 0.9 and np.all(a.low <= a.high)


def test_a_link_naming_the_nq_rules_opens_their_section(env):
    at = open_page(PILOT, {"pb_reps": "500", "pb_nq_b": "const@0.40"})
    assert not at.exception and "Truth gap Δ_Y" in metrics(at)


def test_pilot_budget_judge_check_opens_and_states_measured_numbers(env):
    from core.calibration.pilot import judge_sensitivity

    at = open_page(PILOT, {"pb_reps": "200", "pb_jbias": "2"})
    assert "Width saved, quality 0" not in metrics(at)  # lazy: not computed yet
    at.session_state["pb_judge_open"] = True
    at.run()
    assert not at.exception and not at.error
    table = judge_sensitivity(DEFAULT_SCENARIO, budget=50, reps=200, qualities=(0.0, 0.4),
                              biases=(0.0, 2.0)).set_index(["judge_quality", "judge_bias"])
    m = metrics(at)
    lean = table.loc[(0.4, 2.0), "trisource_coverage"]
    assert m["TriSource coverage"] == f"{lean:.3f}"
    assert m["Width saved, quality 0"] == f"{table.loc[(0.0, 0.0), 'width_reduction']:.1%}"
    text = " ".join(plain(c.value) for c in at.caption)
    assert "the estimators do not coincide" in text and "coincide (the 5 %" not in text


def test_pilot_budget_with_a_perfect_reference_explains_instead_of_failing(env):
    """Issue 18.8: both reference-error sliders at 0 (legal values) raised a ValueError."""
    at = open_page(PILOT, {"pb_reps": "200", "pb_omit": "0", "pb_fmr": "0"})
    assert not at.exception and not at.error
    m, d = metrics(at), deltas(at)
    assert d["Coverage"] == "human-only —" and d["95 % width"] == "human-only —"
    text = " ".join(plain(c.value) for c in at.caption)
    assert "Human-only gave no interval in any pilot" in text and "RMSE 0" in text
    assert m["RMSE"] != "—"


def test_pilot_budget_says_how_many_small_pilots_have_no_interval(env):
    """Issue 18.5: at 10 labels about 30 % of stratified pilots have no interval; the page
    states that share and the coverage over all pilots beside the coverage it shows."""
    from core.calibration.pilot_view import EstimatorMetrics, coverage_words

    at = open_page(PILOT, {"pb_reps": "200", "pb_budget": "10"})
    assert not at.exception and not at.error
    sim = simulate_pilots(generate_scenario(DEFAULT_SCENARIO), budget=10, reps=200, seed=0,
                          heldout=False).summary().set_index("estimator")
    h, t = (EstimatorMetrics.of(sim.loc[e]) for e in ("human_only", "trisource"))
    text = " ".join(plain(c.value) for c in at.caption)
    assert plain(coverage_words(h, t)) in text
    assert f"coverage over all pilots is {t.coverage_all:.3f}" in text
    assert "large share" in text and t.no_interval > 0.2
    assert "some pilots give no interval" in text  # the curve's dotted lines, explained


def test_ranking_reversal_cards_and_caption_agree_and_q_star_is_a_share(env):
    """Issue 18.6-7: at π = .58 the cards said EG / native while the caption said the shortcut
    holds; q* was shown as a share when negative; the residual printed as -2.2e-16."""
    at = open_page(REVERSAL, {"rr_prev": "0.58"})
    assert clean(at)
    m = metrics(at)
    assert (m["Selected at π"], m["Measured at π"]) == ("EG", "native")
    text = " ".join(plain(c.value) for c in at.caption)
    assert "the midpoint shortcut fails" in text and "shortcut holds" not in text
    assert not re.search(r"e-1\d", text)  # no rounding noise
    assert m["Restore q*"].endswith("%")  # the default scenario's q* is a share
    at = open_page(REVERSAL, {"rr_prev": "0.58", "rr_omit": "0.1", "rr_fmr": "0.14"})
    assert clean(at)
    assert metrics(at)["Restore q*"] == "—"
    text = " ".join(plain(c.value) for c in at.caption)
    assert "No share of the omitted truths brings a tie" in text
