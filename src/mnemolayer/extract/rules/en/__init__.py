"""Offline rule-based fact extraction for English chat messages.

:func:`extract_en` reads one message and returns the facts it states as
subject–predicate–object triples (predicates from :data:`~mnemolayer.extract.predicates.PREDICATES`), the
people, places, organisations, projects and pets those facts name, and the dates the
message mentions, resolved against the message's own timestamp.

How it works, per message (compiled regular expressions and word lists; no parser and no
model; well under a millisecond for a typical chat message):

1. **Normalise** (:mod:`.text`): NFKC, typographic quotes to ASCII, contractions spelled
   out ("I'm" → "I am", "can't" → "can not", "Lena's a nurse" → "Lena is a nurse",
   "birthday's" → "birthday is"), chat spellings ("im", "gonna", "wanna") spelled out.
2. **Split** (:mod:`.text`) into sentences, then clauses at conjunctions and commas that
   start a new subject ("…, and I work at Acme") or a new verb of the same subject ("I
   live in Lisbon and work at Acme": the second clause inherits "I"; "Leo is 5 and
   obsessed with dinosaurs" inherits "Leo is"). Sentences that ask ("Do you…", "Where…",
   a final "?" after no statement, an opinion put up for agreement: "…, don't you
   think?") or suppose ("if", "wish", "imagine") are skipped, and so are clauses that only
   set a scene ("when I was a kid…", "…, which is nice"). A clause that only announces a
   decision ("I've made up my mind", "Decision made:") makes the plan of the next clause
   a decision.
3. **Dates** (:mod:`.text`): date phrases (:func:`~mnemolayer.extract.dates.find_date_spans`) and vague
   times ("every day", "for two years", "next summer") are cut out of a clause, with the
   word that leads them ("about five years ago", "for tonight"), so that they never end
   up inside an object. An event or a plan takes the first date of its clause (else of
   its sentence) that fits its tense, resolved by :func:`~mnemolayer.extract.dates.resolve_date` against
   the message time.
4. **Subject** (:mod:`.subjects`): after fillers ("Oh,", "Btw", "Turns out") a clause must
   start with a subject: "I"/"we" (→ ``speaker``, else :data:`~mnemolayer.extract.base.SELF`), a capitalised
   name ("Lena", "Priya from my book club", "Noor, who I met at the gym,"), a named
   relative or pet ("my sister Maria", "my dog Max": the relation is a fact of its own),
   someone named by who they are to the speaker ("my neighbor Dana", "Ravi, my
   roommate,", "her husband Leo"), or "he"/"she" for the last person named in the
   message. A message that opens with a past verb drops its "I" ("Just started at
   Spotify!"). Anything else ("you", "my mom", "people") is no subject, and the clause
   gives no fact; a capitalised word followed by a verb without its "-s" is no name
   ("Sounds like fun"). Named relatives and pets are also picked up anywhere in a clause
   ("…with my brother Tom", "Tom's dog Rex", "Meet Ziggy, my new kitten").
5. **Rules** (:mod:`.table`, handlers in :mod:`.identity`, :mod:`.work`,
   :mod:`.preferences`, :mod:`.events`, :mod:`.plans`): the rest of the clause is
   matched, at its start, against one ordered table of verb-phrase rules (``live in``,
   ``work as``, ``am allergic to``, ``went to``…); the first rule whose handler accepts
   the object wins. Objects are cut at clause boundaries, stripped of articles and
   possessives, checked for their kind (a place or an employer is a capitalised name, a
   job a known occupation, a pet a known animal) and split when they are lists ("hiking,
   jazz and sushi"). A plan keeps its verb and object and drops what it is for ("visit
   Vermont to see the fall colors" → "visit Vermont"). Every phrase object then passes
   :func:`~.phrases._clean_phrase`: trailing adverbs go ("made cookies recently"), and a
   phrase that ends mid-way ("Painting landscapes and"), only says how much ("a few"),
   refers back with a pronoun ("check them out") or holds a clause of its own is dropped
   rather than kept garbled.
6. **Negation** (:mod:`.table`): "no longer", "not … anymore", "used to" and "stopped
   …-ing" retract the fact they wrap (``negated=True``), a dropped or cancelled plan
   included ("I'm cancelling my trip to Oslo"); "I'm not allergic to cats" is a negated
   allergy; a plain "don't like" / "am not a fan of" is a ``dislikes`` fact; other plain
   negatives ("didn't", "never", "am not a nurse") and modals ("might", "would") state
   nothing.

Precision is preferred over recall throughout: a clause that fits no rule exactly gives
no fact rather than a guessed one.
"""

from __future__ import annotations

from mnemolayer.extract.rules.en.extract import extract_en

__all__ = ["extract_en"]
