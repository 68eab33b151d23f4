"""Offline rule-based fact extraction for Chinese chat messages.

:func:`extract_zh` reads one message and returns the facts it states as
subject–predicate–object triples (predicates from :data:`~.predicates.PREDICATES`,
objects in the message's own Chinese wording), the people, places, organisations and pets
it names, and the dates it mentions resolved against the message's timestamp.

How it works, per message:

1. The text is NFKC-normalised (full-width Latin and digits become ASCII) and split into
   sentences (``。！？；`` and newlines) and clauses (commas, and spaces between Han
   characters). Clauses that ask (``吗``, ``什么``, ``是不是``, a final ``？``) or hedge
   (``可能``, ``好像``) are skipped, and so is every clause of a sentence that is
   hypothetical (``如果``, ``假如``, ``要是``…).
2. Each rule is a regular expression over a clause that starts at its trigger word
   (``住在``, ``在…工作``, ``喜欢``, ``对…过敏``…). The text before the trigger is the
   clause's *head*; it must read as a subject once time words and adverbs are stripped:
   ``我`` (the speaker), a person's name (``莉娜``, ``Lena``; checked with jieba's POS tags
   and the dictionary), a relative with or without a name (``我妹妹小雨``), a pet
   (``我的猫``), ``他``/``她`` (the last person named in the message), or nothing (the
   clause continues the previous clause's subject: ``我叫李明，今年28岁``). A head that is
   anything else (``你``, ``我们``, ``我觉得我``…) makes the rule not apply: precision
   matters more than recall, and no fact is better than a wrong one.
3. The object is trimmed of measure words and particles (``一只``, ``了``, ``的``) and
   checked for its kind (a place for ``lives_in``, an organisation for ``works_at``, a job
   title for ``job``…); enumerations (``绘画、弹钢琴和品茶``) become one fact each.
4. Negation follows the conventions of :mod:`.types`: ``不再``/``已经不``/``不…了``
   retract a fact (``negated=True``), while ``我不喜欢香菜`` is a ``dislikes`` fact.
   Events (``去了``, ``参加了``) and plans (``打算``, a future date) carry the date of the
   clause, resolved by :mod:`.dates` against the message time.

jieba (the project's shared tokenizer from :mod:`memstrata.textproc`, plus its POS tables)
is loaded on first use, once per process, thread-safely; POS tags are computed only on the
short spans a rule needs (a head, an object) and cached.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from .dates import Preference, find_date_spans, find_dates, resolve_date
from .types import SELF, ExtractedEntity, ExtractedFact, Extraction, ResolvedDate

__all__ = ["extract_zh"]

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------ lexicons


def _words(text: str) -> frozenset[str]:
    """A word list written as one space-separated string."""
    return frozenset(text.split())


def _alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first (so ``妹妹`` wins over ``妹``)."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) + ")"


#: Relation words → predicate. Longest match wins in the regexes.
_KIN: dict[str, str] = {
    **dict.fromkeys(["妹妹", "姐姐", "姐", "小妹", "大姐", "二姐", "姊妹"], "sister"),
    **dict.fromkeys(["哥哥", "弟弟", "哥", "弟", "大哥", "二哥", "小弟"], "brother"),
    **dict.fromkeys(["妈妈", "母亲", "老妈", "妈", "娘"], "mother"),
    **dict.fromkeys(["爸爸", "父亲", "老爸", "爸", "爹"], "father"),
    **dict.fromkeys(
        ["老公", "丈夫", "老婆", "妻子", "太太", "爱人", "媳妇", "先生", "配偶"], "spouse"
    ),
    **dict.fromkeys(["男朋友", "女朋友", "男友", "女友", "对象", "伴侣"], "partner"),
    **dict.fromkeys(["儿子", "女儿", "孩子", "闺女", "大儿子", "小儿子", "大女儿", "小女儿"], "child"),
    **dict.fromkeys(
        ["朋友", "好朋友", "好友", "闺蜜", "老朋友", "发小", "死党", "最好的朋友", "哥们儿", "哥们"],
        "friend",
    ),
    **dict.fromkeys(["同事", "老同事"], "colleague"),
    **dict.fromkeys(["老板", "上司", "领导", "主管", "经理"], "boss"),
    **dict.fromkeys(
        [
            "表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹", "叔叔", "阿姨",
            "舅舅", "舅妈", "姑姑", "姑妈", "姨妈", "婶婶", "伯伯", "伯父", "爷爷", "奶奶",
            "外公", "外婆", "姥姥", "姥爷", "侄子", "侄女", "外甥", "外甥女", "孙子", "孙女",
        ],
        "relative",
    ),
}  # fmt: skip
_KIN_RE = _alt(_KIN) + "(?![们圈])"

#: Pet words → the animal kind given as ``object_type``.
_ANIMALS: dict[str, str] = {
    **dict.fromkeys(
        ["猫", "猫咪", "小猫", "橘猫", "布偶猫", "布偶", "英短", "美短", "狸花猫", "暹罗猫",
         "波斯猫", "加菲猫", "蓝猫", "黑猫", "白猫", "奶牛猫"], "猫"),
    **dict.fromkeys(
        ["狗", "狗狗", "小狗", "柯基", "柯基犬", "金毛", "金毛犬", "泰迪", "泰迪犬", "哈士奇",
         "柴犬", "拉布拉多", "边牧", "萨摩耶", "比熊", "博美", "法斗", "小狗狗", "小黑狗",
         "小白狗", "田园犬", "狗子"], "狗"),
    **dict.fromkeys(["兔子", "小兔子", "小兔"], "兔子"),
    **{a: a for a in ["仓鼠", "鹦鹉", "乌龟", "金鱼", "蜥蜴", "龙猫", "荷兰猪", "豚鼠", "刺猬",
                      "雪貂", "八哥", "小鸟", "鸟", "鱼", "蛇", "羊驼", "马"]},
}  # fmt: skip
_ANIMAL_RE = _alt(_ANIMALS)

_COUNTRIES = _words(
    "中国 美国 日本 韩国 英国 法国 德国 意大利 西班牙 葡萄牙 俄罗斯 加拿大 澳大利亚 新西兰 "
    "印度 巴西 墨西哥 阿根廷 新加坡 马来西亚 泰国 越南 菲律宾 印度尼西亚 荷兰 比利时 瑞士 "
    "瑞典 挪威 丹麦 芬兰 波兰 希腊 土耳其 埃及 南非 以色列 伊朗 爱尔兰 奥地利 捷克 乌克兰 "
    "朝鲜 蒙古 巴基斯坦 尼日利亚 肯尼亚 智利 秘鲁 哥伦比亚"
)

#: Job titles accepted as they are, and endings that make a job title (``软件工程师``).
_JOBS = _words(
    "老师 教师 医生 护士 律师 会计 记者 警察 司机 厨师 学生 研究生 博士生 硕士生 本科生 大学生 "
    "作家 画家 专家 科学家 演员 歌手 模特 主播 编辑 翻译 销售 秘书 教授 讲师 助教 程序员 公务员 "
    "工程师 设计师 经理 产品经理 项目经理 总监 主管 顾问 分析师 研究员 店长 店主 老板 农民 军人 "
    "保安 保姆 快递员 外卖员 服务员 收银员 飞行员 空姐 空乘 牙医 兽医 药剂师 建筑师 摄影师 "
    "自由职业者 创业者 志愿者 全职妈妈 家庭主妇 退休教师 博士 博士后 数据科学家 产品 运营 "
    "码农 前端 后端 全栈 实习生 CEO CTO COO CFO HR"
)
_JOB_ENDINGS = (
    "师", "员", "工程师", "经理", "医生", "老师", "教师", "护士", "律师", "记者", "顾问", "主管",
    "总监", "专员", "助理", "教授", "研究员", "科学家", "作家", "画家", "家", "编辑", "翻译",
    "会计", "司机", "警察", "学生", "研究生", "博士生", "主播", "演员", "歌手", "开发", "运营",
    "销售", "店长", "院长", "校长", "主任", "架构师", "实习生",
)  # fmt: skip
_NOT_JOBS = _words(
    "大家 老家 国家 人家 东家 自家 全家 一家 这家 那家 亲家 婆家 娘家 酒家 会员 成员 人员 党员 "
    "团员 队员 学员 动员 全员 官员 委员 大师 祖师 军师 素食者 消费者 读者 患者 爱好者"
)

_FIELDS = _words(
    "计算机 计算机科学 软件 软件工程 法律 法学 医学 临床医学 金融 会计 经济 经济学 历史 数学 物理 "
    "化学 生物 英语 日语 中文 新闻 设计 建筑 心理学 哲学 艺术 音乐 美术 教育 管理 工商管理 "
    "市场营销 电子 机械 土木 统计 统计学 人工智能 数据科学 护理 药学 农学 环境 外语 翻译 "
    "汉语言文学 文学 社会学 政治 传媒 播音 表演 舞蹈 动画 电气 通信 自动化 材料 化工 地理 "
    "天文 考古 人类学 语言学 编程 计算机技术 信息技术 电子工程 金融学 会计学 法语 德语 韩语 "
    "西班牙语 俄语 意大利语 葡萄牙语 阿拉伯语"
)
_FIELD_ENDINGS = ("学", "工程", "科学", "技术", "专业", "语", "文")
_NOT_FIELDS = _words("大学 小学 中学 同学 上学 留学 放学 开学 自学 好学 教学 话语 口语 成语 语文")

_LANGUAGES = _words(
    "英语 汉语 中文 普通话 粤语 广东话 上海话 四川话 闽南语 闽南话 客家话 东北话 日语 韩语 法语 "
    "德语 西班牙语 葡萄牙语 意大利语 俄语 阿拉伯语 泰语 越南语 英文 日文 法文 德文 韩文 "
    "荷兰语 瑞典语 希腊语 土耳其语 印地语 马来语 印尼语 拉丁语 手语"
)

_SCHOOL_ENDINGS = (
    "大学", "学院", "学校", "中学", "小学", "高中", "初中", "幼儿园", "研究生院", "研究院",
    "研究所", "University", "College", "School", "Institute",
)  # fmt: skip
_SCHOOLS = _words(
    "清华 北大 复旦 交大 浙大 人大 南大 中大 港大 哈佛 斯坦福 MIT 牛津 剑桥 耶鲁 北师大"
)

_ORG_ENDINGS = (
    "公司", "集团", "银行", "医院", "大学", "学院", "学校", "研究所", "研究院", "中心", "工作室",
    "事务所", "科技", "工厂", "厂", "局", "部", "报社", "杂志社", "出版社", "电视台", "基金会",
    "协会", "律所", "餐厅", "酒店", "诊所", "实验室",
)  # fmt: skip
_COMPANIES = _words(
    "腾讯 阿里 阿里巴巴 华为 百度 字节 字节跳动 京东 美团 小米 网易 谷歌 微软 苹果 亚马逊 拼多多 "
    "滴滴 快手 蚂蚁 比亚迪 大疆 携程 新浪 搜狐 联想 中兴 海尔 格力 蔚来 理想 小红书 哔哩哔哩 "
    "B站 特斯拉 Google Microsoft Apple Amazon Meta Facebook IBM Intel OpenAI"
)

_PLACE_ENDINGS = (
    "市", "省", "区", "县", "镇", "村", "州", "国", "岛", "城", "路", "街", "小区", "公寓",
    "湾", "山", "乡", "郡", "洲",
)  # fmt: skip
#: Objects too vague to be a fact on their own ("我住在家里", "我在公司工作").
_VAGUE = _words(
    "家 家里 老家里 这里 那里 这儿 那儿 这边 那边 附近 外面 外地 国外 一起 隔壁 楼上 楼下 公司 "
    "单位 学校 东西 事情 事 人 什么 哪里 哪儿 它 它们 他们 她们 别人 大家 自己 一下 一点 很多 "
    "一些 不少 地方 很多地方 很多国家 好多地方 许多地方"
)

_EVENT_NOUNS = (
    "演唱会", "音乐会", "婚礼", "葬礼", "会议", "聚会", "派对", "比赛", "展览", "展会",
    "讲座", "培训", "面试", "考试", "活动", "生日会", "典礼", "马拉松", "研讨会", "年会",
    "发布会", "音乐节", "庆典", "宴会", "晚会", "课程", "工作坊", "峰会", "婚宴", "同学会",
)  # fmt: skip

# The hundred-odd commonest surnames: a two- or three-character word starting with one,
# and not a dictionary word of another kind, reads as a name.
_SURNAMES = frozenset(
    "李王张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤欧阳司马诸葛"
)
#: Characters common in transliterated foreign names (莉娜, 玛丽亚, 克里斯).
_TRANSLIT = frozenset(
    "阿埃艾安奥巴贝本比彼波布查达丹德迪蒂杜多尔法菲芬弗伏盖戈格哈海汉赫亨胡华吉加杰金卡凯"
    "康科克拉莱兰劳勒雷蕾里丽莉利林琳卢鲁路伦罗洛玛马麦曼梅蒙米姆娜纳尼妮诺欧帕佩皮普奇乔切"
    "琼萨塞瑟森莎沙史斯索塔泰汤特提托瓦威韦维温沃西希夏谢休亚雅扬伊英尤约泽詹朱佐薇娅娃妲黛"
)
_NOT_NAMES = _words(
    "我 你 您 他 她 它 我们 你们 他们 她们 咱们 大家 有人 别人 人家 自己 谁 这 那 这个 那个 "
    "今天 明天 昨天 现在 最近 公司 老师 医生 小时 小孩 小心 老家 老人 老板 阿姨 小学 小说 小区 "
    "老婆 老公 小姐 老虎 小朋友 小伙伴 老乡 小组 老大 小伙 小时候 外卖 朋友 同事"
)

# ------------------------------------------------------------------------ shared patterns

_NUM = "[0-9零一二两三四五六七八九十百几]+"
_TIME = (
    r"(?:大?前天|昨天|今天|大?后天|明天|昨晚|今晚|明晚|今早|明早|昨日|今日|刚才|刚刚|"
    r"(?:今天|昨天|明天)?(?:早上|上午|中午|下午|傍晚|晚上|夜里|凌晨)|"
    r"(?:上上|下下|这|上|下|本)个?(?:周末|周|星期|礼拜)[一二三四五六日天1-7]?|周末|"
    r"(?:周|星期|礼拜)[一二三四五六日天1-7]|(?:上上|下下|这|上|下|本)个?月|"
    r"去年|前年|今年|明年|后年|年初|年底|月初|月底|"
    rf"{_NUM}(?:天|周|个星期|个礼拜|个月|年|个小时|小时|分钟)(?:前|后|以前|以后|之前|之后)|"
    r"(?:前|这|过|最近)几天|最近|近来|近期|目前|现在|如今|当前|将来|以后|平时|平常|"
    r"每天|天天|每周|每个?月|每年|周末的时候|"
    r"(?:今年|去年|明年)?(?:春天|夏天|秋天|冬天|寒假|暑假|假期|国庆|春节|过年|五一|十一|年底|年初)(?:的时候|期间)?|"
    r"(?:\d{2,4}年)?\d{1,2}月(?:\d{1,2}[日号])?|\d{1,2}[日号]|\d{4}年|"
    r"[一二三四五六七八九十]{1,3}月(?:[一二三四五六七八九十]{1,3}[日号])?)"
)
_SEASON = re.compile("春天|夏天|秋天|冬天|寒假|暑假|年底|年初|春节|国庆")
_FUTURE_WORDS = _words("要 会 将 将要 就要 快要 马上 即将 准备")
_PAST_WORDS = _words("以前 之前 曾经 原来 过去 小时候 当时 从前 那时候 那时 去年 前年")
#: With 不 these retract a fact: "已经不喜欢" is "no longer likes".
_NEG_WORDS = _words("已经 再也 早就 早已")
#: A habit is not an event: "每周都去健身房" is no visit with a date.
_HABIT_WORDS = _words(
    "每天 天天 每周 每个月 每月 每年 经常 常常 总是 平时 平常 通常 一般 老是 偶尔 有时 有时候"
)
_ADVERBS = (
    "也", "还", "都", "就", "才", "又", "再", "一直", "一向", "向来", "从小", "从小就", "本来",
    "其实", "确实", "真的", "的确", "当然", "已经", "早就", "早已", "刚", "终于", "很", "非常",
    "特别", "超", "超级", "挺", "蛮", "比较", "十分", "相当", "尤其", "最", "经常", "常常",
    "总是", "老是", "一般", "通常", "偶尔", "有时", "有时候", "依然", "仍然", "仍", "还是",
    "正在", "正", "在", "被", "也是", "再也", "自己", "本人", "平时", "一个人", "独自",
    *_FUTURE_WORDS, *_PAST_WORDS,
)  # fmt: skip
_TIME_RE = re.compile(_TIME)
_HEAD_TAIL = re.compile(f"(?:{_TIME}|{_alt(_ADVERBS)}|\\s+)$")
_HEAD_LEAD = re.compile(
    r"^(?:[嗯哦噢啊哈呃诶唉哎呀]+|对了|其实|另外|顺便(?:说|提|告诉你)?(?:一下)?|告诉你|跟你说|"
    r"和你说|说实话|老实说|实话说|说真的|还有|而且|并且|但是|但|不过|可是|所以|因此|然后|后来|"
    r"总之|话说|是的|是啊|没错|好的|好吧|对啊|对|首先|其次|最后|另一方面|"
    r"(?:比起|相比于?|相较于|相对于)[^我你他她]{1,12}?(?:来说|而言)?(?=我)|"
    rf"{_TIME}|\s+|[,.:;!~])"
)

# Questions, hypotheticals and hedges: such clauses state nothing.
_QUESTION = re.compile(
    r"[吗么嘛吧][啊呀呢]?$|什么|哪[里儿个些位家种]|为什么|为啥|怎么|怎样|多少|谁|是否|"
    r"是不是|有没有|能不能|会不会|要不要|可不可以|对不对|好不好|([\u4e00-\u9fff])不\1|"
    r"几(?![天年周个月次乎分])|[?]"
)
_HYPOTHETICAL = re.compile(r"如果|假如|假设|要是|万一|倘若|若是|假使|如若|的话|梦到|梦见|想象|假装")
_HEDGE = re.compile(r"可能|也许|大概|或许|好像|似乎|说不定|估计|应该是")
_YOU = re.compile(r"^(?:[嗯哦啊那]*)(?:你|您|咱们|我们|他们|她们|大家|有人)")

_HAN = r"\u4e00-\u9fff"
_LATIN_NAME = re.compile(r"[A-Z][a-zA-Z'\-]{1,20}(?: [A-Z][a-zA-Z'\-]{1,20})?")
_TRAIL = re.compile(r"(?:[了的啊呀哦呢吧啦哈嘛喔噢耶咯哟嘞呗哇呐~\s.…!]|而已|罢了)+$")
# A count and measure word ("一只", "两个"); without a count only the ones that cannot
# start a name or a noun ("个", "位"): "张强" keeps its surname.
_LEAD_MEASURE = re.compile(
    r"^(?:了|着|过)?(?:(?:[一两二三四五六七八九十几]|好几)"
    r"(?:只|个|名|位|家|条|本|件|种|份|场|次|趟|所|间|辆|部|门|项|支|头|匹|群|对|款|杯|碗|盘|瓶|"
    r"些|点|枚|台|块|张)|个|位|些)(?=.)"
)
_DEMONSTRATIVE = re.compile(
    r"^(?:这|那|哪|啥|它|他|她|你|您|我|咱|其|此|自己|的|了|和|跟|与|不|里面|上面|下面|其中)"
)
_CUT_CONJ = re.compile(
    r"(?:因为|所以|但是|不过|可是|而且|因此|虽然|尤其是|特别是|比如|例如|感觉|觉得|然后|还有就是|"
    r"就是因为|的时候|之类的?|什么的|等等|等)"
)
_LIST_WORDS = frozenset(["、", "和", "与", "以及", "还有", "及", "或者", "或", "跟", "/"])

# ------------------------------------------------------------------------------ jieba


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

        from ..textproc import _segmenter

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
def _tags(text: str) -> tuple[tuple[str, str], ...]:
    """``(word, POS tag)`` pairs of a short span (cached: heads and objects repeat)."""
    return tuple((p.word, p.flag) for p in _POS.tagger().lcut(text))


def _dictionary_tag(word: str) -> str | None:
    """jieba's dictionary tag of ``word`` (``None`` if it is not a dictionary word)."""
    tag: str | None = _POS.tagger().word_tag_tab.get(word)
    return tag


