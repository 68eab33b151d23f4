"""Handlers for who someone is.

Names and relations, age and birthday, home and origin, job, employer, projects and
roles, studies and languages, gender and relationship status. A handler gets the message,
the bound subject, the rule's match and the clause; it adds facts and returns whether the
rule applied (then the other rules of its group are skipped for the clause).
"""

from __future__ import annotations

import re
from dataclasses import replace

from mnemolayer.extract.rules.zh.context import (
    FUTURE_CUE,
    Clause,
    Handler,
    Head,
    Message,
    Subject,
    identity_fact,
    is_negated,
    relation_fact,
    tense_of,
)
from mnemolayer.extract.rules.zh.lexicon import (
    COMPANIES,
    COUNTRIES,
    DEMONSTRATIVE,
    HAN,
    KIN,
    LATIN_NAME,
    NICKNAME,
    NOT_NAMES,
    SURNAMES,
    VAGUE,
)
from mnemolayer.extract.rules.zh.text import (
    NOUN_TAGS,
    clean_object,
    cut,
    dictionary_tag,
    is_field,
    is_job,
    is_language,
    is_name,
    is_only_place,
    is_org,
    is_pet_called,
    is_place,
    is_school,
    noun_phrase,
    number,
    place_object,
    pos_tags,
    split_list,
    trim,
)


