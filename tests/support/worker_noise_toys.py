"""A toy dataset whose items are augmented in the DataLoader workers with numbers drawn from
Python's, NumPy's and torch's generators (what RandomFlip and friends do), for tests of exact
resume with workers."""

from __future__ import annotations

import random

import numpy as np
import torch
from runner_toy_model import ToyDataset

from treadle.runner.registry import DATASETS


@DATASETS.register_module(name="WorkerNoiseToyDataset", force=True)
class WorkerNoiseToyDataset(ToyDataset):
    """RunnerToyDataset with random jitter on the inputs, drawn where the item is loaded.

    Example:
        >>> item = WorkerNoiseToyDataset(length=4)[0]
        >>> item['inputs'].shape
        torch.Size([2])
    """

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        item = super().__getitem__(index)
        jitter = random.random() + float(np.random.rand()) + float(torch.rand(()))
        return dict(inputs=item["inputs"] + 0.1 * jitter, data_samples=item["data_samples"])
