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


def _ancestors(node, target, path=()):
    """The blocks from ``node`` down to ``target`` (``None`` if it is not below ``node``)."""
    if node is target:
        return path
    for child in getattr(node, "children", {}).values():
        found = _ancestors(child, target, (*path, node))
        if found is not None:
            return found
    return None


def test_the_atom_grid_spans_the_page_and_fits_its_five_sources(at):
    """Issue 22: in half of the page the atom grid cut its last source column (Device) at
    1280 px. It now spans the main column: the question ids and five equal source columns
    add up to no more than a table has at 1280 px, and its rows wrap, so the longest answer
    in words fits its column on three lines."""
    import json

    from core.testbed.words import LABEL_WORDS
    from pages._shared.records import TABLE_WIDTH, text_px

    grid = next(d for d in at.dataframe if str(d.key).startswith("ex_grid_"))
    assert not any(b.type == "column" for b in _ancestors(at.main, grid))
    config = json.loads(grid.proto.columns)
    widths = [config[c]["width"] for c in grid.value.columns]
    assert len(widths) == 5 and len(set(widths)) == 1
    assert config["_index"]["width"] + sum(widths) <= TABLE_WIDTH
    assert grid.proto.row_height > 64  # Streamlit wraps a cell's text above 4 rem only
    longest = max(text_px(words) for words in LABEL_WORDS.values())
    assert 3 * (widths[0] - 17) >= longest
    assert config["_index"]["width"] >= max(text_px(q) for q in grid.value.index) + 17


def test_the_source_buttons_have_a_row_of_their_own(at):
    """Issue 22: beside the person and the question the five source buttons were cut at
    1280 px (Device, the last, lost its edge); they now have the main column's width."""
    buttons = at.get("button_group")
    source = next(b for b in buttons if "ex_src" in b.proto.id)
    assert not any(b.type == "column" for b in _ancestors(at.main, source))


def test_the_reachability_split_fits_its_expander(at):
    """Issue 22's screenshots: the split by source reachability (seven columns in an
    expander) cut its last column at 1280 px. Every column now has a width, the method and
    the input wrap, and the widths add up to no more than an expander holds at 1280 px."""
    import json

    from pages._shared.records import EXPANDER_TABLE_WIDTH, cell_text, text_px

    split = next(d for d in at.dataframe if "gt_present" in d.value.columns)
    config = json.loads(split.proto.columns)
    widths = {c: config[c]["width"] for c in split.value.columns}
    assert sum(widths.values()) <= EXPANDER_TABLE_WIDTH
    assert split.proto.row_height > 64
    for col in split.value.columns:
        fmt = (config[col].get("type_config") or {}).get("format")
        widest = max(text_px(cell_text(v, fmt)) for v in split.value[col])
        lines = 3 if col in ("label", "input_words") else 1
        assert lines * (widths[col] - 17) >= widest, col
        assert widths[col] >= text_px(config[col].get("label") or col) + 17, col
