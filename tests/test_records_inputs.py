"""Seed 002's one validated reader (issue 19 point 5): the same limits on the command line and
the page, every refusal one line naming the file and the line (or record and field), exit 2
for malformed input and 1 only for a failed check."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import main
from core.records.inputs import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_LINE_CHARS,
    MAX_LINES,
    InputError,
    _depth_exceeded,
    json_document,
)
from core.records.score import ResponseFormatError, read_responses
from core.records.views import MAX_UPLOAD_BYTES, parse_upload
from core.records.world import WORLD_PATH, load_world, world_from_dict

ROOT = Path(__file__).resolve().parent.parent
RAW = json.loads(WORLD_PATH.read_text())
GOOD = json.dumps({"item_id": "CURR-1", "arm": "D", "replicate": 0, "answer": "x",
                   "cited_record_ids": [], "policy": None, "declined": False, "stale": None})


def _good(rep: int) -> str:
    return GOOD.replace('"replicate": 0', f'"replicate": {rep}')


def test_the_uploader_says_the_cap_of_the_command_line():
    """``server.maxUploadSize`` (MiB, what the uploader prints) is the readers' cap, also the
    Reliability page's, since the setting is one for the whole server."""
    from core.calibration.report import MAX_CSV_BYTES

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_BYTES == MAX_UPLOAD_BYTES
    assert MAX_BYTES == MAX_CSV_BYTES


def _run(argv, capsys) -> tuple[int, str]:
    status = main(argv)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return status, err


# ---------------------------------------------------------------- response files (CLI)

def _bad_file(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("name, data, fragment", [
    ("deep_array", b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 1: nested too deeply"),
    ("deep_object", b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n",
     "line 1: nested too deeply"),
    ("deep_third", (_good(0) + "\n" + _good(1) + "\n").encode()
     + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"\n", "line 3: nested too deeply"),
    ("empty", b"", "the file is empty"),
    ("blank", b"\n  \n\t\r\n", "the file is empty (only blank lines)"),
    ("latin1", (_good(0) + "\n" + _good(1) + "\n").encode() + b'{"answer": "caf\xe9"}\n',
     "line 3 is not UTF-8 text (byte 0xe9 at column 16)"),
    ("long", (GOOD.replace('"x"', json.dumps("y" * MAX_LINE_CHARS)) + "\n").encode(),
     f"line 1: longer than {MAX_LINE_CHARS:,} characters"),
    ("lines", ((_good(0) + "\n") * (MAX_LINES + 1)).encode(),
     f"{MAX_LINES + 1:,} lines, more than the {MAX_LINES:,} allowed"),
])
def test_a_bad_response_file_exits_2_naming_the_line(tmp_path, capsys, name, data, fragment):
    """Before: deep nesting "nested too deeply" without a line (exit 2) or, earlier,
    RecursionError (exit 1); empty and blank files exit 0 with all NaN; Latin-1 named a byte
    offset; no line-length or line-count limit on the command line."""
    status, err = _run(["records", "score", _bad_file(tmp_path, f"{name}.jsonl", data)],
                       capsys)
    assert status == 2 and fragment in err and err.startswith("error: records score: ")


def test_an_oversize_file_is_refused_before_it_is_read(tmp_path, capsys):
    """Before: a 200 MB file ran 3.5 minutes at 760 MB and exited 0. Its size is asked
    first: a sparse file of 200 MiB is refused without reading a byte."""
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(200 * 2**20)
    status, err = _run(["records", "score", str(path)], capsys)
    assert status == 2 and f"209,715,200 bytes, more than the {MAX_BYTES:,} allowed" in err
    with pytest.raises(InputError, match="more than the 20,971,520 allowed"):
        read_responses(b"x" * (MAX_BYTES + 1), name="up.jsonl")


def test_brackets_inside_strings_are_not_nesting():
    text = GOOD.replace('"x"', json.dumps("[{" * 40 + '\\"[[' + "\\" * 3))
    assert read_responses(text.encode())[0][1]["answer"].startswith("[{[{")


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab'),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(alphabet='[{"\\k', max_size=3), kids,
                                      max_size=3), max_leaves=30),
       st.integers(0, 6))
def test_depth_is_measured_as_json_nests(value, limit):
    def depth(v) -> int:
        if isinstance(v, list):
            return 1 + max(map(depth, v), default=0)
        if isinstance(v, dict):
            return 1 + max(map(depth, v.values()), default=0)
        return 0
    assert (_depth_exceeded(json.dumps(value), limit) is None) == (depth(value) <= limit)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400) | st.lists(st.sampled_from(
    [GOOD, _good(1), "{", "[" * 12, "NaN", '{"a": 1, "a": 2}', "\xff", "", " ", "null",
     GOOD.replace("false", "true")]), max_size=12).map(lambda xs: "\n".join(xs).encode()))
def test_any_bytes_are_read_or_refused_with_one_line(data):
    """The reader never fails another way: pairs, or one ValueError of one line."""
    try:
        pairs = parse_upload(data, name="fuzz.jsonl")
    except ValueError as exc:
        assert isinstance(exc, ResponseFormatError) and "\n" not in str(exc)
        assert str(exc).startswith("fuzz.jsonl: ")
    else:
        assert all(isinstance(o, dict) for _, o in pairs)


