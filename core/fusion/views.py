"""What the "Your data" page shows, as result objects: one per panel (issue 21 point 7).

A claims table (a built-in set of :mod:`core.fusion.builtin` or an upload read through
:mod:`core.fusion.importer`) is fitted once by every resolver (:func:`fit_fusion` →
:class:`FusionFit`); each panel then asks for one small frozen object:

* :class:`BoardView` — each resolver's accuracy against the truth with its Wilson interval
  (:func:`core.stats.wilson_interval`), or, without a truth, its agreement with majority
  vote; coverage; and every resolver answering the same share of items
  (:func:`core.fusion.diagnostics.compare_at_coverage`), abstention denominator shown;
* :class:`SourceView` — per source: claims, coverage, accuracy with an interval on the items
  with a known truth, the accuracy a resolver estimates, and its copy group;
* :class:`CopyView` — groups of sources that make the same claim on (nearly) every item they
  share (:func:`copy_clusters`), what majority vote did where they were wrong, and what the
  dependence-aware resolver did there: Flight's copy cluster outvoting the truth;
* :class:`PairView` — the dependence matrix: agreement beyond chance and agreement on false
  values, for every pair of (at most ``max_sources``) sources;
* :class:`WhyView` — "why is the learned resolver no better than majority vote here?", per
  source and per item (:func:`core.fusion.diagnostics.disagreement`);
* :class:`ContradictedView` — items whose fused answer no source claims;
* :class:`WhatIfView` — one item's posterior before and after switching sources off or
  flipping a claim (:func:`core.fusion.diagnostics.what_if`);
* :class:`ReliabilityData` — each resolver's confidence against whether it was right (the
  binned diagram is drawn by :mod:`core.figures.fusion` with
  :func:`core.calibration.reliability.reliability_curve`; this package may not import
  :mod:`core.calibration`, see ``tests/test_layers.py``);
* :class:`LabelView` — NQ-open's resolvers and systems scored by people and by exact match
  (:func:`core.fusion.nq.label_source_board`).

Verdicts. A fused answer is right when it equals the item's truth; for NQ-open, whose labels
judge answers (several can be right), when the judgement of that (question, answer) pair under
the chosen label says so (:class:`core.fusion.nq.AnswerJudgements`). Every accuracy here goes
through :meth:`FusionFit.verdict`, so both kinds of label are scored one way. Naive Bayes is
fitted on a seeded half of the items with a truth and scored on the other half.

Nothing here imports Streamlit; every view is built from small parameters and a fit, so a page
can cache them keyed on those parameters.
"""

from __future__ import annotations

import gzip
import io
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from core.fusion._numeric import read_only
from core.fusion.builtin import load_builtin
from core.fusion.claims import Claims
from core.fusion.dawid_skene import dawid_skene
from core.fusion.dependence import accu_depen
from core.fusion.diagnostics import (
    compare_at_coverage,
    contradicted_items,
    disagreement,
    source_pairs,
    source_summary,
    what_if,
)
from core.fusion.glad import glad
from core.fusion.importer import Caps, ImportResult, read_claims
from core.fusion.naive_bayes import naive_bayes, random_split
from core.fusion.normalise import CaseWhitespace, NumericTolerance, TimeTolerance
from core.fusion.nq import (
    AnswerJudgements,
    label_source_board,
    nq_open_judgements,
    source_labels,
)
from core.fusion.one_coin import one_coin_em
from core.fusion.result import FusionResult
from core.fusion.vote import majority_vote
from core.stats import wilson_interval

__all__ = ["DEPENDENCE_METHOD", "METHODS", "UPLOAD_CAPS", "BoardView", "ContradictedView",
           "CopyCluster", "CopyView", "FusionFit", "LabelView", "Method", "PairView",
           "ReliabilityData", "SourceView", "WhatIfView", "WhyView", "board_view",
           "contradicted_view", "copy_clusters", "copy_view", "example_table", "fit_builtin",
           "fit_builtin_with", "fit_fusion", "guess_columns", "import_frame", "item_claims",
           "label_view", "method",
           "normalisers", "pair_view", "predictions_frame", "read_table", "reliability_data",
           "source_view", "what_if_items", "what_if_view", "why_view"]


# ----------------------------------------------------------------------------- resolvers
@dataclass(frozen=True)
class Method:
    """A resolver as the page names it.

    Attributes
    ----------
    key : str
        URL-safe name (also the prediction columns' prefix).
    name : str
        Its name on the page.
    words : str
        What it does, in one plain sentence.
    learned : bool
        It learns how far to trust each source (so it may beat, or lose to, the plain vote).
    supervised : bool
        It needs items with a known truth to learn from.
    """

    key: str
    name: str
    words: str
    learned: bool
    supervised: bool = False


#: Every resolver the page offers, in board order.
METHODS: tuple[Method, ...] = (
    Method("mv", "majority vote", "The claim most sources make; a tie goes to the "
           "alphabetically first claim.", learned=False),
    Method("one_coin", "one-coin EM", "A weighted vote: each source gets one number, how "
           "often it is right, learned from how the sources agree (EM), and its vote counts "
           "by it.", learned=True),
    Method("dawid_skene", "Dawid–Skene", "Learns, for each source, a whole table of which "
           "claim it makes when the truth is each value (a confusion matrix), from the "
           "sources' agreements alone.", learned=True),
    Method("glad", "GLAD", "Like one-coin EM, but items have a difficulty too: on a hard item "
           "even a good source is close to guessing.", learned=True),
    Method("accu", "ACCU", "A vote where each source counts by its estimated accuracy, "
           "every source assumed independent of the others.", learned=True),
    Method("accu_depen", "ACCU + DEPEN", "ACCU plus copy detection: sources that share many "
           "false values are probably copying, and a copy's vote is discounted.",
           learned=True),
    Method("nb", "naive Bayes", "Supervised: learns each source's accuracy from half of the "
           "items with a known truth and is scored on the other half.", learned=True,
           supervised=True),
)
_BY_KEY = {m.key: m for m in METHODS}
#: The dependence-aware resolver the copy panels compare with majority vote.
DEPENDENCE_METHOD = "accu_depen"
#: Naive Bayes's training share and seed (the split is the same on every run).
NB_FRACTION, NB_SEED = 0.5, 0


def method(key: str) -> Method:
    """The :class:`Method` of ``key``; a one-line ``ValueError`` naming the valid keys."""
    try:
        return _BY_KEY[key]
    except (KeyError, TypeError):
        raise ValueError(f"no resolver {key!r}; the resolvers are {', '.join(_BY_KEY)}") \
            from None