# ------------------------------------------------------------------------ names & objects

_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "nrf"})
_NOT_NAME_TAGS = frozenset(
    {"v", "vn", "d", "p", "c", "u", "uj", "ul", "r", "m", "t", "f", "q", "y", "e"}
)


def _is_name(text: str, *, after_relation: bool = False) -> bool:
    """Whether ``text`` reads as a person's (or pet's) name: a capitalised Latin name, or
    two to four Han characters that jieba tags as a name, that start with ``小``/``老``/
    ``阿`` or a common surname, or that look transliterated — and that are not a
    dictionary word of another kind. ``after_relation`` (``我妹妹小雨``) also accepts
    any two- or three-character word jieba does not know."""
    if not text:
        return False
    if _LATIN_NAME.fullmatch(text):
        return True
    if not re.fullmatch(f"[{_HAN}]{{2,4}}", text) or text in _NOT_NAMES:
        return False
    tag = _dictionary_tag(text)
    if tag is not None and tag not in _NAME_TAGS:
        return False
    tags = _tags(text)
    if len(tags) == 1 and tags[0][1] in _NAME_TAGS:
        return True
    if any(t in _NOT_NAME_TAGS for _w, t in tags):
        return False  # "小李搬": a verb is not part of a name
    if text[0] in "小老阿" and len(text) <= 3:
        return True
    if len(text) <= 3 and text[0] in _SURNAMES and tag is None:
        return True
    if all(ch in _TRANSLIT for ch in text):
        return True
    return after_relation and tag is None and len(text) <= 3


