"""The Walkthrough's persona menu: the personas of a seed that match the sidebar's filters.

Pure Python over tuples built once per store (:func:`seed_index`), so a rerun filters a few
hundred ids without touching pandas. Invariants (``tests/test_walkthrough_panels.py``):
:meth:`SeedIndex.menu` keeps store order; every option contains the search text and lies in
the chosen difficulties and splits (an empty choice filters nothing); :meth:`PersonaMenu.choose`
always returns a non-empty option list that holds the chosen persona.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

__all__ = ["PersonaMenu", "SeedIndex", "seed_index"]


@dataclass(frozen=True)
class PersonaMenu:
    """The personas of one seed that pass the filters.

    Attributes
    ----------
    seed : int
    options : tuple of str
        Matching persona ids, in store order (may be empty).
    n_in_seed : int
        Personas in the seed.
    ids : frozenset of str
        Every persona id of the seed.
    split_of : mapping
        Persona id → split, for every persona of the seed.
    """

    seed: int
    options: tuple[str, ...]
    n_in_seed: int
    ids: frozenset[str]
    split_of: Mapping[str, str]

    def choose(self, *, current: str | None, preferred: str) -> tuple[tuple[str, ...], str]:
        """The options to offer and the persona to select.

        Keeps ``current`` when it is an option; else ``preferred`` (the protocol's pick of
        the seed) when it is one, else the first option. With no option, offers the current
        persona alone (or ``preferred`` if the current one is not of this seed).
        """
        options = self.options
        if not options:
            options = (current if current in self.ids else preferred,)
        if current in options:
            return options, str(current)
        return options, preferred if preferred in options else options[0]


@dataclass(frozen=True)
class SeedIndex:
    """Persona ids, splits and difficulties of every seed, as tuples (store order).

    Attributes
    ----------
    seeds : tuple of int
        Sorted.
    ids, splits, difficulties : mapping
        Seed → tuple of str, aligned.
    """

    seeds: tuple[int, ...]
    ids: Mapping[int, tuple[str, ...]]
    splits: Mapping[int, tuple[str, ...]]
    difficulties: Mapping[int, tuple[str, ...]]

    def menu(self, seed: int, *, search: str = "", difficulties: Sequence[str] = (),
             splits: Sequence[str] = ()) -> PersonaMenu:
        """The personas of ``seed`` whose id contains ``search`` (case-insensitive) and whose
        difficulty and split are among the given ones (empty = no filter).

        Raises
        ------
        ValueError
            If ``seed`` is not in the index.
        """
        if seed not in self.ids:
            raise ValueError(f"seed {seed} is not in this store "
                             f"(seeds: {', '.join(map(str, self.seeds))})")
        needle = search.strip().lower()
        want_d, want_s = set(difficulties), set(splits)
        rows = zip(self.ids[seed], self.difficulties[seed], self.splits[seed], strict=True)
        options = tuple(p for p, d, s in rows if needle in p.lower()
                        and (not want_d or d in want_d) and (not want_s or s in want_s))
        return PersonaMenu(seed=seed, options=options, n_in_seed=len(self.ids[seed]),
                           ids=frozenset(self.ids[seed]),
                           split_of=MappingProxyType(dict(zip(self.ids[seed],
                                                              self.splits[seed], strict=True))))


def seed_index(personas: pd.DataFrame) -> SeedIndex:
    """Index ``personas`` (columns ``seed``, ``persona_id``, ``split``, ``difficulty``).

    Raises
    ------
    ValueError
        If a column is missing.
    """
    lacking = [c for c in ("seed", "persona_id", "split", "difficulty")
               if c not in personas.columns]
    if lacking:
        raise ValueError(f"personas lacks columns: {', '.join(lacking)}")
    seeds = tuple(sorted(int(s) for s in personas["seed"].unique()))
    groups = {s: personas[personas["seed"] == s] for s in seeds}

    def col(name: str) -> Mapping[int, tuple[str, ...]]:
        return MappingProxyType({s: tuple(g[name].astype(str)) for s, g in groups.items()})

    return SeedIndex(seeds=seeds, ids=col("persona_id"), splits=col("split"),
                     difficulties=col("difficulty"))
