"""The parts of the digits example that a config cannot hold: the data set, the network, the
metric and a hook that draws the curves. Registered in treadle's root registries, so the config
names them by type, as an MMEngine project would.

The data set itself is in digits_data.py, next to this file.
"""

from __future__ import annotations

from typing import Any

import torch
from digits_data import Digits, load_digits  # noqa: F401 (load_digits: the example's API)
from torch import nn
from torch.nn import functional as F

from treadle.runner.evaluator import BaseMetric
from treadle.runner.hooks.hook import Hook
from treadle.runner.model import BaseModel
from treadle.runner.registry import DATASETS, HOOKS, METRICS, MODELS

# The data set lives in digits_data.py (no treadle there), registered here by name.
DATASETS.register_module(name="Digits", module=Digits)


@MODELS.register_module()
class DigitsMLP(BaseModel):
    """A two-layer perceptron: 64 pixels, ``hidden`` units, 10 classes.

    Example:
        >>> model = DigitsMLP(hidden=32)
        >>> model(torch.zeros(2, 64), mode='tensor').shape
        torch.Size([2, 10])
    """

    def __init__(self, hidden: int = 128, dropout: float = 0.1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.net = nn.Sequential(
            nn.Linear(64, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 10)
        )

    def forward(
        self, inputs: torch.Tensor, labels: torch.Tensor | None = None, mode: str = "tensor"
    ) -> Any:
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, labels)}
        if mode == "predict":
            # One entry per sample, as metrics expect; the batch stays on the device here.
            return [{"pred": p, "label": t} for p, t in zip(logits.argmax(1), labels, strict=True)]
        return logits


@METRICS.register_module()
class DigitsAccuracy(BaseMetric):
    """Top-1 accuracy in percent, reported as ``accuracy/top1``.

    Example:
        >>> metric = DigitsAccuracy()
        >>> metric.process({}, [{'pred': torch.tensor(3), 'label': torch.tensor(3)}])
        >>> metric.compute_metrics(metric.results)
        {'top1': 100.0}
    """

    default_prefix = "accuracy"

    def process(self, data_batch: Any, data_samples: list[dict[str, Any]]) -> None:
        for sample in data_samples:
            self.results.append(bool(sample["pred"] == sample["label"]))

    def compute_metrics(self, results: list[bool]) -> dict[str, float]:
        return {"top1": 100.0 * sum(results) / max(len(results), 1)}


@HOOKS.register_module()
class CurvePlotHook(Hook):
    """At the end of a training run, draw ``keys`` from its ``vis_data/scalars.json`` as a PNG
    (``curves.png`` beside it), with treadle.visual's plot. A resumed run is drawn with the
    runs it resumed from, as one history.

    Example:
        >>> CurvePlotHook(keys=['loss', 'accuracy/top1']).keys
        ['loss', 'accuracy/top1']
    """

    priority = "LOWEST"

    def __init__(self, keys: list[str] | tuple[str, ...] = ("loss", "accuracy/top1")) -> None:
        self.keys = list(keys)
        self._trained = False

    def after_train(self, runner: Any) -> None:
        self._trained = True  # `treadle test` runs no training: nothing to draw then

    def after_run(self, runner: Any) -> None:
        if not self._trained or runner.rank != 0:
            return
        from treadle.visual import find_scalars_file, read_history
        from treadle.visual.plot import plot_file

        # The local backend buffers scalars for a few seconds: closing writes them all (a
        # later write would open the file again).
        runner.visualizer.close()
        found = find_scalars_file(runner.log_dir)
        history = read_history(found.path)  # this run and the runs it resumed from
        present = [key for key in self.keys if key in history.series]
        if not present:
            runner.logger.warning(f"CurvePlotHook: none of {self.keys} in {found.path}")
            return
        result = plot_file(found.path, keys=present)
        earlier = len(history.runs) - 1
        plural = "s" if earlier > 1 else ""
        runs = f" (and the {earlier} run{plural} it resumed from)" if earlier else ""
        runner.logger.info(f"Curves of {', '.join(present)}{runs} saved to {result.out}")
