"""Fusion scored by per-answer judgements, under two label sources: NQ-open's ranking flip.

NQ-open's labels (``data/nq301``, seed 003 §5.1) are judgements of answers — people (``human``,
Y) and exact match against a finite reference list (``exact_match``, Z) said of each
(question, answer) whether it is right — and several different answers to one question can
be right. So a fused answer is scored **exactly** by looking its (question, answer) pair up
in the judgements, not by comparing it with one truth string:

* :class:`AnswerJudgements` holds, per label source, one verdict per (item, class) pair:
  1 right, 0 wrong, NaN when nobody judged it or the judgements of the claims that collapse
  into it (rows sharing a normalised answer) disagree (*disputed*).
* :func:`label_source_board` scores each resolver's answers (and, optionally, each source's
  own claims) under every label source: accuracy over the answered, judged items with a
  Wilson interval (:func:`core.stats.wilson_interval`; Wilson 1927), the rank under each
  label (1 = best; ties share the better rank), and the pairs whose order flips between the
  two label sources — seed 003's ranking reversal (its Eq. 1–2 for Brier; here for accuracy,
  where a flip is only empirical) on a fusion leaderboard.

Only label-blind resolvers make a clean comparison: a supervised one (naive Bayes) is fitted
to one label source's truth, so its score under the other is not the same experiment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from core.fusion.claims import Claims
from core.fusion.importer import ImportResult
from core.fusion.result import FusionResult
from core.stats import wilson_interval

__all__ = ["AnswerJudgements", "LabelSourceBoard", "judgements_from_rows",
           "label_source_board", "nq_open_board", "nq_open_judgements", "source_labels"]


@dataclass(frozen=True, eq=False)
class AnswerJudgements:
    """Verdicts on (item, class) pairs under one or more label sources.

    Attributes
    ----------
    labels : tuple of str
        The label sources (e.g. ``("human", "exact_match")``).
    item, cls : ndarray of int64, shape (P,)
        The judged pairs, sorted by ``item · n_classes + cls``.
    value : ndarray of float, shape (L, P)
        1 right, 0 wrong, NaN not judged or disputed, per label source.
    n_classes : int
    disputed : tuple of int
        Per label source, the pairs whose claims' judgements disagree.
    """

    labels: tuple[str, ...]
    item: np.ndarray
    cls: np.ndarray
    value: np.ndarray
    n_classes: int
    disputed: tuple[int, ...]

    def lookup(self, item: np.ndarray, cls: np.ndarray) -> np.ndarray:
        """Verdicts of the pairs ``(item[j], cls[j])``, shape (L, n); NaN where unknown
        (including ``cls < 0``, an abstention)."""
        item = np.asarray(item, np.int64)
        cls = np.asarray(cls, np.int64)
        out = np.full((len(self.labels), item.size), np.nan)
        if self.item.size == 0:
            return out
        key = self.item * self.n_classes + self.cls
        want = item * self.n_classes + cls
        pos = np.minimum(np.searchsorted(key, want), key.size - 1)
        hit = (cls >= 0) & (key[pos] == want)
        out[:, hit] = self.value[:, pos[hit]]
        return out


def judgements_from_rows(claims: Claims, rows: Mapping[str, np.ndarray]) -> AnswerJudgements:
    """Verdicts per (item, class) from verdicts per claim row.

    Parameters
    ----------
    claims : Claims
    rows : mapping of label source → array (n_claims,)
        Each claim's verdict under that label (1 right, 0 wrong, NaN not judged), aligned
        with the claims' rows.

    Returns
    -------
    AnswerJudgements
        A pair is right (wrong) when every judged claim of it is; disputed (NaN) when they
        disagree; NaN when none was judged.
    """
    if not rows:
        raise ValueError("judgements need at least one label source")
    K = claims.n_classes
    key = claims.item * K + claims.claim
    uniq, inv = np.unique(key, return_inverse=True)
    values, disputed = [], []
    for name, v in rows.items():
        v = np.asarray(v, float)
        if v.shape != (claims.n_claims,):
            raise ValueError(f"the {name} verdicts must have {claims.n_claims} entries, one a "
                             "claim")
        bad = ~np.isnan(v) & (v != 0) & (v != 1)
        if bad.any():
            raise ValueError(f"row {int(np.flatnonzero(bad)[0]) + 1}: a {name} verdict must be "
                             "0, 1 or missing")
        judged = ~np.isnan(v)
        n = np.bincount(inv, weights=judged.astype(float), minlength=uniq.size)
        k = np.bincount(inv, weights=np.where(judged, v, 0.0), minlength=uniq.size)
        out = np.full(uniq.size, np.nan)
        out[(n > 0) & (k == n)] = 1.0
        out[(n > 0) & (k == 0)] = 0.0
        values.append(out)
        disputed.append(int(((k > 0) & (k < n)).sum()))
    return AnswerJudgements(labels=tuple(rows), item=uniq // K, cls=uniq % K,
                            value=np.vstack(values), n_classes=K, disputed=tuple(disputed))


def nq_open_judgements(imported: ImportResult | None = None) -> AnswerJudgements:
    """The human and exact-match verdicts of NQ-open's answers, on the claims of
    ``imported`` (default: ``load_builtin("nq_open")``; any normaliser it applied is
    honoured, answers it merged being disputed where their verdicts differ)."""
    from core.fusion.builtin import NQ_LABEL_COLUMNS, load_builtin, nq_open_frame

    if imported is None:
        imported = load_builtin("nq_open")
    claims = imported.claims
    frame = nq_open_frame()
    same = (len(frame) == claims.n_claims
            and np.array_equal(np.asarray(claims.items, object)[claims.item],
                               frame["item"].to_numpy(object))
            and np.array_equal(np.asarray(claims.sources, object)[claims.source],
                               frame["source"].to_numpy(object)))
    if not same:
        raise ValueError("these claims are not NQ-open's as load_builtin('nq_open') reads them")
    return judgements_from_rows(claims, {lab: frame[lab].to_numpy(float)
                                         for lab in NQ_LABEL_COLUMNS})


def source_labels(claims: Claims) -> dict[str, np.ndarray]:
    """Each source's own claim per item as a label array (−1 where it made none): the
    single sources as rows of a board."""
    grid = np.full((claims.n_sources, claims.n_items), -1, np.int64)
    grid[claims.source, claims.item] = claims.claim
    return {name: grid[s] for s, name in enumerate(claims.sources)}


@dataclass(frozen=True, eq=False)
class LabelSourceBoard:
    """Accuracy of every method under every label source, ranks, and the flipped pairs.

    Attributes
    ----------
    labels : tuple of str
        The label sources; ``between`` names the two whose rankings are compared.
    frame : pandas.DataFrame
        One row per (method, label): ``method``, ``kind`` ("resolver" or "source"),
        ``label``, ``items`` (items scored over), ``answered``, ``judged`` (answered items
        whose answer has a verdict), ``correct``, ``accuracy`` (correct / judged), ``low``,
        ``high`` (Wilson interval), ``rank`` (1 = best among the rows of that label).
    between : tuple of str
    flipped : tuple of (str, str)
        Pairs (a, b) with a strictly ahead of b under ``between[0]`` and strictly behind
        under ``between[1]``.
    level : float
    """

    labels: tuple[str, ...]
    frame: pd.DataFrame
    between: tuple[str, str]
    flipped: tuple[tuple[str, str], ...]
    level: float

    @property
    def flips(self) -> bool:
        """Whether any pair of methods changes order between the two label sources."""
        return bool(self.flipped)

    @property
    def top(self) -> dict[str, tuple[str, ...]]:
        """The best method(s) under each label source."""
        f = self.frame
        return {lab: tuple(f.loc[(f["label"] == lab) & (f["rank"] == 1), "method"])
                for lab in self.labels}

    def table(self) -> pd.DataFrame:
        """One row per method: accuracy, interval and rank under each label source
        (columns ``<label>_accuracy``, ``<label>_low``, ``<label>_high``, ``<label>_rank``,
        ``<label>_judged``), in the order of the first label's ranking."""
        f = self.frame
        wide = f.pivot(index="method", columns="label",
                       values=["accuracy", "low", "high", "rank", "judged"])
        wide.columns = [f"{lab}_{what}" for what, lab in wide.columns]
        kinds = f.drop_duplicates("method").set_index("method")["kind"]
        wide.insert(0, "kind", kinds.reindex(wide.index))
        order = [f"{lab}_{w}" for lab in self.labels
                 for w in ("accuracy", "low", "high", "rank", "judged")]
        wide = wide[["kind", *order]]
        for lab in self.labels:
            wide[f"{lab}_rank"] = wide[f"{lab}_rank"].astype("Int64")
            wide[f"{lab}_judged"] = wide[f"{lab}_judged"].astype("int64")
        return wide.sort_values([f"{self.between[0]}_rank", f"{self.between[1]}_rank"],
                                kind="stable").reset_index()


