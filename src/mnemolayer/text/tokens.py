"""Token counting: how many model tokens a text costs, for English, Chinese and the rest.

Budgets in mnemolayer (the working-memory window, the assembled context) are measured in
real tokenizer tokens, never estimated from characters: a Chinese sentence costs about
one token per character while English costs about one per word, so any fixed
characters-per-token ratio is wrong for one of them.

The seam is the :class:`TokenCounter` protocol. The bundled implementation,
:class:`QuicktokCounter`, runs the exact byte-pair encodings of the ``quicktok-v1``
package offline (its counts equal ``tiktoken``'s ``encode_ordinary`` for the OpenAI
encodings). Encodings (see :data:`ENCODINGS`):

* ``"o200k_base"`` (default): GPT-4o, o1, o3 and later OpenAI models.
* ``"cl100k_base"``: GPT-4, GPT-3.5-turbo and OpenAI's text-embedding-3 models.
* ``"o200k_harmony"``: GPT-OSS.
* ``"llama3"``: Llama 3, 3.1, 3.2 and 3.3.
* ``"qwen3"``: Qwen2, Qwen2.5 and Qwen3 (this encoding NFC-normalises text first).

Short aliases (``"o200k"``, ``"cl100k"``, ``"llama-3"``, ``"qwen"``) and model names known
to quicktok (``"gpt-4o"``, ``"gpt-4o-mini-2024-07-18"``, ``"meta-llama/Llama-3.1-8B"``,
``"Qwen2.5-7B-Instruct"``) resolve to their encoding, case-insensitively.

Each encoding's vocabulary is loaded once per process, on first use, under a lock, so
constructing a counter is cheap and many threads may share one.

Special-token strings such as ``"<|endoftext|>"`` inside the text are counted as the
plain text they are (never as control tokens), so user text cannot inject them.
Unpaired UTF-16 surrogates (left by a broken decode) are counted as U+FFFD.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mnemolayer.errors import ValidationError
from mnemolayer.protocols import TokenCounter

if TYPE_CHECKING:
    import quicktok

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "MESSAGE_OVERHEAD_TOKENS",
    "NAME_OVERHEAD_TOKENS",
    "REPLY_PRIMER_TOKENS",
    "ChatMessageLike",
    "QuicktokCounter",
    "TokenCounter",
    "count_messages",
    "get_token_counter",
    "resolve_encoding",
]

#: Encodings bundled with quicktok-v1, by their canonical names.
ENCODINGS: tuple[str, ...] = ("cl100k_base", "o200k_base", "o200k_harmony", "llama3", "qwen3")
DEFAULT_ENCODING = "o200k_base"

#: Short names accepted besides the canonical ones (all compared lower-cased).
_ALIASES: dict[str, str] = {
    "cl100k": "cl100k_base",
    "o200k": "o200k_base",
    "harmony": "o200k_harmony",
    "llama-3": "llama3",
    "llama_3": "llama3",
    "qwen": "qwen3",
    "qwen-3": "qwen3",
}

# Chat framing, from OpenAI's cookbook notebook "How to count tokens with tiktoken"
# (github.com/openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb,
# function num_tokens_from_messages, for gpt-3.5-turbo-0613, gpt-4 and the gpt-4o family):
# every message is wrapped as <|start|>{role}<|message|>{content}<|end|>, which costs 3
# tokens beyond the role and content; a ``name`` field costs 1 more; and every reply is
# primed with <|start|>assistant<|message|>, 3 tokens counted once per request.
#: Tokens of framing around each chat message, beyond its role and content.
MESSAGE_OVERHEAD_TOKENS = 3
#: Extra tokens for a message that carries a ``name`` field (beyond the name's own tokens).
NAME_OVERHEAD_TOKENS = 1
#: Tokens that prime the model's reply, counted once per non-empty request.
REPLY_PRIMER_TOKENS = 3


class ChatMessageLike(Protocol):
    """Any object with ``role`` and ``content`` string attributes (a stored chat turn)."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


_LOAD_LOCK = threading.Lock()
_LOADED: dict[str, quicktok.Tokenizer] = {}


def _load(encoding: str) -> quicktok.Tokenizer:
    """The quicktok tokenizer for a canonical encoding name, loaded once per process."""
    tokenizer = _LOADED.get(encoding)
    if tokenizer is not None:
        return tokenizer
    with _LOAD_LOCK:
        tokenizer = _LOADED.get(encoding)
        if tokenizer is None:
            import quicktok

            tokenizer = quicktok.get_encoding(encoding)
            _LOADED[encoding] = tokenizer
        return tokenizer


def _model_encoding(name: str) -> str | None:
    """Encoding of a model name known to quicktok (``"gpt-4o-2024-08-06"``), or ``None``."""
    import quicktok

    model = name.rsplit("/", 1)[-1]
    best: tuple[int, str] | None = None
    for prefix, encoding in quicktok.MODEL_TO_ENCODING.items():
        matches = model == prefix or model.startswith((prefix + "-", prefix + "."))
        if matches and (best is None or len(prefix) > best[0]):
            best = (len(prefix), encoding)
    return best[1] if best is not None else None


