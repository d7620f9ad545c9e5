"""The walkthrough's selection protocol: which (persona, question) pair is worth showing.

Source: seed 000 §8.7 (the selection protocol of the walked-through example), on the direct
readout μ* of the benchmark specification §2.9. Pure: arrays and frames in, a ranked frame
out; :mod:`core.evaluation.walkthrough.funnel` turns the ranked pool into the page's panel.

Selection protocol (§8.7)
-------------------------
The paper's protocol filters on extracted atoms μ̂ and on resolver and LLM outputs.
:func:`select_walkthrough` reads the direct readout μ* and, without resolver outputs, uses only
the filters that need the testbed:

* hard (i): at least 4 of 5 sources give a non-null atom, and ``planner``,
  ``daily_self_report`` and ``objective_log`` are among them;
* hard (iv): the non-null atoms span at least two distinct values;
* hard (new, standing in for ii/iii/v): at least one source's atom disagrees with GT;
* soft, in this priority: the planner's atom is shifted in the planner's bias direction; the
  self-report's atom is shifted in its bias direction; at least one source agrees with GT;
* ranking: the number of soft preferences met (descending), then the preferences in the
  priority above, then the paper's lexicographic tiebreak ``(persona_id, seed, question
  order)``;
* pool: the test split only.

Given resolver outputs (a :class:`ResolverEvidence`, built from the store's cached test
predictions by :func:`resolver_evidence`), it runs the full protocol:

* hard (ii): DSNBF's arg max equals GT;
* hard (iii): at least one frontier LLM (GPT or Gemini, Direct prompt) answers wrong, where
  the store holds LLM answers (imported releases only); otherwise **Majority Vote is wrong**
  stands in, and :attr:`ResolverEvidence.reference` says which was used;
* hard (v): DSNBF's posterior margin p(top1) − p(top2) lies in [0.08, 0.35] (inclusive,
  :data:`MARGIN_WINDOW`);
* soft, in the paper's priority: planner shifted; self-report shifted; cross-family LLM
  divergence (GPT and Gemini disagree; only when both answered); at least one other fusion
  method (:data:`OTHER_FUSION`) also correct. "At least one source agrees with GT" is then
  reported but not ranked.

Without them, filters (ii), (iii) and (v) are listed as waiting (:data:`PENDING_FILTERS`).

"Shifted in its bias direction" means, on an ordinal question with both the atom and GT
substantive (not edge labels), ``sign(rank(atom) − rank(GT)) == BIAS[q, s] != 0``, ranks taken
in the bias-shift order of :mod:`core.testbed.questions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from core.testbed.questions import BIAS, Q_INDEX, QIDS, QUESTIONS, SOURCES
from core.testbed.questions import question as get_question

__all__ = [
    "FRONTIER_LLMS",
    "MARGIN_WINDOW",
    "OTHER_FUSION",
    "PENDING_FILTERS",
    "REFERENCE_NAMES",
    "ResolverEvidence",
    "bias_rank_table",
    "label_arrays",
    "resolver_evidence",
    "select_walkthrough",
]

_PL = SOURCES.index("planner")
_SR = SOURCES.index("daily_self_report")
_OB = SOURCES.index("objective_log")

#: §8.7 hard filters that need resolver or LLM outputs, shown on the page as "waiting".
PENDING_FILTERS = MappingProxyType({
    "ii": "DSNBF's arg max equals GT",
    "iii": "at least one frontier LLM (GPT-5.4 or Gemini 3.1 Pro, Direct) answers wrong",
    "v": "DSNBF posterior margin p(top1) − p(top2) lies in [0.08, 0.35]",
})

#: Filter (v): the window of DSNBF's posterior margin, both ends included.
MARGIN_WINDOW = (0.08, 0.35)

#: Fusion methods other than DSNBF (seed 000's T2 tier) for the soft preference "at least one
#: other fusion method also correct".
OTHER_FUSION = ("majority_vote", "bcf", "abf", "nbf")

#: Frontier LLMs of filter (iii): model-name prefixes (case-insensitive), Direct prompt.
FRONTIER_LLMS = ("gpt", "gemini")

#: What stood in for filter (iii), by :attr:`ResolverEvidence.reference`.
REFERENCE_NAMES = MappingProxyType({
    "llm": "a frontier LLM (GPT or Gemini, Direct prompt) answers wrong",
    "majority_vote": "Majority Vote answers wrong (stand-in: this store holds no frontier-LLM "
                     "answers)",
})


def bias_rank_table() -> np.ndarray:
    """Rank of every display code in bias-shift order, per question.

    Returns
    -------
    ndarray of shape (18, K_max), int8
        ``table[j, code]`` is the 0-based rank of ``code`` in question ``j``'s bias-shift
        order, ``-1`` for edge labels and padding. Nominal questions are all ``-1``.
    """
    kmax = max(q.k for q in QUESTIONS)
    table = np.full((len(QUESTIONS), kmax), -1, dtype=np.int8)
    for j, q in enumerate(QUESTIONS):
        if q.ordinal:
            table[j, list(q.order)] = np.arange(len(q.order))
    return table


def _shift_in_bias_direction(atom: np.ndarray, gt: np.ndarray, source: int) -> np.ndarray:
    """(P, 18) bool: atom of ``source`` lies on the side of GT its bias sign predicts."""
    table = bias_rank_table()
    j = np.broadcast_to(np.arange(len(QIDS)), gt.shape)
    r_atom = np.where(atom >= 0, table[j, np.maximum(atom, 0)], -1)
    r_gt = np.where(gt >= 0, table[j, np.maximum(gt, 0)], -1)
    b = BIAS[:, source][None, :].astype(int)
    ok = (r_atom >= 0) & (r_gt >= 0) & (b != 0)
    return ok & (np.sign(r_atom.astype(int) - r_gt.astype(int)) == b)


@dataclass(frozen=True)
class ResolverEvidence:
    """Resolver (and LLM) outputs the full §8.7 protocol filters on, aligned with personas.

    Attributes
    ----------
    dsnbf_correct : ndarray of shape (P, 18), bool
        DSNBF's arg max equals GT (filter ii).
    dsnbf_margin : ndarray of shape (P, 18), float
        DSNBF's posterior margin p(top1) − p(top2); NaN where unknown (filter v).
    reference_wrong : ndarray of shape (P, 18), bool
        The filter-(iii) reference answers wrong.
    reference : {"llm", "majority_vote"}
        Which reference filter (iii) used (:data:`REFERENCE_NAMES`).
    other_correct : ndarray of shape (P, 18), bool
        At least one method of :data:`OTHER_FUSION` is correct (soft preference).
    llm_divergence : ndarray of shape (P, 18), bool, optional
        GPT and Gemini (Direct) both answered and disagree; ``None`` without both families.
    """

    dsnbf_correct: np.ndarray
    dsnbf_margin: np.ndarray
    reference_wrong: np.ndarray
    reference: str
    other_correct: np.ndarray
    llm_divergence: np.ndarray | None = None


def _answer_codes(personas: pd.DataFrame, frame: pd.DataFrame, *,
                  value: str | None = None) -> np.ndarray:
    """Codes (P, 18) of the ``answer`` column of a long frame keyed by seed, persona_id and
    question_id: ``-1`` no row, ``-2`` an answer outside the answer space. With ``value``,
    that float column instead (NaN where there is no row)."""
    p = len(personas)
    out = (np.full((p, len(QIDS)), -1, dtype=np.int8) if value is None
           else np.full((p, len(QIDS)), np.nan))
    if frame.empty or p == 0:
        return out
    keys = pd.DataFrame({"seed": personas["seed"].to_numpy().astype(np.int64),
                         "persona_id": personas["persona_id"].astype(str).to_numpy(),
                         "_p": np.arange(p, dtype=np.int64)})
    f = pd.DataFrame({"seed": frame["seed"].to_numpy().astype(np.int64),
                      "persona_id": frame["persona_id"].astype(str).to_numpy(),
                      "_q": frame["question_id"].astype(str).map(Q_INDEX).to_numpy(),
                      "_label": frame["answer"].astype(object).to_numpy()})
    if value is not None:
        f["_value"] = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=float)
    f = f.dropna(subset=["_q"]).merge(keys, on=["seed", "persona_id"], how="inner")
    if f.empty:
        return out
    rows, cols = f["_p"].to_numpy(), f["_q"].to_numpy().astype(np.int64)
    if value is not None:
        out[rows, cols] = f["_value"].to_numpy()
        return out
    lookup = pd.DataFrame(
        [(j, lab, c) for j, q in enumerate(QUESTIONS) for c, lab in enumerate(q.labels)],
        columns=["_q", "_label", "_code"])
    f = f.assign(_q=cols, _label=f["_label"].astype(str)).merge(
        lookup, on=["_q", "_label"], how="left")
    out[f["_p"].to_numpy(), f["_q"].to_numpy()] = f["_code"].fillna(-2).to_numpy(np.int8)
    return out


def resolver_evidence(personas: pd.DataFrame, gt_codes: np.ndarray, predictions: pd.DataFrame,
                      llm_answers: pd.DataFrame | None = None) -> ResolverEvidence | None:
    """Build the §8.7 filter inputs from the store's cached predictions (and LLM answers).

    Parameters
    ----------
    personas : DataFrame
        ``seed`` and ``persona_id`` of P personas, in array order.
    gt_codes : ndarray of shape (P, 18)
        Their ground-truth codes.
    predictions : DataFrame
        Long cached predictions (``method, seed, persona_id, question_id, answer, margin``)
        holding at least ``dsnbf`` and ``majority_vote`` (and ideally :data:`OTHER_FUSION`).
    llm_answers : DataFrame, optional
        Frozen LLM answers of the Direct prompt (``model, seed, persona_id, question_id,
        answer``). Models whose name starts with a :data:`FRONTIER_LLMS` prefix count.

    Returns
    -------
    ResolverEvidence or None
        ``None`` when the predictions lack DSNBF (a store without cached predictions).
    """
    gt = np.asarray(gt_codes)
    if gt.shape != (len(personas), len(QIDS)):
        raise ValueError(f"gt_codes must have shape {(len(personas), len(QIDS))}")
    if predictions.empty or "dsnbf" not in set(predictions["method"]):
        return None

    def of(method: str) -> pd.DataFrame:
        return predictions[predictions["method"] == method]

    dsnbf = _answer_codes(personas, of("dsnbf"))
    margin_ = _answer_codes(personas, of("dsnbf"), value="margin")
    others = [_answer_codes(personas, of(m)) for m in OTHER_FUSION
              if m in set(predictions["method"])]
    other_correct = (np.zeros(gt.shape, bool) if not others
                     else np.any([(o == gt) & (o >= 0) for o in others], axis=0))
    reference, reference_wrong, divergence = "majority_vote", None, None
    llm = llm_answers if llm_answers is not None else pd.DataFrame()
    if len(llm):
        model = llm["model"].astype(str).str.lower()
        families = {fam: llm[model.str.startswith(fam)] for fam in FRONTIER_LLMS}
        codes = {fam: _answer_codes(personas, f) for fam, f in families.items() if len(f)}
        if codes:
            reference = "llm"
            reference_wrong = np.any([(c != -1) & (c != gt) for c in codes.values()], axis=0)
            if len(codes) == len(FRONTIER_LLMS):
                a, b = (codes[f] for f in FRONTIER_LLMS)
                divergence = (a != -1) & (b != -1) & (a != b)
    if reference_wrong is None:
        mv = _answer_codes(personas, of("majority_vote"))
        reference_wrong = (mv != -1) & (mv != gt)
    return ResolverEvidence(dsnbf_correct=(dsnbf >= 0) & (dsnbf == gt), dsnbf_margin=margin_,
                            reference_wrong=reference_wrong, reference=reference,
                            other_correct=other_correct, llm_divergence=divergence)


def select_walkthrough(
    gt_codes: np.ndarray,
    atoms: np.ndarray,
    personas: pd.DataFrame,
    *,
    qid: str | None = None,
    keep_all: bool = False,
    evidence: ResolverEvidence | None = None,
) -> pd.DataFrame:
    """Rank (persona, question) pairs of the test split for the walked-through example.

    Implements the adapted §8.7 protocol described in the module docstring, vectorised over
    personas and questions.

    Parameters
    ----------
    gt_codes : ndarray of shape (P, 18)
        Ground-truth display codes (``ground_truth_codes(tb)[0]``).
    atoms : ndarray of shape (P, 18, 5)
        Direct-readout atoms μ* (``readout(tb)``), ``-1`` = no atom.
    personas : DataFrame with P rows
        Columns ``seed``, ``persona_id`` and ``split`` (``difficulty`` is carried along if
        present), in the same order as the arrays.
    qid : str, optional
        Restrict the pool to one question.
    keep_all : bool, default=False
        Also return the test pairs that fail a hard filter (after the ranked ones, with
        ``rank = -1``), e.g. to show how many each filter removes.
    evidence : ResolverEvidence, optional
        Resolver outputs aligned with ``personas``: adds hard filters (ii), (iii), (v) and the
        soft preferences of the full protocol (module docstring).

    Returns
    -------
    DataFrame
        One row per (persona, question) pair, best first, with columns ``rank`` (1-based;
        ``-1`` for rejected rows), ``seed``, ``persona_id``, ``difficulty``, ``question_id``,
        ``gt`` (the GT code), ``n_sources``, ``f_coverage`` (i), ``f_spread`` (iv),
        ``f_disagree``, ``qualifies``, ``planner_shift``, ``self_shift``, ``n_agree``,
        ``pref_agree``, ``n_prefs`` and ``row`` (the persona's position in the input).
        With ``evidence`` also ``f_dsnbf`` (ii), ``f_reference`` (iii), ``f_margin`` (v),
        ``dsnbf_margin``, ``pref_fusion`` and ``pref_llm`` (cross-family divergence, False
        when unknown). Empty (with these columns) when nothing qualifies.

    Raises
    ------
    ValueError
        On inconsistent shapes, missing persona columns or an unknown ``qid``.
    """
    gt = np.asarray(gt_codes)
    at = np.asarray(atoms)
    p = len(personas)
    if gt.shape != (p, len(QIDS)):
        raise ValueError(f"gt_codes must have shape {(p, len(QIDS))}, got {gt.shape}")
    if at.shape != (p, len(QIDS), len(SOURCES)):
        raise ValueError(f"atoms must have shape {(p, len(QIDS), len(SOURCES))}, got {at.shape}")
    lacking = [c for c in ("seed", "persona_id", "split") if c not in personas.columns]
    if lacking:
        raise ValueError(f"personas lacks columns: {', '.join(lacking)}")
    if qid is None:
        qsel = np.arange(len(QIDS))
    else:
        get_question(qid)  # ValueError naming the question if unknown
        qsel = np.array([Q_INDEX[qid]])

    present = at >= 0                                            # (P, 18, 5)
    n_sources = present.sum(-1)
    required = present[..., _PL] & present[..., _SR] & present[..., _OB]
    f_coverage = (n_sources >= 4) & required
    at16 = at.astype(np.int16)
    lo = np.where(present, at16, np.int16(np.iinfo(np.int16).max)).min(-1)
    hi = np.where(present, at16, np.int16(-1)).max(-1)
    f_spread = present.any(-1) & (lo != hi)
    disagree = present & (at != gt[..., None])
    f_disagree = disagree.any(-1)
    qualifies = f_coverage & f_spread & f_disagree
    planner_shift = _shift_in_bias_direction(at[..., _PL], gt, _PL)
    self_shift = _shift_in_bias_direction(at[..., _SR], gt, _SR)
    n_agree = (present & (at == gt[..., None])).sum(-1)
    pref_agree = n_agree >= 1
    n_prefs = planner_shift.astype(int) + self_shift.astype(int) + pref_agree.astype(int)
    extra: dict[str, np.ndarray] = {}
    if evidence is not None:
        for name in ("dsnbf_correct", "dsnbf_margin", "reference_wrong", "other_correct"):
            if np.shape(getattr(evidence, name)) != gt.shape:
                raise ValueError(f"evidence.{name} must have shape {gt.shape}")
        m = np.asarray(evidence.dsnbf_margin, float)
        lo_m, hi_m = MARGIN_WINDOW
        extra["f_dsnbf"] = np.asarray(evidence.dsnbf_correct, bool)
        extra["f_reference"] = np.asarray(evidence.reference_wrong, bool)
        with np.errstate(invalid="ignore"):
            extra["f_margin"] = np.isfinite(m) & (m >= lo_m) & (m <= hi_m)
        extra["dsnbf_margin"] = m
        extra["pref_llm"] = (np.zeros(gt.shape, bool) if evidence.llm_divergence is None
                             else np.asarray(evidence.llm_divergence, bool))
        extra["pref_fusion"] = np.asarray(evidence.other_correct, bool)
        qualifies = qualifies & extra["f_dsnbf"] & extra["f_reference"] & extra["f_margin"]
        n_prefs = (planner_shift.astype(int) + self_shift.astype(int)
                   + extra["pref_llm"].astype(int) + extra["pref_fusion"].astype(int))

    test = personas["split"].astype(str).to_numpy() == "test"
    rows, cols = np.nonzero(test[:, None] & np.isin(np.arange(len(QIDS)), qsel)[None, :])
    difficulty = (personas["difficulty"].astype(str).to_numpy() if "difficulty" in personas
                  else np.full(p, "", dtype=object))
    out = pd.DataFrame({
        "seed": personas["seed"].to_numpy()[rows].astype(np.int64),
        "persona_id": personas["persona_id"].astype(str).to_numpy()[rows],
        "difficulty": difficulty[rows],
        "question_id": np.asarray(QIDS, dtype=object)[cols],
        "q_order": cols.astype(np.int64),
        "gt": gt[rows, cols].astype(np.int64),
        "n_sources": n_sources[rows, cols].astype(np.int64),
        "f_coverage": f_coverage[rows, cols],
        "f_spread": f_spread[rows, cols],
        "f_disagree": f_disagree[rows, cols],
        "qualifies": qualifies[rows, cols],
        "planner_shift": planner_shift[rows, cols],
        "self_shift": self_shift[rows, cols],
        "n_agree": n_agree[rows, cols].astype(np.int64),
        "pref_agree": pref_agree[rows, cols],
        "n_prefs": n_prefs[rows, cols].astype(np.int64),
        "row": rows.astype(np.int64),
    })
    for name, arr in extra.items():
        out[name] = arr[rows, cols]
    if not keep_all:
        out = out[out["qualifies"]]
    prefs = (["planner_shift", "self_shift", "pref_llm", "pref_fusion"] if extra
             else ["planner_shift", "self_shift", "pref_agree"])
    keys = ["qualifies", "n_prefs", *prefs, "persona_id", "seed", "q_order"]
    out = out.sort_values(
        keys, ascending=[False] * (2 + len(prefs)) + [True, True, True], kind="stable",
    ).reset_index(drop=True)
    rank = np.where(out["qualifies"].to_numpy(), np.arange(1, len(out) + 1), -1)
    out.insert(0, "rank", rank.astype(np.int64))
    return out



# ---------------------------------------------------------------- store frames → arrays
def label_arrays(
    personas: pd.DataFrame,
    ground_truth: pd.DataFrame,
    atoms: pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray]:
    """Turn the store's long label tables back into code arrays aligned with ``personas``.

    Parameters
    ----------
    personas : DataFrame
        ``seed`` and ``persona_id`` of P personas, in array order.
    ground_truth : DataFrame
        Rows ``seed, persona_id, question_id, answer`` (the store's ``ground_truth``).
    atoms : DataFrame
        Rows ``seed, persona_id, question_id, source, value`` of one atom kind (``value``
        missing = no atom).

    Returns
    -------
    gt_codes : ndarray of shape (P, 18), int8
        ``-1`` where a label is missing or unknown.
    atom_codes : ndarray of shape (P, 18, 5), int8
        ``-1`` = no atom.
    """
    p = len(personas)
    keys = pd.DataFrame({"seed": personas["seed"].to_numpy().astype(np.int64),
                         "persona_id": personas["persona_id"].astype(str).to_numpy(),
                         "_p": np.arange(p, dtype=np.int64)})
    lookup = pd.DataFrame(
        [(q.qid, lab, j, c) for j, q in enumerate(QUESTIONS) for c, lab in enumerate(q.labels)],
        columns=["question_id", "_label", "_q", "_code"])

    def codes_of(frame: pd.DataFrame, label_col: str) -> pd.DataFrame:
        f = frame.assign(seed=frame["seed"].to_numpy().astype(np.int64),
                         persona_id=frame["persona_id"].astype(str),
                         question_id=frame["question_id"].astype(str),
                         _label=frame[label_col].astype(object))
        f = f.merge(keys, on=["seed", "persona_id"], how="inner")
        return f.merge(lookup, on=["question_id", "_label"], how="inner")

    gt = np.full((p, len(QIDS)), -1, dtype=np.int8)
    g = codes_of(ground_truth, "answer")
    gt[g["_p"].to_numpy(), g["_q"].to_numpy()] = g["_code"].to_numpy()
    at = np.full((p, len(QIDS), len(SOURCES)), -1, dtype=np.int8)
    a = codes_of(atoms.dropna(subset=["value"]), "value")
    s_index = {s: i for i, s in enumerate(SOURCES)}
    a = a[a["source"].astype(str).isin(s_index)]
    at[a["_p"].to_numpy(), a["_q"].to_numpy(),
       a["source"].astype(str).map(s_index).to_numpy(dtype=np.int64)] = a["_code"].to_numpy()
    return gt, at
