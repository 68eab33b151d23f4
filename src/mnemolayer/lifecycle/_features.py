"""What :mod:`mnemolayer.lifecycle.dedup` compares: a text reduced to its facts' parts.

:func:`analyse` turns one text (English, Chinese or both mixed) into

* ``numbers``: every number, date part and time, normalised (``"two"`` and ``"2"`` and
  ``"两"`` are ``"2"``; ``"10 am"`` is ``"10am"``; ``"Monday"`` and ``"周一"`` are
  ``"weekday:1"``; ``"June"`` is ``"month:6"``);
* ``negations``: how many negations it has (``not``/``never``/``n't``; 不/没/别/未/无,
  except inside words where they do not negate: 不错, 非常, 特别…);
* ``markers``: change-of-state markers, ``"cease"`` (no longer, anymore, quit, 不再, 戒)
  and ``"past"`` (used to, formerly, 以前, 曾经);
* ``entities``: names written with capitals (Latin script), in order;
* ``units``: the content words (English: lower-cased, lightly stemmed, without function
  words; Chinese: content characters, after a small table of synonyms and without
  function characters), as a sequence;
* ``surface``: the text lower-cased with punctuation and spacing collapsed;
* ``comparison``: whether it compares (over, than, rather, 而不是, 比), where order matters.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

__all__ = ["Features", "analyse"]

_HAN_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_HAN_CLASS}]")

# -- numbers -------------------------------------------------------------------------------

_EN_UNITS = {
    w: i
    for i, w in enumerate(
        str.split(
            "zero _ two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen"
        )
    )
    if w != "_"  # "one" is a pronoun as often as a number ("a blue one")
}
_EN_TENS = {
    w: 10 * i
    for i, w in enumerate(str.split("_ _ twenty thirty forty fifty sixty seventy eighty ninety"))
    if w != "_"
}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_MONTHS = str.split(
    "january february march april may june july august september october november december"
)
_WEEKDAYS = str.split("monday tuesday wednesday thursday friday saturday sunday")
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_ZH_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
_ZH_NUMERAL = re.compile("[零〇一二两三四五六七八九十百千万亿]+")
# A lone 一 is a number only before a unit of time, date or measure (一点, 一岁), or in a
# date (第一, 初一); elsewhere it is part of a word (一起, 一直, 一样).
_ZH_ONE_NEXT = set("号日月点岁年元块楼层斤米公分秒倍")
_ZH_ONE_PREV = set("第初")
_ZH_WEEKDAY = re.compile("(?:周|星期|礼拜)([一二三四五六日天])")
_DIGITS = re.compile(
    r"(\d+(?:,\d{3})+|\d+(?:\.\d+)?)(?:st|nd|rd|th)?(\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z]))?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def _zh_value(run: str) -> int:
    """The value of a Chinese numeral (三千五百 → 3500, 十五 → 15, 一三八 → 138)."""
    if not any(ch in _ZH_UNITS or ch in _ZH_BIG for ch in run):
        return int("".join(str(_ZH_DIGITS[ch]) for ch in run))
    total = section = digit = 0
    for ch in run:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            section += (digit or 1) * _ZH_UNITS[ch]
            digit = 0
        else:
            total += (section + digit) * _ZH_BIG[ch]
            section = digit = 0
    return total + section + digit


def _zh_numbers(text: str, found: list[str]) -> str:
    """Collect the Chinese numerals of ``text`` into ``found``; return the text without them."""

    def weekday(m: re.Match[str]) -> str:
        d = m.group(1)
        found.append(f"weekday:{7 if d in '日天' else _ZH_DIGITS[d]}")
        return " "

    text = _ZH_WEEKDAY.sub(weekday, text)
    out: list[str] = []
    pos = 0
    for m in _ZH_NUMERAL.finditer(text):
        run, start, end = m.group(), m.start(), m.end()
        nxt = text[end : end + 1]
        prev = text[start - 1 : start]
        if run[0] in "百千万亿":  # 千万 (by all means), 万一 (in case): not amounts
            continue
        if run == "一" and nxt not in _ZH_ONE_NEXT and prev not in _ZH_ONE_PREV:
            continue
        if run == "十" and nxt == "分" and text[end + 1 : end + 2] != "钟":
            continue  # 十分 = "very"; 十分钟 = ten minutes
        value = _zh_value(run)
        found.append(str(value))
        out.append(text[pos:start] + " ")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _en_numbers(text: str, found: list[str]) -> str:
    """Collect digits, number words, months and weekdays; return the text without them."""

    def digits(m: re.Match[str]) -> str:
        value = m.group(1).replace(",", "")
        suffix = (m.group(2) or "").replace(".", "").strip().lower()
        found.append(value + suffix)
        return " "

    text = _DIGITS.sub(digits, text)
    words = list(_WORD.finditer(text))
    keep: list[tuple[int, int]] = []
    value: int | None = None
    for i, m in enumerate(words):
        w = m.group().lower()
        near_digit = False
        if w == "may":  # the month only next to a day number ("May 3", "3 May")
            near_digit = bool(re.search(r"\d\s*$", text[: m.start()])) or bool(
                re.match(r"\s*\d", text[m.end() :])
            )
        if w in _WEEKDAYS or (w.endswith("s") and w[:-1] in _WEEKDAYS):
            found.append(f"weekday:{_WEEKDAYS.index(w.rstrip('s')) + 1}")
        elif w in _MONTHS and (w != "may" or near_digit):
            found.append(f"month:{_MONTHS.index(w) + 1}")
        elif w in _EN_UNITS or w in _EN_TENS or (w in _EN_SCALE and value is not None):
            if w in _EN_SCALE and value is not None:
                value *= _EN_SCALE[w]
            elif value is not None and w in _EN_UNITS and value % 10 == 0 and value >= 20:
                value += _EN_UNITS[w]
            else:
                if value is not None:
                    found.append(str(value))
                value = _EN_UNITS.get(w, _EN_TENS.get(w))
            nxt = words[i + 1].group().lower() if i + 1 < len(words) else ""
            if not (nxt in _EN_UNITS or nxt in _EN_SCALE):
                found.append(str(value))
                value = None
        else:
            continue
        keep.append((m.start(), m.end()))
    if value is not None:
        found.append(str(value))
    for start, end in reversed(keep):
        text = text[:start] + " " + text[end:]
    return text


# -- English ---------------------------------------------------------------------------------

_EN_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"\bcan'?t\b|\bcannot\b", "can not"),
        (r"\bwon'?t\b", "will not"),
        (r"n't\b", " not"),
        (r"'m\b", " am"),
        (r"'re\b", " are"),
        (r"'ve\b", " have"),
        (r"'ll\b", " will"),
        (r"'d\b", " would"),
        (r"'s\b|s'(?=\s|$)", ""),
        (r"\bcan not stand\b", "hate"),
        (r"\bno longer\b|\bnot any ?more\b|\bany ?more\b", " _cease_ "),
        (r"\b(?:stopped|quit|gave up)\b", " _cease_ "),
        (r"\bused to\b|\bformerly\b|\bpreviously\b", " _past_ "),
        (r"\byears? old\b", " "),
        (r"\b(?:is |are )?(?:called|named)\b|\bname is\b|\bname\b", " "),
    )
)
_EN_NEGATION = frozenset(str.split("not no never none nobody nothing neither nor without nowhere"))
_EN_STOP = frozenset(
    str.split(
        """
    a an the i me my mine myself we us our ours you your yours he him his she her hers it
    its they them their theirs this that these those is am are was were be been being have
    has had having do does did doing will would shall should can could may might must to of
    in on at by for with from into onto about as than then so and or but if because while
    when where which who whom whose what how there here also too very really just actually
    quite pretty totally definitely absolutely basically literally please some any all each
    every both either one ones lot lots get got going gonna let up out over again now still
    even ever yet already currently right well oh s
    """
    )
)
_EN_SYNONYMS = {
    "mum": "mom",
    "mommy": "mom",
    "mother": "mom",
    "dad": "father",
    "daddy": "father",
    "kid": "child",
    "kids": "child",
    "children": "child",
    "favourite": "favorite",
    "colour": "color",
    "neighbour": "neighbor",
    "grey": "gray",
    "theatre": "theater",
    "centre": "center",
}


def _stem(word: str) -> str:
    """A light English stemmer, the same on both sides of a comparison (likes → like,
    lived → liv, running → run); not linguistics, only a key."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ches", "shes", "xes", "sses", "zes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


