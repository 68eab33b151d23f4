"""mnemolayer: long-term memory for LLM agents."""

from .aio import AsyncMemory
from .config import RetrievalConfig
from .deletion import DeletionReceipt
from .errors import (
    EmbedderError,
    EmbeddingModelMismatchError,
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
from .memory import Memory
from .memory_md import MarkdownImport
from .models import HistoryEvent, Hit, MemoryKind, MemoryPage, MemoryRecord, Message
from .session_api import SessionEnd

__all__ = [
    "AsyncMemory",
    "DeletionReceipt",
    "EmbedderError",
    "EmbeddingModelMismatchError",
    "HistoryEvent",
    "Hit",
    "MarkdownImport",
    "Memory",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "Message",
    "MnemolayerError",
    "MnemolayerRuntimeError",
    "NotFoundError",
    "RetrievalConfig",
    "ScopeRequiredError",
    "SessionEnd",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
]
__version__ = "0.1.0"
