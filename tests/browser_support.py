"""Shared pieces of the real-browser tests: the Streamlit server and waiting for a run.

Debian's Chromium at ``/usr/bin/chromium`` drives the pages through pytest-playwright (the
``browser_type_launch_args`` override lives in ``conftest.py``); ``playwright install`` is never
run. Browser tests are skipped only when Chromium is missing *and* ``CI`` is unset.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="needs /usr/bin/chromium (apt-get install chromium)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(base: str, proc: subprocess.Popen, *, timeout: float) -> bool:
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


@contextmanager
def streamlit_server(store: Path, log: Path, **env: str) -> Iterator[str]:
    """A headless ``streamlit run app.py`` on a free port over ``store``; yields its URL.

    Three attempts (a port can be taken between choosing and binding); the server's output
    goes to ``log``, whose tail is shown if it never becomes healthy.
    """
    full_env = {**os.environ, "ARBITER_DB": str(store), **env}
    for _attempt in range(3):
        port = _free_port()
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py",
               "--server.headless", "true", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false", "--global.developmentMode", "false"]
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out, stderr=out)
        base = f"http://127.0.0.1:{port}"
        if _healthy(base, proc, timeout=45):
            break
        _stop(proc)
    else:
        pytest.fail(f"streamlit did not start; log:\n{log.read_text()[-3000:]}")
    try:
        yield base
    finally:
        _stop(proc)


def wait_for_app_run(page, *, timeout: float = 60_000) -> None:
    """Wait until the script run is over (Streamlit's own e2e recipe, streamlit-notes §4.4)."""
    from playwright.sync_api import expect

    page.wait_for_timeout(250)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']",
                           timeout=timeout)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                           timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)
    page.wait_for_timeout(100)


def open_page(page, url: str) -> None:
    """Navigate and wait for the app container and the end of the first run.

    A first load whose websocket has not connected after 30 s is reloaded once: in one of
    six full runs on two busy workers (two servers and two Chromiums on two cores) a page sat
    unconnected for 60 s while its server logged nothing wrong; a reload is what a visitor
    would do, and a server that is really down still fails the second wait.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url)
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    try:
        page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']",
                               timeout=30_000)
    except PlaywrightTimeout:
        page.reload()
        page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    wait_for_app_run(page)


@contextmanager
def replica_server(store: Path, log: Path, *, replicas: int = 2, **env: str
                   ) -> Iterator[tuple[str, dict[str, tuple[int, int]]]]:
    """``serve.py --replicas N`` (HAProxy in front) on a free port over ``store``, without
    the warm-up; yields the proxy's URL and ``{replica: (port, pid)}`` as the log announced
    them (a restarted replica's new pid is in the log afterwards, :func:`replica_pids`)."""
    full_env = {**os.environ, "ARBITER_DB": str(store), "ARBITER_WARMUP": "0", **env}
    port = _free_port()
    cmd = [sys.executable, "serve.py", "--replicas", str(replicas),
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false", "--global.developmentMode", "false"]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            found = replica_pids(log)
            if (len(found) == replicas and all(_healthy(f"http://127.0.0.1:{p}", proc,
                                                        timeout=1) for p, _ in found.values())
                    and _healthy(base, proc, timeout=1)
                    and all(_proxied_to(base, name) for name in found)):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"serve.py --replicas did not start; log:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, found
    finally:
        _stop(proc)


def _proxied_to(base: str, name: str) -> bool:
    """Whether HAProxy sends a visitor with replica ``name``'s cookie to it, i.e. counts it
    up (a replica that answered before HAProxy's next check may still be down there)."""
    from core.replicas import COOKIE, HEALTH_PATH

    req = urllib.request.Request(base + HEALTH_PATH, headers={"Cookie": f"{COOKIE}={name}"})
    try:
        with urllib.request.urlopen(req, timeout=1) as r:
            return r.headers.get("X-Arbiter-Replica") == name
    except OSError:
        return False


def replica_pids(log: Path) -> dict[str, tuple[int, int]]:
    """``{replica: (port, pid)}`` from serve.py's "replica rN on 127.0.0.1:PORT (pid P)" lines
    (the last line of each replica wins: a restart announces its new pid)."""
    import re

    out = {}
    for m in re.finditer(r"replica (r\d+) on 127\.0\.0\.1:(\d+) \(pid (\d+)\)",
                         log.read_text(errors="replace")):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out