# -- Chinese ---------------------------------------------------------------------------------

# Longest first, so 妈妈 is read before 妈. Synonyms map to one form; naming words and
# particles that add nothing to a fact map to a space.
_ZH_TABLE = {
    "不怎么": "不太",
    "最爱": "最喜欢",
    "不爱": "不喜欢",
    "爱吃": "喜欢吃",
    "爱喝": "喜欢喝",
    "爱看": "喜欢看",
    "喜爱": "喜欢",
    "号码": "号",
    "老婆": "妻子",
    "太太": "妻子",
    "爱人": "妻子",
    "老公": "丈夫",
    "妈妈": "母亲",
    "老妈": "母亲",
    "妈": "母亲",
    "爸爸": "父亲",
    "老爸": "父亲",
    "爸": "父亲",
    "闺女": "女儿",
    "计划": "打算",
    "记得": "记住",
    "搬到": "搬去",
    "名字": " ",
    "名叫": " ",
    "叫做": " ",
    "叫": " ",
    "非常": " ",
    "特别": " ",
    "真的": " ",
    "从来": " ",
    "已经": " ",
    "请": " ",
}
_ZH_TABLE_RE = re.compile("|".join(sorted(_ZH_TABLE, key=len, reverse=True)))
_ZH_DATE_HAO = re.compile(r"(?<=[\d零〇一二两三四五六七八九十])号")
_ZH_NEG_CHARS = set("不没别未无非勿莫")
_ZH_NOT_NEGATION = re.compile(
    "不得不|差不多|了不起|对不起|不好意思|不错|不过|不少|不同|不久|不断|不仅|不管|不但|不论|"
    "不如|不然|没关系|非常|除非|无论|无聊|莫名|特别|别人|别的|分别|区别|告别|级别|性别|类别|"
    "别墅|个别|识别|差别|离别|辨别"
)
_ZH_MARKERS = (
    (re.compile("不再|再也不|戒"), "cease"),
    (re.compile("以前|曾经|之前|原来|过去"), "past"),
)
_ZH_STOP = frozenset(
    "我你您他她它们的地得了着过吗呢吧啊呀嘛哦啦哈是在和与跟同也都就还又很太挺蛮超真每要会能一"
    "这那个只辆名位件张种些把被给对从向让为于以而其之所此"
)

