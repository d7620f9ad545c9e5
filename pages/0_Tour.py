"""Tour: a guided walk through the failure modes of conflicting evidence (issue 22).

Glue over :mod:`core.tour`: one stop at a time — the failure in plain words, the example a
written rule selected, its one figure (:mod:`core.figures.tour`), a question to answer before
the reveal, a "try it yourself" link that opens the full page on the same view, what makes the
failure go away, how the example was chosen and a note for the teacher. Below: the
failure-mode index and the two hand-outs (one self-contained HTML file each).

URL state: ``stop`` (a stop's key, e.g. ``?stop=copy-cluster``). The stop's panel is one
``st.fragment``: moving between stops or revealing an answer reruns only the panel.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.pages_registry import page as page_record
from core.tour import STOPS, STORIES, index_frame, stop_terms
from core.urlparams import ChoiceParam
from pages._shared import (
    current,
    ensure_store,
    escape_markdown,
    open_page,
    plotly_config,
    public_message,
    store_stamp,
    url_select,
    url_sync,
)
from pages._shared.tour import handout_bytes, stop_figure_of, stop_view_of
from pages._shared.ui import FAVICON, glossary_link

#: The tour's own paragraphs quote data (names, answers) and may run past the 500 characters
#: a visitor's text is cut to; they are still escaped, never rendered as markup.
LONG = 4000


def words(text: object) -> str:
    """Our text (which quotes data) made inert for markdown, without the visitor's cut."""
    return escape_markdown(text, limit=LONG)

st.set_page_config(layout="wide", page_title="Tour · Arbiter", page_icon=FAVICON)

KEYS = tuple(s.key for s in STOPS)
BY_KEY = {s.key: s for s in STOPS}
STOP = ChoiceParam("stop", "stop", KEYS, default=KEYS[0])

path = ensure_store()
stamp = store_stamp(path)

st.title("Guided tour: how conflicting evidence goes wrong")
st.caption(
    f"{len(STOPS)} stops, one way of going wrong at each. Read what goes wrong, look at the "
    "example, answer the question before you reveal the answer, then open the full page and "
    "try it yourself. Every example is chosen by a written rule, not by hand, and a test "
    "checks that it still shows what the stop says.")
glossary_link()
open_page("tour", [STOP])


def _number(key: str) -> int:
    return KEYS.index(key) + 1


def _step(delta: int) -> None:
    """Move to the previous or next stop (a button's callback) and keep the URL in step."""
    i = KEYS.index(current(STOP)) + delta
    st.session_state[STOP.key] = KEYS[min(max(i, 0), len(KEYS) - 1)]
    url_sync(STOP)()


def _pairs(rows: tuple[tuple[str, str], ...]) -> None:
    """Label–value lines, the values shown as plain text (they come from data)."""
    for label, value in rows:
        st.markdown(f"**{words(label)}:** {words(value)}")


@st.fragment
def tour_panel() -> None:
    """The stop picker and one stop (reruns on its own)."""
    pick, back, ahead = st.columns([4, 1, 1], vertical_alignment="bottom")
    key = url_select(STOP, "Stop", where=pick,
                     format_func=lambda k: f"{_number(k)}. {BY_KEY[k].title}")
    i = _number(key)
    back.button("Previous", icon=":material/arrow_back:", on_click=_step, args=(-1,),
                disabled=i == 1, width="stretch")
    ahead.button("Next", icon=":material/arrow_forward:", on_click=_step, args=(1,),
                 disabled=i == len(KEYS), width="stretch")
    stop = BY_KEY[key]
    view = stop_view_of(str(path), stamp, key)

    st.subheader(f"Stop {i} of {len(KEYS)}: {stop.title}")
    st.caption(escape_markdown(f"{STORIES[stop.story]} · {stop.section}"))
    st.markdown(words(stop.failure))
    needed = stop_terms(stop, view)
    if needed:
        with st.expander("Words at this stop: " + ", ".join(a for a, _ in needed)):
            for alias, term in needed:
                name = "" if term.name == alias else f" — **{words(term.name)}**"
                st.markdown(f"{words(alias)}{name}: {words(term.plain)}")
    if view.note:
        st.info(words(public_message(view.note)), icon=":material/info:")
    if view.example or view.settings:
        example, settings = st.columns(2)
        with example:
            if view.example:
                st.markdown("##### The example")
                _pairs(view.example)
        with settings:
            if view.settings:
                st.markdown("##### Settings")
                _pairs(view.settings)
    fig = stop_figure_of(str(path), stamp, key)
    if fig is not None:
        st.plotly_chart(fig, theme="streamlit", config=plotly_config(f"tour-{key}"),
                        key=f"tour_fig_{key}")
        if view.chart is not None and view.chart.caption:
            st.caption(words(view.chart.caption))

    with st.container(border=True):
        st.markdown(f"**Your turn.** {words(stop.question)}")
        guess = st.text_input("Your answer (only you see it)", key=f"tour_guess_{key}",
                              max_chars=300, placeholder="Write it down before you look")
        shown = st.toggle("Show the answer", key=f"tour_reveal_{key}",
                          disabled=not view.answer)
        if shown and view.answer:
            if guess.strip():
                st.caption("You said:")
                st.text(guess.strip())
            st.success(words(view.answer), icon=":material/lightbulb:")
            st.markdown(words(view.reason))

    target = page_record(stop.page)
    st.page_link(stop.page, label=f"Try it yourself on the {target.title} page",
                 icon=":material/open_in_new:", query_params=view.query)
    st.caption(f"There: {words(stop.control)}")
    st.markdown(f"**What makes it go away.** {words(stop.remedy)}")
    with st.expander("How the example was chosen, and the check behind it"):
        st.markdown(words(stop.rule))
        _pairs(view.evidence)
        st.caption("This stop shows its failure on this store." if view.shows_failure else
                   "This stop does not show its failure on this store.")
    with st.expander("For the teacher"):
        st.markdown(f"**Ask.** {words(stop.teacher.ask)}")
        st.markdown(f"**The usual wrong answer.** {words(stop.teacher.wrong_answer)}")
        st.markdown(f"**Follow-up.** {words(stop.teacher.follow_up)}")


tour_panel()

st.subheader("Failure-mode index")
st.caption("Every stop, the page and the control that reproduce it, and where the documents "
           "describe it.")
INDEX = index_frame(STOPS, page_titles={p: page_record(p).title for p in {s.page for s in STOPS}},
                    numbered=True)
# st.table renders its cells as markdown: every cell made inert (μ* would start italics)
st.table(INDEX.map(words).rename(columns=words), border="horizontal", hide_index=True)

st.subheader("Hand-outs")
st.caption("The whole tour as one file that opens in any browser without a network, one stop "
           "per printed page. The students' copy hides the answers; the teacher's copy shows "
           "them, with the notes.")
students, teachers = st.columns(2)
students.download_button("Students' hand-out (HTML)",
                         data=lambda: handout_bytes(str(path), stamp, False),
                         file_name="arbiter-tour.html", mime="text/html",
                         icon=":material/download:", on_click="ignore", width="stretch")
teachers.download_button("Teacher's copy (HTML)",
                         data=lambda: handout_bytes(str(path), stamp, True),
                         file_name="arbiter-tour-teacher.html", mime="text/html",
                         icon=":material/download:", on_click="ignore", width="stretch")
