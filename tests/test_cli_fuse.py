"""``python -m core fuse``: the issue's figures through the command line, the predictions file,
the NQ-open board, the layouts and mappings, and the exit-code contract (0, or 2 with one line
on stderr and no traceback; fuse has no check that could fail, so never 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.fusion.builtin import builtin_set, load_builtin
from core.fusion.importer import read_claims, to_wide
from core.fusion.normalise import TimeTolerance
from core.fusion.nq import nq_open_board
from core.fusion.vote import majority_vote

ROOT = Path(__file__).resolve().parents[1]


def _fuse(argv, tmp_path, capsys):
    out = tmp_path / "board.json"
    assert main(["fuse", *argv, "--json", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    report = json.loads(out.read_text())
    return report, {r["method"]: r for r in report["board"]}


def _plurality_accuracy(path: Path) -> tuple[int, int]:
    """Majority vote with ties to the smallest claim, recomputed from the CSV with pandas."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    n = df.groupby(["item", "claim"]).size().rename("n").reset_index()
    n = n.sort_values(["item", "n", "claim"], ascending=[True, False, True], kind="stable")
    pick = n.drop_duplicates("item").set_index("item")["claim"]
    truth = df[df["truth"] != ""].drop_duplicates("item").set_index("item")["truth"]
    return int((pick.reindex(truth.index) == truth).sum()), len(truth)


@pytest.mark.parametrize("key, mv", [("flight", 0.818), ("mozafari", 0.696), ("adult", 0.760)])
def test_majority_vote_figures_through_the_cli(key, mv, tmp_path, capsys):
    path = builtin_set(key).path
    for source in (key, str(path)):  # the built-in key and the file give one board
        report, board = _fuse([source, "--methods", "majority_vote"], tmp_path, capsys)
        k, n = _plurality_accuracy(path)
        assert (board["majority_vote"]["correct"], board["majority_vote"]["items"]) == (k, n)
        assert round(k / n, 3) == mv
        assert report["builtin"] == (key if source == key else None)


def test_the_learned_resolvers_figures_through_the_cli(tmp_path, capsys):
    _, board = _fuse(["flight", "--methods", "one_coin_em", "dawid_skene"], tmp_path, capsys)
    assert round(board["one_coin_em"]["accuracy"], 3) == 0.919
    assert abs(board["dawid_skene"]["accuracy"] - 0.735) <= 0.005
    _, board = _fuse(["mozafari", "--methods", "dawid_skene_baseline"], tmp_path, capsys)
    assert round(board["dawid_skene_baseline"]["accuracy"], 3) == 0.712
    _, board = _fuse(["adult", "--methods", "dawid_skene_baseline"], tmp_path, capsys)
    assert round(board["dawid_skene_baseline"]["accuracy"], 3) == 0.742


def test_board_intervals_and_default_methods(tmp_path, capsys):
    from core.stats import wilson_interval

    report, board = _fuse(["mozafari"], tmp_path, capsys)
    assert list(board) == ["majority_vote", "one_coin_em", "one_coin_crowdkit", "dawid_skene",
                           "dawid_skene_baseline", "glad", "accu", "accu_depen", "naive_bayes"]
    for row in board.values():
        lo, hi = wilson_interval(row["correct"], row["answered"])
        assert (row["low"], row["high"]) == pytest.approx((float(lo), float(hi)))
        assert row["against"] == "truth" and row["seconds"] >= 0
    assert board["naive_bayes"]["scored_on"] == "held-out gold items"
    assert board["naive_bayes"]["items"] == 500
    assert (report["claims"], report["items"], report["sources"], report["gold"]) == \
        (5000, 1000, 83, 1000)


def test_predictions_parquet(tmp_path, capsys):
    pred = tmp_path / "out" / "p.parquet"
    assert main(["fuse", "flight", "--methods", "majority_vote", "glad", "--predictions",
                 str(pred)]) == 0
    assert "wrote 1,194 predictions" in capsys.readouterr().out
    p = pd.read_parquet(pred)
    assert list(p.columns) == ["item", "method", "label", "confidence"]
    c = load_builtin("flight").claims
    mv = p[p["method"] == "majority_vote"]
    assert list(mv["item"]) == list(c.items)
    df = c.to_frame()
    n = df.groupby(["item", "claim"]).size().rename("n").reset_index()
    n = n.sort_values(["item", "n", "claim"], ascending=[True, False, True], kind="stable")
    top = n.drop_duplicates("item").set_index("item")
    assert list(mv["label"]) == list(top["claim"].reindex(c.items))
    share = top["n"] / df.groupby("item").size()
    assert np.allclose(mv["confidence"].to_numpy(), share.reindex(c.items).to_numpy())


