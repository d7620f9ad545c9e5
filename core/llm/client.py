"""A minimal OpenAI-compatible chat client on the standard library (``urllib.request``).

The endpoint comes from the environment only: ``ARBITER_LLM_BASE_URL`` (e.g.
``https://api.openai.com/v1``; the client posts to ``<base>/chat/completions``),
``ARBITER_LLM_MODEL`` and ``ARBITER_LLM_API_KEY`` (sent as ``Authorization: Bearer``). The
request follows seed 000 §9.7: ``temperature = 0``, no other decoding parameter.

Failures raise :class:`CallError` with a ``reason``: ``"timeout"``, ``"http_status"``,
``"network"``, ``"empty_reply"`` or ``"bad_response"``. HTTP 429 and 5xx, timeouts, network
errors and empty replies are retried with exponential backoff (``backoff · 2^attempt``
seconds, at most ``max_delay``; a numeric ``Retry-After`` header is honoured up to the same
cap), at most ``retries`` times (§9.7 uses 6 attempts: the default). Other statuses fail at
once.

Invariant (tested): the API key never appears in a ``repr``, an exception message or a
detail; any text that comes back from the server is redacted before it is kept. Loopback
endpoints (127.0.0.1, localhost, ::1) bypass any proxy of the environment.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["ENV_BASE_URL", "ENV_KEY", "ENV_MODEL", "CallError", "ChatClient", "ConfigError",
           "Endpoint", "endpoint_from_env"]

ENV_BASE_URL = "ARBITER_LLM_BASE_URL"
ENV_MODEL = "ARBITER_LLM_MODEL"
ENV_KEY = "ARBITER_LLM_API_KEY"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: A reply larger than this is refused while it is read (a whole persona's extraction is
#: about 10 KB; a 300 MB reply once took 963 MB of memory).
MAX_REPLY_BYTES = 4 * 1024 * 1024


class ConfigError(ValueError):
    """The environment does not name a usable endpoint (one line, names the variables)."""


class CallError(RuntimeError):
    """One chat call failed for good; ``reason`` is a short code, ``detail`` one line."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Endpoint:
    """Where calls go. The key is kept out of ``repr`` and of every message."""

    base_url: str
    model: str
    api_key: str = field(repr=False)

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.base_url)
        try:
            parts.port  # noqa: B018 - urllib checks the port only when asked
        except ValueError:
            raise ConfigError(f"{ENV_BASE_URL} has a port outside 0-65535") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{ENV_BASE_URL} must be an http(s) URL, got "
                              f"{self.shown_url()!r}")
        if not self.model:
            raise ConfigError(f"{ENV_MODEL} is empty")

    def shown_url(self) -> str:
        """The base URL without any user:password part (safe to print)."""
        parts = urllib.parse.urlsplit(self.base_url)
        host = parts.hostname or ""
        netloc = host + (f":{parts.port}" if parts.port else "")
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    def redact(self, text: str) -> str:
        """``text`` with the key (and the URL's credentials) replaced by ``***``."""
        for secret in (self.api_key, urllib.parse.urlsplit(self.base_url).password):
            if secret:
                text = text.replace(secret, "***")
        return text


def endpoint_from_env(environ: Mapping[str, str] | None = None, *,
                      offline: bool = False) -> Endpoint:
    """The endpoint named by the environment (``ConfigError`` naming what is missing).

    With ``offline=True`` only the model is needed (it is part of every cache key); the URL
    and the key are then placeholders and no call may be made.
    """
    env = os.environ if environ is None else environ
    need = (ENV_MODEL,) if offline else (ENV_BASE_URL, ENV_MODEL, ENV_KEY)
    missing = [v for v in need if not env.get(v, "").strip()]
    if missing:
        mode = "--offline replay" if offline else "a live run"
        raise ConfigError(f"set {', '.join(missing)} for {mode} (see docs/prose.md)")
    if offline:
        return Endpoint("http://offline.invalid", env[ENV_MODEL].strip(), "")
    return Endpoint(env[ENV_BASE_URL].strip(), env[ENV_MODEL].strip(), env[ENV_KEY].strip())


