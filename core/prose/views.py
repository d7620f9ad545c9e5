"""What the Extraction page shows, as result objects: the prose beside its atoms, faithfulness.

Seed 000 §8.6 (stages 4–6: the NL memory render and the extraction of one atom per question
and source), §8.8 (extraction faithfulness P(μ̂ = μ*)), §12.6 (where an extractor errs). The
page reads widgets and draws; the documents, the marked sentences, the grids and the facts
its sentences state come from here, read from the store's ``renders``, ``render_lines`` and
``atoms`` tables (:mod:`core.prose.tables`). The noise and 2 × 2 panels are in
:mod:`core.prose.mixed_view` (re-exported here).

Documents are shown line by line: one sentence per line, the ``- `` bullet stripped, plain
text (the page escapes it). A ``#### 2026-01-03 (Saturday)`` day heading is not a line of its
own: its label is the ``day`` of the lines below it (``None`` for the undated profile).

Invariants (``tests/test_prose_views.py``): the marked lines of an atom are the sentences
:meth:`core.prose.extract.Extraction.spans` lists for it (one rule, :func:`atom_lines`);
``faithfulness_view(...).overall`` is :func:`core.prose.faithfulness.faithfulness` of the
same arrays; every ``ProseSection.n_marked`` counts its marked lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from ..evaluation.display import Table, table
from ..evaluation.paper import PAPER_EXTRACTION
from ..store import load_atoms, query_df
from ..testbed.questions import Q_INDEX, QIDS, SOURCE_LABELS, SOURCES, question
from ..testbed.words import label_words
from .extract import INFORMATIVE, READS, atom_lines, atom_window
from .faithfulness import CELLS, faithfulness
from .mixed_view import (
    MIXED_METHODS,
    PROFILES,
    FactorialView,
    MixedFit,
    NoiseView,
    factorial_view,
    factorial_view_of,
    mixed_fit,
    mixed_fit_arrays,
    noise_view,
)
from .paraphrase import wording_robustness_of
from .render import SECTION_SOURCE, SECTIONS

__all__ = [
    "DEFAULT_ATOM",
    "MIXED_METHODS",
    "PROFILES",
    "FactorialView",
    "FaithfulnessView",
    "MixedFit",
    "NoiseView",
    "ProseLine",
    "ProseSection",
    "ProseView",
    "WordingView",
    "factorial_view",
    "factorial_view_of",
    "faithfulness_view",
    "faithfulness_view_of",
    "mixed_fit",
    "mixed_fit_arrays",
    "noise_view",
    "prose_excerpt",
    "prose_personas",
    "prose_view",
    "reads_text",
    "wording_view",
]

NO_ATOM = "—"
#: the atom a page selects first: C3 (bedtime against the plan) from the self-report, which
#: reads 14 dated sentences of its own and the planner's as context
DEFAULT_ATOM = ("C3", "daily_self_report")
#: how a page names a source in a sentence
SOURCE_WORDS = {"profile_ltm": "the profile", "planner": "the planner",
                "daily_self_report": "the self-report", "objective_log": "the objective log",
                "device_log": "the device log"}
#: what a source field states, in plain words (the fields :data:`READS` lists)
FIELD_WORDS = {
    "available": "record availability", "duration_h": "sleep hours", "bedtime_min": "bedtime",
    "hours": "work hours", "worked_on_weekend": "weekend work", "hours_limit": "work-hour cap",
    "work_block_min": "calendar work blocks", "hours_mean": "usual work hours",
    "focus_min": "focus time", "meals": "meals", "home_cooked": "home-cooked meals",
    "home_priority": "home-cooking priority", "meals_per_day": "usual meals per day",
    "home_cooked_mean": "usual home-cooked meals", "pay_delivery": "food-delivery purchases",
    "ex_days_per_week": "usual exercise days per week", "did_exercise": "exercise",
    "workout": "detected workouts", "exercise_session": "calendar exercise sessions",
    "ex_intended": "planned workouts", "afterhours_style": "after-hours work style",
    "n_act": "social activities", "social_event": "calendar social events",
    "pay_venue": "venue purchases", "social_intent": "planned social activity",
    "overtime": "overtime", "late_finish": "late finishes", "avoid_overtime": "overtime rule",
    "overtime_share": "usual overtime share", "social_dpw": "usual social days per week",
    "exercise_min": "exercise minutes", "active_min": "active minutes",
    "supporting_other": "supporting someone",
}


# --------------------------------------------------------------------------------- the prose


@dataclass(frozen=True)
class ProseLine:
    """One sentence of a document.

    ``doc[start:end] == text`` (the stored document); ``day`` is the day heading's label
    ("2026-01-03 (Saturday)") or ``None`` for the undated profile; ``marked`` says whether
    the selected atom read this line.
    """

    start: int
    end: int
    text: str
    day: str | None
    marked: bool


@dataclass(frozen=True)
class ProseSection:
    """One ``##`` section: its heading, its source, its lines and how many are marked."""

    title: str
    source: str
    lines: tuple[ProseLine, ...]
    n_marked: int


