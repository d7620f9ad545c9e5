"""Heavy cache misses computed in worker processes, several at once, shared by every session.

Why: Streamlit runs every session's script in a thread of one process, so one visitor's
simulation holds the interpreter lock that every other session's rerun needs, and the second
core of a two-core server idles. A page that misses several results (the Pilot budget page
needs the pilots at the chosen budget *and* the curve over budgets) asks for them together
through :func:`cached_calls`: hits come from a bounded store shared by all sessions, and the
misses run side by side in a small pool of worker processes. The script thread only waits, so
the interpreter is free for the other sessions meanwhile.

The pool has ``$ARBITER_WORKERS`` processes (``serve.py``, hence ``make run`` and the Docker
image, sets 2; unset or 0 means no pool: misses are computed in the script thread, one after
the other, as under AppTest). Workers are started by a fork server that has imported ``core``
once, are prepared by :func:`core.worker_init.prepare`, and run only ``core`` functions: they
never import Streamlit or the pages. A call is a module-level function
and small, picklable arguments; its result comes back pickled. A worker that dies or a pool
that cannot start is not an error for the visitor: the call is computed in the script thread
instead, and the pool is replaced on the next call.

Invariant: for every call, the value returned is ``call.fn(*call.args, **call.kwargs)``,
whether it came from the store, the pool or the script thread (``tests/test_workers.py``
checks pool against inline on real simulations).

One visitor's stuck call never costs another visitor's work (issue 20 point 4). A call that
has not finished :data:`CALL_TIMEOUT` seconds after it was submitted raises
:class:`CallTimedOut` for its own visitor (:func:`cached_calls` shows it as one plain notice)
and is *not* recomputed in the server process; the pool is retired: queued calls are handed
back to their callers, which submit them again to a fresh pool, and the old pool's processes,
the stuck one included, are terminated once the calls they were running have had their own
time. A call whose pool broke under it (a worker died) is submitted once more to a fresh pool,
then computed in the script thread.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from core.worker_init import prepare

__all__ = ["Call", "CallTimedOut", "ResultStore", "cached_calls", "result_store", "run_calls",
           "worker_count", "worker_pool"]

_LOG = logging.getLogger("arbiter.workers")
#: Modules the fork server imports once, so that every worker starts warm.
PRELOAD = ("numpy", "pandas", "scipy.special", "scipy.stats", "core.calibration.pilot",
           "core.calibration.scenario", "core.evaluation.lab", "core.fusion.views")
#: Seconds a pooled call may take, from its submission, before its visitor is told it timed out.
CALL_TIMEOUT = 120.0


class CallTimedOut(RuntimeError):
    """A pooled call did not finish within :data:`CALL_TIMEOUT` seconds (its name is kept)."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(f"{name} did not finish within {seconds:g} s")
        self.name, self.seconds = name, float(seconds)
_MISSING = object()
#: Serialises submissions, so that two sessions never swap ``__main__`` at once (a lock, the
#: module's only global, holds no data).
_SUBMIT = threading.Lock()


@dataclass(frozen=True)
class Call:
    """``fn(*args, **kwargs)``: a module-level function and picklable arguments."""

    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self) -> Any:
        return self.fn(*self.args, **self.kwargs)


class ResultStore:
    """A bounded, expiring, thread-safe map from keys to results (least recently used out).

    Parameters
    ----------
    max_entries : int
        Entries beyond this drop the least recently used one.
    ttl : float
        Seconds an entry lives after it was stored.
    """

    def __init__(self, *, max_entries: int, ttl: float = 3600.0) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        if not ttl > 0:
            raise ValueError(f"ttl must be > 0, got {ttl}")
        self.max_entries, self.ttl = int(max_entries), float(ttl)
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The stored value of ``key`` (and mark it recently used), or ``default``."""
        with self._lock:
            item = self._data.get(key)
            if item is None:
                return default
            if time.monotonic() - item[0] > self.ttl:
                del self._data[key]
                return default
            self._data.move_to_end(key)
            return item[1]

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value`` under ``key``, dropping the least recently used beyond the bound."""
        with self._lock:
            self._data[key] = (time.monotonic(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)


@st.cache_resource(show_spinner=False, max_entries=16)
def result_store(name: str, max_entries: int, ttl: float = 3600.0) -> ResultStore:
    """The :class:`ResultStore` called ``name``, one per server process (all sessions)."""
    return ResultStore(max_entries=max_entries, ttl=ttl)


def worker_count() -> int:
    """Worker processes of the pool: ``$ARBITER_WORKERS`` (0 when unset, invalid or < 0).

    At most 8: more processes than cores only compete for them.
    """
    raw = os.environ.get("ARBITER_WORKERS", "").strip()
    try:
        n = int(raw) if raw else 0
    except ValueError:
        return 0
    return max(0, min(n, 8))


def _retire(pool: ProcessPoolExecutor | None) -> None:
    """Take ``pool`` out of service without costing anyone their result.

    Queued calls are cancelled and the pool's processes terminated, the stuck one included,
    so no core stays busy with a call nobody waits for. Every other caller then sees
    ``CancelledError`` or ``BrokenProcessPool``, which :func:`run_calls` answers by submitting
    its call again to a fresh pool: its visitor gets the result, a little later.
    """
    if pool is None:
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())  # CPython: pid -> process
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:  # the stuck worker too; the others' callers submit again
        with contextlib.suppress(Exception):
            proc.terminate()


