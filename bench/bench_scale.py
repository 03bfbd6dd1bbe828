"""Search at 100k and 1M chunks: exact (memory-mapped numpy) vs HNSW (Qdrant Edge), one run.

Run (heavy: take the CPU lock):
  python bench/bench_scale.py --base HOME --size 100000 --work DIR [--add 12]
  python bench/bench_scale.py --base HOME --size 1000000 --work DIR --short-texts

`--base` is a PrefRAG home whose local sources hold real MedQuAD embeddings (e.g. the
full per-site sources `prefrag eval-sources --corpus-share 1.0 --out W` builds in W/home).
Their chunk vectors and records are the corpus' first rows. The rest are derived, so their
neighbourhoods look like real ones: row i copies a seeded random real chunk a and becomes
normalise(0.75 a + 0.25 b + noise), b another random real chunk, noise Gaussian with
standard deviation 0.5/sqrt(d) per dimension (so about half the norm of a unit vector),
its record is a's record with its own id. Queries are 200 seeded MedQuAD questions
embedded with the bundled MiniLM (the real query distribution).

The source is written as `prefrag index` writes one (records, vectors, lexical index and,
past `--hnsw-min` chunks, the HNSW shards), timing each part.
Then, each in its own process, a reader opens it (`LocalSource`, dense mode) exactly and
with HNSW, and times the dense lookup of every query (vectors encoded beforehand):
p50/p95, recall@10 of HNSW against exact, open time and resident memory. With `--add N`,
`index_paths` adds N new chunks through the CLI's code path and its wall time, CPU time
and peak RSS are reported.

`--dense-only` (for 1M) measures the dense index alone, what a source's dense lookup calls:
no records, lexical index or store of record are written. The vectors are cut into
`--parts` row ranges, each its own Qdrant Edge shard with its HNSW graph (`hnsw.build`,
`--m`, `--ef-construct`, `--int8` for Qdrant's scalar quantisation), built in its own
process and kept when done, so the build can be split across CPU-lock holds
(`--max-build-s`: start no part past this many seconds) and resumes where it stopped. A
query searches every part and merges the hits (Qdrant searches its segments the same
way); recall@10 is against the exact top 10 over all rows, computed once.

  python bench/bench_scale.py --base HOME --size 1000000 --work DIR --dense-only --parts 4
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np

K = 10
QUERIES = 200
SEED = 0


def _rss_mib() -> float:
    """Peak resident memory of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _hwm_mib() -> float:
    """Peak resident memory of this process image (VmHWM: not inherited across exec, as
    `ru_maxrss` is from the parent on Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rss_now_mib() -> float:
    """Resident memory of this process now (mapped file pages included)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _real(base: Path) -> tuple[np.ndarray, list[dict]]:
    from prefrag.config import Settings
    from prefrag.index import docstore
    from prefrag.index.catalog import list_sources

    settings = Settings(home=base)
    vectors, records = [], []
    for info in list_sources(settings):
        if not info.name.startswith("medquad-"):
            continue
        manifest = docstore.require_manifest(info.path, info.name)
        generation = info.path / manifest.generation
        vectors.append(docstore.load_vectors(generation))
        records.extend(docstore.load_records(generation))
    return np.vstack(vectors).astype(np.float32), records


