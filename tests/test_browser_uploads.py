"""Real-browser tests of the upload path (issue 20 points 1 and 2).

A real browser replacing a file first reruns the page with an empty uploader, which AppTest
never does (it swaps the file in one step): the last good file must survive that, a refused
file must not replace it, and a refusal that quotes the file's content must not turn a bare
address into a link (``<a>``) or an image (``<img>``) in the rendered HTML.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.browser_support import BROWSER_MARKS, open_page, wait_for_app_run

pytestmark = BROWSER_MARKS
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def server(browser_server):
    """The shared server over the small session store (conftest)."""
    return browser_server


def _good_csv(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 300)
    y = (rng.random(300) < p).astype(int)
    path = tmp_path / "good_forecasts.csv"
    path.write_text("p,y\n" + "".join(f"{a:.4f},{b}\n" for a, b in zip(p, y, strict=True)))
    return path


HOSTILE = ("http://127.0.0.1:9/x", "www.evil.example", "![i](http://127.0.0.1:9/i.png)",
           "me@evil.example")


def test_a_refused_upload_keeps_the_good_one_and_links_nothing(server, page, tmp_path):
    """One good file, then each hostile file in turn over it, in one page: every refusal keeps
    the good file's analysis and renders no link or image (each replacement is its own
    empty-then-file rerun in the browser, so each payload takes the whole path)."""
    good = _good_csv(tmp_path)
    open_page(page, f"{server}/Reliability?rel_data=upload")
    uploader = page.locator("[data-testid='stFileUploader'] input[type='file']")
    uploader.set_input_files(str(good))
    wait_for_app_run(page)
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts.first).to_be_visible(timeout=30_000)
    n_charts = charts.count()
    assert n_charts >= 3
    for i, payload in enumerate(HOSTILE):
        # replace it by a bad file: the browser empties the uploader first, then sends the file
        bad = tmp_path / f"bad_forecasts_{i}.csv"
        bad.write_text(f"p,y\n0.2,0\n{payload},1\n")
        uploader.set_input_files(str(bad))
        wait_for_app_run(page)
        error = page.get_by_test_id("stAlertContentError")
        expect(error).to_have_count(1, timeout=30_000)
        expect(error).to_contain_text(bad.name, timeout=30_000)  # this file's refusal
        assert "This file was refused" in error.inner_text(), payload
        html = error.inner_html().lower()
        assert "<a" not in html and "<img" not in html, (payload, html)
        assert "good_forecasts.csv" in error.inner_text()  # "Still using good_forecasts.csv"
        assert page.get_by_test_id("stPlotlyChart").count() == n_charts  # the analysis stayed


def test_an_emptied_uploader_keeps_the_good_file_until_forgotten(server, page, tmp_path):
    good = _good_csv(tmp_path)
    open_page(page, f"{server}/Reliability?rel_data=upload")
    uploader = page.locator("[data-testid='stFileUploader'] input[type='file']")
    uploader.set_input_files(str(good))
    wait_for_app_run(page)
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=30_000)
    n_charts = page.get_by_test_id("stPlotlyChart").count()
    page.get_by_test_id("stFileChipDeleteBtn").first.click()  # replaced by nothing
    wait_for_app_run(page)
    expect(page.get_by_text("still showing the last good file")).to_be_visible()
    assert page.get_by_test_id("stPlotlyChart").count() == n_charts
    page.get_by_role("button", name="Forget it").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Upload a CSV to diagnose your own forecasts")).to_be_visible()


def test_the_records_upload_keeps_the_good_file_and_links_nothing(server, page, tmp_path):
    """The Personal records page's responses upload, the same way (issue 20 points 1-2)."""
    import json

    from core.records.views import load_base

    good = tmp_path / "good_responses.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in load_base(n_boot=1).responses[:200]))
    bad = tmp_path / "bad_responses.jsonl"
    bad.write_text(json.dumps({"item_id": "CURR-1", "arm": "A", "answer": "x",
                               "http://127.0.0.1:9/x": 1, "www.evil.example": 2}) + "\n")
    open_page(page, f"{server}/Personal_records")
    uploader = page.locator(".st-key-pr_upload input[type='file']")
    uploader.set_input_files(str(good))
    wait_for_app_run(page)
    expect(page.get_by_text("Scoring good_responses.jsonl")).to_be_visible(timeout=30_000)
    uploader.set_input_files(str(bad))
    wait_for_app_run(page)
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_have_count(1, timeout=30_000)
    html = error.inner_html().lower()
    assert "<a" not in html and "<img" not in html, html
    expect(page.get_by_text("Scoring good_responses.jsonl")).to_be_visible()
