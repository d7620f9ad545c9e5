"""The Walkthrough's panel objects (``core.evaluation.walkthrough``), checked against the
testbed, its ground truth and the cached predictions of the small store; their invariants;
the persona menu against the pandas filter it replaced; the package's lazy re-exports; and
the page glue's caches (one build per instance, never one per rerun)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import core.evaluation.walkthrough as walkthrough
from core.evaluation.cached import load_llm_answers, load_test_predictions, persona_predictions
from core.evaluation.run import FORCED_METHODS, SELECTIVE_METHODS
from core.evaluation.walkthrough.answers import (
    STATUS_MARKS,
    plain_number,
    question_panel,
    resolver_panel,
    resolver_table,
)
from core.evaluation.walkthrough.funnel import protocol_panel
from core.evaluation.walkthrough.habits import habit_tables, profile_vs_actual
from core.evaluation.walkthrough.menu import seed_index
from core.evaluation.walkthrough.persona import persona_panel
from core.evaluation.walkthrough.selection import (
    OTHER_FUSION,
    resolver_evidence,
    select_walkthrough,
)
from core.store import connect, load_testbed
from core.testbed.labels import ground_truth, ground_truth_codes
from core.testbed.questions import QIDS, SOURCES, question
from core.testbed.readout import readout
from core.testbed.vocab import DIFFICULTIES, N_DAYS, SPLITS

ROOT = Path(__file__).resolve().parents[1]
RAW = re.compile(r"\b(True|False|None|nan|NaN)\b|-\d")  # Python reprs, ASCII minus signs


@pytest.fixture(scope="module")
def world(small_store):
    """The whole small testbed, its GT codes, statistics, derivations, atoms, predictions."""
    con = connect(small_store)
    try:
        tb = load_testbed(con)
        preds = load_test_predictions(con, tuple(FORCED_METHODS + SELECTIVE_METHODS))
        evidence_preds = load_test_predictions(con, ("dsnbf", *OTHER_FUSION))
        llm = load_llm_answers(con)
        one = {}
        for i in np.flatnonzero(tb.personas["split"].to_numpy() == "test")[:2]:
            p = tb.personas.iloc[i]
            one[int(i)] = persona_predictions(con, seed=int(p["seed"]),
                                              persona_id=str(p["persona_id"]))
    finally:
        con.close()
    gt, stats = ground_truth_codes(tb)
    details = ground_truth(tb)
    return {"tb": tb, "gt": gt, "stats": stats, "details": details, "atoms": readout(tb),
            "preds": preds, "one": one,
            "evidence": resolver_evidence(tb.personas, gt, evidence_preds, llm)}


def first(tb, difficulty: str, split: str | None = None) -> int:
    mask = tb.personas["difficulty"].to_numpy() == difficulty
    if split is not None:
        mask &= tb.personas["split"].to_numpy() == split
    return int(np.flatnonzero(mask)[0])


# ---------------------------------------------------------------- persona panel
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_persona_panel_matches_the_testbed(world, difficulty):
    tb = world["tb"]
    i = first(tb, difficulty)
    panel = persona_panel(tb, row=i)
    person = tb.personas.iloc[i]
    assert (panel.persona_id, panel.seed, panel.split) == (
        person["persona_id"], int(person["seed"]), person["split"])
    traits = dict(zip(panel.traits["trait"], panel.traits["value"], strict=True))
    assert traits["age"] == str(person["age"])
    assert traits["close friends"] == str(person["close_friends"])
    assert traits["diet"] == str(person["dietary_restriction"]).replace("_", " ")
    assert all(isinstance(v, str) and v for v in traits.values())
    # the 30-day column is the latent mean, independently recomputed
    sleep = float(tb.events["duration_h"][i].mean())
    days = float(tb.events["did_exercise"][i].sum()) / N_DAYS * 7
    compare = panel.habits.compare.set_index("habit")
    assert compare.loc["sleep (h/night)", "30 days show"] == f"{sleep:.1f}"
    assert compare.loc["exercise (days/week)", "30 days show"] == f"{days:.1f}"
    assert list(compare.columns) == [f"profile says (days 1–{panel.anchor_end})",
                                     "30 days show"]
    assert re.fullmatch(r"\d\d:\d\d", compare.loc["bedtime", "30 days show"])
    lost = {"objective_log": int((~tb.objective["available"][i]).sum()),
            "device_log": int((~tb.device["available"][i]).sum())}
    assert dict(panel.lost_days) == lost and all(0 <= v <= N_DAYS for v in lost.values())
    assert [s for s, _ in panel.source_notes] == list(SOURCES)
    notes = dict(panel.source_notes)
    assert f"lost **{lost['device_log']} of 30** days" in notes["device_log"]
    assert panel.stated == (difficulty == "stated_vs_revealed")
    shifted = difficulty == "temporal_shift" and int(person["shift_day"] or 0) > 0
    assert (panel.shift_day is not None) == shifted
    assert (panel.habits.shift is not None) == shifted
    if shifted:
        s = int(person["shift_day"])
        assert panel.shift_day == s and traits["shift day"] == str(s)
        after = float(tb.events["duration_h"][i][s - 1:].mean())
        assert list(panel.habits.shift.columns) == ["habit", f"days 1–{s - 1}", f"days {s}–30"]
        assert panel.habits.shift.iloc[0][f"days {s}–30"] == f"{after:.1f}"
    for frame in (panel.traits, panel.habits.compare):
        assert not any(RAW.search(str(v)) for v in frame.to_numpy().ravel())


def test_persona_panel_rejects_a_row_outside_the_testbed(world):
    with pytest.raises(ValueError, match="out of range"):
        persona_panel(world["tb"], row=world["tb"].n)


@pytest.mark.parametrize("anchor_end", [0, N_DAYS + 1])
def test_habit_tables_reject_an_anchor_outside_the_month(world, anchor_end):
    pva = profile_vs_actual(world["tb"], row=0)
    with pytest.raises(ValueError, match="anchor_end"):
        habit_tables(pva, anchor_end=anchor_end, shift_day=None)


# ---------------------------------------------------------------- question panel
@pytest.mark.parametrize("qid", QIDS)
def test_question_panel_matches_ground_truth_and_atoms(world, qid):
    tb = world["tb"]
    j = QIDS.index(qid)
    details = world["details"]
    for i in (first(tb, d, "test") for d in DIFFICULTIES):
        stats = {k: np.asarray(v)[i].item() for k, v in world["stats"][qid].items()}
        detail = details[(details["persona_id"] == tb.personas["persona_id"].iloc[i])
                         & (details["seed"] == tb.personas["seed"].iloc[i])
                         & (details["question_id"] == qid)]["detail"].iloc[0]
        panel = question_panel(qid=qid, gt_code=int(world["gt"][i, j]),
                               atoms_row=world["atoms"][i, j], stats=stats, detail=detail)
        q = question(qid)
        assert panel.gt_label == q.labels[int(world["gt"][i, j])]
        assert [v.source for v in panel.verdicts] == list(SOURCES)
        assert panel.n_agree + panel.n_disagree + panel.n_null == len(SOURCES)
        for s, v in enumerate(panel.verdicts):
            code = int(world["atoms"][i, j, s])
            assert v.atom == (q.labels[code] if code >= 0 else "⊥")
            assert (v.status == "agree") == (v.atom == panel.gt_label)
            assert v.mark == STATUS_MARKS[v.status]
            assert v.informative == (v.source in q.informative)
            assert "§" not in v.explained + v.rule
        assert panel.n_agree == sum(v.status == "agree" for v in panel.verdicts)
        assert len(panel.stats) == len(stats) and panel.detail == detail
        assert not any(RAW.search(str(v)) for v in panel.stats["value"])
        assert "_" not in "".join(panel.stats["statistic"])


@pytest.mark.parametrize("gt_code", [-1, 99])
def test_question_panel_rejects_a_code_outside_the_answer_space(gt_code):
    with pytest.raises(ValueError, match="answer space"):
        question_panel(qid="A3", gt_code=gt_code, atoms_row=np.full(5, -1), stats={},
                       detail="")


@pytest.mark.parametrize("value, text", [
    (3, "3"), (np.int64(-2), "−2"), (0.51136, "0.511"), (-1.16666, "−1.167"), (3.5, "3.5"),
    (2.0, "2"), (-0.0001, "0"), (True, "yes"), (np.bool_(False), "no"), (None, "—"),
    (float("nan"), "—"), ("strict", "strict"),
])
def test_plain_number(value, text):
    assert plain_number(value) == text


# ---------------------------------------------------------------- resolver panel
def test_resolver_panel_counts_match_the_cached_predictions(world):
    tb = world["tb"]
    for i, preds in world["one"].items():
        for qid in ("A3", "C3", "Ctrl2"):
            gt_label = question(qid).labels[int(world["gt"][i, QIDS.index(qid)])]
            panel = resolver_panel(preds, qid=qid, gt_label=gt_label,
                                   split=str(tb.personas["split"].iloc[i]))
            rows = preds[preds["question_id"] == qid]
            forced = rows[rows["method"].isin(FORCED_METHODS)
                          & (rows["method"] != "source_reachability")]
            selective = rows[rows["method"].isin(SELECTIVE_METHODS)]
            assert panel.status == "answers"
            assert panel.n_forced == len(forced) > 0
            assert panel.n_forced_right == int((forced["answer"] == gt_label).sum())
            assert panel.n_selective == len(selective)
            assert panel.n_abstaining == int(selective["skipped"].astype(bool).sum())
            assert 0 <= panel.n_forced_right <= panel.n_forced
            assert 0 <= panel.n_abstaining <= panel.n_selective
            assert list(panel.table.columns) == ["label", "answer", "outcome", "confidence",
                                                 "margin"]
            assert len(panel.table) == len(rows)
            order = resolver_table(preds, qid=qid, gt_label=gt_label)["label"].tolist()
            assert panel.table["label"].tolist() == order
            dsnbf = rows.loc[rows["method"] == "dsnbf", "margin"].astype(float)
            assert panel.dsnbf_margin == pytest.approx(float(dsnbf.iloc[0]))
            assert set(panel.table["outcome"].str[0]) <= {"✓", "✗", "○"}


@pytest.mark.parametrize("split, status", [("train", "not_test"), ("dev", "not_test"),
                                           ("test", "no_predictions")])
def test_resolver_panel_without_answers_says_why(split, status):
    panel = resolver_panel(pd.DataFrame(), qid="A3", gt_label="40_to_69", split=split)
    assert panel.status == status and panel.table.empty
    assert bool(panel.split_role) == (split != "test")


# ---------------------------------------------------------------- protocol panel
@pytest.fixture(scope="module")
def pools(world):
    tb = world["tb"]
    test = tb.personas["split"].to_numpy() == "test"
    full = select_walkthrough(world["gt"], world["atoms"], tb.personas, keep_all=True,
                              evidence=world["evidence"])
    full["reference"] = world["evidence"].reference
    bare = select_walkthrough(world["gt"], world["atoms"], tb.personas, keep_all=True)
    return {"full": full, "bare": bare, "n_test": int(test.sum())}


@pytest.mark.parametrize("kind", ["full", "bare"])
@pytest.mark.parametrize("qid", ["A1", "A3", "C3", "F2"])
def test_protocol_panel_funnel_and_pair(world, pools, kind, qid):
    pool = pools[kind]
    top = pool[pool["rank"] > 0].iloc[0] if (pool["rank"] > 0).any() else pool.iloc[0]
    panel = protocol_panel(pool, seed=int(top["seed"]), persona_id=str(top["persona_id"]),
                           qid=qid)
    counts = [s.count for s in panel.steps]
    assert counts[0] == pools["n_test"]  # every test persona is asked every question
    assert all(a >= b for a, b in zip(counts, counts[1:], strict=False))
    qualifying = pool[(pool["question_id"] == qid) & pool["qualifies"]]
    assert panel.steps[-1].label == "qualify" and counts[-1] == len(qualifying)
    assert panel.full == (kind == "full") and bool(panel.pending) == (kind == "bare")
    assert {"+ (ii)", "+ (iii)", "+ (v)"} <= {s.label for s in panel.steps} or kind == "bare"
    assert panel.in_pool
    pair = pool[(pool["seed"] == top["seed"]) & (pool["persona_id"] == top["persona_id"])
                & (pool["question_id"] == qid)].iloc[0]
    assert (panel.rank is not None) == bool(pair["qualifies"])
    if panel.rank is not None:
        assert panel.rank == int(pair["rank"])
    assert dict(panel.checks)["(i) coverage"] == bool(pair["f_coverage"])
    assert panel.n_qualifying == int((pool["rank"] > 0).sum())
    extra = ["margin", "fusion"] if kind == "full" else ["agree"]
    assert list(panel.top.columns) == ["rank", "seed", "persona", "question", "atoms",
                                       "planner", "self-report", *extra, "preferences"]
    assert all(c.split(":")[0].strip().lower() in panel.top_note.lower()
               for c in ("atoms", "planner", *extra, "preferences"))
    assert len(panel.top) <= 10 and panel.top["rank"].tolist() == list(
        range(1, len(panel.top) + 1))
    assert all(s.help and "§" not in s.help for s in panel.steps)


def test_protocol_panel_of_a_persona_outside_the_test_split(world, pools):
    tb = world["tb"]
    i = first(tb, "stable", "train")
    panel = protocol_panel(pools["full"], seed=int(tb.personas["seed"].iloc[i]),
                           persona_id=str(tb.personas["persona_id"].iloc[i]), qid="A3")
    assert not panel.in_pool and panel.rank is None and panel.checks == ()


def test_protocol_panel_rejects_a_pool_without_the_protocol(pools):
    with pytest.raises(ValueError, match="pool lacks columns"):
        protocol_panel(pools["full"][["seed", "persona_id"]], seed=1, persona_id="x", qid="A3")
    with pytest.raises(ValueError, match="unknown question"):
        protocol_panel(pools["full"], seed=1, persona_id="x", qid="Z9")


# ---------------------------------------------------------------- persona menu
def _pandas_filter(personas, seed, search, difficulties, splits):
    """The page's former filter, kept here as the reference implementation."""
    in_seed = personas[personas["seed"] == seed]
    mask = pd.Series(True, index=in_seed.index)
    if search.strip():
        mask &= in_seed["persona_id"].str.contains(search.strip().lower(), regex=False)
    if difficulties:
        mask &= in_seed["difficulty"].isin(difficulties)
    if splits:
        mask &= in_seed["split"].isin(splits)
    return tuple(in_seed.loc[mask, "persona_id"])


