"""Ground-truth label functions f_q of seed 000, vectorised over personas.

Source: the benchmark specification §2.8 (the released code's rules, which differ from the
paper's prose in places) and seed 000 §2.2, §8.4. Every function reads
the latent event table and, for nine templates, a structured source (B2, B3, D2 read the
profile; C2, C3, E2, F1 the planner; F2 the device log; F3 the objective log).

Conventions
-----------
* Answers are display-order codes of :mod:`core.testbed.questions`.
* Day windows are 1-based day indices: last 14 days = 17–30, last 7 days = 24–30.
* Ratios use IEEE double arithmetic in the spec's order of operations (``a - p``, not
  ``-(p - a)``), so boundary cases agree with the released code and with the SQL audit.
* The binning helpers ``bin_*`` are shared with the direct readout (:mod:`.readout`), whose
  rules say "same classification as GT".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .questions import QIDS, QUESTIONS
from .schema import Testbed
from .vocab import AFTERHOURS_STYLES, IS_WEEKEND

__all__ = [
    "GroundTruth",
    "bin_a1",
    "bin_a2",
    "bin_a3",
    "bin_b2",
    "bin_b3",
    "bin_c2",
    "bin_c3",
    "bin_count_ctrl1",
    "bin_count_ctrl2",
    "bin_d1",
    "bin_d2",
    "bin_e1",
    "bin_e2",
    "bin_e2_ratio",
    "bin_f1",
    "bin_f2",
    "bin_f3",
    "bin_share70",
    "ground_truth",
    "ground_truth_codes",
]

LAST14 = slice(16, 30)
LAST7 = slice(23, 30)
FIRST14 = slice(0, 14)
REST16 = slice(14, 30)

GroundTruth = tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]


def _where(*pairs, default):
    """``np.select`` with int8 output: pairs of (condition, code), first true wins."""
    conds = [np.asarray(c, bool) for c, _ in pairs]
    return np.select(conds, [v for _, v in pairs], default).astype(np.int8)


def _safe_div(num, den):
    num = np.asarray(num, float)
    den = np.asarray(den, float)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


# ---------------------------------------------------------------- binning (spec §2.8)
def bin_a1(g):
    """A1: g ≥ 20 → 20_or_more; g ≥ 10 → 10_to_19; else fewer_than_10."""
    return _where((g >= 20, 2), (g >= 10, 1), default=0)


def bin_a2(n):
    """A2: ≥ 8 → 8_or_more; ≥ 4 → 4_to_7; else 0_to_3."""
    return _where((n >= 8, 2), (n >= 4, 1), default=0)


def bin_a3(r):
    """A3: ratio ≥ 0.7 → 70_or_more; ≥ 0.4 → 40_to_69; else less_than_40."""
    return _where((r >= 0.7, 2), (r >= 0.4, 1), default=0)


def bin_b2(delta):
    """B2: |δ| ≤ 1 → within_1_day; δ < −1 → more_than_1_below; else more_than_1_above."""
    return _where((np.abs(delta) <= 1, 1), (delta < -1, 0), default=2)


def bin_b3(style, w, n):
    """B3 given style code, worked weekend days ``w`` out of ``n`` usable weekend days.

    strict_boundary: matches iff w/n ≤ 0.15. flexible: does_not_match iff w = 0 and n ≥ 4,
    else matches. Null style → no_approach_described (2).
    """
    ratio = _safe_div(w, n)
    strict = style == 0
    flexible = style == 1
    return _where(
        (style < 0, 2),
        (strict & (ratio <= 0.15), 0),
        (strict, 1),
        (flexible & (w == 0) & (n >= 4), 1),
        (flexible, 0),
        (ratio < 0.5, 0),  # other styles: unreachable in the released data
        default=1,
    )


def bin_c2(realized, plan):
    """C2: no plan days → no_plans; r > 0.50 → above_50_pct; r ≥ 0.25 → 25_to_50_pct."""
    r = _safe_div(realized, plan)
    return _where((plan == 0, 3), (r > 0.5, 2), (r >= 0.25, 1), default=0)


def bin_c3(late, early, paired):
    """C3: 0 paired → no_targets; late share > .5 → later; early share > .5 → earlier."""
    return _where(
        (paired == 0, 3),
        (_safe_div(late, paired) > 0.5, 1),
        (_safe_div(early, paired) > 0.5, 2),
        default=0,
    )


def bin_d1(delta):
    """D1: δ > 0.15 → increased; δ < −0.15 → decreased; else stayed_same."""
    return _where((delta > 0.15, 2), (delta < -0.15, 0), default=1)


def bin_d2(delta, valid):
    """D2: missing baseline → no_baseline; δ > 1 → differs_more_than_1; else within_1."""
    return _where((~np.asarray(valid, bool), 2), (delta > 1, 1), default=0)


def bin_e1(late, work, social):
    """E1: no late nights → no_late_nights; work share > .5 → work; social share > .5 → social."""
    return _where(
        (late == 0, 3),
        (_safe_div(work, late) > 0.5, 0),
        (_safe_div(social, late) > 0.5, 1),
        default=2,
    )


def bin_e2_ratio(r):
    """E2 ratio thresholds: > 0.6 → yes_more_than_60; < 0.3 → no_fewer_than_30; else between."""
    return _where((r > 0.6, 2), (r < 0.3, 0), default=1)


def bin_e2(skip, caused):
    """E2: ≤ 2 skip days → between_30_60 (a substantive default, spec §5.7), else the ratio."""
    return np.where(skip <= 2, np.int8(1), bin_e2_ratio(_safe_div(caused, skip))).astype(np.int8)


def bin_f1(count, has_social=True):
    """F1: no social days → no_social_activities; ≤ 3 → 0_to_3; ≤ 6 → 4_to_6; else 7_or_more."""
    return _where((~np.asarray(has_social, bool), 3), (count <= 3, 0), (count <= 6, 1), default=2)


def bin_f2(inactive, missing):
    """F2: both 0 → inactive; both > 0 → both_occurred; missing > inactive → yes_tracker_missing."""
    return _where(
        ((inactive == 0) & (missing == 0), 0),
        ((inactive > 0) & (missing > 0), 1),
        (missing > inactive, 2),
        default=0,
    )


def bin_f3(unclear, off):
    """F3: both > 0 → both_occurred; unclear > truly_off → yes_worked_despite_no_entry."""
    return _where(((unclear > 0) & (off > 0), 1), (unclear > off, 2), default=0)


def bin_share70(r, has_any):
    """G1/G2: none → edge (3); r > 0.7 → third label; r < 0.3 → first label; else mix."""
    return _where((~np.asarray(has_any, bool), 3), (r > 0.7, 2), (r < 0.3, 0), default=1)


def bin_count_ctrl1(n):
    """Ctrl1: ≤ 1 → 0_to_1_days; ≤ 3 → 2_to_3_days; else 4_or_more."""
    return _where((n <= 1, 0), (n <= 3, 1), default=2)


def bin_count_ctrl2(n):
    """Ctrl2: 0 → 0_nights; ≤ 2 → 1_to_2; else 3_or_more."""
    return _where((n == 0, 0), (n <= 2, 1), default=2)


# ---------------------------------------------------------------- label functions
def ground_truth_codes(tb: Testbed) -> GroundTruth:
    """Ground-truth codes for every persona and question (spec §2.8).

    Returns
    -------
    codes : ndarray of shape (P, 18), int8
        Display-order answer codes, questions in :data:`~core.testbed.questions.QIDS` order.
    stats : dict
        ``stats[qid]`` maps names to the (P,) statistics the rule used (for details and
        teaching views).
    """
    e, pl, dv, ob, pr = tb.events, tb.planner, tb.device, tb.objective, tb.profile
    wk = IS_WEEKEND[None, :]
    s: dict[str, dict[str, np.ndarray]] = {}

    g = (e["duration_h"] >= 7.0).sum(1)
    s["A1"] = {"good_nights": g}

    workday = ~wk | e["worked_on_weekend"]
    long_days = (workday & (e["hours"] > 9.0)).sum(1)
    s["A2"] = {"overtime_days": long_days, "workdays": workday.sum(1)}

    home, meals = e["home_cooked"].sum(1), e["meals"].sum(1)
    s["A3"] = {"home": home, "total": meals, "ratio": _safe_div(home, meals)}

    p = pr["ex_days_per_week"]
    actual = e["did_exercise"].sum(1) / (30 / 7)
    s["B2"] = {"profile": p, "actual": actual, "delta": actual - p}

    w = (e["worked_on_weekend"] & wk).sum(1)
    s["B3"] = {"style": pr["afterhours_style"], "worked": w,
               "weekend_days": np.full(tb.n, int(IS_WEEKEND.sum()))}

    plan = pl["social_intent"][:, LAST14]
    realized = (plan & (e["n_act"][:, LAST14] >= 1)).sum(1)
    s["C2"] = {"realized": realized, "plan_days": plan.sum(1)}

    has_target = pl["bedtime_min"][:, LAST14] >= 0
    diff = e["bedtime_min"][:, LAST14].astype(int) - pl["bedtime_min"][:, LAST14]
    s["C3"] = {"late": ((diff > 20) & has_target).sum(1),
               "early": ((diff < -20) & has_target).sum(1), "paired": has_target.sum(1)}

    early = e["n_act"][:, FIRST14].sum(1) / 14
    late = e["n_act"][:, REST16].sum(1) / 16
    s["D1"] = {"early": early, "late": late, "delta": late - early}

    mh, mm = e["home_cooked"].sum(1) / 30, e["meals"].sum(1) / 30
    ph, pm = pr["home_cooked_mean"], pr["meals_per_day"]
    s["D2"] = {"profile_meals": pm, "profile_hc": ph, "actual_meals": mm, "actual_hc": mh,
               "delta": np.abs(mh - ph) + np.abs(mm - pm)}

    late_n = e["bedtime_min"] > 1440
    work_n = late_n & e["tag_work_stress"]
    social_n = late_n & ~e["tag_work_stress"] & e["tag_social"]
    s["E1"] = {"late_nights": late_n.sum(1), "work": work_n.sum(1), "social": social_n.sum(1)}

    skip = pl["ex_intended"] & ~e["did_exercise"]
    caused = skip & ((e["hours"] > 8.5) | e["overtime"])
    s["E2"] = {"skip_days": skip.sum(1), "work_caused": caused.sum(1)}

    social = e["n_act"] >= 1
    s["F1"] = {"social_days": social.sum(1), "unplanned": (social & ~pl["social_intent"]).sum(1)}

    rest = ~(dv["available"] & dv["workout"])
    s["F2"] = {"inactive": (rest & ~e["did_exercise"]).sum(1),
               "missing": (rest & e["did_exercise"]).sum(1)}

    no_rec = ~ob["available"]
    s["F3"] = {"no_record_days": no_rec.sum(1), "truly_off": (no_rec & (e["hours"] <= 0)).sum(1),
               "unclear": (no_rec & (e["hours"] > 0)).sum(1)}

    active = e["did_exercise"]
    s["G1"] = {"active": active.sum(1), "intentional": (active & e["intentional"]).sum(1)}
    s["G2"] = {"social_days": social.sum(1),
               "voluntary": (social & ~e["supporting_other"]).sum(1)}

    s["Ctrl1"] = {"outside_days": (e["meals"][:, LAST7] > e["home_cooked"][:, LAST7]).sum(1)}
    s["Ctrl2"] = {"short_nights": (e["duration_h"][:, LAST7] < 6.0).sum(1)}

    codes = np.stack([
        bin_a1(g),
        bin_a2(long_days),
        bin_a3(s["A3"]["ratio"]),
        np.where(np.isnan(p), np.int8(3), bin_b2(s["B2"]["delta"])),
        bin_b3(pr["afterhours_style"], w, s["B3"]["weekend_days"]),
        bin_c2(realized, s["C2"]["plan_days"]),
        bin_c3(s["C3"]["late"], s["C3"]["early"], s["C3"]["paired"]),
        bin_d1(s["D1"]["delta"]),
        bin_d2(s["D2"]["delta"], ~(np.isnan(ph) | np.isnan(pm))),
        bin_e1(s["E1"]["late_nights"], s["E1"]["work"], s["E1"]["social"]),
        bin_e2(s["E2"]["skip_days"], s["E2"]["work_caused"]),
        bin_f1(s["F1"]["unplanned"], s["F1"]["social_days"] > 0),
        bin_f2(s["F2"]["inactive"], s["F2"]["missing"]),
        bin_f3(s["F3"]["unclear"], s["F3"]["truly_off"]),
        bin_share70(_safe_div(s["G1"]["intentional"], s["G1"]["active"]), s["G1"]["active"] > 0),
        bin_share70(_safe_div(s["G2"]["voluntary"], s["G2"]["social_days"]),
                    s["G2"]["social_days"] > 0),
        bin_count_ctrl1(s["Ctrl1"]["outside_days"]),
        bin_count_ctrl2(s["Ctrl2"]["short_nights"]),
    ], axis=1).astype(np.int8)
    return codes, s


def _detail(qid: str, st: dict[str, np.ndarray], i: int) -> str:
    v = {k: a[i] for k, a in st.items()}
    match qid:
        case "A1":
            return f"good_nights={v['good_nights']}/30"
        case "A2":
            return f"overtime_days={v['overtime_days']}/{v['workdays']}"
        case "A3":
            return f"home={v['home']}/total={v['total']} ratio={v['ratio']:.3f}"
        case "B2":
            if np.isnan(v["profile"]):
                return "profile=missing"
            return (f"profile={v['profile']:.1f}/wk actual={v['actual']:.2f}/wk "
                    f"delta={v['delta']:+.2f}")
        case "B3":
            if v["style"] < 0:
                return "identity=none"
            return (f"identity={AFTERHOURS_STYLES[v['style']]} worked={v['worked']}/"
                    f"{v['weekend_days']} ratio={v['worked'] / v['weekend_days']:.3f}")
        case "C2":
            if v["plan_days"] == 0:
                return "plan_days=0"
            return (f"realized={v['realized']}/{v['plan_days']} "
                    f"ratio={v['realized'] / v['plan_days']:.3f}")
        case "C3":
            on_time = v["paired"] - v["late"] - v["early"]
            return f"late={v['late']} early={v['early']} on_time={on_time} / {v['paired']}"
        case "D1":
            return f"early={v['early']:.3f}/d late={v['late']:.3f}/d delta={v['delta']:+.3f}"
        case "D2":
            if np.isnan(v["profile_meals"]) or np.isnan(v["profile_hc"]):
                return "profile baseline missing"
            return (f"profile_meals={v['profile_meals']:.1f} profile_hc={v['profile_hc']:.1f} "
                    f"actual_meals={v['actual_meals']:.2f} actual_hc={v['actual_hc']:.2f} "
                    f"delta={v['delta']:.3f}")
        case "E1":
            return f"late_nights={v['late_nights']} work={v['work']} social={v['social']}"
        case "E2":
            r = v["work_caused"] / v["skip_days"] if v["skip_days"] else 0.0
            return f"skip_days={v['skip_days']} work_caused={v['work_caused']} ratio={r:.3f}"
        case "F1":
            return f"social_days={v['social_days']} unplanned={v['unplanned']}"
        case "F2":
            return f"inactive={v['inactive']} missing={v['missing']}"
        case "F3":
            return (f"no_record_days={v['no_record_days']} truly_off={v['truly_off']} "
                    f"unclear={v['unclear']}")
        case "G1":
            r = v["intentional"] / v["active"] if v["active"] else 0.0
            return f"intentional={v['intentional']}/{v['active']} ratio={r:.3f}"
        case "G2":
            r = v["voluntary"] / v["social_days"] if v["social_days"] else 0.0
            return f"voluntary={v['voluntary']}/{v['social_days']} ratio={r:.3f}"
        case "Ctrl1":
            return f"outside_days={v['outside_days']}/7"
        case _:
            return f"short_nights={v['short_nights']}/7"


def ground_truth(tb: Testbed, *, details: bool = True) -> pd.DataFrame:
    """Ground truth as a long table, one row per persona × question.

    Returns
    -------
    DataFrame with columns ``seed, persona_id, question_id, answer, detail`` (``detail`` is a
    human-readable account of the counts, as in the release's ``derivation_detail``; empty
    when ``details=False``).
    """
    codes, stats = ground_truth_codes(tb)
    n = tb.n
    labels = [np.asarray(q.labels, dtype=object)[codes[:, j]] for j, q in enumerate(QUESTIONS)]
    frame = pd.DataFrame({
        "seed": np.repeat(tb.personas["seed"].to_numpy(), len(QIDS)),
        "persona_id": np.repeat(tb.personas["persona_id"].to_numpy(), len(QIDS)),
        "question_id": np.tile(np.asarray(QIDS, dtype=object), n),
        "answer": np.stack(labels, axis=1).reshape(-1),
    })
    if details:
        frame["detail"] = [_detail(q, stats[q], i) for i in range(n) for q in QIDS]
    else:
        frame["detail"] = ""
    return frame