def resolve_encoding(name: str) -> str:
    """Canonical encoding name for an encoding name, alias or model name.

    Args:
        name: ``"o200k_base"``, an alias such as ``"cl100k"``, or a model name such as
            ``"gpt-4o"`` or ``"Qwen/Qwen2.5-7B-Instruct"``; case-insensitive.

    Returns:
        One of :data:`ENCODINGS`.

    Raises:
        ValidationError: (field ``"encoding"``) not a string, or a name that matches no
            bundled encoding; the message lists the valid ones.
    """
    if not isinstance(name, str):
        raise ValidationError("encoding", f"expected a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key in ENCODINGS:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    encoding = _model_encoding(key) if key else None
    if encoding in ENCODINGS:
        return encoding
    raise ValidationError(
        "encoding",
        f"unknown encoding {name!r}; valid: {', '.join(ENCODINGS)} "
        f"(aliases: {', '.join(sorted(_ALIASES))}; or a model name such as 'gpt-4o')",
    )


def _utf8_safe(text: str) -> str:
    """``text`` unchanged if it encodes as UTF-8; otherwise with surrogate pairs joined
    and unpaired surrogates replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class QuicktokCounter:
    """Exact token counts with one of quicktok's bundled encodings.

    Args:
        encoding: an encoding name, alias or model name (see :func:`resolve_encoding`);
            default ``"o200k_base"``.

    Raises:
        ValidationError: (field ``"encoding"``) unknown encoding.

    The vocabulary loads on first use (tens of milliseconds), once per process for all
    counters of that encoding. Instances hold no mutable state and are thread-safe.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.name: str = resolve_encoding(encoding)

    def __repr__(self) -> str:
        return f"QuicktokCounter({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuicktokCounter) and other.name == self.name

    def __hash__(self) -> int:
        return hash((QuicktokCounter, self.name))

    @property
    def _tokenizer(self) -> quicktok.Tokenizer:
        return _load(self.name)

    def count(self, text: str) -> int:
        """Number of tokens ``text`` encodes to.

        Args:
            text: any string; ``""`` costs 0.

        Returns:
            The token count, ``>= 0``.

        Raises:
            ValidationError: (field ``"text"``) ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise ValidationError("text", f"expected str, got {type(text).__name__}")
        if not text:
            return 0
        return int(self._tokenizer.count(_utf8_safe(text)))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of several texts.

        Args:
            texts: a sequence of n strings (not a bare string).

        Returns:
            A list of n non-negative ints, in the order of ``texts``.

        Raises:
            ValidationError: ``texts`` is a bare string (field ``"texts"``), or an item is
                not a string (field ``"texts[i]"``).
        """
        if isinstance(texts, str | bytes):
            raise ValidationError("texts", "expected a sequence of strings, got a single string")
        tokenizer = self._tokenizer
        counts: list[int] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValidationError(f"texts[{i}]", f"expected str, got {type(text).__name__}")
            counts.append(int(tokenizer.count(_utf8_safe(text))) if text else 0)
        return counts

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest leading part of ``text`` that costs at most ``max_tokens`` tokens.

        The text is encoded, its first ``max_tokens`` tokens are decoded, and bytes of a
        character that the last token splits are dropped, so the result never ends in a
        broken character. Because re-encoding a cut text can merge differently, the result
        is re-counted and cut one token shorter until it fits; ``count(result) <=
        max_tokens`` always holds.

        Args:
            text: any string.
            max_tokens: the budget in tokens, ``>= 0``.

        Returns:
            ``text`` itself when it fits; otherwise a prefix of it (for ``"qwen3"``, a
            prefix of its NFC form, since that encoding normalises; unpaired surrogates
            come back as U+FFFD). ``""`` when ``max_tokens`` is 0.

        Raises:
            ValidationError: ``text`` is not a string (field ``"text"``), or
                ``max_tokens`` is not a non-negative int (field ``"max_tokens"``).
        """
        if not isinstance(text, str):
            raise ValidationError("text", f"expected str, got {type(text).__name__}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ValidationError("max_tokens", f"expected an int >= 0, got {max_tokens!r}")
        if not text or max_tokens == 0:
            return ""
        tokenizer = self._tokenizer
        safe = _utf8_safe(text)
        ids = tokenizer.encode_ordinary(safe)
        if len(ids) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            raw = tokenizer.decode_bytes(ids[:keep])
            # A non-final incremental decode returns only complete characters.
            candidate = codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)
            if candidate and tokenizer.count(candidate) <= max_tokens:
                return candidate
            keep -= 1
        return ""


def get_token_counter(spec: TokenCounter | str | None = None) -> TokenCounter:
    """Resolve a token-counter argument to a quicktok counter (or the counter given).

    This is the quicktok backend's own resolver, for the text-level functions here and in
    :mod:`mnemolayer.extract`; the token-counter seam, with backends of one's own, is
    :func:`mnemolayer.registry.get_token_counter` (:data:`mnemolayer.registry.TOKEN_COUNTERS`).

    Args:
        spec: a :class:`TokenCounter` (returned as is), an encoding name, alias or model
            name (see :func:`resolve_encoding`), or ``None`` for the default
            (``"o200k_base"``).

    Returns:
        The counter. Vocabularies load on first use, so this is cheap.

    Raises:
        ValidationError: (field ``"encoding"``) unknown name, or neither a name nor an
            object with the ``TokenCounter`` attributes.
    """
    if spec is None:
        spec = DEFAULT_ENCODING
    if isinstance(spec, str):
        return QuicktokCounter(spec)
    if isinstance(spec, TokenCounter):
        return spec
    raise ValidationError(
        "encoding",
        f"expected a TokenCounter or one of {list(ENCODINGS)}, got {type(spec).__name__}",
    )


def _message_parts(message: Any, index: int) -> tuple[str, str, str | None]:
    """``(role, content, name)`` of one chat message in any accepted shape."""
    field = f"messages[{index}]"
    name: Any = None
    if isinstance(message, tuple):
        if len(message) != 2:
            raise ValidationError(
                field, f"expected a (role, content) pair, got {len(message)} items"
            )
        role, content = message
    elif isinstance(message, Mapping):
        if "role" not in message or "content" not in message:
            raise ValidationError(field, "a message mapping needs 'role' and 'content' keys")
        role, content, name = message["role"], message["content"], message.get("name")
    elif hasattr(message, "role") and hasattr(message, "content"):
        role, content = message.role, message.content
    else:
        raise ValidationError(
            field,
            f"expected a (role, content) tuple, a mapping or an object with role and content, "
            f"got {type(message).__name__}",
        )
    if content is None:  # an assistant turn that only called tools
        content = ""
    elif isinstance(content, list):
        content = _text_parts(content, field)
    for key, value in (("role", role), ("content", content)):
        if not isinstance(value, str):
            raise ValidationError(f"{field}.{key}", f"expected str, got {type(value).__name__}")
    if name is not None and not isinstance(name, str):
        raise ValidationError(f"{field}.name", f"expected str, got {type(name).__name__}")
    return role, content, name


def _text_parts(parts: list[Any], field: str) -> str:
    """Join the texts of OpenAI-style content parts (``[{"type": "text", "text": ...}]``)."""
    texts: list[str] = []
    for j, part in enumerate(parts):
        if (
            not isinstance(part, Mapping)
            or part.get("type") != "text"
            or not isinstance(part.get("text"), str)
        ):
            raise ValidationError(
                f"{field}.content[{j}]",
                "only text parts ({'type': 'text', 'text': str}) are counted",
            )
        texts.append(part["text"])
    return "".join(texts)


def count_messages(
    messages: Sequence[tuple[str, str] | Mapping[str, Any] | ChatMessageLike],
    counter: TokenCounter | str | None = None,
) -> int:
    """Tokens a list of chat messages costs as the prompt of a chat-completion request.

    Each message costs its role's and content's tokens plus
    :data:`MESSAGE_OVERHEAD_TOKENS` (3) of framing, plus :data:`NAME_OVERHEAD_TOKENS` (1)
    and the name's tokens when a mapping carries a ``"name"``; the request adds
    :data:`REPLY_PRIMER_TOKENS` (3) once for the primed reply. These are the figures of
    OpenAI's cookbook notebook "How to count tokens with tiktoken"
    (``num_tokens_from_messages``) for the GPT-3.5-turbo, GPT-4 and GPT-4o chat formats;
    other chat templates (Llama 3, Qwen) frame messages with a similar handful of special
    tokens, so the same figures serve as their budget estimate.

    Args:
        messages: ``(role, content)`` tuples, mappings with ``"role"`` and ``"content"``
            (and optionally ``"name"``; ``content`` may be ``None`` or a list of
            ``{"type": "text", "text": ...}`` parts), or objects with ``role`` and
            ``content`` attributes.
        counter: the tokenizer (anything :func:`get_token_counter` accepts; default
            ``"o200k_base"``).

    Returns:
        Total prompt tokens; ``0`` for no messages (no request is made).

    Raises:
        ValidationError: a message of another shape, or a role, content or name that is
            not a string (field ``"messages[i]..."``); an unknown encoding (field
            ``"encoding"``).
    """
    resolved = get_token_counter(counter)
    if isinstance(messages, str | bytes):
        raise ValidationError("messages", "expected a sequence of messages, got a string")
    texts: list[str] = []
    framing = 0
    for i, message in enumerate(messages):
        role, content, name = _message_parts(message, i)
        texts.extend((role, content))
        framing += MESSAGE_OVERHEAD_TOKENS
        if name is not None:
            texts.append(name)
            framing += NAME_OVERHEAD_TOKENS
    if not texts:
        return 0
    return sum(resolved.count_many(texts)) + framing + REPLY_PRIMER_TOKENS
