"""Small switcher preference pairs in the `switcher-data` format, from real compare prompts.

The prompt of each pair is captured from `LLMReasoner.compare` itself (a recording chat
model), so it is byte for byte what the `compare` role sends at run time. Held and new
documents come from the demo corpus: a question's supporting document as new evidence
deserves "keep" (True); an unrelated document while the supporting one is held deserves
"switch" (False).
"""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from prefrag.documents import make_document
from prefrag.reasoners.llm import LLMReasoner

ROLES = {"human": "user", "ai": "assistant", "system": "system"}


class RecordingModel(BaseChatModel):
    """Answers every call with a fixed verdict and keeps the messages it was sent."""

    seen: list[list[BaseMessage]]

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.seen.append(list(messages))
        reply = AIMessage(content='{"analysis": "recorded", "status": "True"}')
        return ChatResult(generations=[ChatGeneration(message=reply)])


def verdict(analysis: str, status: bool) -> list[dict[str, str]]:
    text = json.dumps({"analysis": analysis, "status": status})
    return [{"role": "assistant", "content": text}]


def demo_documents() -> dict[str, Any]:
    rows = resources.files("prefrag.demo").joinpath("medicines.jsonl").read_text().splitlines()
    docs = {}
    for line in rows:
        row = json.loads(line)
        docs[row["id"]] = make_document(
            row["text"], id=row["id"], source="demo", title=row["title"]
        )
    return docs


def demo_questions() -> list[dict[str, Any]]:
    lines = resources.files("prefrag.demo").joinpath("questions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def switcher_pairs(
    keep_per_question: int = 3, seed: int = 0, doc_chars: int = 300
) -> list[dict[str, Any]]:
    """Keep and switch pairs per demo question with supporting documents (3:1 by default).

    `doc_chars` is the reasoner's `max_doc_chars` (`PREFRAG_PROMPT_DOC_CHARS`): short
    documents keep the tiny model's training fast on CPU.
    """
    docs = demo_documents()
    recorder = RecordingModel(seen=[])
    reasoner = LLMReasoner({"default": recorder}, structured=False, max_doc_chars=doc_chars)
    rng = random.Random(seed)
    pairs = []
    for number, item in enumerate(demo_questions()):
        support = [docs[i] for i in item.get("supporting_ids", []) if i in docs]
        if not support:
            continue
        others = [d for i, d in docs.items() if i not in item["supporting_ids"]]
        cases = [(True, rng.choice(others)) for _ in range(keep_per_question)]
        cases.append((False, rng.choice(others)))
        for step, (keep, other) in enumerate(cases, 1):
            held, new = ([other], support[:1]) if keep else (support[:1], [other])
            recorder.seen.clear()
            reasoner.compare(item["question"], held, new)
            prompt = [{"role": ROLES[m.type], "content": str(m.content)} for m in recorder.seen[0]]
            title = new[0].metadata["title"]
            helps = verdict(f"The new information on {title} helps answer the question.", True)
            useless = verdict(f"The new information on {title} does not help.", False)
            pairs.append(
                {
                    "prompt": prompt,
                    "chosen": helps if keep else useless,
                    "rejected": useless if keep else helps,
                    "meta": {
                        "question_id": f"demo-{number}",
                        "step": step,
                        "teacher": "gold",
                        "policy": "test",
                        "sampling": None,
                        "label": "keep" if keep else "switch",
                    },
                }
            )
    return pairs


def write_pairs(path: Path, pairs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    return path


def split_by_question(pairs: list[dict[str, Any]], held_out: int) -> tuple[list, list]:
    """Pairs of the last `held_out` questions are held out (no question in both halves)."""
    ids = list(dict.fromkeys(p["meta"]["question_id"] for p in pairs))
    test_ids = set(ids[-held_out:])
    return (
        [p for p in pairs if p["meta"]["question_id"] not in test_ids],
        [p for p in pairs if p["meta"]["question_id"] in test_ids],
    )
