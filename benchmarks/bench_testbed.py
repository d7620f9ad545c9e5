"""Benchmark: testbed generation, ground truth and direct readout (the design card §3 budgets).

Run by hand: ``python benchmarks/bench_testbed.py [--repeat 7]``. Prints medians (and min/max)
in seconds for one seed (480 personas) and for the default four seeds, plus a full store build.
Budget: one seed generate + GT + μ* ≤ 0.3 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.build import build_store  # noqa: E402
from core.testbed.config import TestbedConfig  # noqa: E402
from core.testbed.generate import generate  # noqa: E402
from core.testbed.labels import ground_truth_codes  # noqa: E402
from core.testbed.readout import readout  # noqa: E402


def timed(fn, repeat):
    times = []
    out = None
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
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    for label, cfg in (("1 seed (480 personas)", TestbedConfig(seeds=(20260321,))),
                       ("4 seeds (1,920 personas)", TestbedConfig())):
        generate(cfg)  # warm-up (imports, caches)
        tb, t_gen = timed(lambda cfg=cfg: generate(cfg), args.repeat)
        _, t_gt = timed(lambda tb=tb: ground_truth_codes(tb), args.repeat)
        _, t_mu = timed(lambda tb=tb: readout(tb), args.repeat)
        _, t_all = timed(lambda cfg=cfg: (lambda t: (ground_truth_codes(t), readout(t)))(
            generate(cfg)), args.repeat)
        print(f"== {label}")
        print(fmt("generate", t_gen))
        print(fmt("ground truth (codes)", t_gt))
        print(fmt("direct readout mu*", t_mu))
        print(fmt("generate + GT + mu*", t_all))
    with tempfile.TemporaryDirectory() as d:
        _, t_build = timed(lambda: build_store(Path(d) / "b.duckdb", TestbedConfig()),
                           max(1, args.repeat // 3))
    print("== store")
    print(fmt("build default store (4 seeds, with details)", t_build))


if __name__ == "__main__":
    main()
