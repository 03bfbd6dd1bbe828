"""Train the Mix-of-Granularity router (MoG §3.2.2): soft labels, BCE, Adam.

For each training question, the best chunk of every granularity level is retrieved from a
MoG index; its embedding similarity to "question + answer" ranks the levels; the best
level gets the soft label 0.8, the second 0.2, the rest 0. An MLP on the question
embedding learns those labels with binary cross-entropy (Adam, lr 1e-3). The router is
saved as a small `.npz` that `prefrag.tools.mog.MoGSelector` loads.

Run (MedQuAD-style JSONL with `question` and `content`/`answer`; the source's MoG index must
cover the answers' documents):

    prefrag train mog-router --source medquad --data train.jsonl [--epochs 300]

or `--config router.yaml` with the same field names (`prefrag train mog-router --help`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from prefrag.errors import ConfigurationError, StoreMissingError
from prefrag.jsonl import iter_jsonl
from prefrag.tools.granularity_index import MultiGranularIndex
from prefrag.tools.mog import ROUTER_FILE, Router
from prefrag.training.config import parse_config


@dataclass
class RouterTrainConfig:
    """Settings of one router training run (`prefrag train mog-router --help` lists them)."""

    data: Path | None = field(
        default=None, metadata={"help": "JSONL with `question` and `answer`/`content`."}
    )
    source: str | None = field(
        default=None,
        metadata={"aliases": ["-s"], "help": "Source whose MoG index to train for."},
    )
    index: Path | None = field(
        default=None, metadata={"help": "MoG index folder (instead of --source)."}
    )
    output: Path | None = field(
        default=None, metadata={"help": "Router file; `router.npz` in the index by default."}
    )
    hidden: int = field(default=128, metadata={"help": "Hidden units of the MLP."})
    epochs: int = field(default=300, metadata={"help": "Training epochs."})
    lr: float = field(default=1e-3, metadata={"help": "Adam learning rate."})
    batch_size: int = field(default=64, metadata={"help": "Examples per batch."})
    best_label: float = field(default=0.8, metadata={"help": "Soft label of the best level."})
    second_label: float = field(default=0.2, metadata={"help": "Soft label of the second."})
    seed: int = field(default=0, metadata={"help": "Random seed."})
    max_examples: int | None = field(
        default=None, metadata={"aliases": ["--limit"], "help": "Use at most this many."}
    )


@dataclass
class RouterTrainResult:
    """A trained router and how training went."""

    router: Router
    losses: list[float]
    label_agreement: float
    label_histogram: list[int]


def soft_labels(similarities: np.ndarray, best: float = 0.8, second: float = 0.2) -> np.ndarray:
    """Soft labels from per-level similarities: `best` for the top level, `second` next.

    Ties go to the finer level (the first index), so identical chunks at several levels
    (a short document) favour the smallest chunk that holds the answer.
    """
    similarities = np.atleast_2d(similarities)
    labels = np.zeros_like(similarities, dtype=np.float32)
    order = np.argsort(-similarities, axis=1, kind="stable")
    rows = np.arange(len(similarities))
    labels[rows, order[:, 0]] = best
    if similarities.shape[1] > 1:
        labels[rows, order[:, 1]] = second
    return labels


def level_similarities(
    index: MultiGranularIndex, query_vectors: np.ndarray, label_vectors: np.ndarray
) -> np.ndarray:
    """Similarity of each level's best chunk for a query to that query's label text.

    Args:
        index: The MoG index of the training corpus.
        query_vectors: (n, dim) question embeddings (retrieve the best chunk per level).
        label_vectors: (n, dim) embeddings of "question + answer".

    Returns:
        An (n, n_levels) matrix of cosine similarities.
    """
    out = np.zeros((len(query_vectors), index.n_levels), dtype=np.float32)
    for level in range(index.n_levels):
        vectors = _level_vectors(index, level)
        best = np.argmax(query_vectors @ vectors.T, axis=1)
        out[:, level] = np.sum(vectors[best] * label_vectors, axis=1)
    return out


def train_router(
    query_vectors: np.ndarray, labels: np.ndarray, config: RouterTrainConfig
) -> RouterTrainResult:
    """Fit the MLP router to soft labels with BCE and Adam; returns numpy weights."""
    import torch

    torch.manual_seed(config.seed)
    x = torch.as_tensor(np.asarray(query_vectors, dtype=np.float32))
    y = torch.as_tensor(np.asarray(labels, dtype=np.float32))
    model = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], config.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(config.hidden, y.shape[1]),
    )
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    # Eq. 3 sums BCE over levels; the mean differs by a constant factor only.
    loss_fn = torch.nn.BCEWithLogitsLoss()
    generator = torch.Generator().manual_seed(config.seed)
    losses: list[float] = []
    with torch.enable_grad():
        for _ in range(config.epochs):
            order = torch.randperm(len(x), generator=generator)
            total = 0.0
            for start in range(0, len(x), config.batch_size):
                batch = order[start : start + config.batch_size]
                optimiser.zero_grad()
                loss = loss_fn(model(x[batch]), y[batch])
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * len(batch)
            losses.append(total / max(len(x), 1))
    layers = [
        (layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy())
        for layer in model
        if isinstance(layer, torch.nn.Linear)
    ]
    router = Router(layers)
    predicted = np.argmax([router.weights(v) for v in np.asarray(query_vectors)], axis=1)
    target = np.argmax(labels, axis=1)
    return RouterTrainResult(
        router=router,
        losses=losses,
        label_agreement=float(np.mean(predicted == target)) if len(target) else 0.0,
        label_histogram=np.bincount(target, minlength=labels.shape[1]).tolist(),
    )


def fit_router(
    index: MultiGranularIndex,
    query_vectors: np.ndarray,
    label_vectors: np.ndarray,
    config: RouterTrainConfig,
) -> RouterTrainResult:
    """Soft labels from `index`, then `train_router` (the whole recipe on vectors)."""
    sims = level_similarities(index, query_vectors, label_vectors)
    labels = soft_labels(sims, config.best_label, config.second_label)
    return train_router(query_vectors, labels, config)


def main(argv: Sequence[str] | None = None) -> RouterTrainResult:
    """`prefrag train mog-router`: parse the arguments, train a router and save it."""
    (config,) = parse_config([RouterTrainConfig], argv, prog="prefrag train mog-router")
    return train(config)


def train(config: RouterTrainConfig) -> RouterTrainResult:
    """Train a router from a JSONL of questions and answers and save it.

    Raises:
        ConfigurationError: Neither a source nor an index folder is given.
        StoreMissingError: The source has no MoG index, or the data file does not exist.
    """
    from prefrag.index.embeddings import get_embedder
    from prefrag.tools.granularity_index import GranularityIndex

    index_dir = _index_folder(config)
    if config.data is None:
        raise ConfigurationError("Training data is required: pass --data FILE.jsonl.")
    if not Path(config.data).is_file():
        raise StoreMissingError(f"Training data '{config.data}' does not exist.")
    records = _read_records(Path(config.data), config.max_examples)
    embedder = get_embedder()
    index = GranularityIndex.load(index_dir, encoder=embedder)
    questions = embedder.encode([r["question"] for r in records])
    labels_text = embedder.encode([f"{r['question']} {r['answer']}" for r in records])
    started = time.perf_counter()
    result = fit_router(index, questions, labels_text, config)
    output = Path(config.output or index_dir / ROUTER_FILE).expanduser()
    result.router.save(output)
    summary = {
        "examples": len(records),
        "final_loss": result.losses[-1] if result.losses else None,
        "label_agreement": result.label_agreement,
        "label_histogram": result.label_histogram,
        "seconds": round(time.perf_counter() - started, 1),
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
    }
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return result


def _index_folder(config: RouterTrainConfig) -> Path:
    from prefrag.tools.granularity_index import mog_index_dir

    if config.index is not None:
        return Path(config.index).expanduser()
    if config.source is None:
        raise ConfigurationError("Name the source to train for: pass --source NAME.")
    folder = mog_index_dir(config.source)
    if not (folder / "index.json").exists():
        raise StoreMissingError(
            f"Source '{config.source}' has no MoG index; run `prefrag index ... --source "
            f"{config.source} --mog` first."
        )
    return folder


def _level_vectors(index: MultiGranularIndex, level: int) -> np.ndarray:
    levels = getattr(index, "levels", None)
    if levels is not None:
        return levels[level].vectors
    return index.vectors[level]  # type: ignore[attr-defined]


def _read_records(path: Path, limit: int | None) -> list[dict[str, str]]:
    records = []
    for _, row in iter_jsonl(path):
        answer = row.get("answer") or row.get("content") or ""
        if row.get("question") and answer:
            records.append({"question": row["question"], "answer": answer})
        if limit is not None and len(records) >= limit:
            break
    return records


if __name__ == "__main__":
    main()
