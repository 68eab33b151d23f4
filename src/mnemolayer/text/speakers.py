"""Speaker labels written into a message's text: ``"Caroline: I went hiking"``.

Callers pass the speaker of a message in three ways: as ``name`` (``{"role": "user",
"name": "Caroline", "content": ...}``), as a label in front of the text (transcripts,
chat exports, ``"卡罗琳：我去徒步了"``), or not at all. :meth:`Memory.add` reads a label
as the speaker when the message has no ``name``, so that the same conversation is
attributed, rendered for the indexes and mined for facts alike whichever way it came.

The rules are conservative, because a wrong speaker misattributes every fact of the
message; a label is read only when all of these hold:

* it is the first thing in the text, followed by ``:`` or the full-width ``：`` and
  some text;
* it looks like a name: one to three words, each starting with a capital letter (Latin,
  Greek, Cyrillic…; inner ``'``, ``-`` and ``.`` allowed, ``"Dr. Smith"``), at most 32
  characters; or two to eight Han characters, with ``·`` between parts
  (``"约翰·史密斯"``) that jieba's part-of-speech tagger reads as a person's name
  (Chinese has no capitals; ``"晚饭："`` and ``"我的计划："`` are not speakers);
* it is not a common label word (``Note``, ``Warning``, ``Update``, ``Q``, ``User``,
  ``AI``, weekdays and months, ``注意``, ``问``, ``用户``… see :data:`NOT_SPEAKERS`), nor a
  URL scheme (the text after the colon starts with ``//``); times (``10:30``) have no
  letters and never match;
* the text holds no second label of that shape (label words included) at the start of
  a later line: that
  is a transcript of several speakers (``"Linda: ...\\nAI: ..."``), kept as one text with
  no single speaker.

The stored content stays verbatim (label included); only what is derived from it
(:func:`mnemolayer.retrieval.index.index_text`, fact extraction) reads the text after
the label (:func:`strip_speaker`), so nothing of the original is lost.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

__all__ = ["NOT_SPEAKERS", "is_transcript", "split_speaker", "strip_speaker"]

#: Capitalised words that label a line rather than name who says it (compared folded).
NOT_SPEAKERS = frozenset(
    str.split(
        """
    note notes nb ps warning warnings caution danger important attention alert error
    errors tip tips hint info fyi update updates edit edited correction reminder todo
    done summary tldr recap question questions answer answers q a re fw fwd subject
    title topic date time day when where location place address phone tel email e-mail
    url link source sources reference references example examples e.g step steps task
    tasks goal goals plan plans agenda status result results reason reasons output
    input response reply request quote translation definition meaning disclaimer
    spoiler context background problem solution issue fix bug feature news breaking
    today tonight tomorrow yesterday morning afternoon evening night breakfast lunch
    dinner ingredients menu price cost total name age user assistant system tool ai bot
    human me you we they he she it i monday tuesday wednesday thursday friday saturday
    sunday january february march april may june july august september october november
    december mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug
    sep sept oct nov dec pro con pros cons yes no ok okay p.s
    """
    )
) | frozenset(
    str.split(
        """
    注意 注 备注 提示 警告 小心 重要 提醒 更新 编辑 修改 更正 总结 摘要 问题 问 答 答案 回答
    回复 主题 标题 时间 日期 地点 地址 电话 邮箱 链接 来源 例如 比如 例子 步骤 任务 目标 计划
    状态 结果 原因 理由 输出 输入 翻译 定义 说明 背景 解决 方案 今天 明天 昨天 早餐 午餐 晚餐
    价格 姓名 名字 年龄 用户 助手 系统 工具 我 你 他 她 我们 你们 他们
    """
    )
)

_HAN_CHAR = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LATIN_WORD = rf"(?![{_HAN_CHAR}])[^\W\d_][\w'’.\-]*"
_LATIN_NAME = re.compile(rf"{_LATIN_WORD}(?: {_LATIN_WORD}){{0,2}}")
_HAN_NAME = re.compile(rf"[{_HAN_CHAR}]+(?:[·・•][{_HAN_CHAR}]+)*")
_LABEL = re.compile(r"\s*(?P<name>[^\s:：][^:：\n]{0,31}?)\s*[:：][ \t\u3000]*")
_LINE_LABEL = re.compile(r"\n\s*([^\s:：][^:：\n]{0,31}?)\s*[:：]")


def _name_shaped(label: str) -> bool:
    """Capitalised words, or Han characters: the shape of a name, label words included."""
    if _HAN_NAME.fullmatch(label):
        return 2 <= len(re.sub(r"[·・•]", "", label)) <= 8
    return (
        _LATIN_NAME.fullmatch(label) is not None
        and len(label) <= 32
        and all(word[0].isupper() for word in label.split(" "))
    )


def _is_name(label: str) -> bool:
    folded = label.casefold()
    if not _name_shaped(label) or folded in NOT_SPEAKERS or folded.rstrip(".") in NOT_SPEAKERS:
        return False
    return not _HAN_NAME.fullmatch(label) or _han_person(label)


_pos_lock = threading.Lock()


@functools.cache
def _pos_tagger() -> Any:
    """jieba's part-of-speech tagger over the keyword index's segmenter (loaded once)."""
    import jieba.posseg

    from mnemolayer.text.terms import _segmenter

    with _pos_lock:
        return jieba.posseg.POSTokenizer(_segmenter())


def _han_person(label: str) -> bool:
    """Whether jieba tags ``label`` as a person's name: the first word a name (``nr*``,
    as 张曼婷, 卡罗琳, 约翰), the rest names, separators or single characters (梅兰 + 妮).
    Chinese has no capitals, so this is what tells 卡罗琳 from 晚饭 or 注意."""
    words = [(w.word, w.flag) for w in _pos_tagger().cut(label)]
    if not words or not words[0][1].startswith("nr"):
        return False
    return all(flag.startswith("nr") or flag == "x" or len(word) == 1 for word, flag in words[1:])


def split_speaker(text: str) -> tuple[str, str] | None:
    """The speaker label in front of ``text`` and the text after it, or ``None``.

    Args:
        text: a message's content.

    Returns:
        ``(speaker, rest)``: ``("Caroline", "I went hiking")`` for ``"Caroline: I went
        hiking"``, ``("卡罗琳", "我去徒步了")`` for ``"卡罗琳：我去徒步了"``; ``None`` when
        the text does not start with a label that reads as a speaker by the rules of
        this module (``"Note: ..."``, ``"10:30 ..."``, ``"https://..."``,
        ``"Linda: ...\\nAI: ..."``).
    """
    match = _LABEL.match(text)
    if match is None:
        return None
    name, rest = match.group("name"), text[match.end() :]
    if not rest.strip() or rest.startswith("//") or not _is_name(name):
        return None
    if any(_name_shaped(m.group(1)) for m in _LINE_LABEL.finditer(rest)):
        return None  # a transcript: several labelled speakers in one text
    return name, rest.strip()


def strip_speaker(text: str, speaker: str | None) -> str:
    """``text`` without its leading label when that label is ``speaker`` (as
    :func:`split_speaker` reads it); else ``text`` unchanged."""
    if not speaker:
        return text
    split = split_speaker(text)
    return split[1] if split is not None and split[0] == speaker else text


def is_transcript(text: str) -> bool:
    """Whether ``text`` is an exchange of several labelled lines, as in ``"Linda: Any
    tips?\nAI: Try yoga."``: it starts with a label of a name's shape and a later line
    starts with another (label words such as ``AI`` or ``User`` count, so that
    ``"User: ...\nAI: ..."`` is one too).

    Such a text is one memory holding several turns (MemoryBank stores a user's message
    with the reply to it); recall's question penalty does not treat it as a question
    even when its last line asks one (:mod:`mnemolayer.retrieval.structure`).
    """
    match = _LABEL.match(text)
    if match is None or not _name_shaped(match.group("name")):
        return False
    rest = text[match.end() :]
    return any(_name_shaped(m.group(1)) for m in _LINE_LABEL.finditer(rest))
