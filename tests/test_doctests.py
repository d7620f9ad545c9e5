"""Docstring examples in core run and print what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import core

MODULES = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core.")
                 if m.name != "core.__main__")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
