"""The memory stops' selection rules: which (test person, question) pair shows each failure.

Source: the walkthrough selection protocol of the multi-source memory benchmark (seed 000
§8.7: hard filters, a ranking, then the lexicographic tiebreak ``(persona_id, seed,
question order)``), applied to one failure mode at a time. Pure: arrays in, a ranked frame
out, vectorised over people (the loops run over a handful of questions only).

Every function returns one row per candidate pair with ``rank`` (1 = the example; −1 = fails
a hard filter), ``row`` (the person's position in the arrays), ``seed``, ``persona_id``,
``question_id``, ``q_order``, ``qualifies`` and the columns its rule ranks on; qualifying rows
come first, best first. The rules in words are the stops' ``rule`` texts
(:mod:`core.tour.stops_memory`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.evaluation.walkthrough.selection import bias_rank_table
from core.testbed.questions import BIAS, Q_INDEX, QIDS, QUESTIONS, SOURCES
from core.testbed.vocab import DAY_INDEX

__all__ = ["bias_shift", "bias_steps", "biased_majority", "device_dropout", "planner_optimism",
           "stale_profile", "stated_vs_revealed"]

_PRO, _PLA, _SLF, _OBJ, _DEV = range(len(SOURCES))
_TIEBREAK = ("persona_id", "seed", "q_order")


def _check(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame) -> None:
    n = len(personas)
    if np.shape(gt) != (n, len(QIDS)):
        raise ValueError(f"gt must have shape {(n, len(QIDS))}, got {np.shape(gt)}")
    if np.shape(atoms) != (n, len(QIDS), len(SOURCES)):
        raise ValueError(f"atoms must have shape {(n, len(QIDS), len(SOURCES))}, "
                         f"got {np.shape(atoms)}")
    lacking = [c for c in ("seed", "persona_id") if c not in personas.columns]
    if lacking:
        raise ValueError(f"personas lacks columns: {', '.join(lacking)}")


def _frame(personas: pd.DataFrame, rows: np.ndarray, cols: np.ndarray,
           columns: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """One row per (rows[i], cols[i]) pair with the person's keys and ``columns``."""
    return pd.DataFrame({
        "row": rows.astype(np.int64),
        "seed": personas["seed"].to_numpy()[rows].astype(np.int64),
        "persona_id": personas["persona_id"].astype(str).to_numpy()[rows],
        "question_id": np.asarray(QIDS, dtype=object)[cols],
        "q_order": cols.astype(np.int64),
        **{k: np.asarray(v) for k, v in columns.items()},
    })


def _ranked(frame: pd.DataFrame, keys: Sequence[tuple[str, bool]]) -> pd.DataFrame:
    """Qualifying rows first, then by ``keys`` (column, descending?), then the §8.7
    tiebreak; ``rank`` 1.. for qualifying rows, −1 for the rest."""
    cols = ["qualifies", *(k for k, _ in keys), *_TIEBREAK]
    ascending = [False, *(not desc for _, desc in keys), True, True, True]
    out = frame.sort_values(cols, ascending=ascending, kind="stable").reset_index(drop=True)
    ok = out["qualifies"].to_numpy(bool)
    out.insert(0, "rank", np.where(ok, np.cumsum(ok), -1).astype(np.int64))
    return out


