"""Fuzz the REST server from its own OpenAPI schema with schemathesis.

A real multi-tenant server process (:func:`rest_server.start_with_tenants`) is loaded
through its ``/openapi.json``; every operation gets generated requests, valid ones
(positive mode) and invalid ones (negative mode), all with keys of tenant ``acme``
(tenant A): its tenant-wide key, and its admin key for ``/v1/admin``. Tenant ``globex``
(tenant B) is seeded first with memories, facts, an outcome and a working-memory window
holding distinctive strings.

Every response must pass these schemathesis checks:

* ``not_a_server_error``: no 5xx (and the server log shows no traceback);
* ``status_code_conformance``: the status is one the operation declares;
* ``content_type_conformance``: the content type is one the operation declares;
* ``response_schema_conformance``: the body validates against the declared schema;
* ``negative_data_rejection``: a request that violates the schema is answered 4xx;

and one of ours: no response body contains any of globex's seeded strings (unless the
request itself carried it, as a 404 message may echo a path value). Left out:
``positive_data_acceptance`` (a valid request may rightly get 404 for a random id or
422 from the library, e.g. for blank text), ``response_headers_conformance`` (no
headers declared), and the stateful checks (the schema declares no links).

Random path values would nearly always name nothing, so a share of the generated
requests take their path parameters from the seeded data: acme's own user, memory,
session, message and entity (so 200 responses carry real records to check against
their schemas) or globex's (which must stay invisible to acme's keys).

Run alone, with the request counts printed::

    .venv/bin/python -m pytest tests/e2e/rest/test_schemathesis.py -q -s -p no:randomly
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_server import Server, start_with_tenants
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

#: Generated examples per operation and generation mode (Hypothesis stops earlier for
#: an operation whose inputs are all fixed, such as ``GET /v1/whoami``). A deeper run:
#: ``MNEMOLAYER_FUZZ_EXAMPLES=200``; ``MNEMOLAYER_FUZZ_RANDOM=1`` draws new cases each run
#: instead of the same derandomized ones.
MAX_EXAMPLES = int(os.environ.get("MNEMOLAYER_FUZZ_EXAMPLES", "12"))
RANDOM = os.environ.get("MNEMOLAYER_FUZZ_RANDOM") == "1"
MIN_REQUESTS = 500

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

#: Strings that only tenant globex's data contains (matched case-insensitively).
SECRETS = ("Quorvexta", "Zimbrudel", "plutonium-7731", "Vexnorica", "Oblangor")
SECRETS_LOWER = tuple(s.lower() for s in SECRETS)


@dataclass
class Seeded:
    """The path values of one tenant's seeded user ``alice``."""

    memory_id: str
    session_id: str
    message_id: str
    entity: str
    key_id: str

    def path_parameters(self, user_id: str = "alice") -> dict[str, str]:
        return {
            "user_id": user_id,
            "memory_id": self.memory_id,
            "session_id": self.session_id,
            "message_id": self.message_id,
            "name": self.entity,
            "key_id": self.key_id,
        }


def _seed(api: httpx.Client, key_id: str, texts: tuple[str, ...], entity: str) -> Seeded:
    memory_ids = []
    for text in texts:
        resp = api.post("/v1/users/alice/memories", json={"content": text, "session_id": "s1"})
        assert resp.status_code == 201, resp.text
        memory_ids.append(resp.json()["items"][0]["id"])
    resp = api.post(
        "/v1/users/alice/outcomes",
        json={"task": f"{texts[0]} task", "strategy": "ask twice", "success": True},
    )
    assert resp.status_code == 201, resp.text
    resp = api.post(
        "/v1/users/alice/sessions/s1/window/messages",
        json={"role": "user", "content": texts[-1], "pin": True},
    )
    assert resp.status_code == 201, resp.text
    message_id = resp.json()["message"]["id"]
    facts = api.get("/v1/users/alice/facts").json()["facts"]
    assert facts, "the rules extractor found no fact in the seeded texts"
    return Seeded(memory_ids[0], "s1", message_id, entity, key_id)


@dataclass
class Tally:
    """Requests sent, per operation and status; failures per operation."""

    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_with_tenants(tmp_path_factory.mktemp("fuzz"))
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()


def _key_id(key: str) -> str:
    # Keys read msk_<id>_<secret>.
    return key.split("_")[1]


