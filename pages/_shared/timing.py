"""Diagnostic for the load test: one log line of script time per Streamlit script run.

``serve.py`` calls :func:`install_from_env` once, before the server starts. When the
environment variable ``ARBITER_TIMING_LOG`` names a file, the function that Streamlit's script
runner uses to execute every run (``exec_func_with_error_handling``, as bound in
``streamlit.runtime.scriptrunner.script_runner``) is wrapped, and each run appends one
tab-separated line to that file (``benchmarks/loadtest.py`` reads it). Without the variable
nothing is patched and nothing is written.

Columns (:data:`COLUMNS`):

``wall``
    ``time.time()`` when the run ended (seconds since the epoch, 6 decimals).
``page``
    The page that ran, as its URL path: ``/`` for the home page, ``/Walkthrough`` … Taken
    after the run from ``ctx.page_script_hash`` (which ``st.navigation`` sets once it has
    resolved the page) looked up in ``ctx.pages_manager.get_pages()``; the page title, then the
    32-hex page hash, when the lookup fails (a run that stopped before the page was resolved).
``kind``
    ``fragment`` for a fragment-only rerun (``ctx.fragment_ids_this_run`` non-empty: the
    script runner then runs only the queued fragments, not the page), else ``full``. Fragments
    that run inline during a full run belong to that run's line.
``seconds``
    Script time of the run (``time.perf_counter``), the widget callbacks included; the
    post-run garbage collection and the message flush that follow it are not.
``status``
    ``ok``; ``RerunException`` (``st.rerun()`` or a run superseded by a newer rerun request);
    ``StopException`` (``st.stop()`` or a stop request); ``error:<ExceptionClass>`` for an
    uncaught exception in the page (shown to the visitor as an exception box); or the class
    name of an exception that escaped Streamlit's own handler. Only ``ok`` rows measure a
    complete run.
``session``
    The Streamlit session id (``ctx.session_id``, the ``new_session.initialize.session_id``
    a client receives), so concurrent sessions' rows can be told apart.

Only the outermost call per thread is logged (a per-thread depth counter), so a nested call
never writes a second line. Logging failures are swallowed: the diagnostic never raises into
Streamlit.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["COLUMNS", "ENV_VAR", "install", "install_from_env", "is_installed", "page_label"]

#: The environment variable naming the log file.
ENV_VAR = "ARBITER_TIMING_LOG"

#: The tab-separated columns of one log line, in order.
COLUMNS: tuple[str, ...] = ("wall", "page", "kind", "seconds", "status", "session")

#: Attribute set on the wrapper; it is the install guard (see :func:`is_installed`).
_MARK = "_arbiter_timing_log"


def _runner_module():
    from streamlit.runtime.scriptrunner import script_runner

    return script_runner


def is_installed() -> bool:
    """Whether the script runner's ``exec_func_with_error_handling`` is already wrapped.

    Returns
    -------
    bool
        True when the name bound in ``streamlit.runtime.scriptrunner.script_runner`` is a
        wrapper made by :func:`install`.
    """
    func = getattr(_runner_module(), "exec_func_with_error_handling", None)
    return getattr(func, _MARK, None) is not None


def page_label(ctx: Any) -> str:
    """The page a script run context is on, as ``/<url path>`` (``/`` for the home page).

    Parameters
    ----------
    ctx : ScriptRunContext
        Streamlit's script run context (anything with ``page_script_hash`` and
        ``pages_manager.get_pages()``).

    Returns
    -------
    str
        ``"/" + url_pathname`` of the page whose hash is ``ctx.page_script_hash``; its title
        when it has no URL path; the hash itself (or ``?``) when the page is not registered.
    """
    try:
        page_hash = str(ctx.page_script_hash or "")
    except Exception:
        page_hash = ""
    try:
        info = ctx.pages_manager.get_pages().get(page_hash) if page_hash else None
    except Exception:
        info = None
    label = ""
    if info:
        url = info.get("url_pathname")
        if url is not None:
            label = "/" + str(url).lstrip("/")
        else:
            label = str(info.get("page_name") or "")
    label = label or page_hash or "?"
    return label.replace("\t", " ").replace("\n", " ")


def _run_kind(ctx: Any) -> str:
    try:
        return "fragment" if getattr(ctx, "fragment_ids_this_run", None) else "full"
    except Exception:
        return "full"


def _status(result: Any) -> str:
    """Status of a run from ``exec_func_with_error_handling``'s 5-tuple."""
    try:
        _, run_without_errors, rerun_data, premature_stop, uncaught = result
    except Exception:
        return "ok"
    if uncaught is not None:
        return f"error:{type(uncaught).__name__}"
    if rerun_data is not None:
        return "RerunException"
    if not run_without_errors:
        return "error:FragmentHandledException"
    if premature_stop:
        return "StopException"
    return "ok"


def _make_wrapper(original: Callable[..., Any], path: str) -> Callable[..., Any]:
    lock = threading.Lock()
    local = threading.local()

    def write(line: str) -> None:
        try:
            with lock, open(path, "a", encoding="utf-8") as fh:
                fh.write(line)
        except Exception:  # noqa: S110 - a diagnostic must never break a run
            pass

    def exec_func_with_error_handling(func, ctx, *args, **kwargs):
        depth = getattr(local, "depth", 0)
        if depth:
            return original(func, ctx, *args, **kwargs)
        local.depth = 1
        kind = _run_kind(ctx)
        status = "ok"
        t0 = time.perf_counter()
        try:
            result = original(func, ctx, *args, **kwargs)
            status = _status(result)
            return result
        except BaseException as exc:
            status = type(exc).__name__
            raise
        finally:
            seconds = time.perf_counter() - t0
            local.depth = 0
            try:
                session = str(getattr(ctx, "session_id", "") or "")
                write(f"{time.time():.6f}\t{page_label(ctx)}\t{kind}\t{seconds:.6f}\t"
                      f"{status}\t{session}\n")
            except Exception:  # noqa: S110
                pass

    exec_func_with_error_handling.__wrapped__ = original
    exec_func_with_error_handling.__doc__ = original.__doc__
    setattr(exec_func_with_error_handling, _MARK, path)
    return exec_func_with_error_handling


def install(path: str | os.PathLike[str]) -> bool:
    """Wrap the script runner's ``exec_func_with_error_handling`` to log to ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The log file; lines are appended (the file is opened per line, so it may be rotated
        or removed while the server runs).

    Returns
    -------
    bool
        True when this call installed the wrapper, False when one was already installed (it is
        kept, with its own path: installing twice never wraps twice).
    """
    module = _runner_module()
    current = module.exec_func_with_error_handling
    if getattr(current, _MARK, None) is not None:
        return False
    module.exec_func_with_error_handling = _make_wrapper(current, os.fspath(path))
    return True


def install_from_env() -> bool:
    """Install the timing log when ``$ARBITER_TIMING_LOG`` names a file; else do nothing.

    Returns
    -------
    bool
        True when the wrapper was installed by this call.
    """
    path = os.environ.get(ENV_VAR, "").strip()
    if not path:
        return False
    try:
        return install(path)
    except Exception:
        return False
