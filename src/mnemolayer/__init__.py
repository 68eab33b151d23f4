"""mnemolayer: long-term memory for LLM agents."""

from mnemolayer.aio import AsyncMemory
from mnemolayer.config import RetrievalConfig
from mnemolayer.errors import (
    EmbedderError,
    EmbedderUnavailableError,
    EmbeddingModelMismatchError,
    MissingExtraError,
    MnemolayerError,
    MnemolayerRuntimeError,
    NotFoundError,
    ScopeRequiredError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    UsageError,
    ValidationError,
)
from mnemolayer.layers.episodic.added import AddResult, SkippedMessage
from mnemolayer.layers.working.sessions import SessionEnd
from mnemolayer.memory import Memory
from mnemolayer.models import HistoryEvent, Hit, MemoryKind, MemoryPage, MemoryRecord, Message
from mnemolayer.privacy.erasure import DeletionReceipt
from mnemolayer.privacy.forget import ForgetReceipt
from mnemolayer.privacy.markdown import MarkdownImport

__all__ = [
    "AddResult",
    "AsyncMemory",
    "DeletionReceipt",
    "EmbedderError",
    "EmbedderUnavailableError",
    "EmbeddingModelMismatchError",
    "ForgetReceipt",
    "HistoryEvent",
    "Hit",
    "MarkdownImport",
    "Memory",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "Message",
    "MissingExtraError",
    "MnemolayerError",
    "MnemolayerRuntimeError",
    "NotFoundError",
    "RetrievalConfig",
    "ScopeRequiredError",
    "SessionEnd",
    "SkippedMessage",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
]
__version__ = "0.1.0"