@dataclass(frozen=True, eq=False)
class ProseView:
    """A persona's prose beside its atom grid, with the sentences behind one atom marked.

    Attributes
    ----------
    seed, persona_id, extractor : the document and who extracted its μ̂ (``""`` if nobody).
    qid, source : the selected cell; ``question`` its plain text, ``question_title`` its title,
        ``source_label`` the source's name.
    sections : the five sections in the released order (an empty one if the document lacks
        it).
    grid : 18 questions × 5 sources of μ̂ labels in words (``"—"`` for no atom); the download
        has the codes of both μ̂ and μ*.
    grid_wrong : bool, the same shape: μ̂ differs from μ*.
    atom, truth_atom : the μ̂ and μ* label of the selected cell (``None`` for no atom);
        ``atom_words`` and ``truth_words`` say them in words.
    equal : ``atom == truth_atom``; informative : the source may answer the question at all
        (the benchmark specification §2.4).
    reads : plain words: what the atom's rule read.
    n_marked : marked lines over all sections.
    """

    seed: int
    persona_id: str
    extractor: str
    qid: str
    source: str
    question: str
    question_title: str
    source_label: str
    sections: tuple[ProseSection, ...]
    grid: Table
    grid_wrong: pd.DataFrame
    atom: str | None
    truth_atom: str | None
    equal: bool
    informative: bool
    reads: str
    n_marked: int

    @property
    def atom_words(self) -> str:
        """The selected μ̂ in words ("—" for no atom)."""
        return _words(self.qid, self.atom)

    @property
    def truth_words(self) -> str:
        """The selected μ* in words ("—" for no atom)."""
        return _words(self.qid, self.truth_atom)


def _check_cell(qid: str, source: str) -> None:
    if qid not in Q_INDEX:
        raise ValueError(f"unknown question {qid!r} (expected one of {', '.join(QIDS)})")
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")


def prose_personas(con: duckdb.DuckDBPyConnection) -> tuple[tuple[int, str], ...]:
    """``(seed, persona_id)`` of every persona with a stored render, test split first (then
    the store's persona order)."""
    df = query_df(con, """
        SELECT r.seed, r.persona_id FROM renders r JOIN personas p USING (seed, persona_id)
        ORDER BY CASE p.split WHEN 'test' THEN 0 ELSE 1 END, p.row""")
    return tuple((int(s), str(p)) for s, p in df.itertuples(index=False))


@dataclass(frozen=True)
class _Persona:
    doc: str
    lines: pd.DataFrame
    atoms: pd.DataFrame


