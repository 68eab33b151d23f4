"""Metadata filters: parse a filter dict into a small typed AST, then evaluate it in
Python (:func:`matches`); the store compiles it to its engine's SQL
(``store.compile_filter``, :mod:`mnemolayer.store.sqlite.filters` and
:mod:`mnemolayer.store.postgres.filters`).

Syntax (keys are literal top-level metadata keys; dotted paths are not followed)::

    {"city": "Porto"}                           # eq shorthand
    {"age": {"gte": 30, "lt": 40}}              # operators on one key are ANDed
    {"tags": {"contains": "food"}}
    {"lang": {"in": ["en", "zh"]}}
    {"or": [{"city": "Porto"}, {"not": {"lang": "en"}}]}
    {"city": "Porto", "age": {"gt": 18}}        # several keys at one level are ANDed

Operators: ``eq ne gt gte lt lte in nin contains``; combinators ``and`` and ``or`` (a
non-empty list of filters) and ``not`` (one filter). The names ``and``, ``or`` and
``not`` are reserved: they cannot be used as metadata keys in a filter.

Semantics (the same in every evaluator):

* A missing key makes every comparison false, so ``ne`` and ``nin`` (the negations of
  ``eq`` and ``in``) are true on a missing key, and so is ``not`` around any comparison.
* ``eq``: strings equal strings, numbers equal numbers (``1 == 1.0``), ``true``/``false``
  only booleans (a boolean is never a number), ``None`` only an explicit JSON null.
* ``gt gte lt lte``: number against number or string against string (by code point);
  any other pairing is false. The value must be a number or a string.
* ``in``: ``eq`` against any element of the list; ``nin``: not ``in``.
* ``contains``: on a string, substring (case-sensitive); on a list, membership with
  ``eq`` semantics; otherwise false.
* Integers beyond 64 bits in stored metadata compare as floats (as SQLite reads them).

Every malformed filter raises :class:`~mnemolayer.errors.ValidationError` naming the
path of the fault (``filters.and[1].price.between``); a bad filter never degrades to an
unfiltered result.
"""

from __future__ import annotations

import functools
import json
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.models import check_metadata_key, validate_text_value

__all__ = [
    "And",
    "Compare",
    "Filter",
    "Not",
    "Op",
    "Or",
    "Scalar",
    "Scope",
    "filter_from_json",
    "filter_to_json",
    "json_number",
    "matches",
    "operands",
    "parse_filter",
]

Scalar = str | int | float | bool | None

MAX_DEPTH = 16
MAX_TERMS = 1000  # comparisons plus list elements: keeps SQL under SQLite's variable limit
_INT64 = (-(2**63), 2**63 - 1)


class Op(StrEnum):
    """A comparison operator."""

    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    IN = "in"
    NIN = "nin"
    CONTAINS = "contains"


_ORDERING = (Op.GT, Op.GTE, Op.LT, Op.LTE)
_EQUALITY = (Op.EQ, Op.NE, Op.IN, Op.NIN)  # ne and nin are the negations of eq and in


@dataclass(frozen=True, slots=True)
class Compare:
    """``metadata[key] <op> value``.

    Attributes:
        key: a literal top-level metadata key.
        op: the operator.
        value: a scalar, or a tuple of scalars for ``in``/``nin``.
    """

    key: str
    op: Op
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class And:
    """True when every item is true; ``items`` is never empty."""

    items: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """True when any item is true; ``items`` is never empty."""

    items: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """True when ``item`` is false."""

    item: Filter


Filter = Compare | And | Or | Not


def operands(f: Compare) -> tuple[Scalar, ...]:
    """The values of ``f`` as a tuple: ``in``/``nin`` lists as they are, else one value."""
    return f.value if isinstance(f.value, tuple) else (f.value,)


# --------------------------------------------------------------------------- parsing


def parse_filter(raw: Any, field: str = "filters") -> Filter:
    """Parse and validate a filter dict (syntax in the module docstring).

    Args:
        raw: the filter, a non-empty dict.
        field: the name used in error messages for the filter itself.

    Returns:
        The filter as an AST of :class:`Compare`, :class:`And`, :class:`Or`, :class:`Not`.

    Raises:
        ValidationError: anything malformed (not a dict, empty, an unknown operator, a
            bad key, a non-scalar value, ``in``/``nin``/``and``/``or`` not given a list,
            an empty ``and``/``or``, nesting deeper than 16 or more than 1000 terms);
            ``.field`` is the dotted path of the fault.
    """
    parser = _Parser()
    return parser.filter(raw, field, 0)


