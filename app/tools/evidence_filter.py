"""Per-snippet evidence filters (RAG² §3.2): is this snippet helpful for this question?

A `SnippetFilter` judges one snippet at a time and returns a `SnippetJudgement`
(`helpful`, a `score` in [0, 1] and a readable `reason`). `filter_snippets` applies one to
a run's evidence and never empties it: when every snippet is judged unhelpful the best
scored one is kept and the outcome says so.

The default filter (`RelevanceSnippetFilter`) needs no trained model: a snippet is helpful
when its MiniLM cosine similarity to the question reaches `DEFAULT_THRESHOLD`.
`ChatSnippetFilter` asks a chat model instead (one call per snippet; give it to the graph
with `ResourceProvider(snippet_filter=...)`). RAG²'s
filter is a small trained classifier; `trained_filter.load_snippet_filter` loads one from a folder
(`PREFRAG_EVIDENCE_FILTER`), filled in by the filter trainer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_core.documents import Document

from prefrag.documents import doc_id

if TYPE_CHECKING:
    from prefrag.index.embeddings import Embedder

__all__ = [
    "DEFAULT_THRESHOLD",
    "ChatSnippetFilter",
    "FilterOutcome",
    "RelevanceSnippetFilter",
    "SnippetFilter",
    "SnippetJudgement",
    "filter_snippets",
]

# MiniLM cosine of question and snippet below which a snippet counts as not helpful.
# Chosen on HotpotQA tuning items 1-200 (question vs. each of its ~10 paragraphs): at 0.2,
# 96% of gold paragraphs pass and 14% of the distractors (topically close by construction)
# are dropped; at 0.3 a seventh of the gold paragraphs would be lost. The filter is meant
# to drop off-topic snippets, not to rank close ones.
DEFAULT_THRESHOLD = 0.2


@dataclass(frozen=True)
class SnippetJudgement:
    """One filter decision: helpful or not, a confidence score in [0, 1], and why."""

    helpful: bool
    score: float
    reason: str


@runtime_checkable
class SnippetFilter(Protocol):
    """Judges whether one retrieved snippet helps answer a question."""

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        """The judgement of `document` for `question`."""
        ...


class RelevanceSnippetFilter:
    """Helpful when the snippet's embedding is close enough to the question's.

    Args:
        embedder: The embedder; the bundled MiniLM (`get_embedder()`) when omitted.
        threshold: Cosine similarity a helpful snippet reaches (`DEFAULT_THRESHOLD`).
    """

    def __init__(self, embedder: Embedder | None = None, *, threshold: float = DEFAULT_THRESHOLD):
        self._embedder = embedder
        self.threshold = threshold

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        """Cosine of question and snippet (title and text) against the threshold."""
        if self._embedder is None:
            from prefrag.index.embeddings import get_embedder

            self._embedder = get_embedder()
        title = str(document.metadata.get("title") or "")
        text = f"{title}. {document.page_content}" if title else document.page_content
        question_vector = self._embedder.encode_one(question)
        snippet_vector = self._embedder.encode([text])[0]
        cosine = float(question_vector @ snippet_vector)
        score = min(max(cosine, 0.0), 1.0)
        helpful = cosine >= self.threshold
        relation = "reaches" if helpful else "is below"
        return SnippetJudgement(
            helpful=helpful,
            score=score,
            reason=f"similarity to the question {cosine:.2f} {relation} {self.threshold:.2f}",
        )


class ChatSnippetFilter:
    """Asks a chat model whether a snippet helps (`prompts/snippet_filter.txt`).

    A verdict that cannot be read keeps the snippet (score 0.5), and the reason says so:
    a misbehaving model never silently removes evidence.

    Args:
        model: A LangChain chat model (e.g. the run's `answer` model).
        max_doc_chars: Characters of the snippet shown to the model.
    """

    def __init__(self, model: Any, *, max_doc_chars: int = 2000) -> None:
        self.model = model
        self.max_doc_chars = max_doc_chars

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        """One model call; `<answer>yes</answer>` is helpful, `<answer>no</answer>` is not."""
        from langchain_core.messages import HumanMessage

        from prefrag.documents import format_documents
        from prefrag.prompts import render_prompt

        prompt = render_prompt(
            "snippet_filter",
            question=question,
            document=format_documents([document], max_chars=self.max_doc_chars),
        )
        reply = self.model.invoke([HumanMessage(prompt)])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        verdicts = _VERDICT.findall(text)
        if not verdicts:
            return SnippetJudgement(True, 0.5, "the model's verdict could not be read; kept")
        helpful = verdicts[-1].lower() == "yes"
        said = "helpful" if helpful else "not helpful"
        return SnippetJudgement(helpful, 1.0 if helpful else 0.0, f"the model judged it {said}")


_VERDICT = re.compile(r"<answer>\s*(yes|no)\s*</answer>", re.IGNORECASE)


@dataclass
class FilterOutcome:
    """The snippets kept, every judgement (for the trace) and notes on what happened."""

    kept: list[Document]
    judged: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> list[dict[str, Any]]:
        """Judgements of the snippets that were dropped."""
        return [entry for entry in self.judged if not entry["kept"]]


def filter_snippets(
    snippet_filter: SnippetFilter, question: str, documents: Sequence[Document], *, name: str = ""
) -> FilterOutcome:
    """Judge every snippet; keep the helpful ones, or the best one when none is helpful."""
    if not documents:
        return FilterOutcome([])
    judgements = [snippet_filter.judge(question, document) for document in documents]
    keep = [judgement.helpful for judgement in judgements]
    notes: list[str] = []
    if not any(keep):
        best = max(range(len(documents)), key=lambda i: judgements[i].score)
        keep[best] = True
        notes.append(
            f"Evidence filter{name}: every snippet was judged not helpful; kept the best "
            f"scored one [{doc_id(documents[best])}] so the answer has evidence."
        )
    judged = [
        {
            "id": doc_id(document),
            "source": document.metadata.get("source", ""),
            "title": document.metadata.get("title", ""),
            "helpful": judgement.helpful,
            "score": round(judgement.score, 4),
            "reason": judgement.reason,
            "kept": kept,
        }
        for document, judgement, kept in zip(documents, judgements, keep, strict=True)
    ]
    outcome = FilterOutcome([d for d, k in zip(documents, keep, strict=True) if k], judged, notes)
    for entry in outcome.dropped:
        outcome.notes.append(
            f"Evidence filter{name} dropped [{entry['id']}]: not helpful ({entry['reason']})."
        )
    return outcome
