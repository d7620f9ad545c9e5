"""A model's disclosure (M9–M11) and write-back (M12–M13) responses scored from files (issue 19
point 4): the contracts, the round trip reference → file → score, the command line's tracks,
the run plan, and a file with every kind of malformed line refused line by line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main
from core.records.disclosure import (
    DECISION_FIELDS,
    load_disclosure,
    read_decisions,
    reference_decisions,
    score_decision_file,
    score_disclosure,
)
from core.records.inputs import InputError, dump_lines
from core.records.items import build_items
from core.records.protocol import REPLY_FIELDS, SYSTEM_PROMPT, plan_calls, response_lines
from core.records.readers import read
from core.records.score import read_responses, score_responses
from core.records.world import load_world
from core.records.writeback import (
    WRITEBACK_FIELDS,
    load_updates,
    read_writebacks,
    reference_writebacks,
    score_writeback_file,
    score_writebacks,
)

W = load_world()
ITEMS = build_items(W)
REQ, INFO = load_disclosure()
UPDATES = load_updates()


# ---------------------------------------------------------------- round trips

def test_decisions_round_trip_reproduces_the_built_in_scores():
    decisions = reference_decisions(INFO, REQ)
    built_in = score_disclosure(decisions, INFO)
    res = score_decision_file(read_decisions(dump_lines(decisions)), INFO)
    pd.testing.assert_frame_equal(res.table, built_in)
    assert res.n_lines == 216 and res.unknown == () and set(res.missing.values()) == {0}
    assert len(res.errors) == built_in.set_index("condition").loc["none", "M11"] == 30
    assert set(res.errors["condition"]) == {"none"}


def test_writebacks_round_trip_reproduces_the_built_in_scores():
    rows = reference_writebacks(W, UPDATES)
    built_in = score_writebacks(rows, W, UPDATES)
    res = score_writeback_file(read_writebacks(dump_lines(rows)), W, UPDATES)
    pd.testing.assert_frame_equal(res.table[["arm", "updates", "M12", "M13"]], built_in)
    assert res.table.set_index("arm").loc["D", ["M12", "M13"]].tolist() == [1, 1]
    # A writes the note on the day it arrives: every start right but the correction's
    assert res.table.set_index("arm").loc["A", "start"] == pytest.approx(5 / 6)
    assert res.missing == {"A": 0, "C": 0, "D": 0} and res.n_lines == 36


@pytest.mark.parametrize("track", ["items", "disclosure", "writeback"])
def test_cli_read_then_score_is_the_built_in_score(track, tmp_path, capsys):
    out, report = tmp_path / f"{track}.jsonl", tmp_path / "score.json"
    assert main(["records", "read", "--track", track, "--out", str(out)]) == 0
    assert main(["records", "score", str(out), "--track", track, "--bootstrap", "200",
                 "--json", str(report)]) == 0
    got = json.loads(report.read_text())
    assert got["track"] == track
    if track == "items":
        want = score_responses(read(W, ITEMS), ITEMS, W, n_boot=200, seed=0)
        m = want.measures
        assert got["measures"] == m.astype(object).where(m.notna(), None).to_dict(
            orient="records")  # NaN as null, like the CLI
    elif track == "disclosure":
        want = score_disclosure(reference_decisions(INFO, REQ), INFO)
        assert got["conditions"] == want.to_dict(orient="records")
        assert len(got["critical_errors"]) == 30
    else:
        want = score_writebacks(reference_writebacks(W, UPDATES), W, UPDATES)
        assert [{k: r[k] for k in ("arm", "updates", "M12", "M13")}
                for r in got["arms"]] == want.to_dict(orient="records")


def test_unknown_ids_are_reported_not_scored(tmp_path, capsys):
    rows = reference_decisions(INFO, REQ, replicates=1)
    rows.append({**rows[0], "info_id": "D99"})
    path = tmp_path / "d.jsonl"
    path.write_bytes(dump_lines(rows))
    assert main(["records", "score", str(path), "--track", "disclosure"]) == 0
    assert "line 109: unknown information item 'D99', not scored" in capsys.readouterr().err
    wb = reference_writebacks(W, UPDATES, replicates=1)[:-1]  # D misses U6
    res = score_writeback_file([*wb, {**wb[0], "update_id": "U9"}], W, UPDATES)
    assert res.unknown == ((18, "U9"),) and res.missing == {"A": 0, "C": 0, "D": 1}


def test_a_model_that_releases_a_critical_item_is_counted_once_per_release():
    base = [d for d in reference_decisions(INFO, REQ, replicates=1)
            if d["condition"] == "structured"]
    leak = [{**d, "release": True} if (d["requester"], d["info_id"]) == ("web_form", "D05")
            else d for d in base]
    res = score_decision_file(leak, INFO)
    assert res.table.loc[0, "M11"] == 1 and len(res.errors) == 1
    assert res.errors.iloc[0][["requester", "info_id"]].tolist() == ["web_form", "D05"]
    assert res.missing == {"none": 36, "prose": 36, "structured": 0}


def test_write_back_ids_compare_as_m2_does():
    d = next(r for r in reference_writebacks(W, UPDATES, arms=("D",), replicates=1)
             if r["update_id"] == "U1")
    sloppy = {**d, "closes_record_ids": [" f03", "F02 "]}
    assert score_writeback_file([sloppy], W, UPDATES).table.loc[0, "M12"] == 1
    wrong_end = {**d, "end": "2026-09-20"}
    row = score_writeback_file([wrong_end], W, UPDATES).table.iloc[0]
    assert (row["M12"], row["end"], row["closes"]) == (0, 0, 1)


# ---------------------------------------------------------------- every malformed line

def _every_bad_line(good: dict, fields: dict, key_field: str) -> list[tuple[bytes, str]]:
    """One malformed line per kind: the line's bytes and what the message must say."""
    text = json.dumps(good)
    out = [(b'{"caf\xe9": 1}', "is not UTF-8 text"),
           (b"{not json", "not JSON"),
           (text.replace("}", ', "x": NaN}').encode(), "NaN is not JSON"),
           (text.replace("}", f', "{key_field}": {json.dumps(good[key_field])}}}').encode(),
            f'key "{key_field}" twice'),
           (b"[" * 12 + b"]" * 12, "nested too deeply"),
           (json.dumps({**good, "extra": "y" * 10_001}).encode(), "longer than 10,000"),
           (b"[1, 2]", "not a JSON object"),
           (json.dumps({k: v for k, v in good.items() if k != key_field}).encode(),
            f"missing field(s) {key_field}"),
           (json.dumps({**good, "note": 1}).encode(), "unknown field(s) note")]
    wrong = {"replicate": -1, "arm": "Z", "condition": "maybe", "requester": "boss",
             "info_id": "", "item_id": "", "update_id": 7, "release": "yes",
             "answer": 3, "cited_record_ids": "F01", "policy": 1, "declined": "no",
             "stale": "yes", "new_value": ["x"], "start": "20/09/2026",
             "closes_record_ids": [1], "end": "2026-02-30", "kept_prior": None}
    out += [(json.dumps({**good, k: wrong[k]}).encode(), f"{k} must be") for k in fields]
    out.append((text.encode(), "repeats"))  # the good line again
    return out