def _fit_one(key: str, claims: Claims, train: np.ndarray | None) -> FusionResult:
    if key == "mv":
        return majority_vote(claims)
    if key == "one_coin":
        return one_coin_em(claims)
    if key == "dawid_skene":
        return dawid_skene(claims)
    if key == "glad":
        return glad(claims)
    if key == "accu":
        return accu_depen(claims, dependence=False)
    if key == "accu_depen":
        return accu_depen(claims)
    if key == "nb":
        return naive_bayes(claims, train=train)
    raise ValueError(f"no resolver {key!r}")


@dataclass(frozen=True, eq=False)
class FusionFit:
    """Every resolver fitted on one claims table, and how its answers are judged.

    Attributes
    ----------
    claims : Claims
    results : mapping of method key → FusionResult (the resolvers that could run)
    skipped : mapping of method key → one-line reason it did not run
    train : bool mask (I,) or None
        Naive Bayes's training items (None when it did not run).
    seconds : mapping of method key → fitting time
    judgements : AnswerJudgements or None
        Per-answer verdicts (NQ-open); None: answers are judged against ``claims.truth``.
    label : str
        The label source the verdicts use ("truth", or one of ``judgements.labels``).
    """

    claims: Claims
    results: Mapping[str, FusionResult]
    skipped: Mapping[str, str]
    train: np.ndarray | None
    seconds: Mapping[str, float]
    judgements: AnswerJudgements | None = None
    label: str = "truth"

    def __reduce__(self):
        """Pickle the read-only mappings as plain dicts and wrap them again on loading, so a
        fit can come back from a worker process (``pages/_shared/fusion.py`` computes the
        built-in sets' fits there)."""
        return (_rebuild_fit, (self.claims, dict(self.results), dict(self.skipped),
                               self.train, dict(self.seconds), self.judgements, self.label))

    @property
    def methods(self) -> tuple[str, ...]:
        """The keys of the resolvers that ran, in board order."""
        return tuple(m.key for m in METHODS if m.key in self.results)

    @property
    def has_truth(self) -> bool:
        """Whether some answer can be judged right or wrong."""
        if self.judgements is not None:
            return True
        return self.claims.has_truth

    def verdict(self, item, cls) -> np.ndarray:
        """1.0 right, 0.0 wrong, NaN unknown (no truth, not judged, or abstained), for each
        (item, class) pair."""
        item = np.asarray(item, np.int64)
        cls = np.asarray(cls, np.int64)
        if self.judgements is not None:
            return self.judgements.lookup(item, cls)[self.judgements.labels.index(self.label)]
        c = self.claims
        if c.truth is None:
            return np.full(item.shape, np.nan)
        t = c.truth[item]
        return np.where((t >= 0) & (cls >= 0), (cls == t).astype(float), np.nan)

    def scored(self, key: str) -> np.ndarray:
        """Items a resolver is scored on: all but naive Bayes's training items."""
        mask = np.ones(self.claims.n_items, bool)
        if key == "nb" and self.train is not None:
            mask &= ~self.train
        return mask

    def answer_verdict(self, key: str) -> np.ndarray:
        """The verdict of each item's fused answer under ``key`` (NaN off its scored items)."""
        r = self.results[key]
        v = self.verdict(np.arange(self.claims.n_items), r.labels)
        return np.where(self.scored(key), v, np.nan)


def fit_fusion(imported: ImportResult | Claims, *, methods: Sequence[str] | None = None,
               judgements: AnswerJudgements | None = None,
               label: str | None = None) -> FusionFit:
    """Fit ``methods`` (default: all of :data:`METHODS`) on a table.

    A resolver that refuses the table (naive Bayes without a truth, the dependence model over
    its source cap …) is listed in ``skipped`` with its one-line reason, not raised.
    """
    claims = imported.claims if isinstance(imported, ImportResult) else imported
    keys = [m.key for m in METHODS] if methods is None else [method(k).key for k in methods]
    if judgements is not None:
        label = judgements.labels[0] if label is None else label
        if label not in judgements.labels:
            raise ValueError(f"no label source {label!r}; the labels are "
                             f"{', '.join(judgements.labels)}")
    results, skipped, seconds = {}, {}, {}
    train = None
    for key in keys:
        if key == "nb":
            if int(claims.gold.sum()) < 4:
                skipped[key] = "it needs at least four items with a known truth to learn from"
                continue
            train = random_split(claims, NB_FRACTION, np.random.default_rng(NB_SEED))
        t0 = time.perf_counter()
        try:
            results[key] = _fit_one(key, claims, train)
        except ValueError as exc:
            skipped[key] = str(exc).splitlines()[0]
            if key == "nb":
                train = None
            continue
        seconds[key] = time.perf_counter() - t0
    return FusionFit(claims=claims, results=MappingProxyType(results),
                     skipped=MappingProxyType(skipped),
                     train=None if train is None else read_only(train),
                     seconds=MappingProxyType(seconds), judgements=judgements,
                     label="truth" if judgements is None else str(label))


def _rebuild_fit(claims, results, skipped, train, seconds, judgements, label) -> FusionFit:
    return FusionFit(claims, MappingProxyType(results), MappingProxyType(skipped), train,
                     MappingProxyType(seconds), judgements, label)


# ----------------------------------------------------------------------------- the board
@dataclass(frozen=True, eq=False)
class BoardView:
    """Each resolver's score, and all of them at one coverage.

    Attributes
    ----------
    measure : {"accuracy", "agreement"}
        Accuracy against the truth, or (no truth) agreement with majority vote.
    table : DataFrame
        One row per resolver: ``method``, ``name``, ``items`` (the denominator),
        ``correct`` (right, or agreeing), ``accuracy``, ``low``, ``high`` (Wilson interval),
        ``coverage`` (share of all items answered), ``scored_on`` (words).
    at_coverage : DataFrame or None
        With a truth: ``method``, ``name``, ``n`` (items it could answer: the abstention
        denominator), ``answered`` (= ⌈coverage · n⌉ of its most confident), ``correct``,
        ``accuracy``, ``low``, ``high``, ``threshold`` (the confidence it needed).
    coverage : float
    level : float
    best : str
        The method with the highest score (ties: board order).
    """

    measure: str
    table: pd.DataFrame
    at_coverage: pd.DataFrame | None
    coverage: float
    level: float
    best: str

    def row(self, key: str) -> pd.Series:
        """The table's row of ``key``."""
        return self.table.set_index("method").loc[key]


def _scored_on(fit: FusionFit, key: str) -> str:
    if fit.judgements is not None:
        return ("answers judged by " + ("people" if fit.label == "human" else "exact match")
                + (" (held-out half)" if key == "nb" else ""))
    return "held-out half of the checked items" if key == "nb" else "items with a known truth"


