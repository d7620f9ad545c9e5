"""One validated reader for the files seed 002's tools take in (*Personal Dimension Benchmark
v1: methods*, §9: "one JSON object per response against a fixed contract").

The command line (``python -m core records …``) and the Personal records page read response
files, disclosure decisions, write-back responses and world files through these functions
only, with the same limits:

=================== ============================= ==========================================
limit               value                         refused with
=================== ============================= ==========================================
size                :data:`MAX_BYTES` (20 MiB,    ``N bytes, more than the M allowed``
                    ``server.maxUploadSize = 20``
                    in ``.streamlit/config.toml``)
lines (JSON Lines)  :data:`MAX_LINES`             ``N lines, more than the M allowed``
line length         :data:`MAX_LINE_CHARS`        ``line N: longer than M characters``
nesting             :data:`MAX_DEPTH` levels of   ``line N: nested too deeply`` (never a
                    ``[`` and ``{``               ``RecursionError``)
text                UTF-8 (a byte-order mark is   ``line N is not UTF-8 text`` (a line
                    allowed)                      number, not a byte offset)
content             at least one non-blank line   ``the file is empty``
JSON                strict: no ``NaN`` or         ``line N: not JSON (…)``,
                    ``Infinity``, no key twice    ``line N: key "k" twice``
=================== ============================= ==========================================

Every refusal is an :class:`InputError` (a ``ValueError``) whose text is **one line** naming
the file and, where it can, the line; :attr:`InputError.problems` lists every malformed line,
not only the first. The command line turns it into exit status 2; the page shows it in one
plain-text line and keeps the last good file.

A JSON Lines file is read by :func:`json_lines`: every non-blank line must be one JSON value,
which the caller's ``check`` (a function returning ``None`` or a one-line reason) validates
against its contract, and ``key`` (optional) must not repeat. The contracts themselves live
beside their scorers: :mod:`.score` (responses, M1–M8), :mod:`.disclosure` (M9–M11),
:mod:`.writeback` (M12–M13), :mod:`.world` (the world file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_LINES", "MAX_LINE_CHARS", "MAX_REPORTED",
           "InputError", "dump_lines", "json_document", "json_lines", "read_bytes",
           "split_lines"]

#: The size cap of every input, in bytes: 20 MiB, the number ``server.maxUploadSize`` (in
#: MiB) gives the page's uploader and the Reliability page's CSV cap
#: (``core.calibration.report.MAX_CSV_BYTES``). The reference readers' 516 responses take
#: about 80 kB.
MAX_BYTES = 20 * 2**20
#: Lines of a JSON Lines file: 43 items × 6 arms × 77 replicates fit.
MAX_LINES = 20_000
#: Characters of one line; the contract's answers are short (arm D's whole text is 7,349).
MAX_LINE_CHARS = 10_000
#: Levels of ``[`` and ``{`` in one value (the contracts need 2, the world file 3).
MAX_DEPTH = 10
#: Malformed lines a message lists before "(and N more)".
MAX_REPORTED = 20


class InputError(ValueError):
    """A refused input. ``problems`` lists ``(line, reason)`` pairs (``line`` is ``None``
    for the whole file); ``source`` names the file. ``str()`` is one line."""

    def __init__(self, problems: Iterable[tuple[int | None, str]], *, source: str = "input"):
        self.problems = tuple(problems)
        self.source = source
        super().__init__(self.summary())

    def summary(self, limit: int = MAX_REPORTED) -> str:
        """One line: the file, how many lines are malformed and the first ``limit`` of them
        (or the whole file's problem)."""
        whole = [m for n, m in self.problems if n is None]
        if whole:
            return f"{self.source}: {whole[0]}"
        lines = [(n, m) for n, m in self.problems if n is not None]
        shown = "; ".join(f"line {n}{' ' if m.startswith('is ') else ': '}{m}"
                          for n, m in lines[:limit])
        more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
        return f"{self.source}: {len(lines)} malformed line(s): {shown}{more}"


def read_bytes(source, *, name: str | None = None, max_bytes: int = MAX_BYTES
               ) -> tuple[bytes, str]:
    """``(data, name)`` of ``source`` (a path or bytes), refusing more than ``max_bytes``
    before reading them (a file's size is asked first, then at most ``max_bytes + 1`` bytes
    are read)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), name or "upload"
    else:
        p = Path(source)
        name = name or str(p)
        try:
            size = os.stat(p).st_size
            if size > max_bytes:
                raise InputError([(None, f"{size:,} bytes, more than the {max_bytes:,} "
                                         "allowed")], source=name)
            with open(p, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputError([(None, f"cannot read it ({exc.strerror or exc})")],
                             source=name) from None
    if len(data) > max_bytes:
        raise InputError([(None, f"{len(data):,} bytes, more than the {max_bytes:,} allowed")],
                         source=name)
    return data, name


def split_lines(data: bytes, *, name: str, max_lines: int | None = MAX_LINES
                ) -> tuple[list[str | None], list[tuple[int, str]]]:
    """``(lines, bad)``: the lines of ``data`` decoded as UTF-8 (a leading byte-order mark
    dropped; ``None`` where a line is not UTF-8) and ``(line, reason)`` of each line that is
    not. Refuses more than ``max_lines`` lines, and a file with no non-blank line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    if max_lines is not None and len(raw) > max_lines:
        raise InputError([(None, f"{len(raw):,} lines, more than the {max_lines:,} allowed")],
                         source=name)
    lines: list[str | None] = []
    bad = []
    for n, b in enumerate(raw, start=1):
        try:
            lines.append(b.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as exc:
            lines.append(None)
            bad.append((n, f"is not UTF-8 text (byte 0x{b[exc.start]:02x} at column "
                           f"{exc.start + 1})"))
    if not bad and not any(line.strip() for line in lines):
        raise InputError([(None, "the file is empty" + (" (only blank lines)" if lines
                                                        else ""))], source=name)
    return lines, bad


def _depth_exceeded(text: str, limit: int) -> int | None:
    """The character offset where ``text`` nests deeper than ``limit``, or ``None``.

    Brackets inside strings do not count. One vectorised pass over the UTF-8 bytes (the
    brackets, quotes and backslashes are ASCII, never part of a multi-byte character; no
    regular expression, no recursion): a quote is escaped when an odd run of backslashes
    precedes it; a bracket is inside a string when an odd number of unescaped quotes precede
    it.
    """
    if text.count("[") + text.count("{") <= limit:
        return None
    raw = text.encode("utf-8")
    codes = np.frombuffer(raw, dtype=np.uint8)
    slash = codes == ord("\\")
    count = np.cumsum(slash, dtype=np.int32)
    runs = count - np.maximum.accumulate(np.where(slash, 0, count))  # backslashes ending here
    quote = codes == ord('"')
    quote[1:] &= runs[:-1] % 2 == 0
    outside = np.cumsum(quote, dtype=np.int32) % 2 == 0
    step = ((codes == ord("[")) | (codes == ord("{"))).astype(np.int8)
    step -= ((codes == ord("]")) | (codes == ord("}"))).astype(np.int8)
    step[~outside] = 0
    over = np.flatnonzero(np.cumsum(step, dtype=np.int32) > limit)
    return len(raw[:int(over[0])].decode("utf-8")) if over.size else None


def _strict_pairs(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise ValueError(f"key {json.dumps(k)[:40]} twice")
        seen.add(k)
    return dict(pairs)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _loads(text: str):
    """Strict JSON: no NaN or Infinity, no key twice (``ValueError`` with the reason)."""
    try:
        return json.loads(text, object_pairs_hook=_strict_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, column {exc.colno})") from None
    except RecursionError:  # below the depth limit but deeper than Python allows
        raise ValueError("nested too deeply") from None


def _value_of_line(text: str, *, max_chars: int, max_depth: int):
    at = _depth_exceeded(text, max_depth)
    if at is not None:
        raise ValueError(f"nested too deeply (more than {max_depth} levels of brackets, "
                         f"column {at + 1})")
    if len(text) > max_chars:
        raise ValueError(f"longer than {max_chars:,} characters ({len(text):,})")
    return _loads(text)


def json_lines(source, *, check: Callable[[object], str | None],
               key: Callable[[dict], tuple] | None = None,
               describe: Callable[[tuple], str] = str, name: str | None = None,
               max_bytes: int = MAX_BYTES, max_lines: int = MAX_LINES,
               max_chars: int = MAX_LINE_CHARS, max_depth: int = MAX_DEPTH,
               error: type[InputError] = InputError) -> list[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines input.

    Parameters
    ----------
    source : path, bytes or list of str
        A file, its bytes (an upload) or its lines already decoded.
    check : callable
        The contract: ``None`` for a good object, else a one-line reason.
    key, describe : callable, optional
        The identity of a line (``key(obj)``) that must not repeat, and its words in the
        message (``describe(key)``).
    error : type
        The :class:`InputError` subclass to raise.

    Raises
    ------
    InputError
        For the whole file (size, lines, text, empty) or listing every malformed line.
    """
    if isinstance(source, list):
        name = name or "input"
        if len(source) > max_lines:
            raise error([(None, f"{len(source):,} lines, more than the {max_lines:,} "
                                "allowed")], source=name)
        lines = source
        if not any(str(line).strip() for line in lines):
            raise error([(None, "the file is empty")], source=name)
        undecoded = {}
    else:
        try:
            data, name = read_bytes(source, name=name, max_bytes=max_bytes)
            lines, bad = split_lines(data, name=name, max_lines=max_lines)
        except InputError as exc:
            raise error(exc.problems, source=exc.source) from None
        undecoded = dict(bad)
    out, problems, seen = [], [], {}
    for n, raw in enumerate(lines, start=1):
        if raw is None:
            problems.append((n, undecoded[n]))
            continue
        text = raw.strip()
        if not text:
            continue
        try:
            obj = _value_of_line(text, max_chars=max_chars, max_depth=max_depth)
        except ValueError as exc:
            problems.append((n, str(exc)))
            continue
        msg = check(obj)
        if msg:
            problems.append((n, msg))
            continue
        if key is not None:
            k = key(obj)
            if k in seen:
                problems.append((n, f"repeats {describe(k)} (first on line {seen[k]})"))
                continue
            seen[k] = n
        out.append((n, obj))
    if problems:
        raise error(problems, source=name)
    return out


def json_document(source, *, name: str | None = None, max_bytes: int = MAX_BYTES,
                  max_depth: int = MAX_DEPTH, error: type[InputError] = InputError):
    """One JSON value spread over any number of lines (a world file), with the size, text,
    emptiness and depth limits of :func:`json_lines` (no line-length limit); a message names
    the line."""
    try:
        data, name = read_bytes(source, name=name, max_bytes=max_bytes)
        lines, bad = split_lines(data, name=name, max_lines=None)
    except InputError as exc:
        raise error(exc.problems, source=exc.source) from None
    if bad:
        raise error(bad, source=name)
    text = "\n".join(lines)
    at = _depth_exceeded(text, max_depth)
    if at is not None:
        line = text.count("\n", 0, at) + 1
        raise error([(None, f"line {line}: nested too deeply (more than {max_depth} levels "
                            "of brackets)")], source=name)
    try:
        return json.loads(text, object_pairs_hook=_strict_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise error([(None, f"not JSON ({exc.msg}, line {exc.lineno})")], source=name) from None
    except ValueError as exc:
        raise error([(None, f"not strict JSON ({exc})")], source=name) from None
    except RecursionError:
        raise error([(None, "nested too deeply")], source=name) from None


def dump_lines(rows) -> bytes:
    """``rows`` as a JSON Lines file (strict JSON, ASCII), what :func:`json_lines` reads."""
    return "".join(json.dumps(r, allow_nan=False) + "\n" for r in rows).encode("ascii")