def _load(con, seed: int, persona_id: str) -> _Persona:
    params = [int(seed), str(persona_id)]
    doc = query_df(con, "SELECT doc FROM renders WHERE seed = ? AND persona_id = ?", params)
    if doc.empty:
        known = query_df(con, "SELECT count(*) AS n FROM personas WHERE seed = ? AND "
                              "persona_id = ?", params)["n"].iloc[0]
        what = "has no stored render" if known else "is not in the store"
        raise ValueError(f"persona {persona_id!r} of seed {seed} {what}")
    lines = query_df(con, 'SELECT section, day_index, field, start, "end" FROM render_lines '
                          "WHERE seed = ? AND persona_id = ?", params)
    atoms = query_df(con, "SELECT question_id, source, kind, value, extractor FROM atoms "
                          "WHERE seed = ? AND persona_id = ?", params)
    return _Persona(str(doc["doc"].iloc[0]), lines, atoms)


def _parse(doc: str) -> dict[str, list[tuple[int, int, str, str | None]]]:
    """Section heading → its lines ``(start, end, text, day)`` (module docstring)."""
    out: dict[str, list] = {}
    current: list | None = None
    day = None
    pos = 0
    for raw in doc.split("\n"):
        at, pos = pos, pos + len(raw) + 1
        if raw.startswith("## "):
            current = out.setdefault(raw[3:].strip(), [])
            day = None
        elif raw.startswith("#### "):
            day = raw[5:].strip()
        elif raw.strip() and current is not None:
            bullet = 2 if raw.startswith("- ") else 0
            current.append((at + bullet, at + len(raw), raw[bullet:], day))
    return out


def _sections(doc: str, marked: set[int], *, only_marked: bool = False,
              max_lines: int | None = None, sources: Sequence[str] | None = None
              ) -> tuple[ProseSection, ...]:
    parsed = _parse(doc)
    by_source = {SECTION_SOURCE[t]: t for t in SECTIONS}
    out = []
    for src in (SOURCES if sources is None else sources):
        title = by_source[src]
        lines = [ProseLine(s, e, text, day, s in marked) for s, e, text, day in
                 parsed.get(title, [])]
        n = sum(x.marked for x in lines)
        if only_marked:
            lines = [x for x in lines if x.marked]
        if max_lines is not None:
            lines = lines[:max_lines]
        out.append(ProseSection(title, src, tuple(lines), n))
    return tuple(out)


def _label(value) -> str | None:
    return None if value is None or value != value else str(value)


def _words(qid: str, label: str | None) -> str:
    """An atom of ``qid`` in words (:func:`core.testbed.words.label_words`), "—" for none."""
    return NO_ATOM if label is None else label_words(qid, label)


def reads_text(qid: str, source: str) -> str:
    """What the atom ``(qid, source)`` reads, in plain words (from :data:`READS`).

    Examples
    --------
    >>> print(reads_text("C3", "daily_self_report"))
    It reads the last 14 days of the self-report's lines on bedtime, and, as context, the
    last 14 days of the planner's lines on bedtime.
    """
    _check_cell(qid, source)
    s = SOURCES.index(source)
    if not INFORMATIVE[Q_INDEX[qid], s]:
        return (f"Nothing: {SOURCE_WORDS[source]} is not one of the sources this question "
                "reads, so its atom is always empty.")
    context, own = READS[qid]
    groups: dict[int, list[str]] = {}
    for src, field in (*own.get(s, ()), *context):
        names = groups.setdefault(src, [])
        if FIELD_WORDS[field] not in names:
            names.append(FIELD_WORDS[field])
    parts = []
    for src, names in groups.items():
        lo, hi = atom_window(qid, src)
        window = "" if src == 0 or (lo, hi) == (1, 30) else f"the last {hi - lo + 1} days of "
        fields = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        parts.append((src, f"{window}{SOURCE_WORDS[SOURCES[src]]}'s lines on {fields}"))
    own_parts = [p for src, p in parts if src == s]
    other = [p for src, p in parts if src != s]
    text = "It reads " + ", ".join(own_parts or other[:1])
    rest = other if own_parts else other[1:]
    if rest:
        text += ", and, as context, " + " and ".join(rest)
    return text + "."


