"""Benchmark: one Reliability-page upload of 199,999 legal rows with the bands on.

What the page computes on a miss (issue 18): reading the CSV (:func:`read_score_csv`), the
curves with their consistency bands (:func:`reliability_view`, bands on) and the score
tables of both rules under both labels (:func:`score_summary`). Each step runs in a fresh
child process so its peak resident memory (``ru_maxrss`` minus the child's after-import
baseline) is its own. Target: ≤ 3 s and ≤ 0.5 GB for the whole upload.

Run by hand: ``python benchmarks/bench_reliability_upload.py [--rows 199999]``.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def upload_bytes(rows: int, *, seed: int = 0) -> bytes:
    """A legal upload: ``p, y, z, p_b`` with many distinct forecasts (the worst case)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.0, 1.0, rows).round(6)
    y = (rng.random(rows) < p).astype(int)
    z = y * (rng.random(rows) < 0.7)
    pb = np.clip(p + rng.normal(0, 0.1, rows), 0, 1).round(6)
    buf = io.StringIO()
    buf.write("p,y,z,p_b\n")
    np.savetxt(buf, np.column_stack([p, y, z, pb]), fmt=["%.6f", "%d", "%d", "%.6f"],
               delimiter=",")
    return buf.getvalue().encode()


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _step(name: str, data: bytes, queue) -> None:
    from core.calibration.reliability_view import label_of, reliability_view, rule_frame, weights_of
    from core.calibration.report import read_score_csv
    from core.calibration.summary import score_summary

    df = read_score_csv(data, name="upload.csv") if name != "read" else None
    frames = ({r: rule_frame(df[r], df["y"], df["z"]) for r in ("p", "p_b")}
              if df is not None else None)
    base = _rss_mb()
    t0 = time.perf_counter()
    if name == "read":
        read_score_csv(data, name="upload.csv")
    elif name == "view (bands on)":
        v = reliability_view(frames, rules=("p", "p_b"), label="y", n_bins=10,
                             strategy="uniform", bands=True)
        rows = getattr(v, "band_rows", None)
        if rows is not None:
            print(f"    (bands resampled on {rows:,} of {v.n_rows:,} rows)")
    else:
        for label in ("y", "z"):
            for r in ("p", "p_b"):
                f = frames[r]
                score_summary(f["p"], label_of(f, label), weights=weights_of(f))
    queue.put((time.perf_counter() - t0, _rss_mb() - base, _rss_mb()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=199_999)
    args = ap.parse_args()
    data = upload_bytes(args.rows)
    print(f"{args.rows:,} rows, {len(data) / 2**20:.1f} MiB")
    ctx = mp.get_context("spawn")
    total_t, peak = 0.0, 0.0
    for name in ("read", "view (bands on)", "scores (2 rules × Y, Z)"):
        q = ctx.Queue()
        proc = ctx.Process(target=_step, args=(name, data, q))
        proc.start()
        secs, mb, absolute = q.get()
        proc.join()
        total_t += secs
        peak = max(peak, mb)
        print(f"{name:<28} {secs:6.2f} s   peak +{mb:7.0f} MB over the step's start "
              f"(process peak {absolute:.0f} MB)")
    print(f"{'total':<28} {total_t:6.2f} s   largest step +{peak:.0f} MB")


if __name__ == "__main__":
    main()
