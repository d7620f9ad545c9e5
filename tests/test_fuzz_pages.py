"""Hostile links: every page survives any query string and never renders the link's text.

Hypothesis draws query strings for every parameter a page reads — empty, bare, repeated,
wrong-typed, out-of-range, unknown, very long, markdown, HTML, icon and colour directives —
and each example opens the page through AppTest as the server does (home, then the page).
Every example must finish without an exception element, and no text of the link may reach
any rendered element (the notices name the setting, never the value). A separate test puts a
hostile file name through the uploader and checks that only its escaped form is rendered.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.testbed.config import TestbedConfig
from pages._shared.ui import escape_markdown

ROOT = Path(__file__).resolve().parents[1]
HOME = str(ROOT / "app.py")
#: page → every query parameter it reads.
PAGES = {
    "pages/0_Tour.py": ("stop",),
    "pages/1_Walkthrough.py": ("seed", "persona", "q"),
    "pages/2_Leaderboard.py": ("lb_b", "lb_methods", "lb_q", "lb_src", "lb_seed", "lb_learned"),
    "pages/3_Bias_lab.py": ("lab_seed", "lab_bias", "lab_dropout", "lab_w_stable",
                            "lab_w_shift", "lab_w_stated", "sw", "sw_metric", "sw_method",
                            "sw_x", "sw_y"),
    "pages/4_Selective_QA.py": ("sq_method", "theta"),
    "pages/5_Reliability.py": ("rel_data", "rel_label", "rel_bins", "rel_strategy",
                               "rel_bands", "rel_rules_scn", "rel_rules_nq", "rel_rules_res",
                               "rel_rules_up", "rel_ref", "rel_omit", "rel_fmr", "rel_disc",
                               "rel_judge"),
    "pages/6_Ranking_reversal.py": ("rr_data", "rr_prev", "rr_omit", "rr_fmr", "rr_disc",
                                    "rr_judge", "rr_nq_a", "rr_nq_b", "rr_br_method",
                                    "rr_br_ref"),
    "pages/7_Pilot_budget.py": ("pb_budget", "pb_reps", "pb_design", "pb_kind", "pb_omit",
                                "pb_fmr", "pb_disc", "pb_judge", "pb_walk", "pb_jbias", "pb_nq_a",
                                "pb_nq_b"),
    "pages/8_Glossary.py": ("gl_query",),  # no URL parameters: every one is dropped
    "pages/9_Personal_records.py": ("pr_asof", "pr_policy", "pr_arm", "pr_family", "pr_item",
                                    "pr_cond", "pr_update", "pr_apply"),
    "pages/10_Extraction.py": ("ex_persona", "ex_q", "ex_src", "ex_profile", "ex_eps", "ex_a",
                               "ex_b"),
    "pages/11_Your_data.py": ("yd_set", "yd_label", "yd_case", "yd_minutes", "yd_numeric",
                              "yd_methods", "yd_cov", "yd_pair", "yd_learned", "yd_rel"),
}
#: Each hostile value carries this marker, so a leak is easy to find.
MARK = "QZXJ"
NASTY = [
    "", " ", "-1", "0", "1e308", "-1e308", "nan", "inf", "1e-320", "3.00000001", "0x10",
    "9" * 300, "true", "None", "null", "[]", "{}", "Y", "Z", "DSNBF+SKIP", "agreement",
    f"![{MARK}](http://example.invalid/x.png)", f"[{MARK}](http://example.invalid)",
    f"<img src=x onerror=alert(1)>{MARK}", f"**{MARK}**", f":red[{MARK}]",
    f":material/warning: {MARK}", f"# {MARK}", f"$${MARK}$$", f"{MARK}\n\n---\n# big",
    f"`{MARK}`", f"{MARK}%00", "é" * 50 + MARK, f"<script>{MARK}</script>",
]
#: Live markup: a link or image target, an HTML tag (an escaped one, ``\\<img``, is inert).
LIVE = re.compile(r"(?<!\\)\]\(|(?<!\\)<(?:img|script|a )")
VALUE = st.one_of(st.sampled_from(NASTY), st.text(max_size=40).map(lambda t: t + MARK))
VALUES = st.lists(VALUE, min_size=1, max_size=3)


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory) -> Path:
    """One seed × 24 personas with cached predictions (small, so examples stay fast)."""
    path = tmp_path_factory.mktemp("fuzz") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=8))
    return path


@pytest.fixture
def fuzz_env(monkeypatch, fuzz_store):
    monkeypatch.setenv("ARBITER_DB", str(fuzz_store))
    monkeypatch.setenv("ARBITER_LAB_PERSONAS", "8")
    return fuzz_store


def rendered(at: AppTest) -> list[str]:
    """The text of every element a visitor would read."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title",
                 "header", "subheader", "text", "code", "latex", "exception"):
        out += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    for m in at.metric:
        out += [str(m.label), str(m.value), str(m.proto.body)]
    return out


