"""The whole graph with a real small model behind every role: what its replies do.

Gemma 3 270M (pretrained, the `real-model` extra; `prefrag.small_model`) runs in process
through the `hf` backend behind think, compare, answer, reflect (and plan with
`--planning`) over the demo corpus and the demo questions (declared tuning data). Prints,
per role, the decisions made, how many fell back (unreadable after structured/text/repair),
model calls and tokens, one raw reply each, and per question the answer, whether the run
abstained, the retrieval counters and the notes. CPU only, and slow on two cores: keep
`--questions` and `--max-new-tokens` small.

    nice .venv/bin/python bench/bench_real_model_roles.py --questions 2 --max-new-tokens 48
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler


class ReplyRecorder(BaseCallbackHandler):
    """Keeps every chat model reply with the graph node that asked for it."""

    def __init__(self) -> None:
        self.node: dict[UUID, str] = {}
        self.replies: dict[str, list[str]] = defaultdict(list)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, metadata: Any = None, **kw: Any
    ) -> None:
        self.node[run_id] = str((metadata or {}).get("langgraph_node", "?"))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        text = response.generations[0][0].text if response.generations else ""
        self.replies[self.node.get(run_id, "?")].append(text)


def main() -> None:
    """Run the graph with the small real model behind every role and print what happened."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--max-iterations", type=int, default=1)
    parser.add_argument("--doc-chars", type=int, default=400)
    parser.add_argument("--planning", action="store_true", help="Also run the plan role.")
    args = parser.parse_args()

    os.environ.setdefault("PREFRAG_HOME", tempfile.mkdtemp(prefix="prefrag-real-model-"))
    from prefrag import build_graph
    from prefrag.demo_corpus import demo_questions
    from prefrag.graphs.context import Context
    from prefrag.local_models import HFChatModel
    from prefrag.reasoners.llm import LLMReasoner
    from prefrag.results import result_record
    from prefrag.small_model import small_model_checkpoint
    from prefrag.sources.defaults import default_sources

    started = time.perf_counter()
    checkpoint = small_model_checkpoint()
    model = HFChatModel(
        checkpoint=str(checkpoint), temperature=0.0, max_new_tokens=args.max_new_tokens
    )
    reasoner = LLMReasoner({"default": model}, max_doc_chars=args.doc_chars)
    graph = build_graph(reasoner=reasoner, sources=default_sources(web=False))
    context = Context(
        max_iterations=args.max_iterations,
        top_k=2,
        fallback_sources=[],
        use_planning=args.planning,
    )
    print(f"model: {checkpoint} (ready in {time.perf_counter() - started:.0f} s)")

    decisions: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    recorder = ReplyRecorder()
    abstained = 0
    questions = [q["question"] for q in demo_questions()][: args.questions]
    for question in questions:
        begun = time.perf_counter()
        result = graph.invoke(
            {"question": question},
            config={"callbacks": [recorder], "recursion_limit": 100},
            context=context,
        )
        record = result_record(result)
        decisions.update(record["role_decisions"])
        fallbacks.update(record["role_fallbacks"])
        calls.update(record["model_calls"])
        tokens.update(record["tokens"])
        abstained += record["abstained"]
        print(f"\nQ: {question}  ({time.perf_counter() - begun:.0f} s)")
        print(f"  answer: {record['answer']!r}  abstained: {record['abstained']}")
        print(f"  citations: {[c['id'] for c in record['citations']]}")
        print(f"  counters: {record['counters']}")
        print(f"  reflections: {[r['label'] for r in record['reflections']]}")
        print(f"  decisions: {record['role_decisions']}  fallbacks: {record['role_fallbacks']}")
        print(f"  model calls: {record['model_calls']}  tokens: {record['tokens']}")
        for node, replies in sorted(recorder.replies.items()):
            print(f"  {node} replied: {json.dumps(replies[-1][:120])}")
        for note in record["notes"]:
            print(f"  note: {note}")

    print("\nrole      decisions  fallbacks  rate   model calls  tokens")
    for role in sorted(decisions):
        rate = fallbacks[role] / decisions[role] if decisions[role] else 0.0
        print(
            f"{role:9} {decisions[role]:9d}  {fallbacks[role]:9d}  {rate:4.0%}  "
            f"{calls[role]:11d}  {tokens[role]:6d}"
        )
    print(f"runs abstained: {abstained} of {len(questions)}")
    print("\none raw reply per node (first 160 characters):")
    for node, replies in sorted(recorder.replies.items()):
        print(f"  {node} ({len(replies)} replies): {json.dumps(replies[0][:160])}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