# ---------------------------------------------------------------- world files

def _world_file(tmp_path, mutate) -> str:
    data = copy.deepcopy(RAW)
    mutate(data)
    path = tmp_path / "world.json"
    path.write_text(json.dumps(data, indent=1))
    return str(path)


def _fact(d, fid):
    return next(f for f in d["facts"] if f["id"] == fid)


def _rec(d, kind, rid):
    return next(r for r in d[kind] if r["id"] == rid)


@pytest.mark.parametrize("mutate, fragment", [
    # before: stored as the text "None", every check passed (exit 0)
    (lambda d: _fact(d, "F01").update(value=None),
     "fact F01 value: must be a non-empty string, got null"),
    (lambda d: _fact(d, "F01").update(value=2900), "fact F01 value: must be a non-empty "
                                                   "string, got 2900"),
    # before: "unexpected TypeError" (exit 1)
    (lambda d: _rec(d, "sources", "S01").update(captured=None),
     "source S01 captured: must be an ISO date (YYYY-MM-DD), got null"),
    (lambda d: _rec(d, "journeys", "J01").update(depart=None),
     "journey J01 depart: must be an ISO date (YYYY-MM-DD), got null"),
    # before: "unexpected IndexError" (exit 1)
    (lambda d: _rec(d, "contacts", "C01").update(name=""),
     "contact C01 name: must be a non-empty string, got \"\""),
    (lambda d: _rec(d, "contacts", "C01").update(name="   "), "contact C01 name"),
    # before: a failed check of several lines (exit 1)
    (lambda d: _fact(d, "F06").update(valid_to="2020-01-01"),
     "fact F06 valid_to: 2020-01-01 is before valid_from"),
    (lambda d: _rec(d, "journeys", "J02").update({"return": "2000-01-01"}),
     "journey J02 return: 2000-01-01 is before depart"),
    (lambda d: _fact(d, "F01").update(valid_from="20190901"),
     "fact F01 valid_from: must be an ISO date (YYYY-MM-DD), got \"20190901\""),
    (lambda d: _fact(d, "F01").update(vaild_to=None), "fact F01: unknown field(s) vaild_to"),
    (lambda d: _fact(d, "F01").pop("source"), "fact F01: missing field 'source'"),
    (lambda d: d["facts"].append(7), "fact #35: must be an object, got 7"),
    (lambda d: d.update(facts={"F01": 1}), "facts: must be a list of objects"),
    (lambda d: _rec(d, "journeys", "J01").update(companion=""), "journey J01 companion"),
    (lambda d: d.update(conflicts="home_address"), "conflicts: must be a list of strings"),
    (lambda d: d["tiers"].update({"email": "3"}), "tiers: must be an object of integers"),
])
def test_a_bad_world_file_exits_2_naming_record_and_field(tmp_path, capsys, mutate, fragment):
    path = _world_file(tmp_path, mutate)
    status, err = _run(["records", "check", "--world", path], capsys)
    assert status == 2 and fragment in err and path in err
    with pytest.raises(ValueError, match="^" + path):
        load_world(path)


def test_world_from_dict_checks_types_and_the_checks_still_see_inverted_intervals():
    """``world_from_dict`` builds worlds for the checks' own tests: an inverted interval is
    built (``intervals_ordered`` reports it) while ``load_world`` refuses the file."""
    from core.records.checks import world_failures

    data = copy.deepcopy(RAW)
    _fact(data, "F06")["valid_to"] = "2020-01-01"
    assert "intervals_ordered" in {f.check for f in world_failures(world_from_dict(data))}
    _fact(data, "F01")["value"] = None
    with pytest.raises(ValueError, match="fact F01 value"):
        world_from_dict(data)


@pytest.mark.parametrize("data, fragment", [
    (b"", "the file is empty"),
    (b"  \n\n", "the file is empty (only blank lines)"),
    (b'{\n "facts": [\n "caf\xe9"\n ]\n}\n', "line 3 is not UTF-8 text"),
    (b'{\n"a":\n' + b"[" * 11 + b"]" * 11 + b"\n}", "line 3: nested too deeply"),
    (b'{"a": NaN}', "NaN is not JSON"),
    (b'{"a": 1,\n "a": 2}', 'key "a" twice'),
    (b'{"facts": [', "not JSON"),
])
def test_a_world_file_that_is_not_strict_json_text(tmp_path, capsys, data, fragment):
    path = tmp_path / "w.json"
    path.write_bytes(data)
    status, err = _run(["records", "check", "--world", str(path)], capsys)
    assert status == 2 and fragment in err
    with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        json_document(path)


def test_the_shipped_world_loads_and_a_failed_check_is_still_exit_1(tmp_path, capsys):
    assert len(load_world().facts) == 34
    path = _world_file(tmp_path, lambda d: _rec(d, "contacts", "C07").update(name="Alex B"))
    assert main(["records", "check", "--world", path]) == 1
    assert "[shared_first_name]" in capsys.readouterr().out
