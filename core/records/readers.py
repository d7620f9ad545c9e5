"""Deterministic reference readers for seed 002 (*Personal Dimension Benchmark v1*, §4.4,
§3): one per arm, doing exactly what that representation allows, no model needed.

==== ==================================================================================
Arm  What its reader does
==== ==================================================================================
A    full history; no stated policy, so a conflict goes to the later note (naive
     recency, policy "naive recency"); cites record ids; journeys name companions by
     first name, full name where it is shared, so it knows which Alex came along (with
     the first-name-only notes, ``companions="first"``, "with Alex" is ambiguous and it
     declines)
B    attribute questions from the profile (latest capture, no dates): it asserts today's
     value for past dates and expired records; everything else as arm A
C    one current record per attribute (recency), no dates, sources or ids: past dates get
     today's value, expired records are absent (declines), cites nothing
D    the ground-truth engine itself: CP-01, history, ids, relations (reproduces every
     reference answer)
E    history but no sources: a conflict goes to the record that starts later, and a tie is
     undecidable (declines); cites nothing (no identifiers)
F    only records covering today, with sources and CP-01: past dates get today's value,
     expired records are absent (declines)
==== ==================================================================================

The readers emit responses in the contract of :mod:`.score` (two identical replicates by
default). :func:`hypothesis_table` says which of H1–H15 such readers can test and the
direction they show, with the figures each row reads (``observed``);
:func:`headline_contrasts` computes H1–H3, the headline contrast, as numbers. The readers
test what the *representation* allows, not how hard a text is to read, so H1 and H2 (A and D
carry the same facts and dates: D − A is 0 on CURR and on HIST), H3's "raises current
state" (a rule-following reader finds today's value in the notes as surely as in the
profile: B = A on CURR), H11 (complete notes say which Alex too), H12 (when notes suffice),
H13 (a deterministic reader never fabricates) and H14 (it applies prose and records alike)
are out of their reach: the figures are computed and shown, and come out as ties.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace

import numpy as np
import pandas as pd

from .engine import evaluate
from .inference import sign_test
from .items import Item
from .render import ARMS, current_facts, profile_facts
from .world import RUN_DATE, World

__all__ = ["HYPOTHESES", "arm_view", "headline_contrasts", "hypothesis_table", "read",
           "read_item"]

_OPEN = dict(valid_from=_dt.date.min, valid_to=None)
_ATTRIBUTE_OPS = ("value", "status", "value_on")


def _no_validity(facts) -> list:
    return [replace(f, **_OPEN) for f in facts]


def arm_view(world: World, arm: str, *, today: _dt.date = RUN_DATE,
             companions: str = "as needed") -> tuple[World, dict]:
    """The world an arm's reader sees and how it reads it (``policy``, ``companion``,
    ``cite``, ``names_policy``). Arm B's profile view is :func:`_profile_view`.

    ``companions`` is how the notes name companions (:func:`.render.companion_mention`):
    "as needed" names a shared first name in full, so the mention resolves to one contact
    (the completeness check verifies it) and the reader finds the companion by identity;
    "first" leaves only the first name, which the reader resolves as the engine's
    ``companion="first_name"`` (three Alexes: no answer)."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")
    if companions not in ("as needed", "first"):
        raise ValueError(f"companions must be 'as needed' or 'first', got {companions!r}")
    world = world.known_on(today)  # nothing captured after today exists yet
    if arm in ("A", "B"):
        return world, {"policy": "naive recency",
                       "companion": "id" if companions == "as needed" else "first_name",
                       "cite": True, "names_policy": "naive recency"}
    if arm == "C":
        flat = _no_validity(current_facts(world, today=today, one_per_attribute=True))
        return replace(world, facts=tuple(flat), sources=()), {
            "policy": "naive recency", "companion": "id", "cite": False, "names_policy": None}
    if arm == "D":
        return world, {"policy": "CP-01", "companion": "id", "cite": True,
                       "names_policy": "CP-01"}
    if arm == "E":
        return replace(world, sources=()), {"policy": "later-start", "companion": "id",
                                            "cite": False, "names_policy": None}
    live = _no_validity(current_facts(world, today=today))
    return replace(world, facts=tuple(live)), {"policy": "CP-01", "companion": "id",
                                               "cite": True, "names_policy": "CP-01"}


