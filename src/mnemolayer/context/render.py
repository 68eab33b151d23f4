"""Rendering a packed context: Markdown (headings, one bullet per item, a line per day
over recalled episodes) or JSON with the same structure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mnemolayer.context.items import ContextItem, ContextTemplate

__all__ = ["day_lines", "grouped", "json_item", "line", "render"]


# -- rendering ---------------------------------------------------------------------------


def grouped(section: str, fmt: str, template: ContextTemplate) -> bool:
    """Whether ``section``'s items sit under one date line per day (Markdown episodes)."""
    return section == "episodes" and fmt == "markdown" and template.date_group is not None


def line(item: ContextItem, section: str, template: ContextTemplate, dated: bool = True) -> str:
    """The Markdown line of ``item``; ``dated=False`` when a day line above cites its time."""
    when = template.format_time(item.time) if dated else None
    # A fact's sentence may already say its date ("went hiking (6 May 2023)").
    suffix = template.time_suffix.format(time=when) if when and when not in item.text else ""
    if section == "recent":
        return template.recent_item.format(role=item.role or "", text=item.text, time_suffix=suffix)
    text = item.text + template.outdated_mark if item.outdated else item.text
    if section == "episodes" and item.role:
        return template.episode_item.format(role=item.role, text=text, time_suffix=suffix)
    return template.item.format(text=text, time=when or "", time_suffix=suffix)


def json_item(item: ContextItem, template: ContextTemplate) -> dict[str, Any]:
    out: dict[str, Any] = {"text": item.text, "time": template.format_time(item.time)}
    if item.role is not None:
        out["role"] = item.role
    if item.outdated:
        out["outdated"] = True
    return out


def render(
    packed: Mapping[str, list[ContextItem]],
    order: Sequence[str],
    fmt: str,
    template: ContextTemplate,
) -> str:
    """The text of the non-empty sections, in ``order``."""
    names = [n for n in order if packed.get(n)]
    if fmt == "json":
        if not names:
            return ""
        doc = [
            {
                "section": n,
                "title": template.headings.get(n, n),
                "items": [json_item(i, template) for i in packed[n]],
            }
            for n in names
        ]
        return json.dumps({"sections": doc}, ensure_ascii=False)
    blocks = []
    for n in names:
        lines = [f"## {template.headings.get(n, n)}"]
        group = template.date_group if grouped(n, fmt, template) else None
        if group is not None:
            lines.extend(day_lines(packed[n], template, group))
        else:
            lines.extend(line(i, n, template) for i in packed[n])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def day_lines(items: Sequence[ContextItem], template: ContextTemplate, group: str) -> list[str]:
    """Episode lines (in time order) with a ``group`` line each time the day changes."""
    lines: list[str] = []
    day: str | None = None
    for item in items:
        when = template.format_time(item.time)
        if when is not None and when != day:
            lines.append(group.format(time=when))
            day = when
        lines.append(line(item, "episodes", template, dated=when is None))
    return lines
