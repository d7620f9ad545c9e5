"""Load test: a real Arbiter server driven by concurrent websocket sessions (run by hand).

``python benchmarks/loadtest.py [--values lesson random] [--sessions 1 5 20] [--duration 120]
[--replicas N] [--json out.json]``

Each value mode (``--values``, default both: ``lesson`` then ``random``) runs on its own fresh
server, one after the other:

``random``
    Every widget value is drawn uniformly from the widget's grid / options: nearly every
    slider move is a cache miss (the pages cache results and figures across sessions, keyed
    on widget values).
``lesson``
    A class following a teacher: every value comes from a small pool shared by all sessions,
    the widget's default plus 3 grid values at 25 %, 50 % and 75 % of its range (selects: the
    first options; see :func:`lesson_pool`). After the warm-up this mostly hits shared caches.
    This is the mode the time targets are graded on.

Per server:

1. Builds the store if it is missing (``python -m core build --db …``), then starts the server
   with the Docker image's command line, bound to loopback and a free port::

       python serve.py --server.port=PORT --server.address=127.0.0.1 --server.fileWatcherType=none

   with ``ARBITER_TIMING_LOG`` (one line per script run, see ``pages/_shared/timing.py``),
   ``ARBITER_DB`` and ``ARBITER_REPLICAS`` (``--replicas``, default 1) set, and waits for
   ``/_stcore/health``.
2. *warmup*: one session opens every page and sets every widget it finds to each of its
   warm-up values (lesson: every pool value, ending back on the default; random: one random
   value; with ``--replicas``, one such session per replica, at once). *warm*: one visitor
   then makes ``--warm-interactions`` interactions per page with
   the mode's values. *biasmiss*: one visitor sets the bias lab's ``lab_bias`` /
   ``lab_dropout`` (0.25 grid) to random values the server has not had yet
   (``--bias-interactions``): the page's regenerate-and-refit cache miss.
3. For each ``--sessions`` level, N sessions each loop for ``--duration`` seconds: open a page
   (``rerun_script.page_name`` = its URL path the first time, its page hash afterwards), make 2–4
   interactions on it (a mode value for a random slider, select slider, selectbox, radio,
   segmented control / pills, multiselect, toggle or number input found in the deltas, other
   than the value it shows when there is a choice), then move to the next page. Think time is
   1–3 s (``--think-min``/``--think-max``; see the README for why), at most one ``BackMsg`` is
   in flight per session, and a widget inside a
   fragment (``delta.fragment_id``) is rerun with ``rerun_script.fragment_id`` as a browser
   does. Like a browser, the client sends back the URL query string the server sets
   (``page_info_changed``) and the hashes of the cacheable messages it holds
   (``cached_message_hashes``).
4. Every interaction is a *repeat* when its (page, widget key, value) was already sent to this
   server (with ``--replicas``: to this replica) by any session (warm-up included) or was the
   widget's default on its first render, else *new*. Its server time is the sum of the
   timing-log rows of its rerun (:func:`attribute` matches rows to reruns by time window, page
   and kind, also with many sessions). The pages' caches are keyed on the combination of
   widget values, so a repeat can still miss when the session's other widgets differ.
5. Prints per mode: one table per phase (reruns, errors, exception boxes, client latency,
   server script time from the timing log, peak RSS, server and client CPU), server time per
   interaction p50/p95 for repeats and new values overall and per page, the slowest repeats,
   the exception boxes seen; then PASS/FAIL beside each target.

``--replicas N`` (N >= 2; HAProxy must be installed) adds ``--replicas N`` to the server's
command: ``serve.py`` starts N Streamlit processes on loopback ports and HAProxy on the public
port, with cookie stickiness (``core/replicas.py``), and the sessions go through HAProxy. Each
session behaves like a browser: before its websocket it GETs ``/`` through the proxy, keeps
the ``ARBITER_REPLICA`` cookie HAProxy sets, and sends it on every websocket handshake (its
reconnects too, adopting a new cookie when the handshake answer sets one, as after a replica's
death). The replica a session is on is read from the handshake answer's ``X-Arbiter-Replica``
header (else the cookie). The start waits until every replica answers its own health check and
HAProxy has sent a request to each. Every replica has its own caches, so the warm-up runs one
session per replica, each pinned by a cookie naming its replica, and "repeat" / "new" and the
bias lab's unseen values are kept per replica. Besides everything above (the totals, RSS and
CPU, are the whole set: serve.py, every replica with its workers, HAProxy), each phase reports
per replica: sessions (by the replica of their first connection; "moved" = sessions that
changed replica), reruns, client settle p50/p95, ``active_sessions`` (asked of the replica
directly), peak RSS and CPU seconds of the replica's process tree; and HAProxy's and
serve.py's own (without its children) peak RSS and CPU. The replicas' pids come from
``serve.py``'s lines ``arbiter: replica rN on 127.0.0.1:PORT (pid P)`` (the last one per
replica wins after a restart; else from the process tree); a replica restarted within a phase
reports the new process's CPU only and is flagged. Every replica appends to the one timing
log; :func:`attribute` pairs rows and reruns by time window, page and kind, whichever process
wrote them. The RSS target is the whole set's peak (issue 24: N = 2 within 2.5 GB at 80
sessions). With ``--replicas 1`` (the default) nothing of this happens: the server command,
the sessions and the report are as without the option.

All traffic goes to 127.0.0.1 (no proxies from the environment; with ``--replicas`` N >= 2,
through the server's own HAProxy on loopback). Every loop is bounded in count and time, and
each server's process group is terminated at the end of its mode, also on Ctrl-C or an error
(with replicas, serve.py stops its replicas and HAProxy itself; any left over after it exited
are killed by pid). Never run by pytest (the file name does not match ``test_*``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ButtonGroup_pb2 import ButtonGroup
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = ROOT / "data" / "arbiter.duckdb"
HOST = "127.0.0.1"

#: ``--replicas``: the cookie HAProxy inserts, the header naming the replica that answered and
#: ``serve.py``'s line naming a replica's port and pid (all from ``core/replicas.py``, not
#: imported: this script runs without the repository on ``sys.path``); the largest count.
REPLICA_COOKIE = "ARBITER_REPLICA"
REPLICA_HEADER = "X-Arbiter-Replica"
REPLICA_LINE = re.compile(r"arbiter: replica (\S+) on 127\.0\.0\.1:(\d+) \(pid (\d+)\)")
MAX_REPLICAS = 16
#: Names of HAProxy's row and of serve.py's own process (the supervisor, without its
#: children) in the per-replica figures.
PROXY = "haproxy"
SUPERVISOR = "serve.py"

#: Targets of the issue: errors and exception boxes at 20 sessions, p95 server seconds per
#: interaction for one visitor on a warm server and at 20 sessions (lesson values), p95
#: server seconds of the bias lab's new-value (cache-miss) interactions, peak RSS in bytes.
TARGET_WARM_P95 = 0.3
TARGET_LOADED_P95 = 1.5
TARGET_MISS_P95 = 0.4
TARGET_RSS = 2.5e9
TARGET_SESSIONS = 20

#: Value modes, in the default order of the runs (each on a fresh server).
VALUE_MODES = ("lesson", "random")
#: Lesson pool: the default plus the grid points at these fractions of the range.
LESSON_FRACTIONS = (0.25, 0.5, 0.75)
LESSON_POOL_SIZE = 4
#: The bias lab's new-value measurement: page (URL path) and the widgets it moves.
BIAS_PAGE = "Bias_lab"
BIAS_KEYS = ("lab_bias", "lab_dropout")

DONE = frozenset({ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
                  ForwardMsg.FINISHED_WITH_COMPILE_ERROR})
#: Element types this client knows how to set.
WIDGET_TYPES = frozenset({"slider", "selectbox", "radio", "button_group", "multiselect",
                          "checkbox", "number_input"})
MAX_MESSAGES_PER_RUN = 100_000
MAX_RECONNECTS = 10
MAX_WARMUP_TOUCHES_PER_PAGE = 200
#: Bound on the (page, key, value) and lesson-pool records of one server.
MAX_TRACKED = 200_000
#: Seconds of clock slack when matching timing-log rows to reruns; the cost of a row of the
#: wrong kind (full / fragment), of an impossible pair, and the largest assignment solved.
ROW_MATCH_SLACK = 0.005
KIND_PENALTY = 1000.0
NO_MATCH = 1e9
MAX_ASSIGNMENT_CELLS = 4_000_000
CACHE_MAX_AGE_RUNS = 2
CACHE_MAX_ENTRIES = 500
SAMPLE_EVERY = 0.5


# --------------------------------------------------------------------------- statistics


def pct(values, q: float) -> float | None:
    """Linear-interpolated percentile ``q`` (0–100) of ``values``; None when empty.

    Parameters
    ----------
    values : iterable of float
        The sample.
    q : float
        The percentile, 0–100.

    Returns
    -------
    float or None
        The percentile, or None for an empty sample.
    """
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def _pair(a: float | None, b: float | None) -> str:
    return f"{_ms(a)}/{_ms(b)}"


# --------------------------------------------------------------------------- widgets


@dataclass(frozen=True)
class Widget:
    """A widget found in the deltas, with what is needed to pick a valid value.

    Attributes
    ----------
    wid : str
        The element id (``$$ID-<hash>-<key>``), sent back in ``WidgetState.id``.
    key : str
        The user key (the id's tail; the whole id for unkeyed widgets).
    etype : str
        The element type (``slider``, ``selectbox``, ``button_group`` …).
    fragment_id : str
        ``delta.fragment_id`` ("" outside fragments).
    spec : tuple
        ``(name, value)`` pairs read from the proto: ``options``, ``min``, ``max``, ``step``,
        ``data_type``, ``n_values``, ``multi``, ``max_selections``.
    shown : object
        The value the widget shows, in the form :func:`widget_state` takes (see
        :func:`random_value`), as far as the proto tells it: ``value``/``raw_value`` when the
        server pushed one (``set_value``: on a page's first render, where the pages seed
        session state with their defaults), else the proto's ``default``; None when unknown.
        Reliable on a widget's first render in a session (what it is used for); on later
        renders without ``set_value`` the browser's own state is what counts.
    """

    wid: str
    key: str
    etype: str
    fragment_id: str
    spec: tuple
    shown: Any = None

    def get(self, name: str, default: Any = None) -> Any:
        """The ``spec`` entry ``name``."""
        for k, v in self.spec:
            if k == name:
                return v
        return default

    @property
    def signature(self) -> tuple:
        """What identifies the widget's value space (type, key and spec; not the value)."""
        return (self.key, self.etype, self.spec)


def _has(sub: Any, name: str) -> bool:
    """``sub.HasField(name)``; True for a field without presence (always set)."""
    try:
        return sub.HasField(name)
    except ValueError:
        return True


def _grid_n(w: Widget) -> int:
    """Number of points of a numeric widget's grid ``min, min + step, …, max``."""
    lo, hi, step = w.get("min"), w.get("max"), w.get("step")
    return max(0, int((hi - lo) / step + 1e-9)) + 1


def _grid_at(w: Widget, k: int) -> float:
    """Grid point ``k`` of a numeric widget (clipped to ``[min, max]``), as sent."""
    lo, hi, step = w.get("min"), w.get("max"), w.get("step")
    v = min(hi, max(lo, lo + k * step))
    return float(round(v)) if w.get("data_type") == 0 else round(v, 10)


def _snap(w: Widget, v: float) -> float:
    """``v`` snapped to the widget's grid, in the same float form as :func:`_grid_at`."""
    lo, step = w.get("min"), w.get("step")
    return _grid_at(w, int(round((v - lo) / step)))


def _in_order(options: tuple, chosen) -> tuple:
    """``chosen`` (option strings) in option order, unknown ones dropped."""
    chosen = set(chosen)
    return tuple(o for o in options if o in chosen)


def _shown_value(etype: str, sub: Any, w: Widget) -> Any:
    """The value the widget shows (see :attr:`Widget.shown`), or None when unknown."""
    options = w.get("options")
    pushed = bool(getattr(sub, "set_value", False))
    if etype == "slider":
        n = w.get("n_values", 1)
        if options:
            if pushed and len(sub.raw_value):
                vals = [v for v in sub.raw_value if v in options]
            else:
                idx = list(sub.value) if pushed and len(sub.value) else list(sub.default)
                vals = [options[int(i)] for i in idx if 0 <= int(i) < len(options)]
            return tuple(vals) if len(vals) == n else None
        vals = list(sub.value) if pushed and len(sub.value) else list(sub.default)
        return tuple(sorted(_snap(w, v) for v in vals)) if len(vals) == n else None
    if etype in ("selectbox", "radio"):
        if pushed and _has(sub, "raw_value") and sub.raw_value in options:
            return sub.raw_value
        if _has(sub, "default") and 0 <= sub.default < len(options):
            return options[sub.default]
        return None
    if etype in ("multiselect", "button_group"):
        if pushed:
            return _in_order(options, sub.raw_values)
        return _in_order(options, [options[i] for i in sub.default if 0 <= i < len(options)])
    if etype == "checkbox":
        return bool(sub.value) if pushed else bool(sub.default)
    if etype == "number_input":
        if pushed and _has(sub, "value"):
            return _snap(w, sub.value)
        return _snap(w, sub.default) if _has(sub, "default") else None
    return None


def widget_from_element(etype: str, sub: Any, fragment_id: str) -> Widget | None:
    """A :class:`Widget` for an element of a settable type, or None to leave it alone.

    Parameters
    ----------
    etype : str
        ``new_element.WhichOneof("type")``.
    sub : protobuf message
        ``getattr(new_element, etype)``.
    fragment_id : str
        ``delta.fragment_id``.

    Returns
    -------
    Widget or None
        None for other types, widgets in a form, disabled widgets, widgets whose change does
        not rerun (``on_change="ignore"``) and widgets without a usable value range.
    """
    if etype not in WIDGET_TYPES:
        return None
    wid = sub.id
    if (not wid or sub.disabled or getattr(sub, "form_id", "")
            or getattr(sub, "ignore_rerun", False)):
        return None
    key = wid.split("-", 2)[2] if wid.startswith("$$ID-") and wid.count("-") >= 2 else wid
    if key == "None":
        key = wid
    spec: dict[str, Any] = {}
    if etype == "slider":
        if sub.options:
            spec["options"] = tuple(sub.options)
        elif sub.data_type in (Slider.INT, Slider.FLOAT) and sub.step > 0 and sub.max > sub.min:
            spec.update(min=sub.min, max=sub.max, step=sub.step, data_type=sub.data_type)
        else:
            return None
        spec["n_values"] = max(1, min(2, len(sub.default)))
    elif etype in ("selectbox", "radio", "multiselect"):
        if not sub.options:
            return None
        spec["options"] = tuple(sub.options)
        if etype == "multiselect":
            spec["max_selections"] = sub.max_selections
    elif etype == "button_group":
        if not sub.options:
            return None
        spec["options"] = tuple(o.content for o in sub.options)
        spec["multi"] = sub.click_mode == ButtonGroup.MULTI_SELECT
    elif etype == "number_input":
        step = sub.step or (1.0 if sub.data_type == 0 else 0.01)
        lo = sub.min if sub.has_min else sub.default - 10 * step
        hi = sub.max if sub.has_max else sub.default + 10 * step
        if hi <= lo:
            return None
        spec.update(min=lo, max=hi, step=step, data_type=sub.data_type)
    w = Widget(wid, key, etype, fragment_id, tuple(spec.items()))
    try:
        shown = _shown_value(etype, sub, w)
    except (ValueError, IndexError, TypeError):
        shown = None
    return Widget(wid, key, etype, fragment_id, w.spec, shown)


# Values are plain hashable Python objects, one form per widget type, the same in both value
# modes (so that "(page, key, value) already sent" is a set lookup):
#   slider            tuple of floats (1 or 2, sorted); select slider: tuple of option strings
#   selectbox, radio  option string
#   button_group      tuple of option strings in option order (1 for single select)
#   multiselect       tuple of option strings in option order
#   checkbox          bool
#   number_input      float


def random_value(w: Widget, rng: random.Random) -> Any:
    """A random valid value for ``w``, uniform over its grid / options.

    Parameters
    ----------
    w : Widget
        The widget.
    rng : random.Random
        The session's generator.

    Returns
    -------
    object
        A value in the form :func:`widget_state` takes.
    """
    options = w.get("options")
    if w.etype == "slider":
        n = w.get("n_values", 1)
        if options:
            idx = sorted(rng.randrange(len(options)) for _ in range(n))
            return tuple(options[i] for i in idx)
        return tuple(sorted(_grid_at(w, rng.randrange(_grid_n(w))) for _ in range(n)))
    if w.etype in ("selectbox", "radio"):
        return rng.choice(options)
    if w.etype == "button_group":
        if w.get("multi"):
            return _in_order(options, rng.sample(options, rng.randint(1, min(3, len(options)))))
        return (rng.choice(options),)
    if w.etype == "multiselect":
        cap = w.get("max_selections") or len(options)
        size = rng.randint(1, max(1, min(4, cap, len(options))))
        return _in_order(options, rng.sample(options, size))
    if w.etype == "checkbox":
        return rng.random() < 0.5
    if w.etype == "number_input":
        return _grid_at(w, rng.randrange(_grid_n(w)))
    raise ValueError(f"unsupported widget type {w.etype!r}")


def lesson_pool(w: Widget) -> list:
    """The small shared pool of values of the ``lesson`` mode: default plus up to 3 others.

    Deterministic in the widget's spec and shown default, so every session draws from the
    same pool: numeric and select sliders and number inputs take the grid points at 25 %,
    50 % and 75 % of the range (range sliders: (25 %, 75 %), (0 %, 50 %), (50 %, 100 %));
    selectboxes, radios and single-select button groups the first options; multiselects and
    multi-select button groups the first option, the first two, the second; toggles both
    states. Duplicates are dropped (a small grid gives a smaller pool).

    Parameters
    ----------
    w : Widget
        The widget (``shown`` is the default when known).

    Returns
    -------
    list
        1–4 values, the default first, in the form :func:`widget_state` takes.
    """
    options = w.get("options")
    out: list = []

    def add(v: Any) -> None:
        if v is not None and v not in out and len(out) < LESSON_POOL_SIZE:
            out.append(v)

    add(w.shown)
    if w.etype in ("slider", "number_input"):
        n_grid = len(options) if options else _grid_n(w)
        at = (lambda k: options[k]) if options else (lambda k: _grid_at(w, k))
        q = [int(round(f * (n_grid - 1))) for f in (0.0, *LESSON_FRACTIONS, 1.0)]
        if w.etype == "slider" and w.get("n_values", 1) == 2:
            for a, b in ((q[1], q[3]), (q[0], q[2]), (q[2], q[4])):
                add((at(a), at(b)))
        else:
            one = (lambda k: (at(k),)) if w.etype == "slider" else at
            for k in q[1:4]:
                add(one(k))
    elif w.etype in ("selectbox", "radio") or (w.etype == "button_group"
                                               and not w.get("multi")):
        for o in options:
            add(o if w.etype != "button_group" else (o,))
    elif w.etype in ("multiselect", "button_group"):
        cap = w.get("max_selections") or len(options)
        for combo in ((0,), (0, 1), (1,)):
            if len(combo) <= cap and max(combo) < len(options):
                add(tuple(options[i] for i in combo))
    elif w.etype == "checkbox":
        base = bool(w.shown)
        add(base)
        add(not base)
    if not out:
        out.append(random_value(w, random.Random(w.key)))
    return out


def is_valid(w: Widget, value: Any) -> bool:
    """Whether ``value`` is a valid value of ``w`` as it is now (options, range, size)."""
    options = w.get("options")
    try:
        if w.etype == "slider":
            if len(value) != w.get("n_values", 1):
                return False
            if options:
                return all(v in options for v in value)
            return all(w.get("min") - 1e-9 <= v <= w.get("max") + 1e-9 for v in value)
        if w.etype in ("selectbox", "radio"):
            return value in options
        if w.etype in ("button_group", "multiselect"):
            return all(v in options for v in value)
        if w.etype == "checkbox":
            return isinstance(value, bool)
        if w.etype == "number_input":
            return w.get("min") - 1e-9 <= value <= w.get("max") + 1e-9
    except TypeError:
        return False
    return False


def widget_state(w: Widget, value: Any) -> WidgetState:
    """The ``WidgetState`` that sets ``w`` to ``value``.

    Returns
    -------
    WidgetState
        ``double_array_value`` (slider), ``string_array_value`` (select slider, segmented
        control / pills, multiselect), ``string_value`` (selectbox, radio), ``bool_value``
        (checkbox / toggle) or ``double_value`` (number input).
    """
    ws = WidgetState(id=w.wid)
    if w.etype == "slider":
        if w.get("options"):
            ws.string_array_value.data.extend(value)
        else:
            ws.double_array_value.data.extend(value)
    elif w.etype in ("selectbox", "radio"):
        ws.string_value = value
    elif w.etype in ("button_group", "multiselect"):
        ws.string_array_value.data.extend(value)
    elif w.etype == "checkbox":
        ws.bool_value = bool(value)
    elif w.etype == "number_input":
        ws.double_value = float(value)
    return ws


def value_text(value: Any) -> str:
    """A short printable form of a value."""
    if isinstance(value, tuple):
        text = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _scoped(item: tuple, where: str | None) -> tuple:
    """``item`` as :class:`Values` keeps it for replica ``where`` (unchanged for None)."""
    return item if where is None else (where, *item)


class Values:
    """How sessions choose widget values, and which (page, key, value) the server has seen.

    One instance per server lifetime, shared by every session and phase on that server.
    With ``--replicas`` every replica has its own caches, so what was sent or shown is kept
    per replica: the methods' ``where`` (the session's replica; None without replicas, which
    keeps the records as they always were). The lesson pools are shared.

    Parameters
    ----------
    mode : str
        ``random`` (uniform over the widget's grid / options) or ``lesson`` (from
        :func:`lesson_pool`, the same pool for every session: a class following a teacher).
    """

    def __init__(self, mode: str) -> None:
        if mode not in VALUE_MODES:
            raise ValueError(f"unknown value mode {mode!r}")
        self.mode = mode
        self.seen: set[tuple] = set()             # (page, key, value) the server has had
        self.pools: dict[tuple, list] = {}        # (page, signature) -> lesson pool
        self.first_seen: set[tuple] = set()       # (page, key) already observed
        self.combos: set[tuple] = set()           # (page, every widget's value) sent or shown

    def observe(self, page: str, widgets, where: str | None = None) -> None:
        """Note widgets rendered on ``page``: the first time a (page, key) shows up (a fresh
        session's first render, so the page's default), its shown value counts as seen."""
        for w in widgets:
            first = _scoped((page, w.key), where)
            if first not in self.first_seen and len(self.first_seen) < MAX_TRACKED:
                self.first_seen.add(first)
                if w.shown is not None:
                    self.seen.add(_scoped((page, w.key, w.shown), where))
            if self.mode == "lesson":
                self.pool(page, w)

    def pool(self, page: str, w: Widget) -> list:
        """The lesson pool of ``w`` on ``page``, fixed the first time its spec is seen."""
        sig = (page, w.signature)
        pool = self.pools.get(sig)
        if pool is None:
            pool = lesson_pool(w)
            if len(self.pools) < MAX_TRACKED:
                self.pools[sig] = pool
        return pool

    def choose(self, page: str, w: Widget, rng: random.Random, current: Any = None) -> Any:
        """A value for ``w`` in this mode, other than ``current`` when there is a choice."""
        if self.mode == "lesson":
            pool = [v for v in self.pool(page, w) if is_valid(w, v)] or [random_value(w, rng)]
            others = [v for v in pool if v != current]
            return rng.choice(others or pool)
        value = random_value(w, rng)
        for _ in range(5):
            if value != current:
                break
            value = random_value(w, rng)
        return value

    def choose_unseen(self, page: str, w: Widget, rng: random.Random,
                      where: str | None = None) -> Any:
        """A random value of ``w`` the server (replica ``where``) has not had yet (any value
        once all were)."""
        for _ in range(200):
            value = random_value(w, rng)
            if _scoped((page, w.key, value), where) not in self.seen:
                return value
        return random_value(w, rng)

    def warmup_values(self, page: str, w: Widget, rng: random.Random) -> list:
        """Warm-up values of ``w``: every pool value, then back to the default (lesson); one
        random value (random)."""
        if self.mode != "lesson":
            return [random_value(w, rng)]
        pool = self.pool(page, w)            # pool[0] is the default when it was known
        return pool[1:] + pool[:1]

    def mark(self, page: str, key: str, value: Any, where: str | None = None) -> bool:
        """Record that (page, key, value) is being sent (to replica ``where``); True when it
        was sent/seen before."""
        item = _scoped((page, key, value), where)
        if item in self.seen:
            return True
        if len(self.seen) < MAX_TRACKED:
            self.seen.add(item)
        return False

    def mark_combo(self, page: str, combo: tuple, where: str | None = None) -> bool:
        """Like :meth:`mark` for the values of every widget of the page at once."""
        item = _scoped((page, combo), where)
        if item in self.combos:
            return True
        if len(self.combos) < MAX_TRACKED:
            self.combos.add(item)
        return False

    def pools_table(self) -> dict[str, list[str]]:
        """The lesson pools, ``"page key" -> [value, …]`` (printable; JSON)."""
        out: dict[str, list[str]] = {}
        for (page, (key, _etype, _spec)), pool in sorted(self.pools.items(),
                                                         key=lambda kv: (kv[0][0], kv[0][1][0])):
            name = f"{_label(page)} {key}"
            while name in out:
                name += "'"
            out[name] = [value_text(v) for v in pool]
        return out


# --------------------------------------------------------------------------- recording


@dataclass
class Recorder:
    """What one phase observed on the client side (shared by its sessions).

    Attributes
    ----------
    runs : list of dict
        One entry per completed rerun: ``session``, ``page``, ``action`` (``load`` or
        ``interact``), ``widget`` (type), ``key``, ``value`` (printable), ``repeat`` (the
        (page, key, value) was sent or shown before on this server, by any session),
        ``combo_repeat`` (so was the whole page state: every widget's value), ``fragment``,
        ``wall0``/``wall1`` (send, finish; epoch s), ``first`` (send → first delta, s),
        ``settle`` (send → ``script_finished``, s).
    errors : Counter
        Client-side errors by kind (``timeout``, ``socket``, ``page_not_found``, …).
    error_samples : list of str
        The first few error details.
    exceptions : list of tuple
        ``(page, type, message)`` of every exception element seen.
    alerts : Counter
        ``(page, text)`` of ``st.error`` boxes seen (counted, not an error).
    replicas : dict
        ``--replicas``: session index -> the replicas its connections reached, in order
        (a name again only when it changed).
    """

    runs: list = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    error_samples: list = field(default_factory=list)
    exceptions: list = field(default_factory=list)
    alerts: Counter = field(default_factory=Counter)
    replicas: dict = field(default_factory=dict)

    def error(self, kind: str, detail: str) -> None:
        """Count an error of ``kind``; keep the first 10 details."""
        self.errors[kind] += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(f"{kind}: {detail}"[:300])


class RunTimeout(Exception):
    """A rerun did not finish within ``--timeout`` seconds."""


class Session:
    """One simulated browser tab on its own websocket.

    Parameters
    ----------
    index : int
        Session number (labels only).
    url : str
        ``ws://127.0.0.1:PORT/_stcore/stream``.
    rec : Recorder
        Where the observations go.
    rng : random.Random
        The session's generator (widget values, think times, page order).
    values : Values
        The value mode and the server-wide record of values already sent (shared).
    timeout : float
        Seconds a rerun may take before it counts as a timeout.
    use_cache : bool
        Send ``cached_message_hashes`` like a browser (and resolve ``ref_hash`` messages).
    compression : bool
        Offer permessage-deflate, as browsers do.
    sticky : bool
        ``--replicas``: like a browser behind HAProxy, GET ``/`` before the first websocket,
        keep the :data:`REPLICA_COOKIE` it sets and send it on every handshake (reconnects
        too; a handshake answer that sets a new one replaces it). A ``cookie`` set before the
        first :meth:`connect` pins the session to that replica (no GET).
    """

    def __init__(self, index: int, url: str, rec: Recorder, rng: random.Random,
                 values: Values, timeout: float, use_cache: bool = True,
                 compression: bool = True, sticky: bool = False) -> None:
        self.index, self.url, self.rec, self.rng, self.values = index, url, rec, rng, values
        self.timeout, self.use_cache, self.compression = timeout, use_cache, compression
        self.sticky = sticky
        self.cookie: str | None = None           # the replica cookie's value (sticky only)
        self.replica: str | None = None          # the replica of the current websocket
        self.ws = None
        self.pages: dict[str, str] = {}          # url path -> page hash
        self.page: str | None = None             # current url path
        self.query = ""
        self.widgets: dict[str, Widget] = {}     # key -> widget (current page)
        self.cache: dict[str, tuple] = {}        # msg hash -> (summary, last run)
        self.current: dict[tuple, Any] = {}      # (page, key) -> value it shows (as far as known)
        self.run_no = 0
        self.reconnects = 0

    # ---- connection

    async def connect(self) -> None:
        """Open a fresh websocket (a new server session); sticky: with the replica cookie."""
        await self.close()
        headers = None
        if self.sticky:
            if self.cookie is None:      # a browser loads the page before its websocket
                port = int(self.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                status, got = await asyncio.to_thread(http_head_get, port, "/",
                                                      min(self.timeout, 30.0))
                self.cookie = cookie_value(got.get("set-cookie", []))
                if self.cookie is None:
                    raise RuntimeError(f"GET / answered {status} without a {REPLICA_COOKIE} "
                                       "cookie")
            headers = {"Cookie": f"{REPLICA_COOKIE}={self.cookie}"}
        self.ws = await websockets.connect(self.url, max_size=None, ping_interval=None,
                                           open_timeout=self.timeout, close_timeout=2,
                                           proxy=None, additional_headers=headers,
                                           compression="deflate" if self.compression else None)
        if self.sticky:
            answer = self.ws.response.headers
            self.cookie = cookie_value(answer.get_all("Set-Cookie")) or self.cookie
            self.replica = answer.get(REPLICA_HEADER) or self.cookie
            seen = self.rec.replicas.setdefault(self.index, [])
            if not seen or seen[-1] != self.replica:
                seen.append(self.replica)
        self.page, self.query, self.widgets, self.cache = None, "", {}, {}
        self.current = {}

    async def close(self) -> None:
        """Close the websocket, ignoring errors."""
        ws, self.ws = self.ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()

    async def reconnect(self) -> bool:
        """Reconnect after an error; False once ``MAX_RECONNECTS`` is used up."""
        if self.reconnects >= MAX_RECONNECTS:
            return False
        self.reconnects += 1
        try:
            await self.connect()
            return True
        except Exception as exc:
            self.rec.error("connect", repr(exc))
            return False

    # ---- one rerun

    def _summary(self, fm: ForwardMsg) -> tuple | None:
        el = fm.delta.new_element
        etype = el.WhichOneof("type")
        if etype is None:
            return None
        if etype == "exception":
            return ("x", el.exception.type, el.exception.message)
        if etype == "alert":
            if el.alert.format == 1:  # Alert.ERROR
                return ("a", el.alert.body[:160])
            return None
        if etype in WIDGET_TYPES:
            w = widget_from_element(etype, getattr(el, etype), fm.delta.fragment_id)
            return ("w", w) if w is not None else None
        return None

    def _apply(self, summary: tuple | None, page: str, found: dict) -> None:
        if summary is None:
            return
        tag = summary[0]
        if tag == "w":
            found[summary[1].key] = summary[1]
        elif tag == "x":
            self.rec.exceptions.append((page, summary[1], summary[2]))
        elif tag == "a":
            self.rec.alerts[(page, summary[1])] += 1

    async def rerun(self, page: str, action: str, widget: Widget | None = None,
                    value: Any = None) -> None:
        """Send one ``rerun_script`` and read until the run has finished.

        Parameters
        ----------
        page : str
            URL path of the page ("" for home).
        action : str
            ``load`` (open ``page``) or ``interact`` (set ``widget`` on the current page).
        widget : Widget, optional
            The widget to set.
        value : object, optional
            Its new value (default: :meth:`Values.choose` in the session's value mode).

        Raises
        ------
        RunTimeout
            When ``script_finished`` does not come within the timeout.
        """
        bm = BackMsg()
        rs = bm.rerun_script
        page_hash = self.pages.get(page, "")
        if page_hash:
            rs.page_script_hash = page_hash
        else:
            rs.page_name = page
        if page != self.page:
            self.query = ""      # a new page starts from its bare URL
        rs.query_string = self.query
        fragment = ""
        repeat = combo_repeat = None
        if widget is not None:
            if value is None:
                value = self.values.choose(page, widget, self.rng,
                                           self.current.get((page, widget.key)))
            rs.widget_states.widgets.append(widget_state(widget, value))
            repeat = self.values.mark(page, widget.key, value, self.replica)
            combo_repeat = self.values.mark_combo(page, self._combo(page, widget.key, value),
                                                  self.replica)
            fragment = widget.fragment_id
            if fragment:
                rs.fragment_id = fragment
        if self.use_cache and self.cache:
            rs.cached_message_hashes.extend(self.cache)
        self.run_no += 1
        found: dict[str, Widget] = {}
        first = None
        wall0 = time.time()
        t0 = time.perf_counter()
        await self.ws.send(bm.SerializeToString())
        fm = ForwardMsg()
        try:
            async with asyncio.timeout(self.timeout):
                for _ in range(MAX_MESSAGES_PER_RUN):
                    data = await self.ws.recv()
                    fm.Clear()
                    fm.ParseFromString(data)
                    kind = fm.WhichOneof("type")
                    if kind == "delta":
                        if first is None:
                            first = time.perf_counter() - t0
                        if fm.delta.WhichOneof("type") != "new_element":
                            continue
                        summary = self._summary(fm)
                        if self.use_cache and fm.metadata.cacheable and fm.hash:
                            self.cache[fm.hash] = (summary, self.run_no)
                        self._apply(summary, page, found)
                    elif kind == "ref_hash":
                        if first is None:
                            first = time.perf_counter() - t0
                        hit = self.cache.get(fm.ref_hash)
                        if hit is None:
                            self.rec.error("protocol", f"unknown ref_hash on {page!r}")
                            continue
                        self.cache[fm.ref_hash] = (hit[0], self.run_no)
                        self._apply(hit[0], page, found)
                    elif kind == "navigation":
                        self.pages = {p.url_pathname: p.page_script_hash
                                      for p in fm.navigation.app_pages}
                    elif kind == "page_info_changed":
                        self.query = fm.page_info_changed.query_string
                    elif kind == "page_not_found":
                        self.rec.error("page_not_found", repr(fm.page_not_found.page_name))
                    elif kind == "session_event":
                        if fm.session_event.WhichOneof("type") == "script_compilation_exception":
                            exc = fm.session_event.script_compilation_exception
                            self.rec.error("compile", f"{page!r}: {exc.type}: {exc.message}")
                    elif kind == "script_finished" and fm.script_finished in DONE:
                        break
                else:
                    raise RunTimeout(f"more than {MAX_MESSAGES_PER_RUN} messages")
        except TimeoutError as exc:
            raise RunTimeout(f"{action} {page!r} after {self.timeout:.0f} s") from exc
        settle = time.perf_counter() - t0
        self.page = page
        if fragment:
            self.widgets = {k: w for k, w in self.widgets.items() if w.fragment_id != fragment}
            self.widgets.update(found)
        else:
            self.widgets = found
        self.values.observe(page, found.values(), self.replica)
        for w in found.values():
            if w.shown is not None and (action == "load" or (page, w.key) not in self.current):
                self.current[(page, w.key)] = w.shown
        if widget is not None:
            self.current[(page, widget.key)] = value
        elif action == "load":
            self.values.mark_combo(page, self._combo(page), self.replica)
        if self.use_cache:
            oldest = self.run_no - CACHE_MAX_AGE_RUNS
            if len(self.cache) > CACHE_MAX_ENTRIES or any(r < oldest for _, r in
                                                          self.cache.values()):
                keep = sorted(((r, h) for h, (_, r) in self.cache.items() if r >= oldest),
                              reverse=True)[:CACHE_MAX_ENTRIES]
                self.cache = {h: self.cache[h] for _, h in keep}
        self.rec.runs.append({
            "session": self.index, "page": page, "action": action,
            "widget": widget.etype if widget else "", "key": widget.key if widget else "",
            "value": value_text(value) if widget else "", "repeat": repeat,
            "combo_repeat": combo_repeat,
            "fragment": bool(fragment),
            "wall0": wall0, "wall1": time.time(), "first": first if first is not None
            else settle, "settle": settle, "replica": self.replica})

    def _combo(self, page: str, key: str | None = None, value: Any = None) -> tuple:
        """The values of every widget of the current page (``key`` set to ``value``), as far
        as this session knows them, sorted by key."""
        state = {k: self.current.get((page, k)) for k in self.widgets}
        if key is not None:
            state[key] = value
        return tuple(sorted(state.items(), key=lambda kv: kv[0]))

    async def safe(self, page: str, action: str, widget: Widget | None = None,
                   value: Any = None) -> bool:
        """:meth:`rerun`, counting an error and reconnecting on failure.

        Returns
        -------
        bool
            False when the session cannot go on (reconnects used up).
        """
        try:
            await self.rerun(page, action, widget, value)
            return True
        except RunTimeout as exc:
            self.rec.error("timeout", str(exc))
        except (websockets.ConnectionClosed, OSError) as exc:
            self.rec.error("socket", f"{action} {page!r}: {exc!r}")
        except Exception as exc:  # a client bug must not take the others down
            self.rec.error("client", f"{action} {page!r}: {exc!r}")
        return await self.reconnect()

    def pick(self) -> Widget | None:
        """A random widget of the current page, or None when it has none."""
        if not self.widgets:
            return None
        return self.widgets[self.rng.choice(sorted(self.widgets))]

    # ---- behaviours

    async def browse(self, pages: list[str], deadline: float, think: tuple[float, float],
                     max_actions: int) -> None:
        """Visit pages in a shuffled cycle until ``deadline``: load, 2–4 interactions, move on.

        Parameters
        ----------
        pages : list of str
            URL paths to visit.
        deadline : float
            ``time.monotonic()`` after which no new rerun is sent.
        think : (float, float)
            Think-time range in seconds.
        max_actions : int
            Hard cap on reruns.
        """
        order = list(pages)
        self.rng.shuffle(order)
        actions, i = 0, self.index
        while time.monotonic() < deadline and actions < max_actions:
            page = order[i % len(order)]
            i += 1
            actions += 1
            if not await self.safe(page, "load"):
                return
            for _ in range(self.rng.randint(2, 4)):
                await asyncio.sleep(self.rng.uniform(*think))
                widget = self.pick()
                if widget is None or time.monotonic() >= deadline or actions >= max_actions:
                    break
                actions += 1
                if not await self.safe(page, "interact", widget):
                    return
            await asyncio.sleep(self.rng.uniform(*think))

    async def touch_all(self, pages: list[str], pause: float) -> None:
        """Warm-up: open every page and set every widget (also ones that appear later) to
        each of its warm-up values (:meth:`Values.warmup_values`: the lesson pool, ending on
        the default; one random value in ``random`` mode).

        Parameters
        ----------
        pages : list of str
            URL paths.
        pause : float
            Seconds between reruns.
        """
        for page in pages:
            if not await self.safe(page, "load"):
                return
            touched: set[str] = set()
            touches = 0
            while touches < MAX_WARMUP_TOUCHES_PER_PAGE:
                todo = sorted(k for k in self.widgets if k not in touched)
                if not todo:
                    break
                key = todo[0]
                touched.add(key)
                for value in self.values.warmup_values(page, self.widgets[key], self.rng):
                    widget = self.widgets.get(key)
                    if (widget is None or not is_valid(widget, value)
                            or touches >= MAX_WARMUP_TOUCHES_PER_PAGE):
                        break
                    touches += 1
                    await asyncio.sleep(pause)
                    if not await self.safe(page, "interact", widget, value):
                        return
                    if self.page != page:      # reconnected: reopen the page
                        await self.safe(page, "load")

    async def interact_each(self, pages: list[str], n: int, think: tuple[float, float]) -> None:
        """One visitor: open each page, then make ``n`` interactions on it (mode values).

        Parameters
        ----------
        pages : list of str
            URL paths.
        n : int
            Interactions per page.
        think : (float, float)
            Think-time range in seconds.
        """
        for page in pages:
            if not await self.safe(page, "load"):
                return
            for _ in range(n):
                await asyncio.sleep(self.rng.uniform(*think))
                widget = self.pick()
                if widget is None:
                    break
                if not await self.safe(page, "interact", widget):
                    return


    async def new_values(self, page: str, keys: tuple[str, ...], n: int,
                         think: tuple[float, float]) -> None:
        """One visitor: open ``page``, then set the widgets ``keys`` in turn, ``n`` times in
        all, each time to a random grid value the server has not had yet (a cache miss).

        Parameters
        ----------
        page : str
            URL path.
        keys : tuple of str
            Widget keys to move.
        n : int
            Interactions.
        think : (float, float)
            Think-time range in seconds.
        """
        if not await self.safe(page, "load"):
            return
        for i in range(n):
            await asyncio.sleep(self.rng.uniform(*think))
            widget = self.widgets.get(keys[i % len(keys)])
            if widget is None:
                self.rec.error("client", f"no widget {keys[i % len(keys)]!r} on {page!r}")
                return
            value = self.values.choose_unseen(page, widget, self.rng, self.replica)
            if not await self.safe(page, "interact", widget, value):
                return


# --------------------------------------------------------------------------- server


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def http_get(port: int, path: str, timeout: float = 5.0) -> tuple[int, str]:
    """GET ``http://127.0.0.1:PORT/PATH`` without any proxy; (status, body)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{HOST}:{port}{path}", timeout=timeout) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def http_head_get(port: int, path: str, timeout: float = 5.0,
                  headers: dict | None = None) -> tuple[int, dict[str, list[str]]]:
    """GET ``http://127.0.0.1:PORT/PATH`` without any proxy, reading the body; (status,
    lower-case header name -> every value of it), also for an error status."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(f"http://{HOST}:{port}{path}", headers=headers or {})
    try:
        with opener.open(req, timeout=timeout) as resp:
            resp.read()
            status, msg = resp.status, resp.headers
    except urllib.error.HTTPError as exc:
        status, msg = exc.code, exc.headers
    out: dict[str, list[str]] = defaultdict(list)
    for name, value in (msg.items() if msg is not None else []):
        out[name.lower()].append(value)
    return status, dict(out)


def cookie_value(set_cookies, name: str = REPLICA_COOKIE) -> str | None:
    """The value ``Set-Cookie`` header values give the cookie ``name`` (the last one), or
    None.

    >>> cookie_value(["a=1; path=/", "ARBITER_REPLICA=r1; path=/; HttpOnly"])
    'r1'
    """
    found = None
    for header in set_cookies or ():
        key, eq, value = header.split(";", 1)[0].strip().partition("=")
        if eq and key.strip() == name:
            found = value.strip().strip('"')
    return found


def parse_replica_lines(text: str) -> dict[str, tuple[int, int]]:
    """Replica name -> (loopback port, pid) from ``serve.py --replicas``'s output: the lines
    ``arbiter: replica rN on 127.0.0.1:PORT (pid P)``, the last one per replica winning (a
    restarted replica is logged again).

    >>> parse_replica_lines("arbiter: replica r0 on 127.0.0.1:4001 (pid 7)\\n"
    ...                     "arbiter: replica r0 on 127.0.0.1:4001 (pid 9)")
    {'r0': (4001, 9)}
    """
    out: dict[str, tuple[int, int]] = {}
    for m in REPLICA_LINE.finditer(text):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def replica_spread(replicas: dict[int, list[str]]) -> tuple[dict[str, int], int]:
    """Sessions per replica (by the replica of their first connection, sorted by name) and
    the number of sessions that changed replica.

    >>> replica_spread({0: ["r0"], 1: ["r1"], 2: ["r0", "r1"]})
    ({'r0': 2, 'r1': 1}, 1)
    """
    first = Counter(seen[0] for seen in replicas.values() if seen)
    return dict(sorted(first.items())), sum(len(seen) > 1 for seen in replicas.values())


def _children(pid: int) -> list[int]:
    """The live children of ``pid`` (every thread's)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    out.extend(int(c) for c in fh.read().split())
    return out


def _cmdline(pid: int) -> list[str]:
    """``pid``'s command line ([] once gone)."""
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    return []


def _is_replica_cmd(cmd: list[str]) -> bool:
    """Whether ``cmd`` is a replica that ``serve.py --replicas`` started (``serve.py
    --replicas 1 …``)."""
    return (any(Path(a).name == "serve.py" for a in cmd[:3])
            and any(a == "--replicas" and b == "1" for a, b in zip(cmd, cmd[1:], strict=False)))


def _tree_pids(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo and len(out) < 1000:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
    return out


def _tree_kb(pid: int, name: str, field: str) -> int:
    """The ``field:`` line (kB) of ``/proc/P/<name>``, summed over ``pid`` and its
    descendants, in bytes (0 once gone)."""
    total = 0
    for p in _tree_pids(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{p}/{name}") as fh:
                for line in fh:
                    if line.startswith(field + ":"):
                        total += int(line.split()[1]) * 1024
                        break
    return total


def tree_rss(pid: int) -> int:
    """VmRSS in bytes of ``pid`` plus its descendants (0 once gone)."""
    return _tree_kb(pid, "status", "VmRSS")


def tree_pss(pid: int) -> int:
    """Proportional set size in bytes of ``pid`` plus its descendants (0 once gone): each
    shared page counted once across the processes that map it (``/proc/PID/smaps_rollup``).

    The sum of RSS counts a page shared by a replica's fork server and the workers it forked
    (numpy, pandas, core: copy-on-write) once per process; PSS splits it among them, so the
    tree's PSS is what the processes take from the machine's memory."""
    return _tree_kb(pid, "smaps_rollup", "Pss")


def own_rss(pid: int) -> int:
    """VmRSS in bytes of ``pid`` alone (0 once gone)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    return 0


def own_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` alone, not its children (0 once gone)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid``, its reaped children and live descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for n, p in enumerate(_tree_pids(pid)):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            # fields[0] is state (field 3): utime=14, stime=15, cutime=16, cstime=17
            total += (int(fields[11]) + int(fields[12])) / tick
            if n == 0:
                total += (int(fields[13]) + int(fields[14])) / tick
    return total


def system_busy_cpu() -> float:
    """CPU seconds all processes of the machine have used since boot (``/proc/stat``; 0 when
    unreadable): to tell the load of others sharing the machine."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/stat") as fh:
            f = [int(x) for x in fh.readline().split()[1:9]]
        # user nice system idle iowait irq softirq steal
        return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def client_cpu() -> float:
    """This process's CPU seconds (user + system)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class RssMonitor(threading.Thread):
    """Samples the server tree's RSS every ``SAMPLE_EVERY`` s until stopped (bounded).

    Parameters
    ----------
    pid : int
        The server's pid.
    max_seconds : float
        Stop sampling after this long even if never stopped.
    procs : callable, optional
        ``--replicas``: returns name -> pid of the processes whose own trees are sampled too
        (every replica and HAProxy, :meth:`Server.processes`); :data:`SUPERVISOR`, serve.py
        itself, is sampled alone (its tree is the total).
    """

    def __init__(self, pid: int, max_seconds: float,
                 procs: Callable[[], dict[str, int]] | None = None) -> None:
        super().__init__(daemon=True, name="rss-monitor")
        self.pid, self.max_seconds, self.procs = pid, max_seconds, procs
        self.samples: list[tuple[float, int]] = []
        self.pss_samples: list[tuple[float, int]] = []
        self.proc_samples: list[tuple[float, dict[str, int]]] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        """Sample until stopped, the process is gone, or ``max_seconds`` passed."""
        t_end = time.monotonic() + self.max_seconds
        while not self.stop_event.is_set() and time.monotonic() < t_end:
            rss = tree_rss(self.pid)
            if rss == 0:
                break
            now = time.time()
            self.samples.append((now, rss))
            self.pss_samples.append((now, tree_pss(self.pid)))
            if self.procs is not None:
                with contextlib.suppress(Exception):  # a sampling hiccup must not end it
                    self.proc_samples.append(
                        (now, {name: own_rss(pid) if name == SUPERVISOR else tree_rss(pid)
                               for name, pid in self.procs().items()}))
            self.stop_event.wait(SAMPLE_EVERY)

    def peak(self, t0: float = 0.0, t1: float = float("inf")) -> int:
        """Peak sampled RSS between wall times ``t0`` and ``t1``."""
        return max((r for t, r in list(self.samples) if t0 <= t <= t1), default=0)

    def peak_pss(self, t0: float = 0.0, t1: float = float("inf")) -> int:
        """Peak sampled PSS of the whole tree between wall times ``t0`` and ``t1``."""
        return max((r for t, r in list(self.pss_samples) if t0 <= t <= t1), default=0)

    def peaks(self, t0: float = 0.0, t1: float = float("inf")) -> dict[str, int]:
        """Peak sampled RSS of each process tree of ``procs`` between ``t0`` and ``t1``."""
        out: dict[str, int] = {}
        for t, sample in list(self.proc_samples):
            if t0 <= t <= t1:
                for name, rss in sample.items():
                    out[name] = max(out.get(name, 0), rss)
        return out


class Server:
    """The Arbiter server started exactly as the Docker image does, on loopback.

    Parameters
    ----------
    port : int
        TCP port.
    db : Path
        Store for ``ARBITER_DB``.
    workdir : Path
        Where the timing log and the server's output go.
    extra : list of str
        Extra ``streamlit`` options (``--runner.postScriptGC=…``).
    replicas : int
        ``serve.py --replicas N`` (N >= 2: N Streamlit processes behind HAProxy on ``port``);
        1 runs the command without the option, as before it existed.
    """

    def __init__(self, port: int, db: Path, workdir: Path, extra: list[str],
                 replicas: int = 1) -> None:
        self.port, self.db, self.workdir, self.replicas = port, db, workdir, replicas
        self.timing_log = workdir / "timing.tsv"
        self.output = workdir / "server.log"
        self.cmd = [sys.executable, "serve.py",
                    *(["--replicas", str(replicas)] if replicas > 1 else []),
                    f"--server.port={port}",
                    f"--server.address={HOST}", "--server.fileWatcherType=none", *extra]
        self.proc: subprocess.Popen | None = None
        self._out = None
        self._lock = threading.Lock()
        self._log_pos = 0
        self._logged: dict[str, tuple[int, int]] = {}   # replica -> (port, pid), last wins
        self._pids: set[int] = set()                    # every replica / HAProxy pid seen

    def start(self, startup_timeout: float) -> None:
        """Start the server and wait (bounded) until ``/_stcore/health`` says ok; with
        replicas, also until every replica answers its own health check, then (at most 30 s
        more) until HAProxy has sent a request to each (a note when it has not)."""
        env = dict(os.environ, ARBITER_TIMING_LOG=str(self.timing_log), ARBITER_DB=str(self.db),
                   ARBITER_REPLICAS=str(self.replicas), PYTHONUNBUFFERED="1")
        self._out = open(self.output, "wb")  # closed in stop()
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=env, stdout=self._out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        t_end = time.monotonic() + startup_timeout
        while time.monotonic() < t_end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.tail()}")
            with contextlib.suppress(OSError):
                status, body = http_get(self.port, "/_stcore/health", timeout=2)
                if status == 200 and body.strip() == "ok" and (self.replicas < 2
                                                               or self._replicas_ready()):
                    if self.replicas > 1:
                        self._await_spread(min(30.0, max(1.0, t_end - time.monotonic())))
                    return
            time.sleep(0.25)
        raise RuntimeError(f"server not healthy after {startup_timeout:.0f} s:\n{self.tail()}")

    # ---- replicas (``--replicas`` N >= 2)

    def replica_ports(self) -> dict[str, tuple[int, int]]:
        """Replica name -> (loopback port, pid) from the server's output so far (the last
        line per replica wins; :func:`parse_replica_lines`). Thread-safe."""
        with self._lock:
            with contextlib.suppress(OSError):
                with open(self.output, "rb") as fh:
                    fh.seek(self._log_pos)
                    chunk = fh.read()
                end = chunk.rfind(b"\n") + 1           # whole lines only
                self._log_pos += end
                self._logged.update(parse_replica_lines(chunk[:end].decode(errors="replace")))
            return dict(self._logged)

    def processes(self) -> dict[str, int]:
        """Name -> pid of every live replica (``r0``, ``r1``, …), of HAProxy (:data:`PROXY`)
        and of serve.py itself (:data:`SUPERVISOR`): the logged pids that are children of
        serve.py, else children whose command line is a replica's (named by their port), and
        the child running ``haproxy``. Empty with one replica."""
        if self.replicas < 2 or self.proc is None:
            return {}
        if self.proc.poll() is not None:
            return {}
        logged = self.replica_ports()
        by_port = {port: name for name, (port, _pid) in logged.items()}
        kids = _children(self.proc.pid)
        out = {name: pid for name, (_port, pid) in logged.items() if pid in kids}
        for pid in kids:
            if pid in out.values():
                continue
            cmd = _cmdline(pid)
            if cmd and Path(cmd[0]).name == PROXY:
                out[PROXY] = pid
            elif _is_replica_cmd(cmd):
                port = next((a.split("=", 1)[1] for a in cmd if a.startswith("--server.port=")),
                            "")
                name = by_port.get(int(port)) if port.isdigit() else None
                out.setdefault(name or f":{port or pid}", pid)  # restarted, line not read yet
        with self._lock:
            self._pids.update(out.values())
        out[SUPERVISOR] = self.proc.pid
        return out

    def proc_cpu(self) -> dict[str, tuple[int, float]]:
        """Name -> (pid, CPU seconds of its tree; serve.py's own only) of
        :meth:`processes`."""
        return {name: (pid, own_cpu(pid) if name == SUPERVISOR else tree_cpu(pid))
                for name, pid in self.processes().items()}

    def _replicas_ready(self) -> bool:
        """Whether all the replicas were logged and each answers ``/_stcore/health`` on its
        own port."""
        ports = self.replica_ports()
        if len(ports) < self.replicas:
            return False
        for port, _pid in ports.values():
            try:
                status, body = http_get(port, "/_stcore/health", timeout=2)
            except OSError:
                return False
            if status != 200 or body.strip() != "ok":
                return False
        return True

    def _await_spread(self, seconds: float) -> None:
        """Ask HAProxy's health path without a cookie until every replica has answered once
        (HAProxy marks a replica up one health check after it is ready), at most ``seconds``."""
        names = set(self.replica_ports())
        seen: set[str] = set()
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end and not names <= seen:
            with contextlib.suppress(OSError):
                _status, headers = http_head_get(self.port, "/_stcore/health", timeout=2)
                seen.update(headers.get(REPLICA_HEADER.lower(), []))
            if not names <= seen:
                time.sleep(0.2)
        self.processes()                  # note the pids (for stop()) and HAProxy's
        if not names <= seen:
            print(f"  note: HAProxy sent nothing to {', '.join(sorted(names - seen))} within "
                  f"{seconds:.0f} s of the replicas' health", flush=True)

    def _kill_leftovers(self) -> None:
        """SIGKILL the process group of every replica / HAProxy seen that still runs after
        serve.py exited (it stops them itself; this is for a serve.py that was killed)."""
        with self._lock:
            pids = sorted(self._pids)
        for pid in pids:
            cmd = _cmdline(pid)
            if not cmd or not (_is_replica_cmd(cmd) or Path(cmd[0]).name == PROXY):
                continue                    # gone (or the pid now names another program)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == pid:  # serve.py starts each in its own session
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)

    def tail(self, n: int = 30) -> str:
        """The last ``n`` lines of the server's output."""
        with contextlib.suppress(OSError):
            return "\n".join(self.output.read_text(errors="replace").splitlines()[-n:])
        return ""

    def stop(self) -> None:
        """Terminate the server's process group (SIGTERM, then SIGKILL after 10 s; with
        replicas serve.py stops each of them, so it gets 10 s more per replica, and any
        replica or HAProxy left after it exited is killed)."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10 if self.replicas < 2 else 15 + 10 * self.replicas)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        if self.replicas > 1:
            self._kill_leftovers()
        if self._out is not None:
            self._out.close()
            self._out = None

    def rows(self) -> list[tuple[float, str, str, float, str]]:
        """The timing log's rows: (wall, page, kind, seconds, status)."""
        out = []
        with contextlib.suppress(OSError):
            for line in self.timing_log.read_text().splitlines():
                parts = line.split("\t")
                if len(parts) >= 5:  # a sixth column (the session id) may follow
                    with contextlib.suppress(ValueError):
                        out.append((float(parts[0]), parts[1], parts[2], float(parts[3]),
                                    parts[4]))
        return out

    def logged_exceptions(self, limit: int = 8) -> list[str]:
        """The exception lines of the first tracebacks in the server's output."""
        found: list[str] = []
        lines = []
        with contextlib.suppress(OSError):
            lines = self.output.read_text(errors="replace").splitlines()
        in_tb = False
        for line in lines:
            if line.startswith("Traceback (most recent call last)"):
                in_tb = True
            elif in_tb and line and not line.startswith((" ", "\t")):
                in_tb = False
                if line not in found:
                    found.append(line[:300])
                if len(found) >= limit:
                    break
        return found


# --------------------------------------------------------------------------- phases


def _label(page: str) -> str:
    return "/" + page


def dist(values) -> dict:
    """``n``, ``p50``, ``p95`` and ``max`` of a sample (None when empty)."""
    xs = list(values)
    return {"n": len(xs), "p50": pct(xs, 50), "p95": pct(xs, 95),
            "max": max(xs) if xs else None}


def _fits(run: dict, start: float, end: float, eps: float) -> bool:
    return run["wall0"] - eps <= start and end <= run["wall1"] + eps


def _slack(run: dict, row: tuple) -> float:
    """Cost of giving ``row`` to ``run``: the squared delays before the run started and after
    it ended (every one-to-one pairing has the same total *linear* slack), plus a penalty for
    the wrong kind."""
    wall, _page, kind, seconds, _status = row
    penalty = 0.0 if (kind == "fragment") == run["fragment"] else KIND_PENALTY
    return penalty + (wall - seconds - run["wall0"]) ** 2 + (run["wall1"] - wall) ** 2


def attribute(runs: list[dict], rows: list, eps: float = ROW_MATCH_SLACK) -> tuple:
    """Give every timing-log row to the rerun it belongs to; sum the seconds per rerun.

    A row ``(wall, page, kind, seconds, status)`` covers ``[wall - seconds, wall]`` on the
    server; it belongs to a rerun whose client window ``[wall0, wall1]`` (send, received
    ``script_finished``) contains that interval. Every rerun runs the script once (no page
    calls ``st.rerun``), so rows and reruns of a page are paired one to one by a minimum-cost
    assignment (``scipy.optimize.linear_sum_assignment``, an app dependency) over the clusters
    of overlapping windows, the cost being ``(start - wall0)² + (wall1 - end)²`` plus a
    penalty for the wrong kind (``fragment`` rows for fragment reruns): the server starts a run
    soon after the message arrives and sends ``script_finished`` right after it. With several
    sessions the windows overlap and a greedy choice would give one rerun two rows and another
    none; the log has no session id, so two overlapping reruns of the same page and kind can
    still swap rows (the distribution is kept, a repeat / new label may swap). Rows left over
    (none expected) go to a rerun whose window still has room for them; the rest count as
    unmatched. With one session this is the sum of the rows between send and finish.

    Parameters
    ----------
    runs : list of dict
        :attr:`Recorder.runs` of one phase.
    rows : list
        That phase's timing-log rows.
    eps : float
        Seconds of clock slack allowed at either end.

    Returns
    -------
    (list of float, list of int, int)
        Server seconds per run, rows per run, rows matching no run.
    """
    from scipy.optimize import linear_sum_assignment

    secs = [0.0] * len(runs)
    count = [0] * len(runs)
    runs_by_page: dict[str, list[int]] = defaultdict(list)
    rows_by_page: dict[str, list[int]] = defaultdict(list)
    for j, run in enumerate(runs):
        runs_by_page[_label(run["page"])].append(j)
    for i, row in enumerate(rows):
        rows_by_page[row[1]].append(i)

    def give(i: int, j: int) -> None:
        secs[j] += rows[i][3]
        count[j] += 1

    leftover: list[int] = []
    for page, row_ids in rows_by_page.items():
        run_ids = runs_by_page.get(page, [])
        if not run_ids:
            leftover.extend(row_ids)
            continue
        # clusters of overlapping intervals (run windows and row spans) on this page
        items = sorted([(runs[j]["wall0"] - eps, runs[j]["wall1"] + eps, 0, j) for j in run_ids]
                       + [(rows[i][0] - rows[i][3], rows[i][0], 1, i) for i in row_ids])
        clusters: list[tuple[list[int], list[int]]] = []
        end = None
        for lo, hi, is_row, idx in items:
            if end is None or lo > end:
                clusters.append(([], []))
                end = hi
            end = max(end, hi)
            clusters[-1][is_row].append(idx)
        for cl_runs, cl_rows in clusters:
            if not cl_rows:
                continue
            if not cl_runs:
                leftover.extend(cl_rows)
                continue
            if len(cl_runs) * len(cl_rows) > MAX_ASSIGNMENT_CELLS:
                leftover.extend(cl_rows)      # greedy below; never met at these sizes
                continue
            cost = [[_slack(runs[j], rows[i])
                     if _fits(runs[j], rows[i][0] - rows[i][3], rows[i][0], eps) else NO_MATCH
                     for j in cl_runs] for i in cl_rows]
            r_idx, c_idx = linear_sum_assignment(cost)
            taken = set()
            for a, b in zip(r_idx, c_idx, strict=True):
                if cost[a][b] < NO_MATCH:
                    give(cl_rows[a], cl_runs[b])
                    taken.add(a)
            leftover.extend(i for k, i in enumerate(cl_rows) if k not in taken)
    unmatched = 0
    for i in leftover:
        wall, page, _kind, seconds, _status = rows[i]
        best = None
        for j, run in enumerate(runs):
            room = (run["wall1"] - run["wall0"]) - secs[j]
            if _fits(run, wall - seconds, wall, eps) and seconds <= room + eps:
                score = (_label(run["page"]) != page, _slack(run, rows[i]))
                if best is None or score < best[0]:
                    best = (score, j)
        if best is None:
            unmatched += 1
        else:
            give(i, best[1])
    return secs, count, unmatched


def summarize(name: str, sessions: int, rec: Recorder, rows: list, t0: float, t1: float,
              srv_cpu: float, cli_cpu: float, rss_peak: int,
              active_sessions: float | None) -> dict:
    """The figures of one phase, from the client recorder and the timing log rows.

    Parameters
    ----------
    name : str
        Phase name.
    sessions : int
        Concurrent sessions.
    rec : Recorder
        Client observations.
    rows : list
        All timing-log rows (filtered here to ``t0 <= wall <= t1``).
    t0, t1 : float
        The phase's wall-clock window.
    srv_cpu, cli_cpu : float
        CPU seconds of the server and of this client during the phase.
    rss_peak : int
        Peak server RSS (bytes) during the phase.
    active_sessions : float or None
        ``active_sessions`` from ``/_stcore/metrics`` mid-phase.

    Returns
    -------
    dict
        JSON-ready figures. ``interaction`` / ``interaction_page`` hold the server time per
        interaction (the sum of its timing-log rows, see :func:`attribute`) for ``all``,
        ``repeat`` (its (page, widget key, value) was sent before on this server by any
        session, or was the widget's default), ``new`` interactions, and the repeats whose
        whole page state (every widget's value, as far as the client knows it) was sent or
        shown before (``same_combination``: those should hit the pages' caches).
    """
    mine = [r for r in rows if t0 <= r[0] <= t1]
    ok = [r for r in mine if r[4] == "ok"]
    full = [r[3] for r in ok if r[2] == "full"]
    frag = [r[3] for r in ok if r[2] == "fragment"]
    by_page: dict[str, list[float]] = defaultdict(list)
    for r in ok:
        by_page[r[1]].append(r[3])
    statuses = Counter(r[4] for r in mine)
    wall = max(t1 - t0, 1e-9)
    first = [r["first"] for r in rec.runs]
    settle = [r["settle"] for r in rec.runs]
    out: dict[str, Any] = {
        "phase": name, "sessions": sessions, "seconds": round(wall, 1),
        "reruns": len(rec.runs),
        "loads": sum(r["action"] == "load" for r in rec.runs),
        "pages_visited": sorted({_label(r["page"]) for r in rec.runs}),
        "interactions": sum(r["action"] == "interact" for r in rec.runs),
        "fragment_reruns_sent": sum(r["fragment"] for r in rec.runs),
        "errors": sum(rec.errors.values()), "errors_by_kind": dict(rec.errors),
        "error_samples": rec.error_samples,
        "exceptions": len(rec.exceptions),
        "exception_samples": [f"{_label(p)} ×{n}: {t or '(type redacted)'}: {m}"[:300]
                              for (p, t, m), n in Counter(rec.exceptions).most_common(8)],
        "exceptions_by_page": dict(Counter(_label(p) for p, _, _ in rec.exceptions)),
        "error_alerts": [f"{_label(p)} ×{n}: {t}" for (p, t), n in rec.alerts.most_common(8)],
        "client_first_p50": pct(first, 50), "client_first_p95": pct(first, 95),
        "client_settle_p50": pct(settle, 50), "client_settle_p95": pct(settle, 95),
        "server_rows": len(mine), "server_statuses": dict(statuses),
        "server_ok_p50": pct([r[3] for r in ok], 50), "server_ok_p95": pct([r[3] for r in ok],
                                                                           95),
        "server_full_n": len(full), "server_full_p50": pct(full, 50),
        "server_full_p95": pct(full, 95),
        "server_fragment_n": len(frag), "server_fragment_p50": pct(frag, 50),
        "server_fragment_p95": pct(frag, 95),
        "server_page_p95": {p: pct(v, 95) for p, v in sorted(by_page.items())},
        "server_page_not_ok": {p: dict(Counter(r[4] for r in mine if r[1] == p and r[4] != "ok"))
                               for p in sorted({r[1] for r in mine if r[4] != "ok"})},
        "server_page_n": {p: len(v) for p, v in sorted(by_page.items())},
        "rss_peak_bytes": rss_peak,
        "server_cpu_s": srv_cpu, "server_cpu_pct": 100 * srv_cpu / wall,
        "client_cpu_s": cli_cpu, "client_cpu_pct": 100 * cli_cpu / wall,
        "client_cpu_ms_per_rerun": 1000 * cli_cpu / max(1, len(rec.runs)),
        "active_sessions_metric": active_sessions,
    }
    secs, nrows, unmatched = attribute(rec.runs, mine)
    acts = []
    loads: dict[str, list[float]] = defaultdict(list)
    unattributed = 0
    unattributed_runs = []
    for run, sec, n in zip(rec.runs, secs, nrows, strict=True):
        if n == 0:
            unattributed += 1
            if len(unattributed_runs) < 50:
                unattributed_runs.append({k: run[k] for k in ("session", "page", "action", "key",
                                                              "fragment", "wall0", "wall1")})
            continue
        if run["action"] == "interact":
            acts.append({"session": run["session"], "page": _label(run["page"]),
                         "key": run["key"], "value": run["value"], "repeat": run["repeat"],
                         "same_combination": run["combo_repeat"],
                         "fragment": run["fragment"], "server_s": round(sec, 6), "rows": n,
                         "settle_s": round(run["settle"], 6), "wall0": run["wall0"],
                         "wall1": run["wall1"]})
        else:
            loads[_label(run["page"])].append(sec)
    classes = {"all": lambda a: True, "repeat": lambda a: a["repeat"],
               "new": lambda a: not a["repeat"],
               "same_combination": lambda a: a["same_combination"]}
    out["interaction"] = {c: dist(a["server_s"] for a in acts if f(a))
                          for c, f in classes.items()}
    pages = sorted({a["page"] for a in acts})
    out["interaction_page"] = {p: {c: dist(a["server_s"] for a in acts if a["page"] == p
                                           and f(a)) for c, f in classes.items()}
                               for p in pages}
    out["interaction_server_p50"] = out["interaction"]["all"]["p50"]
    out["interaction_server_p95"] = out["interaction"]["all"]["p95"]
    out["interaction_page_p95"] = {p: out["interaction_page"][p]["all"]["p95"] for p in pages}
    by_widget: dict[str, list[float]] = defaultdict(list)
    for a in acts:
        if a["repeat"]:
            by_widget[f"{a['page']} {a['key']}"].append(a["server_s"])
    out["repeat_by_widget"] = {k: dist(v) for k, v in sorted(by_widget.items())}
    ranked = sorted(acts, key=lambda a: a["server_s"], reverse=True)
    out["slowest_repeats"] = [a for a in ranked if a["repeat"]][:10]
    out["slowest_new"] = [a for a in ranked if not a["repeat"]][:10]
    out["load_page"] = {p: dist(v) for p, v in sorted(loads.items())}
    out["load_page_first"] = {p: v[0] for p, v in sorted(loads.items())}
    out["unattributed_reruns"] = unattributed
    out["unattributed_samples"] = unattributed_runs
    out["unmatched_rows"] = unmatched
    out["interactions_log"] = acts
    return out


async def _active_sessions(port: int) -> float | None:
    try:
        status, body = await asyncio.to_thread(http_get, port, "/_stcore/metrics", 5.0)
    except OSError:
        return None
    m = re.search(r"^active_sessions(?:\{[^}]*\})?\s+([0-9.eE+]+)", body, re.M)
    return float(m.group(1)) if status == 200 and m else None


def _name_key(name: str) -> tuple:
    """Sort key of replica names: r2 before r10, HAProxy last."""
    return (name == SUPERVISOR, name == PROXY, len(name), name)


def replica_figures(rec: Recorder, cpu0: dict[str, tuple[int, float]],
                    cpu1: dict[str, tuple[int, float]], rss: dict[str, int],
                    ports: dict[str, tuple[int, int]], active: dict[str, float | None],
                    wall: float) -> dict:
    """``--replicas``: one phase's figures per replica and HAProxy.

    Parameters
    ----------
    rec : Recorder
        The phase's client observations (``replicas``; the runs' ``replica``).
    cpu0, cpu1 : dict
        :meth:`Server.proc_cpu` at the phase's start and end.
    rss : dict
        Peak RSS per process tree during the phase (:meth:`RssMonitor.peaks`).
    ports : dict
        :meth:`Server.replica_ports`.
    active : dict
        ``active_sessions`` of each replica's ``/_stcore/metrics`` mid-phase.
    wall : float
        The phase's seconds.

    Returns
    -------
    dict
        ``replicas``: name -> ``pid``, ``port``, ``sessions`` (by the replica of their first
        connection), ``reruns`` and client ``settle_p50``/``settle_p95`` (s) of the reruns it
        served, ``active_sessions_metric``, ``rss_peak_bytes`` (its process tree: the replica
        and its workers), ``cpu_s``/``cpu_pct`` and ``restarted`` (its pid changed during the
        phase: ``cpu_s`` is then the new process's only); ``haproxy``: ``pid``,
        ``rss_peak_bytes``, ``cpu_s``, ``cpu_pct`` (None when HAProxy was not found);
        ``supervisor``: the same of serve.py's own process (not its children);
        ``sessions_per_replica``; ``sessions_moved`` (sessions that changed replica).
    """
    spread, moved = replica_spread(rec.replicas)
    settle: dict[str, list[float]] = defaultdict(list)
    for run in rec.runs:
        if run.get("replica"):
            settle[run["replica"]].append(run["settle"])

    def proc(name: str) -> dict:
        pid1, c1 = cpu1.get(name, (None, None))
        pid0, c0 = cpu0.get(name, (None, None))
        restarted = pid0 is not None and pid1 is not None and pid0 != pid1
        cpu = None if c1 is None else c1 if (pid0 is None or restarted) else max(0.0, c1 - c0)
        return {"pid": pid1 if pid1 is not None else pid0, "rss_peak_bytes": rss.get(name, 0),
                "cpu_s": cpu, "cpu_pct": None if cpu is None else 100 * cpu / max(wall, 1e-9),
                "restarted": restarted}

    names = sorted((set(ports) | set(cpu0) | set(cpu1) | set(spread) | set(settle))
                   - {PROXY, SUPERVISOR}, key=_name_key)
    replicas = {}
    for name in names:
        d = proc(name)
        d.update(port=ports.get(name, (None, None))[0], sessions=spread.get(name, 0),
                 reruns=len(settle.get(name, [])), settle_p50=pct(settle.get(name, []), 50),
                 settle_p95=pct(settle.get(name, []), 95),
                 active_sessions_metric=active.get(name))
        replicas[name] = d
    proxy = proc(PROXY) if PROXY in cpu0 or PROXY in cpu1 else None
    supervisor = proc(SUPERVISOR) if SUPERVISOR in cpu0 or SUPERVISOR in cpu1 else None
    return {"replicas": replicas, "haproxy": proxy, "supervisor": supervisor,
            "sessions_per_replica": spread, "sessions_moved": moved}


async def run_phase(server: Server, monitor: RssMonitor, values: Values, name: str, n: int,
                    args, pages: list[str], behaviour: str) -> dict:
    """Run one phase with ``n`` sessions and summarize it.

    Parameters
    ----------
    server : Server
        The running server.
    monitor : RssMonitor
        The RSS sampler.
    values : Values
        The server's value mode and record of values sent (shared by all its phases).
    name : str
        Phase name (also seeds the generators).
    n : int
        Concurrent sessions.
    args : argparse.Namespace
        Command-line options.
    pages : list of str
        URL paths to visit (``newvalues``: the one page).
    behaviour : str
        ``browse`` (timed level), ``warmup`` (touch every widget value), ``warm`` (one
        visitor, mode values) or ``newvalues`` (one visitor, unseen values of
        ``BIAS_KEYS``).

    Returns
    -------
    dict
        See :func:`summarize`.
    """
    url = f"ws://{HOST}:{server.port}/_stcore/stream"
    rec = Recorder()
    think = (args.think_min, args.think_max)
    sticky = server.replicas > 1
    sessions = [Session(i, url, rec, random.Random(f"{args.seed}-{name}-{i}"), values,
                        args.timeout, not args.no_msg_cache, not args.no_compression, sticky)
                for i in range(n)]
    if sticky and behaviour == "warmup":
        # every replica has its own caches: warm each, one session pinned by its cookie
        # (HAProxy sends a request whose cookie names a live replica to that replica)
        for s, replica in zip(sessions, sorted(server.replica_ports(), key=_name_key),
                              strict=False):
            s.cookie = replica
    procs0 = server.proc_cpu() if sticky else {}
    cpu0_s, cpu0_c, t0 = tree_cpu(server.proc.pid), client_cpu(), time.time()
    busy0 = system_busy_cpu()
    deadline = time.monotonic() + args.duration
    stagger = min(2.0, args.duration / 10)
    max_actions = int(args.duration / max(0.05, think[0])) + 10

    async def one(s: Session) -> None:
        try:
            if behaviour == "browse":
                await asyncio.sleep(s.rng.uniform(0, stagger))
            try:
                await s.connect()
            except Exception as exc:
                rec.error("connect", repr(exc))
                return
            if behaviour == "browse":
                await s.browse(pages, deadline, think, max_actions)
            elif behaviour == "warmup":
                await s.touch_all(pages, pause=0.05)
            elif behaviour == "newvalues":
                await s.new_values(pages[0], BIAS_KEYS, args.bias_interactions, think)
            else:
                await s.interact_each(pages, args.warm_interactions, think)
        finally:
            await s.close()

    per_rerun = args.timeout + think[1]
    budget = (args.duration + args.timeout + 30 if behaviour == "browse"
              else (args.bias_interactions + 2) * per_rerun + 30 if behaviour == "newvalues"
              else len(pages) * (MAX_WARMUP_TOUCHES_PER_PAGE + args.warm_interactions + 2)
              * per_rerun + 30)
    tasks = [asyncio.ensure_future(one(s)) for s in sessions]
    active = None
    active_by: dict[str, float | None] = {}
    try:
        if behaviour == "browse" and n > 1:
            await asyncio.sleep(min(stagger + 2.0, args.duration / 2))
            if sticky:  # HAProxy would ask one replica: ask each directly, and add up
                ports = server.replica_ports()
                got = await asyncio.gather(*(_active_sessions(port)
                                             for port, _pid in ports.values()))
                active_by = dict(zip(ports, got, strict=True))
                active = (sum(v for v in got if v is not None)
                          if any(v is not None for v in got) else None)
            else:
                active = await _active_sessions(server.port)
        done, pending = await asyncio.wait(tasks, timeout=budget)
        for t in pending:
            rec.error("client", "session task overran its time budget")
            t.cancel()
        for t in done:
            if t.exception() is not None:
                rec.error("client", repr(t.exception()))
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.sleep(0.3)  # let the last timing-log lines land
    t1 = time.time()
    srv_cpu, cli_cpu = tree_cpu(server.proc.pid) - cpu0_s, client_cpu() - cpu0_c
    other = max(0.0, system_busy_cpu() - busy0 - srv_cpu - cli_cpu)
    procs1 = server.proc_cpu() if sticky else {}
    out = summarize(name, n, rec, server.rows(), t0, t1, srv_cpu, cli_cpu,
                    monitor.peak(t0, t1), active)
    out["other_cpu_s"] = other
    out["other_cpu_pct"] = 100 * other / max(t1 - t0, 1e-9)
    out["loadavg_end"] = os.getloadavg()
    if sticky:
        out.update(replica_figures(rec, procs0, procs1, monitor.peaks(t0, t1),
                                   server.replica_ports(), active_by, t1 - t0))
    return out


async def discover_pages(port: int, timeout: float, sticky: bool = False) -> list[str]:
    """URL paths of the app's pages, from the ``navigation`` message of one home load."""
    rec = Recorder()
    s = Session(0, f"ws://{HOST}:{port}/_stcore/stream", rec, random.Random(0),
                Values("random"), timeout, sticky=sticky)
    try:
        await s.connect()
        await s.rerun("", "load")
    finally:
        await s.close()
    return list(s.pages)


# --------------------------------------------------------------------------- report


def _cell(d: dict | None, what: str = "p95") -> str:
    return _ms((d or {}).get(what))


def print_report(mode: str, phases: list[dict], logged: list[str]) -> None:
    """Print one value mode's tables, the exceptions seen and the slowest repeats."""
    print(f"\n=============== values: {mode} ===============")
    head = (f"{'phase':<10}{'sess':>5}{'reruns':>7}{'err':>5}{'exc':>5}"
            f"{'first ms':>12}{'settle ms':>12}{'srv full ms':>13}{'srv frag ms':>13}"
            f"{'RSS MB':>8}{'srv CPU':>12}{'cli CPU':>12}{'others':>7}")
    print(f"\n[{mode}] per phase (client latency p50/p95; server script time p50/p95 of 'ok' "
          "rows)")
    print(head)
    print("-" * len(head))
    for p in phases:
        print(f"{p['phase']:<10}{p['sessions']:>5}{p['reruns']:>7}{p['errors']:>5}"
              f"{p['exceptions']:>5}"
              f"{_pair(p['client_first_p50'], p['client_first_p95']):>12}"
              f"{_pair(p['client_settle_p50'], p['client_settle_p95']):>12}"
              f"{_pair(p['server_full_p50'], p['server_full_p95']):>13}"
              f"{_pair(p['server_fragment_p50'], p['server_fragment_p95']):>13}"
              f"{p['rss_peak_bytes'] / 1e6:>8.0f}"
              f"{p['server_cpu_s']:>6.1f}s{p['server_cpu_pct']:>4.0f}%"
              f"{p['client_cpu_s']:>6.1f}s{p['client_cpu_pct']:>4.0f}%"
              f"{p.get('other_cpu_pct', 0):>6.0f}%")
    print("  (others = CPU used by other processes on the machine during the phase, % of one "
          "core)")
    if any("replicas" in p for p in phases):
        print_replicas(mode, phases)

    print(f"\n[{mode}] server time per interaction, ms (sum of its timing-log rows); repeat = "
          "its (page, widget, value) was sent before")
    head = (f"{'phase':<10}{'sess':>5}{'n rep':>7}{'rep p50/p95':>14}{'n new':>7}"
            f"{'new p50/p95':>14}{'all p50/p95':>14}{'n combo':>9}{'combo p50/p95':>15}"
            f"{'unattr':>9}")
    print(head)
    print("-" * len(head))
    for p in phases:
        i = p["interaction"]
        print(f"{p['phase']:<10}{p['sessions']:>5}{i['repeat']['n']:>7}"
              f"{_pair(i['repeat']['p50'], i['repeat']['p95']):>14}{i['new']['n']:>7}"
              f"{_pair(i['new']['p50'], i['new']['p95']):>14}"
              f"{_pair(i['all']['p50'], i['all']['p95']):>14}"
              f"{i['same_combination']['n']:>9}"
              f"{_pair(i['same_combination']['p50'], i['same_combination']['p95']):>15}"
              f"{p['unattributed_reruns']:>6}/{p['unmatched_rows']:<2}")
    print("  (combo = repeats whose whole page state was sent or shown before; unattr = "
          "reruns without / timing-log rows without a match)")

    pages = sorted({pg for p in phases for pg in p["interaction_page"]})
    print(f"\n[{mode}] p95 ms per interaction per page, repeat/new (count repeat:new)")
    print(f"{'page':<20}" + "".join(f"{p['phase']:>19}" for p in phases))
    for pg in pages:
        cells = []
        for p in phases:
            d = p["interaction_page"].get(pg)
            if d is None:
                cells.append("-")
                continue
            cells.append(f"{_cell(d['repeat'])}/{_cell(d['new'])} "
                         f"({d['repeat']['n']}:{d['new']['n']})")
        print(f"{pg:<20}" + "".join(f"{c:>19}" for c in cells))

    warm = next((p for p in phases if p["phase"] == "warm"), None)
    if warm is not None:
        print(f"\n[{mode}] warm, one visitor: p95 ms per interaction per page (target "
              f"{TARGET_WARM_P95 * 1000:.0f} ms), all / repeat / new / same combination (n)")
        for pg in sorted(warm["interaction_page"]):
            d = warm["interaction_page"][pg]
            print(f"  {pg:<20}{_cell(d['all']):>7}{_cell(d['repeat']):>7}{_cell(d['new']):>7}"
                  f"{_cell(d['same_combination']):>7}   (n {d['all']['n']}: "
                  f"{d['repeat']['n']} repeat, {d['new']['n']} new, "
                  f"{d['same_combination']['n']} same combination)")

    solo = [p for p in phases if p["sessions"] == 1 and p["phase"] in ("warm", "N=1")]
    pooled: dict[str, list[float]] = defaultdict(list)
    for p in solo:
        for a in p["interactions_log"]:
            if a["repeat"]:
                pooled[f"{a['page']} {a['key']}"].append(a["server_s"])
    if pooled:
        print(f"\n[{mode}] slowest repeats by (page, widget), one session "
              f"({' + '.join(p['phase'] for p in solo)}): n, p50/p95/max ms")
        ranked = sorted(pooled.items(), key=lambda kv: pct(kv[1], 95), reverse=True)[:10]
        for k, v in ranked:
            print(f"  {k:<40}{len(v):>4}  {_ms(pct(v, 50))}/{_ms(pct(v, 95))}/{_ms(max(v))}")
    for p in phases:
        if p["phase"] in ("warm", "biasmiss") or p is phases[-1]:
            if p["slowest_repeats"] and p["phase"] != "biasmiss":
                print(f"\n[{mode}] {p['phase']}: slowest repeat interactions (server ms)")
                for a in p["slowest_repeats"]:
                    print(f"  {a['page']} {a['key']}={a['value']}"
                          f"{' (fragment)' if a['fragment'] else ''}: {a['server_s'] * 1000:.0f}")
            if p["slowest_new"] and p["phase"] != "warmup":
                print(f"[{mode}] {p['phase']}: slowest new-value interactions (server ms)")
                for a in p["slowest_new"][:5]:
                    print(f"  {a['page']} {a['key']}={a['value']}"
                          f"{' (fragment)' if a['fragment'] else ''}: {a['server_s'] * 1000:.0f}")
    for p in phases:
        if p["exceptions"] or p["errors"] or p["error_alerts"]:
            print(f"\n[{mode}] {p['phase']}: {p['errors']} errors {p['errors_by_kind']}, "
                  f"{p['exceptions']} exception boxes {p['exceptions_by_page']}")
            for line in p["error_samples"][:5] + p["exception_samples"][:6]:
                print(f"  {line}")
            for line in p["error_alerts"][:4]:
                print(f"  st.error {line}")
        if p["server_page_not_ok"]:
            print(f"[{mode}] {p['phase']}: timing-log rows not ok: {p['server_page_not_ok']}")
    if logged:
        print(f"\n[{mode}] exceptions in the server's log:")
        for line in logged:
            print(f"  {line}")


def print_replicas(mode: str, phases: list[dict]) -> None:
    """``--replicas``: one small table per phase, a row per replica and one for HAProxy."""
    print(f"\n[{mode}] per replica (sess = sessions by their first connection; settle = client "
          "p50/p95 ms of the reruns it served; active = its /_stcore/metrics mid-level; RSS = "
          "peak of its process tree, workers included; CPU during the phase)")
    head = (f"{'phase':<10}{'process':<9}{'pid':>8}{'port':>7}{'sess':>6}{'reruns':>8}"
            f"{'settle ms':>12}{'active':>8}{'RSS MB':>8}{'CPU':>13}")
    print(head)
    print("-" * len(head))

    def cpu(d: dict) -> str:
        if d.get("cpu_s") is None:
            return "-"
        return f"{d['cpu_s']:.1f}s{d['cpu_pct']:>4.0f}%" + ("*" if d.get("restarted") else "")

    for p in phases:
        if "replicas" not in p:
            continue
        label = p["phase"]
        for name, d in p["replicas"].items():
            act = d.get("active_sessions_metric")
            print(f"{label:<10}{name:<9}{d['pid'] or '-':>8}{d['port'] or '-':>7}"
                  f"{d['sessions']:>6}{d['reruns']:>8}"
                  f"{_pair(d['settle_p50'], d['settle_p95']):>12}"
                  f"{'-' if act is None else f'{act:.0f}':>8}"
                  f"{d['rss_peak_bytes'] / 1e6:>8.0f}{cpu(d):>13}")
            label = ""
        for row, h in ((PROXY, p.get("haproxy")), (SUPERVISOR, p.get("supervisor"))):
            if h is not None:
                print(f"{label:<10}{row:<9}{h['pid'] or '-':>8}{'':>7}{'':>6}{'':>8}{'':>12}"
                      f"{'':>8}{h['rss_peak_bytes'] / 1e6:>8.0f}{cpu(h):>13}")
        spread = ", ".join(f"{k} {v}" for k, v in p["sessions_per_replica"].items()) or "none"
        print(f"{'':<10}sessions per replica: {spread}; moved {p['sessions_moved']}; all: "
              f"RSS {p['rss_peak_bytes'] / 1e6:.0f} MB, CPU {p['server_cpu_s']:.1f}s")
    print("  (* the replica restarted during the phase: CPU of the new process only; serve.py = "
          "its own process; 'all' = serve.py's whole tree, the first table's figures; the peaks "
          "of the rows need not fall at the same moment)")


def print_targets(targets: list[dict]) -> None:
    """Print PASS/FAIL (``n/a``: not measured; ``info``: a figure without a target)."""
    print("\ntargets")
    for t in targets:
        verdict = ("info" if t.get("info") else "n/a " if t["pass"] is None
                   else "PASS" if t["pass"] else "FAIL")
        print(f"  [{verdict}] [{t['mode']}] {t['target']}: {t['value']}")


def check_targets(mode: str, phases: list[dict], peak_rss: int,
                  replicas: int = 1, *, peak_pss: int = 0) -> list[dict]:
    """PASS/FAIL of the targets for one value mode (``pass`` None: not measured).

    Both modes: 0 errors and 0 exception boxes at ``TARGET_SESSIONS``; peak RSS (with
    ``replicas`` >= 2 the whole set's: every replica, its workers, HAProxy; issue 24's budget);
    the bias lab's new-value p95. Lesson mode only (``info`` lines in random mode): the
    one-visitor warm p95 per page and the p95 per interaction at ``TARGET_SESSIONS``. With
    replicas, an ``info`` line: issue 24's client settle p95 <= 1 s at 40 sessions, when that
    level ran.
    """
    out = []
    graded = mode == "lesson"
    levels = [p for p in phases if p["phase"].startswith("N=")]
    top = max(levels, key=lambda p: p["sessions"], default=None)
    warm = next((p for p in phases if p["phase"] == "warm"), None)
    miss = next((p for p in phases if p["phase"] == "biasmiss"), None)
    if top is not None:
        full = top["sessions"] >= TARGET_SESSIONS
        note = "" if full else f" (ran {top['sessions']} only)"
        out.append({"target": f"0 errors and 0 exception boxes at {TARGET_SESSIONS} sessions"
                    + note, "value": f"{top['errors']} errors, {top['exceptions']} exceptions",
                    "pass": (top["errors"] == 0 and top["exceptions"] == 0) if full else None})
        i = top["interaction"]
        out.append({"target": f"p95 server time per interaction <= {TARGET_LOADED_P95} s at "
                    f"{TARGET_SESSIONS} sessions" + note,
                    "value": f"{_ms(i['all']['p95'])} ms (repeat {_ms(i['repeat']['p95'])}, "
                    f"new {_ms(i['new']['p95'])}; all 'ok' rows incl. loads "
                    f"{_ms(top['server_ok_p95'])})",
                    "pass": (i["all"]["p95"] is not None and i["all"]["p95"] <= TARGET_LOADED_P95)
                    if full and graded else None, "info": not graded})
    if warm is not None:
        # the issue's own exception: the bias lab's interactions regenerate and refit a seed
        # (every knob of that page is a new setting unless the whole combination repeats),
        # and that cache miss has its own budget, TARGET_MISS_P95
        budget = {k: (TARGET_MISS_P95 if k.strip("/") == BIAS_PAGE else TARGET_WARM_P95)
                  for k in warm["interaction_page_p95"]}
        worst = max(((v / budget[k], v, k) for k, v in warm["interaction_page_p95"].items()
                     if v is not None), default=(None, None, ""))
        out.append({"target": f"p95 server time per interaction <= {TARGET_WARM_P95} s, one "
                    f"visitor on a warm server (every page; {BIAS_PAGE} <= {TARGET_MISS_P95} "
                    "s, its regenerate-and-refit)",
                    "value": f"worst page {worst[2]} {_ms(worst[1])} ms, overall "
                    f"{_ms(warm['interaction_server_p95'])} ms",
                    "pass": (worst[0] is not None and worst[0] <= 1.0)
                    if graded else None, "info": not graded})
    if miss is not None:
        new = miss["interaction"]["new"]
        out.append({"target": f"bias lab new-value (cache miss) p95 <= {TARGET_MISS_P95} s, one "
                    f"visitor ({', '.join(BIAS_KEYS)})",
                    "value": f"{_ms(new['p95'])} ms over {new['n']} new values (max "
                    f"{_ms(new['max'])} ms)",
                    "pass": new["p95"] is not None and new["p95"] <= TARGET_MISS_P95})
    forty = next((p for p in levels if p["sessions"] == 40), None)
    if replicas > 1 and forty is not None:
        out.append({"target": "client settle p95 <= 1 s at 40 sessions (issue 24, "
                    f"{replicas} replicas)", "value": f"{_ms(forty['client_settle_p95'])} ms",
                    "pass": None, "info": True})
    whole = (f" (the whole set: serve.py, {replicas} replicas with their workers, HAProxy)"
             if replicas > 1 else "")
    if peak_pss:
        # graded on PSS: the RSS sum counts every page shared by a fork server and its
        # workers once per process; PSS counts it once (what the machine must hold)
        out.append({"target": f"peak memory (PSS) <= {TARGET_RSS / 1e9} GB" + whole,
                    "value": f"{peak_pss / 1e6:.0f} MB (RSS sum {peak_rss / 1e6:.0f} MB)",
                    "pass": 0 < peak_pss <= TARGET_RSS})
    else:
        out.append({"target": f"peak RSS <= {TARGET_RSS / 1e9} GB" + whole,
                    "value": f"{peak_rss / 1e6:.0f} MB", "pass": 0 < peak_rss <= TARGET_RSS})
    for t in out:
        t["mode"] = mode
        t.setdefault("info", False)
    return out


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--values", nargs="+", choices=VALUE_MODES, default=list(VALUE_MODES),
                    metavar="MODE",
                    help="value modes, each on a fresh server, in this order: lesson (a class "
                    "on a small shared pool of values; the graded mode) and/or random (uniform "
                    "over each widget's grid). Default: lesson random")
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 5, 20],
                    help="concurrent session levels, one phase each (default 1 5 20)")
    ap.add_argument("--duration", type=float, default=120.0,
                    help="seconds per level (default 120)")
    ap.add_argument("--port", type=int, default=0,
                    help="server port (default: a free one per server)")
    ap.add_argument("--db", type=Path, default=DEFAULT_DB,
                    help="store for ARBITER_DB, built if missing (default data/arbiter.duckdb)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sessions' choices")
    ap.add_argument("--gc", choices=["true", "false"],
                    help="pass --runner.postScriptGC=VALUE (default: leave the config as is)")
    ap.add_argument("--pages", nargs="+", metavar="PAGE",
                    help="subset of pages by URL path (home, Walkthrough, Leaderboard, …)")
    ap.add_argument("--warm-interactions", type=int, default=24,
                    help="interactions per page for the one-visitor warm measurement")
    ap.add_argument("--no-warm", action="store_true",
                    help="skip the warm-up pass and the one-visitor warm measurement")
    ap.add_argument("--bias-page", default=BIAS_PAGE,
                    help=f"page of the new-value measurement (default {BIAS_PAGE})")
    ap.add_argument("--bias-interactions", type=int, default=12,
                    help="new-value interactions on the bias lab's "
                    f"{'/'.join(BIAS_KEYS)} for one visitor (0: skip; default 12)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds a rerun may take before it counts as a timeout")
    ap.add_argument("--think-min", type=float, default=1.0,
                    help="shortest pause between a session's actions, s (default 1)")
    ap.add_argument("--think-max", type=float, default=3.0,
                    help="longest pause, s (default 3; 0.25/0.75 is the stress setting)")
    ap.add_argument("--no-msg-cache", action="store_true",
                    help="do not send cached_message_hashes (browsers do)")
    ap.add_argument("--no-compression", action="store_true",
                    help="do not offer permessage-deflate (browsers do)")
    ap.add_argument("--show-errors", action="store_true",
                    help="pass --client.showErrorDetails=full so exception boxes carry messages")
    ap.add_argument("--replicas", type=int, default=1,
                    help="serve.py --replicas N: N Streamlit processes behind HAProxy (needs "
                    "haproxy); sessions keep its cookie like a browser; per-replica CPU and RSS "
                    "(default 1: one process, no proxy)")
    ap.add_argument("--startup-timeout", type=float, default=180.0)
    ap.add_argument("--json", type=Path, help="write every figure to this JSON file")
    ap.add_argument("--workdir", type=Path,
                    help="where the timing logs and server output go, one subdirectory per "
                    "value mode (default: a new temp dir)")
    args = ap.parse_args(argv)
    if args.duration <= 0 or args.timeout <= 0 or not 0 <= args.think_min <= args.think_max:
        ap.error("--duration and --timeout must be > 0 and 0 <= think-min <= think-max")
    if any(n < 1 or n > 500 for n in args.sessions):
        ap.error("--sessions levels must be between 1 and 500")
    if not 0 <= args.warm_interactions <= 200 or not 0 <= args.bias_interactions <= 200:
        ap.error("--warm-interactions and --bias-interactions must be between 0 and 200")
    if not 1 <= args.replicas <= MAX_REPLICAS:
        ap.error(f"--replicas must be between 1 and {MAX_REPLICAS}")
    args.values = list(dict.fromkeys(args.values))
    return args


