"""Throughput of `prefrag eval --reasoner llm` against a fixed-latency stub model: 1 -> 8 workers.

    /work/venv/bin/python bench/bench_eval_concurrency.py [--latency 0.15] [--items 16]

The model is `tests/stub_server.py`'s `StubChatServer` (loopback, fixed latency per call);
the sources are in-memory keyword indexes over the items' HotpotQA paragraphs (the shared
file, or a synthetic set when it is absent), so the model's latency dominates as it would
with a remote endpoint. Target: items/s at concurrency 8 >= 6x items/s at concurrency 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.documents import Document

from prefrag.config import get_settings
from prefrag.documents import make_document
from prefrag.eval.runner import EvalConfig, run_eval
from prefrag.jsonl import read_rows, write_jsonl
from prefrag.sources.base import SourceRegistry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from stub_server import StubChatServer

SHARED = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "hotpotqa"
    / "hotpotqa_dev_350.jsonl"
)


class MemorySource:
    """Word-overlap search over a few hundred paragraphs (negligible CPU next to the model)."""

    def __init__(self, name: str, kind: str, rows: list[dict]) -> None:
        self.name, self.kind, self.authority = name, kind, 0.5
        self.description = f"{name} paragraphs"
        self.rows = [(r, set(f"{r['title']} {r['text']}".lower().split())) for r in rows]

    @property
    def last_note(self) -> str | None:
        return None

    def search(self, query: str, k: int) -> list[Document]:
        words = set(query.lower().split())
        ranked = sorted(self.rows, key=lambda rw: -len(words & rw[1]))[:k]
        return [
            make_document(
                r["text"],
                id=f"{self.name}-{r['id']}",
                source=self.name,
                kind=self.kind,
                title=r["title"],
                url=f"https://x.example/{r['id']}",
            )
            for r, _ in ranked
        ]


def _dataset(work: Path, n: int) -> tuple[Path, list[dict]]:
    if SHARED.exists():
        items = read_rows(SHARED)[:n]
    else:
        items = [
            {
                "question_id": f"q{i}",
                "question_text": f"question {i}",
                "answers_objects": [{"spans": ["a"]}],
                "contexts": [
                    {
                        "id": "0",
                        "title": f"T{i}",
                        "paragraph_text": f"text {i}",
                        "is_supporting": True,
                    }
                ],
            }
            for i in range(n)
        ]
    path = write_jsonl(items, work / "bench.jsonl")
    rows = []
    for row in items:
        for c in row["contexts"]:
            rows.append(
                {
                    "id": f"{row['question_id']}-{c['id']}",
                    "title": c["title"],
                    "text": c["paragraph_text"],
                }
            )
    return path, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--method", default="prefrag")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, StubChatServer(latency=args.latency) as server:
        work = Path(tmp)
        dataset, rows = _dataset(work, args.items)
        sources = SourceRegistry(
            [MemorySource("local", "local", rows[::2]), MemorySource("web", "web", rows)]
        )
        settings = get_settings().model_copy(
            update={
                "openai_base_url": server.url,
                "model": "stub",
                "backend": "openai",
                "openai_api_key": "stub",
            }
        )
        results = {}
        # Warm-up (imports, graph compile, HTTP client) so neither timed run pays for it.
        warm = EvalConfig(
            dataset=str(dataset),
            methods=[args.method],
            out=str(work / "warm"),
            reasoner="llm",
            limit=2,
        )
        run_eval(warm, settings=settings, sources=sources, progress=False, report=False)
        for concurrency in (1, 8):
            before = server.requests
            config = EvalConfig(
                dataset=str(dataset),
                methods=[args.method],
                out=str(work / f"c{concurrency}"),
                reasoner="llm",
                concurrency=concurrency,
            )
            start = time.perf_counter()
            summary = run_eval(
                config, settings=settings, sources=sources, progress=False, report=False
            )
            elapsed = time.perf_counter() - start
            entry = summary[args.method]
            results[concurrency] = args.items / elapsed
            print(
                f"concurrency {concurrency}: {elapsed:.2f} s, {results[concurrency]:.2f} items/s, "
                f"{server.requests - before} model calls, errors {entry['errors']}, "
                f"max in flight {server.max_in_flight}"
            )
        speedup = results[8] / results[1]
        print(f"speed-up 1 -> 8: {speedup:.2f}x (target >= 6x), model latency {args.latency:.2f} s")
        sys.exit(0 if speedup >= 6 else 1)


if __name__ == "__main__":
    main()
