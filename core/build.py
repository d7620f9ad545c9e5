"""Build a store: generate the seed-000 testbed, fit every resolver, write it all to DuckDB.

The one place that joins the layers a fresh store needs (testbed → resolvers → evaluation,
seed 000's NL memory path, the shipped NQ-open files of seed 003, seed 002's authored
world, checked first, and issue 21's built-in claims tables through every resolver,
:func:`core.fusion.builtin.store_tables`) and hands the result to :mod:`core.store`, which
itself only reads and writes tables, so the store never imports the evaluation it is read by.

The NL memory (seed 000 §8.6 stages 4–6, :mod:`core.prose.tables`): the personas of
:data:`PROSE_SPLITS` are rendered, our deterministic extractor reads μ̂ back from the prose
(``atoms`` of kind ``extracted``, extractor ``'arbiter-template'``), and the documents and
their sentence lines are stored (``renders``, ``render_lines``). The test split is what the
paper extracts (the benchmark specification §2.10) and all that mixed mode reads; every
persona would cost the default build 11 s and 1 GB more (``docs/prose.md``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .calibration.nq301 import load_shipped_nq301
from .evaluation.run import predictions_frame, run_testbed
from .fusion.builtin import store_tables as fusion_store_tables
from .prose.tables import prose_tables
from .records.checks import check_world
from .records.tables import study_tables
from .records.world import load_world
from .store import StoreInfo, check_store_destination, write_store
from .testbed.config import TestbedConfig
from .testbed.generate import generate

__all__ = ["PROSE_SPLITS", "build_store"]

#: the splits whose prose the build renders and extracts (documents, lines and μ̂)
PROSE_SPLITS = ("test",)


def build_store(
    path: str | os.PathLike,
    config: TestbedConfig,
    *,
    progress: Callable[[str, float], None] | None = None,
    evaluate: bool = True,
) -> StoreInfo:
    """Generate the testbed of ``config`` and write it, with GT, μ*, our extractor's μ̂, the
    prose and (unless ``evaluate=False``) every resolver's cached test predictions, to ``path``.

    ``path`` is checked with :func:`check_store_destination` before anything is generated.
    """
    check_store_destination(path)
    world = load_world()
    check_world(world)  # seed 002's world checks run before anything else (its §4.1)
    step = progress or (lambda msg, frac: None)
    people = 3 * config.personas_per_difficulty * len(config.seeds)
    step(f"simulating {people:,} people's 30 days and what five sources recorded of them "
         f"({len(config.seeds)} independent batches)", 0.05)
    tb = generate(config)
    preds = None
    if evaluate:
        step("teaching every method that settles the sources' disagreements (the "
             "resolvers) on the training people, and scoring it on the test people", 0.15)
        preds = predictions_frame(run_testbed(tb), run_id=f"default-{config.key}")
    step("writing each test person's records out as text, and reading their answers back "
         "from that text", 0.25)
    prose = prose_tables(tb, keep=tb.personas["split"].isin(PROSE_SPLITS).to_numpy())
    extra = dict(study_tables(world))
    shipped = load_shipped_nq301()
    if shipped is not None:
        extra |= {"nq301_items": shipped[0], "nq301_answers": shipped[1]}
    step("settling the disagreements of the real data sets (flight web sites, crowd workers, "
         "question-answering systems) with every method", 0.3)
    extra |= fusion_store_tables()
    return write_store(path, tb, origin="generated", config=config.to_dict(),
                       extracted_atoms=prose.extracted, renders=prose.renders,
                       render_lines=prose.render_lines, predictions=preds,
                       extra_tables=extra, progress=progress)
