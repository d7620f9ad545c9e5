"""Your data: any table of claims through every resolver, four real data sets and NQ-open's
systems, and sources that copy each other (issue 21 point 7).

Glue over :mod:`core.fusion.views` (through ``pages._shared.fusion``): the data choice gives a
small data key; each panel asks for one view of that key (the copy clusters, the dependence
matrix, the board, the sources, why a learned resolver is no better than majority vote,
contradicted answers, the what-if, the reliability diagrams, NQ-open's two label sources) and
draws the figures of :mod:`core.figures.fusion`. Every number comes from those views.

URL state (:mod:`core.urlparams`, read when the page opens; a refused value gives one plain
notice): ``yd_set``, ``yd_label``, the normalisers ``yd_case``, ``yd_minutes``,
``yd_numeric``, and the panels' ``yd_methods``, ``yd_cov``, ``yd_pair``, ``yd_learned``,
``yd_rel``. An uploaded file cannot live in a URL; the what-if's item and changes are kept per
session. Longer than the 150 lines a page aims for: seven panels, each with its widgets and
its sentences for students.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import hashlib

import pandas as pd
import streamlit as st

from core.figures.fusion import (
    board_figure,
    dependence_figure,
    fusion_reliability_figure,
    what_if_figure,
)
from core.fusion.builtin import builtin_set
from core.fusion.views import METHODS, method
from core.glossary import tip
from core.pages_registry import page
from pages._shared import (
    notice,
    open_page,
    url_number,
    url_pills,
    url_segmented,
    url_select,
    url_slider,
    url_toggle,
)
from pages._shared.cache import cached_figure
from pages._shared.fusion import (
    DATA,
    LABELS,
    METHOD_NAMES,
    P_CASE,
    P_COV,
    P_LABEL,
    P_LEARNED,
    P_METHODS,
    P_MINUTES,
    P_NUMERIC,
    P_PAIR,
    P_REL,
    P_SET,
    PARAMS,
    TERMS,
    board_of,
    choose_upload,
    contradicted_of,
    copies_of,
    fit_of,
    item_claims_of,
    labels_of,
    pairs_of,
    predictions_of,
    reliability_of,
    sources_of,
    what_if_items_of,
    what_if_of,
    whole_table,
    why_of,
)
from pages._shared.params import current
from pages._shared.seed003 import show_figure
from pages._shared.ui import (
    FAVICON,
    download_table,
    escape_markdown,
    glossary_link,
    show_number_table,
    table_height,
)

ME = page("pages/11_Your_data.py")
st.set_page_config(layout="wide", page_title=f"{ME.title} · Arbiter", page_icon=FAVICON)

st.title("Your data: whom to believe when sources disagree?")
st.caption(
    "Web sites report flight times, crowd workers label web pages, QA systems answer "
    "questions, and they contradict each other. A resolver reads every claim and picks an "
    "answer per item. Pick one of the real data sets, or upload your own table of claims, "
    "and see which resolver gets it right, which sources it trusts, and why.")
glossary_link()
#: The what-if's item, in links only (the guided tour's copy-cluster stop opens its item): it
#: is read once, when the page opens on a built-in set, and written back when it changes.
ITEM = "yd_item"
OPENING = open_page("your_data", PARAMS, ignore=(ITEM,))


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage (a no-break space before the sign, so it never wraps)."""
    return "—" if x != x else f"{100 * x:.{digits}f}\u00a0%"


def names(values) -> str:
    """Source or item names for a sentence: plain text, markdown made inert."""
    return escape_markdown(", ".join(str(v) for v in values))


# ----------------------------------------------------------------------------- the data
data = url_segmented(P_SET, "Data", format_func=DATA.get,
                     help="Five real tables shipped with Arbiter, or your own file. "
                          + tip("Claims table", tip("Truth discovery")) + " " + tip("NQ-open"))
label = "human"
if data == "nq_open":
    label = url_segmented(P_LABEL, "Answers marked by", format_func=LABELS.get,
                          help=tip("Exact match", "People judged every answer too."))
