"""Start Arbiter the way ``make run`` and the Docker image do: store, imports, every page.

``python serve.py [streamlit options …]`` (for example ``--server.port 8501``):

1. builds the default store (``$ARBITER_DB``, default ``data/arbiter.duckdb``) if it is
   missing, printing one progress line per step on the terminal, so the first visitor never
   waits on a blank page (the app still builds it itself when started another way);
2. imports every module the pages use, in the main thread, before the server exists
   (``pages/_shared/preload.py`` says why);
3. computes every page's default view once (the home page and every page of
   ``core/pages_registry.py``; ``pages/_shared/warmup.py``), so that no first visitor waits
   on a cold computation (the Bias lab's nominal setting, the Extraction page's views);
   ``ARBITER_WARMUP=0`` skips it;
4. hands over to ``streamlit run Home.py`` with the options given: the server accepts
   visitors only now.

Every start-up line on the terminal begins ``arbiter:`` and says in plain words what is
being done.

BLAS runs single-threaded (``OPENBLAS_NUM_THREADS`` and friends default to 1 here, before
NumPy loads): the pages' matrix products are small, and on a shared two-core server the
OpenBLAS worker threads only spin against the other sessions' script threads. The results do
not change. Set the variables yourself to override. Likewise glibc keeps at most 2 heaps
(``MALLOC_ARENA_MAX``, :func:`_limit_malloc_arenas`) unless the environment says otherwise.

``ARBITER_WORKERS`` defaults to the number of cores, at most 2: the worker processes that
compute the pages' heavy cache misses (pilot simulations, bias-lab refits) outside the
server's interpreter lock (``pages/_shared/workers.py``; 0 turns the pool off).

``--replicas N`` (or ``ARBITER_REPLICAS``; ``auto`` = one per core, at most 4; default 1)
builds the store once, then starts N such servers on loopback ports and HAProxy on the
public address and port, with cookie stickiness, health checks and restarts
(``core/replicas.py``; README "Deploy"). Without HAProxy installed it runs one process and
says so in one line.

With ``ARBITER_TIMING_LOG=PATH`` set, every script run (full page runs and fragment reruns)
appends one tab-separated line to PATH: wall time, page, ``full``/``fragment``, seconds of
script time, status (see ``pages/_shared/timing.py``).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before anything imports NumPy (see the docstring)


def _limit_malloc_arenas(n: int = 2) -> bool:
    """At most ``n`` glibc heaps ("arenas") in this process, as ``MALLOC_ARENA_MAX`` would
    set at start-up (glibc reads that variable only then; ``mallopt`` does the same now,
    before the server's threads exist). Streamlit runs each session's script in a thread;
    with glibc's default of 8 arenas per core, memory freed by one session stays in
    half-empty heaps that no other thread reuses. Worker processes started later inherit
    ``MALLOC_ARENA_MAX``. A ``MALLOC_ARENA_MAX`` the user set is left alone; True when the
    limit is in force (False off glibc)."""
    import ctypes
    import ctypes.util

    if "MALLOC_ARENA_MAX" in os.environ:
        return True  # glibc applied the user's value at start-up
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        ok = bool(libc is not None and libc.mallopt(-8, int(n)))  # -8: M_ARENA_MAX
    except (OSError, AttributeError):  # not glibc (musl, macOS): leave the allocator be
        return False
    if ok:
        os.environ["MALLOC_ARENA_MAX"] = str(int(n))  # the worker processes start with it
    return ok
#: whether the user chose the worker count (replicas otherwise share the cores out)
_WORKERS_CHOSEN = "ARBITER_WORKERS" in os.environ
#: worker processes for the pages' heavy cache misses (``pages/_shared/workers.py``)
os.environ.setdefault("ARBITER_WORKERS", str(min(2, os.cpu_count() or 1)))


#: Set by :func:`_ensure_store` when it had to build the store in a temporary folder: the
#: app then shows its "temporary store" banner (``pages/_shared/store.py``).
FALLBACK_ENV = "ARBITER_DB_FALLBACK"


def _ensure_store() -> Path | None:
    """Build the store if it is missing; return the temporary folder of a fallback store.

    When the data folder cannot be written (read-only image, a file where a folder should
    be), the store is built once in a private temporary folder instead, ``$ARBITER_DB``
    points the app at it, ``$ARBITER_DB_FALLBACK`` makes every page say so, and the folder is
    removed when the process exits (issue 20 point 5: this path used to end in a
    ``StoreError`` traceback before the server started).
    """
    import atexit
    import shutil
    import tempfile

    sys.path.insert(0, str(ROOT))
    import duckdb

    from core.build import build_store
    from core.store import DEFAULT_DB, StoreError, store_info
    from core.testbed.config import TestbedConfig

    path = Path(os.environ.get("ARBITER_DB") or DEFAULT_DB)
    if path.exists():
        try:
            store_info(path)
            return None
        except StoreError as exc:
            print(f"arbiter: the data file {path} cannot be used ({exc}); every page "
                  "will say so", file=sys.stderr)
            return None

    def progress(msg: str, frac: float) -> None:
        print(f"arbiter: [{frac:4.0%}] {msg}", file=sys.stderr, flush=True)

    print(f"arbiter: first start: building the data file {path} (simulated people, their "
          "sources' answers, every method's results) …", file=sys.stderr)
    try:
        build_store(path, TestbedConfig(), progress=progress)
        return None
    except (OSError, StoreError, duckdb.Error) as exc:
        why = getattr(exc, "strerror", None) or exc
        print(f"arbiter: cannot write the data file there ({why}); building a temporary "
              "one instead", file=sys.stderr)
    folder = Path(tempfile.mkdtemp(prefix="arbiter-store-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    fallback = folder / path.name
    build_store(fallback, TestbedConfig(), progress=progress)
    os.environ["ARBITER_DB"] = str(fallback)
    os.environ[FALLBACK_ENV] = "1"
    return folder


def _warm_up() -> None:
    """Compute every page's default view (``pages/_shared/warmup.py``), saying so."""
    from pages._shared import warmup

    if not warmup.enabled():
        print(f"arbiter: {warmup.ENV_VAR}=0: the pages are not prepared; each page's first "
              "visitor waits for its computations", file=sys.stderr)
        return
    print(f"arbiter: preparing every page's first view before opening the doors "
          f"({len(warmup.SCRIPTS)} pages) …", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    done = warmup.warm_up(ROOT, say=lambda line: print(f"arbiter: {line}", file=sys.stderr,
                                                        flush=True))
    cold = [w.title for w in done if w.problem is not None]
    print(f"arbiter: {len(done) - len(cold)} of {len(done)} pages ready in "
          f"{time.perf_counter() - t0:.0f} s"
          + (f" (not ready: {', '.join(cold)})" if cold else "")
          + "; starting the web server", file=sys.stderr, flush=True)


def _take_replicas(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--replicas N`` / ``--replicas=N`` out of ``argv`` (else ``$ARBITER_REPLICAS``)."""
    value, rest, i = os.environ.get("ARBITER_REPLICAS"), [], 0
    while i < len(argv):
        name, eq, v = argv[i].partition("=")
        if name == "--replicas":
            if not eq:
                if i + 1 >= len(argv):
                    raise ValueError("--replicas needs a value (a number or 'auto')")
                v = argv[i + 1]
                i += 1
            value = v
        else:
            rest.append(argv[i])
        i += 1
    return value, rest


def _serve_replicas(n: int, argv: list[str]) -> int:
    """``n`` replicas behind HAProxy (``core/replicas.py``); the store is built here first,
    once, so the replicas only read it."""
    import signal

    from core.paths import DEFAULT_DB
    from core.replicas import ReplicaSet, split_server_args

    if not Path(os.environ.get("ARBITER_DB") or DEFAULT_DB).exists():
        # built here, once, before the replicas start; a fallback store's ARBITER_DB reaches
        # their environment. An existing store is checked by each replica instead: this
        # process then never imports pandas or DuckDB (it stays at about 20 MB)
        _ensure_store()
    try:
        server = split_server_args(argv)
    except ValueError as exc:
        print(f"arbiter: {exc}", file=sys.stderr)
        return 2
    say = lambda line: print(f"arbiter: {line}", file=sys.stderr, flush=True)  # noqa: E731
    env = dict(os.environ)
    if not _WORKERS_CHOSEN:
        env.pop("ARBITER_WORKERS", None)  # each replica gets its share of the cores
    replicas = ReplicaSet(n, server, root=ROOT, haproxy=shutil.which("haproxy"), say=say,
                          env=env)
    signal.signal(signal.SIGTERM, replicas.stop)
    signal.signal(signal.SIGINT, replicas.stop)
    say(f"starting {n} replicas (each prepares its pages before it takes visitors) …")
    return replicas.run()


def main(argv: list[str] | None = None) -> int:
    """Build the store if needed, preload, prepare every page, then run
    ``streamlit run Home.py *argv``; with ``--replicas N`` (N > 1) and HAProxy installed,
    run N such servers behind HAProxy instead (``core/replicas.py``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    from core.replicas import MALLOC_ARENAS, resolve_replicas

    _limit_malloc_arenas(MALLOC_ARENAS)

    try:
        value, argv = _take_replicas(argv)
        n = resolve_replicas(value)
    except ValueError as exc:
        print(f"arbiter: {exc}", file=sys.stderr)
        return 2
    if n > 1:
        if shutil.which("haproxy"):
            return _serve_replicas(n, argv)
        print(f"arbiter: {n} replicas need HAProxy (apt-get install haproxy); running one "
              "process", file=sys.stderr)
    _ensure_store()
    # cache decorators check their options against a storage manager at import time and log
    # "No runtime found" before the server exists; the caches bind to the runtime when called
    import streamlit.runtime.caching.cache_data_api  # noqa: F401  (creates its logger)

    cache_log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = cache_log.level
    cache_log.setLevel(logging.ERROR)
    import pages._shared.preload  # noqa: F401  (everything, once, before any session)

    _warm_up()  # caches warn "No runtime found" here too: still quiet
    cache_log.setLevel(level)

    from pages._shared import timing

    timing.install_from_env()
    from streamlit.web import cli

    # the warm-up read .streamlit/config.toml before the command line's flags were known;
    # the server reads both afresh before it starts, so Streamlit's "please restart" hint
    # about the [server] options it then logs asks for nothing
    logging.getLogger("streamlit.config").addFilter(
        lambda record: "config option section was detected" not in record.getMessage())

    from core.pages_registry import HOME_SCRIPT

    return cli.main.main(args=["run", str(ROOT / HOME_SCRIPT), *argv], prog_name="streamlit",
                         standalone_mode=False) or 0


if __name__ == "__main__":
    sys.exit(main())
