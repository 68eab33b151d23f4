"""memstrata: long-term memory for LLM agents."""

from .aio import AsyncMemory
from .config import RetrievalConfig
from .errors import (
    EmbedderError,
    EmbeddingModelMismatchError,
    MemstrataError,
    MemstrataRuntimeError,
    NotFoundError,
    ScopeRequiredError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    UsageError,
    ValidationError,
)
from .memory import Memory
from .models import Hit, HistoryEvent, MemoryKind, MemoryPage, MemoryRecord, Message

__all__ = [
    "AsyncMemory",
    "EmbedderError",
    "EmbeddingModelMismatchError",
    "Hit",
    "HistoryEvent",
    "Memory",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "MemstrataError",
    "MemstrataRuntimeError",
    "Message",
    "NotFoundError",
    "RetrievalConfig",
    "ScopeRequiredError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
]
__version__ = "0.1.0"
