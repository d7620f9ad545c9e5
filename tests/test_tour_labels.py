"""The tour's stops on shipped data (issue 22 point 3): each selected example really shows its
failure, recomputed here from the shipped files without the code under test.

* copy-cluster: majority vote, the copy group and the one-vote count recounted with pandas
  from ``data/conflict/flight-2011-12-01/flight_2011-12-01.csv``;
* incomplete-reference: the two agreement rules rebuilt by bisection from the answers' agreement
  counts and their Brier scores recomputed under both markings;
* human-pilot: the right-call share recomputed from one simulation's intervals, and the
  full-frame gaps from the rebuilt rules.

Every link is parsed with the target page's own parameter specs (read from the page's source,
so no Streamlit runs), and every acronym or symbol a stop shows is checked against the glossary.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from core.calibration.pilot import simulate_pilots
from core.fusion.views import what_if_items
from core.glossary import find
from core.tour import ORDER, TourData, compute_stop, stops_labels
from core.tour._labels_copies import flight_copies
from core.tour._labels_pilot import BUDGETS, REPS, SETTLE, settling_budget
from core.tour._labels_reference import select_pair
from core.urlparams import ChoiceParam, FlagParam, NumberParam, parse_query

ROOT = Path(__file__).resolve().parents[1]
FLIGHT_CSV = ROOT / "data" / "conflict" / "flight-2011-12-01" / "flight_2011-12-01.csv"
ANSWERS = ROOT / "data" / "nq301" / "answers.parquet"
KEYS = ("copy-cluster", "incomplete-reference", "human-pilot")


@pytest.fixture(scope="module")
def views():
    """The three views over one TourData without a store (memo shared, as on the page)."""
    data = TourData()
    return {k: compute_stop(k, data) for k in KEYS}


# ----------------------------------------------------------------------------- helpers
def _page_specs(*paths: Path) -> dict[str, object]:
    """The URL specs a page (and its glue) declares at module level, by evaluating their
    assignments in order; names a spec needs from elsewhere come from the files given first."""
    ns: dict[str, object] = {"ChoiceParam": ChoiceParam, "NumberParam": NumberParam,
                             "FlagParam": FlagParam, "tuple": tuple, "dict": dict,
                             "round": round}
    for path in paths:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name)
                                                    for t in node.targets):
                try:
                    value = eval(compile(ast.Expression(node.value), str(path), "eval"), ns)
                except Exception:  # an assignment that needs the page's imports: not a spec
                    continue
                for t in node.targets:
                    ns[t.id] = value
    return {v.key: v for v in ns.values() if isinstance(v, (ChoiceParam, NumberParam,
                                                             FlagParam))}


def _check_link(link, specs) -> dict:
    raw = {k: [v] for k, v in link}
    missing = [k for k, _ in link if k not in specs]
    assert not missing, f"the page has no parameter {missing}"
    parsed = parse_query(raw, list(specs.values()))
    assert not parsed.notices, parsed.notices
    return dict(parsed.values)


SEED003 = ROOT / "pages" / "_shared" / "seed003.py"
TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*|T_[a-z]+)")
#: Not this project's jargon (tests/test_glossary.py's list): formats, system and model names.
ORDINARY = {"URL", "CSV", "HTML", "PNG", "JSON", "QA", "GPT", "BERT", "DPR", "BEM", "API", "ID",
            "OK", "MB"}


def _strings(stop, view) -> list[str]:
    out = [stop.title, stop.section, stop.failure, stop.rule, stop.question, stop.remedy,
           stop.control, stop.teacher.ask, stop.teacher.wrong_answer, stop.teacher.follow_up,
           view.answer, view.reason, view.note]
    for pairs in (view.example, view.settings, view.evidence):
        out += [s for pair in pairs for s in pair]
    if view.chart is not None:
        ch = view.chart
        out += [ch.title, ch.x_title, ch.y_title, ch.caption, ch.marker_label]
        for col in ("series", "group", "who", "text"):
            if col in ch.data.columns:
                out += [str(v) for v in ch.data[col].unique()]
    return out


# ----------------------------------------------------------------------------- all stops
def test_the_module_defines_exactly_its_keys_in_the_tour_order():
    keys = [s.key for s in stops_labels.STOPS]
    assert keys == list(KEYS)
    assert [k for k in ORDER if k in KEYS] == keys


@pytest.mark.parametrize("key", KEYS)
def test_every_stop_shows_its_failure_without_a_store(views, key):
    v = views[key]
    assert v.key == key and v.shows_failure and v.example and v.evidence and v.link
    assert v.answer.strip() and v.reason.strip() and v.chart is not None


@pytest.mark.parametrize("key", KEYS)
def test_every_token_a_stop_shows_is_in_the_glossary(views, key):
    stop = next(s for s in stops_labels.STOPS if s.key == key)
    text = " ".join(_strings(stop, views[key]))
    if key == "copy-cluster":  # the flight's own name: airline and airport codes, data
        flight = dict(views[key].example)["Flight"].split(" ")[0]
        text = text.replace(flight, "")
    bad = sorted({t.rstrip("_") for t in TOKEN.findall(text)
                  if t not in ORDINARY and find(t) is None and find(t.split("_")[0]) is None})
    assert not bad, f"{key} shows {bad}, which no glossary term lists"


# ----------------------------------------------------------------------------- copies
@pytest.fixture(scope="module")
def flight():
    return pd.read_csv(FLIGHT_CSV, dtype=str, keep_default_na=False)


def _majority(claims: pd.Series, weights=None) -> tuple[str, float, float]:
    """Most votes (ties: the alphabetically first), its votes, and the best other's."""
    w = pd.Series(1.0 if weights is None else weights, index=claims.index)
    votes = w.groupby(claims.to_numpy()).sum().sort_index()
    top = votes[votes == votes.max()].index[0]
    rest = votes.drop(top)
    return top, float(votes[top]), float(rest.max()) if len(rest) else 0.0


