"""Leaderboard: every resolver on the seed-000 testbed, beside the paper (seed 000 §4, §11).

Thin glue: widgets → one view object per panel (:mod:`core.evaluation.leaderboard_view`:
numbers, narrowed tables, the facts each sentence states), cached in
``pages._shared.evaluation`` over the store's cached test predictions (no refit) → figures of
``core.figures.leaderboard``. The board (B, methods) and the confusion tables (question,
source, seed) are two ``st.fragment``s; figures are cached across sessions by their settings.

URL state (:mod:`core.urlparams`; a refused value gives one plain-text notice): ``lb_b``
(bootstrap replicates), ``lb_methods`` (repeatable short method names, e.g. ``DSNBF``),
``lb_q`` (question), ``lb_src`` (source), ``lb_seed`` (the seed NBF is refitted on) and
``lb_learned`` (show the learned table).

A store imported from the authors' release carries their frozen LLM answers: the board adds
them as rows of their own kind (forced and selective tables, the forest figure) with one
caption naming the model and the people scored; a store with such answers and no resolver
results (the sample persona) shows them alone. Nothing changes for a store without them.

About 180 lines, over the 150 target: six tables, five figures with their downloads, the
plain-words captions between them and the imported-answers rows; every number, table and
fact comes from the views.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.evaluation.llm_rows import LLM_KIND, LLMRows
from core.evaluation.run import FORCED_METHODS
from core.figures import leaderboard as figures
from core.figures.style import METHOD_SHORT
from core.glossary import tip
from core.pages_registry import page
from core.testbed.questions import QIDS, SOURCE_LABELS, SOURCES
from core.urlparams import ChoiceParam, FlagParam
from pages import _shared as ui
from pages._shared import evaluation as glue
from pages._shared.ui import FAVICON, glossary_link

PAGE = page("pages/2_Leaderboard.py")
st.set_page_config(layout="wide", page_title=f"{PAGE.title} · Arbiter", page_icon=FAVICON)

path = str(ui.ensure_store())
stamp = ui.store_stamp(path)
with ui.store_guard():
    imported = glue.leaderboard_imported(path, stamp)
split = glue.require_split(path, stamp, optional=imported is not None)


def imported_caption(llm: LLMRows) -> None:
    """One line: whose answers the imported rows are, and on how many people."""
    st.caption(f"Rows of the kind *{LLM_KIND}* are the frozen answers of "
               f"{ui.escape_markdown(', '.join(llm.models))} from the imported release, "
               f"scored against our ground truth on {llm.people} of the test split (an answer "
               "outside the answer space, or a missing one, counts wrong), beside the paper's "
               "number for the same model and prompt.")


st.title("Leaderboard: every resolver, beside the memory-benchmark paper")
if split is None:  # an imported release without resolver results: its LLM answers alone
    st.info("This store holds no resolver results (they need the train people of a built "
            "store), only the model answers imported with it.", icon=":material/database:")
    st.header("Imported model answers")
    imported_caption(imported.llm)
    glue.show_table(imported.table, key="lb_dl_imported", what="Imported answers", fit=True,
                    whole=True)
    st.stop()
st.caption(f"Accuracy of every resolver on the test split of {len(split.seeds)} seed(s): "
           f"{split.n_clusters:,} simulated people × 18 questions = {split.n_instances:,} "
           "answers, read from the predictions saved in the store (nothing is refitted). Each "
           "interval holds 95 % of the bootstrap redraws; the paper's number sits beside ours.")
glossary_link()
P_B = ChoiceParam("lb_b", "bootstrap size", (200, 500, 1000, 2000), default=2000)
P_METHODS = ChoiceParam("lb_methods", "method", FORCED_METHODS,
                        default=[m for m in FORCED_METHODS if m != "random"],
                        tokens=tuple(METHOD_SHORT[m] for m in FORCED_METHODS), multi=True)
P_Q = ChoiceParam("lb_q", "question", QIDS, default="A3")
P_SRC = ChoiceParam("lb_src", "source", SOURCES, default=SOURCES[1],
                    tokens=tuple(SOURCE_LABELS[s] for s in SOURCES))
P_SEED = ChoiceParam("lb_seed", "seed", split.seeds, default=split.seeds[0])
P_LEARNED = FlagParam("lb_learned", "learned-table switch", False)
ui.open_page("leaderboard", [P_B, P_METHODS, P_Q, P_SRC, P_SEED, P_LEARNED])


@st.fragment
def board() -> None:
    """Bootstrap size and methods, and every table and figure they change."""
    ui.method_key(FORCED_METHODS)
    c1, c2 = st.columns([1, 3])
    b = ui.url_select(P_B, "Bootstrap replicates B", where=c1, help=tip("Bootstrap interval"))
    # pills, not a multiselect: eleven chips wrap instead of scrolling out of sight
    methods = ui.url_pills(P_METHODS, "Methods", where=c2, format_func=METHOD_SHORT.get,
                           help="Which methods the figures and tables show.")
    if not methods:
        st.info("Choose at least one method to show.", icon=":material/checklist:")
        st.stop()
    with ui.store_guard():
        v = glue.leaderboard_board(path, stamp, int(b), tuple(methods))

    st.header("Forced accuracy")
    for col, h in zip(st.columns(4), v.headlines, strict=False):
        col.metric(h.short, f"{h.accuracy:.1f} %", border=True, delta_color="off", help=h.help,
                   delta_arrow="off",  # the sign says it; the arrow cut the words at 1280 px
                   delta=None if h.delta_paper is None
                   else f"{h.delta_paper:+.1f} points vs the paper")
    key, shown = (path, stamp, v.methods), list(v.methods)
    glue.show_chart("lb_forest", (*key, b), lambda: figures.forest_figure(
        v.main, methods=shown, imported=v.imported), file_name="leaderboard_forest")
    st.caption("**Majority Vote** is also the equal-weight form of the ArgRAG argumentation "
               "baseline. **Dawid–Skene** learns each source's confusion table *without any "
               "labels*: its gap to NBF and DSNBF is what the train labels buy. **Source "
               "Reachability** is told the ground truth: a ceiling, not a method.")
    glue.show_table(v.forced, key="lb_dl_forced", what="Forced table", fit=True, whole=True)
    if v.llm is not None:
        imported_caption(v.llm)

    st.header("Selective answering")
    st.caption("Each method marked +SKIP (allowed to skip a question it is unsure of) may "
               "abstain; selective accuracy counts only what it answers, averaged over seeds. "
               "Gain: points of accuracy over the same method "
               "answering everything.")
    glue.show_table(v.selective, key="lb_dl_selective", what="Selective table", whole=True)
    st.page_link("pages/4_Selective_QA.py", label="Move the thresholds: Selective QA",
                 icon=":material/tune:")

    st.header("Where each method wins and loses")
    glue.show_chart("lb_types", key, lambda: figures.type_heatmap(
        v.per_type, shown, title="By reasoning type (pooled; hover for the paper's value)"),
        file_name="leaderboard_types", download=(v.per_type, "per_type", "Per-type table"))
    glue.show_chart("lb_difficulty", key, lambda: figures.difficulty_heatmap(
        v.per_difficulty, shown, title="By difficulty class (per seed, then mean)"),
        file_name="leaderboard_difficulty",
        download=(v.per_difficulty, "per_difficulty", "Per-difficulty table"))

    st.header("Source Reachability: is the answer in some source at all?")
    st.caption(f"In {v.reach_share:.1f} % of test answers at least one source's atom equals "
               "the ground truth. On the rest no source says it, and a method can still reach "
               "it only by reading through the distortions: the learned confusion tables of "
               "NBF and DSNBF do that some of the time, votes almost never.")
    glue.show_chart("lb_slices", key, lambda: figures.slices_figure(v.slices, methods=shown),
                    file_name="leaderboard_slices", download=(v.slices, "reachability_slices",
                                                              "Slices table"))


board()

st.header("Why a resolver trusts a source")
st.caption("Over the pooled test atoms: how often each source gives an atom (coverage), how "
           "often its atom disagrees with another source's (conflict rate), and how often it "
           "is right when it answers, with a 95 % Wilson interval (low to high).")
with ui.store_guard():
    sources = glue.leaderboard_sources(path, stamp)
# chart above table: side by side, the six-column table scrolled sideways at 1280-1440 px
glue.show_chart("lb_sources", (path, stamp), lambda: figures.source_reliability_figure(
    sources.summary, title="All 18 questions"), file_name="source_reliability")
glue.show_table(sources.table, key="lb_dl_reliability", what="Per (source, question)",
                whole=True)


@st.fragment
def confusion_panel() -> None:
    """One question and source: the empirical and the learned confusion tables."""
    q1, q2, q3 = st.columns([1, 1, 1])
    qid = ui.url_select(P_Q, "Question", where=q1, help="The tables below are for it.")
    source = ui.url_select(P_SRC, "Source", where=q2, format_func=SOURCE_LABELS.get)
    nbf_seed = ui.url_select(P_SEED, "Refit NBF on seed", where=q3, format_func=str,
                             help="The learned table comes from NBF fitted on this seed's "
                                  "train split (cached).")
    with ui.store_guard():
        c = glue.leaderboard_confusion(path, stamp, qid, source)
    st.markdown(f"**{c.qid} · {c.title}** — {c.text}")
    glue.show_table(c.reliability, key="lb_dl_reliability_q", what="This question", whole=True)
    # one above the other: side by side, each table's columns were cut at 1280-1440 px
    st.markdown(f"**Empirical:** what {c.source_label} said (columns) when the ground "
                "truth was each row — counts over the pooled test split; ⊥ = no atom.")
    glue.show_table(c.empirical, key="lb_dl_confusion", what="Empirical table", whole=True)
    if ui.url_toggle(P_LEARNED, "Show NBF's learned table", help=tip("Confusion table")):
        with ui.store_guard():
            learned = glue.leaderboard_learned(path, stamp, int(nbf_seed), qid, source)
        st.markdown(f"**Learned (NBF, seed {nbf_seed}):** P(atom = column | truth = row). "
                    "DSNBF's global table is the same; it adds one per difficulty class.")
        glue.show_table(learned, key="lb_dl_learned", what="Learned table", whole=True)
    else:
        st.caption("The learned table shows what NBF believes about this source — the "
                   "reason it trusts or discounts the source's atom.")


confusion_panel()
