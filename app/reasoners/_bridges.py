"""Questions that ask about something they only describe: "the engineer of X", "the town where Y".

"When was the engineer of the Tollard Viaduct born?" names no engineer: the first document
(the viaduct's) says who it was, the second (the engineer's own) gives the year. Answering
the question as written stops at the first hop: its best span is often the described thing
itself (the engineer's name) or a figure of the first document (the viaduct's year).

`described_thing` finds the description in the question; `first_hop` is the question that
asks for the described thing ("Which engineer of the Tollard Viaduct?"), and `second_hop`
the question with the description replaced by the name the first hop found ("When was Ada
Pell born?"). The wordings are general English (a relative clause, "of" a name, a participle
with its agent or object, a contact clause "the town X was born in" or "the yard X
founded", a place "at the mouth of" a name), not phrases of any question. The first hop
only has to name the thing: its span, a name its sentences write out, or the title of the
note it cites (`bridge_names`); each is tried until a second hop answers of it, preferring
one that answer calls by the description's head ("the nurse who ..." read in "Ada Pell,
role: practice nurse").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prefrag.reasoners._policy import FROM
from prefrag.reasoners._records import described_row
from prefrag.reasoners._relations import joined_phrases, relation_of, stems
from prefrag.reasoners._text import normalize_answer, split_sentences, term_set, unique
from prefrag.reasoners.base import AnswerDraft

# The head noun of a description: one to three lower-case words after "the" (the last may
# be an abbreviation: "the GP").
_HEAD = r"(?:the|The) ((?:[a-z][\w\-]* ){0,2}?(?:[a-z][\w\-]*|[A-Z]{2,4}s?))"
# A name as questions write it: capitalised words, possibly "the", "of", an apostrophe-s.
_WORD = r"[A-Z][\w\-]*(?:['\u2019]s)?"
_NAME = rf"(?:the )?{_WORD}(?: (?:of |and |de |la |von )?{_WORD})*"
# A role noun a question typed in lower case is read with capitals (`_truecase`: "the
# Podiatrist whose ..." when the notes only write "Lead Podiatrist"), before a relative.
_RELATIVE_HEAD = _HEAD[:-1] + r"|[A-Z][a-z]+(?:er|or|ist|ian|ant|ent))"
_RELATIVE = re.compile(
    rf"\b{_RELATIVE_HEAD} ((?:(?:in|at|on|by|for|from|with|of) )?"
    r"(?:who|whom|that|which|where|whose)) (.+?)(?: (in|on|at|from|for))?$"
)
_OF_NAME = re.compile(rf"\b{_HEAD} of ({_NAME})")
# A place or person named by its relation to a name: "Ilse Varrow's birthplace", "her
# home town" is not (no name to look up), "Ada Pell's home village", "Tom Hale's wife".
_POSSESSED = re.compile(
    rf"\b({_WORD}(?: (?:of |de |la |von )?{_WORD})*?)['\u2019]s? ((?:[a-z][\w\-]* )?[a-z][\w\-]*)"
)
# "home" and "native" name a relation before any place noun ("home village", "native town").
_RELATION_ADJECTIVES = frozenset({"home", "native"})
_PARTICIPLE = re.compile(
    rf"\b{_HEAD} ((?:born|built|founded|written|designed|made|directed|painted|named|based"
    rf"|buried|raised|set) (?:in|by|at|on|near|for|after) {_NAME})"
)
# A question whose main verb is "is/was ... <participle>" ("Where is X located?").
_AUXILIARY_FIRST_RE = re.compile(
    r"^(?:where|when|in (?:which|what) \w+|what year)\s+(?:is|was|are|were)\s+the\b",
    re.IGNORECASE,
)
_MAIN_VERB_RE = re.compile(
    r"\s+(?:located|based|headquartered|situated|found|held|set|built|founded|born|made)$"
)
_ASKED_RE = re.compile(r"\b(?:which|what|whom|how)\b", re.IGNORECASE)
# A question whose main verb comes last after "does/do/did" ("When does the warden who ...
# open?"): the relative clause ends before that verb.
_DO_FIRST_RE = re.compile(
    r"^(?:(?:in|at|on|by|from) )?(?:where|when|why|how(?: \w+)?|(?:what|which)(?: \w+)?)\s+"
    r"(?:does|do|did)\s+the\b",
    re.IGNORECASE,
)
_BE_RE = re.compile(r"\b(?:is|was|are|were|does|do|did|has|have|had)\b")
# A dash or a comma ends a description ("the vet who wrote our leaflet - which day ...").
_CLAUSE_END_RE = re.compile(r"\s+[-\u2013\u2014]\s+|,\s+")
# "the GP treating Ms Corran this month": a present participle with its named object, up
# to the main verb.
_DOING = re.compile(
    rf"\b{_HEAD} ([a-z]+ing {_NAME}(?: (?!(?:is|was|are|were|does|do|did)\b)[\w'\u2019-]+)*)"
)
# "the town Ada Pell was born in": a contact clause of a life event (the name may be
# written in lower case).
_CONTACT = re.compile(
    r"\b(?:the|The) ([a-z][\w-]*) ((?:[A-Za-z][\w'\u2019-]* ){1,3}?)(was|is|were|are)"
    r" (born|buried|raised|baptised|married|educated) (in|on|at|near)\b"
)
# "the village Ada Pell came from", "the co-op Ada Pell founded": a contact clause whose
# subject is a capitalised name and whose verb is a past tense (with its preposition).
_CONTACT_NAMED = re.compile(
    r"\b(?:the|The) ([a-z][\w-]*) ((?:[A-Z][\w'\u2019-]* ){1,3}?)"
    r"((?:came|grew up|moved|lived|settled|worked|studied|died|retired)"
    r" (?:from|in|at|to|on)|founded|built|designed|started|set up|ran|led|wrote|painted"
    r"|owned|opened|restored|left|joined)\b"
)
# "the village at the head of the River Pell": a place by where it lies on a named one.
_PLACED = re.compile(
    rf"\b{_HEAD} ((?:at|on|near|by|beside) the (?:mouth|source|head|foot|top|end|edge|shore"
    rf"|banks?) of {_NAME})"
)
# Words that are never part of a head noun (a preposition ends it, a determiner starts another).
_FUNCTION_WORDS = frozenset(
    "in at on by for from with of to into onto about and or a an the this that these those"
    " his her its their whose which who where whom when".split()
)
# Verbs that end a noun phrase ("the people in the register are buried ...").
_AUXILIARIES = frozenset("is are was were be been has have had do does did".split())
# Head words that are not a thing described (a measure or an aspect of one, asked of it).
_NOT_HEADS = frozenset(
    "most least first last same best worst other one way time number name dose amount"
    " length height size age date year population part end start side rest case birthplace"
    " hometown headquarters voice north south east west banks middle members".split()
)


# A person named by a role ("the engineer / founder / wife of X"): agent nouns and kin.
_ROLE_RE = re.compile(
    r"(?:[a-z]{2,}(?:er|or|ist|ian|ant|ent)|wife|husband|son|daughter|father|mother|brother"
    r"|sister|spouse|widow|heir|king|queen|mayor|chief|head|bishop|abbot|captain|coach)$"
)
# Relations whose value is a figure: asked of the name itself, never a thing to find first.
_MEASURES = frozenset("population length height size age date year number amount".split())
# What a question asking only for the thing's identity adds to its name ("What is the
# name of X?", "Who is X called?").
_IDENTITY_TERMS = term_set("name named called known full identity")


@dataclass(frozen=True)
class Described:
    """A description in a question: its text, head noun and what it says of the thing."""

    text: str
    head: str
    clause: str
    start: int
    end: int
    asks: str = ""


def described_thing(question: str) -> Described | None:
    """The description of an unnamed thing the question asks something of, or None.

    "the doctor who reviewed Ms Ansel's case" (a relative clause), "the engineer of the
    Tollard Viaduct" ("of" a name), "the poet born in Wendle" (a participle with its place or
    agent). A measure or aspect ("the length of the Tollard Viaduct") is what is asked, not
    a thing described.
    """
    text = question.strip().rstrip("?.! ").strip()
    found: list[Described] = []
    for pattern in (_PARTICIPLE, _OF_NAME, _RELATIVE, _DOING, _CONTACT, _CONTACT_NAMED, _PLACED):
        for match in pattern.finditer(text):
            head = match.group(1)
            if re.fullmatch(r"[A-Z][a-z]+", head):
                head = head.lower()  # a role noun read with capitals: "the Podiatrist who"
            head_words = head.split()
            if (
                set(head_words) & (_FUNCTION_WORDS | _AUXILIARIES)
                or {head_words[0], head_words[-1]} & _NOT_HEADS
            ):
                continue
            asks = ""
            if pattern is _RELATIVE:
                pronoun, rest = match.group(2), match.group(3)
                cut = _CLAUSE_END_RE.search(rest)
                if cut:
                    rest = rest[: cut.start()]
                asked = _ASKED_RE.search(rest)
                if asked and match.start() == 0 and len(rest[: asked.start()].split()) >= 3:
                    # "The warden who keeps the key opens which day?": the description is
                    # the question's subject; its clause ends before the main verb.
                    rest = " ".join(rest[: asked.start()].split()[:-1])
                elif asked or (" " in pronoun and rest[:1].islower()):
                    # "the banks of which river", "the pilot who had how many wins": the
                    # description holds what is asked, it is not a thing to find first.
                    continue
                elif _DO_FIRST_RE.match(text) and not cut and len(rest.split()) >= 3:
                    # "When does the warden who keeps the chapel key open?", "... who
                    # taught at Pell School get married?": the main verb after a name.
                    tail_words = re.search(
                        r"\b[A-Z][\w'\u2019-]*( (?!(?:in|at|on|of|and|or|the|to|for|from|with"
                        r"|by)\b)[a-z]+\b)",
                        rest,
                    )
                    rest = rest[: tail_words.start(1)] if tail_words else rest.rsplit(" ", 1)[0]
                main = [m for m in _BE_RE.finditer(rest) if m.start() > 0]
                own_verb = pronoun in ("who", "that", "which") and not _BE_RE.match(rest)
                if (
                    match.start() == 0
                    and main
                    and (own_verb or _BE_RE.match(rest) or len(main) > 1)
                ):
                    # "The nurse whose clinic is on Fridays is on leave", "The GP who leads
                    # on X does a round at ...": the main clause's verb, said of the thing
                    # described, ends the description (after the clause's own verb).
                    cut_at = main[0] if own_verb or _BE_RE.match(rest) else main[1]
                    rest = rest[: cut_at.start()].rstrip()
                end = match.start(3) + len(rest)
                tail = _MAIN_VERB_RE.search(rest)
                if tail and _AUXILIARY_FIRST_RE.match(text):
                    # "Where is the company that she worked for headquartered?": the last
                    # participle is the main clause's, asked of the company.
                    rest, end = rest[: tail.start()], match.start(3) + tail.start()
                clause = rest if pronoun in ("who", "that", "which") else f"{pronoun} {rest}"
            elif pattern is _DOING:
                clause, end = match.group(2), match.end(2)
                asks = f"Which {head} is {clause}?"
            elif pattern is _CONTACT:
                aux, life, where = match.group(3), match.group(4), match.group(5)
                person = match.group(2).strip()
                if not set(person.lower().split()) - _FUNCTION_WORDS:
                    continue
                clause, end = f"{person} {aux} {life} {where}", match.end(5)
                asks = f"Which {head} {aux} {person} {life} {where}?"
            elif pattern is _CONTACT_NAMED:
                person, verb = match.group(2).strip(), match.group(3)
                clause, end = f"{person} {verb}", match.end(3)
                asks = f"Which {head} {person} {verb}?"
            elif pattern is _PLACED:
                clause, end = match.group(2), match.end(2)
            elif pattern is _OF_NAME:
                if not set(match.group(2).lower().split()) - _FUNCTION_WORDS:
                    continue
                if not _ROLE_RE.search(head_words[-1]):
                    # "the chapel of Pell Mere" is a part of the named thing, asked of
                    # directly; "the engineer of X" is a person to find first.
                    continue
                clause, end = f"of {match.group(2)}", match.end(2)
            else:
                clause, end = match.group(2), match.end(2)
            described = text[match.start() : end]
            found.append(Described(described, head, clause, match.start(), end, asks))
    found.extend(_possessed(text))
    if not found:
        return None
    # The outermost description the question asks about: the earliest, then the longest.
    return min(found, key=lambda d: (d.start, -(d.end - d.start)))


def _possessed(text: str) -> list[Described]:
    """Things named by a relation to a name ("Ilse Varrow's birthplace", "Ada Pell's wife").

    The relation is a word `_relations` knows ("birthplace", "wife"), a two-word name of
    one ("home town") or "home" / "native" before a place noun ("home village"); its first
    hop asks it of the name ("What is Ilse Varrow's birthplace?"). A measure ("Corrick's
    population") is asked of the name itself.
    """
    found = []
    for match in _POSSESSED.finditer(text):
        owner, following = match.group(1), match.group(2).split()
        pair = " ".join(following)
        if len(following) == 2 and (
            " " not in joined_phrases(pair) or following[0] in _RELATION_ADJECTIVES
        ):
            head = pair
        elif relation_of(stems(following[0])[0]):
            head = following[0]
        else:
            continue
        if head.split()[-1] in _MEASURES:
            continue  # "Threlsby's population" is what is asked of Threlsby, not a thing
        end = match.start(2) + len(head)
        # "the botanist Castagnet's home village": the owner's title goes with the owner.
        titled = re.search(r"\b(?:the|The) [a-z][\w-]* $", text[: match.start()])
        start = titled.start() if titled else match.start()
        described_text = text[start:end]
        who = "Who" if _ROLE_RE.search(head.split()[-1]) else "What"
        asks = f"{who} is {described_text}?"
        found.append(Described(described_text, head, f"of {owner}", start, end, asks))
    return found


def first_hop(described: Described) -> str:
    """The question asking which thing the description means ("Which engineer of X?")."""
    return described.asks or f"Which {described.head} {described.clause}?"


def second_hop(question: str, described: Described, name: str) -> str:
    """The question with its description replaced by the thing's name.

    Empty when that question asks nothing of the thing ("What is the name of the man who
    ...?" asks for the thing itself, which the first hop gives).
    """
    text = question.strip()
    asked = f"{text[: described.start]}{name}{text[described.end :]}"
    return asked if term_set(asked) - term_set(name) - _IDENTITY_TERMS else ""


def found_name(draft: AnswerDraft, question: str) -> str:
    """The name a first-hop answer gives (its short answer or bare span), or ""."""
    if draft.abstained:
        return ""
    name = (draft.short_answer or draft.answer).strip().rstrip(".")
    # A short answer picked as the span may be written in lower case ("marlow quay" for a
    # question written so, a medicine); a bare answer is a name only when capitalised.
    named = any(ch.isupper() for ch in name) or (
        draft.short_answer.strip() != "" and name.lower() not in ("yes", "no")
    )
    if not name or len(name.split()) > 6 or not named or any(ch.isdigit() for ch in name):
        return ""
    if term_set(name) <= term_set(question):
        return ""
    # A name sharing a name word of the question ("Bastien Castagnet" for "Castagnet's home
    # village") is the one the description starts from, not the thing it describes.
    named_words = term_set(" ".join(re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][\w'\u2019-]+", question)))
    if term_set(name) & named_words:
        return ""
    return name


# A person's or place's name inside a sentence: a title and a capitalised word, or two or
# more capitalised words ("Dr Hosking", "Ada Pell", "St Cuby's Church").
_SENTENCE_NAME_RE = re.compile(
    r"\b(?:(?:Dr|Mr|Mrs|Ms|Miss|Sir|St|Lady|Lord)\.? [A-Z][\w'\u2019-]+"
    r"(?: [A-Z][\w'\u2019-]+)*"
    r"|[A-Z][a-z][\w'\u2019-]*(?: (?:of |de |la |von )?[A-Z][\w'\u2019-]+)+)"
)


_NOT_NAME_WORDS = _FUNCTION_WORDS | frozenset("he she it they we his him hers its".split())


def bridge_names(hop: AnswerDraft, question: str, *, titles: Sequence[str] = ()) -> list[str]:
    """Names a first-hop answer may give for the described thing, best first (at most three).

    Its short answer or bare span when that is a name (`found_name`), then the names its
    sentences write out that the question does not give: a first hop
    answered with sentences ("... so Ada Pell referred her to the clinic.") or
    with a span that is no name ("Survey" out of "His Survey of the coast") still holds
    the name, or cites the thing's own note (`titles`: the cited notes' titles, "Tom
    Hale", when his note says "His survey of ...").
    """
    if hop.abstained:
        return []
    names = [found_name(hop, question)]
    asked = term_set(question)
    names += [t for t in titles if len(t.split()) <= 4 and not re.search(r"[:;,()]", t)]
    read = f"{hop.answer} {hop.rationale.removeprefix(FROM)}"
    for match in _SENTENCE_NAME_RE.finditer(read):
        words = re.sub(r"['\u2019]s$", "", match.group()).split()
        # A name ends before a capitalised pronoun or article ("Pell He ...").
        cut = next((k for k, w in enumerate(words) if k and w.lower() in _NOT_NAME_WORDS), None)
        names.append(" ".join(words[:cut]))
    kept = [n for n in unique(names) if n and term_set(n) and not term_set(n) <= asked]
    return kept[:3]


def head_names(hop: AnswerDraft, head: str, question: str) -> list[str]:
    """Names the first hop's sentences write as the description's head calls it.

    "... a hamlet in the parish of Tully ..." for "the parish where ...": the name after
    "the parish of", or before "parish" ("Tully parish"); none the question gives.
    """
    if hop.abstained or not head:
        return []
    read = f"{hop.answer} {hop.rationale.removeprefix(FROM)}"
    noun = re.escape(head.split()[-1])
    name = r"([A-Z][\w'\u2019-]+(?: [A-Z][\w'\u2019-]+)*)"
    found = re.findall(rf"\b{noun} of (?:the )?{name}", read)
    found += re.findall(rf"\b{name} {noun}\b", read)
    asked = term_set(question)
    return [n for n in unique(found) if term_set(n) and not term_set(n) <= asked][:2]


def stops_at(draft: AnswerDraft, name: str) -> bool:
    """Whether an answer is the first hop's name itself (it stopped at the bridge)."""
    given = normalize_answer(draft.short_answer or draft.answer)
    key = normalize_answer(name)
    return bool(key) and (given == key or (bool(given) and given in key))


def through_described(
    question: str,
    draft: AnswerDraft,
    answer: Callable[[str], AnswerDraft],
    titled: Callable[[AnswerDraft, str], bool] | None = None,
    identify: Callable[[str], AnswerDraft] | None = None,
    titles: Callable[[AnswerDraft], list[str]] | None = None,
    records: Callable[[], Sequence[tuple[str, Sequence[str]]]] | None = None,
    abstain: Callable[[str], AnswerDraft] | None = None,
) -> tuple[AnswerDraft, str]:
    """The answer read in the described thing's own evidence, when the draft stopped short.

    When the question describes what it asks about (`described_thing`), the first hop asks
    which thing that is and the second asks the question of it by name. The second hop's
    answer replaces a draft that abstained or answered with the thing itself, citing both
    hops' documents; otherwise the draft stands. `answer` answers a question on the same
    evidence (the reasoner's policy); `identify` answers the first hop (by default `answer`:
    the reasoner gives it a lower floor, as it only has to name the thing); `titles` gives
    the titles of the notes a draft cites. A draft that stopped at the thing while nothing read
    beyond it says what is asked of it stands (an abstention stays one).

    The first hop may give several names (`bridge_names`): each is tried in turn, and the
    first whose second hop says what is asked of it *as the described kind* (its answer
    names the description's head: "nurse" in "Ada Pell, role: practice nurse")
    wins, else the first whose second hop answers at all. A table row the description picks
    out (`_records.described_row` over the held tables' rows `records` gives) gives its key as
    the first name to try, then the names the first hop writes as the head calls them
    (`head_names`: "the parish of Tully"). Returned with the second hop's question ("" when
    the draft stands).

    When the thing was identified (the row's key, a head's name, the first hop's own) but no
    second hop says what is asked of it, a draft citing only the row's table, or neither naming
    the thing nor citing its own note, answers from the first document (or of another
    thing): `abstain` gives the abstention that replaces it. A draft of sentences that the
    question asked of the identified thing by name answers alike is returned with that
    question (`_confirmed`), so its confidence is judged on the question its sentences cover.
    """
    described = described_thing(question)
    if described is None or _same_question(first_hop(described), question):
        return draft, ""
    hop = (identify or answer)(first_hop(described))
    found: tuple[AnswerDraft, str] | None = None
    # A draft of whole sentences gives way to a name read out of the first hop's sentences
    # only when the second hop calls it by the head; cited titles are tried only for a
    # draft that abstained.
    cited = titles(hop) if titles and draft.abstained else []
    own = found_name(hop, question)
    apposed = head_names(hop, described.head, question)
    row, row_doc = described_row(records(), described.clause, question) if records else ("", "")
    for name in unique([row, *apposed, *bridge_names(hop, question, titles=cited)]):
        if not name:
            continue
        strong = name in (own, row, *apposed)
        resolved = _second_hop(question, described, draft, hop, name, answer, titled, strong)
        if resolved is None:
            continue
        if _says_head(resolved[0], described.head, name):
            return resolved
        if draft.abstained or strong:
            found = found or resolved
    if found:
        return found
    identified = [n for n in (row, *apposed, own) if n]
    confirmed = _confirmed(question, described, draft, hop, identified, answer)
    if confirmed is not None:
        return confirmed
    # A question asking only for the thing itself ("What is the test called that ...?") is
    # answered by naming it, in whatever words.
    asks_of_it = bool(identified) and bool(second_hop(question, described, identified[0]))
    if abstain is not None and asks_of_it and not draft.abstained:
        # A draft from the table alone (its row) or naming no thing identified stops short.
        only_table = bool(row_doc) and set(draft.cited_ids) <= {row_doc}
        own_note = any(titled and titled(draft, n) for n in identified)
        # The first hop's own span may be a wrong guess: only a row's key or a name the
        # head calls must be named.
        sure = [n for n in (row, *apposed) if n]
        said = own_note or not sure or any(_names(draft, n) for n in sure)
        if only_table or not said or (_bare(draft) and _restates(draft, hop) and not own_note):
            return abstain(f"nothing retrieved says what is asked of {identified[0]}"), ""
    return draft, ""


def _second_hop(
    question: str,
    described: Described,
    draft: AnswerDraft,
    hop: AnswerDraft,
    name: str,
    answer: Callable[[str], AnswerDraft],
    titled: Callable[[AnswerDraft, str], bool] | None,
    identified: bool = False,
) -> tuple[AnswerDraft, str] | None:
    """The question asked of `name` in place of its description, when that answers better.

    The second hop must name the thing, or (for a thing `identified` as the description's:
    a row's key, a name the head calls, the first hop's own) cite its own note.
    """
    sentences = not draft.abstained and not _bare(draft)
    if sentences and not (_names(draft, name) and not (titled and titled(draft, name))):
        # Sentences stop at the thing when they name it but cite no note of its own.
        return None
    if not (draft.abstained or sentences or stops_at(draft, name)):
        return None
    asked = second_hop(question, described, name)
    if not asked:
        return None
    second = answer(asked)
    if (
        second.abstained
        or stops_at(second, name)
        or not (
            _names(second, name) or (identified and titled is not None and titled(second, name))
        )
        or (sentences and not set(second.cited_ids) - set(draft.cited_ids))
    ):
        # Nothing read beyond the first hop says what is asked of the thing it found.
        return None
    resolved = second.model_copy(
        update={
            "cited_ids": unique([*hop.cited_ids, *second.cited_ids]),
            "rationale": f"{described.text} is {name}. {second.rationale}".strip(),
        }
    )
    return resolved, asked


def _confirmed(
    question: str,
    described: Described,
    draft: AnswerDraft,
    hop: AnswerDraft,
    identified: Sequence[str],
    answer: Callable[[str], AnswerDraft],
) -> tuple[AnswerDraft, str] | None:
    """The draft, judged as the question asked of the thing by name, when that agrees.

    "Where can you see the paintings of the artist born in X?" answered by a sentence of
    the artist's note: asked of the artist by name, the same sentences answer, and that
    question (which they cover) is the one their confidence is judged by; the answer cites
    the first hop's note too. None for a bare span, when nothing was identified, or when
    the two disagree.
    """
    if draft.abstained or hop.abstained or _bare(draft):
        # A bare span keeps the question's own confidence: both hops read it from the
        # same sentence, which confirms no more than one reading ("1390" for "which month").
        return None
    given = normalize_answer(draft.short_answer or draft.answer)
    for name in identified[:1]:
        asked = second_hop(question, described, name)
        if not asked or stops_at(draft, name):
            continue
        second = answer(asked)
        if second.abstained or normalize_answer(second.short_answer or second.answer) != given:
            continue
        cited = unique([*draft.cited_ids, *hop.cited_ids])
        return draft.model_copy(update={"cited_ids": cited}), asked
    return None


def _restates(draft: AnswerDraft, hop: AnswerDraft) -> bool:
    """Whether a draft is only read in the sentences the first hop was read in.

    A draft's sentences are its answer, or for a bare span the sentence it was read from.
    """
    if hop.abstained:
        return False
    read = normalize_answer(f"{hop.answer} {hop.rationale.removeprefix(FROM)}")
    source = draft.rationale.removeprefix(FROM) if _bare(draft) else draft.answer
    if _bare(draft) and not draft.rationale.startswith(FROM):
        return False
    said = [normalize_answer(s) for s in split_sentences(source)]
    return bool(said) and all(s and s in read for s in said)


def _says_head(draft: AnswerDraft, head: str, name: str) -> bool:
    """Whether the answer calls the name by the description's head ("nurse", "engineer")."""
    head_stems = stems(head.split()[-1])
    said = stems(f"{draft.answer} {draft.rationale}".replace(name, " "))
    return bool(head_stems) and any(w.startswith(head_stems[0][:5]) for w in said)


def _names(draft: AnswerDraft, name: str) -> bool:
    key = normalize_answer(name)
    return f" {key} " in f" {normalize_answer(f'{draft.answer} {draft.rationale}')} "


def _same_question(first: str, question: str) -> bool:
    return normalize_answer(first) == normalize_answer(question)


def _bare(draft: AnswerDraft) -> bool:
    return len(draft.answer.split()) <= 6


__all__ = [
    "Described",
    "bridge_names",
    "described_thing",
    "first_hop",
    "found_name",
    "head_names",
    "second_hop",
    "stops_at",
    "through_described",
]
