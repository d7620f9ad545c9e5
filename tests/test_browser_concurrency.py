"""Two first visitors at once: on a freshly started server, two pages opened at the same
moment both render without an exception box, in repeated trials (each on a new server).

This is the race that crashed pages before (two script threads importing ``core`` in
different orders). The server here is a plain ``streamlit run app.py``, as Streamlit
Community Cloud starts it — the harder case, since ``serve.py`` (``make run``, Docker) also
imports everything before the server exists.
"""

from __future__ import annotations

import pytest

from tests.browser_support import BROWSER_MARKS, streamlit_server, wait_for_app_run

pytestmark = BROWSER_MARKS
pytest.importorskip("playwright.sync_api")

PAIRS = [("Reliability", "Ranking_reversal"), ("Pilot_budget", "Walkthrough"),
         ("Leaderboard", "Selective_QA")]


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_two_pages_opened_at_once_on_a_fresh_server(small_store, tmp_path, browser, first,
                                                    second):
    log = tmp_path / "streamlit.log"
    with streamlit_server(small_store, log, ARBITER_LAB_PERSONAS="12") as base:
        ctx_a, ctx_b = browser.new_context(), browser.new_context()
        try:
            a, b = ctx_a.new_page(), ctx_b.new_page()
            a.goto(f"{base}/{first}", wait_until="commit")  # both runs start together
            b.goto(f"{base}/{second}", wait_until="commit")
            for page in (a, b):
                page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
                wait_for_app_run(page, timeout=90_000)
            for page, name in ((a, first), (b, second)):
                boxes = page.get_by_test_id("stException")
                assert boxes.count() == 0, (name, boxes.all_inner_texts())
                assert page.locator("h1").count() >= 1, name
        finally:
            ctx_a.close()
            ctx_b.close()
    text = log.read_text()
    assert "_DeadlockError" not in text and "partially initialized module" not in text
