"""One scoring path (issue 8): the CLI report, the Reliability page and downloads agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibration.report import score_frame
from core.calibration.summary import SCORE_KEYS, ice, score_summary


@pytest.mark.parametrize("p, y, expected", [
    ([0.9, 0.2], [1, 1], 0.45),
    ([0.5, 0.5, 0.5], [0, 1, 1], 0.5),
    ([1.0, 0.0], [1, 0], 0.0),
])
def test_ice_closed_form(p, y, expected):
    assert ice(p, y) == pytest.approx(expected)


def test_ice_baseline_is_the_constant_at_the_average_confidence():
    rng = np.random.default_rng(1)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(float)
    w = rng.uniform(0.5, 2.0, 300)
    s = score_summary(p, y, weights=w)
    c = np.average(p, weights=w)
    assert s["ice_baseline"] == pytest.approx(np.average(np.abs(y - c), weights=w))
    assert s["ice_gain"] == pytest.approx(s["ice"] - s["ice_baseline"])
    assert list(s) == list(SCORE_KEYS)


@pytest.mark.parametrize("weighted", [False, True])
def test_cli_and_page_score_the_same_way(weighted):
    """The page's score_table and the CLI's score_frame: same keys, same numbers."""
    from pages._shared.seed003 import rule_frame, score_table

    rng = np.random.default_rng(7 + weighted)
    n = 200
    df = pd.DataFrame({"p": rng.random(n).round(3), "y": (rng.random(n) < 0.4).astype(int)})
    if weighted:
        df["weight"] = rng.uniform(0.5, 3.0, n).round(3)
    cli = score_frame(df)["rules"]["p"]["y"]
    frame = rule_frame(df["p"], df["y"], None, df["weight"] if weighted else None)
    page = score_table(("t", weighted), ("p",), "y", 10, "uniform", _frames={"p": frame})
    row = page.drop(columns="rule").iloc[0].to_dict()
    assert set(row) == set(cli) == set(SCORE_KEYS)
    for key in SCORE_KEYS:
        if np.isnan(cli[key]):
            assert np.isnan(row[key]) and weighted and key.startswith("smooth_ece")
        else:
            assert row[key] == pytest.approx(cli[key], rel=1e-12, abs=1e-15), key