def board_view(fit: FusionFit, methods: Sequence[str], *, coverage: float = 1.0,
               level: float = 0.95) -> BoardView:
    """The board of ``methods`` (those that ran, in board order) at ``coverage``."""
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage!r}")
    keys = [k for k in fit.methods if k in set(methods)]
    if not keys:
        raise ValueError("choose at least one resolver that ran on this table")
    rows, at = [], []
    measure = "accuracy" if fit.has_truth else "agreement"
    mv = fit.results.get("mv")
    for key in keys:
        r = fit.results[key]
        if measure == "accuracy":
            v = fit.answer_verdict(key)
            judged = ~np.isnan(v)
            n, k = int(judged.sum()), int(np.nansum(v))
            on = _scored_on(fit, key)
        else:
            same = (r.labels == mv.labels) & r.answered if mv is not None else r.answered
            n, k = int(r.answered.sum()), int(same.sum())
            on = "all items (agreement with majority vote)"
        lo, hi = wilson_interval(k, n, level=level)
        rows.append({"method": key, "name": method(key).name, "items": n, "correct": k,
                     "accuracy": k / n if n else float("nan"), "low": float(lo),
                     "high": float(hi), "coverage": float(r.answered.mean()),
                     "scored_on": on})
        if measure == "accuracy":
            at.append({"method": key, "name": method(key).name,
                       **_at_coverage(fit, key, coverage, level)})
    table = pd.DataFrame(rows)
    best = str(table.loc[table["accuracy"].fillna(-1).idxmax(), "method"])
    return BoardView(measure=measure, table=table,
                     at_coverage=pd.DataFrame(at) if at else None, coverage=float(coverage),
                     level=level, best=best)


def _at_coverage(fit: FusionFit, key: str, coverage: float, level: float) -> dict:
    """One resolver answering its ⌈coverage · n⌉ most confident scored items: with a truth
    column through :func:`compare_at_coverage`; with per-answer judgements by the same rule
    (ties in confidence broken by item order) on the judged items."""
    r = fit.results[key]
    if fit.judgements is None:
        out = compare_at_coverage({key: r}, fit.claims, coverage, items=fit.scored(key),
                                  level=level)[key]
        return {k: out[k] for k in ("n", "answered", "correct", "accuracy", "low", "high",
                                    "threshold")}
    v = fit.answer_verdict(key)
    idx = np.flatnonzero(~np.isnan(v))
    m = int(np.ceil(coverage * idx.size - 1e-12))
    conf = r.confidence[idx]
    top = idx[np.argsort(-conf, kind="stable")[:m]]
    k = int(v[top].sum())
    lo, hi = wilson_interval(k, top.size, level=level)
    return {"n": int(idx.size), "answered": int(top.size), "correct": k,
            "accuracy": k / top.size if top.size else float("nan"), "low": float(lo),
            "high": float(hi),
            "threshold": float(r.confidence[top].min()) if top.size else float("nan")}


# ----------------------------------------------------------------------------- copy clusters
@dataclass(frozen=True, eq=False)
class CopyCluster:
    """A group of sources that make the same claim on nearly every item they share.

    Attributes
    ----------
    label : str
        "A", "B", … (by the order of :attr:`CopyView.clusters`).
    members : tuple of str
    shared : int
        The fewest items any two members share.
    agreement : float
        The lowest share of shared items on which two members make the same claim.
    items : int
        Items at least two members claim.
    checked : int
        Of those, items with a known verdict for the members' common claim.
    wrong : int
        Checked items where the members' common claim is wrong.
    outvoted : int
        Items where majority vote took the members' common claim and it was wrong (without a
        truth: where majority vote took it and the dependence-aware resolver answered
        otherwise).
    recovered : int or None
        Of ``outvoted``, items the dependence-aware resolver got right (None without truth).
    accuracy : float
        Share of the members' checked claims that are right (NaN without truth).
    one_voice : float
        Majority vote's accuracy when the group's claims on an item count as one vote
        together (NaN without truth).
    examples : tuple of str
        Up to 20 outvoted items, those the dependence-aware resolver recovered first.
    """

    label: str
    members: tuple[str, ...]
    shared: int
    agreement: float
    items: int
    checked: int
    wrong: int
    outvoted: int
    recovered: int | None
    accuracy: float
    one_voice: float
    examples: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.members)


def copy_clusters(claims: Claims, *, min_shared: int = 50, min_agreement: float = 0.99
                  ) -> tuple[tuple[int, ...], ...]:
    """Groups (source codes) in which every two members share ≥ ``min_shared`` items and
    make the same claim on ≥ ``min_agreement`` of them (complete linkage, so no chaining),
    two or more members each, largest first (ties: first member's code)."""
    S = claims.n_sources
    if S < 2:
        return ()
    pairs = source_pairs(claims)
    shared, same = pairs.shared, pairs.same
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(shared > 0, same / np.maximum(shared, 1), 0.0)
    ok = (shared >= min_shared) & (r >= min_agreement)
    dist = np.where(ok, 1.0 - r, 1.0)
    np.fill_diagonal(dist, 0.0)
    dist = np.minimum(dist, dist.T)
    z = linkage(squareform(dist, checks=False), method="complete")
    lab = fcluster(z, t=(1.0 - min_agreement) + 1e-12, criterion="distance")
    groups = [tuple(int(s) for s in np.flatnonzero(lab == g)) for g in np.unique(lab)]
    groups = [g for g in groups if len(g) >= 2 and all(ok[a, b] for a in g for b in g if a != b)]
    return tuple(sorted(groups, key=lambda g: (-len(g), g[0])))


@dataclass(frozen=True, eq=False)
class CopyView:
    """Copy clusters and what they did to majority vote.

    Attributes
    ----------
    clusters : tuple of CopyCluster
        Most outvoted first (ties: larger first).
    headline : CopyCluster or None
        The first cluster that outvoted the truth at least once (None: no cluster did).
    mv, dependent : float
        Accuracy of majority vote and of the dependence-aware resolver on the checked items
        (NaN without truth, or when one did not run).
    dependent_method : str
    min_shared, min_agreement : the clustering rule's thresholds.
    has_truth : bool
    """

    clusters: tuple[CopyCluster, ...]
    headline: CopyCluster | None
    mv: float
    dependent: float
    dependent_method: str
    min_shared: int
    min_agreement: float
    has_truth: bool

    def table(self) -> pd.DataFrame:
        """One row per cluster (the page's table)."""
        return pd.DataFrame([{
            "group": c.label, "sources": ", ".join(c.members), "size": c.size,
            "shared items": c.shared, "same claim": c.agreement, "items": c.items,
            "their claim wrong": c.wrong if self.has_truth else None,
            "majority vote followed them": c.outvoted,
            "recovered": c.recovered, "their accuracy": c.accuracy}
            for c in self.clusters])