def prose_view(con: duckdb.DuckDBPyConnection, *, seed: int, persona_id: str, qid: str,
               source: str) -> ProseView:
    """The prose panel of one persona with the atom ``(qid, source)`` selected.

    Reads the persona's ``renders``, ``render_lines`` and ``atoms`` rows (three small
    parameterised queries). ``ValueError`` for an unknown question or source, or a persona
    the store has no render of.
    """
    _check_cell(qid, source)
    p = _load(con, seed, persona_id)
    marked = set(p.lines["start"][atom_lines(p.lines, qid, source)].astype(int).tolist())
    sections = _sections(p.doc, marked)
    qi, si = Q_INDEX[qid], SOURCES.index(source)
    cells = {kind: np.full((len(QIDS), len(SOURCES)), None, dtype=object)
             for kind in ("readout", "extracted")}
    a = p.atoms
    for kind, grid in cells.items():
        rows = a[a["kind"] == kind]
        grid[rows["question_id"].map(Q_INDEX).to_numpy(int),
             rows["source"].map(SOURCES.index).to_numpy(int)] = [
            _label(v) for v in rows["value"]]
    hat, star = cells["extracted"], cells["readout"]
    names = a.loc[(a["kind"] == "extracted") & a["extractor"].notna(), "extractor"].unique()
    labels = [SOURCE_LABELS[s] for s in SOURCES]
    shown = pd.DataFrame([[_words(q, v) for v in hat[i]] for i, q in enumerate(QIDS)],
                         index=list(QIDS), columns=labels)
    wrong = pd.DataFrame(hat != star, index=list(QIDS), columns=labels)
    full = pd.DataFrame({"question_id": np.repeat(QIDS, len(SOURCES)),
                         "source": np.tile(SOURCES, len(QIDS)),
                         "mu_hat": hat.ravel(), "mu_star": star.ravel()})
    grid = table(shown, {c: c for c in labels}, stem=f"atoms_{seed}_{persona_id}", full=full,
                 index=True)
    q = question(qid)
    return ProseView(
        seed=int(seed), persona_id=str(persona_id), extractor=", ".join(sorted(names)),
        qid=qid, source=source, question=q.text, question_title=q.title,
        source_label=SOURCE_LABELS[source], sections=sections, grid=grid, grid_wrong=wrong,
        atom=hat[qi, si], truth_atom=star[qi, si], equal=bool(hat[qi, si] == star[qi, si]),
        informative=bool(INFORMATIVE[qi, si]), reads=reads_text(qid, source),
        n_marked=sum(s.n_marked for s in sections))


def prose_excerpt(con: duckdb.DuckDBPyConnection, *, seed: int, persona_id: str, qid: str,
                  sources: Sequence[str], max_lines: int = 6) -> tuple[ProseSection, ...]:
    """The sentences behind the atoms of ``qid`` from ``sources``: one section per source, in
    the order given, holding only its marked lines (the first ``max_lines``; ``n_marked``
    counts them all). A source the question does not read has an empty section."""
    sources = list(sources)
    for src in sources:
        _check_cell(qid, src)
    if int(max_lines) < 1:
        raise ValueError(f"max_lines must be >= 1, got {max_lines}")
    p = _load(con, seed, persona_id)
    out = []
    for src in sources:
        marked = set(p.lines["start"][atom_lines(p.lines, qid, src)].astype(int).tolist())
        out += _sections(p.doc, marked, only_marked=True, max_lines=int(max_lines),
                         sources=[src])
    return tuple(out)


# ------------------------------------------------------------------------------ faithfulness


