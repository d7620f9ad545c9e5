"""The claims table, the importer's validation, the normalisers, wide ↔ long (issue 21)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.fusion.claims import Claims
from core.fusion.importer import Caps, claims_from_frame, read_claims, to_wide
from core.fusion.normalise import (
    CaseWhitespace,
    NumericTolerance,
    TimeTolerance,
    parse_times,
)

LONG = "item,source,claim,truth\na,x,1,1\na,y,2,1\nb,x,3,\nb,y,3,\nb,z,1,\n"


def _csv(text: str) -> bytes:
    return text.encode()


def test_long_csv_is_encoded_with_sorted_name_tables():
    r = read_claims(_csv(LONG))
    c = r.claims
    assert c.items == ("a", "b") and c.sources == ("x", "y", "z")
    assert c.classes == ("1", "2", "3")
    assert c.item.tolist() == [0, 0, 1, 1, 1]
    assert c.claim.tolist() == [0, 1, 2, 2, 0]
    assert c.truth.tolist() == [0, -1]
    assert c.scope == "global"
    assert any("one item" in w for w in r.warnings)  # source z


def test_column_mapping_and_extra_columns():
    frame = pd.DataFrame({"task": ["t1", "t1", "t2"], "worker": ["w1", "w2", "w1"],
                          "label": ["A", "B", "A"], "other": [1, 2, 3]})
    r = claims_from_frame(frame, columns={"item": "task", "source": "worker", "claim": "label"})
    assert r.claims.n_claims == 3 and r.claims.truth is None
    assert dict(r.columns)["item"] == "task"


def test_dataframe_values_become_strings_and_missing_truth_is_unknown():
    frame = pd.DataFrame({"item": [1, 1, 2], "source": ["x", "y", "x"], "claim": [0, 1, 1],
                          "truth": [1.0, 1.0, np.nan]})
    c = claims_from_frame(frame).claims
    assert c.items == ("1", "2") and c.classes == ("0", "1", "1.0")
    assert c.truth.tolist() == [2, -1]


BAD = [
    ("item,source,claim\na,x,1\n,y,2\n", "row 2: empty item"),
    ("item,source,claim\na,x,1\na,,2\n", "row 2: empty source"),
    ("item,source,claim\na,x,1\na,y,\n", "row 2: empty claim"),
    ("item,source,claim\na,x,1\nb,x,1\na,x,2\n",
     "row 3: source 'x' already claimed item 'a' at row 1"),
    ("item,source,claim,weight\na,x,1,1\na,y,2,abc\n", "row 2, column 'weight'"),
    ("item,source,claim,weight\na,x,1,-1\na,y,2,1\n", "row 1, column 'weight'"),
    ("item,source,claim,truth\na,x,1,1\na,y,2,2\n", "row 2: item 'a' has a second truth"),
    ("item,source,claim,split\na,x,1,train\na,y,2,test\n", "row 2: item 'a' has a second split"),
    ("item,source\na,x\n", "no claim column"),
    ("item,source,claim\n", "no rows"),
    ("item,source,claim\na,x,1\nb,y,2,9\n", "CSV"),
    ("", "empty"),
]


@pytest.mark.parametrize("text, expected", BAD, ids=[b[1][:30] for b in BAD])
def test_each_bad_table_gets_its_own_one_line_error(text, expected):
    with pytest.raises(ValueError) as info:
        read_claims(_csv(text))
    msg = str(info.value)
    assert expected in msg, msg
    assert "\n" not in msg


def test_caps_name_the_limit_and_the_row():
    long_field = "item,source,claim\na,x,1\na,y," + "z" * 50 + "\n"
    with pytest.raises(ValueError, match=r"row 2, column 'claim': 50 characters; the cap is 10"):
        read_claims(_csv(long_field), caps=Caps(max_field_chars=10))
    with pytest.raises(ValueError, match="3 rows; the cap is 2"):
        read_claims(_csv("item,source,claim\na,x,1\na,y,1\nb,x,2\n"), caps=Caps(max_rows=2))
    with pytest.raises(ValueError, match="bytes; the cap is 10"):
        read_claims(_csv(LONG), caps=Caps(max_bytes=10))
    with pytest.raises(ValueError, match="4 columns; the cap is 3"):
        read_claims(_csv(LONG), caps=Caps(max_columns=3))


def test_bad_encoding_names_the_line():
    data = b"item,source,claim\na,x,1\na,y,\xff\xfe\n"
    with pytest.raises(ValueError, match=r"^line 3: not utf-8"):
        read_claims(data)
    assert read_claims(data, encoding="latin-1").claims.n_claims == 2


def test_duplicates_first_keeps_the_first_and_warns():
    r = read_claims(_csv("item,source,claim\na,x,1\na,y,2\na,x,2\n"), duplicates="first")
    assert r.claims.n_claims == 2 and r.n_duplicates_dropped == 1
    assert r.claims.claim[r.claims.source == 0].tolist() == [0]
    assert any("first repeat at row 3, of row 1" in w for w in r.warnings)


def test_warnings_items_with_one_claim_and_unreachable_truth():
    r = read_claims(_csv("item,source,claim,truth\na,x,1,1\na,y,1,1\nb,x,2,3\nb,y,2,3\nc,x,1,\n"))
    text = " | ".join(r.warnings)
    assert "1 item(s) with one claim" in text and "'c'" in text
    assert "whose truth no source claims: 'b'" in text
    assert "1 of 3 items have no truth" in text


def test_claims_refuses_inconsistent_arrays():
    kw = dict(items=("a",), sources=("x", "y"), classes=("0", "1"))
    with pytest.raises(ValueError, match="row 2: source 'x' already claimed item 'a' at row 1"):
        Claims(item=[0, 0], source=[0, 0], claim=[0, 1], **kw)
    with pytest.raises(ValueError, match="row 2: claim code 5 is outside 0..1"):
        Claims(item=[0, 0], source=[0, 1], claim=[0, 5], **kw)
    with pytest.raises(ValueError, match="sorted and unique"):
        Claims(item=[0], source=[0], claim=[0], items=("a",), sources=("y", "x"),
               classes=("0",))
    with pytest.raises(ValueError, match="item 'b' has no claim"):
        Claims(item=[0], source=[0], claim=[0], items=("a", "b"), sources=("x",),
               classes=("0",))


def test_first_seen_rank_follows_row_order():
    c = read_claims(_csv("item,source,claim\na,x,b\na,y,c\nb,x,a\nb,y,c\n")).claims
    assert c.classes == ("a", "b", "c")
    assert c.first_seen_rank().tolist() == [2, 0, 1]


def test_parquet_and_csv_agree(tmp_path):
    frame = pd.read_csv(io.StringIO(LONG), dtype=str, keep_default_na=False)
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    a, b = read_claims(path).claims, read_claims(_csv(LONG)).claims
    assert a.items == b.items and a.classes == b.classes
    assert (a.claim == b.claim).all() and (a.truth == b.truth).all()
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        read_claims(b"PAR1 garbage", file_type="parquet")


def _same(a: Claims, b: Claims) -> None:
    assert a.items == b.items and a.sources == b.sources and a.classes == b.classes
    ka = sorted(zip(a.item.tolist(), a.source.tolist(), a.claim.tolist(), strict=True))
    kb = sorted(zip(b.item.tolist(), b.source.tolist(), b.claim.tolist(), strict=True))
    assert ka == kb
    if a.truth is None:
        assert b.truth is None
    else:
        assert (a.truth == b.truth).all()


names = st.text(alphabet="abcXY _-1", min_size=1, max_size=4).filter(
    lambda s: s.strip() == s and s not in ("item", "truth", "split"))


@st.composite
def tables(draw):
    items = sorted(draw(st.sets(names, min_size=1, max_size=5)))
    sources = sorted(draw(st.sets(names, min_size=1, max_size=4)))
    classes = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    rows = []
    for i in items:
        chosen = draw(st.lists(st.sampled_from(sources), min_size=1, unique=True))
        rows += [(i, s, draw(st.sampled_from(classes))) for s in chosen]
    truth = {i: draw(st.one_of(st.just(""), st.sampled_from(classes))) for i in items}
    return pd.DataFrame([(i, s, c, truth[i]) for i, s, c in rows],
                        columns=["item", "source", "claim", "truth"])


@settings(max_examples=40, deadline=None)
@given(tables())
def test_wide_long_round_trip(frame):
    long = claims_from_frame(frame).claims
    wide = to_wide(long)
    text = wide.to_csv(index=False)
    back = read_claims(text.encode(), layout="wide", columns={"truth": "truth"}).claims
    _same(long, back)
    again = claims_from_frame(back.to_frame()).claims
    _same(long, again)


def test_wide_layout_reads_empty_cells_as_no_claim():
    text = "item,truth,s1,s2,s3\na,1,1,,2\nb,,,3,3\n"
    c = read_claims(_csv(text), layout="wide").claims
    assert c.n_claims == 4 and c.sources == ("s1", "s2", "s3")
    with pytest.raises(ValueError, match=r"^header: no source column 'zz'"):
        read_claims(_csv(text), layout="wide", columns={"sources": ["s1", "zz"]})


def test_case_whitespace_normaliser():
    r = read_claims(_csv("item,source,claim,truth\na,x, Gate  B5 ,gate b5\na,y,gate b5,\n"),
                    normalise=[CaseWhitespace()])
    assert r.claims.classes == ("gate b5",) and r.claims.truth.tolist() == [0]
    assert "casefolded" in r.rules[0]


def test_parse_times_rules():
    got = parse_times(["0:05", "12:30 pm", "12:30 a.m.", "7:05 P", "13:00 pm", "9:7"])
    assert got[:4].tolist() == [5.0, 750.0, 30.0, 1145.0]
    assert np.isnan(got[4:]).all()


def test_time_tolerance_opens_clusters_without_chaining():
    # 10:00 10:06 10:12 on one item: 10:12 is more than 10 minutes from the opening 10:00
    frame = pd.DataFrame({
        "item": ["f"] * 6 + ["g"] * 2,
        "source": list("abcdef") + list("ab"),
        "claim": ["10:00", "10:06", "10:06", "10:12", "C5", "10:12", "9:00", "9:11"],
        "truth": ["10:03"] * 6 + ["9:00"] * 2})
    c = claims_from_frame(frame, normalise=[TimeTolerance(10)]).claims
    out = c.to_frame()
    f = out[out.item == "f"].set_index("source").claim
    assert f.to_dict() == {"a": "10:06", "b": "10:06", "c": "10:06", "d": "10:12",
                           "e": "C5", "f": "10:12"}
    g = out[out.item == "g"].set_index("source").claim
    assert g.to_dict() == {"a": "9:00", "b": "9:11"}
    assert c.classes[c.truth[c.items.index("f")]] == "10:06"


def test_numeric_tolerance_and_truth_outside_any_window():
    frame = pd.DataFrame({"item": ["p"] * 4, "source": list("wxyz"),
                          "claim": ["1.00", "1.04", "1.04", "2"], "truth": ["1.5"] * 4})
    c = claims_from_frame(frame, normalise=[NumericTolerance(0.05)]).claims
    assert sorted(c.classes) == ["1.04", "1.5", "2"]
    assert c.classes[c.truth[0]] == "1.5"
    with pytest.raises(ValueError, match="tolerance"):
        claims_from_frame(frame, normalise=[NumericTolerance(-1)])


def test_shipped_flight_with_the_authors_tolerance_keeps_every_row():
    r = read_claims("data/conflict/flight-2011-12-01/flight_2011-12-01.csv",
                    normalise=[TimeTolerance(10)])
    plain = read_claims("data/conflict/flight-2011-12-01/flight_2011-12-01.csv")
    assert r.claims.n_claims == plain.claims.n_claims == 8428
    assert r.claims.n_classes < plain.claims.n_classes


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=200),
                 st.text(alphabet='ab,;"\n\r\t x1\x00é', max_size=120).map(str.encode),
                 st.lists(st.lists(st.sampled_from(["", "a", "b", "1", '"', "x y"]),
                                   min_size=1, max_size=5), min_size=1, max_size=6)
                 .map(lambda rows: ("item,source,claim\n" + "\n".join(
                     ",".join(r) for r in rows)).encode())),
       st.sampled_from(["long", "wide"]))
def test_hostile_bytes_are_read_or_refused_in_one_line(data, layout):
    try:
        r = read_claims(data, layout=layout)
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert r.claims.n_claims >= 1


def test_a_wide_table_s_source_names_share_the_field_cap():
    """A wide table's sources are header cells: a name over the cap is refused like a cell."""
    text = "item,ok," + "s" * 11 + "\na,x,y\n"
    with pytest.raises(ValueError, match="header: a column name of 11 characters; the cap is 10"):
        read_claims(text.encode(), layout="wide", caps=Caps(max_field_chars=10))
