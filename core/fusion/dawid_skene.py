"""Dawid–Skene: one full confusion matrix per source, fitted by EM, any number of classes.

Model (Dawid and Skene, *Applied Statistics* 28(1), 1979, eq. 2.7): the truth of item i is
c with prior π_c, and source s, given truth c, claims l with probability e_s[l, c]; claims
are independent given the truth, so the posterior of candidate c is

    q_ic ∝ π_c · Π_{claims r of i} e_{s_r}[l_r, c] .

Semantics of crowd-kit 1.4.2's ``DawidSkene`` (read for parity, not copied):

* start: q = the majority-vote shares (0 for unclaimed classes); gold items clamped;
* π = mean of q over items, floored at 1e−10 where it is used (log π);
* M-step: n_s[l, c] = Σ_{claims r of s with l_r = l} q_{i_r c}; every (source, observed
  label) pair the source used is floored at 1e−10 and each column c divided by its sum over
  the source's observed labels (pairs a source never used have no row, and no smoothing);
* E-step: the posterior above in log space, then the gold clamp;
* per round: E-step, π, M-step, then the evidence lower bound per claim
  ELBO = [Σ_r Σ_c q_ic (log e_{s_r}[l_r, c] + log π_c) − Σ_ic q̃ log q̃] / n, with q̃ = q
  floored at 1e−10; stop when it improves by less than ``tol`` (1e−5), at most ``n_iter``
  (100) rounds. Labels are the argmax of the last E-step; ties to the first-seen claim.

``variant="baseline"`` reproduces ``data/conflict/scripts/ds_full.py`` instead (the issue's
.712 on Mozafari and .742 on AdultContent2): the same start, π = mean q + 1e−6, confusion
columns (n_s[l, c] + α)/(Σ_l n_s[l, c] + αK) with α = 0.01 over all K labels, exactly
``n_iter`` rounds with no stopping rule (``converged`` then says whether the last round moved
no posterior by ``tol`` or more), ties to the smallest claim.

Under the item scope (:mod:`core.fusion.claims`) the same formulas run over each item's
claimed values only ("the truth is among the claims"); confusion entries (s, l, c) then
exist only where c is a candidate of an item where s claimed l, and the others count as
the 1e−10 floor in each column's sum.
"""

from __future__ import annotations

import numpy as np

from core.fusion._em import EPS, Gold, PairIncidence, check_gold, check_prior, class_mean
from core.fusion._numeric import dot
from core.fusion.claims import Claims
from core.fusion.result import FusionResult, make_result
from core.fusion.vote import vote_totals

__all__ = ["DENSE_CONFUSION_CAP", "dawid_skene"]

#: Largest S·K² for which ``params["confusion"]`` is a dense (S, K, K) array (8 MB of
#: float64); above it the fit keeps only the observed triples. A fit is cached and shared
#: by every visitor of a server: a dense table of 35 sources × 702 classes was 138 MB, of
#: which 0.1 % was non-zero (the flight day with a 10-minute time tolerance, issue 24).
DENSE_CONFUSION_CAP = 1_000_000


