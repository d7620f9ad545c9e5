"""Extracted atoms μ̂ for mixed mode from our own prose (seed 000 §8.6 stages 4–6, §9.4).

:func:`prose_atoms` renders the chosen personas (:func:`core.prose.render.render`), reads the
prose back (:func:`core.prose.extract.extract`) and optionally flips the result with a noise
profile (:func:`core.prose.noise.apply_noise`, seed 000 §12.5). The result is aligned with
every persona of the testbed, ⊥ (−1) outside the selection, which is the layout
:func:`core.evaluation.decomposition.mixed_runs` reads (only the 120 test personas of a seed
are extracted in the paper, the benchmark specification §2.10).
"""

from __future__ import annotations

import numpy as np

from ..testbed.questions import QIDS, SOURCES
from ..testbed.readout import readout
from ..testbed.schema import Testbed
from .extract import extract
from .faithfulness import faithfulness
from .noise import apply_noise, parse_profile
from .render import render

__all__ = ["prose_atoms"]


def prose_atoms(tb: Testbed, *, mask: np.ndarray | None = None, noise: str | None = None,
                rng: np.random.Generator | None = None) -> np.ndarray:
    """(P, 18, 5) int8: μ̂ of the personas in ``mask`` (default: the test split), −1 elsewhere.

    ``noise`` is a profile name of :func:`core.prose.noise.parse_profile` (``uniform:EPS``,
    ``paper``, ``measured``: the extractor's own faithfulness on the non-null cells of these
    personas); it needs ``rng``. Deterministic without noise.
    """
    if mask is None:
        mask = tb.personas["split"].to_numpy() == "test"
    mask = np.asarray(mask, bool)
    if mask.shape != (tb.n,):
        raise ValueError(f"mask must have shape ({tb.n},), got {mask.shape}")
    if noise is not None and not isinstance(rng, np.random.Generator):
        raise ValueError("a noise profile needs rng, a numpy.random.Generator")
    out = np.full((tb.n, len(QIDS), len(SOURCES)), -1, np.int8)
    if not mask.any():
        return out
    sub = tb.subset(mask)
    atoms = extract(list(render(sub).texts),
                    persona_ids=[str(p) for p in sub.personas["persona_id"]]).atoms
    if noise is not None:
        measured = faithfulness(atoms, readout(sub), cells="non_null") if noise == "measured" \
            else None
        atoms = apply_noise(atoms, parse_profile(noise, measured=measured), rng)
    out[mask] = atoms
    return out
