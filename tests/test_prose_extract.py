"""The deterministic extractor (seed 000 §8.6 stages 5–6): prose only, μ* rules, spans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.prose.compare import release_renders
from core.prose.extract import INFORMATIVE, READS, extract
from core.prose.faithfulness import faithfulness
from core.prose.render import SECTIONS, render
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.importer import load_release
from core.testbed.questions import Q_INDEX, QIDS, SOURCES, question
from core.testbed.readout import readout

SAMPLE = Path(__file__).parent / "fixtures" / "survey2agent-sample"


@pytest.fixture(scope="module")
def default_run():
    """The default testbed (4 seeds × 480 personas) rendered and extracted once."""
    tb = generate(TestbedConfig())
    r = render(tb)
    return tb, r, extract(r.texts, persona_ids=r.persona_ids), readout(tb)


@pytest.fixture(scope="module")
def small():
    tb = generate(TestbedConfig(seeds=(20260322,), personas_per_difficulty=12))
    r = render(tb)
    return tb, r, extract(r.texts, persona_ids=r.persona_ids)


def test_faithfulness_on_the_default_testbed_is_at_least_99_percent(default_run):
    tb, r, ex, mu = default_run
    f = faithfulness(ex.atoms, mu, persona_ids=r.persona_ids)
    assert f.n == tb.n * 90
    assert f.overall >= 0.99
    # on the cells the source-question map allows, the extractor is exact
    assert faithfulness(ex.atoms, mu, cells="informative").overall == 1.0


def test_every_miss_is_an_edge_label_broadcast_to_a_non_informative_source(default_run):
    """μ* gives all five sources the edge label when a precondition fails (spec §2.4); the
    extractor, like the release's, leaves non-informative cells ⊥ (docs/prose.md)."""
    _, r, ex, mu = default_run
    f = faithfulness(ex.atoms, mu, persona_ids=r.persona_ids)
    assert len(f.misses)
    for row in f.misses.itertuples(index=False):
        q = question(row.question_id)
        assert row.source not in q.informative
        assert row.mu_hat is None
        assert q.labels.index(row.mu_star) in q.edge
    # in this testbed: B3's "no_approach_described" reaching the planner
    assert set(zip(f.misses["question_id"], f.misses["source"], strict=True)) == {
        ("B3", "planner")}


def test_non_informative_cells_are_null(small):
    _, _, ex = small
    assert (ex.atoms[:, ~INFORMATIVE] == -1).all()
    assert (ex.atoms[:, INFORMATIVE] >= 0).mean() > 0.9


def test_extraction_is_deterministic_and_reads_the_text_only(small):
    tb, r, ex = small
    again = extract(list(r.texts), persona_ids=list(r.persona_ids))
    assert np.array_equal(again.atoms, ex.atoms) and again.frames.equals(ex.frames)
    # the source arrays read back from the prose equal the ones rendered, field by field
    for layer in ("planner", "self_report", "objective", "device"):
        got, want = ex.sources.layer(layer), tb.layer(layer)
        for field in ("available", "duration_h", "hours", "hours_limit", "n_act", "workout",
                      "focus_min", "work_block_min", "social_intent", "bedtime_min"):
            if field in want:
                w, g = want[field], got[field]
                if layer == "device" and field in ("duration_h", "focus_min", "bedtime_min"):
                    keep = want["available"] & (w >= 0 if w.dtype.kind == "i" else ~np.isnan(w))
                    w, g = w[keep], g[keep]
                np.testing.assert_array_equal(g, w, err_msg=f"{layer}.{field}")


def test_editing_the_prose_changes_the_atoms_it_should(small):
    _, r, ex = small
    text = r.texts[0]
    # no social activity planned on any day -> C2 has no plan days: the edge label
    edited = text.replace("- Social activity planned.", "- No social activity planned.")
    got = extract([edited], persona_ids=[r.persona_ids[0]]).atoms[0]
    c2 = question("C2")
    for s in c2.informative:
        assert got[Q_INDEX["C2"], SOURCES.index(s)] == c2.code("no_plans")
    # every night's self-reported sleep at 4 hours -> A1 self says fewer_than_10
    import re
    short = re.sub(r"slept [\d.]+ hours", "slept 4.0 hours", text)
    got = extract([short], persona_ids=["x"]).atoms[0]
    assert got[Q_INDEX["A1"], SOURCES.index("daily_self_report")] == \
        question("A1").code("fewer_than_10")
    assert got[Q_INDEX["Ctrl2"], SOURCES.index("daily_self_report")] == \
        question("Ctrl2").code("3_or_more")


def test_an_unknown_line_is_not_fatal_and_nulls_what_it_may_state(small):
    """A line of no known form before the first day of the self-report may state any of its
    fields on any day: every self-report atom is ⊥ with a reason, nothing else changes."""
    _, r, ex = small
    text = r.texts[1].replace("## Daily Self-Reports\n", "## Daily Self-Reports\n- gibberish\n")
    got = extract([text], persona_ids=["y"])
    s = SOURCES.index("daily_self_report")
    assert (got.atoms[0, :, s] == -1).all()
    others = np.ones(len(SOURCES), dtype=bool)
    others[s] = False
    assert np.array_equal(got.atoms[0][:, others], ex.atoms[1][:, others])
    assert got.unread["text"].tolist() == ["- gibberish"]
    assert got.unread["reason"].tolist() == ["matches no known sentence"]
    nulled = got.unread_atoms
    assert set(nulled["source"]) == {"daily_self_report"}
    assert len(nulled) == int(INFORMATIVE[:, s].sum())
    assert nulled["reason"].str.contains("'- gibberish'").all()


