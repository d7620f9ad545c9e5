"""Streamlit glue shared by the pages: the store, URL parameters, small UI helpers.

This folder sits inside ``pages/`` but is a package, not a page: Streamlit's pages-directory
convention turns only the ``*.py`` files directly inside ``pages/`` into pages. Import it as
``from pages._shared import ...`` (the app's folder is on ``sys.path``). ``core`` never
imports it.
"""

from .params import (
    URL_KEYS,
    BoundParam,
    Choice,
    check_bound_params,
    choice_param,
    default_choice,
    init_from_url,
    number_param,
    parse_qid,
    parse_seed,
    parse_threshold,
    resolve_url_choice,
    sync_url,
    warn_bad_bound_params,
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
from .ui import (
    csv_bytes,
    download_table,
    parquet_bytes,
    plotly_config,
    source_chip,
    table_height,
    table_style,
)

__all__ = [
    "URL_KEYS",
    "BoundParam",
    "Choice",
    "PersonaBundle",
    "check_bound_params",
    "choice_param",
    "csv_bytes",
    "db_path",
    "default_choice",
    "download_table",
    "ensure_store",
    "get_connection",
    "init_from_url",
    "load_persona",
    "load_personas",
    "load_selection_pool",
    "load_store_info",
    "number_param",
    "parquet_bytes",
    "parse_qid",
    "parse_seed",
    "parse_threshold",
    "plotly_config",
    "resolve_url_choice",
    "source_chip",
    "store_guard",
    "store_stamp",
    "sync_url",
    "table_height",
    "table_style",
    "warn_bad_bound_params",
]
