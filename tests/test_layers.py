"""The layering of ``docs/architecture.md``: what each part of ``core`` may import.

testbed ← resolvers ← evaluation / calibration ← figures, and nothing in ``core`` imports
Streamlit or the pages. Every import counts, also one inside a function (the
``tests/test_imports.py`` graph looks at module level only, for import races).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: For each layer, the layers of ``core`` it must not import.
FORBIDDEN = {
    "core.testbed": ("core.resolvers", "core.evaluation", "core.calibration", "core.figures",
                     "core.prose", "core.llm"),
    "core.resolvers": ("core.evaluation", "core.calibration", "core.figures", "core.prose",
                       "core.llm"),
    "core.evaluation": ("core.figures", "core.prose", "core.llm"),
    "core.calibration": ("core.figures", "core.llm"),
    # NL memory (seed 000 §8.6): beside calibration, on the testbed and evaluation (noise)
    "core.prose": ("core.figures", "core.calibration", "core.llm"),
    # the optional live LLM path (seed 000 §8.6, §9.6): on the testbed and the prose only
    "core.llm": ("core.resolvers", "core.evaluation", "core.calibration", "core.figures",
                 "core.records", "core.store", "core.audit", "core.build", "core.cli"),
    # seed 002's personal records: self-contained, on nothing else of core but core.stats
    "core.records": ("core.testbed", "core.resolvers", "core.evaluation", "core.calibration",
                     "core.prose", "core.figures", "core.store", "core.audit", "core.llm"),
    # issue 21's fusion of any table of claims: self-contained, on nothing of core but core.stats
    "core.fusion": ("core.testbed", "core.resolvers", "core.evaluation", "core.calibration",
                    "core.prose", "core.figures", "core.store", "core.audit", "core.llm",
                    "core.records", "core.build", "core.cli"),
    "core.figures": ("core.llm",),
    # issue 23's sweep engine: on the testbed, evaluation and prose (noise profiles)
    "core.sweep": ("core.figures", "core.llm", "core.calibration", "core.records",
                   "core.fusion", "core.tour", "core.build", "core.audit"),
    # issue 22's guided tour: on top of every story, below the command line only
    "core.tour": ("core.llm", "core.cli", "core.build", "core.audit"),
}
#: Known exceptions, each with the reason and the issue that removes it.
ALLOWED: set[tuple[str, str]] = set()  # exceptions to the layering (none any more)


def _imports(path: Path, name: str) -> set[str]:
    """Every module ``path`` imports, anywhere in the file, as absolute names."""
    tree = ast.parse(path.read_text())
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                root = ".".join(parts[: len(parts) - node.level + 1])
                out.add(f"{root}.{node.module}" if node.module else root)
            else:
                out.add(node.module or "")
    return out


def _core_modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


@pytest.mark.parametrize("name, path", _core_modules(), ids=lambda v: str(v))
def test_core_never_imports_streamlit_or_the_pages(name, path):
    bad = {m for m in _imports(path, name) if m.split(".")[0] in ("streamlit", "pages")}
    assert not bad, f"{name} imports {sorted(bad)}"


#: Modules beside the layers, and the layers of ``core`` each may import.
BESIDE = {
    "core": (), "core.stats": (), "core.urlparams": (), "core.frozen": (), "core.glossary": (),
    "core.worker_init": (), "core.pages_registry": (), "core.paths": (),
    "core.replicas": (),
    "core.store": ("core.testbed",), "core.audit": ("core.testbed", "core.store"),
    "core.build": ("core.testbed", "core.evaluation", "core.calibration", "core.prose",
                   "core.records", "core.store"),
    "core.cli": None, "core.__main__": None,  # the command line may use everything
}
LAYERS = ("core.testbed", "core.resolvers", "core.evaluation", "core.calibration",
          "core.prose", "core.llm", "core.records", "core.figures", "core.store",
          "core.audit")


def _in(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


@pytest.mark.parametrize("name, path", _core_modules(), ids=lambda v: str(v))
def test_each_layer_imports_only_the_layers_below_it(name, path):
    imported = {m for m in _imports(path, name) if m.startswith("core.")}
    layer = next((lay for lay in FORBIDDEN if _in(name, lay)), None)
    if layer is not None:
        bad = sorted(m for m in imported for f in FORBIDDEN[layer] if _in(m, f))
        assert not bad, f"{name} (layer {layer}) imports {bad}"
        return
    assert name in BESIDE, f"{name} is in no layer of docs/architecture.md"
    allowed = BESIDE[name]
    if allowed is None:
        return
    bad = sorted(m for m in imported if not any(_in(m, a) for a in allowed)
                 and any(_in(m, lay) for lay in LAYERS)
                 and not any(_in(m, t) for n, t in ALLOWED if n == name))
    assert not bad, f"{name} imports {bad}"
