"""Words and phrases: jieba POS tags on short spans, and the recognisers built on them.

Names of people and pets, places, organisations, schools, jobs, fields and languages,
noun phrases and numbers, and the trimming of objects. jieba (the tokenizer
:mod:`mnemolayer.text.terms` already holds, plus its POS tables) is loaded on first use, once
per process, thread-safely; tags are computed only on the short spans a rule needs (a
head, an object, a clause) and cached.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from typing import Any

from mnemolayer.extract.dates import chinese_number
from mnemolayer.extract.rules.zh.lexicon import (
    ANIMALS,
    COMPANIES,
    COUNTRIES,
    CUT_CONJ,
    DEMONSTRATIVE,
    FIELD_ENDINGS,
    FIELDS,
    HAN,
    JOB_ENDINGS,
    JOBS,
    KIN,
    LANGUAGES,
    LATIN_NAME,
    LEAD_MEASURE,
    LIST_WORDS,
    NICKNAME,
    NOT_FIELDS,
    NOT_JOBS,
    NOT_NAMES,
    NOT_NICKNAMES,
    NOT_PET_NAMES,
    ORG_ENDINGS,
    PLACE_CHARS,
    PLACE_ENDINGS,
    SCHOOL_ENDINGS,
    SCHOOL_SHORT,
    SCHOOLS,
    SURNAMES,
    TIME,
    TITLE_NAME,
    TRAIL,
    TRANSLIT,
    VAGUE,
    animal_kind,
)


class _POSCache:
    """jieba POS tagging on short spans, loaded once per process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tagger: Any = None

    def tagger(self) -> Any:
        tagger = self._tagger
        if tagger is None:
            with self._lock:
                if self._tagger is None:
                    self._tagger = self._load()
                tagger = self._tagger
        return tagger

    @staticmethod
    def _load() -> Any:
        import jieba
        import jieba.posseg

        from mnemolayer.text.terms import _segmenter

        class SharedTagger(jieba.posseg.POSTokenizer):  # type: ignore[misc]
            """A tagger over an existing tokenizer and word→tag table: loading a second
            copy of jieba's dictionary would cost ~45 MB and ~0.2 s for the same data."""

            def __init__(self, tokenizer: Any, word_tag_tab: dict[str, str]) -> None:
                self.tokenizer = tokenizer
                self.word_tag_tab = word_tag_tab

        segmenter = _segmenter()  # the tokenizer the keyword index already holds
        default = jieba.posseg.dt  # built on import, with the default dictionary's tags
        if segmenter.dictionary == jieba.DEFAULT_DICT and default.word_tag_tab:
            return SharedTagger(segmenter, default.word_tag_tab)
        return jieba.posseg.POSTokenizer(segmenter)


_POS = _POSCache()


@functools.lru_cache(maxsize=16384)
def pos_tags(text: str) -> tuple[tuple[str, str], ...]:
    """``(word, POS tag)`` pairs of a short span (cached: heads and objects repeat)."""
    return tuple((p.word, p.flag) for p in _POS.tagger().lcut(text))


def dictionary_tag(word: str) -> str | None:
    """jieba's dictionary tag of ``word`` (``None`` if it is not a dictionary word)."""
    tag: str | None = _POS.tagger().word_tag_tab.get(word)
    return tag


_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "nrf"})
_NOT_NAME_TAGS = frozenset(
    {"v", "vn", "d", "p", "c", "u", "uj", "ul", "r", "m", "t", "f", "q", "y", "e"}
)
_NOT_NICKNAME_TAGS = frozenset({"d", "t", "ad", "m", "r", "e", "y", "o", "u", "c", "p"})


def _is_nickname(text: str) -> bool:
    """A doubled syllable used as a name (``朵朵``, ``乐乐``), not a word (``刚刚``)."""
    if not NICKNAME.fullmatch(text) or text in NOT_NICKNAMES or text in KIN:
        return False
    return dictionary_tag(text) not in _NOT_NICKNAME_TAGS


