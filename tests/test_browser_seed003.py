"""Real-browser test of the Ranking reversal page: the shared ``streamlit run`` server over
the small session store (``browser_server`` in conftest), Debian's Chromium through
Playwright.

Skipped only when ``/usr/bin/chromium`` is missing *and* ``CI`` is unset; in CI it must run.
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


def test_prevalence_slider_crosses_the_crossover_and_flips_the_rule(server, page):
    open_page(page, f"{server}/Ranking_reversal")
    verdict = page.locator(".st-key-rr_verdict [data-testid='stMetricValue']").first
    crossover = page.locator(".st-key-rr_verdict [data-testid='stMetricValue']").nth(2)
    expect(verdict).to_have_text("native")
    mid = float(crossover.inner_text())
    assert 0.5 < mid < 0.65  # seed 003: (.767 + .392)/2 ≈ .58
    knob = page.locator(".st-key-rr_prev").get_by_role("slider")  # a hidden range input
    expect(knob).to_have_attribute("aria-valuetext", "0.78")
    knob.focus()
    for _ in range(3):  # 0.78 → 0.48 in pages of 0.10, across the crossover
        knob.press("PageDown")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r".*/Ranking_reversal\?.*rr_prev=0\.48"))
    expect(verdict).to_have_text("EG")
    expect(page.get_by_text("At π = 0.48 a proper score selects EG").first).to_be_visible()
    for _ in range(4):  # and back with the arrow keys: 0.48 → 0.52, still below
        knob.press("ArrowRight")
    wait_for_app_run(page)
    expect(knob).to_have_attribute("aria-valuetext", "0.52")
    expect(verdict).to_have_text("EG")
    knob.press("End")  # π = 1: every label positive, the higher mean wins
    wait_for_app_run(page)
    expect(verdict).to_have_text("native")
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
