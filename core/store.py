"""The DuckDB store: schema, atomic builds, and reads back into arrays.

Tables (the design card §4; names and meanings are a contract):

* ``meta(key, value)`` – schema version, config JSON and key, build time, origin.
* ``personas`` – one row per persona (``schema.PERSONA_COLUMNS`` plus ``row``, the array order).
* ``events`` and ``src_planner``, ``src_self_report``, ``src_objective``, ``src_device`` – one row
  per persona-day: ``seed, persona_id, day_index, date, is_weekend`` and the layer's fields.
* ``src_profile`` – one row per persona; ``knobs`` – the source knobs per persona.
* ``ground_truth(seed, persona_id, question_id, answer, detail)`` – our label functions.
* ``reference_labels(seed, persona_id, question_id, answer)`` – labels imported from a release.
* ``atoms(seed, persona_id, question_id, source, kind, value, extractor)`` – kind ``readout``
  (μ*, ``extractor`` NULL) or ``extracted`` (μ̂; ``extractor`` names who read the prose:
  ``'arbiter-template'`` for our deterministic extractor on a generated store, the release's
  extractor for an imported one, :data:`RELEASE_EXTRACTOR`, or the model of
  ``python -m core llm extract --db``); ``value`` NULL means no atom. A persona has the
  extracted atoms of one extractor at most (each writer replaces a persona's rows).
* ``renders(seed, persona_id, doc)`` – the NL memory document of a persona (seed 000 §8.6
  stage 4): our render on a generated store, the release's ``nl_renders`` on an imported one.
* ``render_lines(seed, persona_id, section, day_index, field, start, end)`` – one row per
  (sentence, field it states) of a stored document; ``doc[start:end]`` is the sentence
  (``core.prose.tables``). Quote ``"end"`` in SQL.
* ``llm_answers``, ``predictions``, ``runs`` – frozen LLM answers and cached resolver outputs.
* ``nq301_items``, ``nq301_answers`` – seed 003's real NQ-open case (shipped in ``data/nq301``).
* ``fusion_claims``, ``fusion_runs``, ``fusion_predictions`` – issue 21's built-in claims tables
  (:data:`core.fusion.builtin.STORE_SETS`), every resolver's board and answers on them
  (:func:`core.fusion.builtin.store_tables` has the columns; read with :func:`load_fusion`).

Conventions: float NaN is stored as NULL; integer codes keep ``-1`` for "none". Builds write a
temporary file and ``os.replace`` it into place, so a failed build leaves no half-written store;
the temporaries of killed builds are removed by the next build. Reading (:func:`connect`,
:func:`store_info`) never creates a file.
DuckDB 2.0 results stream, so every query runs on its own cursor and is drained.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from .paths import DEFAULT_DB
from .testbed.labels import ground_truth
from .testbed.questions import QIDS, QUESTIONS, SOURCES
from .testbed.readout import readout
from .testbed.schema import LAYERS, PERSONA_COLUMNS, Testbed
from .testbed.vocab import DATES, DAY_INDEX, IS_WEEKEND, N_DAYS

__all__ = [
    "DEFAULT_DB",
    "RELEASE_EXTRACTOR",
    "SCHEMA_VERSION",
    "StoreInfo",
    "StoreError",
    "atoms_frame",
    "check_store_destination",
    "check_store_file",
    "connect",
    "FUSION_TABLES",
    "load_atoms",
    "load_fusion",
    "load_testbed",
    "write_predictions",
    "query_df",
    "remove_stale_temporaries",
    "store_info",
    "write_store",
]

SCHEMA_VERSION = "3"
#: the extractor of a release's ``extracted_atoms/`` (the release files do not name it; the
#: paper's main extractor is GPT-5.4, seed 000 §8.6 stage 5, and the sample's atoms are its)
RELEASE_EXTRACTOR = "gpt-5.4"
_TABLE = {"events": "events", "profile": "src_profile", "planner": "src_planner",
          "self_report": "src_self_report", "objective": "src_objective", "device": "src_device"}


class StoreError(RuntimeError):
    """The store is missing, unreadable or of another schema version."""


@dataclass(frozen=True)
class StoreInfo:
    """What a store holds: origin, config, counts."""

    path: str
    schema_version: str
    origin: str
    config: dict
    built_at: str
    n_personas: int
    n_ground_truth: int
    seeds: tuple[int, ...]
    default_run_id: str = ""


def check_store_file(path: str | os.PathLike) -> Path:
    """Check that ``path`` names an existing regular file, without opening or creating it.

    Parameters
    ----------
    path : str or PathLike
        The store to read.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    StoreError
        With a one-line reason: the path is empty, missing, a directory or not a regular file.
    """
    if not os.fspath(path):
        raise StoreError("the store path is empty")
    p = Path(path)
    if not p.exists():
        raise StoreError(f"no store at {p}; build it with: python -m core build --db {p}")
    if p.is_dir():
        raise StoreError(f"{p} is a directory, not a store file")
    if not p.is_file():
        raise StoreError(f"{p} is not a regular file")
    return p


def check_store_destination(path: str | os.PathLike) -> Path:
    """Check, before any work, that a store can be written to ``path``.

    Missing parent folders are fine (they are created when the store is written), but the
    nearest existing ancestor must be a writable folder, and ``path`` itself, if it exists, must
    be a regular file (it is replaced atomically). When the parent folder exists, a probe file
    ``<name>.tmp-<pid>.probe`` is created and removed, which also catches read-only file systems
    and over-long names.

    Parameters
    ----------
    path : str or PathLike
        The store to write.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    StoreError
        With a one-line reason.
    """
    if not os.fspath(path):
        raise StoreError("the store path is empty")
    p = Path(path)
    if not p.name:
        raise StoreError(f"{p} has no file name")
    if p.is_dir():
        raise StoreError(f"{p} is a directory, not a store file")
    if p.exists() and not p.is_file():
        raise StoreError(f"{p} is not a regular file")
    ancestor = p.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise StoreError(f"cannot write {p}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise StoreError(f"cannot write {p}: {ancestor} is not writable")
    if ancestor == p.parent:
        try:
            fd, probe = tempfile.mkstemp(dir=ancestor, prefix=f"{p.name}.tmp-{os.getpid()}.",
                                         suffix=".probe")
        except OSError as exc:
            raise StoreError(f"cannot write {p}: {exc.strerror or exc}") from None
        os.close(fd)
        Path(probe).unlink(missing_ok=True)
    return p


def connect(path: str | os.PathLike, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """Open an existing store; ``StoreError`` with a one-line reason if it is missing or unreadable.

    Never creates a file, also with ``read_only=False`` (stores are created only by
    :func:`write_store` and :func:`core.build.build_store`): the path is checked with
    :func:`check_store_file` first.
    """
    p = check_store_file(path)
    try:
        return duckdb.connect(str(p), read_only=read_only)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"cannot open store {p}: {first}") from None


def query_df(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> pd.DataFrame:
    """Run one parameterised query on a fresh cursor and drain it into a DataFrame."""
    with con.cursor() as cur:
        return cur.execute(sql, params or []).df()


def atoms_frame(codes: np.ndarray, personas: pd.DataFrame, *, kind: str,
                extractor: str | None = None) -> pd.DataFrame:
    """Long atom table from a ``(P, 18, 5)`` code array (``-1`` → NULL value).

    ``extractor`` fills the ``extractor`` column (None for the readout μ*).
    """
    p = len(personas)
    if codes.shape != (p, len(QIDS), len(SOURCES)):
        raise ValueError(f"atom codes must have shape {(p, len(QIDS), len(SOURCES))}, "
                         f"got {codes.shape}")
    cols = []
    for j, q in enumerate(QUESTIONS):
        lab = np.asarray(list(q.labels) + [None], dtype=object)
        cols.append(lab[codes[:, j, :]])  # -1 indexes the trailing None
    values = np.stack(cols, axis=1).reshape(-1)
    return pd.DataFrame({
        "seed": np.repeat(personas["seed"].to_numpy(), len(QIDS) * len(SOURCES)),
        "persona_id": np.repeat(personas["persona_id"].to_numpy(), len(QIDS) * len(SOURCES)),
        "question_id": np.tile(np.repeat(np.asarray(QIDS, dtype=object), len(SOURCES)), p),
        "source": np.tile(np.asarray(SOURCES, dtype=object), p * len(QIDS)),
        "kind": kind,
        "value": values,
        "extractor": pd.Series([extractor] * (p * len(QIDS) * len(SOURCES)), dtype=object),
    })


def _layer_frame(tb: Testbed, name: str) -> pd.DataFrame:
    fields, daily = LAYERS[name]
    arrays = tb.layer(name)
    ids = tb.personas[["seed", "persona_id"]]
    if not daily:
        df = ids.copy()
        for k in fields:
            df[k] = arrays[k]
        return df
    p = tb.n
    data = {
        "seed": np.repeat(ids["seed"].to_numpy(), N_DAYS),
        "persona_id": np.repeat(ids["persona_id"].to_numpy(), N_DAYS),
        "day_index": np.tile(DAY_INDEX, p),
        "date": np.tile(np.asarray(DATES, dtype=object), p),
        "is_weekend": np.tile(IS_WEEKEND, p),
    }
    for k in fields:
        data[k] = arrays[k].reshape(-1)
    return pd.DataFrame(data)


_EMPTY_TABLES = {
    "atoms": ("seed INTEGER, persona_id VARCHAR, question_id VARCHAR, source VARCHAR, "
              "kind VARCHAR, value VARCHAR, extractor VARCHAR"),
    "renders": "seed INTEGER, persona_id VARCHAR, doc VARCHAR",
    "render_lines": ("seed INTEGER, persona_id VARCHAR, section VARCHAR, day_index SMALLINT, "
                     "field VARCHAR, start INTEGER, \"end\" INTEGER"),
    "reference_labels": "seed INTEGER, persona_id VARCHAR, question_id VARCHAR, answer VARCHAR",
    "llm_answers": ("model VARCHAR, variant VARCHAR, seed INTEGER, persona_id VARCHAR, "
                    "question_id VARCHAR, answer VARCHAR, would_skip BOOLEAN"),
    "runs": "run_id VARCHAR, config_json VARCHAR, created_at VARCHAR",
    "predictions": ("run_id VARCHAR, method VARCHAR, seed INTEGER, persona_id VARCHAR, "
                    "question_id VARCHAR, answer VARCHAR, confidence DOUBLE, skipped BOOLEAN, "
                    "margin DOUBLE"),
}


_TMP_NAME = re.compile(r"\.tmp-(\d+)(?:\.wal)?")


def _pid_is_dead(pid: int) -> bool:
    """True only if no process ``pid`` exists (a live pid, or one we may not signal, is alive)."""
    if pid <= 0:
        return False  # not a pid this module writes; leave the file alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OverflowError, OSError):  # PermissionError: alive, owned by someone else
        return False
    return False


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that killed builds of ``path`` left behind.

    :func:`write_store` writes ``<path>.tmp-<pid>`` (and DuckDB its ``.wal``) before renaming it
    over ``path``; a build that is killed leaves these files. Every such file whose ``pid`` is
    no longer alive (``os.kill(pid, 0)`` raises ``ProcessLookupError``) is removed; files of live
    processes, including this one, are kept, so concurrent builds are not disturbed.

    Parameters
    ----------
    path : str or PathLike
        The store path whose temporaries to clean.

    Returns
    -------
    list of Path
        The files removed.

    Notes
    -----
    Liveness is judged in this process's pid namespace: a build running in another container
    on a shared folder is not visible. A recycled pid keeps its stale file (it looks alive).
    Does nothing on Windows, where ``os.kill`` cannot probe a process.
    """
    p = Path(path)
    if os.name == "nt" or not p.name or not p.parent.is_dir():
        return []
    removed = []
    prefix = p.name
    for candidate in p.parent.glob(f"{glob_escape(prefix)}.tmp-*"):
        m = _TMP_NAME.fullmatch(candidate.name[len(prefix):])
        if not m or int(m.group(1)) == os.getpid() or not _pid_is_dead(int(m.group(1))):
            continue
        try:
            candidate.unlink()
        except OSError:  # gone meanwhile, or not ours to remove; the next build tries again
            continue
        removed.append(candidate)
    return removed