def _derive(real: np.ndarray, records: list[dict], size: int, short: bool, path: Path):
    """`size` rows: the real ones first, then seeded mixes of two real rows plus noise."""
    rng = np.random.default_rng(SEED)
    n, dimension = real.shape
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(size, dimension))
    first = min(n, size)
    out[:first] = real[:first]
    rows = list(records[:first])
    step = 50_000
    for start in range(first, size, step):
        stop = min(size, start + step)
        a = rng.integers(0, n, stop - start)
        b = rng.integers(0, n, stop - start)
        mixed = 0.75 * real[a] + 0.25 * real[b]
        mixed += rng.normal(0, 0.5 / np.sqrt(dimension), mixed.shape).astype(np.float32)
        out[start:stop] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
        for i, source_row in zip(range(start, stop), a, strict=True):
            record = dict(records[source_row])
            record["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"derived-{i}"))
            record["parent_id"] = f"derived-{i}"
            rows.append(record)
    if short:
        for record in rows:
            record["text"] = record["text"][:200]
    out.flush()
    return out, rows


def _queries(data: Path) -> np.ndarray:
    from prefrag.config import Settings
    from prefrag.index.embeddings import get_embedder
    from prefrag.sources.medquad_demo import read_medquad

    rows = read_medquad(data)
    questions = [row["question"] for row in random.Random(SEED).sample(rows, QUERIES)]
    return get_embedder(Settings()).encode(questions)


def build(args: argparse.Namespace) -> dict:
    from prefrag.config import Settings
    from prefrag.index import docstore, hnsw
    from prefrag.index.ingest import source_chunking
    from prefrag.index.lexical import FORMAT, record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    real, records = _real(Path(args.base))
    vectors, rows = _derive(real, records, args.size, args.short_texts, work / "derived.npy")
    np.save(work / "queries.npy", _queries(Path(args.data)))
    settings = Settings(home=work / "home", hnsw_min_chunks=args.hnsw_min)
    folder = settings.sources_dir / "scale"
    result: dict = {"size": args.size, "real_rows": min(len(real), args.size)}
    started = time.perf_counter()
    lexical = SparseLexicalIndex.build(record_texts(rows))
    result["lexical_build_s"] = time.perf_counter() - started
    timings: dict[str, float] = {}

    def dense(generation: Path) -> None:
        began = time.perf_counter()
        hnsw.build(generation / hnsw.HNSW, vectors, int8=True)  # as `prefrag index` builds it
        timings["hnsw_build_s"] = time.perf_counter() - began

    started = time.perf_counter()
    generation = docstore.write_generation(folder, rows, vectors, lexical.save, dense)
    result["write_generation_s"] = time.perf_counter() - started
    result.update(timings)
    chunking = source_chunking(None, settings)
    docstore.write_manifest(
        folder,
        docstore.Manifest(
            name="scale",
            generation=generation,
            documents=len({r["parent_id"] for r in rows}),
            chunks=len(rows),
            dimension=int(vectors.shape[1]),
            embedding_model=settings.embedding_model,
            chunk_size=chunking.size,
            chunk_overlap=chunking.overlap,
            chunk_unit=chunking.unit,
            updated=docstore.now_iso(),
            lexical_format=FORMAT,
        ),
    )
    result["build_rss_mib"] = _rss_mib()
    return result


def _exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Rows of the exact top `k` of every query, over memory-mapped `vectors` in blocks."""
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    step = 100_000
    for start in range(0, len(vectors), step):
        scores = queries @ np.asarray(vectors[start : start + step]).T
        rows = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        best_rows = np.hstack([best_rows, rows + start])
        best_scores = np.hstack([best_scores, np.take_along_axis(scores, rows, axis=1)])
        keep = np.argsort(-best_scores, axis=1)[:, :k]
        best_rows = np.take_along_axis(best_rows, keep, axis=1)
        best_scores = np.take_along_axis(best_scores, keep, axis=1)
    return best_rows


def _parts(size: int, parts: int) -> list[tuple[int, int]]:
    bounds = np.linspace(0, size, parts + 1).astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def dense_prepare(args: argparse.Namespace) -> dict:
    """Derived vectors, query vectors and the exact top 10 of every query (once)."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    done = work / "prepared.json"
    if done.is_file() and json.loads(done.read_text())["size"] == args.size:
        return json.loads(done.read_text())
    started, cpu = time.perf_counter(), time.process_time()
    real, records = _real(Path(args.base))
    vectors, _ = _derive(real, records, args.size, True, work / "derived.npy")
    queries = _queries(Path(args.data))
    np.save(work / "queries.npy", queries)
    derive_s = time.perf_counter() - started
    began = time.perf_counter()
    np.save(work / "truth.npy", _exact_top(vectors, queries, K))
    result = {
        "size": args.size,
        "real_rows": int(min(len(real), args.size)),
        "derive_s": derive_s,
        "exact_truth_s": time.perf_counter() - began,
        "prepare_cpu_s": time.process_time() - cpu,
    }
    done.write_text(json.dumps(result))
    return result


def dense_part(args: argparse.Namespace) -> dict:
    """In a fresh process: build part `--part` as its own shard (staged, then renamed)."""
    import shutil

    from prefrag.index import hnsw

    work = Path(args.work)
    vectors = np.load(work / "derived.npy", mmap_mode="r")
    start, stop = _parts(len(vectors), args.parts)[args.part]
    final = work / "dense" / f"part-{args.part}"
    staging = final.with_name(final.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    started, cpu = time.perf_counter(), time.process_time()
    hnsw.build(
        staging, vectors[start:stop], m=args.m, ef_construct=args.ef_construct, int8=args.int8
    )
    result = {
        "part": args.part,
        "rows": stop - start,
        "build_s": time.perf_counter() - started,
        "build_cpu_s": time.process_time() - cpu,
        "build_rss_mib": _hwm_mib(),
        "disk_mib": sum(f.stat().st_size for f in staging.rglob("*") if f.is_file()) / 2**20,
    }
    (staging / "bench-part.json").write_text(json.dumps(result))
    staging.rename(final)
    return result


def dense_build(args: argparse.Namespace) -> dict:
    """Prepare, then build the parts not built yet while `--max-build-s` allows."""
    prepared = dense_prepare(args)
    print(json.dumps({"prepared": prepared}), flush=True)
    began = time.perf_counter()
    built = []
    for number in range(args.parts):
        final = Path(args.work) / "dense" / f"part-{number}"
        if (final / "bench-part.json").is_file():
            built.append(json.loads((final / "bench-part.json").read_text()))
            continue
        # Start no part that the last one's duration says would end past the budget.
        last = built[-1]["build_s"] if built else 0.0
        if time.perf_counter() - began + last > args.max_build_s:
            print(json.dumps({"stopped_before_part": number}), flush=True)
            break
        built.append(_child(args, "dense-part", "--part", str(number)))
        print(json.dumps(built[-1]), flush=True)
    return {"prepared": prepared, "parts": built}


def dense_search(args: argparse.Namespace) -> dict:
    """In a fresh process: open every part, time each query over all of them, and exact."""
    from prefrag.index import hnsw

    work = Path(args.work)
    queries = np.load(work / "queries.npy")
    truth = np.load(work / "truth.npy")
    size = int(json.loads((work / "prepared.json").read_text())["size"])
    rss_before = _rss_now_mib()
    started = time.perf_counter()
    parts = [
        (start, hnsw.HnswIndex(work / "dense" / f"part-{number}", args.ef))
        for number, (start, _) in enumerate(_parts(size, args.parts))
    ]
    opened = time.perf_counter() - started
    rss_open = _rss_now_mib()

    def lookup(query: np.ndarray) -> list[int]:
        hits = [
            (score, start + row) for start, index in parts for row, score in index.search(query, K)
        ]
        return [row for _, row in sorted(hits, reverse=True)[:K]]

    lookup(queries[0])  # warm-up
    seconds, cpu, recall = [], [], []
    for query, exact in zip(queries, truth, strict=True):
        began, began_cpu = time.perf_counter(), time.process_time()
        found = lookup(query)
        seconds.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
        recall.append(len(set(found) & set(exact.tolist())) / K)
    result = {
        "ef": args.ef,
        "open_s": opened,
        "p50_ms": 1000 * float(np.percentile(seconds, 50)),
        "p95_ms": 1000 * float(np.percentile(seconds, 95)),
        "cpu_ms_per_query": 1000 * float(np.mean(cpu)),
        "recall_at_10_vs_exact": float(np.mean(recall)),
        "rss_open_delta_mib": rss_open - rss_before,
        "rss_search_delta_mib": _rss_now_mib() - rss_before,
        "rss_peak_mib": _hwm_mib(),
        "rss_mib": _rss_now_mib(),
    }
    if args.exact_queries:  # the exact scan over the memory-mapped vectors, same process
        from prefrag.index.dense import NumpyDenseIndex

        vectors = np.load(work / "derived.npy", mmap_mode="r")
        index = NumpyDenseIndex(vectors)
        index.search(queries[0], K)
        exact_s, exact_cpu = [], []
        for query in queries[: args.exact_queries]:
            began, began_cpu = time.perf_counter(), time.process_time()
            index.search(query, K)
            exact_s.append(time.perf_counter() - began)
            exact_cpu.append(time.process_time() - began_cpu)
        result["exact_p50_ms"] = 1000 * float(np.percentile(exact_s, 50))
        result["exact_p95_ms"] = 1000 * float(np.percentile(exact_s, 95))
        result["exact_cpu_ms_per_query"] = 1000 * float(np.mean(exact_cpu))
        result["rss_after_exact_mib"] = _rss_now_mib() - rss_before
    return result


def search(args: argparse.Namespace) -> dict:
    """In a fresh process: open the source one way and time every query's dense lookup."""
    from prefrag.config import Settings
    from prefrag.sources.local import LocalSource

    work = Path(args.work)
    queries = np.load(work / "queries.npy")
    minimum = args.hnsw_min if args.mode == "hnsw" else 10**12
    settings = Settings(home=work / "home", hnsw_min_chunks=minimum, hnsw_ef=args.ef)
    from prefrag.index import hnsw  # noqa: F401  (imports outside the open time)

    started = time.perf_counter()
    import bm25s  # noqa: F401  (a once-per-process import, timed on its own)

    imported = time.perf_counter() - started
    started = time.perf_counter()
    LocalSource("scale", settings=settings, mode="hybrid")  # records, lexical and dense
    opened_hybrid = time.perf_counter() - started
    rss_before = _rss_now_mib()
    started = time.perf_counter()
    source = LocalSource("scale", settings=settings, mode="dense")
    opened = time.perf_counter() - started
    rss_open = _rss_now_mib()
    assert source.dense_search == args.mode, source.dense_search
    index = source._hnsw if args.mode == "hnsw" else source._numpy
    assert index is not None
    # The source's own dense lookup (HNSW plus an exact scan of a delta part, if any);
    # versions without it search the index directly.
    lookup = getattr(source, "dense_hits", None) or index.search
    lookup(queries[0], K)  # warm-up
    seconds, cpu, hits = [], [], []
    for query in queries:
        began, began_cpu = time.perf_counter(), time.process_time()
        found = lookup(query, K)
        seconds.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
        hits.append([row for row, _ in found])
    return {
        "mode": args.mode,
        "open_s": opened,
        "open_hybrid_s": opened_hybrid,
        "import_bm25s_s": imported,
        "p50_ms": 1000 * float(np.percentile(seconds, 50)),
        "p95_ms": 1000 * float(np.percentile(seconds, 95)),
        "cpu_ms_per_query": 1000 * float(np.mean(cpu)),
        "rss_mib": _rss_mib(),
        "rss_open_delta_mib": rss_open - rss_before,
        "rss_search_delta_mib": _rss_now_mib() - rss_before,
        "hits": hits,
    }


def add(args: argparse.Namespace) -> dict:
    """In a fresh process: add `--add` new chunks with `index_paths`."""
    from prefrag.config import Settings
    from prefrag.index.ingest import index_paths

    work = Path(args.work)
    notes = work / "added.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"id": f"added-{args.round}-{i}", "title": f"Added note {i}", "text": text})
            + "\n"
            for i, text in enumerate(
                f"Bench note {i} ({args.round}): a new paragraph about clinic opening hours "
                f"in week {i}."
                for i in range(args.add)
            )
        )
    )
    settings = Settings(home=work / "home", hnsw_min_chunks=args.hnsw_min)
    from prefrag.index.embeddings import get_embedder

    get_embedder(settings).encode(["warm up"])
    cpu, wall = time.process_time(), time.perf_counter()
    report = index_paths([notes], "scale", settings=settings)
    return {
        "added": report.added,
        "add_wall_s": time.perf_counter() - wall,
        "add_cpu_s": time.process_time() - cpu,
        "add_rss_mib": _rss_mib(),
        "delta_rows": _delta_rows(settings),
    }


