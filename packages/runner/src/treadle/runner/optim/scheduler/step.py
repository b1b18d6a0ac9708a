"""Step decay: multiply the value by ``gamma`` every ``step_size`` steps."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class StepParamScheduler(_ParamScheduler):
    """Multiply ``param_name`` by ``gamma`` every ``step_size`` steps.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        step_size: the period of the decay, in steps.
        gamma: the factor applied at each period.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = StepParamScheduler(sgd, 'lr', step_size=2, gamma=0.5)
        >>> values = []
        >>> for _ in range(4):
        ...     sgd.step(); scheduler.step(); values.append(scheduler.get_last_value()[0])
        >>> values
        [1.0, 0.5, 0.5, 0.25]
    """

    _epoch_args = ("step_size",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        step_size: int,
        gamma: float = 0.1,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not step_size > 0:
            raise ValueError(f"{type(self).__name__}: step_size must be > 0, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        if self.last_step == 0 or self.last_step % self.step_size != 0:
            return self._current_values()
        return self._scaled_values(self.gamma)


@PARAM_SCHEDULERS.register_module()
class StepLR(LRSchedulerMixin, StepParamScheduler):
    """StepParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = StepLR(sgd, step_size=30, gamma=0.1)  # x0.1 every 30 epochs
    """


@PARAM_SCHEDULERS.register_module()
class StepMomentum(MomentumSchedulerMixin, StepParamScheduler):
    """StepParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = StepMomentum(sgd, step_size=30, gamma=0.5)
    """
