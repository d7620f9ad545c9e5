"""Speed and peak memory of the fusion resolvers (issue 21), and their accuracy on the
shipped sets.

Run by hand with the project's interpreter (never collected by pytest)::

    .venv/bin/python benchmarks/bench_fusion.py                   # 1 M claims, every resolver
    .venv/bin/python benchmarks/bench_fusion.py --claims 10000000 --methods dawid_skene
    .venv/bin/python benchmarks/bench_fusion.py --real            # accuracy on data/conflict
    .venv/bin/python benchmarks/bench_fusion.py --json /tmp/fusion.json

The synthetic table is :func:`core.fusion.synthetic.synthetic_claims` with 200 sources,
4 classes and 5 claims an item (the issue's setting; 1 M claims = 200,000 items), seed 0.
Each resolver runs ``--repeat`` times; the best wall time is reported, and its peak memory
is the tracemalloc peak of one run (numpy reports its buffers to tracemalloc) — the
process's peak RSS is printed at the end. :func:`run_ours` returns the figures as a dict so
a peer script (crowd-kit's side) can call it and print both in one run.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.fusion.claims import Claims  # noqa: E402
from core.fusion.dawid_skene import dawid_skene  # noqa: E402
from core.fusion.dependence import accu_depen  # noqa: E402
from core.fusion.glad import glad  # noqa: E402
from core.fusion.importer import read_claims  # noqa: E402
from core.fusion.naive_bayes import naive_bayes, random_split  # noqa: E402
from core.fusion.one_coin import one_coin_em  # noqa: E402
from core.fusion.synthetic import synthetic_claims  # noqa: E402
from core.fusion.vote import majority_vote  # noqa: E402

#: name → resolver on a claims table (the names the peer's crowd-kit side should reuse).
METHODS: dict[str, Callable[[Claims], object]] = {
    "majority_vote": lambda c: majority_vote(c),
    "majority_vote_first_seen": lambda c: majority_vote(c, tie="first_seen"),
    "one_coin_em": lambda c: one_coin_em(c),
    "one_coin_crowdkit": lambda c: one_coin_em(c, variant="crowdkit"),
    "dawid_skene": lambda c: dawid_skene(c),
    "dawid_skene_baseline": lambda c: dawid_skene(c, variant="baseline"),
    "glad": lambda c: glad(c),
    "accu": lambda c: accu_depen(c, dependence=False),
    "accu_depen": lambda c: accu_depen(c),
    "naive_bayes": lambda c: naive_bayes(
        c, train=random_split(c, 0.5, np.random.default_rng(0))),
}
#: crowd-kit 1.4.2 on this machine, from the issue (s), for the ≥ 3× target.
CROWDKIT_SECONDS = {"majority_vote_first_seen": 0.42, "dawid_skene": 1.7,
                    "one_coin_crowdkit": 2.4}

SETS = {
    "flight": "data/conflict/flight-2011-12-01/flight_2011-12-01.csv",
    "flight_all": "data/conflict/flight-2011-12-01/flight_2011-12-01_all.csv",
    "mozafari": "data/conflict/gal-mozafari-binary/mozafari_binary.csv",
    "adult": "data/conflict/gal-adultcontent2/adultcontent2_gold_items.csv",
}


def synthetic(n_claims: int = 1_000_000, *, n_sources: int = 200, n_classes: int = 4,
              per_item: int = 5, seed: int = 0) -> Claims:
    """The issue's benchmark table: ``n_claims / per_item`` items."""
    return synthetic_claims(np.random.default_rng(seed), n_items=n_claims // per_item,
                            n_sources=n_sources, n_classes=n_classes,
                            claims_per_item=per_item)


def measure(fn: Callable[[], object], *, repeat: int = 1) -> dict[str, float]:
    """Best wall time over ``repeat`` runs and the tracemalloc peak (MB) of one run."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"seconds": min(times), "peak_mb": peak / 2**20, "result": out}


def run_ours(claims: Claims, methods=None, *, repeat: int = 1) -> dict[str, dict]:
    """Time every resolver of ``methods`` (default: all of :data:`METHODS`) on ``claims``:
    {name: {"seconds", "peak_mb", "accuracy", "iterations"}}."""
    out = {}
    for name in methods or METHODS:
        m = measure(lambda name=name: METHODS[name](claims), repeat=repeat)
        res = m.pop("result")
        m["accuracy"] = claims.accuracy(res.labels) if claims.has_truth else float("nan")
        m["iterations"] = res.iterations
        out[name] = m
    return out


def real_table(methods=None) -> dict[str, dict[str, float]]:
    """Accuracy on the gold items of each shipped set: {set: {method: accuracy}}."""
    out = {}
    for key, rel in SETS.items():
        c = read_claims(ROOT / rel).claims
        out[key] = {}
        for name in methods or METHODS:
            t = time.perf_counter()
            res = METHODS[name](c)
            if name == "naive_bayes":
                acc = res.score(c, ~res.params["train"])["accuracy"]
            else:
                acc = c.accuracy(res.labels)
            out[key][name] = {"accuracy": acc, "seconds": time.perf_counter() - t}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=1_000_000)
    ap.add_argument("--sources", type=int, default=200)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--methods", nargs="*", choices=sorted(METHODS))
    ap.add_argument("--real", action="store_true", help="accuracy on the shipped sets only")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    report: dict[str, object] = {}
    if args.real:
        table = real_table(args.methods)
        names = args.methods or list(METHODS)
        print(f"{'method':26s}" + "".join(f"{k:>12s}" for k in table))
        for name in names:
            print(f"{name:26s}" + "".join(f"{table[k][name]['accuracy']:12.3f}" for k in table))
        report["real"] = table
    else:
        t = time.perf_counter()
        c = synthetic(args.claims, n_sources=args.sources, n_classes=args.classes,
                      per_item=args.per_item, seed=args.seed)
        print(f"synthetic: {c.n_claims:,} claims, {c.n_items:,} items, {c.n_sources} sources, "
              f"{c.n_classes} classes ({time.perf_counter() - t:.1f} s to generate)")
        res = run_ours(c, args.methods, repeat=args.repeat)
        print(f"{'method':26s}{'seconds':>9s}{'peak MB':>9s}{'iter':>6s}{'accuracy':>10s}"
              f"{'vs crowd-kit':>14s}")
        for name, m in res.items():
            ck = CROWDKIT_SECONDS.get(name)
            speed = f"{ck / m['seconds']:.1f}× faster" if ck and args.claims == 1_000_000 \
                else ""
            print(f"{name:26s}{m['seconds']:9.2f}{m['peak_mb']:9.0f}{m['iterations']:6d}"
                  f"{m['accuracy']:10.4f}{speed:>14s}")
        report["synthetic"] = {"claims": c.n_claims, "results": res}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {rss:.0f} MB")
    report["peak_rss_mb"] = rss
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
