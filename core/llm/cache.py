"""On-disk cache of chat calls, keyed by SHA-256 of (model, system prompt, user prompt).

Seed 000 §9.7: "calls are deterministically cached by SHA256(model | system_prompt |
user_prompt) and replayed from disk". The three strings are hashed as the UTF-8 JSON array
``[model, system, user]`` so that no separator inside a prompt can make two calls collide.
One file per call, ``<dir>/<key[:2]>/<key>.json`` holding ``{"key", "model", "reply"}`` (the
reply's text, never the request's headers or the API key). Writes go to a temporary file
that is renamed into place, so a reader sees a whole entry or none, also with several
threads or processes writing the same key.

Invariant (tested): ``get(k)`` after ``put(k, r)`` returns ``r``; a corrupt entry reads as a
miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["DEFAULT_CACHE_DIR", "CallCache", "cache_key"]

#: the default cache folder (git-ignored)
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[2] / "data" / "llm_cache"


def cache_key(model: str, system: str, user: str) -> str:
    """Hex SHA-256 of the JSON array ``[model, system, user]``."""
    blob = json.dumps([model, system, user], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    """The folder of cached replies (created on the first write, never on a read)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"CallCache({str(self.folder)!r})"

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives."""
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"a cache key is 64 lowercase hex digits, got {key[:70]!r}")
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The cached reply of ``key``, or None (missing or unreadable entry)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        reply = data.get("reply") if isinstance(data, dict) else None
        return reply if isinstance(reply, str) and data.get("key") == key else None

    def put(self, key: str, reply: str, *, model: str) -> None:
        """Store ``reply`` under ``key`` atomically."""
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "model": model, "reply": reply}, fh, ensure_ascii=False)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
