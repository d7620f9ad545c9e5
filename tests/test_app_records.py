"""AppTests of the Personal records page (seed 002) on a small one-seed store of this module.

Widgets are looked up by key; numbers are checked against ``core.records.views``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.records.render import render
from core.records.views import arms_view, as_of_view, disclosure_view, load_base, score_view
from core.records.world import RUN_DATE
from core.testbed.config import TestbedConfig
from tests.app_support import plain

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
PAGE = "pages/9_Personal_records.py"


@pytest.fixture(scope="module")
def records_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("records") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=8))
    return path


@pytest.fixture
def env(monkeypatch, records_store) -> Path:
    monkeypatch.setenv("ARBITER_DB", str(records_store))
    return records_store


@pytest.fixture(scope="module")
def base():
    return load_base(n_boot=200)


def open_page(params: dict | None = None) -> AppTest:
    """Open the page as the server does: the entrypoint first, then the page."""
    at = AppTest.from_file(HOME, default_timeout=180)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(PAGE).run()


def metrics(at) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in at.metric:
        out.setdefault(m.label, m.value)
    return out


def table_with(at, column: str):
    """The first dataframe that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def answers(at) -> dict[str, str]:
    t = table_with(at, "agree")
    col = next(c for c in t.columns if c.startswith("answer ("))
    return dict(zip(t["attribute"], t[col], strict=True))


def test_the_page_runs_clean_and_matches_core(env, base):
    at = open_page()
    assert not at.exception and not at.warning and not at.error
    view = as_of_view(base, as_of=RUN_DATE)
    m = metrics(at)
    assert m["Home address that day"] == view.answer("home_address")
    assert m["Disagreeing"] == str(len(view.conflicts)) == "5"
    assert m["Recency differs"] == "3"
    assert m["Characters (M14)"] == f"{len(render(base.world, 'D')):,}"
    assert m["Critical errors (M11)"] == "0"  # the structured condition by default
    assert at.select_slider(key="pr_asof").value == "2026-09-06"


def test_moving_the_as_of_date_changes_an_answer(env, base):
    at = open_page()
    before = answers(at)
    at.select_slider(key="pr_asof").set_value("2025-07-01").run()
    assert not at.exception
    after = answers(at)
    want = as_of_view(base, as_of=dt.date(2025, 7, 1))
    assert after["home address"] == want.answer("home_address") != before["home address"]
    assert after["passport number"] == base.world.fact("F17").value
    assert "passport number" not in before  # expired by the run date
    assert at.query_params["pr_asof"] == "2025-07-01"
    assert metrics(at)["Disagreeing"] == str(len(want.conflicts))


def test_the_policy_switch_changes_exactly_the_three_conflicts(env, base):
    at = open_page()
    cp = answers(at)
    at.segmented_control(key="pr_policy").set_value("naive recency").run()
    assert not at.exception
    rec = answers(at)
    assert cp.keys() == rec.keys()
    changed = {k for k in cp if cp[k] != rec[k]}
    labels = {base.world.label(a) for a in as_of_view(base, as_of=RUN_DATE).changed}
    assert changed == labels and len(changed) == 3
    assert rec["home address"] == base.world.fact("F03").value
    assert at.query_params["pr_policy"] == "recency"


@pytest.mark.parametrize("key, value", [("pr_asof", "<b>1999-01-01</b>"), ("pr_arm", "Z"),
                                        ("pr_item", "![x](http://e.invalid/a.png)"),
                                        ("pr_apply", "maybe")])
def test_a_hostile_url_value_gives_one_plain_warning_and_the_default(env, key, value):
    at = open_page({key: value})
    assert not at.exception
    assert len(at.warning) == 1
    text = plain(at.warning[0].value)
    assert "default is shown" in text and value not in text and "e.invalid" not in text
    assert key not in at.query_params


def test_a_link_opens_the_view_it_names(env):
    at = open_page({"pr_asof": "2025-12-01", "pr_arm": "C", "pr_item": "HIST-1",
                    "pr_cond": "none", "pr_update": "U2", "pr_apply": "true"})
    assert not at.exception and not at.warning
    assert at.select_slider(key="pr_asof").value == "2025-12-01"
    assert at.selectbox(key="pr_item").value == "HIST-1"
    assert metrics(at)["Critical errors (M11)"] == str(disclosure_view("none").m11)
    hist = table_with(at, "status")
    assert "new record, open" in set(hist["status"])
    assert any(s.startswith("kept, closed") or s == "unchanged" for s in hist["status"])


