"""Extraction-noise profiles: "what if my extractor were this good?" (seed 000 §12.5, §12.6).

A :class:`NoiseProfile` holds a flip probability for each (question, source) cell; applying
it to clean atoms μ* gives simulated extracted atoms. The flip itself is the one of seed 000
§12.5 that ``python -m core reproduce`` uses (:func:`core.evaluation.robustness.flip_atoms`:
ordinal labels move one rank, nominal labels to a uniformly random other label, ⊥ and ordinal
edge labels are never flipped). Profiles:

* :meth:`NoiseProfile.uniform` — one ε everywhere; :func:`apply_noise` then *is*
  ``flip_atoms(atoms, ε, rng)``, draw for draw;
* :meth:`NoiseProfile.from_faithfulness` — ``1 − P(μ̂ = μ*)`` per cell from a measured table
  (:func:`core.prose.faithfulness.faithfulness` with ``cells="non_null"``, the denominator of
  a flip of a non-null atom);
* :meth:`NoiseProfile.paper` — the paper's GPT-5.4 faithfulness by source
  (:data:`core.evaluation.paper.PAPER_EXTRACTION`), the same rate for every question of a
  source;
* :meth:`NoiseProfile.gemini` — an approximation of the Gemini 3.1 Pro extractor (§12.6):
  the GPT-5.4 rates plus Gemini's per-question gaps as the paper states them in words;
* :meth:`NoiseProfile.paraphrase` — measured: our extractor's errors on our prose reworded by
  the paraphraser (:mod:`core.prose.paraphrase`), per cell, from the shipped
  ``data/prose/paraphrase_profile.json`` (:mod:`core.prose.paraphrase_profile`). It has both
  kinds of error: wrong labels (flips) and atoms left empty (``drops``, an atom turned ⊥).

Limits: a flip never turns an atom into ⊥ or ⊥ into an atom, and only a profile with
``drops`` empties atoms, so the other profiles reproduce how often an extractor is wrong, not
which kind of wrong (§12.6: Gemini's errors are mostly false ⊥). A flip moves an ordinal
label one rank and never moves an edge label, so a measured wrong-label rate is applied to
the atoms a flip can move. Randomness comes only from the caller's
``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..evaluation.paper import PAPER_EXTRACTION, PAPER_GEMINI_EXTRACTION_GAP
from ..evaluation.robustness import flip_atoms
from ..testbed.questions import QIDS, SOURCES
from .faithfulness import Faithfulness

__all__ = ["NoiseProfile", "apply_noise", "parse_profile"]

_SHAPE = (len(QIDS), len(SOURCES))


@dataclass(frozen=True)
class NoiseProfile:
    """Error probabilities per (question, source), each ``(18, 5)`` in [0, 1].

    ``rates`` flips an atom to another label; ``drops`` (default none) empties it (⊥). A
    cell's ``rates + drops`` is at most 1.
    """

    name: str
    rates: np.ndarray
    drops: np.ndarray | None = None

    def __post_init__(self) -> None:
        for what in ("rates", "drops"):
            given = getattr(self, what)
            r = np.array(np.zeros(_SHAPE) if given is None else given, dtype=float)
            if r.shape != _SHAPE:
                raise ValueError(f"{what} must have shape {_SHAPE}, got {r.shape}")
            if not np.all(np.isfinite(r)) or r.min() < 0 or r.max() > 1:
                raise ValueError(f"{what} must be finite and in [0, 1], got [{r.min()}, "
                                 f"{r.max()}]")
            r.setflags(write=False)
            object.__setattr__(self, what, r)
        total = self.rates + self.drops
        if total.max() > 1 + 1e-12:
            raise ValueError(f"rates + drops must be at most 1 in every cell, got {total.max()}")

    @property
    def mean_error(self) -> float:
        """The mean over the 90 cells of ``rates + drops``."""
        return float((self.rates + self.drops).mean())

    @property
    def uniform_eps(self) -> float | None:
        """The common rate when every cell has the same one, else ``None``."""
        first = float(self.rates.flat[0])
        return first if np.all(self.rates == first) and not self.drops.any() else None

    @classmethod
    def uniform(cls, eps: float) -> NoiseProfile:
        """The same flip probability ``eps`` ∈ [0, 1] for every cell (seed 000 §12.5)."""
        eps = float(eps)
        if not 0 <= eps <= 1:
            raise ValueError(f"eps must be in [0, 1], got {eps}")
        return cls(f"uniform:{eps:g}", np.full(_SHAPE, eps))

    @classmethod
    def from_faithfulness(cls, table: Faithfulness, *, name: str = "measured") -> NoiseProfile:
        """``1 − rate`` of each cell of a measured table; a cell with no atom gets 0."""
        rate = table.by_cell["rate"].to_numpy(dtype=float).reshape(_SHAPE)
        return cls(name, np.clip(np.nan_to_num(1 - rate, nan=0.0), 0, 1))

    @classmethod
    def gemini(cls) -> NoiseProfile:
        """An approximation of the Gemini 3.1 Pro extractor (seed 000 §12.6): GPT-5.4's rate
        by source (:meth:`paper`) plus Gemini's gap by question
        (``PAPER_GEMINI_EXTRACTION_GAP``, the midpoints of the gaps the paper states in words),
        clipped to [0, 1]. Its mean rate is 2.5 pp above GPT-5.4's (the paper: 2.0–2.3 pp).
        """
        rates = cls.paper().rates.copy()
        for qid, gap in PAPER_GEMINI_EXTRACTION_GAP.items():
            rates[QIDS.index(qid)] += gap / 100
        return cls("gemini", np.clip(rates, 0.0, 1.0))

    @classmethod
    def paraphrase(cls, path=None) -> NoiseProfile:
        """Our extractor's measured errors on reworded prose (module docstring): per cell, the
        share of the round trip's atoms that the paraphrase turned into another label
        (``rates``) and into ⊥ (``drops``), from the shipped file
        (:func:`core.prose.paraphrase_profile.load_paraphrase_profile`; seed 000 §8.8's
        faithfulness, measured on the paraphrase of issue 19). ``ValueError`` for a missing or
        malformed file.
        """
        from .paraphrase_profile import load_paraphrase_profile, profile_rates

        flips, drops = profile_rates(load_paraphrase_profile(path))
        return cls("paraphrase", flips, drops)

    @classmethod
    def paper(cls) -> NoiseProfile:
        """The GPT-5.4 extractor's error rate by source (seed 000 §8.8), for every question."""
        by_source = PAPER_EXTRACTION["by_source"]
        row = np.array([1 - by_source[s] / 100 for s in SOURCES])
        return cls("paper", np.broadcast_to(row, _SHAPE).copy())


