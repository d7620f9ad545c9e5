"""Issue 22 point 7, the first ten minutes: the home entry's name, the Leaderboard's key of
the short names and its method chips, the Pilot budget's rate axes, and the warm-up that
computes every page's default view before ``serve.py`` starts the server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.source_util import page_icon_and_name
from streamlit.testing.v1 import AppTest

from core.figures.calibration import budget_curves_figure, rate_axis_range
from core.pages_registry import HOME_SCRIPT, HOME_TITLE, PAGES
from core.resolvers.registry import RESOLVERS, method_short, method_words
from tests.browser_support import BROWSER_MARKS, open_page

ROOT = Path(__file__).resolve().parent.parent
LEADERBOARD = "pages/2_Leaderboard.py"


# ------------------------------------------------------------------ the home entry
def test_the_first_menu_entry_is_named_home():
    """Under the pages-directory convention the entry is named after the entry script's file
    (Streamlit resolves a link first): ``app.py`` links to ``Home.py``, named "Home"."""
    home = ROOT / HOME_SCRIPT
    assert home.is_file() and not home.is_symlink()
    assert (ROOT / "app.py").resolve() == home, "app.py must stay a link to Home.py"
    assert page_icon_and_name((ROOT / "app.py").resolve()) == ("", HOME_TITLE) == ("", "Home")


def test_the_home_page_runs_under_its_title(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Arbiter"]
    main = next(info for info in at._registered_pages.values() if info["url_pathname"] == "")
    assert main["page_name"] == HOME_TITLE and Path(main["script_path"]).name == HOME_SCRIPT
    names = [(info["page_name"], info["url_pathname"]) for info in at._registered_pages.values()]
    assert names[1:] == [(p.title, p.url_path) for p in PAGES]  # then the menu, in order


# ------------------------------------------------------------------ the Leaderboard
def test_every_method_is_spelled_out_in_words():
    words = method_words()
    for r in RESOLVERS:
        assert words[r.name].endswith(".") and len(words[r.name].split()) >= 8, r.name
        assert words[r.name].split(":")[0] != r.short, r.name  # not "SSB: …"
    assert words["ssb"].startswith("Single Source Best:")
    assert words["abf"].startswith("Abductive Bias-aware Fusion:")
    assert words["nbf"].startswith("Naive Bayes Fusion:")
    assert words["dsnbf"].startswith("Difficulty-Stratified Naive Bayes Fusion:")
    assert words["bcf"].startswith("Bias-Corrected Fusion:")
    assert "skip" in words["dsnbf_skip"]


@pytest.fixture
def leaderboard(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    return at.switch_page(LEADERBOARD).run()


def test_the_leaderboard_key_says_what_each_method_is(leaderboard):
    at = leaderboard
    assert not at.exception
    key = next(e for e in at.expander if e.label == "What the short names mean")
    text = " ".join(m.value for m in key.markdown)
    short, words = method_short(), method_words()
    shown = at.button_group(key="lb_methods").value
    assert len(shown) == len(RESOLVERS) - 1  # every method but the random guess
    for m in shown:
        assert f"{short[m]} — {words[m]}" in text
    assert "SSB — Single Source Best: for each question, trusts the one source" in text
    assert "ABF — Abductive Bias-aware Fusion" in text and "NBF — Naive Bayes Fusion" in text
    assert "DSNBF — Difficulty-Stratified Naive Bayes Fusion" in text
    everything = " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)])
    for s in ("SSB", "ABF", "NBF", "DSNBF"):
        assert f"{s} = {s}" not in everything
    heads = {m.label: m.proto.help for m in at.metric}
    assert heads["SSB"].startswith("Single Source Best:")
    assert heads["DSNBF"].startswith("Difficulty-Stratified Naive Bayes Fusion:")


def test_the_method_chips_are_wrapping_pills_that_keep_the_url(app_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lb_methods"] = ["DSNBF", "SSB"]
    at.run()
    at.switch_page(LEADERBOARD).run()
    assert not at.exception
    pills = at.button_group(key="lb_methods")
    assert sorted(pills.value) == ["dsnbf", "ssb"]
    assert len(pills.proto.options) == len(RESOLVERS)  # the ones left out show too
    assert pills.proto.wrap  # in a column Streamlit would keep one scrolling row
    key = next(e for e in at.expander if e.label == "What the short names mean")
    text = " ".join(m.value for m in key.markdown)  # before the chips: every chip, chosen or not
    assert all(f"- {o.content} — " in text for o in pills.proto.options)


# ------------------------------------------------------------------ rate axes
def _summary(**values) -> pd.DataFrame:
    budgets = (10, 20, 50, 100)
    base = {"rmse": 0.1, "mean_width": 0.5, "coverage": 0.95, "p_correct_direction": 0.9,
            "false_termination": 0.0, "escalation": 0.1}
    rows = []
    for est in ("human_only", "trisource"):
        for i, b in enumerate(budgets):
            row = {"estimator": est, "budget": b, **base}
            for col, v in values.items():
                row[col] = v[i] if isinstance(v, list | tuple) else v
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("values, expected", [
    (0.0, [0.0, 1.0]),                              # flat at 0: the whole share scale
    ([0.0, 0.02, 0.01, 0.0], [0.0, 0.022]),         # small shares: up to 1.1 × the largest
    ([0.0, 0.5, 0.95, 1.0], [0.0, 1.0]),            # 1.1 × max reaches 1: [0, 1]
    ([np.nan, np.nan, 0.1, 0.2], [0.0, 0.22]),      # missing points are ignored
    ([np.nan] * 4, [0.0, 1.0]),                      # nothing measured
])
def test_false_terminations_are_drawn_on_a_rate_axis(values, expected):
    fig = budget_curves_figure(_summary(false_termination=values), budget=50)
    assert fig.layout.annotations[4].text == "False terminations"
    assert np.allclose(fig.layout.yaxis5.range, expected)
    assert rate_axis_range(pd.Series(values, dtype=float)) == pytest.approx(expected)


def test_every_share_panel_starts_at_zero_and_never_passes_one():
    fig = budget_curves_figure(_summary(p_correct_direction=1.0, escalation=[0.9, 0.4, 0.1, 0],
                                        false_termination=0.0), budget=50)
    for axis in ("yaxis4", "yaxis5", "yaxis6"):
        lo, hi = fig.layout[axis].range
        assert lo == 0.0 and 0 < hi <= 1.0, axis
    assert fig.layout.yaxis3.range[0] >= 0  # coverage too is a share
    low = budget_curves_figure(_summary(coverage=[0.0, 0.5, 0.9, 0.95]), budget=50)
    assert low.layout.yaxis3.range[0] == 0.0
    on_edge = [t for t in fig.data if t.yaxis in ("y4", "y5", "y6")]
    assert on_edge and all(t.cliponaxis is False for t in on_edge)  # markers at 0 or 1 whole


# ------------------------------------------------------------------ the warm-up
def test_the_warm_up_opens_the_home_page_and_every_registered_page():
    from pages._shared.warmup import SCRIPTS

    scripts = [s for _, s in SCRIPTS]
    assert scripts[0] == HOME_SCRIPT
    assert scripts[1:] == [p.path for p in PAGES]
    files = sorted(f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py"))
    assert sorted(scripts[1:]) == files  # no page file is left cold


def test_serve_warms_every_page_before_it_starts_the_server(app_env, monkeypatch):
    """serve.main: store, imports, warm-up, then ``streamlit run Home.py``; after the
    warm-up a first visit to the Bias lab computes nothing (its nominal setting is cached)."""
    monkeypatch.setenv("ARBITER_WORKERS", "0")  # serve would default it to the cores
    monkeypatch.setenv("ARBITER_LAB_PERSONAS", "12")
    monkeypatch.delenv("ARBITER_WARMUP", raising=False)
    monkeypatch.delenv("ARBITER_TIMING_LOG", raising=False)
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    import serve
    from pages._shared import evaluation, warmup

    calls: list[tuple] = []
    real_warm_up = warmup.warm_up

    def recording_warm_up(root, **kw):
        calls.append(("warm_up",))
        done = real_warm_up(root, **kw)
        calls.append(("warmed", [w.script for w in done if w.problem is None]))
        return done

    def fake_cli(*, args, **kw):
        calls.append(("cli", args))
        return 0

    from streamlit.web import cli

    monkeypatch.setattr(warmup, "warm_up", recording_warm_up)
    monkeypatch.setattr(cli.main, "main", fake_cli)
    assert serve.main(["--server.port=1"]) == 0
    assert [c[0] for c in calls] == ["warm_up", "warmed", "cli"]
    assert calls[1][1] == [s for _, s in warmup.SCRIPTS]  # every page ran without a problem
    assert calls[2][1][:2] == ["run", str(ROOT / HOME_SCRIPT)]

    def no_lab(**kw):
        raise AssertionError("the Bias lab recomputed a setting the warm-up computed")

    monkeypatch.setattr(evaluation, "run_lab", no_lab)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/3_Bias_lab.py").run()
    assert not at.exception
    assert "nominal setting" in " ".join(a.value for a in at.info)


def test_a_page_that_fails_in_the_warm_up_is_left_cold_and_the_rest_go_on(tmp_path,
                                                                          monkeypatch):
    from pages._shared import warmup

    (tmp_path / "pages").mkdir()
    (tmp_path / "Home.py").write_text("import streamlit as st\nst.title('home')\n")
    (tmp_path / "pages" / "1_Bad.py").write_text("raise ValueError('boom')\n")
    (tmp_path / "pages" / "2_Good.py").write_text("import streamlit as st\nst.title('ok')\n")
    monkeypatch.setattr(warmup, "SCRIPTS", (("Home", "Home.py"), ("Bad", "pages/1_Bad.py"),
                                            ("Good", "pages/2_Good.py")))
    said: list[str] = []
    done = warmup.warm_up(tmp_path, say=said.append, timeout=60)
    assert [(w.title, w.problem is None) for w in done] == [
        ("Home", True), ("Bad", False), ("Good", True)]
    assert "ValueError" in done[1].problem and "boom" in done[1].problem
    assert "Bad: could not be prepared" in said[1] and said[2].startswith("[ 3/3] Good: ready")


def test_the_warm_up_can_be_turned_off(monkeypatch):
    from pages._shared import warmup

    for off in ("0", "false", "No", " off "):
        monkeypatch.setenv("ARBITER_WARMUP", off)
        assert not warmup.enabled()
    monkeypatch.setenv("ARBITER_WARMUP", "1")
    assert warmup.enabled()
    monkeypatch.delenv("ARBITER_WARMUP")
    assert warmup.enabled()


def test_the_build_speaks_in_plain_words(tmp_path):
    from core.build import build_store
    from core.testbed.config import TestbedConfig

    lines: list[str] = []
    build_store(tmp_path / "s.duckdb", TestbedConfig(seeds=(20260321,),
                                                     personas_per_difficulty=4),
                progress=lambda msg, frac: lines.append(msg))
    text = " ".join(lines)
    assert "simulating 12 people" in lines[0]
    for jargon in ("seed(s)", "μ̂", "atoms", "ground truth", "store", "extracting"):
        assert jargon not in text, jargon


# ------------------------------------------------------------------ a real browser
@pytest.fixture(scope="module")
def server(browser_server):
    """``streamlit run app.py`` (the link) over the small session store: the shared server
    of the browser tests (conftest); its base URL."""
    return browser_server


@BROWSER_MARKS[0]
@BROWSER_MARKS[1]
def test_the_sidebar_starts_with_home_and_the_chips_fit(server, browser):
    """A real server started with ``streamlit run app.py``: the first menu entry reads
    "Home", and every method chip lies inside its widget (none cut off on the right) at
    1280 and at 1440 px (one page, resized: the chips are laid out by the browser alone)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, server)
    nav = page.get_by_test_id("stSidebarNav").get_by_role("link")
    assert nav.first.inner_text().strip() == "Home"
    open_page(page, f"{server}/Leaderboard")
    chips = page.locator(".st-key-lb_methods button[data-variant='pills']")
    assert chips.count() == len(RESOLVERS)
    for width in (1280, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(f"window.innerWidth === {width}")
        page.wait_for_timeout(300)  # let the layout settle after the resize
        group = page.locator(".st-key-lb_methods").bounding_box()
        for i in range(chips.count()):
            box = chips.nth(i).bounding_box()
            assert box is not None and box["x"] + box["width"] <= group["x"] + group["width"] + 1, \
                (width, i)
    page.close()
