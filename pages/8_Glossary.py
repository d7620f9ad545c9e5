"""Glossary: every term, acronym and symbol the pages use, in plain words first.

Thin glue over :mod:`core.glossary` (the entries, their sources and the one sign convention
of gaps). The search box filters by plain substring; its text is never rendered.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.glossary import GLOSSARY, SIGN_CONVENTION, search
from pages._shared import escape_markdown, open_page
from pages._shared.ui import FAVICON

st.set_page_config(layout="wide", page_title="Glossary · Arbiter",
                   page_icon=FAVICON)
open_page("glossary", [])

st.title("Glossary")
st.caption("Every term, short form and symbol the pages use: what it means in plain words, "
           "then where it comes from. The three documents behind the pages are named by what "
           "they are about — the memory-benchmark paper, the personal-records study and the "
           "answer-key paper — and cited in their own entries, the first three below.")
st.info(f"**How gaps are signed.** {SIGN_CONVENTION}",
        icon=":material/swap_vert:")

query = st.text_input("Find a term", key="gl_query", max_chars=60,
                      placeholder="e.g. CORP, Brier, β, pilot")
found = search(query)
st.caption(f"{len(found)} of {len(GLOSSARY)} terms" + ("" if found else
           " (nothing matches: try a shorter word)"))

for term in found:
    with st.container(border=True):
        aliases = " · ".join(term.aliases)
        st.markdown(f"**{escape_markdown(term.name)}**"
                    + (f" &nbsp; `{aliases}`" if aliases else ""))
        st.markdown(escape_markdown(term.plain))
        st.caption(f"Source: {escape_markdown(term.source)}")
