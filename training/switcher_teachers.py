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
    from prefrag.eval.datasets import EvalItem
    from prefrag.reasoners.base import Reasoner


class Teacher(Protocol):
    """Gives the verdict the policy should have given on a compare step."""

    name: str

    def verdict(
        self, item: EvalItem, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The teacher's verdict (status True keeps the new local documents)."""
        ...

    def opposite(self, verdict: CompareVerdict) -> CompareVerdict:
        """A verdict with the other status, phrased as this teacher would."""
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

    def opposite(self, verdict: CompareVerdict) -> CompareVerdict:
        """The other status with a generic analysis."""
        return flipped(verdict)


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

    def opposite(self, verdict: CompareVerdict) -> CompareVerdict:
        """The other status with a generic analysis."""
        return flipped(verdict)


def flipped(verdict: CompareVerdict) -> CompareVerdict:
    """A verdict with the other status and a generic analysis saying so."""
    if verdict.status:
        return CompareVerdict(
            analysis="The new information adds nothing relevant beyond the information "
            "already obtained.",
            status=False,
        )
    return CompareVerdict(
        analysis="The new information adds relevant details that the information already "
        "obtained lacks.",
        status=True,
    )


def _title(document: Document) -> str:
    return str(document.metadata.get("title") or "").strip()