def test_copy_cluster_majority_follows_the_copies_to_a_wrong_time(views, flight):
    v = views["copy-cluster"]
    ex = dict(v.example)
    fl = ex["Flight"].split(" ")[0]
    what = ex["What the sites report"].removeprefix("its ").removesuffix(" time")
    item = f"{fl}|{what[0].upper()}{what[1:]}"
    rows = flight[flight["item"] == item]
    assert len(rows) == int(ex["Web sites that answer"])
    group_label = next(k for k in ex if k.startswith("Copy group "))
    members = ex[group_label].split(", ")
    truth = rows["truth"].iloc[0]
    top, n_top, n_next = _majority(rows["claim"])
    mine = rows[rows["source"].isin(members)]
    assert len(mine) >= 2 and mine["claim"].nunique() == 1
    assert top == mine["claim"].iloc[0] != truth and n_top > n_next  # a plain vote, no tie
    # the chart shows the same: majority vote wrong, ACCU + DEPEN and the truth on the truth
    ch = v.chart.data.set_index("who")
    assert ch.loc["majority vote", "answer"] == top and ch.loc["majority vote", "status"] == "wrong"
    assert ch.loc["ACCU + DEPEN", "answer"] == truth == ch.loc["the truth", "answer"]
    srcs = ch[ch["role"] == "source"]
    assert dict(zip(srcs.index, srcs["answer"], strict=True)) == dict(
        zip(rows["source"], rows["claim"], strict=True))
    assert ((srcs["answer"] == truth) == (srcs["status"] == "right")).all()
    # every copy group counted as one vote: the truth wins
    _, copies = flight_copies()
    group_of = {m: k.label for k in copies.clusters for m in k.members}
    g = rows["source"].map(group_of)
    size = g.map(g.value_counts())
    weights = np.where(g.notna(), 1.0 / size.fillna(1.0), 1.0)
    top1, n1, next1 = _majority(rows["claim"], weights)
    assert top1 == truth and n1 > next1 + 1e-9