with st.expander("Count near-identical claims as one (normalisers)"):
    n1, n2, n3 = st.columns(3)
    case = url_toggle(P_CASE, "Ignore case and spacing", where=n1, help=tip("Normaliser"))
    minutes = int(url_slider(P_MINUTES, "Clock times within … minutes are the same", where=n2,
                             help=tip("time tolerance", "0 switches it off.")))
    numeric = float(url_number(P_NUMERIC, "Numbers within … are the same", where=n3,
                               help=tip("numeric tolerance", "0 switches it off.")))
    st.caption("Off by default: claims are compared as exact text. The rules run before any "
               "resolver, on the claims and on the truth.")

if data == "upload":
    chosen = choose_upload(case=case, minutes=minutes, numeric=numeric)
    if chosen is None:
        st.info("Upload a table of claims to run every resolver on it, or download the "
                "example file to see the layout.", icon=":material/upload:")
        st.stop()
    KEY = chosen.key
    st.caption(f"Using the file {escape_markdown(chosen.name)}.")
else:
    KEY = ("builtin", data, label, bool(case), minutes, numeric)
    spec = builtin_set(data)
    st.markdown(f"**{spec.title}.** {spec.about}")
    with st.expander("Where these data come from"):
        st.text(f"Source: {spec.citation}\nLicence: {spec.licence}")
TAG = hashlib.sha1(repr(KEY).encode()).hexdigest()[:10]

imported, fit = fit_of(KEY)
claims = fit.claims
m = st.columns(4)
m[0].metric("Claims", f"{claims.n_claims:,}", border=True)
m[1].metric("Sources", f"{claims.n_sources:,}", border=True)
m[2].metric("Items", f"{claims.n_items:,}", border=True)
m[3].metric("Items with truth", f"{int(claims.gold.sum()):,}", border=True,
            help="Items whose true value is known; only these can be scored. NQ-open scores "
                 "each answer by the marks of the chosen label source instead."
            if data == "nq_open" else "Items whose true value is known; only these can be "
                                      "scored.")
if imported.warnings or fit.skipped:
    with st.expander(f"Notes on this table ({len(imported.warnings) + len(fit.skipped)})"):
        for line in imported.warnings:
            st.text(line)
        for key, why in fit.skipped.items():
            st.text(f"{METHOD_NAMES[key]} did not run: {why}")
HAS_TRUTH = fit.has_truth

# ----------------------------------------------------------------------------- copies
st.header("Copies that outvote the truth")
copies = copies_of(KEY)
head = copies.headline
if head is None:
    st.markdown(
        "No group of sources here makes the same claim on nearly every item it shares "
        f"(at least {pct(copies.min_agreement, 0)} of at least {copies.min_shared} shared items)"
        + (", or none that ever tipped a vote" if copies.clusters else "")
        + ", so copying cannot outvote the truth in this table. Flight shows what it looks "
          "like when it does.")