def dawid_skene(claims: Claims, *, variant: str = "crowdkit", scope: str | None = None,
                n_iter: int = 100, tol: float = 1e-5, alpha: float = 0.01, gold=None,
                prior=None, tie: str | None = None) -> FusionResult:
    """Fit Dawid–Skene by EM (crowd-kit semantics; see the module docstring).

    Parameters
    ----------
    claims : Claims
    variant : {"crowdkit", "baseline"}
    scope : {"global", "item"}, optional
        Default: the table's scope.
    n_iter, tol : the iteration cap and the ELBO-per-claim tolerance (crowdkit) or the
        posterior-change tolerance reported by ``converged`` (baseline).
    alpha : float
        The baseline variant's additive smoothing of confusion counts.
    gold : bool mask, indices or True, optional
        Items whose truth is clamped after every E-step (semi-supervised EM).
    prior : array of K floats, optional
        A fixed class prior instead of the learned one.
    tie : {"first_seen", "smallest"}, optional
        Default: first_seen (crowdkit), smallest (baseline).

    Returns
    -------
    FusionResult
        ``params``: ``prior`` (K,), ``confusion`` (S, K, K) indexed [source, claimed, true]
        when S·K² ≤ :data:`DENSE_CONFUSION_CAP` (else the observed triples
        ``confusion_source``, ``confusion_claimed``, ``confusion_true``,
        ``confusion_value``; every absent entry of the dense form is 0), ``accuracy`` (S,)
        = Σ_c π_c e_s[c, c], the model's chance that the source is right on an item drawn
        from the prior.
    """
    if n_iter < 1:
        raise ValueError("n_iter must be at least 1")
    if variant not in ("crowdkit", "baseline"):
        raise ValueError(f"variant must be 'crowdkit' or 'baseline', got {variant!r}")
    if not alpha > 0 and variant == "baseline":
        raise ValueError("the baseline variant needs alpha > 0")
    base = variant == "baseline"
    gold = check_gold(claims, gold)
    prior = check_prior(claims, prior)
    cand = claims.candidates(scope, with_truth=gold is not None)
    clamp = Gold(cand, claims, gold)
    w = claims.row_weight()
    inc = PairIncidence(claims, cand, w)
    n_w = float(w.sum())
    rows_per_item = np.bincount(claims.item, weights=w, minlength=cand.n_items)
    smooth = alpha if base else 0.0

    def learn_prior(q):
        if prior is not None:
            return prior
        return class_mean(q, cand) + 1e-6 if base else class_mean(q, cand)

    q = clamp(cand.normalise(vote_totals(claims, candidates=cand)))
    pri = learn_prior(q)
    counts = inc.scatter(q)
    e = inc.normalise_columns(counts, alpha=smooth)
    trace: list[float] = []
    loss, converged, it = -np.inf, False, 0
    while it < n_iter:
        it += 1
        log_pi = np.log(pri) if base else np.log(np.maximum(pri, EPS))
        q_old = q
        q = clamp(cand.softmax(log_pi[cand.cls] + inc.gather(np.log(e))))
        pri = learn_prior(q)
        counts = inc.scatter(q)
        e = inc.normalise_columns(counts, alpha=smooth)
        log_pi = np.log(pri) if base else np.log(np.maximum(pri, EPS))
        joint = dot(counts, np.log(e)) + dot(rows_per_item[cand.item] * q,
                                                   log_pi[cand.cls])
        qc = np.maximum(q, EPS)
        new = float(joint - dot(qc, np.log(qc))) / n_w
        trace.append(new)
        if base:
            converged = float(np.max(np.abs(q - q_old))) < tol
            continue
        if new - loss < tol:
            converged = True
            break
        loss = new
    params = {"prior": pri, **_confusion(inc, e, pri, claims), "variant": variant}
    if gold is not None:
        params["gold"] = gold
    return make_result(
        "dawid_skene",
        "Dawid–Skene (1979): a full confusion matrix per source, a learned class prior, EM "
        "from the majority vote ("
        + ("ds_full.py baseline: smoothing 0.01, 100 rounds)." if base else
           "crowd-kit DawidSkene semantics: 1e-10 floors, no smoothing)."),
        claims, cand, q, tie=tie or ("smallest" if base else "first_seen"), iterations=it,
        converged=converged, trace=trace,
        objective="evidence lower bound per claim (crowd-kit convention)", params=params)


def _confusion(inc: PairIncidence, e: np.ndarray, pri: np.ndarray, claims: Claims) -> dict:
    out: dict[str, object] = {}
    dense = inc.dense(e, cap=DENSE_CONFUSION_CAP)
    if dense is not None:
        out["confusion"] = dense
    else:
        out.update(confusion_source=inc.trip_source, confusion_claimed=inc.trip_observed,
                   confusion_true=inc.trip_class, confusion_value=e)
    diag = inc.trip_observed == inc.trip_class
    out["accuracy"] = np.bincount(inc.trip_source[diag],
                                  weights=pri[inc.trip_class[diag]] * e[diag],
                                  minlength=claims.n_sources)
    return out
