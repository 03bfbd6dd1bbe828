"""A fallback source searched for the first time is asked the question too, not only the sub-query.

The sub-query of a later round is drawn from the preferred source's evidence, which the
switcher has just judged wanting; a sub-query that follows the wrong lead finds nothing
useful in the fallback, while the question itself would. Invented notes, two sources,
through `prefrag.ask` with the extractive reasoner answering.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph_helpers import ListSource, doc
from langchain_core.documents import Document

from prefrag import ask
from prefrag.reasoners.base import CompareVerdict, Feedback, ScratchpadStep, ThinkDecision
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.sources.base import SourceRegistry

QUESTION = "In which year did the harbour town of Quellmar open its lighthouse?"
DRIFTED = "Serrin coast cliffs year"


class DriftingLead(ExtractiveReasoner):
    """Searches the question, then a lead drawn from the local note; always switches."""

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
        if force_answer or len(scratchpad) >= 2:
            return ThinkDecision(thought="Answering.", action="answer")
        query = question if not scratchpad else DRIFTED
        return ThinkDecision(thought="Searching.", query=query)

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        return CompareVerdict(analysis="Nothing about the lighthouse.", status=False)


def _sources() -> tuple[ListSource, ListSource]:
    town = doc(
        "quellmar",
        "Quellmar is a harbour town on the Serrin coast. Its fishing fleet lands herring.",
        title="Quellmar",
    )
    local = ListSource("local", default=[town])
    lighthouse = doc(
        "quellmar-light",
        "The Quellmar lighthouse was opened in 1887 on the harbour mole of Quellmar.",
        "web",
        "web",
        title="Quellmar lighthouse",
    )
    cliffs = doc(
        "serrin-cliffs",
        "The Serrin coast is known for its chalk cliffs, which walkers visit every year.",
        "web",
        "web",
        title="Serrin coast",
    )
    web = ListSource(
        "web", "web", answers={"Quellmar open its lighthouse": [lighthouse], "Serrin": [cliffs]}
    )
    return local, web


def test_the_fallback_first_searched_is_also_asked_the_question() -> None:
    local, web = _sources()
    result = ask(
        QUESTION,
        reasoner=DriftingLead(use_embeddings=False),
        sources=SourceRegistry([local, web]),
        max_reflections=0,
    )
    assert web.queries == [DRIFTED, QUESTION]
    switched = result["route"][1]
    assert switched["source"] == "web"
    assert [d.metadata["id"] for d in switched["used"]] == ["serrin-cliffs", "quellmar-light"]
    assert switched["question_results"] == {"web": ["quellmar-light"]}
    assert any("also asked the question itself" in note for note in switched["notes"])
    assert "1887" in result["answer"] and not result["abstained"]
    assert "quellmar-light" in [c["id"] for c in result["citations"]]
    assert result["counters"]["web_total"] == 2


def test_off_the_fallback_gets_only_the_sub_query() -> None:
    local, web = _sources()
    result = ask(
        QUESTION,
        reasoner=DriftingLead(use_embeddings=False),
        sources=SourceRegistry([local, web]),
        max_reflections=0,
        fallback_asks_question=False,
    )
    assert web.queries == [DRIFTED]
    assert "1887" not in result["answer"]


def test_the_supplement_reuses_the_question_search_of_the_fallback() -> None:
    local, web = _sources()
    reasoner = DriftingLead(use_embeddings=False)
    reasoner.reflect = lambda *args, **kwargs: ExtractiveReasoner.reflect(  # type: ignore[method-assign]
        reasoner, QUESTION, "an answer the notes do not hold", []
    )
    result = ask(QUESTION, reasoner=reasoner, sources=SourceRegistry([local, web]))
    assert result["route"][-1]["kind"] == "supplement"
    assert web.queries == [DRIFTED, QUESTION]  # the supplement did not ask the web again
    assert result["counters"]["web_total"] == 2
