"""URL query parameters: the Walkthrough's explicit handling, and checks of bound widgets.

The Walkthrough keeps ``seed``, ``persona`` and ``q`` in the URL, so a link reopens the same
view (``/Walkthrough?seed=20260321&persona=bench_shift_121_avery_ellis&q=A3``).

Why explicit ``st.query_params`` handling rather than ``bind="query-params"``: the persona
selectbox is *dependent*: its options change with the seed and with the search and filter
widgets, and its default is computed (the §8.7 selection protocol). A bound selectbox drops a
value outside its current options silently, but a bad link must say so (one ``st.warning``),
and it drops a value equal to its default from the URL, so a shared link would mean something
else once the computed default changes. So the page reads the three parameters once, when it
opens (:func:`init_from_url`), validates them with the pure :func:`resolve_url_choice`, seeds
the widgets' session state, and writes the current choice back after the widgets
(:func:`sync_url`). Widgets keep their keys (``wt_seed``, ``wt_persona``, ``wt_q``).

Accepted values: ``seed`` is a seed of the store (``20260321``) or its 1-based position
(``1``); ``persona`` a persona id of that seed; ``q`` a question id, case-insensitive (``a3``).

Widgets bound with ``bind="query-params"`` (the other pages) drop an invalid URL value
silently. :class:`BoundParam` describes what one accepts (select widgets put their *formatted*
option in the URL), :func:`check_bound_params` lists the rejected values (pure), and
:func:`warn_bad_bound_params` shows one ``st.warning`` per rejected parameter when a page opens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd
import streamlit as st

from core.testbed.questions import QIDS

__all__ = [
    "DEFAULT_QID",
    "URL_KEYS",
    "BoundParam",
    "Choice",
    "check_bound_params",
    "choice_param",
    "default_choice",
    "init_from_url",
    "number_param",
    "parse_qid",
    "parse_seed",
    "parse_threshold",
    "resolve_url_choice",
    "sync_url",
    "warn_bad_bound_params",
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


def parse_threshold(raw: str | None, grid: Sequence[float]) -> float | None:
    """A threshold from a URL snapped to the nearest value of ``grid``; ``None`` if it is
    not a number or lies outside the grid's range."""
    if raw is None:
        return None
    try:
        v = float(str(raw).strip())
    except ValueError:
        return None
    values = [float(g) for g in grid]
    if not values or not (min(values) - 1e-9 <= v <= max(values) + 1e-9):
        return None
    return min(values, key=lambda g: abs(g - v))


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


def resolve_url_choice(raw: Mapping[str, str | None], *, personas: pd.DataFrame,
                       pool: pd.DataFrame) -> Choice:
    """Validate ``seed``, ``persona`` and ``q`` from a URL; fall back to defaults with warnings.

    Parameters
    ----------
    raw : mapping
        The raw query parameters (missing keys or ``None`` mean "not given").
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
    raw_seed, raw_persona, raw_q = raw.get("seed"), raw.get("persona"), raw.get("q")

    seed = parse_seed(raw_seed, seeds)
    if raw_seed is not None and seed is None:
        seed = default_choice(personas, pool).seed
        warnings.append(f"The link's seed “{raw_seed}” is not in this store; showing seed "
                        f"{seed} instead.")
    if seed is None:
        seed = (default_choice(personas, pool).seed if raw_persona is None
                else _seed_of(raw_persona, personas, default_choice(personas, pool).seed))

    ids = set(personas.loc[personas["seed"] == seed, "persona_id"].astype(str))
    persona = str(raw_persona).strip() if raw_persona is not None else None
    if persona is not None and persona not in ids:
        fallback = default_choice(personas, pool, seed=seed).persona
        warnings.append(f"The link's persona “{raw_persona}” is not in seed {seed}; showing "
                        f"{fallback} instead.")
        persona = fallback
    if persona is None:
        persona = default_choice(personas, pool, seed=seed).persona

    qid = parse_qid(raw_q)
    if raw_q is not None and qid is None:
        qid = default_choice(personas, pool, seed=seed, persona=persona).qid
        warnings.append(f"The link's question “{raw_q}” is not one of the 18; showing {qid} "
                        "instead.")
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
    raw = {name: st.query_params.get(name) for name in URL_KEYS}
    choice = resolve_url_choice(raw, personas=personas, pool=pool)
    for line in choice.warnings:
        st.warning(line, icon=":material/link_off:")
    st.session_state[URL_KEYS["seed"]] = choice.seed
    st.session_state[URL_KEYS["persona"]] = choice.persona
    st.session_state[URL_KEYS["q"]] = choice.qid


def sync_url(*, seed: int, persona: str, qid: str) -> None:
    """Write the current view to the URL (only the parameters that changed)."""
    want = {"seed": str(seed), "persona": persona, "q": qid}
    for name, value in want.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value


# ---------------------------------------------------------------- bound widgets
@dataclass(frozen=True)
class BoundParam:
    """A URL parameter bound to a widget (its ``key``) and the raw values it accepts.

    Attributes
    ----------
    key : the widget key, which is also the parameter name.
    label : how the page names the setting in a warning.
    accepts : raw string → whether the widget takes it.
    expected : a short description of valid values, for the warning.
    multi : the parameter may repeat (a multiselect).
    """

    key: str
    label: str
    accepts: Callable[[str], bool]
    expected: str
    multi: bool = False


def number_param(key: str, label: str, lo: float, hi: float) -> BoundParam:
    """A slider's parameter: a number in [lo, hi]."""
    def accepts(raw: str) -> bool:
        try:
            v = float(raw)
        except ValueError:
            return False
        return lo <= v <= hi

    return BoundParam(key, label, accepts, f"a number from {lo:g} to {hi:g}")


def choice_param(key: str, label: str, choices: Sequence[str], *,
                 multi: bool = False) -> BoundParam:
    """A select widget's parameter: one of its formatted options (repeatable if ``multi``)."""
    allowed = frozenset(str(c) for c in choices)
    shown = ", ".join(list(map(str, choices))[:6]) + (" …" if len(choices) > 6 else "")
    return BoundParam(key, label, allowed.__contains__, f"one of {shown}", multi)


def check_bound_params(raw: Mapping[str, Sequence[str]],
                       params: Sequence[BoundParam]) -> list[str]:
    """One message per parameter of ``raw`` whose value a bound widget would drop.

    Parameters
    ----------
    raw : mapping
        Parameter name → its values in the URL (repeated parameters give several).
    params : the page's bound parameters.
    """
    messages = []
    for p in params:
        values = [str(v) for v in raw.get(p.key, ())]
        if not values:
            continue
        bad = [v for v in values if not p.accepts(v)]
        if len(values) > 1 and not p.multi:
            bad = values[1:] if not bad else bad
        if bad:
            shown = ", ".join(f"“{v}”" for v in bad)
            messages.append(f"The link's {p.label} {shown} is not valid ({p.expected}); "
                            "it was ignored.")
    return messages


def warn_bad_bound_params(params: Sequence[BoundParam]) -> None:
    """When the page opens (its first bound widget has no state yet), warn about rejected
    URL values; later reruns stay quiet (Streamlit has removed them from the URL)."""
    if not params or params[0].key in st.session_state:
        return
    raw = {p.key: st.query_params.get_all(p.key) for p in params}
    for line in check_bound_params(raw, params):
        st.warning(line, icon=":material/link_off:")
