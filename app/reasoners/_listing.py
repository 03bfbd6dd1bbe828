"""List answers: the sentences that enumerate what a list question asks for.

Besides a sentence listing items, a list is read from a bullet list or table a judged
sentence belongs to (`block_answer`), from the list or table a sentence announces ("one of
four risk groups" above the table of groups: `announced_list`), and from the section a
question names by its heading (`section_answer`).
"""

from __future__ import annotations

import re

from prefrag.reasoners._evidence import (
    Evidence,
    Sentence,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    Judged,
    plain,
)
from prefrag.reasoners._shapes import (
    series_items,
)
from prefrag.reasoners._text import (
    QuestionShape,
    term_set,
    unique,
)
from prefrag.reasoners.base import (
    AnswerDraft,
)

# "Guests may pick them", "Any of the three means ...": the list is the sentence before.
_REFERS_BACK = re.compile(
    r"\b(?:them|these|those|they|both|each of them|either"
    r"|(?:the|all|any of the|each of the) (?:two|three|four|five|six))\b",
    re.IGNORECASE,
)


def referred_to(evidence: Evidence, sentence: Sentence) -> Sentence | None:
    """The sentence before `sentence` in its document when `sentence` refers back to it."""
    if sentence.position == 0 or not _REFERS_BACK.search(sentence.text):
        return None
    return evidence.sentence_before(sentence)


def listing_answer(
    shape: QuestionShape, evidence: Evidence, confident: list[Judged]
) -> AnswerDraft | None:
    """The sentences that list what a list question asks for, whole and cited, or None.

    The deciding sentence is the most confident one enumerating two or more items ("A, B
    and C", "such as D", a label line's "Tests: A, B, C", a series of phrases:
    `_shapes.series_items`), when it is about as confident as the best sentence of all (else
    the best sentences answer, whole); a further sentence of its document joins it when it
    enumerates items too and is nearly as confident (a list carried over two sentences). A
    list reached through a sentence pointing back to it ("Any of the three means ...") is read
    out with that sentence. The items
    alone are the short answer: cut out of their sentence, an item ("tremor") loses what
    qualifies it ("coarse tremor"), so the answer keeps the sentences.
    """
    question_terms = term_set(shape.text)
    listing: list[tuple[Sentence, float]] = []
    # A list reached through a sentence referring back to it is read out with that sentence
    # ("... Any of the three means a suspected fracture."): it says what the list is of.
    referrers: dict[Sentence, Sentence] = {}
    # Only a sentence about as confident as the best one decides: a list further down
    # ("oranges and pomelos contain related compounds") is not what is asked.
    floor = PARAMS.list_sentence_share * confident[0].confidence if confident else 1.0
    for judged in (j for j in confident if j.confidence >= floor):
        whole = (
            block_answer(evidence, judged)
            or announced_list(evidence, judged, question_terms)
            or section_answer(evidence, judged, question_terms)
        )
        if whole is not None:
            return whole
        # A sentence reached through another ("Marrowick is a market town ...") was led to
        # by a sentence naming it; when that one lists, it is the list asked for.
        # A sentence that refers back to a list ("Guests may pick them") is answered by
        # the list it refers to: the sentence before it in its document.
        referred = referred_to(evidence, judged.scored.sentence)
        for sentence in (judged.scored.sentence, judged.scored.link, referred):
            if sentence is not None and len(series_items(sentence.text, question_terms)) >= 2:
                listing.append((sentence, judged.confidence))
                if sentence is referred:
                    referrers.setdefault(sentence, judged.scored.sentence)
                break
    if not listing:
        return None
    best, confidence = listing[0]
    chosen = [best]
    for other, other_confidence in listing[1:]:
        if other.doc != best.doc or other in chosen:
            continue
        if other_confidence >= PARAMS.list_sentence_share * confidence:
            chosen.append(other)
        break
    items = unique([i for c in chosen for i in series_items(c.text, question_terms)])
    chosen += [referrers[c] for c in chosen if c in referrers and referrers[c] not in chosen]
    chosen.sort(key=lambda sentence: sentence.position)
    return AnswerDraft(
        answer=" ".join(c.text for c in chosen),
        short_answer=", ".join(items[:-1]) + " and " + items[-1],
        cited_ids=unique([evidence.ids[c.doc] for c in chosen]),
        rationale="Listed in: " + " ".join(c.text for c in chosen),
        confidence=confidence,
    )


_ITEM_END = " ;,."
# A list longer than this is pasted, not read out: its sentences answer instead.
MAX_LIST_WORDS = 90


def block_answer(evidence: Evidence, judged: Judged) -> AnswerDraft | None:
    """The whole list a judged bullet, lead line or table row belongs to, or None.

    "What stops X being absorbed?" is answered by every bullet under "These stop it being
    absorbed:", not by the one bullet closest to the question: the lead line (when there is
    one) and the items, read out in order as one sentence, each item whole. A table's rows
    are its items. A list of one item, or one too long to read out, is no list answer.
    """
    sentence = judged.scored.sentence
    if sentence.block is None:
        return None
    members = sorted(
        (s for s in evidence.sentences if s.doc == sentence.doc and s.block == sentence.block),
        key=lambda s: s.position,
    )
    texts = [plain(s.text).strip(_ITEM_END) for s in members]
    lead = texts[0] if texts[0].endswith(":") or _is_lead(members[0]) else ""
    items = [t for t in (texts[1:] if lead else texts) if t]
    if len(items) < 2:
        return None
    lead = lead if not lead or lead.endswith(":") else lead + ":"
    answer = (f"{lead} " if lead else "") + "; ".join(items) + "."
    return _read_out(evidence, judged, answer, "; ".join(items), "Listed in: " + answer)


