"""What the Reliability page's score panels show: the headline numbers, the two Brier
decompositions, the score table (narrow, with the rest apart) and seed 003's Table 2 beside ours.

Seed 003 §4 (calibration error of confidence rules; ECE_w ≥ |p̄ − ȳ|, Eq. 5), Table 1 (ICE
and its average-confidence baseline), Table 2 (the scenario's Brier, ten-bin ECE and |CITL|);
CORP's exact decomposition Brier = MCB − DSC + UNC (Dimitriadis, Gneiting & Jordan 2021) and
Murphy's binned REL − RES + UNC + WBV − 2·WBC (Stephenson et al. 2008). The scores themselves
come from :func:`core.calibration.summary.score_summary` (one row per rule, column ``rule``);
this module only shapes them, so the CLI, the tables and the downloads agree.

Invariants: every table keeps the rules in the order given; ``numbers`` has the columns a
reader compares across rules and labels (:data:`NUMBER_KEYS`) and ``all_scores`` every
score; the ``terms`` of each rule add up (``mcb − dsc + unc = brier`` up to rounding of the
inputs); ``table2`` is present only for seed 003's default scenario at B = 10 uniform bins
with both labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .paper import DSC_RANGE, TABLE1_AVERAGE_ICE, TABLE2
from .reliability_view import ReliabilityView
from .scores import LOG_SCORE_NOTE, SPIEGELHALTER_NOTE, spiegelhalter_reason

__all__ = ["NUMBER_KEYS", "LABEL_NAMES", "Headline", "ScoreView", "bin_points", "score_view"]

#: The label sources by key.
LABEL_NAMES = {"y": "Y", "z": "Z"}
#: The columns of the narrow score table (the keys of ``score_summary``).
NUMBER_KEYS = ("rule", "n", "prevalence", "mean_forecast", "brier", "ece", "citl", "auroc",
               "corp_mcb")
#: How many rules get headline numbers.
HEADLINE_RULES = 3


def _labels(label: str, n_bins: int, strategy: str) -> dict[str, str]:
    lab = LABEL_NAMES[label]
    return {"n": "n", "prevalence": f"E[{lab}]", "mean_forecast": "mean p", "brier": "Brier",
            "log_score": "log score", "ece": f"ECE (B = {n_bins}, {strategy})",
            "mce": f"MCE (B = {n_bins})", "rms": f"RMS-CE (B = {n_bins})",
            "smooth_ece": "smooth ECE", "smooth_ece_sigma": "σ*", "citl": "CITL p̄ − ȳ",
            "spiegelhalter_z": "Spiegelhalter z", "auroc": "AUROC", "ice": "ICE",
            "ice_baseline": "ICE of the average", "ice_gain": "ICE − average",
            "corp_mcb": "MCB", "corp_dsc": "DSC", "corp_unc": "UNC", "murphy_rel": "REL",
            "murphy_res": "RES", "murphy_wbv": "WBV", "murphy_wbc": "WBC"}


@dataclass(frozen=True)
class Headline:
    """One rule's headline numbers under the label shown (and the other label, if any)."""

    name: str
    ece: float
    brier: float
    ece_other: float | None
    brier_other: float | None


@dataclass(frozen=True, eq=False)
class ScoreView:
    """Everything the score panels of the Reliability page show (see :func:`score_view`).

    Attributes
    ----------
    label, other : the label shown (``"y"``/``"z"``) and the other one (``None`` if absent).
    label_name, other_name : ``"Y"``/``"Z"`` (``other_name`` ``None`` if absent).
    n_bins, strategy : the binning of the binned scores.
    headline : the first rules' ECE and Brier under both labels.
    terms : one row per rule: ``rule, brier, mcb, dsc, unc, rel, res, wbv, wbc``.
    numbers : the narrow table (rule names; columns :data:`NUMBER_KEYS`, renamed).
    all_scores : every score (rule names; renamed).
    ece_column : the ECE column's name in ``numbers`` (it states B and the binning).
    download : every score under both labels, long (columns ``label, n_bins, strategy``).
    table2 : ours beside seed 003's Table 2, or ``None``.
    dsc_range : the seed's range of DSC for the audited rules.
    average_ice : Table 1's ICE change of the average-confidence baseline by label.
    score_notes : what the "every score" table says: what Spiegelhalter's z tests, where it
        is left out and why (one sentence per rule), and the log score's clipping.
    """

    label: str
    other: str | None
    label_name: str
    other_name: str | None
    n_bins: int
    strategy: str
    headline: tuple[Headline, ...]
    terms: pd.DataFrame
    numbers: pd.DataFrame
    all_scores: pd.DataFrame
    ece_column: str
    download: pd.DataFrame
    table2: pd.DataFrame | None
    dsc_range: tuple[float, float]
    average_ice: Mapping[str, float]
    score_notes: tuple[str, ...] = ()


def _table2(scores: pd.DataFrame, other_scores: pd.DataFrame, names: Mapping[str, str],
            label: str, other: str) -> pd.DataFrame | None:
    both = {label: scores.set_index("rule"), other: other_scores.set_index("rule")}
    rows = []
    for (rule, lab), (brier, ece, citl) in TABLE2.items():
        if rule in both[lab].index:
            r = both[lab].loc[rule]
            rows.append({"rule": names.get(rule, rule), "label": LABEL_NAMES[lab],
                         "Brier": r["brier"], "Brier (paper)": brier, "ECE (B = 10)": r["ece"],
                         "ECE (paper)": ece, "|CITL|": abs(r["citl"]), "|CITL| (paper)": citl})
    return pd.DataFrame(rows) if rows else None


