"""``serve.py --replicas N``: the options, HAProxy's configuration, and a real replica set
(two Streamlit processes and HAProxy) with its stickiness, failover, restart and shutdown
(issue 24). The browser half is ``tests/test_browser_replicas.py``."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

import serve
from core.build import build_store
from core.replicas import (
    COOKIE,
    HEALTH_PATH,
    MALLOC_ARENAS,
    REPLICA_CAP,
    ReplicaSet,
    ServerArgs,
    haproxy_config,
    resolve_replicas,
    split_server_args,
    workers_per_replica,
)
from core.testbed.config import TestbedConfig
from tests.browser_support import ROOT, replica_pids, replica_server

HAPROXY = shutil.which("haproxy")


def _need_haproxy() -> str:
    if HAPROXY is None:
        pytest.fail("HAProxy is not installed: apt-get install haproxy (.ci/run does)")
    return HAPROXY


@pytest.mark.parametrize(("value", "cores", "expected"), [
    (None, 2, 1), ("", 8, 1), ("auto", 1, 1), ("auto", 2, 2), ("AUTO", 64, REPLICA_CAP),
    ("1", 2, 1), (" 3 ", 2, 3), (2, 2, 2), (str(4 * REPLICA_CAP), 2, 4 * REPLICA_CAP),
])
def test_replica_counts(value, cores, expected):
    assert resolve_replicas(value, cores=cores) == expected


@pytest.mark.parametrize(("value", "message"), [
    ("0", "from 1 to"), ("-2", "from 1 to"), (str(4 * REPLICA_CAP + 1), "from 1 to"),
    ("two", "whole number or 'auto'"), ("1.5", "whole number"), ("<b>x</b>", "whole number"),
])
def test_bad_replica_counts_say_why(value, message):
    with pytest.raises(ValueError, match=message):
        resolve_replicas(value, cores=2)


@pytest.mark.parametrize(("n", "cores", "workers"), [
    (1, 2, 2), (2, 2, 1), (4, 2, 1), (2, 8, 2), (3, 8, 2), (8, 8, 1), (2, 1, 1),
])
def test_replicas_share_the_cores_out(n, cores, workers):
    assert workers_per_replica(n, cores=cores) == workers


@pytest.mark.parametrize(("argv", "address", "port", "rest"), [
    ([], "0.0.0.0", 8501, ()),
    (["--server.port=8600", "--server.address=127.0.0.1"], "127.0.0.1", 8600, ()),
    (["--server.port", "9000", "--server.headless", "true"], "0.0.0.0", 9000,
     ("--server.headless", "true")),
    (["--theme.base=dark", "--server.address", "::1", "--server.port=80"], "::1", 80,
     ("--theme.base=dark",)),
])
def test_the_public_address_is_taken_out_of_the_streamlit_options(argv, address, port, rest):
    assert split_server_args(argv) == ServerArgs(address, port, rest)


@pytest.mark.parametrize(("argv", "message"), [
    (["--server.port"], "needs a value"), (["--server.port=http"], "whole number"),
    (["--server.port=0"], "from 1 to 65535"), (["--server.port=70000"], "from 1 to 65535"),
])
def test_bad_public_ports_say_why(argv, message):
    with pytest.raises(ValueError, match=message):
        split_server_args(argv)


def test_the_configuration_passes_haproxys_own_check(tmp_path):
    text = haproxy_config(address="127.0.0.1", port=8501,
                          backends=[("r0", 30001), ("r1", 30002)])
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    done = subprocess.run([_need_haproxy(), "-c", "-f", str(path)], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr + done.stdout
    lines = [ln.split() for ln in text.splitlines()]
    assert ["balance", "leastconn"] in lines and ["option", "redispatch"] in lines
    assert ["cookie", COOKIE, "insert", "indirect", "nocache", "httponly"] in lines
    assert ["option", "httpchk", "GET", HEALTH_PATH] in lines
    assert ["timeout", "tunnel", "1h"] in lines
    servers = [ln for ln in lines if ln[:1] == ["server"]]
    assert servers == [["server", "r0", "127.0.0.1:30001", "check", "cookie", "r0"],
                       ["server", "r1", "127.0.0.1:30002", "check", "cookie", "r1"]]


def test_an_ipv6_address_is_bracketed_and_no_backend_is_refused():
    assert "bind [::1]:8501" in haproxy_config(address="::1", port=8501, backends=[("r0", 1)])
    with pytest.raises(ValueError, match="at least one backend"):
        haproxy_config(address="::1", port=8501, backends=[])


def test_a_replica_set_needs_two(tmp_path):
    with pytest.raises(ValueError, match="at least 2"):
        ReplicaSet(1, ServerArgs("127.0.0.1", 8501, ()), root=ROOT, haproxy="haproxy",
                   say=print)


@pytest.mark.parametrize(("env", "arenas"), [({}, str(MALLOC_ARENAS)),
                                             ({"MALLOC_ARENA_MAX": "8"}, "8")])
def test_replicas_start_with_few_malloc_arenas_unless_told_otherwise(env, arenas):
    rs = ReplicaSet(2, ServerArgs("127.0.0.1", 8501, ()), root=ROOT, haproxy="haproxy",
                    say=print, env={"PATH": os.environ["PATH"], **env})
    try:
        assert [r.env["MALLOC_ARENA_MAX"] for r in rs.replicas] == [arenas, arenas]
        assert MALLOC_ARENAS == 2
    finally:
        shutil.rmtree(rs.config.parent, ignore_errors=True)


def test_serve_limits_its_own_arenas_and_hands_the_limit_to_its_workers(monkeypatch):
    """glibc reads MALLOC_ARENA_MAX only at start-up: serve.py sets the same limit with
    mallopt before its threads exist, and exports it for the worker processes."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert serve._limit_malloc_arenas(2) is True  # this machine's libc is glibc
    assert os.environ["MALLOC_ARENA_MAX"] == "2"
    monkeypatch.setenv("MALLOC_ARENA_MAX", "6")  # the user's value wins
    assert serve._limit_malloc_arenas(2) is True and os.environ["MALLOC_ARENA_MAX"] == "6"
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert serve._limit_malloc_arenas(2) is False  # no C library found: left alone
    assert "MALLOC_ARENA_MAX" not in os.environ


