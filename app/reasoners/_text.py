"""Plain-text analysis for the extractive reasoner: terms, sentences, spans, question shapes.

Everything here is pure regex and dictionary work so that the extractive reasoner stays
deterministic and fast (no model, no corpus statistics beyond the documents at hand).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Literal

from prefrag.answers import normalize_answer as normalize_answer  # the one rule
from prefrag.reasoners._quantities import asks_clock_time, asks_measure
from prefrag.reasoners._relations import joined_phrases
from prefrag.reasoners._topics import asked_subject
from prefrag.shared import shared

AnswerType = Literal["date", "number", "name", "any", "sentence"]

AnswerForm = Literal["span", "sentences", "list"]

# Advice questions ("Can I take X with Y?", "Should everyone avoid X?") are not yes/no facts
# about named things: text polarity cannot settle them, so the honest extractive answer is
# the best-supported sentences. Questions starting with a modal verb are advice.
_ADVICE = re.compile(
    r"^(can|could|may|should|must|might)\b"
    r"|^is it (safe|ok|okay|advisable|dangerous|necessary)\b"
    r"|^(do|does|did) .*\bneed to\b"
    r"|^what should\b"
    # "When should the dose be reduced?": a condition, not a date.
    r"|^when (should|must|can|could|do|does|is it|are they)\b"
)
# "Can X and Y both ...?": a yes/no comparison of named subjects, not advice.
_COMPARISON = re.compile(r"\b(both|either|neither|the same|in common)\b")
# Explanations and descriptions: why, how (not how many/much/long/...), what happens, what
# a short term is, symptoms, treatments, causes. Answered with whole sentences.
_EXPLANATION = re.compile(
    r"^why\b"
    r"|^how (?!many\b|much\b|long\b|old\b|tall\b|far\b|large\b|big\b|often\b|soon\b)\w+"
    r"|^what (happens|can happen|could happen|will happen)\b"
    r"|^what (is|are) (a |an |the )?[\w'\-]+( [\w'\-]+)?\??$"
    r"|^what (is|are) (the )?(symptoms?|signs?|treatments?|causes?|side effects?"
    r"|complications?|outlook|risk factors?)\b"
    r"|^(who|what) (is|are) at risk\b"
)
# List questions open with "which/what" and a plural noun ("Which antibiotics raise ...").
_LIST = re.compile(
    r"^(which|what) (?:(?:are|were) (?:the |some )?(?:[a-z\-]+ ){0,2}?)?([a-z\-]{2,}[^su\W]s)\b"
)
# "Which four medicines should ...", "which travel vaccines do ...", "Which of her novels
# are ...": a plural noun after a count or a modifier, or after "which of <owner>'s",
# followed by a verb that agrees with a plural (not "Which Jones album is ...").
_MODIFIED_LIST = re.compile(
    r"^(which|what) (?:of (?:the |[\w\-]+(?: [\w\-]+){0,2}['\u2019]s? |his |her |their |its ))?"
    r"(?:(?:two|three|four|five|six|seven|eight|nine|ten|[a-z\-]+) ){0,2}"
    r"([a-z\-]{2,}[^su\W]s) (?:do|did|are|were|should|must|can|could|have)\b"
)
# "... is where which two rivers meet?": a counted plural asked anywhere in the question.
_COUNTED_LIST = re.compile(
    r"\b(which|what) (?:two|three|four|five|six|seven|eight|nine|ten) ([a-z\-]{2,}[^su\W]s)\b"
)
_NOT_LISTS = frozenset(
    "years days months weeks hours minutes decades centuries times series species news means"
    " lens does".split()
)
# The noun phrase a "what/which" question asks for ("which reversal agent is used ...").
_FOCUS_RE = re.compile(
    r"^(?:what|which)\s+(?:(?:is|are|was|were)\s+)?(?:(?:the|a|an)\s+)?"
    r"((?:[\w\-]+\s+){0,3}?[\w\-]+)\s+"
    r"(?:is|are|was|were|for|in|to|used|given|does|do|did|has|have|that|which|should|can)\b"
)
# Duration questions keep the qualifier and unit of their number ("at least 36 hours").
_DURATION = re.compile(r"^how (long|far apart|soon|often)\b")
QuestionKind = Literal["yesno", "choice", "factoid"]
Direction = Literal["min", "max"]

_STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just let me more most my myself no nor not of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom whose why will with would you your yours yourself
    yourselves whom one ones s t st name named known called along another either
    """.split()
)
# Words that shape a question but never name what is asked about.
_QUESTION_NOISE = frozenset(
    """
    what which who whom whose when where why how many much did does do is are was were
    name named known called kind type
    """.split()
)
_AUXILIARIES = frozenset(
    "is are was were do does did can could has have had will would should shall may might".split()
)
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan\\.|Feb\\.|Mar\\.|Apr\\.|Jun\\.|Jul\\.|Aug\\.|Sep\\.|Sept\\.|Oct\\.|Nov\\.|Dec\\."
)
_MONTH_WORDS = frozenset(m.rstrip(".").lower() for m in _MONTHS.split("|"))
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col lt sgt capt mt ft vs no inc co ltd corp dept est approx"
    " u.s u.k d.c e.g i.e op vol".split()
)
# Lower-case words allowed inside a capitalised name ("Keeper of Records", "Vincent van Gogh").
_NAME_CONNECTORS = frozenset("of the and de da di del della du von van der la le y for on".split())
_PRONOUN_STARTS = frozenset(
    "he she it they we i his her its their this that these those there in on at by for from "
    "after before during as when while with since although though but and a an what which who "
    "whom whose when where why how is are was were do does did can could has have had will "
    "would should both".split()
)

_WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*", re.UNICODE)
_DATE_RE = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])\b|"  # 2026-03-02
    rf"\b(?:(?:\d{{1,2}}\s+(?:{_MONTHS})|(?:{_MONTHS})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?),?\s+)?"
    r"(?:1[0-9]{3}|20[0-9]{2})\b(?:s\b)?"
)
# A number, alone or with its unit written on ("9am", "7.30pm", "5mg", "250ml").
_NUMBER_RE = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s+(?:million|billion|thousand|hundred))?"
    r"(?:(?![\w])|(?=(?:am|pm|mg|mcg|g|kg|ml|km|m|cm|mm|h|hrs?|mins?)\b))"
)
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "twenty": 20,
}
_NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_QUOTE_RE = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
_CAP_TOKEN_RE = re.compile(r"[^\W\d_][\w'\u2019.\-&]*|\d[\w\-]*", re.UNICODE)
# Bold or italic marks may open a sentence ("... needed. **Medicine.** Take ...").
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])[\"”')\]]*\s+(?=[\"“'(\[*_]*[A-Z0-9À-Ý])")

# --------------------------------------------------------------------------- terms


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball stem of a lower-cased word."""
    return str(shared().stemmer().stemWord(word.lower()))


def words(text: str) -> list[str]:
    """Lower-cased word tokens with possessive endings dropped."""
    tokens = _WORD_RE.findall(text.lower().replace("\u2019", "'"))
    return [t[:-2] if t.endswith("'s") else t for t in tokens]


@lru_cache(maxsize=16384)
def _content_terms(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(joined_phrases(text)) if w not in _STOPWORDS)


def content_terms(text: str) -> tuple[str, ...]:
    """Stemmed non-stopword terms of `text`, in order (repeats kept)."""
    return _content_terms(text)


def term_set(text: str) -> frozenset[str]:
    """The set of stemmed content terms of `text`."""
    return frozenset(_content_terms(text))


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Jaccard overlap of two term sets (0 when both are empty)."""
    if not left and not right:
        return 0.0
    return len(left & right) / len(left | right)


def idf_weights(term_sets: Sequence[frozenset[str]]) -> dict[str, float]:
    """Inverse document frequency of every term over documents' term sets (BM25-style)."""
    n = len(term_sets)
    df: dict[str, int] = {}
    for terms in term_sets:
        for term in terms:
            df[term] = df.get(term, 0) + 1
    return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}


