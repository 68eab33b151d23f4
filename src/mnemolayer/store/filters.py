"""What the engines' metadata-filter compilers share (:mod:`mnemolayer.store.sqlite.filters`,
:mod:`mnemolayer.store.postgres.filters`): the identifier check for the JSON column, the
SQL order operators, and the JSON type names of the fixed values."""

from __future__ import annotations

import re
from typing import Any

from mnemolayer.query import Op, Scalar

__all__ = ["SQL_ORDER", "fixed_type", "is_column", "marks"]

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")

#: The order comparisons as SQL operators.
SQL_ORDER = {Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}


def is_column(name: str) -> bool:
    """Whether ``name`` is a plain or table-qualified SQL identifier (``metadata``,
    ``m.metadata``): the only text of a compiled filter that does not come from fixed SQL."""
    return bool(_COLUMN.match(name))


def fixed_type(value: Scalar) -> str:
    """The ``json_type`` name of ``None``, ``True`` or ``False``."""
    return "null" if value is None else ("true" if value else "false")


def marks(values: list[Any]) -> str:
    return ", ".join("?" * len(values))
