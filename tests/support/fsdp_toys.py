"""Toys for the FSDP part's tests (strategies, sharded and async checkpoints): a small
BaseModel whose layers are FSDP units, deterministic per-rank batches, and an optimizer wrapper
config. Nothing here needs a process group; the scenarios that use them run in one.

Importing it registers ``FsdpToyModel`` in MODELS.

Example:
    >>> model = make_model(seed=0)
    >>> inputs, targets = rank_batch(step=0, rank=1, world_size=2)
"""

from __future__ import annotations

import torch
from torch import nn

from treadle.runner.model import BaseModel
from treadle.runner.registry import MODELS

BATCH = 4  # samples per rank
FEATURES = 6


@MODELS.register_module(force=True)
class FsdpToyModel(BaseModel):
    """Two hidden layers and a head; ``hidden`` changes the width (a model that differs)."""

    def __init__(self, hidden: int = 8, head_name: str = "head") -> None:
        super().__init__()
        self.first = nn.Linear(FEATURES, hidden)
        self.second = nn.Linear(hidden, hidden)
        self.head_name = head_name
        self.add_module(head_name, nn.Linear(hidden, 1))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        hidden = torch.tanh(self.second(torch.tanh(self.first(inputs))))
        outputs = getattr(self, self.head_name)(hidden)
        if mode == "loss":
            return {"loss_mse": ((outputs.squeeze(-1) - data_samples) ** 2).mean()}
        if mode == "predict":
            return list(outputs.detach())
        return outputs


def make_model(seed: int = 0, **kwargs) -> FsdpToyModel:
    torch.manual_seed(seed)
    return FsdpToyModel(**kwargs)


def whole_batch(step: int, world_size: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1000 + step)
    inputs = torch.randn(BATCH * world_size, FEATURES, generator=generator)
    targets = torch.randn(BATCH * world_size, generator=generator)
    return inputs, targets


def rank_batch(step: int, rank: int, world_size: int) -> dict:
    inputs, targets = whole_batch(step, world_size)
    part = slice(rank * BATCH, (rank + 1) * BATCH)
    return {"inputs": inputs[part], "data_samples": targets[part]}


def optim_cfg(lr: float = 0.01) -> dict:
    return dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=lr, weight_decay=0.01))
