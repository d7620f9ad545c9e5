"""The bias lab: regenerate one seed under new distortion knobs, refit everything, compare.

A :class:`LabResult` holds the leaderboard (forced accuracy with a cluster-bootstrap interval,
selective accuracy and coverage), per-source reliability, and — against the nominal setting
(bias = dropout = 1, equal difficulty mix) — which method's rank moved most and which source's
accuracy moved most ("what broke").

Difficulty mix: weights (stable, temporal_shift, stated_vs_revealed) ≥ 0; each class keeps the
fraction w_d / max(w) of its personas **within every split** (the first ones by index), so the
train/calibration/test proportions stay those of the released protocol. A zero weight drops
the class; DSNBF's class prior and stratified tables then fall back to their smoothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..resolvers.registry import method_mechanisms
from ..testbed.config import TestbedConfig
from ..testbed.generate import generate
from ..testbed.labels import ground_truth_codes
from ..testbed.questions import SOURCE_LABELS
from ..testbed.readout import readout
from ..testbed.schema import Testbed
from ..testbed.vocab import DIFFICULTIES, SPLITS
from .diagnostics import source_summary
from .metrics import _resample_weights, cluster_bootstrap, coverage, selective_accuracy
from .run import FORCED_METHODS, METHOD_LABELS, SELECTIVE_METHODS, SeedRun, run_seed

__all__ = [
    "METHOD_MECHANISMS",
    "NOMINAL",
    "LabResult",
    "describe_what_broke",
    "is_nominal",
    "mix_testbed",
    "run_lab",
    "what_broke",
]

#: The nominal setting the bias lab compares against.
NOMINAL = MappingProxyType({"bias_scale": 1.0, "dropout_scale": 1.0, "mix": (1.0, 1.0, 1.0)})

#: Why each method reacts to a change of the sources, in one clause (seed 000 §9.1, §9.5): a
#: derived view of the resolver registry (:func:`core.resolvers.registry.method_mechanisms`).
METHOD_MECHANISMS = MappingProxyType(method_mechanisms())

_KNOB_SOURCES = MappingProxyType({
    "bias_scale": ("planner", "daily_self_report"),
    "dropout_scale": ("objective_log", "device_log"),
})


def mix_testbed(tb: Testbed, weights: tuple[float, float, float]) -> Testbed:
    """Keep ``w_d / max(w)`` of each difficulty class within every split (see module doc);
    equal weights keep everything and return ``tb`` itself."""
    w = np.asarray(weights, float)
    if w.shape != (3,) or (w < 0).any() or not np.isfinite(w).all() or w.max() <= 0:
        raise ValueError("difficulty mix needs three non-negative weights, not all zero")
    frac = w / w.max()
    if (frac == 1).all():  # every class kept whole: nothing to drop
        return tb
    keep = np.zeros(tb.n, bool)
    diff = tb.personas["difficulty"].to_numpy()
    split = tb.personas["split"].to_numpy()
    seed = tb.personas["seed"].to_numpy()
    for s in np.unique(seed):
        for d, f in zip(DIFFICULTIES, frac, strict=True):
            for sp in SPLITS:
                idx = np.flatnonzero((seed == s) & (diff == d) & (split == sp))
                n = int(round(f * len(idx)))
                if f > 0 and sp != "dev":
                    n = max(n, 1)
                keep[idx[:n]] = True
    return tb.subset(keep)


@dataclass(frozen=True)
class LabResult:
    """Leaderboard and source reliability of one configuration (one seed)."""

    leaderboard: pd.DataFrame
    sources: pd.DataFrame
    n_test: int
    run: SeedRun


def run_lab(*, seed: int, bias_scale: float = 1.0, dropout_scale: float = 1.0,
            mix: tuple[float, float, float] = (1.0, 1.0, 1.0),
            personas_per_difficulty: int = 160, n_boot: int = 300,
            keep_models: bool = True) -> LabResult:
    """Generate one seed with these knobs and mix, fit every resolver, score the test split.

    ``keep_models=False`` drops the fitted models from ``run`` (the bias lab reads the
    leaderboard and the sources only, and a result without them pickles to about 0.7 MB).

    The bias lab's cache miss (``benchmarks/bench_lab.py``): the seed's knob-free layers come
    from :func:`~core.testbed.generate.generate`'s cache, DSNBF is fitted in a second thread
    (``run_seed(parallel=True)``) and every method's bootstrap reuses one draw of cluster
    multiplicities; none of it changes a number.
    """
    cfg = TestbedConfig(seeds=(seed,), personas_per_difficulty=personas_per_difficulty,
                        bias_scale=bias_scale, dropout_scale=dropout_scale)
    tb = mix_testbed(generate(cfg), mix)
    gt, _ = ground_truth_codes(tb)
    mu = readout(tb)
    run = run_seed(mu, gt, tb.personas, parallel=True)
    # every method is resampled on the same clusters: draw the multiplicities once
    weights = _resample_weights(len(run.gt), n_boot, 42) if len(run.gt) and n_boot >= 1 else None
    rows = []
    for m in FORCED_METHODS:
        correct = run.predictions[m].answer == run.gt
        ci = cluster_bootstrap(correct, b=n_boot, seed=42, weights=weights)
        row = {"method": m, "label": METHOD_LABELS[m], "accuracy": 100 * ci.estimate,
               "ci_low": 100 * ci.low, "ci_high": 100 * ci.high,
               "selective_accuracy": np.nan, "coverage": np.nan}
        sk = f"{m}_skip"
        if sk in SELECTIVE_METHODS and sk in run.predictions:
            p = run.predictions[sk]
            row["selective_accuracy"] = 100 * selective_accuracy(p.answer == run.gt, p.skipped)
            row["coverage"] = 100 * coverage(p.skipped)
        rows.append(row)
    board = pd.DataFrame(rows)
    ranked = board[board["method"] != "source_reachability"]
    board["rank"] = ranked["accuracy"].rank(ascending=False, method="min")
    sources = source_summary(run.atoms, run.gt)
    sources[["coverage", "conflict_rate", "accuracy", "acc_low", "acc_high"]] *= 100
    if not keep_models:
        run = replace(run, models={})
    return LabResult(board, sources, len(run.personas), run)


def what_broke(nominal: LabResult, variant: LabResult) -> dict:
    """The method whose rank moved most and the source whose accuracy moved most.

    Returns a dict with ``method``, ``rank_before``, ``rank_after``, ``accuracy_change`` (pp)
    and ``source``, ``source_accuracy_change`` (pp), ``source_coverage_change`` (pp), plus
    ``changes`` (per-method DataFrame).
    """
    fast = _what_broke_aligned(nominal, variant)
    if fast is not None:
        return fast
    a = nominal.leaderboard.set_index("method")
    b = variant.leaderboard.set_index("method")
    ch = pd.DataFrame({"rank_before": a["rank"], "rank_after": b["rank"],
                       "accuracy_before": a["accuracy"], "accuracy_after": b["accuracy"]})
    ch = ch.dropna(subset=["rank_before"])
    ch["rank_change"] = ch["rank_after"] - ch["rank_before"]
    ch["accuracy_change"] = ch["accuracy_after"] - ch["accuracy_before"]
    key = ch["rank_change"].abs() * 1000 + ch["accuracy_change"].abs()
    m = str(key.idxmax())
    sa = nominal.sources.set_index("source")
    sb = variant.sources.set_index("source")
    dacc = (sb["accuracy"] - sa["accuracy"])
    src = str(dacc.abs().idxmax())
    return {"method": m, "rank_before": int(ch.loc[m, "rank_before"]),
            "rank_after": int(ch.loc[m, "rank_after"]),
            "accuracy_change": float(ch.loc[m, "accuracy_change"]),
            "source": src, "source_accuracy_change": float(dacc[src]),
            "source_coverage_change": float(sb.loc[src, "coverage"] - sa.loc[src, "coverage"]),
            "changes": ch.reset_index()}




def _aligned(a: pd.DataFrame, b: pd.DataFrame, key: str) -> list | None:
    """The key column's values when both frames list the same unique keys in the same order."""
    keys = a[key].tolist()
    return keys if keys == b[key].tolist() and len(set(keys)) == len(keys) else None


