"""Run the LLM extractor or answerer over personas; write the release's formats or a store.

Seed 000 §8.6 stages 5–6 (extraction: one call per persona, all 18 × 5 atoms) and §9.6
(answering, LLM-Direct: one call per persona, all 18 answers with ``would_skip``). Every call
goes through the cache (:mod:`core.llm.cache`): a hit makes no request; with ``offline=True``
(or no client) a miss is a recorded failure ``"not_cached"``. Every completed reply is cached,
also one that fails validation, so that an offline replay reproduces a run exactly, failures
included (delete the entry to ask again). A failure of any kind (timeout, HTTP status,
network, empty reply, invalid JSON, schema violation, not cached) is recorded as a missing
output with its reason and never stops the run (§9.6.3: records that fail validation are not
coerced into labels).

Outputs (the layout :func:`core.testbed.importer.load_release` reads, spec §3):
``extracted_atoms/s<seed>/<persona>.json`` = ``{"persona", "extraction": {qid: {source:
label or null}}}`` and ``method_outputs/<model>/s<seed>/direct/<persona>.json`` = ``{"persona",
"answers": {qid: {"answer", "would_skip"}}}``; or rows of the store's ``atoms`` (kind
``extracted``) and ``llm_answers`` tables (:func:`write_to_store`).

Invariant (tested): at most ``concurrency`` calls are in flight; outputs and failures
partition the documents.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from ..prose.render import render
from ..testbed.questions import QIDS, SOURCES
from .cache import CallCache, cache_key
from .client import CallError, ChatClient
from .prompts import Prompt, answer_prompt, extract_prompt
from .schema import ReplyError, validate_answers, validate_extraction

__all__ = ["TASKS", "Document", "Failure", "Progress", "RunResult", "documents_of", "run_llm",
           "write_release", "write_to_store"]

#: task -> (prompt builder, reply validator)
TASKS: dict[str, tuple[Callable[[str], Prompt], Callable[[str], Any]]] = {
    "extract": (extract_prompt, validate_extraction),
    "answer": (answer_prompt, validate_answers),
}
MAX_CONCURRENCY = 32


@dataclass(frozen=True)
class Document:
    """One persona's NL memory render."""

    seed: int
    persona_id: str
    text: str


@dataclass(frozen=True)
class Failure:
    """A missing output: the persona, a short reason code and one line of detail."""

    seed: int
    persona_id: str
    reason: str
    detail: str


@dataclass(frozen=True)
class RunResult:
    """What a run produced.

    Attributes
    ----------
    task, model : ``"extract"`` or ``"answer"``, and the model id.
    outputs : ``(seed, persona_id) ->`` an :class:`~core.llm.schema.Extraction` or
        ``{qid: (answer, would_skip)}``, in document order.
    failures : the missing outputs, in document order.
    requests, cache_hits : calls sent to the endpoint and replies read from the cache.
    """

    task: str
    model: str
    outputs: dict[tuple[int, str], Any]
    failures: tuple[Failure, ...]
    requests: int
    cache_hits: int
    forced_null: int = field(default=0)

    def atoms_frame(self) -> pd.DataFrame:
        """``seed, persona_id, question_id, source, value`` (the importer's atom frame)."""
        self._need("extract")
        rows = [(s, p, q, src, ex.cells[q][src]) for (s, p), ex in self.outputs.items()
                for q in QIDS for src in SOURCES]
        return pd.DataFrame({
            "seed": pd.Series([r[0] for r in rows], dtype="int64"),
            "persona_id": pd.Series([r[1] for r in rows], dtype="str"),
            "question_id": pd.Series([r[2] for r in rows], dtype="str"),
            "source": pd.Series([r[3] for r in rows], dtype="str"),
            "value": pd.Series([r[4] for r in rows], dtype=object)})

    def answers_frame(self, *, variant: str = "direct") -> pd.DataFrame:
        """``model, variant, seed, persona_id, question_id, answer, would_skip``."""
        self._need("answer")
        rows = [(s, p, q, *ans[q]) for (s, p), ans in self.outputs.items() for q in QIDS]
        return pd.DataFrame({
            "model": pd.Series([self.model] * len(rows), dtype="str"),
            "variant": pd.Series([variant] * len(rows), dtype="str"),
            "seed": pd.Series([r[0] for r in rows], dtype="int64"),
            "persona_id": pd.Series([r[1] for r in rows], dtype="str"),
            "question_id": pd.Series([r[2] for r in rows], dtype="str"),
            "answer": pd.Series([r[3] for r in rows], dtype=object),
            "would_skip": pd.Series([r[4] for r in rows], dtype="bool")})

    def _need(self, task: str) -> None:
        if self.task != task:
            raise ValueError(f"this is a {self.task!r} run, not {task!r}")

    def to_dict(self) -> dict:
        """A JSON-ready summary (failures listed; no prompt, reply or key)."""
        by_reason: dict[str, int] = {}
        for f in self.failures:
            by_reason[f.reason] = by_reason.get(f.reason, 0) + 1
        return {"task": self.task, "model": self.model,
                "personas": len(self.outputs) + len(self.failures),
                "outputs": len(self.outputs), "requests": self.requests,
                "cache_hits": self.cache_hits, "forced_null_cells": self.forced_null,
                "failures_by_reason": by_reason,
                "failures": [f.__dict__ for f in self.failures]}


class Progress:
    """A one-line progress bar on a text stream, rewritten with ``\\r`` (thread-safe)."""

    def __init__(self, total: int, *, label: str, stream: IO[str] | None = None,
                 enabled: bool = True, width: int = 24) -> None:
        self.total, self.label, self.width = total, label, width
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.done = self.failed = 0
        self._lock = threading.Lock()

    def step(self, *, ok: bool) -> None:
        """Count one finished persona and redraw."""
        with self._lock:
            self.done += 1
            self.failed += not ok
            if self.enabled:
                filled = self.width * self.done // max(self.total, 1)
                bar = "#" * filled + "-" * (self.width - filled)
                self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}"
                                  f" failed {self.failed}")
                if self.done == self.total:
                    self.stream.write("\n")
                self.stream.flush()


