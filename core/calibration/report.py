"""Score a table of forecasts: every score, decomposition and curve, and with a second label
and a second rule the label-source analysis (``python -m core score FILE.csv``).

Input columns (DESIGN.md §4, issue 4): ``p`` (forecast in [0, 1]) and ``y`` (0/1 truth) are
required; optional ``z`` (0/1 reference-derived label), ``p_b`` (a second confidence rule),
``cluster`` (any id; reported as the number of clusters) and ``weight`` (> 0 sampling weights).
Conventions are those of the modules called: ten uniform bins with numpy-histogram edges and
the last bin closed, CORP with tied forecasts pooled, relplot-1.0.3 smooth ECE.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from .corp import corp_decomposition
from .label_source import crossover_prevalence, label_source_decomposition
from .reliability import (
    binned_ece,
    mce,
    murphy_decomposition,
    reliability_curve,
    rms_calibration_error,
)
from .scores import auroc, brier_score, calibration_in_the_large, log_score
from .smooth import smooth_ece

__all__ = ["read_score_csv", "score_frame"]

_OPTIONAL = ("z", "p_b", "cluster", "weight")


def read_score_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate a scoring CSV; ``ValueError`` with a one-line reason naming the file."""
    name = os.fspath(path)
    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise ValueError(f"{name}: no such file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: not a readable CSV ({first})") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in ("p", "y") if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)} "
                         f"(need p and y; optional {', '.join(_OPTIONAL)})")
    if len(df) < 2:
        raise ValueError(f"{name}: need at least 2 rows, got {len(df)}")

    def numeric(col, lo, hi, *, binary=False):
        v = pd.to_numeric(df[col], errors="coerce")
        bad = v.isna() | (v < lo) | (v > hi)
        if binary:
            bad |= ~v.isin([0, 1])
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 2  # header is line 1
            what = "0 or 1" if binary else f"a number in [{lo}, {hi}]"
            raise ValueError(f"{name}: column {col} must be {what} (line {row}: "
                             f"{df[col].iloc[row - 2]!s})")
        return v.astype(float)

    out = pd.DataFrame({"p": numeric("p", 0, 1), "y": numeric("y", 0, 1, binary=True)})
    if "z" in df:
        out["z"] = numeric("z", 0, 1, binary=True)
    if "p_b" in df:
        out["p_b"] = numeric("p_b", 0, 1)
    if "weight" in df:
        w = pd.to_numeric(df["weight"], errors="coerce")
        if (w.isna() | ~(w > 0) | ~np.isfinite(w)).any():
            raise ValueError(f"{name}: column weight must be finite and > 0")
        out["weight"] = w.astype(float)
    if "cluster" in df:
        out["cluster"] = df["cluster"].astype(str)
    return out


def _scores(p, y, w) -> dict:
    citl = calibration_in_the_large(p, y, weights=w)
    corp = corp_decomposition(p, y, weights=w)
    mur = murphy_decomposition(p, y, n_bins=10, weights=w)
    sm, sigma = smooth_ece(p, y) if w is None else (float("nan"), float("nan"))
    return {
        "n": int(len(p)),
        "prevalence": float(np.average(y, weights=w)),
        "mean_forecast": float(np.average(p, weights=w)),
        "brier": brier_score(p, y, weights=w),
        "log_score": log_score(p, y, weights=w),
        "ece_10": binned_ece(p, y, n_bins=10, weights=w),
        "mce_10": mce(p, y, n_bins=10, weights=w),
        "rms_10": rms_calibration_error(p, y, n_bins=10, weights=w),
        "smooth_ece": sm, "smooth_ece_sigma": sigma,
        "citl": citl.citl, "spiegelhalter_z": citl.spiegelhalter_z,
        "auroc": auroc(p, y, weights=w),
        "corp_mcb": corp.mcb, "corp_dsc": corp.dsc, "corp_unc": corp.unc,
        "murphy": {k: float(v) for k, v in vars(mur).items()
                   if isinstance(v, (int, float, np.floating))},
    }


def score_frame(df: pd.DataFrame) -> dict:
    """Every score of ``p`` (and ``p_b``) under ``y`` (and ``z``), the reliability curve of ``p``
    under ``y``, and with ``z`` and ``p_b`` the label-source decomposition (rule A = ``p``)."""
    w = df["weight"].to_numpy() if "weight" in df else None
    p, y = df["p"].to_numpy(), df["y"].to_numpy()
    out: dict = {"rules": {"p": {"y": _scores(p, y, w)}}}
    if "z" in df:
        out["rules"]["p"]["z"] = _scores(p, df["z"].to_numpy(), w)
    if "p_b" in df:
        pb = df["p_b"].to_numpy()
        out["rules"]["p_b"] = {"y": _scores(pb, y, w)}
        if "z" in df:
            out["rules"]["p_b"]["z"] = _scores(pb, df["z"].to_numpy(), w)
    curve = reliability_curve(p, y, n_bins=10, weights=w)
    out["reliability"] = pd.DataFrame({
        "bin_low": curve.edges[:-1], "bin_high": curve.edges[1:], "count": curve.count,
        "mean_forecast": curve.mean_forecast, "observed": curve.observed_frequency,
        "ci_low": curve.low, "ci_high": curve.high}).to_dict(orient="records")
    if "cluster" in df:
        out["clusters"] = int(df["cluster"].nunique())
    if "z" in df and "p_b" in df:
        d = label_source_decomposition(p, df["p_b"].to_numpy(), y, df["z"].to_numpy(),
                                       weights=w)
        a, b = float(np.average(p, weights=w)), float(np.average(df["p_b"], weights=w))
        out["label_source"] = {k: (float(v) if isinstance(v, (float, np.floating)) else
                                   bool(v) if isinstance(v, (bool, np.bool_)) else v)
                               for k, v in vars(d).items()}
        out["label_source"].update({"crossover_prevalence": crossover_prevalence(a, b),
                                    "mean_a": a, "mean_b": b})
    return out
