"""The paper's process, end to end, with a scripted reasoner (appendix F's case)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from graph_helpers import ListSource, doc, run_node
from langchain_core.documents import Document

from prefrag import ask, build_graph
from prefrag.errors import EmptyQuestionError, UnknownSourceError
from prefrag.graphs.context import Context
from prefrag.graphs.graph import after_compare
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    CondensedQuestion,
    Feedback,
    PriorTurn,
    Reflection,
    ScratchpadStep,
    ThinkDecision,
    Usage,
)
from prefrag.reasoners.plans import SourceBrief, SourcePlan
from prefrag.reasoners.source_planner import route_question
from prefrag.sources.base import SourceRegistry

QUESTION = (
    "In what year did the Danish plant ecologist who assisted a Danish chemist, "
    "famous for the introduction of the concept of pH, die?"
)
ONE = Usage(calls=1, input_tokens=10, output_tokens=5)


# A test's own `think`: (question, scratchpad, source names, force_answer) -> decision.
Step = Callable[[str, list[ScratchpadStep], list[str], bool], ThinkDecision]


class ScriptedReasoner:
    """Plays appendix F: local hit, local miss → web, 'Not available', INCORRECT, 1974.

    Args:
        step: Decides each `think` instead of the script (the rest stays scripted).
    """

    def __init__(self, step: Step | None = None) -> None:
        self.step = step
        self.compare_inputs: list[tuple[list[str], list[str]]] = []
        self.feedback_seen: list[Feedback | None] = []
        self.condensed: list[tuple[str, list[str]]] = []

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
        self.feedback_seen.append(feedback)
        if self.step is not None:
            return self.step(question, list(scratchpad), list(sources), force_answer)
        queries = [
            "Danish chemist who introduced the concept of pH",
            "Danish plant ecologist who assisted Sørensen",
        ]
        if len(scratchpad) < len(queries):
            return ThinkDecision(thought="next hop", query=queries[len(scratchpad)], usage=ONE)
        return ThinkDecision(thought="I can answer now.", action="answer", usage=ONE)

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        self.compare_inputs.append(
            ([d.metadata["id"] for d in held], [d.metadata["id"] for d in new])
        )
        return CompareVerdict(analysis="Nothing about an ecologist.", status=False, usage=ONE)

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: Feedback | None = None,
        earlier: PriorTurn | None = None,
    ) -> AnswerDraft:
        ids = [d.metadata["id"] for d in evidence]
        if "olsen" in ids:
            return AnswerDraft(answer="1974", cited_ids=["olsen", "sorensen"], usage=ONE)
        return AnswerDraft(answer="Not available", cited_ids=[], usage=ONE)

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        if answer == "Not available":
            return Reflection(
                label="INCORRECT",
                explanation="The ecologist was not identified.",
                suggestion="Search who assisted S. P. L. Sørensen.",
                usage=ONE,
            )
        return Reflection(label="CORRECT", explanation="Supported.", usage=ONE)

    def plan(self, question: str, sources: Sequence[SourceBrief]) -> SourcePlan:
        return route_question(question, sources)

    def condense(self, question: str, history: Sequence[PriorTurn]) -> CondensedQuestion:
        self.condensed.append((question, [turn.question for turn in history]))
        return CondensedQuestion(question=question)


def _sources() -> tuple[ListSource, ListSource]:
    sorensen = doc("sorensen", "S. P. L. Sørensen was a Danish chemist who introduced pH.")
    wrong = doc("wrong", "The Carlsberg Laboratory was founded in 1875.")
    olsen = doc("olsen", "Carsten Olsen (1891-1974), Danish plant ecologist, assisted Sørensen.")
    local = ListSource(
        "local",
        # Checked in order: the full question (supplement) also mentions the chemist.
        answers={"in what year": [sorensen, olsen], "chemist": [sorensen], "ecologist": [wrong]},
    )
    web = ListSource(
        "web", "web", default=[doc("web-1", "Thorvald Sørensen, botanist.", "web", "web")]
    )
    return local, web


def test_appendix_f_route_and_counters() -> None:
    local, web = _sources()
    reasoner = ScriptedReasoner()
    graph = build_graph(reasoner=reasoner, sources=SourceRegistry([local, web]))

    # The paper's web search gets the sub-query only.
    result = graph.invoke({"question": QUESTION}, context=Context(fallback_asks_question=False))

    route = [(s["kind"], s["searched"], s["source"], s.get("verdict")) for s in result["route"]]
    assert route == [
        ("retrieve", ["local"], "local", None),  # first retrieval: no judge call
        ("retrieve", ["local", "web"], "web", False),  # local miss → web
        ("supplement", ["local", "web"], "local+web", None),  # after INCORRECT
    ]
    # Only the web documents entered the switched step's observation.
    assert [d.metadata["id"] for d in result["route"][1]["used"]] == ["web-1"]
    # The judge saw everything held so far and only the new local documents.
    assert reasoner.compare_inputs == [(["sorensen"], ["wrong"])]
    assert result["answer"] == "1974"
    assert [c["id"] for c in result["citations"]] == ["olsen", "sorensen"]
    assert [r["label"] for r in result["reflections"]] == ["INCORRECT", "CORRECT"]
    # The supplement searched with the original question, and think saw the failed answer.
    assert local.queries[-1] == QUESTION and web.queries[-1] == QUESTION
    assert reasoner.feedback_seen[-1] is not None
    assert reasoner.feedback_seen[-1].answer == "Not available"
    assert reasoner.feedback_seen[-1].label == "INCORRECT"
    assert result["counters"] == {"local_total": 3, "web_total": 2, "local_used": 2, "used": 4}
    assert result["model_calls"] == {"think": 4, "compare": 1, "answer": 2, "reflect": 2}
    assert result["tokens"]["answer"] == 30


def test_iteration_cap_forces_an_answer_from_the_scratchpad() -> None:
    forced: list[bool] = []

    def always_search(question, scratchpad, sources, force_answer):
        forced.append(force_answer)
        if force_answer:  # paper B.3: answer from what the scratchpad holds
            return ThinkDecision(
                thought="budget spent", action="answer", answer="alpha", cited_ids=["a"]
            )
        return ThinkDecision(thought="more", query=f"hop {len(scratchpad)}", usage=ONE)

    class CountsAnswers(ScriptedReasoner):
        answer_calls = 0

        def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
            self.answer_calls += 1
            return AnswerDraft(answer="from the answer prompt")

    local = ListSource("local", default=[doc("a", "alpha")])
    reasoner = CountsAnswers(always_search)
    result = ask(
        "What is alpha?",
        reasoner=reasoner,
        sources=SourceRegistry([local]),
        max_iterations=2,
        max_reflections=0,
    )
    assert [s["kind"] for s in result["route"]] == ["retrieve", "retrieve"]
    assert forced == [False, False, True]  # the third round is a forced answer
    assert result["answer"] == "alpha" and reasoner.answer_calls == 0
    assert [c["id"] for c in result["citations"]] == ["a"]
    assert "reflect" not in result["model_calls"]


def test_a_reasoner_that_ignores_the_forced_answer_still_gets_an_answer() -> None:
    stubborn = ScriptedReasoner(
        lambda question, scratchpad, sources, force_answer: ThinkDecision(
            thought="more", query=f"hop {len(scratchpad)}", usage=ONE
        )
    )
    local = ListSource("local", default=[doc("olsen", "Carsten Olsen died in 1974.")])
    result = ask("When?", reasoner=stubborn, sources=SourceRegistry([local]), max_iterations=1)
    assert len(result["route"]) == 1
    assert result["answer"] == "1974"  # the answer node's draft
    assert result["model_calls"]["answer"] == 1


def test_second_negative_reflection_is_final() -> None:
    class NeverSure(ScriptedReasoner):
        def reflect(self, question, answer, evidence):
            return Reflection(label="PARTIALLY CORRECT", usage=ONE)

    local, web = _sources()
    result = ask(QUESTION, reasoner=NeverSure(), sources=SourceRegistry([local, web]))
    assert sum(s["kind"] == "supplement" for s in result["route"]) == 1
    assert len(result["reflections"]) == 2


def test_failing_web_degrades_to_local_and_says_so() -> None:
    local, _ = _sources()
    offline = ListSource("web", "web", fail=True)
    result = ask(QUESTION, reasoner=ScriptedReasoner(), sources=SourceRegistry([local, offline]))
    switched = result["route"][1]
    assert switched["searched"] == ["local", "web"]
    assert switched["source"] == "local"
    assert any("web unavailable" in note for note in switched["notes"])
    assert any("using local documents" in note for note in switched["notes"])
    assert result["counters"]["web_total"] == 2  # attempted, never used
    assert result["answer"] == "1974"


def test_fallback_order_and_model_requested_source() -> None:
    local = ListSource("local", default=[doc("l", "local text")])
    wiki = ListSource("wiki", default=[doc("w", "wiki text", "wiki")])
    web = ListSource("web", "web", default=[doc("x", "web text", "web", "web")])

    def asks_for_web(question, scratchpad, sources, force_answer):
        assert sources == ["local", "wiki", "web"]
        if len(scratchpad) < 2:
            return ThinkDecision(query="q", source="web", usage=ONE)
        return ThinkDecision(action="answer", usage=ONE)

    result = ask(
        "q?",
        reasoner=ScriptedReasoner(asks_for_web),
        sources=SourceRegistry([local, wiki, web]),
        fallback_sources=["wiki", "web"],
        max_reflections=0,
    )
    assert result["route"][1]["searched"] == ["local", "web"]  # the model's pick goes first
    assert result["counters"]["web_total"] == 1


def test_bad_input_raises_typed_errors() -> None:
    local, web = _sources()
    with pytest.raises(EmptyQuestionError):
        ask("   ", reasoner=ScriptedReasoner(), sources=SourceRegistry([local, web]))
    with pytest.raises(UnknownSourceError, match="known: local, web"):
        ask(
            "q?",
            reasoner=ScriptedReasoner(),
            sources=SourceRegistry([local, web]),
            preferred_source="nope",
        )


def test_compare_node_alone_switches_on_false() -> None:
    local, web = _sources()
    graph = build_graph(reasoner=ScriptedReasoner(), sources=SourceRegistry([local, web]))
    state = {
        "question": QUESTION,
        "query": "ecologist",
        "route": [{"kind": "retrieve", "used": []}],
        "evidence": [doc("sorensen", "Sørensen")],
        "pending_local": [doc("wrong", "Carlsberg")],
        "counters": {"local_total": 2, "web_total": 0, "local_used": 1, "used": 1},
    }
    opened = state | run_node(graph, "open_step", state)
    update = run_node(graph, "compare", opened)
    assert after_compare(opened | update) == "search_fallback"
    assert update["step"]["verdict"] is False

    alone = Context(fallback_sources=[])
    opened = state | run_node(graph, "open_step", state, alone)
    kept = opened | run_node(graph, "compare", opened, alone)
    assert after_compare(kept) == "use_local"
    assert any("No fallback source configured" in note for note in kept["step"]["notes"])
    closed = run_node(graph, "use_local", kept, alone)
    assert closed["counters"] == {"used": 1, "local_used": 1}  # increments for the reducer


def test_streaming_node_updates() -> None:
    local, web = _sources()
    graph = build_graph(reasoner=ScriptedReasoner(), sources=SourceRegistry([local, web]))
    nodes = [
        next(iter(chunk))
        for chunk in graph.stream({"question": QUESTION}, context=Context(), stream_mode="updates")
    ]
    assert nodes[:5] == [
        "new_question",
        "condense_question",
        "think",
        "retrieve_local",
        "mog_select",
    ]
    assert "search_fallback" in nodes and nodes[-1] == "self_reflect"


def test_preference_off_uses_both_sources_every_step() -> None:
    local, web = _sources()
    reasoner = ScriptedReasoner()
    result = ask(
        QUESTION,
        reasoner=reasoner,
        sources=SourceRegistry([local, web]),
        preference_driven=False,
        max_reflections=0,
    )
    assert reasoner.compare_inputs == []  # no switcher without a preference
    for step in result["route"]:
        assert step["searched"] == ["local", "web"]
        assert step["source"] == "local+web"
        assert {d.metadata["source"] for d in step["used"]} == {"local", "web"}
    assert result["counters"] == {"local_total": 2, "web_total": 2, "local_used": 2, "used": 4}


def test_supplement_reuses_an_identical_earlier_search_instead_of_repeating_it() -> None:
    def question_first(question, scratchpad, sources, force_answer):
        if not scratchpad:
            return ThinkDecision(query=question, usage=ONE)  # first hop: the question
        return ThinkDecision(action="answer", usage=ONE)

    local = ListSource("local", default=[doc("sorensen", "Sørensen introduced pH.")])
    web = ListSource("web", "web", default=[doc("web-1", "Thorvald Sørensen.", "web", "web")])
    result = ask(
        QUESTION, reasoner=ScriptedReasoner(question_first), sources=SourceRegistry([local, web])
    )
    first, supplement = result["route"]
    assert first["query"] == supplement["query"] == QUESTION
    assert supplement["searched"] == ["web"]  # local was not searched a second time
    assert any("reused the identical earlier search" in n for n in supplement["notes"])
    assert local.queries == [QUESTION]
    assert result["counters"] == {"local_total": 1, "web_total": 1, "local_used": 1, "used": 2}
    assert [r["label"] for r in result["reflections"]] == ["INCORRECT", "INCORRECT"]


def test_a_new_question_on_a_thread_starts_a_fresh_episode() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    local, web = _sources()
    graph = build_graph(
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local, web]),
        checkpointer=InMemorySaver(),
    )
    first = ask(QUESTION, graph=graph, thread_id="t1")
    assert first["answer"] == "1974" and first["history"] == []

    # Asked again on the same thread, the question runs exactly as on a fresh thread:
    # nothing of the first episode leaks into the route, reflections or counters.
    second = ask(QUESTION, graph=graph, thread_id="t1")
    for key in ("answer", "citations", "reflections", "counters", "model_calls", "notes"):
        assert second[key] == first[key], key
    assert [s["index"] for s in second["route"]] == [0, 1, 2]
    # The earlier turn stays readable as history.
    (turn,) = second["history"]
    assert turn["question"] == QUESTION and turn["answer"] == "1974"
    assert [c["id"] for c in turn["citations"]] == ["olsen", "sorensen"]

    third = ask("Who introduced the concept of pH?", graph=graph, thread_id="t1")
    assert third["question"] == "Who introduced the concept of pH?"
    assert [t["question"] for t in third["history"]] == [QUESTION, QUESTION]


def test_a_resumed_run_keeps_the_settings_stored_with_its_checkpoint() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from prefrag.api import resume

    local, web = _sources()
    graph = build_graph(
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local, web]),
        checkpointer=InMemorySaver(),
    )
    settings = Context(fallback_sources=[], max_reflections=0, top_k=1)
    for thread in ("api", "raw"):
        graph.invoke(
            {"question": QUESTION},
            config={"configurable": {"thread_id": thread}},
            context=settings,
            interrupt_after=["retrieve_local"],
        )
    # Through the API, and through a bare `invoke(None)` that passes no context at all.
    resumed = [
        resume("api", graph=graph),
        graph.invoke(None, config={"configurable": {"thread_id": "raw"}}),
    ]
    for result in resumed:
        assert result["reflections"] == []  # max_reflections=0, not the default 1
        assert result["counters"]["web_total"] == 0  # no fallback source, not the web
        assert all(len(step["retrieved"]) <= 1 for step in result["route"])


def test_ask_with_a_checkpointer_returns_the_thread_it_stored_the_run_under():
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    graph = build_graph(
        reasoner=ScriptedReasoner(), sources=SourceRegistry(list(_sources())), checkpointer=saver
    )
    result = ask(QUESTION, graph=graph)
    thread = result["thread_id"]
    assert graph.get_state({"configurable": {"thread_id": thread}}).values["answer"]


class MisreadingReasoner(ScriptedReasoner):
    """Answers wrongly over complete evidence, and its reflection says nothing is missing."""

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        return Reflection(
            label="PARTIALLY CORRECT",
            explanation="The answer misreads the evidence.",
            gaps=[],
            usage=ONE,
        )


def test_a_negative_reflection_with_nothing_missing_buys_no_supplement() -> None:
    local, web = _sources()
    result = ask(QUESTION, reasoner=MisreadingReasoner(), sources=SourceRegistry([local, web]))
    assert [s["kind"] for s in result["route"]] == ["retrieve", "retrieve"]
    assert [r["label"] for r in result["reflections"]] == ["PARTIALLY CORRECT"]
    assert result["reflections"][0]["gaps"] == []
    assert any("no supplement" in n for n in result["notes"])


def test_paper_mode_supplements_after_every_negative_reflection() -> None:
    local, web = _sources()
    result = ask(
        QUESTION,
        reasoner=MisreadingReasoner(),
        sources=SourceRegistry([local, web]),
        supplement_when="negative",
    )
    assert sum(s["kind"] == "supplement" for s in result["route"]) == 1
    assert len(result["reflections"]) == 2
