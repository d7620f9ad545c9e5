"""The page registry (``core.pages_registry``): one record per page file, drawn by the home page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.pages_registry import PAGES, Page, page

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "pages").glob("[0-9]*_*.py"), key=lambda p: int(p.name.split("_")[0]))


def test_every_page_file_has_one_record_in_menu_order():
    assert [p.path for p in PAGES] == [f"pages/{f.name}" for f in FILES]
    for p in PAGES:
        assert (ROOT / p.path).is_file()


@pytest.mark.parametrize("field", ["path", "title", "icon", "teaches"])
def test_fields_are_unique(field):
    values = [getattr(p, field) for p in PAGES]
    assert len(values) == len(set(values))


def test_the_title_is_the_file_name_streamlit_shows():
    for p in PAGES:
        stem = re.sub(r"^\d+_", "", Path(p.path).stem).replace("_", " ")
        assert p.title == stem, p.path


@pytest.mark.parametrize("kwargs, match", [
    (dict(path="app.py"), "pages/<n>_<Title>.py"),
    (dict(icon="leaderboard"), ":material/ icon"),
    (dict(teaches=""), "what it teaches"),
])
def test_a_bad_record_raises(kwargs, match):
    base = dict(path="pages/9_X.py", title="X", icon=":material/x:", teaches="t.")
    with pytest.raises(ValueError, match=re.escape(match)):
        Page(**{**base, **kwargs})


def test_page_finds_a_record_or_names_the_known_ones():
    assert page("pages/3_Bias_lab.py").title == "Bias lab"
    with pytest.raises(ValueError, match="pages/1_Walkthrough.py"):
        page("pages/0_Nope.py")


def test_the_home_page_draws_one_card_per_record(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    cards = [link for link in at.get("page_link") if link.proto.label.startswith("**")]
    assert [c.proto.label for c in cards] == [f"**{p.title}**" for p in PAGES]
    text = " ".join(m.value for m in at.markdown)
    for p in PAGES:
        assert p.teaches in text
