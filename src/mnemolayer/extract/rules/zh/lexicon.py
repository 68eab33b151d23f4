"""Word lists and regular-expression pieces of the Chinese rule extractor.

Relation words, animals, places, organisations, schools, jobs, fields of study, names,
time words and the adverbs a clause's head may carry: data (and the few helpers that build
or read it), used by the recognisers in :mod:`.text`, the subject parser in
:mod:`.context` and the handlers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

HAN = r"\u4e00-\u9fff"  # a character class body: the CJK unified ideographs


def word_set(text: str) -> frozenset[str]:
    """A word list written as one space-separated string."""
    return frozenset(text.split())


def alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first (so ``妹妹`` wins over ``妹``)."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) + ")"


#: Relation words → predicate. Longest match wins in the regexes.
KIN: dict[str, str] = {
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
KIN_RE = alt(KIN) + "(?![们圈])"
#: Pet words → the animal kind given as ``object_type``.
ANIMALS: dict[str, str] = {
    **dict.fromkeys(
        ["猫", "猫咪", "小猫", "橘猫", "布偶猫", "布偶", "英短", "美短", "狸花猫", "暹罗猫",
         "波斯猫", "加菲猫", "蓝猫", "黑猫", "白猫", "奶牛猫"], "猫"),
    **dict.fromkeys(
        ["狗", "狗狗", "小狗", "柯基", "柯基犬", "金毛", "金毛犬", "泰迪", "泰迪犬", "哈士奇",
         "柴犬", "拉布拉多", "边牧", "萨摩耶", "比熊", "博美", "法斗", "小狗狗", "小黑狗",
         "小白狗", "田园犬", "狗子"], "狗"),
    **dict.fromkeys(["兔子", "小兔子", "小兔"], "兔子"),
    **{a: a for a in ["仓鼠", "鹦鹉", "乌龟", "金鱼", "蜥蜴", "龙猫", "荷兰猪", "豚鼠", "刺猬",
                      "雪貂", "八哥", "小鸟", "鸟", "鱼", "蛇", "羊驼", "马", "守宫", "蜜袋鼯",
                      "鸡", "鸭", "鹅", "猪", "松鼠", "兔", "龟"]},
}  # fmt: skip
#: The last character of an animal word and the kind it names: 巴西龟, 流浪猫, 热带鱼.
_ANIMAL_ENDINGS = {"猫": "猫", "狗": "狗", "犬": "狗", "龟": "乌龟", "鱼": "鱼", "兔": "兔子",
                   "鼠": "鼠", "鸟": "鸟", "雀": "鸟", "蛇": "蛇", "鹉": "鹦鹉"}  # fmt: skip
#: Words that end like an animal but name none kept as a pet.
_NOT_ANIMALS = word_set(
    "热狗 单身狗 舔狗 走狗 老鼠 鼠标 烤鱼 酸菜鱼 水煮鱼 三文鱼 金枪鱼 鱿鱼 鳕鱼 章鱼 鲨鱼 鳄鱼 "
    "夜猫 熊猫 咸鱼 鲈鱼 鲫鱼 草鱼 鲤鱼 带鱼 黄鱼 鲶鱼 麻雀 孔雀 土拨鼠 袋鼠 野猫 野狗"
)
# A known animal word, or up to three characters (not a count, measure word or particle)
# before an animal ending.
ANIMAL_RE = (
    f"(?:{alt(ANIMALS)}|"
    rf"(?:(?![一两二三四五六七八九十几只条头匹个位些的叫了养有我你他她它这那和跟与])[{HAN}]){{1,3}}"
    f"[{''.join(_ANIMAL_ENDINGS)}])"
)


def animal_kind(said: str) -> str | None:
    """The kind of animal ``said`` names (``柯基`` → ``狗``, ``巴西龟`` → ``乌龟``), or
    ``None`` when it names no pet (``热狗``)."""
    if said in ANIMALS:
        return ANIMALS[said]
    if said in _NOT_ANIMALS or len(said) < 2:
        return None
    return _ANIMAL_ENDINGS.get(said[-1])


COUNTRIES = word_set(
    "中国 美国 日本 韩国 英国 法国 德国 意大利 西班牙 葡萄牙 俄罗斯 加拿大 澳大利亚 新西兰 "
    "印度 巴西 墨西哥 阿根廷 新加坡 马来西亚 泰国 越南 菲律宾 印度尼西亚 荷兰 比利时 瑞士 "
    "瑞典 挪威 丹麦 芬兰 波兰 希腊 土耳其 埃及 南非 以色列 伊朗 爱尔兰 奥地利 捷克 乌克兰 "
    "朝鲜 蒙古 巴基斯坦 尼日利亚 肯尼亚 智利 秘鲁 哥伦比亚"
)
#: Job titles accepted as they are, and endings that make a job title (``软件工程师``).
JOBS = word_set(
    "老师 教师 医生 护士 律师 会计 记者 警察 司机 厨师 学生 研究生 博士生 硕士生 本科生 大学生 "
    "作家 画家 专家 科学家 演员 歌手 模特 主播 编辑 翻译 销售 秘书 教授 讲师 助教 程序员 公务员 "
    "工程师 设计师 经理 产品经理 项目经理 总监 主管 顾问 分析师 研究员 店长 店主 老板 农民 军人 "
    "保安 保姆 快递员 外卖员 服务员 收银员 飞行员 空姐 空乘 牙医 兽医 药剂师 建筑师 摄影师 "
    "自由职业者 创业者 志愿者 全职妈妈 家庭主妇 退休教师 博士 博士后 数据科学家 产品 运营 "
    "码农 前端 后端 全栈 实习生 CEO CTO COO CFO HR"
)
JOB_ENDINGS = (
    "师", "员", "工程师", "经理", "医生", "老师", "教师", "护士", "律师", "记者", "顾问", "主管",
    "总监", "专员", "助理", "教授", "研究员", "科学家", "作家", "画家", "家", "编辑", "翻译",
    "会计", "司机", "警察", "学生", "研究生", "博士生", "主播", "演员", "歌手", "开发", "运营",
    "销售", "店长", "院长", "校长", "主任", "架构师", "实习生",
)  # fmt: skip
NOT_JOBS = word_set(
    "大家 老家 国家 人家 东家 自家 全家 一家 这家 那家 亲家 婆家 娘家 酒家 会员 成员 人员 党员 "
    "团员 队员 学员 动员 全员 官员 委员 大师 祖师 军师 素食者 消费者 读者 患者 爱好者"
)
FIELDS = word_set(
    "计算机 计算机科学 软件 软件工程 法律 法学 医学 临床医学 金融 会计 经济 经济学 历史 数学 物理 "
    "化学 生物 英语 日语 中文 新闻 设计 建筑 心理学 哲学 艺术 音乐 美术 教育 管理 工商管理 "
    "市场营销 电子 机械 土木 统计 统计学 人工智能 数据科学 护理 药学 农学 环境 外语 翻译 "
    "汉语言文学 文学 社会学 政治 传媒 播音 表演 舞蹈 动画 电气 通信 自动化 材料 化工 地理 "
    "天文 考古 人类学 语言学 编程 计算机技术 信息技术 电子工程 金融学 会计学 法语 德语 韩语 "
    "西班牙语 俄语 意大利语 葡萄牙语 阿拉伯语"
)
FIELD_ENDINGS = ("学", "工程", "科学", "技术", "专业", "语", "文")
NOT_FIELDS = word_set("大学 小学 中学 同学 上学 留学 放学 开学 自学 好学 教学 话语 口语 成语 语文")
LANGUAGES = word_set(
    "英语 汉语 中文 普通话 粤语 广东话 上海话 四川话 闽南语 闽南话 客家话 东北话 日语 韩语 法语 "
    "德语 西班牙语 葡萄牙语 意大利语 俄语 阿拉伯语 泰语 越南语 英文 日文 法文 德文 韩文 "
    "荷兰语 瑞典语 希腊语 土耳其语 印地语 马来语 印尼语 拉丁语 手语"
)
SCHOOL_ENDINGS = (
    "大学", "学院", "学校", "中学", "小学", "高中", "初中", "幼儿园", "研究生院", "研究院",
    "研究所", "University", "College", "School", "Institute",
)  # fmt: skip
#: How school names are shortened: 上海交大, 北师大, 华中科大, 西南政法.
SCHOOL_SHORT = (
    "交大",
    "师大",
    "科大",
    "工大",
    "农大",
    "医大",
    "财大",
    "外大",
    "理工",
    "政法",
    "师范",
    "北大",
)
SCHOOLS = word_set(
    "清华 北大 复旦 交大 浙大 人大 南大 中大 港大 哈佛 斯坦福 MIT 牛津 剑桥 耶鲁 北师大"
)
ORG_ENDINGS = (
    "公司", "集团", "银行", "医院", "大学", "学院", "学校", "研究所", "研究院", "中心", "工作室",
    "事务所", "科技", "工厂", "厂", "局", "部", "报社", "杂志社", "出版社", "电视台", "基金会",
    "协会", "律所", "餐厅", "酒店", "诊所", "实验室",
)  # fmt: skip
COMPANIES = word_set(
    "腾讯 阿里 阿里巴巴 华为 百度 字节 字节跳动 京东 美团 小米 网易 谷歌 微软 苹果 亚马逊 拼多多 "
    "滴滴 快手 蚂蚁 比亚迪 大疆 携程 新浪 搜狐 联想 中兴 海尔 格力 蔚来 理想 小红书 哔哩哔哩 "
    "B站 特斯拉 Google Microsoft Apple Amazon Meta Facebook IBM Intel OpenAI"
)
PLACE_ENDINGS = (
    "市", "省", "区", "县", "镇", "村", "州", "国", "岛", "城", "路", "街", "小区", "公寓",
    "湾", "山", "乡", "郡", "洲",
)  # fmt: skip
#: Objects too vague to be a fact on their own ("我住在家里", "我在公司工作").
VAGUE = word_set(
    "家 家里 老家里 这里 那里 这儿 那儿 这边 那边 附近 外面 外地 国外 一起 隔壁 楼上 楼下 公司 "
    "单位 学校 东西 事情 事 人 什么 哪里 哪儿 它 它们 他们 她们 别人 大家 自己 一下 一点 很多 "
    "一些 不少 地方 很多地方 很多国家 好多地方 许多地方"
)
EVENT_NOUNS = (
    "演唱会", "音乐会", "婚礼", "葬礼", "会议", "聚会", "派对", "比赛", "展览", "展会",
    "讲座", "培训", "面试", "考试", "活动", "生日会", "典礼", "马拉松", "研讨会", "年会",
    "发布会", "音乐节", "庆典", "宴会", "晚会", "课程", "工作坊", "峰会", "婚宴", "同学会",
)  # fmt: skip
# The hundred-odd commonest surnames: a two- or three-character word starting with one,
# and not a dictionary word of another kind, reads as a name.
SURNAMES = frozenset(
    "李王张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤欧阳司马诸葛"
)
#: Characters common in transliterated foreign names (莉娜, 玛丽亚, 克里斯).
TRANSLIT = frozenset(
    "阿埃艾安奥巴贝本比彼波布查达丹德迪蒂杜多尔法菲芬弗伏盖戈格哈海汉赫亨胡华吉加杰金卡凯"
    "康科克拉莱兰劳勒雷蕾里丽莉利林琳卢鲁路伦罗洛玛马麦曼梅蒙米姆娜纳尼妮诺欧帕佩皮普奇乔切"
    "琼萨塞瑟森莎沙史斯索塔泰汤特提托瓦威韦维温沃西希夏谢休亚雅扬伊英尤约泽詹朱佐薇娅娃妲黛"
)
NOT_NAMES = word_set(
    "我 你 您 他 她 它 我们 你们 他们 她们 咱们 大家 有人 别人 人家 自己 谁 这 那 这个 那个 "
    "今天 明天 昨天 现在 最近 公司 老师 医生 小时 小孩 小心 老家 老人 老板 阿姨 小学 小说 小区 "
    "老婆 老公 小姐 老虎 小朋友 小伙伴 老乡 小组 老大 小伙 小时候 外卖 朋友 同事"
)
_NUM = "[0-9零一二两三四五六七八九十百几]+"
TIME = (
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
SEASON = re.compile("春天|夏天|秋天|冬天|寒假|暑假|年底|年初|春节|国庆")
FUTURE_WORDS = word_set("要 会 将 将要 就要 快要 马上 即将 准备")
PAST_WORDS = word_set("以前 之前 曾经 原来 过去 小时候 当时 从前 那时候 那时 去年 前年")
#: Past words that say a state has ended ("我以前住在北京"), unlike a date ("去年").
BEFORE_WORDS = PAST_WORDS - {"去年", "前年"}
#: With 不 these retract a fact: "已经不喜欢" is "no longer likes".
NEG_WORDS = word_set("已经 再也 早就 早已")
#: A habit is not an event: "每周都去健身房" is no visit with a date.
HABIT_WORDS = word_set(
    "每天 天天 每周 每个月 每月 每年 经常 常常 总是 平时 平常 通常 一般 老是 偶尔 有时 有时候"
)
#: Free time: what one likes to do then is a hobby ("我业余时间喜欢钓鱼").
PASTIME_WORDS = word_set(
    "平时 平常 业余 业余时间 闲暇 闲暇时 闲暇时间 空闲 空闲时 空闲时间 有空 有空的时候 没事 "
    "没事的时候 没事儿 休息的时候 周末的时候 下班后 下班以后 下班之后 放假的时候"
)
#: Years of study, said where a time would be: "我大学学的是会计".
_STUDY_PERIODS = word_set(
    "大学 大学时 大学的时候 本科 本科时 研究生 读研时 读研的时候 硕士 博士 高中 高中时"
)
#: Meals, said where a time would be: "我早餐一般吃燕麦".
MEAL_WORDS = word_set("早餐 早饭 午餐 午饭 晚餐 晚饭 夜宵 宵夜 早点 三餐 一日三餐")
_ADVERBS = (
    "也", "还", "都", "就", "才", "又", "再", "一直", "一向", "向来", "从小", "从小就", "本来",
    "其实", "确实", "真的", "的确", "当然", "已经", "早就", "早已", "刚", "终于", "很", "非常",
    "特别", "超", "超级", "挺", "蛮", "比较", "十分", "相当", "尤其", "最", "经常", "常常",
    "总是", "老是", "一般", "通常", "偶尔", "有时", "有时候", "依然", "仍然", "仍", "还是",
    "正在", "正", "在", "被", "也是", "再也", "自己", "本人", "平时", "一个人", "独自",
    "新", "又", "去", "完全", "一点都", "一点也", "根本", "压根", "压根儿", "一定", "最终",
    "最后", "终究", "原本", "本来就", "不过", "只不过", *_STUDY_PERIODS,
    *FUTURE_WORDS, *PAST_WORDS, *PASTIME_WORDS, *MEAL_WORDS,
)  # fmt: skip
TIME_RE = re.compile(TIME)
HEAD_TAIL = re.compile(f"(?:{TIME}|{alt(_ADVERBS)}|\\s+)$")
HEAD_LEAD = re.compile(
    r"^(?:[嗯哦噢啊哈呃诶唉哎呀]+|对了|其实|另外|顺便(?:说|提|告诉你)?(?:一下)?|告诉你|跟你说|"
    r"和你说|说实话|老实说|实话说|说真的|还有|而且|并且|但是|但|不过|可是|所以|因此|然后|后来|"
    r"总之|话说|是的|是啊|没错|好的|好吧|对啊|对|首先|其次|最后|另一方面|"
    r"(?:比起|相比于?|相较于|相对于)[^我你他她]{1,12}?(?:来说|而言)?(?=我)|"
    rf"{TIME}|\s+|[,.:;!~])"
)
# Questions, hypotheticals and hedges: such clauses state nothing.
QUESTION = re.compile(
    r"[吗么嘛吧][啊呀呢]?$|什么|哪[里儿个些位家种]|为什么|为啥|怎么|怎样|多少|谁|是否|"
    r"是不是|有没有|能不能|会不会|要不要|可不可以|对不对|好不好|([\u4e00-\u9fff])不\1|"
    r"几(?![天年周个月次乎分])|[?]"
)
HYPOTHETICAL = re.compile(r"如果|假如|假设|要是|万一|倘若|若是|假使|如若|的话|梦到|梦见|想象|假装")
HEDGE = re.compile(r"可能|也许|大概|或许|好像|似乎|说不定|估计|应该是")
YOU = re.compile(r"^(?:[嗯哦啊那]*)(?:你|您|他们|她们|大家|有人)")
LATIN_NAME = re.compile(r"[A-Z][a-zA-Z'\-]{1,20}(?: [A-Z][a-zA-Z'\-]{1,20})?")
TRAIL = re.compile(r"(?:[了的啊呀哦呢吧啦哈嘛喔噢耶咯哟嘞呗哇呐~\s.…!]|而已|罢了)+$")
# A count and measure word ("一只", "两个"); without a count only the ones that cannot
# start a name or a noun ("个", "位"): "张强" keeps its surname.
LEAD_MEASURE = re.compile(
    r"^(?:了|着|过)?(?:(?:[一两二三四五六七八九十几]|好几)"
    r"(?:只|个|名|位|家|条|本|件|种|份|场|次|趟|所|间|辆|部|门|项|支|头|匹|群|对|款|杯|碗|盘|瓶|"
    r"些|点|枚|台|块|张)|个|位|些)(?=.)"
)
DEMONSTRATIVE = re.compile(
    r"^(?:这|那|哪|啥|它|他|她|你|您|我|咱|其|此|自己|的|了|和|跟|与|不|里面|上面|下面|其中)"
)
CUT_CONJ = re.compile(
    r"(?:因为|所以|但是|不过|可是|而且|因此|虽然|尤其是|特别是|比如|例如|感觉|觉得|然后|还有就是|"
    r"就是因为|的时候|之类的?|什么的|等等|等)"
)
LIST_WORDS = frozenset(["、", "和", "与", "以及", "还有", "及", "或者", "或", "跟", "/"])
#: Titles that make a surname a way to address someone: 王阿姨, 陈老师, 王总.
_TITLES = (
    "老师", "阿姨", "叔叔", "总", "经理", "医生", "大夫", "师傅", "教授", "律师", "主任",
    "老板", "姐", "哥", "奶奶", "爷爷", "大爷", "大妈", "大姐", "大哥", "工", "先生", "女士",
    "小姐", "同学", "老师傅", "博士", "院长", "校长", "局长", "处长", "科长", "书记", "队长",
)  # fmt: skip
TITLE_NAME = re.compile(f"[{''.join(sorted(SURNAMES))}]{alt(_TITLES)}")
#: Doubled syllables that are words, not nicknames (刚刚, 宝宝, 星星).
NOT_NICKNAMES = word_set(
    "刚刚 常常 慢慢 好好 渐渐 偏偏 明明 往往 仅仅 处处 人人 个个 天天 年年 时时 事事 样样 家家 "
    "默默 悄悄 轻轻 早早 统统 哈哈 呵呵 嘿嘿 嘻嘻 嗯嗯 谢谢 星星 猩猩 娃娃 宝宝 狒狒 蛐蛐 蝈蝈 "
    "公公 婆婆 太太 爸爸 妈妈 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 叔叔 婶婶 舅舅 姑姑 伯伯 姥姥 "
    "稍稍 多多 久久 匆匆 纷纷 苦苦 白白 足足 满满 够够 拜拜 看看 试试 想想 走走 聊聊 等等 "
    "说说 问问 听听 玩玩 歇歇 坐坐 尝尝 猫猫 狗狗 兔兔 鱼鱼 虫虫 毛毛 刚好 乖乖 楚楚 冷冷 "
    "热热 暖暖 深深 淡淡 高高 大大 小小 长长 短短 快快 晚晚 一一 件件 条条 只只 张张 本本 "
    "次次 层层 片片 阵阵 句句 声声 步步 根根 颗颗 滴滴 点点 些些 丝丝 块块"
)
NICKNAME = re.compile(r"([\u4e00-\u9fff])\1")
#: Last characters of place nouns that jieba sometimes tags as verbs (超市, 健身房).
PLACE_CHARS = frozenset("店馆院场园厅站所室房吧厂城村镇市区山湖海岛街路寺庙楼校")
#: Words after an animal that are its things, not its name: "我的狗绳子断了".
NOT_PET_NAMES = word_set(
    "绳子 笼子 窝 粮 狗粮 猫粮 玩具 毛 食 盆 碗 项圈 牵引绳 衣服 医院 医生 主人 尾巴 爪子 眼睛 "
    "毛发 身体 疫苗 主粮 零食 罐头 猫砂 厕所 房子 鼻子 耳朵 肚子 牙齿 宝宝 宝贝 小家伙 家伙 东西"
)
ACTIVITIES = (
    "散步", "跑步", "游泳", "爬山", "登山", "徒步", "旅游", "旅行", "出差", "度假", "看病",
    "参观", "逛街", "购物", "吃饭", "玩儿", "玩", "降温", "看书", "看电影", "学习", "上课",
    "开会", "办事", "野餐", "露营", "钓鱼", "拍照", "骑车", "健身", "打球", "打篮球",
    "打羽毛球", "踢球", "踢足球", "滑雪", "潜水", "看展", "约会", "聚餐", "买东西",
    "喝咖啡", "吃火锅", "唱歌", "划船", "体检", "探险", "冲浪", "看海", "面试", "考试",
)  # fmt: skip
