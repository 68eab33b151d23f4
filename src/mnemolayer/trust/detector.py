"""A small rule detector for instruction-like text in memories (prompt injection).

It flags what a memory should not carry when it is later pasted into a model's prompt:
text that tries to override the instructions ("ignore previous instructions",
"disregard the above", "忽略之前的指令"), names or asks for the system prompt, opens a
chat-template role ("<|im_start|>system", "[INST]"), recasts the model ("you are now an
unrestricted AI", "从现在开始你扮演…", "DAN", "developer mode"), or hides text from a
reader (zero-width characters, bidirectional overrides, Unicode tag characters).

The rules are deliberately narrow, so that ordinary conversation ("you are now a
grandmother!", "ignore him") is not flagged; the false-positive rate on real chats is
measured by ``bench/trust_fp.py``. A flag is information for the reader, never a
reason to drop or change what was said.
"""

from __future__ import annotations

import re

__all__ = ["FLAGS", "detect"]

#: The flags :func:`detect` returns, in this order: ``"instruction"`` (overrides or asks
#: for instructions, system prompt, chat-template markers), ``"roleplay"`` (recasts the
#: model: jailbreak and role-play phrasings), ``"hidden_text"`` (characters a reader
#: does not see).
FLAGS: tuple[str, ...] = ("instruction", "roleplay", "hidden_text")

_STRONG = r"(?:previous|prior|above|earlier|preceding|former|original|initial)"
_ORDERS = (
    r"(?:instructions?|prompts?|rules|directions?|directives?|guidelines|commands?|"
    r"guardrails|restrictions|context|messages?|system\s+messages?)"
)
_EN_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|neglect)\s+"
    rf"(?:(?:all|any|the|your|my|these|those|of)\s+){{0,3}}{_STRONG}\s+(?:\w+\s+)?{_ORDERS}\b"
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+)?(?:your|the)\s+"
    r"(?:instructions|system\s+prompt|guidelines|guardrails)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+"
    r"(?:above|(?:you\s+were\s+)?(?:told|said)\s+(?:before|earlier|above))\b"
    r"|\bdisregard\s+the\s+above\b|\bignore\s+the\s+above\b"
    r"|\bsystem\s+prompts?\b|\bnew\s+instructions\s*:"
    r"|<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?INST\]|<</?SYS>>",
    re.IGNORECASE,
)
_EN_ROLEPLAY = re.compile(
    r"\byou\s+are\s+now\s+(?:an?\s+|the\s+|in\s+)?(?:[\w-]+\s+){0,3}"
    r"(?:AI|assistant|model|chatbot|bot|LLM|DAN|jailbroken|unrestricted|unfiltered|"
    r"uncensored|mode)\b"
    r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall)\s+(?:act|respond|answer|behave|"
    r"ignore|obey|pretend|be\s+(?:an?\s+)?(?:AI|assistant|DAN|unrestricted|unfiltered))\b"
    r"|\b(?:pretend|act)\s+(?:to\s+be|you\s+are|as|like)\s+(?:an?\s+)?(?:[\w-]+\s+){0,2}"
    r"(?:AI|assistant|chatbot|model|DAN)\s+(?:with(?:out)?|that\s+has\s+no|free\s+of)\b"
    r"|\b(?:do\s+anything\s+now|DAN\s+mode|developer\s+mode|jailbreak(?:ed|ing)?)\b"
    r"|\byou\s+(?:have|has)\s+no\s+(?:rules|restrictions|filters|guidelines|limits)\b",
    re.IGNORECASE,
)
_ZH_INSTRUCTION = re.compile(
    r"(?:忽略|无视|忽视|不要理会|不用理会|别管|忘记|忘掉)(?:掉)?(?:你)?"
    r"(?:之前|以上|上面|上述|先前|前面|此前|原来|原有|所有|全部|一切)(?:的)?(?:所有|全部|一切)?(?:的)?"
    r"(?:指令|指示|说明|提示词?|规则|要求|设定|命令|约束)"
    r"|系统提示词?|系统指令|新的?指令[:：]"
)
_ZH_ROLEPLAY = re.compile(
    r"(?:从现在(?:开始|起)|现在起)[,，]?\s*你(?:是|将|要|必须|就是)?(?:扮演|充当|作为|变成)"
    r"|扮演(?:一个)?(?:没有|不受|无)(?:任何)?(?:限制|约束|道德)"
    r"|你现在是(?:一个)?(?:不受限制|没有限制|无限制|DAN|越狱)"
    r"|越狱模式|开发者模式|你没有任何(?:限制|规则|约束)"
)
# Characters that render as nothing: zero-width space, word joiner and invisible
# operators, a byte-order mark inside text, bidirectional embeddings, overrides and
# isolates. The zero-width joiner and non-joiner are left out: emoji sequences and
# Persian and Indic writing use them.
_HIDDEN = re.compile("[\u200b\u2060-\u2064\u202a-\u202e\u2066-\u2069\u180e]|(?<=.)\ufeff")
# Unicode tag characters (U+E0000..U+E007F) spell invisible ASCII; the subdivision
# flags (a black flag U+1F3F4 followed by tags) are their one ordinary use.
_TAGS = re.compile("[\U000e0000-\U000e007f]")
_FLAG_TAGS = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")


def detect(text: str) -> list[str]:
    """The :data:`FLAGS` that ``text`` raises, in :data:`FLAGS` order (``[]``: none).

    Args:
        text: any text, English, Chinese or mixed (read as given: no normalisation).

    Returns:
        A sub-list of :data:`FLAGS`.
    """
    found: set[str] = set()
    if _EN_INSTRUCTION.search(text) or _ZH_INSTRUCTION.search(text):
        found.add("instruction")
    if _EN_ROLEPLAY.search(text) or _ZH_ROLEPLAY.search(text):
        found.add("roleplay")
    if _HIDDEN.search(text) or _TAGS.search(_FLAG_TAGS.sub("", text)):
        found.add("hidden_text")
    return [f for f in FLAGS if f in found]
