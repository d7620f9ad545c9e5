"""Answer normalisation of seed 002's scoring: case, whitespace, numbers, dates, lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.records.normalise import answer_key, normalise_dates, same_answer


@pytest.mark.parametrize("a, b, kind", [
    ("3,200", "3200", "number"), ("£3,450", "3450.00", "number"), ("£10.99", "10.99", "number"),
    ("2026-09-06", "6 September 2026", "date"), ("6th Sept 2026", "September 6, 2026", "date"),
    ("06/09/2026", "2026-09-06", "date"), ("  corvid HEALTH   ltd ", "Corvid Health Ltd", "text"),
    ("07700900123", "07700 900123", "text"), ("s02", "S02", "source"),
    ("GB29NWBK60161331926819", "GB29 NWBK 6016 1331 9268 19", "text"),
    ("Priya Shah; Alex Chen and Ingrid Lindqvist", ("Alex Chen", "Ingrid Lindqvist",
                                                    "Priya Shah"), "list"),
])
def test_equal_after_normalisation(a, b, kind):
    assert same_answer(a, b, kind)


@pytest.mark.parametrize("a, b, kind", [
    ("A", "A+", "text"), ("O+", "A+", "text"), ("3,450", "3,200", "number"),
    ("£3,450 or £3,200", "£3,450", "number"), ("41 Ashdown Road", "14 Ashdown Road", "text"),
    ("Alex Chen", ("Alex Chen", "Priya Shah"), "list"), (None, "x", "text"), ("", "", "text"),
    ("7 September 2026", "2026-09-06", "date"),
])
def test_different_after_normalisation(a, b, kind):
    assert not same_answer(a, b, kind)


def test_invalid_dates_are_left_alone():
    assert normalise_dates("31/02/2026") == "31/02/2026"


@given(st.dates(), st.sampled_from(["{d.day} {m} {d.year}", "{m} {d.day}, {d.year}",
                                    "{d.day:02d}/{d.month:02d}/{d.year}"]))
def test_every_written_date_is_its_iso_date(d, fmt):
    month = d.strftime("%B")
    written = fmt.format(d=d, m=month)
    if d.year >= 1000:
        assert answer_key(written, "date") == answer_key(d.isoformat(), "date")
