"""The simulated agents: locust users that talk to the REST server as an LLM agent does.

Each agent serves one (tenant, user) pair, taken round robin from the plan, and holds a
working-memory session. Between two requests it thinks (``think`` seconds, uniform);
each request goes to the next replica, round robin over the base URLs. What it does,
by weight (:data:`WEIGHTS`):

* ``add``: one conversation turn into long-term memory (``POST /memories``, ``content``);
* ``add batch``: the next 2-8 turns, with speaker names (``messages``);
* ``search``: a question about the conversation (``POST /search``, ``limit`` 10);
* ``context``: a token-budgeted context for a question (``POST /context``, a budget of
  500, 1500 or 3000 tokens, the session's window as the recent turns);
* ``window append``: a turn appended to the session's window (``budget_tokens`` 1000, so
  long sessions compact their oldest turns into a summary, as a chat does);
* ``window read``: the session's window (``GET .../window``).

After 40 turns an agent starts a new session. A response is a failure unless its status
is 2xx and its JSON body has the field the operation returns.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from locust import FastHttpUser, between, task

__all__ = ["OPERATIONS", "WEIGHTS", "Identity", "Plan", "agent_class"]

#: Operation → its weight in the mix.
WEIGHTS: dict[str, int] = {
    "add": 4,
    "add batch": 1,
    "search": 4,
    "context": 2,
    "window append": 3,
    "window read": 2,
}
OPERATIONS: tuple[str, ...] = tuple(WEIGHTS)
SESSION_TURNS = 40
WINDOW_BUDGET = 1000
CONTEXT_BUDGETS = (500, 1500, 3000)


@dataclass(frozen=True)
class Identity:
    """Who an agent speaks for: the tenant's key (``None``: no keys) and the user id."""

    tenant: str
    user_id: str
    key: str | None


@dataclass
class Plan:
    """What every agent of a run shares.

    Attributes:
        bases: the replicas' base URLs, requests spread round robin over them.
        identities: the (tenant, user) pairs, handed to agents round robin.
        turns: conversation turns, ``{"name": speaker, "content": text}``.
        questions: search and context queries.
        think: seconds an agent waits between requests, ``(min, max)``.
        seed: seeds each agent's random choices (agent ``i`` gets ``seed + i``).
    """

    bases: Sequence[str]
    identities: Sequence[Identity]
    turns: Sequence[dict[str, str]]
    questions: Sequence[str]
    think: tuple[float, float]
    seed: int = 0
    _agents: Iterator[int] = field(default_factory=itertools.count)
    _bases: Iterator[str] | None = None

    def next_agent(self) -> int:
        return next(self._agents)

    def next_base(self) -> str:
        if self._bases is None:
            self._bases = itertools.cycle(self.bases)
        return next(self._bases)


class _Agent(FastHttpUser):
    abstract = True
    plan: ClassVar[Plan]

    def on_start(self) -> None:
        number = self.plan.next_agent()
        self.identity = self.plan.identities[number % len(self.plan.identities)]
        self.rng = random.Random(self.plan.seed + number)
        self.headers = {"Authorization": f"Bearer {self.identity.key}"} if self.identity.key else {}
        self.cursor = self.rng.randrange(len(self.plan.turns))
        self.agent_tag = f"a{number}"
        self.sessions = 0
        self._new_session()

    def _new_session(self) -> None:
        self.sessions += 1
        self.session_id = f"{self.agent_tag}-s{self.sessions}"
        self.window_turns = 0

    def _turns(self, n: int) -> list[dict[str, str]]:
        turns = self.plan.turns
        out = [turns[(self.cursor + i) % len(turns)] for i in range(n)]
        self.cursor = (self.cursor + n) % len(turns)
        return out

    def _question(self) -> str:
        return self.rng.choice(self.plan.questions)

    def _user_path(self, rest: str) -> str:
        return f"{self.plan.next_base()}/v1/users/{self.identity.user_id}{rest}"

    def _call(self, name: str, method: str, path: str, body: Any, expect: str) -> None:
        with self.client.request(
            method, path, json=body, headers=self.headers, name=name, catch_response=True
        ) as resp:
            if not 200 <= (resp.status_code or 0) < 300:
                resp.failure(f"HTTP {resp.status_code}: {(resp.text or '')[:300]}")
                return
            try:
                data = resp.json()
            except ValueError:
                resp.failure(f"not JSON: {(resp.text or '')[:300]}")
                return
            if not isinstance(data, dict) or expect not in data:
                resp.failure(f"no {expect!r} in the answer: {str(data)[:300]}")

    @task(WEIGHTS["add"])
    def add(self) -> None:
        turn = self._turns(1)[0]
        body = {"content": f"{turn['name']}: {turn['content']}", "session_id": self.session_id}
        self._call("add", "POST", self._user_path("/memories"), body, "items")

    @task(WEIGHTS["add batch"])
    def add_batch(self) -> None:
        messages = [
            {"role": "user", "name": t["name"], "content": t["content"]}
            for t in self._turns(self.rng.randint(2, 8))
        ]
        body = {"messages": messages, "session_id": self.session_id}
        self._call("add batch", "POST", self._user_path("/memories"), body, "items")

    @task(WEIGHTS["search"])
    def search(self) -> None:
        body = {"query": self._question(), "limit": 10}
        self._call("search", "POST", self._user_path("/search"), body, "hits")

    @task(WEIGHTS["context"])
    def build_context(self) -> None:
        body = {
            "query": self._question(),
            "budget_tokens": self.rng.choice(CONTEXT_BUDGETS),
            "session_id": self.session_id,
        }
        self._call("context", "POST", self._user_path("/context"), body, "text")

    @task(WEIGHTS["window append"])
    def window_append(self) -> None:
        if self.window_turns >= SESSION_TURNS:
            self._new_session()
        role = "user" if self.window_turns % 2 == 0 else "assistant"
        body = {
            "role": role,
            "content": self._turns(1)[0]["content"],
            "budget_tokens": WINDOW_BUDGET,
        }
        path = self._user_path(f"/sessions/{self.session_id}/window/messages")
        self._call("window append", "POST", path, body, "window")
        self.window_turns += 1

    @task(WEIGHTS["window read"])
    def window_read(self) -> None:
        path = self._user_path(f"/sessions/{self.session_id}/window")
        self._call("window read", "GET", path, None, "messages")


def agent_class(plan: Plan) -> type[FastHttpUser]:
    """A locust user class whose agents follow ``plan``."""
    return type(
        "Agent",
        (_Agent,),
        {
            "plan": plan,
            "host": plan.bases[0],
            "wait_time": between(*plan.think),
            "abstract": False,
        },
    )