def _what_broke_aligned(nominal: LabResult, variant: LabResult) -> dict | None:
    """:func:`what_broke` on plain arrays when both results list the same methods and the
    same sources in the same order (``run_lab``'s always do): the same numbers, frame and
    ties (the first maximum), without pandas' index alignment. None otherwise."""
    methods = _aligned(nominal.leaderboard, variant.leaderboard, "method")
    sources = _aligned(nominal.sources, variant.sources, "source")
    if methods is None or sources is None:
        return None
    a, b = nominal.leaderboard, variant.leaderboard
    keep = ~np.isnan(a["rank"].to_numpy(float))
    if not keep.any():
        return None
    rank_before, rank_after = a["rank"].to_numpy(float)[keep], b["rank"].to_numpy(float)[keep]
    acc_before = a["accuracy"].to_numpy(float)[keep]
    acc_after = b["accuracy"].to_numpy(float)[keep]
    rank_change, acc_change = rank_after - rank_before, acc_after - acc_before
    key = np.abs(rank_change) * 1000 + np.abs(acc_change)
    if np.isnan(key).all():
        return None
    i = int(np.nanargmax(key))
    kept = [m for m, k in zip(methods, keep, strict=True) if k]
    changes = pd.DataFrame({"method": kept, "rank_before": rank_before,
                            "rank_after": rank_after, "accuracy_before": acc_before,
                            "accuracy_after": acc_after, "rank_change": rank_change,
                            "accuracy_change": acc_change})
    dacc = variant.sources["accuracy"].to_numpy(float) - nominal.sources["accuracy"].to_numpy(float)
    if np.isnan(dacc).all():
        return None
    j = int(np.nanargmax(np.abs(dacc)))
    dcov = (variant.sources["coverage"].to_numpy(float)[j]
            - nominal.sources["coverage"].to_numpy(float)[j])
    return {"method": str(kept[i]), "rank_before": int(rank_before[i]),
            "rank_after": int(rank_after[i]), "accuracy_change": float(acc_change[i]),
            "source": str(sources[j]), "source_accuracy_change": float(dacc[j]),
            "source_coverage_change": float(dcov), "changes": changes}


