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
from .models import HistoryEvent, Hit, MemoryKind, MemoryPage, MemoryRecord, Message
from .session_api import SessionEnd

__all__ = [
    "AsyncMemory",
    "EmbedderError",
    "EmbeddingModelMismatchError",
    "HistoryEvent",
    "Hit",
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
    "SessionEnd",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
]
__version__ = "0.1.0"
