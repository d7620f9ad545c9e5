"""The tour's "extraction or resolution" stop: one misread atom against a wrong rule.

Seed 000 §4.2 crosses two resolvers with two inputs, the atoms read straight from the
records (μ*) and the atoms an extractor read from the prose (μ̂); the gap from the better
resolver on μ* to the worse one on μ̂ splits into what is lost in **resolution**
½[(A* − B*) + (Â − B̂)] and what is lost in **extraction** ½[(A* − Â) + (B* − B̂)]
(:mod:`core.evaluation.decomposition`). Our own extractor reads our prose back exactly (a round
trip, :mod:`core.build`), so its errors are simulated as on the Extraction page: the paper's
GPT-5.4 extractor's error rate of each source (seed 000 §8.8) flips the store's extracted test
atoms (:meth:`core.prose.noise.NoiseProfile.paper`), drawn seed by seed from
``default_rng(0)`` in the store's seed order — the draws of
:func:`core.prose.mixed_view.noise_view` and :func:`~core.prose.mixed_view.factorial_view` for
``profile="paper"``, so the page's 2 × 2 shows the same four cells.

Selection rule (:func:`extraction_view`): candidates are the test (person, question) pairs
where DSNBF is right on μ* and on the clean μ̂, wrong on the noisy μ̂, and exactly one of the
question's five atoms was changed by the noise; ranked by (1) majority vote wrong on μ* (the
same question then shows a resolution error too), (2) the changed atom was the truth before
it was misread, (3) DSNBF's confidence on μ* (highest first), then the seed, the person id
and the question order.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..evaluation.decomposition import factorial
from ..evaluation.paper import PAPER_EXTRACTION
from ..prose.mixed_view import MixedFit, mixed_fit
from ..prose.noise import NoiseProfile, apply_noise
from ..testbed.questions import QIDS, QUESTIONS, SOURCE_LABELS, SOURCES
from ..testbed.words import label_words
from ._pipeline_store import NEEDS_SPLITS, missing_splits
from ._pipeline_words import SOURCE_WORDS, count, person_words, question_words
from .model import Chart, StopView, TourData

__all__ = ["KEY", "MixedAnswers", "extraction_view", "mixed_answers"]

KEY = "extraction-or-resolution"
#: arm A (the learned resolver) and arm B (majority vote): the Extraction page's defaults
A, B = "dsnbf", "majority_vote"
#: the noise profile and the seed of its draws (the Extraction page's)
PROFILE, NOISE_SEED = "paper", 0
#: the Extraction page's URL token of each source
SOURCE_TOKENS = MappingProxyType(dict(zip(
    SOURCES, ("profile", "planner", "self_report", "objective", "device"), strict=True)))


@dataclass(frozen=True, eq=False)
class MixedAnswers:
    """Both arms' answers on μ*, on the clean μ̂ and on the noisy μ̂, pooled over seeds.

    Attributes
    ----------
    seed, persona_id, name, difficulty : one entry per test person (C,).
    gt : (C, 18) ground-truth codes.
    star, clean, noisy : (C, 18, 5) atoms: μ*, the store's μ̂, μ̂ flipped by the profile.
    answers : (arm, input) → (C, 18) answer codes; arm in ``("a", "b")``, input in
        ``("star", "clean", "noisy")``.
    confidence_a : (C, 18) DSNBF's confidence on μ*.
    """

    seed: np.ndarray
    persona_id: np.ndarray
    name: np.ndarray
    difficulty: np.ndarray
    gt: np.ndarray
    star: np.ndarray
    clean: np.ndarray
    noisy: np.ndarray
    answers: dict
    confidence_a: np.ndarray


def mixed_answers(fit: MixedFit, *, profile: NoiseProfile, noise_seed: int) -> MixedAnswers:
    """Both arms fitted in ``fit`` answering μ*, the store's μ̂ and μ̂ flipped by ``profile``.

    Mixed mode (seed 000 §9.4): the resolvers were fitted and calibrated on μ* and only
    predict here; the flip is seed 000 §12.5's (:func:`core.prose.noise.apply_noise`).

    Parameters
    ----------
    fit : MixedFit
        Arms :data:`A` and :data:`B` fitted on every seed, with the store's extracted test
        atoms.
    profile : NoiseProfile
        The extractor's simulated error rates.
    noise_seed : int
        Seed of the one ``numpy.random.default_rng`` the flips are drawn from, seed by seed in
        ``fit.star`` order (the Extraction page's draws).

    Returns
    -------
    MixedAnswers
        ``ValueError`` when ``fit`` has no extracted atoms or lacks either arm.
    """
    if fit.mu_hat_test is None:
        raise ValueError("the store holds no extracted atoms for its test people")
    missing = [m for m in (A, B) if m not in fit.methods]
    if missing:
        raise ValueError(f"the fit lacks {', '.join(missing)}")
    rng = np.random.default_rng(int(noise_seed))
    noisy = [apply_noise(clean, profile, rng) for clean in fit.mu_hat_test]
    answers: dict[tuple[str, str], list[np.ndarray]] = {}
    for run, clean, flipped in zip(fit.star, fit.mu_hat_test, noisy, strict=True):
        for arm, method in (("a", A), ("b", B)):
            model = run.models[method]
            answers.setdefault((arm, "star"), []).append(run.predictions[method].answer)
            answers.setdefault((arm, "clean"), []).append(model.predict(clean).answer)
            answers.setdefault((arm, "noisy"), []).append(model.predict(flipped).answer)
    people = pd.concat([r.personas for r in fit.star], ignore_index=True)
    return MixedAnswers(
        seed=people["seed"].to_numpy(int), persona_id=people["persona_id"].to_numpy(str),
        name=(people["name"] if "name" in people else people["persona_id"]).to_numpy(str),
        difficulty=people["difficulty"].to_numpy(str),
        gt=np.concatenate([r.gt for r in fit.star]),
        star=np.concatenate([r.atoms for r in fit.star]),
        clean=np.concatenate(fit.mu_hat_test), noisy=np.concatenate(noisy),
        answers={k: np.concatenate(v) for k, v in answers.items()},
        confidence_a=np.concatenate([r.predictions[A].confidence for r in fit.star]))


def _candidates(m: MixedAnswers) -> pd.DataFrame:
    """The qualifying (person, question) pairs, ranked by the module docstring's rule."""
    right = {k: v == m.gt for k, v in m.answers.items()}
    changed = m.noisy != m.clean
    ok = right[("a", "star")] & right[("a", "clean")] & ~right[("a", "noisy")]
    ok &= changed.sum(2) == 1
    p, q = np.nonzero(ok)
    src = changed[p, q].argmax(1)
    frame = pd.DataFrame({
        "row": p, "q": q, "s": src, "seed": m.seed[p], "persona_id": m.persona_id[p],
        "mv_wrong": ~right[("b", "star")][p, q],
        "was_truth": m.star[p, q, src] == m.gt[p, q],
        "confidence": m.confidence_a[p, q]})
    return frame.sort_values(["mv_wrong", "was_truth", "confidence", "seed", "persona_id", "q"],
                             ascending=[False, False, False, True, True, True],
                             kind="mergesort").reset_index(drop=True)


def _label(qi: int, code: int) -> str | None:
    return None if code < 0 else QUESTIONS[qi].labels[code]


def _status(qi: int, code: int, gt: int) -> str:
    return "none" if code < 0 else ("right" if code == gt else "wrong")


def _chart(m: MixedAnswers, row: int, qi: int, si: int) -> Chart:
    qid, gt = QIDS[qi], int(m.gt[row, qi])
    rows = []
    for s, source in enumerate(SOURCES):
        code = int(m.star[row, qi, s])
        rows.append((SOURCE_LABELS[source], "source", code,
                     "read straight from the records"))
        if s == si:
            rows.append((f"{SOURCE_LABELS[source]}, as the extractor misread it", "source",
                         int(m.noisy[row, qi, s]),
                         "a simulated misreading, at the paper's error rate for this source"))
    for arm, name in (("a", "DSNBF"), ("b", "Majority vote")):
        for inp, words in (("star", "the records' atoms"), ("noisy", "the extracted atoms")):
            rows.append((f"{name}, reading {words}", "resolver",
                         int(m.answers[(arm, inp)][row, qi]), f"{name} on {words}"))
    rows.append(("The truth", "truth", gt, "worked out from the simulated days"))
    data = pd.DataFrame([{"who": who, "role": role, "answer": label_words(qid, _label(qi, c)),
                          "status": "right" if role == "truth" else _status(qi, c, gt),
                          "text": text} for who, role, c, text in rows])
    return Chart("answers", data,
                 title="One misread atom turns the learned resolver's right answer wrong",
                 caption="Each row is a source's atom or a resolver's answer; green is the "
                         "truth, red a wrong answer, grey no atom. Compare the two DSNBF rows: "
                         "only the misread atom differs between them.")


def extraction_view(data: TourData) -> StopView:
    """The stop's view: the selected (person, question), its chart, the 2 × 2 as evidence.

    Parameters
    ----------
    data : TourData
        Needs the store (``LookupError`` without one); a store without training people or
        without extracted atoms gives a view that says so.

    Returns
    -------
    StopView
        Shows the failure when some (person, question) passes the module docstring's
        filters; the evidence holds the four cells of seed 000 §4.2's 2 × 2 as counts and the
        resolution and extraction terms in points.
    """
    con = data.connection()
    if missing_splits(con):
        return StopView(KEY, (), (), None, "", "", (), (), False, note=NEEDS_SPLITS)
    fit = data.memo("pipeline:mixed-fit", lambda: mixed_fit(con, methods=(B, A)))
    if fit.mu_hat_test is None:
        return StopView(KEY, (), (), None, "", "", (), (), False,
                        note="This store holds no atoms extracted from its test people's "
                             "prose; the default store, built with python -m core build, "
                             "has them.")
    m = data.memo("pipeline:mixed-answers", lambda: mixed_answers(
        fit, profile=NoiseProfile.paper(), noise_seed=NOISE_SEED))
    n = m.gt.size
    right = {k: int((v == m.gt).sum()) for k, v in m.answers.items()}
    d = factorial(*(m.answers[k] == m.gt for k in (("a", "star"), ("b", "star"),
                                                     ("a", "noisy"), ("b", "noisy"))),
                  rng=np.random.default_rng(0), n_boot=1, a=A, b=B)
    ext, res = d.terms["extraction"], d.terms["resolution"]
    n_atoms = int((m.clean >= 0).sum())
    n_flipped = int((m.clean != m.noisy).sum())
    cand = _candidates(m)
    rates = [100 - PAPER_EXTRACTION["by_source"][s] for s in SOURCES]
    settings = (
        ("Extraction errors", f"simulated: each atom misread with the error rate the paper "
                              f"measured for its GPT-5.4 extractor on that source, "
                              f"{min(rates):.1f} % to {max(rates):.1f} % (the memory-benchmark "
                              "paper §8.8); "
                              f"random draws from generator seed {NOISE_SEED}, as on the "
                              "Extraction page"),
        ("Resolvers", "the learned confusion-matrix resolver (DSNBF) and majority vote, both "
                      "fitted on the training people's atoms read straight from the records"),
        ("People", f"{len(m.gt):,} test people × 18 questions = {n:,} answers, "
                   f"{len(np.unique(m.seed))} random seeds"))
    evidence = (
        ("DSNBF right, reading the records' atoms", count(right[("a", "star")], n)),
        ("DSNBF right, reading the extracted atoms", count(right[("a", "noisy")], n)),
        ("Majority vote right, reading the records' atoms", count(right[("b", "star")], n)),
        ("Majority vote right, reading the extracted atoms", count(right[("b", "noisy")], n)),
        ("Lost in extraction (mean over both resolvers)", f"{ext:.1f} points"),
        ("Lost in resolution (majority vote instead of DSNBF)", f"{res:.1f} points"),
        ("Atoms the simulated extractor changed", count(n_flipped, n_atoms)),
        ("Answers DSNBF gets right on the records and wrong after exactly one misread atom",
         count(len(cand), n)))
    if cand.empty:
        return StopView(KEY, (), settings, None, "", "", (("ex_profile", PROFILE),), evidence,
                        False, note="No answer of DSNBF was turned from right to wrong by "
                                    "exactly one misread atom in this store.")
    top = cand.iloc[0]
    row, qi, si = int(top["row"]), int(top["q"]), int(top["s"])
    qid, source, gt = QIDS[qi], SOURCES[si], int(m.gt[row, qi])
    said = label_words(qid, _label(qi, int(m.star[row, qi, si])))
    read = label_words(qid, _label(qi, int(m.noisy[row, qi, si])))
    hat = label_words(qid, _label(qi, int(m.answers[("a", "noisy")][row, qi])))
    truth = label_words(qid, _label(qi, gt))
    mv_wrong = bool(top["mv_wrong"])
    example = (
        ("Person", person_words(top["persona_id"], top["seed"], name=m.name[row],
                                difficulty=m.difficulty[row])),
        ("Question", question_words(qid)),
        ("Misread atom", f"{SOURCE_WORDS[source]}: the records say “{said}”, the extractor "
                         f"read “{read}”"),
        ("The truth", truth))
    bigger = "the choice of resolver" if res > ext else "the extractor's misreads"
    answer = (f"No: with {SOURCE_WORDS[source]} misread as “{read}”, DSNBF answers “{hat}” "
              f"instead of “{truth}”; over all {n:,} answers the misreads cost {ext:.1f} "
              f"points and majority vote instead of DSNBF {res:.1f} points, so {bigger} "
              "costs more.")
    reason = (f"In the chart DSNBF weighs the five atoms by what it learned of each source and "
              f"lands on the truth; once {SOURCE_WORDS[source]}'s atom is misread the weighing "
              f"tips to “{hat}”, an error of extraction, since the resolver did not change. "
              + ("Majority vote is wrong even on the records' own atoms: that is an error of "
                 "resolution, which no better extractor can fix." if mv_wrong else
                 "Majority vote happens to be right here, but over all questions it loses "
                 "more to its rule than DSNBF loses to the misreads."))
    link = (("ex_persona", f"{top['seed']}-{top['persona_id']}"), ("ex_q", qid),
            ("ex_src", SOURCE_TOKENS[source]), ("ex_profile", PROFILE), ("ex_a", A),
            ("ex_b", B))
    return StopView(KEY, example, settings, _chart(m, row, qi, si), answer, reason, link,
                    evidence, True,
                    note="The misreading is simulated: our own extractor reads this sentence "
                         "right, so the page's prose panel shows the correct atom; its noise "
                         "profile applies the same errors to the 2 × 2.")