def is_nominal(*, bias_scale: float, dropout_scale: float,
               mix: tuple[float, float, float]) -> bool:
    """Whether a lab setting is the nominal one (equal mix weights count as nominal)."""
    w = np.asarray(mix, float)
    return (float(bias_scale) == NOMINAL["bias_scale"]
            and float(dropout_scale) == NOMINAL["dropout_scale"]
            and bool(w.max() > 0) and bool(np.allclose(w, w.max())))


def _pp(x: float) -> str:
    """A signed change in percentage points, in words, with a true minus sign."""
    return f"{x:+.1f}".replace("-", "\u2212") + " points"


def _setting_phrase(bias_scale: float, dropout_scale: float,
                    mix: tuple[float, float, float]) -> str:
    parts = []
    if bias_scale != 1.0:
        parts.append(f"the bias scale at {bias_scale:g}× ({'more' if bias_scale > 1 else 'less'}"
                     " planner optimism and self-report distortion)")
    if dropout_scale != 1.0:
        parts.append(f"the dropout scale at {dropout_scale:g}× ("
                     f"{'more' if dropout_scale > 1 else 'fewer'} lost device and objective "
                     "days)")
    w = np.asarray(mix, float)
    if not np.allclose(w, w.max()):
        share = w / w.sum()
        parts.append("a difficulty mix of " + " / ".join(
            f"{100 * x:.0f} % {name}" for x, name in
            zip(share, ("stable", "temporal shift", "stated vs revealed"), strict=True)))
    return " and ".join(parts) if parts else "the nominal setting"


def describe_what_broke(broke: dict, *, bias_scale: float, dropout_scale: float,
                        mix: tuple[float, float, float],
                        labels: dict[str, str] | None = None) -> str:
    """Two or three plain sentences, generated from the numbers of :func:`what_broke`.

    Parameters
    ----------
    broke : dict
        The result of :func:`what_broke` (nominal first, variant second).
    bias_scale, dropout_scale, mix : the variant's setting.
    labels : dict, optional
        Display names of methods (default :data:`~core.evaluation.run.METHOD_LABELS`).

    Returns
    -------
    str
        Markdown: what moved, which source moved most and why that plausibly matters.
    """
    labels = dict(METHOD_LABELS if labels is None else labels)
    m = broke["method"]
    name = labels.get(m, m)
    setting = _setting_phrase(float(bias_scale), float(dropout_scale), tuple(mix))
    src = broke["source"]
    src_name = SOURCE_LABELS.get(src, src)
    d_acc, d_src, d_cov = (broke["accuracy_change"], broke["source_accuracy_change"],
                           broke["source_coverage_change"])
    r0, r1 = broke["rank_before"], broke["rank_after"]
    if is_nominal(bias_scale=bias_scale, dropout_scale=dropout_scale, mix=mix):
        return ("This is the nominal setting, so nothing moved: drag the bias or dropout "
                "slider, or change the difficulty mix, to see which resolver breaks.")
    if r0 == r1:
        first = (f"With {setting}, every method keeps its rank; the largest accuracy change is "
                 f"**{name}** ({_pp(d_acc)}), because {METHOD_MECHANISMS.get(m, 'it')}.")
    else:
        verb = "falls" if r1 > r0 else "climbs"
        note = " — the others lost more" if r1 < r0 and d_acc < 0 else ""
        first = (f"With {setting}, **{name}** {verb} from rank {r0} to rank {r1} "
                 f"({_pp(d_acc)}{note}): {METHOD_MECHANISMS.get(m, 'its rule changed')}.")
    second = (f"The source that moved most is **{src_name}**: its accuracy when it answers "
              f"changed by {_pp(d_src)} and its coverage by {_pp(d_cov)}.")
    knob = [k for k, srcs in _KNOB_SOURCES.items() if src in srcs]
    if knob == ["bias_scale"] and bias_scale != 1.0:
        third = (" The bias knobs act on this source directly; methods that learn confusion "
                 "matrices from labels absorb the new bias, fixed-rule methods do not.")
    elif knob == ["dropout_scale"] and dropout_scale != 1.0:
        third = (" The dropout knobs remove its days, so it answers less often (or from "
                 "fewer days); resolvers leaning on it must fall back on biased sources.")
    else:
        third = (" This source is not scaled by the knob you moved; it changes because the "
                 "personas (or their difficulty mix) changed.")
    return f"{first} {second}{third}"
