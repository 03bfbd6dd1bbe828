"""The trained RAG² evidence filter: a two-label classifier folder as a `SnippetFilter`.

`prefrag train filter` saves a transformers sequence-classification model with two labels
("not_helpful", "helpful"), its tokenizer and `filter.json` (decision threshold, input
length). `TrainedSnippetFilter.load(folder)` reads it back; `judge` fills the
`filter_input` prompt with the question and the snippet, and the softmax over the two label
logits gives P(helpful): the snippet is helpful when P(helpful) >= the threshold (0.5 unless
the folder says otherwise). torch and transformers are imported on first use.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from prefrag.errors import ConfigurationError
from prefrag.tools.evidence_filter import SnippetFilter, SnippetJudgement

__all__ = [
    "FILTER_FILE",
    "HELPFUL_LABEL",
    "TrainedSnippetFilter",
    "filter_text",
    "load_snippet_filter",
]

FILTER_FILE = "filter.json"
HELPFUL_LABEL = "helpful"


def filter_text(question: str, snippet: str, title: str | None = None) -> str:
    """The classifier's input for one snippet (prompt `filter_input`), in training and use."""
    from prefrag.prompts import render_prompt

    text = f"{title}. {snippet}" if title else snippet
    return render_prompt("filter_input", question=question, snippet=text)


_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_TOKENIZER = ("tokenizer.json", "vocab.txt", "tokenizer.model", "vocab.json")


def missing_model_files(folder: Path) -> str:
    """Which saved-model files `folder` lacks ("" when config, weights and tokenizer are there)."""
    missing = []
    if not (folder / "config.json").is_file():
        missing.append("config.json")
    if not any((folder / name).is_file() for name in _WEIGHTS):
        missing.append("weights (model.safetensors)")
    if not any((folder / name).is_file() for name in _TOKENIZER):
        missing.append("tokenizer (tokenizer.json)")
    return " and ".join(missing)


class TrainedSnippetFilter:
    """A trained two-label classifier that judges one snippet at a time (RAG² filter)."""

    def __init__(self, folder: Path, *, threshold: float = 0.5, max_length: int = 512) -> None:
        self.folder = Path(folder)
        self.threshold = threshold
        self.max_length = max_length
        self._model: Any = None
        self._tokenizer: Any = None
        self._helpful_index = 1
        self._lock = threading.Lock()

    @classmethod
    def load(cls, folder: Path | str) -> TrainedSnippetFilter:
        """The filter saved in `folder` by `prefrag train filter`.

        Raises:
            ConfigurationError: The folder is missing or was not written by the filter job.
        """
        path = Path(folder).expanduser()
        settings_file = path / FILTER_FILE
        retrain = "retrain it with `prefrag train filter` or unset PREFRAG_EVIDENCE_FILTER"
        if not settings_file.is_file():
            raise ConfigurationError(
                f"{path} is not a trained evidence filter (no {FILTER_FILE}); train one with "
                "`prefrag train filter`."
            )
        try:
            settings = json.loads(settings_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigurationError(
                f"{settings_file} is not valid JSON ({type(error).__name__}); {retrain}."
            ) from None
        if not isinstance(settings, dict):
            raise ConfigurationError(f"{settings_file} is not a JSON object; {retrain}.")
        threshold = settings.get("threshold", 0.5)
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0.0 <= threshold <= 1.0
        ):
            raise ConfigurationError(
                f"{settings_file}: threshold must be a number in [0, 1], not {threshold!r}."
            )
        max_length = settings.get("max_length", 512)
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ConfigurationError(
                f"{settings_file}: max_length must be a positive whole number, not {max_length!r}."
            )
        missing = missing_model_files(path)
        if missing:
            raise ConfigurationError(f"{path} lacks the filter's {missing}; {retrain}.")
        return cls(path, threshold=float(threshold), max_length=max_length)

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        """P(helpful) of `document` for `question`; helpful when it reaches the threshold."""
        score = self.scores(question, [document])[0]
        verdict = "helpful" if score >= self.threshold else "not helpful"
        return SnippetJudgement(
            helpful=score >= self.threshold,
            score=score,
            reason=f"trained filter: P(helpful) = {score:.2f} ({verdict}, "
            f"threshold {self.threshold:.2f})",
        )

    def scores(self, question: str, documents: list[Document]) -> list[float]:
        """P(helpful) of each document for `question` (one batch)."""
        import torch

        model, tokenizer = self._load()
        texts = [
            filter_text(question, doc.page_content, doc.metadata.get("title")) for doc in documents
        ]
        encoded = tokenizer(
            texts, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt"
        )
        with torch.no_grad():
            logits = model(**encoded).logits.float()
        return torch.softmax(logits, dim=-1)[:, self._helpful_index].tolist()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
                model = AutoModelForSequenceClassification.from_pretrained(
                    self.folder, local_files_only=True
                )
                labels = {str(v): int(k) for k, v in model.config.id2label.items()}
                if HELPFUL_LABEL not in labels or model.config.num_labels != 2:
                    raise ConfigurationError(
                        f"{self.folder} is not a two-label helpful/not_helpful classifier."
                    )
                self._helpful_index = labels[HELPFUL_LABEL]
                self._tokenizer = tokenizer
                self._model = model.eval()
        return self._model, self._tokenizer


def load_snippet_filter(path: Path) -> SnippetFilter:
    """The trained snippet filter stored in folder `path` (`PREFRAG_EVIDENCE_FILTER`).

    Raises:
        ConfigurationError: The folder does not exist or holds no trained snippet filter.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ConfigurationError(
            f"PREFRAG_EVIDENCE_FILTER={str(path)!r}: no such folder; train a filter with "
            "`prefrag train filter` or unset the setting."
        )
    return TrainedSnippetFilter.load(folder)
