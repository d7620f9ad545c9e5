"""Truth discovery with source accuracy and source dependence (ACCU / DEPEN).

In the spirit of Dong, Berti-Équille and Srivastava, "Integrating conflicting data: the role
of source dependence", PVLDB 2(1), 2009: sources that agree on *false* values more often
than independent sources of their accuracy would are probably copying, and a copied vote
is discounted. Our formulation (each step vectorised over all items, sources or source
pairs; the only Python loops run over iterations and over ranks within a vote group):

Accuracy vote (ACCU). Source s is right with probability A_s and otherwise claims one of the
item's n_i other candidates uniformly (n_i = K − 1 under the global scope, the item's
distinct claims − 1 under the item scope; the paper's open domain of n unclaimed false values
is not used: the truth is taken to be among the candidates, as for every resolver here). A
claim votes A′ = ln(n_i·A_s/(1 − A_s)); a value's count is C(v) = Σ_{claims of v} A′·I(s, v)
and P(v) = exp C(v) / Σ_{v′} exp C(v′) over the item's candidates (the paper's eq. for
P(v) with the candidates as the domain). A_s = mean P of the source's claims.

Dependence (DEPEN). For a pair of sources on their shared items, let k_t, k_f be the
expected numbers of items where they claim the same value and it is true, resp. false
(from the current P), and k_d where they differ. Independent sources of accuracies A₁, A₂
give P_t = A₁A₂, P_f = (1 − A₁)(1 − A₂)/n̄, P_d = 1 − P_t − P_f (n̄ the mean n_i); if s₁
copies each value of s₂ with probability c (else acts independently), same-true has
probability c·A₂ + (1 − c)P_t, same-false c(1 − A₂) + (1 − c)P_f, different (1 − c)P_d.
With prior α of dependence (split evenly between the two directions), Bayes' rule gives
the dependence probability D(s₁, s₂): agreement on false values beyond P_f drives it.
The copy rate c is fixed (the paper's constant) or, with ``copy="estimate"`` (default),
estimated per pair as agreement beyond chance, c = (r − p)/(1 − p) with r the pair's share of
shared items with the same claim and p = P_t + P_f (clipped to [1e−6, 1 − 1e−6]): sources
whose errors merely correlate get a small c, exact copies c ≈ 1.

Discounting. The sources claiming a value are taken in order of decreasing accuracy (ties:
source order); each counts with I(s, v) = Π_{earlier s′ claiming v} (1 − c·D(s, s′)), the
probability that it provides v independently of those before it. So k exact copies of a
source add next to nothing to its vote.

Iteration. A run computes, each round, D and the discounts from the current P and A, then
votes, P and A, until no accuracy moves by ``tol`` (at most ``n_iter`` rounds). Where it
starts decides which fixed point it reaches, so two starts are tried (``start="both"``):

* ``"accu"``: an independent stage first — accuracies from the majority-vote shares of each
  source's claims (crowd-kit's start for its EM aggregators), then (votes, P, A) rounds
  without discounts to convergence (ACCU) — and the dependent rounds from there. On Flight's
  whole day a constant start falls into the copiers' fixed point; this start does not.
* ``"agreement"``: the majority vote discounted by a dependence read from agreement alone
  (P(same claim) = P_t + P_f if independent, c + (1 − c)(P_t + P_f) if copying, with the
  majority-vote-share accuracies), then the dependent rounds. It resists copies that
  outvote the independent sources at the start.

The kept fixed point is the one whose votes need the least discounting, the smaller
Σ_claims (1 − I(s, v)) (ties: the first start): the explanation with the least copying.
``dependence=False`` runs ACCU alone. Gold items are clamped to their truth (P one-hot)
every round. Known limit: when exact copies of a bad source outnumber the independent
sources (6 identical against 5 fair in the tests), both fixed points explain the copies away
equally cheaply and the copiers can win.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from core.fusion._em import Gold, check_gold
from core.fusion.claims import Candidates, Claims
from core.fusion.result import FusionResult, make_result
from core.fusion.vote import vote_totals

__all__ = ["MAX_SOURCES", "accu_depen", "dependence_probability", "vote_independence"]

#: Pairwise dependence is an S × S computation; more sources than this are refused.
MAX_SOURCES = 4000


def dependence_probability(k_t, k_f, k_d, a1, a2, *, n_false: float, alpha: float = 0.2,
                           copy=0.8) -> np.ndarray:
    """Posterior probability that two sources are dependent (module docstring), elementwise.

    Examples
    --------
    Two sources of accuracy .8: five shared false values are overwhelming evidence of
    copying, five shared true values weak evidence.

    >>> round(float(dependence_probability(0, 5, 0, .8, .8, n_false=100)), 4)
    1.0
    >>> round(float(dependence_probability(5, 0, 0, .8, .8, n_false=100)), 4)
    0.3835
    """
    k_t, k_f, k_d = (np.asarray(v, float) for v in (k_t, k_f, k_d))
    a1, a2, copy = np.asarray(a1, float), np.asarray(a2, float), np.asarray(copy, float)
    pt = a1 * a2
    pf = (1 - a1) * (1 - a2) / n_false
    pd = np.maximum(1 - pt - pf, 1e-300)
    ind = k_t * np.log(pt) + k_f * np.log(pf) + k_d * np.log(pd)

    def copied(a_src):
        return (k_t * np.log(copy * a_src + (1 - copy) * pt)
                + k_f * np.log(copy * (1 - a_src) + (1 - copy) * pf)
                + k_d * np.log((1 - copy) * pd))

    log_dep = np.log(alpha / 2) + np.logaddexp(copied(a2), copied(a1))
    log_ind = np.log1p(-alpha) + ind
    return 1.0 / (1.0 + np.exp(np.clip(log_ind - log_dep, -700, 700)))


def vote_independence(cand: Candidates, claims: Claims, accuracy: np.ndarray,
                      dep: np.ndarray, copy: float) -> np.ndarray:
    """I(s, v) per claim: within each claimed value, sources in decreasing accuracy (ties:
    source order), each discounted by Π (1 − copy·D) over those before it. Shape (n,)."""
    n, S = claims.n_claims, claims.n_sources
    src_rank = np.empty(S, np.int64)
    src_rank[np.lexsort((np.arange(S), -accuracy))] = np.arange(S)
    order = np.argsort(cand.row * S + src_rank[claims.source], kind="stable")
    sc, ss = cand.row[order], claims.source[order]
    start = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    size = np.diff(np.r_[start, n])
    rank = np.arange(n) - np.repeat(start, size)
    log_i = np.zeros(n)
    with np.errstate(divide="ignore"):
        log_keep = np.log(np.maximum(1 - copy * dep, 0.0))
    for k in range(1, int(size.max())):  # one pass per rank, all vote groups at once
        p = np.flatnonzero(rank >= k)
        log_i[p] += log_keep[ss[p], ss[p - k]]
    out = np.empty(n)
    out[order] = np.exp(log_i)
    return out


def accu_depen(claims: Claims, *, scope: str | None = None, dependence: bool = True,
               alpha: float = 0.2, copy: float | str = "estimate", start: str = "both",
               n_iter: int = 100, tol: float = 1e-4, gold=None,
               tie: str = "smallest") -> FusionResult:
    """Truth discovery with accuracies and copy detection (module docstring).

    Parameters
    ----------
    claims : Claims
    scope : {"global", "item"}, optional
        Default: the table's.
    dependence : bool
        False: ACCU alone (accuracy votes, sources independent).
    alpha : float
        Prior probability that two sources are dependent.
    copy : float in (0, 1) or "estimate"
        Probability that a copier copies a value, or estimated per pair.
    start : {"both", "accu", "agreement"}
        The start(s) tried (module docstring).
    n_iter, tol : per-stage iteration cap; a stage stops when no accuracy moves by ``tol``.
    gold : bool mask, indices or True, optional
        Items clamped to their truth every round.
    tie : {"smallest", "first_seen"}

    Returns
    -------
    FusionResult
        ``params``: ``accuracy`` (S,); with dependence also ``accuracy_independent`` (S,)
        after the ACCU stage, ``dependence`` (S, S) = D, ``copy_rate`` (S, S) = c,
        ``same_false`` (S, S) expected agreements on false values, ``false_chance`` (S, S)
        their expectation for independent sources, ``shared`` (S, S) items in common,
        ``independence`` (n,) each claim's discount I(s, v), ``start`` the kept start and
        ``discounted_votes`` each start's Σ (1 − I).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (copy == "estimate" or (isinstance(copy, int | float) and 0 < copy < 1)):
        raise ValueError(f"copy must be in (0, 1) or 'estimate', got {copy!r}")
    if n_iter < 1:
        raise ValueError("n_iter must be at least 1")
    if start not in ("both", "accu", "agreement"):
        raise ValueError(f"start must be 'both', 'accu' or 'agreement', got {start!r}")
    S = claims.n_sources
    if dependence and S > MAX_SOURCES:
        raise ValueError(f"{S:,} sources; pairwise dependence is capped at {MAX_SOURCES:,} "
                         "(use dependence=False)")
    gold = check_gold(claims, gold)
    cand = claims.candidates(scope, with_truth=gold is not None)
    clamp = Gold(cand, claims, gold)
    w = claims.row_weight()
    n_i = np.maximum(cand.width - 1, 1).astype(float)
    n_bar = float(n_i.mean())
    log_n = np.log(n_i)[claims.item]
    n_per_source = np.bincount(claims.source, weights=w, minlength=S)

    def accuracy(p):
        a = np.bincount(claims.source, weights=w * p[cand.row], minlength=S)
        return np.divide(a, n_per_source, out=np.full(S, 0.5), where=n_per_source > 0)

    def posterior(acc, indep):
        a = np.clip(acc, 1e-3, 1 - 1e-3)
        vote = log_n + (np.log(a) - np.log1p(-a))[claims.source]
        return clamp(cand.softmax(np.bincount(cand.row, weights=w * vote * indep,
                                              minlength=cand.size)))

    p0 = clamp(cand.normalise(vote_totals(claims, candidates=cand)))
    acc0 = accuracy(p0)
    ones = np.ones(claims.n_claims)
    if not dependence:
        fit = _run(posterior, accuracy, p0, acc0, ones, n_iter, tol, None)
        return _result(claims, cand, fit, {}, gold, copy, alpha, dependence, tie)
    Y = sp.csr_array((ones, (cand.row, claims.source)), shape=(cand.size, S))
    Z = sp.csr_array((ones, (claims.item, claims.source)), shape=(cand.n_items, S))
    shared = (Z.T @ Z).toarray()
    same = (Y.T @ Y).toarray()

    def dependent(p, acc):
        dep, c_pair, k_f, p_f = _dependence(Y, p, acc, shared, same, n_bar, alpha, copy)
        return vote_independence(cand, claims, acc, c_pair * dep, 1.0), (dep, c_pair, k_f,
                                                                         p_f)
    fits = []
    if start in ("both", "accu"):
        stage1 = _run(posterior, accuracy, p0, acc0, ones, n_iter, tol, None)
        fit = _run(posterior, accuracy, stage1["p"], stage1["acc"], ones, n_iter, tol,
                   dependent)
        fit["iterations"] += stage1["iterations"]
        fit["trace"] = stage1["trace"] + fit["trace"]
        fit["accuracy_independent"] = stage1["acc"]
        fits.append(("accu", fit))
    if start in ("both", "agreement"):
        d0, c0 = _agreement_dependence(acc0, shared, same, n_bar, alpha, copy)
        ind0 = vote_independence(cand, claims, acc0, c0 * d0, 1.0)
        p1 = clamp(cand.normalise(np.bincount(cand.row, weights=w * ind0,
                                              minlength=cand.size)))
        fit = _run(posterior, accuracy, p1, accuracy(p1), ones, n_iter, tol, dependent)
        fits.append(("agreement", fit))
    cost = [float(np.sum(w * (1 - f["indep"]))) for _, f in fits]
    k = int(np.argmin(cost))
    extra = {"start": fits[k][0], "discounted_votes": np.array(cost),
             "shared": shared}
    return _result(claims, cand, fits[k][1], extra, gold, copy, alpha, dependence, tie)


