"""``read_score_csv`` against hostile files, and ``score_frame``'s checks (no NaN rows)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from core.calibration.report import (
    MAX_CSV_BYTES,
    MAX_CSV_ROWS,
    MAX_WEIGHT_RANGE,
    read_score_csv,
    score_frame,
)

GOOD = b"p,y,z,p_b,cluster,weight\n0.5,1,0,0.4,a,1\n0.2,0,0,0.3,b,2\n0.9,1,1,0.5,a,1.5\n"


def _one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert len(msg.splitlines()) == 1, msg
    return msg


def test_defaults_are_the_documented_limits():
    assert MAX_CSV_BYTES == 20 * 2**20 and MAX_CSV_ROWS == 200_000 and MAX_WEIGHT_RANGE == 1e12


def test_path_bytes_and_file_objects_read_the_same(tmp_path):
    path = tmp_path / "good.csv"
    path.write_bytes(GOOD)
    a = read_score_csv(path)
    b = read_score_csv(GOOD)
    c = read_score_csv(io.BytesIO(GOOD))
    d = read_score_csv(str(path))
    for other in (b, c, d):
        pd.testing.assert_frame_equal(a, other)
    assert list(a.columns) == ["p", "y", "z", "p_b", "weight", "cluster"]
    assert a["cluster"].tolist() == ["a", "b", "a"]


def test_long_row_is_refused_before_pandas(tmp_path):
    path = tmp_path / "long.csv"
    path.write_bytes(b"p,y\n" + b"0.5," * 1_000_000 + b"\n")  # ~4 MB, one row of 1e6 fields
    with pytest.raises(ValueError, match="fields") as exc:
        read_score_csv(path)
    assert _one_line(exc) == f"{path}: line 2 has 1,000,001 fields, the header has 2"


@pytest.mark.parametrize("content,fragment", [
    (b"p,y\n0.5,1\n0.2,0,7\n", "line 3 has 3 fields, the header has 2"),
    (b"p,y\n0.5,1\n0.2,0\n" + b"0.1," * 50 + b"1\n", "line 4 has 51 fields"),
    (b"", "empty file"),
    (b"\n\n  \n", "empty file"),
    (b"p,y\n", "need at least 2 rows, got 0"),
    (b"p,y\n0.5,1\n", "need at least 2 rows, got 1"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data (NUL byte at offset 8)"),
    (bytes(range(256)), "binary data"),
    (b"p,y\n0.5,1\n\xff\xfe,0\n", "not UTF-8 text (byte 0xff at offset 10)"),
    (b"p,p,y\n0.5,0.4,1\n0.2,0.1,0\n", "column p appears 2 times"),
    (b"q,y\n0.5,1\n0.2,0\n", "missing column(s) p"),
    (b"p,y\n0.5,1\nnan,0\n", "column p must be a number in [0, 1] (line 3: nan)"),
    (b"p,y\n0.5,1\ninf,0\n", "column p must be a number in [0, 1]"),
    (b"p,y\n0.5,1\n0.2,0.5\n", "column y must be 0 or 1"),
    (b"p,y,weight\n0.5,1,0\n0.2,0,1\n", "weight must be finite and > 0"),
    (b"p,y,weight\n0.5,1,-1\n0.2,0,1\n", "weight must be finite and > 0"),
    (b"p,y,weight\n0.5,1,1e309\n0.2,0,1\n", "weight must be finite and > 0"),
    (b"p,y,weight\n0.5,1,nan\n0.2,0,1\n", "weight must be finite and > 0"),
    (b"p,y,weight\n0.5,1,1e308\n0.2,0,1e-308\n", "max / min is above 1e+12"),
    (b"p,y,weight\n0.5,1,2e12\n0.2,0,1\n", "max / min is above 1e+12"),
])
def test_bad_files_are_one_line_value_errors(content, fragment):
    with pytest.raises(ValueError) as exc:
        read_score_csv(content, name="upload.csv")
    msg = _one_line(exc)
    assert fragment in msg and msg.startswith("upload.csv: "), msg


def test_paths_that_are_not_files(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        read_score_csv(tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        read_score_csv(tmp_path / "none.csv")
    with pytest.raises(ValueError, match="file name is empty"):
        read_score_csv("")


def test_size_row_and_time_limits_are_keywords(tmp_path):
    rows = b"p,y\n" + b"0.5,1\n0.2,0\n" * 10  # 20 rows
    path = tmp_path / "rows.csv"
    path.write_bytes(rows)
    assert len(read_score_csv(path, max_rows=20)) == 20
    with pytest.raises(ValueError, match="21 lines after the header; at most 20 rows"):
        read_score_csv(rows + b"0.3,1", max_rows=20)
    with pytest.raises(ValueError, match=f"{len(rows)} bytes, larger than the 100-byte limit"):
        read_score_csv(path, max_bytes=100)
    with pytest.raises(ValueError, match="larger than the 100-byte limit"):
        read_score_csv(io.BytesIO(rows), max_bytes=100)
    with pytest.raises(ValueError, match="over the 0 s budget"):
        read_score_csv(rows, time_budget=0.0)
    assert len(read_score_csv(rows, time_budget=None)) == 20


def test_quoted_commas_line_endings_and_extra_columns_are_fine():
    quoted = b'p,y,cluster\n0.5,1,"a,b,c"\n0.2,0,"d,e"\n'
    assert read_score_csv(quoted)["cluster"].tolist() == ["a,b,c", "d,e"]
    for eol in (b"\r\n", b"\r"):
        data = b"\xef\xbb\xbf" + eol.join([b"p,y", b"0.5,1", b"0.2,0"]) + eol
        assert read_score_csv(data)["y"].tolist() == [1.0, 0.0]
    extra = read_score_csv(b"id, p ,y,note\n1,0.5,1,x\n2,0.2,0,y\n")
    assert list(extra.columns) == ["p", "y"]


def test_huge_weights_give_the_unweighted_scores():
    rng = np.random.default_rng(3)
    n = 48
    frame = pd.DataFrame({"p": rng.random(n).round(3), "y": (rng.random(n) < 0.5) * 1.0,
                          "z": (rng.random(n) < 0.3) * 1.0, "p_b": rng.random(n).round(3)})
    huge = frame.assign(weight=1e308)
    data = huge.to_csv(index=False).encode()
    read = read_score_csv(data)
    assert (read["weight"] == 1e308).all()
    a, b = score_frame(read), score_frame(frame.assign(weight=1.0))
    for rule in ("p", "p_b"):
        for label in ("y", "z"):
            for key in ("brier", "log_score", "ece", "citl", "spiegelhalter_z", "auroc", "ice",
                        "corp_mcb", "corp_dsc", "corp_unc"):
                assert a["rules"][rule][label][key] == pytest.approx(
                    b["rules"][rule][label][key], rel=1e-12, abs=1e-15)
    assert a["label_source"]["t_omit"] == pytest.approx(b["label_source"]["t_omit"])


@pytest.mark.parametrize("frame,fragment", [
    ({"p": [0.5, np.nan], "y": [1, 0]}, "column p must be a finite number in [0, 1] (row 2"),
    ({"p": [0.5, np.inf], "y": [1, 0]}, "column p must be a finite number"),
    ({"p": [0.5, 1.5], "y": [1, 0]}, "column p must be"),
    ({"p": [0.5, 0.2], "y": [1, 2]}, "column y must be 0 or 1"),
    ({"p": [0.5, 0.2], "y": [1, 0], "z": [1, np.nan]}, "column z must be 0 or 1"),
    ({"p": [0.5, 0.2], "y": [1, 0], "p_b": [0.1, -0.1]}, "column p_b must be"),
    ({"p": [0.5, 0.2], "y": [1, 0], "weight": [1.0, 0.0]}, "weight must be finite and > 0"),
    ({"p": [0.5, 0.2], "y": [1, 0], "weight": [0.0, 0.0]}, "weight must be finite and > 0"),
    ({"p": [0.5, 0.2], "y": [1, 0], "weight": [1.0, np.inf]}, "weight must be finite"),
    ({"p": [0.5, 0.2], "y": [1, 0], "weight": [1e300, 1e-300]}, "max / min is above"),
    ({"p": [0.5], "y": [1]}, "need at least 2 rows"),
    ({"y": [1, 0]}, "missing column(s) p"),
])
def test_score_frame_refuses_what_would_give_nan_rows(frame, fragment):
    with pytest.raises(ValueError) as exc:
        score_frame(pd.DataFrame(frame))
    assert fragment in _one_line(exc)


def test_one_class_keeps_auroc_undefined_without_warnings():
    res = score_frame(pd.DataFrame({"p": [0.2, 0.5, 1.0], "y": [1, 1, 1]}))
    sc = res["rules"]["p"]["y"]
    assert np.isnan(sc["auroc"]) and np.isfinite(sc["brier"]) and sc["prevalence"] == 1.0


def test_two_rows_leave_z_out_with_a_reason_and_the_cli_says_so(tmp_path, capsys):
    """Issue 18: at n = 2 the CLI printed a z without a word; now z is NaN, the JSON and the
    printed notes give the reason, say what z tests and state the log score's clip."""
    from core.calibration.scores import LOG_SCORE_NOTE, SPIEGELHALTER_NOTE
    from core.cli import main

    res = score_frame(pd.DataFrame({"p": [0.2, 0.8], "y": [1.0, 1.0]}))
    assert np.isnan(res["rules"]["p"]["y"]["spiegelhalter_z"])
    notes = res["notes"]
    assert notes["spiegelhalter_z"] == SPIEGELHALTER_NOTE
    assert notes["log_score"] == LOG_SCORE_NOTE
    assert notes["not_reported"] == [{"rule": "p", "label": "y", "field": "spiegelhalter_z",
                                      "reason": "too few items carry its variance (2.0 "
                                                "effective items, need 10)"}]
    path = tmp_path / "two.csv"
    path.write_bytes(b"p,y\n0.2,1\n0.8,1\n")
    assert main(["score", str(path)]) == 0
    out = capsys.readouterr().out
    assert "spiegelhalter_z of p under y is not reported (NaN): too few items" in out
    assert SPIEGELHALTER_NOTE in out and LOG_SCORE_NOTE in out and "34.5 nats" in out


def test_enough_rows_report_z_and_no_reason():
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, 400)
    res = score_frame(pd.DataFrame({"p": p, "y": (rng.random(400) < p) * 1.0}))
    assert np.isfinite(res["rules"]["p"]["y"]["spiegelhalter_z"])
    assert res["notes"]["not_reported"] == []
