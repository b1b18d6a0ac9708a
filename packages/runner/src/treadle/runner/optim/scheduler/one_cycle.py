"""One cycle: the learning rate rises from ``eta_max / div_factor`` to ``eta_max``, then falls to
far below where it started (https://arxiv.org/abs/1708.07120). Not chainable."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from ._choices import check_choice
from ._groups import checked_param_groups, one_per_group
from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin

_STRATEGIES = ("cos", "linear")


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


@PARAM_SCHEDULERS.register_module()
class OneCycleParamScheduler(_ParamScheduler):
    """The 1cycle policy over ``total_steps`` steps (``end - begin`` when not given): two
    phases (up, then down to ``initial / final_div_factor``), or three with ``three_phase``
    (up, back down to the start, then down to the minimum). Only ``'lr'`` can be scheduled.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: must be ``'lr'``.
        eta_max: the highest value, one for all groups or a list with one per group.
        total_steps: the length of the cycle in steps; ``end - begin`` when None.
        pct_start: the fraction of the cycle spent rising, in [0, 1].
        anneal_strategy: ``'cos'`` or ``'linear'``.
        div_factor: the starting value is ``eta_max / div_factor``.
        final_div_factor: the last value is ``eta_max / div_factor / final_div_factor``.
        three_phase: use the three-phase schedule of the paper.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = OneCycleParamScheduler(
        ...     sgd, 'lr', eta_max=1.0, total_steps=4, pct_start=0.5, anneal_strategy='linear',
        ...     div_factor=4, final_div_factor=1)
        >>> values = [scheduler.get_last_value()[0]]
        >>> for _ in range(3):
        ...     sgd.step(); scheduler.step(); values.append(scheduler.get_last_value()[0])
        >>> values
        [0.25, 1.0, 0.625, 0.25]
    """

    _epoch_args = ("total_steps",)
    _derived_attrs = frozenset({"anneal_func", "_schedule_phases"})

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        eta_max: float | Sequence[float] = 0,
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if param_name != "lr":
            from ._errors import SchedulerArgumentError

            raise SchedulerArgumentError(
                f"{name}: OneCycle only works for learning rate: param_name must be 'lr', got "
                f"{param_name!r}"
            )
        if total_steps is None:
            if end == INF:
                raise ValueError(
                    f"{name}: the length of the cycle is unknown: give total_steps, or end "
                    f"(total_steps = end - begin)"
                )
            total_steps = end - begin
        elif isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(
                f"{name}: Expected positive integer total_steps, but got {total_steps!r}"
            )
        if isinstance(pct_start, bool) or not isinstance(pct_start, (int, float)):
            raise ValueError(
                f"{name}: Expected float between 0 and 1 pct_start, but got {pct_start!r}"
            )
        if not 0 <= pct_start <= 1:
            raise ValueError(
                f"{name}: Expected float between 0 and 1 pct_start, but got {pct_start!r}"
            )
        check_choice(
            name,
            "anneal_strategy",
            anneal_strategy,
            _STRATEGIES,
            f'anneal_strategy must by one of "cos" or "linear", instead got {anneal_strategy}',
        )
        self.eta_max = eta_max
        self.total_steps = total_steps
        self.pct_start = float(pct_start)
        self.anneal_strategy = anneal_strategy
        self.div_factor = div_factor
        self.final_div_factor = final_div_factor
        self.three_phase = three_phase
        self._rebuild_derived()

        if last_step == -1:
            groups = checked_param_groups(optimizer, name)
            for group, peak in zip(
                groups, one_per_group(eta_max, optimizer, "eta_max", name), strict=True
            ):
                group[f"initial_{param_name}"] = peak / div_factor
                group[f"max_{param_name}"] = peak
                group[f"min_{param_name}"] = peak / div_factor / final_div_factor
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _rebuild_derived(self) -> None:
        self.anneal_func: Callable[[float, float, float], float] = (
            _anneal_cos if self.anneal_strategy == "cos" else _anneal_linear
        )
        # (last step of the phase, key of its start value, key of its end value)
        rise_end = float(self.pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if self.three_phase:
            phases = [
                (rise_end, "initial", "max"),
                (float(2 * self.pct_start * self.total_steps) - 2, "max", "initial"),
                (last, "initial", "min"),
            ]
        else:
            phases = [(rise_end, "initial", "max"), (last, "max", "min")]
        self._schedule_phases = [
            (end_step, f"{start}_lr", f"{stop}_lr") for end_step, start, stop in phases
        ]

    def _get_value(self) -> list[Any]:
        step = self.last_step
        if step > self.total_steps:
            raise ValueError(
                f"{type(self).__name__}: Tried to step {step + 1} times. The specified number of "
                f"total steps is {self.total_steps}"
            )
        phases = self._schedule_phases
        values = []
        for group in self.optimizer.param_groups:
            phase_start = 0.0
            for index, (phase_end, start_key, end_key) in enumerate(phases):
                if step <= phase_end or index == len(phases) - 1:
                    span = phase_end - phase_start
                    # A phase of no length (pct_start * total_steps <= 1) is already over.
                    pct = (step - phase_start) / span if span else 1.0
                    values.append(self.anneal_func(group[start_key], group[end_key], pct))
                    break
                phase_start = phase_end
        return values


@PARAM_SCHEDULERS.register_module()
class OneCycleLR(LRSchedulerMixin, OneCycleParamScheduler):
    """OneCycleParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = OneCycleLR(sgd, eta_max=0.1, total_steps=1000, by_epoch=False)
    """
