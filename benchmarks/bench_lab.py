"""Benchmark: one Bias-lab cache miss (``run_lab``) and its two figures, run by hand.

``python benchmarks/bench_lab.py [--repeat 9] [--seed S] [--personas 160] [--n-boot 200]``

What the page pays when a visitor moves the bias or dropout slider to a value the server has
not computed yet (``pages/_shared/evaluation.py::lab_pair`` → ``core.evaluation.lab.run_lab``,
then ``core.figures.lab``): the nominal setting of the seed is computed first, as the page does,
then every repetition asks for a **new** bias scale (0.05 steps, never repeated), so nothing
is served from a result cache. Printed per step, min and median over the repetitions, wall
(``perf_counter``) and CPU (``process_time``) milliseconds:

* ``run_lab`` as a whole (budget with the page's own work: ≤ 0.4 s of server script time),
  and its parts on the same settings: ``generate`` (one seed), ground truth, readout,
  ``run_seed`` (fit, calibrate and score every resolver);
* the two figures (``lab_leaderboard_figure``, ``source_shift_figure``) and their
  serialisation the way ``st.plotly_chart`` does it (``to_dict`` then ``plotly.io.to_json``).

Other processes on the machine inflate the wall column (the load averages are printed);
CPU time is steadier. Defaults: the store's first seed, 160 personas per difficulty class
(the page default) and the page's 200 bootstrap replicates (``LAB_N_BOOT``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import plotly.io as pio  # noqa: E402

from core.evaluation.lab import run_lab  # noqa: E402
from core.evaluation.run import run_seed  # noqa: E402
from core.figures.lab import lab_leaderboard_figure, source_shift_figure  # noqa: E402
from core.testbed.config import DEFAULT_SEEDS, TestbedConfig  # noqa: E402
from core.testbed.generate import generate  # noqa: E402
from core.testbed.labels import ground_truth_codes  # noqa: E402
from core.testbed.readout import readout  # noqa: E402

#: ``pages._shared.evaluation.LAB_N_BOOT`` (not imported: that module needs Streamlit).
LAB_N_BOOT = 200


def timed(fn, args_list):
    """(wall ms, cpu ms) lists of ``fn(*args)`` for every args tuple."""
    wall, cpu = [], []
    for args in args_list:
        t0, c0 = time.perf_counter(), time.process_time()
        fn(*args)
        wall.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
    return wall, cpu


def row(name: str, wall: list[float], cpu: list[float]) -> str:
    return (f"{name:<46} wall min {min(wall):7.1f}  median {statistics.median(wall):7.1f}"
            f"   cpu median {statistics.median(cpu):7.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9, help="new settings per step")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEEDS[0])
    ap.add_argument("--personas", type=int, default=160, help="personas per difficulty class")
    ap.add_argument("--n-boot", type=int, default=LAB_N_BOOT)
    args = ap.parse_args()
    seed, ppd = args.seed, args.personas

    def lab(bias):
        return run_lab(seed=seed, bias_scale=bias, dropout_scale=1.0,
                       personas_per_difficulty=ppd, n_boot=args.n_boot)

    nominal = lab(1.0)  # the page computes (and caches) the nominal setting first
    lab(3.0)  # warm-up
    fresh = iter(round(0.05 * k, 2) for k in range(1, 1000) if k % 20)  # never 1.0, 2.0, 3.0
    rows = [row("run_lab (one new bias scale)", *timed(lab, [(next(fresh),)
                                                            for _ in range(args.repeat)]))]
    biases = [next(fresh) for _ in range(args.repeat)]
    configs = [TestbedConfig(seeds=(seed,), personas_per_difficulty=ppd, bias_scale=b)
               for b in biases]
    testbeds = [generate(c) for c in configs]
    rows.append(row("  generate (one seed)", *timed(generate, [(c,) for c in configs])))
    rows.append(row("  ground truth", *timed(ground_truth_codes, [(tb,) for tb in testbeds])))
    rows.append(row("  readout", *timed(readout, [(tb,) for tb in testbeds])))
    inputs = [(readout(tb), ground_truth_codes(tb)[0], tb.personas) for tb in testbeds]
    rows.append(row("  run_seed (every resolver)", *timed(run_seed, inputs)))

    variant = lab(next(fresh))
    pairs = [(variant.leaderboard, nominal.leaderboard)] * args.repeat
    rows.append(row("lab_leaderboard_figure", *timed(lab_leaderboard_figure, pairs)))
    pairs = [(nominal.sources, variant.sources)] * args.repeat
    rows.append(row("source_shift_figure", *timed(source_shift_figure, pairs)))
    figs = [lab_leaderboard_figure(variant.leaderboard, nominal.leaderboard),
            source_shift_figure(nominal.sources, variant.sources)]
    rows.append(row("both figures to JSON (as st.plotly_chart)", *timed(
        lambda: [pio.to_json(f.to_dict(), validate=False) for f in figs],
        [()] * args.repeat)))

    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"seed {seed}, {ppd} personas per class, {args.n_boot} bootstrap replicates, "
          f"{args.repeat} repetitions; load average {load}")
    for line in rows:
        print(line)


if __name__ == "__main__":
    main()
