"""Multi-step decay: multiply the value by ``gamma`` at each milestone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class MultiStepParamScheduler(_ParamScheduler):
    """Multiply ``param_name`` by ``gamma`` at each step in ``milestones`` (a milestone listed
    twice multiplies by ``gamma ** 2``).

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        milestones: the steps (counted from ``begin``) at which the value decays.
        gamma: the factor applied at each milestone.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = MultiStepParamScheduler(sgd, 'lr', milestones=[1, 3], gamma=0.5)
        >>> values = []
        >>> for _ in range(4):
        ...     sgd.step(); scheduler.step(); values.append(scheduler.get_last_value()[0])
        >>> values
        [0.5, 0.5, 0.25, 0.25]
    """

    _epoch_args = ("milestones",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_step: int = -1,
        begin: int = 0,
        end: int = INF,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if isinstance(milestones, (str, bytes)) or not isinstance(milestones, Iterable):
            raise TypeError(
                f"{type(self).__name__}: milestones must be a list of steps, got "
                f"{type(milestones).__name__}: {milestones!r}"
            )
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        hits = self.milestones.get(self.last_step, 0)
        if not hits:
            return self._current_values()
        return self._scaled_values(self.gamma**hits)


@PARAM_SCHEDULERS.register_module()
class MultiStepLR(LRSchedulerMixin, MultiStepParamScheduler):
    """MultiStepParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = MultiStepLR(sgd, milestones=[8, 11], gamma=0.1)
    """


@PARAM_SCHEDULERS.register_module()
class MultiStepMomentum(MomentumSchedulerMixin, MultiStepParamScheduler):
    """MultiStepParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = MultiStepMomentum(sgd, milestones=[8, 11], gamma=0.5)
    """
