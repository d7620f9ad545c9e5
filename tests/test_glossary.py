"""The glossary (``core.glossary``) and its page: every term a page prints has an entry.

The page-coverage test reads every string literal of the pages and the home page, collects
the acronyms (two or more capitals) and the symbols the lessons use (μ*, ⊥, Δ_Y, β, π, θ,
σ, …) and fails on any that no glossary term lists, unless it is an ordinary word of the web
or a proper name (``ORDINARY``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.glossary import GLOSSARY, SIGN_CONVENTION, Term, find, search

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*|T_[a-z]+)")
#: Not jargon of this project: file formats, the web, system and model names, the app.
ORDINARY = {"URL", "CSV", "HTML", "PNG", "JSON", "QA", "GPT", "BERT", "DPR", "BEM", "ARBITER",
            "A3", "API", "ID", "OK"}


def _tokens(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for tok in TOKEN.findall(node.value):
                out.add(tok.rstrip("_"))
    return out


def _covered(token: str) -> bool:
    if token in ORDINARY or find(token) is not None:
        return True
    base = token.split("_")[0]  # θ_calibrated → θ; Δ_Y is an alias itself
    return find(base) is not None


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_term_a_page_prints_has_an_entry(path):
    missing = sorted(t for t in _tokens(path) if not _covered(t))
    assert not missing, f"{path.name} prints {missing}, which no glossary term lists"


def test_the_coverage_check_can_fail():
    assert not _covered("XYZZY") and not _covered("ω")
    assert _covered("DSNBF") and _covered("θ_calibrated") and _covered("μ*")


def test_entries_are_complete_and_aliases_unique():
    seen: dict[str, str] = {}
    for term in GLOSSARY:
        assert term.plain.endswith((".", ")")) and len(term.plain) < 420, term.name
        for alias in term.aliases:
            assert alias not in seen, f"{alias} is listed by {seen.get(alias)} and {term.name}"
            seen[alias] = term.name
    assert len({t.name.lower() for t in GLOSSARY}) == len(GLOSSARY)


@pytest.mark.parametrize("kwargs", [dict(name="", plain="x.", source="s"),
                                    dict(name="n", plain=" ", source="s"),
                                    dict(name="n", plain="x.", source="")])
def test_a_term_needs_a_name_a_definition_and_a_source(kwargs):
    with pytest.raises(ValueError, match="needs a name, a definition and a source"):
        Term(**kwargs)


@pytest.mark.parametrize("query, expected", [
    ("DSNBF", "Naive Bayes fusion"), ("dsnbf", "Naive Bayes fusion"),
    ("CORP", "Reliability diagram"),
    ("β", "TriSource-Restore"), ("brier score", "Brier score"), ("⊥", "No atom"),
])
def test_find_and_search(query, expected):
    assert expected in [t.name for t in search(query)]
    assert find(expected).name == expected


@pytest.mark.parametrize("query", ["", "   ", "(", "[a-z]+", "*" * 500, "<script>"])
def test_search_takes_any_text_literally(query):
    found = search(query)
    assert isinstance(found, tuple)
    if not query.strip():
        assert found == GLOSSARY


def test_the_sign_conventions_match_the_code():
    """Both forms the text names are the ones core computes (checked on a closed form)."""
    from core.calibration.label_source import crossover_prevalence

    assert "R(A) − R(B): negative means rule A is better" in SIGN_CONVENTION
    assert "Δ_Y = R_Y(EG) − R_Y(native)" in SIGN_CONVENTION and "Δ_Z" in SIGN_CONVENTION
    # R(A) − R(B) = (a − b)(a + b − 2π) for constant rules a, b: crossover at (a + b) / 2
    assert crossover_prevalence(0.2, 0.6) == pytest.approx(0.4)


def test_the_glossary_page_lists_and_filters_without_rendering_the_query():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "8_Glossary.py"), default_timeout=60).run()
    assert not at.exception
    headings = [m.value for m in at.markdown if m.value.startswith("**")]
    assert len(headings) == len(GLOSSARY)
    assert at.caption[1].value.startswith(f"{len(GLOSSARY)} of {len(GLOSSARY)} terms")
    at.text_input(key="gl_query").set_value("pilot").run()
    shown = [m.value for m in at.markdown if m.value.startswith("**")]
    assert 0 < len(shown) == len(search("pilot")) < len(GLOSSARY)
    hostile = "![x](http://e.invalid/a.png) **b** <b>c</b>"
    at.text_input(key="gl_query").set_value(hostile).run()
    assert not at.exception
    everything = " ".join(e.value for e in (*at.markdown, *at.caption, *at.info))
    assert "e.invalid" not in everything and "<b>" not in everything
    assert "0 of" in at.caption[1].value