def test_each_atom_keeps_the_sentences_it_read(small):
    _, r, ex = small
    p = 2
    text = r.texts[p]
    for qid in QIDS:
        for s, src in enumerate(SOURCES):
            spans = ex.spans(p, qid, src)
            if not INFORMATIVE[Q_INDEX[qid], s]:
                assert spans.empty
                continue
            context, own = READS[qid]
            wanted = {(SECTIONS[a], f) for a, f in (*context, *own.get(s, ()))}
            got = set(zip(spans["section"].astype(str), spans["field"].astype(str),
                          strict=True))
            assert got <= wanted
            if own.get(s):
                assert not spans.empty, (qid, src)
            for row in spans.itertuples(index=False):
                line = text[row.start:row.end]
                assert line and "\n" not in line and text[row.end] == "\n"
            if qid in ("C2", "C3"):  # the last 14 days only (dated sources)
                dated = spans[spans["day_index"] > 0]
                assert dated["day_index"].min() >= 17


def test_spans_reject_bad_names(small):
    _, r, ex = small
    with pytest.raises(ValueError, match="unknown question"):
        ex.spans(0, "Z9", "planner")
    with pytest.raises(ValueError, match="unknown source"):
        ex.spans(0, "A1", "diary")
    with pytest.raises(ValueError, match="outside"):
        ex.spans(10_000, "A1", "planner")
    assert len(ex.spans(r.persona_ids[0], "A1", "planner"))


def test_the_extractor_reads_the_released_render_exactly():
    rel = load_release(SAMPLE)
    theirs = release_renders(SAMPLE, rel.testbed.personas)
    ids = list(rel.testbed.personas["persona_id"])
    ex = extract([theirs[p] for p in ids], persona_ids=ids)
    mu = readout(rel.testbed)
    assert np.array_equal(ex.atoms[:, INFORMATIVE], mu[:, INFORMATIVE])


def test_mismatched_ids_are_refused():
    with pytest.raises(ValueError, match="persona ids"):
        extract(["a\n", "b\n"], persona_ids=["x"])


_one_dp = st.integers(0, 160).map(lambda k: k / 10)


@settings(max_examples=60, deadline=None)
@given(day=st.integers(0, 29), bed=st.integers(1200, 1700), wake=st.integers(240, 720),
       dur=st.integers(40, 115).map(lambda k: k / 10), hours=_one_dp, overtime=st.booleans(),
       weekend_work=st.booleans(), n_act=st.integers(0, 3), act1=st.integers(-1, 19),
       supporting=st.booleans(), meals=st.integers(1, 6), home=st.integers(0, 6),
       exercise=st.integers(0, 150), available=st.booleans(), block=st.integers(0, 900),
       social=st.booleans(), delivery=st.integers(-1, 5), focus=st.integers(-1, 900),
       late=st.booleans(), workout=st.booleans())
def test_a_day_round_trips_through_the_prose(day, bed, wake, dur, hours, overtime,
                                             weekend_work, n_act, act1, supporting, meals,
                                             home, exercise, available, block, social,
                                             delivery, focus, late, workout):
    """Whatever one day's source values, the extractor reads back exactly the fields μ*
    reads (a weekend-work flag only on weekends, where the release states it)."""
    from core.testbed.schema import blank_testbed
    from core.testbed.vocab import IS_WEEKEND

    tb = blank_testbed(1)
    sr, ob, dv = tb.self_report, tb.objective, tb.device
    d = day
    sr["bedtime_min"][0, d], sr["wake_min"][0, d], sr["duration_h"][0, d] = bed, wake, dur
    sr["hours"][0, d], sr["overtime"][0, d] = hours, overtime
    sr["worked_on_weekend"][0, d] = weekend_work and IS_WEEKEND[d]
    sr["n_act"][0, d], sr["act1"][0, d] = n_act, act1 if n_act else -1
    sr["supporting_other"][0, d] = supporting
    sr["meals"][0, d], sr["home_cooked"][0, d] = meals, min(home, meals)
    sr["did_exercise"][0, d], sr["exercise_min"][0, d] = exercise > 0, exercise
    ob["available"][0, d], ob["work_block_min"][0, d] = available, block if available else 0
    ob["social_event"][0, d] = social and available
    ob["pay_delivery"][0, d] = delivery if available else -1
    dv["available"][0, d], dv["duration_h"][0, d] = available, dur if available else np.nan
    dv["bedtime_min"][0, d] = bed if available else -1
    dv["focus_min"][0, d] = focus if available else -1
    dv["work_session"][0, d] = available and focus >= 0
    dv["late_finish"][0, d] = late and available and focus >= 0
    dv["workout"][0, d] = workout and available
    dv["active_min"][0, d] = 30 if available else -1
    r = render(tb)
    got = extract(r.texts, persona_ids=r.persona_ids).sources
    for layer, fields in (
            ("self_report", ("bedtime_min", "wake_min", "duration_h", "hours", "overtime",
                             "worked_on_weekend", "n_act", "supporting_other", "meals",
                             "home_cooked", "did_exercise", "exercise_min")),
            ("objective", ("available", "work_block_min", "social_event", "pay_delivery")),
            ("device", ("available", "duration_h", "bedtime_min", "focus_min", "late_finish",
                        "workout", "active_min"))):
        for f in fields:
            w, g = tb.layer(layer)[f][0, d], got.layer(layer)[f][0, d]
            if f == "supporting_other" and n_act == 0:
                continue  # not stated on a day without activities (μ* reads it only there)
            assert (np.isnan(w) and np.isnan(g)) if isinstance(w, float) and np.isnan(w) \
                else g == w, (layer, f, w, g)
    assert np.array_equal(extract(r.texts, persona_ids=["p"]).atoms, _informative(readout(tb)))


def _informative(mu):
    out = mu.copy()
    out[:, ~INFORMATIVE] = -1
    return out
