"""Direct-readout atoms μ*(s, q): each source's own records read deterministically.

Source: the benchmark specification §2.9 and the quirks of §5 (items 7, 8, 12, 13). The
released code calls these "oracle atoms"; every fit and calibration uses them.

Conventions
-----------
* Output is an int8 array ``(P, 18, 5)``: questions in ``QIDS`` order, sources in ``SOURCES``
  order (profile, planner, self-report, objective, device); ``-1`` is ⊥ (no atom).
* Only the informative cells of spec §2.4 are filled, except that a missing precondition of
  B2, B3, C2, C3 or D2 gives **all five** sources the edge label (quirk §5.8).
* Where the spec is silent on an empty denominator (no available day at all), the cell is ⊥;
  each such choice is marked "choice:" below.
"""

from __future__ import annotations

import numpy as np

from .labels import (
    FIRST14,
    LAST7,
    LAST14,
    REST16,
    _safe_div,
    _where,
    bin_a1,
    bin_a2,
    bin_a3,
    bin_b2,
    bin_b3,
    bin_c2,
    bin_c3,
    bin_count_ctrl1,
    bin_count_ctrl2,
    bin_d1,
    bin_d2,
    bin_e1,
    bin_e2,
    bin_e2_ratio,
    bin_f1,
    bin_f2,
    bin_f3,
    bin_share70,
)
from .questions import Q_INDEX, QIDS, SOURCES
from .schema import Testbed
from .vocab import IS_WEEKEND

__all__ = ["NULL", "readout"]

NULL = np.int8(-1)
PRO, PLA, SLF, OBJ, DEV = range(5)


def _null_if(cond, codes):
    return np.where(cond, NULL, codes).astype(np.int8)