# Words that make order matter: "tea over coffee" is not "coffee over tea".
_COMPARISON = re.compile(
    r"\b(?:over|than|instead of|rather|versus|vs|prefer\w* \w+ to)\b|而不是|比|胜过|不如|还是"
)
_ENTITY = re.compile(r"[^\W\d_][\w\-]*(?:'[^\W\d_]+)?")


@dataclass(frozen=True)
class Features:
    """The parts of one text that near-duplicate detection compares (module docstring)."""

    numbers: Counter[str]
    negations: int
    markers: frozenset[str]
    entities: tuple[str, ...]
    lower_words: frozenset[str]
    units: tuple[str, ...]
    han_units: tuple[str, ...]
    surface: str
    comparison: bool


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    for quote in "\u2018\u2019\u02bc\u00b4`":
        text = text.replace(quote, "'")
    return text


def _entities(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """Capitalised words (of scripts with case) not at the start of a sentence (or there,
    when not a function word), in order; and the words written in lower case."""
    text = _HAN.sub(" ", text)
    cased = [c for c in text if c.isupper() or c.islower()]
    shouting = len(cased) >= 4 and sum(c.isupper() for c in cased) > 0.8 * len(cased)
    found: list[str] = []
    lower: set[str] = set()
    for m in _ENTITY.finditer(text):
        word = m.group()
        key = word.lower().split("'")[0]
        if not any(c.isupper() for c in word):
            if any(c.islower() for c in word):
                lower.add(key)
            continue
        if shouting or key == "i" or key in _MONTHS or key.rstrip("s") in _WEEKDAYS:
            continue
        before = text[: m.start()].rstrip()
        initial = not before or before[-1] in '.!?:;"('
        if initial and (key in _EN_STOP or key in _EN_NEGATION):
            continue
        found.append(key)
    return tuple(found), frozenset(lower)


def _zh_part(text: str) -> tuple[int, set[str], list[str]]:
    """Negations, markers and content characters of the Chinese in ``text``."""
    text = _ZH_TABLE_RE.sub(lambda m: _ZH_TABLE[m.group()], text)
    markers = {name for pattern, name in _ZH_MARKERS if pattern.search(text)}
    masked = _ZH_NOT_NEGATION.sub(lambda m: "_" * len(m.group()), text)
    negations = sum(ch in _ZH_NEG_CHARS for ch in masked)
    for pattern, _name in _ZH_MARKERS:
        masked = pattern.sub(" ", masked)
    units = [ch for ch in masked if _HAN.match(ch) and ch not in _ZH_STOP]
    units = [ch for ch in units if ch not in _ZH_NEG_CHARS]
    return negations, markers, units


def _en_part(text: str) -> tuple[int, set[str], list[str]]:
    """Negations, markers and content words of the Latin-script text in ``text``."""
    low = _HAN.sub(" ", text.lower())
    for pattern, repl in _EN_REWRITES:
        low = pattern.sub(repl, low)
    negations = 0
    markers: set[str] = set()
    units: list[str] = []
    for token in re.findall(r"_[a-z]+_|[^\W_]+", low):
        if token.startswith("_"):
            markers.add(token.strip("_"))
        elif token in _EN_NEGATION:
            negations += 1
        elif token not in _EN_STOP:
            units.append(_stem(_EN_SYNONYMS.get(token, token)))
    return negations, markers, units


@functools.lru_cache(maxsize=4096)
def analyse(text: str) -> Features:
    """The :class:`Features` of ``text`` (cached; texts are compared many times)."""
    norm = _ZH_DATE_HAO.sub("日", _normalise(text))
    found: list[str] = []
    rest = _zh_numbers(_en_numbers(norm, found), found)
    entities, lower_words = _entities(norm)
    zh_neg, zh_markers, han_units = _zh_part(rest)
    en_neg, en_markers, en_units = _en_part(rest)
    # Without a letter or digit (emoji, punctuation), the text itself is its surface; a
    # question keeps its mark ("Anna is coming?" does not state that she is).
    surface = " ".join(re.sub(r"[\W_]+", " ", norm.lower()).split()) or " ".join(norm.split())
    if "?" in norm:
        surface += " ?"
    return Features(
        numbers=Counter(found),
        negations=zh_neg + en_neg,
        markers=frozenset(zh_markers | en_markers),
        entities=entities,
        lower_words=lower_words,
        units=tuple(en_units + han_units),
        han_units=tuple(han_units),
        surface=surface,
        comparison=_COMPARISON.search(norm.lower()) is not None,
    )
