"""Public surfaces: every name in ``__all__`` exists, and core never imports streamlit."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import core

MODULES = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core.")
                 if m.name not in ("core.__main__",))


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_existing_unique_names(name):
    mod = importlib.import_module(name)
    exported = getattr(mod, "__all__", None)
    if exported is None:
        assert name.rsplit(".", 1)[-1].startswith("_") or name == "core", name
        return
    assert len(exported) == len(set(exported)), f"duplicates in {name}.__all__"
    missing = [n for n in exported if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"


def test_core_imports_without_streamlit():
    code = ("import sys, pkgutil, importlib, core\n"
            "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
            "    if m.name != 'core.__main__': importlib.import_module(m.name)\n"
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
