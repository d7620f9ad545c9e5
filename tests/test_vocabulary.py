"""A student's vocabulary (issue 22 point 6): what every page shows is words, or defined there.

Every page's default view (the home page and every record of ``core.pages_registry.PAGES``,
read when the tests are collected, so a new page is covered without touching this file) is
run through AppTest the way the server opens it (the home page first, then the page), and
everything it shows is collected in page order (main area, then sidebar): titles, headers,
markdown, captions, text, alerts, metric labels, values and deltas, expander and tab labels,
widget labels and placeholders — the element's own words — and, as *data*, widget options
and the text cells of a table's shown columns (a table's own words are its shown column
titles, ``column_config`` labels first). Hover texts (``help``, a table's column help) count
only as definitions: a student sees them only on hover. Figures and the prose panels (the
data set's sentences, drawn as HTML) are not read.

**Tokens.** An acronym (two or more capitals: ``DSNBF``, ``RMS-CE``, ``F0`` of F0.5), a
symbol the lessons use (``μ*``, ``μ̂``, ``Δ_Y``, ``π``, ``θ``, ``β``, ``σ``, ``⊥``), a
subscripted name (``T_omit``), or a short form the issue lists that has no capitals (``q*``,
``native``, ``pp``, ``MajClass``). Not tokens: names (persona ids, the NQ-open systems), a
token inside a chunk with a digit that no glossary term lists (a record id ``S02``, a gate
``B14``, a postcode, a question id ``C3``), and among *data* every token that is neither a
glossary alias nor a method's short name (a flight code or a claim in capitals is the data
set's, not the app's words).

**The rule.** A page may show a token only if it is (a) an ordinary word, file format or
proper name (:data:`ORDINARY`), or (b) listed by a glossary term (``core.glossary.find``)
**and defined where it first appears**: the first element of the page that shows it

* carries a hover text made by ``core.glossary.tip`` for that term (recognised by the
  pointer ``tip`` ends with, ``(Glossary: <term>.)``; for a table, one of its column
  tooltips — ``pages._shared.ui.glossary_help`` adds them), or
* defines it inline at that first occurrence: ``T (plain words)``, ``plain words (T)``,
  ``T — plain words``, ``T = plain words`` or ``T: plain words``, "plain words" being at
  least two words of letters (a key of short names such as ``pages._shared.ui.method_key``
  shown before the first widget that uses them does this), or
* is on a page that shows the term's whole plain definition (the Glossary page, for every
  term).

Besides tokens a page may not show code-style text (a ``snake_case`` value such as an
answer's stored label ``within_20min_more_than_50pct`` — pages show
``core.testbed.words.label_words`` — or an operator such as ``+=`` or ``==``), may not call a
document "Seed 000" or "the seed" (the stories are named by what they are about; "seed" on a
page is a random seed), and its first mention of "paper" must say which (one of
``core.glossary.PAPERS`` by name, or a tooltip pointing to its glossary entry), so later "vs
the paper" deltas point to a document the home page and the glossary cite.

A failure names the page, the token and the text it was found in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Dataframe

from core.calibration.nq301 import SYSTEM_FILES
from core.glossary import GLOSSARY, PAPERS, find
from core.pages_registry import HOME_SCRIPT, PAGES
from core.resolvers.registry import method_short
from core.testbed.questions import QUESTIONS
from core.testbed.words import LABEL_WORDS, label_words

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [HOME_SCRIPT, *(p.path for p in PAGES)]

#: Acronyms, the lessons' symbols, subscripted names and the lower-case short forms.
TOKEN = re.compile(
    r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?"        # DSNBF, RMS-CE, SSB-G, F0 (of F0.5)
    r"|[μ⊥Δβπθγσα]\u0302?[*_A-Za-z]*"                   # μ*, μ̂, Δ_Y, θ_calibrated, ⊥
    r"|T_[a-z]+"                                         # T_omit, T_fp
    r"|q\*|MajClass|(?<![\w-])(?:native|pp)(?![\w-]))"  # short forms without capitals
)
#: Not jargon of this project: file formats, the web, licences, everyday abbreviations,
#: system and model names, the app.
ORDINARY = {"URL", "CSV", "HTML", "PNG", "JSON", "QA", "GPT", "BERT", "DPR", "BEM", "ARBITER",
            "A3", "API", "ID", "OK", "MB", "PDF", "CDN", "MIT", "README", "PVLDB", "TV", "HR",
            "GP", "IBAN", "UK", "US", "AM", "PM"}
#: Tokens that are vocabulary wherever they appear, even among a table's cells or a widget's
#: options: every glossary alias and every method's short name.
VOCABULARY = ({a for t in GLOSSARY for a in t.aliases} | set(method_short().values())
              | {"q*", "MajClass", "native", "pp"})
#: Names, not code: persona ids (``bench_shift_009_drew_adams``) and the NQ-open systems.
NAMES = re.compile(r"\bbench_[a-z]+_\d+_[a-z]+_[a-z]+\b|"
                   + "|".join(re.escape(name) for name, _ in SYSTEM_FILES))
#: Code-style text: a snake_case word, or an operator a student does not read.
CODE = re.compile(r"(?<![\w/.@-])(?=\w*[a-z])[a-z0-9]+(?:_[a-z0-9]+)+\b|\+=|-=|==|!=")
#: A story called by its document number, or a document called "the seed".
NUMBERED_STORY = re.compile(r"(?i)\bseed[ -]?00[0-9]\b|\bthe seed'?s?\b(?! \d)|\(seed\)")
#: Markup a student does not see: HTML tags, colours, markdown escapes, invisible characters.
MARKUP = re.compile(r"<[^>]*>|#[0-9A-Fa-f]{6}\b|&nbsp;")
INVISIBLE = str.maketrans("", "", "\\\u2060\u200b")
WORDS = r"(?:[^\W\d_]+[\s,'’-]+)+[^\W\d_]{2,}"  # at least two words of letters
PAPER = re.compile(r"(?i)\bpapers?\b")


@dataclass(frozen=True)
class Shown:
    """One element: the words it shows itself (``prose``), the data it lists (a table's
    cells, a widget's options) and its hover text."""

    kind: str
    prose: str
    data: str = ""
    help: str = ""

    @property
    def text(self) -> str:
        return f"{self.prose} ‖ {self.data}" if self.data else self.prose


def _clean(text: object) -> str:
    return MARKUP.sub(" ", str(text)).translate(INVISIBLE)


def _table(node: Dataframe) -> Shown:
    frame = node.value
    config = json.loads(node.proto.columns or "{}")
    order = list(node.proto.column_order) or [str(c) for c in frame.columns]
    names, cells, helps = [], [], []
    for col in order:
        cfg = config.get(col, {})
        if col not in frame.columns or cfg.get("hidden"):
            continue
        names.append(cfg.get("label") or col)
        helps.append(cfg.get("help", ""))
        cells += [v for v in frame[col].dropna().unique()[:400] if isinstance(v, str)]
    if not config.get("_index", {}).get("hidden"):
        cells += [v for v in frame.index[:400] if isinstance(v, str)]
    return Shown("table", _clean(" | ".join(names)), _clean(" | ".join(cells)), " ".join(helps))


def _fields(proto) -> set[str]:
    return {f.name for f in proto.DESCRIPTOR.fields} if hasattr(proto, "DESCRIPTOR") else set()


def shown(node) -> list[Shown]:
    """What ``node`` (an AppTest tree, a block or an element) shows, in page order."""
    if isinstance(node, Block):
        label = getattr(node, "label", None)
        out = [Shown(node.type, _clean(label))] if isinstance(label, str) and label else []
        for k in sorted(node.children):
            out += shown(node.children[k])
        return out
    if isinstance(node, Dataframe):
        return [_table(node)]
    if node.type in ("html", "plotly_chart"):  # the prose panels (the data's sentences), figures
        return []
    proto, fields = node.proto, _fields(node.proto)
    prose = [getattr(proto, f) for f in ("label", "body", "placeholder", "delta")
             if f in fields and isinstance(getattr(proto, f), str)]
    data = [o if isinstance(o, str) else getattr(o, "content", "")
            for o in (proto.options if "options" in fields else ())]
    prose, data = [t for t in prose if t], [t for t in data if t]
    if not prose and not data:
        return []
    return [Shown(node.type, _clean(" ‖ ".join(prose)), _clean(" ‖ ".join(data)),
                  str(proto.help) if "help" in fields else "")]


def _term(token: str):
    term = find(token)
    if term is None and "_" in token:
        term = find(token.split("_")[0])  # θ_calibrated → θ (Δ_Y is an alias itself)
    return term


def tokens(text: str, *, data: bool = False) -> list[str]:
    """The tokens of ``text`` a student must be able to read, in order.

    Names are skipped (persona ids, NQ-open systems), and so is a token in a chunk with a
    digit that is no vocabulary (a record id ``S02``, a gate ``B14``, a postcode, a question
    id ``C3``). Among data (``data=True``) only :data:`VOCABULARY` counts: a flight code or a
    claim in capitals is the data set's, not the app's words.
    """
    out = []
    for chunk in NAMES.sub(" ", text).split():
        for token in (t.rstrip("_") for t in TOKEN.findall(chunk)):
            vocabulary = token in VOCABULARY or _term(token) is not None
            if (data or re.search(r"\d", chunk)) and not vocabulary:
                continue
            out.append(token)
    return out


def _inline(token: str, text: str) -> bool:
    """``text`` defines ``token`` at its first occurrence: ``T (words)``, ``words (T)``,
    ``T — words``, ``T = words`` or ``T: words``."""
    at = text.find(token)
    if at < 0:
        return False
    # what is glued to the token belongs to it: BCF(4p), DSNBF+SKIP, F0.5, NQ-open
    after = re.sub(r"^(?:[+.\w-]|\(\w+\))*", "", text[at + len(token):])
    if re.match(rf"\s*(?:\((?=[^()]*{WORDS})[^()]*\)|[—=:]\s*{WORDS})", after):
        return True
    return bool(re.search(rf"{WORDS}\s*\($", text[:at]) and after.startswith(")"))


def _pointer(term) -> str:
    return f"(Glossary: {term.name}.)"


def problems(items: list[Shown]) -> list[str]:
    """Every token shown undefined, and every code-style text, as readable messages."""
    out: list[str] = []
    page_text = " ".join(s.text for s in items)
    seen: set[str] = set()
    papers = [f.name for f in GLOSSARY if f.source in {p.citation for p in PAPERS.values()}]
    named = False
    for s in items:
        where = f"in {s.kind} {s.text[:100]!r}"
        for token in tokens(s.prose) + tokens(s.data, data=True):
            if token in seen or token in ORDINARY:
                continue
            seen.add(token)
            term = _term(token)
            if term is None:
                out.append(f"{token!r} (no glossary term lists it) {where}")
            elif not (_pointer(term) in s.help or _inline(token, s.text)
                      or term.plain in page_text):
                out.append(f"{token!r} undefined where it first appears, {where}")
        if not named and PAPER.search(s.prose):
            named = (any(p.name.lower() in s.prose.lower() for p in PAPERS.values())
                     or any(f"(Glossary: {name}.)" in s.help for name in papers))
            if not named:
                out.append(f"'paper' first mentioned without naming which, {where}")
                named = True
        for pattern, what in ((CODE, "code-style text"), (NUMBERED_STORY, "a numbered story")):
            m = pattern.search(NAMES.sub(" ", s.text))
            if m:
                out.append(f"{what} {m.group(0)!r} {where}")
    return out


def open_page(script: str) -> AppTest:
    """The page opened the way the server does: the home page first, then the page."""
    at = AppTest.from_file(str(ROOT / HOME_SCRIPT), default_timeout=120).run()
    return at if script == HOME_SCRIPT else at.switch_page(script).run()


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_page_shows_words_or_defines_them(app_env, script):
    at = open_page(script)
    assert not at.exception, at.exception[0].value if at.exception else ""
    items = shown(at._tree)
    assert len(items) > 3, f"{script} showed almost nothing"
    found = problems(items)
    assert not found, f"{script} shows " + "; ".join(found)


# ------------------------------------------------------------------ the rule can fail
@pytest.mark.parametrize("items, expected", [
    ([Shown("caption", "Trust XYZQ here.")], "'XYZQ' (no glossary term lists it)"),
    ([Shown("caption", "DSNBF wins.")], "'DSNBF' undefined where it first appears"),
    ([Shown("metric", "μ̂ ‖ 93 %")], "'μ̂' undefined"),
    ([Shown("caption", "θ = 0.3"), Shown("slider", "θ", help="(Glossary: Selective "
                                                              "answering.)")], "'θ' undefined"),
    ([Shown("table", "method", "BCF(4p) | ABF")], "'BCF' undefined"),
    ([Shown("caption", "Answer: within_20min_more_than_50pct")], "code-style text"),
    ([Shown("caption", "skip (FN += 1)")], "code-style text '+='"),
    ([Shown("markdown", "Seed 000 · Multi-source memory benchmark")], "a numbered story"),
    ([Shown("caption", "Beside the seed's published numbers")], "a numbered story"),
    ([Shown("metric", "DSNBF ‖ 80 % ‖ -2.2 points vs paper", help="(Glossary: Naive Bayes "
                                                                   "fusion.)")],
     "'paper' first mentioned without naming which"),
])
def test_the_rule_fails_on_what_a_student_cannot_read(items, expected):
    assert any(expected in p for p in problems(items)), problems(items)


@pytest.mark.parametrize("items", [
    [Shown("metric", "DSNBF ‖ 80 %", help="Words. (Glossary: Naive Bayes fusion.)"),
     Shown("caption", "DSNBF again, and NBF too.", help="(Glossary: Naive Bayes fusion.)")],
    [Shown("caption", "The direct readout μ* (the atoms read from the records).")],
    [Shown("caption", "the share of true answers (π) moves."), Shown("slider", "π")],
    [Shown("markdown", "- SSB — Single Source Best: trusts one source.")],
    [Shown("caption", "Persona bench_shift_009_drew_adams, question C3, record S02.")],
    [Shown("table", "item | claim", "AA-1007-MIA-PHX | TERMINAL NOT PROVIDED")],
    [Shown("caption", "Compared with the memory-benchmark paper: −2.2 points vs paper.")],
    [Shown("caption", "seed 20260321 · the seed 1 of 4")],
])
def test_the_rule_accepts_words_definitions_and_names(items):
    assert problems(items) == []


_PAGE = """
import pandas as pd
import streamlit as st
from core.glossary import tip

st.caption("XYZQ is new here.")
st.metric("DSNBF", "80 %", help=tip("DSNBF"))
st.selectbox("Answer", ["within_20min_more_than_50pct"])
st.dataframe(pd.DataFrame({"m": ["BCF(4p)"], "n": ["ABF"]}), column_config={
    "m": st.column_config.TextColumn("method", help=tip("BCF")), "n": "other"})
with st.expander("Seed 000 and its θ"):
    st.write("inside")
"""


def test_the_collector_reads_a_rendered_page_and_the_rule_fails_on_it():
    at = AppTest.from_string(_PAGE, default_timeout=30).run()
    assert not at.exception
    items = shown(at._tree)
    assert [s.kind for s in items] == ["caption", "metric", "selectbox", "table", "expander",
                                       "markdown"]
    found = " ".join(problems(items))
    assert "'XYZQ' (no glossary term lists it)" in found       # prose: every token
    assert "'DSNBF'" not in found and "'BCF'" not in found      # defined by their tooltips
    assert "'ABF' undefined" in found                           # a cell, its column has no tip
    assert "code-style text 'within_20min_more_than_50pct'" in found  # an option
    assert "a numbered story 'Seed 000'" in found and "'θ' undefined" in found  # a label


# ------------------------------------------------------------------ answers in words
def test_every_answer_of_every_question_has_distinct_words():
    for q in QUESTIONS:
        words = [label_words(q.qid, lab) for lab in q.labels]
        assert len(set(words)) == len(words), q.qid
        assert not any("_" in w for w in words), q.qid
    assert set(LABEL_WORDS) == {(q.qid, lab) for q in QUESTIONS for lab in q.labels}
    assert label_words("C3", None) == "no answer"
    with pytest.raises(ValueError, match="not an answer of C3"):
        label_words("C3", "40_to_69")


def test_the_papers_are_cited_in_the_glossary_and_on_the_home_page(app_env):
    at = open_page(HOME_SCRIPT)
    text = " ".join(s.text for s in shown(at._tree))
    for paper in PAPERS.values():
        entry = find(paper.name)
        assert entry is not None and entry.source == paper.citation, paper.name
        assert paper.story in text and paper.title in text, paper.name
