"""Train the Mix-of-Granularity router (MoG §3.2.2): soft labels, BCE, Adam.

For each training question, the best chunk of every granularity level is retrieved from a
MoG index; its embedding similarity to "question + answer" ranks the levels; the best
level gets the soft label 0.8, the second 0.2, the rest 0. An MLP on the question
embedding learns those labels with binary cross-entropy (Adam, lr 1e-3). The router is
saved as a small `.npz` that `prefrag.tools.mog.MoGSelector` loads.

Run (MedQuAD-style JSONL with `question` and `content`/`answer`; the index must cover the
answers' documents):

    python -m prefrag.training.mog_router --data train.jsonl \
        --index ~/.prefrag/sources/medquad/mog --output ~/.prefrag/sources/medquad/mog/router.npz

or `--config router.yaml` with the same field names.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.tools.granularity_index import MultiGranularIndex
from prefrag.tools.mog import ROUTER_FILE, Router


@dataclass
class RouterTrainConfig:
    """Settings of one router training run."""

    data: Path | None = None
    index: Path | None = None
    output: Path | None = None
    hidden: int = 128
    epochs: int = 300
    lr: float = 1e-3
    batch_size: int = 64
    best_label: float = 0.8
    second_label: float = 0.2
    seed: int = 0
    max_examples: int | None = None


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


def main(config: RouterTrainConfig | None = None) -> RouterTrainResult:
    """Train a router from a JSONL of questions and answers and save it."""
    from prefrag.index.embeddings import get_embedder
    from prefrag.tools.granularity_index import GranularityIndex

    config = config or _parse_args()
    if config.data is None or config.index is None:
        raise SystemExit("Both --data and --index are required.")
    records = _read_records(Path(config.data), config.max_examples)
    embedder = get_embedder()
    index = GranularityIndex.load(Path(config.index).expanduser(), encoder=embedder)
    questions = embedder.encode([r["question"] for r in records])
    labels_text = embedder.encode([f"{r['question']} {r['answer']}" for r in records])
    started = time.perf_counter()
    result = fit_router(index, questions, labels_text, config)
    output = Path(config.output or Path(config.index) / ROUTER_FILE).expanduser()
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


def _level_vectors(index: MultiGranularIndex, level: int) -> np.ndarray:
    levels = getattr(index, "levels", None)
    if levels is not None:
        return levels[level].vectors
    return index.vectors[level]  # type: ignore[attr-defined]


def _read_records(path: Path, limit: int | None) -> list[dict[str, str]]:
    records = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            answer = row.get("answer") or row.get("content") or ""
            if row.get("question") and answer:
                records.append({"question": row["question"], "answer": answer})
            if limit is not None and len(records) >= limit:
                break
    return records


def _parse_args(argv: Sequence[str] | None = None) -> RouterTrainConfig:
    parser = argparse.ArgumentParser(description="Train the MoG router.")
    parser.add_argument("--config", type=Path, help="YAML file with RouterTrainConfig fields.")
    for item in fields(RouterTrainConfig):
        parser.add_argument(f"--{item.name.replace('_', '-')}", dest=item.name, default=None)
    args = vars(parser.parse_args(argv))
    values: dict = {}
    config_path = args.pop("config")
    if config_path:
        import yaml

        values.update(yaml.safe_load(Path(config_path).read_text()) or {})
    values.update({k: v for k, v in args.items() if v is not None})
    defaults = RouterTrainConfig()
    typed: dict[str, Any] = {}
    for item in fields(RouterTrainConfig):
        if item.name not in values:
            continue
        value = values[item.name]
        default = getattr(defaults, item.name)
        if item.name in ("data", "index", "output"):
            typed[item.name] = Path(value)
        elif isinstance(default, float):
            typed[item.name] = float(value)
        elif isinstance(default, int) or item.name == "max_examples":
            typed[item.name] = int(value)
        else:
            typed[item.name] = value
    return RouterTrainConfig(**typed)


if __name__ == "__main__":
    main()
