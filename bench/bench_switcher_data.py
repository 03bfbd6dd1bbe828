"""Throughput of `prefrag train switcher-data` against a fixed-latency stub model: 1 -> 8 workers.

    .venv/bin/python bench/bench_switcher_data.py [--latency 0.15] [--items 16]

The policy and the teacher are chat models served by `tests/stub_server.py`'s `StubChatServer`
(loopback, fixed latency per call): every judged compare step asks the policy 9 times
(temperature x top-p grid) and the teacher once. Its verdicts depend on the request's
temperature, so real pairs are made. The sources are in-memory word-overlap indexes over
the items' HotpotQA paragraphs (the shared file, or a synthetic set when it is absent), so
the model's latency dominates as with a remote endpoint. Target: questions/s at
concurrency 8 >= 6x questions/s at concurrency 1.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from bench_eval_concurrency import MemorySource, _dataset

from prefrag.config import get_settings
from prefrag.sources.base import SourceRegistry
from prefrag.training.switcher_data import SwitcherDataConfig, SwitcherDataResult, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from stub_server import StubChatServer, completion


def reply(request: dict) -> dict:
    """Compare: "True" below temperature 0.5; think: search twice (question, then a hop)."""
    response = completion(request)
    prompt = request["messages"][-1]["content"]
    if "New information:" in prompt:
        keep = request.get("temperature", 1.0) < 0.5
        content = {"analysis": "Adds details." if keep else "Nothing new.", "status": str(keep)}
    elif "Begin!" in prompt:
        question = re.search(r"Question: (.*)", prompt)
        searches = prompt.count("Action Input:") - 1
        action = "search" if searches < 2 else "answer"
        query = (question[1] if question else "question") + (" more" if searches else "")
        content = {
            "thought": "look it up",
            "action": action,
            "query": query if action == "search" else "",
            "source": "",
            "answer": "stub" if action == "answer" else "",
        }
    else:
        return response
    response["choices"][0]["message"]["content"] = json.dumps(content)
    return response


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--items", type=int, default=16)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubChatServer(latency=args.latency, reply=reply) as server,
    ):
        work = Path(tmp)
        dataset, rows = _dataset(work, args.items)
        sources = SourceRegistry(
            [MemorySource("local", "local", rows[::2]), MemorySource("web", "web", rows)]
        )
        settings = get_settings().model_copy(
            update={"openai_base_url": server.url, "backend": "openai", "openai_api_key": "stub"}
        )

        def collect(name: str, concurrency: int, limit: int | None = None) -> SwitcherDataResult:
            config = SwitcherDataConfig(
                dataset=str(dataset),
                out=str(work / name / "pairs.jsonl"),
                policy="openai:policy",
                teacher="openai:teacher",
                two_source=None,
                concurrency=concurrency,
                limit=limit,
                progress=False,
            )
            return run(config, settings=settings, sources=sources)

        collect("warm", 2, limit=2)  # imports, graph compile, HTTP clients
        rates = {}
        for concurrency in (1, 8):
            before = server.requests
            start = time.perf_counter()
            result = collect(f"c{concurrency}", concurrency)
            elapsed = time.perf_counter() - start
            rates[concurrency] = args.items / elapsed
            print(
                f"concurrency {concurrency}: {elapsed:.2f} s, "
                f"{rates[concurrency]:.2f} questions/s, "
                f"{server.requests - before} model calls, {result.pairs} pairs {result.labels}, "
                f"failed {result.failed}, max in flight {server.max_in_flight}"
            )
        speedup = rates[8] / rates[1]
        print(f"speed-up 1 -> 8: {speedup:.2f}x (target >= 6x), model latency {args.latency:.2f} s")
        sys.exit(0 if speedup >= 6 else 1)


if __name__ == "__main__":
    main()
