"""The selection panel of the Walkthrough: how many pairs each filter keeps, and why this one.

Source: seed 000 §8.7 (the selection protocol), as run by
:func:`core.evaluation.walkthrough.selection.select_walkthrough` with ``keep_all=True``.
:func:`protocol_panel` reads that ranked pool and returns what the page's "Why this
instance?" panel shows: the filters in words, the funnel of one question, the checks of the
chosen pair and the ten best-ranked pairs as a display-ready table.

Invariants (``tests/test_walkthrough_panels.py``): the funnel's counts never increase from
one step to the next and its last step (``qualify``) counts the pool's qualifying pairs of
the question; ``rank`` is set iff the pair qualifies; ``top`` has at most ten rows, ranks
ascending from 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.evaluation.walkthrough.selection import MARGIN_WINDOW, PENDING_FILTERS, REFERENCE_NAMES
from core.testbed.questions import question as get_question

__all__ = ["FunnelStep", "ProtocolPanel", "protocol_panel"]

#: The hard filters in words, by tag (the full protocol's and the testbed-only one's).
_COVERAGE = ("at least 4 of 5 sources give an atom, and planner, daily self-report and "
             "objective log are among them")
_SPREAD = "the atoms span at least two distinct values"


@dataclass(frozen=True)
class FunnelStep:
    """One step of the funnel: a short label, the pairs left, and the long form."""

    label: str
    count: int
    help: str


@dataclass(frozen=True)
class ProtocolPanel:
    """The "Why this instance?" panel for one (seed, persona, question).

    Attributes
    ----------
    qid : str
    full : bool
        The store has cached predictions, so the resolver filters (ii), (iii), (v) ran.
    reference : str
        What filter (iii) used: ``llm`` or ``majority_vote`` (``""`` without predictions).
    filters : tuple of (str, str)
        ``(tag, sentence)`` of every hard filter applied, in the order the page lists them.
    ranking : str
        How qualifying pairs are ranked, in one sentence.
    pending : tuple of (str, str)
        ``(tag, sentence)`` of the filters waiting for resolver outputs (empty if ``full``).
    steps : tuple of FunnelStep
        The question's test pairs, then what each filter keeps, then ``qualify``.
    in_pool : bool
        The persona is in the test split (the pool the protocol ranks).
    rank : int or None
        The pair's rank over all questions if it qualifies.
    n_qualifying : int
        Qualifying pairs over all questions.
    checks : tuple of (str, bool)
        The pair's filters and preferences, each met or not (empty if not ``in_pool``).
    top : DataFrame
        The ten best-ranked pairs, display-ready and narrow: ``rank``, ``seed``, ``persona``,
        ``question``, ``atoms`` (sources with an atom), ``planner`` and ``self-report`` (✓:
        shifted in its bias direction), then ``margin`` (DSNBF's) and ``fusion`` (✓: another
        fusion method also right) with resolver outputs, else ``agree`` (sources equal to GT),
        and ``preferences`` (soft preferences met). The page's caption (:attr:`top_note`)
        says this in words.
    top_note : str
        What the columns of ``top`` mean, in one sentence.
    """

    qid: str
    full: bool
    reference: str
    filters: tuple[tuple[str, str], ...]
    ranking: str
    pending: tuple[tuple[str, str], ...]
    steps: tuple[FunnelStep, ...]
    in_pool: bool
    rank: int | None
    n_qualifying: int
    checks: tuple[tuple[str, bool], ...]
    top: pd.DataFrame
    top_note: str


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def _mark(flags: pd.Series) -> list[str]:
    return ["✓" if bool(v) else "✗" for v in flags]


def _top_table(qualifying: pd.DataFrame, *, full: bool) -> pd.DataFrame:
    head = qualifying.head(10)
    out = pd.DataFrame({
        "rank": head["rank"].astype(int).tolist(),
        "seed": head["seed"].astype(int).tolist(),
        "persona": head["persona_id"].astype(str).tolist(),
        "question": head["question_id"].astype(str).tolist(),
        "atoms": head["n_sources"].astype(int).tolist(),
        "planner": _mark(head["planner_shift"]),
        "self-report": _mark(head["self_shift"]),
    })
    if full:
        out["margin"] = [f"{v:.2f}" for v in head["dsnbf_margin"]]
        out["fusion"] = _mark(head["pref_fusion"])
    else:
        out["agree"] = head["n_agree"].astype(int).tolist()
    out["preferences"] = head["n_prefs"].astype(int).tolist()
    return out


def protocol_panel(pool: pd.DataFrame, *, seed: int, persona_id: str, qid: str) -> ProtocolPanel:
    """The selection panel of one pair, from the ranked pool of ``select_walkthrough``.

    Parameters
    ----------
    pool : DataFrame
        :func:`~core.evaluation.walkthrough.selection.select_walkthrough` over the test split
        with ``keep_all=True`` (rejected pairs kept, ``rank = -1``); a ``reference`` column
        when it ran with resolver evidence.
    seed, persona_id, qid
        The pair shown.

    Raises
    ------
    ValueError
        For an unknown question or a pool without the protocol's columns.
    """
    get_question(qid)
    lacking = [c for c in ("rank", "seed", "persona_id", "question_id", "f_coverage",
                           "f_spread", "qualifies") if c not in pool.columns]
    if lacking:
        raise ValueError(f"pool lacks columns: {', '.join(lacking)}")
    full = "f_dsnbf" in pool.columns
    reference = (str(pool["reference"].iloc[0]) if full and len(pool) and "reference" in pool
                 else "majority_vote" if full else "")
    lo, hi = MARGIN_WINDOW
    if full:
        filters = (("i", _COVERAGE), ("ii", "DSNBF's arg max equals GT"),
                   ("iii", REFERENCE_NAMES[reference]), ("iv", _SPREAD),
                   ("v", f"DSNBF's posterior margin p(top1) − p(top2) lies in [{lo}, {hi}] — "
                         "neither trivial nor a coin toss"))
        ranking = ("Ranked by the soft preferences met — planner shifted in its bias "
                   "direction, self-report shifted in its bias direction, GPT and Gemini "
                   "disagree (only with both), at least one other fusion method (MV, BCF, "
                   "ABF, NBF) also correct — then by (persona id, seed, question order).")
        pending: tuple[tuple[str, str], ...] = ()
    else:
        filters = (("i", _COVERAGE), ("iv", _SPREAD),
                   ("new", "at least one atom disagrees with GT (standing in for the "
                           "resolver filters)"))
        ranking = ("Ranked by the soft preferences met: planner shifted in its bias "
                   "direction, self-report shifted in its bias direction, at least one source "
                   "agrees with GT; ties broken by (persona id, seed, question order).")
        pending = tuple(PENDING_FILTERS.items())
    words = dict(filters)
    of_q = pool[pool["question_id"] == qid]
    passed = of_q["f_coverage"] & of_q["f_spread"]
    steps = [FunnelStep(f"{qid}: test pairs", len(of_q), f"Test personas asked {qid}."),
             FunnelStep("pass (i)", int(of_q["f_coverage"].sum()), _first_up(words["i"])),
             FunnelStep("+ (iv)", int(passed.sum()), _first_up(words["iv"]))]
    if full:
        for tag, col in (("ii", "f_dsnbf"), ("iii", "f_reference"), ("v", "f_margin")):
            passed = passed & of_q[col]
            steps.append(FunnelStep(f"+ ({tag})", int(passed.sum()), _first_up(words[tag])))
    steps.append(FunnelStep("qualify", int(of_q["qualifies"].sum()),
                            "Pairs that pass every hard filter."))
    qualifying = pool[pool["rank"] > 0].sort_values("rank")
    pair = pool[(pool["seed"] == seed) & (pool["persona_id"] == persona_id)
                & (pool["question_id"] == qid)]
    checks: tuple[tuple[str, bool], ...] = ()
    rank = None
    if len(pair):
        row = pair.iloc[0]
        rank = int(row["rank"]) if int(row["rank"]) > 0 else None
        items = [("(i) coverage", row["f_coverage"]), ("(iv) spread", row["f_spread"])]
        if full:
            margin = ("no margin" if pd.isna(row["dsnbf_margin"])
                      else f"margin {row['dsnbf_margin']:.2f}")
            items += [("(ii) DSNBF correct", row["f_dsnbf"]),
                      ("(iii) " + ("an LLM wrong" if reference == "llm" else "MV wrong"),
                       row["f_reference"]),
                      (f"(v) {margin}", row["f_margin"]),
                      ("planner shift", row["planner_shift"]),
                      ("self-report shift", row["self_shift"]),
                      ("another fusion method correct", row["pref_fusion"])]
        else:
            items += [("disagreement", row["f_disagree"]),
                      ("planner shift", row["planner_shift"]),
                      ("self-report shift", row["self_shift"]),
                      (f"{int(row['n_agree'])} source(s) agree", row["pref_agree"])]
        checks = tuple((name, bool(ok)) for name, ok in items)
    return ProtocolPanel(
        qid=qid, full=full, reference=reference, filters=filters, ranking=ranking,
        pending=pending, steps=tuple(steps), in_pool=bool(len(pair)), rank=rank,
        n_qualifying=len(qualifying), checks=checks, top=_top_table(qualifying, full=full),
        top_note=("The ten best-ranked pairs over all questions. Atoms: sources that give one; "
                  "planner, self-report: ✓ if that source's atom is shifted in its bias "
                  "direction; " + ("margin: DSNBF's posterior margin; fusion: ✓ if another "
                                   "fusion method is also right; " if full
                                   else "agree: sources whose atom equals GT; ")
                  + "preferences: how many soft preferences the pair meets."))
