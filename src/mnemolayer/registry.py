"""Choosing an extractor by name (``Memory(extractor=...)``, ``MNEMOLAYER_EXTRACTOR``)."""

from __future__ import annotations

from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import Extractor

__all__ = ["EXTRACTORS", "get_extractor"]

#: Names accepted by :func:`get_extractor`.
EXTRACTORS = ("rules", "llm", "none")


def get_extractor(spec: Extractor | str | None) -> Extractor | None:
    """``"rules"`` → :class:`~.rules.RuleExtractor`; ``"llm"`` →
    :class:`~.llm.LLMExtractor` configured from ``MNEMOLAYER_LLM_*`` (rules as fallback);
    ``"none"`` or ``None`` → no extraction; an :class:`Extractor` is used as is.

    Raises:
        ValidationError: unknown name or an object without ``extract`` (field ``extractor``).
    """
    if spec is None or spec == "none":
        return None
    if isinstance(spec, str):
        if spec == "rules":
            from mnemolayer.extract.rules.extractor import RuleExtractor

            return RuleExtractor()
        if spec == "llm":
            from mnemolayer.config import settings_from_env
            from mnemolayer.extract.llm import LLMExtractor

            settings = settings_from_env().llm
            if settings is None:
                raise ValidationError(
                    "extractor",
                    "'llm' needs MNEMOLAYER_LLM_BASE_URL and MNEMOLAYER_LLM_MODEL (an "
                    "OpenAI-compatible endpoint); or pass an LLMExtractor",
                )
            return LLMExtractor(settings)
        raise ValidationError(
            "extractor", f"unknown extractor {spec!r}; choose one of {', '.join(EXTRACTORS)}"
        )
    if not isinstance(spec, Extractor):
        raise ValidationError(
            "extractor", "must have an extract(text, speaker=, timestamp=) method"
        )
    return spec