def bias_steps(atom: np.ndarray, gt: np.ndarray, source: int) -> np.ndarray:
    """Signed steps from the truth to ``source``'s answer, positive on the side its bias
    predicts.

    The rule of seed 000 §8.7's soft preferences ("planner positive bias visible in the
    atom"), as :mod:`core.evaluation.walkthrough.selection` applies it: on an ordinal question
    with both answers substantive (no edge labels), ranks are taken in the question's
    bias-shift order and ``rank(atom) − rank(truth)`` is multiplied by the source's bias sign
    (the benchmark specification §2.3; :data:`BIAS`).

    Parameters
    ----------
    atom, gt : ndarray of shape (N, 18)
        The source's answers and the true answers (display codes, −1 = none).
    source : int
        The source's index in :data:`SOURCES`.

    Returns
    -------
    ndarray of shape (N, 18), int64
        Steps in the bias direction (> 0), against it (< 0), or 0 where the answers agree,
        either is missing or an edge label, the question is nominal or the source unbiased.
    """
    atom, gt = np.asarray(atom), np.asarray(gt)
    if atom.shape != gt.shape or atom.ndim != 2 or atom.shape[1] != len(QIDS):
        raise ValueError(f"atom and gt must both have shape (N, {len(QIDS)})")
    table = bias_rank_table().astype(np.int64)
    j = np.broadcast_to(np.arange(len(QIDS)), gt.shape)
    r_atom = np.where(atom >= 0, table[j, np.maximum(atom, 0)], -1)
    r_gt = np.where(gt >= 0, table[j, np.maximum(gt, 0)], -1)
    b = BIAS[:, source].astype(np.int64)[None, :]
    ok = (r_atom >= 0) & (r_gt >= 0)
    return np.where(ok, (r_atom - r_gt) * b, 0)


def bias_shift(atom: np.ndarray, gt: np.ndarray, source: int) -> np.ndarray:
    """Steps the source's answer lies from the truth on its bias side (0 elsewhere): the
    positive part of :func:`bias_steps`."""
    return np.maximum(bias_steps(atom, gt, source), 0)


