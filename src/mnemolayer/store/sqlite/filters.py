"""Metadata filters as SQLite SQL: JSON functions over plain metadata
(:func:`compile_sqlite`), or a Python function inside SQL over sealed metadata
(:func:`compile_udf`). :meth:`~mnemolayer.store.sqlite.store.SQLiteStore.compile_filter`
chooses; the semantics are :mod:`mnemolayer.query`'s and agree with
:func:`~mnemolayer.query.matches` on every input (property-tested)."""

from __future__ import annotations

from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.query import (
    And,
    Compare,
    Filter,
    Not,
    Op,
    Or,
    Scalar,
    filter_to_json,
    json_number,
    operands,
)
from mnemolayer.store.filters import SQL_ORDER, fixed_type, is_column, marks

__all__ = ["compile_sqlite", "compile_udf"]

_NUMERIC = "('integer', 'real')"


def compile_sqlite(f: Filter, column: str = "metadata") -> tuple[str, list[Any]]:
    """Compile ``f`` to an SQLite boolean expression over a JSON text column.

    The expression is always 0 or 1 (never NULL, also for a NULL column), and agrees with
    :func:`~mnemolayer.query.matches` on every input. Keys and values are bound parameters; only ``column``
    and fixed SQL go into the text. Booleans are told apart from numbers with
    ``json_type`` (``json_extract`` reads JSON ``true`` as 1).

    Args:
        f: a parsed filter.
        column: the JSON column, a plain or table-qualified identifier (``"m.metadata"``).

    Returns:
        ``(sql, params)`` for ``WHERE <sql>`` with ``?`` placeholders, in order.

    Raises:
        ValidationError: ``column`` is not an identifier.
    """
    if not is_column(column):
        raise ValidationError("column", f"not an SQL identifier: {column!r}")
    params: list[Any] = []
    sql = _sql(f, column, params)
    return sql, params


def _sql(f: Filter, col: str, params: list[Any]) -> str:
    if isinstance(f, And):
        return "(" + " AND ".join(_sql(item, col, params) for item in f.items) + ")"
    if isinstance(f, Or):
        return "(" + " OR ".join(_sql(item, col, params) for item in f.items) + ")"
    if isinstance(f, Not):
        return f"(NOT {_sql(f.item, col, params)})"
    return _sql_compare(f, col, params)


def _sql_compare(f: Compare, col: str, params: list[Any]) -> str:
    # The key is validated (no '"' or '\'), so quoting it makes one literal path step.
    path = f'$."{f.key}"'
    if f.op in (Op.NE, Op.NIN):
        positive = Compare(f.key, Op.EQ if f.op is Op.NE else Op.IN, f.value)
        return f"(NOT {_sql_compare(positive, col, params)})"
    type_expr = f"json_type({col}, ?)"
    value_expr = f"json_extract({col}, ?)"
    if f.op in (Op.EQ, Op.IN):
        sql = _sql_eq(operands(f), type_expr, value_expr, path, params)
    elif f.op is Op.CONTAINS:
        sql = _sql_contains(operands(f)[0], col, type_expr, value_expr, path, params)
    else:
        kinds = "= 'text'" if isinstance(f.value, str) else f"IN {_NUMERIC}"
        params += [path, path, f.value]
        sql = f"{type_expr} {kinds} AND {value_expr} {SQL_ORDER[f.op]} ?"
    # A missing key or NULL column makes json_type NULL; COALESCE keeps NOT exact.
    return f"COALESCE(({sql}), 0)"


def _sql_eq(
    values: tuple[Scalar, ...], type_expr: str, value_expr: str, path: str, params: list[Any]
) -> str:
    """``eq`` against any of ``values``: grouped by JSON type, one ``IN`` per type."""
    texts = [v for v in values if isinstance(v, str)]
    numbers = [v for v in values if json_number(v) is not None]
    types = sorted({fixed_type(v) for v in values if v is None or isinstance(v, bool)})
    parts: list[str] = []
    if texts:
        params += [path, path, *texts]
        parts.append(f"({type_expr} = 'text' AND {value_expr} IN ({marks(texts)}))")
    if numbers:
        params += [path, path, *numbers]
        parts.append(f"({type_expr} IN {_NUMERIC} AND {value_expr} IN ({marks(numbers)}))")
    if types:
        params += [path, *types]
        parts.append(f"{type_expr} IN ({marks(types)})")
    return " OR ".join(parts) if parts else "0"


def _sql_contains(
    value: Scalar, col: str, type_expr: str, value_expr: str, path: str, params: list[Any]
) -> str:
    operand: Scalar = value
    if isinstance(value, str):
        member = "_ms_je.type = 'text' AND _ms_je.value = ?"
    elif json_number(value) is not None:
        member = f"_ms_je.type IN {_NUMERIC} AND _ms_je.value = ?"
    else:
        member, operand = "_ms_je.type = ?", fixed_type(value)
    # json_each over a scalar yields the scalar itself, so the array type is checked first.
    params += [path, path, operand]
    sql = (
        f"({type_expr} = 'array' AND EXISTS "
        f"(SELECT 1 FROM json_each({col}, ?) AS _ms_je WHERE {member}))"
    )
    if isinstance(value, str):
        params += [path, path, value]
        sql += f" OR ({type_expr} = 'text' AND instr({value_expr}, ?) > 0)"
    return sql


def compile_udf(f: Filter, prefix: str = "") -> tuple[str, list[Any]]:
    """``f`` as a call of the SQL function ``ms_filter(user_id, id, metadata, filter)``
    that an encrypted store registers on its connection: it decrypts each row's metadata
    and evaluates ``f`` with :func:`~mnemolayer.query.matches` (SQL's JSON functions cannot read sealed
    metadata). Same semantics as :func:`compile_sqlite`.

    Args:
        f: a parsed filter.
        prefix: the ``memories`` table alias with its dot (``"m."``) or ``""``.

    Raises:
        ValidationError: ``prefix`` is not an identifier followed by a dot.
    """
    if prefix and (not prefix.endswith(".") or not is_column(prefix[:-1])):
        raise ValidationError("prefix", f"not an SQL table alias: {prefix!r}")
    return (
        f"ms_filter({prefix}user_id, {prefix}id, {prefix}metadata, ?)",
        [filter_to_json(f)],
    )
