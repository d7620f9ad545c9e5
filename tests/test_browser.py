"""Real-browser tests: a ``streamlit run`` server on the small store, Debian's Chromium.

Skipped only when ``/usr/bin/chromium`` is missing *and* ``CI`` is unset; in CI they must run.
Never runs ``playwright install``: the browser is the system's Chromium.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="needs /usr/bin/chromium (apt-get install chromium)"),
]

expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch options, pointed at Debian's Chromium (no downloads)."""
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"],
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(small_store, tmp_path_factory):
    """A headless ``streamlit run app.py`` on a free port; yields its base URL."""
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    env = {**os.environ, "ARBITER_DB": str(small_store), "ARBITER_LAB_PERSONAS": "12"}
    for _attempt in range(3):
        port = _free_port()
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py",
               "--server.headless", "true", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false", "--global.developmentMode", "false"]
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out)
        base = f"http://127.0.0.1:{port}"
        if _wait_healthy(base, proc, timeout=45):
            break
        _stop(proc)
    else:
        pytest.fail(f"streamlit did not start; log:\n{log.read_text()[-3000:]}")
    yield base
    _stop(proc)


def _wait_healthy(base: str, proc: subprocess.Popen, *, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return True
        except OSError:
            pass
        time.sleep(0.25)
    return False


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def wait_for_app_run(page, *, timeout: float = 60_000) -> None:
    """Wait until the script run is over (Streamlit's own e2e recipe, notes §4.4)."""
    page.wait_for_timeout(250)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']",
                           timeout=timeout)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                           timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)
    page.wait_for_timeout(100)


def test_walkthrough_deep_link_opens_that_persona(server, page, expected_browser):
    seed, persona = expected_browser
    page.goto(f"{server}/Walkthrough?seed={seed}&persona={persona}&q=A1")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)
    expect(page.get_by_text(persona).first).to_be_visible()
    expect(page.get_by_text("A1 · Sleep duration count").first).to_be_visible()
    assert f"persona={persona}" in page.url and "q=A1" in page.url
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(3)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_walkthrough_writes_its_choice_to_the_url(server, page):
    page.goto(f"{server}/Walkthrough")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)
    expect(page).to_have_url(
        re.compile(r".*/Walkthrough\?seed=\d+&persona=bench_\w+&q=\w+"))
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_home_page_links_to_the_walkthrough(server, page):
    page.goto(server)
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)
    expect(page.get_by_text("Three stories")).to_be_visible()
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("link", name="Walkthrough", exact=True).click()
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r".*/Walkthrough.*"))
    expect(page.get_by_text("Walkthrough: one persona, one question")).to_be_visible()


def test_bias_lab_keyboard_slider_moves_the_leaderboard(server, page):
    page.goto(f"{server}/Bias_lab")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)
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
