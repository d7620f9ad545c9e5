"""Where cells run: in this process, in local processes, or on a Dask distributed cluster.

Every executor is a context manager with one method, ``run(cells, cell_fn)``, yielding a
:class:`CellOutcome` per cell as cells finish (in any order). A cell's own exception is caught
in the worker and comes back as a failed outcome with its error text; a worker that dies is
the executor's business:

* :class:`InProcess` (``workers=1``): a loop in the driver.
* :class:`LocalProcesses`: ``concurrent.futures.ProcessPoolExecutor`` whose processes a
  fork server starts (``spawn`` where there is none), the fork server having imported
  :mod:`core.sweep.cell` once. Workers run BLAS on one thread (``OPENBLAS_NUM_THREADS``,
  ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` are set to 1 unless the user set them, in the
  environment the processes start with, as Dask's nanny does and ``serve.py`` does for the
  app): with two workers on two cores, threaded BLAS made each cell 2-3 times slower. A
  forked copy of the driver would inherit its BLAS threads, hence no ``fork``. A dead worker
  breaks the whole pool: the unfinished cells are resubmitted to a fresh pool, at most
  :data:`MAX_POOL_RESTARTS` times; after that they are recorded as failed.
* :class:`Dask`: a ``distributed.Client`` on a scheduler's address (``dask``), or on a
  ``LocalCluster`` of ``workers`` processes with one thread each (``dask-local``). The
  scheduler reschedules the cells of a worker that died, up to its
  ``distributed.scheduler.allowed-failures``; a cell that exhausts them (``KilledWorker``)
  is recorded as failed. Workers must be able to import ``core`` (a ``LocalCluster``
  inherits the driver's ``sys.path``; on a remote cluster install Arbiter on every worker).

Cells ship as :class:`core.sweep.grid.Cell` records (parameters, never arrays) and come back
as small frames. Dask is imported only by :class:`Dask` (an optional dependency: the
``requirements-dev.txt`` pin).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # this module stays light: a driver starts its workers before importing
    import pandas as pd  # the heavy modules (``reproduce``), so both load at once

    from .grid import Cell

__all__ = ["BLAS_THREAD_VARIABLES", "MAX_POOL_RESTARTS", "CellOutcome", "Dask", "InProcess",
           "LocalProcesses", "execute_cell", "failed", "make_executor"]

#: Fresh pools a local sweep starts after a worker process died, before giving up.
MAX_POOL_RESTARTS = 3


@dataclass(frozen=True)
class CellOutcome:
    """What came back from one cell.

    Attributes
    ----------
    cell_id : the cell's :attr:`~core.sweep.grid.Cell.cell_id`.
    frame : its results frame (:data:`core.sweep.cell.RESULT_COLUMNS`), ``None`` if it failed.
    error : ``"ExceptionType: first line"`` of a failure, ``""`` on success.
    seconds : wall time of the cell in its worker (0 when the worker died).
    worker : ``host:pid`` of the process that ran it (``""`` when unknown).
    """

    cell_id: str
    frame: pd.DataFrame | None
    error: str
    seconds: float
    worker: str

    @property
    def ok(self) -> bool:
        """The cell finished and returned a frame."""
        return self.frame is not None


def _error_text(exc: BaseException) -> str:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"[:500]


def failed(cell: Cell, error: str) -> CellOutcome:
    """A failed outcome recorded by the driver (the worker never answered)."""
    return CellOutcome(cell.cell_id, None, error, 0.0, "")


def execute_cell(cell: Cell, cell_fn: Callable[[Cell], pd.DataFrame] | None = None
                 ) -> CellOutcome:
    """Run ``cell_fn(cell)`` in this process; an exception becomes a failed outcome.

    ``cell_fn`` defaults to :func:`core.sweep.cell.run_cell`. The frame must have the columns
    of :data:`core.sweep.cell.RESULT_COLUMNS`.
    """
    import pandas as pd

    from .cell import RESULT_COLUMNS, run_cell

    cell_fn = run_cell if cell_fn is None else cell_fn
    worker = f"{socket.gethostname()}:{os.getpid()}"
    t0 = time.perf_counter()
    try:
        frame = cell_fn(cell)
        if not isinstance(frame, pd.DataFrame) or list(frame.columns) != list(RESULT_COLUMNS):
            raise TypeError("a cell must return a frame with the columns "
                            f"{', '.join(RESULT_COLUMNS)}")
    except Exception as exc:
        return CellOutcome(cell.cell_id, None, _error_text(exc), time.perf_counter() - t0,
                           worker)
    return CellOutcome(cell.cell_id, frame, "", time.perf_counter() - t0, worker)


#: BLAS thread variables set to 1 for worker processes (module docstring).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def _one_blas_thread():
    """``os.environ`` with :data:`BLAS_THREAD_VARIABLES` defaulting to 1 while worker
    processes start (they inherit it); restored afterwards."""
    saved = {k: os.environ.get(k) for k in BLAS_THREAD_VARIABLES}
    for k in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(k, "1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class InProcess:
    """Cells one after another in the driver (``--workers 1``)."""

    name = "local"
    workers = 1

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def run(self, cells: Iterable[Cell], cell_fn: Callable) -> Iterator[CellOutcome]:
        """Yield each cell's outcome in order."""
        for cell in cells:
            yield execute_cell(cell, cell_fn)


