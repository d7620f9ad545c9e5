"""AppTests of the Personal records page's three uploads (issue 19 points 4 and 5): responses,
release decisions and recorded updates, each read by ``core.records.inputs`` (the command
line's reader), each refusal one plain line with the last good file kept, never an
exception box."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.records.disclosure import load_disclosure, reference_decisions, score_decision_file
from core.records.inputs import MAX_BYTES, dump_lines
from core.records.views import load_base
from core.records.writeback import load_updates, reference_writebacks, score_writeback_file
from core.testbed.config import TestbedConfig
from tests.app_support import plain
from tests.test_records_model_tracks import every_kind_file

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
PAGE = "pages/9_Personal_records.py"
KEYS = {"items": "pr_upload", "disclosure": "pr_upload_disclosure",
        "writeback": "pr_upload_writeback"}


@pytest.fixture(scope="module")
def records_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("records_uploads") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=8))
    return path


@pytest.fixture
def env(monkeypatch, records_store) -> Path:
    monkeypatch.setenv("ARBITER_DB", str(records_store))
    return records_store


@pytest.fixture(scope="module")
def base():
    return load_base(n_boot=200)


def open_page() -> AppTest:
    at = AppTest.from_file(HOME, default_timeout=180)
    at.run()
    return at.switch_page(PAGE).run()


def upload(at, track: str, name: str, data: bytes) -> None:
    at.file_uploader(key=KEYS[track]).set_value((name, data, "application/jsonl")).run()


def scoring(at, name: str) -> bool:
    return any(f"Scoring **{name}**" in plain(m.value) for m in at.markdown)


def table_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_every_uploader_states_the_one_cap(env):
    import tomllib

    at = open_page()
    assert not at.exception and not at.error
    mb = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"][
        "maxUploadSize"]
    assert mb == MAX_BYTES // 2**20
    for key in KEYS.values():
        assert f"over {mb} MB is refused" in at.file_uploader(key=key).label


def _good(track: str, base) -> bytes:
    if track == "items":
        return dump_lines([r for r in base.responses if r["arm"] == "D"])
    if track == "disclosure":
        req, info = load_disclosure()
        return dump_lines(reference_decisions(info, req, replicates=1))
    return dump_lines(reference_writebacks(base.world, load_updates(), replicates=1))


BAD = {
    "deep": (b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 1: nested too deeply"),
    "deep_object": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "line 1: nested too deeply"),
    "empty": (b"", "the file is empty"),
    "blank": (b" \n\n\t\n", "the file is empty (only blank lines)"),
    "latin1": (b'{"answer": "caf\xe9"}\n', "line 1 is not UTF-8 text"),
    "oversize": (b" " * (MAX_BYTES + 1), f"more than the {MAX_BYTES:,} allowed"),
}


@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_response_upload_is_one_line_and_keeps_the_good_file(env, base, bad):
    """Before: deep nesting raised RecursionError on the page (an exception box, the good
    file lost); the page said 5 MB while its uploader said 20 MB."""
    at = open_page()
    upload(at, "items", "good.jsonl", _good("items", base))
    assert not at.exception and not at.error and scoring(at, "good.jsonl")
    data, fragment = BAD[bad]
    upload(at, "items", "bad.jsonl", data)
    assert not at.exception and len(at.error) == 1
    msg = plain(at.error[0].value)
    assert fragment in msg and "bad.jsonl" in msg and "good.jsonl" in msg
    assert scoring(at, "good.jsonl")
    assert table_with(at, "M1").set_index("arm").loc["D", "M1"] == "1.00"


@pytest.mark.parametrize("track", list(KEYS))
def test_every_kind_of_malformed_line_is_one_error_line(env, base, track):
    at = open_page()
    upload(at, track, "good.jsonl", _good(track, base))
    assert not at.exception and not at.error and scoring(at, "good.jsonl")
    data, expected = every_kind_file(track)
    upload(at, track, "bad.jsonl", data)
    assert not at.exception and len(at.error) == 1
    msg = plain(at.error[0].value)
    assert "\n" not in msg and f"{len(expected)} malformed line(s)" in msg
    assert "line 4 is not UTF-8" in msg and f"(and {len(expected) - 3} more)" in msg
    assert "Still scoring the previous file, good.jsonl" in msg and scoring(at, "good.jsonl")


def test_a_model_s_decisions_are_scored_on_the_page(env):
    req, info = load_disclosure()
    leak = ("structured", "web_form", "D05")  # bank details to an unverified web form
    rows = [{**d, "release": True} if (d["condition"], d["requester"], d["info_id"]) == leak
            else d for d in reference_decisions(info, req, replicates=1)]
    want = score_decision_file(rows, info)
    at = open_page()
    assert scoring(at, "the reference reader")
    upload(at, "disclosure", "model <b>x.jsonl", dump_lines(rows))
    assert not at.exception and not at.error
    assert scoring(at, "model_b_x.jsonl")  # a safe name, never markup
    said = next(plain(m.value) for m in at.markdown if "Scoring **model" in m.value)
    assert f"{len(want.errors)} critical errors" in said and len(want.errors) == 16
    table = table_with(at, "precision (M9)").set_index("policy")
    assert table.loc["classification records", "critical errors (M11)"] == 1
    errors = table_with(at, "replicates")
    assert {"web form", "D05"} & set(errors["requester"]) == {"web form"}  # in words


def test_a_model_s_updates_are_scored_on_the_page(env, base):
    updates = load_updates()
    rows = reference_writebacks(base.world, updates, arms=("D",), replicates=1)
    rows = [{**r, "end": None} if r["update_id"] == "U1" else r for r in rows]
    want = score_writeback_file(rows, base.world, updates).table.set_index("arm")
    at = open_page()
    upload(at, "writeback", "updates.jsonl", dump_lines(rows))
    assert not at.exception and not at.error and scoring(at, "updates.jsonl")
    table = table_with(at, "end date right").set_index("arm")
    assert list(table.index) == ["D"]
    assert float(table.loc["D", "M12"]) == round(want.loc["D", "M12"], 2) == 0.83
    assert float(table.loc["D", "end date right"]) == 0.83
    assert float(table.loc["D", "M13"]) == 1.0
