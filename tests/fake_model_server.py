"""Scripted model endpoints for tests, in a thread on 127.0.0.1 (standard library only).

``with FakeRerankServer() as server:`` binds a free port; ``server.url`` is its
``/rerank`` URL. Each ``POST`` is answered by the next step of ``server.script`` or, once
the script is spent, with scores: a text scores the number of words of ``server.favour``
it contains (so a test decides what the "model" prefers). The answer takes the shape of
the request: TEI (``{"query", "texts"}`` → ``[{"index", "score"}]``) or Jina / Cohere
(``{"documents", ...}`` → ``{"results": [{"index", "relevance_score"}]}``), best first.

``FakeEmbeddingsServer`` is an OpenAI-compatible ``/v1/embeddings`` endpoint
(``server.base_url`` ends in ``/v1``) whose model is :class:`~mnemolayer.testing.HashingEmbedder`:
``{"model", "input"}`` → ``{"data": [{"index", "embedding"}]}``, in reverse order (the
client must sort by index); ``server.dim`` truncates the vectors (a model of another
dimension behind the same name).

A step is a dict: ``{"status": 429, "headers": {"retry-after-ms": "10"}}`` (that status),
``{"raw": "..."}`` (HTTP 200 with that body), ``{"delay_s": 2.0}`` (wait, then score).
``server.requests`` logs ``{"path", "body", "authorization"}`` per request.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from mnemolayer.testing import HashingEmbedder


class ScriptedServer:
    """The plumbing: a script of steps, a log of requests, and :meth:`respond` for the
    rest (a subclass's model)."""

    path = "/"

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.url = self.origin + self.path
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def respond(self, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            step = self.script.pop(0) if self.script else {}
        if "status" in step:
            return step["status"], step.get("headers", {}), b'{"error": "scripted"}'
        if "raw" in step:
            return 200, {}, str(step["raw"]).encode()
        time.sleep(step.get("delay_s", 0.0))
        return 200, {}, json.dumps(self.respond(body)).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "body": body,
                            "authorization": self.headers.get("Authorization"),
                        }
                    )
                status, headers, payload = server._answer(body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


class FakeRerankServer(ScriptedServer):
    path = "/rerank"

    def __init__(self) -> None:
        super().__init__()
        self.favour: set[str] = set()

    def score(self, text: str) -> float:
        words = {w.strip(".,!?").lower() for w in text.split()}
        return float(len(words & self.favour))

    def respond(self, body: dict[str, Any]) -> Any:
        texts = body.get("texts", body.get("documents", []))
        ranked = sorted(((i, self.score(t)) for i, t in enumerate(texts)), key=lambda p: -p[1])
        if "documents" in body:
            ranked = ranked[: body.get("top_n", len(ranked))]
            return {"results": [{"index": i, "relevance_score": s} for i, s in ranked]}
        return [{"index": i, "score": s} for i, s in ranked]


class FakeEmbeddingsServer(ScriptedServer):
    path = "/v1/embeddings"

    def __init__(self) -> None:
        super().__init__()
        self.model = HashingEmbedder()
        self.base_url = self.origin + "/v1"
        self.dim: int | None = None

    def respond(self, body: dict[str, Any]) -> Any:
        texts = list(body["input"])
        vectors = self.model.embed(texts)[:, : self.dim]
        data = [
            {"object": "embedding", "index": i, "embedding": v.tolist()}
            for i, v in enumerate(vectors)
        ]
        return {"object": "list", "model": body.get("model"), "data": data[::-1]}
