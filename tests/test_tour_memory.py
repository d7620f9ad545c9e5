"""The memory story's five tour stops (issue 22): each example really shows its failure.

Every check is recomputed here from the store by another route than the stop's own code:
the atoms, truths and cached answers straight from SQL, the Walkthrough's verdicts and habit
tables, a fresh regeneration of the batch with every day recorded. The rules are also tested
on hand-built arrays (filters, ranking, the seed 000 §8.7 tiebreak).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.evaluation.cached import persona_predictions
from core.evaluation.walkthrough.answers import atom_verdicts
from core.evaluation.walkthrough.habits import profile_vs_actual
from core.evaluation.walkthrough.views import METRIC_OF_QUESTION, day_views
from core.glossary import find
from core.store import connect, load_testbed, query_df
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.labels import ground_truth_codes
from core.testbed.questions import BIAS, QIDS, QUESTIONS, SOURCES, bias_predict, question
from core.testbed.readout import readout
from core.testbed.words import label_words
from core.tour import ORDER, TourData, compute_stop
from core.tour import _memory_rules as rules
from core.tour._memory_data import UNITS, daily_habit, pool_testbed
from core.tour._memory_words import answer_words
from core.tour.stops_memory import STOPS

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("biased-majority", "stale-profile", "stated-vs-revealed", "planner-optimism",
        "device-dropout")
# the glossary test's token rule (tests/test_glossary.py)
TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*|T_[a-z]+)")
SNAKE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")
PERSONA_ID = re.compile(r"bench_[a-z]+_\d+")


@pytest.fixture(scope="module")
def small(small_store):
    con = connect(small_store)
    data = TourData(con)
    yield con, data, {k: compute_stop(k, data) for k in KEYS}
    con.close()


def _pick(con, view):
    """The example of ``view`` read back from the store by SQL: (seed, persona, question,
    truth label, {source: atom label or None}, {method: cached answer})."""
    link = dict(view.link)
    seed, pid, qid = int(link["seed"]), link["persona"], link["q"]
    args = [seed, pid, qid]
    gt = query_df(con, "SELECT answer FROM ground_truth WHERE seed = ? AND persona_id = ? "
                       "AND question_id = ?", args)["answer"].iloc[0]
    rows = query_df(con, "SELECT source, value FROM atoms WHERE kind = 'readout' AND seed = ? "
                         "AND persona_id = ? AND question_id = ?", args)
    atoms = {s: None for s in SOURCES} | {s: (None if pd.isna(v) else v)
                                          for s, v in zip(rows["source"], rows["value"],
                                                          strict=True)}
    preds = persona_predictions(con, seed=seed, persona_id=pid)
    preds = dict(zip(preds.loc[preds["question_id"] == qid, "method"],
                     preds.loc[preds["question_id"] == qid, "answer"], strict=True))
    return seed, pid, qid, gt, atoms, preds


def _codes(qid: str, atoms: dict) -> np.ndarray:
    q = question(qid)
    return np.array([q.code(atoms[s]) if atoms[s] is not None else -1 for s in SOURCES])


# ---------------------------------------------------------------- the stops' words
def test_the_module_defines_its_five_stops_in_walking_order():
    assert [s.key for s in STOPS] == list(KEYS)
    assert [k for k in ORDER if k in KEYS] == list(KEYS)
    for s in STOPS:
        assert s.story == "memory" and (ROOT / s.page).is_file()
        assert s.section.startswith("The memory-benchmark paper") and "§" in s.section
        assert "§8.7" in s.rule, f"{s.key}: the rule names its tiebreak"


def test_answers_are_shown_in_the_pages_words():
    for q in QUESTIONS:
        for code, label in enumerate(q.labels):
            assert answer_words(q.qid, code) == label_words(q.qid, label)
        assert answer_words(q.qid, -1) == "no answer"
    with pytest.raises(ValueError, match="outside A1's answer space"):
        answer_words("A1", 3)


def _student_texts(views):
    for s in STOPS:
        yield from (s.title, s.section, s.failure, s.rule, s.question, s.remedy, s.control,
                    s.teacher.ask, s.teacher.wrong_answer, s.teacher.follow_up)
    for v in views.values():
        yield from (v.answer, v.reason, v.note)
        for label, value in (*v.example, *v.settings, *v.evidence):
            yield from (label, value)
        if v.chart is not None:
            c = v.chart
            yield from (c.title, c.x_title, c.y_title, c.caption, c.marker_label)
            for col in ("who", "answer", "series", "text"):
                if col in c.data:
                    yield from map(str, c.data[col].unique())


def test_student_words_use_only_glossary_terms_and_no_code(small):
    _, _, views = small
    for text in _student_texts(views):
        for token in TOKEN.findall(text):
            assert find(token) is not None, f"{token!r} is not in the glossary: {text!r}"
        assert not SNAKE.search(text), f"code-style word in {text!r}"
        assert not PERSONA_ID.search(text), f"a persona id in {text!r}"


# ---------------------------------------------------------------- every stop, on a store
def test_every_stop_shows_its_failure_on_the_small_store(small):
    _, _, views = small
    kinds = {"biased-majority": "answers", "stale-profile": "lines",
             "stated-vs-revealed": "lines", "planner-optimism": "lines",
             "device-dropout": "days"}
    for key, view in views.items():
        assert view.shows_failure, f"{key}: {view.note}"
        assert view.chart.kind == kinds[key] and dict(view.link).keys() == {"seed", "persona",
                                                                             "q"}
        assert view.answer and view.reason and view.evidence and view.settings


def test_every_link_opens_the_walkthrough_on_the_example(small):
    from pages._shared.params import resolve_url_choice

    con, _, views = small
    personas = query_df(con, "SELECT seed, persona_id, split FROM personas ORDER BY row")
    for key, view in views.items():
        link = dict(view.link)
        choice = resolve_url_choice(link, personas=personas, pool=pd.DataFrame())
        assert not choice.warnings, key
        assert (str(choice.seed), choice.persona, choice.qid) == (link["seed"],
                                                                  link["persona"], link["q"])
        name = query_df(con, "SELECT name FROM personas WHERE seed = ? AND persona_id = ?",
                        [choice.seed, choice.persona])["name"].iloc[0]
        assert dict(view.example)["Person"].startswith(name)


def test_without_a_store_or_with_a_broken_one_each_stop_says_why(tmp_path):
    import duckdb

    for key in KEYS:
        view = compute_stop(key, TourData())
        assert not view.shows_failure and "store" in view.note
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    con = connect(path)
    try:
        for key in KEYS:
            view = compute_stop(key, TourData(con))
            assert not view.shows_failure and "rebuild" in view.note
    finally:
        con.close()


# ---------------------------------------------------------------- each example, recomputed
def _ssb_trusted(con) -> dict[tuple[int, str], str]:
    """(seed, question) → the source the best single source trusts: the most right answers
    plus no-answers ÷ K on the batch's training people (seed 000 §3; ties to the first
    source in the spec's order)."""
    frame = query_df(con, """
        SELECT p.seed, q.question_id, s.source,
               count(a.value) FILTER (WHERE a.value = g.answer) AS right_,
               count(a.value) AS answered, count(*) AS n
        FROM personas p
             CROSS JOIN (SELECT DISTINCT question_id FROM ground_truth) q
             CROSS JOIN (SELECT DISTINCT source FROM atoms) s
             JOIN ground_truth g ON g.seed = p.seed AND g.persona_id = p.persona_id
                                AND g.question_id = q.question_id
             LEFT JOIN atoms a ON a.seed = p.seed AND a.persona_id = p.persona_id
                              AND a.question_id = q.question_id AND a.source = s.source
                              AND a.kind = 'readout'
        WHERE p.split = 'train'
        GROUP BY p.seed, q.question_id, s.source""")
    frame["score"] = frame["right_"] + (frame["n"] - frame["answered"]) / [
        question(q).k for q in frame["question_id"]]
    frame["order"] = [SOURCES.index(x) for x in frame["source"]]
    best = frame.sort_values(["score", "order"], ascending=[False, True]).groupby(
        ["seed", "question_id"]).head(1)
    return {(int(r.seed), r.question_id): r.source for r in best.itertuples()}