def configured_gc() -> str:
    """``runner.postScriptGC`` as ``.streamlit/config.toml`` sets it (Streamlit's default: true)."""
    try:
        with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
            value = tomllib.load(fh).get("runner", {}).get("postScriptGC")
    except (OSError, tomllib.TOMLDecodeError):
        value = None
    return "true (Streamlit default)" if value is None else f"{str(value).lower()} (config.toml)"


def ensure_store(db: Path) -> None:
    """Build the store with ``python -m core build --db DB`` if it is missing."""
    if db.exists():
        return
    print(f"building the store {db} …", flush=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "core", "build", "--db", str(db)], cwd=ROOT,
                   check=True, timeout=600)


async def amain(args: argparse.Namespace, server: Server, monitor: RssMonitor,
                values: Values) -> list[dict]:
    """Discover the pages, run the warm phases, the bias lab's new values and every level."""
    pages = await discover_pages(server.port, args.timeout, server.replicas > 1)
    if not pages:
        raise RuntimeError("the home page sent no navigation message")
    if args.pages:
        wanted = ["" if p.strip("/") in ("", "home") else p.strip("/") for p in args.pages]
        unknown = [p for p in wanted if p not in pages]
        if unknown:
            raise SystemExit(f"unknown pages {unknown}; the app has {pages}")
        pages = wanted
    print(f"[{values.mode}] pages: {', '.join(_label(p) for p in pages)}", flush=True)
    phases = []

    async def phase(name: str, n: int, on: list[str], behaviour: str) -> None:
        t = time.monotonic()
        print(f"[{values.mode}] phase {name} …", end=" ", flush=True)
        phases.append(await run_phase(server, monitor, values, name, n, args, on, behaviour))
        print(f"{time.monotonic() - t:.0f} s, {phases[-1]['reruns']} reruns", flush=True)

    if not args.no_warm:  # with replicas, one warm-up session per replica (run_phase)
        await phase("warmup", max(1, server.replicas), pages, "warmup")
        if args.warm_interactions:
            await phase("warm", 1, pages, "warm")
    bias = args.bias_page.strip("/")
    if args.bias_interactions and bias in pages:
        await phase("biasmiss", 1, [bias], "newvalues")
    for n in args.sessions:
        await phase(f"N={n}", n, pages, "browse")
    return phases


