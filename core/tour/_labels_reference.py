"""The incomplete-reference stop's computation: on the real NQ-open answers, the pair of
confidence rules whose Brier ranking exact match and people's judgements reverse most plainly.

Data: the shipped NQ-open files (``data/nq301/``, :func:`core.calibration.nq301.
load_shipped_nq301`; the store's ``nq301_answers`` table is a copy of them): 1,490 answers of
12 question-answering systems to 301 questions, each marked right or wrong by people (Y, the
``Acceptable?`` judgements of Kamalloo et al. 2023) and by exact match against the fixed
answer list, an unmatched answer counting as wrong (Z). Seed 003 §5.1 ("A released NQ-open
pipeline reverses its ranking"): "The crossover criterion correctly classifies all 13
reversals and 8 non-reversals among 21 pairs."

The rules are the 21 pairs of :func:`core.calibration.nq301_rules.rule_pairs` (seven logit
shifts of cross-system agreement to the average confidences .2, .3, …, .8: the same order of
the answers, different overall confidence), scored by the Brier score under each label (seed
003 §3 Eq. 1–2, the exact label-source decomposition; §5.2, the crossover (a + b)/2), with
95 % question-cluster bootstrap intervals (2,000 replicates, seed 0), exactly as the Ranking
reversal page computes them (``pages._shared.seed003.run_rule_pairs``).

Selection rule (:func:`select_pair`): keep the pairs whose gap under exact match and under
people have opposite signs with both intervals excluding zero; take the pair whose smaller
winning margin ``min(|gap under exact match|, |gap under people|)`` is largest; ties go to the
rule names in alphabetical order (rule A, then rule B).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.calibration.nq301 import SEED_003_NQ301, load_shipped_nq301
from core.calibration.nq301_rules import DEFAULT_MEANS, RulePairs, location_rules, rule_pairs

from ._labels_text import pct
from .model import Chart, StopView, TourData

__all__ = ["KEY", "ReferencePair", "incomplete_reference_view", "nq_answers", "nq_pairs",
           "nq_prevalence_step", "nq_selected", "reference_link", "rule_words", "select_pair",
           "selected_pair"]

#: The stop's key.
KEY = "incomplete-reference"
#: Bootstrap replicates and seed of the gap intervals (those of the Ranking reversal page).
N_BOOT, BOOT_SEED = 2000, 0
#: The Ranking reversal page's prevalence slider step (``rr_prev``).
PREV_STEP = 0.01
_NO_DATA = ("The NQ-open files (data/nq301/items.parquet and answers.parquet) are missing, "
            "so the real case cannot be shown.")


def nq_answers() -> pd.DataFrame | None:
    """The 1,490 labelled answers with every rule as a column (agreement, its seven location
    shifts ``agree@m`` and the seven constants ``const@m``), as the Ranking reversal and Pilot
    budget pages load them; None when the shipped files are absent."""
    shipped = load_shipped_nq301()
    if shipped is None:
        return None
    answers = shipped[1].reset_index(drop=True)
    return pd.concat([answers, location_rules(answers),
                      location_rules(answers, family="constant")], axis=1)


def nq_pairs(answers: pd.DataFrame) -> RulePairs:
    """The 21 rule pairs of seed 003 §5.1 on ``answers`` (the page's bootstrap settings)."""
    return rule_pairs(answers, n_boot=N_BOOT, seed=BOOT_SEED)


@dataclass(frozen=True)
class ReferencePair:
    """The selected pair and the counts behind it (gaps are ``R(A) − R(B)``, Eq. 1: negative
    favours rule A).

    Attributes
    ----------
    rule_a, rule_b : str
        The rules' names (``agree@0.20`` …); A has the lower average confidence.
    mean_a, mean_b : float
        Their average confidences.
    brier_z_a, brier_z_b, brier_y_a, brier_y_b : float
        Brier scores under exact match (Z) and under people (Y).
    gap_z, gap_y : float
        ``R_Z(A) − R_Z(B)`` and ``R_Y(A) − R_Y(B)``.
    gap_z_lo, gap_z_hi, gap_y_lo, gap_y_hi : float
        Their 95 % question-cluster bootstrap intervals.
    t_omit, t_fp : float
        Eq. 2: the parts of ``gap_z − gap_y`` due to right answers exact match does not list
        and to wrong answers it matches.
    midpoint : float
        The crossover (a + b)/2 (§5.2).
    predicted : bool
        The crossover lies strictly between the two prevalences.
    auroc : float
        The rules' AUROC against people's marks (the same for both: they order the answers
        alike).
    prevalence_z, prevalence_y : float
        Shares of answers marked right by exact match and by people.
    n_answers, n_questions : int
    n_pairs, n_reversals, n_reversals_clear : int
        Pairs, pairs that reverse, and those with both intervals excluding zero (the
        candidates of the rule).
    """

    rule_a: str
    rule_b: str
    mean_a: float
    mean_b: float
    brier_z_a: float
    brier_z_b: float
    brier_y_a: float
    brier_y_b: float
    gap_z: float
    gap_y: float
    gap_z_lo: float
    gap_z_hi: float
    gap_y_lo: float
    gap_y_hi: float
    t_omit: float
    t_fp: float
    midpoint: float
    predicted: bool
    auroc: float
    prevalence_z: float
    prevalence_y: float
    n_answers: int
    n_questions: int
    n_pairs: int
    n_reversals: int
    n_reversals_clear: int


def select_pair(pairs: pd.DataFrame) -> int | None:
    """The row of ``pairs`` (:attr:`RulePairs.pairs`) the module's rule selects, or None.

    Raises
    ------
    ValueError
        When the pairs carry no bootstrap intervals (computed with ``n_boot=0``).
    """
    need = {"rule_a", "rule_b", "gap_z", "gap_y", "gap_z_lo", "gap_z_hi", "gap_y_lo",
            "gap_y_hi"}
    if not need <= set(pairs.columns) or pairs[["gap_z_lo", "gap_y_lo"]].isna().all().all():
        raise ValueError("the pairs need gaps with bootstrap intervals (rule_pairs with "
                         "n_boot > 0)")
    z, y = pairs["gap_z"].to_numpy(float), pairs["gap_y"].to_numpy(float)
    clear_z = (pairs["gap_z_lo"].to_numpy(float) > 0) | (pairs["gap_z_hi"].to_numpy(float) < 0)
    clear_y = (pairs["gap_y_lo"].to_numpy(float) > 0) | (pairs["gap_y_hi"].to_numpy(float) < 0)
    ok = (np.sign(z) * np.sign(y) < 0) & clear_z & clear_y
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return None
    margin = np.minimum(np.abs(z), np.abs(y))
    a = pairs["rule_a"].astype(str).to_numpy()
    b = pairs["rule_b"].astype(str).to_numpy()
    return int(min(cand, key=lambda k: (-margin[k], a[k], b[k])))


def selected_pair(answers: pd.DataFrame, rp: RulePairs) -> ReferencePair | None:
    """The :class:`ReferencePair` of the module's rule (None: no pair qualifies)."""
    k = select_pair(rp.pairs)
    if k is None:
        return None
    p = rp.pairs.iloc[k]
    rules = rp.rules.set_index("rule")
    a, b = str(p["rule_a"]), str(p["rule_b"])
    if rules.loc[a, "mean"] > rules.loc[b, "mean"]:  # A is the cautious rule
        raise ValueError("rule pairs list the rule with the lower average first")
    rev = rp.pairs["reverses"].to_numpy(bool)
    clear = rev & rp.pairs["both_exclude_zero"].to_numpy(bool)
    return ReferencePair(
        rule_a=a, rule_b=b, mean_a=float(p["mean_a"]), mean_b=float(p["mean_b"]),
        brier_z_a=float(rules.loc[a, "brier_z"]), brier_z_b=float(rules.loc[b, "brier_z"]),
        brier_y_a=float(rules.loc[a, "brier_y"]), brier_y_b=float(rules.loc[b, "brier_y"]),
        gap_z=float(p["gap_z"]), gap_y=float(p["gap_y"]), gap_z_lo=float(p["gap_z_lo"]),
        gap_z_hi=float(p["gap_z_hi"]), gap_y_lo=float(p["gap_y_lo"]),
        gap_y_hi=float(p["gap_y_hi"]), t_omit=float(p["t_omit"]), t_fp=float(p["t_fp"]),
        midpoint=float(p["midpoint"]), predicted=bool(p["predicted"]),
        auroc=float(rules.loc[a, "auroc_y"]), prevalence_z=rp.prevalence_z,
        prevalence_y=rp.prevalence_y, n_answers=int(len(answers)),
        n_questions=int(answers["qid"].nunique()), n_pairs=int(len(rp.pairs)),
        n_reversals=rp.n_reversals, n_reversals_clear=int(clear.sum()))


def nq_selected(data: TourData) -> tuple[pd.DataFrame, ReferencePair | None] | None:
    """The answers and the selected pair, memoised in ``data`` (shared with the pilot stop);
    None when the NQ-open files are absent."""
    answers = data.memo("labels:nq-answers", nq_answers)
    if answers is None:
        return None
    rp = data.memo("labels:nq-pairs", lambda: nq_pairs(answers))
    return answers, data.memo("labels:nq-pair", lambda: selected_pair(answers, rp))


# ----------------------------------------------------------------------------- words
def rule_words(name: str) -> str:
    """A rule of the pairs in words: ``agree@0.20`` → "agreement, average confidence 0.20".

    >>> rule_words("agree@0.20")
    'agreement, average confidence 0.20'
    >>> rule_words("const@0.50")
    'always 0.50'
    """
    kind, _, m = str(name).partition("@")
    if kind == "agree" and m:
        return f"agreement, average confidence {m}"
    if kind == "const" and m:
        return f"always {m}"
    if name == "agreement":
        return "agreement (the share of systems giving the same answer)"
    raise ValueError(f"no such NQ-open rule: {name!r}")


def nq_prevalence_step(x: float) -> str:
    """``x`` on the Ranking reversal page's prevalence grid, as its URL text ("0.55")."""
    return f"{round(round(float(x) / PREV_STEP) * PREV_STEP, 10):g}"


def reference_link(pair: ReferencePair) -> tuple[tuple[str, str], ...]:
    """Query parameters that open the Ranking reversal page on NQ-open with the pair, at the
    people's share of right answers (where the page itself starts on NQ-open)."""
    return (("rr_data", "NQ-open"), ("rr_nq_a", pair.rule_a), ("rr_nq_b", pair.rule_b),
            ("rr_prev", nq_prevalence_step(pair.prevalence_y)))


def _cause(omit: float, fp: float) -> str:
    """Which of Eq. 2's two parts moved the lead, in one sentence (parts counted in the
    direction of the change)."""
    if omit >= fp:
        return (f"The right answers exact match does not list move the lead by {omit:.3f}"
                + (f"; the wrong answers it accepts move it back by {-fp:.3f}." if fp < 0 else
                   f", the wrong answers it accepts by {fp:.3f}."))
    return (f"The wrong answers exact match accepts move the lead by {fp:.3f}"
            + (f"; the right answers it does not list move it back by {-omit:.3f}."
               if omit < 0 else f", the right answers it does not list by {omit:.3f}."))


def _settings() -> tuple[tuple[str, str], ...]:
    return (
        ("Data", f"NQ-open: the answers of {SEED_003_NQ301.n_systems} question-answering "
                 "systems, each marked by people and by exact match against a fixed answer "
                 "list (Kamalloo et al. 2023)"),
        ("Rules", f"{len(DEFAULT_MEANS)} agreement rules: how many of the systems give the "
                  "same answer, shifted to the average confidences "
                  f"{', '.join(f'{m:g}' for m in DEFAULT_MEANS)}; every rule orders the "
                  "answers the same way"),
        ("Score", "Brier score: the mean squared gap between a confidence and the mark "
                  "(1 right, 0 wrong); lower is better"),
        ("Intervals", f"95 %, {N_BOOT:,} resamples of whole questions (random seed "
                      f"{BOOT_SEED})"),
    )


def incomplete_reference_view(data: TourData) -> StopView:
    """The incomplete-reference stop's view (module docstring: data, rules, selection)."""
    got = nq_selected(data)
    if got is None:
        return StopView(KEY, (), _settings(), None, "", "", (), (), False, note=_NO_DATA)
    _, p = got
    if p is None:
        return StopView(KEY, (), _settings(), None, "", "", (("rr_data", "NQ-open"),), (),
                        False, note="No pair of agreement rules reverses between exact match "
                                    "and people's judgements with both intervals clear of "
                                    "zero.")
    cautious = f"cautious rule ({rule_words(p.rule_a)})"
    bolder = f"bolder rule ({rule_words(p.rule_b)})"
    em, ppl = "marked by exact match", "marked by people"
    bars = pd.DataFrame({
        "group": [em, em, ppl, ppl],
        "series": [cautious, bolder, cautious, bolder],
        "value": [p.brier_z_a, p.brier_z_b, p.brier_y_a, p.brier_y_b],
        "text": [f"{w}, {lab}: Brier score {v:.3f}" for w, lab, v in (
            ("cautious rule", em, p.brier_z_a), ("bolder rule", em, p.brier_z_b),
            ("cautious rule", ppl, p.brier_y_a), ("bolder rule", ppl, p.brier_y_b))]})
    chart = Chart("bars", bars, title="The same answers, the same two rules, two markings",
                  x_title="", y_title="Brier score (lower is better)",
                  caption=f"Each bar is one rule's Brier score over all {p.n_answers:,} "
                          "answers; the lower bar in each pair wins.")
    z_first = "cautious" if p.gap_z < 0 else "bolder"
    y_first = "cautious" if p.gap_y < 0 else "bolder"
    shows = (z_first != y_first and (p.brier_z_a < p.brier_z_b) != (p.brier_y_a < p.brier_y_b))
    change = p.gap_z - p.gap_y
    sign = 1.0 if change >= 0 else -1.0  # each part, counted in the direction of the change
    example = (
        ("Rule A", cautious), ("Rule B", bolder),
        ("What the two share", "the same order of the answers: of a right and a wrong "
                               "answer picked at random, the right one gets the higher "
                               f"confidence {pct(p.auroc)} of the time"),
        ("Answers", f"{p.n_answers:,} to {p.n_questions} questions"),
    )

    def lead(gap: float, lo: float, hi: float) -> str:
        who = "cautious" if gap < 0 else "bolder"
        a, b = sorted((abs(lo), abs(hi)))
        return f"{who} rule by {abs(gap):.3f} (95 % interval {a:.3f} to {b:.3f})"

    evidence = (
        ("Marked right by exact match", f"{pct(p.prevalence_z)} of the answers"),
        ("Marked right by people", f"{pct(p.prevalence_y)} of the answers"),
        ("Brier score, exact match", f"cautious {p.brier_z_a:.3f}, bolder {p.brier_z_b:.3f}"),
        ("Brier score, people", f"cautious {p.brier_y_a:.3f}, bolder {p.brier_y_b:.3f}"),
        ("Winner by exact match", lead(p.gap_z, p.gap_z_lo, p.gap_z_hi)),
        ("Winner by people", lead(p.gap_y, p.gap_y_lo, p.gap_y_hi)),
        ("Where the two rules tie", f"when {pct(p.midpoint)} of the answers are right, "
                                    "halfway between their averages: "
         + ("between the two markings, so the crossover rule predicts the reversal"
            if p.predicted else "not between the two markings")),
        ("How far the lead moves between the markings",
         f"{abs(change):.3f}: {sign * p.t_omit:.3f} from right answers exact match does not "
         f"list, {sign * p.t_fp:.3f} from wrong answers it accepts (the answer-key paper §3, Eq. "
         "2)"),
        ("Pairs of rules that reverse", f"{p.n_reversals} of {p.n_pairs}, "
                                        f"{p.n_reversals_clear} with both intervals clear of "
                                        "zero (the answer-key paper §5.1 reports "
                                        f"{SEED_003_NQ301.reversals} of "
                                        f"{SEED_003_NQ301.n_pairs} and "
                                        f"{SEED_003_NQ301.reversals_both_intervals_exclude_zero})"),
    )
    answer = (f"{'No' if shows else 'Yes'}: marked by exact match the {z_first} rule wins "
              f"(Brier score {min(p.brier_z_a, p.brier_z_b):.3f} against "
              f"{max(p.brier_z_a, p.brier_z_b):.3f}), marked by people the {y_first} rule "
              f"{'wins' if shows else 'wins too'} ({min(p.brier_y_a, p.brier_y_b):.3f} "
              f"against {max(p.brier_y_a, p.brier_y_b):.3f}).")
    reason = (f"Exact match calls only {pct(p.prevalence_z)} of the answers right, people "
              f"{pct(p.prevalence_y)}: it counts every right answer missing from its list as "
              "wrong. The two rules order the answers alike, so the one whose average "
              "confidence sits nearer the share marked right tends to score better; they tie at "
              f"{pct(p.midpoint)}, and the two markings fall on opposite sides of it, which "
              "is why the bars swap. " + _cause(sign * p.t_omit, sign * p.t_fp))
    return StopView(KEY, example, _settings(), chart, answer, reason, reference_link(p),
                    evidence, shows, note="" if shows else "The selected pair's Brier scores "
                                                           "no longer swap between the "
                                                           "markings.")