def unseen_idf(n_texts: int) -> float:
    """The idf a term gets when no text contains it."""
    return math.log(1.0 + (n_texts + 0.5) / 0.5)


# --------------------------------------------------------------------------- sentences


# Lines in the shape of the prompts' own control fields ("Status: False", "Judgment: ...",
# "Final Answer: ...") are not evidence: a document carrying them is trying to steer the
# reasoner, and their words must never become an answer. A verdict word may lead the field
# ("False Self-Evaluation: ...").
_CONTROL_LINE_RE = re.compile(
    r"^\s*[*_#>\s]*(?:(?:true|false|yes|no)\s+)?(status|judg(e)?ment|verdict|label|self-evaluation|analysis|thought|action|"
    r"observation|final answer|answer|instruction|system|assistant|user)\s*[:=].*$",
    re.IGNORECASE | re.MULTILINE,
)
# Span search grows faster than linearly with text length; real chunks are ~1,300
# characters, so this bound only ever cuts hostile or broken inputs.
MAX_TEXT_CHARS = 20_000
_HEADING_LINE_RE = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+[^\n]*(?:\n|\Z)")
_HEADING_MARK_RE = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+")
# "Label: value" on a line of its own, no sentence end: a field of a note, not prose.
_LABEL_LINE_RE = re.compile(
    r"(?m)^[ \t]*([A-Z][A-Za-z][\w ./'()-]{0,28}:[ \t]+[^\n.!?:]{1,80})[ \t]*$(?!\n[ \t]*[a-z])"
)
# A label line's label ("Author:", "Reviewed:") names the field; its value is the statement.
_LABEL_PREFIX_RE = re.compile(r"^[A-Z][A-Za-z][\w ./'()-]{0,28}:[ \t]+(?=[^.!?:]{1,80}$)")
# A Markdown table: two or more lines that open and close with a pipe.
# One row is a table too: an indexed chunk may open with the last row of a table.
_TABLE_RE = re.compile(r"(?m)(?:^[ \t]*\|[^\n]*\|[ \t]*(?:\n|$))+")
_TABLE_RULE_RE = re.compile(r"^[\s|:-]+$")
_BLOCK = "\x00"
_BULLET_LINE_RE = re.compile(r"(?:^|\n)[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+")


@lru_cache(maxsize=8192)
def split_sentences(text: str) -> tuple[str, ...]:
    """Sentences of `text`, keeping abbreviations and initials ("F. Hugh", "U.S.") intact.

    Control-field lines ("Status: False") are dropped and the text is cut at
    `MAX_TEXT_CHARS` first.
    """
    return tuple(sentence for sentence, _ in listed_sentences(text))


@lru_cache(maxsize=8192)
def listed_sentences(text: str) -> tuple[tuple[str, int], ...]:
    """`split_sentences` with each sentence's list: its number in `text`, or -1 for prose.

    The bullets of one list, the line that leads into it ("These stop it being absorbed:",
    a line in bold) and the rows of one table share a number: a list question is answered
    by the whole list, not by the one bullet that matches it best. A bullet ends at a blank
    line: the prose after a list is not its last item.
    """
    text = _CONTROL_LINE_RE.sub(" ", text[:MAX_TEXT_CHARS])
    # A table row is a statement of its own, each cell named by its column's header.
    text = _TABLE_RE.sub(_table_rows, text)
    # A Markdown heading names what follows (the document's title); it states nothing.
    text = _HEADING_LINE_RE.sub("\n", text)
    text = _HEADING_MARK_RE.sub("", text)
    # A label line ("Author: Dr Mayo", "Reviewed: 2025-01-10") is a sentence of its own,
    # never the opening words of the prose below it.
    text = _LABEL_LINE_RE.sub(lambda m: f"\n{_BLOCK}{m.group(1)}{_BLOCK}\n", text)
    out: list[tuple[str, int]] = []
    lists = 0
    table = -1  # the number of the table whose rows are being read, or -1
    for part in text.split(_BLOCK):
        if part.startswith(_ROW):
            if table < 0:
                table, lists = lists, lists + 1
            out += [(s, table) for s in _sentences_of(part[len(_ROW) :])]
            continue
        if part.strip():
            table = -1
        # Each bullet line of a list is a sentence of its own, its marker dropped.
        blocks = _BULLET_LINE_RE.split(part)
        number = lists if len(blocks) > 1 else -1
        before, bold = blocks[0], ""
        last_line = before.rstrip().rsplit("\n", 1)[-1].strip()
        if number >= 0 and len(last_line) > 4 and last_line[:2] == last_line[-2:] == "**":
            # A line in bold above a list is its heading, not the end of the prose above.
            before, bold = before.rstrip()[: -len(last_line)], last_line
        lead = _paragraph_sentences(before)
        led = number >= 0 and bool(lead) and not bold and lead[-1].strip("*_ ").endswith(":")
        out += [(s, number if led and i == len(lead) - 1 else -1) for i, s in enumerate(lead)]
        if bold:
            out.append((bold, number))
        for bullet in blocks[1:]:
            item, _, after = [*_ITEM_END_RE.split(bullet, maxsplit=1), "", ""][:3]
            out += [(s, number) for s in _sentences_of(item)]
            out += [(s, -1) for s in _paragraph_sentences(after)]
        if number >= 0:
            lists += 1
    return tuple(out)