def _profile_view(world: World) -> World:
    return replace(world, facts=tuple(_no_validity(profile_facts(world))), sources=())


def read_item(world: World, item: Item, arm: str, *, today: _dt.date = RUN_DATE,
              replicate: int = 0, companions: str = "as needed") -> dict:
    """The response of ``arm``'s reader to ``item`` (a dict in the response contract); it
    sees only records captured by ``today``."""
    world = world.known_on(today)
    view, how = arm_view(world, arm, today=today, companions=companions)
    cite = how["cite"]
    if arm == "B" and item.query.get("op") in _ATTRIBUTE_OPS:
        view, cite = _profile_view(world), False
    ans = evaluate(view, item.query, as_of=item.as_of, today=today, policy=how["policy"],
                   companion=how["companion"])
    value = ans.value
    if isinstance(value, tuple):
        value = "; ".join(value)
    declined = value is None
    return {"item_id": item.item_id, "arm": arm, "replicate": replicate, "answer": value,
            "cited_record_ids": list(ans.record_ids) if cite and not declined else [],
            "policy": how["names_policy"] if ans.conflict and not declined else None,
            "declined": declined,
            "stale": ans.stale if item.family == "STALE" and not declined else None}


def read(world: World, items, *, arms=ARMS, replicates: int = 2,
         today: _dt.date = RUN_DATE, companions: str = "as needed") -> list[dict]:
    """Every reader's responses to every item, ``replicates`` times (identical: the readers
    are deterministic), in arm, item, replicate order."""
    if replicates < 1:
        raise ValueError(f"replicates must be at least 1, got {replicates}")
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise ValueError(f"unknown arm(s) {bad}; arms are {', '.join(ARMS)}")
    return [read_item(world, item, arm, today=today, replicate=r, companions=companions)
            for arm in arms for item in items for r in range(replicates)]


#: (hypothesis, testable by a deterministic reader, what is compared, why).
HYPOTHESES = (
    ("H1", False, "M1 CURR: D > A",
     "the facts and dates are the same; a rule-following reader finds them in either"),
    ("H2", False, "M1 gap D − A larger on HIST than CURR",
     "the notes carry every fact and date too (the completeness check), so a rule-following "
     "reader answers HIST and CURR from both alike: the gap is 0 on each and cannot be larger "
     "on either; a larger HIST gap needs a reader that loses dates in running notes"),
    ("H3", True, "M1 HIST: B < A (the CURR half, B > A, is not testable)",
     "the profile asserts a present state without the history that qualifies it; the 'raises "
     "current state' half needs a reader that struggles to find today's value in raw notes, "
     "and a rule-following one finds it there as surely as in the profile (B = A on CURR)"),
    ("H4", True, "M1 HIST: F < D; M1 CURR: F = D", "validity intervals carry history"),
    ("H5", True, "M1 CONF: E < D; M1 elsewhere: E = D", "provenance carries conflict resolution"),
    ("H6", True, "M2 defined only for A, B, D, F; D cites everything", "identifiers are needed"),
    ("H7", True, "M3: D, F > 0; A, B, C, E = 0", "only D and F carry the policy"),
    ("H8", True, "M7: A, D, E < B, C, F", "temporal structure separates past from present"),
    ("H9", True, "M6 on expired records: A, D, E > B, C, F", "end dates make expiry visible"),
    ("H10", True, "M6 on valid records: no arm raises a false alarm", "controls stay valid"),
    ("H11", False, "M1 ENT: D > A",
     "complete notes say which Alex too (§1), so a rule-following reader finds the identity "
     "in either; only the first-name-only notes, which failed the completeness check, lost it"),
    ("H12", True, "M1 HOP: D > C, F (D = A)",
     "joins need history; explicit relations add nothing when first names are unique"),
    ("H13", False, "M8 = 0 for every reader", "a deterministic reader never fabricates"),
    ("H14", False, "M11: prose = structured", "a rule-following reader applies both alike"),
    ("H15", True, "M12 and M13: only D records a superseding update",
     "only validity intervals let an update close the old record on a date instead of "
     "deleting it"),
)


