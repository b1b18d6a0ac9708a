"""Exponential moving averages: ``ExponentialMovingAverage`` and ``MomentumAnnealingEMA``."""

from __future__ import annotations

import logging

import torch
from torch import Tensor, nn

from treadle.logging import print_log
from treadle.runner.registry import MODELS

from ..errors import ModelArgumentError
from .base import BaseAveragedModel


@MODELS.register_module()
class ExponentialMovingAverage(BaseAveragedModel):
    """EMA of the weights: ``averaged = averaged * (1 - momentum) + source * momentum``.

    ``momentum`` is the weight of the *new* value, so it is small (the default 0.0002), unlike
    an optimizer's momentum.

    Args:
        model: the model to average.
        momentum: weight of the model's current value in each update, in (0, 1).
        interval: update every ``interval`` calls.
        device: where the averaged copy lives.
        update_buffers: average floating-point buffers too.

    Example:
        >>> model = nn.Linear(4, 2)
        >>> ema = ExponentialMovingAverage(model, momentum=0.01)
        >>> ema.update_parameters(model)  # after each optimizer step
        >>> torch.equal(ema.module.weight, model.weight)
        True
    """

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(model, interval, device, update_buffers)
        if not 0.0 < momentum < 1.0:
            raise ModelArgumentError(
                f"{type(self).__name__}: momentum must be in range (0, 1) (the weight of the "
                f"model's new value in each update), got {momentum}"
            )
        if momentum > 0.5:
            print_log(
                f"{type(self).__name__}: momentum={momentum} is the weight of the new value "
                "and is usually small (e.g. 0.0002), unlike an optimizer's momentum; check it",
                logger="current",
                level=logging.WARNING,
            )
        self.momentum = momentum

    def current_momentum(self, steps: int) -> float:
        """The momentum of the update after ``steps`` updates."""
        return self.momentum

    def avg_func(self, averaged_param: Tensor, source_param: Tensor, steps: int) -> None:
        averaged_param.lerp_(source_param, self.current_momentum(steps))

    def average(self, averaged: list[Tensor], sources: list[Tensor], steps: int) -> None:
        if type(self).avg_func is not ExponentialMovingAverage.avg_func:
            # A subclass with its own formula: one call per tensor, as it expects.
            super().average(averaged, sources, steps)
        elif averaged:
            torch._foreach_lerp_(averaged, sources, self.current_momentum(steps))


@MODELS.register_module()
class MomentumAnnealingEMA(ExponentialMovingAverage):
    """EMA whose momentum starts large and anneals: ``max(momentum, gamma / (gamma + steps))``.

    Args:
        model: the model to average.
        momentum: the smallest momentum, reached after about ``gamma / momentum`` updates.
        gamma: how slowly the momentum anneals; positive.
        interval: update every ``interval`` calls.
        device: where the averaged copy lives.
        update_buffers: average floating-point buffers too.

    Example:
        >>> ema = MomentumAnnealingEMA(nn.Linear(4, 2), momentum=0.001, gamma=100)
        >>> ema.current_momentum(steps=100)
        0.5
    """

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        gamma: int = 100,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(
            model=model,
            momentum=momentum,
            interval=interval,
            device=device,
            update_buffers=update_buffers,
        )
        if not gamma > 0:
            raise ModelArgumentError(
                f"{type(self).__name__}: gamma must be greater than 0, got {gamma}"
            )
        self.gamma = gamma

    def current_momentum(self, steps: int) -> float:
        return max(self.momentum, self.gamma / (self.gamma + steps))