@pytest.mark.parametrize("search", ["", "  ", "shift", "STATED", "adams", "no-such-persona"])
@pytest.mark.parametrize("difficulties, splits", [
    ((), ()), (("stable",), ()), ((), ("test",)), (("temporal_shift", "stable"), ("train", "dev")),
    (DIFFICULTIES, SPLITS),
])
def test_menu_agrees_with_the_pandas_filter(world, search, difficulties, splits):
    personas = world["tb"].personas
    index = seed_index(personas)
    for seed in index.seeds:
        menu = index.menu(seed, search=search, difficulties=difficulties, splits=splits)
        assert menu.options == _pandas_filter(personas, seed, search, difficulties, splits)
        assert menu.n_in_seed == int((personas["seed"] == seed).sum())
        ids = list(index.ids[seed])
        preferred = ids[-1]
        for current in (None, ids[0], "bench_nobody_999"):
            options, chosen = menu.choose(current=current, preferred=preferred)
            assert options and chosen in options
            if menu.options:
                assert options == menu.options
                if current in menu.options:
                    assert chosen == current
            else:
                assert options == ((current,) if current in menu.ids else (preferred,))


def test_menu_rejects_an_unknown_seed_and_a_short_table(world):
    index = seed_index(world["tb"].personas)
    with pytest.raises(ValueError, match="seed 7 is not in this store"):
        index.menu(7)
    with pytest.raises(ValueError, match="personas lacks columns: split"):
        seed_index(world["tb"].personas.drop(columns=["split"]))


