"""Extraction: from the sources' prose back to atoms, and what extraction errors cost.

Glue over :mod:`core.prose.views` (through ``pages._shared.prose``): one persona's five prose
sections beside the selected atom and its atom grid across the page below them (in half of
it the five sources were cut at 1280 px), the sentences behind the selected atom marked (a
:class:`~core.prose.views.ProseView`); the extractor's faithfulness over the store (a
``FaithfulnessView``); every resolver re-scored on extracted atoms flipped by a noise profile
(a ``NoiseView``) and the resolver × input 2 × 2 on the same atoms (a ``FactorialView``).
Figures come from ``core.figures.prose``. The resolvers are fitted on μ* once per store.

URL state (:mod:`core.urlparams`): ``ex_persona`` (``<seed>-<persona id>``), ``ex_q``,
``ex_src``, ``ex_profile``, ``ex_eps`` (0.05 grid), ``ex_a``, ``ex_b``. The prose panel and
the noise panel are fragments; the noise profile drives both the board and the 2 × 2.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.evaluation.run import METHOD_LABELS
from core.figures import prose as figures
from core.glossary import tip
from core.pages_registry import page
from core.prose.tables import EXTRACTOR
from core.prose.views import DEFAULT_ATOM, MIXED_METHODS, PROFILES
from core.store import StoreError
from core.testbed.questions import QIDS, SOURCE_SHORT, SOURCES
from core.urlparams import ChoiceParam, NumberParam
from pages._shared import ensure_store, open_page, public_message, store_guard, store_stamp
from pages._shared import prose as glue
from pages._shared.evaluation import show_chart, show_table
from pages._shared.params import url_segmented, url_select, url_slider, url_sync
from pages._shared.records import WRAP_ROW, fitted_table
from pages._shared.ui import (
    FAVICON,
    download_table,
    escape_markdown,
    glossary_link,
    method_key,
    number_table,
    table_height,
)

ME = page("pages/10_Extraction.py")
st.set_page_config(layout="wide", page_title=f"{ME.title} · Arbiter", page_icon=FAVICON)

path = ensure_store()
store = (str(path), store_stamp(path))
with store_guard():
    try:
        people = glue.personas_of(*store)
    except StoreError as exc:
        st.error(f"No prose to show: {public_message(exc)}", icon=":material/database:")
        st.stop()
if not people:
    st.info("This store holds no rendered prose (a release imported without its memory "
            "documents). Build the default store with `python -m core build`.",
            icon=":material/description:")
    st.stop()

TOKENS = tuple(f"{seed}-{pid}" for seed, pid in people)
BOARD = tuple(m for m in MIXED_METHODS if m != "majority_class")
P_PERSONA = ChoiceParam("ex_persona", "persona", TOKENS, default=TOKENS[0])
P_Q = ChoiceParam("ex_q", "question", QIDS, default=DEFAULT_ATOM[0])
P_SRC = ChoiceParam("ex_src", "source", SOURCES, default=DEFAULT_ATOM[1],
                    tokens=["profile", "planner", "self_report", "objective", "device"])
P_PROFILE = ChoiceParam("ex_profile", "noise profile", PROFILES, default="uniform")
P_EPS = NumberParam("ex_eps", "flip rate ε", 0.0, 0.5, 0.05, 0.1)
P_A = ChoiceParam("ex_a", "method A", BOARD, default="dsnbf")
P_B = ChoiceParam("ex_b", "method B", BOARD, default="majority_vote")

st.title("Extraction: from the sources' prose back to atoms")
st.caption("In the benchmark the resolvers never read a source's records directly. Each "
           "person's records are written out as prose, an extractor reads the prose back into "
           "one atom per question and source, and only then do the resolvers settle the "
           "conflicts. Here you can see what the prose says, which sentences produced an atom, "
           "how often the extractor gets an atom right, and what a worse extractor would cost.")
glossary_link()
open_page("extraction", [P_PERSONA, P_Q, P_SRC, P_PROFILE, P_EPS, P_A, P_B])


def person_name(token: str) -> str:
    seed, _, pid = token.partition("-")
    return f"{pid} · seed {seed}"


def pick_atom(qid: str, source: str) -> None:
    """A click on the atom grid selects that question and source (URL kept in step)."""
    st.session_state[P_Q.key], st.session_state[P_SRC.key] = qid, source
    url_sync(P_Q)()
    url_sync(P_SRC)()


@st.fragment
def prose_panel() -> None:
    """A persona's prose beside its atoms; the selected atom's sentences marked."""
    # the source buttons get a row of their own: in half of one at 1280 px the last (Device)
    # was cut, and so was a person's name in three eighths
    c1, c2 = st.columns([3, 1])
    token = url_select(P_PERSONA, "Person (test split)", where=c1, format_func=person_name)
    qid = url_select(P_Q, "Question", where=c2)
    src = url_segmented(P_SRC, "Source", format_func=SOURCE_SHORT.get)
    seed, _, pid = token.partition("-")
    with store_guard():
        v = glue.prose_of(*store, int(seed), pid, qid, src)
    st.markdown(f"**{qid} · {v.question_title}.** {v.question}")

    left, right = st.columns([1, 1])
    with left:
        chosen = next(s for s in v.sections if s.source == src)
        st.subheader(f"{chosen.title}", anchor=False, help=tip("Memory prose"))
        st.html(glue.prose_html(chosen, marked_days=True))
        with st.expander("The whole document: all five sections"):
            for s in v.sections:
                st.markdown(f"**{s.title}** · {s.n_marked} highlighted")
                st.html(glue.prose_html(s, height=240))
    with right:
        st.subheader("Atoms read from the prose", anchor=False, help=tip("Atom"))
        st.markdown(f"**Extracted from the prose:** {escape_markdown(v.atom_words)}  \n"
                    f"**From the records ({escape_markdown('μ*')}):** "
                    f"{escape_markdown(v.truth_words)} "
                    + ("— the same." if v.equal else "— **they differ.**"))
        if not v.informative:
            st.info(f"{v.source_label} does not answer {qid}: its atom is always empty.",
                    icon=":material/block:")
        st.caption(f"Highlighted: the {chosen.n_marked} sentence(s) the extractor read for "
                   f"this atom, with the rest of their days. {v.reads}")
    # the grid spans the page: in half of it the five source columns were cut at 1280 px
    glue.atom_grid(v, key="ex_grid", on_pick=pick_atom)
    st.caption("Click a cell to select its atom. Rows are questions, columns sources; — "
               "means no atom. " + (
                   f"{int(v.grid_wrong.to_numpy().sum())} cell(s) differ from the atoms "
                   "read straight from the records." if v.grid_wrong.to_numpy().any()
                   else "Every cell equals the atom read straight from the records."))


prose_panel()

st.header("How faithful is the extractor?", anchor=False)
with store_guard():
    f = glue.faithfulness_of(*store)
ours = f.extractor == EXTRACTOR
k1, k2 = st.columns(2)
k1.metric("Cells equal to μ*", f"{f.overall:.2f} %", border=True, help=tip("Faithfulness"),
          delta=f"{f.k:,} of {f.n_cells:,}", delta_color="off", delta_arrow="off")
k2.metric("People", f"{f.n_personas:,}", border=True)
if ours:
    st.caption("A round trip: our extractor reads back the very sentences our renderer "
               "writes, so this figure is exact by construction wherever the resolvers read. "
               "It says nothing about prose worded otherwise and is not compared with the "
               "memory-benchmark paper's extractor, a large language model (LLM); the reworded "
               f"prose below is. {f.misses}")
else:
    st.caption(f"Extractor: {f.extractor}, reading the authors' prose: the same kind of "
               "figure as the memory-benchmark paper's GPT-5.4 extractor's "
               f"{f.paper_overall:.2f} % over its "
               f"whole test split. {f.misses}")
show_chart("ex_faith", (*store, f.extractor), lambda: figures.faithfulness_figure(f),
           file_name="faithfulness", download=(f.by_question.full, "faithfulness_by_question",
                                               "By question"))
if ours:
    st.subheader("Like for like: the same facts, worded otherwise", anchor=False)
    with store_guard():
        w = glue.wording_of(*store, glue.WORDING_RATE)
    w1, w2 = st.columns(2)
    w1.metric("Reworded prose: cells equal to μ*", f"{w.paraphrased:.2f} %", border=True,
              delta=f"{w.null_misses:,} empty, {w.wrong_misses:,} wrong", delta_color="off",
              delta_arrow="off")
    w2.metric("The paper's GPT-5.4 extractor", f"{w.paper:.2f} %", border=True)
    st.caption(w.story)
    show_table(w.by_source, key="ex_dl_wording", what="Round trip and reworded, by source",
               fit=True)
    with st.expander("By question, and what was reworded", icon=":material/edit_note:"):
        st.caption("Each kind of rewrite (the authors' own wording, clause order, synonyms, "
                   "number formats) reworded each line it applies to with probability "
                   f"{glue.WORDING_RATE:g} (seed {glue.WORDING_SEED}).")
        show_table(w.by_question, key="ex_dl_wording_q", what="By question", fit=True)
        show_table(w.rewrites, key="ex_dl_rewrites", what="Rewrites", fit=True)


@st.fragment
def noise_panel() -> None:
    """A noise profile re-scores every resolver; the 2 × 2 on the same noisy atoms."""
    st.header("What if the extractor were worse?", anchor=False)
    method_key(BOARD)
    # the four profiles need the full width: in a third of it the third option was cut at
    # 1280 px and the fourth hidden (issue 22)
    n1, n2 = st.container(), st.columns([2, 1])[0]
    profile = url_segmented(P_PROFILE, "Noise profile", where=n1, help=tip("Extraction noise"),
                            format_func={"uniform": "uniform ε",
                                         "paper": "GPT-5.4's error rates",
                                         "gemini": "Gemini's (approx.)",
                                         "paraphrase": "ours on reworded prose"}.get)
    eps = url_slider(P_EPS, "Flip rate ε", where=n2, format="%.2f",
                     disabled=profile != "uniform",
                     help="Share of the atoms flipped to another answer (uniform profile).")
    if profile == "paraphrase":
        st.caption(glue.paraphrase_profile_words())
    with store_guard(), st.spinner("Re-scoring every resolver…"):
        try:
            nv = glue.noise_of(*store, profile, float(eps))
        except ValueError as exc:  # a release of test people only: nothing to fit on
            st.info(f"The resolvers cannot be fitted on this store: "
                    f"{escape_markdown(public_message(exc))}. The default store "
                    "(`python -m core build`) has every split.", icon=":material/info:")
            return
    st.caption(f"Every resolver was fitted on the clean atoms and now answers from the "
               f"extracted atoms with the profile's errors (mixed mode, see the glossary). "
               f"{nv.story}")
    show_chart("ex_noise", (*store, profile, nv.eps), lambda: figures.noise_figure(nv),
               file_name=f"noise_{profile}")
    show_table(nv.board, key="ex_dl_noise", what="Noise board", fit=True)

    st.subheader("Where is the gap lost: resolving or extracting?", anchor=False,
                 help=tip("Resolver × input split"))
    a1, a2 = st.columns(2)
    a = url_select(P_A, "Method A", where=a1, format_func=METHOD_LABELS.get)
    b = url_select(P_B, "Method B", where=a2, format_func=METHOD_LABELS.get)
    if a == b:
        st.info("Pick two different methods.", icon=":material/compare_arrows:")
        return
    with store_guard(), st.spinner("Resampling people for the intervals…"):
        fv = glue.factorial_of(*store, a, b, profile, float(nv.eps))
    st.caption(fv.story)
    show_chart("ex_2x2", (*store, a, b, profile, nv.eps), lambda: figures.factorial_figure(fv),
               file_name=f"factorial_{a}_{b}")
    show_table(fv.cells, key="ex_dl_cells", what="2 × 2 cells", fit=True)
    show_table(fv.terms, key="ex_dl_terms", what="Attribution", fit=True)
    if fv.slices is not None:
        with st.expander("Split by whether some source had the right answer",
                         icon=":material/call_split:"):
            st.caption("\"Some source right\": questions where at least one source's clean "
                       "atom equals the ground truth (source reachability, see the glossary). "
                       "Where no source is right, a resolver can only guess. The split is made "
                       "on the clean atoms, for both inputs.")
            # seven columns in an expander's width: the method and the input wrap
            sl = fv.slices
            shown, config = number_table(sl.shown, labels=sl.labels, formats=sl.formats)
            fitted_table(shown, config, wrap={"label": 120, "input_words": 120},
                         hide_index=not sl.index,
                         height=table_height(0) + WRAP_ROW * len(shown))
            download_table(sl.full, stem=sl.stem, key="ex_dl_slices",
                           what="Reachability slices")


noise_panel()
