"""Real-browser test of the Personal records page: the shared ``streamlit run`` server over
the small session store (``browser_server`` in conftest), Debian's Chromium through
Playwright.

Skipped only when ``/usr/bin/chromium`` is missing *and* ``CI`` is unset; in CI it must run.
Never runs ``playwright install``: the browser is the system's Chromium.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest

from core.records.views import as_of_view, change_dates, load_base
from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared headless ``streamlit run app.py`` over the small session store (conftest);
    the page's records come from its own world, not from the store."""
    return browser_server


def test_moving_the_as_of_date_changes_the_answer(server, page):
    base = load_base(n_boot=1)
    first = change_dates(base.world)[0]
    now = as_of_view(base, as_of=base.today).answer("home_address")
    # the page's words for an attribute with no record captured by that day (issue 19: a
    # record is visible at d only once it was captured)
    then = as_of_view(base, as_of=first).answer("home_address") or "no record"
    assert now != then
    open_page(page, f"{server}/Personal_records")
    address = page.locator(".st-key-pr_summary [data-testid='stMetricValue']").first
    expect(address).to_have_text(now)
    knob = page.locator(".st-key-pr_asof").get_by_role("slider")
    expect(knob).to_have_attribute("aria-valuetext", base.today.isoformat())
    knob.focus()
    knob.press("Home")  # the first day on which a record starts or ends
    wait_for_app_run(page)
    expect(knob).to_have_attribute("aria-valuetext", first.isoformat())
    expect(page).to_have_url(re.compile(rf".*/Personal_records\?.*pr_asof={first}"))
    expect(address).to_have_text(then)
    knob.press("End")  # a year on: the passport and the insurance are long expired
    wait_for_app_run(page)
    last = change_dates(base.world)[-1]
    assert last > base.today + dt.timedelta(days=90)
    expect(address).to_have_text(as_of_view(base, as_of=last).answer("home_address")
                                 or "no record")
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
