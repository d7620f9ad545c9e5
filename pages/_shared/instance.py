"""The Walkthrough's sidebar: choose a seed, a persona (search and filters) and a question.

The persona menu is a dependent choice (its options change with the seed, the search and the
filters; its default is the selection protocol's pick), so the widgets take their state
from :mod:`.params` (:func:`~.params.init_from_url` when the page opens, :func:`~.params.sync_url`
after the widgets). Widget keys: ``wt_seed``, ``wt_persona``, ``wt_q`` (the URL's ``seed``,
``persona``, ``q``), ``wt_search``, ``wt_difficulty``, ``wt_split`` and the button
``wt_reset``. Every lookup on a rerun
reads shared cached objects (:mod:`.walkthrough`); the filtering is plain Python.
"""

from __future__ import annotations

import streamlit as st

from core.evaluation.walkthrough.persona import DIFFICULTY_LABELS
from core.glossary import tip
from core.testbed.questions import QIDS
from core.testbed.questions import question as get_question
from core.testbed.vocab import DIFFICULTIES, SPLITS

from .params import URL_KEYS, default_choice, init_from_url, sync_url
from .store import load_personas, load_selection_pool, store_guard
from .walkthrough import ProtocolPanel, protocol_pick, seed_index_of

__all__ = ["choose_instance", "why_this_instance"]


def _reset_to_pick(path: str, stamp: int) -> None:
    pick = protocol_pick(path, stamp)
    st.session_state.update({URL_KEYS["seed"]: pick.seed, URL_KEYS["persona"]: pick.persona,
                             URL_KEYS["q"]: pick.qid, "wt_search": "",
                             "wt_difficulty": list(DIFFICULTIES), "wt_split": list(SPLITS)})


def choose_instance(path: str, stamp: int) -> tuple[int, str, str]:
    """Draw the sidebar and return the chosen ``(seed, persona_id, qid)`` (URL kept in sync)."""
    with store_guard():
        index = seed_index_of(path, stamp)
        if URL_KEYS["seed"] not in st.session_state:  # the page opens: read the link
            init_from_url(load_personas(path, stamp), load_selection_pool(path, stamp))
    if st.session_state.get(URL_KEYS["seed"]) not in index.seeds:
        st.session_state[URL_KEYS["seed"]] = index.seeds[0]
    # filters start with everything selected (state set before the widgets, no default=)
    for name, everything in (("wt_difficulty", DIFFICULTIES), ("wt_split", SPLITS)):
        if name not in st.session_state:
            st.session_state[name] = list(everything)
    with st.sidebar:
        st.header("Choose an instance")
        seed = st.selectbox(
            "Seed", index.seeds, key=URL_KEYS["seed"],
            format_func=lambda s: f"{s} (seed {index.seeds.index(s) + 1})",
            help="The generator seed. Persona ids repeat across seeds, with different days.")
        search = st.text_input("Search persona id", key="wt_search",
                               placeholder="e.g. 121 or ellis")
        difficulty = st.pills("Difficulty", list(DIFFICULTIES), selection_mode="multi",
                              key="wt_difficulty", format_func=DIFFICULTY_LABELS.get,
                              help="Empty selection = no filter.")
        split = st.pills("Split", list(SPLITS), selection_mode="multi", key="wt_split",
                         help="The selection protocol ranks test personas only.")
        menu = index.menu(seed, search=search, difficulties=difficulty or (),
                          splits=split or ())
        if not menu.options:
            st.caption("No persona matches these filters; keeping the current one.")
        current = st.session_state.get(URL_KEYS["persona"])
        with store_guard():
            preferred = protocol_pick(path, stamp, seed).persona
        options, chosen = menu.choose(current=current, preferred=preferred)
        if chosen != current:
            st.session_state[URL_KEYS["persona"]] = chosen
        persona_id = st.selectbox(
            f"Persona ({len(options)} of {menu.n_in_seed})", options,
            key=URL_KEYS["persona"], format_func=lambda p: f"{p} · {menu.split_of.get(p, '')}")
        if st.session_state.get(URL_KEYS["q"]) not in QIDS:
            with store_guard():
                st.session_state[URL_KEYS["q"]] = default_choice(
                    load_personas(path, stamp), load_selection_pool(path, stamp), seed=seed,
                    persona=persona_id).qid
        qid = st.selectbox(
            "Question", list(QIDS), key=URL_KEYS["q"],
            format_func=lambda q: f"{q} · {get_question(q).title} ({get_question(q).topic})")
        st.button("Back to the protocol's pick", on_click=_reset_to_pick, args=(path, stamp),
                  icon=":material/restart_alt:", key="wt_reset",
                  help=tip("Selection protocol", "This button goes back to the instance it "
                           "ranks first."))
        st.caption("The address bar keeps seed, persona and question: copy it to share this "
                   "view.")
    sync_url(seed=seed, persona=persona_id, qid=qid)
    return seed, persona_id, qid


def why_this_instance(why: ProtocolPanel) -> None:
    """The "Why this instance?" expander: the protocol's filters, its funnel for the question,
    this pair's checks and the ten best-ranked pairs."""
    with st.expander("Why this instance? How the walkthrough picks its example"
                     + ("" if why.full else " (adapted)")):
        st.markdown("The example is picked by a fixed rule over the **test split**, reading each "
                    "source's atom straight from its records (μ*). Hard filters:\n"
                    + ";\n".join(f"* **({tag})** {text}" for tag, text in why.filters)
                    + ".\n\n" + why.ranking,
                    help=" ".join((tip("Selection protocol"), tip("LLM"))))
        if why.full and why.reference != "llm":
            st.info("This store holds no answers of a frontier large language model (only an "
                    "imported release carries "
                    "them), so filter (iii) uses **Majority Vote is wrong** as a stand-in: the "
                    "instance must be one that naive aggregation gets wrong.",
                    icon=":material/swap_horiz:")
        if why.pending:
            st.markdown("**Waiting for the resolvers** (the store has no cached predictions): "
                        + "; ".join(f"({tag}) {text}" for tag, text in why.pending) + ".")
        for col, step in zip(st.columns(len(why.steps)), why.steps, strict=True):
            col.metric(step.label, step.count, help=step.help)
        if not why.in_pool:
            st.info("This persona is not in the test split, so the protocol does not rank it.")
        else:
            verdict = (f"ranked **{why.rank}** of {why.n_qualifying} over all questions"
                       if why.rank else "**does not qualify**")
            st.markdown(f"This pair {verdict}: "
                        + " · ".join(f"{'✓' if ok else '✗'} {name}" for name, ok in why.checks))
        st.caption(why.top_note)
        st.dataframe(why.top, hide_index=True, width="stretch")
