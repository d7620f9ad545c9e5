"""The real NQ-open case of seed 003 §5.1: 12 QA systems, exact match (Z) against humans (Y).

Sources: seed 003 §5.1 "A Released NQ-open
Pipeline Reverses Its Ranking" (the 12-system release: "1,490 human-labelled answers …
cross-system agreement has AUROC .663 and CORP discrimination component (DSC) .0302 … The
crossover criterion correctly classifies all 13 reversals and 8 non-reversals among 21 pairs"),
§3 Eq. 1–3, §5.2 (the crossover (a + b)/2), §5.5 (pilots at 50 labels);
the label-source notes; the data of ehsk/OpenQA-eval (Kamalloo, Dziri,
Clarke & Rafiei, ACL 2023; MIT licence) in ``data/nq301/``.

Conventions
-----------
* **Normalisation** is SQuAD's (:func:`normalize_answer`): lower case, delete ASCII punctuation
  (``string.punctuation``; typographic quotes such as ’ stay), delete the whole words a/an/the,
  collapse whitespace. No other leniency (no number or spelling variants).
* **Z** (the finite reference): 1 iff the normalised answer equals one of the normalised gold
  answers of the question (the JSONL ``answer`` list; where system files disagree — one adds
  repaired spellings of mis-decoded UTF-8 gold answers — their union); unmatched = false.
* **Y** (adjudicated truth): the ``Acceptable?`` column of ``NQ301_human.tsv`` (Yes → 1). The
  ``Acceptable?`` columns of the judge files are the *judges'* verdicts, not the human label.
* **Q** (three frozen automatic judges, confidence-blind): BEM = max over gold answers of
  p(equivalent) (second entry of each pair of ``BEM probs per gold answer``); GPT-4 and
  InstructGPT (text-davinci-003) = 1 if the judge's free text starts with "Yes" (case-
  insensitive, after stripping), else 0 (also for "I cannot determine …").
* **Systems**: the 10 retriever–reader files ``NQ_*.jsonl`` restricted to the 301 annotated
  questions and the two InstructGPT files (zero-shot, few-shot). A list-valued few-shot
  prediction is read as its first element (the release's human file lists the first element).
* **Items** (:func:`nq301_answers`): the 1,490 rows of ``NQ301_human.tsv`` — the seed's
  "1,490 human-labelled answers". They hold 1,489 distinct raw (question, answer) strings (one
  exact duplicate row, question 228 "1991") and 1,362 distinct normalised answers; rows sharing a
  normalised answer keep their own human label (two such groups disagree).
* **Cross-system agreement** of an answer: the share of the 12 systems whose normalised
  prediction to that question equals the answer's normalised form (0 for the 40 labelled answers
  that none of the released predictions reproduces — the release's labels were collected on
  slightly different system runs).
* **Joining** a system's prediction to a human label: question text plus raw answer string
  first, then question text plus normalised answer (the first labelled row in file order if
  several share it). Judges are joined to the labelled rows the same way (same row position
  preferred). Every row that cannot be joined is listed in ``frame.attrs["skipped"]``; other
  facts about the join in ``frame.attrs["notes"]``.
* Brier gaps are ``R(A) − R(B)`` (negative favours A) as in Eq. 1
  (:func:`core.calibration.label_source.label_source_decomposition`); the pilots' paired
  difference is ``d = S(B) − S(A)`` (negative favours B) as in Eq. 3
  (:mod:`core.calibration.restore`).
* Unit weights throughout; clusters are questions.

Pairs of rules and the crossover criterion are in :mod:`core.calibration.nq301_rules`, the
pilots on the real answers in :mod:`core.calibration.nq301_pilot`.
"""

from __future__ import annotations

import csv
import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.calibration.corp import corp_decomposition
from core.calibration.scores import auroc

__all__ = [
    "JUDGES",
    "SEED_003_NQ301",
    "SYSTEM_FILES",
    "AgreementAUROC",
    "Seed003NQ301",
    "agreement_auroc",
    "load_nq301",
    "normalize_answer",
    "nq301_answers",
    "nq301_to_store",
    "prevalence_shift",
    "system_accuracy",
]