def is_name(text: str, *, after_relation: bool = False) -> bool:
    """Whether ``text`` reads as a person's (or pet's) name: a capitalised Latin name, a
    surname with ``小``/``老`` (``小张``, ``老周``) or a title (``王阿姨``, ``陈老师``), or
    two to four Han characters that jieba tags as a name, that start with ``小``/``老``/
    ``阿`` or a common surname, or that look transliterated — and that are not a
    dictionary word of another kind. ``after_relation`` (``我妹妹小雨``) also accepts
    doubled nicknames (``朵朵``) and any two- or three-character word jieba does not
    know."""
    if not text:
        return False
    if LATIN_NAME.fullmatch(text):
        return True
    if not re.fullmatch(f"[{HAN}]{{2,4}}", text) or text in NOT_NAMES:
        return False
    if text.endswith(ORG_ENDINGS + SCHOOL_ENDINGS) and len(text) > 2:
        return False  # 幼儿园, 研究所: jieba's dictionary tags a few of them as names
    if len(text) > 2 and text[-1] in "园院馆店厅站所室房吧厂":
        return False
    if len(text) == 2 and text[0] in "小老" and text[1] in SURNAMES:
        return True  # 小张, 老周 (jieba's dictionary calls some of them nouns)
    if TITLE_NAME.fullmatch(text):
        return True
    if after_relation and _is_nickname(text):
        return True
    tag = dictionary_tag(text)
    if tag is not None and tag not in _NAME_TAGS:
        return False
    tags = pos_tags(text)
    if len(tags) == 1 and tags[0][1] in _NAME_TAGS:
        return True
    if any(t in _NOT_NAME_TAGS for _w, t in tags):
        return False  # "小李搬": a verb is not part of a name
    if text[0] in "小老阿" and len(text) <= 3:
        return True
    if len(text) <= 3 and text[0] in SURNAMES and tag is None:
        return True
    if all(ch in TRANSLIT for ch in text):
        return True
    return after_relation and tag is None and len(text) <= 3


def trim(text: str) -> str:
    """``text`` without edge particles and leading measure words: ``一只猫了`` → ``猫``."""
    text = text.strip()
    for _ in range(3):
        before = text
        text = TRAIL.sub("", text)
        text = LEAD_MEASURE.sub("", text)
        text = text.strip(" ,:;\"'“”《》「」()（）")
        if text == before:
            break
    return text


def cut(text: str) -> str:
    """``text`` up to the first linking word that starts a new thought (``因为``…)."""
    m = CUT_CONJ.search(text)
    return text[: m.start()] if m else text


NOUN_TAGS = frozenset(
    {"n", "nr", "nrt", "nrfg", "nrf", "ns", "nt", "nz", "nl", "ng", "eng", "j", "s", "an", "x", "l"}
)


def noun_phrase(text: str, *, max_len: int = 12) -> str:
    """The noun phrase ``text`` starts with (jieba POS tags): ``上海已经五年了`` → ``上海``,
    ``一个婚礼`` → ``婚礼``, ``朋友的婚礼`` → ``朋友的婚礼``, ``附近的公园`` → itself.
    Empty if it starts with no noun."""
    text = trim(text)
    pairs = pos_tags(text) if text else ()
    i = 0
    while i < len(pairs) and pairs[i][1] in ("m", "q", "mq"):
        i += 1  # a leading count ("一个", "两只")
    words: list[str] = []
    nouns = 0

    def tag_is_latin(k: int) -> bool:
        return k < len(pairs) and re.fullmatch("[A-Za-z][A-Za-z0-9]*", pairs[k][0]) is not None

    for j in range(i, len(pairs)):
        word, tag = pairs[j]
        if word == " " and words and re.search("[A-Za-z]$", words[-1]) and tag_is_latin(j + 1):
            words.append(word)  # "New York"
            continue
        if not re.search(f"[{HAN}A-Za-z0-9]", word):
            break
        followed_by_de = j + 1 < len(pairs) and pairs[j + 1][0] == "的"
        if (
            tag in NOUN_TAGS
            or (len(word) >= 2 and word[-1] in PLACE_CHARS)  # jieba tags 超市 as a verb
            or (tag in ("f", "vn") and nouns)
        ):
            words.append(word)
            nouns += 1
        elif (word == "的" and words) or (not words and tag in ("f", "a", "v") and followed_by_de):
            words.append(word)  # "朋友的婚礼", "附近的公园"
        else:
            break
    while words and words[-1] == "的":
        words.pop()
    phrase = "".join(words)
    return phrase if nouns and len(phrase) <= max_len else ""


def clean_object(text: str, *, max_len: int = 14) -> str:
    """A free-text object (a liked activity, a plan): cut at linking words, trimmed,
    refused (``""``) when it points elsewhere (``这个``, ``你``) or is too long."""
    text = trim(cut(text))
    if not text or len(text) > max_len or DEMONSTRATIVE.match(text):
        return ""
    if text in VAGUE or "你" in text or "您" in text:
        return ""
    if not re.search(f"[{HAN}A-Za-z]", text):
        return ""
    return text


