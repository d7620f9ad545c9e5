"""Shared fixtures: one small generated store per session, and Streamlit cache hygiene."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.build import build_store
from core.testbed.config import TestbedConfig

#: The slowest modules, slowest first (seconds summed over their tests, measured on two busy
#: cores; rough, and only an order): ``make test`` starts them first so that the many short
#: modules fill the end of the run on both workers. Without this pytest-xdist's ``loadfile``
#: hands out the modules with the most tests first, which left the slow one-test browser
#: modules for last and one worker idle while the other finished them. A module missing here
#: only runs later; nothing else depends on the order.
SLOW_MODULES = (
    "test_map_choice", "test_browser_concurrency", "test_fuzz_pages", "test_browser",
    "test_browser_offline", "test_app_your_data", "test_app_seed003_pages", "test_coverage",
    "test_browser_replicas", "test_broken_stores", "test_browser_uploads", "test_app_records",
    "test_first_ten_minutes", "test_sweep_dask", "test_cli", "test_prose_extract",
    "test_app_extraction", "test_browser_tour", "test_browser_extraction", "test_labels_sql",
    "test_seed003_extremes", "test_app_tour", "test_deploy", "test_browser_your_data",
    "test_browser_records", "test_app_pages", "test_imports", "test_replicas",
    "test_browser_seed003",
)


def pytest_configure(config):
    """Under ``--dist loadfile`` keep the module order of :func:`pytest_collection_modifyitems`
    (xdist would otherwise reorder the modules by their number of tests)."""
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Modules in :data:`SLOW_MODULES` first, in its order; then the others, most tests first
    (xdist's own order); the tests of a module keep their order."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.path.stem] = counts.get(item.path.stem, 0) + 1
    rank = {name: i for i, name in enumerate(SLOW_MODULES)}

    def key(item):
        stem = item.path.stem
        return (rank.get(stem, len(rank)), -counts[stem], str(item.path))

    items.sort(key=key)  # stable: a module's tests stay in collection order


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


def _scan_manifests_once() -> None:
    """Every ``AppTest`` scans the metadata of all ~275 installed distributions for
    Streamlit v2 component manifests on its first run (about 0.25 s each time, several
    hundred times a suite). The installed packages do not change during a test session, so
    the scan's result is kept per process once Streamlit is loaded (Arbiter ships no such
    component: the result is an empty list, which every AppTest still registers as before).
    """
    if "streamlit" not in sys.modules:
        return
    import functools

    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "arbiter_once", False):
        return
    found = functools.cache(lambda: tuple(scan()))

    def once(max_workers=None):
        return list(found())

    once.arbiter_once = True
    manifest_scanner.scan_component_manifests = once


def _clear_streamlit() -> None:
    st = sys.modules.get("streamlit")
    if st is not None:
        st.cache_data.clear()
        st.cache_resource.clear()


@pytest.fixture(autouse=True, scope="module")
def _clear_streamlit_caches():
    """Streamlit's caches are process-global, so one module's AppTests would leak values into
    another's; they are cleared before and after every test module (only once Streamlit has
    been imported: tests of ``core`` never import it).

    Within a module the caches stay warm, as on a real server, where every visitor after the
    first meets them warm: a cached value is a function of its key (widget values, the
    store's path and stamp), so a test reads what it would have computed. Clearing them before
    every test made each AppTest recompute its page's default view (99 s instead of 63 s for
    the page modules). A test that counts computations uses :func:`cold_caches`.
    """
    _scan_manifests_once()
    _clear_streamlit()
    yield
    _clear_streamlit()


@pytest.fixture
def cold_caches():
    """Empty Streamlit caches for this one test (for tests that count what a run computes)."""
    _scan_manifests_once()
    _clear_streamlit()
    yield
    _clear_streamlit()


@pytest.fixture
def app_env(monkeypatch, small_store) -> Path:
    """Point the app at the small store (``ARBITER_DB``) for the duration of a test."""
    monkeypatch.setenv("ARBITER_DB", str(small_store))
    return small_store


@pytest.fixture(scope="session")
def browser_server(small_store, tmp_path_factory):
    """One headless ``streamlit run app.py`` over the small session store, shared by the
    real-browser modules of a test process (each xdist worker starts its own); its base URL.

    Starting a server and running each page for the first time in it (imports, cached views)
    cost about as much as the tests themselves when every module started its own; a visitor
    meets the same warm server, so sharing it changes nothing a test checks. Tests that need
    a fresh server (``test_browser_concurrency``) or another one (``serve.py --replicas``)
    still start their own.
    """
    from tests.browser_support import streamlit_server

    log = tmp_path_factory.mktemp("browser_server") / "streamlit.log"
    with streamlit_server(small_store, log, ARBITER_LAB_PERSONAS="12") as base:
        yield base


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
