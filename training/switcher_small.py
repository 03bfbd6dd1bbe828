"""Train the small CPU switcher from switcher preference pairs (`prefrag train switcher-small`).

Each pair's prompt is read back into (question, held evidence, new documents) and turned
into the small switcher's features (`prefrag.reasoners.small_switcher`). The network scores
the "keep" verdict against the "switch" verdict and learns from pairs with a pairwise
(Bradley-Terry) preference loss, `-log sigmoid(r(chosen) - r(rejected))`, where `r(keep)`
is the network's logit and `r(switch)` is 0: with a keep/switch pair that is logistic
regression on the chosen label, which is how it is fitted: scikit-learn's `MLPClassifier`
(one tanh hidden layer, L-BFGS, L2 penalty `--weight_decay`, class balancing by sample
weights) on standardised features, or `LogisticRegression` with `--hidden 0`. Pairs whose
two verdicts share a status carry no keep/switch preference and are skipped. The fitted
weights are saved as plain arrays (`switcher.npz`, no pickle) and scored with numpy at run
time. A seeded share of the questions is held out for the model card's metrics; the saved
model is then trained on every pair.

    prefrag train switcher-small --pairs pairs.jsonl --out switcher/
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.errors import ConfigurationError, IngestError
from prefrag.reasoners.small_switcher import (
    CARD_FILE,
    FEATURES,
    MODEL_FILE,
    FeatureExtractor,
    SwitcherNetwork,
)
from prefrag.training.pairs import pair_status, read_compare_prompt, read_pairs


@dataclass
class SwitcherSmallConfig:
    """Settings of one small-switcher training run (`prefrag train switcher-small --help`)."""

    pairs: str = field(metadata={"help": "Switcher preference pairs (JSONL)."})
    out: str = field(metadata={"help": "Folder for switcher.npz and model_card.json."})
    hidden: int = field(default=4, metadata={"help": "Hidden units (0: a linear scorer)."})
    epochs: int = field(default=300, metadata={"help": "At most this many L-BFGS iterations."})
    weight_decay: float = field(default=0.1, metadata={"help": "L2 penalty on weights."})
    balance: bool = field(default=True, metadata={"help": "Weight keep and switch equally."})
    threshold: float = field(default=0.5, metadata={"help": "P(keep) at which it keeps."})
    validation: float = field(
        default=0.2, metadata={"help": "Share of questions held out for the card's metrics."}
    )
    seed: int = field(default=0, metadata={"help": "Seed of the split and initialisation."})

    def __post_init__(self) -> None:
        """Refuse settings no run can use, in one sentence."""
        problems = []
        if self.hidden < 0 or self.epochs < 1 or self.weight_decay < 0:
            problems.append("--hidden must be >= 0, --epochs >= 1 and --weight_decay >= 0")
        if not 0.0 <= self.validation < 1.0:
            problems.append("--validation must lie in [0, 1)")
        if not 0.0 < self.threshold < 1.0:
            problems.append("--threshold must lie in (0, 1)")
        if problems:
            raise ConfigurationError("Bad switcher-small setting: " + "; ".join(problems) + ".")


@dataclass
class Examples:
    """Feature rows, keep labels (1 keep, 0 switch) and each row's question id."""

    features: np.ndarray
    labels: np.ndarray
    questions: list[str]
    skipped: int = 0


def build_examples(
    pairs: Sequence[dict[str, Any]], extractor: FeatureExtractor | None = None
) -> Examples:
    """Features and labels of pairs whose chosen and rejected statuses differ."""
    extractor = extractor or FeatureExtractor()
    rows: list[np.ndarray] = []
    labels: list[float] = []
    questions: list[str] = []
    skipped = 0
    for pair in pairs:
        chosen = pair_status(pair, "chosen")
        if chosen == pair_status(pair, "rejected"):
            skipped += 1
            continue
        inputs = read_compare_prompt(pair["prompt"][-1]["content"])
        rows.append(extractor.features(inputs.question, inputs.held, inputs.new))
        labels.append(1.0 if chosen else 0.0)
        questions.append(str(pair.get("meta", {}).get("question_id", len(questions))))
    features = np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))
    return Examples(features, np.array(labels), questions, skipped)


def train_network(
    features: np.ndarray, labels: np.ndarray, config: SwitcherSmallConfig
) -> tuple[SwitcherNetwork, list[float]]:
    """Fit the scorer with scikit-learn; returns it and its final training loss (a list).

    The linear scorer's loss is computed from its fitted probabilities.
    """
    import warnings

    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        from sklearn.neural_network import MLPClassifier
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:
        raise ConfigurationError(
            "Training the small switcher needs scikit-learn: pip install 'prefrag[train]'."
        ) from exc

    scaler = StandardScaler().fit(features)
    scale = np.where(scaler.scale_ < 1e-6, 1.0, scaler.scale_)
    x = (features - scaler.mean_) / scale
    y = (labels > 0.5).astype(int)
    weights = np.ones(len(y))
    if config.balance and 0 < y.sum() < len(y):
        positive = y.mean()
        weights = np.where(y == 1, 0.5 / positive, 0.5 / (1 - positive))
    weights = weights * len(y) / weights.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is the user's cap
        if config.hidden == 0:
            # sklearn's C is the inverse of the summed penalty: C = 1 / (alpha * n).
            linear = LogisticRegression(
                C=1.0 / max(config.weight_decay * len(y), 1e-12), max_iter=config.epochs
            ).fit(x, y, sample_weight=weights)
            network = _linear_network(
                scaler.mean_, scale, linear.coef_[0], float(linear.intercept_[0])
            )
            probability = np.clip(network.keep_probability(features), 1e-12, 1 - 1e-12)
            loss = float(-np.mean(weights * np.log(np.where(y == 1, probability, 1 - probability))))
            network.threshold = config.threshold
            return network, [loss]
        mlp = MLPClassifier(
            hidden_layer_sizes=(config.hidden,),
            activation="tanh",
            solver="lbfgs",
            alpha=config.weight_decay,
            max_iter=config.epochs,
            random_state=config.seed,
        ).fit(x, y, sample_weight=weights)
    network = SwitcherNetwork(
        scaler.mean_,
        scale,
        mlp.coefs_[0],
        mlp.intercepts_[0],
        mlp.coefs_[1][:, 0],
        float(mlp.intercepts_[1][0]),
        threshold=config.threshold,
    )
    return network, [float(mlp.loss_)]