def split_list(text: str) -> list[str]:
    """``绘画、弹钢琴和品茶`` → ``[绘画, 弹钢琴, 品茶]``: split at list words that jieba
    reads as words of their own (``和`` in ``和平`` is not one), unless the phrase is
    prepositional (``在海滩、山脉和湖泊附近拍摄``)."""
    if not any(w in text for w in LIST_WORDS) or re.match("[在和跟与给对把被从]", text):
        return [text]
    parts: list[str] = []
    current = ""
    for word, _tag in pos_tags(text):
        if word in LIST_WORDS:
            if not current:
                return [text]  # "和朋友一起爬山": not a list
            parts.append(current)
            current = ""
        else:
            current += word
    if not current:
        return [text]
    parts.append(current)
    if any(len(p) > 10 for p in parts):
        return [text]
    return parts


def is_place(text: str) -> bool:
    """A named place: jieba tags it as one (or as a foreign name, ``波尔图``), it ends
    like one (``市``, ``区``…), or it is a capitalised Latin word."""
    if not text or text in VAGUE:
        return False
    if text in COUNTRIES or LATIN_NAME.fullmatch(text):
        return True
    tags = pos_tags(text)
    if any(tag in ("ns", "nrt") for _w, tag in tags):
        return True
    if len(tags) == 1 and tags[0][1] in ("nr", "x", "nz") and len(text) >= 2:
        return True
    return len(text) >= 2 and text.endswith(PLACE_ENDINGS) and text not in ("中国人",)


def is_org(text: str) -> bool:
    """An organisation: a known company, an organisation ending (``公司``, ``银行``…),
    jieba's organisation / proper-noun tags, or a Latin name."""
    if not text or text in VAGUE:
        return False
    if (
        text in COMPANIES
        or text in SCHOOLS
        or re.fullmatch(r"[A-Za-z][A-Za-z0-9&.\- ]{0,30}", text)
    ):
        return True
    if text.endswith(ORG_ENDINGS) and len(text) > 2:
        return True
    return any(tag in ("nt", "nz", "nrt", "eng") for _w, tag in pos_tags(text))


def is_only_place(text: str) -> bool:
    """A city, province or country and nothing more (``北京``): not an employer."""
    if text in COMPANIES:
        return False  # jieba tags 京东 as a place
    if text in COUNTRIES:
        return True
    tags = pos_tags(text)
    if len(tags) == 1 and tags[0][1] == "ns":
        return True
    return text.endswith(("市", "省", "区", "县", "国")) and not text.endswith(ORG_ENDINGS)


def is_school(text: str) -> bool:
    """A named school or university (``北京大学``, ``清华``), not ``大学`` alone."""
    if not text or text in VAGUE:
        return False
    if text in SCHOOLS:
        return True
    if text.endswith(SCHOOL_ENDINGS):  # but not a bare "大学"
        return text not in ("大学", "中学", "小学", "高中", "初中", "学校", "学院", "幼儿园")
    if len(text) >= 3 and text.endswith(SCHOOL_SHORT):
        return True  # 上海交大, 华中科大
    return any(tag == "nt" for _w, tag in pos_tags(text))


def is_job(text: str) -> bool:
    """A job title: a known one (``护士``) or one ending like one (``软件工程师``)."""
    if not text or text in NOT_JOBS or len(text) > 10:
        return False
    if text in JOBS:
        return True
    if text.endswith(JOB_ENDINGS) and len(text) >= 2:
        return not text.endswith(tuple(NOT_JOBS))
    return False


def is_field(text: str) -> bool:
    """A field of study or a language (``计算机``, ``心理学``, ``日语``)."""
    if not text or text in NOT_FIELDS or len(text) > 10 or "的" in text:
        return False
    return text in FIELDS or text in LANGUAGES or (len(text) >= 3 and text.endswith(FIELD_ENDINGS))


def is_language(text: str) -> bool:
    """A language or dialect (``英语``, ``粤语``, ``上海话``)."""
    return text in LANGUAGES or (
        re.fullmatch(f"[{HAN}]{{1,4}}语", text) is not None and text not in NOT_FIELDS
    )


def number(text: str) -> int | None:
    """``28`` / ``二十八`` / ``十八`` / ``一百零二`` → the integer (``None`` if unreadable)."""
    return chinese_number(text)


_PET_NAME_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "nz", "ng", "nl", "x", "j", "eng"})


def pet_name(text: str) -> str:
    """``text`` when it reads as a pet's name: a person-like name, a nickname (``团子``,
    ``可乐``, ``布丁``: pets are often named after food), else ``""``."""
    if not text or text in ANIMALS or text in NOT_PET_NAMES or text in NOT_NAMES:
        return ""
    if is_name(text, after_relation=True):
        return text
    if not re.fullmatch(f"[{HAN}]{{2,3}}|[A-Za-z]{{2,20}}", text):
        return ""
    tags = pos_tags(text)
    return text if len(tags) == 1 and tags[0][1] in _PET_NAME_TAGS else ""


