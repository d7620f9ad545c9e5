"""Every page on a broken store: one plain message, no exception (issue 20 point 3).

Each kind of damage is applied to a copy of one small generated store; each page is opened as
the server opens it (home, then the page). Before the store guard validated what the pages
read, a ``config_json`` that is not JSON slipped past on nine pages, and a store with no
personas or without ``renders`` crashed the Walkthrough.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.pages_registry import PAGES
from core.store import StoreError, store_info
from core.testbed.config import TestbedConfig
from tests.app_support import plain

ROOT = Path(__file__).resolve().parents[1]
HOME = str(ROOT / "app.py")
DAMAGE = {
    "config_json": "UPDATE meta SET value = '{not json' WHERE key = 'config_json'",
    "config_list": "UPDATE meta SET value = '[1, 2]' WHERE key = 'config_json'",
    "no_personas": "DELETE FROM personas",
    "no_renders": "DROP TABLE renders",
    "no_atoms": "DROP TABLE atoms",
}
SAYS = {"config_json": "config_json that is not a JSON object",
        "config_list": "config_json that is not a JSON object",
        "no_personas": "holds no personas", "no_renders": "lacks the table(s) renders",
        "no_atoms": "lacks the table(s) atoms"}


@pytest.fixture(scope="module")
def broken_stores(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("broken")
    good = root / "good.duckdb"
    build_store(good, TestbedConfig(seeds=(20260321,), personas_per_difficulty=4))
    out = {}
    for kind, sql in DAMAGE.items():
        path = root / f"{kind}.duckdb"
        shutil.copy(good, path)
        with duckdb.connect(str(path)) as con:
            con.execute(sql)
        out[kind] = path
    return out


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_the_store_guard_names_the_damage(broken_stores, kind):
    with pytest.raises(StoreError, match=SAYS[kind].replace("(", r"\(").replace(")", r"\)")):
        store_info(broken_stores[kind])


PAGE_FILES = [None, *(p.path for p in PAGES)]  # None: the home page


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("page_file", PAGE_FILES)
def test_every_page_refuses_a_broken_store_in_one_line(monkeypatch, broken_stores, kind,
                                                       page_file):
    monkeypatch.setenv("ARBITER_DB", str(broken_stores[kind]))
    at = AppTest.from_file(HOME, default_timeout=60).run()
    if page_file is not None:
        at = at.switch_page(page_file).run()
    assert not at.exception, [e.value for e in at.exception]
    script = ROOT / (page_file or "app.py")
    if "ensure_store(" not in script.read_text(encoding="utf-8"):
        assert not at.error  # a page that reads no store (the Glossary) is unaffected
        return
    assert len(at.error) == 1
    text = plain(at.error[0].value)
    assert SAYS[kind] in text and str(broken_stores[kind].parent) not in text
