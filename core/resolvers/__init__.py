"""Resolvers of seed 000 (and unsupervised Dawid–Skene): fit on train, calibrate, predict.

Every resolver has ``fit(train: Split, cal: Split) -> self`` and ``predict(atoms) ->
Prediction``; ``predict`` sees the ``(N, 18, 5)`` atom codes and nothing else.

Modules are imported explicitly (``from core.resolvers.nbf import NBF``): this package file
re-exports nothing, so no submodule's import waits on a half-initialised package (see
``pages/_shared/preload.py`` and ``tests/test_imports.py``).

* :mod:`._common` — ``Split``, ``Prediction``, the answer-space constants, ``check_atoms``;
* :mod:`.baselines` — random, majority class, majority vote, SSB, SSB-Global, reachability;
* :mod:`.bcf`, :mod:`.abf` — Bayesian and argumentation-style fusion;
* :mod:`.nbf` — NBF and difficulty-stratified DSNBF;
* :mod:`.dawid_skene` — unsupervised Dawid–Skene (EM, no labels).
"""

__all__: list[str] = []
