"""The model, data and training settings of the MMEngine 0.10.7 checkpoints under
tests/runner/data/mmengine_0_10_7: shared by make_checkpoints.py there, which trains them with
MMEngine, and by the tests that load or resume them with treadle.

This module imports torch alone (neither treadle nor mmengine), because the generator runs in
the mmengine environment. The model's layers and forward come as ``LinearToyParts``, put in
front of each side's BaseModel.

Example:
    >>> class LinearToy(LinearToyParts, BaseModel):
    ...     pass
    >>> Runner(model=LinearToy(), train_dataloader=eight_points_loader(), **TRAIN_SETTINGS, ...)
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn


class LinearToyParts:
    """One Linear(2, 1) and a mean squared error; list it before the side's BaseModel."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, inputs: Any, labels: Any = None, mode: str = "tensor") -> Any:
        out = self.linear(inputs)
        if mode == "loss":
            return {"loss": ((out - labels) ** 2).mean()}
        return out


class EightPoints(torch.utils.data.Dataset):
    """The data MMEngine trained LinearToy on for the fixtures (the same whatever the seed)."""

    metainfo: ClassVar[dict] = {"classes": ("a", "b")}

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> dict:
        generator = torch.Generator().manual_seed(index)
        return {
            "inputs": torch.randn(2, generator=generator),
            "labels": torch.randn(1, generator=generator),
        }


def eight_points_loader() -> dict:
    """The dataloader config of the fixture run: EightPoints in order, two at a time."""
    return {
        "dataset": EightPoints(),
        "sampler": {"type": "DefaultSampler", "shuffle": False},
        "batch_size": 2,
        "collate_fn": {"type": "default_collate"},
    }


# Runner arguments of the fixture run: two epochs of SGD with momentum, the lr cut after one.
TRAIN_SETTINGS: dict = {
    "train_cfg": {"by_epoch": True, "max_epochs": 2},
    "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}},
    "param_scheduler": {"type": "MultiStepLR", "milestones": [1]},
    "randomness": {"seed": 0},
}
