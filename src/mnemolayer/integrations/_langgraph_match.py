"""Matching for :mod:`mnemolayer.integrations.langgraph`: LangGraph's value filters
(``SearchOp.filter``) and namespace conditions (``ListNamespacesOp``), evaluated in
Python over stored items.

Filter syntax (LangGraph's): ``{"field": value}`` compares one top-level field of the
value; a nested dict matches a nested value field by field, a list matches a list of
the same length element by element, anything else by equality. ``{"field": {"$op":
arg, ...}}`` applies operators, all of which must hold: ``$eq`` / ``$ne`` (equality),
``$gt $gte $lt $lte`` (number against number, string against string; any other pairing
is false, where LangGraph's in-memory store would convert with ``float()`` or raise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition

from mnemolayer.errors import ValidationError

__all__ = ["check_filter", "matches", "namespace_matches"]

_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def namespace_matches(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(namespace) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(namespace[: len(path)], path, strict=True)
    elif cond.match_type == "suffix":
        pairs = zip(namespace[len(namespace) - len(path) :], path, strict=True)
    else:
        raise ValidationError(
            "match_type", f"must be 'prefix' or 'suffix', got {cond.match_type!r}"
        )
    return all(want in ("*", label) for label, want in pairs)


def check_filter(flt: Mapping[str, Any] | None, field: str = "filter") -> dict[str, Any] | None:
    """Reject unknown ``$`` operators up front (naming the field), so a typo never
    matches nothing silently."""
    if not flt:
        return None
    if not isinstance(flt, Mapping):
        raise ValidationError(field, f"must be a mapping, got {type(flt).__name__}")
    for name, cond in flt.items():
        if isinstance(cond, Mapping):
            for op in cond:
                if isinstance(op, str) and op.startswith("$") and op not in _OPERATORS:
                    raise ValidationError(
                        f"{field}.{name}.{op}",
                        f"unknown operator; use one of {', '.join(sorted(_OPERATORS))}",
                    )
            if not any(isinstance(op, str) and op.startswith("$") for op in cond):
                check_filter(cond, f"{field}.{name}")
    return dict(flt)


def matches(value: Any, flt: Mapping[str, Any]) -> bool:
    return isinstance(value, Mapping) and all(
        _match(value.get(name), cond) for name, cond in flt.items()
    )


def _match(actual: Any, cond: Any) -> bool:
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            return all(_compare(actual, op, arg) for op, arg in cond.items())
        return matches(actual, cond)
    if isinstance(cond, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(cond)
            and all(_match(a, c) for a, c in zip(actual, cond, strict=True))
        )
    return bool(actual == cond)


def _compare(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(actual == arg)
    if op == "$ne":
        return bool(actual != arg)
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (actual, arg))
    if not (numbers or (isinstance(actual, str) and isinstance(arg, str))):
        return False
    if op == "$gt":
        return bool(actual > arg)
    if op == "$gte":
        return bool(actual >= arg)
    if op == "$lt":
        return bool(actual < arg)
    return bool(actual <= arg)  # $lte: check_filter let no other operator through
