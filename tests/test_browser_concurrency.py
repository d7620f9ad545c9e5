"""First visitors at once: on a freshly started server, six pages opened at the same moment
all render without an exception box.

This is the race that crashed pages before (two script threads importing ``core`` in
different orders). The server here is a plain ``streamlit run app.py``, as Streamlit
Community Cloud starts it — the harder case, since ``serve.py`` (``make run``, Docker) also
imports everything before the server exists. Six visitors, each on a different page, start
six script threads importing different parts of ``core`` in different orders on one cold
server: one trial covers every pair the three two-page trials used to (each of those started
its own server, which cost more than the pages).
"""

from __future__ import annotations

import pytest

from tests.browser_support import BROWSER_MARKS, streamlit_server, wait_for_app_run

pytestmark = BROWSER_MARKS
pytest.importorskip("playwright.sync_api")

#: One page per visitor: every page that imports a different part of ``core`` first.
PAGES = ("Reliability", "Ranking_reversal", "Pilot_budget", "Walkthrough", "Leaderboard",
         "Selective_QA")


def test_six_pages_opened_at_once_on_a_fresh_server(small_store, tmp_path, browser):
    log = tmp_path / "streamlit.log"
    with streamlit_server(small_store, log, ARBITER_LAB_PERSONAS="12") as base:
        contexts = [browser.new_context() for _ in PAGES]
        try:
            tabs = [ctx.new_page() for ctx in contexts]
            for tab, name in zip(tabs, PAGES, strict=True):  # every run starts together
                tab.goto(f"{base}/{name}", wait_until="commit")
            for tab in tabs:
                tab.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
                wait_for_app_run(tab, timeout=120_000)
            for tab, name in zip(tabs, PAGES, strict=True):
                boxes = tab.get_by_test_id("stException")
                assert boxes.count() == 0, (name, boxes.all_inner_texts())
                assert tab.locator("h1").count() >= 1, name
        finally:
            for ctx in contexts:
                ctx.close()
    text = log.read_text()
    assert "_DeadlockError" not in text and "partially initialized module" not in text
