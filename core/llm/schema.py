"""Parse and validate LLM replies (seed 000 §9.6.3 acceptance rules, §9.6.5 extraction shape).

A small validator for the two reply shapes (no ``jsonschema`` dependency):

* **answers**: ``{"answers": {qid: {"answer": label, "would_skip": bool}}}`` with exactly the
  18 question ids, every answer a label of its question's answer space (never null), every
  ``would_skip`` a JSON boolean; no other keys.
* **extraction**: ``{qid: {source: label or null}}`` with exactly the 18 question ids, each with
  exactly the five sources, every non-null value a label of that question. A label written for
  a source outside the question's source-question map is forced to null, as the release does
  (the benchmark specification §2.4); the number of such cells is reported.

Records that fail are never coerced into labels (§9.6.3): :class:`ReplyError` carries the
reason (``"invalid_json"`` or ``"schema_violation"``) and a one-line detail naming the first
offending path. Only one wrapping Markdown code fence (```` ```json … ``` ````) is removed
before parsing; anything else outside the JSON object is invalid JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..testbed.questions import QIDS, SOURCES, question

__all__ = ["Extraction", "ReplyError", "parse_json", "validate_answers", "validate_extraction"]


class ReplyError(ValueError):
    """A reply that is not valid JSON or not of the expected shape.

    Attributes
    ----------
    reason : ``"invalid_json"`` or ``"schema_violation"``.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Extraction:
    """A validated extraction reply: ``cells[qid][source]`` is a label or None."""

    cells: dict[str, dict[str, str | None]]
    forced_null: int


def _strip_fence(text: str) -> str:
    t = text.strip()
    if t.startswith("```") and t.endswith("```") and len(t) >= 6:
        first, _, rest = t.partition("\n")
        if first.strip("`").strip().lower() in ("", "json"):
            return rest[:-3].strip()
    return t


def parse_json(text: str) -> Any:
    """The JSON object of a reply (``ReplyError("invalid_json", ...)`` otherwise)."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("invalid_json", "the reply is empty")
    try:
        obj = json.loads(_strip_fence(text))
    except json.JSONDecodeError as exc:
        raise ReplyError("invalid_json", f"{exc.msg} at line {exc.lineno} column {exc.colno}")\
            from None
    if not isinstance(obj, dict):
        raise ReplyError("invalid_json", f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _keys(obj: Any, expected: tuple[str, ...], where: str) -> None:
    if not isinstance(obj, dict):
        raise ReplyError("schema_violation", f"{where} must be an object, got "
                                             f"{type(obj).__name__}")
    missing = [k for k in expected if k not in obj]
    extra = sorted(str(k) for k in obj if k not in expected)
    if missing:
        raise ReplyError("schema_violation", f"{where} misses {', '.join(missing)}")
    if extra:
        shown = ", ".join(repr(k[:20]) for k in extra[:3])
        raise ReplyError("schema_violation", f"{where} has unexpected key(s) {shown}")


def _label(qid: str, value: Any, where: str) -> str:
    q = question(qid)
    if not isinstance(value, str) or value not in q.labels:
        shown = repr(value)[:40]
        raise ReplyError("schema_violation", f"{where} = {shown} is not a label of {qid} "
                                             f"({', '.join(q.labels)})")
    return value


def validate_answers(obj: Any) -> dict[str, tuple[str, bool]]:
    """``{qid: (answer, would_skip)}`` of an answering reply (seed 000 §9.6.3).

    Raises
    ------
    ReplyError
        ``schema_violation`` naming the first bad path.
    """
    if isinstance(obj, str):
        obj = parse_json(obj)
    _keys(obj, ("answers",), "the reply")
    answers = obj["answers"]
    _keys(answers, QIDS, "answers")
    out = {}
    for qid in QIDS:
        cell = answers[qid]
        _keys(cell, ("answer", "would_skip"), f"answers.{qid}")
        label = _label(qid, cell["answer"], f"answers.{qid}.answer")
        skip = cell["would_skip"]
        if not isinstance(skip, bool):
            raise ReplyError("schema_violation", f"answers.{qid}.would_skip must be true or "
                                                 f"false, got {repr(skip)[:20]}")
        out[qid] = (label, skip)
    return out


def validate_extraction(obj: Any) -> Extraction:
    """The cells of an extraction reply (seed 000 §9.6.5); unmapped labels forced to null.

    Raises
    ------
    ReplyError
        ``schema_violation`` naming the first bad path.
    """
    if isinstance(obj, str):
        obj = parse_json(obj)
    _keys(obj, QIDS, "the reply")
    cells: dict[str, dict[str, str | None]] = {}
    forced = 0
    for qid in QIDS:
        row = obj[qid]
        _keys(row, SOURCES, qid)
        informative = question(qid).informative
        out: dict[str, str | None] = {}
        for source in SOURCES:
            value = row[source]
            if value is not None:
                _label(qid, value, f"{qid}.{source}")
                if source not in informative:
                    forced += 1
                    value = None
            out[source] = value
        cells[qid] = out
    return Extraction(cells, forced)
