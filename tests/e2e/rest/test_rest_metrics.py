"""``GET /metrics`` of a real multi-tenant server process (docs/observability.md).

The exposition is read with prometheus_client's own text parser. The server is the
module's one process (tenants ``acme`` and ``globex``, keys in ``server.keys``); the
tests run in file order and each compares two scrapes, so they stay independent of
what the others sent.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from rest_server import Server, start

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]

MEMORIES = "/v1/users/{user_id}/memories"
SEARCH = "/v1/users/{user_id}/search"


def scrape(server: Server) -> tuple[Samples, str]:
    """Every sample of one scrape (``name → labels → value``) and the raw text."""
    response = server.as_("operator").get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples: Samples = defaultdict(dict)
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return samples, response.text


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)


def routes(samples: Samples) -> set[str]:
    return {dict(k)["route"] for k in samples["mnemolayer_http_requests_total"]}


def test_metrics_need_the_operators_key(server: Server) -> None:
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    for name in ("acme", "acme_admin", "globex_admin"):  # tenants' keys, admins included
        response = server.as_(name).get("/metrics")
        assert response.status_code == 403, name
        assert response.json()["error"]["type"] == "forbidden"
    assert server.as_("operator").get("/metrics").status_code == 200
    # Not part of the API that clients are generated from.
    assert "/metrics" not in server.client().get("/openapi.json").json()["paths"]


def test_counts_and_latencies_go_up_per_request_under_the_route_template(server: Server) -> None:
    before, _ = scrape(server)
    acme = server.as_("acme")
    for user in ("alice", "bob", "carol"):
        assert acme.post(f"/v1/users/{user}/memories", json={"content": "I like tea"}).is_success
    assert acme.post("/v1/users/alice/search", json={"query": "tea"}).status_code == 200
    assert acme.post("/v1/users/alice/search", json={"query": " "}).status_code == 422
    after, text = scrape(server)

    def delta(name: str, route: str, method: str, status: str) -> float:
        labels = {"method": method, "route": route, "status": status}
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("mnemolayer_http_requests_total", MEMORIES, "POST", "201") == 3
    assert delta("mnemolayer_http_requests_total", SEARCH, "POST", "200") == 1
    assert delta("mnemolayer_http_requests_total", SEARCH, "POST", "422") == 1
    assert delta("mnemolayer_http_request_duration_seconds_count", MEMORIES, "POST", "201") == 3
    assert delta("mnemolayer_http_request_duration_seconds_sum", MEMORIES, "POST", "201") > 0
    buckets = {
        dict(k)["le"]: v
        for k, v in after["mnemolayer_http_request_duration_seconds_bucket"].items()
        if ("route", SEARCH) in k and ("status", "200") in k
    }
    assert buckets["+Inf"] == value(
        after, "mnemolayer_http_request_duration_seconds_count",
        method="POST", route=SEARCH, status="200",
    )  # fmt: skip
    assert "0.005" in buckets and "60.0" in buckets
    # The scrape itself is in flight while it is served; nothing else is.
    assert value(after, "mnemolayer_http_requests_in_flight") == 1
    # Templates only: no user id, tenant name or raw path in any label.
    for word in ("alice", "bob", "carol", "acme", "globex", "/v1/users/alice"):
        assert word not in text, word


def test_unknown_paths_and_methods_add_no_label_values(server: Server) -> None:
    before, _ = scrape(server)
    client = server.client()
    for _ in range(40):
        assert client.get(f"/{uuid.uuid4().hex}/{uuid.uuid4().hex}").status_code == 404
    assert client.request("BREW", "/v1/whoami").status_code in (401, 405)
    after, _ = scrape(server)
    added = routes(after) - routes(before)
    assert added <= {"unmatched", "/v1/whoami"}, added
    assert (
        value(after, "mnemolayer_http_requests_total", method="GET", route="unmatched", status="404")
        - value(before, "mnemolayer_http_requests_total", method="GET", route="unmatched", status="404")
        == 40
    )  # fmt: skip
    methods = {dict(k)["method"] for k in after["mnemolayer_http_requests_total"]}
    assert "BREW" not in methods and "other" in methods
    paths = client.get("/openapi.json").json()["paths"]
    served = set(paths) | {"/metrics", "/ui", "unmatched"}
    assert routes(after) <= served, routes(after) - served


def test_store_gauges_sum_the_open_stores(server: Server) -> None:
    globex = server.as_("globex")
    assert globex.post("/v1/users/u/memories", json={"content": "hello"}).status_code == 201
    tenants = server.as_("operator").get("/v1/admin/tenants").json()  # opens every store
    assert {t["tenant"] for t in tenants["tenants"]} >= {"acme", "globex"}
    samples, _ = scrape(server)
    assert value(samples, "mnemolayer_open_stores") == len(tenants["tenants"])
    assert value(samples, "mnemolayer_store_bytes") == sum(t["bytes"] for t in tenants["tenants"])
    assert value(samples, "mnemolayer_store_bytes") > 0
    for kind in ("embedding", "extraction"):
        assert value(samples, "mnemolayer_pending_enrichments", kind=kind) == sum(
            t["pending"][kind] for t in tenants["tenants"]
        )
    assert value(samples, "process_resident_memory_bytes") > 0


def test_no_metrics_serves_no_route(tmp_path: Path) -> None:
    single = start(tmp_path, "--db", str(tmp_path / "memory.db"), "--no-metrics")
    try:
        assert single.client().get("/metrics").status_code == 404
        assert single.client().get("/healthz").status_code == 200
    finally:
        single.stop()
    assert "Traceback" not in single.log_text()


def test_single_user_mode_serves_metrics_without_a_key(tmp_path: Path) -> None:
    single = start(tmp_path, "--db", str(tmp_path / "memory.db"))
    try:
        client = single.client()
        assert client.post("/v1/users/u/memories", json={"content": "hello"}).status_code == 201
        response = client.get("/metrics")
        assert response.status_code == 200
        families = {f.name for f in text_string_to_metric_families(response.text)}
        assert {"mnemolayer_http_requests", "mnemolayer_store_bytes"} <= families
    finally:
        single.stop()


def test_pending_enrichments_count_what_waits_for_the_embedder(tmp_path: Path) -> None:
    # In process, so that the test holds the embedder: it goes down once the server is
    # up, the adds are stored for keyword search and wait for their embedding.
    from fastapi.testclient import TestClient

    from mnemolayer.server.rest.app import build_app
    from mnemolayer.server.rest.deps import ServerState
    from mnemolayer.server.rest.settings import ServerSettings
    from mnemolayer.server.rest.tenants import TenantPool
    from tests.helpers import EndpointEmbedder

    settings = ServerSettings(db=str(tmp_path / "memory.db"), embedder="hashing")
    embedder = EndpointEmbedder()
    state = ServerState(settings=settings, pool=TenantPool(settings, embedder), keys=None)
    with TestClient(build_app(settings, state)) as client:

        def pending() -> dict[str, float]:
            text = client.get("/metrics").text
            [family] = [
                f
                for f in text_string_to_metric_families(text)
                if f.name == "mnemolayer_pending_enrichments"
            ]
            return {s.labels["kind"]: s.value for s in family.samples}

        assert client.post("/v1/users/u/memories", json={"content": "seen"}).status_code == 201
        assert pending() == {"embedding": 0, "extraction": 0}
        embedder.down = True
        for text in ("the key is under the mat", "the car is in the garage"):
            assert client.post("/v1/users/u/memories", json={"content": text}).status_code == 201
        assert pending() == {"embedding": 2, "extraction": 0}
        embedder.down = False
        assert client.post("/v1/users/u/maintain", json={}).status_code == 200
        assert pending() == {"embedding": 0, "extraction": 0}


def test_with_the_embed_queue_the_pending_gauge_is_the_queue_depth(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from mnemolayer.server.rest.app import build_app
    from mnemolayer.server.rest.deps import ServerState
    from mnemolayer.server.rest.settings import ServerSettings
    from mnemolayer.server.rest.tenants import TenantPool
    from tests.helpers import GATE_WAIT_S, EndpointEmbedder, Gate, open_gates

    settings = ServerSettings(db=str(tmp_path / "memory.db"), embedder="hashing", embed_queue=True)
    embedder = EndpointEmbedder(gate=Gate())
    pool = TenantPool(settings, embedder)
    state = ServerState(settings=settings, pool=pool, keys=None)
    try:
        with TestClient(build_app(settings, state)) as client:

            def pending() -> dict[str, float]:
                text = client.get("/metrics").text
                [family] = [
                    f
                    for f in text_string_to_metric_families(text)
                    if f.name == "mnemolayer_pending_enrichments"
                ]
                return {s.labels["kind"]: s.value for s in family.samples}

            embedder.gate.arm()  # type: ignore[union-attr]
            reply = client.post(
                "/v1/users/u/memories", json={"content": "the key is under the mat"}
            )
            assert reply.status_code == 201
            assert reply.json()["items"][0]["pending"] == ["embedding"]
            assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
            # The worker holds it in the model call: the gauge counts it as waiting.
            assert pending() == {"embedding": 1, "extraction": 0}
            embedder.gate.open()  # type: ignore[union-attr]
            assert pool.get("default").flush(timeout_s=30) == 0
            assert pending() == {"embedding": 0, "extraction": 0}
            hits = client.post("/v1/users/u/search", json={"query": "key mat", "mode": "vector"})
            assert [h["memory"]["content"] for h in hits.json()["hits"]] == [
                "the key is under the mat"
            ]
    finally:
        open_gates()
