"""The extractor is honest about what it cannot read and reads the authors' wording (issue 19,
point 8; seed 000 §8.6 stages 5–6, the benchmark specification §2.9–§2.10)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.prose.extract import INFORMATIVE, extract, template_fields, template_of
from core.prose.render import render
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import Q_INDEX, QIDS, SOURCES

SELF = SOURCES.index("daily_self_report")


@pytest.fixture(scope="module")
def small():
    tb = generate(TestbedConfig(seeds=(20260322,), personas_per_difficulty=12))
    r = render(tb)
    return r, extract(r.texts, persona_ids=r.persona_ids)


def test_slept_for_is_unread_and_its_atoms_are_null_with_a_reason(small):
    """", slept " → ", slept for " used to read as no sleep at all (A1 fewer_than_10), and the
    unparsed bedtime as 00:00 (C3 earlier_more_than_50pct, E1 no_late_nights)."""
    r, ex = small
    texts = [t.replace(", slept ", ", slept for ") for t in r.texts]
    got = extract(texts, persona_ids=r.persona_ids)
    hit = {"A1", "C3", "E1", "Ctrl2"}  # the self-report atoms that read bedtime or duration
    for qid in QIDS:
        q = Q_INDEX[qid]
        if qid in hit:
            assert (got.atoms[:, q, SELF] == -1).all(), qid
        else:
            assert np.array_equal(got.atoms[:, q, SELF], ex.atoms[:, q, SELF]), qid
    others = np.arange(len(SOURCES)) != SELF
    assert np.array_equal(got.atoms[:, :, others], ex.atoms[:, :, others])
    n = len(r.texts)
    assert len(got.unread) == n * 30
    assert set(got.unread["reason"]) == {"starts like a known sentence but does not match it"}
    u = got.unread_atoms
    assert len(u) == n * len(hit) and set(u["question_id"]) == hit
    assert set(u["source"]) == {"daily_self_report"}
    first = u[(u["doc"] == 0) & (u["question_id"] == "A1")]["reason"].item()
    assert first.startswith("unread line (Daily Self-Reports, 2026-01-03): '- Sleep: went to bed")
    assert "slept for" in first


def test_a_partly_read_traits_line_nulls_b3_instead_of_the_edge_label(small):
    """An after-hours style we cannot code ("occasionally works after hours") is not "no
    style": B3 is ⊥ for every source, not no_approach_described."""
    r, ex = small
    i = next(k for k, t in enumerate(r.texts) if "; maintains strict work-life boundaries" in t)
    text = r.texts[i].replace("; maintains strict work-life boundaries",
                              "; occasionally works after hours")
    got = extract([text], persona_ids=["x"])
    b3 = Q_INDEX["B3"]
    assert (got.atoms[0, b3] == -1).all()
    keep = np.arange(len(QIDS)) != b3
    assert np.array_equal(got.atoms[0, keep], ex.atoms[i, keep])
    assert sorted(got.unread_atoms["source"]) == sorted(
        s for s, ok in zip(SOURCES, INFORMATIVE[b3], strict=True) if ok)


# (our wording, the authors' released wording): each rewrite must leave every atom unchanged
AUTHORS = [
    ("; is flexible about working after hours", "; has a flexible approach to after-hours work"),
    (", weekend work commitment.", ", worked on weekend."),
    (" (supporting someone).", ". Was supporting someone else."),
    ("- No home-cooking priority.", "- Home-cooked food not prioritized."),
    ("- No signals recorded for this date.", "- No records for this date."),
]


@pytest.mark.parametrize("ours,theirs", AUTHORS)
def test_the_authors_wording_reads_as_ours(small, ours, theirs):
    r, ex = small
    texts = [t.replace(ours, theirs) for t in r.texts]
    assert texts != list(r.texts)  # the testbed has this sentence
    got = extract(texts, persona_ids=r.persona_ids)
    assert got.unread.empty
    assert np.array_equal(got.atoms, ex.atoms)
    assert len(got.frames) == len(ex.frames)  # every rewritten line is read, not skipped


def test_the_authors_optional_clauses_read_as_ours(small):
    """Their renderer leaves out a work cap's finish time when it has none and a planned
    workout's minutes when they are 0; it never writes "overtime acceptable"."""
    r, ex = small
    texts = [re.sub(r"(- Work capped at [\d.]+ hours), finish by \d\d:\d\d\.", r"\1.", t)
             for t in r.texts]
    got = extract(texts, persona_ids=r.persona_ids)
    assert got.unread.empty and np.array_equal(got.atoms, ex.atoms)
    assert got.sources.planner["avoid_overtime"].all()
    # a planned workout without minutes is a planned workout
    k = template_of(1, "- Planned yoga.")
    assert k is not None and template_fields(k) == ("ex_intended", "ex_min")
    assert template_of(1, "- Planned bedtime soon.") is None


def test_the_authors_empty_days_read_as_silent_days(small):
    r, _ = small
    for section, line in ((1, "- No specific plans recorded."),
                          (3, "- No records for this date."),
                          (4, "- No device records for this date.")):
        assert template_of(section, line) is not None, line


def test_every_template_states_exactly_its_declared_fields(small):
    """The fields an unread line may state come from the declaration the parsers fill: every
    rendered line's parser returns exactly its template's declared fields."""
    from core.prose.extract import _TEMPLATES

    r, _ = small
    seen = set()
    section = -1
    for line in r.texts[0].splitlines() + r.texts[1].splitlines():
        if line.startswith("## "):
            section += 1 if section < 4 else -4
            continue
        k = template_of(section, line) if line and not line.startswith("#") else None
        if k is None:
            continue
        m = _TEMPLATES[k][2].fullmatch(line)
        assert set(_TEMPLATES[k][3](m)) == set(template_fields(k)), line
        seen.add(k)
    assert len(seen) >= 20
    with pytest.raises(ValueError, match="template index"):
        template_fields(999)