def _good_lines(track: str) -> list[dict]:
    if track == "items":
        return [r for r in read(W, ITEMS, replicates=1) if r["arm"] == "D"][:3]
    if track == "disclosure":
        return reference_decisions(INFO, REQ, replicates=1)[:3]
    return reference_writebacks(W, UPDATES, replicates=1)[:3]


FIELDS = {"items": dict.fromkeys(["item_id", "arm", "replicate", "answer",
                                  "cited_record_ids", "policy", "declined", "stale"]),
          "disclosure": DECISION_FIELDS, "writeback": WRITEBACK_FIELDS}
KEYS = {"items": "item_id", "disclosure": "info_id", "writeback": "update_id"}


def every_kind_file(track: str) -> tuple[bytes, list[tuple[int, str]]]:
    """Three good lines, then every kind of malformed line: the file and (line, fragment)."""
    good = _good_lines(track)
    bad = _every_bad_line(good[0], FIELDS[track], KEYS[track])
    lines = [json.dumps(g).encode() for g in good] + [b for b, _ in bad]
    return b"\n".join(lines) + b"\n", [(4 + k, f) for k, (_, f) in enumerate(bad)]


@pytest.mark.parametrize("track", ["items", "disclosure", "writeback"])
def test_a_file_with_every_kind_of_malformed_line_is_refused_line_by_line(track, tmp_path,
                                                                          capsys):
    data, expected = every_kind_file(track)
    assert len(expected) <= 20  # the command line's message lists up to twenty
    path = tmp_path / f"{track}.jsonl"
    path.write_bytes(data)
    reader = {"items": read_responses, "disclosure": read_decisions,
              "writeback": read_writebacks}[track]
    with pytest.raises(InputError) as info:
        reader(data, name="f.jsonl")
    got = dict(info.value.problems)
    assert sorted(got) == [n for n, _ in expected]  # every bad line, no good one
    for n, fragment in expected:
        assert fragment in got[n], (n, got[n])
    assert main(["records", "score", str(path), "--track", track]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and not captured.out
    assert f"{len(expected)} malformed line(s)" in err
    for n, _ in expected:
        assert f"line {n}: " in err or f"line {n} is" in err


@pytest.mark.parametrize("argv, fragment", [
    (["read", "--track", "disclosure", "--arms", "A", "--out", "{tmp}/x.jsonl"],
     "the disclosure track has no arms"),
    (["read", "--track", "writeback", "--arms", "B", "--out", "{tmp}/x.jsonl"],
     "the writeback track has arms A, C, D, got B"),
    (["score", "{tmp}/empty.jsonl", "--track", "writeback"], "the file is empty"),
    (["score", "{tmp}/empty.jsonl", "--track", "nope"], "invalid choice"),
    (["plan", "--out", "{tmp}/p.jsonl", "--replicates", "0"], "must be in [1, 10]"),
])
def test_track_options_are_checked(argv, fragment, tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    args = ["records", *[a.format(tmp=tmp_path) for a in argv]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.jsonl").exists()


# ---------------------------------------------------------------- the run plan

def _plan(seed: int = 3):
    return plan_calls(W, ITEMS, infos=INFO, requesters=REQ, updates=UPDATES, seed=seed)


def test_the_plan_is_the_grid_of_section_5_in_a_seeded_random_order():
    calls = _plan()
    per = pd.Series([c["track"] for c in calls]).value_counts().to_dict()
    assert per == {"items": 43 * 6 * 2, "disclosure": 3 * 3 * 2, "writeback": 3 * 6 * 2}
    ids = [c["call_id"] for c in calls]
    assert len(set(ids)) == len(ids) and [c["call"] for c in calls] == list(
        range(1, len(calls) + 1))
    assert ids == [c["call_id"] for c in _plan()] != [c["call_id"] for c in _plan(4)]
    tracks = [c["track"] for c in calls[:60]]
    assert len(set(tracks)) == 3  # shuffled across the whole grid, not track by track
    assert {c["system"] for c in calls} == {SYSTEM_PROMPT}
    c = next(c for c in calls if c["call_id"] == "items/CONF-1/C/0")
    item = next(i for i in ITEMS if i.item_id == "CONF-1")
    assert item.question in c["prompt"] and "F02" not in c["prompt"]  # arm C has no ids
    assert all(f'"{f}"' in c["prompt"] for f in REPLY_FIELDS["items"])
    d = next(c for c in calls if c["call_id"] == "disclosure/prose/web_form/1")
    assert "may be shared with" in d["prompt"] and "release_to" not in d["prompt"]


def test_replies_become_the_scored_files():
    """Replies that say what the reference readers say give their scores exactly."""
    calls = _plan()
    ref = {("items", r["item_id"], r["arm"], r["replicate"]): r for r in read(W, ITEMS)}
    ref |= {("writeback", r["update_id"], r["arm"], r["replicate"]): r
            for r in reference_writebacks(W, UPDATES)}
    dec = {(d["condition"], d["requester"], d["replicate"], d["info_id"]): d["release"]
           for d in reference_decisions(INFO, REQ)}
    files = {"items": [], "disclosure": [], "writeback": []}
    for c in calls:
        k = c["key"]
        if c["track"] == "disclosure":
            reply = {"release": {i: dec[(k["condition"], k["requester"], k["replicate"], i)]
                                 for i in k["info_ids"]}}
        else:
            first = "item_id" if c["track"] == "items" else "update_id"
            reply = ref[(c["track"], k[first], k["arm"], k["replicate"])]
        files[c["track"]] += response_lines(c, reply)
    got = score_responses(read_responses(dump_lines(files["items"])), ITEMS, W, n_boot=100)
    want = score_responses(read(W, ITEMS), ITEMS, W, n_boot=100)
    pd.testing.assert_frame_equal(got.measures, want.measures)
    pd.testing.assert_frame_equal(
        score_decision_file(read_decisions(dump_lines(files["disclosure"])), INFO).table,
        score_disclosure(reference_decisions(INFO, REQ), INFO))
    pd.testing.assert_frame_equal(
        score_writeback_file(read_writebacks(dump_lines(files["writeback"])), W,
                             UPDATES).table[["arm", "updates", "M12", "M13"]],
        score_writebacks(reference_writebacks(W, UPDATES), W, UPDATES))


def test_a_reply_that_breaks_the_contract_gives_a_refused_line():
    c = next(c for c in _plan() if c["track"] == "disclosure")
    lines = response_lines(c, {"release": {"D01": True}})
    assert len(lines) == 12 and lines[1]["release"] is None
    with pytest.raises(InputError, match="line 2: release must be true or false"):
        read_decisions(dump_lines(lines))


def test_cli_plan_writes_the_calls(tmp_path, capsys):
    out, report = tmp_path / "plan.jsonl", tmp_path / "plan.json"
    assert main(["records", "plan", "--out", str(out), "--seed", "3", "--json",
                 str(report)]) == 0
    calls = [json.loads(line) for line in out.read_text().splitlines()]
    assert [c["call_id"] for c in calls] == [c["call_id"] for c in _plan(3)]
    rep = json.loads(report.read_text())
    assert rep["per_track"] == {"items": 516, "disclosure": 18, "writeback": 36}
    assert rep["order"] == [c["call_id"] for c in calls] and rep["system"] == SYSTEM_PROMPT
