"""Fixtures shared by the tests of the LLM clients (extractor and summariser).

Against the scripted server (``tests/fake_llm_server.py``, a subprocess on 127.0.0.1):

* ``server``: a :class:`FakeLLM` handle on one server process per test module;
* ``on_server``: builds an LLM client on that server and closes it after the test;
* ``no_proxy``: drops the proxy variables, so that loopback requests go straight out.

For the opt-in smoke tests against a real local model server:

* ``smoke_settings``: the server's settings from the environment; skips the test unless
  ``MNEMOLAYER_LLM_SMOKE=1`` and ``MNEMOLAYER_LLM_BASE_URL`` are set;
* ``on_smoke_server``: builds an LLM client on it whose fallback fails the test.

Nothing here imports the optional ``openai`` SDK: the test modules skip without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from pydantic import SecretStr

from mnemolayer.config import LLMSettings, settings_from_env

if TYPE_CHECKING:
    from mnemolayer.extract.base import Extraction
    from mnemolayer.text.tokens import TokenCounter

SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "fake_llm_server.py"
PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


# -- the scripted server ----------------------------------------------------------------------


class FakeLLM:
    """Handle on the server process: script it, read what it received."""

    def __init__(self, port: int) -> None:
        self.root = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.root}/v1"
        # No proxy, whatever the environment says: the server is on loopback.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def script(self, *steps: dict[str, Any], reject_response_format: bool = False) -> None:
        """Answer the next chat requests with ``steps``, in order; clear the request log."""
        body = {"script": list(steps), "reject_response_format": reject_response_format}
        self._call("POST", "/_control", body)

    def requests(self) -> list[dict[str, Any]]:
        """The chat requests since the last :meth:`script`: ``{"body", "authorization"}``."""
        result: list[dict[str, Any]] = self._call("GET", "/_requests")
        return result

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of :meth:`requests`."""
        return [r["body"] for r in self.requests()]

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.root + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with self._opener.open(request, timeout=5) as response:
            return json.loads(response.read())


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLM]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints READY <port> once bound
        assert line.startswith("READY "), f"fake server did not start: {line!r}"
        yield FakeLLM(int(line.split()[1]))
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PROXY_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def on_server(server: FakeLLM) -> Iterator[Callable[..., Any]]:
    """``on_server(cls, timeout_s=3.0, max_retries=0, base_url=None, **kwargs)`` →
    ``cls(settings, **kwargs)`` with model ``fake-model`` and key ``sk-test`` on the fake
    server (or at ``base_url``); closed after the test."""
    made: list[Any] = []

    def build(
        cls: Callable[..., Any],
        *,
        timeout_s: float = 3.0,
        max_retries: int = 0,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> Any:
        settings = LLMSettings(
            base_url=base_url or server.base_url,
            model="fake-model",
            api_key=SecretStr("sk-test"),
            timeout_s=timeout_s,
            max_retries=max_retries,
        )
        client = cls(settings, **kwargs)
        made.append(client)
        return client

    yield build
    for client in made:
        client.close()


# -- the opt-in smoke tests ---------------------------------------------------------------------


class FailingFallback:
    """A fallback extractor and summariser that fails the test, with the model's error
    (``client.last_error``) in the message."""

    name = "failing-fallback"

    def __init__(self) -> None:
        self.client: Any = None  # the LLMExtractor or LLMSummarizer it stands behind

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        self._fail()

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        self._fail()

    def _fail(self) -> NoReturn:
        error = self.client.last_error if self.client else None
        pytest.fail(f"the model's answer was not usable: {error}")


@pytest.fixture(scope="module")
def smoke_settings() -> LLMSettings:
    """The local model server's settings from ``MNEMOLAYER_LLM_*``, without retries;
    ``MNEMOLAYER_LLM_MODEL`` defaults to ``local`` and ``MNEMOLAYER_LLM_TIMEOUT`` to 180 s."""
    if os.environ.get("MNEMOLAYER_LLM_SMOKE") != "1" or not os.environ.get(
        "MNEMOLAYER_LLM_BASE_URL"
    ):
        pytest.skip(
            "opt-in: set MNEMOLAYER_LLM_SMOKE=1 and MNEMOLAYER_LLM_BASE_URL to a local model server"
        )
    env = dict(os.environ)
    env.setdefault("MNEMOLAYER_LLM_MODEL", "local")
    env.setdefault("MNEMOLAYER_LLM_TIMEOUT", "180")
    llm = settings_from_env(env).llm
    assert llm is not None
    return llm.model_copy(update={"max_retries": 0})


@pytest.fixture
def on_smoke_server(smoke_settings: LLMSettings) -> Callable[..., Any]:
    """``on_smoke_server(cls, **kwargs)`` → ``cls(smoke_settings, fallback=…, **kwargs)``
    with a :class:`FailingFallback`, so that any failure of the model fails the test."""

    def build(cls: Callable[..., Any], **kwargs: Any) -> Any:
        fallback = FailingFallback()
        client = cls(smoke_settings, fallback=fallback, **kwargs)
        fallback.client = client
        return client

    return build