def test_biased_majority_example_from_the_store(small):
    con, _, views = small
    view = views["biased-majority"]
    seed, _, qid, gt, atoms, preds = _pick(con, view)
    votes = Counter(v for v in atoms.values() if v is not None)
    wrong = preds["majority_vote"]
    assert wrong != gt and preds["ssb"] == gt
    assert all(votes[wrong] > c for a, c in votes.items() if a != wrong)
    trusted = _ssb_trusted(con)
    assert atoms[trusted[(seed, qid)]] == gt
    ev = dict(view.evidence)
    assert ev["Sources behind majority vote's wrong answer"] == \
        f"{votes[wrong]} of {sum(votes.values())}"
    # no test pair of the store has a larger wrong majority over an accurate trusted source
    frame = query_df(con, """
        SELECT a.seed, a.persona_id, a.question_id, a.source, a.value, g.answer AS gt,
               mv.answer AS mv
        FROM atoms a JOIN ground_truth g USING (seed, persona_id, question_id)
             JOIN predictions mv USING (seed, persona_id, question_id)
             JOIN personas p USING (seed, persona_id)
        WHERE a.kind = 'readout' AND mv.method = 'majority_vote' AND p.split = 'test'
              AND a.value IS NOT NULL
              AND mv.run_id = (SELECT value FROM meta WHERE key = 'default_run_id')""")
    best = 0
    for (s, _, q), g in frame.groupby(["seed", "persona_id", "question_id"]):
        count = Counter(g["value"])
        mv, truth = g["mv"].iloc[0], g["gt"].iloc[0]
        if mv != truth and all(count[mv] > c for a, c in count.items() if a != mv) \
                and (g.loc[g["source"] == trusted[(s, q)], "value"] == truth).any():
            best = max(best, count[mv])
    assert best == votes[wrong]