_ROW = "\x01"
_PARAGRAPH_BREAK_RE = re.compile(r"(\n[ \t]*\n)")
# A bullet ends at a blank line or at a line that opens like a new sentence (a capital, a
# bold mark): an indexed note has lost its blank lines, and the prose after a list is not
# its last item. A bullet wrapped onto a second line goes on in lower case.
_ITEM_END_RE = re.compile(r"(\n[ \t]*\n|\n[ \t]*(?=[A-Z*_]))")


def _paragraph_sentences(text: str) -> list[str]:
    """Sentences of `text`, a blank line ending one ("**Red flags**" above a list)."""
    return [s for paragraph in _PARAGRAPH_BREAK_RE.split(text) for s in _sentences_of(paragraph)]


def _table_rows(match: re.Match[str]) -> str:
    """A Markdown table's rows as blocks: "Apixaban, Usual dose: 5 mg; Reduced dose: 2.5 mg"."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in match.group().splitlines()
        if line.strip()
    ]
    header: list[str] = []
    if len(rows) > 1 and _TABLE_RULE_RE.match("|".join(rows[1])):
        header, rows = rows[0], rows[2:]
    statements = []
    for cells in rows:
        if _TABLE_RULE_RE.match("|".join(cells)) or not any(cells):
            continue
        if header and len(cells) > 1:
            pairs = zip(header[1:], cells[1:], strict=False)  # a short row names fewer cells
            named = [f"{h}: {c}" if h else c for h, c in pairs if c]
            statements.append(f"{cells[0]}, {'; '.join(named)}" if named else cells[0])
        else:
            statements.append("; ".join(c for c in cells if c))
    return "".join(f"\n{_BLOCK}{_ROW}{row}{_BLOCK}\n" for row in statements)


def _sentences_of(text: str) -> list[str]:
    text = " ".join(text.split())
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        before = text[start : match.start()].rstrip("\"”')]")
        last = before.rsplit(" ", 1)[-1].rstrip(".!?").lower()
        # A single letter or a known abbreviation before the period is not a sentence end.
        if (len(last) == 1 and last.isalpha()) or last in _ABBREVIATIONS:
            continue
        sentences.append(text[start : match.start()].strip())
        start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


# --------------------------------------------------------------------------- spans


@dataclass(frozen=True)
class Span:
    """A candidate answer inside a sentence: text, kind and character offsets."""

    text: str
    kind: Literal["name", "date", "year", "number", "quote"]
    start: int
    end: int


def _name_spans(sentence: str) -> list[Span]:
    tokens = list(_CAP_TOKEN_RE.finditer(sentence))
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        token = tokens[i].group()
        if not (token[0].isupper() or (token[0].isdigit() and _is_name_number(tokens, i))):
            i += 1
            continue
        j = i
        end = i
        while j + 1 < len(tokens):
            gap = sentence[tokens[j].end() : tokens[j + 1].start()]
            if gap not in (" ", "-") and gap.strip() not in ("", "&"):
                break
            nxt = tokens[j + 1].group()
            if nxt[0].isupper() or nxt[0].isdigit():
                j += 1
                end = j
            elif nxt.lower() in _NAME_CONNECTORS and j + 2 < len(tokens):
                after = tokens[j + 2].group()
                gap2 = sentence[tokens[j + 1].end() : tokens[j + 2].start()]
                if after[0].isupper() and gap2 == " ":
                    j += 2
                    end = j
                else:
                    break
            else:
                break
        first = i
        # Sentence-initial function words are capitalised by position, not because they name.
        while first <= end and _without_contraction(tokens[first].group()) in _PRONOUN_STARTS:
            first += 1
        if first <= end:
            text = sentence[tokens[first].start() : tokens[end].end()].rstrip(".,;:'\u2019")
            if text and text.lower() not in _MONTH_WORDS and text.lower() not in _STOPWORDS:
                spans.append(
                    Span(text, "name", tokens[first].start(), tokens[first].start() + len(text))
                )
        i = end + 1
    return spans


# A pronoun's or wh-word's contracted verb ("I've", "It's", "What's", "They're").
_CONTRACTION_RE = re.compile(r"['\u2019](?:s|m|d|ve|re|ll)$")


def _without_contraction(word: str) -> str:
    """`word` in lower case without a contracted verb ("I've" -> "i", "It's" -> "it")."""
    return _CONTRACTION_RE.sub("", word.lower())


def _is_name_number(tokens: list[re.Match[str]], i: int) -> bool:
    # "12 5th Street": a number directly followed by a capitalised word belongs to the name,
    # but a year before a word ("1945 American comedy") does not.
    token = tokens[i].group()
    if re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", token) or not re.fullmatch(
        r"\d+(st|nd|rd|th)?", token
    ):
        return False
    return i + 1 < len(tokens) and tokens[i + 1].group()[0].isupper()


def candidate_spans(sentence: str) -> list[Span]:
    """Names, dates, years, numbers and quoted titles in `sentence`, in order of position."""
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []

    def add(span: Span) -> None:
        spans.append(span)
        taken.append((span.start, span.end))

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    label = _LABEL_PREFIX_RE.match(sentence)
    if label:  # the label is no candidate: reserve it
        taken.append((0, label.end()))
    for m in _QUOTE_RE.finditer(sentence):
        add(Span(m.group(1).strip(), "quote", m.start(1), m.end(1)))
    for m in _DATE_RE.finditer(sentence):
        text = m.group().strip(" ,")
        kind: Literal["date", "year"] = "year" if text.rstrip("s").isdigit() else "date"
        add(Span(text, kind, m.start(), m.start() + len(text)))
    for m in _NUMBER_RE.finditer(sentence):
        if free(m.start(), m.end()):
            add(Span(m.group(), "number", m.start(), m.end()))
    for m in _NUMBER_WORD_RE.finditer(sentence):
        if free(m.start(), m.end()):
            add(Span(m.group(), "number", m.start(), m.end()))
    for span in _name_spans(sentence):
        if free(span.start, span.end):
            add(span)
        elif span.kind == "name":
            # A name that contains a date or number ("2010 Winter Games") still counts.
            inside = [s for s in spans if span.start <= s.start and s.end <= span.end]
            if inside and all(s.kind in ("year", "number") for s in inside):
                add(span)
    return sorted(spans, key=lambda s: (s.start, -s.end))


def year_of(text: str) -> int | None:
    """The first four-digit year in `text`, if any."""
    match = re.search(r"\b(1[0-9]{3}|20[0-9]{2})\b", text)
    return int(match.group()) if match else None


def number_of(text: str) -> float | None:
    """The numeric value of a number span ("1,234,567", "2.5 million", "twelve")."""
    lowered = text.lower().strip()
    if lowered in NUMBER_WORDS:
        return float(NUMBER_WORDS[lowered])
    match = re.match(r"(\d[\d,]*(?:\.\d+)?)\s*(million|billion|thousand|hundred)?", lowered)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    scale = {"million": 1e6, "billion": 1e9, "thousand": 1e3, "hundred": 1e2}
    return value * scale.get(match.group(2) or "", 1.0)


# --------------------------------------------------------------------------- questions


_PERSON_NOUNS = (
    "man|woman|person|people|actor|actress|singer|musician|player|director|writer|author|poet"
    "|artist|politician|president|king|queen|composer|producer|rapper|band|group|team|company"
    "|city|country|state|town|film|album|song|novel|book|show|series"
)
_DATE_MIN = frozenset(
    "first earlier earliest older oldest before sooner preceded predates founded "
    "established".split()
)
_DATE_MAX = frozenset(
    "later latest younger youngest recent recently newer newest last after".split()
)
_NUMBER_MAX = frozenset(
    "more most larger largest bigger biggest higher highest taller tallest longer longest "
    "greater greatest heavier wider deeper populous".split()
)
_NUMBER_MIN = frozenset(
    "fewer fewest less least smaller smallest lower lowest shorter shortest lighter".split()
)


@dataclass(frozen=True)
class QuestionShape:
    """What kind of answer a question wants and which names it mentions."""

    text: str
    kind: QuestionKind
    answer_type: AnswerType
    candidates: tuple[str, ...] = ()
    direction: Direction | None = None
    compare_by: Literal["date", "number"] | None = None
    negated: bool = False
    same: bool = False
    property_text: str = ""
    entities: tuple[str, ...] = ()
    terms: tuple[str, ...] = field(default=())
    form: AnswerForm = "span"
    duration: bool = False
    focus: str = ""
    subject: str = ""
    topic: str = ""

    @property
    def focus_terms(self) -> frozenset[str]:
        """Question terms minus the words that only shape the question."""
        return frozenset(self.terms)


@lru_cache(maxsize=1024)
def analyze_question(question: str) -> QuestionShape:
    """Classify `question` (yes/no, choice between named candidates, factoid) and its names."""
    text = " ".join(question.strip().split())
    lowered = text.lower()
    first = words(text)[:1]
    terms = tuple(
        dict.fromkeys(
            stem(w) for w in words(joined_phrases(text)) if w not in _STOPWORDS | _QUESTION_NOISE
        )
    )
    names = [s.text for s in candidate_spans(text) if s.kind != "number"]
    # "X Y and Z W" reads as one span; its parts are the entities asked about.
    parts = [p for n in names if " and " in n for p in n.split(" and ") if p[:1].isupper()]
    entities = tuple(unique([*names, *parts]))
    direction, compare_by = _direction(lowered)
    comparison = bool(_COMPARISON.search(lowered))
    # Every shape holds the question, its names and its terms; the branches add the rest.
    shape = partial(QuestionShape, text=text, entities=entities, terms=terms)
    asked = asked_subject(text)
    if asked is not None:
        # "Is X inherited?", "How many people are affected by X?": whole sentences of a
        # document about X, not yes/no or a bare number.
        return shape(
            kind="factoid",
            answer_type="sentence",
            form="sentences",
            subject=asked.subject,
            topic=asked.kind,
        )
    if (_ADVICE.match(lowered) and not comparison) or _EXPLANATION.search(lowered):
        return shape(
            kind="factoid",
            answer_type="sentence",
            form="sentences",
        )
    listed = _LIST.match(lowered) or _MODIFIED_LIST.match(lowered) or _COUNTED_LIST.search(lowered)
    if listed and listed.group(2) not in _NOT_LISTS and " or " not in lowered:
        return shape(
            kind="factoid",
            answer_type="any",
            form="list",
        )
    choice = _choice_candidates(text)
    if choice:
        return shape(
            kind="choice",
            answer_type="any",
            candidates=choice,
            direction=direction,
            compare_by=compare_by,
        )
    if first and first[0] in _AUXILIARIES:
        subjects, prop, same, negated = _yesno_parts(text)
        return shape(
            kind="yesno",
            answer_type="any",
            candidates=subjects,
            same=same,
            negated=negated,
            property_text=prop,
        )
    return shape(
        kind="factoid",
        answer_type=_answer_type(lowered),
        duration=bool(_DURATION.match(lowered)),
        focus=_focus(lowered),
    )


def _focus(lowered: str) -> str:
    """The noun phrase a what/which question asks for ("antidote", "reversal agent"), or ""."""
    match = _FOCUS_RE.match(lowered)
    return match.group(1) if match and term_set(match.group(1)) else ""


def _direction(lowered: str) -> tuple[Direction | None, Literal["date", "number"] | None]:
    tokens = set(words(lowered))
    if tokens & _DATE_MIN:
        return "min", "date"
    if tokens & _DATE_MAX:
        return "max", "date"
    if tokens & _NUMBER_MAX:
        return "max", "number"
    if tokens & _NUMBER_MIN:
        return "min", "number"
    return None, None


# Nouns that name a measured quantity: a question asking for one wants a number.
_MEASURES = r"(range|dose|dosage|level|rate|amount|limit|threshold|value|percentage|number)"


def _answer_type(lowered: str) -> AnswerType:
    if re.search(r"\bhow (many|much)\b", lowered):
        return "number"
    if re.search(r"\b(what|which) year\b", lowered):
        return "date"
    # The first question word decides; a later "who" is usually a relative pronoun.
    match = re.search(r"\b(what|which|who|whom|whose|when|where|how)\b", lowered)
    asked = lowered[match.start() :] if match else lowered
    if re.match(r"how (many|much|long|old|tall|far|large|big)\b|what (percentage|number)\b", asked):
        return "number"
    if asks_clock_time(lowered):
        return "number"  # a time of day: "1 pm to 5 pm"
    if re.match(
        r"when\b|(what|which) (year|date|decade|century|day|month|years)\b|what time\b", asked
    ):
        return "date"
    if re.search(r"\bpopulation\b", asked) and re.match(r"what (is|was)\b", asked):
        return "number"
    if asks_measure(lowered):
        # "What dose of X ...?", "max dose of X on Y?": a figure of the named quantity.
        return "number"
    if re.match(rf"(what|which) (is|was|are|were) (the )?([\w-]+ ){{0,3}}{_MEASURES}\b", asked):
        # "What is the usual target INR range ...", "What is the maximum daily dose ...".
        return "number"
    if re.match(rf"(which|what)( \w+)? ({_PERSON_NOUNS})\b|(who|whom|whose|where)\b", asked):
        return "name"
    return "any"


def _choice_candidates(text: str) -> tuple[str, ...]:
    """The two options of "X or Y" questions, if the question offers a choice."""
    body = text.rstrip(" ?.")
    if " or " not in body:
        return ()
    # "X or Y: which ...?", "X or Y - which ...?" (the options first), and "Which ...: X or Y?"
    # or "Which ... - X or Y?".
    ahead = _OPTIONS_FIRST.match(body) or _OPTIONS_AFTER_COLON.match(body)
    if ahead:
        left, right = _trim_option(ahead.group("a")), _trim_option(ahead.group("b"))
        if left and right and len(left.split()) <= 6 and len(right.split()) <= 6:
            return (left, right)
    # "Which is older, X or Y" / "Which band, X or Y, had more": a comma-separated
    # segment holding "or" lists the options.
    head_is_wh = bool(re.match(r"(which|who|whom|whose|what|between)\b", body, re.I))
    segments = [seg.strip() for seg in body.split(",")]
    if head_is_wh and len(segments) > 1:
        for segment in segments[1:]:
            if " or " in segment and len(segment.split()) <= 14:
                left, right = segment.split(" or ", 1)
                left, right = _trim_option(left), _trim_option(right)
                if left and right:
                    return (left, right)
    # "Did X sing with Y or Z": the capitalised (or single) words around "or".
    left_text, right_text = body.rsplit(" or ", 1)
    left_name = _trailing_name(left_text)
    right_names = _name_spans(right_text)
    if left_name and right_names and right_names[0].start <= 4:
        return (left_name, right_names[0].text)
    left_word = left_text.split()[-1] if left_text.split() else ""
    right_word = right_text.split()[0] if right_text.split() else ""
    if left_word and right_word and left_word.lower() not in _STOPWORDS:
        if right_word.lower() not in _STOPWORDS and "-" in left_word + right_word:
            return (left_word, right_word)
    return ()


_OPTIONS_FIRST = re.compile(
    r"^(?P<a>[^,:;?]+?) or (?P<b>[^,:;?]+?)\s*(?::|,|\s[-\u2013\u2014])\s*(?:which|who|what)\b",
    re.IGNORECASE,
)
_OPTIONS_AFTER_COLON = re.compile(
    r"^(?:which|who|what)\b[^:\u2013\u2014]*?(?::|\s[-\u2013\u2014]\s)\s*"
    r"(?P<a>[^,:;?]+?) or (?P<b>[^,:;?]+)$",
    re.IGNORECASE,
)


def _trailing_name(text: str) -> str:
    """The capitalised name `text` ends with ("born first Ali ul Din" -> "Ali ul Din")."""
    tokens = text.split()
    start = len(tokens)
    while start > 0:
        token = tokens[start - 1]
        capital = token[:1].isupper() or token[:1].isdigit()
        # Short lower-case particles ("ul", "van", "de") count only between capitalised words.
        particle = (
            start - 1 > 0
            and start < len(tokens)
            and token.islower()
            and (len(token) <= 3 or token in _NAME_CONNECTORS)
            and tokens[start - 2][:1].isupper()
        )
        if not (capital or particle) or token.lower() in _PRONOUN_STARTS:
            break
        start -= 1
    return " ".join(tokens[start:]).strip(" ,:")


def _trim_option(option: str) -> str:
    option = option.strip(" \"'“”")
    option = re.sub(r"^(the (?:one|film|band|man|woman)|between)\s+", "", option, flags=re.I)
    return option.strip()


def _yesno_parts(text: str) -> tuple[tuple[str, ...], str, bool, bool]:
    """Subjects, property text, "same"-question flag and "different" (negation) flag."""
    body = text.rstrip(" ?.")
    lowered = body.lower()
    same = bool(re.search(r"\b(the )?same\b|\bboth from\b|\bin common\b", lowered))
    negated = bool(re.search(r"\bdifferent\b|\bnot\b", lowered))
    same = same or negated
    rest = body.split(" ", 1)[1] if " " in body else ""
    match = re.search(r"\s(both|of the same|the same|same|different|from the same)\b", rest)
    subject_text = rest[: match.start()] if match else ""
    prop = rest[match.end() :].strip() if match else rest
    subjects: tuple[str, ...] = ()
    if subject_text and " and " in subject_text:
        left, right = subject_text.rsplit(" and ", 1)
        subjects = (_leading_name(left.strip(" ,")), _leading_name(right.strip(" ,")))
    elif not match:
        # "Is X a Y?": the first name after the auxiliary is the subject.
        names = [s.text for s in _name_spans(rest)]
        subjects = tuple(names[:1])
    if not subjects:
        names = [s.text for s in _name_spans(rest)]
        subjects = tuple(names[:2])
    return subjects, prop, same, negated


def _leading_name(text: str) -> str:
    """The name a subject phrase starts with ("The Nine Lanterns belong to" -> the name)."""
    names = _name_spans(text)
    if names and names[0].start <= 4:
        return names[0].text
    return text


def mentions(text_terms: frozenset[str], name: str) -> float:
    """Share of `name`'s content terms that occur in `text_terms` (0 for empty names)."""
    name_terms = term_set(name)
    if not name_terms:
        return 0.0
    return len(name_terms & text_terms) / len(name_terms)


def unique(items: Iterable[str]) -> list[str]:
    """Items in order with case-insensitive repeats dropped."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
