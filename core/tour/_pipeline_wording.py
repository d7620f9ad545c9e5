"""The tour's "unseen wording" stop: an extractor that meets sentences it was not written for.

Our extractor reads our own renders back exactly (a round trip; seed 000 §8.6 stages 4–6).
The wording-robustness benchmark (:mod:`core.prose.paraphrase`, issue 19) rewords the same
facts — the authors' own wording, clause order, synonyms, number formats — and the
extractor's faithfulness P(μ̂ = μ*) over every cell (seed 000 §8.8's denominator,
:func:`core.prose.faithfulness.faithfulness`) falls. Computed in memory, no store needed
(about half a second): the first :data:`PER_CLASS` test people of each difficulty class of the
default testbed's first seed (the same people as the default store's), rendered, reworded at
the Extraction page's setting (rate :data:`RATE` per kind of rewrite, generator seed
:data:`PARAPHRASE_SEED`) and read twice.

Selection rule (:func:`select_cell`): candidates are the cells the question reads where the
round trip's atom is not empty and equals μ*, and the reworded prose gives **another
answer** (a confident error; failing any, an emptied atom); ranked by the fewest unread days
behind the atom (one reworded sentence is enough), then the question order, the source order
and the people's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import duckdb
import numpy as np
import pandas as pd

from ..evaluation.paper import PAPER_EXTRACTION
from ..prose.extract import INFORMATIVE, Extraction, atom_lines, extract
from ..prose.faithfulness import Faithfulness, faithfulness
from ..prose.paraphrase import KINDS, paraphrase
from ..prose.render import render
from ..store import query_df
from ..testbed.config import TestbedConfig
from ..testbed.generate import generate
from ..testbed.questions import QIDS, QUESTIONS, SOURCE_LABELS, SOURCES
from ..testbed.readout import readout
from ..testbed.words import label_words
from ._pipeline_extraction import SOURCE_TOKENS
from ._pipeline_words import SOURCE_WORDS, count, person_words, question_words
from .model import Chart, StopView, TourData

__all__ = ["KEY", "PARAPHRASE_SEED", "PER_CLASS", "RATE", "SEED", "Wording", "select_cell",
           "wording", "wording_view"]

KEY = "unseen-wording"
#: test people per difficulty class, the paraphrase rate per kind and its generator seed
PER_CLASS, RATE, PARAPHRASE_SEED = 10, 0.1, 0
#: the testbed seed the people come from: the default testbed's first
SEED = int(TestbedConfig().seeds[0])
_KIND_WORDS = MappingProxyType({"authors": "the authors' own wording", "order": "clause order",
                                "synonyms": "synonyms", "numbers": "number formats"})


@dataclass(frozen=True, eq=False)
class Wording:
    """The sample read as written and reworded.

    Attributes
    ----------
    seed : the testbed seed the people come from.
    persona_id, name, difficulty : (P,) of each person; texts, reworded : the documents as
        written and reworded.
    star : (P, 18, 5) μ*; written, reworded_atoms : the extractions of both.
    round_trip, paraphrased : their faithfulness against μ* (every cell).
    rewrites : kind, rate, eligible and rewritten lines.
    """

    seed: int
    persona_id: tuple[str, ...]
    name: tuple[str, ...]
    difficulty: tuple[str, ...]
    texts: tuple[str, ...]
    reworded: tuple[str, ...]
    star: np.ndarray
    written: Extraction
    reworded_atoms: Extraction
    round_trip: Faithfulness
    paraphrased: Faithfulness
    rewrites: pd.DataFrame


def wording(*, per_class: int = PER_CLASS, rate: float = RATE,
            paraphrase_seed: int = PARAPHRASE_SEED) -> Wording:
    """Render, reword and read a sample of the default testbed (module docstring).

    Parameters
    ----------
    per_class : int
        Test people taken from each difficulty class of seed :data:`SEED`, in the testbed's
        order.
    rate : float
        The paraphrase rate per kind of rewrite (:func:`core.prose.paraphrase.paraphrase`).
    paraphrase_seed : int
        Seed of the paraphrase's ``numpy.random.default_rng``.

    Returns
    -------
    Wording
        Faithfulness of both readings against μ* over every cell (seed 000 §8.8).
        ``ValueError`` for ``per_class < 1`` or a rate outside [0, 1].
    """
    if int(per_class) < 1:
        raise ValueError(f"per_class must be at least 1, got {per_class}")
    default = TestbedConfig()
    tb = generate(TestbedConfig(seeds=(SEED,),
                                personas_per_difficulty=default.personas_per_difficulty))
    people = tb.personas
    pick = people[people["split"] == "test"].groupby("difficulty", sort=False).head(
        int(per_class))
    sub = tb.subset(people.index.isin(pick.index))
    r = render(sub)
    ids = [str(p) for p in r.persona_ids]
    para = paraphrase(r.texts, rate=float(rate), rng=np.random.default_rng(int(paraphrase_seed)))
    star = readout(sub)
    written, reworded = extract(r.texts, persona_ids=ids), extract(para.texts, persona_ids=ids)
    return Wording(SEED, tuple(ids), tuple(sub.personas["name"].astype(str)),
                   tuple(sub.personas["difficulty"].astype(str)), tuple(r.texts),
                   tuple(para.texts), star, written, reworded,
                   faithfulness(written.atoms, star, persona_ids=ids),
                   faithfulness(reworded.atoms, star, persona_ids=ids), para.rewrites)


def select_cell(w: Wording) -> pd.DataFrame:
    """The qualifying cells ``(p, q, s)``, best first (module docstring's rule), with
    ``wrong`` (another answer rather than an empty atom) and ``unread_days``."""
    base, got = w.written.atoms, w.reworded_atoms.atoms
    ok = INFORMATIVE[None] & (base >= 0) & (base == w.star) & (got != base)
    p, q, s = np.nonzero(ok)
    frame = pd.DataFrame({"p": p, "q": q, "s": s, "wrong": got[p, q, s] >= 0})
    ua = w.reworded_atoms.unread_atoms
    days = pd.DataFrame({"p": ua["doc"].to_numpy(int),
                         "q": ua["question_id"].map(QIDS.index).to_numpy(int),
                         "s": ua["source"].map(SOURCES.index).to_numpy(int),
                         "unread_days": ua["unread_days"].to_numpy(int)})
    frame = frame.merge(days, on=["p", "q", "s"], how="inner")
    frame = frame[frame["unread_days"] > 0]
    return frame.sort_values(["wrong", "unread_days", "q", "s", "p"],
                             ascending=[False, True, True, True, True],
                             kind="mergesort").reset_index(drop=True)


def _line_no(text: str, start: int) -> int:
    return text.count("\n", 0, int(start))


def _sentences(w: Wording, p: int, qid: str, source: str) -> tuple[str, str]:
    """The first sentence the atom read that the reworded prose made unreadable: (as written,
    as reworded), without the leading bullet."""
    read = w.written.frames
    mine = read[(read["doc"] == p).to_numpy() & atom_lines(read, qid, source)]
    lines = {_line_no(w.texts[p], s) for s in mine["start"]}
    unread = w.reworded_atoms.unread
    hits = sorted(_line_no(w.reworded[p], s) for s in unread.loc[unread["doc"] == p, "start"]
                  if _line_no(w.reworded[p], s) in lines)
    if not hits:
        return "", ""
    k = hits[0]
    before, after = w.texts[p].split("\n")[k], w.reworded[p].split("\n")[k]
    return before.removeprefix("- "), after.removeprefix("- ")


def _chart(w: Wording) -> Chart:
    rows = []
    for i, source in enumerate(SOURCES):
        for series, f in (("prose as written", w.round_trip),
                          ("prose reworded", w.paraphrased)):
            n, k = int(f.by_source["n"].iloc[i]), int(f.by_source["equal"].iloc[i])
            rows.append({"group": SOURCE_LABELS[source], "series": series,
                         "value": 100 * (n - k) / n, "text": f"{n - k:,} of {n:,} cells"})
        rows.append({"group": SOURCE_LABELS[source],
                     "series": "the paper's GPT-5.4 extractor (the memory-benchmark paper §8.8)",
                     "value": 100 - PAPER_EXTRACTION["by_source"][source],
                     "text": "quoted from the memory-benchmark paper §8.8"})
    frame = pd.DataFrame(rows)
    return Chart("bars", frame,
                 title="Cells the extractor reads wrong or not at all, by source",
                 y_title="cells not equal to the records (%)",
                 caption="Lower is better. On the prose as written our extractor misses almost "
                         "nothing; on the same facts reworded it misses some of every source, "
                         "like an extractor reading prose it was not written for.",
                 y_range=(0.0, float(np.ceil(frame["value"].max() * 1.15))))


def _store_link(data: TourData, w: Wording, p: int) -> tuple[tuple[str, str], ...]:
    """Person, question and source parameters, when the store holds this very document."""
    if not data.has_store:
        return ()
    try:
        doc = query_df(data.connection(), "SELECT doc FROM renders WHERE seed = ? AND "
                                          "persona_id = ?", [w.seed, w.persona_id[p]])
    except duckdb.Error:  # a store without renders: the link just omits the person
        return ()
    if doc.empty or str(doc["doc"].iloc[0]) != w.texts[p]:
        return ()
    return (("ex_persona", f"{w.seed}-{w.persona_id[p]}"),)


def wording_view(data: TourData) -> StopView:
    """The stop's view (module docstring); needs no store."""
    w = data.memo("pipeline:wording", wording)
    n = w.round_trip.n
    misses = w.paraphrased.misses
    n_empty = int(misses["mu_hat"].isna().sum())
    rw = w.rewrites
    settings = (
        ("People", f"the first {PER_CLASS} test people of each kind of person (difficulty "
                   f"class) of the default testbed's first batch (random seed {w.seed}), "
                   f"{len(w.persona_id)} in all"),
        ("Rewording", f"each kind of rewrite ({', '.join(_KIND_WORDS[k] for k in KINDS)}) "
                      f"applied to {100 * RATE:g} % of the lines it fits, random draws from "
                      f"generator seed {PARAPHRASE_SEED}: the Extraction page's setting"),
        ("Extractor", "ours: it reads the sentences it was written for, and reads an atom from "
                      "the other days when a day's sentence does not read"))
    evidence = (
        ("Cells read equal to the records, prose as written", count(w.round_trip.equal, n)),
        ("Cells read equal to the records, prose reworded", count(w.paraphrased.equal, n)),
        ("Misses on the reworded prose",
         f"{len(misses) - n_empty:,} another answer, {n_empty:,} left empty"),
        ("Lines reworded", count(int(rw["rewritten"].sum()), int(rw["eligible"].sum()))))
    cand = select_cell(w)
    failing = w.paraphrased.overall < w.round_trip.overall
    if cand.empty or not failing:
        return StopView(KEY, (), settings, None, "", "", (("ex_profile", "paraphrase"),),
                        evidence, False, note="Rewording changed no atom the extractor had "
                                              "read right in this sample.")
    top = cand.iloc[0]
    p, qi, si = int(top["p"]), int(top["q"]), int(top["s"])
    qid, source = QIDS[qi], SOURCES[si]
    labels = QUESTIONS[qi].labels
    right = label_words(qid, labels[int(w.star[p, qi, si])])
    code = int(w.reworded_atoms.atoms[p, qi, si])
    got = label_words(qid, labels[code]) if code >= 0 else "no answer"
    before, after = _sentences(w, p, qid, source)
    days = int(top["unread_days"])
    example = (
        ("Person", person_words(w.persona_id[p], w.seed, name=w.name[p],
                                difficulty=w.difficulty[p])),
        ("Question", question_words(qid)),
        ("Source", SOURCE_WORDS[source]),
        ("Sentence as written", before),
        ("The same sentence reworded", after),
        ("Atom", f"read “{right}” from the prose as written (the records' answer), "
                 f"“{got}” from the reworded prose"))
    answer = (f"No: the reworded sentence does not read, so the extractor answers “{got}” "
              f"instead of “{right}” for {SOURCE_WORDS[source]}.")
    reason = ("The extractor knows the sentences it was written for; “" + after + "” is not one "
              f"of them, so it leaves that day out ({days} unread day{'s' * (days != 1)} for "
              "this atom) and counts the others, which lands on another answer. The chart "
              "shows the same fall over every source: a few misses become many once the "
              "wording changes, as for the paper's extractor, which read prose it was not "
              "written for.")
    link = (*_store_link(data, w, p), ("ex_q", qid), ("ex_src", SOURCE_TOKENS[source]),
            ("ex_profile", "paraphrase"))
    return StopView(KEY, example, settings, _chart(w), answer, reason, link, evidence, True)
