"""Every numeric control of the three seed-003 pages at the ends of its legal range.

Issue 18: legal values crashed the Pilot budget page (omission 0 and false matches 0). Here
hypothesis puts every numeric control of Reliability, Ranking reversal and Pilot budget at
its lowest or highest legal value, in combinations, through the URL (the path a shared link
takes), opens every lazy section, and requires a page without an exception element, every
slider at the value asked for (no silent snapping) and no "nan" in the prose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.build import build_store
from core.testbed.config import TestbedConfig
from pages._shared.reliability import P_BINS
from pages._shared.seed003 import SCENARIO_KNOBS

ROOT = Path(__file__).resolve().parents[1]
HOME = str(ROOT / "app.py")


def _ends(prefix: str) -> dict[str, tuple[float, float]]:
    return {f"{prefix}_{k.suffix}": (k.lo, k.hi) for k in SCENARIO_KNOBS}


#: page → (numeric URL parameter → (lowest, highest)), fixed parameters, lazy sections.
PAGES = {
    "pages/5_Reliability.py": ({P_BINS.key: (P_BINS.lo, P_BINS.hi), **_ends("rel")},
                               {"rel_data": "scenario", "rel_bands": "on"}, ()),
    "pages/6_Ranking_reversal.py": ({"rr_prev": (0.0, 1.0), **_ends("rr")}, {}, ()),
    "pages/7_Pilot_budget.py": ({"pb_budget": (10, 200), "pb_walk": (0, 199),
                                 "pb_jbias": (-2.0, 2.0), **_ends("pb")},
                                {"pb_reps": "200"},
                                ("pb_panel_a_open", "pb_sampled_open", "pb_judge_open",
                                 "pb_nq_open")),
}
RAW = re.compile(r"\b(?:nan|inf|None)\b")


@pytest.fixture(scope="module")
def extremes_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("extremes") / "store.duckdb"
    build_store(path, TestbedConfig(seeds=(20260321,), personas_per_difficulty=8))
    return path


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@pytest.mark.parametrize("page_file", list(PAGES))
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_numeric_control_at_its_ends(monkeypatch, extremes_store, page_file, data):
    monkeypatch.setenv("ARBITER_DB", str(extremes_store))
    ranges, fixed, lazy = PAGES[page_file]
    ends = data.draw(st.fixed_dictionaries(
        {key: st.sampled_from(bounds) for key, bounds in ranges.items()}), label="ends")
    at = AppTest.from_file(HOME, default_timeout=180)
    for key, value in {**fixed, **{k: _fmt(v) for k, v in ends.items()}}.items():
        at.query_params[key] = value
    at.run()
    at = at.switch_page(page_file).run()
    for key in lazy:
        at.session_state[key] = True
    if lazy:
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning  # legal values: no notice either
    for key, value in ends.items():
        widgets = [w for kind in ("slider", "number_input") for w in at.get(kind)
                   if getattr(w, "key", None) == key]
        if widgets:  # drawn (some live in collapsed expanders, still set from the URL)
            assert widgets[0].value == pytest.approx(value), key
    prose = [e.value for kind in ("caption", "markdown", "success", "info")
             for e in at.get(kind)]
    assert not [t for t in prose if RAW.search(t)]


def test_the_corners_the_issue_named():
    """The specific legal values of issue 18 point 8 are among the ends drawn above."""
    ranges = PAGES["pages/7_Pilot_budget.py"][0]
    assert ranges["pb_omit"][0] == 0.0 and ranges["pb_fmr"][0] == 0.0
