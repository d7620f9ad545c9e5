"""The Extraction page through AppTest: the prose, its marked sentences and the atom grid,
faithfulness, the noise board and the 2 × 2, each against ``core`` on the same store."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.prose.views import (
    ProseLine,
    ProseSection,
    factorial_view,
    faithfulness_view,
    mixed_fit,
    noise_view,
    prose_personas,
    prose_view,
)
from core.store import connect
from pages._shared.prose import MARK_CLASS, prose_html

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "10_Extraction.py")
WALK = str(Path(__file__).resolve().parents[1] / "pages" / "1_Walkthrough.py")


@pytest.fixture
def at(app_env):
    """The page opened on the small store (default widgets)."""
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.fixture
def core_con(small_store):
    con = connect(small_store, read_only=True)
    yield con
    con.close()


def noise_board(app: AppTest):
    """The noise board: the one table with accuracies on μ̂."""
    boards = [d.value for d in app.dataframe if "accuracy_hat" in d.value.columns]
    assert len(boards) == 1
    return boards[0]


def marked_count(app: AppTest) -> int:
    """Marked lines in the first (the chosen section's) prose box."""
    return app.get("html")[0].proto.body.count(f'class="{MARK_CLASS}"')


def test_the_default_view_shows_the_first_test_persona_with_c3_from_the_self_report(
        at, core_con):
    seed, pid = prose_personas(core_con)[0]
    v = prose_view(core_con, seed=seed, persona_id=pid, qid="C3", source="daily_self_report")
    assert at.selectbox(key="ex_persona").value == f"{seed}-{pid}"
    chosen = next(s for s in v.sections if s.source == "daily_self_report")
    assert chosen.n_marked > 0
    assert marked_count(at) == chosen.n_marked  # every marked line lies on a shown day
    grid = at.dataframe[0].value
    assert grid.shape == (18, 5) and list(grid.index)[:2] == ["A1", "A2"]


def test_picking_another_source_marks_that_sources_sentences(at, core_con):
    seed, pid = prose_personas(core_con)[0]
    at.selectbox(key="ex_q").set_value("C2").run()  # the planner answers C2, not C3
    at.button_group(key="ex_src").set_value("planner").run()
    assert not at.exception
    v = prose_view(core_con, seed=seed, persona_id=pid, qid="C2", source="planner")
    planner = next(s for s in v.sections if s.source == "planner")
    assert marked_count(at) == planner.n_marked > 0
    assert at.query_params["ex_src"] in ("planner", ["planner"])


def test_a_question_the_source_cannot_answer_says_so(at):
    at.selectbox(key="ex_q").set_value("A1").run()  # work hours: the planner reads a cap only
    at.button_group(key="ex_src").set_value("device_log").run()
    assert not at.exception
    texts = [i.value for i in at.info]
    assert not texts or all("does not answer" in t for t in texts)


def test_faithfulness_and_noise_numbers_are_core_s(at, core_con):
    f = faithfulness_view(core_con)
    values = {m.label: m.value for m in at.metric}
    assert values["Cells equal to μ*"] == f"{f.overall:.2f} %"
    fit = mixed_fit(core_con)
    nv = noise_view(fit, profile="uniform", eps=0.1)
    board = noise_board(at)
    row = board[board["label"] == "DSNBF"].iloc[0]
    dsnbf = nv.frame.set_index("method").loc["dsnbf"]
    assert row["accuracy_hat"] == pytest.approx(round(dsnbf["accuracy_hat"], 1))
    at.slider(key="ex_eps").set_value(0.0).run()
    board = noise_board(at)
    assert (board["change"] == 0).all()  # no flips: every method as on μ*
    fv = factorial_view(fit, a="dsnbf", b="majority_vote", profile="uniform", eps=0.0,
                        n_boot=1000)
    assert any(fv.story == c.value for c in at.caption)


def test_the_same_method_twice_asks_for_two(at):
    at.selectbox(key="ex_b").set_value("dsnbf").run()
    assert not at.exception
    assert any("two different methods" in i.value for i in at.info)


def test_the_paper_profile_disables_the_slider(at):
    at.button_group(key="ex_profile").set_value("paper").run()
    assert not at.exception
    assert at.slider(key="ex_eps").disabled


def test_the_paraphrase_profile_is_measured_and_said_in_words(at, core_con):
    """Issue 19: the noise panel offers our extractor's measured profile on reworded prose,
    says what it is, and the board is core's for that profile."""
    from core.prose.paraphrase_profile import load_paraphrase_profile, profile_words

    at.button_group(key="ex_profile").set_value("paraphrase").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.slider(key="ex_eps").disabled
    words = profile_words(load_paraphrase_profile())
    assert any(c.value == words for c in at.caption)
    assert "Measured, not assumed" in words and "ε does not apply" in words
    nv = noise_view(mixed_fit(core_con), profile="paraphrase", eps=0.1)
    board = noise_board(at)
    row = board[board["label"] == "DSNBF"].iloc[0]
    assert row["accuracy_hat"] == pytest.approx(
        round(nv.frame.set_index("method").loc["dsnbf", "accuracy_hat"], 1))
    assert any(c.value.endswith(nv.story) for c in at.caption)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
                                  "**bold** [link](http://example.invalid)", "a & b < c"])