def test_copy_cluster_group_copies_and_its_counts_recount(views, flight):
    ex = dict(views["copy-cluster"].example)
    members = ex[next(k for k in ex if k.startswith("Copy group "))].split(", ")
    wide = flight.pivot(index="item", columns="source", values="claim")
    for i, a in enumerate(members):  # every two share >= 50 items and agree on >= 99 %
        for b in members[i + 1:]:
            both = wide[[a, b]].dropna()
            assert len(both) >= 50 and (both[a] == both[b]).mean() >= 0.99
    gold = flight[flight["truth"] != ""]
    mv = gold.groupby("item")["claim"].agg(lambda s: _majority(s)[0])
    truth = gold.groupby("item")["truth"].first()
    common = (gold[gold["source"].isin(members)].groupby("item")["claim"]
              .agg(lambda s: s.iloc[0] if len(s) >= 2 and s.nunique() == 1 else None))
    common = common.dropna()
    outvoted = int(((mv.reindex(common.index) == common) & (common != truth.reindex(common.index)))
                   .sum())
    right = int((mv == truth).sum())
    ev = dict(views["copy-cluster"].evidence)
    assert ev["Items where majority vote took their wrong value"] == \
        f"{outvoted} of {len(truth)} items with a known true value"
    assert ev["Right overall"].startswith(f"majority vote {100 * right / len(truth):.1f}")


def test_copy_cluster_item_has_the_largest_group_share_among_qualifying_items(views, flight):
    fit, copies = flight_copies()
    head = copies.headline
    c = fit.claims
    dep = pd.Series(np.asarray(c.classes, object)[fit.results["accu_depen"].labels],
                    index=list(c.items))
    group_of = {m: k.label for k in copies.clusters for m in k.members}
    best = []
    for item, rows in flight[flight["truth"] != ""].groupby("item"):
        if item.endswith("gate"):
            continue
        mine = rows[rows["source"].isin(head.members)]
        truth = rows["truth"].iloc[0]
        if len(mine) < 2 or mine["claim"].nunique() != 1 or mine["claim"].iloc[0] == truth:
            continue
        top, n_top, n_next = _majority(rows["claim"])
        g = rows["source"].map(group_of)
        w = np.where(g.notna(), 1.0 / g.map(g.value_counts()).fillna(1.0), 1.0)
        top1, n1, next1 = _majority(rows["claim"], w)
        if (top != mine["claim"].iloc[0] or n_top <= n_next or top1 != truth
                or n1 <= next1 + 1e-9 or dep[item] != truth):
            continue
        best.append((-len(mine) / n_top, -len(rows), item))
    assert best
    chosen = sorted(best)[0][2]
    ex = dict(views["copy-cluster"].example)
    assert chosen.startswith(ex["Flight"].split(" ")[0] + "|")
    assert dict(views["copy-cluster"].evidence)["Items that pass the rule's filters"] \
        .startswith(f"{len(best)} of ")


def test_copy_cluster_link_opens_the_flight_set_on_the_your_data_page(views):
    specs = _page_specs(ROOT / "pages" / "_shared" / "fusion.py")
    link = dict(views["copy-cluster"].link)
    item = link.pop("yd_item")  # the what-if's item: read by the page itself, not a widget spec
    assert _check_link(tuple(link.items()), specs) == {"yd_set": "flight"}
    assert item in what_if_items(*_flight_fit_and_copies())
    assert "yd_item" in (ROOT / "pages" / "11_Your_data.py").read_text()
    assert stops_labels.COPY_CLUSTER.page == "pages/11_Your_data.py"


# ----------------------------------------------------------------------------- reference
@pytest.fixture(scope="module")
def answers():
    return pd.read_parquet(ANSWERS)


def _agreement_rule(answers: pd.DataFrame, mean: float) -> np.ndarray:
    """Smoothed agreement shifted on the logit scale to the given mean, by bisection."""
    s = (answers["n_agree"].to_numpy(float) + 0.5) / (answers["n_systems"].to_numpy(float) + 1)
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expit(logit(s) + mid).mean() < mean else (lo, mid)
    return expit(logit(s) + (lo + hi) / 2)


def _rule_means(view) -> tuple[float, float]:
    ex = dict(view.example)
    return tuple(float(re.search(r"average confidence ([0-9.]+)", ex[r]).group(1))
                 for r in ("Rule A", "Rule B"))


