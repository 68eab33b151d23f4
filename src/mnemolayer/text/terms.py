"""Text for the keyword index: segmentation for SQLite FTS5 and safe MATCH expressions.

SQLite FTS5's ``unicode61`` tokenizer splits text at spaces and punctuation, so a Chinese
or Japanese sentence (no spaces) becomes one long token and no word inside it can be
found. mnemolayer therefore pre-segments text before it goes into FTS5 and segments
queries the same way:

* Latin and other space-separated scripts: words (runs of letters, digits and combining
  marks), lower-cased.
* Chinese (runs of Han characters): the words and sub-words of ``jieba.cut_for_search``
  **plus** every character bigram, so a query still finds a word that jieba cut
  differently in the stored text (``拿铁`` in ``我每天早上喝榛子拿铁`` is cut as 拿/铁).
* Japanese and Korean (runs with kana or Hangul), which jieba does not know: character
  bigrams. A one-character run is kept as it is.

The stored string is the tokens joined by single spaces; ``unicode61`` then reads each
token back as one term. Queries become a list of terms (:func:`query_terms`) that
:func:`fts_match_expression` turns into an FTS5 expression in which every term is a
quoted string, so user input is never read as FTS5 syntax.

A plain store indexes each user's terms under the user's tag (:func:`user_term_tag`,
:func:`tag_terms`): ``kalomi`` of user ``u1`` is stored as ``<12 hex digits>kalomi``, so
the full-text index holds one posting list per user and term, and a search reads only
its user's postings, not those of every user of the store.

jieba is loaded on first use (about 0.5 s with its dictionary cache, 1.7 s without), once
per process and thread-safely, with its logging silenced and its dictionary cache kept
in the per-user cache directory (``<user cache dir>/mnemolayer/jieba``, falling back to
the temp directory).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
import threading
import unicodedata
from typing import Any

from mnemolayer.models import normalize_text

__all__ = [
    "contains_cjk",
    "fts_match_expression",
    "index_terms",
    "is_cjk",
    "is_stop_term",
    "query_terms",
    "tag_terms",
    "user_term_tag",
]

# Code point ranges (inclusive) of the letters that unicode61 cannot segment.
_HAN = (
    (0x3005, 0x3005),  # 々 ideographic iteration mark
    (0x3007, 0x3007),  # 〇
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x323AF),  # Extensions B-H and the compatibility supplement
)
_KANA = (
    (0x3041, 0x309F),  # Hiragana (with the voicing marks)
    (0x30A1, 0x30FA),  # Katakana (without ゠ and the ・ separator)
    (0x30FC, 0x30FF),  # ー prolonged sound mark, iteration marks, ヿ
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x1B000, 0x1B16F),  # Kana supplement and extended
)
_HANGUL = (
    (0x1100, 0x11FF),  # Jamo
    (0x3131, 0x318E),  # compatibility Jamo
    (0xA960, 0xA97F),  # Jamo extended A
    (0xAC00, 0xD7AF),  # syllables
    (0xD7B0, 0xD7FF),  # Jamo extended B
)


def _char_class(*groups: tuple[tuple[int, int], ...]) -> str:
    parts = [
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for group in groups
        for lo, hi in group
    ]
    return "[" + "".join(parts) + "]"


_CJK_CHAR = re.compile(_char_class(_HAN, _KANA, _HANGUL))
_CJK_RUN = re.compile(_char_class(_HAN, _KANA, _HANGUL) + "+")
_NOT_CHINESE = re.compile(_char_class(_KANA, _HANGUL))

# English words that carry no meaning for BM25 (they match almost every memory) and
# question words that occur in queries but not in the memories they ask about. The
# fragments ("s", "t", "don", ...) are what apostrophes leave behind.
_EN_STOP = frozenset(
    str.split(
        """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom whose why will
    with would you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn wouldn
    shouldn couldn
    """
    )
)

# Chinese function words: particles, pronouns, copula, common adverbs and question words.
# They are in nearly every memory (我, 的, 了, 是) or only in questions (吗, 什么, 哪里), so
# as OR-ed BM25 terms they pull in unrelated memories while adding almost no score.
# Content words a memory is about (喜欢, 名字, 时候) are kept on purpose.
_ZH_STOP = frozenset(
    str.split(
        """
    的 地 得 之 了 着 过 吗 呢 吧 啊 呀 哦 哈 嘛 么 啦 喔 嗯 噢 哇
    是 在 有 和 与 及 或 也 都 就 还 又 很 太 更 最 才 把 被 给 对 从 向 跟 比 让 为 于 以 而
    我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 咱 们 自己 大家 人家
    我的 你的 他的 她的 它的 我们的 你们的 他们的
    这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 这样 那样 这么 那么 此 其
    个 一 一个 一下 一些 一点 些 不 没 没有 要 会 能 想 可以 可能 应该 已经 曾经
    什么 什 怎么 怎 怎样 怎么样 如何 为什么 哪 哪里 哪儿 哪个 哪些 谁 几 多少 是否
    请问 告诉 记得 知道 问
    """
    )
)
_STOP = _EN_STOP | _ZH_STOP


@functools.cache
def _word_re() -> re.Pattern[str]:
    # A word is a run of letters, digits and combining marks: Python's ``\w`` would end
    # "हिन्दी" at its vowel signs, which unicode61 keeps inside the token. Built on first
    # use, since scanning the code space for marks takes a few tens of milliseconds.
    marks: list[tuple[int, int]] = []
    for cp in (*range(0x20000), *range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(cp)).startswith("M"):
            if marks and marks[-1][1] == cp - 1:
                marks[-1] = (marks[-1][0], cp)
            else:
                marks.append((cp, cp))
    return re.compile(r"(?:[^\W_]|" + _char_class(tuple(marks)) + ")+")


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is one Han, kana or Hangul letter (CJK punctuation is not).

    Args:
        ch: a one-character string; any other length gives ``False``.
    """
    return len(ch) == 1 and _CJK_CHAR.match(ch) is not None


