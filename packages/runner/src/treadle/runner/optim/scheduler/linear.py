"""Linear change: the value goes from ``start_factor`` to ``end_factor`` times its base, in a
straight line over [begin, end) (the usual warm-up)."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class LinearParamScheduler(_ParamScheduler):
    """Scale ``param_name`` linearly from ``start_factor`` to ``end_factor`` between ``begin``
    and the last step before ``end``.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        start_factor: the factor at ``begin``, in [0, 1].
        end_factor: the factor at ``end - 1``, in [0, 1].
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = LinearParamScheduler(sgd, 'lr', start_factor=0.25, end=4)
        >>> values = [scheduler.get_last_value()[0]]
        >>> for _ in range(3):
        ...     sgd.step(); scheduler.step(); values.append(scheduler.get_last_value()[0])
        >>> values
        [0.25, 0.5, 0.75, 1.0]
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if not 0 <= start_factor <= 1:
            raise ValueError(
                f"{name}: start_factor={start_factor!r} is out of range: Starting multiplicative "
                "factor should between 0 and 1"
            )
        if not 0 <= end_factor <= 1:
            raise ValueError(
                f"{name}: end_factor={end_factor!r} is out of range: Ending multiplicative factor "
                "should between 0 and 1"
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        if self.last_step == 0:
            return self._scaled_values(self.start_factor)
        change = self.end_factor - self.start_factor
        previous = self.total_iters * self.start_factor + (self.last_step - 1) * change
        if previous == 0:
            # The value was scaled to 0 (start_factor=0): no ratio can grow it again, so the
            # step after it scales the base values instead (MMEngine divides by zero here).
            factor = self.start_factor + change * self.last_step / self.total_iters
            return [base * factor for base in self.base_values]
        return self._scaled_values(1.0 + change / previous)


@PARAM_SCHEDULERS.register_module()
class LinearLR(LRSchedulerMixin, LinearParamScheduler):
    """LinearParamScheduler of the learning rate: the usual warm-up.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> warmup = LinearLR(sgd, start_factor=1e-3, by_epoch=False, end=500)
    """


@PARAM_SCHEDULERS.register_module()
class LinearMomentum(MomentumSchedulerMixin, LinearParamScheduler):
    """LinearParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = LinearMomentum(sgd, start_factor=0.5, end=10)
    """
