"""URL query parameters: the Walkthrough's dependent choice, and every other page's widgets.

The Walkthrough keeps ``seed``, ``persona`` and ``q`` in the URL, so a link reopens the same
view (``/Walkthrough?seed=20260321&persona=bench_shift_121_avery_ellis&q=A3``). Its persona
selectbox is *dependent* (its options change with the seed, the search and the filters, and
its default is computed by the selection protocol), so the page reads the three parameters
once, when it opens (:func:`init_from_url`), validates them with the pure
:func:`resolve_url_choice`, seeds the widgets' session state, and writes the current choice
back after the widgets (:func:`sync_url`).

Every other page declares its parameters as :mod:`core.urlparams` specs and creates its
widgets through the ``url_*`` helpers here: :func:`open_page` validates the whole URL once
when the page opens (empty, bare, repeated, wrong-typed, out-of-range, unknown and very long
values fall back to the default with one plain-text notice; off-grid numbers snap to the
grid), the widgets take their values from session state, and an ``on_change`` callback
writes each change back to the URL (so it works inside ``st.fragment`` reruns too).

Why not ``bind="query-params"``: a bound widget parses the URL itself, so a bare
``?sq_method`` reached the page as ``None`` (a crash), an off-grid slider value bypassed the
cache grid, and a refused value could only be reported by echoing it. Choice recorded: no
browser back/forward restore of widget values (bound widgets had it).

No notice ever contains the link's own text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd
import streamlit as st

from core.testbed.questions import QIDS
from core.urlparams import ChoiceParam, FlagParam, NumberParam, format_value, parse_query

from .ui import escape_markdown

Param = ChoiceParam | NumberParam | FlagParam

__all__ = [
    "DEFAULT_QID",
    "URL_KEYS",
    "Choice",
    "current",
    "default_choice",
    "init_from_url",
    "load_url",
    "notice",
    "open_page",
    "parse_qid",
    "parse_seed",
    "resolve_url_choice",
    "sync_url",
    "url_multiselect",
    "url_number",
    "url_pills",
    "url_segmented",
    "url_select",
    "url_select_among",
    "url_slider",
    "url_sync",
    "url_toggle",
]

DEFAULT_QID = "A3"  # the paper's walked-through question (§8.6)
#: URL parameter → session-state key of its widget.
URL_KEYS = MappingProxyType({"seed": "wt_seed", "persona": "wt_persona", "q": "wt_q"})


@dataclass(frozen=True)
class Choice:
    """A (seed, persona, question) view and the warnings met while resolving it."""

    seed: int
    persona: str
    qid: str
    warnings: tuple[str, ...] = ()


def parse_seed(raw: str | None, seeds: Sequence[int]) -> int | None:
    """A seed of ``seeds`` from its value or 1-based position; ``None`` if not valid."""
    if raw is None:
        return None
    try:
        v = int(str(raw).strip())
    except ValueError:
        return None
    seeds = [int(s) for s in seeds]
    if v in seeds:
        return v
    if 1 <= v <= len(seeds):
        return seeds[v - 1]
    return None


def parse_qid(raw: str | None) -> str | None:
    """A question id of :data:`QIDS`, case-insensitive; ``None`` if not valid."""
    if raw is None:
        return None
    lookup = {q.lower(): q for q in QIDS}
    return lookup.get(str(raw).strip().lower())


def _qualifying(pool: pd.DataFrame) -> pd.DataFrame:
    if pool.empty or "rank" not in pool:
        return pool.iloc[0:0]
    return pool[pool["rank"] > 0].sort_values("rank")


def default_choice(personas: pd.DataFrame, pool: pd.DataFrame, *,
                   seed: int | None = None, persona: str | None = None) -> Choice:
    """The protocol's pick, optionally within one seed and/or for one persona.

    The best-ranked qualifying pair of the selection pool matching the constraints; failing
    that, the first test persona (else the first persona) of the seed with question A3.
    """
    if personas.empty:
        raise ValueError("the store has no personas")
    q = _qualifying(pool)
    if seed is not None:
        q = q[q["seed"] == seed]
    if persona is not None:
        q = q[q["persona_id"] == persona]
    if len(q):
        top = q.iloc[0]
        return Choice(int(top["seed"]), str(top["persona_id"]), str(top["question_id"]))
    cand = personas if seed is None else personas[personas["seed"] == seed]
    if cand.empty:
        cand = personas
    s = int(cand["seed"].iloc[0]) if seed is None or seed not in set(cand["seed"]) else seed
    in_seed = cand[cand["seed"] == s]
    if persona is not None and persona in set(in_seed["persona_id"]):
        return Choice(s, persona, DEFAULT_QID)
    test = in_seed[in_seed["split"] == "test"] if "split" in in_seed else in_seed.iloc[0:0]
    pick = test if len(test) else in_seed
    return Choice(s, str(pick["persona_id"].iloc[0]), DEFAULT_QID)


def resolve_url_choice(raw: Mapping[str, str | Sequence[str] | None], *,
                       personas: pd.DataFrame,
                       pool: pd.DataFrame) -> Choice:
    """Validate ``seed``, ``persona`` and ``q`` from a URL; fall back to defaults with warnings.

    Parameters
    ----------
    raw : mapping
        The raw query parameters (missing keys, ``None`` or ``[]`` mean "not given"); a
        list of several values (``?seed=1&seed=2``) is refused with a warning, not read as
        its last value (issue 20 point 9).
    personas : DataFrame
        ``seed``, ``persona_id`` and ``split`` of every persona in the store.
    pool : DataFrame
        The ranked selection pool (:func:`core.evaluation.walkthrough.select_walkthrough`).

    Returns
    -------
    Choice
        A valid view; ``warnings`` holds one line per rejected parameter.
    """
    warnings: list[str] = []
    seeds = sorted(int(s) for s in personas["seed"].unique())
    given = {}
    for name, label in (("seed", "seed"), ("persona", "persona"), ("q", "question")):
        value = raw.get(name)
        if isinstance(value, (list, tuple)):  # get_all: several values are refused
            if len(value) > 1:
                warnings.append(f"The link gives the {label} more than once; that setting is "
                                "ignored.")
                value = None
            else:
                value = value[0] if value else None
        given[name] = value
    raw_seed, raw_persona, raw_q = given["seed"], given["persona"], given["q"]

    seed = parse_seed(raw_seed, seeds)
    if raw_seed is not None and seed is None:
        seed = default_choice(personas, pool).seed
        warnings.append(f"The link's seed is not in this store; showing seed {seed} "
                        "instead.")
    if seed is None:
        seed = (default_choice(personas, pool).seed if raw_persona is None
                else _seed_of(raw_persona, personas, default_choice(personas, pool).seed))

    ids = set(personas.loc[personas["seed"] == seed, "persona_id"].astype(str))
    persona = str(raw_persona).strip() if raw_persona is not None else None
    if persona is not None and persona not in ids:
        fallback = default_choice(personas, pool, seed=seed).persona
        warnings.append(f"The link's persona is not in seed {seed}; showing {fallback} "
                        "instead.")
        persona = fallback
    if persona is None:
        persona = default_choice(personas, pool, seed=seed).persona

    qid = parse_qid(raw_q)
    if raw_q is not None and qid is None:
        qid = default_choice(personas, pool, seed=seed, persona=persona).qid
        warnings.append(f"The link's question is not one of the 18; showing {qid} instead.")
    if qid is None:
        qid = default_choice(personas, pool, seed=seed, persona=persona).qid
    return Choice(seed, persona, qid, tuple(warnings))


def _seed_of(persona: str, personas: pd.DataFrame, fallback: int) -> int:
    """The default seed if it holds ``persona``, else the first seed that does."""
    seeds = personas.loc[personas["persona_id"] == str(persona).strip(), "seed"]
    if seeds.empty or fallback in set(seeds):
        return fallback
    return int(seeds.min())


def init_from_url(personas: pd.DataFrame, pool: pd.DataFrame) -> None:
    """When the page opens, seed the widgets' state from the URL (warning on bad values).

    Runs only while the widgets have no state yet (the first run of the page in a session,
    or the first run after coming back from another page), so later widget changes win.
    """
    if URL_KEYS["seed"] in st.session_state:
        return
    raw = {name: st.query_params.get_all(name) for name in URL_KEYS}
    choice = resolve_url_choice(raw, personas=personas, pool=pool)
    for line in choice.warnings:
        notice(line)
    st.session_state[URL_KEYS["seed"]] = choice.seed
    st.session_state[URL_KEYS["persona"]] = choice.persona
    st.session_state[URL_KEYS["q"]] = choice.qid


def sync_url(*, seed: int, persona: str, qid: str) -> None:
    """Write the current view to the URL (only the parameters that changed)."""
    want = {"seed": str(seed), "persona": persona, "q": qid}
    for name, value in want.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value


# ---------------------------------------------------------------- other pages' widgets
#: Session key holding the page whose URL parameters were read last (page-open detection).
_OPENED = "_arbiter_url_page"


def notice(text: str) -> None:
    """One warning line whose text is shown as plain text (markdown characters escaped)."""
    st.warning(escape_markdown(text), icon=":material/link_off:")


def open_page(page: str, specs: Sequence[Param], *, ignore: Sequence[str] = ()) -> bool:
    """Read the page's URL parameters when the page opens; seed its widgets' state.

    Call it at the top of the page, before any widget of ``specs``. On the run that opens
    the page (a new session, or the first run after another page), every parameter goes
    through :func:`core.urlparams.parse_query`: valid values seed the widgets' session state,
    refused ones give one plain-text notice each and are removed from the URL, and
    parameters no spec names (except ``ignore``) are dropped. On later runs it only fills
    in defaults for widgets whose state Streamlit dropped (a widget hidden for a run).

    Returns
    -------
    bool
        Whether this run opened the page.
    """
    opened = st.session_state.get(_OPENED) != page
    if opened:
        st.session_state[_OPENED] = page
        load_url(specs, ignore=ignore, drop_unknown=True)
    else:
        for spec in specs:
            if spec.key not in st.session_state:
                st.session_state[spec.key] = spec.default
    return opened


def load_url(specs: Sequence[Param], *, ignore: Sequence[str] = (),
             drop_unknown: bool = False) -> None:
    """Seed ``specs``' widget state from the URL now (see :func:`open_page`)."""
    raw = {k: st.query_params.get_all(k) for k in list(st.query_params.keys())}
    parsed = parse_query(raw, specs, ignore=ignore)
    for line in parsed.notices:
        notice(line)
    for spec in specs:
        value = parsed.values.get(spec.key, spec.default)
        st.session_state[spec.key] = list(value) if _is_multi(spec) else value
        _write_url(spec, value)
    if drop_unknown:
        known = {s.key for s in specs} | set(ignore)
        for k in [k for k in raw if k not in known]:
            del st.query_params[k]


