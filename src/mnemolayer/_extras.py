"""Optional dependencies: imported where they are needed, and when one is missing, an
error that names the ``pip`` extra that brings it (:class:`~mnemolayer.errors.MissingExtraError`)."""

from __future__ import annotations

import importlib
from types import ModuleType

from mnemolayer.errors import MissingExtraError

__all__ = ["install_hint", "require"]


def install_hint(extra: str) -> str:
    """How to install ``extra``: ``pip install -e '.[<extra>]'`` in a checkout."""
    return f"pip install -e '.[{extra}]' in the mnemolayer checkout"


def require(module: str, *, extra: str, purpose: str | None = None) -> ModuleType:
    """Import ``module``, or say which extra to install.

    Args:
        module: the module an optional feature needs (``"openai"``).
        extra: the pip extra that installs it (``"llm"``).
        purpose: what needs it, for the message (``"LLM extraction"``); default the
            module's name.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: ``module`` (or a module it imports) is not installed; the
            message names ``extra``, and ``__cause__`` is the original ``ImportError``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what = purpose or module
        raise MissingExtraError(
            f"{what} needs the {extra!r} extra: {install_hint(extra)}",
            extra=extra,
            module=module,
        ) from exc