def _linear_network(
    mean: np.ndarray, scale: np.ndarray, w: np.ndarray, b: float
) -> SwitcherNetwork:
    """A linear scorer as a `SwitcherNetwork`: one tanh unit kept in its linear range."""
    small = 1e-3
    return SwitcherNetwork(
        mean, scale, (w * small)[:, None], np.zeros(1), np.array([1.0 / small]), b
    )


def agreement(network: SwitcherNetwork, features: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    """Accuracy and per-class recall of the network's verdicts against the labels."""
    if len(labels) == 0:
        return {"examples": 0}
    predicted = network.keep_probability(features) >= network.threshold
    truth = labels > 0.5
    result: dict[str, Any] = {
        "examples": len(labels),
        "accuracy": round(float(np.mean(predicted == truth)), 4),
    }
    for name, wanted in (("keep", True), ("switch", False)):
        mask = truth == wanted
        result[f"{name}_examples"] = int(mask.sum())
        result[f"{name}_recall"] = (
            round(float(np.mean(predicted[mask] == wanted)), 4) if mask.any() else None
        )
    return result


def held_out(questions: Sequence[str], share: float, seed: int) -> np.ndarray:
    """A boolean mask of rows whose question falls in the held-out share (seeded hash)."""
    mask = []
    for question in questions:
        digest = hashlib.sha256(f"{seed}:{question}".encode()).digest()
        mask.append(int.from_bytes(digest[:4], "big") / 2**32 < share)
    return np.array(mask, dtype=bool)


def train(
    config: SwitcherSmallConfig, *, extractor: FeatureExtractor | None = None
) -> dict[str, Any]:
    """Train, evaluate on the held-out questions, retrain on all, save; returns the card.

    Raises:
        IngestError: The pairs file is missing or malformed, or holds no usable pair.
        ConfigurationError: `out` is a file or cannot be created (checked before training).
    """
    start = time.perf_counter()
    out = Path(config.out).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ConfigurationError(
            f"--out {config.out!r} is a file, not a folder; give a folder for the switcher."
        ) from None
    except OSError as error:
        raise ConfigurationError(
            f"Cannot create the folder --out {config.out!r}: {error.strerror or error}."
        ) from None
    pairs_path = Path(config.pairs)
    pairs = list(read_pairs(pairs_path))
    examples = build_examples(pairs, extractor)
    if len(examples.labels) == 0 or len(set(examples.labels.tolist())) < 2:
        raise IngestError(
            f"'{pairs_path}' holds no keep and switch pairs to learn from "
            f"({len(examples.labels)} usable of {len(pairs)})."
        )
    mask = held_out(examples.questions, config.validation, config.seed)
    metrics: dict[str, Any] = {}
    if mask.any() and (~mask).any() and len(set(examples.labels[~mask].tolist())) == 2:
        network, _ = train_network(examples.features[~mask], examples.labels[~mask], config)
        metrics["train_part"] = agreement(network, examples.features[~mask], examples.labels[~mask])
        metrics["held_out"] = agreement(network, examples.features[mask], examples.labels[mask])
    network, losses = train_network(examples.features, examples.labels, config)
    metrics["all_pairs"] = agreement(network, examples.features, examples.labels)
    network.save(out / MODEL_FILE)
    card = {
        "model": "prefrag small switcher",
        "features": list(FEATURES),
        "data": {
            "pairs": str(pairs_path),
            "sha256": hashlib.sha256(pairs_path.read_bytes()).hexdigest(),
            "pairs_read": len(pairs),
            "usable": len(examples.labels),
            "same_status_skipped": examples.skipped,
            "keep": int(examples.labels.sum()),
            "switch": int(len(examples.labels) - examples.labels.sum()),
            "questions": len(set(examples.questions)),
        },
        "settings": asdict(config),
        "metrics": metrics,
        "final_loss": round(losses[-1], 5),
        "train_seconds": round(time.perf_counter() - start, 2),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    (out / CARD_FILE).write_text(json.dumps(card, indent=2))
    return card


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """`prefrag train switcher-small`: parse the config, train, print the model card."""
    from rich.console import Console

    from prefrag.training.config import parse_config

    (config,) = parse_config([SwitcherSmallConfig], argv)
    card = train(config)
    console = Console()
    console.print_json(json.dumps({"out": config.out, **card["metrics"], "data": card["data"]}))
    return card