# ---------------------------------------------------------------- the package
@pytest.mark.parametrize("name", walkthrough.__all__)
def test_every_public_name_resolves_to_its_home_module(name):
    value = getattr(walkthrough, name)
    home = importlib.import_module(f"core.evaluation.walkthrough.{walkthrough._HOME[name]}")
    assert getattr(home, name) is value and name in home.__all__


def test_the_package_imports_no_submodule_until_a_name_is_used():
    code = ("import sys, core.evaluation.walkthrough as w\n"
            "print(sorted(m for m in sys.modules if m.startswith(w.__name__ + '.')))\n"
            "from core.evaluation.walkthrough import select_walkthrough\n"
            "print('core.evaluation.walkthrough.selection' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=120).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        walkthrough.nope  # noqa: B018


# ---------------------------------------------------------------- glue caches
def test_a_rerun_reads_the_cached_panels(app_env, monkeypatch, cold_caches):
    """Two runs of the page and a second session build each panel once."""
    from streamlit.testing.v1 import AppTest

    import pages._shared.walkthrough as glue

    calls: dict[str, int] = {}

    def counting(name):
        real = getattr(glue, name)

        def wrapped(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)
        monkeypatch.setattr(glue, name, wrapped)

    for name in ("persona_panel", "question_panel", "protocol_panel", "resolver_panel"):
        counting(name)
    page = str(ROOT / "pages" / "1_Walkthrough.py")
    at = AppTest.from_file(page, default_timeout=60).run()
    assert not at.exception
    at.run()
    AppTest.from_file(page, default_timeout=60).run()  # another visitor, same instance
    assert calls == {"persona_panel": 1, "question_panel": 1, "protocol_panel": 1,
                     "resolver_panel": 1}


def test_the_reset_button_goes_back_to_the_protocols_pick(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "1_Walkthrough.py"), default_timeout=60).run()
    pick = (at.selectbox(key="wt_seed").value, at.selectbox(key="wt_persona").value,
            at.selectbox(key="wt_q").value)
    other = next(q for q in QIDS if q != pick[2])
    at.selectbox(key="wt_q").select(other).run()
    at.text_input(key="wt_search").input("stable").run()
    assert at.selectbox(key="wt_q").value == other
    at.button(key="wt_reset").click().run()
    assert not at.exception
    assert (at.selectbox(key="wt_seed").value, at.selectbox(key="wt_persona").value,
            at.selectbox(key="wt_q").value) == pick
    assert at.text_input(key="wt_search").value == ""
    assert list(at.get("button_group")[0].value) == list(DIFFICULTIES)
