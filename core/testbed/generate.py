"""Vectorised generator of the seed-000 synthetic personal-memory benchmark.

``generate(config)`` rebuilds the released testbed (the benchmark specification §2.1, §2.5–2.7,
§2.13) as arrays: personas (L1), the latent event table (L2) and the five source projections
(L3). It is **distributionally** equivalent to the released generator, not byte-equal: the
released per-persona draw order is not reproduced; every layer is drawn as whole
``(P,)`` / ``(P, 30)`` arrays instead.

Randomness
----------
Each seed owns independent streams ``default_rng(SeedSequence([seed, k]))``:
k = 0 personas, 1 events, 2 planner, 3 self_report, 4 objective, 5 device. The persona stream of
diversity-audit attempt ``a`` (0-based) uses ``seed + a`` in place of ``seed`` (§2.5 "regenerate
with seed + 1"). Events and sources always use the seed itself. Because the knobs enter only the
source projections, changing ``bias_scale`` / ``dropout_scale`` leaves personas, events and the
profile byte-identical and re-projects the other sources with the same streams (§2.13).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._gen_events import simulate_events
from ._gen_personas import PersonaDraw, diversity_failures, draw_personas, persona_frame
from ._gen_sources import (
    default_knobs,
    knob_frame,
    project_device,
    project_objective,
    project_planner,
    project_profile,
    project_self_report,
    scale_knobs,
)
from .config import TestbedConfig
from .schema import LAYERS, Testbed

__all__ = ["MAX_AUDIT_ATTEMPTS", "generate"]

#: attempts of the persona diversity audit before giving up (§2.5)
MAX_AUDIT_ATTEMPTS = 25

_PERSONAS, _EVENTS, _PLANNER, _SELF, _OBJECTIVE, _DEVICE = range(6)


def _rng(seed: int, stream: int) -> np.random.Generator:
    """The independent stream ``stream`` of ``seed``."""
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def _audited_personas(seed: int, *, n_per_class: int) -> PersonaDraw:
    """Draw personas with seed + attempt until the diversity audit passes (§2.5).

    Raises ``RuntimeError`` listing the last failures when no attempt passes.
    """
    fails: list[str] = []
    for attempt in range(MAX_AUDIT_ATTEMPTS):
        draw = draw_personas(_rng(seed + attempt, _PERSONAS), n_per_class=n_per_class)
        fails = diversity_failures(draw)
        if not fails:
            return draw
    raise RuntimeError(f"seed {seed}: diversity audit failed {MAX_AUDIT_ATTEMPTS} attempts: "
                       + "; ".join(fails))


def _cast(layer: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Cast a layer's arrays to the dtypes of :data:`~core.testbed.schema.LAYERS`."""
    fields = LAYERS[layer][0]
    return {k: np.ascontiguousarray(arrays[k], dtype=dtype) for k, (dtype, _) in fields.items()}


@dataclass(frozen=True)
class _SeedBase:
    """The knob-free layers of one seed: what every bias / dropout setting shares."""

    draw: PersonaDraw
    personas: pd.DataFrame
    events: dict[str, np.ndarray]  # as simulated (the projections read these)


def _seed_base(seed: int, config: TestbedConfig) -> _SeedBase:
    """The knob-free layers of ``seed`` (§2.5–2.6)."""
    draw = _audited_personas(seed, n_per_class=config.personas_per_difficulty)
    events = simulate_events(draw, _rng(seed, _EVENTS))
    return _SeedBase(draw, persona_frame(draw, seed=seed, split_counts=config.split_counts()),
                     events)


def _generate_seed(seed: int, *, config: TestbedConfig, bases: dict | None = None) -> Testbed:
    """All layers of one seed (§2.5–2.7), sources projected with the scaled knobs (§2.13);
    the knob-free base taken from (and put in) ``bases`` when given."""
    key = (seed, config.personas_per_difficulty)
    base = bases.get(key) if bases is not None else None
    if base is None:
        base = _seed_base(seed, config)
        if bases is not None:
            bases[key] = base
    draw, events = base.draw, base.events
    knobs = scale_knobs(default_knobs(draw), bias_scale=config.bias_scale,
                        dropout_scale=config.dropout_scale)
    return Testbed(
        personas=base.personas,
        events=_cast("events", events),
        profile=_cast("profile", project_profile(draw, events, knobs)),
        planner=_cast("planner", project_planner(draw, knobs, _rng(seed, _PLANNER))),
        self_report=_cast("self_report", project_self_report(events, knobs, _rng(seed, _SELF))),
        objective=_cast("objective", project_objective(events, knobs, _rng(seed, _OBJECTIVE))),
        device=_cast("device", project_device(events, knobs, _rng(seed, _DEVICE))),
        knobs=knob_frame(knobs),
    )


def generate(config: TestbedConfig, *, bases: dict | None = None) -> Testbed:
    """Generate the testbed of every seed of ``config``, stacked on the persona axis.

    Parameters
    ----------
    config : seeds, personas per difficulty class and the DGP perturbation scales.
    bases : a dict the caller keeps across calls (empty at first): each seed's knob-free
        layers (personas, events; about half of a seed's cost) are made once per (seed,
        personas per difficulty) and reused, since the scales do not enter them (module
        docstring). The testbeds are the same as without it; they share those arrays, so
        nobody may write to them (nothing does).

    Returns
    -------
    Testbed
        Personas in seed order, then stable / temporal_shift / stated_vs_revealed, each by
        index; ``knobs`` holds the scaled source knobs of §2.7 plus ``missing_day_prob``.
    """
    parts = [_generate_seed(seed, config=config, bases=bases) for seed in config.seeds]
    return parts[0] if len(parts) == 1 else Testbed.concat(parts)