def _trim(text: str) -> str:
    """``text`` without edge particles and leading measure words: ``一只猫了`` → ``猫``."""
    text = text.strip()
    for _ in range(3):
        before = text
        text = _TRAIL.sub("", text)
        text = _LEAD_MEASURE.sub("", text)
        text = text.strip(" ,:;\"'“”《》「」()（）")
        if text == before:
            break
    return text


def _cut(text: str) -> str:
    """``text`` up to the first linking word that starts a new thought (``因为``…)."""
    m = _CUT_CONJ.search(text)
    return text[: m.start()] if m else text


#: Last characters of place nouns that jieba sometimes tags as verbs (超市, 健身房).
_PLACE_CHARS = frozenset("店馆院场园厅站所室房吧厂城村镇市区山湖海岛街路寺庙楼校")
_NOUN_TAGS = frozenset(
    {"n", "nr", "nrt", "nrfg", "nrf", "ns", "nt", "nz", "nl", "ng", "eng", "j", "s", "an", "x", "l"}
)


def _noun_phrase(text: str, *, max_len: int = 12) -> str:
    """The noun phrase ``text`` starts with (jieba POS tags): ``上海已经五年了`` → ``上海``,
    ``一个婚礼`` → ``婚礼``, ``朋友的婚礼`` → ``朋友的婚礼``, ``附近的公园`` → itself.
    Empty if it starts with no noun."""
    text = _trim(text)
    pairs = _tags(text) if text else ()
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
        if not re.search(f"[{_HAN}A-Za-z0-9]", word):
            break
        followed_by_de = j + 1 < len(pairs) and pairs[j + 1][0] == "的"
        if (
            tag in _NOUN_TAGS
            or (len(word) >= 2 and word[-1] in _PLACE_CHARS)  # jieba tags 超市 as a verb
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


def _clean_object(text: str, *, max_len: int = 14) -> str:
    """A free-text object (a liked activity, a plan): cut at linking words, trimmed,
    refused (``""``) when it points elsewhere (``这个``, ``你``) or is too long."""
    text = _trim(_cut(text))
    if not text or len(text) > max_len or _DEMONSTRATIVE.match(text):
        return ""
    if text in _VAGUE or "你" in text or "您" in text:
        return ""
    if not re.search(f"[{_HAN}A-Za-z]", text):
        return ""
    return text


def _split_list(text: str) -> list[str]:
    """``绘画、弹钢琴和品茶`` → ``[绘画, 弹钢琴, 品茶]``: split at list words that jieba
    reads as words of their own (``和`` in ``和平`` is not one), unless the phrase is
    prepositional (``在海滩、山脉和湖泊附近拍摄``)."""
    if not any(w in text for w in _LIST_WORDS) or re.match("[在和跟与给对把被从]", text):
        return [text]
    parts: list[str] = []
    current = ""
    for word, _tag in _tags(text):
        if word in _LIST_WORDS:
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


def _is_place(text: str) -> bool:
    """A named place: jieba tags it as one (or as a foreign name, ``波尔图``), it ends
    like one (``市``, ``区``…), or it is a capitalised Latin word."""
    if not text or text in _VAGUE:
        return False
    if text in _COUNTRIES or _LATIN_NAME.fullmatch(text):
        return True
    tags = _tags(text)
    if any(tag in ("ns", "nrt") for _w, tag in tags):
        return True
    if len(tags) == 1 and tags[0][1] in ("nr", "x", "nz") and len(text) >= 2:
        return True
    return len(text) >= 2 and text.endswith(_PLACE_ENDINGS) and text not in ("中国人",)


def _is_org(text: str) -> bool:
    """An organisation: a known company, an organisation ending (``公司``, ``银行``…),
    jieba's organisation / proper-noun tags, or a Latin name."""
    if not text or text in _VAGUE:
        return False
    if (
        text in _COMPANIES
        or text in _SCHOOLS
        or re.fullmatch(r"[A-Za-z][A-Za-z0-9&.\- ]{0,30}", text)
    ):
        return True
    if text.endswith(_ORG_ENDINGS) and len(text) > 2:
        return True
    return any(tag in ("nt", "nz", "nrt", "eng") for _w, tag in _tags(text))


def _is_only_place(text: str) -> bool:
    """A city, province or country and nothing more (``北京``): not an employer."""
    if text in _COUNTRIES:
        return True
    tags = _tags(text)
    if len(tags) == 1 and tags[0][1] == "ns":
        return True
    return text.endswith(("市", "省", "区", "县", "国")) and not text.endswith(_ORG_ENDINGS)


def _is_school(text: str) -> bool:
    """A named school or university (``北京大学``, ``清华``), not ``大学`` alone."""
    if not text or text in _VAGUE:
        return False
    if text in _SCHOOLS:
        return True
    if text.endswith(_SCHOOL_ENDINGS):  # but not a bare "大学"
        return text not in ("大学", "中学", "小学", "高中", "初中", "学校", "学院", "幼儿园")
    return any(tag == "nt" for _w, tag in _tags(text))


def _is_job(text: str) -> bool:
    """A job title: a known one (``护士``) or one ending like one (``软件工程师``)."""
    if not text or text in _NOT_JOBS or len(text) > 10:
        return False
    if text in _JOBS:
        return True
    if text.endswith(_JOB_ENDINGS) and len(text) >= 2:
        return not text.endswith(tuple(_NOT_JOBS))
    return False


def _is_field(text: str) -> bool:
    """A field of study or a language (``计算机``, ``心理学``, ``日语``)."""
    if not text or text in _NOT_FIELDS or len(text) > 10 or "的" in text:
        return False
    return (
        text in _FIELDS or text in _LANGUAGES or (len(text) >= 3 and text.endswith(_FIELD_ENDINGS))
    )


def _is_language(text: str) -> bool:
    """A language or dialect (``英语``, ``粤语``, ``上海话``)."""
    return text in _LANGUAGES or (
        re.fullmatch(f"[{_HAN}]{{1,4}}语", text) is not None and text not in _NOT_FIELDS
    )


_CN_DIGIT = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"两": 2}


