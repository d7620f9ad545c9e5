"""Each source's atom and each resolver's answer to one question, beside the ground truth.

Source: seed 000 §8.6 (stages 6–9 of the walked-through example); the benchmark
specification §2.3 (the bias prior: which way each source leans), §2.4 (which sources are
informative for a question), §2.8 (the ground-truth rules) and §2.9 (the direct readout μ*).

:func:`question_panel` and :func:`resolver_panel` build the Walkthrough's two
per-question panels: display-ready tables and the facts their sentences state, so the page
only draws them. Invariants (``tests/test_walkthrough_panels.py``):

* :class:`QuestionPanel`: one :class:`SourceVerdict` per source, in :data:`SOURCES` order;
  ``n_agree + n_disagree + n_null == 5``; a source agrees iff its atom equals the ground
  truth label.
* :class:`ResolverPanel`: ``0 <= n_forced_right <= n_forced`` and ``0 <= n_abstaining <=
  n_selective``; the table has one row per cached method, in leaderboard order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.evaluation.run import FORCED_METHODS, METHOD_LABELS, SELECTIVE_METHODS
from core.evaluation.walkthrough.selection import bias_rank_table
from core.evaluation.walkthrough.texts import GT_RULES, READOUT_RULES, TOPIC_FIELDS
from core.testbed.questions import (
    BIAS,
    Q_INDEX,
    QIDS,
    QUESTIONS,
    SOURCE_LABELS,
    SOURCES,
    bias_predict,
)
from core.testbed.questions import question as get_question
from core.testbed.vocab import AFTERHOURS_STYLES
from core.testbed.words import label_words

__all__ = [
    "OUTCOME_MARKS",
    "STATUS_MARKS",
    "QuestionPanel",
    "ResolverPanel",
    "SourceVerdict",
    "atom_grid_table",
    "atom_verdicts",
    "plain_number",
    "question_panel",
    "resolver_panel",
    "resolver_table",
]

#: How a verdict reads on the page, by :func:`atom_verdicts` ``status``.
STATUS_MARKS = {"agree": "✓ agrees", "disagree": "✗ disagrees", "null": "∅ no atom"}
#: How an outcome reads on the page, by :func:`resolver_table` ``outcome``.
OUTCOME_MARKS = {"correct": "✓ correct", "wrong": "✗ wrong",
                 "abstains (would be right)": "○ abstains (would be right)",
                 "abstains (would be wrong)": "○ abstains (would be wrong)"}
#: What a split is for, in the sentence of a persona outside the test split.
SPLIT_ROLES = {"train": "the resolvers learn their tables and weights from it",
               "calibration": "the resolvers choose their temperatures and skip thresholds on it",
               "dev": "it is held out and never used"}


def _signed(b: int) -> str:
    """``+1`` / ``0`` / ``−1`` with a true minus sign."""
    return f"{b:+d}".replace("-", "\u2212") if b else "0"


def atom_verdicts(qid: str, gt_code: int, atoms_row: np.ndarray) -> pd.DataFrame:
    """Compare each source's atom with GT for one question, and say whether bias explains it.

    Parameters
    ----------
    qid : str
        Question id.
    gt_code : int
        The GT display code.
    atoms_row : ndarray of shape (5,)
        The μ* codes of the five sources for this question (``-1`` = no atom).

    Returns
    -------
    DataFrame
        One row per source, with ``source``, ``source_label``, ``atom`` (label or ``None``),
        ``status`` (``agree`` / ``disagree`` / ``null``), ``bias`` (−1, 0, +1),
        ``prior_predicts`` (the label the bias prior predicts given GT), ``shift`` (rank
        difference atom − GT in bias-shift order, ``None`` where undefined), ``explained``
        (one sentence) and ``rule`` (the readout rule, spec §2.9, or why there is none).
    """
    q = get_question(qid)
    atoms_row = np.asarray(atoms_row).astype(int)
    if atoms_row.shape != (len(SOURCES),):
        raise ValueError(f"atoms_row must have shape (5,), got {atoms_row.shape}")
    j = Q_INDEX[qid]
    table = bias_rank_table()[j]
    g = int(gt_code)
    labels = q.labels
    records = []
    for s, src in enumerate(SOURCES):
        a = int(atoms_row[s])
        b = int(BIAS[j, s])
        predicted = labels[int(bias_predict(qid, src, np.array([g]))[0])] if g >= 0 else None
        shift = None
        if a >= 0 and g >= 0 and table[a] >= 0 and table[g] >= 0:
            shift = int(table[a]) - int(table[g])
        if a < 0:
            status = "null"
            if src in q.informative:
                why = "no atom: the source had nothing to read for this question"
            else:
                why = ("no atom: this source is not informative for the question (it records "
                       "nothing the question reads)")
        elif a == g:
            status = "agree"
            why = ("agrees with GT" if b == 0 or not q.ordinal
                   else f"agrees with GT: its bias ({_signed(b)}) did not cross a bin boundary")
        else:
            status = "disagree"
            if not q.ordinal:
                why = "disagrees; the question is nominal, so the bias prior has no direction"
            elif shift is None:
                why = "disagrees through an edge label, not a shift along the scale"
            elif b == 0:
                why = ("disagrees although the source has no directional bias: coverage, "
                       "projection or noise (dropped days, proxies, a stale window)")
            elif np.sign(shift) == b:
                why = (f"disagrees in its bias direction ({_signed(b)}): the bias explains "
                       "the shift")
            else:
                why = (f"disagrees against its bias direction ({_signed(b)}): the bias does "
                       "not explain it")
        rule = READOUT_RULES.get((qid, src))
        if rule is None:
            rule = ("not informative for this question: it records nothing the question "
                    "reads" if src not in q.informative
                    else "an edge label, given to every source alike")
        records.append({
            "source": src,
            "source_label": SOURCE_LABELS[src],
            "atom": labels[a] if a >= 0 else None,
            "status": status,
            "bias": b,
            "prior_predicts": predicted,
            "shift": shift,
            "explained": why,
            "rule": rule,
        })
    out = pd.DataFrame.from_records(records)
    out["atom"] = pd.Series([r["atom"] for r in records], dtype=object)
    out["shift"] = pd.array([r["shift"] for r in records], dtype="Int64")
    return out


def atom_grid_table(gt_codes_row: np.ndarray, atoms_row: np.ndarray) -> pd.DataFrame:
    """The 18 × 5 atom grid of one persona beside GT, as labels and statuses (for CSV).

    Parameters
    ----------
    gt_codes_row : ndarray of shape (18,)
    atoms_row : ndarray of shape (18, 5)

    Returns
    -------
    DataFrame
        One row per question: ``question_id``, ``title``, ``gt`` and, per source,
        ``<source>`` (label or empty) and ``<source>_status`` (agree / disagree / null).
    """
    gt = np.asarray(gt_codes_row).astype(int)
    at = np.asarray(atoms_row).astype(int)
    if gt.shape != (len(QIDS),) or at.shape != (len(QIDS), len(SOURCES)):
        raise ValueError(f"expected shapes (18,) and (18, 5), got {gt.shape} and {at.shape}")
    data: dict[str, list] = {"question_id": list(QIDS), "title": [q.title for q in QUESTIONS],
                             "gt": [q.labels[gt[j]] if gt[j] >= 0 else ""
                                    for j, q in enumerate(QUESTIONS)]}
    for s, src in enumerate(SOURCES):
        data[src] = [q.labels[at[j, s]] if at[j, s] >= 0 else "" for j, q in enumerate(QUESTIONS)]
        data[f"{src}_status"] = np.select([at[:, s] < 0, at[:, s] == gt],
                                          ["null", "agree"], "disagree").tolist()
    return pd.DataFrame(data)



def resolver_table(predictions: pd.DataFrame, *, qid: str, gt_label: str,
                   labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Every resolver's answer to one question of one persona, beside GT (stages 8–9).

    Parameters
    ----------
    predictions : DataFrame
        One persona's cached predictions (``method, question_id, answer, confidence,
        skipped, margin``; :func:`core.evaluation.cached.persona_predictions`).
    qid : str
        The question.
    gt_label : str
        Its ground-truth label.
    labels : dict, optional
        Display names of the methods (default ``METHOD_LABELS``).

    Returns
    -------
    DataFrame
        One row per method in leaderboard order: ``method``, ``label``, ``selective``
        (a ``_skip`` variant), ``answer``, ``correct``, ``confidence``, ``skipped``,
        ``margin`` (NaN without a posterior) and ``outcome`` (``correct`` / ``wrong`` /
        ``abstains (would be right|wrong)``).
    """
    get_question(qid)
    names = dict(METHOD_LABELS if labels is None else labels)
    rows = predictions[predictions["question_id"].astype(str) == qid]
    order = {m: i for i, m in enumerate(FORCED_METHODS + SELECTIVE_METHODS)}
    rows = rows.assign(_o=rows["method"].map(order).fillna(len(order))).sort_values("_o")
    out = pd.DataFrame({
        "method": rows["method"].astype(str).to_numpy(),
        "label": [names.get(m, m) for m in rows["method"].astype(str)],
        "selective": rows["method"].astype(str).str.endswith("_skip").to_numpy(),
        "answer": rows["answer"].astype(str).to_numpy(),
        "correct": (rows["answer"].astype(str) == gt_label).to_numpy(),
        "confidence": pd.to_numeric(rows["confidence"], errors="coerce").to_numpy(float),
        "skipped": rows["skipped"].astype(bool).to_numpy(),
        "margin": pd.to_numeric(rows["margin"], errors="coerce").to_numpy(float),
    })
    out["outcome"] = np.where(
        out["skipped"], np.where(out["correct"], "abstains (would be right)",
                                 "abstains (would be wrong)"),
        np.where(out["correct"], "correct", "wrong"))
    return out


