"""Seeded synthetic claims tables (benchmarks, property tests) and exact copies of sources.

Generating process of :func:`synthetic_claims`: truths drawn from ``prior`` (uniform by
default); source accuracies a_s ~ Beta(``accuracy_beta``) (or given); each item gets
``claims_per_item`` distinct sources drawn uniformly; a source is right with probability a_s,
and otherwise claims a wrong class drawn from its own error profile, a Dirichlet(1, …, 1)
draw over the K − 1 wrong classes per true class (so confusion matrices are not one-coin).
All randomness comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import numpy as np

from core.fusion.claims import Claims

__all__ = ["add_copies", "synthetic_claims"]


def _names(prefix: str, n: int) -> tuple[str, ...]:
    width = len(str(max(n - 1, 0)))
    return tuple(f"{prefix}{i:0{width}d}" for i in range(n))


def _distinct_sources(rng, n_items: int, n_sources: int, k: int) -> np.ndarray:
    """``k`` distinct sources per item (rejection of rows with a repeat)."""
    out = rng.integers(0, n_sources, size=(n_items, k))
    while True:
        srt = np.sort(out, axis=1)
        bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(1))
        if bad.size == 0:
            return out
        out[bad] = rng.integers(0, n_sources, size=(bad.size, k))


def synthetic_claims(rng: np.random.Generator, *, n_items: int, n_sources: int,
                     n_classes: int, claims_per_item: int,
                     accuracy: np.ndarray | None = None, accuracy_beta=(4.0, 2.0),
                     prior: np.ndarray | None = None, scope: str = "global") -> Claims:
    """A synthetic table with truth (module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
    n_items, n_sources, n_classes, claims_per_item : int
    accuracy : array of ``n_sources`` accuracies, optional
        Default: drawn from Beta(``accuracy_beta``).
    prior : array of ``n_classes`` probabilities, optional
    scope : the table's scope

    Examples
    --------
    >>> t = synthetic_claims(np.random.default_rng(0), n_items=5, n_sources=4, n_classes=3,
    ...                      claims_per_item=2)
    >>> t.n_claims, t.n_items, t.classes
    (10, 5, ('c0', 'c1', 'c2'))
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    if not 1 <= claims_per_item <= n_sources:
        raise ValueError("claims_per_item must be between 1 and n_sources")
    if n_classes < 2 or n_items < 1:
        raise ValueError("need at least 2 classes and 1 item")
    K = n_classes
    truth = rng.choice(K, size=n_items, p=prior)
    if accuracy is None:
        acc = rng.beta(accuracy_beta[0], accuracy_beta[1], size=n_sources)
    else:
        acc = np.asarray(accuracy, float)
        if acc.shape != (n_sources,) or (acc < 0).any() or (acc > 1).any():
            raise ValueError(f"accuracy must be {n_sources} numbers in [0, 1]")
    src = _distinct_sources(rng, n_items, n_sources, claims_per_item).ravel()
    item = np.repeat(np.arange(n_items), claims_per_item)
    t = truth[item]
    right = rng.random(src.size) < acc[src]
    # error profile: per (source, true class) a distribution over the K − 1 wrong classes
    profile = rng.dirichlet(np.ones(K - 1), size=(n_sources, K)).cumsum(-1)
    u = rng.random(src.size)
    j = (u[:, None] > profile[src, t]).sum(1).clip(max=K - 2)
    wrong = j + (j >= t)  # skip the true class
    claim = np.where(right, t, wrong)
    return Claims(item=item, source=src, claim=claim, items=_names("i", n_items),
                  sources=_names("s", n_sources), classes=_names("c", K), truth=truth,
                  scope=scope)


def add_copies(claims: Claims, source: int, k: int) -> Claims:
    """``claims`` plus ``k`` exact copies of ``source`` (named ``<name>~copy<j>``), each
    claiming what the source claims on every item it covers."""
    if k < 0:
        raise ValueError("k must be non-negative")
    rows = np.flatnonzero(claims.source == source)
    name = claims.sources[source]
    new_names = [f"{name}~copy{j + 1}" for j in range(k)]
    sources = tuple(sorted(set(claims.sources) | set(new_names)))
    remap = np.array([sources.index(s) for s in claims.sources])
    copy_codes = [sources.index(n) for n in new_names]
    item = np.concatenate([claims.item, np.tile(claims.item[rows], k)])
    src = np.concatenate([remap[claims.source], np.repeat(copy_codes, rows.size)])
    claim = np.concatenate([claims.claim, np.tile(claims.claim[rows], k)])
    weight = None if claims.weight is None else np.concatenate(
        [claims.weight, np.tile(claims.weight[rows], k)])
    return claims.replace(item=item, source=src, claim=claim, sources=sources, weight=weight)
