"""The resolver × input 2 × 2 of seed 000 §4.2 and its difference-of-differences attribution.

Seed 000 §4.2 crosses two resolvers A and B (the paper: DSNBF against GPT-5.4 reading the same
structured atom grid) with two inputs, the direct readout μ* and the extracted atoms μ̂, in
**mixed mode** (§9.4 "released-cache boundary"; the benchmark specification §2.10): every
resolver is fitted and calibrated on μ* (train and calibration splits) and predicts the test
split from μ* or from μ̂. With the four pooled forced accuracies A*, B*, Â, B̂ (%):

* **total** (the diagonal) ``A* − B̂``;
* **resolution** (what is lost in resolution, B against A) ``½[(A* − B*) + (Â − B̂)]``;
* **extraction** (what is lost in extraction, μ̂ against μ*) ``½[(A* − Â) + (B* − B̂)]``;
* **interaction** ``(A* − B*) − (Â − B̂) = (A* − Â) − (B* − B̂)``;
* the **shares** resolution / total and extraction / total (the paper's 81 % / 19 %).

Invariants (tested): ``total == resolution + extraction`` exactly (so the shares add up to 1);
``interaction == 0`` when the two effects are additive; every gap follows the project's sign
convention Δ = R(B) − R(A) with risk = 1 − accuracy, i.e. a gap > 0 means A (or μ*) is better.
The paper's four cells 82.3 / 73.5 / 80.3 / 71.4 give total 10.9, resolution 8.85 (81 %),
extraction 2.05 (19 %), interaction −0.1 (:data:`core.evaluation.paper.PAPER_FACTORIAL`).

Intervals: the persona-cluster percentile bootstrap of the benchmark specification §2.12; each
replicate resamples the (seed, persona) clusters once and applies the **same** resample to the
four cells, so every term's interval is a paired one. The resampling draws from the caller's
``numpy.random.Generator`` and is vectorised over replicates (a (B, C) multiplicity matrix).

The Source-Reachability slices (:func:`core.evaluation.tables.reachability_slices`) split the
test instances by whether some **μ*** atom equals GT (the paper's 8,049 GT-present / 591
GT-absent instances), for both inputs, so the μ̂ rows are on the same instances as the μ* rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..frozen import FrozenDict
from ..testbed.questions import QIDS, QUESTIONS
from .paper import (
    PAPER_FACTORIAL,
    PAPER_FORCED,
    PAPER_FORCED_EXTRACTED,
    PAPER_SLICES,
    PAPER_SLICES_EXTRACTED,
    PAPER_SLICES_STRUCT_LLM,
)
from .run import METHOD_LABELS, SeedRun, run_seed, seed_rows

__all__ = ["CELLS", "INPUTS", "TERMS", "Decomposition", "decompose", "factorial", "mixed_runs",
           "model_correct", "reachable"]

#: the two inputs: direct readout μ* and extracted μ̂
INPUTS = ("readout", "extracted")
#: the four cells, in the order A*, B*, Â, B̂
CELLS = ("a_star", "b_star", "a_hat", "b_hat")
#: the attribution terms (module docstring)
TERMS = ("total", "resolution", "extraction", "interaction")


def _terms(a_star, b_star, a_hat, b_hat) -> dict:
    """The attribution terms of the module docstring; works on scalars and on arrays."""
    return {"total": a_star - b_hat,
            "resolution": 0.5 * ((a_star - b_star) + (a_hat - b_hat)),
            "extraction": 0.5 * ((a_star - a_hat) + (b_star - b_hat)),
            "interaction": (a_star - b_star) - (a_hat - b_hat)}


def _share(part: float, total: float) -> float:
    return float(part / total) if total != 0 else float("nan")


@dataclass(frozen=True)
class Decomposition:
    """The 2 × 2 of one resolver pair (seed 000 §4.2), with its attribution and intervals.

    Attributes
    ----------
    a, b : the two arms (method names, or a model name for an imported LLM's answers).
    accuracy : cell (:data:`CELLS`) → pooled forced macro accuracy (%).
    terms : term (:data:`TERMS`) → pp (module docstring; > 0 means A, or μ*, is better).
    resolution_share, extraction_share : resolution / total and extraction / total.
    ci : cell or term → (low, high) of the paired persona-cluster percentile bootstrap.
    n_clusters, n_instances : (seed, persona) clusters and question instances per cell.
    n_boot, level : bootstrap replicates and interval level.
    slices : arm, input, full, gt_present, gt_absent, n_present, n_absent (%; the slices are
        defined by μ*, see the module docstring).
    paper : cell → the paper's accuracy where it reports one (seed 000 §4.2, Table 2).
    """

    a: str
    b: str
    accuracy: FrozenDict
    terms: FrozenDict
    resolution_share: float
    extraction_share: float
    ci: FrozenDict
    n_clusters: int
    n_instances: int
    n_boot: int
    level: float
    slices: pd.DataFrame = field(repr=False)
    paper: FrozenDict = field(default_factory=FrozenDict)

    def label(self, arm: str) -> str:
        """Display label of ``arm`` (``"a"`` or ``"b"``)."""
        name = {"a": self.a, "b": self.b}[arm]
        return METHOD_LABELS.get(name, name)

    def table(self) -> pd.DataFrame:
        """The four cells as rows: arm, method, input, accuracy, ci_low, ci_high, paper."""
        rows = []
        for cell in CELLS:
            arm, inp = cell.split("_")
            low, high = self.ci[cell]
            rows.append({"arm": arm, "method": getattr(self, arm), "input":
                         "readout" if inp == "star" else "extracted",
                         "accuracy": self.accuracy[cell], "ci_low": low, "ci_high": high,
                         "paper": self.paper.get(cell, np.nan)})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        """JSON-ready form (NaN stays NaN: the caller's writer turns it into null)."""
        return {"a": self.a, "b": self.b, "accuracy": dict(self.accuracy),
                "terms": dict(self.terms), "resolution_share": self.resolution_share,
                "extraction_share": self.extraction_share,
                "ci": {k: list(v) for k, v in self.ci.items()}, "n_clusters": self.n_clusters,
                "n_instances": self.n_instances, "n_boot": self.n_boot, "level": self.level,
                "paper": dict(self.paper), "slices": self.slices.to_dict(orient="records")}


def reachable(mu_star: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """(C, 18) bool: some μ* atom equals GT (the rule of :func:`tables.pooled`)."""
    mu_star, gt = np.asarray(mu_star), np.asarray(gt)
    return ((mu_star == gt[..., None]) & (mu_star >= 0)).any(2)


def _slices(correct: dict[str, np.ndarray], reach: np.ndarray, names: dict[str, str]
            ) -> pd.DataFrame:
    rows = []
    for cell, c in correct.items():
        arm, inp = cell.split("_")
        method = names[arm]
        if inp == "star":
            paper = (PAPER_SLICES_STRUCT_LLM if method == "struct_llm"
                     else PAPER_SLICES.get(method, (np.nan,) * 3))
        else:
            paper = PAPER_SLICES_EXTRACTED.get(method, (np.nan,) * 3)
        rows.append({"arm": arm, "method": method,
                     "input": "readout" if inp == "star" else "extracted",
                     "full": 100 * c.mean(0).mean(),
                     "gt_present": 100 * c[reach].mean() if reach.any() else np.nan,
                     "gt_absent": 100 * c[~reach].mean() if (~reach).any() else np.nan,
                     "n_present": int(reach.sum()), "n_absent": int((~reach).sum()),
                     "paper_full": paper[0], "paper_present": paper[1],
                     "paper_absent": paper[2]})
    return pd.DataFrame(rows)


def _paper_cells(a: str, b: str) -> FrozenDict:
    out = {}
    for arm, name in (("a", a), ("b", b)):
        for inp, suffix in (("readout", "star"), ("extracted", "hat")):
            if (name, inp) in PAPER_FACTORIAL:
                out[f"{arm}_{suffix}"] = PAPER_FACTORIAL[(name, inp)][0]
            else:
                ref = PAPER_FORCED if inp == "readout" else PAPER_FORCED_EXTRACTED
                if name in ref:
                    out[f"{arm}_{suffix}"] = ref[name]
    return FrozenDict(out)


def factorial(a_star: np.ndarray, b_star: np.ndarray, a_hat: np.ndarray, b_hat: np.ndarray,
              *, rng: np.random.Generator, n_boot: int = 2000, level: float = 0.95,
              reach: np.ndarray | None = None, a: str = "a", b: str = "b") -> Decomposition:
    """The 2 × 2 of four (C, 18) correctness arrays on the same clusters (module docstring).

    Parameters
    ----------
    a_star, b_star, a_hat, b_hat : bool (C, 18): arm A or B correct on μ* or μ̂ input, one row
        per (seed, persona) cluster, the same clusters in the same order in all four.
    rng : the generator the bootstrap resamples with.
    n_boot : replicates (≥ 1); level : interval level in (0, 1).
    reach : bool (C, 18) GT-present mask defined by μ* (:func:`reachable`); without it the
        slices frame is empty.
    a, b : names of the arms (method names pick the paper's numbers).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    cells = {k: np.asarray(v, bool) for k, v in zip(CELLS, (a_star, b_star, a_hat, b_hat),
                                                    strict=True)}
    shape = cells["a_star"].shape
    if len(shape) != 2 or shape[0] == 0:
        raise ValueError(f"correctness arrays must be non-empty (clusters, questions), got "
                         f"{shape}")
    for k, v in cells.items():
        if v.shape != shape:
            raise ValueError(f"{k} has shape {v.shape}, a_star {shape}: the four cells must "
                             "cover the same clusters and questions")
    n = shape[0]
    acc = {k: 100 * float(v.mean(0).mean()) for k, v in cells.items()}
    terms = {k: float(v) for k, v in _terms(*(acc[c] for c in CELLS)).items()}
    # (B, C) multiplicities of one cluster resample per replicate, shared by the four cells
    idx = rng.integers(0, n, size=(int(n_boot), n))
    flat = (idx + (np.arange(int(n_boot)) * n)[:, None]).reshape(-1)
    w = np.bincount(flat, minlength=int(n_boot) * n).reshape(int(n_boot), n).astype(float)
    reps = {k: 100 * ((w @ v.astype(float)) / n).mean(1) for k, v in cells.items()}
    reps.update(_terms(*(reps[c] for c in CELLS)))
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    ci = {k: (float(np.quantile(r, lo_q)), float(np.quantile(r, hi_q))) for k, r in reps.items()}
    slices = (_slices(cells, np.asarray(reach, bool), {"a": a, "b": b}) if reach is not None
              else pd.DataFrame())
    return Decomposition(
        a=a, b=b, accuracy=FrozenDict(acc), terms=FrozenDict(terms),
        resolution_share=_share(terms["resolution"], terms["total"]),
        extraction_share=_share(terms["extraction"], terms["total"]),
        ci=FrozenDict(ci), n_clusters=n, n_instances=n * shape[1], n_boot=int(n_boot),
        level=float(level), slices=slices, paper=_paper_cells(a, b))


def mixed_runs(mu: np.ndarray, gt: np.ndarray, personas: pd.DataFrame, mu_hat: np.ndarray, *,
               methods: Sequence[str]) -> tuple[list[SeedRun], list[SeedRun]]:
    """Fit every method once per seed on μ*, then predict the test split from μ* and from μ̂.

    ``mu``, ``gt``, ``mu_hat`` are aligned with the rows of ``personas`` (every split; only the
    test rows of ``mu_hat`` are read). The second list is mixed mode (the benchmark
    specification §2.10): the same fitted models as the first, on μ̂ test atoms. A method with
    no fitted model (a GT-aided oracle) is run again on μ̂ by :func:`run_seed`.
    """
    mu, mu_hat = np.asarray(mu), np.asarray(mu_hat)
    if mu_hat.shape != mu.shape:
        raise ValueError(f"mu_hat has shape {mu_hat.shape}, mu {mu.shape}")
    star, hat = [], []
    test = personas["split"].to_numpy() == "test"
    for _seed, m in seed_rows(personas):
        rows = personas[m].reset_index(drop=True)
        run = run_seed(mu[m], gt[m], rows, methods=list(methods))
        test_hat = mu_hat[m & test]
        preds = {name: run.models[name].predict(test_hat)
                 for name in run.predictions if name in run.models}
        rest = [name for name in run.predictions if name not in preds]
        if rest:
            preds.update(run_seed(mu[m], gt[m], rows, methods=rest,
                                  test_atoms=test_hat).predictions)
        star.append(run)
        hat.append(SeedRun(run.seed, run.personas, run.gt, test_hat,
                           {name: preds[name] for name in run.predictions}, run.models))
    return star, hat


def model_correct(answers: pd.DataFrame, runs: Sequence[SeedRun], *, model: str,
                  variant: str) -> np.ndarray:
    """(C, 18) bool: the frozen answers of ``model``/``variant`` equal GT, pooled like ``runs``.

    ``answers`` is the store's ``llm_answers`` table (model, variant, seed, persona_id,
    question_id, answer). An answer outside the question's answer space, or a missing question,
    counts as wrong (the importer keeps such answers verbatim); a test persona with no answer
    at all raises ``ValueError`` (the cell would not cover the same clusters).
    """
    sel = answers[(answers["model"] == model) & (answers["variant"] == variant)]
    out = []
    for r in runs:
        ids = r.personas["persona_id"].astype(str).to_numpy()
        mine = sel[sel["seed"] == r.seed]
        missing = sorted(set(ids) - set(mine["persona_id"].astype(str)))
        if missing:
            raise ValueError(f"model {model!r} ({variant}) has no answers for {len(missing)} "
                             f"test persona(s) of seed {r.seed}, e.g. {missing[0]!r}")
        pos = {p: i for i, p in enumerate(ids)}
        code = np.full((len(ids), len(QIDS)), -1, np.int16)
        for j, q in enumerate(QUESTIONS):
            rows = mine[(mine["question_id"] == q.qid) & mine["persona_id"].isin(list(pos))]
            lookup = {lab: c for c, lab in enumerate(q.labels)}
            code[[pos[p] for p in rows["persona_id"].astype(str)], j] = [
                lookup.get(a, -1) for a in rows["answer"]]
        out.append((code == r.gt) & (code >= 0))
    return np.concatenate(out)


def decompose(star: Sequence[SeedRun], hat: Sequence[SeedRun], *, a: str, b: str,
              rng: np.random.Generator, n_boot: int = 2000, level: float = 0.95,
              b_cells: tuple[np.ndarray, np.ndarray] | None = None) -> Decomposition:
    """:func:`factorial` of methods ``a`` and ``b`` from the two lists of :func:`mixed_runs`.

    ``b_cells`` = (B on μ*, B on μ̂) correctness arrays replaces arm B by something that is no
    fitted method, e.g. an imported model's answers (:func:`model_correct`); ``b`` names it.
    """
    if len(star) != len(hat) or not star:
        raise ValueError("star and hat must be the same non-empty list of seeds")

    def correct(runs, m):
        if m not in runs[0].predictions:
            raise ValueError(f"method {m!r} was not run (have {', '.join(runs[0].predictions)})")
        return np.concatenate([r.predictions[m].answer == r.gt for r in runs])

    b_star, b_hat = b_cells if b_cells is not None else (correct(star, b), correct(hat, b))
    reach = np.concatenate([reachable(r.atoms, r.gt) for r in star])
    return factorial(correct(star, a), b_star, correct(hat, a), b_hat, rng=rng, n_boot=n_boot,
                     level=level, reach=reach, a=a, b=b)
