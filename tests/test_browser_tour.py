"""The Tour in a real browser (issue 22): walk the first three stops, answer a question,
reveal its answer and follow the stop's "try it yourself" link to the full page; open the
hand-out from disk with the network off."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from core.store import connect
from core.tour import STOPS, TourData, compute_stop, compute_tour, tour_html
from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared server over the small session store (conftest)."""
    return browser_server


@pytest.fixture(scope="module")
def views(small_store):
    con = connect(small_store)
    try:
        data = TourData(con)
        return {s.key: compute_stop(s.key, data) for s in STOPS[:3]}
    finally:
        con.close()


def test_a_student_walks_three_stops_answers_and_reveals(server, page, views):
    open_page(page, f"{server}/Tour")
    for number, s in enumerate(STOPS[:3], start=1):
        expect(page.get_by_role("heading", name=f"Stop {number} of {len(STOPS)}")).to_be_visible(
            timeout=60_000)
        if views[s.key].chart is not None:
            expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=30_000)
        if number < 3:
            page.get_by_role("button", name="Next").click()
            wait_for_app_run(page)
    assert f"stop={STOPS[2].key}" in page.url
    third = views[STOPS[2].key]
    assert third.link, "the third stop links into a full page"
    box = page.get_by_label("Your answer (only you see it)")
    box.fill("the majority **wins**")
    box.press("Enter")
    wait_for_app_run(page)
    page.get_by_text("Show the answer").click()
    wait_for_app_run(page)
    if third.answer:
        expect(page.get_by_text(third.answer, exact=False).first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("the majority **wins**")).to_be_visible()
    assert page.get_by_test_id("stException").count() == 0
    # the stop's "try it yourself" link opens the full page on the same view
    page.get_by_role("link", name="Try it yourself", exact=False).click()
    wait_for_app_run(page)
    query = parse_qs(urlsplit(page.url).query)
    for name, value in third.link:
        assert query.get(name) == [value], (name, page.url)
    assert page.get_by_test_id("stException").count() == 0


def test_the_handout_opens_offline_and_draws_every_figure(small_store, tmp_path, browser):
    con = connect(small_store)
    try:
        pairs = compute_tour(TourData(con))
    finally:
        con.close()
    path = tmp_path / "tour.html"
    path.write_text(tour_html(pairs), encoding="utf-8")
    context = browser.new_context(offline=True)
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        charts = sum(v.chart is not None for _, v in pairs)
        expect(page.locator(".plotly-graph-div .main-svg").nth(2 * charts - 1)).to_be_attached(
            timeout=30_000)
        assert page.locator(".plotly-graph-div").count() == charts
        assert page.locator("section.stop").count() == len(STOPS)
    finally:
        context.close()
