"""One house: every ``Memory`` parameter is on every surface that offers its method.

The operations table (:mod:`mnemolayer.server.ops`) says which surface offers which
``Memory`` method; this module reads each surface as a client sees it (the REST
server's OpenAPI schema, the MCP tools' input schemas, the command line's options) and
checks that every parameter of the method, as ``inspect.signature(Memory.method)`` has
it today, is there, under its own name or the one in :data:`NAMES`, unless
:data:`NOT_OFFERED` gives the reason. Adding a parameter to ``Memory`` without exposing
it fails here. Also checked: every public member of ``Memory`` is an operation or in
:data:`NOT_OPERATIONS`; the table's routes, tools and commands exist; every REST route
is in docs/rest.md and every MCP tool (with its arguments) in docs/mcp.md.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer.main

from mnemolayer import Memory
from mnemolayer.server.ops import OPS, Op

ROOT = Path(__file__).resolve().parents[1]
SURFACES = ("rest", "mcp", "cli")

#: Public members of ``Memory`` that are no operation of any surface, and why.
NOT_OPERATIONS = {
    "now": "reads the store object's clock; each surface has its own",
    "close": "closes the store object; each surface opens and closes its store itself",
    "working": "returns a live WorkingMemory (a window object); REST's "
    "/sessions/{session_id}/window routes drive one, the CLI's session commands show one",
    "should_avoid": "a yes/no shortcut for agent code over what strategies returns "
    "(REST /strategies, MCP get_strategies, CLI strategies give the whole track record)",
    "last_query_embed_seconds": "the last search's embedding time, for benchmarks",
    "procedural_config": "the store object's thresholds, set in code; the CLI's "
    "strategies command takes two of them as options",
    "flush": "waits for the store object's own background embedding queue (tests, "
    "benchmarks, a script before it exits); a server's queue waits at shutdown, and "
    "maintenance (REST /maintain, CLI maintain) embeds what an outage left pending",
    "pending": "counts what waits for enrichment: stats (REST /stats, MCP, CLI stats) gives "
    "a user's, the REST server's /metrics gauge the whole store's",
}

#: Memory parameters a surface does not take, and why: (surface, method, parameter).
NOT_OFFERED = {
    **{
        (surface, method, "progress"): "a Python callback; the CLI draws a progress bar "
        "with it, other surfaces cannot carry a function"
        for surface in SURFACES
        for method in ("import_rows", "reindex", "extract_facts")
    },
    **{
        (surface, method, "config"): "a ProceduralConfig object: the store's thresholds, "
        "not a per-request setting (the CLI maps two of them to --min-successes and "
        "--min-failures)"
        for surface in SURFACES
        for method in ("strategies", "reflect")
    },
    **{
        (surface, "context", "template"): "a ContextTemplate of str.format patterns, the "
        "application's rendering; patterns from a request are not evaluated"
        for surface in SURFACES
    },
    **{
        (surface, "maintain", "options"): "a MaintenanceOptions object: how a pass runs "
        "(merging, consolidation, id caps) is the operator's choice in code, not a request's"
        for surface in SURFACES
    },
}

#: Where a surface takes a Memory parameter under another name (all names given must
#: be there). The CLI's ``--user``/``--agent``/``--session`` are in :func:`names`.
NAMES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("rest", "add", "messages"): ("content", "messages"),
    ("mcp", "add", "messages"): ("content",),
    ("cli", "add", "messages"): ("text",),
    ("cli", "add", "timestamp"): ("time",),
    ("cli", "add", "metadata"): ("meta", "meta_json"),
    ("cli", "update", "metadata"): ("meta", "meta_json"),
    ("rest", "list", "kinds"): ("kind",),
    ("cli", "list", "kinds"): ("kind",),
    ("cli", "list", "filters"): ("filter_json",),
    ("cli", "search", "kinds"): ("kind",),
    ("cli", "search", "filters"): ("filter_json",),
    ("cli", "neighbors", "name"): ("entity",),
    ("cli", "context", "budget_tokens"): ("budget",),
    ("cli", "context", "sections"): ("section",),
    ("cli", "context", "recent"): ("recent_json",),
    ("cli", "import_rows", "rows"): ("file",),
    ("cli", "import_markdown", "text"): ("file",),
}
_CLI = {"user_id": "user", "agent_id": "agent", "session_id": "session"}


def names(surface: str, op: Op, param: str) -> tuple[str, ...]:
    """The names under which ``surface`` takes ``op``'s Memory parameter ``param``."""
    given = NAMES.get((surface, op.name, param))
    if given is not None:
        return given
    surface_name = {v: k for k, v in op.renamed.items()}.get(param, param)
    if surface == "cli":
        return (_CLI.get(surface_name, surface_name),)
    return (surface_name,)


