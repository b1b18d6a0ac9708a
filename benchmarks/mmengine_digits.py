"""The digits example's data set, network and metric for MMEngine 0.10, registered in
MMEngine's registries, so that benchmarks/runner_startup.py can start the same config
(examples/digits/config.py) with MMEngine's Runner without importing treadle.

The data set is the example's own (examples/digits/digits_data.py); the network and metric
are those of examples/digits/digits_example.py on MMEngine's base classes; the curve
hook is a no-op here (it only acts after training, which the benchmark never reaches).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from mmengine.registry import DATASETS, HOOKS, METRICS, MODELS
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "digits"))
from digits_data import Digits

# The example's own data set: the same file, the same start-up cost on both sides.
DATASETS.register_module(name="Digits", module=Digits)


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
