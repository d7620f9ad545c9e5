"""The one upload path of the pages (``pages._shared.uploads``): safe names, and the last good
file kept when a new one is refused (exercised through AppTest on a minimal script)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from pages._shared.uploads import safe_name


@pytest.mark.parametrize("raw, expected", [
    ("good.csv", "good.csv"),
    ("../../etc/passwd", "passwd"),
    ("C:/Users/x/my file (1).csv", "my_file_1_.csv"),
    ("<script>.csv", "script_.csv"),
    ("....", "fallback"),
    ("", "fallback"),
    ("a" * 200 + ".csv", "a" * 80),
])
def test_safe_name(raw, expected):
    assert safe_name(raw, default="fallback") == expected


SCRIPT = '''
import streamlit as st
from pages._shared.uploads import keep_last_good

def load(digest, name, data):
    cache = st.session_state.setdefault("_cache", {})
    if data:
        if not data.startswith(b"ok"):
            raise ValueError(f"{name}: does not start with ok")
        cache[digest] = data.decode()
    if digest not in cache:
        raise ValueError("evicted")
    return cache[digest]

got = keep_last_good(st.session_state.get("file"), key="u", load=load, default="x.txt",
                     kept_note=" Still using {name}.", expired_note=" Expired.")
st.write("none" if got is None else f"{got[1]}={got[0]}")
'''


class Upload:
    def __init__(self, name, data):
        self.name, self._data = name, data

    def getvalue(self):
        return self._data


def test_a_refused_file_keeps_the_last_good_one_and_is_not_parsed_again():
    at = AppTest.from_string(SCRIPT).run()
    assert at.markdown[0].value == "none"
    at.session_state["file"] = Upload("a.txt", b"ok-1")
    at.run()
    assert at.markdown[0].value == "a.txt=ok-1" and not at.error
    at.session_state["file"] = Upload("b*.txt", b"bad")
    at.run()
    assert len(at.error) == 1 and at.markdown[0].value == "a.txt=ok-1"
    assert "b_.txt: does not start with ok" in at.error[0].value.replace("\\", "")
    assert "Still using a.txt" in at.error[0].value.replace("\\", "")
    at.run()  # a later rerun: still refused, still the good file
    assert len(at.error) == 1 and at.markdown[0].value == "a.txt=ok-1"
    # an empty uploader (a real browser sends one while a file is replaced) keeps it
    at.session_state["file"] = None
    at.run()
    assert at.markdown[-1].value == "a.txt=ok-1" and not at.error
    assert "still showing the last good file, a.txt" in at.caption[0].value.replace("\\", "")
    at.button(key="u__forget").click().run()
    assert at.markdown[-1].value == "none" and not at.error and not at.caption