class LocalProcesses:
    """Cells in ``workers`` local processes (module docstring: start method, dead workers).

    Entered (``with LocalProcesses(workers=2) as ex``), it starts its processes at once, so
    they import ``core`` while the driver does other work, and keeps them for every
    :meth:`run` until it exits (several sweeps, one start-up). Not entered, each
    :meth:`run` starts and closes a pool of its own.
    """

    name = "local"

    def __init__(self, *, workers: int) -> None:
        if workers < 2:
            raise ValueError(f"LocalProcesses needs workers >= 2, got {workers}")
        self.workers = int(workers)
        self._pool: ProcessPoolExecutor | None = None
        self._starting: tuple | None = None  # (thread, box) while processes start

    def __enter__(self) -> LocalProcesses:
        ctx = self._context()
        if ctx.get_start_method() != "forkserver":
            self._pool = self._start(self.workers)
            return self
        # Starting a worker waits until the fork server has imported core.sweep.cell (about
        # 1.5 s): that wait runs in a thread, so the driver imports its own modules on the
        # other core meanwhile; :meth:`run` and :meth:`__exit__` wait for it. The server is
        # launched here, in the environment of one BLAS thread its workers inherit (the
        # thread leaves ``os.environ`` alone: the driver may be importing NumPy).
        with _one_blas_thread():
            multiprocessing.forkserver.ensure_running()
        box: dict = {}

        def start() -> None:
            try:
                box["pool"] = self._start(self.workers, blas=False)
            except BaseException as exc:  # re-raised by _started, in the driver's thread
                box["error"] = exc

        thread = threading.Thread(target=start, name="arbiter-sweep-start", daemon=True)
        thread.start()
        self._starting = (thread, box)
        return self

    def _started(self) -> None:
        """Wait for the processes :meth:`__enter__` started in the background."""
        if self._starting is None:
            return
        thread, box = self._starting
        thread.join()
        self._starting = None
        if "error" in box:
            raise box["error"]
        self._pool = box["pool"]

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(Exception):  # a failed start has nothing to close
            self._started()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    @staticmethod
    def _context():
        if "forkserver" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["core.sweep.cell"])  # only if it is not running yet
            return ctx
        return multiprocessing.get_context("spawn")

    def _start(self, workers: int, *, blas: bool = True) -> ProcessPoolExecutor:
        """A pool whose ``workers`` processes are starting (a no-op task each); ``blas``:
        set one BLAS thread in the environment while they start (not needed once the fork
        server runs with it)."""
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=self._context())
        with _one_blas_thread() if blas else contextlib.nullcontext():
            for _ in range(workers):  # the processes start during the submissions
                pool.submit(os.getpid)
        return pool

    def run(self, cells: Iterable[Cell], cell_fn: Callable) -> Iterator[CellOutcome]:
        """Yield outcomes as cells finish; resubmit to a fresh pool when a worker dies."""
        self._started()
        pending = {c.cell_id: c for c in cells}
        restarts = 0
        own = self._pool is None
        while pending:
            if self._pool is None:
                self._pool = self._start(min(self.workers, len(pending)))
            pool = self._pool
            broken = ""
            try:
                futures = {pool.submit(execute_cell, c, cell_fn): c for c in pending.values()}
                waiting = set(futures)
                while waiting:
                    done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                    for fut in done:
                        try:
                            out = fut.result()
                        except BrokenProcessPool as exc:
                            broken = _error_text(exc)
                            continue
                        except Exception as exc:  # the cell or its function did not pickle
                            out = failed(futures[fut], _error_text(exc))
                        pending.pop(out.cell_id, None)
                        yield out
            except BrokenProcessPool as exc:  # broken before a submission
                broken = _error_text(exc)
            finally:
                if own or broken or pending:  # a broken pool is replaced; an own one closed
                    pool.shutdown(wait=True, cancel_futures=True)
                    self._pool = None
            if pending and broken:
                restarts += 1
                if restarts > MAX_POOL_RESTARTS:
                    for cell in list(pending.values()):
                        yield failed(cell, f"a worker process died {restarts} times; {broken}")
                    return


