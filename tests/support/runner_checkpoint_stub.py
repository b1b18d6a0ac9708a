"""A stand-in for the Runner with real parts (model, optimizer wrapper, schedulers, message hub,
hooks) for the tests of treadle.runner.runner.checkpointing, which only use the runner's public
surface; and ``LinearToy``, treadle's side of the model of the MMEngine checkpoints under
tests/runner/data/mmengine_0_10_7 (its data and settings are in mmengine_checkpoint_data).

Import them as ``from runner_checkpoint_stub import StubRunner, LinearToy``.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import torch
from mmengine_checkpoint_data import LinearToyParts
from torch import nn

from treadle.logging import MessageHub, MMLogger
from treadle.runner.model import BaseModel
from treadle.runner.optim import MultiStepLR, OptimWrapper

_names = itertools.count()


class LinearToy(LinearToyParts, BaseModel):
    """One Linear(2, 1) and a mean squared error, the model MMEngine trained for the fixtures."""


class CountingHook:
    """A hook with state: how many times it saw a train iteration."""

    priority = 50

    def __init__(self) -> None:
        self.seen = 0

    def state_dict(self) -> dict:
        return {"seen": self.seen}

    def load_state_dict(self, state: dict) -> None:
        self.seen = state["seen"]


class Loop:
    """A train loop with MMEngine's counters and treadle's state_dict."""

    def __init__(self) -> None:
        self._epoch = 0
        self._iter = 0
        self.extra = {"position": 0}
        self.loaded: dict | None = None

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def iter(self) -> int:
        return self._iter

    def state_dict(self) -> dict:
        return {"epoch": self._epoch, "iter": self._iter, **self.extra}

    def load_state_dict(self, state: dict) -> None:
        self.loaded = state
        self._epoch, self._iter = state["epoch"], state["iter"]


class StubRunner:
    """What checkpointing reads of a Runner, built from real treadle parts."""

    def __init__(self, model: nn.Module | None = None, lr: float = 0.1, seed: int = 0) -> None:
        name = f"ckpt_stub_{next(_names)}"
        self.model = model if model is not None else LinearToy()
        self.optim_wrapper = OptimWrapper(
            torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        )
        self.param_schedulers = [MultiStepLR(self.optim_wrapper, milestones=[1], by_epoch=True)]
        self.message_hub = MessageHub.get_instance(name)
        self.logger = MMLogger.get_instance(name, log_level="INFO")
        self.train_loop = Loop()
        self.hooks: list[Any] = [CountingHook()]
        self.calls: list[tuple[str, dict]] = []
        self.seed = seed
        self.experiment_name = name
        self.world_size = 1
        self.cfg = SimpleNamespace(pretty_text="model = dict(type='LinearToy')\n")
        self._randomness_cfg = {"seed": seed}
        self.train_dataloader = SimpleNamespace(
            dataset=SimpleNamespace(metainfo={"classes": ("a", "b")})
        )
        self._has_loaded = False

    @property
    def epoch(self) -> int:
        return self.train_loop.epoch

    @property
    def iter(self) -> int:
        return self.train_loop.iter

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        self.calls.append((fn_name, kwargs))

    def build_optim_wrapper(self, optim_wrapper: Any) -> Any:
        return optim_wrapper

    def build_param_scheduler(self, schedulers: Any) -> Any:
        return schedulers

    def step(self, inputs: torch.Tensor, labels: torch.Tensor) -> None:
        """One training iteration (the loop's work, for tests that need optimizer state)."""
        losses = self.model(inputs, labels, mode="loss")
        self.optim_wrapper.update_params(losses["loss"])
        self.message_hub.update_scalar("train/loss", losses["loss"].detach())
        self.message_hub.update_info("iter", self.train_loop._iter)
        self.hooks[0].seen += 1
        self.train_loop._iter += 1