else:
    same = ("every item they share" if head.agreement >= 1 else
            f"{pct(head.agreement, 0)} of the items they share")
    st.markdown(
        f"**{head.size} sources say exactly the same thing.** {names(head.members)} make the "
        f"same claim on {same} (at least {head.shared:,} items for any two of them): they copy "
        "one another, or one feed."
        + (f" Yet only {pct(head.accuracy)} of their claims that can be checked are right. "
           f"A plain vote counts them {head.size} times, so on {head.outvoted} checked items "
           "majority vote took their wrong value." if HAS_TRUTH else
           f" A plain vote counts them {head.size} times; on {head.outvoted} items majority "
           "vote took their value where the copy-aware resolver did not."))
    if HAS_TRUTH:
        st.markdown(
            "**A resolver that looks for copying gets it back.** ACCU + DEPEN notices that "
            "these sources agree on false values far more often than independent sources "
            f"could, and counts their copies as much less than {head.size} votes. It gets "
            f"{head.recovered} of those {head.outvoted} items right, and {pct(copies.dependent)}"
            f" of all checked items against majority vote's {pct(copies.mv)}. Counting the "
            f"group as one vote would already lift majority vote to {pct(head.one_voice)}.",
            help=" ".join((tip("ACCU"), tip("DEPEN"))))
        k = st.columns(4)
        k[0].metric("Majority vote", pct(copies.mv), border=True, help=tip("Majority vote"))
        k[1].metric("ACCU + DEPEN", pct(copies.dependent), border=True,
                    help=tip("Source dependence"))
        k[2].metric(f"Group {head.label} outvoted", f"{head.outvoted} items", border=True,
                    help="Checked items where majority vote took the group's wrong value. "
                         + tip("Copy cluster"))
        k[3].metric("Recovered", f"{head.recovered} of {head.outvoted}", border=True,
                    help="Of those, the items ACCU + DEPEN gets right.")
    st.caption("The terms: sources that copy are dependent (source dependence), and a group "
               "of them is a copy cluster. Majority vote and every resolver that treats the "
               "sources as independent witnesses count a copy as new evidence.")
if copies.clusters:
    shown = copies.table().drop(columns="size")
    shown = shown.assign(**{"same claim": shown["same claim"] * 100,
                            "their accuracy": shown["their accuracy"] * 100})
    whole_table(shown, rows=8, wrap=["sources"], labels={
        "shared items": "shared", "same claim": "same %", "their claim wrong": "wrong",
        "majority vote followed them": "vote followed", "their accuracy": "right %"})
    st.caption("Every group of sources that make the same claim on at least "
               f"{pct(copies.min_agreement, 0)} of at least {copies.min_shared} shared items. "
               "Shared: the fewest items two members share; wrong: items where their common "
               "claim is wrong; vote followed: those where majority vote took it; recovered: "
               "of those, the items ACCU + DEPEN gets right. "
               "Copying is not wrong in itself: a group that copies an accurate source does "
               "no harm; one that copies a careless source outvotes the truth.")


@st.fragment
def dependence_panel(key: tuple) -> None:
    """Which matrix → the dependence heatmap."""
    st.subheader("Who agrees with whom, and on what", anchor=False)
    which = url_segmented(
        P_PAIR, "Show", format_func={"false": "same false claims",
                                     "beyond": "agreement beyond chance"}.get,
        help=tip("Agreement beyond chance", "Same false claims: " + tip("Source dependence")))
    pv = pairs_of(key)
    fig = cached_figure("yd_dep", (key, which), lambda: dependence_figure(pv, which))
    show_figure(fig, key="yd_fig_dep", stem=f"dependence_{which}",
                alt="Matrix of every pair of sources, darker where they agree more")
    kind = ("counted on the items with a known truth" if pv.false_kind == "observed"
            else "as ACCU + DEPEN expects them, since no truth is known")
    st.caption(
        ("Each cell: the share of the items two sources share on which both make the same "
         f"false claim, {kind}. Independent sources rarely make the same mistake, so a "
         "deep blue cell is the sign of copying." if which == "false" else
         "Each cell: how much more often two sources make the same claim than two "
         "independent sources of their estimated accuracy would (0: as often as chance, "
         "1: always).")
        + " Outlined blocks are copy groups; a blank cell, a pair with no item in common; the "
          "hover gives ACCU + DEPEN's probability that the two are dependent."
        + (f" The {len(pv.sources)} sources with the most claims of {pv.n_sources} are shown."
           if len(pv.sources) < pv.n_sources else ""))


dependence_panel(KEY)