def _members(evidence: Evidence, sentence: Sentence) -> list[Sentence]:
    """The sentences of `sentence`'s list (bullets, lead line, table rows), in order."""
    return sorted(
        (s for s in evidence.sentences if s.doc == sentence.doc and s.block == sentence.block),
        key=lambda s: s.position,
    )


# "one of four risk groups", "the three signs": a count of the things a list names.
_COUNTED_RE = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|[2-9])\s+((?:[\w-]+\s+){0,2}[\w-]+)",
    re.IGNORECASE,
)
# A table row read as "first cell, header: value; header: value".
_ROW_NAME_RE = re.compile(r"^([^,:;]{1,40}), [^,:;]{1,40}: ")


def announced_list(
    evidence: Evidence, judged: Judged, question_terms: frozenset[str]
) -> AnswerDraft | None:
    """The list or table a judged sentence announces, read out after it, or None.

    "The result puts the person in one of four risk groups ..." above a table of the
    groups answers "What are the risk groups?" with the groups: the sentence counts the
    things asked for (or ends with a colon) and the next line of its document opens a
    list. A table's items are its rows' first cells (the groups, not every column).
    """
    sentence = judged.scored.sentence
    if sentence.block is not None:
        return None
    counted = [term_set(m.group(1)) for m in _COUNTED_RE.finditer(sentence.text)]
    if not sentence.text.rstrip().endswith(":") and not any(c & question_terms for c in counted):
        return None
    following = next(
        (
            s
            for s in evidence.sentences
            if s.doc == sentence.doc and s.position == sentence.position + 1
        ),
        None,
    )
    if following is None or following.block is None:
        return None
    texts = [plain(s.text).strip(_ITEM_END) for s in _members(evidence, following)]
    rows = [_ROW_NAME_RE.match(t) for t in texts]
    items = [r.group(1) for r in rows if r] if all(rows) else texts
    items = [i for i in items if i]
    if len(items) < 2:
        return None
    answer = f"{plain(sentence.text).rstrip(_ITEM_END)}: {'; '.join(items)}."
    return _read_out(evidence, judged, answer, "; ".join(items), "Listed in: " + answer)


# A section read out for a list question is this short (its first sentences).
MAX_SECTION_SENTENCES = 3


def section_answer(
    evidence: Evidence, judged: Judged, question_terms: frozenset[str]
) -> AnswerDraft | None:
    """The opening sentences of the section a list question names by its heading, or None.

    "What side effects can X cause?" is answered by the sentences under "## Side
    effects", not by the one that matched best: the heading's words are all in the
    question, so the section is what is asked for, its items spread over its sentences.
    """
    sentence = judged.scored.sentence
    if not sentence.section or not sentence.section <= question_terms:
        return None
    section = sorted(
        (
            s
            for s in evidence.sentences
            if s.doc == sentence.doc and s.heading == sentence.heading and s.block is None
        ),
        key=lambda s: s.position,
    )[:MAX_SECTION_SENTENCES]
    if len(section) < 2 or sentence not in section:
        return None
    answer = " ".join(s.text for s in section)
    return _read_out(evidence, judged, answer, "", "Under the heading: " + sentence.heading)


def _read_out(
    evidence: Evidence, judged: Judged, answer: str, short_answer: str, rationale: str
) -> AnswerDraft | None:
    """`answer`, citing the judged sentence's document, or None if too long to read out."""
    if len(answer.split()) > MAX_LIST_WORDS:
        return None
    return AnswerDraft(
        answer=answer,
        short_answer=short_answer,
        cited_ids=[evidence.ids[judged.scored.sentence.doc]],
        rationale=rationale,
        confidence=judged.confidence,
    )


def _is_lead(sentence: Sentence) -> bool:
    """Whether the first sentence of a list is its lead line (bold), not its first item."""
    return sentence.text.startswith("**") and sentence.text.endswith("**")


def completed_list(
    evidence: Evidence, confident: list[Judged], draft: AnswerDraft
) -> AnswerDraft | None:
    """The whole list when a sentences answer opens with two or more of its items, or None.

    "When do we refer to the renal team?" matched three of the four bullets under that
    heading best: a list answers whole or not at all, so the fourth joins them.
    """
    # Only when the best sentence is one of the list's: a list further down is not asked.
    for judged in confident[:1]:
        block = judged.scored.sentence.block
        if block is None:
            continue
        shown = [
            s
            for s in evidence.sentences
            if s.doc == judged.scored.sentence.doc and s.block == block and s.text in draft.answer
        ]
        if len(shown) >= 2:
            whole = block_answer(evidence, judged)
            if whole is not None:
                return whole.model_copy(update={"short_answer": ""})
    return None
