"""Cosine annealing with restarts: consecutive cosine cycles of the given periods, each one
starting again from the base value times its restart weight."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from ._cosine import check_eta_min, cosine_step, eta_min_of
from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin


@PARAM_SCHEDULERS.register_module()
class CosineRestartParamScheduler(_ParamScheduler):
    """Anneal ``param_name`` along a cosine in cycles of ``periods`` steps; cycle ``i`` starts
    at ``base_value * restart_weights[i]``. After the last cycle the value stays as it is.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        periods: the length of each cycle, in steps.
        restart_weights: the weight of each cycle's starting value (one per period).
        eta_min: the lowest value.
        eta_min_ratio: the lowest value as a fraction of each group's base value (give exactly
            one of the two).
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CosineRestartParamScheduler(
        ...     sgd, 'lr', periods=[2, 2], restart_weights=[1, 0.5], eta_min=0.0)
        >>> values = [scheduler.get_last_value()[0]]
        >>> for _ in range(3):
        ...     sgd.step(); scheduler.step(); values.append(round(scheduler.get_last_value()[0], 6))
        >>> values
        [1.0, 0.5, 0.5, 0.25]
    """

    _epoch_args = ("periods",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        periods: Sequence[int],
        restart_weights: Sequence[float] = (1,),
        eta_min: float | None = None,
        eta_min_ratio: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        check_eta_min(eta_min, eta_min_ratio, name)
        if len(periods) != len(restart_weights):
            from ._errors import SchedulerArgumentError

            raise SchedulerArgumentError(
                f"{name}: periods and restart_weights need one entry per cycle, got "
                f"{len(periods)} periods {list(periods)} and {len(restart_weights)} "
                f"restart_weights {list(restart_weights)}"
            )
        if not all(period > 0 for period in periods):
            raise ValueError(f"{name}: every period must be > 0, got {list(periods)}")
        self.periods = periods
        self.restart_weights = restart_weights
        self.eta_min = eta_min
        self.eta_min_ratio = eta_min_ratio
        self.cumulative_periods = list(accumulate(periods))
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    @staticmethod
    def get_position_from_periods(iteration: int, cumulative_periods: list[int]) -> int | None:
        """The index of the cycle ``iteration`` falls in, None past the last one.

        Example:
            >>> CosineRestartParamScheduler.get_position_from_periods(210, [100, 200, 300])
            2
        """
        for index, period_end in enumerate(cumulative_periods):
            if iteration < period_end:
                return index
        return None

    def _get_value(self) -> list[Any]:
        cycle = self.get_position_from_periods(self.last_step, self.cumulative_periods)
        if cycle is None:
            return self._current_values()
        period = self.periods[cycle]
        step = self.last_step - (self.cumulative_periods[cycle - 1] if cycle else 0)
        weight = self.restart_weights[cycle]
        values = []
        for base, value in zip(self.base_values, self._current_values(), strict=False):
            if step == 0:
                values.append(base * weight)
                continue
            floor = eta_min_of(base, self.eta_min, self.eta_min_ratio)
            values.append(cosine_step(value, floor, step, period))
        return values


@PARAM_SCHEDULERS.register_module()
class CosineRestartLR(LRSchedulerMixin, CosineRestartParamScheduler):
    """CosineRestartParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = CosineRestartLR(
        ...     sgd, periods=[100, 100], restart_weights=[1, 0.5], eta_min_ratio=0.01)
    """


@PARAM_SCHEDULERS.register_module()
class CosineRestartMomentum(MomentumSchedulerMixin, CosineRestartParamScheduler):
    """CosineRestartParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = CosineRestartMomentum(sgd, periods=[10, 10], restart_weights=[1, 1],
        ...                                   eta_min=0.5)
    """
