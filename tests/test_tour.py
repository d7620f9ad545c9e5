"""The guided tour's frame (issue 22): records and their invariants, the registry, the charts,
the failure-mode index, the HTML hand-outs and ``python -m core tour``.

Each stop's own check (its example really shows the failure) is tested beside its module:
``tests/test_tour_memory.py``, ``test_tour_pipeline.py``, ``test_tour_labels.py`` and
``test_tour_records.py``; here every stop is also computed once on the small store.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.cli import main
from core.figures.tour import STATUS_LOOK, stop_figure
from core.glossary import find
from core.pages_registry import PAGES
from core.store import connect
from core.tour import (
    INDEX_COLUMNS,
    ORDER,
    STOPS,
    STORIES,
    Chart,
    Stop,
    StopView,
    TeacherNote,
    TourData,
    compute_stop,
    compute_tour,
    index_frame,
    stop,
    terms_in,
    tour_html,
)
from core.tour.model import CHART_KINDS

NOTE = TeacherNote("Ask this.", "The usual wrong answer.", "A follow-up.")


def _stop(key: str = "a-stop", **kw) -> Stop:
    fields = dict(key=key, title="A failure", story="memory", section="Seed 000, §4.2",
                  failure="Something goes wrong.", rule="The first by id.",
                  question="What happens?", remedy="Do the other thing.",
                  page="pages/1_Walkthrough.py", control="the persona picker", teacher=NOTE,
                  compute=lambda data: None)
    fields.update(kw)
    return Stop(**fields)


ANSWERS = pd.DataFrame({"who": ["Planner", "Self-report", "Device", "Majority vote", "Truth"],
                        "role": ["source", "source", "source", "resolver", "truth"],
                        "answer": ["a lot", "a lot", "a little", "a lot", "a little"],
                        "status": ["wrong", "wrong", "right", "wrong", "right"]})
CHARTS = {
    "answers": Chart("answers", ANSWERS, "Who said what"),
    "bars": Chart("bars", pd.DataFrame({"group": ["x", "x", "y", "y"],
                                        "series": ["A", "B", "A", "B"],
                                        "value": [0.1, 0.2, 0.3, 0.4], "lo": [0, .1, .2, .3],
                                        "hi": [.2, .3, .4, .5]}), "Bars", y_range=(0, 1)),
    "lines": Chart("lines", pd.DataFrame({"x": [0, 1, 2, 0, 1, 2], "y": [1, 2, 3, 3, 2, 1],
                                          "series": list("AAABBB"),
                                          "marker": [False, True, False] * 2}),
                   "Lines", marker=1.5, marker_label="crossover"),
    "days": Chart("days", pd.DataFrame({"series": ["planned"] * 3 + ["actual"] * 3,
                                        "day": [1, 2, 3] * 2,
                                        "value": [30, 30, 30, 0, np.nan, 10]}), "Days"),
    "timeline": Chart("timeline", pd.DataFrame({
        "row": ["old phone", "new phone"], "start": ["2024-01-01", "2025-03-01"],
        "end": ["2025-02-28", "2026-01-01"], "status": ["expired", "chosen"]}), "Records",
        marker="2025-06-01", marker_label="as of"),
    "matrix": Chart("matrix", pd.DataFrame({"row": ["a", "a", "b", "b"],
                                            "col": ["a", "b", "a", "b"],
                                            "value": [1, .9, .9, 1]}), "Agreement"),
}


def _view(key: str = "a-stop", *, chart: Chart | None = None, text: str = "p_001") -> StopView:
    return StopView(key, (("Person", text), ("Question", "How often?")), (("Bias", "×1"),),
                    chart or CHARTS["answers"], "Majority vote says 'a lot'.",
                    "Two biased sources outvote the device.", (("seed", "1"),),
                    (("sources wrong", "2 of 3"),), True)


# ---------------------------------------------------------------- records and invariants
@pytest.mark.parametrize("change, message", [
    ({"key": "Bad Key"}, "lower-case"),
    ({"key": ""}, "lower-case"),
    ({"story": "seed-000"}, "story must be one of"),
    ({"page": "Walkthrough"}, "pages/<n>_<Title>.py"),
    ({"question": " "}, "needs its question"),
    ({"remedy": ""}, "needs its remedy"),
])
def test_a_stop_refuses_incomplete_words(change, message):
    with pytest.raises(ValueError, match=message):
        _stop(**change)


@pytest.mark.parametrize("example, chart, evidence, shows, note, ok", [
    ((("a", "b"),), CHARTS["answers"], (("n", "1"),), True, "", True),
    ((), CHARTS["answers"], (("n", "1"),), True, "", False),      # shows without an example
    ((("a", "b"),), None, (("n", "1"),), True, "", False),        # shows without a chart
    ((("a", "b"),), CHARTS["answers"], (), True, "", False),      # shows without evidence
    ((), None, (), False, "no example in this store", True),
    ((), None, (), False, " ", False),                            # fails to say why
])
def test_a_view_shows_its_failure_only_with_example_chart_and_evidence(
        example, chart, evidence, shows, note, ok):
    def make():
        return StopView("k", example, (), chart, "", "", (), evidence, shows, note)
    if ok:
        assert make().shows_failure is shows
    else:
        with pytest.raises(ValueError, match="stop 'k'"):
            make()


@pytest.mark.parametrize("kind", sorted(CHART_KINDS))
def test_a_chart_names_the_columns_it_misses(kind):
    with pytest.raises(ValueError, match=f"a {kind!r} chart needs the columns"):
        Chart(kind, pd.DataFrame({"nothing": [1]}), "Title")


def test_a_chart_needs_a_known_kind_and_a_title():
    with pytest.raises(ValueError, match="chart kind must be one of"):
        Chart("pie", ANSWERS, "Title")
    with pytest.raises(ValueError, match="a title"):
        Chart("answers", ANSWERS, "  ")


def test_the_memo_computes_each_key_once_across_threads():
    data, calls, barrier = TourData(), [], threading.Barrier(8)

    def slow():
        calls.append(1)
        return object()

    results = []

    def worker():
        barrier.wait()
        results.append(data.memo("k", slow))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1
    assert data.memo("other", lambda: 2) == 2 and not data.has_store
    with pytest.raises(LookupError, match="python -m core build"):
        data.connection()


# ---------------------------------------------------------------- the registry
def test_every_failure_mode_of_the_issue_has_exactly_one_stop_in_walking_order():
    assert [s.key for s in STOPS] == list(ORDER)
    assert len(set(ORDER)) == len(ORDER) == 16
    assert {s.story for s in STOPS} == set(STORIES)


@pytest.mark.parametrize("s", STOPS, ids=lambda s: s.key)
def test_every_stop_is_complete_and_points_at_a_real_page(s):
    pages = {p.path for p in PAGES}
    assert s.page in pages and s.page != "pages/0_Tour.py"
    assert (Path(__file__).resolve().parents[1] / s.page).is_file()
    for text in (s.title, s.failure, s.rule, s.question, s.remedy, s.control,
                 s.teacher.ask, s.teacher.wrong_answer, s.teacher.follow_up):
        assert text.strip() and "`" not in text and "_" not in re.sub(r"\S+\.py", "", text), (
            f"{s.key}: code-style text {text!r}")
    assert s.question.rstrip().endswith("?"), f"{s.key}: the question must ask something"
    sentences = [x for x in re.split(r"(?<=[.!?])\s+", s.failure.strip()) if x]
    assert 1 <= len(sentences) <= 4, f"{s.key}: two or three plain sentences"


TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*)")
ORDINARY = {"URL", "CSV", "HTML", "PNG", "JSON", "QA", "GPT", "ID", "OK", "MB", "NQ", "A", "B"}


@pytest.mark.parametrize("s", STOPS, ids=lambda s: s.key)
def test_every_abbreviation_a_stop_writes_is_in_the_glossary(s):
    words = " ".join((s.title, s.failure, s.rule, s.question, s.remedy, s.control,
                      s.teacher.ask, s.teacher.wrong_answer, s.teacher.follow_up))
    missing = sorted({t for t in TOKEN.findall(words)
                      if t not in ORDINARY and find(t) is None and find(t.split("_")[0]) is None})
    assert not missing, f"{s.key} writes {missing}, which no glossary term lists"


def test_an_unknown_stop_names_the_known_ones():
    with pytest.raises(ValueError, match="biased-majority"):
        stop("no-such-stop")


# ---------------------------------------------------------------- the charts
@pytest.mark.parametrize("kind", sorted(CHART_KINDS))
def test_every_chart_kind_draws_a_titled_figure(kind):
    fig = stop_figure(CHARTS[kind])
    assert isinstance(fig, go.Figure) and fig.data
    assert fig.layout.title.text == CHARTS[kind].title
    assert fig.layout.height >= 200


def test_the_answers_chart_puts_each_status_in_its_own_legend_entry_with_its_symbol():
    fig = stop_figure(CHARTS["answers"])
    names = {t.name for t in fig.data}
    assert names == {"◆ the truth", f"{STATUS_LOOK['wrong'][1]} wrong",
                     f"{STATUS_LOOK['right'][1]} right"}
    wrong = next(t for t in fig.data if t.name.endswith("wrong"))
    assert sorted(wrong.y) == ["Majority vote", "Planner", "Self-report"]
    assert list(fig.layout.xaxis.categoryarray) == ["a lot", "a little"]


def test_a_day_without_a_record_is_crossed_never_drawn_as_zero():
    fig = stop_figure(CHARTS["days"])
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z).sum() == 1 and z[list(fig.data[0].y).index("actual"), 0] == 0
    crosses = fig.data[1]
    assert crosses.name == "no record that day" and list(crosses.x) == [2]


def test_the_reference_line_is_drawn_on_date_axes_too():
    fig = stop_figure(CHARTS["timeline"])
    assert fig.layout.shapes[0].x0 == "2025-06-01"
    assert fig.layout.annotations[0].text == "as of"
    assert fig.layout.xaxis.type == "date"


def test_stop_figure_refuses_what_is_not_a_chart():
    with pytest.raises(ValueError, match="draws a core.tour.model.Chart"):
        stop_figure(ANSWERS)


# ---------------------------------------------------------------- index and hand-outs
def test_the_index_has_one_row_per_stop_with_page_titles():
    frame = index_frame(STOPS)
    assert tuple(frame.columns) == INDEX_COLUMNS and len(frame) == len(STOPS)
    assert list(frame["Stop"]) == list(range(1, len(STOPS) + 1))
    titled = index_frame([_stop()], page_titles={"pages/1_Walkthrough.py": "Walkthrough"})
    assert titled["Full page"].iloc[0] == "Walkthrough"
    assert index_frame([_stop()])["Full page"].iloc[0] == "1_Walkthrough"
    numbered = index_frame(STOPS[:2], numbered=True)
    assert "Stop" not in numbered.columns
    assert list(numbered["Failure mode"]) == [f"{i}. {s.title}" for i, s in enumerate(STOPS[:2], 1)]


def _fake_tour(n: int = 6) -> list[tuple[Stop, StopView]]:
    kinds = sorted(CHART_KINDS)
    out = []
    for i in range(n):
        key = f"stop-{i}"
        out.append((_stop(key, title=f"Failure {i}"),
                    _view(key, chart=CHARTS[kinds[i % len(kinds)]],
                          text="<script>alert(1)</script> & <b>bold</b>" if i == 0 else "p")))
    out.append((_stop("no-example"), StopView("no-example", (), (), None, "", "", (), (), False,
                                              note="no example in this store")))
    return out


def test_the_handout_is_one_self_contained_file_with_every_figure():
    text = tour_html(_fake_tour())
    assert text.startswith("<!DOCTYPE html>") and text.count("<section class='stop'") == 7
    assert text.count("class=\"plotly-graph-div\"") == 6  # the stop without an example has none
    assert len(re.findall(r"<script[^>]*\bsrc=", text)) == 0, "nothing loaded from the network"
    assert not re.search(r"<link[^>]+href=['\"]?https?:", text)
    assert text.count("<script>") >= 1 and "Plotly" in text
    # data is escaped, never markup
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)" in text
    assert "<b>bold</b>" not in text
    # students: answers closed, no teacher notes; teacher: answers open, notes
    assert "<details><summary>The answer</summary>" in text and "For the teacher" not in text
    teacher = tour_html(_fake_tour(), teacher=True)
    assert "<details open><summary>The answer</summary>" in teacher
    assert teacher.count("For the teacher") == 7 and "The usual wrong answer" in teacher
    assert "Failure-mode index" in text and "no example in this store" in text


def test_an_empty_tour_cannot_be_exported():
    with pytest.raises(ValueError, match="at least one stop"):
        tour_html([])


# ---------------------------------------------------------------- every stop, on a store
def test_every_stop_computes_on_the_small_store_and_without_one(small_store):
    con = connect(small_store)
    try:
        with_store = compute_tour(TourData(con))
    finally:
        con.close()
    assert [s.key for s, _ in with_store] == list(ORDER)
    for s, view in with_store:
        assert view.key == s.key
        if view.shows_failure:
            assert view.chart is not None and view.example
    without = {s.key: v for s, v in compute_tour(TourData())}
    for key, view in without.items():
        if not view.shows_failure:
            assert view.note, f"{key} says nothing about why it has no example"


def test_a_broken_store_gives_a_note_not_an_exception(tmp_path):
    import duckdb

    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    con = connect(path)
    try:
        view = compute_stop("biased-majority", TourData(con))
    finally:
        con.close()
    assert not view.shows_failure and view.note


def test_the_command_writes_both_handouts_and_checks_every_stop(small_store, tmp_path, capsys):
    out = tmp_path / "deep" / "tour.html"
    assert main(["tour", "--db", str(small_store), "--html", str(out),
                 "--json", str(tmp_path / "t.json")]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("<section class='stop'") == len(STOPS)
    printed = capsys.readouterr().out
    assert printed.count("[shows]") + printed.count("[NO]") == len(STOPS)
    import json

    payload = json.loads((tmp_path / "t.json").read_text())
    assert [r["key"] for r in payload["stops"]] == list(ORDER)
    assert main(["tour", "--db", str(small_store), "--stop", "copy-cluster", "--check"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["tour", "--stop", "nope"], "invalid choice"),
    (["tour", "--db", "/no/such/store.duckdb"], "store"),
    (["tour", "--html", "/"], "is a directory"),
])
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and message in err[-1] and "Traceback" not in "\n".join(err)


# ---------------------------------------------------------------- the words at a stop
@pytest.mark.parametrize("texts, first, present, absent", [
    (["DSNBF beats MV here"], "DSNBF", {"DSNBF"}, set()),
    (["ACCU + DEPEN follows the copies"], "ACCU", {"ACCU"}, set()),   # a name that is a form
    (["we render the prose"], None, set(), {"Memory prose"}),        # an ordinary word
    (["the DSNBFX rule"], None, set(), {"DSNBF"}),                   # no partial matches
    (["μ̂ then μ*"], "μ̂", {"μ̂"}, set()),
])
def test_terms_in_finds_short_forms_in_order_of_first_use(texts, first, present, absent):
    found = terms_in(texts)
    aliases = [a for a, _ in found]
    names = {t.name for _, t in found}
    assert (aliases[0] if aliases else None) == first
    assert present <= set(aliases) and not (absent & (names | set(aliases)))


def test_every_definition_listed_at_a_stop_reads_on_its_own():
    """A term whose definition uses another short form brings that term along."""
    found = terms_in(["the 2 × 2 of the resolvers"])
    listed = {a for a, _ in found}
    for _, term in found:
        for alias, inner in terms_in([term.plain]):
            assert inner.name in {t.name for _, t in found}, (term.name, alias)
    assert len(listed) == len(found) and {"2 × 2", "μ*"} <= listed