def _run(posterior, accuracy, p, acc, indep, n_iter, tol, dependent) -> dict:
    """(votes, P, A) rounds from (p, acc); with ``dependent``, D and the discounts are
    recomputed from the current P and A at the start of every round."""
    trace: list[float] = []
    extra = None
    converged, it = False, 0
    while it < n_iter:
        it += 1
        if dependent is not None:
            indep, extra = dependent(p, acc)
        p = posterior(acc, indep)
        new = accuracy(p)
        step = float(np.max(np.abs(new - acc)))
        trace.append(step)
        acc = new
        if step < tol:
            converged = True
            break
    return {"p": p, "acc": acc, "indep": indep, "extra": extra, "iterations": it,
            "converged": converged, "trace": trace}


def _result(claims, cand, fit, extra, gold, copy, alpha, dependence, tie) -> FusionResult:
    params = {"accuracy": fit["acc"]}
    if dependence:
        dep, c_pair, k_f, p_f = fit["extra"]
        params.update(accuracy_independent=fit.get("accuracy_independent", fit["acc"]),
                      dependence=dep, copy_rate=c_pair, same_false=k_f,
                      false_chance=p_f * extra["shared"], independence=fit["indep"], **extra)
    if gold is not None:
        params["gold"] = gold
    name = "accu_depen" if dependence else "accu"
    c_txt = "estimated per pair" if copy == "estimate" else f"{copy:g}"
    model = ("Truth discovery (Dong, Berti-Équille and Srivastava, PVLDB 2009): accuracy votes "
             "ln(n·A/(1−A)) over the item's candidates"
             + (f", copied votes discounted by 1 − c·P(dependence) (c {c_txt}, prior "
                f"{alpha:g}); of two starts, the fixed point needing the least discount."
                if dependence else " (ACCU: sources independent)."))
    return make_result(name, model, claims, cand, fit["p"], tie=tie,
                       iterations=fit["iterations"], converged=fit["converged"],
                       trace=fit["trace"], objective="largest accuracy change per round",
                       params=params)


