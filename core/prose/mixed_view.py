"""The Extraction page's noise board and 2 × 2, from resolvers fitted once on μ*.

Seed 000 §9.4 and the benchmark specification §2.10 (**mixed mode**: fit and calibrate on the
direct readout μ*, predict the test split from other atoms), §12.5 (the flip of an atom with
probability ε, :func:`core.prose.noise.apply_noise`), §4.2 (the resolver × input 2 × 2 and its
attribution, :func:`core.evaluation.decomposition.factorial`).

:func:`mixed_fit` fits every method once per seed (the slow part, cached once per store by
the page); :func:`noise_view` and :func:`factorial_view` only flip atoms and predict with the
fitted models. The noisy input is ``apply_noise(base, profile, default_rng(seed))`` applied
seed by seed in the store's seed order, where ``base`` is the store's extracted test atoms μ̂
(``"extracted"``, the default when the store has them: "what if my extractor erred like
this?") or μ* (``"readout"``: Table 22's experiment). Both views draw the same noisy atoms
for the same arguments, so the board's accuracies are the 2 × 2's cells.

Profiles: ``"uniform"`` flips every non-null atom with probability ``eps``; ``"paper"`` flips
at the paper's GPT-5.4 error rate of each source (seed 000 §8.8, 3.7–13.5 %), ``"gemini"``
at those rates plus Gemini 3.1 Pro's per-question gaps (§12.6, :meth:`NoiseProfile.gemini`)
and ``"paraphrase"`` at our extractor's measured per-cell rates on reworded prose, wrong
labels as flips and empty atoms as drops to ⊥ (issue 19, :meth:`NoiseProfile.paraphrase`);
all three **ignore eps** (the view's ``eps`` is then the profile's mean cell error rate,
flips and drops together). Accuracies are
pooled forced macro accuracies over the test clusters of every seed (%), as in the 2 × 2.

Invariants (``tests/test_prose_views.py``): at ``eps = 0`` the noisy column equals the clean
accuracy on the base input, so with ``base="readout"`` it reproduces the fit's μ* accuracies
exactly; ``total == resolution + extraction``; the same arguments give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pandas as pd

from ..evaluation.cached import load_arrays
from ..evaluation.decomposition import Decomposition, _terms, factorial, reachable
from ..evaluation.display import Table, table
from ..evaluation.run import FORCED_METHODS, METHOD_LABELS, SeedRun, run_seed
from ..frozen import FrozenDict
from ..resolvers.registry import resolver
from ..store import load_atoms, query_df
from .noise import NoiseProfile, apply_noise, parse_profile

__all__ = ["BASES", "MIXED_METHODS", "PROFILES", "FactorialView", "MixedFit", "NoiseView",
           "factorial_view", "factorial_view_of", "mixed_fit", "mixed_fit_arrays", "noise_view"]

#: the methods :func:`mixed_fit` fits by default (Table 22's columns, SSB and Dawid–Skene)
MIXED_METHODS = ("majority_class", "ssb", "majority_vote", "bcf", "abf", "nbf", "dsnbf",
                 "dawid_skene")
PROFILES = ("uniform", "paper", "gemini", "paraphrase")
BASES = ("extracted", "readout")
_INPUT_WORDS = {"extracted": "the extracted atoms μ̂", "readout": "the direct readout μ*"}
#: The two inputs as a table's cells: words first, the symbol in brackets (issue 22 point 6).
_CELL_INPUTS = {"readout": "atoms read from the records (μ*)",
                "extracted": "atoms extracted from the prose (μ̂)"}


@dataclass(frozen=True, eq=False)
class MixedFit:
    """Resolvers fitted and calibrated on μ*, seed by seed; shared, read-only.

    Attributes
    ----------
    star : one :class:`~core.evaluation.run.SeedRun` per seed: the fitted models and their
        predictions of the test split from μ* (``atoms``).
    mu_hat_test : the store's extracted atoms of each seed's test split (same order as
        ``star[i].personas``), or ``None`` when some test persona has none.
    extractor : whose μ̂ (``""`` without one).
    methods : the fitted methods, in board order.
    """

    star: tuple[SeedRun, ...]
    mu_hat_test: tuple[np.ndarray, ...] | None
    extractor: str
    methods: tuple[str, ...]

    @property
    def n_test(self) -> int:
        """Test personas over every seed."""
        return sum(len(r.personas) for r in self.star)


def mixed_fit_arrays(mu: np.ndarray, gt: np.ndarray, personas: pd.DataFrame,
                     mu_hat: np.ndarray | None = None, *, methods: Sequence[str] = MIXED_METHODS,
                     extractor: str = "", parallel: bool = False) -> MixedFit:
    """:class:`MixedFit` of aligned arrays: μ* ``(P, 18, 5)``, GT ``(P, 18)``, the persona rows
    (``seed``, ``split``, ``difficulty``) and optionally μ̂ (only its test rows are read).

    ``ValueError`` for an unknown method, or a seed without train, calibration or test
    personas.
    """
    unknown = [m for m in methods if m not in FORCED_METHODS]
    if unknown or not methods:
        raise ValueError(f"unknown method(s) {unknown or 'none given'}; known: "
                         f"{', '.join(FORCED_METHODS)}")
    order = tuple(m for m in FORCED_METHODS if m in set(methods))
    seeds = personas["seed"].to_numpy()
    test = personas["split"].to_numpy() == "test"
    star, hats = [], []
    for seed in pd.unique(seeds):
        m = seeds == seed
        rows = personas[m].reset_index(drop=True)
        counts = rows["split"].value_counts()
        missing = [s for s in ("train", "calibration", "test") if counts.get(s, 0) == 0]
        if missing:
            raise ValueError(f"seed {seed} has no {', '.join(missing)} personas; resolvers need "
                             "train, calibration and test splits")
        star.append(run_seed(mu[m], gt[m], rows, methods=list(order), parallel=parallel))
        if mu_hat is not None:
            hat = np.array(mu_hat[m & test], dtype=np.int8)
            hat.setflags(write=False)
            hats.append(hat)
    complete = (mu_hat is not None
                and all(bool((h >= 0).any(axis=(1, 2)).all()) for h in hats))
    return MixedFit(tuple(star), tuple(hats) if complete else None,
                    extractor if complete else "", order)


def mixed_fit(con: duckdb.DuckDBPyConnection, *, methods: Sequence[str] = MIXED_METHODS,
              extractor: str | None = None, parallel: bool = False) -> MixedFit:
    """Fit and calibrate ``methods`` on the store's μ*, every seed (mixed mode, §9.4).

    ``extractor`` picks whose extracted atoms are the test μ̂ (default: the store's extractor
    with the most rows, :func:`core.prose.views.faithfulness_view`'s default). ``parallel``
    fits DSNBF in a second thread (:func:`core.evaluation.run.run_seed`).
    """
    personas, gt, mu = load_arrays(con)
    names = query_df(con, "SELECT extractor, count(*) AS n FROM atoms WHERE kind = "
                          "'extracted' AND extractor IS NOT NULL GROUP BY extractor "
                          "ORDER BY n DESC, extractor")["extractor"].tolist()
    name = (names[0] if names else "") if extractor is None else str(extractor)
    if extractor is not None and name not in names:
        raise ValueError(f"no extracted atoms of {name!r} in the store (it has "
                         f"{', '.join(names) or 'none'})")
    hat = load_atoms(con, kind="extracted", extractor=name) if name else None
    return mixed_fit_arrays(mu, gt, personas, hat, methods=methods, extractor=name,
                            parallel=parallel)


def _answer(run: SeedRun, method: str, atoms: np.ndarray) -> np.ndarray:
    if method in run.models:
        return run.models[method].predict(atoms).answer
    return resolver(method).oracle(atoms, run.gt).answer  # a GT-aided reference row


def _check_noise(fit: MixedFit, profile: str, eps: float, base: str | None) -> str:
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    e = float(eps)
    if not np.isfinite(e) or not 0 <= e <= 1:
        raise ValueError(f"eps must be in [0, 1], got {eps}")
    if base is None:
        return "extracted" if fit.mu_hat_test is not None else "readout"
    if base not in BASES:
        raise ValueError(f"base must be one of {', '.join(BASES)}, got {base!r}")
    if base == "extracted" and fit.mu_hat_test is None:
        raise ValueError("base='extracted' needs extracted atoms for every test persona; "
                         "this store has none (use base='readout')")
    return base


def _profile(profile: str, eps: float) -> NoiseProfile:
    return parse_profile(f"uniform:{float(eps)!r}" if profile == "uniform" else profile)


def _noisy(fit: MixedFit, profile: str, eps: float, seed: int, base: str
           ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """(base atoms, noisy atoms) per seed (module docstring)."""
    prof = _profile(profile, eps)
    rng = np.random.default_rng(int(seed))
    bases = tuple(r.atoms for r in fit.star) if base == "readout" else fit.mu_hat_test
    return bases, tuple(apply_noise(b, prof, rng) for b in bases)


def _short(label: str) -> str:
    """A method's label without its parenthesis, for a sentence."""
    return label.split(" (")[0]


def _pooled(correct: Sequence[np.ndarray]) -> float:
    return 100 * float(np.concatenate(list(correct)).mean(0).mean())


@dataclass(frozen=True, eq=False)
class NoiseView:
    """Every fitted method on μ* and on the noisy input (seed 000 §12.5).

    Attributes
    ----------
    profile, eps, base, seed : the noise (``eps`` is the mean cell error rate of a profile
        other than ``"uniform"``, which ignores the requested one) and its input
        (:data:`BASES`).
    board : the table a reader compares; frame: ``method, label, accuracy_star,
        accuracy_hat, change`` (%, pp; change = noisy − μ*).
    best : label of the best method on the noisy input; story : one plain sentence.
    n_test : test personas; n_atoms : non-null atoms of the base input; n_flipped, flip_rate :
        atoms the noise changed, and their share of ``n_atoms``.
    """

    profile: str
    eps: float
    base: str
    seed: int
    board: Table
    frame: pd.DataFrame
    best: str
    story: str
    n_test: int
    n_atoms: int
    n_flipped: int
    flip_rate: float


def _noise_story(frame: pd.DataFrame, *, profile: str, eps: float, base: str,
                 n_flipped: int, flip_rate: float) -> str:
    top = frame.loc[frame["accuracy_hat"].idxmax()]
    best = f"{_short(top['label'])} is best with {top['accuracy_hat']:.1f} %"
    if n_flipped == 0:
        return (f"No atom is flipped, so every method scores what it scores on "
                f"{_INPUT_WORDS[base]}: {best}.")
    how = {"uniform": f"each atom with probability {eps:.2f}",
           "paper": "at the GPT-5.4 extractor's error rate of each source",
           "gemini": "at the Gemini extractor's approximate error rate of each question and "
                     "source",
           "paraphrase": "at the rates our extractor erred on reworded prose, cell by "
                         "cell"}[profile]
    verb = "Flipping or emptying atoms" if profile == "paraphrase" else "Flipping"
    fused = frame[~frame["method"].isin(["majority_class", "random"])]
    if "majority_class" in set(frame["method"]) and len(fused):
        mc = float(frame.loc[frame["method"] == "majority_class", "accuracy_hat"].iloc[0])
        gap = float((fused["accuracy_hat"] - mc).abs().max())
        if gap < 5:
            return (f"{verb} {how} ({100 * flip_rate:.1f} % of the atoms) leaves every method "
                    f"that reads the atoms within {gap:.1f} points of Majority Class, which "
                    f"ignores them: {best}.")
    worst = frame.loc[frame["change"].idxmin()]
    return (f"{verb} {how} ({100 * flip_rate:.1f} % of the atoms) costs "
            f"{_short(worst['label'])} the most ({-worst['change']:.1f} points); {best}.")


def noise_view(fit: MixedFit, *, profile: str, eps: float, seed: int = 0,
               base: str | None = None) -> NoiseView:
    """Re-score every fitted method on ``base`` flipped with ``profile`` (module docstring).

    Predicts only (no refit). ``ValueError`` for an unknown profile or base, ``eps`` outside
    [0, 1], or ``base="extracted"`` on a fit without μ̂.
    """
    base = _check_noise(fit, profile, eps, base)
    bases, noisy = _noisy(fit, profile, eps, seed, base)
    rows = []
    for m in fit.methods:
        star = [r.predictions[m].answer == r.gt for r in fit.star]
        hat = [_answer(r, m, x) == r.gt for r, x in zip(fit.star, noisy, strict=True)]
        a_star, a_hat = _pooled(star), _pooled(hat)
        rows.append({"method": m, "label": METHOD_LABELS.get(m, m), "accuracy_star": a_star,
                     "accuracy_hat": a_hat, "change": a_hat - a_star})
    frame = pd.DataFrame(rows)
    n_atoms = int(sum(int((b >= 0).sum()) for b in bases))
    n_flipped = int(sum(int((b != x).sum()) for b, x in zip(bases, noisy, strict=True)))
    rate = n_flipped / n_atoms if n_atoms else 0.0
    e = float(eps) if profile == "uniform" else _profile(profile, eps).mean_error
    board = table(frame, {"label": "method", "accuracy_star": "on μ* %",
                          "accuracy_hat": "on noisy input %", "change": "change, points"},
                  stem=f"noise_{profile}_{e:g}_{base}_{seed}", formats={"change": "{:+.1f}"})
    best = str(frame.loc[frame["accuracy_hat"].idxmax(), "label"])
    story = _noise_story(frame, profile=profile, eps=e, base=base, n_flipped=n_flipped,
                         flip_rate=rate)
    return NoiseView(profile, e, base, int(seed), board, frame, best, story, fit.n_test,
                     n_atoms, n_flipped, rate)


# ------------------------------------------------------------------------------------- 2 × 2

_TERM_WORDS = {"total": "the whole gap (A on μ* against B on μ̂)",
               "resolution": "lost in resolution (B against A)",
               "extraction": "lost in extraction (μ̂ against μ*)",
               "interaction": "interaction (0 when the two add up)"}


@dataclass(frozen=True, eq=False)
class FactorialView:
    """The resolver × input 2 × 2 of seed 000 §4.2 on the noisy input, with its attribution.

    Attributes
    ----------
    a, b, a_label, b_label : the two methods.
    decomposition : the four cells, the terms and their paired bootstrap intervals.
    cells, terms : the tables a reader compares (the paper's numbers beside ours).
    story : one plain sentence on how the gap splits.
    paper : cell → the paper's accuracy where it reports one for these methods; paper_terms :
        the paper's terms when all four cells are reported (its μ̂ is GPT-5.4's atoms, not a
        noise profile), else empty.
    profile, eps, base, seed : the noise (:class:`NoiseView`).
    slices : the four cells split by Source Reachability (some μ* atom equals GT, or none:
        the slices the paper uses under both inputs), or ``None`` without a reach mask.
    """

    a: str
    b: str
    a_label: str
    b_label: str
    decomposition: Decomposition
    cells: Table
    terms: Table
    story: str
    paper: FrozenDict
    paper_terms: FrozenDict = field(default_factory=FrozenDict)
    profile: str = ""
    eps: float = float("nan")
    base: str = ""
    seed: int = 0
    slices: Table | None = None


def _factorial_story(d: Decomposition, a: str, b: str, base: str) -> str:
    t = d.terms
    hat = "the noisy direct readout" if base == "readout" else "the extracted atoms"
    if t["total"] == 0:
        return (f"{a} on the direct readout and {b} on {hat} score the same, so there is no "
                "gap to split.")
    text = (f"Of the {t['total']:.1f} points between {a} on the direct readout and {b} on "
            f"{hat}, {t['resolution']:.1f} points ({100 * d.resolution_share:.0f} %) is "
            f"lost in resolution and {t['extraction']:.1f} points "
            f"({100 * d.extraction_share:.0f} %) in extraction")
    acc = d.accuracy
    if abs(t["interaction"]) < 0.5:
        return text + f"; the two effects add up (interaction {t['interaction']:+.1f} points)."
    return (text + f"; they do not add up (interaction {t['interaction']:+.1f} points): {a} "
            f"loses {acc['a_star'] - acc['a_hat']:.1f} points to extraction, {b} "
            f"{acc['b_star'] - acc['b_hat']:.1f} points.")


def factorial_view_of(d: Decomposition, *, profile: str = "", eps: float = float("nan"),
                      base: str = "", seed: int = 0) -> FactorialView:
    """:class:`FactorialView` of a :class:`~core.evaluation.decomposition.Decomposition`."""
    a_label, b_label = d.label("a"), d.label("b")
    cells = d.table()
    cells["label"] = cells["arm"].map({"a": a_label, "b": b_label})
    cells["input_words"] = cells["input"].map(_CELL_INPUTS)
    cell_table = table(cells, {"label": "method", "input_words": "input", "accuracy": "accuracy %",
                               "ci_low": "95 % low", "ci_high": "95 % high",
                               "paper": "paper %"},
                       stem=f"factorial_{d.a}_{d.b}_cells")
    paper = FrozenDict(d.paper)
    paper_terms = (FrozenDict({k: float(v) for k, v in _terms(
        *(paper[c] for c in ("a_star", "b_star", "a_hat", "b_hat"))).items()})
        if all(c in paper for c in ("a_star", "b_star", "a_hat", "b_hat")) else FrozenDict())
    share = {"resolution": d.resolution_share, "extraction": d.extraction_share}
    terms = pd.DataFrame([{"term": k, "meaning": _TERM_WORDS[k], "pp": d.terms[k],
                           "ci_low": d.ci[k][0], "ci_high": d.ci[k][1],
                           "share": 100 * share[k] if k in share else np.nan,
                           "paper": paper_terms.get(k, np.nan)} for k in _TERM_WORDS])
    term_table = table(terms, {"meaning": "term", "pp": "points", "ci_low": "95 % low",
                               "ci_high": "95 % high", "share": "share %",
                               "paper": "paper, points"},
                       stem=f"factorial_{d.a}_{d.b}_terms",
                       formats={"pp": "{:+.2f}", "ci_low": "{:+.2f}", "ci_high": "{:+.2f}",
                                "paper": "{:+.2f}"})
    slices = None
    if len(d.slices):
        sl = d.slices.copy()
        sl["label"] = sl["arm"].map({"a": a_label, "b": b_label})
        sl["input_words"] = sl["input"].map(_CELL_INPUTS)
        slices = table(sl, {"label": "method", "input_words": "input", "full": "all %",
                            "gt_present": "some source right %",
                            "gt_absent": "no source right %", "paper_present": "paper, right %",
                            "paper_absent": "paper, none %"},
                       stem=f"factorial_{d.a}_{d.b}_slices")
    return FactorialView(d.a, d.b, a_label, b_label, d, cell_table, term_table,
                         _factorial_story(d, _short(a_label), _short(b_label), base), paper,
                         paper_terms, profile, float(eps), base, int(seed), slices)


def factorial_view(fit: MixedFit, *, a: str, b: str, profile: str, eps: float, seed: int = 0,
                   n_boot: int = 2000, base: str | None = None, boot_seed: int = 42
                   ) -> FactorialView:
    """The 2 × 2 of methods ``a`` and ``b`` (fitted on μ*) on μ* and on the noisy input.

    The noisy atoms are :func:`noise_view`'s for the same ``profile, eps, seed, base``; the
    paired persona-cluster bootstrap draws ``n_boot`` replicates from
    ``default_rng(boot_seed)`` (the command line's ``--seed``). ``ValueError`` for a method
    that was not fitted, ``a == b``, and the bad values :func:`noise_view` refuses.
    """
    for name, m in (("a", a), ("b", b)):
        if m not in fit.methods:
            raise ValueError(f"{name}={m!r} was not fitted (fitted: {', '.join(fit.methods)})")
    if a == b:
        raise ValueError(f"a and b are both {a!r}; pick two methods")
    base = _check_noise(fit, profile, eps, base)
    _, noisy = _noisy(fit, profile, eps, seed, base)

    def cells(m):
        star = np.concatenate([r.predictions[m].answer == r.gt for r in fit.star])
        hat = np.concatenate([_answer(r, m, x) == r.gt
                              for r, x in zip(fit.star, noisy, strict=True)])
        return star, hat

    (a_star, a_hat), (b_star, b_hat) = cells(a), cells(b)
    reach = np.concatenate([reachable(r.atoms, r.gt) for r in fit.star])
    d = factorial(a_star, b_star, a_hat, b_hat, rng=np.random.default_rng(int(boot_seed)),
                  n_boot=n_boot, reach=reach, a=a, b=b)
    e = float(eps) if profile == "uniform" else _profile(profile, eps).mean_error
    return factorial_view_of(d, profile=profile, eps=e, base=base, seed=int(seed))