@st.cache_resource(show_spinner=False, max_entries=1, on_release=_retire)
def worker_pool(n: int) -> ProcessPoolExecutor | None:
    """The process pool of ``n`` workers (``None`` for ``n == 0`` or when it cannot start)."""
    if n <= 0:
        return None
    try:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        return ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=prepare,
                                   initargs=(PRELOAD,))
    except (OSError, ValueError, RuntimeError) as exc:  # no fork server on this platform
        _LOG.warning("no worker pool (%s); computing in the script thread", exc)
        return None


@contextlib.contextmanager
def _neutral_main() -> Iterator[None]:
    """Hide the running page from worker processes started meanwhile.

    Streamlit sets ``sys.modules["__main__"]`` to the page it is running, and a process
    started by ``multiprocessing`` (also through the fork server) first imports the parent's
    ``__main__`` by its file: every new worker would run a whole page script. While a call is
    submitted (which may start a worker), ``__main__`` is a module without a file, so the
    worker imports nothing but ``core``.
    """
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _submit(pool: ProcessPoolExecutor, calls: Mapping[str, Call]) -> dict[str, Future]:
    with _SUBMIT, _neutral_main():
        return {name: pool.submit(call.fn, *call.args, **call.kwargs)
                for name, call in calls.items()}


def run_calls(calls: Mapping[str, Call]) -> dict[str, Any]:
    """Every call's result by name: on the worker pool side by side, else one by one.

    Exceptions raised by a call's function (a ``ValueError`` about its arguments, say) reach
    the caller as they would inline. A call that outlives :data:`CALL_TIMEOUT` raises
    :class:`CallTimedOut` (the pool is retired, see the module docstring); a call whose pool
    broke or was retired under it is submitted once more to a fresh pool, then computed in the
    script thread.
    """
    if not calls:
        return {}
    out, lost = _attempt(calls)
    if lost:  # once more on a fresh pool, then in the script thread
        again, still = _attempt(lost)
        out.update(again)
        for name, call in still.items():
            _LOG.warning("worker pool lost %s twice; computing in the script thread", name)
            out[name] = call()
    return out


def _attempt(calls: Mapping[str, Call]) -> tuple[dict[str, Any], dict[str, Call]]:
    """One submission to the current pool: ``(results, calls it lost)``.

    Without a pool the calls run in the script thread. A call the pool lost (broken, or
    retired under it) is returned for the caller to submit again; a call past
    :data:`CALL_TIMEOUT` retires the pool and raises :class:`CallTimedOut`.
    """
    pool = worker_pool(worker_count())
    if pool is None:
        return {name: call() for name, call in calls.items()}, {}
    try:
        futures = _submit(pool, calls)
    except (BrokenProcessPool, RuntimeError) as exc:  # broken or shut down: start afresh
        _LOG.warning("worker pool unusable (%s); starting a fresh one", exc)
        worker_pool.clear()
        return {}, dict(calls)
    out: dict[str, Any] = {}
    lost: dict[str, Call] = {}
    deadline = time.monotonic() + CALL_TIMEOUT
    for name, fut in futures.items():
        try:
            out[name] = fut.result(timeout=max(deadline - time.monotonic(), 0.0))
        except TimeoutError:
            fut.cancel()
            _LOG.warning("%s did not finish within %g s; retiring the pool", name,
                         CALL_TIMEOUT)
            _retire(pool)
            worker_pool.clear()
            raise CallTimedOut(name, CALL_TIMEOUT) from None
        except (BrokenProcessPool, CancelledError) as exc:  # not this call's own fault
            _LOG.warning("worker pool lost %s (%s)", name, type(exc).__name__)
            lost[name] = calls[name]
    return out, lost


def cached_calls(store: ResultStore,
                 calls: Mapping[str, tuple[tuple, Callable[[], Call]]], *,
                 spinner: str | None = None) -> dict[str, Any]:
    """Results of keyed calls: hits from ``store``, every miss computed by :func:`run_calls`.

    Parameters
    ----------
    store : ResultStore
        Usually :func:`result_store` (shared by every session; never mutate a result).
    calls : mapping
        ``name → (key, make)``: ``key`` holds every small value the result depends on, and
        ``make()`` returns the :class:`Call` (built only on a miss, so that its arguments,
        say a generated frame, are not prepared for a hit).
    spinner : str, optional
        Text shown while misses compute.
    """
    out: dict[str, Any] = {}
    todo: dict[str, Call] = {}
    for name, (key, make) in calls.items():
        hit = store.get((name, key), _MISSING)
        if hit is _MISSING:
            todo[name] = make()
        else:
            out[name] = hit
    if todo:
        try:
            with st.spinner(spinner) if spinner else contextlib.nullcontext():
                fresh = run_calls(todo)
        except CallTimedOut as exc:
            st.warning(f"This computation took more than {exc.seconds:g} seconds and was "
                       "stopped, so this part of the page is not shown. Try again in a "
                       "moment, or choose a smaller setting.", icon=":material/timer_off:")
            st.stop()
            raise  # st.stop() ends the run; outside a run, the caller sees the timeout
        for name, value in fresh.items():
            store.put((name, calls[name][0]), value)
        out.update(fresh)
    return out