def _number(text: str) -> int | None:
    """``28`` / ``二十八`` / ``十八`` / ``一百零二`` → the integer (``None`` if unreadable)."""
    if text.isdigit():
        return int(text)
    total, current = 0, 0
    for ch in text:
        if ch in _CN_DIGIT:
            current = _CN_DIGIT[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


# ------------------------------------------------------------------------------ subjects


@dataclass(frozen=True, slots=True)
class _Head:
    """What a clause's head says about its subject (independent of the message).

    ``kind``: ``"self"`` (我), ``"person"`` (a name), ``"relative"`` (我妹妹[小雨]),
    ``"pet"`` (我的猫), ``"pronoun"`` (他/她), ``"none"`` (no subject: continue the
    previous one). ``words``: adverbs and time words stripped from it (tense, negation).
    """

    kind: str
    name: str = ""  # the person's name; for "self", who the speaker is with (我和小雨)
    owner: str = ""  # "" = the speaker
    relation: str = ""  # a _KIN predicate for relatives
    animal: str = ""
    words: frozenset[str] = frozenset()

    @property
    def future(self) -> bool:
        return not self.words.isdisjoint(_FUTURE_WORDS)

    @property
    def past(self) -> bool:
        return not self.words.isdisjoint(_PAST_WORDS)

    @property
    def habitual(self) -> bool:
        return not self.words.isdisjoint(_HABIT_WORDS)

    @property
    def retracting(self) -> bool:
        return not self.words.isdisjoint(_NEG_WORDS)


_SELF_WORDS = frozenset(["我", "我自己", "我本人", "本人"])
# "我和妈妈…", "我跟朋友一起…": the speaker, with company.
_HEAD_WITH = re.compile(r"我(?:和|跟|与)(?P<who>[^你您和跟]{1,8}?)(?:一起|一块儿?)?")
_HEAD_RELATIVE = re.compile(
    rf"(?P<owner>我|[A-Za-z{_HAN}]{{2,4}}?)(?:的)?(?:这个|那个)?(?P<kin>{_KIN_RE})(?P<name>.{{0,12}})"
)
_HEAD_HAVE = re.compile(
    rf"我(?:家)?(?:有|还有|家里有|养了|养着|养)(?:一|两|三|几)?(?:个|位|只|条)?"
    rf"(?:(?P<kin>{_KIN_RE})|(?P<animal>{_ANIMAL_RE}))"
)
_HEAD_PET = re.compile(rf"我(?:的|家的?|家里的)?(?:那|这)?(?:只|条)?(?P<animal>{_ANIMAL_RE})")


@functools.lru_cache(maxsize=8192)
def _parse_head(head: str) -> _Head | None:
    """The subject a clause's head names, or ``None`` when it names none this extractor
    trusts (``你``, ``我们``, ``公司``, ``我觉得我``…)."""
    text = head.strip()
    words: set[str] = set()
    for _ in range(8):
        m = _HEAD_LEAD.match(text)
        if not m or not m.group(0):
            break
        text = text[m.end() :]
    for _ in range(8):
        m = _HEAD_TAIL.search(text)
        if not m or not m.group(0):
            break
        words.add(m.group(0).strip())
        text = text[: m.start()]
    inner = _TIME_RE.findall(text)  # "我昨天和妈妈": time words inside the head too
    if inner:
        words.update(inner)
        text = _TIME_RE.sub("", text)
    frozen = frozenset(words)
    if not text:
        return _Head("none", words=frozen)
    if text in _SELF_WORDS:
        return _Head("self", words=frozen)
    m = _HEAD_WITH.fullmatch(text)
    if m and not m.group("who").startswith(("他们", "她们", "大家")):
        return _Head("self", name=m.group("who"), words=frozen)  # name: the company
    if text in ("他", "她"):
        return _Head("pronoun", words=frozen)
    m = _HEAD_HAVE.fullmatch(text)
    if m:
        if m.group("kin"):
            return _Head("relative", relation=_KIN[m.group("kin")], words=frozen)
        return _Head("pet", animal=_ANIMALS[m.group("animal")], words=frozen)
    m = _HEAD_PET.fullmatch(text)
    if m:
        return _Head("pet", animal=_ANIMALS[m.group("animal")], words=frozen)
    m = _HEAD_RELATIVE.fullmatch(text)
    if m:
        owner = m.group("owner")
        if owner != "我" and not _is_name(owner):
            return None
        name = m.group("name").strip()
        if name and not _is_name(name, after_relation=True):
            return None
        return _Head(
            "relative",
            name=name,
            owner="" if owner == "我" else owner,
            relation=_KIN[m.group("kin")],
            words=frozen,
        )
    if _is_name(text):
        return _Head("person", name=text, words=frozen)
    return None


@dataclass(frozen=True, slots=True)
class _Subject:
    """A head bound to this message: ``name`` is the fact subject ("" when the head is a
    relative or pet without a name, which only ``叫``/``是`` can complete)."""

    head: _Head
    name: str
    owner: str
    implicit: bool = False

    @property
    def is_self(self) -> bool:
        return self.head.kind == "self"


# ------------------------------------------------------------------------------ context


@dataclass
class _Clause:
    text: str
    sentence: _Sentence
    ends_question: bool


@dataclass
class _Sentence:
    text: str
    start: int


@dataclass
class _Message:
    """Everything one call of :func:`extract_zh` accumulates."""

    speaker: str
    timestamp: datetime | None
    facts: list[ExtractedFact] = field(default_factory=list)
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    topic: _Subject | None = None
    last_person: str = ""
    #: The list fact of the previous clause (subject, predicate, negated): "我喜欢唱歌，
    #: 健身，旅游" continues it in the clauses that follow.
    last_list: tuple[_Subject, str, bool] | None = None
    dates: list[tuple[int, int, str]] = field(default_factory=list)  # spans in the text

    def add(
        self,
        subject: _Subject | str,
        predicate: str,
        obj: str,
        clause: _Clause,
        confidence: float = 0.8,
        *,
        object_type: str | None = None,
        negated: bool = False,
        when: date | None = None,
    ) -> None:
        if isinstance(subject, _Subject):
            if subject.implicit:
                confidence -= 0.1
            subject = subject.name
        if not subject or not obj or subject == obj:
            return
        self.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=predicate,
                object=obj,
                object_type=object_type,
                negated=negated,
                date=when,
                confidence=round(max(0.1, min(confidence, 1.0)), 2),
                evidence=clause.text,
            )
        )

    def entity(self, name: str, kind: str) -> None:
        if name and name != self.speaker and name not in self.entities:
            self.entities[name] = ExtractedEntity(name=name, type=kind)

    def person(self, name: str) -> None:
        self.entity(name, "person")
        self.last_person = name

    def bind(self, head: _Head) -> _Subject | None:
        """The message-level subject of a parsed head (pronouns and empty heads resolved)."""
        if head.kind == "self":
            return _Subject(head, self.speaker, "")
        owner = head.owner or self.speaker
        if head.kind == "person":
            return _Subject(head, head.name, "")
        if head.kind == "relative":
            return _Subject(head, head.name, owner)
        if head.kind == "pet":
            return _Subject(head, "", owner)
        if head.kind == "pronoun":
            if not self.last_person:
                return None
            return _Subject(replace(head, kind="person"), self.last_person, "", implicit=True)
        if self.topic is None:  # no subject and nothing to continue
            return None
        topic = self.topic
        return _Subject(
            replace(topic.head, words=head.words), topic.name, topic.owner, implicit=True
        )

    def date_of(self, clause: _Clause, prefer: Preference) -> date | None:
        """The one date the clause (or else its sentence) names, resolved against the
        message time; ``None`` when there is none, or more than one."""
        if self.timestamp is None:
            return None
        phrases = [p for s, e, p in self.dates if clause.text.find(p) >= 0]
        if not phrases:
            start = clause.sentence.start
            end = start + len(clause.sentence.text)
            phrases = [p for s, e, p in self.dates if start <= s and e <= end]
        if _SEASON.search(clause.text):  # "今年夏天": the year alone is not the day
            phrases = [p for p in phrases if p not in ("今年", "去年", "明年", "前年", "后年")]
        values = {resolve_date(p, self.timestamp, "zh", prefer=prefer) for p in phrases}
        values.discard(None)
        return values.pop() if len(values) == 1 else None