def h_name(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我叫李明`` / ``我的名字是…`` / ``我妹妹叫小雨`` / ``我的猫叫豆豆``."""
    obj = trim(m.group("obj"))
    head = subj.head
    if head.kind == "pet":
        if head.name or not is_pet_called(obj):
            return False
        msg.add(subj.owner, "has_pet", obj, clause, confidence=0.85, object_type=head.animal)
        msg.entity(obj, "pet")
        msg.topic = Subject(replace(head, name=obj), obj, subj.owner)  # "它今年五岁了"
        return True
    if not (is_name(obj, after_relation=head.kind == "relative") or _is_given_name(obj, head)):
        return False
    if head.kind == "relative" and not head.name:
        relation_fact(msg, subj.owner, head.relation, obj, clause)
        msg.topic = Subject(Head("person", name=obj), obj, "")
        msg.haver = subj.owner  # "我有一个弟弟叫小杰，还有一个姐姐叫小慧"
        return True
    if subj.is_self:
        msg.add(subj, "name", obj, clause, confidence=0.9)
        return True
    return False


def _is_given_name(text: str, head: Head) -> bool:
    """After ``我女儿叫`` any short name-like word is the name (``朵朵``, ``豆豆``)."""
    if head.kind != "relative" or head.name or text in NOT_NAMES or text in KIN:
        return False
    if NICKNAME.fullmatch(text):  # 乐乐, 朵朵, even 明明: after 叫 a name
        return dictionary_tag(text) not in ("e", "y", "r") and text not in KIN
    return re.fullmatch(f"[{HAN}]{{2,3}}|[A-Za-z]{{2,20}}", text) is not None and (
        dictionary_tag(text) not in ("v", "a", "d", "r", "p", "c", "u", "vn", "ad", "t", "m")
    )


def h_is_name(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我是李明`` (a self-introduction) / ``我妹妹是小雨``."""
    obj = trim(m.group("obj"))
    head = subj.head
    if head.kind == "relative" and not head.name and is_name(obj):
        relation_fact(msg, subj.owner, head.relation, obj, clause)
        msg.topic = Subject(Head("person", name=obj), obj, "")
        return True
    if (
        subj.is_self
        and not subj.implicit
        and is_name(obj)
        and not is_job(obj)
        and (obj[0] in SURNAMES or LATIN_NAME.fullmatch(obj) is not None)
        and not obj.isupper()  # "我是CEO", "我是AI"
    ):
        msg.add(subj, "name", obj, clause, confidence=0.75)
        return True
    return False


def h_relation_of(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``王芳是我的同事`` → (speaker, colleague, 王芳); ``小美已经不是我女朋友了`` →
    (speaker, partner, 小美), negated."""
    if subj.head.kind != "person" or not subj.name:
        return False
    neg = m.groupdict().get("neg") or ""
    if neg:
        if neg == "不" and not (m.group("le") or subj.head.retracting):
            return False  # "小美不是我女朋友": a denial, not a break-up
        msg.add(msg.speaker, KIN[m.group("kin")], subj.name, clause, 0.8,
                object_type="person", negated=True)  # fmt: skip
        return True
    relation_fact(msg, msg.speaker, KIN[m.group("kin")], subj.name, clause)
    return True


def h_has_relative(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我有一个女儿``: no fact yet, but the next clause (``叫朵朵``) is about her."""
    if not subj.is_self:
        return False
    msg.topic = Subject(Head("relative", relation=KIN[m.group("kin")]), "", subj.name)
    msg.counted = msg.topic  # "大的叫乐乐，小的叫安安"
    msg.haver = subj.name
    return True


def h_mutual(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我和小雨是好朋友`` → (speaker, friend, 小雨)."""
    who = subj.head.name
    if not subj.is_self or not is_name(who):
        return False
    relation_fact(msg, subj.name, KIN[m.group("kin")], who, clause)
    return True


def h_age(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    value = number(m.group("num"))
    if value is None or not 0 < value < 120:
        return False
    return identity_fact(msg, subj, "age", str(value), clause, confidence=0.9)


def h_birthday(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    found = re.search(
        r"(?:\d{4}年)?(?:\d{1,2}|[一二三四五六七八九十]{1,2})月(?:\d{1,2}|[一二三四五六七八九十]{1,3})[日号]",
        m.group("obj"),
    )
    if found is None:
        return False
    return identity_fact(msg, subj, "birthday", found.group(0), clause)


def h_lives(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``住在上海`` / ``住北京`` / ``在上海住了五年``: a named place (not ``酒店``)."""
    obj = place_object(m.group("obj"))
    if not is_place(obj) or subj.head.future:
        return False
    return identity_fact(msg, subj, "lives_in", obj, clause, negated=is_negated(m, subj, clause))


def h_move(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``搬到了波尔图``: the new home (past) or a plan (future)."""
    obj = place_object(m.group("obj"))
    if not obj or not is_place(obj) or not subj.name:
        return False
    tense, when = tense_of(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", m.group("verb") + obj, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    return identity_fact(msg, subj, "lives_in", obj, clause, when=when)


def h_move_out(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = place_object(m.group("obj"))
    return (
        bool(obj)
        and is_place(obj)
        and identity_fact(msg, subj, "lives_in", obj, clause, negated=True)
    )


def h_from(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = place_object(m.group("obj"))
    if not obj or not is_place(obj):
        return False
    if obj in COUNTRIES and m.group(0).endswith("人"):
        return identity_fact(msg, subj, "nationality", obj, clause)
    return identity_fact(msg, subj, "from", obj, clause)


def _job_object(text: str) -> str:
    """A job as said, without a trailing duration or ``工作``/``行业``; a described job
    keeps only the title (``来自成都的护士`` → ``护士``)."""
    text = trim(re.sub(r"(?:工作|行业|方面的工作|相关的工作)了?$", "", cut(text)))
    text = trim(re.sub(r"(?:[0-9一二两三四五六七八九十几多]+年了?|很多年了?|好多年了?)$", "", text))
    owner, _, title = text.rpartition("的")
    if owner and is_job(title) and not re.match("[我你您他她它咱]", owner):
        return title  # but "我的老板" is a relation, not a job
    return text


def h_job(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = _job_object(m.group("obj"))
    if not is_job(obj):
        return False
    negated = is_negated(m, subj, clause)
    if negated and not clause.text.endswith("了"):
        return False
    return identity_fact(msg, subj, "job", obj, clause, negated=negated)


def h_job_free(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我的工作是…`` / ``我是做设计的`` / ``我从事金融行业``: the wording as said."""
    obj = clean_object(_job_object(m.group("obj")), max_len=12)
    if not obj or pos_tags(obj)[-1][1] in ("a", "ad", "d", "z", "i"):
        return False  # "我的工作是一份很好的工作" → "很好": a judgement, not a job
    return identity_fact(msg, subj, "job", obj, clause, confidence=0.85 if is_job(obj) else 0.75)


def h_job_at(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我是腾讯的工程师`` / ``我在医院当护士``: employer and job."""
    org = noun_phrase(m.group("org"))
    job = _job_object(m.group("obj"))
    if not is_job(job) or not org:
        return False
    if job.endswith("生") and is_school(org):
        return identity_fact(msg, subj, "studies_at", org, clause)
    if is_org(org) and not is_only_place(org):
        identity_fact(msg, subj, "works_at", org, clause)
    return identity_fact(msg, subj, "job", job, clause)


def h_works_at(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    raw = trim(m.group("obj"))
    if re.search(r"项目组?$", raw):
        name = _project_name(raw)
        return bool(name) and identity_fact(msg, subj, "works_on", name, clause)
    obj = noun_phrase(raw)
    if not obj or obj in VAGUE or is_only_place(obj) or obj != raw:
        return False
    if subj.head.future:
        return False
    return identity_fact(msg, subj, "works_at", obj, clause, negated=is_negated(m, subj, clause))


def h_at_company(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我现在在腾讯`` → works_at 腾讯: being "at" a company is working there (being at
    a shop or a hospital is not)."""
    obj = trim(m.group("obj"))
    if obj not in COMPANIES and not obj.endswith(("公司", "集团", "科技", "有限公司")):
        return False
    if (len(obj) <= 2 and obj not in COMPANIES) or subj.head.future or subj.head.group:
        return False
    return identity_fact(msg, subj, "works_at", obj, clause, negated=is_negated(m, subj, clause))


def h_joined(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``跳槽到了字节`` / ``加入了腾讯``: a new employer."""
    obj = noun_phrase(m.group("obj"))
    if not is_org(obj) or is_only_place(obj) or is_school(obj):
        return False
    tense, when = tense_of(msg, subj, clause, "了" if "了" in m.group(0) else "")
    if tense == "future":
        msg.add(subj, "plans", m.group(0).replace("了", ""), clause, confidence=0.65, when=when)
        return True
    return identity_fact(msg, subj, "works_at", obj, clause)


def h_quit(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我从阿里辞职了`` → works_at 阿里, negated."""
    obj = noun_phrase(m.group("obj"))
    if not obj or obj in VAGUE or is_only_place(obj) or subj.head.future:
        return False
    return identity_fact(msg, subj, "works_at", obj, clause, negated=True)


def _project_name(text: str) -> str:
    text = trim(text)
    text = re.sub(r"(?:这个|那个)?(?:项目组?|组|团队)$", "", text)
    text = trim(re.sub(r"^(?:一个|新的?)?(?:叫做?|名叫|名为)?", "", text))
    if not text or DEMONSTRATIVE.match(text) or text in VAGUE or len(text) > 16:
        return ""
    return text


def h_works_on(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    name = _project_name(m.group("obj"))
    if not name or subj.head.past:
        return False
    return identity_fact(msg, subj, "works_on", name, clause, negated=is_negated(m, subj, clause))


def h_reassigned(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``从Orca项目调到了Kestrel项目`` → works_on Kestrel (a department is no project)."""
    target = trim(m.group("obj"))
    if "项目" not in m.group(0) and not re.fullmatch(r"[A-Za-z][A-Za-z0-9\- ]{0,30}", target):
        return False
    return h_works_on(msg, subj, m, clause)


#: What one works on rather than a duty: "负责外卖业务" → works_on 外卖业务.
_WORK_AREAS = ("业务", "业务线", "产品", "产品线", "系统", "模块", "平台", "板块", "App", "APP")


def h_responsible(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``负责Orca项目`` → works_on Orca; ``负责招聘`` → role 招聘."""
    raw = trim(cut(m.group("obj")))
    if "项目" in raw or re.fullmatch(r"[A-Za-z][A-Za-z0-9\- ]{0,30}", raw):
        return h_works_on(msg, subj, m, clause)
    if raw.endswith(_WORK_AREAS) and len(raw) > 2 and not DEMONSTRATIVE.match(raw):
        return identity_fact(
            msg, subj, "works_on", raw, clause, negated=is_negated(m, subj, clause)
        )
    return h_role(msg, subj, m, clause)


def h_role(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = clean_object(m.group("obj"), max_len=16)
    if not obj or not subj.name or subj.head.past or subj.head.future:
        return False
    msg.add(subj, "role", obj, clause, confidence=0.7, negated=is_negated(m, subj, clause))
    if not subj.is_self:
        msg.person(subj.name)
    return True


def h_studies_at(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = noun_phrase(m.group("obj"))
    if not is_school(obj) or subj.head.future:
        return False
    identity_fact(msg, subj, "studies_at", obj, clause, negated=is_negated(m, subj, clause))
    rest = m.groupdict().get("rest") or ""
    field_ = trim(re.sub(r"专业$", "", trim(rest)))
    if field_ and is_field(field_):
        identity_fact(msg, subj, "studies", field_, clause)
    return True


def h_studies(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    obj = trim(re.sub(r"专业(?:的)?(?:学生|研究生)?$", "", trim(m.group("obj"))))
    latin = re.fullmatch(r"[A-Za-z][A-Za-z &\-]{1,40}", obj) is not None  # "computer science"
    if (
        not (
            is_field(obj)
            or (latin and m.group(0).startswith(("学的是", "读的是", "主修", "专业是", "的专业是")))
        )
        or subj.head.future
    ):
        return False
    return identity_fact(msg, subj, "studies", obj, clause, confidence=0.8)


def h_speaks(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    languages = [trim(p) for p in split_list(trim(m.group("obj")))]
    if not languages or not all(is_language(lang) for lang in languages) or not subj.name:
        return False
    for lang in languages:
        msg.add(subj, "speaks", lang, clause, confidence=0.8)
    return True


def h_status(value: str) -> Handler:
    """The handler of ``我单身`` / ``已婚`` (``relationship_status`` ``value``); ``我已经
    不是单身了`` retracts it."""

    def handler(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
        negated = bool(m.groupdict().get("neg"))
        return identity_fact(
            msg, subj, "relationship_status", value, clause, confidence=0.8, negated=negated
        )

    return handler


def h_gender(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    if not subj.is_self or subj.implicit:
        return False
    return identity_fact(msg, subj, "gender", "男" if "男" in m.group("obj") else "女", clause)


def h_lives_came(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我来北京工作五年了`` → lives_in 北京: came to a place to work or live, and is
    there (a duration or 了; not ``我来北京出差``, not a plan)."""
    obj = place_object(m.group("obj"))
    if not is_place(obj) or (is_org(obj) and not is_only_place(obj)):
        return False
    if subj.head.future or not (clause.text.endswith("了") or "已经" in subj.head.words):
        return False
    if FUTURE_CUE.search(clause.text):
        return False
    return identity_fact(msg, subj, "lives_in", obj, clause)


def h_left_org(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我上个月离开了百度`` → works_at 百度, negated (an employer, not a city)."""
    obj = noun_phrase(m.group("obj"))
    if not obj or obj != trim(m.group("obj")) or not is_org(obj) or is_only_place(obj):
        return False
    tense, when = tense_of(msg, subj, clause, "了")
    if tense != "past":
        return False
    pred = "studies_at" if is_school(obj) and not obj.endswith(("医院", "研究所")) else "works_at"
    return identity_fact(msg, subj, pred, obj, clause, negated=True, when=when)


def h_studies_said(msg: Message, subj: Subject, m: re.Match[str], clause: Clause) -> bool:
    """``我是学医的`` / ``我是学金融的`` → studies, the field as said."""
    obj = trim(m.group("obj"))
    if not obj or subj.head.future or subj.head.past:
        return False
    if not (is_field(obj) or re.fullmatch(f"[{HAN}]{{1,4}}", obj)):
        return False
    tags = pos_tags(obj)
    if len(obj) > 1 and not all(t in NOUN_TAGS or t in ("vn", "b") for _w, t in tags):
        return False
    return identity_fact(msg, subj, "studies", obj, clause, confidence=0.75)
