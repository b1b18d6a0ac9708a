"""_ParamScheduler: the base of every parameter scheduler.

A scheduler changes one hyper-parameter (``param_name``: ``'lr'``, ``'momentum'``,
``'weight_decay'``...) in every param group of an optimizer, one ``step()`` at a time, between
step ``begin`` (included) and ``end`` (excluded). Values are chainable: each step starts from the
value currently in the group, so several schedulers can share one optimizer (a warm-up, then a
decay). ``initial_<param_name>`` is stored in each group by the first scheduler, and is what
every later one takes as the base value.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

from treadle.logging import print_log

from ._epoch_args import INF, check_epoch_length, scale_range, scale_steps
from ._errors import SchedulerArgumentError
from ._groups import checked_param_groups, record_initial_values
from ._step_watch import OptimizerStepWatch

__all__ = ["INF", "_ParamScheduler"]


class _ParamScheduler:
    """Base class of parameter schedulers: subclasses compute the new values in ``_get_value``.

    Args:
        optimizer: a ``torch.optim.Optimizer`` or an ``OptimWrapper`` (anything with a list of
            ``param_groups``).
        param_name: the key of the param groups to schedule, such as ``'lr'``.
        begin: the first step at which the value changes.
        end: the step at which it stops changing (excluded).
        last_step: the index of the last step, to resume without a state dict; -1 starts anew.
        by_epoch: whether ``step()`` is called once per epoch (True) or per iteration.
        verbose: log every new value.

    Example:
        >>> import torch
        >>> class Halve(_ParamScheduler):
        ...     def _get_value(self):
        ...         if self.last_step == 0:
        ...             return [g[self.param_name] for g in self.optimizer.param_groups]
        ...         return [g[self.param_name] / 2 for g in self.optimizer.param_groups]
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = Halve(sgd, 'lr', end=3)
        >>> for _ in range(4):
        ...     sgd.step(); scheduler.step()
        >>> scheduler.get_last_value()
        [0.25]
    """

    # Schedulers stepped with validation metrics (ReduceOnPlateau) set this.
    need_val_args: ClassVar[bool] = False
    # Arguments counted in steps, multiplied by the epoch length in build_iter_from_epoch.
    _epoch_args: ClassVar[tuple[str, ...]] = ()
    # Attributes rebuilt from the others: not in state_dict, ignored by load_state_dict.
    _derived_attrs: ClassVar[frozenset[str]] = frozenset()
    _never_state: ClassVar[frozenset[str]] = frozenset({"optimizer", "_step_watch"})

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self._attach(optimizer, param_name, begin, end, last_step, by_epoch, verbose)
        self._global_step = -1
        self._step_watch: OptimizerStepWatch | None = OptimizerStepWatch(optimizer)
        self.step()

    def _attach(
        self,
        optimizer: Any,
        param_name: str,
        begin: int,
        end: int,
        last_step: int,
        by_epoch: bool,
        verbose: bool,
    ) -> None:
        """Check the arguments every scheduler shares and set them (no step is taken)."""
        name = type(self).__name__
        checked_param_groups(optimizer, name)
        if end <= begin:
            raise ValueError(
                f"{name}: end should be larger than begin, but got begin={begin}, end={end}"
            )
        if isinstance(last_step, bool) or not isinstance(last_step, int) or last_step < -1:
            raise SchedulerArgumentError(
                f"{name}: last_step must be an int >= -1 (-1: not started), got {last_step!r}"
            )
        self.optimizer = optimizer
        self.param_name = param_name
        self.begin = begin
        self.end = end
        self.by_epoch = by_epoch
        self.verbose = verbose
        self.base_values = record_initial_values(optimizer, param_name, last_step, name)
        self.last_step = last_step

    @classmethod
    def build_iter_from_epoch(
        cls,
        *args: Any,
        begin: int = 0,
        end: int = INF,
        by_epoch: bool = True,
        epoch_length: int | None = None,
        **kwargs: Any,
    ) -> _ParamScheduler:
        """Build a per-iteration scheduler from epoch-based arguments (``convert_to_iter_based``).

        ``begin``, ``end`` and the arguments the scheduler counts in steps are multiplied by
        ``epoch_length``; the scheduler is built with ``by_epoch=False``.
        """
        owner = f"{cls.__name__}.build_iter_from_epoch"
        if not by_epoch:
            raise SchedulerArgumentError(
                f"{owner}: only epoch-based kwargs whose `by_epoch=True` can be converted to "
                "iter-based: convert_to_iter_based=True converts epoch-based arguments, but "
                "by_epoch=False was given; drop one of the two"
            )
        epoch_length = check_epoch_length(epoch_length, owner)
        begin, end = scale_range(begin, end, epoch_length)
        for key in cls._epoch_args:
            if key in kwargs:
                kwargs[key] = scale_steps(kwargs[key], epoch_length)
        return cls(*args, begin=begin, end=end, by_epoch=False, **kwargs)

    def _get_value(self) -> list[Any]:
        """The new value of every param group at ``self.last_step`` (chainable form)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _get_value()")

    def _current_values(self) -> list[Any]:
        """The value each param group holds now: what a step that changes nothing returns."""
        return [group[self.param_name] for group in self.optimizer.param_groups]

    def _scaled_values(self, factor: float) -> list[Any]:
        """The value of each param group times ``factor``: a chainable multiplicative step."""
        return [group[self.param_name] * factor for group in self.optimizer.param_groups]

    def get_last_value(self) -> list[Any]:
        """The values this scheduler's last step left in the param groups."""
        return self._last_value

    def print_value(self, is_verbose: bool, group: int, value: float) -> None:
        """Log the new value of param group ``group`` when ``is_verbose``."""
        if is_verbose:
            print_log(
                f"{type(self).__name__}: {self.param_name} of param group {group} set to "
                f"{value:.4e}",
                logger="current",
            )

    def step(self) -> None:
        """Advance one step; inside [begin, end), write the new values into the param groups."""
        if self._global_step == 0:
            self._check_call_order()
        self._global_step += 1
        groups = self.optimizer.param_groups
        if self.begin <= self._global_step < self.end:
            self.last_step += 1
            for index, (group, value) in enumerate(zip(groups, self._get_value(), strict=False)):
                group[self.param_name] = value
                if self.verbose:
                    self.print_value(True, index, value)
        self._last_value = self._current_values()

    def _check_call_order(self) -> None:
        watch = self._step_watch
        if watch is None:
            return
        self._step_watch = None
        if not watch.stepped:
            warnings.warn(
                f"{type(self).__name__}.step() was called before optimizer.step(): call "
                "optimizer.step() first, or the first value of the schedule is skipped (see "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate)",
                UserWarning,
                stacklevel=3,
            )
        watch.close()

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer, as plain Python data (a checkpoint loads it with
        ``weights_only=True``)."""
        skipped = self._never_state | self._derived_attrs
        return {
            key: dict(value) if isinstance(value, Counter) else value
            for key, value in self.__dict__.items()
            if key not in skipped
        }

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a state from ``state_dict()`` (also MMEngine's, whose extra keys are ignored)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"{type(self).__name__}.load_state_dict expects the dict state_dict() returns, "
                f"got {type(state_dict).__name__}"
            )
        skipped = self._never_state | self._derived_attrs
        for key, value in state_dict.items():
            if key in skipped:
                continue
            current = self.__dict__.get(key)
            if isinstance(current, Counter) and isinstance(value, Mapping):
                value = Counter(value)
            self.__dict__[key] = value
        # A resumed schedule is past its first step: the call-order check has nothing to do.
        watch = self.__dict__.get("_step_watch")
        if watch is not None:
            watch.close()
            self._step_watch = None
        self._rebuild_derived()

    def _rebuild_derived(self) -> None:
        """Recompute the attributes in ``_derived_attrs`` after a state was loaded."""
