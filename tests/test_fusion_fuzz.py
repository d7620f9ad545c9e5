"""Hostile claims tables (issue 21, "Done when": uploads and the CLI refuse hostile tables with
one line): shapes, encodings (UTF-16, Latin-1 bytes, a BOM, NUL bytes, gzip, random bytes),
sizes over small caps, and long/wide mismatches, through the importer and ``python -m core
fuse``. Each table is either accepted (a valid claims table within the caps; exit 0, nothing
on stderr) or refused (a one-line ``ValueError``; exit 2 with one line on stderr).
"""

from __future__ import annotations

import csv
import gzip
import io
import string

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.fusion.importer import Caps, read_claims

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

NAMES = ["item", "source", "claim", "truth", "split", "weight", "s1", "s2", "ITEM", ""]
CHARS = string.ascii_letters[:6] + string.digits[:4] + ' ,;"\n\r\t\x00é€\ufeff\u2028-.'
cells = st.one_of(st.sampled_from(["", "a", "b", "1", "0.5", "-1", "nan", "inf", "x" * 30]),
                  st.text(alphabet=CHARS, max_size=12))


def _encode(draw, text: str) -> bytes:
    kind = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "bom", "utf-16", "latin-1", "nul",
                                 "gzip", "junk"]))
    if kind == "utf-8":
        return text.encode("utf-8")
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if kind == "utf-16":
        return text.encode("utf-16")
    if kind == "latin-1":
        return text.encode("latin-1", errors="replace")
    if kind == "nul":
        raw = text.encode("utf-8")
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + b"\x00" * draw(st.integers(1, 3)) + raw[at:]
    if kind == "gzip":
        return gzip.compress(text.encode("utf-8"))
    return draw(st.binary(max_size=200))


