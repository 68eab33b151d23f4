"""Handlers for what happens: plans, decisions, visits, events and finished actions.

Plans and decisions carry the date they are for, and can be called off (``计划取消了``,
``我不去日本了``); visits and attended events carry the day they happened. Finished
actions said with ``了``/``过``/``完`` that no rule reads are found by :func:`past_action`.
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.zh.context import (
    Clause,
    Handler,
    Message,
    Subject,
    parse_head,
    relation_fact,
    tense_of,
)
from mnemolayer.extract.rules.zh.lexicon import (
    ACTIVITIES,
    BEFORE_WORDS,
    DEMONSTRATIVE,
    EVENT_NOUNS,
    HAN,
    KIN_RE,
    TIME,
    TRAIL,
    VAGUE,
    alt,
    word_set,
)
from mnemolayer.extract.rules.zh.text import (
    clean_object,
    cut,
    is_name,
    is_place,
    noun_phrase,
    pos_tags,
    starts_with_verb,
    strip_time,
    trim,
)

_FROM_TIME = re.compile(rf"从(?:{TIME})(?:开始|起)")
#: What befalls a plan rather than what it is: "计划取消了" is no plan "取消".
_CANCELLED = re.compile(
    r"(?:被|也|都|又|就)?(?:取消|泡汤|作罢|搁置|推迟|延期|改期|有变|黄了|没戏|告吹)"
)
#: Things one is about to do that are no plan worth remembering ("我要去洗澡了").
_ERRANDS = word_set(
    "洗澡 睡觉 睡 吃饭 做饭 上厕所 休息 忙 忙了 上班 下班 上课 下课 开会 出门 回家 洗碗 买菜 "
    "遛狗 躺 躺会儿 歇会儿 充电 工作 写作业 加班 早起 早睡 起床 熬夜 出发 吃午饭 吃晚饭 吃早饭"
)


def _plan_object(text: str, *, decision: bool = False) -> str:
    """A plan, decision or goal as said, without its date and leading modal words:
    ``下个月去日本`` → ``去日本``; ``从下周开始戒烟`` → ``戒烟``. A ``decision`` not to
    do something keeps its ``不`` (``不换工作``), and may be an everyday thing
    (``早睡``). Empty when it is tentative (``学一下``), a fragment (``学习的重点…``),
    ends on a description (``去一个风景优美``), is what befell a plan (``取消了``) or,
    for a plan, an errand (``去洗澡``)."""
    text = strip_time(_FROM_TIME.sub("", text))
    text = re.sub(r"^(?:之?前|以前|之?后|以后)(?=..)", "", text.strip())  # "年底前买房"
    text = re.sub(r"^(?:了|会|先|再|还|也|就|能|可以)+", "", text)
    if text.startswith("要") and len(text) > 2 and starts_with_verb(text[1:]):
        text = text[1:]  # "要去日本", but "要孩子" keeps its verb
    negation = ""
    if decision:
        m = re.match(r"(?:再也不|不再|不要|不)(?=.)", text)
        if m:
            negation, text = "不", text[m.end() :]
    if _CANCELLED.match(text):
        return ""
    obj = clean_object(text, max_len=16)
    if len(obj) < 2 or re.match(r"(?:好|一下|看看|问|知道|了解|.{1,3}的)", obj) or "一下" in obj:
        return ""
    if re.fullmatch(r"[去来回](?:看看|一次|一趟|一下|玩玩?|走走|逛逛|试试|了)", obj):
        return ""  # "去看看": no destination
    if not decision and re.sub("^[去回]", "", obj) in _ERRANDS:
        return ""
    if pos_tags(obj)[-1][1] in ("a", "ad", "d", "uj", "i", "z"):
        return ""
    return negation + obj


#: A plan said with these was given up: "我本来打算…".
_ONCE_WORDS = BEFORE_WORDS | {"本来", "原本"}


def h_plan_called_off(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``…，后来取消了`` / ``但是计划泡汤了``: the plan just stated is off."""
    if msg.last_plan is None or not subj.implicit:
        return False
    planner, obj = msg.last_plan
    msg.facts = [  # said and called off in one message: only the retraction stays
        f
        for f in msg.facts
        if (f.subject, f.predicate, f.object, f.negated) != (planner, "plans", obj, False)
    ]
    msg.add(planner, "plans", obj, clause, confidence=0.65, negated=True)
    msg.last_plan = None
    return True


