"""The rule table.

One regular expression per way of saying a fact, the group it belongs to (at most one
rule of a group applies to a clause) and its handler. The text before a match is the
clause's head (:func:`.context.parse_head`); rules are tried in this order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemolayer.extract.rules.zh.context import Handler
from mnemolayer.extract.rules.zh.events import (
    h_attend,
    h_back_from,
    h_decision_pending,
    h_future_plan,
    h_go,
    h_life_event,
    h_plan_called_off,
    h_plan_cancelled,
    h_plan_dropped,
    plan_handler,
)
from mnemolayer.extract.rules.zh.identity import (
    h_age,
    h_at_company,
    h_birthday,
    h_from,
    h_gender,
    h_has_relative,
    h_is_name,
    h_job,
    h_job_at,
    h_job_free,
    h_joined,
    h_left_org,
    h_lives,
    h_lives_came,
    h_move,
    h_move_out,
    h_mutual,
    h_name,
    h_quit,
    h_reassigned,
    h_relation_of,
    h_responsible,
    h_role,
    h_speaks,
    h_status,
    h_studies,
    h_studies_at,
    h_studies_said,
    h_works_at,
    h_works_on,
)
from mnemolayer.extract.rules.zh.lexicon import KIN_RE, TIME
from mnemolayer.extract.rules.zh.tastes import (
    h_allergy,
    h_diet,
    h_eats,
    h_hobby,
    h_no_eat,
    h_pet,
    h_pet_is,
    preference,
)


@dataclass(frozen=True, slots=True)
class _Rule:
    """``pattern`` is searched in a clause; the text before the match is the head. When
    ``handler`` returns True, the other rules of ``group`` are skipped for the clause."""

    group: str
    pattern: re.Pattern[str]
    handler: Handler


_NEG = r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)?"
_RETRACT = r"(?P<neg>不再|已经不再?|再也不|早就不)?"
_FILL = r"(?:有点|有些|有一点|很|非常|特别|严重|轻微|也|都|一直)*"


def _r(group: str, pattern: str, handler: Handler) -> _Rule:
    return _Rule(group, re.compile(pattern), handler)


RULES: tuple[_Rule, ...] = (
    # names and relations
    _r("name", r"(?:的)?(?:名字|全名|姓名|真名|中文名字?|英文名字?)(?:是|叫|叫做|:)(?P<obj>.+)", h_name),
    _r("name", r"(?:叫做|名叫|叫)(?P<obj>.+)", h_name),
    _r("name", r"(?:给(?:它|他|她))?(?:取名|起名|取了个?名字?|起了个?名字?)(?:叫做?|为)?(?P<obj>.+)", h_name),
    _r("name", rf"(?P<neg>已经不|不再|早就不|不)?是(?:我|我的)(?:的)?(?P<kin>{KIN_RE})(?P<le>了|啦)?$", h_relation_of),
    _r("name", rf"(?:有|还有)(?:一|两|三)?(?:个|位)(?P<kin>{KIN_RE})$", h_has_relative),
    _r("name", r"(?:是|都是)(?:好|老|最好的)?(?P<kin>朋友|同事|闺蜜|好友|发小)$", h_mutual),
    _r("name", r"是(?P<obj>[^一个名位的]{2,12})$", h_is_name),
    # identity
    _r("age", r"(?:今年|现在|目前)?(?:已经)?(?:满)?(?P<num>\d{1,3}|[一二两三四五六七八九十百]{1,4})(?:周)?岁(?:了|啦|半)?$", h_age),
    _r("birthday", r"(?:的)?生日(?:是|在|:)(?P<obj>.+)", h_birthday),
    _r("birthday", r"是?(?P<obj>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号])(?:出生|生)的?$", h_birthday),
    _r("lives", r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)?(?:家)?(?:住|居住|生活|定居)(?:在|于)(?P<obj>.+)", h_lives),
    _r("lives", r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)?(?:家)?住(?![在院宿手口嘴过])(?P<obj>.+)", h_lives),
    _r("lives", r"家(?:住)?在(?P<obj>.+)", h_lives),
    _r("lives", r"在(?P<obj>[^在]{2,10}?)(?:住|居住|生活|定居)(?:了|着)?", h_lives),
    _r("lives", r"(?:来|到)(?P<obj>[^来到]{2,8}?)(?:工作|生活|定居|发展|打工|上班|读书)", h_lives_came),
    _r("move", r"(?:从(?P<old>.{1,10}?))?(?P<verb>搬家到|搬家去|搬到|搬去|搬来|搬回|迁到|迁居到?|移居到?|移民到?|定居到)(?P<asp>了)?(?P<obj>.+)", h_move),
    _r("move", r"(?:搬离|搬出)了?(?P<obj>.+)", h_move_out),
    _r("from", r"来自(?:于)?(?P<obj>.+)", h_from),
    _r("from", r"是(?P<obj>[^是]{2,8}?)人$", h_from),
    _r("from", r"(?:出生|生|长大)(?:在|于)(?P<obj>.+)", h_from),
    _r("from", r"在(?P<obj>[^在]{2,10}?)(?:出生|长大)", h_from),
    _r("from", r"(?:的)?(?:老家|家乡|故乡|籍贯|出生地)(?:是|在|:)(?P<obj>.+)", h_from),
    _r("gender", r"是(?:个|一个|一名)?(?P<obj>男生|女生|男孩子?|女孩子?|男的|女的|男人|女人|男性|女性)$", h_gender),
    _r("status", r"(?P<neg>已经不|不再)是?单身了?$", h_status("单身")),
    _r("status", r"(?:是|还是|目前|现在)?单身(?:狗|状态)?$", h_status("单身")),
    _r("status", r"已婚$", h_status("已婚")),
    _r("job", r"(?:的)?(?:工作|职业|职位|岗位|本职工作)(?:是|:)(?P<obj>.+)", h_job_free),
    _r("job", r"是(?P<org>[^的是]{1,12})的(?P<obj>[^的]+)$", h_job_at),
    _r("job", r"在(?P<org>[^在]{2,12}?)(?:当|做|担任)(?P<obj>.+)", h_job_at),
    _r("job", r"(?P<neg>已经不|不再)?是(?:一名|一个|一位|一枚|个|名|位)?(?P<obj>[^是]+)$", h_job),
    _r("job", r"是做(?P<obj>.{1,8})的$", h_job_free),
    _r("job", r"(?P<neg>不再|已经不再?|早就不|现在不|不)?(?:转行|改行|转岗)?(?:去|来)?(?:当|担任|做|干)(?:了)?(?:一名|一个|一位|个|名)?(?P<obj>.+)", h_job),
    _r("job", r"从事(?P<obj>.+)", h_job_free),
    # work
    _r("work", r"(?P<neg>不再|已经不再?|早就不|现在不|不)?在(?P<obj>[^在]{1,20}?)(?:工作|上班|任职|实习|打工|就职|供职|干(?:了|活)?$)", h_works_at),
    _r("work", r"(?:就职于|任职于|供职于|受雇于|服务于)(?P<obj>.+)", h_works_at),
    _r("work", r"在(?P<obj>[^在]{2,12})$", h_at_company),
    _r("work", r"(?:加入了|入职了|跳槽到了?|跳槽去了|跳槽进了|进了)(?P<obj>.+?)(?:工作|上班)?$", h_joined),
    _r("work", r"从(?P<obj>.{1,16}?)(?:辞职|离职|退休)了?", h_quit),
    _r("work", r"(?:辞去了|辞掉了|离开了|退出了)(?P<obj>.+?)的工作", h_quit),
    _r("work", r"(?:离开了|离开|告别了)(?P<obj>[^的]{2,12})$", h_left_org),
    _r("project", r"从(?P<old>.{1,16}?)(?:调到|转到|调去|转去|换到|调入|转入|调往)了?(?P<obj>.+)", h_reassigned),
    _r("project", r"(?:被)?(?:调到|转到|调去|转去|换到|调入|转入|调往)了?(?P<obj>.+?项目组?)", h_works_on),
    _r("project", rf"{_RETRACT}负责(?!管理)(?P<obj>.+)", h_responsible),
    _r("project", r"(?:在做|在搞|参与了?|在跟)(?P<obj>.+?项目)", h_works_on),
    _r("role", rf"{_RETRACT}(?:负责管理|管理|掌管|维护|运营|带领|打理|(?<![我的])(?:领导|主管))(?:着)?(?P<obj>.+)", h_role),
    # study
    _r("school", r"(?P<neg>不再|已经不再?|早就不|现在不|不)?(?:在|于)(?P<obj>[^在]{2,16}?)(?:读书|上学|念书|读大学|上大学|读研究生|读研|读博士?|读本科|读硕士|读高中|读初中|读小学|上高中|上初中|上小学|上幼儿园|进修|读大[一二三四]|上大[一二三四]|读|学习|上课)(?P<rest>.*)$", h_studies_at),
    _r("school", r"(?:就读于|在读于|求学于)(?P<obj>.+)", h_studies_at),
    _r("school", r"是(?P<obj>.{2,16}?)的(?:学生|研究生|本科生|博士生|硕士生|大[一二三四]学生|高中生|初中生|小学生|留学生)$", h_studies_at),
    _r("field", r"(?:学的是|主修|的专业是|专业是|读的是|学的专业是|研究方向是|的方向是)(?P<obj>.+)", h_studies),
    _r("school", r"是(?P<obj>.{2,10}?)(?P<rest>[^的]{1,6})(?:系|学院)的(?:学生|研究生|本科生|博士生|硕士生)?$", h_studies_at),
    _r("field", r"是(?P<obj>.{1,10}?)专业的?(?:学生|研究生)?$", h_studies),
    _r("field", r"(?:在读|读)(?P<obj>.{1,10}?)专业$", h_studies),
    _r("field", r"是(?:学|读|念)(?P<obj>[^的]{1,8})的$", h_studies_said),
    _r("field", r"(?:在学习|学习|在学|学)(?![会生校期到着过完得院历位费年术分员者姐长妹弟习])(?P<obj>.+)$", h_studies),
    _r("speaks", r"(?:会说|会讲|能说|能讲|说|讲|会)(?:一点点|一点|一些|一口|点|流利的|很流利的|流利)?(?P<obj>.+)$", h_speaks),
    _r("speaks", r"(?:的)?母语是(?P<obj>.+)$", h_speaks),
    # pets
    _r("pet", r"^(?:我的|我家的?)宠物(?:是|有)(?P<obj>.+)", h_pet_is),
    _r("pet", rf"{_NEG}(?:家里?)?(?P<verb>领养了|收养了|捡了|买了|养了|养着|养|有)(?P<obj>.+)", h_pet),
    # preferences
    _r("pref", r"(?:还是)?(?:更|更加)(?:喜欢|爱|倾向于|偏向于?|偏爱)(?P<obj>.+)", preference("prefers")),
    _r("pref", r"(?:喜欢|爱)(?P<obj>.+?)(?:多于|胜过|多过|超过|甚于|而不是|而非)", preference("prefers")),
    _r("pref", r"偏爱(?P<obj>.+)", preference("prefers")),
    _r("pref", r"(?:的)?最(?:讨厌|不喜欢)的[^是]{0,6}是(?P<obj>.+)", preference("dislikes")),
    _r("pref", r"(?:的)?最?(?:喜欢|爱)的[^是]{0,6}是(?P<obj>.+)", preference("likes")),
    _r("pref", r"对(?P<obj>[^对不]+?)(?:很|非常|特别|比较|挺|也|都|一直|超级?)*(?:感兴趣|有兴趣)", preference("likes")),
    _r("pref", r"(?:讨厌|厌恶|反感|受不了|接受不了|不太喜欢|不怎么喜欢|不大喜欢|不是很喜欢|不是特别喜欢|一点也不喜欢|一点都不喜欢|很不喜欢|不喜欢|不太爱|不爱)(?P<obj>.+)", preference("dislikes", negated_by_le=True)),
    _r("pref", r"(?P<neg>不再|已经不再?|再也不|早就不)?(?:喜欢上了|爱上了|迷上了|喜欢|热爱|喜爱|钟爱|酷爱|爱(?![好人情心护惜国意戴过]))(?P<obj>.+)", preference("likes")),
    _r("allergy", rf"(?P<neg>不再|已经不再?)?对(?P<obj>.+?)(?P<neg2>不再|不)?{_FILL}过敏", h_allergy),
    _r("allergy", rf"(?P<obj>[^我你他她对的,\s]{{1,8}}?){_FILL}过敏", h_allergy),
    _r("allergy", r"(?:的)?过敏(?:源|原)(?:是|有)(?P<obj>.+)", h_allergy),
    _r("diet", rf"{_NEG}(?:是)?(?:只)?(?:吃素|吃斋|吃全素|吃纯素)", h_diet),
    _r("diet", r"(?P<neg>已经不|不再|现在不|不)?是(?:一名|一个|一位|个)?(?:严格的)?(?P<obj>素食者|素食主义者|纯素食?者|纯素食?主义者|vegan|Vegan)", h_diet),
    _r("diet", r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)(?:吃|喝)(?P<obj>.+)", h_no_eat),
    _r("diet", r"(?P<neg>戒(?![指备严心律烟酒])(?:掉)?了?)(?P<obj>.+)", h_no_eat),
    _r("diet", r"(?P<only>只)?(?:吃|喝)(?P<obj>.+)", h_eats),
    _r("hobby", r"(?:的)?(?:爱好|兴趣爱好|业余爱好|兴趣|嗜好)(?:是|有|就是|包括|:)(?P<obj>.+)", h_hobby),
    # plans, decisions, goals
    _r("plan", r"(?:已经)?(?:决定|想好|考虑好|想清楚|下定决心|下决心|拿定主意)(?:了|啦)$", h_decision_pending),
    _r("plan", r"(?P<neg>还没有?|没有?)?(?:已经)?(?:决定|下定决心|下决心)(?:了)?(?:要)?(?P<obj>.+)", plan_handler("decided")),
    _r("plan", r"(?P<obj>[^的,]{2,14}?)的(?:计划|打算|安排|行程)(?:被|也|都|又|就)?(?:取消|泡汤|作罢|搁置|黄)", h_plan_cancelled),
    _r("plan", r"取消了(?P<obj>[^的]{2,14})的(?:计划|行程|安排|打算)", h_plan_cancelled),
    _r("plan", r"(?:计划|行程|安排|打算)?(?:被|也|都|又|就|还是)?(?:取消|泡汤|作罢|黄|没去成|放弃)了?$", h_plan_called_off),
    _r("plan", r"(?:不|不再)(?:打算|准备)?(?P<verb>去|回)(?P<obj>[^了]{2,10})了$", h_plan_dropped),
    _r("plan", r"(?:的)?(?:计划|打算|安排)是(?P<obj>.+)", plan_handler("plans")),
    _r("plan", r"(?P<neg>还没有?|没有?|不再|不)?(?:打算|计划|准备|预计|规划)(?:着|好了|了|要)?(?P<obj>.+)", plan_handler("plans")),
    _r("plan", r"(?:要|将要|将|会|得)(?!去|回|到|飞|参加|出席|搬)(?P<obj>.+)", h_future_plan),
    _r("plan", r"(?:的)?(?:梦想|目标|愿望|心愿|理想)(?:是|就是|:)(?P<obj>.+)", plan_handler("goal")),
    _r("plan", rf"(?:一直|很|特别|真的|非常|好|也|还)?(?:想要|想|希望|渴望|梦想着?|盼望着?)(?:{TIME})?(?:能够|能|可以)?(?P<obj>(?:去|学|成为|当|买|考|换|搬|拥有|养|开|写|环游|出国|参加|结婚).+)", plan_handler("goal")),
    # events
    _r("event", r"(?P<verb>参加|出席|参与)(?P<asp>了|过)?(?P<obj>.+)", h_attend),
    _r("event", r"(?:(?:和|跟|与)(?P<with>[^和跟与]{1,8}))?(?P<ev>出差|出国|回国|度假|戒烟|戒酒|退学|结婚|订婚|离婚|分手|毕业|搬家|升职|退休|辞职|离职|失业|跳槽|创业|怀孕|住院|出院|买房|考试|面试|买了房子?|买了车|生了(?:一个)?(?:孩子|宝宝|儿子|女儿))(?P<span>(?:已经)?(?:[0-9一二两三四五六七八九十几多]+|好几|很多)(?:年|个月|周|天)多?)?(?P<asp>了|啦)?$", h_life_event),
    _r("event", r"从(?P<obj>[^从]{1,12}?)回来(?P<asp>了)?$", h_back_from),
    _r("event", r"(?:(?P<mode>飞|开车|坐车|坐飞机|坐高铁|坐火车|打车|骑车|出发)|(?<![过搬感看听想收遇做得找达来回走跑飞迟等说提学受拿买见碰用]))(?P<verb>去|回|到|逛)(?![年世掉除问说])(?P<asp>了|过)?(?:一趟|一次|趟|次)?(?P<obj>.+)", h_go),
)  # fmt: skip