def _is_multi(spec: Param) -> bool:
    return isinstance(spec, ChoiceParam) and spec.multi


def _write_url(spec: Param, value: object) -> None:
    """Put ``value`` in the URL, or remove the parameter when it is the default."""
    default = spec.default
    if _is_multi(spec):
        value, default = tuple(value), tuple(default)  # type: ignore[arg-type]
    if value == default:
        if spec.key in st.query_params:
            del st.query_params[spec.key]
        return
    text = format_value(spec, value)
    if st.query_params.get_all(spec.key) != text:
        st.query_params[spec.key] = text if len(text) != 1 else text[0]


def current(spec: Param) -> object:
    """The widget's value, never ``None`` and always valid (the default otherwise)."""
    value = st.session_state.get(spec.key, spec.default)
    if _is_multi(spec):
        opts = set(spec.options)  # type: ignore[union-attr]
        return tuple(v for v in spec.options if v in set(value or ()) & opts)  # type: ignore
    if value is None:
        return spec.default
    if isinstance(spec, ChoiceParam) and value not in spec.options:
        return spec.default
    return value


def url_sync(spec: Param) -> Callable[[], None]:
    """An ``on_change`` callback that writes the widget's new value to the URL."""
    def sync() -> None:
        _write_url(spec, current(spec))
    return sync