def run_mode(args: argparse.Namespace, mode: str, db: Path, workdir: Path,
             extra: list[str]) -> dict:
    """One value mode on a fresh server: start it, run every phase, stop it, summarize."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = Server(args.port or free_port(), db, workdir, extra, args.replicas)
    print(f"\n[{mode}] server: {' '.join(server.cmd)}\n  timing log {server.timing_log}\n"
          f"  output {server.output}", flush=True)
    monitor = None
    t0 = time.monotonic()
    try:
        server.start(args.startup_timeout)
        total = (len(args.sessions) * (args.duration + args.timeout + 60) + 3600)
        monitor = RssMonitor(server.proc.pid, total,
                             server.processes if args.replicas > 1 else None)
        monitor.start()
        values = Values(mode)
        phases = asyncio.run(amain(args, server, monitor, values))
        peak = monitor.peak()
        peak_pss = monitor.peak_pss()
        peaks = monitor.peaks()
    finally:
        if monitor is not None:
            monitor.stop_event.set()
        server.stop()
    logged = server.logged_exceptions()
    out = {"mode": mode, "phases": phases, "peak_rss_bytes": peak, "peak_pss_bytes": peak_pss,
           "lesson_pools": values.pools_table(), "values_seen": len(values.seen),
           "targets": check_targets(mode, phases, peak, args.replicas, peak_pss=peak_pss),
           "server_log_exceptions": logged, "command": server.cmd, "workdir": str(workdir),
           "seconds": round(time.monotonic() - t0, 1)}
    if args.replicas > 1:
        out["replicas"] = args.replicas
        out["peak_rss_by_process"] = dict(sorted(peaks.items(), key=lambda kv: _name_key(kv[0])))
        out["replica_ports"] = {k: v[0] for k, v in server.replica_ports().items()}
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the load test; 0 when every graded target was checked and passes, 1 otherwise."""
    args = parse_args(argv)
    if args.replicas > 1 and shutil.which("haproxy") is None:
        print(f"--replicas {args.replicas} needs HAProxy (apt-get install haproxy); it is not "
              "on PATH", file=sys.stderr)
        return 2
    db = args.db.resolve()
    ensure_store(db)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="arbiter-loadtest-"))
    workdir.mkdir(parents=True, exist_ok=True)
    extra = []
    if args.gc:
        extra.append(f"--runner.postScriptGC={args.gc}")
    if args.show_errors:
        extra.append("--client.showErrorDetails=full")
    gc_setting = f"{args.gc} (--gc)" if args.gc else configured_gc()
    results: dict[str, dict] = {}
    load0 = os.getloadavg()
    try:
        for mode in args.values:
            try:
                results[mode] = run_mode(args, mode, db, workdir / mode, extra)
            except (RuntimeError, OSError) as exc:   # e.g. the server did not start
                print(f"\n[{mode}] FAILED: {exc}", file=sys.stderr, flush=True)
                results[mode] = {"mode": mode, "error": str(exc)[-3000:], "phases": [],
                                 "targets": [{"mode": mode, "target": "the server ran",
                                              "value": str(exc).splitlines()[0][:200],
                                              "pass": False, "info": False}]}
                continue
            r = results[mode]
            print_report(mode, r["phases"], r["server_log_exceptions"])
            by_proc = "".join(f", {k} {v / 1e6:.0f} MB"
                              for k, v in r.get("peak_rss_by_process", {}).items())
            print(f"\n[{mode}] peak RSS {r['peak_rss_bytes'] / 1e6:.0f} MB (PSS "
                  f"{r.get('peak_pss_bytes', 0) / 1e6:.0f} MB){by_proc}; "
                  f"{r['seconds']:.0f} s; logs in {r['workdir']}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the server was stopped", file=sys.stderr)
        return 130
    targets = [t for r in results.values() for t in r["targets"]]
    print_targets(targets)
    load1 = os.getloadavg()
    print(f"\nthink time {args.think_min}-{args.think_max} s; runner.postScriptGC {gc_setting}; "
          f"{os.cpu_count()} CPUs, load average (1/5/15 min) at start "
          f"{'/'.join(f'{x:.1f}' for x in load0)}, at end {'/'.join(f'{x:.1f}' for x in load1)}; "
          f"logs in {workdir}")
    if args.json:
        args.json.write_text(json.dumps({
            "config": {"values": args.values, "sessions": args.sessions,
                       "duration": args.duration, "seed": args.seed, "gc": gc_setting,
                       "pages": args.pages, "think": [args.think_min, args.think_max],
                       "warm_interactions": args.warm_interactions,
                       "bias_page": args.bias_page, "bias_interactions": args.bias_interactions,
                       "lesson_pool_size": LESSON_POOL_SIZE,
                       "lesson_fractions": list(LESSON_FRACTIONS),
                       "msg_cache": not args.no_msg_cache,
                       "compression": not args.no_compression,
                       "cpus": os.cpu_count(), "loadavg_start": load0, "loadavg_end": load1,
                       "replicas": args.replicas},
            "modes": results, "targets": targets, "workdir": str(workdir)}, indent=2))
    graded = [t for t in targets if not t["info"]]
    return 0 if graded and all(t["pass"] is True for t in graded) else 1


if __name__ == "__main__":
    sys.exit(main())
