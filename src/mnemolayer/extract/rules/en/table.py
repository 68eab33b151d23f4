"""The rule table of the English rule extractor and how a clause is matched against
it: the ordered verb-phrase rules (:data:`_RULES`), the whole-clause rules
(:data:`_CLAUSE_RULES`: "My name is…", "Sushi is my favourite", "My birthday is…"), and
negation ("no longer", "not … anymore", "don't like", "not allergic").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mnemolayer.extract.rules.en.events import (
    _h_attended,
    _h_did,
    _h_visited,
    _h_went_doing,
    _h_went_to,
)
from mnemolayer.extract.rules.en.identity import (
    _DEMONYM_RE,
    _h_age,
    _h_age_to_be,
    _h_born,
    _h_broke_up,
    _h_from,
    _h_gender,
    _h_got_status,
    _h_has_relatives,
    _h_is_my_pet,
    _h_is_my_relative,
    _h_lives,
    _h_moved,
    _h_moved_out,
    _h_moving,
    _h_name,
    _h_nationality,
    _h_new_child,
    _h_partner,
    _h_pet,
    _h_quit_job,
    _h_speaks,
    _h_status,
)
from mnemolayer.extract.rules.en.lexicon import (
    _ACTION_PAST,
    _DIET_RE,
    _NUMBER_WORDS,
    _PARTICIPLES,
    _PET_RE,
    _REL_MODS,
    _REL_RE,
    _RELATIONS,
    _RELS_RE,
)
from mnemolayer.extract.rules.en.message import (
    _AGE_END,
    _BE,
    _HAVE,
    _NOT_RETRACTABLE,
    _Ctx,
    _Hit,
    _Message,
    _Rule,
    _rule,
    _Subject,
)
from mnemolayer.extract.rules.en.phrases import (
    _base,
    _leading_name,
    _name_ends,
    _names_list,
    _pref_objects,
    _vp,
)
from mnemolayer.extract.rules.en.plans import (
    _c_arrangement,
    _decided_vp,
    _h_appointment,
    _h_cancelled,
    _h_decided,
    _h_decided_plan,
    _h_goal,
    _h_off_to,
    _h_plan,
    _h_plan_going,
    _h_plan_noun,
    _h_progressive_plan,
    _h_thinking_of,
    _h_will,
)
from mnemolayer.extract.rules.en.preferences import (
    _free_time_hits,
    _h_allergic,
    _h_allergy,
    _h_diet,
    _h_dislikes,
    _h_eats,
    _h_fan,
    _h_gave_up,
    _h_likes,
    _h_prefers,
    _h_rather,
    _h_took_up,
)
from mnemolayer.extract.rules.en.subjects import _ADVERBS, _is_name
from mnemolayer.extract.rules.en.text import _NAME_TOKEN, _Clause
from mnemolayer.extract.rules.en.work import (
    _h_attends_school,
    _h_job_as,
    _h_job_became,
    _h_job_is,
    _h_joined,
    _h_new_job,
    _h_reassigned,
    _h_responsible,
    _h_role,
    _h_school_start,
    _h_started_as,
    _h_student_of,
    _h_studies,
    _h_studies_at,
    _h_works_at,
    _h_works_on,
)

_ACTION_VERB_RE = (
    r"(?P<v>[a-z]+ed|" + "|".join(sorted(w for w in _ACTION_PAST if not w.endswith("ed"))) + r")"
)
_PARTICIPLE_RE = r"(?P<v>[a-z]+ed|" + "|".join(sorted(_PARTICIPLES)) + ")"

# The rule table: tried in order on the text after the subject; the first handler that
# returns hits wins. Verb forms cover "I …" and "Lena …".
# fmt: off
_RULES: tuple[_Rule, ...] = (
    # identity
    _rule(rf"^{_BE}\s+(?:now\s+|already\s+|almost\s+)?(?P<n>\d{{1,3}}|{_NUMBER_WORDS})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o|\s+years\s+young)?{_AGE_END}", _h_age),
    _rule(rf"^(?:just\s+)?turned\s+(?P<n>\d{{1,3}}|{_NUMBER_WORDS})(?:\s+(?:years?\s+old))?{_AGE_END}", _h_age),
    _rule(rf"^(?:turns|{_BE}\s+(?:about\s+to\s+turn|turning|going\s+to\s+turn)|will\s+(?:be\s+turning|turn|be))\s+(?P<n>\d{{1,3}}|{_NUMBER_WORDS})(?:\s+(?:years?\s+old))?{_AGE_END}", _h_age_to_be),
    _rule(r"^(?:am|is)\s+(?:called|named)\s+(?P<o>.+)", _h_name),
    _rule(r"^(?:was|were)\s+born\s+(?:on\s+)?\|", _h_born),
    _rule(r"^(?:go|goes)\s+by\s+(?P<o>.+)", _h_name),
    _rule(rf"^(?:am|is)\s+(?:originally\s+)?(?P<o>{_DEMONYM_RE})(?=\s*(?:$|[,;!.|]|(?:and|but|by|too|myself|originally|through)\b))", _h_nationality),
    _rule(r"^am\s+(?P<o>[A-Z].*)", _h_name),
    _rule(rf"^(?:{_BE}\s+(?:originally\s+|actually\s+|also\s+)?from|(?:come|comes)\s+(?:originally\s+)?from|(?:was|were)\s+(?:born\s+and\s+(?:raised|bred)|born|raised)\s+in|grew\s+up\s+in|hails?\s+from)\s+(?P<o>.+)", _h_from),
    _rule(rf"^(?:(?:{_HAVE}\s+been\s+)?(?:live|lives|living|reside|resides|residing)|{_BE}\s+(?:living|residing|based|settled|staying)|based|settled)\s+(?:here\s+|there\s+|now\s+|full[- ]time\s+)?(?:in|on)\s+(?P<o>.+)", _h_lives),
    _rule(rf"^{_HAVE}\s+lived\s+in\s+(?P<o>.+?)\s*(?:for|since|\|)", _h_lives),
    _rule(r"^(?:call|calls)\s+(?P<o>[A-Z].*?)\s+home\b", _h_lives),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+|also\s+)?(?:moved|relocated)\s+(?:out\s+of|away\s+from)\s+(?P<o>.+)", _h_moved_out),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+|also\s+)?(?:moved|relocated)(?:\s+(?:back|over|here|away|out|all\s+the\s+way))?(?:\s+from\s+(?P<f>.+?))?\s+to\s+(?P<o>.+)", _h_moved),
    _rule(rf"^{_BE}\s+(?:moving|relocating)\s+(?:back\s+|over\s+)?to\s+(?P<o>.+)", _h_moving),
    _rule(rf"^(?:work|works|working|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working)\s+as\s+(?:an?\s+|the\s+)?(?P<o>.+)", _h_job_as),
    _rule(rf"^{_BE}\s+(?:an?)\s+(?P<f>[a-z]+(?:\s+[a-z]+)?)\s+(?:student|major)\b(?P<rest>.*)", _h_student_of),
    _rule(rf"^{_BE}\s+(?:now\s+|currently\s+|still\s+)?(?:an?)\s+(?P<o>.+)", _h_job_is),
    _rule(rf"^{_HAVE}\s+been\s+(?:an?)\s+(?P<o>.+?)\s*(?:for|since|\|)", _h_job_is),
    _rule(rf"^(?:became|{_HAVE}\s+become)\s+(?:an?)\s+(?P<o>.+)", _h_job_became),
    _rule(rf"^{_BE}\s+(?:a|an)\s+(?P<n>\d{{1,3}})[- ]year[- ]old\b(?!\s+\w+\s+(?:named|called))", _h_age),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+)?(?:got|landed|accepted|started|found|took|gotten|taken)\s+(?:an?\s+|my\s+|the\s+|her\s+|his\s+)?(?:new\s+|first\s+|dream\s+|full-time\s+|part-time\s+)?(?:job|position|role|gig|internship)\s+(?P<o>.+)", _h_new_job),
    _rule(rf"^(?:{_BE}\s+(?:now\s+)?employed|(?:work|works|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working|{_HAVE}\s+worked))\s+(?:at|for|by)\s+(?P<o>.+)", _h_works_at),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+)?(?:started|began|begun)\s+(?:working\s+)?as\s+(?:an?\s+|the\s+)?(?P<j>[\w' -]+?)\s+(?:at|for|with)\s+(?P<o>.+)", _h_started_as),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|officially\s+)?(?:joined|started\s+(?:working\s+)?at|started\s+working\s+for|got\s+hired\s+(?:at|by)|(?:was|were)\s+hired\s+(?:at|by)|signed\s+with)\s+(?P<o>.+)", _h_joined),
    _rule(rf"^(?:work|works|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working)\s+on\s+(?P<o>.+)", _h_works_on),
    _rule(rf"^(?:was|were|{_HAVE}\s+been|got|{_BE}\s+(?:being\s+)?)\s*(?P<v>re-?assigned|assigned|transferred|moved|switched|shifted|put|reallocated)\s+(?:over\s+)?(?:from\s+(?P<f>.+?)\s+)?to\s+(?:work\s+on\s+)?(?P<o>.+)", _h_reassigned),
    _rule(r"^(?P<v>switched|moved|transferred)\s+(?:over\s+)?(?:from\s+(?P<f>.+?)\s+)?to\s+(?P<o>(?:the\s+)?project\s+.+|(?:the\s+)?[A-Z]\S*\s+(?:project|team).*)", _h_reassigned),
    _rule(rf"^(?P<v>administers?|administered|manages?|leads?|heads?|runs?|oversees?|maintains?|coordinates?|supervises?|chairs?|organi[sz]es?|moderates?|owns?|directs?|captains?|coaches?|{_BE}\s+(?:managing|leading|running|heading|overseeing))\s+(?P<o>.+)", _h_role),
    _rule(rf"^{_BE}\s+(?:now\s+)?(?:in\s+charge\s+of|responsible\s+for)\s+(?P<o>.+)", _h_responsible),
    _rule(rf"^(?:{_BE}\s+(?:a|an)\s+(?:\w+\s+){{0,2}}?(?:student|freshman|sophomore|undergrad|undergraduate|postdoc|grad)|{_BE}\s+(?:currently\s+)?(?:enrolled|studying)|study|studies|{_BE}\s+doing\s+(?:a|an|my|her|his)\s+\S+(?:\s+degree)?|(?:go|goes)\s+to\s+(?:school|college|university|uni|grad\s+school))\s+(?:at|in)\s+(?P<o>.+)", _h_studies_at),
    _rule(r"^(?:attend|attends|(?:am|is|are)\s+attending|(?:go|goes)\s+to)\s+(?P<o>.+)", _h_attends_school),
    _rule(r"^(?:just\s+|recently\s+|finally\s+)?(?:started|began|enrolled\s+(?:in|at))\s+" r"(?:(?:college|university|uni|school|grad\s+school|law\s+school|med\s+school|medical\s+school|" r"kindergarten|high\s+school|(?:a|an|my|her|his)\s+(?:\w+\s+)?(?:degree|program|programme|masters?|phd|course))\s+)?(?:at|in)?\s*(?P<o>[A-Z].*)", _h_school_start),
    _rule(rf"^(?:study|studies|{_BE}\s+(?:currently\s+)?studying|(?:major|majors)\s+in|{_BE}\s+majoring\s+in|{_BE}\s+(?:doing|pursuing|getting|finishing|working\s+on)\s+(?:an?|my|her|his)\s+(?:degree|phd|ph\.d\.?|master'?s|masters|bachelor'?s|bachelors|ba|bs|ma|ms|msc|bsc|diploma|doctorate)(?:\s+degree)?\s+in)\s+(?P<o>.+)", _h_studies),
    _rule(rf"^(?:speak|speaks|can\s+speak|{_BE}\s+fluent\s+in)\s+(?P<o>.+)", _h_speaks),
    _rule(rf"^{_BE}\s+(?:happily\s+|newly\s+|recently\s+|now\s+)?(?P<o>single|married|divorced|engaged|widowed|separated)(?!\s+(?:to|from)\b)(?=\s*(?:$|[,;!.|]|(?:and|but|now|with|at|for|again|currently|right|too|myself|since|lol|haha|happily)\b))", _h_status),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+)?got\s+(?P<o>married|engaged|divorced)(?:\s+to\s+(?P<p>.+))?", _h_got_status),
    _rule(rf"^{_BE}\s+(?:happily\s+)?married\s+to\s+(?P<o>.+)", _h_partner("spouse")),
    _rule(rf"^{_BE}\s+engaged\s+to\s+(?P<o>.+)", _h_partner("partner")),
    _rule(rf"^(?:{_BE}\s+(?:dating|in\s+a\s+relationship\s+with|going\s+out\s+with)|(?:am|is)\s+with)\s+(?P<o>[A-Z].*)", _h_partner("partner")),
    _rule(r"^married\s+(?P<o>[A-Z].*)", _h_partner("spouse")),
    _rule(r"^(?P<v>broke\s+up\s+with|split\s+up\s+with|divorced|(?:got\s+)?divorced\s+from|separated\s+from)\s+(?P<o>[A-Z].*)", _h_broke_up),
    _rule(rf"^{_BE}\s+(?:a\s+)?(?P<o>trans(?:gender)?\s+(?:woman|man|girl|guy)|non-?binary|genderqueer|genderfluid|transgender|agender)\b", _h_gender),
    _rule(rf"^is\s+(?:also\s+)?my\s+{_REL_MODS}(?P<r>{_REL_RE})\b", _h_is_my_relative),
    _rule(rf"^is\s+(?:also\s+)?my\s+(?:[\w-]+\s+){{0,2}}?(?P<p>{_PET_RE})\b", _h_is_my_pet),
    _rule(rf"^{_HAVE}\s+(?:an?|one|two|three|four|\d)\s+{_REL_MODS}(?P<r>{_RELS_RE}|{_REL_RE})\b\s*(?:,|:)?\s*(?:(?:who\s+is\s+|that\s+is\s+)?(?:named|called)\s+)?(?P<o>[A-Z].*)", _h_has_relatives),
    _rule(r"^(?:just\s+|recently\s+)?(?:had|welcomed|adopted)\s+(?:an?|our|their|her|his|my)\s+(?:new\s+|little\s+|baby\s+)?" r"(?:baby|son|daughter|boy|girl)(?:\s+(?:boy|girl))?\s*,?\s+(?:named|called)\s+(?P<o>[A-Z].*)", _h_new_child),
    # negation idioms
    _rule(r"^(?P<v>quit|left|lost|resigned\s+from|walked\s+away\s+from|(?:got|was|were)\s+(?:fired|laid\s+off|let\s+go)\s+from)\s+(?P<o>.+)", _h_quit_job),
    _rule(r"^(?:(?:have|has)\s+)?(?:quit|given\s+up|gave\s+up|cut\s+out)\s+(?P<o>.+)", _h_gave_up),
    _rule(rf"^(?:{_HAVE}\s+got|{_HAVE}|got)\s+(?P<o>.+)", _h_appointment),
    # pets
    _rule(rf"^(?P<v>{_HAVE}\s+(?:got|gotten|adopted|rescued)|{_HAVE}|own|owns|got|adopted|rescued|bought|brought\s+home|took\s+in|welcomed|{_BE}\s+(?:adopting|getting|fostering)|foster|fosters)\s+(?P<o>.+)", _h_pet),
    # preferences
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|really\s+|deathly\s+|mildly\s+|slightly\s+|super\s+|extremely\s+|highly\s+|a\s+bit\s+|a\s+little\s+)?allergic\s+to\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_HAVE}\s+(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|serious\s+|terrible\s+|deadly\s+|life-threatening\s+)?(?:allerg(?:y|ies)|intolerance)\s+to\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|mildly\s+|slightly\s+|a\s+bit\s+)?(?P<o>lactose|gluten|fructose|histamine|caffeine)[- ]intolerant\b", _h_allergy),
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|mildly\s+|slightly\s+|a\s+bit\s+)?intolerant\s+(?:to|of)\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_HAVE}\s+(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|serious\s+|terrible\s+|deadly\s+|life-threatening\s+)?(?P<o>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+allerg(?:y|ies)\b", _h_allergy),
    _rule(rf"^(?:{_BE}|{_HAVE}\s+been)\s+(?:an?\s+)?(?:strict\s+|committed\s+|lifelong\s+|full-time\s+|proud\s+|now\s+|fully\s+|mostly\s+)?(?P<o>{_DIET_RE})(?=\s*(?:$|[,;!.|]|(?:and|but|now|since|for|too|myself|these)\b))", _h_diet),
    _rule(rf"^(?:{_BE}\s+(?:on|following|doing)|follow|follows|eat|eats)\s+(?:an?\s+|the\s+)?(?:strict\s+)?(?P<o>{_DIET_RE})(?:\s+diet)?\b", _h_diet),
    _rule(rf"^(?:went|{_HAVE}\s+gone|turned|became|{_HAVE}\s+become|switched\s+to\s+being)\s+(?:an?\s+)?(?:full\s+)?(?P<o>{_DIET_RE})\b", _h_diet),
    _rule(rf"^(?:eat|eats|drink|drinks|{_BE}\s+(?:eating|drinking))\s+(?P<o>.+)", _h_eats),
    _rule(r"^(?:hate|hates|dislike|dislikes|detest|detests|loathe|loathes|despise|despises|can\s+not\s+stand|cannot\s+stand|can\s+not\s+bear|cannot\s+bear|do\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for|does\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for|am\s+not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of)\s+(?P<o>.+)", _h_dislikes),
    _rule(rf"^(?:love|loves|like|likes|enjoy|enjoys|adore|adores|dig|digs|(?:{_BE}|{_HAVE}\s+(?:always\s+)?been)\s+(?:really\s+|so\s+|very\s+|totally\s+|super\s+)?(?:into|obsessed\s+with|passionate\s+about|crazy\s+about|fond\s+of|a\s+sucker\s+for|keen\s+on|hooked\s+on|addicted\s+to)|{_BE}\s+(?:an?\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+|total\s+|die-?hard\s+|avid\s+)?(?:fan|lover)\s+of|{_HAVE}\s+(?:an?\s+)?(?:soft\s+spot|weakness|passion|love)\s+for|{_HAVE}\s+(?:always\s+)?(?:loved|liked|enjoyed))\s+(?P<o>.+)", _h_likes),
    _rule(rf"^{_BE}\s+(?>(?:an?\s+)?(?:(?:big|huge|massive|total|die-?hard|lifelong|long-?time|avid|real|true|serious)\s+)*)(?P<o>[\w'&.-]+(?:\s+[\w'&.-]+){{0,3}}?)\s+(?:fan|lover|enthusiast|nerd|geek|buff|addict)\b(?!\s+of\b)", _h_fan),
    _rule(r"^(?:prefer|prefers)\s+(?P<o>.+)", _h_prefers),
    _rule(r"^would\s+(?:much\s+)?rather\s+(?P<o>.+)", _h_rather),
    _rule(rf"^(?:{_HAVE}\s+)?(?:recently\s+|just\s+)?(?:taken\s+up|took\s+up|picked\s+up|gotten\s+into|got\s+into|started)\s+(?P<o>.+)", _h_took_up),
    # plans, decisions, goals
    _rule(rf"^(?:(?:{_BE}\s+going\s+to|will|had\s+to|{_HAVE}\s+to|{_BE}\s+having\s+to|decided\s+to|{_HAVE}\s+(?:just\s+)?(?:had\s+to\s+)?)\s+)?(?:{_BE}\s+)?(?:just\s+|finally\s+)?(?:cancel(?:l?ing|l?ed)?|call(?:ing|ed)?\s+off|scrap(?:ped|ping)?)\s+(?P<o>.+)", _h_cancelled),
    _rule(rf"^{_BE}\s+(?:going\s+to|about\s+to|set\s+to|scheduled\s+to|preparing\s+to|intending\s+to|planning\s+to|supposed\s+to)\s+(?P<o>.+)", _h_plan_going),
    _rule(rf"^(?:plan|plans|intend|intends|{_HAVE}\s+(?:plans|a\s+plan)|{_HAVE}\s+planned|{_BE}\s+(?:planning|plotting))\s+(?:to|on)\s+(?P<o>.+)", _h_plan),
    _rule(rf"^(?:{_BE}\s+planning|plan|plans)\s+(?P<o>(?:an?|our|my|the|another)\s+.+)", _h_plan_noun),
    _rule(rf"^{_BE}\s+(?:seriously\s+)?(?:thinking|considering)\s+(?:of\s+|about\s+)?(?P<o>\w+ing\b.*)", _h_thinking_of),
    _rule(r"^(?:will|shall)\s+(?P<o>.+)", _h_will),
    _rule(rf"^{_BE}\s+off\s+to\s+(?P<o>.+)", _h_off_to),
    _rule(rf"^(?:{_HAVE}\s+)?(?:finally\s+|just\s+|recently\s+|officially\s+|already\s+|also\s+)*(?:decided|chose|opted|resolved|committed|made\s+(?:the|a|my|our)\s+decision|made\s+up\s+(?:my|our|his|her)\s+minds?)\s+(?:(?P<neg>not\s+)?to|(?P<against>against))\s+(?P<o>.+)", _h_decided),
    _rule(rf"^(?:{_HAVE}\s+)?(?:finally\s+)?decided\s+(?:that\s+)?(?:I|we|he|she)\s+(?:would|should|want\s+to)\s+(?P<neg>not\s+)?(?P<o>.+)", _h_decided),
    _rule(rf"^(?:{_HAVE}\s+)?(?:finally\s+|just\s+|officially\s+)*(?:decided|made\s+up\s+(?:my|our|his|her)\s+minds?)\s*(?:that\s+|:\s*|,\s*)?(?:I|we|he|she)\s+(?P<o>(?:am|are|is|will|shall)\b.+)", _h_decided_plan),
    _rule(rf"^(?:(?:really|badly|desperately|eventually|definitely|also|still)\s+)*(?:want|wants|{_HAVE}\s+(?:always\s+|long\s+)?wanted|would\s+(?:really\s+)?(?:like|love)|hope|hopes|aspire|aspires|aim|aims|long|longs|yearn|yearns|{_BE}\s+(?:hoping|aiming|looking|trying|working|striving|dying|eager|determined))\s+to\s+(?P<o>.+)", _h_goal),
    _rule(rf"^(?:dream|dreams|{_BE}\s+dreaming)\s+(?:of|about)\s+(?P<o>.+)", _h_goal),
    _rule(rf"^{_BE}\s+(?P<g>[a-z]+ing)\b\s*(?P<o>.*)", _h_progressive_plan),
    # events
    _rule(r"^(?P<v>attended|participated\s+in|took\s+part\s+in|competed\s+in|went\s+to\s+see|(?:was|were)\s+at|had)\s+(?P<o>.+)", _h_attended),
    _rule(rf"^(?P<v>visited|toured|explored|{_HAVE}\s+(?:been\s+to|visited)|traveled\s+to|travelled\s+to|flew\s+to|drove\s+to|went\s+back\s+to|(?:took|went\s+on|had)\s+(?:an?\s+|our\s+|my\s+)?(?:\w+\s+)?(?:trip|vacation|holiday|honeymoon|getaway|cruise|visit)\s+to|(?:got|came|flew)\s+(?:back|home)\s+from|returned\s+from|spent\s+(?:\S+\s+){{0,4}}?in|stayed\s+in|vacationed\s+in|backpacked\s+(?:through|across|around|in)|(?:was|were)\s+in)\s+(?P<o>.+)", _h_visited),
    _rule(r"^went\s+to\s+(?P<o>.+)", _h_went_to),
    _rule(r"^went\s+(?P<g>[a-z]+ing)\b", _h_went_doing),
    _rule(rf"^(?P<perfect>{_HAVE}\s+)(?:just\s+|finally\s+|recently\s+|already\s+)*{_PARTICIPLE_RE}\b(?P<o>.*)", _h_did),
    _rule(rf"^(?P<perfect>){_ACTION_VERB_RE}\b(?P<o>.*)", _h_did),
)
# fmt: on

#: Clause rules that read the whole clause rather than the text after a subject.
_MY_NAME = re.compile(r"^(?:(?:my|My|[Tt]he)\s+)?(?:name|Name)(?:\s+is|'s)\s+(?P<o>.+)")
_CALL_ME = re.compile(
    r"^(?:you\s+can\s+|just\s+|please\s+|everyone\s+|people\s+|my\s+friends\s+)?calls?\s+me\s+(?P<o>[A-Z].*)",
    re.I,
)
_MY_FAVOURITE = re.compile(
    r"^(?:my|My)\s+(?:all[- ]time\s+|absolute\s+|personal\s+|current\s+)?(?:favou?rite|fave|fav)\s+(?:[\w-]+\s+){0,3}?(?:is|are|has\s+to\s+be|would\s+be)\s+(?P<o>.+)"
)
_IS_MY_FAVOURITE = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:definitely\s+|probably\s+|still\s+|totally\s+|easily\s+)?(?:my|one\s+of\s+my)\s+(?:all[- ]time\s+|absolute\s+)?(?:favou?rites?|fave|fav)\b",
    re.I,
)
_HOBBY_MODS = (
    r"(?:(?:main|favou?rite|new|newest|biggest|latest|current|recent|only|big|weekend)\s+)*"
)
_MY_HOBBY = re.compile(
    rf"^(?:(?:[Mm]y|[Aa])\s+{_HOBBY_MODS}(?:hobb(?:y|ies)|pastimes?)(?:\s+(?:lately|these\s+days|right\s+now|at\s+the\s+moment|now|currently))?"
    r"\s+(?:is|are|include|includes|would\s+be)\s+(?:to\s+)?"
    rf"|(?:[Mm]y\s+|[Aa]\s+)?[Nn]ew\s+hobby(?:\s+unlocked)?\s*:\s*)(?P<o>.+)"
)
_IS_MY_HOBBY = re.compile(
    rf"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){{0,4}}?)\s+(?:is|are|has\s+become|have\s+become|became)\s+(?:definitely\s+|still\s+|kind\s+of\s+|officially\s+)?"
    rf"(?:(?:my|one\s+of\s+my)\s+{_HOBBY_MODS}(?:hobb(?:y|ies)|pastimes?)\b|an?\s+{_HOBBY_MODS}(?:hobby|pastime)\s+of\s+mine\b)",
    re.I,
)
_NOT_MY_THING = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:just\s+|really\s+|definitely\s+)?(?:not|never)\s+(?:really\s+)?(?:my\s+(?:thing|cup\s+of\s+tea|jam|style)|for\s+me)\b",
    re.I,
)
_IS_GROSS = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:so\s+|just\s+|really\s+|absolutely\s+|"
    r"totally\s+|honestly\s+|kind\s+of\s+|pretty\s+)?(?:disgusting|gross|revolting|nasty|overrated|"
    r"the\s+worst|not\s+for\s+me)\b",
    re.I,
)
_MY_GOAL = re.compile(
    r"^(?:my|My)\s+(?:main\s+|big\s+|biggest\s+|ultimate\s+|long-term\s+|life\s+|new\s+year'?s\s+|personal\s+)?(?:goal|dream|ambition|aim|resolution)(?:\s+for\s+\S+(?:\s+\S+)?)?\s+is\s+to\s+(?P<o>.+)"
)
_MY_PLAN = re.compile(
    r"^(?:my|My|the|The)\s+plan(?:\s+for\s+\S+(?:\s+\S+)?)?\s+is\s+to\s+(?P<o>.+)"
)
_MY_BIRTHDAY = re.compile(
    rf"^(?:(?P<me>my|My)|(?P<pron>his|her|His|Her)|(?:(?i:my|our)\s+{_REL_MODS}{_REL_RE}\s+)?(?P<who>{_NAME_TOKEN})'s)\s+(?:birthday|bday|b-day)\s+(?:is|was|falls)\s+"
    r"(?:(?:coming\s+up|next\s+week|on|in)\s+)*(?P<o>\|.*)"
    rf"|^(?:\|\s*)?(?:is|was)\s+(?:(?P<me2>my|My)|(?P<pron2>his|her|His|Her)|(?P<who2>{_NAME_TOKEN})'s)\s+(?:birthday|bday|b-day)\b"
)
_PET_NAME_IS = re.compile(
    r"^(?:(?:[Hh]is|[Hh]er|[Ii]ts|[Tt]heir)\s+names?\s+(?:is|are)|(?:[Hh]e|[Ss]he|[Ii]t|[Tt]hey)\s+(?:is|are)\s+(?:called|named)"
    r"|(?:[Ww]e|I)\s+(?:have\s+|just\s+)?(?:named|called)\s+(?:him|her|it|them))\s+"
    rf"(?P<names>{_NAME_TOKEN}(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+){_NAME_TOKEN})*)"
)
_MY_ARRANGEMENT = re.compile(
    r"^(?:[Mm]y|[Oo]ur)\s+(?P<np>[\w'&-]+(?:\s+[\w'&.-]+){0,5}?)\s+(?P<v>is|was)\s+"
    r"(?:(?:scheduled|booked|set|planned)\s+(?:for\s+)?)?(?:(?:on|at|for)\s+)?\|\s*$"
)
_BROKE_UP_WITH_ME = re.compile(
    rf"^(?P<n>{_NAME_TOKEN})\s+and\s+I\s+(?:(?:have|had|just|finally|recently)\s+)*(?P<v>broke\s+up|split\s+up|separated|"
    r"got\s+divorced|divorced|are\s+(?:not|no\s+longer)\s+(?:together|a\s+couple|dating|seeing\s+each\s+other)|"
    r"called\s+it\s+quits)\b"
)
_IS_MY_REL_NAME = re.compile(
    rf"^(?:my|My|our|Our)\s+{_REL_MODS}(?P<r>{_REL_RE})\s+is\s+(?P<n>{_NAME_TOKEN})\s*$"
)


_ClauseBuilder = Callable[[re.Match[str], _Message, _Clause], list[_Hit]]


def _c_name(confidence: float) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        found = _leading_name(m.group("o").strip())
        if found is None or not _name_ends(found[1]):
            return []
        return [_Hit("name", found[0], confidence=confidence)]

    return build


def _c_objects(predicate: str, confidence: float) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        return [_Hit(predicate, o, confidence=confidence) for o in _pref_objects(m.group("o"))]

    return build


def _c_opinion(predicate: str, confidence: float) -> _ClauseBuilder:
    """As :func:`_c_objects` for "X is my favourite" / "X is overrated", unless X is what
    others say or think ("Lots of people say X is overrated")."""
    objects = _c_objects(predicate, confidence)

    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        if _REPORTED.search(m.group("o")):
            return []
        return objects(m, msg, clause)

    return build


#: Words that make a clause someone else's opinion or a report ("people say…").
_REPORTED = re.compile(
    r"\b(?:say|says|said|think|thinks|thought|believe|believes|claim|claims|reckon|heard|hear|"
    r"told|tell|agree|people|everyone|everybody|someone|some|many|most|lots|they)\b",
    re.I,
)


def _c_intention(predicate: str) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        vp = _vp(m.group("o"))
        timing = "future" if predicate == "plans" else None
        return [_Hit(predicate, vp, confidence=0.9, timing=timing)] if vp else []

    return build


def _c_birthday(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    """A birthday: "My birthday is October 12th", "Priya's birthday is on June 3", "her
    birthday was yesterday", "Today is my birthday"."""
    who = m.group("who") or m.group("who2")
    if m.group("pron") or m.group("pron2"):
        who = msg.last_person
        if who is None:
            return []
    if not clause.dates or (who is not None and not _is_name(who)):
        return []
    day = msg.day_of_year(clause.dates[0])
    if day is None:
        return []
    if who:
        msg.person(who)
    return [_Hit("birthday", day, confidence=0.9, subject=who)]


