"""The glossary (``core.glossary``) and its page: every term a page prints has an entry.

The page-coverage test reads every string literal of the pages and the home page, collects
the acronyms (two or more capitals) and the symbols the lessons use (μ*, ⊥, Δ_Y, β, π, θ,
σ, …) and fails on any that no glossary term lists, unless it is an ordinary word of the web
or a proper name (``ORDINARY``). ``TOKEN`` and ``ORDINARY`` are the rendered vocabulary
test's (``tests/test_vocabulary.py``), which supersedes this check for what each page's
default view shows (and also asks that a token be *defined where it first appears*); this
literal scan stays as the cheap check of the text a page prints only after a click.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from core.glossary import GLOSSARY, SIGN_CONVENTION, Term, find, search
from tests.test_vocabulary import ORDINARY, TOKEN

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]


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


def _tip_names(path: Path) -> set[str]:
    """The literal first arguments of ``tip(...)`` calls in a script."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tip" and node.args
                and isinstance(node.args[0], ast.Constant)):
            out.add(node.args[0].value)
    return out


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_tooltip_names_a_glossary_term(path):
    unknown = sorted(n for n in _tip_names(path) if find(n) is None)
    assert not unknown, f"{path.name} asks tip() for {unknown}, which no term lists"


def test_tip_gives_the_plain_words_and_refuses_unknown_terms():
    from core.glossary import tip

    text = tip("π", "Move it across the crossover.")
    assert text.startswith(find("π").plain) and "Move it across the crossover." in text
    assert text.endswith(f"(Glossary: {find('π').name}.)")
    with pytest.raises(KeyError, match="no glossary entry for 'no such term'"):
        tip("no such term")


def test_the_coverage_check_can_fail():
    assert not _covered("XYZZY") and not _covered("ω")
    assert _covered("DSNBF") and _covered("θ_calibrated") and _covered("μ*")
    assert _covered("native") and _covered("pp") and _covered("MajClass")


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


def test_the_sign_convention_matches_the_code():
    """The one convention the text states is the one core computes (closed form: two constant
    rules a, b give Δ = R(b) − R(a) = (b − a)(a + b − 2π), zero at (a + b)/2)."""
    from core.calibration.label_source import brier_gap_constant, crossover_prevalence
    from core.calibration.reversal_view import reversal_view

    assert "Δ = R(B) − R(A)" in SIGN_CONVENTION and "Above 0, rule A is better" in SIGN_CONVENTION
    assert "Δ = R(EG) − R(native)" in SIGN_CONVENTION
    assert crossover_prevalence(0.2, 0.6) == pytest.approx(0.4)
    n = 10
    y = np.r_[np.ones(7), np.zeros(3)]
    v = reversal_view(np.full(n, 0.6), np.full(n, 0.2), y, y, names=("A", "B"), unit="x")
    assert v.gap_y == pytest.approx(brier_gap_constant(0.2, 0.6, 0.7))
    assert v.gap_y > 0 and v.pick(v.gap_y) == "A"  # π = .7 > .4: the higher mean A wins


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
