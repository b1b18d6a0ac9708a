"""Polynomial decay: the value falls to ``eta_min`` at ``end`` along ``(1 - t/T) ** power``."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class PolyParamScheduler(_ParamScheduler):
    """Decay ``param_name`` polynomially towards ``eta_min`` over [begin, end).

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        eta_min: the value reached at the end.
        power: the power of the polynomial.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = PolyParamScheduler(sgd, 'lr', power=1.0, end=5)
        >>> values = []
        >>> for _ in range(4):
        ...     sgd.step(); scheduler.step(); values.append(round(scheduler.get_last_value()[0], 6))
        >>> values
        [0.75, 0.5, 0.25, 0.0]
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        eta_min: float = 0,
        power: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.eta_min = eta_min
        self.power = power
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        if self.last_step == 0:
            return self._current_values()
        decay = (1 - 1 / (self.total_iters - self.last_step + 1)) ** self.power
        return [(value - self.eta_min) * decay + self.eta_min for value in self._current_values()]


@PARAM_SCHEDULERS.register_module()
class PolyLR(LRSchedulerMixin, PolyParamScheduler):
    """PolyParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.01)
        >>> scheduler = PolyLR(sgd, eta_min=1e-4, power=0.9, by_epoch=False, end=80000)
    """


@PARAM_SCHEDULERS.register_module()
class PolyMomentum(MomentumSchedulerMixin, PolyParamScheduler):
    """PolyParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = PolyMomentum(sgd, eta_min=0.5, end=10)
    """