@dataclass(frozen=True, eq=False)
class FaithfulnessView:
    """Extraction faithfulness P(μ̂ = μ*) of one extractor (seed 000 §8.8).

    Attributes
    ----------
    extractor, cells : whose μ̂, and the denominator (:data:`core.prose.faithfulness.CELLS`).
    matrix : % equal, index = the five source labels, columns = the 18 question ids (NaN
        where no cell is counted).
    n : cells counted per entry (same shape).
    overall : % over every counted cell; k equal of n_cells; n_personas personas.
    by_source, by_question : the tables a reader compares (with the paper's GPT-5.4 figures).
    misses : one plain sentence on where μ̂ and μ* differ.
    paper_overall : the paper's GPT-5.4 faithfulness (%).
    """

    extractor: str
    cells: str
    matrix: pd.DataFrame
    n: pd.DataFrame
    overall: float
    k: int
    n_cells: int
    n_personas: int
    by_source: Table
    by_question: Table
    misses: str
    paper_overall: float


def _misses_sentence(f, mu_hat: np.ndarray, mu_star: np.ndarray, cells: str) -> str:
    n_miss = f.n - f.equal
    if f.n == 0:
        return "No cell is counted."
    if n_miss == 0:
        return f"All {f.n:,} cells agree with the direct readout."
    m = f.misses
    top = m.groupby(["question_id", "source"], sort=False).size().sort_values(ascending=False)
    (tq, ts), tn = top.index[0], int(top.iloc[0])
    where = (f"all of them in one cell, {tq} from {SOURCE_WORDS[ts]}" if len(top) == 1 else
             f"the most, {tn:,}, in {tq} from {SOURCE_WORDS[ts]}, over {len(top)} "
             "(question, source) cells")
    mask = np.ones(mu_star.shape, bool) if cells == "all" else (
        np.broadcast_to(INFORMATIVE, mu_star.shape) if cells == "informative" else mu_star >= 0)
    diff = mask & (mu_hat != mu_star)
    outside = int((diff & ~INFORMATIVE[None]).sum())
    text = (f"{n_miss:,} of {f.n:,} cells ({100 * n_miss / f.n:.2f} %) differ from the direct "
            f"readout, {where}.")
    if outside == n_miss:
        example = (" (B3's “no approach described” when the profile states no after-hours "
                   "style)" if tq == "B3" else "")
        text += (" Every one is a cell the question does not read: the readout gives all five "
                 f"sources the question's edge answer{example}, and the extractor, like the "
                 "release's, leaves a source outside the question's map empty.")
    elif outside:
        text += f" {outside:,} of them are cells the question does not read."
    return text


def faithfulness_view_of(mu_hat: np.ndarray, mu_star: np.ndarray, *, extractor: str,
                         cells: str = "all", persona_ids=None) -> FaithfulnessView:
    """:class:`FaithfulnessView` of two aligned ``(P, 18, 5)`` code arrays (the counting is
    :func:`core.prose.faithfulness.faithfulness`)."""
    f = faithfulness(mu_hat, mu_star, persona_ids=persona_ids, cells=cells)
    labels = [SOURCE_LABELS[s] for s in SOURCES]
    by_cell = f.by_cell
    rate = (100 * by_cell["rate"].to_numpy(float)).reshape(len(QIDS), len(SOURCES)).T
    count = by_cell["n"].to_numpy(int).reshape(len(QIDS), len(SOURCES)).T
    matrix = pd.DataFrame(rate, index=labels, columns=list(QIDS))
    n = pd.DataFrame(count, index=labels, columns=list(QIDS))
    paper_src = PAPER_EXTRACTION["by_source"]
    src = f.by_source.assign(label=labels, rate=100 * f.by_source["rate"],
                             paper=[paper_src.get(s, np.nan) for s in SOURCES])
    by_source = table(src, {"label": "source", "rate": "agreement %", "n": "cells",
                            "paper": "paper GPT-5.4 %"}, stem=f"faithfulness_source_{cells}",
                      formats={"n": "{:,}"})
    paper_q = PAPER_EXTRACTION["by_question"]
    qs = f.by_question.assign(title=[question(q).title for q in QIDS],
                              rate=100 * f.by_question["rate"],
                              paper=[paper_q.get(q, np.nan) for q in QIDS])
    by_question = table(qs, {"question_id": "question", "title": "title", "rate": "agreement %",
                             "n": "cells", "paper": "paper GPT-5.4 %"},
                        stem=f"faithfulness_question_{cells}", formats={"n": "{:,}"})
    overall = 100 * f.overall if f.n else float("nan")
    return FaithfulnessView(extractor, cells, matrix, n, overall, int(f.equal), int(f.n),
                            int(np.asarray(mu_hat).shape[0]), by_source, by_question,
                            _misses_sentence(f, np.asarray(mu_hat), np.asarray(mu_star), cells),
                            float(PAPER_EXTRACTION["overall"]))


