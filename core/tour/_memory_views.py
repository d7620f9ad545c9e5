"""The memory stops that compare answers: a biased majority, and a device that lost days.

Source: the multi-source memory benchmark (seed 000): §4.1 (a biased majority can outvote an
accurate minority), §8.1 (the device log's missing days: non-wear, connectivity loss,
battery limits) and §8.7 (the selection protocol the rules of :mod:`._memory_rules` follow).
One function per stop, ``view(data) -> StopView``; the words of each stop (its rule, question,
remedy) are in :mod:`core.tour.stops_memory`.

Every view re-checks its example against the data it shows (``shows_failure``), so the check
does not merely repeat the rule that picked the example.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.evaluation.walkthrough.views import day_views
from core.testbed.questions import QIDS, QUESTIONS, SOURCES
from core.testbed.vocab import DAY_INDEX, N_DAYS

from . import _memory_rules as rules
from ._memory_common import (
    no_example,
    of,
    pair_view,
    pool_or_note,
    qualifying,
    quote,
    resolvers_on,
    series,
    top_pair,
)
from ._memory_data import no_dropout, pool_testbed, store_settings
from ._memory_words import METHOD_WORDS, SOURCE_NOUNS, answer_words, source_label
from .model import Chart, StopView, TourData

__all__ = ["DEVICE_QUESTIONS", "biased_majority_view", "device_dropout_view"]

_DEV = SOURCES.index("device_log")


# ---------------------------------------------------------------- 1 biased majority
def _learned_words(right: dict[str, bool]) -> str:
    """What the two learned confusion-matrix resolvers did on the example, in one sentence."""
    if right["dsnbf"] and right["nbf"]:
        return ("Both learned confusion-matrix resolvers, DSNBF and naive Bayes fusion (NBF), "
                "answer right: they learned from the training people how far to trust each "
                "source on this question.")
    if not (right["dsnbf"] or right["nbf"]):
        return ("Neither learned confusion-matrix resolver (DSNBF, or naive Bayes fusion, NBF) "
                "gets it right here: their learned trust is not enough against this "
                "majority.")
    good, bad = ("DSNBF", "NBF") if right["dsnbf"] else ("NBF", "DSNBF")
    return (f"Of the learned confusion-matrix resolvers, {good} answers right and {bad} "
            "wrong.")


def biased_majority_view(data: TourData) -> StopView:
    """The biased-majority stop (seed 000 §4.1): majority vote wrong, the best single source
    right, the largest wrong majority first (:func:`._memory_rules.biased_majority`)."""
    key = "biased-majority"
    pool, failed = pool_or_note(key, data)
    if failed is not None:
        return failed
    settings = store_settings(data)
    mv, ssb = pool.answers["majority_vote"], pool.answers["ssb"]
    ranked = rules.biased_majority(
        pool.gt, pool.atoms, pool.personas, majority=mv, ssb_source=pool.ssb_source,
        learned={m: pool.answers[m] for m in ("dsnbf", "nbf")})
    n_pairs, n_hit = pool.gt.size, int(ranked["qualifies"].sum())
    overall = (("Majority vote right, all test pairs", of(int((mv == pool.gt).sum()), n_pairs)),
               ("Best single source right, all test pairs",
                of(int((ssb == pool.gt).sum()), n_pairs)),
               ("Pairs where majority vote is wrong and the best single source right",
                of(n_hit, n_pairs)))
    picked = top_pair(ranked)
    if picked is None:
        note = ("No test pair in this store has majority vote wrong, by a real "
                "majority, while the best single source is right.")
        return no_example(key, note, settings, overall)
    top, i, j, qid = picked
    gt, atoms, trusted = int(pool.gt[i, j]), pool.atoms[i, j], int(top["trusted"])
    status = {True: "right", False: "wrong"}
    rows = []
    for s, src in enumerate(SOURCES):
        a = int(atoms[s])
        rows.append({"who": source_label(src), "role": "source",
                     "answer": answer_words(qid, a),
                     "status": "none" if a < 0 else status[a == gt],
                     "text": ("the source the best single source trusts for this question"
                              if s == trusted else "")})
    for m in ("majority_vote", "ssb", "nbf", "dsnbf"):
        a = int(pool.answers[m][i, j])
        rows.append({"who": METHOD_WORDS[m], "role": "resolver",
                     "answer": answer_words(qid, a), "status": status[a == gt], "text": ""})
    rows.append({"who": "The truth", "role": "truth", "answer": answer_words(qid, gt),
                 "status": "right", "text": "what really happened"})
    n_wrong, n_src, n_right = int(top["n_wrong"]), int(top["n_sources"]), int(top["n_right"])
    wrong_sources = [SOURCE_NOUNS[s] for s in SOURCES
                     if int(atoms[SOURCES.index(s)]) == int(mv[i, j])]
    chart = Chart("answers", pd.DataFrame(rows),
                  title=f"{n_wrong} sources outvote the one the best single source trusts",
                  x_title="Answer", caption=(
                      "One row per source and per resolver; the diamond marks the true "
                      "answer. Majority vote follows the answer with the most sources in "
                      "its column."))
    learned = {m: bool(pool.answers[m][i, j] == gt) for m in ("dsnbf", "nbf")}
    person = pool.personas.iloc[i]
    seed = int(person["seed"])
    answer = (f"Majority vote answers {quote(qid, int(mv[i, j]))}, with {n_wrong} of the "
              f"{n_src} sources behind it, and it is wrong: the truth is {quote(qid, gt)}, "
              f"which {SOURCE_NOUNS[SOURCES[trusted]]} gives.")
    reason = (f"In the chart, {', '.join(wrong_sources[:-1])} and {wrong_sources[-1]} line up "
              f"on the same wrong answer; counting them counts one shared error "
              f"{n_wrong} times. The best single source ignores the count and follows "
              f"{SOURCE_NOUNS[SOURCES[trusted]]}, the source right most often on this "
              f"question among the {pool.n_train[seed]:,} training people of this batch. "
              + _learned_words(learned))
    check = (int(mv[i, j]) != gt and int(ssb[i, j]) == gt and int(atoms[trusted]) == gt
             and n_wrong > int(top["n_runner_up"]))
    evidence = (("Sources behind majority vote's wrong answer", of(n_wrong, n_src)),
                ("Sources giving the true answer", of(n_right, n_src)),
                ("Source the best single source trusts here",
                 f"{source_label(trusted)}, chosen on {pool.n_train[seed]:,} training people"),
                ("On this pair", f"majority vote {status[int(mv[i, j]) == gt]}, best single "
                                 f"source {status[int(ssb[i, j]) == gt]}, DSNBF "
                                 f"{status[learned['dsnbf']]}, NBF {status[learned['nbf']]}"),
                *overall)
    return pair_view(key, pool, i, qid, settings, chart, answer, reason, evidence, check)


# ---------------------------------------------------------------- 5 device dropout
#: Exercise questions the device log answers (the question spec: topic and informative
#: sources).
DEVICE_QUESTIONS = tuple(q.qid for q in QUESTIONS
                         if q.topic == "exercise" and "device_log" in q.informative)


def device_dropout_view(data: TourData) -> StopView:
    """The device-dropout stop (seed 000 §8.1): the device's answer wrong only because of
    the days it lost (:func:`._memory_rules.device_dropout`)."""
    key = "device-dropout"
    pool, failed = pool_or_note(key, data)
    if failed is not None:
        return failed
    settings = store_settings(data)
    full = no_dropout(data)
    if isinstance(full, str):
        note = ("This stop compares the device with a device that recorded every "
                f"day, but {full}.")
        return no_example(key, note, settings)
    tb = pool_testbed(data)
    exercised = np.asarray(tb.events["did_exercise"], bool)
    ranked = rules.device_dropout(pool.gt, pool.atoms, pool.personas, qids=DEVICE_QUESTIONS,
                                  device_full=full.device, gt_full=full.gt, lost=full.lost,
                                  exercised=exercised)
    cols = [QIDS.index(q) for q in DEVICE_QUESTIONS]
    dev, gt = pool.atoms[:, cols, _DEV], pool.gt[:, cols]
    stays = full.gt[:, cols] == gt
    wrong, fixed = (dev >= 0) & (dev != gt), full.device[:, cols] == gt
    overall = (("Device wrong on exercise questions", of(int(wrong.sum()),
                                                          int((dev >= 0).sum()))),
               ("…of which right once every day is recorded (truth unchanged)",
                of(int((wrong & fixed & stays).sum()), int(wrong.sum()))),
               qualifying(ranked))
    picked = top_pair(ranked)
    if picked is None:
        note = ("No test pair in this store has the device's exercise answer wrong "
                "only because of days it lost on which the person exercised.")
        return no_example(key, note, settings, overall)
    top, i, j, qid = picked
    views = day_views(tb, qid=qid, row=i)
    latent, device = series(views.frame, "latent"), series(views.frame, "device_log")
    lost = np.isnan(device)
    did = exercised[i]
    text_true = [f"day {d}: exercised {v:.0f} minutes" if e else f"day {d}: no exercise"
                 for d, v, e in zip(DAY_INDEX, latent, did, strict=True)]
    text_dev = [f"day {d}: no record (the device lost this day)" if m
                else f"day {d}: {v:.0f} minutes on a detected workout" if v > 0
                else f"day {d}: no workout detected"
                for d, v, m in zip(DAY_INDEX, device, lost, strict=True)]
    chart = Chart("days", pd.DataFrame({
        "series": ["What happened: exercise minutes"] * N_DAYS
                  + ["Device log: minutes on detected workouts"] * N_DAYS,
        "day": np.tile(DAY_INDEX, 2).astype(int),
        "value": np.concatenate([latent, device]), "text": text_true + text_dev}),
        title="The device lost days on which the person exercised", x_title="Day",
        caption=("Top row: what really happened; bottom row: what the device recorded. A "
                 "crossed grey cell is a day without a device record, not a day without "
                 "exercise."))
    d_code, gt_code, f_code = (int(pool.atoms[i, j, _DEV]), int(pool.gt[i, j]),
                               int(full.device[i, j]))
    n_lost, n_lost_ex = int(lost.sum()), int((lost & did).sum())
    seen, total = int((~lost & did).sum()), int(did.sum())
    answer = (f"The device log answers {quote(qid, d_code)}; the truth is "
              f"{quote(qid, gt_code)}. With every day recorded the same device answers "
              f"{quote(qid, f_code)}, so the error comes from the days it lost, not from what "
              f"the person did.")
    reason = (f"In the chart the crossed cells are the {n_lost} days without a device record; "
              f"on {n_lost_ex} of them the top row shows exercise. The device can only answer "
              f"from the workouts it saw, {seen} of the person's {total} exercise days, so "
              f"the exercise on the lost days is missing from its answer.")
    check = (d_code != gt_code and f_code == gt_code and int(full.gt[i, j]) == gt_code
             and n_lost_ex > 0 and bool(np.array_equal(lost, full.lost[i])))
    right = [SOURCE_NOUNS[s] for k, s in enumerate(SOURCES) if int(pool.atoms[i, j, k]) == gt_code]
    evidence = (("Days the device lost", of(n_lost, N_DAYS)),
                ("Lost days on which the person exercised", of(n_lost_ex, n_lost)),
                ("Exercise days the device saw", of(seen, total)),
                ("Device's answer with every day recorded",
                 f"{answer_words(qid, f_code)} (right; the truth is unchanged)"),
                ("Sources giving the true answer", (", ".join(right) if right else "none")),
                resolvers_on(pool, i, j),
                *overall)
    return pair_view(key, pool, i, qid, settings, chart, answer, reason, evidence, check)