# ---------------------------------------------------------------- panels
def plain_number(value: object, *, digits: int = 3) -> str:
    """A statistic as a reader sees it: no ``True``, ``None``, ``nan`` or ``-0.500``.

    Integers as they are, floats rounded to ``digits`` decimals without trailing zeros,
    booleans as yes/no, missing values as a dash, negatives with a true minus sign.

    >>> [plain_number(v) for v in (3, 0.51136, -1.1666, 3.5, True, None, float("nan"))]
    ['3', '0.511', '−1.167', '3.5', 'yes', '—', '—']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        text = str(int(value))
    elif isinstance(value, float | np.floating):
        text = f"{float(value):.{digits}f}".rstrip("0").rstrip(".")
        text = "0" if text in ("-0", "") else text
    else:
        return str(value)
    return text.replace("-", "\u2212")


def _statistic(name: str, value: object) -> tuple[str, str]:
    """(plain name, plain value) of one ground-truth statistic."""
    label = name.replace("_hc", "_home_cooked").replace("_", " ")
    if name == "style":
        code = int(value) if value is not None else -1
        return "after-hours style", (AFTERHOURS_STYLES[code].replace("_", " ")
                                     if 0 <= code < len(AFTERHOURS_STYLES) else "none stated")
    return label, plain_number(value)


@dataclass(frozen=True)
class SourceVerdict:
    """One source's atom for the question, read against the ground truth (stage 7).

    Attributes
    ----------
    source : str
        A name of :data:`SOURCES`.
    informative : bool
        The source records something the question reads (spec §2.4).
    atom : str
        Its atom's label, or ``"⊥"`` for no atom.
    status : {"agree", "disagree", "null"}
    mark : str
        ``status`` as the page prints it (:data:`STATUS_MARKS`).
    bias : str
        Its lean on this question in words ("bias +1", "no directional bias", "nominal
        question").
    explained : str
        Whether that lean explains the atom, in one clause.
    rule : str
        How the atom is read from the source's records (the readout rule).
    """

    source: str
    informative: bool
    atom: str
    status: str
    mark: str
    bias: str
    explained: str
    rule: str


@dataclass(frozen=True)
class QuestionPanel:
    """What the Walkthrough shows of one question for one persona (header and stage 7).

    Attributes
    ----------
    qid, title, topic, text : str
        The question.
    window : int
        Days the question looks back.
    kind : {"ordinal", "nominal"}
    labels : tuple of str
        Its answer space.
    gt_label : str
        This persona's ground truth.
    rule : str
        The ground-truth rule in words (spec §2.8).
    detail : str
        The rule applied to this persona (the label function's derivation).
    stats : DataFrame
        ``statistic``, ``value``: the rule's inputs for this persona, as plain text.
    verdicts : tuple of SourceVerdict
        One per source, in :data:`SOURCES` order.
    topic_fields : str
        The latent fields the topic's timeline shows, comma-separated.
    n_agree, n_disagree, n_null : int
        How many sources agree with, disagree with, or give no atom.
    """

    qid: str
    title: str
    topic: str
    text: str
    window: int
    kind: str
    labels: tuple[str, ...]
    gt_label: str
    rule: str
    detail: str
    stats: pd.DataFrame
    verdicts: tuple[SourceVerdict, ...]
    topic_fields: str
    n_agree: int
    n_disagree: int
    n_null: int

    def words(self, label: str) -> str:
        """An answer label of this question in words ("no atom" for ⊥); the page shows these,
        never the stored label (:func:`core.testbed.words.label_words`)."""
        return "no atom" if label == "⊥" else label_words(self.qid, label)

    @property
    def gt_words(self) -> str:
        """The ground truth in words."""
        return self.words(self.gt_label)


def question_panel(*, qid: str, gt_code: int, atoms_row: np.ndarray,
                   stats: Mapping[str, object], detail: str) -> QuestionPanel:
    """The question panel of one persona: its rule, statistics and every source's verdict.

    Parameters
    ----------
    qid : str
        The question.
    gt_code : int
        The persona's ground-truth display code (``>= 0``).
    atoms_row : ndarray of shape (5,)
        The μ* codes of the five sources for this question (``-1`` = no atom).
    stats : mapping
        The rule's statistics for this persona (name → Python scalar).
    detail : str
        The label function's derivation string for this persona and question.

    Raises
    ------
    ValueError
        For an unknown question, a ground-truth code outside its answer space or a wrong
        ``atoms_row`` shape.
    """
    q = get_question(qid)
    if not 0 <= int(gt_code) < len(q.labels):
        raise ValueError(f"gt_code {gt_code} is outside {qid}'s answer space "
                         f"(0–{len(q.labels) - 1})")
    v = atom_verdicts(qid, int(gt_code), atoms_row)
    verdicts = []
    for row in v.itertuples(index=False):
        bias = ("nominal question" if not q.ordinal else "no directional bias"
                if row.bias == 0 else f"bias {row.bias:+d}".replace("-", "\u2212"))
        verdicts.append(SourceVerdict(
            source=row.source, informative=row.source in q.informative,
            atom=row.atom if row.atom is not None else "⊥", status=row.status,
            mark=STATUS_MARKS[row.status], bias=bias, explained=row.explained, rule=row.rule))
    pairs = [_statistic(k, val) for k, val in stats.items()]
    status = v["status"].value_counts()
    return QuestionPanel(
        qid=qid, title=q.title, topic=q.topic, text=q.text, window=int(q.window),
        kind="ordinal" if q.ordinal else "nominal", labels=tuple(q.labels),
        gt_label=q.labels[int(gt_code)], rule=GT_RULES[qid], detail=str(detail),
        stats=pd.DataFrame({"statistic": [p[0] for p in pairs],
                            "value": [p[1] for p in pairs]}),
        verdicts=tuple(verdicts),
        topic_fields=", ".join(label for _, label in TOPIC_FIELDS[q.topic]),
        n_agree=int(status.get("agree", 0)), n_disagree=int(status.get("disagree", 0)),
        n_null=int(status.get("null", 0)))


@dataclass(frozen=True)
class ResolverPanel:
    """Every resolver's answer to one question of one persona (stages 8–9).

    Attributes
    ----------
    qid, gt_label : str
    status : {"answers", "not_test", "no_predictions"}
        ``answers`` when the table is filled; ``not_test`` for a persona outside the test
        split (resolvers answer test personas only); ``no_predictions`` for a store without
        cached predictions.
    split : str
        The persona's split.
    split_role : str
        What that split is for, in words (empty for the test split).
    table : DataFrame
        Display-ready, one row per method in leaderboard order: ``label`` (the resolver),
        ``answer`` (in words, :func:`core.testbed.words.label_words`), ``outcome`` (marked,
        :data:`OUTCOME_MARKS`), ``confidence`` (float in [0, 1]) and ``margin`` (text, "—"
        without a posterior).
    n_forced, n_forced_right : int
        Forced methods (Source Reachability, a ground-truth-aided ceiling, left out) and
        how many of them answer right.
    n_selective, n_abstaining : int
        Selective (+SKIP) variants and how many of them abstain.
    dsnbf_margin : float or None
        DSNBF's posterior margin p(top1) − p(top2), if known.
    """

    qid: str
    gt_label: str
    status: str
    split: str
    split_role: str
    table: pd.DataFrame
    n_forced: int = 0
    n_forced_right: int = 0
    n_selective: int = 0
    n_abstaining: int = 0
    dsnbf_margin: float | None = None


def resolver_panel(predictions: pd.DataFrame | None, *, qid: str, gt_label: str,
                   split: str) -> ResolverPanel:
    """The resolver panel: :func:`resolver_table` made display-ready, with its counts.

    Parameters
    ----------
    predictions : DataFrame or None
        The persona's cached predictions (:func:`core.evaluation.cached.persona_predictions`);
        ignored (may be ``None``) outside the test split.
    qid, gt_label : str
        The question and its ground-truth label.
    split : str
        The persona's split.
    """
    get_question(qid)
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in
                          ("label", "answer", "outcome", "confidence", "margin")})
    if split != "test":
        return ResolverPanel(qid=qid, gt_label=gt_label, status="not_test", split=split,
                             split_role=SPLIT_ROLES.get(split, ""), table=empty)
    if predictions is None or predictions.empty:
        return ResolverPanel(qid=qid, gt_label=gt_label, status="no_predictions",
                             split=split, split_role="", table=empty)
    answers = resolver_table(predictions, qid=qid, gt_label=gt_label)
    forced = answers[~answers["selective"] & (answers["method"] != "source_reachability")]
    selective = answers[answers["selective"]]
    margin = answers.loc[answers["method"] == "dsnbf", "margin"]
    dsnbf = float(margin.iloc[0]) if len(margin) and np.isfinite(margin.iloc[0]) else None
    known = set(get_question(qid).labels)
    table = pd.DataFrame({
        "label": answers["label"],
        "answer": [label_words(qid, a) if a in known else a for a in answers["answer"]],
        "outcome": answers["outcome"].map(OUTCOME_MARKS).fillna(answers["outcome"]),
        "confidence": answers["confidence"],
        "margin": ["—" if not np.isfinite(m) else f"{m:.2f}" for m in answers["margin"]],
    })
    return ResolverPanel(
        qid=qid, gt_label=gt_label, status="answers", split=split, split_role="",
        table=table.reset_index(drop=True), n_forced=len(forced),
        n_forced_right=int(forced["correct"].sum()), n_selective=len(selective),
        n_abstaining=int(selective["skipped"].sum()), dsnbf_margin=dsnbf)