class ChatClient:
    """Posts one chat completion at a time; safe to share between threads.

    Parameters
    ----------
    endpoint : where to call.
    timeout : seconds per attempt (> 0).
    retries : extra attempts after a retryable failure (0–10).
    backoff, max_delay : the first delay and the cap of the exponential backoff, in seconds.
    sleep : the function that waits (tests pass a recorder).
    """

    def __init__(self, endpoint: Endpoint, *, timeout: float = 120.0, retries: int = 5,
                 backoff: float = 1.0, max_delay: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        if not 0 <= retries <= 10:
            raise ValueError(f"retries must be in [0, 10], got {retries!r}")
        if not (backoff >= 0 and max_delay >= 0):
            raise ValueError(f"backoff and max_delay must be >= 0, got {backoff!r}, "
                             f"{max_delay!r}")
        self.endpoint = endpoint
        self.timeout, self.retries = float(timeout), int(retries)
        self.backoff, self.max_delay, self._sleep = float(backoff), float(max_delay), sleep
        self.url = endpoint.base_url.rstrip("/") + "/chat/completions"
        host = urllib.parse.urlsplit(self.url).hostname
        self._proxies = {} if host in _LOOPBACK else None

    def __repr__(self) -> str:
        return (f"ChatClient(url={self.endpoint.shown_url()!r}, model={self.endpoint.model!r}, "
                f"timeout={self.timeout}, retries={self.retries})")

    def _request(self, system: str, user: str) -> urllib.request.Request:
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": user}]
        body = json.dumps({"model": self.endpoint.model, "messages": messages,
                           "temperature": 0}).encode("utf-8")
        return urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json",
            "Authorization": f"Bearer {self.endpoint.api_key}"})

    def _once(self, system: str, user: str) -> tuple[str | None, CallError | None, float]:
        """One attempt: (reply, None, 0) or (None, error, retry_after or -1 if final)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler(self._proxies))
        try:
            with opener.open(self._request(system, user), timeout=self.timeout) as resp:
                raw = resp.read(MAX_REPLY_BYTES + 1)
            if len(raw) > MAX_REPLY_BYTES:
                return None, CallError("too_large", f"the reply is larger than "
                                                    f"{MAX_REPLY_BYTES // 2**20} MiB"), -1
        except urllib.error.HTTPError as exc:
            code = exc.code
            detail = f"HTTP {code}" + self._server_message(exc)
            exc.close()
            retry = code == 429 or code >= 500
            return None, CallError("http_status", detail), (_retry_after(exc) if retry else -1)
        except TimeoutError:
            return None, CallError("timeout", f"no reply within {self.timeout:g} s"), 0.0
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                return None, CallError("timeout", f"no reply within {self.timeout:g} s"), 0.0
            reason = self.endpoint.redact(str(exc.reason))[:120]
            return None, CallError("network", reason), 0.0
        except (OSError, ValueError, http.client.HTTPException) as exc:  # resets, cut bodies
            return None, CallError("network", self.endpoint.redact(type(exc).__name__)), 0.0
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return None, CallError("bad_response", "the reply is not a chat completion"), -1
        if not isinstance(content, str) or not content.strip():
            return None, CallError("empty_reply", "the completion has no content"), 0.0
        # redacted before anyone caches, writes or prints it: an endpoint may echo the key
        return self.endpoint.redact(content), None, 0.0

    def _server_message(self, exc: urllib.error.HTTPError) -> str:
        try:
            data = json.loads(exc.read(4096) or b"null")
            msg = data["error"]["message"] if isinstance(data.get("error"), dict) \
                else data.get("error")
        except Exception:  # noqa: BLE001 - any unreadable error body is just not shown
            return ""
        if not isinstance(msg, str) or not msg.strip():
            return ""
        return ": " + self.endpoint.redact(" ".join(msg.split()))[:120]

    def complete(self, system: str, user: str) -> str:
        """The reply text of one call, after at most ``retries`` retries (``CallError``)."""
        attempt = 0
        while True:
            reply, error, retry_after = self._once(system, user)
            if error is None:
                return reply
            if retry_after < 0 or attempt >= self.retries:
                if attempt:
                    raise CallError(error.reason, f"{error.detail} (after {attempt + 1} "
                                                  "attempts)")
                raise error
            delay = max(self.backoff * 2 ** attempt, retry_after)
            self._sleep(min(delay, self.max_delay))
            attempt += 1


def _retry_after(exc: urllib.error.HTTPError) -> float:
    try:
        return max(0.0, float(exc.headers.get("Retry-After", "0")))
    except (TypeError, ValueError):
        return 0.0
