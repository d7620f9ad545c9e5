"""A wording-robustness benchmark: a seeded paraphraser of our renders (issue 19).

Our extractor parses our own templates back, so on our renders it is a round trip: exact on
every informative cell by construction (``docs/prose.md``). That figure says nothing about
prose worded otherwise, which is what an LLM extractor is measured on (seed 000 §8.6 stage
5, §8.8: GPT-5.4 reads the authors' render, 93.08 %). :func:`paraphrase` rewrites our render
line by line, with four kinds of rewrite at stated rates, and :func:`wording_robustness`
measures the extractor's faithfulness P(μ̂ = μ*) on the rewritten prose beside the round trip:

* ``authors`` — the authors' released wording of the same facts ("has a flexible approach to
  after-hours work", ", worked on weekend", ". Was supporting someone else", "Home-cooked food
  not prioritized", "No records for this date", "No device records for this date"; the
  benchmark specification §2.10 and the release's renderer). The extractor knows these.
* ``synonyms`` — the same sentence with other words ("slept for 7.5 hours", "focused minutes",
  "No social plans"). The extractor does not know these.
* ``order`` — the same clauses in another order ("woke at 06:44, went to bed at 22:42", "2
  home-cooked, 3 meals total", payments and calendar entries reversed).
* ``numbers`` — other number formats: a 24-hour clock as a 12-hour one ("10:42 pm"), decimal
  hours as hours and minutes ("7 h 30 min").

Invariants (tested)
-------------------
* Deterministic: a function of the texts, the rates and the generator's state. Every line draws
  one uniform number per kind whether or not a rule applies, so the draws do not depend on the
  wording.
* A line is rewritten by a kind with probability equal to that kind's rate when the kind has a
  rule for the line (``rewrites`` counts the eligible and the rewritten lines by kind); at rate 0
  the texts are returned unchanged.
* Only ``- `` lines and the profile's sentences are rewritten: headings, day headings and blank
  lines are kept, so every sentence keeps its section and day.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..evaluation.paper import PAPER_EXTRACTION
from ..testbed.questions import QIDS, SOURCES
from ..testbed.readout import readout
from ..testbed.schema import Testbed
from .extract import extract
from .faithfulness import CELLS, Faithfulness, faithfulness
from .render import SECTIONS, render

__all__ = ["KINDS", "Paraphrased", "WordingRobustness", "paraphrase", "wording_robustness",
           "wording_robustness_of"]

#: the kinds of rewrite, in the order they are applied to a line
KINDS = ("authors", "order", "synonyms", "numbers")
PRO, PLA, SLF, OBJ, DEV = range(5)

_Rule = tuple[int, re.Pattern, str | Callable[[re.Match], str]]


def _r(section: int, pattern: str, repl) -> _Rule:
    return section, re.compile(pattern), repl


def _twelve(m: re.Match) -> str:
    h, mm = int(m[1]), m[2]
    return f"{(h % 12) or 12}:{mm} {'am' if h % 24 < 12 else 'pm'}"


def _h_min(m: re.Match) -> str:
    hours = float(m[1])
    whole = int(hours)
    mins = round((hours - whole) * 60)
    return f"{whole} h {mins:02d} min"


def _reversed(head: str, sep: str) -> Callable[[re.Match], str]:
    """A rewrite listing the items of ``head<items>.`` (joined by ``sep``) in reverse order."""
    return lambda m: head + sep.join(reversed(m[1].split(sep))) + "."


_CLOCK = r"\b(\d\d):(\d\d)\b"
_HOURS = r"\b(\d+\.\d+) hours\b"

#: kind -> rules (section, pattern, replacement); the first rule that matches is applied once
_RULES: dict[str, tuple[_Rule, ...]] = {
    "authors": (
        _r(PRO, r"; is flexible about working after hours",
           "; has a flexible approach to after-hours work"),
        _r(SLF, r", weekend work commitment\.$", ", worked on weekend."),
        _r(SLF, r" \(supporting someone\)\.$", ". Was supporting someone else."),
        _r(PLA, r"^- No home-cooking priority\.$", "- Home-cooked food not prioritized."),
        _r(OBJ, r"^- No signals recorded for this date\.$", "- No records for this date."),
        _r(DEV, r"^- No signals recorded for this date\.$", "- No device records for this date."),
    ),
    "order": (
        _r(SLF, r"^- Sleep: (went to bed at [^,]+), (woke at [^,]+), ", r"- Sleep: \2, \1, "),
        _r(SLF, r"^- Diet: (\d+ meals total), (\d+ home-cooked)\.$", r"- Diet: \2, \1."),
        _r(PLA, r"^- Work capped at ([\d.]+) hours, finish by (\d\d:\d\d)\.$",
           r"- Finish work by \2, capped at \1 hours."),
        _r(OBJ, r"^- Timesheet: ([^,]+), ([^,.]+)\.$", r"- Timesheet: \2, \1."),
        _r(OBJ, r"^- Payments: (.+, .+)\.$", _reversed("- Payments: ", ", ")),
        _r(OBJ, r"^- Calendar: (.+; .+)\.$", _reversed("- Calendar: ", "; ")),
        _r(DEV, r"^- Activity: (\d+ active minutes), ((?:no )?workout detected)\.$",
           r"- Activity: \2, \1."),
        _r(PRO, r"^Traits: (.+); ((?:maintains|is flexible)[^;]+)\.$", r"Traits: \2; \1."),
    ),
    "synonyms": (
        _r(SLF, r", slept ", ", slept for "),
        _r(SLF, r" meals total,", " meals in total,"),
        _r(SLF, r"^- Work: ", "- Work: worked "),
        _r(SLF, r"^- Social: no activities\.$", "- Social: nothing social."),
        _r(SLF, r"^- Exercise: none\.$", "- Exercise: did not exercise."),
        _r(PLA, r"^- No social activity planned\.$", "- No social plans."),
        _r(PLA, r"^- Social activity planned\.$", "- Plans to socialise."),
        _r(PLA, r"^- No workout planned\.$", "- No exercise planned."),
        _r(PLA, r", targeting ", ", aiming for "),
        _r(PRO, r"typically goes to bed around", "usually goes to bed around"),
        _r(PRO, r"works about ", "works roughly "),
        _r(OBJ, r" hours logged,", " hours recorded,"),
        _r(OBJ, r"^- Records unavailable for this date\.$", "- Records missing for this date."),
        _r(DEV, r" active minutes,", " minutes of activity,"),
        _r(DEV, r" minutes of focus time,", " focused minutes,"),
        _r(DEV, r"^- Sleep tracker: ", "- Sleep tracking: "),
    ),
    "numbers": (
        _r(SLF, _CLOCK, _twelve), _r(DEV, _CLOCK, _twelve), _r(PLA, _CLOCK, _twelve),
        _r(PRO, _CLOCK, _twelve), _r(OBJ, _HOURS, _h_min),
    ),
}
_BY_SECTION = {kind: tuple(tuple(r for r in rules if r[0] == s) for s in range(5))
               for kind, rules in _RULES.items()}
_HEADS = {f"## {s}": i for i, s in enumerate(SECTIONS)}


@dataclass(frozen=True)
class Paraphrased:
    """Rewritten documents and what was rewritten.

    Attributes
    ----------
    texts : the documents, in input order.
    rates : kind -> the rate used.
    rewrites : one row per kind: ``kind, rate, eligible`` (lines a rule of the kind matched
        when its turn came), ``rewritten`` (of those, the lines drawn and rewritten).
    """

    texts: tuple[str, ...]
    rates: dict[str, float]
    rewrites: pd.DataFrame


def _rates(rate: float | Mapping[str, float]) -> dict[str, float]:
    if isinstance(rate, Mapping):
        unknown = sorted(set(rate) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown paraphrase kind(s) {unknown} (expected {', '.join(KINDS)})")
        out = {k: float(rate.get(k, 0.0)) for k in KINDS}
    else:
        out = dict.fromkeys(KINDS, float(rate))
    for k, v in out.items():
        if not 0.0 <= v <= 1.0:  # also refuses NaN
            raise ValueError(f"paraphrase rate of {k!r} must lie in [0, 1], got {v!r}")
    return out


def paraphrase(texts: Sequence[str], *, rate: float | Mapping[str, float],
               rng: np.random.Generator) -> Paraphrased:
    """Rewrite documents in the layout of :func:`core.prose.render.render` (module docstring).

    Parameters
    ----------
    texts : the documents.
    rate : one rate for every kind of :data:`KINDS`, or a rate per kind (missing kinds 0).
    rng : the generator of the draws (one uniform per line and kind, drawn up front).

    Returns
    -------
    Paraphrased
        ``ValueError`` for a rate outside [0, 1] or an unknown kind.
    """
    rates = _rates(rate)
    docs = [t.split("\n") for t in texts]
    sizes = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    u = rng.random((len(KINDS), int(sizes.sum())))
    eligible = dict.fromkeys(KINDS, 0)
    rewritten = dict.fromkeys(KINDS, 0)
    out, at = [], 0
    for lines in docs:
        section = -1
        new = []
        for line in lines:
            if line.startswith("## "):
                section = _HEADS.get(line, -1)
            elif section >= 0 and line and not line.startswith("#"):
                for k, kind in enumerate(KINDS):
                    for _, rx, repl in _BY_SECTION[kind][section]:
                        if rx.search(line):
                            eligible[kind] += 1
                            if u[k, at] < rates[kind]:
                                line = rx.sub(repl, line, count=1)
                                rewritten[kind] += 1
                            break
            new.append(line)
            at += 1
        out.append("\n".join(new))
    table = pd.DataFrame({"kind": list(KINDS), "rate": [rates[k] for k in KINDS],
                          "eligible": [eligible[k] for k in KINDS],
                          "rewritten": [rewritten[k] for k in KINDS]})
    return Paraphrased(tuple(out), rates, table)


@dataclass(frozen=True)
class WordingRobustness:
    """The extractor's faithfulness on our render (round trip) and on its paraphrase.

    Attributes
    ----------
    round_trip, paraphrased : :class:`~core.prose.faithfulness.Faithfulness` of the extractor
        on our render and on the paraphrased render, against the same μ*.
    by_source, by_question : ``source`` / ``question_id``, ``round_trip``, ``paraphrased``,
        ``paper`` (the paper's GPT-5.4 rate where it reports one, else NaN), fractions.
    rewrites : :attr:`Paraphrased.rewrites`.
    unread_lines : lines of the paraphrased prose the extractor could not read.
    partial_atoms : atoms of the paraphrased prose read from fewer days than their window
        because some of their days were unread (the ``"day"`` rule; 0 under ``"atom"``).
    null_misses, wrong_misses : misses on the paraphrased prose where μ̂ is ⊥ (the extractor
        said it could not read) and where μ̂ is a label other than μ* (a confident error; under
        the ``"day"`` rule, an atom read from fewer days can land on another label).
    rate, seed, cells, unread : the parameters (``unread``: one of
        :data:`core.prose.extract.UNREAD_RULES`).
    """

    round_trip: Faithfulness
    paraphrased: Faithfulness
    by_source: pd.DataFrame
    by_question: pd.DataFrame
    rewrites: pd.DataFrame
    unread_lines: int
    partial_atoms: int
    null_misses: int
    wrong_misses: int
    rate: dict[str, float]
    seed: int
    cells: str
    unread: str = "day"

    def to_dict(self) -> dict:
        """Plain form for JSON (rates as fractions)."""
        return {"rate": self.rate, "seed": self.seed, "cells": self.cells,
                "unread": self.unread, "round_trip": self.round_trip.overall,
                "paraphrased": self.paraphrased.overall, "n": self.paraphrased.n,
                "unread_lines": self.unread_lines, "partial_atoms": self.partial_atoms,
                "null_misses": self.null_misses, "wrong_misses": self.wrong_misses,
                "rewrites": self.rewrites.to_dict(orient="records"),
                "by_source": self.by_source.to_dict(orient="records"),
                "by_question": self.by_question.to_dict(orient="records")}


def wording_robustness(tb: Testbed, *, rate: float | Mapping[str, float], seed: int = 0,
                       cells: str = "all", activity_names: np.ndarray | None = None,
                       unread: str = "day") -> WordingRobustness:
    """Faithfulness of the extractor on our render and on a seeded paraphrase of it.

    Parameters
    ----------
    tb : the testbed whose sources are rendered (μ* is its direct readout).
    rate : the paraphrase rate(s) (:func:`paraphrase`).
    seed : seed of ``numpy.random.default_rng`` for the paraphrase draws.
    cells : the faithfulness denominator (:data:`core.prose.faithfulness.CELLS`; seed 000 §8.8
        counts ``"all"``, as the paper's 93.08 % does).
    activity_names : passed to :func:`core.prose.render.render` (an imported release).
    unread : the extractor's rule for an unread dated line (:func:`core.prose.extract.extract`).

    Returns
    -------
    WordingRobustness
        The paraphrased figure is the one comparable with an LLM extractor that reads prose
        it was not written for; the round trip is not.
    """
    r = render(tb, activity_names=activity_names)
    return wording_robustness_of(r.texts, readout(tb), persona_ids=r.persona_ids, rate=rate,
                                 seed=seed, cells=cells, unread=unread)


def wording_robustness_of(texts: Sequence[str], mu_star: np.ndarray, *,
                          persona_ids: Sequence[str], rate: float | Mapping[str, float],
                          seed: int = 0, cells: str = "all", unread: str = "day"
                          ) -> WordingRobustness:
    """:func:`wording_robustness` on given documents (a store's renders) and their μ*.

    ``mu_star`` is the ``(P, 18, 5)`` direct readout of the documents' personas, in order.
    ``ValueError`` for an unknown ``cells`` or ``unread``, a bad rate, or documents and atoms
    that differ in number.
    """
    if cells not in CELLS:
        raise ValueError(f"cells must be one of {', '.join(CELLS)}, got {cells!r}")
    ids = [str(p) for p in persona_ids]
    mu = np.asarray(mu_star)
    if not len(texts) == len(ids) == len(mu):
        raise ValueError(f"{len(texts)} documents, {len(ids)} persona ids and {len(mu)} atom "
                         "rows: they must be aligned")
    para = paraphrase(texts, rate=rate, rng=np.random.default_rng(seed))
    ours = faithfulness(extract(texts, persona_ids=ids, unread=unread).atoms, mu,
                        persona_ids=ids, cells=cells)
    ex = extract(para.texts, persona_ids=ids, unread=unread)
    theirs = faithfulness(ex.atoms, mu, persona_ids=ids, cells=cells)
    null = int(theirs.misses["mu_hat"].isna().sum())
    return WordingRobustness(
        ours, theirs, _side_by_side("source", SOURCES, ours, theirs),
        _side_by_side("question_id", QIDS, ours, theirs), para.rewrites, len(ex.unread),
        int((~ex.unread_atoms["null"]).sum()), null, len(theirs.misses) - null, para.rates,
        int(seed), cells, unread)


def _side_by_side(key: str, names: Sequence[str], ours: Faithfulness,
                  theirs: Faithfulness) -> pd.DataFrame:
    """``key``, round trip, paraphrased and the paper's GPT-5.4 rate (NaN where it reports
    none) of each source or question, as fractions."""
    paper = PAPER_EXTRACTION["by_source" if key == "source" else "by_question"]
    table = "by_source" if key == "source" else "by_question"
    return pd.DataFrame({
        key: list(names), "round_trip": getattr(ours, table)["rate"].to_numpy(),
        "paraphrased": getattr(theirs, table)["rate"].to_numpy(),
        "paper": [paper.get(x, np.nan) / 100 for x in names]})