def faithfulness_view(con: duckdb.DuckDBPyConnection, *, extractor: str | None = None,
                      cells: str = "all") -> FaithfulnessView:
    """Faithfulness of the store's extracted atoms of ``extractor`` against its μ*.

    ``extractor`` defaults to the one with the most rows. Only the personas that have that
    extractor's atoms are counted. ``ValueError`` when the store holds no extracted atoms,
    for an unknown extractor or an unknown ``cells``.
    """
    if cells not in CELLS:
        raise ValueError(f"cells must be one of {', '.join(CELLS)}, got {cells!r}")
    names = query_df(con, "SELECT extractor, count(*) AS n FROM atoms WHERE kind = "
                          "'extracted' AND extractor IS NOT NULL GROUP BY extractor "
                          "ORDER BY n DESC, extractor")
    if names.empty:
        raise ValueError("the store holds no extracted atoms (rebuild it, or import a release "
                         "that has them)")
    known = names["extractor"].tolist()
    name = known[0] if extractor is None else str(extractor)
    if name not in known:
        raise ValueError(f"no extracted atoms of {name!r} in the store (it has "
                         f"{', '.join(known)})")
    rows = query_df(con, "SELECT DISTINCT p.row FROM atoms a JOIN personas p USING "
                         "(seed, persona_id) WHERE a.kind = 'extracted' AND a.extractor = ? "
                         "ORDER BY p.row", [name])["row"].to_numpy(int)
    ids = query_df(con, "SELECT persona_id FROM personas ORDER BY row")["persona_id"].to_numpy(
        dtype=object)[rows]
    hat = load_atoms(con, kind="extracted", extractor=name)[rows]
    star = load_atoms(con, kind="readout")[rows]
    return faithfulness_view_of(hat, star, extractor=name, cells=cells, persona_ids=ids)


@dataclass(frozen=True)
class WordingView:
    """The extractor on the store's prose (a round trip) and on a seeded paraphrase of it.

    The two figures are different things (issue 19; ``docs/prose.md``): the round trip reads
    our own templates back and is exact by construction; the paraphrased figure reads the same
    facts reworded (the authors' wording, clause order, synonyms, number formats at ``rate``
    per kind) and is the only one comparable with the paper's GPT-5.4 extractor, which reads
    prose it was not written for (seed 000 §8.8).

    Attributes
    ----------
    rate, seed : the paraphrase's rate per kind and seed.
    round_trip, paraphrased, paper : % of all cells equal to μ* (seed 000 §8.8's denominator).
    n_cells, n_personas : cells counted and personas.
    null_misses, wrong_misses : misses on the paraphrase that are ⊥ (no day of the atom could
        be read, or an undated line was unread; reported) and that are a wrong label (an atom
        read from the days around its unread lines that lands on another label).
    by_source : source, round trip %, paraphrased %, paper GPT-5.4 %.
    by_question : the same by question.
    rewrites : kind, rate, eligible and rewritten lines.
    story : the comparison in words; it compares only the paraphrased figure with the paper.
    partial_atoms : atoms of the paraphrase read from fewer days than their window (the
        extractor's unread-day rule, ``docs/prose.md``).
    """

    rate: float
    seed: int
    round_trip: float
    paraphrased: float
    paper: float
    n_cells: int
    n_personas: int
    null_misses: int
    wrong_misses: int
    by_source: Table
    by_question: Table
    rewrites: Table
    story: str
    partial_atoms: int = 0


