"""The chat client and the runner against a fake endpoint on 127.0.0.1 (seed 000 §9.7).

No test touches the network beyond 127.0.0.1: the fake server is ``tests/llm_fake_server.py``.
"""

from __future__ import annotations

import io
import json

import pytest

from core.llm.cache import CallCache
from core.llm.client import CallError, ChatClient, ConfigError, Endpoint, endpoint_from_env
from core.llm.run import Document, Progress, run_llm, write_release
from core.llm.schema import validate_answers
from core.testbed.questions import QIDS, SOURCES
from tests.llm_fake_server import FakeChat, good_reply

KEY = "sk-test-Zq9SECRETkey-0123456789"


@pytest.fixture
def fake():
    server = FakeChat().start()
    yield server
    server.stop()


def _client(fake, **kw) -> tuple[ChatClient, list[float]]:
    slept: list[float] = []
    kw.setdefault("timeout", 5.0)
    kw.setdefault("retries", 3)
    c = ChatClient(Endpoint(fake.base_url, "fake-model", KEY), backoff=0.5, max_delay=4.0,
                   sleep=slept.append, **kw)
    return c, slept


def _docs(n: int) -> list[Document]:
    return [Document(1, f"bench_stable_{i:03d}_x", f"document number {i}") for i in range(n)]


# -- the client


def test_a_good_reply_and_the_request_it_answers(fake):
    c, slept = _client(fake)
    text = c.complete("SYS", "USER")
    assert json.loads(text) == good_reply("SYS", "USER")
    (req,) = fake.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == f"Bearer {KEY}"
    assert req["body"]["model"] == "fake-model" and req["body"]["temperature"] == 0
    assert req["body"]["messages"] == [{"role": "system", "content": "SYS"},
                                       {"role": "user", "content": "USER"}]
    assert slept == []


def test_an_empty_system_prompt_sends_only_the_user_message(fake):
    c, _ = _client(fake)
    c.complete("", "USER")
    assert fake.requests[0]["body"]["messages"] == [{"role": "user", "content": "USER"}]


def test_429_then_success_backs_off_exponentially(fake):
    fake.script = ["429", "500", "429"]
    c, slept = _client(fake)
    assert json.loads(c.complete("S", "U")) == good_reply("S", "U")
    assert fake.n == 4
    assert slept == [0.5, 1.0, 2.0]


def test_retries_are_bounded_and_the_failure_names_the_status(fake):
    fake.default = "500"
    c, slept = _client(fake, retries=2)
    with pytest.raises(CallError) as info:
        c.complete("S", "U")
    assert info.value.reason == "http_status"
    assert "HTTP 500" in info.value.detail and "3 attempts" in info.value.detail
    assert fake.n == 3 and slept == [0.5, 1.0]


def test_a_client_error_is_not_retried(fake):
    fake.default = "400"
    c, slept = _client(fake)
    with pytest.raises(CallError, match="HTTP 400"):
        c.complete("S", "U")
    assert fake.n == 1 and slept == []


def test_empty_replies_are_retried_then_reported(fake):
    fake.script = ["empty"]
    c, _ = _client(fake)
    assert c.complete("S", "U")
    fake.default = "empty"
    c0, _ = _client(fake, retries=0)
    with pytest.raises(CallError) as info:
        c0.complete("S", "U")
    assert info.value.reason == "empty_reply"


def test_a_timeout_is_a_timeout(fake):
    fake.default, fake.slow_seconds = "slow", 1.5
    c, _ = _client(fake, timeout=0.3, retries=1)
    with pytest.raises(CallError) as info:
        c.complete("S", "U")
    assert info.value.reason == "timeout"
    assert fake.n == 2


def test_the_key_never_leaks_from_an_echoing_server(fake):
    fake.default = "401echo"
    c, _ = _client(fake)
    with pytest.raises(CallError) as info:
        c.complete("S", "U")
    text = f"{info.value} {info.value!r} {info.value.detail} {c!r} {c.endpoint!r}"
    assert "HTTP 401" in text and "bad key Bearer ***" in text  # the echo is shown, redacted
    assert KEY not in text and KEY[:12] not in text