def write_store(
    path: str | os.PathLike,
    tb: Testbed,
    *,
    origin: str,
    config: dict,
    reference_labels: pd.DataFrame | None = None,
    extracted_atoms: pd.DataFrame | None = None,
    extractor: str = RELEASE_EXTRACTOR,
    renders: pd.DataFrame | None = None,
    render_lines: pd.DataFrame | None = None,
    llm_answers: pd.DataFrame | None = None,
    predictions: pd.DataFrame | None = None,
    extra_tables: dict[str, pd.DataFrame] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> StoreInfo:
    """Compute GT and μ* for ``tb`` and write a complete store atomically.

    ``predictions`` (the frame of :func:`core.evaluation.run.predictions_frame`, one
    ``run_id``) are cached in the store and that run becomes the store's default run.
    ``extra_tables`` are copied as they are (e.g. the NQ-open tables of seed 003).
    ``extracted_atoms`` (``seed, persona_id, question_id, source, value`` and optionally
    ``extractor``) become the ``atoms`` rows of kind ``extracted``; a row without an extractor
    name gets ``extractor`` (default: a release's, :data:`RELEASE_EXTRACTOR`). ``renders`` and
    ``render_lines`` fill those tables (:mod:`core.prose.tables` builds them); without them
    the tables are empty.

    The store is written to ``<path>.tmp-<pid>`` and renamed over ``path`` only when every
    table is in place; on any error the temporary file is removed and ``path`` is untouched.
    Temporaries of dead processes (killed builds) are removed first, see
    :func:`remove_stale_temporaries`. ``StoreError`` (one line) before any work if ``path``
    cannot be written (:func:`check_store_destination`).
    """
    path = check_store_destination(path)
    tb.validate()
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    step = progress or (lambda msg, frac: None)
    for leftover in (tmp, Path(f"{tmp}.wal")):
        leftover.unlink(missing_ok=True)
    try:
        step("working out the true answer to every question from the simulated days", 0.35)
        gt = ground_truth(tb)
        step("reading what each source answers to every question", 0.5)
        atoms = atoms_frame(readout(tb), tb.personas, kind="readout")
        if extracted_atoms is not None and len(extracted_atoms):
            named = (extracted_atoms["extractor"] if "extractor" in extracted_atoms
                     else pd.Series(None, index=extracted_atoms.index, dtype=object))
            hat = extracted_atoms.assign(kind="extracted",
                                         extractor=named.where(named.notna(), extractor))
            atoms = pd.concat([atoms, hat[atoms.columns]], ignore_index=True)
        step("saving everything to the data file", 0.65)
        personas = tb.personas[list(PERSONA_COLUMNS)].copy()
        personas["row"] = np.arange(tb.n)
        frames = {"personas": personas, "ground_truth": gt}
        for name, table in _TABLE.items():
            frames[table] = _layer_frame(tb, name)
        knobs = tb.knobs.copy()
        knobs.insert(0, "persona_id", tb.personas["persona_id"].to_numpy())
        knobs.insert(0, "seed", tb.personas["seed"].to_numpy())
        frames["knobs"] = knobs
        built_at = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        default_run = ""
        if predictions is not None and len(predictions):
            default_run = str(predictions["run_id"].iloc[0])
        meta = pd.DataFrame({"key": ["schema_version", "origin", "config_json", "built_at",
                                     "default_run_id"],
                             "value": [SCHEMA_VERSION, origin, json.dumps(config, sort_keys=True),
                                       built_at, default_run]})
        frames["meta"] = meta
        for name, frame in (extra_tables or {}).items():
            if not name.isidentifier() or name in frames or name in _EMPTY_TABLES:
                raise ValueError(f"bad extra table name {name!r}")
            frames[name] = frame
        con = duckdb.connect(str(tmp))
        try:
            for table, frame in frames.items():
                with con.cursor() as cur:
                    cur.register("frame_in", frame)
                    cur.execute(f"CREATE TABLE {table} AS SELECT * FROM frame_in")
                    cur.unregister("frame_in")
            for table, cols in _EMPTY_TABLES.items():
                with con.cursor() as cur:
                    cur.execute(f"CREATE TABLE {table} ({cols})")
            for table, frame in (("atoms", atoms), ("reference_labels", reference_labels),
                                 ("llm_answers", llm_answers), ("renders", renders),
                                 ("render_lines", render_lines)):
                if frame is not None and len(frame):
                    with con.cursor() as cur:
                        cur.register("frame_in", frame)
                        cur.execute(f"INSERT INTO {table} BY NAME SELECT * FROM frame_in")
                        cur.unregister("frame_in")
            if default_run:
                write_predictions(con, predictions, run_id=default_run, config=config)
            with con.cursor() as cur:
                cur.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
        raise
    step("done", 1.0)
    return store_info(path)


#: Tables every page may read: a generated and an imported store both have them (the
#: seed-002 and NQ-open tables are optional; the pages that need them say so).
REQUIRED_TABLES = ("meta", "personas", "ground_truth", "atoms", "events", "knobs",
                   "src_planner", "src_self_report", "src_objective", "src_device",
                   "src_profile", "reference_labels", "renders", "render_lines", "runs",
                   "predictions", "llm_answers")


#: Issue 21's tables (optional like the NQ-open ones: a store built before them still
#: serves every other page, and the "Your data" page computes a set it does not find).
FUSION_TABLES = ("fusion_claims", "fusion_runs", "fusion_predictions")


def load_fusion(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, pd.DataFrame] | None:
    """The stored claims, runs and predictions of one built-in set (keys of
    :data:`FUSION_TABLES`), or ``None`` when the store lacks the tables or the set; the claims
    in their ``row`` order, so ``core.fusion.importer.read_claims(frame)`` rebuilds them."""
    tables = set(query_df(con, "SELECT table_name FROM information_schema.tables")
                 ["table_name"])
    if not set(FUSION_TABLES) <= tables:
        return None
    order = {"fusion_claims": "row", "fusion_runs": "position",
             "fusion_predictions": "method, item"}
    out = {t: query_df(con, f"SELECT * FROM {t} WHERE dataset = ? ORDER BY {order[t]}",
                       [dataset]) for t in FUSION_TABLES}
    return out if len(out["fusion_claims"]) else None


def store_info(path: str | os.PathLike) -> StoreInfo:
    """Read the meta table and counts of the store at ``path`` (``StoreError`` if unusable).

    Everything a page reads is validated here, once per store file (the pages cache the
    result on the file's path and stamp): every table of :data:`REQUIRED_TABLES`, the schema
    version, a ``config_json`` that is a JSON object, at least one persona (issue 20 point 3:
    a bad ``config_json`` slipped past on nine pages, a store with no personas or without
    ``renders`` crashed the Walkthrough). The message names what is wrong in plain words.
    """
    con = connect(path, read_only=True)
    try:
        try:
            tables = set(query_df(con, "SELECT table_name FROM information_schema.tables")
                         ["table_name"])
            missing = [t for t in REQUIRED_TABLES if t not in tables]
            core_missing = [t for t in ("meta", "personas") if t in missing]
            if core_missing:
                raise StoreError(f"{path} is not an Arbiter store: it has no "
                                 f"{' and no '.join(core_missing)} table")
            if missing:
                raise StoreError(f"{path} lacks the table(s) {', '.join(missing)}; rebuild it")
            meta = dict(query_df(con, "SELECT key, value FROM meta").itertuples(index=False))
            counts = query_df(con, "SELECT (SELECT count(*) FROM personas) AS p, "
                                   "(SELECT count(*) FROM ground_truth) AS g")
            seeds = query_df(con, "SELECT DISTINCT seed FROM personas ORDER BY seed")
        except duckdb.Error as exc:
            reason = str(exc).splitlines()[0]
            raise StoreError(f"{path} is not an Arbiter store: {reason}") from None
    finally:
        con.close()
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(f"{path} has schema version {meta.get('schema_version')!r}, "
                         f"expected {SCHEMA_VERSION}; rebuild it")
    try:
        config = json.loads(meta.get("config_json", "{}"))
    except (TypeError, ValueError, RecursionError):
        config = None
    if not isinstance(config, dict):
        raise StoreError(f"{path} has a meta config_json that is not a JSON object; rebuild it")
    if int(counts["p"].iloc[0]) == 0:
        raise StoreError(f"{path} holds no personas; rebuild it")
    return StoreInfo(str(path), meta["schema_version"], meta.get("origin", ""),
                     config, meta.get("built_at", ""),
                     int(counts["p"].iloc[0]), int(counts["g"].iloc[0]),
                     tuple(int(s) for s in seeds["seed"]), meta.get("default_run_id", ""))


def load_testbed(con: duckdb.DuckDBPyConnection, *, seed: int | None = None,
                 persona_id: str | None = None) -> Testbed:
    """Rebuild a :class:`Testbed` from the store, optionally for one seed and/or persona."""
    where, params = [], []
    if seed is not None:
        where.append("seed = ?")
        params.append(int(seed))
    if persona_id is not None:
        where.append("persona_id = ?")
        params.append(str(persona_id))
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    personas = query_df(con, f"SELECT * FROM personas{cond} ORDER BY row", params)
    if personas.empty:
        raise StoreError("no persona matches the selection")
    p = len(personas)
    keys = personas[["seed", "persona_id"]].assign(row=np.arange(p))
    layers = {}
    with con.cursor() as cur:
        cur.register("sel", keys)
        for name, table in _TABLE.items():
            fields, daily = LAYERS[name]
            cols = ", ".join(f"t.{k}" for k in fields)
            order = "sel.row, t.day_index" if daily else "sel.row"
            df = cur.execute(f"SELECT {cols} FROM {table} t JOIN sel USING (seed, persona_id) "
                             f"ORDER BY {order}").df()
            shape = (p, N_DAYS) if daily else (p,)
            if len(df) != int(np.prod(shape)):
                raise StoreError(f"table {table} has {len(df)} rows for {p} personas")
            arrays = {}
            for k, (dtype, _) in fields.items():
                col = df[k]
                if np.dtype(dtype).kind == "f":
                    arr = col.to_numpy(dtype=float, na_value=np.nan)
                else:
                    arr = col.to_numpy().astype(dtype)
                arrays[k] = arr.reshape(shape)
            layers[name] = arrays
        knobs = cur.execute("SELECT k.* EXCLUDE (seed, persona_id) FROM knobs k "
                            "JOIN sel USING (seed, persona_id) ORDER BY sel.row").df()
        cur.unregister("sel")
    personas = personas.drop(columns=["row"])
    return Testbed(personas, knobs=knobs, **layers)


def load_atoms(con: duckdb.DuckDBPyConnection, *, kind: str = "readout",
               extractor: str | None = None) -> np.ndarray:
    """Atoms of every persona as int8 codes (P, 18, 5) in persona ``row`` order (−1 = none).

    Personas without any atom of this kind get −1 everywhere. ``extractor`` keeps the
    extracted atoms of that extractor only (default: every extracted row; a persona has one
    extractor's rows at most, see the module docstring).
    """
    if kind not in ("readout", "extracted"):
        raise ValueError(f"kind must be 'readout' or 'extracted', got {kind!r}")
    if extractor is not None and kind != "extracted":
        raise ValueError(f"extractor {extractor!r} needs kind='extracted', got {kind!r}")
    n = int(query_df(con, "SELECT count(*) AS n FROM personas")["n"].iloc[0])
    # codes are looked up in SQL against constant tables built from the question spec (no
    # user text), which is much faster than mapping label strings in pandas
    labels = ", ".join(f"('{q.qid}', '{lab}', {j}, {c})" for j, q in enumerate(QUESTIONS)
                       for c, lab in enumerate(q.labels))
    sources = ", ".join(f"('{src}', {i})" for i, src in enumerate(SOURCES))
    df = query_df(con, f"""
        WITH lk(question_id, value, qi, code) AS (VALUES {labels}),
             sk(source, si) AS (VALUES {sources})
        SELECT p.row, lk.qi, sk.si, lk.code
        FROM atoms a JOIN personas p USING (seed, persona_id)
             JOIN lk USING (question_id, value) JOIN sk USING (source)
        WHERE a.kind = ? AND a.value IS NOT NULL
              AND (CAST(? AS VARCHAR) IS NULL OR a.extractor = ?)""", [kind, extractor, extractor])
    out = np.full((n, len(QIDS), len(SOURCES)), -1, np.int8)
    if df.empty:
        return out
    out[df["row"].to_numpy(), df["qi"].to_numpy(), df["si"].to_numpy()] = (
        df["code"].to_numpy().astype(np.int8))
    return out


def write_predictions(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame, *, run_id: str,
                      config: dict) -> None:
    """Replace the cached predictions of ``run_id`` (one transaction) and record the run."""
    cols = ["run_id", "method", "seed", "persona_id", "question_id", "answer", "confidence",
            "skipped", "margin"]
    data = frame.assign(run_id=run_id)[cols]
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    with con.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        try:
            cur.execute("DELETE FROM predictions WHERE run_id = ?", [run_id])
            cur.execute("DELETE FROM runs WHERE run_id = ?", [run_id])
            cur.register("pred_in", data)
            cur.execute("INSERT INTO predictions BY NAME SELECT * FROM pred_in")
            cur.unregister("pred_in")
            cur.execute("INSERT INTO runs VALUES (?, ?, ?)",
                        [run_id, json.dumps(config, sort_keys=True), created])
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
