"""`ExtractiveReasoner`: every PrefRAG decision made from the retrieved evidence alone, no model.

It is the default reasoner when no model is configured, so the graph runs anywhere:

- think: the first step searches with the question; later steps follow a bridge entity found
  in the evidence (a name near the question's words whose own document is not held yet) and
  add the part of the question still unresolved, or answer once the evidence supports one
  (a typed answer at the end of a held bridge chain needs no further bridge). With several
  sources, a search names one: the current source until a step of it brings nothing new and
  relevant, then the next in order (the graph itself ignores this beyond fallback order).
- compare: new documents help when they are not near-duplicates of held ones (by id, word
  overlap and, optionally, embedding cosine) and are relevant to the question or its gap.
- answer: the best-supported span of the expected type from the best sentence, a choice
  between the two options a question names, or yes/no from the subjects' documents.
- reflect: a support check of the answer against the evidence and the question's key terms;
  a supported answer of the wrong type, or whose sentence states none of the question's
  relation words, is only PARTIALLY CORRECT.

Decisions are deterministic: the same inputs always give the same outputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    answer_candidates,
    rank_sentences,
    words_of,
)
from prefrag.reasoners._text import (
    QuestionShape,
    analyze_question,
    candidate_spans,
    jaccard,
    mentions,
    normalize_answer,
    number_of,
    split_sentences,
    stem,
    term_set,
    unique,
    year_of,
)
from prefrag.reasoners._verdicts import descriptor, is_demonym, nationalities
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    Reflection,
    ReflectionLabel,
    ScratchpadStep,
    ThinkDecision,
)

if TYPE_CHECKING:
    from prefrag.index.embeddings import Embedder
    from prefrag.reasoners.plans import SourceBrief, SourcePlan
    from prefrag.reasoners.small_switcher import Switcher

# Share of the question's term weight the answer's supporting sentences must cover.
_ANSWER_SUPPORT = 0.6
_WEAK_SUPPORT = 0.3
# Near-duplicate thresholds: word-set Jaccard and embedding cosine.
_DUPLICATE_JACCARD = 0.8
_DUPLICATE_COSINE = 0.95
# Relevance thresholds for a new document: share of question weight, embedding cosine.
_RELEVANT_SHARE = 0.25
_RELEVANT_COSINE = 0.45
# A yes/no property holds for a subject when its documents cover this share of its terms.
_PROPERTY_COVERAGE = 0.75
_MAX_QUERY_WORDS = 8
# Sentences holding the answer that reflect checks for the question's names and years.
_REFLECT_SENTENCES = 8
# Share of a multi-word name's terms a text must hold to count as naming it.
_NAME_MATCH = 0.67
_COMPARATIVE_TERMS = frozenset(
    stem(w)
    for w in "first earlier older before later younger recent more larger bigger higher "
    "taller longer greater fewer less smaller lower shorter most largest".split()
)
# A question that describes an unnamed entity ("the woman who portrayed", "a film directed by
# whom") asks something of that entity: a two-hop (bridge) question.
_BRIDGE_SHAPE_RE = re.compile(
    r"\b(?:a|an|the|this|that)\s+(?:[\w'\-]+\s+){0,4}?(?:who|whom|that|which|whose|where)\b"
    r"|\b\w+ed by (?:who|whom|what|which)\b",
    re.IGNORECASE,
)
_NOISE_WORDS = frozenset(
    "what which who whom whose when where why how many much did does do is are was were "
    "name named known called the a an of in on at to for by with from and or as that this".split()
)


class ExtractiveReasoner:
    """A `Reasoner` that decides from retrieval evidence with regex, term weights and numpy.

    Args:
        embedder: An embedder for the switcher's duplicate and relevance checks; loaded
            lazily with `get_embedder()` when omitted and `use_embeddings` is true.
        use_embeddings: Use embedding cosine in `compare` besides word overlap. When the
            embedder cannot load, the reasoner silently keeps to word overlap.
        switcher: A trained switcher (e.g. `SmallSwitcher`) that `compare` delegates to.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        use_embeddings: bool = True,
        switcher: Switcher | None = None,
    ) -> None:
        self.switcher = switcher
        self._embedder = embedder
        self.use_embeddings = use_embeddings
        self._embedder_failed = False
        self._vectors: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ think

    def think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        sources: Sequence[str] = (),
        force_answer: bool = False,
        feedback: str = "",
    ) -> ThinkDecision:
        """Search with the question, then with bridge sub-queries, until evidence suffices.

        With several `sources`, a search names one: the source of the latest step, or the
        next one in `sources` order when that step brought nothing new and relevant.
        """
        decision = self._think(question, scratchpad, force_answer=force_answer, feedback=feedback)
        if decision.action == "search" and len(sources) > 1:
            decision.source = _next_source(question, scratchpad, sources)
        return decision

    def _think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        force_answer: bool,
        feedback: str,
    ) -> ThinkDecision:
        shape = analyze_question(question)
        evidence_docs = _observed(scratchpad)
        asked = {_query_key(step.query) for step in scratchpad if step.query}
        if force_answer:
            draft = self.answer(question, scratchpad, evidence_docs, feedback=feedback)
            return ThinkDecision(
                thought="The retrieval budget is spent; answering from the evidence held.",
                action="answer",
                answer=draft.answer,
                cited_ids=draft.cited_ids,
                fallback=draft.fallback,
            )
        hinted = _feedback_entities(feedback, shape, asked)
        if not evidence_docs:
            return self._first_search(shape, scratchpad, asked, hinted)

        evidence = Evidence(evidence_docs)
        weights = QuestionWeights(shape, evidence)
        ranked = rank_sentences(shape, evidence, weights)
        for entity in hinted:
            if not evidence.has_document(entity):
                query = _compose_query(entity, shape, frozenset())
                if _query_key(query) not in asked:
                    return ThinkDecision(
                        thought=f"The reflection points at '{entity}', which the evidence lacks.",
                        query=query,
                    )
        if shape.kind in ("choice", "yesno"):
            # Each compared side needs a document of its own: a page that merely mentions
            # the other side says nothing about its dates or numbers.
            missing = [c for c in _subjects(shape) if not evidence.has_document(c)]
            for name in missing:
                query = _compose_query(name, shape, term_set(" ".join(_subjects(shape))))
                if _query_key(query) not in asked:
                    return ThinkDecision(
                        thought=f"The evidence covers the other option but not '{name}'; "
                        f"looking it up.",
                        query=query,
                    )
            draft, _, _ = self._draft(shape, evidence, weights, ranked, feedback)
            return ThinkDecision(
                thought="The evidence describes every option the question names; answering.",
                action="answer",
                answer=draft.answer,
            )

        draft, support, scored = self._draft(shape, evidence, weights, ranked, feedback)
        if draft.answer and _settled(shape, evidence, weights, draft.answer, scored):
            return ThinkDecision(
                thought=f"'{draft.answer}' is the {shape.answer_type} the question asks for, "
                "reached through a held bridge document and naming all it asks about; answering.",
                action="answer",
                answer=draft.answer,
            )
        if draft.answer and support >= _ANSWER_SUPPORT:
            missing = _missing_for(shape, evidence, scored)
            if not missing and _answer_is_bridge(shape, evidence, draft.answer, scored):
                query = _compose_query(
                    draft.answer, shape, scored.covered if scored else frozenset()
                )
                if _query_key(query) not in asked:
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
            lead = _lead_for_missing(shape, evidence, ranked, missing, asked)
            if lead is not None:
                return lead
            return ThinkDecision(
                thought=f"'{draft.answer}' is supported, but the evidence lacks "
                + ", ".join(f"'{m}'" for m in missing)
                + " and no search is left to find it; answering.",
                action="answer",
                answer=draft.answer,
            )
        gap = _bridge_gap(shape, evidence, ranked)
        if gap is not None:
            entity, covered = gap
            query = _compose_query(entity, shape, covered)
            if _query_key(query) not in asked:
                return ThinkDecision(
                    thought=f"The evidence links the question to '{entity}', but nothing held "
                    f"is about it yet; searching for it with what remains unresolved.",
                    query=query,
                )
        unresolved = _unresolved_words(shape, ranked[0].covered if ranked else frozenset())
        query = _anchored(shape, unresolved)
        if unresolved and _query_key(query) not in asked and query != shape.text:
            return ThinkDecision(
                thought="No new bridge entity; searching for the unresolved part of the question.",
                query=query,
            )
        return ThinkDecision(
            thought="No new lead in the evidence; answering with the best-supported span.",
            action="answer",
            answer=draft.answer,
        )

    def _first_search(
        self,
        shape: QuestionShape,
        scratchpad: Sequence[ScratchpadStep],
        asked: set[str],
        hinted: list[str],
    ) -> ThinkDecision:
        candidates = [f"{shape.text} {' '.join(hinted)}".strip(), shape.text]
        candidates.append(" ".join(_unresolved_words(shape, frozenset())))
        for query in candidates:
            if query and _query_key(query) not in asked:
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

    # ------------------------------------------------------------------ compare

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """True when some new document is neither a near-duplicate of held ones nor off-topic.

        A trained `switcher` given to the reasoner decides instead of this heuristic.
        """
        if self.switcher is not None:
            return self.switcher.compare(question, held, new)
        if not new:
            return CompareVerdict(analysis="The local source returned nothing new.", status=False)
        shape = analyze_question(question)
        held = unique_documents(held)
        held_ids = {doc_id(d) for d in held}
        held_terms = [term_set(d.page_content) for d in held]
        vectors = self._embed([d.page_content for d in (*held, *new)] + [question])
        novel: list[Document] = []
        duplicates = 0
        for index, document in enumerate(new):
            terms = term_set(document.page_content)
            if doc_id(document) in held_ids or any(
                jaccard(terms, other) >= _DUPLICATE_JACCARD for other in held_terms
            ):
                duplicates += 1
                continue
            if vectors is not None and held:
                cosine = vectors[len(held) + index] @ vectors[: len(held)].T
                if float(cosine.max()) >= _DUPLICATE_COSINE:
                    duplicates += 1
                    continue
            novel.append(document)
        if not novel:
            return CompareVerdict(
                analysis=f"All {len(new)} new documents repeat evidence already held.",
                status=False,
            )

        context = Evidence([*held, *new])
        weights = QuestionWeights(shape, context)
        gap_names = self._gap_names(shape, held)
        relevant: list[str] = []
        for document in novel:
            index = list(new).index(document)
            terms = term_set(document.page_content) | term_set(
                str(document.metadata.get("title") or "")
            )
            share = weights.share(terms & frozenset(weights.weights))
            cosine = float(vectors[len(held) + index] @ vectors[-1]) if vectors is not None else 0.0
            fills = [g for g in gap_names if term_set(g) and term_set(g) <= terms]
            title = str(document.metadata.get("title") or doc_id(document))
            if fills:
                relevant.append(f"'{title}' covers '{fills[0]}', which held evidence lacks")
            elif share >= _RELEVANT_SHARE:
                relevant.append(f"'{title}' matches {share:.0%} of the question's key terms")
            elif cosine >= _RELEVANT_COSINE:
                relevant.append(f"'{title}' is close to the question (cosine {cosine:.2f})")
        prefix = f"{len(novel)} of {len(new)} new documents are not in the held evidence"
        if duplicates:
            prefix += f" ({duplicates} repeat it)"
        if relevant:
            return CompareVerdict(analysis=f"{prefix}; " + "; ".join(relevant) + ".", status=True)
        return CompareVerdict(
            analysis=f"{prefix}, but none is relevant to the question or its missing part.",
            status=False,
        )

    def _gap_names(self, shape: QuestionShape, held: Sequence[Document]) -> list[str]:
        """Names the held evidence points to or the question asks about but nothing covers."""
        if not held:
            return list(shape.entities)
        evidence = Evidence(held)
        names = [c for c in _compared(shape) if not evidence.has_document(c)]
        names += [e for e in shape.entities if not evidence.covers(e)]
        ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
        gap = _bridge_gap(shape, evidence, ranked)
        if gap is not None:
            names.append(gap[0])
        return unique(names)

    # ------------------------------------------------------------------ answer

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: str = "",
    ) -> AnswerDraft:
        """The best-supported answer span (or yes/no, or one named option) with its sources."""
        shape = analyze_question(question)
        documents = unique_documents([*evidence, *_observed(scratchpad)])
        if not documents:
            return abstention(scratchpad, "nothing relevant was found")
        held = Evidence(documents)
        weights = QuestionWeights(shape, held)
        ranked = rank_sentences(shape, held, weights)
        draft = self._draft(shape, held, weights, ranked, feedback)[0]
        if not draft.answer.strip():
            return abstention(scratchpad, "no retrieved sentence is about what the question asks")
        return draft

    def _draft(
        self,
        shape: QuestionShape,
        evidence: Evidence,
        weights: QuestionWeights,
        ranked: list[ScoredSentence],
        feedback: str,
    ) -> tuple[AnswerDraft, float, ScoredSentence | None]:
        """The answer, its support and the sentence it came from.

        Support is the share of question weight the answer's evidence covers; the sentence
        is None for choice and yes/no answers.
        """
        if shape.kind in ("choice", "yesno"):
            subjects = _subjects(shape)
            covered = bool(subjects) and all(evidence.has_document(s) for s in subjects)
            support = 1.0 if covered else _WEAK_SUPPORT
            if shape.kind == "choice":
                return _choose(shape, evidence, weights), support, None
            return _yes_no(shape, evidence, weights, ranked), support, None
        rejected = _rejected_answer(feedback)
        if shape.answer_type == "sentence":
            candidates = []  # advice: the supporting sentence is the answer
        else:
            candidates = answer_candidates(shape, evidence, ranked, exclude=rejected)
        if not candidates and rejected and shape.answer_type != "sentence":
            # The rejected answer is still the only span of the expected type; a whole
            # sentence would be no better an answer.
            candidates = answer_candidates(shape, evidence, ranked)
        if candidates:
            best = candidates[0]
            cited = _support_ids(evidence, best.support)
            draft = AnswerDraft(
                answer=best.text, cited_ids=cited, rationale=f"From: {best.support.sentence.text}"
            )
            return draft, weights.share(best.support.covered), best.support
        if ranked and ranked[0].score > 0:
            # No span of the expected type: the best sentence itself is the answer.
            best_sentence = ranked[0]
            draft = AnswerDraft(
                answer=best_sentence.sentence.text,
                cited_ids=_support_ids(evidence, best_sentence),
                rationale="The best-supported sentence of the evidence.",
            )
            return draft, weights.share(best_sentence.covered), best_sentence
        draft = AnswerDraft(rationale="No evidence sentence shares a term with the question.")
        return draft, 0.0, None

    # ------------------------------------------------------------------ reflect

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        """CORRECT when evidence holds the answer and covers the question's key terms."""
        shape = analyze_question(question)
        documents = unique_documents(evidence)
        key = normalize_answer(answer)
        if not key or answer.startswith(ABSTENTION):
            return Reflection(
                label="INCORRECT",
                explanation="No answer was found in the evidence held.",
                suggestion=_suggest(shape, Evidence(documents) if documents else None),
            )
        if not documents:
            return Reflection(
                label="INCORRECT",
                explanation="No evidence supports the answer.",
                suggestion=_suggest(shape, None),
            )
        held = Evidence(documents)
        weights = QuestionWeights(shape, held)
        if shape.kind in ("choice", "yesno"):
            return _reflect_on_subjects(shape, held, key)
        ranked = rank_sentences(shape, held, weights)
        answer_terms = term_set(answer)
        containing = [
            s
            for s in ranked
            if key in normalize_answer(s.sentence.text)
            or (answer_terms and answer_terms <= s.sentence.terms)
        ]
        if not containing:
            return Reflection(
                label="INCORRECT",
                explanation=f"No evidence sentence contains '{answer}'.",
                suggestion=_suggest(shape, held),
            )
        # The answer's own sentence (and the bridge sentence leading to it) must name what
        # the question asks about; of the sentences holding the answer, take the one that
        # leaves the fewest names, titles and years of the question unaccounted for.
        checked = [(s, _missing_for(shape, held, s)) for s in containing[:_REFLECT_SENTENCES]]
        best, missing = min(checked, key=lambda pair: len(pair[1]))
        # Question terms a sentence naming the answer's document covers count too: that
        # sentence is how the question reaches the answer.
        support = weights.share(best.covered | _bridged_terms(held, best))
        if not missing and _settled(shape, held, weights, answer, best):
            # The standard `think` answers by: a typed answer at the end of a held chain.
            support = max(support, _ANSWER_SUPPORT)
        where = held.titles[best.sentence.doc] or held.ids[best.sentence.doc]
        if not missing and _answer_is_bridge(shape, held, answer, best):
            return Reflection(
                label="PARTIALLY CORRECT",
                explanation=f"'{answer}' is the entity the question describes through a "
                "relative clause, not what it asks about it; nothing held is about it.",
                suggestion=f"Search for '{answer}' "
                + " ".join(_unresolved_words(shape, best.covered | term_set(answer)))
                + ".",
            )
        doubt = _answer_doubt(shape, held, weights, answer, best)
        if support >= _ANSWER_SUPPORT and not missing and doubt:
            return Reflection(
                label="PARTIALLY CORRECT",
                explanation=f"'{answer}' appears in '{where}', but {doubt}.",
                suggestion=_suggest(shape, held, best.covered),
            )
        if support >= _ANSWER_SUPPORT and not missing:
            return Reflection(
                label="CORRECT",
                explanation=f"'{answer}' appears in '{where}', in evidence covering "
                f"{support:.0%} of the question's key terms and naming all it asks about.",
            )
        if missing:
            label: ReflectionLabel = (
                "PARTIALLY CORRECT" if support >= _WEAK_SUPPORT else "INCORRECT"
            )
            return Reflection(
                label=label,
                explanation=f"'{answer}' appears in '{where}', but the evidence behind it does "
                "not mention " + " or ".join(f"'{m}'" for m in missing) + ".",
                suggestion=_suggest_missing(shape, held, missing),
            )
        weak: ReflectionLabel = "PARTIALLY CORRECT" if support >= _WEAK_SUPPORT else "INCORRECT"
        unresolved = _unresolved_words(shape, best.covered)
        return Reflection(
            label=weak,
            explanation=f"'{answer}' appears in '{where}', but that evidence covers only "
            f"{support:.0%} of the question's key terms (missing: {', '.join(unresolved) or '-'}).",
            suggestion=_suggest(shape, held, best.covered),
        )

    def plan(self, question: str, sources: Sequence[SourceBrief]) -> SourcePlan:
        """Route the question to the best-described sources (`source_planner`)."""
        from prefrag.reasoners.source_planner import route_question

        return route_question(question, sources, embedder=self._embedder)

    # ------------------------------------------------------------------ embeddings

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        """Unit vectors of `texts`, or None when embeddings are off or unavailable."""
        if not self.use_embeddings or self._embedder_failed:
            return None
        if self._embedder is None:
            try:
                from prefrag.index.embeddings import get_embedder

                self._embedder = get_embedder()
            except Exception:
                self._embedder_failed = True
                return None
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            try:
                encoded = self._embedder.encode(missing)
            except Exception:
                self._embedder_failed = True
                return None
            if len(self._vectors) > 4096:
                self._vectors.clear()
            self._vectors.update(zip(missing, encoded, strict=True))
        return np.stack([self._vectors[t] for t in texts])


