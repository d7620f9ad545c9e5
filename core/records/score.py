"""Scoring responses of seed 002 (*Personal Dimension Benchmark v1: methods*, §7, §10).

**The response contract** (JSON Lines, one object per call)::

    {"item_id": "CONF-1", "arm": "D", "replicate": 0, "answer": "14 Ashdown Road, ...",
     "cited_record_ids": ["F02"], "policy": "CP-01", "declined": false, "stale": null}

``item_id`` a string, ``arm`` one of A–F, ``replicate`` a non-negative integer, ``answer`` a
string or null, ``cited_record_ids`` a list of strings, ``policy`` a string or null,
``declined`` a boolean (true with a non-null answer is malformed; a null answer counts as
declining either way), ``stale`` a boolean or null. A malformed line raises
:class:`ResponseFormatError` naming its line number; a line whose ``item_id`` is unknown
is reported in :attr:`ScoreResult.unknown`, never scored; the same (item, arm, replicate)
twice is malformed. Files are read by :mod:`.inputs`, the one reader of the command line and
the page: at most 20 MiB and 20,000 lines, lines of at most 10,000 characters and 10 levels
of brackets, UTF-8 (a bad line named by its number), strict JSON (no ``NaN``, no key twice),
not empty.

**Measures** (§7; per call, then averaged over replicates within the item, then over items):

=== ====================================================== ==================================
M1  answer matches the reference (:mod:`.normalise`)       answerable items
M2  cites exactly the records the answer rests on          answerable items, arms A B D F
    (every one, and no other: ids compared without        (undefined — NaN — for C and E)
    surrounding spaces, case-insensitively)
M3  names the conflict policy, CP-01 (spelt "CP01",        CONF items
    "cp 01", …: :func:`.normalise.names_policy`)
M4  declines                                               GAP items
M5  declines                                               answerable items
M6  stale flag equals the record's status                  STALE items
M7  answer is a value that holds today under any rule      items with a present value
    (CP-01, naive recency, later start: an overclaim)
M8  answer contains no value of the dimension              answerable items
M14 characters of context                                  per arm (:func:`.render.context_chars`)
=== ====================================================== ==================================

M9–M11 are in :mod:`.disclosure`, M12–M13 in :mod:`.writeback`.

**Comparisons** (§10): the exact sign test over item means and an item-bootstrap interval of
the mean difference. On M1, the nine paired arm comparisons and four ablation contrasts of
:data:`COMPARISONS`; on every other measure a hypothesis of §3 names (M2 H6, M3 H7, M6 H9
and H10, M7 H8, M8 H13), the same nine arm pairs over that measure's items
(:data:`MEASURE_COMPARISONS`; for M2 only the four pairs of arms carrying identifiers, as M2
is undefined, not zero, for C and E). M4 and M5 enter no hypothesis and are not tested; the
four ablation contrasts are predictions about M1 on named families (H4, H5) and stay on M1.

Sign: ``delta = s · (M(studied) − M(comparator))`` with ``s`` = :data:`BETTER` of the
measure: +1 where higher is better (M1, M2, M3, M6), −1 where lower is better (M7
overclaims, M8 fabrications), so ``delta > 0`` and ``n_pos`` always mean the studied arm is
better. On M1 this is the project's Δ = R(comparator) − R(studied) with risk R = 1 − M1.
No correction for multiplicity (§10).

**Order.** Item means are sorted by (arm, item id) and every interval draws from its own
generator, :func:`.inference.labelled_rng` of the seed and the interval's label (arm and
measure, or measure and comparison), so a measure, interval or comparison depends on the
seed and the set of items only: not on line order, nor on which other arms or comparisons
were scored.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .inference import item_bootstrap, labelled_rng, sign_test
from .inputs import MAX_LINES, InputError, json_lines
from .items import Item
from .normalise import answer_key, contains_any, names_policy, same_answer
from .render import ARMS, context_chars, inventory
from .world import RUN_DATE, World

__all__ = ["BETTER", "COMPARISONS", "ID_ARMS", "MAX_LINES", "MEASURES", "MEASURE_COMPARISONS",
           "TESTED_MEASURES", "Comparison", "ResponseFormatError",
           "ScoreResult", "parse_responses", "read_responses", "score_responses"]

#: Arms that carry identifiers to cite (seed 002 §7: M2 is defined for these only).
ID_ARMS = ("A", "B", "D", "F")
MEASURES = ("M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8")
_FIELDS = {"item_id": "a string", "arm": "one of A-F", "replicate": "a non-negative integer",
           "answer": "a string or null", "cited_record_ids": "a list of strings",
           "policy": "a string or null", "declined": "true or false",
           "stale": "true, false or null"}


@dataclass(frozen=True)
class Comparison:
    """A paired arm comparison on ``measure``: ``studied`` against ``comparator`` over the
    items of ``families`` (every item where the measure is defined when empty)."""

    name: str
    studied: str
    comparator: str
    families: tuple[str, ...]
    hypothesis: str
    why: str
    kind: str = "paired"
    measure: str = "M1"


_ALL: tuple[str, ...] = ()  # every answerable item
COMPARISONS = (
    Comparison("D vs A", "D", "A", _ALL, "H1", "structure against the same facts as notes"),
    Comparison("D vs B", "D", "B", _ALL, "H1, H3", "structure against notes with a summary"),
    Comparison("B vs A", "B", "A", _ALL, "H3", "what the profile summary adds or costs"),
    Comparison("D vs E", "D", "E", _ALL, "H5", "provenance, with validity present"),
    Comparison("D vs F", "D", "F", _ALL, "H4", "validity, with provenance present"),
    Comparison("E vs C", "E", "C", _ALL, "H4", "validity, without provenance"),
    Comparison("F vs C", "F", "C", _ALL, "H5", "provenance, without validity"),
    Comparison("D vs C", "D", "C", _ALL, "H4, H5", "both field classes together"),
    Comparison("B vs C", "B", "C", _ALL, "H3", "two recency-resolved current states, with "
               "and without the history underneath"),
    Comparison("D vs F on HIST", "D", "F", ("HIST",), "H4",
               "removing validity harms historical questions", "ablation"),
    Comparison("D vs F on CURR", "D", "F", ("CURR",), "H4",
               "control: removing validity leaves current state unaffected", "ablation"),
    Comparison("D vs E on CONF", "D", "E", ("CONF",), "H5",
               "removing provenance harms conflict resolution", "ablation"),
    Comparison("D vs E off CONF", "D", "E", ("CURR", "HIST", "STALE", "ENT", "HOP"), "H5",
               "control: removing provenance leaves the other families unaffected",
               "ablation"),
)

#: The direction of each tested measure (seed 002 §7): +1 higher is better, −1 lower is
#: better (M7 counts overclaims, M8 fabrications).
BETTER = {"M1": 1, "M2": 1, "M3": 1, "M6": 1, "M7": -1, "M8": -1}
#: The measures the hypotheses of §3 test, and which hypothesis each bears on.
TESTED_MEASURES = {"M1": "H1–H5", "M2": "H6", "M3": "H7", "M6": "H9, H10", "M7": "H8",
                   "M8": "H13"}
_ITEMS_OF = {"M1": "answerable", "M2": "answerable", "M3": "CONF", "M6": "STALE",
             "M7": "with a present value", "M8": "answerable"}
#: §10's nine arm pairs on every other tested measure, over the measure's items (M2: only
#: pairs of arms that carry identifiers, :data:`ID_ARMS`).
MEASURE_COMPARISONS = tuple(
    replace(c, measure=m, hypothesis=h)
    for m, h in TESTED_MEASURES.items() if m != "M1"
    for c in COMPARISONS if c.kind == "paired"
    and (m != "M2" or {c.studied, c.comparator} <= set(ID_ARMS)))


class ResponseFormatError(InputError):
    """Malformed response lines; ``problems`` lists ``(line, message)`` pairs (an
    :class:`~.inputs.InputError`: ``line`` is ``None`` for the whole file)."""

    def __init__(self, problems, *, source: str = "responses"):
        super().__init__(problems, source=source)


def _check_line(obj, n: int = 0) -> str | None:
    """The response contract: ``None`` for a good object, else a one-line reason."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [k for k in _FIELDS if k not in obj]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    extra = sorted(set(obj) - set(_FIELDS))
    if extra:
        return f"unknown field(s) {', '.join(str(k)[:40] for k in extra)}"
    ok = {
        "item_id": isinstance(obj["item_id"], str) and obj["item_id"] != "",
        "arm": isinstance(obj["arm"], str) and obj["arm"] in ARMS,
        "replicate": isinstance(obj["replicate"], int) and not isinstance(obj["replicate"], bool)
        and obj["replicate"] >= 0,
        "answer": obj["answer"] is None or isinstance(obj["answer"], str),
        "cited_record_ids": isinstance(obj["cited_record_ids"], list)
        and all(isinstance(x, str) for x in obj["cited_record_ids"]),
        "policy": obj["policy"] is None or isinstance(obj["policy"], str),
        "declined": isinstance(obj["declined"], bool),
        "stale": obj["stale"] is None or isinstance(obj["stale"], bool),
    }
    bad = [k for k, good in ok.items() if not good]
    if bad:
        k = bad[0]
        return f"{k} must be {_FIELDS[k]}, got {json.dumps(obj[k])[:40]}"
    if obj["declined"] and obj["answer"] is not None:
        return "declined is true but an answer is given"
    return None


