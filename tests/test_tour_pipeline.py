"""The tour's pipeline stops (``core.tour.stops_pipeline``): each selected example really shows
its failure under the stated settings, checked against the store's own tables and the pages'
own computations rather than the stop's code; the words a student reads decode."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.evaluation.run import run_seed
from core.evaluation.selective_view import selective_view
from core.glossary import find
from core.prose.extract import extract
from core.prose.mixed_view import MIXED_METHODS, PROFILES, factorial_view, mixed_fit
from core.prose.paraphrase import paraphrase
from core.prose.render import render
from core.prose.views import prose_personas
from core.store import load_atoms, query_df
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.questions import Q_INDEX, QIDS, QUESTIONS, SOURCE_LABELS, SOURCES
from core.testbed.readout import readout
from core.testbed.words import label_words
from core.tour import ORDER, Chart, StopView, TourData, compute_stop
from core.tour._pipeline_hints import (
    HARD,
    PAPER_SVR,
    paper_choice,
    release_scores,
    release_view,
)
from core.tour._pipeline_store import NEEDS_SPLITS
from core.tour._pipeline_wording import PARAPHRASE_SEED, PER_CLASS, RATE, SEED
from core.tour.stops_pipeline import STOPS

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("extraction-or-resolution", "unseen-wording", "answer-or-abstain", "hints-overcorrect")
SRC_TOKENS = dict(zip(("profile", "planner", "self_report", "objective", "device"), SOURCES,
                      strict=True))
# the glossary test's token rule (tests/test_glossary.py) and its ordinary words
TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*|T_[a-z]+)")
ORDINARY = {"URL", "CSV", "HTML", "PNG", "JSON", "QA", "GPT", "BERT", "DPR", "BEM", "ARBITER",
            "A3", "API", "ID", "OK", "MB"}
PERSONA_ID = re.compile(r"bench_[a-z]+_\d+_[a-z_]+")
SNAKE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


@pytest.fixture(scope="module")
def small(small_store):
    con = duckdb.connect(str(small_store), read_only=True)
    data = TourData(con)
    yield con, {k: compute_stop(k, data) for k in KEYS}
    con.close()


@pytest.fixture(scope="module")
def bare() -> dict[str, StopView]:
    data = TourData()
    return {k: compute_stop(k, data) for k in KEYS}


def _pairs(view: StopView) -> dict[str, str]:
    return dict(view.example)


def _k_of_n(text: str) -> tuple[int, int]:
    k, n = re.match(r"([\d,]+) of ([\d,]+)", text).groups()
    return int(k.replace(",", "")), int(n.replace(",", ""))


def _visible(view: StopView) -> list[str]:
    out = [view.answer, view.reason, view.note]
    for pairs in (view.example, view.settings, view.evidence):
        out += [x for pair in pairs for x in pair]
    c = view.chart
    if c is not None:
        out += [c.title, c.caption, c.x_title, c.y_title, c.marker_label]
        for col in ("who", "answer", "series", "group", "text"):
            if col in c.data:
                out += [str(x) for x in c.data[col]]
    return out


def test_the_stops_are_the_registrys_pipeline_keys_in_its_order():
    assert [s.key for s in STOPS] == [k for k in ORDER if k in KEYS]
    assert {s.key for s in STOPS} == set(KEYS)
    for s in STOPS:
        assert (ROOT / s.page).is_file() and s.story == "memory"
        assert s.teacher.ask and s.teacher.wrong_answer and s.teacher.follow_up


def test_every_word_a_student_reads_decodes(small, bare):
    texts = []
    for s in STOPS:
        texts += [s.title, s.section, s.failure, s.rule, s.question, s.remedy, s.control,
                  s.teacher.ask, s.teacher.wrong_answer, s.teacher.follow_up]
    for view in (*small[1].values(), *bare.values()):
        texts += _visible(view)
    tokens = {t.rstrip("_") for text in texts for t in TOKEN.findall(text)}
    unknown = sorted(t for t in tokens if t not in ORDINARY and find(t) is None
                     and find(t.split("_")[0]) is None)
    assert not unknown, f"tokens no glossary term lists: {unknown}"
    code = sorted({m for text in texts for m in SNAKE.findall(PERSONA_ID.sub("", text))})
    assert not code, f"code-style identifiers shown to a student: {code}"


def test_every_answer_label_reads_as_words():
    for q in QUESTIONS:
        words = [label_words(q.qid, lab) for lab in q.labels]
        assert all("_" not in w for w in words) and len(set(words)) == len(words), q.qid
    with pytest.raises(ValueError, match="not an answer of D1"):
        label_words("D1", "20_or_more")


def test_without_a_store_the_store_stops_say_so_and_the_others_compute(bare):
    for key in ("extraction-or-resolution", "answer-or-abstain"):
        assert not bare[key].shows_failure and "build" in bare[key].note
    assert bare["unseen-wording"].shows_failure and bare["hints-overcorrect"].shows_failure
    assert "paper's numbers" in bare["hints-overcorrect"].note


def test_on_an_imported_release_the_refitting_stops_explain_and_hints_fall_back(sample_store):
    con = duckdb.connect(str(sample_store), read_only=True)
    try:
        data = TourData(con)
        for key in ("extraction-or-resolution", "answer-or-abstain"):
            v = compute_stop(key, data)
            assert not v.shows_failure and v.note == NEEDS_SPLITS
        hints = compute_stop("hints-overcorrect", data)
    finally:
        con.close()
    # the sample's one person is of the temporal-shift kind, so the paper's numbers are shown
    assert hints.shows_failure and "cover 1 test person" in hints.note


# ----------------------------------------------------------------- extraction or resolution

def test_the_misread_atom_turns_dsnbfs_right_answer_wrong(small):
    con, views = small
    v = views["extraction-or-resolution"]
    assert v.shows_failure and isinstance(v.chart, Chart) and v.chart.kind == "answers"
    link = v.query
    assert link["ex_profile"] == "paper" and link["ex_profile"] in PROFILES
    assert {link["ex_a"], link["ex_b"]} <= set(MIXED_METHODS) - {"majority_class"}
    seed, _, pid = link["ex_persona"].partition("-")
    assert (int(seed), pid) in prose_personas(con)
    qid, source = link["ex_q"], SRC_TOKENS[link["ex_src"]]
    qi, si = Q_INDEX[qid], SOURCES.index(source)
    key = [int(seed), pid, qid]
    truth = query_df(con, "SELECT answer FROM ground_truth WHERE seed = ? AND persona_id = ? "
                          "AND question_id = ?", key)["answer"].iloc[0]
    # the build's own cached DSNBF answer on the records' atoms is right
    cached = query_df(con, "SELECT answer FROM predictions WHERE method = 'dsnbf' AND seed = ? "
                           "AND persona_id = ? AND question_id = ?", key)["answer"].iloc[0]
    assert cached == truth
    rows = v.chart.data.set_index("who")
    misread = rows.loc[f"{SOURCE_LABELS[source]}, as the extractor misread it", "answer"]
    assert rows.loc[SOURCE_LABELS[source], "answer"] != misread
    assert rows.loc["The truth", "answer"] == label_words(qid, truth)
    # the store's extracted atoms of that person, with only this one atom misread
    people = query_df(con, "SELECT seed, persona_id FROM personas ORDER BY row")
    row = int(np.flatnonzero((people["seed"] == int(seed)) & (people["persona_id"] == pid))[0])
    clean = load_atoms(con, kind="extracted")[row:row + 1].copy()
    words = [label_words(qid, lab) for lab in QUESTIONS[qi].labels]
    noisy = clean.copy()
    noisy[0, qi, si] = words.index(misread)
    assert words[clean[0, qi, si]] == rows.loc[SOURCE_LABELS[source], "answer"]
    fit = mixed_fit(con, methods=("majority_vote", "dsnbf"))
    model = next(r for r in fit.star if r.seed == int(seed)).models["dsnbf"]
    assert words[model.predict(clean).answer[0, qi]] == label_words(qid, truth)
    after = words[model.predict(noisy).answer[0, qi]]
    assert after != label_words(qid, truth)
    assert after == rows.loc["DSNBF, reading the extracted atoms", "answer"]
    # the evidence is the Extraction page's 2 × 2 on the same profile
    ev = dict(v.evidence)
    fv = factorial_view(fit, a="dsnbf", b="majority_vote", profile="paper", eps=0.1, n_boot=10)
    cells = {"a_star": "DSNBF right, reading the records' atoms",
             "a_hat": "DSNBF right, reading the extracted atoms",
             "b_star": "Majority vote right, reading the records' atoms",
             "b_hat": "Majority vote right, reading the extracted atoms"}
    acc = {}
    for cell, label in cells.items():
        k, n = _k_of_n(ev[label])
        acc[cell] = 100 * k / n
        assert acc[cell] == pytest.approx(fv.decomposition.accuracy[cell])
    resolution = ((acc["a_star"] - acc["b_star"]) + (acc["a_hat"] - acc["b_hat"])) / 2
    extraction = ((acc["a_star"] - acc["a_hat"]) + (acc["b_star"] - acc["b_hat"])) / 2
    assert ev["Lost in resolution (majority vote instead of DSNBF)"] == f"{resolution:.1f} points"
    assert ev["Lost in extraction (mean over both resolvers)"] == f"{extraction:.1f} points"


# --------------------------------------------------------------------------- unseen wording

def test_one_reworded_sentence_changes_the_atom_it_fed(bare, small):
    v = bare["unseen-wording"]
    assert v.shows_failure and "ex_persona" not in v.query  # no store, no person to open
    assert "ex_persona" not in small[1]["unseen-wording"].query  # not this store's people
    assert v.query["ex_profile"] == "paraphrase"
    ex = _pairs(v)
    pid = re.search(PERSONA_ID, ex["Person"]).group(0)
    qid, source = v.query["ex_q"], SRC_TOKENS[v.query["ex_src"]]
    qi, si = Q_INDEX[qid], SOURCES.index(source)
    # the stated setting, recomputed with the library's own functions
    config = TestbedConfig()
    tb = generate(TestbedConfig(seeds=(SEED,), personas_per_difficulty=
                                config.personas_per_difficulty))
    test = tb.personas[tb.personas["split"] == "test"]
    pick = test.groupby("difficulty", sort=False).head(PER_CLASS)
    sub = tb.subset(tb.personas.index.isin(pick.index))
    texts = list(render(sub).texts)
    reworded = paraphrase(texts, rate=RATE, rng=np.random.default_rng(PARAPHRASE_SEED)).texts
    p = list(sub.personas["persona_id"]).index(pid)
    assert f"- {ex['Sentence as written']}" in texts[p].split("\n")
    assert f"- {ex['The same sentence reworded']}" in reworded[p].split("\n")
    star = readout(sub)
    written = extract(texts, persona_ids=list(sub.personas["persona_id"])).atoms
    got = extract(reworded, persona_ids=list(sub.personas["persona_id"])).atoms
    labels = QUESTIONS[qi].labels
    assert written[p, qi, si] == star[p, qi, si] >= 0  # read right as written
    assert got[p, qi, si] >= 0 and got[p, qi, si] != star[p, qi, si]  # another answer
    assert f"“{label_words(qid, labels[got[p, qi, si]])}” from the reworded" in ex["Atom"]
    ev = dict(v.evidence)
    assert _k_of_n(ev["Cells read equal to the records, prose as written"]) == (
        int((written == star).sum()), star.size)
    assert _k_of_n(ev["Cells read equal to the records, prose reworded"]) == (
        int((got == star).sum()), star.size)
    # the chart: by source, the reworded prose misses more than the prose as written
    bars = v.chart.data.pivot(index="group", columns="series", values="value")
    assert (bars["prose reworded"] >= bars["prose as written"]).all()
    assert bars["prose reworded"].sum() > bars["prose as written"].sum()


# ----------------------------------------------------------------------- answer or abstain

def test_the_calibrated_threshold_buys_accuracy_and_withholds_right_answers(small):
    con, views = small
    v = views["answer-or-abstain"]
    assert v.shows_failure and v.query["sq_method"] == "DSNBF+SKIP"
    theta = float(v.query["theta"])
    personas = query_df(con, "SELECT * FROM personas ORDER BY row").drop(columns=["row"])
    gt = np.full((len(personas), len(QIDS)), -1, np.int8)
    g = query_df(con, "SELECT p.row, g.question_id, g.answer FROM ground_truth g JOIN personas "
                      "p USING (seed, persona_id)")
    for row, q, a in g.itertuples(index=False):
        gt[row, Q_INDEX[q]] = QUESTIONS[Q_INDEX[q]].labels.index(a)
    atoms = load_atoms(con, kind="readout")
    runs = []
    for seed in pd.unique(personas["seed"]):
        m = (personas["seed"] == seed).to_numpy()
        runs.append(run_seed(atoms[m], gt[m], personas[m].reset_index(drop=True),
                             methods=["dsnbf_skip"]))
    page = selective_view(runs, "dsnbf_skip", theta=theta)
    assert page.is_default  # the link's θ is the page's default, the median calibrated θ
    ev = dict(v.evidence)
    assert ev["Coverage (the share of questions answered)"] == f"{page.now['coverage']:.1f} %"
    assert ev["Accuracy on the questions answered, at the threshold"] == (
        f"{page.now['selective_accuracy']:.1f} %")
    assert page.now["selective_accuracy"] > page.now["forced_accuracy"]  # what it buys
    held = sum(_k_of_n(ev[k])[0] for k in ("Held back that would have been wrong",
                                           "Held back that would have been right"))
    answered, n = _k_of_n(ev["Answers given"])
    assert held == n - answered > 0 and _k_of_n(ev["Held back that would have been right"])[0] > 0
    # the example: held back (two sources or more, margin below θ) and the build's cached
    # forced DSNBF answer to it is wrong
    ex = _pairs(v)
    pid = re.search(PERSONA_ID, ex["Person"]).group(0)
    qid = next(q.qid for q in QUESTIONS if ex["A question it holds back"].startswith(q.title))
    cached = query_df(con, "SELECT method, answer, margin, p.row FROM predictions JOIN "
                           "personas p USING (seed, persona_id) WHERE persona_id = ? AND "
                           "question_id = ? AND method IN ('dsnbf', 'dsnbf_skip')", [pid, qid])
    row = int(cached["row"].iloc[0])
    assert int((atoms[row, Q_INDEX[qid]] >= 0).sum()) >= 2
    assert float(cached.loc[cached["method"] == "dsnbf_skip", "margin"].iloc[0]) < theta
    forced = cached.loc[cached["method"] == "dsnbf", "answer"].iloc[0]
    truth = QUESTIONS[Q_INDEX[qid]].labels[gt[row, Q_INDEX[qid]]]
    assert forced != truth
    assert ex["What it would have answered"] == (f"“{label_words(qid, forced)}”; the truth is "
                                                 f"“{label_words(qid, truth)}”")
    # the chart: coverage falls as the threshold rises; the marker is the link's θ
    lines = v.chart.data
    cov = lines[lines["series"].str.startswith("coverage")].sort_values("x")["y"].to_numpy()
    assert (np.diff(cov) <= 1e-9).all() and v.chart.marker == pytest.approx(theta)


# ------------------------------------------------------------------------ hints over-correct

def test_the_paper_path_quotes_schema_below_direct_on_the_hard_class(bare):
    # the constants are the appendix's own sentences (seed 000 Appendix 11.2, on Table 13)
    trend = "D-Temp svr ... (GPT-S 39.4%, Gem-S 40.0%, vs. their Direct counterparts at 59.7%)"
    overall = "Schema accuracy falls below Direct under svr (GPT: 59.8% vs. 61.8%; Gemini: " \
              "60.3% vs. 61.2%)"
    gs, ms, d = (float(x) for x in re.findall(r"(\d+\.\d)%", trend))
    assert dict(PAPER_SVR["trend"]) == {("gpt-5.4", "direct"): d, ("gpt-5.4", "schema-aware"):
                                        gs, ("gemini_p2", "direct"): d,
                                        ("gemini_p2", "schema-aware"): ms}
    g_s, g_d, m_s, m_d = (float(x) for x in re.findall(r"(\d+\.\d)%", overall))
    assert dict(PAPER_SVR["all"]) == {("gpt-5.4", "direct"): g_d, ("gpt-5.4", "schema-aware"):
                                      g_s, ("gemini_p2", "direct"): m_d,
                                      ("gemini_p2", "schema-aware"): m_s}
    qset, gaps, ok = paper_choice()
    assert qset == "trend" and ok and gaps == pytest.approx({"gpt-5.4": d - gs,
                                                             "gemini_p2": d - ms})
    v = bare["hints-overcorrect"]
    assert v.shows_failure and v.query == {"lb_q": "D1", "lb_src": "Daily self-report"}
    bars = v.chart.data
    for group, part in bars.groupby("group"):
        if part["series"].nunique() == 2:
            plain, hinted = part.sort_values("series", key=lambda s: s.str.startswith("with"))[
                "value"]
            assert hinted < plain, group


def _release(schema_wrong: dict[tuple[str, str], str]) -> tuple[pd.DataFrame, ...]:
    """Two stated-vs-revealed and one stable test person (and one training person): Direct
    answers the truth everywhere but the stable person's A1; Schema-aware as Direct except
    ``schema_wrong`` ((person, question) → answer)."""
    people = pd.DataFrame({"seed": [1, 1, 1, 1], "persona_id": ["s2", "s1", "t1", "x1"],
                           "difficulty": [HARD, HARD, "stable", HARD],
                           "split": ["test", "test", "test", "train"]})
    truth = pd.DataFrame([(1, p, q.qid, q.labels[0]) for p in people["persona_id"]
                          for q in QUESTIONS],
                         columns=["seed", "persona_id", "question_id", "answer"])
    direct = truth.assign(model="gpt-5.4", variant="direct")
    direct.loc[(direct["persona_id"] == "t1") & (direct["question_id"] == "A1"), "answer"] = \
        QUESTIONS[0].labels[1]
    schema = direct.assign(variant="schema-aware")
    for (p, q), a in schema_wrong.items():
        schema.loc[(schema["persona_id"] == p) & (schema["question_id"] == q), "answer"] = a
    schema = schema[~((schema["persona_id"] == "s2") & (schema["question_id"] == "G2"))]
    return pd.concat([direct, schema], ignore_index=True), truth, people



def test_the_release_path_scores_the_answers_and_picks_the_costliest_question():
    d1 = QUESTIONS[Q_INDEX["D1"]].labels
    answers, truth, people = _release({("s1", "D1"): d1[2], ("s2", "D1"): "sideways",
                                       ("s2", "A2"): QUESTIONS[1].labels[2]})
    scores = release_scores(answers, truth, people)
    grid = scores["gpt-5.4"]
    assert sorted(set(grid["persona_id"])) == ["s1", "s2", "t1"]  # test people only
    assert len(grid) == 3 * 18
    hard = grid[grid["difficulty"] == HARD]
    # wrong: D1 twice (one of them outside the answer space), A2 once, and G2 missing for s2
    assert int((~hard["right_schema-aware"]).sum()) == 4
    assert int(hard["right_direct"].sum()) == 36
    v = release_view("gpt-5.4", grid)
    assert v.shows_failure and v.query["lb_q"] == "D1"
    ex = _pairs(v)
    assert "listed as s1," in ex["Person"]  # s1 before s2 by id
    assert ex["Without hints"] == label_words("D1", d1[0])
    assert ex["With bias hints"] == label_words("D1", d1[2])
    ev = dict(v.evidence)
    assert ev["stated vs revealed people, with bias hints (Schema-aware prompt)"] == \
        "32 of 36 (88.9 %)"
    assert ev["stable people, without hints (Direct prompt)"] == "17 of 18 (94.4 %)"


def test_the_release_path_reports_hints_that_do_not_overcorrect():
    answers, truth, people = _release({})
    # Direct now misses D1 of both stated-vs-revealed people; Schema-aware only s2's G2
    wrong = (answers["variant"] == "direct") & (answers["question_id"] == "D1")
    answers.loc[wrong, "answer"] = QUESTIONS[Q_INDEX["D1"]].labels[1]
    v = release_view("gpt-5.4", release_scores(answers, truth, people)["gpt-5.4"])
    assert not v.shows_failure and "not less accurate" in v.note and "97.2 %" in v.note
