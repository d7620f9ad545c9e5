"""Score a table of forecasts: every score, decomposition and curve, and with a second label
and a second rule the label-source analysis (``python -m core score FILE.csv``).

Input columns (the design card §4, issue 4): ``p`` (forecast in [0, 1]) and ``y`` (0/1 truth) are
required; optional ``z`` (0/1 reference-derived label), ``p_b`` (a second confidence rule),
``cluster`` (any id; reported as the number of clusters) and ``weight`` (> 0 sampling weights).
:func:`read_score_csv` also serves the Reliability page's uploader, so it refuses hostile files
(size, row and field-count caps) before pandas parses them.
Conventions are those of the modules called: ten uniform bins with numpy-histogram edges and
the last bin closed, CORP with tied forecasts pooled, relplot-1.0.3 smooth ECE.
"""

from __future__ import annotations

import csv
import io
import os
import time
from typing import BinaryIO

import numpy as np
import pandas as pd

from .label_source import crossover_prevalence, label_source_decomposition
from .reliability import reliability_curve
from .scores import LOG_SCORE_NOTE, SPIEGELHALTER_NOTE, spiegelhalter_reason
from .summary import score_summary

__all__ = [
    "MAX_CSV_BYTES",
    "MAX_CSV_ROWS",
    "MAX_WEIGHT_RANGE",
    "READ_TIME_BUDGET",
    "read_score_csv",
    "score_frame",
]

_REQUIRED = ("p", "y")
_OPTIONAL = ("z", "p_b", "cluster", "weight")
_KNOWN = frozenset(_REQUIRED + _OPTIONAL)

#: Default size cap of :func:`read_score_csv` (bytes).
MAX_CSV_BYTES = 20 * 2**20
#: Default cap on the data lines after the header of :func:`read_score_csv`.
MAX_CSV_ROWS = 200_000
#: Default time budget of :func:`read_score_csv` (seconds).
READ_TIME_BUDGET = 10.0
#: Largest accepted ratio max(weight) / min(weight).
MAX_WEIGHT_RANGE = 1e12