def _csv(draw, header, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


@st.composite
def random_tables(draw):
    """Any header and rows (ragged sometimes); (bytes, layout)."""
    n_cols = draw(st.integers(1, 5))
    header = draw(st.lists(st.sampled_from(NAMES), min_size=n_cols, max_size=n_cols))
    rows = [draw(st.lists(cells, min_size=max(n_cols - 1, 0), max_size=n_cols + 1))
            for _ in range(draw(st.integers(0, 7)))]
    return _encode(draw, _csv(draw, header, rows)), draw(st.sampled_from(["long", "wide"]))


@st.composite
def mutated_tables(draw):
    """A valid long or wide claims table, then up to two mutations; (bytes, layout)."""
    n_items, n_src = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    claims = st.sampled_from(["a", "b", "c", "10:05", " A ", "é"])
    wide = draw(st.booleans())
    truth = draw(st.booleans())
    items = [f"i{k}" for k in range(n_items)]
    srcs = [f"s{k}" for k in range(n_src)]
    grid = [[draw(claims) if (j == 0 or draw(st.booleans())) else "" for j in range(n_src)]
            for _ in items]
    gold = [draw(st.sampled_from(["a", "b", ""])) for _ in items]
    if wide:
        header = ["item", *(["truth"] if truth else []), *srcs]
        rows = [[it, *([g] if truth else []), *row]
                for it, g, row in zip(items, gold, grid, strict=True)]
    else:
        header = ["item", "source", "claim", *(["truth"] if truth else [])]
        rows = [[it, s, c, *([g] if truth else [])]
                for it, g, row in zip(items, gold, grid, strict=True)
                for s, c in zip(srcs, row, strict=True) if c]
    for m in draw(st.lists(st.sampled_from(["blank", "dup", "drop", "extra", "ragged",
                                            "field", "header", "encode"]), max_size=2)):
        if not rows:
            break
        r = draw(st.integers(0, len(rows) - 1))
        if m == "blank":
            rows[r][draw(st.integers(0, len(rows[r]) - 1))] = ""
        elif m == "dup":
            rows.append(list(rows[r]))
        elif m == "drop":
            k = draw(st.integers(0, len(header) - 1))
            header = header[:k] + header[k + 1:]
            rows = [row[:k] + row[k + 1:] for row in rows]
        elif m == "extra":
            header = [*header, draw(st.sampled_from(["weight", "split", "item", "x"]))]
            rows = [[*row, draw(cells)] for row in rows]
        elif m == "ragged":
            rows[r] = rows[r][:-1] if draw(st.booleans()) else [*rows[r], "z"]
        elif m == "field":
            rows[r][draw(st.integers(0, len(rows[r]) - 1))] = draw(cells)
        elif m == "header":
            header[draw(st.integers(0, len(header) - 1))] = draw(st.sampled_from(NAMES))
    text = _csv(draw, header, rows)
    data = _encode(draw, text) if draw(st.integers(0, 3)) == 0 else text.encode("utf-8")
    layout = ("wide" if wide else "long") if draw(st.integers(0, 3)) else \
        ("long" if wide else "wide")  # a quarter read in the other layout
    return data, layout


tables = st.one_of(mutated_tables(), mutated_tables(), random_tables())


caps = st.one_of(
    st.just(Caps(max_bytes=10_000, max_rows=100, max_columns=10, max_field_chars=100)),
    st.builds(Caps, max_bytes=st.sampled_from([40, 120, 10_000]), max_rows=st.integers(1, 8),
              max_columns=st.integers(1, 6), max_field_chars=st.sampled_from([3, 10, 1_000])))


def _check_accepted(res, cap: Caps) -> None:
    c = res.claims
    assert 0 < c.n_claims <= cap.max_rows
    assert res.n_rows <= cap.max_rows
    # every cell is capped, and so is every header cell (a wide table's source names)
    names = (*c.items, *c.classes, *c.sources)
    assert all(len(n) <= cap.max_field_chars for n in names)
    assert all(n != "" for n in (*c.items, *c.sources))
    assert np.bincount(c.item, minlength=c.n_items).min() >= 1


@SETTINGS
@given(table=tables, cap=caps)
def test_the_importer_accepts_within_the_caps_or_refuses_in_one_line(table, cap):
    data, layout = table
    try:
        res = read_claims(data, layout=layout, caps=cap)
    except ValueError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg and "\r" not in msg
        event(f"refused: {msg.split(':')[0][:30]}")
        return
    event("accepted")
    _check_accepted(res, cap)


@SETTINGS
@given(table=tables, cap=caps,
       methods=st.sampled_from([["majority_vote"], ["one_coin_em", "dawid_skene"],
                                ["naive_bayes"], ["accu_depen", "glad"]]))
def test_the_cli_exits_0_or_2_with_one_line(table, cap, methods, tmp_path, capsys):
    data, layout = table
    path = tmp_path / "claims.csv"
    path.write_bytes(data)
    argv = ["fuse", str(path), "--format", layout, "--max-bytes", str(cap.max_bytes),
            "--max-rows", str(cap.max_rows), "--max-columns", str(cap.max_columns),
            "--max-field-chars", str(cap.max_field_chars), "--methods", *methods]
    code = main(argv)
    out, err = capsys.readouterr()
    event(f"exit {code}")
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: fuse: ") and len(err.splitlines()) == 1, err
        assert "Traceback" not in err
    else:
        assert err == ""
        assert all(m in out for m in methods)


frames = st.lists(
    st.fixed_dictionaries({
        "item": st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "b", ""]),
                          st.floats(allow_nan=True, allow_infinity=True)),
        "source": st.one_of(st.none(), st.sampled_from(["s", "t", "u"]), st.booleans()),
        "claim": st.one_of(st.none(), st.integers(0, 2), st.text(alphabet=CHARS, max_size=4)),
        "weight": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True),
                            st.sampled_from(["1", "-2", "x"]))}),
    min_size=0, max_size=6)


@SETTINGS
@given(rows=frames, layout=st.sampled_from(["long", "wide"]), cap=caps)
def test_mixed_type_parquet_tables_are_accepted_or_refused(rows, layout, cap, tmp_path,
                                                           capsys):
    frame = pd.DataFrame(rows, columns=["item", "source", "claim", "weight"]).astype(object)
    frame = frame.map(lambda v: None if v is None else str(v))  # parquet needs one type
    path = tmp_path / "claims.parquet"
    frame.to_parquet(path)
    try:
        res = read_claims(path, layout=layout, caps=cap)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        _check_accepted(res, cap)
    code = main(["fuse", str(path), "--format", layout, "--max-bytes", str(cap.max_bytes),
                 "--max-rows", str(cap.max_rows), "--methods", "majority_vote"])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    assert (err == "") if code == 0 else (len(err.splitlines()) == 1)
