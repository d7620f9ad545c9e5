"""The terms the pages use, each defined once: plain words first, then where it comes from.

A :class:`Term` has a name, the short forms and symbols the pages print (``aliases``), one or
two plain sentences, and its source (a seed document and section, or a reference). The
Glossary page lists them; ``tests/test_glossary.py`` fails when a page prints an acronym or
symbol that no term covers.

How gaps are signed (:data:`SIGN_CONVENTION`): the pages still use two conventions, and
the glossary says so rather than hide it. The label-source decomposition and the Ranking
reversal page write ``R(A) − R(B)`` (negative: rule A is better); the pilot pages write the
truth gap ``Δ_Y = R_Y(EG) − R_Y(native)`` (positive: native is better). Both describe the
same fact with opposite signs; unifying them is part of issue 9.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GLOSSARY", "SIGN_CONVENTION", "Term", "find", "search"]

SIGN_CONVENTION = (
    "Gaps of a risk R (lower is better) are signed two ways on these pages, for the same fact. "
    "Ranking reversal and the label-source decomposition write R(A) − R(B): negative means "
    "rule A is better. The pilot pages write the truth gap Δ_Y = R_Y(EG) − R_Y(native) (and "
    "Δ_Z with the reference label): positive means native is better."
)


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    Attributes
    ----------
    name : str
        The term as a heading.
    plain : str
        One or two sentences a student can read without the papers.
    source : str
        Where it comes from (seed document and section, or a reference).
    aliases : tuple of str
        Short forms and symbols the pages print for it (matched exactly, case-sensitive).
    """

    name: str
    plain: str
    source: str
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.strip() or not self.plain.strip() or not self.source.strip():
            raise ValueError(f"a glossary term needs a name, a definition and a source: "
                             f"{self.name!r}")


S0 = "Seed 000 (the synthetic multi-source personal-memory benchmark)"
S3 = "Seed 003 (labels from an incomplete reference can reverse proper-score rankings)"