def readout(tb: Testbed) -> np.ndarray:
    """Direct-readout atoms μ* for every persona, question and source (spec §2.9).

    Returns
    -------
    ndarray of shape (P, 18, 5), int8; ``-1`` marks ⊥.
    """
    n = tb.n
    out = np.full((n, len(QIDS), len(SOURCES)), NULL, dtype=np.int8)
    # μ* reads the sources only, never the latent events
    pl, sr, ob, dv, pr = tb.planner, tb.self_report, tb.objective, tb.device, tb.profile
    wk = IS_WEEKEND[None, :]
    avail_o, avail_d = ob["available"], dv["available"]
    n_o, n_d = avail_o.sum(1), avail_d.sum(1)

    def put(qid, src, codes):
        out[:, Q_INDEX[qid], src] = codes

    # A1 -------------------------------------------------------------- sleep ≥ 7 h nights
    put("A1", SLF, bin_a1((sr["duration_h"] >= 7).sum(1)))
    dev_share = _safe_div((avail_d & (dv["duration_h"] >= 7)).sum(1), n_d)
    put("A1", DEV, _null_if(n_d == 0, bin_a1(np.round(dev_share * 30))))  # choice: ⊥ if none
    put("A1", PLA, bin_a1((pl["duration_h"] >= 7).sum(1)))
    pd_ = pr["duration_h"]
    put("A1", PRO, _null_if(np.isnan(pd_), _where((pd_ >= 7.3, 2), (pd_ >= 6.5, 1), default=0)))

    # A2 -------------------------------------------------------------- long workdays
    sr_workday = ~wk | sr["worked_on_weekend"]
    put("A2", SLF, bin_a2((sr_workday & (sr["hours"] > 9)).sum(1)))
    put("A2", OBJ, bin_a2((avail_o & (ob["work_block_min"] > 540)).sum(1)))
    put("A2", PLA, bin_a2((pl["hours_limit"] > 9).sum(1)))
    hm = pr["hours_mean"]
    put("A2", PRO, _null_if(np.isnan(hm), _where((hm >= 9.5, 2), (hm >= 8.0, 1), default=0)))
    # quirk §5.13: the device never extrapolates from available days
    put("A2", DEV, bin_a2((avail_d & (dv["focus_min"] > 540)).sum(1)))

    # A3 -------------------------------------------------------------- home-cooked share
    put("A3", SLF, bin_a3(_safe_div(sr["home_cooked"].sum(1), sr["meals"].sum(1))))
    put("A3", PLA, bin_a3(pl["home_priority"].mean(1)))
    mpd = pr["meals_per_day"]
    put("A3", PRO, _null_if(np.isnan(mpd) | (mpd == 0),
                            bin_a3(_safe_div(pr["home_cooked_mean"], mpd))))
    delivery = np.where(avail_o, np.maximum(ob["pay_delivery"], 0), 0).sum(1)
    est = np.maximum(0.0, 1 - (_safe_div(delivery, n_o) * 30) / 90)
    put("A3", OBJ, _null_if(n_o == 0, bin_a3(est)))  # choice: ⊥ with no available day

    # B2 -------------------------------------------------------------- exercise vs profile
    p = pr["ex_days_per_week"]
    b2 = np.full((n, 5), NULL, dtype=np.int8)
    b2[:, SLF] = bin_b2(sr["did_exercise"].sum(1) / (30 / 7) - p)
    b2[:, DEV] = _null_if(n_d == 0, bin_b2(_safe_div((avail_d & dv["workout"]).sum(1),
                                                     n_d / 7) - p))
    b2[:, OBJ] = _null_if(n_o == 0, bin_b2(_safe_div((avail_o & ob["exercise_session"]).sum(1),
                                                     n_o / 7) - p))
    b2[:, PLA] = bin_b2(pl["ex_intended"].sum(1) / (30 / 7) - p)
    b2[:, PRO] = 1  # the profile always agrees with itself
    b2[np.isnan(p)] = 3  # quirk §5.8: the edge label is broadcast to all five sources
    out[:, Q_INDEX["B2"]] = b2

    # B3 -------------------------------------------------------------- weekend work vs style
    style = pr["afterhours_style"]
    b3 = np.full((n, 5), NULL, dtype=np.int8)
    n_wk = int(IS_WEEKEND.sum())
    b3[:, SLF] = bin_b3(style, (sr["worked_on_weekend"] & wk).sum(1), np.full(n, n_wk))
    ow = avail_o & wk
    b3[:, OBJ] = _null_if(ow.sum(1) == 0,
                          bin_b3(style, (ow & (ob["work_block_min"] > 0)).sum(1), ow.sum(1)))
    dw = avail_d & wk
    # an absent work_session counts as 0 focus minutes (focus_min = -1 there)
    b3[:, DEV] = _null_if(dw.sum(1) == 0,
                          bin_b3(style, (dw & (dv["focus_min"] > 0)).sum(1), dw.sum(1)))
    b3[:, PRO] = 0
    b3[style < 0] = 2
    out[:, Q_INDEX["B3"]] = b3

    # C2 -------------------------------------------------------------- social plans realised
    plan = pl["social_intent"][:, LAST14]
    n_plan = plan.sum(1)
    c2 = np.full((n, 5), NULL, dtype=np.int8)
    c2[:, SLF] = bin_c2((plan & (sr["n_act"][:, LAST14] >= 1)).sum(1), n_plan)
    c2[:, PLA] = 2  # the planner always believes its plans came true
    plan_avail = plan & avail_o[:, LAST14]
    hit = plan_avail & (ob["social_event"][:, LAST14] | ob["pay_venue"][:, LAST14])
    # quirk §5.13: divided by all plan days, not by the available ones
    c2[:, OBJ] = _null_if(plan_avail.sum(1) == 0, bin_c2(hit.sum(1), n_plan))
    c2[n_plan == 0] = 3
    out[:, Q_INDEX["C2"]] = c2

    # C3 -------------------------------------------------------------- bedtime vs target
    target = pl["bedtime_min"][:, LAST14].astype(int)
    has_t = target >= 0

    def c3(bed, ok):
        d = bed[:, LAST14].astype(int) - target
        ok = ok & has_t
        return _null_if(ok.sum(1) == 0, bin_c3(((d > 20) & ok).sum(1), ((d < -20) & ok).sum(1),
                                                ok.sum(1)))

    c3_all = np.full((n, 5), NULL, dtype=np.int8)
    c3_all[:, SLF] = c3(sr["bedtime_min"], np.ones_like(has_t))
    c3_all[:, DEV] = c3(dv["bedtime_min"], avail_d[:, LAST14])
    c3_all[has_t.sum(1) == 0] = 3
    out[:, Q_INDEX["C3"]] = c3_all

    # D1 -------------------------------------------------------------- social trend
    def trend(x):
        return bin_d1(x[:, REST16].sum(1) / 16 - x[:, FIRST14].sum(1) / 14)

    put("D1", SLF, trend(sr["n_act"]))
    put("D1", PLA, trend(pl["social_intent"]))
    # quirk §5.13: split the *available* days at their midpoint
    rank = np.cumsum(avail_o, axis=1)
    half = (n_o // 2)[:, None]
    first = avail_o & (rank <= half)
    second = avail_o & (rank > half)
    n1, n2 = first.sum(1), second.sum(1)
    ev = ob["social_event"]
    d_obj = _safe_div((second & ev).sum(1), n2) - _safe_div((first & ev).sum(1), n1)
    put("D1", OBJ, _null_if((n1 == 0) | (n2 == 0), bin_d1(d_obj)))

    # D2 -------------------------------------------------------------- diet vs baseline
    ph, pm = pr["home_cooked_mean"], pr["meals_per_day"]
    valid = ~(np.isnan(ph) | np.isnan(pm))
    d2 = np.full((n, 5), NULL, dtype=np.int8)
    delta = np.abs(sr["home_cooked"].sum(1) / 30 - ph) + np.abs(sr["meals"].sum(1) / 30 - pm)
    d2[:, SLF] = bin_d2(delta, valid)
    d2[:, PRO] = 0
    d2[~valid] = 2
    out[:, Q_INDEX["D2"]] = d2

    # E1 -------------------------------------------------------------- late-night cause
    late = sr["bedtime_min"] > 1440
    work = late & sr["overtime"]  # already suppressed by ur/cr and needs hours > 9
    social = late & ~sr["overtime"] & (sr["n_act"] >= 1)
    put("E1", SLF, bin_e1(late.sum(1), work.sum(1), social.sum(1)))
    dl = avail_d & (dv["bedtime_min"] > 1440)
    dl_n = dl.sum(1)
    # the device can never say "social": work if late_finish on more than half
    put("E1", DEV, _where((dl_n == 0, 3), (_safe_div((dl & dv["late_finish"]).sum(1), dl_n) > 0.5,
                                             0), default=2))
    pln = pl["bedtime_min"] > 1440
    pln_n = pln.sum(1)
    pw = pln & ((pl["hours_limit"] > 8) | ~pl["avoid_overtime"])
    put("E1", PLA, _where((pln_n == 0, 3), (_safe_div(pw.sum(1), pln_n) > 0.5, 0), default=2))
    # quirk §5.13: the objective log ignores bedtimes altogether
    wd = avail_o & (ob["work_block_min"] > 540)
    sd = avail_o & ~wd & ob["social_event"]
    put("E1", OBJ, _null_if(n_o == 0, _where((_safe_div(wd.sum(1), n_o) > 0.3, 0),
                                             (_safe_div(sd.sum(1), n_o) > 0.3, 1), default=2)))

    # E2 -------------------------------------------------------------- exercise skip cause
    sk = pl["ex_intended"] & ~sr["did_exercise"]
    put("E2", SLF, bin_e2(sk.sum(1), (sk & ((sr["hours"] > 8.5) | sr["overtime"])).sum(1)))
    ni = pl["ex_intended"].sum(1)
    long_p = (pl["ex_intended"] & (pl["hours_limit"] > 8)).sum(1)
    put("E2", PLA, _null_if(ni == 0, bin_e2_ratio(_safe_div(long_p, ni))))
    nw = avail_d & ~dv["workout"]
    long_d = nw & (dv["late_finish"] | (dv["focus_min"] > 480))
    put("E2", DEV, _null_if(nw.sum(1) == 0, bin_e2_ratio(_safe_div(long_d.sum(1), nw.sum(1)))))
    ne = avail_o & ~ob["exercise_session"]
    long_o = ne & (ob["work_block_min"] > 540)
    put("E2", OBJ, _null_if(ne.sum(1) == 0, bin_e2_ratio(_safe_div(long_o.sum(1), ne.sum(1)))))
    ot = pr["overtime_share"]
    put("E2", PRO, _null_if(np.isnan(ot), bin_e2_ratio(np.nan_to_num(ot))))

    # F1 -------------------------------------------------------------- unplanned social days
    intent = pl["social_intent"]
    s_soc = sr["n_act"] >= 1
    put("F1", SLF, bin_f1((s_soc & ~intent).sum(1), s_soc.sum(1) > 0))
    o_soc = avail_o & ob["social_event"]
    # choice: "none" read as no social_event day at all, like the self-report rule
    put("F1", OBJ, bin_f1((o_soc & ~intent).sum(1), o_soc.sum(1) > 0))
    n_int = intent.sum(1)
    # quirk §5.13: the planner never says 7_or_more
    put("F1", PLA, _where((n_int >= 10, 0), (n_int >= 5, 1), default=0))
    sd_ = pr["social_dpw"]
    cnt = np.trunc(np.nan_to_num(sd_) * 4.3 * 0.5)
    put("F1", PRO, _null_if(np.isnan(sd_), np.where(sd_ == 0, np.int8(3), bin_f1(cnt))))

    # F2 -------------------------------------------------------------- tracker missing vs off
    rest = ~(avail_d & dv["workout"])
    # the third branch (available, undetected, self-report says exercised) is reachable here
    put("F2", SLF, bin_f2((rest & ~sr["did_exercise"]).sum(1), (rest & sr["did_exercise"]).sum(1)))
    unav = (~avail_d).sum(1)
    wo = (avail_d & dv["workout"]).sum(1)
    put("F2", DEV, _where((unav == 0, 0), ((wo > 0) & (unav > 0), 1), (unav / 30 > 0.3, 2),
                          default=0))
    n_ex = pl["ex_intended"].sum(1)
    put("F2", PLA, _where((n_ex >= 15, 2), (n_ex >= 5, 1), default=0))
    rate = _safe_div((avail_o & ob["exercise_session"]).sum(1), n_o)
    put("F2", OBJ, _null_if(n_o == 0, _where((rate > 0.3, 2), (rate > 0.1, 1), default=0)))
    put("F2", PRO, _null_if(np.isnan(p), _where((p >= 3, 2), (p >= 1, 1), default=0)))

    # F3 -------------------------------------------------------------- timesheet missing vs off
    nr = ~avail_o
    s_w = nr & (sr["hours"] > 0)
    put("F3", SLF, bin_f3(s_w.sum(1), (nr & ~(sr["hours"] > 0)).sum(1)))
    d_w = nr & avail_d & (dv["focus_min"] > 30)
    put("F3", DEV, bin_f3(d_w.sum(1), (nr & ~(avail_d & (dv["focus_min"] > 30))).sum(1)))
    p_w = nr & (pl["hours_limit"] > 0)
    put("F3", PLA, bin_f3(p_w.sum(1), (nr & ~(pl["hours_limit"] > 0)).sum(1)))
    put("F3", PRO, _null_if(np.isnan(hm), _where((hm > 6, 2), (hm > 3, 1), default=0)))

    # G1 -------------------------------------------------------------- deliberate exercise
    s_ex = sr["did_exercise"]
    put("G1", SLF, bin_share70(_safe_div((s_ex & (sr["exercise_min"] >= 30)).sum(1), s_ex.sum(1)),
                               s_ex.sum(1) > 0))
    put("G1", PLA, _null_if(pl["ex_intended"].sum(1) == 0, np.full(n, 2, np.int8)))
    dwo = avail_d & dv["workout"]
    g1d = bin_share70(_safe_div((dwo & (dv["active_min"] >= 30)).sum(1), dwo.sum(1)), True)
    no_move = ~(avail_d & (dv["active_min"] > 10)).any(1)
    put("G1", DEV, np.where(dwo.sum(1) > 0, g1d, np.where(no_move, np.int8(3), NULL)))

    # G2 -------------------------------------------------------------- voluntary social
    vol = s_soc & ~sr["supporting_other"]
    put("G2", SLF, bin_share70(_safe_div(vol.sum(1), s_soc.sum(1)), s_soc.sum(1) > 0))
    put("G2", OBJ, np.where(o_soc.any(1), np.int8(1), np.int8(3)))
    put("G2", PLA, np.where(intent.any(1), np.int8(2), np.int8(3)))
    put("G2", PRO, _null_if(np.isnan(sd_), np.where(sd_ == 0, np.int8(3), np.int8(1))))

    # Ctrl1 ----------------------------------------------------------- outside meals, last 7
    put("Ctrl1", SLF, bin_count_ctrl1((sr["meals"][:, LAST7] > sr["home_cooked"][:, LAST7]).sum(1)))
    put("Ctrl1", PLA, bin_count_ctrl1((~pl["home_priority"][:, LAST7]).sum(1)))
    outside = np.round(np.maximum(0, pm - ph) * 7)
    put("Ctrl1", PRO, _null_if(~valid, bin_count_ctrl1(np.nan_to_num(outside))))

    # Ctrl2 ----------------------------------------------------------- short nights, last 7
    put("Ctrl2", SLF, bin_count_ctrl2((sr["duration_h"][:, LAST7] < 6).sum(1)))
    # the last seven *available* device days, wherever they fall
    from_end = np.cumsum(avail_d[:, ::-1], axis=1)[:, ::-1]
    last7 = avail_d & (from_end <= 7)
    put("Ctrl2", DEV, _null_if(n_d == 0, bin_count_ctrl2((last7 & (dv["duration_h"] < 6)).sum(1))))
    put("Ctrl2", PLA, bin_count_ctrl2((pl["duration_h"][:, LAST7] < 6).sum(1)))
    return out