def biased_majority(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame, *,
                    majority: np.ndarray, ssb_source: np.ndarray,
                    learned: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Rank pairs where a biased majority outvotes an accurate minority (seed 000 §4.1).

    Hard filters: (i) majority vote's answer is wrong; (ii) it is a real majority: more
    sources give it than any other answer (no tie broken at random); (iii) the source the
    best single source trusts for the question gives the right answer. Ranking: the number of
    sources behind the wrong answer (descending), then the number of ``learned`` resolvers
    that answer right (descending), then the §8.7 tiebreak.

    Parameters
    ----------
    gt, atoms : ndarray of shapes (N, 18) and (N, 18, 5)
    personas : DataFrame with N rows (``seed``, ``persona_id``)
    majority : ndarray of shape (N, 18)
        Majority vote's answers.
    ssb_source : ndarray of shape (N, 18)
        The source the best single source trusts (−1 = unknown).
    learned : mapping
        Resolver name → its answers (N, 18): the remedy (NBF, DSNBF).

    Returns
    -------
    DataFrame
        The module's columns plus ``n_wrong`` (sources behind majority vote's answer),
        ``n_runner_up`` (sources behind the next most common answer), ``n_right`` (sources
        giving the truth), ``n_sources``, ``trusted`` (the trusted source's index) and
        ``learned_right``.
    """
    _check(gt, atoms, personas)
    at, mv = np.asarray(atoms), np.asarray(majority)
    kmax = int(max(at.max(initial=0), gt.max(initial=0), mv.max(initial=0))) + 1
    votes = (at[..., None] == np.arange(kmax)).sum(2)                     # (N, 18, K)
    idx = np.maximum(mv, 0)[..., None].astype(np.intp)
    n_wrong = np.take_along_axis(votes, idx, 2)[..., 0]
    others = votes.copy()
    np.put_along_axis(others, idx, -1, 2)
    runner = others.max(2)
    src = np.asarray(ssb_source)
    trusted = np.take_along_axis(at, np.maximum(src, 0)[..., None].astype(np.intp), 2)[..., 0]
    trusted_right = (src >= 0) & (trusted >= 0) & (trusted == gt)
    learned_right = sum(((np.asarray(a) == gt) for a in learned.values()),
                        np.zeros(gt.shape, np.int64))
    qualifies = (mv >= 0) & (mv != gt) & (n_wrong > runner) & trusted_right
    rows, cols = np.indices(gt.shape).reshape(2, -1)
    n_right = np.take_along_axis(votes, np.maximum(gt, 0)[..., None].astype(np.intp), 2)[..., 0]
    frame = _frame(personas, rows, cols, {
        "n_wrong": n_wrong[rows, cols], "n_runner_up": runner[rows, cols],
        "n_right": n_right[rows, cols], "n_sources": (at >= 0).sum(2)[rows, cols],
        "trusted": src[rows, cols], "learned_right": learned_right[rows, cols],
        "qualifies": qualifies[rows, cols]})
    return _ranked(frame, [("n_wrong", True), ("learned_right", True)])


def _before_after(values: np.ndarray, shift_day: np.ndarray) -> tuple[np.ndarray, ...]:
    """Means of (N, 30) daily values before the shift day and from it on, and the 30-day
    standard deviation (NaN where a side has no day)."""
    before = DAY_INDEX[None, :] < shift_day[:, None]
    n_b, n_a = before.sum(1), (~before).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_b = np.where(n_b > 0, np.where(before, values, 0).sum(1) / n_b, np.nan)
        mean_a = np.where(n_a > 0, np.where(~before, values, 0).sum(1) / n_a, np.nan)
    return mean_b, mean_a, values.std(1)


def stale_profile(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame, *,
                  latent: Mapping[str, np.ndarray], stated: Mapping[str, np.ndarray]
                  ) -> pd.DataFrame:
    """Rank pairs where a stale long-term profile states the habit before a temporal shift.

    Pool: people of the temporal-shift class, questions of ``latent`` (those that count or
    average a daily habit the profile states as an average). Hard filters: (i) the profile's
    answer is wrong; (ii) the profile's stated average lies nearer the mean of the days before
    the shift than the mean of the days from it on (it states the old habit). Ranking: how
    far the habit moved, ``|mean after − mean before|`` in units of the 30 days' standard
    deviation (descending), then the §8.7 tiebreak. Seed 000 §8.1 (the profile's early-window
    anchoring).

    Parameters
    ----------
    gt, atoms, personas
        As :func:`biased_majority`; ``personas`` also needs ``difficulty`` and
        ``shift_day``.
    latent : mapping
        Question id → what happened each day, (N, 30), in the profile's unit.
    stated : mapping
        Question id → the profile's stated average, (N,).

    Returns
    -------
    DataFrame
        The module's columns plus ``before``, ``after``, ``stated``, ``moved`` (the
        standardised change) and ``shift_day``.
    """
    _check(gt, atoms, personas)
    if not latent or set(latent) != set(stated) or not set(latent) <= set(QIDS):
        raise ValueError("latent and stated need the same, non-empty question ids")
    shift = personas["shift_day"].fillna(0).to_numpy(np.int64)
    is_shift = (personas["difficulty"].astype(str).to_numpy() == "temporal_shift") & (shift > 1)
    parts = []
    for qid in latent:
        j = Q_INDEX[qid]
        values = np.asarray(latent[qid], float)
        said = np.asarray(stated[qid], float)
        before, after, sd = _before_after(values, shift)
        with np.errstate(invalid="ignore", divide="ignore"):
            moved = np.where(sd > 0, np.abs(after - before) / sd, 0.0)
        prof = atoms[:, j, _PRO]
        old = np.abs(said - before) < np.abs(said - after)
        ok = is_shift & (prof >= 0) & (prof != gt[:, j]) & old
        rows = np.nonzero(is_shift)[0]
        parts.append(_frame(personas, rows, np.full(len(rows), j), {
            "before": before[rows], "after": after[rows], "stated": said[rows],
            "moved": np.nan_to_num(moved[rows]), "shift_day": shift[rows],
            "qualifies": ok[rows]}))
    return _ranked(pd.concat(parts, ignore_index=True), [("moved", True)])


def stated_vs_revealed(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame, *,
                       latent: Mapping[str, np.ndarray], said: Mapping[str, np.ndarray],
                       logs: Mapping[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    """Rank pairs where the self-report states one thing and a log reveals another.

    Pool: people of the stated-vs-revealed class, the ordinal questions of ``said`` (whose
    daily quantity the self-report states) on which it has a directional bias. Hard filters:
    (i) the self-report's answer is shifted in its bias direction (:func:`bias_shift`);
    (ii) the objective log or the device log gives the right answer and records the same
    daily quantity (a key of ``logs``; the objective log is taken when both qualify).
    Ranking: the self-report's steps away from the truth (descending), then how far its
    daily values lie from the log's on the days both recorded, ``|mean reported − mean
    logged|`` in units of the 30 days' standard deviation of what happened (descending),
    then the §8.7 tiebreak. Seed 000 §8.1 (the self-report's bias) and §11.2 (the
    stated-vs-revealed class).

    Parameters
    ----------
    latent, said : mapping
        Question id → what happened and what the self-report states, each day, (N, 30).
    logs : mapping
        ``(question id, log source name)`` → what the log recorded each day, (N, 30), NaN on
        a day it did not record; only logs that record the question's quantity.

    Returns
    -------
    DataFrame
        The module's columns plus ``steps``, ``log`` (the revealing log's source index, −1
        where none) and ``gap`` (the standardised distance, 0 without a log).
    """
    _check(gt, atoms, personas)
    if not said or set(said) != set(latent) or not {q for q, _ in logs} <= set(said):
        raise ValueError("latent and said need the same, non-empty question ids, and logs "
                         "only those")
    stated = personas["difficulty"].astype(str).to_numpy() == "stated_vs_revealed"
    steps = bias_shift(atoms[..., _SLF], gt, _SLF)
    parts = []
    for qid in said:
        j = Q_INDEX[qid]
        if BIAS[j, _SLF] == 0 or not QUESTIONS[j].ordinal:
            continue
        log = np.full(len(personas), -1, np.int64)
        gap = np.zeros(len(personas))
        for s in (_DEV, _OBJ):  # the objective log last, so it wins when both qualify
            values = logs.get((qid, SOURCES[s]))
            if values is None:
                continue
            right = (atoms[:, j, s] >= 0) & (atoms[:, j, s] == gt[:, j])
            both = ~np.isnan(values) & ~np.isnan(said[qid])
            n = both.sum(1)
            with np.errstate(invalid="ignore", divide="ignore"):
                dist = np.abs(np.where(both, said[qid] - values, 0).sum(1) / n)
                sd = np.asarray(latent[qid], float).std(1)
                g = np.where((n > 0) & (sd > 0), dist / sd, 0.0)
            take = right & (n > 0)
            log = np.where(take, s, log)
            gap = np.where(take, g, gap)
        rows = np.nonzero(stated)[0]
        parts.append(_frame(personas, rows, np.full(len(rows), j), {
            "steps": steps[rows, j], "log": log[rows], "gap": gap[rows],
            "qualifies": (steps[rows, j] > 0) & (log[rows] >= 0)}))
    if not parts:
        raise ValueError("no question of said is ordinal with a biased self-report")
    return _ranked(pd.concat(parts, ignore_index=True), [("steps", True), ("gap", True)])


def planner_optimism(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame, *,
                     planned: Mapping[str, np.ndarray], actual: Mapping[str, np.ndarray],
                     rosier: Mapping[str, int]) -> pd.DataFrame:
    """Rank pairs where the planner's answer is shifted in its optimism direction.

    Pool: every test person, questions of ``planned`` (those that count days on which a
    daily habit crosses a line, which the planner states day by day). Hard filter: the
    planner's answer is shifted in its bias direction (:func:`bias_shift`, so it is wrong).
    Ranking: its steps away from the truth (descending), then the share of days on which the
    plan was rosier than the day (descending), then the §8.7 tiebreak. Seed 000 §8.1 (the
    planning fallacy) and §8.7 (soft preference "planner positive bias visible").

    Parameters
    ----------
    planned, actual : mapping
        Question id → the plan and what happened each day, (N, 30), one unit per question.
    rosier : mapping
        Question id → +1 when a plan above the day is the rosier one (sleep, exercise), −1
        when a plan below it is (work hours).

    Returns
    -------
    DataFrame
        The module's columns plus ``steps``, ``rosier_days`` and ``rosier_share``.
    """
    _check(gt, atoms, personas)
    if not planned or set(planned) != set(actual) or set(planned) != set(rosier):
        raise ValueError("planned, actual and rosier need the same, non-empty question ids")
    steps = bias_shift(atoms[..., _PLA], gt, _PLA)
    parts = []
    everyone = np.arange(len(personas))
    for qid in planned:
        j = Q_INDEX[qid]
        gap = (np.asarray(planned[qid], float) - np.asarray(actual[qid], float)) * rosier[qid]
        days = (gap > 0).sum(1)
        parts.append(_frame(personas, everyone, np.full(len(everyone), j), {
            "steps": steps[:, j], "rosier_days": days, "rosier_share": days / gap.shape[1],
            "qualifies": steps[:, j] > 0}))
    frame = pd.concat(parts, ignore_index=True)
    return _ranked(frame, [("steps", True), ("rosier_share", True)])


def device_dropout(gt: np.ndarray, atoms: np.ndarray, personas: pd.DataFrame, *,
                   qids: Sequence[str], device_full: np.ndarray, gt_full: np.ndarray,
                   lost: np.ndarray, exercised: np.ndarray) -> pd.DataFrame:
    """Rank pairs where the device log's answer is wrong only because of the days it lost.

    Pool: every test person, the questions ``qids`` (exercise questions the device answers).
    Hard filters: (i) the device log's answer is wrong; (ii) the person exercised on at least
    one day the device lost; (iii) with every day recorded (``device_full``, ``gt_full``: the
    same people and days regenerated at dropout scale 0) the device's answer is right and
    the true answer unchanged. Ranking: the lost exercise days (descending), then their share
    of the lost days (descending), then the §8.7 tiebreak. Seed 000 §8.1 (device-log
    missingness: non-wear, connectivity loss, battery limits).

    Parameters
    ----------
    device_full, gt_full : ndarray of shape (N, 18)
        The device's answers and the truth with every day recorded.
    lost, exercised : ndarray of shape (N, 30), bool
        Days the device lost; days the person exercised.

    Returns
    -------
    DataFrame
        The module's columns plus ``lost_days``, ``lost_exercise`` and ``lost_share``.
    """
    _check(gt, atoms, personas)
    lost, exercised = np.asarray(lost, bool), np.asarray(exercised, bool)
    if lost.shape != exercised.shape or lost.shape[0] != len(personas):
        raise ValueError("lost and exercised must both have shape (N, 30)")
    n_lost = lost.sum(1)
    n_lost_ex = (lost & exercised).sum(1)
    dev = atoms[..., _DEV]
    fixed = (np.asarray(device_full) == gt) & (np.asarray(gt_full) == gt)
    qualifies = (dev >= 0) & (dev != gt) & (n_lost_ex > 0)[:, None] & fixed
    cols = np.array([Q_INDEX[q] for q in qids], np.int64)
    rows, k = np.nonzero(np.ones((len(personas), len(cols)), bool))
    cols = cols[k]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n_lost > 0, n_lost_ex / np.maximum(n_lost, 1), 0.0)
    frame = _frame(personas, rows, cols, {
        "lost_days": n_lost[rows], "lost_exercise": n_lost_ex[rows], "lost_share": share[rows],
        "qualifies": qualifies[rows, cols]})
    return _ranked(frame, [("lost_exercise", True), ("lost_share", True)])