def _delta_rows(settings) -> int:
    """Rows of the source's delta part after the add (0: it was written whole)."""
    from prefrag.index import docstore

    folder = settings.sources_dir / "scale"
    manifest = docstore.require_manifest(folder, "scale")
    delta = folder / manifest.generation / "delta" / "chunks.jsonl"
    return sum(1 for _ in delta.open("rb")) if delta.is_file() else 0


def _adds(args: argparse.Namespace) -> list[dict]:
    """`--adds` successive adds of `--add` chunks, each in a fresh process."""
    results = []
    for number in range(args.adds):
        results.append(_child(args, "add", "--round", str(number)))
        print(json.dumps({"add": number + 1, **results[-1]}), flush=True)
    return results


def _child(args: argparse.Namespace, step: str, *extra: str) -> dict:
    command = [sys.executable, __file__, "--step", step, "--work", args.work]
    command += ["--hnsw-min", str(args.hnsw_min), "--ef", str(args.ef), "--add", str(args.add)]
    command += ["--parts", str(args.parts), "--m", str(args.m)]
    command += [
        "--ef-construct",
        str(args.ef_construct),
        "--exact-queries",
        str(args.exact_queries),
    ]
    command += ["--int8"] if args.int8 else []
    done = subprocess.run([*command, *extra], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default=None, help="home with real MedQuAD sources")
    parser.add_argument(
        "--data", default=str(Path(__file__).parents[1].parent / "shared/data/medquad")
    )
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--work", required=True)
    parser.add_argument("--hnsw-min", type=int, default=1)
    parser.add_argument("--ef", type=int, default=128)
    parser.add_argument("--add", type=int, default=12)
    parser.add_argument("--short-texts", action="store_true", help="cut record texts to 200 chars")
    parser.add_argument(
        "--step",
        default="all",
        choices=["all", "build", "search", "add", "dense-part", "dense-search"],
    )
    parser.add_argument("--dense-only", action="store_true", help="the dense index alone, in parts")
    parser.add_argument("--parts", type=int, default=1, help="shards of --dense-only")
    parser.add_argument("--part", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--m", type=int, default=16, help="HNSW edges per node")
    parser.add_argument("--ef-construct", type=int, default=100, help="HNSW build beam")
    parser.add_argument("--int8", action="store_true", help="Qdrant's scalar quantisation")
    parser.add_argument("--max-build-s", type=float, default=1e9, help="build budget per run")
    parser.add_argument("--search-efs", default="128", help="comma-separated ef values")
    parser.add_argument("--exact-queries", type=int, default=0, help="also time exact on N")
    parser.add_argument("--mode", default="exact", choices=["exact", "hnsw"])
    parser.add_argument("--skip-build", action="store_true", help="reuse the source in --work")
    parser.add_argument("--adds", type=int, default=1, help="successive adds of --add chunks")
    parser.add_argument(
        "--adds-first", action="store_true", help="add before searching (e.g. to migrate)"
    )
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    steps = {"search": search, "add": add, "dense-part": dense_part, "dense-search": dense_search}
    if args.step in steps:  # one step in a fresh process (`_child`): its result as JSON
        print(json.dumps(steps[args.step](args)))
        return
    if args.dense_only:
        results = dense_build(args)
        if len(results["parts"]) == args.parts:
            results["search"] = []
            for ef in args.search_efs.split(","):
                args.ef = int(ef)
                results["search"].append(_child(args, "dense-search"))
                print(json.dumps(results["search"][-1]), flush=True)
                args.exact_queries = 0  # once is enough
        (Path(args.work) / "dense-results.json").write_text(json.dumps(results, indent=2))
        return
    results: dict = {}
    if not args.skip_build:
        results["build"] = build(args)
        print(json.dumps(results["build"]), flush=True)
    if args.add and args.adds_first:
        results["adds_first"] = _adds(args)
    exact = _child(args, "search", "--mode", "exact")
    approximate = _child(args, "search", "--mode", "hnsw")
    recall = np.mean(
        [
            len(set(a) & set(e)) / max(1, len(e))
            for a, e in zip(approximate.pop("hits"), exact.pop("hits"), strict=True)
        ]
    )
    results["exact"], results["hnsw"] = exact, approximate
    results["hnsw"]["recall_at_10_vs_exact"] = float(recall)
    for mode in ("exact", "hnsw"):
        r = results[mode]
        print(
            f"{mode:6s} open {r['open_s']:.3f} s (hybrid {r['open_hybrid_s']:.3f} s)"
            f"  p50 {r['p50_ms']:.2f} ms"
            f"  p95 {r['p95_ms']:.2f} ms  CPU {r['cpu_ms_per_query']:.2f} ms/query"
            f"  RSS +{r['rss_open_delta_mib']:.0f} MiB at open, +{r['rss_search_delta_mib']:.0f}"
            " after the queries" + (f"  recall@10 {recall:.3f}" if mode == "hnsw" else ""),
            flush=True,
        )
    if args.add and not args.adds_first:
        results["adds"] = _adds(args)
    (Path(args.work) / "results.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