@dataclass(frozen=True)
class Seed003NQ301:
    """Figures seed 003 reports for this release (§5.1) and, for comparison, its Table 1.

    Table 1 is a *different* pipeline (Si et al.'s DPR–BERT with released logits, not shipped
    here); its exact-match and human accuracies are the closest the seed gets to per-system
    figures.
    """

    n_answers: int = 1490
    n_questions: int = 301
    n_systems: int = 12
    auroc_agreement: float = 0.663
    dsc_agreement: float = 0.0302
    n_pairs: int = 21
    reversals: int = 13
    non_reversals: int = 8
    reversals_both_intervals_exclude_zero: int = 12
    table1_em_accuracy: float = 115 / 301
    table1_human_accuracy: float = 160 / 301
    table1_em_negatives_human_correct: float = 51 / 186
    table1_em_positives_human_incorrect: float = 6 / 115


#: Seed 003 §5.1 figures (immutable).
SEED_003_NQ301 = Seed003NQ301()

#: System name → JSONL file under ``data/model_outputs`` (the 12 systems, in frame order).
SYSTEM_FILES: tuple[tuple[str, str], ...] = (
    ("ANCE-plus_FiD", "NQ_ANCE-plus_FiD.jsonl"),
    ("Contriever_FiD", "NQ_Contriever_FiD.jsonl"),
    ("DPR", "NQ_DPR.jsonl"),
    ("EMDR2", "NQ_EMDR2.jsonl"),
    ("EviGen", "NQ_EviGen.jsonl"),
    ("FiD", "NQ_FiD.jsonl"),
    ("FiD-KD", "NQ_FiD-KD.jsonl"),
    ("GAR-plus_FiD", "NQ_GAR-plus_FiD.jsonl"),
    ("R2D2", "NQ_R2D2.jsonl"),
    ("Rocketv2_FiD", "NQ_Rocketv2_FiD.jsonl"),
    ("InstructGPT_zeroshot", "NQ301_text-davinci-003_zeroshot.jsonl"),
    ("InstructGPT_fewshot", "NQ301_text-davinci-003_fewshot-n64.jsonl"),
)

#: Judge columns of the item frame, in the order of ``q_1, q_2, q_3``.
JUDGES: tuple[str, ...] = ("bem", "gpt4", "instructgpt")

_HUMAN = "NQ301_human.tsv"
_BEM = "NQ301_BEM.tsv"
_GPT4 = "NQ301_gpt-4.tsv"
_DAVINCI = "NQ301_text-davinci-003.tsv"
_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


# --------------------------------------------------------------------------------------------
# normalisation and reading


def normalize_answer(text: str) -> str:
    """SQuAD answer normalisation: lower, drop punctuation, drop a/an/the, collapse spaces.

    Examples
    --------
    >>> normalize_answer("The Washington Metropolitan Area.")
    'washington metropolitan area'
    >>> normalize_answer("` ` Downloaded''")
    'downloaded'
    """
    s = str(text).lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _fail(path: Path, what: str) -> ValueError:
    msg = f"NQ301 input {path}: {what}".replace("\n", " ").replace("\r", " ")
    return ValueError(msg)


def _data_dir(root) -> Path:
    root = Path(root)
    return root / "data" if (root / "data").is_dir() else root


