"""Metadata filters as PostgreSQL SQL (:func:`compile_postgres`), for
:meth:`~mnemolayer.store.postgres.store.PostgresStore.compile_filter`; the semantics are
:mod:`mnemolayer.query`'s and agree with :func:`~mnemolayer.query.matches` and the SQLite
compiler on every input (property-tested on a real server)."""

from __future__ import annotations

from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.query import And, Compare, Filter, Not, Op, Or, Scalar, json_number, operands
from mnemolayer.store.filters import SQL_ORDER, fixed_type, is_column, marks

__all__ = ["compile_postgres"]


def compile_postgres(f: Filter, column: str = "metadata") -> tuple[str, list[Any]]:
    """Compile ``f`` to a PostgreSQL boolean expression over a JSON text column (the
    PostgreSQL store keeps metadata as text, like SQLite; it is read with ``jsonb``).

    The expression is never NULL and agrees with :func:`~mnemolayer.query.matches` and
    :func:`~mnemolayer.store.sqlite.filters.compile_sqlite` on every input: numbers compare as numbers (JSON booleans are
    not numbers), texts compare byte-wise (``COLLATE "C"``, SQLite's order), ``contains``
    looks into arrays and, for a text, into the text. Placeholders are ``?`` (the store
    translates them, :mod:`mnemolayer.store.postgres.translate`).

    Args:
        f: a parsed filter.
        column: the JSON column, a plain or table-qualified identifier (``"m.metadata"``).

    Returns:
        ``(sql, params)`` for ``WHERE <sql>``.

    Raises:
        ValidationError: ``column`` is not an identifier.
    """
    if not is_column(column):
        raise ValidationError("column", f"not an SQL identifier: {column!r}")
    params: list[Any] = []
    return _pg(f, column, params), params


def _pg(f: Filter, col: str, params: list[Any]) -> str:
    if isinstance(f, And):
        return "(" + " AND ".join(_pg(item, col, params) for item in f.items) + ")"
    if isinstance(f, Or):
        return "(" + " OR ".join(_pg(item, col, params) for item in f.items) + ")"
    if isinstance(f, Not):
        return f"(NOT {_pg(f.item, col, params)})"
    return _pg_compare(f, col, params)


def _pg_compare(f: Compare, col: str, params: list[Any]) -> str:
    if f.op in (Op.NE, Op.NIN):
        positive = Compare(f.key, Op.EQ if f.op is Op.NE else Op.IN, f.value)
        return f"(NOT {_pg_compare(positive, col, params)})"
    value = f"({col}::jsonb -> CAST(? AS text))"  # the key's JSON value, NULL when missing
    kind = f"jsonb_typeof({value})"
    text = f"({col}::jsonb ->> CAST(? AS text))"
    key = f.key
    parts: list[str] = []
    if f.op in (Op.EQ, Op.IN):
        values = operands(f)
        texts = [x for x in values if isinstance(x, str)]
        numbers = [x for x in values if json_number(x) is not None]
        fixed = sorted({fixed_type(x) for x in values if x is None or isinstance(x, bool)})
        if texts:
            params += [key, key, *texts]
            parts.append(f"({kind} = 'string' AND {text} IN ({marks(texts)}))")
        if numbers:
            params += [key, key, *numbers]
            parts.append(f"({kind} = 'number' AND CAST({text} AS numeric) IN ({marks(numbers)}))")
        for name in fixed:
            params += [key]
            parts.append(f"({kind} = 'null')" if name == "null" else f"({value}::text = '{name}')")
        sql = " OR ".join(parts) if parts else "FALSE"
    elif f.op is Op.CONTAINS:
        target = operands(f)[0]
        operand: Scalar = None
        if isinstance(target, str):
            member, operand = "jsonb_typeof(e) = 'string' AND e #>> '{}' = ?", target
        elif json_number(target) is not None:
            member = "jsonb_typeof(e) = 'number' AND CAST(e #>> '{}' AS numeric) = ?"
            operand = target
        else:
            name = fixed_type(target)
            member = "jsonb_typeof(e) = 'null'" if name == "null" else f"e::text = '{name}'"
        params += [key, key, key]  # the type test, then the CASE's two reads of the value
        if operand is not None:
            params.append(operand)
        sql = (
            f"({kind} = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements("
            f"CASE WHEN jsonb_typeof({value}) = 'array' THEN {value} ELSE '[]'::jsonb END) AS e "
            f"WHERE {member}))"
        )
        if isinstance(target, str):
            params += [key, key, target]
            sql += f" OR ({kind} = 'string' AND strpos({text}, ?) > 0)"
    else:
        if isinstance(f.value, str):
            params += [key, key, f.value]
            sql = f"{kind} = 'string' AND {text} COLLATE \"C\" {SQL_ORDER[f.op]} ?"
        else:
            params += [key, key, f.value]
            sql = f"{kind} = 'number' AND CAST({text} AS numeric) {SQL_ORDER[f.op]} ?"
    return f"COALESCE(({sql}), FALSE)"