def label_source_board(results: Mapping[str, FusionResult | np.ndarray],
                       judgements: AnswerJudgements, *,
                       sources: Mapping[str, np.ndarray] | None = None,
                       items: np.ndarray | None = None, between: tuple[str, str] | None = None,
                       level: float = 0.95) -> LabelSourceBoard:
    """Score methods by per-answer verdicts under every label source and compare rankings.

    Parameters
    ----------
    results : mapping of name → FusionResult or label array (I,) (−1: abstained)
    judgements : AnswerJudgements
    sources : mapping of name → label array, optional
        Extra rows of kind "source" (e.g. :func:`source_labels`), ranked with the resolvers.
    items : bool mask (I,), optional
        Score only these items (e.g. a held-out split).
    between : (str, str), optional
        The two label sources whose rankings are compared (default the first two).
    level : float
        Wilson interval level.

    Returns
    -------
    LabelSourceBoard
    """
    rows: dict[str, tuple[str, np.ndarray]] = {}
    for name, r in results.items():
        rows[str(name)] = ("resolver", np.asarray(r.labels if isinstance(r, FusionResult)
                                                  else r, np.int64))
    for name, lab in (sources or {}).items():
        if str(name) in rows:
            raise ValueError(f"method name {name!r} is both a resolver and a source")
        rows[str(name)] = ("source", np.asarray(lab, np.int64))
    if not rows:
        raise ValueError("a board needs at least one method")
    n_items = {v.size for _, v in rows.values()}
    if len(n_items) != 1:
        raise ValueError("every method must label the same items")
    (I,) = n_items
    mask = np.ones(I, bool) if items is None else np.asarray(items, bool)
    if mask.shape != (I,):
        raise ValueError(f"items must be a boolean mask of {I} items")
    labels = judgements.labels
    between = tuple(between) if between is not None else labels[:2]
    if len(between) != 2 or not set(between) <= set(labels) or between[0] == between[1]:
        raise ValueError(f"between must name two of the label sources {list(labels)}")
    names = list(rows)
    lab_mat = np.vstack([rows[n][1] for n in names])                  # (M, I)
    idx = np.broadcast_to(np.arange(I), lab_mat.shape)
    verdict = judgements.lookup(idx.ravel(), lab_mat.ravel()).reshape(
        len(labels), *lab_mat.shape)                                    # (L, M, I)
    answered = (lab_mat >= 0) & mask                                     # (M, I)
    judged = answered & ~np.isnan(verdict)                               # (L, M, I)
    correct = (judged & (verdict == 1)).sum(axis=2)
    n_judged = judged.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n_judged > 0, correct / np.maximum(n_judged, 1), np.nan)
    lo, hi = wilson_interval(correct, n_judged, level=level)
    recs = []
    for li, lab in enumerate(labels):
        rank = pd.Series(acc[li]).rank(method="min", ascending=False).astype("Int64")
        for m, name in enumerate(names):
            recs.append({"method": name, "kind": rows[name][0], "label": lab,
                         "items": int(mask.sum()), "answered": int(answered[m].sum()),
                         "judged": int(n_judged[li, m]), "correct": int(correct[li, m]),
                         "accuracy": float(acc[li, m]), "low": float(lo[li, m]),
                         "high": float(hi[li, m]), "rank": rank.iloc[m]})
    frame = pd.DataFrame(recs)
    a, b = (acc[labels.index(between[0])], acc[labels.index(between[1])])
    flipped = tuple((names[i], names[j]) if a[i] > a[j] else (names[j], names[i])
                    for i, j in combinations(range(len(names)), 2)
                    if (a[i] - a[j]) * (b[i] - b[j]) < 0)
    return LabelSourceBoard(labels=labels, frame=frame, between=between, flipped=flipped,
                            level=level)


def nq_open_board(*, methods=None, sources: bool = True, level: float = 0.95
                  ) -> LabelSourceBoard:
    """NQ-open's twelve systems fused by every label-blind resolver (or ``methods``) and
    scored against the human and the exact-match verdicts; with ``sources`` the twelve
    systems are rows too (seed 003 §5.1's ranking flip is theirs)."""
    from core.fusion.builtin import RESOLVERS, load_builtin, run_resolvers

    imported = load_builtin("nq_open")
    claims = imported.claims
    if methods is None:
        methods = [m for m, r in RESOLVERS.items() if not r.supervised]
    results = run_resolvers(claims, methods)
    return label_source_board(results, nq_open_judgements(imported),
                              sources=source_labels(claims) if sources else None, level=level)
