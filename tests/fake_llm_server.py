"""A scripted OpenAI-compatible chat server for tests (standard library only).

Run it as its own process::

    python tests/fake_llm_server.py [--host 127.0.0.1] [--port 0]

It binds (port 0: a free port chosen by the OS), prints ``READY <port>`` on a line of its
own to stdout, and serves until killed:

``POST /v1/chat/completions``
    Answers with the next step of the script (below), or, once the script is spent, with
    HTTP 400 ``"no scripted response left"``, so an unexpected request fails loudly.
``GET /v1/models``
    One model, ``fake-model``.
``POST /_control``
    Body ``{"script": [STEP, ...], "reject_response_format": false}``: replaces the
    script and clears the request log. With ``reject_response_format`` true, any chat
    request carrying ``response_format`` gets HTTP 400 (as some local servers do),
    without using up a step.
``GET /_requests``
    The chat requests received since the last ``/_control``, oldest first: a list of
    ``{"body": <the request's JSON>, "authorization": <header or null>}``.

A ``STEP`` is a JSON object:

``{"content": "..."}``
    HTTP 200 with a chat completion whose message content is that text.
``{"status": 500, "error": "..."}``
    That HTTP status with an OpenAI-style error body.
Optional in either: ``"delay_s": 2.5`` (wait before answering; the client may time out
meanwhile) and ``"headers": {"retry-after-ms": "20"}`` (extra response headers).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-model"


class ScriptState:
    """The script and the request log, shared by the handler threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.script: list[dict[str, Any]] = []
        self.reject_response_format = False
        self.requests: list[dict[str, Any]] = []
        self.served = 0

    def reset(self, script: list[dict[str, Any]], reject_response_format: bool) -> None:
        with self.lock:
            self.script = list(script)
            self.reject_response_format = reject_response_format
            self.requests = []

    def next_step(self, body: dict[str, Any], authorization: str | None) -> dict[str, Any]:
        """Log the request and return the step that answers it."""
        with self.lock:
            self.requests.append({"body": body, "authorization": authorization})
            if self.reject_response_format and "response_format" in body:
                return {"status": 400, "error": "response_format is not supported"}
            if not self.script:
                return {"status": 400, "error": "no scripted response left"}
            self.served += 1
            return self.script.pop(0)


STATE = ScriptState()


class Handler(BaseHTTPRequestHandler):
    server_version = "FakeLLM/1.0"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:
        if self.path == "/_requests":
            with STATE.lock:
                payload: Any = list(STATE.requests)
            self._json(200, payload)
        elif self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, _error("not found", "not_found"))

    def do_POST(self) -> None:
        try:
            body = json.loads(self._read_body() or b"{}")
        except ValueError:
            self._json(400, _error("request body is not JSON", "invalid_request_error"))
            return
        if self.path == "/_control":
            STATE.reset(body.get("script", []), bool(body.get("reject_response_format")))
            self._json(200, {"ok": True})
        elif self.path.rstrip("/").endswith("/chat/completions"):
            self._chat(body)
        else:
            self._json(404, _error("not found", "not_found"))

    def _chat(self, body: dict[str, Any]) -> None:
        step = STATE.next_step(body, self.headers.get("Authorization"))
        time.sleep(float(step.get("delay_s", 0)))
        headers = {str(k): str(v) for k, v in step.get("headers", {}).items()}
        status = int(step.get("status", 200))
        if status != 200:
            self._json(status, _error(str(step.get("error", "error")), "server_error"), headers)
            return
        completion = {
            "id": f"chatcmpl-fake-{STATE.served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", MODEL),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.get("content", "")},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        self._json(200, completion, headers)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nothing left to answer.
            self.close_connection = True


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
