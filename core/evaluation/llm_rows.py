"""Leaderboard rows of the frozen LLM answers an imported release carries.

Seed 000 §4.1 (Table 2's T3 rows: the LLMs reading the NL memory under the Direct and the
Schema-aware prompt), Appendix 10.1 (Table 10: the same LLMs skipping by their own
``would_skip`` flag) and §4.2 (GPT-5.4 on the structured atom grid, the release's
``struct_llm`` with variants ``oracle`` = μ* and ``extracted`` = μ̂); the scoring rules are the
benchmark specification's §2.11 (LLM baselines) and §2.12 (metrics). Only an imported release
(:mod:`core.testbed.importer`) has such answers; a generated store has none, and then the
board shows no LLM row. Each row is scored against *our* ground truth of the test split (the
store's ``ground_truth``), the way :func:`.tables.main_table` and :func:`.tables.selective_table`
score a resolver, and carries the paper's number (:data:`.paper.PAPER_LLM_FORCED`,
:data:`.paper.PAPER_LLM_SELECTIVE`) where the paper reports one.

Scoring rules
-------------
* **Forced accuracy** ignores ``would_skip`` (the model still wrote an answer, spec §2.11).
  An answer outside the question's answer space, a null answer and a question missing from
  the model's file all count **wrong**. Macro over the 18 questions, pooled over seeds, with
  the 95 % persona-cluster percentile bootstrap of :func:`.metrics.cluster_bootstrap`
  (seed 000 §9.3).
* **Selective accuracy and coverage** honour ``would_skip``: an instance is answered when the
  model gave a row for it and did not flag it; a missing question is unanswered. Selective
  accuracy is the macro over questions of correct / answered (questions with no answer are
  dropped), coverage is answered / (people × 18); both per seed, then the mean over seeds
  (spec §2.12, as :func:`.tables.selective_table`). Both are NaN when the answers carry no
  skip flag (no ``would_skip`` column, or only nulls in it).
* **Who is scored.** A (model, variant) row is scored on the test-split people with at least
  one answer row of it, and says how many (``n_clusters``); answers of people outside the
  test split are ignored. One person gives a point interval (every resample is that person).

Invariants (``tests/test_leaderboard_llm.py``): every person contributes exactly 18 instances,
so ``accuracy`` = 100 · ``n_correct`` / (18 · ``n_clusters``) exactly; ``ci_low`` ≤
``accuracy`` ≤ ``ci_high``; every question answered and nothing skipped ⇒ ``coverage`` = 100
and ``selective_accuracy`` = ``forced_accuracy``; ``n_out_of_space`` + ``n_missing`` ≤
18 · ``n_clusters`` − ``n_correct`` (neither can be right).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from ..store import query_df
from ..testbed.questions import QIDS, QUESTIONS
from .metrics import cluster_bootstrap, coverage, forced_accuracy, selective_accuracy
from .paper import PAPER_LLM_FORCED, PAPER_LLM_SELECTIVE

__all__ = [
    "LLM_KIND",
    "MODEL_LABELS",
    "RESOLVER_KIND",
    "VARIANT_LABELS",
    "LLMRows",
    "llm_rows",
    "load_llm_inputs",
]

#: The ``kind`` of a board row: a resolver of this app, or the imported answers of a model.
RESOLVER_KIND = "resolver"
LLM_KIND = "imported model answers"

#: Display names of the release's model folders (spec §3), in the paper's order; any other
#: folder name is shown as it is.
MODEL_LABELS = {"gpt-5.4": "GPT-5.4", "gemini_p2": "Gemini 3.1 Pro",
                "deepseek-v3.2": "DeepSeek V3.2", "qwen3-235b-a22b-2507": "Qwen3 235B",
                "struct_llm": "GPT-5.4"}
#: What each prompt variant gives the model (seed 000 §3 T3, §4.2).
VARIANT_LABELS = {"direct": "Direct prompt", "schema-aware": "Schema-aware prompt",
                  "oracle": "on the μ* atom grid", "extracted": "on the μ̂ atom grid"}

_ANSWER_COLUMNS = ("model", "variant", "seed", "persona_id", "question_id", "answer")
_TRUTH_COLUMNS = ("seed", "persona_id", "question_id", "answer")
_QINDEX = {q: i for i, q in enumerate(QIDS)}
_SPACE = pd.DataFrame([(q.qid, lab) for q in QUESTIONS for lab in q.labels],
                      columns=["question_id", "answer"], dtype=object)
_COLUMNS = ("method", "model", "variant", "label", "kind", "accuracy", "ci_low", "ci_high",
            "paper", "delta_paper", "regenerated", "n_clusters", "n_instances", "n_correct",
            "n_out_of_space", "n_missing", "n_skipped", "selective_accuracy", "coverage",
            "forced_accuracy", "gain_over_forced", "paper_selective", "paper_coverage",
            "delta_selective", "delta_coverage")


@dataclass(frozen=True, eq=False)
class LLMRows:
    """The board rows of every imported (model, variant), one per row of ``frame``.

    ``frame`` has the columns of :func:`.tables.main_table` that the board shows (``method``,
    ``label``, ``accuracy``, ``ci_low``, ``ci_high``, ``paper``, ``delta_paper``,
    ``regenerated`` — always NaN —, ``n_clusters``) plus ``model``, ``variant``, ``kind``
    (:data:`LLM_KIND`), the counts (``n_instances``, ``n_correct``, ``n_out_of_space``,
    ``n_missing``, ``n_skipped``) and the selective columns of
    :func:`.tables.selective_table` (``selective_accuracy``, ``coverage``,
    ``forced_accuracy`` per seed then mean, ``gain_over_forced``, ``paper_selective``,
    ``paper_coverage``, ``delta_selective``, ``delta_coverage``). Percent throughout.
    ``b`` is the bootstrap replicates of the intervals.
    """

    frame: pd.DataFrame
    b: int

    @property
    def empty(self) -> bool:
        return self.frame.empty

    @property
    def models(self) -> tuple[str, ...]:
        """The distinct model names of the rows, in row order (``("GPT-5.4",)``)."""
        return tuple(dict.fromkeys(self.frame["model"].map(lambda m: MODEL_LABELS.get(m, m))))

    @property
    def n_people(self) -> tuple[int, int]:
        """The fewest and the most people a row is scored on."""
        n = self.frame["n_clusters"]
        return (int(n.min()), int(n.max())) if len(n) else (0, 0)

    @property
    def people(self) -> str:
        """``"1 person"``, ``"120 people"`` or ``"12 to 120 people"``."""
        lo, hi = self.n_people
        if lo != hi:
            return f"{lo:,} to {hi:,} people"
        return "1 person" if hi == 1 else f"{hi:,} people"

    @property
    def has_skip_flags(self) -> bool:
        """Whether any row has a selective accuracy (its answers carry ``would_skip``)."""
        return bool(self.frame["coverage"].notna().any())


def _label(model: str, variant: str) -> str:
    return f"{MODEL_LABELS.get(model, model)} ({VARIANT_LABELS.get(variant, variant)})"


def _order(keys: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The paper's model and variant order first, then the rest by name."""
    models, variants = list(MODEL_LABELS), list(VARIANT_LABELS)

    def rank(k: tuple[str, str]) -> tuple:
        m, v = k
        return (models.index(m) if m in models else len(models), m,
                variants.index(v) if v in variants else len(variants), v)
    return sorted(keys, key=rank)


