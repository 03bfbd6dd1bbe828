"""Sources built from a dataset's own paragraphs (evaluation and training data collection).

`dataset_sources` picks them: the two-source split, one local index of every paragraph, or
the user's sources when the dataset has no paragraphs.

The two-source experiment: HotpotQA paragraphs split into a "local" and a "web" index.

An offline stand-in for local corpus + web search. For each question, seeded by the question
id (so a `--limit` or a reordering never changes another question's split):

- the first gold paragraph is always local;
- the second gold paragraph is local for a `local_share` of questions, otherwise web only;
- distractors go local or web-only at random (50/50);
- the web index holds every paragraph.

Paragraphs are shared between questions, so a paragraph is local when any question puts it
there, except a second-hop paragraph a question made web-only: it is kept out of the local
index unless another question needs it as its first hop (counted in `conflicts`).

The web index is served through the real `WebSource` with a search client backed by a local
lexical index, so the switching behaviour the graph shows is the web source's own.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from prefrag.datasets import EvalItem, Paragraph
from prefrag.documents import content_id
from prefrag.jsonl import write_jsonl

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.sources.base import Source, SourceRegistry
    from prefrag.sources.local import SearchMode

LOCAL_SOURCE = "local"
WEB_CORPUS_SOURCE = "web-corpus"


@dataclass
class TwoSourceSplit:
    """The rows of both indexes and, per question, what went where."""

    local_rows: list[dict[str, Any]]
    web_rows: list[dict[str, Any]]
    second_gold_local: dict[str, bool] = field(default_factory=dict)
    conflicts: int = 0
    local_share: float = 0.5
    seed: int = 0

    def summary(self) -> dict[str, Any]:
        """Counts worth saving next to the results."""
        flags = list(self.second_gold_local.values())
        return {
            "local_share": self.local_share,
            "seed": self.seed,
            "questions": len(flags),
            "second_gold_local": sum(flags),
            "local_paragraphs": len(self.local_rows),
            "web_paragraphs": len(self.web_rows),
            "conflicts": self.conflicts,
        }


def paragraph_key(paragraph: Paragraph) -> str:
    """Stable id of a paragraph across questions (same title and text, same id)."""
    return content_id(paragraph.title, paragraph.text)


def paragraph_url(title: str) -> str:
    """The Wikipedia address a HotpotQA paragraph came from."""
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"))


def _row(paragraph: Paragraph) -> dict[str, Any]:
    return {
        "id": paragraph_key(paragraph),
        "title": paragraph.title,
        "text": paragraph.text,
        "url": paragraph_url(paragraph.title),
    }


def split_paragraphs(
    items: Sequence[EvalItem], *, local_share: float = 0.5, seed: int = 0
) -> TwoSourceSplit:
    """Split every item's paragraphs into local and web-only, deterministically."""
    if not 0.0 <= local_share <= 1.0:
        raise ValueError("local_share must lie in [0, 1].")
    every: dict[str, Paragraph] = {}
    wanted_local: set[str] = set()
    first_hops: set[str] = set()
    web_only_second_hops: set[str] = set()
    second_local: dict[str, bool] = {}
    for item in items:
        rng = random.Random(f"{seed}:{item.id}")
        golds = [p for p in item.paragraphs if p.supporting]
        keep_second = rng.random() < local_share
        second_local[item.id] = keep_second
        for index, paragraph in enumerate(item.paragraphs):
            key = paragraph_key(paragraph)
            every.setdefault(key, paragraph)
            if golds and paragraph is golds[0]:
                wanted_local.add(key)
                first_hops.add(key)
            elif paragraph.supporting:
                if keep_second:
                    wanted_local.add(key)
                else:
                    web_only_second_hops.add(key)
            elif random.Random(f"{seed}:{item.id}:{index}").random() < 0.5:
                wanted_local.add(key)
    excluded = web_only_second_hops - first_hops
    conflicts = len(web_only_second_hops & first_hops)
    local_keys = wanted_local - excluded
    return TwoSourceSplit(
        local_rows=[_row(p) for k, p in every.items() if k in local_keys],
        web_rows=[_row(p) for p in every.values()],
        second_gold_local=second_local,
        conflicts=conflicts,
        local_share=local_share,
        seed=seed,
    )


def corpus_rows(items: Sequence[EvalItem]) -> list[dict[str, Any]]:
    """Every distinct paragraph of `items` as an index row (the single-source corpus)."""
    rows: dict[str, dict[str, Any]] = {}
    for item in items:
        for paragraph in item.paragraphs:
            rows.setdefault(paragraph_key(paragraph), _row(paragraph))
    return list(rows.values())


