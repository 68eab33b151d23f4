"""Handlers for pets, likes and dislikes, allergies, diet, food and hobbies."""

from __future__ import annotations

import re

from mnemolayer.extract.rules.zh.context import (
    Clause,
    Handler,
    Head,
    Message,
    Subject,
    identity_fact,
    is_negated,
)
from mnemolayer.extract.rules.zh.lexicon import (
    ACTIVITIES,
    ANIMAL_RE,
    BEFORE_WORDS,
    DEMONSTRATIVE,
    HAN,
    KIN,
    MEAL_WORDS,
    PASTIME_WORDS,
    VAGUE,
    animal_kind,
    word_set,
)
from mnemolayer.extract.rules.zh.text import (
    clean_object,
    cut,
    noun_phrase,
    pos_tags,
    split_list,
    trim,
)

_PET_OBJECT = re.compile(
    rf"(?:[一两二三四五六七八九十几]|好几)?(?:只|条|头|匹|个|缸)?"
    rf"(?:(?:叫|名叫|叫做)(?P<name>[^的]{{1,8}})的)?(?:可爱的|小)?(?P<animal>{ANIMAL_RE})"
    rf"(?:(?:叫|名叫|叫做|名字叫|,叫)(?P<name2>.{{1,8}}))?"
)


def h_pet(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我养了一只叫豆豆的猫`` → (speaker, has_pet, 豆豆, object_type=猫); unnamed, the
    pet is the animal as said (``巴西龟``), and the next clauses may name it (``叫豆豆``)
    or, when several were counted, each of them (``一只叫豆豆，一只叫花花``)."""
    if subj.head.kind == "pet" or not subj.head.words.isdisjoint(BEFORE_WORDS):
        return False  # "我以前养过猫": not any more
    text = trim(re.sub(r"^了", "", m.group("obj")))
    if m.group("verb").endswith("有") and not re.match(
        r"[一两二三四五六七八九十几]?[只条缸对群]", m.group("obj")
    ):
        return False  # "我有猫毛过敏": 有 names a pet only with a measure word
    if (m.group("neg") or "") in ("不", "现在不") and not clause.text.endswith("了"):
        return False  # "我不养猫": no pet, but nothing retracted either
    pm = _PET_OBJECT.fullmatch(text)
    if not pm:
        return _pets_listed(msg, subj, m, clause, text)
    said = pm.group("animal")
    animal = animal_kind(said)
    if animal is None:
        return False
    if not subj.name:
        # "我表妹养了一只仓鼠，叫芝麻": the next clause names the pet, whose owner has no
        # name to hang the fact on
        msg.topic = Subject(Head("pet", animal=animal), "", "")
        return subj.head.kind == "relative"
    name = trim(pm.group("name") or pm.group("name2") or "")
    if name and (animal_kind(name) or not re.fullmatch(f"[{HAN}A-Za-z]{{1,8}}", name)):
        return False
    # Unnamed, the pet is the animal as said (金毛), or its kind for 小猫 / 猫咪 / 狗狗.
    unnamed = said if len(said) > 1 and not re.match("小|.*[咪狗]$", said) else animal
    negated = is_negated(m, subj, clause)
    msg.add(subj, "has_pet", name or unnamed, clause, 0.85, object_type=animal, negated=negated)
    if name:
        msg.entity(name, "pet")
    if not subj.is_self:
        msg.person(subj.name)
    # "…，叫豆豆" in the next clause names this pet; "一只叫豆豆" one of several
    msg.topic = Subject(Head("pet", animal=animal), "", subj.name)
    if not name and not negated:
        msg.counted = msg.topic
    msg.haver = subj.name
    return True


#: "榴莲的味道": what one likes or not is the thing, not its taste or look.
_ASPECT_OF = re.compile(r"(?<=[\u4e00-\u9fffA-Za-z])的(?:味道|气味|口感|声音|样子|感觉|颜色|风格)$")


def _pets_listed(msg: Message, subj: Subject, m: re.Match[str], clause: Clause, text: str) -> bool:
    """``我养了一只猫和一只狗`` → has_pet 猫, has_pet 狗: every item must be a pet."""
    parts = split_list(text)
    matches = [pm for part in parts if (pm := _PET_OBJECT.fullmatch(trim(part)))]
    if len(parts) < 2 or len(matches) != len(parts) or not subj.name:
        return False
    negated = is_negated(m, subj, clause)
    for pm in matches:
        said = pm.group("animal")
        animal = animal_kind(said)
        name = trim(pm.group("name") or pm.group("name2") or "")
        if animal is None:
            return False
        msg.add(subj, "has_pet", name or said, clause, 0.8, object_type=animal, negated=negated)
    return True


def h_pet_is(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我的宠物是一只仓鼠`` → (speaker, has_pet, 仓鼠)."""
    pm = _PET_OBJECT.fullmatch(trim(m.group("obj")))
    animal = animal_kind(pm.group("animal")) if pm else None
    if pm is None or animal is None:
        return False
    name = trim(pm.group("name") or pm.group("name2") or "")
    msg.add(msg.speaker, "has_pet", name or pm.group("animal"), clause, 0.8, object_type=animal)
    msg.topic = Subject(Head("pet", animal=animal), "", msg.speaker)
    return True


def _preference_objects(text: str) -> list[str]:
    text = _ASPECT_OF.sub("", trim(cut(text)))
    text = re.sub(r"^(?:吃|喝|去)(?=[\u4e00-\u9fffA-Za-z]{2})", "", text)
    out: list[str] = []
    for part in split_list(text):
        part = re.sub(r"^(?:吃|喝)(?=.)", "", trim(part))
        obj = clean_object(part)
        if not obj:
            return []  # one item points elsewhere ("里面的演员和剧情"): the list does too
        out.append(obj)
    return out


def _said_of_free_time(subj: Subject) -> bool:
    """The head says when one is free (``平时``, ``业余时间``, ``周末``)."""
    words = subj.head.words
    return not words.isdisjoint(PASTIME_WORDS) or any(w.startswith("周末") for w in words)


_PASTIME_ENDINGS = ("球", "棋", "牌", "琴", "舞", "画", "游戏", "钓鱼", "步", "泳", "山", "车")


def _is_activity(text: str) -> bool:
    """Something one does for pleasure (``钓鱼``, ``打羽毛球``, ``弹吉他``), not a thing
    one likes (``猫``) or eats (``火锅``)."""
    if text in ACTIVITIES or text.endswith(_PASTIME_ENDINGS):
        return not text.startswith(("吃", "喝"))
    pairs = pos_tags(text)
    return bool(pairs) and pairs[0][1] in ("v", "vn") and not text.startswith(("吃", "喝"))


def preference(pred: str, *, negated_by_le: bool = False) -> Handler:
    def handler(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
        if not subj.name or subj.head.past or subj.head.future:
            return False
        objects = _preference_objects(m.group("obj"))
        if not objects:
            return False
        predicate, negated = pred, is_negated(m, subj, clause)
        said_not = "不" in m.group(0)[: m.start("obj") - m.start()]
        if pred == "dislikes" and (
            (negated_by_le and said_not and clause.text.endswith("了")) or subj.head.retracting
        ):
            predicate, negated = "likes", True  # "我不喜欢香菜了": no longer likes
        pastime = predicate == "likes" and not negated and _said_of_free_time(subj)
        for obj in objects:
            msg.add(subj, predicate, obj, clause, confidence=0.8, negated=negated)
            if pastime and _is_activity(obj):  # "我平时喜欢钓鱼": a hobby too
                msg.add(subj, "hobby", obj, clause, confidence=0.7)
        msg.last_list = (subj, predicate, negated)
        if not subj.is_self:
            msg.person(subj.name)
        return True

    return handler


def h_allergy(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    text = re.sub(r"^(?:有|会|对)", "", trim(m.group("obj")))
    if any(k in text for k in KIN) or "对" in text or not subj.name:
        return False
    negated = is_negated(m, subj, clause) or bool(m.groupdict().get("neg2"))
    added = False
    for part in split_list(text):
        obj = noun_phrase(part)
        if obj and obj not in VAGUE and not DEMONSTRATIVE.match(obj):
            msg.add(subj, "allergic_to", obj, clause, confidence=0.85, negated=negated)
            added = True
    return added


def h_diet(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我吃素`` → diet 素食; ``我是素食主义者`` → diet 素食主义者 (the noun as said)."""
    vegan = "纯素" in m.group(0) or "vegan" in m.group(0).lower()
    kind = m.groupdict().get("obj") or ("纯素" if vegan else "素食")
    if not subj.name or subj.head.future:
        return False
    negated = is_negated(m, subj, clause)
    if (m.groupdict().get("neg") or "") in ("不", "现在不") and not clause.text.endswith("了"):
        return False  # "我不是素食者": a denial, not a change
    return identity_fact(msg, subj, "diet", kind, clause, negated=negated)


def h_no_eat(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我不再吃肉了`` / ``我不吃辣`` → eats …, negated."""
    obj = noun_phrase(m.group("obj"), max_len=8)
    if not obj or obj in ("素", "斋") or not subj.name or subj.head.future:
        return False
    msg.add(subj, "eats", obj, clause, confidence=0.75, negated=True)
    return True


def h_hobby(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    objects = _preference_objects(m.group("obj"))
    if not objects or not subj.name:
        return False
    for obj in objects:
        msg.add(subj, "hobby", obj, clause, confidence=0.85)
    msg.last_list = (subj, "hobby", False)
    return True


_NOT_FOOD = word_set(
    "饭 东西 什么 啥 药 苦 亏 醋 惊 瓜 力 香 得开 不消 不下 不惯 完 素 斋 食堂 饭堂 餐厅 馆子 饭店"
)


def h_eats(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我早上一般吃包子`` / ``我每天喝一杯咖啡`` → eats: a habit or a meal, not one
    meal (``我昨天吃了火锅`` is an event)."""
    words = subj.head.words
    if not subj.name or subj.head.group or subj.head.future or subj.head.past:
        return False
    if not (subj.head.habitual or not words.isdisjoint(MEAL_WORDS) or m.group("only")):
        return False
    if re.match("了|过|完", m.group("obj")):
        return False
    objects = []
    for part in split_list(trim(cut(m.group("obj")))):
        obj = noun_phrase(part, max_len=8)
        if not obj or obj in _NOT_FOOD or obj in VAGUE:
            return False
        objects.append(obj)
    for obj in objects:
        msg.add(subj, "eats", obj, clause, confidence=0.7)
    return bool(objects)
