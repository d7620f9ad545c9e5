"""AppTests of the Leaderboard's imported-LLM rows: on the released sample persona imported
with ``python -m core import-release`` (LLM answers, no resolver results), on a copy of the
small store given LLM answers, and on the small store itself (no LLM rows at all)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from core.evaluation.cached import load_runs
from core.evaluation.llm_rows import LLM_KIND
from core.evaluation.tables import main_table
from core.store import connect, query_df
from tests.app_support import plain

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
LEADERBOARD = "pages/2_Leaderboard.py"
SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"  # CC BY 4.0


def open_leaderboard(params: dict | None = None) -> AppTest:
    """The entrypoint first, then the page, as the server does."""
    at = AppTest.from_file(HOME, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(LEADERBOARD).run()


def text_of(at) -> str:
    """Every markdown and caption, without the backslashes of escaped user text."""
    return plain("\n".join(str(p.value) for p in (*at.markdown, *at.caption)))


def frame_with(at, column: str, value: str):
    """The first shown table whose ``column`` holds ``value``."""
    for df in at.dataframe:
        frame = df.value
        if column in frame.columns and value in set(frame[column].astype(str)):
            return frame
    raise AssertionError(f"no table has {value!r} in its {column!r} column")


@pytest.fixture
def sample_db(sample_store) -> Path:
    """The session's imported release sample (``tests/conftest.py``)."""
    return sample_store


def _by_hand(db: Path, variant: str) -> float:
    """Percent of the 18 GPT-5.4 answers equal to the store's ground truth."""
    con = connect(db)
    try:
        rows = query_df(con, "SELECT a.answer AS a, g.answer AS g FROM ground_truth g LEFT JOIN "
                             "llm_answers a ON a.seed = g.seed AND a.persona_id = g.persona_id "
                             "AND a.question_id = g.question_id AND a.model = 'gpt-5.4' AND "
                             "a.variant = ?", [variant])
    finally:
        con.close()
    assert len(rows) == 18
    return 100 * sum(a == g for a, g in zip(rows["a"], rows["g"], strict=True)) / 18


def test_leaderboard_on_the_imported_sample_shows_gpt_rows_for_one_person(sample_db,
                                                                          monkeypatch):
    monkeypatch.setenv("ARBITER_DB", str(sample_db))
    at = open_leaderboard()
    assert not at.exception and not at.error
    assert "no resolver results" in at.info[0].value
    frame = frame_with(at, "label", "GPT-5.4 (Direct prompt)")
    rows = frame.set_index("label")
    for variant, label in (("direct", "GPT-5.4 (Direct prompt)"),
                           ("schema-aware", "GPT-5.4 (Schema-aware prompt)")):
        assert rows.loc[label, "accuracy"] == float(f"{_by_hand(sample_db, variant):.1f}")
        assert rows.loc[label, "n_clusters"] == 1
    text = text_of(at)
    assert "1 person" in text and "GPT-5.4" in text and LLM_KIND in text
    assert len(at.get("download_button")) == 2  # CSV + Parquet of the one table


@pytest.fixture(scope="module")
def store_with_llm(small_store, tmp_path_factory) -> tuple[Path, int]:
    """A copy of the small store whose first three test people got 'gpt-5.4' Direct answers
    equal to their ground truth (so the row is 100 % by construction)."""
    db = tmp_path_factory.mktemp("with_llm") / "small_llm.duckdb"
    shutil.copyfile(small_store, db)
    con = duckdb.connect(str(db))
    try:
        con.execute("""
            INSERT INTO llm_answers
            WITH three AS (SELECT seed, persona_id FROM personas WHERE split = 'test'
                           ORDER BY seed, persona_id LIMIT 3)
            SELECT 'gpt-5.4', 'direct', g.seed, g.persona_id, g.question_id, g.answer, false
            FROM ground_truth g JOIN three USING (seed, persona_id)""")
        n = con.execute("SELECT count(*) FROM llm_answers").fetchone()[0]
    finally:
        con.close()
    assert n == 3 * 18
    return db, 3


def test_leaderboard_adds_the_llm_rows_to_the_board(store_with_llm, monkeypatch):
    db, people = store_with_llm
    monkeypatch.setenv("ARBITER_DB", str(db))
    at = open_leaderboard({"lb_methods": ["DSNBF", "MV"], "lb_b": "200"})
    assert not at.exception and not at.error and not at.warning
    forced = frame_with(at, "kind", LLM_KIND).set_index("label")
    row = forced.loc["GPT-5.4 (Direct prompt)"]
    assert row["kind"] == LLM_KIND and row["accuracy"] == 100.0
    assert row["n_clusters"] == people and row["paper"] == 68.6
    con = connect(db)
    try:
        expected = main_table(load_runs(con), b=200).set_index("label")
    finally:
        con.close()
    for label in ("DSNBF", "Majority Vote"):  # the resolver rows do not move
        match = [lab for lab in forced.index if lab.startswith(label)]
        assert match and forced.loc[match[0], "accuracy"] == float(
            f"{expected.loc[match[0], 'accuracy']:.1f}")
    forest = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert [t["name"] for t in forest][-1].startswith("imported model answers")
    assert forest[-1]["y"] == ["GPT-5.4 (Direct prompt)"]
    text = text_of(at)
    assert f"on {people} people of the test split" in text and "GPT-5.4" in text


def test_leaderboard_without_llm_answers_has_no_llm_rows(app_env):
    at = open_leaderboard({"lb_b": "200"})
    assert not at.exception and not at.error
    assert all("kind" not in df.value.columns for df in at.dataframe)
    assert LLM_KIND not in text_of(at)
    forest = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert len(forest) == 3
