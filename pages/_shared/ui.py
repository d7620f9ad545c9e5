"""Small presentation helpers shared by the pages (colours, chips, CSV bytes)."""

from __future__ import annotations

import html

import pandas as pd

from core.figures.style import LATENT_COLOR, SOURCE_COLORS
from core.testbed.questions import SOURCE_LABELS

__all__ = ["csv_bytes", "plotly_config", "source_chip"]


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