def _fuzz(
    label: str,
    strategy: st.SearchStrategy[Any],
    session: requests.Session,
    tally: Tally,
) -> None:
    """Send up to ``2 * MAX_EXAMPLES`` generated requests of one operation and check each
    response; Hypothesis shrinks and re-raises the first failure."""

    @settings(
        max_examples=MAX_EXAMPLES * 2,
        deadline=None,
        database=None,
        derandomize=not RANDOM,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        response = case.call(session=session, timeout=30)
        tally.requests[label] += 1
        tally.statuses[response.status_code] += 1
        # A secret the request itself carried (a globex entity name as a path value)
        # may come back in a 404 message: that is an echo, not a leak.
        sent = json.dumps(
            [case.formatted_path, case.query, case.body], default=str, ensure_ascii=False
        ).lower()
        body = response.text.lower()
        leaked = [s for s in SECRETS_LOWER if s in body and s not in sent]
        assert not leaked, (
            f"{label}: response {response.status_code} shows globex's {leaked}\n"
            f"{case.as_curl_command()}\n{response.text[:500]}"
        )
        case.validate_response(response, checks=CHECKS)

    run()


def _strategies(operation: Any, variants: list[dict[str, str]], key: str) -> st.SearchStrategy[Any]:
    """Cases of ``operation``, positive and negative, sent with ``key``; for each variant,
    path parameters named there are fixed and the rest generated."""
    names = {p.name for p in operation.path_parameters}
    headers = {"Authorization": f"Bearer {key}"}
    found = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        for variant in variants if names else [{}]:
            fixed = {k: v for k, v in variant.items() if k in names} or None
            found.append(operation.as_strategy(mode, path_parameters=fixed, headers=headers))
    return st.one_of(found)


def test_fuzz_openapi(fuzz_server: Server) -> None:
    srv = fuzz_server
    globex = _seed(
        srv.as_("globex"),
        _key_id(srv.keys["globex"]),
        (
            "I live in Quorvexta and my passport code is plutonium-7731.",
            "I work at Vexnorica. My cat is called Zimbrudel.",
            "Remember that the vault phrase is Oblangor.",
        ),
        entity="Quorvexta",
    )
    acme = _seed(
        srv.as_("acme"),
        _key_id(srv.keys["acme"]),
        ("I live in Lisbon and I like green tea.", "I work at Initech. My dog is Rex."),
        entity="Lisbon",
    )
    resp = srv.as_("acme").post(
        "/v1/users/bob/memories", json={"content": "Bob likes jazz", "session_id": "s1"}
    )
    assert resp.status_code == 201, resp.text

    schema = schemathesis.openapi.from_url(f"{srv.url}/openapi.json")
    schema.config.update(base_url=srv.url)
    # Each case carries acme's key (below): generate no Authorization / X-API-Key values.
    schema.config.generation.update(with_security_parameters=False)
    variants = [{}, acme.path_parameters(), acme.path_parameters("bob"), globex.path_parameters()]
    # Admin routes get acme's admin key, and globex's key id to revoke (never acme's own).
    admin_variants = [{}, {"key_id": globex.key_id}]

    session = requests.Session()
    session.trust_env = False  # loopback: never through a proxy from the environment
    tally = Tally()
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.startswith("/v1/admin"):
            strategy = _strategies(operation, admin_variants, srv.keys["acme_admin"])
        else:
            strategy = _strategies(operation, variants, srv.keys["acme"])
        try:
            _fuzz(operation.label, strategy, session, tally)
        except (Exception, BaseExceptionGroup) as exc:  # FailureGroup is a BaseExceptionGroup
            tally.failures[operation.label] = f"{type(exc).__name__}: {exc}"
    elapsed = time.monotonic() - started

    total = sum(tally.requests.values())
    print(
        f"\nschemathesis {schemathesis.__version__}: {total} requests over "
        f"{len(tally.requests)} operations in {elapsed:.1f} s"
    )
    print("statuses:", dict(sorted(tally.statuses.items())))
    for label, count in sorted(tally.requests.items()):
        print(f"  {count:4d}  {label}")
    assert not tally.failures, "\n\n".join(f"{k}\n{v}" for k, v in tally.failures.items())
    assert total >= MIN_REQUESTS
    assert not [status for status in tally.statuses if status >= 500]


#: Requests the fuzzer found the server accepting against its schema (a JSON boolean or
#: number read as a float or as Unix seconds); each is now a 422 naming the field.
LENIENT = [
    ("POST", "/search", {"json": {"query": "tea", "threshold": False}}, "threshold"),
    ("POST", "/search", {"json": {"query": "tea", "limit": True}}, "limit"),
    ("POST", "/memories", {"json": {"content": "x", "importance": "0.5"}}, "importance"),
    ("POST", "/memories", {"json": {"content": "x", "timestamp": 3}}, "timestamp"),
    (
        "POST",
        "/outcomes",
        {"json": {"task": "t", "strategy": "s", "success": False, "timestamp": 3}},
        "timestamp",
    ),
    ("GET", "/facts", {"params": {"as_of": "515961"}}, "as_of"),
    (
        "POST",
        "/sessions/s/window/messages",
        {"json": {"role": "user", "content": "x", "pin": 1}},
        "pin",
    ),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "field_name"), LENIENT)
def test_found_leniencies_are_rejected(
    fuzz_server: Server, method: str, path: str, kwargs: dict[str, Any], field_name: str
) -> None:
    resp = fuzz_server.as_("acme").request(method, f"/v1/users/carol{path}", **kwargs)
    assert resp.status_code == 422, resp.text
    assert resp.json()["error"]["field"] == field_name