def memory_parameters(method: str) -> list[str]:
    return [p for p in inspect.signature(getattr(Memory, method)).parameters if p != "self"]


def missing(surface: str, op: Op, params: list[str], offered: set[str]) -> list[str]:
    """The parameters in ``params`` that ``surface`` does not offer and no entry excuses."""
    return [
        p
        for p in params
        if (surface, op.name, p) not in NOT_OFFERED and not set(names(surface, op, p)) <= offered
    ]


# -- reading the surfaces -------------------------------------------------------------------


@cache
def openapi() -> dict[str, Any]:
    pytest.importorskip("fastapi")
    from mnemolayer.server.rest.app import build_app
    from mnemolayer.server.rest.settings import ServerSettings

    schema: dict[str, Any] = build_app(ServerSettings(db=":memory:")).openapi()
    return schema


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    for part in schema.get("anyOf", []):  # an optional body: MaintainBody | None
        if "$ref" in part:
            return _resolve(part, spec)
    return schema


def rest_offers(route: str) -> set[str]:
    """The path, query and body parameter names of a route, ``"METHOD /path"``."""
    spec = openapi()
    method, path = route.split(" ", 1)
    operation = spec["paths"][path][method.lower()]
    found = {p["name"] for p in operation.get("parameters", [])}
    body = operation.get("requestBody")
    if body is not None:
        schema = _resolve(body["content"]["application/json"]["schema"], spec)
        found |= set(schema.get("properties", {}))
    return found


@cache
def mcp_tools() -> dict[str, Any]:
    pytest.importorskip("mcp")
    from mnemolayer.server.mcp import build_server

    with Memory(":memory:", embedder="hashing", extractor=None) as mem:
        listed = anyio.run(build_server(mem).list_tools)
    return {t.name: t for t in listed}


def mcp_offers(tool: str) -> set[str]:
    return set(mcp_tools()[tool].input_schema["properties"])


