"""Real-browser test of the Ranking reversal page: a ``streamlit run`` server on a small store
of this module, Debian's Chromium through Playwright.

Skipped only when ``/usr/bin/chromium`` is missing *and* ``CI`` is unset; in CI it must run.
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

from core.store import build_store
from core.testbed.config import TestbedConfig

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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A headless ``streamlit run app.py`` on a free port and a one-seed store; its URL."""
    tmp = tmp_path_factory.mktemp("seed003_browser")
    store = tmp / "store.duckdb"
    build_store(store, TestbedConfig(seeds=(20260321,), personas_per_difficulty=12))
    log = tmp / "streamlit.log"
    env = {**os.environ, "ARBITER_DB": str(store)}
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


def wait_for_app_run(page, *, timeout: float = 60_000) -> None:
    """Wait until the script run is over (Streamlit's own e2e recipe)."""
    page.wait_for_timeout(250)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']",
                           timeout=timeout)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                           timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)
    page.wait_for_timeout(100)


def test_prevalence_slider_crosses_the_crossover_and_flips_the_rule(server, page):
    page.goto(f"{server}/Ranking_reversal")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)
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