@pytest.mark.parametrize("argv", [["--replicas", "zero"], ["--replicas=0"], ["--replicas"],
                                  ["--replicas", "2", "--server.port=nope"]])
def test_serve_refuses_bad_replica_options_in_one_line(argv, monkeypatch, capsys):
    monkeypatch.setattr(serve, "_ensure_store", lambda: None)
    monkeypatch.setattr(serve.os, "chdir", lambda path: None)
    if "nope" in argv[-1]:
        _need_haproxy()
    assert serve.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arbiter: ") and "Traceback" not in err[0]


def test_without_haproxy_serve_says_so_and_runs_one_process(monkeypatch, capsys):
    class Started(Exception):
        pass

    def ensure_store():
        raise Started  # the one-process path has begun: stop before Streamlit starts

    monkeypatch.setattr(serve.shutil, "which", lambda name: None)
    monkeypatch.setattr(serve, "_ensure_store", ensure_store)
    monkeypatch.setattr(serve.os, "chdir", lambda path: None)
    with pytest.raises(Started):
        serve.main(["--replicas", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["arbiter: 2 replicas need HAProxy (apt-get install haproxy); running one "
                   "process"]


@pytest.fixture(scope="module")
def small_store_for_replicas(tmp_path_factory):
    path = tmp_path_factory.mktemp("replicas") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=4),
                evaluate=False)
    return path


def _get(url: str, cookie: str | None = None) -> tuple[int, str, str]:
    """Status, the replica that answered and the cookie HAProxy set, of a GET."""
    req = urllib.request.Request(url, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie
                                 else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        set_cookie = r.headers.get("Set-Cookie") or ""
        return r.status, r.headers.get("X-Arbiter-Replica", ""), set_cookie


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_two_replicas_stick_fail_over_restart_and_stop(small_store_for_replicas, tmp_path):
    _need_haproxy()
    log = tmp_path / "serve.log"
    with replica_server(small_store_for_replicas, log) as (base, found):
        assert sorted(found) == ["r0", "r1"]
        # a new visitor goes to the replica with fewer open connections: with one
        # visitor's websocket open on one replica, the next visitor gets the other
        from websockets.sync.client import connect

        with connect(base.replace("http://", "ws://") + "/_stcore/stream") as ws:
            first = ws.response.headers["X-Arbiter-Replica"]
            assert first in found
            assert _get(base + HEALTH_PATH)[1] == ({"r0", "r1"} - {first}).pop()
        status, replica, set_cookie = _get(base + "/")
        assert status == 200 and set_cookie.startswith(f"{COOKIE}={replica};")
        # a visitor with a cookie always reaches its replica
        for name in ("r0", "r1"):
            assert {_get(base + HEALTH_PATH, name)[1] for _ in range(5)} == {name}
        # kill r1: its visitors reach r0 (a request in the instant of the kill may get a
        # 502, as a browser's would; its reconnect is the next request), with r0's cookie
        port, pid = found["r1"]
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while True:
            try:
                status, replica, set_cookie = _get(base + "/", "r1")
                break
            except OSError:  # HTTPError 502/503 included
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.2)
        assert (status, replica) == (200, "r0") and set_cookie.startswith(f"{COOKIE}=r0;")
        # and r1 comes back, on its port, as a new process
        deadline = time.monotonic() + 60
        while replica_pids(log)["r1"][1] == pid:
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.25)
        new_port, new_pid = replica_pids(log)["r1"]
        assert new_port == port and new_pid != pid and _alive(new_pid)
        with pytest.raises(ProcessLookupError):  # nothing of the dead one is left running
            os.killpg(pid, 0)
        while True:  # healthy again: its visitors go back to it
            try:
                if _get(base + HEALTH_PATH, "r1")[1] == "r1":
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        pids = [new_pid, found["r0"][1]]
    # serve.py stopped (SIGTERM): HAProxy and every replica are gone, nothing listens
    time.sleep(0.5)
    assert not any(_alive(p) for p in pids)
    with pytest.raises(OSError):
        _get(base + HEALTH_PATH)
    assert "arbiter: r1 exited (status -9); starting it again" in log.read_text()