def test_stale_profile_example_against_the_habit_table(small):
    con, _, views = small
    view = views["stale-profile"]
    seed, pid, qid, gt, atoms, _ = _pick(con, view)
    tb = load_testbed(con, seed=seed, persona_id=pid)
    assert tb.personas["difficulty"].iloc[0] == "temporal_shift"
    assert atoms["profile_ltm"] is not None and atoms["profile_ltm"] != gt
    table = profile_vs_actual(tb).set_index("habit")
    rows = {"A1": ["sleep (h/night)"], "A2": ["work (h/day, weekends included)"],
            "A3": ["home-cooked meals/day"], "Ctrl1": ["meals/day", "home-cooked meals/day"]}
    sign = [1, -1][: len(rows[qid])]
    said, before, after = (sum(s * table.loc[r, col] for s, r in zip(sign, rows[qid],
                                                                    strict=True))
                           for col in ("profile", "before_shift", "after_shift"))
    assert abs(said - before) < abs(said - after)
    ev = dict(view.evidence)
    unit = UNITS[{"A1": "sleep_hours", "A2": "work_hours", "A3": "home_meals",
                  "Ctrl1": "outside_meals"}[qid]]
    assert ev[f"{unit}: average before the change"] == f"{before:.1f}".replace("-", "\u2212")
    assert ev["Habits change on"] == f"day {int(tb.personas['shift_day'].iloc[0])}"


@pytest.mark.parametrize("key, source, revealing", [
    ("stated-vs-revealed", "daily_self_report", ("objective_log", "device_log")),
    ("planner-optimism", "planner", ()),
])
def test_shifted_source_examples_via_the_walkthrough_verdicts(small, key, source, revealing):
    con, _, views = small
    view = views[key]
    seed, pid, qid, gt, atoms, _ = _pick(con, view)
    q = question(qid)
    verdicts = atom_verdicts(qid, q.code(gt), _codes(qid, atoms)).set_index("source")
    row = verdicts.loc[source]
    assert row["status"] == "disagree" and row["bias"] != 0
    assert np.sign(int(row["shift"])) == row["bias"], "shifted in its bias direction"
    if revealing:
        difficulty = query_df(con, "SELECT difficulty FROM personas WHERE seed = ? AND "
                                   "persona_id = ?", [seed, pid])["difficulty"].iloc[0]
        assert difficulty == "stated_vs_revealed"
        assert any(verdicts.loc[s, "status"] == "agree" for s in revealing)
    else:  # the plan is rosier than the day on most days, counted from the source view
        tb = load_testbed(con, seed=seed, persona_id=pid)
        frame = day_views(tb, qid=qid).frame
        plan = frame.loc[frame["source"] == "planner", "value"].to_numpy()
        lived = frame.loc[frame["source"] == "latent", "value"].to_numpy()
        side = -1 if q.topic == "work" else 1
        rosy = int(((plan - lived) * side > 0).sum())
        assert dict(view.evidence)["Days the plan was rosier than the day"] == f"{rosy} of 30"
        assert rosy > 15


