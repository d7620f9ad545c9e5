"""A visitor's browser talks to the app's own server only (issue 20 point 9).

A ``:material/…:`` page icon made every visitor's browser fetch the favicon from a font host:
a third-party request, and a broken icon offline. Chromium opens the home page and then every
page of the menu by clicking it, as a visitor does, and records each request; every one must
go to the app's own address. (A click loads only what the page's elements need — the bundle,
fonts and icons came with the first load — so every request a page can cause is still seen,
without reloading the whole frontend thirteen times.)
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from core.pages_registry import PAGES
from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared server over the small session store (conftest)."""
    return browser_server


def test_no_page_asks_another_host_for_anything(server, page):
    hosts: dict[str, str] = {}

    def seen(request) -> None:
        parts = urlsplit(request.url)
        where = parts.hostname if parts.scheme in ("http", "https", "ws", "wss") else \
            f"{parts.scheme}:"
        hosts.setdefault(where or request.url[:20], request.url)

    page.on("request", seen)
    open_page(page, server)
    nav = page.get_by_test_id("stSidebarNav")
    more = nav.get_by_test_id("stSidebarNavViewButton")
    if more.count():
        more.click()
    for p in PAGES:
        slug = p.path.split("_", 1)[1].removesuffix(".py")
        nav.locator(f"a[href$='/{slug}']").click()
        page.wait_for_url(f"**/{slug}*")
        wait_for_app_run(page)
        assert page.get_by_test_id("stException").count() == 0, slug
    foreign = {h: u for h, u in hosts.items() if h not in ("127.0.0.1", "data:", "blob:")}
    assert not foreign, foreign
    icon = page.locator("link[rel='shortcut icon'], link[rel='icon']").first
    assert "gstatic" not in (icon.get_attribute("href") or "")
