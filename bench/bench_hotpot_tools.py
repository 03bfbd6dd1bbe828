"""The tool nodes inside the real graph on HotpotQA-350, two-source 50 %, extractive reasoner.

Variants of method `prefrag` (each one `prefrag eval` run in its own folder):

- `none`: no tool node; `pv-inquiry`, `pv-care`: polyview with that profile;
  `mog`: Mix-of-Granularity (uniform router); `mog-pv`: MoG + polyview (inquiry);
- views ablation (inquiry weights, no chat model, so U and S are off): `pv-R`, `pv-RA`,
  `pv-RT`, `pv-RAT` without the coverage constraint; the full reranker (R+A+T with topic
  coverage) is `pv-inquiry`.

Every variant shares one two-source index (`<work>/shared-index`, linked as each run's
`index`), copied once from an existing run of the same split (default
`eval-runs/hotpotqa350-ts50`). Polyview embeds every candidate; to keep a whole variant
within minutes on a busy CPU, the accuracy runs give the reranker an embedder that looks
up the vectors both indexes already hold (same model, same text) and embeds only what is
not there (the sub-queries). `latency` measures the node with the real embedder, with and
without the reranker's vector cache.

Run (from the repository root):

    python bench/bench_hotpot_tools.py run                 # every variant (~15 min)
    python bench/bench_hotpot_tools.py latency --limit 40  # polyview node, cache off vs on
    python bench/bench_hotpot_tools.py table               # results.md + results.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from prefrag.jsonl import read_rows

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "hotpotqa_dev_350.jsonl"
SOURCE_RUN = REPO / "eval-runs" / "hotpotqa350-ts50"
WORK = REPO / "eval-runs" / "hotpot-tools"
# name -> (polyview, profile, mog, reranker options or None for the profile's own)
VARIANTS: dict[str, tuple[bool, str, bool, dict[str, Any] | None]] = {
    "none": (False, "inquiry", False, None),
    "pv-inquiry": (True, "inquiry", False, None),
    "pv-care": (True, "care", False, None),
    "mog": (False, "inquiry", True, None),
    "mog-pv": (True, "inquiry", True, None),
    "pv-R": (True, "ablation-R", False, {"views": ("R",), "coverage": False}),
    "pv-RA": (True, "ablation-RA", False, {"views": ("R", "A"), "coverage": False}),
    "pv-RT": (True, "ablation-RT", False, {"views": ("R", "T"), "coverage": False}),
    "pv-RAT": (True, "ablation-RAT", False, {"views": ("R", "A", "T"), "coverage": False}),
}
TOOL_NODES = (
    "retrieve_local",
    "mog_select",
    "polyview_rerank",
    "search_fallback",
    "rerank_fallback",
    "supplement",
)


class LookupEmbedder:
    """Vectors of texts an index already embedded; anything else goes to `fallback`."""

    def __init__(self, table: dict[str, np.ndarray], fallback: Any) -> None:
        self.table = table
        self.fallback = fallback
        self.dimension = fallback.dimension
        self.looked_up = 0
        self.embedded = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, shape (len(texts), dimension)."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            vector = self.table.get(_normal(text))
            if vector is None:
                missing.append(i)
            else:
                out[i] = vector
        if missing:
            out[missing] = self.fallback.encode([texts[i] for i in missing])
        self.looked_up += len(texts) - len(missing)
        self.embedded += len(missing)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """The vector of one text."""
        return self.encode([text])[0]


def _normal(text: str) -> str:
    return " ".join(text.split())


def shared_index(work: Path, source_run: Path) -> Path:
    """The two-source index every variant links to, copied once from `source_run`."""
    target = work / "shared-index"
    if not (target / "local.indexed.json").exists():
        shutil.copytree(source_run / "index", target, dirs_exist_ok=True)
    return target


def prepare_run(work: Path, name: str, source_run: Path) -> Path:
    """`<work>/<name>` with `index` linked to the shared index and the retrieval cache."""
    out = work / name
    out.mkdir(parents=True, exist_ok=True)
    index = shared_index(work, source_run)
    link = out / "index"
    if not link.exists():
        link.symlink_to(index.resolve(), target_is_directory=True)
    cache = out / "retrieval_cache.jsonl"
    if not cache.exists() and (source_run / "retrieval_cache.jsonl").exists():
        shutil.copy(source_run / "retrieval_cache.jsonl", cache)
    return out


def lookup_embedder(index: Path) -> LookupEmbedder:
    """An embedder answering from the vectors of both indexes under `index`."""
    from prefrag.index import docstore
    from prefrag.index.embeddings import get_embedder

    table: dict[str, np.ndarray] = {}
    for source in ("local", "web-corpus"):
        folder = index / "home" / "sources" / source
        manifest = docstore.require_manifest(folder, source)
        generation = folder / manifest.generation
        records = docstore.load_records(generation)
        vectors = docstore.load_vectors(generation).astype(np.float32)
        for record, vector in zip(records, vectors, strict=True):
            table.setdefault(_normal(record["text"]), vector)
    return LookupEmbedder(table, get_embedder())


def fresh_rerankers(embedder: Any, *, cache_size: int | None = None) -> dict[str, Any]:
    """New (cold) rerankers under every profile name the variants use."""
    from prefrag.tools.polyview import DEFAULT_VECTOR_CACHE_SIZE, PolyviewReranker

    size = DEFAULT_VECTOR_CACHE_SIZE if cache_size is None else cache_size
    rerankers: dict[str, Any] = {}
    for _, profile, _, options in VARIANTS.values():
        kwargs = dict(options or {})
        base = "inquiry" if profile.startswith("ablation") else profile
        rerankers[profile] = PolyviewReranker(
            profile=base, embedder=embedder, vector_cache_size=size, **kwargs
        )
    return rerankers


def build_mog(index: Path, embedder: Any) -> dict[str, Any]:
    """Build the local source's MoG index in the shared index (once)."""
    from prefrag.config import get_settings
    from prefrag.dataset_sources import isolated_settings
    from prefrag.tools.granularity_index import build_source_index, mog_index_dir
    from prefrag.tools.granularity_source import source_documents

    settings = isolated_settings(get_settings(), index / "home")
    folder = mog_index_dir("local", settings)
    if (folder / "index.json").exists():
        return {"built": False}
    start = time.perf_counter()
    documents = source_documents("local", settings)
    built = build_source_index("local", documents, settings=settings, encoder=embedder)
    return {"built": True, "seconds": time.perf_counter() - start, **built.size_report()}


