"""URL query parameters of the Walkthrough: read, validate, fall back, write back.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd
import streamlit as st

from core.testbed.questions import QIDS

__all__ = [
    "DEFAULT_QID",
    "URL_KEYS",
    "Choice",
    "default_choice",
    "init_from_url",
    "parse_qid",
    "parse_seed",
    "resolve_url_choice",
    "sync_url",
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
