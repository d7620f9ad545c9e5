"""Small helpers shared by the AppTest modules."""

from __future__ import annotations

__all__ = ["plain"]


def plain(markdown: str) -> str:
    """A warning's markdown body without the backslashes ``escape_markdown`` added."""
    return markdown.replace("\\", "")
