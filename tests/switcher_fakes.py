"""Fakes for the switcher tests: a tiny two-hop dataset, keyword sources, a word embedder."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
from _eval_fakes import KeywordSource
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from prefrag.sources.base import SourceRegistry


def two_hop_rows(n=4):
    """Questions whose second gold paragraph is found by following the first one."""
    rows = []
    for q in range(n):
        rows.append(
            {
                "question_id": f"q{q}",
                "question_text": f"Which country holds the region of town{q}?",
                "answers_objects": [{"spans": [f"Country{q}"]}],
                "contexts": [
                    {
                        "id": "0",
                        "title": f"Town{q}",
                        "paragraph_text": f"Town{q} is a town in the region of Region{q}.",
                        "is_supporting": True,
                    },
                    {
                        "id": "1",
                        "title": f"Region{q}",
                        "paragraph_text": f"Region{q} is a region of the country Country{q}.",
                        "is_supporting": True,
                    },
                    {
                        "id": "2",
                        "title": f"Lake{q}",
                        "paragraph_text": f"Lake{q} is a lake near town{q} with fish.",
                        "is_supporting": False,
                    },
                ],
            }
        )
    return rows


def write_dataset(path, n=4):
    path.write_text("\n".join(json.dumps(r) for r in two_hop_rows(n)) + "\n")
    return path


def two_hop_sources(n=4, *, second_local=(0, 2)):
    """Local holds every first hop and distractor, plus the second hop of `second_local`."""
    local, web = [], []
    for row in two_hop_rows(n):
        q = int(row["question_id"][1:])
        for ctx in row["contexts"]:
            pair = (ctx["title"], ctx["paragraph_text"])
            web.append(pair)
            if ctx["id"] != "1" or q in second_local:
                local.append(pair)
    return SourceRegistry(
        [KeywordSource("local", "local", local), KeywordSource("web", "web", web)]
    )


class WordEmbedder:
    """Deterministic unit vectors from hashed words (no model)."""

    dim = 64

    def encode(self, texts):
        rows = []
        for text in texts:
            vector = np.zeros(self.dim)
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = np.linalg.norm(vector)
            rows.append(vector / norm if norm else vector)
        return np.array(rows, dtype=np.float32)


class RecordingChatModel(BaseChatModel):
    """Replies with fixed text and records every prompt it was sent."""

    reply: str = '{"analysis": "It adds the missing part.", "status": "True"}'
    temperature: float = 0.1
    top_p: float = 0.9
    prompts: list = []  # noqa: RUF012 - pass a fresh list per model

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.prompts.append([m.content for m in messages])
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply))])


def stub_reply(received):
    """Stub server replies: compare keeps below temperature 0.5; think searches twice."""
    from stub_server import completion

    def reply(request):
        received.append(request)
        response = completion(request)
        prompt = request["messages"][-1]["content"]
        if "New information:" in prompt:
            keep = request.get("temperature", 1.0) < 0.5
            content = json.dumps(
                {
                    "analysis": "Adds the missing region." if keep else "Nothing new here.",
                    "status": "True" if keep else "False",
                }
            )
        elif "Begin!" in prompt:
            question = re.search(r"Question: (.*)", prompt)[1]
            searches = prompt.count("Action Input:") - 1  # the format block has one
            action = "search" if searches < 2 else "answer"
            query = question if searches == 0 else f"region of town{question[-2]}"
            content = json.dumps(
                {
                    "thought": "look it up",
                    "action": action,
                    "query": query if action == "search" else "",
                    "source": "",
                    "answer": "Country" if action == "answer" else "",
                }
            )
        else:
            return response
        response["choices"][0]["message"]["content"] = content
        return response

    return reply
