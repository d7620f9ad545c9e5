"""What the Leaderboard page shows, as result objects: one per panel.

Seed 000 §9 (the resolvers), §9.3 (95 % persona-cluster percentile bootstrap intervals), §10.1
(selective answering: per seed, then the mean over seeds), §2.14 (the paper's and the
regenerated reference numbers, :mod:`.paper`, already joined by :mod:`.tables`), §9.1 (NBF's
Laplace-smoothed confusion tables). The page reads widgets and draws; the numbers, the narrowed
tables and the facts its sentences state come from here.

The frozen LLM answers of an imported release (:mod:`.llm_rows`) join the forced and the
selective tables as extra rows, after the resolvers, with a ``kind`` column (resolver or
imported model answers) and the number of people each row is scored on; without them (every
generated store) the tables are exactly the resolvers' ones.

Invariants (``tests/test_leaderboard_view.py``, ``tests/test_leaderboard_llm.py``): a
headline's accuracy and interval are the forced table's row; ``methods`` keeps board order
whatever order it was asked in; the reachability share is present / (present + absent) of the
slices table; a confusion view's counts add up to the pooled test instances of the question;
LLM rows never change a resolver row or a headline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..resolvers.registry import method_short, method_words
from ..testbed.questions import SOURCE_LABELS, SOURCES, question
from ..testbed.words import label_words
from .diagnostics import confusion_matrix, learned_confusion
from .display import Table, table
from .llm_rows import LLM_KIND, RESOLVER_KIND, LLMRows
from .run import FORCED_METHODS

__all__ = [
    "HEADLINE_METHODS",
    "BoardView",
    "ImportedView",
    "SplitFacts",
    "ConfusionView",
    "Headline",
    "board_view",
    "confusion_view",
    "imported_view",
    "SourcesView",
    "learned_table",
    "sources_view",
    "split_facts",
]

#: The four methods whose forced accuracy heads the page.
HEADLINE_METHODS = ("dsnbf", "nbf", "ssb", "majority_vote")

_FORCED = {"label": "method", "accuracy": "accuracy %", "ci_low": "95 % low",
           "ci_high": "95 % high", "paper": "paper %", "delta_paper": "ours − paper",
           "regenerated": "regenerated %"}
_SELECTIVE = {"label": "method", "selective_accuracy": "selective %", "coverage": "coverage %",
              "gain_over_forced": "gain, points", "paper_selective": "paper selective %",
              "paper_coverage": "paper coverage %"}
#: the extra columns of a table that has LLM rows
_KIND = {"label": "method", "kind": "kind"}
_PEOPLE = {"n_clusters": "people"}
_SOURCES = {"source": "source", "coverage": "coverage %", "conflict_rate": "conflict %",
            "accuracy": "accuracy %", "acc_low": "Wilson low", "acc_high": "Wilson high"}


@dataclass(frozen=True)
class SplitFacts:
    """What the page's introduction states: the seeds and the (seed, persona) clusters of the
    test split, and its instances (clusters × 18 questions)."""

    seeds: tuple[int, ...]
    n_clusters: int

    @property
    def n_instances(self) -> int:
        return 18 * self.n_clusters


def split_facts(runs: Sequence) -> SplitFacts:
    """The test split of the store's runs (one :class:`~.run.SeedRun` per seed)."""
    if not runs:
        raise ValueError("no runs: the store holds no cached predictions")
    return SplitFacts(tuple(int(r.seed) for r in runs), sum(len(r.personas) for r in runs))


@dataclass(frozen=True)
class Headline:
    """One headline number: a method's forced accuracy (%) and its 95 % interval."""

    method: str
    short: str
    label: str
    accuracy: float
    ci_low: float
    ci_high: float
    delta_paper: float | None
    b: int

    @property
    def help(self) -> str:
        """The long form: what the method is, in words, and the interval."""
        return (f"{method_words()[self.method]} 95 % interval {self.ci_low:.1f} to "
                f"{self.ci_high:.1f} % ({self.b:,} bootstrap replicates).")


