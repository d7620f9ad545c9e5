"""Real Chromium through HAProxy in front of two replicas (``serve.py --replicas 2``; issue 24).

* An upload on one page and a table download on another both reach the replica that holds
  the visitor's session: each request's answer names the replica (``X-Arbiter-Replica``) and
  it is the one in the visitor's ``ARBITER_REPLICA`` cookie. Streamlit keeps uploads and
  generated files in the process that made them, so without stickiness about half of these
  requests would land on the other replica and fail.
* Killing the replica that serves an open page: the browser reconnects by itself, HAProxy
  sends it to the other replica, and the page shows the same view, rebuilt from its URL.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from core.replicas import COOKIE
from tests.browser_support import BROWSER_MARKS, open_page, replica_server, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def proxy(small_store, tmp_path_factory):
    log = tmp_path_factory.mktemp("replicas_browser") / "serve.log"
    with replica_server(small_store, log) as (base, found):
        yield base, found, log


def _replica_of(context) -> str:
    values = [c["value"] for c in context.cookies() if c["name"] == COOKIE]
    assert len(values) == 1, context.cookies()
    return values[0]


def _csv(tmp_path):
    rng = np.random.default_rng(5)
    p = rng.uniform(0.05, 0.95, 200)
    y = (rng.random(200) < p).astype(int)
    path = tmp_path / "forecasts.csv"
    path.write_text("p,y\n" + "".join(f"{a:.4f},{b}\n" for a, b in zip(p, y, strict=True)))
    return path


def test_upload_then_download_stay_on_the_visitors_replica(proxy, page, tmp_path):
    base, found, _ = proxy
    answers = []  # (url, status, replica) of every upload and file download
    page.on("response", lambda r: answers.append((r.url, r.status,
                                                  r.headers.get("x-arbiter-replica")))
            if ("upload_file" in r.url or "/media/" in r.url) else None)
    open_page(page, f"{base}/Reliability?rel_data=upload")
    mine = _replica_of(page.context)
    assert mine in found
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(
        str(_csv(tmp_path)))
    wait_for_app_run(page)
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=30_000)
    assert page.get_by_test_id("stException").count() == 0
    uploads = [a for a in answers if "upload_file" in a[0]]
    assert uploads and all(s < 300 and r == mine for _, s, r in uploads), answers
    # another page, same visitor: a table download is made and served by the same replica
    open_page(page, f"{base}/Walkthrough")
    with page.expect_download(timeout=30_000) as info:
        page.get_by_role("button", name="Atom grid (CSV)").click()
    path = info.value.path()
    header = Path(path).read_text(encoding="utf-8").splitlines()[0]
    assert "," in header and info.value.suggested_filename.endswith(".csv")
    downloads = [a for a in answers if "/media/" in a[0]]
    assert downloads and all(s < 300 and r == mine for _, s, r in downloads), answers
    assert _replica_of(page.context) == mine


def test_a_killed_replica_hands_its_visitor_over_with_the_view_from_the_url(proxy, page):
    base, found, log = proxy
    from tests.browser_support import replica_pids

    open_page(page, f"{base}/Pilot_budget?pb_budget=120")
    before = _replica_of(page.context)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    slider = page.get_by_test_id("stSlider").first
    shown = slider.inner_text()
    assert "120" in shown
    os.kill(replica_pids(log)[before][1], signal.SIGKILL)
    # the page notices, reconnects through HAProxy to the other replica and runs again
    page.wait_for_selector("[data-testid='stApp']:not([data-test-connection-state='CONNECTED'])",
                           timeout=30_000)
    wait_for_app_run(page, timeout=90_000)
    assert "pb_budget=120" in page.url
    expect(page.get_by_test_id("stSlider").first).to_contain_text("120")
    assert page.get_by_test_id("stException").count() == 0
    # HAProxy's answer to the reconnect named the new replica: the visitor stays there
    assert _replica_of(page.context) != before
