"""The whole tour as one self-contained HTML file, for a class (issue 22, point 5).

One file, no network needed to open it: plotly.js is embedded once and every stop's figure is
a ``<div>`` drawn by it, so the file opens from a USB stick or an e-mail attachment. Every text
of a stop is HTML-escaped (stop texts are ours, but example values come from data). Printing
puts each stop on its own page; in the students' hand-out the answers sit in closed
``<details>`` (a printed copy leaves them out), the teacher's copy opens them and adds the
teacher notes and the failure-mode index's document sections.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Sequence

from plotly.offline import get_plotlyjs

from core.pages_registry import PAGES

from .index import index_frame
from .model import STORIES, Stop, StopView
from .vocabulary import stop_terms

__all__ = ["tour_html"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1F2937;
       max-width: 980px; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
h1 { font-size: 1.9rem; margin-bottom: .2rem; } h2 { font-size: 1.35rem; margin-top: 0; }
.stop { border-top: 2px solid #CBD5E1; padding-top: 1.2rem; margin-top: 2rem; }
.meta { color: #475569; font-size: .9rem; }
table { border-collapse: collapse; margin: .5rem 0; font-size: .92rem; }
td, th { border: 1px solid #CBD5E1; padding: .25rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #F1F5F9; }
.question { border-left: 4px solid #2B7BBA; background: #F1F7FC; padding: .5rem .8rem; }
details { margin: .4rem 0; } summary { cursor: pointer; font-weight: 600; }
.teacher { border-left: 4px solid #B87F00; background: #FFF8E6; padding: .5rem .8rem; }
.figure { width: 100%; }
.note { color: #9A3412; }
.words { font-size: .9rem; color: #334155; } .words dt { font-weight: 600; float: left;
  margin-right: .5rem; } .words dd { margin: 0 0 .3rem 0; }
@media print {
  .stop { break-before: page; border-top: none; }
  body { margin: 0; max-width: none; }
  .students summary::after { content: " (see the teacher's copy)"; font-weight: 400; }
}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pairs(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>" if body else ""


def _figure_div(view: StopView) -> str:
    if view.chart is None:
        return ""
    # here, not at the top: core.figures.tour reads core.tour.model, whose package imports
    # this module (a cycle when core.figures.tour is imported first)
    from core.figures.tour import stop_figure

    fig = stop_figure(view.chart)
    fig.update_layout(width=920, paper_bgcolor="#FFFFFF", plot_bgcolor="#FFFFFF",
                      font={"color": "#1F2937"})
    div = fig.to_html(full_html=False, include_plotlyjs=False,
                      config={"displayModeBar": False, "responsive": False})
    caption = f"<p class='meta'>{_e(view.chart.caption)}</p>" if view.chart.caption else ""
    return f"<div class='figure'>{div}</div>{caption}"


def _stop_section(number: int, stop: Stop, view: StopView, *, teacher: bool,
                  page_titles: dict[str, str]) -> str:
    page = page_titles.get(stop.page, stop.page)
    parts = [f"<section class='stop' id='{_e(stop.key)}'>",
             f"<p class='meta'>Stop {number} · {_e(STORIES[stop.story])} · {_e(stop.section)}</p>",
             f"<h2>{_e(stop.title)}</h2>", f"<p>{_e(stop.failure)}</p>"]
    needed = stop_terms(stop, view)
    if needed:
        items = "".join(f"<dt>{_e(alias)}</dt><dd>{_e(term.plain)}</dd>" for alias, term in needed)
        parts.append(f"<dl class='words'><p class='meta'>Words at this stop</p>{items}</dl>")
    if view.example:
        parts += ["<h3>The example</h3>", _pairs(view.example)]
    if view.settings:
        parts += ["<p class='meta'>Settings</p>", _pairs(view.settings)]
    if view.note:
        parts.append(f"<p class='note'>{_e(view.note)}</p>")
    parts.append(_figure_div(view))
    parts.append(f"<div class='question'><p><strong>Your turn.</strong> {_e(stop.question)}</p>")
    if view.answer:
        opened = " open" if teacher else ""
        parts.append(f"<details{opened}><summary>The answer</summary><p>{_e(view.answer)}</p>"
                     f"<p>{_e(view.reason)}</p></details>")
    parts.append("</div>")
    parts.append(f"<p><strong>Try it yourself:</strong> the page “{_e(page)}” — "
                 f"{_e(stop.control)}.</p>")
    parts.append(f"<p><strong>What makes it go away:</strong> {_e(stop.remedy)}</p>")
    parts.append(f"<details><summary>How the example was chosen</summary><p>{_e(stop.rule)}</p>"
                 f"{_pairs(view.evidence)}</details>")
    if teacher:
        t = stop.teacher
        parts.append(f"<div class='teacher'><p><strong>For the teacher.</strong> "
                     f"Ask: {_e(t.ask)}</p><p>The usual wrong answer: {_e(t.wrong_answer)}</p>"
                     f"<p>Follow-up: {_e(t.follow_up)}</p></div>")
    parts.append("</section>")
    return "".join(parts)


def _index_table(stops: Sequence[Stop], page_titles: dict[str, str]) -> str:
    frame = index_frame(stops, page_titles=page_titles)
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><tr>{head}</tr>{rows}</table>"


def tour_html(stops: Sequence[tuple[Stop, StopView]], *, teacher: bool = False,
              page_titles: dict[str, str] | None = None,
              generated: _dt.datetime | None = None) -> str:
    """The tour as one self-contained HTML document.

    Parameters
    ----------
    stops : sequence of (Stop, StopView)
        The stops in walking order, each with its computed view.
    teacher : bool, default=False
        The teacher's copy: answers open, teacher notes shown. Otherwise the students'
        hand-out: answers in closed ``<details>`` (left out when printed).
    page_titles : dict, optional
        Page path → its title, over the menu's titles (:data:`core.pages_registry.PAGES`).
    generated : datetime, optional
        The date printed in the header (default: now, UTC).

    Returns
    -------
    str
        The document; it loads nothing from the network.
    """
    if not stops:
        raise ValueError("the tour needs at least one stop to export")
    titles = {p.path: p.title for p in PAGES} | dict(page_titles or {})
    when = (generated or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d")
    kind = "Teacher's copy" if teacher else "Hand-out"
    body = "".join(_stop_section(i, s, v, teacher=teacher, page_titles=titles)
                   for i, (s, v) in enumerate(stops, start=1))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>Arbiter · guided tour · {kind}</title><style>{_CSS}</style>"
        f"<script>{get_plotlyjs()}</script></head>"
        f"<body class='{'teacher' if teacher else 'students'}'>"
        f"<h1>Arbiter · a guided tour of source-conflict failure modes</h1>"
        f"<p class='meta'>{kind} · {len(stops)} stops · generated {when}. At each stop: read "
        "what goes wrong, look at the example, answer the question before you look at the "
        "answer, then try it yourself in the app.</p>"
        f"<h2>Failure-mode index</h2>{_index_table([s for s, _ in stops], titles)}"
        f"{body}</body></html>")