@dataclass(frozen=True)
class BoardView:
    """The board panel of the chosen methods and bootstrap size.

    ``main`` is the forced table (every method, for the forest figure and the download);
    ``reach_share`` is the percent of test instances where some atom equals GT; ``llm`` the
    rows of the imported LLM answers (None when the store has none).
    """

    b: int
    methods: tuple[str, ...]
    headlines: tuple[Headline, ...]
    forced: Table
    selective: Table
    per_type: pd.DataFrame
    per_difficulty: pd.DataFrame
    slices: pd.DataFrame
    reach_share: float
    main: pd.DataFrame
    llm: LLMRows | None = None

    @property
    def imported(self) -> pd.DataFrame | None:
        """The LLM rows for the forest figure (None when there are none)."""
        return None if self.llm is None or self.llm.empty else self.llm.frame

    @property
    def method_key(self) -> tuple[str, ...]:
        """One line per method shown: its short name and what it is, in words ("SSB — Single
        Source Best: for each question, trusts the one source …")."""
        short, words = method_short(), method_words()
        return tuple(f"{short[m]} — {words[m]}" for m in self.methods)


def board_view(main: pd.DataFrame, tables: Mapping[str, pd.DataFrame], *,
               methods: Sequence[str], b: int, llm: LLMRows | None = None) -> BoardView:
    """The board panel from :func:`.tables.main_table` and the bootstrap-free tables.

    Parameters
    ----------
    main : the forced table with ``b`` replicates (one row per method).
    tables : ``selective``, ``per_type``, ``per_difficulty`` and ``slices`` (as the
        Leaderboard's loader names them).
    methods : the methods to show (any order; unknown names raise ``ValueError``).
    b : the bootstrap replicates of ``main``.
    llm : the imported LLM answers' rows (:func:`.llm_rows.llm_rows`), shown after the
        resolvers in the forced table and, when they carry skip flags, the selective table;
        None or empty leaves both tables as they are.
    """
    unknown = sorted(set(methods) - set(FORCED_METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {', '.join(FORCED_METHODS)}")
    shown = tuple(m for m in FORCED_METHODS if m in set(methods))
    short = method_short()
    rows = main.set_index("method")
    heads = tuple(
        Headline(m, short[m], str(rows.loc[m, "label"]), float(rows.loc[m, "accuracy"]),
                 float(rows.loc[m, "ci_low"]), float(rows.loc[m, "ci_high"]),
                 None if pd.isna(rows.loc[m, "delta_paper"])
                 else float(rows.loc[m, "delta_paper"]), int(b))
        for m in HEADLINE_METHODS if m in rows.index)
    rows, sel = main[main["method"].isin(shown)], tables["selective"]
    forced_fmt, sel_fmt = {"delta_paper": "{:+.1f}"}, {"gain_over_forced": "{:+.1f}"}
    if llm is None or llm.empty:
        forced = table(rows, _FORCED, stem=f"forced_b{b}", full=main, formats=forced_fmt)
        selective = table(sel, _SELECTIVE, stem="selective", formats=sel_fmt)
    else:
        extra, people = llm.frame, int(main["n_clusters"].max()) if len(main) else 0
        forced = table(_with_kind(rows, extra, people=people), {**_KIND, **_FORCED, **_PEOPLE},
                       stem=f"forced_b{b}", full=_with_kind(main, extra, people=people),
                       formats=forced_fmt)
        both = _with_kind(sel, extra[extra["coverage"].notna()], people=people)
        selective = table(both, {**_KIND, **_SELECTIVE, **_PEOPLE}, stem="selective",
                          formats=sel_fmt)
    slices = tables["slices"]
    present, absent = float(slices["n_present"].iloc[0]), float(slices["n_absent"].iloc[0])
    share = 100 * present / (present + absent) if present + absent else float("nan")
    return BoardView(int(b), shown, heads, forced, selective, tables["per_type"],
                     tables["per_difficulty"], slices, share, main,
                     None if llm is None or llm.empty else llm)


def _with_kind(resolvers: pd.DataFrame, llm: pd.DataFrame, *, people: int) -> pd.DataFrame:
    """The resolvers' rows (``kind`` resolver) and then the LLM rows, with the columns of
    both; ``n_clusters`` is the people each row is scored on (``people``, every test person,
    for a resolver row that lacks it)."""
    head = resolvers.assign(kind=RESOLVER_KIND)
    if "n_clusters" not in head:
        head = head.assign(n_clusters=int(people))
    if llm.empty:
        return head
    cols = list(dict.fromkeys([*head.columns, *llm.columns]))
    return pd.concat([head, llm.assign(kind=LLM_KIND)], ignore_index=True)[cols]


@dataclass(frozen=True)
class ImportedView:
    """The imported LLM answers alone, for a store without resolver results (an imported
    release): their rows as a forced table, and the facts its caption states."""

    llm: LLMRows
    table: Table


def imported_view(llm: LLMRows) -> ImportedView:
    """The LLM rows of :func:`.llm_rows.llm_rows` as a table of their own (``ValueError``
    when there are none)."""
    if llm.empty:
        raise ValueError("no imported LLM answers to show")
    labels = {"label": "method", **{k: v for k, v in _FORCED.items() if k not in
                                    ("label", "regenerated")}, **_PEOPLE}
    if llm.has_skip_flags:
        labels |= {"selective_accuracy": "selective %", "coverage": "coverage %"}
    return ImportedView(llm, table(llm.frame, labels, stem=f"llm_rows_b{llm.b}",
                                   formats={"delta_paper": "{:+.1f}"}))


def _source_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(source=frame["source"].map(SOURCE_LABELS))


@dataclass(frozen=True)
class SourcesView:
    """Per source over every question: ``summary`` (percent, source codes, for the figure)
    and ``table`` (the columns a reader compares; its download is per source and question)."""

    summary: pd.DataFrame
    table: Table


def sources_view(sources: pd.DataFrame, reliability: pd.DataFrame) -> SourcesView:
    """The sources panel from the per-source and the per (source, question) tables."""
    return SourcesView(sources, table(_source_rows(sources), _SOURCES,
                                      stem="source_reliability_by_question", full=reliability))


@dataclass(frozen=True)
class ConfusionView:
    """One question and one source: its reliability row and the empirical confusion counts.

    ``empirical`` rows are the GT label, columns the source's atom (plus ⊥, no atom); the
    counts are over the pooled test split, so they add up to its instances (``shown`` keeps
    the labels as its index; the download has them as a column).
    """

    qid: str
    title: str
    text: str
    source: str
    source_label: str
    reliability: Table
    empirical: Table


def confusion_view(atoms: np.ndarray, gt: np.ndarray, reliability: pd.DataFrame, *,
                   qid: str, source: str) -> ConfusionView:
    """The confusion panel of ``qid`` and ``source`` over pooled test atoms and GT."""
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; known: {', '.join(SOURCES)}")
    q = question(qid)
    rows = _source_rows(reliability[reliability["question_id"] == qid])
    counts = confusion_matrix(atoms, gt, qid, source)
    shown = _readable(counts, qid)
    return ConfusionView(qid, q.title, q.text, source, SOURCE_LABELS[source],
                         table(rows, _SOURCES, stem=f"source_reliability_{qid}"),
                         table(shown, {c: c for c in shown.columns}, full=counts.reset_index(),
                               stem=f"confusion_{qid}_{source}", index=True))


def learned_table(model, *, qid: str, source: str, seed: int) -> Table:
    """NBF's learned P(atom = column | GT = row) of one question and source, to 2 decimals."""
    frame = learned_confusion(model, qid, source)
    shown = _readable(frame, qid)
    return table(shown, {c: c for c in shown.columns}, formats={c: "{:.2f}" for c in shown},
                 full=frame.reset_index(), stem=f"learned_{qid}_{source}_{seed}", index=True)


def _readable(matrix: pd.DataFrame, qid: str) -> pd.DataFrame:
    """A matrix of ``qid``'s answer labels with words for them (``less_than_40`` → "under 40 %
    of meals", :func:`core.testbed.words.label_words`); the downloads keep the labels."""
    labels = question(qid).labels
    words = {c: label_words(qid, str(c)) if c in labels else str(c)
             for c in (*matrix.index, *matrix.columns)}
    return matrix.rename(index=words, columns=words)
