"""Seed 003: scores, reliability, recalibration, prediction-powered inference and the
label-source effect (seed 003; the label-source notes).

Public API (one concept per module):

* :mod:`.scores` — Brier and log score, calibration-in-the-large, Spiegelhalter's z (a test of
  reliability, reported only where its normal approximation holds), AUROC;
* :mod:`.reliability` — binned reliability curves, ECE/MCE/RMS, the binned Murphy decomposition
  with its within-bin terms, consistency bands;
* :mod:`.bands` — simultaneous consistency bands (a whole calibrated curve stays inside);
* :mod:`.corp` — the CORP curve (isotonic, tied forecasts pooled) and MCB − DSC + UNC;
* :mod:`.smooth` — smooth ECE with its automatic bandwidth (relplot 1.0.3 numerics);
* :mod:`.recalibration` — Platt scaling (smoothed targets) and isotonic maps;
* :mod:`.ppi` — classical, PPI/PPI++, difference, several control variates, stratified and
  Horvitz–Thompson mean estimators;
* :mod:`.label_source` — the exact identity of Eq. (1)–(2), the prevalence crossover, the
  de-biased risk of Eq. (6), the four scoring protocols of Table 3;
* :mod:`.scenario` — belief-store scenarios (default calibrated to Table 2);
* :mod:`.restore` — paired differences, TriSource-Restore (Eq. 3), transfer β, monotone repair;
* :mod:`.pilot` — simulated probability-sampled pilots; :mod:`.pilot_walk` — Algorithm 1,
  one pilot step by step, and repeated walks;
* :mod:`.bridge` — the same analysis on seed-000 resolver outputs;
* :mod:`.nq301` — the real NQ-open case (exact match vs human labels, three judges), with
  :mod:`.nq301_rules` (pairs of rules, the crossover criterion) and :mod:`.nq301_pilot`
  (human pilots on the real answers);
* :mod:`.report` — everything at once for a CSV (``python -m core score``).

Modules are imported explicitly (``from core.calibration.corp import corp_curve``): this
package file re-exports nothing, so no submodule's import waits on a half-initialised
package — the import cycle behind the concurrent-first-visitor crash (see
``pages/_shared/preload.py`` and ``tests/test_imports.py``).
"""

__all__: list[str] = []
