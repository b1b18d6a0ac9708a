"""The parts of the digits example that a config cannot hold: the data set, the network, the
metric and a hook that draws the curves. Registered in treadle's root registries, so the config
names them by type, as an MMEngine project would.

scikit-learn's digits (1,797 grey 8x8 images of the digits 0 to 9) ship inside scikit-learn:
nothing is downloaded.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from treadle.runner.evaluator import BaseMetric
from treadle.runner.hooks.hook import Hook
from treadle.runner.model import BaseModel
from treadle.runner.registry import DATASETS, HOOKS, METRICS, MODELS


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as ``(images (1797, 64) float, labels (1797,) int)``.

    The CSV file scikit-learn ships is read directly: importing sklearn.datasets (with scipy)
    would add a second to the start of every run. ``sklearn.datasets.load_digits`` is the
    fallback should the file move.
    """
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "the digits example needs scikit-learn for its bundled data set: "
            "pip install scikit-learn"
        )
    path = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "digits.csv.gz")
    if not os.path.isfile(path):
        from sklearn.datasets import load_digits as sklearn_load_digits

        return sklearn_load_digits(return_X_y=True)
    with gzip.open(path, "rt") as file:
        table = np.loadtxt(file, delimiter=",")
    return table[:, :-1], table[:, -1].astype(np.int64)


@DATASETS.register_module()
class Digits(torch.utils.data.Dataset):
    """scikit-learn's digits, shuffled once with ``seed`` and cut into train and val parts.

    Each sample is ``dict(inputs=float32 tensor of 64 pixels in [0, 1], labels=int)``.

    Example:
        >>> len(Digits('train')), len(Digits('val'))
        (1438, 359)
    """

    def __init__(self, split: str = "train", val_fraction: float = 0.2, seed: int = 0) -> None:
        if split not in ("train", "val"):
            raise ValueError(f"Digits: split must be 'train' or 'val', got {split!r}")
        images, labels = load_digits()
        order = np.random.default_rng(seed).permutation(len(labels))
        n_val = round(len(labels) * val_fraction)
        chosen = order[n_val:] if split == "train" else order[:n_val]
        self.inputs = torch.from_numpy(images[chosen] / 16.0).float()  # pixels are 0..16
        self.labels = torch.from_numpy(labels[chosen]).long()
        self.metainfo = {"classes": tuple(str(d) for d in range(10))}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}


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
    (``curves.png`` beside it), with treadle.visual's plot.

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
        from treadle.visual import find_scalars_file, read_scalars
        from treadle.visual.plot import plot_file

        # The local backend buffers scalars for a few seconds: closing writes them all (a
        # later write would open the file again).
        runner.visualizer.close()
        found = find_scalars_file(runner.log_dir)
        present = [key for key in self.keys if key in read_scalars(found.path)]
        if not present:
            runner.logger.warning(f"CurvePlotHook: none of {self.keys} in {found.path}")
            return
        result = plot_file(found.path, keys=present)
        runner.logger.info(f"Curves of {', '.join(present)} saved to {result.out}")
