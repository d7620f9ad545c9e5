"""The unread-day rule (issue 19): an unread dated line is a missing day of the atoms that may
read it, which are read from their other days (``core.prose.partial``), not emptied whole."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.prose.extract import INFORMATIVE, UNREAD_RULES, extract
from core.prose.partial import partial_atom
from core.prose.render import render
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import bin_a1
from core.testbed.questions import Q_INDEX, QIDS, SOURCES
from core.testbed.readout import readout
from core.testbed.vocab import DATES

SELF, DEV = SOURCES.index("daily_self_report"), SOURCES.index("device_log")
A1 = Q_INDEX["A1"]


@pytest.fixture(scope="module")
def small():
    tb = generate(TestbedConfig(seeds=(20260322,), personas_per_difficulty=12))
    r = render(tb)
    return tb, r, extract(r.texts, persona_ids=r.persona_ids)


def _reword_day(text: str, section_line: str, day: int, old: str, new: str) -> str:
    """``text`` with ``old`` → ``new`` in the first line starting ``section_line`` of ``day``'s
    block (1-based) of the section that has such lines."""
    head = f"#### {DATES[day - 1]}"
    out, in_day, done = [], False, False
    for line in text.split("\n"):
        if line.startswith(("#### ", "## ")):
            in_day = line.startswith(head)
        if in_day and not done and line.startswith(section_line) and old in line:
            line, done = line.replace(old, new, 1), True
        out.append(line)
    assert done, (section_line, day)
    return "\n".join(out)


def test_with_every_day_read_the_partial_rules_are_the_direct_readout(small):
    tb, _, ex = small
    for sources in (tb, ex.sources):  # the generated arrays and the prose read back
        mu = readout(sources)
        keep = np.ones((sources.n, 30), dtype=bool)
        for q, qid in enumerate(QIDS):
            for s in range(len(SOURCES)):
                if INFORMATIVE[q, s]:
                    got = partial_atom(sources, qid, s, keep)
                    assert np.array_equal(got, mu[:, q, s]), (qid, SOURCES[s])


def test_one_reworded_self_report_day_is_a_missing_day_not_an_empty_atom(small):
    """", slept " → ", slept for " on one night: A1 of the self-report is read from the other
    29 nights (the count scaled to 30), not ⊥ as under the whole-atom rule."""
    tb, r, ex = small
    p, day = 3, 10
    text = _reword_day(r.texts[p], "- Sleep: went to bed", day, ", slept ", ", slept for ")
    strict = extract([text], persona_ids=["x"], unread="atom")
    assert strict.atoms[0, A1, SELF] == -1
    got = extract([text], persona_ids=["x"])
    assert len(got.unread) == 1 and int(got.unread["day_index"].iloc[0]) == day
    # by hand: nights of at least 7 h among the 29 read nights, scaled to the month
    dur = np.delete(tb.self_report["duration_h"][p], day - 1)
    want = bin_a1(np.round(np.array([(dur >= 7).sum() * 30 / 29])))[0]
    assert got.atoms[0, A1, SELF] == want != -1
    # atoms whose window lies after day 10, or that read no sleep, are untouched
    for qid in ("C3", "Ctrl2", "A2", "G1"):
        assert got.atoms[0, Q_INDEX[qid], SELF] == ex.atoms[p, Q_INDEX[qid], SELF], qid
    rows = got.unread_atoms
    assert set(rows["question_id"]) == {"A1", "E1"}  # the month-wide reads of that night
    assert (rows["unread_days"] == 1).all() and not rows["null"].any()
    assert rows["reason"].str.endswith("read from the other days (1 unread day left out)").all()


def test_an_unread_device_day_is_read_as_a_dropped_device_day(small):
    """The device's rules already read around days it dropped: an unread device line gives
    the atom the device would give with that day unavailable."""
    tb, r, _ = small
    p = next(i for i in range(tb.n) if tb.device["available"][i].sum() >= 20)
    day = int(np.flatnonzero(tb.device["available"][p])[4]) + 1
    text = _reword_day(r.texts[p], "- Sleep tracker: ", day, "- Sleep tracker: ",
                       "- Sleep tracking: ")
    got = extract([text], persona_ids=["x"])
    dropped = tb.subset([p])
    dropped.device["available"][0, day - 1] = False
    assert got.atoms[0, A1, DEV] == readout(dropped)[0, A1, DEV] != -1
    assert got.unread_atoms.set_index("question_id").loc["A1", "unread_days"] == 1


def test_no_readable_day_is_null_and_an_undated_line_empties_the_atom(small):
    _, r, ex = small
    # every night reworded: nothing is left to read A1 from
    text = r.texts[0].replace(", slept ", ", slept for ")
    got = extract([text], persona_ids=["x"])
    assert got.atoms[0, A1, SELF] == -1
    row = got.unread_atoms.set_index(["question_id", "source"]).loc[("A1", SOURCES[SELF])]
    assert bool(row["null"]) and row["unread_days"] == 30
    assert row["reason"].endswith("no day of its window could be read (30 unread days)")
    # an unread profile line has no day to leave out: its atoms are ⊥, whatever the rule
    text = re.sub(r"typically goes to bed around", "usually goes to bed around", r.texts[0])
    got = extract([text], persona_ids=["x"])
    a1_profile = got.atoms[0, A1, SOURCES.index("profile_ltm")]
    assert a1_profile == -1 != ex.atoms[0, A1, SOURCES.index("profile_ltm")]
    assert got.unread_atoms["null"].all()


def test_the_rule_is_named(small):
    _, r, _ = small
    assert UNREAD_RULES == ("day", "atom")
    with pytest.raises(ValueError, match="unread must be one of day, atom"):
        extract(r.texts[:1], persona_ids=["x"], unread="line")
    with pytest.raises(ValueError, match="keep must have shape"):
        partial_atom(small[0], "A1", SELF, np.ones((2, 30), bool))
    with pytest.raises(ValueError, match="unknown question"):
        partial_atom(small[0], "Z9", SELF, np.ones((small[0].n, 30), bool))


def test_every_changed_atom_is_listed_and_its_null_flag_is_the_atom_s(small):
    """On a heavy paraphrase: an atom that differs from the round trip is always listed in
    ``unread_atoms`` (nothing changes silently), and ``null`` says whether it is ⊥."""
    from core.prose.paraphrase import paraphrase

    _, r, ex = small
    para = paraphrase(r.texts, rate=0.3, rng=np.random.default_rng(4))
    got = extract(para.texts, persona_ids=r.persona_ids)
    u = got.unread_atoms
    q = np.array([QIDS.index(x) for x in u["question_id"]])
    s = np.array([SOURCES.index(x) for x in u["source"]])
    d = u["doc"].to_numpy()
    assert np.array_equal(u["null"].to_numpy(), got.atoms[d, q, s] < 0)
    listed = np.zeros(got.atoms.shape, dtype=bool)
    listed[d, q, s] = True
    assert not ((got.atoms != ex.atoms) & ~listed).any()
    assert (~u["null"]).sum() > u["null"].sum() > 0
    assert (u["unread_days"] > 0).all() or (u.loc[u["unread_days"] == 0, "null"]).all()
