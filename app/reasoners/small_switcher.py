"""The small switcher: a trained keep/switch scorer over MiniLM and word-overlap features.

It reads what the `compare` prompt shows (the question, the held evidence, the new local
documents) and turns it into a few numbers: how close the new, not-yet-held documents are
to the question, how much of the question they cover that the held evidence does not,
whether the held evidence names them (the second hop of a bridge), how much they repeat
what is held. A one-hidden-layer network (numpy only, no torch) scores "keep"; trained on
switcher preference pairs by `prefrag train switcher-small`. With `PREFRAG_SWITCHER=PATH`
the extractive reasoner's `compare` asks it instead of its heuristic.

What a document contributes (its MiniLM vector, its content words, its lower-cased text)
is computed once per document and kept in a bounded cache keyed by the document's id and
text. A document's vector is the one its index stored when `prefrag index` embedded the
chunk (`use_stored_vectors`, wired by the graph to the run's sources, which looks it up by
source name and chunk id), so a `compare` call over indexed documents embeds nothing but
a new question. Only a document no index holds (hand-built, or parsed from a training
pair's prompt) is embedded here, by its text exactly as the index would embed it, so both
ways give the same vector. Embedding runs outside the cache's lock, so concurrent
questions do not queue behind one another.

The model file is a `.npz` of weights next to a JSON model card (`<name>.json`).
"""

from __future__ import annotations

import json
import math
import re
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.errors import ConfigurationError
from prefrag.reasoners.base import CompareVerdict

if TYPE_CHECKING:
    from prefrag.index.embeddings import Embedder

FEATURES: tuple[str, ...] = (
    "novel_share",
    "nothing_novel",
    "max_question_cosine",
    "mean_question_cosine",
    "max_question_coverage",
    "coverage_gain",
    "held_coverage",
    "named_by_held",
    "title_in_question",
    "novelty",
    "held_question_cosine",
    "held_count",
    "named_and_close",
)
# Documents (and questions) whose features are kept; the oldest go first.
CACHE_SIZE = 50_000
MODEL_FILE = "switcher.npz"
CARD_FILE = "model_card.json"
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on at to for by with from and or as is are was were be been being that "
    "this these those which who whom whose what when where why how did does do has have had "
    "it its his her their they he she not no yes than then also into about after before "
    "during while same both either one two first".split()
)


class Switcher(Protocol):
    """Anything that judges new local documents the way the `compare` role does."""

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """Whether `new` adds useful information beyond `held` (True keeps it)."""
        ...


def words(text: str) -> frozenset[str]:
    """Content words of `text`, lower-cased, without a small stop list."""
    return frozenset(w for w in _WORD_RE.findall(text.lower()) if w not in _STOP and len(w) > 1)


@dataclass(frozen=True)
class DocumentView:
    """What the features read of one document, computed once."""

    vector: np.ndarray
    words: frozenset[str]
    title: str
    text: str