# ----------------------------------------------------------------------------- the board
@st.fragment
def board_panel(key: tuple) -> None:
    """Resolvers and coverage → the board, the equal-coverage comparison, predictions."""
    st.header("Every resolver on the board")
    c1, c2 = st.columns([3, 1])
    chosen = url_pills(P_METHODS, "Resolvers", where=c1, format_func=METHOD_NAMES.get,
                       help="Each is explained below the board. "
                            + " ".join((tip("GLAD"), tip("EM"))))
    cov = float(url_slider(P_COV, "Answer only the most confident share", where=c2,
                           help=tip("Equal coverage"), format="%.2f"))
    run = tuple(k for k in chosen if k in fit.results)
    if not run:
        st.info("Choose at least one resolver that ran on this table.",
                icon=":material/checklist:")
        return
    board = board_of(key, run, cov)
    fig = cached_figure("yd_board", (key, run, cov), lambda: board_figure(board))
    show_figure(fig, key="yd_fig_board", stem="fusion_board",
                alt="Each resolver's score with its 95 % interval")
    best = board.row(board.best)
    if board.measure == "accuracy":
        learned = (" It learned from the other half of the checked items, so it is scored "
                   "on fewer." if method(board.best).supervised else "")
        st.markdown(
            f"Best here: **{best['name']}**, {pct(best['accuracy'])} right "
            f"({best['correct']:,} of {best['items']:,}; 95 % interval "
            f"{pct(best['low'])} to {pct(best['high'])}).{learned} The bars are Wilson "
            "intervals: two resolvers whose bars overlap a lot may not really differ.")
    else:
        st.markdown("No truth is known here, so the board shows how often each resolver "
                    "agrees with majority vote, not whether it is right.")
    table = board.table.assign(accuracy=board.table["accuracy"] * 100,
                               low=board.table["low"] * 100, high=board.table["high"] * 100,
                               coverage=board.table["coverage"] * 100)
    show_number_table(table.drop(columns="method"), default="{:.1f}", hide_index=True,
                      width="stretch", labels={
                          "name": "resolver", "items": "scored items",
                          "correct": "right" if board.measure == "accuracy" else "agree",
                          "accuracy": "%" , "low": "95 % low", "high": "95 % high",
                          "coverage": "answers % of items", "scored_on": "scored on"})
    if board.at_coverage is not None:
        at = board.at_coverage
        st.markdown(
            f"**At equal coverage.** Each resolver answers only its most confident "
            f"{pct(cov, 0)} of the items it could answer and abstains on the rest; the "
            "denominator is stated, so an abstention never hides.")
        shown = at.assign(accuracy=at["accuracy"] * 100, low=at["low"] * 100,
                          high=at["high"] * 100)
        show_number_table(shown.drop(columns="method"), default="{:.1f}",
                          formats={"threshold": "{:.4f}"}, hide_index=True, width="stretch",
                          labels={"name": "resolver", "n": "could answer",
                                  "answered": "answers", "correct": "right", "accuracy": "%",
                                  "low": "95 % low", "high": "95 % high",
                                  "threshold": "confidence needed"})
    with st.expander("What each resolver does"):
        st.markdown("\n".join(f"- **{mm.name}**: {mm.words}" for mm in METHODS))
        st.caption(tip("Wilson interval"))
    download_table(predictions_of(key), stem=f"predictions_{TAG}", key="yd_predictions",
                   what="Every resolver's answers")


board_panel(KEY)

# ----------------------------------------------------------------------------- sources
st.header("The sources")
sv = sources_of(KEY)
src = sv.table[["source", "group", "claims", "coverage", "checked", "accuracy", "low", "high",
                "estimated", "agrees"]]
src = src.assign(**{c: src[c] * 100 for c in ("coverage", "accuracy", "low", "high",
                                               "estimated", "agrees")})
show_number_table(src, default="{:.1f}", hide_index=True, width="stretch",
                  height=table_height(min(len(src), 12)), labels={
                      "group": "group", "coverage": "covers %", "checked": "checked",
                      "accuracy": "right %", "low": "95 % low", "high": "95 % high",
                      "estimated": "estimated %", "agrees": "agrees %"})
