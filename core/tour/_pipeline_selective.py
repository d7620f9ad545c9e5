"""The tour's "answer or abstain" stop: what a calibrated threshold buys, and what it costs.

Seed 000 §4.1 ("Main Results and Selective QA") and Appendix 9.2 / 10.2: DSNBF with skipping
abstains when at least two sources are active and its posterior margin (top-1 minus top-2)
is below a threshold θ that each seed's calibration split chose by F0.5
(:mod:`core.evaluation.selective`). The Selective QA page refits the method on every seed of
the store (its skip rule needs the fitted model) and opens at the **median** of the per-seed
calibrated thresholds, the same θ for every seed (:mod:`core.evaluation.selective_view`);
this stop reads that view: the sweep over θ (coverage and selective accuracy, per seed then
the mean), and at the median θ the pooled counts of what was answered and what was held back.

Selection rule (:func:`selective_view_of`): the method is DSNBF with skipping (the paper's
headline selective resolver, §4.1) at the median calibrated θ. The example question is,
among the (person, question) pairs the threshold holds back whose forced answer would have
been wrong, the one with the smallest posterior margin; ties by seed, person id and question
order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..evaluation.cached import load_arrays
from ..evaluation.run import SeedRun, run_seeds
from ..evaluation.selective import skip_rule, sweep, threshold_metrics
from ..evaluation.selective_view import threshold_choice
from ..resolvers.nbf import margin
from ..resolvers.registry import method_short
from ..testbed.questions import QIDS, QUESTIONS
from ..testbed.words import label_words
from ._pipeline_store import NEEDS_SPLITS, missing_splits
from ._pipeline_words import count, person_words, question_words, share
from .model import Chart, StopView, TourData

__all__ = ["KEY", "METHOD", "refit_runs", "selective_view_of"]

KEY = "answer-or-abstain"
METHOD = "dsnbf_skip"


def refit_runs(con, method: str = METHOD) -> list[SeedRun]:
    """``method`` refitted on every seed of the store (what the Selective QA page does).

    ``ValueError`` when a seed lacks train, calibration or test people.
    """
    personas, gt, atoms = load_arrays(con)
    return run_seeds(atoms, gt, personas, methods=[method])


def _chart(sw: pd.DataFrame, forced: float, theta: float, label: str) -> Chart:
    rows = []
    for col, series in (("coverage", "coverage (the share of questions answered)"),
                        ("selective_accuracy", "accuracy on the questions answered")):
        part = sw[["theta", col]].dropna()
        rows.append(pd.DataFrame({"x": part["theta"], "y": part[col], "series": series,
                                  "marker": np.isclose(part["theta"], theta)}))
    rows.append(pd.DataFrame({"x": sw["theta"], "y": forced,
                              "series": "accuracy when answering everything",
                              "marker": False}))
    return Chart("lines", pd.concat(rows, ignore_index=True),
                 title="Raising the threshold: fewer answers, more of them right",
                 x_title=f"threshold on the {label.removesuffix(' θ')}",
                 y_title="% (mean over the random seeds)",
                 caption="Left of the line the resolver answers almost everything; moving right "
                         "it holds back the questions where it is least sure. Accuracy on what it "
                         "answers rises while coverage falls.",
                 marker=float(theta), marker_label="calibrated threshold", y_range=(0.0, 100.0))


def selective_view_of(runs: Sequence[SeedRun]) -> StopView:
    """The stop's view over fresh runs of :data:`METHOD` (module docstring)."""
    choice = threshold_choice(runs, METHOD)
    theta = choice.median
    sw = sweep(list(runs), METHOD)
    at = threshold_metrics(list(runs), METHOD, theta=theta)
    cov, sel = float(at["coverage"].mean()), float(at["selective_accuracy"].mean())
    forced = float(at["forced_accuracy"].mean())
    parts, held_right, held_wrong = [], 0, 0
    for r in runs:
        correct = r.predictions[METHOD].answer == r.gt
        held = skip_rule(r, METHOD).skipped(theta)
        held_right += int((held & correct).sum())
        held_wrong += int((held & ~correct).sum())
        p, q = np.nonzero(held & ~correct)
        parts.append(pd.DataFrame({
            "seed": r.seed, "persona_id": r.personas["persona_id"].to_numpy(str)[p],
            "difficulty": r.personas["difficulty"].to_numpy(str)[p], "q": q,
            "name": (r.personas["name"] if "name" in r.personas
                     else r.personas["persona_id"]).to_numpy(str)[p],
            "margin": margin(r.predictions[METHOD].extra["proba"])[p, q],
            "answer": r.predictions[METHOD].answer[p, q], "gt": r.gt[p, q]}))
    n = int(at["n"].sum())
    answered, errors = int(at["answered"].sum()), int(at["errors"].sum())
    settings = (
        ("Resolver", f"the learned confusion-matrix resolver that may abstain "
                     f"({method_short()[METHOD]}): it holds an answer back when at least two "
                     "sources speak and its two likeliest answers are close"),
        ("Threshold", f"{theta:.2f} on the gap between its two likeliest answers: the median "
                      "of the thresholds each random seed's calibration people chose ("
                      + ", ".join(f"{c:.2f}" for c in choice.calibrated) + ")"),
        ("People", f"{n // len(QIDS):,} test people × 18 questions = {n:,} answers, "
                   f"{len(runs)} random seeds"))
    evidence = (
        ("Accuracy when answering everything", share(forced)),
        ("Accuracy on the questions answered, at the threshold", share(sel)),
        ("Coverage (the share of questions answered)", share(cov)),
        ("Answers given", count(answered, n)),
        ("Wrong answers among those given", count(errors, answered) if answered else "none"),
        ("Held back that would have been wrong", count(held_wrong, n - answered)
         if n > answered else "none"),
        ("Held back that would have been right", count(held_right, n - answered)
         if n > answered else "none"))
    cand = pd.concat(parts, ignore_index=True).sort_values(
        ["margin", "seed", "persona_id", "q"], kind="mergesort")
    buys, costs = sel > forced, cov < 100
    link = (("sq_method", method_short()[METHOD]), ("theta", f"{theta:.2f}"))
    if cand.empty or not (buys and costs):
        return StopView(KEY, (), settings, None, "", "", link, evidence, False,
                        note=f"At the calibrated threshold {theta:.2f} this store's resolver "
                             "holds nothing back, or gains nothing by it: too few calibration "
                             "people to show the trade-off.")
    top = cand.iloc[0]
    qid = QIDS[int(top["q"])]
    labels = QUESTIONS[int(top["q"])].labels
    example = (
        ("Resolver", f"DSNBF with skipping, at threshold {theta:.2f}"),
        ("Person", person_words(top["persona_id"], top["seed"], name=top["name"],
                                difficulty=top["difficulty"])),
        ("A question it holds back", question_words(qid)),
        ("What it would have answered", f"“{label_words(qid, labels[int(top['answer'])])}”; "
                                        f"the truth is "
                                        f"“{label_words(qid, labels[int(top['gt'])])}”"))
    most = "right" if held_right > held_wrong else "wrong"
    answer = (f"{'No' if most == 'right' else 'Yes'}: of the {n - answered:,} answers it "
              f"holds back, {held_right:,} would have been right and {held_wrong:,} wrong; "
              f"still, accuracy on what it answers rises from {forced:.1f} % to {sel:.1f} % "
              f"at a coverage of {cov:.1f} %.")
    held_err, given_err = 100 * held_wrong / (n - answered), 100 * errors / max(answered, 1)
    reason = (f"The held-back answers would have been wrong {held_err:.0f} % of the time, the "
              f"ones it gives {given_err:.0f} %, so dropping them raises accuracy on the rest; "
              "but every right answer held back is a question the person gets no answer to. In "
              "the chart, moving the threshold to the right buys accuracy with coverage, step "
              "by step.")
    return StopView(KEY, example, settings, _chart(sw, forced, theta, choice.label), answer,
                    reason, link, evidence, True)


def selective_view(data: TourData) -> StopView:
    """:func:`selective_view_of` over the store's runs (refitted once per :class:`TourData`)."""
    con = data.connection()
    if missing_splits(con):
        return StopView(KEY, (), (), None, "", "", (), (), False, note=NEEDS_SPLITS)
    return selective_view_of(data.memo("pipeline:selective-runs", lambda: refit_runs(con)))
