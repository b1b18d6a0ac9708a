"""Toys of part STORAGE's tests (non-finite losses, data loader failures, faulty storage).

Importing this module registers, under names that say where they come from:

- MODELS ``StorageToyModel``: RunnerToyModel's layers with two loss terms, ``loss_mse`` and
  ``loss_reg``; ``nan_at`` lists the training forward calls (0-based) whose ``bad_term`` is
  NaN (``nan_from`` makes every call from it on NaN); ``ballast`` adds that many unused
  float32 weights, for big checkpoints.
- DATASETS ``StorageRaisingDataset`` (``__getitem__`` raises at ``bad_index``) and
  ``StorageDyingDataset`` (the worker process exits at ``bad_index``, as an OOM kill would).

Example:
    >>> from runner_toy_model import toy_iter_cfg
    >>> cfg = toy_iter_cfg(tmp_path, model=dict(type='StorageToyModel', nan_at=[5]))
"""

from __future__ import annotations

import os
from typing import Any

import torch
from runner_toy_model import ToyDataset, _Head, stacked

from treadle.runner.model import BaseModel
from treadle.runner.registry import DATASETS, MODELS


@MODELS.register_module(name="StorageToyModel", force=True)
class StorageToyModel(BaseModel):
    """Two loss terms; ``bad_term`` is NaN at the calls ``nan_at`` and from ``nan_from``."""

    def __init__(
        self,
        nan_at: list[int] = (),
        nan_from: int | None = None,
        bad_term: str = "loss_reg",
        ballast: int = 0,
        data_preprocessor: Any = None,
    ) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.head = _Head(False)
        # Unused weights that make checkpoints big (multipart uploads); no gradient, no step.
        self.ballast = torch.nn.Parameter(torch.zeros(ballast), requires_grad=False)
        self.nan_at = set(nan_at)
        self.nan_from = nan_from
        self.bad_term = bad_term
        self.loss_calls = 0

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        inputs, data_samples = stacked(inputs), stacked(data_samples)
        outputs = self.head(inputs)
        if mode == "loss":
            losses = {
                "loss_mse": ((outputs - data_samples) ** 2).mean(),
                "loss_reg": 0.01 * sum((p**2).sum() for p in self.head.parameters()),
            }
            call, self.loss_calls = self.loss_calls, self.loss_calls + 1
            if call in self.nan_at or (self.nan_from is not None and call >= self.nan_from):
                losses[self.bad_term] = losses[self.bad_term] * float("nan")
            return losses
        if mode == "predict":
            return [dict(pred=p, gt=g) for p, g in zip(outputs.detach(), data_samples, strict=True)]
        return outputs


@DATASETS.register_module(name="StorageRaisingDataset", force=True)
class RaisingDataset(ToyDataset):
    """ToyDataset whose ``__getitem__(bad_index)`` raises a ValueError."""

    def __init__(self, length: int = 12, bad_index: int = 5) -> None:
        super().__init__(length)
        self.bad_index = bad_index

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        if index == self.bad_index:
            raise ValueError(f"cannot decode sample {index}")
        return super().__getitem__(index)


@DATASETS.register_module(name="StorageDyingDataset", force=True)
class DyingDataset(ToyDataset):
    """ToyDataset whose worker process exits at once when it reads ``bad_index``."""

    def __init__(self, length: int = 12, bad_index: int = 5) -> None:
        super().__init__(length)
        self.bad_index = bad_index

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        if index == self.bad_index:
            os._exit(3)
        return super().__getitem__(index)