def _seed(spec: Param) -> None:
    if spec.key not in st.session_state:
        st.session_state[spec.key] = list(spec.default) if _is_multi(spec) else spec.default


def _fmt(spec: ChoiceParam, format_func: Callable | None) -> Callable:
    return format_func or (lambda v: dict(zip(spec.options, spec.tokens, strict=True))[v])


def _bounds(spec: NumberParam) -> tuple:
    """(min, max, step) of a number widget: ints for an integer spec (Streamlit's type rule)."""
    if spec.integer:
        return int(spec.lo), int(spec.hi), int(spec.step)
    return float(spec.lo), float(spec.hi), float(spec.step)


def url_slider(spec: NumberParam, label: str, *, where=st, **kwargs):
    """``st.slider`` for ``spec`` (value from session state, URL kept in sync)."""
    _seed(spec)
    lo, hi, step = _bounds(spec)
    where.slider(label, lo, hi, step=step, key=spec.key, on_change=url_sync(spec), **kwargs)
    return current(spec)


def url_number(spec: NumberParam, label: str, *, where=st, **kwargs):
    """``st.number_input`` for ``spec`` (value from session state, URL kept in sync)."""
    _seed(spec)
    lo, hi, step = _bounds(spec)
    where.number_input(label, lo, hi, step=step, key=spec.key, on_change=url_sync(spec),
                       **kwargs)
    return current(spec)


