"""``benchmarks/loadtest.py --replicas``: the pure helpers (no server, no network)."""

from __future__ import annotations

import os

import pytest

from benchmarks import loadtest as lt


def test_cookie_value_takes_the_replica_cookie_and_the_last_one_wins():
    headers = ["_streamlit_xsrf=abc; Path=/", "ARBITER_REPLICA=r0; path=/; HttpOnly",
               "ARBITER_REPLICA=r1; path=/"]
    assert lt.cookie_value(headers) == "r1"
    assert lt.cookie_value(["other=1"]) is None
    assert lt.cookie_value([]) is None
    assert lt.cookie_value(None) is None


def test_parse_replica_lines_keeps_the_last_line_per_replica():
    text = ("arbiter: starting 2 replicas …\n"
            "arbiter: replica r0 on 127.0.0.1:4001 (pid 10)\n"
            "arbiter: replica r1 on 127.0.0.1:4002 (pid 11)\n"
            "arbiter: r0 exited (status -9); starting it again\n"
            "arbiter: replica r0 on 127.0.0.1:4001 (pid 12)\n")
    assert lt.parse_replica_lines(text) == {"r0": (4001, 12), "r1": (4002, 11)}
    assert lt.parse_replica_lines("no such lines") == {}


def test_replica_spread_counts_first_replicas_and_moves():
    assert lt.replica_spread({}) == ({}, 0)
    assert lt.replica_spread({0: ["r1"], 1: ["r0", "r1"], 2: ["r1"], 3: []}) == (
        {"r0": 1, "r1": 2}, 1)


def test_is_replica_cmd():
    assert lt._is_replica_cmd(["/v/bin/python", "/w/serve.py", "--replicas", "1",
                               "--server.port=4001"])
    assert not lt._is_replica_cmd(["/v/bin/python", "serve.py", "--replicas", "2"])
    assert not lt._is_replica_cmd(["/usr/sbin/haproxy", "-f", "x.cfg"])
    assert not lt._is_replica_cmd([])


def test_replica_figures_per_replica_proxy_and_restart():
    rec = lt.Recorder()
    rec.replicas = {0: ["r0"], 1: ["r1", "r0"]}
    rec.runs = [{"replica": "r0", "settle": 0.1}, {"replica": "r0", "settle": 0.3},
                {"replica": "r1", "settle": 0.2}]
    cpu0 = {"r0": (10, 5.0), "r1": (11, 2.0), lt.PROXY: (12, 1.0), lt.SUPERVISOR: (9, 0.5)}
    cpu1 = {"r0": (10, 7.0), "r1": (13, 0.5), lt.PROXY: (12, 1.5), lt.SUPERVISOR: (9, 0.6)}
    rss = {"r0": 1_000, "r1": 2_000, lt.PROXY: 10, lt.SUPERVISOR: 5}
    out = lt.replica_figures(rec, cpu0, cpu1, rss, {"r0": (4001, 10), "r1": (4002, 13)},
                             {"r0": 1.0, "r1": 1.0}, 10.0)
    r0, r1 = out["replicas"]["r0"], out["replicas"]["r1"]
    assert list(out["replicas"]) == ["r0", "r1"]
    assert (r0["pid"], r0["port"], r0["sessions"], r0["reruns"]) == (10, 4001, 1, 2)
    assert r0["cpu_s"] == 2.0 and r0["cpu_pct"] == 20.0 and not r0["restarted"]
    assert r1["restarted"] and r1["cpu_s"] == 0.5 and r1["pid"] == 13
    assert r0["settle_p95"] is not None and r1["rss_peak_bytes"] == 2_000
    assert out["haproxy"]["cpu_s"] == 0.5 and out["haproxy"]["rss_peak_bytes"] == 10
    assert out["supervisor"]["pid"] == 9
    assert out["sessions_per_replica"] == {"r0": 1, "r1": 1} and out["sessions_moved"] == 1


def test_values_are_kept_per_replica_and_unchanged_without():
    v = lt.Values("lesson")
    assert v.mark("Tour", "k", 1) is False and v.mark("Tour", "k", 1) is True
    assert v.mark("Tour", "k", 1, "r0") is False
    assert v.mark("Tour", "k", 1, "r1") is False and v.mark("Tour", "k", 1, "r1") is True
    assert ("Tour", "k", 1) in v.seen and ("r0", "Tour", "k", 1) in v.seen


def test_rss_target_names_the_whole_set_with_replicas():
    one = lt.check_targets("lesson", [], 1_000, 1)[-1]
    two = lt.check_targets("lesson", [], 3_000_000_000, 2)[-1]
    assert one["target"] == f"peak RSS <= {lt.TARGET_RSS / 1e9} GB" and one["pass"]
    assert "2 replicas" in two["target"] and two["pass"] is False


@pytest.mark.parametrize("rss, pss, passes", [
    (3_600_000_000, 2_400_000_000, True),    # shared pages counted once: within budget
    (2_400_000_000, 2_600_000_000, False),   # graded on PSS, not on the smaller RSS
    (1_000, 0, True),                        # no PSS sampled: RSS is graded as before
])
def test_the_memory_target_is_graded_on_pss_when_sampled(rss, pss, passes):
    t = lt.check_targets("lesson", [], rss, 2, peak_pss=pss)[-1]
    assert t["pass"] is passes
    if pss:
        assert t["target"].startswith("peak memory (PSS)")
        assert f"RSS sum {rss / 1e6:.0f} MB" in t["value"]


def test_pss_of_a_process_tree_counts_shared_pages_once():
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    ready, done = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold, args=(ready, done))
    child.start()
    try:
        assert ready.wait(30)
        pss, rss = lt.tree_pss(os.getpid()), lt.tree_rss(os.getpid())
        assert 0 < pss < rss  # the forked child shares this process's pages
    finally:
        done.set()
        child.join(30)
    assert lt.tree_pss(2**22 + 12345) == 0  # no such process


def _hold(ready, done) -> None:
    ready.set()
    done.wait(30)


def test_parse_args_replicas_bounds():
    assert lt.parse_args([]).replicas == 1
    assert lt.parse_args(["--replicas", "2"]).replicas == 2
    for bad in ("0", str(lt.MAX_REPLICAS + 1)):
        try:
            lt.parse_args(["--replicas", bad])
        except SystemExit:
            continue
        raise AssertionError(f"--replicas {bad} accepted")