def open_with(page: str, params: dict[str, list[str]]) -> AppTest:
    at = AppTest.from_file(HOME, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v if len(v) > 1 else v[0]
    at.run()
    return at.switch_page(page).run()


@pytest.mark.parametrize("page", list(PAGES))
def test_hostile_links_never_crash_a_page_or_leak_into_it(fuzz_env, page):
    keys = PAGES[page]
    params = st.dictionaries(st.sampled_from([*keys, "unknown_key", ""]), VALUES,
                             min_size=1, max_size=4)

    @settings(max_examples=6, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(params)
    def check(raw):
        at = open_with(page, raw)
        assert not at.exception, [e.value for e in at.exception]
        texts = rendered(at)
        leaked = [t for t in texts if MARK in t]
        assert not leaked, leaked
        assert not any(LIVE.search(t) for t in texts)

    check()


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize("case", ["bare", "empty", "repeated"])
def test_bare_empty_and_repeated_values_of_every_parameter(fuzz_env, page, case):
    """The cases that crashed segmented controls (``?sq_method``, ``?pb_design=``)."""
    value = {"bare": [""], "empty": [" "], "repeated": ["1", "2"]}[case]
    at = open_with(page, {k: value for k in PAGES[page]})
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("name", [f"![x](http://example.invalid/{MARK}.png).csv",
                                  f"<img src=x>{MARK}.csv", f":red[{MARK}].csv"])
def test_an_uploaded_file_name_is_shown_escaped(fuzz_env, name):
    at = open_with("pages/5_Reliability.py", {"rel_data": ["Upload"]})
    rows = "p,y\n" + "".join(f"0.{i % 9 + 1},{i % 2}\n" for i in range(40))
    at.file_uploader(key="rel_upload").set_value((name, rows.encode(), "text/csv")).run()
    assert not at.exception
    texts = rendered(at)
    shown = [t for t in texts if MARK in t]
    assert shown and all(escape_markdown(name) in t or name not in t for t in shown), shown
    assert not any(LIVE.search(t) for t in texts)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_escape_markdown_leaves_no_unescaped_markup(text):
    out = escape_markdown(text)
    assert "\n" not in out and len(out) <= 2 * 500
    i = 0
    while i < len(out):  # every special character is preceded by its backslash
        if out[i] == "\\":
            i += 2
            continue
        assert out[i] not in "\\`*_{}[]()#+-.!|<>~$:&=^%@\"'/", (text, out)
        i += 1


#: GitHub-flavoured markdown's bare-address links (mdast-util-gfm-autolink-literal), found in
#: the text *after* escapes are resolved.
_GFM_AUTOLINK = re.compile(r"(?i)(?:https?|ftp)://[-\w.]|www\.[-\w]|"
                           r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+")


@pytest.mark.parametrize("text", [
    "p was 'http://127.0.0.1:8501/x'", "see www.example.org now", "mail me@host.org",
    "HTTPS://EVIL.example/a?b=c", "ftp://x.y/z", "mailto:me@x.org", "unknown field www.a.b",
])
def test_escaped_text_leaves_no_bare_address_to_link(text):
    """Issue 20 point 2: escaped upload content still became a clickable link in st.error."""
    shown = re.sub(r"\\(.)", r"\1", escape_markdown(text))  # what markdown sees as text
    assert not _GFM_AUTOLINK.search(shown), shown
    assert shown.replace("\u2060", "") == text  # and the reader sees the same characters


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("htpsw:/.@ab-")), max_size=60))
def test_no_escaped_text_autolinks(text):
    shown = re.sub(r"\\(.)", r"\1", escape_markdown(text))
    assert not _GFM_AUTOLINK.search(shown), (text, shown)
