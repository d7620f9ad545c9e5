"""Benchmark: resolvers (the design card §3 budgets), run by hand.

``python benchmarks/bench_resolvers.py [--repeat 7] [--reproduce]`` prints medians for one
seed's fit + calibrate + score of every resolver (budget ≤ 0.7 s), each resolver alone, the
bias-lab cache-miss path (generate one seed + refit everything + leaderboard, budget ≤ 1 s of
server time), and with ``--reproduce`` the full ``python -m core reproduce`` (≤ 60 s).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.evaluation.lab import run_lab  # noqa: E402
from core.evaluation.run import FORCED_METHODS, SELECTIVE_METHODS, run_seed  # noqa: E402
from core.testbed.config import TestbedConfig  # noqa: E402
from core.testbed.generate import generate  # noqa: E402
from core.testbed.labels import ground_truth_codes  # noqa: E402
from core.testbed.readout import readout  # noqa: E402


def med(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts), max(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--reproduce", action="store_true")
    args = ap.parse_args()
    tb = generate(TestbedConfig(seeds=(20260321,)))
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    rows = [("every resolver, one seed (fit+calibrate+score)",
             med(lambda: run_seed(mu, gt, tb.personas), args.repeat))]
    for m in FORCED_METHODS + SELECTIVE_METHODS:
        rows.append((f"  {m}", med(lambda m=m: run_seed(mu, gt, tb.personas, methods=[m]),
                                   args.repeat)))
    rows.append(("bias lab cache miss (generate + refit + board)",
                 med(lambda: run_lab(seed=20260321, bias_scale=1.5, n_boot=300), args.repeat)))
    for name, (m, lo, hi) in rows:
        print(f"{name:<50} median {m:7.3f} s   min {lo:7.3f}   max {hi:7.3f}")
    if args.reproduce:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "core", "reproduce"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=Path(__file__).resolve().parent.parent)
        print(f"{'python -m core reproduce (wall clock)':<50} {time.perf_counter() - t0:7.1f} s")


if __name__ == "__main__":
    main()