def run_variant(
    work: Path,
    name: str,
    source_run: Path,
    *,
    limit: int | None,
    concurrency: int,
    rerankers: dict[str, Any],
) -> dict[str, Any]:
    """Run method `prefrag` under variant `name`; returns the summary."""
    from prefrag.eval.runner import EvalConfig, run_eval

    polyview, profile, mog, _ = VARIANTS[name]
    out = prepare_run(work, name, source_run)
    config = EvalConfig(
        dataset=str(DATASET),
        methods=["prefrag"],
        out=str(out),
        reasoner="extractive",
        two_source=0.5,
        limit=limit,
        concurrency=concurrency,
        context={"use_polyview": polyview, "polyview_profile": profile, "use_mog": mog},
    )
    start = time.perf_counter()
    summary = run_eval(config, rerankers=rerankers, progress=False)
    summary["_run"]["wall_s"] = time.perf_counter() - start
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def cmd_run(args: argparse.Namespace) -> None:
    """Every (or the chosen) variant, with the index-lookup embedder."""
    work, source_run = Path(args.work), Path(args.source_run)
    index = shared_index(work, source_run)
    embedder = lookup_embedder(index)
    names = args.variants.split(",") if args.variants else list(VARIANTS)
    if any(VARIANTS[n][2] for n in names):
        print("mog index:", build_mog(index, embedder), flush=True)
    for name in names:
        summary = run_variant(
            work,
            name,
            source_run,
            limit=args.limit,
            concurrency=args.concurrency,
            rerankers=fresh_rerankers(embedder),
        )
        row = summary["prefrag"]
        print(
            f"{name}: EM {row['em']:.1f} F1 {row['f1']:.1f} ER {row['evidence_recall']:.1f} "
            f"web {row['web_exposure']:.1f} ({summary['_run']['wall_s']:.0f}s; "
            f"embedded {embedder.embedded}, looked up {embedder.looked_up})",
            flush=True,
        )


