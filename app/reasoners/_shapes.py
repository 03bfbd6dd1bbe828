"""Answer shapes beyond a short span: whole sentences, listed items, durations with their unit.

Explanations and advice ("why", "how should", "can I take ...") are answered with the one to
three best-supported evidence sentences, quoted whole; list questions ("which antibiotics
...") with the items their supporting sentences enumerate (one-word items, or a
clause's series of phrases: `series_items`); duration questions ("how long")
with the number's qualifier and unit ("at least 36 hours"), not the bare number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prefrag.reasoners._evidence import Evidence, QuestionWeights, ScoredSentence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._quantities import FIGURE_QUALIFIER_PATTERN, number_position
from prefrag.reasoners._support import support_ids
from prefrag.reasoners._text import QuestionShape, jaccard, term_set, unique
from prefrag.reasoners.base import AnswerDraft

_WORD = r"[A-Za-z][\w\-]+"
_ITEM = rf"{_WORD}(?: \([^()]{{1,80}}\))?"
# "A, B and C" / "A (x), B, or C": two or more one-word items.
_ENUMERATION_RE = re.compile(rf"\b({_ITEM}(?:, {_ITEM})*,? (?:and|or) {_ITEM})")
# "such as A" / "including A": a single example counts as an item too.
_EXAMPLE_RE = re.compile(rf"\b(?:such as|including|like) ({_WORD})\b")
_ENUMERATION_SPLIT_RE = re.compile(r",? (?:and|or) |, ")
# A sentence opening like this leans on the one before it ("For this reason ...").
_ANAPHORA_RE = re.compile(
    r"^(?:this|these|that|those|such|it|its|they|their|there|for this reason|as a result"
    r"|therefore|thus|hence|so|because of this|when that|in that case|in this case)\b",
    re.IGNORECASE,
)
_PARENTHESIS_RE = re.compile(r"\s*\([^()]*\)")
_QUALIFIER_RE = re.compile(
    rf"\b(?:{FIGURE_QUALIFIER_PATTERN})\s+$",
    re.IGNORECASE,
)
_RANGE_START_RE = re.compile(
    r"\b(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"\s*(?:to|-|\u2013|or)\s*$",
    re.IGNORECASE,
)
_UNIT_RE = re.compile(
    r"^\s*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|doses?|times?)\b"
    r"(?:\s*\(\s*\d[^()]{0,40}\))?",
    re.IGNORECASE,
)


def sentence_answer(
    evidence: Evidence, weights: QuestionWeights, ranked: Sequence[ScoredSentence]
) -> tuple[AnswerDraft, float, ScoredSentence | None]:
    """The one to three best-supported sentences, whole and cited, in the evidence's order.

    Further sentences of the best one's document join it while their support is at least
    `PARAMS.extra_sentence_share` of its support and they repeat none of the chosen ones.
    """
    chosen = _with_context(_best_sentences(ranked), ranked)
    if not chosen:
        return (
            AnswerDraft(rationale="No evidence sentence shares a term with the question."),
            0.0,
            None,
        )
    ordered = sorted(chosen, key=lambda s: (s.sentence.doc, s.sentence.position))
    cited = unique([i for s in chosen for i in support_ids(evidence, s)])
    covered = frozenset().union(*(s.covered for s in chosen))
    draft = AnswerDraft(
        answer=" ".join(s.sentence.text for s in ordered),
        cited_ids=cited,
        rationale=f"The {len(chosen)} best-supported sentence(s) of the evidence.",
    )
    return draft, weights.share(covered), chosen[0]


def list_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
) -> tuple[AnswerDraft, float, ScoredSentence | None] | None:
    """The items the best-supported sentences enumerate, or None when they list fewer than two."""
    question_terms = term_set(shape.text)
    items: list[str] = []
    used: list[ScoredSentence] = []
    for scored in _best_sentences(ranked):
        found = listed_items(scored.sentence.text, question_terms)
        if found:
            items.extend(found)
            used.append(scored)
    items = unique(items)
    if len(items) < 2:
        return None
    cited = unique([i for s in used for i in support_ids(evidence, s)])
    covered = frozenset().union(*(s.covered for s in used))
    answer = ", ".join(items[:-1]) + " and " + items[-1]
    draft = AnswerDraft(
        answer=answer,
        cited_ids=cited,
        rationale="Listed in: " + " ".join(s.sentence.text for s in used),
    )
    return draft, weights.share(covered), used[0]


def listed_items(sentence: str, question_terms: frozenset[str]) -> list[str]:
    """Items a sentence enumerates ("A, B and C", "such as D"), minus the question's own words."""
    items: list[str] = []
    for match in _ENUMERATION_RE.finditer(sentence):
        parts = _ENUMERATION_SPLIT_RE.split(_PARENTHESIS_RE.sub("", match.group(1)))
        kept = [p for p in (part.strip(" ,") for part in parts) if _is_item(p, question_terms)]
        if len(kept) >= 2:  # "often avoided, or the ..." is no list
            items.extend(kept)
    items.extend(
        m.group(1) for m in _EXAMPLE_RE.finditer(sentence) if _is_item(m.group(1), question_terms)
    )
    return unique(items)


