"""Streamlit glue for the DuckDB store: where it is, first-start build, cached reads.

* The store path comes from the environment variable ``ARBITER_DB`` (default
  :data:`core.store.DEFAULT_DB`).
* :func:`ensure_store` builds the default testbed (``TestbedConfig()``: 4 seeds × 480
  personas) the first time the app starts without a store, inside ``st.status``.
* One read-only connection per store file is cached with ``st.cache_resource``; every loader
  is cached keyed on small values only: the path, the file's modification stamp (so a
  rebuilt store is never served from a stale cache), a seed and a persona id. What the
  Walkthrough reads on every rerun (the personas, the selection pool, one persona's bundle)
  is shared as it is (``shared_cache``: no unpickled copy per rerun; never change it).
* Anything wrong with the store ends the page with one ``st.error`` line, no traceback
  (:func:`store_guard`), and no server path: messages name the store file only.
* A data folder the server cannot write (a read-only checkout, a locked-down container)
  falls back, once per process, to a store built in a private temporary folder; every page
  then shows one banner saying so. Choice recorded: a temporary *file*, not DuckDB's
  ``:memory:``, because every loader opens the store by path through cached read-only
  connections; the file lives as long as the process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import streamlit as st

from core.build import build_store
from core.evaluation.cached import load_llm_answers, load_test_predictions
from core.evaluation.walkthrough import (
    OTHER_FUSION,
    label_arrays,
    resolver_evidence,
    select_walkthrough,
)
from core.store import (
    DEFAULT_DB,
    StoreError,
    connect,
    load_testbed,
    query_df,
    store_info,
)
from core.testbed.config import TestbedConfig
from core.testbed.labels import ground_truth, ground_truth_codes
from core.testbed.questions import QIDS
from core.testbed.readout import readout
from core.testbed.schema import Testbed

from .cache import shared_cache

__all__ = [
    "PersonaBundle",
    "public_message",
    "db_path",
    "ensure_store",
    "get_connection",
    "load_persona",
    "load_personas",
    "load_selection_pool",
    "load_store_info",
    "store_guard",
    "store_stamp",
]


def db_path() -> Path:
    """The store file: ``$ARBITER_DB`` if set, else :data:`core.store.DEFAULT_DB`."""
    return Path(os.environ.get("ARBITER_DB") or DEFAULT_DB)


_PATHS = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s:'\"\\/]+){2,}")


def public_message(exc: BaseException | str) -> str:
    """The first line of an error, with every absolute path cut to its last part.

    >>> public_message("/srv/app/data/arbiter.duckdb is not an Arbiter store: x")
    'arbiter.duckdb is not an Arbiter store: x'
    """
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return _PATHS.sub(lambda m: re.split(r"[\\/]", m.group(0))[-1], first)


def store_stamp(path: str | os.PathLike) -> int:
    """Modification time of the store in ns (0 if missing); part of every cache key."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@contextlib.contextmanager
def store_guard() -> Iterator[None]:
    """Turn store failures into one ``st.error`` line and stop the page (no traceback)."""
    try:
        yield
    except (StoreError, duckdb.Error) as exc:
        st.error(f"The store is unusable: {public_message(exc)}", icon=":material/database:")
        st.stop()


@st.cache_resource(show_spinner=False, max_entries=4)
def _build_lock(path: str) -> threading.Lock:
    """One lock per store path, shared by every session of this server process."""
    return threading.Lock()


@st.cache_resource(show_spinner=False, max_entries=1)
def _fallback_state() -> dict:
    """Per process: the temporary folder of the fallback store and why it was needed."""
    return {"dir": None, "reason": None}


def _build_default(path: Path) -> None:
    """Build the default store at ``path`` (raises ``OSError``/``duckdb.Error`` if it can't)."""
    config = TestbedConfig()
    with st.status("First start: building the testbed store…", expanded=True) as status:
        st.write(f"{len(config.seeds)} seeds × {3 * config.personas_per_difficulty} personas "
                 f"→ {path.name}")
        bar = st.progress(0.0)

        def progress(message: str, fraction: float) -> None:
            bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

        try:
            build_store(path, config, progress=progress)
        except Exception:
            status.update(label="Building the store here failed", state="error",
                          expanded=False)
            raise
        status.update(label="Store built", state="complete", expanded=False)


def _fail(exc: BaseException) -> None:
    st.error(f"Could not build the store: {public_message(exc)}", icon=":material/database:")
    st.stop()