def apply_noise(atoms: np.ndarray, profile: NoiseProfile, rng: np.random.Generator
                ) -> np.ndarray:
    """Atoms with each non-null cell flipped with its profile rate (module docstring).

    A uniform profile calls ``flip_atoms(atoms, eps, rng)`` itself; otherwise every eligible
    atom is flipped in a candidate copy (``flip_atoms(atoms, 1, rng)``) and kept where an
    independent uniform draw ``u`` falls below its cell's rate; with ``drops``, a non-null atom
    whose ``u`` lies in ``[rate, rate + drop)`` becomes ⊥ (the same draws as without drops, so a
    profile without drops gives what it gave before). The input is not changed.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    atoms = np.asarray(atoms)
    if atoms.ndim != 3 or atoms.shape[1:] != _SHAPE:
        raise ValueError(f"atoms must have shape (P, {_SHAPE[0]}, {_SHAPE[1]}), got "
                         f"{atoms.shape}")
    eps = profile.uniform_eps
    if eps is not None:
        return flip_atoms(atoms, eps, rng)
    candidate = flip_atoms(atoms, 1.0, rng)
    u = rng.random(atoms.shape)
    flipped = u < profile.rates[None]
    out = np.where(flipped, candidate, atoms).astype(np.int8)
    if profile.drops.any():
        out[~flipped & (u < (profile.rates + profile.drops)[None]) & (atoms >= 0)] = -1
    return out


def parse_profile(text: str, *, measured: Faithfulness | None = None) -> NoiseProfile:
    """A profile from its name: ``uniform:EPS``, ``paper``, ``gemini``, ``paraphrase`` or
    ``measured``.

    ``measured`` needs the table to build it from. Raises ``ValueError`` naming the text.
    """
    kind, _, arg = text.partition(":")
    if kind == "uniform":
        try:
            eps = float(arg)
        except ValueError:
            raise ValueError(f"uniform:EPS needs a number in [0, 1], got {text!r}") from None
        if not np.isfinite(eps):
            raise ValueError(f"uniform:EPS needs a number in [0, 1], got {text!r}")
        return NoiseProfile.uniform(eps)
    if kind == "paper" and not arg:
        return NoiseProfile.paper()
    if kind == "gemini" and not arg:
        return NoiseProfile.gemini()
    if kind == "paraphrase" and not arg:
        return NoiseProfile.paraphrase()
    if kind == "measured" and not arg:
        if measured is None:
            raise ValueError("the measured profile needs a faithfulness table")
        return NoiseProfile.from_faithfulness(measured)
    raise ValueError(f"unknown noise profile {text!r} (expected uniform:EPS, paper, gemini, "
                     "paraphrase or measured)")
