"""The one result object of every resolver.

A :class:`FusionResult` carries, per item, the chosen class (``labels``; −1 = abstained) and
its ``confidence`` (the posterior of the chosen answer), the full ``posterior`` over the
item's candidates (see :class:`core.fusion.claims.Candidates`), and the fit: iterations,
convergence, the objective's trace and the model's fitted parameters (source accuracies,
confusion matrices, priors, dependence …) in ``params``.

Posterior convention: over each item's candidates the posterior sums to 1, except for the
open-domain truth-discovery model (:func:`core.fusion.dependence.accu_depen` with the item
scope), where the remainder is the probability that the truth is none of the claimed values
(``params["unclaimed_mass"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np

from core.fusion.claims import Candidates, Claims
from core.stats import wilson_interval

__all__ = ["FusionResult", "make_result"]


def _freeze(value):
    if isinstance(value, np.ndarray):
        value = value.copy() if value.flags.writeable else value
        value.setflags(write=False)
    return value


@dataclass(frozen=True, eq=False)
class FusionResult:
    """Labels, confidences and posteriors of one resolver on one claims table.

    Attributes
    ----------
    method : str
        Resolver name (``"majority_vote"``, ``"dawid_skene"`` …).
    model : str
        One sentence stating the model and its conventions.
    labels : ndarray of int64, shape (I,)
        Chosen class code per item, −1 where the resolver abstained.
    confidence : ndarray of float, shape (I,)
        Posterior of the chosen class (0 where abstained).
    posterior : ndarray of float, shape (C,)
        Posterior of every candidate, aligned with ``candidates``.
    candidates : Candidates
    iterations : int
        EM (or fixed-point) iterations run; 0 for closed-form resolvers.
    converged : bool
        Whether the stopping rule fired before the iteration cap (True when closed-form).
    trace : tuple of float
        The objective after each iteration (named in ``objective``).
    objective : str
    params : mapping of str to ndarray or float
        Fitted parameters (read-only arrays).
    classes : tuple of str
        The class names (``classes[labels[i]]`` is item i's answer).
    """

    method: str
    model: str
    labels: np.ndarray
    confidence: np.ndarray
    posterior: np.ndarray
    candidates: Candidates
    classes: tuple[str, ...]
    iterations: int = 0
    converged: bool = True
    trace: tuple[float, ...] = ()
    objective: str = ""
    params: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("labels", "confidence", "posterior"):
            object.__setattr__(self, name, _freeze(np.asarray(getattr(self, name))))
        object.__setattr__(self, "params", MappingProxyType(
            {k: _freeze(v) for k, v in dict(self.params).items()}))

    def __reduce__(self):
        """Pickle ``params`` as a plain dict (``__post_init__`` makes it read-only again), so
        a result can come back from a worker process."""
        return (type(self), tuple(dict(self.params) if f.name == "params"
                                  else getattr(self, f.name) for f in fields(self)))

    @property
    def n_items(self) -> int:
        return int(self.labels.size)

    @property
    def answered(self) -> np.ndarray:
        """Items with an answer (not abstained), boolean (I,)."""
        return self.labels >= 0

    def label_names(self, abstain: str = "") -> np.ndarray:
        """The chosen claims as strings (``abstain`` where abstained)."""
        names = np.asarray((*self.classes, abstain), object)
        return names[self.labels]

    def posterior_matrix(self) -> np.ndarray:
        """The posterior as an ``(I, K)`` matrix (0 for classes that are no candidate)."""
        return self.candidates.dense(self.posterior)

    def score(self, claims: Claims, items: np.ndarray | None = None, *,
              level: float = 0.95) -> dict[str, float]:
        """Accuracy on gold items (within ``items``) with its Wilson interval.

        Abstentions count in the denominator of ``coverage`` only: ``accuracy`` is over the
        answered gold items, ``accuracy_all`` over all gold items (an abstention is wrong).
        """
        if claims.truth is None:
            raise ValueError("this claims table has no truth")
        mask = claims.gold if items is None else claims.gold & np.asarray(items, bool)
        n = int(mask.sum())
        if n == 0:
            raise ValueError("no item with a known truth to score")
        answered = mask & self.answered
        k = int((self.labels[answered] == claims.truth[answered]).sum())
        m = int(answered.sum())
        lo, hi = wilson_interval(k, m, level=level)
        return {"n": n, "answered": m, "correct": k, "coverage": m / n,
                "accuracy": k / m if m else float("nan"), "accuracy_all": k / n,
                "low": float(lo), "high": float(hi)}


def make_result(method: str, model: str, claims: Claims, cand: Candidates,
                posterior: np.ndarray, *, tie: str | np.ndarray = "smallest",
                iterations: int = 0, converged: bool = True, trace=(), objective: str = "",
                params: Mapping[str, object] | None = None,
                score: np.ndarray | None = None) -> FusionResult:
    """Build a :class:`FusionResult`: labels are the per-item argmax of ``score`` (default
    ``posterior``), exact ties broken by ``tie`` (a rule name or a class rank array)."""
    rank = claims.tie_rank(tie) if isinstance(tie, str) else np.asarray(tie)
    best = cand.argmax(posterior if score is None else score, rank)
    return FusionResult(method=method, model=model, labels=cand.cls[best],
                        confidence=posterior[best], posterior=posterior, candidates=cand,
                        classes=claims.classes, iterations=int(iterations),
                        converged=bool(converged), trace=tuple(float(t) for t in trace),
                        objective=objective, params=dict(params or {}))
