"""Shared fixtures: one small generated store per session, and Streamlit cache hygiene."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.build import build_store
from core.testbed.config import TestbedConfig

#: 2 seeds × 36 personas (12 per difficulty; 5 test personas per difficulty and seed).
SMALL_CONFIG = TestbedConfig(seeds=(20260321, 20260322), personas_per_difficulty=12)


@pytest.fixture(scope="session")
def small_store(tmp_path_factory) -> Path:
    """Path of a small generated store, built once per test session (read it, don't write)."""
    path = tmp_path_factory.mktemp("store") / "small.duckdb"
    build_store(path, SMALL_CONFIG)
    return path


#: The release sample persona shipped with the tests (CC BY 4.0, see its README).
SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory) -> Path:
    """The release sample imported once per test session (``python -m core import-release``);
    one test person, GPT-5.4's atoms and answers, no train split. Read it, don't write."""
    from core.cli import main

    path = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    assert main(["import-release", str(SAMPLE), "--db", str(path)]) == 0
    return path


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    """Streamlit's caches are process-global, so AppTests would leak values into each other.

    Cleared before and after every test, but only once Streamlit has been imported (tests of
    ``core`` never import it).
    """
    def clear() -> None:
        st = sys.modules.get("streamlit")
        if st is not None:
            st.cache_data.clear()
            st.cache_resource.clear()

    clear()
    yield
    clear()


@pytest.fixture
def app_env(monkeypatch, small_store) -> Path:
    """Point the app at the small store (``ARBITER_DB``) for the duration of a test."""
    monkeypatch.setenv("ARBITER_DB", str(small_store))
    return small_store


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch options, pointed at Debian's Chromium (no downloads)."""
    from tests.browser_support import CHROMIUM, CHROMIUM_ARGS

    return {**browser_type_launch_args, "executable_path": str(CHROMIUM),
            "args": CHROMIUM_ARGS}


@pytest.fixture(autouse=True)
def _no_frontend_crash(request):
    """Fail a browser test whose page threw in the renderer, naming the error.

    Streamlit's frontend reports a render failure ("'setIn' cannot be called on an
    ElementNode", issue 20's blank page) as a console error beginning ``Error:`` and then
    drops its websocket, so without this the test only times out waiting for a connection.
    Resource errors ("Failed to load resource: … 404") are not crashes and are ignored.
    """
    if "page" not in request.fixturenames:
        yield
        return
    page = request.getfixturevalue("page")
    if not hasattr(page, "on"):  # a parameter named "page" (a page's path), not a browser
        yield
        return
    crashes: list[str] = []
    page.on("console", lambda m: crashes.append(m.text.splitlines()[0])
            if m.type == "error" and m.text.startswith("Error") else None)
    page.on("pageerror", lambda exc: crashes.append(f"uncaught: {exc}"))
    yield
    assert not crashes, f"the page threw in the browser: {crashes[:3]}"
