"""The built-in claims tables: four real conflict data sets and NQ-open's twelve QA systems.

Each set is a frozen :class:`BuiltinSet` record (key, title, two sentences for students,
citation, licence, file, label columns) in :data:`BUILTIN_SETS`; :func:`load_builtin` reads
one through :func:`core.fusion.importer.read_claims` (the crowd and Flight sets are shipped in
the long layout ``item,source,claim,truth`` under ``data/conflict/``).

NQ-open (``data/nq301/items.parquet``, seed 003 §5.1) becomes claims as: item = the question,
source = the QA system, claim = the system's SQuAD-normalised answer (the ``answer_norm``
column). Its labels are judgements of answers, not gold strings: people (``human``, the
``Acceptable?`` column) and exact match against the reference list (``exact_match``) said of
each (question, answer) whether it is right, and several different answers to one question
may be right. The claims table's one ``truth`` per item is therefore a *representative*:
the most claimed answer judged right under the chosen label (ties: the smallest string), no
truth when no system was right. ``FusionResult.score`` against it counts a different but
also right answer as wrong; the exact scoring against the per-answer judgements, under both
label sources, is :func:`core.fusion.nq.label_source_board`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from core.fusion.claims import Claims
from core.fusion.dawid_skene import dawid_skene
from core.fusion.dependence import accu_depen
from core.fusion.glad import glad
from core.fusion.importer import ImportResult, claims_from_frame, read_claims
from core.fusion.naive_bayes import naive_bayes, random_split
from core.fusion.one_coin import one_coin_em
from core.fusion.result import FusionResult
from core.fusion.vote import majority_vote
from core.stats import wilson_interval

__all__ = ["BUILTIN_SETS", "DATA_DIR", "BuiltinSet", "builtin_set", "load_builtin"]

#: The repository's ``data`` folder.
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
_CONFLICT = DATA_DIR / "conflict"
_LI_2012 = ('X. Li, X. L. Dong, K. Lyons, W. Meng, D. Srivastava, "Truth finding on the deep '
            'web: is the problem solved?", PVLDB 6(2), 2012; as republished by Orange\'s '
            'trustfuse (github.com/Orange-OpenSource/trustfuse)')
_MIT_ORANGE = ("MIT (Orange's trustfuse repository; the original authors state no licence; see "
               "data/conflict/flight-2011-12-01/README.md)")
_GAL = "P. Ipeirotis, Get-Another-Label (github.com/ipeirotis/Get-Another-Label)"


@dataclass(frozen=True)
class BuiltinSet:
    """One shipped claims table.

    Attributes
    ----------
    key : str
        URL-safe name (``load_builtin(key)``, the page's query string).
    title : str
    about : str
        Two plain sentences for students.
    citation, licence : str
    path : pathlib.Path
        The shipped file.
    truth_columns : tuple of str
        The label columns: ``("truth",)`` for the conflict sets, ``("human",
        "exact_match")`` for NQ-open (the first is the default of :func:`load_builtin`).
    """

    key: str
    title: str
    about: str
    citation: str
    licence: str
    path: Path
    truth_columns: tuple[str, ...]


#: The shipped sets, in the order the page lists them.
BUILTIN_SETS: tuple[BuiltinSet, ...] = (
    BuiltinSet(
        key="flight",
        title="Flight status web sites (1 December 2011, 100 flights)",
        about="Thirty-five web sites report departure and arrival times and gates of the "
              "same 100 flights, and they often disagree. Some sites copy each other, so a "
              "wrong time can win a plain vote.",
        citation=_LI_2012, licence=_MIT_ORANGE,
        path=_CONFLICT / "flight-2011-12-01" / "flight_2011-12-01.csv",
        truth_columns=("truth",)),
    BuiltinSet(
        key="flight_all",
        title="Flight status web sites (1 December 2011, the whole day)",
        about="The same thirty-five web sites on every flight of the day (7,082 items), with "
              "the true values known for the same 543 items. Methods that assume sources are "
              "independent get worse with more data here, because copying sites agree on "
              "more and more items.",
        citation=_LI_2012, licence=_MIT_ORANGE,
        path=_CONFLICT / "flight-2011-12-01" / "flight_2011-12-01_all.csv",
        truth_columns=("truth",)),
    BuiltinSet(
        key="mozafari",
        title="Crowd workers, binary labels (Mozafari, Get-Another-Label)",
        about="Eighty-three crowd workers gave 0/1 labels to 1,000 items, five labels each, "
              "and the true label is known for all of them. Workers say 0 far more often than "
              "the truth does, which a model of each worker's confusions can correct.",
        citation=f"{_GAL}, data/BarzanMozafari (contributor not documented)",
        licence="Apache-2.0 (data/conflict/gal-mozafari-binary/LICENSE-2.0.html)",
        path=_CONFLICT / "gal-mozafari-binary" / "mozafari_binary.csv",
        truth_columns=("truth",)),
    BuiltinSet(
        key="adult",
        title="Crowd workers rating web sites for adult content (AdultContent2)",
        about="Two hundred and sixty-nine crowd workers rated 333 web sites into four "
              "classes (general, parental guidance, restricted, porn), with expert labels "
              "for all. Here the learned models do no better than a plain majority vote.",
        citation=f"P. G. Ipeirotis, F. Provost, J. Wang, \"Quality management on Amazon "
                 f"Mechanical Turk\", HCOMP 2010; {_GAL}, data/AdultContent2",
        licence="Apache-2.0 (data/conflict/gal-adultcontent2/LICENSE-2.0.html)",
        path=_CONFLICT / "gal-adultcontent2" / "adultcontent2_gold_items.csv",
        truth_columns=("truth",)),
    BuiltinSet(
        key="nq_open",
        title="Twelve QA systems answering 301 NQ-open questions",
        about="Twelve question-answering systems each answered the same 301 questions, and "
              "people judged every answer right or wrong; an automatic exact-match check "
              "judged them too. Fusing the systems and scoring the fused answers both ways "
              "shows that which method looks best can depend on who does the marking.",
        citation="E. Kamalloo, N. Dziri, C. L. A. Clarke, D. Rafiei, \"Evaluating open-domain "
                 "question answering in the era of large language models\", ACL 2023 "
                 "(github.com/ehsk/OpenQA-eval); the answer-key paper, §5.1",
        licence="MIT (data/nq301/LICENSE-MIT)",
        path=DATA_DIR / "nq301" / "items.parquet",
        truth_columns=("human", "exact_match")),
)

_BY_KEY = {b.key: b for b in BUILTIN_SETS}


def builtin_set(key: str) -> BuiltinSet:
    """The record of ``key``; a one-line ``ValueError`` naming the valid keys otherwise."""
    try:
        return _BY_KEY[key]
    except (KeyError, TypeError):
        raise ValueError(f"no built-in set {key!r}; the built-in sets are "
                         f"{', '.join(_BY_KEY)}") from None


#: NQ-open label name → column of ``items.parquet`` (1 right, 0 wrong, NaN not judged).
NQ_LABEL_COLUMNS = {"human": "y", "exact_match": "z"}
__all__ += ["NQ_LABEL_COLUMNS", "nq_open_frame"]


def nq_open_frame(path: Path | None = None) -> pd.DataFrame:
    """NQ-open's 3,612 answers as a long frame, one row per (question, system), in file order.

    Columns: ``item`` (the question text), ``source`` (the system), ``claim`` (the
    SQuAD-normalised answer), ``qid``, and one float column per label of
    :data:`NQ_LABEL_COLUMNS` (1 right, 0 wrong, NaN where the answer was not judged).
    """
    path = Path(path) if path is not None else _BY_KEY["nq_open"].path
    if not path.is_file():
        raise ValueError(f"no NQ-open file at {path}")
    raw = pd.read_parquet(path, columns=["qid", "question", "system", "answer_norm",
                                         *NQ_LABEL_COLUMNS.values()])
    frame = pd.DataFrame({"item": raw["question"].astype(str).to_numpy(object),
                          "source": raw["system"].astype(str).to_numpy(object),
                          "claim": raw["answer_norm"].astype(str).to_numpy(object),
                          "qid": raw["qid"].to_numpy(np.int64)})
    for label, col in NQ_LABEL_COLUMNS.items():
        frame[label] = pd.to_numeric(raw[col], errors="coerce").to_numpy(float)
    return frame


def _representative_truth(frame: pd.DataFrame, claim: np.ndarray, right: np.ndarray
                          ) -> np.ndarray:
    """Per row, its item's most claimed answer judged right (ties: smallest), else ''."""
    good = pd.DataFrame({"item": frame["item"].to_numpy(object), "claim": claim})[right]
    if good.empty:
        return np.full(len(frame), "", object)
    counts = good.groupby(["item", "claim"], sort=True).size().rename("n").reset_index()
    counts = counts.sort_values(["item", "n", "claim"], ascending=[True, False, True],
                                kind="stable")
    best = counts.drop_duplicates("item").set_index("item")["claim"]
    return best.reindex(frame["item"]).fillna("").to_numpy(object)


def load_builtin(key: str, *, truth: str | None = None, normalise: Sequence = (),
                 scope: str = "auto") -> ImportResult:
    """Read a built-in set into claims.

    Parameters
    ----------
    key : str
        One of the keys of :data:`BUILTIN_SETS`.
    truth : str, optional
        The label column to use as truth (one of the set's ``truth_columns``; default its
        first). For NQ-open the truth is the representative right answer described in the
        module docstring.
    normalise : sequence of normalisers (:mod:`core.fusion.normalise`)
    scope : {"auto", "global", "item"}

    Returns
    -------
    ImportResult
        For NQ-open its warnings say how many questions have several distinct right answers
        (where ``score`` against the representative is not the exact accuracy).

    Raises
    ------
    ValueError
        One line: an unknown key (naming the valid ones) or label column, a missing file.
    """
    spec = builtin_set(key)
    label = spec.truth_columns[0] if truth is None else truth
    if label not in spec.truth_columns:
        raise ValueError(f"the {key} set has no label column {label!r}; its label columns "
                         f"are {', '.join(spec.truth_columns)}")
    if key != "nq_open":
        if not spec.path.is_file():
            raise ValueError(f"the {key} set's file is missing: {spec.path}")
        return read_claims(spec.path, normalise=normalise, scope=scope)
    frame = nq_open_frame(spec.path)
    claim = frame["claim"].to_numpy(object)
    if normalise:  # normalise first, so the representative is a normalised answer
        pre = claims_from_frame(frame[["item", "source", "claim"]], normalise=normalise,
                                scope=scope)
        claim = np.asarray(pre.claims.classes, object)[pre.claims.claim]
    right = frame[label].to_numpy(float) == 1
    long = pd.DataFrame({"item": frame["item"].to_numpy(object),
                         "source": frame["source"].to_numpy(object), "claim": claim,
                         "truth": _representative_truth(frame, claim, right)})
    imported = read_claims(long, scope=scope)
    # questions with two or more distinct claimed answers judged right
    pairs = pd.DataFrame({"item": long["item"], "claim": claim})[right].drop_duplicates()
    several = int((pairs.groupby("item").size() >= 2).sum())
    note = (f"NQ-open, {label} labels: the truth of a question is its most claimed answer "
            f"judged right; {several} of {imported.claims.n_items} questions have several "
            "distinct right answers, where score() counts the others as wrong (exact scoring: "
            "core.fusion.nq.label_source_board)")
    return ImportResult(claims=imported.claims, warnings=(*imported.warnings, note),
                        layout=imported.layout, columns=imported.columns,
                        n_rows=imported.n_rows, n_duplicates_dropped=0,
                        rules=tuple(n.rule for n in normalise))


# --------------------------------------------------------------------------------------------
# the resolvers by name (the CLI's --methods, the store's runs)


@dataclass(frozen=True)
class Resolver:
    """A named resolver with its default options.

    Attributes
    ----------
    name : str
        The CLI's and the store's name.
    title : str
        A few words for a board.
    supervised : bool
        Needs a truth (fitted on a training split and scored on the rest).
    run : callable
        ``run(claims) -> FusionResult``.
    """

    name: str
    title: str
    supervised: bool
    run: Callable[[Claims], FusionResult]


def _train(claims: Claims) -> np.ndarray:
    """The ``train`` split when the table has one, else a seeded half of the gold items
    (``default_rng(0)``, as ``benchmarks/bench_fusion.py``)."""
    if not claims.has_truth or not claims.gold.any():
        raise ValueError("supervised naive Bayes needs a claims table with truth")
    if "train" in claims.splits:
        return claims.split == claims.splits.index("train")
    return random_split(claims, 0.5, np.random.default_rng(0))


#: Name → resolver, in board order (the names of ``benchmarks/bench_fusion.py``).
RESOLVERS: dict[str, Resolver] = {r.name: r for r in (
    Resolver("majority_vote", "majority vote (ties: smallest claim)", False,
             lambda c: majority_vote(c, tie="smallest")),
    Resolver("one_coin_em", "one-coin EM (baseline)", False, lambda c: one_coin_em(c)),
    Resolver("one_coin_crowdkit", "one-coin EM (crowd-kit)", False,
             lambda c: one_coin_em(c, variant="crowdkit")),
    Resolver("dawid_skene", "Dawid–Skene (crowd-kit)", False, lambda c: dawid_skene(c)),
    Resolver("dawid_skene_baseline", "Dawid–Skene (baseline)", False,
             lambda c: dawid_skene(c, variant="baseline")),
    Resolver("glad", "GLAD", False, lambda c: glad(c)),
    Resolver("accu", "ACCU (independent sources)", False,
             lambda c: accu_depen(c, dependence=False)),
    Resolver("accu_depen", "ACCU + DEPEN (copy-aware)", False, lambda c: accu_depen(c)),
    Resolver("naive_bayes", "naive Bayes (supervised, held-out items)", True,
             lambda c: naive_bayes(c, train=_train(c))),
)}
__all__ += ["RESOLVERS", "Resolver", "run_resolvers"]


def run_resolvers(claims: Claims, methods: Sequence[str] | None = None
                  ) -> dict[str, FusionResult]:
    """Run ``methods`` (default: every resolver that applies: the supervised one only with
    truth) on ``claims``; a one-line ``ValueError`` for an unknown name."""
    if methods is None:
        methods = [m for m, r in RESOLVERS.items() if claims.has_truth or not r.supervised]
    unknown = [m for m in methods if m not in RESOLVERS]
    if unknown:
        raise ValueError(f"no resolver {unknown[0]!r}; the resolvers are "
                         f"{', '.join(RESOLVERS)}")
    return {m: RESOLVERS[m].run(claims) for m in methods}


def score_board(claims: Claims, results: Mapping[str, FusionResult], *,
                level: float = 0.95) -> pd.DataFrame:
    """One row per resolver: accuracy with a Wilson interval against the truth, or, when the
    table has none, agreement with majority vote.

    Columns: ``method``, ``against`` ("truth" or "majority_vote"), ``scored_on`` ("gold
    items", "held-out gold items" for a supervised resolver, "items"), ``items``,
    ``answered``, ``correct`` (agreeing, without truth), ``accuracy`` (correct / answered),
    ``low``, ``high`` (Wilson 1927, :func:`core.stats.wilson_interval`), ``coverage``
    (answered / items).
    """
    rows = []
    if claims.has_truth and claims.gold.any():
        for name, res in results.items():
            held = res.params.get("train") if name in RESOLVERS and \
                RESOLVERS[name].supervised else None
            s = res.score(claims, None if held is None else ~np.asarray(held, bool),
                          level=level)
            rows.append({"method": name, "against": "truth",
                         "scored_on": "gold items" if held is None else "held-out gold items",
                         "items": s["n"], "answered": s["answered"], "correct": s["correct"],
                         "accuracy": s["accuracy"], "low": s["low"], "high": s["high"],
                         "coverage": s["coverage"]})
        return pd.DataFrame(rows)
    ref = results["majority_vote"] if "majority_vote" in results else majority_vote(claims)
    for name, res in results.items():
        both = res.answered & ref.answered
        k = int((res.labels[both] == ref.labels[both]).sum())
        m = int(both.sum())
        lo, hi = wilson_interval(k, m, level=level)
        rows.append({"method": name, "against": "majority_vote", "scored_on": "items",
                     "items": claims.n_items, "answered": int(res.answered.sum()),
                     "correct": k, "accuracy": k / m if m else float("nan"),
                     "low": float(lo), "high": float(hi),
                     "coverage": float(res.answered.mean())})
    return pd.DataFrame(rows)


def predictions_frame(claims: Claims, results: Mapping[str, FusionResult]) -> pd.DataFrame:
    """Every resolver's answer per item, long: ``item``, ``method``, ``label`` (the chosen
    claim, '' where abstained), ``confidence`` (its posterior; 0 where abstained)."""
    items = np.asarray(claims.items, object)
    parts = [pd.DataFrame({"item": items, "method": name, "label": res.label_names(),
                           "confidence": np.asarray(res.confidence, float)})
             for name, res in results.items()]
    if not parts:
        return pd.DataFrame({"item": [], "method": [], "label": [], "confidence": []})
    return pd.concat(parts, ignore_index=True)


__all__ += ["predictions_frame", "score_board"]


# --------------------------------------------------------------------------------------------
# the store's tables (core.build writes them; core.store reads them back)

#: The sets whose claims, runs and predictions the store holds. Flight's whole day is left
#: out: its nine resolvers take 3.6–10 s on two cores (GLAD alone 2–7 s), more than the
#: four others together; the page reads it with :func:`load_builtin` when asked.
STORE_SETS: tuple[str, ...] = ("flight", "mozafari", "adult", "nq_open")
__all__ += ["STORE_SETS", "store_tables"]


@lru_cache(maxsize=4)
def _store_tables(keys: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    import time

    claims_parts, runs_parts, pred_parts = [], [], []
    for key in keys:
        imported = load_builtin(key)
        claims = imported.claims
        frame = claims.to_frame()
        frame.insert(0, "row", np.arange(claims.n_claims, dtype=np.int64))
        frame.insert(0, "dataset", key)
        if "truth" in frame:
            frame["truth"] = frame["truth"].where(frame["truth"] != "", None)
        else:
            frame["truth"] = None
        claims_parts.append(frame[["dataset", "row", "item", "source", "claim", "truth"]])
        methods = [m for m, r in RESOLVERS.items()
                   if not r.supervised or (key != "nq_open" and claims.has_truth)]
        results, seconds = {}, {}
        for m in methods:
            t = time.perf_counter()
            results[m] = RESOLVERS[m].run(claims)
            seconds[m] = time.perf_counter() - t
        if key == "nq_open":
            from core.fusion.nq import label_source_board, nq_open_judgements, source_labels

            board = label_source_board(results, nq_open_judgements(imported),
                                       sources=source_labels(claims)).frame
            board = board.rename(columns={"label": "against", "judged": "answered_judged"})
            board["scored_on"] = "judged answers"
            board["coverage"] = board["answered"] / board["items"]
            board["answered"] = board.pop("answered_judged")
        else:
            board = score_board(claims, results)
            board.insert(1, "kind", "resolver")
        info = pd.DataFrame({
            "method": list(results),
            "iterations": [r.iterations for r in results.values()],
            "converged": [r.converged for r in results.values()],
            "seconds": [seconds[m] for m in results],
            "model": [r.model for r in results.values()]})
        board = board.merge(info, on="method", how="left")
        board["iterations"] = board["iterations"].astype("Int64")
        board["converged"] = board["converged"].astype("boolean")
        board.insert(0, "dataset", key)
        board["position"] = np.arange(len(board), dtype=np.int64)
        runs_parts.append(board[["dataset", "position", "method", "kind", "against",
                                 "scored_on", "items", "answered", "correct", "accuracy",
                                 "low", "high", "coverage", "iterations", "converged",
                                 "seconds", "model"]])
        pred = predictions_frame(claims, results)
        pred["label"] = pred["label"].where(pred["label"] != "", None)
        pred.insert(0, "dataset", key)
        pred_parts.append(pred[["dataset", "method", "item", "label", "confidence"]])
    return {"fusion_claims": pd.concat(claims_parts, ignore_index=True),
            "fusion_runs": pd.concat(runs_parts, ignore_index=True),
            "fusion_predictions": pd.concat(pred_parts, ignore_index=True)}


def store_tables(keys: Sequence[str] = STORE_SETS) -> dict[str, pd.DataFrame]:
    """The store's fusion tables for the built-in sets ``keys`` (computed once a process;
    copies are returned).

    * ``fusion_claims(dataset, row, item, source, claim, truth)`` — the claims as
      :func:`load_builtin` reads them (``truth`` NULL where unknown; NQ-open's is the
      representative of its human label), ``row`` the claim's position.
    * ``fusion_runs(dataset, position, method, kind, against, scored_on, items, answered,
      correct, accuracy, low, high, coverage, iterations, converged, seconds, model)`` — the board:
      against the truth (``scored_on`` gold or held-out gold items), or, for NQ-open, against
      the ``human`` and ``exact_match`` verdicts (``scored_on`` "judged answers", ``answered``
      the judged ones, the twelve systems as rows of kind "source"); ``position`` is the
      row's place on the board.
    * ``fusion_predictions(dataset, method, item, label, confidence)`` — every resolver's
      answer (``label`` NULL where it abstained).
    """
    for k in keys:
        builtin_set(k)
    return {name: frame.copy() for name, frame in _store_tables(tuple(keys)).items()}
