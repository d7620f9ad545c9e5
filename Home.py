"""Arbiter: home page (the three stories and their documents, what each page teaches, the store).

Run with ``python serve.py`` or ``streamlit run Home.py``. Pages live in ``pages/``
(Streamlit's pages-directory convention: ``pages/1_Walkthrough.py`` is served at
``/Walkthrough``, and the first menu entry is named after this file, hence ``Home.py``);
shared Streamlit glue is the package ``pages/_shared``; the logic is in ``core`` (no
Streamlit there). ``app.py`` is a symbolic link to this file, so ``streamlit run app.py``
shows the same menu (Streamlit names the entry after the file the link points to): edit
``Home.py``, never the link.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.glossary import PAPERS
from core.pages_registry import PAGES
from core.tour import STOPS
from pages._shared import ensure_store, load_store_info, store_guard, store_stamp
from pages._shared.ui import FAVICON

st.set_page_config(layout="wide", page_title="Arbiter", page_icon=FAVICON)

st.title("Arbiter")
st.markdown(
    "#### When evidence sources disagree, who settles it — and who checks the settler?"
)
st.markdown(
    "* **Sources conflict.** A person's plans, self-reports, payment logs and wearable each "
    "record the same days, each with its own bias, blind spots and lost days.\n"
    "* **Resolvers settle or abstain.** Fusion rules (majority vote, confusion-matrix "
    "models, judges built on a large language model (LLM)) pick an answer, and the good ones "
    "know when not to.\n"
    "* **Labels decide the ranking.** Score the same methods against a cheaper label source "
    "and the order of the leaderboard can flip."
)

path = ensure_store()

with st.container(border=True):  # the first thing offered: the guided tour (issue 22)
    st.markdown(f"**New here? Start with the guided tour.** {len(STOPS)} stops, one way "
                "conflicting evidence goes wrong at each: a real example, a question to answer "
                "before the reveal, and a link that opens the full page on the same example.")
    st.page_link("pages/0_Tour.py", label="Start the guided tour", icon=":material/tour:")

st.subheader("Three stories")
STORIES = (  # (paper, what it is, its first page, the link's words)
    (PAPERS["memory"],
     "4 seeds × 480 synthetic people × 30 days × 5 sources × 18 survey questions, with a "
     "ground truth computed from the latent days.",
     "pages/1_Walkthrough.py", "Start with the walkthrough"),
    (PAPERS["records"],
     "One person's records, source tiers, as-of dates, a conflict policy, disclosure and "
     "write-back.",
     "pages/9_Personal_records.py", "Move the date, switch the rule"),
    (PAPERS["answer key"],
     "Does an incomplete answer key reverse the ranking of two confidence rules, and how "
     "many human labels settle it?",
     "pages/6_Ranking_reversal.py", "See a ranking reverse"),
)
for col, (paper, what, target, words) in zip(st.columns(3), STORIES, strict=True):
    with col, st.container(border=True, height="stretch"):
        st.markdown(f"**{paper.story}**")
        st.caption(what)
        st.badge("available", color="green", icon=":material/check:")
        st.page_link(target, label=words, icon=":material/arrow_forward:")
        # the one place the app cites the documents (and their glossary entries)
        st.caption(f"From {paper.name}: {paper.citation}.")

st.subheader("Pages")
for card in PAGES:  # one card per page, in menu order (core/pages_registry.py)
    with st.container(border=True):
        st.page_link(card.path, label=f"**{card.title}**", icon=card.icon)
        st.markdown(card.teaches)

st.subheader("The store")
with st.container(border=True):
    with store_guard():
        info = load_store_info(str(path), store_stamp(path))
    config = info.get("config") or {}
    a, b, c, d = st.columns(4)
    a.metric("Origin", str(info["origin"]).split(":", 1)[0] or "?")
    b.metric("Seeds", len(info["seeds"]), help=", ".join(map(str, info["seeds"])))
    c.metric("Personas", info["n_personas"])
    built = str(info["built_at"])
    d.metric("Built on", built.split("T")[0] or "?", help=built or None)
    st.caption(f"Seeds {', '.join(map(str, info['seeds']))} · {info['n_ground_truth']} "
               f"ground-truth labels · schema {info['schema_version']}"
               + (f" · {config.get('personas_per_difficulty')} personas per difficulty"
                  if "personas_per_difficulty" in config else ""))
