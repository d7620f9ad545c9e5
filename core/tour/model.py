"""The tour's records: a stop (its fixed words), its computed view, and the view's one chart.

A :class:`Stop` is what a teacher reads before class: the failure in plain sentences, the
written selection rule, the question asked before the reveal, the remedy, the page and control
that reproduce it, the document section and a :class:`TeacherNote`. Its ``compute`` function
turns a :class:`TourData` (the store, when the stop needs one) into a :class:`StopView`: the
selected example, its settings, the chart, the data-specific answer and reason, the deep link
and the *check* — whether the example really shows the failure, with the numbers behind it.

Invariant (``tests/test_tour.py``): a view whose ``shows_failure`` is true names an example
(``example`` is not empty) and carries the evidence of the check; a view that found no example
says why in ``note`` and is never presented as showing the failure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["CHART_KINDS", "STORIES", "Chart", "Stop", "StopView", "TeacherNote", "TourData"]

#: The four stories a stop belongs to, by what they are about (issue 22 point 6: stories are
#: named by their subject, not "Seed 000"). Keys are stable identifiers; values are the words.
STORIES: Mapping[str, str] = {
    "memory": "Whose record of a person's days to believe",
    "claims": "Web sources that copy each other",
    "labels": "When the answer key is incomplete",
    "records": "One person's records over time",
}

#: The chart kinds :mod:`core.figures.tour` draws, and the columns each one reads.
CHART_KINDS: Mapping[str, tuple[str, ...]] = {
    # one row per source / resolver / truth: who answered what, and was it right
    "answers": ("who", "role", "answer", "status"),
    # grouped bars, optional 95 % interval columns lo / hi
    "bars": ("group", "series", "value"),
    # lines over x; an optional boolean column "marker" highlights points
    "lines": ("x", "y", "series"),
    # a day strip: one row per (series, day), value NaN = no record that day
    "days": ("series", "day", "value"),
    # intervals on a time axis: one bar per row from start to end
    "timeline": ("row", "start", "end", "status"),
    # a heat map with the value printed in each cell
    "matrix": ("row", "col", "value"),
}

#: Statuses the "answers" and "timeline" charts colour (anything else is drawn neutral).
STATUSES = ("right", "wrong", "none", "chosen", "ignored", "expired")


@dataclass(frozen=True, eq=False)
class Chart:
    """The one figure of a stop, as data: :mod:`core.figures.tour` draws it.

    Attributes
    ----------
    kind : str
        One of :data:`CHART_KINDS`.
    data : DataFrame
        At least the columns :data:`CHART_KINDS` lists for ``kind``; an optional ``text``
        column is shown on hover (and in the "answers" chart, beside the mark).
    title : str
        The figure's title: what to look at, in plain words.
    x_title, y_title : str
        Axis titles ('' for none).
    caption : str
        One sentence under the figure: how to read it.
    marker : float, str or None
        A reference line: a vertical line at this x (a threshold, an as-of date, the
        crossover), drawn with ``marker_label``.
    marker_label : str
        The reference line's label.
    y_range : tuple of two floats or None
        A fixed y range (rates run from 0).
    """

    kind: str
    data: pd.DataFrame
    title: str
    x_title: str = ""
    y_title: str = ""
    caption: str = ""
    marker: float | str | None = None
    marker_label: str = ""
    y_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in CHART_KINDS:
            raise ValueError(f"chart kind must be one of {', '.join(CHART_KINDS)}, "
                             f"not {self.kind!r}")
        missing = [c for c in CHART_KINDS[self.kind] if c not in self.data.columns]
        if missing:
            raise ValueError(f"a {self.kind!r} chart needs the columns "
                             f"{', '.join(CHART_KINDS[self.kind])}; missing {', '.join(missing)}")
        if not self.title.strip():
            raise ValueError("a chart needs a title that says what to look at")


@dataclass(frozen=True)
class TeacherNote:
    """A stop's note for the teacher.

    Attributes
    ----------
    ask : str
        What to ask the class.
    wrong_answer : str
        The usual wrong answer, and why students give it.
    follow_up : str
        A follow-up exercise on the full page.
    """

    ask: str
    wrong_answer: str
    follow_up: str


Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, eq=False)
class StopView:
    """One stop, computed: the example, its chart, the answer and the check.

    Attributes
    ----------
    key : str
        The stop's key.
    example : tuple of (label, value) pairs
        The selected example, in words (a person and a question, a scenario, a record, an
        item); empty when none qualifies.
    settings : tuple of (label, value) pairs
        The settings under which it shows (bias and dropout scales, the as-of date, the
        label source …).
    chart : Chart or None
        The one figure that makes the failure visible (None only when no example qualifies).
    answer : str
        The answer to the stop's question for this example, one sentence.
    reason : str
        Why, in two or three sentences that point at the chart.
    link : tuple of (name, value) pairs
        Query parameters that open :attr:`Stop.page` on the same view.
    evidence : tuple of (label, value) pairs
        The numbers behind the check (counts with their denominators).
    shows_failure : bool
        The check: the example really shows the failure under the stated settings.
    note : str
        Why there is no example, or a caveat ('' when there is none).
    """

    key: str
    example: Pairs
    settings: Pairs
    chart: Chart | None
    answer: str
    reason: str
    link: Pairs
    evidence: Pairs
    shows_failure: bool
    note: str = ""

    def __post_init__(self) -> None:
        if self.shows_failure and (not self.example or self.chart is None or not self.evidence):
            raise ValueError(f"stop {self.key!r}: a view that shows its failure needs an "
                             "example, a chart and the evidence of the check")
        if not self.shows_failure and not self.note.strip():
            raise ValueError(f"stop {self.key!r}: a view that does not show its failure must "
                             "say why in its note")

    @property
    def query(self) -> dict[str, str]:
        """:attr:`link` as a dict (for ``st.page_link(query_params=…)`` and URLs)."""
        return dict(self.link)


@dataclass(frozen=True, eq=False)
class Stop:
    """One stop of the tour: the fixed words, and the function that computes its view.

    Attributes
    ----------
    key : str
        A short stable identifier (the Tour page's ``?stop=`` value): lower case and dashes.
    title : str
        The failure mode, as a heading.
    story : str
        One of :data:`STORIES`.
    section : str
        The document and section that describe the failure.
    failure : str
        Two or three plain sentences stating the failure.
    rule : str
        The written, deterministic rule that selects the example.
    question : str
        Asked before the reveal.
    remedy : str
        What to change to make the failure go away.
    page : str
        The full page (``pages/1_Walkthrough.py``) the "try it yourself" link opens.
    control : str
        The control on that page to move (the index's column).
    teacher : TeacherNote
        The teacher's note.
    compute : callable
        ``compute(data: TourData) -> StopView``.
    """

    key: str
    title: str
    story: str
    section: str
    failure: str
    rule: str
    question: str
    remedy: str
    page: str
    control: str
    teacher: TeacherNote
    compute: Callable[[TourData], StopView] = field(repr=False)

    def __post_init__(self) -> None:
        if not self.key or self.key != self.key.lower() or not self.key.replace("-", "").isalnum():
            raise ValueError(f"a stop's key is lower-case letters, digits and dashes: {self.key!r}")
        if self.story not in STORIES:
            raise ValueError(f"stop {self.key!r}: story must be one of {', '.join(STORIES)}")
        if not (self.page.startswith("pages/") and self.page.endswith(".py")):
            raise ValueError(f"stop {self.key!r}: page is pages/<n>_<Title>.py, not {self.page!r}")
        for name in ("title", "section", "failure", "rule", "question", "remedy", "control"):
            if not getattr(self, name).strip():
                raise ValueError(f"stop {self.key!r} needs its {name}")


class TourData:
    """What the stops read: the store (when there is one) and a memo shared by the stops.

    A stop loads what it needs through :meth:`memo`, so two stops that read the same cached
    predictions load them once per :class:`TourData`. Thread-safe: a key is computed once
    even when two sessions ask for it at the same time.

    Parameters
    ----------
    con : duckdb connection or None
        A read-only connection to the store; None when there is no store (the stops on
        shipped data still compute; the stops on the store say they need one).
    """

    def __init__(self, con: Any | None = None) -> None:
        self._con = con
        self._memo: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    @property
    def has_store(self) -> bool:
        """Whether a store is open."""
        return self._con is not None

    def connection(self) -> Any:
        """The store's connection; ``LookupError`` with a one-line reason when there is none."""
        if self._con is None:
            raise LookupError("this stop reads the store; build it with: python -m core build")
        return self._con

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``'s result, computed once per key (results are shared: don't mutate)."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                if key in self._memo:
                    return self._memo[key]
            value = compute()
            with self._lock:
                self._memo[key] = value
            return value