def contains_cjk(text: str) -> bool:
    """Whether ``text`` has at least one Han, kana or Hangul letter."""
    return _CJK_CHAR.search(text) is not None


def index_terms(text: str) -> str:
    """The text to store in an FTS5 (``unicode61``) column for ``text``.

    Args:
        text: any text.

    Returns:
        NFC-normalised, lower-cased tokens joined by single spaces: words of other
        scripts as they are, Chinese as jieba words and sub-words plus character bigrams,
        Japanese and Korean as character bigrams. ``""`` when ``text`` has no word.
    """
    return " ".join(_tokens(text))


#: Length of a user's term tag (:func:`user_term_tag`): 12 hex digits, 48 bits.
USER_TAG_LEN = 12
# The tag is a polynomial hash of the user id's code points, base 31, modulo the largest
# prime below 2**48. Schema migration 7 (store/migrations.py) computes the same hash in
# SQL to convert existing stores, so both must change together (they never should).
_TAG_BASE = 31
_TAG_PRIME = 2**48 - 59


@functools.lru_cache(maxsize=65536)
def user_term_tag(user_id: str) -> str:
    """The prefix of a user's terms in a plain store's keyword index.

    ``h = 0; h = (31 * h + ord(ch)) mod (2**48 - 59)`` over the characters of
    ``user_id`` (a polynomial string hash, Karp & Rabin 1987), as 12 lower-case hex
    digits: only ASCII letters and digits, so ``unicode61`` keeps tag and term in one
    token. Two users whose tags collide (about 1 in 2**48 per pair) share posting
    lists; searches still filter by ``user_id``, so that costs time, never a wrong hit.

    Args:
        user_id: the user's id.

    Returns:
        A string of :data:`USER_TAG_LEN` characters ``[0-9a-f]``.
    """
    h = 0
    for ch in user_id:
        h = (h * _TAG_BASE + ord(ch)) % _TAG_PRIME
    return f"{h:0{USER_TAG_LEN}x}"


def tag_terms(tag: str, terms: str) -> str:
    """Space-separated ``terms`` (from :func:`index_terms`) each prefixed with ``tag``
    (``user_term_tag``): ``tag_terms("t", "a b") == "ta tb"``; ``""`` stays ``""``."""
    return " ".join(tag + t for t in terms.split())


