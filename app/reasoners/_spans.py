"""Reading a short answer span out of the sentences that answer: which name, date or figure.

A span question ("Which road ...?", "How many ...?") answered with whole sentences still has
a short answer when the sentences can only mean one span (`sentence_span`, `bridged_name`);
`span_text` says whether a candidate may answer at all (never the answering document's own
title, a label, a unit's letter or a bare number) and in what form (a figure with its range
and unit).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prefrag.reasoners._evidence import (
    Candidate,
    Evidence,
    ScoredSentence,
    Sentence,
    answer_candidates,
    asked_end,
    clean_title,
    matched_positions,
    same_name,
    titled_documents,
)
from prefrag.reasoners._name_types import (
    ORGANISATION_NOUNS,
    PLACE_NOUNS,
    may_name_person,
    names_place_or_day,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import asks_quantity, counts_asked, figure, is_label_line
from prefrag.reasoners._quantities import (
    FIGURE_QUALIFIER_PATTERN,
    asked_quantity,
    figure_answers,
    number_position,
    offset_not_length,
)
from prefrag.reasoners._shapes import duration_span
from prefrag.reasoners._support import support_ids
from prefrag.reasoners._text import (
    QuestionShape,
    Span,
    candidate_spans,
    normalize_answer,
    term_set,
    unique,
)
from prefrag.reasoners._verdicts import is_demonym, nationalities

_WORD_RE = re.compile(r"[^\W_]+")

EXACT_KINDS: dict[str, tuple[str, ...]] = {
    "name": ("name", "quote"),
    "date": ("date", "year"),
    "number": ("number",),
    "any": ("name", "quote"),
}


def sentence_span(
    shape: QuestionShape,
    evidence: Evidence,
    scored: ScoredSentence,
    asked: frozenset[str],
    rejected: frozenset[str] = frozenset(),
    *,
    strict: bool = True,
    answering: frozenset[int] = frozenset(),
) -> tuple[str, list[str]] | None:
    """The span of the asked type one sentence gives, and the documents to cite, or None.

    The candidates are the sentence's spans of the asked type that the question does not
    already name and that may answer (`span_text`; a nationality adjective only, and only,
    when a nationality is asked). It is the candidate when there is one, or the one scoring
    `PARAMS.span_lead` times the runner-up (by closeness to the question's words). Unless
    `strict`, also: the one name among them that titles another document the answer stands
    on (`answering`, document indexes: the two-document case, "a song by the musician Ada
    Corran" and a sentence of the document about Ada Corran; both are cited), else the one
    clearly nearest the question's asked words (`nearest_to`). Several names with nothing to
    tell them apart give None: the sentence answers, whole.
    """
    kinds = EXACT_KINDS.get(shape.answer_type, ())
    sentence = scored.sentence
    nationality = asks_nationality(shape)
    found = [
        (c, text)
        for c in answer_candidates(shape, evidence, [scored], top=1, exclude=rejected)
        if c.kind in kinds and sentence.text.find(c.text) >= 0
        if (bool(nationalities(c.text)) if nationality else not is_demonym(c.text))
        if (text := span_text(shape, evidence, c)) is not None
    ]
    if not found:
        return None
    cited = support_ids(evidence, scored)
    if len({normalize_answer(c.text) for c, _ in found}) == 1:
        return found[0][1], cited
    if not strict:
        titled = titled_in(shape, evidence, sentence, answering, [c for c, _ in found])
        if len(titled) == 1:
            text, doc = titled[0]
            return text, unique([*cited, evidence.ids[doc]])
        nearest = nearest_to(sentence.text, [c for c, _ in found], asked)
        if nearest is not None:
            return next(text for c, text in found if c is nearest), cited
    if found[0][0].score >= PARAMS.span_lead * found[1][0].score:
        return found[0][1], cited
    return None


def titled_in(
    shape: QuestionShape,
    evidence: Evidence,
    sentence: Sentence,
    answering: frozenset[int],
    found: Sequence[Candidate],
) -> list[tuple[str, int]]:
    """The names in `sentence` that title another of the `answering` documents, one each.

    A candidate span naming such a document, or the document's title written out in the
    sentence ("by Ada Corran and Tom Vell" names "Ada Corran"); not a name the question
    gives. Only for a question asking for a name or a thing.
    """
    if shape.answer_type not in ("name", "any"):
        return []
    question = normalize_answer(shape.text)
    named: dict[str, tuple[str, int]] = {}
    for candidate in found:
        if candidate.kind not in ("name", "quote"):
            continue
        for doc in titled_documents(evidence, candidate.text, sentence.doc):
            if doc in answering:
                named.setdefault(normalize_answer(candidate.text), (candidate.text, doc))
    for doc in sorted(answering - {sentence.doc}):
        title = clean_title(evidence.titles[doc])
        key = normalize_answer(title)
        if not key or key in question or any(same_name(title, text) for text, _ in named.values()):
            continue
        if re.search(rf"(?<![\w-]){re.escape(title)}(?![\w-])", sentence.text):
            named[key] = (title, doc)
    return list(named.values())


def bridged_name(
    shape: QuestionShape,
    evidence: Evidence,
    leading: Sentence,
    answering: Sentence,
    rejected: frozenset[str] = frozenset(),
) -> tuple[str, list[str]] | None:
    """The name in `leading` that titles `answering`'s document, when it is what is asked.

    "The album was recorded by Ada Corran and Tom Vell." (one document) leads to "Ada Corran
    was an English sound engineer and chemist." (her own document): for "Which sound
    engineer recorded the album?" the answer is her name, read out of the first sentence and
    cited with both documents. The name must be of the asked kind: her document describes
    her with a word of the kind the question names ("was an English sound engineer" for
    "which sound engineer"; `asked_category_words`, `describes`); a question naming no kind
    must ask for a name ("who"). It is not when the answering sentence gives another span of
    the asked type ("She later served as Chief Warden": the question asks for something she
    held, not for her); her name written otherwise ("Ada M. Corran") and nationality
    adjectives do not count as another span.
    """
    if shape.answer_type not in ("name", "any") or leading.doc == answering.doc:
        return None
    name = clean_title(evidence.titles[answering.doc])
    written = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", leading.text) if name else None
    if written is None or normalize_answer(name) in normalize_answer(shape.text):
        return None
    category = asked_category_words(shape.text)
    if not category and shape.answer_type != "name":
        return None  # "what" with no kind named: the name may only lead to the answer
    document = " ".join(s.text for s in evidence.sentences if s.doc == answering.doc)
    if category and not describes(document, category):
        return None  # her note never says she is what is asked ("which university")
    title_terms = evidence.title_terms[answering.doc]
    nationality = asks_nationality(shape)
    for other in _spans_of(shape, evidence, answering, rejected):
        if term_set(other.text) & title_terms or (is_demonym(other.text) and not nationality):
            continue
        if span_text(shape, evidence, other) is not None:
            return None
    return name, unique([evidence.ids[leading.doc], evidence.ids[answering.doc]])


_KIND_RE = re.compile(r"\b(?i:which|what|this)\s+([^?.;:]*)")
_KIND_STOP = frozenset(
    "is was are were be been has had have does did do who whom that which whose where when"
    " in on at by for from of with to as or the a an its his her their than about into".split()
)
_TRANSPARENT_RE = re.compile(r"\b(?:sort|kind|type|name)s? of (?:the |an? )?", re.IGNORECASE)


def asked_category_words(question: str) -> frozenset[str]:
    """The words of the kind a question asks for, after "which", "what" or "this".

    "Which English sound engineer and chemist recorded ..." -> {sound, engineer, chemist,
    recorded}; "what sort of products" -> {products}; "Which Halbury Prize of Letters
    poet ..." -> {poet}. Capitalised words (names, nationalities) are not a kind.
    """
    match = _KIND_RE.search(question)
    if match is None:
        return frozenset()
    phrase = _TRANSPARENT_RE.sub("", match.group(1))
    words: set[str] = set()
    for word in re.findall(r"[\w'-]+", phrase)[:8]:
        lowered = word.lower()
        if lowered == "and":
            continue
        if lowered in _KIND_STOP:
            if words:
                break
            continue
        if word[:1].islower() and len(word) > 2:
            # "singers" is said "a singer-songwriter": the plural's stem matches both.
            words.add(lowered[:-1] if lowered.endswith("s") and len(lowered) > 4 else lowered)
    return frozenset(words)


def described_subject(
    shape: QuestionShape, evidence: Evidence, docs: Sequence[int]
) -> tuple[str, int] | None:
    """The title of the one document among `docs` that describes its subject as asked.

    "Which Irish politician ...?" answered from the document titled "Ada Corran" whose lead
    says "Ada Mary Corran (born 1970) is an Irish politician ...": the answer is the subject
    of that document, its title, not a span of its sentences. None when the question names no
    kind, names the title itself, or more than one document qualifies.
    """
    if shape.answer_type not in ("name", "any"):
        return None
    category = asked_kind(shape.text)  # "Who wrote this song?": no kind is asked
    if not category:
        return None
    question = normalize_answer(shape.text)
    question_terms = term_set(shape.text)
    found: dict[str, tuple[str, int]] = {}
    for doc in docs:
        title = clean_title(evidence.titles[doc])
        key = normalize_answer(title)
        if not key or key in question or evidence.title_terms[doc] <= question_terms:
            continue
        if is_a(_lead(evidence, doc), category):
            found.setdefault(key, (title, doc))
    return next(iter(found.values())) if len(found) == 1 else None


_ASKS_KIND_RE = re.compile(
    r"\b(?:which|what)\s+(?:(?:is|was) the name of (?:the |an? )?)?"
    r"(?!(?:is|was|are|were|did|does|do)\b)\w",
    re.I,
)
_OTHER_WH_RE = re.compile(r"^\W*(?:who|whom|whose|when|where|why|how)\b", re.I)
_AFTER_HEAD = (
    r"(?:[a-z]+(?:ed|ing)|and|or|but|who|whom|whose|that|which|based|known|best|about|by|from"
    r"|in|of|for|with|on|at|to|as|since|until|between|during|founded|set|made|created)"
)
_IS_A_GAP = r"(?:(?!\b(?:of|in|at|on|for|from|by|with|to|into|and|who|which|that)\b)[^.;:(])"


def asked_kind(question: str) -> frozenset[str]:
    """The kind a "which/what <kind>" question asks for, without its verbs; else nothing."""
    if _OTHER_WH_RE.match(question) or not _ASKS_KIND_RE.search(question):
        return frozenset()
    return frozenset(
        w
        for w in asked_category_words(re.sub(r"\bthis\b", "the", question, flags=re.I))
        if not w.endswith("ed")  # "which series featured ...": a verb, not the kind
    )


# The answer type a question asks for, from its wh-word and the head noun of "which/what
# <noun>": a bare span answers only when it is of that type (`span_fits`).
PERSON, PLACE, ORGANISATION, NAME = "person", "place", "organisation", "name"
DATE, TIME, QUANTITY, CONTACT = "date", "time", "quantity", "contact"
MEDICINE, GROUP, REASON, PROCEDURE, THING = "medicine", "group", "reason", "procedure", "thing"
# Types a capitalised name answers; a figure, a date or a name answers none of the others
# (`THING`, a kind the reasoner cannot tell, takes a name of the asked kind only).
_NAMED = frozenset({PERSON, PLACE, ORGANISATION, NAME})
_HEAD_TYPES: tuple[tuple[str, str], ...] = (
    (
        MEDICINE,
        r"medicines?|medications?|drugs?|antibiotics?|vaccines?|vaccinations?|tablets?|pills?"
        r"|painkillers?|treatments?|ppis?|antidepressants?|statins?|inhibitors?|inducers?"
        r"|creams?|ointments?|inhalers?|injections?|jabs?|anticoagulants?|antihistamines?"
        r"|steroids?|therapy|therapies|prescriptions?",
    ),
    (
        PERSON,
        r"man|woman|men|women|person|people|doctor|nurse|gp|pharmacist|engineer|architect"
        r"|writer|author|novelist|poet|painter|artist|singer|musician|actor|actress|director"
        r"|politician|mayor|king|queen|founder|designer|builder|player|composer|minister",
    ),
    (PLACE, PLACE_NOUNS),
    (ORGANISATION, ORGANISATION_NOUNS),
    (TIME, r"days?|weekdays?|times?|hours?|evenings?|mornings?|afternoons?"),
)
_REASON_RE = re.compile(r"\bwhy\b|\bwhat (?:is|was) the reason\b|\bhow come\b|\bexplain\b")
_PROCEDURE_RE = re.compile(
    r"\bhow (?:should|do|does|did|can|could|must|is|are|to)\b"
    r"(?! (?:many|much|long|old|often|soon)\b)"
    r"|\bwhat (?:should|can|must|could) (?:i|we|you|they|he|she|be)\b|\bwhat to do\b"
    r"|\bwhat happens\b|\bwhat (?:do|does|did) (?:\w+ ){1,3}do\b"
    r"|^\W*(?:and |but |what |so )?(?:if|after that|then what|what about if)\b"
    r"(?!.*\b(?:who|when|where|which|how many)\b)"
)
_CONTACT_RE = re.compile(
    r"\b(?:phone|telephone) (?:number|line)\b|\b(?:direct|phone) line\b|\be-?mail\b"
    r"|\bcontact details\b|\bwhat number\b(?! of)"
    r"|\bnumber (?:do|does|should|can|to) \w+ (?:ring|call|phone|text)\b"
)
_NAME_RE = re.compile(r"\b(?:called|named|name of|the name)\b")
_GROUP_RE = re.compile(
    r"^\W*(?:and )?who (?:can|should|could|must|may|might|needs?|gets?|is eligible|are eligible"
    r"|qualif\w*|is offered|are offered|is at risk|are at risk)\b"
)
_WHEN_RE = re.compile(
    r"^\W*(?:and |so |but )?when\b|\b(?:what|which) (?:year|date|decade|century|month)\b"
)
_TIME_RE = re.compile(r"\bwhat time\b|\b(?:what|which) days?\b|\bwhat hours\b|\bopening hours\b")
_HOW_MUCH_RE = re.compile(
    r"\bhow (?:many|much|long|old|tall|high|far|big|large|deep|wide|heavy|often|soon)\b"
)
_MEASURE = (
    r"(?:size|area|population|dose|dosage|weight|length|height|depth|half[- ]life|max|maximum"
    r"|minimum|target|level|rate|temperature|reading|score|limit|most \w+ (?:that|can|may))"
)
# A measured noun heads the question: "What is the usual dose ...", "At what potassium
# level ...", or a question with no wh-word at all ("population of Tarnby?").
_MEASURE_HEAD_RE = re.compile(
    rf"^\W*(?:and |so |at |to |by |from )?(?:what|which)(?:'s|\s+is|\s+was|\s+are|\s+were)?"
    rf"\s+(?:(?:the|its|their|a|an)\s+)?(?:[\w'-]+\s+){{0,4}}?{_MEASURE}\b"
    rf"|^(?!.*\b(?:who|whom|whose|what|which|where|when|why|how)\b).*\b{_MEASURE}\b"
)


def asked_type(shape: QuestionShape) -> str:
    """The type of answer a question asks for (the module's type names), from its wording.

    "why" asks for a reason and "how should / what should I / what happens" for a procedure
    (both answered with sentences); "who can / who should" for a group of people, described;
    "who" otherwise a person, "where" a place, "when" a date; "what number do we ring" a
    contact; "how tall / how many / what dose / population" a quantity; "which/what <noun>"
    the type of its head noun (a medicine, a person, a place, an organisation, days or times),
    else `THING`: a kind of thing the reasoner cannot type (its name must be of the kind).
    """
    lowered = shape.text.lower()
    if _REASON_RE.search(lowered):
        return REASON
    if _CONTACT_RE.search(lowered):
        return CONTACT
    if (
        shape.answer_type == "number"
        or _HOW_MUCH_RE.search(lowered)
        or _MEASURE_HEAD_RE.search(lowered)
    ):
        return QUANTITY
    if _TIME_RE.search(lowered):
        return TIME
    if shape.answer_type == "date" or _WHEN_RE.search(lowered):
        return DATE
    if _PROCEDURE_RE.search(lowered):
        return PROCEDURE
    if _GROUP_RE.search(lowered):
        return GROUP
    if re.search(r"^\W*(?:and )?(?:who|whom|whose)\b", lowered):
        return PERSON
    if re.search(r"^\W*(?:and )?where\b", lowered):
        return PLACE
    if _NAME_RE.search(lowered):
        return NAME
    head = asked_category_words(shape.text)
    for kind, nouns in _HEAD_TYPES:
        if any(re.fullmatch(nouns, word) for word in head):
            return kind
    if shape.answer_type == "name":
        return NAME
    return THING


_MONTH_OR_DAY_RE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday)s?\b",
    re.IGNORECASE,
)
_PHONE_RE = re.compile(r"^\+?\d[\d ()-]{6,}\d$")
_FIGURE_START_RE = re.compile(
    rf"(?i)(?:(?:{FIGURE_QUALIFIER_PATTERN})\s+)?"
    r"(?:\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty"
    r"|forty|fifty|hundred|half|a few|several)\b)"
)
_YEAR_RE = re.compile(r"\b(?:1\d{3}|20\d\d)s?\b")


def asked_thing(shape: QuestionShape) -> str:
    """What a figure, date, time or contact question asks for, in its own words if it can.

    "What is the surgery's email address?" -> "email address"; else "figure", "date",
    "time" or "answer".
    """
    asked = asked_type(shape)
    if asked == CONTACT:
        match = _CONTACT_RE.search(shape.text.lower())
        return match.group() if match else "contact"
    return {QUANTITY: "figure", DATE: "date", TIME: "time"}.get(asked, "answer")


def span_type(text: str) -> str:
    """What a short answer is: a "figure", a "date", a "contact" or a "name".

    A date, a month or a weekday is a date; a phone number a contact; a number in digits
    or words, with or without its qualifier, a figure.
    """
    stripped = text.strip()
    if _PHONE_RE.match(stripped) and sum(ch.isdigit() for ch in stripped) >= 7:
        return CONTACT
    if _MONTH_OR_DAY_RE.search(stripped) or re.fullmatch(r"\d{4}(?:-\d\d){0,2}s?", stripped):
        return DATE
    if _FIGURE_START_RE.match(stripped):
        return "figure"
    return NAME


def span_fits(asked: str, text: str, *, of_asked_kind: bool = False) -> bool | None:
    """Whether a short answer is of the asked type: True, False, or None when unsure.

    A figure answers a quantity (its unit is judged by `_quantities`), a date or month or
    weekday a date or time, a phone number a contact, a name a person (not one of a place or
    body or a day, `names_place_or_day`), place, organisation or name. For a kind the
    reasoner cannot type (`THING`) a name is unsure unless it is of the asked kind
    (`of_asked_kind`); for a medicine, a group, a reason or a procedure a name answers only
    when it is of the asked kind.
    """
    kind = span_type(text)
    if asked in (REASON, PROCEDURE, GROUP):
        return False
    if asked == CONTACT:
        return kind == CONTACT
    if asked == QUANTITY:
        return kind == "figure"
    if asked in (DATE, TIME):
        return kind == DATE or bool(_YEAR_RE.search(text)) or (asked == TIME and kind == "figure")
    if kind != NAME:
        return False
    if asked == PERSON and names_place_or_day(text):
        return False
    if asked in _NAMED:
        return True
    if asked == MEDICINE:
        return of_asked_kind
    return True if of_asked_kind else None


def holds_type(shape: QuestionShape, asked: str, text: str) -> bool:
    """Whether `text` holds a span of the asked type, for a figure, date, time or contact.

    A figure must be of the asked kind of quantity (`_quantities`); other types hold always.
    """
    if asked == CONTACT:
        return any(
            span_type(m.group()) == CONTACT for m in re.finditer(r"\+?\d[\d ()-]{6,}\d", text)
        )
    if asked in (DATE, TIME):
        return bool(_YEAR_RE.search(text) or _MONTH_OR_DAY_RE.search(text)) or (
            asked == TIME and bool(re.search(r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2} ?[ap]m\b", text))
        )
    if asked != QUANTITY:
        return True
    quantity = asked_quantity(shape.text)
    for span in candidate_spans(text):
        if span.kind != "number":
            continue
        shown = figure(text, span)
        if shown is not None and figure_answers(quantity, shown):
            return True
        if shown is None and counts_asked(shape) and figure_answers(quantity, ""):
            return True
    return False


def named_as(evidence: Evidence, text: str, sentence: str | None, kind: frozenset[str]) -> bool:
    """Whether a short answer is of the asked kind in the sentence it was read from."""
    if not kind:
        return False
    held = next(
        (s for s in evidence.sentences if sentence and s.text in sentence and text in s.text),
        None,
    )
    if held is None:
        return bool(re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(kind)))})", text, re.I))
    candidate = Candidate(text, 1.0, ScoredSentence(held, 1.0, frozenset()), "name")
    return of_kind(evidence, candidate, text, kind)


def of_kind(evidence: Evidence, candidate: Candidate, text: str, kind: frozenset[str]) -> bool:
    """Whether a span is of the asked kind (`asked_kind`).

    It names the kind ("Carrow University"), its sentence writes the kind beside it ("the
    A12 road"), or its own held note says it is one (`is_a`).
    """
    words = [re.escape(w) for w in sorted(kind)]
    if not words:
        return False
    named = re.compile(rf"\b(?:{'|'.join(words)})", re.IGNORECASE)
    if named.search(text):
        return True
    sentence = candidate.support.sentence.text
    start = sentence.find(text)
    if start >= 0:
        before = " ".join(sentence[:start].split()[-2:])
        after = " ".join(sentence[start + len(text) :].split()[:1])
        if named.search(before) or named.search(after):
            return True
        rest = sentence[start + len(text) :]
        if re.match(rf",\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}?(?:{'|'.join(words)})", rest, re.I):
            return True  # "at the Wren Works, a printing school"
    return any(
        is_a(_lead(evidence, doc), kind)
        for doc in titled_documents(evidence, text, candidate.support.sentence.doc)
    )


def _lead(evidence: Evidence, doc: int) -> str:
    """A held document's first two sentences, where it says what its subject is."""
    return " ".join(s.text for s in evidence.sentences if s.doc == doc and s.position < 2)


def is_a(text: str, words: frozenset[str]) -> bool:
    """Whether `text` says its subject *is* of the kind `words` name, not near one.

    "is an American country music singer" is a singer; "is a street in the suburb of X"
    is no suburb: no preposition or clause stands between the verb and the kind.
    """
    kind = "|".join(re.escape(w) for w in sorted(words))
    pattern = (
        r"(?:\b(?:is|was|are|were|became|becomes|remains)\s+(?:an?|the|one of the)|^\W*an?)\s+"
        rf"{_IS_A_GAP}{{0,60}}?\b\w*?(?:{kind})\w*\b"
        # The kind is the head of what the subject is: "a film director" is no film.
        rf"(?!\s+(?!{_AFTER_HEAD}\b)[a-z]+\b)"
    )
    return bool(re.search(pattern, text, re.IGNORECASE))


def describes(text: str, words: frozenset[str]) -> bool:
    """Whether `text` says its subject is of the kind `words` name.

    "was an American actor", "is a gospel singer", "A prolific author, he ...".
    """
    kind = "|".join(re.escape(w) for w in sorted(words))
    pattern = (
        r"(?:\b(?:is|was|are|were|became|becomes|remains|served as)\b|(?:^|[.;]\s+)an?\b)"
        rf"[^.;:]{{0,80}}?\b(?:{kind})\w*\b"
    )
    return bool(re.search(pattern, text, re.IGNORECASE))


def _spans_of(
    shape: QuestionShape, evidence: Evidence, sentence: Sentence, rejected: frozenset[str]
) -> list[Candidate]:
    """The candidates of the asked type written in one sentence."""
    kinds = EXACT_KINDS.get(shape.answer_type, ())
    scored = ScoredSentence(sentence, 1.0, frozenset())
    return [
        c
        for c in answer_candidates(shape, evidence, [scored], top=1, exclude=rejected)
        if c.kind in kinds and sentence.text.find(c.text) >= 0
    ]


def asks_nationality(shape: QuestionShape) -> bool:
    """Whether the question asks for a nationality or country."""
    lowered = shape.text.lower()
    return bool(re.search(r"nationalit|\b(?:what|which) country\b(?! music)", lowered))


def nearest_to(text: str, spans: Sequence[Candidate], asked: frozenset[str]) -> Candidate | None:
    """The span clearly nearest, in words, to the question's asked words in `text`, or None.

    The asked words are the question's words other than the names it gives ("conflict",
    "musician", "road"), with their relation wordings ("born in" for "birthplace"): "a
    conflict between the Hollin weavers and the Marsh folk in Dunmere" answers "which group
    was in a conflict with the Hollin weavers" with "Marsh folk". Nearest means within
    `PARAMS.near_words` words, and the runner-up at least `PARAMS.near_margin` words further.
    """
    positions = matched_positions(text, asked)
    if not positions or len(spans) < 2:
        return None

    def distance(span: Candidate) -> int:
        start = text.find(span.text)
        end = start + len(span.text)
        gaps = [
            len(_WORD_RE.findall(text[end:p] if p >= end else text[p:start])) for p in positions
        ]
        return min(gaps)

    ordered = sorted(spans, key=distance)
    first, second = distance(ordered[0]), distance(ordered[1])
    if first > PARAMS.near_words or second - first < PARAMS.near_margin:
        return None
    if any(coordinated(text, ordered[0].text, other.text) for other in ordered[1:]):
        return None  # "fought the Carrow Ferrymen and the Marsh Carters": both are meant
    return ordered[0]


_COORDINATION_RE = re.compile(r"\s*(?:[,/;]\s*)?(?:(?:and|or|as well as)\s+)?(?:the\s+)?")


def coordinated(text: str, one: str, other: str) -> bool:
    """Whether two spans of `text` are listed together ("A and the B", "A, B", "A/B")."""
    a, b = text.find(one), text.find(other)
    if a < 0 or b < 0 or a == b:
        return False
    (start, left), (end, _) = sorted([(a, one), (b, other)])
    between = text[start + len(left) : end]
    return bool(between.strip()) and bool(_COORDINATION_RE.fullmatch(between))


def span_text(shape: QuestionShape, evidence: Evidence, candidate: Candidate) -> str | None:
    """The span as an answer, or None when it would be a title, a label or a bare number."""
    sentence = candidate.support.sentence
    title_terms = evidence.title_terms[sentence.doc]
    title = evidence.titles[sentence.doc]
    span_terms = term_set(candidate.text)
    if sum(ch.isalnum() for ch in candidate.text) < 2 and not candidate.text.isdigit():
        return None  # a unit's letter ("L" of "mmol/L"), an initial; "5" of "5 days" stays
    if candidate.kind in ("number", "year", "date") and not asks_quantity(shape):
        return None  # a figure answers only a question asking for one
    if candidate.kind == "year" and shape.answer_type == "number":
        asked = asked_quantity(shape.text)
        if asked is not None and not asked & {"age"}:
            return None  # a year is no count, dose or duration ("how many copies": not 1939)
    if is_label_line(candidate.text) and shape.answer_type != "name" and candidate.kind == "name":
        if span_terms and span_terms <= title_terms:
            return None
    if candidate.kind == "name" and candidate.text[:1].isdigit():
        # "450 L" read as a name: a figure, whose unit is what follows in the sentence.
        candidate = Candidate(
            candidate.text.split()[0], candidate.score, candidate.support, "number"
        )
    if candidate.kind == "name" and shape.answer_type not in ("name", "any"):
        return None
    if candidate.kind == "name" and asked_type(shape) == PERSON:
        if not may_name_person(candidate.text, sentence.text, evidence):
            return None  # "who does X" is not answered by where or when X is done
    if candidate.kind == "name" and span_terms and span_terms <= title_terms:
        if shape.answer_type != "name":
            # The document's own title is what the sentence is about, not what it says.
            return None
    elif candidate.kind == "name" and title_terms and same_name(title, candidate.text):
        # The document's own subject written in full ("Ada Mary Corran" in "Ada Corran"):
        # its title, for a question asking for a name; else not what the sentence says.
        return clean_title(title) if shape.answer_type == "name" else None
    if candidate.kind == "number":
        # A figure keeps its range and unit, and its unit must be of the asked kind: a
        # dose does not answer "how long" (`_quantities`).
        asked = asked_quantity(shape.text)
        if shape.duration:
            text = duration_span(sentence.text, candidate.text)
            if text != candidate.text and figure_answers(asked, text):
                end = sentence.text.find(text) + len(text)
                return None if offset_not_length(shape.text, sentence.text, end) else text
        start = candidate.start
        if start < 0 or sentence.text[start : start + len(candidate.text)] != candidate.text:
            start = number_position(sentence.text, candidate.text)
        span = Span(candidate.text, "number", start, -1)
        with_unit = figure(sentence.text, span)
        if with_unit is not None:
            end = sentence.text.find(with_unit) + len(with_unit)
            if offset_not_length(shape.text, sentence.text, end):
                return None
            return with_unit if figure_answers(asked, with_unit) else None
        return candidate.text if counts_asked(shape) and figure_answers(asked, "") else None
    if candidate.kind in ("year", "date") and not asked_end(shape.text):
        # A year that opens or closes a range answers with the whole range.
        return year_range(sentence.text, candidate.text) or candidate.text
    return candidate.text


# A range of years: "between 1838 and 1850", "from 1901 to 1910", "1860-1864", "1901 until 1910".
_YEAR_RANGE_RE = re.compile(
    r"\bbetween\s+\d{4}\s+and\s+\d{4}\b"
    r"|\b(?:from\s+)?\d{4}\s*(?:-|\u2013|\u2014|to\b|until\b|till\b)\s*\d{2,4}\b",
    re.IGNORECASE,
)


def year_range(text: str, year: str) -> str | None:
    """The range of years in `text` that `year` opens or closes, or None."""
    for match in _YEAR_RANGE_RE.finditer(text):
        if re.search(rf"\b{re.escape(year)}\b", match.group()):
            return match.group()
    return None


__all__ = [
    "EXACT_KINDS",
    "PERSON",
    "asked_category_words",
    "asked_type",
    "asks_nationality",
    "bridged_name",
    "coordinated",
    "described_subject",
    "describes",
    "holds_type",
    "named_as",
    "nearest_to",
    "sentence_span",
    "span_fits",
    "span_text",
    "span_type",
]
