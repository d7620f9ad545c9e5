"""``python -m core llm extract|answer``: exit statuses, the release formats, the store, no leak.

Every call goes to the fake endpoint of ``tests/llm_fake_server.py`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.cli import main
from core.llm.prompts import ANSWER_SYSTEM, extract_prompt
from core.llm.schema import validate_answers, validate_extraction
from core.store import connect, load_atoms, query_df, write_store
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.importer import load_release
from core.testbed.questions import QUESTIONS
from tests.llm_fake_server import FakeChat, good_reply

SAMPLE = Path(__file__).parent / "fixtures" / "survey2agent-sample"
PID = "bench_shift_121_avery_ellis"
KEY = "sk-cli-SECRET-9f8e7d6c5b4a"
SMALL = ["--seeds", "5", "--personas-per-difficulty", "4"]
ENV = ("ARBITER_LLM_BASE_URL", "ARBITER_LLM_MODEL", "ARBITER_LLM_API_KEY")


@pytest.fixture
def fake(monkeypatch):
    server = FakeChat().start()
    monkeypatch.setenv("ARBITER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("ARBITER_LLM_MODEL", "fake-model")
    monkeypatch.setenv("ARBITER_LLM_API_KEY", KEY)
    yield server
    server.stop()


@pytest.fixture
def release(tmp_path):
    root = tmp_path / "release"
    shutil.copytree(SAMPLE, root)
    return root


def _no_key_anywhere(*texts: str, folders: tuple[Path, ...] = ()) -> None:
    for t in texts:
        assert KEY not in t
    for folder in folders:
        for f in folder.rglob("*"):
            if f.is_file():
                assert KEY.encode() not in f.read_bytes(), f


@pytest.mark.parametrize("argv", [["llm", "answer", *SMALL], ["llm", "extract", "--offline"]])
def test_missing_environment_exits_2_with_one_line(argv, monkeypatch, capsys):
    for v in ENV:
        monkeypatch.delenv(v, raising=False)
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: llm {argv[1]}: set ARBITER_LLM_")
    assert captured.out == ""


@pytest.mark.parametrize("argv, fragment", [
    (["llm", "answer", "--concurrency", "0"], "--concurrency"),
    (["llm", "answer", "--retries", "11"], "--retries"),
    (["llm", "answer", "--timeout", "nan"], "--timeout"),
    (["llm", "extract", "--db", "/nonexistent/x.duckdb"], "--db"),
    (["llm", "extract", "--seeds", "1", "--release", str(SAMPLE)], "not allowed with"),
    (["llm", "summarise"], "invalid choice"),
])
def test_bad_options_exit_2_with_one_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_answer_a_release_into_its_own_layout_and_import_it_back(fake, release, tmp_path,
                                                                 capsys):
    cache, js = tmp_path / "cache", tmp_path / "a.json"
    argv = ["llm", "answer", "--release", str(release), "--cache", str(cache), "--out",
            str(release), "--json", str(js)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "1 outputs, 0 missing; 1 requests, 0 cache hits" in captured.out
    assert "\r" in captured.err and "1/1 failed 0" in captured.err  # the progress bar
    data = json.loads(js.read_text())
    assert data["outputs"] == 1 and data["failures"] == [] and data["model"] == "fake-model"
    document = (release / "benchmark/seeds/s20260321/nl_renders" / f"{PID}.md").read_text()
    assert fake.requests[0]["body"]["messages"][1]["content"] == document  # the released render
    expected = validate_answers(good_reply(ANSWER_SYSTEM, document))
    answers = load_release(release).llm_answers
    ours = answers[answers["model"] == "fake-model"]
    assert ours["variant"].unique().tolist() == ["direct"]
    assert dict(zip(ours["question_id"], zip(ours["answer"], ours["would_skip"], strict=True),
                    strict=True)) == expected
    _no_key_anywhere(captured.out, captured.err, js.read_text(), folders=(cache, release))
    # the second run is a cache hit; the offline replay makes no request either
    assert main([*argv, "--quiet"]) == 0
    assert main([*argv, "--offline", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("0 requests, 1 cache hits") == 2 and fake.n == 1
    assert "\r" not in captured.err


def test_extract_a_release_and_import_the_atoms(fake, release, tmp_path):
    assert main(["llm", "extract", "--release", str(release), "--cache", str(tmp_path / "c"),
                 "--out", str(release), "--quiet"]) == 0
    document = (release / "benchmark/seeds/s20260321/nl_renders" / f"{PID}.md").read_text()
    expected = validate_extraction(good_reply("", extract_prompt(document).user)).cells
    atoms = load_release(release).extracted_atoms
    ours = atoms[atoms["persona_id"] == PID]
    got = {}
    for q, s, v in ours[["question_id", "source", "value"]].itertuples(index=False):
        got.setdefault(q, {})[s] = v
    assert got == expected


def test_offline_without_a_cache_entry_exits_1_and_lists_the_missing(fake, tmp_path, capsys):
    js = tmp_path / "o.json"
    assert main(["llm", "answer", *SMALL, "--limit", "2", "--offline", "--cache",
                 str(tmp_path / "empty"), "--json", str(js), "--quiet"]) == 1
    data = json.loads(js.read_text())
    assert data["failures_by_reason"] == {"not_cached": 2} and data["outputs"] == 0
    assert fake.n == 0 and "missing (not_cached): 2" in capsys.readouterr().out


def test_a_failing_run_exits_1_and_never_shows_the_key(fake, tmp_path, capsys):
    fake.default = "401echo"
    js = tmp_path / "f.json"
    assert main(["llm", "answer", *SMALL, "--limit", "2", "--cache", str(tmp_path / "c"),
                 "--json", str(js), "--concurrency", "2"]) == 1
    captured = capsys.readouterr()
    data = json.loads(js.read_text())
    assert data["failures_by_reason"] == {"http_status": 2}
    assert "HTTP 401" in data["failures"][0]["detail"]
    _no_key_anywhere(captured.out, captured.err, js.read_text(), folders=(tmp_path,))


def test_persona_selection(fake, tmp_path, capsys):
    assert main(["llm", "answer", *SMALL, "--persona", "bench_nobody_000_x", "--offline"]) == 2
    assert "unknown persona" in capsys.readouterr().err
    js = tmp_path / "p.json"
    assert main(["llm", "answer", *SMALL, "--persona", "bench_stable_002_jordan_adams",
                 "--cache", str(tmp_path / "c"), "--json", str(js), "--quiet"]) == 0
    assert json.loads(js.read_text())["personas"] == 1 and fake.n == 1


@pytest.fixture
def store(tmp_path):
    tb = generate(TestbedConfig(seeds=(7,), personas_per_difficulty=4))
    path = tmp_path / "s.duckdb"
    write_store(path, tb, origin="test", config={})
    return path, tb


def test_outputs_written_straight_into_a_store(fake, store, tmp_path):
    path, tb = store
    common = ["--db", str(path), "--limit", "2", "--cache", str(tmp_path / "c"), "--quiet",
              "--concurrency", "1"]  # one at a time: request i is persona i
    assert main(["llm", "extract", *common]) == 0
    assert main(["llm", "answer", *common]) == 0
    assert main(["llm", "extract", *common]) == 0  # replaces, never duplicates
    con = connect(path, read_only=True)
    try:
        codes = load_atoms(con, kind="extracted")
        answers = query_df(con, "SELECT * FROM llm_answers ORDER BY persona_id, question_id")
        n_atoms = query_df(con, "SELECT count(*) AS n FROM atoms WHERE kind = 'extracted'")
    finally:
        con.close()
    assert int(n_atoms["n"].iloc[0]) == 2 * 18 * 5
    assert (codes[2:] == -1).all()
    sent = [r["body"]["messages"][-1]["content"] for r in fake.requests[:2]]
    for i in range(2):
        cells = validate_extraction(good_reply("", sent[i])).cells
        want = np.array([[-1 if cells[q.qid][s] is None else q.labels.index(cells[q.qid][s])
                          for s in cells[q.qid]] for q in QUESTIONS])
        assert (codes[i] == want).all()
    assert len(answers) == 36 and set(answers["model"]) == {"fake-model"}
    assert set(answers["persona_id"]) == set(tb.personas["persona_id"][:2])
