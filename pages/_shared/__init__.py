"""Streamlit glue shared by the pages: the store, URL parameters, small UI helpers.

This folder sits inside ``pages/`` but is a package, not a page: Streamlit's pages-directory
convention turns only the ``*.py`` files directly inside ``pages/`` into pages. Import it as
``from pages._shared import ...`` (the app's folder is on ``sys.path``). ``core`` never
imports it.
"""

from .params import (
    URL_KEYS,
    Choice,
    default_choice,
    init_from_url,
    parse_qid,
    parse_seed,
    resolve_url_choice,
    sync_url,
)
from .store import (
    PersonaBundle,
    db_path,
    ensure_store,
    get_connection,
    load_persona,
    load_personas,
    load_selection_pool,
    load_store_info,
    store_guard,
    store_stamp,
)
from .ui import csv_bytes, plotly_config, source_chip

__all__ = [
    "URL_KEYS",
    "Choice",
    "PersonaBundle",
    "csv_bytes",
    "db_path",
    "default_choice",
    "ensure_store",
    "get_connection",
    "init_from_url",
    "load_persona",
    "load_personas",
    "load_selection_pool",
    "load_store_info",
    "parse_qid",
    "parse_seed",
    "plotly_config",
    "resolve_url_choice",
    "source_chip",
    "store_guard",
    "store_stamp",
    "sync_url",
]
