"""The `Reasoner` seam: one method per role, typed decisions in and out.

Graph nodes never talk to a model provider; they call a `Reasoner`. `LLMReasoner` puts any
LangChain chat model behind each role, `ExtractiveReasoner` decides from retrieval evidence
alone. Every decision records whether it came from a safe fallback, so traces say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from langchain_core.documents import Document
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from prefrag.reasoners.plans import SourceBrief, SourcePlan

ReflectionLabel = Literal["CORRECT", "PARTIALLY CORRECT", "INCORRECT"]


class Usage(BaseModel):
    """Model calls and tokens spent on one decision."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def record(self, message: object) -> None:
        """Count one model call, with the tokens its reply's `usage_metadata` reports."""
        self.calls += 1
        metadata = getattr(message, "usage_metadata", None) or {}
        self.input_tokens += int(metadata.get("input_tokens") or 0)
        self.output_tokens += int(metadata.get("output_tokens") or 0)


class ThinkDecision(BaseModel):
    """A reasoning thought and what to do next: search (with a sub-query) or answer."""

    thought: str = ""
    action: Literal["search", "answer"] = "search"
    query: str = ""
    source: str | None = Field(
        default=None, description="Source the model asked for (multi-source actions), if any."
    )
    answer: str = ""
    cited_ids: list[str] = Field(
        default_factory=list, description="Ids of documents a (forced) answer cites."
    )
    abstained: bool = Field(
        default=False, description="A (forced) answer that says the evidence does not answer."
    )
    is_rationale: bool = Field(
        default=False,
        description="The thought is a step-by-step rationale about the content (asked with "
        "`think(..., rationale=True)`), fit to search with on its own (RAG² rationale queries).",
    )
    confidence: float | None = Field(
        default=None, description="The (forced) answer's confidence in [0, 1], if estimated."
    )
    short_answer: str = Field(default="", description="The (forced) answer's short form, if any.")
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)


class CompareVerdict(BaseModel):
    """The switcher's judgement: does the new local evidence add something useful?"""

    analysis: str = ""
    status: bool = True
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)


class AnswerDraft(BaseModel):
    """A final answer with the ids of the documents that support it."""

    answer: str = ""
    cited_ids: list[str] = Field(default_factory=list)
    rationale: str = ""
    abstained: bool = Field(
        default=False, description="The evidence does not answer the question; `answer` says so."
    )
    confidence: float | None = Field(
        default=None,
        description="How sure the reasoner is of the answer, in [0, 1] (None: not estimated).",
    )
    short_answer: str = Field(
        default="",
        description="The short answer (a span, yes/no, the chosen option) when `answer` holds "
        "it with its deciding sentences; empty when the answer is the sentences themselves.",
    )
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)


class Reflection(BaseModel):
    """Self-reflection on an answer: a label, why, and how to improve it."""

    label: ReflectionLabel = "CORRECT"
    explanation: str = ""
    suggestion: str = ""
    leads: list[str] = Field(
        default_factory=list, description="Names the suggestion says to search for, if any."
    )
    gaps: list[str] | None = Field(
        default=None,
        description="What the answer needs that no held document mentions. None: not "
        "checked (any negative label may be missing evidence); []: everything is held, so "
        "the fault is in reading the evidence and more retrieval cannot mend it.",
    )
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)

    @property
    def negative(self) -> bool:
        """True for PARTIALLY CORRECT and INCORRECT."""
        return self.label != "CORRECT"

    @property
    def evidence_missing(self) -> bool:
        """Whether retrieval could mend the answer: negative, and not known to hold it all."""
        return self.negative and (self.gaps is None or bool(self.gaps))

    def feedback(self, answer: str) -> Feedback:
        """This reflection on `answer` as feedback for the next attempt."""
        return Feedback(
            answer=answer,
            label=self.label,
            explanation=self.explanation,
            suggestion=self.suggestion,
            leads=list(self.leads),
        )


class Feedback(BaseModel):
    """A failed answer and its self-reflection, handed to the next attempt (paper §3.3).

    Reasoners read the fields directly: `answer` is the rejected answer, `leads` the names
    the reflection suggests searching for. `render()` gives the text a prompt shows.
    """

    answer: str = ""
    label: ReflectionLabel = "INCORRECT"
    explanation: str = ""
    suggestion: str = ""
    leads: list[str] = Field(default_factory=list)

    def render(self) -> str:
        """The feedback as the lines a model prompt shows."""
        lines = [f"Previous answer: {self.answer}", f"Self-reflection: {self.label}."]
        if self.explanation:
            lines.append(f"Explanation: {self.explanation}")
        if self.suggestion:
            lines.append(f"Suggestion: {self.suggestion}")
        return "\n".join(lines)


class PriorTurn(BaseModel):
    """An earlier question on the thread and its answer, as the condense and answer roles see it.

    `question` is the turn's standalone form when it was itself rewritten.
    """

    question: str
    answer: str = ""
    abstained: bool = False
    titles: list[str] = Field(default_factory=list, description="Titles the answer cited.")
    short_answer: str = Field(
        default="", description="The span the answer's sentences gave (a name, a figure), if any."
    )


class CondensedQuestion(BaseModel):
    """A follow-up question rewritten to stand alone, or the question unchanged."""

    question: str
    rewritten: bool = False
    explanation: str = ""
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)


class ScratchpadStep(BaseModel):
    """One earlier Thought / Action / Observation round, as the reasoner sees it."""

    thought: str = ""
    query: str = ""
    source: str = ""
    observation: list[Document] = Field(default_factory=list)
    note: str = ""


@runtime_checkable
class Reasoner(Protocol):
    """One method per role of the PrefRAG process."""

    def condense(self, question: str, history: Sequence[PriorTurn]) -> CondensedQuestion:
        """`question` as a standalone question, using the thread's earlier turns.

        A question that already stands alone comes back unchanged (`rewritten=False`).
        `history` is oldest first and never empty (the graph skips this role without it).
        """
        ...

    def think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        sources: Sequence[str],
        force_answer: bool = False,
        feedback: Feedback | None = None,
        rationale: bool = False,
    ) -> ThinkDecision:
        """Next thought: search with a sub-query (optionally naming a source) or answer.

        `sources` names the searchable sources (more than one enables per-source actions);
        `force_answer` means the retrieval budget is spent; `feedback` carries a failed
        answer and its reflection after a negative self-reflection (None otherwise).
        `rationale` asks for the thought as a rationale about the content (RAG² rationale
        queries); a reasoner that wrote one sets `ThinkDecision.is_rationale`, one that cannot
        (the extractive reasoner) ignores the request.
        """
        ...

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """Judge whether `new` documents add useful information beyond `held` ones."""
        ...

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: Feedback | None = None,
        earlier: PriorTurn | None = None,
    ) -> AnswerDraft:
        """The final answer from the accumulated evidence, citing document ids.

        `earlier` is the thread's previous turn when `question` follows up on it (None for
        a first question): what answered that question does not, by itself, answer this one.
        """
        ...

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        """Label the answer CORRECT / PARTIALLY CORRECT / INCORRECT with explanation."""
        ...

    def plan(self, question: str, sources: Sequence[SourceBrief]) -> SourcePlan:
        """Per-source queries for `question` (SPO): zero to three per source, parsed."""
        ...
