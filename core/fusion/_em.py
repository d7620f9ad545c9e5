"""Pieces shared by the EM resolvers: gold clamping, priors, the pair incidence.

The :class:`PairIncidence` maps a table indexed by (source, claimed class, candidate class)
*triples* to candidates and back, so a confusion-matrix model has one code path for both
scopes:

* ``gather(t)[cand] = Σ_{claims r of cand's item} w_r · t[(source_r, claim_r, class(cand))]``
  (the E-step's log-likelihood sum);
* ``scatter(q)[triple] = Σ_{claims r with (source_r, claim_r)} w_r · q[(item_r, class)]``
  (the M-step's expected confusion counts).

Under the global scope the triples are every (pair, class), and both maps are one sparse
matrix product with the ``(I × pairs)`` incidence; under the item scope only the triples
whose class is a candidate of some item where the pair occurs exist, and both maps are one
sparse matrix–vector product over the (claim, candidate) edges.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from core.fusion.claims import Candidates, Claims

__all__ = ["EPS", "Gold", "PairIncidence", "check_gold", "check_prior", "class_mean"]

#: crowd-kit's floor on probabilities (``_EPS = 10**-10``) in its EM aggregators.
EPS = 1e-10


def check_gold(claims: Claims, gold) -> np.ndarray | None:
    """``gold`` as a boolean item mask of items with a truth (None: no clamping)."""
    if gold is None or gold is False:
        return None
    if claims.truth is None:
        raise ValueError("gold labels need a claims table with truth")
    if gold is True:
        mask = claims.gold.copy()
    else:
        mask = np.zeros(claims.n_items, bool)
        g = np.asarray(gold)
        if g.dtype == bool:
            if g.shape != (claims.n_items,):
                raise ValueError(f"a gold mask must have {claims.n_items} entries")
            mask = g.copy()
        else:
            mask[g] = True
    if (mask & ~claims.gold).any():
        raise ValueError("gold items must have a known truth")
    return mask if mask.any() else None


def check_prior(claims: Claims, prior) -> np.ndarray | None:
    if prior is None:
        return None
    p = np.asarray(prior, float)
    if p.shape != (claims.n_classes,) or (p < 0).any() or not np.isclose(p.sum(), 1):
        raise ValueError(f"prior must be {claims.n_classes} non-negative numbers summing to 1")
    return p


class Gold:
    """Clamping of gold items inside EM (crowd-kit's ``true_labels`` of ``DawidSkene``):
    after every E-step, a gold item's posterior is one-hot on its truth."""

    def __init__(self, cand: Candidates, claims: Claims, gold: np.ndarray | None):
        self.mask = gold
        if gold is None:
            return
        g = np.flatnonzero(gold)
        self.cand = cand.lookup(g, claims.truth[g])
        if (self.cand < 0).any():
            raise ValueError("a gold truth is no candidate; build the candidates with_truth")
        self.rows = gold[cand.item]

    def __call__(self, q: np.ndarray) -> np.ndarray:
        if self.mask is None:
            return q
        q = q.copy()
        q[self.rows] = 0.0
        q[self.cand] = 1.0
        return q


def class_mean(q: np.ndarray, cand: Candidates) -> np.ndarray:
    """Mean posterior of each class over items (crowd-kit's ``probas.mean()``), (K,)."""
    return np.bincount(cand.cls, weights=q, minlength=cand.n_classes) / cand.n_items


class PairIncidence:
    """The (claim × candidate) incidence keyed by (source, claim, class) triples."""

    def __init__(self, claims: Claims, cand: Candidates, weight: np.ndarray | None = None):
        K, n = claims.n_classes, claims.n_claims
        w = claims.row_weight() if weight is None else weight
        pair_code = claims.source * K + claims.claim
        pairs, pair_of_row = np.unique(pair_code, return_inverse=True)
        self.n_pairs = pairs.size
        self.pair_source, self.pair_class = pairs // K, pairs % K
        self.scope, self.K, self.n_items = cand.scope, K, cand.n_items
        self.n_sources = claims.n_sources
        if cand.scope == "global":
            self.A = sp.csr_array((w, (claims.item, pair_of_row)),
                                  shape=(cand.n_items, self.n_pairs))
            self.AT = self.A.T.tocsr()
            self.trip_pair = np.repeat(np.arange(self.n_pairs), K)
            self.trip_class = np.tile(np.arange(K), self.n_pairs)
        else:
            width = cand.width[claims.item]
            row_rep = np.repeat(np.arange(n), width)
            first = np.cumsum(width) - width
            e_cand = cand.ptr[claims.item][row_rep] + (np.arange(row_rep.size)
                                                       - np.repeat(first, width))
            code = pair_of_row[row_rep].astype(np.int64) * K + cand.cls[e_cand]
            trips, e_trip = np.unique(code, return_inverse=True)
            self.trip_pair, self.trip_class = trips // K, trips % K
            self.G = sp.csr_array((w[row_rep], (e_cand, e_trip)),
                                  shape=(cand.size, trips.size))
            self.GT = self.G.T.tocsr()
        self.n_trip = self.trip_pair.size
        self.trip_source = self.pair_source[self.trip_pair]
        self.trip_observed = self.pair_class[self.trip_pair]
        if cand.scope == "global":  # every (pair, class) exists: sum pairs per source
            self.M = sp.csr_array((np.ones(self.n_pairs), (self.pair_source,
                                                           np.arange(self.n_pairs))),
                                  shape=(claims.n_sources, self.n_pairs))
        else:  # (source, true class) cells, for normalising confusion columns
            sc = self.trip_source * K + self.trip_class
            cells, self.trip_cell = np.unique(sc, return_inverse=True)
            cell_source = cells // K
            pairs_per_source = np.bincount(self.pair_source, minlength=claims.n_sources)
            #: pairs of the cell's source with no triple in the cell (their count is 0)
            self.cell_missing = pairs_per_source[cell_source] - np.bincount(self.trip_cell)

    def gather(self, t: np.ndarray) -> np.ndarray:
        if self.scope == "global":
            return (self.A @ t.reshape(self.n_pairs, self.K)).ravel()
        return self.G @ t

    def scatter(self, q: np.ndarray) -> np.ndarray:
        if self.scope == "global":
            return (self.AT @ q.reshape(self.n_items, self.K)).ravel()
        return self.GT @ q

    def normalise_columns(self, counts: np.ndarray, floor: float = EPS,
                          alpha: float = 0.0) -> np.ndarray:
        """The confusion M-step, per triple. With ``alpha = 0`` (crowd-kit's): counts floored
        at ``floor`` and each (source, true class) column divided by its sum over the
        source's observed labels (a used pair with no triple counts as ``floor``). With
        ``alpha > 0`` (the baseline script's smoothing): (count + α) / (column sum + α·K),
        every one of the K labels getting α."""
        if alpha > 0:
            if self.scope == "global":
                tot = self.M @ counts.reshape(self.n_pairs, self.K)
                return ((counts.reshape(self.n_pairs, self.K) + alpha)
                        / (tot[self.pair_source] + alpha * self.K)).ravel()
            tot = np.bincount(self.trip_cell, weights=counts) + alpha * self.K
            return (counts + alpha) / tot[self.trip_cell]
        clipped = np.maximum(counts, floor)
        if self.scope == "global":
            c2 = clipped.reshape(self.n_pairs, self.K)
            return (c2 / (self.M @ c2)[self.pair_source]).ravel()
        tot = np.bincount(self.trip_cell, weights=clipped) + floor * self.cell_missing
        return clipped / tot[self.trip_cell]

    def dense(self, values: np.ndarray, *, cap: int) -> np.ndarray | None:
        """Triples as an ``(S, K_observed, K_true)`` array (0 where absent), or None when
        ``S·K²`` exceeds ``cap`` (the caller's bound on what it keeps dense)."""
        if self.n_sources * self.K * self.K > cap:
            return None
        out = np.zeros((self.n_sources, self.K, self.K))
        out[self.trip_source, self.trip_observed, self.trip_class] = values
        return out