# ---------------------------------------------------------------------- helpers


def _observed(scratchpad: Sequence[ScratchpadStep]) -> list[Document]:
    return unique_documents(d for step in scratchpad for d in step.observation)


def _source_index(name: str, sources: Sequence[str]) -> int | None:
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


def _next_source(
    question: str, scratchpad: Sequence[ScratchpadStep], sources: Sequence[str]
) -> str:
    """The source for the next search: stay on the current one while it brings something.

    The current source is the latest step's; when that step returned only documents already
    held (by id or near-duplicate text) or none relevant to the question, the next source in
    `sources` order is tried (a ReAct agent switching tools when one stops helping).
    """
    if not scratchpad:
        return sources[0]
    current = _source_index(scratchpad[-1].source, sources)
    if current is None:
        return sources[0]
    if current + 1 < len(sources) and not _step_helped(question, scratchpad):
        current += 1
    return sources[current]


def _step_helped(question: str, scratchpad: Sequence[ScratchpadStep]) -> bool:
    """Whether the latest step brought a document that is new and relevant to the question."""
    held = _observed(scratchpad[:-1])
    held_ids = {doc_id(d) for d in held}
    held_terms = [term_set(d.page_content) for d in held]
    new = [
        d
        for d in unique_documents(scratchpad[-1].observation)
        if doc_id(d) not in held_ids
        and not any(jaccard(term_set(d.page_content), t) >= _DUPLICATE_JACCARD for t in held_terms)
    ]
    if not new:
        return False
    shape = analyze_question(question)
    weights = QuestionWeights(shape, Evidence([*held, *new]))
    keys = frozenset(weights.weights)
    for document in new:
        title = str(document.metadata.get("title") or "")
        terms = term_set(f"{title} {document.page_content}") & keys
        if weights.share(terms) >= _RELEVANT_SHARE:
            return True
    return False