GLOSSARY: tuple[Term, ...] = (
    # ---------------------------------------------------------------- seed 000: the testbed
    Term("Latent days", "What really happened to a simulated person on each of 30 days "
         "(sleep, meals, work, social life …). No source sees them directly.",
         f"{S0}, §2; the walkthrough's layer L2", ("L2",)),
    Term("Persona", "A simulated person: traits, habits and a difficulty class (stable, "
         "temporal shift, stated vs revealed).", f"{S0}, §2; layer L1", ("L1",)),
    Term("Source", "One of five record keepers of the same days, each with its own bias and "
         "blind spots: the long-term profile, the planner, daily self-reports, objective logs "
         "(payments, timesheet, calendar) and the device log.", f"{S0}, §2.7; layer L3",
         ("L3",)),
    Term("Atom", "One source's answer to one question about one person. μ* is read directly "
         "from the source's structured record; μ̂ is what an extractor reads from the "
         "source's prose.", f"{S0}, §4.2", ("μ*", "μ̂")),
    Term("No atom", "The source gives no answer to this question: it does not cover the "
         "topic, or its records for the window were lost.", f"{S0}, §4", ("⊥",)),
    Term("Ground truth", "The answer a fixed rule computes from the latent days; the label "
         "every resolver is scored against.", f"{S0}, §3", ("GT",)),
    Term("Selection protocol", "How the walkthrough picks an instance worth showing: a test "
         "persona and question where the sources conflict and the resolvers disagree in an "
         "instructive way.", f"{S0}, §8.7"),
    # ---------------------------------------------------------------- resolvers
    Term("Resolver", "A rule that combines the five atoms into one answer, or abstains "
         "(+SKIP).", f"{S0}, §9", ("SKIP",)),
    Term("Majority vote", "The answer most sources give (ties broken at random). Also the "
         "equal-weight form of the ArgRAG argumentation baseline, whose quadratic-energy "
         "(QE) semantics reduces to plurality voting here.", f"{S0}, §9.2, §9.5",
         ("MV", "QE")),
    Term("Single-source baseline", "Trust the one source most accurate on the training "
         "split, per question (SSB) or over all questions (SSB-Global).", f"{S0}, §9.2",
         ("SSB", "SSB-G")),
    Term("Bias-corrected fusion", "Counts the sources that agree with each answer after "
         "undoing each source's known bias, with four fitted discounts.", f"{S0}, §9.1",
         ("BCF",)),
    Term("Abductive bias-aware fusion", "Scores each answer by how well it explains every "
         "atom, either as the truth or as the truth seen through the source's bias; six "
         "fitted weights.", f"{S0}, §9.1", ("ABF",)),
    Term("Naive Bayes fusion", "Learns from training labels how often each source says v "
         "when the truth is w, and combines the sources as independent witnesses. DSNBF "
         "learns those tables per difficulty class.", f"{S0}, §9.1", ("NBF", "DSNBF")),
    Term("Dawid–Skene", "Naive Bayes fusion learned without any labels, by expectation "
         "maximisation (EM) from the sources' agreements alone.",
         "Dawid & Skene (1979); not in seed 000", ("EM",)),
    Term("Source reachability", "Answers correctly whenever some source's atom equals the "
         "ground truth: a ceiling that no resolver can beat, not a method.", f"{S0}, §9.2"),
    Term("Selective answering", "A resolver may skip; it is judged on coverage (the share "
         "it answers) and selective accuracy (how often those answers are right). Its "
         "threshold θ is chosen on the calibration split by F0.5, which weighs precision "
         "more than recall.", f"{S0}, §10", ("θ", "F0")),
    Term("Risk–coverage curve", "Error rate among the answered as the most confident answers "
         "are taken first; AURC is the area under it (lower is better).",
         "Geifman & El-Yaniv (2017)", ("AURC",)),
    Term("Large language model", "A chat model asked the survey question over the sources' "
         "prose; the benchmark's LLM baselines.", f"{S0}, §9.6", ("LLM",)),
    # ---------------------------------------------------------------- seed 003: labels
    Term("Reference label", "A cheap label from matching answers against an incomplete "
         "reference list, where an unmatched answer counts as false (Z).", f"{S3}, §2",
         ("Z", "IR")),
    Term("Adjudicated truth", "The label a careful human gives (Y); expensive, so only a "
         "pilot sample gets it.", f"{S3}, §2", ("Y",)),
    Term("Confidence rules", "Two ways to attach a confidence to an answer: native (the "
         "model's own elicited confidence) and EG (a frozen prior per source of the "
         "evidence).", f"{S3}, §2", ("EG",)),
    Term("Brier score", "The mean squared difference between confidence and outcome (0 or "
         "1); lower is better and it is a proper score: honest confidences minimise it.",
         "Brier (1950); seed 003 §2"),
    Term("Label-source gap", "How much a rule's score changes when the reference label "
         "replaces the truth. Its exact decomposition has a term for the omitted truths "
         "(T_omit: true answers the reference does not list) and one for false matches "
         "(T_fp: false answers it matches), or equivalently a spread and a discrimination "
         "term.", f"{S3}, §2", ("T_omit", "T_fp", "Δ", "Δ_Y", "Δ_Z")),
    Term("Crossover prevalence", "The share of true answers π at which two rules score the "
         "same; on one side of it the reference and the truth rank them in opposite "
         "order.", f"{S3}, §2", ("π",)),
    Term("Calibration error", "How far confidences are from observed frequencies: ECE "
         "(expected, over bins), MCE (maximum), RMS-CE (root mean square), CITL "
         "(calibration in the large: mean confidence minus mean outcome), ICE (integrated, "
         "of the smooth curve).", f"{S3}, §4", ("ECE", "MCE", "RMS-CE", "CITL", "ICE")),
    Term("Reliability diagram", "Observed frequency of the outcome against the confidence "
         "given. Binned (fixed bins), CORP (isotonic regression by the pool-adjacent-"
         "violators algorithm, PAV: no bins to choose) and smooth (kernel with bandwidth "
         "σ).", "Dimitriadis, Gneiting & Jordan (2021); seed 003 §4",
         ("CORP", "PAV", "σ", "σ*")),
    Term("Brier decomposition", "Brier = miscalibration − discrimination + uncertainty "
         "(MCB − DSC + UNC), exact for CORP; the binned Murphy form adds within-bin terms "
         "(REL, RES, WBV, WBC).", "Murphy (1973); Dimitriadis et al. (2021)",
         ("MCB", "DSC", "UNC", "REL", "RES", "WBV", "WBC")),
    Term("Discrimination", "How well the confidences separate true from false answers, "
         "whatever their level; AUROC is the chance a true answer gets the higher "
         "confidence.", f"{S3}, §2", ("AUROC",)),
    Term("Consistency band", "Where a perfectly calibrated forecaster with the same "
         "confidences would draw its curve 90 % of the time (outcomes redrawn from the "
         "confidences).", "Bröcker & Smith (2007); seed 003 §4"),
    # ---------------------------------------------------------------- seed 003: pilots
    Term("Human pilot", "A small probability sample of answers that humans adjudicate; "
         "designs: stratified (by match status and confidence), simple random (SRS), or "
         "with probability proportional to size (PPS).", f"{S3}, §3, Algorithm 1",
         ("SRS", "PPS")),
    Term("TriSource-Restore", "Estimates the truth gap from the pilot without bias, using "
         "the reference label and automatic judges only to shrink its variance; their "
         "weights β are fixed before the pilot.", f"{S3}, §3, Eq. 3", ("β",)),
    Term("Human-only estimator", "The same estimate from the pilot's human labels alone (β "
         "= 0): unbiased too, but wider.", f"{S3}, §3"),
    Term("Escalation", "More labels are needed: the interval still crosses 0, or too few "
         "stores were sampled.", f"{S3}, Algorithm 1 step 5"),
    Term("Monotone repair", "A confidence map p = σ(α + γ·logit c) with γ ≥ 0 fitted to the "
         "pilot, so that the selected rule's confidences match the truth.",
         f"{S3}, §3, A.11", ("α", "γ")),
    Term("Error measures", "RMSE: root mean square error of an estimate over repeated "
         "pilots; CI: a confidence interval (95 % unless said).", "standard",
         ("RMSE", "CI")),
    Term("NQ-open", "A real case: 1,490 human-labelled answers of 12 open-domain QA systems "
         "to Natural Questions, where exact match against the gold list plays the "
         "reference label.", "Kamalloo et al. (2023); seed 003 §5", ("NQ",)),
)


def find(alias_or_name: str) -> Term | None:
    """The term whose name (case-insensitive) or one of whose aliases is ``alias_or_name``."""
    key = alias_or_name.strip()
    for term in GLOSSARY:
        if key in term.aliases or key.lower() == term.name.lower():
            return term
    return None


def search(text: str) -> tuple[Term, ...]:
    """Terms whose name, aliases or definition contain ``text`` (plain substring, any case).

    ``text`` is treated as literal characters (no pattern syntax); empty text gives every
    term.
    """
    needle = re.sub(r"\s+", " ", str(text)).strip().lower()[:200]
    if not needle:
        return GLOSSARY
    return tuple(t for t in GLOSSARY
                 if needle in t.name.lower() or needle in t.plain.lower()
                 or any(needle in a.lower() for a in t.aliases))
