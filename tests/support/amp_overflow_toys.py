"""Toys for the fp16 overflow tests: a model whose gradients overflow at chosen steps, and the
config that trains it with ``AmpOptimWrapper(dtype='float16')`` on the CPU, and the helpers that
train it and read the log lines.

Importing this module registers ``AmpOverflowToyModel`` in MODELS. Its loss stays finite (the
train loop's non-finite loss check never fires); only its gradients are infinite, so the loss
scaler is what notices and skips the step.

Example:
    >>> from treadle.runner.runner import Runner
    >>> runner = Runner(**amp_overflow_cfg(tmp_path, overflow_steps=3))  # doctest: +SKIP
    >>> runner.train()  # doctest: +SKIP
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import torch
from runner_toy_model import ToyModel, toy_iter_cfg
from runner_toys import captured_log

from treadle.runner.registry import MODELS


class _InfiniteGradient(torch.autograd.Function):
    """The identity forward; backward makes the gradient infinite (or NaN where it was 0)."""

    @staticmethod
    def forward(ctx: Any, value: torch.Tensor) -> torch.Tensor:
        return value.view_as(value)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * float("inf")


@MODELS.register_module(name="AmpOverflowToyModel", force=True)
class AmpOverflowToyModel(ToyModel):
    """RunnerToyModel whose gradients overflow in its first ``overflow_steps`` training steps
    (every step when ``overflow_steps`` is None).

    Example:
        >>> model = AmpOverflowToyModel(overflow_steps=1)
        >>> loss = model(torch.ones(3, 2), torch.zeros(3), mode='loss')['loss']
        >>> loss.backward(); bool(torch.isfinite(model.head.linear1.weight.grad).all())
        False
    """

    def __init__(self, overflow_steps: int | None = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.overflow_steps = overflow_steps
        self.training_forwards = 0

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode != "loss":
            return super().forward(inputs, data_samples, mode)
        overflow = self.overflow_steps is None or self.training_forwards < self.overflow_steps
        self.training_forwards += 1
        losses = super().forward(inputs, data_samples, mode)
        if overflow:
            losses = {key: _InfiniteGradient.apply(value) for key, value in losses.items()}
        return losses


def amp_overflow_cfg(
    work_dir: Any,
    overflow_steps: int | None = 0,
    max_iters: int = 10,
    amp: dict | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """An iteration-based toy run of ``max_iters`` iterations in float16 on the CPU, a log line
    every iteration, a LinearLR over 1000 iterations (so every step moves the learning rate) and no
    validation; ``amp`` adds or replaces AmpOptimWrapper arguments.

    Example:
        >>> amp_overflow_cfg('/tmp/w', 3)['optim_wrapper']['dtype']
        'float16'
    """
    base: dict[str, Any] = dict(
        model=dict(type="AmpOverflowToyModel", overflow_steps=overflow_steps),
        optim_wrapper={
            "type": "AmpOptimWrapper",
            "dtype": "float16",
            "optimizer": dict(type="SGD", lr=0.01),
            **(amp or {}),
        },
        # Long enough that every step of the run moves it (last_step counts them).
        param_scheduler=dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=1000),
        train_cfg=dict(by_epoch=False, max_iters=max_iters, val_interval=max_iters + 1),
        val_dataloader=None,
        val_cfg=None,
        val_evaluator=None,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
    )
    base.update(overrides)
    return toy_iter_cfg(work_dir, **base)


def train(runner: Any) -> tuple[list[str], list[warnings.WarningMessage]]:
    """Train ``runner``; its train log lines and every warning raised."""
    with captured_log(runner.logger) as log, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner.train()
    lines = [m for m in log.messages if m.startswith("Iter(train)")]
    return lines, caught


def logged(lines: list[str], name: str) -> list[float]:
    """The values of ``name: value`` in each log line."""
    return [float(re.search(rf"\b{name}: (\S+)", line).group(1)) for line in lines]
