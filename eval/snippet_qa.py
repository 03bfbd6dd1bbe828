"""`prefrag eval --task qa` on MedQuAD-shaped files: answer from the file's own snippets.

Each question's gold snippet is the local source's document to find, cite and answer from
(the web is off). The local index holds the evaluated questions' gold snippets plus a seeded
share of the file's other snippets as distractors (`--corpus items`, the default with
`--limit`), or every snippet (`--corpus all`). With `--withhold SHARE` a seeded share of the
evaluated questions loses its gold snippet from the index: those questions are unanswerable,
and the right outcome is to abstain.

Per question the record holds the answer, whether the gold snippet is cited, ROUGE-L and
token precision of the answer against the gold text, the answer's length in words, whether it
abstained, and whether it is made of whole sentences of a cited snippet.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefrag.datasets import Dataset, EvalItem
from prefrag.errors import ConfigurationError
from prefrag.eval import metrics

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.sources.base import SourceRegistry

LOCAL_SOURCE = "local"
GOLD_TEXT = "gold_text"
WITHHELD = "withheld"


def as_snippet_qa(dataset: Dataset) -> Dataset:
    """A MedQuAD-shaped retrieval dataset as QA items whose gold answer is their snippet.

    Raises:
        ConfigurationError: The dataset has no snippets to answer from (not MedQuAD-shaped).
    """
    texts = {str(row["id"]): str(row["text"]) for row in dataset.corpus}
    if dataset.task != "retrieval" or not texts:
        raise ConfigurationError(
            f"--task qa needs a MedQuAD-shaped file or folder (id, question, content); "
            f"'{dataset.path}' is a {dataset.task} dataset."
        )
    items = [
        dataclasses.replace(
            item,
            task="qa",
            answers=tuple(texts[g] for g in item.gold_doc_ids if g in texts),
            metadata={**item.metadata, GOLD_TEXT: texts.get(item.gold_doc_ids[0], "")},
        )
        for item in dataset.items
    ]
    return dataclasses.replace(dataset, task="qa", items=items)


def withheld_ids(items: Sequence[EvalItem], share: float, seed: int) -> set[str]:
    """The ids of a seeded `share` of `items` whose gold snippets stay out of the index.

    The same items, share and seed always give the same ids (rounded to whole questions).

    Raises:
        ConfigurationError: `share` is not in [0, 1).
    """
    check_share(share)
    count = round(share * len(items))
    ids = sorted(item.id for item in items)
    return set(random.Random(f"{seed}:withhold").sample(ids, count))


def check_share(share: float) -> float:
    """`share` if it is a usable withheld share (0 <= share < 1)."""
    if not 0.0 <= share < 1.0:
        raise ConfigurationError(
            f"--withhold takes the share of questions whose gold snippet is removed, in "
            f"[0, 1) (e.g. 0.1); got {share}."
        )
    return share


def snippet_rows(
    dataset: Dataset,
    items: Sequence[EvalItem],
    withheld: set[str],
    *,
    corpus: str,
    distractors: float,
    seed: int,
) -> list[dict[str, Any]]:
    """The snippets to index: gold snippets of answerable `items` plus distractors.

    With `corpus="all"` every snippet except the withheld gold ones; with `"items"` the
    evaluated questions' gold snippets and a seeded sample of `distractors` * len(items)
    snippets of other questions.

    Raises:
        ConfigurationError: `distractors` is negative.
    """
    if distractors < 0:
        raise ConfigurationError(f"--distractors must be 0 or more; got {distractors}.")
    hidden = {g for item in items if item.id in withheld for g in item.gold_doc_ids}
    if corpus == "all":
        return [row for row in dataset.corpus if str(row["id"]) not in hidden]
    golds = {g for item in items for g in item.gold_doc_ids}
    wanted = golds - hidden
    others = sorted(str(row["id"]) for row in dataset.corpus if str(row["id"]) not in golds)
    count = min(len(others), round(distractors * len(items)))
    wanted |= set(random.Random(f"{seed}:distractors").sample(others, count))
    return [row for row in dataset.corpus if str(row["id"]) in wanted]


def build_snippet_source(
    rows: Sequence[dict[str, Any]],
    work_dir: Path,
    *,
    settings: Settings,
    progress: bool = False,
) -> SourceRegistry:
    """The snippets as the one local source (hybrid search); no web source."""
    from prefrag.dataset_sources import ensure_index, isolated_settings
    from prefrag.sources.base import SourceRegistry

    isolated = isolated_settings(settings, Path(work_dir) / "home").model_copy(
        update={"web_enabled": False}
    )
    local = ensure_index(LOCAL_SOURCE, rows, Path(work_dir), isolated, "hybrid", progress=progress)
    return SourceRegistry([local])


def snippet_scores(
    output: Mapping[str, Any], item: EvalItem, texts: Mapping[str, str]
) -> dict[str, float]:
    """Scores of one answer against the item's gold snippet (`texts`: snippet id → text).

    A withheld question scores only `abstention_withheld` (1.0 when the answer abstained);
    an answerable one scores `cited_gold`, `full_sentence`, `rouge_l`, `token_precision` and
    `wrong_abstention`.
    """
    abstained = float(bool(output.get("abstained")))
    if item.metadata.get(WITHHELD):
        return {"abstention_withheld": abstained}
    answer = str(output.get("answer") or "")
    gold = str(item.metadata.get(GOLD_TEXT, ""))
    cited = cited_documents(output)
    cited_texts = [texts[c] for c in cited if c in texts]
    answered = not abstained
    return {
        "cited_gold": float(answered and bool(set(item.gold_doc_ids) & set(cited))),
        "full_sentence": metrics.full_sentence_support(answer, cited_texts) if answered else 0.0,
        "rouge_l": metrics.rouge_l(answer, gold) if answered else 0.0,
        "token_precision": metrics.token_precision(answer, gold) if answered else 0.0,
        "wrong_abstention": abstained,
    }


def cited_documents(output: Mapping[str, Any]) -> list[str]:
    """The input-document ids (snippet ids) the answer's citations point at, in order."""
    ids = [str(c.get("document") or c.get("id") or "") for c in output.get("citations") or []]
    return list(dict.fromkeys(i for i in ids if i))


def answer_words(answer: str) -> int:
    """The length of an answer in words."""
    return len((answer or "").split())
