"""Cache bounds scaled for replicas (issue 24's memory budget): ``$ARBITER_CACHE_SCALE`` read
by ``pages/_shared/cache.py``, set to 1/N for each of N replicas by ``core/replicas.py``."""

from __future__ import annotations

import pytest

from core import replicas
from pages._shared import cache


@pytest.mark.parametrize("raw, scale", [
    (None, 1.0), ("", 1.0), ("0.5", 0.5), (" 0.25 ", 0.25), ("1", 1.0), ("0", 1.0),
    ("-0.5", 1.0), ("2", 1.0), ("nan", 1.0), ("inf", 1.0), ("half", 1.0), ("1e-3", 1e-3),
])
def test_the_scale_is_a_share_or_one(monkeypatch, raw, scale):
    if raw is None:
        monkeypatch.delenv(cache.CACHE_SCALE_ENV, raising=False)
    else:
        monkeypatch.setenv(cache.CACHE_SCALE_ENV, raw)
    assert cache.cache_scale() == scale


@pytest.mark.parametrize("scale, n, expected", [
    ("1", 256, 256), ("1", 1, 1), ("0.5", 256, 128), ("0.5", 1, 1), ("0.5", 3, 2),
    ("0.3333", 128, 43), ("0.25", 48, 12), ("0.25", 4, 1), ("0.001", 8, 1),
    ("1", 0, 1),
])
def test_scaled_bounds_round_up_and_stay_positive(monkeypatch, scale, n, expected):
    monkeypatch.setenv(cache.CACHE_SCALE_ENV, scale)
    got = cache.scaled_entries(n)
    assert got == expected and 1 <= got <= max(n, 1)


@pytest.mark.parametrize("n, share", [(1, "1"), (2, "0.5"), (3, "0.3333"), (4, "0.25")])
def test_each_replica_keeps_its_share(n, share):
    assert replicas.cache_share(n) == share
    assert replicas.CACHE_SCALE_ENV == cache.CACHE_SCALE_ENV


def test_a_replica_set_passes_the_share_unless_it_is_set(tmp_path):
    args = replicas.split_server_args([])
    kw = dict(root=tmp_path, haproxy="haproxy", say=lambda _: None)
    two = replicas.ReplicaSet(2, args, env={}, **kw)
    assert all(p.env[replicas.CACHE_SCALE_ENV] == "0.5" for p in two.replicas)
    mine = replicas.ReplicaSet(3, args, env={replicas.CACHE_SCALE_ENV: "1"}, **kw)
    assert all(p.env[replicas.CACHE_SCALE_ENV] == "1" for p in mine.replicas)


def test_a_result_store_takes_the_scaled_bound(monkeypatch):
    from pages._shared import workers

    monkeypatch.setenv(cache.CACHE_SCALE_ENV, "0.5")
    workers.result_store.clear()
    try:
        store = workers.result_store("scale-test", 48)
        assert store.max_entries == 24
    finally:
        workers.result_store.clear()
