"""Import everything the pages use, once, in one fixed order.

Why: Streamlit runs every session's script in its own thread. When two first visitors open
two pages at the same moment, their threads import ``core`` submodules in different orders;
a thread that holds the import lock of ``core.calibration.label_source`` while waiting for
its package ``core.calibration`` (whose ``__init__`` another thread is running) deadlocks
with it (``_DeadlockError``, "cannot import name … from partially initialized module").

The cure is that every script's *first* import is this module: the first thread imports all
of ``core`` and the page glue here, in :data:`MODULES` order, while every other thread waits
on this one module's lock and then finds everything in ``sys.modules``. ``serve.py`` imports
it in the main thread before the server starts, so on ``make run`` and in the Docker image no
session ever imports anything. Pages list ``import pages._shared.preload`` as their first
import (ruff's isort keeps it first: see ``[tool.ruff.lint.isort]`` in ``pyproject.toml``).
"""

from __future__ import annotations

import importlib
import pkgutil

import core
from core.worker_init import prepare

__all__ = ["MODULES", "imported"]


def _core_modules() -> tuple[str, ...]:
    names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core.")
                   if m.name not in ("core.__main__", "core.cli"))
    return tuple(names)


#: Every module imported here, in import order: the third-party stack, all of ``core``
#: (sorted, so packages before their submodules), then the page glue.
MODULES: tuple[str, ...] = (
    "numpy", "pandas", "scipy.optimize", "scipy.special", "scipy.stats", "duckdb",
    "plotly.graph_objects", "plotly.subplots", "streamlit",
    *_core_modules(),
    "pages._shared.cache", "pages._shared.params", "pages._shared.ui", "pages._shared.uploads",
    "pages._shared.widths",
    "pages._shared.store",
    "pages._shared.workers", "pages._shared.evaluation", "pages._shared.seed003",
    "pages._shared.pilot", "pages._shared.reversal", "pages._shared.reliability",
    "pages._shared.walkthrough", "pages._shared.instance", "pages._shared.records",
    "pages._shared.prose", "pages._shared.fusion", "pages._shared.tour", "pages._shared.sweeps",
)

for _name in MODULES:
    importlib.import_module(_name)


def _warm_plotly() -> None:
    """Build and serialise one figure of each trace type the builders use.

    Plotly loads its default template and its per-type classes and validators lazily, on
    first use: about 0.15 s of the first figure any session builds. Paying it here, in the
    thread that imports this module (``serve.py``'s main thread), keeps it out of every
    visitor's first interaction.
    """
    import plotly.graph_objects as go
    import plotly.io as pio

    data = [{"type": t} for t in ("scatter", "bar", "heatmap")]
    fig = go.Figure({"data": data, "layout": {"height": 100}}, _validate=False)
    pio.to_json(go.Figure(fig.to_dict(), _validate=False), validate=False)
    go.Figure(go.Scatter(x=[0], y=[0])).to_dict()


_warm_plotly()


def _freeze() -> None:
    """Move everything imported so far out of the cyclic garbage collector's reach.

    Nothing of it is ever garbage, but every full (generation-2) collection walked it: with
    ``runner.postScriptGC = false`` such a collection still starts on its own inside a
    visitor's rerun, and the load test's one-visitor figures showed single reruns of 0.4–0.6 s
    where the same interaction otherwise takes 0.15–0.2 s. ``gc.freeze()`` puts the objects
    alive now into the permanent generation (they are still freed by reference counting);
    the worker processes do the same (:func:`core.worker_init.prepare`).
    """
    prepare(())  # imports nothing more; collects, then freezes


_freeze()


def imported() -> tuple[str, ...]:
    """The names of :data:`MODULES` (all of them are in ``sys.modules`` once this runs)."""
    return MODULES
