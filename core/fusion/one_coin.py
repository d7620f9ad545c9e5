"""Weighted vote with source accuracies learned by one-coin EM.

Model (the "one-coin" model; Zhang, Chen, Zhou and Jordan, JMLR 17, 2016, §2 call it the
one-coin Dawid–Skene model): source s says the truth with probability a_s, and otherwise one
of the item's n_i other candidates uniformly, so

    P(claims of item i | truth c) ∝ Π_{r claims c} a_s · Π_{r claims ≠ c} (1 − a_s)/n_i ,

and the posterior of candidate c is a softmax of π_c·exp(Σ_{r claims c} w_s) with the vote
weight w_s = log a_s − log((1 − a_s)/n_i) (the factor common to all candidates cancels).
n_i = (number of candidates of item i) − 1, at least 1: under the item scope, the distinct
claims of the item minus one; under the global scope, K − 1.

Two variants, both vectorised (``np.bincount`` over claims):

``variant="baseline"`` — exactly ``one_coin_em`` of ``data/conflict/scripts/metrics.py``
    (the issue's .919 on Flight, .663 on its whole day): a_s = 0.8 to start; exactly
    ``n_iter`` (50) rounds of (E) the softmax above with uniform π and a clipped to
    [1e−3, 1 − 1e−3], then (M) a_s = (Σ_{r of s} P(claim_r) + 1)/(n_s + 2) (Laplace);
    labels from the last E-step, ties to the smallest claim. There is no early stop;
    ``converged`` reports whether the last M-step moved no accuracy by ``tol`` or more.

``variant="crowdkit"`` — the semantics of crowd-kit 1.4.2's ``OneCoinDawidSkene``:
    start from the majority-vote shares; π = mean posterior per class (floored at 1e−10);
    a_s = mean posterior of s's claims (no smoothing); e_correct = a_s and
    e_wrong = (1 − a_s)/n_i, each clipped to [1e−10, 1 − 1e−10]; stop when the evidence
    lower bound per claim (crowd-kit's: Σ_r Σ_c q_ic (log e + log π_c) plus the entropy of
    q) improves by less than ``tol`` (1e−5), at most ``n_iter`` (100) rounds; ties to the
    first-seen claim.

``gold`` clamps the posterior of gold items to their truth after every E-step; ``prior``
fixes π (crowdkit variant; the baseline's π is uniform).
"""

from __future__ import annotations

import numpy as np

from core.fusion._em import EPS, Gold, check_gold, check_prior, class_mean
from core.fusion._numeric import dot
from core.fusion.claims import Claims
from core.fusion.result import FusionResult, make_result
from core.fusion.vote import vote_totals

__all__ = ["one_coin_em"]


def _n_false(cand) -> np.ndarray:
    return np.maximum(cand.width - 1, 1).astype(float)


def _per_source_mean(x: np.ndarray, claims: Claims, w: np.ndarray) -> np.ndarray:
    tot = np.bincount(claims.source, weights=w, minlength=claims.n_sources)
    s = np.bincount(claims.source, weights=w * x, minlength=claims.n_sources)
    return np.divide(s, tot, out=np.zeros_like(s), where=tot > 0)


