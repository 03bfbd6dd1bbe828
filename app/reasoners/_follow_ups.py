"""A follow-up's answer must answer the new question, not repeat the earlier turn's answer.

On a thread, the sentence that answered the previous question is close to the follow-up
too (it is about the same subject), so it often wins again: "How old do you have to be to
order one?" after "How long do the kit's results take?" would be answered with the results
sentence. An answer is a repeat when the earlier turn gave a value and the answer stands on
the earlier answer's sentences (or gives that value again) and says nothing the new
question asks beyond what the earlier one did: no new value read from the sentence, no
figure the earlier answer did not give ("until 8.15pm" after "Thursday"), none of the
words only the new question uses. After a yes/no answer nothing is a repeat: that
question asked only whether. A repeat is no answer; the follow-up abstains saying so.

A thread is about the documents its earlier answer cited: a follow-up's evidence holds them
first (`thread_first`), so a sentence of the thread's document that says what is asked now
is read as the retrieval's first choice, not as a stray note the search ranked lower.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.answers import normalize_answer
from prefrag.reasoners._answering import abstention, span_sentence
from prefrag.reasoners._text import split_sentences, term_set
from prefrag.reasoners.base import AnswerDraft, PriorTurn, ScratchpadStep

_VERDICT_RE = re.compile(r"^\s*(?:yes|no)\b", re.IGNORECASE)
_FIGURE_RE = re.compile(r"\d+(?:[.:]\d+)?")


def thread_first(
    question: str, evidence: Sequence[Document], earlier: PriorTurn | None
) -> list[Document]:
    """`evidence` with the documents the earlier turn cited first, else in its own order.

    Not when the question names another held document by its title ("What about
    ramipril?" after a lisinopril answer) or a name neither the earlier question nor the
    thread's titles hold ("And the Lesne?"): the thread has moved to that subject.
    """
    cited = {normalize_answer(title) for title in earlier.titles} if earlier else set()
    if not cited:
        return list(evidence)

    def of_thread(doc: Document) -> bool:
        return normalize_answer(_title(doc)) in cited

    thread_terms = term_set(" ".join(_title(doc) for doc in evidence if of_thread(doc)))
    if not thread_terms:
        return list(evidence)
    asked = term_set(question) - thread_terms
    names = term_set(" ".join(w for w in question.split()[1:] if w[:1].isupper()))
    if names & asked - term_set(earlier.question if earlier else ""):
        return list(evidence)
    if any(term_set(_title(doc)) & asked for doc in evidence if not of_thread(doc)):
        return list(evidence)
    return sorted(evidence, key=lambda doc: not of_thread(doc))


def _title(doc: Document) -> str:
    return str(doc.metadata.get("title") or "")


def answered_anew(
    question: str,
    draft: AnswerDraft,
    earlier: PriorTurn | None,
    scratchpad: Sequence[ScratchpadStep],
) -> AnswerDraft:
    """`draft`, or an abstention when it only repeats the earlier turn's answer."""
    if earlier is None or not repeats(question, draft, earlier):
        return draft
    reason = (
        "the only sentences that say it are the earlier answer, to "
        f"'{earlier.question.strip()}', and say nothing more of what is asked now"
    )
    return abstention(scratchpad, reason, draft.confidence or 0.0)


def repeats(question: str, draft: AnswerDraft, earlier: PriorTurn) -> bool:
    """Whether `draft` says again what answered `earlier` and nothing new for `question`."""
    if draft.abstained or earlier.abstained or not earlier.short_answer.strip():
        return False  # without the value it gave, what the earlier answer said is unknown
    if _VERDICT_RE.match(earlier.answer):
        return False  # a yes/no asked only whether: its sentence may say how much, or when
    if normalize_answer(question) == normalize_answer(earlier.question):
        return False  # the same question asked again gets the same answer
    said = _sentences_of(draft)
    earlier_sentences = {normalize_answer(s) for s in split_sentences(earlier.answer)}
    same_sentences = bool(said) and all(normalize_answer(s) in earlier_sentences for s in said)
    earlier_value = normalize_answer(earlier.short_answer or earlier.answer)
    value = normalize_answer(draft.short_answer)
    same_value = bool(value) and value == earlier_value
    if not (same_sentences or same_value):
        return False
    if value and not same_value:
        return False  # a new value read from the same sentence answers the new question
    if _figures(" ".join(said)) - _figures(earlier.short_answer):
        return False  # the sentence holds a figure the earlier answer did not give
    only_now = term_set(question) - term_set(earlier.question)
    return not only_now & term_set(" ".join(said))


def _figures(text: str) -> set[str]:
    return set(_FIGURE_RE.findall(text))


def _sentences_of(draft: AnswerDraft) -> list[str]:
    """The sentences a draft stands on: a span's sentence, else the answer's own."""
    source = span_sentence(draft)
    return list(split_sentences(source if source is not None else draft.answer))
