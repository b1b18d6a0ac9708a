"""The digits example's data set, network and metric for MMEngine 0.10, registered in
MMEngine's registries, so that benchmarks/runner_startup.py can start the same config
(examples/digits/config.py) with MMEngine's Runner without importing treadle.

The same classes as examples/digits/digits_example.py, on MMEngine's base classes; the curve
hook is a no-op here (it only acts after training, which the benchmark never reaches).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from mmengine.registry import DATASETS, HOOKS, METRICS, MODELS
from torch import nn
from torch.nn import functional as F


@DATASETS.register_module()
class Digits(torch.utils.data.Dataset):
    """scikit-learn's digits, cut into the example's train and val parts."""

    def __init__(self, split: str = "train", val_fraction: float = 0.2, seed: int = 0) -> None:
        from sklearn.datasets import load_digits

        images, labels = load_digits(return_X_y=True)
        order = np.random.default_rng(seed).permutation(len(labels))
        n_val = round(len(labels) * val_fraction)
        chosen = order[n_val:] if split == "train" else order[:n_val]
        self.inputs = torch.from_numpy(images[chosen] / 16.0).float()
        self.labels = torch.from_numpy(labels[chosen]).long()
        self.metainfo = {"classes": tuple(str(d) for d in range(10))}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}


@MODELS.register_module()
class DigitsMLP(BaseModel):
    """64 pixels, ``hidden`` units, 10 classes."""

    def __init__(self, hidden: int = 128, dropout: float = 0.1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.net = nn.Sequential(
            nn.Linear(64, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 10)
        )

    def forward(self, inputs: torch.Tensor, labels: Any = None, mode: str = "tensor") -> Any:
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, labels)}
        if mode == "predict":
            return [{"pred": p, "label": t} for p, t in zip(logits.argmax(1), labels, strict=True)]
        return logits


@METRICS.register_module()
class DigitsAccuracy(BaseMetric):
    """Top-1 accuracy in percent."""

    default_prefix = "accuracy"

    def process(self, data_batch: Any, data_samples: list[dict[str, Any]]) -> None:
        for sample in data_samples:
            self.results.append(bool(sample["pred"] == sample["label"]))

    def compute_metrics(self, results: list[bool]) -> dict[str, float]:
        return {"top1": 100.0 * sum(results) / max(len(results), 1)}


@HOOKS.register_module()
class CurvePlotHook(Hook):
    """Stands in for the example's curve hook, which acts only after training."""

    def __init__(self, keys: Any = ()) -> None:
        self.keys = list(keys)
