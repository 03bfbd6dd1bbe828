"""Conflicting documents: which of two held documents on one subject an answer follows.

Two held documents conflict for a question when both are about what it asks (each holds
at least `PARAMS.conflict_question_share` of the question's key terms), they
are on one subject (titles sharing a term, texts overlapping by at least
`PARAMS.same_subject_jaccard`), and their metadata gives different publication dates (dates
in a text are what it is about, not when it was written). The answer follows the newer one
unless it is much less authoritative: polyview's authority view (`authority_view`) keeps
the documents within `PARAMS.authoritative_gap` of the more authoritative, and its
timeliness view (`timeliness_view`) picks the newer of those. The superseded document is
set aside, and the answer says which document it follows and over which. No `--polyview`
run setting is needed: these are the same view functions the reranker uses, called directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import display_id, doc_id, unique_documents
from prefrag.reasoners._evidence import Evidence, QuestionWeights
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._text import QuestionShape, jaccard
from prefrag.reasoners.base import AnswerDraft
from prefrag.tools.dates import metadata_date
from prefrag.tools.polyview import authority_view, timeliness_view

NOTE_OPENING = "The sources disagree:"


def without_note(answer: str) -> str:
    """An answer without the conflict note `Settled.explain` appended to it."""
    cut = answer.find(f" ({NOTE_OPENING}")
    return answer[:cut] if cut >= 0 else answer


@dataclass(frozen=True)
class Superseded:
    """A document set aside for a newer authoritative one on the same subject."""

    followed: Document
    followed_date: date
    set_aside: Document
    set_aside_date: date

    def note(self) -> str:
        """One sentence for the user: which document the answer follows, and over which."""
        return (
            f"{NOTE_OPENING} this follows the newer, authoritative "
            f"[{display_id(self.followed)}] ({self.followed_date.isoformat()}) over "
            f"[{display_id(self.set_aside)}] ({self.set_aside_date.isoformat()})."
        )


@dataclass(frozen=True)
class Settled:
    """The documents an answer may use, and the conflicts settled to get them."""

    documents: list[Document]
    superseded: list[Superseded] = field(default_factory=list)

    def explain(self, draft: AnswerDraft) -> AnswerDraft:
        """`draft` with a note on each settled conflict whose followed document it cites."""
        settled = [s for s in self.superseded if doc_id(s.followed) in draft.cited_ids]
        if not settled or draft.abstained:
            return draft
        notes = " ".join(dict.fromkeys(s.note() for s in settled))
        return draft.model_copy(update={"answer": f"{draft.answer.rstrip()} ({notes})"})


def settle(shape: QuestionShape, documents: Sequence[Document]) -> Settled:
    """Set aside held documents superseded by a newer authoritative one on the same subject."""
    documents = unique_documents(documents)
    if len(documents) < 2 or shape.kind == "choice":
        return Settled(documents)
    timeliness, dates = timeliness_view(documents)
    # Only a publication date in the metadata dates a document: a date in its text is
    # usually what it is about (a birth, a founding), not when it was written.
    dated = [i for i, d in enumerate(documents) if metadata_date(d) is not None]
    if len(dated) < 2:
        return Settled(documents)
    evidence = Evidence(documents)
    # Counted, not idf-weighted: idf depends on which other documents happen to be held, and
    # an unrelated one sharing the question's rarest word would make a conflicting version
    # look off-topic.
    asked = frozenset(QuestionWeights(shape, evidence).weights)
    about = [
        i
        for i in dated
        if asked
        and len(asked & evidence.doc_terms[i]) / len(asked) >= PARAMS.conflict_question_share
        and evidence.title_terms[i]
    ]
    authority = authority_view(documents)
    set_aside: dict[int, list[int]] = {}
    for position, i in enumerate(about):
        for j in about[position + 1 :]:
            if dates[i] == dates[j] or not _same_subject(evidence, i, j):
                continue
            followed = _preferred(i, j, authority, timeliness)
            other = j if followed == i else i
            set_aside.setdefault(other, []).append(followed)
    if not set_aside:
        return Settled(documents)
    superseded = []
    for i, winners in set_aside.items():
        for followed in winners:
            followed_date, aside_date = dates[followed], dates[i]
            if followed_date is None or aside_date is None:
                continue
            superseded.append(
                Superseded(documents[followed], followed_date, documents[i], aside_date)
            )
    kept = [d for i, d in enumerate(documents) if i not in set_aside]
    return Settled(kept, superseded)


def _same_subject(evidence: Evidence, i: int, j: int) -> bool:
    """Whether two documents are on one subject: titles sharing a term, texts overlapping."""
    if not evidence.title_terms[i] & evidence.title_terms[j]:
        return False
    return jaccard(evidence.doc_terms[i], evidence.doc_terms[j]) >= PARAMS.same_subject_jaccard


def _preferred(i: int, j: int, authority: np.ndarray, timeliness: np.ndarray) -> int:
    """Of two documents on one subject, the newer one unless it is much less authoritative.

    "Much less" is more than `PARAMS.authoritative_gap` below the other's authority (the
    authority view); otherwise the timeliness view decides, then authority, then order.
    """
    top = max(float(authority[i]), float(authority[j]))
    candidates = [k for k in (i, j) if float(authority[k]) >= top - PARAMS.authoritative_gap]
    return max(candidates, key=lambda k: (float(timeliness[k]), float(authority[k]), -k))