def test_incomplete_reference_brier_scores_reverse_between_the_markings(views, answers):
    v = views["incomplete-reference"]
    ma, mb = _rule_means(v)
    a, b = _agreement_rule(answers, ma), _agreement_rule(answers, mb)
    y, z = answers["y"].to_numpy(float), answers["z"].to_numpy(float)
    brier = {("exact match", "A"): np.mean((a - z) ** 2),
             ("exact match", "B"): np.mean((b - z) ** 2),
             ("people", "A"): np.mean((a - y) ** 2), ("people", "B"): np.mean((b - y) ** 2)}
    bars = v.chart.data
    got = {(g.removeprefix("marked by "), "A" if s.startswith("cautious") else "B"): val
           for g, s, val in zip(bars["group"], bars["series"], bars["value"], strict=True)}
    assert got.keys() == brier.keys()
    for k, val in brier.items():
        assert got[k] == pytest.approx(val, abs=1e-9)
    by_em = brier[("exact match", "A")] < brier[("exact match", "B")]
    by_people = brier[("people", "A")] < brier[("people", "B")]
    assert by_em != by_people  # the reversal
    ev = dict(v.evidence)
    assert ev["Marked right by exact match"].startswith(f"{100 * z.mean():.1f}")
    assert ev["Marked right by people"].startswith(f"{100 * y.mean():.1f}")


def test_incomplete_reference_pair_has_the_largest_clear_margin(views, answers):
    data = TourData()
    compute_stop("incomplete-reference", data)
    rp = data.memo("labels:nq-pairs", lambda: None)
    y, z = answers["y"].to_numpy(float), answers["z"].to_numpy(float)
    means = [float(r.split("@")[1]) for r in rp.rules["rule"]]
    rules = {m: _agreement_rule(answers, m) for m in means}
    ma, mb = _rule_means(views["incomplete-reference"])
    chosen = None
    for p in rp.pairs.itertuples():
        a, b = rules[float(p.rule_a.split("@")[1])], rules[float(p.rule_b.split("@")[1])]
        gz = np.mean((a - z) ** 2) - np.mean((b - z) ** 2)
        gy = np.mean((a - y) ** 2) - np.mean((b - y) ** 2)
        assert p.gap_z == pytest.approx(gz, abs=1e-9) and p.gap_y == pytest.approx(gy, abs=1e-9)
        clear = (p.gap_z_lo > 0 or p.gap_z_hi < 0) and (p.gap_y_lo > 0 or p.gap_y_hi < 0)
        if gz * gy < 0 and clear:
            key = (-min(abs(gz), abs(gy)), p.rule_a, p.rule_b)
            chosen = min(chosen, key) if chosen else key
    assert chosen[1:] == (f"agree@{ma:.2f}", f"agree@{mb:.2f}")


def test_select_pair_filters_and_breaks_ties_by_name():
    pairs = pd.DataFrame({
        "rule_a": ["b", "a", "c", "d"], "rule_b": ["x", "x", "x", "x"],
        "gap_z": [-0.2, -0.2, -0.5, 0.3], "gap_y": [0.1, 0.1, 0.4, 0.2],
        "gap_z_lo": [-0.3, -0.3, -0.6, 0.2], "gap_z_hi": [-0.1, -0.1, -0.4, 0.4],
        "gap_y_lo": [0.05, 0.05, -0.01, 0.1], "gap_y_hi": [0.2, 0.2, 0.8, 0.3]})
    # row 2 has the largest margin but its interval under people crosses zero; row 3 does not
    # reverse; rows 0 and 1 tie, and "a" comes first
    assert select_pair(pairs) == 1
    assert select_pair(pairs.iloc[2:]) is None
    with pytest.raises(ValueError, match="bootstrap"):
        select_pair(pairs.assign(gap_z_lo=np.nan, gap_y_lo=np.nan))


def test_incomplete_reference_link_opens_the_pair_on_the_ranking_reversal_page(views):
    specs = _page_specs(SEED003, ROOT / "pages" / "6_Ranking_reversal.py")
    got = _check_link(views["incomplete-reference"].link, specs)
    ma, mb = _rule_means(views["incomplete-reference"])
    assert got["rr_data"] == "nq" and got["rr_nq_a"] == f"agree@{ma:.2f}"
    assert got["rr_nq_b"] == f"agree@{mb:.2f}"
    y = pd.read_parquet(ANSWERS, columns=["y"])["y"].mean()
    assert got["rr_prev"] == pytest.approx(round(y, 2))


