"""Importance at write time, without an LLM, for English and Chinese.

A message starts at ``base`` (0.4) and each kind of signal it shows adds its weight
once; the sum is clipped to [0, 1]:

============================  ======  ==============================================
signal                        weight  examples
============================  ======  ==============================================
explicit request to remember  +0.30   "remember", "don't forget", "keep in mind", 记住, 别忘了, 重要
identity fact                 +0.25   "my name is", "I live in", "I work as", "my wife", 我叫, 我住在, 我女儿
health or diet constraint     +0.25   "allergic", "vegetarian", "lactose", 过敏, 素食, 不吃猪肉
preference                    +0.20   "I love", "I prefer", "my favourite", "can't stand", 喜欢, 讨厌, 偏好
decision or plan              +0.15   "we decided", "booked", "appointment", "plan to", 决定, 打算, 约好
number, date or amount        +0.10   digits, "$", month and weekday names, "tomorrow", 三点, 十月, 周五, 明天
small talk only               -0.30   the whole message is greetings, thanks, acknowledgement or laughter: "hi", "ok thanks", 好的, 哈哈
short, with no signal         -0.10   at most three words (or six Chinese characters) and nothing above
============================  ======  ==============================================

The weights are a judgement, checked against a labelled set
(``tests/data/importance/*.jsonl``: 72 messages, English and Chinese, each labelled high,
medium or low); ``tests/unit/test_lifecycle_importance.py`` reports the pairwise ranking
accuracy on it. The caller can always set importance itself, and another estimator (an
LLM scorer) plugs in through :class:`ImportanceEstimator`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from mnemolayer.errors import ValidationError
from mnemolayer.protocols import ImportanceEstimator
from mnemolayer.values import ImportanceEstimate

__all__ = [
    "SIGNALS",
    "ImportanceEstimate",
    "ImportanceEstimator",
    "RuleImportance",
    "estimate_importance",
]


def _re(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts))


_FAMILY_EN = (
    r"wife|husband|partner|son|daughter|kids?|children|child|mom|mum|mother|dad|father|"
    r"parents|brother|sister|boyfriend|girlfriend|fianc[ée]e?|grandma|grandpa|grandmother|"
    r"grandfather|family|baby|twins|aunt|uncle|cousin|niece|nephew"
)
_FAMILY_ZH = (
    "老婆|老公|妻子|丈夫|爱人|太太|先生|儿子|女儿|闺女|孩子|妈妈|爸爸|母亲|父亲|爸妈|父母|"
    "哥哥|姐姐|弟弟|妹妹|男朋友|女朋友|对象|未婚妻|未婚夫|爷爷|奶奶|外公|外婆|姥姥|姥爷|家人"
)
_JOBS_ZH = (
    "老师|教师|医生|护士|工程师|程序员|设计师|律师|会计|经理|学生|研究生|博士|记者|厨师|司机|"
    "警察|销售|产品经理|运营|教授|作家|画家|演员|公务员"
)
_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
)
_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend"
_ZH_NUM = "[零一二两三四五六七八九十百千万]"

#: (name, weight, English pattern, Chinese pattern); each matches the NFKC-normalised,
#: lower-cased message. A signal counts once however often it matches.
SIGNALS: tuple[tuple[str, float, re.Pattern[str], re.Pattern[str]], ...] = (
    (
        "explicit request to remember",
        0.30,
        _re(
            r"\bremember\b",
            r"\b(?:don'?t|do not|never) forget\b",
            r"\bkeep in mind\b",
            r"\bremind me\b",
            r"\bmake a note\b",
            r"\bnote that\b",
            r"\bimportant\b",
        ),
        _re("记住", "记得", "别忘", "不要忘", "千万", "重要", "记一下", "提醒我", "务必"),
    ),
    (
        "identity fact",
        0.25,
        _re(
            r"\bmy name\b",
            r"\bi'?m called\b",
            r"\bcall me\b",
            r"\bi (?:live|grew up|was born)\b",
            r"\bi'?m from\b",
            r"\bi (?:work|teach)\b",
            r"\bmy (?:job|boss|manager|company|office)\b",
            r"\bi'?m (?:a|an) [a-z]+ (?:at|in|for)\b",
            r"\bi am \d+\b|\bi'?m \d+\b|\b\d+ years old\b",
            rf"\bmy (?:{_FAMILY_EN})(?:'s)?\b",
        ),
        _re(
            "我叫",
            "名字",
            "我住",
            "我家在",
            "老家",
            "出生",
            rf"我是.{{0,10}}(?:{_JOBS_ZH})",
            rf"(?:做|当)(?:一名|一个)?(?:{_JOBS_ZH})",
            "我在.{1,12}(?:工作|上班|实习|读书|上学)",
            f"我(?:的)?(?:{_FAMILY_ZH})",
            f"[0-9{_ZH_NUM[1:-1]}]+岁",
        ),
    ),
    (
        "health or diet constraint",
        0.25,
        _re(
            r"\ballerg",
            r"\bintoleran",
            r"\bvegetarian\b|\bvegan\b|\bgluten\b|\bhalal\b|\bkosher\b",
            r"\bdiabet",
            r"\bmedication\b|\bprescri",
            r"\b(?:never|don'?t|do not|can'?t) (?:eat|drink)\b",
        ),
        _re("过敏", "不耐受", "素食", "吃素", "糖尿病", "高血压", "吃药", "不吃", "不能吃", "忌口"),
    ),
    (
        "preference",
        0.20,
        _re(
            r"\bi (?:really |absolutely |also )?(?:like|love|hate|prefer|enjoy|adore|dislike|loathe)\b",
            r"\bi (?:can'?t|cannot) stand\b",
            r"\bmy (?:favou?rite|go-to)\b",
            r"\bi'?m (?:a (?:big |huge )?fan|into)\b",
            r"\bi (?:don'?t|do not) (?:like|enjoy|care for)\b",
        ),
        _re(
            "喜欢", "爱吃", "爱喝", "爱看", "讨厌", "偏好", "最爱", "受不了", "不爱", "更爱", "钟爱"
        ),
    ),
    (
        "decision or plan",
        0.15,
        _re(
            r"\b(?:we|i) (?:have |'ve )?decided\b",
            r"\bdecision\b",
            r"\bgo(?:ing)? with\b",
            r"\bagreed\b",
            r"\bbooked\b|\breserved\b|\bscheduled\b",
            r"\b(?:plan|planning|going) to\b",
            r"\bappointment\b|\bdeadline\b|\bflight\b",
        ),
        _re(
            "决定",
            "定了",
            "打算",
            "计划",
            "准备",
            "约好",
            "约了",
            "预订",
            "订了",
            "安排",
            "截止",
            "航班",
        ),
    ),
    (
        "number, date or amount",
        0.10,
        _re(
            r"\d",
            r"[$€£¥]",
            rf"\b(?:{_MONTHS})\b",
            rf"\b(?:{_WEEKDAYS})s?\b",
            r"\b(?:tomorrow|tonight|next (?:week|month|year))\b",
        ),
        _re(
            r"\d",
            f"{_ZH_NUM}+(?:号|日|月|点|岁|元|块|万|千|百|年|个月|天|周)",
            "(?:周|星期|礼拜)[一二三四五六日天]",
            "明天|后天|下周|下个月|明年",
        ),
    ),
)

_SMALLTALK_EN = frozenset(
    str.split(
        """
    hi hello hey hiya yo thanks thank thx ty you ok okay k kk sure yes yeah yep yup no nope
    lol lmao haha hahaha hah hehe heh cool nice great good fine awesome perfect alright right
    morning afternoon evening night bye goodbye see ya later cya sounds that's thats that is
    it helpful please hmm hm um uh let me think for now there got welcome np oh ah wow
    much so very too indeed totally agreed exactly true
    """
    )
)
_SMALLTALK_ZH = re.compile(
    "你好|您好|大家好|早上好|上午好|中午好|下午好|晚上好|早安|午安|晚安|嗨|哈+|呵+|嘿+|嘻+|"
    "嗯+|哦+|噢+|喔+|啊+|呀|啦|吧|呢|嘛|好的|好吧|好滴|好嘞|好|行|可以|没问题|对|是的|谢谢|多谢|"
    "感谢|谢了|不客气|再见|拜拜|回头见|明天见|我想想|想想|让我想想|收到|明白|知道了|了解|"
    "太好笑了|好笑|笑死|厉害|不错|很有帮助|有帮助|很|真|太|了|的|你|我"
)
_PUNCT_OR_SPACE = re.compile(r"[\W_]+")
_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _is_smalltalk(text: str) -> bool:
    """The whole message is greetings, thanks, acknowledgement or laughter."""
    rest = _SMALLTALK_ZH.sub(" ", text)
    words = _EN_WORD.findall(rest)
    if any(w not in _SMALLTALK_EN for w in words):
        return False
    return not _HAN.search(rest) and not any(ch.isdigit() for ch in rest)


def _is_short(text: str) -> bool:
    han = len(_HAN.findall(text))
    words = len(_EN_WORD.findall(text))
    return (han == 0 and words <= 3) or (words == 0 and 0 < han <= 6)


class RuleImportance:
    """The rule-based estimator described in the module docstring.

    Args:
        base: the importance of a message with no signal, in [0, 1].

    Raises:
        ValidationError: ``base`` outside [0, 1].
    """

    SMALLTALK_WEIGHT = -0.30
    SHORT_WEIGHT = -0.10

    def __init__(self, base: float = 0.4) -> None:
        if isinstance(base, bool) or not isinstance(base, int | float) or not 0 <= base <= 1:
            raise ValidationError("base", f"must be a number in [0, 1], got {base!r}")
        self.base = float(base)

    def __repr__(self) -> str:
        return f"RuleImportance(base={self.base})"

    def estimate(self, text: str) -> ImportanceEstimate:
        """The importance of ``text`` with the signals that set it.

        Args:
            text: one message or memory, any language (English and Chinese have rules).

        Returns:
            :class:`ImportanceEstimate` with ``value`` in [0, 1].

        Raises:
            ValidationError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise ValidationError("text", f"must be a string, got {type(text).__name__}")
        norm = _normalise(text)
        value = self.base
        reasons: list[str] = []
        for name, weight, en, zh in SIGNALS:
            if en.search(norm) or zh.search(norm):
                value += weight
                reasons.append(f"{name} ({weight:+.2f})")
        if not reasons:
            if _is_smalltalk(norm):
                value += self.SMALLTALK_WEIGHT
                reasons.append(f"small talk only ({self.SMALLTALK_WEIGHT:+.2f})")
            elif _is_short(norm):
                value += self.SHORT_WEIGHT
                reasons.append(f"short, with no signal ({self.SHORT_WEIGHT:+.2f})")
        return ImportanceEstimate(value=round(min(1.0, max(0.0, value)), 4), reasons=reasons)

    def estimate_many(self, texts: Sequence[str]) -> list[ImportanceEstimate]:
        """:meth:`estimate` for each text."""
        return [self.estimate(t) for t in texts]


_DEFAULT = RuleImportance()


def estimate_importance(text: str) -> ImportanceEstimate:
    """Importance of ``text`` by the default :class:`RuleImportance` (base 0.4).

    Raises:
        ValidationError: ``text`` is not a string.
    """
    return _DEFAULT.estimate(text)
