"""One scenario's pilots, budget curve and Algorithm 1 walk, from its configuration alone.

:func:`core.calibration.pilot.simulate_pilots`, :func:`~core.calibration.pilot.budget_curve`
and :func:`~core.calibration.pilot_walk.walk_algorithm1` take the scenario's frame and its transfer
domain (seed 003 §3: β and the repair's truth model are learned on "another audited
dataset"). These wrappers take the :class:`~core.calibration.scenario.ScenarioConfig` instead
and generate both frames themselves (about 5 ms each), so that a worker process can be sent a
few numbers rather than two frames (``pages/_shared/workers.py``).

Invariant: ``pilots_for(config, **kw)`` equals ``simulate_pilots(generate_scenario(config),
source_frame=generate_scenario(transfer_config(config)), **kw)``, and likewise for the other
two (``tests/test_workers.py``).
"""

from __future__ import annotations

import pandas as pd

from .pilot import PilotSimulation, budget_curve, simulate_pilots
from .pilot_walk import Algorithm1Walk, walk_algorithm1
from .scenario import ScenarioConfig, generate_scenario, transfer_config

__all__ = ["curve_for", "pilots_for", "scenario_frames", "walk_for"]


def scenario_frames(config: ScenarioConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(frame, transfer frame)`` of ``config`` (:func:`~.scenario.transfer_config`)."""
    return generate_scenario(config), generate_scenario(transfer_config(config))


def pilots_for(config: ScenarioConfig, **kwargs) -> PilotSimulation:
    """:func:`~core.calibration.pilot.simulate_pilots` on the scenario of ``config``."""
    frame, source = scenario_frames(config)
    return simulate_pilots(frame, source_frame=source, **kwargs)


def curve_for(config: ScenarioConfig, **kwargs) -> pd.DataFrame:
    """:func:`~core.calibration.pilot.budget_curve` on the scenario of ``config``."""
    frame, source = scenario_frames(config)
    return budget_curve(frame, source_frame=source, **kwargs)


def walk_for(config: ScenarioConfig, **kwargs) -> Algorithm1Walk:
    """:func:`~core.calibration.pilot_walk.walk_algorithm1` on the scenario of ``config``."""
    frame, source = scenario_frames(config)
    return walk_algorithm1(frame, source_frame=source, **kwargs)
