"""Compute every page's default view before the server accepts its first visitor.

Why (issue 22 point 7): the pages share their results through process-wide caches
(:mod:`pages._shared.cache`, :mod:`pages._shared.workers`, ``st.cache_data``), so the first
visitor of a page used to pay for its default view: the Bias lab's nominal setting took 1.4 s
of server time on an idle machine and 20.7 s on a busy one, and a class arriving at once waited
3–18 s per page (``benchmarks/bench_first_visit.py``). ``serve.py`` (hence ``make run`` and
the Docker image) calls :func:`warm_up` after the imports and before it starts the server.

How: each page's script runs once, the way a new visitor's first run does (the home page,
then every page of :mod:`core.pages_registry` in menu order, each opened from the home page
with a bare URL), in Streamlit's in-process runner (``streamlit.testing.v1.AppTest``). The
scripts ask the same cached loaders with the same keys as a visitor's run, so what they
compute stays in the caches, which are process-wide (``st.cache_resource`` and the worker
results always; ``st.cache_data`` keeps the cache object it created, storage included, when
the server's runtime later asks for the same function with the same options). Nothing here
decides what a default view is: a page that changes its defaults is warmed with the new ones.

A page that fails or times out here is reported in one plain line and left cold; the server
starts anyway. ``ARBITER_WARMUP=0`` turns the warm-up off (:func:`enabled`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.pages_registry import HOME_SCRIPT, HOME_TITLE, PAGES

__all__ = ["ENV_VAR", "SCRIPTS", "Warmed", "enabled", "warm_up"]

#: Set to ``0`` (or ``false``, ``no``, ``off``) to start without the warm-up.
ENV_VAR = "ARBITER_WARMUP"

#: ``(title, script)`` of every page the warm-up opens, in order: the home page, then each
#: page of the registry in menu order (``tests/test_warmup.py`` checks it covers them all).
SCRIPTS: tuple[tuple[str, str], ...] = ((HOME_TITLE, HOME_SCRIPT),
                                        *((p.title, p.path) for p in PAGES))

#: Seconds one page's first run may take here before it is left cold.
PAGE_TIMEOUT = 300.0


@dataclass(frozen=True)
class Warmed:
    """One page's warm-up: its title, script, seconds, and what went wrong (None: nothing)."""

    title: str
    script: str
    seconds: float
    problem: str | None = None


def enabled() -> bool:
    """Whether ``$ARBITER_WARMUP`` leaves the warm-up on (it is on unless set to a no)."""
    return os.environ.get(ENV_VAR, "").strip().lower() not in ("0", "false", "no", "off")


def warm_up(root: str | os.PathLike, *, say: Callable[[str], None] | None = None,
            timeout: float = PAGE_TIMEOUT) -> list[Warmed]:
    """Run every page of :data:`SCRIPTS` once with its default view; one record per page.

    Parameters
    ----------
    root : path
        The app's folder (where :data:`~core.pages_registry.HOME_SCRIPT` and ``pages/`` are).
    say : callable, optional
        Called with one plain sentence per page as it is ready.
    timeout : float
        Seconds a page may take before it is left cold.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest
    from streamlit.testing.v1.util import patch_config_options

    tell = say or (lambda line: None)
    out: list[Warmed] = []
    # the runner's constructor writes its session state outside any script run, which logs
    # a "missing ScriptRunContext" warning meant for scripts run bare: not one here
    ctx_log = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = ctx_log.level
    ctx_log.setLevel(logging.ERROR)
    try:
        at = AppTest.from_file(str(Path(root) / HOME_SCRIPT), default_timeout=timeout)
    finally:
        ctx_log.setLevel(level)
    try:
        for n, (title, script) in enumerate(SCRIPTS, 1):
            t0 = time.perf_counter()
            problem = None
            try:
                at.query_params.clear()  # a bare URL, as a new visitor's first request
                if script != HOME_SCRIPT:
                    at.switch_page(script)
                # a failure here is told to the operator, whom the redaction is not for
                with patch_config_options({"client.showErrorDetails": "full"}):
                    at.run()
                if at.exception:
                    first = at.exception[0].proto
                    problem = (first.type or "an error") + (
                        f": {first.message}" if first.message else "")
            except Exception as exc:  # a timeout or a runner error: leave this page cold
                problem = f"{type(exc).__name__}: {exc}"
            seconds = time.perf_counter() - t0
            out.append(Warmed(title, script, seconds, problem))
            if problem is None:
                tell(f"[{n:2d}/{len(SCRIPTS)}] {title}: ready ({seconds:.1f} s)")
            else:
                tell(f"[{n:2d}/{len(SCRIPTS)}] {title}: could not be prepared "
                     f"({problem[:200]}); its first visitor will wait for it")
    finally:
        # the in-process runner re-reads whether the app uses a pages folder on every run;
        # leave the server to decide it afresh from its own entry script
        PagesManager.uses_pages_directory = None
    return out
