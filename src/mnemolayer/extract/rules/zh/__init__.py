"""Offline rule-based fact extraction for Chinese chat messages (internal package).

Use :func:`mnemolayer.extract.rules.zh.extract_zh` (re-exported here): it reads one
message and returns the facts it states as subject–predicate–object triples (predicates
from :data:`~mnemolayer.extract.predicates.PREDICATES`, objects in the message's own
Chinese wording), the people, places, organisations and pets it names, and the dates it
mentions resolved against the message's timestamp.

How it works, per message:

1. The text is NFKC-normalised (full-width Latin and digits become ASCII; an emoji ends a
   sentence) and split into sentences (``。！？；`` and newlines) and clauses (commas,
   and spaces between Han characters). Clauses that ask (``吗``, ``什么``, ``是不是``, a
   final ``？``) or hedge (``可能``, ``好像``) are skipped, and so is every clause of a
   sentence that is hypothetical (``如果``, ``假如``, ``要是``…).
2. Each rule (:mod:`.rules`) is a regular expression over a clause that starts at its
   trigger word (``住在``, ``在…工作``, ``喜欢``, ``对…过敏``…). The text before the
   trigger is the clause's *head* (:func:`.context.parse_head`); it must read as a
   subject once time words and adverbs are stripped: ``我`` (the speaker; ``我们`` shares
   the speaker's events and plans but not identity or taste), a person's name (``莉娜``,
   ``小张``, ``王阿姨``; checked with jieba's POS tags and the dictionary), a relative with
   or without a name (``我妹妹小雨``, ``同事老李``), a pet with or without a name (``我的
   猫``, ``我家狗狗元宝``), ``他``/``她``/``它`` (the last person or pet named), one of
   the pets or children just counted (``一只叫…``, ``大的叫…``), or nothing (the clause
   continues the previous clause's subject: ``我叫李明，今年28岁``). A head that is
   anything else (``你``, ``他们``, ``我觉得我``…) makes the rule not apply: precision
   matters more than recall, and no fact is better than a wrong one.
3. The object is trimmed of measure words and particles (``一只``, ``了``, ``的``) and
   checked for its kind (a place for ``lives_in``, an organisation for ``works_at``, a job
   title for ``job``…); enumerations (``绘画、弹钢琴和品茶``) become one fact each.
4. Clauses no rule reads may still state a finished action (``我上周拔了智齿`` → did
   ``拔了智齿``; ``去看了…演唱会`` → attended; :func:`.events.past_action`), and a clause
   after ``我想好了`` says what was decided. Relatives and pets named in passing (``我女儿
   朵朵…``, ``我的仓鼠芝麻…``) give the relation or ``has_pet`` wherever they appear.
5. Negation follows the conventions of :mod:`mnemolayer.extract.base`:
   ``不再``/``已经不``/``不…了`` retract a fact (``negated=True``; so do ``分手``,
   ``离开了<公司>``, a cancelled plan), while ``我不喜欢香菜`` is a ``dislikes`` fact and
   ``不过`` ("but") negates nothing. Events and plans carry the date of the clause,
   resolved by :mod:`mnemolayer.extract.dates` against the message time.

Modules: :mod:`.lexicon` (word lists), :mod:`.text` (jieba tags and recognisers),
:mod:`.context` (subjects, message state, tense), :mod:`.identity`, :mod:`.tastes` and
:mod:`.events` (the handlers), :mod:`.rules` (the rule table), :mod:`.extract` (the
entry point). Names without a leading underscore are shared between these modules, not a
public API.
"""

from __future__ import annotations

from mnemolayer.extract.rules.zh.extract import extract_zh

__all__ = ["extract_zh"]