@pytest.mark.parametrize("env, offline, missing", [
    ({}, False, "ARBITER_LLM_BASE_URL, ARBITER_LLM_MODEL, ARBITER_LLM_API_KEY"),
    ({"ARBITER_LLM_MODEL": "m"}, False, "ARBITER_LLM_BASE_URL, ARBITER_LLM_API_KEY"),
    ({"ARBITER_LLM_BASE_URL": "http://x/v1", "ARBITER_LLM_MODEL": "m",
      "ARBITER_LLM_API_KEY": "  "}, False, "ARBITER_LLM_API_KEY"),
    ({}, True, "ARBITER_LLM_MODEL"),
])
def test_endpoint_from_env_names_what_is_missing(env, offline, missing):
    with pytest.raises(ConfigError) as info:
        endpoint_from_env(env, offline=offline)
    assert f"set {missing} for" in str(info.value)
    assert "\n" not in str(info.value)


def test_endpoint_from_env_and_url_checks():
    e = endpoint_from_env({"ARBITER_LLM_BASE_URL": "https://u:pw@api.example/v1",
                           "ARBITER_LLM_MODEL": "m", "ARBITER_LLM_API_KEY": KEY})
    assert e.shown_url() == "https://api.example/v1"
    assert KEY not in repr(e) and "pw" not in e.redact("pw and " + KEY)
    assert endpoint_from_env({"ARBITER_LLM_MODEL": "m"}, offline=True).model == "m"
    with pytest.raises(ConfigError, match="http"):
        Endpoint("ftp://host/v1", "m", KEY)
    with pytest.raises(ValueError, match="retries"):
        ChatClient(e, retries=11)


# -- the runner


def test_run_extract_then_replay_from_the_cache_without_requests(fake, tmp_path):
    c, _ = _client(fake)
    cache = CallCache(tmp_path / "cache")
    docs = _docs(3)
    first = run_llm("extract", docs, model="fake-model", cache=cache, client=c)
    assert not first.failures and first.requests == 3 and first.cache_hits == 0
    assert fake.n == 3
    again = run_llm("extract", docs, model="fake-model", cache=cache, client=c)
    assert fake.n == 3 and again.requests == 0 and again.cache_hits == 3
    offline = run_llm("extract", docs, model="fake-model", cache=cache, offline=True)
    assert fake.n == 3 and offline.cache_hits == 3
    assert {k: v.cells for k, v in offline.outputs.items()} == \
        {k: v.cells for k, v in first.outputs.items()}
    frame = first.atoms_frame()
    assert len(frame) == 3 * len(QIDS) * len(SOURCES)
    # another model is another cache key: offline it is missing, not reused
    other = run_llm("extract", docs, model="other", cache=cache, offline=True)
    assert [f.reason for f in other.failures] == ["not_cached"] * 3 and not other.outputs


def test_failures_are_recorded_with_their_reason_and_the_run_goes_on(fake, tmp_path):
    fake.script = ["good", "malformed", "schema", "400", "fenced"]
    c, _ = _client(fake, retries=0)
    docs = _docs(5)
    res = run_llm("answer", docs, model="fake-model", cache=CallCache(tmp_path / "c"),
                  client=c, concurrency=1)
    reasons = {f.persona_id: f.reason for f in res.failures}
    assert reasons == {docs[1].persona_id: "invalid_json", docs[2].persona_id: "schema_violation",
                       docs[3].persona_id: "http_status"}
    assert set(res.outputs) == {(1, docs[0].persona_id), (1, docs[4].persona_id)}
    assert res.to_dict()["failures_by_reason"] == {"invalid_json": 1, "schema_violation": 1,
                                                    "http_status": 1}
    # completed replies are cached, invalid ones included: an offline replay is identical
    replay = run_llm("answer", docs, model="fake-model", cache=CallCache(tmp_path / "c"),
                     offline=True)
    assert {f.persona_id: f.reason for f in replay.failures} == \
        {**reasons, docs[3].persona_id: "not_cached"}
    assert replay.outputs == res.outputs


def test_a_timeout_in_a_run_is_a_missing_output(fake, tmp_path):
    fake.script, fake.slow_seconds = ["slow"], 1.5
    c, _ = _client(fake, timeout=0.3, retries=0)
    res = run_llm("answer", _docs(2), model="m", cache=CallCache(tmp_path), client=c,
                  concurrency=1)
    assert [f.reason for f in res.failures] == ["timeout"] and len(res.outputs) == 1


@pytest.mark.parametrize("concurrency", [1, 2, 3])
def test_the_concurrency_bound_is_respected(fake, tmp_path, concurrency):
    fake.delay = 0.25
    c, _ = _client(fake)
    res = run_llm("answer", _docs(6), model="m", cache=CallCache(tmp_path), client=c,
                  concurrency=concurrency)
    assert len(res.outputs) == 6
    assert fake.max_inflight == concurrency  # reached, never exceeded