def _query_key(query: str) -> str:
    return " ".join(sorted(term_set(query)))


def _subjects(shape: QuestionShape) -> tuple[str, ...]:
    return shape.candidates or shape.entities[:2]


def _compared(shape: QuestionShape) -> tuple[str, ...]:
    """The entities a question compares, each needing a document of its own.

    The options of "X or Y" and the subjects of yes/no questions; for other questions the
    two names of "both X and Y" / "X and Y ... in common / the same" phrasings.
    """
    if shape.kind in ("choice", "yesno"):
        return _subjects(shape)
    if not re.search(r"\bboth\b|\bin common\b|\bthe same\b", shape.text.lower()):
        return ()
    names = [c for c in _constraints(shape.text) if not _is_year(c)]
    return tuple(names[:2]) if len(names) >= 2 else ()


@lru_cache(maxsize=1024)
def _constraints(question: str) -> tuple[str, ...]:
    """Names, quoted titles and years of the question: what the answer's evidence must mention.

    "X and Y" spans count as their two names when both are multi-word ("Nicolas Cage and
    Téa Leoni"), else as one title ("Kiss and Tell"). Nationality adjectives, a lone
    capitalised first word ("According", "Aside") and names that are part of a longer one
    are dropped; dates count by their year.
    """
    out: list[str] = []
    for span in candidate_spans(question):
        text = span.text.strip()
        if span.kind in ("date", "year"):
            year = year_of(text)
            if year is not None:
                out.append(str(year))
            continue
        if span.kind not in ("name", "quote") or is_demonym(text):
            continue
        if not any(ch.isalpha() for ch in text):
            continue
        if span.start == 0 and " " not in text and text[1:].islower():
            continue
        parts = text.split(" and ")
        if len(parts) == 2 and all(len(p.split()) >= 2 for p in parts):
            out.extend(parts)
        else:
            out.append(text)
    names = unique(out)
    kept = []
    for name in names:
        terms = term_set(name)
        if not terms:
            continue
        if any(terms < term_set(other) for other in names if other != name):
            continue
        kept.append(name)
    return tuple(kept)


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", text))


