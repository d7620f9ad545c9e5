"""The tour's "hints that over-correct" stop: a prompt naming each source's bias, and its cost.

Seed 000 §3 and Appendix 9.6.2: the Schema-aware prompt is the Direct prompt plus qualitative
descriptions of which way each source leans ("the self-report overreports sleep and
exercise …"). Over all people it buys an LLM a little (§4.1: 0.8–5.9 points; Table 2's
GPT-5.4 68.6 % → 69.7 %, :data:`core.evaluation.paper.PAPER_LLM_FORCED`); on the people whose
stated habits differ from what they do (the stated-vs-revealed class) it over-corrects:
Appendix 11.2, in its text on Table 13, quotes Schema below Direct for GPT-5.4 and Gemini 3.1
Pro on all questions and, most of all, on the temporal trend questions
(:data:`PAPER_SVR`). Our copy of the paper holds that text, not Table 13's body, so only the
quoted numbers are used.

Two paths (:func:`hints_view`):

* **Release** — a store imported from the authors' release holds the frozen answers of both
  prompts (:func:`core.evaluation.cached.load_llm_answers`). When some model answered test
  people of the stated-vs-revealed class under both, the stop scores them against the store's
  ground truth (an answer outside the answer space or a missing question counts wrong, as
  :mod:`core.evaluation.llm_rows` scores them) and checks that Schema-aware is less accurate
  than Direct on that class. Model: the first in the paper's order
  (:data:`core.evaluation.llm_rows.MODEL_LABELS`) with such people; question: the one where
  Schema-aware loses most answers against Direct on the class (ties: question order); person:
  the first (seed, person id) Direct gets right and Schema-aware wrong on it.
* **Paper** — otherwise: among the question sets :data:`PAPER_SVR` quotes for both prompts of
  both models, the one where the hints cost most (mean Direct − Schema-aware over the models);
  the check is that Schema-aware is below Direct for every model on it.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pandas as pd

from ..evaluation.cached import load_llm_answers
from ..evaluation.llm_rows import MODEL_LABELS
from ..evaluation.paper import PAPER_LLM_FORCED
from ..evaluation.walkthrough.persona import DIFFICULTY_LABELS
from ..store import query_df
from ..testbed.questions import Q_INDEX, QIDS, QUESTIONS, SOURCE_LABELS
from ..testbed.words import label_words
from ._pipeline_words import count, person_words, question_words, share
from .model import Chart, StopView, TourData

__all__ = ["HARD", "KEY", "PAPER_SVR", "PAPER_SVR_DSNBF", "VARIANTS", "hints_view",
           "paper_choice", "release_scores", "release_view"]

KEY = "hints-overcorrect"
HARD = "stated_vs_revealed"
VARIANTS = ("direct", "schema-aware")
#: Forced accuracy (%) on the stated-vs-revealed class, quoted from seed 000 Appendix 11.2
#: (its text on Table 13): question set → (model, prompt) → %. "Temporal trend questions" is
#: the paper's D-Temp type ("GPT-S 39.4%, Gem-S 40.0%, vs. their Direct counterparts at
#: 59.7%"); "all 18 questions" is "GPT: 59.8% vs. 61.8%; Gemini: 60.3% vs. 61.2%".
PAPER_SVR = MappingProxyType({
    "trend": MappingProxyType({("gpt-5.4", "direct"): 59.7, ("gpt-5.4", "schema-aware"): 39.4,
                               ("gemini_p2", "direct"): 59.7,
                               ("gemini_p2", "schema-aware"): 40.0}),
    "all": MappingProxyType({("gpt-5.4", "direct"): 61.8, ("gpt-5.4", "schema-aware"): 59.8,
                             ("gemini_p2", "direct"): 61.2,
                             ("gemini_p2", "schema-aware"): 60.3}),
})
#: DSNBF on the temporal trend questions of the same class, seed 000 Appendix 11.2 (its text on
#: Table 12: "on D-Temp, BCF and MV fall to 33.8% and 47.2% under svr (vs. DSNBF 76.2%)").
PAPER_SVR_DSNBF = MappingProxyType({"trend": 76.2})
_SET_WORDS = MappingProxyType({"trend": "the temporal trend questions",
                               "all": "all 18 questions"})
_PROMPT_WORDS = MappingProxyType({"direct": "without hints (Direct prompt)",
                                  "schema-aware": "with bias hints (Schema-aware prompt)"})
_HINTED = "daily_self_report"  # the source whose stated-vs-revealed lean the hints describe


def paper_choice() -> tuple[str, dict[str, float], bool]:
    """(question set, model → Direct − Schema-aware in points, check) of the paper path."""
    gaps = {}
    for qset, table in PAPER_SVR.items():
        models = sorted({m for m, _ in table}, key=list(MODEL_LABELS).index)
        gaps[qset] = {m: table[(m, "direct")] - table[(m, "schema-aware")] for m in models}
    best = max(gaps, key=lambda k: (np.mean(list(gaps[k].values())), -list(PAPER_SVR).index(k)))
    return best, gaps[best], all(g > 0 for g in gaps[best].values())


def release_scores(answers: pd.DataFrame, truth: pd.DataFrame, people: pd.DataFrame
                   ) -> dict[str, pd.DataFrame]:
    """Per model with both prompts: one row per (test person, question) both prompts cover.

    ``answers``: model, variant, seed, persona_id, question_id, answer (both variants);
    ``truth``: seed, persona_id, question_id, answer; ``people``: seed, persona_id,
    difficulty, split. A person counts for a model when each prompt has at least one answer
    row of them; a question missing from a prompt's answers, or an answer outside the
    question's answer space, counts wrong. Columns: seed, persona_id, difficulty, q (question
    index), truth, direct, schema-aware (the answers, None when missing), and the booleans
    ``right_direct``, ``right_schema-aware``.
    """
    keys = ["seed", "persona_id"]
    test = people.loc[people["split"] == "test", [*keys, "difficulty"]].astype(
        {"seed": "int64", "persona_id": str})
    truth = truth.astype({"seed": "int64", "persona_id": str}).rename(columns={"answer": "truth"})
    ans = answers.astype({"seed": "int64", "persona_id": str, "model": str, "variant": str})
    out = {}
    for model in sorted(ans["model"].unique(), key=lambda m: (
            list(MODEL_LABELS).index(m) if m in MODEL_LABELS else len(MODEL_LABELS), m)):
        mine = ans[ans["model"] == model]
        who = test
        for v in VARIANTS:  # people with at least one answer row under each prompt
            who = who.merge(mine.loc[mine["variant"] == v, keys].drop_duplicates(), on=keys)
        if who.empty:
            continue
        grid = who.merge(pd.DataFrame({"question_id": list(QIDS)}), how="cross").merge(
            truth, how="left", on=[*keys, "question_id"])
        for v in VARIANTS:
            part = mine.loc[mine["variant"] == v, [*keys, "question_id", "answer"]]
            grid = grid.merge(part.rename(columns={"answer": v}), how="left",
                              on=[*keys, "question_id"])
            # the truth is in the answer space, so an answer equal to it is too
            grid[f"right_{v}"] = (grid[v] == grid["truth"]).to_numpy(bool) & grid[v].notna()
        grid["q"] = grid["question_id"].map(Q_INDEX)
        out[model] = grid.drop(columns=["question_id"])
    return out


def _leaderboard_link(qid: str) -> tuple[tuple[str, str], ...]:
    return (("lb_q", qid), ("lb_src", SOURCE_LABELS[_HINTED]))


def _paper_view(note: str) -> StopView:
    qset, gaps, ok = paper_choice()
    table = PAPER_SVR[qset]
    names = {m: MODEL_LABELS[m] for m in gaps}
    qids = [q.qid for q in QUESTIONS if q.family == qset] if qset != "all" else list(QIDS)
    rows = []
    for s, table_s in PAPER_SVR.items():
        for m in gaps:
            for v in VARIANTS:
                rows.append({"group": f"{names[m]}, {_SET_WORDS[s]}",
                             "series": _PROMPT_WORDS[v], "value": table_s[(m, v)],
                             "text": "the memory-benchmark paper Appendix 11.2 (Table 13)"})
        if s in PAPER_SVR_DSNBF:
            rows.append({"group": f"DSNBF, {_SET_WORDS[s]}",
                         "series": "learned from labelled people (no prompt)",
                         "value": PAPER_SVR_DSNBF[s],
                         "text": "the memory-benchmark paper Appendix 11.2 (Table 12)"})
    chart = Chart("bars", pd.DataFrame(rows),
                  title="People whose stated habits differ from what they do: the bias hints "
                        "make both models worse",
                  y_title="accuracy on stated-vs-revealed people (%)",
                  caption="Numbers quoted from the memory-benchmark paper Appendix 11.2 (Tables "
                          "12 and 13). In "
                          "each pair the second bar is the same model given the hints.",
                  y_range=(0.0, 100.0))
    gpt = PAPER_LLM_FORCED[("gpt-5.4", "direct")], PAPER_LLM_FORCED[("gpt-5.4", "schema-aware")]
    example = (
        ("People", "the stated-vs-revealed kind: what they say about their habits differs "
                   "systematically from what they do"),
        ("Questions", _SET_WORDS[qset] if qset == "all" else f"{_SET_WORDS[qset]}, "
                      + " and ".join(f"“{QUESTIONS[Q_INDEX[q]].text}”" for q in qids)),
        ("Models", ", ".join(names.values()) + ", each with the Direct prompt and with the "
                   "Schema-aware prompt (the Direct prompt plus which way each source leans)"))
    settings = (("Where the numbers come from", "quoted from the memory-benchmark paper Appendix "
                                                "11.2, its "
                                                "text on Table 13 (Table 12 for DSNBF)"),)
    evidence = tuple(
        (f"{names[m]}, {_SET_WORDS[s]}, stated-vs-revealed people",
         f"{PAPER_SVR[s][(m, 'direct')]:.1f} % without hints, "
         f"{PAPER_SVR[s][(m, 'schema-aware')]:.1f} % with them")
        for s in PAPER_SVR for m in gaps) + (
        ("GPT-5.4 over all people and questions (the memory-benchmark paper §4.1, Table 2)",
         f"{gpt[0]:.1f} % without hints, {gpt[1]:.1f} % with them"),)
    pairs = " and ".join(f"{names[m]} falls from {table[(m, 'direct')]:.1f} % to "
                         f"{table[(m, 'schema-aware')]:.1f} %" for m in gaps)
    answer = (f"Worse: on {_SET_WORDS[qset]}, for stated-vs-revealed people, {pairs} once "
              "given the hints (the memory-benchmark paper Appendix 11.2).")
    reason = ("A hint names a direction, not a size: told that the self-report over-reports, "
              "the model corrects every self-report, also for people whose month changes in "
              "ways the hint does not describe. In the chart each model's hinted bar falls "
              "below its plain one" + (
                  f", while the learned resolver (DSNBF), which measured each source's "
                  f"confusion table on labelled people, reaches {PAPER_SVR_DSNBF[qset]:.1f} % "
                  "on the same questions." if qset in PAPER_SVR_DSNBF else "."))
    return StopView(KEY, example, settings, chart, answer, reason,
                    _leaderboard_link(qids[0]), evidence, ok,
                    note=note if ok else "The quoted numbers do not put the hinted prompt "
                                         "below the plain one.")


def release_view(model: str, grid: pd.DataFrame, n_models: int = 1) -> StopView:
    """The release path's view of ``model``'s :func:`release_scores` grid (module docstring);
    ``n_models`` is how many models qualified (named in the note when more than one)."""
    name = MODEL_LABELS.get(model, model)
    acc = {}
    rows = []
    for diff in [d for d in DIFFICULTY_LABELS if d in set(grid["difficulty"])]:
        part = grid[grid["difficulty"] == diff]
        for v in VARIANTS:
            k, n = int(part[f"right_{v}"].sum()), len(part)
            acc[(diff, v)] = (k, n)
            rows.append({"group": DIFFICULTY_LABELS[diff], "series": _PROMPT_WORDS[v],
                         "value": 100 * k / n, "text": f"{k:,} of {n:,} answers"})
    hard = grid[grid["difficulty"] == HARD]
    lost = (hard["right_direct"] & ~hard["right_schema-aware"]).groupby(hard["q"]).sum() - (
        ~hard["right_direct"] & hard["right_schema-aware"]).groupby(hard["q"]).sum()
    flips = hard[hard["right_direct"] & ~hard["right_schema-aware"]]
    (kd, n), (ks, _) = acc[(HARD, "direct")], acc[(HARD, "schema-aware")]
    ok = ks < kd and not flips.empty
    chart = Chart("bars", pd.DataFrame(rows),
                  title=f"{name} with and without the bias hints, by kind of person",
                  y_title="accuracy (%)", y_range=(0.0, 100.0),
                  caption="The imported answers scored against this store's truth; in each "
                          "pair the second bar is the same model given the hints.")
    settings = (("Answers", f"the frozen answers of {name} imported with the authors' release, "
                            f"both prompts, scored against this store's truth"),)
    evidence = tuple(
        (f"{DIFFICULTY_LABELS[d]} people, {_PROMPT_WORDS[v]}", count(*acc[(d, v)]))
        for d in DIFFICULTY_LABELS for v in VARIANTS if (d, v) in acc) + (
        ("Stated-vs-revealed answers right without hints and wrong with them",
         count(len(flips), n)),)
    note = "" if n_models == 1 else f"{n_models} models qualify; the first in the paper's order."
    if not ok:
        return StopView(KEY, (), settings, chart, "", "", (), evidence, False,
                        note=f"On the imported answers {name} is not less accurate with the "
                             "hints on stated-vs-revealed people "
                             f"({share(100 * ks / n)} against {share(100 * kd / n)}).")
    qi = int(max(lost.index, key=lambda q: (lost[q], -q)))
    pick = flips[flips["q"] == qi].sort_values(["seed", "persona_id"], kind="mergesort")
    top = pick.iloc[0] if len(pick) else flips.sort_values(["q", "seed", "persona_id"]).iloc[0]
    qid = QIDS[int(top["q"])]

    def said(v: str) -> str:
        a = top[v]
        if not isinstance(a, str):
            return "no answer"
        return label_words(qid, a) if a in QUESTIONS[Q_INDEX[qid]].labels else a

    example = (
        ("Person", person_words(top["persona_id"], top["seed"], difficulty=HARD)),
        ("Question", question_words(qid)),
        ("Without hints", said("direct")), ("With bias hints", said("schema-aware")),
        ("The truth", label_words(qid, top["truth"])))
    answer = (f"Worse: on stated-vs-revealed people {name} is right on "
              f"{share(100 * kd / n)} of answers without hints and {share(100 * ks / n)} with "
              f"them; here the hints turn “{said('direct')}” into “{said('schema-aware')}”.")
    reason = ("A hint names a direction, not a size: told that a source leans one way, the "
              "model corrects it for every person, also where the person's month does not lean "
              "that way. In the chart the hinted bar of the stated-vs-revealed people is the "
              "lower one.")
    return StopView(KEY, example, settings, chart, answer, reason, _leaderboard_link(qid),
                    evidence, True, note=note)


def hints_view(data: TourData) -> StopView:
    """The release path when the store holds both prompts' answers on stated-vs-revealed test
    people, else the paper path (module docstring); needs no store."""
    if not data.has_store:
        return _paper_view("These are the paper's numbers; a store imported from the authors' "
                           "release (python -m core import-release) checks them on its answers.")
    scores = data.memo("pipeline:llm-scores", lambda: _load_scores(data.connection()))
    hard = {m: g for m, g in scores.items() if (g["difficulty"] == HARD).any()}
    if hard:
        model = next(iter(hard))
        return release_view(model, hard[model], len(hard))
    people = {(s, p) for g in scores.values() for s, p in zip(g["seed"], g["persona_id"],
                                                              strict=True)}
    why = (f"The imported answers of both prompts cover {len(people)} test "
           f"{'person' if len(people) == 1 else 'people'}, none of the stated-vs-revealed kind, "
           "so the paper's numbers are shown." if scores else
           "This store holds no imported model answers, so the paper's numbers are shown.")
    return _paper_view(why)


def _load_scores(con) -> dict[str, pd.DataFrame]:
    answers = pd.concat([load_llm_answers(con, variant=v).assign(variant=v) for v in VARIANTS],
                        ignore_index=True)
    if answers.empty:
        return {}
    truth = query_df(con, "SELECT seed, persona_id, question_id, answer FROM ground_truth")
    people = query_df(con, "SELECT seed, persona_id, difficulty, split FROM personas")
    return release_scores(answers, truth, people)
