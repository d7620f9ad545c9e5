"""Real-browser tests: a ``streamlit run`` server on the small store, Debian's Chromium.

Skipped only when ``/usr/bin/chromium`` is missing *and* ``CI`` is unset; in CI they must run.
Never runs ``playwright install``: the browser is the system's Chromium.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared headless ``streamlit run app.py`` over the small session store (conftest)."""
    return browser_server


def test_walkthrough_deep_link_opens_that_persona(server, page, expected_browser):
    seed, persona = expected_browser
    open_page(page, f"{server}/Walkthrough?seed={seed}&persona={persona}&q=A1")
    expect(page.get_by_text(persona).first).to_be_visible()
    expect(page.get_by_text("A1 · Sleep duration count").first).to_be_visible()
    assert f"persona={persona}" in page.url and "q=A1" in page.url
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(3)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_walkthrough_writes_its_choice_to_the_url(server, page):
    open_page(page, f"{server}/Walkthrough")
    expect(page).to_have_url(
        re.compile(r".*/Walkthrough\?seed=\d+&persona=bench_\w+&q=\w+"))
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_home_page_links_to_the_walkthrough(server, page):
    open_page(page, server)
    expect(page.get_by_text("Three stories")).to_be_visible()
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("link", name="Walkthrough", exact=True).click()
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r".*/Walkthrough.*"))
    expect(page.get_by_text("Walkthrough: one persona, one question")).to_be_visible()


def test_bias_lab_keyboard_slider_moves_the_leaderboard(server, page):
    open_page(page, f"{server}/Bias_lab")
    expect(page.get_by_text("Bias lab: make the sources worse").first).to_be_visible()
    values = page.get_by_test_id("stMetricValue")
    expect(values.first).to_be_visible()
    before = values.all_inner_texts()
    knob = page.locator(".st-key-lab_bias").get_by_role("slider", name="Bias scale")
    knob.focus()
    for _ in range(6):  # 1.00 → 2.50 in steps of 0.25
        knob.press("ArrowRight")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r".*/Bias_lab\?.*lab_bias=2\.5"))
    expect(page.get_by_text("bias 2.5×").first).to_be_visible()
    expect(page.get_by_text("The source that moved most").first).to_be_visible()
    after = page.get_by_test_id("stMetricValue").all_inner_texts()
    assert after != before
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


@pytest.fixture(scope="module")
def expected_browser(small_store):
    """A stable persona of the second seed (not the default view)."""
    from core.store import connect, query_df

    con = connect(small_store)
    try:
        row = query_df(con, "SELECT seed, persona_id FROM personas WHERE seed = 20260322 "
                            "AND difficulty = 'stable' ORDER BY row LIMIT 1")
    finally:
        con.close()
    return int(row["seed"].iloc[0]), str(row["persona_id"].iloc[0])
