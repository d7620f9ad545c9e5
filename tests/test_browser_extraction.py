"""Real-browser test of the Extraction page: selecting an atom highlights its sentences.

The shared ``streamlit run`` server over the small session store (conftest), Debian's
Chromium through Playwright (``tests/browser_support.py``). The atom grid is a canvas (Glide
Data Grid), so a cell is clicked at its position: the header row is 35 px high, the rows
``WRAP_ROW`` px (the worded answers wrap), and the first column, the question ids,
``GRID_INDEX`` px wide.
"""

from __future__ import annotations

import re

import pytest

from core.prose.views import prose_personas, prose_view
from core.store import connect
from pages._shared.prose import GRID_INDEX, WRAP_ROW
from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect

HEADER = 35  # px: Streamlit's dataframe header row


@pytest.fixture(scope="module")
def served(browser_server, small_store):
    """(URL, store) of the shared headless server over the small session store (conftest)."""
    return browser_server, small_store


def marked(page):
    return page.locator(".arbiter-marked")


def expected(store, qid: str, source: str) -> int:
    con = connect(store, read_only=True)
    try:
        seed, pid = prose_personas(con)[0]
        v = prose_view(con, seed=seed, persona_id=pid, qid=qid, source=source)
    finally:
        con.close()
    return next(s for s in v.sections if s.source == source).n_marked


def test_clicking_an_atom_highlights_the_sentences_it_was_read_from(served, page):
    base, store = served
    page.set_viewport_size({"width": 1280, "height": 1600})
    open_page(page, f"{base}/Extraction")
    first = expected(store, "C3", "daily_self_report")
    expect(marked(page).first).to_be_visible()
    # the chosen section's box plus the whole document's (collapsed expander) hold marks
    assert marked(page).count() >= first > 0

    # click the grid cell (C2, Planner): row 1 + index of C2, column of the planner
    grid = page.get_by_test_id("stDataFrame").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    header = page.locator("[data-testid='stDataFrame'] canvas").first
    assert box is not None and header is not None
    qids = ["A1", "A2", "A3", "B2", "B3", "C2", "C3", "D1", "D2", "E1", "E2", "F1", "F2", "F3",
            "G1", "G2", "Ctrl1", "Ctrl2"]
    y = box["y"] + HEADER + WRAP_ROW * qids.index("C2") + WRAP_ROW / 2
    index_w = GRID_INDEX  # the question-id column
    col_w = (box["width"] - index_w) / 5
    x = box["x"] + index_w + col_w * 1.5  # the second source column: the planner
    page.mouse.click(x, y)
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r".*ex_q=C2.*"))
    expect(page).to_have_url(re.compile(r".*ex_src=planner.*"))
    want = expected(store, "C2", "planner")
    assert want > 0
    section = page.get_by_test_id("stHtml").first
    expect(section.locator(".arbiter-marked")).to_have_count(want)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_the_source_buttons_move_the_highlight(served, page):
    base, store = served
    open_page(page, f"{base}/Extraction?ex_q=E1")
    page.locator(".st-key-ex_src").get_by_role("radio", name="Device").click()
    wait_for_app_run(page)
    want = expected(store, "E1", "device_log")
    section = page.get_by_test_id("stHtml").first
    expect(section.locator(".arbiter-marked")).to_have_count(want)
    expect(page).to_have_url(re.compile(r".*ex_src=device.*"))