def _mentioned(name: str, terms: frozenset[str], text: str) -> bool:
    """Whether evidence with these terms and text names `name` (years must appear verbatim)."""
    if _is_year(name):
        return bool(re.search(rf"\b{name}\b", text))
    return mentions(terms, name) >= _NAME_MATCH


def _missing_for(
    shape: QuestionShape, evidence: Evidence, scored: ScoredSentence | None
) -> list[str]:
    """What the answer's evidence lacks, in the question's words.

    Compared entities without a document of their own, then the question's names and years
    absent from the answer sentence's document and the bridge document leading to it.
    """
    missing = [c for c in _compared(shape) if not evidence.has_document(c)]
    if scored is None:
        return missing
    chain = _chain(evidence, scored)
    terms, text = evidence.terms_of(chain), evidence.text_of(chain)
    compared = {c.lower() for c in _compared(shape)}
    for name in _constraints(shape.text):
        if name.lower() in compared or _mentioned(name, terms, text):
            continue
        missing.append(name)
    return unique(missing)


def _lead_for_missing(
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
    compared = [m for m in missing if m in _compared(shape)]
    for name in compared:
        query = _compose_query(name, shape, term_set(" ".join(_compared(shape))))
        if _query_key(query) not in asked:
            return ThinkDecision(
                thought=f"The evidence has no document about '{name}', which the question "
                "compares; looking it up.",
                query=query,
            )
    gap = _bridge_gap(shape, evidence, ranked)
    if gap is not None:
        entity, covered = gap
        query = _compose_query(entity, shape, covered)
        if _query_key(query) not in asked:
            return ThinkDecision(
                thought="The answer's evidence does not mention "
                + ", ".join(f"'{m}'" for m in missing)
                + f"; the evidence points to '{entity}', which nothing held is about yet.",
                query=query,
            )
    for name in missing:
        if evidence.covers(name):
            continue
        query = _anchored(shape, [name, *_unresolved_words(shape, term_set(name))])
        if _query_key(query) not in asked:
            return ThinkDecision(
                thought=f"Nothing held mentions '{name}'; searching for it.", query=query
            )
    return None


def _answer_doubt(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    answer: str,
    scored: ScoredSentence,
) -> str:
    """Why a well-supported answer is still doubtful ("" when there is no reason).

    Support counts the names the question gives, which any sentence about its subject
    shares; the answer must also be of the asked type (a name for "who", not a common word
    capitalised at a sentence start or a bare number), and its own sentence must state some
    of the question's relation words ("formed", "executive producer", "voted").
    """
    if not _fits_type(shape, answer):
        return f"it is not a {shape.answer_type}, which the question asks for"
    word = answer.strip()
    if shape.answer_type == "name" and (
        re.fullmatch(r"[\d,.\s]+", word)
        or (word.isalpha() and _lower_case_in(evidence, word.lower()))
    ):
        return "it is a common word or a bare number, not the name the question asks for"
    # Counted, not idf-weighted: the relation word the answer's sentence shares ("victories")
    # is often in every held document, which gives it almost no idf weight.
    names = frozenset().union(*(term_set(c) for c in _constraints(shape.text)))
    relation = [t for t in weights.weights if t not in names]
    stated = sum(1 for t in relation if t in scored.sentence.terms)
    if relation and stated == 0:
        return "its sentence states none of what the question asks about its subject"
    return ""


def _lower_case_in(evidence: Evidence, word: str) -> bool:
    """Whether `word` occurs in lower case in the evidence (a common word, not a name)."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    return any(pattern.search(d.page_content) for d in evidence.docs)


def _fits_type(shape: QuestionShape, answer: str) -> bool:
    """Whether `answer` is of the type the question asks for (any type fits an open question)."""
    if shape.answer_type == "date":
        return year_of(answer) is not None
    if shape.answer_type == "number":
        return any(s.kind == "number" for s in candidate_spans(answer))
    if shape.answer_type == "name":
        return any(s.kind in ("name", "quote") for s in candidate_spans(answer))
    return True


def _attainable_share(
    evidence: Evidence, weights: QuestionWeights, covered: frozenset[str]
) -> float:
    """Share of the question's weight `covered` accounts for, among terms the evidence has.

    Question words no held document uses ("inhabitants" for "population", a typo) cannot be
    covered by any sentence; they say nothing about whether this answer is the right one.
    """
    reachable = weights.of(evidence.all_terms)
    return weights.of(covered) / reachable if reachable > 0 else 0.0


def _settled(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    answer: str,
    scored: ScoredSentence | None,
) -> bool:
    """Whether held evidence already answers a two-hop question: no further bridge to chase.

    The answer is a span of the asked type, its sentence is reached through a bridge (another
    held document names the answer's document), the chain names every name and year the
    question gives, and its documents cover most of the question terms the evidence has.
    """
    if shape.kind != "factoid" or shape.answer_type == "any" or scored is None:
        return False
    if scored.link is None or not _fits_type(shape, answer):
        return False
    if _missing_for(shape, evidence, scored):
        return False
    # The chain's documents, not just the answer's sentence: the bridge document states the
    # relation the question describes ("a promo for a movie"), the answer's the fact asked.
    covered = evidence.terms_of(_chain(evidence, scored))
    return _attainable_share(evidence, weights, covered) >= _ANSWER_SUPPORT


def _answer_is_bridge(
    shape: QuestionShape, evidence: Evidence, answer: str, scored: ScoredSentence | None
) -> bool:
    """Whether a name answer is likely the bridge entity of a two-hop question, not its answer.

    "The actress who plays X" / "a film directed by whom": the question describes an unnamed
    entity and asks something of it. A name answer that no held document is about is then
    probably that entity (found in the first hop's document), with the asked fact in its own.
    Only answers from a first-hop sentence count: one reached through a bridge is the second hop.
    """
    if shape.kind != "factoid" or not _BRIDGE_SHAPE_RE.search(shape.text):
        return False
    if scored is None or scored.link is not None:
        return False
    terms = term_set(answer)
    if not terms or not any(ch.isupper() for ch in answer) or _is_year(answer.strip()):
        return False
    if terms <= term_set(shape.text):
        return False
    return not evidence.has_document(answer)


def _chain(evidence: Evidence, scored: ScoredSentence) -> list[int]:
    """The documents supporting a sentence: its own and those leading to it.

    Those are the bridge sentence's document and any document naming its title in full.
    """
    doc = scored.sentence.doc
    chain = [doc] + ([scored.link.doc] if scored.link is not None else [])
    title_terms = evidence.title_terms[doc]
    if title_terms:
        chain += [i for i, t in enumerate(evidence.doc_terms) if i != doc and title_terms <= t]
    return _unique_ints(chain)


def _bridged_terms(evidence: Evidence, scored: ScoredSentence) -> frozenset[str]:
    """Terms of the sentences elsewhere that name the sentence's document (its way in)."""
    title_terms = evidence.title_terms[scored.sentence.doc]
    if not title_terms:
        return frozenset()
    found = [
        s.terms
        for s in evidence.sentences
        if s.doc != scored.sentence.doc and title_terms <= s.terms
    ]
    return frozenset().union(*found) if found else frozenset()


def _unique_ints(items: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(items))


def _anchor(shape: QuestionShape) -> str:
    """The question's first name or title: the entity every sub-query should stay tied to."""
    return next((c for c in _constraints(shape.text) if not _is_year(c)), "")


def _anchored(shape: QuestionShape, words: Sequence[str]) -> str:
    """A sub-query of `words` that keeps the question's anchor entity (prepended if absent)."""
    query = " ".join(words).strip()
    anchor = _anchor(shape)
    if anchor and mentions(term_set(query), anchor) < _NAME_MATCH:
        query = f"{anchor} {query}".strip()
    return query


def _support_ids(evidence: Evidence, scored: ScoredSentence) -> list[str]:
    ids = []
    if scored.link is not None:
        ids.append(evidence.ids[scored.link.doc])
    ids.append(evidence.ids[scored.sentence.doc])
    return unique(ids)


def _unresolved_words(shape: QuestionShape, covered: frozenset[str]) -> list[str]:
    """Question words (original case) whose terms the given evidence does not account for."""
    out = []
    for word in words_of(shape.text):
        lowered = word.lower()
        if lowered in _NOISE_WORDS or not term_set(word):
            continue
        if stem(lowered) in covered or lowered in covered:
            continue
        out.append(word)
    return unique(out)[:_MAX_QUERY_WORDS]


def _compose_query(entity: str, shape: QuestionShape, covered: frozenset[str]) -> str:
    rest = [w for w in _unresolved_words(shape, covered | term_set(entity))]
    return " ".join([entity, *rest]).strip()


def _bridge_gap(
    shape: QuestionShape, evidence: Evidence, ranked: Sequence[ScoredSentence]
) -> tuple[str, frozenset[str]] | None:
    """The best name in the top sentences that the question lacks and no held document is about.

    Names score by their sentence's support, closeness to the question's words in it, and
    length (a full name says more than a nationality or an acronym). Returns the name and the
    question terms its sentence already covers.
    """
    question_terms = term_set(shape.text)
    best: tuple[float, str, frozenset[str]] | None = None
    for scored in ranked[:4]:
        if scored.score <= 0:
            break
        positions = [
            m.start()
            for m in re.finditer(r"[^\W_]+", scored.sentence.text)
            if stem(m.group().lower()) in scored.covered
        ]
        for span in candidate_spans(scored.sentence.text):
            if span.kind not in ("name", "quote") or is_demonym(span.text):
                continue
            terms = term_set(span.text)
            if not terms or terms <= question_terms or _about_itself(evidence, span.text):
                continue
            distance = min((abs(p - span.start) for p in positions), default=60)
            score = scored.score * (1.0 + 0.5 / (1.0 + distance / 30.0))
            score *= 1.0 + 0.2 * min(len(terms), 3)
            if span.text.isupper():
                score *= 0.5
            if best is None or score > best[0]:
                best = (score, span.text, scored.covered)
    if best is not None:
        return best[1], best[2]
    for entity in shape.entities:
        if not evidence.covers(entity):
            return entity, frozenset()
    return None


def _about_itself(evidence: Evidence, name: str) -> bool:
    """Whether a held document has `name` as its title (so its facts are already held)."""
    name_terms = term_set(name)
    return any(
        t and len(t & name_terms) / len(name_terms) >= _NAME_MATCH - 0.01
        for t in evidence.title_terms
    )


def _feedback_entities(feedback: str, shape: QuestionShape, asked: set[str]) -> list[str]:
    """Names a negative reflection suggests searching for ('...' quoted in its suggestion).

    Only the `Suggestion:` line counts when there is one: the explanation quotes the
    rejected answer and the titles it came from, which are no leads. A quoted name may be
    one the question already mentions (the missing side of a comparison).
    """
    if not feedback:
        return []
    match = re.search(r"(?im)^\s*suggestion\s*:(.*)$", feedback)
    text = match.group(1) if match else feedback
    quoted = re.findall(r"'([^']{2,80})'", text)
    names = [q for q in quoted if term_set(q)]
    return [n for n in unique(names) if _query_key(n) not in asked]


def _rejected_answer(feedback: str) -> frozenset[str]:
    """The earlier answer a negative reflection rejected (`answer: ...` in the feedback)."""
    if not feedback or "INCORRECT" not in feedback.upper():
        return frozenset()
    match = re.search(r"(?im)\banswer\s*[:=]\s*(.+)$", feedback)
    if not match:
        return frozenset()
    key = normalize_answer(match.group(1))
    return frozenset({key}) if key else frozenset()


def _suggest(
    shape: QuestionShape, evidence: Evidence | None, covered: frozenset[str] = frozenset()
) -> str:
    missing_names = [
        e for e in _compared(shape) if evidence is None or not evidence.has_document(e)
    ]
    if missing_names:
        return f"Search for '{missing_names[0]}'."
    if evidence is not None:
        ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
        gap = _bridge_gap(shape, evidence, ranked)
        if gap is not None:
            return f"Search for '{gap[0]}' " + " ".join(_unresolved_words(shape, gap[1])) + "."
    rest = _unresolved_words(shape, covered)
    if rest:
        return "Search for " + _anchored(shape, rest) + "."
    return "Search again with the question."


def _suggest_missing(shape: QuestionShape, evidence: Evidence, missing: Sequence[str]) -> str:
    """A search suggestion for what the answer's evidence lacks, quoting the name to look up."""
    compared = [m for m in missing if m in _compared(shape)]
    if compared:
        return f"Search for '{compared[0]}'."
    ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
    gap = _bridge_gap(shape, evidence, ranked)
    extra = " ".join(m for m in missing if term_set(m))
    if gap is not None:
        return f"Search for '{gap[0]}' {extra}.".replace(" .", ".")
    names = [m for m in missing if not _is_year(m)]
    if names:
        rest = " ".join(m for m in missing if m != names[0])
        return f"Search for '{names[0]}' {_anchored(shape, [rest]) if rest else ''}".strip() + "."
    return "Search for " + _anchored(shape, list(missing)) + "."


# ---------------------------------------------------------------------- choice and yes/no


def _choose(shape: QuestionShape, evidence: Evidence, weights: QuestionWeights) -> AnswerDraft:
    """Pick one of the two named options by compared values, else by support."""
    options = shape.candidates
    option_terms = term_set(" ".join(options))
    docs = {o: evidence.docs_about(o) for o in options}
    if shape.compare_by is not None and shape.direction is not None:
        values = {o: _value(shape, evidence, weights, docs[o], option_terms) for o in options}
        known = {o: v for o, v in values.items() if v is not None}
        if len(known) == 2 and len({v[0] for v in known.values()}) == 2:
            pick = (min if shape.direction == "min" else max)(known, key=lambda o: known[o][0])
            other = next(o for o in options if o != pick)
            cited = unique([evidence.ids[known[pick][1]], evidence.ids[known[other][1]]])
            return AnswerDraft(
                answer=pick,
                cited_ids=cited,
                rationale=f"{pick}: {known[pick][0]:g} vs {other}: {known[other][0]:g}",
            )
    # "Which band is from England, X or Y": the option whose nationality the question names.
    asked_country = nationalities(_question_without(shape.text, options))
    if asked_country:
        matching = [
            o for o in options if nationalities(_lead_text(evidence, docs[o])) == asked_country
        ]
        if len(matching) == 1:
            return AnswerDraft(
                answer=matching[0],
                cited_ids=unique([evidence.ids[d] for o in options for d in docs[o][:1]]),
                rationale=f"Only '{matching[0]}' is described as from {next(iter(asked_country))}.",
            )
    # No comparable values: the option whose documents best match the rest of the question.
    scores = {}
    for option in options:
        best, best_doc = 0.0, None
        for sentence in evidence.sentences:
            in_doc = sentence.doc in docs[option]
            if not in_doc and not term_set(option) <= sentence.terms:
                continue
            score = weights.of((sentence.terms | evidence.title_terms[sentence.doc]) - option_terms)
            if score > best:
                best, best_doc = score, sentence.doc
        scores[option] = (best, best_doc)
    pick = max(options, key=lambda o: (scores[o][0], -options.index(o)))
    cited = [evidence.ids[d] for o in options for d in docs[o][:1]]
    best_doc = scores[pick][1]
    if not cited and best_doc is not None:
        cited = [evidence.ids[best_doc]]
    return AnswerDraft(
        answer=pick,
        cited_ids=unique(cited),
        rationale=f"'{pick}' is the option the evidence ties best to the question.",
    )


def _value(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    doc_indexes: list[int],
    option_terms: frozenset[str],
) -> tuple[float, int] | None:
    """The date (as a year) or number an option's documents give for the compared attribute."""
    lifespan = bool(re.search(r"\blived\b|\blife\b|\blifespan\b", shape.text.lower()))
    attribute = frozenset(weights.weights) - option_terms - _COMPARATIVE_TERMS
    best: tuple[float, float, int] | None = None
    for index in doc_indexes[:2]:
        for sentence in evidence.sentences:
            if sentence.doc != index:
                continue
            spans = candidate_spans(sentence.text)
            if lifespan:
                years = [year_of(s.text) for s in spans if s.kind in ("date", "year")]
                known = [y for y in years if y is not None]
                values = [float(known[1] - known[0])] if len(known) >= 2 else []
            elif shape.compare_by == "date":
                values = [
                    float(y) for s in spans if s.kind in ("date", "year") if (y := year_of(s.text))
                ]
            else:
                # Only numbers in a sentence about the compared attribute, and not part of a name.
                if not sentence.terms & attribute:
                    continue
                values = [
                    v
                    for s in spans
                    if s.kind == "number" and not term_set(s.text) <= option_terms
                    if (v := number_of(s.text)) is not None
                ]
            if not values:
                continue
            # Earlier sentences describe the subject (birth, founding); matches break ties.
            score = weights.of(sentence.terms - option_terms) - 0.1 * sentence.position
            if best is None or score > best[0]:
                best = (score, values[0], index)
            if lifespan:
                break
    return (best[1], best[2]) if best is not None else None


def _yes_no(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
) -> AnswerDraft:
    """Yes/no from the subjects' documents: same attribute, or the property holds for all."""
    subjects = _subjects(shape)
    docs = {s: evidence.docs_about(s) for s in subjects}
    cited = unique([evidence.ids[d] for s in subjects for d in docs[s][:1]])
    if shape.same and len(subjects) == 2:
        attribute = shape.property_text.lower()
        if re.search(r"nationalit|country|citizen|from\b|origin", attribute):
            values = [nationalities(_lead_text(evidence, docs[s])) for s in subjects]
            kind = "nationality"
            same = bool(values[0] & values[1]) if all(values) else False
        else:
            values = [descriptor(_lead_text(evidence, docs[s])) for s in subjects]
            kind = "description"
            same = jaccard(values[0], values[1]) >= 0.5 if all(values) else False
        verdict = same != shape.negated
        shown = " vs ".join("/".join(sorted(v)) or "?" for v in values)
        return AnswerDraft(
            answer="yes" if verdict else "no",
            cited_ids=cited,
            rationale=f"Compared {kind}: {shown}.",
        )
    property_terms = term_set(shape.property_text) - term_set(" ".join(subjects))
    if not property_terms:
        property_terms = frozenset(weights.weights) - term_set(" ".join(subjects))
    coverages = []
    for subject in subjects:
        terms = frozenset().union(*(evidence.doc_terms[d] for d in docs[subject][:2]))
        coverages.append(len(property_terms & terms) / len(property_terms or {""}))
    if not subjects:
        # No subject named: does the best sentence state what the question asks?
        best = ranked[0] if ranked else None
        share = weights.share(best.covered) if best else 0.0
        coverages = [share]
        if best is not None:
            cited = [evidence.ids[best.sentence.doc]]
    verdict = bool(coverages) and min(coverages) >= _PROPERTY_COVERAGE
    if shape.negated:
        verdict = not verdict
    return AnswerDraft(
        answer="yes" if verdict else "no",
        cited_ids=cited,
        rationale="Property terms covered per subject: " + ", ".join(f"{c:.0%}" for c in coverages),
    )


def _question_without(question: str, names: Sequence[str]) -> str:
    for name in names:
        question = question.replace(name, " ")
    return question


def _lead_text(evidence: Evidence, doc_indexes: list[int]) -> str:
    """The first two sentences of a subject's document, where descriptions usually are."""
    if not doc_indexes:
        return ""
    return " ".join(split_sentences(evidence.docs[doc_indexes[0]].page_content)[:2])


def _reflect_on_subjects(shape: QuestionShape, evidence: Evidence, key: str) -> Reflection:
    subjects = _subjects(shape)
    # A side counts only with a document of its own (its title or its lead's subject).
    covered = [s for s in subjects if evidence.has_document(s)]
    missing = [s for s in subjects if s not in covered]
    if shape.kind == "choice" and key not in {normalize_answer(c) for c in subjects}:
        return Reflection(
            label="INCORRECT",
            explanation=f"'{key}' is not one of the options the question names.",
            suggestion=f"Choose between {' and '.join(subjects)}.",
        )
    if shape.kind == "yesno" and key not in ("yes", "no"):
        return Reflection(
            label="PARTIALLY CORRECT",
            explanation="The question asks for yes or no.",
            suggestion="Answer yes or no.",
        )
    if subjects and not missing:
        return Reflection(
            label="CORRECT",
            explanation="The evidence describes " + " and ".join(subjects) + ".",
        )
    label: ReflectionLabel = "PARTIALLY CORRECT" if covered else "INCORRECT"
    return Reflection(
        label=label,
        explanation="The evidence does not describe "
        + " and ".join(f"'{m}'" for m in missing or ["the subject"])
        + ".",
        suggestion=f"Search for '{missing[0]}'." if missing else "Search again with the question.",
    )


ABSTENTION = "The sources I could reach do not answer this"


def abstention(scratchpad: Sequence[ScratchpadStep], reason: str) -> AnswerDraft:
    """A plain 'cannot answer' with why: the web was down, or nothing relevant was found."""
    notes = " ".join(step.note for step in scratchpad).lower()
    why = [reason]
    if "web search unavailable" in notes:
        why.insert(0, "the web search was unavailable")
    answer = f"{ABSTENTION}: {' and '.join(why)}."
    return AnswerDraft(answer=answer, abstained=True, rationale=answer)