class Dask:
    """Cells on a Dask distributed cluster: ``address`` of a running scheduler, or a
    ``LocalCluster`` of ``workers`` processes with one thread each."""

    def __init__(self, *, address: str | None = None, workers: int | None = None,
                 timeout: float = 30.0) -> None:
        if (address is None) == (workers is None):
            raise ValueError("Dask needs exactly one of address (a scheduler) or workers "
                             "(a LocalCluster)")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.address, self.workers, self.timeout = address, workers, timeout
        self.name = "dask" if address is not None else "dask-local"
        self._client = self._cluster = None

    def __enter__(self) -> Dask:
        from distributed import Client, LocalCluster

        if self.address is not None:
            try:
                self._client = Client(self.address, timeout=f"{self.timeout}s")
            except Exception as exc:  # OSError, TimeoutError, ValueError (a bad address)
                raise OSError(f"cannot reach the Dask scheduler at {self.address}: "
                              f"{_error_text(exc)}") from None
            try:  # cells would wait for ever on a cluster without workers
                self._client.wait_for_workers(1, timeout=self.timeout)
            except Exception:
                self.__exit__(None, None, None)
                raise OSError(f"no worker joined the Dask scheduler at {self.address} within "
                              f"{self.timeout:g} s") from None
            self.workers = len(self._client.scheduler_info().get("workers", {}))
        else:
            self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                         processes=True, dashboard_address=None)
            try:
                self._client = Client(self._cluster)
            except BaseException:
                self.__exit__(None, None, None)
                raise
        return self

    def __exit__(self, *exc) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def run(self, cells: Iterable[Cell], cell_fn: Callable) -> Iterator[CellOutcome]:
        """Yield outcomes as cells finish; a cell the cluster gave up on comes back failed."""
        from distributed import as_completed

        cells = list(cells)
        if not cells:
            return
        token = uuid.uuid4().hex[:8]
        keys = [f"arbiter-cell-{c.cell_id}-{token}" for c in cells]
        futures = self._client.map(execute_cell, cells, key=keys, cell_fn=cell_fn)
        by_key = {f.key: c for f, c in zip(futures, cells, strict=True)}
        try:
            for fut in as_completed(futures):
                try:
                    out = fut.result()
                except Exception as exc:  # KilledWorker, a lost scheduler, …
                    out = failed(by_key[fut.key], _error_text(exc))
                fut.release()
                yield out
        finally:
            for fut in futures:
                fut.release()


def make_executor(kind: str, *, workers: int = 1, scheduler: str | None = None):
    """The executor for ``--executor kind`` (``local``, ``dask`` or ``dask-local``)."""
    if kind == "local":
        if scheduler:
            raise ValueError("--scheduler applies only to --executor dask")
        return InProcess() if workers <= 1 else LocalProcesses(workers=workers)
    if kind == "dask":
        if not scheduler:
            raise ValueError("--executor dask needs --scheduler ADDRESS")
        return Dask(address=scheduler)
    if kind == "dask-local":
        if scheduler:
            raise ValueError("--scheduler applies only to --executor dask")
        return Dask(workers=workers)
    raise ValueError(f"unknown executor {kind!r} (expected local, dask or dask-local)")
