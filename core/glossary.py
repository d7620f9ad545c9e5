"""The terms the pages use, each defined once: plain words first, then where it comes from.

A :class:`Term` has a name, the short forms and symbols the pages print (``aliases``), one or
two plain sentences, and its source (one of the three documents and its section, or a
reference). The Glossary page lists them; ``tests/test_glossary.py`` fails when a page's
script prints an acronym or symbol that no term covers, and ``tests/test_vocabulary.py`` when
a page shows one without defining it where it first appears (a :func:`tip` on that element,
or plain words beside it).

The three documents (:data:`PAPERS`) are named by what they are about, never by their file
numbers: "the memory-benchmark paper", "the personal-records study" and "the answer-key
paper". The home page cites each once, and each has a glossary entry with its citation, so
"the paper" on a page always names one of them.

How gaps are signed (:data:`SIGN_CONVENTION`): one convention on every page, the one the
answer-key paper's tables use. A gap is the risk of the comparator B minus the risk of the
rule under study A, ``Δ = R(B) − R(A)``, so a positive gap means A is better
(:mod:`core.calibration.reversal_view` converts the library's ``R(A) − R(B)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GLOSSARY", "PAPERS", "SIGN_CONVENTION", "Paper", "Term", "find", "search", "tip"]

SIGN_CONVENTION = (
    "Every gap on these pages is the Brier risk of the comparator B minus that of the rule "
    "under study A: Δ = R(B) − R(A), lower risk being better. Above 0, rule A is better and "
    "a proper score selects it; below 0, B. With A = native (the model's own confidence) "
    "and B = EG (a frozen prior per kind of evidence) this is Δ = R(EG) − R(native), the "
    "sign the answer-key paper's Tables 4 and 5 use; Δ_Y is the gap under "
    "the truth Y, Δ_Z under the reference label Z."
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
        Where it comes from (one of the three documents and its section, or a reference).
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


@dataclass(frozen=True)
class Paper:
    """One of the three documents the app reimplements, named by what it is about.

    Attributes
    ----------
    name : str
        How the pages refer to it ("the memory-benchmark paper").
    story : str
        The name of its story on the home page and in the tour (``core.tour.STORIES``).
    title : str
        Its title as the document states it (or, when it states none, what it says it did).
    credit : str
        Its authors and year, or where it comes from, as far as the document states them.
    """

    name: str
    story: str
    title: str
    credit: str

    @property
    def citation(self) -> str:
        """One line: the title, then the credit."""
        return f"{self.title} — {self.credit}"


#: The three documents (the app's seeds 000, 002 and 003, shipped as their file numbers), by
#: what they are about.
PAPERS: dict[str, Paper] = {
    "memory": Paper(
        "the memory-benchmark paper", "Whose record of a person's days to believe",
        "A benchmark of selective question answering over conflicting multi-source personal "
        "memory (our copy states no title, authors or year)",
        "the multisource-membench release, github.com/TianchengY/multisource-membench"),
    "records": Paper(
        "the personal-records study", "One person's records over time",
        "Personal Dimension Benchmark v1: methods",
        "a methods report run on 6 September 2026 (no authors stated)"),
    "answer key": Paper(
        "the answer-key paper", "When the answer key is incomplete",
        "Unmatched Does Not Mean False: Incomplete Reference Sets Can Reverse Calibration "
        "Rankings in Open-Ended Theory-of-Mind Tracking",
        "Feng, Chen & Zhang (2026), arXiv 2608.25654"),
}

S0 = "The memory-benchmark paper"
S2 = "The personal-records study"
S3 = "The answer-key paper"

GLOSSARY: tuple[Term, ...] = (
    # ---------------------------------------------------------------- the three documents
    Term("The memory-benchmark paper", "The document behind the Walkthrough, Leaderboard, "
         "Bias lab, Selective QA and Extraction pages: simulated people, five record keepers "
         "that disagree about their days, 18 survey questions, and the resolvers that settle "
         "the conflicts. On those pages \"the paper\" means it and \"the paper's number\" its "
         "published result.", PAPERS["memory"].citation),
    Term("The personal-records study", "The document behind the Personal records page: one "
         "person's records with the dates they held, sources of unequal trust, a conflict "
         "policy, disclosure and write-back, written down six ways for an assistant.",
         PAPERS["records"].citation),
    Term("The answer-key paper", "The document behind the Reliability, Ranking reversal and "
         "Pilot budget pages: when the list of right answers is incomplete, answers it does "
         "not list are marked wrong, and that alone can reverse which of two confidence rules "
         "a proper score prefers; a small human pilot settles it.",
         PAPERS["answer key"].citation),
    Term("Percentage points", "The difference between two percentages: from 80 % to 82 % is "
         "2 percentage points (not 2 %).", "standard", ("pp",)),
    # ---------------------------------------------------------------- the memory benchmark
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
    Term("Memory prose", "Each simulated person's records written out as plain sentences, "
         "one section per source and one block per day, the way a person's notes and app "
         "exports would read. The resolvers in the paper see only this text, through an "
         "extractor.", f"{S0}, §2.1 and §8.6 stage 4 (the NL memory render)",
         ("NL memory", "NL", "render")),
    Term("Extractor", "A program that reads the memory prose and writes one atom per "
         "question and source. Arbiter's own extractor follows fixed sentence templates; the "
         "paper's is a large language model (GPT-5.4).", f"{S0}, §8.6 stages 5–6",
         ("extraction",)),
    Term("Faithfulness", "How often the extractor's atom equals the atom read straight from "
         "the source's structured record: P(μ̂ = μ*), counted over (person, question, source) "
         "cells. The paper's GPT-5.4 extractor reaches 93.08 %.", f"{S0}, §8.8 and §12.6",
         ("P(μ̂ = μ*)",)),
    Term("Extraction noise", "A what-if: flip a share ε of the atoms to another answer, "
         "uniformly or at the error rates measured for a real extractor, and see what that "
         "costs each resolver.", f"{S0}, §12.5 (uniform ε) and §12.6 (per-source rates)",
         ("ε", "noise profile")),
    Term("Mixed mode", "Fit and calibrate every resolver on the clean atoms μ*, then answer "
         "the test people from the extracted atoms μ̂: the resolver never learns the "
         "extractor's mistakes.", f"{S0}, §9.4; the benchmark specification §2.10"),
    Term("Resolver × input split", "Compare two resolvers on two inputs (μ* and μ̂) in a "
         "2 × 2 table. The whole gap (A on μ* against B on μ̂) splits exactly into a "
         "resolution part (the average gap between A and B) and an extraction part (the "
         "average loss from μ* to μ̂); the interaction says how far the two effects fail to "
         "add up. Intervals resample whole people.", f"{S0}, §4.2",
         ("2 × 2", "attribution", "difference of differences")),
    Term("No atom", "The source gives no answer to this question: it does not cover the "
         "topic, or its records for the window were lost.", f"{S0}, §4", ("⊥",)),
    Term("Ground truth", "The answer a fixed rule computes from the latent days; the label "
         "every resolver is scored against.", f"{S0}, §3", ("GT",)),
    Term("Selection protocol", "How the walkthrough picks an instance worth showing: a test "
         "persona and question where the sources conflict and the resolvers disagree in an "
         "instructive way.", f"{S0}, §8.7"),
    Term("Informative source", "A source is informative for a question when its records "
         "hold what the question reads; the others give no atom for it (— in the atom "
         "grid).", "The memory benchmark's specification, §2.4"),
    Term("Bias direction", "Which way a source leans on an ordered question: +1 means it "
         "tends to report one bin above the truth, −1 one below, 0 no lean. A disagreement "
         "in the source's own direction is explained by its bias.",
         "The memory benchmark's specification, §2.3 (the bias prior)"),
    # ---------------------------------------------------------------- resolvers
    Term("Resolver", "A rule that combines the five atoms into one answer, or abstains "
         "(+SKIP).", f"{S0}, §9"),
    Term("Majority vote", "The answer most sources give (ties broken at random). Also the "
         "equal-weight form of the ArgRAG argumentation baseline, whose quadratic-energy "
         "(QE) semantics reduces to plurality voting here.", f"{S0}, §9.2, §9.5",
         ("MV", "QE")),
    Term("Majority class", "A baseline that ignores the sources: it always gives the answer "
         "most common among the training people.", f"{S0}, §9.2", ("MajClass",)),
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
         "Dawid & Skene (1979); not in the memory-benchmark paper", ("EM", "DS")),
    Term("Source reachability", "Answers correctly whenever some source's atom equals the "
         "ground truth: a ceiling that no resolver can beat, not a method.", f"{S0}, §9.2"),
    Term("Selective answering", "A resolver may skip; it is judged on coverage (the share "
         "it answers) and selective accuracy (how often those answers are right). Its "
         "threshold θ is chosen on the calibration split by F0.5, which weighs precision "
         "more than recall. A resolver that may skip is named with +SKIP.", f"{S0}, §10",
         ("θ", "F0", "SKIP")),
    Term("Posterior margin", "How sure a probabilistic resolver is: the probability of its "
         "top answer minus that of the runner-up, p(top1) − p(top2). The walkthrough's "
         "example needs a DSNBF margin that is neither tiny nor large.",
         f"{S0}, §8.7 filter (v)"),
    Term("Risk–coverage curve", "Error rate among the answered as the most confident answers "
         "are taken first; AURC is the area under it (lower is better).",
         "Geifman & El-Yaniv (2017)", ("AURC",)),
    Term("Bootstrap interval", "A 95 % interval from redrawing whole personas with "
         "replacement B times (a persona's 18 answers stay together), recomputing the "
         "accuracy each time and keeping the middle 95 %.", f"{S0}, §9.3"),
    Term("Reference numbers", "The paper's value of a number, and the regenerated one: the "
         "released code re-run on freshly generated data, the fairer target for a "
         "reimplementation. The column \"ours − paper\" is ours minus the paper's.",
         f"{S0}, §2.14", ("regenerated",)),
    Term("Source reliability", "Per source: coverage (how often it gives an atom), conflict "
         "rate (how often its atom disagrees with another source's) and accuracy (how often "
         "its atom equals the ground truth when it answers).", f"{S0}, §2.7",
         ("conflict rate",)),
    Term("Wilson interval", "A 95 % interval for a share, such as how often a source's atom "
         "is right; it stays between 0 and 100 % even for few atoms.", "Wilson (1927)"),
    Term("Confusion table", "For one source and one question: how often the source said each "
         "answer (columns) when the truth was each answer (rows). NBF learns it from the "
         "train split with Laplace smoothing (one extra count in every cell).",
         f"{S0}, §9.1", ("confusion matrix",)),
    Term("Distortion knobs", "The bias lab's sliders. The bias scale multiplies the "
         "planner's optimism and the self-report's distortions (capped at 1); the dropout "
         "scale multiplies the logs' lost and noisy days (capped at 0.5); the difficulty mix "
         "keeps that share of each persona class in every split.", f"{S0}, §12.4",
         ("bias scale", "dropout scale", "difficulty mix")),
    Term("Kendall's tau", "How much two rankings agree: 1 when every pair of methods is in "
         "the same order, −1 when every pair is reversed.",
         "Kendall (1938); the memory-benchmark paper, §12",
         ("τ", "Kendall τ", "τ-b")),
    Term("Sweep", "The whole pipeline (generate the people, fit, calibrate, score) run again "
         "for every combination of a few knobs: seeds, bias and dropout scales, training "
         "sizes, extraction noise. Each combination is a cell with its own testbed. A sweep "
         "asks whether a result holds beyond the one testbed it was seen on.",
         "the memory-benchmark paper, §12 (robustness); docs/sweep.md", ("sweep", "cell")),
    Term("Accuracy surface", "One method's mean accuracy for every pair of values of two "
         "knobs, averaged over the testbeds and other settings of a sweep: where on the map it "
         "holds up and where it falls.", "the memory-benchmark paper, §12.1; docs/sweep.md",
         ("surface",)),
    Term("Large language model", "A chat model asked the survey question over the sources' "
         "prose; the benchmark's LLM baselines.", f"{S0}, §9.6", ("LLM",)),
    # ---------------------------------------------------------------- the answer key: labels
    Term("Reference label", "A cheap label from matching answers against an incomplete "
         "reference list, where an unmatched answer counts as false (Z).", f"{S3}, §2",
         ("Z", "IR")),
    Term("Adjudicated truth", "The label a careful human gives (Y); expensive, so only a "
         "pilot sample gets it.", f"{S3}, §2", ("Y",)),
    Term("Confidence rules", "Two ways to attach a confidence to an answer: native (the "
         "model's own elicited confidence) and EG (a frozen prior per source of the "
         "evidence).", f"{S3}, §2", ("native", "EG")),
    Term("Brier score", "The mean squared difference between confidence and outcome (0 or "
         "1); lower is better and it is a proper score: honest confidences minimise it.",
         "Brier (1950); the answer-key paper, §2"),
    Term("Log score", "Minus the mean log of the probability given to what happened; lower "
         "is better, and it is a proper score. We clip each confidence to [1e-15, 1 − 1e-15], "
         "so a confidence of 0 for an event that happened costs 34.5, not infinity.",
         "Good (1952); calibration-notes §5.1", ("log score",)),
    Term("Spiegelhalter's z", "A test of whether the Brier score is what calibrated "
         "confidences would score (reliability), not of calibration in the large (that is "
         "CITL). Each miss is weighted by 1 − 2p, so confidences near 0.5 count for nothing "
         "and misses in opposite directions can cancel. |z| > 1.96 rejects at 5 %; z is left "
         "out when too few items carry it for its normal approximation.",
         "Spiegelhalter (1986); calibration-notes §5.1", ("Spiegelhalter z",)),
    Term("Label-source gap", "How much a rule's score changes when the reference label "
         "replaces the truth. Its exact decomposition has a term for the omitted truths "
         "(T_omit: true answers the reference does not list) and one for false matches "
         "(T_fp: false answers it matches), or equivalently a spread and a discrimination "
         "term.", f"{S3}, §2", ("T_omit", "T_fp", "Δ", "Δ_Y", "Δ_Z")),
    Term("Crossover prevalence", "The share of true answers π at which two rules score the "
         "same; on one side of it the reference and the truth rank them in opposite "
         "order.", f"{S3}, §2", ("π", "crossover")),
    Term("Restoration fraction", "The share of the omitted truths (true answers the reference "
         "left unmatched) that must be relabelled true before the reference ranks two rules as "
         "the truth does, or at least ties them. It is a share only between 0 and 1: below "
         "0 relabelling moves the gap away from a tie, above 1 even every omitted truth is "
         "not enough, and the page then says so instead of showing it.", f"{S3}, §2, Table 4",
         ("q*",)),
    Term("Scoring protocol", "What gets scored and against which label: unmatched-as-false "
         "(the reference), matched-only (only what matched), closed-world (only the "
         "reference's own propositions) or adjudicated truth.", f"{S3}, §2, Table 3",
         ("protocol",)),
    Term("Cross-system agreement", "On NQ-open, the share of the 12 systems that give the "
         "same normalised answer: a confidence that needs no model internals. agree@m "
         "shifts it on the logit scale to mean m, keeping its ranking.", f"{S3}, §5",
         ("agreement", "agree@m", "const@m")),
    Term("Calibration error", "How far confidences are from observed frequencies: ECE "
         "(expected, over bins), MCE (maximum), RMS-CE (root mean square), CITL "
         "(calibration in the large: mean confidence minus mean outcome), ICE (instance-level: "
         "the mean gap between each 0/1 label and its confidence; not a proper score).",
         f"{S3}, §4, Table 1", ("ECE", "MCE", "RMS-CE", "CITL", "ICE")),
    Term("Reliability diagram", "Observed frequency of the outcome against the confidence "
         "given. Binned (fixed bins), CORP (isotonic regression by the pool-adjacent-"
         "violators algorithm, PAV: no bins to choose) and smooth (kernel with bandwidth "
         "σ).", "Dimitriadis, Gneiting & Jordan (2021); the answer-key paper, §4",
         ("CORP", "PAV", "σ", "σ*")),
    Term("Brier decomposition", "Brier = miscalibration − discrimination + uncertainty "
         "(MCB − DSC + UNC), exact for CORP; the binned Murphy form adds within-bin terms "
         "(REL, RES, WBV, WBC).", "Murphy (1973); Dimitriadis et al. (2021)",
         ("MCB", "DSC", "UNC", "REL", "RES", "WBV", "WBC")),
    Term("Discrimination", "How well the confidences separate true from false answers, "
         "whatever their level; AUROC is the chance a true answer gets the higher "
         "confidence.", f"{S3}, §2", ("AUROC",)),
    Term("Consistency band", "Where a perfectly calibrated forecaster with the same "
         "confidences draws its whole curve: outcomes are redrawn from the confidences and "
         "the band is widened until at least 90 % of redrawn curves lie inside it everywhere, "
         "not just point by point. A curve leaving it is unusual for a calibrated forecaster "
         "but can happen; a curve inside it proves nothing.",
         "Bröcker & Smith (2007); the answer-key paper, §4; issue 18"),
    # ---------------------------------------------------------------- the answer key: pilots
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
    Term("Monotone repair", "A confidence map p = logistic(α + γ·logit c) with γ ≥ 0 fitted "
         "to the pilot, so that the selected rule's confidences match the truth (logistic(x) "
         "= 1 / (1 + e^−x)).",
         f"{S3}, §3, A.11", ("α", "γ")),
    Term("Pilot budget", "How many human annotations a pilot pays for. Attempted counts "
         "every annotation, including the ones (about 8 %) that come back insufficient; "
         "usable counts only the labels that can be used.", f"{S3}, §5.5, Table 5"),
    Term("Interval coverage", "The share of repeated pilots whose 95 % interval contains the "
         "true gap; an honest interval covers about 95 % of the time.", f"{S3}, §5.5"),
    Term("False termination", "A pilot that stopped on the wrong side: its interval excluded "
         "0 but pointed to the worse rule.", f"{S3}, §5.5, Table 5"),
    Term("Stopping rule", "The pilot is looked at after 10, 20, 30 … labels. Each look "
         "estimates the gap, selects a rule once the interval excludes 0 and repairs its "
         "confidence, or else asks for more labels. The 5 % error is split evenly over the "
         "looks (Bonferroni), so each look's interval is wider than 95 %.",
         f"{S3}, §3, Algorithm 1"),
    Term("Deployment choice", "Which confidence map goes out with the selected rule: its "
         "own confidence, pilot-only Platt or the TriSource repair, each scored on pilot "
         "labels it was not fitted to (out-of-fold Brier). Platt is kept unless the unrepaired "
         "rule beats it by over 0.84 standard errors; the repair is taken only when it beats "
         "the choice so far by over 1.645.", f"{S3}, Algorithm 1 step 4; issue 18"),
    Term("Deployment gate", "The last check before a rule is used: the map chosen on one half "
         "of the pilot, scored on the other half, must beat a constant confidence at the base "
         "rate. What the gate judged is exactly what is deployed.",
         f"{S3}, Algorithm 1 step 6"),
    Term("Platt scaling", "A confidence map logistic(a + b·logit c) fitted to labels. Fitted "
         "to reference labels alone it learns the reference's share of true answers, not the "
         "truth's.", "Platt (1999); the answer-key paper, §5.5, Table 5 panel B"),
    Term("Error measures", "RMSE: root mean square error of an estimate over repeated "
         "pilots; CI: a confidence interval (95 % unless said).", "standard",
         ("RMSE", "CI")),
    Term("NQ-open", "A real case: 1,490 human-labelled answers of 12 open-domain QA systems "
         "to Natural Questions, where exact match against the gold list plays the "
         "reference label.", "Kamalloo et al. (2023); the answer-key paper, §5", ("NQ",)),
    # ---------------------------------------------------------------- one person's records
    Term("Validity interval", "The dates between which a record was true, both ends "
         "included. An open end means it is still true today.", f"{S2}, §2"),
    Term("Source tier", "How much a kind of source is trusted: document scan 1, device sync "
         "2, email 3, self-reported note 4. Lower is more trusted.", f"{S2}, §2"),
    Term("As-of date", "The day a question asks about. The answer is the record whose "
         "validity interval covers that day, which need not be today's.", f"{S2}, §2, §6"),
    Term("CP-01", "The conflict policy: when two records that both hold on a day disagree, "
         "the one from the lower (more trusted) source tier wins; within a tier, the one "
         "captured later.", f"{S2}, §2, §4.2", ("CP-01", "CP")),
    Term("Naive recency", "The rule a summary without sources can follow: the most recently "
         "captured record wins, whatever its source.", f"{S2}, §2"),
    Term("Arm", "One of six ways of writing down the same records for an assistant: notes, "
         "notes with a profile summary, flat records, the full dimension, and the dimension "
         "without sources or without dates.", f"{S2}, §4.4"),
    Term("Ablation", "An arm that deliberately leaves one kind of field out (sources, dates "
         "or both), to see which field carries which ability. Arms A, B and D are complete; "
         "C, E and F are ablations.", f"{S2}, §4.4"),
    Term("Overclaim", "Answering a question about a past date with the value that holds "
         "today, under any rule for settling disagreements (the conflict policy's or naive "
         "recency's).", f"{S2}, §2, M7"),
    Term("Stale record", "A record whose validity ended before today. Using it for today is "
         "an error unless it is flagged as expired.", f"{S2}, §2, §4.3"),
    Term("Item family", "The seven kinds of question: current state, history, conflicts, "
         "stale records, which of three Alexes, joins of two records, and gaps that nothing "
         "answers.", f"{S2}, §6",
         ("CURR", "HIST", "CONF", "STALE", "ENT", "HOP", "GAP")),
    Term("Measures (records)", "M1 right answer, M2 cites its records, M3 names the policy, "
         "M4 declines a gap, M5 declines an answerable item, M6 right expiry flag, M7 "
         "overclaims, M8 a value found nowhere; M9–M11 disclosure precision, recall and "
         "critical errors; M12–M13 write-back; M14 characters of context.", f"{S2}, §7",
         tuple(f"M{k}" for k in range(1, 15))),
    Term("Hypotheses (records)", "The fifteen predictions stated before the analysis: H1–H3 "
         "structure against notes and a summary, H4–H5 the ablations, H6–H15 one ability "
         "each (citing, naming the policy, overclaiming, expiry, names, joins, fabrication, "
         "disclosure, write-back).", f"{S2}, §3", tuple(f"H{k}" for k in range(1, 16))),
    Term("Critical disclosure error", "Releasing salary, bank details, a passport number, "
         "health data or another person's contact details to someone not entitled to them.",
         f"{S2}, §2, §8, M11"),
    Term("Write-back", "Recording a new piece of information without destroying the old: "
         "the old record gets an end date and stays, the new one starts open. U1–U6 are "
         "the six updates: a move, a renewed passport, a cancelled subscription, a new "
         "number, a laboratory correction and a renewed insurance.", f"{S2}, §8, H15",
         tuple(f"U{k}" for k in range(1, 7))),
    Term("Reference reader", "A rule-following program that answers every item from one arm "
         "exactly as that arm allows. It never misreads, so it shows what a representation "
         "permits, not how hard it is to read.", f"{S2}, §4.4; core.records.readers"),
    Term("Response file", "JSON Lines: one JSON object per line and per answer, with the "
         "item, the arm, the replicate, the answer, the records cited, the policy named, "
         "whether it declined and its expiry flag.", f"{S2}, §9", ("JSONL",)),
    Term("Sign test", "Counts the items on which one arm beats the other and those on which "
         "it loses (ties dropped), and asks how surprising that split is if neither arm is "
         "better. Exact and two-sided.", f"{S2}, §10"),
    # ---------------------------------------------------------------- issue 21: your data
    Term("Claims table", "Who said what about which item: one row per claim (the long "
         "layout: item, source, claim, and the truth when known) or one row per item with a "
         "column per source (the wide layout). Claims are compared as exact text unless a "
         "normaliser says otherwise.", "Issue 21; docs/fusion.md",
         ("long layout", "wide layout")),
    Term("Normaliser", "An explicit rule that makes near-identical claims count as one "
         "before any resolver runs: ignore case and spacing, or treat numbers or clock times "
         "within a tolerance as the same (the Flight authors counted times within 10 minutes "
         "as equal).", "Issue 21; Li, Dong et al. (2012)",
         ("tolerance", "time tolerance", "numeric tolerance")),
    Term("Truth discovery", "Settling the conflicting claims of many sources about the same "
         "facts by estimating, together, which value is true and how trustworthy each source "
         "is.", "Li, Dong et al. (2012); Dong, Berti-Équille & Srivastava (2009)"),
    Term("One-coin EM", "A weighted vote in which each source has one number, the chance "
         "that it is right, learned together with the answers by expectation maximisation "
         "(EM); a wrong source is assumed to pick one of the other values at random.",
         "Zhang, Chen, Zhou & Jordan (2016); Dawid & Skene (1979)", ("one-coin",)),
    Term("GLAD", "Each source has an ability and each item a difficulty; a source is right "
         "with a chance that grows with both (on a hard item even a good source is close to "
         "guessing). Fitted by EM; the name is short for Generative model of Labels, "
         "Abilities and Difficulties.", "Whitehill, Ruvolo, Wu, Bergsma & Movellan (2009)"),
    Term("ACCU", "A truth-discovery vote: each source's vote counts more the more accurate "
         "it is estimated to be, and the accuracies and the answers are estimated together. "
         "Every source is assumed independent of the others.",
         "Dong, Berti-Équille & Srivastava (2009)"),
    Term("Source dependence", "One source copies another, or both copy a third. The "
         "tell-tale sign is agreeing on false values: independent sources rarely make the "
         "same mistake. ACCU + DEPEN estimates for every pair how likely it is that they "
         "copy, and discounts a copier's vote.", "Dong, Berti-Équille & Srivastava (2009)",
         ("DEPEN", "ACCU + DEPEN", "dependence")),
    Term("Copy cluster", "A group of sources that make the same claim on (nearly) every item "
         "they share. Counted as separate votes, a cluster can outvote the truth; counted "
         "once, it is one witness.", "Issue 21; Li, Dong et al. (2012)", ("copy group",)),
    Term("Agreement beyond chance", "How much more often two sources make the same claim "
         "than two independent sources of their estimated accuracy would: 0 is as often as "
         "chance, 1 is always (like Cohen's kappa, with chance taken from the accuracies).",
         "Issue 21; core.fusion.diagnostics"),
    Term("Equal coverage", "Resolvers compared when each answers the same share of items, "
         "its most confident ones, and abstains on the rest. The denominator, the items it "
         "could have answered, is stated, so an abstention is never hidden.",
         "Geifman & El-Yaniv (2017); issue 21", ("abstention denominator",)),
    Term("Posterior", "A resolver's probability for each possible value of an item, given "
         "all the claims. Its answer is the most probable value, and its confidence that "
         "probability.", "Issue 21; docs/fusion.md"),
    Term("Contradicted answer", "A fused answer that no source claimed: a resolver that "
         "models each source's confusions can, for instance, answer 1 on an item where "
         "every worker said 0.", "Issue 21; core.fusion.diagnostics"),
    Term("What-if", "Change the input and refit: switch sources off or change one claim, "
         "and watch one item's posterior move. A learning resolver re-estimates every "
         "source, so the item moves both through its own claims and through what the change "
         "teaches about the sources.", "Issue 21; core.fusion.diagnostics"),
    Term("Exact match", "An automatic marking rule: an answer counts as right only when its "
         "normalised text equals one of a fixed list of gold answers, so a right answer "
         "worded differently counts as wrong.", "Kamalloo et al. (2023); the answer-key paper, §5"),
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


def tip(alias_or_name: str, *extra: str) -> str:
    """A widget's ``help`` text: the term's plain sentences (then ``extra``), and a pointer.

    Raises ``KeyError`` naming the term when the glossary has no such entry, so a page
    cannot show a tooltip for a term nobody defined.
    """
    term = find(alias_or_name)
    if term is None:
        raise KeyError(f"no glossary entry for {alias_or_name!r}")
    body = " ".join((term.plain, *extra))
    return f"{body} (Glossary: {term.name}.)"