def _agreement_dependence(acc, shared, same, n_bar, alpha, copy):
    """D and c from agreement alone (no truth): P(same) = p if independent, c + (1 − c)p
    if copying, p = A₁A₂ + (1 − A₁)(1 − A₂)/n̄."""
    S = acc.size
    a = np.clip(acc, 1e-3, 1 - 1e-3)
    a1, a2 = a[:, None], a[None, :]
    p_same = a1 * a2 + (1 - a1) * (1 - a2) / n_bar
    if copy == "estimate":
        r = np.divide(same, shared, out=np.zeros((S, S)), where=shared > 0)
        c_pair = np.clip((r - p_same) / (1 - p_same), 1e-6, 1 - 1e-6)
    else:
        c_pair = np.full((S, S), float(copy))
    diff = np.maximum(shared - same, 0.0)
    log_ind = np.log1p(-alpha) + same * np.log(p_same) + diff * np.log1p(-p_same)
    q_same = c_pair + (1 - c_pair) * p_same
    log_dep = np.log(alpha) + same * np.log(q_same) + diff * np.log(
        np.maximum((1 - c_pair) * (1 - p_same), 1e-300))
    dep = 1.0 / (1.0 + np.exp(np.clip(log_ind - log_dep, -700, 700)))
    dep[shared == 0] = 0.0
    np.fill_diagonal(dep, 0.0)
    return dep, c_pair


def _dependence(Y, p, acc, shared, same, n_bar, alpha, copy):
    """D, c, expected same-false counts and P_f for every pair (S × S, zero diagonal)."""
    S = acc.size
    k_t = (Y.T @ Y.multiply(p[:, None]).tocsr()).toarray()
    k_f = np.maximum(same - k_t, 0.0)
    k_d = np.maximum(shared - same, 0.0)
    a = np.clip(acc, 1e-3, 1 - 1e-3)
    a1, a2 = a[:, None], a[None, :]
    p_f = (1 - a1) * (1 - a2) / n_bar
    if copy == "estimate":
        p_same = a1 * a2 + p_f
        r = np.divide(same, shared, out=np.zeros((S, S)), where=shared > 0)
        c_pair = np.clip((r - p_same) / (1 - p_same), 1e-6, 1 - 1e-6)
    else:
        c_pair = np.full((S, S), float(copy))
    dep = dependence_probability(k_t, k_f, k_d, a1, a2, n_false=n_bar, alpha=alpha,
                                 copy=c_pair)
    dep[shared == 0] = 0.0
    np.fill_diagonal(dep, 0.0)
    return dep, c_pair, k_f, p_f