def word_bounds(text: str) -> set[int]:
    """The offsets in ``text`` where jieba's words start or end."""
    return {0, *itertools.accumulate(len(w) for w, _t in pos_tags(text))}


def leading_pet_name(text: str) -> str:
    """The pet name ``text`` starts with (``团子今天又…`` → ``团子``), or ``""``."""
    latin = re.match(r"[A-Z][a-zA-Z'\-]{1,20}", text)
    if latin:
        return latin.group(0)
    pairs = pos_tags(text)
    if not pairs:
        return ""
    if len(pairs) > 1 and pairs[1][0] in ("的", "粮", "砂"):
        return ""  # "我的猫咪团子的…" is about something of the pet's
    return pet_name(pairs[0][0]) or leading_name(text)


def strip_time(text: str) -> str:
    """``text`` without its time words (``下个月去日本`` → ``去日本``)."""
    return re.sub(TIME, "", text)


_NOT_PET_NAME_TAGS = frozenset(
    {"r", "u", "ul", "uj", "ud", "ug", "uz", "uv", "p", "c", "d", "t", "m", "q", "y", "e", "o", "f"}
)


def is_pet_called(text: str) -> bool:
    """After ``我的猫叫`` / ``名字叫`` / ``取名叫``: a word that can be the pet's name
    (``闪电``, ``年糕``, ``Lucky``), not the rest of a sentence (``得很凶``, ``我起床``)."""
    if not text or animal_kind(text) or text in NOT_NAMES or text in NOT_PET_NAMES:
        return False
    if LATIN_NAME.fullmatch(text) or re.fullmatch(r"[A-Za-z]{2,20}", text):
        return True
    if not re.fullmatch(f"[{HAN}]{{2,4}}", text) or text[0] in "了着得声起来去过我你他她它":
        return False
    if NICKNAME.fullmatch(text):
        return dictionary_tag(text) not in ("e", "y", "r")  # 咪咪, 慢慢: after 叫, a name
    tags = pos_tags(text)
    return len(tags) <= 2 and all(tag not in _NOT_PET_NAME_TAGS for _w, tag in tags)


def place_object(text: str) -> str:
    """A place object: its noun phrase, cut before a ``的`` that is not part of the place
    (``上海的朋友``)."""
    phrase = noun_phrase(text)
    if "的" in phrase:
        before, _, after = phrase.partition("的")
        if not after.endswith(PLACE_ENDINGS):
            phrase = before
    return phrase


def starts_with_verb(text: str) -> bool:
    """``考驾照`` / ``交论文``: the phrase starts with a verb (jieba's tag of the first
    word, or of the first character when jieba reads the phrase as one odd word)."""
    pairs = pos_tags(text)
    if pairs and pairs[0][1].startswith("v"):
        return True
    return (dictionary_tag(text[0]) or "").startswith("v")


def leading_name(text: str) -> str:
    """The name ``text`` starts with (``小雨住在杭州`` → ``小雨``, ``朵朵今年六岁`` →
    ``朵朵``), or ``""``: jieba's first word when it reads as a name, or the first two
    one-character words when they make one (``小`` + ``何``)."""
    latin = re.match(r"[A-Z][a-zA-Z'\-]{1,20}", text)
    if latin:
        return latin.group(0)
    pairs = pos_tags(text)
    if not pairs:
        return ""
    titled = TITLE_NAME.match(text)  # "王总人还不错": jieba splits 王 | 总
    if titled and titled.end() in itertools.accumulate(len(w) for w, _t in pairs):
        return titled.group(0)
    first, tag = pairs[0]
    if is_name(first, after_relation=True) and (
        tag in _NAME_TAGS
        or dictionary_tag(first) is None
        or _is_nickname(first)
        or TITLE_NAME.fullmatch(first) is not None
        or (len(first) == 2 and first[0] in "小老" and first[1] in SURNAMES)
    ):
        return first
    second, second_tag = pairs[1] if len(pairs) > 1 else ("", "")
    if len(first) == len(second) == 1 and (first in ("小", "老", "阿") or tag == second_tag == "x"):
        candidate = first + second  # "小" + "何"
        return candidate if is_name(candidate, after_relation=True) else ""
    if first in ("小", "老", "阿") and len(text) >= 2 and re.match(f"[{HAN}]", text[1]):
        # "小蓝会说话": jieba glues the name's second character to the next word
        candidate, rest = text[:2], pos_tags(text[2:])
        if animal_kind(candidate) is None and (not rest or rest[0][1][0] in "vdtpc"):
            return candidate if is_name(candidate, after_relation=True) else ""
    return ""
