"""Rebuild resolver runs from the predictions cached in the store.

``core.build.build_store`` writes every resolver's test predictions (run id
``default-<config key>``);
:func:`load_runs` turns them back into :class:`~core.evaluation.run.SeedRun` objects, so the
tables of :mod:`core.evaluation.tables` work without refitting. Fitted models are not stored:
``SeedRun.models`` is empty and ``Prediction.extra`` holds only ``margin``.

Also here: :func:`load_arrays` (every persona's GT and μ*, to refit a resolver on demand),
:func:`persona_predictions` and :func:`load_test_predictions` (cached answers as long
frames) and :func:`load_llm_answers` (frozen LLM answers of an imported release).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from ..resolvers._common import Prediction
from ..store import StoreError, load_atoms, query_df
from ..testbed.questions import QIDS, QUESTIONS
from .run import FORCED_METHODS, SELECTIVE_METHODS, SeedRun

__all__ = [
    "default_run_id",
    "load_arrays",
    "load_llm_answers",
    "load_runs",
    "load_test_predictions",
    "persona_predictions",
]


def default_run_id(con: duckdb.DuckDBPyConnection) -> str:
    """The run id the store was built with ('' if it has none)."""
    meta = query_df(con, "SELECT value FROM meta WHERE key = 'default_run_id'")
    return str(meta["value"].iloc[0]) if len(meta) else ""


def _code_sql(column: str) -> str:
    """SQL turning a label column into its display code, question by question (constants
    from the question spec only; no user text)."""
    parts = []
    for q in QUESTIONS:
        labels = ", ".join("'" + lab + "'" for lab in q.labels)
        parts.append(f"WHEN '{q.qid}' THEN list_position([{labels}], {column}) - 1")
    return "CASE question_id " + " ".join(parts) + " END"


def load_runs(con: duckdb.DuckDBPyConnection, *, run_id: str | None = None) -> list[SeedRun]:
    """Cached predictions of ``run_id`` (default: the store's default run) as SeedRuns.

    Test personas keep the store's row order, so bootstrap resamples match a fresh run.
    """
    rid = run_id or default_run_id(con)
    if not rid:
        raise StoreError("the store has no cached predictions; run: python -m core evaluate")
    qorder = ", ".join(f"('{q}', {i})" for i, q in enumerate(QIDS))
    preds = query_df(con, f"""
        WITH q(question_id, qi) AS (VALUES {qorder})
        SELECT pr.method, pr.seed, p.row, q.qi, {_code_sql('pr.answer')} AS code,
               pr.confidence, pr.skipped, pr.margin
        FROM predictions pr JOIN personas p USING (seed, persona_id) JOIN q USING (question_id)
        WHERE pr.run_id = ? ORDER BY pr.method, p.row, q.qi""", [rid])
    if preds.empty:
        raise StoreError(f"no cached predictions for run {rid!r}")
    if preds["code"].isna().any():
        raise StoreError(f"cached answers of run {rid!r} fall outside their answer spaces")
    gt_df = query_df(con, f"""
        WITH q(question_id, qi) AS (VALUES {qorder})
        SELECT p.row, q.qi, {_code_sql('g.answer')} AS code
        FROM ground_truth g JOIN personas p USING (seed, persona_id) JOIN q USING (question_id)
        ORDER BY p.row, q.qi""")
    personas = query_df(con, "SELECT * FROM personas ORDER BY row")
    n_all = len(personas)
    gt_all = np.full((n_all, len(QIDS)), -1, np.int8)
    gt_all[gt_df["row"].to_numpy(), gt_df["qi"].to_numpy()] = gt_df["code"].to_numpy()
    atoms = load_atoms(con, kind="readout")
    runs = []
    for seed in sorted(preds["seed"].unique()):
        ps = preds[preds["seed"] == seed]
        rows = np.unique(ps["row"].to_numpy())
        n = len(rows)
        predictions = {}
        for m in FORCED_METHODS + SELECTIVE_METHODS:
            pm = ps[ps["method"] == m]
            if pm.empty:
                continue
            if len(pm) != n * len(QIDS):
                raise StoreError(f"run {rid!r}: {m} has {len(pm)} rows for {n} personas")
            shape = (n, len(QIDS))
            predictions[m] = Prediction(
                m, pm["code"].to_numpy().astype(np.int8).reshape(shape),
                pm["confidence"].to_numpy(float).reshape(shape),
                pm["skipped"].to_numpy(bool).reshape(shape),
                {"margin": pm["margin"].to_numpy(float, na_value=np.nan).reshape(shape)})
        sel = personas.iloc[rows].reset_index(drop=True)
        runs.append(SeedRun(int(seed), sel.drop(columns=["row"]), gt_all[rows], atoms[rows],
                            predictions, {}))
    return runs


def _gt_codes(con: duckdb.DuckDBPyConnection, n: int) -> np.ndarray:
    """Ground-truth display codes (n, 18) in persona ``row`` order (−1 = missing)."""
    qorder = ", ".join(f"('{q}', {i})" for i, q in enumerate(QIDS))
    gt_df = query_df(con, f"""
        WITH q(question_id, qi) AS (VALUES {qorder})
        SELECT p.row, q.qi, {_code_sql('g.answer')} AS code
        FROM ground_truth g JOIN personas p USING (seed, persona_id) JOIN q USING (question_id)
        ORDER BY p.row, q.qi""")
    gt = np.full((n, len(QIDS)), -1, np.int8)
    ok = gt_df["code"].notna().to_numpy()
    gt[gt_df["row"].to_numpy()[ok], gt_df["qi"].to_numpy()[ok]] = (
        gt_df["code"].to_numpy()[ok].astype(np.int8))
    return gt


def load_arrays(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Every persona with its GT codes and μ* atoms, for refitting resolvers from the store.

    Returns
    -------
    personas : DataFrame
        The ``personas`` table in ``row`` order (without the ``row`` column).
    gt : ndarray of shape (P, 18), int8
        Ground-truth display codes (−1 = missing).
    atoms : ndarray of shape (P, 18, 5), int8
        Direct-readout atoms μ* (−1 = no atom).

    Select one seed with a mask on ``personas["seed"]`` and pass the three to
    :func:`core.evaluation.run.run_seed`.
    """
    personas = query_df(con, "SELECT * FROM personas ORDER BY row")
    gt = _gt_codes(con, len(personas))
    atoms = load_atoms(con, kind="readout")
    return personas.drop(columns=["row"]), gt, atoms


def persona_predictions(con: duckdb.DuckDBPyConnection, *, seed: int, persona_id: str,
                        run_id: str | None = None) -> pd.DataFrame:
    """One persona's cached predictions: method, question_id, answer, confidence, skipped,
    margin (empty if the persona is not in the run's test split or there is no run)."""
    rid = run_id or default_run_id(con)
    return query_df(con, "SELECT method, question_id, answer, confidence, skipped, margin "
                         "FROM predictions WHERE run_id = ? AND seed = ? AND persona_id = ?",
                    [rid, int(seed), str(persona_id)])


def load_test_predictions(con: duckdb.DuckDBPyConnection, methods: tuple[str, ...], *,
                          run_id: str | None = None) -> pd.DataFrame:
    """Cached predictions of ``methods`` (long: method, seed, persona_id, question_id, answer,
    confidence, skipped, margin); empty when the store has no cached run."""
    rid = run_id or default_run_id(con)
    if not rid or not methods:
        return pd.DataFrame(columns=["method", "seed", "persona_id", "question_id", "answer",
                                     "confidence", "skipped", "margin"])
    marks = ", ".join("?" for _ in methods)
    return query_df(con, "SELECT method, seed, persona_id, question_id, answer, confidence, "
                         f"skipped, margin FROM predictions WHERE run_id = ? AND method IN "
                         f"({marks})", [rid, *methods])


def load_llm_answers(con: duckdb.DuckDBPyConnection, *, variant: str = "direct"
                     ) -> pd.DataFrame:
    """Frozen LLM answers of one prompt variant (long: model, seed, persona_id, question_id,
    answer, would_skip); only imported releases have any."""
    return query_df(con, "SELECT model, seed, persona_id, question_id, answer, would_skip "
                         "FROM llm_answers WHERE variant = ?", [variant])