def one_coin_em(claims: Claims, *, variant: str = "baseline", scope: str | None = None,
                n_iter: int | None = None, tol: float | None = None, init: float = 0.8,
                gold=None, prior=None, tie: str | None = None) -> FusionResult:
    """Fit the one-coin model by EM and vote with the learned accuracies.

    Parameters
    ----------
    claims : Claims
    variant : {"baseline", "crowdkit"}
        See the module docstring.
    scope : {"global", "item"}, optional
        Candidate scope (default: the table's for crowdkit, "item" for the baseline, whose
        n_i counts the item's distinct claims).
    n_iter, tol : iteration cap and stopping tolerance (defaults: 50 and 1e-6 for the
        baseline, 100 and 1e-5 for crowdkit).
    init : float
        Starting accuracy (baseline variant).
    gold : bool mask, indices or True, optional
        Items whose truth is clamped inside EM (True: every item with a truth).
    prior : array of K floats, optional
        A fixed class prior (crowdkit variant).
    tie : {"smallest", "first_seen"}, optional
        Default: smallest (baseline), first_seen (crowdkit).

    Returns
    -------
    FusionResult
        ``params``: ``accuracy`` (S,), ``prior`` (K,), ``weight`` (S,) the vote weight
        log(a/(1−a)) before the per-item n_i term.
    """
    if variant not in ("baseline", "crowdkit"):
        raise ValueError(f"variant must be 'baseline' or 'crowdkit', got {variant!r}")
    gold = check_gold(claims, gold)
    prior = check_prior(claims, prior)
    if scope is None and variant == "baseline":
        scope = "item"  # metrics.py: n_i from the item's distinct claims
    cand = claims.candidates(scope, with_truth=gold is not None)
    clamp = Gold(cand, claims, gold)
    w = claims.row_weight()
    nf = _n_false(cand)[claims.item]
    base = variant == "baseline"
    n_iter = (50 if base else 100) if n_iter is None else int(n_iter)
    tol = (1e-6 if base else 1e-5) if tol is None else float(tol)
    if n_iter < 1:
        raise ValueError("n_iter must be at least 1")
    trace: list[float] = []
    converged = False
    if base:
        if prior is not None:
            raise ValueError("the baseline variant has a uniform prior; use variant='crowdkit'")
        acc = np.full(claims.n_sources, float(init))
        log_nf = np.log(nf)
        n_s = np.bincount(claims.source, weights=w, minlength=claims.n_sources)
        const = dot(w, log_nf) + float(np.log(cand.width).sum())
        for _ in range(n_iter):
            a = np.clip(acc, 1e-3, 1 - 1e-3)
            lw = (np.log(a) - np.log1p(-a))[claims.source] + log_nf
            q, lse = cand.softmax(np.bincount(cand.row, weights=w * lw, minlength=cand.size),
                                  return_lse=True)
            q = clamp(q)
            # marginal log-likelihood: Σ_i log Σ_c Π_r P(l_r | c) / #candidates
            trace.append(float(lse.sum()) + dot(n_s, np.log1p(-a)) - const)
            new = (_per_source_sum(q[cand.row], claims, w) + 1) / (n_s + 2)
            converged = float(np.max(np.abs(new - acc))) < tol
            acc = new
        pri = np.full(claims.n_classes, np.nan)
        model = ("One-coin EM (metrics.py baseline): accuracy a_s, wrong claims uniform over "
                 "the item's other candidates; uniform prior; Laplace-smoothed M-step.")
        tie = tie or "smallest"
        objective = "log-likelihood of the claims (uniform prior over candidates)"
    else:
        q = clamp(cand.normalise(vote_totals(claims, candidates=cand)))
        pri = class_mean(q, cand) if prior is None else prior
        acc = _per_source_mean(q[cand.row], claims, w)
        loss, it = -np.inf, 0
        n_w = float(w.sum())
        while it < n_iter:
            it += 1
            lp = np.log(np.maximum(pri, EPS))
            score = np.bincount(cand.row, weights=w * _log_ratio(acc, claims, nf),
                                minlength=cand.size) + lp[cand.cls]
            q = clamp(cand.softmax(score))
            pri = class_mean(q, cand) if prior is None else prior
            acc = _per_source_mean(q[cand.row], claims, w)
            new = _elbo(q, cand, claims, w, acc, nf, pri) / n_w
            trace.append(new)
            if new - loss < tol:
                converged = True
                break
            loss = new
        model = ("One-coin Dawid–Skene (crowd-kit OneCoinDawidSkene semantics): accuracy "
                 "a_s, wrong claims uniform over the other candidates, learned class prior, "
                 "majority-vote start, 1e-10 floors.")
        tie = tie or "first_seen"
        objective = "evidence lower bound per claim (crowd-kit convention)"
    a = np.clip(acc, 1e-12, 1 - 1e-12)
    params = {"accuracy": acc, "prior": pri, "weight": np.log(a) - np.log1p(-a),
              "variant": variant}
    if gold is not None:
        params["gold"] = gold
    return make_result("one_coin_em", model, claims, cand, q, tie=tie,
                       iterations=n_iter if base else it,
                       converged=converged, trace=trace, objective=objective, params=params)


def _per_source_sum(x, claims, w):
    return np.bincount(claims.source, weights=w * x, minlength=claims.n_sources)


def _log_errors(acc, claims, nf):
    """log e_correct and log e_wrong per claim, floored as crowd-kit floors them."""
    a = acc[claims.source]
    return (np.log(np.clip(a, EPS, 1 - EPS)), np.log(np.clip((1 - a) / nf, EPS, 1 - EPS)))


def _log_ratio(acc, claims, nf):
    lc, lw = _log_errors(acc, claims, nf)
    return lc - lw


def _elbo(q, cand, claims, w, acc, nf, pri) -> float:
    """crowd-kit's ``_evidence_lower_bound`` for the one-coin errors: Σ_r w_r [q_own log e_c
    + (Σ_c q − q_own) log e_w] + Σ_c (Σ_r w_r q_ic) log π_c + entropy(q floored at 1e-10)."""
    lc, lw = _log_errors(acc, claims, nf)
    q_own = q[cand.row]
    q_tot = cand.segment_sum(q)[claims.item]
    joint = dot(w * q_own, lc) + dot(w * (q_tot - q_own), lw)
    n_i = np.bincount(claims.item, weights=w, minlength=cand.n_items)
    joint += dot(n_i[cand.item] * q, np.log(np.maximum(pri, EPS))[cand.cls])
    qc = np.maximum(q, EPS)
    return float(joint - dot(qc, np.log(qc)))