def test_the_family_filter_limits_the_items(env, base):
    at = open_page()
    at.selectbox(key="pr_family").set_value("HIST").run()
    assert not at.exception
    box = at.selectbox(key="pr_item")
    assert box.value == "HIST-1" and all(o.startswith("HIST-") for o in box.options)
    assert at.query_params["pr_item"] == "HIST-1"
    readers = table_with(at, "correct").set_index("arm")
    assert readers.loc["D", "correct"] == "✓" and readers.loc["F", "correct"] == "✗"


def test_an_arm_is_shown_as_plain_text_with_its_length(env, base):
    at = open_page()
    at.selectbox(key="pr_arm").set_value("C").run()
    assert not at.exception
    text = render(base.world, "C")
    assert at.code[0].value == text
    assert metrics(at)["Characters (M14)"] == f"{len(text):,}"
    assert metrics(at)["Complete or ablation"] == "ablation"
    arms = arms_view(base)
    missing = arms.table.set_index("arm").loc["C", "missing"]
    assert metrics(at)["Record fields it misses"] == f"{missing} of {arms.n_claims}"
    ch = arms.change
    said = next(plain(c.value) for c in at.caption if "used to name" in c.value)
    assert f"miss {len(ch.missing_first)} field(s)" in said and "journey J01 companion" in said
    assert f"declined {', '.join(ch.declined_first)} and scored 60%" in said
    assert said.endswith("no longer true.") != ch.h11_now


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_a_malformed_upload_names_the_line_and_keeps_the_previous_file(env, base):
    at = open_page()
    good = [r for r in base.responses if r["arm"] == "D"]
    at.file_uploader(key="pr_upload").set_value(("good.jsonl", _jsonl(good),
                                                 "application/jsonl")).run()
    assert not at.exception and not at.error
    assert any("Scoring **good.jsonl**" in plain(m.value) for m in at.markdown)
    measures = table_with(at, "M1").set_index("arm")
    # shown to two decimals, "—" where an arm has no responses (undefined, never 0)
    assert measures.loc["D", "M1"] == "1.00" and (measures["M1"].drop("D") == "—").all()
    bad = _jsonl(good[:2]) + b'{"item_id": "CURR-1", "arm": "Q"}\n'
    at.file_uploader(key="pr_upload").set_value(("bad.jsonl", bad, "application/jsonl")).run()
    assert not at.exception
    assert len(at.error) == 1
    msg = plain(at.error[0].value)
    assert "line 3" in msg and "good.jsonl" in msg
    assert any("Scoring **good.jsonl**" in plain(m.value) for m in at.markdown)
    assert table_with(at, "M1").set_index("arm").loc["D", "M1"] == "1.00"
    at.run()  # a later rerun: the same one line, the good file still in use
    assert len(at.error) == 1 and "line 3" in plain(at.error[0].value)
    assert table_with(at, "M1").set_index("arm").loc["D", "M1"] == "1.00"


def test_a_refused_first_upload_falls_back_to_the_reference_readers(env, base):
    at = open_page()
    at.file_uploader(key="pr_upload").set_value(("x.jsonl", b"\xff\n", "application/jsonl")).run()
    assert not at.exception and len(at.error) == 1
    assert "line 1 is not UTF-8" in plain(at.error[0].value)
    assert any("Scoring **the reference readers**" in plain(m.value) for m in at.markdown)


def test_the_laboratory_correction_says_it_closes_nothing(env, base):
    at = open_page({"pr_update": "U5", "pr_apply": "true"})
    assert not at.exception
    said = next(plain(m.value) for m in at.markdown if "Records:" in m.value).replace("**", "")
    assert "A correction, not a change" in said and "never A+" in said
    assert "from 1991-04-17" in said and "arrived on 2026-09-06" in said
    hist = table_with(at, "status")
    assert not any(s.startswith("kept, closed") for s in hist["status"])


def test_the_sign_tests_on_every_tested_measure_are_shown(env, base):
    """Issue 19 point 7: the page shows the M2, M3, M6, M7, M8 sign tests (the core's own
    rows, same p-values) and the figures behind H1-H3."""
    at = open_page()
    assert not at.exception
    shown = table_with(at, "measure")
    assert sorted(set(shown["measure"])) == ["M2", "M3", "M6", "M7", "M8"]
    core = score_view(base.score).measure_tests
    assert len(shown) == len(core) == 40
    assert np.allclose(shown["p (sign test)"], core["p (sign test)"], rtol=0, atol=1e-12)
    m7 = shown[(shown["measure"] == "M7") & (shown["comparison"] == "D vs B")].iloc[0]
    assert m7["studied better"] == 11 and m7["comparator better"] == 0  # B overclaims 11
    assert any("turned round" in c.value for c in at.caption)


