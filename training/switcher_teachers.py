"""Teachers of the switcher preference data: the verdict a compare step should have had.

`GoldTeacher` reads it off the dataset's supporting paragraphs (offline); `ModelTeacher`
asks a (stronger) chat model with the same compare prompt the policy saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from langchain_core.documents import Document

from prefrag.errors import IngestError
from prefrag.reasoners.base import CompareVerdict

if TYPE_CHECKING:
    from prefrag.datasets import EvalItem
    from prefrag.reasoners.base import Reasoner


class Teacher(Protocol):
    """Gives the verdict the policy should have given on a compare step."""

    name: str

    def verdict(
        self, item: EvalItem, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The teacher's verdict (status True keeps the new local documents)."""
        ...

    def opposite(
        self, verdict: CompareVerdict, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The wrong verdict on this step: the other status, argued about its documents."""
        ...


class GoldTeacher:
    """Keep exactly when the new documents add a supporting paragraph not held yet.

    Args:
        needed_only: The `gold-needed` variant: also keep when every supporting paragraph
            is held already (nothing is missing, so switching could only add web content).
    """

    def __init__(self, *, needed_only: bool = False) -> None:
        self.needed_only = needed_only
        self.name = "gold-needed" if needed_only else "gold"

    def verdict(
        self, item: EvalItem, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The verdict the dataset's supporting paragraphs imply."""
        if not item.paragraphs:
            raise IngestError(
                f"Item '{item.id}' has no supporting paragraphs; the gold teacher needs a "
                "dataset that marks them (HotpotQA-style)."
            )
        gold = set(item.gold_titles)
        held_titles = {_title(d) for d in held}
        added = [t for t in dict.fromkeys(_title(d) for d in new) if t in gold - held_titles]
        repeated = [t for t in dict.fromkeys(_title(d) for d in new) if t in gold & held_titles]
        if self.needed_only and gold <= held_titles:
            return CompareVerdict(
                analysis="The information already obtained holds everything needed to answer "
                "the question; there is nothing to look for elsewhere.",
                status=True,
            )
        if added:
            return CompareVerdict(
                analysis=f"The new information includes '{added[0]}', which holds details "
                "needed to answer the question that the information already obtained lacks.",
                status=True,
            )
        if repeated:
            return CompareVerdict(
                analysis=f"The new information repeats '{repeated[0]}', which is already "
                "obtained; nothing else in it helps answer the question.",
                status=False,
            )
        return CompareVerdict(
            analysis="None of the new information is needed to answer the question; it adds "
            "no relevant details beyond the information already obtained.",
            status=False,
        )

    def opposite(
        self, verdict: CompareVerdict, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The other status, argued about this step's documents (see `contradiction`)."""
        return contradiction(verdict, held, new)


class ModelTeacher:
    """A (stronger) chat model's own verdict on the compare prompt."""

    def __init__(self, reasoner: Reasoner, name: str) -> None:
        self.reasoner = reasoner
        self.name = name

    def verdict(
        self, item: EvalItem, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The model's verdict (an unreadable reply is marked `fallback`)."""
        return self.reasoner.compare(question, held, new)

    def opposite(
        self, verdict: CompareVerdict, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The other status, argued about this step's documents (see `contradiction`)."""
        return contradiction(verdict, held, new)


def contradiction(
    verdict: CompareVerdict, held: Sequence[Document], new: Sequence[Document]
) -> CompareVerdict:
    """The wrong verdict on a step, argued about the step's own documents.

    The rejected side of a pair when the (deterministic) policy agreed with the teacher.
    It names the same new documents the right verdict is about and makes the opposite
    claim (a document the question needs called redundant, or a redundant one called
    needed), so chosen and rejected differ in the judgement, not in boilerplate: two fixed
    sentences would let a model learn to spot the template instead of the judgement.
    """
    held_titles = {_title(d) for d in held}
    titles = [t for t in dict.fromkeys(_title(d) for d in new) if t] or ["the new passage"]
    fresh = [t for t in titles if t not in held_titles]
    if verdict.status:
        named = " and ".join(f"'{t}'" for t in titles[:2])
        return CompareVerdict(
            analysis=f"The new information about {named} repeats or strays from what the "
            "question asks; the information already obtained covers it, so nothing in it "
            "helps answer the question.",
            status=False,
        )
    title = (fresh or titles)[0]
    return CompareVerdict(
        analysis=f"The new information includes '{title}', which holds details needed to "
        "answer the question that the information already obtained lacks.",
        status=True,
    )


def _title(document: Document) -> str:
    return str(document.metadata.get("title") or "").strip()
