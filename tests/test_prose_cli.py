"""``python -m core render | extract | faithfulness``: exit statuses, one-line errors, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main

SAMPLE = Path(__file__).parent / "fixtures" / "survey2agent-sample"
SMALL = ["--seeds", "5", "--personas-per-difficulty", "4"]


@pytest.mark.parametrize("argv,fragment", [
    (["render", "--seeds", "x"], "must be an integer"),
    (["render", "--seeds", "1", "1"], "distinct"),
    (["render", "--personas-per-difficulty", "2"], "--personas-per-difficulty"),
    (["render", "--release", "/nonexistent/dir"], "not a directory"),
    (["render", "--seeds", "1", "--release", str(SAMPLE)], "not allowed with"),
    (["extract", "--noise", "uniform:1.5"], "eps must be in [0, 1]"),
    (["extract", "--noise", "uniform:nan"], "needs a number"),
    (["extract", "--noise", "loud"], "unknown noise profile"),
    (["extract", "--noise-seed", "-1"], "--noise-seed"),
    (["faithfulness", "--cells", "some"], "invalid choice"),
    (["faithfulness", "--json", "/"], "is a directory"),
    (["faithfulness", "--paraphrase", "1.5"], "--paraphrase"),
    (["faithfulness", "--paraphrase", "nan"], "--paraphrase"),
    (["faithfulness", "--paraphrase", "0.1", "--paraphrase-seed", "-1"], "--paraphrase-seed"),
])
def test_bad_input_exits_2_with_one_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_render_writes_documents_and_strict_json(tmp_path, capsys):
    out, js = tmp_path / "docs", tmp_path / "r.json"
    assert main(["render", *SMALL, "--out", str(out), "--json", str(js)]) == 0
    data = json.loads(js.read_text())
    assert data["command"] == "render" and data["personas"] == 12
    files = sorted(out.glob("*.md"))
    assert len(files) == 12
    assert sum(len(f.read_text()) for f in files) == data["characters"]
    assert data["comparison"] is None and data["seconds"] >= 0
    assert "rendered 12 personas" in capsys.readouterr().out


def test_render_of_the_release_compares_with_its_nl_render(tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["render", "--release", str(SAMPLE), "--json", str(js)]) == 0
    comp = json.loads(js.read_text())["comparison"]
    assert comp["personas"] == 1 and comp["headings_equal"]
    # with every activity name the importer keeps, all 445 lines are identical (issue 19)
    assert comp["share_identical"] == 1
    assert [r["section"] for r in comp["by_section"]][0] == "Long-Term Background and Habits"
    assert "are identical" in capsys.readouterr().out


def test_extract_with_noise_is_seeded_and_lowers_faithfulness(tmp_path):
    clean, a, b = (tmp_path / f"{k}.json" for k in "cab")
    assert main(["extract", *SMALL, "--json", str(clean)]) == 0
    for path in (a, b):
        assert main(["extract", *SMALL, "--noise", "uniform:0.3", "--noise-seed", "9",
                     "--json", str(path)]) == 0
    fc, fa, fb = (json.loads(p.read_text())["faithfulness"] for p in (clean, a, b))
    assert fa == fb
    assert fa["overall"] < fc["overall"]
    assert fc["n"] == 12 * 90


def test_extract_writes_release_format_atoms(tmp_path):
    out = tmp_path / "atoms"
    assert main(["extract", "--release", str(SAMPLE), "--out", str(out)]) == 0
    (f,) = out.glob("*.json")
    data = json.loads(f.read_text())
    assert data["persona"] == f.stem and set(data["extraction"]) >= {"A1", "Ctrl2"}
    assert data["extraction"]["C3"]["planner"] is None  # non-informative: null


def test_faithfulness_json_holds_ours_released_and_paper(tmp_path, capsys):
    js = tmp_path / "f.json"
    assert main(["faithfulness", "--release", str(SAMPLE), "--json", str(js)]) == 0
    data = json.loads(js.read_text())
    assert data["ours"]["n"] == 90 and data["released"]["n"] == 90
    assert data["paper"]["overall"] == 93.08
    assert data["ours"]["overall"] >= data["released"]["overall"]
    assert "released GPT-5.4 atoms" in capsys.readouterr().out


@pytest.mark.parametrize("cells", ["all", "informative", "non_null"])
def test_faithfulness_of_a_generated_testbed(tmp_path, cells):
    js = tmp_path / "f.json"
    assert main(["faithfulness", *SMALL, "--cells", cells, "--json", str(js)]) == 0
    data = json.loads(js.read_text())
    assert data["released"] is None and data["cells"] == cells
    assert data["ours"]["overall"] >= 0.99


@pytest.mark.parametrize("profile", ["paper", "measured", "uniform:0"])
def test_every_noise_profile_runs(tmp_path, profile):
    js = tmp_path / "e.json"
    assert main(["extract", *SMALL, "--noise", profile, "--json", str(js)]) == 0
    data = json.loads(js.read_text())
    assert data["noise"] == profile
    if profile != "paper":  # our extractor is exact on informative cells: nothing to flip
        assert data["faithfulness"]["overall"] >= 0.99


def test_faithfulness_with_a_paraphrase_reports_both_figures(tmp_path, capsys):
    """Issue 19: the round trip and the paraphrased figure side by side, seeded."""
    from core.prose.paraphrase import wording_robustness
    from core.testbed.config import TestbedConfig
    from core.testbed.generate import generate

    js = tmp_path / "f.json"
    assert main(["faithfulness", *SMALL, "--paraphrase", "0.1", "--paraphrase-seed", "3",
                 "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "round trip" in out and "paraphrased (rate 0.1 per kind, seed 3" in out
    data = json.loads(js.read_text())
    para = data["paraphrased"]
    want = wording_robustness(generate(TestbedConfig(seeds=(5,), personas_per_difficulty=4)),
                              rate=0.1, seed=3)
    assert para["paraphrased"] == pytest.approx(want.paraphrased.overall)
    assert para["round_trip"] == pytest.approx(data["ours"]["overall"])
    assert para["paraphrased"] < para["round_trip"]
    assert para["unread"] == "day" and para["partial_atoms"] == want.partial_atoms > 0
    assert f"{want.partial_atoms} atoms read around their unread days" in out
    rows = {r["source"]: r for r in data["by_source"]}
    assert set(rows["planner"]) >= {"ours", "paraphrased", "paper"}
    assert [r["paraphrased"] for r in data["by_source"]] == pytest.approx(
        want.by_source["paraphrased"].tolist())
