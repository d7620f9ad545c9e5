"""The load-test timing log (``pages/_shared/timing.py``): one line per outermost script run."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from pages._shared import timing

PAGES = {
    "h0": {"page_script_hash": "h0", "page_name": "app", "url_pathname": "", "script_path": ""},
    "h1": {"page_script_hash": "h1", "page_name": "Walkthrough", "url_pathname": "Walkthrough",
           "script_path": ""},
}


class FakePages:
    """The one method of ``PagesManager`` the log reads."""

    def get_pages(self):
        return dict(PAGES)


def fake_ctx(page_hash="h1", fragments=None):
    return SimpleNamespace(page_script_hash=page_hash, fragment_ids_this_run=fragments,
                           pages_manager=FakePages(), session_id="s-1")


@pytest.fixture
def log(monkeypatch, tmp_path):
    """Point the env var at a tmp file; the original function is restored after the test."""
    path = tmp_path / "timing.tsv"
    monkeypatch.setenv(timing.ENV_VAR, str(path))
    monkeypatch.setattr(script_runner, "exec_func_with_error_handling",
                        script_runner.exec_func_with_error_handling)
    return path


def rows(path):
    return [line.split("\t") for line in path.read_text().splitlines()]


def test_full_run_writes_one_line(log):
    original = script_runner.exec_func_with_error_handling
    assert timing.install_from_env() is True
    wrapped = script_runner.exec_func_with_error_handling
    assert wrapped is not original and wrapped.__wrapped__ is original
    t0 = time.time()
    result = wrapped(lambda: time.sleep(0.02) or 42, fake_ctx())
    assert result == (42, True, None, False, None)
    (row,) = rows(log)
    assert len(row) == len(timing.COLUMNS)
    wall, page, kind, seconds, status, session = row
    assert session == "s-1"
    assert t0 <= float(wall) <= time.time()
    assert (page, kind, status) == ("/Walkthrough", "full", "ok")
    assert 0.02 <= float(seconds) < 5


def test_fragment_home_and_unknown_pages(log):
    timing.install_from_env()
    run = script_runner.exec_func_with_error_handling
    run(lambda: None, fake_ctx("h1", fragments=["frag"]))
    run(lambda: None, fake_ctx("h0"))
    run(lambda: None, fake_ctx("f" * 32))
    assert [(r[1], r[2]) for r in rows(log)] == [
        ("/Walkthrough", "fragment"), ("/", "full"), ("f" * 32, "full")]


def test_nested_call_is_logged_once(log):
    timing.install_from_env()
    run = script_runner.exec_func_with_error_handling
    ctx = fake_ctx()
    run(lambda: run(lambda: None, ctx), ctx)
    assert len(rows(log)) == 1


def test_statuses(log, monkeypatch):
    timing.install_from_env()
    run = script_runner.exec_func_with_error_handling

    def stop():
        raise StopException()

    run(stop, fake_ctx())
    assert rows(log)[-1][4] == "StopException"

    fake_results = [(None, False, None, True, ValueError("boom")),
                    (None, True, object(), False, None)]
    monkeypatch.setattr(script_runner, "exec_func_with_error_handling",
                        lambda func, ctx: fake_results.pop(0))
    timing.install_from_env()
    run = script_runner.exec_func_with_error_handling
    run(None, fake_ctx())
    run(None, fake_ctx())
    assert [r[4] for r in rows(log)[1:]] == ["error:ValueError", "RerunException"]


def test_escaping_exception_is_logged_and_reraised(log, monkeypatch):
    def escape(func, ctx):
        raise KeyboardInterrupt

    monkeypatch.setattr(script_runner, "exec_func_with_error_handling", escape)
    timing.install_from_env()
    with pytest.raises(KeyboardInterrupt):
        script_runner.exec_func_with_error_handling(None, fake_ctx())
    assert rows(log)[0][4] == "KeyboardInterrupt"
    # the depth counter was reset: the next call is logged again
    with pytest.raises(KeyboardInterrupt):
        script_runner.exec_func_with_error_handling(None, fake_ctx())
    assert len(rows(log)) == 2


def test_install_twice_does_not_double_wrap(log):
    assert timing.install_from_env() is True
    wrapped = script_runner.exec_func_with_error_handling
    assert timing.install_from_env() is False
    assert timing.install(log) is False
    assert script_runner.exec_func_with_error_handling is wrapped
    assert timing.is_installed()
    wrapped(lambda: None, fake_ctx())
    assert len(rows(log)) == 1


def test_without_env_var_nothing_is_patched(monkeypatch):
    monkeypatch.delenv(timing.ENV_VAR, raising=False)
    original = script_runner.exec_func_with_error_handling
    monkeypatch.setattr(script_runner, "exec_func_with_error_handling", original)
    assert timing.install_from_env() is False
    assert script_runner.exec_func_with_error_handling is original
    monkeypatch.setenv(timing.ENV_VAR, "  ")
    assert timing.install_from_env() is False
    assert script_runner.exec_func_with_error_handling is original


def test_logging_failure_never_raises(log, tmp_path, monkeypatch):
    monkeypatch.setenv(timing.ENV_VAR, str(tmp_path))  # a directory: open() fails
    timing.install_from_env()
    assert script_runner.exec_func_with_error_handling(lambda: 1, fake_ctx())[0] == 1
