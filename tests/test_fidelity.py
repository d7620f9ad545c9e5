"""The generated default testbed sits close to the released generator's statistics."""

from __future__ import annotations

import pytest

from core.testbed.config import TestbedConfig
from core.testbed.fidelity import fidelity_table
from core.testbed.generate import generate


@pytest.fixture(scope="module")
def table():
    return fidelity_table(generate(TestbedConfig()))


def test_every_statistic_within_tolerance(table):
    bad = table[~table["within"]]
    assert bad.empty, "\n" + bad.to_string()


def test_table_covers_the_spec_groups(table):
    assert set(table["group"]) == {
        "day-level missingness", "profile", "GT marginals", "baselines",
        "μ* accuracy when non-null", "μ* coverage",
    }
    assert len(table) >= 35
