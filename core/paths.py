"""Where Arbiter's files live, without importing anything heavy.

The command line builds its parser from these (``python -m core --help`` should not wait for
pandas or DuckDB); :mod:`core.store` re-exports :data:`DEFAULT_DB`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DATA_DIR", "DEFAULT_DB"]

#: The repository's ``data/`` folder.
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
#: The store the app and the command line use unless told otherwise.
DEFAULT_DB = DATA_DIR / "arbiter.duckdb"
