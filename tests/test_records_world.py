"""Seed 002's authored world and its checks: sound as shipped, and each check fails on a copy
broken for it (one broken copy per check)."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from core.records.checks import (
    CHECKS,
    EXPECTED_COUNTS,
    WorldCheckError,
    check_world,
    world_failures,
)
from core.records.engine import conflict_table
from core.records.world import RUN_DATE, WORLD_PATH, load_world, record_tables, world_from_dict

RAW = json.loads(WORLD_PATH.read_text())


def _world(mutate=None):
    data = copy.deepcopy(RAW)
    if mutate:
        mutate(data)
    return world_from_dict(data)


def _fact(data, fid):
    return next(f for f in data["facts"] if f["id"] == fid)


def test_the_shipped_world_passes_every_check():
    w = load_world()
    assert world_failures(w) == []
    check_world(w)
    assert w.run_date == RUN_DATE == dt.date(2026, 9, 6)
    assert (len(w.facts), len({f.attribute for f in w.facts}), len(w.contacts),
            len(w.journeys), len(w.sources)) == (34, 22, 7, 8, 27)


def test_five_conflicts_three_separate_cp01_from_recency():
    table = conflict_table(load_world())
    assert set(table["attribute"]) == {"home_address", "mobile_number", "monthly_salary",
                                       "blood_type", "streaming_price"}
    assert sorted(table.loc[~table["agree"], "attribute"]) == [
        "blood_type", "home_address", "streaming_price"]
    assert set(table["cp01_tier"]) <= {1, 2}
    assert all(4 in tiers for tiers in table["tiers"])


def _drop_fact(d):
    d["facts"].pop()


def _dup_source(d):
    d["sources"][1]["id"] = d["sources"][0]["id"]


def _missing_source(d):
    _fact(d, "F24")["source"] = "S99"


def _disorder(d):
    _fact(d, "F06")["valid_to"] = "2020-01-01"


def _resolve_conflict(d):
    _fact(d, "F13")["value"] = "A+"  # blood type records agree: no live conflict


def _tier_swap(d):
    # the home conflict becomes email against self-report: CP-01 picks an email
    next(s for s in d["sources"] if s["id"] == "S02")["kind"] = "email"


def _balance(d):
    # the self-reported budget note is captured last: recency now disagrees on four
    next(s for s in d["sources"] if s["id"] == "S11")["captured"] = "2026-09-01"


def _unexpire(d):
    _fact(d, "F17")["valid_to"] = "2027-01-01"


def _fourth_alex(d):
    next(c for c in d["contacts"] if c["id"] == "C06")["name"] = "Alex Becker"


@pytest.mark.parametrize("rename, record", [
    (("C07", "Tom Berg"), "first name 'Tom'"),  # two Toms beside the three Alexes
    (("C07", "tom Berg"), "first name 'Tom'"),  # case does not make another name
    (("C07", "Ingrid Berg"), "first name 'Ingrid'"),
])
def test_every_shared_first_name_is_flagged(rename, record):
    def edit(d):
        next(c for c in d["contacts"] if c["id"] == rename[0])["name"] = rename[1]
    failures = [f for f in world_failures(_world(edit)) if f.check == "shared_first_name"]
    assert [f.record for f in failures] == [record]
    assert "shared by 2 contacts" in failures[0].message


BROKEN = {
    "counts": _drop_fact,
    "ids_unique": _dup_source,
    "sources_exist": _missing_source,
    "intervals_ordered": _disorder,
    "conflicts_live": _resolve_conflict,
    "conflicts_prefer_scan_or_sync": _tier_swap,
    "recency_balance": _balance,
    "expiries": _unexpire,
    "shared_first_name": _fourth_alex,
}


def test_every_check_has_a_broken_copy():
    assert set(BROKEN) == set(CHECKS)


@pytest.mark.parametrize("check", CHECKS)
def test_each_check_fails_on_its_broken_copy(check):
    w = _world(BROKEN[check])
    failures = world_failures(w)
    assert check in {f.check for f in failures}, failures
    with pytest.raises(WorldCheckError) as info:
        check_world(w)
    assert f"[{check}]" in str(info.value)
    assert all(f.record and f.message for f in info.value.failures)


@pytest.mark.parametrize("check, record", [
    ("sources_exist", "fact F24"), ("intervals_ordered", "fact F06"),
    ("conflicts_live", "attribute blood_type"), ("expiries", "fact F17"),
    ("conflicts_prefer_scan_or_sync", "attribute home_address"),
])
def test_a_failure_names_the_record(check, record):
    failures = [f for f in world_failures(_world(BROKEN[check])) if f.check == check]
    assert [f.record for f in failures] == [record]


def test_one_error_lists_every_failure():
    def both(d):
        _disorder(d)
        _fourth_alex(d)
    with pytest.raises(WorldCheckError) as info:
        check_world(_world(both))
    assert {f.check for f in info.value.failures} == {"intervals_ordered", "shared_first_name"}


def test_expiries_depend_on_today():
    w = load_world()
    # on 2026-01-01 the passport had not yet expired
    assert "expiries" in {f.check for f in world_failures(w, today=dt.date(2026, 1, 1))}


def test_counts_match_the_seed():
    assert EXPECTED_COUNTS["facts"] == 34 and EXPECTED_COUNTS["sources"] == 27


def test_store_tables_are_iso_and_complete():
    tables = record_tables()
    facts = tables["records_facts"]
    assert len(facts) == 34 and facts["valid_to"].isna().sum() == sum(
        f["valid_to"] is None for f in RAW["facts"])
    assert facts.loc[facts["fact_id"] == "F17", "valid_to"].item() == "2026-03-14"
    assert facts.loc[facts["fact_id"] == "F02", "tier"].item() == 1


def test_a_bad_date_names_the_record():
    with pytest.raises(ValueError, match="fact F01 valid_from"):
        _world(lambda d: _fact(d, "F01").update(valid_from="01/09/2019"))


def test_write_tables_into_duckdb(tmp_path):
    import duckdb

    from core.records.world import write_tables

    con = duckdb.connect(str(tmp_path / "r.duckdb"))
    try:
        names = write_tables(con)
        write_tables(con)  # replacing, not duplicating
        with con.cursor() as cur:
            counts = {n: cur.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0] for n in names}
            open_ends = cur.execute("SELECT count(*) FROM records_facts WHERE valid_to IS NULL"
                                    ).fetchall()[0][0]
    finally:
        con.close()
    assert counts == {"records_facts": 34, "records_sources": 27, "records_contacts": 7,
                      "records_journeys": 8}
    assert open_ends == sum(f["valid_to"] is None for f in RAW["facts"])