class IndexSearchClient:
    """A ddgs-style search client answering from a `Source` (the offline "web").

    `text(query, max_results=k)` returns `[{"title", "href", "body"}]` like `ddgs.DDGS.text`.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.calls = 0

    def text(self, query: str, max_results: int | None = 10, **_: Any) -> list[dict[str, str]]:
        """Search results for `query`, best first."""
        self.calls += 1
        documents = self.source.search(query, max_results or 10)
        return [
            {
                "title": str(d.metadata.get("title", "")),
                "href": str(d.metadata.get("url") or paragraph_url(d.metadata.get("title", ""))),
                "body": d.page_content,
            }
            for d in documents
        ]


def ensure_index(
    name: str,
    rows: Sequence[dict[str, Any]],
    work: Path,
    settings: Settings,
    mode: SearchMode,
    *,
    progress: bool = False,
) -> Source:
    """Source `name` over `rows`, indexed under `work` once (again when the rows change)."""
    from prefrag.index.ingest import index_paths
    from prefrag.index.lexical import FORMAT
    from prefrag.sources.local import LocalSource

    marker = work / f"{name}.indexed.json"
    # With the lexical format in it, an index of an older format is brought up to date.
    signature = {"rows": len(rows), "hash": content_id(*(r["id"] for r in rows)), "lexical": FORMAT}
    if not marker.exists() or json.loads(marker.read_text()) != signature:
        path = write_jsonl(rows, work / f"{name}.jsonl")
        index_paths([path], name, settings=settings, progress=progress)
        marker.write_text(json.dumps(signature))
    return LocalSource(name, settings=settings, mode=mode)


def isolated_settings(base: Settings, home: Path) -> Settings:
    """A copy of `base` whose data directory is `home` (eval indexes stay out of the user's)."""
    return base.model_copy(update={"home": home, "web_enabled": True})


def build_two_source(
    items: Sequence[EvalItem],
    work_dir: Path,
    *,
    local_share: float = 0.5,
    seed: int = 0,
    settings: Settings | None = None,
    local_mode: SearchMode = "hybrid",
    web_mode: SearchMode = "lexical",
    progress: bool = False,
) -> tuple[SourceRegistry, TwoSourceSplit]:
    """Index the split under `work_dir` (once) and return the `local` + `web` sources."""
    from prefrag.config import get_settings
    from prefrag.sources.base import SourceRegistry
    from prefrag.sources.web import WebSource

    split = split_paragraphs(items, local_share=local_share, seed=seed)
    work_dir = Path(work_dir)
    settings = isolated_settings(settings or get_settings(), work_dir / "home")
    local = ensure_index(
        LOCAL_SOURCE, split.local_rows, work_dir, settings, local_mode, progress=progress
    )
    web_corpus = ensure_index(
        WEB_CORPUS_SOURCE, split.web_rows, work_dir, settings, web_mode, progress=progress
    )
    web = WebSource(settings, client=IndexSearchClient(web_corpus))
    return SourceRegistry([local, web]), split


def build_single_source(
    items: Sequence[EvalItem],
    work_dir: Path,
    *,
    settings: Settings | None = None,
    local_mode: SearchMode = "hybrid",
    web: Source | None = None,
    progress: bool = False,
) -> SourceRegistry:
    """Every paragraph in one local index, plus the real web source (or `web`)."""
    from prefrag.config import get_settings
    from prefrag.sources.base import SourceRegistry
    from prefrag.sources.web import WebSource

    base = settings or get_settings()
    settings = isolated_settings(base, Path(work_dir) / "home")
    local = ensure_index(
        LOCAL_SOURCE, corpus_rows(items), Path(work_dir), settings, local_mode, progress=progress
    )
    # The real web source keeps the user's settings (cache, offline switch).
    return SourceRegistry([local, web or WebSource(base)])


def dataset_sources(
    items: Sequence[EvalItem],
    work_dir: Path,
    *,
    two_source: float | None = None,
    seed: int = 0,
    settings: Settings | None = None,
    progress: bool = False,
) -> tuple[SourceRegistry, dict[str, Any]]:
    """The sources a run over `items` answers from, and facts about them for its summary.

    With `two_source` (the share of questions whose second gold paragraph stays local), the
    items' paragraphs are split into `local` + `web` (`build_two_source`); else items with
    paragraphs are indexed into one local source beside the real web
    (`build_single_source`); else the user's own sources answer.
    """
    if two_source is not None:
        sources, split = build_two_source(
            items, work_dir, local_share=two_source, seed=seed, settings=settings, progress=progress
        )
        return sources, {"two_source": split.summary()}
    if any(item.paragraphs for item in items):
        return build_single_source(items, work_dir, settings=settings, progress=progress), {}
    from prefrag.sources.defaults import default_sources

    return default_sources(), {}
