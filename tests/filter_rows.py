"""Filter-labels input rows from the demo questions (documented format of filter-labels).

Per question: the supporting document (the model answers right with it) and two unrelated
documents (it answers "unknown" with them); without evidence the model is right on every
third question. The rationale restates the supporting document's first sentence.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from switcher_pairs import demo_documents, demo_questions


def filter_rows(seed: int = 0, distractors: int = 2) -> list[dict[str, Any]]:
    docs = demo_documents()
    rng = random.Random(seed)
    rows = []
    for number, item in enumerate(demo_questions()):
        support = [docs[i] for i in item.get("supporting_ids", []) if i in docs]
        if not support:
            continue
        others = [d for i, d in docs.items() if i not in item["supporting_ids"]]
        first_sentence = support[0].page_content.split(". ")[0]
        snippets = [
            {
                "id": support[0].metadata["id"] if "id" in support[0].metadata else "support",
                "title": support[0].metadata["title"],
                "text": support[0].page_content[:400],
                "answer_with": item["answer"],
            }
        ]
        for other in rng.sample(others, distractors):
            snippets.append(
                {
                    "title": other.metadata["title"],
                    "text": other.page_content[:400],
                    "answer_with": "unknown",
                }
            )
        rows.append(
            {
                "question": item["question"],
                "answer": item["answer"],
                "rationale": f"{first_sentence}. So the answer is {item['answer']}.",
                "answer_without": item["answer"] if number % 3 == 0 else "unknown",
                "snippets": snippets,
            }
        )
    return rows


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