def _group_claim(claims: Claims, members: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the members' common claim (−1 if none or they differ) and how many
    members claim it."""
    rows = np.isin(claims.source, np.asarray(members))
    I = claims.n_items
    n = np.bincount(claims.item[rows], minlength=I)
    lo = np.full(I, np.iinfo(np.int64).max)
    hi = np.full(I, -1)
    np.minimum.at(lo, claims.item[rows], claims.claim[rows])
    np.maximum.at(hi, claims.item[rows], claims.claim[rows])
    common = np.where((n >= 2) & (lo == hi), hi, -1)
    return common, n


def copy_view(fit: FusionFit, *, min_shared: int = 50, min_agreement: float = 0.99
              ) -> CopyView:
    """The copy clusters of the table and what majority vote and the dependence-aware
    resolver made of them."""
    c = fit.claims
    groups = copy_clusters(c, min_shared=min_shared, min_agreement=min_agreement)
    mv = fit.results.get("mv")
    dep = fit.results.get(DEPENDENCE_METHOD)
    truth = fit.has_truth
    pairs = source_pairs(c) if groups else None
    idx = np.arange(c.n_items)
    made = []
    for g in groups:
        common, n = _group_claim(c, g)
        has = common >= 0
        v = fit.verdict(idx, common)
        wrong = has & (v == 0)
        sub = np.ix_(g, g)
        off = ~np.eye(len(g), dtype=bool)
        shared = int(pairs.shared[sub][off].min())
        agree = float((pairs.same[sub][off] / pairs.shared[sub][off]).min())
        rows = np.isin(c.source, np.asarray(g))
        rv = fit.verdict(c.item[rows], c.claim[rows])
        acc = float(np.nanmean(rv)) if truth and (~np.isnan(rv)).any() else float("nan")
        outvoted = recovered = 0
        one_voice = float("nan")
        out = np.zeros(c.n_items, bool)
        back = np.zeros(c.n_items, bool)
        if mv is not None:
            followed = has & (mv.labels == common)
            if truth:
                out = followed & wrong
                outvoted = int(out.sum())
                back = out & (fit.verdict(idx, dep.labels) == 1) if dep is not None else back
                recovered = int(back.sum()) if dep is not None else None
                w = c.row_weight() * np.where(rows, 1.0 / np.maximum(n[c.item], 1), 1.0)
                mv1 = majority_vote(c.replace(weight=w))
                v1 = fit.verdict(idx, mv1.labels)
                one_voice = float(np.nanmean(v1)) if (~np.isnan(v1)).any() else float("nan")
            else:
                out = followed & (dep.labels != mv.labels) if dep is not None else out
                outvoted = int(out.sum())
                recovered = None
        ex = np.r_[np.flatnonzero(back), np.flatnonzero(out & ~back)][:20]
        made.append(dict(members=tuple(c.sources[s] for s in g), shared=shared,
                         agreement=agree, items=int((n >= 2).sum()),
                         checked=int((has & ~np.isnan(v)).sum()), wrong=int(wrong.sum()),
                         outvoted=outvoted, recovered=recovered if truth else None,
                         accuracy=acc, one_voice=one_voice,
                         examples=tuple(c.items[i] for i in ex)))
    made.sort(key=lambda d: (-d["outvoted"], -len(d["members"])))
    clusters = tuple(CopyCluster(label=chr(ord("A") + i) if i < 26 else f"G{i + 1}", **d)
                     for i, d in enumerate(made))
    head = next((k for k in clusters if k.outvoted > 0), None)

    def acc_of(key):
        if key not in fit.results or not truth:
            return float("nan")
        v = fit.answer_verdict(key)
        return float(np.nanmean(v)) if (~np.isnan(v)).any() else float("nan")

    return CopyView(clusters=clusters, headline=head, mv=acc_of("mv"),
                    dependent=acc_of(DEPENDENCE_METHOD), dependent_method=DEPENDENCE_METHOD,
                    min_shared=min_shared, min_agreement=min_agreement, has_truth=truth)


def _group_of(clusters: Sequence[CopyCluster], n_sources: int,
              sources: Sequence[str]) -> list[str]:
    where = {s: k.label for k in clusters for s in k.members}
    return [where.get(sources[s], "") for s in range(n_sources)]


# ----------------------------------------------------------------------------- sources
@dataclass(frozen=True, eq=False)
class SourceView:
    """Per source: claims, coverage, checked accuracy with its interval, the estimate.

    ``table`` columns: ``source``, ``claims``, ``coverage`` (share of items it claims),
    ``checked`` (claims with a known verdict), ``correct``, ``accuracy``, ``low``, ``high``
    (Wilson interval; NaN without checked claims), ``estimated`` (the accuracy ``reference``
    estimates: the mean posterior of its claims), ``agrees`` (share of its claims equal to
    the fused answer), ``group`` (copy cluster label, or ""). Sorted by the interval's low
    end (or, without a truth, by the estimate), best first.
    """

    table: pd.DataFrame
    reference: str
    has_truth: bool
    level: float


def source_view(fit: FusionFit, *, reference: str = DEPENDENCE_METHOD,
                copies: CopyView | None = None, level: float = 0.95) -> SourceView:
    """The source table, with the estimates of ``reference`` (or majority vote if it did
    not run)."""
    c = fit.claims
    ref = reference if reference in fit.results else "mv"
    summary = source_summary(c, fit.results[ref], level=level)
    v = fit.verdict(c.item, c.claim)
    judged = ~np.isnan(v)
    n = np.bincount(c.source, weights=judged, minlength=c.n_sources).astype(int)
    k = np.bincount(c.source[judged], weights=v[judged], minlength=c.n_sources)
    lo, hi = wilson_interval(k, n, level=level)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    table = pd.DataFrame({
        "source": list(c.sources), "claims": summary.n_claims.astype(int),
        "coverage": summary.coverage, "checked": n, "correct": k.astype(int),
        "accuracy": acc, "low": np.where(n > 0, lo, np.nan),
        "high": np.where(n > 0, hi, np.nan), "estimated": summary.estimated,
        "agrees": summary.agreement,
        "group": _group_of(copies.clusters if copies else (), c.n_sources, c.sources)})
    order = "low" if fit.has_truth else "estimated"
    table = table.sort_values([order, "claims"], ascending=[False, False],
                              na_position="last", kind="stable").reset_index(drop=True)
    return SourceView(table=table, reference=ref, has_truth=fit.has_truth, level=level)


# ----------------------------------------------------------------------------- pairs
@dataclass(frozen=True, eq=False)
class PairView:
    """The dependence matrix of (at most ``max_sources``) sources.

    Attributes
    ----------
    sources : tuple of str
        Shown sources, copy groups first (members together), then by claims.
    groups : tuple of str
        Each shown source's copy group ("" for none).
    beyond : ndarray (S', S')
        Agreement beyond chance, (r − p)/(1 − p): r the share of shared items with the same
        claim, p what two independent sources of their estimated accuracies would reach
        (:func:`core.fusion.diagnostics.source_pairs`); NaN where nothing is shared.
    false_same : ndarray (S', S')
        Share of shared items on which both make the same false claim: counted on checked
        items when there is a truth (``false_kind == "observed"``), else expected from the
        reference resolver's posterior (``"expected"``); NaN where nothing is shared.
    shared : ndarray (S', S') of int
        Items the two share (checked items only for the observed false share's denominator:
        ``false_shared``).
    false_shared : ndarray (S', S') of int
    dependence : ndarray (S', S') or None
        ACCU + DEPEN's probability that the two are dependent.
    n_sources : int
        Sources in the table (``len(sources)`` may be fewer).
    reference : str
    false_kind : {"observed", "expected"}
    """

    sources: tuple[str, ...]
    groups: tuple[str, ...]
    beyond: np.ndarray
    false_same: np.ndarray
    shared: np.ndarray
    false_shared: np.ndarray
    dependence: np.ndarray | None
    n_sources: int
    reference: str
    false_kind: str


def pair_view(fit: FusionFit, *, copies: CopyView | None = None, max_sources: int = 40,
              reference: str = DEPENDENCE_METHOD) -> PairView:
    """Agreement beyond chance and agreement on false values, source by source."""
    c = fit.claims
    ref = reference if reference in fit.results else "mv"
    res = fit.results[ref]
    pairs = source_pairs(c, res)
    groups = _group_of(copies.clusters if copies else (), c.n_sources, c.sources)
    n_claims = np.bincount(c.source, minlength=c.n_sources)
    rank = {k.label: i for i, k in enumerate(copies.clusters)} if copies else {}
    order = sorted(range(c.n_sources), key=lambda s: (
        rank.get(groups[s], len(rank)), -n_claims[s], c.sources[s]))
    shown = np.asarray(order[:max(2, int(max_sources))])
    sub = np.ix_(shown, shown)
    if fit.has_truth:
        v = fit.verdict(c.item, c.claim)
        checked = ~np.isnan(v)
        false = checked & (v == 0)
        cand = res.candidates
        ones = np.ones(int(false.sum()))
        Y = sp.csr_array((ones, (cand.row[false], c.source[false])),
                         shape=(cand.size, c.n_sources))
        Z = sp.csr_array((np.ones(int(checked.sum())), (c.item[checked], c.source[checked])),
                         shape=(c.n_items, c.n_sources))
        same_false = (Y.T @ Y).toarray()
        denom = (Z.T @ Z).toarray()
        kind = "observed"
    else:
        same_false = np.asarray(pairs.same_false, float)
        denom = np.asarray(pairs.shared, float)
        kind = "expected"
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(denom > 0, same_false / np.maximum(denom, 1), np.nan)
    np.fill_diagonal(share, np.nan)
    dep = res.params.get("dependence") if ref == DEPENDENCE_METHOD else None
    return PairView(sources=tuple(c.sources[s] for s in shown),
                    groups=tuple(groups[s] for s in shown),
                    beyond=read_only(pairs.beyond_chance[sub]), false_same=read_only(share[sub]),
                    shared=read_only(pairs.shared[sub].astype(int)),
                    false_shared=read_only(np.asarray(denom)[sub].astype(int)),
                    dependence=None if dep is None else read_only(np.asarray(dep)[sub]),
                    n_sources=c.n_sources, reference=ref, false_kind=kind)


# ----------------------------------------------------------------------------- why
@dataclass(frozen=True, eq=False)
class WhyView:
    """Where a learned resolver ``b`` answers differently from majority vote ``a``.

    Attributes
    ----------
    a, b : method keys
    changed : int
        Items where both answer and differ.
    fixed, broken : int or None
        Of the changed items with a verdict: ``b`` right where ``a`` was wrong, and the
        reverse (None without truth).
    acc_a, acc_b : float
        Accuracies on the items both are scored on (NaN without truth).
    sources : DataFrame
        Per source on the changed items: ``source``, ``with_b`` (its claim was ``b``'s
        answer), ``with_a``, ``misled`` (broken items where it claimed ``b``'s wrong
        answer), ``accuracy`` (checked), ``trusted`` (``b``'s estimate of it), ``overrated``
        (trusted − accuracy), ``group`` (copy group or ""); sorted by ``misled``, then
        ``with_b`` − ``with_a``.
    items : DataFrame
        The changed items: ``item``, ``a``, ``b`` (the two answers), ``truth`` (or ""),
        ``verdict`` ("fixed", "broken", "both wrong", "not checked"), ``for_a``, ``for_b``
        (sources claiming each). Broken first, then fixed.
    """

    a: str
    b: str
    changed: int
    fixed: int | None
    broken: int | None
    acc_a: float
    acc_b: float
    sources: pd.DataFrame
    items: pd.DataFrame


def _truth_names(fit: FusionFit) -> np.ndarray:
    c = fit.claims
    if c.truth is None:
        return np.full(c.n_items, "", object)
    return np.asarray((*c.classes, ""), object)[c.truth]


def why_view(fit: FusionFit, b: str, *, a: str = "mv", copies: CopyView | None = None
             ) -> WhyView:
    """Why ``b`` is (or is not) better than ``a``, per source and per item (``copies`` adds
    each source's copy group)."""
    if a not in fit.results or b not in fit.results:
        raise ValueError("both resolvers must have run on this table")
    c = fit.claims
    ra, rb = fit.results[a], fit.results[b]
    d = disagreement(c, ra, rb)
    both = fit.scored(a) & fit.scored(b)
    changed = np.asarray(d["changed"]) & both
    idx = np.arange(c.n_items)
    va, vb = fit.verdict(idx, ra.labels), fit.verdict(idx, rb.labels)
    truth = fit.has_truth
    fixed = changed & (vb == 1) & (va == 0)
    broken = changed & (va == 1) & (vb == 0)
    rows = changed[c.item]
    S = c.n_sources
    with_b = np.bincount(c.source[rows], minlength=S,
                         weights=c.claim[rows] == rb.labels[c.item[rows]])
    with_a = np.bincount(c.source[rows], minlength=S,
                         weights=c.claim[rows] == ra.labels[c.item[rows]])
    mis = broken[c.item] & (c.claim == rb.labels[c.item])
    misled = np.bincount(c.source[mis], minlength=S)
    v = fit.verdict(c.item, c.claim)
    judged = ~np.isnan(v)
    n = np.bincount(c.source, weights=judged, minlength=S)
    k = np.bincount(c.source[judged], weights=v[judged], minlength=S)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    trusted = source_summary(c, rb).estimated
    src = pd.DataFrame({"source": list(c.sources), "with_b": with_b.astype(int),
                        "with_a": with_a.astype(int), "misled": misled.astype(int),
                        "accuracy": acc, "trusted": trusted, "overrated": trusted - acc,
                        "group": _group_of(copies.clusters if copies else (), S, c.sources)})
    src = src.assign(_lean=src["with_b"] - src["with_a"]).sort_values(
        ["misled", "_lean"], ascending=False, kind="stable").drop(columns="_lean")
    src = src[(src["with_b"] + src["with_a"]) > 0].reset_index(drop=True)
    names = np.asarray(c.classes, object)
    ch = np.flatnonzero(changed)
    per_item = np.zeros((2, c.n_items), int)
    for j, r in enumerate((ra, rb)):
        hit = c.claim == r.labels[c.item]
        per_item[j] = np.bincount(c.item[hit], minlength=c.n_items)
    verdict = np.where(fixed, "fixed", np.where(broken, "broken", np.where(
        (va == 0) & (vb == 0), "both wrong", "not checked")))
    items = pd.DataFrame({"item": np.asarray(c.items, object)[ch],
                          "a": names[ra.labels[ch]], "b": names[rb.labels[ch]],
                          "truth": _truth_names(fit)[ch], "verdict": verdict[ch],
                          "for_a": per_item[0, ch], "for_b": per_item[1, ch]})
    rank = {"broken": 0, "fixed": 1, "both wrong": 2, "not checked": 3}
    items = items.sort_values("verdict", key=lambda s: s.map(rank), kind="stable") \
        .reset_index(drop=True)

    def acc_of(vv):
        m = both & ~np.isnan(vv)
        return float(vv[m].mean()) if truth and m.any() else float("nan")

    return WhyView(a=a, b=b, changed=int(changed.sum()),
                   fixed=int(fixed.sum()) if truth else None,
                   broken=int(broken.sum()) if truth else None,
                   acc_a=acc_of(va), acc_b=acc_of(vb), sources=src, items=items)


# ----------------------------------------------------------------------------- contradicted
@dataclass(frozen=True, eq=False)
class ContradictedView:
    """Items whose fused answer no source claims.

    ``counts``: ``method``, ``name``, ``items`` per resolver. ``items``: ``item``,
    ``method`` (its name), ``answer``, ``claims`` (what the sources said, most claimed
    first, at most five).
    """

    counts: pd.DataFrame
    items: pd.DataFrame


def contradicted_view(fit: FusionFit, methods: Sequence[str], *, max_rows: int = 200
                      ) -> ContradictedView:
    """:func:`core.fusion.diagnostics.contradicted_items` for every chosen resolver."""
    c = fit.claims
    names = np.asarray(c.classes, object)
    counts, rows = [], []
    for key in (k for k in fit.methods if k in set(methods)):
        r = fit.results[key]
        flag = contradicted_items(c, r)
        counts.append({"method": key, "name": method(key).name, "items": int(flag.sum())})
        for i in np.flatnonzero(flag)[:max_rows]:
            said = pd.Series(names[c.claim[c.item == i]]).value_counts()
            shown = ", ".join(f"{v} ({n})" for v, n in said.head(5).items())
            rows.append({"item": c.items[i], "method": method(key).name,
                         "answer": names[r.labels[i]], "claims": shown})
    return ContradictedView(counts=pd.DataFrame(counts),
                            items=pd.DataFrame(rows, columns=["item", "method", "answer",
                                                              "claims"]))


# ----------------------------------------------------------------------------- what-if
@dataclass(frozen=True, eq=False)
class WhatIfView:
    """One item's posterior before and after a change.

    Attributes
    ----------
    item : str
    method : str
    change : str
        What was changed, in words.
    table : DataFrame
        One row per value with some posterior (or claimed, or the truth): ``value``,
        ``before``, ``after``, ``sources`` (how many claim it now), ``truth`` (bool).
    before_label, after_label : str
        The fused answer before and after ("" when abstained).
    truth : str
        The item's truth ("" when unknown).
    left_out : int
        Items that only the switched-off sources claim: left out of both fits.
    claims : DataFrame
        The item's claims as given: ``source``, ``claim``.
    """

    item: str
    method: str
    change: str
    table: pd.DataFrame
    before_label: str
    after_label: str
    truth: str
    left_out: int
    claims: pd.DataFrame

    def moved(self, value: str) -> float:
        """After − before for ``value`` (0 when it is not in the table)."""
        t = self.table.set_index("value")
        return float(t.loc[value, "after"] - t.loc[value, "before"]) if value in t.index \
            else 0.0


def _keep_items(claims: Claims, keep: np.ndarray) -> tuple[Claims, np.ndarray]:
    """The table restricted to ``keep`` items (their claims only) and the new code of each
    old item (−1 if dropped)."""
    new = np.cumsum(keep) - 1
    new = np.where(keep, new, -1)
    rows = keep[claims.item]
    items = tuple(claims.items[i] for i in np.flatnonzero(keep))
    return Claims(item=new[claims.item[rows]], source=claims.source[rows],
                  claim=claims.claim[rows], items=items, sources=claims.sources,
                  classes=claims.classes,
                  truth=None if claims.truth is None else claims.truth[keep],
                  split=None if claims.split is None else claims.split[keep],
                  splits=claims.splits,
                  weight=None if claims.weight is None else claims.weight[rows],
                  scope=claims.scope), new


def what_if_view(claims: Claims, key: str, item: str, *, drop: Sequence[str] = (),
                 flip: tuple[str, str] | None = None) -> WhatIfView:
    """Refit ``key`` with the sources ``drop`` switched off and/or ``flip = (source, new
    claim)`` on ``item``, and report the item's posterior before and after.

    Switching sources off can leave other items without any claim; those are left out of
    both fits (``left_out``), so before and after are fitted on the same items. Naive Bayes
    is not offered (its training split would move with the items).
    """
    m = method(key)
    if m.supervised:
        raise ValueError(f"the what-if refits an unsupervised resolver; {m.name} is not one")
    if item not in claims.items:
        raise ValueError("no such item in this table")
    i = claims.items.index(item)
    src = {s: k for k, s in enumerate(claims.sources)}
    unknown = [s for s in drop if s not in src]
    if unknown:
        raise ValueError("no such source in this table")
    drop_codes = sorted({src[s] for s in drop})
    left_out = 0
    table = claims
    if drop_codes:
        kept = ~np.isin(claims.source, drop_codes)
        per = np.bincount(claims.item[kept], minlength=claims.n_items)
        if per[i] == 0:
            raise ValueError("switching those sources off leaves this item without a claim")
        keep_items = per > 0
        left_out = int((~keep_items).sum())
        if left_out:
            table, new = _keep_items(claims, keep_items)
            i = int(new[i])
    fl = None
    if flip is not None:
        s, value = flip
        if s not in src:
            raise ValueError("no such source in this table")
        fl = (src[s], str(value))
    got = what_if(table, lambda t: _fit_one(key, t, None), i, drop_sources=drop_codes,
                  flip=fl)
    names = got.classes
    row_claims = claims.item == claims.items.index(item)
    now = pd.Series(np.asarray(claims.classes, object)[claims.claim[row_claims]],
                    index=np.asarray(claims.sources, object)[claims.source[row_claims]])
    after_claims = now.drop(index=[s for s in drop if s in now.index])
    if fl is not None and flip[0] in after_claims.index:
        after_claims[flip[0]] = fl[1]
    counts = after_claims.value_counts()
    t_code = -1 if claims.truth is None else int(claims.truth[claims.items.index(item)])
    truth = claims.classes[t_code] if t_code >= 0 else ""
    show = (np.maximum(got.before, got.after) > 1e-4) | np.isin(
        np.asarray(names, object), list(counts.index) + ([truth] if truth else []))
    tab = pd.DataFrame({"value": np.asarray(names, object)[show],
                        "before": got.before[show], "after": got.after[show]})
    tab["sources"] = tab["value"].map(counts).fillna(0).astype(int)
    tab["truth"] = tab["value"] == truth if truth else False
    tab = tab.sort_values(["before", "value"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True)

    def label(code):
        return names[code] if code >= 0 else ""

    frame = pd.DataFrame({"source": now.index.to_numpy(object),
                          "claim": now.to_numpy(object)})
    return WhatIfView(item=item, method=key, change=got.change, table=tab,
                      before_label=label(got.label_before), after_label=label(got.label_after),
                      truth=truth, left_out=left_out, claims=frame)


# ----------------------------------------------------------------------------- reliability
@dataclass(frozen=True, eq=False)
class ReliabilityData:
    """Each resolver's confidence and whether it was right, on its answered checked items.

    Attributes
    ----------
    confidence, correct : mapping of method key → ndarray
        Forecast in [0, 1] and outcome (0/1), aligned.
    table : DataFrame
        ``method``, ``name``, ``items``, ``confidence`` (mean), ``accuracy``, ``gap``
        (mean confidence − accuracy: above 0, over-confident), ``brier`` (mean squared
        difference between confidence and outcome).
    """

    confidence: Mapping[str, np.ndarray]
    correct: Mapping[str, np.ndarray]
    table: pd.DataFrame


def reliability_data(fit: FusionFit, methods: Sequence[str]) -> ReliabilityData:
    """Confidence against correctness of each chosen resolver (needs a truth)."""
    if not fit.has_truth:
        raise ValueError("a reliability diagram needs items with a known truth")
    conf, ok, rows = {}, {}, []
    for key in (k for k in fit.methods if k in set(methods)):
        r = fit.results[key]
        v = fit.answer_verdict(key)
        m = ~np.isnan(v) & r.answered
        p = np.clip(np.asarray(r.confidence[m], float), 0.0, 1.0)
        y = v[m].astype(float)
        conf[key], ok[key] = read_only(p), read_only(y)
        rows.append({"method": key, "name": method(key).name, "items": int(m.sum()),
                     "confidence": float(p.mean()) if p.size else float("nan"),
                     "accuracy": float(y.mean()) if y.size else float("nan"),
                     "gap": float(p.mean() - y.mean()) if p.size else float("nan"),
                     "brier": float(np.mean((p - y) ** 2)) if p.size else float("nan")})
    return ReliabilityData(confidence=MappingProxyType(conf), correct=MappingProxyType(ok),
                           table=pd.DataFrame(rows))


# ----------------------------------------------------------------------------- NQ-open
@dataclass(frozen=True, eq=False)
class LabelView:
    """Resolvers and single sources scored by two label sources (NQ-open).

    ``table``: ``name``, ``kind`` (resolver or system), then per label ``<label>_accuracy``,
    ``<label>_low``, ``<label>_high``, ``<label>_rank``; ``flipped``: pairs of names whose
    order flips between the two labels, resolvers involved only; ``labels``.
    """

    table: pd.DataFrame
    flipped: tuple[tuple[str, str], ...]
    labels: tuple[str, str]


def label_view(fit: FusionFit) -> LabelView:
    """:func:`core.fusion.nq.label_source_board` of the label-blind resolvers and the
    sources (naive Bayes is fitted to one label, so it is left out)."""
    if fit.judgements is None:
        raise ValueError("this table has no per-answer judgements")
    res = {method(k).name: fit.results[k] for k in fit.methods if not method(k).supervised}
    board = label_source_board(res, fit.judgements, sources=source_labels(fit.claims))
    t = board.table()
    kinds = t["kind"].map({"resolver": "resolver", "source": "system"})
    cols = {"method": "name"}
    out = t.rename(columns=cols).assign(kind=kinds)
    keep = ["name", "kind"] + [f"{lab}_{w}" for lab in board.between
                               for w in ("accuracy", "low", "high", "rank")]
    flipped = tuple(p for p in board.flipped if set(p) & set(res))
    return LabelView(table=out[keep].reset_index(drop=True), flipped=flipped,
                     labels=tuple(board.between))


# ----------------------------------------------------------------------------- predictions
def predictions_frame(fit: FusionFit, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per item: ``item``, ``truth`` (when any), and per resolver its answer and
    confidence (``<key>``, ``<key>_confidence``; naive Bayes adds ``nb_trained_on``)."""
    c = fit.claims
    out = {"item": np.asarray(c.items, object)}
    if c.truth is not None:
        out["truth"] = _truth_names(fit)
    for key in fit.methods if methods is None else [k for k in fit.methods if k in methods]:
        r = fit.results[key]
        out[key] = r.label_names()
        out[f"{key}_confidence"] = np.asarray(r.confidence, float)
        if key == "nb" and fit.train is not None:
            out["nb_trained_on"] = np.asarray(fit.train, bool)
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------- uploads
#: The page's upload caps: the uploader's 20 MiB, one million rows.
UPLOAD_CAPS = Caps(max_bytes=20 * 2**20, max_rows=1_000_000, max_columns=2_000)


def read_table(data: bytes, *, name: str = "", caps: Caps = UPLOAD_CAPS) -> pd.DataFrame:
    """A CSV or Parquet file's bytes (gzip too) as a frame of strings, before any column is
    mapped; a one-line ``ValueError`` for what cannot be read (size, encoding, structure)."""
    if not data:
        raise ValueError("the file is empty")
    if len(data) > caps.max_bytes:
        raise ValueError(f"the file is {len(data):,} bytes; the cap is {caps.max_bytes:,}")
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
                data = fh.read(caps.max_bytes + 1)
        except (OSError, EOFError) as exc:
            raise ValueError(f"not a readable gzip file: {exc}") from None
        if len(data) > caps.max_bytes:
            raise ValueError(f"the file decompresses to more than {caps.max_bytes:,} bytes "
                             "(the cap)")
        name = name.removesuffix(".gz")
    if data[:4] == b"PAR1" or name.lower().endswith((".parquet", ".pq")):
        try:
            frame = pd.read_parquet(io.BytesIO(data))
        except Exception as exc:  # pyarrow raises many types for a broken file
            raise ValueError(f"not a readable Parquet file ({type(exc).__name__})") from None
        frame.columns = [str(c) for c in frame.columns]
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise ValueError(f"line {line}: not UTF-8 (byte 0x{data[exc.start]:02x}); re-save "
                             "the file as UTF-8") from None
        if not text.strip():
            raise ValueError("the file is empty")
        try:
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False,
                                na_filter=False)
        except (pd.errors.ParserError, ValueError) as exc:
            raise ValueError("CSV: " + " ".join(str(exc).split())) from None
    if frame.shape[1] > caps.max_columns:
        raise ValueError(f"{frame.shape[1]:,} columns; the cap is {caps.max_columns:,}")
    if len(frame) > caps.max_rows:
        raise ValueError(f"{len(frame):,} rows; the cap is {caps.max_rows:,}")
    if len(frame) == 0:
        raise ValueError("the table has no rows")
    if frame.shape[1] < 2:
        raise ValueError("the table has one column; a claims table needs at least two")
    return frame


_GUESS = {"item": ("item", "task", "question", "object", "entity", "id"),
          "source": ("source", "worker", "annotator", "system", "site", "labeler"),
          "claim": ("claim", "label", "value", "answer", "response"),
          "truth": ("truth", "gold", "golden", "true_label", "ground_truth", "gt"),
          "split": ("split", "fold"), "weight": ("weight",)}


def guess_columns(columns: Sequence[str]) -> tuple[str, dict[str, str | None]]:
    """A layout ("long" if item, source and claim columns can be named, else "wide") and a
    role → column guess from the column names (None: not found)."""
    low = {str(c).strip().lower(): str(c) for c in columns}
    guess: dict[str, str | None] = {}
    for role, names in _GUESS.items():
        guess[role] = next((low[n] for n in names if n in low), None)
    long = all(guess[r] is not None for r in ("item", "source", "claim"))
    if guess["item"] is None:
        guess["item"] = str(columns[0])
    return ("long" if long else "wide"), guess


def normalisers(*, case: bool = False, numeric: float = 0.0, minutes: float = 0.0) -> tuple:
    """The importer's normalisers for the page's options (0 or False: off), in the order
    case and white space, time tolerance, numeric tolerance."""
    out: list = []
    if case:
        out.append(CaseWhitespace())
    if minutes > 0:
        out.append(TimeTolerance(minutes=float(minutes)))
    if numeric > 0:
        out.append(NumericTolerance(float(numeric)))
    return tuple(out)


def import_frame(frame: pd.DataFrame, *, layout: str, columns: Mapping[str, object],
                 normalise: Sequence = (), caps: Caps = UPLOAD_CAPS) -> ImportResult:
    """:func:`core.fusion.importer.read_claims` of a read table with the mapped columns
    (roles mapped to None are not read)."""
    return read_claims(frame, layout=layout, columns=dict(columns), normalise=normalise,
                       caps=caps)


def example_table(n_items: int = 60) -> pd.DataFrame:
    """A small long-layout example upload: the first ``n_items`` items of the built-in Flight
    set (item, source, claim, truth)."""
    claims = load_builtin("flight").claims
    frame = claims.to_frame()
    keep = np.asarray(claims.items, object)[: max(1, int(n_items))]
    return frame[frame["item"].isin(set(keep))].reset_index(drop=True)


def fit_builtin(key: str, *, label: str | None = None, normalise: Sequence = ()
                ) -> tuple[ImportResult, FusionFit]:
    """Read a built-in set (:func:`core.fusion.builtin.load_builtin`) and fit every resolver;
    NQ-open's answers are judged per answer under ``label`` (default: people)."""
    if key == "nq_open":
        imported = load_builtin(key, truth=label, normalise=normalise)
        return imported, fit_fusion(imported, judgements=nq_open_judgements(imported),
                                    label=label)
    imported = load_builtin(key, normalise=normalise)
    return imported, fit_fusion(imported)


def fit_builtin_with(key: str, *, label: str | None = None, case: bool = False,
                     minutes: float = 0.0, numeric: float = 0.0
                     ) -> tuple[ImportResult, FusionFit]:
    """:func:`fit_builtin` with the page's normaliser options (:func:`normalisers`): small,
    picklable arguments, so the Your data page can run it on its worker pool."""
    return fit_builtin(key, label=label,
                       normalise=normalisers(case=case, minutes=minutes, numeric=numeric))


def item_claims(claims: Claims, item: str) -> pd.DataFrame:
    """One item's claims: ``source``, ``claim``, in the table's row order."""
    if item not in claims.items:
        raise ValueError("no such item in this table")
    rows = claims.item == claims.items.index(item)
    return pd.DataFrame({"source": np.asarray(claims.sources, object)[claims.source[rows]],
                         "claim": np.asarray(claims.classes, object)[claims.claim[rows]]})


def what_if_items(fit: FusionFit, copies: CopyView | None = None, *, limit: int = 3000
                  ) -> tuple[str, ...]:
    """Items worth a what-if, at most ``limit``: the headline copy cluster's examples first,
    then every item whose sources disagree (in table order)."""
    c = fit.claims
    first = list(copies.headline.examples) if copies is not None and copies.headline else []
    lo = np.full(c.n_items, np.iinfo(np.int64).max)
    hi = np.full(c.n_items, -1)
    np.minimum.at(lo, c.item, c.claim)
    np.maximum.at(hi, c.item, c.claim)
    rest = [c.items[i] for i in np.flatnonzero(lo != hi)]
    seen = set(first)
    out = first + [i for i in rest if i not in seen]
    if not out:
        out = list(c.items[: min(limit, c.n_items)])
    return tuple(out[:limit])
