"""Audit of the ground truth: Python label functions against an independent SQL version.

the design card §4 (``audit``): recompute GT from the store's tables twice — with
:func:`core.testbed.labels.ground_truth` on arrays read back from the store, and with
:func:`core.testbed.labels_sql.sql_ground_truth` inside DuckDB — and compare both with each
other, with the stored ``ground_truth`` table and with imported ``reference_labels``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pandas as pd

from .store import load_testbed, query_df
from .testbed.labels import ground_truth
from .testbed.labels_sql import sql_ground_truth
from .testbed.questions import QIDS

__all__ = ["AuditResult", "audit_store"]

_KEYS = ["seed", "persona_id", "question_id"]


@dataclass(frozen=True)
class AuditResult:
    """Agreement counts; ``table`` has one row per question and comparison.

    Attributes
    ----------
    n_rows : persona × question rows compared.
    python_vs_sql, python_vs_stored : rows where the two agree.
    n_reference, python_vs_reference : imported reference labels and agreements (0 if none).
    table : DataFrame with columns question_id, comparison, n, agree, rate.
    mismatches : up to 20 disagreeing rows for inspection.
    """

    n_rows: int
    python_vs_sql: int
    python_vs_stored: int
    n_reference: int
    python_vs_reference: int
    table: pd.DataFrame
    mismatches: pd.DataFrame

    @property
    def ok(self) -> bool:
        """True when every comparison agrees on every row."""
        return (self.python_vs_sql == self.n_rows and self.python_vs_stored == self.n_rows
                and self.python_vs_reference == self.n_reference)

    def to_dict(self) -> dict:
        """JSON-ready summary."""
        return {
            "ok": self.ok,
            "rows": self.n_rows,
            "python_vs_sql": self.python_vs_sql,
            "python_vs_stored": self.python_vs_stored,
            "reference_rows": self.n_reference,
            "python_vs_reference": self.python_vs_reference,
            "per_question": self.table.to_dict(orient="records"),
            "mismatches": self.mismatches.to_dict(orient="records"),
        }


def _compare(a: pd.DataFrame, b: pd.DataFrame, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    m = a[_KEYS + ["answer"]].merge(b[_KEYS + ["answer"]], on=_KEYS, how="inner",
                                    suffixes=("_a", "_b"))
    m["agree"] = m["answer_a"] == m["answer_b"]
    per_q = (m.groupby("question_id", sort=False)["agree"].agg(["size", "sum"])
             .reindex(list(QIDS)).dropna().reset_index())
    per_q.columns = ["question_id", "n", "agree"]
    per_q["comparison"] = name
    bad = m.loc[~m["agree"], _KEYS + ["answer_a", "answer_b"]].assign(comparison=name)
    return per_q, bad


def audit_store(con: duckdb.DuckDBPyConnection) -> AuditResult:
    """Recompute GT in Python and in SQL over the store and compare (see module docstring)."""
    tb = load_testbed(con)
    py = ground_truth(tb, details=False)
    with con.cursor() as cur:
        sql = sql_ground_truth(cur)
    stored = query_df(con, "SELECT seed, persona_id, question_id, answer FROM ground_truth")
    ref = query_df(con, "SELECT seed, persona_id, question_id, answer FROM reference_labels")
    parts, bads = [], []
    for other, name in ((sql, "python_vs_sql"), (stored, "python_vs_stored"),
                        (ref, "python_vs_reference")):
        if len(other):
            t, b = _compare(py, other, name)
            parts.append(t)
            bads.append(b)
    table = pd.concat(parts, ignore_index=True)
    table["n"] = table["n"].astype(int)
    table["agree"] = table["agree"].astype(int)
    table["rate"] = table["agree"] / table["n"]
    table = table[["question_id", "comparison", "n", "agree", "rate"]]

    def total(name: str, col: str) -> int:
        return int(table.loc[table["comparison"] == name, col].sum())

    # a row missing from one side counts as a disagreement
    n_rows = len(py)
    mism = pd.concat(bads, ignore_index=True).head(20)
    return AuditResult(
        n_rows=n_rows,
        python_vs_sql=total("python_vs_sql", "agree") if len(sql) == n_rows else -1,
        python_vs_stored=total("python_vs_stored", "agree") if len(stored) == n_rows else -1,
        n_reference=len(ref),
        python_vs_reference=total("python_vs_reference", "agree"),
        table=table,
        mismatches=mism,
    )