st.caption(
    ("Accuracy counts a source's claims on the items with a known truth, with a 95 % Wilson "
     "interval; a source with few checked claims has a wide one, so the table is sorted by "
     "the interval's low end. " if sv.has_truth else
     "No truth is known, so only the resolver's estimate of each source is shown. ")
    + "Covers: the share of items it makes a claim on. Estimated: the accuracy "
      f"{METHOD_NAMES[sv.reference]} believes the source has, learned without looking at the "
      f"truth; agrees: how often its claim is {METHOD_NAMES[sv.reference]}'s answer; group: "
      "its copy group, if any.")
download_table(sv.table, stem=f"sources_{TAG}", key="yd_sources", what="Sources")


# ----------------------------------------------------------------------------- why
@st.fragment
def why_panel(key: tuple) -> None:
    """Learned resolver → what it changed against majority vote, per source and item."""
    st.header("Why is a learned resolver no better than majority vote here?")
    options = [k for k in P_LEARNED.options if k in fit.results]
    learned = url_select(P_LEARNED, "Learned resolver", format_func=METHOD_NAMES.get,
                         help="A resolver that learns how far to trust each source. "
                              + tip(TERMS[current(P_LEARNED)]))
    if learned not in options or "mv" not in fit.results:
        st.info("That resolver did not run on this table.", icon=":material/info:")
        return
    w = why_of(key, learned)
    name = METHOD_NAMES[learned]
    if w.changed == 0:
        st.markdown(f"{name} gives majority vote's answer on every item here.")
        return
    if w.fixed is not None:
        verdict = ("better" if w.acc_b > w.acc_a else "worse" if w.acc_b < w.acc_a
                   else "no better")
        st.markdown(
            f"{name} answers **{w.changed}** items differently from majority vote. Where the "
            f"truth is known it fixes **{w.fixed}** and breaks **{w.broken}**, so it ends "
            f"{verdict} here: {pct(w.acc_b)} against {pct(w.acc_a)}.")
    else:
        st.markdown(f"{name} answers **{w.changed}** items differently from majority vote; "
                    "with no truth known, nobody can say which of the two is right.")
    led = w.sources[w.sources["misled"] > 0].head(6)
    if len(led):
        grouped = sorted({g for g in led["group"] if g})
        in_groups = (f" Most of them belong to copy groups ({', '.join(grouped)}): sources "
                     "that repeat each other agree with each other, and a model that learns "
                     "trust from agreement rates them too high."
                     if sum(bool(g) for g in led["group"]) * 2 > len(led) else "")
        st.markdown(
            f"**Per source.** On the items it broke, {name} followed most often "
            f"{names(led['source'])}.{in_groups} Below, each source's checked accuracy "
            f"beside what {name} believed of it: a learned resolver goes wrong when it "
            "trusts a source more than the source deserves (overrated above 0).")
    table = w.sources.head(15)
    show_number_table(table[["source", "group", "with_b", "with_a", "misled", "accuracy",
                             "trusted", "overrated"]], default="{:.3f}", hide_index=True,
                      width="stretch", height=table_height(len(table)), labels={
                          "group": "copy group", "with_b": f"with {name}",
                          "with_a": "with majority", "misled": "led it astray",
                          "accuracy": "accuracy", "trusted": "believed",
                          "overrated": "overrated by"})
    st.caption(f"With {name}, with majority: on the items where the two differ, how often "
               "the source's claim was that resolver's answer. Led it astray: items where "
               f"{name} broke a right answer and the source claimed {name}'s wrong one.")
    st.markdown("**Per item**: the items where the two answer differently, broken ones first.")
    whole_table(w.items, rows=10, wrap=["item", "a", "b", "truth"], labels={
        "a": "majority vote", "b": name, "for_a": "sources for it",
        "for_b": f"sources for {name}"})


why_panel(KEY)

# ----------------------------------------------------------------------------- contradicted
st.subheader("Answers that no source gave", anchor=False)
cv = contradicted_of(KEY, fit.methods)
flagged = cv.counts[cv.counts["items"] > 0]
if flagged.empty:
    st.markdown("No resolver answers a value that no source claimed on any item here.")
