"""Supervised naive Bayes: source models fitted on items with truth, applied to the rest.

Model (Dawid–Skene with known labels; the benchmark's NBF, calibration notes §5.10): claims
are independent given the truth, so the posterior of candidate c is

    q_ic ∝ π_c · Π_{claims r of i} P_{s_r}(l_r | c) ,

with every parameter counted on the **training items** (items in ``train`` with a truth):

``model="confusion"`` (global scope): P_s(l | c) = (n_s[l, c] + α)/(n_s[·, c] + αK), n_s[l, c]
    the training items of truth c on which s claimed l, α = 1 (Laplace); prior
    π_c = (n_c + 1)/(N + K), N training items, n_c of truth c.
``model="one_coin"`` (any scope; the default under the item scope, where classes are
    item-specific values and a per-class confusion matrix means nothing): s is right with
    a_s = (n_s,right + α)/(n_s + 2α) and otherwise claims one of the item's n_i other
    candidates uniformly; uniform prior over the candidates.

Sources with no training claim fall back to the smoothing alone (α/(αK), resp. a_s = ½).
Nothing is learned from the other items: the fit is out of sample for them, so
``result.score(claims, items=~result.params["train"])`` is an honest accuracy.
"""

from __future__ import annotations

import numpy as np

from core.fusion._em import PairIncidence
from core.fusion.claims import Claims
from core.fusion.result import FusionResult, make_result

__all__ = ["naive_bayes", "random_split", "train_mask"]


def train_mask(claims: Claims, train) -> np.ndarray:
    """``train`` (a boolean item mask, item indices, or a split name) as a mask of items
    with a truth; refuses an empty one."""
    if claims.truth is None:
        raise ValueError("supervised naive Bayes needs a claims table with truth")
    if isinstance(train, str):
        if train not in claims.splits:
            raise ValueError(f"no split named {train!r} (splits: {list(claims.splits)})")
        mask = claims.split == claims.splits.index(train)
    else:
        t = np.asarray(train)
        if t.dtype == bool:
            if t.shape != (claims.n_items,):
                raise ValueError(f"a train mask must have {claims.n_items} entries")
            mask = t.copy()
        else:
            mask = np.zeros(claims.n_items, bool)
            mask[t] = True
    mask &= claims.gold
    if not mask.any():
        raise ValueError("the training split has no item with a truth")
    return mask


def random_split(claims: Claims, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """A training mask holding ``round(fraction × gold items)`` gold items drawn by ``rng``."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    gold = np.flatnonzero(claims.gold)
    k = max(1, int(round(fraction * gold.size)))
    mask = np.zeros(claims.n_items, bool)
    mask[rng.choice(gold, size=k, replace=False)] = True
    return mask


def naive_bayes(claims: Claims, *, train, model: str = "auto", alpha: float = 1.0,
                scope: str | None = None, tie: str = "smallest") -> FusionResult:
    """Fit naive Bayes on the training items and compute every item's posterior.

    Parameters
    ----------
    claims : Claims
    train : bool mask (I,), item indices, or a split name
        Training items (only those with a truth count).
    model : {"auto", "confusion", "one_coin"}
        ``auto``: confusion under the global scope, one_coin under the item scope.
    alpha : float
        Additive (Laplace) smoothing, > 0.
    scope : {"global", "item"}, optional
    tie : {"smallest", "first_seen"}

    Returns
    -------
    FusionResult
        ``params``: ``train`` (I,), ``prior`` (K,), and ``confusion`` (S, K, K) [source,
        claimed, true] or ``accuracy`` (S,).
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be positive, got {alpha!r}")
    mask = train_mask(claims, train)
    cand = claims.candidates(scope)
    if model == "auto":
        model = "confusion" if cand.scope == "global" else "one_coin"
    S, K = claims.n_sources, claims.n_classes
    rows = mask[claims.item]
    truth_r = claims.truth[claims.item[rows]]
    w = claims.row_weight()
    if model == "confusion":
        if cand.scope != "global":
            raise ValueError("model='confusion' needs the global scope (classes shared by "
                             "all items); use model='one_coin'")
        if S * K * K > 2e7:
            raise ValueError(f"{S:,} sources × {K:,}² classes is too large a confusion table; "
                             "use model='one_coin'")
        n = np.zeros((S, K, K))
        np.add.at(n, (claims.source[rows], claims.claim[rows], truth_r), w[rows])
        emit = (n + alpha) / (n.sum(1, keepdims=True) + alpha * K)
        n_c = np.bincount(claims.truth[mask], minlength=K).astype(float)
        prior = (n_c + 1) / (mask.sum() + K)
        inc = PairIncidence(claims, cand, w)
        logit = np.log(prior)[cand.cls] + inc.gather(
            np.log(emit[inc.trip_source, inc.trip_observed, inc.trip_class]))
        params = {"train": mask, "prior": prior, "confusion": emit}
        text = (f"Naive Bayes with a confusion matrix per source (Laplace α = {alpha:g}) and "
                "a smoothed class prior, counted on the training items.")
    elif model == "one_coin":
        right = np.bincount(claims.source[rows], weights=w[rows] * (claims.claim[rows]
                                                                    == truth_r), minlength=S)
        total = np.bincount(claims.source[rows], weights=w[rows], minlength=S)
        acc = (right + alpha) / (total + 2 * alpha)
        n_i = np.maximum(cand.width - 1, 1).astype(float)[claims.item]
        a = acc[claims.source]
        logit = np.bincount(cand.row, weights=w * (np.log(a) - np.log((1 - a) / n_i)),
                            minlength=cand.size)
        params = {"train": mask, "prior": np.full(K, np.nan), "accuracy": acc}
        text = (f"Naive Bayes with one accuracy per source (Laplace α = {alpha:g}), wrong "
                "claims uniform over the other candidates, counted on the training items.")
    else:
        raise ValueError(f"model must be 'auto', 'confusion' or 'one_coin', got {model!r}")
    return make_result("naive_bayes", text, claims, cand, cand.softmax(logit), tie=tie,
                       params=params)