_HEADLINE_COLUMNS = ["hypothesis", "part", "contrast", "studied", "comparator", "value",
                     "predicted", "shows", "n_items", "n_pos", "n_neg", "p_value"]


def headline_contrasts(score) -> pd.DataFrame:
    """H1–H3, the headline contrast of seed 002 §3, on M1 by family (§6) as numbers.

    One row per part: H1 ``D − A`` on CURR (predicted > 0); H2 ``(D − A on HIST) − (D − A on
    CURR)`` (predicted > 0; ``studied`` and ``comparator`` hold the two gaps); H3 ``B − A``
    on CURR (predicted > 0, "raises") and on HIST (predicted < 0, "lowers"). ``value`` is a
    difference of family means of item means (§10); the paired parts carry the exact sign
    test over the family's items (``n_pos``: items where the first arm is right more often).
    H2 compares two families, i.e. different items: no paired test exists for it, so its
    ``n_pos``, ``n_neg`` and ``p_value`` are empty (§10 names none).
    """
    im = score.item_means
    wide = im[im["answerable"]].pivot(index="item_id", columns="arm", values="M1")
    fam = im.drop_duplicates("item_id").set_index("item_id")["family"]

    def paired(first, second, family):
        """(first's, second's) item means on the family's items both arms answered."""
        if first not in wide or second not in wide:
            return np.array([]), np.array([])
        sel = wide[[first, second]].dropna()
        sel = sel[fam.reindex(sel.index).eq(family).to_numpy()]
        return sel[first].to_numpy(float), sel[second].to_numpy(float)

    def mean(a):
        return float(a.mean()) if a.size else float("nan")

    rows = []
    for h, part, first, second, family, sign in (
            ("H1", "current state", "D", "A", "CURR", ">"),
            ("H3", "current state", "B", "A", "CURR", ">"),
            ("H3", "history", "B", "A", "HIST", "<")):
        a, b = paired(first, second, family)
        d = a - b + 0.0  # no −0.0
        n_pos, n_neg, p = sign_test(d)
        v = mean(d)
        rows.append({"hypothesis": h, "part": part,
                     "contrast": f"M1 {family}: {first} − {second}", "studied": mean(a),
                     "comparator": mean(b), "value": v, "predicted": f"{sign} 0",
                     "shows": bool(v > 0 if sign == ">" else v < 0) if d.size else None,
                     "n_items": int(d.size), "n_pos": n_pos, "n_neg": n_neg,
                     "p_value": p if d.size else np.nan})
    hist, curr = (np.subtract(*paired("D", "A", f)) + 0.0 for f in ("HIST", "CURR"))
    gap = mean(hist) - mean(curr) + 0.0
    rows.insert(1, {"hypothesis": "H2", "part": "history against current state",
                    "contrast": "(D − A on HIST) − (D − A on CURR)", "studied": mean(hist),
                    "comparator": mean(curr), "value": gap, "predicted": "> 0",
                    "shows": bool(gap > 0) if hist.size and curr.size else None,
                    "n_items": int(hist.size + curr.size), "n_pos": np.nan, "n_neg": np.nan,
                    "p_value": np.nan})
    return pd.DataFrame(rows, columns=_HEADLINE_COLUMNS).astype({"n_pos": "Int64",
                                                                  "n_neg": "Int64"})


def _fmt(x: float) -> str:
    return "—" if pd.isna(x) else f"{x:.3f}".replace("-", "−")