def plan_handler(pred: str) -> Handler:
    """The handler of ``打算…`` / ``决定…`` / ``梦想是…`` rules: ``pred`` (``plans``,
    ``decided``, ``goal``) with the verb phrase as said and the date it is for; a goal
    with a date ahead is a plan (``我希望明年能去日本``)."""

    def handler(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
        if not subj.name or (m.groupdict().get("neg") or "").startswith(("没", "还没")):
            return False
        obj = _plan_object(m.group("obj"), decision=pred == "decided")
        if not obj:
            return False
        if pred == "plans" and not subj.head.words.isdisjoint(_ONCE_WORDS):
            msg.last_plan = (subj.name, obj)
            return True  # "我本来打算去日本": a plan that did not hold
        negated = bool(m.groupdict().get("neg"))
        when = msg.date_of(clause, "future" if pred != "decided" else None)
        predicate = pred
        if pred == "goal" and when is not None and msg.timestamp and when > msg.timestamp.date():
            predicate = "plans"
        msg.add(subj, predicate, obj, clause, confidence=0.75, negated=negated, when=when)
        return True

    return handler


def h_go(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我昨天去了医院`` → visited 医院 (dated); ``我明天去上海`` → plans 去上海."""
    if not subj.name:
        return False
    raw = trim(m.group("obj"))
    if re.match(r"(?:很多|好多|许多|不少|一些|几个|各种|各地)", raw):
        return False
    phrase = noun_phrase(raw)
    place, activity = _place_and_activity(phrase or raw)
    going = (m.groupdict().get("mode") or "") + m.group("verb")
    if not phrase and raw != activity:
        # "去看牙医": a plan when it is ahead; done, it is a past action (past_action)
        tense, when = tense_of(msg, subj, clause, m.group("asp") or "")
        pairs = pos_tags(raw)
        if tense != "future" or not pairs or not pairs[0][1].startswith("v"):
            return False  # "去试试", "去查找一些礼物": not a place or a known activity
        plan = _plan_object(going + raw)
        if plan:
            msg.add(subj, "plans", plan, clause, confidence=0.7, when=when)
        return bool(plan)
    if place and (place in VAGUE or DEMONSTRATIVE.match(place)):
        return False
    tense, when = tense_of(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        plan = _plan_object(going + raw)
        if plan:
            msg.add(subj, "plans", plan, clause, confidence=0.7, when=when)
        return bool(plan)
    if tense != "past":
        return False
    if not place:  # "我去爬山了": an activity, not a place
        if activity in _ERRANDS and when is None:
            return False  # "我去吃饭了": about to, and nothing to remember
        msg.add(subj, "did", activity, clause, confidence=0.7, when=when)
        return True
    pred = "attended" if place.endswith(EVENT_NOUNS) else "visited"
    msg.add(subj, pred, place, clause, confidence=0.8, when=when)
    if pred == "visited" and is_place(place):
        msg.entity(place, "place")
    return True


_ACTIVITIES_LONGEST_FIRST = sorted(ACTIVITIES, key=len, reverse=True)


def _place_and_activity(text: str) -> tuple[str, str]:
    """``公园散步`` → (``公园``, ``散步``); ``爬山`` → (``""``, ``爬山``); ``医院`` →
    (``医院``, ``""``): where someone went, and what for."""
    for activity in _ACTIVITIES_LONGEST_FIRST:
        if text.endswith(activity):
            return text[: -len(activity)].rstrip("里中边"), activity
    return text, ""


def h_back_from(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我刚从日本回来`` → visited 日本."""
    obj = noun_phrase(m.group("obj"))
    if not subj.name or not is_place(obj) or subj.head.future or subj.head.habitual:
        return False
    when = msg.date_of(clause, "past")
    msg.add(subj, "visited", obj, clause, confidence=0.75, when=when)
    msg.entity(obj, "place")
    return True


def h_attend(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我上周参加了一个婚礼`` → attended 婚礼 (dated); ``下个月要参加…`` → plans."""
    if not subj.name:
        return False
    raw = trim(m.group("obj"))
    event = re.search(f"^.{{0,12}}?{alt(EVENT_NOUNS)}", raw)  # "一个社群组织的聚会"
    obj = trim(event.group(0)) if event else noun_phrase(raw)
    if not obj or obj in VAGUE or DEMONSTRATIVE.match(obj):
        return False
    tense, when = tense_of(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", m.group("verb") + obj, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    msg.add(subj, "attended", obj, clause, confidence=0.8, when=when)
    return True


_STATUS = {"结婚": "已婚", "离婚": "离异", "订婚": "订婚", "分手": "单身"}


def h_life_event(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我去年结婚了`` / ``我辞职了`` / ``我下个月毕业``."""
    if not subj.name:
        return False
    event = m.group("ev").replace("了", "")
    tense, when = tense_of(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", event, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    partner = re.sub(rf"^(?:我的?)?{KIN_RE}", "", m.groupdict().get("with") or "")
    if partner and event == "结婚" and is_name(partner):
        relation_fact(msg, subj.name, "spouse", partner, clause)
    elif partner and event in ("分手", "离婚") and is_name(partner):
        relation = "partner" if event == "分手" else "spouse"
        msg.add(subj, relation, partner, clause, 0.8, object_type="person", negated=True)
    if m.groupdict().get("span") and event == "结婚":  # "结婚三年了": still married
        msg.add(subj, "relationship_status", "已婚", clause, confidence=0.8)
    elif event in _STATUS and when is None:
        msg.add(subj, "relationship_status", _STATUS[event], clause, confidence=0.8)
    else:
        msg.add(subj, "did", event, clause, confidence=0.75, when=when)
    return True


def h_plan_cancelled(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``去日本的计划取消了`` / ``我取消了去日本的行程`` → plans 去日本, negated."""
    if not subj.name:
        return False
    obj = _plan_object(re.sub(r"^(?:我们|我)的?", "", m.group("obj")))
    if not obj:
        return False
    msg.add(subj, "plans", obj, clause, confidence=0.7, negated=True)
    return True


def h_plan_dropped(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我不去日本了`` → plans 去日本, negated (a plan given up)."""
    if not subj.name or subj.head.past:
        return False
    obj = _plan_object(m.group("verb") + m.group("obj"))
    if not obj:
        return False
    msg.add(subj, "plans", obj, clause, confidence=0.65, negated=True)
    return True


def h_future_plan(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我下个月要考驾照`` → plans 考驾照 on the date: 要/会 with a date ahead (without
    one, ``我要一杯咖啡`` is a request, not a plan)."""
    if not subj.name or subj.implicit or subj.head.habitual:
        return False  # "明天会下雨": no one's plan
    if re.match(r"[0-9一二两三四五六七八九十]", m.group("obj")):
        return False  # "我明年就要三十岁了"
    when = msg.date_of(clause, "future")
    if when is None or msg.timestamp is None or when <= msg.timestamp.date():
        return False
    obj = _plan_object(m.group("obj"))
    if not obj or not starts_with_verb(obj):
        return False
    msg.add(subj, "plans", obj, clause, confidence=0.7, when=when)
    return True


#: Verbs whose completion states nothing worth remembering (thinking, saying, feeling,
#: being, light verbs), or that other rules read (去, 参加, 住, 喜欢…).
_NOT_ACTION_VERBS = word_set(
    "是 有 没有 没 在 说 讲 想 觉得 认为 知道 明白 懂 忘 忘记 记得 听说 发现 感觉 感到 希望 喜欢 "
    "爱 讨厌 叫 养成 成 变成 成为 像 问 告诉 答应 同意 打扰 麻烦 谢谢 聊 聊天 查 查查 试 试试 等 "
    "看到 看见 听到 需要 要 想要 能 会 可以 应该 得 让 使 给 帮 帮忙 用 弄 搞 到 走 过 睡 "
    "睡觉 起床 醒 累 饿 困 忙 笑 哭 死 错 说错 写错 住 生活 工作 上班 下班 决定 打算 准备 计划 "
    "参加 出席 养 搬到 离开 辞职 离职 结婚 毕业 开始 继续 停 完 好 对 行 收到 得到 遇 变 长 "
    "胖 瘦 老 病 回来 出去 进来 放假 取消 推迟 答 回复 回答 看看 想想 说说 提醒 理解 误会 "
    "听 看 玩 逛 待 呆 躺 坐 站 洗澡 上厕所 吃饭 明白了 懂了 记住 同情 担心 害怕 怕 喝醉 醉 "
    "饱 吃饱 喝 吃 换成 点 叫做 称 算 当 做 干 花 等等 发 收 拿"
)
#: Verbs that count only together with the date of the event: "我昨天吃了火锅".
_DATED_ONLY_VERBS = word_set("看 听 玩 逛 吃 喝 点 做 干 花 拿 收 发 当 待 呆")
#: "去看牙医了": a movement before the action is part of it.
_MOVE_VERBS = frozenset(["去", "来", "回去", "过去"])
#: Result complements that make an action complete: 跑完, 拿到, 学会, 卖掉.
_COMPLEMENTS = frozenset(["完", "到", "好", "掉", "会", "上", "成", "出"])
_ACTION_CUE = re.compile("了|过|完")
#: Adverbs that mark a finished action even without a date: "终于拿到了毕业证".
_DONE_WORDS = frozenset(["刚", "终于", "刚刚", "第一次", "头一次", "已经"])
_LOCATIVE_TAIL = re.compile(r"(?:在|于)[^在我你他她]{1,10}$")


def _action_head(msg: Message, head_text: str) -> Subject | None:
    """The subject before an action, allowing a place between them (``我在星巴克``)."""
    head = parse_head(head_text)
    if head is None:
        m = _LOCATIVE_TAIL.search(head_text)
        head = parse_head(head_text[: m.start()]) if m and m.start() > 0 else None
    if head is None or head.kind in ("member", "it"):
        return None
    subj = msg.bind(head)
    return subj if subj is not None and subj.name else None


def past_action(msg: Message, clause: Clause) -> Subject | None:
    """A finished action as said, for a clause no other event rule read: ``我今天跑了十公里``
    → did ``跑了十公里``; ``我上周拔了智齿`` → did ``拔了智齿`` (dated); ``我昨天去看了…的
    演唱会`` → attended. The first verb after a trusted subject decides: it must be an
    action (not ``觉得``, ``说``, ``叫``…), completed (``了``/``过`` with an object, or a
    result such as ``完``/``到``), and either dated, completed by its result, or marked
    done (``刚``, ``终于``). Returns the subject when a fact was added."""
    text = clause.text
    if not _ACTION_CUE.search(text):
        return None
    pairs = pos_tags(text)
    offsets = [0]
    for word, _tag in pairs:
        offsets.append(offsets[-1] + len(word))
    start = -1  # where the action (with a movement verb before it) starts
    subj: Subject | None = None
    for i, (word, tag) in enumerate(pairs):
        is_verb = tag.startswith("v") or (
            len(word) == 2 and word[-1] in _COMPLEMENTS and tag in ("n", "nz", "x")  # 学会/n
        )
        if word != "把" and not is_verb:
            continue
        if subj is None:
            subj = _action_head(msg, text[: offsets[i]])
            if subj is None:
                return None  # "我觉得他跑了…": the first verb belongs to no trusted subject
            start = offsets[i]
        if word in _MOVE_VERBS and start == offsets[i]:
            continue  # "去看牙医": read on to the action
        if word == "把":
            return _ba_action(msg, subj, clause, text[start:])
        if word in _NOT_ACTION_VERBS and word not in _DATED_ONLY_VERBS:
            return None
        return _finished(msg, subj, clause, pairs, i, offsets, start)
    return None


def _finished(
    msg: Message,
    subj: Subject,
    clause: Clause,
    pairs: tuple[tuple[str, str], ...],
    i: int,
    offsets: list[int],
    start: int,
) -> Subject | None:
    """The action whose verb is ``pairs[i]`` (see :func:`past_action`)."""
    text = clause.text
    verb = pairs[i][0]
    j = i + 1
    result = len(verb) >= 2 and verb[-1] in _COMPLEMENTS and verb not in _NOT_ACTION_VERBS
    while j < len(pairs) and pairs[j][0] in _COMPLEMENTS and not result:
        result, j = True, j + 1
    aspect = ""
    if j < len(pairs) and pairs[j][0] in ("了", "过"):
        aspect, j = pairs[j][0], j + 1
    rest = trim(text[offsets[j] :]) if j < len(pairs) else ""
    final_le = not aspect and text.endswith("了") and bool(rest)  # "拔智齿了"
    if not rest or not re.search(f"[{HAN}A-Za-z0-9]", rest):
        return None
    if DEMONSTRATIVE.match(rest) or "你" in rest or "您" in rest or "我" in rest:
        return None
    if rest in VAGUE or re.match("(?:很多|好多|不少|一些|一点|一下|这么|那么|半天|一会)", rest):
        return None  # "学了很多": nothing to remember
    if not (aspect or result or final_le):
        return None
    tense, when = tense_of(msg, subj, clause, aspect or "了")
    if tense != "past":
        return None
    done = bool(subj.head.words & _DONE_WORDS)
    if when is None and (final_le or verb in _DATED_ONLY_VERBS or not (result or done)):
        return None
    event = re.search(f"^.{{0,12}}?{alt(EVENT_NOUNS)}$", cut(rest))
    if event and verb in ("看", "听", "参加", "观看"):
        name = noun_phrase(event.group(0)) or event.group(0)
        msg.add(subj, "attended", name, clause, confidence=0.75, when=when)
        return subj
    action = TRAIL.sub("", cut(text[start:])).strip()
    if len(action) > 16 or len(action) < 2:
        return None
    if when is None and re.sub("[完了过好]", "", action) in _ERRANDS:
        return None  # "我刚洗完澡"
    msg.add(subj, "did", action, clause, confidence=0.65, when=when)
    return subj


def _ba_action(msg: Message, subj: Subject, clause: Clause, action: str) -> Subject | None:
    """``团子今天又把杯子打翻了`` → did ``把杯子打翻``: a 把 sentence that ends done."""
    if not clause.text.endswith("了") or len(action) > 16 or "你" in action:
        return None
    if DEMONSTRATIVE.match(action[1:]):
        return None  # "把它删了", "把这事忘了": about something said before
    tense, when = tense_of(msg, subj, clause, "了")
    if tense != "past":
        return None
    msg.add(subj, "did", TRAIL.sub("", action), clause, confidence=0.65, when=when)
    return subj


def h_decision_pending(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我已经想好了``: the decision is the next clause (``明年考研``)."""
    if not subj.name:
        return False
    msg.pending_decision = subj
    return True


_DECISION_LEAD = re.compile(rf"^(?:{TIME}|我们|我|就|还是|干脆|索性)+")


def decision_content(msg: Message, clause: Clause) -> bool:
    """The clause after ``我想好了``, as what was decided (``明年考研`` → decided 考研)."""
    subj, msg.pending_decision = msg.pending_decision, None
    if subj is None:
        return False
    obj = _plan_object(_DECISION_LEAD.sub("", clause.text), decision=True)
    if not obj:
        return False
    when = msg.date_of(clause, None)
    msg.add(subj, "decided", obj, clause, confidence=0.7, when=when)
    return True