def url_select(spec: ChoiceParam, label: str, *, where=st, format_func=None, **kwargs):
    """``st.selectbox`` for ``spec``; returns a valid option."""
    _seed(spec)
    where.selectbox(label, list(spec.options), key=spec.key, on_change=url_sync(spec),
                    format_func=_fmt(spec, format_func), **kwargs)
    return current(spec)


def url_select_among(spec: ChoiceParam, label: str, options, *, where=st, format_func=None,
                     **kwargs):
    """``st.selectbox`` for ``spec`` offering only ``options`` (those of ``spec.options`` that
    make sense here, e.g. the knobs a chosen sweep varies); a value outside them (a link to
    another sweep) falls back to ``spec.default`` if offered, else the first option, and the
    URL follows. The options keep the order given. Returns a valid option, or ``None`` when
    none of ``options`` is one of ``spec.options``."""
    _seed(spec)
    known = set(spec.options)
    opts = list(dict.fromkeys(o for o in options if o in known))  # in the order given
    if not opts:
        return None
    if st.session_state.get(spec.key) not in opts:
        st.session_state[spec.key] = spec.default if spec.default in opts else opts[0]
        _write_url(spec, st.session_state[spec.key])
    where.selectbox(label, opts, key=spec.key, on_change=url_sync(spec),
                    format_func=_fmt(spec, format_func), **kwargs)
    return current(spec)


def url_segmented(spec: ChoiceParam, label: str, *, where=st, format_func=None, **kwargs):
    """``st.segmented_control`` for ``spec`` (a choice is required); returns a valid option."""
    _seed(spec)
    where.segmented_control(label, list(spec.options), key=spec.key, required=True,
                            on_change=url_sync(spec), format_func=_fmt(spec, format_func),
                            **kwargs)
    return current(spec)


def url_multiselect(spec: ChoiceParam, label: str, *, where=st, format_func=None, **kwargs):
    """``st.multiselect`` for ``spec``; returns a tuple of options in option order."""
    _seed(spec)
    where.multiselect(label, list(spec.options), key=spec.key, on_change=url_sync(spec),
                      format_func=_fmt(spec, format_func), **kwargs)
    return current(spec)


def url_pills(spec: ChoiceParam, label: str, *, where=st, format_func=None, **kwargs):
    """``st.pills`` choosing several options of ``spec``; returns a tuple in option order.

    Unlike ``st.multiselect``, whose chips stay on one line and scroll out of sight when
    there are many (the Leaderboard's eleven methods at 1280 px), the pills wrap onto as
    many rows as they need (``wrap=True`` unless given: in a column Streamlit would keep
    them on one scrolling row) and show the options left out too.
    """
    _seed(spec)
    kwargs.setdefault("wrap", True)
    where.pills(label, list(spec.options), selection_mode="multi", key=spec.key,
                on_change=url_sync(spec), format_func=_fmt(spec, format_func), **kwargs)
    return current(spec)


def url_toggle(spec: FlagParam, label: str, *, where=st, **kwargs) -> bool:
    """``st.toggle`` for ``spec``."""
    _seed(spec)
    where.toggle(label, key=spec.key, on_change=url_sync(spec), **kwargs)
    return bool(current(spec))