def test_progress_bar_is_one_rewritten_line_and_quiet_is_silent(fake, tmp_path):
    c, _ = _client(fake)
    buf = io.StringIO()
    run_llm("answer", _docs(3), model="m", cache=CallCache(tmp_path), client=c,
            progress=Progress(3, label="llm answer", stream=buf))
    text = buf.getvalue()
    assert text.count("\r") == 3 and text.endswith("3/3 failed 0\n") and text.count("\n") == 1
    quiet = io.StringIO()
    run_llm("answer", _docs(3), model="m", cache=CallCache(tmp_path), client=c,
            progress=Progress(3, label="x", stream=quiet, enabled=False))
    assert quiet.getvalue() == ""


def test_outputs_are_written_in_the_release_layout(fake, tmp_path):
    c, _ = _client(fake)
    docs = _docs(2)
    ans = run_llm("answer", docs, model="org/model v1", cache=CallCache(tmp_path / "c"), client=c)
    ext = run_llm("extract", docs, model="org/model v1", cache=CallCache(tmp_path / "c"),
                  client=c)
    files = write_release(ans, tmp_path / "out") + write_release(ext, tmp_path / "out")
    rel = sorted(str(p.relative_to(tmp_path / "out")) for p in files)
    assert rel == sorted([f"method_outputs/org_model_v1/s1/direct/{d.persona_id}.json"
                          for d in docs] + [f"extracted_atoms/s1/{d.persona_id}.json"
                                            for d in docs])
    data = json.loads((tmp_path / "out" / rel[-1]).read_text())
    assert data["persona"] == docs[1].persona_id
    expected = validate_answers(good_reply(answer_sys(), docs[1].text))
    assert {q: (a["answer"], a["would_skip"]) for q, a in data["answers"].items()} == expected


def answer_sys() -> str:
    from core.llm.prompts import ANSWER_SYSTEM

    return ANSWER_SYSTEM


def test_bad_run_arguments(tmp_path):
    with pytest.raises(ValueError, match="task"):
        run_llm("summarise", [], model="m", cache=CallCache(tmp_path))
    with pytest.raises(ValueError, match="concurrency"):
        run_llm("answer", [], model="m", cache=CallCache(tmp_path), concurrency=0)
    with pytest.raises(ValueError, match="distinct"):
        run_llm("answer", _docs(1) * 2, model="m", cache=CallCache(tmp_path))


def test_a_closed_port_is_a_network_failure():
    server = FakeChat().start()
    url = server.base_url
    server.stop()
    c = ChatClient(Endpoint(url, "m", KEY), retries=0, timeout=2.0)
    with pytest.raises(CallError) as info:
        c.complete("S", "U")
    assert info.value.reason == "network" and KEY not in str(info.value)



def test_an_echoed_key_is_redacted_before_it_is_cached_written_or_printed(fake, tmp_path,
                                                                        capsys):
    """Issue 20 point 6: a reply that echoed the key was cached before any redaction, then
    written by ``--json`` and printed by offline replays with no key set."""
    fake.default = "echo"
    c, _ = _client(fake)
    cache = CallCache(tmp_path / "cache")
    docs = _docs(2)
    run = run_llm("extract", docs, model="fake-model", cache=cache, client=c)
    assert len(run.failures) == 2 and not run.outputs  # the echo is not a valid extraction
    replay = run_llm("extract", docs, model="fake-model", cache=cache, offline=True)
    out = tmp_path / "out"
    write_release(replay, out)
    (tmp_path / "summary.json").write_text(json.dumps(run.to_dict()))
    (tmp_path / "replay.json").write_text(json.dumps(replay.to_dict()))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.parent.name == "cache" or "cache" in p.parts for p in files)
    for p in files:
        assert KEY not in p.read_text(encoding="utf-8", errors="replace"), p
    printed = capsys.readouterr()
    assert KEY not in printed.out + printed.err
    assert "***" in next(p for p in files if "cache" in p.parts).read_text(encoding="utf-8")


def test_a_huge_reply_is_refused_while_it_is_read(fake):
    fake.default = "huge"
    c, _ = _client(fake, retries=0)
    with pytest.raises(CallError) as err:
        c.complete("", "hello")
    assert err.value.reason == "too_large" and "4 MiB" in str(err.value)
