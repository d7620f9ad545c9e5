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
twice is malformed.

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

**Comparisons** (§10): the exact sign test over item means of M1 and an item-bootstrap
interval of the mean difference, for the nine paired arm comparisons and four ablation
contrasts of :data:`COMPARISONS`. Sign: ``delta = M1(studied) − M1(comparator)``, which is the
project's Δ = R(comparator) − R(studied) with risk R = 1 − M1: > 0 means the studied arm is
better. No correction for multiplicity (§10).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .inference import item_bootstrap, sign_test
from .items import Item
from .normalise import answer_key, contains_any, names_policy, same_answer
from .render import ARMS, context_chars, inventory
from .world import RUN_DATE, World

__all__ = ["COMPARISONS", "ID_ARMS", "MAX_LINES", "MEASURES", "Comparison", "ResponseFormatError",
           "ScoreResult", "parse_responses", "read_responses", "score_responses"]

#: Arms that carry identifiers to cite (seed 002 §7: M2 is defined for these only).
ID_ARMS = ("A", "B", "D", "F")
MEASURES = ("M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8")
MAX_LINES = 100_000
_FIELDS = {"item_id": "a string", "arm": "one of A-F", "replicate": "a non-negative integer",
           "answer": "a string or null", "cited_record_ids": "a list of strings",
           "policy": "a string or null", "declined": "true or false",
           "stale": "true, false or null"}


@dataclass(frozen=True)
class Comparison:
    """A paired arm comparison on M1: ``studied`` against ``comparator`` over the items of
    ``families`` (all answerable items when empty)."""

    name: str
    studied: str
    comparator: str
    families: tuple[str, ...]
    hypothesis: str
    why: str
    kind: str = "paired"


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


