"""The model the checks train through a Runner: the test suite's toy regression
(tests/support/runner_toy_model.py) with a hidden layer and dropout, so that a step draws
random numbers on the device and resuming must restore the device's generator too.

Importing this module registers ``GpuPassDropoutModel`` in MODELS. Call
``gpu_pass_checks.use_repo_paths()`` first (it imports the test toys).
"""

from __future__ import annotations

from typing import Any

import torch
from runner_toy_model import stacked, toy_cfg
from torch import nn

from treadle.runner.model import BaseModel
from treadle.runner.registry import MODELS


@MODELS.register_module(name="GpuPassDropoutModel", force=True)
class DropoutModel(BaseModel):
    """Linear(2, hidden), ReLU, Dropout, Linear(hidden, 1); mean squared error on
    RunnerToyDataset's samples (one tensor each, or a list of them from pseudo_collate)."""

    def __init__(
        self, hidden: int = 16, dropout: float = 0.5, data_preprocessor: Any = None
    ) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.first = nn.Linear(2, hidden)
        self.dropout = nn.Dropout(dropout)
        self.last = nn.Linear(hidden, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        inputs, data_samples = stacked(inputs), stacked(data_samples)
        outputs = self.last(self.dropout(torch.relu(self.first(inputs)))).squeeze(-1)
        if mode == "loss":
            return {"loss": ((outputs.float() - data_samples) ** 2).mean()}
        if mode == "predict":
            return [dict(pred=p, gt=g) for p, g in zip(outputs.detach(), data_samples, strict=True)]
        return outputs


def loader(length: int = 12, batch_size: int = 3, shuffle: bool = True, **extra: Any) -> dict:
    """A RunnerToyDataset loader config, batches stacked by default_collate."""
    return dict(
        dataset=dict(type="RunnerToyDataset", length=length),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
        batch_size=batch_size,
        num_workers=0,
        **extra,
    )


def dropout_cfg(work_dir: Any, device: str, dropout: float = 0.5, **overrides: Any) -> dict:
    """``toy_cfg`` training GpuPassDropoutModel: 3 epochs of 4 iterations, validation every
    epoch, a checkpoint every 5 iterations; deterministic algorithms on CUDA."""
    base: dict[str, Any] = dict(
        model=dict(type="GpuPassDropoutModel", dropout=dropout),
        train_dataloader=loader(),
        val_dataloader=loader(shuffle=False),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False),
        ),
        randomness=dict(seed=0, deterministic=device == "cuda"),
    )
    base.update(overrides)
    return toy_cfg(work_dir, **base)