def query_terms(text: str) -> list[str]:
    """The keyword-search terms of a query, segmented exactly like :func:`index_terms`.

    English stop words, Chinese function words and CJK bigrams made of two function
    characters (我是) are removed, unless that leaves nothing: a query of only
    ``"who am I"`` still searches those words.

    Args:
        text: the query.

    Returns:
        Distinct terms in the order they first occur; ``[]`` when the query has no word.
    """
    terms = list(dict.fromkeys(_tokens(text)))
    content = [t for t in terms if not _is_stop(t)]
    return content or terms


def is_stop_term(term: str) -> bool:
    """Whether ``term`` (a token of :func:`index_terms`) is an English stop word, a
    Chinese function word, or a CJK bigram of two function characters."""
    return _is_stop(term)


def _is_stop(term: str) -> bool:
    # A CJK bigram of two function characters (我是, 是谁, 给我) is as common as they are.
    if len(term) == 2 and is_cjk(term[0]):
        return term in _STOP or (term[0] in _STOP and term[1] in _STOP)
    return term in _STOP


def fts_match_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression that finds rows containing any of ``terms``.

    Each term becomes an FTS5 string (wrapped in double quotes, inner double quotes
    doubled), joined with ``OR``; inside a string FTS5 reads no operator (``AND``,
    ``NEAR``, ``*``, ``^``, ``:``, ``-``, parentheses), so the result can hold any user
    text. A term of several tokens (``"e-mail"``) is matched as a phrase. Pass the result
    as a bound parameter: ``... WHERE fts MATCH ?``.

    Args:
        terms: search terms, normally from :func:`query_terms`.

    Returns:
        The expression, or ``None`` when no term has a letter or digit (nothing to
        search for; the caller should skip keyword search rather than match everything).
    """
    word = _word_re()
    quoted = [
        '"' + term.replace("\x00", " ").replace('"', '""') + '"'
        for term in dict.fromkeys(terms)
        if isinstance(term, str) and word.search(term)
    ]
    return " OR ".join(quoted) if quoted else None


def _tokens(text: str) -> list[str]:
    text = normalize_text(text).lower()
    word = _word_re()
    out: list[str] = []
    pos = 0
    for run in _CJK_RUN.finditer(text):
        out += word.findall(text, pos, run.start())
        out += _cjk_tokens(run.group())
        pos = run.end()
    out += word.findall(text, pos)
    return out


def _cjk_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    if _NOT_CHINESE.search(run):
        return bigrams
    words = [w for w in _segmenter().cut_for_search(run) if not w.isspace()]
    # A bigram that jieba already gave as a word is not repeated, so a two-character
    # word is counted once per occurrence (BM25 term frequency stays honest).
    known = set(words)
    return words + [b for b in bigrams if b not in known]


_JIEBA_LOCK = threading.Lock()
_jieba: Any = None


def _segmenter() -> Any:
    """The shared ``jieba.Tokenizer``, initialised on first use (double-checked lock)."""
    global _jieba
    segmenter = _jieba
    if segmenter is None:
        with _JIEBA_LOCK:
            if _jieba is None:
                _jieba = _load_jieba()
            segmenter = _jieba
    return segmenter


def _load_jieba() -> Any:
    import jieba

    # jieba logs its start-up to stderr at DEBUG and a failed cache write at ERROR; both
    # are harmless (it then works from memory). Its logger is global to the process.
    jieba.setLogLevel(logging.CRITICAL)
    segmenter = jieba.Tokenizer()  # our own instance: jieba.dt's settings stay the caller's
    segmenter.tmp_dir = _jieba_cache_dir()
    segmenter.initialize()
    return segmenter


def _jieba_cache_dir() -> str | None:
    # jieba's default is one shared file in the temp dir, which another user may own
    # (mode 0600): then every process rebuilds the dictionary (1-2 s). A per-user
    # directory avoids that.
    import platformdirs

    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    candidates = [
        os.path.join(platformdirs.user_cache_dir("mnemolayer", appauthor=False), "jieba"),
        os.path.join(tempfile.gettempdir(), f"mnemolayer-jieba-{user}"),
    ]
    for path in candidates:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK | os.X_OK):
            return path
    return None  # jieba falls back to the temp dir, or to memory if that fails too
