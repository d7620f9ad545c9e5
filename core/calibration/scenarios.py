"""Named seed-003 scenarios: one registry for the command line and the pages.

Each entry is a :class:`~core.calibration.scenario.ScenarioConfig` with a plain-words
description of what it teaches. ``default`` is seed 003's Table 2 calibration; the others
each move one thing, so a student can see what that thing does:

* ``transfer`` — the default world drawn again (another seed): the source frame that the
  transfer coefficients β are learned on before a pilot (seed 003 §3);
* ``complete-reference`` — the reference misses nothing (omission 0) and matches nothing
  false: Z equals Y, so the label source cannot reverse anything;
* ``omission-at-random`` — the matcher's misses do not depend on the proposition type, so
  the omitted truths are a random sample and only the prevalence moves;
* ``sharper-native`` — native confidence discriminates far better (0.23 → 0.8): it wins by
  more under the truth, and the reference still reverses the ranking;
* ``poor-judges`` — the machine judges that TriSource-Restore uses as auxiliaries are weak
  (quality 0.4 → 0.1): the repair helps less.

Invariant: every entry validates as a ``ScenarioConfig`` (its ``__post_init__`` checks the
ranges), names are lowercase with hyphens, and ``default`` is exactly
:data:`~core.calibration.scenario.DEFAULT_SCENARIO`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from .scenario import DEFAULT_SCENARIO, ScenarioConfig, transfer_config

__all__ = ["SCENARIOS", "NamedScenario", "scenario_named"]


@dataclass(frozen=True)
class NamedScenario:
    """A registered scenario: its name, what it teaches and its configuration."""

    name: str
    teaches: str
    config: ScenarioConfig


def _entries() -> tuple[NamedScenario, ...]:
    d = DEFAULT_SCENARIO
    return (
        NamedScenario("default", "The answer-key paper's Table 2 world: omission .655, false "
                      "matches .14, weak discrimination; the ranking reverses.", d),
        NamedScenario("transfer", "The same world drawn again: where transfer β is learned "
                      "before a pilot.", transfer_config(d)),
        NamedScenario("complete-reference", "A reference that misses nothing and matches "
                      "nothing false: Z = Y, no reversal possible.",
                      replace(d, omission_rate=0.0, false_match_rate=0.0,
                              matcher_miss_share=0.0, false_in_reference_rate=0.0)),
        NamedScenario("omission-at-random", "Misses independent of the proposition type: only "
                      "the prevalence moves.", replace(d, match_type_effect=(0.0, 0.0, 0.0))),
        NamedScenario("sharper-native", "Native confidence that discriminates well: it wins by "
                      "more under the truth, yet the reference still reverses the ranking.",
                      replace(d, discrimination=0.8)),
        NamedScenario("poor-judges", "Weak machine judges: TriSource-Restore's auxiliaries "
                      "carry little signal.", replace(d, judge_quality=0.1)),
    )


#: name → :class:`NamedScenario`, in display order.
SCENARIOS = MappingProxyType({s.name: s for s in _entries()})


def scenario_named(name: str) -> ScenarioConfig:
    """The configuration of a registered scenario.

    Raises
    ------
    ValueError
        For an unknown name, listing the registered ones.
    """
    try:
        return SCENARIOS[name].config
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; choose one of "
                         f"{', '.join(SCENARIOS)}") from None