def documents_of(tb, *, texts: dict[str, str] | None = None) -> list[Document]:
    """The documents of a testbed: ``texts[persona_id]`` when given for every persona (e.g.
    the release's ``nl_renders``), else :func:`core.prose.render.render` of ``tb``."""
    ids = [str(p) for p in tb.personas["persona_id"]]
    seeds = [int(s) for s in tb.personas["seed"]]
    if texts is None or any(p not in texts for p in ids):
        body = list(render(tb).texts)
    else:
        body = [texts[p] for p in ids]
    return [Document(s, p, t) for s, p, t in zip(seeds, ids, body, strict=True)]


def run_llm(task: str, documents: Sequence[Document], *, model: str, cache: CallCache,
            client: ChatClient | None = None, offline: bool = False, concurrency: int = 4,
            progress: Progress | None = None) -> RunResult:
    """Extract or answer every document (seed 000 §8.6 stage 5, §9.6); see the module doc.

    Parameters
    ----------
    task : ``"extract"`` or ``"answer"``.
    documents : the personas' renders; ``(seed, persona_id)`` must be unique.
    model : the model id (part of every cache key).
    cache : the call cache.
    client : the endpoint client; None (or ``offline=True``) replays the cache only.
    concurrency : calls in flight at once, 1 to 32 (threads).
    progress : the bar to advance (None: no bar).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be in [1, {MAX_CONCURRENCY}], got {concurrency!r}")
    keys = [(d.seed, d.persona_id) for d in documents]
    if len(set(keys)) != len(keys):
        raise ValueError("documents must have distinct (seed, persona_id)")
    build, validate = TASKS[task]
    live = None if offline else client
    counts = {"requests": 0, "hits": 0}
    lock = threading.Lock()

    def one(doc: Document):
        prompt = build(doc.text)
        key = cache_key(model, prompt.system, prompt.user)
        reply = cache.get(key)
        try:
            if reply is not None:
                with lock:
                    counts["hits"] += 1
            elif live is None:
                return Failure(doc.seed, doc.persona_id, "not_cached",
                               f"no cached reply {key[:12]}... and no live endpoint (--offline)")
            else:
                with lock:
                    counts["requests"] += 1
                try:
                    reply = live.complete(prompt.system, prompt.user)
                except CallError as exc:
                    return Failure(doc.seed, doc.persona_id, exc.reason, exc.detail)
                try:
                    cache.put(key, reply, model=model)
                except OSError:  # an unwritable cache costs a re-ask later, not this output
                    pass
            return validate(reply)
        except ReplyError as exc:
            return Failure(doc.seed, doc.persona_id, exc.reason, exc.detail)

    def tracked(doc: Document):
        out = one(doc)
        if progress is not None:
            progress.step(ok=not isinstance(out, Failure))
        return out

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm") as pool:
        results = list(pool.map(tracked, documents))
    outputs = {k: r for k, r in zip(keys, results, strict=True) if not isinstance(r, Failure)}
    failures = tuple(r for r in results if isinstance(r, Failure))
    forced = sum(r.forced_null for r in outputs.values()) if task == "extract" else 0
    return RunResult(task, model, outputs, failures, counts["requests"], counts["hits"],
                     forced)


def _model_dir(model: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")
    return name or "model"


def write_release(result: RunResult, out: str | Path, *, variant: str = "direct") -> list[Path]:
    """Write the outputs in the release layout under ``out``; returns the files written."""
    root = Path(out)
    written = []
    for (seed, pid), value in result.outputs.items():
        if result.task == "extract":
            path = root / "extracted_atoms" / f"s{seed}" / f"{pid}.json"
            data = {"persona": pid, "extraction": value.cells}
        else:
            path = (root / "method_outputs" / _model_dir(result.model) / f"s{seed}" / variant
                    / f"{pid}.json")
            data = {"persona": pid, "answers": {q: {"answer": a, "would_skip": s}
                                                for q, (a, s) in value.items()}}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


def write_to_store(con, result: RunResult, *, variant: str = "direct") -> int:
    """Replace the rows of the run's personas in a store opened for writing; returns rows.

    Extraction: the ``atoms`` rows of kind ``extracted``; answering: the ``llm_answers`` rows
    of (model, ``variant``). ``con`` is a DuckDB connection of :func:`core.store.connect`
    (``read_only=False``); one transaction.
    """
    keys = pd.DataFrame(list(result.outputs), columns=["seed", "persona_id"])
    if result.task == "extract":
        frame = result.atoms_frame().assign(kind="extracted", extractor=result.model)
        delete = ("DELETE FROM atoms WHERE kind = 'extracted' AND (seed, persona_id) IN "
                  "(SELECT seed, persona_id FROM keys_in)")
        table, params = "atoms", []
    else:
        frame = result.answers_frame(variant=variant)
        delete = ("DELETE FROM llm_answers WHERE model = ? AND variant = ? AND "
                  "(seed, persona_id) IN (SELECT seed, persona_id FROM keys_in)")
        table, params = "llm_answers", [result.model, variant]
    if frame.empty:
        return 0
    with con.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        try:
            cur.register("keys_in", keys)
            cur.register("rows_in", frame)
            cur.execute(delete, params)
            cur.execute(f"INSERT INTO {table} BY NAME SELECT * FROM rows_in")
            cur.unregister("rows_in")
            cur.unregister("keys_in")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
    return len(frame)
