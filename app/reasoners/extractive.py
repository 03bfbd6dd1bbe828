"""`ExtractiveReasoner`: every PrefRAG decision made from the retrieved evidence alone, no model.

It is the default reasoner when no model is configured, so the graph runs anywhere. Each role
lives in a module of its own; this class ties them together:

- think (`_planning`): search with the question, then follow bridge entities and the parts
  of the question still unresolved, or answer once the evidence supports an answer. With
  several sources, a search names one: the current source until a step of it brings nothing
  new and relevant, then the next in order.
- compare (here): new documents help when they are not near-duplicates of held ones (by id,
  word overlap and, optionally, embedding cosine) and are relevant to the question or its gap.
- answer (`_answering`, `_policy`): evidence sentences are judged for the question (MiniLM
  similarity, overlap with the asked words, the asked type) into one confidence; the
  answer is a short span only when asked for and confident enough, else the one to three
  most confident sentences, cited (two documents' when the question links them,
  `_two_documents`; each side's for a comparison, `_comparisons`; the deciding one after a
  yes/no, `_yes_no`; the listing sentences for a list, `_listing`; spans in
  `_span_forms`), else an abstention saying why - after setting aside documents
  superseded by a newer authoritative one (`_conflicts`). The answer carries its confidence.
- condense (`_condense`): a follow-up on a thread gets the earlier turn's subject in place
  of its pronouns and ellipses; a standalone question passes unchanged. A follow-up's
  answer that only repeats the earlier turn's answer is none (`_follow_ups`).
- reflect (`_reflection`): CORRECT only when a sentence holding the answer supports it for
  what the question asks; otherwise structured feedback (`Feedback`) with leads to search.

A question typed in lower case is read with the capitals its evidence writes (`_truecase`).
Numbers come from one frozen table (`_params.PARAMS`). Decisions are deterministic: the same
inputs always give the same outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.reasoners._answering import ABSTENTION, abstention, answer_question
from prefrag.reasoners._condense import condense_follow_up
from prefrag.reasoners._confidence import active_model
from prefrag.reasoners._evidence import Evidence, QuestionWeights, rank_sentences
from prefrag.reasoners._follow_ups import answered_anew, thread_first
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._planning import next_source, plan
from prefrag.reasoners._reflection import reflect_on
from prefrag.reasoners._support import bridge_gap, compared_names
from prefrag.reasoners._text import QuestionShape, analyze_question, jaccard, term_set, unique
from prefrag.reasoners._truecase import truecase
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    CondensedQuestion,
    Feedback,
    PriorTurn,
    Reflection,
    ScratchpadStep,
    ThinkDecision,
)

if TYPE_CHECKING:
    from prefrag.index.embeddings import Embedder
    from prefrag.reasoners.plans import SourceBrief, SourcePlan
    from prefrag.reasoners.small_switcher import Switcher

__all__ = ["ABSTENTION", "ExtractiveReasoner", "abstention"]


class ExtractiveReasoner:
    """A `Reasoner` that decides from retrieval evidence with regex, term weights and numpy.

    Args:
        embedder: An embedder for the switcher's duplicate and relevance checks; loaded
            lazily with `get_embedder()` when omitted and `use_embeddings` is true.
        use_embeddings: Use embedding cosine in `compare` besides word overlap. When the
            embedder cannot load, the reasoner silently keeps to word overlap. Answers
            always judge evidence sentences with the embedder when it loads.
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
        # The confidence of each answer given, by (question, answer text), for `reflect`.
        self._confidences: dict[tuple[str, str], float] = {}

    def think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        sources: Sequence[str] = (),
        force_answer: bool = False,
        feedback: Feedback | None = None,
        rationale: bool = False,
    ) -> ThinkDecision:
        """Search with the question, then with bridge sub-queries, until evidence suffices.

        With several `sources`, a search names one: the source of the latest step, or the
        next one in `sources` order when that step brought nothing new and relevant. A
        negative reflection's `feedback` leads are searched for first.
        """
        question = truecase(question, *(step.observation for step in scratchpad))
        decision = plan(
            question,
            scratchpad,
            force_answer=force_answer,
            feedback=feedback,
            embed=self._vectors_of,
        )
        if decision.action == "search" and len(sources) > 1:
            decision.source = next_source(question, scratchpad, sources)
        return decision

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
        question = truecase(question, held, new)
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
                jaccard(terms, other) >= PARAMS.duplicate_jaccard for other in held_terms
            ):
                duplicates += 1
                continue
            if vectors is not None and held:
                cosine = vectors[len(held) + index] @ vectors[: len(held)].T
                if float(cosine.max()) >= PARAMS.duplicate_cosine:
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
            elif share >= PARAMS.relevant_share:
                relevant.append(f"'{title}' matches {share:.0%} of the question's key terms")
            elif cosine >= PARAMS.relevant_cosine:
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
        names = [c for c in compared_names(shape) if not evidence.has_document(c)]
        names += [e for e in shape.entities if not evidence.covers(e)]
        ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
        gap = bridge_gap(shape, evidence, ranked)
        if gap is not None:
            names.append(gap[0])
        return unique(names)

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: Feedback | None = None,
        earlier: PriorTurn | None = None,
    ) -> AnswerDraft:
        """The answer in the form its confidence allows, with its sources, or an abstention.

        A follow-up's answer that only repeats the `earlier` turn's is no answer
        (`_follow_ups`).
        """
        read_as = truecase(question, evidence, *(step.observation for step in scratchpad))
        evidence = thread_first(read_as, evidence, earlier)
        draft = answer_question(
            read_as, scratchpad, evidence, feedback=feedback, embed=self._vectors_of
        )
        draft = answered_anew(read_as, draft, earlier, scratchpad)
        if draft.confidence is not None and not draft.abstained:
            if len(self._confidences) > 1024:
                self._confidences.clear()
            for said in {draft.answer, draft.short_answer} - {""}:
                self._confidences[(question, said)] = draft.confidence
        return draft

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        """CORRECT only when a sentence holding the answer supports it for what is asked.

        An answer this reasoner gave with a fitted confidence below the level at which
        tuning answers were mostly right (`ConfidenceModel.correct_threshold`) is at best
        PARTIALLY CORRECT: its own claim may be supported, but the reasoner is unsure it
        answers the question. (Nothing is missing from the evidence for it: `gaps` is empty.)
        """
        reflection = reflect_on(truecase(question, evidence), answer, evidence)
        confidence = self._confidences.get((question, answer))
        model = active_model()
        if (
            reflection.label == "CORRECT"
            and model is not None
            and confidence is not None
            and confidence < model.correct_threshold
        ):
            return reflection.model_copy(
                update={
                    "label": "PARTIALLY CORRECT",
                    "explanation": f"{reflection.explanation} But the answer's confidence"
                    f" ({confidence:.2f}) is below {model.correct_threshold:.2f}, the level"
                    " above which answers to the tuning questions were mostly right.".strip(),
                    "gaps": [],
                }
            )
        return reflection

    def condense(self, question: str, history: Sequence[PriorTurn]) -> CondensedQuestion:
        """A follow-up made standalone by the rules of `_condense` (else unchanged)."""
        return condense_follow_up(question, history)

    def plan(self, question: str, sources: Sequence[SourceBrief]) -> SourcePlan:
        """Route the question to the best-described sources (`source_planner`)."""
        from prefrag.reasoners.source_planner import route_question

        return route_question(question, sources, embedder=self._embedder)

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        """Unit vectors of `texts` for `compare`, or None when embeddings are off there."""
        if not self.use_embeddings:
            return None
        return self._vectors_of(texts)

    def _vectors_of(self, texts: list[str]) -> np.ndarray | None:
        """Unit vectors of `texts`, or None when the embedder is unavailable."""
        if self._embedder_failed:
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
