"""URL query parameters: one validated path from raw link text to widget values.

A shared link (``/Reliability?rel_bins=12&rel_label=Z``) is user input: anyone can type
``?rel_bins=`` (empty), ``?rel_bins`` (bare), ``?rel_bins=1&rel_bins=2`` (repeated),
``?rel_bins=ten`` (wrong type), ``?rel_bins=1e9`` (out of range), ``?rel_bins=12.5`` (off
the widget's grid) or a kilobyte of markdown. Every page declares its parameters as
:class:`ChoiceParam`, :class:`NumberParam` or :class:`FlagParam` specs, and
:func:`parse_query` turns the raw mapping into valid values only.

Invariants (``tests/test_urlparams.py`` checks them with a table and with hypothesis):

* every value returned is one the widget accepts: a choice among ``options``, a number on
  the grid ``lo + k·step`` inside ``[lo, hi]``, a bool;
* a parameter that is absent gives no value (the widget's default applies) and no notice;
* a parameter that is present but not valid gives no value and exactly one notice;
* notices are built from the spec's own label and expectation, never from the link's text,
  so nothing a visitor types is ever rendered (as markdown, HTML or otherwise);
* :func:`format_value` of a parsed value parses back to the same value.

Off-grid numbers are snapped to the nearest grid point without a notice (a link written by
hand with ``0.33`` for a 0.05-step slider means 0.35); that also keeps every cached result
keyed on grid values, so a hostile link cannot fill a cache with near-duplicates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_VALUE_LENGTH",
    "ChoiceParam",
    "FlagParam",
    "NumberParam",
    "ParsedQuery",
    "format_value",
    "parse_query",
]

#: Longer raw values are refused before any parsing.
MAX_VALUE_LENGTH = 200

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


@dataclass(frozen=True)
class ChoiceParam:
    """A select-like widget's parameter.

    Parameters
    ----------
    key : str
        The widget key, which is also the URL parameter name.
    label : str
        How a notice names the setting ("label source").
    options : sequence
        The widget's option values (any hashable: str, int, …).
    tokens : sequence of str, optional
        The URL text for each option (default ``str(option)``); matched case-insensitively.
    default : object
        The widget's default (an option; for ``multi`` a tuple of options).
    multi : bool, default=False
        The parameter may repeat (a multiselect); the value is a tuple of options in the
        widget's option order, without duplicates.
    """

    key: str
    label: str
    options: tuple
    default: object
    tokens: tuple[str, ...] = ()
    multi: bool = False

    def __post_init__(self) -> None:
        options = tuple(self.options)
        object.__setattr__(self, "options", options)
        tokens = tuple(str(t) for t in (self.tokens or [str(o) for o in options]))
        if len(tokens) != len(options):
            raise ValueError(f"{self.key}: {len(tokens)} tokens for {len(options)} options")
        if len({t.lower() for t in tokens}) != len(tokens):
            raise ValueError(f"{self.key}: URL tokens must differ case-insensitively")
        object.__setattr__(self, "tokens", tokens)
        if not options:
            raise ValueError(f"{self.key}: a choice needs at least one option")
        defaults = tuple(self.default) if self.multi else (self.default,)
        if self.multi:
            object.__setattr__(self, "default", defaults)
        if any(d not in options for d in defaults):
            raise ValueError(f"{self.key}: default {self.default!r} is not an option")

    @property
    def expected(self) -> str:
        """A short description of valid values, for notices."""
        shown = ", ".join(self.tokens[:6]) + (" …" if len(self.tokens) > 6 else "")
        return ("one or more of " if self.multi else "one of ") + shown

    def parse(self, values: Sequence[str]) -> tuple[object, bool]:
        """``(value, ok)`` for the raw values of this parameter (at least one)."""
        lookup = {t.lower(): o for t, o in zip(self.tokens, self.options, strict=True)}
        if not self.multi and len(values) != 1:
            return None, False
        picked = []
        for raw in values:
            opt = lookup.get(raw.strip().lower(), _MISSING) if raw.strip() else _MISSING
            if opt is _MISSING:
                return None, False
            picked.append(opt)
        if not self.multi:
            return picked[0], True
        chosen = set(picked)
        return tuple(o for o in self.options if o in chosen), True

    def format(self, value: object) -> list[str]:
        """The URL text of ``value`` (a list: several entries for ``multi``)."""
        token = dict(zip(self.options, self.tokens, strict=True))
        if self.multi:
            return [token[v] for v in value]  # type: ignore[union-attr]
        return [token[value]]


@dataclass(frozen=True)
class NumberParam:
    """A slider's or number input's parameter: a number on the grid ``lo + k·step``.

    ``integer=True`` returns ``int`` values (``lo``, ``hi`` and ``step`` must be whole).
    """

    key: str
    label: str
    lo: float
    hi: float
    step: float
    default: float
    integer: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"{self.key}: need finite lo < hi, got {self.lo}, {self.hi}")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"{self.key}: step must be positive, got {self.step}")
        if self.snap(self.default) != self.default:
            raise ValueError(f"{self.key}: default {self.default} is not on the grid")

    @property
    def expected(self) -> str:
        """A short description of valid values, for notices."""
        return f"a number from {self.lo:g} to {self.hi:g}"

    def snap(self, v: float) -> float | int:
        """The grid point nearest to ``v`` (``v`` inside ``[lo, hi]``)."""
        k = round((v - self.lo) / self.step)
        k = min(max(k, 0), round((self.hi - self.lo) / self.step))
        out = min(self.lo + k * self.step, self.hi)
        # round away binary noise (0.1 + 2·0.05 = 0.20000000000000004)
        out = round(out, 10)
        return int(round(out)) if self.integer else float(out)

    def parse(self, values: Sequence[str]) -> tuple[object, bool]:
        """``(value, ok)`` for the raw values of this parameter (at least one)."""
        if len(values) != 1:
            return None, False
        try:
            v = float(values[0].strip())
        except ValueError:
            return None, False
        if not math.isfinite(v) or not (self.lo - 1e-9 <= v <= self.hi + 1e-9):
            return None, False
        return self.snap(v), True

    def format(self, value: object) -> list[str]:
        """The URL text of ``value``."""
        return [str(int(value))] if self.integer else [f"{float(value):g}"]  # type: ignore


@dataclass(frozen=True)
class FlagParam:
    """A toggle's or checkbox's parameter: ``true/false`` (also ``1/0``, ``yes/no``)."""

    key: str
    label: str
    default: bool

    @property
    def expected(self) -> str:
        """A short description of valid values, for notices."""
        return "true or false"

    def parse(self, values: Sequence[str]) -> tuple[object, bool]:
        """``(value, ok)`` for the raw values of this parameter (at least one)."""
        if len(values) != 1:
            return None, False
        raw = values[0].strip().lower()
        if raw in _TRUE:
            return True, True
        if raw in _FALSE:
            return False, True
        return None, False

    def format(self, value: object) -> list[str]:
        """The URL text of ``value``."""
        return ["true" if value else "false"]


Param = ChoiceParam | NumberParam | FlagParam
_MISSING = object()


@dataclass(frozen=True)
class ParsedQuery:
    """What a link said: valid values by key, and one plain-text notice per refused key.

    ``unknown`` counts parameters that no spec of the page names (they are ignored).
    """

    values: Mapping[str, object] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    unknown: int = 0


def parse_query(raw: Mapping[str, Sequence[str] | str], specs: Sequence[Param], *,
                ignore: Sequence[str] = ()) -> ParsedQuery:
    """Validate the raw query parameters of a page against its specs.

    Parameters
    ----------
    raw : mapping
        Parameter name → its raw values (``st.query_params.get_all`` gives lists; a bare
        ``?key`` arrives as ``[""]``). A plain string counts as one value.
    specs : sequence of param specs
        The page's parameters; keys must be unique.
    ignore : sequence of str, optional
        Parameter names the page handles itself (not counted as unknown).

    Returns
    -------
    ParsedQuery
        ``values`` holds only valid values; every refused parameter has one notice naming
        the setting and what it accepts; the link's own text appears nowhere.

    Examples
    --------
    >>> spec = NumberParam("bins", "number of bins", 2, 30, 1, 10, integer=True)
    >>> parse_query({"bins": ["12.4"]}, [spec]).values
    {'bins': 12}
    >>> parse_query({"bins": [""]}, [spec]).notices
    ("The link's number of bins was not valid (a number from 2 to 30); the default is shown.",)
    """
    keys = [s.key for s in specs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate parameter keys in {keys}")
    values: dict[str, object] = {}
    notices: list[str] = []
    refused: list[str] = []
    for spec in specs:
        given = raw.get(spec.key)
        if given is None:
            continue
        items = [given] if isinstance(given, str) else [str(v) for v in given]
        if not items:
            continue
        ok = all(len(v) <= MAX_VALUE_LENGTH for v in items) and len(items) <= 64
        value, ok = spec.parse(items) if ok else (None, False)
        if ok:
            values[spec.key] = value
        else:
            refused.append(spec.key)
            notices.append(f"The link's {spec.label} was not valid ({spec.expected}); "
                           "the default is shown.")
    known = set(keys) | set(ignore)
    unknown = sum(1 for k in raw if k not in known)
    return ParsedQuery(values, tuple(notices), tuple(refused), unknown)


def format_value(spec: Param, value: object) -> list[str]:
    """The URL text of a valid ``value`` of ``spec`` (a list of one or more strings)."""
    return spec.format(value)
