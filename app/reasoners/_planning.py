"""Planning for the extractive reasoner: what to search next, in which source, or to answer."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.reasoners._answering import answer_question, draft_answer, rejected_answers
from prefrag.reasoners._bridges import described_thing, first_hop, found_name, second_hop
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    rank_sentences,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import Embed
from prefrag.reasoners._records import described_row, held_tables
from prefrag.reasoners._support import (
    anchored,
    answer_is_bridge,
    bridge_gap,
    compared_names,
    compose_query,
    fits_type,
    is_settled,
    missing_for,
    observed_documents,
    query_key,
    subjects_of,
    unresolved_words,
)
from prefrag.reasoners._text import (
    QuestionShape,
    analyze_question,
    jaccard,
    term_set,
    unique,
)
from prefrag.reasoners.base import (
    Feedback,
    ScratchpadStep,
    ThinkDecision,
)


def plan(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    *,
    force_answer: bool,
    feedback: Feedback | None,
    embed: Embed | None = None,
) -> ThinkDecision:
    """Search with the question, then with bridge sub-queries, until the evidence suffices.

    The first step searches with the question; later steps follow a bridge entity found in
    the evidence (a name near the question's words whose own document is not held yet) and
    add the part of the question still unresolved, or answer once the evidence supports one.
    A negative reflection's leads are searched for first. With no entity left to look up,
    the leftover words of the question are searched right after the question's own search,
    later only while no answer of the asked type is drafted: a late search without a lead
    seldom finds what such an answer lacks, and costs a retrieval. When the retrieval
    budget is spent the answer is drafted as `answer` drafts it, with MiniLM (`embed`).
    """
    shape = analyze_question(question)
    evidence_docs = observed_documents(scratchpad)
    asked = {query_key(step.query) for step in scratchpad if step.query}
    if force_answer:
        draft = answer_question(question, scratchpad, evidence_docs, feedback=feedback, embed=embed)
        return ThinkDecision(
            thought="The retrieval budget is spent; answering from the evidence held.",
            action="answer",
            answer=draft.answer,
            cited_ids=draft.cited_ids,
            abstained=draft.abstained,
            confidence=draft.confidence,
            short_answer=draft.short_answer,
            fallback=draft.fallback,
        )
    hinted = feedback_leads(feedback, asked)
    if not evidence_docs:
        return first_search(shape, scratchpad, asked, hinted)

    evidence = Evidence(evidence_docs)
    weights = QuestionWeights(shape, evidence)
    ranked = rank_sentences(shape, evidence, weights)
    for entity in hinted:
        if not evidence.has_document(entity):
            query = compose_query(entity, shape, frozenset())
            if query_key(query) not in asked:
                return ThinkDecision(
                    thought=f"The reflection points at '{entity}', which the evidence lacks.",
                    query=query,
                )
    hop = second_hop_search(question, scratchpad, evidence_docs, asked)
    if hop is not None:
        return hop
    if shape.kind in ("choice", "yesno"):
        # Each compared side needs a document of its own: a page that merely mentions
        # the other side says nothing about its dates or numbers.
        missing = [c for c in subjects_of(shape) if not evidence.has_document(c)]
        for name in missing:
            query = compose_query(name, shape, term_set(" ".join(subjects_of(shape))))
            if query_key(query) not in asked:
                return ThinkDecision(
                    thought=f"The evidence covers the other option but not '{name}'; "
                    f"looking it up.",
                    query=query,
                )
        draft, _, _ = draft_answer(shape, evidence, weights, ranked, rejected_answers(feedback))
        return ThinkDecision(
            thought="The evidence describes every option the question names; answering.",
            action="answer",
            answer=draft.answer,
        )

    draft, support, scored = draft_answer(
        shape, evidence, weights, ranked, rejected_answers(feedback)
    )
    if draft.answer and is_settled(shape, evidence, weights, draft.answer, scored):
        return ThinkDecision(
            thought=f"'{draft.answer}' is the {shape.answer_type} the question asks for, "
            "reached through a held bridge document and naming all it asks about; answering.",
            action="answer",
            answer=draft.answer,
        )
    if draft.answer and support >= PARAMS.answer_support:
        missing = missing_for(shape, evidence, scored)
        if not missing and answer_is_bridge(shape, evidence, draft.answer, scored):
            query = compose_query(draft.answer, shape, scored.covered if scored else frozenset())
            if query_key(query) not in asked:
                return ThinkDecision(
                    thought=f"'{draft.answer}' is the entity the question describes, and "
                    "nothing held is about it yet; looking up what the question asks of it.",
                    query=query,
                )
        if not missing:
            return ThinkDecision(
                thought=f"'{draft.answer}' is supported by sentences covering {support:.0%} "
                "of the question and naming all it asks about; answering.",
                action="answer",
                answer=draft.answer,
            )
        lead = lead_for_missing(shape, evidence, ranked, missing, asked)
        if lead is not None:
            return lead
        return ThinkDecision(
            thought=f"'{draft.answer}' is supported, but the evidence lacks "
            + ", ".join(f"'{m}'" for m in missing)
            + " and no search is left to find it; answering.",
            action="answer",
            answer=draft.answer,
        )
    bridge = bridge_search(shape, evidence, ranked, asked)
    if bridge is not None:
        entity, query = bridge
        return ThinkDecision(
            thought=f"The evidence links the question to '{entity}', but nothing held "
            f"is about it yet; searching for it with what remains unresolved.",
            query=query,
        )
    unresolved = unresolved_words(shape, ranked[0].covered if ranked else frozenset())
    query = anchored(shape, unresolved)
    blind_search_left = unresolved and query_key(query) not in asked and query != shape.text
    typed_draft = bool(draft.answer) and fits_type(shape, draft.answer)
    if blind_search_left and (len(scratchpad) == 1 or not typed_draft):
        return ThinkDecision(
            thought="No new bridge entity; searching for the unresolved part of the question.",
            query=query,
        )
    return ThinkDecision(
        thought="No entity left to look up; answering with the best-supported span.",
        action="answer",
        answer=draft.answer,
    )


def second_hop_search(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence_docs: Sequence[Document],
    asked: set[str],
) -> ThinkDecision | None:
    """A search for the question asked of the thing it describes, once that thing is named.

    "When was the engineer of the Tollard Viaduct born?": once the held evidence answers
    "Which engineer of the Tollard Viaduct?" with a name, the question asked of that name
    ("When was Ada Pell born?") is searched for, so the name's own document is held, unless
    it is held already. A table row the description picks out names it first (its key:
    `_records.described_row`).
    """
    described = described_thing(question)
    if described is None or analyze_question(question).kind != "factoid":
        return None
    row, _ = described_row(held_tables(evidence_docs), described.clause, question)
    name = row or found_name(
        answer_question(first_hop(described), scratchpad, evidence_docs), question
    )
    if not name or Evidence(evidence_docs).has_document(name):
        # Its own document is held already: the answer reads it (`_bridges`).
        return None
    query = second_hop(question, described, name)
    if not query or query_key(query) in asked:
        return None
    return ThinkDecision(
        thought=f"{described.text} is '{name}' in the evidence; searching for what the "
        "question asks of it.",
        query=query,
    )


def first_search(
    shape: QuestionShape,
    scratchpad: Sequence[ScratchpadStep],
    asked: set[str],
    hinted: list[str],
) -> ThinkDecision:
    """The first search: the question (with any leads), else its key terms."""
    candidates = [f"{shape.text} {' '.join(hinted)}".strip(), shape.text]
    candidates.append(" ".join(unresolved_words(shape, frozenset())))
    for query in candidates:
        if query and query_key(query) not in asked:
            thought = (
                "Nothing retrieved yet; searching with the question."
                if not scratchpad
                else "Earlier searches found nothing; rephrasing with the key terms."
            )
            return ThinkDecision(thought=thought, query=query)
    return ThinkDecision(
        thought="Every search came back empty; no evidence to answer from.",
        action="answer",
    )


def feedback_leads(feedback: Feedback | None, asked: set[str]) -> list[str]:
    """Names a negative reflection says to search for, not searched for yet."""
    if feedback is None:
        return []
    names = [lead for lead in feedback.leads if term_set(lead)]
    return [n for n in unique(names) if query_key(n) not in asked]


def source_index(name: str, sources: Sequence[str]) -> int | None:
    """Position in `sources` of the source a step used (entries may carry a note after the name).

    A step that used several sources ("local+web") counts as on the last of them.
    """
    for part in reversed(name.split("+")):
        part = part.strip().lower()
        for index, entry in enumerate(sources):
            entry = entry.strip().lower()
            if part and (entry == part or entry.startswith(part + " ")):
                return index
    return None


def next_source(question: str, scratchpad: Sequence[ScratchpadStep], sources: Sequence[str]) -> str:
    """The source for the next search: stay on the current one while it brings something.

    The current source is the latest step's; when that step returned only documents already
    held (by id or near-duplicate text) or none relevant to the question, the next source in
    `sources` order is tried (a ReAct agent switching tools when one stops helping).
    """
    if not scratchpad:
        return sources[0]
    current = source_index(scratchpad[-1].source, sources)
    if current is None:
        return sources[0]
    if current + 1 < len(sources) and not step_helped(question, scratchpad):
        current += 1
    return sources[current]


def step_helped(question: str, scratchpad: Sequence[ScratchpadStep]) -> bool:
    """Whether the latest step brought a document that is new and relevant to the question."""
    held = observed_documents(scratchpad[:-1])
    held_ids = {doc_id(d) for d in held}
    held_terms = [term_set(d.page_content) for d in held]
    new = [
        d
        for d in unique_documents(scratchpad[-1].observation)
        if doc_id(d) not in held_ids
        and not any(
            jaccard(term_set(d.page_content), t) >= PARAMS.duplicate_jaccard for t in held_terms
        )
    ]
    if not new:
        return False
    shape = analyze_question(question)
    weights = QuestionWeights(shape, Evidence([*held, *new]))
    keys = frozenset(weights.weights)
    for document in new:
        title = str(document.metadata.get("title") or "")
        terms = term_set(f"{title} {document.page_content}") & keys
        if weights.share(terms) >= PARAMS.relevant_share:
            return True
    return False


def bridge_search(
    shape: QuestionShape,
    evidence: Evidence,
    ranked: Sequence[ScoredSentence],
    asked: set[str],
) -> tuple[str, str] | None:
    """The bridge entity the evidence points to and the query for it, unless already asked."""
    gap = bridge_gap(shape, evidence, ranked)
    if gap is None:
        return None
    entity, covered = gap
    query = compose_query(entity, shape, covered)
    return None if query_key(query) in asked else (entity, query)


def lead_for_missing(
    shape: QuestionShape,
    evidence: Evidence,
    ranked: Sequence[ScoredSentence],
    missing: Sequence[str],
    asked: set[str],
) -> ThinkDecision | None:
    """A search for what an otherwise supported answer lacks, or None when none is left.

    In order: a compared entity without its own document; the bridge entity the evidence
    points to (its document likely holds the missing names and years); the missing names
    themselves, with the question's anchor.
    """
    compared = [m for m in missing if m in compared_names(shape)]
    for name in compared:
        query = compose_query(name, shape, term_set(" ".join(compared_names(shape))))
        if query_key(query) not in asked:
            return ThinkDecision(
                thought=f"The evidence has no document about '{name}', which the question "
                "compares; looking it up.",
                query=query,
            )
    bridge = bridge_search(shape, evidence, ranked, asked)
    if bridge is not None:
        entity, query = bridge
        return ThinkDecision(
            thought="The answer's evidence does not mention "
            + ", ".join(f"'{m}'" for m in missing)
            + f"; the evidence points to '{entity}', which nothing held is about yet.",
            query=query,
        )
    for name in missing:
        if evidence.covers(name):
            continue
        query = anchored(shape, [name, *unresolved_words(shape, term_set(name))])
        if query_key(query) not in asked:
            return ThinkDecision(
                thought=f"Nothing held mentions '{name}'; searching for it.", query=query
            )
    return None