def test_nq_open_board_through_the_cli(tmp_path, capsys):
    out = tmp_path / "nq.json"
    assert main(["fuse", "nq_open", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pair(s) change order between the human and the exact-match labels" in text
    report = json.loads(out.read_text())
    ls = report["label_sources"]
    want = nq_open_board()
    assert ls["between"] == ["human", "exact_match"]
    assert [tuple(p) for p in ls["flipped"]] == [tuple(p) for p in want.flipped]
    got = pd.DataFrame(ls["board"])
    pd.testing.assert_frame_equal(got[["method", "label", "correct", "judged", "rank"]],
                                  want.frame[["method", "label", "correct", "judged", "rank"]],
                                  check_dtype=False)
    assert "naive_bayes" not in set(got["method"])


def test_a_table_without_truth_is_scored_by_agreement(tmp_path, capsys):
    path = builtin_set("adult").path
    report, board = _fuse([str(path), "--truth-column", "", "--methods", "majority_vote",
                           "dawid_skene"], tmp_path, capsys)
    assert report["gold"] == 0
    assert board["majority_vote"]["accuracy"] == 1.0
    c = read_claims(path).claims
    from core.fusion.dawid_skene import dawid_skene

    agree = int((dawid_skene(c).labels == majority_vote(c).labels).sum())
    assert board["dawid_skene"]["correct"] == agree
    assert board["dawid_skene"]["against"] == "majority_vote"


def test_wide_layout_and_column_mapping_give_the_long_board(tmp_path, capsys):
    c = load_builtin("mozafari").claims
    wide = tmp_path / "wide.csv"
    to_wide(c, item_column="task").rename(columns={"truth": "gold"}).to_csv(wide, index=False)
    _, board = _fuse([str(wide), "--format", "wide", "--columns", "item=task",
                      "--truth-column", "gold", "--methods", "majority_vote"], tmp_path, capsys)
    k = int((majority_vote(c).labels == c.truth).sum())
    assert board["majority_vote"]["correct"] == k
    renamed = tmp_path / "long.csv"
    c.to_frame().rename(columns={"item": "task", "source": "worker", "claim": "label"}) \
        .to_csv(renamed, index=False)
    _, board = _fuse([str(renamed), "--columns", "item=task", "source=worker", "claim=label",
                      "--methods", "majority_vote"], tmp_path, capsys)
    assert board["majority_vote"]["correct"] == k


def test_normalisers_through_the_cli(tmp_path, capsys):
    report, board = _fuse(["flight", "--normalise", "time:10", "--methods", "majority_vote"],
                          tmp_path, capsys)
    c = load_builtin("flight", normalise=[TimeTolerance(10)]).claims
    assert board["majority_vote"]["correct"] == majority_vote(c).score(c)["correct"]
    assert report["rules"] == [TimeTolerance(10).rule]


def test_latin1_and_utf16_files_read_with_their_encoding(tmp_path, capsys):
    df = pd.DataFrame({"item": ["é1", "é1", "ü2", "ü2"], "source": ["a", "b", "a", "b"],
                       "claim": ["ß", "ß", "x", "ø"]})
    for enc in ("latin-1", "utf-16"):
        path = tmp_path / f"{enc}.csv"
        path.write_bytes(df.to_csv(index=False).encode(enc))
        assert main(["fuse", str(path), "--methods", "majority_vote"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: fuse: line ") and len(err.splitlines()) == 1
        _, board = _fuse([str(path), "--encoding", enc, "--methods", "majority_vote"],
                         tmp_path, capsys)
        assert board["majority_vote"]["correct"] == 2  # agreement with itself, 2 items


@pytest.mark.parametrize("argv, fragment", [
    (["nope"], "is no file and no built-in set (the built-in sets are flight, flight_all"),
    (["."], "is a directory"),
    (["flight", "--format", "wide"], "--format and --columns apply to files"),
    (["flight", "--columns", "item=x"], "--format and --columns apply to files"),
    (["flight", "--truth-column", "human"], "no label column 'human'"),
    (["flight", "--methods", "mv"], "invalid choice"),
    (["flight", "--normalise", "numeric:-1"], "must be case, numeric:TOL or time:MIN"),
    (["flight", "--normalise", "time:nan"], "must be case, numeric:TOL or time:MIN"),
    (["flight", "--normalise", "upper"], "must be case, numeric:TOL or time:MIN"),
    (["flight", "--columns", "item"], "must be ROLE=NAME"),
    (["flight", "--encoding", "klingon"], "unknown encoding"),
    (["flight", "--sep", ";;"], "must be one character"),
    (["flight", "--max-rows", "0"], "must be in [1, "),
    (["flight", "--json", "/proc/none/x.json"], "cannot write"),
    (["flight", "--predictions", "/proc/none/x.parquet"], "cannot write"),
    (["nq_open", "--methods", "naive_bayes"], "fitted to one label source"),
    ([], "required"),
])
def test_bad_input_exits_2_with_one_line(argv, fragment, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # "." is the repository, "nope" no file in it
    assert main(["fuse", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err, err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_bad_tables_exit_2_with_the_importers_line(tmp_path, capsys):
    cases = {
        "dup.csv": ("item,source,claim\na,s,1\na,s,2\nb,s,1\n",
                    "row 2: source 's' already claimed item 'a' at row 1"),
        "empty.csv": ("", "the file is empty"),
        "header.csv": ("item,source\na,s\n", "no claim column"),
        "nb.csv": ("item,source,claim\na,s,1\na,t,2\n", "needs a claims table with truth"),
    }
    for name, (text, fragment) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        argv = ["fuse", str(path)] + (["--methods", "naive_bayes"] if name == "nb.csv" else [])
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert fragment in err and len(err.strip().splitlines()) == 1, (name, err)
    big = tmp_path / "big.csv"
    big.write_text("item,source,claim\n" + "".join(f"i{k},s,c\n" for k in range(6)))
    assert main(["fuse", str(big), "--max-rows", "5"]) == 2
    assert "6 rows; the cap is 5" in capsys.readouterr().err
    assert main(["fuse", str(big), "--max-bytes", "20"]) == 2
    assert "the cap is 20" in capsys.readouterr().err


def test_the_module_entry_point_keeps_the_contract(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    ok = subprocess.run([sys.executable, "-m", "core", "fuse", "adult", "--methods",
                         "majority_vote"], cwd=ROOT, env=env, capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and ok.stderr == ""
    assert "majority_vote" in ok.stdout and "0.760" in ok.stdout
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"item,source,claim\n\xff\xfe,a,b\n")
    res = subprocess.run([sys.executable, "-m", "core", "fuse", str(bad)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("error: fuse: line 2: not utf-8")
    assert len(res.stderr.splitlines()) == 1
