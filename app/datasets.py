"""Question datasets: HotpotQA/IRCoT, FlashRAG JSONL, MIRAGE multiple choice, MedQuAD retrieval.

Every loader returns `EvalItem`s, so evaluation, training and metrics never see file formats;
`select_items` picks the items a run works on. Any file in
one of these shapes works, not only the shared copies; `load_dataset` picks the loader from
the content.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prefrag.errors import ConfigurationError, IngestError
from prefrag.jsonl import iter_jsonl

TaskKind = Literal["qa", "mc", "retrieval"]


@dataclass(frozen=True)
class Paragraph:
    """A context paragraph of a QA item (HotpotQA keeps ~10 per question, 2 gold)."""

    id: str
    title: str
    text: str
    supporting: bool = False


@dataclass(frozen=True)
class EvalItem:
    """One evaluation question, whatever file it came from.

    `answers` are the gold answers (open QA) or the gold option letter (multiple choice);
    `options` maps letters to option texts for multiple choice; `paragraphs` carries the
    item's context paragraphs when the dataset has them; `gold_doc_ids` are the ids of the
    relevant documents for retrieval tasks.
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    task: TaskKind = "qa"
    options: dict[str, str] = field(default_factory=dict)
    paragraphs: tuple[Paragraph, ...] = ()
    gold_doc_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def gold_titles(self) -> list[str]:
        """Titles of the supporting paragraphs, in file order."""
        return [p.title for p in self.paragraphs if p.supporting]


@dataclass
class Dataset:
    """Items of one evaluation set plus, for retrieval sets, the corpus to index."""

    name: str
    task: TaskKind
    items: list[EvalItem]
    corpus: list[dict[str, Any]] = field(default_factory=list)
    path: str = ""

    def __len__(self) -> int:
        return len(self.items)


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, row in iter_jsonl(path):
        if not isinstance(row, dict):
            raise IngestError(f"{path}:{number}: expected a JSON object per line.")
        yield number, row


def load_hotpotqa(path: str | Path) -> Dataset:
    """HotpotQA in the IRCoT processed format (`question_id`, `question_text`, ...)."""
    path = Path(path)
    items = []
    for number, row in _read_jsonl(path):
        try:
            answers = tuple(
                str(span) for obj in row.get("answers_objects", []) for span in obj["spans"]
            )
            paragraphs = tuple(
                Paragraph(
                    id=str(ctx.get("id", i)),
                    title=str(ctx.get("title", "")),
                    text=str(ctx["paragraph_text"]),
                    supporting=bool(ctx.get("is_supporting", False)),
                )
                for i, ctx in enumerate(row.get("contexts", []))
            )
            items.append(
                EvalItem(
                    id=str(row["question_id"]),
                    question=str(row["question_text"]),
                    answers=answers,
                    paragraphs=paragraphs,
                )
            )
        except (KeyError, TypeError) as error:
            raise IngestError(f"{path}:{number}: missing IRCoT field {error}.") from None
    return Dataset(name=path.stem, task="qa", items=items, path=str(path))


def load_flashrag(path: str | Path) -> Dataset:
    """FlashRAG JSONL: `{id, question, golden_answers, metadata}`."""
    path = Path(path)
    items = []
    for number, row in _read_jsonl(path):
        if "question" not in row or "golden_answers" not in row:
            raise IngestError(f"{path}:{number}: needs 'question' and 'golden_answers'.")
        golds = row["golden_answers"]
        golds = [golds] if isinstance(golds, str) else list(golds)
        items.append(
            EvalItem(
                id=str(row.get("id", number - 1)),
                question=str(row["question"]),
                answers=tuple(str(g) for g in golds),
                metadata=dict(row.get("metadata") or {}),
            )
        )
    return Dataset(name=path.stem, task="qa", items=items, path=str(path))


def load_mirage(path: str | Path, subset: str | None = None) -> Dataset:
    """MIRAGE multiple choice: `{"<dataset>": {"<qid>": {question, options, answer}}}`."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise IngestError(f"{path}: not valid JSON ({error.msg}).") from None
    items = []
    for name, questions in data.items():
        if subset and name != subset:
            continue
        for qid, row in questions.items():
            items.append(
                EvalItem(
                    id=f"{name}/{qid}",
                    question=str(row["question"]),
                    answers=(str(row["answer"]).strip().upper(),),
                    task="mc",
                    options={str(k): str(v) for k, v in row["options"].items()},
                    metadata={"dataset": name},
                )
            )
    return Dataset(name=subset or path.stem, task="mc", items=items, path=str(path))


def load_medquad(path: str | Path) -> Dataset:
    """MedQuAD retrieval: query = `question`, gold = the snippet `id`; corpus = the snippets.

    `path` is a MedQuAD JSONL file or a folder of them (read in name order).
    """
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    items, corpus = [], []
    for file in files:
        for number, row in _read_jsonl(file):
            if "id" not in row or "question" not in row:
                raise IngestError(f"{file}:{number}: needs 'id' and 'question'.")
            corpus.append(
                {
                    "id": row["id"],
                    "title": row.get("title", ""),
                    "text": row.get("content") or row.get("text", ""),
                    "url": row.get("url", ""),
                }
            )
            items.append(
                EvalItem(
                    id=str(row["id"]),
                    question=str(row["question"]),
                    task="retrieval",
                    gold_doc_ids=(str(row["id"]),),
                    metadata={"qtype": row.get("qtype", ""), "source": row.get("source", "")},
                )
            )
    return Dataset(name=path.stem, task="retrieval", items=items, corpus=corpus, path=str(path))


def load_dataset(path: str | Path) -> Dataset:
    """Load any supported dataset, choosing the loader from the file's content."""
    path = Path(path)
    if not path.exists():
        raise IngestError(f"Dataset '{path}' does not exist.")
    if path.is_dir():
        return load_medquad(path)
    if path.suffix == ".json":
        return load_mirage(path)
    first = next(_read_jsonl(path), None)
    if first is None:
        raise IngestError(f"{path}: empty dataset.")
    row = first[1]
    if "question_text" in row and "contexts" in row:
        return load_hotpotqa(path)
    if "golden_answers" in row:
        return load_flashrag(path)
    if "question" in row and ("content" in row or "text" in row):
        return load_medquad(path)
    raise IngestError(
        f"{path}: unrecognised shape; expected IRCoT (question_text, contexts), FlashRAG "
        "(question, golden_answers), MedQuAD (id, question, content) or MIRAGE JSON."
    )


def parse_item_range(value: str) -> tuple[int, int]:
    """`"201-350"` → `(201, 350)`: a 1-based, inclusive range of a dataset's items.

    Raises:
        ConfigurationError: The value is not `START-END` with 1 <= START <= END.
    """
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", value)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ConfigurationError(
            f"--items takes a 1-based inclusive range START-END such as 201-350, not {value!r}."
        )
    return int(match[1]), int(match[2])


def select_items(
    dataset: Dataset,
    *,
    item_range: str | None = None,
    limit: int | None = None,
    sample: bool = False,
    seed: int = 0,
) -> list[EvalItem]:
    """The items a run works on.

    The `item_range` (1-based, inclusive, e.g. "201-350") if given, then the first `limit` of
    those, or a seeded `sample` of `limit`.
    """
    items = list(dataset.items)
    if item_range:
        start, end = parse_item_range(item_range)
        items = items[start - 1 : end]
    if limit is None or limit >= len(items):
        return items
    if sample:
        return random.Random(seed).sample(items, limit)
    return items[:limit]
