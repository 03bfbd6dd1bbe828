"""The evidence filter protocol (RAG²): judge one retrieved snippet as helpful or not.

Minimal copy of the contract owned by the `filter_evidence` node's module: a
`SnippetFilter` has `judge(question, document) -> SnippetJudgement`. The trained filter
(`prefrag.tools.trained_filter`) implements it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from langchain_core.documents import Document

__all__ = ["SnippetFilter", "SnippetJudgement"]


@dataclass(frozen=True)
class SnippetJudgement:
    """A filter's verdict on one snippet.

    Attributes:
        helpful: Whether the snippet should reach the answer step.
        score: Confidence that the snippet is helpful, in [0, 1].
        reason: Why, in a few words (shown in the trace).
    """

    helpful: bool
    score: float
    reason: str


@runtime_checkable
class SnippetFilter(Protocol):
    """Decides, one snippet at a time, whether retrieved evidence helps answer a question."""

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        """Judge `document` as evidence for `question`."""
        ...
