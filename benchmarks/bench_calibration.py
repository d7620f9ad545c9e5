"""Benchmark: vectorised pilot estimators (the design card §3: 5,000 simulated pilots ≤ 1 s).

Run by hand: ``python benchmarks/bench_calibration.py [--repeat 7]``; prints medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.calibration.ppi import horvitz_thompson_ci, ppi_mean_ci  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    R, n, N = 5000, 50, 259
    y = (rng.uniform(size=(R, n)) < 0.7).astype(float)
    yh = y * (rng.uniform(size=(R, n)) < 0.4)
    yu = (rng.uniform(size=N) < 0.3).astype(float)
    pi = rng.uniform(0.05, 0.5, size=(R, n))
    cases = {"ppi_mean_ci (5,000 × 50, shared unlabeled)": lambda: ppi_mean_ci(y, yh, yu),
             "horvitz_thompson_ci (5,000 × 50)": lambda: horvitz_thompson_ci(y, yh, pi, yu)}
    try:
        from core.calibration.pilot import simulate_pilots
        from core.calibration.scenario import DEFAULT_SCENARIO, generate_scenario

        frame = generate_scenario(DEFAULT_SCENARIO)
        cases["simulate_pilots (default scenario, 5,000 reps, budget 50)"] = (
            lambda: simulate_pilots(frame, budget=50, reps=5000, seed=0))
    except ImportError:
        pass
    for name, fn in cases.items():
        fn()
        ts = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        print(f"{name:<60} median {statistics.median(ts):.4f} s  (min {min(ts):.4f}, "
              f"max {max(ts):.4f}, n={len(ts)})")


if __name__ == "__main__":
    main()