# ------------------------------------------------------------------ layout: tables at 1280 px


def _widths(d) -> tuple[dict, dict[str, int | None]]:
    """A shown table's ``column_config`` (as sent to the browser) and each column's width."""
    config = json.loads(d.proto.columns or "{}")
    return config, {c: (config.get(c) or {}).get("width") for c in d.value.columns}


@pytest.mark.parametrize("params", [{}, {"pr_asof": "2025-12-01", "pr_item": "STALE-2",
                                         "pr_cond": "none", "pr_update": "U1",
                                         "pr_apply": "true"}])
def test_every_table_gives_each_column_a_width_and_fits_1280_px(env, params):
    """Issue 22: the tables cut their cells (an ellipsis) or their last column at 1280 px.
    Every column of every table now has a pixel width that holds its title and its widest
    cell as printed (a wrapping table's text on up to three lines), and a table's widths
    add up to no more than the main column has at 1280 px."""
    from pages._shared.records import TABLE_WIDTH, cell_text, text_px

    at = open_page(params)
    assert not at.exception
    assert len(at.dataframe) >= 14
    for d in at.dataframe:
        config, widths = _widths(d)
        cols = list(d.value.columns)
        assert all(isinstance(w, int) for w in widths.values()), (cols, widths)
        assert sum(widths.values()) <= TABLE_WIDTH, (cols, widths)
        lines = 3 if d.proto.row_height > 64 else 1  # Streamlit wraps above 4 rem only
        for col in cols:
            fmt = (config[col].get("type_config") or {}).get("format")
            title = config[col].get("label") or col
            widest = max(text_px(cell_text(v, fmt)) for v in d.value[col])
            assert widths[col] >= text_px(title) + 17, (col, widths[col])
            assert widths[col] * lines >= widest + 17 * lines, (col, widths[col], widest)


def test_every_view_of_the_records_fits_1280_px(base):
    """The same bound over every state a reader can reach: each as-of date under both
    rules, each item, each policy condition, each update applied or not (the tables as the
    page shows them)."""
    from core.records.views import (
        HEADERS,
        SHOWN_POLICIES,
        change_dates,
        item_view,
        items_in,
        writeback_view,
    )
    from core.records.writeback import load_updates
    from pages._shared.records import REQUESTER, TABLE_WIDTH, fit_columns

    def total(frame, config=None) -> int:
        return sum(c["width"] for c in fit_columns(frame, config).values())

    for day in change_dates(base.world, today=base.today):
        for policy in SHOWN_POLICIES:
            view = as_of_view(base, as_of=day, policy=policy)
            assert total(view.table()) <= TABLE_WIDTH, (day, policy)
            assert total(view.detail().drop(columns="why", errors="ignore")) <= TABLE_WIDTH
    for item in items_in(base, "all"):
        view = item_view(base, item)
        assert total(view.records.rename(columns=HEADERS)) <= TABLE_WIDTH, item
        assert total(view.readers) <= TABLE_WIDTH, item
    for cond in ("none", "prose", "structured"):
        view = disclosure_view(cond)
        assert total(view.matrix, {r: REQUESTER[r] for r in view.requesters}) <= TABLE_WIDTH
    for update in load_updates():
        for applied in (False, True):
            view = writeback_view(base, update.update_id, applied=applied)
            assert total(view.history.rename(columns=HEADERS)) <= TABLE_WIDTH


def test_text_widths_are_the_browser_s():
    """:func:`text_px` against widths Chromium measured for the table font (14 px Source
    Sans), which it sums glyph by glyph: kerning moves a text by a pixel or two."""
    from pages._shared.records import text_px

    measured = {"Lumen TV subscription price per month": 230,
                "41 Ashdown Road, Manchester M20 4QP": 232,
                "m.lindqvist@corvidhealth.example": 205, "third-party contact details": 152,
                "the HR department of her employer": 208, "comparator better": 107,
                "M6 on expired: A 1.000, B 0.000, C 0.000, D 1.000, E 1.000, F 0.000": 371}
    for text, px in measured.items():
        assert -1.5 <= text_px(text) - px <= 2.5, (text, text_px(text), px)