else:
    st.markdown("Some resolvers give, on some items, an answer that contradicts every "
                "source: " + ", ".join(f"{r['name']} on {r['items']}"
                                       for _, r in flagged.iterrows()) + " items.")
    whole_table(cv.items, rows=8, wrap=["item", "claims"])
st.caption(tip("Contradicted answer"))


# ----------------------------------------------------------------------------- what-if
@st.fragment
def what_if_panel(key: tuple) -> None:
    """Resolver, item, sources off, one claim changed → the item's posterior before/after."""
    st.header("What if a source were switched off, or said something else?")
    items = what_if_items_of(key)
    opts = [mm.key for mm in METHODS if not mm.supervised and mm.key in fit.results]
    c1, c2 = st.columns([1, 3])
    meth = c1.selectbox("Resolver", opts, key=f"yd_wi_method_{TAG}",
                        format_func=METHOD_NAMES.get, help=tip("What-if"))
    item_key = f"yd_wi_item_{TAG}"
    if item_key not in st.session_state and ITEM in st.query_params:
        wanted = st.query_params.get(ITEM)
        if wanted in items:
            st.session_state[item_key] = wanted
        else:
            notice("The item in the link is not one where this data set's sources disagree; "
                   "the first such item is shown.")
            del st.query_params[ITEM]

    def keep_item() -> None:
        st.query_params[ITEM] = st.session_state[item_key]

    item = c2.selectbox("Item", items, key=item_key, on_change=keep_item,
                        help="Items where the sources disagree; when a copy group outvoted "
                             "the truth, its items come first.")
    here = item_claims_of(key, item)
    head = copies_of(key).headline
    default = [s for s in head.members if s in set(here["source"])] if head and \
        item == items[0] else []
    drop = st.multiselect("Switch these sources off", list(here["source"]), default=default,
                          key=f"yd_wi_drop_{TAG}_{hashlib.sha1(item.encode()).hexdigest()[:8]}")
    f1, f2 = st.columns(2)
    nobody = "(nobody)"
    left = [s for s in here["source"] if s not in set(drop)]
    who = f1.selectbox("Change the claim of", [nobody, *left], key=f"yd_wi_who_{TAG}")
    flip = None
    if who != nobody:
        now = here.set_index("source").loc[who, "claim"]
        values = [v for v in dict.fromkeys(here["claim"]) if v != now]
        if values:
            to = f2.selectbox("to", values, key=f"yd_wi_to_{TAG}")
            flip = (who, str(to))
    try:
        view = what_if_of(key, meth, item, tuple(sorted(drop)), flip)
    except ValueError as exc:
        st.warning(escape_markdown(str(exc).splitlines()[0]), icon=":material/block:")
        return
    fig = cached_figure("yd_whatif", (key, meth, item, tuple(sorted(drop)), flip),
                        lambda: what_if_figure(view))
    show_figure(fig, key="yd_fig_whatif", stem="what_if",
                alt="The item's posterior before and after the change")
    t = view.table.set_index("value")

    def said(value: str) -> str:
        if not value:
            return "no answer"
        return f"{escape_markdown(value)}"

    p_before = t.loc[view.before_label, "before"] if view.before_label in t.index else 0.0
    p_after = t.loc[view.after_label, "after"] if view.after_label in t.index else 0.0
    truth = (f" The truth is {said(view.truth)}." if view.truth else "")
    change = ("With no change" if not drop and flip is None else "After the change")
    st.markdown(
        f"Before, {METHOD_NAMES[meth]} answers **{said(view.before_label)}** "
        f"({pct(p_before, 0)}). {change} it answers **{said(view.after_label)}** "
        f"({pct(p_after, 0)}).{truth} The whole table is refitted, so a learned resolver "
        "also re-estimates every source.")
    st.caption(tip("Posterior") + (
        f" {view.left_out} items that only the switched-off sources claim are left out of "
        "both fits." if view.left_out else ""))
    with st.expander("This item's claims"):
        whole_table(view.claims, rows=10, wrap=["claim"])