def series_items(sentence: str, question_terms: frozenset[str]) -> list[str]:
    """The items a sentence lists, each whole ("the Wolds Show ... and a beer festival ...").

    Besides `listed_items` (one-word items), a clause's series of phrases counts: the
    phrases after a short label's colon ("Check before starting: ECG, potassium") or after
    "are", "include" or "such as" ("Annual events are A and B"), or phrases joined by
    commas and one closing "and"/"or" ("in the snuffbox, over the tubercle, and on ...").
    A phrase is an item only up to `MAX_ITEM_WORDS` words; a series needs two items. The
    phrases of a clause replace the one-word items read inside it.
    """
    items = listed_items(sentence, question_terms)
    for clause in _CLAUSE_SPLIT_RE.split(_PARENTHESIS_RE.sub("", sentence)):
        kept = [p for p in _phrase_series(clause.strip(" .")) if _is_item(p, question_terms)]
        if len(kept) >= 2:
            items = [i for i in items if i not in clause] + kept
    return unique(items)


# A list's items are phrases this short; a longer "item" is a clause of its own.
MAX_ITEM_WORDS = 10
_CLAUSE_SPLIT_RE = re.compile(r";|(?<=\w)\.\s")
_LEAD_RE = re.compile(
    r"^(?:(?:[^\s:]+\s+){0,4}[^\s:]+:\s+"
    r"|.*?\b(?:are|were|include|includes|included|including|such as|namely)\s+)",
    re.IGNORECASE,
)
_CONJUNCTION_RE = re.compile(r"\s+(?:and|or)\s+")


def _phrase_series(clause: str) -> list[str]:
    """The phrases of one clause's series ("A, B and C"), or [] when it lists nothing.

    Commas part the phrases and one "and"/"or" joins the last two; with no lead (a colon,
    "are", "include") the series needs a comma and no conjunction before its last part.
    """
    lead = _LEAD_RE.match(clause)
    body = clause[lead.end() :] if lead else clause
    parts = [p.strip(" ,*") for p in re.split(r",\s+", body)]
    closing = re.match(r"(?:and|or)\s+", parts[-1])  # "A, B, and C"
    last = _CONJUNCTION_RE.split(parts[-1][closing.end() :] if closing else parts[-1])
    if len(last) > 2 or (closing and len(last) > 1):
        return []
    early = parts[:-1]
    closed = closing is not None or len(last) == 2
    if not lead and (not closed or not early or any(_CONJUNCTION_RE.search(p) for p in early)):
        return []
    phrases = [p for p in [*early, *last] if p]
    if len(phrases) < 2 or any(len(p.split()) > MAX_ITEM_WORDS for p in phrases):
        return []
    return phrases


def _is_item(text: str, question_terms: frozenset[str]) -> bool:
    terms = term_set(text)
    return bool(terms) and not terms <= question_terms


def duration_span(sentence: str, text: str) -> str:
    """A number with the qualifier before it and the unit after ("at least 36 hours").

    `text` is the number as found in `sentence`; it comes back unchanged when no time
    unit follows it there.
    """
    start = number_position(sentence, text)
    if start < 0:
        return text
    end = start + len(text)
    unit = _UNIT_RE.match(sentence[end:])
    if unit is None:
        return text
    # The range's lower end belongs to the figure: "five to seven days", "2-3 weeks".
    lower = _RANGE_START_RE.search(sentence[:start])
    if lower is not None:
        start = lower.start()
    qualifier = _QUALIFIER_RE.search(sentence[:start])
    begin = qualifier.start() if qualifier else start
    return sentence[begin : end + unit.end()].strip()


def _with_context(
    chosen: list[ScoredSentence], ranked: Sequence[ScoredSentence]
) -> list[ScoredSentence]:
    """The chosen sentences, with the one before the best when it opens with an anaphor.

    A best sentence ending in a colon ("Symptoms include:") comes with the lines after it
    instead, up to `PARAMS.max_answer_sentences` in all.

    "For this reason X is contraindicated" says nothing without the sentence it refers to;
    that sentence joins the answer (taking the last place if three are chosen already).
    """
    if not chosen:
        return chosen
    best = chosen[0].sentence
    if best.text.endswith(":"):
        # "Symptoms include:" says nothing without the lines it introduces.
        following = [
            s
            for s in ranked
            if s.sentence.doc == best.doc
            and 0 < s.sentence.position - best.position < PARAMS.max_answer_sentences
        ]
        following.sort(key=lambda s: s.sentence.position)
        return [chosen[0], *following]
    if best.position == 0 or not _ANAPHORA_RE.match(best.text):
        return chosen
    previous = next(
        (
            s
            for s in ranked
            if s.sentence.doc == best.doc and s.sentence.position == best.position - 1
        ),
        None,
    )
    if previous is None or previous in chosen:
        return chosen
    return [*chosen[: PARAMS.max_answer_sentences - 1], previous]


def _best_sentences(ranked: Sequence[ScoredSentence]) -> list[ScoredSentence]:
    if not ranked or ranked[0].score <= 0:
        return []
    best = ranked[0]
    chosen = [best]
    for scored in ranked[1:]:
        if len(chosen) >= PARAMS.max_answer_sentences:
            break
        if scored.score < PARAMS.extra_sentence_share * best.score:
            break
        if scored.sentence.doc != best.sentence.doc:
            continue  # one source's sentences read as one answer; others may disagree
        terms = scored.sentence.terms
        if any(jaccard(terms, c.sentence.terms) >= PARAMS.duplicate_jaccard for c in chosen):
            continue
        chosen.append(scored)
    return chosen
