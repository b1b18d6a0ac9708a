"""``StochasticWeightAverage``: the plain mean of the weights seen at each update."""

from __future__ import annotations

import torch
from torch import Tensor

from treadle.runner.registry import MODELS

from .base import BaseAveragedModel


@MODELS.register_module()
class StochasticWeightAverage(BaseAveragedModel):
    """Stochastic Weight Averaging (Izmailov et al., 2018): the running mean of the weights at
    every ``interval``-th update.

    Example:
        >>> model = nn.Linear(4, 2)
        >>> swa = StochasticWeightAverage(model)
        >>> swa.update_parameters(model)
        >>> int(swa.steps)
        1
    """

    def avg_func(self, averaged_param: Tensor, source_param: Tensor, steps: int) -> None:
        averaged_param.add_(source_param - averaged_param, alpha=self._weight(steps))

    def _weight(self, steps: int) -> float:
        return 1 / float(steps // self.interval + 1)

    def average(self, averaged: list[Tensor], sources: list[Tensor], steps: int) -> None:
        if type(self).avg_func is not StochasticWeightAverage.avg_func:
            super().average(averaged, sources, steps)
        elif averaged:
            differences = torch._foreach_sub(sources, averaged)
            torch._foreach_add_(averaged, differences, alpha=self._weight(steps))
