"""Small fakes shared by the eval tests: keyword sources and a scripted reasoner."""

from __future__ import annotations

from prefrag.documents import make_document
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    CondensedQuestion,
    Reflection,
    ThinkDecision,
    Usage,
)

_STOP = {"lies", "in", "belongs", "to", "is", "where", "the", "of"}


class KeywordSource:
    """Returns the stored passages sharing the most words with the query."""

    def __init__(self, name, kind, passages, authority=0.5):
        self.name, self.kind, self.authority = name, kind, authority
        self.description = f"{name} passages"
        self.query_format = "keywords"
        self.passages = passages  # list of (title, text)
        self.calls = 0

    @property
    def last_note(self):
        return None

    def search(self, query, k):
        self.calls += 1
        words = set(query.lower().split()) - _STOP
        scored = []
        for i, (title, text) in enumerate(self.passages):
            overlap = len(words & (set(f"{title} {text}".lower().split()) - _STOP))
            if overlap:
                scored.append((-overlap, i, title, text))
        scored.sort()
        return [
            make_document(
                text,
                id=f"{self.name}-{i}",
                source=self.name,
                kind=self.kind,
                title=title,
                url=f"https://{self.name}.example/{i}",
                score=-s,
            )
            for s, i, title, text in scored[:k]
        ]


class ScriptedReasoner:
    """Searches with the question, then the title of the last document; answers with the
    first sentence of the best evidence; compare says False when nothing new is local."""

    def __init__(self, hops=2, reflect_label="CORRECT"):
        self.hops = hops
        self.reflect_label = reflect_label

    def think(
        self, question, scratchpad, *, sources, force_answer=False, feedback=None, rationale=False
    ):
        if len(scratchpad) >= self.hops or force_answer:
            return ThinkDecision(action="answer", usage=Usage(calls=1, input_tokens=3))
        query = question
        if scratchpad and scratchpad[-1].observation:
            query = scratchpad[-1].observation[0].page_content
        return ThinkDecision(
            thought="look",
            action="search",
            query=query,
            source=sources[-1] if len(scratchpad) % 2 else sources[0],
            usage=Usage(calls=1, input_tokens=3),
        )

    def compare(self, question, held, new):
        held_ids = {d.metadata["id"] for d in held}
        novel = any(d.metadata["id"] not in held_ids for d in new)
        return CompareVerdict(
            analysis="novel" if novel else "nothing new",
            status=novel,
            usage=Usage(calls=1, input_tokens=2),
        )

    def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
        if not evidence:
            return AnswerDraft(answer="unknown", usage=Usage(calls=1))
        best = evidence[-1]
        return AnswerDraft(
            answer=best.metadata["title"],
            cited_ids=[best.metadata["id"]],
            usage=Usage(calls=1, input_tokens=5, output_tokens=1),
        )

    def reflect(self, question, answer, evidence):
        return Reflection(label=self.reflect_label, usage=Usage(calls=1))

    def condense(self, question, history):
        return CondensedQuestion(question=question)

    def plan(self, question, sources):
        from prefrag.reasoners.source_planner import route_question

        return route_question(question, sources)