def _read_tsv(path: Path, required: Sequence[str], *, min_fields: int | None = None
              ) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a TSV; rows shorter than the required columns are malformed."""
    if not path.is_file():
        raise _fail(path, "file is missing")
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t", quotechar='"'))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _fail(path, f"cannot be parsed as a tab-separated file ({exc})") from None
    if not rows:
        raise _fail(path, "file is empty")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise _fail(path, f"header lacks column(s) {missing}")
    need = min_fields if min_fields is not None else max(header.index(c) for c in required) + 1
    body = []
    for k, row in enumerate(rows[1:], start=2):
        if not row or all(not f.strip() for f in row):
            continue
        if len(row) < need:
            raise _fail(path, f"row {k} has {len(row)} fields, expected at least {need}")
        body.append(row)
    if not body:
        raise _fail(path, "file has no data rows")
    return header, body


def _int(path: Path, value: str, row: int) -> int:
    try:
        return int(value)
    except ValueError:
        raise _fail(path, f"row {row}: id {value!r} is not an integer") from None


def _verdict(text: str) -> float:
    return 1.0 if text.strip().lower().startswith("yes") else 0.0


@dataclass(frozen=True, eq=False)
class _Release:
    rows: pd.DataFrame  # the human file, one row per labelled answer, judges attached
    notes: tuple[str, ...]
    skipped: tuple[str, ...]
    bem_gold: dict  # question -> the BEM file's " | "-joined gold answers


def _match_rows(release: pd.DataFrame, judge: list[tuple[str, str, float]], name: str,
                skipped: list[str]) -> np.ndarray:
    """Judge value per release row (NaN if unmatched): exact, then normalised, row order first."""
    exact: dict[tuple[str, str], list[int]] = {}
    normd: dict[tuple[str, str], list[int]] = {}
    for j, (q, a, _) in enumerate(judge):
        exact.setdefault((q, a), []).append(j)
        normd.setdefault((q, normalize_answer(a)), []).append(j)
    used = np.zeros(len(judge), bool)
    out = np.full(len(release), np.nan)
    for i, (q, a, n) in enumerate(zip(release["question"], release["answer"],
                                      release["answer_norm"], strict=True)):
        cands = exact.get((q, a)) or normd.get((q, n)) or []
        if not cands:
            skipped.append(f"{name}: no judgement for labelled answer {i} "
                           f"(question {int(release['qid'].iat[i])}, {a!r})")
            continue
        free = [c for c in cands if not used[c]] or cands
        pick = i if i in free else free[0]
        used[pick] = True
        out[i] = judge[pick][2]
    for j in np.flatnonzero(~used):
        skipped.append(f"{name}: judgement row {j + 2} ({judge[j][1]!r}) matches no labelled "
                       "answer")
    return out


def _read_release(data: Path) -> _Release:
    notes: list[str] = []
    skipped: list[str] = []
    # human labels
    path = data / _HUMAN
    header, body = _read_tsv(path, ("id", "Question", "Model answer", "Acceptable?"))
    ix = {c: header.index(c) for c in ("id", "Question", "Model answer", "Acceptable?")}
    qids, qs, ans, ys = [], [], [], []
    q_of_id: dict[int, str] = {}
    for k, row in enumerate(body, start=2):
        qid = _int(path, row[ix["id"]], k)
        q = row[ix["Question"]]
        lab = row[ix["Acceptable?"]].strip()
        if lab not in ("Yes", "No"):
            raise _fail(path, f"row {k}: Acceptable? is {lab!r}, expected Yes or No")
        if q_of_id.setdefault(qid, q) != q:
            raise _fail(path, f"row {k}: id {qid} names two different questions")
        qids.append(qid)
        qs.append(q)
        ans.append(row[ix["Model answer"]])
        ys.append(1 if lab == "Yes" else 0)
    if len(set(q_of_id.values())) != len(q_of_id):
        raise _fail(path, "one question text carries several ids")
    rel = pd.DataFrame({"qid": np.asarray(qids, np.int64), "question": qs, "answer": ans,
                        "answer_norm": [normalize_answer(a) for a in ans],
                        "y": np.asarray(ys, np.int64)})
    dup = rel.duplicated(["qid", "answer"], keep="first")
    if dup.any():
        notes.append(f"{_HUMAN}: {len(rel)} labelled rows, {len(rel) - int(dup.sum())} distinct "
                     f"raw (question, answer) strings (duplicate rows kept: "
                     f"{rel.loc[dup, ['qid', 'answer']].to_records(index=False).tolist()})")
    conflicts = rel.groupby(["qid", "answer_norm"])["y"].nunique()
    conflicts = conflicts[conflicts > 1]
    if len(conflicts):
        notes.append(f"{_HUMAN}: {len(conflicts)} normalised answers carry both labels on "
                     f"different raw strings: {list(conflicts.index)}; each row keeps its own")
    # BEM
    path = data / _BEM
    header, body = _read_tsv(path, ("Question", "Model answer", "BEM probs per gold answer"))
    iq, ia, ip = (header.index(c) for c in ("Question", "Model answer",
                                            "BEM probs per gold answer"))
    ig = header.index("Gold answers") if "Gold answers" in header else None
    bem, bem_gold = [], {}
    for k, row in enumerate(body, start=2):
        try:
            pairs = json.loads(row[ip])
            p = max(float(pr[1]) for pr in pairs)
        except (ValueError, TypeError, IndexError):
            raise _fail(path, f"row {k}: BEM probabilities {row[ip][:40]!r} are malformed"
                        ) from None
        if not 0.0 <= p <= 1.0:
            raise _fail(path, f"row {k}: BEM probability {p} outside [0, 1]")
        bem.append((row[iq], row[ia], p))
        if ig is not None:
            bem_gold.setdefault(row[iq], row[ig])
    # GPT-4
    path = data / _GPT4
    header, body = _read_tsv(path, ("Question", "Model answer", "gpt-4"))
    iq, ia, iv = (header.index(c) for c in ("Question", "Model answer", "gpt-4"))
    gpt4 = [(row[iq], row[ia], _verdict(row[iv])) for row in body]
    # InstructGPT: the release's rows run question and answer together (4 fields, not 5)
    path = data / _DAVINCI
    header, body = _read_tsv(path, ("id", "Question", "Model answer", "text-davinci-003"),
                             min_fields=4)
    merged = 0
    davinci = []
    for k, row in enumerate(body, start=2):
        qid = _int(path, row[0], k)
        if len(row) >= 5:
            q, a, text = row[1], row[2], row[4]
        elif len(row) == 4:
            q = q_of_id.get(qid)
            if q is None or not row[1].startswith(q):
                skipped.append(f"{_DAVINCI}: row {k} (id {qid}) does not start with the "
                               "question of its id")
                continue
            q, a, text = q, row[1][len(q):], row[3]
            merged += 1
        else:  # pragma: no cover - _read_tsv already requires 4 fields
            raise _fail(path, f"row {k} has {len(row)} fields")
        davinci.append((q, a, _verdict(text)))
    if merged:
        notes.append(f"{_DAVINCI}: {merged} rows run question and answer together (4 fields); "
                     "split at the question text of their id")
    for name, judge in (("bem", bem), ("gpt4", gpt4), ("instructgpt", davinci)):
        rel[name] = _match_rows(rel, judge, name, skipped)
    return _Release(rows=rel, notes=tuple(notes), skipped=tuple(skipped), bem_gold=bem_gold)


def _read_predictions(data: Path, questions: set[str], notes: list[str], skipped: list[str]):
    out = []
    golds: dict[str, tuple[str, ...]] = {}
    gold_conflicts: set[str] = set()
    for system, fname in SYSTEM_FILES:
        path = data / "model_outputs" / fname
        if not path.is_file():
            raise _fail(path, "file is missing")
        seen: set[str] = set()
        lists = 0
        try:
            fh = path.open(encoding="utf-8")
        except OSError as exc:  # pragma: no cover
            raise _fail(path, f"cannot be read ({exc})") from None
        with fh:
            for k, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    q, gold, pred = rec["question"], rec["answer"], rec["prediction"]
                except (ValueError, KeyError, TypeError):
                    raise _fail(path, f"line {k} is not a JSON object with question, answer "
                                "and prediction") from None
                if not isinstance(q, str) or not isinstance(gold, list) or not all(
                        isinstance(g, str) for g in gold):
                    raise _fail(path, f"line {k}: question must be a string and answer a list "
                                "of strings")
                if q not in questions:
                    continue
                if isinstance(pred, list):
                    if not pred or not all(isinstance(p, str) for p in pred):
                        raise _fail(path, f"line {k}: prediction list must hold strings")
                    pred = pred[0]
                    lists += 1
                elif not isinstance(pred, str):
                    raise _fail(path, f"line {k}: prediction must be a string or a list")
                if q in seen:
                    skipped.append(f"{system}: repeated question {q!r} (line {k}) ignored")
                    continue
                seen.add(q)
                have = golds.setdefault(q, tuple(gold))
                extra = tuple(g for g in gold if g not in have)
                if extra:
                    golds[q] = have + extra
                    gold_conflicts.add(q)
                out.append((system, q, pred))
        if lists:
            notes.append(f"{system}: {lists} list-valued predictions read as their first element")
        for q in sorted(questions - seen):
            skipped.append(f"{system}: no prediction for annotated question {q!r}")
    if gold_conflicts:
        notes.append(f"{len(gold_conflicts)} questions have gold lists that differ between "
                     "system files (one file adds repaired spellings of mis-decoded UTF-8 "
                     "answers); Z uses the union")
    return out, golds


def load_nq301(root) -> pd.DataFrame:
    """Load the release: one row per (question, system) with Z, Y, Q and agreement.

    Parameters
    ----------
    root : path-like
        The release directory (``nq301-openqa-eval``) or its ``data`` subdirectory.

    Returns
    -------
    DataFrame
        3,612 rows (301 questions × 12 systems) with columns ``qid, question, system, family,
        prediction, answer_norm, gold`` (normalised gold answers joined by " | "), ``z`` (exact
        match), ``y`` (human label; NaN if the prediction matches no labelled answer),
        ``item`` (row of the labelled answer, −1 if none), ``join`` ("exact", "normalised" or
        "none"), ``bem, gpt4, instructgpt`` (the judges of that labelled answer; NaN if none),
        ``agreement`` (share of the 12 systems giving the same normalised answer) and
        ``n_agree``. ``attrs``: ``nq301_root`` (the data directory), ``skipped`` and
        ``notes`` (tuples of one-line strings: rows that could not be joined, and other facts).

    Raises
    ------
    ValueError
        One line naming the file, if an input is missing or malformed.

    Notes
    -----
    Seed 003 §5.1: "The release covers eleven more systems and 1,490 human-labelled answers";
    conventions in the module docstring. The release's labels were collected on slightly
    different runs of some systems (notably EMDR2 and DPR), so a few predictions match no
    labelled answer; they keep Z and agreement but have no Y (listed in ``attrs["skipped"]``).
    """
    data = _data_dir(root)
    release = _read_release(data)
    bem_gold = release.bem_gold
    rel = release.rows
    notes = list(release.notes)
    skipped = list(release.skipped)
    preds, golds = _read_predictions(data, set(rel["question"]), notes, skipped)
    missing_q = sorted(set(rel["question"]) - set(golds))
    if missing_q:
        raise _fail(data / "model_outputs", f"no system answers {len(missing_q)} annotated "
                    f"question(s), e.g. {missing_q[0]!r}")
    gold_norm = {q: tuple(dict.fromkeys(normalize_answer(g) for g in gs)) for q, gs in
                 golds.items()}
    bem_diff = sum(1 for q, g in bem_gold.items() if q in golds
                   and g != " | ".join(golds[q]))
    if bem_diff:
        notes.append(f"{_BEM}: {bem_diff} questions list gold answers that differ from the "
                     "JSONL gold lists; the JSONL lists define Z")
    qid_of = dict(zip(rel["question"], rel["qid"], strict=False))
    exact: dict[tuple[str, str], int] = {}
    normd: dict[tuple[str, str], int] = {}
    for i, (q, a, n) in enumerate(zip(rel["question"], rel["answer"], rel["answer_norm"],
                                      strict=True)):
        exact.setdefault((q, a), i)
        normd.setdefault((q, n), i)
    family = {s: ("InstructGPT" if s.startswith("InstructGPT") else "retriever-reader")
              for s, _ in SYSTEM_FILES}
    order = {s: k for k, (s, _) in enumerate(SYSTEM_FILES)}
    rows = []
    for system, q, pred in preds:
        n = normalize_answer(pred)
        if (q, pred) in exact:
            item, how = exact[(q, pred)], "exact"
        elif (q, n) in normd:
            item, how = normd[(q, n)], "normalised"
        else:
            item, how = -1, "none"
            skipped.append(f"{system}: prediction {pred!r} to question {qid_of[q]} matches no "
                           "labelled answer (no Y)")
        rows.append((qid_of[q], q, system, family[system], pred, n,
                     " | ".join(gold_norm[q]), int(n in gold_norm[q]), item, how))
    frame = pd.DataFrame(rows, columns=["qid", "question", "system", "family", "prediction",
                                        "answer_norm", "gold", "z", "item", "join"])
    frame["qid"] = frame["qid"].astype(np.int64)
    frame["z"] = frame["z"].astype(np.int64)
    frame["item"] = frame["item"].astype(np.int64)
    item = frame["item"].to_numpy()
    has = item >= 0
    for col in ("y", *JUDGES):
        vals = rel[col].to_numpy(float)
        frame[col] = np.where(has, vals[np.where(has, item, 0)], np.nan)
    n_sys = len(SYSTEM_FILES)
    frame["n_agree"] = frame.groupby(["qid", "answer_norm"])["system"].transform("size").astype(
        np.int64)
    frame["agreement"] = frame["n_agree"] / n_sys
    frame["_o"] = frame["system"].map(order)
    frame = frame.sort_values(["qid", "_o"], kind="stable").drop(columns="_o").reset_index(
        drop=True)
    frame.attrs["nq301_root"] = str(data)
    frame.attrs["skipped"] = tuple(skipped)
    frame.attrs["notes"] = tuple(notes)
    return frame


def nq301_answers(frame: pd.DataFrame, *, root=None) -> pd.DataFrame:
    """The 1,490 human-labelled answers with Y, Z, Q and cross-system agreement (pilot frame).

    Parameters
    ----------
    frame : DataFrame
        The output of :func:`load_nq301` (gives the agreement of every answer).
    root : path-like, optional
        The release; defaults to ``frame.attrs["nq301_root"]``.

    Returns
    -------
    DataFrame
        One row per row of ``NQ301_human.tsv``: ``item, qid, question, answer, answer_norm,
        gold, y, z, bem, gpt4, instructgpt`` (NaN where a judge file has no matching row),
        ``q_1, q_2, q_3`` (the judges with a missing judgement replaced by the item's Z, so it
        adds nothing to the control variate of Eq. 3), ``agreement, n_agree, n_systems,
        systems`` (";"-joined names of the systems giving that normalised answer), ``weight``
        (1) and ``cluster`` (the question id). ``attrs``: ``skipped`` and ``notes`` of the join.

    Notes
    -----
    1,490 rows, as seed 003 §5.1 counts them; 1,489 distinct raw strings (one duplicated row)
    and 1,362 distinct normalised answers (see the module docstring).
    """
    path = root if root is not None else frame.attrs.get("nq301_root")
    if path is None:
        raise ValueError("frame carries no attrs['nq301_root']; pass root= (the release)")
    data = _data_dir(path)
    release = _read_release(data)
    items = release.rows.copy()
    items.insert(0, "item", np.arange(len(items), dtype=np.int64))
    gold = frame.groupby("qid")["gold"].first()
    items["gold"] = items["qid"].map(gold)
    if items["gold"].isna().any():
        raise ValueError("frame lacks predictions for some labelled questions")
    gold_sets = {q: set(g.split(" | ")) for q, g in gold.items()}
    items["z"] = np.array([int(n in gold_sets[q]) for q, n in
                           zip(items["qid"], items["answer_norm"], strict=True)], np.int64)
    grp = frame.groupby(["qid", "answer_norm"])["system"]
    count = grp.size()
    names = grp.agg(lambda s: ";".join(s))
    key = pd.MultiIndex.from_arrays([items["qid"], items["answer_norm"]])
    n_sys = int(frame["system"].nunique())
    items["n_agree"] = count.reindex(key).fillna(0).to_numpy(np.int64)
    items["n_systems"] = np.int64(n_sys)
    items["agreement"] = items["n_agree"] / n_sys
    items["systems"] = names.reindex(key).fillna("").to_numpy(object).astype(str)
    z = items["z"].to_numpy(float)
    for k, name in enumerate(JUDGES, start=1):
        v = items[name].to_numpy(float)
        items[f"q_{k}"] = np.where(np.isnan(v), z, v)
    items["weight"] = 1.0
    items["cluster"] = items["qid"]
    cols = ["item", "qid", "question", "answer", "answer_norm", "gold", "y", "z", *JUDGES,
            "q_1", "q_2", "q_3", "agreement", "n_agree", "n_systems", "systems", "weight",
            "cluster"]
    items = items[cols]
    unrep = int((items["n_agree"] == 0).sum())
    items.attrs["skipped"] = release.skipped
    items.attrs["notes"] = release.notes + (
        f"{unrep} labelled answers are given by none of the {n_sys} released predictions "
        "(agreement 0)",)
    return items


# --------------------------------------------------------------------------------------------
# descriptive analyses


def _shift_row(level: str, unit: str, y, z, z_all) -> dict:
    y = np.asarray(y, float)
    z = np.asarray(z, float)
    lab = ~np.isnan(y)
    yl, zl = y[lab], z[lab]
    n0, n1 = np.sum(zl == 0), np.sum(zl == 1)
    return dict(level=level, unit=unit, n=int(len(z_all)), n_labelled=int(lab.sum()),
                prevalence_z=float(zl.mean()), prevalence_y=float(yl.mean()),
                shift=float(yl.mean() - zl.mean()),
                prevalence_z_all=float(np.mean(z_all)),
                p_y1_given_z0=float(np.sum((yl == 1) & (zl == 0)) / n0) if n0 else np.nan,
                p_y0_given_z1=float(np.sum((yl == 0) & (zl == 1)) / n1) if n1 else np.nan,
                share_z1_y0=float(np.mean((zl == 1) & (yl == 0))),
                share_z0_y1=float(np.mean((zl == 0) & (yl == 1))))


def prevalence_shift(frame: pd.DataFrame, *, items: pd.DataFrame | None = None) -> pd.DataFrame:
    """E[Z] against E[Y]: over the labelled answers, over all predictions and per system.

    Parameters
    ----------
    frame : DataFrame
        :func:`load_nq301`.
    items : DataFrame, optional
        :func:`nq301_answers` (computed from ``frame`` if omitted).

    Returns
    -------
    DataFrame
        Rows ``answers`` (the 1,490 items), ``predictions`` (the 3,612 system predictions) and
        one per system; columns ``level, unit, n, n_labelled, prevalence_z, prevalence_y,
        shift`` (E[Y] − E[Z], both over the labelled rows), ``prevalence_z_all`` (E[Z] over all
        rows), ``p_y1_given_z0`` (unmatched but true), ``p_y0_given_z1`` (matched but false),
        ``share_z1_y0, share_z0_y1``.

    Notes
    -----
    Seed 003 §5.1/§5.2: omission acts through prevalence collapse ("unmatched does not mean
    false"); its Table 1 (another pipeline) has 115/301 exact against 160/301 human.
    """
    if items is None:
        items = nq301_answers(frame)
    rows = [_shift_row("answers", "labelled answer", items["y"], items["z"], items["z"]),
            _shift_row("predictions", "system prediction", frame["y"], frame["z"], frame["z"])]
    for system, _ in SYSTEM_FILES:
        sub = frame[frame["system"] == system]
        if len(sub):
            rows.append(_shift_row(system, "system prediction", sub["y"], sub["z"], sub["z"]))
    return pd.DataFrame(rows)


def system_accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    """Each system's accuracy under exact match and under humans, both rankings, rank changes.

    Parameters
    ----------
    frame : DataFrame
        :func:`load_nq301`.

    Returns
    -------
    DataFrame
        One row per system: ``system, family, n, n_labelled, em_accuracy`` (all 301 questions),
        ``em_accuracy_labelled`` and ``human_accuracy`` (the predictions with a human label),
        ``gain`` (human − exact match on the same predictions), ``rank_em`` (by
        ``em_accuracy``), ``rank_human``, ``rank_change`` (``rank_em − rank_human``; positive =
        the system moves up under human judgement). Rank 1 is best; ties share the best rank.
        Sorted by ``rank_human``.

    Notes
    -----
    Seed 003 §5.1 ("the failure recurs at the system level", citing Kamalloo et al.'s audits);
    the seed gives no per-system NQ figures.
    """
    rows = []
    for system, _ in SYSTEM_FILES:
        sub = frame[frame["system"] == system]
        if not len(sub):
            continue
        lab = sub["y"].notna().to_numpy()
        rows.append(dict(system=system, family=str(sub["family"].iat[0]), n=len(sub),
                         n_labelled=int(lab.sum()),
                         em_accuracy=float(sub["z"].mean()),
                         em_accuracy_labelled=float(sub["z"].to_numpy()[lab].mean()),
                         human_accuracy=float(sub["y"].to_numpy()[lab].mean())))
    out = pd.DataFrame(rows)
    out["gain"] = out["human_accuracy"] - out["em_accuracy_labelled"]
    out["rank_em"] = out["em_accuracy"].rank(ascending=False, method="min").astype(np.int64)
    out["rank_human"] = out["human_accuracy"].rank(ascending=False, method="min").astype(
        np.int64)
    out["rank_change"] = out["rank_em"] - out["rank_human"]
    return out.sort_values(["rank_human", "system"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class AgreementAUROC:
    """Discrimination of cross-system agreement (seed 003 §5.1: AUROC .663, DSC .0302).

    Attributes
    ----------
    n : int
        Labelled answers scored.
    prevalence_y, prevalence_z : float
    auroc_y, auroc_z : float
        AUROC of agreement against human labels and against exact match.
    score_y, mcb_y, dsc_y, unc_y : float
        CORP decomposition of the Brier score of agreement against Y
        (``score = mcb − dsc + unc``).
    dsc_z : float
        CORP DSC against Z.
    n_predictions, auroc_predictions, dsc_predictions : float
        The same at the level of labelled system predictions (NaN if no frame was given).
    seed_auroc, seed_dsc : float
        Seed 003's figures.
    """

    n: int
    prevalence_y: float
    prevalence_z: float
    auroc_y: float
    auroc_z: float
    score_y: float
    mcb_y: float
    dsc_y: float
    unc_y: float
    dsc_z: float
    n_predictions: int
    auroc_predictions: float
    dsc_predictions: float
    seed_auroc: float = SEED_003_NQ301.auroc_agreement
    seed_dsc: float = SEED_003_NQ301.dsc_agreement

    def to_frame(self) -> pd.DataFrame:
        """Measured beside seed 003 (one row per statistic)."""
        return pd.DataFrame({
            "statistic": ["AUROC vs Y (answers)", "CORP DSC vs Y (answers)", "AUROC vs Z",
                          "AUROC vs Y (predictions)"],
            "measured": [self.auroc_y, self.dsc_y, self.auroc_z, self.auroc_predictions],
            "seed_003": [self.seed_auroc, self.seed_dsc, np.nan, np.nan]})


def agreement_auroc(items: pd.DataFrame, *, frame: pd.DataFrame | None = None
                    ) -> AgreementAUROC:
    """AUROC and CORP decomposition of cross-system agreement against human labels.

    Parameters
    ----------
    items : DataFrame
        :func:`nq301_answers` (the seed's population: the 1,490 labelled answers).
    frame : DataFrame, optional
        :func:`load_nq301`, for the prediction-level figures.

    Returns
    -------
    AgreementAUROC
    """
    c = items["agreement"].to_numpy(float)
    y = items["y"].to_numpy(float)
    z = items["z"].to_numpy(float)
    dy = corp_decomposition(c, y)
    dz = corp_decomposition(c, z)
    n_p, a_p, d_p = 0, np.nan, np.nan
    if frame is not None:
        lab = frame["y"].notna().to_numpy()
        cp = frame["agreement"].to_numpy(float)[lab]
        yp = frame["y"].to_numpy(float)[lab]
        n_p, a_p, d_p = int(lab.sum()), auroc(cp, yp), corp_decomposition(cp, yp).dsc
    return AgreementAUROC(n=int(len(items)), prevalence_y=float(y.mean()),
                          prevalence_z=float(z.mean()), auroc_y=auroc(c, y), auroc_z=auroc(c, z),
                          score_y=dy.score, mcb_y=dy.mcb, dsc_y=dy.dsc, unc_y=dy.unc,
                          dsc_z=dz.dsc, n_predictions=n_p, auroc_predictions=a_p,
                          dsc_predictions=d_p)


# --------------------------------------------------------------------------------------------
# store


def nq301_to_store(con, frame: pd.DataFrame, *, items: pd.DataFrame | None = None,
                   answers: bool = True) -> dict[str, int]:
    """Write ``nq301_items`` (and ``nq301_answers``) into an open DuckDB connection.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable connection (the store build's temporary file).
    frame : DataFrame
        :func:`load_nq301` → table ``nq301_items`` (one row per question × system).
    items : DataFrame, optional
        :func:`nq301_answers` → table ``nq301_answers`` (computed from ``frame`` if omitted).
    answers : bool
        Also write ``nq301_answers``.

    Returns
    -------
    dict
        Table name → rows written.

    Notes
    -----
    Store conventions (:mod:`core.store`): each statement runs on its own cursor; the frame
    is registered, copied with ``CREATE OR REPLACE TABLE … AS SELECT``, and unregistered. NaN
    is stored as NULL.
    """
    tables = {"nq301_items": frame}
    if answers:
        tables["nq301_answers"] = items if items is not None else nq301_answers(frame)
    written = {}
    for table, df in tables.items():
        with con.cursor() as cur:
            cur.register("nq301_in", df)
            cur.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM nq301_in")
            cur.unregister("nq301_in")
        written[table] = len(df)
    return written


SHIPPED_DIR = Path(__file__).resolve().parents[2] / "data" / "nq301"


def export_nq301(root, out_dir) -> dict[str, int]:
    """Write the joined release as ``items.parquet`` and ``answers.parquet`` in ``out_dir``.

    The app ships these two small files (MIT licence, in ``data/nq301/``) so that a hosted demo
    does not need the raw release; ``python -m core import-nq301 DIR`` regenerates them.
    """
    frame = load_nq301(root)
    answers = nq301_answers(frame, root=root)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, df in (("items", frame), ("answers", answers)):
        clean = df.copy()
        clean.attrs = {}
        clean.to_parquet(out / f"{name}.parquet", index=False)
        written[name] = len(clean)
    return written


def load_shipped_nq301(directory=None) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The shipped ``(items, answers)`` frames, or ``None`` when the files are absent."""
    d = Path(directory) if directory is not None else SHIPPED_DIR
    paths = [d / "items.parquet", d / "answers.parquet"]
    if not all(p.exists() for p in paths):
        return None
    return pd.read_parquet(paths[0]), pd.read_parquet(paths[1])


__all__ += ["SHIPPED_DIR", "export_nq301", "load_shipped_nq301"]