_Handler = Callable[[_Message, _Subject, "re.Match[str]", _Clause], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    """``pattern`` is searched in a clause; the text before the match is the head. When
    ``handler`` returns True, the other rules of ``group`` are skipped for the clause."""

    group: str
    pattern: re.Pattern[str]
    handler: _Handler


# ------------------------------------------------------------------------- tense & dates

_PAST_CUE = re.compile(
    r"了|过(?!来|去|年)|昨|前天|上周|上个?星期|上个?礼拜|上个?月|去年|前年|刚才|刚刚|已经|"
    r"(?:天|周|星期|个月|年)(?:以|之)?前"
)
_FUTURE_CUE = re.compile(
    r"明天|后天|下周|下个?星期|下个?礼拜|下个?月|明年|后年|将来|以后|待会|等会|马上|即将|"
    r"(?:天|周|星期|个月|年)(?:以|之)?后|打算|准备|计划"
)


def _tense(msg: _Message, subj: _Subject, clause: _Clause, aspect: str) -> tuple[str, date | None]:
    """``("past" | "future" | "", date)`` of an event clause, from its words (``了``/``过``
    after the verb, a final ``了``, ``明天``, a modal ``要``) and its date against the
    message time. A date that contradicts the aspect is dropped, not trusted: ``周末我去
    爬山了`` said on a Monday is last weekend, whatever "周末" alone resolves to."""
    text = clause.text
    if subj.head.habitual:
        return "", None  # "每周都会去打球": a habit, not one event
    future = subj.head.future or _FUTURE_CUE.search(text) is not None
    past = (
        aspect in ("了", "过")
        or subj.head.retracting
        or (not future and (text.endswith(("了", "了啊", "了呀", "啦")) or _PAST_CUE.search(text)))
    )
    hint: Preference = "past" if past and not future else "future" if future and not past else None
    when = msg.date_of(clause, hint)
    if when is not None and msg.timestamp is not None:
        today = msg.timestamp.date()
        if when > today:
            return ("past", None) if hint == "past" else ("future", when)
        if when < today:
            return ("future", None) if hint == "future" else ("past", when)
    if past:
        return "past", when
    if future:
        return "future", when
    return "", when


def _strip_time(text: str) -> str:
    return re.sub(_TIME, "", text)


# ------------------------------------------------------------------------------ handlers


def _kind_of(pred: str) -> str | None:
    return {"lives_in": "place", "from": "place", "visited": "place", "nationality": "place",
            "works_at": "organization", "studies_at": "organization",
            "works_on": "project"}.get(pred)  # fmt: skip


def _identity(msg: _Message, subj: _Subject, pred: str, obj: str, clause: _Clause, *,
              negated: bool = False, confidence: float = 0.85, when: date | None = None) -> bool:  # fmt: skip
    """Add an identity fact about a named subject; not one said of the past (``以前``,
    ``去年``) unless it is dated (a move last year still tells where one lives)."""
    if not subj.name or not obj or (subj.head.past and not negated and when is None):
        return False
    kind = _kind_of(pred)
    msg.add(
        subj, pred, obj, clause, confidence=confidence, object_type=kind, negated=negated, when=when
    )
    if kind and not negated:
        msg.entity(obj, kind)
    if not subj.is_self:
        msg.person(subj.name)
    return True


def _negation(m: re.Match[str], subj: _Subject, clause: _Clause) -> bool:
    neg = m.groupdict().get("neg") or ""
    return bool(neg) or (subj.head.retracting and "不" in clause.text)


def _relation_fact(msg: _Message, owner: str, relation: str, name: str, clause: _Clause) -> None:
    msg.add(owner, relation, name, clause, confidence=0.85, object_type="person")
    msg.person(name)


def _h_name(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我叫李明`` / ``我的名字是…`` / ``我妹妹叫小雨`` / ``我的猫叫豆豆``."""
    obj = _trim(m.group("obj"))
    head = subj.head
    if head.kind == "pet":
        if not (_is_name(obj, after_relation=True) or re.fullmatch(f"[{_HAN}]{{2,3}}", obj)):
            return False
        if obj in _ANIMALS or obj in _NOT_NAMES or _dictionary_tag(obj) in ("v", "a", "d"):
            return False
        msg.add(subj.owner, "has_pet", obj, clause, confidence=0.85, object_type=head.animal)
        msg.entity(obj, "pet")
        msg.topic = _Subject(_Head("person", name=obj), obj, "")
        return True
    if not (_is_name(obj, after_relation=head.kind == "relative") or _is_given_name(obj, head)):
        return False
    if head.kind == "relative" and not head.name:
        _relation_fact(msg, subj.owner, head.relation, obj, clause)
        msg.topic = _Subject(_Head("person", name=obj), obj, "")
        return True
    if subj.is_self:
        msg.add(subj, "name", obj, clause, confidence=0.9)
        return True
    return False


def _is_given_name(text: str, head: _Head) -> bool:
    """After ``我女儿叫`` any short name-like word is the name (``朵朵``, ``豆豆``)."""
    if head.kind != "relative" or head.name or text in _NOT_NAMES or text in _KIN:
        return False
    if re.fullmatch(r"([\u4e00-\u9fff])\1", text):  # 乐乐, 朵朵: nicknames
        return _dictionary_tag(text) not in ("d", "t", "ad", "m", "r")
    return re.fullmatch(f"[{_HAN}]{{2,3}}|[A-Za-z]{{2,20}}", text) is not None and (
        _dictionary_tag(text) not in ("v", "a", "d", "r", "p", "c", "u", "vn", "ad", "t", "m")
    )


def _h_is_name(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我是李明`` (a self-introduction) / ``我妹妹是小雨``."""
    obj = _trim(m.group("obj"))
    head = subj.head
    if head.kind == "relative" and not head.name and _is_name(obj):
        _relation_fact(msg, subj.owner, head.relation, obj, clause)
        msg.topic = _Subject(_Head("person", name=obj), obj, "")
        return True
    if (
        subj.is_self
        and not subj.implicit
        and _is_name(obj)
        and not _is_job(obj)
        and (obj[0] in _SURNAMES or _LATIN_NAME.fullmatch(obj) is not None)
        and not obj.isupper()  # "我是CEO", "我是AI"
    ):
        msg.add(subj, "name", obj, clause, confidence=0.75)
        return True
    return False


def _h_relation_of(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``王芳是我的同事`` → (speaker, colleague, 王芳)."""
    if subj.head.kind != "person" or not subj.name:
        return False
    _relation_fact(msg, msg.speaker, _KIN[m.group("kin")], subj.name, clause)
    return True


def _h_has_relative(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我有一个女儿``: no fact yet, but the next clause (``叫朵朵``) is about her."""
    if not subj.is_self:
        return False
    msg.topic = _Subject(_Head("relative", relation=_KIN[m.group("kin")]), "", subj.name)
    return True


def _h_mutual(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我和小雨是好朋友`` → (speaker, friend, 小雨)."""
    who = subj.head.name
    if not subj.is_self or not _is_name(who):
        return False
    _relation_fact(msg, subj.name, _KIN[m.group("kin")], who, clause)
    return True


def _h_age(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    value = _number(m.group("num"))
    if value is None or not 0 < value < 120:
        return False
    return _identity(msg, subj, "age", str(value), clause, confidence=0.9)


def _h_birthday(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    found = re.search(
        r"(?:\d{4}年)?(?:\d{1,2}|[一二三四五六七八九十]{1,2})月(?:\d{1,2}|[一二三四五六七八九十]{1,3})[日号]",
        m.group("obj"),
    )
    if found is None:
        return False
    return _identity(msg, subj, "birthday", found.group(0), clause)


def _place_object(text: str) -> str:
    """A place object: its noun phrase, cut before a ``的`` that is not part of the place
    (``上海的朋友``)."""
    phrase = _noun_phrase(text)
    if "的" in phrase:
        before, _, after = phrase.partition("的")
        if not after.endswith(_PLACE_ENDINGS):
            phrase = before
    return phrase


def _h_lives(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``住在上海`` / ``住北京`` / ``在上海住了五年``: a named place (not ``酒店``)."""
    obj = _place_object(m.group("obj"))
    if not _is_place(obj) or subj.head.future:
        return False
    return _identity(msg, subj, "lives_in", obj, clause, negated=_negation(m, subj, clause))


def _h_move(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``搬到了波尔图``: the new home (past) or a plan (future)."""
    obj = _place_object(m.group("obj"))
    if not obj or not _is_place(obj) or not subj.name:
        return False
    tense, when = _tense(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", m.group("verb") + obj, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    return _identity(msg, subj, "lives_in", obj, clause, when=when)


def _h_move_out(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _place_object(m.group("obj"))
    return (
        bool(obj) and _is_place(obj) and _identity(msg, subj, "lives_in", obj, clause, negated=True)
    )


def _h_from(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _place_object(m.group("obj"))
    if not obj or not _is_place(obj):
        return False
    if obj in _COUNTRIES and m.group(0).endswith("人"):
        return _identity(msg, subj, "nationality", obj, clause)
    return _identity(msg, subj, "from", obj, clause)


def _job_object(text: str) -> str:
    """A job as said, without a trailing duration or ``工作``/``行业``; a described job
    keeps only the title (``来自成都的护士`` → ``护士``)."""
    text = _trim(re.sub(r"(?:工作|行业|方面的工作|相关的工作)了?$", "", _cut(text)))
    text = _trim(
        re.sub(r"(?:[0-9一二两三四五六七八九十几多]+年了?|很多年了?|好多年了?)$", "", text)
    )
    owner, _, title = text.rpartition("的")
    if owner and _is_job(title) and not re.match("[我你您他她它咱]", owner):
        return title  # but "我的老板" is a relation, not a job
    return text


def _h_job(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _job_object(m.group("obj"))
    if not _is_job(obj):
        return False
    negated = _negation(m, subj, clause)
    if negated and not clause.text.endswith("了"):
        return False
    return _identity(msg, subj, "job", obj, clause, negated=negated)


def _h_job_free(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我的工作是…`` / ``我是做设计的`` / ``我从事金融行业``: the wording as said."""
    obj = _clean_object(_job_object(m.group("obj")), max_len=12)
    if not obj or _tags(obj)[-1][1] in ("a", "ad", "d", "z", "i"):
        return False  # "我的工作是一份很好的工作" → "很好": a judgement, not a job
    return _identity(msg, subj, "job", obj, clause, confidence=0.85 if _is_job(obj) else 0.75)


def _h_job_at(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我是腾讯的工程师`` / ``我在医院当护士``: employer and job."""
    org = _noun_phrase(m.group("org"))
    job = _job_object(m.group("obj"))
    if not _is_job(job) or not org:
        return False
    if job.endswith("生") and _is_school(org):
        return _identity(msg, subj, "studies_at", org, clause)
    if _is_org(org) and not _is_only_place(org):
        _identity(msg, subj, "works_at", org, clause)
    return _identity(msg, subj, "job", job, clause)


def _h_works_at(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    raw = _trim(m.group("obj"))
    if re.search(r"项目组?$", raw):
        name = _project_name(raw)
        return bool(name) and _identity(msg, subj, "works_on", name, clause)
    obj = _noun_phrase(raw)
    if not obj or obj in _VAGUE or _is_only_place(obj) or obj != raw:
        return False
    if subj.head.future:
        return False
    return _identity(msg, subj, "works_at", obj, clause, negated=_negation(m, subj, clause))


def _h_joined(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``跳槽到了字节`` / ``加入了腾讯``: a new employer."""
    obj = _noun_phrase(m.group("obj"))
    if not _is_org(obj) or _is_only_place(obj) or _is_school(obj):
        return False
    tense, when = _tense(msg, subj, clause, "了" if "了" in m.group(0) else "")
    if tense == "future":
        msg.add(subj, "plans", m.group(0).replace("了", ""), clause, confidence=0.65, when=when)
        return True
    return _identity(msg, subj, "works_at", obj, clause)


def _h_quit(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我从阿里辞职了`` → works_at 阿里, negated."""
    obj = _noun_phrase(m.group("obj"))
    if not obj or obj in _VAGUE or _is_only_place(obj) or subj.head.future:
        return False
    return _identity(msg, subj, "works_at", obj, clause, negated=True)


def _project_name(text: str) -> str:
    text = _trim(text)
    text = re.sub(r"(?:这个|那个)?(?:项目组?|组|团队)$", "", text)
    text = _trim(re.sub(r"^(?:一个|新的?)?(?:叫做?|名叫|名为)?", "", text))
    if not text or _DEMONSTRATIVE.match(text) or text in _VAGUE or len(text) > 16:
        return ""
    return text


def _h_works_on(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    name = _project_name(m.group("obj"))
    if not name or subj.head.past:
        return False
    return _identity(msg, subj, "works_on", name, clause, negated=_negation(m, subj, clause))


def _h_reassigned(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``从Orca项目调到了Kestrel项目`` → works_on Kestrel (a department is no project)."""
    target = _trim(m.group("obj"))
    if "项目" not in m.group(0) and not re.fullmatch(r"[A-Za-z][A-Za-z0-9\- ]{0,30}", target):
        return False
    return _h_works_on(msg, subj, m, clause)


def _h_responsible(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``负责Orca项目`` → works_on Orca; ``负责招聘`` → role 招聘."""
    raw = _trim(_cut(m.group("obj")))
    if "项目" in raw or re.fullmatch(r"[A-Za-z][A-Za-z0-9\- ]{0,30}", raw):
        return _h_works_on(msg, subj, m, clause)
    return _h_role(msg, subj, m, clause)


def _h_role(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _clean_object(m.group("obj"), max_len=16)
    if not obj or not subj.name or subj.head.past or subj.head.future:
        return False
    msg.add(subj, "role", obj, clause, confidence=0.7, negated=_negation(m, subj, clause))
    if not subj.is_self:
        msg.person(subj.name)
    return True


def _h_studies_at(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _noun_phrase(m.group("obj"))
    if not _is_school(obj) or subj.head.future:
        return False
    _identity(msg, subj, "studies_at", obj, clause, negated=_negation(m, subj, clause))
    rest = m.groupdict().get("rest") or ""
    field_ = _trim(re.sub(r"专业$", "", _trim(rest)))
    if field_ and _is_field(field_):
        _identity(msg, subj, "studies", field_, clause)
    return True


def _h_studies(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    obj = _trim(re.sub(r"专业(?:的)?(?:学生|研究生)?$", "", _trim(m.group("obj"))))
    if not _is_field(obj) or subj.head.future:
        return False
    return _identity(msg, subj, "studies", obj, clause, confidence=0.8)


def _h_speaks(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    languages = [_trim(p) for p in _split_list(_trim(m.group("obj")))]
    if not languages or not all(_is_language(lang) for lang in languages) or not subj.name:
        return False
    for lang in languages:
        msg.add(subj, "speaks", lang, clause, confidence=0.8)
    return True


_PET_OBJECT = re.compile(
    rf"(?:[一两二三四五六七八九十几]|好几)?(?:只|条|头|匹|个)?"
    rf"(?:(?:叫|名叫|叫做)(?P<name>[^的]{{1,8}})的)?(?:可爱的|小)?(?P<animal>{_ANIMAL_RE})"
    rf"(?:(?:叫|名叫|叫做|名字叫|,叫)(?P<name2>.{{1,8}}))?"
)


def _h_pet(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我养了一只叫豆豆的猫`` → (speaker, has_pet, 豆豆, object_type=猫)."""
    if not subj.name or subj.head.past:
        return False
    text = _trim(m.group("obj"))
    if m.group("verb").endswith("有") and not re.match(
        r"[一两二三四五六七八九十几]?[只条]", m.group("obj")
    ):
        return False  # "我有猫毛过敏": 有 names a pet only with a measure word
    pm = _PET_OBJECT.fullmatch(text)
    if not pm:
        return False
    said = pm.group("animal")
    animal = _ANIMALS[said]
    name = _trim(pm.group("name") or pm.group("name2") or "")
    if name and (name in _ANIMALS or not re.fullmatch(f"[{_HAN}A-Za-z]{{1,8}}", name)):
        return False
    # Unnamed, the pet is the animal as said (金毛), or its kind for 小猫 / 猫咪 / 狗狗.
    unnamed = said if len(said) > 1 and not re.match("小|.*[咪狗]$", said) else animal
    negated = _negation(m, subj, clause)
    msg.add(subj, "has_pet", name or unnamed, clause, 0.85, object_type=animal, negated=negated)
    if name:
        msg.entity(name, "pet")
    if not subj.is_self:
        msg.person(subj.name)
    # "…，叫豆豆" in the next clause names this pet
    msg.topic = _Subject(_Head("pet", animal=animal), "", subj.name)
    return True


def _preference_objects(text: str) -> list[str]:
    text = _trim(_cut(text))
    text = re.sub(r"^(?:吃|喝|去)(?=[\u4e00-\u9fffA-Za-z]{2})", "", text)
    out: list[str] = []
    for part in _split_list(text):
        part = re.sub(r"^(?:吃|喝)(?=.)", "", _trim(part))
        obj = _clean_object(part)
        if not obj:
            return []  # one item points elsewhere ("里面的演员和剧情"): the list does too
        out.append(obj)
    return out


def _preference(pred: str, *, negated_by_le: bool = False) -> _Handler:
    def handler(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
        if not subj.name or subj.head.past or subj.head.future:
            return False
        objects = _preference_objects(m.group("obj"))
        if not objects:
            return False
        predicate, negated = pred, _negation(m, subj, clause)
        if pred == "dislikes" and (
            (negated_by_le and clause.text.endswith("了")) or subj.head.retracting
        ):
            predicate, negated = "likes", True  # "我不喜欢香菜了": no longer likes
        for obj in objects:
            msg.add(subj, predicate, obj, clause, confidence=0.8, negated=negated)
        msg.last_list = (subj, predicate, negated)
        if not subj.is_self:
            msg.person(subj.name)
        return True

    return handler


def _h_allergy(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    text = re.sub(r"^(?:有|会|对)", "", _trim(m.group("obj")))
    if any(k in text for k in _KIN) or "对" in text or not subj.name:
        return False
    negated = _negation(m, subj, clause) or bool(m.groupdict().get("neg2"))
    added = False
    for part in _split_list(text):
        obj = _noun_phrase(part)
        if obj and obj not in _VAGUE and not _DEMONSTRATIVE.match(obj):
            msg.add(subj, "allergic_to", obj, clause, confidence=0.85, negated=negated)
            added = True
    return added


def _h_diet(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    kind = "纯素" if "纯素" in m.group(0) or "vegan" in m.group(0).lower() else "素食"
    if not subj.name or subj.head.future:
        return False
    return _identity(msg, subj, "diet", kind, clause, negated=_negation(m, subj, clause))


def _h_no_eat(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我不再吃肉了`` / ``我不吃辣`` → eats …, negated."""
    obj = _noun_phrase(m.group("obj"), max_len=8)
    if not obj or obj in ("素", "斋") or not subj.name or subj.head.future:
        return False
    msg.add(subj, "eats", obj, clause, confidence=0.75, negated=True)
    return True


def _h_hobby(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    objects = _preference_objects(m.group("obj"))
    if not objects or not subj.name:
        return False
    for obj in objects:
        msg.add(subj, "hobby", obj, clause, confidence=0.85)
    msg.last_list = (subj, "hobby", False)
    return True


def _plan_object(text: str) -> str:
    """A plan, decision or goal as said, without its date and leading modal words:
    ``下个月去日本`` → ``去日本``. Empty when it is tentative (``学一下``), a fragment
    (``学习的重点…``) or ends on a description (``去一个风景优美``)."""
    text = _strip_time(text)
    text = re.sub(r"^(?:了|要|会|先|再|还|也|就|能|可以)+", "", text.strip())
    obj = _clean_object(text, max_len=16)
    if len(obj) < 2 or re.match(r"(?:好|一下|看看|问|知道|了解|.{1,3}的)", obj) or "一下" in obj:
        return ""
    if re.fullmatch(r"[去来回](?:看看|一次|一趟|一下|玩玩?|走走|逛逛|试试|了)", obj):
        return ""  # "去看看": no destination
    if _tags(obj)[-1][1] in ("a", "ad", "d", "uj", "i", "z"):
        return ""
    return obj


def _plan(pred: str) -> _Handler:
    def handler(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
        if not subj.name or (m.groupdict().get("neg") or "").startswith(("没", "还没")):
            return False
        obj = _plan_object(m.group("obj"))
        if not obj:
            return False
        negated = bool(m.groupdict().get("neg"))
        when = msg.date_of(clause, "future" if pred != "decided" else None)
        predicate = pred
        if pred == "goal" and when is not None and msg.timestamp and when > msg.timestamp.date():
            predicate = "plans"
        msg.add(subj, predicate, obj, clause, confidence=0.75, negated=negated, when=when)
        return True

    return handler


def _h_go(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我昨天去了医院`` → visited 医院 (dated); ``我明天去上海`` → plans 去上海."""
    if not subj.name:
        return False
    raw = _trim(m.group("obj"))
    if re.match(r"(?:很多|好多|许多|不少|一些|几个|各种|各地)", raw):
        return False
    phrase = _noun_phrase(raw)
    place, activity = _place_and_activity(phrase or raw)
    if not phrase and raw != activity:
        return False  # "去试试", "去查找一些礼物": not a place or a known activity
    if place and (place in _VAGUE or _DEMONSTRATIVE.match(place)):
        return False
    tense, when = _tense(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        plan = _plan_object(m.group("verb") + raw)
        if plan:
            msg.add(subj, "plans", plan, clause, confidence=0.7, when=when)
        return bool(plan)
    if tense != "past":
        return False
    if not place:  # "我去爬山了": an activity, not a place
        msg.add(subj, "did", activity, clause, confidence=0.7, when=when)
        return True
    pred = "attended" if place.endswith(_EVENT_NOUNS) else "visited"
    msg.add(subj, pred, place, clause, confidence=0.8, when=when)
    if pred == "visited" and _is_place(place):
        msg.entity(place, "place")
    return True


_ACTIVITIES = (
    "散步", "跑步", "游泳", "爬山", "登山", "徒步", "旅游", "旅行", "出差", "度假", "看病",
    "参观", "逛街", "购物", "吃饭", "玩儿", "玩", "降温", "看书", "看电影", "学习", "上课",
    "开会", "办事", "野餐", "露营", "钓鱼", "拍照", "骑车", "健身", "打球", "打篮球",
    "打羽毛球", "踢球", "踢足球", "滑雪", "潜水", "看展", "约会", "聚餐", "买东西",
    "喝咖啡", "吃火锅", "唱歌", "划船", "体检", "探险", "冲浪", "看海", "面试", "考试",
)  # fmt: skip
_ACTIVITIES_LONGEST_FIRST = sorted(_ACTIVITIES, key=len, reverse=True)


def _place_and_activity(text: str) -> tuple[str, str]:
    """``公园散步`` → (``公园``, ``散步``); ``爬山`` → (``""``, ``爬山``); ``医院`` →
    (``医院``, ``""``): where someone went, and what for."""
    for activity in _ACTIVITIES_LONGEST_FIRST:
        if text.endswith(activity):
            return text[: -len(activity)].rstrip("里中边"), activity
    return text, ""


def _h_back_from(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我刚从日本回来`` → visited 日本."""
    obj = _noun_phrase(m.group("obj"))
    if not subj.name or not _is_place(obj) or subj.head.future or subj.head.habitual:
        return False
    when = msg.date_of(clause, "past")
    msg.add(subj, "visited", obj, clause, confidence=0.75, when=when)
    msg.entity(obj, "place")
    return True


def _h_attend(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    if not subj.name:
        return False
    raw = _trim(m.group("obj"))
    event = re.search(f"^.{{0,12}}?{_alt(_EVENT_NOUNS)}", raw)  # "一个社群组织的聚会"
    obj = _trim(event.group(0)) if event else _noun_phrase(raw)
    if not obj or obj in _VAGUE or _DEMONSTRATIVE.match(obj):
        return False
    tense, when = _tense(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", m.group("verb") + obj, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    msg.add(subj, "attended", obj, clause, confidence=0.8, when=when)
    return True


_STATUS = {"结婚": "已婚", "离婚": "离异", "订婚": "订婚", "分手": "单身"}


def _h_life_event(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    """``我去年结婚了`` / ``我辞职了`` / ``我下个月毕业``."""
    if not subj.name:
        return False
    event = m.group("ev").replace("了", "")
    tense, when = _tense(msg, subj, clause, m.group("asp") or "")
    if tense == "future":
        msg.add(subj, "plans", event, clause, confidence=0.7, when=when)
        return True
    if tense != "past":
        return False
    partner = m.groupdict().get("with") or ""
    if partner and event == "结婚" and _is_name(partner):
        _relation_fact(msg, subj.name, "spouse", partner, clause)
    if event in _STATUS and when is None:
        msg.add(subj, "relationship_status", _STATUS[event], clause, confidence=0.8)
    else:
        msg.add(subj, "did", event, clause, confidence=0.75, when=when)
    return True


def _h_status(value: str) -> _Handler:
    def handler(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
        return _identity(msg, subj, "relationship_status", value, clause, confidence=0.8)

    return handler


def _h_gender(msg: _Message, subj: _Subject, m: re.Match[str], clause: _Clause) -> bool:
    if not subj.is_self or subj.implicit:
        return False
    return _identity(msg, subj, "gender", "男" if "男" in m.group("obj") else "女", clause)


# ------------------------------------------------------------------------------ the rules

_NEG = r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)?"
_RETRACT = r"(?P<neg>不再|已经不再?|再也不|早就不)?"
_FILL = r"(?:有点|有些|有一点|很|非常|特别|严重|轻微|也|都|一直)*"


def _r(group: str, pattern: str, handler: _Handler) -> _Rule:
    return _Rule(group, re.compile(pattern), handler)


_RULES: tuple[_Rule, ...] = (
    # names and relations
    _r("name", r"(?:的)?(?:名字|全名|姓名|真名|中文名字?|英文名字?)(?:是|叫|叫做|:)(?P<obj>.+)", _h_name),
    _r("name", r"(?:叫做|名叫|叫)(?P<obj>.+)", _h_name),
    _r("name", rf"是(?:我|我的)(?:的)?(?P<kin>{_KIN_RE})$", _h_relation_of),
    _r("name", rf"(?:有|还有)(?:一|两|三)?(?:个|位)(?P<kin>{_KIN_RE})$", _h_has_relative),
    _r("name", r"(?:是|都是)(?:好|老|最好的)?(?P<kin>朋友|同事|闺蜜|好友|发小)$", _h_mutual),
    _r("name", r"是(?P<obj>[^一个名位的]{2,12})$", _h_is_name),
    # identity
    _r("age", r"(?:今年|现在|目前)?(?:已经)?(?:满)?(?P<num>\d{1,3}|[一二两三四五六七八九十百]{1,4})(?:周)?岁(?:了|啦|半)?$", _h_age),
    _r("birthday", r"(?:的)?生日(?:是|在|:)(?P<obj>.+)", _h_birthday),
    _r("birthday", r"是?(?P<obj>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号])(?:出生|生)的?$", _h_birthday),
    _r("lives", r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)?(?:家)?(?:住|居住|生活|定居)(?:在|于)(?P<obj>.+)", _h_lives),
    _r("lives", r"(?:家)?住(?![在院宿手口嘴过])(?P<obj>.+)", _h_lives),
    _r("lives", r"家(?:住)?在(?P<obj>.+)", _h_lives),
    _r("lives", r"在(?P<obj>[^在]{2,10}?)(?:住|居住|生活|定居)(?:了|着)?", _h_lives),
    _r("lives", r"(?:从(?P<old>.{1,10}?))?(?P<verb>搬到|搬去|搬来|搬回|迁到|迁居到?|移居到?|移民到?|定居到)(?P<asp>了)?(?P<obj>.+)", _h_move),
    _r("lives", r"(?:搬离|搬出)了?(?P<obj>.+)", _h_move_out),
    _r("from", r"来自(?:于)?(?P<obj>.+)", _h_from),
    _r("from", r"是(?P<obj>[^是]{2,8}?)人$", _h_from),
    _r("from", r"(?:出生|生|长大)(?:在|于)(?P<obj>.+)", _h_from),
    _r("from", r"在(?P<obj>[^在]{2,10}?)(?:出生|长大)", _h_from),
    _r("from", r"(?:的)?(?:老家|家乡|故乡|籍贯|出生地)(?:是|在|:)(?P<obj>.+)", _h_from),
    _r("gender", r"是(?:个|一个|一名)?(?P<obj>男生|女生|男孩子?|女孩子?|男的|女的|男人|女人|男性|女性)$", _h_gender),
    _r("status", r"(?:是|还是|目前|现在)?单身(?:狗|状态)?$", _h_status("单身")),
    _r("status", r"已婚$", _h_status("已婚")),
    _r("job", r"(?:的)?(?:工作|职业|职位|岗位|本职工作)(?:是|:)(?P<obj>.+)", _h_job_free),
    _r("job", r"是(?P<org>[^的是]{1,12})的(?P<obj>[^的]+)$", _h_job_at),
    _r("job", r"在(?P<org>[^在]{2,12}?)(?:当|做|担任)(?P<obj>.+)", _h_job_at),
    _r("job", r"(?P<neg>已经不|不再)?是(?:一名|一个|一位|一枚|个|名|位)?(?P<obj>[^是]+)$", _h_job),
    _r("job", r"是做(?P<obj>.{1,8})的$", _h_job_free),
    _r("job", r"(?:当|担任|做)(?:了)?(?:一名|一个|一位|个|名)?(?P<obj>.+)", _h_job),
    _r("job", r"从事(?P<obj>.+)", _h_job_free),
    # work
    _r("work", r"(?P<neg>不再|已经不再?|早就不|现在不|不)?在(?P<obj>[^在]{1,20}?)(?:工作|上班|任职|实习|打工|就职|供职)", _h_works_at),
    _r("work", r"(?:就职于|任职于|供职于|受雇于|服务于)(?P<obj>.+)", _h_works_at),
    _r("work", r"(?:加入了|入职了|跳槽到了?|跳槽去了|跳槽进了|进了)(?P<obj>.+?)(?:工作|上班)?$", _h_joined),
    _r("work", r"从(?P<obj>.{1,16}?)(?:辞职|离职|退休)了?", _h_quit),
    _r("work", r"(?:辞去了|辞掉了|离开了|退出了)(?P<obj>.+?)的工作", _h_quit),
    _r("project", r"从(?P<old>.{1,16}?)(?:调到|转到|调去|转去|换到|调入|转入|调往)了?(?P<obj>.+)", _h_reassigned),
    _r("project", r"(?:被)?(?:调到|转到|调去|转去|换到|调入|转入|调往)了?(?P<obj>.+?项目组?)", _h_works_on),
    _r("project", rf"{_RETRACT}负责(?!管理)(?P<obj>.+)", _h_responsible),
    _r("project", r"(?:在做|在搞|参与了?|在跟)(?P<obj>.+?项目)", _h_works_on),
    _r("role", rf"{_RETRACT}(?:负责管理|管理|主管|掌管|维护|运营|带领|领导|打理)(?:着)?(?P<obj>.+)", _h_role),
    # study
    _r("school", r"(?:在|于)(?P<obj>[^在]{2,16}?)(?:读书|上学|念书|读大学|上大学|读研究生|读研|读博士?|读本科|读硕士|读高中|读初中|读小学|上高中|上初中|上小学|上幼儿园|进修|读大[一二三四]|上大[一二三四]|读|学习|上课)(?P<rest>.*)$", _h_studies_at),
    _r("school", r"(?:就读于|在读于|求学于)(?P<obj>.+)", _h_studies_at),
    _r("school", r"是(?P<obj>.{2,16}?)的(?:学生|研究生|本科生|博士生|硕士生|大[一二三四]学生|高中生|初中生|小学生|留学生)$", _h_studies_at),
    _r("field", r"(?:学的是|主修|的专业是|专业是|读的是|学的专业是)(?P<obj>.+)", _h_studies),
    _r("field", r"是(?P<obj>.{1,10}?)专业的?(?:学生|研究生)?$", _h_studies),
    _r("field", r"(?:在读|读)(?P<obj>.{1,10}?)专业$", _h_studies),
    _r("field", r"(?:在学习|学习|在学|学)(?![会生校期到着过完得院历位费年术分员者姐长妹弟习])(?P<obj>.+)$", _h_studies),
    _r("speaks", r"(?:会说|会讲|能说|能讲|说|讲|会)(?:一点点|一点|一些|一口|点|流利的|很流利的|流利)?(?P<obj>.+)$", _h_speaks),
    _r("speaks", r"(?:的)?母语是(?P<obj>.+)$", _h_speaks),
    # pets
    _r("pet", rf"{_RETRACT}(?P<verb>养了|养着|养|有|家有|家里有)(?P<obj>.+)", _h_pet),
    # preferences
    _r("pref", r"(?:还是)?(?:更|更加)(?:喜欢|爱|倾向于|偏向于?|偏爱)(?P<obj>.+)", _preference("prefers")),
    _r("pref", r"(?:喜欢|爱)(?P<obj>.+?)(?:多于|胜过|多过|超过|甚于|而不是|而非)", _preference("prefers")),
    _r("pref", r"偏爱(?P<obj>.+)", _preference("prefers")),
    _r("pref", r"(?:的)?最(?:讨厌|不喜欢)的[^是]{0,6}是(?P<obj>.+)", _preference("dislikes")),
    _r("pref", r"(?:的)?最?(?:喜欢|爱)的[^是]{0,6}是(?P<obj>.+)", _preference("likes")),
    _r("pref", r"对(?P<obj>[^对不]+?)(?:很|非常|特别|比较|挺|也|都|一直|超级?)*(?:感兴趣|有兴趣)", _preference("likes")),
    _r("pref", r"(?:讨厌|厌恶|反感|受不了|接受不了|不太喜欢|不怎么喜欢|不大喜欢|不是很喜欢|不是特别喜欢|一点也不喜欢|一点都不喜欢|很不喜欢|不喜欢|不太爱|不爱)(?P<obj>.+)", _preference("dislikes", negated_by_le=True)),
    _r("pref", r"(?P<neg>不再|已经不再?|再也不|早就不)?(?:喜欢上了|爱上了|迷上了|喜欢|热爱|喜爱|钟爱|酷爱|爱(?![好人情心护惜国意戴过]))(?P<obj>.+)", _preference("likes")),
    _r("allergy", rf"(?P<neg>不再|已经不再?)?对(?P<obj>.+?)(?P<neg2>不再|不)?{_FILL}过敏", _h_allergy),
    _r("allergy", rf"(?P<obj>[^我你他她对的,\s]{{1,8}}?){_FILL}过敏", _h_allergy),
    _r("allergy", r"(?:的)?过敏(?:源|原)(?:是|有)(?P<obj>.+)", _h_allergy),
    _r("diet", rf"{_NEG}(?:是)?(?:吃素|吃斋|吃全素|吃纯素)", _h_diet),
    _r("diet", r"(?P<neg>已经不|不再)?是(?:一名|一个|一位|个)?(?:严格的)?(?:素食者|素食主义者|纯素食?者|纯素食?主义者|vegan|Vegan)", _h_diet),
    _r("diet", r"(?P<neg>不再|已经不再?|再也不|早就不|现在不|不)吃(?P<obj>.+)", _h_no_eat),
    _r("hobby", r"(?:的)?(?:爱好|兴趣爱好|业余爱好|兴趣|嗜好)(?:是|有|就是|包括|:)(?P<obj>.+)", _h_hobby),
    # plans, decisions, goals
    _r("plan", r"(?P<neg>还没有?|没有?)?(?:已经)?(?:决定|下定决心|下决心)(?:了)?(?:要)?(?P<obj>.+)", _plan("decided")),
    _r("plan", r"(?:的)?(?:计划|打算|安排)是(?P<obj>.+)", _plan("plans")),
    _r("plan", r"(?P<neg>还没有?|没有?|不再|不)?(?:打算|计划|准备|预计|规划)(?:着|好了|了|要)?(?P<obj>.+)", _plan("plans")),
    _r("plan", r"(?:的)?(?:梦想|目标|愿望|心愿|理想)(?:是|就是|:)(?P<obj>.+)", _plan("goal")),
    _r("plan", rf"(?:一直|很|特别|真的|非常|好|也|还)?(?:想要|想|希望|渴望|梦想着?|盼望着?)(?:{_TIME})?(?:能够|能|可以)?(?P<obj>(?:去|学|成为|当|买|考|换|搬|拥有|养|开|写|环游|出国|参加|结婚).+)", _plan("goal")),
    # events
    _r("event", r"(?P<verb>参加|出席|参与)(?P<asp>了|过)?(?P<obj>.+)", _h_attend),
    _r("event", r"(?:和(?P<with>[^和]{1,8}))?(?P<ev>结婚|订婚|离婚|分手|毕业|搬家|升职|退休|辞职|离职|失业|跳槽|创业|怀孕|住院|出院|买房|考试|面试|买了房子?|买了车|生了(?:一个)?(?:孩子|宝宝|儿子|女儿))(?P<asp>了|啦)?$", _h_life_event),
    _r("event", r"从(?P<obj>[^从]{1,12}?)回来(?P<asp>了)?$", _h_back_from),
    _r("event", r"(?<![过搬感看听想收遇做得找达来回走跑飞迟等说提学受拿买见碰用])(?P<verb>去|回|到|逛)(?![年世掉除找看买吃见玩问说做])(?P<asp>了|过)?(?:一趟|一次|趟|次)?(?P<obj>.+)", _h_go),
)  # fmt: skip

# ------------------------------------------------------------------------------ splitting

_SENTENCE = re.compile(r"[^。!?;\n]+[。!?;\n]*")
_COMMA = re.compile(r"[,，~…]+")
_HAN_SPACE = re.compile(rf"(?<=[{_HAN}])\s+(?=[{_HAN}])")
#: Clauses longer than this are not chat statements of fact (and regexes stay cheap).
_MAX_CLAUSE = 80


def _sentences(text: str) -> Iterable[_Sentence]:
    for m in _SENTENCE.finditer(text):
        if m.group(0).strip():
            yield _Sentence(m.group(0), m.start())


def _clauses(sentence: _Sentence) -> list[_Clause]:
    body = sentence.text.rstrip("。!?;\n ")
    asks = sentence.text.rstrip().endswith("?")
    parts: list[str] = []
    for piece in _COMMA.split(body):
        chunks = _HAN_SPACE.split(piece)  # "我叫李明 今年28岁": a space as a comma
        if len(chunks) > 1 and sum(map(len, chunks)) / len(chunks) <= 3:
            chunks = [_HAN_SPACE.sub("", piece)]  # "莉娜 住在 里斯本": spaces between words
        parts.extend(c.strip() for c in chunks if c.strip())
    return [_Clause(p, sentence, asks and i == len(parts) - 1) for i, p in enumerate(parts)]


def _states_nothing(clause: _Clause) -> bool:
    text = clause.text
    if clause.ends_question or len(text) > _MAX_CLAUSE:
        return True
    masked = re.sub(_TIME, "T", text)  # "几天前" is a date, not a question
    return bool(_QUESTION.search(masked) or _HEDGE.search(text))


# ------------------------------------------------------------------------------ the entry


def extract_zh(
    text: str, *, speaker: str | None = None, timestamp: datetime | None = None
) -> Extraction:
    """Facts, entities and dates stated in one Chinese chat message.

    Args:
        text: the message (any length; Latin names and words inside are fine).
        speaker: who said it; first person (``我``) resolves to this name, or to
            :data:`~.types.SELF` when ``None`` or blank.
        timestamp: when it was said (aware UTC). Relative dates (``昨天``, ``下个月``)
            resolve against it; ``None`` leaves them unresolved (facts get no date, and
            only dates that name their year are listed).

    Returns:
        An :class:`~.types.Extraction`: ``facts`` (predicates from
        :data:`~.predicates.PREDICATES`, objects in the message's wording, ``date`` set on
        events and plans), ``entities`` (third parties, places, organisations, pets,
        projects) and ``dates`` (each date phrase and its ISO date). Questions,
        hypotheticals, hedged statements and statements about the assistant give none.

    Never raises: any failure (including non-string input) yields an empty
    :class:`~.types.Extraction`, logged at DEBUG.
    """
    try:
        return _extract(text, speaker, timestamp)
    except Exception:  # a rule bug must never cost the caller its message
        log.debug("Chinese rule extraction failed", exc_info=True)
        return Extraction()


def _extract(text: str, speaker: str | None, timestamp: datetime | None) -> Extraction:
    if not isinstance(text, str) or not text.strip():
        return Extraction()
    text = unicodedata.normalize("NFKC", text).replace("\r", "\n")
    name = speaker.strip() if isinstance(speaker, str) and speaker.strip() else SELF
    msg = _Message(speaker=name, timestamp=timestamp)
    msg.topic = _Subject(_Head("self"), name, "")
    msg.dates = [(s, e, text[s:e]) for s, e in find_date_spans(text, "zh")]
    for sentence in _sentences(text):
        if _HYPOTHETICAL.search(sentence.text):
            msg.topic = None
            continue
        for clause in _clauses(sentence):
            _clause_facts(msg, clause)
    facts = _tidy(msg.facts)
    dates: list[ResolvedDate] = find_dates(text, timestamp, "zh") if msg.dates else []
    entities = [
        e for e in msg.entities.values() if any(e.name in (f.subject, f.object) for f in facts)
    ]
    return Extraction(facts=facts, entities=entities, dates=dates)


def _clause_facts(msg: _Message, clause: _Clause) -> None:
    if _YOU.match(clause.text):
        msg.topic = None  # a clause about the assistant or a group: nothing carries over
        return
    if _states_nothing(clause):
        return
    _relatives_named(msg, clause)
    continued, msg.last_list = msg.last_list, None
    fired: set[str] = set()
    topic: _Subject | None = None
    first: _Subject | None = None  # the first subject the clause names explicitly
    someone_else = False  # a rule matched after a head that names no trusted subject
    for rule in _RULES:
        if rule.group in fired:
            continue
        for m in rule.pattern.finditer(clause.text):
            head = _parse_head(clause.text[: m.start()])
            subj = msg.bind(head) if head is not None else None
            if subj is None:
                someone_else = someone_else or head is None
                continue
            if first is None and subj.head.kind != "none" and not subj.implicit:
                first = subj
            before = msg.topic
            if rule.handler(msg, subj, m, clause):
                fired.add(rule.group)
                topic = msg.topic if msg.topic is not before else (topic or subj)
                break
    if topic is not None:
        msg.topic = topic if topic.name or topic.head.kind in ("relative", "pet") else msg.topic
    elif first is not None:
        msg.topic = first  # "我妈妈是医生，今年五十岁": the mother, not the speaker
    elif someone_else:
        msg.topic = None  # "我知道他喜欢旅游，喜欢美食": the next clauses are not the speaker's
    elif continued is not None and _is_list_item(clause.text):
        subj, predicate, negated = continued
        msg.add(subj, predicate, clause.text, clause, confidence=0.7, negated=negated)
        msg.last_list = continued


_NOT_LIST_START = re.compile(
    r"^(?:很|也|都|真|太|非常|特别|超|挺|好|不|没|还|就|又|才|最|是|有|在|谢谢|哈哈|嗯|对|"
    r"我|你|他|她|它|这|那|比如|例如|等等|之类)"
)


def _is_list_item(text: str) -> bool:
    """A clause that is only one more item of a list (``健身``, ``旅游``)."""
    if len(text) > 6 or not re.fullmatch(f"[{_HAN}A-Za-z]+", text) or _NOT_LIST_START.match(text):
        return False
    pairs = _tags(text)
    return len(pairs) <= 3 and all(tag in _NOUN_TAGS or tag in ("v", "vn") for _w, tag in pairs)


_RELATIVE_NAMED = re.compile(
    rf"(?<![你自])我(?:的)?(?P<kin>{_KIN_RE})\s*(?P<rest>[A-Za-z{_HAN}]{{1,8}})"
)


def _relatives_named(msg: _Message, clause: _Clause) -> None:
    """``我妹妹小雨…`` / ``和我男朋友小张…`` anywhere in a clause: the relation itself."""
    for m in _RELATIVE_NAMED.finditer(clause.text):
        rest = m.group("rest")
        if rest.startswith(("叫", "是", "名叫")):
            continue  # the name rules read these
        name = _leading_name(rest)
        if name:
            _relation_fact(msg, msg.speaker, _KIN[m.group("kin")], name, clause)


def _leading_name(text: str) -> str:
    """The name ``text`` starts with (``小雨住在杭州`` → ``小雨``), or ``""``."""
    latin = re.match(r"[A-Z][a-zA-Z'\-]{1,20}", text)
    if latin:
        return latin.group(0)
    pairs = _tags(text)
    if not pairs:
        return ""
    first, tag = pairs[0]
    if tag in _NAME_TAGS and _is_name(first, after_relation=True):
        return first
    if first in ("小", "老", "阿") and len(pairs) > 1 and len(pairs[1][0]) == 1:
        candidate = first + pairs[1][0]
        return candidate if _is_name(candidate, after_relation=True) else ""
    if len(pairs) > 1 and tag == "x" and pairs[1][1] == "x" and len(first) == len(pairs[1][0]) == 1:
        candidate = first + pairs[1][0]
        return candidate if _is_name(candidate, after_relation=True) else ""
    return ""


def _tidy(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """Drop duplicates, and an unnamed pet (``猫``) once the same pet got its name."""
    named_pets = {
        (f.subject, f.object_type)
        for f in facts
        if f.predicate == "has_pet" and f.object not in _ANIMALS
    }
    out: list[ExtractedFact] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for f in facts:
        if (
            f.predicate == "has_pet"
            and f.object in _ANIMALS
            and (f.subject, f.object_type) in named_pets
        ):
            continue
        key = (f.subject, f.predicate, f.object, f.negated)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out