def _commands(command: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, sub in getattr(command, "commands", {}).items():
        yield (f"{prefix}{name}", sub)
        yield from _commands(sub, f"{prefix}{name} ")


@cache
def cli_commands() -> dict[str, Any]:
    from mnemolayer.cli import app

    return dict(_commands(typer.main.get_command(app)))


def cli_offers(command: str) -> set[str]:
    return {p.name for p in cli_commands()[command].params}


def offers(surface: str, where: str) -> set[str]:
    return {"rest": rest_offers, "mcp": mcp_offers, "cli": cli_offers}[surface](where)


def exposed() -> Iterator[tuple[str, str]]:
    for op in OPS.values():
        for surface in SURFACES:
            if getattr(op, surface) is not None:
                yield surface, op.name


# -- the checks -------------------------------------------------------------------------------


def test_every_public_member_of_memory_is_an_operation_or_says_why_not() -> None:
    public = {n for n in dir(Memory) if not n.startswith("_")}
    undecided = public - set(OPS) - set(NOT_OPERATIONS)
    assert not undecided, f"add these to ops.OPS (or to NOT_OPERATIONS with a reason): {undecided}"
    assert set(OPS) <= public and set(NOT_OPERATIONS) <= public  # nothing stale
    assert not set(OPS) & set(NOT_OPERATIONS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_each_params_field_is_a_memory_parameter(name: str) -> None:
    op = OPS[name]
    params = set(memory_parameters(op.method))
    for field, info in op.params.model_fields.items():
        assert op.renamed.get(field, field) in params, (name, field)
        assert info.description, f"{name}.{field} needs a description"
    assert set(op.renamed) <= set(op.params.model_fields) and set(op.convert) <= set(
        op.params.model_fields
    )


@pytest.mark.parametrize(("surface", "name"), sorted(exposed()))
def test_every_memory_parameter_is_on_each_surface_offering_the_method(
    surface: str, name: str
) -> None:
    op = OPS[name]
    where = getattr(op, surface)
    left_out = missing(surface, op, memory_parameters(op.method), offers(surface, where))
    assert not left_out, (
        f"{surface} {where!r} lacks Memory.{op.method}'s parameters {left_out}: expose them "
        "(add them to ops.py's params model for REST and MCP, or an option to the command), "
        "or list them in NOT_OFFERED with the reason"
    )


def test_the_check_fails_for_a_parameter_nobody_exposed() -> None:
    op = OPS["search"]
    params = [*memory_parameters("search"), "rerank_with"]
    for surface in SURFACES:
        assert missing(surface, op, params, offers(surface, getattr(op, surface))) == [
            "rerank_with"
        ]


def test_every_exception_is_still_needed() -> None:
    for surface, method, param in NOT_OFFERED:
        op = OPS[method]
        assert param in memory_parameters(method), (surface, method, param)
        where = getattr(op, surface)
        if where is not None:
            assert not set(names(surface, op, param)) <= offers(surface, where), (
                f"{surface} offers {method}({param}) now: drop it from NOT_OFFERED"
            )
    for surface, method, param in NAMES:
        assert param in memory_parameters(method), (surface, method, param)


def test_the_tables_routes_tools_and_commands_exist() -> None:
    paths = openapi()["paths"]
    routes = {f"{m.upper()} {p}" for p, item in paths.items() for m in item}
    for op in OPS.values():
        assert op.rest is None or op.rest in routes, op
        assert op.mcp is None or op.mcp in mcp_tools(), op
        assert op.cli is None or op.cli in cli_commands(), op
    # Every MCP tool is some operation's.
    assert set(mcp_tools()) == {op.mcp for op in OPS.values() if op.mcp}


def test_rest_bodies_are_the_operations_params_models() -> None:
    from mnemolayer.server.rest import schemas

    for body, op in [
        (schemas.AddBody, "add"),
        (schemas.SearchBody, "search"),
        (schemas.UpdateBody, "update"),
        (schemas.ImportBody, "import_rows"),
        (schemas.MaintainBody, "maintain"),
        (schemas.FeedbackBody, "learn_from_feedback"),
        (schemas.ContextBody, "context"),
        (schemas.OutcomeBody, "record_outcome"),
    ]:
        assert issubclass(body, OPS[op].params), body


def test_mcp_arguments_have_the_operations_descriptions() -> None:
    changed = {("search_memory", "limit"), ("search_memory", "threshold"),
               ("list_memories", "limit"), ("get_strategies", "task"),
               ("get_strategies", "limit"), ("add_memory", "importance")}  # fmt: skip
    for tool, spec in mcp_tools().items():
        described: dict[str, set[str | None]] = {}
        for op in OPS.values():
            if op.mcp == tool:
                for field, info in op.params.model_fields.items():
                    described.setdefault(field, set()).add(info.description)
        for field, descriptions in described.items():
            if (tool, field) not in changed:
                assert spec.input_schema["properties"][field]["description"] in descriptions


# -- the documented surface -----------------------------------------------------------------


def _entry(doc: str, needle: str) -> str:
    """The table row naming ``needle``, else the paragraph of its first mention."""
    rows = [line for line in doc.splitlines() if line.startswith("|") and needle in line]
    if rows:
        return rows[0]
    start = doc.index(needle)
    end = doc.find("\n\n", start)
    return doc[doc.rfind("\n\n", 0, start) : end if end != -1 else None]


def test_every_rest_route_is_in_docs_rest_md() -> None:
    doc = (ROOT / "docs" / "rest.md").read_text(encoding="utf-8")
    routes = [f"{m.upper()} {path}" for path, item in openapi()["paths"].items() for m in item]
    assert len(routes) > 30 and "GET /healthz" in routes
    undocumented = [r for r in routes if f"`{r}`" not in doc]
    assert not undocumented, f"add these routes to docs/rest.md: {undocumented}"


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.rest))
def test_each_operations_rest_fields_are_documented(name: str) -> None:
    doc = (ROOT / "docs" / "rest.md").read_text(encoding="utf-8")
    route = OPS[name].rest
    assert route is not None
    entry = _entry(doc, f"`{route}`")
    path_names = set(re.findall(r"\{(\w+)\}", route))
    for field in sorted(rest_offers(route) - path_names):
        assert f"`{field}`" in entry, f"docs/rest.md: {route} does not mention `{field}`"


def test_every_mcp_tool_and_argument_is_in_docs_mcp_md() -> None:
    doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    for tool, spec in mcp_tools().items():
        rows = [line for line in doc.splitlines() if line.startswith(f"| `{tool}` |")]
        assert rows, f"add the tool {tool} to the table in docs/mcp.md"
        for arg in spec.input_schema["properties"]:
            if arg != "user_id":  # "Every tool also takes user_id"
                assert f"`{arg}`" in rows[0], f"docs/mcp.md: {tool} does not mention `{arg}`"
    assert "Every tool also takes `user_id`" in doc
