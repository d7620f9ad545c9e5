"""The NL memory as store tables: each render, its sentence lines and our extractor's μ̂.

Seed 000 §8.6 stages 4–6 (render → extraction → atoms) kept in the store, so that a page can
show a persona's prose with the sentences behind each atom without rendering anything
(issue 11). :func:`prose_tables` renders the chosen personas of a testbed
(:func:`core.prose.render.render`; :func:`core.build.build_store` chooses the test split, the
personas the paper extracts, the benchmark specification §2.10), reads the prose back
(:func:`core.prose.extract.extract`) and returns three frames in the layout of the store's
tables (:mod:`core.store`):

* ``renders(seed, persona_id, doc)`` — one Markdown document per persona;
* ``render_lines(seed, persona_id, section, day_index, field, start, end)`` — the rows of
  :attr:`Rendered.frames <core.prose.render.Rendered.frames>` without the document position
  (seed and persona id name the document): ``doc[start:end]`` is the sentence, without its
  ``- `` bullet and newline;
* ``extracted`` — the atoms frame of their μ̂ (``kind = 'extracted'``, ``extractor`` =
  :data:`EXTRACTOR`).

:func:`release_prose_tables` does the same for the released ``nl_renders`` of an imported
release: the documents as they are, their lines from our extractor's line parser (the
extraction frame, which states the fields our templates read; a line no template matches has
no row), and no atoms (the release's own extracted atoms are stored instead).

Invariants (``tests/test_prose_store.py``): a stored document equals ``render(tb)`` of its
persona; ``doc[start:end]`` of every line row is one line of ``doc``; the lines of a persona
are the render frame's rows of its document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..store import atoms_frame
from ..testbed.schema import Testbed
from .extract import extract
from .render import render

__all__ = ["EXTRACTOR", "LINE_COLUMNS", "ProseTables", "prose_tables", "release_prose_tables"]

#: the ``atoms.extractor`` name of our deterministic template extractor
EXTRACTOR = "arbiter-template"
#: the columns of the store's ``render_lines`` table
LINE_COLUMNS = ("seed", "persona_id", "section", "day_index", "field", "start", "end")


@dataclass(frozen=True)
class ProseTables:
    """Frames for the store's ``renders`` and ``render_lines`` tables and μ̂ atom rows.

    Attributes
    ----------
    renders : ``seed, persona_id, doc``.
    render_lines : :data:`LINE_COLUMNS` (``section`` and ``field`` as plain strings).
    extracted : ``seed, persona_id, question_id, source, kind, value, extractor``
        (:func:`core.store.atoms_frame`); empty for a release.
    """

    renders: pd.DataFrame
    render_lines: pd.DataFrame
    extracted: pd.DataFrame


def _lines(frames: pd.DataFrame, seeds: np.ndarray, ids: np.ndarray) -> pd.DataFrame:
    doc = frames["doc"].to_numpy()
    return pd.DataFrame({
        "seed": seeds[doc].astype(np.int64),
        "persona_id": ids[doc],
        "section": frames["section"].astype(object).to_numpy(),
        "day_index": frames["day_index"].to_numpy(np.int16),
        "field": frames["field"].astype(object).to_numpy(),
        "start": frames["start"].to_numpy(np.int32),
        "end": frames["end"].to_numpy(np.int32),
    })


def prose_tables(tb: Testbed, *, keep: np.ndarray | None = None) -> ProseTables:
    """Render and extract the personas ``keep`` of ``tb``: the frames of the module docstring.

    Parameters
    ----------
    tb : a testbed (generated or imported).
    keep : bool ``(P,)``: the personas to render, extract and keep (default: all). A
        persona's document does not depend on the others, so a subset renders as it does in
        the whole testbed.
    """
    keep = np.ones(tb.n, bool) if keep is None else np.asarray(keep, bool)
    if keep.shape != (tb.n,):
        raise ValueError(f"keep must have shape ({tb.n},), got {keep.shape}")
    sub = tb.subset(keep)
    r = render(sub)
    ex = extract(r.texts, persona_ids=r.persona_ids)
    seeds = sub.personas["seed"].to_numpy()
    ids = sub.personas["persona_id"].to_numpy(dtype=object)
    renders = pd.DataFrame({"seed": seeds.astype(np.int64), "persona_id": ids,
                            "doc": np.asarray(r.texts, dtype=object)})
    extracted = atoms_frame(ex.atoms, sub.personas, kind="extracted", extractor=EXTRACTOR)
    return ProseTables(renders, _lines(r.frames, seeds, ids), extracted)


def release_prose_tables(texts: Mapping[tuple[int, str], str]) -> ProseTables:
    """The store frames of released documents ``{(seed, persona_id): markdown}`` (no atoms).

    The lines are those our extractor's line parser recognises (module docstring), so a
    released sentence our templates do not know has no row.
    """
    keys = list(texts)
    docs = [texts[k] if texts[k].endswith("\n") else texts[k] + "\n" for k in keys]
    seeds = np.asarray([int(s) for s, _ in keys], dtype=np.int64)
    ids = np.asarray([str(p) for _, p in keys], dtype=object)
    renders = pd.DataFrame({"seed": seeds, "persona_id": ids,
                            "doc": np.asarray(docs, dtype=object)})
    frames = extract(docs, persona_ids=list(ids)).frames if keys else None
    lines = (_lines(frames, seeds, ids) if frames is not None
             else pd.DataFrame({c: [] for c in LINE_COLUMNS}))
    empty = pd.DataFrame({c: [] for c in ("seed", "persona_id", "question_id", "source", "kind",
                                          "value", "extractor")})
    return ProseTables(renders, lines, empty)
