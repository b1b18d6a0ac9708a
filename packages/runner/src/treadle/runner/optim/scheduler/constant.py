"""Constant factor: multiply the value by ``factor`` from ``begin`` until ``end``."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class ConstantParamScheduler(_ParamScheduler):
    """Multiply ``param_name`` by ``factor`` at ``begin``, and undo it at the last step before
    ``end``.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        factor: the factor, in [0, 1]. With 0 the value is set back to ``initial_<param_name>``
            at the end (it cannot be divided back).
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = ConstantParamScheduler(sgd, 'lr', factor=0.5, end=3)
        >>> values = []
        >>> for _ in range(3):
        ...     sgd.step(); scheduler.step(); values.append(scheduler.get_last_value()[0])
        >>> values
        [0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        factor: float = 1.0 / 3,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(
                f"{type(self).__name__}: Constant multiplicative factor should between 0 and 1, "
                f"got {factor!r}"
            )
        self.factor = factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        if self.last_step == 0:
            return self._scaled_values(self.factor)
        if self.last_step != self.total_iters:
            return self._current_values()
        if self.factor == 0:
            return list(self.base_values)
        return self._scaled_values(1.0 / self.factor)


@PARAM_SCHEDULERS.register_module()
class ConstantLR(LRSchedulerMixin, ConstantParamScheduler):
    """ConstantParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = ConstantLR(sgd, factor=0.1, end=5)  # lr 0.01 for 4 steps, then 0.1
    """


@PARAM_SCHEDULERS.register_module()
class ConstantMomentum(MomentumSchedulerMixin, ConstantParamScheduler):
    """ConstantParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = ConstantMomentum(sgd, factor=0.5, end=5)
    """
