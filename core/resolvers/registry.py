"""The resolver registry: one frozen record per resolver, the single source of every list.

Seed 000 §9 (the resolvers), §9.2 (the baselines and the GT-aided reachability row), §9.5
(majority vote as the equal-weight ArgRAG adaptation), §10 (the selective ``+SKIP``
variants). Every list that names resolvers is derived from :data:`RESOLVERS`:
``core.evaluation.run`` (``FORCED_METHODS``, ``SELECTIVE_METHODS``, ``METHOD_LABELS`` and
the fits of ``run_seed``), ``core.evaluation.lab`` (``METHOD_MECHANISMS``) and
``core.figures.style`` (``METHOD_SHORT``; the colours stay there, in ``METHOD_COLORS``).

Invariants (``tests/test_resolver_registry.py``): names, labels and short names are unique
over the forced and the selective variants together; a selective variant is named
``<name>_skip``, labelled ``<label without its parenthesis>+SKIP`` and shortened
``<short>+SKIP``; exactly one of ``make`` (a factory of an unfitted resolver with ``fit`` and
``predict``) and ``oracle`` (a GT-aided rule that needs no fit) is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from .abf import ABF
from .baselines import SSB, MajorityClass, MajorityVote, RandomGuess, SSBGlobal, source_reachability
from .bcf import BCF
from .dawid_skene import DawidSkene
from .nbf import DSNBF, NBF

__all__ = [
    "FAMILIES",
    "RESOLVERS",
    "Resolver",
    "all_methods",
    "forced_methods",
    "method_labels",
    "method_mechanisms",
    "method_short",
    "method_words",
    "resolver",
    "selective_methods",
]

#: The families of resolvers, in board order, with what they share.
FAMILIES = MappingProxyType({
    "baseline": "ignore the sources, or trust one source",
    "vote": "count or weigh every source's atom by fixed rules",
    "learned": "learn each source's confusion table from data",
    "ceiling": "GT-aided reference rows, not methods",
})


@dataclass(frozen=True)
class Resolver:
    """One resolver of the benchmark.

    Attributes
    ----------
    name : str
        Key in runs, the store and URLs (``dsnbf``).
    label : str
        Display name in tables (``DSNBF``; a parenthesis adds a qualifier).
    short : str
        Compact name for small multiples, widget options and URL values.
    family : str
        One of :data:`FAMILIES`.
    confidence : str
        What its confidence means, in one clause.
    mechanism : str
        Why it reacts to a change of the sources, in one clause (the bias lab's "what
        broke"; empty for the GT-aided row, which is never ranked).
    make : callable, optional
        ``make(selective: bool)`` → an unfitted resolver with ``fit(train, cal)`` and
        ``predict(atoms)``; ``make()`` must work for a resolver without a selective variant.
    oracle : callable, optional
        ``oracle(atoms, gt, skip_on_miss=bool)`` → ``Prediction``: a GT-aided rule.
    selective : bool
        It has a ``<name>_skip`` variant that may abstain.
    shared_fit : bool
        The forced and the selective variant come from one fit (NBF+SKIP searches its own
        T jointly with θ, so it is fitted apart).
    heavy : bool
        The longest fit: ``run_seed(parallel=True)`` fits it in a second thread.
    words : str
        What it is, for a student: the short name spelled out, then what it does, in one
        plain sentence (the Leaderboard's key of the short names; seed 000 §9).
    """

    name: str
    label: str
    short: str
    family: str
    confidence: str
    mechanism: str = ""
    make: Callable[..., object] | None = None
    oracle: Callable[..., object] | None = None
    selective: bool = False
    shared_fit: bool = True
    heavy: bool = False
    words: str = ""

    def __post_init__(self) -> None:
        if (self.make is None) == (self.oracle is None):
            raise ValueError(f"resolver {self.name!r} needs exactly one of make and oracle")
        if self.family not in FAMILIES:
            raise ValueError(f"resolver {self.name!r}: family {self.family!r} is not one of "
                             f"{', '.join(FAMILIES)}")
        if not self.name or not self.label or not self.short:
            raise ValueError(f"resolver {self.name!r} needs a name, a label and a short name")

    @property
    def skip_name(self) -> str | None:
        """The selective variant's name, or None."""
        return f"{self.name}_skip" if self.selective else None

    @property
    def skip_label(self) -> str | None:
        """The selective variant's label (the label without its parenthesis, + SKIP)."""
        return f"{self.label.split(' (')[0]}+SKIP" if self.selective else None

    @property
    def skip_short(self) -> str | None:
        """The selective variant's short name."""
        return f"{self.short}+SKIP" if self.selective else None


def _selective(cls):
    return lambda selective=False: cls(selective=selective)


def _plain(cls):
    return lambda selective=False: cls()


#: Every resolver, in board order (the order of ``FORCED_METHODS``).
RESOLVERS: tuple[Resolver, ...] = (
    Resolver("random", "Random", "Random", "baseline",
             "1/K for every answer: a uniform guess",
             "it ignores the sources", make=_plain(RandomGuess),
             words="Random guess: picks one of the possible answers at random."),
    Resolver("majority_class", "Majority Class", "MajClass", "baseline",
             "how often the answer was the truth on the train split",
             "it ignores the sources and answers the training set's most common label",
             make=_plain(MajorityClass),
             words="Majority Class: always gives the answer most common among the training "
                   "people, whatever the sources say."),
    Resolver("ssb", "SSB", "SSB", "baseline",
             "the chosen source's train accuracy when it answers",
             "it trusts one source per question, chosen on the train split",
             make=_selective(SSB), selective=True,
             words="Single Source Best: for each question, trusts the one source that was "
                   "right most often on the training people."),
    Resolver("ssb_global", "SSB-Global", "SSB-G", "baseline",
             "the chosen source's train accuracy when it answers",
             "it trusts one source for all 18 questions", make=_plain(SSBGlobal),
             words="Single Source Best, global: trusts one source, the best over all 18 "
                   "questions together."),
    Resolver("majority_vote", "Majority Vote (≡ ArgRAG equal-weight)", "MV", "vote",
             "the winner's share of the active votes",
             "it counts every source's atom equally, so a biased majority outvotes an "
             "accurate minority", make=_plain(MajorityVote),
             words="Majority Vote: the answer most sources give, every source counted "
                   "equally (the equal-weight form of the ArgRAG argumentation baseline)."),
    Resolver("bcf", "BCF(4p)", "BCF", "vote",
             "the winning answer's share of the bias-corrected scores",
             "it corrects a fixed one-step bias per source, whatever the bias scale",
             make=_plain(BCF),
             words="Bias-Corrected Fusion: a vote after undoing each source's known bias "
                   "(one step along the answer scale), with four fitted discounts."),
    Resolver("abf", "ABF", "ABF", "vote",
             "the winning answer's share of the explanation scores",
             "it blends a fixed bias shift and the raw atom with six fitted weights",
             make=_selective(ABF), selective=True,
             words="Abductive Bias-aware Fusion: scores each answer by how well it explains "
                   "every source's report, as the truth or as the truth seen through that "
                   "source's bias."),
    Resolver("nbf", "NBF", "NBF", "learned",
             "the posterior probability of the answer",
             "it re-learns each source's confusion matrix from the labelled train personas",
             make=_selective(NBF), selective=True, shared_fit=False,
             words="Naive Bayes Fusion: learns from the training people how often each "
                   "source gives each answer when the truth is another, then weighs the "
                   "sources as independent witnesses."),
    Resolver("dsnbf", "DSNBF", "DSNBF", "learned",
             "the posterior probability of the answer",
             "it re-learns each source's confusion matrix per difficulty class from the "
             "labelled train personas", make=_selective(DSNBF), selective=True, heavy=True,
             words="Difficulty-Stratified Naive Bayes Fusion: Naive Bayes Fusion with its own "
                   "tables for each kind of person (stable, changing over the month, saying "
                   "one thing and doing another), the kind guessed from the sources."),
    Resolver("dawid_skene", "Dawid–Skene (no labels)", "DS", "learned",
             "the posterior probability of the answer, learned without labels",
             "it learns confusion matrices without labels, from agreement between sources "
             "alone", make=_plain(DawidSkene),
             words="Dawid–Skene: learns the same tables as Naive Bayes Fusion without any "
                   "labels, from how the sources agree with each other."),
    Resolver("source_reachability", "Source Reachability (GT-aided)", "Reach", "ceiling",
             "1 when some atom equals the truth, else the plurality's vote share",
             oracle=source_reachability, selective=True,
             words="Source Reachability: right whenever some source gives the true answer; "
                   "it is told the truth, so it is a ceiling, not a method."),
)

_BY_NAME = MappingProxyType({r.name: r for r in RESOLVERS})


def resolver(name: str) -> Resolver:
    """The record of ``name`` (a forced name; a ``_skip`` name gives its base resolver)."""
    r = _BY_NAME.get(name)
    if r is None and name.endswith("_skip"):
        base = _BY_NAME.get(name.removesuffix("_skip"))
        r = base if base is not None and base.selective else None
    if r is None:
        raise ValueError(f"unknown resolver {name!r}; known: {', '.join(all_methods())}")
    return r


def forced_methods() -> tuple[str, ...]:
    """Every resolver's forced name, in board order."""
    return tuple(r.name for r in RESOLVERS)


def selective_methods() -> tuple[str, ...]:
    """Every selective variant's name, in board order."""
    return tuple(r.skip_name for r in RESOLVERS if r.selective)


def all_methods() -> tuple[str, ...]:
    """Forced names, then selective names."""
    return forced_methods() + selective_methods()


def method_labels() -> dict[str, str]:
    """Display label of every forced and selective name."""
    out = {r.name: r.label for r in RESOLVERS}
    out.update({r.skip_name: r.skip_label for r in RESOLVERS if r.selective})
    return out


def method_short() -> dict[str, str]:
    """Short name of every forced and selective name."""
    out = {r.name: r.short for r in RESOLVERS}
    out.update({r.skip_name: r.skip_short for r in RESOLVERS if r.selective})
    return out


def method_words() -> dict[str, str]:
    """What every forced and selective method is, in one plain sentence (a selective variant:
    its base method's sentence and that it may abstain)."""
    out = {r.name: r.words for r in RESOLVERS}
    out.update({r.skip_name: f"{r.words} This variant may skip a question it is unsure of."
                for r in RESOLVERS if r.selective})
    return out


def method_mechanisms() -> dict[str, str]:
    """Why each ranked resolver reacts to a change of the sources (the GT-aided row has none)."""
    return {r.name: r.mechanism for r in RESOLVERS if r.mechanism}
