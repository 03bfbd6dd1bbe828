"""Conflicting documents: which of two held documents on one subject an answer follows.

Two held documents conflict for a question when both are about what it asks (each covers
at least `PARAMS.conflict_question_share` of its weight), their titles share a term (one
subject), and they carry different dates. The answer follows the newest of the
authoritative ones: polyview's authority view (`authority_view`) keeps the documents within
`PARAMS.authoritative_gap` of the most authoritative, and its timeliness view
(`timeliness_view`) picks the newest of those. The others are set aside, and the answer
says which document it follows and over which. No `--polyview` run setting is needed: these
are the same view functions the reranker uses, called directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from langchain_core.documents import Document

from prefrag.documents import display_id, doc_id, unique_documents
from prefrag.reasoners._evidence import Evidence, QuestionWeights
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._text import QuestionShape
from prefrag.reasoners.base import AnswerDraft
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
        notes = [s.note() for s in self.superseded if doc_id(s.followed) in draft.cited_ids]
        if not notes or draft.abstained:
            return draft
        text = draft.answer.rstrip()
        return draft.model_copy(update={"answer": f"{text} ({' '.join(notes)})"})


def settle(shape: QuestionShape, documents: Sequence[Document]) -> Settled:
    """Set aside held documents superseded by a newer authoritative one on the same subject."""
    documents = unique_documents(documents)
    if len(documents) < 2 or shape.kind == "choice":
        return Settled(documents)
    timeliness, dates = timeliness_view(documents)
    dated = [i for i, d in enumerate(dates) if d is not None]
    if len(dated) < 2:
        return Settled(documents)
    evidence = Evidence(documents)
    weights = QuestionWeights(shape, evidence)
    about = [
        i
        for i in dated
        if weights.share(evidence.doc_terms[i]) >= PARAMS.conflict_question_share
        and evidence.title_terms[i]
    ]
    authority = authority_view(documents)
    groups = _subjects(about, evidence)
    set_aside: dict[int, int] = {}
    for group in groups:
        group_dates = {dates[i] for i in group}
        if len(group) < 2 or len(group_dates) < 2:
            continue
        top = max(float(authority[i]) for i in group)
        authoritative = [i for i in group if float(authority[i]) >= top - PARAMS.authoritative_gap]
        followed = max(authoritative, key=lambda i: (float(timeliness[i]), float(authority[i]), -i))
        for i in group:
            if i != followed and dates[i] != dates[followed]:
                set_aside[i] = followed
    if not set_aside:
        return Settled(documents)
    superseded = []
    for i, followed in set_aside.items():
        followed_date, aside_date = dates[followed], dates[i]
        assert followed_date is not None and aside_date is not None
        superseded.append(Superseded(documents[followed], followed_date, documents[i], aside_date))
    kept = [d for i, d in enumerate(documents) if i not in set_aside]
    return Settled(kept, superseded)


def _subjects(indexes: Sequence[int], evidence: Evidence) -> list[list[int]]:
    """Documents grouped by subject: titles sharing a term, transitively."""
    groups: list[list[int]] = []
    for i in indexes:
        joined = [
            g for g in groups if any(evidence.title_terms[i] & evidence.title_terms[j] for j in g)
        ]
        merged = [i] + [j for g in joined for j in g]
        groups = [g for g in groups if g not in joined] + [sorted(merged)]
    return groups
