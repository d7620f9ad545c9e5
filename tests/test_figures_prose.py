"""Figures of the Extraction page draw what their view objects hold."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.figures.prose import factorial_figure, faithfulness_figure, noise_figure
from core.prose.views import factorial_view, faithfulness_view, mixed_fit, noise_view
from core.store import connect


@pytest.fixture(scope="module")
def views(small_store):
    con = connect(small_store)
    try:
        faith = faithfulness_view(con, cells="informative")
        fit = mixed_fit(con, methods=("majority_class", "majority_vote", "nbf"))
    finally:
        con.close()
    noise = noise_view(fit, profile="uniform", eps=0.2, seed=1)
    two = factorial_view(fit, a="nbf", b="majority_vote", profile="paper", eps=0.0, n_boot=50)
    return faith, noise, two


def test_the_heatmap_is_the_matrix(views):
    faith = views[0]
    fig = faithfulness_figure(faith, title="t")
    (trace,) = fig.data
    z = np.array(trace.z, dtype=float)
    np.testing.assert_array_equal(np.isnan(z), faith.matrix.isna().to_numpy())
    np.testing.assert_allclose(z[~np.isnan(z)], faith.matrix.to_numpy()[~np.isnan(z)])
    assert list(trace.x) == list(faith.matrix.columns) and list(trace.y) == list(faith.matrix.index)
    text = np.array(trace.text, dtype=object)
    assert (text[np.isnan(z)] == "").all()  # a cell the question does not read stays blank
    assert np.array(trace.customdata).sum() == faith.n_cells
    json.loads(fig.to_json())


def test_the_dumbbells_are_the_board(views):
    noise = views[1]
    fig = noise_figure(noise)
    segments, star, hat = fig.data
    f = noise.frame.sort_values("accuracy_hat", kind="stable")
    assert list(hat.y) == f["label"].tolist()
    np.testing.assert_allclose(hat.x, f["accuracy_hat"])
    np.testing.assert_allclose(star.x, f["accuracy_star"])
    assert len(segments.x) == 3 * len(f)


def test_the_2x2_figure_shows_the_cells_and_the_terms(views):
    two = views[2]
    fig = factorial_figure(two)
    heat, bars = fig.data
    acc = two.decomposition.accuracy
    np.testing.assert_allclose(np.array(heat.z, dtype=float),
                               [[acc["a_star"], acc["a_hat"]], [acc["b_star"], acc["b_hat"]]])
    assert list(bars.x) == ["total", "resolution", "extraction", "interaction"]
    np.testing.assert_allclose(bars.y, [two.decomposition.terms[t] for t in bars.x])
    low = np.asarray(bars.y) - np.asarray(bars.error_y.arrayminus)
    np.testing.assert_allclose(low, [two.decomposition.ci[t][0] for t in bars.x])
    json.loads(fig.to_json())
