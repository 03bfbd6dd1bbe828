"""Offline rewrite of a follow-up question into a standalone one (the extractive `condense`).

Without a model the rewrite is a few visible rules, applied only when the question shows it
leans on an earlier turn; any other question passes through unchanged:

- a referring pronoun ("it", "they", "this", "that drug", "its dose") is replaced by the
  earlier turn's referent: its answer when that was a short name asked for by what/which/
  where, else the first entity its question named ("warfarin" in "What is the dose of warfarin?",
  cut to the words the turn's cited titles share);
- "he", "she", "his", "her" prefer a short name answered, then a capitalised name asked about;
- a verb left without its object ("safe to take with aspirin?") gains the referent;
- "instead" without "of" gains "of <what the earlier question was about>";
- a question naming only an aspect ("What dose?", "Side effects?") asks it of the referent
  ("What dose of mellodine?" after "Which syrup ...?" answered "mellodine"; "Side effects
  of warfarin?" after "What is the dose of warfarin?");
- an ellipsis ("What about X?", "And the X?") asks the earlier question of X: X takes the
  place of the earlier subject written like it (a capitalised name for a name: "How long is
  the River Sallow?" + "And the Venn?" -> "How long is the River Venn?"), and a group of
  people ("children", "in pregnancy") takes the place of the earlier group or is added;
- a continuation that is a question of its own ("And how long is the course if she is
  pregnant?") gets the earlier question's setting ("for a UTI in a woman"), up to any
  relative clause the new question may contradict ("who is not pregnant");
- where the earlier question weighs options ("... instead of ibuprofen?"), "What about X?"
  offers one more, and "... too?", "anything else?" lean on all of it: the earlier question
  is kept whole and the new part added, so retrieval sees both;
- "What about X, when do they come off?" asks its own question of X;
- a bare question word with a preposition ("Until what time?") asks the earlier "which day
  is ...?" question again with it ("Until what time is ...?");
- a question that leans on the thread without naming anything of it (it speaks of "the"
  pads, asks a dose of nothing, points to "him", "was it who", "one" of them ("if I miss
  one"), "then" or "afterwards", or to the kind the earlier subject is of: "each group"
  after "the Pendry walking group") keeps the earlier subject ("how thick should the heel
  pads be, Quillan syndrome?"): the new asked thing and the earlier subject both reach
  retrieval; sharing a word with the earlier question but not the first word of its
  subject ("the passenger trains" after "... start carrying passengers?") is no subject
  of its own; a bare question word and what it measures ("how far apart?") asks it of
  all the earlier question was about ("antacids with Epclusa");
- the earlier subject is a whole phrase: a name and the kind it names ("the Saxby
  outreach clinic", "the Velm sheep fair", kept whole against the cited titles), a noun
  in -ing between nouns or after an article ("the home cooking assessment", "the bottling
  works"), an acronym inside it ("the long-acting HIV injections"), without the verb
  closing a do-question ("when do the CST groups start this year?"), a participle
  ("held", "built") or the verb after "who" ("Who runs the baby clinic?"); "it" before a
  stranded preposition ("who was it built for") is no expletive, "it" in "did it cost to
  rebook his flight" is;
- "it" after "Where is X?" is X (the place answered is "there"), and after "What is X
  used for?" X, not a name the answer gave it;
- "that" after a yes/no question is the action it asked about ("for that" after "Do you
  freeze warts?" is "for freeze warts"); only the first referring pronoun's number is the
  referent's ("does it work if they miss a day?": "they" are people); the verb after "do
  you" and the people a question is asked for ("people", "someone") are never its subject.

The rules guess which part of the earlier question "What about X?" replaces from how X is
written; a model behind the `condense` role (`prompts/condense.txt`) reads the meaning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prefrag.reasoners.base import CondensedQuestion, PriorTurn

_WORD_RE = re.compile(r"[A-Za-z0-9][\w'\u2019-]*")

# Words that never make up what a question is about.
_FUNCTION = frozenset(
    """a an the of in on at for to from with without by about into over under after before
    during until since and or but nor so if then than as is are was were be been being am do
    does did
    done can could may might must shall should will would have has had having not no yes
    what which who whom whose when where why how i me my we us our you your he him his she
    her it its they them their this that these those there here any some each every all
    much many more most less least one ones other another else also too very just only
    please tell know get got give gave take taken took use used using need needed happen
    happens mean means called name named does make made go goes safe okay ok fine right
    best usual usually normally typically instead long deep soon often old far tall high
    big large wide people person someone somebody anyone anybody everyone now currently""".split()
)
# Nouns naming an aspect of a subject rather than the subject itself.
_ASPECTS = frozenset(
    """dose doses dosage dosages risk risks side effect effects use uses treatment treatments
    symptom symptoms cause causes sign signs level levels range ranges amount interaction
    interactions population capital river height age date year founder name kind type
    part role alternative alternatives option options difference course courses""".split()
)
_AUXILIARIES = frozenset(
    "does do did is are was were can could will would should may might has have had".split()
)
# Groups of people a question may be asked for ("What about children?").
_GROUPS = frozenset(
    """children child adults adult women woman men man babies baby infants infant
    teenagers adolescents elderly pregnancy pregnant breastfeeding""".split()
)
_REFERRING = frozenset({"it", "they", "them", "this", "that", "these", "those"})
_PERSONAL = frozenset({"he", "she", "him", "his", "her", "hers"})
_POSSESSIVE = frozenset({"its", "their"})
# "this drug", "the medicine": a determiner and a category noun point back too.
_CATEGORY_RE = re.compile(
    r"\b(?:(?:this|that|these|those)\s+(?:drug|drugs|medicine|medicines|medication|"
    r"medications|tablet|tablets|condition|disease|illness|treatment|place|town|city|village|"
    r"river|person|man|woman|one|ones|thing)"
    r"|the same\s+(?:drug|drugs|medicine|medicines|medication|medications|tablet|tablets))\b",
    re.IGNORECASE,
)
_EXPLETIVE_RE = re.compile(
    r"\b(?:is|was|would|will|isn't|wasn't)\s+it\s+(?:\w+\s+)?"
    r"(?!(?:known|used|famous|noted|named|called|made)\b)"  # "is it known for": it is a thing
    r"\w+\s+(?:to|that|if|whether|for)\b(?!\s*\??\s*$)"  # "who was it built for": it is a thing
    r"|\b(?:is|was)\s+it\s+(?:who|that)\b"  # "which daughter was it who ...": a cleft
    # "how much did it cost to rebook his flight" (not "to build?": then it is a thing)
    r"|\b(?:does|did|do|will|would)\s+it\s+(?:cost|take)\s+(?:\w+\s+)?to\s+\w+\s+\w",
    re.IGNORECASE,
)
_WHAT_ABOUT_RE = re.compile(
    r"^\s*(?:and\s+|but\s+)?(?:what|how)\s+about\s+(?P<rest>.+?)\s*\??\s*$", re.IGNORECASE
)
_AND_RE = re.compile(r"^\s*(?:and|also)\s+(?P<rest>.+?)\s*\??\s*$", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(how|what|when|where|which|who|whom|whose|why|is|are|was|were|can|could|does|do|did|"
    r"should|will|would|may)\b",
    re.IGNORECASE,
)
_TOO_RE = re.compile(r"\b(?:too|as well|else)\s*\??\s*$", re.IGNORECASE)
# "Is it safe to take with aspirin?": a verb whose object was left out.
_NO_OBJECT_RE = re.compile(
    r"\b(take|taking|use|using|combine|combining|mix|mixing|give|giving|stop|stopping)"
    r"\s+(?=(with|alongside|together|during|while|before|after|if|in)\b)",
    re.IGNORECASE,
)
# "What are its side effects?" -> "What are the side effects of metformin?"
_OF_POSSESSIVE_RE = re.compile(r"\b(its|their)\s+((?:[\w-]+\s+){0,2}[\w-]+)(\s*\??\s*)$", re.I)
_INSTEAD_RE = re.compile(r"\binstead\b(?!\s+of\b)", re.IGNORECASE)
# Questions whose short answer is a thing ("it"), or a person ("she"). A place answered
# to "Where is X?" is "there"; "it" is still X.
_ASKS_THING = re.compile(r"^\s*(what|which)\b", re.IGNORECASE)
_ASKS_NAME = re.compile(r"^\s*(who|whom|whose|what|which)\b", re.IGNORECASE)
# "Who was Ada Corran?": a question about a named person (two or more capitalised words).
_WHO_IS_RE = re.compile(r"^\s*(?i:who\s+(?:is|was))\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+)\s*\??\s*$")
# "Who is the practice nurse at Holm?": a question for whoever holds a role.
_WHO_ROLE_RE = re.compile(
    r"^\s*(?i:who)\s+(?i:is|was|are|were)\s+(?P<role>(?i:the|our|your)\s+[a-z][^?]*?)\s*\??\s*$"
)
# "What medal did Ada Corran win?": a named person doing what is asked about.
_DOER_RE = re.compile(
    r"^\s*(?i:what|which)\s+[\w-]+\s+(?i:did|does|do|has|had|will)\s+"
    r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+)\s+[a-z]"
)
# A question whose verb comes last, after its subject ("When was X built?").
_INVERTED_RE = re.compile(
    r"^\s*(?:when|where|why|how|what year)\b.*?\b(?:is|was|are|were|did|does|do)\b", re.I
)
# "there" standing for a place ("What's the phone number there?"), not "is there ...".
_THERE_RE = re.compile(
    r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )\bthere\b(?!\s+(?:is|are|was|were|be)\b)",
    re.IGNORECASE,
)
# The place an earlier question is set at: "at/in <Capitalised Name>".
_PLACE_RE = re.compile(r"\b(?:at|in)\s+((?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    text: str


# How a rewrite that keeps the earlier question joins the follow-up's new part to it.
_KEPT_ELLIPSIS = ", and what about "


def ellipsis_part(question: str) -> str:
    """The follow-up's own part of a rewrite that kept the earlier question, else "".

    "What's the usual adult dose of X, and what about for older people?" asks the earlier
    question again for "for older people": that part tells which of a sentence's values
    is asked now (the earlier question's words point to the value already answered).
    """
    head, kept, rest = question.rpartition(_KEPT_ELLIPSIS)
    return rest.strip().rstrip("?").strip() if kept and head else ""


def condense_follow_up(question: str, history: Sequence[PriorTurn]) -> CondensedQuestion:
    """`question` made standalone from the latest earlier turn, or unchanged."""
    text = " ".join(question.split())
    if not history:
        return CondensedQuestion(question=text)
    prior = history[-1]
    subject = _subject_phrase(prior.question, prior.titles)
    if not subject:
        return CondensedQuestion(question=text)
    rewritten, why = _rewrite(text, prior, subject)
    if rewritten == text:
        return CondensedQuestion(question=text)
    return CondensedQuestion(question=rewritten, rewritten=True, explanation=why)


def _rewrite(text: str, prior: PriorTurn, subject: str) -> tuple[str, str]:
    prior_text = prior.question.strip().rstrip("?").strip()
    ellipsis = _WHAT_ABOUT_RE.match(text) or _AND_RE.match(text)
    if ellipsis:
        rest = ellipsis.group("rest").strip().rstrip("?").strip()
        named = _named_then_asked(rest)
        if named is not None:
            return named, "an ellipsis: the new question asked of the thing it names"
        asked = _question_first(rest)
        if _QUESTION_START.match(asked):  # "And how long is the course if ...?"
            return _continuation(asked, prior, subject)
        swapped = _swapped(prior_text, rest)
        if swapped is not None:
            return f"{swapped}?", "an ellipsis: the earlier question asked of the new subject"
        return f"{prior_text}{_KEPT_ELLIPSIS}{rest}?", "an ellipsis: the earlier question kept"
    if _TOO_RE.search(text) and not _has_own_subject(text):
        core = text.rstrip("?").strip()
        return f"{core} (about {subject})?", "an ellipsis: the earlier subject carried over"
    asked = _question_first(text.rstrip("?").strip())
    pointing = any(w.lower() in _REFERRING | _PERSONAL for w in _words(asked))
    if _QUESTION_START.match(asked) and not _content_words(asked, aspects=False) and not pointing:
        # "How long for?", "Until what time?": a question word alone asks it of the
        # earlier turn.
        swapped = _wh_swapped(prior.question, text)
        if swapped is not None:
            return swapped, "a continuation: the earlier question asked with the new question word"
        return _continuation(asked, prior, subject)
    referent = _referent(prior, subject)
    if _only_aspect(text) and (referent != subject or not _asks_kind(prior.question)):
        # "What dose?" after "Which syrup ...?" answered "mellodine": the syrup's dose; after
        # "What is the dose of warfarin?", "Side effects?" are warfarin's. After a "which
        # <kind>" question with no short answer there is nothing to ask it of.
        core = text.rstrip("?").strip()
        return f"{core} of {referent}?", "an ellipsis: the aspect asked of the earlier turn"
    personal = _personal_referent(prior)
    out = _CATEGORY_RE.sub(referent, text)
    if _INSTEAD_RE.search(out):
        out = _INSTEAD_RE.sub(f"instead of {_carried(prior.question)}", out, count=1)
    out = _NO_OBJECT_RE.sub(lambda m: f"{m.group(1)} {referent} ", out)
    out = _OF_POSSESSIVE_RE.sub(lambda m: f"the {m.group(2)} of {referent}{m.group(3)}", out)
    out = _replace_pronouns(out, referent, personal, _action(prior.question))
    place = _PLACE_RE.search(prior.question)
    if place is not None:
        # "What's the phone number there?" after "Who is the manager at Holm Lane?"
        out = _THERE_RE.sub(f"at {place.group(1)}", out, count=1)
    leans = _leans_on_thread(text) or _names_kind_of(text, subject)
    if out == text and _QUESTION_START.match(asked) and leans and not _only_aspect(text):
        return _with_subject(text, prior, subject)
    return out, "pronouns and ellipses resolved from the previous turn"


def _with_subject(text: str, prior: PriorTurn, subject: str) -> tuple[str, str]:
    """A follow-up that names nothing of the thread, asked of the earlier subject.

    "How big should the heel raises be?" after "What is Sever's disease?" asks it of
    Sever's disease; a follow-up naming a thing of its own (a capitalised name) or sharing
    a word with the earlier subject stands as it is.
    """
    question = text.rstrip("?").strip()
    named = any(_capitalised(w) and not _is_i(w) for w in _words(question)[1:])
    if named or _shares_content(question, subject):
        return text, "unchanged"
    title_words = {w.lower() for title in prior.titles for w in _words(title)}
    if subject.islower() and " " not in subject and subject not in title_words:
        subject = _carried(prior.question)  # "bangs" of "if my 10 year old bangs his head"
    return (
        f"{question}, {subject}?",
        "a new question on the thread: the earlier subject carried over",
    )


def _is_i(word: str) -> bool:
    """Whether a capitalised word is only "I" ("I", "I'm", "I've")."""
    return re.fullmatch(r"I(?:['\u2019](?:m|ve|d|ll))?", word) is not None


def _leans_on_thread(question: str) -> bool:
    """Whether a question shows it needs an earlier turn to be understood.

    It points to someone it does not name ("stay with him"; "which daughter was it who
    ..."), asks an aspect of nothing ("what dose do you start on ...?"), speaks of "the"
    thing without saying whose ("how big should the heel raises be"), of "one" of what
    was said ("if I miss one"), or of what happens "then" or "afterwards". "How long does
    a gout flare last?" shows none of these and stands alone.
    """
    lowered = question.lower()
    words = [w.lower() for w in _words(question)]
    if any(w in ("he", "she", "him", "his", "her") for w in words):
        return True
    if re.search(r"\b(?:is|was)\s+it\s+(?:who|that)\b", lowered):
        return True
    if _BACK_RE.search(lowered):
        return True
    for index, word in enumerate(words):
        after = words[index + 1 : index + 5]
        owned = index > 0 and not _is_function(words[index - 1])  # "simvastatin levels"
        if word in _ASPECTS and not owned and "of" not in after:
            return True
        if word == "the" and "of" not in after:
            return True
    return False


# "miss one", "another one", "then?", "afterwards": words that point back to what was said.
_BACK_RE = re.compile(
    r"\b(?:another|an?\s+other|the\s+next|one)\s+(?:one\b|(?=\s*(?:by|of|if|when|$|\?)))"
    r"|\b(?:miss|missed|skip|skipped|forget|forgot|take|took)\s+one\b"
    r"|\bthen\s*\??\s*$|\bafterwards?\b",
    re.IGNORECASE,
)


def _names_kind_of(question: str, subject: str) -> bool:
    """Whether a question speaks of the kind the earlier subject is of, not naming it.

    "how many people are in each group?" after "the Pendry walking group": the group is
    the earlier one.
    """
    named = _content_words(subject)
    if len(named) < 2:
        return False
    own = {w.lower().rstrip("s") for w in _content_words(question)}
    return named[-1].lower().rstrip("s") in own and named[0].lower().rstrip("s") not in own


def _shares_content(question: str, subject: str) -> bool:
    """Whether a question names `subject`: it shares its first content word (plural or not).

    An aspect shared ("the dose" after "the starting dose of X") is not what either is
    about: "How often can the dose go up?" still needs the earlier subject; nor is the
    kind a name is of ("each group" of "the Pendry walking group").
    """
    named = _content_words(subject)
    if not named:
        return False
    return named[0].lower().rstrip("s") in {w.lower().rstrip("s") for w in _content_words(question)}


def _named_then_asked(rest: str) -> str | None:
    """A question of its own asked of the thing an ellipsis names, or None.

    "What about steri strips, when do they come off?" -> "When do steri strips come off?":
    its pronoun points to the thing named, not to the earlier subject. None when the
    question has no pronoun for it or the named part is a condition ("with lithium").
    """
    named, comma, own = rest.partition(", ")
    asked = _question_first(own.strip())
    if not comma or not _QUESTION_START.match(asked) or len(named.split()) > 4:
        return None
    if re.match(r"^(?:for|in|with|during|after|on|at|to|from|if|when)\b", named, re.I):
        return None
    thing = re.sub(r"^(?:the|a|an)\s+", "", named, flags=re.IGNORECASE)
    resolved = _replace_pronouns(asked, thing, thing)
    if resolved == asked:
        return None
    return f"{resolved[:1].upper()}{resolved[1:]}?"


def _wh_swapped(earlier: str, follow_up: str) -> str | None:
    """The earlier "which/what <noun> ..." question asked with the follow-up's question word.

    "Until what time?" after "Which day is the late clinic at Marlpit Lane?" -> "Until what
    time is the late clinic at Marlpit Lane?". None when the earlier question does not open
    with a which/what phrase before its verb.
    """
    opening = re.match(
        r"^\s*(?:which|what)\s+[\w-]+\s+(?=(?:is|are|was|were|does|do|did)\b)", earlier, re.I
    )
    if opening is None:
        return None
    asked = re.sub(r"^\s*(?:and|but|so)\s+", "", follow_up.strip().rstrip("?").strip(), flags=re.I)
    rest = earlier[opening.end() :].strip().rstrip("?").strip()
    return f"{asked[:1].upper()}{asked[1:]} {rest}?"


def _action(question: str) -> str:
    """What "that" points back to after a yes/no question: the action it asked about.

    "Do you freeze verrucae at the clinic?" -> "freeze verrucae at the clinic"; "" when
    the earlier question asks no yes/no question of "you"/"we".
    """
    match = re.match(
        r"^\s*(?:do|does|can|could|will|would|should)\s+(?:you|we|they)\s+(.+?)\s*\??\s*$",
        question,
        re.IGNORECASE,
    )
    return match.group(1) if match else ""


def _resolved(text: str, prior: PriorTurn, subject: str) -> str:
    """`text` with its pronouns and "that drug" put back to the earlier turn's referent."""
    referent = _referent(prior, subject)
    out = _CATEGORY_RE.sub(referent, text)
    out = _OF_POSSESSIVE_RE.sub(lambda m: f"the {m.group(2)} of {referent}{m.group(3)}", out)
    return _replace_pronouns(out, referent, _personal_referent(prior))


def _question_first(text: str) -> str:
    """A question whose question word hides behind a preposition, question word first.

    "for how long" -> "how long"; "how long for" -> "how long": the preposition belongs to
    the earlier question's verb, and the asked kind is read from the opening words.
    """
    text = re.sub(
        r"^(?:for|to|from|until|since|by|at|in)\s+(?=(?:how|what|which|when|where)\b)",
        "",
        text,
        flags=re.IGNORECASE,
    )
    return re.sub(r"\s+(?:for|to|from|until|since|by|at|in)$", "", text, flags=re.IGNORECASE)


def _content_words(text: str, *, aspects: bool = True) -> list[str]:
    """The words of `text` that name something (not aspects, unless `aspects` is False)."""
    return [
        w
        for w in _words(text)
        if not _is_function(w)
        and w.lower() not in _ASKED_UNITS
        and (not aspects or w.lower() not in _ASPECTS)
    ]


# Words a bare question asks for, naming nothing: "until what time?", "which days?"
_ASKED_UNITS = frozenset("time times day days hour hours week weeks month months apart".split())


def _continuation(asked: str, prior: PriorTurn, subject: str) -> tuple[str, str]:
    """A new question on the thread, about the earlier turn's subject and in its setting.

    Its pronouns point back ("And when should it be stopped?" -> "... should dabigatran be
    stopped"); a question with nothing of its own ("And for how long?", "How long for?")
    is asked of what the earlier question was about ("How long, melatonin do we give for
    insomnia?"); the earlier setting ("for a UTI in a woman") is added unless the new
    question holds it. The earlier question's own question word never comes along: "where
    is it?" after "When was X first lit?" asks where, not when.
    """
    prior_text = prior.question.strip().rstrip("?").strip()
    resolved = _resolved(asked, prior, subject)
    if _AFTER_THAT_RE.search(asked):  # "How often after that?": after what was asked
        resolved = asked
    resolved = f"{resolved[:1].upper()}{resolved[1:]}"
    if not _content_words(resolved):
        return (
            f"{resolved}, {_carried(prior_text)}?",
            "a continuation: a question word asked of the earlier question's subject",
        )
    setting = _setting(prior_text, resolved)
    if setting:
        return f"{resolved}, {setting}?", "a continuation: asked in the earlier question's setting"
    if resolved.lower() == asked.lower():  # "And how many get booked on each list?"
        kept, why = _with_subject(f"{resolved}?", prior, subject)
        if why != "unchanged":
            return kept, why
    return f"{resolved}?", "a continuation: the earlier subject carried over"


# "after that", "before then": an event, the earlier question's, not its subject.
_AFTER_THAT_RE = re.compile(r"\b(?:after|before|since|until)\s+(?:that|this|then)\b", re.I)


def _swapped(prior_text: str, new: str) -> str | None:
    """The earlier question asked of `new` instead of the subject it replaces, or None.

    "How long is the River Sallow?" + "And the Venn?" -> "How long is the River Venn?";
    "What is the dose of warfarin?" + "What about heparin?" -> "What is the dose of heparin?";
    a group of people ("children") replaces the group the earlier question named, or is
    added to it ("... of warfarin in children"). The subject replaced is the earlier
    question's first named thing written like `new` (a capitalised name for a name). None
    when the earlier question weighs options ("instead of ..."): there "What about X?"
    offers X as one more option, and the whole earlier question is kept.
    """
    new = re.sub(r"^(?:the|a|an)\s+", "", new, flags=re.IGNORECASE).strip()
    if not new or len(new.split()) > 4 or "instead" in prior_text.lower():
        return None
    if re.match(r"^(?:if|when|while|unless|because|once|though|although)\b", new, re.I):
        return None  # "And if she is breastfeeding?": a condition, not a subject
    preposition = re.match(
        r"^(for|in|with|during|after|on|at|to|from)\s+(?:the\s+|a\s+|an\s+)?(.+)$", new, re.I
    )
    if preposition is not None and preposition.group(2).lower() not in _GROUPS:
        # "And to insulin?" after "What does A do to B?": the new object of the same
        # preposition; "And with food?" where none is written: no subject to replace.
        after = re.search(rf"\b{preposition.group(1)}\s+(?:the\s+|a\s+|an\s+)?", prior_text, re.I)
        if after is None:
            return None
        spans = [s for s in _content_spans(prior_text) if s.start == after.end()]
        if not spans:
            return None
        return f"{prior_text[: spans[0].start]}{preposition.group(2)}{prior_text[spans[0].end :]}"
    word = preposition.group(1) if preposition else "in"
    group_asked = preposition.group(2) if preposition else new
    if group_asked.lower() in _GROUPS:
        group = next((w for w in _words(prior_text) if w.lower() in _GROUPS), None)
        if group is not None:
            return re.sub(rf"\b{re.escape(group)}\b", group_asked, prior_text, count=1)
        return f"{prior_text} {word} {group_asked}"
    spans = [s for s in _content_spans(prior_text) if s.text.lower() not in _ASPECTS]
    spans = [s for s in spans if s.text.lower() not in _GROUPS]
    if not spans:
        return None
    headed = _same_head(prior_text, spans, new)
    if headed is not None:
        return headed
    alike = [s for s in spans if _capitalised(s.text) == _capitalised(new)]
    chosen = (alike or spans)[0]
    start = chosen.start
    words = list(_WORD_RE.finditer(chosen.text))
    if not _capitalised(chosen.text) and len(words) > len(new.split()):
        # "affect olanzapine" -> "affect risperidone": a lower-case run ends in its noun.
        start = chosen.start + words[-len(new.split())].start()
    return f"{prior_text[:start]}{new}{prior_text[chosen.end :]}"


def _same_head(prior_text: str, spans: list[_Span], new: str) -> str | None:
    """The earlier question with `new` in place of its phrase ending in the same noun.

    "When did passenger trains stop ...?" + "And the goods trains?" -> "When did goods
    trains stop ...?": the words before the shared noun ("passenger") are replaced, as many
    as `new` has before it, and nothing after it. None when no span holds `new`'s noun.
    """
    new_words = new.split()
    head = new_words[-1].lower().rstrip("s")
    for span in spans:
        words = list(_WORD_RE.finditer(span.text))
        at = [k for k, w in enumerate(words) if w.group().lower().rstrip("s") == head]
        if not at or len(new_words) < 2:
            continue
        first = words[max(0, at[0] - len(new_words) + 1)]
        start, end = span.start + first.start(), span.start + words[at[0]].end()
        return f"{prior_text[:start]}{new}{prior_text[end:]}"
    return None


def _setting(prior_text: str, new: str) -> str:
    """The earlier question's setting ("for a UTI in a woman") that a continuation lacks.

    The words from the first "for/in/with/during/after" following its first named thing, up
    to a relative clause ("who is not pregnant", which the continuation may contradict);
    empty when the continuation already holds them.
    """
    spans = [s for s in _content_spans(prior_text) if s.text.lower() not in _ASPECTS]
    start = spans[0].end if spans else 0
    match = re.search(r"\b(?:for|in|with|during|after|on)\b", prior_text[start:])
    if match is None:
        return ""
    tail = prior_text[start + match.start() :]
    tail = re.split(r"\b(?:who|which|that|whose|where|when)\b|[,;]", tail)[0].strip()
    last = _words(tail)[-1] if _words(tail) else ""
    if _INVERTED_RE.match(prior_text) and prior_text.endswith(tail) and last.islower():
        # "When was St Cuby's church in Brae built": the earlier question's own verb closes
        # it and is no part of its setting.
        tail = tail[: tail.rfind(last)].strip()
    tail_terms = {w.lower() for w in _words(tail) if not _is_function(w)}
    new_terms = {w.lower() for w in _words(new)}
    if not tail_terms or tail_terms <= new_terms:
        return ""
    return tail


def _replace_pronouns(text: str, referent: str, personal: str, action: str = "") -> str:
    """`text` with its pronouns put back to what they point to.

    "it"/"they" is the `referent`, "he"/"she" the `personal` one, a "this"/"that" standing
    alone the `action` an earlier yes/no question asked about (else the referent). Only the
    first referring pronoun's number is the referent's: in "does it still work if they have
    a drink?" "they" are other people.
    """
    expletive_spans = [(m.start(), m.end()) for m in _EXPLETIVE_RE.finditer(text)]
    pieces: list[str] = []
    last = 0
    number = ""
    words = list(_WORD_RE.finditer(text))
    for index, match in enumerate(words):
        word = match.group().lower()
        following = words[index + 1].group().lower() if index + 1 < len(words) else ""
        replacement = None
        if word in _POSSESSIVE:
            replacement = _possessive(referent)
        elif word in ("his", "hers") or (word == "her" and following not in _FUNCTION):
            # No one to point back to: the pronoun stays ("restart her pill").
            replacement = (_possessive(personal) if following else personal) if personal else None
        elif word in _PERSONAL:
            replacement = personal or None
        elif word in _REFERRING:
            if any(start <= match.start() < end for start, end in expletive_spans):
                continue
            previous = words[index - 1].group().lower() if index else ""
            pronoun = _stands_alone(following) or previous in _AUXILIARIES
            if word in ("this", "that", "these", "those") and not pronoun:
                continue  # a determiner ("that year") or a conjunction ("so that")
            plural = "plural" if word in ("they", "them", "these", "those") else "singular"
            if number and plural != number:
                continue
            number = plural
            replacement = action if action and word in ("this", "that") else referent
        if replacement is None:
            continue
        pieces.append(text[last : match.start()])
        pieces.append(replacement)
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _stands_alone(following: str) -> bool:
    """Whether "this"/"that" is a pronoun here: at the end, or before a verb-like word."""
    return following == "" or following in _FUNCTION


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _has_own_subject(text: str) -> bool:
    return any(not _is_function(w) and w.lower() not in _ASPECTS for w in _words(text)[1:])


def _asks_kind(question: str) -> bool:
    """Whether a question asks which thing of a kind ("Which syrup ...?", "What drug ...?")."""
    match = re.match(r"^\s*(?:which|what)\s+([\w-]+)", question, re.IGNORECASE)
    if match is None:
        return False
    word = match.group(1).lower()
    return word not in _AUXILIARIES and word not in _ASPECTS and word not in ("kind", "type")


def _only_aspect(text: str) -> bool:
    """Whether a question names an aspect and nothing it is of ("What dose?", "Side effects?")."""
    words = [w for w in _words(text) if not _is_function(w)]
    return bool(words) and all(w.lower() in _ASPECTS for w in words)


def _referent(prior: PriorTurn, subject: str) -> str:
    """What "it" points back to: a short name the earlier turn answered, else its subject.

    A what/which question's short answer counts also in lower case ("pantoprazole" for
    "Which PPI ...?"): medicines are written so.
    """
    if not _ASKS_THING.match(prior.question) or _defines(prior.question, subject):
        return subject
    answer = _short_name(prior) or _short_thing(prior)
    return answer or _asked_kind(prior.question) or subject


def _defines(question: str, subject: str) -> bool:
    """Whether a question asks what its subject is ("What is a total contact cast?").

    Its answer describes the subject (maybe naming it short, "TCC"): "it" afterwards is
    still the subject.
    """
    match = _DEFINITION_RE.match(question)
    if match is None:
        return False
    thing = re.sub(r"^(?:the|a|an)\s+", "", subject, flags=re.IGNORECASE)
    asked = re.sub(
        r"\s+(?:used|given|taken|prescribed|known|good)\s+for$", "", match.group("thing")
    )
    return asked.lower() == thing.lower()


_DEFINITION_RE = re.compile(
    r"^\s*what(?:['\u2019]s|\s+is|\s+are|\s+was|\s+were)\s+(?:(?:a|an|the)\s+)?"
    r"(?P<thing>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)


def _asked_kind(question: str) -> str:
    """The thing of a kind a question asked for, with its setting, or "".

    "What's the usual tablet for fungal toenails?" -> "the usual tablet for fungal
    toenails": without a short answer, "it" is the thing asked for, not the toenails.
    """
    match = re.match(
        r"^\s*(?:which|what)(?:['\u2019]s|\s+is|\s+are)\s+the\s+(.+?)\s*\??\s*$",
        question,
        re.IGNORECASE,
    )
    if match is None:
        return ""
    phrase = match.group(1)
    if any(w.lower() in _AUXILIARIES for w in _words(phrase)):
        return ""  # "What is the dose Ada takes ...": a clause, no phrase
    if not phrase[:1].islower() or _words(phrase)[0].lower() in _ASPECTS:
        return ""  # "What is the dose of warfarin?": warfarin's dose is of warfarin
    return f"the {phrase}"


def _short_thing(prior: PriorTurn) -> str:
    """A short answer of one to three lower-case words that is no yes/no and no figure."""
    short = prior.short_answer.strip().rstrip(".")
    if prior.abstained or not short or len(short.split()) > 3:
        return ""
    if short.lower() in ("yes", "no") or not re.fullmatch(r"[a-z][a-z' -]*", short):
        return ""
    return short


def _personal_referent(prior: PriorTurn) -> str:
    """Who "he"/"she" is: a short name answered, else a name of two or more words asked about.

    After a who-question without a short answer the names in the question are not the
    person asked for (a work, a place), so there is no referent and the pronoun stays,
    unless it asked who holds a role: "she" after "Who is the senior nurse at Holm?" is
    the senior nurse at Holm.
    """
    identity = _WHO_IS_RE.match(prior.question) or _DOER_RE.match(prior.question)
    if identity:
        # "Who was Ada Corran?" asks about her, "What medal did Ada Corran win?" of what she
        # did: she is the person named, whatever the answer.
        return identity.group(1)
    answer = _short_name(prior)
    if answer and _ASKS_NAME.match(prior.question):
        return answer
    if re.match(r"^\s*(who|whom|whose)\b", prior.question, re.IGNORECASE):
        role = _WHO_ROLE_RE.match(prior.question)
        return role.group("role") if role else ""
    names = [
        s.text
        for s in _content_spans(prior.question)
        if _capitalised(s.text) and len(s.text.split()) >= 2 and not s.text.isupper()
    ]
    return names[0] if names else ""


def _short_name(prior: PriorTurn) -> str:
    # A sentence answer names its span apart ("The Hollow Mere is a novel by Ada Corran."
    # gives "Ada Corran"): that is who "she" is.
    answer = (prior.short_answer or prior.answer).strip().rstrip(".")
    if prior.abstained or not answer or len(answer.split()) > 5 or not answer[:1].isupper():
        return ""
    if answer.lower() in ("yes", "no") or re.search(r"[;:!?]|\.\s", answer):
        return ""
    return answer


def _subject_phrase(question: str, titles: Sequence[str] = ()) -> str:
    """The first entity an earlier question names ("warfarin" in "the dose of warfarin").

    A run of several words is cut to the words the turn's cited titles share, when they
    share any ("metformin" of "Does metformin lower blood sugar?" citing "Metformin").
    """
    spans = _content_spans(question)
    if not spans:
        return ""
    entities = _entities(question, spans)
    chosen = entities[0]
    named_kind = chosen.text[:1].isupper() and not chosen.text.split()[-1][:1].isupper()
    if not (named_kind and re.search(r"\bthe\s+$", question[: chosen.start], re.I)):
        chosen = _titled(chosen, titles)  # "the Velm sheep fair" is whole, titled or not
    text = chosen.text
    # "the tallest tower in Velmark": keep a place the span is "in" or "of", capitalised or
    # named in the cited titles ("the reservoir at hobcarr" citing "Hobcarr Reservoir").
    place = _place_after(question[chosen.end :], titles)
    if place and not chosen.text[:1].isupper():
        text = f"{text} {place}"
    text = _without_closing_verb(question, chosen, text)
    before = question[: chosen.start].rstrip()
    if before.lower().endswith(" the") and not text[:1].isupper():
        text = f"the {text}"
    elif before.endswith(" The"):  # "Who wrote The Season?": the name's own article
        text = f"The {text}"
    return text


def _without_closing_verb(question: str, chosen: _Span, text: str) -> str:
    """`text` without the verb that closes a do-question after its subject.

    "What time does the saturday clinic open?" is about the saturday clinic, not "saturday
    clinic open"; a run of one word, or one that is not the question's end, stays whole.
    """
    words = text.split()
    after_do = re.search(
        r"\b(?:do|does|did)\s+(?:(?:the|a|an)\s+)?$", question[: chosen.start], re.I
    )
    closes = all(
        w.lower() in _TIME_WORDS or w.lower() in _ASPECTS or w.lower() in _ASKED_UNITS
        for w in _words(question[chosen.end :])
    )  # "when do the CST groups start this year?"
    if after_do is None or not closes or len(words) < 2 or not words[-1].islower():
        return text
    return text[: text.rfind(words[-1])].rstrip()


# Words that may follow a do-question's verb without being its object ("this year").
_TIME_WORDS = frozenset("this that these those next last each every on in at".split())


def _entities(question: str, spans: list[_Span]) -> list[_Span]:
    """The spans that may be what a question is about, likeliest first.

    Not an aspect ("dose"), not the kind asked for ("Which medicines does lansoprazole
    stop ...?" is about lansoprazole; "How much water does the reservoir hold?" about the
    reservoir), and in the question itself rather than a lead clause before it ("I've got
    diarrhoea, how much loperamide ...?" is about loperamide).
    """
    entities = [
        s for s in spans if s.text.lower() not in _ASPECTS and not s.text.isdigit()
    ] or spans
    asked = re.search(rf",\s*(?={_QUESTION_START.pattern[1:]})", question, re.IGNORECASE)
    if asked is not None:
        entities = [s for s in entities if s.start >= asked.end()] or entities
    kind = re.search(r"\b(?:which|what|how\s+(?:much|many))\s+", question, re.IGNORECASE)
    measured = re.match(  # "how much water does the reservoir hold": a named subject follows
        r"\s+(?:does|do|did|is|are|was|were|can|will)\s+(?!(?:i|you|we|they|he|she|it)\b)",
        question[entities[0].end :] if entities else "",
        re.IGNORECASE,
    )
    if kind and kind.group().lower().startswith("how") and measured is None:
        kind = None  # "How much Dorvex do we give ...?" is about Dorvex
    if kind and len(entities) > 1 and entities[0].start == kind.end():
        if entities[1].text.lower() not in _GROUPS:  # "How much X does a child take?"
            entities = entities[1:]
    return entities


def _place_after(tail: str, titles: Sequence[str]) -> str:
    """A place the words after a subject put it in ("in Velmark", "at hobcarr"), or ""."""
    opening = re.match(r"\s+(in|of|at|on)\s+", tail)
    if opening is None:
        return ""
    title_words = {w.lower() for title in titles for w in _WORD_RE.findall(title)}
    words: list[str] = []
    end = opening.end()
    for match in _WORD_RE.finditer(tail, opening.end()):
        word = match.group()
        if tail[end : match.start()].strip() or _is_function(word):
            break
        if not (_capitalised(word) or word.lower() in title_words):
            break
        words.append(word)
        end = match.end()
    return f"{opening.group(1)} {' '.join(words)}" if words else ""


def _titled(span: _Span, titles: Sequence[str]) -> _Span:
    """The longest run of `span`'s words that the cited titles hold, or `span` itself."""
    title_words = {w.lower() for title in titles for w in _WORD_RE.findall(title)}
    words = list(_WORD_RE.finditer(span.text))
    best: list[re.Match[str]] = []
    run: list[re.Match[str]] = []
    for word in words:
        run = [*run, word] if word.group().lower() in title_words else []
        if len(run) > len(best):
            best = run
    if len(words) < 2 or not best or all(_capitalised(w.group()) for w in words):
        return span  # a name is whole: "the Quelbury Eel Fair" is no "Quelbury"
    if {words[0].group().lower(), words[-1].group().lower()} <= title_words:
        return span  # the title holds both ends: "long-acting HIV injections" is whole
    if _capitalised(words[0].group()) and best[0] is not words[0]:
        return span  # a name's kind is whole: "the CST groups" are no "groups"
    start, end = span.start + best[0].start(), span.start + best[-1].end()
    return _Span(start, end, span.text[best[0].start() : best[-1].end()])


def _carried(question: str) -> str:
    """Everything an earlier question was about: its first entity to its last named thing."""
    spans = _content_spans(question)
    if not spans:
        return question
    entities = _entities(question, spans)
    return question[entities[0].start : spans[-1].end]


def _content_spans(question: str) -> list[_Span]:
    """Maximal runs of words that are neither function words nor the question's verbs."""
    spans: list[_Span] = []
    current: list[re.Match[str]] = []
    words = list(_WORD_RE.finditer(question))
    for index, match in enumerate(words):
        previous = current[-1].group() if current else ""
        after_who = index == 1 and words[0].group().lower() == "who"  # "Who runs ...?"
        if (after_who and match.group().islower()) or _is_verb_after_pronoun(
            [w.group() for w in words[:index]], match.group()
        ):
            # "How often do you put a new patch on?": "put" is the question's verb.
            if current:
                spans.append(_span(question, current))
                current = []
            continue
        if (
            previous
            and _capitalised(previous) != _capitalised(match.group())
            and not (
                previous.endswith(("'s", "\u2019s"))  # "St John's wort" stays one name
            )
            and not _named_kind(words, index, current)
            and not _acronym_in_run(words, index, current)
        ):
            spans.append(_span(question, current))  # "Corin Ashgrove" | "born"
            current = []
        if _within_phrase(words, index, current):
            current.append(match)  # "the on-road driving assessment": a noun in -ing
            continue
        if _is_function(match.group()) or match.group().lower() in _ASPECTS:
            if current:
                spans.append(_span(question, current))
                current = []
            if match.group().lower() in _ASPECTS:
                spans.append(_span(question, [match]))
            continue
        current.append(match)
    if current:
        spans.append(_span(question, current))
    return spans


def _named_kind(words: list[re.Match[str]], index: int, current: list[re.Match[str]]) -> bool:
    """Whether a lower-case word goes on a one-word name after "the" ("the CST groups").

    "the Saxtonbury outreach clinic" is one thing; "Corin Ashgrove born" (a name of two
    words, or one without "the") is a name and a verb.
    """
    if len(current) != 1 or current[0] is not words[index - 1]:
        return False
    if not words[index].group().islower():
        return False
    before = words[index - 2].group().lower() if index >= 2 else ""
    following = words[index + 1].group() if index + 1 < len(words) else ""
    if _capitalised(following):
        return False  # "the Tour de Roquebrisse": a name with a particle
    return before in ("the", "our", "your", "this", "that")


def _acronym_in_run(words: list[re.Match[str]], index: int, current: list[re.Match[str]]) -> bool:
    """Whether an acronym, or the word after it, goes on a lower-case run ("oral HPV vaccine")."""
    word = words[index].group()
    following = words[index + 1].group() if index + 1 < len(words) else ""
    if _is_acronym(word):
        return bool(current) and current[-1].group().islower() and following.islower()
    return (
        len(current) >= 2
        and _is_acronym(current[-1].group())
        and current[-2].group().islower()
        and word.islower()
    )


def _following_aspect(words: list[re.Match[str]], index: int) -> bool:
    following = words[index + 1].group().lower() if index + 1 < len(words) else ""
    return following in _ASPECTS


def _is_acronym(word: str) -> bool:
    return len(word) >= 2 and word.isupper() and word.isalpha()


def _within_phrase(words: list[re.Match[str]], index: int, current: list[re.Match[str]]) -> bool:
    """Whether a lower-case -ing word names a kind before a noun ("the bottling works").

    It does between two nouns ("home cooking assessment"); after an article an -ed word
    does too ("the extended hours").
    """
    word = words[index].group()
    if not word.islower() or not word.endswith(("ing", "ed")) or word in _FUNCTION:
        return False
    before = words[index - 1].group().lower() if index else ""
    if not current and (before not in ("the", "a", "an") or _following_aspect(words, index)):
        return False  # "the starting dose": "starting" says which dose, an aspect
    if current and word.endswith("ed"):
        return False
    following = words[index + 1].group() if index + 1 < len(words) else ""
    return bool(following) and following.islower() and not _is_function(following)


def _is_verb_after_pronoun(before: list[str], word: str) -> bool:
    """Whether `word` is a verb: lower case after an auxiliary and a pronoun ("do you put").

    An adverb may stand between ("do people usually stay"); a named subject
    ("does metformin lower") makes no verb of what follows it.
    """
    if not word.islower() or len(before) < 2:
        return False
    tail = [w.lower() for w in before[-3:]]
    pronouns = _PRONOUNS | {"people", "someone", "somebody", "anyone", "anybody", "everyone"}
    for k in range(len(tail) - 1):
        if tail[k] in _AUXILIARIES and tail[k + 1] in pronouns:
            return all(w in _ADVERBS for w in tail[k + 2 :])
    return False


_PRONOUNS = frozenset({"i", "you", "we", "they", "he", "she", "it"})
_ADVERBS = frozenset({"usually", "normally", "typically", "still", "also", "just", "ever"})


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _span(question: str, matches: list[re.Match[str]]) -> _Span:
    start, end = matches[0].start(), matches[-1].end()
    return _Span(start, end, question[start:end])


def _is_function(word: str) -> bool:
    lowered = word.lower().strip("'\u2019")
    if lowered in _FUNCTION or re.sub(r"['\u2019]s$", "", lowered) in _FUNCTION:  # "what's"
        return True
    if re.search(r"n['\u2019]t$", lowered):  # "shouldn't", "isn't"
        return True
    if "-" in lowered:  # "long-acting", "once-daily": a compound names a kind
        return False
    if re.sub(r"['\u2019](?:ve|m|d|ll|re)$", "", lowered) in _FUNCTION:  # "I've", "we're"
        return True
    # A lower-case -ing/-ed word is mostly the question's verb ("used", "taking").
    if word.islower() and lowered in _PARTICIPLES:
        return True
    return word.islower() and lowered.endswith(("ing", "ed")) and lowered not in _KEEP


# Past participles not in -ed that close a question after its subject ("Where is X held?").
_PARTICIPLES = frozenset(
    "held built known written begun sold paid kept found given taken seen run".split()
)
# Words ending in -ing/-ed that name things rather than actions.
_KEEP = frozenset(
    {
        "bleeding",
        "breastfeeding",
        "swelling",
        "wedding",
        "building",
        "red",
        "bed",
        "evening",
        "morning",
    }
)


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)
