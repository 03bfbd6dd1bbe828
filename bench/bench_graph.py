"""Per-question overhead of the graph + retrieval with a zero-latency model.

    .venv/bin/python bench/bench_graph.py [--questions 200]

Indexes the HotpotQA-350 corpus (≈3,460 paragraphs) into a temporary data directory, then
answers questions with a scripted zero-latency reasoner (search the question, then a second
hop; the switcher alternates True/False so both branches run; reflection always CORRECT).
The baseline is a bare Python loop doing exactly the same searches on the same sources.
Targets: graph p50 ≤ 50 ms, graph/bare p50 ratio ≤ 1.25.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import hotpot_corpus_rows, hotpot_items, percentiles, timed, write_jsonl

from prefrag import ask, build_graph
from prefrag.config import Settings
from prefrag.index.embeddings import get_embedder
from prefrag.index.ingest import index_paths
from prefrag.reasoners.base import AnswerDraft, CompareVerdict, Reflection, ThinkDecision
from prefrag.sources.base import SourceRegistry
from prefrag.sources.local import LocalSource


class ZeroLatencyReasoner:
    """Decides instantly: two searches, alternating switcher verdicts, then answer."""

    def __init__(self) -> None:
        self.calls = 0

    def think(
        self, question, scratchpad, *, sources, force_answer=False, feedback=None, rationale=False
    ):
        if len(scratchpad) == 0:
            return ThinkDecision(query=question)
        if len(scratchpad) == 1:
            observation = scratchpad[0].observation
            title = observation[0].metadata["title"] if observation else ""
            return ThinkDecision(query=f"{title} {question}")
        return ThinkDecision(action="answer")

    def compare(self, question, held, new):
        self.calls += 1
        return CompareVerdict(status=self.calls % 2 == 0)

    def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
        return AnswerDraft(
            answer=evidence[0].page_content[:20] if evidence else "",
            cited_ids=[evidence[0].metadata["id"]] if evidence else [],
        )

    def reflect(self, question, answer, evidence):
        return Reflection(label="CORRECT")


def bare_loop(question: str, local, web, k: int, verdict: bool) -> None:
    """The same searches as the graph run, with no graph around them."""
    first = local.search(question, k)
    title = first[0].metadata["title"] if first else ""
    local.search(f"{title} {question}", k)
    if not verdict:
        web.search(f"{title} {question}", k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp) / "home")
        corpus = write_jsonl(Path(tmp) / "hotpot.jsonl", hotpot_corpus_rows())
        index_paths([corpus], "hotpot", settings=settings, progress=False)
        index_paths([corpus], "hotpot-web", settings=settings, progress=False)
        local = LocalSource("hotpot", settings=settings)
        web = LocalSource("hotpot-web", settings=settings)
        web.kind = "web"  # a zero-latency stand-in for the web, searched the same way
        questions = [item.question for item in hotpot_items()[: args.questions]]
        reasoner = ZeroLatencyReasoner()
        graph = build_graph(reasoner=reasoner, sources=SourceRegistry([local, web]))
        local.search("warm up", 5)  # load the embedder outside the timings
        graph_times, bare_times = [], []
        embedder = get_embedder(settings)

        def cold(fn):  # each side meets the same cold query-vector cache
            def run():
                embedder.clear_cache()
                return fn()

            return run

        for i, question in enumerate(questions):
            # The graph decides the verdict, so it runs first; odd questions repeat the pair
            # with the bare loop first, so neither side always meets a warm cache.
            before = reasoner.calls
            graph_time = timed(cold(lambda q=question: ask(q, graph=graph)))
            verdict = reasoner.calls % 2 == 0 if reasoner.calls > before else True
            bare = cold(lambda q=question, v=verdict: bare_loop(q, local, web, 5, v))
            bare_time = timed(bare)
            if i % 2:
                reasoner.calls = before  # replay the same verdict
                bare_time = timed(bare)
                graph_time = timed(cold(lambda q=question: ask(q, graph=graph)))
            graph_times.append(graph_time)
            bare_times.append(bare_time)
    graph_stats, bare_stats = percentiles(graph_times), percentiles(bare_times)
    report = {
        "questions": len(questions),
        "graph": graph_stats,
        "bare_loop": bare_stats,
        "ratio_p50": graph_stats["p50_ms"] / bare_stats["p50_ms"],
        "overhead_p50_ms": graph_stats["p50_ms"] - bare_stats["p50_ms"],
        "targets": {"graph_p50_ms": 50, "ratio_p50": 1.25},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
