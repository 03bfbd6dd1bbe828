"""Retrieval with a delta part versus a full rebuild, same run: does an append keep quality?

Run:
  python bench/bench_lexical_delta.py --medquad-home HOME [--source medquad-gard]

Two corpora, each indexed twice into a temporary home:
- **whole**: every document in one write (one lexical index, as before appends existed);
- **appended**: the same documents, the last ~9% (seeded) added afterwards, so they sit in
  the generation's `delta/` part and are scored under one global IDF with the main index.

The demo corpus goes through `index_paths` both ways (embedded, 68 notes; a delta is
allowed from 20 rows for it) and is asked its 25 demo questions. The MedQuAD source in
`--medquad-home` (built by `prefrag index`, e.g. the per-site sources of `prefrag
eval-sources`) is written from its stored records and vectors (nothing embedded) as one
generation, or as a base generation plus `write_delta_generation` of the held-back rows,
the exact function an add uses, and asked the MedQuAD questions of its snippets (all of
the held-back snippets' questions, and as many of the others').

Reported per corpus and search mode (lexical, hybrid): recall@1 and recall@10 (the
question's snippet among the first 1 / 10 chunks' parents) for whole vs appended, over
all questions and over those whose snippet was appended, and how many top-10 lists are
identical.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

SEED = 0
K = 10
SHARE = 0.09
MODES = ("lexical", "hybrid")


def _search(settings: Any, name: str, questions: list[dict[str, Any]]) -> dict[str, list[list]]:
    from prefrag.sources.local import LocalSource

    results = {}
    for mode in MODES:
        source = LocalSource(name, settings=settings, mode=mode)  # type: ignore[arg-type]
        results[mode] = [
            [d.metadata["parent_id"] for d in source.search(q["question"], K)] for q in questions
        ]
    return results


def _compare(
    questions: list[dict[str, Any]], whole: dict, appended: dict, held: set[str]
) -> dict[str, Any]:
    report: dict[str, Any] = {"questions": len(questions)}
    late = [i for i, q in enumerate(questions) if set(q["gold"]) & held]
    report["questions_on_appended_documents"] = len(late)
    for mode in MODES:

        def recall(results: list[list], rows: list[int], k: int = K) -> float:
            found = [bool(set(results[i][:k]) & set(questions[i]["gold"])) for i in rows]
            return float(np.mean(found)) if found else float("nan")

        every = list(range(len(questions)))
        report[mode] = {
            "recall_at_1_whole": recall(whole[mode], every, 1),
            "recall_at_1_appended": recall(appended[mode], every, 1),
            "recall_at_10_whole": recall(whole[mode], every),
            "recall_at_10_appended": recall(appended[mode], every),
            "recall_at_10_whole_on_appended_docs": recall(whole[mode], late),
            "recall_at_10_appended_on_appended_docs": recall(appended[mode], late),
            "identical_top_10": sum(
                a == b for a, b in zip(whole[mode], appended[mode], strict=True)
            ),
        }
    return report


def demo(work: Path) -> dict[str, Any]:
    """The demo corpus indexed whole and with its last notes appended (via `index_paths`)."""
    from prefrag.config import Settings
    from prefrag.demo_corpus import demo_corpus_path, demo_questions
    from prefrag.index import ingest
    from prefrag.jsonl import read_rows, write_jsonl

    settings = Settings(home=work / "demo-home")
    notes = read_rows(demo_corpus_path())
    random.Random(SEED).shuffle(notes)
    held = max(1, round(SHARE * len(notes)))
    base_file = write_jsonl(notes[:-held], work / "demo-base.jsonl")
    late_file = write_jsonl(notes[-held:], work / "demo-late.jsonl")
    ingest.DELTA_MIN_ROWS = 20
    ingest.index_paths([base_file, late_file], "whole", settings=settings)
    ingest.index_paths([base_file], "appended", settings=settings)
    ingest.index_paths([late_file], "appended", settings=settings)
    folder = settings.sources_dir / "appended"
    from prefrag.index import docstore

    manifest = docstore.read_manifest(folder)
    assert manifest is not None and (folder / manifest.generation / "delta").is_dir()
    questions = [
        {"question": q["question"], "gold": q["supporting_ids"]}
        for q in demo_questions()
        if q.get("supporting_ids")
    ]
    return _compare(
        questions,
        _search(settings, "whole", questions),
        _search(settings, "appended", questions),
        {n["id"] for n in notes[-held:]},
    )


def medquad(home: Path, source: str, data: Path, work: Path, limit: int) -> dict[str, Any]:
    """A MedQuAD source written whole and as a base plus a delta, from its stored rows."""
    from prefrag.config import Settings
    from prefrag.index import docstore
    from prefrag.index.lexical import FORMAT, record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex, average_length, delta_lines
    from prefrag.sources.medquad_demo import read_medquad

    folder = Settings(home=home).sources_dir / source
    manifest = docstore.require_manifest(folder, source)
    generation = folder / manifest.generation
    records = docstore.load_records(generation)
    vectors = np.asarray(docstore.load_vectors(generation), dtype=np.float32)
    parents = sorted({r["parent_id"] for r in records})
    random.Random(SEED).shuffle(parents)
    held = set(parents[: round(SHARE * len(parents))])
    order = [i for i, r in enumerate(records) if r["parent_id"] not in held]
    late = [i for i, r in enumerate(records) if r["parent_id"] in held]
    settings = Settings(home=work / "medquad-home")
    for name, rows in (("whole", order + late), ("appended", order)):
        chosen = [records[i] for i in rows]
        lexical = SparseLexicalIndex.build(record_texts(chosen))
        target = settings.sources_dir / name
        written = docstore.write_generation(target, chosen, vectors[rows], lexical.save)
        docstore.write_manifest(
            target,
            docstore.Manifest(
                name=name,
                generation=written,
                documents=len({r["parent_id"] for r in chosen}),
                chunks=len(chosen),
                dimension=int(vectors.shape[1]),
                embedding_model=manifest.embedding_model,
                chunk_size=manifest.chunk_size,
                chunk_overlap=manifest.chunk_overlap,
                chunk_unit=manifest.chunk_unit,
                lexical_format=FORMAT,
            ),
        )
    target = settings.sources_dir / "appended"
    base = docstore.read_manifest(target)
    assert base is not None
    new = [records[i] for i in late]
    mean = average_length(target / base.generation / docstore.LEXICAL)
    assert mean is not None
    lines = delta_lines(record_texts(new), mean)
    written = docstore.write_delta_generation(
        target, target / base.generation, new, vectors[late], lines
    )
    base.generation, base.chunks = written, len(records)
    docstore.write_manifest(target, base)
    gold = {r["parent_id"] for r in records}
    rows = [r for r in read_medquad(data) if r["id"] in gold]
    rng = random.Random(SEED)
    on_late = [r for r in rows if r["id"] in held]
    others = [r for r in rows if r["id"] not in held]
    chosen_rows = rng.sample(on_late, min(limit, len(on_late))) + rng.sample(
        others, min(limit, len(others))
    )
    questions = [{"question": r["question"], "gold": [r["id"]]} for r in chosen_rows]
    report = _compare(
        questions,
        _search(settings, "whole", questions),
        _search(settings, "appended", questions),
        held,
    )
    report["chunks"] = len(records)
    report["appended_chunks"] = len(late)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--medquad-home", default=None, help="home with a MedQuAD site source")
    parser.add_argument("--source", default="medquad-gard")
    parser.add_argument(
        "--data", default=str(Path(__file__).parents[1].parent / "shared/data/medquad")
    )
    parser.add_argument("--questions", type=int, default=300, help="per group (appended/other)")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-lexical-delta-") as temporary:
        work = Path(temporary)
        results["demo"] = demo(work)
        print(json.dumps({"demo": results["demo"]}), flush=True)
        if args.medquad_home:
            results["medquad"] = medquad(
                Path(args.medquad_home), args.source, Path(args.data), work, args.questions
            )
            print(json.dumps({"medquad": results["medquad"]}), flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