def _wording_story(rate: float, w, paper: float) -> str:
    para = 100 * w.paraphrased.overall
    gap = paper - para
    side = (f"{abs(gap):.1f} points below" if gap > 0.05 else
            f"{abs(gap):.1f} points above" if gap < -0.05 else "level with")
    misses = w.null_misses + w.wrong_misses
    kind = ("none of them a wrong answer: each is an atom the extractor leaves empty because a "
            "line it needed did not read as any sentence it knows" if w.wrong_misses == 0 else
            f"{w.null_misses:,} are atoms left empty ({len(w.round_trip.misses):,} of them "
            "empty in the round trip too; the others had nothing left to read around the lines "
            f"that did not read) and {w.wrong_misses:,} are wrong answers: atoms "
            "read from the days around a line that did not read, which landed on another "
            "answer")
    return (f"Like for like: with {100 * rate:g} % of the eligible lines reworded by each kind "
            f"of rewrite, our extractor agrees with the records on {para:.2f} % of cells, "
            f"{side} the paper's GPT-5.4 extractor ({paper:.2f} %), which also reads prose it "
            "was not written for. The two are the same kind of figure, not the same test: the "
            "share of reworded lines is our choice (more rewording gives a lower figure), and "
            "the paper's extractor read the authors' own wording, not ours reworded. Of the "
            f"{misses:,} misses, {kind}. The round "
            f"trip ({100 * w.round_trip.overall:.2f} %) is not a comparison with the paper: "
            "there the extractor reads back the very templates it was written for.")


def wording_view(con: duckdb.DuckDBPyConnection, *, rate: float = 0.1,
                 seed: int = 0) -> WordingView:
    """:class:`WordingView` of the store's renders against their μ* (every cell counted).

    ``ValueError`` when the store holds no render, or for a rate outside [0, 1].
    """
    docs = query_df(con, """
        SELECT p.row, r.persona_id, r.doc FROM renders r JOIN personas p USING (seed, persona_id)
        ORDER BY p.row""")
    if docs.empty:
        raise ValueError("the store holds no rendered prose (rebuild it with python -m core "
                         "build)")
    rows = docs["row"].to_numpy(int)
    star = load_atoms(con, kind="readout")[rows]
    w = wording_robustness_of(docs["doc"].tolist(), star, persona_ids=docs["persona_id"],
                              rate=float(rate), seed=seed)
    paper = float(PAPER_EXTRACTION["overall"])
    labels = {"label": "source", "round_trip": "round trip %", "paraphrased": "paraphrased %",
              "paper": "paper GPT-5.4 %"}
    src = w.by_source.assign(label=[SOURCE_LABELS[x] for x in SOURCES],
                             round_trip=100 * w.by_source["round_trip"],
                             paraphrased=100 * w.by_source["paraphrased"],
                             paper=100 * w.by_source["paper"])
    que = w.by_question.assign(title=[question(q).title for q in QIDS],
                               round_trip=100 * w.by_question["round_trip"],
                               paraphrased=100 * w.by_question["paraphrased"],
                               paper=100 * w.by_question["paper"])
    return WordingView(
        float(rate), int(seed), 100 * w.round_trip.overall, 100 * w.paraphrased.overall, paper,
        int(w.paraphrased.n), len(rows), w.null_misses, w.wrong_misses,
        table(src, labels, stem=f"wording_source_{rate:g}"),
        table(que, {"question_id": "question", "title": "title", **{
            k: v for k, v in labels.items() if k != "label"}}, stem=f"wording_question_{rate:g}"),
        table(w.rewrites, {"kind": "kind of rewrite", "eligible": "lines it applies to",
                           "rewritten": "lines rewritten"}, stem=f"wording_rewrites_{rate:g}",
              formats={"eligible": "{:,}", "rewritten": "{:,}"}),
        _wording_story(float(rate), w, paper), w.partial_atoms)