def ensure_store() -> Path:
    """Return the store path, building the default store first if the file is missing.

    If the data folder cannot be written, the store is built once per process in a private
    temporary folder and every page shows a banner. A store that exists but cannot be read
    ends the page with one ``st.error`` line.
    """
    path = db_path()
    state = _fallback_state()
    if state["dir"] is not None:
        path = Path(state["dir"]) / path.name
    if not path.exists():
        with _build_lock(str(path)):
            if not path.exists():
                try:
                    _build_default(path)
                except (OSError, duckdb.Error, StoreError) as exc:
                    if state["dir"] is not None:
                        _fail(exc)
                    state["reason"] = public_message(exc)
                    state["dir"] = tempfile.mkdtemp(prefix="arbiter-store-")
                    # removed when the server exits (it used to leave 17 MB behind per start)
                    atexit.register(shutil.rmtree, state["dir"], ignore_errors=True)
                    path = Path(state["dir"]) / path.name
                    try:
                        _build_default(path)
                    except Exception as exc2:  # one line, the details go to the log
                        _fail(exc2)
                except Exception as exc:  # a bug: one line, never a traceback
                    _fail(exc)
    if state["dir"] is not None or os.environ.get("ARBITER_DB_FALLBACK") == "1":
        st.info("This server cannot write its data folder, so it built a temporary store "
                "for this run; it is rebuilt when the server restarts.",
                icon=":material/folder_off:")
    with store_guard():
        load_store_info(str(path), store_stamp(path))
    return path


def _release(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.Error):
        con.close()


@st.cache_resource(show_spinner=False, max_entries=4, on_release=_release)
def get_connection(path: str, stamp: int) -> duckdb.DuckDBPyConnection:
    """The read-only connection to the store at ``path`` as of ``stamp`` (cached)."""
    return connect(path, read_only=True)


@st.cache_data(show_spinner=False, max_entries=8)
def load_store_info(path: str, stamp: int) -> dict:
    """:func:`core.store.store_info` as a plain dict (``StoreError`` if unusable)."""
    return asdict(store_info(path))


@shared_cache(max_entries=8)
def load_personas(path: str, stamp: int) -> pd.DataFrame:
    """The personas table (every seed), in store order (shared: read, never change it)."""
    con = get_connection(path, stamp)
    return query_df(con, "SELECT * FROM personas ORDER BY seed, row")


@shared_cache(max_entries=8, spinner="Ranking candidate instances…")
def load_selection_pool(path: str, stamp: int) -> pd.DataFrame:
    """:func:`select_walkthrough` over the test split of every seed, rejected pairs kept.

    Shared by every session as it is (no copy per rerun): read it, never change it.

    With cached predictions in the store this is the full §8.7 protocol (filters ii, iii, v;
    column ``reference`` says whether a frontier LLM or the Majority-Vote stand-in was used
    for filter iii); without them, the testbed-only filters.
    """
    con = get_connection(path, stamp)
    personas = query_df(con, "SELECT seed, persona_id, difficulty, split FROM personas "
                             "WHERE split = 'test' ORDER BY seed, row")
    gt = query_df(con, "SELECT g.seed, g.persona_id, g.question_id, g.answer "
                       "FROM ground_truth g JOIN personas p USING (seed, persona_id) "
                       "WHERE p.split = 'test'")
    atoms = query_df(con, "SELECT a.seed, a.persona_id, a.question_id, a.source, a.value "
                          "FROM atoms a JOIN personas p USING (seed, persona_id) "
                          "WHERE p.split = 'test' AND a.kind = 'readout'")
    gt_codes, atom_codes = label_arrays(personas, gt, atoms)
    evidence = resolver_evidence(personas, gt_codes,
                                 load_test_predictions(con, ("dsnbf", *OTHER_FUSION)),
                                 load_llm_answers(con, variant="direct"))
    pool = select_walkthrough(gt_codes, atom_codes, personas, keep_all=True, evidence=evidence)
    if evidence is not None:
        pool["reference"] = evidence.reference
    return pool


@dataclass(frozen=True)
class PersonaBundle:
    """Everything the Walkthrough shows about one persona.

    Attributes
    ----------
    testbed : Testbed
        The persona's slice (one row on every layer).
    gt : ndarray of shape (18,)
        Ground-truth codes.
    stats : dict
        ``stats[qid]`` maps the rule's statistic names to Python scalars.
    details : dict
        ``details[qid]`` is the human-readable derivation string.
    atoms : ndarray of shape (18, 5)
        Direct-readout atoms μ*.
    """

    testbed: Testbed
    gt: np.ndarray
    stats: dict
    details: dict
    atoms: np.ndarray


@shared_cache(max_entries=64)
def load_persona(path: str, stamp: int, seed: int, persona_id: str) -> PersonaBundle:
    """Load one persona's testbed slice and compute its GT, statistics and μ* atoms (shared by
    every session: read it, never change it)."""
    con = get_connection(path, stamp)
    tb = load_testbed(con, seed=int(seed), persona_id=str(persona_id))
    codes, stats = ground_truth_codes(tb)
    gt_frame = ground_truth(tb)
    details = dict(zip(gt_frame["question_id"], gt_frame["detail"], strict=True))
    flat = {q: {k: np.asarray(v)[0].item() for k, v in stats[q].items()} for q in QIDS}
    return PersonaBundle(testbed=tb, gt=codes[0], stats=flat, details=details,
                         atoms=readout(tb)[0])
