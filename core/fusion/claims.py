"""The claims table every resolver takes: integer codes, names, and a candidate layout.

Encoding
--------
A table of ``n`` claims is three integer arrays of length ``n``: ``item`` (0 … I−1),
``source`` (0 … S−1) and ``claim`` (0 … K−1), with the names in ``items``, ``sources`` and
``classes``. Each name table is **sorted** (Python string order, i.e. code points), so class
code order is the lexicographic order of the claims as strings: "the smallest claim" is the
smallest code. Rows keep the order of the input table (crowd-kit's majority-vote tie rule
depends on it, see :meth:`Claims.first_seen_rank`).

``truth`` (optional) is one class code per item, −1 where unknown; a truth value that no
source claims is still a class (so ``classes`` is the union of claims and truths). ``split``
(optional) is one code per item into ``splits`` (−1: none); ``weight`` (optional) is one
non-negative weight per claim.

One class table, two scopes
---------------------------
Claims are categorical, and the class table is always global. What differs between a crowd
data set (every item has the same K labels) and a truth-discovery one (each flight has its own
candidate times) is which classes a resolver may answer for an item, the item's
**candidates**:

* ``scope="global"``: every class is a candidate for every item (crowd labels); candidate
  ``i·K + c`` is (item i, class c), so a posterior vector reshapes to an ``(I, K)`` matrix.
* ``scope="item"``: the candidates of an item are the classes claimed on it (truth
  discovery: "the truth is among the claims"); candidates are sorted by item, then class.

``scope="auto"`` (the default at construction) picks ``"global"`` when ``K ≤``
:data:`GLOBAL_MAX_CLASSES` and ``"item"`` otherwise; every resolver can override it.
:class:`Candidates` holds either layout as flat arrays, so each resolver has one code path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["GLOBAL_MAX_CLASSES", "SCOPES", "Candidates", "Claims", "CodeNames"]

#: The scopes of a class (see the module docstring).
SCOPES = ("global", "item")
#: ``scope="auto"`` is global up to this many classes, per item above it.
GLOBAL_MAX_CLASSES = 32


def _ro(a, dtype) -> np.ndarray:
    out = np.ascontiguousarray(a, dtype=dtype)
    if out is a:
        out = out.copy()
    out.setflags(write=False)
    return out


def _row_reduce(ufunc, z: np.ndarray) -> np.ndarray:
    """``ufunc.reduce(z, axis=1)``; for a few columns, column by column (numpy's reduction
    along a short trailing axis is several times slower than K elementwise passes)."""
    if z.shape[1] > 16:
        return ufunc.reduce(z, axis=1)
    out = z[:, 0].copy()
    for k in range(1, z.shape[1]):
        ufunc(out, z[:, k], out=out)
    return out


class CodeNames(Sequence):
    """The names "0", "1", … (zero-padded to one width, so sorted) of ``n`` codes, made on
    demand: a million-row table built from codes (:meth:`Claims.from_codes`) does not
    format a million strings it may never show."""

    __slots__ = ("_n", "_width")

    def __init__(self, n: int):
        self._n = int(n)
        self._width = len(str(max(self._n - 1, 0)))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        i = int(i)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return f"{i:0{self._width}d}"

    def index(self, value, start: int = 0, stop: int | None = None) -> int:
        stop = self._n if stop is None else stop
        if isinstance(value, str) and len(value) == self._width and value.isdigit() \
                and start <= int(value) < stop:
            return int(value)
        raise ValueError(f"{value!r} is not in the names")

    def __contains__(self, value) -> bool:
        try:
            self.index(value)
        except ValueError:
            return False
        return True

    def __eq__(self, other) -> bool:
        if isinstance(other, CodeNames):
            return self._n == other._n
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(("CodeNames", self._n))

    def __repr__(self) -> str:
        return f"CodeNames({self._n})"


@dataclass(frozen=True, eq=False)
class Candidates:
    """The candidate answers of every item, as flat arrays (one layout for both scopes).

    Attributes
    ----------
    scope : {"global", "item"}
    item, cls : ndarray of int64, shape (C,)
        Item and class of each candidate, sorted by item then class; the candidates of item
        ``i`` are ``ptr[i]:ptr[i+1]`` (never empty).
    ptr : ndarray of int64, shape (I + 1,)
    row : ndarray of int64, shape (n,)
        The candidate of each claim's own value.
    n_classes : int
    """

    scope: str
    item: np.ndarray
    cls: np.ndarray
    ptr: np.ndarray
    row: np.ndarray
    n_classes: int

    @property
    def size(self) -> int:
        return int(self.item.size)

    @property
    def n_items(self) -> int:
        return int(self.ptr.size - 1)

    @property
    def width(self) -> np.ndarray:
        """Number of candidates of each item, shape (I,)."""
        return np.diff(self.ptr)

    def lookup(self, item, cls) -> np.ndarray:
        """Candidate index of (item, class) pairs, −1 where the class is no candidate."""
        item = np.asarray(item, np.int64)
        cls = np.asarray(cls, np.int64)
        if self.scope == "global":
            return np.where((cls >= 0) & (cls < self.n_classes), item * self.n_classes + cls, -1)
        codes = self.item * self.n_classes + self.cls
        want = item * self.n_classes + cls
        pos = np.searchsorted(codes, want).clip(0, max(codes.size - 1, 0))
        ok = (codes.size > 0) & (codes[pos] == want) & (cls >= 0)
        return np.where(ok, pos, -1)

    def segment_max(self, x: np.ndarray) -> np.ndarray:
        """Per-item maximum of a candidate vector, shape (I,)."""
        if self.scope == "global":
            return _row_reduce(np.maximum, x.reshape(self.n_items, self.n_classes))
        return np.maximum.reduceat(x, self.ptr[:-1])

    def segment_sum(self, x: np.ndarray) -> np.ndarray:
        """Per-item sum of a candidate vector, shape (I,)."""
        if self.scope == "global":
            return _row_reduce(np.add, x.reshape(self.n_items, self.n_classes))
        return np.add.reduceat(x, self.ptr[:-1])

    def softmax(self, logits: np.ndarray, *, return_lse: bool = False):
        """Normalised ``exp(logits)`` within each item (max-shifted, so no overflow); with
        ``return_lse`` also each item's log Σ exp(logits), shape (I,)."""
        if self.scope == "global":
            z = logits.reshape(self.n_items, self.n_classes)
            m = _row_reduce(np.maximum, z)
            e = np.exp(z - m[:, None])
            tot = _row_reduce(np.add, e)
            q = (e / tot[:, None]).ravel()
        else:
            m = self.segment_max(logits)
            e = np.exp(logits - np.repeat(m, self.width))
            tot = self.segment_sum(e)
            q = e / np.repeat(tot, self.width)
        return (q, m + np.log(tot)) if return_lse else q

    def normalise(self, x: np.ndarray) -> np.ndarray:
        """``x`` divided by its per-item sum (items summing to 0 stay 0)."""
        tot = np.repeat(self.segment_sum(x), self.width)
        return np.divide(x, tot, out=np.zeros_like(x, dtype=float), where=tot > 0)

    def argmax(self, x: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Per item, the candidate with the largest ``x``; exact ties go to the lowest
        ``rank[class]`` (a permutation of the classes). Returns candidate indices (I,)."""
        top = np.repeat(self.segment_max(x), self.width)
        big = np.iinfo(np.int64).max
        r = np.where(x == top, np.asarray(rank, np.int64)[self.cls], big)
        if self.scope == "global":
            best = r.reshape(self.n_items, self.n_classes).argmin(1)  # (short rows: fine)
            return np.arange(self.n_items) * self.n_classes + best
        best_rank = np.minimum.reduceat(r, self.ptr[:-1])
        inv = np.empty(self.n_classes, np.int64)
        inv[np.asarray(rank, np.int64)] = np.arange(self.n_classes)
        return self.lookup(np.arange(self.n_items), inv[best_rank])

    def dense(self, x: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """A candidate vector as an ``(I, K)`` matrix (``fill`` where no candidate)."""
        if self.scope == "global":
            return x.reshape(self.n_items, self.n_classes).copy()
        out = np.full((self.n_items, self.n_classes), fill, dtype=np.result_type(x, fill))
        out[self.item, self.cls] = x
        return out


@dataclass(frozen=True, eq=False)
class Claims:
    """An integer-coded table of categorical claims (see the module docstring).

    Parameters
    ----------
    item, source, claim : array-like of int, shape (n,)
    items, sources, classes : sequence of str
        Names, each sorted and unique (a tuple, or :class:`CodeNames`).
    truth : array-like of int, shape (I,), optional
        Class code of each item's truth, −1 where unknown.
    split, splits : array-like of int (I,) and sequence of str, optional
        Split code of each item (−1: none) into the split names.
    weight : array-like of float, shape (n,), optional
        Non-negative claim weights (1 when absent).
    scope : {"auto", "global", "item"}
        The default scope of the candidates (``auto``: global when K ≤ 32).

    Raises
    ------
    ValueError
        One line: lengths differ, a code is out of range, a name table is not sorted and
        unique, an (item, source) pair repeats (naming the row), an item has no claim.
    """

    item: np.ndarray
    source: np.ndarray
    claim: np.ndarray
    items: tuple[str, ...]
    sources: tuple[str, ...]
    classes: tuple[str, ...]
    truth: np.ndarray | None = None
    split: np.ndarray | None = None
    splits: tuple[str, ...] = ()
    weight: np.ndarray | None = None
    scope: str = "auto"
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("items", "sources", "classes", "splits"):
            v = getattr(self, name)
            if not (isinstance(v, CodeNames) or isinstance(v, tuple)
                    and all(type(x) is str for x in v)):
                set_(self, name, tuple(str(x) for x in v))
        for name in ("item", "source", "claim"):
            set_(self, name, _ro(getattr(self, name), np.int64))
        n = self.item.size
        if self.item.ndim != 1 or self.source.shape != (n,) or self.claim.shape != (n,):
            raise ValueError("item, source and claim must be 1-D arrays of one length")
        if n == 0:
            raise ValueError("a claims table needs at least one claim")
        for codes, names, what in ((self.item, self.items, "item"),
                                   (self.source, self.sources, "source"),
                                   (self.claim, self.classes, "claim")):
            if codes.min() < 0 or codes.max() >= len(names):
                bad = int(np.flatnonzero((codes < 0) | (codes >= len(names)))[0])
                raise ValueError(f"row {bad + 1}: {what} code {codes[bad]} is outside "
                                 f"0..{len(names) - 1}")
            if not isinstance(names, CodeNames) and not all(
                    a < b for a, b in zip(names, names[1:], strict=False)):  # sorted, unique
                raise ValueError(f"the {what} names must be sorted and unique")
        I, S = len(self.items), len(self.sources)
        key = self.item * S + self.source
        srt = np.sort(key)  # fast; the stable argsort only runs to name a duplicate
        if (srt[1:] == srt[:-1]).any():
            order = np.argsort(key, kind="stable")
            dup = np.flatnonzero(key[order][1:] == key[order][:-1])
            first, again = int(order[dup[0]]), int(order[dup[0] + 1])
            raise ValueError(f"row {again + 1}: source {self.sources[self.source[again]]!r} "
                             f"already claimed item {self.items[self.item[again]]!r} at row "
                             f"{first + 1}")
        per_item = np.bincount(self.item, minlength=I)
        if (per_item == 0).any():
            raise ValueError(f"item {self.items[int(np.argmin(per_item))]!r} has no claim")
        if self.truth is not None:
            set_(self, "truth", _ro(self.truth, np.int64))
            if self.truth.shape != (I,) or self.truth.min() < -1 or \
                    self.truth.max() >= len(self.classes):
                raise ValueError(f"truth must hold {I} class codes (−1: unknown)")
        if self.split is not None:
            set_(self, "split", _ro(self.split, np.int64))
            if self.split.shape != (I,) or self.split.min() < -1 or \
                    self.split.max() >= len(self.splits):
                raise ValueError(f"split must hold {I} codes into splits (−1: none)")
        if self.weight is not None:
            set_(self, "weight", _ro(self.weight, np.float64))
            if self.weight.shape != (n,) or not np.all(np.isfinite(self.weight)) or \
                    (self.weight < 0).any():
                bad = np.flatnonzero(~np.isfinite(self.weight) | (self.weight < 0))
                where = f"row {int(bad[0]) + 1}: " if bad.size else ""
                raise ValueError(f"{where}weights must be {n} finite non-negative numbers")
        set_(self, "scope", self._resolve(self.scope))

    @classmethod
    def from_codes(cls, item, source, claim, *, n_items: int, n_sources: int,
                   n_classes: int, truth=None, scope: str = "auto") -> Claims:
        """A table from integer codes alone; names are the zero-padded codes (so sorted),
        made on demand (:class:`CodeNames`).

        Examples
        --------
        >>> t = Claims.from_codes([0, 0, 1], [0, 1, 0], [1, 1, 0], n_items=2, n_sources=2,
        ...                       n_classes=12)
        >>> t.classes, t.classes[11], tuple(t.classes[:3])
        (CodeNames(12), '11', ('00', '01', '02'))
        """
        return cls(item=item, source=source, claim=claim, items=CodeNames(n_items),
                   sources=CodeNames(n_sources), classes=CodeNames(n_classes), truth=truth,
                   scope=scope)

    # -- sizes ------------------------------------------------------------------------------
    @property
    def n_claims(self) -> int:
        return int(self.item.size)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_sources(self) -> int:
        return len(self.sources)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def has_truth(self) -> bool:
        return self.truth is not None and bool((self.truth >= 0).any())

    @property
    def gold(self) -> np.ndarray:
        """Items with a known truth, boolean (I,)."""
        if self.truth is None:
            return np.zeros(self.n_items, bool)
        return self.truth >= 0

    def claims_per_item(self) -> np.ndarray:
        return np.bincount(self.item, minlength=self.n_items)

    def items_per_source(self) -> np.ndarray:
        return np.bincount(self.source, minlength=self.n_sources)

    def row_weight(self) -> np.ndarray:
        """The claim weights, ones when the table has none."""
        return np.ones(self.n_claims) if self.weight is None else self.weight

    # -- layout -----------------------------------------------------------------------------
    def _resolve(self, scope: str | None) -> str:
        if scope is None:
            return self.scope
        if scope == "auto":
            return "global" if len(self.classes) <= GLOBAL_MAX_CLASSES else "item"
        if scope not in SCOPES:
            raise ValueError(f"scope must be 'auto', 'global' or 'item', got {scope!r}")
        return scope

    def candidates(self, scope: str | None = None, *, with_truth: bool = False) -> Candidates:
        """The candidate layout for ``scope`` (default: the table's own).

        ``with_truth`` adds each known truth to its item's candidates under the item scope
        (needed to clamp gold items; without it a truth nobody claims is no candidate).
        """
        scope = self._resolve(scope)
        key = (scope, bool(with_truth) and scope == "item" and self.truth is not None)
        if key not in self._cache:
            self._cache[key] = self._build_candidates(*key)
        return self._cache[key]

    def _build_candidates(self, scope: str, with_truth: bool) -> Candidates:
        I, K = self.n_items, self.n_classes
        if scope == "global":
            item = np.repeat(np.arange(I, dtype=np.int64), K)
            cls = np.tile(np.arange(K, dtype=np.int64), I)
            ptr = np.arange(I + 1, dtype=np.int64) * K
            row = self.item * K + self.claim
        else:
            codes = self.item * K + self.claim
            if with_truth:
                g = np.flatnonzero(self.truth >= 0)
                codes_all = np.concatenate([codes, g * K + self.truth[g]])
            else:
                codes_all = codes
            uniq = np.unique(codes_all)
            item, cls = uniq // K, uniq % K
            ptr = np.searchsorted(item, np.arange(I + 1))
            row = np.searchsorted(uniq, codes)
        return Candidates(scope, _ro(item, np.int64), _ro(cls, np.int64), _ro(ptr, np.int64),
                          _ro(row, np.int64), K)

    def first_seen_rank(self) -> np.ndarray:
        """Rank of each class by the row where it is first claimed (crowd-kit's column
        order); classes only seen as truths come after, in code order. Shape (K,)."""
        K = self.n_classes
        first = np.full(K, self.n_claims, np.int64)
        np.minimum.at(first, self.claim, np.arange(self.n_claims))
        order = np.lexsort((np.arange(K), first))
        rank = np.empty(K, np.int64)
        rank[order] = np.arange(K)
        return rank

    def tie_rank(self, tie: str) -> np.ndarray:
        """The class ranks of a deterministic tie rule: ``"smallest"`` (code order =
        lexicographic) or ``"first_seen"`` (crowd-kit's, :meth:`first_seen_rank`)."""
        if tie == "smallest":
            return np.arange(self.n_classes, dtype=np.int64)
        if tie == "first_seen":
            return self.first_seen_rank()
        raise ValueError(f"tie must be 'smallest' or 'first_seen', got {tie!r}")

    # -- derived tables ---------------------------------------------------------------------
    def replace(self, **changes) -> Claims:
        """A new table with some fields replaced (validated again)."""
        fields = dict(item=self.item, source=self.source, claim=self.claim, items=self.items,
                      sources=self.sources, classes=self.classes, truth=self.truth,
                      split=self.split, splits=self.splits, weight=self.weight,
                      scope=self.scope)
        fields.update(changes)
        return Claims(**fields)

    def subset_rows(self, keep: np.ndarray) -> Claims:
        """The claims where ``keep`` (boolean, shape (n,)) holds, with every name table and
        code kept (a source without claims stays, with no rows). Each item must keep one."""
        keep = np.asarray(keep, bool)
        if keep.shape != (self.n_claims,):
            raise ValueError(f"keep must be a boolean mask of {self.n_claims} rows")
        w = None if self.weight is None else self.weight[keep]
        return self.replace(item=self.item[keep], source=self.source[keep],
                            claim=self.claim[keep], weight=w)

    def with_truth_known(self, items: np.ndarray) -> np.ndarray:
        """``items`` (boolean mask or indices) restricted to items with a truth, as a mask."""
        mask = np.zeros(self.n_items, bool)
        mask[np.asarray(items)] = True
        return mask & self.gold

    def to_frame(self) -> pd.DataFrame:
        """The long table (strings), columns item, source, claim[, truth, split, weight]."""
        out = {"item": np.asarray(self.items, object)[self.item],
               "source": np.asarray(self.sources, object)[self.source],
               "claim": np.asarray(self.classes, object)[self.claim]}
        if self.truth is not None:
            names = np.asarray((*self.classes, ""), object)
            out["truth"] = names[self.truth][self.item]
        if self.split is not None:
            names = np.asarray((*self.splits, ""), object)
            out["split"] = names[self.split][self.item]
        if self.weight is not None:
            out["weight"] = self.weight
        return pd.DataFrame(out)

    def accuracy(self, labels: np.ndarray, items: np.ndarray | None = None) -> float:
        """Share of gold items (within ``items``, a mask) whose label equals the truth."""
        if self.truth is None:
            raise ValueError("this claims table has no truth")
        mask = self.gold if items is None else self.gold & np.asarray(items, bool)
        if not mask.any():
            raise ValueError("no item with a known truth to score")
        return float(np.mean(np.asarray(labels)[mask] == self.truth[mask]))

    @staticmethod
    def names(values: Sequence[str]) -> tuple[str, ...]:
        """Sorted unique names (the order every name table uses)."""
        return tuple(sorted({str(v) for v in values}))