# ----------------------------------------------------------------------------- pilot
def test_settling_budget_needs_every_larger_budget_to_settle():
    assert settling_budget([10, 20, 50], [0.95, 0.85, 0.92]) == 50
    assert settling_budget([50, 10, 20], [0.92, 0.95, 0.91], share=0.9) == 10
    assert settling_budget([10, 20], [0.5, 0.6]) is None
    with pytest.raises(ValueError, match="one share"):
        settling_budget([10, 20], [0.5])


def _curve(view) -> pd.DataFrame:
    d = view.chart.data
    return d.assign(est=np.where(d["series"].str.contains("judges"), "trisource", "human_only"))


def test_human_pilot_settles_the_people_order_that_exact_match_reverses(views, answers):
    v = views["human-pilot"]
    ma, mb = _rule_means(views["incomplete-reference"])
    a, b = _agreement_rule(answers, ma), _agreement_rule(answers, mb)
    y, z = answers["y"].to_numpy(float), answers["z"].to_numpy(float)
    dy = np.mean((b - y) ** 2) - np.mean((a - y) ** 2)
    dz = np.mean((b - z) ** 2) - np.mean((a - z) ** 2)
    assert dy * dz < 0  # exact match, on every answer, calls the other order
    ex = dict(v.example)
    assert ex["People on every answer say"].startswith(
        f"the {'cautious' if dy > 0 else 'bolder'} rule is better, by {abs(dy):.3f}")
    d = _curve(v)
    assert sorted(d["x"].unique()) == list(BUDGETS)
    ev = dict(v.evidence)
    for est, label in (("human_only", "Needed with people's labels only"),
                       ("trisource", "Needed with the judges' help")):
        part = d[d["est"] == est].sort_values("x")
        ok = part["y"].to_numpy() >= SETTLE
        first = next(i for i in range(len(ok)) if ok[i:].all())
        assert ev[label] == f"{part['x'].iloc[first]} labels"
        assert first == 0 or not ok[first - 1]
        assert part["marker"].to_numpy().nonzero()[0].tolist() == [first]


def test_human_pilot_right_calls_recount_from_one_simulation(views, answers):
    v = views["human-pilot"]
    ma, mb = _rule_means(views["incomplete-reference"])
    frame = pd.DataFrame({"rule_a": _agreement_rule(answers, ma),
                          "rule_b": _agreement_rule(answers, mb),
                          "y": answers["y"].to_numpy(float), "z": answers["z"].to_numpy(float),
                          "weight": 1.0, "cluster": answers["qid"].to_numpy(),
                          "scenario": answers["qid"].to_numpy() % 2,
                          "item_id": answers["item"].to_numpy(),
                          "q_1": answers["z"].to_numpy(float)})
    budget = 50
    sim = simulate_pilots(frame, budget=budget, reps=REPS, design="stratified",
                          budget_kind="usable", insufficient_rate=0.0, beta=np.array([0.0]),
                          seed=budget, heldout=False, rule_a="rule_a", rule_b="rule_b")
    side = sim.lo_human > 0 if sim.delta_y > 0 else sim.hi_human < 0
    right = float(np.mean(~sim.escalate_human & side))
    d = _curve(v)
    shown = d[(d["est"] == "human_only") & (d["x"] == budget)]["y"].iloc[0]
    assert shown == pytest.approx(right, abs=1e-12)


def test_human_pilot_link_opens_the_nq_section_at_the_settling_budget(views):
    specs = _page_specs(SEED003, ROOT / "pages" / "7_Pilot_budget.py")
    got = _check_link(views["human-pilot"].link, specs)
    ma, mb = _rule_means(views["incomplete-reference"])
    assert (got["pb_nq_a"], got["pb_nq_b"]) == (f"agree@{ma:.2f}", f"agree@{mb:.2f}")
    assert got["pb_reps"] == REPS and got["pb_design"] == "stratified"
    assert got["pb_budget"] == views["human-pilot"].chart.marker


def _flight_fit_and_copies():
    from core.fusion.builtin import load_builtin
    from core.fusion.views import copy_view, fit_fusion

    fit = fit_fusion(load_builtin("flight"))
    return fit, copy_view(fit)
