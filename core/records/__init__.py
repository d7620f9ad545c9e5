"""Seed 002 — *Personal Dimension Benchmark v1: methods*: one person's records with validity
intervals, source tiers and a conflict policy (issue 10).

One concept per module, imported explicitly (this package file re-exports nothing, see
``core/calibration/__init__.py`` for why):

* :mod:`.world` — the authored world (``data/records/world.json``) as frozen dataclasses and
  frames (§4.1);
* :mod:`.checks` — the world checks that run before anything else (§4.1–§4.3);
* :mod:`.engine` — the ground-truth engine: as-of queries, CP-01, naive recency, staleness,
  entity resolution, joins, gaps (§2, §6);
* :mod:`.render` — the six arms A–F and the completeness check (§1, §4.4), M14;
* :mod:`.claims` — an arm's text read back as (record, field, value) claims, which the
  completeness check compares with the fact table (§1, §9);
* :mod:`.items` — the 43 items in seven families (§6);
* :mod:`.normalise` — how answers are compared;
* :mod:`.score` — responses in the contract, M1–M8 (§7), the comparisons (§10);
* :mod:`.inference` — the exact sign test and item-clustered intervals (§10);
* :mod:`.disclosure` — the disclosure track, M9–M11 (§8);
* :mod:`.writeback` — the write-back track, M12–M13 (§8);
* :mod:`.readers` — deterministic reference readers, one per arm, and what they can test;
* :mod:`.inputs` — the one validated reader of response, decision, write-back and world files
  (size, lines, line length, nesting, UTF-8, strict JSON), for the command line and the page;
* :mod:`.protocol` — the run protocol for a model run elsewhere: a randomised call plan with
  its prompts, and replies turned into the scored files (§9, §12).
"""

__all__: list[str] = []
