"""Fusion of any table of claims: sources that conflict, resolvers that settle or abstain.

Issue 21's core. A table of claims (item, source, claim, optional truth, split, weight) is
imported once into :class:`core.fusion.claims.Claims` (integer codes), and every resolver
takes that object and returns one frozen :class:`core.fusion.result.FusionResult`.

Modules are imported explicitly (``from core.fusion.vote import majority_vote``): this package
file re-exports nothing, so no submodule's import waits on a half-initialised package (see
``tests/test_imports.py``). Nothing here imports the rest of ``core`` except
:mod:`core.stats`, and nothing imports Streamlit.

* :mod:`.claims` — ``Claims`` and its candidate layout (``Candidates``): the encoding;
* :mod:`.importer` — CSV / Parquet / DataFrame, long or wide, column mapping, validation;
* :mod:`.normalise` — explicit normalisers (case and whitespace, numeric and time tolerance);
* :mod:`.result` — ``FusionResult``, the one result object of every resolver;
* :mod:`.vote` — majority vote (stated tie rules) and weighted vote;
* :mod:`.one_coin` — weighted vote with one-coin EM accuracies (baseline and crowd-kit variants);
* :mod:`.dawid_skene` — Dawid–Skene with full confusion matrices (crowd-kit semantics);
* :mod:`.glad` — GLAD (abilities and difficulties; crowd-kit semantics);
* :mod:`.dependence` — ACCU / DEPEN truth discovery with source dependence (Dong et al. 2009);
* :mod:`.naive_bayes` — supervised naive Bayes fitted on a split with truth;
* :mod:`.selective` — abstention below a confidence threshold chosen for a target;
* :mod:`.diagnostics` — per-source accuracy with intervals, coverage, overlap, conflict;
* :mod:`.synthetic` — seeded synthetic tables (benchmarks, tests, copy clusters).

The conventions (scopes, tie rules, what is an error and what a warning) are in
``docs/fusion.md``.
"""

__all__: list[str] = []