def cmd_latency(args: argparse.Namespace) -> None:
    """Polyview node p50 with the real embedder: vector cache off, then on (cold, warm)."""
    from prefrag.index.embeddings import get_embedder

    work, source_run = Path(args.work), Path(args.source_run)
    embedder = get_embedder()
    results: dict[str, Any] = {}
    for label, size, runs in (("cache-off", 0, 1), ("cache-on", None, 2)):
        rerankers = fresh_rerankers(embedder, cache_size=size)
        for attempt in range(runs):
            name = f"latency-{label}-{attempt}"
            out = prepare_run(work, name, source_run)
            for stale in ("items.jsonl", "summary.json", "config.json"):
                (out / stale).unlink(missing_ok=True)
            VARIANTS[name] = VARIANTS["pv-inquiry"]
            summary = run_variant(
                work,
                name,
                source_run,
                limit=args.limit,
                concurrency=args.concurrency,
                rerankers=rerankers,
            )
            nodes = _node_seconds(out / "items.jsonl")
            results[name] = {
                "cache": rerankers["inquiry"].cache_info(),
                "wall_s": summary["_run"]["wall_s"],
                **{node: _stats(nodes.get(node, [])) for node in TOOL_NODES},
            }
            print(name, json.dumps(results[name]), flush=True)
    (work / "latency.json").write_text(json.dumps(results, indent=2))


def _node_seconds(path: Path) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {}
    for row in read_rows(path):
        for node, value in row.get("node_latency", []):
            seconds.setdefault(node, []).append(value)
    return seconds


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(values),
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p95_ms": round(1000 * p95, 1),
    }


def cmd_table(args: argparse.Namespace) -> None:
    """results.md / results.json from every variant's items."""
    work = Path(args.work)
    rows = []
    for name in VARIANTS:
        if name.startswith("latency") or not (work / name / "summary.json").exists():
            continue
        summary = json.loads((work / name / "summary.json").read_text())
        entry = summary["prefrag"]
        nodes = _node_seconds(work / name / "items.jsonl")
        counters = entry["counters_mean"]
        rows.append(
            {
                "variant": name,
                "n": entry["n"],
                "errors": entry["errors"],
                "em": round(entry["em"], 1),
                "f1": round(entry["f1"], 1),
                "acc": round(entry["acc"], 1),
                "evidence_recall": round(entry["evidence_recall"], 1),
                "web_exposure": round(entry["web_exposure"], 1),
                "local_used": round(counters["local_used"], 2),
                "web_total": round(counters["web_total"], 2),
                "used": round(counters["used"], 2),
                "total": round(counters.get("total", 0.0), 2),
                "latency_p50_ms": round(1000 * entry["latency_s"]["p50"], 1),
                **{
                    f"{node}_p50_ms": _stats(nodes.get(node, [])).get("p50_ms")
                    for node in ("mog_select", "polyview_rerank", "search_fallback")
                },
            }
        )
    (work / "results.json").write_text(json.dumps(rows, indent=2))
    keys = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    (work / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    """Command line: run, latency, table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "latency", "table"))
    parser.add_argument("--work", default=str(WORK))
    parser.add_argument("--source-run", default=str(SOURCE_RUN))
    parser.add_argument("--variants", default="", help="Comma-separated; default all.")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    {"run": cmd_run, "latency": cmd_latency, "table": cmd_table}[args.command](args)


if __name__ == "__main__":
    main()