what_if_panel(KEY)


# ----------------------------------------------------------------------------- reliability
@st.fragment
def reliability_panel(key: tuple) -> None:
    """Resolvers → their binned reliability diagram and calibration numbers."""
    st.header("How sure, and how often right?")
    if not HAS_TRUTH:
        st.info("A reliability diagram needs items with a known truth; this table has none.",
                icon=":material/info:")
        return
    chosen = url_pills(P_REL, "Resolvers", format_func=METHOD_NAMES.get,
                       help=tip("Reliability diagram"))
    run = tuple(k for k in chosen if k in fit.results)
    if not run:
        st.info("Choose at least one resolver that ran on this table.",
                icon=":material/checklist:")
        return
    rel = reliability_of(key, fit.methods)
    fig = cached_figure("yd_rel", (key, run), lambda: fusion_reliability_figure(
        rel, run, title="Binned, 10 equal-width bins (exact 95 % interval per bin)"))
    shown = rel.table[rel.table["method"].isin(run)]
    worst = shown.loc[shown["gap"].idxmax()]
    c1, c2 = st.columns([3, 2])
    with c1:
        show_figure(fig, key="yd_fig_rel", stem="fusion_reliability",
                    alt="Share of answers right against the resolver's confidence")
    with c2:
        st.markdown(
            "A point on the dashed diagonal means the resolver is right as often as it is "
            f"sure. Of those shown, **{worst['name']}** is the most over-confident: sure to "
            f"{pct(worst['confidence'])} on average, right {pct(worst['accuracy'])} of the "
            "time. A resolver that treats copies as independent witnesses grows sure too "
            "fast: each copy looks like one more agreeing voice.")
        st.caption("The strip below the diagram counts the answers in each bin; a bin with "
                   "few answers has a wide interval. " + tip("Brier score"))
    show_number_table(shown.drop(columns="method"), default="{:.3f}", hide_index=True,
                      width="stretch", labels={
                          "name": "resolver", "items": "answers",
                          "confidence": "mean confidence", "accuracy": "share right",
                          "gap": "over-confidence", "brier": "Brier score"})

reliability_panel(KEY)

# ----------------------------------------------------------------------------- NQ-open
if fit.judgements is not None:
    st.header("Marked by people, or by exact match?")
    lv = labels_of(KEY)
    a, b = (LABELS[x] for x in lv.labels)
    lab = lv.table
    top = {x: lab.loc[lab[f"{x}_rank"] == 1, "name"].tolist() for x in lv.labels}
    st.markdown(
        f"The same fused answers, marked two ways. Marked by {a}, the best is "
        f"{names(top[lv.labels[0]])}; marked by {b}, {names(top[lv.labels[1]])}. "
        f"{len(lv.flipped)} pairs involving a resolver change order between the two "
        "markings: which method looks best depends on who does the marking.")
    cols = {"name": lab["name"], "kind": lab["kind"]}
    for x in lv.labels:
        cols[f"{LABELS[x]} %"] = lab[f"{x}_accuracy"] * 100
        cols[f"{LABELS[x]} 95 %"] = [f"{100 * lo:.1f}–{100 * hi:.1f}" for lo, hi in
                                     zip(lab[f"{x}_low"], lab[f"{x}_high"], strict=True)]
        cols[f"{LABELS[x]} rank"] = lab[f"{x}_rank"].astype(int)
    show_number_table(pd.DataFrame(cols), default="{:.1f}", hide_index=True,
                      width="stretch", height=table_height(len(lab)))
    st.caption("Systems are the twelve QA systems answering alone; resolvers fuse their "
               "answers; 95 %: the Wilson interval. Naive Bayes is left out: it learns from one "
               "marking, so scoring it by the other is not the same experiment. "
               + tip("Exact match"))