def _key(obj: dict) -> tuple:
    return (obj["item_id"], obj["arm"], obj["replicate"])


def _said(key: tuple) -> str:
    return f"item {key[0]}, arm {key[1]}, replicate {key[2]}"


def parse_responses(lines, *, source: str = "responses") -> list[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of decoded ``lines``, read by
    :func:`.inputs.json_lines` (line length, nesting, strict JSON, the contract, no
    repeated (item, arm, replicate)); :class:`ResponseFormatError` listing every malformed
    line (1-based numbers), or refusing more than :data:`MAX_LINES` lines or no non-blank
    line."""
    return json_lines(list(lines), check=_check_line, key=_key, describe=_said, name=source,
                      error=ResponseFormatError)


def read_responses(source, *, name: str | None = None, **limits) -> list[tuple[int, dict]]:
    """:func:`parse_responses` of a JSON Lines file (a path) or of its bytes (an upload,
    named ``name``), with every limit of :mod:`.inputs` (``limits`` may lower them:
    ``max_bytes``, ``max_lines``): at most :data:`~.inputs.MAX_BYTES` bytes, UTF-8 (a bad
    line is named by its number), not empty. Raises :class:`ResponseFormatError` (a
    ``ValueError``, one line)."""
    if not isinstance(source, (bytes, bytearray, memoryview)):
        source = Path(source)
    return json_lines(source, check=_check_line, key=_key, describe=_said, name=name,
                      error=ResponseFormatError, **limits)


@dataclass(frozen=True)
class ScoreResult:
    """Scores of a response file.

    ``calls``: one row per scored call with the per-call indicators (NaN where a measure
    does not apply); ``item_means``: the same averaged over replicates within (arm, item);
    ``measures``: per arm and measure the value, its item-bootstrap interval and the
    number of items in the denominator; ``families``: M1 per arm and family;
    ``comparisons``: :data:`COMPARISONS` (M1) with sign tests and intervals;
    ``measure_comparisons``: :data:`MEASURE_COMPARISONS` (M2, M3, M6, M7, M8) the same way
    (both with ``measure`` and ``better``; ``delta > 0`` and ``n_pos``: the studied arm is
    better); ``item_means`` sorted by arm and item; ``unknown``:
    ``(line, item_id)`` of lines naming no item; ``missing``: (arm, item) pairs of the
    grid with no response, per arm; ``chars``: M14.
    """

    calls: pd.DataFrame
    item_means: pd.DataFrame
    measures: pd.DataFrame
    families: pd.DataFrame
    comparisons: pd.DataFrame
    measure_comparisons: pd.DataFrame
    unknown: tuple[tuple[int, str], ...]
    missing: dict[str, int]
    chars: dict[str, int]
    n_lines: int = 0
    seed: int = 0
    n_boot: int = 2000
    notes: tuple[str, ...] = field(default_factory=tuple)

    def value(self, arm: str, measure: str) -> float:
        """The value of ``measure`` in ``arm`` (NaN when undefined)."""
        row = self.measures[(self.measures["arm"] == arm) & (self.measures["measure"] == measure)]
        return float(row["value"].iloc[0]) if len(row) else float("nan")

    @property
    def sign_tests(self) -> pd.DataFrame:
        """Every sign test: :attr:`comparisons` (M1) then :attr:`measure_comparisons`."""
        return pd.concat([self.comparisons, self.measure_comparisons], ignore_index=True)

    def to_dict(self) -> dict:
        return {"lines": self.n_lines, "unknown_items": [list(u) for u in self.unknown],
                "missing_per_arm": self.missing, "chars": self.chars, "seed": self.seed,
                "bootstrap": self.n_boot, "measures": self.measures.to_dict(orient="records"),
                "families": self.families.to_dict(orient="records"),
                "comparisons": self.comparisons.to_dict(orient="records"),
                "measure_comparisons": self.measure_comparisons.to_dict(orient="records")}


def _dimension_keys(world: World) -> list[str]:
    inv = inventory(world)
    keys = {answer_key(t) for t in inv["token"]}
    return sorted(k for k in keys if k and len(k) >= 2)


def _score_call(obj: dict, item: Item, keys: list[str], policy_id: str) -> dict:
    declined = bool(obj["declined"]) or obj["answer"] is None
    answer = None if declined else obj["answer"]
    nan = np.nan
    row = {"item_id": item.item_id, "arm": obj["arm"], "replicate": obj["replicate"],
           "family": item.family, "answerable": item.answerable}
    if item.answerable:
        row["M1"] = float(same_answer(answer, item.reference, item.kind))
        cited = {c.strip().upper() for c in obj["cited_record_ids"]}
        row["M2"] = (float(cited == {r.upper() for r in item.record_ids})
                     if obj["arm"] in ID_ARMS else nan)
        row["M5"] = float(declined)
        row["M8"] = float(answer is not None and not contains_any(answer, keys))
    else:
        row.update(M1=nan, M2=nan, M5=nan, M8=nan)
    row["M3"] = (float(names_policy(obj["policy"], policy_id)) if item.family == "CONF"
                 else nan)
    row["M4"] = float(declined) if item.family == "GAP" else nan
    row["M6"] = (float(obj["stale"] is not None and obj["stale"] == item.stale)
                 if item.family == "STALE" else nan)
    row["M7"] = (float(any(same_answer(answer, v, item.kind) for v in item.present_values))
                 if item.present_values else nan)
    return row


def _measures(item_means: pd.DataFrame, *, seed: int, n_boot: int) -> pd.DataFrame:
    """Per arm and measure the mean over items and its item bootstrap (seed 002 §7, §10),
    each drawn from its own generator over the items in id order."""
    rows = []
    for arm in ARMS:
        sub = item_means[item_means["arm"] == arm].sort_values("item_id")
        for m in MEASURES:
            v = sub[m].dropna().to_numpy(float) if m in sub else np.array([])
            if m == "M2" and arm not in ID_ARMS:
                rows.append({"arm": arm, "measure": m, "value": np.nan, "ci_low": np.nan,
                             "ci_high": np.nan, "n_items": 0})
                continue
            lo, hi = item_bootstrap(v, rng=labelled_rng(seed, "measure", arm, m),
                                    n_boot=n_boot)
            rows.append({"arm": arm, "measure": m, "value": float(v.mean()) if v.size else np.nan,
                         "ci_low": lo, "ci_high": hi, "n_items": int(v.size)})
    return pd.DataFrame(rows, columns=["arm", "measure", "value", "ci_low", "ci_high",
                                       "n_items"])


_COMPARISON_COLUMNS = ["comparison", "measure", "better", "kind", "studied", "comparator",
                       "families", "hypothesis", "n_items", "n_pos", "n_neg", "delta",
                       "ci_low", "ci_high", "p_value"]


def _comparisons(item_means: pd.DataFrame, comparisons, *, seed: int,
                 n_boot: int) -> pd.DataFrame:
    """The exact sign test and item bootstrap of each comparison (seed 002 §10) over the
    items where its measure is defined for both arms (and in its families, if named);
    ``delta = BETTER[measure] · (studied − comparator)`` per item, so > 0 is the studied arm
    better whichever way the measure points."""
    family = item_means.drop_duplicates("item_id").set_index("item_id")["family"]
    wide = {m: item_means.pivot(index="item_id", columns="arm", values=m).sort_index()
            for m in {c.measure for c in comparisons} if m in item_means}
    rows = []
    for c in comparisons:
        s = BETTER[c.measure]
        base = {"comparison": c.name, "measure": c.measure,
                "better": "higher" if s > 0 else "lower", "kind": c.kind,
                "studied": c.studied, "comparator": c.comparator,
                "families": ",".join(c.families) or _ITEMS_OF[c.measure],
                "hypothesis": c.hypothesis}
        w = wide.get(c.measure)
        if w is None or c.studied not in w or c.comparator not in w:
            rows.append({**base, "n_items": 0, "n_pos": 0, "n_neg": 0, "delta": np.nan,
                         "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan})
            continue
        sel = w[[c.studied, c.comparator]].astype(float).dropna()
        if c.families:
            sel = sel[family.reindex(sel.index).isin(c.families).to_numpy()]
        d = s * (sel[c.studied] - sel[c.comparator]).to_numpy() + 0.0  # no −0.0
        n_pos, n_neg, p = sign_test(d)
        rng = labelled_rng(seed, "comparison", c.measure, c.name, *c.families)
        lo, hi = item_bootstrap(d, rng=rng, n_boot=n_boot)
        rows.append({**base, "n_items": int(d.size), "n_pos": n_pos, "n_neg": n_neg,
                     "delta": float(d.mean()) if d.size else np.nan, "ci_low": lo,
                     "ci_high": hi, "p_value": p if d.size else np.nan})
    return pd.DataFrame(rows, columns=_COMPARISON_COLUMNS)


def score_responses(responses, items, world: World, *, today: _dt.date = RUN_DATE,
                    seed: int = 0, n_boot: int = 2000) -> ScoreResult:
    """Score parsed responses (``(line, object)`` pairs of :func:`parse_responses`, or plain
    objects) against ``items``; each interval from its own generator,
    :func:`.inference.labelled_rng` of ``seed`` and the interval's label, over the items in id
    order (so line order changes nothing)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    by_id = {i.item_id: i for i in items}
    pairs = []
    for k, r in enumerate(responses, start=1):
        if isinstance(r, tuple) and len(r) == 2:
            pairs.append(r)
        elif isinstance(r, dict):
            pairs.append((k, r))
        else:
            raise ValueError("responses must be objects or (line, object) pairs")
    problems = [(n, m) for n, o in pairs if (m := _check_line(o, n))]
    if problems:
        raise ResponseFormatError(problems)
    keys = _dimension_keys(world)
    unknown = tuple((n, o["item_id"]) for n, o in pairs if o["item_id"] not in by_id)
    rows = [_score_call(o, by_id[o["item_id"]], keys, world.policy_id) for _, o in pairs
            if o["item_id"] in by_id]
    cols = ["item_id", "arm", "replicate", "family", "answerable", *MEASURES]
    calls = pd.DataFrame(rows, columns=cols)
    if len(calls):
        item_means = (calls.groupby(["arm", "item_id", "family", "answerable"], sort=False)
                      [list(MEASURES)].mean().reset_index())
    else:
        item_means = pd.DataFrame(columns=["arm", "item_id", "family", "answerable",
                                           *MEASURES])
    item_means["answerable"] = item_means["answerable"].astype(bool)
    # the set of items, not the order of the lines, decides every figure below
    item_means = item_means.sort_values(["arm", "item_id"]).reset_index(drop=True)
    measures = _measures(item_means, seed=seed, n_boot=n_boot)
    fam = (item_means[item_means["answerable"]].groupby(["arm", "family"])["M1"]
           .agg(["mean", "count"]).reset_index()
           .rename(columns={"mean": "M1", "count": "n_items"}))
    comparisons = _comparisons(item_means, COMPARISONS, seed=seed, n_boot=n_boot)
    measure_comparisons = _comparisons(item_means, MEASURE_COMPARISONS, seed=seed,
                                       n_boot=n_boot)
    seen = set(zip(calls["arm"], calls["item_id"], strict=True))
    missing = {arm: sum((arm, i) not in seen for i in by_id) for arm in ARMS}
    notes = ()
    if unknown:
        notes += (f"{len(unknown)} line(s) name unknown items and were not scored",)
    return ScoreResult(calls=calls, item_means=item_means, measures=measures, families=fam,
                       comparisons=comparisons, measure_comparisons=measure_comparisons,
                       unknown=unknown, missing=missing,
                       chars=context_chars(world, today=today), n_lines=len(pairs), seed=seed,
                       n_boot=n_boot, notes=notes)
