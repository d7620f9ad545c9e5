"""The bridge from seed 003 to the memory testbed of seed 000 (issue 4, item 6).

Items are the test (persona, question) pairs a resolver answered. Two confidence rules score
the same answers:

* **A — the resolver's posterior** (``confidence`` of DSNBF, NBF, …: the posterior maximum);
* **B — a frozen source-tier prior**, seed 003's EG rule transplanted: the answer gets the tier
  of the most direct source whose atom agrees with it — direct records (device, objective log)
  0.55, the person's own reports (daily self-report) 0.35, claims (planner, profile) 0.20 — and
  0.20 when no source agrees. Only the confidence changes, never the answer.

Labels: **Y** = the answer equals ground truth; **Z** = the answer equals one source's direct
readout taken as a finite reference (a null atom or another label counts as false — the
"unmatched = false" convention). The exact identity of Eq. (1)–(2) then says how much of the
Brier gap is moved by omitted truths (T_omit) and false matches (T_fp), and where (by family).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..testbed.questions import QIDS, QUESTIONS, SOURCES, TYPE_NAMES
from .label_source import crossover_prevalence, label_source_decomposition

__all__ = ["TIER_PRIOR", "bridge_analysis", "bridge_items"]

TIER_PRIOR = {"device_log": 0.55, "objective_log": 0.55, "daily_self_report": 0.35,
              "planner": 0.20, "profile_ltm": 0.20}
_NO_SUPPORT = 0.20


def bridge_items(runs: Sequence, *, method: str = "dsnbf",
                 reference: str = "daily_self_report") -> pd.DataFrame:
    """One row per answered test item: seed, persona_id, question_id, family, c_a (the
    resolver's confidence), c_b (source-tier prior), y (answer = GT), z (answer = the
    reference source's atom), cluster (seed:persona)."""
    if reference not in SOURCES:
        raise ValueError(f"reference must be one of {', '.join(SOURCES)}, got {reference!r}")
    tier = np.array([TIER_PRIOR[s] for s in SOURCES])
    frames = []
    for r in runs:
        if method not in r.predictions:
            raise ValueError(f"method {method!r} was not run")
        p = r.predictions[method]
        agree = (r.atoms == p.answer[..., None]) & (r.atoms >= 0)  # (N, Q, S)
        c_b = np.where(agree.any(2), np.where(agree, tier, 0).max(2), _NO_SUPPORT)
        ref = r.atoms[:, :, SOURCES.index(reference)]
        n = len(r.personas)
        pid = np.repeat(r.personas["persona_id"].to_numpy(), len(QIDS))
        frames.append(pd.DataFrame({
            "seed": r.seed, "persona_id": pid,
            "question_id": np.tile(np.asarray(QIDS, dtype=object), n),
            "family": np.tile(np.asarray([q.family for q in QUESTIONS], dtype=object), n),
            "c_a": np.clip(p.confidence, 0, 1).reshape(-1),
            "c_b": c_b.reshape(-1),
            "y": (p.answer == r.gt).reshape(-1).astype(float),
            "z": ((ref >= 0) & (ref == p.answer)).reshape(-1).astype(float),
            "cluster": [f"{r.seed}:{x}" for x in pid],
        }))
    return pd.concat(frames, ignore_index=True)


def bridge_analysis(items: pd.DataFrame) -> pd.DataFrame:
    """The label-source decomposition overall and per question family.

    Returns one row per group (``all`` first): n, prevalence under Y and Z, the two rules'
    means and the crossover (a + b)/2, Brier gaps under Y and Z (A − B; negative favours A),
    T_omit, T_fp and whether the ranking reverses.
    """
    rows = []
    groups = [("all", "All questions", items)]
    groups += [(f, TYPE_NAMES[f], g) for f, g in items.groupby("family", sort=False)]
    for key, label, g in groups:
        d = label_source_decomposition(g["c_a"], g["c_b"], g["y"], g["z"])
        a, b = float(g["c_a"].mean()), float(g["c_b"].mean())
        rows.append({"group": key, "label": label, "n": len(g),
                     "prevalence_y": float(g["y"].mean()), "prevalence_z": float(g["z"].mean()),
                     "mean_a": a, "mean_b": b, "crossover": crossover_prevalence(a, b),
                     "gap_y": d.gap_y, "gap_z": d.gap_z, "t_omit": d.t_omit, "t_fp": d.t_fp,
                     "reverses": bool(d.reverses)})
    return pd.DataFrame(rows)
