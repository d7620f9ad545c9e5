"""Parity of ``core.calibration`` with the reference libraries, through frozen JSON fixtures.

The fixtures in ``tests/fixtures/parity/`` were written by ``tests/fixtures/make_parity.py``
with ppi-python 0.2.3, relplot 1.0.3, model-diagnostics 1.5.0 and scikit-learn (versions are
recorded in each file). None of those libraries is imported here (calibration-notes §7).
Tolerance: 1e-6 absolute everywhere (most agree to ~1e-15; Platt to ~1e-8 because sklearn's
L-BFGS stops at gtol 1e-6).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.calibration.corp import corp_decomposition
from core.calibration.ppi import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from core.calibration.recalibration import isotonic_fit, platt_fit
from core.calibration.scores import auroc, brier_score
from core.calibration.smooth import smooth_ece, smooth_reliability

TOL = 1e-6
FIXTURES = Path(__file__).parent / "fixtures" / "parity"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


DATA = _load("datasets.json")["calibration"]
PPI = _load("ppi.json")
RELPLOT = _load("relplot.json")
MD = _load("model_diagnostics.json")
SK = _load("sklearn.json")


def _data(name):
    d = DATA[name]
    return np.array(d["p"]), np.array(d["y"], float), np.array(d["w"])


def test_fixture_versions_are_the_pinned_ones():
    assert PPI["versions"]["ppi-python"] == "0.2.3"
    assert RELPLOT["versions"]["relplot"] == "1.0.3"
    assert MD["versions"]["model-diagnostics"] == "1.5.0"
    assert "scikit-learn" in SK["versions"]
    total = sum(f.stat().st_size for f in FIXTURES.glob("*.json"))
    assert total < 200_000


# --- ppi_py 0.2.3 -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PPI["cases"]))
def test_ppi_mean_matches_ppi_py(name):
    c = PPI["cases"][name]
    y, yh, yu = (np.array(c[k]) for k in ("y", "yhat", "yhat_unlabeled"))
    tuned = ppi_mean_ci(y, yh, yu)
    assert tuned.lam == pytest.approx(c["lam_hat_clipped"], abs=TOL)
    unclipped = ppi_mean_ci(y, yh, yu, clip=False)
    assert unclipped.lam == pytest.approx(c["lam_hat_unclipped"], abs=TOL)
    for key, want in c["point"].items():
        lam = None if key == "tuned" else float(key)
        assert ppi_mean_pointestimate(y, yh, yu, lam=lam) == pytest.approx(want, abs=TOL)
    for ci in c["ci"]:
        r = ppi_mean_ci(y, yh, yu, alpha=ci["alpha"], lam=ci["lam"])
        assert r.low == pytest.approx(ci["low"], abs=TOL)
        assert r.high == pytest.approx(ci["high"], abs=TOL)
        assert r.alpha == ci["alpha"]
    for ci in c["classical"]:
        r = classical_mean_ci(y, alpha=ci["alpha"])
        assert (r.low, r.high) == pytest.approx((ci["low"], ci["high"]), abs=TOL)


def test_ppi_fixtures_exercise_both_clipping_ends():
    lams = [c["lam_hat_unclipped"] for c in PPI["cases"].values()]
    assert min(lams) < 0 and max(lams) > 1


def test_ppi_vectorised_equals_fixture_rows():
    c = PPI["cases"]["binary_n100_N1000"]
    y, yh, yu = (np.array(c[k]) for k in ("y", "yhat", "yhat_unlabeled"))
    r = ppi_mean_ci(np.stack([y, y, y]), np.stack([yh, yh, yh]), yu, alpha=0.1)
    want = next(ci for ci in c["ci"] if ci["lam"] is None and ci["alpha"] == 0.1)
    np.testing.assert_allclose(r.low, want["low"], atol=TOL)
    np.testing.assert_allclose(r.high, want["high"], atol=TOL)


# --- relplot 1.0.3 ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(RELPLOT["cases"]))
def test_smooth_ece_matches_relplot(name):
    p, y, _ = _data(name)
    c = RELPLOT["cases"][name]
    value, sigma = smooth_ece(p, y)
    assert sigma == pytest.approx(c["sigma"], abs=1e-12)
    assert value == pytest.approx(c["smece"], abs=TOL)
    for f in c["fixed"]:
        v, s = smooth_ece(p, y, sigma=f["sigma"])
        assert s == f["sigma"]
        assert v == pytest.approx(f["smece"], abs=TOL)
    if "diagram" in c:
        d = c["diagram"]
        curve = smooth_reliability(p, y, sigma=d["sigma"], n_grid=len(d["mesh"]))
        np.testing.assert_allclose(curve.grid, d["mesh"], atol=TOL)
        np.testing.assert_allclose(curve.frequency, d["mu"], atol=TOL)
        np.testing.assert_allclose(curve.density, d["density"], atol=TOL)
        assert smooth_reliability(p, y).sigma == pytest.approx(d["sigma"], abs=1e-12)


# --- model-diagnostics 1.5.0 ------------------------------------------------------------------

@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(MD["cases"]))
def test_corp_decomposition_matches_model_diagnostics(name, weighted):
    p, y, w = _data(name)
    want = MD["cases"][name]["weighted" if weighted else "unweighted"]
    d = corp_decomposition(p, y, weights=w if weighted else None)
    assert d.mcb == pytest.approx(want["miscalibration"], abs=TOL)
    assert d.dsc == pytest.approx(want["discrimination"], abs=TOL)
    assert d.unc == pytest.approx(want["uncertainty"], abs=TOL)
    assert d.score == pytest.approx(want["score"], abs=TOL)


# --- scikit-learn -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SK["metrics"]))
def test_brier_auroc_isotonic_match_sklearn(name):
    p, y, w = _data(name)
    m = SK["metrics"][name]
    assert brier_score(p, y) == pytest.approx(m["brier"], abs=TOL)
    assert brier_score(p, y, weights=w) == pytest.approx(m["brier_weighted"], abs=TOL)
    assert auroc(p, y) == pytest.approx(m["auroc"], abs=TOL)
    assert auroc(p, y, weights=w) == pytest.approx(m["auroc_weighted"], abs=TOL)
    iso = isotonic_fit(p, y, weights=w)
    np.testing.assert_allclose(iso.predict(np.array(m["isotonic_weighted"]["x"])),
                               m["isotonic_weighted"]["pred"], atol=TOL)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(SK["platt"]))
def test_platt_matches_sklearn_sigmoid(name, weighted):
    c = SK["platt"][name]
    s, y, w = np.array(c["s"]), np.array(c["y"], float), np.array(c["w"])
    want = c["weighted" if weighted else "unweighted"]
    m = platt_fit(s, y, weights=w if weighted else None)
    # sklearn: p = 1 / (1 + exp(A s + B)); ours: p = expit(a s + b)
    assert m.a == pytest.approx(-want["A"], abs=TOL)
    assert m.b == pytest.approx(-want["B"], abs=TOL)
    np.testing.assert_allclose(m.predict(np.array(c["grid"])), want["predict_proba"], atol=TOL)