def _c_pet_name(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    """A pet's name said after the pet: "we got a cat… Her name is Luna" names the cat
    (no new fact)."""
    names = [n for n in _names_list(m.group("names")) if _is_name(n)]
    if names:
        msg.name_pet(names)
    return []


def _c_break_up(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    if not _is_name(m.group("n")):
        return []
    msg.person(m.group("n"))
    predicate = "spouse" if "divorc" in m.group("v") else "partner"
    return [_Hit(predicate, m.group("n"), "person", 0.85, "past", negated=True, entity="person")]


def _c_relative_is(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    predicate = _RELATIONS.get(" ".join(m.group("r").casefold().split()))
    if predicate is None or not _is_name(m.group("n")):
        return []
    msg.person(m.group("n"))
    return [_Hit(predicate, m.group("n"), "person", 0.9, entity="person")]


#: Rules on a whole clause ("My name is…", "Sushi is my favourite", "My hobbies are…"),
#: tried before the clause's subject is read; the first that gives facts wins.
_CLAUSE_RULES: tuple[tuple[re.Pattern[str], _ClauseBuilder], ...] = (
    (_MY_NAME, _c_name(0.95)),
    (_CALL_ME, _c_name(0.85)),
    (_MY_FAVOURITE, _c_objects("likes", 0.9)),
    (_IS_MY_FAVOURITE, _c_opinion("likes", 0.9)),
    (_MY_HOBBY, _c_objects("hobby", 0.9)),
    (_IS_MY_HOBBY, _c_objects("hobby", 0.9)),
    (_NOT_MY_THING, _c_objects("dislikes", 0.85)),
    (_IS_GROSS, _c_opinion("dislikes", 0.75)),
    (_MY_GOAL, _c_intention("goal")),
    (_MY_PLAN, _c_intention("plans")),
    (_MY_BIRTHDAY, _c_birthday),
    (_PET_NAME_IS, _c_pet_name),
    (_MY_ARRANGEMENT, _c_arrangement),
    (_BROKE_UP_WITH_ME, _c_break_up),
    (_IS_MY_REL_NAME, _c_relative_is),
)


def _clause_rules(msg: _Message, clause: _Clause, text: str) -> bool:
    """The first of :data:`_CLAUSE_RULES` that gives facts adds them (about the speaker,
    or about whom the rule names). Returns whether one did."""
    for pattern, build in _CLAUSE_RULES:
        m = pattern.match(text)
        if m is None:
            continue
        hits = build(m, msg, clause)
        for hit in hits:
            msg.add(hit.subject or msg.speaker, hit, clause)
        if hits:
            return True
    return False


_NEGATION = re.compile(
    r"^(?:(?P<retract>no\s+longer|not\s+any\s+longer)\s+"
    r"|(?P<be>am|is|are)\s+(?:(?P<be_retract>no\s+longer)|not)\s+"
    r"|(?:do|does)\s+not\s+"
    r"|(?P<dead>did\s+not|never|(?:have|has|had)\s+(?:not|never)|(?:was|were)\s+not|"
    r"(?:would|will|can|could|should|must|might|may)\s+(?:not|never)|cannot|"
    r"(?:would|could|should|might|may|must)\b)"
    r"|(?P<stop>(?:have\s+|has\s+)?(?:stopped|quit|given\s+up|gave\s+up))\s+(?=[a-z]+ing\b)"
    r"|(?P<start>(?:have\s+|has\s+)?(?:started|began|begun))\s+(?=[a-z]+ing\b)"
    r"|(?P<used>used\s+to)\s+)",
    re.I,
)
_DISLIKE_IDIOM = re.compile(
    r"^(?:can\s+not|cannot)\s+(?:stand|bear|stomach)\b|^(?:do|does)\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for\b"
    r"|^(?:would|'d)\s+(?:much\s+)?rather\b|^would\s+(?:really\s+)?(?:like|love)\s+to\b",
    re.I,
)


#: Adverbs between an auxiliary and its verb ("I'm also hosting…"), left out for the rules.
_AUX_ADVERBS = re.compile(
    r"^(?P<aux>am|is|are|was|were|have|has|had|will)\s+(?:(?:also|just|really|still|actually|"
    r"finally|currently|definitely|totally|even|already|officially|recently|both|all)\s+)+",
    re.I,
)


def _apply_rules(msg: _Message, clause: _Clause, subj: _Subject, text: str) -> bool:
    """Match ``text`` (what follows the subject) against the rule table, with negation.
    Returns whether a fact was added."""
    text = _AUX_ADVERBS.sub(r"\g<aux> ", _ADVERBS.sub("", text.strip()))
    if clause.decision and subj.kind == "self":
        vp = _decided_vp(text)
        if vp is not None:  # "Made up my mind: I'm moving to Denver"
            hit = _Hit("decided", vp, confidence=0.85, timing="past")
            msg.add(subj.name, hit, clause, subj.confidence)
            return True
    mode: str | None = None
    fallback: str | None = None
    if not _DISLIKE_IDIOM.match(text):
        m = _NEGATION.match(text)
        if m:
            if m.group("dead") is not None:
                return False  # "didn't", "never", "would", "might": states nothing
            rest = text[m.end() :]
            if m.group("stop") is not None or m.group("start") is not None:
                # "stopped eating meat" retracts "eat meat"; "started eating chicken"
                # states "eat chicken" (else it is read as it stands: "started painting")
                words = rest.split(maxsplit=1)
                rest = _base(words[0]) + (" " + words[1] if len(words) > 1 else "")
                if m.group("start") is not None:
                    fallback = text
                else:
                    mode = "retract"
            elif (
                m.group("retract") is not None
                or m.group("be_retract") is not None
                or m.group("used") is not None
            ):
                mode = "retract"
            else:
                mode = "retract" if clause.anymore else "not"
            text = (m.group("be") + " " + rest) if m.group("be") else rest
            text = _ADVERBS.sub("", text)
    if clause.free_time and mode is None:
        hits = _free_time_hits(text)
        for hit in hits:
            msg.add(subj.name, hit, clause, subj.confidence)
        if hits:
            return True
    ctx = _Ctx(msg, clause, subj)
    if _match_rules(ctx, text, mode):
        return True
    return fallback is not None and _match_rules(ctx, fallback, mode)


def _match_rules(ctx: _Ctx, text: str, mode: str | None) -> bool:
    """The first rule of :data:`_RULES` whose handler accepts ``text`` adds its facts."""
    for rule in _RULES:
        m = rule.pattern.match(text)
        if m is None:
            continue
        hits = rule.handler(m, ctx)
        if not hits:
            continue
        fired = False
        for hit in hits:
            adjusted = _negate(hit, mode)
            if adjusted is None:
                continue
            subject = adjusted.subject or ctx.subject.name
            ctx.msg.add(subject, adjusted, ctx.clause, ctx.subject.confidence)
            fired = True
        return fired
    return False


def _negate(hit: _Hit, mode: str | None) -> _Hit | None:
    """``hit`` under the clause's negation: unchanged, retracted, turned into its opposite
    ("don't like" → dislikes), or dropped."""
    if mode is None or hit.negated:
        return hit if mode is None else None
    if mode == "retract":
        if hit.predicate in _NOT_RETRACTABLE:
            return None
        return _Hit(
            hit.predicate,
            hit.obj,
            hit.object_type,
            hit.confidence,
            "past",
            True,
            hit.subject,
            hit.entity,
        )
    if hit.predicate == "likes":
        return _Hit(
            "dislikes", hit.obj, hit.object_type, 0.85, None, False, hit.subject, hit.entity
        )
    if hit.predicate in _DENIABLE:  # "I'm not allergic to cats": stated, negated
        return _Hit(
            hit.predicate, hit.obj, hit.object_type, 0.85, None, True, hit.subject, hit.entity
        )
    return None


#: Predicates whose plain negation is a fact worth keeping ("I'm not allergic to cats"),
#: unlike "I'm not a nurse", which says nothing about what one is.
_DENIABLE = frozenset({"allergic_to"})
