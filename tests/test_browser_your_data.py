"""The "Your data" page in a real browser: open it on a crowd set, switch to Flight, and see
the copy cluster and the dependence panel (issue 21 point 7)."""

from __future__ import annotations

import pytest

from core.fusion.builtin import load_builtin
from core.fusion.views import copy_view, fit_fusion
from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared server over the small session store (conftest)."""
    return browser_server


def test_switching_to_flight_shows_the_copy_cluster_and_the_dependence_panel(server, page):
    head = copy_view(fit_fusion(load_builtin("flight"))).headline
    open_page(page, f"{server}/Your_data?yd_set=mozafari")
    expect(page.get_by_text("No group of sources here makes the same claim")).to_be_visible(
        timeout=60_000)
    page.locator(".st-key-yd_set").get_by_role("radio", name="Flight", exact=True).click()
    wait_for_app_run(page)
    expect(page.get_by_text(f"{head.size} sources say exactly the same thing")).to_be_visible(
        timeout=60_000)
    assert "yd_set" not in page.url  # Flight is the default: the link drops it
    expect(page.get_by_role("heading", name="Who agrees with whom, and on what")).to_be_visible()
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts.first).to_be_visible(timeout=30_000)
    dependence = charts.first
    for name in head.members[:2]:
        expect(dependence.get_by_text(f"{name} ({head.label})").first).to_be_attached()
    n_charts = charts.count()
    page.locator(".st-key-yd_pair").get_by_role("radio", name="agreement beyond chance").click()
    wait_for_app_run(page)
    assert "yd_pair=beyond" in page.url
    expect(page.get_by_text("how much more often two sources make the same claim")).to_be_visible()
    assert page.get_by_test_id("stPlotlyChart").count() == n_charts
    assert page.get_by_test_id("stException").count() == 0
