"""Reply validation, prompts and the call cache of ``core.llm`` (seed 000 §9.6, §9.7)."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.cache import CallCache, cache_key
from core.llm.prompts import ANSWER_SYSTEM, QUESTION_TEXT, answer_prompt, extract_prompt
from core.llm.schema import ReplyError, parse_json, validate_answers, validate_extraction
from core.testbed.questions import QIDS, QUESTIONS, SOURCES, question


def _answers():
    return {"answers": {q.qid: {"answer": q.labels[-1], "would_skip": i % 2 == 0}
                        for i, q in enumerate(QUESTIONS)}}


def _extraction():
    return {q.qid: {s: (q.labels[0] if s in q.informative else None) for s in SOURCES}
            for q in QUESTIONS}


def test_a_valid_answer_reply_gives_every_question():
    out = validate_answers(json.dumps(_answers()))
    assert list(out) == list(QIDS)
    assert out["A1"] == (question("A1").labels[-1], True)
    assert out["A2"] == (question("A2").labels[-1], False)


def _drop(d, *path):
    for k in path[:-1]:
        d = d[k]
    del d[path[-1]]


def _set(value, *path):
    def edit(d):
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return edit


ANSWER_VIOLATIONS = [
    ("no answers key", lambda d: _drop(d, "answers"), "misses answers"),
    ("a question missing", lambda d: _drop(d, "answers", "Ctrl2"), "answers misses Ctrl2"),
    ("an unknown question", _set({"answer": "x", "would_skip": False}, "answers", "Z9"),
     "unexpected key"),
    ("an extra top-level key", _set(1, "notes"), "unexpected key"),
    ("a label outside the space", _set("7_or_more", "answers", "A1", "answer"),
     "answers.A1.answer"),
    ("a null answer", _set(None, "answers", "A2", "answer"), "answers.A2.answer"),
    ("spaces instead of underscores", _set("20 or more", "answers", "A1", "answer"),
     "answers.A1.answer"),
    ("would_skip as a string", _set("true", "answers", "B3", "would_skip"),
     "answers.B3.would_skip"),
    ("would_skip missing", lambda d: _drop(d, "answers", "C2", "would_skip"),
     "answers.C2 misses would_skip"),
    ("a cell that is a list", _set(["20_or_more"], "answers", "A1"), "answers.A1 must be"),
]


@pytest.mark.parametrize("name, edit, where", ANSWER_VIOLATIONS, ids=[v[0] for v in
                                                                      ANSWER_VIOLATIONS])
def test_answer_schema_violations_are_refused_not_coerced(name, edit, where):
    reply = copy.deepcopy(_answers())
    edit(reply)
    with pytest.raises(ReplyError) as info:
        validate_answers(json.dumps(reply))
    assert info.value.reason == "schema_violation"
    assert where in info.value.detail


@pytest.mark.parametrize("text, ok", [
    ('{"a": 1}', True),
    ('```json\n{"a": 1}\n```', True),
    ('```\n{"a": 1}\n```', True),
    ('Here it is: {"a": 1}', False),
    ('{"a": 1} thanks', False),
    ('[{"a": 1}]', False),
    ('{"a": ', False),
    ("", False),
    ("   ", False),
])
def test_parse_json_takes_one_object_and_at_most_a_wrapping_fence(text, ok):
    if ok:
        assert parse_json(text) == {"a": 1}
    else:
        with pytest.raises(ReplyError) as info:
            parse_json(text)
        assert info.value.reason == "invalid_json"


def test_a_valid_extraction_keeps_labels_and_nulls():
    ex = validate_extraction(json.dumps(_extraction()))
    assert ex.forced_null == 0
    assert ex.cells["A1"]["objective_log"] is None  # A1 is not mapped to the objective log
    assert ex.cells["A1"]["device_log"] == question("A1").labels[0]


def test_labels_outside_the_source_question_map_are_forced_to_null_and_counted():
    reply = _extraction()
    unmapped = [(q.qid, s) for q in QUESTIONS for s in SOURCES if s not in q.informative]
    assert unmapped, "the map has unmapped cells"
    for qid, s in unmapped:
        reply[qid][s] = question(qid).labels[0]
    ex = validate_extraction(reply)
    assert ex.forced_null == len(unmapped)
    assert all(ex.cells[q][s] is None for q, s in unmapped)


@pytest.mark.parametrize("edit, where", [
    (lambda d: _drop(d, "G2"), "misses G2"),
    (lambda d: _drop(d, "A1", "planner"), "A1 misses planner"),
    (_set("x", "A1", "gps"), "unexpected key"),
    (_set("lots", "A1", "planner"), "A1.planner"),
    (_set(3, "A2", "planner"), "A2.planner"),
    (_set("20_or_more", "A1"), "A1 must be an object"),
])
def test_extraction_schema_violations(edit, where):
    reply = _extraction()
    edit(reply)
    with pytest.raises(ReplyError) as info:
        validate_extraction(reply)
    assert info.value.reason == "schema_violation"
    assert where in info.value.detail


# -- prompts


def test_every_label_of_every_question_is_in_both_prompts():
    ex = extract_prompt("DOC").user
    for q in QUESTIONS:
        assert f"## {q.qid} — {QUESTION_TEXT[q.qid][0]}" in ANSWER_SYSTEM
        for lab in q.labels:
            assert f"- {lab}" in ANSWER_SYSTEM, (q.qid, lab)
            assert lab in ex, (q.qid, lab)


def test_prompts_carry_the_document_as_the_user_message():
    doc = "## Long-Term Background and Habits\n\nAvery is ..."
    a, e = answer_prompt(doc), extract_prompt(doc)
    assert a.system == ANSWER_SYSTEM and a.user == doc
    assert e.system == "" and e.user.endswith(doc)  # the published template: SYSTEM empty
    assert answer_prompt(doc) == a and extract_prompt(doc) == e
    assert extract_prompt("other").user != e.user


def test_the_extraction_specification_lists_each_questions_mapped_sources():
    user = extract_prompt("").user
    for q in QUESTIONS:
        block = user.split(f"### {q.qid} — ")[1].split("###")[0]
        line = next(x for x in block.splitlines() if x.startswith("mapped sources: "))
        assert line.removeprefix("mapped sources: ").split(", ") == \
            [s for s in SOURCES if s in q.informative]


# -- cache


@pytest.mark.parametrize("a, b", [
    (("m", "a|b", "c"), ("m", "a", "b|c")),
    (("m", "", "x"), ("m", "x", "")),
    (("m1", "s", "u"), ("m2", "s", "u")),
])
def test_cache_keys_separate_calls_a_joined_string_would_confuse(a, b):
    assert cache_key(*a) != cache_key(*b)
    assert cache_key(*a) == cache_key(*a)
    assert len(cache_key(*a)) == 64


def test_cache_round_trip_and_corrupt_entries(tmp_path):
    cache = CallCache(tmp_path / "c")
    key = cache_key("m", "s", "u")
    assert cache.get(key) is None
    assert not (tmp_path / "c").exists()  # a read never creates the folder
    cache.put(key, "réponse", model="m")
    assert cache.get(key) == "réponse"
    assert cache.path(key).parent.name == key[:2]
    cache.path(key).write_text("{not json")
    assert cache.get(key) is None
    other = cache_key("m", "s", "v")
    cache.path(other).parent.mkdir(parents=True, exist_ok=True)
    cache.path(other).write_text(json.dumps({"key": key, "reply": "wrong file"}))
    assert cache.get(other) is None
    with pytest.raises(ValueError, match="64 lowercase hex"):
        cache.path("../../etc/passwd")


# -- any JSON is either accepted or refused with a ReplyError, never another exception

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=12) | st.sampled_from([lab for q in QUESTIONS
                                                               for lab in q.labels]),
                     lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(st.text(max_size=6), kids, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(qid=st.sampled_from(QIDS), value=_json, which=st.sampled_from(["answers", "extract"]))
def test_a_mutated_cell_is_accepted_only_if_valid(qid, value, which):
    if which == "answers":
        reply = _answers()
        reply["answers"][qid] = value
        ok = (isinstance(value, dict) and set(value) == {"answer", "would_skip"}
              and value["answer"] in question(qid).labels and isinstance(value["would_skip"],
                                                                          bool))
        check = validate_answers
    else:
        reply = _extraction()
        reply[qid] = value
        ok = (isinstance(value, dict) and set(value) == set(SOURCES)
              and all(v is None or (isinstance(v, str) and v in question(qid).labels)
                      for v in value.values()))
        check = validate_extraction
    if ok:
        check(json.dumps(reply))
    else:
        with pytest.raises(ReplyError):
            check(json.dumps(reply))