def hypothesis_table(score) -> pd.DataFrame:
    """Which hypotheses the reference readers can test and whether their scores (a
    :class:`~core.records.score.ScoreResult` of :func:`read`) show the predicted direction.

    ``shows`` is ``None`` for hypotheses they cannot test, or that need another track
    (H14, H15: :mod:`.disclosure`, :mod:`.writeback`). ``observed`` gives the figures the row
    reads, untestable ones included (H1–H3 from :func:`headline_contrasts`; "" for the
    tracks'), so a tie that makes a hypothesis out of reach is shown, not only asserted.
    """
    fam = score.families.set_index(["arm", "family"])["M1"]
    im = score.item_means

    def f(arm, family):
        return float(fam.get((arm, family), float("nan")))

    def by(arm, measure, stale=None):
        sub = im[(im["arm"] == arm) & im[measure].notna()]
        if stale is not None:
            sub = sub[sub["item_id"].isin(stale)]
        return float(sub[measure].mean()) if len(sub) else float("nan")

    expired = {"STALE-1", "STALE-2", "STALE-3"}
    valid = {"STALE-4", "STALE-5"}
    v = score.value
    off_conf = ("CURR", "HIST", "STALE", "ENT", "HOP")
    shows = {
        "H3": f("B", "HIST") < f("A", "HIST"),
        "H4": f("F", "HIST") < f("D", "HIST") and f("F", "CURR") == f("D", "CURR"),
        "H5": f("E", "CONF") < f("D", "CONF") and all(f("E", x) == f("D", x) for x in off_conf),
        "H6": v("D", "M2") == 1 and all(pd.isna(v(a, "M2")) for a in ("C", "E")),
        "H7": v("D", "M3") == 1 and v("F", "M3") == 1
        and all(v(a, "M3") == 0 for a in ("A", "B", "C", "E")),
        "H8": max(v(a, "M7") for a in "ADE") < min(v(a, "M7") for a in "BCF"),
        "H9": min(by(a, "M6", expired) for a in "ADE") > max(by(a, "M6", expired)
                                                             for a in "BCF"),
        "H10": all(by(a, "M6", valid) == 1 for a in ("A", "D", "E", "F", "B", "C")),
        "H12": f("D", "HOP") > max(f("C", "HOP"), f("F", "HOP")),
    }
    hc = headline_contrasts(score).set_index(["hypothesis", "part"])
    h2 = hc.loc[("H2", "history against current state")]
    comp = score.comparisons.set_index("comparison")["delta"]

    def per_arm(measure, arms=ARMS, items=None):
        get = (lambda a: v(a, measure)) if items is None else (lambda a: by(a, measure, items))
        return ", ".join(f"{a} {_fmt(get(a))}" for a in arms)

    def fams(family, arms):
        return f"M1 {family}: " + ", ".join(f"{a} {_fmt(f(a, family))}" for a in arms)

    observed = {
        "H1": f"{fams('CURR', 'DA')}; D − A {_fmt(hc.loc[('H1', 'current state'), 'value'])}",
        "H2": f"D − A on HIST {_fmt(h2['studied'])}, on CURR {_fmt(h2['comparator'])}; "
              f"difference {_fmt(h2['value'])}",
        "H3": f"B − A on HIST {_fmt(hc.loc[('H3', 'history'), 'value'])}, on CURR "
              f"{_fmt(hc.loc[('H3', 'current state'), 'value'])}",
        "H4": f"{fams('HIST', 'FD')}; {fams('CURR', 'FD')}",
        "H5": f"{fams('CONF', 'ED')}; D − E off CONF {_fmt(comp.get('D vs E off CONF'))}",
        "H6": "M2: " + per_arm("M2"),
        "H7": "M3: " + per_arm("M3"),
        "H8": "M7: " + per_arm("M7"),
        "H9": "M6 on expired: " + per_arm("M6", items=expired),
        "H10": "M6 on valid: " + per_arm("M6", items=valid),
        "H11": fams("ENT", "DA"),
        "H12": fams("HOP", "DACF"),
        "H13": "M8: " + per_arm("M8"),
    }
    rows = []
    for h, testable, compared, why in HYPOTHESES:
        rows.append({"hypothesis": h, "testable": testable, "compared": compared, "why": why,
                     "shows": shows.get(h) if testable else None,
                     "observed": observed.get(h, "")})
    return pd.DataFrame(rows)