def score_view(scores: pd.DataFrame, other_scores: pd.DataFrame | None, *,
               names: Mapping[str, str], label: str, n_bins: int, strategy: str,
               default_scenario: bool = False) -> ScoreView:
    """Shape the score tables of every rule under ``label`` (and the other label).

    Parameters
    ----------
    scores : DataFrame
        :func:`~core.calibration.summary.score_summary` rows under ``label`` (column
        ``rule``), in display order.
    other_scores : DataFrame or None
        The same rules under the other label, if the data have it.
    names : mapping rule → display name (a rule without one keeps its key).
    label : {"y", "z"}
    n_bins, strategy : the binning the scores used (named in the column titles).
    default_scenario : bool
        The data are seed 003's default scenario (then ``table2`` compares with the seed
        when ``n_bins == 10``, ``strategy == "uniform"`` and both labels are present).
    """
    if label not in LABEL_NAMES:
        raise ValueError(f"label must be 'y' or 'z', got {label!r}")
    if scores.empty:
        raise ValueError("score_view needs at least one rule")
    if other_scores is not None and list(other_scores["rule"]) != list(scores["rule"]):
        raise ValueError("the two score tables must list the same rules in the same order")
    other = ({"y": "z", "z": "y"}[label]) if other_scores is not None else None
    shown = [names.get(r, r) for r in scores["rule"]]
    headline = []
    for i in range(min(HEADLINE_RULES, len(scores))):
        row = scores.iloc[i]
        o = other_scores.iloc[i] if other_scores is not None else None
        headline.append(Headline(name=shown[i], ece=float(row["ece"]),
                                 brier=float(row["brier"]),
                                 ece_other=None if o is None else float(o["ece"]),
                                 brier_other=None if o is None else float(o["brier"])))
    terms = scores.assign(rule=shown)[
        ["rule", "brier", "corp_mcb", "corp_dsc", "corp_unc", "murphy_rel", "murphy_res",
         "murphy_wbv", "murphy_wbc"]].rename(columns=lambda c: c.split("_", 1)[-1])
    rename = _labels(label, n_bins, strategy)
    renamed = scores.assign(rule=shown).rename(columns=rename)
    numbers = renamed[["rule", *(rename[k] for k in NUMBER_KEYS[1:])]].reset_index(drop=True)
    rest = ["rule", *(rename[k] for k in rename if k in scores.columns
                      and k not in NUMBER_KEYS[1:] and k != "n")]
    long = [scores.assign(label=LABEL_NAMES[label], n_bins=n_bins, strategy=strategy)]
    if other_scores is not None:
        long.append(other_scores.assign(label=LABEL_NAMES[other], n_bins=n_bins,
                                        strategy=strategy))
    table2 = None
    if default_scenario and other is not None and n_bins == 10 and strategy == "uniform":
        table2 = _table2(scores, other_scores, names, label, other)
    notes = [SPIEGELHALTER_NOTE]
    if {"spiegelhalter_n_eff", "spiegelhalter_skew"} <= set(scores.columns):
        for name, ne, sk in zip(shown, scores["spiegelhalter_n_eff"],
                                scores["spiegelhalter_skew"], strict=True):
            why = spiegelhalter_reason(float(ne), float(sk))
            if why is not None:
                notes.append(f"Spiegelhalter's z of {name} under {LABEL_NAMES[label]} is left "
                             f"out: {why}.")
    notes.append(LOG_SCORE_NOTE)
    return ScoreView(label=label, other=other, label_name=LABEL_NAMES[label],
                     other_name=LABEL_NAMES[other] if other else None, n_bins=int(n_bins),
                     strategy=strategy, headline=tuple(headline), terms=terms,
                     numbers=numbers, all_scores=renamed[rest].reset_index(drop=True),
                     ece_column=rename["ece"], download=pd.concat(long, ignore_index=True),
                     table2=table2, dsc_range=DSC_RANGE, average_ice=TABLE1_AVERAGE_ICE,
                     score_notes=tuple(notes))


def bin_points(view: ReliabilityView, names: Mapping[str, str]) -> pd.DataFrame:
    """The binned curves' points, one row per rule and non-empty bin.

    Columns: ``rule, bin`` (e.g. ``"0.10–0.20"``), ``count, mean p, observed`` and the exact
    95 % interval ``low, high``. Empty bins are left out (they have no point).
    """
    rows = []
    for rule, c in view.binned.items():
        keep = np.asarray(c.count) > 0
        edges = np.asarray(c.edges)
        rows.append(pd.DataFrame({
            "rule": names.get(rule, rule),
            "bin": [f"{a:.2f}–{b:.2f}" for a, b in zip(edges[:-1], edges[1:], strict=True)],
            "count": c.count, "mean p": c.mean_forecast, "observed": c.observed_frequency,
            "low": c.low, "high": c.high})[keep])
    return pd.concat(rows, ignore_index=True)
