"""Small presentation helpers shared by the pages (colours, chips, downloads)."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from core.figures.style import LATENT_COLOR, SOURCE_COLORS
from core.glossary import find, tip
from core.resolvers.registry import method_short, method_words
from core.testbed.questions import SOURCE_LABELS

__all__ = ["FAVICON", "csv_bytes", "download_table", "escape_markdown", "glossary_link",
           "glossary_help", "method_key", "num_columns",
           "number_table", "parquet_bytes", "plotly_config", "source_chip", "table_height",
           "table_style"]


#: Characters that Streamlit's markdown (CommonMark, GitHub tables, :icon: and :color[]
#: directives, $math$) gives a meaning; each is backslash-escaped by :func:`escape_markdown`.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=^%@\"'/])")
#: Where GitHub-flavoured markdown's bare-address links start: a scheme's ``:/``, ``www``
#: before a dot, an ``@`` (also what ``mailto:`` needs); :data:`_JOINER` goes right after each.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9]):(?=/)|(?<=www)(?=\.)|@")
_JOINER = "\u2060"
#: Every page's favicon, a file served by the app itself: a ``:material/…:`` page icon makes
#: each visitor's browser fetch the favicon from a font host (issue 20 point 9).
FAVICON = str(Path(__file__).with_name("favicon.png"))


def escape_markdown(text: object, *, limit: int = 500) -> str:
    """``text`` made inert for ``st.markdown``-rendering calls (``st.warning``, ``st.caption``…).

    Every markdown-significant ASCII punctuation character is backslash-escaped (CommonMark
    lets any of them be escaped), line breaks become spaces, and the result is cut to
    ``limit`` characters (500: a visitor's text; our own paragraphs that quote data, such as
    the tour's, pass a larger one), so no link, image, heading, HTML, icon or colour
    directive survives.

    Escapes are resolved before GitHub-flavoured markdown finds bare addresses in the text,
    so ``http://…``, ``www.…`` and ``name@host`` would still become links (issue 20 point 2):
    a word joiner (U+2060, invisible) after a ``:`` that starts ``://``, before the ``.``
    of ``www.`` and after ``@`` breaks those patterns without changing what a reader sees.

    >>> escape_markdown("**hi**")
    '\\\\*\\\\*hi\\\\*\\\\*'
    >>> "\u2060" in escape_markdown("see http://a.b/c.png")
    True
    """
    flat = " ".join(str(text).split())[:limit]
    flat = _AUTOLINK.sub(lambda m: m.group(0) + _JOINER, flat)
    return _MD_SPECIAL.sub(r"\\\1", flat)


def plotly_config(name: str = "arbiter") -> dict:
    """Plotly modebar options: no logo, PNG export at 2× named ``<name>.png``."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "scale": 2, "filename": name}}


def source_chip(source: str, *, text: str | None = None) -> str:
    """HTML for a coloured dot and the source's label (``latent`` gives the truth colour)."""
    color = SOURCE_COLORS.get(source, LATENT_COLOR)
    label = html.escape(text if text is not None else SOURCE_LABELS.get(source, source))
    return f'<span style="color:{color};font-size:1.1em">●</span>&nbsp;<b>{label}</b>'


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of ``frame`` without the index."""
    return frame.to_csv(index=False).encode("utf-8")


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """Parquet (pyarrow) of ``frame`` without the index; column names made strings."""
    buf = io.BytesIO()
    frame.rename(columns=str).to_parquet(buf, index=False)
    return buf.getvalue()


def download_table(frame: pd.DataFrame, *, stem: str, key: str, what: str = "table") -> None:
    """Two download buttons (CSV, Parquet) for ``frame``, side by side.

    The bytes are built only when a button is clicked (zero-argument callables), and a
    download does not rerun the page (``on_click="ignore"``). ``stem`` names the files.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_") or "table"
    with st.container(horizontal=True, gap="small"):
        st.download_button(f"{what} (CSV)", lambda: csv_bytes(frame), file_name=f"{safe}.csv",
                           mime="text/csv", on_click="ignore", key=f"{key}_csv",
                           icon=":material/download:")
        st.download_button(f"{what} (Parquet)", lambda: parquet_bytes(frame),
                           file_name=f"{safe}.parquet", mime="application/vnd.apache.parquet",
                           on_click="ignore", key=f"{key}_parquet",
                           icon=":material/download:")


def table_style(frame: pd.DataFrame, *, formats: Mapping[str, str] | None = None,
                default: str = "{:.1f}") -> Styler:
    """Display formats for ``st.dataframe``: floats with ``default`` (or ``formats[col]``).

    Streamlit draws a missing number as a grey "None"; float columns with missing values are
    therefore shown as formatted text with an em dash for the gaps. Only the display copy
    changes; downloads use the frame itself.
    """
    fmts = {c: default for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}
    fmts.update(formats or {})
    shown = frame.copy()
    for col, fmt in list(fmts.items()):
        if col in shown and pd.api.types.is_float_dtype(shown[col]) and shown[col].isna().any():
            shown[col] = [("—" if pd.isna(v) else fmt.format(v)) for v in shown[col]]
            del fmts[col]
    return shown.style.format({c: f for c, f in fmts.items() if c in shown}, na_rep="—")


_FIXED = re.compile(r"^\{:(\+?)\.(\d+)f\}$")


def number_table(frame: pd.DataFrame, *, formats: Mapping[str, str] | None = None,
                 default: str = "{:.1f}", labels: Mapping[str, str] | None = None,
                 ) -> tuple[pd.DataFrame, dict]:
    """:func:`table_style`'s look without a Styler: a display copy and its ``column_config``.

    Marshalling a Styler costs ``st.dataframe`` 10–20 ms per table on every rerun; this
    returns a plain frame and column settings instead. Float columns whose format is fixed-
    point (``"{:.1f}"``, ``"{:+.1f}"``, ``"{:.0f}"`` …) are rounded here, with Python's own
    formatting, to the digits shown, and the browser prints them with the same printf format,
    so every digit is Python's and the column still sorts as numbers (a rounded −0.0 shows
    as 0.0). Float columns with missing values, or another format, become text as in
    :func:`table_style`, with an em dash for the gaps. ``labels`` are the column titles
    (``column_config`` strings); downloads should use the frame itself.

    Examples
    --------
    >>> shown, config = number_table(pd.DataFrame({"m": ["a"], "acc": [82.25], "d": [-0.01]}),
    ...                              formats={"d": "{:+.1f}"}, labels={"acc": "accuracy %"})
    >>> shown["acc"].tolist(), shown["d"].tolist(), config["acc"]["label"]
    ([82.2], [0.0], 'accuracy %')
    """
    labels = dict(labels or {})
    config: dict = dict(labels)
    columns = {}
    for col in frame.columns:
        values = frame[col]
        fmt = (formats or {}).get(col, default)
        if not pd.api.types.is_float_dtype(values):
            columns[col] = values
            continue
        raw = values.to_numpy().tolist()
        fixed = _FIXED.match(fmt)
        if fixed is None or values.isna().any():
            columns[col] = [("—" if pd.isna(v) else fmt.format(v)) for v in raw]
            continue
        digits = "{:." + fixed.group(2) + "f}"
        columns[col] = [float(digits.format(v)) + 0.0 for v in raw]
        config[col] = st.column_config.NumberColumn(
            labels.get(col), format=f"%{fixed.group(1)}.{fixed.group(2)}f")
    return pd.DataFrame(columns, index=frame.index), config


def show_number_table(frame: pd.DataFrame, *, formats: Mapping[str, str] | None = None,
                      default: str = "{:.1f}", labels: Mapping[str, str] | None = None,
                      **kwargs) -> None:
    """``st.dataframe`` of :func:`number_table` (``kwargs`` go to ``st.dataframe``)."""
    shown, config = number_table(frame, formats=formats, default=default, labels=labels)
    st.dataframe(shown, column_config=config, **kwargs)


def table_height(n_rows: int) -> int:
    """Pixel height that shows ``n_rows`` rows of ``st.dataframe`` without scrolling."""
    return 38 + 35 * int(n_rows) + 2


def num_columns(frame: pd.DataFrame, fmt: str = "%.3f", *,
                signed: Sequence[str] = ("Δ", "gap", "t_omit", "t_fp", "gain")) -> dict:
    """``column_config`` printing every float column of ``frame`` with ``fmt``.

    Columns whose name starts with one of ``signed`` (gaps and their terms) print with a
    sign (``%+.3f``) whatever ``fmt`` is, so a gap always shows which side it is on.
    """
    digits = re.sub(r"[^0-9.]", "", fmt.split("f")[0]) or ".3"
    out = {}
    for col in frame.columns:
        if pd.api.types.is_float_dtype(frame[col]):
            sign = "+" if str(col).startswith(tuple(signed)) else ""
            out[col] = st.column_config.NumberColumn(format=f"%{sign}{digits}f")
    return out


def glossary_link() -> None:
    """A small link to the Glossary page (every page shows it under its introduction).

    Served from ``app.py`` the link is a page link; a page run on its own (``streamlit run
    pages/…``, AppTest of one page) has no such page registered, so it falls back to a plain
    relative link to the same URL.
    """
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link("pages/8_Glossary.py", label="Words used here: the glossary",
                     icon=":material/menu_book:")
    except StreamlitAPIException:
        st.markdown(":material/menu_book: [Words used here: the glossary](Glossary)")


def method_key(methods: Sequence[str], *, label: str = "What the short names mean") -> None:
    """An expander with one line per method: its short name and what it is, in words.

    A page shows it before the first widget or table that names the methods by their short
    names, so each is defined where it first appears (``tests/test_vocabulary.py``). A
    ``+SKIP`` variant is explained once, after its base methods; the GT-aided ceiling adds
    what GT means.
    """
    short, words = method_short(), method_words()
    bases = dict.fromkeys(m.removesuffix("_skip") for m in methods)
    lines = [f"- {short[m]} — {words[m]}" for m in bases]
    if any(m.endswith("_skip") for m in methods):
        lines.append("- +SKIP — a variant that may skip a question it is unsure of "
                     "(abstain) instead of answering.")
    if "source_reachability" in methods:
        lines.append("- GT — the ground truth, which only the GT-aided row is told.")
    with st.expander(label, icon=":material/abc:"):
        st.markdown("\n".join(lines))


#: The short forms and symbols a column title or a cell may show (as tests/test_vocabulary.py
#: finds them); only those a glossary term lists get a tooltip.
_SHORT_FORM = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα]\u0302?[*_A-Za-z]*"
                         r"|T_[a-z]+|q\*)")


def glossary_help(frame: pd.DataFrame, config: Mapping | None = None) -> dict:
    """``column_config`` with a glossary tooltip on every column whose title or text cells show
    a short form a glossary term lists ("M1", "H11", "σ*"), so it is defined where it first
    appears (``tests/test_vocabulary.py``). A column's own ``help`` is kept."""
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in (config or {}).items()}
    for col in frame.columns:
        cfg = out.get(col)
        cfg = {"label": cfg} if isinstance(cfg, str) else cfg  # a label alone
        if isinstance(cfg, Mapping) and cfg.get("help"):
            continue
        title = cfg.get("label") if isinstance(cfg, Mapping) and cfg.get("label") else str(col)
        cells = (frame[col].dropna().unique()[:200] if frame[col].dtype == object
                 or pd.api.types.is_string_dtype(frame[col]) else ())
        texts = [title, *(v for v in cells if isinstance(v, str))]
        terms = dict.fromkeys(t.name for text in texts for m in _SHORT_FORM.findall(text)
                              if (t := find(m.rstrip("_"))) is not None)
        if terms:
            out[col] = {**(cfg if isinstance(cfg, Mapping) else {}),
                        "help": " ".join(tip(name) for name in terms)}
    return out
