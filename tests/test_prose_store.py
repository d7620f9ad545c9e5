"""The NL memory in the store (issue 11): renders, their sentence lines and our μ̂."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.cli import main
from core.prose.compare import release_renders
from core.prose.extract import extract
from core.prose.render import render
from core.prose.tables import EXTRACTOR, LINE_COLUMNS, prose_tables
from core.store import (
    RELEASE_EXTRACTOR,
    SCHEMA_VERSION,
    atoms_frame,
    connect,
    load_atoms,
    query_df,
    write_store,
)
from core.testbed.config import TestbedConfig
from core.testbed.generate import generate
from core.testbed.importer import load_release
from core.testbed.readout import readout
from tests.conftest import SMALL_CONFIG

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "survey2agent-sample"  # CC BY 4.0


@pytest.fixture(scope="module")
def rendered():
    """The small store's testbed, its test split (the personas the build renders) and the
    render of the whole testbed."""
    tb = generate(SMALL_CONFIG)
    test = (tb.personas["split"] == "test").to_numpy()
    return tb, test, render(tb)


@pytest.fixture(scope="module")
def stored(small_store):
    con = connect(small_store)
    try:
        docs = query_df(con, "SELECT seed, persona_id, doc FROM renders")
        lines = query_df(con, 'SELECT seed, persona_id, section, day_index, field, start, "end" '
                              "FROM render_lines")
        hat = load_atoms(con, kind="extracted")
        names = query_df(con, "SELECT kind, extractor, count(*) AS n FROM atoms "
                              "GROUP BY ALL ORDER BY ALL")
    finally:
        con.close()
    return docs, lines, hat, names


def test_the_schema_is_version_3():
    assert SCHEMA_VERSION == "3"


def test_every_stored_render_is_the_render_of_its_persona(rendered, stored):
    """Rendered from the test split alone, a document is the one of the whole testbed."""
    tb, test, r = rendered
    docs = stored[0]
    assert len(docs) == test.sum() > 0  # the test split (core.build.PROSE_SPLITS)
    got = {(int(s), p): d for s, p, d in docs.itertuples(index=False)}
    keys = tb.personas[["seed", "persona_id"]].itertuples(index=False)
    for i, (seed, pid) in enumerate(keys):
        if test[i]:
            assert got[(int(seed), pid)] == r.texts[i], pid


def test_the_stored_lines_are_the_render_frame(rendered, stored):
    tb, test, r = rendered
    lines = stored[1]
    f = r.frames[test[r.frames["doc"].to_numpy()]]
    seeds = tb.personas["seed"].to_numpy()[f["doc"].to_numpy()]
    want = set(zip(seeds.tolist(), f["persona_id"].astype(str), f["section"].astype(str),
                   f["day_index"].tolist(), f["field"].astype(str), f["start"].tolist(),
                   f["end"].tolist(), strict=True))
    got = set(lines[list(LINE_COLUMNS)].itertuples(index=False, name=None))
    assert len(lines) == len(f) and got == want


def test_each_line_row_spans_one_whole_line_of_its_document(stored):
    docs, lines = stored[0], stored[1]
    text = {(int(s), p): d for s, p, d in docs.itertuples(index=False)}
    sample = lines.groupby(["seed", "persona_id"]).head(40)
    for row in sample.itertuples(index=False):
        doc = text[(int(row.seed), row.persona_id)]
        sentence = doc[row.start:row.end]
        assert sentence and "\n" not in sentence and doc[row.end] == "\n"
        before = doc[row.start - 2:row.start] if row.day_index else doc[row.start - 1]
        assert before in ("- ", "\n"), (row, before)


def test_the_stored_mu_hat_is_our_extractor_on_the_prose(rendered, stored):
    tb, test, r = rendered
    hat, names = stored[2], stored[3]
    ex = extract(r.texts, persona_ids=r.persona_ids)
    assert np.array_equal(hat[test], ex.atoms[test])
    assert (hat[~test] == -1).all()  # the other splits are not extracted
    got = {(k, e if isinstance(e, str) else None): n
           for k, e, n in names.itertuples(index=False)}  # NULL reads back as None or NaN
    assert got == {("extracted", EXTRACTOR): test.sum() * 90, ("readout", None): tb.n * 90}


def test_load_atoms_selects_an_extractor(small_store):
    con = connect(small_store)
    try:
        ours = load_atoms(con, kind="extracted", extractor=EXTRACTOR)
        none = load_atoms(con, kind="extracted", extractor="no-such-model")
        with pytest.raises(ValueError, match="needs kind='extracted'"):
            load_atoms(con, kind="readout", extractor=EXTRACTOR)
    finally:
        con.close()
    assert (ours >= 0).any() and (none == -1).all()


def test_prose_tables_keep_only_the_selected_documents(rendered):
    tb, _, r = rendered
    keep = (tb.personas["split"] == "calibration").to_numpy()
    t = prose_tables(tb, keep=keep)
    assert list(t.renders["persona_id"]) == list(tb.personas["persona_id"][keep])
    assert list(t.renders["doc"]) == [x for x, k in zip(r.texts, keep, strict=True) if k]
    assert set(t.render_lines["persona_id"]) == set(tb.personas["persona_id"][keep])
    assert len(t.extracted) == keep.sum() * 90
    assert set(t.extracted["extractor"]) == {EXTRACTOR}
    with pytest.raises(ValueError, match="keep must have shape"):
        prose_tables(tb, keep=keep[:-1])


def test_unnamed_extracted_atoms_are_the_releases(tmp_path):
    tb = generate(TestbedConfig(seeds=(3,), personas_per_difficulty=4))
    frame = atoms_frame(readout(tb), tb.personas, kind="extracted").drop(columns="extractor")
    named = atoms_frame(readout(tb), tb.personas, kind="extracted", extractor="m")
    for i, (given, want) in enumerate(((frame, RELEASE_EXTRACTOR), (named, "m"))):
        path = tmp_path / f"s{i}.duckdb"
        write_store(path, tb, origin="test", config={}, extracted_atoms=given)
        con = connect(path)
        try:
            got = query_df(con, "SELECT DISTINCT extractor FROM atoms WHERE kind = 'extracted'")
            empty = query_df(con, "SELECT count(*) AS n FROM renders")["n"].iloc[0]
        finally:
            con.close()
        assert got["extractor"].tolist() == [want] and empty == 0


def test_evaluate_input_extracted_runs_in_mixed_mode(small_store, tmp_path, capsys):
    db = tmp_path / "copy.duckdb"
    shutil.copy(small_store, db)
    out = tmp_path / "e.json"
    assert main(["evaluate", "--db", str(db), "--input", "extracted", "--bootstrap", "100",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["input"] == "extracted"
    con = connect(db)
    try:
        runs = query_df(con, "SELECT config_json FROM runs")
    finally:
        con.close()
    assert any(json.loads(c).get("input") == "extracted" for c in runs["config_json"])
    assert "input: extracted" in capsys.readouterr().out


def test_an_imported_release_keeps_its_render_and_names_its_extractor(tmp_path, capsys):
    db = tmp_path / "rel.duckdb"
    assert main(["import-release", str(SAMPLE), "--db", str(db)]) == 0
    assert "1 NL renders" in capsys.readouterr().out
    rel = load_release(SAMPLE)
    theirs = release_renders(SAMPLE, rel.testbed.personas)
    con = connect(db)
    try:
        docs = query_df(con, "SELECT seed, persona_id, doc FROM renders")
        lines = query_df(con, 'SELECT start, "end", day_index FROM render_lines')
        names = query_df(con, "SELECT DISTINCT extractor FROM atoms WHERE kind = 'extracted'")
    finally:
        con.close()
    pid = docs["persona_id"].iloc[0]
    doc = docs["doc"].iloc[0]
    assert doc.rstrip("\n") == theirs[pid].rstrip("\n")
    assert len(lines) > 400  # the release's sentences our templates read
    for start, end, _day in lines.itertuples(index=False):
        assert doc[end] == "\n" and "\n" not in doc[start:end]
    assert names["extractor"].tolist() == [RELEASE_EXTRACTOR]
