"""A fake OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1 for the ``core.llm`` tests.

The server answers each request with the next behaviour of ``script`` (then ``default``):

* ``"good"``: a valid reply of the task the request asks for (answering when it has a system
  message, extraction otherwise); labels are picked from a hash of the user message, so that
  different personas get different, reproducible replies (:func:`good_reply`);
* ``"fenced"``: the good reply inside a Markdown ```json fence;
* ``"malformed"``: a completion whose content is not JSON;
* ``"schema"``: JSON of the wrong shape (an answer outside the answer space);
* ``"empty"``: a completion with empty content;
* ``"429"`` / ``"500"`` / ``"400"``: that HTTP status (429 with ``Retry-After: 0``);
* ``"401echo"``: HTTP 401 whose error message echoes the request's Authorization header;
* ``"slow"``: the good reply after ``slow_seconds``;
* ``"echo"``: HTTP 200 whose content (invalid for the task) echoes the Authorization header;
* ``"huge"``: HTTP 200 with a 5 MiB completion.

It records every request (headers and JSON body) and the most requests in flight at once
(``delay`` seconds are spent inside each request to make overlaps observable).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.testbed.questions import QIDS, QUESTIONS, SOURCES


def good_reply(system: str, user: str) -> dict:
    """The valid reply the fake model gives to (system, user)."""
    h = hashlib.sha256(user.encode()).digest()
    if system:
        return {"answers": {q.qid: {"answer": q.labels[h[i] % q.k], "would_skip": bool(h[i] & 1)}
                            for i, q in enumerate(QUESTIONS)}}
    return {q.qid: {s: (q.labels[h[i] % q.k] if s in q.informative else None) for s in SOURCES}
            for i, q in enumerate(QUESTIONS)}


def _completion(content: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": content},
                                    "finish_reason": "stop"}]}).encode()


class FakeChat:
    """Start with :meth:`start`, stop with :meth:`stop`; ``base_url`` ends in ``/v1``."""

    def __init__(self) -> None:
        self.script: list[str] = []
        self.default = "good"
        self.delay = 0.0
        self.slow_seconds = 2.0
        self.requests: list[dict] = []
        self.inflight = self.max_inflight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle
    def start(self) -> FakeChat:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                fake._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.handle_error = lambda request, address: None  # a client that hung up
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def n(self) -> int:
        return len(self.requests)

    # -- one request
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", "0"))) or b"{}")
        with self._lock:
            self.requests.append({"path": h.path, "auth": h.headers.get("Authorization"),
                                  "body": body})
            mode = self.script.pop(0) if self.script else self.default
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
        try:
            time.sleep(self.delay)
        finally:
            # a request stops counting as in flight before its reply is sent: counted after,
            # a client that read its reply and sent the next request could be seen twice
            # (max_inflight 4 for a bound of 3 under load)
            with self._lock:
                self.inflight -= 1
        self._reply(h, mode, body)

    def _reply(self, h: BaseHTTPRequestHandler, mode: str, body: dict) -> None:
        msgs = body.get("messages", [])
        system = next((m["content"] for m in msgs if m["role"] == "system"), "")
        user = next((m["content"] for m in msgs if m["role"] == "user"), "")
        if h.path != "/v1/chat/completions":
            return self._send(h, 404, b'{"error": {"message": "no such route"}}')
        if mode in ("429", "500", "400"):
            extra = {"Retry-After": "0"} if mode == "429" else {}
            return self._send(h, int(mode), b'{"error": {"message": "try later"}}', extra)
        if mode == "401echo":
            msg = json.dumps({"error": {"message": f"bad key {h.headers.get('Authorization')}"}})
            return self._send(h, 401, msg.encode())
        if mode == "slow":
            time.sleep(self.slow_seconds)
        if mode == "echo":
            echoed = json.dumps({"A1": f"you sent {h.headers.get('Authorization')}"})
            return self._send(h, 200, _completion(echoed))
        if mode == "huge":
            return self._send(h, 200, _completion("x" * (5 * 2**20)))
        good = json.dumps(good_reply(system, user))
        content = {"good": good, "slow": good, "fenced": f"```json\n{good}\n```",
                   "malformed": '{"answers": {"A1": ', "empty": "",
                   "schema": json.dumps({"answers": {q: {"answer": "maybe", "would_skip": False}
                                                     for q in QIDS}}
                                        if system else {"A1": "20_or_more"})}[mode]
        self._send(h, 200, _completion(content))

    @staticmethod
    def _send(h, status: int, payload: bytes, headers: dict | None = None) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(payload)
        except OSError:  # the client timed out and hung up
            pass
