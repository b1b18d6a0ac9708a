"""Reduce on plateau: multiply the value by ``factor`` when a validation metric has stopped
improving for ``patience`` validations (PyTorch's ReduceLROnPlateau, with MMEngine's names:
``rule`` is PyTorch's ``mode``, ``threshold_rule`` its ``threshold_mode``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from treadle.runner.registry import PARAM_SCHEDULERS

from ._choices import check_choice, did_you_mean
from ._errors import SchedulerArgumentError
from ._groups import one_per_group
from .base import INF, _ParamScheduler
from .mixins import LRSchedulerMixin, MomentumSchedulerMixin

_RULES = ("less", "greater")
_THRESHOLD_RULES = ("rel", "abs")


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauParamScheduler(_ParamScheduler):
    """Multiply ``param_name`` by ``factor`` when the metric ``monitor`` has not improved for
    more than ``patience`` validations.

    ``step()`` without arguments (after each training epoch) only counts epochs, which
    ``begin``/``end`` refer to; ``step(metrics)`` (after each validation, with the dict the
    evaluator returns) updates the values.

    Args:
        optimizer: an optimizer or an optimizer wrapper.
        param_name: the param group key to schedule.
        monitor: the key of the metric in the metrics dict.
        rule: ``'less'`` (lower is better, e.g. a loss) or ``'greater'`` (e.g. an accuracy).
        factor: the factor applied on a plateau, below 1 (a negative one warns).
        patience: how many validations without improvement are tolerated.
        threshold: how much better a metric must be to count as an improvement.
        threshold_rule: ``'rel'`` (relative to the best) or ``'abs'``.
        cooldown: validations to wait after a reduction before counting bad ones again.
        min_value: the lowest value, one for all groups or one per group.
        eps: a reduction smaller than this is skipped.
        begin, end, last_step, by_epoch, verbose: as in ``_ParamScheduler``; ``by_epoch``
            must be True (AssertionError and ValueError otherwise, as MMEngine).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = ReduceOnPlateauParamScheduler(sgd, 'lr', monitor='loss', patience=1)
        >>> for loss in [1.0, 1.0, 1.0]:
        ...     scheduler.step(dict(loss=loss))
        >>> scheduler.get_last_value()
        [0.1]
    """

    need_val_args = True

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        monitor: str = "loss",
        rule: str = "less",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_rule: str = "rel",
        cooldown: int = 0,
        min_value: float | Sequence[float] = 0.0,
        eps: float = 1e-8,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if not by_epoch:
            # MMEngine asserts this too: its users' tests expect an AssertionError.
            raise SchedulerArgumentError(
                f"Now {name} only support by_epoch=True: it is stepped with the metrics of each "
                "validation, so by_epoch must be True"
            )
        if factor >= 1:
            raise ValueError(f"{name}: Factor should be < 1.0, got {factor!r}")
        if factor < 0:
            # MMEngine takes it; a negative value would flip the sign of the parameter.
            warnings.warn(
                f"{name}: factor={factor!r} is negative: each reduction flips the sign of "
                f"{param_name}",
                UserWarning,
                stacklevel=2,
            )
        if threshold < 0:
            raise ValueError(f"{name}: threshold {threshold!r} should be >= 0.")
        check_choice(name, "rule", rule, _RULES, f"mode {rule} is unknown!")
        check_choice(
            name,
            "threshold_rule",
            threshold_rule,
            _THRESHOLD_RULES,
            f"threshold mode {threshold_rule} is unknown!",
        )
        self._attach(optimizer, param_name, begin, end, last_step, by_epoch, verbose)
        self.min_values = one_per_group(min_value, optimizer, "min_value", name)
        self.factor = factor
        self.patience = patience
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self.eps = eps
        self.monitor = monitor
        self.rule = rule
        self.threshold = threshold
        self.threshold_rule = threshold_rule
        self.rule_worse = math.inf if rule == "less" else -math.inf
        self.best = self.rule_worse
        # Counts training epochs; begin/end refer to it. No step is taken at construction.
        self._global_step = 0
        self._last_value = self._current_values()

    @classmethod
    def build_iter_from_epoch(cls, *args: Any, **kwargs: Any) -> _ParamScheduler:
        """Refused: this scheduler steps once per validation, never per iteration."""
        raise ValueError(
            f"{cls.__name__} is stepped with the metrics of each validation and cannot be "
            "converted to iteration-based: drop convert_to_iter_based"
        )

    def step(self, metrics: Mapping[str, Any] | None = None) -> None:  # type: ignore[override]
        """Count a training epoch (no ``metrics``), or judge the validation ``metrics``."""
        if metrics is None:
            self._global_step += 1
            return
        name = type(self).__name__
        if not isinstance(metrics, Mapping):
            raise TypeError(
                f"{name}.step expects the dict of validation metrics: metrics type should be "
                f"dict, but got type {type(metrics)}"
            )
        if self.begin <= self._global_step < self.end:
            self.last_step += 1
            if self.monitor not in metrics:
                raise KeyError(
                    f"{name}: monitor={self.monitor!r} is not among the validation metrics: "
                    f"Excepted key in {list(metrics)}, but got key {self.monitor} is not in dict"
                    f"{did_you_mean(self.monitor, [str(key) for key in metrics])}"
                )
            # A 0-d tensor becomes a number: the state stays plain data (validation time, so
            # the device sync costs nothing on the training path).
            metric = float(metrics[self.monitor])
            if self._is_better(metric):
                self.best = metric
                self.num_bad_epochs = 0
            else:
                self.num_bad_epochs += 1
            if self.cooldown_counter > 0:
                self.cooldown_counter -= 1
                self.num_bad_epochs = 0
            if self.num_bad_epochs > self.patience:
                self._reduce()
                self.cooldown_counter = self.cooldown
                self.num_bad_epochs = 0
        self._last_value = self._current_values()

    def _reduce(self) -> None:
        for index, (group, value) in enumerate(
            zip(self.optimizer.param_groups, self._get_value(), strict=False)
        ):
            if group[self.param_name] - value > self.eps:
                group[self.param_name] = value
                self.print_value(self.verbose, index, value)

    def _get_value(self) -> list[Any]:
        return [
            max(float(group[self.param_name]) * self.factor, floor)
            for group, floor in zip(self.optimizer.param_groups, self.min_values, strict=False)
        ]

    def _is_better(self, value: float) -> bool:
        best = self.best
        if self.rule == "less":
            if self.threshold_rule == "rel":
                return value < best * (1.0 - self.threshold)
            return value < best - self.threshold
        if self.threshold_rule == "rel":
            return value > best * (self.threshold + 1.0)
        return value > best + self.threshold


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauLR(LRSchedulerMixin, ReduceOnPlateauParamScheduler):
    """ReduceOnPlateauParamScheduler of the learning rate.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> scheduler = ReduceOnPlateauLR(sgd, monitor='accuracy/top1', rule='greater',
        ...                               patience=3, factor=0.5)
    """


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauMomentum(MomentumSchedulerMixin, ReduceOnPlateauParamScheduler):
    """ReduceOnPlateauParamScheduler of the momentum (``betas[0]`` for Adam-like optimizers).

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> scheduler = ReduceOnPlateauMomentum(sgd, monitor='loss', patience=3, factor=0.5)
    """