class _Parser:
    def __init__(self) -> None:
        self.terms = 0

    def count(self, n: int, field: str) -> None:
        self.terms += n
        if self.terms > MAX_TERMS:
            raise ValidationError(field, f"the filter has more than {MAX_TERMS} terms")

    def filter(self, raw: Any, field: str, depth: int) -> Filter:
        if depth > MAX_DEPTH:
            raise ValidationError(field, f"nested deeper than {MAX_DEPTH} levels")
        if not isinstance(raw, dict):
            raise ValidationError(field, f"must be a dict, got {type(raw).__name__}")
        if not raw:
            raise ValidationError(field, "must not be empty (pass no filter to match all)")
        items: list[Filter] = []
        for key, value in raw.items():
            path = f"{field}.{key}" if isinstance(key, str) else field
            if key in ("and", "or"):
                items.append(self.combine(key, value, path, depth))
            elif key == "not":
                items.append(Not(self.filter(value, path, depth + 1)))
            else:
                check_metadata_key(key, field)
                items.extend(self.conditions(key, value, path))
        return items[0] if len(items) == 1 else And(tuple(items))

    def combine(self, name: str, value: Any, path: str, depth: int) -> Filter:
        if not isinstance(value, list | tuple):
            raise ValidationError(path, f"must be a list of filters, got {type(value).__name__}")
        if not value:
            raise ValidationError(path, "must be a non-empty list of filters")
        parts = tuple(self.filter(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
        return And(parts) if name == "and" else Or(parts)

    def conditions(self, key: str, value: Any, path: str) -> list[Filter]:
        if not isinstance(value, dict):
            return [Compare(key, Op.EQ, self.scalar(value, path, Op.EQ))]
        if not value:
            raise ValidationError(path, "needs at least one operator")
        out: list[Filter] = []
        for name, operand in value.items():
            op_path = f"{path}.{name}"
            try:
                op = Op(name)
            except ValueError:
                valid = ", ".join(o.value for o in Op)
                raise ValidationError(op_path, f"unknown operator; use one of {valid}") from None
            if op in (Op.IN, Op.NIN):
                if not isinstance(operand, list | tuple):
                    raise ValidationError(op_path, f"must be a list, got {type(operand).__name__}")
                self.count(len(operand), op_path)
                values = tuple(self.scalar(v, f"{op_path}[{i}]", op) for i, v in enumerate(operand))
                out.append(Compare(key, op, values))
            else:
                out.append(Compare(key, op, self.scalar(operand, op_path, op)))
        return out

    def scalar(self, value: Any, path: str, op: Op) -> Scalar:
        self.count(1, path)
        if isinstance(value, str):
            validate_text_value(value, path)
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, int):
            if not _INT64[0] <= value <= _INT64[1]:
                raise ValidationError(path, "integer out of the signed 64-bit range")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValidationError(path, "must be a finite number")
        else:
            raise ValidationError(
                path, f"must be a string, number, boolean or null, got {type(value).__name__}"
            )
        if op in _ORDERING and (value is None or isinstance(value, bool)):
            raise ValidationError(path, f"{op.value} compares numbers or strings, got {value!r}")
        scalar: Scalar = value
        return scalar


# ----------------------------------------------------------------- Python evaluator

_MISSING = object()
_PY_ORDER = {Op.GT: operator.gt, Op.GTE: operator.ge, Op.LT: operator.lt, Op.LTE: operator.le}


def matches(f: Filter, metadata: Mapping[str, Any] | None) -> bool:
    """Evaluate ``f`` against one record's metadata (semantics in the module docstring).

    Args:
        f: a parsed filter.
        metadata: the record's metadata (a JSON object); ``None`` counts as ``{}``.

    Returns:
        Whether the record passes the filter.
    """
    if isinstance(f, Compare):
        return _compare(f, _MISSING if metadata is None else metadata.get(f.key, _MISSING))
    if isinstance(f, And):
        return all(matches(item, metadata) for item in f.items)
    if isinstance(f, Or):
        return any(matches(item, metadata) for item in f.items)
    return not matches(f.item, metadata)


def _compare(f: Compare, actual: Any) -> bool:
    if f.op in _EQUALITY:
        found = any(_eq(actual, v) for v in operands(f))
        return not found if f.op in (Op.NE, Op.NIN) else found
    if f.op is Op.CONTAINS:
        if isinstance(actual, list | tuple):
            return any(_eq(item, f.value) for item in actual)
        return isinstance(actual, str) and isinstance(f.value, str) and f.value in actual
    return _order(f.op, actual, f.value)


def json_number(value: Any) -> int | float | None:
    """A JSON number as stored metadata holds it, as SQLite reads it (integers beyond 64
    bits as floats); ``None`` for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        # What SQLite's JSON reader makes of it: a float, or infinity past the float range.
        try:
            return float(value)
        except OverflowError:
            return math.copysign(math.inf, value)
    return value


def _eq(actual: Any, expected: Any) -> bool:
    if expected is None or isinstance(expected, bool):
        return actual is expected
    if isinstance(expected, str):
        return isinstance(actual, str) and actual == expected
    number = json_number(actual)
    return number is not None and number == expected


def _order(op: Op, actual: Any, expected: Any) -> bool:
    if isinstance(expected, str):
        if not isinstance(actual, str):
            return False
        left: Any = actual
    else:
        left = json_number(actual)
        if left is None:
            return False
    return bool(_PY_ORDER[op](left, expected))


# ------------------------------------------------- encrypted stores: Python in SQL


def filter_to_json(f: Filter) -> str:
    """``f`` as canonical JSON filter text that :func:`parse_filter` reads back to ``f``."""
    return json.dumps(_to_raw(f), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _to_raw(f: Filter) -> Any:
    if isinstance(f, And):
        return {"and": [_to_raw(i) for i in f.items]}
    if isinstance(f, Or):
        return {"or": [_to_raw(i) for i in f.items]}
    if isinstance(f, Not):
        return {"not": _to_raw(f.item)}
    value = list(f.value) if isinstance(f.value, tuple) else f.value
    return {f.key: {f.op.value: value}}


@functools.lru_cache(maxsize=256)
def filter_from_json(text: str) -> Filter:
    """Parse filter text made by :func:`filter_to_json` (cached: an SQL function calls
    this once per row).

    Raises:
        ValidationError: malformed filter text.
    """
    return parse_filter(json.loads(text))


@dataclass(frozen=True)
class Scope:
    """Which records a read may see: always one user, optionally narrower."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    kinds: tuple[str, ...] | None = None
    #: Only records of these sources (``search(trusted_only=True)``); ``None``: any.
    sources: tuple[str, ...] | None = None
    #: Metadata filter; the store compiles it to its own SQL (``compile_filter``).
    filter: Filter | None = None
