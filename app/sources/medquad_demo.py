"""The MedQuAD demo registry: one text source per NIH site plus a concept graph.

MedQuAD's answers come from seven NIH sites that cover different ground (rare-disease
symptom lists, genetics, cancer summaries, neurology, ...), which makes them realistic
separate sources. `build_medquad_demo` indexes each site's snippets into its own local
source and builds a concept graph from what the data holds about each focus term (its
names, UMLS concept ids and semantic types, a definition from an "information" answer,
the sites covering it). The build writes the registry describing them into the user's
data directory (`PREFRAG_HOME/medquad_sources.yaml`, from the shipped one); until one is
built, the shipped `prefrag/data/medquad_sources.yaml` is the default read.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefrag.errors import IngestError
from prefrag.jsonl import read_rows, write_jsonl

if TYPE_CHECKING:
    from prefrag.config import Settings

# MedQuAD `source` value -> the local source (index) holding that site's snippets.
SITE_STORES: dict[str, str] = {
    "CancerGov": "medquad-cancergov",
    "GARD": "medquad-gard",
    "GHR": "medquad-ghr",
    "MPlusHealthTopics": "medquad-medlineplus",
    "NIDDK": "medquad-niddk",
    "NINDS": "medquad-ninds",
    "NIHSeniorHealth": "medquad-nihseniorhealth",
}
GRAPH_STORE = "medquad-graph"
REGISTRY_FILE = "medquad_sources.yaml"
# Whose "what is" answer becomes a concept's definition when several sites have one:
# the reference sites first, the general overviews last.
DEFINITION_PRIORITY = (
    "GHR",
    "NINDS",
    "NIDDK",
    "CancerGov",
    "GARD",
    "NIHSeniorHealth",
    "MPlusHealthTopics",
)
DEFINITION_WORDS = 80
MAX_SYNONYM_GROUP = 5  # a UMLS id shared by more titles is a broad class, not a synonym
# UMLS semantic types that occur in MedQuAD (codes as in the data, names from UMLS).
SEMANTIC_TYPES: dict[str, str] = {
    "T005": "Virus",
    "T007": "Bacterium",
    "T019": "Congenital Abnormality",
    "T020": "Acquired Abnormality",
    "T028": "Gene or Genome",
    "T033": "Finding",
    "T037": "Injury or Poisoning",
    "T046": "Pathologic Function",
    "T047": "Disease or Syndrome",
    "T048": "Mental or Behavioral Dysfunction",
    "T049": "Cell or Molecular Dysfunction",
    "T184": "Sign or Symptom",
    "T190": "Anatomical Abnormality",
    "T191": "Neoplastic Process",
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class DemoReport:
    """What `build_medquad_demo` indexed: snippets per local source, and the graph size."""

    snippets: dict[str, int]
    concepts: int
    relations: int
    registry: Path


def bundled_registry_path() -> Path:
    """The MedQuAD demo registry shipped with the package (YAML; never written)."""
    return Path(__file__).resolve().parent.parent / "data" / REGISTRY_FILE


def registry_path(settings: Settings | None = None) -> Path:
    """The MedQuAD demo registry to read: the one the build wrote in the data directory.

    Before `build-medquad-demo` has run (no registry in `PREFRAG_HOME`), the shipped one.
    """
    from prefrag.config import get_settings

    built = (settings or get_settings()).home_dir / REGISTRY_FILE
    return built if built.is_file() else bundled_registry_path()


def write_registry(settings: Settings) -> Path:
    """Write the demo registry into the data directory (a user's edited copy is kept)."""
    path = settings.home_dir / REGISTRY_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(bundled_registry_path().read_bytes())
        temporary.replace(path)
    return path


def read_medquad(folder: Path) -> list[dict[str, Any]]:
    """Every MedQuAD snippet under `folder` (its `*.jsonl` files, in name order).

    Raises:
        IngestError: The folder holds no MedQuAD JSONL, or a line is not JSON.
    """
    files = sorted(Path(folder).glob("*.jsonl"))
    if not files:
        raise IngestError(f"No MedQuAD .jsonl files in {folder}.")
    rows: list[dict[str, Any]] = []
    for path in files:
        rows.extend(read_rows(path))
    return rows


def snippet_document(row: dict[str, Any]) -> dict[str, Any]:
    """A MedQuAD snippet as an indexable document (its id stays the gold id)."""
    return {"id": row["id"], "title": row["title"], "text": row["content"], "url": row["url"]}


def by_site(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Snippets grouped by the NIH site they come from (only the seven known sites)."""
    groups: dict[str, list[dict[str, Any]]] = {site: [] for site in SITE_STORES}
    for row in rows:
        if row.get("source") in groups:
            groups[row["source"]].append(row)
    return groups


def graph_triples(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Concept-graph triples of MedQuAD's focus terms (see the module docstring).

    Titles whose snippets all carry the same single UMLS id, shared by at most
    `MAX_SYNONYM_GROUP` titles, are synonyms of the first of them.
    """
    cuis: dict[str, set[str]] = defaultdict(set)
    first: dict[str, str] = {}
    for row in rows:
        first.setdefault(row["title"].casefold(), row["title"])
        cuis[row["title"].casefold()].update(row.get("umls_cuis") or [])
    sharing: dict[str, list[str]] = defaultdict(list)
    for key, ids in cuis.items():
        if len(ids) == 1:
            sharing[next(iter(ids))].append(first[key])
    triples: list[dict[str, Any]] = []
    for cui, titles in sharing.items():
        if 1 < len(titles) <= MAX_SYNONYM_GROUP:
            triples += [
                {"subject": titles[0], "relation": "synonym", "object": t, "source": "UMLS " + cui}
                for t in titles[1:]
            ]
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        title, site = row["title"], row["source"]
        facts = [("has_umls_concept_id", cui) for cui in row.get("umls_cuis") or []]
        facts += [
            ("has_semantic_type", f"{SEMANTIC_TYPES.get(code, code)} ({code})")
            for code in row.get("semantic_types") or []
        ]
        facts.append(("is_covered_by", site))
        for relation, obj in facts:
            if (title, relation, obj) not in seen:
                seen.add((title, relation, obj))
                triples.append({"subject": title, "relation": relation, "object": obj})
        if row.get("qtype") == "information" and site in DEFINITION_PRIORITY:
            triples.append(
                {
                    "subject": title,
                    "relation": "definition",
                    "object": short_definition(row["content"]),
                    "source": site,
                    "priority": DEFINITION_PRIORITY.index(site),
                    "url": row.get("url", ""),
                    "ref": row["id"],
                }
            )
    return triples


def short_definition(text: str, words: int = DEFINITION_WORDS) -> str:
    """The first sentences of `text`, up to about `words` words (a long first one is cut)."""
    kept: list[str] = []
    count = 0
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        size = len(sentence.split())
        if kept and count + size > words:
            break
        kept.append(sentence)
        count += size
    return " ".join(" ".join(kept).split()[: 2 * words])


def sample_site(
    rows: Sequence[dict[str, Any]], size: int | None, seed: int, keep: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """A seeded sample of `size` snippets of one site that includes every id in `keep`."""
    if size is None or size >= len(rows):
        return list(rows)
    wanted = set(keep)
    kept = [row for row in rows if row["id"] in wanted]
    rest = [row for row in rows if row["id"] not in wanted]
    extra = random.Random(seed).sample(rest, max(0, min(len(rest), size - len(kept))))
    chosen = {row["id"] for row in [*kept, *extra]}
    return [row for row in rows if row["id"] in chosen]


def build_medquad_demo(
    folder: Path,
    *,
    settings: Settings | None = None,
    per_site: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> DemoReport:
    """Index every site's snippets (or a seeded `per_site` sample) and the concept graph.

    Idempotent: a second run adds nothing. Also indexes the bundled demo corpus, which
    the registry lists too, and writes the registry into the data directory
    (`write_registry`; the package's own copy is never written).

    Raises:
        IngestError: `folder` holds no MedQuAD data.
    """
    from prefrag.config import get_settings
    from prefrag.demo_corpus import DEMO_SOURCE, demo_corpus_path
    from prefrag.index.graph_store import index_graph
    from prefrag.index.ingest import index_paths

    settings = settings or get_settings()
    rows = read_medquad(folder)
    work = settings.home_dir / "medquad-demo"
    counts: dict[str, int] = {}
    for site, site_rows in by_site(rows).items():
        chosen = sample_site(site_rows, per_site, seed)
        path = write_jsonl(
            (snippet_document(r) for r in chosen), work / f"{SITE_STORES[site]}.jsonl"
        )
        index_paths([path], SITE_STORES[site], settings=settings, progress=progress)
        counts[SITE_STORES[site]] = len(chosen)
    index_paths([demo_corpus_path()], DEMO_SOURCE, settings=settings, progress=progress)
    graph = index_graph(
        [write_jsonl(graph_triples(rows), work / f"{GRAPH_STORE}.jsonl")],
        GRAPH_STORE,
        settings=settings,
    )
    return DemoReport(counts, graph.concepts, graph.relations, write_registry(settings))
