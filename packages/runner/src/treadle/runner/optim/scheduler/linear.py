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
        start_factor: the factor at ``begin``, in (0, 1].
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
        # Each step multiplies by a ratio of factors: from 0 nothing could grow again.
        if not 0 < start_factor <= 1:
            raise ValueError(
                f"{name}: start_factor must be in (0, 1], got {start_factor!r} (for a warm-up "
                "from almost nothing use a small value such as 1e-3)"
            )
        if not 0 <= end_factor <= 1:
            raise ValueError(f"{name}: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        if self.last_step == 0:
            return self._scaled_values(self.start_factor)
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (
            self.total_iters * self.start_factor + (self.last_step - 1) * change
        )
        return self._scaled_values(ratio)


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
