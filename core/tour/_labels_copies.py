"""The copy-cluster stop's computation: on the real Flight data, the item where a copy group
most plainly carries majority vote to a wrong value that a copy-aware resolver gets right.

Data: the built-in Flight set (:func:`core.fusion.builtin.load_builtin`, Li, Dong et al.
2012, 35 web sites, 100 flights, 1 December 2011), claims compared as exact text, as the
"Your data" page opens it. The copy group is that page's headline group
(:func:`core.fusion.views.copy_view`: every two members share at least 50 items and make the
same claim on at least 99 % of them, complete linkage; the group majority vote followed to a
wrong value most often). Majority vote breaks ties towards the alphabetically first value
(:func:`core.fusion.vote.majority_vote`); the copy-aware resolver is ACCU + DEPEN
(:func:`core.fusion.dependence.accu_depen`, Dong, Berti-Équille & Srivastava 2009).

Selection rule (:func:`select_copy_item`), deterministic, no hand-picked id:

1. candidates are the items with a known true value that ask for a time (a departure or an
   arrival, not a gate: "TERMINAL 3 - E3" and "E3" can be one gate spelt two ways), on which
   at least two members of the copy group claim and all of them claim the same value, that
   value is wrong, majority vote takes it with more votes than any other value (no tie),
   counting each copy group's claims on the item as one vote together (every group the page
   lists, not only this one) would give the true value more votes than any other, and
   ACCU + DEPEN is right;
2. rank them by the share of majority vote's winning votes that come from the copy group
   (largest first), then by how many sources claim on the item (most first), then by the item
   name (alphabetical).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.fusion.builtin import load_builtin
from core.fusion.views import (
    DEPENDENCE_METHOD,
    CopyCluster,
    CopyView,
    FusionFit,
    copy_view,
    fit_fusion,
)

from ._labels_text import pct
from .model import Chart, StopView, TourData

__all__ = ["FLIGHT_SET", "KEY", "CopyExample", "copy_cluster_view", "copy_example",
           "flight_copies", "select_copy_item"]

#: The stop's key.
KEY = "copy-cluster"
#: The built-in set the stop reads (the "Your data" page's default).
FLIGHT_SET = "flight"
#: The "try it yourself" link without an example: the "Your data" page's data-set parameter
#: (``yd_set``); with one, the what-if's item (``yd_item``) too.
LINK = (("yd_set", FLIGHT_SET),)
#: The resolvers the stop compares.
_METHODS = ("mv", DEPENDENCE_METHOD)
#: Vote totals closer than this are a tie (sums of fractions of a vote).
_EPS = 1e-9


def flight_copies() -> tuple[FusionFit, CopyView]:
    """Majority vote and ACCU + DEPEN fitted on the Flight set, and its copy groups.

    The same fits and groups as the "Your data" page's default view (each resolver is
    fitted on its own, so fitting two of the seven gives the page's answers for those two).
    """
    fit = fit_fusion(load_builtin(FLIGHT_SET), methods=_METHODS)
    return fit, copy_view(fit)


@dataclass(frozen=True, eq=False)
class CopyExample:
    """The selected item and the counts behind it.

    Attributes
    ----------
    item : str
        The item's name, ``FLIGHT|ATTRIBUTE``.
    flight, attribute : str
        Its two parts.
    cluster : CopyCluster
        The copy group (the page's headline group).
    claims : DataFrame
        One row per source claiming on the item: ``source``, ``claim``, ``in_group`` (bool:
        in the headline group), ``group`` (the page's label of the source's copy group, ''
        for none), in the order the chart shows them: the headline group, the other
        sources claiming majority vote's value, then the rest by claim; within a claim, copy
        groups before lone sources, then by group and source.
    truth, majority, dependent : str
        The true value, majority vote's answer and ACCU + DEPEN's answer.
    votes_majority, votes_truth, votes_runner_up : float
        Votes for majority vote's value, for the true value, and for the best other value.
    from_group : int
        Members of the group claiming on the item (all of them for majority vote's value).
    one_voice_majority, one_voice_truth : float
        The votes of majority vote's value and of the true value when each copy group's
        claims on the item count as one vote together.
    n_sources : int
        Sources claiming on the item.
    n_candidates : int
        Items that pass step 1 of the rule.
    n_checked : int
        Items with a known true value.
    mv_right, dependent_right : int
        Checked items majority vote and ACCU + DEPEN get right.
    member_claims, member_right : int
        The group's claims on checked items, and how many of them are right.
    """

    item: str
    flight: str
    attribute: str
    cluster: CopyCluster
    claims: pd.DataFrame
    truth: str
    majority: str
    dependent: str
    votes_majority: float
    votes_truth: float
    votes_runner_up: float
    from_group: int
    one_voice_majority: float
    one_voice_truth: float
    n_sources: int
    n_candidates: int
    n_checked: int
    mv_right: int
    dependent_right: int
    member_claims: int
    member_right: int


def _is_time(items) -> np.ndarray:
    """Items whose attribute (after the last ``|``) is a time, not a gate."""
    return np.array([not str(name).rpartition("|")[2].strip().lower().endswith("gate")
                     for name in items], bool)


def _one_voice(fit: FusionFit, clusters) -> np.ndarray:
    """Per claim, its weight when each copy group's claims on an item count as one vote:
    ``1 / (members of its group claiming on the item)`` for a member, 1 otherwise."""
    c = fit.claims
    out = np.ones(c.n_claims)
    for k in clusters:
        codes = np.array([c.sources.index(m) for m in k.members], np.int64)
        rows = np.isin(c.source, codes)
        n = np.bincount(c.item[rows], minlength=c.n_items)
        out[rows] = 1.0 / n[c.item[rows]]
    return out


def select_copy_item(fit: FusionFit, copies: CopyView) -> tuple[int | None, int]:
    """The item code the module's rule selects for the headline group of ``copies`` (None:
    no item qualifies, or no headline group) and the number of candidates (step 1).

    Raises
    ------
    ValueError
        When majority vote or ACCU + DEPEN did not run, or the table has no truth.
    """
    missing = [k for k in _METHODS if k not in fit.results]
    if missing:
        raise ValueError(f"the copy stop needs majority vote and ACCU + DEPEN; missing "
                         f"{', '.join(missing)}")
    c = fit.claims
    if c.truth is None:
        raise ValueError("the copy stop needs a table with known true values")
    cluster = copies.headline
    if cluster is None:
        return None, 0
    I, K = c.n_items, c.n_classes
    members = np.array([c.sources.index(m) for m in cluster.members], np.int64)
    in_group = np.isin(c.source, members)
    w = c.row_weight()
    # per item: how many members claim, and whether they all claim one value
    n_mem = np.bincount(c.item[in_group], minlength=I)
    lo = np.full(I, np.iinfo(np.int64).max)
    hi = np.full(I, -1)
    np.minimum.at(lo, c.item[in_group], c.claim[in_group])
    np.maximum.at(hi, c.item[in_group], c.claim[in_group])
    common = np.where((n_mem >= 2) & (lo == hi), hi, -1)
    # votes per (item, value), and with each copy group counted as one vote
    cell = c.item * K + c.claim
    votes = np.bincount(cell, weights=w, minlength=I * K).reshape(I, K)
    one = _one_voice(fit, copies.clusters)
    votes1 = np.bincount(cell, weights=w * one, minlength=I * K).reshape(I, K)
    rows = np.arange(I)
    safe = np.maximum(common, 0)
    v_common = votes[rows, safe]
    others = votes.copy()
    others[rows, safe] = -np.inf
    runner = others.max(axis=1)
    truth = c.truth
    mv = fit.results["mv"].labels
    dep = fit.results[DEPENDENCE_METHOD].labels
    t_safe = np.maximum(truth, 0)
    others1 = votes1.copy()
    others1[rows, t_safe] = -np.inf
    # strictly more, no tie (a group of three counts 1/3 + 1/3 + 1/3: compare with a margin)
    one_voice_right = votes1[rows, t_safe] > others1.max(axis=1) + _EPS
    ok = ((truth >= 0) & (common >= 0) & (common != truth) & (mv == common)
          & (v_common > runner + _EPS) & one_voice_right & (dep == truth) & _is_time(c.items))
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return None, 0
    group_votes = np.bincount(c.item[in_group], weights=w[in_group], minlength=I)
    share = group_votes[cand] / v_common[cand]
    n_src = c.claims_per_item()[cand]
    names = np.array([c.items[i] for i in cand], object)
    order = sorted(range(cand.size), key=lambda k: (-share[k], -n_src[k], names[k]))
    return int(cand[order[0]]), int(cand.size)


def copy_example(fit: FusionFit, copies: CopyView) -> CopyExample | None:
    """The :class:`CopyExample` of the module's rule, or None when no copy group outvoted the
    truth or no item qualifies."""
    head = copies.headline
    if head is None or not fit.claims.has_truth:
        return None
    i, n_cand = select_copy_item(fit, copies)
    if i is None:
        return None
    c = fit.claims
    rows = c.item == i
    src = np.asarray(c.sources, object)[c.source[rows]]
    val = np.asarray(c.classes, object)[c.claim[rows]]
    label = {m: k.label for k in copies.clusters for m in k.members}
    w = c.row_weight()[rows]
    frame = pd.DataFrame({"source": src.astype(str), "claim": val.astype(str),
                          "in_group": [s in set(head.members) for s in src],
                          "group": [label.get(s, "") for s in src], "weight": w,
                          "one_voice": (w * _one_voice(fit, copies.clusters)[rows])})
    truth = str(c.classes[c.truth[i]])
    majority = str(c.classes[fit.results["mv"].labels[i]])
    frame = (frame.assign(_other=frame["claim"] != majority, _alone=frame["group"] == "")
             .sort_values(["in_group", "_other", "claim", "_alone", "group", "source"],
                          ascending=[False, True, True, True, True, True], kind="stable")
             .drop(columns=["_other", "_alone"]).reset_index(drop=True))
    n_mem = int(frame["in_group"].sum())
    votes = frame.groupby("claim")["weight"].sum()
    votes1 = frame.groupby("claim")["one_voice"].sum()
    frame = frame.drop(columns=["weight", "one_voice"])
    runner = float(votes.drop(majority).max()) if len(votes) > 1 else 0.0
    gold = c.truth >= 0
    mv_v = fit.verdict(np.arange(c.n_items), fit.results["mv"].labels)
    dep_v = fit.verdict(np.arange(c.n_items), fit.results[DEPENDENCE_METHOD].labels)
    mrows = np.isin(c.source, np.array([c.sources.index(m) for m in head.members]))
    mver = fit.verdict(c.item[mrows], c.claim[mrows])
    flight, _, attribute = c.items[i].rpartition("|")
    return CopyExample(
        item=str(c.items[i]), flight=flight, attribute=attribute, cluster=head, claims=frame,
        truth=truth, majority=majority,
        dependent=str(c.classes[fit.results[DEPENDENCE_METHOD].labels[i]]),
        votes_majority=float(votes[majority]), votes_truth=float(votes.get(truth, 0.0)),
        votes_runner_up=runner, from_group=n_mem,
        one_voice_majority=float(votes1[majority]),
        one_voice_truth=float(votes1.get(truth, 0.0)), n_sources=int(rows.sum()),
        n_candidates=n_cand, n_checked=int(gold.sum()),
        mv_right=int(np.nansum(mv_v[gold])), dependent_right=int(np.nansum(dep_v[gold])),
        member_claims=int((~np.isnan(mver)).sum()), member_right=int(np.nansum(mver)))


# ----------------------------------------------------------------------------- the view
def _votes(x: float) -> str:
    """A vote count: whole numbers without decimals (Flight's claims are unweighted)."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def _settings(fit: FusionFit, copies: CopyView) -> tuple[tuple[str, str], ...]:
    c = fit.claims
    flights = len({str(name).rpartition("|")[0] for name in c.items})
    return (
        ("Data", f"Flight: {c.n_sources} web sites report on {flights} flights of "
                 "1 December 2011 (Li, Dong et al. 2012)"),
        ("Claims compared as", "exact text (no normaliser)"),
        ("Copy group", f"every two members share at least {copies.min_shared} items and make "
                       f"the same claim on at least {pct(copies.min_agreement, 0)} of them"),
        ("Resolvers", "majority vote (a tie goes to the alphabetically first value) against "
                      "a copy-aware resolver (ACCU + DEPEN)"),
    )


def copy_cluster_view(data: TourData) -> StopView:
    """The copy-cluster stop's view (module docstring: data, rule, resolvers)."""
    fit, copies = data.memo("labels:flight-fit", flight_copies)
    ex = copy_example(fit, copies)
    settings = _settings(fit, copies)
    if ex is None:
        return StopView(KEY, (), settings, None, "", "", LINK, (), False,
                        note="No copy group carries majority vote to a wrong value on a time "
                             "item of the Flight data under the stated rule.")
    head = ex.cluster
    what = f"{ex.attribute.lower()} time"
    same = ("every item they share" if head.agreement >= 1 else
            f"{pct(head.agreement, 0)} of the items they share")
    rows = [{"who": r.source, "role": "source", "answer": r.claim,
             "status": "right" if r.claim == ex.truth else "wrong",
             "group": f"copy group {r.group}" if r.group else "",
             "text": f"{r.source} says {r.claim}"
                     + (f" (copy group {r.group})" if r.group else "")}
            for r in ex.claims.itertuples(index=False)]
    rows += [{"who": "majority vote", "role": "resolver", "answer": ex.majority,
              "status": "right" if ex.majority == ex.truth else "wrong", "group": "",
              "text": f"majority vote: {ex.majority}, {_votes(ex.votes_majority)} votes"},
             {"who": "ACCU + DEPEN", "role": "resolver", "answer": ex.dependent,
              "status": "right" if ex.dependent == ex.truth else "wrong", "group": "",
              "text": f"copy-aware resolver (ACCU + DEPEN): {ex.dependent}"},
             {"who": "the truth", "role": "truth", "answer": ex.truth, "status": "right",
              "group": "", "text": f"the true {what}: {ex.truth}"}]
    chart = Chart(
        "answers", pd.DataFrame(rows),
        title=f"Who says what about flight {ex.flight}'s {what}",
        x_title=f"{ex.attribute} time claimed", y_title="",
        caption=f"One row per web site that answers, then the two resolvers and the truth. "
                f"Sites in copy group {head.label} make the same claim on {same}; other "
                "letters are the other copy groups the full page lists.")
    shows = (ex.majority != ex.truth and ex.dependent == ex.truth
             and ex.votes_majority > ex.votes_runner_up + _EPS
             and ex.one_voice_truth > ex.one_voice_majority + _EPS)
    others = ex.votes_majority - ex.from_group
    example = (
        ("Flight", f"{ex.flight} (airline, flight number, from, to)"),
        ("What the sites report", f"its {what}"),
        ("Web sites that answer", f"{ex.n_sources}"),
        (f"Copy group {head.label}", ", ".join(head.members)),
    )
    evidence = (
        (f"Copy group {head.label}", f"{head.size} sites that make the same claim on {same} "
                                     f"(at least {head.shared:,} items for any two of them)"),
        ("Their checked claims that are right",
         f"{pct(ex.member_right / ex.member_claims)} ({ex.member_right:,} of "
         f"{ex.member_claims:,})" if ex.member_claims else "none checked"),
        ("Items where majority vote took their wrong value",
         f"{head.outvoted} of {ex.n_checked} items with a known true value"),
        ("Of those, right by ACCU + DEPEN", f"{head.recovered} of {head.outvoted}"),
        ("Right overall", f"majority vote {pct(ex.mv_right / ex.n_checked)}, ACCU + DEPEN "
                          f"{pct(ex.dependent_right / ex.n_checked)} (of {ex.n_checked} items)"),
        ("On this item, votes for the copies' value",
         f"{_votes(ex.votes_majority)} ({ex.from_group} from copy group {head.label}, "
         f"{_votes(others)} from other sites)"),
        ("Votes for the true value", f"{_votes(ex.votes_truth)}"),
        ("Each copy group counted as one vote",
         f"{_votes(ex.one_voice_majority)} against {_votes(ex.one_voice_truth)}: majority vote "
         "would be right"),
        ("Items that pass the rule's filters", f"{ex.n_candidates} of {head.outvoted}"),
    )
    answer = (f"Majority vote picks {ex.majority}, copy group {head.label}'s value, by "
              f"{_votes(ex.votes_majority)} votes to {_votes(ex.votes_truth)}; the true "
              f"{what} is {ex.truth}, and the copy-aware resolver (ACCU + DEPEN) picks it.")
    reason = (f"In the chart, {ex.from_group} of the {_votes(ex.votes_majority)} sites behind "
              f"{ex.majority} are copy group {head.label}: they make the same claim on {same}, "
              "so their votes repeat one piece of evidence. With each copy group counted as "
              f"one vote, {ex.majority} would get {_votes(ex.one_voice_majority)} votes "
              f"against {_votes(ex.one_voice_truth)} for {ex.truth}. ACCU + DEPEN sees that "
              "these sites share wrong values far more often than independent sites could, "
              "and discounts the copies.")
    return StopView(KEY, example, settings, chart, answer, reason,
                    (*LINK, ("yd_item", str(ex.item))), evidence, shows,
                    note="" if shows else "The selected item no longer shows majority vote "
                                          "outvoted by the copies; the data or a resolver "
                                          "changed.")
