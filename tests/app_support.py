"""Small helpers shared by the AppTest modules."""

from __future__ import annotations

__all__ = ["plain"]


def plain(markdown: str) -> str:
    """A warning's markdown body without the backslashes and the invisible word joiners
    (U+2060, against bare-address links) that ``escape_markdown`` added."""
    return markdown.replace("\\", "").replace("\u2060", "")