def _read_bytes(source, name: str, max_bytes: int) -> bytes:
    """The raw bytes of ``source`` (path, bytes or binary file-like), at most ``max_bytes``."""
    limit = f"larger than the {max_bytes:,}-byte limit"
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, bytes):
            raise ValueError(f"{name}: the file object returned {type(data).__name__}, "
                             "not bytes")
    else:
        if not os.fspath(source):
            raise ValueError("the file name is empty")
        try:
            st = os.stat(source)
        except FileNotFoundError:
            raise ValueError(f"{name}: no such file") from None
        except OSError as exc:
            raise ValueError(f"{name}: cannot read ({exc.strerror or exc})") from None
        if os.path.isdir(source):
            raise ValueError(f"{name}: is a directory, not a CSV file")
        if not os.path.isfile(source):
            raise ValueError(f"{name}: not a regular file")
        if st.st_size > max_bytes:
            raise ValueError(f"{name}: {st.st_size:,} bytes, {limit}")
        try:
            with open(source, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise ValueError(f"{name}: cannot read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise ValueError(f"{name}: {limit}")
    return data


def _fields(line: bytes) -> list[str]:
    """The fields of one physical CSV line (quote-aware; the line is valid UTF-8)."""
    row = next(csv.reader([line.decode("utf-8-sig").rstrip("\r\n")]), [])
    return row


def _prescan(data: bytes, name: str, max_rows: int) -> list[str]:
    """Cheap checks before pandas sees the bytes; returns the (stripped) header names.

    Rejects binary and non-UTF-8 data, more than ``max_rows`` lines after the header,
    duplicated known columns and any line with more fields than the header.
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"{name}: binary data (NUL byte at offset {nul}), not a CSV file")
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start})") from None
    if not data.strip():
        raise ValueError(f"{name}: empty file (need a header line with columns p and y)")
    sep = b"\n" if b"\n" in data else b"\r"
    n_lines = data.count(sep) + (0 if data.endswith(sep) else 1)
    if n_lines - 1 > max_rows:
        raise ValueError(f"{name}: {n_lines - 1:,} lines after the header; at most "
                         f"{max_rows:,} rows")
    lines = data.split(sep)
    first = next(i for i, line in enumerate(lines) if line.strip())  # data.strip() is not empty
    header = [h.strip() for h in _fields(lines[first])]
    n_header = len(header)
    for col in _KNOWN:
        if header.count(col) > 1:
            raise ValueError(f"{name}: column {col} appears {header.count(col)} times in the "
                             "header")
    for i in range(first + 1, len(lines)):
        line = lines[i]
        if line.count(b",") < n_header:  # at most n_header fields even if no comma is quoted
            continue
        k = line.count(b",") + 1 if b'"' not in line else len(_fields(line))
        if k > n_header:
            raise ValueError(f"{name}: line {i + 1} has {k:,} fields, the header has "
                             f"{n_header}")
    return header


def _check_budget(t0: float, budget: float | None, name: str) -> None:
    if budget is not None and time.perf_counter() - t0 > budget:
        raise ValueError(f"{name}: reading took {time.perf_counter() - t0:.1f} s, over the "
                         f"{budget:g} s budget")


def _weight_range(w: np.ndarray, where: str) -> None:
    """Reject weights whose max / min exceeds :data:`MAX_WEIGHT_RANGE` (w finite and > 0)."""
    lo, hi = float(w.min()), float(w.max())
    if lo / hi < 1.0 / MAX_WEIGHT_RANGE:  # Python floats: underflow to 0.0 is silent
        raise ValueError(f"{where} weight: max / min is above {MAX_WEIGHT_RANGE:g} (min "
                         f"{lo:.3g}, max {hi:.3g})")


def read_score_csv(
    source: str | os.PathLike | bytes | BinaryIO,
    *,
    name: str | None = None,
    max_bytes: int = MAX_CSV_BYTES,
    max_rows: int = MAX_CSV_ROWS,
    time_budget: float | None = READ_TIME_BUDGET,
) -> pd.DataFrame:
    """Read and validate a scoring CSV, refusing hostile files before pandas parses them.

    Parameters
    ----------
    source : str, PathLike, bytes or binary file-like
        A path to the CSV (a ``str`` is always a path, never CSV text), its bytes, or an
        object with ``read()`` (e.g. an uploaded file) returning bytes.
    name : str, optional
        What to call the input in error messages (default: the path; ``"input"`` for bytes,
        the file object's ``name`` if it has one).
    max_bytes : int, default :data:`MAX_CSV_BYTES` (20 MiB)
        Larger inputs are refused (a path by its size, before reading).
    max_rows : int, default :data:`MAX_CSV_ROWS` (200 000)
        More lines after the header are refused (counted on the raw bytes, blank lines
        included, before parsing).
    time_budget : float or None, default :data:`READ_TIME_BUDGET` (10 s)
        Refuse the file if reading it took longer than this many seconds (checked after the
        pre-scan and after parsing; ``None`` disables the check).

    Returns
    -------
    DataFrame
        Float columns ``p`` and ``y`` and, when present, ``z``, ``p_b``, ``weight`` (floats)
        and ``cluster`` (strings). Other columns are ignored.

    Raises
    ------
    ValueError
        With one line naming the input and the reason, e.g. ``"f.csv: line 2 has 1,000,001
        fields, the header has 2"``.

    Notes
    -----
    Before pandas sees the data, a pre-scan refuses: inputs over ``max_bytes``; binary
    (NUL bytes) and non-UTF-8 data; empty inputs; more than ``max_rows`` lines; a known
    column named twice; any line with more fields than the header (commas are counted on
    every line, and lines that could be too wide are re-split quote-aware with :mod:`csv`).
    pandas then parses only the known columns (``usecols``, ``engine="c"``,
    ``index_col=False``). Values: ``p`` and ``p_b`` finite in [0, 1]; ``y`` and ``z`` 0 or 1;
    ``weight`` finite and > 0 with max / min at most :data:`MAX_WEIGHT_RANGE` (1e12; weights are
    rescaled by their maximum in :func:`score_frame`, so e.g. 1e308 everywhere is fine).
    """
    t0 = time.perf_counter()
    if name is None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            name = "input"
        elif hasattr(source, "read"):
            name = os.path.basename(str(getattr(source, "name", "") or "")) or "input"
        else:
            name = os.fspath(source)
    data = _read_bytes(source, name, max_bytes)
    header = _prescan(data, name, max_rows)
    _check_budget(t0, time_budget, name)
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)} "
                         f"(need p and y; optional {', '.join(_OPTIONAL)})")
    try:
        df = pd.read_csv(io.BytesIO(data), usecols=lambda c: str(c).strip() in _KNOWN,
                         engine="c", index_col=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError,
            ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: not a readable CSV ({first})") from None
    _check_budget(t0, time_budget, name)
    df.columns = [str(c).strip() for c in df.columns]
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
        _weight_range(w.to_numpy(dtype=float), f"{name}: column")
        out["weight"] = w.astype(float)
    if "cluster" in df:
        out["cluster"] = df["cluster"].astype(str)
    return out


def _validated(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict]:
    """``(p, y, w, extra)`` of a scoring frame, checked; ``w`` rescaled to max 1 (or None)."""
    missing = [c for c in _REQUIRED if c not in df]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}")
    if len(df) < 2:
        raise ValueError(f"need at least 2 rows, got {len(df)}")

    def column(col: str, *, binary: bool) -> np.ndarray:
        try:
            v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError):
            raise ValueError(f"column {col} must be numeric") from None
        bad = ~np.isfinite(v)
        bad[~bad] = ((v[~bad] != 0) & (v[~bad] != 1)) if binary else (
            (v[~bad] < 0) | (v[~bad] > 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "0 or 1" if binary else "a finite number in [0, 1]"
            raise ValueError(f"column {col} must be {what} (row {i + 1}: {v[i]!r})")
        return v

    p, y = column("p", binary=False), column("y", binary=True)
    extra = {}
    for col, binary in (("z", True), ("p_b", False)):
        if col in df:
            extra[col] = column(col, binary=binary)
    w = None
    if "weight" in df:
        w = pd.to_numeric(df["weight"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if not (np.isfinite(w).all() and (w > 0).all()):
            raise ValueError("column weight must be finite and > 0")
        _weight_range(w, "column")
        w = w / w.max()  # every score is invariant to the weights' scale; this keeps sums finite
    return p, y, w, extra


_FINITE_SCORES = ("prevalence", "mean_forecast", "brier", "log_score", "ece", "mce", "rms",
                  "citl", "ice", "ice_baseline", "corp_mcb", "corp_dsc", "corp_unc")


def _scores(p, y, w) -> dict:
    """:func:`core.calibration.summary.score_summary` with 10 uniform bins (the CLI's)."""
    return score_summary(p, y, weights=w, n_bins=10)


def score_frame(df: pd.DataFrame) -> dict:
    """Every score of ``p`` (and ``p_b``) under ``y`` (and ``z``), the reliability curve of ``p``
    under ``y``, and with ``z`` and ``p_b`` the label-source decomposition (rule A = ``p``).

    Parameters
    ----------
    df : DataFrame
        Columns ``p``, ``y`` and optional ``z``, ``p_b``, ``cluster``, ``weight`` (as returned
        by :func:`read_score_csv`; checked again here).

    Returns
    -------
    dict
        ``rules`` (scores per rule and label), ``reliability`` (records), ``notes`` and when
        present ``clusters`` and ``label_source``. Undefined statistics are NaN: AUROC with one
        class, Spiegelhalter's z where its normal approximation fails, smooth ECE with weights.
        ``notes`` documents the fields that need it: ``notes["spiegelhalter_z"]`` what z tests
        (whether the Brier score is compatible with calibrated forecasts, i.e. reliability,
        weighting each forecast by 1 − 2p; not calibration in the large, which is ``citl``),
        ``notes["log_score"]`` its clipping at 1e-15, and ``notes["not_reported"]`` one
        ``{rule, label, field, reason}`` per z left out.

    Raises
    ------
    ValueError
        One line: ``p``, ``p_b`` not finite in [0, 1]; ``y``, ``z`` not 0/1; ``weight`` not
        finite and > 0 or spanning more than :data:`MAX_WEIGHT_RANGE`; fewer than two rows; or
        a score that should be finite is not.

    Notes
    -----
    Weights are sampling weights and every score is invariant to their scale, so they are
    divided by their maximum before use: sums of huge weights (e.g. 1e308) cannot overflow.
    """
    p, y, w, extra = _validated(df)
    out: dict = {"rules": {"p": {"y": _scores(p, y, w)}}}
    if "z" in extra:
        out["rules"]["p"]["z"] = _scores(p, extra["z"], w)
    if "p_b" in extra:
        pb = extra["p_b"]
        out["rules"]["p_b"] = {"y": _scores(pb, y, w)}
        if "z" in extra:
            out["rules"]["p_b"]["z"] = _scores(pb, extra["z"], w)
    for rule, by_label in out["rules"].items():
        for label, sc in by_label.items():
            bad = [k for k in _FINITE_SCORES if not np.isfinite(sc[k])]
            if bad:
                raise ValueError(f"scores of {rule} under {label} are not finite "
                                 f"({', '.join(bad)}); check the weights")
    out["notes"] = {"spiegelhalter_z": SPIEGELHALTER_NOTE, "log_score": LOG_SCORE_NOTE,
                    "not_reported": [
                        {"rule": rule, "label": label, "field": "spiegelhalter_z",
                         "reason": why}
                        for rule, by_label in out["rules"].items()
                        for label, sc in by_label.items()
                        if (why := spiegelhalter_reason(sc["spiegelhalter_n_eff"],
                                                        sc["spiegelhalter_skew"])) is not None]}
    curve = reliability_curve(p, y, n_bins=10, weights=w)
    out["reliability"] = pd.DataFrame({
        "bin_low": curve.edges[:-1], "bin_high": curve.edges[1:], "count": curve.count,
        "mean_forecast": curve.mean_forecast, "observed": curve.observed_frequency,
        "ci_low": curve.low, "ci_high": curve.high}).to_dict(orient="records")
    if "cluster" in df:
        out["clusters"] = int(df["cluster"].nunique())
    if "z" in extra and "p_b" in extra:
        pb, z = extra["p_b"], extra["z"]
        d = label_source_decomposition(p, pb, y, z, weights=w)
        a, b = float(np.average(p, weights=w)), float(np.average(pb, weights=w))
        out["label_source"] = {k: (float(v) if isinstance(v, (float, np.floating)) else
                                   bool(v) if isinstance(v, (bool, np.bool_)) else v)
                               for k, v in vars(d).items()}
        out["label_source"].update({"crossover_prevalence": crossover_prevalence(a, b),
                                    "mean_a": a, "mean_b": b})
    return out
