"""Benchmark: the Extraction page's result objects on a store (issue 11 budgets).

Run by hand: ``python benchmarks/bench_prose.py --db STORE [--repeat 7]`` (a store built with
``python -m core build``; it is opened read-only). Prints medians (and min/max) in seconds.
Budgets: ``prose_view`` ≤ 0.05 s, ``noise_view`` and ``factorial_view`` on a cached fit
≤ 0.3 s each, ``mixed_fit`` ≤ about 3 s (once per store).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.prose.views import (  # noqa: E402
    factorial_view,
    faithfulness_view,
    mixed_fit,
    noise_view,
    prose_personas,
    prose_view,
)
from core.store import connect  # noqa: E402


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, times


def fmt(name, times):
    return (f"{name:<44} median {statistics.median(times):7.3f} s   "
            f"min {min(times):7.3f}   max {max(times):7.3f}   (n={len(times)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--db", required=True)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    con = connect(args.db)
    try:
        seed, pid = prose_personas(con)[0]
        cells = [("C3", "daily_self_report"), ("A1", "device_log"), ("B3", "profile_ltm")]
        k = iter(range(10 ** 6))

        def one_view():
            q, s = cells[next(k) % len(cells)]
            return prose_view(con, seed=seed, persona_id=pid, qid=q, source=s)

        _, t = timed(one_view, args.repeat)
        print(fmt("prose_view (one persona, one cell)", t))
        _, t = timed(lambda: faithfulness_view(con), args.repeat)
        print(fmt("faithfulness_view (every persona)", t))
        fit, t = timed(lambda: mixed_fit(con), max(1, args.repeat // 3))
        print(fmt(f"mixed_fit ({len(fit.methods)} methods, {fit.n_test} test)", t))
        fit, t = timed(lambda: mixed_fit(con, parallel=True), max(1, args.repeat // 3))
        print(fmt("mixed_fit (parallel=True)", t))
    finally:
        con.close()
    eps = iter(x / 100 for x in range(10 ** 6))
    _, t = timed(lambda: noise_view(fit, profile="uniform", eps=next(eps) % 1), args.repeat)
    print(fmt("noise_view (uniform, a new eps each time)", t))
    _, t = timed(lambda: factorial_view(fit, a="dsnbf", b="majority_vote", profile="uniform",
                                        eps=next(eps) % 1), args.repeat)
    print(fmt("factorial_view (B = 2000)", t))


if __name__ == "__main__":
    main()
