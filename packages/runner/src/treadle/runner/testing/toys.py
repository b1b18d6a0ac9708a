"""The toy model, data set and metric that RunnerTestCase's default configs train and
evaluate (MMEngine's, with the same names: ``ToyModel``, ``ToyDataset``, ``ToyMetric``)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn
from torch.utils.data import Dataset

from treadle.runner.evaluator import BaseMetric
from treadle.runner.model import BaseModel


class ToyModel(BaseModel):
    """Linear(2, 2) then Linear(2, 1); the loss is ``(data_samples - outputs).sum()``.

    Example:
        >>> ToyModel()(torch.ones(3, 2)).shape
        torch.Size([3, 1])
    """

    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear1 = nn.Linear(2, 2)
        self.linear2 = nn.Linear(2, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if isinstance(inputs, list):
            inputs = torch.stack(inputs)
        if isinstance(data_samples, list):
            data_samples = torch.stack(data_samples)
        outputs = self.linear2(self.linear1(inputs))
        if mode == "loss":
            return dict(loss=(data_samples - outputs).sum())
        if mode in ("tensor", "predict"):
            return outputs
        raise ValueError(f"ToyModel: unknown mode {mode!r} (tensor, loss or predict)")


class ToyDataset(Dataset):
    """12 samples of ``dict(inputs=Tensor[2], data_samples=Tensor[])``, labels all ones.

    Example:
        >>> sorted(ToyDataset()[0])
        ['data_samples', 'inputs']
    """

    METAINFO: ClassVar[dict] = dict()
    data = torch.randn(12, 2)
    label = torch.ones(12)

    @property
    def metainfo(self) -> dict:
        return self.METAINFO

    def __len__(self) -> int:
        return self.data.size(0)

    def __getitem__(self, index: int) -> dict:
        return dict(inputs=self.data[index], data_samples=self.label[index])


class ToyMetric(BaseMetric):
    """Reports ``acc=1`` whatever the predictions.

    Example:
        >>> ToyMetric().compute_metrics([])
        {'acc': 1}
    """

    def __init__(self, collect_device: str = "cpu", dummy_metrics: Any = None) -> None:
        super().__init__(collect_device=collect_device)
        self.dummy_metrics = dummy_metrics

    def process(self, data_batch: Any, predictions: Any) -> None:
        self.results.append({"acc": 1})

    def compute_metrics(self, results: list) -> dict:
        return dict(acc=1)
