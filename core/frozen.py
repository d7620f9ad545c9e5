"""A read-only mapping that a pandas frame can carry in ``DataFrame.attrs`` at no cost.

pandas deep-copies ``attrs`` into every frame derived from another (each column access, each
filter, each arithmetic result: ``NDFrame.__finalize__``). A scenario's configuration stored
there as a plain dict of about thirty fields made that copy the largest single cost of a pilot
simulation (15,000 ``deepcopy`` calls, about 0.18 s of 0.56 s on the Pilot budget page). A
:class:`FrozenDict` cannot change, so a deep copy may return the object itself.

Invariant: a ``FrozenDict`` holds only immutable values (numbers, strings, tuples of them);
every mutating method raises ``TypeError``. It is a ``dict`` subclass, so ``json.dumps`` (pandas
writes ``attrs`` into Parquet metadata as JSON) and ``pickle`` (``st.cache_data``) accept it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FrozenDict"]

_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes)


def _check(value: Any, key: Any) -> None:
    if isinstance(value, tuple | frozenset):
        for v in value:
            _check(v, key)
    elif not isinstance(value, _IMMUTABLE):
        raise TypeError(f"FrozenDict values must be immutable; {key!r} holds a "
                        f"{type(value).__name__}")


class FrozenDict(dict):
    """A ``dict`` that refuses changes and is its own (deep) copy.

    Parameters
    ----------
    data : mapping, optional
        Keys and values; every value must be immutable (numbers, strings, ``None``, tuples or
        frozensets of them), else ``TypeError``.
    """

    __slots__ = ()

    def __init__(self, data: Mapping[Any, Any] = (), /) -> None:
        super().__init__(data)
        for key, value in self.items():
            _check(value, key)

    def _refuse(self, *args: Any, **kwargs: Any):
        raise TypeError("a FrozenDict cannot be changed; build a new one")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))