def test_device_dropout_example_regenerated_with_every_day_recorded(small):
    con, _, views = small
    view = views["device-dropout"]
    seed, pid, qid, gt, atoms, _ = _pick(con, view)
    q = question(qid)
    assert q.topic == "exercise" and atoms["device_log"] not in (None, gt)
    tb = load_testbed(con, seed=seed, persona_id=pid)
    lost = ~tb.device["available"][0]
    exercised = tb.events["did_exercise"][0].astype(bool)
    assert (lost & exercised).sum() >= 1
    assert dict(view.evidence)["Lost days on which the person exercised"] == \
        f"{int((lost & exercised).sum())} of {int(lost.sum())}"
    config = TestbedConfig(seeds=(seed,), personas_per_difficulty=12, dropout_scale=0.0)
    full = generate(config)
    row = int(np.nonzero(full.personas["persona_id"].to_numpy() == pid)[0][0])
    assert full.device["available"][row].all()
    assert np.array_equal(full.events["exercise_min"][row], tb.events["exercise_min"][0])
    j = QIDS.index(qid)
    assert readout(full)[row, j, SOURCES.index("device_log")] == q.code(gt)
    assert ground_truth_codes(full)[0][row, j] == q.code(gt)


# ---------------------------------------------------------------- the rules, by hand
def _people(ids):
    return pd.DataFrame({"seed": [7] * len(ids), "persona_id": ids,
                         "difficulty": ["stable"] * len(ids), "shift_day": [0] * len(ids)})


def test_the_biased_majority_rule_filters_ranks_and_breaks_ties():
    n = 4
    gt = np.zeros((n, 18), np.int8)
    atoms = np.full((n, 18, 5), -1, np.int8)
    atoms[0, 0] = [1, 1, 1, 0, -1]       # 3 wrong, the device-free minority right
    atoms[1, 0] = [1, 1, 1, 1, 0]        # 4 wrong: the largest wrong majority
    atoms[2, 0] = [1, 1, 0, 0, -1]       # a tie: no real majority
    atoms[3, 0] = [1, 1, 1, 0, -1]       # as person 0, but a later id
    mv = np.zeros((n, 18), np.int8)
    mv[:, 0] = 1
    src = np.full((n, 18), 3)
    src[1] = 4
    learned = {"dsnbf": np.zeros((n, 18), np.int8)}
    out = rules.biased_majority(gt, atoms, _people(["b", "c", "d", "a"]), majority=mv,
                                ssb_source=src, learned=learned)
    top = out[out["rank"] > 0]
    assert top[["persona_id", "question_id", "n_wrong"]].values.tolist() == [
        ["c", "A1", 4], ["a", "A1", 3], ["b", "A1", 3]]
    assert not out.loc[out["persona_id"] == "d", "qualifies"].any()
    with pytest.raises(ValueError, match="atoms must have shape"):
        rules.biased_majority(gt, atoms[:, :, :4], _people(list("bcda")), majority=mv,
                              ssb_source=src, learned=learned)


def test_bias_steps_agree_with_the_bias_prior():
    """One step in the bias direction is what the specification's prior predicts (§2.3)."""
    for j, q in enumerate(QUESTIONS):
        for s, src in enumerate(SOURCES):
            if not q.ordinal or BIAS[j, s] == 0:
                continue
            truth = np.array(q.order)
            moved = bias_predict(q.qid, src, truth)
            gt = np.zeros((len(truth), 18), np.int8)
            atom = np.zeros_like(gt)
            gt[:, j], atom[:, j] = truth, moved
            steps = rules.bias_steps(atom, gt, s)[:, j]
            one = (moved != truth).astype(int)
            assert (steps == one).all(), (q.qid, src)
            back = rules.bias_steps(gt, atom, s)[:, j]   # the other way round: against it
            assert (back == -one).all(), (q.qid, src)


def test_daily_habit_matches_the_walkthrough_source_view(small):
    _, data, _ = small
    tb = pool_testbed(data)
    row = int(np.argmax((~tb.device["available"]).sum(1) + (~tb.objective["available"]).sum(1)))
    for metric in UNITS:
        qid = next(q for q in QIDS if METRIC_OF_QUESTION[q] == metric)
        habit = daily_habit(tb, metric)
        frame = day_views(tb, qid=qid, row=row).frame
        shown = {s for s in SOURCES
                 if frame.loc[frame["source"] == s, "comparable"].all()
                 and frame.loc[frame["source"] == s, "kind"].iloc[0] != "absent"}
        assert set(habit) - {"latent"} == shown, metric
        for name, values in habit.items():
            want = frame.loc[frame["source"] == name, "value"].to_numpy(float)
            got = np.broadcast_to(np.asarray(values)[row], want.shape)
            np.testing.assert_allclose(got, want, equal_nan=True, err_msg=f"{metric} {name}")
    with pytest.raises(ValueError, match="metric must be one of"):
        daily_habit(tb, "social")
