"""Majority vote and weighted vote, with stated tie rules.

Model: no model of the sources; each claim is one vote (times its claim weight and its
source's weight). The posterior of a candidate is its share of the item's votes (crowd-kit's
``MajorityVote.probas_`` convention: normalised counts, 0 for unclaimed classes under the
global scope), and the confidence is the winning share.

Tie rules (exact ties of the vote totals)
----------------------------------------
* ``"smallest"`` — the lexicographically smallest claim (class code order; the baseline
  script ``data/conflict/scripts/metrics.py``: MV .818 on Flight, 21 tied items);
* ``"first_seen"`` — the claim whose first row in the table comes first: crowd-kit 1.4.2's
  ``MajorityVote`` takes ``idxmax`` over label columns built in order of first appearance
  (``value_counts().unstack()`` under pandas 3), giving .812 on Flight;
* ``"abstain"`` — no answer (label −1, confidence 0) on a tie;
* ``"random"`` — uniformly among the tied claims, from an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from core.fusion.claims import Candidates, Claims
from core.fusion.result import FusionResult, make_result

__all__ = ["TIE_RULES", "majority_vote", "vote_totals", "weighted_vote"]

TIE_RULES = ("smallest", "first_seen", "abstain", "random")


def vote_totals(claims: Claims, source_weight: np.ndarray | None = None, *,
                scope: str | None = None, candidates: Candidates | None = None) -> np.ndarray:
    """Σ of claim weight × source weight per candidate (a ``np.bincount``), shape (C,),
    over ``candidates`` (default: ``claims.candidates(scope)``)."""
    cand = claims.candidates(scope) if candidates is None else candidates
    w = claims.row_weight()
    if source_weight is not None:
        source_weight = np.asarray(source_weight, float)
        if source_weight.shape != (claims.n_sources,) or not np.all(np.isfinite(source_weight)):
            raise ValueError(f"source weights must be {claims.n_sources} finite numbers")
        w = w * source_weight[claims.source]
    return np.bincount(cand.row, weights=w, minlength=cand.size)


def _vote(claims: Claims, votes: np.ndarray, scope, tie: str, rng, method: str, model: str,
          params: dict) -> FusionResult:
    cand = claims.candidates(scope)
    posterior = cand.normalise(votes)
    top = np.repeat(cand.segment_max(votes), cand.width)
    is_top = votes == top
    n_top = cand.segment_sum(is_top.astype(np.int64))
    tied = n_top > 1
    params = {**params, "votes": votes, "tied": tied}
    if tie in ("smallest", "first_seen"):
        return make_result(method, model, claims, cand, posterior, tie=tie, params=params,
                           score=votes)
    if tie == "abstain":
        res = make_result(method, model, claims, cand, posterior, tie="smallest",
                          params=params, score=votes)
        labels = np.where(tied, -1, res.labels)
        conf = np.where(tied, 0.0, res.confidence)
    elif tie == "random":
        if not isinstance(rng, np.random.Generator):
            raise ValueError("tie='random' needs rng, a numpy.random.Generator")
        u = rng.random(cand.size)
        order = np.lexsort((u, -votes, cand.item))
        best = order[cand.ptr[:-1]]
        labels, conf = cand.cls[best], posterior[best]
        res = make_result(method, model, claims, cand, posterior, params=params, score=votes)
    else:
        raise ValueError(f"tie must be one of {TIE_RULES}, got {tie!r}")
    return FusionResult(method=method, model=model + f" Ties: {tie}.", labels=labels,
                        confidence=conf, posterior=posterior, candidates=cand,
                        classes=claims.classes, params=dict(res.params))


def majority_vote(claims: Claims, *, tie: str = "smallest", scope: str | None = None,
                  rng: np.random.Generator | None = None) -> FusionResult:
    """Plurality vote per item, ties by ``tie`` (see the module docstring).

    ``params["tied"]`` flags the items whose top vote is shared.

    Examples
    --------
    >>> from core.fusion.importer import claims_from_frame
    >>> import pandas as pd
    >>> t = claims_from_frame(pd.DataFrame({"item": ["a", "a", "a", "b", "b"],
    ...     "source": ["x", "y", "z", "x", "y"], "claim": ["1", "2", "2", "3", "1"]})).claims
    >>> r = majority_vote(t)
    >>> list(r.label_names()), [round(float(c), 3) for c in r.confidence]
    (['2', '1'], [0.667, 0.5])
    """
    return _vote(claims, vote_totals(claims, scope=scope), scope, tie, rng, "majority_vote",
                 "Plurality of claims (claim weights applied); posterior = vote share.",
                 {})


def weighted_vote(claims: Claims, source_weight: np.ndarray, *, tie: str = "smallest",
                  scope: str | None = None,
                  rng: np.random.Generator | None = None) -> FusionResult:
    """Vote with a given weight per source (crowd-kit's ``MajorityVote(skills)``): the
    posterior is each candidate's share of the item's total weight (weights must be ≥ 0)."""
    sw = np.asarray(source_weight, float)
    if sw.shape == (claims.n_sources,) and (sw < 0).any():
        raise ValueError("source weights must be non-negative for a weighted vote")
    votes = vote_totals(claims, sw, scope=scope)
    return _vote(claims, votes, scope, tie, rng, "weighted_vote",
                 "Sum of source weights per claim; posterior = weight share.",
                 {"source_weight": sw})
