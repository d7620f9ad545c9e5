"""Glue of the Bias lab's "Across many testbeds" panel: the sweep catalogue and views, cached.

Keys are small: the catalogue's stamp (the shipped files' and the sweep store's sizes and
modification times), a sweep key, the panel's choices. Everything is computed by
:mod:`core.sweep.catalog` and :mod:`core.sweep.explore`; a broken file is a one-line message
from there, never a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.sweep.catalog import (
    SHIPPED_DIR,
    STORE_ENV,
    SweepCatalog,
    SweepData,
    available_sweeps,
    load_sweep,
)
from core.sweep.explore import SweepView, sweep_view

from .cache import shared_cache

__all__ = ["catalog", "catalog_stamp", "data_of", "view_of"]


def _file_stamp(path: Path) -> tuple[int, int]:
    try:
        st_ = path.stat()
    except OSError:
        return (0, 0)
    return (int(st_.st_size), int(st_.st_mtime_ns))


def catalog_stamp() -> tuple:
    """What the catalogue depends on: the shipped files, the sweep store's path and file."""
    shipped = tuple(sorted((p.name, *_file_stamp(p)) for p in SHIPPED_DIR.glob("*.*"))) \
        if SHIPPED_DIR.is_dir() else ()
    store = os.environ.get(STORE_ENV, "")
    return shipped, store, _file_stamp(Path(store)) if store else (0, 0)


@shared_cache(max_entries=4)
def _catalog(stamp: tuple) -> SweepCatalog:
    return available_sweeps(store=stamp[1])


def catalog() -> tuple[SweepCatalog, tuple]:
    """The sweeps the panel can show, and the stamp their views are cached under."""
    stamp = catalog_stamp()
    return _catalog(stamp), stamp


@shared_cache(max_entries=4, spinner="Reading the sweep…")
def data_of(key: str, stamp: tuple) -> SweepData:
    """:func:`core.sweep.catalog.load_sweep` (``ValueError`` for a file that cannot be
    read)."""
    return load_sweep(key, store=stamp[1])


@shared_cache(max_entries=32)
def view_of(key: str, stamp: tuple, metric: str, method: str, x: str, y: str) -> SweepView:
    """:func:`core.sweep.explore.sweep_view` of the sweep ``key`` (``ValueError`` for a file
    that cannot be read)."""
    return sweep_view(data_of(key, stamp), metric=metric, method=method, x=x, y=y)
