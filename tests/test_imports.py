"""Imports that cannot race: no package imports its own submodules, the module graph of
``core`` and the page glue is acyclic, every page imports the preload first, and threads that
import in different orders after the preload never deadlock.

Why: Streamlit runs each session's script in its own thread. A thread holding the import lock
of ``pkg.sub`` waits for ``pkg`` while another thread runs ``pkg/__init__`` and waits for
``pkg.sub``: CPython reports ``_DeadlockError`` or "cannot import name … from partially
initialized module" (issue: two first visitors on a fresh server).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "pages/_shared")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            out[module_name(path)] = path
    return out


def top_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``name`` imports at module level (not inside functions)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    base = name if is_pkg else name.rpartition(".")[0]
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                root = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{root}.{node.module}" if node.module else root
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    g = {name: top_level_imports(name, path, known) for name, path in mods.items()}
    for name in mods:  # importing pkg.sub first imports pkg: an implicit edge
        parent = name.rpartition(".")[0]
        if parent in known:
            g[name].add(parent)
    return g


#: The page-glue facade may re-export its submodules: every script imports
#: ``pages._shared.preload`` first, which imports it (and everything) in one thread.
FACADES = ("pages._shared",)


@pytest.mark.parametrize("name", [n for n, p in modules().items()
                                  if p.name == "__init__.py" and n not in FACADES])
def test_no_package_imports_its_own_submodules(name):
    """``pkg/__init__`` importing ``pkg.sub`` is the parent ↔ child cycle behind the race."""
    path = modules()[name]
    own = {m for m in top_level_imports(name, path, set(modules())) if m.startswith(name + ".")}
    assert not own, f"{name}/__init__.py imports its submodules {sorted(own)}"


def test_module_graph_is_acyclic():
    g = graph()
    for facade in FACADES:  # imported only after the preload (see FACADES)
        g[facade] = set()
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        seen[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if seen.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if m not in seen:
                visit(m)
        stack.pop()
        seen[n] = 2

    for n in sorted(g):
        if n not in seen:
            visit(n)


SCRIPTS = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_imports_the_preload_first(script):
    tree = ast.parse(script.read_text())
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
               and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    first = imports[0]
    assert isinstance(first, ast.Import) and first.names[0].name == "pages._shared.preload", \
        f"{script.name}: the first import must be pages._shared.preload"


def test_preload_imports_every_core_module():
    code = ("import sys, pkgutil, core, pages._shared.preload as p\n"
            "names = {m.name for m in pkgutil.walk_packages(core.__path__, 'core.')}\n"
            "missing = sorted(n for n in names - {'core.__main__', 'core.cli'}\n"
            "                 if n not in sys.modules)\n"
            "print(missing)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"


RACE = textwrap.dedent("""
    import importlib, random, sys, threading
    targets = {targets!r}
    barrier = threading.Barrier(len(targets))
    errors = []

    def run(name):
        barrier.wait()
        try:
            {first}
            importlib.import_module(name)
        except BaseException as exc:
            errors.append(f"{{name}}: {{type(exc).__name__}}: {{exc}}")

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for t in threads: t.start()
    for t in threads: t.join(120)
    print("ERRORS", errors)
""")


@pytest.mark.parametrize("trial", range(3))
def test_threads_importing_in_different_orders_after_the_preload_never_fail(trial):
    """Eight fresh threads, barrier-started, each importing another page's first module."""
    targets = ["core.calibration.label_source", "core.calibration.scenario",
               "core.calibration.nq301", "core.figures.calibration", "pages._shared.seed003",
               "core.evaluation.walkthrough", "core.resolvers.nbf", "pages._shared.store"]
    targets = targets[trial:] + targets[:trial]
    code = RACE.format(targets=targets, first="import pages._shared.preload")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ERRORS []" in out.stdout, out.stdout[-2000:]


def _cache_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("cache_data", "cache_resource", "shared_cache"):
                yield name, node


@pytest.mark.parametrize("script", [*SCRIPTS, *sorted((ROOT / "pages" / "_shared").glob("*.py"))],
                         ids=lambda p: p.name)
def test_every_streamlit_cache_is_bounded(script):
    """A class of visitors must not grow the server: every cache names ``max_entries``."""
    for name, call in _cache_calls(ast.parse(script.read_text())):
        keys = {k.arg for k in call.keywords}
        assert "max_entries" in keys, f"{script.name}:{call.lineno}: unbounded {name}"
