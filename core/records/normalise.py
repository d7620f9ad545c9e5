"""How answers are compared in seed 002's scoring (*Personal Dimension Benchmark v1*, §7 M1).

The normalisation, applied to both the response and the reference:

1. Unicode NFKC, lower case, whitespace collapsed;
2. dates in any of ``2026-09-06``, ``6 September 2026``, ``6th Sept 2026``,
   ``September 6, 2026``, ``06/09/2026`` (day first, as in the subject's country) or
   ``6.9.2026`` become ISO ``2026-09-06``;
3. currency signs (£ $ €) dropped and thousands separators inside numbers removed
   (``3,200`` = ``3200``); a number answer (``kind == "number"``) compares as a decimal, so
   ``3200.00`` = ``3200``;
4. for the key, spaces, hyphens and the punctuation ``. , ; : ! ? ' " ( ) [ ]`` dropped, so
   ``07700 900123`` = ``07700900123`` and ``GB29NWBK…`` = ``GB29 NWBK …``; ``+`` is kept
   (blood type ``A+`` differs from ``A``).

A list answer (``kind == "list"``) is split on ``;``, ``,``, new lines and the word "and",
each part normalised, and compared as a set. Two answers match when their keys are equal —
containment is not enough ("£3,450 or £3,200" matches neither).

A policy name (M3) is matched by :func:`names_policy`: after NFKC and case folding, the
letters and digits of the policy's id in order, joined by nothing or by spaces, hyphens,
underscores or dashes, as a whole word ("CP-01", "CP01", "cp 01", "cp_01", "CP–01" and
"policy CP-01" name CP-01; "CP-011", "CP-02" and "cp-0 1x" do not).
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from decimal import Decimal, InvalidOperation

__all__ = ["answer_key", "contains_any", "names_policy", "normalise_dates", "same_answer"]

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}
_MONTHS.update({m[:3]: n for m, n in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_PATTERNS = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), ("y", "m", "d")),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MON})\.?,?\s+(\d{{4}})\b"),
     ("d", "mon", "y")),
    (re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"),
     ("mon", "d", "y")),
    (re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b"), ("d", "m", "y")),
]
_DROP = re.compile(r"[\s\-.,;:!?'\"()\[\]\u2212\u2013\u2014]")


def normalise_dates(text: str) -> str:
    """``text`` with every recognised date rewritten as ISO (invalid dates left alone)."""
    for pattern, order in _PATTERNS:
        def repl(m, order=order):
            parts = dict(zip(order, m.groups(), strict=True))
            month = _MONTHS[parts["mon"]] if "mon" in parts else int(parts["m"])
            try:
                return _dt.date(int(parts["y"]), month, int(parts["d"])).isoformat()
            except ValueError:
                return m.group(0)
        text = pattern.sub(repl, text)
    return text


def _base(text: str) -> str:
    t = unicodedata.normalize("NFKC", str(text)).lower()
    t = re.sub(r"\s+", " ", t).strip()
    t = normalise_dates(t)
    t = re.sub(r"[£$€]", "", t)
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)
    return t


def _key(text: str) -> str:
    return _DROP.sub("", _base(text))


def answer_key(answer, kind: str = "text"):
    """The comparison key of ``answer`` (a string, a tuple for lists, ``None`` for none)."""
    if answer is None:
        return None
    if kind == "list":
        parts = answer if isinstance(answer, (list, tuple)) else re.split(
            r";|,|\n|\band\b", _base(answer))
        keys = {_key(p) for p in parts}
        return tuple(sorted(k for k in keys if k))
    if isinstance(answer, (list, tuple)):
        answer = "; ".join(map(str, answer))
    if kind == "number":
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*", _base(answer).replace(" ", ""))
        if m:
            try:
                return format(Decimal(m.group(1)).normalize(), "f")
            except InvalidOperation:
                pass
    return _key(answer)


def same_answer(answer, reference, kind: str = "text") -> bool:
    """Whether ``answer`` matches ``reference`` after the normalisation above (never for a
    missing answer or reference).

    Examples
    --------
    >>> same_answer("3,200", "£3200", "number"), same_answer("6 Sept 2026", "2026-09-06")
    (True, True)
    >>> same_answer("A", "A+")
    False
    """
    if answer is None or reference is None:
        return False
    a, r = answer_key(answer, kind), answer_key(reference, kind)
    return bool(a) and a == r


def contains_any(answer, keys) -> bool:
    """Whether the key of ``answer`` contains any of ``keys`` (text keys of the values in
    the dimension): M8 counts answers for which this is false (§7)."""
    if answer is None:
        return False
    a = answer_key(answer if isinstance(answer, str) else "; ".join(answer))
    return any(k and k in a for k in keys)


_JOIN = r"[\s_\-\u2010-\u2015]*"


def names_policy(text: str | None, policy_id: str) -> bool:
    """Whether ``text`` names the policy ``policy_id`` (seed 002 §7 M3; see the module
    docstring). ``ValueError`` if ``policy_id`` has no letter or digit."""
    parts = re.findall(r"[^\W_]", unicodedata.normalize("NFKC", policy_id).casefold())
    if not parts:
        raise ValueError(f"policy_id must contain a letter or digit, got {policy_id!r}")
    if not text:
        return False
    pattern = r"(?<![^\W_])" + _JOIN.join(map(re.escape, parts)) + r"(?![^\W_])"
    return re.search(pattern, unicodedata.normalize("NFKC", text).casefold()) is not None
