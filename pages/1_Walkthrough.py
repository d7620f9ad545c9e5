"""Walkthrough: one persona and one question through every stage of the memory benchmark.

Thin glue: widgets → one panel object per stage from ``pages._shared.walkthrough`` (shared
caches keyed on the store, the persona and the question; built by
``core.evaluation.walkthrough``) → figures built by ``core.figures.walkthrough``. Seed,
persona and question live in the URL (``?seed=…&persona=…&q=…``); see
``pages/_shared/params.py`` for why this page handles ``st.query_params`` explicitly instead
of ``bind="query-params"``; the sidebar and the "Why this instance?" panel are drawn by
``pages._shared.instance``. Longer than 150 lines because it walks six stages, each with its
own sentences.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.evaluation.run import FORCED_METHODS, SELECTIVE_METHODS
from core.evaluation.walkthrough.answers import atom_grid_table
from core.evaluation.walkthrough.views import day_views, latent_days, persona_day_table
from core.figures.walkthrough import atom_grid_figure, source_days_figure, timeline_figure
from core.glossary import tip
from core.testbed.questions import SOURCE_LABELS, SOURCES
from pages._shared.cache import cached_figure, cached_result
from pages._shared.instance import choose_instance, why_this_instance
from pages._shared.prose import prose_html
from pages._shared.store import ensure_store, load_persona, store_guard, store_stamp
from pages._shared.ui import (
    FAVICON,
    csv_bytes,
    glossary_link,
    method_key,
    plotly_config,
    source_chip,
)
from pages._shared.walkthrough import panels_of, prose_excerpt_of, resolver_columns

st.set_page_config(layout="wide", page_title="Walkthrough · Arbiter",
                   page_icon=FAVICON)

path = ensure_store()
store = (str(path), store_stamp(path))
st.title("Walkthrough: one persona, one question")
st.caption(
    "Follow one instance of the memory benchmark through its stages: a persona's 30 latent "
    "days, five sources that each see those days through their own distortion, one atom per "
    "source, the ground truth a fixed rule derives, and how every resolver settles the "
    "conflict — or abstains.")
glossary_link()

seed, persona_id, qid = choose_instance(*store)  # the sidebar; the URL follows it
instance = (*store, seed, persona_id, qid)
with store_guard():
    bundle = load_persona(*store, seed, persona_id)
    who, ask, why, answers = panels_of(*instance)  # persona, question, protocol, resolvers


# ---------------------------------------------------------------- header
def _headline(col, label: str, value: str, note: str | None = None) -> None:
    with col:
        st.caption(label)
        st.subheader(value, anchor=False)
        if note:
            st.caption(note)


c1, c2, c3, c4 = st.columns([2, 1.3, 2.4, 1.6])
_headline(c1, "Persona", who.name, f"`{persona_id}` · seed {seed} · {who.split} split")
_headline(c2, "Difficulty", who.difficulty_label)
_headline(c3, "Question", f"{qid} · {ask.title}",
          f"{ask.topic} · last {ask.window} days · {ask.kind}")
_headline(c4, "Ground truth", ask.gt_words)
st.markdown(f"> **{qid}.** {ask.text}  \n> Possible answers: "
            + " · ".join(f"“{ask.words(lab)}”" for lab in ask.labels))

method_key(FORCED_METHODS + SELECTIVE_METHODS,
           label="What the resolvers' short names mean")  # before the protocol names them
why_this_instance(why)  # the selection protocol, in an expander

# ---------------------------------------------------------------- stage 1: persona
st.header("1 · The persona (L1)")
left, right = st.columns([1, 1.6])
left.dataframe(who.traits, hide_index=True, width="stretch")
with right:
    st.info(who.note, icon=":material/psychology:")
    if who.stated:
        st.markdown("**Stated vs revealed.** What the person *says* (the profile) and what "
                    "they *do* (the latent days) differ on purpose: sources that trust the "
                    "narrative inherit its optimism.")
    st.dataframe(who.habits.compare, hide_index=True, width="stretch")
    if who.habits.shift is not None:
        with st.expander(f"The same habits before and after the shift (day {who.shift_day})"):
            st.dataframe(who.habits.shift, hide_index=True, width="stretch")

# ---------------------------------------------------------------- stage 2: latent days
st.header("2 · The latent days (L2)")
st.caption(f"The simulated truth for the **{ask.topic}** topic ({ask.topic_fields}). No source "
           "sees this table directly; the ground truth is computed from it.")
views = cached_result("wt_views", instance, lambda: day_views(bundle.testbed, qid=qid))
st.plotly_chart(
    cached_figure("wt_timeline", instance, lambda: timeline_figure(
        latent_days(bundle.testbed), topic=ask.topic, shift_day=views.shift_day,
        threshold=views.threshold if ask.topic in ("sleep", "work") else None,
        threshold_label=f"{qid} threshold")),
    key="wt_timeline", config=plotly_config(f"days_{persona_id}_{ask.topic}"))

# ---------------------------------------------------------------- stage 3: sources
st.header("3 · Five sources, the same days (L3)")
st.caption(f"Each row is one source's record of **{views.title.lower()}** — the quantity "
           f"{qid} reads. Grey ticks mark the truth where a source reports the same quantity; "
           "grey bands with ✕ are days whose record was lost (device and objective logs "
           "drop whole days).")
st.plotly_chart(cached_figure("wt_sources", instance, lambda: source_days_figure(views)),
                key="wt_sources", config=plotly_config(f"sources_{persona_id}_{qid}"))
with st.expander("What each source distorts, and why", expanded=True):
    for src, note in who.source_notes:
        st.markdown(f"{source_chip(src)} — {note}", unsafe_allow_html=True)

with st.expander("The same records as prose: the sentences the extractor reads for "
                 f"{qid}", icon=":material/description:"):
    excerpt = prose_excerpt_of(*instance) if who.split == "test" else ()
    if not excerpt:
        st.caption("The store keeps the prose of test personas only; pick one to read it.")
    for section in excerpt:
        if section.n_marked:
            st.markdown(f"{source_chip(section.source)} · {section.n_marked} sentence(s)"
                        + (f", the first {len(section.lines)} shown"
                           if section.n_marked > len(section.lines) else ""),
                        unsafe_allow_html=True)
            st.html(prose_html(section, height=None))
    st.caption("The whole document, with the sentences behind any atom highlighted, is on "
               "the Extraction page.")

# ---------------------------------------------------------------- stage 4: atoms
st.header("4 · Atoms μ* beside the ground truth", help=tip("μ*"))
st.caption("One atom per (question, source): the source's own records read by a fixed rule "
           "(the direct readout μ*, no language model). Green ✓ agrees with the ground "
           "truth, red ✗ disagrees, ∅ "
           "means the source had nothing to read, — that the source is not informative for "
           f"the question. The framed row is {qid}.", help=tip("μ*"))
st.plotly_chart(cached_figure("wt_grid", instance,
                              lambda: atom_grid_figure(bundle.gt, bundle.atoms, highlight=qid)),
                key="wt_grid", config=plotly_config(f"atoms_{persona_id}"))

# ---------------------------------------------------------------- stage 5: GT and verdicts
st.header(f"5 · How the ground truth of {qid} is derived")
g1, g2 = st.columns([1.4, 1])
with g1:
    st.markdown(f"**The rule.** {ask.rule}")
    st.markdown("**This persona:** the rule's inputs are in the table beside.")
    st.success(f"Ground truth: **{ask.gt_words}**", icon=":material/verified:")
g2.dataframe(ask.stats, hide_index=True, width="stretch")

st.subheader("What each source says, and why", anchor=False, help=tip("Bias direction"))
for v in ask.verdicts:
    if not v.informative and v.atom == "⊥":
        st.markdown(f"{source_chip(v.source)} · — not informative for {qid}: the source "
                    "records nothing this question reads.", unsafe_allow_html=True,
                    help=tip("Informative source"))
        continue
    st.markdown(f"{source_chip(v.source)} · μ* = “{ask.words(v.atom)}” · **{v.mark}** "
                f"({v.bias}) — "
                f"{v.explained}.<br><span style='opacity:0.75'>Readout: {v.rule}.</span>",
                unsafe_allow_html=True)

# ---------------------------------------------------------------- stage 6: resolvers
st.header(f"6 · How the resolvers settle {qid}")
if answers.status == "not_test":
    st.info(f"Resolvers answer **test** personas only. This persona is in the "
            f"**{answers.split}** split"
            + (f": {answers.split_role}." if answers.split_role else ".")
            + " Pick a test persona (Split filter in the sidebar) to see every resolver's "
            "answer.", icon=":material/school:")
elif answers.status == "no_predictions":
    st.info("The store has no cached predictions for this persona; build them with "
            "`python -m core evaluate --db …`.", icon=":material/database:")
else:
    r1, r2, r3 = st.columns(3)
    r1.metric("Forced methods right", f"{answers.n_forced_right} of {answers.n_forced}",
              help=tip("Resolver", "Source Reachability, a ceiling that sees the ground "
                       "truth, is left out."))
    r2.metric("Abstaining (+SKIP)", f"{answers.n_abstaining} of {answers.n_selective}",
              help=tip("Selective answering", "Here: the selective variants that abstain."))
    r3.metric("DSNBF margin", "—" if answers.dsnbf_margin is None
              else f"{answers.dsnbf_margin:.2f}", help=tip("Posterior margin"))
    columns, sizes = resolver_columns(answers.table, ask.gt_words)  # every cell whole
    st.dataframe(answers.table, hide_index=True, width="stretch", column_config=columns,
                 **sizes)
    st.caption("Each resolver reads only the five atoms above (never the persona id or its "
               "difficulty) and answers with a confidence; +SKIP variants may abstain, and "
               "their answer before abstaining is shown. Then the answer is scored against the "
               "ground truth. Majority Vote is also the equal-weight form of the argumentation "
               "baseline; Dawid–Skene learns without labels; Source Reachability sees the "
               "ground truth.")

# ---------------------------------------------------------------- downloads and next steps
st.header("Downloads")
d1, d2 = st.columns(2)
d1.download_button(
    "Atom grid (CSV)", lambda: csv_bytes(atom_grid_table(bundle.gt, bundle.atoms)),
    file_name=f"atoms_{seed}_{persona_id}.csv", mime="text/csv", on_click="ignore",
    icon=":material/grid_on:", key="wt_dl_atoms")
d2.download_button(
    "The persona's 30 days, all sources (CSV)",
    lambda: csv_bytes(persona_day_table(bundle.testbed)),
    file_name=f"days_{seed}_{persona_id}.csv", mime="text/csv", on_click="ignore",
    icon=":material/calendar_month:", key="wt_dl_days")
st.caption("All resolvers over all test personas: the Leaderboard page; move the skip "
           "thresholds on Selective QA; break the sources in the Bias lab. Sources: "
           + ", ".join(SOURCE_LABELS[s] for s in SOURCES) + ".")
