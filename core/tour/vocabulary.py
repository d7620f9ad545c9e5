"""The words a stop needs: every glossary term whose short form or symbol the stop shows.

Issue 22 point 6: every abbreviation and symbol on a page is replaced by words or defined where
it appears. A stop's texts quote resolvers (DSNBF, ACCU + DEPEN) and symbols (μ*, Δ) that its
data and its document use, so the Tour page and the hand-out put a "words at this stop" list
beside each stop, built here from :data:`core.glossary.GLOSSARY`.

Only short forms and symbols count (an alias with a capital letter or a character outside
ASCII); an ordinary word that is also an alias ("render") does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.glossary import GLOSSARY, Term

from .model import Stop, StopView

__all__ = ["stop_terms", "terms_in"]


def _pattern(alias: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(alias)}(?![A-Za-z])")


def _is_short_form(alias: str) -> bool:
    return any(c.isupper() for c in alias) or any(ord(c) > 127 for c in alias)


_CAPITALS = re.compile(r"[A-Z0-9][A-Z0-9 +.\-]*")


def _short_forms(term: Term) -> list[str]:
    """The term's short forms and symbols, and its name when the name is one (ACCU)."""
    forms = [a for a in term.aliases if _is_short_form(a)]
    if _CAPITALS.fullmatch(term.name) and any(c.isalpha() for c in term.name):
        forms.append(term.name)
    return forms


def terms_in(texts: Iterable[str]) -> tuple[tuple[str, Term], ...]:
    """``(alias, term)`` for every glossary term a short form of which occurs in ``texts``,
    in order of first occurrence (one entry per term: the alias met first); then the terms
    whose short forms those terms' own definitions use, so each definition reads on its own.
    """
    joined = "\n".join(str(t) for t in texts)
    found: dict[str, tuple[int, str, Term]] = {}
    offset, pending = 0, joined
    while pending:
        new: dict[str, tuple[int, str, Term]] = {}
        for term in GLOSSARY:
            if term.name in found:
                continue
            for alias in _short_forms(term):
                m = _pattern(alias).search(pending)
                if m and (term.name not in new or offset + m.start() < new[term.name][0]):
                    new[term.name] = (offset + m.start(), alias, term)
        found |= new
        offset += len(pending) + 1
        pending = "\n".join(t.plain for _, _, t in new.values())
    return tuple((alias, term) for _, alias, term in sorted(found.values(),
                                                             key=lambda f: (f[0], f[1])))


def _view_texts(view: StopView) -> list[str]:
    out = [view.answer, view.reason, view.note]
    for pairs in (view.example, view.settings, view.evidence):
        out += [f"{k} {v}" for k, v in pairs]
    if view.chart is not None:
        c = view.chart
        out += [c.title, c.caption, c.x_title, c.y_title, c.marker_label]
        for col in ("who", "answer", "series", "group", "row", "col"):
            if col in c.data.columns:
                out += [str(v) for v in c.data[col].dropna().unique()[:200]]
    return out


def stop_terms(stop: Stop, view: StopView) -> tuple[tuple[str, Term], ...]:
    """The glossary terms the stop ``stop`` shows with its ``view`` (see :func:`terms_in`)."""
    t = stop.teacher
    return terms_in([stop.title, stop.section, stop.failure, stop.question, stop.remedy,
                     stop.control, stop.rule, t.ask, t.wrong_answer, t.follow_up,
                     *_view_texts(view)])
