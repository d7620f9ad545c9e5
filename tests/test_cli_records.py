"""``python -m core records …`` (seed 002): exit statuses, one-line errors, strict JSON."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.records.world import WORLD_PATH


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    out = tmp_path_factory.mktemp("records") / "resp.jsonl"
    assert main(["records", "read", "--out", str(out), "--replicates", "1"]) == 0
    return out


@pytest.fixture
def broken_world(tmp_path):
    data = json.loads(WORLD_PATH.read_text())
    data["contacts"][5]["name"] = "Alex Becker"  # a fourth Alex
    path = tmp_path / "world.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("argv, status, fragment", [
    (["records"], 2, "required"),
    (["records", "nope"], 2, "invalid choice"),
    (["records", "render", "G"], 2, "invalid choice: 'G'"),
    (["records", "check", "--today", "6/9/2026"], 2, "must be an ISO date"),
    (["records", "check", "--world", "/nonexistent/w.json"], 2, "no such file"),
    (["records", "read"], 2, "--out"),
    (["records", "read", "--out", "/tmp", "--replicates", "1"], 2, "is a directory"),
    (["records", "read", "--out", "/tmp/x.jsonl", "--replicates", "0"], 2, "must be in [1, 10]"),
    (["records", "score", "/nonexistent.jsonl"], 2, "no such file"),
    (["records", "score", str(WORLD_PATH), "--bootstrap", "5"], 2, "must be in [100, 20000]"),
])
def test_bad_input_exits_2_with_one_line(argv, status, fragment, capsys):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_check_passes_and_writes_strict_json(tmp_path, capsys):
    out = tmp_path / "check.json"
    assert main(["records", "check", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["ok"] is True and report["today"] == "2026-09-06"
    arms = {a["arm"]: a for a in report["arms"]}
    assert [arms[a]["missing"] for a in "ABD"] == [0, 0, 0]
    assert all(arms[a]["missing"] > 0 for a in "CEF")
    assert report["wrong"] == {a: [] for a in "ABCDEF"}
    assert "completeness" in capsys.readouterr().out


def test_notes_that_cannot_say_which_contact_fail_the_completeness_check(tmp_path, capsys):
    """Two contacts called Alex Chen: "with Alex Chen" names neither, so arm A misses the
    Berlin and Lisbon companions' identity (exit 1, a failed check)."""
    data = json.loads(WORLD_PATH.read_text())
    for c in data["contacts"]:
        if c["id"] == "C02":
            c["name"] = "Alex Chen"
    world = tmp_path / "w.json"
    world.write_text(json.dumps(data))
    out = tmp_path / "check.json"
    assert main(["records", "check", "--world", str(world), "--json", str(out)]) == 1
    report = json.loads(out.read_text())
    assert "journey J04 companion: C02" in report["missing"]["A"]
    assert "journey J01 companion: C03" in report["missing"]["A"]
    assert report["missing"]["D"] == []  # D names companions by contact id


@pytest.mark.parametrize("command", [["check"], ["items"], ["render", "D"]])
def test_a_broken_world_exits_1_naming_the_check(command, broken_world, capsys):
    assert main(["records", *command, "--world", str(broken_world)]) == 1
    captured = capsys.readouterr()
    assert "[shared_first_name]" in captured.out + captured.err


def test_a_world_file_that_is_not_json_is_bad_input(tmp_path, capsys):
    bad = tmp_path / "w.json"
    bad.write_text("{facts: [")
    assert main(["records", "check", "--world", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not JSON" in err and len(err.strip().splitlines()) == 1


def test_the_wrong_today_fails_the_expiry_check(capsys):
    assert main(["records", "check", "--today", "2026-01-01"]) == 1
    assert "[expiries] fact F17" in capsys.readouterr().out


def test_items_json_has_every_reference(tmp_path):
    out = tmp_path / "items.json"
    assert main(["records", "items", "--json", str(out)]) == 0
    items = json.loads(out.read_text())["items"]
    assert len(items) == 43 and sum(i["reference"] is None for i in items) == 5
    assert next(i for i in items if i["item_id"] == "CONF-4")["reference"] == "A+"


def test_render_prints_the_arm(tmp_path, capsys):
    out = tmp_path / "d.json"
    assert main(["records", "render", "D", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("POLICY CP-01") and json.loads(out.read_text())["chars"] == len(
        text.rstrip("\n"))


def test_read_then_score(responses, tmp_path, capsys):
    lines = responses.read_text().splitlines()
    assert len(lines) == 43 * 6
    out = tmp_path / "score.json"
    assert main(["records", "score", str(responses), "--bootstrap", "200", "--json",
                 str(out)]) == 0
    report = json.loads(out.read_text())
    m = {(r["arm"], r["measure"]): r["value"] for r in report["measures"]}
    assert m[("D", "M1")] == 1 and m[("C", "M2")] is None  # strict JSON: NaN is null
    assert len(report["comparisons"]) == 13 and report["unknown_items"] == []


def test_score_names_the_malformed_line(responses, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    lines = responses.read_text().splitlines()
    bad.write_text("\n".join(lines[:3] + ['{"item_id": "CURR-1"'] + lines[3:]) + "\n")
    assert main(["records", "score", str(bad), "--bootstrap", "100"]) == 2
    err = capsys.readouterr().err
    assert "line 4: not JSON" in err and len(err.strip().splitlines()) == 1


def test_score_reports_unknown_items(responses, tmp_path, capsys):
    extra = tmp_path / "extra.jsonl"
    row = json.loads(responses.read_text().splitlines()[0])
    extra.write_text(responses.read_text() + json.dumps({**row, "item_id": "ZZZ-1"}) + "\n")
    assert main(["records", "score", str(extra), "--bootstrap", "100"]) == 0
    assert f"line {43 * 6 + 1}: unknown item 'ZZZ-1', not scored" in capsys.readouterr().err


def test_an_earlier_today_does_not_use_records_captured_later(tmp_path):
    """On 2026-08-01 the payslip (S10) and the phone sync (S05) are not captured yet, so the
    salary and mobile conflicts are not live: the checks say so (exit 1)."""
    out = tmp_path / "check.json"
    assert main(["records", "check", "--today", "2026-08-01", "--json", str(out)]) == 1
    failures = {(f["check"], f["record"]) for f in json.loads(out.read_text())["failures"]}
    assert ("conflicts_live", "attribute monthly_salary") in failures
    assert ("conflicts_live", "attribute mobile_number") in failures