def test_prose_lines_are_escaped_never_markup(text):
    section = ProseSection("Daily Self-Reports", "daily_self_report",
                           (ProseLine(0, len(text), text, "2026-01-03 (<b>Sat</b>)", True),
                            ProseLine(0, 1, text, None, False)), 1)
    out = prose_html(section)
    assert "<script>" not in out and "<img" not in out and "<b>Sat" not in out
    assert out.count("&lt;") >= 2 * text.count("<") + 1 or "<" not in text
    assert out.count(f'class="{MARK_CLASS}"') == 1


def test_marked_days_keeps_only_the_days_with_a_marked_line():
    lines = (ProseLine(0, 1, "a", "d1", False), ProseLine(2, 3, "b", "d2", True),
             ProseLine(4, 5, "c", "d2", False), ProseLine(6, 7, "d", "d3", False))
    out = prose_html(ProseSection("T", "planner", lines, 1), marked_days=True)
    assert ">b<" in out and ">c<" in out and ">a<" not in out and ">d<" not in out
    none = prose_html(ProseSection("T", "planner", lines[:1], 0), marked_days=True)
    assert ">a<" in none  # nothing marked: the whole section


def test_an_imported_release_shows_its_prose_and_gpt_atoms_without_a_fit(monkeypatch,
                                                                          sample_store):
    """The release sample: one test person, GPT-5.4's atoms, no train split to fit on."""
    db = sample_store
    monkeypatch.setenv("ARBITER_DB", str(db))
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    con = connect(db, read_only=True)
    try:
        f = faithfulness_view(con)
        seed, pid = prose_personas(con)[0]
        v = prose_view(con, seed=seed, persona_id=pid, qid="C3", source="daily_self_report")
    finally:
        con.close()
    assert f.extractor == "gpt-5.4" and (f.k, f.n_cells) == (86, 90)  # docs/prose.md: 95.56 %
    assert {m.label: m.value for m in app.metric}["Cells equal to μ*"] == "95.56 %"
    assert marked_count(app) == next(s.n_marked for s in v.sections
                                     if s.source == "daily_self_report") > 0
    assert any("cannot be fitted" in i.value for i in app.info)
    assert any("4 cell(s) differ" in c.value for c in app.caption)


def test_the_walkthrough_shows_the_sentences_behind_its_question(app_env, small_store):
    app = AppTest.from_file(WALK, default_timeout=120)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    boxes = [h.proto.body for h in app.get("html")]
    assert boxes and all(MARK_CLASS in b for b in boxes)  # every excerpt line is marked


def test_the_round_trip_and_the_reworded_figure_are_shown_apart(at, core_con):
    """Issue 19: the round trip is not set beside the paper's LLM; the reworded figure is,
    with the comparison in words."""
    from core.prose.views import wording_view
    from pages._shared.prose import WORDING_RATE

    w = wording_view(core_con, rate=WORDING_RATE)
    values = {m.label: m.value for m in at.metric}
    assert values["Reworded prose: cells equal to μ*"] == f"{w.paraphrased:.2f} %"
    assert values["The paper's GPT-5.4 extractor"] == "93.08 %"
    assert any(w.story == c.value for c in at.caption)
    assert any(c.value.startswith("A round trip:") for c in at.caption)
    assert w.paraphrased < w.round_trip
