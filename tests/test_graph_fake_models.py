"""The graph's nodes driven by LangChain fake chat models through `LLMReasoner`."""

from __future__ import annotations

from typing import Any

from graph_helpers import ListSource, doc, run_node
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.runtime import Runtime

from prefrag import build_graph
from prefrag.graphs.context import Context
from prefrag.graphs.graph import after_compare, after_reflection, after_think
from prefrag.reasoners.llm import LLMReasoner
from prefrag.sources.base import SourceRegistry

QUESTION = "Which one was established first, Grouplogic or Inbios?"


def _reasoner(**replies: list[str]) -> LLMReasoner:
    models = {role: FakeListChatModel(responses=texts) for role, texts in replies.items()}
    models.setdefault("default", FakeListChatModel(responses=["unused"]))
    return LLMReasoner(models, structured=False)


def _sources() -> SourceRegistry:
    local = ListSource(
        "local",
        answers={
            "grouplogic": [doc("g", "GroupLogic, Inc., founded in 1988, is a software company.")],
            "inbios": [doc("i", "InBios International, Inc. was founded in 1996 in Seattle.")],
        },
    )
    web = ListSource("web", "web", default=[doc("w", "web", "web", "web")])
    return SourceRegistry([local, web])


def test_paper_case_grouplogic_end_to_end_with_fake_models() -> None:
    reasoner = _reasoner(
        think=[
            "Thought: I need both founding years.\nAction: Search_Engine\n"
            "Action Input: Grouplogic establishment year",
            "Thought: Grouplogic 1988. Now Inbios.\nAction: Search_Engine\n"
            "Action Input: Inbios establishment year",
            "Thought: I now know the final answer.\nFinal Answer: Grouplogic",
        ],
        compare=['```json\n{"analysis": "InBios founding year is new.", "status": "True"}\n```'],
        answer=["Thought: 1988 < 1996.\nFinal Answer: Grouplogic [g] [i]"],
        reflect=[
            "Self-Evaluation: CORRECT\nExplanation: Supported.\nImprovement Suggestions: None"
        ],
    )
    graph = build_graph(reasoner=reasoner, sources=_sources())
    result = graph.invoke({"question": QUESTION}, context=Context())
    assert result["answer"] == "Grouplogic"
    assert [c["id"] for c in result["citations"]] == ["g", "i"]
    assert [(s["source"], s["verdict"]) for s in result["route"]] == [
        ("local", None),
        ("local", True),
    ]
    assert result["counters"] == {"local_total": 2, "web_total": 0, "local_used": 2, "used": 2}
    assert result["model_calls"] == {"think": 3, "compare": 1, "answer": 1, "reflect": 1}


def test_think_node_with_a_fake_model_routes_to_retrieval() -> None:
    reasoner = _reasoner(
        think=["Thought: search it.\nAction: Search_Engine\nAction Input: Inbios founding"]
    )
    graph = build_graph(reasoner=reasoner, sources=_sources())
    update = run_node(graph, "think", {"question": QUESTION})
    assert after_think(update, Runtime(context=Context())) == "retrieve_local"
    assert after_think(update, Runtime(context=Context(use_planning=True))) == "plan_sources"
    assert update["query"] == "Inbios founding"


def test_compare_node_with_garbage_output_keeps_local_and_notes_the_fallback() -> None:
    reasoner = _reasoner(compare=["I am not JSON", "still not JSON"])
    graph = build_graph(reasoner=reasoner, sources=_sources())
    state = {
        "question": QUESTION,
        "query": "Inbios",
        "route": [{"kind": "retrieve", "used": []}],
        "evidence": [doc("g", "GroupLogic 1988")],
        "pending_local": [doc("i", "InBios 1996")],
    }
    update = state | run_node(graph, "compare", state)
    assert after_compare(update) == "use_local"
    step = update["step"]
    assert step["verdict"] is True
    assert any("fallback" in note for note in step["notes"])
    assert update["model_calls"] == {"compare": 2}  # one repair retry


def test_self_reflect_node_negative_label_goes_to_supplement() -> None:
    reasoner = _reasoner(
        reflect=[
            "Self-Evaluation: INCORRECT\nExplanation: Unsupported.\n"
            "Improvement Suggestions: Search Inbios."
        ]
    )
    graph = build_graph(reasoner=reasoner, sources=_sources())
    update = run_node(graph, "self_reflect", {"question": QUESTION, "answer": "Inbios"})
    assert after_reflection(update) == "supplement"
    assert "Search Inbios" in update["feedback"]["suggestion"]
    assert update["feedback"]["answer"] == "Inbios"


def test_answer_node_with_fake_model_cites_only_held_documents() -> None:
    reasoner = _reasoner(answer=["Final Answer: Grouplogic [g] [made-up]"])
    graph = build_graph(reasoner=reasoner, sources=_sources())
    update = run_node(
        graph, "answer", {"question": QUESTION, "evidence": [doc("g", "GroupLogic 1988")]}
    )
    assert update["answer"] == "Grouplogic"
    assert [c["id"] for c in update["citations"]] == ["g"]


def test_model_tokens_stream_through_the_graph_under_the_role_deadline() -> None:
    """`stream_mode="messages"` sees every role's tokens with the default deadline on.

    The deadline runs each request on a worker thread; without the caller's context there
    the callbacks (and so the token stream, Studio's and LangSmith's) were lost.
    """
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from prefrag.config import Settings

    replies = iter(
        [
            "Thought: find it.\nAction: Search_Engine\nAction Input: Grouplogic founding",
            "Thought: enough.\nFinal Answer: 1988 [g]",
            "Final Answer: GroupLogic was founded in 1988 [g]",
            "Self-Evaluation: CORRECT\nExplanation: the document says so.",
        ]
    )
    model = GenericFakeChatModel(messages=replies)
    deadline = Settings().role_deadline
    reasoner = LLMReasoner({"default": model}, structured=False, deadline=deadline)
    graph = build_graph(reasoner=reasoner, sources=_sources())
    events: list[Any] = list(
        graph.stream({"question": QUESTION}, context=Context(), stream_mode="messages")
    )
    nodes = {metadata["langgraph_node"] for _, metadata in events}
    streamed = "".join(str(chunk.content) for chunk, _ in events)
    assert deadline > 0 and len(events) > 20
    assert {"think", "answer", "self_reflect"} <= nodes
    assert "GroupLogic was founded in 1988" in streamed
