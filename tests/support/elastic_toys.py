"""Toys for the elastic tests (tests/runner/test_elastic*.py): a data set with random
augmentation drawn from Python's ``random``, NumPy's and torch's global generators, a model whose
step depends only on the global batch (no BatchNorm, no dropout), a hook that records the loss
of every iteration, and the Runner arguments of a small elastic run.

Importing it registers ``ElasticToyDataset``, ``PacedElasticToyDataset`` (the same, slowed
down while a file exists: tests/runner/test_fault_elastic_nodes.py), ``ElasticToyModel``,
``ElasticToyNoisyModel`` (dropout and BatchNorm, for the spread benchmark) and
``ElasticLossRecorder``.

Example:
    >>> cfg = elastic_cfg('/tmp/w', loop='epoch', elastic=dict(global_batch_size=8))
    >>> runner = Runner(**cfg); runner.train()  # doctest: +SKIP
    >>> losses(runner)  # {iteration: loss}                # doctest: +SKIP
"""

from __future__ import annotations

import os
import random
import time
import uuid
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from treadle.runner.hooks import Hook
from treadle.runner.model import BaseModel
from treadle.runner.registry import DATASETS, HOOKS, MODELS

FEATURES = 6


@DATASETS.register_module(force=True)
class ElasticToyDataset(torch.utils.data.Dataset):
    """``length`` fixed points with a linear target; each read flips the features' sign (Python's
    ``random``), adds NumPy noise and torch noise: a sample differs at every read unless its
    randomness is keyed by the sample."""

    metainfo: ClassVar[dict[str, str]] = {"name": "elastic toy"}

    def __init__(self, length: int = 30) -> None:
        generator = torch.Generator().manual_seed(1234)
        self.inputs = torch.randn(length, FEATURES, generator=generator)
        weight = torch.randn(FEATURES, generator=generator)
        self.targets = self.inputs @ weight

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, Any]:
        inputs = self.inputs[index].clone()
        if random.random() < 0.5:
            inputs = -inputs
        inputs = inputs + torch.from_numpy(np.random.normal(0.0, 0.1, FEATURES)).float()
        inputs = inputs + 0.05 * torch.randn(FEATURES)
        return {"inputs": inputs, "data_samples": self.targets[index].abs()}


@DATASETS.register_module(force=True)
class PacedElasticToyDataset(ElasticToyDataset):
    """ElasticToyDataset read at a slow disk's pace while ``hold_file`` exists: each read sleeps
    ``delay`` seconds then, so a harness has time to kill and restart machines before training
    ends, and removes the file to let it finish. Only the time changes, never a sample."""

    def __init__(self, length: int = 30, hold_file: str = "", delay: float = 0.025) -> None:
        super().__init__(length)
        self.hold_file = hold_file
        self.delay = delay

    def __getitem__(self, index: int) -> dict[str, Any]:
        if self.hold_file and os.path.exists(self.hold_file):
            time.sleep(self.delay)
        return super().__getitem__(index)


@MODELS.register_module(force=True)
class ElasticToyModel(BaseModel):
    """Two tanh layers and a head; the loss is the mean squared error over the batch."""

    def __init__(self, hidden: int = 16) -> None:
        super().__init__()
        self.first = nn.Linear(FEATURES, hidden)
        self.second = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def init_weights(self) -> None:
        generator = torch.Generator().manual_seed(7)
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.copy_(0.3 * torch.randn(parameter.shape, generator=generator))

    def hidden(self, inputs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.second(torch.tanh(self.first(inputs))))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        outputs = self.head(self.hidden(inputs)).squeeze(-1)
        if mode == "loss":
            return {"loss_mse": ((outputs - data_samples) ** 2).mean()}
        if mode == "predict":
            return list(outputs.detach())
        return outputs


@MODELS.register_module(force=True)
class ElasticToyNoisyModel(ElasticToyModel):
    """ElasticToyModel with dropout and BatchNorm: its step depends on how the global batch is
    split and on each rank's dropout draws."""

    def __init__(self, hidden: int = 16) -> None:
        super().__init__(hidden)
        self.norm = nn.BatchNorm1d(hidden)
        self.dropout = nn.Dropout(0.2)

    def hidden(self, inputs: torch.Tensor) -> torch.Tensor:
        hidden = self.dropout(torch.tanh(self.norm(self.first(inputs))))
        return torch.tanh(self.second(hidden))


@HOOKS.register_module(force=True)
class ElasticLossRecorder(Hook):
    """Records ``outputs['loss']`` of every training iteration: ``{iteration: loss}`` (with
    elastic, the global batch's loss, averaged over the processes)."""

    priority = "LOW"

    def __init__(self) -> None:
        self.losses: dict[int, float] = {}

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.losses[runner.iter] = float(outputs["loss"])


def losses(runner) -> dict[int, float]:
    """The recorded ``{iteration: loss}`` of ``runner``."""
    return next(h for h in runner.hooks if isinstance(h, ElasticLossRecorder)).losses


def weights(runner) -> dict[str, torch.Tensor]:
    """The model's weights on the CPU (unwrapped; an FSDP model's gathered in full)."""
    from treadle.runner.model import unwrap_model

    model = unwrap_model(runner.model)
    if any(type(p).__name__ == "DTensor" for p in model.parameters()):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    else:
        state = model.state_dict()
    return {name: value.detach().cpu().clone() for name, value in state.items()}


def elastic_cfg(
    work_dir: Any,
    loop: str = "epoch",
    elastic: dict | None = None,
    length: int = 30,
    num_workers: int = 0,
    checkpoint_interval: int = 3,
    model: str = "ElasticToyModel",
    **overrides: Any,
) -> dict[str, Any]:
    """Runner arguments of a small run: ``loop='epoch'`` is 3 epochs over a DefaultSampler
    (round_up), ``'iter'`` 10 iterations over an InfiniteSampler; a checkpoint every
    ``checkpoint_interval`` iterations, Adam with a linear warm-up then a step schedule."""
    if loop == "epoch":
        sampler = dict(type="DefaultSampler", shuffle=True)
        train_cfg = dict(by_epoch=True, max_epochs=3)
        schedule = [
            dict(type="LinearLR", start_factor=0.2, by_epoch=False, begin=0, end=4),
            dict(type="MultiStepLR", milestones=[2], by_epoch=True),
        ]
    else:
        sampler = dict(type="InfiniteSampler", shuffle=True)
        train_cfg = dict(by_epoch=False, max_iters=10)
        schedule = [
            dict(type="LinearLR", start_factor=0.2, by_epoch=False, begin=0, end=4),
            dict(type="MultiStepLR", milestones=[7], by_epoch=False),
        ]
    cfg: dict[str, Any] = dict(
        model=dict(type=model),
        work_dir=str(work_dir),
        train_dataloader=dict(
            dataset=dict(type="ElasticToyDataset", length=length),
            sampler=sampler,
            batch_size=4,
            num_workers=num_workers,
            collate_fn=dict(type="default_collate"),
        ),
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=0.02)),
        param_scheduler=schedule,
        train_cfg=train_cfg,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=checkpoint_interval, by_epoch=False),
        ),
        custom_hooks=[dict(type="ElasticLossRecorder")],
        log_processor=dict(window_size=1, by_epoch=loop == "epoch"),
        randomness=dict(seed=3),
        env_cfg=dict(dist_cfg=dict(backend="gloo")),
        experiment_name=f"elastic_{uuid.uuid4().hex[:8]}",
        elastic=elastic,
    )
    cfg.update(overrides)
    return cfg