@dataclass
class FeatureExtractor:
    """Turns (question, held, new) into the `FEATURES` vector.

    Args:
        embedder: MiniLM (`get_embedder()` when None, loaded on first use).
        cache_size: Documents and questions whose views are kept (least recent dropped).
        stored: Looks up the vectors an index stored for documents (None where it holds
            none, e.g. `prefrag.sources.stored_vectors.StoredVectors`); the rest are
            embedded.
    """

    embedder: Embedder | None = None
    cache_size: int = CACHE_SIZE
    stored: Callable[[Sequence[Document]], Sequence[np.ndarray | None]] | None = None
    _views: OrderedDict[tuple[str, str], DocumentView] = field(default_factory=OrderedDict)
    _questions: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def features(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> np.ndarray:
        """The feature vector (float64, in `FEATURES` order)."""
        held = unique_documents(held)
        held_ids = {doc_id(d) for d in held}
        held_titles = {_title(d).lower() for d in held if _title(d)}
        novel = [
            d
            for d in unique_documents(new)
            if doc_id(d) not in held_ids and _title(d).lower() not in held_titles
        ]
        views = self.views([*held, *novel])
        held_views, novel_views = views[: len(held)], views[len(held) :]
        asked = words(question)
        held_words = frozenset().union(*(v.words for v in held_views))
        held_text = " ".join(v.text for v in held_views)
        question_vector = self.question_vector(question)
        values = dict.fromkeys(FEATURES, 0.0)
        values["novel_share"] = len(novel) / len(new) if new else 0.0
        values["nothing_novel"] = 1.0 if not novel else 0.0
        values["held_coverage"] = len(asked & held_words) / len(asked) if asked else 0.0
        values["held_count"] = math.log1p(len(held))
        held_vectors = np.stack([v.vector for v in held_views]) if held_views else None
        if held_vectors is not None:
            values["held_question_cosine"] = float((held_vectors @ question_vector).max())
        if novel_views:
            vectors = np.stack([v.vector for v in novel_views])
            cosines = vectors @ question_vector
            values["max_question_cosine"] = float(cosines.max())
            values["mean_question_cosine"] = float(cosines.mean())
            novel_words = [v.words for v in novel_views]
            if asked:
                values["max_question_coverage"] = max(len(asked & w) for w in novel_words) / len(
                    asked
                )
                gained = asked & frozenset().union(*novel_words)
                values["coverage_gain"] = len(gained - held_words) / len(asked)
            named = [_named_in(v.title, held_text) for v in novel_views]
            values["named_by_held"] = 1.0 if any(named) else 0.0
            values["named_and_close"] = max(
                (float(c) if n else 0.0 for c, n in zip(cosines, named, strict=True)), default=0.0
            )
            values["title_in_question"] = max(
                (_title_share(v.title, asked) for v in novel_views), default=0.0
            )
            if held_vectors is not None:
                values["novelty"] = float(1.0 - (vectors @ held_vectors.T).max(axis=1).min())
            else:
                values["novelty"] = 1.0
        return np.array([values[name] for name in FEATURES], dtype=np.float64)

    def views(self, documents: Sequence[Document]) -> list[DocumentView]:
        """Each document's view: cached, else its stored vector, else embedded (one batch)."""
        keys = [(doc_id(d), d.page_content) for d in documents]
        with self._lock:
            found = {key: self._views[key] for key in keys if key in self._views}
            for key in found:
                self._views.move_to_end(key)
        missing = {key: d for key, d in zip(keys, documents, strict=True) if key not in found}
        if missing:
            docs = list(missing.values())
            vectors = list(self.stored(docs)) if self.stored is not None else [None] * len(docs)
            unstored = [i for i, vector in enumerate(vectors) if vector is None]
            if unstored:
                embedded = self._encoder().encode([docs[i].page_content for i in unstored])
                for i, vector in zip(unstored, embedded, strict=True):
                    vectors[i] = vector
            made = {
                key: DocumentView(
                    vector=np.asarray(vector),
                    words=words(_text(d)),
                    title=_title(d),
                    text=d.page_content.lower(),
                )
                for (key, d), vector in zip(missing.items(), vectors, strict=True)
            }
            with self._lock:
                self._views.update(made)
                while len(self._views) > self.cache_size:
                    self._views.popitem(last=False)
            found.update(made)
        return [found[key] for key in keys]

    def question_vector(self, question: str) -> np.ndarray:
        """The question's MiniLM vector (cached)."""
        with self._lock:
            cached = self._questions.get(question)
        if cached is not None:
            return cached
        vector = np.asarray(self._encoder().encode([question])[0])
        with self._lock:
            self._questions[question] = vector
            while len(self._questions) > self.cache_size:
                self._questions.popitem(last=False)
        return vector

    def _encoder(self) -> Embedder:
        with self._lock:
            if self.embedder is None:
                from prefrag.index.embeddings import get_embedder

                self.embedder = get_embedder()
            return self.embedder


def _title(document: Document) -> str:
    return str(document.metadata.get("title") or "").strip()


def _text(document: Document) -> str:
    title = _title(document)
    return f"{title}: {document.page_content}" if title else document.page_content


def _named_in(title: str, text: str) -> bool:
    """Whether the held text names the document's title (its words in order)."""
    name = " ".join(_WORD_RE.findall(re.sub(r"\s*\(.*?\)", "", title).lower()))
    return len(name) > 3 and f" {name} " in f" {' '.join(_WORD_RE.findall(text))} "


def _title_share(title: str, asked: frozenset[str]) -> float:
    terms = words(title)
    return len(terms & asked) / len(terms) if terms else 0.0


@dataclass
class SwitcherNetwork:
    """The scorer: standardise, one tanh hidden layer, a logit for "keep"."""

    mean: np.ndarray
    scale: np.ndarray
    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    out_weights: np.ndarray
    out_bias: float
    threshold: float = 0.5

    def logits(self, features: np.ndarray) -> np.ndarray:
        """Keep logits of a (n, features) matrix."""
        hidden = np.tanh(
            ((features - self.mean) / self.scale) @ self.hidden_weights + self.hidden_bias
        )
        return hidden @ self.out_weights + self.out_bias

    def keep_probability(self, features: np.ndarray) -> np.ndarray:
        """P(keep) of a (n, features) matrix."""
        return 1.0 / (1.0 + np.exp(-self.logits(features)))

    def save(self, path: Path) -> None:
        """Write the weights as `.npz`."""
        np.savez(
            path,
            features=np.array(FEATURES),
            mean=self.mean,
            scale=self.scale,
            hidden_weights=self.hidden_weights,
            hidden_bias=self.hidden_bias,
            out_weights=self.out_weights,
            out_bias=np.array(self.out_bias),
            threshold=np.array(self.threshold),
        )

    @classmethod
    def load(cls, path: Path) -> SwitcherNetwork:
        """Read weights written by `save`.

        Raises:
            ConfigurationError: The file is missing, unreadable or for other features.
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                names = tuple(str(n) for n in data["features"])
                network = cls(
                    mean=data["mean"],
                    scale=data["scale"],
                    hidden_weights=data["hidden_weights"],
                    hidden_bias=data["hidden_bias"],
                    out_weights=data["out_weights"],
                    out_bias=float(data["out_bias"]),
                    threshold=float(data["threshold"]),
                )
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as error:
            # A truncated or garbage file: zipfile's BadZipFile is none of the others.
            raise ConfigurationError(
                f"'{path}' is not a small switcher model ({type(error).__name__}); train one "
                "with `prefrag train switcher-small`."
            ) from None
        if names != FEATURES:
            raise ConfigurationError(
                f"'{path}' was trained on other features; retrain it with this version."
            )
        return network


class SmallSwitcher:
    """The trained switcher behind `compare`: P(keep) from features, against a threshold.

    Args:
        network: The trained scorer.
        extractor: Feature extraction (MiniLM loaded lazily when None).
        name: Shown in the verdict's analysis (the model file).
    """

    def __init__(
        self,
        network: SwitcherNetwork,
        extractor: FeatureExtractor | None = None,
        *,
        name: str = "small switcher",
    ) -> None:
        self.network = network
        self.extractor = extractor or FeatureExtractor()
        self.name = name

    def use_stored_vectors(
        self, lookup: Callable[[Sequence[Document]], Sequence[np.ndarray | None]]
    ) -> None:
        """Read documents' vectors from their index (`lookup`) instead of embedding them."""
        self.extractor.stored = lookup

    def keep_probability(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> float:
        """P(keep the new local documents)."""
        features = self.extractor.features(question, held, new)
        return float(self.network.keep_probability(features[None, :])[0])

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """True keeps the new local documents, False switches to the fallback sources."""
        if not new:
            return CompareVerdict(analysis="The local source returned nothing new.", status=False)
        probability = self.keep_probability(question, held, new)
        keep = probability >= self.network.threshold
        return CompareVerdict(
            analysis=f"The {self.name} gives the new local documents a {probability:.0%} chance "
            f"of adding what the question needs (threshold {self.network.threshold:.0%}): "
            + ("keep them." if keep else "switch source."),
            status=keep,
        )


def model_paths(path: Path) -> tuple[Path, Path]:
    """(weights, model card) of a switcher given as its folder or its `.npz` file."""
    path = Path(path).expanduser()
    if path.is_dir() or not path.suffix:
        return path / MODEL_FILE, path / CARD_FILE
    return path, path.with_name(CARD_FILE)


def load_switcher(path: Path, *, embedder: Embedder | None = None) -> SmallSwitcher:
    """The small switcher saved at `path` (its folder or `.npz` file).

    Raises:
        ConfigurationError: Nothing usable there; the message says how to make one.
    """
    weights, _ = model_paths(path)
    if not weights.is_file():
        raise ConfigurationError(
            f"No small switcher at '{path}'; train one with `prefrag train switcher-small "
            "--pairs pairs.jsonl --out DIR` (PREFRAG_SWITCHER / --switcher point at DIR)."
        )
    network = SwitcherNetwork.load(weights)
    return SmallSwitcher(network, FeatureExtractor(embedder), name=f"small switcher {path}")


def read_card(path: Path) -> dict[str, Any]:
    """The JSON model card saved next to a switcher (empty when there is none)."""
    _, card = model_paths(path)
    return json.loads(card.read_text()) if card.is_file() else {}