def _check(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lack column(s) {missing}; expected {', '.join(columns)}")


def _truth_index(truth: pd.DataFrame) -> pd.DataFrame:
    """Validate the ground truth: every person has the 18 questions once each."""
    _check(truth, _TRUTH_COLUMNS, "the ground-truth rows")
    unknown = sorted(set(truth["question_id"]) - set(QIDS))
    if unknown:
        raise ValueError(f"ground truth of unknown question(s) {unknown}")
    if truth.duplicated(["seed", "persona_id", "question_id"]).any():
        raise ValueError("the ground truth has a (seed, persona_id, question_id) twice")
    sizes = truth.groupby(["seed", "persona_id"]).size()
    short = sizes[sizes != len(QIDS)]
    if len(short):
        seed, pid = short.index[0]
        raise ValueError(f"the ground truth of ({seed}, {pid!r}) has {short.iloc[0]} of the "
                         f"{len(QIDS)} questions")
    return truth.astype({"seed": "int64", "persona_id": str})


def _mean(values) -> float:
    """The mean over seeds of the finite values (NaN when none is: nothing answered)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def _score(group: pd.DataFrame, truth: pd.DataFrame, *, b: int, seed: int,
           has_flags: bool) -> dict | None:
    """One (model, variant): the (people, 18) correct and answered grids and their numbers
    (None when nobody of the test split answered)."""
    people = (group[["seed", "persona_id"]].drop_duplicates()
              .merge(truth[["seed", "persona_id"]].drop_duplicates(), on=["seed", "persona_id"])
              .sort_values(["seed", "persona_id"], kind="stable").reset_index(drop=True))
    n = len(people)
    if n == 0:
        return None
    people["_p"] = np.arange(n)
    rows = group.merge(people, on=["seed", "persona_id"])
    if rows.duplicated(["seed", "persona_id", "question_id"]).any():
        raise ValueError("the answers have a (model, variant, seed, persona_id, question_id) "
                         "twice")
    rows = rows.merge(truth.rename(columns={"answer": "_gt"}),
                      on=["seed", "persona_id", "question_id"], how="left")
    unknown = sorted(set(rows.loc[rows["_gt"].isna(), "question_id"]))
    if unknown:
        raise ValueError(f"answers to unknown question(s) {unknown}")
    p, q = rows["_p"].to_numpy(), rows["question_id"].map(_QINDEX).to_numpy()
    hit = (rows["answer"].astype(object) == rows["_gt"].astype(object)).to_numpy(bool)
    correct = np.zeros((n, len(QIDS)), bool)
    answered = np.zeros((n, len(QIDS)), bool)
    correct[p, q] = hit
    flags = (rows["would_skip"].astype("boolean").fillna(False).to_numpy(bool) if has_flags
             else np.zeros(len(rows), bool))
    answered[p, q] = ~flags
    in_space = rows[["question_id", "answer"]].astype(object).merge(_SPACE, how="left",
                                                                    indicator=True)
    ci = cluster_bootstrap(correct, b=b, seed=seed)
    out = {"accuracy": 100 * ci.estimate, "ci_low": 100 * ci.low, "ci_high": 100 * ci.high,
           "n_clusters": n, "n_instances": int(correct.size), "n_correct": int(correct.sum()),
           "n_out_of_space": int((in_space["_merge"] == "left_only").sum()),
           "n_missing": int(correct.size - len(rows)), "n_skipped": int(flags.sum())}
    if not has_flags:
        return out | {"selective_accuracy": np.nan, "coverage": np.nan,
                      "forced_accuracy": np.nan}
    seeds = people["seed"].to_numpy()
    per = [(selective_accuracy(correct[m], ~answered[m]), coverage(~answered[m]),
            forced_accuracy(correct[m])) for m in (seeds == s for s in np.unique(seeds))]
    sel, cov, forced = (100 * _mean(x) for x in zip(*per, strict=True))
    return out | {"selective_accuracy": sel, "coverage": cov, "forced_accuracy": forced}


def llm_rows(answers: pd.DataFrame, truth: pd.DataFrame, *, b: int = 2000,
             seed: int = 42) -> LLMRows:
    """Score every (model, variant) of ``answers`` against ``truth`` (module docstring).

    Parameters
    ----------
    answers : DataFrame
        The store's ``llm_answers``: ``model, variant, seed, persona_id, question_id, answer``
        and, optionally, ``would_skip`` (bool; the selective columns need it).
    truth : DataFrame
        ``seed, persona_id, question_id, answer``: the ground truth of the test split, all 18
        questions of each person (:func:`load_llm_inputs` reads it from the store).
    b, seed : int
        Bootstrap replicates (≥ 1) and the seed of their resampling, as
        :func:`.tables.main_table`'s.

    Returns
    -------
    LLMRows
        One row per (model, variant) with at least one answered test person, in the paper's
        order (GPT-5.4, Gemini, DeepSeek, Qwen3, the atom-grid GPT-5.4; Direct before
        Schema-aware), then any other model by name. Empty when there is nothing to score.

    Raises
    ------
    ValueError
        A missing column, ``b`` < 1, a question outside the 18, a person whose ground truth
        lacks a question, or an answer given twice.
    """
    if int(b) < 1:
        raise ValueError(f"b must be >= 1, got {b}")
    _check(answers, _ANSWER_COLUMNS, "the LLM answers")
    truth = _truth_index(truth)
    ans = answers.astype({"seed": "int64", "persona_id": str, "model": str, "variant": str})
    has_col = "would_skip" in ans.columns
    out = []
    groups = dict(iter(ans.groupby(["model", "variant"], sort=False))) if len(ans) else {}
    for model, variant in _order(list(groups)):
        group = groups[(model, variant)]
        has_flags = has_col and bool(group["would_skip"].notna().any())
        row = _score(group, truth, b=int(b), seed=int(seed), has_flags=has_flags)
        if row is None:
            continue  # nobody of the test split answered
        paper = PAPER_LLM_FORCED.get((model, variant), np.nan)
        ps, pc = PAPER_LLM_SELECTIVE.get((model, variant), (np.nan, np.nan))
        out.append({
            "method": f"llm:{model}:{variant}", "model": model, "variant": variant,
            "label": _label(model, variant), "kind": LLM_KIND, **row, "paper": paper,
            "delta_paper": row["accuracy"] - paper, "regenerated": np.nan,
            "gain_over_forced": row["selective_accuracy"] - row["forced_accuracy"],
            "paper_selective": ps, "paper_coverage": pc,
            "delta_selective": row["selective_accuracy"] - ps,
            "delta_coverage": row["coverage"] - pc})
    frame = pd.DataFrame(out, columns=list(_COLUMNS))
    return LLMRows(frame, int(b))


def load_llm_inputs(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The store's LLM answers and the ground truth of the test-split people who have any.

    Returns ``(answers, truth)`` for :func:`llm_rows`; both empty when the store holds no
    LLM answers (every generated store).
    """
    answers = query_df(con, "SELECT model, variant, seed, persona_id, question_id, answer, "
                            "would_skip FROM llm_answers")
    truth = query_df(con, """
        SELECT g.seed, g.persona_id, g.question_id, g.answer
        FROM ground_truth g JOIN personas p USING (seed, persona_id)
             JOIN (SELECT DISTINCT seed, persona_id FROM llm_answers) a USING (seed, persona_id)
        WHERE p.split = 'test'
        ORDER BY g.seed, g.persona_id, g.question_id""")
    return answers, truth
