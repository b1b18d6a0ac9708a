"""Cosine annealing: the value follows half a cosine from its base value down to ``eta_min``
over ``T_max`` steps (SGDR without restarts, https://arxiv.org/abs/1608.03983)."""

from __future__ import annotations

import math
from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from ._cosine import check_eta_min, cosine_step, eta_min_of
from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingParamScheduler(_ParamScheduler):
    """Anneal ``param_name`` along a cosine from its base value to ``eta_min`` in ``T_max``
    steps (past ``T_max`` it climbs back, as in PyTorch's CosineAnnealingLR).

    The recursive (chainable) form is used, so other schedulers may change the value too.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        T_max: the number of steps of the half cosine; ``end - begin`` when None.
        eta_min: the lowest value; 0 when neither it nor ``eta_min_ratio`` is given.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.
        eta_min_ratio: the lowest value as a fraction of each group's base value.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CosineAnnealingParamScheduler(sgd, 'lr', T_max=2, eta_min=0.0)
        >>> values = []
        >>> for _ in range(2):
        ...     sgd.step(); scheduler.step(); values.append(round(scheduler.get_last_value()[0], 6))
        >>> values
        [0.5, 0.0]
    """

    _epoch_args = ("T_max",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        T_max: int | None = None,
        eta_min: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
        eta_min_ratio: float | None = None,
    ) -> None:
        if eta_min is None and eta_min_ratio is None:
            eta_min = 0.0
        check_eta_min(eta_min, eta_min_ratio, type(self).__name__)
        if T_max is not None and not T_max > 0:
            raise ValueError(f"{type(self).__name__}: T_max must be > 0, got {T_max!r}")
        self.T_max = T_max or (end - begin)
        self.eta_min = eta_min
        self.eta_min_ratio = eta_min_ratio
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        step, period = self.last_step, self.T_max
        if step == 0:
            return self._current_values()
        values = []
        for base, value in zip(self.base_values, self._current_values(), strict=False):
            floor = eta_min_of(base, self.eta_min, self.eta_min_ratio)
            if (step - 1 - period) % (2 * period) == 0:
                # At the bottom of the cosine cosine_step's ratio is 0/0: climb by one step.
                values.append(value + (base - floor) * (1 - math.cos(math.pi / period)) / 2)
            else:
                values.append(cosine_step(value, floor, step, period))
        return values


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingLR(LRSchedulerMixin, CosineAnnealingParamScheduler):
    """CosineAnnealingParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = CosineAnnealingLR(sgd, T_max=100, eta_min_ratio=0.01)
    """


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingMomentum(MomentumSchedulerMixin, CosineAnnealingParamScheduler):
    """CosineAnnealingParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.95)
        >>> scheduler = CosineAnnealingMomentum(sgd, T_max=100, eta_min=0.85)
    """
