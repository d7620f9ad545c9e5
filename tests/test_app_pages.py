"""AppTests of the home page and the Walkthrough page on the small generated store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.evaluation.cached import load_llm_answers, load_test_predictions
from core.evaluation.walkthrough import OTHER_FUSION, resolver_evidence, select_walkthrough
from core.glossary import PAPERS
from core.store import connect, load_testbed
from core.testbed.labels import ground_truth_codes
from core.testbed.questions import QIDS, question
from core.testbed.readout import readout
from core.testbed.words import label_words

ROOT = Path(__file__).resolve().parent.parent
HOME = str(ROOT / "app.py")
WALK = str(ROOT / "pages" / "1_Walkthrough.py")


@pytest.fixture(scope="module")
def expected(small_store):
    """The protocol's pick (full §8.7 protocol on the cached predictions) and every persona's
    GT, computed straight from the testbed."""
    con = connect(small_store)
    try:
        tb = load_testbed(con)
        gt, _ = ground_truth_codes(tb)
        evidence = resolver_evidence(
            tb.personas, gt, load_test_predictions(con, ("dsnbf", *OTHER_FUSION)),
            load_llm_answers(con))
    finally:
        con.close()
    assert evidence is not None and evidence.reference == "majority_vote"
    pool = select_walkthrough(gt, readout(tb), tb.personas, evidence=evidence)
    top = pool.iloc[0]
    rows = {(int(s), p): i for i, (s, p) in
            enumerate(zip(tb.personas["seed"], tb.personas["persona_id"], strict=True))}
    return {"seed": int(top["seed"]), "persona": str(top["persona_id"]),
            "qid": str(top["question_id"]), "gt": gt, "rows": rows, "personas": tb.personas}


def gt_label(expected, seed, persona, qid):
    """The ground truth as the page shows it: the label in words."""
    i = expected["rows"][(seed, persona)]
    return label_words(qid, question(qid).labels[int(expected["gt"][i, QIDS.index(qid)])])


def shown_gt(at) -> str:
    """The ground-truth headline (wrap hints removed)."""
    heads = [h.value.replace("\u200b", "") for h in at.subheader]
    return heads[3]


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [h.value for h in at.subheader]
    return "\n".join(str(p) for p in parts)


def run_walkthrough(params: dict | None = None) -> AppTest:
    at = AppTest.from_file(WALK, default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def test_home_page_renders_the_stories_and_the_store(app_env):
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert not at.exception
    assert not at.error
    text = page_text(at)
    for paper in PAPERS.values():  # named by what they are about, not "Seed 000"
        assert paper.story in text
    assert "Seed 00" not in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Personas"] == "72"
    assert metrics["Seeds"] == "2"
    assert metrics["Origin"] == "generated"
    assert "20260321" in page_text(at)
    links = at.get("page_link")
    # the first thing offered is the guided tour (issue 22), then the first story's page
    assert [link.proto.page for link in links[:2]] == ["Tour", "Walkthrough"]
    assert links[0].proto.label == "Start the guided tour"


def test_walkthrough_opens_on_the_protocol_pick(app_env, expected):
    at = run_walkthrough()
    assert not at.exception
    assert not at.warning and not at.error
    assert at.selectbox(key="wt_seed").value == expected["seed"]
    assert at.selectbox(key="wt_persona").value == expected["persona"]
    assert at.selectbox(key="wt_q").value == expected["qid"]
    assert expected["persona"] in page_text(at)
    assert shown_gt(at) == gt_label(expected, expected["seed"], expected["persona"],
                                    expected["qid"])
    # the three figures and both downloads are there
    charts = at.get("plotly_chart")
    assert len(charts) == 3
    spec = json.loads(charts[2].proto.spec)
    assert spec["data"][0]["type"] == "heatmap"
    assert len(at.get("download_button")) == 2


def test_changing_the_question_changes_the_ground_truth(app_env, expected):
    seed, persona = expected["seed"], expected["persona"]
    first = gt_label(expected, seed, persona, expected["qid"])
    other = next(q for q in QIDS if gt_label(expected, seed, persona, q) != first)
    at = run_walkthrough()
    assert shown_gt(at) == first
    at.selectbox(key="wt_q").select(other).run()
    assert not at.exception
    assert shown_gt(at) == gt_label(expected, seed, persona, other)
    assert f"5 · How the ground truth of {other} is derived" in [h.value for h in at.header]


def test_query_params_open_that_persona(app_env, expected):
    personas = expected["personas"]
    pick = personas[(personas["seed"] == 20260321) & (personas["difficulty"] == "stable")]
    persona = str(pick["persona_id"].iloc[-1])
    at = run_walkthrough({"seed": "20260321", "persona": persona, "q": "C3"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="wt_seed").value == 20260321
    assert at.selectbox(key="wt_persona").value == persona
    assert at.selectbox(key="wt_q").value == "C3"
    assert persona in page_text(at)
    assert shown_gt(at) == gt_label(expected, 20260321, persona, "C3")


def test_seed_position_and_lowercase_question_are_accepted(app_env, expected):
    at = run_walkthrough({"seed": "2", "q": "ctrl2"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="wt_seed").value == 20260322
    assert at.selectbox(key="wt_q").value == "Ctrl2"


def test_bogus_persona_in_the_url_warns_and_falls_back(app_env, expected):
    at = run_walkthrough({"seed": str(expected["seed"]), "persona": "bench_nobody_999",
                          "q": expected["qid"]})
    assert not at.exception
    assert len(at.warning) == 1
    assert "bench_nobody_999" not in at.warning[0].value  # the link's text is never echoed
    assert "persona is not in seed" in at.warning[0].value.replace("\\", "")
    assert at.selectbox(key="wt_persona").value == expected["persona"]


@pytest.mark.parametrize("params, word", [
    ({"seed": "123"}, "seed"),
    ({"seed": "abc"}, "seed"),
    ({"q": "Z9"}, "question"),
])
def test_bogus_seed_or_question_warns(app_env, params, word):
    at = run_walkthrough(params)
    assert not at.exception
    assert len(at.warning) == 1 and word in at.warning[0].value


@pytest.mark.parametrize("key, word", [("seed", "seed"), ("persona", "persona"),
                                       ("q", "question")])
def test_a_repeated_parameter_is_refused_not_read_as_its_last_value(app_env, expected, key,
                                                                     word):
    """Issue 20 point 9: ``?seed=1&seed=2`` was silently read as seed 2."""
    values = {"seed": ["20260321", "20260322"], "persona": ["bench_x1", "bench_y2"],
              "q": ["C3", "A1"]}
    at = run_walkthrough({key: values[key]})
    assert not at.exception
    assert len(at.warning) == 1
    text = at.warning[0].value.replace("\\", "")
    assert f"gives the {word} more than once" in text
    assert not any(v in text for v in values[key])  # the link's text is never echoed
    if key == "seed":
        assert at.selectbox(key="wt_seed").value == expected["seed"]  # the default, not 2


def test_filters_narrow_the_persona_list(app_env):
    at = run_walkthrough()
    at.text_input(key="wt_search").input("stated").run()
    assert not at.exception
    options = at.selectbox(key="wt_persona").options
    assert options and all("stated" in o for o in options)
    assert "stated" in at.selectbox(key="wt_persona").value
    at.text_input(key="wt_search").input("no-such-persona").run()
    assert not at.exception
    assert len(at.selectbox(key="wt_persona").options) == 1


def test_an_unusable_store_gives_one_error_line(monkeypatch, tmp_path):
    bad = tmp_path / "bad.duckdb"
    bad.write_text("this is not a duckdb file")
    monkeypatch.setenv("ARBITER_DB", str(bad))
    for script in (HOME, WALK):
        at = AppTest.from_file(script, default_timeout=60).run()
        assert not at.exception
        assert len(at.error) == 1
        assert "store is unusable" in at.error[0].value


def test_a_missing_store_is_built_on_first_start(monkeypatch, tmp_path):
    import pages._shared.store as shared_store
    from core.testbed.config import TestbedConfig

    path = tmp_path / "fresh" / "arbiter.duckdb"
    monkeypatch.setenv("ARBITER_DB", str(path))
    monkeypatch.setattr(shared_store, "TestbedConfig",
                        lambda: TestbedConfig(seeds=(7,), personas_per_difficulty=4))
    at = AppTest.from_file(HOME, default_timeout=60).run()
    assert not at.exception and not at.error
    assert path.exists()
    assert at.status and at.status[0].label == "Store built"
    assert {m.label: m.value for m in at.metric}["Personas"] == "12"


def test_an_unwritable_data_folder_falls_back_once_per_process(monkeypatch, tmp_path):
    """The store's folder cannot be created (its parent is a file): one temporary store is
    built for the process, every page says so in one banner, and no page rebuilds it."""
    import pages._shared.store as shared_store
    from core.testbed.config import TestbedConfig

    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    monkeypatch.setenv("ARBITER_DB", str(blocker / "arbiter.duckdb"))
    monkeypatch.setattr(shared_store, "TestbedConfig",
                        lambda: TestbedConfig(seeds=(7,), personas_per_difficulty=4))
    builds = []
    real = shared_store.build_store
    monkeypatch.setattr(shared_store, "build_store",
                        lambda path, *a, **k: builds.append(path) or real(path, *a, **k))
    for script in (HOME, WALK, HOME):  # three page views, as three visitors
        at = AppTest.from_file(script, default_timeout=60).run()
        assert not at.exception and not at.error
        assert len(at.info) >= 1 and "cannot write its data folder" in at.info[0].value
        text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
        assert str(tmp_path) not in text  # no server path reaches the visitor
    fallbacks = [p for p in builds if blocker not in Path(p).parents]
    assert len(fallbacks) == 1, builds
    assert {m.label: m.value for m in at.metric}["Personas"] == "12"


def test_a_server_on_a_fallback_store_says_so(app_env, monkeypatch):
    """serve.py built the store in a temporary folder (issue 20 point 5): every page says so."""
    monkeypatch.setenv("ARBITER_DB_FALLBACK", "1")
    at = run_walkthrough()
    assert not at.exception
    assert any("cannot write its data folder" in i.value for i in at.info)
