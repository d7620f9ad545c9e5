"""AppTests of the Tour page (issue 22): every stop renders, the picker and the buttons move
through the stops with the URL in step, a student's answer stays plain text, the reveal shows
the stop's answer, a bad ``?stop=`` falls back with one notice, and the link carries the
stop's view."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from core.pages_registry import page as page_record
from core.store import connect
from core.tour import ORDER, STOPS, TourData, compute_stop
from tests.app_support import plain
from tests.test_vocabulary import problems, shown

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
TOUR = "pages/0_Tour.py"


def _texts(at) -> str:
    return "\n".join(plain(str(x.value)) for x in [*at.markdown, *at.caption, *at.subheader,
                                                   *at.success, *at.info])


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(HOME, default_timeout=120)  # the home page's menu knows every page
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.switch_page(TOUR).run()


@pytest.fixture(scope="module")
def views(small_store):
    con = connect(small_store)
    try:
        data = TourData(con)
        return {s.key: compute_stop(s.key, data) for s in STOPS}
    finally:
        con.close()


def test_every_stop_renders_with_its_words_figure_link_and_readable_words(app_env, views):
    """Every stop, its answer revealed: the words, the chart, the link, and the vocabulary
    rule of ``tests/test_vocabulary.py`` (the page's default view alone is covered there)."""
    at = _open()
    assert not at.exception, at.exception
    assert at.selectbox(key="stop").value == ORDER[0]
    unreadable = {}
    for number, s in enumerate(STOPS, start=1):
        if number > 1:
            at.selectbox(key="stop").set_value(s.key).run()
        at.toggle(key=f"tour_reveal_{s.key}").set_value(True).run()
        assert not at.exception, (s.key, at.exception)
        issues = problems(shown(at._tree))
        if issues:
            unreadable[s.key] = issues
        text = _texts(at)
        assert f"Stop {number} of {len(STOPS)}: {s.title}" in text
        assert plain(s.question) in text and plain(s.remedy) in text
        view = views[s.key]
        charts = at.get("plotly_chart")
        assert len(charts) == (1 if view.chart is not None else 0), s.key
        links = [e.proto for e in at.get("page_link") if "Try it yourself" in e.proto.label]
        assert len(links) == 1, s.key
        assert links[0].page.removeprefix("/") == page_record(s.page).url_path, s.key
        assert parse_qs(links[0].query_string) == {k: [v] for k, v in view.link}, s.key
        assert at.query_params.get("stop", ORDER[0]) in (s.key, [s.key])
    assert not unreadable, "\n".join(f"{k}: {'; '.join(v)}" for k, v in unreadable.items())


def test_next_and_previous_walk_the_stops_and_keep_the_url(app_env):
    at = _open()
    prev, nxt = at.button[0], at.button[1]
    assert prev.disabled and not nxt.disabled
    nxt.click().run()
    assert at.selectbox(key="stop").value == ORDER[1]
    assert at.query_params["stop"] == ORDER[1]
    at.button[1].click().run()
    at.button[0].click().run()
    assert at.selectbox(key="stop").value == ORDER[1]
    last = _open({"stop": ORDER[-1]})
    assert last.selectbox(key="stop").value == ORDER[-1] and last.button[1].disabled


def test_a_bad_stop_in_the_url_falls_back_with_one_plain_notice(app_env):
    at = _open({"stop": "**QZXJ**"})
    assert not at.exception
    assert at.selectbox(key="stop").value == ORDER[0]
    assert len(at.warning) == 1 and "QZXJ" not in at.warning[0].value


def test_the_reveal_shows_the_answer_and_keeps_the_students_words_plain(app_env, views):
    key = next(k for k in ORDER if views[k].answer)
    at = _open({"stop": key})
    assert not at.success
    guess = "**bold** <b>x</b> [link](http://example.invalid)"
    at.text_input(key=f"tour_guess_{key}").input(guess).run()
    at.toggle(key=f"tour_reveal_{key}").set_value(True).run()
    assert not at.exception
    assert [plain(s.value) for s in at.success] == [plain(views[key].answer)]
    assert plain(views[key].reason) in _texts(at)
    assert guess in [t.value for t in at.text], "the student's answer is shown as plain text"
    assert guess not in "\n".join(m.value for m in at.markdown)


def test_the_index_lists_every_stop_and_both_handouts_are_offered(app_env):
    at = _open()
    index = at.table[0].value
    assert [plain(v) for v in index["Failure mode"]] == [f"{i}. {s.title}"
                                                          for i, s in enumerate(STOPS, 1)]
    labels = [e.proto.label for e in at.get("download_button")]
    assert labels == ["Students' hand-out (HTML)", "Teacher's copy (HTML)"]

