"""``ParamSchedulerHook``: steps the parameter schedulers at their pace."""

from __future__ import annotations

from typing import Any

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook


def _scheduler_lists(runner: Any) -> list[list[Any]]:
    """``runner.param_schedulers`` as lists of schedulers (one per optimizer when a dict)."""
    schedulers = runner.param_schedulers
    if schedulers is None:
        return []
    if isinstance(schedulers, list):
        return [schedulers]
    if isinstance(schedulers, dict) and all(isinstance(v, list) for v in schedulers.values()):
        return list(schedulers.values())
    raise TypeError(
        f"ParamSchedulerHook: runner.param_schedulers must be a list of parameter schedulers "
        f"or a dict of such lists (one per optimizer), got {type(schedulers).__name__}: "
        f"{schedulers!r}"
    )


@HOOKS.register_module()
class ParamSchedulerHook(Hook):
    """Steps every scheduler of ``runner.param_schedulers``: those with ``by_epoch=False`` after
    each training iteration, those with ``by_epoch=True`` after each training epoch, and those
    that need validation results (``ReduceOnPlateauLR``...) after each validation, with its
    metrics.

    Example:
        >>> runner_cfg = dict(default_hooks=dict(
        ...     param_scheduler=dict(type='ParamSchedulerHook')))
    """

    priority = "LOW"

    def __init__(self) -> None:
        # The per-iteration schedulers, found once: the step path then only calls step().
        self._iter_schedulers: list[Any] | None = None
        self._source: Any = None

    def _by_iter(self, runner: Any) -> list[Any]:
        schedulers = runner.param_schedulers
        # Rebuilt when the runner's schedulers object is replaced (a resume builds new ones).
        if self._iter_schedulers is None or self._source is not schedulers:
            self._iter_schedulers = [
                s for group in _scheduler_lists(runner) for s in group if not s.by_epoch
            ]
            self._source = schedulers
        return self._iter_schedulers

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """Every iteration when a scheduler steps by iteration, else none."""
        return iteration if self._by_iter(runner) else None

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        for scheduler in self._by_iter(runner):
            scheduler.step()

    def after_train_epoch(self, runner: Any) -> None:
        for group in _scheduler_lists(runner):
            for scheduler in group:
                if scheduler.by_epoch:
                    scheduler.step()

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        if metrics is None:
            return
        for group in _scheduler_lists(runner):
            for scheduler in group:
                if scheduler.by_epoch and getattr(scheduler, "need_val_args", False):
                    scheduler.step(metrics)