class ResponseFormatError(ValueError):
    """Malformed response lines; ``problems`` lists ``(line, message)`` pairs."""

    def __init__(self, problems: list[tuple[int, str]], *, source: str = "responses"):
        self.problems = tuple(problems)
        first = "; ".join(f"line {n}: {m}" for n, m in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{source}: {len(problems)} malformed line(s): {first}{more}")


def _check_line(obj, n: int) -> str | None:
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [k for k in _FIELDS if k not in obj]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    extra = sorted(set(obj) - set(_FIELDS))
    if extra:
        return f"unknown field(s) {', '.join(extra)}"
    ok = {
        "item_id": isinstance(obj["item_id"], str) and obj["item_id"] != "",
        "arm": obj["arm"] in ARMS,
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


def parse_responses(lines, *, source: str = "responses") -> list[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line; :class:`ResponseFormatError`
    listing every malformed line (1-based numbers)."""
    out, problems, seen = [], [], {}
    for n, raw in enumerate(lines, start=1):
        if n > MAX_LINES:
            problems.append((n, f"more than {MAX_LINES} lines"))
            break
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append((n, f"not JSON ({exc.msg})"))
            continue
        msg = _check_line(obj, n)
        if msg:
            problems.append((n, msg))
            continue
        key = (obj["item_id"], obj["arm"], obj["replicate"])
        if key in seen:
            problems.append((n, f"repeats item {key[0]}, arm {key[1]}, replicate {key[2]} "
                                f"(first on line {seen[key]})"))
            continue
        seen[key] = n
        out.append((n, obj))
    if problems:
        raise ResponseFormatError(problems, source=source)
    return out


def read_responses(path: str | Path) -> list[tuple[int, dict]]:
    """:func:`parse_responses` of a JSON Lines file (``ValueError`` if unreadable)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {p}: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_responses(text.splitlines(), source=str(p))


@dataclass(frozen=True)
class ScoreResult:
    """Scores of a response file.

    ``calls``: one row per scored call with the per-call indicators (NaN where a measure
    does not apply); ``item_means``: the same averaged over replicates within (arm, item);
    ``measures``: per arm and measure the value, its item-bootstrap interval and the
    number of items in the denominator; ``families``: M1 per arm and family;
    ``comparisons``: :data:`COMPARISONS` with sign tests and intervals; ``unknown``:
    ``(line, item_id)`` of lines naming no item; ``missing``: (arm, item) pairs of the
    grid with no response, per arm; ``chars``: M14.
    """

    calls: pd.DataFrame
    item_means: pd.DataFrame
    measures: pd.DataFrame
    families: pd.DataFrame
    comparisons: pd.DataFrame
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

    def to_dict(self) -> dict:
        return {"lines": self.n_lines, "unknown_items": [list(u) for u in self.unknown],
                "missing_per_arm": self.missing, "chars": self.chars, "seed": self.seed,
                "bootstrap": self.n_boot, "measures": self.measures.to_dict(orient="records"),
                "families": self.families.to_dict(orient="records"),
                "comparisons": self.comparisons.to_dict(orient="records")}


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


def _measures(item_means: pd.DataFrame, *, rng, n_boot: int) -> pd.DataFrame:
    rows = []
    for arm in ARMS:
        sub = item_means[item_means["arm"] == arm]
        for m in MEASURES:
            v = sub[m].dropna().to_numpy() if m in sub else np.array([])
            if m == "M2" and arm not in ID_ARMS:
                rows.append({"arm": arm, "measure": m, "value": np.nan, "ci_low": np.nan,
                             "ci_high": np.nan, "n_items": 0})
                continue
            lo, hi = item_bootstrap(v, rng=rng, n_boot=n_boot)
            rows.append({"arm": arm, "measure": m, "value": float(v.mean()) if v.size else np.nan,
                         "ci_low": lo, "ci_high": hi, "n_items": int(v.size)})
    return pd.DataFrame(rows, columns=["arm", "measure", "value", "ci_low", "ci_high",
                                       "n_items"])


def _comparisons(item_means: pd.DataFrame, *, rng, n_boot: int) -> pd.DataFrame:
    wide = item_means[item_means["answerable"]].pivot(index="item_id", columns="arm",
                                                      values="M1")
    family = item_means.drop_duplicates("item_id").set_index("item_id")["family"]
    rows = []
    for c in COMPARISONS:
        base = {"comparison": c.name, "kind": c.kind, "studied": c.studied,
                "comparator": c.comparator, "families": ",".join(c.families) or "answerable",
                "hypothesis": c.hypothesis}
        if c.studied not in wide or c.comparator not in wide:
            rows.append({**base, "n_items": 0, "n_pos": 0, "n_neg": 0, "delta": np.nan,
                         "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan})
            continue
        sel = wide[[c.studied, c.comparator]].dropna()
        if c.families:
            sel = sel[family.reindex(sel.index).isin(c.families).to_numpy()]
        d = (sel[c.studied] - sel[c.comparator]).to_numpy()
        n_pos, n_neg, p = sign_test(d)
        lo, hi = item_bootstrap(d, rng=rng, n_boot=n_boot)
        rows.append({**base, "n_items": int(d.size), "n_pos": n_pos, "n_neg": n_neg,
                     "delta": float(d.mean()) if d.size else np.nan, "ci_low": lo,
                     "ci_high": hi, "p_value": p if d.size else np.nan})
    return pd.DataFrame(rows)


def score_responses(responses, items, world: World, *, today: _dt.date = RUN_DATE,
                    seed: int = 0, n_boot: int = 2000) -> ScoreResult:
    """Score parsed responses (``(line, object)`` pairs of :func:`parse_responses`, or plain
    objects) against ``items``; intervals from ``numpy.random.default_rng(seed)``."""
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
    rng = np.random.default_rng(seed)
    measures = _measures(item_means, rng=rng, n_boot=n_boot)
    fam = (item_means[item_means["answerable"]].groupby(["arm", "family"])["M1"]
           .agg(["mean", "count"]).reset_index()
           .rename(columns={"mean": "M1", "count": "n_items"}))
    comparisons = _comparisons(item_means, rng=rng, n_boot=n_boot)
    seen = set(zip(calls["arm"], calls["item_id"], strict=True))
    missing = {arm: sum((arm, i) not in seen for i in by_id) for arm in ARMS}
    notes = ()
    if unknown:
        notes += (f"{len(unknown)} line(s) name unknown items and were not scored",)
    return ScoreResult(calls=calls, item_means=item_means, measures=measures, families=fam,
                       comparisons=comparisons, unknown=unknown, missing=missing,
                       chars=context_chars(world, today=today), n_lines=len(pairs), seed=seed,
                       n_boot=n_boot, notes=notes)
